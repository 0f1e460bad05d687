//! `infiniband/mlx5dv.h`: the mlx5 direct-verbs parts that the DC transport needs.
//!
//! Declared in the header's own order, with the C names, newest layout (rdma-core 65).
//! `mlx5dv_wr_set_dc_addr` and `mlx5dv_wr_set_dc_addr_stream` are static inline in C: see
//! [`crate::inline`] and the shim.

use crate::verbs::{ibv_ah, ibv_context, ibv_cq, ibv_cq_ex, ibv_cq_init_attr_ex, ibv_device, ibv_fd_arr};
use crate::verbs::{ibv_qp, ibv_qp_ex, ibv_qp_init_attr_ex, ibv_sge, ibv_srq};
use libc::{c_int, c_uint, c_void, size_t};

/// Doorbell record word of the receive queue (`dbrec[MLX5_RCV_DBR]`).
pub const MLX5_RCV_DBR: u32 = 0;
/// Doorbell record word of the send queue (`dbrec[MLX5_SND_DBR]`).
pub const MLX5_SND_DBR: u32 = 1;

/// `enum mlx5dv_context_comp_mask`: which parts of `struct mlx5dv_context` to fill.
pub type mlx5dv_context_comp_mask = c_uint;
/// `cqe_comp_caps`.
pub const MLX5DV_CONTEXT_MASK_CQE_COMPRESION: mlx5dv_context_comp_mask = 1;
/// `sw_parsing_caps`.
pub const MLX5DV_CONTEXT_MASK_SWP: mlx5dv_context_comp_mask = 1 << 1;
/// `striding_rq_caps`.
pub const MLX5DV_CONTEXT_MASK_STRIDING_RQ: mlx5dv_context_comp_mask = 1 << 2;
/// `tunnel_offloads_caps`.
pub const MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS: mlx5dv_context_comp_mask = 1 << 3;
/// `max_dynamic_bfregs`.
pub const MLX5DV_CONTEXT_MASK_DYN_BFREGS: mlx5dv_context_comp_mask = 1 << 4;
/// `max_clock_info_update_nsec`.
pub const MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE: mlx5dv_context_comp_mask = 1 << 5;
/// `flow_action_flags`.
pub const MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS: mlx5dv_context_comp_mask = 1 << 6;
/// `dc_odp_caps`.
pub const MLX5DV_CONTEXT_MASK_DC_ODP_CAPS: mlx5dv_context_comp_mask = 1 << 7;
/// `hca_core_clock`.
pub const MLX5DV_CONTEXT_MASK_HCA_CORE_CLOCK: mlx5dv_context_comp_mask = 1 << 8;
/// `num_lag_ports`.
pub const MLX5DV_CONTEXT_MASK_NUM_LAG_PORTS: mlx5dv_context_comp_mask = 1 << 9;
/// `sig_caps`.
pub const MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD: mlx5dv_context_comp_mask = 1 << 10;
/// `dci_streams_caps` (rdma-core 37+).
pub const MLX5DV_CONTEXT_MASK_DCI_STREAMS: mlx5dv_context_comp_mask = 1 << 11;
/// `max_wr_memcpy_length`.
pub const MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH: mlx5dv_context_comp_mask = 1 << 12;
/// `crypto_caps`.
pub const MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD: mlx5dv_context_comp_mask = 1 << 13;
/// `max_dc_rd_atom` and `max_dc_init_rd_atom` (rdma-core 47+).
pub const MLX5DV_CONTEXT_MASK_MAX_DC_RD_ATOM: mlx5dv_context_comp_mask = 1 << 14;
/// `reg_c0`.
pub const MLX5DV_CONTEXT_MASK_REG_C0: mlx5dv_context_comp_mask = 1 << 15;
/// `ooo_recv_wrs_caps` (rdma-core 55+).
pub const MLX5DV_CONTEXT_MASK_OOO_RECV_WRS: mlx5dv_context_comp_mask = 1 << 16;

/// `struct mlx5dv_cqe_comp_caps`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5dv_cqe_comp_caps {
    /// Maximum compressed CQEs.
    pub max_num: u32,
    /// `enum mlx5dv_cqe_comp_res_format`.
    pub supported_format: u32,
}

/// `struct mlx5dv_sw_parsing_caps`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5dv_sw_parsing_caps {
    /// `enum mlx5dv_sw_parsing_offloads`.
    pub sw_parsing_offloads: u32,
    /// Bit mask of QP types.
    pub supported_qpts: u32,
}

/// `struct mlx5dv_striding_rq_caps`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5dv_striding_rq_caps {
    /// Minimum log2 of a stride's size.
    pub min_single_stride_log_num_of_bytes: u32,
    /// Maximum log2 of a stride's size.
    pub max_single_stride_log_num_of_bytes: u32,
    /// Minimum log2 of strides per WQE.
    pub min_single_wqe_log_num_of_strides: u32,
    /// Maximum log2 of strides per WQE.
    pub max_single_wqe_log_num_of_strides: u32,
    /// Bit mask of QP types.
    pub supported_qpts: u32,
}

/// `struct mlx5dv_dci_streams_caps` (rdma-core 37+).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5dv_dci_streams_caps {
    /// Maximum log2 of concurrent streams per DCI (the header's spelling).
    pub max_log_num_concurent: u8,
    /// Maximum log2 of streams that may be in error at once.
    pub max_log_num_errored: u8,
}

/// `enum mlx5dv_tunnel_offloads`.
pub type mlx5dv_tunnel_offloads = c_uint;
/// VXLAN.
pub const MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_VXLAN: mlx5dv_tunnel_offloads = 1;
/// GRE.
pub const MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_GRE: mlx5dv_tunnel_offloads = 1 << 1;
/// GENEVE.
pub const MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_GENEVE: mlx5dv_tunnel_offloads = 1 << 2;
/// CW MPLS over GRE.
pub const MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_CW_MPLS_OVER_GRE: mlx5dv_tunnel_offloads = 1 << 3;
/// CW MPLS over UDP.
pub const MLX5DV_RAW_PACKET_CAP_TUNNELED_OFFLOAD_CW_MPLS_OVER_UDP: mlx5dv_tunnel_offloads = 1 << 4;

