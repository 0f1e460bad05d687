/* Two processes on nodes 0 and 1 (soft-mlx5 --nodes 2), an RC QP each, connected as sideway's
 * rc_pingpong connects them: `right` addresses each to the other's LID, `wrong` hard-codes
 * DLID 1 (node 0's) on both, as sideway's example does. Each posts a receive and a send and
 * prints the send's completion status. IBA 9.6.1.5: a responder drops an RC packet whose
 * source (SLID, QP) is not its QP's remote end, and a packet for a QP that does not exist;
 * the requester then exhausts its retries. */
#include <unistd.h>
#include "common.h"

static void put(const char *dir, const char *name, unsigned a, unsigned b)
{
    char p[512], t[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    snprintf(t, sizeof t, "%s.tmp", p);
    FILE *f = fopen(t, "w");
    CHECK(f);
    fprintf(f, "%u %u\n", a, b);
    fclose(f);
    CHECK(rename(t, p) == 0);
}

static void get(const char *dir, const char *name, unsigned *a, unsigned *b)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    for (int i = 0; i < 2000; i++) {
        FILE *f = fopen(p, "r");
        if (f) {
            CHECK(fscanf(f, "%u %u", a, b) == 2);
            fclose(f);
            return;
        }
        usleep(5000);
    }
    printf("FAIL no %s from the peer\n", name);
    exit(1);
}

int main(int argc, char **argv)
{
    CHECK(argc > 1);
    int wrong = strcmp(argv[1], "wrong") == 0;
    const char *dir = getenv("SOFT_MLX5_RENDEZVOUS");
    const char *idx = getenv("SOFT_MLX5_NODE_INDEX");
    CHECK(dir && idx);
    int me = atoi(idx), peer = 1 - me;
    struct ibv_context *ctx = open_first();
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    CHECK(pd);
    struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    CHECK(cq);
    static char buf[128];
    struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE);
    CHECK(mr);
    struct ibv_qp *qp = rc_qp(pd, cq, cq);
    to_init(qp);
    struct ibv_port_attr pa;
    CHECK(ibv_query_port(ctx, 1, &pa) == 0);
    char name[32];
    snprintf(name, sizeof name, "qp%d", me);
    put(dir, name, qp->qp_num, pa.lid);
    unsigned pqpn, plid;
    snprintf(name, sizeof name, "qp%d", peer);
    get(dir, name, &pqpn, &plid);
    struct ibv_ah_attr path = {.dlid = wrong ? 1 : plid, .port_num = 1};
    CHECK(to_rtr(qp, path, pqpn) == 0);
    to_rts(qp, 2);
    struct ibv_sge rs = {.addr = (uintptr_t)buf + 64, .length = 64, .lkey = mr->lkey};
    struct ibv_recv_wr rwr = {.wr_id = 2, .sg_list = &rs, .num_sge = 1}, *rbad;
    CHECK(ibv_post_recv(qp, &rwr, &rbad) == 0);
    snprintf(name, sizeof name, "ready%d", me);
    put(dir, name, 1, 1);
    snprintf(name, sizeof name, "ready%d", peer);
    get(dir, name, &pqpn, &plid);
    struct ibv_sge ss = {.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey};
    struct ibv_send_wr swr = {.wr_id = 1, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
                              .send_flags = IBV_SEND_SIGNALED}, *sbad;
    CHECK(ibv_post_send(qp, &swr, &sbad) == 0);
    struct ibv_wc wc;
    for (;;) {
        if (!poll_one(cq, &wc, 10000)) {
            printf("FAIL node %d: no send completion in 10 s\n", me);
            return 1;
        }
        if (wc.wr_id == 1)
            break;
        printf("node %d: receive status %d (%s) from slid %u\n", me, wc.status, ibv_wc_status_str(wc.status), wc.slid);
    }
    printf("node %d: send status %d (%s)\n", me, wc.status, ibv_wc_status_str(wc.status));
    int want = wrong ? IBV_WC_RETRY_EXC_ERR : IBV_WC_SUCCESS;
    if (wc.status != want) {
        printf("FAIL node %d: want %s\n", me, ibv_wc_status_str(want));
        /* Let the peer finish before this process exits. */
        sleep(1);
        return 1;
    }
    sleep(1);
    return 0;
}
