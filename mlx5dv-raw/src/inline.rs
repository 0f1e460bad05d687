//! Rust versions of the headers' static-inline functions, under their C names.
//!
//! Those that only call through a function table (`ibv_qp_ex`, `mlx5dv_qp_ex`, `ibv_cq_ex`,
//! `ibv_context.ops`) read the same entry and make the same indirect call as the C inline, so
//! the post path costs what it costs in C: no extra call through the shim. Those that need
//! `struct verbs_context` (negative offsets from `ibv_context`) call the shim, where the header
//! does that lookup itself.
//!
//! An entry the library left NULL (an operation the QP was not created for) breaks the
//! functions' safety contract. Debug builds check and abort the process with a message naming
//! the entry; release builds make the call unchecked, exactly as the C inline does (which
//! jumps to address 0), so the post path costs what it costs in C. The safe crate calls an
//! operation's entry only after checking the QP was created with it.

use crate::mlx5dv::mlx5dv_qp_ex;
use crate::shim;
use crate::verbs::*;
use libc::{c_int, c_uint, c_void, size_t};

#[cold]
#[inline(never)]
fn missing_entry(entry: &str) -> ! {
    const PREFIX: &[u8] = b"mlx5dv-raw: function table entry is NULL (operation not enabled at creation): ";
    // SAFETY: writing initialised byte buffers of the given lengths to fd 2; abort never returns.
    unsafe {
        libc::write(2, PREFIX.as_ptr().cast(), PREFIX.len());
        libc::write(2, entry.as_ptr().cast(), entry.len());
        libc::write(2, b"\n".as_ptr().cast(), 1);
        libc::abort()
    }
}

macro_rules! table_call {
    ($c_name:literal, $name:ident($obj:ident: *mut $objty:ty $(, $arg:ident: $argty:ty)*) $(-> $ret:ty)?, $field:ident) => {
        #[doc = concat!("`", $c_name, "`: calls `", stringify!($obj), "->", stringify!($field), "` as the C inline does.")]
        ///
        /// # Safety
        #[doc = concat!("`", stringify!($obj), "` must point to a live `", stringify!($objty), "` owned by the library ")]
        /// whose entry for this operation is present in the running library and was enabled when
        /// the object was created (for QPs: the matching send-ops flag); pointer arguments must be
        /// valid as the C function requires. Posting calls must not race on the same QP.
        #[inline(always)]
        pub unsafe fn $name($obj: *mut $objty $(, $arg: $argty)*) $(-> $ret)? {
            // SAFETY: the caller guarantees the object is live, so reading its table entry is sound.
            let entry = unsafe { (*$obj).$field };
            if cfg!(debug_assertions) && entry.is_none() {
                missing_entry(stringify!($field));
            }
            // SAFETY: the caller guarantees the library installed this entry for the object
            // (see the module: unchecked in release builds, as in C); the arguments are the
            // caller's, passed through unchanged as in C.
            unsafe { entry.unwrap_unchecked()($obj $(, $arg)*) }
        }
    };
}

