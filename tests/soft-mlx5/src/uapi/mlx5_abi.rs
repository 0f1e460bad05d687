//! `<rdma/mlx5-abi.h>`: the mlx5 driver data (udata) that follows the uverbs commands and responses.
//!
//! The anonymous `union { sq_buf_addr; access_key; }` of `struct mlx5_ib_create_qp` is the field
//! `sq_buf_addr_access_key` of type [`mlx5_ib_create_qp_sq_buf_addr_access_key`] (named here after
//! its members). `RDMA_UAPI_PTR(type, name)` is `__aligned_u64 name` here (the definition from
//! `ib_user_ioctl_verbs.h`, which this header includes); flexible array members are left out.

/// enum: MLX5_QP_FLAG_SIGNATURE.
pub const MLX5_QP_FLAG_SIGNATURE: u32 = 1 << 0;
/// enum: MLX5_QP_FLAG_SCATTER_CQE.
pub const MLX5_QP_FLAG_SCATTER_CQE: u32 = 1 << 1;
/// enum: MLX5_QP_FLAG_TUNNEL_OFFLOADS.
pub const MLX5_QP_FLAG_TUNNEL_OFFLOADS: u32 = 1 << 2;
/// enum: MLX5_QP_FLAG_BFREG_INDEX.
pub const MLX5_QP_FLAG_BFREG_INDEX: u32 = 1 << 3;
/// enum: MLX5_QP_FLAG_TYPE_DCT.
pub const MLX5_QP_FLAG_TYPE_DCT: u32 = 1 << 4;
/// enum: MLX5_QP_FLAG_TYPE_DCI.
pub const MLX5_QP_FLAG_TYPE_DCI: u32 = 1 << 5;
/// enum: MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_UC.
pub const MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_UC: u32 = 1 << 6;
/// enum: MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_MC.
pub const MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_MC: u32 = 1 << 7;
/// enum: MLX5_QP_FLAG_ALLOW_SCATTER_CQE.
pub const MLX5_QP_FLAG_ALLOW_SCATTER_CQE: u32 = 1 << 8;
/// enum: MLX5_QP_FLAG_PACKET_BASED_CREDIT_MODE.
pub const MLX5_QP_FLAG_PACKET_BASED_CREDIT_MODE: u32 = 1 << 9;
/// enum: MLX5_QP_FLAG_UAR_PAGE_INDEX.
pub const MLX5_QP_FLAG_UAR_PAGE_INDEX: u32 = 1 << 10;
/// enum: MLX5_QP_FLAG_DCI_STREAM.
pub const MLX5_QP_FLAG_DCI_STREAM: u32 = 1 << 11;

/// enum: MLX5_SRQ_FLAG_SIGNATURE.
pub const MLX5_SRQ_FLAG_SIGNATURE: u32 = 1 << 0;

/// enum: MLX5_WQ_FLAG_SIGNATURE.
pub const MLX5_WQ_FLAG_SIGNATURE: u32 = 1 << 0;

/// MLX5_IB_UVERBS_ABI_VERSION: the mlx5 driver ABI version.
pub const MLX5_IB_UVERBS_ABI_VERSION: u32 = 1;

/// struct mlx5_ib_alloc_ucontext_req (mlx5-abi.h): the v1 get_context request.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_alloc_ucontext_req {
    /// Blue flame registers requested.
    pub total_num_bfregs: u32,
    /// Of those, low-latency ones.
    pub num_low_latency_bfregs: u32,
}

/// enum mlx5_lib_caps: MLX5_LIB_CAP_4K_UAR.
pub const MLX5_LIB_CAP_4K_UAR: u64 = 1 << 0;
/// enum mlx5_lib_caps: MLX5_LIB_CAP_DYN_UAR.
pub const MLX5_LIB_CAP_DYN_UAR: u64 = 1 << 1;

/// enum mlx5_ib_alloc_uctx_v2_flags: MLX5_IB_ALLOC_UCTX_DEVX.
pub const MLX5_IB_ALLOC_UCTX_DEVX: u32 = 1 << 0;

