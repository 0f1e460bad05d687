/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Each function forwards to the static-inline function of the same name in rdma-core's
 * headers, so its behaviour is the header's own (function-table call, verbs_context lookup,
 * legacy fallback), with a real symbol that Rust can link to.
 */
#include "m5dv_shim.h"

unsigned int m5dv_shim_features(void)
{
	unsigned int features = 0;
#ifdef M5DV_HAVE_WR_ATOMIC_WRITE
	features |= M5DV_FEATURE_WR_ATOMIC_WRITE;
#endif
#ifdef M5DV_HAVE_WR_FLUSH
	features |= M5DV_FEATURE_WR_FLUSH;
#endif
#ifdef M5DV_HAVE_DC_ADDR_STREAM
	features |= M5DV_FEATURE_DC_ADDR_STREAM;
#endif
	return features;
}

/* ibv_qp_ex */

void m5dv_wr_atomic_cmp_swp(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
			    uint64_t compare, uint64_t swap)
{
	ibv_wr_atomic_cmp_swp(qp, rkey, remote_addr, compare, swap);
}

void m5dv_wr_atomic_fetch_add(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
			      uint64_t add)
{
	ibv_wr_atomic_fetch_add(qp, rkey, remote_addr, add);
}

void m5dv_wr_bind_mw(struct ibv_qp_ex *qp, struct ibv_mw *mw, uint32_t rkey,
		     const struct ibv_mw_bind_info *bind_info)
{
	ibv_wr_bind_mw(qp, mw, rkey, bind_info);
}

void m5dv_wr_local_inv(struct ibv_qp_ex *qp, uint32_t invalidate_rkey)
{
	ibv_wr_local_inv(qp, invalidate_rkey);
}

void m5dv_wr_rdma_read(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr)
{
	ibv_wr_rdma_read(qp, rkey, remote_addr);
}

void m5dv_wr_rdma_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr)
{
	ibv_wr_rdma_write(qp, rkey, remote_addr);
}

void m5dv_wr_rdma_write_imm(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
			    __be32 imm_data)
{
	ibv_wr_rdma_write_imm(qp, rkey, remote_addr, imm_data);
}

void m5dv_wr_send(struct ibv_qp_ex *qp)
{
	ibv_wr_send(qp);
}

void m5dv_wr_send_imm(struct ibv_qp_ex *qp, __be32 imm_data)
{
	ibv_wr_send_imm(qp, imm_data);
}

void m5dv_wr_send_inv(struct ibv_qp_ex *qp, uint32_t invalidate_rkey)
{
	ibv_wr_send_inv(qp, invalidate_rkey);
}

void m5dv_wr_send_tso(struct ibv_qp_ex *qp, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	ibv_wr_send_tso(qp, hdr, hdr_sz, mss);
}

void m5dv_wr_set_ud_addr(struct ibv_qp_ex *qp, struct ibv_ah *ah, uint32_t remote_qpn,
			 uint32_t remote_qkey)
{
	ibv_wr_set_ud_addr(qp, ah, remote_qpn, remote_qkey);
}

void m5dv_wr_set_xrc_srqn(struct ibv_qp_ex *qp, uint32_t remote_srqn)
{
	ibv_wr_set_xrc_srqn(qp, remote_srqn);
}

void m5dv_wr_set_inline_data(struct ibv_qp_ex *qp, void *addr, size_t length)
{
	ibv_wr_set_inline_data(qp, addr, length);
}

void m5dv_wr_set_inline_data_list(struct ibv_qp_ex *qp, size_t num_buf,
				  const struct ibv_data_buf *buf_list)
{
	ibv_wr_set_inline_data_list(qp, num_buf, buf_list);
}

void m5dv_wr_set_sge(struct ibv_qp_ex *qp, uint32_t lkey, uint64_t addr, uint32_t length)
{
	ibv_wr_set_sge(qp, lkey, addr, length);
}

void m5dv_wr_set_sge_list(struct ibv_qp_ex *qp, size_t num_sge, const struct ibv_sge *sg_list)
{
	ibv_wr_set_sge_list(qp, num_sge, sg_list);
}

void m5dv_wr_start(struct ibv_qp_ex *qp)
{
	ibv_wr_start(qp);
}

int m5dv_wr_complete(struct ibv_qp_ex *qp)
{
	return ibv_wr_complete(qp);
}

void m5dv_wr_abort(struct ibv_qp_ex *qp)
{
	ibv_wr_abort(qp);
}

#ifdef M5DV_HAVE_WR_ATOMIC_WRITE
void m5dv_wr_atomic_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
			  const void *atomic_wr)
{
	ibv_wr_atomic_write(qp, rkey, remote_addr, atomic_wr);
}
#endif

