/* A copy of the command fd is the device too: dup(), dup3() and fcntl(F_DUPFD_CLOEXEC) (built
 * with 64-bit file offsets, so the call is glibc's fcntl64, as Python's os.dup makes it) each
 * give an fd that fstat shows as the uverbs character device, which ibv_import_device checks
 * first. (The import itself then needs a context without static bfregs, which soft-mlx5 does
 * not give: libmlx5 refuses it with EINVAL; printed, not checked.) */
#define _FILE_OFFSET_BITS 64
#define _GNU_SOURCE
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include "common.h"

static int try_import(const char *how, int fd)
{
    if (fd < 0) {
        printf("%s: %s\n", how, strerror(errno));
        return 1;
    }
    struct stat dev, st;
    CHECK(stat("/dev/infiniband/uverbs0", &dev) == 0);
    CHECK(fstat(fd, &st) == 0);
    int same = S_ISCHR(st.st_mode) && st.st_rdev == dev.st_rdev;
    printf("%s: fd %d fstat %s\n", how, fd, same ? "is the device" : "is not the device");
    struct ibv_context *c = ibv_import_device(fd);
    printf("%s: import %s (errno %d)\n", how, c ? "ok" : "failed", c ? 0 : errno);
    if (c)
        ibv_close_device(c);
    return !same;
}

int main(void)
{
    struct ibv_context *ctx = open_first();
    int fails = 0;
    fails += try_import("dup", dup(ctx->cmd_fd));
    fails += try_import("dup3", dup3(ctx->cmd_fd, 100, O_CLOEXEC));
    fails += try_import("fcntl64(F_DUPFD_CLOEXEC)", fcntl(ctx->cmd_fd, F_DUPFD_CLOEXEC, 0));
    struct ibv_device_attr a;
    fails += ibv_query_device(ctx, &a) != 0;
    if (fails) {
        printf("FAIL %d\n", fails);
        return 1;
    }
    printf("ok\n");
    return 0;
}