/// struct mlx5_ib_alloc_ucontext_req_v2 (mlx5-abi.h): the get_context request libmlx5 sends.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_alloc_ucontext_req_v2 {
    /// Blue flame registers requested.
    pub total_num_bfregs: u32,
    /// Of those, low-latency ones.
    pub num_low_latency_bfregs: u32,
    /// enum mlx5_ib_alloc_uctx_v2_flags.
    pub flags: u32,
    /// Comp mask.
    pub comp_mask: u32,
    /// Highest CQE version the library supports.
    pub max_cqe_version: u8,
    /// Reserved.
    pub reserved0: u8,
    /// Reserved.
    pub reserved1: u16,
    /// Reserved.
    pub reserved2: u32,
    /// enum mlx5_lib_caps.
    pub lib_caps: u64,
}

/// enum mlx5_ib_alloc_ucontext_resp_mask: MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_CORE_CLOCK_OFFSET.
pub const MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_CORE_CLOCK_OFFSET: u32 = 1 << 0;
/// enum mlx5_ib_alloc_ucontext_resp_mask: MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_DUMP_FILL_MKEY.
pub const MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_DUMP_FILL_MKEY: u32 = 1 << 1;
/// enum mlx5_ib_alloc_ucontext_resp_mask: MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_ECE.
pub const MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_ECE: u32 = 1 << 2;
/// enum mlx5_ib_alloc_ucontext_resp_mask: MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_SQD2RTS.
pub const MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_SQD2RTS: u32 = 1 << 3;
/// enum mlx5_ib_alloc_ucontext_resp_mask: MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_REAL_TIME_TS.
pub const MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_REAL_TIME_TS: u32 = 1 << 4;
/// enum mlx5_ib_alloc_ucontext_resp_mask: MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_MKEY_UPDATE_TAG.
pub const MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_MKEY_UPDATE_TAG: u32 = 1 << 5;

/// enum mlx5_user_cmds_supp_uhw: MLX5_USER_CMDS_SUPP_UHW_QUERY_DEVICE.
pub const MLX5_USER_CMDS_SUPP_UHW_QUERY_DEVICE: u8 = 1 << 0;
/// enum mlx5_user_cmds_supp_uhw: MLX5_USER_CMDS_SUPP_UHW_CREATE_AH.
pub const MLX5_USER_CMDS_SUPP_UHW_CREATE_AH: u8 = 1 << 1;

/// enum mlx5_user_inline_mode: MLX5_USER_INLINE_MODE_NA (`eth_min_inline` is off by one).
pub const MLX5_USER_INLINE_MODE_NA: u8 = 0;
/// enum mlx5_user_inline_mode: MLX5_USER_INLINE_MODE_NONE.
pub const MLX5_USER_INLINE_MODE_NONE: u8 = 1;
/// enum mlx5_user_inline_mode: MLX5_USER_INLINE_MODE_L2.
pub const MLX5_USER_INLINE_MODE_L2: u8 = 2;
/// enum mlx5_user_inline_mode: MLX5_USER_INLINE_MODE_IP.
pub const MLX5_USER_INLINE_MODE_IP: u8 = 3;
/// enum mlx5_user_inline_mode: MLX5_USER_INLINE_MODE_TCP_UDP.
pub const MLX5_USER_INLINE_MODE_TCP_UDP: u8 = 4;

/// enum: MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM.
pub const MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM: u16 = 1 << 0;
/// enum: MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_REQ_METADATA.
pub const MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_REQ_METADATA: u16 = 1 << 1;
/// enum: MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_SPI_STEERING.
pub const MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_SPI_STEERING: u16 = 1 << 2;
/// enum: MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_FULL_OFFLOAD.
pub const MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_FULL_OFFLOAD: u16 = 1 << 3;
/// enum: MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_TX_IV_IS_ESN.
pub const MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_ESP_AES_GCM_TX_IV_IS_ESN: u16 = 1 << 4;