// ibv_qp_ex (verbs.h order)
table_call!("ibv_wr_atomic_cmp_swp", ibv_wr_atomic_cmp_swp(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64, compare: u64, swap: u64), wr_atomic_cmp_swp);
table_call!("ibv_wr_atomic_fetch_add", ibv_wr_atomic_fetch_add(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64, add: u64), wr_atomic_fetch_add);
table_call!("ibv_wr_bind_mw", ibv_wr_bind_mw(qp: *mut ibv_qp_ex, mw: *mut ibv_mw, rkey: u32, bind_info: *const ibv_mw_bind_info), wr_bind_mw);
table_call!("ibv_wr_local_inv", ibv_wr_local_inv(qp: *mut ibv_qp_ex, invalidate_rkey: u32), wr_local_inv);
table_call!("ibv_wr_rdma_read", ibv_wr_rdma_read(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64), wr_rdma_read);
table_call!("ibv_wr_rdma_write", ibv_wr_rdma_write(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64), wr_rdma_write);
table_call!("ibv_wr_flush (rdma-core 45+ runtime only)", ibv_wr_flush(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64, len: size_t, type_: u8, level: u8), wr_flush);
table_call!("ibv_wr_rdma_write_imm", ibv_wr_rdma_write_imm(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64, imm_data: u32), wr_rdma_write_imm);
table_call!("ibv_wr_send", ibv_wr_send(qp: *mut ibv_qp_ex), wr_send);
table_call!("ibv_wr_send_imm", ibv_wr_send_imm(qp: *mut ibv_qp_ex, imm_data: u32), wr_send_imm);
table_call!("ibv_wr_send_inv", ibv_wr_send_inv(qp: *mut ibv_qp_ex, invalidate_rkey: u32), wr_send_inv);
table_call!("ibv_wr_send_tso", ibv_wr_send_tso(qp: *mut ibv_qp_ex, hdr: *mut c_void, hdr_sz: u16, mss: u16), wr_send_tso);
table_call!("ibv_wr_set_ud_addr", ibv_wr_set_ud_addr(qp: *mut ibv_qp_ex, ah: *mut ibv_ah, remote_qpn: u32, remote_qkey: u32), wr_set_ud_addr);
table_call!("ibv_wr_set_xrc_srqn", ibv_wr_set_xrc_srqn(qp: *mut ibv_qp_ex, remote_srqn: u32), wr_set_xrc_srqn);
table_call!("ibv_wr_set_inline_data", ibv_wr_set_inline_data(qp: *mut ibv_qp_ex, addr: *mut c_void, length: size_t), wr_set_inline_data);
table_call!("ibv_wr_set_inline_data_list", ibv_wr_set_inline_data_list(qp: *mut ibv_qp_ex, num_buf: size_t, buf_list: *const ibv_data_buf), wr_set_inline_data_list);
table_call!("ibv_wr_set_sge", ibv_wr_set_sge(qp: *mut ibv_qp_ex, lkey: u32, addr: u64, length: u32), wr_set_sge);
table_call!("ibv_wr_set_sge_list", ibv_wr_set_sge_list(qp: *mut ibv_qp_ex, num_sge: size_t, sg_list: *const ibv_sge), wr_set_sge_list);
table_call!("ibv_wr_start", ibv_wr_start(qp: *mut ibv_qp_ex), wr_start);
table_call!("ibv_wr_complete", ibv_wr_complete(qp: *mut ibv_qp_ex) -> c_int, wr_complete);
table_call!("ibv_wr_abort", ibv_wr_abort(qp: *mut ibv_qp_ex), wr_abort);
table_call!("ibv_wr_atomic_write (rdma-core 44+ runtime only)", ibv_wr_atomic_write(qp: *mut ibv_qp_ex, rkey: u32, remote_addr: u64, atomic_wr: *const c_void), wr_atomic_write);

/// `ibv_cq_ex_to_cq`: the base CQ of an extended CQ (a pointer cast, as in C).
#[inline(always)]
pub fn ibv_cq_ex_to_cq(cq: *mut ibv_cq_ex) -> *mut ibv_cq {
    cq.cast()
}

// ibv_cq_ex
table_call!("ibv_start_poll", ibv_start_poll(cq: *mut ibv_cq_ex, attr: *mut ibv_poll_cq_attr) -> c_int, start_poll);
table_call!("ibv_next_poll", ibv_next_poll(cq: *mut ibv_cq_ex) -> c_int, next_poll);
table_call!("ibv_end_poll", ibv_end_poll(cq: *mut ibv_cq_ex), end_poll);
table_call!("ibv_wc_read_opcode", ibv_wc_read_opcode(cq: *mut ibv_cq_ex) -> ibv_wc_opcode, read_opcode);
table_call!("ibv_wc_read_vendor_err", ibv_wc_read_vendor_err(cq: *mut ibv_cq_ex) -> u32, read_vendor_err);
table_call!("ibv_wc_read_byte_len", ibv_wc_read_byte_len(cq: *mut ibv_cq_ex) -> u32, read_byte_len);
table_call!("ibv_wc_read_imm_data", ibv_wc_read_imm_data(cq: *mut ibv_cq_ex) -> u32, read_imm_data);
table_call!("ibv_wc_read_invalidated_rkey", ibv_wc_read_invalidated_rkey(cq: *mut ibv_cq_ex) -> u32, read_imm_data);
table_call!("ibv_wc_read_qp_num", ibv_wc_read_qp_num(cq: *mut ibv_cq_ex) -> u32, read_qp_num);
table_call!("ibv_wc_read_src_qp", ibv_wc_read_src_qp(cq: *mut ibv_cq_ex) -> u32, read_src_qp);
table_call!("ibv_wc_read_wc_flags", ibv_wc_read_wc_flags(cq: *mut ibv_cq_ex) -> c_uint, read_wc_flags);
table_call!("ibv_wc_read_slid", ibv_wc_read_slid(cq: *mut ibv_cq_ex) -> u32, read_slid);
table_call!("ibv_wc_read_sl", ibv_wc_read_sl(cq: *mut ibv_cq_ex) -> u8, read_sl);
table_call!("ibv_wc_read_dlid_path_bits", ibv_wc_read_dlid_path_bits(cq: *mut ibv_cq_ex) -> u8, read_dlid_path_bits);
table_call!("ibv_wc_read_completion_ts", ibv_wc_read_completion_ts(cq: *mut ibv_cq_ex) -> u64, read_completion_ts);
table_call!("ibv_wc_read_completion_wallclock_ns", ibv_wc_read_completion_wallclock_ns(cq: *mut ibv_cq_ex) -> u64, read_completion_wallclock_ns);
table_call!("ibv_wc_read_cvlan", ibv_wc_read_cvlan(cq: *mut ibv_cq_ex) -> u16, read_cvlan);
table_call!("ibv_wc_read_flow_tag", ibv_wc_read_flow_tag(cq: *mut ibv_cq_ex) -> u32, read_flow_tag);
table_call!("ibv_wc_read_tm_info", ibv_wc_read_tm_info(cq: *mut ibv_cq_ex, tm_info: *mut ibv_wc_tm_info), read_tm_info);

