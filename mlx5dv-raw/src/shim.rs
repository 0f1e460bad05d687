//! The C shim's exports: non-inline versions of rdma-core's static-inline functions.
//!
//! Every symbol is prefixed `m5dv_` so that this crate links beside other RDMA crates. Each
//! forwards to the header's inline function of the same name without the prefix, compiled
//! against the headers `build.rs` found. Entries that only exist in newer headers are
//! declared only when those headers were found (`cfg(m5dv_wr_atomic_write)`,
//! `cfg(m5dv_wr_flush)`, `cfg(m5dv_dc_addr_stream)`); [`m5dv_shim_features`] says the same at
//! run time.

use crate::mlx5dv::mlx5dv_qp_ex;
use crate::verbs::*;
use libc::{c_int, c_uint, c_void, size_t};

/// [`m5dv_shim_features`] bit: `m5dv_wr_atomic_write` is compiled in.
pub const M5DV_FEATURE_WR_ATOMIC_WRITE: c_uint = 1;
/// [`m5dv_shim_features`] bit: `m5dv_wr_flush` is compiled in.
pub const M5DV_FEATURE_WR_FLUSH: c_uint = 1 << 1;
/// [`m5dv_shim_features`] bit: `m5dv_wr_set_dc_addr_stream` is compiled in.
pub const M5DV_FEATURE_DC_ADDR_STREAM: c_uint = 1 << 2;

