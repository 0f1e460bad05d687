/*
 * One DC node on plain libibverbs + libmlx5: a DC target (DCT) over a registered buffer and a
 * DC initiator (DCI) that RDMA-writes into any node's DCT. What a crate built on libmlx5 does,
 * written the way rdma-core's man pages describe it (mlx5dv_create_qp(3), ibv_wr_post(3)).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

struct dcw_target {
	uint32_t dctn;
	uint16_t lid;
	uint8_t gid[16];
	uint32_t rkey;
	uint64_t addr;
	uint64_t len;
};

struct dcw_node {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	struct ibv_qp *dct;
	struct ibv_qp *dci;
	struct ibv_qp_ex *qpx;
	struct mlx5dv_qp_ex *mqpx;
	uint8_t *buf;
	size_t len;
	int gid_index;
	int roce;
	struct ibv_port_attr port;
	union ibv_gid gid;
};

static int fail(char *err, size_t n, const char *what, int e)
{
	if (e == 0)
		e = EIO;
	snprintf(err, n, "%s: %s (errno %d)", what, strerror(e), e);
	return -e;
}

void dcw_close(struct dcw_node *n)
{
	if (!n)
		return;
	if (n->dci)
		ibv_destroy_qp(n->dci);
	if (n->dct)
		ibv_destroy_qp(n->dct);
	if (n->srq)
		ibv_destroy_srq(n->srq);
	if (n->mr)
		ibv_dereg_mr(n->mr);
	if (n->cq)
		ibv_destroy_cq(n->cq);
	if (n->pd)
		ibv_dealloc_pd(n->pd);
	if (n->ctx)
		ibv_close_device(n->ctx);
	free(n->buf);
	free(n);
}

static void set_av(struct dcw_node *n, struct ibv_ah_attr *ah)
{
	ah->port_num = 1;
	if (n->roce) {
		ah->is_global = 1;
		ah->grh.sgid_index = n->gid_index;
		ah->grh.hop_limit = 64;
	}
}

/* Opens device `dev`, creates a DCT with access key `dc_key` over `len` zeroed bytes, and a DCI. */
struct dcw_node *dcw_open(const char *dev, int gid_index, size_t len, uint64_t dc_key, char *err, size_t errlen)
{
	struct dcw_node *n = calloc(1, sizeof(*n));
	struct ibv_device **list;
	int num = 0, i, rc;