/// struct mlx5_ib_alloc_ucontext_resp (mlx5-abi.h): the driver part of the get_context response.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_alloc_ucontext_resp {
    /// QP table size.
    pub qp_tab_size: u32,
    /// Blue flame register size.
    pub bf_reg_size: u32,
    /// Blue flame registers allocated.
    pub tot_bfregs: u32,
    /// Cache line size.
    pub cache_line_size: u32,
    /// Max send WQE size.
    pub max_sq_desc_sz: u16,
    /// Max receive WQE size.
    pub max_rq_desc_sz: u16,
    /// Max send WQEBBs.
    pub max_send_wqebb: u32,
    /// Max receive WRs.
    pub max_recv_wr: u32,
    /// Max SRQ receive WRs.
    pub max_srq_recv_wr: u32,
    /// Number of ports.
    pub num_ports: u16,
    /// MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_*.
    pub flow_action_flags: u16,
    /// enum mlx5_ib_alloc_ucontext_resp_mask.
    pub comp_mask: u32,
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
    /// CQE version in use.
    pub cqe_version: u8,
    /// enum mlx5_user_cmds_supp_uhw.
    pub cmds_supp_uhw: u8,
    /// enum mlx5_user_inline_mode, plus one.
    pub eth_min_inline: u8,
    /// Bitmap of clock info page versions (MLX5_IB_CLOCK_INFO_V1).
    pub clock_info_versions: u8,
    /// Offset of the core clock in its BAR page.
    pub hca_core_clock_offset: u64,
    /// log2 of the UAR size.
    pub log_uar_size: u32,
    /// UARs per system page.
    pub num_uars_per_page: u32,
    /// Dynamic blue flame registers.
    pub num_dyn_bfregs: u32,
    /// Dump fill mkey.
    pub dump_fill_mkey: u32,
}

/// struct mlx5_ib_alloc_pd_resp (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_alloc_pd_resp {
    /// PD number.
    pub pdn: u32,
}

/// struct mlx5_ib_tso_caps (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_tso_caps {
    /// Max TSO payload in bytes.
    pub max_tso: u32,
    /// Bit (1 << ib_qp_type) per QP type that supports TSO.
    pub supported_qpts: u32,
}

/// struct mlx5_ib_rss_caps (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_rss_caps {
    /// enum mlx5_rx_hash_fields.
    pub rx_hash_fields_mask: u64,
    /// enum mlx5_rx_hash_function_flags.
    pub rx_hash_function: u8,
    /// Reserved.
    pub reserved: [u8; 7],
}

/// enum mlx5_ib_cqe_comp_res_format: MLX5_IB_CQE_RES_FORMAT_HASH.
pub const MLX5_IB_CQE_RES_FORMAT_HASH: u32 = 1 << 0;
/// enum mlx5_ib_cqe_comp_res_format: MLX5_IB_CQE_RES_FORMAT_CSUM.
pub const MLX5_IB_CQE_RES_FORMAT_CSUM: u32 = 1 << 1;
/// enum mlx5_ib_cqe_comp_res_format: MLX5_IB_CQE_RES_FORMAT_CSUM_STRIDX.
pub const MLX5_IB_CQE_RES_FORMAT_CSUM_STRIDX: u32 = 1 << 2;

/// struct mlx5_ib_cqe_comp_caps (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_cqe_comp_caps {
    /// Max compression session size.
    pub max_num: u32,
    /// enum mlx5_ib_cqe_comp_res_format.
    pub supported_format: u32,
}

/// enum mlx5_ib_packet_pacing_cap_flags: MLX5_IB_PP_SUPPORT_BURST.
pub const MLX5_IB_PP_SUPPORT_BURST: u8 = 1 << 0;

/// struct mlx5_packet_pacing_caps (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_packet_pacing_caps {
    /// Min rate limit in kbps.
    pub qp_rate_limit_min: u32,
    /// Max rate limit in kbps.
    pub qp_rate_limit_max: u32,
    /// Bit (1 << ib_qp_type) per QP type that supports pacing.
    pub supported_qpts: u32,
    /// enum mlx5_ib_packet_pacing_cap_flags.
    pub cap_flags: u8,
    /// Reserved.
    pub reserved: [u8; 3],
}

/// enum mlx5_ib_mpw_caps: MPW_RESERVED.
pub const MPW_RESERVED: u32 = 1 << 0;
/// enum mlx5_ib_mpw_caps: MLX5_IB_ALLOW_MPW.
pub const MLX5_IB_ALLOW_MPW: u32 = 1 << 1;
/// enum mlx5_ib_mpw_caps: MLX5_IB_SUPPORT_EMPW.
pub const MLX5_IB_SUPPORT_EMPW: u32 = 1 << 2;

/// enum mlx5_ib_sw_parsing_offloads: MLX5_IB_SW_PARSING.
pub const MLX5_IB_SW_PARSING: u32 = 1 << 0;
/// enum mlx5_ib_sw_parsing_offloads: MLX5_IB_SW_PARSING_CSUM.
pub const MLX5_IB_SW_PARSING_CSUM: u32 = 1 << 1;
/// enum mlx5_ib_sw_parsing_offloads: MLX5_IB_SW_PARSING_LSO.
pub const MLX5_IB_SW_PARSING_LSO: u32 = 1 << 2;

