//! `<rdma/ib_user_verbs.h>`: the uverbs write() ABI (command numbers, headers, requests, responses).
//!
//! Flexible array members (`driver_data[]`, `driver_data[0]`) are left out: each struct is the
//! fixed part, whose size C's `sizeof` also gives. A few such structs are `align(8)` because their
//! `__aligned_u64 driver_data[]` makes the C struct 8-aligned while the fixed part is only 4-aligned
//! (the layout test proves it). Not mirrored: the kernel-posted work requests and polling
//! (`ib_uverbs_poll_cq`, `ib_uverbs_wc`, `ib_uverbs_sge`, `ib_uverbs_send_wr`, `ib_uverbs_post_*`,
//! `ib_uverbs_recv_wr`) and flow steering (`ib_uverbs_flow_*`, `ib_uverbs_*_flow`), which mlx5
//! does not route through the kernel in this emulation.

/// IB_USER_VERBS_ABI_VERSION: the uverbs ABI version in sysfs `abi_version`.
pub const IB_USER_VERBS_ABI_VERSION: u32 = 6;
/// IB_USER_VERBS_CMD_THRESHOLD: first extended-only command number.
pub const IB_USER_VERBS_CMD_THRESHOLD: u32 = 50;

// enum ib_uverbs_write_cmds

/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_GET_CONTEXT.
pub const IB_USER_VERBS_CMD_GET_CONTEXT: u32 = 0;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_QUERY_DEVICE.
pub const IB_USER_VERBS_CMD_QUERY_DEVICE: u32 = 1;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_QUERY_PORT.
pub const IB_USER_VERBS_CMD_QUERY_PORT: u32 = 2;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_ALLOC_PD.
pub const IB_USER_VERBS_CMD_ALLOC_PD: u32 = 3;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_DEALLOC_PD.
pub const IB_USER_VERBS_CMD_DEALLOC_PD: u32 = 4;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_CREATE_AH.
pub const IB_USER_VERBS_CMD_CREATE_AH: u32 = 5;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_MODIFY_AH.
pub const IB_USER_VERBS_CMD_MODIFY_AH: u32 = 6;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_QUERY_AH.
pub const IB_USER_VERBS_CMD_QUERY_AH: u32 = 7;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_DESTROY_AH.
pub const IB_USER_VERBS_CMD_DESTROY_AH: u32 = 8;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_REG_MR.
pub const IB_USER_VERBS_CMD_REG_MR: u32 = 9;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_REG_SMR.
pub const IB_USER_VERBS_CMD_REG_SMR: u32 = 10;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_REREG_MR.
pub const IB_USER_VERBS_CMD_REREG_MR: u32 = 11;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_QUERY_MR.
pub const IB_USER_VERBS_CMD_QUERY_MR: u32 = 12;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_DEREG_MR.
pub const IB_USER_VERBS_CMD_DEREG_MR: u32 = 13;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_ALLOC_MW.
pub const IB_USER_VERBS_CMD_ALLOC_MW: u32 = 14;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_BIND_MW.
pub const IB_USER_VERBS_CMD_BIND_MW: u32 = 15;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_DEALLOC_MW.
pub const IB_USER_VERBS_CMD_DEALLOC_MW: u32 = 16;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL.
pub const IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL: u32 = 17;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_CREATE_CQ.
pub const IB_USER_VERBS_CMD_CREATE_CQ: u32 = 18;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_RESIZE_CQ.
pub const IB_USER_VERBS_CMD_RESIZE_CQ: u32 = 19;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_DESTROY_CQ.
pub const IB_USER_VERBS_CMD_DESTROY_CQ: u32 = 20;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_POLL_CQ.
pub const IB_USER_VERBS_CMD_POLL_CQ: u32 = 21;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_PEEK_CQ.
pub const IB_USER_VERBS_CMD_PEEK_CQ: u32 = 22;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_REQ_NOTIFY_CQ.
pub const IB_USER_VERBS_CMD_REQ_NOTIFY_CQ: u32 = 23;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_CREATE_QP.
pub const IB_USER_VERBS_CMD_CREATE_QP: u32 = 24;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_QUERY_QP.
pub const IB_USER_VERBS_CMD_QUERY_QP: u32 = 25;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_MODIFY_QP.
pub const IB_USER_VERBS_CMD_MODIFY_QP: u32 = 26;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_DESTROY_QP.
pub const IB_USER_VERBS_CMD_DESTROY_QP: u32 = 27;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_POST_SEND.
pub const IB_USER_VERBS_CMD_POST_SEND: u32 = 28;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_POST_RECV.
pub const IB_USER_VERBS_CMD_POST_RECV: u32 = 29;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_ATTACH_MCAST.
pub const IB_USER_VERBS_CMD_ATTACH_MCAST: u32 = 30;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_DETACH_MCAST.
pub const IB_USER_VERBS_CMD_DETACH_MCAST: u32 = 31;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_CREATE_SRQ.
pub const IB_USER_VERBS_CMD_CREATE_SRQ: u32 = 32;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_MODIFY_SRQ.
pub const IB_USER_VERBS_CMD_MODIFY_SRQ: u32 = 33;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_QUERY_SRQ.
pub const IB_USER_VERBS_CMD_QUERY_SRQ: u32 = 34;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_DESTROY_SRQ.
pub const IB_USER_VERBS_CMD_DESTROY_SRQ: u32 = 35;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_POST_SRQ_RECV.
pub const IB_USER_VERBS_CMD_POST_SRQ_RECV: u32 = 36;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_OPEN_XRCD.
pub const IB_USER_VERBS_CMD_OPEN_XRCD: u32 = 37;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_CLOSE_XRCD.
pub const IB_USER_VERBS_CMD_CLOSE_XRCD: u32 = 38;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_CREATE_XSRQ.
pub const IB_USER_VERBS_CMD_CREATE_XSRQ: u32 = 39;
/// enum ib_uverbs_write_cmds: IB_USER_VERBS_CMD_OPEN_QP.
pub const IB_USER_VERBS_CMD_OPEN_QP: u32 = 40;

// Extended commands (sent with IB_USER_VERBS_CMD_FLAG_EXTENDED)

