//! Resolving a DC target by IP address and port through the connection manager's UDP port
//! space (a SIDR exchange: Service ID Resolution).
//!
//! The target side runs a [`DcTargetService`] on an address and port: it answers every SIDR
//! request with `rdma_accept`, whose reply carries its DCT number (as the reply's QP number)
//! and a [`DcAnnouncement`] as private data. The initiator calls [`resolve_dc_target`]: the CM
//! resolves the address and route, sends the request, and the reply gives back everything a
//! [`crate::DcPeer`] needs: the DCT number and MTU, the address vector from the resolved route
//! (with a GRH on RoCE) to build the [`crate::Ah`], and — only when the target opted in — the
//! DC key and one remote memory region.
//!
//! # What crosses the wire, in clear
//!
//! The SIDR request carries no private data of ours. The reply's private data is the
//! announcement below, readable by anyone on the path and given to anyone who can reach the
//! port: publish the DC key only where that is acceptable (the key travels in clear in every
//! DC packet anyway), and the remote memory only when any requester may access it.
//!
//! | Offset | Size | Field    | Value                                                        |
//! |-------:|-----:|----------|--------------------------------------------------------------|
//! | 0      | 4    | magic    | `b"M5DV"` ([`crate::addr::MAGIC`])                           |
//! | 4      | 1    | version  | `1` ([`crate::addr::FORMAT_VERSION`])                        |
//! | 5      | 1    | kind     | `3` (DC announcement)                                        |
//! | 6      | 1    | flags    | bit 0: a DC key follows; bit 1: a remote memory blob follows; other bits zero |
//! | 7      | 1    | reserved | zero                                                         |
//! | 8      | 32   | target   | the [`DcTargetAddr`] encoding (LID, MTU, DCT number, GID)    |
//! | 40     | 8    | key      | the DC key, big-endian (only with flag bit 0)                |
//! | 40/48  | 32   | memory   | the [`RemoteMemory`] encoding (only with flag bit 1)         |
//!
//! At most 80 bytes, well inside the 136 a SIDR reply carries; the CM zero-fills the rest, so
//! the initiator decodes with [`DcAnnouncement::decode_padded`]. Decoding is as strict as the
//! address blobs': exact length, known flags, zero reserved bits and zero padding.

use super::event::{CmEvent, CmFailure};
use super::id::Endpoint;
use crate::addr::{AddrError, DcTargetAddr, RemoteMemory, FORMAT_VERSION, MAGIC};
use crate::ah::{Ah, PeerPath};
use crate::dc::DcKey;
use crate::error::{Error, Result};
use crate::pd::Pd;
use crate::wait::deadline;
use mlx5dv_raw as raw;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// Kind byte of an encoded [`DcAnnouncement`].
const KIND_DC_ANNOUNCEMENT: u8 = 3;
const FLAG_KEY: u8 = 1;
const FLAG_MEMORY: u8 = 2;
const HEADER_LEN: usize = 8;

/// What a DC target publishes to initiators: its address and, only if the owner opts in, its
/// DC key and one remote memory region. The key never shows in `Debug`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DcAnnouncement {
    /// The DC target (its DCT number, LID, GID and MTU).
    pub target: DcTargetAddr,
    /// The DC key, published only when set.
    pub key: Option<DcKey>,
    /// A remote memory region, published only when set.
    pub memory: Option<RemoteMemory>,
}

impl DcAnnouncement {
    /// Largest encoding: header, target, key and memory.
    pub const MAX_ENCODED_LEN: usize = HEADER_LEN + DcTargetAddr::ENCODED_LEN + 8 + RemoteMemory::ENCODED_LEN;

    /// An announcement of `target` alone (no key, no memory).
    pub fn new(target: DcTargetAddr) -> Self {
        DcAnnouncement {
            target,
            key: None,
            memory: None,
        }
    }

    /// Also publishes the DC key (it then crosses the network in clear in the reply).
    pub fn with_key(mut self, key: DcKey) -> Self {
        self.key = Some(key);
        self
    }

