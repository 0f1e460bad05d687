/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * A recording function table: fake library objects (ibv_qp_ex, mlx5dv_qp_ex, ibv_cq_ex, and an
 * ibv_context inside a verbs_context) whose entries store every argument they receive, so a
 * test can prove that what Rust passed arrives bit-exact, and that return values come back.
 * Compiled against the same headers as the shim.
 */
#include <string.h>
#include "m5dv_shim.h"

struct m5dv_rec {
	unsigned long calls;   /* entries called since m5dv_rec_reset */
	const char *op;        /* name of the last entry called */
	const void *obj;       /* the object it was called on */
	uint64_t a[6];         /* scalar arguments, in order */
	const void *p[3];      /* pointer arguments, in order */
	uint64_t wr_id;        /* ibv_qp_ex.wr_id at the time of the call */
	unsigned int wr_flags; /* ibv_qp_ex.wr_flags at the time of the call */
};

static struct m5dv_rec last;
static int64_t ret_value;
static struct verbs_context vctx;
static struct ibv_qp_ex qpx;
static struct mlx5dv_qp_ex mqp;
static struct ibv_cq_ex cqx;
static struct ibv_srq srq;

static void rec(const char *op, const void *obj)
{
	memset(&last.a, 0, sizeof(last.a));
	memset(&last.p, 0, sizeof(last.p));
	last.calls++;
	last.op = op;
	last.obj = obj;
	last.wr_id = qpx.wr_id;
	last.wr_flags = qpx.wr_flags;
}

/* ibv_qp_ex */
static void r_atomic_cmp_swp(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra, uint64_t cmp, uint64_t swp)
{ rec("wr_atomic_cmp_swp", q); last.a[0] = rkey; last.a[1] = ra; last.a[2] = cmp; last.a[3] = swp; }
static void r_atomic_fetch_add(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra, uint64_t add)
{ rec("wr_atomic_fetch_add", q); last.a[0] = rkey; last.a[1] = ra; last.a[2] = add; }
static void r_bind_mw(struct ibv_qp_ex *q, struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *bi)
{ rec("wr_bind_mw", q); last.p[0] = mw; last.a[0] = rkey; last.p[1] = bi; }
static void r_local_inv(struct ibv_qp_ex *q, uint32_t rkey)
{ rec("wr_local_inv", q); last.a[0] = rkey; }
static void r_rdma_read(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra)
{ rec("wr_rdma_read", q); last.a[0] = rkey; last.a[1] = ra; }
static void r_rdma_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra)
{ rec("wr_rdma_write", q); last.a[0] = rkey; last.a[1] = ra; }
static void r_rdma_write_imm(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra, __be32 imm)
{ rec("wr_rdma_write_imm", q); last.a[0] = rkey; last.a[1] = ra; last.a[2] = (uint32_t)imm; }
static void r_send(struct ibv_qp_ex *q)
{ rec("wr_send", q); }
static void r_send_imm(struct ibv_qp_ex *q, __be32 imm)
{ rec("wr_send_imm", q); last.a[0] = (uint32_t)imm; }
static void r_send_inv(struct ibv_qp_ex *q, uint32_t rkey)
{ rec("wr_send_inv", q); last.a[0] = rkey; }
static void r_send_tso(struct ibv_qp_ex *q, void *hdr, uint16_t hdr_sz, uint16_t mss)
{ rec("wr_send_tso", q); last.p[0] = hdr; last.a[0] = hdr_sz; last.a[1] = mss; }
static void r_set_ud_addr(struct ibv_qp_ex *q, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{ rec("wr_set_ud_addr", q); last.p[0] = ah; last.a[0] = qpn; last.a[1] = qkey; }
static void r_set_xrc_srqn(struct ibv_qp_ex *q, uint32_t srqn)
{ rec("wr_set_xrc_srqn", q); last.a[0] = srqn; }
static void r_set_inline_data(struct ibv_qp_ex *q, void *addr, size_t len)
{ rec("wr_set_inline_data", q); last.p[0] = addr; last.a[0] = len; }
static void r_set_inline_data_list(struct ibv_qp_ex *q, size_t n, const struct ibv_data_buf *bufs)
{ rec("wr_set_inline_data_list", q); last.a[0] = n; last.p[0] = bufs; }
static void r_set_sge(struct ibv_qp_ex *q, uint32_t lkey, uint64_t addr, uint32_t len)
{ rec("wr_set_sge", q); last.a[0] = lkey; last.a[1] = addr; last.a[2] = len; }
static void r_set_sge_list(struct ibv_qp_ex *q, size_t n, const struct ibv_sge *sges)
{ rec("wr_set_sge_list", q); last.a[0] = n; last.p[0] = sges; }
static void r_start(struct ibv_qp_ex *q)
{ rec("wr_start", q); }
static int r_complete(struct ibv_qp_ex *q)
{ rec("wr_complete", q); return (int)ret_value; }
static void r_abort(struct ibv_qp_ex *q)
{ rec("wr_abort", q); }
#ifdef M5DV_HAVE_WR_ATOMIC_WRITE
static void r_atomic_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra, const void *wr)
{ rec("wr_atomic_write", q); last.a[0] = rkey; last.a[1] = ra; last.p[0] = wr; }
#endif
#ifdef M5DV_HAVE_WR_FLUSH
static void r_flush(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra, size_t len, uint8_t type, uint8_t level)
{ rec("wr_flush", q); last.a[0] = rkey; last.a[1] = ra; last.a[2] = len; last.a[3] = type; last.a[4] = level; }
#endif