extern "C" {
    /// Which optional entries this build of the shim has (`M5DV_FEATURE_*`).
    pub fn m5dv_shim_features() -> c_uint;

    /// `ibv_wr_atomic_cmp_swp`.
    pub fn m5dv_wr_atomic_cmp_swp(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64, compare: u64, swap: u64);
    /// `ibv_wr_atomic_fetch_add`.
    pub fn m5dv_wr_atomic_fetch_add(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64, add: u64);
    /// `ibv_wr_bind_mw`.
    pub fn m5dv_wr_bind_mw(qp: *mut ibv_qp_ex, mw: *mut ibv_mw, rkey: u32, bind_info: *const ibv_mw_bind_info);
    /// `ibv_wr_local_inv`.
    pub fn m5dv_wr_local_inv(qp: *mut ibv_qp_ex, invalidate_rkey: u32);
    /// `ibv_wr_rdma_read`.
    pub fn m5dv_wr_rdma_read(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64);
    /// `ibv_wr_rdma_write`.
    pub fn m5dv_wr_rdma_write(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64);
    /// `ibv_wr_rdma_write_imm` (`imm_data` in network byte order).
    pub fn m5dv_wr_rdma_write_imm(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64, imm_data: u32);
    /// `ibv_wr_send`.
    pub fn m5dv_wr_send(qp: *mut ibv_qp_ex);
    /// `ibv_wr_send_imm` (`imm_data` in network byte order).
    pub fn m5dv_wr_send_imm(qp: *mut ibv_qp_ex, imm_data: u32);
    /// `ibv_wr_send_inv`.
    pub fn m5dv_wr_send_inv(qp: *mut ibv_qp_ex, invalidate_rkey: u32);
    /// `ibv_wr_send_tso`.
    pub fn m5dv_wr_send_tso(qp: *mut ibv_qp_ex, hdr: *mut c_void, hdr_sz: u16, mss: u16);
    /// `ibv_wr_set_ud_addr`.
    pub fn m5dv_wr_set_ud_addr(qp: *mut ibv_qp_ex, ah: *mut ibv_ah, remote_qpn: u32, remote_qkey: u32);
    /// `ibv_wr_set_xrc_srqn`.
    pub fn m5dv_wr_set_xrc_srqn(qp: *mut ibv_qp_ex, remote_srqn: u32);
    /// `ibv_wr_set_inline_data`.
    pub fn m5dv_wr_set_inline_data(qp: *mut ibv_qp_ex, addr: *mut c_void, length: size_t);
    /// `ibv_wr_set_inline_data_list`.
    pub fn m5dv_wr_set_inline_data_list(qp: *mut ibv_qp_ex, num_buf: size_t, buf_list: *const ibv_data_buf);
    /// `ibv_wr_set_sge`.
    pub fn m5dv_wr_set_sge(qp: *mut ibv_qp_ex, lkey: u32, addr: u64, length: u32);
    /// `ibv_wr_set_sge_list`.
    pub fn m5dv_wr_set_sge_list(qp: *mut ibv_qp_ex, num_sge: size_t, sg_list: *const ibv_sge);
    /// `ibv_wr_start`.
    pub fn m5dv_wr_start(qp: *mut ibv_qp_ex);
    /// `ibv_wr_complete`.
    pub fn m5dv_wr_complete(qp: *mut ibv_qp_ex) -> c_int;
    /// `ibv_wr_abort`.
    pub fn m5dv_wr_abort(qp: *mut ibv_qp_ex);
    /// `ibv_wr_atomic_write` (headers of rdma-core 44+; the runtime must have it too).
    #[cfg(m5dv_wr_atomic_write)]
    pub fn m5dv_wr_atomic_write(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64, atomic_wr: *const c_void);
    /// `ibv_wr_flush` (headers of rdma-core 45+; the runtime must have it too).
    #[cfg(m5dv_wr_flush)]
    pub fn m5dv_wr_flush(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64, len: size_t, type_: u8, level: u8);

    /// `mlx5dv_wr_set_dc_addr`.
    pub fn m5dv_wr_set_dc_addr(mqp: *mut mlx5dv_qp_ex, ah: *mut ibv_ah, remote_dctn: u32, remote_dc_key: u64);
    /// `mlx5dv_wr_set_dc_addr_stream` (headers of rdma-core 37+).
    #[cfg(m5dv_dc_addr_stream)]
    pub fn m5dv_wr_set_dc_addr_stream(
        mqp: *mut mlx5dv_qp_ex,
        ah: *mut ibv_ah,
        remote_dctn: u32,
        remote_dc_key: u64,
        stream_id: u16,
    );

    /// `ibv_post_send`.
    pub fn m5dv_post_send(qp: *mut ibv_qp, wr: *mut ibv_send_wr, bad_wr: *mut *mut ibv_send_wr) -> c_int;
    /// `ibv_post_recv`.
    pub fn m5dv_post_recv(qp: *mut ibv_qp, wr: *mut ibv_recv_wr, bad_wr: *mut *mut ibv_recv_wr) -> c_int;
    /// `ibv_post_srq_recv`.
    pub fn m5dv_post_srq_recv(
        srq: *mut ibv_srq,
        recv_wr: *mut ibv_recv_wr,
        bad_recv_wr: *mut *mut ibv_recv_wr,
    ) -> c_int;
    /// `ibv_poll_cq`.
    pub fn m5dv_poll_cq(cq: *mut ibv_cq, num_entries: c_int, wc: *mut ibv_wc) -> c_int;
    /// `ibv_req_notify_cq`.
    pub fn m5dv_req_notify_cq(cq: *mut ibv_cq, solicited_only: c_int) -> c_int;

    /// `ibv_cq_ex_to_cq`.
    pub fn m5dv_cq_ex_to_cq(cq: *mut ibv_cq_ex) -> *mut ibv_cq;
    /// `ibv_start_poll`: 0, ENOENT when empty, or an errno.
    pub fn m5dv_start_poll(cq: *mut ibv_cq_ex, attr: *mut ibv_poll_cq_attr) -> c_int;
    /// `ibv_next_poll`: 0, ENOENT when empty, or an errno.
    pub fn m5dv_next_poll(cq: *mut ibv_cq_ex) -> c_int;
    /// `ibv_end_poll`.
    pub fn m5dv_end_poll(cq: *mut ibv_cq_ex);
    /// `ibv_wc_read_opcode`.
    pub fn m5dv_wc_read_opcode(cq: *mut ibv_cq_ex) -> ibv_wc_opcode;
    /// `ibv_wc_read_vendor_err`.
    pub fn m5dv_wc_read_vendor_err(cq: *mut ibv_cq_ex) -> u32;
    /// `ibv_wc_read_byte_len`.
    pub fn m5dv_wc_read_byte_len(cq: *mut ibv_cq_ex) -> u32;
    /// `ibv_wc_read_imm_data` (network byte order).
    pub fn m5dv_wc_read_imm_data(cq: *mut ibv_cq_ex) -> u32;
    /// `ibv_wc_read_invalidated_rkey`.
    pub fn m5dv_wc_read_invalidated_rkey(cq: *mut ibv_cq_ex) -> u32;
    /// `ibv_wc_read_qp_num`.
    pub fn m5dv_wc_read_qp_num(cq: *mut ibv_cq_ex) -> u32;
    /// `ibv_wc_read_src_qp`.
    pub fn m5dv_wc_read_src_qp(cq: *mut ibv_cq_ex) -> u32;
    /// `ibv_wc_read_wc_flags`.
    pub fn m5dv_wc_read_wc_flags(cq: *mut ibv_cq_ex) -> c_uint;
    /// `ibv_wc_read_slid`.
    pub fn m5dv_wc_read_slid(cq: *mut ibv_cq_ex) -> u32;
    /// `ibv_wc_read_sl`.
    pub fn m5dv_wc_read_sl(cq: *mut ibv_cq_ex) -> u8;
    /// `ibv_wc_read_dlid_path_bits`.
    pub fn m5dv_wc_read_dlid_path_bits(cq: *mut ibv_cq_ex) -> u8;
    /// `ibv_wc_read_completion_ts`.
    pub fn m5dv_wc_read_completion_ts(cq: *mut ibv_cq_ex) -> u64;
    /// `ibv_wc_read_completion_wallclock_ns`.
    pub fn m5dv_wc_read_completion_wallclock_ns(cq: *mut ibv_cq_ex) -> u64;
    /// `ibv_wc_read_cvlan`.
    pub fn m5dv_wc_read_cvlan(cq: *mut ibv_cq_ex) -> u16;
    /// `ibv_wc_read_flow_tag`.
    pub fn m5dv_wc_read_flow_tag(cq: *mut ibv_cq_ex) -> u32;
    /// `ibv_wc_read_tm_info`.
    pub fn m5dv_wc_read_tm_info(cq: *mut ibv_cq_ex, tm_info: *mut ibv_wc_tm_info);

    /// `ibv_create_cq_ex`: NULL with errno set on failure (EOPNOTSUPP without the entry).
    pub fn m5dv_create_cq_ex(context: *mut ibv_context, cq_attr: *mut ibv_cq_init_attr_ex) -> *mut ibv_cq_ex;
    /// `ibv_query_device_ex`: 0 or an errno (falls back to `ibv_query_device`).
    pub fn m5dv_query_device_ex(
        context: *mut ibv_context,
        input: *const ibv_query_device_ex_input,
        attr: *mut ibv_device_attr_ex,
    ) -> c_int;
    /// `ibv_create_qp_ex`: NULL with errno set on failure.
    pub fn m5dv_create_qp_ex(context: *mut ibv_context, qp_init_attr_ex: *mut ibv_qp_init_attr_ex) -> *mut ibv_qp;
    /// `ibv_create_srq_ex`: NULL with errno set on failure.
    pub fn m5dv_create_srq_ex(context: *mut ibv_context, srq_init_attr_ex: *mut ibv_srq_init_attr_ex) -> *mut ibv_srq;
    /// `ibv_alloc_td`: NULL with errno set on failure (EOPNOTSUPP without the entry).
    pub fn m5dv_alloc_td(context: *mut ibv_context, init_attr: *mut ibv_td_init_attr) -> *mut ibv_td;
    /// `ibv_dealloc_td`: 0 or an errno (EOPNOTSUPP without the entry).
    pub fn m5dv_dealloc_td(td: *mut ibv_td) -> c_int;
    /// `ibv_alloc_parent_domain`: NULL with errno set on failure (EOPNOTSUPP without the entry).
    pub fn m5dv_alloc_parent_domain(context: *mut ibv_context, attr: *mut ibv_parent_domain_init_attr) -> *mut ibv_pd;
    /// The inline `ibv_query_port`: fills the whole `ibv_port_attr` of the compile-time headers.
    pub fn m5dv_query_port(context: *mut ibv_context, port_num: u8, port_attr: *mut ibv_port_attr) -> c_int;
    /// `sizeof(struct ibv_port_attr)` in the headers the shim was compiled with.
    pub fn m5dv_port_attr_size() -> size_t;
}
