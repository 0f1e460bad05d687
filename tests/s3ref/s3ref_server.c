/*
 * s3ref_server: the server side of tests/s3ref/PROTOCOL.md on NVIDIA's gpu_direct_rdma_access
 * API (a DCI executing tokens with rdma_submit_task, completions from rdma_poll_completions).
 *
 * Serves -n rounds of each of -c clients (ids 1..c) in whatever order their tokens arrive:
 * for token.<i>.<r> ("<op> <seed> <token>") it RDMA-READs the client's buffer into its own
 * registered buffer and checks it against pattern(seed) ("read", an S3 PUT), or fills its
 * buffer with pattern(seed) and RDMA-WRITEs it to the client ("write", a GET); then publishes
 * done.<i>.<r>: "ok <bytes>" or "err <text>". A failed transfer is answered "err", the device
 * is reset (rdma_reset_device) and the others go on; a client that publishes abort.<i> is
 * waited for no more. The exit status is 1 if any token failed or any client gave up.
 *
 *   s3ref_server [-d DEV] [-p PORT] [-s SIZE] [-n ROUNDS] [-c CLIENTS] [-t SECONDS] [-D DIR] [-v]
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "gpu_direct_rdma_access.h"
#include "s3ref_common.h"

static const char usage[] = "[-d DEV] [-p PORT] [-s SIZE] [-n ROUNDS] [-c CLIENTS] [-t SECONDS] [-D DIR] [-v]";

/* Executes one token and waits for its completion; on failure fills err and returns -1. */
static int execute(struct rdma_device *dev, struct rdma_buffer *rb, char *token, int read_op, uint64_t wr_id,
                   double timeout, char *err, size_t cap)
{
    struct rdma_task_attr attr = {
        .remote_buf_desc_str = token,
        .remote_buf_desc_length = strlen(token) + 1,
        .remote_buf_offset = 0,
        .local_buf_rdma = rb,
        .local_buf_iovec = NULL,
        .local_buf_iovcnt = 0,
        .flags = read_op ? RDMA_TASK_ATTR_RDMA_READ : 0,
        .wr_id = wr_id,
    };
    struct rdma_completion_event ev[16];
    double deadline = s3ref_now() + timeout;
    int ret = rdma_submit_task(&attr);

    if (ret) {
        snprintf(err, cap, "rdma_submit_task failed (%d)", ret);
        return -1;
    }
    for (unsigned spins = 0;; spins++) {
        int n = rdma_poll_completions(dev, ev, 16);
        for (int k = 0; k < n; k++) {
            if (ev[k].wr_id != wr_id) {
                snprintf(err, cap, "completion of unknown request %llu", (unsigned long long)ev[k].wr_id);
                return -1;
            }
            if (ev[k].status != RDMA_STATUS_SUCCESS) {
                snprintf(err, cap, "RDMA %s completed with status %d (%s)", read_op ? "READ" : "WRITE",
                         (int)ev[k].status, ibv_wc_status_str((enum ibv_wc_status)ev[k].status));
                return -1;
            }
            return 0;
        }
        if ((spins & 1023) == 1023 && s3ref_now() > deadline) {
            snprintf(err, cap, "no completion after %.0f s", timeout);
            return -1;
        }
    }
}

