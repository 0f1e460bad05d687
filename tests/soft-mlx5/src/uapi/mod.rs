//! The kernel's RDMA user ABI (`/usr/include/rdma`, Linux 6.1 uapi), hand-written in Rust.
//!
//! - [`ib_user_verbs`]: `ib_user_verbs.h`, the uverbs write() commands;
//! - [`mlx5_abi`]: `mlx5-abi.h`, the mlx5 driver data of those commands;
//! - [`ioctl`]: `rdma_user_ioctl_cmds.h`, `ib_user_ioctl_cmds.h`, `mlx5_user_ioctl_cmds.h`,
//!   `ib_user_ioctl_verbs.h`, `mlx5_user_ioctl_verbs.h`, the RDMA_VERBS_IOCTL methods.
//!
//! Every item keeps its C name and every struct its C layout; `tests/uapi_layout.rs` checks each
//! size, alignment, field offset and constant against the C compiler on those headers. All items
//! are also re-exported here. [`read_struct`] and [`write_struct`] move them in and out of the
//! byte buffers user space hands over, the way the kernel does.
#![allow(non_camel_case_types)]

pub mod ib_user_verbs;
pub mod ioctl;
pub mod mlx5_abi;

pub use ib_user_verbs::*;
pub use ioctl::*;
pub use mlx5_abi::*;

/// Plain old data: a uapi struct that may be copied from and to raw bytes.
///
/// # Safety
///
/// The type is `#[repr(C)]`, made only of integers and arrays or `Pod` aggregates of them, has no
/// padding bytes (so every byte of a value is initialized) and every bit pattern, including all
/// zeros, is a valid value.
pub unsafe trait Pod: Copy + Default {}

/// Reads a `T` from the start of `bytes`: copies `min(bytes.len(), size_of::<T>())` bytes into a
/// zeroed `T`, so a shorter (older) user struct reads as if its missing tail were zero, as the
/// kernel treats it. Extra bytes are ignored.
pub fn read_struct<T: Pod>(bytes: &[u8]) -> T {
    // SAFETY: T is Pod, so all zeros is a valid T.
    let mut v: T = unsafe { core::mem::zeroed() };
    let n = bytes.len().min(core::mem::size_of::<T>());
    // SAFETY: `bytes` has n readable bytes; `v` is a T of size_of::<T>() >= n writable bytes, a
    // separate local (no overlap); any bytes form a valid T (Pod).
    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), (&mut v as *mut T).cast::<u8>(), n) };
    v
}

/// Writes `v` to the start of `out`: copies `min(out.len(), size_of::<T>())` bytes (a shorter
/// user buffer gets the head of the struct) and returns how many.
pub fn write_struct<T: Pod>(out: &mut [u8], v: &T) -> usize {
    let n = out.len().min(core::mem::size_of::<T>());
    // SAFETY: `v` is a T whose size_of::<T>() >= n bytes are all initialized (Pod: no padding);
    // `out` has n writable bytes and, being a unique borrow, does not overlap `v`.
    unsafe { core::ptr::copy_nonoverlapping((v as *const T).cast::<u8>(), out.as_mut_ptr(), n) };
    n
}

macro_rules! pod {
    ($($t:ident),* $(,)?) => {
        $(
            // SAFETY: a #[repr(C)] uapi mirror of integers (and arrays/Pod aggregates of them)
            // without padding; tests/uapi_layout.rs checks that its fields tile it exactly.
            unsafe impl Pod for $t {}
        )*
    };
}