	if (!n) {
		fail(err, errlen, "calloc", ENOMEM);
		return NULL;
	}
	n->gid_index = gid_index;
	n->len = len;
	list = ibv_get_device_list(&num);
	if (!list) {
		fail(err, errlen, "ibv_get_device_list", errno);
		goto out;
	}
	for (i = 0; i < num; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			n->ctx = ibv_open_device(list[i]);
	rc = errno;
	ibv_free_device_list(list);
	if (!n->ctx) {
		snprintf(err, errlen, "no RDMA device %s could be opened (%d devices; errno %d)", dev, num, rc);
		goto out;
	}
	if ((rc = ibv_query_port(n->ctx, 1, &n->port))) {
		fail(err, errlen, "ibv_query_port", rc);
		goto out;
	}
	n->roce = n->port.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (n->roce && ibv_query_gid(n->ctx, 1, gid_index, &n->gid)) {
		fail(err, errlen, "ibv_query_gid", errno);
		goto out;
	}
	if (!(n->pd = ibv_alloc_pd(n->ctx))) {
		fail(err, errlen, "ibv_alloc_pd", errno);
		goto out;
	}
	if (!(n->cq = ibv_create_cq(n->ctx, 64, NULL, NULL, 0))) {
		fail(err, errlen, "ibv_create_cq", errno);
		goto out;
	}
	if (posix_memalign((void **)&n->buf, 4096, len)) {
		fail(err, errlen, "posix_memalign", ENOMEM);
		goto out;
	}
	memset(n->buf, 0, len);
	n->mr = ibv_reg_mr(n->pd, n->buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!n->mr) {
		fail(err, errlen, "ibv_reg_mr", errno);
		goto out;
	}
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	if (!(n->srq = ibv_create_srq(n->pd, &sa))) {
		fail(err, errlen, "ibv_create_srq", errno);
		goto out;
	}

	/* The DCT: any DCI that knows its number and key reaches the buffer. */
	struct ibv_qp_init_attr_ex a = {0};
	struct mlx5dv_qp_init_attr dv = {0};
	a.qp_type = IBV_QPT_DRIVER;
	a.send_cq = n->cq;
	a.recv_cq = n->cq;
	a.srq = n->srq;
	a.pd = n->pd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	dv.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCT;
	dv.dc_init_attr.dct_access_key = dc_key;
	if (!(n->dct = mlx5dv_create_qp(n->ctx, &a, &dv))) {
		fail(err, errlen, "mlx5dv_create_qp (DCT)", errno);
		goto out;
	}
	struct ibv_qp_attr m = {0};
	m.qp_state = IBV_QPS_INIT;
	m.port_num = 1;
	m.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if ((rc = ibv_modify_qp(n->dct, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))) {
		fail(err, errlen, "ibv_modify_qp (DCT to INIT)", rc);
		goto out;
	}
	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_RTR;
	m.path_mtu = IBV_MTU_1024;
	m.min_rnr_timer = 12;
	set_av(n, &m.ah_attr);
	if ((rc = ibv_modify_qp(n->dct, &m, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER))) {
		fail(err, errlen, "ibv_modify_qp (DCT to RTR)", rc);
		goto out;
	}

	/* The DCI: names its target (AH, DCT number, key) on each work request. */
	memset(&a, 0, sizeof(a));
	memset(&dv, 0, sizeof(dv));
	a.qp_type = IBV_QPT_DRIVER;
	a.send_cq = n->cq;
	a.recv_cq = n->cq;
	a.pd = n->pd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
	a.cap.max_send_wr = 16;
	a.cap.max_send_sge = 1;
	dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	dv.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
	if (!(n->dci = mlx5dv_create_qp(n->ctx, &a, &dv))) {
		fail(err, errlen, "mlx5dv_create_qp (DCI)", errno);
		goto out;
	}
	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_INIT;
	m.port_num = 1;
	if ((rc = ibv_modify_qp(n->dci, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT))) {
		fail(err, errlen, "ibv_modify_qp (DCI to INIT)", rc);
		goto out;
	}
	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_RTR;
	m.path_mtu = IBV_MTU_1024;
	set_av(n, &m.ah_attr);
	if ((rc = ibv_modify_qp(n->dci, &m, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU))) {
		fail(err, errlen, "ibv_modify_qp (DCI to RTR)", rc);
		goto out;
	}
	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_RTS;
	m.timeout = 14;
	m.retry_cnt = 7;
	m.rnr_retry = 7;
	m.max_rd_atomic = 1;
	if ((rc = ibv_modify_qp(n->dci, &m, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))) {
		fail(err, errlen, "ibv_modify_qp (DCI to RTS)", rc);
		goto out;
	}
	n->qpx = ibv_qp_to_qp_ex(n->dci);
	n->mqpx = mlx5dv_qp_ex_from_ibv_qp_ex(n->qpx);
	return n;
out:
	dcw_close(n);
	return NULL;
}

/* What another node needs to write into this node's buffer. */
void dcw_target(const struct dcw_node *n, struct dcw_target *t)
{
	memset(t, 0, sizeof(*t));
	t->dctn = n->dct->qp_num;
	t->lid = n->port.lid;
	memcpy(t->gid, n->gid.raw, 16);
	t->rkey = n->mr->rkey;
	t->addr = (uintptr_t)n->buf;
	t->len = n->len;
}

uint8_t *dcw_buf(struct dcw_node *n)
{
	return n->buf;
}

/*
 * RDMA-writes `len` bytes at `loff` of this node's buffer to `roff` of the target's, naming
 * the DCT with key `dc_key`, and waits for the completion (30 s at most). Returns 0, the
 * completion's status (enum ibv_wc_status, > 0) or a negative errno.
 */
int dcw_write(struct dcw_node *n, const struct dcw_target *t, uint64_t dc_key, size_t loff, uint64_t roff,
	      size_t len, char *err, size_t errlen)
{
	struct ibv_ah_attr aa = {0};
	struct ibv_ah *ah;
	struct ibv_wc wc;
	struct timespec start, now;
	int rc;

	if (loff > n->len || len > n->len - loff)
		return fail(err, errlen, "dcw_write: source range outside the local buffer", EINVAL);
	set_av(n, &aa);
	aa.dlid = t->lid;
	if (n->roce)
		memcpy(aa.grh.dgid.raw, t->gid, 16);
	if (!(ah = ibv_create_ah(n->pd, &aa)))
		return fail(err, errlen, "ibv_create_ah", errno);
	ibv_wr_start(n->qpx);
	n->qpx->wr_id = 1;
	n->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(n->qpx, t->rkey, t->addr + roff);
	mlx5dv_wr_set_dc_addr(n->mqpx, ah, t->dctn, dc_key);
	ibv_wr_set_sge(n->qpx, n->mr->lkey, (uintptr_t)n->buf + loff, len);
	if ((rc = ibv_wr_complete(n->qpx))) {
		ibv_destroy_ah(ah);
		return fail(err, errlen, "ibv_wr_complete", rc);
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		rc = ibv_poll_cq(n->cq, 1, &wc);
		if (rc < 0) {
			ibv_destroy_ah(ah);
			return fail(err, errlen, "ibv_poll_cq", EIO);
		}
		if (rc == 1)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 30) {
			ibv_destroy_ah(ah);
			return fail(err, errlen, "no completion within 30 s", ETIMEDOUT);
		}
	}
	ibv_destroy_ah(ah);
	if (wc.status != IBV_WC_SUCCESS) {
		snprintf(err, errlen, "RDMA write completed with %s (status %d, vendor syndrome 0x%x)",
			 ibv_wc_status_str(wc.status), wc.status, wc.vendor_err);
		return wc.status;
	}
	return 0;
}
