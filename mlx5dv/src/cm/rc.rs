//! RC connections through the connection manager: the active side ([`Connector`]), the
//! passive side ([`Listener`], [`ConnectRequest`]) and what both end with ([`Connection`]).
//!
//! The queue pair is this crate's [`RcQp`], created by the caller on a [`crate::Pd`] of the
//! device the address resolved to, and moved through INIT, RTR and RTS with the attributes the
//! CM computes (`rdma_init_qp_attr`), as librdmacm does for the queue pairs it creates itself.
//! The CM learns the QP number from the connection parameters.
//!
//! Active side: [`Connector::resolve`] (address and route, with a timeout), create the QP,
//! [`Connector::init_qp`], post receives, [`Connector::connect`] (REQ, wait for the reply,
//! RTR, RTS, RTU). Passive side: [`Listener::bind`], [`Listener::next_request`], create the
//! QP, [`ConnectRequest::init_qp`], post receives, then [`ConnectRequest::accept`] (RTR, RTS,
//! REP, wait for the RTU) or [`ConnectRequest::reject`]. Every wait has a timeout; dropping
//! anything midway destroys its id (the kernel tells the peer) and leaves no event behind.

use super::event::{CmEvent, CmFailure};
use super::id::{any_addr, Endpoint};
use crate::error::{Error, Result};
use crate::mr::Access;
use crate::qp::{state, TransitionError};
use crate::rc::RcQp;
use crate::wait::deadline;
use mlx5dv_raw as raw;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// Largest private data of a connection request in the TCP port space (the CM's own header
/// takes the rest of the InfiniBand CM REQ's 92 bytes).
pub const MAX_REQUEST_PRIVATE_DATA: usize = 56;
/// Largest private data of an accept (InfiniBand CM REP).
pub const MAX_ACCEPT_PRIVATE_DATA: usize = 196;
/// Largest private data of a reject (InfiniBand CM REJ).
pub const MAX_REJECT_PRIVATE_DATA: usize = 148;

/// Parameters of a connect or an accept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CmParams<'a> {
    /// Private data for the peer (at most [`MAX_REQUEST_PRIVATE_DATA`] when connecting,
    /// [`MAX_ACCEPT_PRIVATE_DATA`] when accepting). It crosses the network in clear.
    pub private_data: &'a [u8],
    /// Incoming RDMA reads and atomics to allow (None: the device's maximum, bounded by the
    /// peer's request).
    pub responder_resources: Option<u8>,
    /// Outstanding RDMA reads and atomics to issue (None: likewise).
    pub initiator_depth: Option<u8>,
    /// Transport retries (0..=7; ignored when accepting).
    pub retry_count: u8,
    /// RNR retries (0..=7; 7 = infinite).
    pub rnr_retry_count: u8,
    /// How long to wait for the peer's answer.
    pub timeout: Duration,
}

impl Default for CmParams<'_> {
    /// No private data, the device's read/atomic limits, 7 retries, 5 s.
    fn default() -> Self {
        CmParams {
            private_data: &[],
            responder_resources: None,
            initiator_depth: None,
            retry_count: 7,
            rnr_retry_count: 7,
            timeout: Duration::from_secs(5),
        }
    }
}

/// A failed connect or accept: the error, and the queue pair back in RESET.
pub type CmTransitionError = TransitionError<RcQp<state::Reset>>;

/// The bits of `rdma_init_qp_attr`'s RTR mask that the kernel sets for RoCE only; librdmacm
/// clears them on InfiniBand ports (a kernel bug it works around), and so does this crate.
const ROCE_ONLY_MASK_BITS: u32 = 0x00e0_0000;

/// Moves `qp` RESET -> INIT with the CM's attributes, granting peers `access` on top.
fn init_qp(
    ep: &Endpoint,
    qp: RcQp<state::Reset>,
    access: Access,
    op: &'static str,
) -> std::result::Result<RcQp<state::Init>, TransitionError<RcQp<state::Reset>>> {
    if let Err(error) = ep.check_device(qp.device_name(), op) {
        return Err(TransitionError::new(error, qp));
    }
    let (mut attr, mask) = match ep.qp_attr(raw::IBV_QPS_INIT) {
        Ok(a) => a,
        Err(error) => return Err(TransitionError::new(error, qp)),
    };
    attr.qp_access_flags |= access.bits();
    qp.modify_with(
        &mut attr,
        mask | raw::IBV_QP_ACCESS_FLAGS,
        "ibv_modify_qp (CM INIT)",
        "the CM's INIT attributes were refused (port, P_Key index or access flags)",
    )
}

