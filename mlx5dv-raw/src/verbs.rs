//! `infiniband/verbs.h`: the parts of libibverbs that DC and its surroundings need.
//!
//! Declared in the header's own order, with the C names. Every struct carries the newest
//! layout (rdma-core 65); growth in rdma-core is append-only, so a struct that the library
//! fills is never smaller here than in an older header. C enums are `c_uint` (or `c_int`
//! where the enum has a negative value) type aliases with one constant per enumerator, so a
//! value the library adds later is never undefined behaviour on the Rust side.
//!
//! Static-inline functions of the header have no symbol in libibverbs. Those that only call
//! through a function pointer of a struct declared here are reproduced in [`crate::inline`];
//! the others are exported by the C shim (see [`crate::shim`]).

use core::fmt;
use libc::{c_char, c_int, c_uint, c_void, pthread_cond_t, pthread_mutex_t, size_t};

// ---------------------------------------------------------------------------------------
// GIDs

/// `union ibv_gid`: a 128-bit global identifier (network byte order).
#[repr(C)]
#[derive(Copy, Clone)]
pub union ibv_gid {
    /// The GID as 16 raw bytes.
    pub raw: [u8; 16],
    /// The GID as subnet prefix and interface id (both big-endian).
    pub global: ibv_gid_global,
}

/// The anonymous `global` struct of `union ibv_gid`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ibv_gid_global {
    /// `__be64 subnet_prefix`.
    pub subnet_prefix: u64,
    /// `__be64 interface_id`.
    pub interface_id: u64,
}

impl fmt::Debug for ibv_gid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: both members cover the same 16 bytes and every bit pattern is a valid [u8; 16].
        let raw = unsafe { self.raw };
        f.debug_struct("ibv_gid").field("raw", &raw).finish()
    }
}

impl Default for ibv_gid {
    fn default() -> Self {
        ibv_gid { raw: [0; 16] }
    }
}

/// `enum ibv_gid_type`.
pub type ibv_gid_type = c_uint;
/// InfiniBand GID.
pub const IBV_GID_TYPE_IB: ibv_gid_type = 0;
/// RoCE v1 GID.
pub const IBV_GID_TYPE_ROCE_V1: ibv_gid_type = 1;
/// RoCE v2 GID.
pub const IBV_GID_TYPE_ROCE_V2: ibv_gid_type = 2;

/// `struct ibv_gid_entry`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_gid_entry {
    /// The GID.
    pub gid: ibv_gid,
    /// Index in the GID table.
    pub gid_index: u32,
    /// Port number.
    pub port_num: u32,
    /// `enum ibv_gid_type`.
    pub gid_type: u32,
    /// Interface index of the net device (RoCE).
    pub ndev_ifindex: u32,
}

// ---------------------------------------------------------------------------------------
// Device

/// `enum ibv_node_type` (has a negative enumerator, so `int`).
pub type ibv_node_type = c_int;
/// Unknown node type.
pub const IBV_NODE_UNKNOWN: ibv_node_type = -1;
/// Channel adapter.
pub const IBV_NODE_CA: ibv_node_type = 1;
/// Switch.
pub const IBV_NODE_SWITCH: ibv_node_type = 2;
/// Router.
pub const IBV_NODE_ROUTER: ibv_node_type = 3;
/// RDMA NIC (iWARP).
pub const IBV_NODE_RNIC: ibv_node_type = 4;
/// usNIC.
pub const IBV_NODE_USNIC: ibv_node_type = 5;
/// usNIC UDP.
pub const IBV_NODE_USNIC_UDP: ibv_node_type = 6;
/// Unspecified.
pub const IBV_NODE_UNSPECIFIED: ibv_node_type = 7;

/// `enum ibv_transport_type` (has a negative enumerator, so `int`).
pub type ibv_transport_type = c_int;
/// Unknown transport.
pub const IBV_TRANSPORT_UNKNOWN: ibv_transport_type = -1;
/// InfiniBand (and RoCE).
pub const IBV_TRANSPORT_IB: ibv_transport_type = 0;
/// iWARP.
pub const IBV_TRANSPORT_IWARP: ibv_transport_type = 1;
/// usNIC.
pub const IBV_TRANSPORT_USNIC: ibv_transport_type = 2;
/// usNIC UDP.
pub const IBV_TRANSPORT_USNIC_UDP: ibv_transport_type = 3;
/// Unspecified.
pub const IBV_TRANSPORT_UNSPECIFIED: ibv_transport_type = 4;

/// `enum ibv_device_cap_flags`.
pub type ibv_device_cap_flags = c_uint;
/// Resizable CQs.
pub const IBV_DEVICE_RESIZE_MAX_WR: ibv_device_cap_flags = 1;
/// Bad P_Key counter.
pub const IBV_DEVICE_BAD_PKEY_CNTR: ibv_device_cap_flags = 1 << 1;
/// Bad Q_Key counter.
pub const IBV_DEVICE_BAD_QKEY_CNTR: ibv_device_cap_flags = 1 << 2;
/// Raw multicast.
pub const IBV_DEVICE_RAW_MULTI: ibv_device_cap_flags = 1 << 3;
/// Automatic path migration.
pub const IBV_DEVICE_AUTO_PATH_MIG: ibv_device_cap_flags = 1 << 4;
/// Alternate path port change.
pub const IBV_DEVICE_CHANGE_PHY_PORT: ibv_device_cap_flags = 1 << 5;
/// UD address-vector port check.
pub const IBV_DEVICE_UD_AV_PORT_ENFORCE: ibv_device_cap_flags = 1 << 6;
/// Current QP state may be given in modify.
pub const IBV_DEVICE_CURR_QP_STATE_MOD: ibv_device_cap_flags = 1 << 7;
/// Shutdown port.
pub const IBV_DEVICE_SHUTDOWN_PORT: ibv_device_cap_flags = 1 << 8;
/// Init type.
pub const IBV_DEVICE_INIT_TYPE: ibv_device_cap_flags = 1 << 9;
/// Port active event.
pub const IBV_DEVICE_PORT_ACTIVE_EVENT: ibv_device_cap_flags = 1 << 10;
/// System image GUID.
pub const IBV_DEVICE_SYS_IMAGE_GUID: ibv_device_cap_flags = 1 << 11;
/// RC RNR NAK generation.
pub const IBV_DEVICE_RC_RNR_NAK_GEN: ibv_device_cap_flags = 1 << 12;
/// SRQ resize.
pub const IBV_DEVICE_SRQ_RESIZE: ibv_device_cap_flags = 1 << 13;
/// N_NOTIFY_CQ.
pub const IBV_DEVICE_N_NOTIFY_CQ: ibv_device_cap_flags = 1 << 14;
/// Memory windows.
pub const IBV_DEVICE_MEM_WINDOW: ibv_device_cap_flags = 1 << 17;
/// UD IP checksum offload.
pub const IBV_DEVICE_UD_IP_CSUM: ibv_device_cap_flags = 1 << 18;
/// XRC.
pub const IBV_DEVICE_XRC: ibv_device_cap_flags = 1 << 20;
/// Memory management extensions.
pub const IBV_DEVICE_MEM_MGT_EXTENSIONS: ibv_device_cap_flags = 1 << 21;
/// Type 2A memory windows.
pub const IBV_DEVICE_MEM_WINDOW_TYPE_2A: ibv_device_cap_flags = 1 << 23;
/// Type 2B memory windows.
pub const IBV_DEVICE_MEM_WINDOW_TYPE_2B: ibv_device_cap_flags = 1 << 24;
/// RC IP checksum offload.
pub const IBV_DEVICE_RC_IP_CSUM: ibv_device_cap_flags = 1 << 25;
/// Raw IP checksum offload.
pub const IBV_DEVICE_RAW_IP_CSUM: ibv_device_cap_flags = 1 << 26;
/// Managed flow steering.
pub const IBV_DEVICE_MANAGED_FLOW_STEERING: ibv_device_cap_flags = 1 << 29;

/// `enum ibv_atomic_cap`.
pub type ibv_atomic_cap = c_uint;
/// No atomic operations.
pub const IBV_ATOMIC_NONE: ibv_atomic_cap = 0;
/// Atomic operations are atomic within this HCA.
pub const IBV_ATOMIC_HCA: ibv_atomic_cap = 1;
/// Atomic operations are atomic globally.
pub const IBV_ATOMIC_GLOB: ibv_atomic_cap = 2;

/// `struct ibv_device_attr`: filled by `ibv_query_device`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_device_attr {
    /// Firmware version, NUL-terminated.
    pub fw_ver: [c_char; 64],
    /// `__be64` node GUID.
    pub node_guid: u64,
    /// `__be64` system image GUID.
    pub sys_image_guid: u64,
    /// Largest memory region.
    pub max_mr_size: u64,
    /// Supported page sizes.
    pub page_size_cap: u64,
    /// Vendor id.
    pub vendor_id: u32,
    /// Vendor part id.
    pub vendor_part_id: u32,
    /// Hardware version.
    pub hw_ver: u32,
    /// Maximum number of QPs.
    pub max_qp: c_int,
    /// Maximum outstanding work requests per queue.
    pub max_qp_wr: c_int,
    /// `enum ibv_device_cap_flags`.
    pub device_cap_flags: c_uint,
    /// Maximum scatter/gather entries per work request.
    pub max_sge: c_int,
    /// Maximum scatter/gather entries for RDMA read.
    pub max_sge_rd: c_int,
    /// Maximum number of CQs.
    pub max_cq: c_int,
    /// Maximum CQ entries.
    pub max_cqe: c_int,
    /// Maximum number of MRs.
    pub max_mr: c_int,
    /// Maximum number of PDs.
    pub max_pd: c_int,
    /// Maximum outstanding RDMA read/atomic per QP as target.
    pub max_qp_rd_atom: c_int,
    /// Maximum outstanding RDMA read/atomic per EE context.
    pub max_ee_rd_atom: c_int,
    /// Maximum RDMA read/atomic resources.
    pub max_res_rd_atom: c_int,
    /// Maximum outstanding RDMA read/atomic per QP as initiator.
    pub max_qp_init_rd_atom: c_int,
    /// Maximum outstanding RDMA read/atomic per EE as initiator.
    pub max_ee_init_rd_atom: c_int,
    /// `enum ibv_atomic_cap`.
    pub atomic_cap: ibv_atomic_cap,
    /// Maximum EE contexts.
    pub max_ee: c_int,
    /// Maximum RDDs.
    pub max_rdd: c_int,
    /// Maximum memory windows.
    pub max_mw: c_int,
    /// Maximum raw IPv6 QPs.
    pub max_raw_ipv6_qp: c_int,
    /// Maximum raw Ethertype QPs.
    pub max_raw_ethy_qp: c_int,
    /// Maximum multicast groups.
    pub max_mcast_grp: c_int,
    /// Maximum QPs per multicast group.
    pub max_mcast_qp_attach: c_int,
    /// Maximum QP attachments to multicast groups.
    pub max_total_mcast_qp_attach: c_int,
    /// Maximum address handles.
    pub max_ah: c_int,
    /// Maximum FMRs.
    pub max_fmr: c_int,
    /// Maximum remaps per FMR.
    pub max_map_per_fmr: c_int,
    /// Maximum SRQs.
    pub max_srq: c_int,
    /// Maximum work requests per SRQ.
    pub max_srq_wr: c_int,
    /// Maximum scatter/gather entries per SRQ work request.
    pub max_srq_sge: c_int,
    /// Number of partition keys.
    pub max_pkeys: u16,
    /// Local CA ack delay.
    pub local_ca_ack_delay: u8,
    /// Number of physical ports.
    pub phys_port_cnt: u8,
}

/// `struct ibv_query_device_ex_input`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_query_device_ex_input {
    /// Must be 0.
    pub comp_mask: u32,
}

/// `enum ibv_odp_general_caps`.
pub type ibv_odp_general_caps = c_uint;
/// On-demand paging is supported.
pub const IBV_ODP_SUPPORT: ibv_odp_general_caps = 1;
/// Implicit on-demand paging is supported.
pub const IBV_ODP_SUPPORT_IMPLICIT: ibv_odp_general_caps = 1 << 1;