/// struct mlx5_ib_sw_parsing_caps (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_sw_parsing_caps {
    /// enum mlx5_ib_sw_parsing_offloads.
    pub sw_parsing_offloads: u32,
    /// Bit (1 << ib_qp_type) per QP type that supports it.
    pub supported_qpts: u32,
}

/// struct mlx5_ib_striding_rq_caps (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_striding_rq_caps {
    /// Min log2 stride size.
    pub min_single_stride_log_num_of_bytes: u32,
    /// Max log2 stride size.
    pub max_single_stride_log_num_of_bytes: u32,
    /// Min log2 strides per WQE.
    pub min_single_wqe_log_num_of_strides: u32,
    /// Max log2 strides per WQE.
    pub max_single_wqe_log_num_of_strides: u32,
    /// Bit (1 << ib_qp_type) per QP type that supports it.
    pub supported_qpts: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct mlx5_ib_dci_streams_caps (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_dci_streams_caps {
    /// Max log2 concurrent streams (spelled as in C).
    pub max_log_num_concurent: u8,
    /// Max log2 errored streams.
    pub max_log_num_errored: u8,
}

/// enum mlx5_ib_query_dev_resp_flags: MLX5_IB_QUERY_DEV_RESP_FLAGS_CQE_128B_COMP.
pub const MLX5_IB_QUERY_DEV_RESP_FLAGS_CQE_128B_COMP: u32 = 1 << 0;
/// enum mlx5_ib_query_dev_resp_flags: MLX5_IB_QUERY_DEV_RESP_FLAGS_CQE_128B_PAD.
pub const MLX5_IB_QUERY_DEV_RESP_FLAGS_CQE_128B_PAD: u32 = 1 << 1;
/// enum mlx5_ib_query_dev_resp_flags: MLX5_IB_QUERY_DEV_RESP_PACKET_BASED_CREDIT_MODE.
pub const MLX5_IB_QUERY_DEV_RESP_PACKET_BASED_CREDIT_MODE: u32 = 1 << 2;
/// enum mlx5_ib_query_dev_resp_flags: MLX5_IB_QUERY_DEV_RESP_FLAGS_SCAT2CQE_DCT.
pub const MLX5_IB_QUERY_DEV_RESP_FLAGS_SCAT2CQE_DCT: u32 = 1 << 3;

/// enum mlx5_ib_tunnel_offloads: MLX5_IB_TUNNELED_OFFLOADS_VXLAN.
pub const MLX5_IB_TUNNELED_OFFLOADS_VXLAN: u32 = 1 << 0;
/// enum mlx5_ib_tunnel_offloads: MLX5_IB_TUNNELED_OFFLOADS_GRE.
pub const MLX5_IB_TUNNELED_OFFLOADS_GRE: u32 = 1 << 1;
/// enum mlx5_ib_tunnel_offloads: MLX5_IB_TUNNELED_OFFLOADS_GENEVE.
pub const MLX5_IB_TUNNELED_OFFLOADS_GENEVE: u32 = 1 << 2;
/// enum mlx5_ib_tunnel_offloads: MLX5_IB_TUNNELED_OFFLOADS_MPLS_GRE.
pub const MLX5_IB_TUNNELED_OFFLOADS_MPLS_GRE: u32 = 1 << 3;
/// enum mlx5_ib_tunnel_offloads: MLX5_IB_TUNNELED_OFFLOADS_MPLS_UDP.
pub const MLX5_IB_TUNNELED_OFFLOADS_MPLS_UDP: u32 = 1 << 4;

/// struct mlx5_ib_query_device_resp (mlx5-abi.h): the driver part of the ex_query_device response.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_query_device_resp {
    /// Comp mask.
    pub comp_mask: u32,
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
    /// TSO capabilities.
    pub tso_caps: mlx5_ib_tso_caps,
    /// RSS capabilities.
    pub rss_caps: mlx5_ib_rss_caps,
    /// CQE compression capabilities.
    pub cqe_comp_caps: mlx5_ib_cqe_comp_caps,
    /// Packet pacing capabilities.
    pub packet_pacing_caps: mlx5_packet_pacing_caps,
    /// enum mlx5_ib_mpw_caps.
    pub mlx5_ib_support_multi_pkt_send_wqes: u32,
    /// enum mlx5_ib_query_dev_resp_flags.
    pub flags: u32,
    /// Software parsing capabilities.
    pub sw_parsing_caps: mlx5_ib_sw_parsing_caps,
    /// Striding RQ capabilities.
    pub striding_rq_caps: mlx5_ib_striding_rq_caps,
    /// enum mlx5_ib_tunnel_offloads.
    pub tunnel_offloads_caps: u32,
    /// DCI stream capabilities.
    pub dci_streams_caps: mlx5_ib_dci_streams_caps,
    /// Reserved.
    pub reserved: u16,
}