/// Extended command: IB_USER_VERBS_EX_CMD_QUERY_DEVICE.
pub const IB_USER_VERBS_EX_CMD_QUERY_DEVICE: u32 = IB_USER_VERBS_CMD_QUERY_DEVICE;
/// Extended command: IB_USER_VERBS_EX_CMD_CREATE_CQ.
pub const IB_USER_VERBS_EX_CMD_CREATE_CQ: u32 = IB_USER_VERBS_CMD_CREATE_CQ;
/// Extended command: IB_USER_VERBS_EX_CMD_CREATE_QP.
pub const IB_USER_VERBS_EX_CMD_CREATE_QP: u32 = IB_USER_VERBS_CMD_CREATE_QP;
/// Extended command: IB_USER_VERBS_EX_CMD_MODIFY_QP.
pub const IB_USER_VERBS_EX_CMD_MODIFY_QP: u32 = IB_USER_VERBS_CMD_MODIFY_QP;
/// Extended command: IB_USER_VERBS_EX_CMD_CREATE_FLOW.
pub const IB_USER_VERBS_EX_CMD_CREATE_FLOW: u32 = IB_USER_VERBS_CMD_THRESHOLD;
/// Extended command: IB_USER_VERBS_EX_CMD_DESTROY_FLOW.
pub const IB_USER_VERBS_EX_CMD_DESTROY_FLOW: u32 = IB_USER_VERBS_CMD_THRESHOLD + 1;
/// Extended command: IB_USER_VERBS_EX_CMD_CREATE_WQ.
pub const IB_USER_VERBS_EX_CMD_CREATE_WQ: u32 = IB_USER_VERBS_CMD_THRESHOLD + 2;
/// Extended command: IB_USER_VERBS_EX_CMD_MODIFY_WQ.
pub const IB_USER_VERBS_EX_CMD_MODIFY_WQ: u32 = IB_USER_VERBS_CMD_THRESHOLD + 3;
/// Extended command: IB_USER_VERBS_EX_CMD_DESTROY_WQ.
pub const IB_USER_VERBS_EX_CMD_DESTROY_WQ: u32 = IB_USER_VERBS_CMD_THRESHOLD + 4;
/// Extended command: IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL.
pub const IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL: u32 = IB_USER_VERBS_CMD_THRESHOLD + 5;
/// Extended command: IB_USER_VERBS_EX_CMD_DESTROY_RWQ_IND_TBL.
pub const IB_USER_VERBS_EX_CMD_DESTROY_RWQ_IND_TBL: u32 = IB_USER_VERBS_CMD_THRESHOLD + 6;
/// Extended command: IB_USER_VERBS_EX_CMD_MODIFY_CQ.
pub const IB_USER_VERBS_EX_CMD_MODIFY_CQ: u32 = IB_USER_VERBS_CMD_THRESHOLD + 7;

/// struct ib_uverbs_async_event_desc (ib_user_verbs.h): what read() on the async fd returns.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_async_event_desc {
    /// User handle of the object (or port number for port events).
    pub element: u64,
    /// enum ib_event_type.
    pub event_type: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_comp_event_desc (ib_user_verbs.h): what read() on a completion channel returns.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_comp_event_desc {
    /// User handle of the CQ.
    pub cq_handle: u64,
}

/// struct ib_uverbs_cq_moderation_caps (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_cq_moderation_caps {
    /// Maximum CQ moderation count.
    pub max_cq_moderation_count: u16,
    /// Maximum CQ moderation period.
    pub max_cq_moderation_period: u16,
    /// Reserved.
    pub reserved: u32,
}

/// IB_USER_VERBS_CMD_COMMAND_MASK: the command number bits of `ib_uverbs_cmd_hdr.command`.
pub const IB_USER_VERBS_CMD_COMMAND_MASK: u32 = 0xff;
/// IB_USER_VERBS_CMD_FLAG_EXTENDED: `command` flag selecting an extended command.
pub const IB_USER_VERBS_CMD_FLAG_EXTENDED: u32 = 0x8000_0000;

/// struct ib_uverbs_cmd_hdr (ib_user_verbs.h): the header of every write() command.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_cmd_hdr {
    /// Command number, possibly with IB_USER_VERBS_CMD_FLAG_EXTENDED.
    pub command: u32,
    /// Command length in 32-bit words (extended: of the core part, after both headers, in 8-byte words).
    pub in_words: u16,
    /// Response length in 32-bit words (extended: in 8-byte words).
    pub out_words: u16,
}

/// struct ib_uverbs_ex_cmd_hdr (ib_user_verbs.h): second header of extended commands.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_cmd_hdr {
    /// Response buffer address.
    pub response: u64,
    /// Driver part of the command, in 8-byte words.
    pub provider_in_words: u16,
    /// Driver part of the response, in 8-byte words.
    pub provider_out_words: u16,
    /// Reserved.
    pub cmd_hdr_reserved: u32,
}

/// struct ib_uverbs_get_context (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_get_context {
    /// Response buffer address.
    pub response: u64,
}

/// struct ib_uverbs_get_context_resp (ib_user_verbs.h); `__aligned_u64 driver_data[]` omitted.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_get_context_resp {
    /// Async event fd.
    pub async_fd: u32,
    /// Number of completion vectors.
    pub num_comp_vectors: u32,
}

/// struct ib_uverbs_query_device (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_query_device {
    /// Response buffer address.
    pub response: u64,
}

/// struct ib_uverbs_query_device_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_query_device_resp {
    /// Firmware version.
    pub fw_ver: u64,
    /// Node GUID (big-endian).
    pub node_guid: u64,
    /// System image GUID (big-endian).
    pub sys_image_guid: u64,
    /// Largest MR.
    pub max_mr_size: u64,
    /// Supported page sizes.
    pub page_size_cap: u64,
    /// Vendor id.
    pub vendor_id: u32,
    /// Vendor part id.
    pub vendor_part_id: u32,
    /// Hardware version.
    pub hw_ver: u32,
    /// Max QPs.
    pub max_qp: u32,
    /// Max WRs per QP.
    pub max_qp_wr: u32,
    /// Low 32 bits of the device capability flags.
    pub device_cap_flags: u32,
    /// Max SGEs per WR.
    pub max_sge: u32,
    /// Max SGEs per RDMA read.
    pub max_sge_rd: u32,
    /// Max CQs.
    pub max_cq: u32,
    /// Max CQEs per CQ.
    pub max_cqe: u32,
    /// Max MRs.
    pub max_mr: u32,
    /// Max PDs.
    pub max_pd: u32,
    /// Max outstanding RDMA reads/atomics as target.
    pub max_qp_rd_atom: u32,
    /// Max EE RDMA reads/atomics.
    pub max_ee_rd_atom: u32,
    /// Max resources for RDMA reads/atomics as target.
    pub max_res_rd_atom: u32,
    /// Max outstanding RDMA reads/atomics as initiator.
    pub max_qp_init_rd_atom: u32,
    /// Max EE initiator reads/atomics.
    pub max_ee_init_rd_atom: u32,
    /// enum ib_atomic_cap.
    pub atomic_cap: u32,
    /// Max EE contexts.
    pub max_ee: u32,
    /// Max RDDs.
    pub max_rdd: u32,
    /// Max MWs.
    pub max_mw: u32,
    /// Max raw IPv6 QPs.
    pub max_raw_ipv6_qp: u32,
    /// Max raw Ethertype QPs.
    pub max_raw_ethy_qp: u32,
    /// Max multicast groups.
    pub max_mcast_grp: u32,
    /// Max QPs per multicast group.
    pub max_mcast_qp_attach: u32,
    /// Max QP attachments in total.
    pub max_total_mcast_qp_attach: u32,
    /// Max AHs.
    pub max_ah: u32,
    /// Max FMRs.
    pub max_fmr: u32,
    /// Max maps per FMR.
    pub max_map_per_fmr: u32,
    /// Max SRQs.
    pub max_srq: u32,
    /// Max WRs per SRQ.
    pub max_srq_wr: u32,
    /// Max SGEs per SRQ WR.
    pub max_srq_sge: u32,
    /// P_Key table size.
    pub max_pkeys: u16,
    /// Local CA ack delay.
    pub local_ca_ack_delay: u8,
    /// Number of ports.
    pub phys_port_cnt: u8,
    /// Reserved.
    pub reserved: [u8; 4],
}

