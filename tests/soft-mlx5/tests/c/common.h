/* Helpers shared by the C programs tests/verbs.rs runs under soft-mlx5: the first device, its
 * port 1, and an RC QP taken to RTS toward a given path. Plain libibverbs, as an application. */
#include <infiniband/verbs.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                   \
    do {                                                                           \
        if (!(c)) {                                                                \
            printf("FAIL %s:%d: %s (errno %d %s)\n", __FILE__, __LINE__, #c, errno, \
                   strerror(errno));                                               \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static inline struct ibv_context *open_first(void)
{
    int n = 0;
    struct ibv_device **l = ibv_get_device_list(&n);
    CHECK(l && n > 0);
    struct ibv_context *ctx = ibv_open_device(l[0]);
    CHECK(ctx);
    ibv_free_device_list(l);
    return ctx;
}

/* The GID index a test uses: MLX5DV_TEST_GID_INDEX (set by soft-mlx5 on RoCE), else 0. */
static inline int gid_index(void)
{
    const char *s = getenv("MLX5DV_TEST_GID_INDEX");
    return s ? atoi(s) : 0;
}

static inline int is_roce(struct ibv_context *ctx)
{
    struct ibv_port_attr pa;
    CHECK(ibv_query_port(ctx, 1, &pa) == 0);
    return pa.link_layer == IBV_LINK_LAYER_ETHERNET;
}

/* The path to this port itself: its LID, or its GID (with a GRH, as RoCE requires). */
static inline struct ibv_ah_attr self_path(struct ibv_context *ctx)
{
    struct ibv_port_attr pa;
    CHECK(ibv_query_port(ctx, 1, &pa) == 0);
    struct ibv_ah_attr ah = {.dlid = pa.lid, .port_num = 1};
    if (pa.link_layer == IBV_LINK_LAYER_ETHERNET) {
        ah.is_global = 1;
        ah.grh.sgid_index = gid_index();
        ah.grh.hop_limit = 64;
        CHECK(ibv_query_gid(ctx, 1, gid_index(), &ah.grh.dgid) == 0);
    }
    return ah;
}

static inline struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq)
{
    struct ibv_qp_init_attr ia = {
        .send_cq = scq,
        .recv_cq = rcq,
        .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1},
        .qp_type = IBV_QPT_RC,
    };
    struct ibv_qp *qp = ibv_create_qp(pd, &ia);
    CHECK(qp);
    return qp;
}

static inline void to_init(struct ibv_qp *qp)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
                            .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
}

/* INIT -> RTR toward (path, dest_qpn); returns ibv_modify_qp's answer (an errno). */
static inline int to_rtr(struct ibv_qp *qp, struct ibv_ah_attr path, uint32_t dest_qpn)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dest_qpn,
                            .rq_psn = 0, .max_dest_rd_atomic = 1, .min_rnr_timer = 1, .ah_attr = path};
    return ibv_modify_qp(qp, &a,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

/* A new RC QP taken to INIT, then RTR toward (path, dest_qpn), then destroyed: what RTR
 * answered (an errno). */
static inline int rtr_once(struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_ah_attr path, uint32_t dest_qpn)
{
    struct ibv_qp *qp = rc_qp(pd, cq, cq);
    to_init(qp);
    int r = to_rtr(qp, path, dest_qpn);
    CHECK(ibv_destroy_qp(qp) == 0);
    return r;
}

/* A PD and a 16-entry CQ of ctx. */
static inline void pd_and_cq(struct ibv_context *ctx, struct ibv_pd **pd, struct ibv_cq **cq)
{
    *pd = ibv_alloc_pd(ctx);
    CHECK(*pd);
    *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    CHECK(*cq);
}

static inline void to_rts(struct ibv_qp *qp, int retry_cnt)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS, .timeout = 8, .retry_cnt = retry_cnt, .rnr_retry = 7,
                            .sq_psn = 0, .max_rd_atomic = 1};
    CHECK(ibv_modify_qp(qp, &a,
                        IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                            IBV_QP_MAX_QP_RD_ATOMIC) == 0);
}

/* Polls one completion from cq, for at most `ms` milliseconds. */
#include <time.h>
static inline int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
    for (int i = 0; i < ms * 10; i++) {
        int n = ibv_poll_cq(cq, 1, wc);
        CHECK(n >= 0);
        if (n == 1)
            return 1;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return 0;
}