/// `enum ibv_odp_transport_cap_bits` (also used by `mlx5dv_context.dc_odp_caps`).
pub type ibv_odp_transport_cap_bits = c_uint;
/// ODP for send.
pub const IBV_ODP_SUPPORT_SEND: ibv_odp_transport_cap_bits = 1;
/// ODP for receive.
pub const IBV_ODP_SUPPORT_RECV: ibv_odp_transport_cap_bits = 1 << 1;
/// ODP for RDMA write.
pub const IBV_ODP_SUPPORT_WRITE: ibv_odp_transport_cap_bits = 1 << 2;
/// ODP for RDMA read.
pub const IBV_ODP_SUPPORT_READ: ibv_odp_transport_cap_bits = 1 << 3;
/// ODP for atomics.
pub const IBV_ODP_SUPPORT_ATOMIC: ibv_odp_transport_cap_bits = 1 << 4;
/// ODP for SRQ receive.
pub const IBV_ODP_SUPPORT_SRQ_RECV: ibv_odp_transport_cap_bits = 1 << 5;
/// ODP for flush (newer than rdma-core 56).
pub const IBV_ODP_SUPPORT_FLUSH: ibv_odp_transport_cap_bits = 1 << 6;
/// ODP for atomic write (newer than rdma-core 56).
pub const IBV_ODP_SUPPORT_ATOMIC_WRITE: ibv_odp_transport_cap_bits = 1 << 7;

/// `struct ibv_odp_caps`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_odp_caps {
    /// `enum ibv_odp_general_caps`.
    pub general_caps: u64,
    /// Per-transport ODP capabilities.
    pub per_transport_caps: ibv_odp_caps_per_transport_caps,
}

/// The anonymous `per_transport_caps` struct of `struct ibv_odp_caps`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_odp_caps_per_transport_caps {
    /// RC: `enum ibv_odp_transport_cap_bits`.
    pub rc_odp_caps: u32,
    /// UC: `enum ibv_odp_transport_cap_bits`.
    pub uc_odp_caps: u32,
    /// UD: `enum ibv_odp_transport_cap_bits`.
    pub ud_odp_caps: u32,
}

/// `struct ibv_tso_caps`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_tso_caps {
    /// Maximum TSO payload.
    pub max_tso: u32,
    /// Bit mask of QP types (`1 << IBV_QPT_*`).
    pub supported_qpts: u32,
}

/// `struct ibv_rss_caps`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_rss_caps {
    /// Bit mask of QP types.
    pub supported_qpts: u32,
    /// Maximum receive work queue indirection tables.
    pub max_rwq_indirection_tables: u32,
    /// Maximum indirection table size.
    pub max_rwq_indirection_table_size: u32,
    /// `enum ibv_rx_hash_fields`.
    pub rx_hash_fields_mask: u64,
    /// `enum ibv_rx_hash_function_flags`.
    pub rx_hash_function: u8,
}

/// `struct ibv_packet_pacing_caps`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_packet_pacing_caps {
    /// Minimum rate limit (kbps).
    pub qp_rate_limit_min: u32,
    /// Maximum rate limit (kbps).
    pub qp_rate_limit_max: u32,
    /// Bit mask of QP types.
    pub supported_qpts: u32,
}

/// `struct ibv_tm_caps`: tag matching capabilities.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_tm_caps {
    /// Maximum rendezvous header size.
    pub max_rndv_hdr_size: u32,
    /// Maximum tags in a matching list.
    pub max_num_tags: u32,
    /// `enum ibv_tm_cap_flags`.
    pub flags: u32,
    /// Maximum outstanding list operations.
    pub max_ops: u32,
    /// Maximum scatter/gather entries in a tagged buffer.
    pub max_sge: u32,
}

/// `struct ibv_cq_moderation_caps`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_cq_moderation_caps {
    /// Maximum completion count.
    pub max_cq_count: u16,
    /// Maximum period in microseconds.
    pub max_cq_period: u16,
}

/// `struct ibv_pci_atomic_caps`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_pci_atomic_caps {
    /// Fetch-and-add operand sizes.
    pub fetch_add: u16,
    /// Swap operand sizes.
    pub swap: u16,
    /// Compare-and-swap operand sizes.
    pub compare_swap: u16,
}

/// `struct ibv_device_attr_ex`: filled by `ibv_query_device_ex`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_device_attr_ex {
    /// The legacy attributes.
    pub orig_attr: ibv_device_attr,
    /// Which of the extended fields are valid.
    pub comp_mask: u32,
    /// On-demand paging capabilities.
    pub odp_caps: ibv_odp_caps,
    /// Mask of the completion timestamp.
    pub completion_timestamp_mask: u64,
    /// HCA core clock in kHz.
    pub hca_core_clock: u64,
    /// Extended device capability flags.
    pub device_cap_flags_ex: u64,
    /// TSO capabilities.
    pub tso_caps: ibv_tso_caps,
    /// RSS capabilities.
    pub rss_caps: ibv_rss_caps,
    /// Maximum receive work queues.
    pub max_wq_type_rq: u32,
    /// Packet pacing capabilities.
    pub packet_pacing_caps: ibv_packet_pacing_caps,
    /// `enum ibv_raw_packet_caps`.
    pub raw_packet_caps: u32,
    /// Tag matching capabilities.
    pub tm_caps: ibv_tm_caps,
    /// CQ moderation capabilities.
    pub cq_mod_caps: ibv_cq_moderation_caps,
    /// Maximum device memory size.
    pub max_dm_size: u64,
    /// PCI atomic capabilities.
    pub pci_atomic_caps: ibv_pci_atomic_caps,
    /// XRC ODP capabilities.
    pub xrc_odp_caps: u32,
    /// Number of physical ports (beyond 255).
    pub phys_port_cnt_ex: u32,
}

// ---------------------------------------------------------------------------------------
// Ports

/// `enum ibv_mtu`.
pub type ibv_mtu = c_uint;
/// 256 bytes.
pub const IBV_MTU_256: ibv_mtu = 1;
/// 512 bytes.
pub const IBV_MTU_512: ibv_mtu = 2;
/// 1024 bytes.
pub const IBV_MTU_1024: ibv_mtu = 3;
/// 2048 bytes.
pub const IBV_MTU_2048: ibv_mtu = 4;
/// 4096 bytes.
pub const IBV_MTU_4096: ibv_mtu = 5;

/// `enum ibv_port_state`.
pub type ibv_port_state = c_uint;
/// No state change.
pub const IBV_PORT_NOP: ibv_port_state = 0;
/// Down.
pub const IBV_PORT_DOWN: ibv_port_state = 1;
/// Initializing.
pub const IBV_PORT_INIT: ibv_port_state = 2;
/// Armed.
pub const IBV_PORT_ARMED: ibv_port_state = 3;
/// Active.
pub const IBV_PORT_ACTIVE: ibv_port_state = 4;
/// Active, deferred.
pub const IBV_PORT_ACTIVE_DEFER: ibv_port_state = 5;

/// Link layer not reported (treated as InfiniBand).
pub const IBV_LINK_LAYER_UNSPECIFIED: u8 = 0;
/// InfiniBand link layer.
pub const IBV_LINK_LAYER_INFINIBAND: u8 = 1;
/// Ethernet link layer (RoCE).
pub const IBV_LINK_LAYER_ETHERNET: u8 = 2;

/// `enum ibv_port_cap_flags`.
pub type ibv_port_cap_flags = c_uint;
/// Subnet manager.
pub const IBV_PORT_SM: ibv_port_cap_flags = 1 << 1;
/// Notice supported.
pub const IBV_PORT_NOTICE_SUP: ibv_port_cap_flags = 1 << 2;
/// Trap supported.
pub const IBV_PORT_TRAP_SUP: ibv_port_cap_flags = 1 << 3;
/// Optional IPD supported.
pub const IBV_PORT_OPT_IPD_SUP: ibv_port_cap_flags = 1 << 4;
/// Automatic migration supported.
pub const IBV_PORT_AUTO_MIGR_SUP: ibv_port_cap_flags = 1 << 5;
/// SL mapping supported.
pub const IBV_PORT_SL_MAP_SUP: ibv_port_cap_flags = 1 << 6;
/// M_Key in NVRAM.
pub const IBV_PORT_MKEY_NVRAM: ibv_port_cap_flags = 1 << 7;
/// P_Key in NVRAM.
pub const IBV_PORT_PKEY_NVRAM: ibv_port_cap_flags = 1 << 8;
/// LED info supported.
pub const IBV_PORT_LED_INFO_SUP: ibv_port_cap_flags = 1 << 9;
/// System image GUID supported.
pub const IBV_PORT_SYS_IMAGE_GUID_SUP: ibv_port_cap_flags = 1 << 11;
/// P_Key switch external port trap supported.
pub const IBV_PORT_PKEY_SW_EXT_PORT_TRAP_SUP: ibv_port_cap_flags = 1 << 12;
/// Extended speeds supported.
pub const IBV_PORT_EXTENDED_SPEEDS_SUP: ibv_port_cap_flags = 1 << 14;
/// `port_cap_flags2` is valid.
pub const IBV_PORT_CAP_MASK2_SUP: ibv_port_cap_flags = 1 << 15;
/// Communication manager supported.
pub const IBV_PORT_CM_SUP: ibv_port_cap_flags = 1 << 16;
/// SNMP tunnel supported.
pub const IBV_PORT_SNMP_TUNNEL_SUP: ibv_port_cap_flags = 1 << 17;
/// Reinit supported.
pub const IBV_PORT_REINIT_SUP: ibv_port_cap_flags = 1 << 18;
/// Device management supported.
pub const IBV_PORT_DEVICE_MGMT_SUP: ibv_port_cap_flags = 1 << 19;
/// Vendor class supported.
pub const IBV_PORT_VENDOR_CLASS_SUP: ibv_port_cap_flags = 1 << 20;
/// DR notice supported.
pub const IBV_PORT_DR_NOTICE_SUP: ibv_port_cap_flags = 1 << 21;
/// Capability mask notice supported.
pub const IBV_PORT_CAP_MASK_NOTICE_SUP: ibv_port_cap_flags = 1 << 22;
/// Boot management supported.
pub const IBV_PORT_BOOT_MGMT_SUP: ibv_port_cap_flags = 1 << 23;
/// Link latency supported.
pub const IBV_PORT_LINK_LATENCY_SUP: ibv_port_cap_flags = 1 << 24;
/// Client reregistration supported.
pub const IBV_PORT_CLIENT_REG_SUP: ibv_port_cap_flags = 1 << 25;
/// IP-based GIDs (RoCE).
pub const IBV_PORT_IP_BASED_GIDS: ibv_port_cap_flags = 1 << 26;

/// `enum ibv_port_cap_flags2`.
pub type ibv_port_cap_flags2 = c_uint;
/// Set node description supported.
pub const IBV_PORT_SET_NODE_DESC_SUP: ibv_port_cap_flags2 = 1;
/// Port info extended supported.
pub const IBV_PORT_INFO_EXT_SUP: ibv_port_cap_flags2 = 1 << 1;
/// Virtualization supported.
pub const IBV_PORT_VIRT_SUP: ibv_port_cap_flags2 = 1 << 2;
/// Switch port state table supported.
pub const IBV_PORT_SWITCH_PORT_STATE_TABLE_SUP: ibv_port_cap_flags2 = 1 << 3;
/// Link width 2x supported.
pub const IBV_PORT_LINK_WIDTH_2X_SUP: ibv_port_cap_flags2 = 1 << 4;
/// HDR link speed supported.
pub const IBV_PORT_LINK_SPEED_HDR_SUP: ibv_port_cap_flags2 = 1 << 5;
/// NDR link speed supported.
pub const IBV_PORT_LINK_SPEED_NDR_SUP: ibv_port_cap_flags2 = 1 << 10;
/// XDR link speed supported.
pub const IBV_PORT_LINK_SPEED_XDR_SUP: ibv_port_cap_flags2 = 1 << 12;