/// struct ib_uverbs_ex_query_device (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_query_device {
    /// Comp mask.
    pub comp_mask: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_odp_caps (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_odp_caps {
    /// General ODP capabilities.
    pub general_caps: u64,
    /// Per-transport ODP capabilities.
    pub per_transport_caps: ib_uverbs_odp_caps_per_transport_caps,
    /// Reserved.
    pub reserved: u32,
}

/// The anonymous `struct { ... } per_transport_caps` of struct ib_uverbs_odp_caps (named here).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_odp_caps_per_transport_caps {
    /// RC ODP capabilities.
    pub rc_odp_caps: u32,
    /// UC ODP capabilities.
    pub uc_odp_caps: u32,
    /// UD ODP capabilities.
    pub ud_odp_caps: u32,
}

/// struct ib_uverbs_rss_caps (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_rss_caps {
    /// Bit (1 << ib_qp_type) per QP type that supports RSS.
    pub supported_qpts: u32,
    /// Max RWQ indirection tables.
    pub max_rwq_indirection_tables: u32,
    /// Max RWQ indirection table size.
    pub max_rwq_indirection_table_size: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_tm_caps (ib_user_verbs.h): tag matching capabilities.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_tm_caps {
    /// Max size of a rendezvous request message.
    pub max_rndv_hdr_size: u32,
    /// Max entries in the tag matching list.
    pub max_num_tags: u32,
    /// TM flags.
    pub flags: u32,
    /// Max outstanding list operations.
    pub max_ops: u32,
    /// Max SGEs in a tag matching entry.
    pub max_sge: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_ex_query_device_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_query_device_resp {
    /// The legacy response.
    pub base: ib_uverbs_query_device_resp,
    /// Comp mask.
    pub comp_mask: u32,
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
    /// ODP capabilities.
    pub odp_caps: ib_uverbs_odp_caps,
    /// Timestamp mask.
    pub timestamp_mask: u64,
    /// HCA core clock in kHz.
    pub hca_core_clock: u64,
    /// Device capability flags (all 64 bits).
    pub device_cap_flags_ex: u64,
    /// RSS capabilities.
    pub rss_caps: ib_uverbs_rss_caps,
    /// Max WQs of type RQ.
    pub max_wq_type_rq: u32,
    /// enum ib_uverbs_raw_packet_caps.
    pub raw_packet_caps: u32,
    /// Tag matching capabilities.
    pub tm_caps: ib_uverbs_tm_caps,
    /// CQ moderation capabilities.
    pub cq_moderation_caps: ib_uverbs_cq_moderation_caps,
    /// Max device memory size.
    pub max_dm_size: u64,
    /// XRC ODP capabilities.
    pub xrc_odp_caps: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_query_port (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_query_port {
    /// Response buffer address.
    pub response: u64,
    /// Port number.
    pub port_num: u8,
    /// Reserved.
    pub reserved: [u8; 7],
}

/// struct ib_uverbs_query_port_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_query_port_resp {
    /// enum ib_uverbs_query_port_cap_flags.
    pub port_cap_flags: u32,
    /// Max message size.
    pub max_msg_sz: u32,
    /// Bad P_Key counter.
    pub bad_pkey_cntr: u32,
    /// Q_Key violation counter.
    pub qkey_viol_cntr: u32,
    /// GID table length.
    pub gid_tbl_len: u32,
    /// P_Key table length.
    pub pkey_tbl_len: u16,
    /// LID.
    pub lid: u16,
    /// SM LID.
    pub sm_lid: u16,
    /// enum ib_port_state.
    pub state: u8,
    /// Max MTU (enum ib_mtu).
    pub max_mtu: u8,
    /// Active MTU (enum ib_mtu).
    pub active_mtu: u8,
    /// LMC.
    pub lmc: u8,
    /// Max VL number.
    pub max_vl_num: u8,
    /// SM SL.
    pub sm_sl: u8,
    /// Subnet timeout.
    pub subnet_timeout: u8,
    /// Init type reply.
    pub init_type_reply: u8,
    /// Active width.
    pub active_width: u8,
    /// Active speed.
    pub active_speed: u8,
    /// Physical port state.
    pub phys_state: u8,
    /// Link layer (IB_LINK_LAYER_*).
    pub link_layer: u8,
    /// enum ib_uverbs_query_port_flags.
    pub flags: u8,
    /// Reserved.
    pub reserved: u8,
}

/// struct ib_uverbs_alloc_pd (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_alloc_pd {
    /// Response buffer address.
    pub response: u64,
}

/// struct ib_uverbs_alloc_pd_resp (ib_user_verbs.h); `__u32 driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_alloc_pd_resp {
    /// PD handle.
    pub pd_handle: u32,
}

/// struct ib_uverbs_dealloc_pd (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_dealloc_pd {
    /// PD handle.
    pub pd_handle: u32,
}

/// struct ib_uverbs_open_xrcd (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_open_xrcd {
    /// Response buffer address.
    pub response: u64,
    /// Inode fd (or -1).
    pub fd: u32,
    /// Open flags.
    pub oflags: u32,
}

/// struct ib_uverbs_open_xrcd_resp (ib_user_verbs.h); `__u32 driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_open_xrcd_resp {
    /// XRCD handle.
    pub xrcd_handle: u32,
}

/// struct ib_uverbs_close_xrcd (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_close_xrcd {
    /// XRCD handle.
    pub xrcd_handle: u32,
}

