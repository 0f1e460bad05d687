/*
 * s3ref_client: the client side of tests/s3ref/PROTOCOL.md on NVIDIA's gpu_direct_rdma_access
 * API (a DCT behind registered buffers; tokens minted by rdma_buffer_get_desc_str).
 *
 * For each round r: (re)uses its registered buffer of -s bytes; for op "read" (the server
 * RDMA-READs it: an S3 PUT) fills it with pattern(seed), for "write" (the server RDMA-WRITEs
 * it: a GET) fills it with 0xff, a byte the pattern never holds; publishes token.<id>.<r>
 * ("<op> <seed> <token>"), waits for done.<id>.<r> and, for "write", checks every byte.
 * Exits 0 when every round was answered "ok" with the right byte count and the right data;
 * otherwise publishes abort.<id> (so the server stops waiting for it) and exits 1.
 *
 *   s3ref_client [-d DEV] [-p PORT] [-s SIZE] [-n ROUNDS] [-o read|write|alt] [-R] [-t SECONDS]
 *                [-D DIR] [-i ID] [-v]
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "gpu_direct_rdma_access.h"
#include "s3ref_common.h"

static const char usage[] =
    "[-d DEV] [-p PORT] [-s SIZE] [-n ROUNDS] [-o read|write|alt] [-R] [-t SECONDS] [-D DIR] [-i ID] [-v]";

int main(int argc, char **argv)
{
    struct s3ref_opts o;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    struct rdma_device *dev;
    struct rdma_buffer *rb = NULL;
    uint8_t *buf;
    unsigned reads = 0, writes = 0;
    int failed = 0;

    s3ref_parse(argc, argv, usage, &o);
    if (o.id < 1) {
        fprintf(stderr, "s3ref_client: a client id >= 1 is needed (-i or $SOFT_MLX5_NODE_INDEX)\n");
        return 2;
    }
    s3ref_cm_select(o.device, o.port);
    dev = rdma_open_device_client((struct sockaddr *)&sa);
    if (!dev) {
        fprintf(stderr, "s3ref_client %d: rdma_open_device_client failed\n", o.id);
        return 1;
    }
    buf = s3ref_alloc(o.size);
    for (unsigned r = 0; r < o.rounds && !failed; r++) {
        int read_op = !strcmp(o.op, "read") || (!strcmp(o.op, "alt") && (o.id + r) % 2 == 1);
        uint32_t seed = (uint32_t)(1000u * (unsigned)o.id + r);
        char token[128], line[S3REF_LINE_MAX], name[64], reply[S3REF_LINE_MAX];
        unsigned long long bytes;
        int n, used;

        if (!rb || o.reg_per_round) {
            if (rb)
                rdma_buffer_dereg(rb);
            rb = rdma_buffer_reg(dev, buf, o.size);
            if (!rb) {
                fprintf(stderr, "s3ref_client %d: rdma_buffer_reg of %zu bytes failed\n", o.id, o.size);
                failed = 1;
                break;
            }
        }
        if (read_op)
            s3ref_fill(buf, o.size, seed);
        else
            memset(buf, 0xff, o.size);
        n = rdma_buffer_get_desc_str(rb, token, sizeof token);
        if (n <= 0) {
            fprintf(stderr, "s3ref_client %d: rdma_buffer_get_desc_str failed\n", o.id);
            failed = 1;
            break;
        }
        snprintf(line, sizeof line, "%s %u %s", read_op ? "read" : "write", (unsigned)seed, token);
        snprintf(name, sizeof name, "token.%d.%u", o.id, r);
        if (o.verbose)
            printf("s3ref_client %d: round %u: %s\n", o.id, r, line);
        if (s3ref_publish(o.dir, name, line) != 0) {
            failed = 1;
            break;
        }
        snprintf(name, sizeof name, "done.%d.%u", o.id, r);
        if (s3ref_wait_read(o.dir, name, reply, sizeof reply, o.timeout) != 0) {
            failed = 1;
            break;
        }
        if (sscanf(reply, "ok %llu%n", &bytes, &used) != 1 || reply[used] != 0) {
            fprintf(stderr, "s3ref_client %d: round %u (%s): server answered \"%s\"\n", o.id, r,
                    read_op ? "read" : "write", reply);
            failed = 1;
            break;
        }
        if (bytes == 0 || bytes % o.size != 0) {
            fprintf(stderr, "s3ref_client %d: round %u: server reports %llu bytes, not a multiple of %zu\n",
                    o.id, r, bytes, o.size);
            failed = 1;
            break;
        }
        if (!read_op) {
            size_t bad = s3ref_check(buf, o.size, seed);
            if (bad != o.size) {
                fprintf(stderr, "s3ref_client %d: round %u (write): byte %zu is 0x%02x, not 0x%02x\n", o.id, r,
                        bad, buf[bad], s3ref_pattern_at(bad, seed));
                failed = 1;
                break;
            }
            writes++;
        } else {
            reads++;
        }
    }
    if (failed) {
        /* Tells the server not to wait for this client's remaining rounds. */
        char name[64];
        snprintf(name, sizeof name, "abort.%d", o.id);
        s3ref_publish(o.dir, name, "client gave up");
    }
    if (rb)
        rdma_buffer_dereg(rb);
    rdma_close_device(dev);
    munmap(buf, o.size);
    if (failed)
        return 1;
    printf("s3ref_client %d: %u rounds ok (%u read by the server, %u written by it and checked), %zu bytes each\n",
           o.id, o.rounds, reads, writes, o.size);
    return 0;
}