/// `enum mlx5dv_flow_action_cap_flags`.
pub type mlx5dv_flow_action_cap_flags = c_uint;
/// ESP AES-GCM.
pub const MLX5DV_FLOW_ACTION_FLAGS_ESP_AES_GCM: mlx5dv_flow_action_cap_flags = 1;
/// ESP AES-GCM request metadata.
pub const MLX5DV_FLOW_ACTION_FLAGS_ESP_AES_GCM_REQ_METADATA: mlx5dv_flow_action_cap_flags = 1 << 1;
/// ESP AES-GCM SPI steering.
pub const MLX5DV_FLOW_ACTION_FLAGS_ESP_AES_GCM_SPI_STEERING: mlx5dv_flow_action_cap_flags = 1 << 2;
/// ESP AES-GCM full offload.
pub const MLX5DV_FLOW_ACTION_FLAGS_ESP_AES_GCM_FULL_OFFLOAD: mlx5dv_flow_action_cap_flags = 1 << 3;
/// ESP AES-GCM TX IV is ESN.
pub const MLX5DV_FLOW_ACTION_FLAGS_ESP_AES_GCM_TX_IV_IS_ESN: mlx5dv_flow_action_cap_flags = 1 << 4;

/// `struct mlx5dv_sig_caps`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5dv_sig_caps {
    /// `enum mlx5dv_block_size_caps`.
    pub block_size: u64,
    /// `enum mlx5dv_sig_prot_caps`.
    pub block_prot: u32,
    /// `enum mlx5dv_sig_t10dif_bg_caps`.
    pub t10dif_bg: u16,
    /// `enum mlx5dv_sig_crc_type_caps`.
    pub crc_type: u16,
}

/// `struct mlx5dv_crypto_caps`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5dv_crypto_caps {
    /// Failed self tests.
    pub failed_selftests: u16,
    /// `enum mlx5dv_crypto_engines_caps`.
    pub crypto_engines: u8,
    /// `enum mlx5dv_crypto_wrapped_import_method_caps`.
    pub wrapped_import_method: u8,
    /// Log2 of the maximum number of DEKs.
    pub log_max_num_deks: u8,
    /// `enum mlx5dv_crypto_caps_flags`.
    pub flags: u32,
}

/// `struct mlx5dv_ooo_recv_wrs_caps` (rdma-core 55+).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5dv_ooo_recv_wrs_caps {
    /// RC.
    pub max_rc: u32,
    /// XRC.
    pub max_xrc: u32,
    /// DCT.
    pub max_dct: u32,
    /// UD.
    pub max_ud: u32,
    /// UC.
    pub max_uc: u32,
}

/// `struct mlx5_ib_uapi_reg` (`mlx5dv_reg` in `mlx5_api.h`).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5_ib_uapi_reg {
    /// Value.
    pub value: u32,
    /// Mask.
    pub mask: u32,
}

/// `mlx5dv_reg`: a `#define` for `struct mlx5_ib_uapi_reg`.
pub type mlx5dv_reg = mlx5_ib_uapi_reg;

/// `struct mlx5dv_context`: filled by `mlx5dv_query_device`.
///
/// `comp_mask` is in/out: set the `MLX5DV_CONTEXT_MASK_*` bits you want; the library clears
/// the bits it does not know or cannot fill. Newest layout (200 bytes on x86_64), at least as
/// large as any library's, so the library never writes past it.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_context {
    /// Structure version.
    pub version: u8,
    /// `enum mlx5dv_context_flags`.
    pub flags: u64,
    /// `enum mlx5dv_context_comp_mask` (in/out).
    pub comp_mask: u64,
    /// CQE compression capabilities.
    pub cqe_comp_caps: mlx5dv_cqe_comp_caps,
    /// Software parsing capabilities.
    pub sw_parsing_caps: mlx5dv_sw_parsing_caps,
    /// Striding RQ capabilities.
    pub striding_rq_caps: mlx5dv_striding_rq_caps,
    /// `enum mlx5dv_tunnel_offloads`.
    pub tunnel_offloads_caps: u32,
    /// Maximum dynamic blue-flame registers.
    pub max_dynamic_bfregs: u32,
    /// Clock info update period.
    pub max_clock_info_update_nsec: u64,
    /// `enum mlx5dv_flow_action_cap_flags`.
    pub flow_action_flags: u32,
    /// DC on-demand-paging capabilities (`enum ibv_odp_transport_cap_bits`).
    pub dc_odp_caps: u32,
    /// Mapped HCA core clock.
    pub hca_core_clock: *mut c_void,
    /// Number of LAG ports.
    pub num_lag_ports: u8,
    /// Signature offload capabilities.
    pub sig_caps: mlx5dv_sig_caps,
    /// DCI stream capabilities (rdma-core 37+).
    pub dci_streams_caps: mlx5dv_dci_streams_caps,
    /// Maximum `wr_memcpy` length.
    pub max_wr_memcpy_length: size_t,
    /// Crypto capabilities.
    pub crypto_caps: mlx5dv_crypto_caps,
    /// Outstanding RDMA reads/atomics a DCI may have in flight: the REQUESTER limit
    /// (`1 << cmd_hca_cap.log_max_ra_req_dc`; rdma-core 47+). Note the reversal of
    /// `ibv_device_attr`'s `max_qp_rd_atom` / `max_qp_init_rd_atom` naming.
    pub max_dc_rd_atom: u64,
    /// Incoming RDMA reads/atomics a DCT serves at once: the RESPONDER limit
    /// (`1 << cmd_hca_cap.log_max_ra_res_dc`; rdma-core 47+).
    pub max_dc_init_rd_atom: u64,
    /// REG_C0 value and mask.
    pub reg_c0: mlx5dv_reg,
    /// Out-of-order receive capabilities (rdma-core 55+).
    pub ooo_recv_wrs_caps: mlx5dv_ooo_recv_wrs_caps,
}