/// struct ib_uverbs_reg_mr (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_reg_mr {
    /// Response buffer address.
    pub response: u64,
    /// Start address.
    pub start: u64,
    /// Length.
    pub length: u64,
    /// IOVA the HCA sees.
    pub hca_va: u64,
    /// PD handle.
    pub pd_handle: u32,
    /// enum ib_uverbs_access_flags.
    pub access_flags: u32,
}

/// struct ib_uverbs_reg_mr_resp (ib_user_verbs.h); `__u32 driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_reg_mr_resp {
    /// MR handle.
    pub mr_handle: u32,
    /// Local key.
    pub lkey: u32,
    /// Remote key.
    pub rkey: u32,
}

/// struct ib_uverbs_rereg_mr (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_rereg_mr {
    /// Response buffer address.
    pub response: u64,
    /// MR handle.
    pub mr_handle: u32,
    /// IB_MR_REREG_* flags.
    pub flags: u32,
    /// New start address.
    pub start: u64,
    /// New length.
    pub length: u64,
    /// New IOVA.
    pub hca_va: u64,
    /// New PD handle.
    pub pd_handle: u32,
    /// New access flags.
    pub access_flags: u32,
}

/// struct ib_uverbs_rereg_mr_resp (ib_user_verbs.h); `__aligned_u64 driver_data[]` omitted.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_rereg_mr_resp {
    /// Local key.
    pub lkey: u32,
    /// Remote key.
    pub rkey: u32,
}

/// struct ib_uverbs_dereg_mr (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_dereg_mr {
    /// MR handle.
    pub mr_handle: u32,
}

/// struct ib_uverbs_alloc_mw (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_alloc_mw {
    /// Response buffer address.
    pub response: u64,
    /// PD handle.
    pub pd_handle: u32,
    /// MW type (1 or 2).
    pub mw_type: u8,
    /// Reserved.
    pub reserved: [u8; 3],
}

/// struct ib_uverbs_alloc_mw_resp (ib_user_verbs.h); `__aligned_u64 driver_data[]` omitted.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_alloc_mw_resp {
    /// MW handle.
    pub mw_handle: u32,
    /// Remote key.
    pub rkey: u32,
}

/// struct ib_uverbs_dealloc_mw (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_dealloc_mw {
    /// MW handle.
    pub mw_handle: u32,
}

/// struct ib_uverbs_create_comp_channel (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_create_comp_channel {
    /// Response buffer address.
    pub response: u64,
}

/// struct ib_uverbs_create_comp_channel_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_create_comp_channel_resp {
    /// The new channel's fd.
    pub fd: u32,
}

/// struct ib_uverbs_create_cq (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_create_cq {
    /// Response buffer address.
    pub response: u64,
    /// User handle reported in events.
    pub user_handle: u64,
    /// Requested CQEs.
    pub cqe: u32,
    /// Completion vector.
    pub comp_vector: u32,
    /// Completion channel fd or -1.
    pub comp_channel: i32,
    /// Reserved.
    pub reserved: u32,
}

/// enum ib_uverbs_ex_create_cq_flags: IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION.
pub const IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION: u32 = 1 << 0;
/// enum ib_uverbs_ex_create_cq_flags: IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN.
pub const IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN: u32 = 1 << 1;

/// struct ib_uverbs_ex_create_cq (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_create_cq {
    /// User handle reported in events.
    pub user_handle: u64,
    /// Requested CQEs.
    pub cqe: u32,
    /// Completion vector.
    pub comp_vector: u32,
    /// Completion channel fd or -1.
    pub comp_channel: i32,
    /// Comp mask.
    pub comp_mask: u32,
    /// enum ib_uverbs_ex_create_cq_flags.
    pub flags: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_create_cq_resp (ib_user_verbs.h); `__aligned_u64 driver_data[0]` omitted.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_create_cq_resp {
    /// CQ handle.
    pub cq_handle: u32,
    /// Actual CQEs.
    pub cqe: u32,
}

/// struct ib_uverbs_ex_create_cq_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_create_cq_resp {
    /// The legacy response.
    pub base: ib_uverbs_create_cq_resp,
    /// Comp mask.
    pub comp_mask: u32,
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
}

/// struct ib_uverbs_resize_cq (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_resize_cq {
    /// Response buffer address.
    pub response: u64,
    /// CQ handle.
    pub cq_handle: u32,
    /// Requested CQEs.
    pub cqe: u32,
}

/// struct ib_uverbs_resize_cq_resp (ib_user_verbs.h); `__aligned_u64 driver_data[]` omitted.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_resize_cq_resp {
    /// Actual CQEs.
    pub cqe: u32,
    /// Reserved.
    pub reserved: u32,
}

/// enum ib_uverbs_wc_opcode: IB_UVERBS_WC_SEND.
pub const IB_UVERBS_WC_SEND: u32 = 0;
/// enum ib_uverbs_wc_opcode: IB_UVERBS_WC_RDMA_WRITE.
pub const IB_UVERBS_WC_RDMA_WRITE: u32 = 1;
/// enum ib_uverbs_wc_opcode: IB_UVERBS_WC_RDMA_READ.
pub const IB_UVERBS_WC_RDMA_READ: u32 = 2;
/// enum ib_uverbs_wc_opcode: IB_UVERBS_WC_COMP_SWAP.
pub const IB_UVERBS_WC_COMP_SWAP: u32 = 3;
/// enum ib_uverbs_wc_opcode: IB_UVERBS_WC_FETCH_ADD.
pub const IB_UVERBS_WC_FETCH_ADD: u32 = 4;
/// enum ib_uverbs_wc_opcode: IB_UVERBS_WC_BIND_MW.
pub const IB_UVERBS_WC_BIND_MW: u32 = 5;
/// enum ib_uverbs_wc_opcode: IB_UVERBS_WC_LOCAL_INV.
pub const IB_UVERBS_WC_LOCAL_INV: u32 = 6;
/// enum ib_uverbs_wc_opcode: IB_UVERBS_WC_TSO.
pub const IB_UVERBS_WC_TSO: u32 = 7;

/// struct ib_uverbs_req_notify_cq (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_req_notify_cq {
    /// CQ handle.
    pub cq_handle: u32,
    /// Nonzero: notify on solicited completions only.
    pub solicited_only: u32,
}

/// struct ib_uverbs_destroy_cq (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_destroy_cq {
    /// Response buffer address.
    pub response: u64,
    /// CQ handle.
    pub cq_handle: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_destroy_cq_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_destroy_cq_resp {
    /// Completion events delivered.
    pub comp_events_reported: u32,
    /// Async events delivered.
    pub async_events_reported: u32,
}

