/* An SRQ asked for with max_wr 0 (pyverbs' SrqInitAttr() default): mlx5_ib_create_srq checks
 * only max_wr against the device's maximum and makes a ring of roundup_pow_of_two(max_wr + 1)
 * entries, so it is created (libmlx5 keeps one entry of its free list spare, so that SRQ
 * takes no receive: posting is libmlx5's ENOMEM, the kernel is not asked). */
#include "common.h"

int main(void)
{
    struct ibv_context *ctx = open_first();
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    CHECK(pd);
    struct ibv_srq_init_attr ia = {.attr = {.max_wr = 0, .max_sge = 1}};
    struct ibv_srq *srq = ibv_create_srq(pd, &ia);
    CHECK(srq);
    struct ibv_srq_attr a;
    CHECK(ibv_query_srq(srq, &a) == 0);
    CHECK(ibv_destroy_srq(srq) == 0);
    printf("ok: max_wr 0 SRQ created (max_wr %u, queried %u)\n", ia.attr.max_wr, a.max_wr);
    return 0;
}