/// enum mlx5_ib_create_cq_flags: MLX5_IB_CREATE_CQ_FLAGS_CQE_128B_PAD.
pub const MLX5_IB_CREATE_CQ_FLAGS_CQE_128B_PAD: u16 = 1 << 0;
/// enum mlx5_ib_create_cq_flags: MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX.
pub const MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX: u16 = 1 << 1;
/// enum mlx5_ib_create_cq_flags: MLX5_IB_CREATE_CQ_FLAGS_REAL_TIME_TS.
pub const MLX5_IB_CREATE_CQ_FLAGS_REAL_TIME_TS: u16 = 1 << 2;

/// struct mlx5_ib_create_cq (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_create_cq {
    /// CQ buffer address.
    pub buf_addr: u64,
    /// Doorbell record address.
    pub db_addr: u64,
    /// CQE size (64 or 128).
    pub cqe_size: u32,
    /// Enable CQE compression.
    pub cqe_comp_en: u8,
    /// enum mlx5_ib_cqe_comp_res_format.
    pub cqe_comp_res_format: u8,
    /// enum mlx5_ib_create_cq_flags.
    pub flags: u16,
    /// UAR page index (MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX).
    pub uar_page_index: u16,
    /// Reserved.
    pub reserved0: u16,
    /// Reserved.
    pub reserved1: u32,
}

/// struct mlx5_ib_create_cq_resp (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_create_cq_resp {
    /// CQ number.
    pub cqn: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct mlx5_ib_resize_cq (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_resize_cq {
    /// New CQ buffer address.
    pub buf_addr: u64,
    /// CQE size.
    pub cqe_size: u16,
    /// Reserved.
    pub reserved0: u16,
    /// Reserved.
    pub reserved1: u32,
}

/// struct mlx5_ib_create_srq (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_create_srq {
    /// SRQ buffer address.
    pub buf_addr: u64,
    /// Doorbell record address.
    pub db_addr: u64,
    /// MLX5_SRQ_FLAG_*.
    pub flags: u32,
    /// Explicit padding.
    pub reserved0: u32,
    /// User index (CQE version 1).
    pub uidx: u32,
    /// Reserved.
    pub reserved1: u32,
}

/// struct mlx5_ib_create_srq_resp (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_create_srq_resp {
    /// SRQ number.
    pub srqn: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct mlx5_ib_create_qp_dci_streams (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_create_qp_dci_streams {
    /// log2 concurrent streams (spelled as in C).
    pub log_num_concurent: u8,
    /// log2 errored streams.
    pub log_num_errored: u8,
}

/// struct mlx5_ib_create_qp (mlx5-abi.h): the driver part of create_qp.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_create_qp {
    /// QP buffer address.
    pub buf_addr: u64,
    /// Doorbell record address.
    pub db_addr: u64,
    /// SQ WQEBBs.
    pub sq_wqe_count: u32,
    /// RQ WQEs.
    pub rq_wqe_count: u32,
    /// log2 RQ WQE size.
    pub rq_wqe_shift: u32,
    /// MLX5_QP_FLAG_*.
    pub flags: u32,
    /// User index (CQE version 1).
    pub uidx: u32,
    /// Blue flame register index (MLX5_QP_FLAG_BFREG_INDEX / UAR_PAGE_INDEX).
    pub bfreg_index: u32,
    /// C's anonymous `union { sq_buf_addr; access_key; }`.
    pub sq_buf_addr_access_key: mlx5_ib_create_qp_sq_buf_addr_access_key,
    /// ECE options.
    pub ece_options: u32,
    /// DCI stream parameters (MLX5_QP_FLAG_DCI_STREAM).
    pub dci_streams: mlx5_ib_create_qp_dci_streams,
    /// Reserved.
    pub reserved: u16,
}