/// `enum mlx5dv_context_flags`.
pub type mlx5dv_context_flags = c_uint;
/// CQE version 1.
pub const MLX5DV_CONTEXT_FLAGS_CQE_V1: mlx5dv_context_flags = 1;
/// Obsolete.
pub const MLX5DV_CONTEXT_FLAGS_OBSOLETE: mlx5dv_context_flags = 1 << 1;
/// Multi-packet WQE allowed.
pub const MLX5DV_CONTEXT_FLAGS_MPW_ALLOWED: mlx5dv_context_flags = 1 << 2;
/// Enhanced multi-packet WQE.
pub const MLX5DV_CONTEXT_FLAGS_ENHANCED_MPW: mlx5dv_context_flags = 1 << 3;
/// 128-byte CQE compression.
pub const MLX5DV_CONTEXT_FLAGS_CQE_128B_COMP: mlx5dv_context_flags = 1 << 4;
/// 128-byte CQE padding.
pub const MLX5DV_CONTEXT_FLAGS_CQE_128B_PAD: mlx5dv_context_flags = 1 << 5;
/// Packet-based credit mode.
pub const MLX5DV_CONTEXT_FLAGS_PACKET_BASED_CREDIT_MODE: mlx5dv_context_flags = 1 << 6;
/// Real-time timestamps.
pub const MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS: mlx5dv_context_flags = 1 << 7;
/// BlueFlame supported (newer than rdma-core 56).
pub const MLX5DV_CONTEXT_FLAGS_BLUEFLAME: mlx5dv_context_flags = 1 << 8;

/// `enum mlx5dv_cq_init_attr_mask`.
pub type mlx5dv_cq_init_attr_mask = c_uint;
/// `cqe_comp_res_format`.
pub const MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE: mlx5dv_cq_init_attr_mask = 1;
/// `flags`.
pub const MLX5DV_CQ_INIT_ATTR_MASK_FLAGS: mlx5dv_cq_init_attr_mask = 1 << 1;
/// `cqe_size`.
pub const MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE: mlx5dv_cq_init_attr_mask = 1 << 2;

/// `enum mlx5dv_cq_init_attr_flags`.
pub type mlx5dv_cq_init_attr_flags = c_uint;
/// Pad CQEs.
pub const MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD: mlx5dv_cq_init_attr_flags = 1;
/// First reserved bit.
pub const MLX5DV_CQ_INIT_ATTR_FLAGS_RESERVED: mlx5dv_cq_init_attr_flags = 1 << 1;

/// `struct mlx5dv_cq_init_attr`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5dv_cq_init_attr {
    /// `enum mlx5dv_cq_init_attr_mask`.
    pub comp_mask: u64,
    /// `enum mlx5dv_cqe_comp_res_format`.
    pub cqe_comp_res_format: u8,
    /// `enum mlx5dv_cq_init_attr_flags`.
    pub flags: u32,
    /// CQE size.
    pub cqe_size: u16,
}

/// `enum mlx5dv_qp_create_flags`.
pub type mlx5dv_qp_create_flags = c_uint;
/// Tunnel offloads.
pub const MLX5DV_QP_CREATE_TUNNEL_OFFLOADS: mlx5dv_qp_create_flags = 1;
/// Allow unicast self loopback (TIR).
pub const MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC: mlx5dv_qp_create_flags = 1 << 1;
/// Allow multicast self loopback (TIR).
pub const MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC: mlx5dv_qp_create_flags = 1 << 2;
/// Disable scatter to CQE (used for DCIs by perftest and rdma-core's tests).
pub const MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE: mlx5dv_qp_create_flags = 1 << 3;
/// Allow scatter to CQE.
pub const MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE: mlx5dv_qp_create_flags = 1 << 4;
/// Packet-based credit mode.
pub const MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE: mlx5dv_qp_create_flags = 1 << 5;
/// Signature pipelining.
pub const MLX5DV_QP_CREATE_SIG_PIPELINING: mlx5dv_qp_create_flags = 1 << 6;
/// Out-of-order data placement (rdma-core 55+).
pub const MLX5DV_QP_CREATE_OOO_DP: mlx5dv_qp_create_flags = 1 << 7;

/// `struct mlx5dv_mkey`: an indirect memory key (only referenced by `mlx5dv_qp_ex`).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5dv_mkey {
    /// Local key.
    pub lkey: u32,
    /// Remote key.
    pub rkey: u32,
}

/// `enum mlx5dv_qp_init_attr_mask`.
pub type mlx5dv_qp_init_attr_mask = c_uint;
/// `create_flags` is valid.
pub const MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS: mlx5dv_qp_init_attr_mask = 1;
/// `dc_init_attr` is valid: create a DCT or a DCI.
pub const MLX5DV_QP_INIT_ATTR_MASK_DC: mlx5dv_qp_init_attr_mask = 1 << 1;
/// `send_ops_flags` is valid.
pub const MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS: mlx5dv_qp_init_attr_mask = 1 << 2;
/// `dc_init_attr.dci_streams` is valid (rdma-core 37+).
pub const MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS: mlx5dv_qp_init_attr_mask = 1 << 3;

/// `enum mlx5dv_dc_type`.
pub type mlx5dv_dc_type = c_uint;
/// DC target.
pub const MLX5DV_DCTYPE_DCT: mlx5dv_dc_type = 1;
/// DC initiator.
pub const MLX5DV_DCTYPE_DCI: mlx5dv_dc_type = 2;

/// `struct mlx5dv_dci_streams` (rdma-core 37+).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct mlx5dv_dci_streams {
    /// Log2 of concurrent streams (the header's spelling).
    pub log_num_concurent: u8,
    /// Log2 of streams that may be in error at once.
    pub log_num_errored: u8,
}

/// `struct mlx5dv_dc_init_attr`.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct mlx5dv_dc_init_attr {
    /// `enum mlx5dv_dc_type`.
    pub dc_type: mlx5dv_dc_type,
    /// The header's anonymous union (no C name; Rust needs one).
    pub key_or_streams: mlx5dv_dc_init_attr_key_or_streams,
}

/// The anonymous union of `struct mlx5dv_dc_init_attr`.
#[repr(C)]
#[derive(Copy, Clone)]
pub union mlx5dv_dc_init_attr_key_or_streams {
    /// DCT: the DC access key initiators must present.
    pub dct_access_key: u64,
    /// DCI: stream configuration (with `MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS`).
    pub dci_streams: mlx5dv_dci_streams,
}

impl core::fmt::Debug for mlx5dv_dc_init_attr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The union holds a secret (the DC access key) for DCTs: never print it.
        f.debug_struct("mlx5dv_dc_init_attr")
            .field("dc_type", &self.dc_type)
            .finish_non_exhaustive()
    }
}

