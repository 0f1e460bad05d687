//! `rdma/rdma_cma.h`: the parts of librdmacm (the RDMA connection manager) that connecting RC
//! queue pairs and resolving DC targets by IP address need. Only with the `cm` feature, which
//! links `librdmacm`.
//!
//! Declared in the header's own order, with the C names, newest layout (rdma-core 65). The
//! multicast calls, `rdma_addrinfo` and the `rdma_create_ep`/`rdma_create_qp` convenience
//! layer (which creates queue pairs the CM owns) are left out: the safe crate creates its own
//! queue pairs and moves them with [`rdma_init_qp_attr`].

use crate::verbs::{
    ibv_ah_attr, ibv_comp_channel, ibv_context, ibv_cq, ibv_event_type, ibv_gid, ibv_pd, ibv_qp, ibv_qp_attr,
    ibv_qp_type, ibv_srq,
};
use libc::{c_char, c_int, c_uint, c_void, size_t, sockaddr, sockaddr_in, sockaddr_in6, sockaddr_storage};

// ---------------------------------------------------------------------------------------
// Event types and port spaces

/// `enum rdma_cm_event_type`.
pub type rdma_cm_event_type = c_uint;
/// Address resolution (`rdma_resolve_addr`) completed.
pub const RDMA_CM_EVENT_ADDR_RESOLVED: rdma_cm_event_type = 0;
/// Address resolution failed.
pub const RDMA_CM_EVENT_ADDR_ERROR: rdma_cm_event_type = 1;
/// Route resolution (`rdma_resolve_route`) completed.
pub const RDMA_CM_EVENT_ROUTE_RESOLVED: rdma_cm_event_type = 2;
/// Route resolution failed.
pub const RDMA_CM_EVENT_ROUTE_ERROR: rdma_cm_event_type = 3;
/// A connection request (or SIDR request on a UD id) arrived on a listening id.
pub const RDMA_CM_EVENT_CONNECT_REQUEST: rdma_cm_event_type = 4;
/// The passive side replied; reported instead of ESTABLISHED when the id has no QP.
pub const RDMA_CM_EVENT_CONNECT_RESPONSE: rdma_cm_event_type = 5;
/// An error occurred while establishing the connection.
pub const RDMA_CM_EVENT_CONNECT_ERROR: rdma_cm_event_type = 6;
/// The remote end is unreachable or did not answer (status: the reason).
pub const RDMA_CM_EVENT_UNREACHABLE: rdma_cm_event_type = 7;
/// The remote end rejected the request (status: the IB CM reject reason).
pub const RDMA_CM_EVENT_REJECTED: rdma_cm_event_type = 8;
/// The connection is established (or a SIDR reply arrived on a UD id).
pub const RDMA_CM_EVENT_ESTABLISHED: rdma_cm_event_type = 9;
/// The connection was disconnected.
pub const RDMA_CM_EVENT_DISCONNECTED: rdma_cm_event_type = 10;
/// The device the id is bound to was removed.
pub const RDMA_CM_EVENT_DEVICE_REMOVAL: rdma_cm_event_type = 11;
/// Multicast join completed.
pub const RDMA_CM_EVENT_MULTICAST_JOIN: rdma_cm_event_type = 12;
/// Multicast error.
pub const RDMA_CM_EVENT_MULTICAST_ERROR: rdma_cm_event_type = 13;
/// The network address the id is bound to changed.
pub const RDMA_CM_EVENT_ADDR_CHANGE: rdma_cm_event_type = 14;
/// The QP of a closed connection left the time-wait state.
pub const RDMA_CM_EVENT_TIMEWAIT_EXIT: rdma_cm_event_type = 15;
/// `rdma_resolve_addrinfo` completed (newer rdma-core).
pub const RDMA_CM_EVENT_ADDRINFO_RESOLVED: rdma_cm_event_type = 16;
/// `rdma_resolve_addrinfo` failed (newer rdma-core).
pub const RDMA_CM_EVENT_ADDRINFO_ERROR: rdma_cm_event_type = 17;
/// An event written by `rdma_write_cm_event` (newer rdma-core).
pub const RDMA_CM_EVENT_USER: rdma_cm_event_type = 18;
/// Library-internal event (newer rdma-core).
pub const RDMA_CM_EVENT_INTERNAL: rdma_cm_event_type = 19;

/// `enum rdma_port_space`.
pub type rdma_port_space = c_uint;
/// IPoIB port space.
pub const RDMA_PS_IPOIB: rdma_port_space = 0x0002;
/// Reliable connected (RC) port space: ids carry connected QPs.
pub const RDMA_PS_TCP: rdma_port_space = 0x0106;
/// Unreliable datagram port space: ids are UD; `rdma_connect` sends a SIDR request.
pub const RDMA_PS_UDP: rdma_port_space = 0x0111;
/// Native InfiniBand port space.
pub const RDMA_PS_IB: rdma_port_space = 0x013F;