impl mlx5_ib_create_qp {
    /// C's `sq_buf_addr` (a member of the anonymous union).
    pub fn sq_buf_addr(&self) -> u64 {
        // SAFETY: both union members are a u64 at offset 0; every bit pattern is a valid u64.
        unsafe { self.sq_buf_addr_access_key.sq_buf_addr }
    }

    /// C's `access_key` (a member of the anonymous union).
    pub fn access_key(&self) -> u64 {
        // SAFETY: both union members are a u64 at offset 0; every bit pattern is a valid u64.
        unsafe { self.sq_buf_addr_access_key.access_key }
    }
}

/// The anonymous union of struct mlx5_ib_create_qp (named here after its members).
#[repr(C)]
#[derive(Clone, Copy)]
pub union mlx5_ib_create_qp_sq_buf_addr_access_key {
    /// Separate SQ buffer (raw packet QPs).
    pub sq_buf_addr: u64,
    /// DC access key (MLX5_QP_FLAG_TYPE_DCT).
    pub access_key: u64,
}

impl Default for mlx5_ib_create_qp_sq_buf_addr_access_key {
    fn default() -> Self {
        Self { sq_buf_addr: 0 }
    }
}

impl core::fmt::Debug for mlx5_ib_create_qp_sq_buf_addr_access_key {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // SAFETY: both members are a u64 at offset 0; every bit pattern is a valid u64.
        let v = unsafe { self.sq_buf_addr };
        f.debug_struct("sq_buf_addr_access_key")
            .field("sq_buf_addr", &v)
            .field("access_key", &v)
            .finish()
    }
}

/// enum mlx5_rx_hash_function_flags: MLX5_RX_HASH_FUNC_TOEPLITZ.
pub const MLX5_RX_HASH_FUNC_TOEPLITZ: u8 = 1 << 0;

/// enum mlx5_rx_hash_fields: MLX5_RX_HASH_SRC_IPV4.
pub const MLX5_RX_HASH_SRC_IPV4: u64 = 1 << 0;
/// enum mlx5_rx_hash_fields: MLX5_RX_HASH_DST_IPV4.
pub const MLX5_RX_HASH_DST_IPV4: u64 = 1 << 1;
/// enum mlx5_rx_hash_fields: MLX5_RX_HASH_SRC_IPV6.
pub const MLX5_RX_HASH_SRC_IPV6: u64 = 1 << 2;
/// enum mlx5_rx_hash_fields: MLX5_RX_HASH_DST_IPV6.
pub const MLX5_RX_HASH_DST_IPV6: u64 = 1 << 3;
/// enum mlx5_rx_hash_fields: MLX5_RX_HASH_SRC_PORT_TCP.
pub const MLX5_RX_HASH_SRC_PORT_TCP: u64 = 1 << 4;
/// enum mlx5_rx_hash_fields: MLX5_RX_HASH_DST_PORT_TCP.
pub const MLX5_RX_HASH_DST_PORT_TCP: u64 = 1 << 5;
/// enum mlx5_rx_hash_fields: MLX5_RX_HASH_SRC_PORT_UDP.
pub const MLX5_RX_HASH_SRC_PORT_UDP: u64 = 1 << 6;
/// enum mlx5_rx_hash_fields: MLX5_RX_HASH_DST_PORT_UDP.
pub const MLX5_RX_HASH_DST_PORT_UDP: u64 = 1 << 7;
/// enum mlx5_rx_hash_fields: MLX5_RX_HASH_IPSEC_SPI.
pub const MLX5_RX_HASH_IPSEC_SPI: u64 = 1 << 8;
/// enum mlx5_rx_hash_fields: MLX5_RX_HASH_INNER.
pub const MLX5_RX_HASH_INNER: u64 = 1 << 31;

/// struct mlx5_ib_create_qp_rss (mlx5-abi.h): the driver part of create_qp for RSS raw packet QPs.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mlx5_ib_create_qp_rss {
    /// enum mlx5_rx_hash_fields.
    pub rx_hash_fields_mask: u64,
    /// enum mlx5_rx_hash_function_flags.
    pub rx_hash_function: u8,
    /// Key length (Toeplitz).
    pub rx_key_len: u8,
    /// Reserved.
    pub reserved: [u8; 6],
    /// Hash key (Toeplitz).
    pub rx_hash_key: [u8; 128],
    /// Comp mask.
    pub comp_mask: u32,
    /// MLX5_QP_FLAG_*.
    pub flags: u32,
}