/// INIT -> RTR -> RTS with the CM's attributes (`resp_res`/`init_depth` override the CM's
/// read/atomic values when given); on failure the QP is reset and handed back.
fn ready_qp(
    ep: &Endpoint,
    qp: RcQp<state::Init>,
    resp_res: Option<u8>,
    init_depth: Option<u8>,
) -> std::result::Result<RcQp<state::Rts>, CmTransitionError> {
    let attrs = ep
        .qp_attr(raw::IBV_QPS_RTR)
        .and_then(|rtr| Ok((rtr, ep.qp_attr(raw::IBV_QPS_RTS)?)));
    let ((mut rtr, mut rtr_mask), (mut rts, rts_mask)) = match attrs {
        Ok(a) => a,
        Err(error) => return Err(back_to_reset(qp, error)),
    };
    if ep.port_is_infiniband() {
        rtr_mask &= !ROCE_ONLY_MASK_BITS;
    }
    if let Some(r) = resp_res {
        rtr.max_dest_rd_atomic = r;
    }
    if let Some(d) = init_depth {
        rts.max_rd_atomic = d;
    }
    let qp = qp
        .modify_with::<state::Rtr>(
            &mut rtr,
            rtr_mask,
            "ibv_modify_qp (CM RTR)",
            "the CM's RTR attributes were refused (path, MTU or responder resources)",
        )
        .map_err(|e| {
            let (error, qp) = e.into_parts();
            back_to_reset(qp, error)
        })?;
    qp.modify_with::<state::Rts>(
        &mut rts,
        rts_mask,
        "ibv_modify_qp (CM RTS)",
        "the CM's RTS attributes were refused (timeout, retries or initiator depth)",
    )
    .map_err(|e| {
        let (error, qp) = e.into_parts();
        back_to_reset(qp, error)
    })
}

/// Resets `qp` (from any state) and pairs it with `error`.
fn back_to_reset<S>(qp: RcQp<S>, error: Error) -> CmTransitionError {
    match qp.reset() {
        Ok(qp) => TransitionError::new(error, qp),
        // A QP that cannot even be reset is unusable; it still goes back to the caller, who
        // owns it, and its next transition reports the device's error.
        Err(e) => TransitionError::new(error, e.into_inner().into_state_unchecked()),
    }
}

fn check_private_data(data: &[u8], max: usize, op: &'static str) -> Result<()> {
    if data.len() > max {
        return Err(Error::invalid(
            op,
            format!(
                "{} bytes of private data exceed the {max} this message carries",
                data.len()
            ),
        ));
    }
    Ok(())
}

fn conn_param(params: &CmParams<'_>, qp_num: u32, srq: bool) -> raw::rdma_conn_param {
    raw::rdma_conn_param {
        private_data: params.private_data.as_ptr().cast(),
        private_data_len: params.private_data.len() as u8,
        responder_resources: params.responder_resources.unwrap_or(raw::RDMA_MAX_RESP_RES as u8),
        initiator_depth: params.initiator_depth.unwrap_or(raw::RDMA_MAX_INIT_DEPTH as u8),
        flow_control: 0,
        retry_count: params.retry_count.min(7),
        rnr_retry_count: params.rnr_retry_count.min(7),
        srq: u8::from(srq),
        qp_num,
    }
}

/// The active side of an RC connection, with its address and route resolved.
pub struct Connector {
    ep: Endpoint,
}