    /// Also publishes a remote memory region (address, length, rkey).
    pub fn with_memory(mut self, memory: RemoteMemory) -> Self {
        self.memory = Some(memory);
        self
    }

    /// The wire encoding (see the module docs).
    ///
    /// # Errors
    /// [`AddrError::DctNumber`] for a DCT number wider than 24 bits; then [`AddrError::Range`]
    /// for memory whose `addr + len` overflows a u64 (no initiator could decode it).
    pub fn encode(&self) -> std::result::Result<Vec<u8>, AddrError> {
        let target = self.target.encode()?;
        if let Some(memory) = self.memory {
            memory.addr.checked_add(memory.len).ok_or(AddrError::Range)?;
        }
        let mut out = Vec::with_capacity(Self::MAX_ENCODED_LEN);
        let flags = if self.key.is_some() { FLAG_KEY } else { 0 } | if self.memory.is_some() { FLAG_MEMORY } else { 0 };
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&[FORMAT_VERSION, KIND_DC_ANNOUNCEMENT, flags, 0]);
        out.extend_from_slice(&target);
        if let Some(key) = self.key {
            out.extend_from_slice(&key.expose().to_be_bytes());
        }
        if let Some(memory) = self.memory {
            out.extend_from_slice(&memory.encode());
        }
        Ok(out)
    }

    /// Decodes an announcement, treating `bytes` as untrusted.
    ///
    /// # Errors
    /// The [`AddrError`] of the first check that fails: length, magic, version, kind, flags
    /// or reserved byte (as [`AddrError::Reserved`]), then the embedded target and memory (an
    /// [`AddrError::Reserved`] offset counted from the announcement's first byte).
    pub fn decode(bytes: &[u8]) -> std::result::Result<Self, AddrError> {
        let (has_key, has_memory, expected) = check_header(bytes)?;
        if bytes.len() != expected {
            return Err(AddrError::Length {
                expected,
                got: bytes.len(),
            });
        }
        let mut at = HEADER_LEN;
        let target =
            DcTargetAddr::decode(&bytes[at..at + DcTargetAddr::ENCODED_LEN]).map_err(|e| in_announcement(e, at))?;
        at += DcTargetAddr::ENCODED_LEN;
        let key = has_key.then(|| {
            let k = u64::from_be_bytes(std::array::from_fn(|i| bytes[at + i]));
            at += 8;
            DcKey::new(k)
        });
        let memory = if has_memory {
            Some(RemoteMemory::decode(&bytes[at..at + RemoteMemory::ENCODED_LEN]).map_err(|e| in_announcement(e, at))?)
        } else {
            None
        };
        Ok(DcAnnouncement { target, key, memory })
    }

    /// Decodes an announcement followed by zero padding, as it arrives in a SIDR reply (the
    /// CM delivers the message's whole private-data field, 136 bytes, zero-filled).
    ///
    /// # Errors
    /// As [`decode`](Self::decode), except that a non-zero byte in the padding is an
    /// [`AddrError::Reserved`] (checked after the header, before the body).
    pub fn decode_padded(bytes: &[u8]) -> std::result::Result<Self, AddrError> {
        let (.., len) = check_header(bytes)?;
        match bytes.get(len..) {
            Some(padding) => match padding.iter().position(|&b| b != 0) {
                Some(i) => Err(AddrError::Reserved { offset: len + i }),
                None => Self::decode(&bytes[..len]),
            },
            None => Self::decode(bytes),
        }
    }
}

/// Checks an announcement's header (length, magic, version, kind, flags, reserved byte); gives
/// whether a key and memory follow, and the length that makes.
fn check_header(bytes: &[u8]) -> std::result::Result<(bool, bool, usize), AddrError> {
    let Some(head) = bytes.get(..HEADER_LEN) else {
        return Err(AddrError::Length {
            expected: HEADER_LEN + DcTargetAddr::ENCODED_LEN,
            got: bytes.len(),
        });
    };
    crate::addr::check_magic_version_kind(head, KIND_DC_ANNOUNCEMENT)?;
    let flags = head[6];
    if flags & !(FLAG_KEY | FLAG_MEMORY) != 0 {
        return Err(AddrError::Reserved { offset: 6 });
    }
    if head[7] != 0 {
        return Err(AddrError::Reserved { offset: 7 });
    }
    let has_key = flags & FLAG_KEY != 0;
    let has_memory = flags & FLAG_MEMORY != 0;
    let len = HEADER_LEN
        + DcTargetAddr::ENCODED_LEN
        + if has_key { 8 } else { 0 }
        + if has_memory { RemoteMemory::ENCODED_LEN } else { 0 };
    Ok((has_key, has_memory, len))
}

