/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * mlx5dv shim: non-inline exports of rdma-core's static-inline functions.
 *
 * Every symbol carries the prefix m5dv_ (never ibv_ or mlx5dv_), so this shim can be linked
 * into one binary beside other RDMA crates. Each function does exactly what the inline
 * function of the same name (without the prefix) does in the headers it was compiled with.
 *
 * Compile-time feature macros (set by mlx5dv-raw's build.rs from the header text):
 *   M5DV_HAVE_WR_ATOMIC_WRITE   verbs.h has ibv_qp_ex.wr_atomic_write (rdma-core 44+)
 *   M5DV_HAVE_WR_FLUSH          verbs.h has ibv_qp_ex.wr_flush (rdma-core 45+)
 *   M5DV_HAVE_DC_ADDR_STREAM    mlx5dv.h has mlx5dv_qp_ex.wr_set_dc_addr_stream (rdma-core 37+)
 * m5dv_shim_features() reports which of them this build has.
 */
#ifndef M5DV_SHIM_H
#define M5DV_SHIM_H

#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
	M5DV_FEATURE_WR_ATOMIC_WRITE = 1 << 0,
	M5DV_FEATURE_WR_FLUSH = 1 << 1,
	M5DV_FEATURE_DC_ADDR_STREAM = 1 << 2,
};

unsigned int m5dv_shim_features(void);

/* ibv_qp_ex: the extended post API */
void m5dv_wr_atomic_cmp_swp(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
			    uint64_t compare, uint64_t swap);
void m5dv_wr_atomic_fetch_add(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
			      uint64_t add);
void m5dv_wr_bind_mw(struct ibv_qp_ex *qp, struct ibv_mw *mw, uint32_t rkey,
		     const struct ibv_mw_bind_info *bind_info);
void m5dv_wr_local_inv(struct ibv_qp_ex *qp, uint32_t invalidate_rkey);
void m5dv_wr_rdma_read(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr);
void m5dv_wr_rdma_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr);
void m5dv_wr_rdma_write_imm(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
			    __be32 imm_data);
void m5dv_wr_send(struct ibv_qp_ex *qp);
void m5dv_wr_send_imm(struct ibv_qp_ex *qp, __be32 imm_data);
void m5dv_wr_send_inv(struct ibv_qp_ex *qp, uint32_t invalidate_rkey);
void m5dv_wr_send_tso(struct ibv_qp_ex *qp, void *hdr, uint16_t hdr_sz, uint16_t mss);
void m5dv_wr_set_ud_addr(struct ibv_qp_ex *qp, struct ibv_ah *ah, uint32_t remote_qpn,
			 uint32_t remote_qkey);
void m5dv_wr_set_xrc_srqn(struct ibv_qp_ex *qp, uint32_t remote_srqn);
void m5dv_wr_set_inline_data(struct ibv_qp_ex *qp, void *addr, size_t length);
void m5dv_wr_set_inline_data_list(struct ibv_qp_ex *qp, size_t num_buf,
				  const struct ibv_data_buf *buf_list);
void m5dv_wr_set_sge(struct ibv_qp_ex *qp, uint32_t lkey, uint64_t addr, uint32_t length);
void m5dv_wr_set_sge_list(struct ibv_qp_ex *qp, size_t num_sge, const struct ibv_sge *sg_list);
void m5dv_wr_start(struct ibv_qp_ex *qp);
int m5dv_wr_complete(struct ibv_qp_ex *qp);
void m5dv_wr_abort(struct ibv_qp_ex *qp);
#ifdef M5DV_HAVE_WR_ATOMIC_WRITE
void m5dv_wr_atomic_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
			  const void *atomic_wr);
#endif
#ifdef M5DV_HAVE_WR_FLUSH
void m5dv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, size_t len,
		   uint8_t type, uint8_t level);
#endif

/* mlx5dv_qp_ex: DC addressing */
void m5dv_wr_set_dc_addr(struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah, uint32_t remote_dctn,
			 uint64_t remote_dc_key);
#ifdef M5DV_HAVE_DC_ADDR_STREAM
void m5dv_wr_set_dc_addr_stream(struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah,
				uint32_t remote_dctn, uint64_t remote_dc_key, uint16_t stream_id);
#endif

/* ibv_context ops: legacy post and poll */
int m5dv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int m5dv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int m5dv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
		       struct ibv_recv_wr **bad_recv_wr);
int m5dv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int m5dv_req_notify_cq(struct ibv_cq *cq, int solicited_only);

/* ibv_cq_ex: extended polling */
struct ibv_cq *m5dv_cq_ex_to_cq(struct ibv_cq_ex *cq);
int m5dv_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr);
int m5dv_next_poll(struct ibv_cq_ex *cq);
void m5dv_end_poll(struct ibv_cq_ex *cq);
enum ibv_wc_opcode m5dv_wc_read_opcode(struct ibv_cq_ex *cq);
uint32_t m5dv_wc_read_vendor_err(struct ibv_cq_ex *cq);
uint32_t m5dv_wc_read_byte_len(struct ibv_cq_ex *cq);
__be32 m5dv_wc_read_imm_data(struct ibv_cq_ex *cq);
uint32_t m5dv_wc_read_invalidated_rkey(struct ibv_cq_ex *cq);
uint32_t m5dv_wc_read_qp_num(struct ibv_cq_ex *cq);
uint32_t m5dv_wc_read_src_qp(struct ibv_cq_ex *cq);
unsigned int m5dv_wc_read_wc_flags(struct ibv_cq_ex *cq);
uint32_t m5dv_wc_read_slid(struct ibv_cq_ex *cq);
uint8_t m5dv_wc_read_sl(struct ibv_cq_ex *cq);
uint8_t m5dv_wc_read_dlid_path_bits(struct ibv_cq_ex *cq);
uint64_t m5dv_wc_read_completion_ts(struct ibv_cq_ex *cq);
uint64_t m5dv_wc_read_completion_wallclock_ns(struct ibv_cq_ex *cq);
uint16_t m5dv_wc_read_cvlan(struct ibv_cq_ex *cq);
uint32_t m5dv_wc_read_flow_tag(struct ibv_cq_ex *cq);
void m5dv_wc_read_tm_info(struct ibv_cq_ex *cq, struct ibv_wc_tm_info *tm_info);

/* struct verbs_context entries (negative offsets from ibv_context) */
struct ibv_cq_ex *m5dv_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *cq_attr);
int m5dv_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr);
struct ibv_qp *m5dv_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *qp_init_attr_ex);
struct ibv_srq *m5dv_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *srq_init_attr_ex);
struct ibv_td *m5dv_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *init_attr);
int m5dv_dealloc_td(struct ibv_td *td);
struct ibv_pd *m5dv_alloc_parent_domain(struct ibv_context *context,
					struct ibv_parent_domain_init_attr *attr);
/* The inline ibv_query_port (full struct), not the exported compat symbol (48 bytes). */
int m5dv_query_port(struct ibv_context *context, uint8_t port_num,
		    struct ibv_port_attr *port_attr);
/* sizeof(struct ibv_port_attr) in the headers the shim was compiled with. */
size_t m5dv_port_attr_size(void);

#ifdef __cplusplus
}
#endif

#endif /* M5DV_SHIM_H */