/// `enum mlx5dv_qp_create_send_ops_flags`.
pub type mlx5dv_qp_create_send_ops_flags = c_uint;
/// `mlx5dv_wr_mr_interleaved`.
pub const MLX5DV_QP_EX_WITH_MR_INTERLEAVED: mlx5dv_qp_create_send_ops_flags = 1;
/// `mlx5dv_wr_mr_list`.
pub const MLX5DV_QP_EX_WITH_MR_LIST: mlx5dv_qp_create_send_ops_flags = 1 << 1;
/// `mlx5dv_wr_mkey_configure`.
pub const MLX5DV_QP_EX_WITH_MKEY_CONFIGURE: mlx5dv_qp_create_send_ops_flags = 1 << 2;
/// `mlx5dv_wr_raw_wqe`.
pub const MLX5DV_QP_EX_WITH_RAW_WQE: mlx5dv_qp_create_send_ops_flags = 1 << 3;
/// `mlx5dv_wr_memcpy`.
pub const MLX5DV_QP_EX_WITH_MEMCPY: mlx5dv_qp_create_send_ops_flags = 1 << 4;

/// `struct mlx5dv_qp_init_attr`: the mlx5 part of `mlx5dv_create_qp`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_qp_init_attr {
    /// `enum mlx5dv_qp_init_attr_mask`.
    pub comp_mask: u64,
    /// `enum mlx5dv_qp_create_flags`.
    pub create_flags: u32,
    /// DC type, key and streams.
    pub dc_init_attr: mlx5dv_dc_init_attr,
    /// `enum mlx5dv_qp_create_send_ops_flags`.
    pub send_ops_flags: u64,
}

/// `struct mlx5dv_mr_interleaved`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5dv_mr_interleaved {
    /// Start address.
    pub addr: u64,
    /// Bytes taken.
    pub bytes_count: u32,
    /// Bytes skipped.
    pub bytes_skip: u32,
    /// Local key.
    pub lkey: u32,
}

/// `struct mlx5dv_mkey_conf_attr`, opaque here (only passed by pointer).
#[repr(C)]
pub struct mlx5dv_mkey_conf_attr {
    _opaque: [u8; 0],
}

/// `struct mlx5dv_sig_block_attr`, opaque here (only passed by pointer).
#[repr(C)]
pub struct mlx5dv_sig_block_attr {
    _opaque: [u8; 0],
}

/// `struct mlx5dv_crypto_attr`, opaque here (only passed by pointer).
#[repr(C)]
pub struct mlx5dv_crypto_attr {
    _opaque: [u8; 0],
}

/// `struct mlx5dv_qp_ex`: the mlx5 extension of the post API, owned by the library.
#[repr(C)]
pub struct mlx5dv_qp_ex {
    /// Compatibility mask.
    pub comp_mask: u64,
    /// See `mlx5dv_wr_set_dc_addr`: AH, remote DCT number, DC key.
    pub wr_set_dc_addr: Option<unsafe extern "C" fn(*mut mlx5dv_qp_ex, *mut ibv_ah, u32, u64)>,
    /// See `mlx5dv_wr_mr_interleaved`.
    pub wr_mr_interleaved:
        Option<unsafe extern "C" fn(*mut mlx5dv_qp_ex, *mut mlx5dv_mkey, u32, u32, u16, *mut mlx5dv_mr_interleaved)>,
    /// See `mlx5dv_wr_mr_list`.
    pub wr_mr_list: Option<unsafe extern "C" fn(*mut mlx5dv_qp_ex, *mut mlx5dv_mkey, u32, u16, *mut ibv_sge)>,
    /// See `mlx5dv_wr_mkey_configure`.
    pub wr_mkey_configure:
        Option<unsafe extern "C" fn(*mut mlx5dv_qp_ex, *mut mlx5dv_mkey, u8, *mut mlx5dv_mkey_conf_attr)>,
    /// See `mlx5dv_wr_set_mkey_access_flags`.
    pub wr_set_mkey_access_flags: Option<unsafe extern "C" fn(*mut mlx5dv_qp_ex, u32)>,
    /// See `mlx5dv_wr_set_mkey_layout_list`.
    pub wr_set_mkey_layout_list: Option<unsafe extern "C" fn(*mut mlx5dv_qp_ex, u16, *const ibv_sge)>,
    /// See `mlx5dv_wr_set_mkey_layout_interleaved`.
    pub wr_set_mkey_layout_interleaved:
        Option<unsafe extern "C" fn(*mut mlx5dv_qp_ex, u32, u16, *const mlx5dv_mr_interleaved)>,
    /// See `mlx5dv_wr_set_mkey_sig_block`.
    pub wr_set_mkey_sig_block: Option<unsafe extern "C" fn(*mut mlx5dv_qp_ex, *const mlx5dv_sig_block_attr)>,
    /// See `mlx5dv_wr_raw_wqe`.
    pub wr_raw_wqe: Option<unsafe extern "C" fn(*mut mlx5dv_qp_ex, *const c_void)>,
    /// See `mlx5dv_wr_set_dc_addr_stream` (rdma-core 37+).
    pub wr_set_dc_addr_stream: Option<unsafe extern "C" fn(*mut mlx5dv_qp_ex, *mut ibv_ah, u32, u64, u16)>,
    /// See `mlx5dv_wr_memcpy`.
    pub wr_memcpy: Option<unsafe extern "C" fn(*mut mlx5dv_qp_ex, u32, u64, u32, u64, size_t)>,
    /// See `mlx5dv_wr_set_mkey_crypto`.
    pub wr_set_mkey_crypto: Option<unsafe extern "C" fn(*mut mlx5dv_qp_ex, *const mlx5dv_crypto_attr)>,
}

/// `struct mlx5dv_qp`: what `mlx5dv_init_obj` tells of a QP's rings and doorbell record.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_qp {
    /// Doorbell record (`__be32 *`): word 0 the receive counter, word 1 the send counter.
    pub dbrec: *mut u32,
    /// Send queue ring.
    pub sq: mlx5dv_qp_sq,
    /// Receive queue ring.
    pub rq: mlx5dv_qp_rq,
    /// BlueFlame register.
    pub bf: mlx5dv_qp_bf,
    /// `enum mlx5dv_qp_comp_mask`: which of the fields below were asked for / filled.
    pub comp_mask: u64,
    /// UAR mmap offset (MLX5DV_QP_MASK_UAR_MMAP_OFFSET).
    pub uar_mmap_offset: libc::off_t,
    /// TIR number (raw packet QPs).
    pub tirn: u32,
    /// TIS number (raw packet QPs).
    pub tisn: u32,
    /// RQ number (raw packet QPs).
    pub rqn: u32,
    /// SQ number (raw packet QPs).
    pub sqn: u32,
    /// TIR ICM address.
    pub tir_icm_addr: u64,
}