/// struct ib_uverbs_global_route (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_global_route {
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Flow label.
    pub flow_label: u32,
    /// Source GID index.
    pub sgid_index: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// Reserved.
    pub reserved: u8,
}

/// struct ib_uverbs_ah_attr (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ah_attr {
    /// Global route.
    pub grh: ib_uverbs_global_route,
    /// Destination LID.
    pub dlid: u16,
    /// Service level.
    pub sl: u8,
    /// Source path bits.
    pub src_path_bits: u8,
    /// Static rate.
    pub static_rate: u8,
    /// Nonzero if `grh` is valid.
    pub is_global: u8,
    /// Port number.
    pub port_num: u8,
    /// Reserved.
    pub reserved: u8,
}

/// struct ib_uverbs_qp_attr (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_qp_attr {
    /// Attribute mask.
    pub qp_attr_mask: u32,
    /// QP state.
    pub qp_state: u32,
    /// Current QP state.
    pub cur_qp_state: u32,
    /// Path MTU.
    pub path_mtu: u32,
    /// Path migration state.
    pub path_mig_state: u32,
    /// Q_Key.
    pub qkey: u32,
    /// Receive PSN.
    pub rq_psn: u32,
    /// Send PSN.
    pub sq_psn: u32,
    /// Destination QP number.
    pub dest_qp_num: u32,
    /// Access flags.
    pub qp_access_flags: u32,
    /// Primary path.
    pub ah_attr: ib_uverbs_ah_attr,
    /// Alternate path.
    pub alt_ah_attr: ib_uverbs_ah_attr,
    /// Max send WRs.
    pub max_send_wr: u32,
    /// Max receive WRs.
    pub max_recv_wr: u32,
    /// Max send SGEs.
    pub max_send_sge: u32,
    /// Max receive SGEs.
    pub max_recv_sge: u32,
    /// Max inline data.
    pub max_inline_data: u32,
    /// P_Key index.
    pub pkey_index: u16,
    /// Alternate P_Key index.
    pub alt_pkey_index: u16,
    /// Notify when SQD drained.
    pub en_sqd_async_notify: u8,
    /// SQ draining.
    pub sq_draining: u8,
    /// Max outstanding RDMA reads/atomics as initiator.
    pub max_rd_atomic: u8,
    /// Max outstanding RDMA reads/atomics as target.
    pub max_dest_rd_atomic: u8,
    /// Minimum RNR NAK timer.
    pub min_rnr_timer: u8,
    /// Port number.
    pub port_num: u8,
    /// Local ack timeout.
    pub timeout: u8,
    /// Retry count.
    pub retry_cnt: u8,
    /// RNR retry count.
    pub rnr_retry: u8,
    /// Alternate port number.
    pub alt_port_num: u8,
    /// Alternate ack timeout.
    pub alt_timeout: u8,
    /// Reserved.
    pub reserved: [u8; 5],
}

/// struct ib_uverbs_create_qp (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_create_qp {
    /// Response buffer address.
    pub response: u64,
    /// User handle reported in events.
    pub user_handle: u64,
    /// PD handle.
    pub pd_handle: u32,
    /// Send CQ handle.
    pub send_cq_handle: u32,
    /// Receive CQ handle.
    pub recv_cq_handle: u32,
    /// SRQ handle.
    pub srq_handle: u32,
    /// Max send WRs.
    pub max_send_wr: u32,
    /// Max receive WRs.
    pub max_recv_wr: u32,
    /// Max send SGEs.
    pub max_send_sge: u32,
    /// Max receive SGEs.
    pub max_recv_sge: u32,
    /// Max inline data.
    pub max_inline_data: u32,
    /// Signal every send WR.
    pub sq_sig_all: u8,
    /// enum ib_uverbs_qp_type.
    pub qp_type: u8,
    /// Nonzero if `srq_handle` is valid.
    pub is_srq: u8,
    /// Reserved.
    pub reserved: u8,
}

/// enum ib_uverbs_create_qp_mask: IB_UVERBS_CREATE_QP_MASK_IND_TABLE.
pub const IB_UVERBS_CREATE_QP_MASK_IND_TABLE: u32 = 1 << 0;
/// IB_UVERBS_CREATE_QP_SUP_COMP_MASK: the comp_mask bits create_qp_ex accepts.
pub const IB_UVERBS_CREATE_QP_SUP_COMP_MASK: u32 = IB_UVERBS_CREATE_QP_MASK_IND_TABLE;

/// struct ib_uverbs_ex_create_qp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_create_qp {
    /// User handle reported in events.
    pub user_handle: u64,
    /// PD handle.
    pub pd_handle: u32,
    /// Send CQ handle.
    pub send_cq_handle: u32,
    /// Receive CQ handle.
    pub recv_cq_handle: u32,
    /// SRQ handle.
    pub srq_handle: u32,
    /// Max send WRs.
    pub max_send_wr: u32,
    /// Max receive WRs.
    pub max_recv_wr: u32,
    /// Max send SGEs.
    pub max_send_sge: u32,
    /// Max receive SGEs.
    pub max_recv_sge: u32,
    /// Max inline data.
    pub max_inline_data: u32,
    /// Signal every send WR.
    pub sq_sig_all: u8,
    /// enum ib_uverbs_qp_type.
    pub qp_type: u8,
    /// Nonzero if `srq_handle` is valid.
    pub is_srq: u8,
    /// Reserved.
    pub reserved: u8,
    /// enum ib_uverbs_create_qp_mask.
    pub comp_mask: u32,
    /// enum ib_uverbs_qp_create_flags.
    pub create_flags: u32,
    /// RWQ indirection table handle.
    pub rwq_ind_tbl_handle: u32,
    /// Source QPN.
    pub source_qpn: u32,
}

/// struct ib_uverbs_open_qp (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_open_qp {
    /// Response buffer address.
    pub response: u64,
    /// User handle reported in events.
    pub user_handle: u64,
    /// XRCD handle.
    pub pd_handle: u32,
    /// QP number to open.
    pub qpn: u32,
    /// QP type.
    pub qp_type: u8,
    /// Reserved.
    pub reserved: [u8; 7],
}

/// struct ib_uverbs_create_qp_resp (ib_user_verbs.h), also the open_qp response;
/// `__u32 driver_data[0]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_create_qp_resp {
    /// QP handle.
    pub qp_handle: u32,
    /// QP number.
    pub qpn: u32,
    /// Actual max send WRs.
    pub max_send_wr: u32,
    /// Actual max receive WRs.
    pub max_recv_wr: u32,
    /// Actual max send SGEs.
    pub max_send_sge: u32,
    /// Actual max receive SGEs.
    pub max_recv_sge: u32,
    /// Actual max inline data.
    pub max_inline_data: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_ex_create_qp_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_create_qp_resp {
    /// The legacy response.
    pub base: ib_uverbs_create_qp_resp,
    /// Comp mask.
    pub comp_mask: u32,
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
}