/// Port-space bits of an IB service id.
pub const RDMA_IB_IP_PS_MASK: u64 = 0xFFFF_FFFF_FFFF_0000;
/// Port bits of an IB service id.
pub const RDMA_IB_IP_PORT_MASK: u64 = 0x0000_0000_0000_FFFF;
/// Service id prefix of the TCP port space.
pub const RDMA_IB_IP_PS_TCP: u64 = 0x0000_0000_0106_0000;
/// Service id prefix of the UDP port space.
pub const RDMA_IB_IP_PS_UDP: u64 = 0x0000_0000_0111_0000;
/// Service id prefix of the IB port space.
pub const RDMA_IB_PS_IB: u64 = 0x0000_0000_013F_0000;

/// The Q_Key the CM gives UD ids of the UDP port space.
pub const RDMA_UDP_QKEY: u32 = 0x0123_4567;

// ---------------------------------------------------------------------------------------
// Addresses and routes

/// `struct rdma_ib_addr`.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct rdma_ib_addr {
    /// Source GID.
    pub sgid: ibv_gid,
    /// Destination GID.
    pub dgid: ibv_gid,
    /// `__be16 pkey`.
    pub pkey: u16,
}

/// `struct rdma_addr`: source and destination of an id.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct rdma_addr {
    /// The anonymous source union (`src_addr`, `src_sin`, `src_sin6`, `src_storage`).
    pub src: rdma_addr_src,
    /// The anonymous destination union (`dst_addr`, `dst_sin`, `dst_sin6`, `dst_storage`).
    pub dst: rdma_addr_dst,
    /// The `addr` union.
    pub addr: rdma_addr_addr,
}

/// The anonymous source union of `struct rdma_addr`.
#[repr(C)]
#[derive(Copy, Clone)]
pub union rdma_addr_src {
    /// Generic view.
    pub src_addr: sockaddr,
    /// IPv4.
    pub src_sin: sockaddr_in,
    /// IPv6.
    pub src_sin6: sockaddr_in6,
    /// Storage.
    pub src_storage: sockaddr_storage,
}

/// The anonymous destination union of `struct rdma_addr`.
#[repr(C)]
#[derive(Copy, Clone)]
pub union rdma_addr_dst {
    /// Generic view.
    pub dst_addr: sockaddr,
    /// IPv4.
    pub dst_sin: sockaddr_in,
    /// IPv6.
    pub dst_sin6: sockaddr_in6,
    /// Storage.
    pub dst_storage: sockaddr_storage,
}

/// The `addr` union of `struct rdma_addr`.
#[repr(C)]
#[derive(Copy, Clone)]
pub union rdma_addr_addr {
    /// InfiniBand addressing.
    pub ibaddr: rdma_ib_addr,
}

/// `struct ibv_sa_path_rec` (infiniband/sa.h), opaque here (only pointed to).
#[repr(C)]
pub struct ibv_sa_path_rec {
    _opaque: [u8; 0],
}

/// `struct rdma_route`.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct rdma_route {
    /// Addresses.
    pub addr: rdma_addr,
    /// Path records (InfiniBand).
    pub path_rec: *mut ibv_sa_path_rec,
    /// Number of path records.
    pub num_paths: c_int,
}

/// `struct rdma_event_channel`: where the events of the ids created on it arrive.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct rdma_event_channel {
    /// The channel's file descriptor (poll it for readability).
    pub fd: c_int,
}

/// `struct rdma_cm_id`: a communication identifier, like a socket.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct rdma_cm_id {
    /// The device the id is bound to (after address resolution or binding), or NULL.
    pub verbs: *mut ibv_context,
    /// The event channel.
    pub channel: *mut rdma_event_channel,
    /// User context.
    pub context: *mut c_void,
    /// A QP the CM created (`rdma_create_qp`), or NULL.
    pub qp: *mut ibv_qp,
    /// Addresses and path.
    pub route: rdma_route,
    /// `enum rdma_port_space`.
    pub ps: rdma_port_space,
    /// Port of `verbs` the id is bound to.
    pub port_num: u8,
    /// Synchronous mode: the last event.
    pub event: *mut rdma_cm_event,
    /// Send CQ channel of a CM-created QP.
    pub send_cq_channel: *mut ibv_comp_channel,
    /// Send CQ of a CM-created QP.
    pub send_cq: *mut ibv_cq,
    /// Receive CQ channel of a CM-created QP.
    pub recv_cq_channel: *mut ibv_comp_channel,
    /// Receive CQ of a CM-created QP.
    pub recv_cq: *mut ibv_cq,
    /// SRQ of a CM-created QP.
    pub srq: *mut ibv_srq,
    /// Protection domain.
    pub pd: *mut ibv_pd,
    /// `enum ibv_qp_type` of the id (UD in the UDP port space).
    pub qp_type: ibv_qp_type,
}