/// The anonymous `sq` struct of `struct mlx5dv_qp`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_qp_sq {
    /// Ring start.
    pub buf: *mut c_void,
    /// Basic blocks in the ring.
    pub wqe_cnt: u32,
    /// Bytes per basic block.
    pub stride: u32,
}

/// The anonymous `rq` struct of `struct mlx5dv_qp`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_qp_rq {
    /// Ring start.
    pub buf: *mut c_void,
    /// Receive WQEs in the ring.
    pub wqe_cnt: u32,
    /// Bytes per receive WQE.
    pub stride: u32,
}

/// The anonymous `bf` struct of `struct mlx5dv_qp`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_qp_bf {
    /// BlueFlame register address.
    pub reg: *mut c_void,
    /// BlueFlame buffer size.
    pub size: u32,
}

/// `struct mlx5dv_cq`: what `mlx5dv_init_obj` tells of a CQ's ring and doorbell record.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_cq {
    /// Ring start: `cqe_cnt` entries of `cqe_size` bytes.
    pub buf: *mut c_void,
    /// Doorbell record (`__be32 *`): word 0 the consumer index, word 1 the arm word.
    pub dbrec: *mut u32,
    /// Entries in the ring (a power of two).
    pub cqe_cnt: u32,
    /// Bytes per entry: 64, or 128 (the 64-byte CQE is then the second half).
    pub cqe_size: u32,
    /// The UAR page whose CQ doorbell arms this CQ.
    pub cq_uar: *mut c_void,
    /// CQ number.
    pub cqn: u32,
    /// Reserved for extensions.
    pub comp_mask: u64,
}

/// `struct mlx5dv_srq`: what `mlx5dv_init_obj` tells of an SRQ's ring.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_srq {
    /// Ring start.
    pub buf: *mut c_void,
    /// Doorbell record (`__be32 *`).
    pub dbrec: *mut u32,
    /// Bytes per WQE.
    pub stride: u32,
    /// Head index.
    pub head: u32,
    /// Tail index.
    pub tail: u32,
    /// `enum mlx5dv_srq_comp_mask`.
    pub comp_mask: u64,
    /// SRQ number (MLX5DV_SRQ_MASK_SRQN).
    pub srqn: u32,
}

/// `struct mlx5dv_ah`: what `mlx5dv_init_obj` tells of an address handle.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_ah {
    /// The address vector libmlx5 copies into each datagram segment (owned by the AH).
    pub av: *mut mlx5_wqe_av,
    /// Compatibility mask.
    pub comp_mask: u64,
}

/// `struct mlx5dv_obj`: the objects `mlx5dv_init_obj` describes, each an input and an output
/// (only the members this crate uses are typed; the rest are untyped pointers).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_obj {
    /// QP in, `struct mlx5dv_qp` out.
    pub qp: mlx5dv_obj_qp,
    /// CQ in, `struct mlx5dv_cq` out.
    pub cq: mlx5dv_obj_cq,
    /// SRQ in, `struct mlx5dv_srq` out.
    pub srq: mlx5dv_obj_srq,
    /// WQ in, `struct mlx5dv_rwq` out.
    pub rwq: mlx5dv_obj_rwq,
    /// Device memory in, `struct mlx5dv_dm` out.
    pub dm: mlx5dv_obj_dm,
    /// AH in, `struct mlx5dv_ah` out.
    pub ah: mlx5dv_obj_ah,
    /// PD in, `struct mlx5dv_pd` out.
    pub pd: mlx5dv_obj_pd,
    /// DEVX object in, `struct mlx5dv_devx` out (newer than rdma-core 44).
    pub devx: mlx5dv_obj_devx,
}

/// The anonymous `qp` struct of `struct mlx5dv_obj`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_obj_qp {
    /// The QP.
    pub r#in: *mut ibv_qp,
    /// Where to write its description.
    pub out: *mut mlx5dv_qp,
}

/// The anonymous `cq` struct of `struct mlx5dv_obj`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_obj_cq {
    /// The CQ.
    pub r#in: *mut ibv_cq,
    /// Where to write its description.
    pub out: *mut mlx5dv_cq,
}

/// The anonymous `srq` struct of `struct mlx5dv_obj`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_obj_srq {
    /// The SRQ.
    pub r#in: *mut ibv_srq,
    /// Where to write its description.
    pub out: *mut mlx5dv_srq,
}

/// The anonymous `rwq` struct of `struct mlx5dv_obj`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_obj_rwq {
    /// `struct ibv_wq *`.
    pub r#in: *mut c_void,
    /// `struct mlx5dv_rwq *`.
    pub out: *mut c_void,
}

/// The anonymous `dm` struct of `struct mlx5dv_obj`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_obj_dm {
    /// `struct ibv_dm *`.
    pub r#in: *mut c_void,
    /// `struct mlx5dv_dm *`.
    pub out: *mut c_void,
}

/// The anonymous `ah` struct of `struct mlx5dv_obj`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_obj_ah {
    /// `struct ibv_ah *`.
    pub r#in: *mut c_void,
    /// `struct mlx5dv_ah *`.
    pub out: *mut c_void,
}

/// The anonymous `pd` struct of `struct mlx5dv_obj`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_obj_pd {
    /// `struct ibv_pd *`.
    pub r#in: *mut c_void,
    /// `struct mlx5dv_pd *`.
    pub out: *mut c_void,
}

/// The anonymous `devx` struct of `struct mlx5dv_obj`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_obj_devx {
    /// `struct mlx5dv_devx_obj *`.
    pub r#in: *mut c_void,
    /// `struct mlx5dv_devx *`.
    pub out: *mut c_void,
}

/// `enum mlx5dv_obj_type`: describe a QP.
pub const MLX5DV_OBJ_QP: u64 = 1 << 0;
/// `enum mlx5dv_obj_type`: describe a CQ.
pub const MLX5DV_OBJ_CQ: u64 = 1 << 1;
/// `enum mlx5dv_obj_type`: describe an SRQ.
pub const MLX5DV_OBJ_SRQ: u64 = 1 << 2;
/// `enum mlx5dv_obj_type`: describe an address handle.
pub const MLX5DV_OBJ_AH: u64 = 1 << 5;