impl Default for mlx5_ib_create_qp_rss {
    fn default() -> Self {
        Self {
            rx_hash_fields_mask: 0,
            rx_hash_function: 0,
            rx_key_len: 0,
            reserved: [0; 6],
            rx_hash_key: [0; 128],
            comp_mask: 0,
            flags: 0,
        }
    }
}

/// enum mlx5_ib_create_qp_resp_mask: MLX5_IB_CREATE_QP_RESP_MASK_TIRN.
pub const MLX5_IB_CREATE_QP_RESP_MASK_TIRN: u32 = 1 << 0;
/// enum mlx5_ib_create_qp_resp_mask: MLX5_IB_CREATE_QP_RESP_MASK_TISN.
pub const MLX5_IB_CREATE_QP_RESP_MASK_TISN: u32 = 1 << 1;
/// enum mlx5_ib_create_qp_resp_mask: MLX5_IB_CREATE_QP_RESP_MASK_RQN.
pub const MLX5_IB_CREATE_QP_RESP_MASK_RQN: u32 = 1 << 2;
/// enum mlx5_ib_create_qp_resp_mask: MLX5_IB_CREATE_QP_RESP_MASK_SQN.
pub const MLX5_IB_CREATE_QP_RESP_MASK_SQN: u32 = 1 << 3;
/// enum mlx5_ib_create_qp_resp_mask: MLX5_IB_CREATE_QP_RESP_MASK_TIR_ICM_ADDR.
pub const MLX5_IB_CREATE_QP_RESP_MASK_TIR_ICM_ADDR: u32 = 1 << 4;

/// struct mlx5_ib_create_qp_resp (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_create_qp_resp {
    /// Blue flame register index the kernel chose.
    pub bfreg_index: u32,
    /// ECE options.
    pub ece_options: u32,
    /// enum mlx5_ib_create_qp_resp_mask.
    pub comp_mask: u32,
    /// TIR number.
    pub tirn: u32,
    /// TIS number.
    pub tisn: u32,
    /// RQ number.
    pub rqn: u32,
    /// SQ number.
    pub sqn: u32,
    /// Reserved.
    pub reserved1: u32,
    /// TIR ICM address (plain `__u64` in C).
    pub tir_icm_addr: u64,
}

/// struct mlx5_ib_alloc_mw (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_alloc_mw {
    /// Comp mask.
    pub comp_mask: u32,
    /// KLM entries.
    pub num_klms: u8,
    /// Reserved.
    pub reserved1: u8,
    /// Reserved.
    pub reserved2: u16,
}

/// enum mlx5_ib_create_wq_mask: MLX5_IB_CREATE_WQ_STRIDING_RQ.
pub const MLX5_IB_CREATE_WQ_STRIDING_RQ: u32 = 1 << 0;

/// struct mlx5_ib_create_wq (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_create_wq {
    /// WQ buffer address.
    pub buf_addr: u64,
    /// Doorbell record address.
    pub db_addr: u64,
    /// RQ WQEs.
    pub rq_wqe_count: u32,
    /// log2 RQ WQE size.
    pub rq_wqe_shift: u32,
    /// User index.
    pub user_index: u32,
    /// MLX5_WQ_FLAG_*.
    pub flags: u32,
    /// enum mlx5_ib_create_wq_mask.
    pub comp_mask: u32,
    /// log2 stride size (striding RQ).
    pub single_stride_log_num_of_bytes: u32,
    /// log2 strides per WQE (striding RQ).
    pub single_wqe_log_num_of_strides: u32,
    /// Two-byte shift enable.
    pub two_byte_shift_en: u32,
}

/// struct mlx5_ib_create_ah_resp (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_create_ah_resp {
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
    /// Destination MAC (ETH_ALEN bytes).
    pub dmac: [u8; 6],
    /// Reserved.
    pub reserved: [u8; 6],
}

/// struct mlx5_ib_burst_info (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_burst_info {
    /// Max burst size.
    pub max_burst_sz: u32,
    /// Typical packet size.
    pub typical_pkt_sz: u16,
    /// Reserved.
    pub reserved: u16,
}

