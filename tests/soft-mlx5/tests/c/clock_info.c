/* mlx5dv_get_clock_info works: mlx5_ib offers the clock info page (clock_info_versions bit
 * MLX5_IB_CLOCK_INFO_V1, MLX5_IB_MMAP_CLOCK_INFO), and a device timestamp converts to a
 * wall-clock time near now. */
#include <infiniband/mlx5dv.h>
#include <time.h>
#include "common.h"

int main(void)
{
    struct ibv_context *ctx = open_first();
    struct mlx5dv_clock_info ci;
    int r = mlx5dv_get_clock_info(ctx, &ci);
    printf("mlx5dv_get_clock_info: %d\n", r);
    if (r) {
        printf("FAIL\n");
        return 1;
    }
    uint64_t ns = mlx5dv_ts_to_ns(&ci, 156250 /* 1 ms of cycles */);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double off = (double)ns / 1e9 - (now.tv_sec + now.tv_nsec / 1e9);
    printf("cycle 156250 is %.3f s from now (mult %u shift %u)\n", off, ci.mult, ci.shift);
    if (off < -3600 || off > 3600) {
        printf("FAIL\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