/// Ask for the device's largest responder resources.
pub const RDMA_MAX_RESP_RES: c_uint = 0xFF;
/// Ask for the device's largest initiator depth.
pub const RDMA_MAX_INIT_DEPTH: c_uint = 0xFF;

/// `struct rdma_conn_param`: connection parameters (RC).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct rdma_conn_param {
    /// Private data to send (REQ: 56 bytes at most, REP: 196, REJ: 148 in the TCP port space).
    pub private_data: *const c_void,
    /// Its length.
    pub private_data_len: u8,
    /// Incoming RDMA reads/atomics the local side accepts.
    pub responder_resources: u8,
    /// Outstanding RDMA reads/atomics the local side issues.
    pub initiator_depth: u8,
    /// Hardware flow control.
    pub flow_control: u8,
    /// Transport retries (ignored when accepting).
    pub retry_count: u8,
    /// RNR retries.
    pub rnr_retry_count: u8,
    /// Whether the QP uses an SRQ (ignored if the id has a QP).
    pub srq: u8,
    /// The local QP number (ignored if the id has a QP).
    pub qp_num: u32,
}

/// `struct rdma_ud_param`: UD parameters (SIDR reply, UD events).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct rdma_ud_param {
    /// Private data received.
    pub private_data: *const c_void,
    /// Its length.
    pub private_data_len: u8,
    /// Address vector to the peer.
    pub ah_attr: ibv_ah_attr,
    /// The peer's QP number (from a SIDR reply: what the listener passed as `qp_num`).
    pub qp_num: u32,
    /// The peer's Q_Key.
    pub qkey: u32,
}

/// `struct rdma_cm_event`.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct rdma_cm_event {
    /// The id the event is about (a new id for CONNECT_REQUEST).
    pub id: *mut rdma_cm_id,
    /// The listening id (CONNECT_REQUEST only).
    pub listen_id: *mut rdma_cm_id,
    /// `enum rdma_cm_event_type`.
    pub event: rdma_cm_event_type,
    /// 0, a negative errno, or a transport reason (reject reason for REJECTED).
    pub status: c_int,
    /// The anonymous `param` union.
    pub param: rdma_cm_event_param,
}

/// The anonymous `param` union of `struct rdma_cm_event`.
#[repr(C)]
#[derive(Copy, Clone)]
pub union rdma_cm_event_param {
    /// Connected (RC) ids.
    pub conn: rdma_conn_param,
    /// UD ids.
    pub ud: rdma_ud_param,
    /// `rdma_write_cm_event` argument (newer rdma-core).
    pub arg: u64,
}

// ---------------------------------------------------------------------------------------
// Options

/// Option level: the id.
pub const RDMA_OPTION_ID: c_int = 0;
/// Option level: InfiniBand.
pub const RDMA_OPTION_IB: c_int = 1;
/// `uint8_t`: type of service (RFC 2474).
pub const RDMA_OPTION_ID_TOS: c_int = 0;
/// `int`: like SO_REUSEADDR.
pub const RDMA_OPTION_ID_REUSEADDR: c_int = 1;
/// `int`: like IPV6_V6ONLY.
pub const RDMA_OPTION_ID_AFONLY: c_int = 2;
/// `uint8_t`: QP ack timeout.
pub const RDMA_OPTION_ID_ACK_TIMEOUT: c_int = 3;
/// `struct ibv_path_data[]`.
pub const RDMA_OPTION_IB_PATH: c_int = 1;

// ---------------------------------------------------------------------------------------
// Functions (symbols of librdmacm.so.1)

