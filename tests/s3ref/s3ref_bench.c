/*
 * s3ref_bench: the server side of tests/s3ref/PROTOCOL.md as a benchmark, on NVIDIA's
 * gpu_direct_rdma_access API. Waits for token.<i>.0 of each of -c clients, then executes -T
 * transfers (after -w untimed warm-up transfers) spread round-robin over those tokens, each a
 * transfer of the whole token (-s bytes; every token must be that size) in the token's
 * direction, keeping -q outstanding: submit (rdma_submit_task) until q are outstanding, poll
 * (rdma_poll_completions), submit again. Each client gets a registered buffer of its own on
 * the server (filled with pattern(seed) before WRITEs; checked against it after READs).
 * Publishes done.<i>.0 ("ok <bytes moved for that token>") and prints one line
 * (PROTOCOL.md, "Benchmark output"):
 *   transfers=<n> seconds=<f> rate=<f>/s size=<S> depth=<Q> clients=<C> op=<read|write|mixed> polls=<n> empty_polls=<n>
 * (transfers, seconds, polls: the timed part only).
 *
 * For instruction counts (scripts/s3-reference --bench --callgrind): s3bench_phase(N) is called
 * as each phase begins (1 warm-up, 2 timed transfers, 3 the -E polls of the drained, empty CQ,
 * 4 teardown), so that callgrind's --dump-before=s3bench_phase writes one profile per phase;
 * the third gives the cost of an empty poll, to take the timed run's empty polls out of its
 * count.
 *
 * -Y US: after a poll that found nothing, sleep US microseconds (0: sched_yield) instead of
 * polling again at once: under valgrind, where threads take turns, it hands the emulator's
 * device thread its turn.
 *
 *   s3ref_bench [-d DEV] [-p PORT] [-s SIZE] [-T TRANSFERS] [-q DEPTH] [-w WARMUP] [-E POLLS]
 *               [-Y US] [-c CLIENTS] [-t SECONDS] [-D DIR]
 */
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "gpu_direct_rdma_access.h"
#include "s3ref_common.h"

static const char usage[] =
    "[-d DEV] [-p PORT] [-s SIZE] [-T TRANSFERS] [-q DEPTH] [-w WARMUP] [-E POLLS] [-Y US] [-c CLIENTS] [-t SECONDS] [-D DIR]";

/* A phase boundary for callgrind's --dump-before (see the header); does nothing. */
__attribute__((noinline)) void s3bench_phase(int phase);
__attribute__((noinline)) void s3bench_phase(int phase)
{
    __asm__ volatile("" : : "r"(phase) : "memory");
}

struct client {
    char token[128];
    unsigned seed;
    int read_op;
    uint8_t *buf;
    struct rdma_buffer *rb;
    unsigned long done;
};

struct run {
    unsigned long polls, empty;
};