impl Connector {
    /// Resolves `dst` (an IP address and port of a [`Listener`] or any RDMA CM server) to a
    /// local device, port and route, within `timeout` (address and route together).
    ///
    /// # Errors
    /// `rdma_create_event_channel` with ENODEV when there is no RDMA device or the CM's kernel
    /// modules are absent; `rdma_resolve_addr`/`rdma_resolve_route` with
    /// [`CmFailure::AddrError`]/[`CmFailure::RouteError`] from the CM, or
    /// [`CmFailure::TimedOut`] (ETIMEDOUT) when `timeout` passes first.
    pub fn resolve(dst: SocketAddr, timeout: Duration) -> Result<Connector> {
        Self::resolve_from(None, dst, timeout)
    }

    /// [`resolve`](Self::resolve) from the local address `src`.
    ///
    /// # Errors
    /// As [`resolve`](Self::resolve).
    pub fn resolve_from(src: Option<SocketAddr>, dst: SocketAddr, timeout: Duration) -> Result<Connector> {
        let mut ep = Endpoint::create(raw::RDMA_PS_TCP)?;
        ep.resolve(src.as_ref(), &dst, timeout)?;
        Ok(Connector { ep })
    }

    /// The device the destination resolved to: create the QP on a [`crate::Context`] of it.
    pub fn device_name(&self) -> Option<String> {
        self.ep.device_name()
    }

    /// The local port the connection uses.
    pub fn port(&self) -> u8 {
        self.ep.port()
    }

    /// Moves `qp` to INIT for this connection (port and P_Key from the CM), granting the peer
    /// `access`. Post receives after this, before [`connect`](Self::connect).
    ///
    /// # Errors
    /// EINVAL when the QP lives on another device than the route; `rdma_init_qp_attr` or
    /// `ibv_modify_qp (CM INIT)`. The QP comes back in RESET.
    pub fn init_qp(
        &self,
        qp: RcQp<state::Reset>,
        access: Access,
    ) -> std::result::Result<RcQp<state::Init>, TransitionError<RcQp<state::Reset>>> {
        init_qp(&self.ep, qp, access, "rdma_init_qp_attr (connect)")
    }

    /// Sends the connection request with `params.private_data`, waits (up to
    /// `params.timeout`) for the reply, moves `qp` to RTR and RTS with the CM's attributes and
    /// completes the handshake (`rdma_establish`).
    ///
    /// # Errors
    /// `rdma_connect` with ECONNREFUSED and [`CmFailure::Rejected`] (its reason and the
    /// peer's private data) when the peer rejects or nobody listens (reason 8),
    /// [`CmFailure::Unreachable`], [`CmFailure::TimedOut`] (ETIMEDOUT) when nothing answers
    /// in time; EINVAL for too much private data; the QP transitions' errors. The QP comes back
    /// in RESET; the connection attempt is abandoned (its id destroyed).
    pub fn connect(
        self,
        qp: RcQp<state::Init>,
        params: &CmParams<'_>,
    ) -> std::result::Result<(RcQp<state::Rts>, Connection), CmTransitionError> {
        if let Err(error) = check_private_data(params.private_data, MAX_REQUEST_PRIVATE_DATA, "rdma_connect") {
            return Err(back_to_reset(qp, error));
        }
        let until = deadline(Some(params.timeout));
        let mut cp = conn_param(params, qp.qp_num(), qp.has_srq());
        // SAFETY: the id is live; cp and its private data outlive the call (copied by the library).
        if unsafe { raw::rdma_connect(self.ep.as_raw(), &mut cp) } != 0 {
            let error = Error::last_os_error("rdma_connect", "the connection request could not be sent");
            return Err(back_to_reset(qp, error));
        }
        let reply = match self
            .ep
            .expect(until, "rdma_connect", |e| matches!(e, CmEvent::ConnectResponse { .. }))
        {
            Ok(ev) => ev,
            Err(error) => return Err(back_to_reset(qp, error)),
        };
        let CmEvent::ConnectResponse { private_data } = reply.event else {
            unreachable!("expect() returns only the event it was asked for");
        };
        // As librdmacm does for its own QPs: INIT again (the reply may change the access
        // flags), then RTR and RTS with the kernel's values.
        let qp = match self.ep.qp_attr(raw::IBV_QPS_INIT) {
            Ok((mut attr, mask)) => qp
                .modify_with::<state::Init>(
                    &mut attr,
                    mask,
                    "ibv_modify_qp (CM INIT)",
                    "the CM's INIT attributes were refused",
                )
                .map_err(|e| {
                    let (error, qp) = e.into_parts();
                    back_to_reset(qp, error)
                })?,
            Err(error) => return Err(back_to_reset(qp, error)),
        };
        let qp = ready_qp(&self.ep, qp, None, None)?;
        // SAFETY: the id is live, got its reply, and has no QP of the CM's.
        if unsafe { raw::rdma_establish(self.ep.as_raw()) } != 0 {
            let error = Error::last_os_error("rdma_establish", "the ready-to-use message could not be sent");
            return Err(back_to_reset(qp, error));
        }
        Ok((
            qp,
            Connection {
                ep: self.ep,
                private_data,
            },
        ))
    }
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("device", &self.ep.device_name())
            .field("port", &self.ep.port())
            .field("peer", &self.ep.peer_addr())
            .finish()
    }
}

