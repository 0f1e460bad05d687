//! A connection-manager id on an event channel of its own ([`Endpoint`]), and the socket
//! address conversions the CM calls need.
//!
//! Every id gets its own channel: an id taken from a listener's connection request is moved to
//! a fresh channel (`rdma_migrate_id`), so waiting for one connection's events never consumes
//! another's.

use super::event::{CmEvent, CmFailure, EventChannel, RawEvent};
use crate::error::{Error, Result};
use crate::wait::deadline;
use mlx5dv_raw as raw;
use std::ffi::CStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsRawFd, RawFd};
use std::ptr::NonNull;
use std::time::{Duration, Instant};

/// An id and the channel its events arrive on; the id is destroyed before the channel.
pub(crate) struct Endpoint {
    id: NonNull<raw::rdma_cm_id>,
    channel: EventChannel,
}

// SAFETY: ids and channels are kernel objects behind file descriptors; librdmacm serialises
// its own state per id. Endpoint methods take &mut self where the CM state changes.
unsafe impl Send for Endpoint {}

impl Endpoint {
    /// A new id in port space `ps` on a new channel.
    pub(crate) fn create(ps: raw::rdma_port_space) -> Result<Endpoint> {
        let channel = EventChannel::new()?;
        let mut id: *mut raw::rdma_cm_id = std::ptr::null_mut();
        // SAFETY: the channel is live; id is writable.
        let rc = unsafe { raw::rdma_create_id(channel.as_raw(), &mut id, std::ptr::null_mut(), ps) };
        if rc != 0 {
            return Err(Error::last_os_error(
                "rdma_create_id",
                "the RDMA CM refused a new id (out of memory or file descriptors?)",
            ));
        }
        let id = NonNull::new(id).ok_or_else(|| Error::invalid("rdma_create_id", "the library returned no id"))?;
        Ok(Endpoint { id, channel })
    }

    /// Takes ownership of the id of a connection request and moves it to a channel of its own.
    ///
    /// # Safety
    /// `id` must be the live, unowned id of a CONNECT_REQUEST event already acknowledged.
    pub(crate) unsafe fn adopt(id: *mut raw::rdma_cm_id) -> Result<Endpoint> {
        let destroy = |e: Error| {
            // SAFETY: the caller handed the id over; nothing else destroys it.
            unsafe { raw::rdma_destroy_id(id) };
            e
        };
        let channel = EventChannel::new().map_err(destroy)?;
        // SAFETY: both are live; the request event was acknowledged, so migrating does not wait.
        if unsafe { raw::rdma_migrate_id(id, channel.as_raw()) } != 0 {
            let e = Error::last_os_error("rdma_migrate_id", "could not move the request to its own channel");
            return Err(destroy(e));
        }
        let id = NonNull::new(id).ok_or_else(|| Error::invalid("rdma_migrate_id", "no id"))?;
        Ok(Endpoint { id, channel })
    }

    pub(crate) fn as_raw(&self) -> *mut raw::rdma_cm_id {
        self.id.as_ptr()
    }

    /// Binds to a local address (port 0: any).
    pub(crate) fn bind(&mut self, addr: &SocketAddr) -> Result<()> {
        let mut storage = to_sockaddr(addr);
        // SAFETY: the id is live; storage holds a sockaddr of addr's family.
        let rc = unsafe { raw::rdma_bind_addr(self.as_raw(), (&mut storage as *mut libc::sockaddr_storage).cast()) };
        if rc != 0 {
            return Err(Error::last_os_error(
                "rdma_bind_addr",
                format!("cannot bind {addr}: is the port in use, or the address not on an RDMA-capable netdev?"),
            ));
        }
        Ok(())
    }

    /// Resolves `dst` (from `src`, if given) to a device, port and route, within `timeout`.
    pub(crate) fn resolve(&mut self, src: Option<&SocketAddr>, dst: &SocketAddr, timeout: Duration) -> Result<()> {
        let until = deadline(Some(timeout));
        let mut dst_storage = to_sockaddr(dst);
        let mut src_storage = src.map(to_sockaddr);
        let src_ptr = src_storage
            .as_mut()
            .map_or(std::ptr::null_mut(), |s| (s as *mut libc::sockaddr_storage).cast());
        // SAFETY: the id is live; the addresses are valid sockaddrs for the call.
        let rc = unsafe {
            raw::rdma_resolve_addr(
                self.as_raw(),
                src_ptr,
                (&mut dst_storage as *mut libc::sockaddr_storage).cast(),
                timeout_ms(timeout),
            )
        };
        if rc != 0 {
            return Err(Error::last_os_error(
                "rdma_resolve_addr",
                format!("cannot start resolving {dst}: check the address family and the routes"),
            ));
        }
        self.expect(until, "rdma_resolve_addr", |e| matches!(e, CmEvent::AddrResolved))?;
        let left = until.map_or(timeout, |d| d.saturating_duration_since(Instant::now()));
        // SAFETY: the id is live and its address resolved.
        if unsafe { raw::rdma_resolve_route(self.as_raw(), timeout_ms(left)) } != 0 {
            return Err(Error::last_os_error(
                "rdma_resolve_route",
                "cannot start resolving the route",
            ));
        }
        self.expect(until, "rdma_resolve_route", |e| matches!(e, CmEvent::RouteResolved))?;
        Ok(())
    }

