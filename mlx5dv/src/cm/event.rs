//! Event channels and typed events of the connection manager.
//!
//! Every event is copied and acknowledged (`rdma_ack_cm_event`) the moment it is read, so none
//! is ever left unacknowledged: `rdma_destroy_id` waits for the acknowledgement of every event
//! reported for its id, and an id destroyed while its owner still held an event would hang.

use crate::error::{Error, Result};
use crate::wait::{set_nonblocking, wait_readable};
use mlx5dv_raw as raw;
use std::os::fd::{AsRawFd, RawFd};
use std::ptr::NonNull;
use std::time::Instant;

/// What the connection manager reported: one `RDMA_CM_EVENT_*` with its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CmEvent {
    /// The destination address resolved to a local device and port.
    AddrResolved,
    /// Address resolution failed (`status`: a negative errno).
    AddrError {
        /// Status reported with the event.
        status: i32,
    },
    /// The route to the destination is resolved.
    RouteResolved,
    /// Route resolution failed.
    RouteError {
        /// Status reported with the event.
        status: i32,
    },
    /// A connection (or SIDR) request arrived on a listener.
    ConnectRequest {
        /// The requester's private data.
        private_data: Vec<u8>,
    },
    /// The passive side accepted; the active side now moves its QP and establishes.
    ConnectResponse {
        /// The acceptor's private data.
        private_data: Vec<u8>,
    },
    /// Establishing the connection failed.
    ConnectError {
        /// Status reported with the event.
        status: i32,
    },
    /// The peer did not answer, or answered a SIDR request with an error.
    Unreachable {
        /// Status reported with the event (e.g. `-ETIMEDOUT`).
        status: i32,
    },
    /// The peer rejected the request.
    Rejected {
        /// The InfiniBand CM reject reason (8: no one listens on that port; 28: the consumer
        /// rejected, with private data).
        reason: i32,
        /// The rejecting side's private data.
        private_data: Vec<u8>,
    },
    /// The connection is established (a SIDR reply arrived, on a UD id).
    Established {
        /// The peer's private data.
        private_data: Vec<u8>,
    },
    /// The peer disconnected, or our own disconnect completed.
    Disconnected,
    /// The device the id is bound to is being removed: drop everything built on it.
    DeviceRemoval,
    /// The local address changed.
    AddrChange,
    /// The connection's QP left time-wait and may be reused.
    TimewaitExit,
    /// Another event (multicast, newer rdma-core).
    Other {
        /// `enum rdma_cm_event_type` value.
        event: u32,
        /// Status reported with the event.
        status: i32,
    },
}

/// How a connection-manager handshake ended without succeeding; see
/// [`Error::cm_failure`](crate::Error::cm_failure).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CmFailure {
    /// The peer rejected the request.
    Rejected {
        /// The InfiniBand CM reject reason (8: no one listens on that port; 28: the consumer
        /// rejected).
        reason: i32,
        /// The rejecting side's private data, byte for byte, zero-padded by the CM to the
        /// message's field size.
        private_data: Vec<u8>,
    },
    /// The peer did not answer in the CM's own time, or a SIDR reply carried an error.
    Unreachable {
        /// Status reported with the event.
        status: i32,
    },
    /// No answer within the caller's timeout; the attempt was abandoned.
    TimedOut,
    /// The address did not resolve.
    AddrError {
        /// Status reported with the event.
        status: i32,
    },
    /// The route did not resolve.
    RouteError {
        /// Status reported with the event.
        status: i32,
    },
    /// Establishing the connection failed after the reply.
    ConnectError {
        /// Status reported with the event.
        status: i32,
    },
    /// The device was removed.
    DeviceRemoval,
    /// The peer disconnected before the handshake finished.
    Disconnected,
    /// An event that does not belong in this handshake.
    Unexpected(CmEvent),
}