/// `struct ibv_port_attr`: filled by the inline `ibv_query_port` (shim `m5dv_query_port`).
///
/// Never pass it to the exported `ibv_query_port` symbol: that compat entry fills only the
/// 48-byte legacy layout and leaves `port_cap_flags2` and `active_speed_ex` unset.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_port_attr {
    /// `enum ibv_port_state`.
    pub state: ibv_port_state,
    /// `enum ibv_mtu`: largest MTU the port supports.
    pub max_mtu: ibv_mtu,
    /// `enum ibv_mtu`: active MTU.
    pub active_mtu: ibv_mtu,
    /// GID table length.
    pub gid_tbl_len: c_int,
    /// `enum ibv_port_cap_flags`.
    pub port_cap_flags: u32,
    /// Maximum message size.
    pub max_msg_sz: u32,
    /// Bad P_Key counter.
    pub bad_pkey_cntr: u32,
    /// Q_Key violation counter.
    pub qkey_viol_cntr: u32,
    /// P_Key table length.
    pub pkey_tbl_len: u16,
    /// Base LID.
    pub lid: u16,
    /// Subnet manager LID.
    pub sm_lid: u16,
    /// LID mask control.
    pub lmc: u8,
    /// Maximum virtual lanes.
    pub max_vl_num: u8,
    /// Subnet manager service level.
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
    /// `IBV_LINK_LAYER_*`.
    pub link_layer: u8,
    /// `enum ibv_port_flags`-style flags (`IBV_QPF_GRH_REQUIRED`).
    pub flags: u8,
    /// `enum ibv_port_cap_flags2`.
    pub port_cap_flags2: u16,
    /// Extended active speed (rdma-core 50+; 0 from older libraries).
    pub active_speed_ex: u32,
}

/// `port_attr.flags`: a GRH is required on this port.
pub const IBV_QPF_GRH_REQUIRED: u8 = 1;

// ---------------------------------------------------------------------------------------
// Asynchronous events

/// `enum ibv_event_type`.
pub type ibv_event_type = c_uint;
/// CQ error.
pub const IBV_EVENT_CQ_ERR: ibv_event_type = 0;
/// QP fatal error.
pub const IBV_EVENT_QP_FATAL: ibv_event_type = 1;
/// Invalid request on a QP.
pub const IBV_EVENT_QP_REQ_ERR: ibv_event_type = 2;
/// Access violation on a QP.
pub const IBV_EVENT_QP_ACCESS_ERR: ibv_event_type = 3;
/// Communication established.
pub const IBV_EVENT_COMM_EST: ibv_event_type = 4;
/// Send queue drained.
pub const IBV_EVENT_SQ_DRAINED: ibv_event_type = 5;
/// Path migrated.
pub const IBV_EVENT_PATH_MIG: ibv_event_type = 6;
/// Path migration error.
pub const IBV_EVENT_PATH_MIG_ERR: ibv_event_type = 7;
/// Device fatal error.
pub const IBV_EVENT_DEVICE_FATAL: ibv_event_type = 8;
/// Port active.
pub const IBV_EVENT_PORT_ACTIVE: ibv_event_type = 9;
/// Port error.
pub const IBV_EVENT_PORT_ERR: ibv_event_type = 10;
/// LID changed.
pub const IBV_EVENT_LID_CHANGE: ibv_event_type = 11;
/// P_Key changed.
pub const IBV_EVENT_PKEY_CHANGE: ibv_event_type = 12;
/// Subnet manager changed.
pub const IBV_EVENT_SM_CHANGE: ibv_event_type = 13;
/// SRQ error.
pub const IBV_EVENT_SRQ_ERR: ibv_event_type = 14;
/// SRQ limit reached.
pub const IBV_EVENT_SRQ_LIMIT_REACHED: ibv_event_type = 15;
/// Last WQE reached on a QP attached to an SRQ.
pub const IBV_EVENT_QP_LAST_WQE_REACHED: ibv_event_type = 16;
/// Client reregister.
pub const IBV_EVENT_CLIENT_REREGISTER: ibv_event_type = 17;
/// GID table changed.
pub const IBV_EVENT_GID_CHANGE: ibv_event_type = 18;
/// Work queue fatal error.
pub const IBV_EVENT_WQ_FATAL: ibv_event_type = 19;
/// Device speed changed (newer rdma-core).
pub const IBV_EVENT_DEVICE_SPEED_CHANGE: ibv_event_type = 20;

/// `struct ibv_async_event`: filled by `ibv_get_async_event`.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct ibv_async_event {
    /// The object the event is about.
    pub element: ibv_async_event_element,
    /// `enum ibv_event_type`.
    pub event_type: ibv_event_type,
}

/// The anonymous `element` union of `struct ibv_async_event`.
#[repr(C)]
#[derive(Copy, Clone)]
pub union ibv_async_event_element {
    /// CQ events.
    pub cq: *mut ibv_cq,
    /// QP events.
    pub qp: *mut ibv_qp,
    /// SRQ events.
    pub srq: *mut ibv_srq,
    /// WQ events.
    pub wq: *mut ibv_wq,
    /// Port events.
    pub port_num: c_int,
}

// ---------------------------------------------------------------------------------------
// Work completions

/// `enum ibv_wc_status`.
pub type ibv_wc_status = c_uint;
/// Success.
pub const IBV_WC_SUCCESS: ibv_wc_status = 0;
/// Local length error.
pub const IBV_WC_LOC_LEN_ERR: ibv_wc_status = 1;
/// Local QP operation error.
pub const IBV_WC_LOC_QP_OP_ERR: ibv_wc_status = 2;
/// Local EE context operation error.
pub const IBV_WC_LOC_EEC_OP_ERR: ibv_wc_status = 3;
/// Local protection error.
pub const IBV_WC_LOC_PROT_ERR: ibv_wc_status = 4;
/// Work request flushed.
pub const IBV_WC_WR_FLUSH_ERR: ibv_wc_status = 5;
/// Memory window bind error.
pub const IBV_WC_MW_BIND_ERR: ibv_wc_status = 6;
/// Bad response error.
pub const IBV_WC_BAD_RESP_ERR: ibv_wc_status = 7;
/// Local access error.
pub const IBV_WC_LOC_ACCESS_ERR: ibv_wc_status = 8;
/// Remote invalid request error.
pub const IBV_WC_REM_INV_REQ_ERR: ibv_wc_status = 9;
/// Remote access error.
pub const IBV_WC_REM_ACCESS_ERR: ibv_wc_status = 10;
/// Remote operation error.
pub const IBV_WC_REM_OP_ERR: ibv_wc_status = 11;
/// Transport retry counter exceeded.
pub const IBV_WC_RETRY_EXC_ERR: ibv_wc_status = 12;
/// RNR retry counter exceeded.
pub const IBV_WC_RNR_RETRY_EXC_ERR: ibv_wc_status = 13;
/// Local RDD violation error.
pub const IBV_WC_LOC_RDD_VIOL_ERR: ibv_wc_status = 14;
/// Remote invalid RD request.
pub const IBV_WC_REM_INV_RD_REQ_ERR: ibv_wc_status = 15;
/// Remote aborted error.
pub const IBV_WC_REM_ABORT_ERR: ibv_wc_status = 16;
/// Invalid EE context number.
pub const IBV_WC_INV_EECN_ERR: ibv_wc_status = 17;
/// Invalid EE context state.
pub const IBV_WC_INV_EEC_STATE_ERR: ibv_wc_status = 18;
/// Fatal error.
pub const IBV_WC_FATAL_ERR: ibv_wc_status = 19;
/// Response timeout error.
pub const IBV_WC_RESP_TIMEOUT_ERR: ibv_wc_status = 20;
/// General error.
pub const IBV_WC_GENERAL_ERR: ibv_wc_status = 21;
/// Tag matching error.
pub const IBV_WC_TM_ERR: ibv_wc_status = 22;
/// Tag matching rendezvous incomplete.
pub const IBV_WC_TM_RNDV_INCOMPLETE: ibv_wc_status = 23;

/// `enum ibv_wc_opcode`.
pub type ibv_wc_opcode = c_uint;
/// Send completed.
pub const IBV_WC_SEND: ibv_wc_opcode = 0;
/// RDMA write completed.
pub const IBV_WC_RDMA_WRITE: ibv_wc_opcode = 1;
/// RDMA read completed.
pub const IBV_WC_RDMA_READ: ibv_wc_opcode = 2;
/// Compare-and-swap completed.
pub const IBV_WC_COMP_SWAP: ibv_wc_opcode = 3;
/// Fetch-and-add completed.
pub const IBV_WC_FETCH_ADD: ibv_wc_opcode = 4;
/// Memory window bind completed.
pub const IBV_WC_BIND_MW: ibv_wc_opcode = 5;
/// Local invalidate completed.
pub const IBV_WC_LOCAL_INV: ibv_wc_opcode = 6;
/// TSO send completed.
pub const IBV_WC_TSO: ibv_wc_opcode = 7;
/// Flush completed (rdma-core 45+).
pub const IBV_WC_FLUSH: ibv_wc_opcode = 8;
/// Atomic write completed (rdma-core 44+).
pub const IBV_WC_ATOMIC_WRITE: ibv_wc_opcode = 9;
/// Receive completed (the bit that marks every receive-side opcode).
pub const IBV_WC_RECV: ibv_wc_opcode = 1 << 7;
/// RDMA write with immediate received.
pub const IBV_WC_RECV_RDMA_WITH_IMM: ibv_wc_opcode = (1 << 7) + 1;
/// Tag matching: add.
pub const IBV_WC_TM_ADD: ibv_wc_opcode = (1 << 7) + 2;
/// Tag matching: delete.
pub const IBV_WC_TM_DEL: ibv_wc_opcode = (1 << 7) + 3;
/// Tag matching: sync.
pub const IBV_WC_TM_SYNC: ibv_wc_opcode = (1 << 7) + 4;
/// Tag matching: receive.
pub const IBV_WC_TM_RECV: ibv_wc_opcode = (1 << 7) + 5;
/// Tag matching: no tag.
pub const IBV_WC_TM_NO_TAG: ibv_wc_opcode = (1 << 7) + 6;
/// Driver-specific opcode 1.
pub const IBV_WC_DRIVER1: ibv_wc_opcode = (1 << 7) + 7;
/// Driver-specific opcode 2.
pub const IBV_WC_DRIVER2: ibv_wc_opcode = (1 << 7) + 8;
/// Driver-specific opcode 3.
pub const IBV_WC_DRIVER3: ibv_wc_opcode = (1 << 7) + 9;

/// Shift of `IBV_WC_IP_CSUM_OK`.
pub const IBV_WC_IP_CSUM_OK_SHIFT: c_uint = 2;

/// `enum ibv_create_cq_wc_flags`: what an extended CQ can report.
pub type ibv_create_cq_wc_flags = c_uint;
/// Byte length.
pub const IBV_WC_EX_WITH_BYTE_LEN: ibv_create_cq_wc_flags = 1;
/// Immediate data.
pub const IBV_WC_EX_WITH_IMM: ibv_create_cq_wc_flags = 1 << 1;
/// Local QP number.
pub const IBV_WC_EX_WITH_QP_NUM: ibv_create_cq_wc_flags = 1 << 2;
/// Source QP number.
pub const IBV_WC_EX_WITH_SRC_QP: ibv_create_cq_wc_flags = 1 << 3;
/// Source LID.
pub const IBV_WC_EX_WITH_SLID: ibv_create_cq_wc_flags = 1 << 4;
/// Service level.
pub const IBV_WC_EX_WITH_SL: ibv_create_cq_wc_flags = 1 << 5;
/// DLID path bits.
pub const IBV_WC_EX_WITH_DLID_PATH_BITS: ibv_create_cq_wc_flags = 1 << 6;
/// Completion timestamp.
pub const IBV_WC_EX_WITH_COMPLETION_TIMESTAMP: ibv_create_cq_wc_flags = 1 << 7;
/// CVLAN.
pub const IBV_WC_EX_WITH_CVLAN: ibv_create_cq_wc_flags = 1 << 8;
/// Flow tag.
pub const IBV_WC_EX_WITH_FLOW_TAG: ibv_create_cq_wc_flags = 1 << 9;
/// Tag matching info.
pub const IBV_WC_EX_WITH_TM_INFO: ibv_create_cq_wc_flags = 1 << 10;
/// Wall-clock completion timestamp.
pub const IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK: ibv_create_cq_wc_flags = 1 << 11;
/// The fields `struct ibv_wc` always had.
pub const IBV_WC_STANDARD_FLAGS: ibv_create_cq_wc_flags = IBV_WC_EX_WITH_BYTE_LEN
    | IBV_WC_EX_WITH_IMM
    | IBV_WC_EX_WITH_QP_NUM
    | IBV_WC_EX_WITH_SRC_QP
    | IBV_WC_EX_WITH_SLID
    | IBV_WC_EX_WITH_SL
    | IBV_WC_EX_WITH_DLID_PATH_BITS;