/// An embedded blob's error, its offset counted from the announcement's first byte.
fn in_announcement(e: AddrError, at: usize) -> AddrError {
    match e {
        AddrError::Reserved { offset } => AddrError::Reserved { offset: at + offset },
        other => other,
    }
}

/// A DC target published on an IP address and port of the CM's UDP port space.
///
/// A DCT lives on one device, so a service bound to the unspecified address on a host with
/// several HCAs answers each request with the target of the device the request came in on
/// ([`DcTargetService::add_device`]); the announcement given to [`DcTargetService::bind`]
/// answers requests from any other device.
pub struct DcTargetService {
    ep: Endpoint,
    /// What [`DcTargetService::bind`] published (devices without one of their own).
    announcement: DcAnnouncement,
    answers: Answers,
}

/// The encoded announcements: one for any device, and one per device name.
struct Answers {
    any: Vec<u8>,
    per_device: Vec<(String, DcAnnouncement, Vec<u8>)>,
}

impl Answers {
    /// The announcement's DCT number and encoding for a request that arrived on `device`
    /// (`default`: the one for any device).
    fn for_device<'a>(&'a self, default: &'a DcAnnouncement, device: Option<&str>) -> (&'a DcAnnouncement, &'a [u8]) {
        match self.per_device.iter().find(|(d, ..)| Some(d.as_str()) == device) {
            Some((_, a, blob)) => (a, blob),
            None => (default, &self.any),
        }
    }
}

/// The encoded announcement, or EINVAL naming why it cannot be published.
fn encode(announcement: &DcAnnouncement) -> Result<Vec<u8>> {
    announcement
        .encode()
        .map_err(|e| Error::invalid("rdma_listen (DC target)", e.to_string()))
}

/// The id of one SIDR request, destroyed once answered.
struct RequestId(*mut raw::rdma_cm_id);

impl Drop for RequestId {
    fn drop(&mut self) {
        // SAFETY: the id came from a CONNECT_REQUEST event (acknowledged) and is destroyed once.
        unsafe { raw::rdma_destroy_id(self.0) };
    }
}

impl DcTargetService {
    /// Listens on `addr` (the unspecified address: every device; port 0: any) and publishes
    /// `announcement` to every requester.
    ///
    /// # Errors
    /// EINVAL for a DCT number wider than 24 bits or memory past the end of the address
    /// space; `rdma_create_event_channel` (ENODEV
    /// without RDMA devices or CM modules); `rdma_bind_addr`; `rdma_listen`.
    pub fn bind(addr: SocketAddr, announcement: DcAnnouncement) -> Result<DcTargetService> {
        let blob = encode(&announcement)?;
        let mut ep = Endpoint::create(raw::RDMA_PS_UDP)?;
        ep.bind(&addr)?;
        // SAFETY: the id is live and bound.
        if unsafe { raw::rdma_listen(ep.as_raw(), 16) } != 0 {
            return Err(Error::last_os_error(
                "rdma_listen (DC target)",
                "the bound id could not listen",
            ));
        }
        Ok(DcTargetService {
            ep,
            announcement,
            answers: Answers {
                any: blob,
                per_device: Vec::new(),
            },
        })
    }

