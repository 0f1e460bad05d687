/* A source GID index the port's table has no entry at: ib_core's rdma_fill_sgid_attr ->
 * rdma_get_gid_attr refuses it, EINVAL past the table (gid_tbl_len), ENODATA for an empty
 * entry, for ibv_create_ah (RoCE: libmlx5 asks the kernel; on InfiniBand it makes the AH
 * itself) and for a QP's address vector at RTR. */
#include "common.h"

static int rtr_errno(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq, int sgid)
{
    struct ibv_ah_attr path = self_path(ctx);
    path.is_global = 1;
    path.grh.hop_limit = 64;
    path.grh.sgid_index = sgid;
    return rtr_once(pd, cq, path, 0x123);
}

int main(void)
{
    struct ibv_context *ctx = open_first();
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    pd_and_cq(ctx, &pd, &cq);
    struct ibv_port_attr pa;
    CHECK(ibv_query_port(ctx, 1, &pa) == 0);
    int roce = is_roce(ctx);
    int fails = 0;
    /* The GIDs in use: 1 on InfiniBand, 2 on RoCE (soft-mlx5's profiles); 5 is empty. */
    int r = rtr_errno(ctx, pd, cq, gid_index());
    printf("RTR sgid_index %d (in use): %d\n", gid_index(), r);
    fails += r != 0;
    r = rtr_errno(ctx, pd, cq, 5);
    printf("RTR sgid_index 5 (empty): %d (want ENODATA %d)\n", r, ENODATA);
    fails += r != ENODATA;
    if (pa.gid_tbl_len <= 255) {
        r = rtr_errno(ctx, pd, cq, 255);
        printf("RTR sgid_index 255 (past %d): %d (want EINVAL %d)\n", pa.gid_tbl_len, r, EINVAL);
        fails += r != EINVAL;
    }
    if (roce) {
        struct ibv_ah_attr ah = self_path(ctx);
        ah.grh.sgid_index = 5;
        errno = 0;
        struct ibv_ah *a = ibv_create_ah(pd, &ah);
        printf("create_ah sgid_index 5 (empty): %s errno %d\n", a ? "created" : "refused", errno);
        fails += a != NULL;
        ah.grh.sgid_index = gid_index();
        a = ibv_create_ah(pd, &ah);
        printf("create_ah sgid_index %d: %s\n", gid_index(), a ? "created" : "refused");
        fails += a == NULL;
    }
    if (fails) {
        printf("FAIL %d\n", fails);
        return 1;
    }
    printf("ok\n");
    return 0;
}
