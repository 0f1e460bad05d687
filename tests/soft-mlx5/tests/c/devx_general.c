/* DEVX general commands a ConnectX answers (mlx5_ifc.h): QUERY_HCA_CAP's general page says
 * port_type (0 InfiniBand, 1 Ethernet) and num_ports 1; QUERY_HCA_VPORT_CONTEXT (allowed by
 * mlx5_ib devx_is_general_cmd) gives the port's vport context with its LID. rdma-core 59's
 * tests/mlx5_base.py reads both (is_eth, query_lid). */
#include <infiniband/mlx5dv.h>
#include "common.h"

static unsigned be16(const unsigned char *p) { return p[0] << 8 | p[1]; }

int main(void)
{
    int n = 0;
    struct ibv_device **l = ibv_get_device_list(&n);
    CHECK(l && n > 0);
    struct mlx5dv_context_attr ca = {.flags = MLX5DV_CONTEXT_FLAGS_DEVX};
    struct ibv_context *ctx = mlx5dv_open_device(l[0], &ca);
    CHECK(ctx);
    struct ibv_port_attr pa;
    CHECK(ibv_query_port(ctx, 1, &pa) == 0);
    int fails = 0;

    unsigned char in[16] = {0x01, 0x00}, out[16 + 4096] = {0};
    in[7] = 0x01; /* op_mod: general device caps, current */
    int r = mlx5dv_devx_general_cmd(ctx, in, sizeof in, out, sizeof out);
    unsigned port_type = out[16 + 0x36] & 3, num_ports = out[16 + 0x37];
    printf("QUERY_HCA_CAP: %d status %u port_type %u num_ports %u (link layer %s)\n", r, out[0], port_type,
           num_ports, pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand");
    fails += r != 0 || port_type != (pa.link_layer == IBV_LINK_LAYER_ETHERNET) || num_ports != 1;

    unsigned char vin[16] = {0x07, 0x62}, vout[16 + 512] = {0};
    r = mlx5dv_devx_general_cmd(ctx, vin, sizeof vin, vout, sizeof vout);
    unsigned lid = be16(vout + 16 + 96);
    printf("QUERY_HCA_VPORT_CONTEXT: %d (errno %d) status %u lid %u (port lid %u)\n", r, r ? errno : 0, vout[0],
           lid, pa.lid);
    fails += r != 0 || vout[0] != 0 || lid != pa.lid;
    unsigned char fin[16] = {0x01, 0x00}, fout[16 + 4096];
    memset(fout, 0xa5, sizeof fout);
    fin[7] = 0x0e | 1; /* op_mod: NIC flow table caps, current */
    r = mlx5dv_devx_general_cmd(ctx, fin, sizeof fin, fout, sizeof fout);
    int zero = 1;
    for (size_t i = 16; i < sizeof fout; i++)
        zero &= fout[i] == 0;
    printf("QUERY_HCA_CAP NIC flow table: %d (errno %d) status %u all zero %d\n", r, r ? errno : 0, fout[0], zero);
    fails += r != 0 || fout[0] != 0 || !zero;
    if (fails) {
        printf("FAIL %d\n", fails);
        return 1;
    }
    printf("ok\n");
    return 0;
}