/* mlx5dv_qp_ex */
static void r_set_dc_addr(struct mlx5dv_qp_ex *m, struct ibv_ah *ah, uint32_t dctn, uint64_t key)
{ rec("wr_set_dc_addr", m); last.p[0] = ah; last.a[0] = dctn; last.a[1] = key; }
#ifdef M5DV_HAVE_DC_ADDR_STREAM
static void r_set_dc_addr_stream(struct mlx5dv_qp_ex *m, struct ibv_ah *ah, uint32_t dctn, uint64_t key, uint16_t sid)
{ rec("wr_set_dc_addr_stream", m); last.p[0] = ah; last.a[0] = dctn; last.a[1] = key; last.a[2] = sid; }
#endif

/* ibv_context ops */
static int r_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{ rec("poll_cq", cq); last.a[0] = (uint32_t)n; last.p[0] = wc; return (int)ret_value; }
static int r_req_notify_cq(struct ibv_cq *cq, int solicited)
{ rec("req_notify_cq", cq); last.a[0] = (uint32_t)solicited; return (int)ret_value; }
static int r_post_srq_recv(struct ibv_srq *s, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{ rec("post_srq_recv", s); last.p[0] = wr; last.p[1] = bad; return (int)ret_value; }
static int r_post_send(struct ibv_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{ rec("post_send", q); last.p[0] = wr; last.p[1] = bad; return (int)ret_value; }
static int r_post_recv(struct ibv_qp *q, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{ rec("post_recv", q); last.p[0] = wr; last.p[1] = bad; return (int)ret_value; }

/* ibv_cq_ex */
static int r_start_poll(struct ibv_cq_ex *c, struct ibv_poll_cq_attr *attr)
{ rec("start_poll", c); last.p[0] = attr; return (int)ret_value; }
static int r_next_poll(struct ibv_cq_ex *c)
{ rec("next_poll", c); return (int)ret_value; }
static void r_end_poll(struct ibv_cq_ex *c)
{ rec("end_poll", c); }
static enum ibv_wc_opcode r_read_opcode(struct ibv_cq_ex *c)
{ rec("read_opcode", c); return (enum ibv_wc_opcode)ret_value; }
#define READER(NAME, TYPE) static TYPE r_##NAME(struct ibv_cq_ex *c) { rec(#NAME, c); return (TYPE)ret_value; }
READER(read_vendor_err, uint32_t)
READER(read_byte_len, uint32_t)
READER(read_imm_data, __be32)
READER(read_qp_num, uint32_t)
READER(read_src_qp, uint32_t)
READER(read_wc_flags, unsigned int)
READER(read_slid, uint32_t)
READER(read_sl, uint8_t)
READER(read_dlid_path_bits, uint8_t)
READER(read_completion_ts, uint64_t)
READER(read_cvlan, uint16_t)
READER(read_flow_tag, uint32_t)
READER(read_completion_wallclock_ns, uint64_t)
static void r_read_tm_info(struct ibv_cq_ex *c, struct ibv_wc_tm_info *info)
{ rec("read_tm_info", c); last.p[0] = info; info->tag = (uint64_t)ret_value; info->priv = (uint32_t)~(uint64_t)ret_value; }

/* struct verbs_context */
static struct ibv_cq_ex *r_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{ rec("create_cq_ex", ctx); last.p[0] = attr; return (struct ibv_cq_ex *)(uintptr_t)ret_value; }
static int r_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			     struct ibv_device_attr_ex *attr, size_t size)
{ rec("query_device_ex", ctx); last.p[0] = in; last.p[1] = attr; last.a[0] = size; return (int)ret_value; }
static struct ibv_qp *r_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{ rec("create_qp_ex", ctx); last.p[0] = attr; return (struct ibv_qp *)(uintptr_t)ret_value; }
static struct ibv_srq *r_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr)
{ rec("create_srq_ex", ctx); last.p[0] = attr; return (struct ibv_srq *)(uintptr_t)ret_value; }
static struct ibv_td *r_alloc_td(struct ibv_context *ctx, struct ibv_td_init_attr *attr)
{ rec("alloc_td", ctx); last.p[0] = attr; return (struct ibv_td *)(uintptr_t)ret_value; }
static int r_dealloc_td(struct ibv_td *td)
{ rec("dealloc_td", td); return (int)ret_value; }
static struct ibv_pd *r_alloc_parent_domain(struct ibv_context *ctx, struct ibv_parent_domain_init_attr *attr)
{ rec("alloc_parent_domain", ctx); last.p[0] = attr; return (struct ibv_pd *)(uintptr_t)ret_value; }
static int r_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr, size_t size)
{ rec("query_port", ctx); last.a[0] = port; last.p[0] = attr; last.a[1] = size; return (int)ret_value; }