/// A passive RC endpoint listening on an IP address and port (`rdma_listen`).
pub struct Listener {
    ep: Endpoint,
}

impl Listener {
    /// Listens on `addr` (the unspecified address: every RDMA device; port 0: any free port).
    ///
    /// # Errors
    /// `rdma_create_event_channel` with ENODEV when there is no RDMA device or the CM's kernel
    /// modules are absent; `rdma_bind_addr` (EADDRINUSE: the port is taken; EADDRNOTAVAIL:
    /// the address is not local); `rdma_listen`.
    pub fn bind(addr: SocketAddr, backlog: i32) -> Result<Listener> {
        let mut ep = Endpoint::create(raw::RDMA_PS_TCP)?;
        ep.bind(&addr)?;
        // SAFETY: the id is live and bound.
        if unsafe { raw::rdma_listen(ep.as_raw(), backlog) } != 0 {
            return Err(Error::last_os_error("rdma_listen", "the bound id could not listen"));
        }
        Ok(Listener { ep })
    }

    /// Listens on every device, port `port`, IPv4.
    ///
    /// # Errors
    /// As [`bind`](Self::bind).
    pub fn bind_port(port: u16) -> Result<Listener> {
        Self::bind(any_addr(std::net::Ipv4Addr::UNSPECIFIED.into(), port), 16)
    }

    /// The address listened on (with the port chosen when 0 was asked).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.ep.local_addr()
    }

    /// The next connection request, waiting up to `timeout` (None: forever); `Ok(None)` when
    /// it passes first.
    ///
    /// # Errors
    /// `rdma_get_cm_event`; ENODEV with [`CmFailure::DeviceRemoval`] when the device goes
    /// away; `rdma_migrate_id` when the request cannot get a channel of its own (it is then
    /// rejected by the kernel as its id is destroyed).
    pub fn next_request(&self, timeout: Option<Duration>) -> Result<Option<ConnectRequest>> {
        let until = deadline(timeout);
        loop {
            let Some(ev) = self.ep.channel().next(until)? else {
                return Ok(None);
            };
            match ev.event {
                CmEvent::ConnectRequest { private_data } => {
                    // SAFETY: the id of a CONNECT_REQUEST is new, live, and ours; the event
                    // was acknowledged when read.
                    let ep = unsafe { Endpoint::adopt(ev.id)? };
                    return Ok(Some(ConnectRequest {
                        ep,
                        private_data,
                        responder_resources: ev.conn.responder_resources,
                        initiator_depth: ev.conn.initiator_depth,
                    }));
                }
                CmEvent::DeviceRemoval => return Err(CmFailure::DeviceRemoval.into_error("rdma_listen")),
                // Other events on a listener (address change) need no action here.
                _ => {}
            }
        }
    }
}

impl AsRawFd for Listener {
    /// The listener's event channel: readable when a request (or other event) is queued.
    fn as_raw_fd(&self) -> RawFd {
        self.ep.as_raw_fd()
    }
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener").field("addr", &self.local_addr()).finish()
    }
}