extern "C" {
    /// Opens an event channel (a file descriptor in `fd`).
    pub fn rdma_create_event_channel() -> *mut rdma_event_channel;
    /// Closes an event channel; every id on it must be destroyed first.
    pub fn rdma_destroy_event_channel(channel: *mut rdma_event_channel);
    /// Creates an id on `channel` (NULL: synchronous mode) in port space `ps`.
    pub fn rdma_create_id(
        channel: *mut rdma_event_channel,
        id: *mut *mut rdma_cm_id,
        context: *mut c_void,
        ps: rdma_port_space,
    ) -> c_int;
    /// Destroys an id; blocks until every event reported for it was acknowledged.
    pub fn rdma_destroy_id(id: *mut rdma_cm_id) -> c_int;
    /// Binds an id to a local address (and so, maybe, a device).
    pub fn rdma_bind_addr(id: *mut rdma_cm_id, addr: *mut sockaddr) -> c_int;
    /// Starts resolving `dst_addr` (and `src_addr`, if given) to a device and port.
    pub fn rdma_resolve_addr(
        id: *mut rdma_cm_id,
        src_addr: *mut sockaddr,
        dst_addr: *mut sockaddr,
        timeout_ms: c_int,
    ) -> c_int;
    /// Starts resolving the route to the resolved destination.
    pub fn rdma_resolve_route(id: *mut rdma_cm_id, timeout_ms: c_int) -> c_int;
    /// Sends a connection request (a SIDR request on a UD id).
    pub fn rdma_connect(id: *mut rdma_cm_id, conn_param: *mut rdma_conn_param) -> c_int;
    /// Completes an active connection after CONNECT_RESPONSE when the id has no QP.
    pub fn rdma_establish(id: *mut rdma_cm_id) -> c_int;
    /// Listens for connection requests.
    pub fn rdma_listen(id: *mut rdma_cm_id, backlog: c_int) -> c_int;
    /// Accepts a connection request (answers a SIDR request on a UD id).
    pub fn rdma_accept(id: *mut rdma_cm_id, conn_param: *mut rdma_conn_param) -> c_int;
    /// Rejects a connection request, with private data.
    pub fn rdma_reject(id: *mut rdma_cm_id, private_data: *const c_void, private_data_len: u8) -> c_int;
    /// Tells the CM about a QP event (e.g. IBV_EVENT_COMM_EST).
    pub fn rdma_notify(id: *mut rdma_cm_id, event: ibv_event_type) -> c_int;
    /// Disconnects.
    pub fn rdma_disconnect(id: *mut rdma_cm_id) -> c_int;
    /// Gets the next event of `channel` (blocking unless its fd is non-blocking).
    pub fn rdma_get_cm_event(channel: *mut rdma_event_channel, event: *mut *mut rdma_cm_event) -> c_int;
    /// Acknowledges and frees an event.
    pub fn rdma_ack_cm_event(event: *mut rdma_cm_event) -> c_int;
    /// Local port (network order).
    pub fn rdma_get_src_port(id: *mut rdma_cm_id) -> u16;
    /// Remote port (network order).
    pub fn rdma_get_dst_port(id: *mut rdma_cm_id) -> u16;
}

/// `rdma_get_local_addr` (static inline in the header): the id's source address.
///
/// # Safety
/// `id` must point to a live id.
#[inline]
pub unsafe fn rdma_get_local_addr(id: *mut rdma_cm_id) -> *mut sockaddr {
    // SAFETY: the caller guarantees id is live; this only computes a field address.
    unsafe { core::ptr::addr_of_mut!((*id).route.addr.src.src_addr) }
}

/// `rdma_get_peer_addr` (static inline in the header): the id's destination address.
///
/// # Safety
/// `id` must point to a live id.
#[inline]
pub unsafe fn rdma_get_peer_addr(id: *mut rdma_cm_id) -> *mut sockaddr {
    // SAFETY: the caller guarantees id is live; this only computes a field address.
    unsafe { core::ptr::addr_of_mut!((*id).route.addr.dst.dst_addr) }
}

extern "C" {
    /// The devices librdmacm opened (NULL-terminated); free with `rdma_free_devices`.
    pub fn rdma_get_devices(num_devices: *mut c_int) -> *mut *mut ibv_context;
    /// Frees the list of `rdma_get_devices`.
    pub fn rdma_free_devices(list: *mut *mut ibv_context);
    /// The name of an event type.
    pub fn rdma_event_str(event: rdma_cm_event_type) -> *const c_char;
    /// Sets an option (`RDMA_OPTION_*`).
    pub fn rdma_set_option(
        id: *mut rdma_cm_id,
        level: c_int,
        optname: c_int,
        optval: *mut c_void,
        optlen: size_t,
    ) -> c_int;
    /// Moves an id to another event channel (its queued events move with it).
    pub fn rdma_migrate_id(id: *mut rdma_cm_id, channel: *mut rdma_event_channel) -> c_int;
    /// The attributes (and mask) that move a QP of this id to `qp_attr.qp_state`.
    pub fn rdma_init_qp_attr(id: *mut rdma_cm_id, qp_attr: *mut ibv_qp_attr, qp_attr_mask: *mut c_int) -> c_int;
}