/// Every flag `ibv_create_cq_ex` accepts.
pub const IBV_CREATE_CQ_SUP_WC_FLAGS: ibv_create_cq_wc_flags = IBV_WC_STANDARD_FLAGS
    | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP
    | IBV_WC_EX_WITH_CVLAN
    | IBV_WC_EX_WITH_FLOW_TAG
    | IBV_WC_EX_WITH_TM_INFO
    | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;

/// `enum ibv_wc_flags`.
pub type ibv_wc_flags = c_uint;
/// A GRH is present.
pub const IBV_WC_GRH: ibv_wc_flags = 1;
/// Immediate data is valid.
pub const IBV_WC_WITH_IMM: ibv_wc_flags = 1 << 1;
/// IP checksum verified.
pub const IBV_WC_IP_CSUM_OK: ibv_wc_flags = 1 << IBV_WC_IP_CSUM_OK_SHIFT;
/// Invalidated rkey is valid.
pub const IBV_WC_WITH_INV: ibv_wc_flags = 1 << 3;
/// Tag matching sync request.
pub const IBV_WC_TM_SYNC_REQ: ibv_wc_flags = 1 << 4;
/// Tag matched.
pub const IBV_WC_TM_MATCH: ibv_wc_flags = 1 << 5;
/// Tag matching data valid.
pub const IBV_WC_TM_DATA_VALID: ibv_wc_flags = 1 << 6;

/// `struct ibv_wc`: a work completion from `ibv_poll_cq`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_wc {
    /// The work request id.
    pub wr_id: u64,
    /// `enum ibv_wc_status`.
    pub status: ibv_wc_status,
    /// `enum ibv_wc_opcode`.
    pub opcode: ibv_wc_opcode,
    /// Vendor error syndrome.
    pub vendor_err: u32,
    /// Bytes transferred.
    pub byte_len: u32,
    /// Anonymous union: `__be32 imm_data` or `uint32_t invalidated_rkey` (same 4 bytes).
    pub imm_data: u32,
    /// Local QP number.
    pub qp_num: u32,
    /// Source QP number (UD).
    pub src_qp: u32,
    /// `enum ibv_wc_flags`.
    pub wc_flags: c_uint,
    /// P_Key index (GSI).
    pub pkey_index: u16,
    /// Source LID.
    pub slid: u16,
    /// Service level.
    pub sl: u8,
    /// DLID path bits.
    pub dlid_path_bits: u8,
}

// ---------------------------------------------------------------------------------------
// Memory

/// `enum ibv_access_flags`.
pub type ibv_access_flags = c_uint;
/// Local write.
pub const IBV_ACCESS_LOCAL_WRITE: ibv_access_flags = 1;
/// Remote write.
pub const IBV_ACCESS_REMOTE_WRITE: ibv_access_flags = 1 << 1;
/// Remote read.
pub const IBV_ACCESS_REMOTE_READ: ibv_access_flags = 1 << 2;
/// Remote atomic.
pub const IBV_ACCESS_REMOTE_ATOMIC: ibv_access_flags = 1 << 3;
/// Memory window bind.
pub const IBV_ACCESS_MW_BIND: ibv_access_flags = 1 << 4;
/// Zero-based addressing.
pub const IBV_ACCESS_ZERO_BASED: ibv_access_flags = 1 << 5;
/// On-demand paging.
pub const IBV_ACCESS_ON_DEMAND: ibv_access_flags = 1 << 6;
/// Huge pages.
pub const IBV_ACCESS_HUGETLB: ibv_access_flags = 1 << 7;
/// Global flush (rdma-core 45+).
pub const IBV_ACCESS_FLUSH_GLOBAL: ibv_access_flags = 1 << 8;
/// Persistent flush (rdma-core 45+).
pub const IBV_ACCESS_FLUSH_PERSISTENT: ibv_access_flags = 1 << 9;
/// First of the optional access flags (ignored where not supported).
pub const IBV_ACCESS_OPTIONAL_FIRST: ibv_access_flags = 1 << 20;
/// The range of optional access flags.
pub const IBV_ACCESS_OPTIONAL_RANGE: ibv_access_flags =
    ((IBV_ACCESS_OPTIONAL_FIRST << 10) - 1) & !(IBV_ACCESS_OPTIONAL_FIRST - 1);
/// Relaxed ordering (optional).
pub const IBV_ACCESS_RELAXED_ORDERING: ibv_access_flags = IBV_ACCESS_OPTIONAL_FIRST;

/// `struct ibv_mw_bind_info`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_mw_bind_info {
    /// The MR to bind to.
    pub mr: *mut ibv_mr,
    /// Start address.
    pub addr: u64,
    /// Length.
    pub length: u64,
    /// `enum ibv_access_flags`.
    pub mw_access_flags: c_uint,
}

/// `struct ibv_pd`: protection domain.
#[repr(C)]
#[derive(Debug)]
pub struct ibv_pd {
    /// Owning context.
    pub context: *mut ibv_context,
    /// Kernel handle.
    pub handle: u32,
}

/// `struct ibv_td_init_attr`: thread domain attributes.
#[repr(C)]
#[derive(Debug, Default, Copy, Clone)]
pub struct ibv_td_init_attr {
    /// No bits defined: 0.
    pub comp_mask: u32,
}

/// `struct ibv_td`: thread domain (mlx5: a BlueFlame register of its own, used without a lock).
#[repr(C)]
#[derive(Debug)]
pub struct ibv_td {
    /// Owning context.
    pub context: *mut ibv_context,
}

/// `struct ibv_xrcd`: XRC domain (only referenced here).
#[repr(C)]
#[derive(Debug)]
pub struct ibv_xrcd {
    /// Owning context.
    pub context: *mut ibv_context,
}

/// `struct ibv_mr`: registered memory region.
#[repr(C)]
#[derive(Debug)]
pub struct ibv_mr {
    /// Owning context.
    pub context: *mut ibv_context,
    /// Protection domain.
    pub pd: *mut ibv_pd,
    /// Start address.
    pub addr: *mut c_void,
    /// Length in bytes.
    pub length: size_t,
    /// Kernel handle.
    pub handle: u32,
    /// Local key.
    pub lkey: u32,
    /// Remote key.
    pub rkey: u32,
}

/// `enum ibv_mw_type`.
pub type ibv_mw_type = c_uint;
/// Type 1 memory window.
pub const IBV_MW_TYPE_1: ibv_mw_type = 1;
/// Type 2 memory window.
pub const IBV_MW_TYPE_2: ibv_mw_type = 2;

/// `struct ibv_mw`: memory window.
#[repr(C)]
#[derive(Debug)]
pub struct ibv_mw {
    /// Owning context.
    pub context: *mut ibv_context,
    /// Protection domain.
    pub pd: *mut ibv_pd,
    /// Remote key.
    pub rkey: u32,
    /// Kernel handle.
    pub handle: u32,
    /// `enum ibv_mw_type`.
    pub r#type: ibv_mw_type,
}

// ---------------------------------------------------------------------------------------
// Address handles

/// `struct ibv_global_route`: the GRH part of an address vector.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_global_route {
    /// Destination GID.
    pub dgid: ibv_gid,
    /// Flow label.
    pub flow_label: u32,
    /// Source GID index.
    pub sgid_index: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
}

/// `enum ibv_rate`.
pub type ibv_rate = c_uint;
/// The port's maximum rate.
pub const IBV_RATE_MAX: ibv_rate = 0;

/// `struct ibv_ah_attr`: address vector.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_ah_attr {
    /// Global route (valid when `is_global`).
    pub grh: ibv_global_route,
    /// Destination LID.
    pub dlid: u16,
    /// Service level.
    pub sl: u8,
    /// Source path bits.
    pub src_path_bits: u8,
    /// `enum ibv_rate`.
    pub static_rate: u8,
    /// 1 if `grh` is valid (required on RoCE).
    pub is_global: u8,
    /// Local port number.
    pub port_num: u8,
}

// ---------------------------------------------------------------------------------------
// Shared receive queues

/// `enum ibv_srq_attr_mask`.
pub type ibv_srq_attr_mask = c_uint;
/// Resize.
pub const IBV_SRQ_MAX_WR: ibv_srq_attr_mask = 1;
/// Arm the limit event.
pub const IBV_SRQ_LIMIT: ibv_srq_attr_mask = 1 << 1;

/// `struct ibv_srq_attr`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_srq_attr {
    /// Maximum outstanding work requests.
    pub max_wr: u32,
    /// Maximum scatter/gather entries per work request.
    pub max_sge: u32,
    /// Limit event threshold.
    pub srq_limit: u32,
}

/// `struct ibv_srq_init_attr`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_srq_init_attr {
    /// User context.
    pub srq_context: *mut c_void,
    /// Requested attributes.
    pub attr: ibv_srq_attr,
}

/// `enum ibv_srq_type`.
pub type ibv_srq_type = c_uint;
/// Basic SRQ.
pub const IBV_SRQT_BASIC: ibv_srq_type = 0;
/// XRC SRQ.
pub const IBV_SRQT_XRC: ibv_srq_type = 1;
/// Tag-matching SRQ.
pub const IBV_SRQT_TM: ibv_srq_type = 2;

/// `enum ibv_srq_init_attr_mask`.
pub type ibv_srq_init_attr_mask = c_uint;
/// `srq_type` is valid.
pub const IBV_SRQ_INIT_ATTR_TYPE: ibv_srq_init_attr_mask = 1;
/// `pd` is valid.
pub const IBV_SRQ_INIT_ATTR_PD: ibv_srq_init_attr_mask = 1 << 1;
/// `xrcd` is valid.
pub const IBV_SRQ_INIT_ATTR_XRCD: ibv_srq_init_attr_mask = 1 << 2;
/// `cq` is valid.
pub const IBV_SRQ_INIT_ATTR_CQ: ibv_srq_init_attr_mask = 1 << 3;
/// `tm_cap` is valid.
pub const IBV_SRQ_INIT_ATTR_TM: ibv_srq_init_attr_mask = 1 << 4;
/// First reserved bit.
pub const IBV_SRQ_INIT_ATTR_RESERVED: ibv_srq_init_attr_mask = 1 << 5;

/// `struct ibv_tm_cap`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_tm_cap {
    /// Tags in the matching list.
    pub max_num_tags: u32,
    /// Outstanding list operations.
    pub max_ops: u32,
}

/// `struct ibv_srq_init_attr_ex`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_srq_init_attr_ex {
    /// User context.
    pub srq_context: *mut c_void,
    /// Requested attributes.
    pub attr: ibv_srq_attr,
    /// `enum ibv_srq_init_attr_mask`.
    pub comp_mask: u32,
    /// `enum ibv_srq_type`.
    pub srq_type: ibv_srq_type,
    /// Protection domain.
    pub pd: *mut ibv_pd,
    /// XRC domain.
    pub xrcd: *mut ibv_xrcd,
    /// XRC completion queue.
    pub cq: *mut ibv_cq,
    /// Tag-matching capabilities.
    pub tm_cap: ibv_tm_cap,
}

/// `enum ibv_wq_type`.
pub type ibv_wq_type = c_uint;
/// `enum ibv_wq_state`.
pub type ibv_wq_state = c_uint;

/// `struct ibv_rwq_ind_table` (only referenced here).
#[repr(C)]
#[derive(Debug)]
pub struct ibv_rwq_ind_table {
    /// Owning context.
    pub context: *mut ibv_context,
    /// Kernel handle.
    pub ind_tbl_handle: c_int,
    /// Table number.
    pub ind_tbl_num: c_int,
    /// Compatibility mask.
    pub comp_mask: u32,
}

// ---------------------------------------------------------------------------------------
// Queue pairs: creation

