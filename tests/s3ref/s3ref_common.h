/*
 * Shared by our drivers of NVIDIA's gpu_direct_rdma_access API (s3ref_client, s3ref_server,
 * s3ref_bench): the data pattern, the rendezvous files of tests/s3ref/PROTOCOL.md, options.
 */
#ifndef S3REF_COMMON_H
#define S3REF_COMMON_H
#include <stddef.h>
#include <stdint.h>

/* The token: 7 colon-separated hex fields, 81 characters (PROTOCOL.md). */
#define S3REF_TOKEN_LEN 81
/* A rendezvous file's one line, with room to spare. */
#define S3REF_LINE_MAX 256

/* Options every driver takes (PROTOCOL.md, "Command lines"). */
struct s3ref_opts {
    const char *device;  /* -d: RDMA device (default $MLX5DV_TEST_DEVICE, else the first) */
    int port;            /* -p: port (1) */
    size_t size;         /* -s: bytes per buffer (1048576) */
    unsigned rounds;     /* -n: rounds per client (4) */
    const char *op;      /* -o: read | write | alt (alt) */
    double timeout;      /* -t: seconds to wait for any one rendezvous file (60) */
    const char *dir;     /* -D: rendezvous directory (default $SOFT_MLX5_RENDEZVOUS) */
    int id;              /* -i: client id, >= 1 (default $SOFT_MLX5_NODE_INDEX) */
    int clients;         /* -c: number of clients (default $SOFT_MLX5_NODES - 1) */
    int reg_per_round;   /* -R: client registers a fresh buffer every round */
    unsigned long transfers; /* -T: bench transfers (10000) */
    unsigned depth;      /* -q: bench queue depth (16) */
    unsigned long warmup; /* -w: bench warm-up transfers, not timed (depth * 4) */
    unsigned long empty_polls; /* -E: bench polls of the empty CQ after the run (0) */
    long idle_us;        /* -Y: bench: after a poll that found nothing, sleep this many us (0: sched_yield); -1: spin (default) */
    int verbose;         /* -v */
};

/* Parses argv; prints usage and exits 2 on a bad option. */
void s3ref_parse(int argc, char **argv, const char *usage, struct s3ref_opts *o);

/* pattern(seed)[k] = (k * 7 + seed) % 251 */
void s3ref_fill(uint8_t *buf, size_t len, uint32_t seed);
/* Index of the first byte that differs from pattern(seed), or len if none. */
size_t s3ref_check(const uint8_t *buf, size_t len, uint32_t seed);
static inline uint8_t s3ref_pattern_at(size_t k, uint32_t seed)
{
    return (uint8_t)(((uint64_t)k * 7 + seed) % 251);
}

/* Writes "<line>\n" to DIR/NAME through a temporary name and rename(2). 0 or -1. */
int s3ref_publish(const char *dir, const char *name, const char *line);
/* Reads the first line of DIR/NAME (without its newline) if the file exists: 1 read, 0 absent,
 * -1 error. */
int s3ref_try_read(const char *dir, const char *name, char *line, size_t cap);
/* Waits up to timeout seconds for DIR/NAME and reads its line: 0, or -1 on timeout or error. */
int s3ref_wait_read(const char *dir, const char *name, char *line, size_t cap, double timeout);

/* The token's size field (field 1), or 0 if the token is malformed. Checks the shape only
 * (field count, widths, lowercase hex, GID flag 0/1). */
uint64_t s3ref_token_size(const char *token);

double s3ref_now(void);
void s3ref_sleep_us(unsigned us);
/* A page-aligned, zeroed buffer (exits on failure). */
void *s3ref_alloc(size_t size);
/* Opens the device the stand-ins for RDMA CM will hand the reference (s3ref_cm.c). */
void s3ref_cm_select(const char *device, int port);
#endif