#ifdef M5DV_HAVE_WR_FLUSH
void m5dv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, size_t len,
		   uint8_t type, uint8_t level)
{
	ibv_wr_flush(qp, rkey, remote_addr, len, type, level);
}
#endif

/* mlx5dv_qp_ex */

void m5dv_wr_set_dc_addr(struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah, uint32_t remote_dctn,
			 uint64_t remote_dc_key)
{
	mlx5dv_wr_set_dc_addr(mqp, ah, remote_dctn, remote_dc_key);
}

#ifdef M5DV_HAVE_DC_ADDR_STREAM
void m5dv_wr_set_dc_addr_stream(struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah,
				uint32_t remote_dctn, uint64_t remote_dc_key, uint16_t stream_id)
{
	mlx5dv_wr_set_dc_addr_stream(mqp, ah, remote_dctn, remote_dc_key, stream_id);
}
#endif

/* ibv_context ops */

int m5dv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return ibv_post_send(qp, wr, bad_wr);
}

int m5dv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	return ibv_post_recv(qp, wr, bad_wr);
}

int m5dv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
		       struct ibv_recv_wr **bad_recv_wr)
{
	return ibv_post_srq_recv(srq, recv_wr, bad_recv_wr);
}

int m5dv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq, num_entries, wc);
}

int m5dv_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return ibv_req_notify_cq(cq, solicited_only);
}

/* ibv_cq_ex */

struct ibv_cq *m5dv_cq_ex_to_cq(struct ibv_cq_ex *cq)
{
	return ibv_cq_ex_to_cq(cq);
}

int m5dv_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	return ibv_start_poll(cq, attr);
}

int m5dv_next_poll(struct ibv_cq_ex *cq)
{
	return ibv_next_poll(cq);
}

void m5dv_end_poll(struct ibv_cq_ex *cq)
{
	ibv_end_poll(cq);
}

enum ibv_wc_opcode m5dv_wc_read_opcode(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_opcode(cq);
}

uint32_t m5dv_wc_read_vendor_err(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_vendor_err(cq);
}

uint32_t m5dv_wc_read_byte_len(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_byte_len(cq);
}

__be32 m5dv_wc_read_imm_data(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_imm_data(cq);
}

uint32_t m5dv_wc_read_invalidated_rkey(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_invalidated_rkey(cq);
}

uint32_t m5dv_wc_read_qp_num(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_qp_num(cq);
}

uint32_t m5dv_wc_read_src_qp(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_src_qp(cq);
}

unsigned int m5dv_wc_read_wc_flags(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_wc_flags(cq);
}

uint32_t m5dv_wc_read_slid(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_slid(cq);
}

uint8_t m5dv_wc_read_sl(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_sl(cq);
}

uint8_t m5dv_wc_read_dlid_path_bits(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_dlid_path_bits(cq);
}

uint64_t m5dv_wc_read_completion_ts(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_completion_ts(cq);
}

uint64_t m5dv_wc_read_completion_wallclock_ns(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_completion_wallclock_ns(cq);
}

uint16_t m5dv_wc_read_cvlan(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_cvlan(cq);
}

uint32_t m5dv_wc_read_flow_tag(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_flow_tag(cq);
}

void m5dv_wc_read_tm_info(struct ibv_cq_ex *cq, struct ibv_wc_tm_info *tm_info)
{
	ibv_wc_read_tm_info(cq, tm_info);
}

/* struct verbs_context entries */

struct ibv_cq_ex *m5dv_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *cq_attr)
{
	return ibv_create_cq_ex(context, cq_attr);
}

int m5dv_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr)
{
	return ibv_query_device_ex(context, input, attr);
}

struct ibv_qp *m5dv_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *qp_init_attr_ex)
{
	return ibv_create_qp_ex(context, qp_init_attr_ex);
}

struct ibv_srq *m5dv_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *srq_init_attr_ex)
{
	return ibv_create_srq_ex(context, srq_init_attr_ex);
}

struct ibv_td *m5dv_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *init_attr)
{
	return ibv_alloc_td(context, init_attr);
}

int m5dv_dealloc_td(struct ibv_td *td)
{
	return ibv_dealloc_td(td);
}

struct ibv_pd *m5dv_alloc_parent_domain(struct ibv_context *context,
					struct ibv_parent_domain_init_attr *attr)
{
	return ibv_alloc_parent_domain(context, attr);
}

int m5dv_query_port(struct ibv_context *context, uint8_t port_num,
		    struct ibv_port_attr *port_attr)
{
	/* verbs.h defines ibv_query_port as a macro over the inline ___ibv_query_port. */
	return ibv_query_port(context, port_num, port_attr);
}

size_t m5dv_port_attr_size(void)
{
	return sizeof(struct ibv_port_attr);
}