    /// Waits for the event `want` accepts; any failure event, or the deadline, is an error.
    pub(crate) fn expect(
        &self,
        until: Option<Instant>,
        op: &'static str,
        want: impl Fn(&CmEvent) -> bool,
    ) -> Result<RawEvent> {
        loop {
            let Some(ev) = self.channel.next(until)? else {
                return Err(CmFailure::TimedOut.into_error(op));
            };
            if want(&ev.event) {
                return Ok(ev);
            }
            if let Some(failure) = CmFailure::from_event(&ev.event) {
                return Err(failure.into_error(op));
            }
        }
    }

    /// The next event, waiting up to `timeout` (None: forever).
    pub(crate) fn next_event(&self, timeout: Option<Duration>) -> Result<Option<CmEvent>> {
        Ok(self.channel.next(deadline(timeout))?.map(|e| e.event))
    }

    /// The next event if one is queued.
    pub(crate) fn try_next_event(&self) -> Result<Option<CmEvent>> {
        Ok(self.channel.try_next()?.map(|e| e.event))
    }

    pub(crate) fn channel(&self) -> &EventChannel {
        &self.channel
    }

    /// The kernel name of the device the id is bound to, once resolved or requested.
    pub(crate) fn device_name(&self) -> Option<String> {
        // SAFETY: the id is live; verbs and its device are live while the id is bound.
        unsafe {
            let verbs = (*self.as_raw()).verbs;
            if verbs.is_null() || (*verbs).device.is_null() {
                return None;
            }
            let name = raw::ibv_get_device_name((*verbs).device);
            (!name.is_null()).then(|| CStr::from_ptr(name).to_string_lossy().into_owned())
        }
    }

    /// The device's port the id is bound to.
    pub(crate) fn port(&self) -> u8 {
        // SAFETY: the id is live.
        unsafe { (*self.as_raw()).port_num }
    }

    /// The librdmacm context of the bound device (for queries only).
    pub(crate) fn verbs(&self) -> Option<NonNull<raw::ibv_context>> {
        // SAFETY: the id is live.
        NonNull::new(unsafe { (*self.as_raw()).verbs })
    }

    /// Fails unless the id is bound to `device`.
    pub(crate) fn check_device(&self, device: &str, op: &'static str) -> Result<()> {
        match self.device_name() {
            Some(name) if name == device => Ok(()),
            Some(name) => Err(Error::invalid(
                op,
                format!("the connection runs over {name}, but the queue pair was created on {device}: create it on a Context of {name}"),
            )),
            None => Err(Error::invalid(op, "the id is not bound to a device yet (resolve first)")),
        }
    }

    /// The attributes and mask that move a QP of this connection to `state`.
    pub(crate) fn qp_attr(&self, state: raw::ibv_qp_state) -> Result<(raw::ibv_qp_attr, u32)> {
        let mut attr = raw::ibv_qp_attr {
            qp_state: state,
            ..Default::default()
        };
        let mut mask: libc::c_int = 0;
        // SAFETY: the id is live; attr and mask are writable.
        if unsafe { raw::rdma_init_qp_attr(self.as_raw(), &mut attr, &mut mask) } != 0 {
            return Err(Error::last_os_error(
                "rdma_init_qp_attr",
                "the CM has no attributes for that state yet (resolve, or wait for the reply, first)",
            ));
        }
        Ok((attr, mask as u32))
    }

    /// Whether the bound port is InfiniBand (not RoCE or iWARP).
    pub(crate) fn port_is_infiniband(&self) -> bool {
        let Some(verbs) = self.verbs() else { return false };
        let mut attr = raw::ibv_port_attr::default();
        // SAFETY: the context is librdmacm's, live while the id is bound; attr is writable.
        let rc = unsafe { raw::ibv_query_port(verbs.as_ptr(), self.port(), &mut attr) };
        rc == 0 && attr.link_layer != raw::IBV_LINK_LAYER_ETHERNET
    }

