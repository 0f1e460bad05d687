/* Many DC targets on one node, held by several processes, and a server on another node that
 * writes once into every one of them.
 *
 *   dct_farm farm DIR INDEX COUNT   make COUNT DCTs (one PD, SRQ, CQ and region) and publish
 *                                   their numbers as DIR/farm<INDEX>; wait for DIR/done; print
 *                                   how long the DCTs took and the process's VmHWM.
 *   dct_farm server DIR PROCS DCIS  read DIR/farm0..PROCS-1; RDMA-write 8 bytes into every DCT
 *                                   listed, from DCIS DC initiators (one write in flight each);
 *                                   print how long it took and VmHWM; create DIR/done.
 *
 * Each farm's region gets, at 8 * (i % 512), the number of the i-th DCT of that farm last
 * written there; a farm checks its last 512 DCTs' words before it exits. */
#include <infiniband/mlx5dv.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include "common.h"

#define KEY 0x5ca1eULL
#define SLOTS 512

static double now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + tv.tv_usec / 1e6;
}

static long vm_hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

static void wait_for(const char *path, int seconds)
{
    for (int i = 0; i < seconds * 100; i++) {
        if (access(path, F_OK) == 0)
            return;
        usleep(10000);
    }
    printf("FAIL no %s after %d s\n", path, seconds);
    exit(1);
}

