/* Two CQs on one completion channel, armed back to back (ibv_req_notify_cq on each, nothing in
 * between): a completion on the first raises its event. A ConnectX acts on every CQ doorbell
 * written to the UAR (PRM "CQ doorbell"), not only on the last one. */
#include <time.h>
#include "common.h"

int main(void)
{
    struct ibv_context *ctx = open_first();
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    CHECK(pd);
    struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
    CHECK(ch);
    struct ibv_cq *cq1 = ibv_create_cq(ctx, 16, (void *)1, ch, 0);
    struct ibv_cq *cq2 = ibv_create_cq(ctx, 16, (void *)2, ch, 0);
    CHECK(cq1 && cq2);
    static char buf[64];
    struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    CHECK(mr);
    struct ibv_qp *qp = rc_qp(pd, cq1, cq1);
    to_init(qp);
    CHECK(to_rtr(qp, self_path(ctx), qp->qp_num) == 0);
    to_rts(qp, 7);

    CHECK(ibv_req_notify_cq(cq1, 0) == 0);
    CHECK(ibv_req_notify_cq(cq2, 0) == 0);

    struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey};
    struct ibv_send_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                             .send_flags = IBV_SEND_SIGNALED,
                             .wr.rdma = {.remote_addr = (uintptr_t)buf + 32, .rkey = mr->rkey}};
    struct ibv_send_wr *bad;
    CHECK(ibv_post_send(qp, &wr, &bad) == 0);

    struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
    int r = poll(&pfd, 1, 3000);
    if (r != 1) {
        struct ibv_wc wc;
        printf("FAIL no completion event within 3 s (a completion %s in the first CQ)\n",
               ibv_poll_cq(cq1, 1, &wc) == 1 ? "is" : "is not");
        return 1;
    }
    struct ibv_cq *ev_cq;
    void *ev_ctx;
    CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0);
    CHECK(ev_cq == cq1);
    ibv_ack_cq_events(ev_cq, 1);
    struct ibv_wc wc;
    CHECK(poll_one(cq1, &wc, 1000) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 7);
    printf("ok: the first CQ's event arrived\n");
    return 0;
}