    /// The device's read/atomic limits: (max_qp_rd_atom, max_qp_init_rd_atom).
    pub(crate) fn rd_atomic_limits(&self) -> (u8, u8) {
        let Some(verbs) = self.verbs() else { return (0, 0) };
        // SAFETY: all-zero is a valid ibv_device_attr.
        let mut attr: raw::ibv_device_attr = unsafe { std::mem::zeroed() };
        // SAFETY: the context is live while the id is bound; attr is writable.
        if unsafe { raw::ibv_query_device(verbs.as_ptr(), &mut attr) } != 0 {
            return (0, 0);
        }
        let clamp = |v: i32| v.clamp(0, 255) as u8;
        (clamp(attr.max_qp_rd_atom), clamp(attr.max_qp_init_rd_atom))
    }

    /// The local address of the id.
    pub(crate) fn local_addr(&self) -> Option<SocketAddr> {
        // SAFETY: the id is live; the address lies inside it.
        unsafe { from_sockaddr(raw::rdma_get_local_addr(self.as_raw())) }
    }

    /// The peer's address of the id.
    pub(crate) fn peer_addr(&self) -> Option<SocketAddr> {
        // SAFETY: the id is live; the address lies inside it.
        unsafe { from_sockaddr(raw::rdma_get_peer_addr(self.as_raw())) }
    }
}

impl AsRawFd for Endpoint {
    fn as_raw_fd(&self) -> RawFd {
        self.channel.as_raw_fd()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        // SAFETY: created or adopted once, destroyed once; every event reported for it was
        // acknowledged when read, so this does not block. The channel is dropped after it.
        unsafe { raw::rdma_destroy_id(self.id.as_ptr()) };
    }
}

/// Milliseconds for the CM's own timers (at least 1, at most `c_int::MAX`).
fn timeout_ms(t: Duration) -> libc::c_int {
    t.as_millis().clamp(1, libc::c_int::MAX as u128) as libc::c_int
}

/// `addr` as a `sockaddr_in` or `sockaddr_in6` inside a `sockaddr_storage`.
pub(crate) fn to_sockaddr(addr: &SocketAddr) -> libc::sockaddr_storage {
    // SAFETY: all-zero is a valid sockaddr_storage.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin) };
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo().to_be(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6) };
        }
    }
    storage
}

/// # Safety
/// `sa` must be NULL or point to a sockaddr as large as its family says.
pub(crate) unsafe fn from_sockaddr(sa: *const libc::sockaddr) -> Option<SocketAddr> {
    if sa.is_null() {
        return None;
    }
    // SAFETY: guaranteed by the caller.
    unsafe {
        match i32::from((*sa).sa_family) {
            libc::AF_INET => {
                let sin = &*sa.cast::<libc::sockaddr_in>();
                let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
                Some(SocketAddr::V4(SocketAddrV4::new(ip, u16::from_be(sin.sin_port))))
            }
            libc::AF_INET6 => {
                let sin6 = &*sa.cast::<libc::sockaddr_in6>();
                let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                Some(SocketAddr::V6(SocketAddrV6::new(
                    ip,
                    u16::from_be(sin6.sin6_port),
                    u32::from_be(sin6.sin6_flowinfo),
                    sin6.sin6_scope_id,
                )))
            }
            _ => None,
        }
    }
}

/// The unspecified address of `ip`'s family with `port`.
pub(crate) fn any_addr(ip: IpAddr, port: u16) -> SocketAddr {
    match ip {
        IpAddr::V4(_) => SocketAddr::from((Ipv4Addr::UNSPECIFIED, port)),
        IpAddr::V6(_) => SocketAddr::from((Ipv6Addr::UNSPECIFIED, port)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_addresses_survive_the_sockaddr_round_trip() {
        for addr in ["10.77.0.1:7471", "[fe80::1]:9", "0.0.0.0:0"] {
            let addr: SocketAddr = addr.parse().unwrap();
            let storage = to_sockaddr(&addr);
            // SAFETY: storage holds a sockaddr of addr's family.
            let back = unsafe { from_sockaddr((&storage as *const libc::sockaddr_storage).cast()) };
            assert_eq!(back, Some(addr));
        }
    }

    #[test]
    fn ports_are_stored_in_network_order() {
        let storage = to_sockaddr(&"1.2.3.4:7471".parse().unwrap());
        // SAFETY: storage holds a sockaddr_in.
        let sin = unsafe { &*(&storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
        assert_eq!(sin.sin_port.to_ne_bytes(), 7471u16.to_be_bytes());
        assert_eq!(sin.sin_addr.s_addr.to_ne_bytes(), [1, 2, 3, 4]);
    }
}