/// struct ib_uverbs_qp_dest (ib_user_verbs.h): an address path in query/modify QP.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_qp_dest {
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Flow label.
    pub flow_label: u32,
    /// Destination LID.
    pub dlid: u16,
    /// Reserved.
    pub reserved: u16,
    /// Source GID index.
    pub sgid_index: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// Service level.
    pub sl: u8,
    /// Source path bits.
    pub src_path_bits: u8,
    /// Static rate.
    pub static_rate: u8,
    /// Nonzero if the GRH fields are valid.
    pub is_global: u8,
    /// Port number.
    pub port_num: u8,
}

/// struct ib_uverbs_query_qp (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_query_qp {
    /// Response buffer address.
    pub response: u64,
    /// QP handle.
    pub qp_handle: u32,
    /// Attribute mask.
    pub attr_mask: u32,
}

/// struct ib_uverbs_query_qp_resp (ib_user_verbs.h); `__aligned_u64 driver_data[]` omitted.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_query_qp_resp {
    /// Primary path.
    pub dest: ib_uverbs_qp_dest,
    /// Alternate path.
    pub alt_dest: ib_uverbs_qp_dest,
    /// Max send WRs.
    pub max_send_wr: u32,
    /// Max receive WRs.
    pub max_recv_wr: u32,
    /// Max send SGEs.
    pub max_send_sge: u32,
    /// Max receive SGEs.
    pub max_recv_sge: u32,
    /// Max inline data.
    pub max_inline_data: u32,
    /// Q_Key.
    pub qkey: u32,
    /// Receive PSN.
    pub rq_psn: u32,
    /// Send PSN.
    pub sq_psn: u32,
    /// Destination QP number.
    pub dest_qp_num: u32,
    /// Access flags.
    pub qp_access_flags: u32,
    /// P_Key index.
    pub pkey_index: u16,
    /// Alternate P_Key index.
    pub alt_pkey_index: u16,
    /// QP state.
    pub qp_state: u8,
    /// Current QP state.
    pub cur_qp_state: u8,
    /// Path MTU.
    pub path_mtu: u8,
    /// Path migration state.
    pub path_mig_state: u8,
    /// SQ draining.
    pub sq_draining: u8,
    /// Max outstanding RDMA reads/atomics as initiator.
    pub max_rd_atomic: u8,
    /// Max outstanding RDMA reads/atomics as target.
    pub max_dest_rd_atomic: u8,
    /// Minimum RNR NAK timer.
    pub min_rnr_timer: u8,
    /// Port number.
    pub port_num: u8,
    /// Local ack timeout.
    pub timeout: u8,
    /// Retry count.
    pub retry_cnt: u8,
    /// RNR retry count.
    pub rnr_retry: u8,
    /// Alternate port number.
    pub alt_port_num: u8,
    /// Alternate ack timeout.
    pub alt_timeout: u8,
    /// Signal every send WR.
    pub sq_sig_all: u8,
    /// Reserved.
    pub reserved: [u8; 5],
}

/// struct ib_uverbs_modify_qp (ib_user_verbs.h); `__aligned_u64 driver_data[0]` omitted.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_modify_qp {
    /// Primary path.
    pub dest: ib_uverbs_qp_dest,
    /// Alternate path.
    pub alt_dest: ib_uverbs_qp_dest,
    /// QP handle.
    pub qp_handle: u32,
    /// Attribute mask (IB_QP_*).
    pub attr_mask: u32,
    /// Q_Key.
    pub qkey: u32,
    /// Receive PSN.
    pub rq_psn: u32,
    /// Send PSN.
    pub sq_psn: u32,
    /// Destination QP number.
    pub dest_qp_num: u32,
    /// Access flags.
    pub qp_access_flags: u32,
    /// P_Key index.
    pub pkey_index: u16,
    /// Alternate P_Key index.
    pub alt_pkey_index: u16,
    /// New QP state.
    pub qp_state: u8,
    /// Current QP state.
    pub cur_qp_state: u8,
    /// Path MTU.
    pub path_mtu: u8,
    /// Path migration state.
    pub path_mig_state: u8,
    /// Notify when SQD drained.
    pub en_sqd_async_notify: u8,
    /// Max outstanding RDMA reads/atomics as initiator.
    pub max_rd_atomic: u8,
    /// Max outstanding RDMA reads/atomics as target.
    pub max_dest_rd_atomic: u8,
    /// Minimum RNR NAK timer.
    pub min_rnr_timer: u8,
    /// Port number.
    pub port_num: u8,
    /// Local ack timeout.
    pub timeout: u8,
    /// Retry count.
    pub retry_cnt: u8,
    /// RNR retry count.
    pub rnr_retry: u8,
    /// Alternate port number.
    pub alt_port_num: u8,
    /// Alternate ack timeout.
    pub alt_timeout: u8,
    /// Reserved.
    pub reserved: [u8; 2],
}

/// struct ib_uverbs_ex_modify_qp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_modify_qp {
    /// The legacy command.
    pub base: ib_uverbs_modify_qp,
    /// Rate limit in kbps.
    pub rate_limit: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_ex_modify_qp_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_modify_qp_resp {
    /// Comp mask.
    pub comp_mask: u32,
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
}

/// struct ib_uverbs_destroy_qp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_destroy_qp {
    /// Response buffer address.
    pub response: u64,
    /// QP handle.
    pub qp_handle: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_destroy_qp_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_destroy_qp_resp {
    /// Async events delivered.
    pub events_reported: u32,
}

/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_RDMA_WRITE.
pub const IB_UVERBS_WR_RDMA_WRITE: u32 = 0;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_RDMA_WRITE_WITH_IMM.
pub const IB_UVERBS_WR_RDMA_WRITE_WITH_IMM: u32 = 1;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_SEND.
pub const IB_UVERBS_WR_SEND: u32 = 2;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_SEND_WITH_IMM.
pub const IB_UVERBS_WR_SEND_WITH_IMM: u32 = 3;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_RDMA_READ.
pub const IB_UVERBS_WR_RDMA_READ: u32 = 4;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_ATOMIC_CMP_AND_SWP.
pub const IB_UVERBS_WR_ATOMIC_CMP_AND_SWP: u32 = 5;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD.
pub const IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD: u32 = 6;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_LOCAL_INV.
pub const IB_UVERBS_WR_LOCAL_INV: u32 = 7;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_BIND_MW.
pub const IB_UVERBS_WR_BIND_MW: u32 = 8;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_SEND_WITH_INV.
pub const IB_UVERBS_WR_SEND_WITH_INV: u32 = 9;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_TSO.
pub const IB_UVERBS_WR_TSO: u32 = 10;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_RDMA_READ_WITH_INV.
pub const IB_UVERBS_WR_RDMA_READ_WITH_INV: u32 = 11;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_MASKED_ATOMIC_CMP_AND_SWP.
pub const IB_UVERBS_WR_MASKED_ATOMIC_CMP_AND_SWP: u32 = 12;
/// enum ib_uverbs_wr_opcode: IB_UVERBS_WR_MASKED_ATOMIC_FETCH_AND_ADD.
pub const IB_UVERBS_WR_MASKED_ATOMIC_FETCH_AND_ADD: u32 = 13;