impl CmFailure {
    /// The errno this failure is reported with.
    pub(crate) fn errno(&self) -> i32 {
        let status_errno = |status: i32, fallback: i32| if status < 0 { -status } else { fallback };
        match self {
            CmFailure::Rejected { .. } => libc::ECONNREFUSED,
            CmFailure::Unreachable { status } => status_errno(*status, libc::EHOSTUNREACH),
            CmFailure::TimedOut => libc::ETIMEDOUT,
            CmFailure::AddrError { status } => status_errno(*status, libc::EADDRNOTAVAIL),
            CmFailure::RouteError { status } => status_errno(*status, libc::ENETUNREACH),
            CmFailure::ConnectError { status } => status_errno(*status, libc::ECONNABORTED),
            CmFailure::DeviceRemoval => libc::ENODEV,
            CmFailure::Disconnected => libc::ECONNRESET,
            CmFailure::Unexpected(_) => libc::EPROTO,
        }
    }

    /// The crate's error for this failure of `op`.
    pub(crate) fn into_error(self, op: &'static str) -> Error {
        let hint: &'static str = match &self {
            CmFailure::Rejected { reason: 8, .. } => "nobody listens on that port (IB CM reject reason 8, invalid service id)",
            CmFailure::Rejected { .. } => "the peer rejected the request: see cm_failure() for its reason and private data",
            CmFailure::Unreachable { .. } => "the peer did not answer: check its address and that it listens",
            CmFailure::TimedOut => "no answer within the timeout: check the address and that the peer listens",
            CmFailure::AddrError { .. } => {
                "the address resolves to no local RDMA device: check it, the routes, and that the netdev has an RDMA device (rdma link)"
            }
            CmFailure::RouteError { .. } => "no route to the peer over the RDMA device",
            CmFailure::ConnectError { .. } => "the connection failed after the reply (QP transition or RTU)",
            CmFailure::DeviceRemoval => "the RDMA device was removed: drop everything built on it",
            CmFailure::Disconnected => "the peer disconnected during the handshake",
            CmFailure::Unexpected(_) => "the connection manager reported an event out of sequence",
        };
        Error::from_errno(op, self.errno(), hint).with_cm(self)
    }

    /// The failure an event means during a handshake, or None for a benign event.
    pub(crate) fn from_event(event: &CmEvent) -> Option<CmFailure> {
        Some(match event {
            CmEvent::Rejected { reason, private_data } => CmFailure::Rejected {
                reason: *reason,
                private_data: private_data.clone(),
            },
            CmEvent::Unreachable { status } => CmFailure::Unreachable { status: *status },
            CmEvent::AddrError { status } => CmFailure::AddrError { status: *status },
            CmEvent::RouteError { status } => CmFailure::RouteError { status: *status },
            CmEvent::ConnectError { status } => CmFailure::ConnectError { status: *status },
            CmEvent::DeviceRemoval => CmFailure::DeviceRemoval,
            CmEvent::Disconnected => CmFailure::Disconnected,
            CmEvent::TimewaitExit | CmEvent::AddrChange => return None,
            other => CmFailure::Unexpected(other.clone()),
        })
    }
}

/// The UD parameters of an event (SIDR reply or request).
#[derive(Copy, Clone, Debug)]
pub(crate) struct UdParams {
    pub(crate) ah_attr: raw::ibv_ah_attr,
    pub(crate) qp_num: u32,
    pub(crate) qkey: u32,
}

/// The connected-mode parameters of an event.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct ConnParams {
    pub(crate) responder_resources: u8,
    pub(crate) initiator_depth: u8,
}

/// An event copied out of the library and already acknowledged.
pub(crate) struct RawEvent {
    /// The id it is about (a new id for CONNECT_REQUEST, owned by whoever reads it).
    pub(crate) id: *mut raw::rdma_cm_id,
    pub(crate) event: CmEvent,
    pub(crate) ud: Option<UdParams>,
    pub(crate) conn: ConnParams,
}