    /// Answers requests arriving on device `device` (its name, e.g. `mlx5_1`) with
    /// `announcement`: that device's own DCT. Adding a device twice replaces its entry.
    ///
    /// # Errors
    /// EINVAL for a DCT number wider than 24 bits or memory past the end of the address space.
    pub fn add_device(&mut self, device: &str, announcement: DcAnnouncement) -> Result<()> {
        let blob = encode(&announcement)?;
        let per_device = &mut self.answers.per_device;
        per_device.retain(|(d, ..)| d != device);
        per_device.push((device.to_owned(), announcement, blob));
        Ok(())
    }

    /// The address listened on (with the port chosen when 0 was asked).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.ep.local_addr()
    }

    /// What is published.
    pub fn announcement(&self) -> &DcAnnouncement {
        &self.announcement
    }

    /// Answers the next request, waiting up to `timeout` (None: forever); returns the
    /// requester's address, or `Ok(None)` when the timeout passed first.
    ///
    /// # Errors
    /// `rdma_get_cm_event`; `rdma_accept` (SIDR reply); ENODEV on device removal.
    pub fn answer_next(&self, timeout: Option<Duration>) -> Result<Option<SocketAddr>> {
        let until = deadline(timeout);
        loop {
            let Some(ev) = self.ep.channel().next(until)? else {
                return Ok(None);
            };
            match ev.event {
                CmEvent::ConnectRequest { .. } => {
                    let id = RequestId(ev.id);
                    // SAFETY: the request's id is live.
                    let peer = unsafe { super::id::from_sockaddr(raw::rdma_get_peer_addr(id.0)) };
                    // The device the request came in on: its own DCT answers it.
                    // SAFETY: the request's id is live and bound to its device (verbs and the
                    // device outlive the id); the name is copied at once.
                    let device = unsafe {
                        let verbs = (*id.0).verbs;
                        (!verbs.is_null() && !(*verbs).device.is_null()).then(|| {
                            std::ffi::CStr::from_ptr(raw::ibv_get_device_name((*verbs).device))
                                .to_string_lossy()
                                .into_owned()
                        })
                    };
                    let (announcement, blob) = self.answers.for_device(&self.announcement, device.as_deref());
                    let mut cp = raw::rdma_conn_param {
                        private_data: blob.as_ptr().cast(),
                        private_data_len: blob.len() as u8,
                        responder_resources: 0,
                        initiator_depth: 0,
                        flow_control: 0,
                        retry_count: 0,
                        rnr_retry_count: 0,
                        srq: 0,
                        // The SIDR reply's QP number: the DCT number.
                        qp_num: announcement.target.dct_number,
                    };
                    // SAFETY: the id is live; cp and the blob outlive the call (copied).
                    if unsafe { raw::rdma_accept(id.0, &mut cp) } != 0 {
                        return Err(Error::last_os_error(
                            "rdma_accept (SIDR reply)",
                            "the reply could not be sent",
                        ));
                    }
                    return Ok(peer);
                }
                CmEvent::DeviceRemoval => {
                    return Err(CmFailure::DeviceRemoval.into_error("rdma_listen (DC target)"));
                }
                _ => {}
            }
        }
    }
}

impl AsRawFd for DcTargetService {
    /// The service's event channel: readable when a request is queued.
    fn as_raw_fd(&self) -> RawFd {
        self.ep.as_raw_fd()
    }
}