static int farm(const char *dir, int index, long count)
{
    struct ibv_context *ctx = open_first();
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    CHECK(pd);
    struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    CHECK(cq);
    struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
    struct ibv_srq *srq = ibv_create_srq(pd, &sa);
    CHECK(srq);
    uint64_t *buf;
    CHECK(posix_memalign((void **)&buf, 4096, SLOTS * 8) == 0);
    memset(buf, 0, SLOTS * 8);
    struct ibv_mr *mr = ibv_reg_mr(pd, buf, SLOTS * 8, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    CHECK(mr);
    struct ibv_ah_attr self = self_path(ctx);
    uint32_t *dctn = calloc(count, sizeof *dctn);
    CHECK(dctn);
    double t0 = now();
    for (long i = 0; i < count; i++) {
        struct ibv_qp_init_attr_ex ia = {.qp_type = IBV_QPT_DRIVER, .send_cq = cq, .recv_cq = cq, .srq = srq,
                                         .pd = pd, .comp_mask = IBV_QP_INIT_ATTR_PD};
        struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
                                         .dc_init_attr = {.dc_type = MLX5DV_DCTYPE_DCT, .dct_access_key = KEY}};
        struct ibv_qp *d = mlx5dv_create_qp(ctx, &ia, &dv);
        if (!d) {
            printf("FAIL farm %d: DCT %ld of %ld: errno %d (%s)\n", index, i, count, errno, strerror(errno));
            return 1;
        }
        struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
        CHECK(ibv_modify_qp(d, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
        struct ibv_qp_attr r = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .min_rnr_timer = 12, .ah_attr = self};
        CHECK(ibv_modify_qp(d, &r, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER) == 0);
        dctn[i] = d->qp_num;
    }
    double made = now() - t0;
    char path[512], tmp[600];
    snprintf(path, sizeof path, "%s/farm%d", dir, index);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    CHECK(f);
    fprintf(f, "%u %u %llu %ld", self.dlid, mr->rkey, (unsigned long long)(uintptr_t)buf, count);
    for (int i = 0; i < 16; i++)
        fprintf(f, " %u", self.grh.dgid.raw[i]);
    fprintf(f, "\n");
    for (long i = 0; i < count; i++)
        fprintf(f, "%u\n", dctn[i]);
    fclose(f);
    CHECK(rename(tmp, path) == 0);
    snprintf(path, sizeof path, "%s/done", dir);
    wait_for(path, 1800);
    long bad = 0;
    for (long i = count > SLOTS ? count - SLOTS : 0; i < count; i++)
        bad += __atomic_load_n(&buf[i % SLOTS], __ATOMIC_ACQUIRE) != dctn[i];
    printf("farm %d: %ld DCTs made in %.3f s; the last %d written as the server named them: %s; VmHWM %ld kB\n",
           index, count, made, SLOTS, bad ? "NO" : "yes", vm_hwm_kb());
    return bad != 0;
}

struct target {
    uint32_t dctn;
    int farm;
    long i;
};

static int server(const char *dir, int procs, int ndci)
{
    long total = 0;
    uint32_t rkey[64];
    uint64_t addr[64];
    struct ibv_ah_attr path[64];
    struct target *t = NULL;
    CHECK(procs <= 64);
    for (int p = 0; p < procs; p++) {
        char name[512];
        snprintf(name, sizeof name, "%s/farm%d", dir, p);
        wait_for(name, 1800);
        FILE *f = fopen(name, "r");
        CHECK(f);
        unsigned lid, gid[16];
        unsigned long long a;
        long count;
        CHECK(fscanf(f, "%u %u %llu %ld", &lid, &rkey[p], &a, &count) == 4);
        for (int i = 0; i < 16; i++)
            CHECK(fscanf(f, "%u", &gid[i]) == 1);
        addr[p] = a;
        memset(&path[p], 0, sizeof path[p]);
        path[p].dlid = lid;
        path[p].port_num = 1;
        for (int i = 0; i < 16; i++)
            path[p].grh.dgid.raw[i] = gid[i];
        t = realloc(t, (total + count) * sizeof *t);
        CHECK(t);
        for (long i = 0; i < count; i++) {
            CHECK(fscanf(f, "%u", &t[total].dctn) == 1);
            t[total].farm = p;
            t[total].i = i;
            total++;
        }
        fclose(f);
    }
    struct ibv_context *ctx = open_first();
    int roce = is_roce(ctx);
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    CHECK(pd);
    struct ibv_cq *cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
    CHECK(cq);
    uint32_t *src;
    CHECK(posix_memalign((void **)&src, 4096, 8 * ndci) == 0);
    struct ibv_mr *mr = ibv_reg_mr(pd, src, 8 * ndci, IBV_ACCESS_LOCAL_WRITE);
    CHECK(mr);
    struct ibv_ah *ah[64];
    for (int p = 0; p < procs; p++) {
        if (roce) {
            path[p].is_global = 1;
            path[p].grh.sgid_index = gid_index();
            path[p].grh.hop_limit = 64;
        }
        ah[p] = ibv_create_ah(pd, &path[p]);
        CHECK(ah[p]);
    }
    struct ibv_qp *dci[64];
    struct ibv_qp_ex *qpx[64];
    struct mlx5dv_qp_ex *mqpx[64];
    CHECK(ndci <= 64);
    for (int k = 0; k < ndci; k++) {
        struct ibv_qp_init_attr_ex a = {.qp_type = IBV_QPT_DRIVER, .send_cq = cq, .recv_cq = cq, .pd = pd,
                                        .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                                        .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE,
                                        .cap = {.max_send_wr = 4, .max_send_sge = 1}};
        struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
                                         .dc_init_attr = {.dc_type = MLX5DV_DCTYPE_DCI}};
        dci[k] = mlx5dv_create_qp(ctx, &a, &dv);
        CHECK(dci[k]);
        struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1};
        CHECK(ibv_modify_qp(dci[k], &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT) == 0);
        struct ibv_qp_attr r = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .ah_attr = path[0]};
        CHECK(ibv_modify_qp(dci[k], &r, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU) == 0);
        struct ibv_qp_attr s = {.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
                                .max_rd_atomic = 1};
        CHECK(ibv_modify_qp(dci[k], &s, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                            IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) == 0);
        qpx[k] = ibv_qp_to_qp_ex(dci[k]);
        mqpx[k] = mlx5dv_qp_ex_from_ibv_qp_ex(qpx[k]);
    }
    double t0 = now();
    long next = 0, done = 0, failed = 0;
    int busy[64] = {0};
    while (done < total) {
        for (int k = 0; k < ndci && next < total; k++) {
            if (busy[k])
                continue;
            struct target *x = &t[next];
            src[2 * k] = x->dctn;
            src[2 * k + 1] = 0;
            ibv_wr_start(qpx[k]);
            qpx[k]->wr_id = k;
            qpx[k]->wr_flags = IBV_SEND_SIGNALED;
            ibv_wr_rdma_write(qpx[k], rkey[x->farm], addr[x->farm] + 8 * (x->i % SLOTS));
            mlx5dv_wr_set_dc_addr(mqpx[k], ah[x->farm], x->dctn, KEY);
            ibv_wr_set_sge(qpx[k], mr->lkey, (uintptr_t)&src[2 * k], 8);
            CHECK(ibv_wr_complete(qpx[k]) == 0);
            busy[k] = 1;
            next++;
        }
        struct ibv_wc wc[16];
        int n = ibv_poll_cq(cq, 16, wc);
        CHECK(n >= 0);
        for (int i = 0; i < n; i++) {
            if (wc[i].status != IBV_WC_SUCCESS && failed++ < 5)
                printf("server: a write failed: %s\n", ibv_wc_status_str(wc[i].status));
            busy[wc[i].wr_id] = 0;
            done++;
        }
        if (now() - t0 > 1800) {
            printf("FAIL server: %ld of %ld writes done after 1800 s\n", done, total);
            return 1;
        }
    }
    double took = now() - t0;
    printf("server: %ld DCTs of %d processes reached, %ld failed, in %.3f s (%.1f us per write, %d DCIs); VmHWM %ld kB\n",
           total, procs, failed, took, took * 1e6 / total, ndci, vm_hwm_kb());
    char name[512];
    snprintf(name, sizeof name, "%s/done", dir);
    FILE *f = fopen(name, "w");
    CHECK(f);
    fclose(f);
    return failed != 0;
}

int main(int argc, char **argv)
{
    CHECK(argc > 4);
    if (!strcmp(argv[1], "farm"))
        return farm(argv[2], atoi(argv[3]), atol(argv[4]));
    if (!strcmp(argv[1], "server") && argc > 4)
        return server(argv[2], atoi(argv[3]), atoi(argv[4]));
    printf("FAIL usage\n");
    return 1;
}