/// `enum ibv_qp_type`.
pub type ibv_qp_type = c_uint;
/// Reliable connected.
pub const IBV_QPT_RC: ibv_qp_type = 2;
/// Unreliable connected.
pub const IBV_QPT_UC: ibv_qp_type = 3;
/// Unreliable datagram.
pub const IBV_QPT_UD: ibv_qp_type = 4;
/// Raw packet.
pub const IBV_QPT_RAW_PACKET: ibv_qp_type = 8;
/// XRC initiator.
pub const IBV_QPT_XRC_SEND: ibv_qp_type = 9;
/// XRC target.
pub const IBV_QPT_XRC_RECV: ibv_qp_type = 10;
/// Driver-specific type: DC on mlx5, created through `mlx5dv_create_qp`.
pub const IBV_QPT_DRIVER: ibv_qp_type = 0xff;

/// `struct ibv_qp_cap`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_qp_cap {
    /// Send queue depth.
    pub max_send_wr: u32,
    /// Receive queue depth.
    pub max_recv_wr: u32,
    /// Scatter/gather entries per send work request.
    pub max_send_sge: u32,
    /// Scatter/gather entries per receive work request.
    pub max_recv_sge: u32,
    /// Maximum inline data.
    pub max_inline_data: u32,
}

/// `struct ibv_qp_init_attr`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_qp_init_attr {
    /// User context.
    pub qp_context: *mut c_void,
    /// Send CQ.
    pub send_cq: *mut ibv_cq,
    /// Receive CQ.
    pub recv_cq: *mut ibv_cq,
    /// Shared receive queue.
    pub srq: *mut ibv_srq,
    /// Capacities (updated with the actual ones).
    pub cap: ibv_qp_cap,
    /// `enum ibv_qp_type`.
    pub qp_type: ibv_qp_type,
    /// Signal every send work request.
    pub sq_sig_all: c_int,
}

/// `enum ibv_qp_init_attr_mask`.
pub type ibv_qp_init_attr_mask = c_uint;
/// `pd` is valid.
pub const IBV_QP_INIT_ATTR_PD: ibv_qp_init_attr_mask = 1;
/// `xrcd` is valid.
pub const IBV_QP_INIT_ATTR_XRCD: ibv_qp_init_attr_mask = 1 << 1;
/// `create_flags` is valid.
pub const IBV_QP_INIT_ATTR_CREATE_FLAGS: ibv_qp_init_attr_mask = 1 << 2;
/// `max_tso_header` is valid.
pub const IBV_QP_INIT_ATTR_MAX_TSO_HEADER: ibv_qp_init_attr_mask = 1 << 3;
/// `rwq_ind_tbl` is valid.
pub const IBV_QP_INIT_ATTR_IND_TABLE: ibv_qp_init_attr_mask = 1 << 4;
/// `rx_hash_conf` is valid.
pub const IBV_QP_INIT_ATTR_RX_HASH: ibv_qp_init_attr_mask = 1 << 5;
/// `send_ops_flags` is valid (required for `ibv_qp_to_qp_ex`).
pub const IBV_QP_INIT_ATTR_SEND_OPS_FLAGS: ibv_qp_init_attr_mask = 1 << 6;

/// `enum ibv_qp_create_flags`.
pub type ibv_qp_create_flags = c_uint;
/// Block self multicast loopback.
pub const IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: ibv_qp_create_flags = 1 << 1;
/// Scatter FCS.
pub const IBV_QP_CREATE_SCATTER_FCS: ibv_qp_create_flags = 1 << 8;
/// CVLAN stripping.
pub const IBV_QP_CREATE_CVLAN_STRIPPING: ibv_qp_create_flags = 1 << 9;
/// Source QPN.
pub const IBV_QP_CREATE_SOURCE_QPN: ibv_qp_create_flags = 1 << 10;
/// PCI write end padding.
pub const IBV_QP_CREATE_PCI_WRITE_END_PADDING: ibv_qp_create_flags = 1 << 11;

/// `enum ibv_qp_create_send_ops_flags`: which `ibv_wr_*` operations the QP supports.
pub type ibv_qp_create_send_ops_flags = c_uint;
/// `ibv_wr_rdma_write`.
pub const IBV_QP_EX_WITH_RDMA_WRITE: ibv_qp_create_send_ops_flags = 1;
/// `ibv_wr_rdma_write_imm`.
pub const IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM: ibv_qp_create_send_ops_flags = 1 << 1;
/// `ibv_wr_send`.
pub const IBV_QP_EX_WITH_SEND: ibv_qp_create_send_ops_flags = 1 << 2;
/// `ibv_wr_send_imm`.
pub const IBV_QP_EX_WITH_SEND_WITH_IMM: ibv_qp_create_send_ops_flags = 1 << 3;
/// `ibv_wr_rdma_read`.
pub const IBV_QP_EX_WITH_RDMA_READ: ibv_qp_create_send_ops_flags = 1 << 4;
/// `ibv_wr_atomic_cmp_swp`.
pub const IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP: ibv_qp_create_send_ops_flags = 1 << 5;
/// `ibv_wr_atomic_fetch_add`.
pub const IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD: ibv_qp_create_send_ops_flags = 1 << 6;
/// `ibv_wr_local_inv`.
pub const IBV_QP_EX_WITH_LOCAL_INV: ibv_qp_create_send_ops_flags = 1 << 7;
/// `ibv_wr_bind_mw`.
pub const IBV_QP_EX_WITH_BIND_MW: ibv_qp_create_send_ops_flags = 1 << 8;
/// `ibv_wr_send_inv`.
pub const IBV_QP_EX_WITH_SEND_WITH_INV: ibv_qp_create_send_ops_flags = 1 << 9;
/// `ibv_wr_send_tso`.
pub const IBV_QP_EX_WITH_TSO: ibv_qp_create_send_ops_flags = 1 << 10;
/// `ibv_wr_flush` (rdma-core 45+).
pub const IBV_QP_EX_WITH_FLUSH: ibv_qp_create_send_ops_flags = 1 << 11;
/// `ibv_wr_atomic_write` (rdma-core 44+).
pub const IBV_QP_EX_WITH_ATOMIC_WRITE: ibv_qp_create_send_ops_flags = 1 << 12;

/// `struct ibv_rx_hash_conf`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_rx_hash_conf {
    /// `enum ibv_rx_hash_function_flags`.
    pub rx_hash_function: u8,
    /// Key length.
    pub rx_hash_key_len: u8,
    /// Key.
    pub rx_hash_key: *mut u8,
    /// `enum ibv_rx_hash_fields`.
    pub rx_hash_fields_mask: u64,
}

/// `struct ibv_qp_init_attr_ex`: input of `ibv_create_qp_ex` and `mlx5dv_create_qp`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_qp_init_attr_ex {
    /// User context.
    pub qp_context: *mut c_void,
    /// Send CQ.
    pub send_cq: *mut ibv_cq,
    /// Receive CQ.
    pub recv_cq: *mut ibv_cq,
    /// Shared receive queue.
    pub srq: *mut ibv_srq,
    /// Capacities (updated with the actual ones).
    pub cap: ibv_qp_cap,
    /// `enum ibv_qp_type`.
    pub qp_type: ibv_qp_type,
    /// Signal every send work request.
    pub sq_sig_all: c_int,
    /// `enum ibv_qp_init_attr_mask`.
    pub comp_mask: u32,
    /// Protection domain.
    pub pd: *mut ibv_pd,
    /// XRC domain.
    pub xrcd: *mut ibv_xrcd,
    /// `enum ibv_qp_create_flags`.
    pub create_flags: u32,
    /// Maximum TSO header.
    pub max_tso_header: u16,
    /// Receive work queue indirection table.
    pub rwq_ind_tbl: *mut ibv_rwq_ind_table,
    /// RSS configuration.
    pub rx_hash_conf: ibv_rx_hash_conf,
    /// Source QPN.
    pub source_qpn: u32,
    /// `enum ibv_qp_create_send_ops_flags`.
    pub send_ops_flags: u64,
}

// ---------------------------------------------------------------------------------------
// Queue pairs: attributes and states

/// `enum ibv_qp_attr_mask`.
pub type ibv_qp_attr_mask = c_uint;
/// `qp_state`.
pub const IBV_QP_STATE: ibv_qp_attr_mask = 1;
/// `cur_qp_state`.
pub const IBV_QP_CUR_STATE: ibv_qp_attr_mask = 1 << 1;
/// `en_sqd_async_notify`.
pub const IBV_QP_EN_SQD_ASYNC_NOTIFY: ibv_qp_attr_mask = 1 << 2;
/// `qp_access_flags`.
pub const IBV_QP_ACCESS_FLAGS: ibv_qp_attr_mask = 1 << 3;
/// `pkey_index`.
pub const IBV_QP_PKEY_INDEX: ibv_qp_attr_mask = 1 << 4;
/// `port_num`.
pub const IBV_QP_PORT: ibv_qp_attr_mask = 1 << 5;
/// `qkey`.
pub const IBV_QP_QKEY: ibv_qp_attr_mask = 1 << 6;
/// `ah_attr`.
pub const IBV_QP_AV: ibv_qp_attr_mask = 1 << 7;
/// `path_mtu`.
pub const IBV_QP_PATH_MTU: ibv_qp_attr_mask = 1 << 8;
/// `timeout`.
pub const IBV_QP_TIMEOUT: ibv_qp_attr_mask = 1 << 9;
/// `retry_cnt`.
pub const IBV_QP_RETRY_CNT: ibv_qp_attr_mask = 1 << 10;
/// `rnr_retry`.
pub const IBV_QP_RNR_RETRY: ibv_qp_attr_mask = 1 << 11;
/// `rq_psn`.
pub const IBV_QP_RQ_PSN: ibv_qp_attr_mask = 1 << 12;
/// `max_rd_atomic`.
pub const IBV_QP_MAX_QP_RD_ATOMIC: ibv_qp_attr_mask = 1 << 13;
/// `alt_ah_attr` and friends.
pub const IBV_QP_ALT_PATH: ibv_qp_attr_mask = 1 << 14;
/// `min_rnr_timer`.
pub const IBV_QP_MIN_RNR_TIMER: ibv_qp_attr_mask = 1 << 15;
/// `sq_psn`.
pub const IBV_QP_SQ_PSN: ibv_qp_attr_mask = 1 << 16;
/// `max_dest_rd_atomic`.
pub const IBV_QP_MAX_DEST_RD_ATOMIC: ibv_qp_attr_mask = 1 << 17;
/// `path_mig_state`.
pub const IBV_QP_PATH_MIG_STATE: ibv_qp_attr_mask = 1 << 18;
/// `cap`.
pub const IBV_QP_CAP: ibv_qp_attr_mask = 1 << 19;
/// `dest_qp_num`.
pub const IBV_QP_DEST_QPN: ibv_qp_attr_mask = 1 << 20;
/// `rate_limit`.
pub const IBV_QP_RATE_LIMIT: ibv_qp_attr_mask = 1 << 25;

/// `enum ibv_qp_state`.
pub type ibv_qp_state = c_uint;
/// Reset.
pub const IBV_QPS_RESET: ibv_qp_state = 0;
/// Initialized.
pub const IBV_QPS_INIT: ibv_qp_state = 1;
/// Ready to receive.
pub const IBV_QPS_RTR: ibv_qp_state = 2;
/// Ready to send.
pub const IBV_QPS_RTS: ibv_qp_state = 3;
/// Send queue drained.
pub const IBV_QPS_SQD: ibv_qp_state = 4;
/// Send queue error.
pub const IBV_QPS_SQE: ibv_qp_state = 5;
/// Error.
pub const IBV_QPS_ERR: ibv_qp_state = 6;
/// Unknown.
pub const IBV_QPS_UNKNOWN: ibv_qp_state = 7;

/// `enum ibv_mig_state`.
pub type ibv_mig_state = c_uint;
/// Migrated.
pub const IBV_MIG_MIGRATED: ibv_mig_state = 0;
/// Rearm.
pub const IBV_MIG_REARM: ibv_mig_state = 1;
/// Armed.
pub const IBV_MIG_ARMED: ibv_mig_state = 2;