void m5dv_rec_init(void)
{
	memset(&vctx, 0, sizeof(vctx));
	vctx.sz = sizeof(vctx);
	vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	vctx.context.ops.poll_cq = r_poll_cq;
	vctx.context.ops.req_notify_cq = r_req_notify_cq;
	vctx.context.ops.post_srq_recv = r_post_srq_recv;
	vctx.context.ops.post_send = r_post_send;
	vctx.context.ops.post_recv = r_post_recv;
	vctx.create_cq_ex = r_create_cq_ex;
	vctx.query_device_ex = r_query_device_ex;
	vctx.create_qp_ex = r_create_qp_ex;
	vctx.create_srq_ex = r_create_srq_ex;
	vctx.query_port = r_query_port;
	vctx.alloc_td = r_alloc_td;
	vctx.dealloc_td = r_dealloc_td;
	vctx.alloc_parent_domain = r_alloc_parent_domain;

	memset(&qpx, 0, sizeof(qpx));
	qpx.qp_base.context = &vctx.context;
	qpx.wr_atomic_cmp_swp = r_atomic_cmp_swp;
	qpx.wr_atomic_fetch_add = r_atomic_fetch_add;
	qpx.wr_bind_mw = r_bind_mw;
	qpx.wr_local_inv = r_local_inv;
	qpx.wr_rdma_read = r_rdma_read;
	qpx.wr_rdma_write = r_rdma_write;
	qpx.wr_rdma_write_imm = r_rdma_write_imm;
	qpx.wr_send = r_send;
	qpx.wr_send_imm = r_send_imm;
	qpx.wr_send_inv = r_send_inv;
	qpx.wr_send_tso = r_send_tso;
	qpx.wr_set_ud_addr = r_set_ud_addr;
	qpx.wr_set_xrc_srqn = r_set_xrc_srqn;
	qpx.wr_set_inline_data = r_set_inline_data;
	qpx.wr_set_inline_data_list = r_set_inline_data_list;
	qpx.wr_set_sge = r_set_sge;
	qpx.wr_set_sge_list = r_set_sge_list;
	qpx.wr_start = r_start;
	qpx.wr_complete = r_complete;
	qpx.wr_abort = r_abort;
#ifdef M5DV_HAVE_WR_ATOMIC_WRITE
	qpx.wr_atomic_write = r_atomic_write;
#endif
#ifdef M5DV_HAVE_WR_FLUSH
	qpx.wr_flush = r_flush;
#endif

	memset(&mqp, 0, sizeof(mqp));
	mqp.wr_set_dc_addr = r_set_dc_addr;
#ifdef M5DV_HAVE_DC_ADDR_STREAM
	mqp.wr_set_dc_addr_stream = r_set_dc_addr_stream;
#endif

	memset(&cqx, 0, sizeof(cqx));
	cqx.context = &vctx.context;
	cqx.start_poll = r_start_poll;
	cqx.next_poll = r_next_poll;
	cqx.end_poll = r_end_poll;
	cqx.read_opcode = r_read_opcode;
	cqx.read_vendor_err = r_read_vendor_err;
	cqx.read_byte_len = r_read_byte_len;
	cqx.read_imm_data = r_read_imm_data;
	cqx.read_qp_num = r_read_qp_num;
	cqx.read_src_qp = r_read_src_qp;
	cqx.read_wc_flags = r_read_wc_flags;
	cqx.read_slid = r_read_slid;
	cqx.read_sl = r_read_sl;
	cqx.read_dlid_path_bits = r_read_dlid_path_bits;
	cqx.read_completion_ts = r_read_completion_ts;
	cqx.read_cvlan = r_read_cvlan;
	cqx.read_flow_tag = r_read_flow_tag;
	cqx.read_tm_info = r_read_tm_info;
	cqx.read_completion_wallclock_ns = r_read_completion_wallclock_ns;

	memset(&srq, 0, sizeof(srq));
	srq.context = &vctx.context;
	memset(&last, 0, sizeof(last));
	ret_value = 0;
}

void m5dv_rec_reset(void) { memset(&last, 0, sizeof(last)); }
void m5dv_rec_last(struct m5dv_rec *out) { *out = last; }
void m5dv_rec_set_return(int64_t value) { ret_value = value; }
struct ibv_qp_ex *m5dv_rec_qp_ex(void) { return &qpx; }
struct mlx5dv_qp_ex *m5dv_rec_mqp(void) { return &mqp; }
struct ibv_cq_ex *m5dv_rec_cq_ex(void) { return &cqx; }
struct ibv_context *m5dv_rec_context(void) { return &vctx.context; }
struct ibv_srq *m5dv_rec_srq(void) { return &srq; }