/// struct ib_uverbs_create_ah (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_create_ah {
    /// Response buffer address.
    pub response: u64,
    /// User handle.
    pub user_handle: u64,
    /// PD handle.
    pub pd_handle: u32,
    /// Reserved.
    pub reserved: u32,
    /// Address attributes.
    pub attr: ib_uverbs_ah_attr,
}

/// struct ib_uverbs_create_ah_resp (ib_user_verbs.h); `__u32 driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_create_ah_resp {
    /// AH handle.
    pub ah_handle: u32,
}

/// struct ib_uverbs_destroy_ah (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_destroy_ah {
    /// AH handle.
    pub ah_handle: u32,
}

/// struct ib_uverbs_attach_mcast (ib_user_verbs.h); `__aligned_u64 driver_data[]` omitted.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_attach_mcast {
    /// Multicast GID.
    pub gid: [u8; 16],
    /// QP handle.
    pub qp_handle: u32,
    /// Multicast LID.
    pub mlid: u16,
    /// Reserved.
    pub reserved: u16,
}

/// struct ib_uverbs_detach_mcast (ib_user_verbs.h); `__aligned_u64 driver_data[]` omitted.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_detach_mcast {
    /// Multicast GID.
    pub gid: [u8; 16],
    /// QP handle.
    pub qp_handle: u32,
    /// Multicast LID.
    pub mlid: u16,
    /// Reserved.
    pub reserved: u16,
}

/// struct ib_uverbs_create_srq (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_create_srq {
    /// Response buffer address.
    pub response: u64,
    /// User handle reported in events.
    pub user_handle: u64,
    /// PD handle.
    pub pd_handle: u32,
    /// Max WRs.
    pub max_wr: u32,
    /// Max SGEs per WR.
    pub max_sge: u32,
    /// SRQ limit.
    pub srq_limit: u32,
}

/// struct ib_uverbs_create_xsrq (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_create_xsrq {
    /// Response buffer address.
    pub response: u64,
    /// User handle reported in events.
    pub user_handle: u64,
    /// enum ib_uverbs_srq_type.
    pub srq_type: u32,
    /// PD handle.
    pub pd_handle: u32,
    /// Max WRs.
    pub max_wr: u32,
    /// Max SGEs per WR.
    pub max_sge: u32,
    /// SRQ limit.
    pub srq_limit: u32,
    /// Max tags (tag matching SRQ).
    pub max_num_tags: u32,
    /// XRCD handle (XRC SRQ).
    pub xrcd_handle: u32,
    /// CQ handle (XRC and TM SRQ).
    pub cq_handle: u32,
}

/// struct ib_uverbs_create_srq_resp (ib_user_verbs.h); `__u32 driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_create_srq_resp {
    /// SRQ handle.
    pub srq_handle: u32,
    /// Actual max WRs.
    pub max_wr: u32,
    /// Actual max SGEs.
    pub max_sge: u32,
    /// SRQ number (XRC).
    pub srqn: u32,
}

/// struct ib_uverbs_modify_srq (ib_user_verbs.h); `__aligned_u64 driver_data[]` omitted.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_modify_srq {
    /// SRQ handle.
    pub srq_handle: u32,
    /// Attribute mask (IB_SRQ_*).
    pub attr_mask: u32,
    /// New max WRs.
    pub max_wr: u32,
    /// New SRQ limit.
    pub srq_limit: u32,
}

/// struct ib_uverbs_query_srq (ib_user_verbs.h); `driver_data[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_query_srq {
    /// Response buffer address.
    pub response: u64,
    /// SRQ handle.
    pub srq_handle: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_query_srq_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_query_srq_resp {
    /// Max WRs.
    pub max_wr: u32,
    /// Max SGEs per WR.
    pub max_sge: u32,
    /// SRQ limit.
    pub srq_limit: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_destroy_srq (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_destroy_srq {
    /// Response buffer address.
    pub response: u64,
    /// SRQ handle.
    pub srq_handle: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_destroy_srq_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_destroy_srq_resp {
    /// Async events delivered.
    pub events_reported: u32,
}

/// struct ib_uverbs_ex_create_wq (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_create_wq {
    /// Comp mask.
    pub comp_mask: u32,
    /// enum ib_uverbs_wq_type.
    pub wq_type: u32,
    /// User handle reported in events.
    pub user_handle: u64,
    /// PD handle.
    pub pd_handle: u32,
    /// CQ handle.
    pub cq_handle: u32,
    /// Max WRs.
    pub max_wr: u32,
    /// Max SGEs per WR.
    pub max_sge: u32,
    /// enum ib_uverbs_wq_flags.
    pub create_flags: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_ex_create_wq_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_create_wq_resp {
    /// Comp mask.
    pub comp_mask: u32,
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
    /// WQ handle.
    pub wq_handle: u32,
    /// Actual max WRs.
    pub max_wr: u32,
    /// Actual max SGEs.
    pub max_sge: u32,
    /// WQ number.
    pub wqn: u32,
}

/// struct ib_uverbs_ex_destroy_wq (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_destroy_wq {
    /// Comp mask.
    pub comp_mask: u32,
    /// WQ handle.
    pub wq_handle: u32,
}

/// struct ib_uverbs_ex_destroy_wq_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_destroy_wq_resp {
    /// Comp mask.
    pub comp_mask: u32,
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
    /// Async events delivered.
    pub events_reported: u32,
    /// Reserved.
    pub reserved: u32,
}

/// struct ib_uverbs_ex_modify_wq (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_modify_wq {
    /// Attribute mask (IB_WQ_*).
    pub attr_mask: u32,
    /// WQ handle.
    pub wq_handle: u32,
    /// New WQ state.
    pub wq_state: u32,
    /// Current WQ state.
    pub curr_wq_state: u32,
    /// enum ib_uverbs_wq_flags.
    pub flags: u32,
    /// Which of `flags` to change.
    pub flags_mask: u32,
}

/// IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE: largest log2 size of an RWQ indirection table.
pub const IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE: u32 = 0x0d;

/// struct ib_uverbs_ex_create_rwq_ind_table (ib_user_verbs.h); `__u32 wq_handles[]` omitted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_create_rwq_ind_table {
    /// Comp mask.
    pub comp_mask: u32,
    /// log2 of the number of WQ handles that follow.
    pub log_ind_tbl_size: u32,
}

/// struct ib_uverbs_ex_create_rwq_ind_table_resp (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_create_rwq_ind_table_resp {
    /// Comp mask.
    pub comp_mask: u32,
    /// Bytes of this response the kernel filled.
    pub response_length: u32,
    /// Indirection table handle.
    pub ind_tbl_handle: u32,
    /// Indirection table number.
    pub ind_tbl_num: u32,
}

/// struct ib_uverbs_ex_destroy_rwq_ind_table (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_destroy_rwq_ind_table {
    /// Comp mask.
    pub comp_mask: u32,
    /// Indirection table handle.
    pub ind_tbl_handle: u32,
}

/// struct ib_uverbs_cq_moderation (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_cq_moderation {
    /// Completions per event.
    pub cq_count: u16,
    /// Period in microseconds.
    pub cq_period: u16,
}

/// struct ib_uverbs_ex_modify_cq (ib_user_verbs.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ib_uverbs_ex_modify_cq {
    /// CQ handle.
    pub cq_handle: u32,
    /// Attribute mask (IB_CQ_MODERATE).
    pub attr_mask: u32,
    /// Moderation.
    pub attr: ib_uverbs_cq_moderation,
    /// Reserved.
    pub reserved: u32,
}

/// IB_DEVICE_NAME_MAX: device name buffer size.
pub const IB_DEVICE_NAME_MAX: usize = 64;

// enum ib_uverbs_device_cap_flags (64-bit: `device_cap_flags_ex`)

/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_RESIZE_MAX_WR.
pub const IB_UVERBS_DEVICE_RESIZE_MAX_WR: u64 = 1 << 0;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_BAD_PKEY_CNTR.
pub const IB_UVERBS_DEVICE_BAD_PKEY_CNTR: u64 = 1 << 1;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_BAD_QKEY_CNTR.
pub const IB_UVERBS_DEVICE_BAD_QKEY_CNTR: u64 = 1 << 2;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_RAW_MULTI.
pub const IB_UVERBS_DEVICE_RAW_MULTI: u64 = 1 << 3;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_AUTO_PATH_MIG.
pub const IB_UVERBS_DEVICE_AUTO_PATH_MIG: u64 = 1 << 4;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_CHANGE_PHY_PORT.
pub const IB_UVERBS_DEVICE_CHANGE_PHY_PORT: u64 = 1 << 5;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_UD_AV_PORT_ENFORCE.
pub const IB_UVERBS_DEVICE_UD_AV_PORT_ENFORCE: u64 = 1 << 6;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_CURR_QP_STATE_MOD.
pub const IB_UVERBS_DEVICE_CURR_QP_STATE_MOD: u64 = 1 << 7;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_SHUTDOWN_PORT.
pub const IB_UVERBS_DEVICE_SHUTDOWN_PORT: u64 = 1 << 8;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_PORT_ACTIVE_EVENT.
pub const IB_UVERBS_DEVICE_PORT_ACTIVE_EVENT: u64 = 1 << 10;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_SYS_IMAGE_GUID.
pub const IB_UVERBS_DEVICE_SYS_IMAGE_GUID: u64 = 1 << 11;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_RC_RNR_NAK_GEN.
pub const IB_UVERBS_DEVICE_RC_RNR_NAK_GEN: u64 = 1 << 12;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_SRQ_RESIZE.
pub const IB_UVERBS_DEVICE_SRQ_RESIZE: u64 = 1 << 13;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_N_NOTIFY_CQ.
pub const IB_UVERBS_DEVICE_N_NOTIFY_CQ: u64 = 1 << 14;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_MEM_WINDOW.
pub const IB_UVERBS_DEVICE_MEM_WINDOW: u64 = 1 << 17;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_UD_IP_CSUM.
pub const IB_UVERBS_DEVICE_UD_IP_CSUM: u64 = 1 << 18;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_XRC.
pub const IB_UVERBS_DEVICE_XRC: u64 = 1 << 20;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_MEM_MGT_EXTENSIONS.
pub const IB_UVERBS_DEVICE_MEM_MGT_EXTENSIONS: u64 = 1 << 21;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_MEM_WINDOW_TYPE_2A.
pub const IB_UVERBS_DEVICE_MEM_WINDOW_TYPE_2A: u64 = 1 << 23;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_MEM_WINDOW_TYPE_2B.
pub const IB_UVERBS_DEVICE_MEM_WINDOW_TYPE_2B: u64 = 1 << 24;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_RC_IP_CSUM.
pub const IB_UVERBS_DEVICE_RC_IP_CSUM: u64 = 1 << 25;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_RAW_IP_CSUM (deprecated).
pub const IB_UVERBS_DEVICE_RAW_IP_CSUM: u64 = 1 << 26;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_MANAGED_FLOW_STEERING.
pub const IB_UVERBS_DEVICE_MANAGED_FLOW_STEERING: u64 = 1 << 29;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_RAW_SCATTER_FCS (deprecated).
pub const IB_UVERBS_DEVICE_RAW_SCATTER_FCS: u64 = 1 << 34;
/// enum ib_uverbs_device_cap_flags: IB_UVERBS_DEVICE_PCI_WRITE_END_PADDING.
pub const IB_UVERBS_DEVICE_PCI_WRITE_END_PADDING: u64 = 1 << 36;

/// enum ib_uverbs_raw_packet_caps: IB_UVERBS_RAW_PACKET_CAP_CVLAN_STRIPPING.
pub const IB_UVERBS_RAW_PACKET_CAP_CVLAN_STRIPPING: u32 = 1 << 0;
/// enum ib_uverbs_raw_packet_caps: IB_UVERBS_RAW_PACKET_CAP_SCATTER_FCS.
pub const IB_UVERBS_RAW_PACKET_CAP_SCATTER_FCS: u32 = 1 << 1;
/// enum ib_uverbs_raw_packet_caps: IB_UVERBS_RAW_PACKET_CAP_IP_CSUM.
pub const IB_UVERBS_RAW_PACKET_CAP_IP_CSUM: u32 = 1 << 2;
/// enum ib_uverbs_raw_packet_caps: IB_UVERBS_RAW_PACKET_CAP_DELAY_DROP.
pub const IB_UVERBS_RAW_PACKET_CAP_DELAY_DROP: u32 = 1 << 3;
