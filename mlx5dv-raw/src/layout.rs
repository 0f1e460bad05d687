//! Size and alignment of every struct and union, pinned per target architecture with
//! `static_assertions` (newest layout, rdma-core 65). The values were measured by the C
//! compiler on rdma-core 65.0 headers for x86_64 and aarch64; the layout tests re-measure them
//! against the headers of every tested version. Other architectures are not pinned here.
//!
//! `pthread_mutex_t` is 48 bytes on aarch64 (40 on x86_64), which moves every struct that
//! embeds one (ibv_srq, ibv_wq, ibv_qp, ibv_qp_ex, ibv_cq, ibv_cq_ex, ibv_context).
use crate::mlx5dv::*;
use crate::verbs::*;
use core::mem::{align_of, size_of};
use static_assertions::const_assert_eq;

macro_rules! pin {
    ($($ty:ident: $x86_64:literal, $aarch64:literal, align $align:literal;)*) => {
        $(
            #[cfg(target_arch = "x86_64")]
            const_assert_eq!(size_of::<$ty>(), $x86_64);
            #[cfg(target_arch = "aarch64")]
            const_assert_eq!(size_of::<$ty>(), $aarch64);
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            const_assert_eq!(align_of::<$ty>(), $align);
        )*
    };
}

pin! {
    ibv_gid: 16, 16, align 8;
    ibv_gid_global: 16, 16, align 8;
    ibv_gid_entry: 32, 32, align 8;
    ibv_device_attr: 232, 232, align 8;
    ibv_query_device_ex_input: 4, 4, align 4;
    ibv_odp_caps: 24, 24, align 8;
    ibv_odp_caps_per_transport_caps: 12, 12, align 4;
    ibv_tso_caps: 8, 8, align 4;
    ibv_rss_caps: 32, 32, align 8;
    ibv_packet_pacing_caps: 12, 12, align 4;
    ibv_tm_caps: 20, 20, align 4;
    ibv_cq_moderation_caps: 4, 4, align 2;
    ibv_pci_atomic_caps: 6, 6, align 2;
    ibv_device_attr_ex: 400, 400, align 8;
    ibv_port_attr: 56, 56, align 4;
    ibv_async_event: 16, 16, align 8;
    ibv_async_event_element: 8, 8, align 8;
    ibv_wc: 48, 48, align 8;
    ibv_mw_bind_info: 32, 32, align 8;
    ibv_pd: 16, 16, align 8;
    ibv_td_init_attr: 4, 4, align 4;
    ibv_td: 8, 8, align 8;
    ibv_xrcd: 8, 8, align 8;
    ibv_mr: 48, 48, align 8;
    ibv_mw: 32, 32, align 8;
    ibv_global_route: 24, 24, align 8;
    ibv_ah_attr: 32, 32, align 8;
    ibv_srq_attr: 12, 12, align 4;
    ibv_srq_init_attr: 24, 24, align 8;
    ibv_tm_cap: 8, 8, align 4;
    ibv_srq_init_attr_ex: 64, 64, align 8;
    ibv_rwq_ind_table: 24, 24, align 8;
    ibv_qp_cap: 20, 20, align 4;
    ibv_qp_init_attr: 64, 64, align 8;
    ibv_rx_hash_conf: 24, 24, align 8;
    ibv_qp_init_attr_ex: 136, 136, align 8;
    ibv_qp_attr: 144, 144, align 8;
    ibv_data_buf: 16, 16, align 8;
    ibv_sge: 16, 16, align 8;
    ibv_fd_arr: 16, 16, align 8;
    ibv_send_wr: 128, 128, align 8;
    ibv_send_wr_wr: 32, 32, align 8;
    ibv_send_wr_wr_rdma: 16, 16, align 8;
    ibv_send_wr_wr_atomic: 32, 32, align 8;
    ibv_send_wr_wr_ud: 16, 16, align 8;
    ibv_send_wr_qp_type: 4, 4, align 4;
    ibv_send_wr_qp_type_xrc: 4, 4, align 4;
    ibv_send_wr_bind_mw: 48, 48, align 8;
    ibv_send_wr_tso: 16, 16, align 8;
    ibv_recv_wr: 32, 32, align 8;
    ibv_mw_bind: 48, 48, align 8;
    ibv_srq: 128, 136, align 8;
    ibv_wq: 152, 160, align 8;
    ibv_qp: 160, 168, align 8;
    ibv_qp_ex: 360, 368, align 8;
    ibv_comp_channel: 16, 16, align 8;
    ibv_cq: 128, 136, align 8;
    ibv_poll_cq_attr: 4, 4, align 4;
    ibv_wc_tm_info: 16, 16, align 8;
    ibv_cq_ex: 288, 296, align 8;
    ibv_ah: 24, 24, align 8;
    _ibv_device_ops: 16, 16, align 8;
    ibv_device: 664, 664, align 8;
    ibv_context_ops: 256, 256, align 8;
    ibv_context: 328, 336, align 8;
    ibv_cq_init_attr_ex: 56, 56, align 8;
    ibv_parent_domain_init_attr: 48, 48, align 8;
    mlx5dv_cqe_comp_caps: 8, 8, align 4;
    mlx5dv_sw_parsing_caps: 8, 8, align 4;
    mlx5dv_striding_rq_caps: 20, 20, align 4;
    mlx5dv_dci_streams_caps: 2, 2, align 1;
    mlx5dv_sig_caps: 16, 16, align 8;
    mlx5dv_crypto_caps: 12, 12, align 4;
    mlx5dv_ooo_recv_wrs_caps: 20, 20, align 4;
    mlx5_ib_uapi_reg: 8, 8, align 4;
    mlx5dv_context: 200, 200, align 8;
    mlx5dv_cq_init_attr: 24, 24, align 8;
    mlx5dv_mkey: 8, 8, align 4;
    mlx5dv_dci_streams: 2, 2, align 1;
    mlx5dv_dc_init_attr: 16, 16, align 8;
    mlx5dv_qp_init_attr: 40, 40, align 8;
    mlx5dv_mr_interleaved: 24, 24, align 8;
    mlx5dv_qp_ex: 104, 104, align 8;
    mlx5dv_qp: 96, 96, align 8;
    mlx5dv_qp_sq: 16, 16, align 8;
    mlx5dv_qp_rq: 16, 16, align 8;
    mlx5dv_qp_bf: 16, 16, align 8;
    mlx5dv_cq: 48, 48, align 8;
    mlx5dv_srq: 48, 48, align 8;
    mlx5dv_ah: 16, 16, align 8;
    mlx5dv_obj: 128, 128, align 8;
    mlx5dv_obj_qp: 16, 16, align 8;
    mlx5dv_obj_cq: 16, 16, align 8;
    mlx5dv_obj_srq: 16, 16, align 8;
    mlx5dv_obj_rwq: 16, 16, align 8;
    mlx5dv_obj_dm: 16, 16, align 8;
    mlx5dv_obj_ah: 16, 16, align 8;
    mlx5dv_obj_pd: 16, 16, align 8;
    mlx5dv_obj_devx: 16, 16, align 8;
    mlx5_err_cqe: 64, 64, align 4;
    mlx5_cqe64: 64, 64, align 8;
    mlx5_wqe_data_seg: 16, 16, align 8;
    mlx5_wqe_ctrl_seg: 16, 16, align 4;
    mlx5_wqe_av: 48, 48, align 8;
    mlx5_wqe_av_key: 8, 8, align 8;
    mlx5_wqe_av_key_qkey: 8, 8, align 4;
    mlx5_wqe_datagram_seg: 48, 48, align 8;
    mlx5_wqe_raddr_seg: 16, 16, align 8;
    mlx5_wqe_atomic_seg: 16, 16, align 8;
    mlx5_wqe_inl_data_seg: 4, 4, align 4;
    mlx5dv_context_attr: 24, 24, align 8;
    ibv_send_wr_bind_mw_tso: 48, 48, align 8;
    mlx5dv_dc_init_attr_key_or_streams: 8, 8, align 8;
}

#[cfg(feature = "cm")]
mod cm {
    use crate::rdma_cma::*;
    use core::mem::{align_of, size_of};
    use static_assertions::const_assert_eq;

    // rdma_cma.h embeds no pthread types: the same layout on both architectures.
    pin! {
        rdma_ib_addr: 40, 40, align 8;
        rdma_addr: 296, 296, align 8;
        rdma_addr_src: 128, 128, align 8;
        rdma_addr_dst: 128, 128, align 8;
        rdma_addr_addr: 40, 40, align 8;
        rdma_route: 312, 312, align 8;
        rdma_event_channel: 4, 4, align 4;
        rdma_cm_id: 416, 416, align 8;
        rdma_conn_param: 24, 24, align 8;
        rdma_ud_param: 56, 56, align 8;
        rdma_cm_event: 80, 80, align 8;
        rdma_cm_event_param: 56, 56, align 8;
    }
}
