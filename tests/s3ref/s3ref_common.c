/* Helpers shared by our drivers of the gpu_direct_rdma_access API: see s3ref_common.h. */
#define _GNU_SOURCE
#include "s3ref_common.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void usage_exit(const char *usage, const char *prog, const char *why)
{
    if (why)
        fprintf(stderr, "%s: %s\n", prog, why);
    fprintf(stderr, "usage: %s %s\n", prog, usage);
    exit(2);
}

static unsigned long parse_ul(const char *s, const char *usage, const char *prog, const char *what)
{
    char *end;
    unsigned long v;
    errno = 0;
    v = strtoul(s, &end, 0);
    if (errno || end == s || *end || *s == '-') {
        char msg[128];
        snprintf(msg, sizeof msg, "bad %s: %s", what, s);
        usage_exit(usage, prog, msg);
    }
    return v;
}

void s3ref_parse(int argc, char **argv, const char *usage, struct s3ref_opts *o)
{
    const char *prog = argv[0];
    const char *env;
    int c;

    memset(o, 0, sizeof(*o));
    o->port = 1;
    o->size = 1048576;
    o->rounds = 4;
    o->op = "alt";
    o->timeout = 60;
    o->id = -1;
    o->clients = -1;
    o->transfers = 10000;
    o->depth = 16;
    o->warmup = (unsigned long)-1;
    o->idle_us = -1;
    while ((c = getopt(argc, argv, "d:p:s:n:o:t:D:i:c:RT:q:w:E:Y:vh")) != -1) {
        switch (c) {
        case 'd': o->device = optarg; break;
        case 'p': o->port = (int)parse_ul(optarg, usage, prog, "port"); break;
        case 's': o->size = parse_ul(optarg, usage, prog, "size"); break;
        case 'n': o->rounds = (unsigned)parse_ul(optarg, usage, prog, "rounds"); break;
        case 'o': o->op = optarg; break;
        case 't': o->timeout = (double)parse_ul(optarg, usage, prog, "timeout"); break;
        case 'D': o->dir = optarg; break;
        case 'i': o->id = (int)parse_ul(optarg, usage, prog, "id"); break;
        case 'c': o->clients = (int)parse_ul(optarg, usage, prog, "clients"); break;
        case 'R': o->reg_per_round = 1; break;
        case 'T': o->transfers = parse_ul(optarg, usage, prog, "transfers"); break;
        case 'q': o->depth = (unsigned)parse_ul(optarg, usage, prog, "depth"); break;
        case 'w': o->warmup = parse_ul(optarg, usage, prog, "warm-up"); break;
        case 'Y': o->idle_us = (long)parse_ul(optarg, usage, prog, "idle microseconds"); break;
        case 'E': o->empty_polls = parse_ul(optarg, usage, prog, "empty polls"); break;
        case 'v': o->verbose = 1; break;
        case 'h': usage_exit(usage, prog, NULL); break;
        default: usage_exit(usage, prog, NULL);
        }
    }
    if (optind != argc)
        usage_exit(usage, prog, "unexpected argument");
    if (!o->dir)
        o->dir = getenv("SOFT_MLX5_RENDEZVOUS");
    if (!o->dir)
        usage_exit(usage, prog, "no rendezvous directory (-D or $SOFT_MLX5_RENDEZVOUS)");
    if (o->id < 0 && (env = getenv("SOFT_MLX5_NODE_INDEX")))
        o->id = atoi(env);
    if (o->clients < 0 && (env = getenv("SOFT_MLX5_NODES")))
        o->clients = atoi(env) - 1;
    if (o->size == 0 || o->size > 0xffffffffUL)
        usage_exit(usage, prog, "size must be 1..4294967295 (the token's size field)");
    if (strcmp(o->op, "read") && strcmp(o->op, "write") && strcmp(o->op, "alt"))
        usage_exit(usage, prog, "op must be read, write or alt");
    if (o->depth == 0)
        usage_exit(usage, prog, "depth must be >= 1");
    if (o->warmup == (unsigned long)-1)
        o->warmup = 4UL * o->depth;
}

void s3ref_fill(uint8_t *buf, size_t len, uint32_t seed)
{
    unsigned v = seed % 251;
    for (size_t k = 0; k < len; k++) {
        buf[k] = (uint8_t)v;
        v += 7;
        if (v >= 251)
            v -= 251;
    }
}

size_t s3ref_check(const uint8_t *buf, size_t len, uint32_t seed)
{
    unsigned v = seed % 251;
    for (size_t k = 0; k < len; k++) {
        if (buf[k] != v)
            return k;
        v += 7;
        if (v >= 251)
            v -= 251;
    }
    return len;
}

int s3ref_publish(const char *dir, const char *name, const char *line)
{
    char tmp[4096], path[4096];
    FILE *f;
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%ld", dir, name, (long)getpid());
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "s3ref: cannot write %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    if (fprintf(f, "%s\n", line) < 0 || fclose(f) != 0) {
        fprintf(stderr, "s3ref: cannot write %s: %s\n", tmp, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "s3ref: cannot rename %s to %s: %s\n", tmp, path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int s3ref_try_read(const char *dir, const char *name, char *line, size_t cap)
{
    char path[4096];
    FILE *f;
    size_t n;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        fprintf(stderr, "s3ref: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!fgets(line, (int)cap, f)) {
        fprintf(stderr, "s3ref: %s is empty\n", path);
        fclose(f);
        return -1;
    }
    fclose(f);
    n = strlen(line);
    if (n == 0 || line[n - 1] != '\n') {
        fprintf(stderr, "s3ref: %s: line too long or unterminated\n", path);
        return -1;
    }
    line[n - 1] = 0;
    return 1;
}

int s3ref_wait_read(const char *dir, const char *name, char *line, size_t cap, double timeout)
{
    double deadline = s3ref_now() + timeout;
    for (;;) {
        int r = s3ref_try_read(dir, name, line, cap);
        if (r)
            return r > 0 ? 0 : -1;
        if (s3ref_now() > deadline) {
            fprintf(stderr, "s3ref: no %s/%s after %.0f s\n", dir, name, timeout);
            return -1;
        }
        s3ref_sleep_us(200);
    }
}

uint64_t s3ref_token_size(const char *t)
{
    static const int widths[7] = {16, 8, 8, 4, 6, 1, 32};
    uint64_t size = 0;
    const char *p = t;
    for (int f = 0; f < 7; f++) {
        for (int k = 0; k < widths[f]; k++, p++) {
            int hex = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f');
            if (!hex)
                return 0;
            if (f == 1)
                size = size * 16 + (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
        }
        if (f == 5 && p[-1] != '0' && p[-1] != '1')
            return 0;
        if (*p != (f == 6 ? '\0' : ':'))
            return 0;
        p++;
    }
    return size;
}

double s3ref_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void s3ref_sleep_us(unsigned us)
{
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

void *s3ref_alloc(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "s3ref: cannot allocate %zu bytes: %s\n", size, strerror(errno));
        exit(1);
    }
    return p;
}