/* Executes n transfers at depth q over the clients' tokens; 0, or -1 on the first failure. */
static int transfers(struct rdma_device *dev, struct client *cl, int nc, unsigned long n, unsigned q, double timeout,
                     long idle_us, struct run *run)
{
    struct rdma_completion_event ev[16];
    unsigned long submitted = 0, completed = 0;
    unsigned outstanding = 0;
    double last = s3ref_now();
    int next = 0;

    while (completed < n) {
        while (outstanding < q && submitted < n) {
            struct client *c = &cl[next];
            struct rdma_task_attr attr = {
                .remote_buf_desc_str = c->token,
                .remote_buf_desc_length = S3REF_TOKEN_LEN + 1,
                .local_buf_rdma = c->rb,
                .flags = c->read_op ? RDMA_TASK_ATTR_RDMA_READ : 0,
                .wr_id = (uint64_t)next,
            };
            int ret = rdma_submit_task(&attr);
            if (ret) {
                fprintf(stderr, "s3ref_bench: rdma_submit_task failed (%d) after %lu transfers\n", ret, submitted);
                return -1;
            }
            submitted++;
            outstanding++;
            if (++next == nc)
                next = 0;
        }
        int got = rdma_poll_completions(dev, ev, 16);
        run->polls++;
        if (got == 0) {
            run->empty++;
            if (idle_us == 0)
                sched_yield();
            else if (idle_us > 0)
                s3ref_sleep_us((unsigned)idle_us);
            if ((run->empty & 4095) == 0 && s3ref_now() - last > timeout) {
                fprintf(stderr, "s3ref_bench: no completion for %.0f s (%u outstanding)\n", timeout, outstanding);
                return -1;
            }
            continue;
        }
        for (int k = 0; k < got; k++) {
            if (ev[k].status != RDMA_STATUS_SUCCESS) {
                fprintf(stderr, "s3ref_bench: transfer to client %d completed with status %d (%s)\n",
                        (int)ev[k].wr_id + 1, (int)ev[k].status,
                        ibv_wc_status_str((enum ibv_wc_status)ev[k].status));
                return -1;
            }
            cl[ev[k].wr_id].done++;
        }
        completed += (unsigned long)got;
        outstanding -= (unsigned)got;
        last = s3ref_now();
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct s3ref_opts o;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    struct rdma_device *dev;
    struct client *cl;
    struct run warm = {0, 0}, run = {0, 0};
    int failed = 0, reads = 0;
    double t0, t1;

    s3ref_parse(argc, argv, usage, &o);
    if (o.clients < 1) {
        fprintf(stderr, "s3ref_bench: at least one client is needed (-c or $SOFT_MLX5_NODES)\n");
        return 2;
    }
    s3ref_cm_select(o.device, o.port);
    dev = rdma_open_device_server((struct sockaddr *)&sa);
    if (!dev) {
        fprintf(stderr, "s3ref_bench: rdma_open_device_server failed\n");
        return 1;
    }
    cl = calloc((size_t)o.clients, sizeof(*cl));
    if (!cl)
        return 1;
    for (int i = 0; i < o.clients; i++) {
        char name[64], line[S3REF_LINE_MAX], opname[16];
        int used = 0;
        struct client *c = &cl[i];

        snprintf(name, sizeof name, "token.%d.0", i + 1);
        if (s3ref_wait_read(o.dir, name, line, sizeof line, o.timeout) != 0)
            return 1;
        if (sscanf(line, "%15s %u %127s%n", opname, &c->seed, c->token, &used) != 3 || line[used] != 0
            || (strcmp(opname, "read") && strcmp(opname, "write"))) {
            fprintf(stderr, "s3ref_bench: malformed %s: %s\n", name, line);
            return 1;
        }
        if (s3ref_token_size(c->token) != o.size) {
            fprintf(stderr, "s3ref_bench: client %d's token is not a token of %zu bytes: %s\n", i + 1, o.size, c->token);
            return 1;
        }
        c->read_op = !strcmp(opname, "read");
        reads += c->read_op;
        c->buf = s3ref_alloc(o.size);
        if (c->read_op)
            memset(c->buf, 0xff, o.size);
        else
            s3ref_fill(c->buf, o.size, c->seed);
        c->rb = rdma_buffer_reg(dev, c->buf, o.size);
        if (!c->rb) {
            fprintf(stderr, "s3ref_bench: rdma_buffer_reg of %zu bytes failed\n", o.size);
            return 1;
        }
    }
    s3bench_phase(1);
    if (o.warmup && transfers(dev, cl, o.clients, o.warmup, o.depth, o.timeout, o.idle_us, &warm) != 0)
        failed = 1;
    s3bench_phase(2);
    t0 = s3ref_now();
    if (!failed && transfers(dev, cl, o.clients, o.transfers, o.depth, o.timeout, o.idle_us, &run) != 0)
        failed = 1;
    t1 = s3ref_now();
    s3bench_phase(3);
    for (unsigned long k = 0; k < o.empty_polls && !failed; k++) {
        struct rdma_completion_event ev[16];
        if (rdma_poll_completions(dev, ev, 16) != 0) {
            fprintf(stderr, "s3ref_bench: a completion after the run\n");
            failed = 1;
        }
    }
    s3bench_phase(4);
    for (int i = 0; i < o.clients; i++) {
        struct client *c = &cl[i];
        char name[64], reply[S3REF_LINE_MAX];
        if (!failed && c->read_op) {
            size_t bad = s3ref_check(c->buf, o.size, c->seed);
            if (bad != o.size) {
                fprintf(stderr, "s3ref_bench: client %d: read data differ at byte %zu\n", i + 1, bad);
                failed = 1;
            }
        }
        if (failed || c->done == 0)
            snprintf(reply, sizeof reply, "err benchmark failed");
        else
            snprintf(reply, sizeof reply, "ok %llu", (unsigned long long)c->done * o.size);
        snprintf(name, sizeof name, "done.%d.0", i + 1);
        s3ref_publish(o.dir, name, reply);
        rdma_buffer_dereg(c->rb);
        munmap(c->buf, o.size);
    }
    rdma_close_device(dev);
    free(cl);
    if (failed)
        return 1;
    printf("transfers=%lu seconds=%.6f rate=%.1f/s size=%zu depth=%u clients=%d op=%s polls=%lu empty_polls=%lu\n",
           o.transfers, t1 - t0, (double)o.transfers / (t1 - t0), o.size, o.depth, o.clients,
           reads == o.clients ? "read" : reads == 0 ? "write" : "mixed", run.polls, run.empty);
    return 0;
}