/// An event channel (`rdma_create_event_channel`), non-blocking, destroyed on drop.
pub(crate) struct EventChannel {
    ch: NonNull<raw::rdma_event_channel>,
}

// SAFETY: librdmacm channels are file descriptors usable from any thread.
unsafe impl Send for EventChannel {}

impl EventChannel {
    /// Opens a channel and makes its fd non-blocking.
    pub(crate) fn new() -> Result<EventChannel> {
        // SAFETY: no arguments; returns NULL with errno on failure.
        let ch = unsafe { raw::rdma_create_event_channel() };
        let ch = NonNull::new(ch).ok_or_else(|| {
            Error::last_os_error(
                "rdma_create_event_channel",
                "no RDMA device, or the RDMA CM kernel modules are not loaded (modprobe rdma_ucm; /dev/infiniband/rdma_cm must exist)",
            )
        })?;
        let channel = EventChannel { ch };
        set_nonblocking(channel.as_raw_fd()).map_err(|e| {
            Error::from_errno(
                "fcntl (rdma_event_channel O_NONBLOCK)",
                e.raw_os_error().unwrap_or(0),
                "the CM channel's descriptor refused non-blocking mode",
            )
        })?;
        Ok(channel)
    }

    pub(crate) fn as_raw(&self) -> *mut raw::rdma_event_channel {
        self.ch.as_ptr()
    }

    /// The next event, waiting until `deadline`; None if it passed first.
    pub(crate) fn next(&self, deadline: Option<Instant>) -> Result<Option<RawEvent>> {
        loop {
            if let Some(event) = self.try_next()? {
                return Ok(Some(event));
            }
            let readable = wait_readable(self.as_raw_fd(), deadline)
                .map_err(|e| Error::from_errno("poll (rdma_event_channel)", e.raw_os_error().unwrap_or(0), ""))?;
            if !readable {
                return Ok(None);
            }
        }
    }

    /// The next event if one is queued.
    pub(crate) fn try_next(&self) -> Result<Option<RawEvent>> {
        let mut ev: *mut raw::rdma_cm_event = std::ptr::null_mut();
        // SAFETY: the channel is live; ev is writable.
        let rc = unsafe { raw::rdma_get_cm_event(self.as_raw(), &mut ev) };
        if rc != 0 {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            if errno == libc::EAGAIN || errno == libc::EWOULDBLOCK {
                return Ok(None);
            }
            return Err(Error::from_errno(
                "rdma_get_cm_event",
                errno,
                "the CM channel failed; drop the ids on it",
            ));
        }
        // SAFETY: rdma_get_cm_event succeeded, so ev points to an event until it is acked.
        let copied = unsafe { copy_event(ev) };
        // SAFETY: acknowledged once, right after copying; nothing refers to it afterwards.
        unsafe { raw::rdma_ack_cm_event(ev) };
        Ok(Some(copied))
    }
}

