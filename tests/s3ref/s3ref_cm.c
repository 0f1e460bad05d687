/*
 * Stand-ins for the five librdmacm calls NVIDIA's gpu_direct_rdma_access.c makes
 * (rdma_create_event_channel, rdma_create_id, rdma_bind_addr, rdma_destroy_id,
 * rdma_destroy_event_channel), linked in place of librdmacm.
 *
 * The sample finds its device through RDMA CM: it binds an rdma_cm_id to a local IP address
 * and takes the id's verbs context, port and address family. soft-mlx5 (and a host whose
 * RDMA devices have no IP address) has no RDMA CM, so these stand-ins open the device by name
 * instead (s3ref_cm_select; default: $MLX5DV_TEST_DEVICE, else the first device) and report
 * port 1 (or the selected port) and the family of the address passed to rdma_bind_addr. The
 * sample then picks its RoCE v2 GID for that family itself, as it does under RDMA CM.
 * The context opened here belongs to the id: rdma_destroy_id closes it, as librdmacm's does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include "s3ref_common.h"

static const char *cm_device;
static int cm_port = 1;

void s3ref_cm_select(const char *device, int port)
{
    cm_device = device;
    cm_port = port > 0 ? port : 1;
}

struct rdma_event_channel *rdma_create_event_channel(void)
{
    struct rdma_event_channel *channel = calloc(1, sizeof(*channel));
    if (channel)
        channel->fd = -1;
    return channel;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
    free(channel);
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
                   enum rdma_port_space ps)
{
    struct rdma_cm_id *cm_id = calloc(1, sizeof(*cm_id));
    if (!cm_id) {
        errno = ENOMEM;
        return -1;
    }
    cm_id->channel = channel;
    cm_id->context = context;
    cm_id->ps = ps;
    *id = cm_id;
    return 0;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
    const char *name = cm_device ? cm_device : getenv("MLX5DV_TEST_DEVICE");
    struct ibv_device **list;
    int i, n = 0;

    list = ibv_get_device_list(&n);
    if (!list) {
        fprintf(stderr, "s3ref: no RDMA devices (ibv_get_device_list: %s)\n", strerror(errno));
        return -1;
    }
    for (i = 0; i < n; i++)
        if (!name || !*name || !strcmp(ibv_get_device_name(list[i]), name))
            break;
    if (i == n) {
        fprintf(stderr, "s3ref: RDMA device %s not found\n", name ? name : "(any)");
        ibv_free_device_list(list);
        errno = ENODEV;
        return -1;
    }
    id->verbs = ibv_open_device(list[i]);
    ibv_free_device_list(list);
    if (!id->verbs) {
        fprintf(stderr, "s3ref: cannot open RDMA device %s: %s\n", name ? name : "(first)", strerror(errno));
        return -1;
    }
    id->port_num = (uint8_t)cm_port;
    id->route.addr.src_addr.sa_family = addr ? addr->sa_family : AF_INET;
    return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
    int ret = 0;
    if (id->verbs)
        ret = ibv_close_device(id->verbs);
    free(id);
    return ret;
}