/// struct mlx5_ib_modify_qp (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_modify_qp {
    /// Comp mask.
    pub comp_mask: u32,
    /// Packet pacing burst.
    pub burst_info: mlx5_ib_burst_info,
    /// ECE options.
    pub ece_options: u32,
}

/// struct mlx5_ib_modify_qp_resp (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_modify_qp_resp {
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
    /// DCT number (DCT moved to RTR).
    pub dctn: u32,
    /// ECE options.
    pub ece_options: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct mlx5_ib_create_wq_resp (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_create_wq_resp {
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct mlx5_ib_create_rwq_ind_tbl_resp (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_create_rwq_ind_tbl_resp {
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct mlx5_ib_modify_wq (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_modify_wq {
    /// Comp mask.
    pub comp_mask: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct mlx5_ib_clock_info (mlx5-abi.h): the clock info page (MLX5_IB_MMAP_CLOCK_INFO).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_clock_info {
    /// Sequence counter (odd or MLX5_IB_CLOCK_INFO_KERNEL_UPDATING while updating).
    pub sign: u32,
    /// Reserved.
    pub resv: u32,
    /// Nanoseconds at `cycles`.
    pub nsec: u64,
    /// Cycle count of the last update.
    pub cycles: u64,
    /// Fractional nanoseconds.
    pub frac: u64,
    /// Cycle-to-ns multiplier.
    pub mult: u32,
    /// Cycle-to-ns shift.
    pub shift: u32,
    /// Cycle counter mask.
    pub mask: u64,
    /// Overflow period.
    pub overflow_period: u64,
}

/// enum mlx5_ib_mmap_cmd: MLX5_IB_MMAP_REGULAR_PAGE.
pub const MLX5_IB_MMAP_REGULAR_PAGE: u32 = 0;
/// enum mlx5_ib_mmap_cmd: MLX5_IB_MMAP_GET_CONTIGUOUS_PAGES.
pub const MLX5_IB_MMAP_GET_CONTIGUOUS_PAGES: u32 = 1;
/// enum mlx5_ib_mmap_cmd: MLX5_IB_MMAP_WC_PAGE.
pub const MLX5_IB_MMAP_WC_PAGE: u32 = 2;
/// enum mlx5_ib_mmap_cmd: MLX5_IB_MMAP_NC_PAGE.
pub const MLX5_IB_MMAP_NC_PAGE: u32 = 3;
/// enum mlx5_ib_mmap_cmd: MLX5_IB_MMAP_CORE_CLOCK.
pub const MLX5_IB_MMAP_CORE_CLOCK: u32 = 5;
/// enum mlx5_ib_mmap_cmd: MLX5_IB_MMAP_ALLOC_WC.
pub const MLX5_IB_MMAP_ALLOC_WC: u32 = 6;
/// enum mlx5_ib_mmap_cmd: MLX5_IB_MMAP_CLOCK_INFO.
pub const MLX5_IB_MMAP_CLOCK_INFO: u32 = 7;
/// enum mlx5_ib_mmap_cmd: MLX5_IB_MMAP_DEVICE_MEM.
pub const MLX5_IB_MMAP_DEVICE_MEM: u32 = 8;

/// enum: MLX5_IB_CLOCK_INFO_KERNEL_UPDATING (`mlx5_ib_clock_info.sign` while updating).
pub const MLX5_IB_CLOCK_INFO_KERNEL_UPDATING: u32 = 1;

/// enum: MLX5_IB_CLOCK_INFO_V1, a bit index in `mlx5_ib_alloc_ucontext_resp.clock_info_versions`.
pub const MLX5_IB_CLOCK_INFO_V1: u32 = 0;

/// struct mlx5_ib_flow_counters_desc (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_flow_counters_desc {
    /// Counter description.
    pub description: u32,
    /// Counter index.
    pub index: u32,
}

/// struct mlx5_ib_flow_counters_data (mlx5-abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_flow_counters_data {
    /// Address of `ncounters` struct mlx5_ib_flow_counters_desc (`RDMA_UAPI_PTR`).
    pub counters_data: u64,
    /// Number of counters.
    pub ncounters: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct mlx5_ib_create_flow (mlx5-abi.h); `struct mlx5_ib_flow_counters_data data[]` omitted.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default)]
pub struct mlx5_ib_create_flow {
    /// Entries of `data[]`.
    pub ncounters_data: u32,
    /// Reserved.
    pub reserved: u32,
}