/// `struct ibv_qp_attr`: input of `ibv_modify_qp`, output of `ibv_query_qp`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_qp_attr {
    /// `enum ibv_qp_state`: the state to move to.
    pub qp_state: ibv_qp_state,
    /// `enum ibv_qp_state`: the assumed current state.
    pub cur_qp_state: ibv_qp_state,
    /// `enum ibv_mtu`.
    pub path_mtu: ibv_mtu,
    /// `enum ibv_mig_state`.
    pub path_mig_state: ibv_mig_state,
    /// Q_Key (UD).
    pub qkey: u32,
    /// Receive PSN.
    pub rq_psn: u32,
    /// Send PSN.
    pub sq_psn: u32,
    /// Destination QP number (RC).
    pub dest_qp_num: u32,
    /// `enum ibv_access_flags`: remote access allowed on this QP.
    pub qp_access_flags: c_uint,
    /// Capacities.
    pub cap: ibv_qp_cap,
    /// Primary path.
    pub ah_attr: ibv_ah_attr,
    /// Alternate path.
    pub alt_ah_attr: ibv_ah_attr,
    /// P_Key index.
    pub pkey_index: u16,
    /// Alternate P_Key index.
    pub alt_pkey_index: u16,
    /// Notify when SQ drained.
    pub en_sqd_async_notify: u8,
    /// Draining (query only).
    pub sq_draining: u8,
    /// Outstanding RDMA read/atomic as initiator.
    pub max_rd_atomic: u8,
    /// Outstanding RDMA read/atomic as target.
    pub max_dest_rd_atomic: u8,
    /// Minimum RNR NAK timer.
    pub min_rnr_timer: u8,
    /// Port number.
    pub port_num: u8,
    /// Local ack timeout.
    pub timeout: u8,
    /// Transport retry count.
    pub retry_cnt: u8,
    /// RNR retry count.
    pub rnr_retry: u8,
    /// Alternate port number.
    pub alt_port_num: u8,
    /// Alternate local ack timeout.
    pub alt_timeout: u8,
    /// Rate limit (kbps).
    pub rate_limit: u32,
}

// ---------------------------------------------------------------------------------------
// Work requests

/// `enum ibv_wr_opcode`.
pub type ibv_wr_opcode = c_uint;
/// RDMA write.
pub const IBV_WR_RDMA_WRITE: ibv_wr_opcode = 0;
/// RDMA write with immediate.
pub const IBV_WR_RDMA_WRITE_WITH_IMM: ibv_wr_opcode = 1;
/// Send.
pub const IBV_WR_SEND: ibv_wr_opcode = 2;
/// Send with immediate.
pub const IBV_WR_SEND_WITH_IMM: ibv_wr_opcode = 3;
/// RDMA read.
pub const IBV_WR_RDMA_READ: ibv_wr_opcode = 4;
/// Atomic compare-and-swap.
pub const IBV_WR_ATOMIC_CMP_AND_SWP: ibv_wr_opcode = 5;
/// Atomic fetch-and-add.
pub const IBV_WR_ATOMIC_FETCH_AND_ADD: ibv_wr_opcode = 6;
/// Local invalidate.
pub const IBV_WR_LOCAL_INV: ibv_wr_opcode = 7;
/// Bind memory window.
pub const IBV_WR_BIND_MW: ibv_wr_opcode = 8;
/// Send with invalidate.
pub const IBV_WR_SEND_WITH_INV: ibv_wr_opcode = 9;
/// TSO.
pub const IBV_WR_TSO: ibv_wr_opcode = 10;
/// Driver-specific.
pub const IBV_WR_DRIVER1: ibv_wr_opcode = 11;
/// Flush (rdma-core 45+).
pub const IBV_WR_FLUSH: ibv_wr_opcode = 14;
/// Atomic write (rdma-core 44+).
pub const IBV_WR_ATOMIC_WRITE: ibv_wr_opcode = 15;

/// `enum ibv_send_flags`.
pub type ibv_send_flags = c_uint;
/// Fence.
pub const IBV_SEND_FENCE: ibv_send_flags = 1;
/// Generate a completion.
pub const IBV_SEND_SIGNALED: ibv_send_flags = 1 << 1;
/// Solicited event.
pub const IBV_SEND_SOLICITED: ibv_send_flags = 1 << 2;
/// Inline data.
pub const IBV_SEND_INLINE: ibv_send_flags = 1 << 3;
/// IP checksum offload.
pub const IBV_SEND_IP_CSUM: ibv_send_flags = 1 << 4;

/// `enum ibv_placement_type` (flush, rdma-core 45+).
pub type ibv_placement_type = c_uint;
/// Global visibility.
pub const IBV_FLUSH_GLOBAL: ibv_placement_type = 1;
/// Persistence.
pub const IBV_FLUSH_PERSISTENT: ibv_placement_type = 1 << 1;

/// `enum ibv_selectivity_level` (flush, rdma-core 45+).
pub type ibv_selectivity_level = c_uint;
/// Flush a range.
pub const IBV_FLUSH_RANGE: ibv_selectivity_level = 0;
/// Flush the whole MR.
pub const IBV_FLUSH_MR: ibv_selectivity_level = 1;

/// `struct ibv_data_buf`: one inline-data buffer.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_data_buf {
    /// Start.
    pub addr: *mut c_void,
    /// Length.
    pub length: size_t,
}

/// `struct ibv_sge`: one scatter/gather entry.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ibv_sge {
    /// Start address.
    pub addr: u64,
    /// Length.
    pub length: u32,
    /// Local key of the MR that covers it.
    pub lkey: u32,
}

/// `struct ibv_fd_arr` (newer than rdma-core 56).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_fd_arr {
    /// File descriptors.
    pub arr: *mut c_int,
    /// Number of file descriptors.
    pub count: u32,
}

/// `struct ibv_send_wr`: a legacy send work request (`ibv_post_send`).
#[repr(C)]
#[derive(Copy, Clone)]
pub struct ibv_send_wr {
    /// Work request id.
    pub wr_id: u64,
    /// Next in the list.
    pub next: *mut ibv_send_wr,
    /// Scatter/gather list.
    pub sg_list: *mut ibv_sge,
    /// Entries in `sg_list`.
    pub num_sge: c_int,
    /// `enum ibv_wr_opcode`.
    pub opcode: ibv_wr_opcode,
    /// `enum ibv_send_flags`.
    pub send_flags: c_uint,
    /// Anonymous union: `__be32 imm_data` or `uint32_t invalidate_rkey` (same 4 bytes).
    pub imm_data: u32,
    /// Operation-specific fields.
    pub wr: ibv_send_wr_wr,
    /// QP-type-specific fields.
    pub qp_type: ibv_send_wr_qp_type,
    /// Anonymous union of `bind_mw` and `tso` (no C name; Rust needs one).
    pub bind_mw_tso: ibv_send_wr_bind_mw_tso,
}

/// The `wr` union of `struct ibv_send_wr`.
#[repr(C)]
#[derive(Copy, Clone)]
pub union ibv_send_wr_wr {
    /// RDMA read/write.
    pub rdma: ibv_send_wr_wr_rdma,
    /// Atomics.
    pub atomic: ibv_send_wr_wr_atomic,
    /// UD.
    pub ud: ibv_send_wr_wr_ud,
}

/// `wr.rdma` of `struct ibv_send_wr`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_send_wr_wr_rdma {
    /// Remote address.
    pub remote_addr: u64,
    /// Remote key.
    pub rkey: u32,
}

/// `wr.atomic` of `struct ibv_send_wr`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_send_wr_wr_atomic {
    /// Remote address.
    pub remote_addr: u64,
    /// Compare (CAS) or add (FAA) operand.
    pub compare_add: u64,
    /// Swap operand (CAS).
    pub swap: u64,
    /// Remote key.
    pub rkey: u32,
}

/// `wr.ud` of `struct ibv_send_wr`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_send_wr_wr_ud {
    /// Address handle.
    pub ah: *mut ibv_ah,
    /// Remote QP number.
    pub remote_qpn: u32,
    /// Remote Q_Key.
    pub remote_qkey: u32,
}

/// The `qp_type` union of `struct ibv_send_wr`.
#[repr(C)]
#[derive(Copy, Clone)]
pub union ibv_send_wr_qp_type {
    /// XRC.
    pub xrc: ibv_send_wr_qp_type_xrc,
}

/// `qp_type.xrc` of `struct ibv_send_wr`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_send_wr_qp_type_xrc {
    /// Remote SRQ number.
    pub remote_srqn: u32,
}

/// The anonymous `bind_mw`/`tso` union of `struct ibv_send_wr`.
#[repr(C)]
#[derive(Copy, Clone)]
pub union ibv_send_wr_bind_mw_tso {
    /// Memory window bind.
    pub bind_mw: ibv_send_wr_bind_mw,
    /// TSO.
    pub tso: ibv_send_wr_tso,
}

/// `bind_mw` of `struct ibv_send_wr`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_send_wr_bind_mw {
    /// The window.
    pub mw: *mut ibv_mw,
    /// New rkey.
    pub rkey: u32,
    /// Bind information.
    pub bind_info: ibv_mw_bind_info,
}

/// `tso` of `struct ibv_send_wr`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_send_wr_tso {
    /// Header.
    pub hdr: *mut c_void,
    /// Header size.
    pub hdr_sz: u16,
    /// Maximum segment size.
    pub mss: u16,
}

/// `struct ibv_recv_wr`: a receive work request (`ibv_post_recv`, `ibv_post_srq_recv`).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_recv_wr {
    /// Work request id.
    pub wr_id: u64,
    /// Next in the list.
    pub next: *mut ibv_recv_wr,
    /// Scatter/gather list.
    pub sg_list: *mut ibv_sge,
    /// Entries in `sg_list`.
    pub num_sge: c_int,
}

/// `struct ibv_mw_bind`: legacy memory window bind (`ibv_bind_mw`).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_mw_bind {
    /// Work request id.
    pub wr_id: u64,
    /// `enum ibv_send_flags`.
    pub send_flags: c_uint,
    /// Bind information.
    pub bind_info: ibv_mw_bind_info,
}

// ---------------------------------------------------------------------------------------
// Verbs objects with locks

/// `struct ibv_srq`: shared receive queue.
#[repr(C)]
pub struct ibv_srq {
    /// Owning context.
    pub context: *mut ibv_context,
    /// User context.
    pub srq_context: *mut c_void,
    /// Protection domain.
    pub pd: *mut ibv_pd,
    /// Kernel handle.
    pub handle: u32,
    /// Library lock.
    pub mutex: pthread_mutex_t,
    /// Library condition variable.
    pub cond: pthread_cond_t,
    /// Acknowledged events.
    pub events_completed: u32,
}

/// `struct ibv_wq` (only referenced here).
#[repr(C)]
pub struct ibv_wq {
    /// Owning context.
    pub context: *mut ibv_context,
    /// User context.
    pub wq_context: *mut c_void,
    /// Protection domain.
    pub pd: *mut ibv_pd,
    /// Completion queue.
    pub cq: *mut ibv_cq,
    /// WQ number.
    pub wq_num: u32,
    /// Kernel handle.
    pub handle: u32,
    /// `enum ibv_wq_state`.
    pub state: ibv_wq_state,
    /// `enum ibv_wq_type`.
    pub wq_type: ibv_wq_type,
    /// Receive post entry.
    pub post_recv: Option<unsafe extern "C" fn(*mut ibv_wq, *mut ibv_recv_wr, *mut *mut ibv_recv_wr) -> c_int>,
    /// Library lock.
    pub mutex: pthread_mutex_t,
    /// Library condition variable.
    pub cond: pthread_cond_t,
    /// Acknowledged events.
    pub events_completed: u32,
    /// Compatibility mask.
    pub comp_mask: u32,
}

/// `struct ibv_qp`: queue pair.
#[repr(C)]
pub struct ibv_qp {
    /// Owning context.
    pub context: *mut ibv_context,
    /// User context.
    pub qp_context: *mut c_void,
    /// Protection domain.
    pub pd: *mut ibv_pd,
    /// Send CQ.
    pub send_cq: *mut ibv_cq,
    /// Receive CQ.
    pub recv_cq: *mut ibv_cq,
    /// Shared receive queue.
    pub srq: *mut ibv_srq,
    /// Kernel handle.
    pub handle: u32,
    /// QP number (for a DCT: the DCT number, valid once in RTR).
    pub qp_num: u32,
    /// `enum ibv_qp_state` as last known by the library.
    pub state: ibv_qp_state,
    /// `enum ibv_qp_type`.
    pub qp_type: ibv_qp_type,
    /// Library lock.
    pub mutex: pthread_mutex_t,
    /// Library condition variable.
    pub cond: pthread_cond_t,
    /// Acknowledged events.
    pub events_completed: u32,
}