// The WQE opcodes (anonymous enum; the control segment's opcode byte, and the one a requester
// CQE names in the top byte of `sop_drop_qpn`).
/// No operation.
pub const MLX5_OPCODE_NOP: c_uint = 0x00;
/// Send with invalidate.
pub const MLX5_OPCODE_SEND_INVAL: c_uint = 0x01;
/// RDMA write.
pub const MLX5_OPCODE_RDMA_WRITE: c_uint = 0x08;
/// RDMA write with immediate.
pub const MLX5_OPCODE_RDMA_WRITE_IMM: c_uint = 0x09;
/// Send.
pub const MLX5_OPCODE_SEND: c_uint = 0x0a;
/// Send with immediate.
pub const MLX5_OPCODE_SEND_IMM: c_uint = 0x0b;
/// TCP segmentation offload.
pub const MLX5_OPCODE_TSO: c_uint = 0x0e;
/// RDMA read.
pub const MLX5_OPCODE_RDMA_READ: c_uint = 0x10;
/// Atomic compare-and-swap.
pub const MLX5_OPCODE_ATOMIC_CS: c_uint = 0x11;
/// Atomic fetch-and-add.
pub const MLX5_OPCODE_ATOMIC_FA: c_uint = 0x12;
/// Masked compare-and-swap.
pub const MLX5_OPCODE_ATOMIC_MASKED_CS: c_uint = 0x14;
/// Masked fetch-and-add.
pub const MLX5_OPCODE_ATOMIC_MASKED_FA: c_uint = 0x15;
/// Fast memory registration.
pub const MLX5_OPCODE_FMR: c_uint = 0x19;
/// Local invalidate.
pub const MLX5_OPCODE_LOCAL_INVAL: c_uint = 0x1b;
/// Configuration command.
pub const MLX5_OPCODE_CONFIG_CMD: c_uint = 0x1f;
/// Set protection signature values.
pub const MLX5_OPCODE_SET_PSV: c_uint = 0x20;
/// User memory registration.
pub const MLX5_OPCODE_UMR: c_uint = 0x25;
/// Tag matching.
pub const MLX5_OPCODE_TAG_MATCHING: c_uint = 0x28;
/// Flow table access.
pub const MLX5_OPCODE_FLOW_TBL_ACCESS: c_uint = 0x2c;
/// Memory-to-memory offload.
pub const MLX5_OPCODE_MMO: c_uint = 0x2F;

// The CQE part of the header.
/// `op_own` bit: a read's or atomic's data (up to 32 bytes) was scattered into the CQE.
pub const MLX5_INLINE_SCATTER_32: c_uint = 0x4;
/// `op_own` bit: up to 64 bytes were scattered into the CQE and the 64 before it.
pub const MLX5_INLINE_SCATTER_64: c_uint = 0x8;

// Error CQE syndromes (`mlx5_err_cqe.syndrome`).
/// Local length error.
pub const MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR: c_uint = 0x01;
/// Local QP operation error.
pub const MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR: c_uint = 0x02;
/// Local protection error.
pub const MLX5_CQE_SYNDROME_LOCAL_PROT_ERR: c_uint = 0x04;
/// Flushed: the QP was in error when the WQE came up.
pub const MLX5_CQE_SYNDROME_WR_FLUSH_ERR: c_uint = 0x05;
/// Memory window bind error.
pub const MLX5_CQE_SYNDROME_MW_BIND_ERR: c_uint = 0x06;
/// Bad response.
pub const MLX5_CQE_SYNDROME_BAD_RESP_ERR: c_uint = 0x10;
/// Local access error.
pub const MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR: c_uint = 0x11;
/// Remote invalid request.
pub const MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR: c_uint = 0x12;
/// Remote access error.
pub const MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR: c_uint = 0x13;
/// Remote operation error.
pub const MLX5_CQE_SYNDROME_REMOTE_OP_ERR: c_uint = 0x14;
/// Transport retries exhausted.
pub const MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR: c_uint = 0x15;
/// RNR retries exhausted.
pub const MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR: c_uint = 0x16;
/// Remote aborted.
pub const MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR: c_uint = 0x22;

/// Vendor syndrome of an on-demand-paging page fault.
pub const MLX5_CQE_VENDOR_SYNDROME_ODP_PFAULT: c_uint = 0x93;

// CQE opcodes (`op_own >> 4`) and the owner bit.
/// The owner bit of `op_own`.
pub const MLX5_CQE_OWNER_MASK: c_uint = 1;
/// Requester completion.
pub const MLX5_CQE_REQ: c_uint = 0;
/// Responder: RDMA write with immediate.
pub const MLX5_CQE_RESP_WR_IMM: c_uint = 1;
/// Responder: send.
pub const MLX5_CQE_RESP_SEND: c_uint = 2;
/// Responder: send with immediate.
pub const MLX5_CQE_RESP_SEND_IMM: c_uint = 3;
/// Responder: send with invalidate.
pub const MLX5_CQE_RESP_SEND_INV: c_uint = 4;
/// CQ resize.
pub const MLX5_CQE_RESIZE_CQ: c_uint = 5;
/// No packet (tag matching).
pub const MLX5_CQE_NO_PACKET: c_uint = 6;
/// Signature error.
pub const MLX5_CQE_SIG_ERR: c_uint = 12;
/// Requester error.
pub const MLX5_CQE_REQ_ERR: c_uint = 13;
/// Responder error.
pub const MLX5_CQE_RESP_ERR: c_uint = 14;
/// Not yet written by the device (libmlx5 initialises every entry to it).
pub const MLX5_CQE_INVALID: c_uint = 15;

/// Offset of the CQ doorbell in the UAR page.
pub const MLX5_CQ_DOORBELL: c_uint = 0x20;

/// Arm command: the next solicited completion only.
pub const MLX5_CQ_DB_REQ_NOT_SOL: c_uint = 1 << 24;
/// Arm command: the next completion.
pub const MLX5_CQ_DB_REQ_NOT: c_uint = 0;

