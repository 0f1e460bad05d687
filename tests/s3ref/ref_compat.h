/*
 * Forced-included (gcc -include) before NVIDIA's gpu_direct_rdma_access.c when
 * scripts/s3-reference compiles it; the reference's files are used as fetched, unmodified.
 *
 * Why: the sample predates rdma-core's own `enum ibv_gid_type` (verbs.h, rdma-core 28+), and
 * its private ibv_helper.h declares an enum of the same name with an enumerator
 * IBV_GID_TYPE_ROCE_V2, which no longer compiles. verbs.h is included here first (its include
 * guard keeps it from being read again), then the sample's two clashing names are renamed for
 * the rest of the translation unit, so its helper keeps its own enum under another name.
 * _GNU_SOURCE is defined here exactly as the sample defines it (empty), because the system
 * headers are now read before the sample's own #define.
 */
#ifndef S3REF_REF_COMPAT_H
#define S3REF_REF_COMPAT_H
#define _GNU_SOURCE
#include <infiniband/verbs.h>
#define ibv_gid_type s3ref_sample_gid_type
#define IBV_GID_TYPE_ROCE_V2 S3REF_SAMPLE_GID_TYPE_ROCE_V2
#endif