macro_rules! ops_call {
    ($c_name:literal, $name:ident($obj:ident: *mut $objty:ty $(, $arg:ident: $argty:ty)*) -> $ret:ty, $field:ident) => {
        #[doc = concat!("`", $c_name, "`: calls `", stringify!($obj), "->context->ops.", stringify!($field), "` as the C inline does.")]
        ///
        /// # Safety
        #[doc = concat!("`", stringify!($obj), "` must point to a live `", stringify!($objty), "` of an open context; ")]
        /// pointer arguments must be valid as the C function requires.
        #[inline(always)]
        pub unsafe fn $name($obj: *mut $objty $(, $arg: $argty)*) -> $ret {
            // SAFETY: the object is live, so its context pointer and that context's ops are too.
            let entry = unsafe { (*(*$obj).context).ops.$field };
            match entry {
                // SAFETY: the provider installed this entry; arguments pass through as in C.
                Some(f) => unsafe { f($obj $(, $arg)*) },
                None => missing_entry(stringify!($field)),
            }
        }
    };
}

ops_call!("ibv_poll_cq", ibv_poll_cq(cq: *mut ibv_cq, num_entries: c_int, wc: *mut ibv_wc) -> c_int, poll_cq);
ops_call!("ibv_req_notify_cq", ibv_req_notify_cq(cq: *mut ibv_cq, solicited_only: c_int) -> c_int, req_notify_cq);
ops_call!("ibv_post_srq_recv", ibv_post_srq_recv(srq: *mut ibv_srq, recv_wr: *mut ibv_recv_wr, bad_recv_wr: *mut *mut ibv_recv_wr) -> c_int, post_srq_recv);
ops_call!("ibv_post_send", ibv_post_send(qp: *mut ibv_qp, wr: *mut ibv_send_wr, bad_wr: *mut *mut ibv_send_wr) -> c_int, post_send);
ops_call!("ibv_post_recv", ibv_post_recv(qp: *mut ibv_qp, wr: *mut ibv_recv_wr, bad_wr: *mut *mut ibv_recv_wr) -> c_int, post_recv);