impl std::fmt::Debug for DcTargetService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DcTargetService")
            .field("addr", &self.local_addr())
            .field("announcement", &self.announcement)
            .field(
                "devices",
                &self.answers.per_device.iter().map(|(d, ..)| d).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// What [`resolve_dc_target`] learned: the target's announcement and the path to it.
#[derive(Clone, Debug)]
pub struct DcResolution {
    announcement: DcAnnouncement,
    ah_attr: raw::ibv_ah_attr,
    device: Option<String>,
    port: u8,
    qkey: u32,
}

impl DcResolution {
    /// The DC target (DCT number, LID, GID, MTU) to give [`crate::DcPeer::new`].
    pub fn target(&self) -> &DcTargetAddr {
        &self.announcement.target
    }

    /// The DC key, if the target published it.
    pub fn key(&self) -> Option<DcKey> {
        self.announcement.key
    }

    /// The remote memory region, if the target published one.
    pub fn memory(&self) -> Option<RemoteMemory> {
        self.announcement.memory
    }

    /// The whole announcement.
    pub fn announcement(&self) -> &DcAnnouncement {
        &self.announcement
    }

    /// The local device the route goes through: create the PD on a [`crate::Context`] of it.
    pub fn device_name(&self) -> Option<&str> {
        self.device.as_deref()
    }

    /// The local port the route goes through.
    pub fn port(&self) -> u8 {
        self.port
    }

    /// The Q_Key of the reply (the CM's UDP Q_Key).
    pub fn qkey(&self) -> u32 {
        self.qkey
    }

    /// The path to the target from the CM's address vector: by GID (with the local GID index
    /// the CM chose) when it has a GRH, as on RoCE; by LID otherwise; on the path record's
    /// service level.
    pub fn path(&self) -> PeerPath {
        let a = &self.ah_attr;
        if a.is_global != 0 {
            PeerPath::Gid {
                sl: a.sl,
                // SAFETY: every bit pattern of the union is a valid [u8; 16].
                gid: unsafe { a.grh.dgid.raw },
                sgid_index: a.grh.sgid_index,
                hop_limit: a.grh.hop_limit,
                traffic_class: a.grh.traffic_class,
                flow_label: a.grh.flow_label,
            }
        } else {
            PeerPath::Lid { lid: a.dlid, sl: a.sl }
        }
    }

    /// The address vector exactly as the CM reported it.
    pub fn ah_attr(&self) -> &raw::ibv_ah_attr {
        &self.ah_attr
    }

    /// Creates the address handle to the target on `pd`.
    ///
    /// # Errors
    /// EINVAL when `pd` belongs to another device than the route; `ibv_create_ah`.
    pub fn create_ah(&self, pd: &Pd) -> Result<Ah> {
        let name = pd.context().name();
        if self.device.as_deref().is_some_and(|d| d != name) {
            return Err(Error::invalid(
                "ibv_create_ah (DC target)",
                format!(
                    "the route goes through {}, but the PD is on {name}",
                    self.device.as_deref().unwrap_or("?")
                ),
            ));
        }
        pd.create_ah(self.port, &self.path())
    }
}

/// Resolves the DC target a [`DcTargetService`] publishes at `dst`, within `timeout`
/// (address, route and the SIDR exchange together).
///
/// # Errors
/// `rdma_create_event_channel` with ENODEV without RDMA devices or CM modules; address and
/// route failures as [`crate::cm::Connector::resolve`]; `rdma_connect (SIDR)` with
/// [`CmFailure::Unreachable`] when nobody answers on that port or the reply is an error,
/// [`CmFailure::TimedOut`] (ETIMEDOUT) when `timeout` passes; EPROTO when the reply's private
/// data is not a valid announcement or its DCT number differs from the reply's QP number.
pub fn resolve_dc_target(dst: SocketAddr, timeout: Duration) -> Result<DcResolution> {
    let until = deadline(Some(timeout));
    let mut ep = Endpoint::create(raw::RDMA_PS_UDP)?;
    ep.resolve(None, &dst, timeout)?;
    let mut cp = raw::rdma_conn_param {
        private_data: std::ptr::null(),
        private_data_len: 0,
        responder_resources: 0,
        initiator_depth: 0,
        flow_control: 0,
        retry_count: 7,
        rnr_retry_count: 0,
        srq: 0,
        qp_num: 0,
    };
    // SAFETY: the id is live and its route resolved; cp outlives the call.
    if unsafe { raw::rdma_connect(ep.as_raw(), &mut cp) } != 0 {
        return Err(Error::last_os_error(
            "rdma_connect (SIDR)",
            "the SIDR request could not be sent",
        ));
    }
    let ev = ep.expect(until, "rdma_connect (SIDR)", |e| {
        matches!(e, CmEvent::Established { .. })
    })?;
    let (CmEvent::Established { private_data }, Some(ud)) = (ev.event, ev.ud) else {
        return Err(Error::from_errno(
            "rdma_connect (SIDR)",
            libc::EPROTO,
            "the SIDR reply carried no UD parameters",
        ));
    };
    let announcement = DcAnnouncement::decode_padded(&private_data).map_err(|e| {
        Error::from_errno(
            "rdma_connect (SIDR)",
            libc::EPROTO,
            format!("the reply is not a DC announcement: {e}"),
        )
    })?;
    if ud.qp_num != announcement.target.dct_number {
        return Err(Error::from_errno(
            "rdma_connect (SIDR)",
            libc::EPROTO,
            format!(
                "the reply's QP number {:#x} differs from the announced DCT number {:#x}",
                ud.qp_num, announcement.target.dct_number
            ),
        ));
    }
    Ok(DcResolution {
        announcement,
        ah_attr: ud.ah_attr,
        device: ep.device_name(),
        port: if ud.ah_attr.port_num != 0 {
            ud.ah_attr.port_num
        } else {
            ep.port()
        },
        qkey: ud.qkey,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Mtu;

    fn target() -> DcTargetAddr {
        DcTargetAddr {
            lid: 0,
            gid: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8],
            dct_number: 0x12_3456,
            port_mtu: Mtu::Mtu1024,
            out_of_order: false,
        }
    }

    #[test]
    fn a_resolved_path_keeps_the_path_records_service_level() {
        let r = DcResolution {
            announcement: DcAnnouncement::new(target()),
            ah_attr: raw::ibv_ah_attr {
                dlid: 9,
                sl: 4,
                port_num: 1,
                ..Default::default()
            },
            device: None,
            port: 1,
            qkey: 0,
        };
        assert_eq!(r.path(), PeerPath::Lid { lid: 9, sl: 4 });
        assert_eq!(r.path().ah_attr(1).sl, 4);
    }

    #[test]
    fn a_sidr_request_is_answered_with_the_dct_of_the_device_it_came_in_on() {
        let any = DcAnnouncement::new(target());
        let mut other = target();
        other.dct_number = 0x00ab_cdef;
        let mlx5_1 = DcAnnouncement::new(other);
        let answers = Answers {
            any: encode(&any).unwrap(),
            per_device: vec![("mlx5_1".into(), mlx5_1, encode(&mlx5_1).unwrap())],
        };
        let (a, blob) = answers.for_device(&any, Some("mlx5_1"));
        assert_eq!(a.target.dct_number, 0x00ab_cdef);
        assert_eq!(DcAnnouncement::decode(blob).unwrap(), mlx5_1);
        let (a, blob) = answers.for_device(&any, Some("mlx5_0"));
        assert_eq!(*a, any, "a device without its own: the bound announcement");
        assert_eq!(DcAnnouncement::decode(blob).unwrap(), any);
        assert_eq!(*answers.for_device(&any, None).0, any);
    }

    #[test]
    fn announcement_without_opt_ins_carries_no_key_and_no_memory() {
        let blob = DcAnnouncement::new(target()).encode().unwrap();
        assert_eq!(blob.len(), 40);
        assert_eq!(blob[6], 0, "no flags");
        let back = DcAnnouncement::decode(&blob).unwrap();
        assert_eq!(back, DcAnnouncement::new(target()));
    }

    #[test]
    fn announcement_with_key_and_memory_round_trips_and_fits_a_sidr_reply() {
        let mem = RemoteMemory {
            addr: 0x1000,
            len: 4096,
            rkey: 7,
        };
        let a = DcAnnouncement::new(target())
            .with_key(DcKey::new(0xffee_ddcc))
            .with_memory(mem);
        let blob = a.encode().unwrap();
        assert_eq!(blob.len(), DcAnnouncement::MAX_ENCODED_LEN);
        assert!(blob.len() <= 136, "a SIDR reply carries 136 bytes of private data");
        assert_eq!(&blob[40..48], &0xffee_ddccu64.to_be_bytes());
        assert_eq!(DcAnnouncement::decode(&blob).unwrap(), a);
    }

    #[test]
    fn announcement_debug_never_shows_the_key() {
        let a = DcAnnouncement::new(target()).with_key(DcKey::new(0xdead_beef));
        let text = format!("{a:?}");
        assert!(!text.contains("deadbeef") && !text.contains("3735928559"), "{text}");
    }

    #[test]
    fn malformed_announcements_are_refused() {
        let blob = DcAnnouncement::new(target()).with_key(DcKey::new(1)).encode().unwrap();
        assert!(matches!(
            DcAnnouncement::decode(&blob[..blob.len() - 1]),
            Err(AddrError::Length { .. })
        ));
        let mut bad = blob.clone();
        bad[6] |= 0x80;
        assert_eq!(DcAnnouncement::decode(&bad), Err(AddrError::Reserved { offset: 6 }));
        let mut bad = blob.clone();
        bad[5] = 1;
        assert!(matches!(DcAnnouncement::decode(&bad), Err(AddrError::Kind { .. })));
        let mut bad = blob;
        bad[0] = b'X';
        assert!(matches!(DcAnnouncement::decode(&bad), Err(AddrError::Magic { .. })));
        assert!(matches!(DcAnnouncement::decode(&[]), Err(AddrError::Length { .. })));
    }

    #[test]
    fn padded_announcement_as_a_sidr_reply_delivers_it_decodes_and_dirty_padding_does_not() {
        let a = DcAnnouncement::new(target()).with_key(DcKey::new(5));
        let mut blob = a.encode().unwrap();
        let len = blob.len();
        blob.resize(136, 0);
        assert_eq!(DcAnnouncement::decode_padded(&blob), Ok(a));
        assert!(DcAnnouncement::decode(&blob).is_err(), "decode itself stays exact");
        blob[100] = 1;
        assert_eq!(
            DcAnnouncement::decode_padded(&blob),
            Err(AddrError::Reserved { offset: 100 })
        );
        assert_eq!(DcAnnouncement::decode_padded(&blob[..len]), Ok(a));
    }

    fn full_announcement() -> DcAnnouncement {
        let mem = RemoteMemory {
            addr: 0x1000,
            len: 4096,
            rkey: 7,
        };
        DcAnnouncement::new(target()).with_key(DcKey::new(5)).with_memory(mem)
    }

    #[test]
    fn a_set_reserved_byte_of_the_embedded_target_or_memory_is_named_by_its_offset_in_the_announcement() {
        let blob = full_announcement().encode().unwrap();
        // The target's header reserved byte (its 6), its flags (11), the memory's last reserved
        // byte (its 31): at 8 + 6, 8 + 11 and 48 + 31 in the announcement.
        for (at, bits) in [(14, 1), (19, 0x80), (79, 1)] {
            let mut bad = blob.clone();
            bad[at] |= bits;
            assert_eq!(DcAnnouncement::decode(&bad), Err(AddrError::Reserved { offset: at }));
        }
    }

    #[test]
    fn a_padded_reply_is_refused_for_its_header_before_its_padding() {
        let mut blob = full_announcement().encode().unwrap();
        blob.resize(136, 0);
        blob[120] = 1;
        let mut not_ours = blob.clone();
        not_ours[3] = 1;
        assert!(matches!(
            DcAnnouncement::decode_padded(&not_ours),
            Err(AddrError::Magic { .. })
        ));
        let mut unknown_flag = blob.clone();
        unknown_flag[6] |= 0x10;
        assert_eq!(
            DcAnnouncement::decode_padded(&unknown_flag),
            Err(AddrError::Reserved { offset: 6 })
        );
        assert_eq!(
            DcAnnouncement::decode_padded(&blob),
            Err(AddrError::Reserved { offset: 120 })
        );
    }

    #[test]
    fn an_announcement_of_memory_past_the_end_of_the_address_space_is_refused_at_encode() {
        let past_the_end = RemoteMemory {
            addr: u64::MAX - 10,
            len: 100,
            rkey: 7,
        };
        let a = DcAnnouncement::new(target()).with_memory(past_the_end);
        assert_eq!(a.encode(), Err(AddrError::Range), "no initiator could decode it");
        assert_eq!(encode(&a).unwrap_err().errno(), Some(libc::EINVAL));
    }
}