/// A connection request taken from a [`Listener`]: accept it or reject it. Dropping it
/// destroys its id, which rejects the request.
pub struct ConnectRequest {
    ep: Endpoint,
    private_data: Vec<u8>,
    responder_resources: u8,
    initiator_depth: u8,
}

impl ConnectRequest {
    /// The requester's private data, as sent, followed by the CM's zero padding up to
    /// [`MAX_REQUEST_PRIVATE_DATA`] bytes.
    pub fn private_data(&self) -> &[u8] {
        &self.private_data
    }

    /// The device the request arrived on: create the QP on a [`crate::Context`] of it.
    pub fn device_name(&self) -> Option<String> {
        self.ep.device_name()
    }

    /// The local port the request arrived on.
    pub fn port(&self) -> u8 {
        self.ep.port()
    }

    /// The requester's address.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.ep.peer_addr()
    }

    /// Moves `qp` to INIT for this connection, granting the peer `access`. Post receives
    /// after this, before [`accept`](Self::accept).
    ///
    /// # Errors
    /// As [`Connector::init_qp`].
    pub fn init_qp(
        &self,
        qp: RcQp<state::Reset>,
        access: Access,
    ) -> std::result::Result<RcQp<state::Init>, TransitionError<RcQp<state::Reset>>> {
        init_qp(&self.ep, qp, access, "rdma_init_qp_attr (accept)")
    }

    /// Moves `qp` to RTR and RTS, accepts with `params.private_data` and waits (up to
    /// `params.timeout`) until the requester confirms (ESTABLISHED).
    ///
    /// # Errors
    /// EINVAL for too much private data; the QP transitions' errors; `rdma_accept`;
    /// [`CmFailure::TimedOut`] when the requester does not confirm in time, or the failure
    /// it reported instead (rejected, disconnected, ...). The QP comes back in RESET.
    pub fn accept(
        self,
        qp: RcQp<state::Init>,
        params: &CmParams<'_>,
    ) -> std::result::Result<(RcQp<state::Rts>, Connection), CmTransitionError> {
        if let Err(error) = check_private_data(params.private_data, MAX_ACCEPT_PRIVATE_DATA, "rdma_accept") {
            return Err(back_to_reset(qp, error));
        }
        let until = deadline(Some(params.timeout));
        // As librdmacm: the request's values, bounded by the device and the caller.
        let (max_resp, max_init) = self.ep.rd_atomic_limits();
        let resp_res = params
            .responder_resources
            .unwrap_or(self.responder_resources)
            .min(max_resp);
        let init_depth = params.initiator_depth.unwrap_or(self.initiator_depth).min(max_init);
        let qp = ready_qp(&self.ep, qp, Some(resp_res), Some(init_depth))?;
        let mut cp = conn_param(params, qp.qp_num(), qp.has_srq());
        cp.responder_resources = resp_res;
        cp.initiator_depth = init_depth;
        // SAFETY: the id is live; cp and its private data outlive the call.
        if unsafe { raw::rdma_accept(self.ep.as_raw(), &mut cp) } != 0 {
            let error = Error::last_os_error("rdma_accept", "the reply could not be sent");
            return Err(back_to_reset(qp, error));
        }
        match self
            .ep
            .expect(until, "rdma_accept", |e| matches!(e, CmEvent::Established { .. }))
        {
            Ok(_) => Ok((
                qp,
                Connection {
                    ep: self.ep,
                    private_data: self.private_data,
                },
            )),
            Err(error) => Err(back_to_reset(qp, error)),
        }
    }

    /// Rejects the request, sending `private_data` (at most [`MAX_REJECT_PRIVATE_DATA`]
    /// bytes) to the requester, who sees [`CmFailure::Rejected`] with reason 28 (consumer
    /// defined) and these bytes.
    ///
    /// # Errors
    /// EINVAL for too much private data; `rdma_reject`.
    pub fn reject(self, private_data: &[u8]) -> Result<()> {
        check_private_data(private_data, MAX_REJECT_PRIVATE_DATA, "rdma_reject")?;
        // SAFETY: the id is live; the data outlives the call (copied by the library).
        let rc = unsafe { raw::rdma_reject(self.ep.as_raw(), private_data.as_ptr().cast(), private_data.len() as u8) };
        if rc != 0 {
            return Err(Error::last_os_error("rdma_reject", "the reject could not be sent"));
        }
        Ok(())
    }
}