/// `ibv_alloc_mw`: calls `pd->context->ops.alloc_mw` as the C inline does; NULL with errno
/// EOPNOTSUPP where the provider has no such entry.
///
/// # Safety
/// `pd` must point to a live `ibv_pd` of an open context.
#[inline]
pub unsafe fn ibv_alloc_mw(pd: *mut ibv_pd, r#type: ibv_mw_type) -> *mut ibv_mw {
    // SAFETY: the PD is live, so its context and that context's ops are too.
    match unsafe { (*(*pd).context).ops.alloc_mw } {
        // SAFETY: the provider installed this entry; arguments pass through as in C.
        Some(f) => unsafe { f(pd, r#type) },
        None => {
            // SAFETY: this thread's errno slot.
            unsafe { *libc::__errno_location() = libc::EOPNOTSUPP };
            core::ptr::null_mut()
        }
    }
}

/// `ibv_dealloc_mw`: calls `mw->context->ops.dealloc_mw` as the C inline does.
///
/// # Safety
/// `mw` must point to a live `ibv_mw`, not used after this returns 0.
#[inline]
pub unsafe fn ibv_dealloc_mw(mw: *mut ibv_mw) -> c_int {
    // SAFETY: the window is live, so its context and that context's ops are too.
    match unsafe { (*(*mw).context).ops.dealloc_mw } {
        // SAFETY: the provider installed this entry; the argument passes through as in C.
        Some(f) => unsafe { f(mw) },
        None => libc::EOPNOTSUPP,
    }
}

/// `ibv_bind_mw`: the C inline's checks (a type 1 window; an MR when an address or length is
/// given, of the window's PD), then `mw->context->ops.bind_mw`. Returns 0 or an errno.
///
/// # Safety
/// `qp` and `mw` must point to live objects of one open context; `mw_bind` to a valid bind
/// description whose `mr` (if any) is live.
#[inline]
pub unsafe fn ibv_bind_mw(qp: *mut ibv_qp, mw: *mut ibv_mw, mw_bind: *mut ibv_mw_bind) -> c_int {
    // SAFETY: live objects and a valid description, as the caller guarantees.
    let (kind, info, pd) = unsafe { ((*mw).r#type, (*mw_bind).bind_info, (*mw).pd) };
    if kind != IBV_MW_TYPE_1 {
        return libc::EINVAL;
    }
    if info.mr.is_null() && (info.addr != 0 || info.length != 0) {
        return libc::EINVAL;
    }
    // SAFETY: a non-null `mr` is live (the caller's guarantee).
    if !info.mr.is_null() && unsafe { (*info.mr).pd } != pd {
        return libc::EPERM;
    }
    // SAFETY: the window is live, so its context and that context's ops are too.
    match unsafe { (*(*mw).context).ops.bind_mw } {
        // SAFETY: the provider installed this entry; arguments pass through as in C.
        Some(f) => unsafe { f(qp, mw, mw_bind) },
        None => libc::EOPNOTSUPP,
    }
}

// mlx5dv_qp_ex (mlx5dv.h)
table_call!("mlx5dv_wr_set_dc_addr", mlx5dv_wr_set_dc_addr(mqp: *mut mlx5dv_qp_ex, ah: *mut ibv_ah, remote_dctn: u32, remote_dc_key: u64), wr_set_dc_addr);
table_call!("mlx5dv_wr_set_dc_addr_stream", mlx5dv_wr_set_dc_addr_stream(mqp: *mut mlx5dv_qp_ex, ah: *mut ibv_ah, remote_dctn: u32, remote_dc_key: u64, stream_id: u16), wr_set_dc_addr_stream);

/// `ibv_create_cq_ex` (through the shim: needs `struct verbs_context`).
///
/// Returns NULL with errno set on failure (EOPNOTSUPP where the provider lacks the entry).
///
/// # Safety
/// `context` must be an open context and `cq_attr` a valid, initialised attribute struct.
#[inline]
pub unsafe fn ibv_create_cq_ex(context: *mut ibv_context, cq_attr: *mut ibv_cq_init_attr_ex) -> *mut ibv_cq_ex {
    // SAFETY: forwarded under the caller's guarantees.
    unsafe { shim::m5dv_create_cq_ex(context, cq_attr) }
}

/// `ibv_alloc_td` (through the shim): NULL with errno set on failure (EOPNOTSUPP where the
/// provider lacks the entry).
///
/// # Safety
/// `context` must be an open context and `init_attr` a valid attribute struct.
#[inline]
pub unsafe fn ibv_alloc_td(context: *mut ibv_context, init_attr: *mut ibv_td_init_attr) -> *mut ibv_td {
    // SAFETY: forwarded under the caller's guarantees.
    unsafe { shim::m5dv_alloc_td(context, init_attr) }
}

/// `ibv_dealloc_td` (through the shim): 0 or an errno (EBUSY while a parent domain uses it).
///
/// # Safety
/// `td` must be a live thread domain, not used afterwards when this returns 0.
#[inline]
pub unsafe fn ibv_dealloc_td(td: *mut ibv_td) -> c_int {
    // SAFETY: forwarded under the caller's guarantees.
    unsafe { shim::m5dv_dealloc_td(td) }
}

/// `ibv_alloc_parent_domain` (through the shim): NULL with errno set on failure (EOPNOTSUPP
/// where the provider lacks the entry). Freed with `ibv_dealloc_pd`.
///
/// # Safety
/// `context` must be an open context and `attr` valid, with live `pd` and `td` (or NULL `td`).
#[inline]
pub unsafe fn ibv_alloc_parent_domain(
    context: *mut ibv_context,
    attr: *mut ibv_parent_domain_init_attr,
) -> *mut ibv_pd {
    // SAFETY: forwarded under the caller's guarantees.
    unsafe { shim::m5dv_alloc_parent_domain(context, attr) }
}

/// `ibv_query_device_ex` (through the shim): 0 or an errno; EINVAL if `input->comp_mask != 0`.
///
/// # Safety
/// `context` must be an open context; `input` null or valid; `attr` valid for writes.
#[inline]
pub unsafe fn ibv_query_device_ex(
    context: *mut ibv_context,
    input: *const ibv_query_device_ex_input,
    attr: *mut ibv_device_attr_ex,
) -> c_int {
    // SAFETY: forwarded under the caller's guarantees; Rust's struct is at least the header's size.
    unsafe { shim::m5dv_query_device_ex(context, input, attr) }
}

/// `ibv_create_qp_ex` (through the shim): NULL with errno set on failure.
///
/// # Safety
/// `context` must be an open context and `qp_init_attr_ex` valid, with live objects in it.
#[inline]
pub unsafe fn ibv_create_qp_ex(context: *mut ibv_context, qp_init_attr_ex: *mut ibv_qp_init_attr_ex) -> *mut ibv_qp {
    // SAFETY: forwarded under the caller's guarantees.
    unsafe { shim::m5dv_create_qp_ex(context, qp_init_attr_ex) }
}

/// `ibv_create_srq_ex` (through the shim): NULL with errno set on failure.
///
/// # Safety
/// `context` must be an open context and `srq_init_attr_ex` valid, with live objects in it.
#[inline]
pub unsafe fn ibv_create_srq_ex(
    context: *mut ibv_context,
    srq_init_attr_ex: *mut ibv_srq_init_attr_ex,
) -> *mut ibv_srq {
    // SAFETY: forwarded under the caller's guarantees.
    unsafe { shim::m5dv_create_srq_ex(context, srq_init_attr_ex) }
}

/// `ibv_query_port` as the header's macro means it: the inline version that fills the whole
/// struct (`port_cap_flags2`, `active_speed_ex`), not the exported 48-byte compat symbol.
///
/// Returns 0 or an errno.
///
/// # Safety
/// `context` must be an open context and `port_attr` valid for writes.
#[inline]
pub unsafe fn ibv_query_port(context: *mut ibv_context, port_num: u8, port_attr: *mut ibv_port_attr) -> c_int {
    // SAFETY: forwarded under the caller's guarantees; Rust's struct is at least the header's size.
    unsafe { shim::m5dv_query_port(context, port_num, port_attr) }
}

/// `mlx5dv_get_cqe_owner`: the owner bit of a CQE.
#[inline(always)]
pub fn mlx5dv_get_cqe_owner(cqe: &crate::mlx5dv::mlx5_cqe64) -> u8 {
    cqe.op_own & 0x1
}

/// `mlx5dv_set_cqe_owner`: sets the owner bit of a CQE.
#[inline(always)]
pub fn mlx5dv_set_cqe_owner(cqe: &mut crate::mlx5dv::mlx5_cqe64, val: u8) {
    cqe.op_own = (val & 0x1) | (cqe.op_own & !0x1);
}

/// `mlx5dv_get_cqe_se`: the solicited-event bit of a CQE.
#[inline(always)]
pub fn mlx5dv_get_cqe_se(cqe: &crate::mlx5dv::mlx5_cqe64) -> u8 {
    (cqe.op_own >> 1) & 0x1
}

/// `mlx5dv_get_cqe_format`: the CQE format (3: compressed).
#[inline(always)]
pub fn mlx5dv_get_cqe_format(cqe: &crate::mlx5dv::mlx5_cqe64) -> u8 {
    (cqe.op_own >> 2) & 0x3
}

/// `mlx5dv_get_cqe_opcode`: the CQE opcode (`MLX5_CQE_*`).
#[inline(always)]
pub fn mlx5dv_get_cqe_opcode(cqe: &crate::mlx5dv::mlx5_cqe64) -> u8 {
    cqe.op_own >> 4
}