/// `struct mlx5_err_cqe`: a CQE whose opcode is `MLX5_CQE_REQ_ERR` or `MLX5_CQE_RESP_ERR`
/// (multi-byte fields big-endian).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5_err_cqe {
    /// Reserved.
    pub rsvd0: [u8; 32],
    /// SRQ number.
    pub srqn: u32,
    /// Reserved.
    pub rsvd1: [u8; 18],
    /// Vendor syndrome (reported as `vendor_err`).
    pub vendor_err_synd: u8,
    /// `MLX5_CQE_SYNDROME_*`.
    pub syndrome: u8,
    /// WQE opcode (top byte) and QP number (low 24 bits).
    pub s_wqe_opcode_qpn: u32,
    /// Index of the WQE that failed.
    pub wqe_counter: u16,
    /// Signature.
    pub signature: u8,
    /// Opcode (high nibble), format, solicited and owner bits.
    pub op_own: u8,
}

/// `struct mlx5_cqe64`: a completion queue entry (multi-byte fields big-endian).
///
/// The C struct opens with an anonymous union of an anonymous struct, `struct mlx5_tm_cqe
/// tm_cqe` and `struct ibv_tmh tmh` (tag matching, which this crate does not use): the anonymous
/// struct's members are declared here in its place, as C code names them (`cqe->wqe_id`).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5_cqe64 {
    /// Reserved.
    pub rsvd0: [u8; 2],
    /// Striding-RQ WQE id.
    pub wqe_id: u16,
    /// Reserved.
    pub rsvd4: [u8; 13],
    /// Path bits.
    pub ml_path: u8,
    /// Reserved.
    pub rsvd20: [u8; 4],
    /// Source LID.
    pub slid: u16,
    /// Flags (GRH in bits 28-29, SL) and source QP number.
    pub flags_rqpn: u32,
    /// Header-data-split and IP extension.
    pub hds_ip_ext: u8,
    /// L4 header type and checksum bits.
    pub l4_hdr_type_etc: u8,
    /// VLAN.
    pub vlan_info: u16,
    /// SRQ number or user index (low 24 bits).
    pub srqn_uidx: u32,
    /// Immediate data, invalidated rkey or P_Key.
    pub imm_inval_pkey: u32,
    /// Application (tag matching).
    pub app: u8,
    /// Application opcode.
    pub app_op: u8,
    /// Application info.
    pub app_info: u16,
    /// Bytes transferred.
    pub byte_cnt: u32,
    /// Completion timestamp.
    pub timestamp: u64,
    /// WQE opcode (top byte, requester CQEs) and QP number (low 24 bits).
    pub sop_drop_qpn: u32,
    /// Index of the completed WQE.
    pub wqe_counter: u16,
    /// Signature.
    pub signature: u8,
    /// Opcode (high nibble), format (bits 2-3), solicited (bit 1) and owner (bit 0).
    pub op_own: u8,
}

/// `enum mlx5dv_cqe_comp_res_format`.
pub type mlx5dv_cqe_comp_res_format = c_uint;
/// Hash.
pub const MLX5DV_CQE_RES_FORMAT_HASH: mlx5dv_cqe_comp_res_format = 1;
/// Checksum.
pub const MLX5DV_CQE_RES_FORMAT_CSUM: mlx5dv_cqe_comp_res_format = 1 << 1;
/// Checksum and stride index.
pub const MLX5DV_CQE_RES_FORMAT_CSUM_STRIDX: mlx5dv_cqe_comp_res_format = 1 << 2;

/// `enum mlx5dv_sw_parsing_offloads`.
pub type mlx5dv_sw_parsing_offloads = c_uint;
/// Software parsing.
pub const MLX5DV_SW_PARSING: mlx5dv_sw_parsing_offloads = 1;
/// Software parsing checksum.
pub const MLX5DV_SW_PARSING_CSUM: mlx5dv_sw_parsing_offloads = 1 << 1;
/// Software parsing LSO.
pub const MLX5DV_SW_PARSING_LSO: mlx5dv_sw_parsing_offloads = 1 << 2;

/// Data segment lkey meaning "no key".
pub const MLX5_INVALID_LKEY: u32 = 0x100;

/// `dqp_dct` bit: the address vector is the extended (DC) one.
pub const MLX5_EXTENDED_UD_AV: u32 = 0x80000000;

/// `fm_ce_se`: write a CQE on completion.
pub const MLX5_WQE_CTRL_CQ_UPDATE: u32 = 2 << 2;
/// `fm_ce_se`: solicited event.
pub const MLX5_WQE_CTRL_SOLICITED: u32 = 1 << 1;
/// `fm_ce_se`: fence (wait for earlier reads and atomics).
pub const MLX5_WQE_CTRL_FENCE: u32 = 4 << 5;
/// `fm_ce_se`: initiator small fence.
pub const MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE: u32 = 1 << 5;

/// Bytes in a send-queue basic block.
pub const MLX5_SEND_WQE_BB: u32 = 64;
/// log2 of [`MLX5_SEND_WQE_BB`].
pub const MLX5_SEND_WQE_SHIFT: u32 = 6;

/// `byte_count` bit of an inline data segment.
pub const MLX5_INLINE_SEG: u32 = 0x80000000;

/// `struct mlx5_wqe_data_seg`: one gather entry (big-endian fields).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5_wqe_data_seg {
    /// Length in bytes.
    pub byte_count: u32,
    /// Local key.
    pub lkey: u32,
    /// Address.
    pub addr: u64,
}

/// `struct mlx5_wqe_ctrl_seg`: the first 16 bytes of every send WQE (big-endian fields; C
/// packs it, so the 16-bit stream id sits at byte 9: it is kept here as its two bytes).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5_wqe_ctrl_seg {
    /// `opmod << 24 | wqe index << 8 | opcode`.
    pub opmod_idx_opcode: u32,
    /// `qpn << 8 | ds` (16-byte units of the WQE).
    pub qpn_ds: u32,
    /// WQE signature.
    pub signature: u8,
    /// DCI stream id (`__be16`, as bytes: unaligned in C).
    pub dci_stream_channel_id: [u8; 2],
    /// Fence, completion and solicited-event flags (`MLX5_WQE_CTRL_*`).
    pub fm_ce_se: u8,
    /// Immediate data (or invalidate key).
    pub imm: u32,
}

/// `struct mlx5_wqe_av`: the address vector of a datagram (UD/DC) WQE (big-endian fields).
#[repr(C)]
#[derive(Copy, Clone)]
pub struct mlx5_wqe_av {
    /// Q_Key (UD) or DC access key (DC).
    pub key: mlx5_wqe_av_key,
    /// Remote QP / DCT number, `MLX5_EXTENDED_UD_AV`.
    pub dqp_dct: u32,
    /// Static rate and service level.
    pub stat_rate_sl: u8,
    /// GRH flag and source LID path bits.
    pub fl_mlid: u8,
    /// Remote LID.
    pub rlid: u16,
    /// Reserved.
    pub reserved0: [u8; 4],
    /// Remote MAC (RoCE).
    pub rmac: [u8; 6],
    /// Traffic class.
    pub tclass: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// GID index and flow label.
    pub grh_gid_fl: u32,
    /// Remote GID.
    pub rgid: [u8; 16],
}