impl std::fmt::Debug for ConnectRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectRequest")
            .field("device", &self.device_name())
            .field("peer", &self.peer_addr())
            .field("private_data_len", &self.private_data.len())
            .finish()
    }
}

/// An established RC connection: its CM id and event channel. The queue pair is the
/// caller's. Dropping it destroys the id (the kernel disconnects if still connected).
pub struct Connection {
    ep: Endpoint,
    private_data: Vec<u8>,
}

impl Connection {
    /// The private data the peer sent (its accept when we connected, its request when we
    /// accepted), byte for byte, followed by the zeros the CM pads the message's
    /// private-data field with (the length of what was sent does not cross the wire).
    pub fn private_data(&self) -> &[u8] {
        &self.private_data
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.ep.peer_addr()
    }

    /// The local address.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.ep.local_addr()
    }

    /// Disconnects (`rdma_disconnect`): the peer sees [`CmEvent::Disconnected`], and so does
    /// this side once the kernel is done. Move the QP to RESET (or drop it) afterwards: work
    /// requests still posted complete with errors.
    ///
    /// # Errors
    /// `rdma_disconnect` (EINVAL when not connected).
    pub fn disconnect(&mut self) -> Result<()> {
        // SAFETY: the id is live.
        if unsafe { raw::rdma_disconnect(self.ep.as_raw()) } != 0 {
            return Err(Error::last_os_error(
                "rdma_disconnect",
                "the connection is not established",
            ));
        }
        Ok(())
    }

    /// The next event of this connection (disconnected, device removal, time-wait exit, ...),
    /// waiting up to `timeout` (None: forever); `Ok(None)` when it passes first.
    ///
    /// # Errors
    /// `rdma_get_cm_event` or `poll` failing.
    pub fn next_event(&self, timeout: Option<Duration>) -> Result<Option<CmEvent>> {
        self.ep.next_event(timeout)
    }

    /// The next event if one is queued (never blocks; pair with [`AsRawFd`] and epoll).
    ///
    /// # Errors
    /// `rdma_get_cm_event` failing.
    pub fn try_next_event(&self) -> Result<Option<CmEvent>> {
        self.ep.try_next_event()
    }

    /// Waits up to `timeout` for [`CmEvent::Disconnected`]; other events are skipped.
    ///
    /// # Errors
    /// [`CmFailure::TimedOut`] when it does not come in time; ENODEV on device removal.
    pub fn wait_disconnected(&self, timeout: Duration) -> Result<()> {
        self.ep
            .expect(deadline(Some(timeout)), "rdma_disconnect (wait)", |e| {
                matches!(e, CmEvent::Disconnected)
            })
            .map(|_| ())
    }
}

impl AsRawFd for Connection {
    /// The connection's event channel: readable when an event is queued.
    fn as_raw_fd(&self) -> RawFd {
        self.ep.as_raw_fd()
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("local", &self.local_addr())
            .field("peer", &self.peer_addr())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_params_ask_for_the_device_limits_and_seven_retries() {
        let p = CmParams::default();
        let cp = conn_param(&p, 0x12_3456, true);
        assert_eq!(cp.responder_resources, 0xFF);
        assert_eq!(cp.initiator_depth, 0xFF);
        assert_eq!((cp.retry_count, cp.rnr_retry_count), (7, 7));
        assert_eq!((cp.qp_num, cp.srq), (0x12_3456, 1));
        assert_eq!(cp.private_data_len, 0);
    }

    #[test]
    fn private_data_longer_than_the_message_is_refused() {
        let data = [0u8; MAX_REQUEST_PRIVATE_DATA + 1];
        let e = check_private_data(&data, MAX_REQUEST_PRIVATE_DATA, "rdma_connect").unwrap_err();
        assert_eq!(e.errno(), Some(libc::EINVAL));
        assert!(check_private_data(&data[..56], MAX_REQUEST_PRIVATE_DATA, "rdma_connect").is_ok());
    }
}