/// # Safety
/// `ev` must be a live, unacknowledged event.
unsafe fn copy_event(ev: *mut raw::rdma_cm_event) -> RawEvent {
    // SAFETY: guaranteed by the caller; the event's id is live while the event is.
    unsafe {
        let e = &*ev;
        let ud_id = !e.id.is_null() && (*e.id).qp_type == raw::IBV_QPT_UD;
        let (data_ptr, data_len) = if ud_id {
            (e.param.ud.private_data, e.param.ud.private_data_len)
        } else {
            (e.param.conn.private_data, e.param.conn.private_data_len)
        };
        let private_data = if data_ptr.is_null() || data_len == 0 {
            Vec::new()
        } else {
            std::slice::from_raw_parts(data_ptr.cast::<u8>(), usize::from(data_len)).to_vec()
        };
        // The union is read as `ud` only for UD ids.
        let ud = if ud_id {
            Some(UdParams {
                ah_attr: e.param.ud.ah_attr,
                qp_num: e.param.ud.qp_num,
                qkey: e.param.ud.qkey,
            })
        } else {
            None
        };
        let conn = if ud_id {
            ConnParams::default()
        } else {
            ConnParams {
                responder_resources: e.param.conn.responder_resources,
                initiator_depth: e.param.conn.initiator_depth,
            }
        };
        let status = e.status;
        let event = match e.event {
            raw::RDMA_CM_EVENT_ADDR_RESOLVED => CmEvent::AddrResolved,
            raw::RDMA_CM_EVENT_ADDR_ERROR => CmEvent::AddrError { status },
            raw::RDMA_CM_EVENT_ROUTE_RESOLVED => CmEvent::RouteResolved,
            raw::RDMA_CM_EVENT_ROUTE_ERROR => CmEvent::RouteError { status },
            raw::RDMA_CM_EVENT_CONNECT_REQUEST => CmEvent::ConnectRequest { private_data },
            raw::RDMA_CM_EVENT_CONNECT_RESPONSE => CmEvent::ConnectResponse { private_data },
            raw::RDMA_CM_EVENT_CONNECT_ERROR => CmEvent::ConnectError { status },
            raw::RDMA_CM_EVENT_UNREACHABLE => CmEvent::Unreachable { status },
            raw::RDMA_CM_EVENT_REJECTED => CmEvent::Rejected {
                reason: status,
                private_data,
            },
            raw::RDMA_CM_EVENT_ESTABLISHED => CmEvent::Established { private_data },
            raw::RDMA_CM_EVENT_DISCONNECTED => CmEvent::Disconnected,
            raw::RDMA_CM_EVENT_DEVICE_REMOVAL => CmEvent::DeviceRemoval,
            raw::RDMA_CM_EVENT_ADDR_CHANGE => CmEvent::AddrChange,
            raw::RDMA_CM_EVENT_TIMEWAIT_EXIT => CmEvent::TimewaitExit,
            other => CmEvent::Other { event: other, status },
        };
        RawEvent {
            id: e.id,
            event,
            ud,
            conn,
        }
    }
}

impl AsRawFd for EventChannel {
    fn as_raw_fd(&self) -> RawFd {
        // SAFETY: the channel is live; fd is a plain integer field.
        unsafe { (*self.ch.as_ptr()).fd }
    }
}

impl Drop for EventChannel {
    fn drop(&mut self) {
        // SAFETY: created once, destroyed once; the ids on it are destroyed first (owners drop
        // their id before their channel).
        unsafe { raw::rdma_destroy_event_channel(self.ch.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejection_by_an_empty_port_says_nobody_listens_and_keeps_the_reason() {
        let e = CmFailure::Rejected {
            reason: 8,
            private_data: vec![],
        }
        .into_error("rdma_connect");
        assert_eq!(e.errno(), Some(libc::ECONNREFUSED));
        assert!(e.hint().contains("nobody listens"), "{e}");
        assert!(matches!(e.cm_failure(), Some(CmFailure::Rejected { reason: 8, .. })));
    }

    #[test]
    fn negative_status_becomes_the_errno_and_timeouts_are_etimedout() {
        assert_eq!(
            CmFailure::Unreachable {
                status: -libc::ETIMEDOUT
            }
            .errno(),
            libc::ETIMEDOUT
        );
        assert_eq!(CmFailure::Unreachable { status: 5 }.errno(), libc::EHOSTUNREACH);
        assert_eq!(CmFailure::TimedOut.errno(), libc::ETIMEDOUT);
        assert_eq!(CmFailure::AddrError { status: -libc::ENODEV }.errno(), libc::ENODEV);
    }

    #[test]
    fn time_wait_and_address_change_do_not_end_a_handshake() {
        assert_eq!(CmFailure::from_event(&CmEvent::TimewaitExit), None);
        assert_eq!(CmFailure::from_event(&CmEvent::AddrChange), None);
        assert_eq!(
            CmFailure::from_event(&CmEvent::Disconnected),
            Some(CmFailure::Disconnected)
        );
    }
}