/// `struct ibv_qp_ex`: a QP's extended post API (`ibv_wr_*`), owned by the library.
///
/// Library-owned and shorter in older runtimes: `wr_atomic_write` exists from rdma-core 44,
/// `wr_flush` from 45. Never read those two entries without knowing the runtime has them.
#[repr(C)]
pub struct ibv_qp_ex {
    /// The base QP.
    pub qp_base: ibv_qp,
    /// Compatibility mask.
    pub comp_mask: u64,
    /// Work request id of the next work request.
    pub wr_id: u64,
    /// `enum ibv_send_flags` of the next work request.
    pub wr_flags: c_uint,
    /// See `ibv_wr_atomic_cmp_swp`.
    pub wr_atomic_cmp_swp: Option<unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64, u64, u64)>,
    /// See `ibv_wr_atomic_fetch_add`.
    pub wr_atomic_fetch_add: Option<unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64, u64)>,
    /// See `ibv_wr_bind_mw`.
    pub wr_bind_mw: Option<unsafe extern "C" fn(*mut ibv_qp_ex, *mut ibv_mw, u32, *const ibv_mw_bind_info)>,
    /// See `ibv_wr_local_inv`.
    pub wr_local_inv: Option<unsafe extern "C" fn(*mut ibv_qp_ex, u32)>,
    /// See `ibv_wr_rdma_read`.
    pub wr_rdma_read: Option<unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64)>,
    /// See `ibv_wr_rdma_write`.
    pub wr_rdma_write: Option<unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64)>,
    /// See `ibv_wr_rdma_write_imm` (immediate in network byte order).
    pub wr_rdma_write_imm: Option<unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64, u32)>,
    /// See `ibv_wr_send`.
    pub wr_send: Option<unsafe extern "C" fn(*mut ibv_qp_ex)>,
    /// See `ibv_wr_send_imm` (immediate in network byte order).
    pub wr_send_imm: Option<unsafe extern "C" fn(*mut ibv_qp_ex, u32)>,
    /// See `ibv_wr_send_inv`.
    pub wr_send_inv: Option<unsafe extern "C" fn(*mut ibv_qp_ex, u32)>,
    /// See `ibv_wr_send_tso`.
    pub wr_send_tso: Option<unsafe extern "C" fn(*mut ibv_qp_ex, *mut c_void, u16, u16)>,
    /// See `ibv_wr_set_ud_addr`.
    pub wr_set_ud_addr: Option<unsafe extern "C" fn(*mut ibv_qp_ex, *mut ibv_ah, u32, u32)>,
    /// See `ibv_wr_set_xrc_srqn`.
    pub wr_set_xrc_srqn: Option<unsafe extern "C" fn(*mut ibv_qp_ex, u32)>,
    /// See `ibv_wr_set_inline_data`.
    pub wr_set_inline_data: Option<unsafe extern "C" fn(*mut ibv_qp_ex, *mut c_void, size_t)>,
    /// See `ibv_wr_set_inline_data_list`.
    pub wr_set_inline_data_list: Option<unsafe extern "C" fn(*mut ibv_qp_ex, size_t, *const ibv_data_buf)>,
    /// See `ibv_wr_set_sge`.
    pub wr_set_sge: Option<unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64, u32)>,
    /// See `ibv_wr_set_sge_list`.
    pub wr_set_sge_list: Option<unsafe extern "C" fn(*mut ibv_qp_ex, size_t, *const ibv_sge)>,
    /// See `ibv_wr_start`.
    pub wr_start: Option<unsafe extern "C" fn(*mut ibv_qp_ex)>,
    /// See `ibv_wr_complete`.
    pub wr_complete: Option<unsafe extern "C" fn(*mut ibv_qp_ex) -> c_int>,
    /// See `ibv_wr_abort`.
    pub wr_abort: Option<unsafe extern "C" fn(*mut ibv_qp_ex)>,
    /// See `ibv_wr_atomic_write` (rdma-core 44+).
    pub wr_atomic_write: Option<unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64, *const c_void)>,
    /// See `ibv_wr_flush` (rdma-core 45+).
    pub wr_flush: Option<unsafe extern "C" fn(*mut ibv_qp_ex, u32, u64, size_t, u8, u8)>,
}

// ---------------------------------------------------------------------------------------
// Completion queues

/// `struct ibv_comp_channel`: completion event channel.
#[repr(C)]
#[derive(Debug)]
pub struct ibv_comp_channel {
    /// Owning context.
    pub context: *mut ibv_context,
    /// Event file descriptor.
    pub fd: c_int,
    /// Reference count.
    pub refcnt: c_int,
}

/// `struct ibv_cq`: completion queue.
#[repr(C)]
pub struct ibv_cq {
    /// Owning context.
    pub context: *mut ibv_context,
    /// Completion channel.
    pub channel: *mut ibv_comp_channel,
    /// User context.
    pub cq_context: *mut c_void,
    /// Kernel handle.
    pub handle: u32,
    /// Number of entries.
    pub cqe: c_int,
    /// Library lock.
    pub mutex: pthread_mutex_t,
    /// Library condition variable.
    pub cond: pthread_cond_t,
    /// Acknowledged completion events.
    pub comp_events_completed: u32,
    /// Acknowledged asynchronous events.
    pub async_events_completed: u32,
}

/// `struct ibv_poll_cq_attr`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_poll_cq_attr {
    /// Must be 0.
    pub comp_mask: u32,
}

/// `struct ibv_wc_tm_info`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ibv_wc_tm_info {
    /// Tag.
    pub tag: u64,
    /// Opaque user data.
    pub r#priv: u32,
}

/// `struct ibv_cq_ex`: extended completion queue, polled with `ibv_start_poll` and friends.
#[repr(C)]
pub struct ibv_cq_ex {
    /// Owning context.
    pub context: *mut ibv_context,
    /// Completion channel.
    pub channel: *mut ibv_comp_channel,
    /// User context.
    pub cq_context: *mut c_void,
    /// Kernel handle.
    pub handle: u32,
    /// Number of entries.
    pub cqe: c_int,
    /// Library lock.
    pub mutex: pthread_mutex_t,
    /// Library condition variable.
    pub cond: pthread_cond_t,
    /// Acknowledged completion events.
    pub comp_events_completed: u32,
    /// Acknowledged asynchronous events.
    pub async_events_completed: u32,
    /// Compatibility mask.
    pub comp_mask: u32,
    /// `enum ibv_wc_status` of the current completion.
    pub status: ibv_wc_status,
    /// Work request id of the current completion.
    pub wr_id: u64,
    /// See `ibv_start_poll`.
    pub start_poll: Option<unsafe extern "C" fn(*mut ibv_cq_ex, *mut ibv_poll_cq_attr) -> c_int>,
    /// See `ibv_next_poll`.
    pub next_poll: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> c_int>,
    /// See `ibv_end_poll`.
    pub end_poll: Option<unsafe extern "C" fn(*mut ibv_cq_ex)>,
    /// See `ibv_wc_read_opcode`.
    pub read_opcode: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> ibv_wc_opcode>,
    /// See `ibv_wc_read_vendor_err`.
    pub read_vendor_err: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> u32>,
    /// See `ibv_wc_read_byte_len`.
    pub read_byte_len: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> u32>,
    /// See `ibv_wc_read_imm_data` (network byte order).
    pub read_imm_data: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> u32>,
    /// See `ibv_wc_read_qp_num`.
    pub read_qp_num: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> u32>,
    /// See `ibv_wc_read_src_qp`.
    pub read_src_qp: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> u32>,
    /// See `ibv_wc_read_wc_flags`.
    pub read_wc_flags: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> c_uint>,
    /// See `ibv_wc_read_slid`.
    pub read_slid: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> u32>,
    /// See `ibv_wc_read_sl`.
    pub read_sl: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> u8>,
    /// See `ibv_wc_read_dlid_path_bits`.
    pub read_dlid_path_bits: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> u8>,
    /// See `ibv_wc_read_completion_ts`.
    pub read_completion_ts: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> u64>,
    /// See `ibv_wc_read_cvlan`.
    pub read_cvlan: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> u16>,
    /// See `ibv_wc_read_flow_tag`.
    pub read_flow_tag: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> u32>,
    /// See `ibv_wc_read_tm_info`.
    pub read_tm_info: Option<unsafe extern "C" fn(*mut ibv_cq_ex, *mut ibv_wc_tm_info)>,
    /// See `ibv_wc_read_completion_wallclock_ns`.
    pub read_completion_wallclock_ns: Option<unsafe extern "C" fn(*mut ibv_cq_ex) -> u64>,
}

/// `struct ibv_ah`: address handle.
#[repr(C)]
#[derive(Debug)]
pub struct ibv_ah {
    /// Owning context.
    pub context: *mut ibv_context,
    /// Protection domain.
    pub pd: *mut ibv_pd,
    /// Kernel handle.
    pub handle: u32,
}

// ---------------------------------------------------------------------------------------
// Devices and contexts

/// `struct _ibv_device_ops`: unused by applications; kept for layout.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct _ibv_device_ops {
    /// Reserved.
    pub _dummy1: Option<unsafe extern "C" fn(*mut ibv_device, c_int) -> *mut ibv_context>,
    /// Reserved.
    pub _dummy2: Option<unsafe extern "C" fn(*mut ibv_context)>,
}

/// Length of sysfs names in `struct ibv_device`.
pub const IBV_SYSFS_NAME_MAX: usize = 64;
/// Length of sysfs paths in `struct ibv_device`.
pub const IBV_SYSFS_PATH_MAX: usize = 256;

/// `struct ibv_device`: an entry of `ibv_get_device_list`.
#[repr(C)]
pub struct ibv_device {
    /// Reserved.
    pub _ops: _ibv_device_ops,
    /// `enum ibv_node_type`.
    pub node_type: ibv_node_type,
    /// `enum ibv_transport_type`.
    pub transport_type: ibv_transport_type,
    /// Kernel device name, e.g. `mlx5_0`.
    pub name: [c_char; IBV_SYSFS_NAME_MAX],
    /// uverbs device name, e.g. `uverbs0`.
    pub dev_name: [c_char; IBV_SYSFS_NAME_MAX],
    /// Path to the infiniband_verbs class device in sysfs.
    pub dev_path: [c_char; IBV_SYSFS_PATH_MAX],
    /// Path to the infiniband class device in sysfs.
    pub ibdev_path: [c_char; IBV_SYSFS_PATH_MAX],
}

/// An entry of `struct ibv_context_ops` kept only for layout.
pub type ibv_compat_op = Option<unsafe extern "C" fn() -> *mut c_void>;

