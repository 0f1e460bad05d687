/* RoCE: an RC QP's RTR (and ibv_create_ah) toward a GID no node of the fabric has. ib_core
 * resolves the destination MAC there (ib_resolve_eth_dmac -> rdma_addr_find_l2_eth_by_grh);
 * a neighbour that never answers fails it with ETIMEDOUT after rdma_resolve_ip's 1000 ms. */
#include <arpa/inet.h>
#include "common.h"

static int rtr_to(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq, const char *gid)
{
    struct ibv_ah_attr path = self_path(ctx);
    if (gid)
        CHECK(inet_pton(AF_INET6, gid, &path.grh.dgid) == 1);
    return rtr_once(pd, cq, path, 0x123);
}

int main(void)
{
    struct ibv_context *ctx = open_first();
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    pd_and_cq(ctx, &pd, &cq);
    int fails = 0;
    int r = rtr_to(ctx, pd, cq, NULL);
    printf("RTR to its own GID: %d\n", r);
    fails += r != 0;
    r = rtr_to(ctx, pd, cq, "::ffff:10.78.0.2");
    printf("RTR to node 1's GID: %d\n", r);
    fails += r != 0;
    const char *nobody[] = {"::ffff:10.78.200.1", "fe80::dead:beef"};
    for (int i = 0; i < 2; i++) {
        r = rtr_to(ctx, pd, cq, nobody[i]);
        printf("RTR to %s (nobody's): %d (want ETIMEDOUT %d)\n", nobody[i], r, ETIMEDOUT);
        fails += r != ETIMEDOUT;
    }
    struct ibv_ah_attr ah = self_path(ctx);
    CHECK(inet_pton(AF_INET6, nobody[0], &ah.grh.dgid) == 1);
    errno = 0;
    struct ibv_ah *a = ibv_create_ah(pd, &ah);
    printf("create_ah to %s: %s errno %d\n", nobody[0], a ? "created" : "refused", errno);
    fails += a != NULL;
    if (fails) {
        printf("FAIL %d\n", fails);
        return 1;
    }
    printf("ok\n");
    return 0;
}