/// The anonymous `key` union of `struct mlx5_wqe_av`.
#[repr(C)]
#[derive(Copy, Clone)]
pub union mlx5_wqe_av_key {
    /// UD: Q_Key.
    pub qkey: mlx5_wqe_av_key_qkey,
    /// DC: access key.
    pub dc_key: u64,
}

/// The anonymous `qkey` struct of `mlx5_wqe_av.key`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5_wqe_av_key_qkey {
    /// Q_Key.
    pub qkey: u32,
    /// Reserved.
    pub reserved: u32,
}

impl core::fmt::Debug for mlx5_wqe_av {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The key is a secret on DC: never shown.
        f.debug_struct("mlx5_wqe_av")
            .field("dqp_dct", &self.dqp_dct)
            .field("rlid", &self.rlid)
            .finish_non_exhaustive()
    }
}

/// `struct mlx5_wqe_datagram_seg`: the address vector segment of a UD/DC WQE.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5_wqe_datagram_seg {
    /// The address vector.
    pub av: mlx5_wqe_av,
}

/// `struct mlx5_wqe_raddr_seg`: remote address of an RDMA or atomic WQE (big-endian fields).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5_wqe_raddr_seg {
    /// Remote address.
    pub raddr: u64,
    /// Remote key.
    pub rkey: u32,
    /// Reserved.
    pub reserved: u32,
}

/// `struct mlx5_wqe_atomic_seg`: operands of an atomic WQE (big-endian fields).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5_wqe_atomic_seg {
    /// Swap value (compare-and-swap) or addend (fetch-and-add).
    pub swap_add: u64,
    /// Compare value.
    pub compare: u64,
}

/// `struct mlx5_wqe_inl_data_seg`: header of inline data (`byte_count | MLX5_INLINE_SEG`,
/// big-endian); the data follows it.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct mlx5_wqe_inl_data_seg {
    /// Length, with `MLX5_INLINE_SEG`.
    pub byte_count: u32,
}

/// `enum mlx5dv_context_attr_flags`.
pub type mlx5dv_context_attr_flags = c_uint;
/// Open the device for DEVX.
pub const MLX5DV_CONTEXT_FLAGS_DEVX: mlx5dv_context_attr_flags = 1;

/// `enum mlx5dv_context_attr_comp_mask` (newer than rdma-core 56).
pub type mlx5dv_context_attr_comp_mask = c_uint;
/// `fds` is valid.
pub const MLX5DV_CONTEXT_ATTR_MASK_FD_ARRAY: mlx5dv_context_attr_comp_mask = 1;

/// `struct mlx5dv_context_attr`: input of `mlx5dv_open_device`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct mlx5dv_context_attr {
    /// `enum mlx5dv_context_attr_flags`.
    pub flags: u32,
    /// `enum mlx5dv_context_attr_comp_mask`.
    pub comp_mask: u64,
    /// File descriptors (newer than rdma-core 56; read only with the mask bit).
    pub fds: *mut ibv_fd_arr,
}

extern "C" {
    /// Creates a CQ with mlx5 attributes.
    pub fn mlx5dv_create_cq(
        context: *mut ibv_context,
        cq_attr: *mut ibv_cq_init_attr_ex,
        mlx5_cq_attr: *mut mlx5dv_cq_init_attr,
    ) -> *mut ibv_cq_ex;
    /// Creates a QP with mlx5 attributes: the only way to create a DCT or a DCI.
    ///
    /// Returns NULL with errno EOPNOTSUPP on a non-mlx5 device (rdma-core 22+).
    pub fn mlx5dv_create_qp(
        context: *mut ibv_context,
        qp_attr: *mut ibv_qp_init_attr_ex,
        mlx5_qp_attr: *mut mlx5dv_qp_init_attr,
    ) -> *mut ibv_qp;
    /// The mlx5 extension of a QP's post API. No type check: only for QPs of an mlx5 device.
    pub fn mlx5dv_qp_ex_from_ibv_qp_ex(qp: *mut ibv_qp_ex) -> *mut mlx5dv_qp_ex;
    /// Queries mlx5 capabilities; returns 0 or an errno (EOPNOTSUPP on non-mlx5 devices).
    pub fn mlx5dv_query_device(ctx_in: *mut ibv_context, attrs_out: *mut mlx5dv_context) -> c_int;
    /// Maps an AH to a QP (rdma-core 36+).
    pub fn mlx5dv_map_ah_to_qp(ah: *mut ibv_ah, qp_num: u32) -> c_int;
    /// Whether the device is driven by the mlx5 provider (rdma-core 22+).
    pub fn mlx5dv_is_supported(device: *mut ibv_device) -> bool;
    /// Opens a device with mlx5 attributes (rdma-core 21+).
    pub fn mlx5dv_open_device(device: *mut ibv_device, attr: *mut mlx5dv_context_attr) -> *mut ibv_context;
    /// Resets a DCI stream id in error without taking the DCI to ERR (rdma-core 37+).
    pub fn mlx5dv_dci_stream_id_reset(qp: *mut ibv_qp, stream_id: u16) -> c_int;
    /// `mlx5dv_init_obj`: fills the outputs of `obj` for the objects `obj_type` names
    /// (`MLX5DV_OBJ_*`); 0 or an errno.
    pub fn mlx5dv_init_obj(obj: *mut mlx5dv_obj, obj_type: u64) -> c_int;
    /// Runs a firmware query command (a PRM mailbox, e.g. `QUERY_DCT`) on a verbs-created QP
    /// through DEVX (rdma-core 20+); 0 or an errno (EOPNOTSUPP without DEVX ops; the kernel's
    /// EINVAL or EPROTONOSUPPORT for a context without DEVX).
    pub fn mlx5dv_devx_qp_query(
        qp: *mut ibv_qp,
        in_: *const c_void,
        inlen: size_t,
        out: *mut c_void,
        outlen: size_t,
    ) -> c_int;
}