/// `struct ibv_context_ops`: the provider's fast-path entries.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct ibv_context_ops {
    /// Compat entry.
    pub _compat_query_device: Option<unsafe extern "C" fn(*mut ibv_context, *mut ibv_device_attr) -> c_int>,
    /// Compat entry (legacy port attributes).
    pub _compat_query_port: Option<unsafe extern "C" fn(*mut ibv_context, u8, *mut c_void) -> c_int>,
    /// Compat entry.
    pub _compat_alloc_pd: ibv_compat_op,
    /// Compat entry.
    pub _compat_dealloc_pd: ibv_compat_op,
    /// Compat entry.
    pub _compat_reg_mr: ibv_compat_op,
    /// Compat entry.
    pub _compat_rereg_mr: ibv_compat_op,
    /// Compat entry.
    pub _compat_dereg_mr: ibv_compat_op,
    /// Allocate a memory window.
    pub alloc_mw: Option<unsafe extern "C" fn(*mut ibv_pd, ibv_mw_type) -> *mut ibv_mw>,
    /// Bind a memory window.
    pub bind_mw: Option<unsafe extern "C" fn(*mut ibv_qp, *mut ibv_mw, *mut ibv_mw_bind) -> c_int>,
    /// Free a memory window.
    pub dealloc_mw: Option<unsafe extern "C" fn(*mut ibv_mw) -> c_int>,
    /// Compat entry.
    pub _compat_create_cq: ibv_compat_op,
    /// See `ibv_poll_cq`.
    pub poll_cq: Option<unsafe extern "C" fn(*mut ibv_cq, c_int, *mut ibv_wc) -> c_int>,
    /// See `ibv_req_notify_cq`.
    pub req_notify_cq: Option<unsafe extern "C" fn(*mut ibv_cq, c_int) -> c_int>,
    /// Compat entry.
    pub _compat_cq_event: ibv_compat_op,
    /// Compat entry.
    pub _compat_resize_cq: ibv_compat_op,
    /// Compat entry.
    pub _compat_destroy_cq: ibv_compat_op,
    /// Compat entry.
    pub _compat_create_srq: ibv_compat_op,
    /// Compat entry.
    pub _compat_modify_srq: ibv_compat_op,
    /// Compat entry.
    pub _compat_query_srq: ibv_compat_op,
    /// Compat entry.
    pub _compat_destroy_srq: ibv_compat_op,
    /// See `ibv_post_srq_recv`.
    pub post_srq_recv: Option<unsafe extern "C" fn(*mut ibv_srq, *mut ibv_recv_wr, *mut *mut ibv_recv_wr) -> c_int>,
    /// Compat entry.
    pub _compat_create_qp: ibv_compat_op,
    /// Compat entry.
    pub _compat_query_qp: ibv_compat_op,
    /// Compat entry.
    pub _compat_modify_qp: ibv_compat_op,
    /// Compat entry.
    pub _compat_destroy_qp: ibv_compat_op,
    /// See `ibv_post_send`.
    pub post_send: Option<unsafe extern "C" fn(*mut ibv_qp, *mut ibv_send_wr, *mut *mut ibv_send_wr) -> c_int>,
    /// See `ibv_post_recv`.
    pub post_recv: Option<unsafe extern "C" fn(*mut ibv_qp, *mut ibv_recv_wr, *mut *mut ibv_recv_wr) -> c_int>,
    /// Compat entry.
    pub _compat_create_ah: ibv_compat_op,
    /// Compat entry.
    pub _compat_destroy_ah: ibv_compat_op,
    /// Compat entry.
    pub _compat_attach_mcast: ibv_compat_op,
    /// Compat entry.
    pub _compat_detach_mcast: ibv_compat_op,
    /// Compat entry.
    pub _compat_async_event: ibv_compat_op,
}

/// `struct ibv_context`: an open device.
///
/// The extended operations (`struct verbs_context`) sit at negative offsets from it; they are
/// reached only through the C shim, never from Rust.
#[repr(C)]
pub struct ibv_context {
    /// The device.
    pub device: *mut ibv_device,
    /// Fast-path entries.
    pub ops: ibv_context_ops,
    /// Command file descriptor.
    pub cmd_fd: c_int,
    /// Asynchronous event file descriptor.
    pub async_fd: c_int,
    /// Number of completion vectors.
    pub num_comp_vectors: c_int,
    /// Library lock.
    pub mutex: pthread_mutex_t,
    /// `__VERBS_ABI_IS_EXTENDED` for contexts with a `struct verbs_context`.
    pub abi_compat: *mut c_void,
}

/// `enum ibv_cq_init_attr_mask`.
pub type ibv_cq_init_attr_mask = c_uint;
/// `flags` is valid.
pub const IBV_CQ_INIT_ATTR_MASK_FLAGS: ibv_cq_init_attr_mask = 1;
/// `parent_domain` is valid.
pub const IBV_CQ_INIT_ATTR_MASK_PD: ibv_cq_init_attr_mask = 1 << 1;

/// `enum ibv_create_cq_attr_flags`.
pub type ibv_create_cq_attr_flags = c_uint;
/// The CQ is used from one thread only (no lock).
pub const IBV_CREATE_CQ_ATTR_SINGLE_THREADED: ibv_create_cq_attr_flags = 1;
/// Ignore overrun.
pub const IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN: ibv_create_cq_attr_flags = 1 << 1;

/// `struct ibv_cq_init_attr_ex`: input of `ibv_create_cq_ex`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ibv_cq_init_attr_ex {
    /// Minimum number of entries.
    pub cqe: u32,
    /// User context.
    pub cq_context: *mut c_void,
    /// Completion channel, or null.
    pub channel: *mut ibv_comp_channel,
    /// Completion vector.
    pub comp_vector: u32,
    /// `enum ibv_create_cq_wc_flags`.
    pub wc_flags: u64,
    /// `enum ibv_cq_init_attr_mask`.
    pub comp_mask: u32,
    /// `enum ibv_create_cq_attr_flags`.
    pub flags: u32,
    /// Parent domain.
    pub parent_domain: *mut ibv_pd,
}

/// `enum ibv_parent_domain_init_attr_mask`: custom allocators given.
pub const IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS: u32 = 1 << 0;
/// `enum ibv_parent_domain_init_attr_mask`: `pd_context` given.
pub const IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT: u32 = 1 << 1;

/// `struct ibv_parent_domain_init_attr`: a protection domain with a thread domain (and
/// optional allocators), used in place of the PD when creating QPs and CQs.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct ibv_parent_domain_init_attr {
    /// The protection domain (not NULL).
    pub pd: *mut ibv_pd,
    /// The thread domain, or NULL.
    pub td: *mut ibv_td,
    /// `enum ibv_parent_domain_init_attr_mask`.
    pub comp_mask: u32,
    /// Allocator for the provider's buffers (IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS).
    pub alloc: Option<
        unsafe extern "C" fn(
            pd: *mut ibv_pd,
            pd_context: *mut c_void,
            size: size_t,
            alignment: size_t,
            resource_type: u64,
        ) -> *mut c_void,
    >,
    /// Its release.
    pub free:
        Option<unsafe extern "C" fn(pd: *mut ibv_pd, pd_context: *mut c_void, ptr: *mut c_void, resource_type: u64)>,
    /// Passed to the allocators (IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT).
    pub pd_context: *mut c_void,
}

// ---------------------------------------------------------------------------------------
// Exported functions (symbols of libibverbs.so.1)

extern "C" {
    /// Returns a NULL-terminated array of devices; `num_devices` (optional) gets the count.
    pub fn ibv_get_device_list(num_devices: *mut c_int) -> *mut *mut ibv_device;
    /// Frees the array returned by `ibv_get_device_list`.
    pub fn ibv_free_device_list(list: *mut *mut ibv_device);
    /// Kernel name of the device.
    pub fn ibv_get_device_name(device: *mut ibv_device) -> *const c_char;
    /// Sysfs index of the device, or -1.
    pub fn ibv_get_device_index(device: *mut ibv_device) -> c_int;
    /// Node GUID (big-endian).
    pub fn ibv_get_device_guid(device: *mut ibv_device) -> u64;
    /// Opens a device.
    pub fn ibv_open_device(device: *mut ibv_device) -> *mut ibv_context;
    /// Closes a device.
    pub fn ibv_close_device(context: *mut ibv_context) -> c_int;
    /// Gets the next asynchronous event (blocking unless `async_fd` is non-blocking).
    pub fn ibv_get_async_event(context: *mut ibv_context, event: *mut ibv_async_event) -> c_int;
    /// Acknowledges an asynchronous event.
    pub fn ibv_ack_async_event(event: *mut ibv_async_event);
    /// Queries legacy device attributes.
    pub fn ibv_query_device(context: *mut ibv_context, device_attr: *mut ibv_device_attr) -> c_int;
    // `ibv_query_port` is deliberately absent: the symbol is a compat entry that fills only the
    // 48-byte legacy struct. Use the shim's `m5dv_query_port`.
    /// Queries a GID table entry.
    pub fn ibv_query_gid(context: *mut ibv_context, port_num: u8, index: c_int, gid: *mut ibv_gid) -> c_int;
    /// Queries a P_Key table entry.
    pub fn ibv_query_pkey(context: *mut ibv_context, port_num: u8, index: c_int, pkey: *mut u16) -> c_int;
    /// Allocates a protection domain.
    pub fn ibv_alloc_pd(context: *mut ibv_context) -> *mut ibv_pd;
    /// Frees a protection domain.
    pub fn ibv_dealloc_pd(pd: *mut ibv_pd) -> c_int;
    /// Registers a memory region.
    pub fn ibv_reg_mr(pd: *mut ibv_pd, addr: *mut c_void, length: size_t, access: c_int) -> *mut ibv_mr;
    /// Registers a memory region with an I/O virtual address (rdma-core 29+).
    pub fn ibv_reg_mr_iova2(
        pd: *mut ibv_pd,
        addr: *mut c_void,
        length: size_t,
        iova: u64,
        access: c_uint,
    ) -> *mut ibv_mr;
    /// Registers a dma-buf based memory region (rdma-core 34+, `IBVERBS_1.12`).
    pub fn ibv_reg_dmabuf_mr(
        pd: *mut ibv_pd,
        offset: u64,
        length: size_t,
        iova: u64,
        fd: c_int,
        access: c_int,
    ) -> *mut ibv_mr;
    /// Deregisters a memory region.
    pub fn ibv_dereg_mr(mr: *mut ibv_mr) -> c_int;
    /// Creates a completion channel.
    pub fn ibv_create_comp_channel(context: *mut ibv_context) -> *mut ibv_comp_channel;
    /// Destroys a completion channel.
    pub fn ibv_destroy_comp_channel(channel: *mut ibv_comp_channel) -> c_int;
    /// Creates a legacy completion queue.
    pub fn ibv_create_cq(
        context: *mut ibv_context,
        cqe: c_int,
        cq_context: *mut c_void,
        channel: *mut ibv_comp_channel,
        comp_vector: c_int,
    ) -> *mut ibv_cq;
    /// Destroys a completion queue.
    pub fn ibv_destroy_cq(cq: *mut ibv_cq) -> c_int;
    /// Waits for a completion event.
    pub fn ibv_get_cq_event(
        channel: *mut ibv_comp_channel,
        cq: *mut *mut ibv_cq,
        cq_context: *mut *mut c_void,
    ) -> c_int;
    /// Acknowledges completion events.
    pub fn ibv_ack_cq_events(cq: *mut ibv_cq, nevents: c_uint);
    /// Creates a shared receive queue.
    pub fn ibv_create_srq(pd: *mut ibv_pd, srq_init_attr: *mut ibv_srq_init_attr) -> *mut ibv_srq;
    /// Modifies a shared receive queue.
    pub fn ibv_modify_srq(srq: *mut ibv_srq, srq_attr: *mut ibv_srq_attr, srq_attr_mask: c_int) -> c_int;
    /// Queries a shared receive queue.
    pub fn ibv_query_srq(srq: *mut ibv_srq, srq_attr: *mut ibv_srq_attr) -> c_int;
    /// Destroys a shared receive queue.
    pub fn ibv_destroy_srq(srq: *mut ibv_srq) -> c_int;
    /// Creates a legacy queue pair.
    pub fn ibv_create_qp(pd: *mut ibv_pd, qp_init_attr: *mut ibv_qp_init_attr) -> *mut ibv_qp;
    /// Gets the extended post API of a QP created with send-ops flags (else NULL).
    pub fn ibv_qp_to_qp_ex(qp: *mut ibv_qp) -> *mut ibv_qp_ex;
    /// Modifies a queue pair.
    pub fn ibv_modify_qp(qp: *mut ibv_qp, attr: *mut ibv_qp_attr, attr_mask: c_int) -> c_int;
    /// Queries a queue pair.
    pub fn ibv_query_qp(
        qp: *mut ibv_qp,
        attr: *mut ibv_qp_attr,
        attr_mask: c_int,
        init_attr: *mut ibv_qp_init_attr,
    ) -> c_int;
    /// Destroys a queue pair.
    pub fn ibv_destroy_qp(qp: *mut ibv_qp) -> c_int;
    /// Creates an address handle.
    pub fn ibv_create_ah(pd: *mut ibv_pd, attr: *mut ibv_ah_attr) -> *mut ibv_ah;
    /// Destroys an address handle.
    pub fn ibv_destroy_ah(ah: *mut ibv_ah) -> c_int;
    /// Prepares the library for `fork()`.
    pub fn ibv_fork_init() -> c_int;
    /// Name of a node type.
    pub fn ibv_node_type_str(node_type: ibv_node_type) -> *const c_char;
    /// Name of a port state.
    pub fn ibv_port_state_str(port_state: ibv_port_state) -> *const c_char;
    /// Name of an asynchronous event type.
    pub fn ibv_event_type_str(event: ibv_event_type) -> *const c_char;
    /// Text of a completion status.
    pub fn ibv_wc_status_str(status: ibv_wc_status) -> *const c_char;
}
