/* Creates RC QPs until ibv_create_qp fails or argv[1] exist; prints how many, the errno of the
 * failure and how long the failing call and the whole run took. */
#include <sys/time.h>
#include "common.h"

static double now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
    long max = argc > 1 ? atol(argv[1]) : 20000;
    struct ibv_context *ctx = open_first();
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    CHECK(pd);
    struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    CHECK(cq);
    double t0 = now();
    long n = 0;
    double last = 0;
    int err = 0;
    for (; n < max; n++) {
        struct ibv_qp_init_attr ia = {
            .send_cq = cq,
            .recv_cq = cq,
            .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
            .qp_type = IBV_QPT_RC,
        };
        double t = now();
        struct ibv_qp *qp = ibv_create_qp(pd, &ia);
        last = now() - t;
        if (!qp) {
            err = errno;
            break;
        }
    }
    printf("created %ld errno %d last %.6f total %.3f\n", n, err, last, now() - t0);
    return 0;
}