int main(int argc, char **argv)
{
    struct s3ref_opts o;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    struct rdma_device *dev;
    struct rdma_buffer *rb;
    uint8_t *buf;
    unsigned *next;
    unsigned long remaining, reads = 0, writes = 0, failures = 0;
    unsigned long long bytes = 0;
    uint64_t wr_id = 0;
    double idle_since;

    s3ref_parse(argc, argv, usage, &o);
    if (o.clients < 1) {
        fprintf(stderr, "s3ref_server: at least one client is needed (-c or $SOFT_MLX5_NODES)\n");
        return 2;
    }
    s3ref_cm_select(o.device, o.port);
    dev = rdma_open_device_server((struct sockaddr *)&sa);
    if (!dev) {
        fprintf(stderr, "s3ref_server: rdma_open_device_server failed\n");
        return 1;
    }
    buf = s3ref_alloc(o.size);
    rb = rdma_buffer_reg(dev, buf, o.size);
    if (!rb) {
        fprintf(stderr, "s3ref_server: rdma_buffer_reg of %zu bytes failed\n", o.size);
        return 1;
    }
    next = calloc((size_t)o.clients + 1, sizeof(*next));
    if (!next)
        return 1;
    remaining = (unsigned long)o.clients * o.rounds;
    idle_since = s3ref_now();
    while (remaining > 0) {
        int progress = 0;
        for (int i = 1; i <= o.clients; i++) {
            char name[64], line[S3REF_LINE_MAX], opname[16], token[S3REF_LINE_MAX], reply[S3REF_LINE_MAX];
            char err[200] = "";
            unsigned seed;
            uint64_t size = 0;
            int read_op = 0, got, used = 0;

            if (next[i] >= o.rounds)
                continue;
            snprintf(name, sizeof name, "token.%d.%u", i, next[i]);
            got = s3ref_try_read(o.dir, name, line, sizeof line);
            if (got == 0) {
                snprintf(name, sizeof name, "abort.%d", i);
                if (s3ref_try_read(o.dir, name, line, sizeof line) > 0) {
                    fprintf(stderr, "s3ref_server: client %d gave up after %u rounds (%s)\n", i, next[i], line);
                    failures += o.rounds - next[i];
                    remaining -= o.rounds - next[i];
                    next[i] = o.rounds;
                    progress = 1;
                }
                continue;
            }
            progress = 1;
            if (got < 0) {
                snprintf(err, sizeof err, "unreadable token file");
            } else if (sscanf(line, "%15s %u %200s%n", opname, &seed, token, &used) != 3 || line[used] != 0
                       || (strcmp(opname, "read") && strcmp(opname, "write"))) {
                snprintf(err, sizeof err, "malformed token line");
            } else if ((size = s3ref_token_size(token)) == 0) {
                snprintf(err, sizeof err, "malformed token");
            } else if (size > o.size) {
                snprintf(err, sizeof err, "token size %llu exceeds the server's buffer of %zu bytes",
                         (unsigned long long)size, o.size);
            } else {
                read_op = !strcmp(opname, "read");
                if (read_op)
                    memset(buf, 0xff, (size_t)size);
                else
                    s3ref_fill(buf, (size_t)size, seed);
                if (execute(dev, rb, token, read_op, ++wr_id, o.timeout, err, sizeof err) != 0) {
                    if (rdma_reset_device(dev) != 0)
                        fprintf(stderr, "s3ref_server: rdma_reset_device failed\n");
                } else if (read_op) {
                    size_t bad = s3ref_check(buf, (size_t)size, seed);
                    if (bad != size)
                        snprintf(err, sizeof err, "read data differ at byte %zu: 0x%02x, not 0x%02x", bad, buf[bad],
                                 s3ref_pattern_at(bad, seed));
                }
            }
            if (err[0]) {
                fprintf(stderr, "s3ref_server: client %d round %u: %s\n", i, next[i], err);
                snprintf(reply, sizeof reply, "err %s", err);
                failures++;
            } else {
                snprintf(reply, sizeof reply, "ok %llu", (unsigned long long)size);
                bytes += size;
                if (read_op)
                    reads++;
                else
                    writes++;
                if (o.verbose)
                    printf("s3ref_server: client %d round %u: %s %llu bytes ok\n", i, next[i], opname,
                           (unsigned long long)size);
            }
            snprintf(name, sizeof name, "done.%d.%u", i, next[i]);
            if (s3ref_publish(o.dir, name, reply) != 0)
                failures++;
            next[i]++;
            remaining--;
        }
        if (progress) {
            idle_since = s3ref_now();
        } else {
            if (s3ref_now() - idle_since > o.timeout) {
                fprintf(stderr, "s3ref_server: no token for %.0f s; %lu still expected\n", o.timeout, remaining);
                return 1;
            }
            s3ref_sleep_us(200);
        }
    }
    rdma_buffer_dereg(rb);
    rdma_close_device(dev);
    munmap(buf, o.size);
    free(next);
    printf("s3ref_server: %lu tokens from %d clients: %lu read (data checked), %lu written, %llu bytes, %lu failed\n",
           (unsigned long)o.clients * o.rounds, o.clients, reads, writes, bytes, failures);
    return failures ? 1 : 0;
}