pod!(
    ib_uverbs_async_event_desc,
    ib_uverbs_comp_event_desc,
    ib_uverbs_cq_moderation_caps,
    ib_uverbs_cmd_hdr,
    ib_uverbs_ex_cmd_hdr,
    ib_uverbs_get_context,
    ib_uverbs_get_context_resp,
    ib_uverbs_query_device,
    ib_uverbs_query_device_resp,
    ib_uverbs_ex_query_device,
    ib_uverbs_odp_caps,
    ib_uverbs_odp_caps_per_transport_caps,
    ib_uverbs_rss_caps,
    ib_uverbs_tm_caps,
    ib_uverbs_ex_query_device_resp,
    ib_uverbs_query_port,
    ib_uverbs_query_port_resp,
    ib_uverbs_alloc_pd,
    ib_uverbs_alloc_pd_resp,
    ib_uverbs_dealloc_pd,
    ib_uverbs_open_xrcd,
    ib_uverbs_open_xrcd_resp,
    ib_uverbs_close_xrcd,
    ib_uverbs_reg_mr,
    ib_uverbs_reg_mr_resp,
    ib_uverbs_rereg_mr,
    ib_uverbs_rereg_mr_resp,
    ib_uverbs_dereg_mr,
    ib_uverbs_alloc_mw,
    ib_uverbs_alloc_mw_resp,
    ib_uverbs_dealloc_mw,
    ib_uverbs_create_comp_channel,
    ib_uverbs_create_comp_channel_resp,
    ib_uverbs_create_cq,
    ib_uverbs_ex_create_cq,
    ib_uverbs_create_cq_resp,
    ib_uverbs_ex_create_cq_resp,
    ib_uverbs_resize_cq,
    ib_uverbs_resize_cq_resp,
    ib_uverbs_req_notify_cq,
    ib_uverbs_destroy_cq,
    ib_uverbs_destroy_cq_resp,
    ib_uverbs_global_route,
    ib_uverbs_ah_attr,
    ib_uverbs_qp_attr,
    ib_uverbs_create_qp,
    ib_uverbs_ex_create_qp,
    ib_uverbs_open_qp,
    ib_uverbs_create_qp_resp,
    ib_uverbs_ex_create_qp_resp,
    ib_uverbs_qp_dest,
    ib_uverbs_query_qp,
    ib_uverbs_query_qp_resp,
    ib_uverbs_modify_qp,
    ib_uverbs_ex_modify_qp,
    ib_uverbs_ex_modify_qp_resp,
    ib_uverbs_destroy_qp,
    ib_uverbs_destroy_qp_resp,
    ib_uverbs_create_ah,
    ib_uverbs_create_ah_resp,
    ib_uverbs_destroy_ah,
    ib_uverbs_attach_mcast,
    ib_uverbs_detach_mcast,
    ib_uverbs_create_srq,
    ib_uverbs_create_xsrq,
    ib_uverbs_create_srq_resp,
    ib_uverbs_modify_srq,
    ib_uverbs_query_srq,
    ib_uverbs_query_srq_resp,
    ib_uverbs_destroy_srq,
    ib_uverbs_destroy_srq_resp,
    ib_uverbs_ex_create_wq,
    ib_uverbs_ex_create_wq_resp,
    ib_uverbs_ex_destroy_wq,
    ib_uverbs_ex_destroy_wq_resp,
    ib_uverbs_ex_modify_wq,
    ib_uverbs_ex_create_rwq_ind_table,
    ib_uverbs_ex_create_rwq_ind_table_resp,
    ib_uverbs_ex_destroy_rwq_ind_table,
    ib_uverbs_cq_moderation,
    ib_uverbs_ex_modify_cq,
);

pod!(
    mlx5_ib_alloc_ucontext_req,
    mlx5_ib_alloc_ucontext_req_v2,
    mlx5_ib_alloc_ucontext_resp,
    mlx5_ib_alloc_pd_resp,
    mlx5_ib_tso_caps,
    mlx5_ib_rss_caps,
    mlx5_ib_cqe_comp_caps,
    mlx5_packet_pacing_caps,
    mlx5_ib_sw_parsing_caps,
    mlx5_ib_striding_rq_caps,
    mlx5_ib_dci_streams_caps,
    mlx5_ib_query_device_resp,
    mlx5_ib_create_cq,
    mlx5_ib_create_cq_resp,
    mlx5_ib_resize_cq,
    mlx5_ib_create_srq,
    mlx5_ib_create_srq_resp,
    mlx5_ib_create_qp_dci_streams,
    mlx5_ib_create_qp,
    mlx5_ib_create_qp_sq_buf_addr_access_key,
    mlx5_ib_create_qp_rss,
    mlx5_ib_create_qp_resp,
    mlx5_ib_alloc_mw,
    mlx5_ib_create_wq,
    mlx5_ib_create_ah_resp,
    mlx5_ib_burst_info,
    mlx5_ib_modify_qp,
    mlx5_ib_modify_qp_resp,
    mlx5_ib_create_wq_resp,
    mlx5_ib_create_rwq_ind_tbl_resp,
    mlx5_ib_modify_wq,
    mlx5_ib_clock_info,
    mlx5_ib_flow_counters_desc,
    mlx5_ib_flow_counters_data,
    mlx5_ib_create_flow,
);

pod!(
    ib_uverbs_attr,
    ib_uverbs_attr_attr_data,
    ib_uverbs_attr_attr_data_enum_data,
    ib_uverbs_attr_data_data_s64,
    ib_uverbs_ioctl_hdr,
    mlx5_ib_match_params,
    ib_uverbs_flow_action_esp_keymat_aes_gcm,
    ib_uverbs_flow_action_esp_replay_bmp,
    ib_uverbs_flow_action_esp,
    ib_uverbs_query_port_resp_ex,
    ib_uverbs_qp_cap,
    ib_uverbs_gid_entry,
    mlx5_ib_uapi_devx_async_cmd_hdr,
    mlx5_ib_uapi_devx_async_event_hdr,
    mlx5_ib_uapi_reg,
    mlx5_ib_uapi_query_port,
);
