/* Whether idle objects slow the device down: round trips per second of two RC QPs of this
 * process writing to each other (an 8-byte RDMA WRITE, signaled, polled to its completion),
 * measured before and after argv[2] idle objects of kind argv[1] are made:
 *   qp   RC QPs left in RESET (as created);
 *   dct  DC targets in RTR on one SRQ (responder-only: only a request that names one wakes it);
 *   cq   CQs without a completion channel.
 * A ConnectX does no work for an object nothing rang: the rate with them should be the rate
 * without. Prints "before R after R ratio X created N in T s". */
#include <infiniband/mlx5dv.h>
#include <sys/time.h>
#include "common.h"

static double now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + tv.tv_usec / 1e6;
}

static struct ibv_qp *a, *b;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static char *buf;

/* One write of QP a into b's half of the buffer, to its completion. */
static void round_trip(void)
{
    struct ibv_sge s = {.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey};
    struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                             .send_flags = IBV_SEND_SIGNALED, .wr.rdma = {.remote_addr = (uintptr_t)buf + 64,
                                                                          .rkey = mr->rkey}},
                       *bad;
    CHECK(ibv_post_send(a, &wr, &bad) == 0);
    struct ibv_wc wc;
    double t0 = now();
    for (;;) {
        int n = ibv_poll_cq(cq, 1, &wc);
        CHECK(n >= 0);
        if (n == 1)
            break;
        if (now() - t0 > 30) {
            printf("FAIL no completion in 30 s\n");
            exit(1);
        }
    }
    CHECK(wc.status == IBV_WC_SUCCESS);
}

/* The best of five 0.3 s windows, in round trips per second (the best: a window the machine
 * gave to something else says nothing about the device). */
static double rate(void)
{
    double best = 0;
    for (int w = 0; w < 5; w++) {
        long n = 0;
        double t0 = now(), t;
        while ((t = now() - t0) < 0.3) {
            round_trip();
            n++;
        }
        if (n / t > best)
            best = n / t;
    }
    return best;
}

int main(int argc, char **argv)
{
    CHECK(argc > 2);
    const char *kind = argv[1];
    long count = atol(argv[2]);
    struct ibv_context *ctx = open_first();
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    CHECK(pd);
    cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
    CHECK(cq);
    CHECK(posix_memalign((void **)&buf, 4096, 4096) == 0);
    memset(buf, 0, 4096);
    mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    CHECK(mr);
    a = rc_qp(pd, cq, cq);
    b = rc_qp(pd, cq, cq);
    to_init(a);
    to_init(b);
    struct ibv_ah_attr self = self_path(ctx);
    CHECK(to_rtr(a, self, b->qp_num) == 0);
    CHECK(to_rtr(b, self, a->qp_num) == 0);
    to_rts(a, 7);
    to_rts(b, 7);
    for (int i = 0; i < 100; i++)
        round_trip();
    double before = rate();

    struct ibv_srq *srq = NULL;
    if (!strcmp(kind, "dct")) {
        struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
        srq = ibv_create_srq(pd, &sa);
        CHECK(srq);
    }
    double t0 = now();
    for (long i = 0; i < count; i++) {
        if (!strcmp(kind, "qp")) {
            struct ibv_qp_init_attr ia = {
                .send_cq = cq,
                .recv_cq = cq,
                .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
                .qp_type = IBV_QPT_RC,
            };
            CHECK(ibv_create_qp(pd, &ia));
        } else if (!strcmp(kind, "dct")) {
            struct ibv_qp_init_attr_ex ia = {.qp_type = IBV_QPT_DRIVER, .send_cq = cq, .recv_cq = cq, .srq = srq,
                                             .pd = pd, .comp_mask = IBV_QP_INIT_ATTR_PD};
            struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
                                             .dc_init_attr = {.dc_type = MLX5DV_DCTYPE_DCT,
                                                              .dct_access_key = 0x1234}};
            struct ibv_qp *d = mlx5dv_create_qp(ctx, &ia, &dv);
            CHECK(d);
            struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1,
                                    .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
            CHECK(ibv_modify_qp(d, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
            struct ibv_qp_attr r = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .min_rnr_timer = 12,
                                    .ah_attr = self};
            CHECK(ibv_modify_qp(d, &r, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER) == 0);
        } else if (!strcmp(kind, "cq")) {
            CHECK(ibv_create_cq(ctx, 1, NULL, NULL, 0));
        } else {
            printf("FAIL unknown kind %s\n", kind);
            return 1;
        }
    }
    double made = now() - t0;
    double after = rate();
    printf("before %.0f after %.0f ratio %.3f created %ld in %.3f s\n", before, after, after / before, count, made);
    return 0;
}
