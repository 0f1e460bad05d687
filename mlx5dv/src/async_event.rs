//! Asynchronous device events (`ibv_get_async_event`): ports going down and up, fatal QP
//! errors, SRQ limits, the last WQE of a QP leaving an SRQ, and the rest of `enum
//! ibv_event_type`, typed.
//!
//! [`AsyncEvents`] puts the context's async descriptor in non-blocking mode, so it can sit in
//! an epoll set ([`AsRawFd`]) and [`AsyncEvents::next`] can wait with a timeout. Each event is
//! copied and acknowledged as soon as it is read: destroying a QP, CQ or SRQ waits for the
//! acknowledgement of its events, so none is ever left pending.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::srq::Srq;
use crate::wait::{deadline, set_nonblocking, wait_readable};
use mlx5dv_raw as raw;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::time::Duration;

/// Which SRQ an event is about (compare with [`SrqRef::is`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SrqRef(usize);

impl SrqRef {
    /// Whether the event is about `srq`.
    pub fn is(&self, srq: &Srq) -> bool {
        self.0 == srq.as_raw() as usize
    }
}

/// One asynchronous event (`enum ibv_event_type` with the object it names).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AsyncEvent {
    /// A CQ overran or failed.
    CqErr,
    /// A QP hit a fatal error and is in the error state.
    QpFatal {
        /// The QP's number.
        qp_num: u32,
    },
    /// A QP's request failed (invalid request on the responder).
    QpReqErr {
        /// The QP's number.
        qp_num: u32,
    },
    /// A QP's access was violated.
    QpAccessErr {
        /// The QP's number.
        qp_num: u32,
    },
    /// Communication was established on a QP (a message arrived in RTR).
    CommEst {
        /// The QP's number.
        qp_num: u32,
    },
    /// A QP's send queue drained.
    SqDrained {
        /// The QP's number.
        qp_num: u32,
    },
    /// A QP migrated to its alternate path.
    PathMig {
        /// The QP's number.
        qp_num: u32,
    },
    /// Path migration failed.
    PathMigErr {
        /// The QP's number.
        qp_num: u32,
    },
    /// The device failed: everything on it is lost.
    DeviceFatal,
    /// A port became active (link up).
    PortActive {
        /// The port (from 1).
        port: u8,
    },
    /// A port left the active state (link down).
    PortErr {
        /// The port (from 1).
        port: u8,
    },
    /// A port's LID changed.
    LidChange {
        /// The port.
        port: u8,
    },
    /// A port's P_Key table changed.
    PkeyChange {
        /// The port.
        port: u8,
    },
    /// The subnet manager changed.
    SmChange {
        /// The port.
        port: u8,
    },
    /// An SRQ failed.
    SrqErr {
        /// The SRQ.
        srq: SrqRef,
    },
    /// An armed SRQ fell below its limit.
    SrqLimitReached {
        /// The SRQ.
        srq: SrqRef,
    },
    /// The last WQE of a QP (in error, on an SRQ) was consumed: it may be destroyed.
    QpLastWqeReached {
        /// The QP's number.
        qp_num: u32,
    },
    /// The subnet manager asks for re-registration.
    ClientReregister {
        /// The port.
        port: u8,
    },
    /// A port's GID table changed.
    GidChange {
        /// The port.
        port: u8,
    },
    /// A work queue failed.
    WqFatal,
    /// Another event type.
    Other(u32),
}

impl AsyncEvent {
    /// # Safety
    /// `e` must be an event just returned by `ibv_get_async_event`, not yet acknowledged.
    unsafe fn from_raw(e: &raw::ibv_async_event) -> AsyncEvent {
        // SAFETY: the union member read matches the event type (verbs.h documents which), and
        // the QP is live until the event is acknowledged.
        unsafe {
            let qp_num = || (*e.element.qp).qp_num;
            let port = || e.element.port_num.clamp(0, 255) as u8;
            let srq = || SrqRef(e.element.srq as usize);
            match e.event_type {
                raw::IBV_EVENT_CQ_ERR => AsyncEvent::CqErr,
                raw::IBV_EVENT_QP_FATAL => AsyncEvent::QpFatal { qp_num: qp_num() },
                raw::IBV_EVENT_QP_REQ_ERR => AsyncEvent::QpReqErr { qp_num: qp_num() },
                raw::IBV_EVENT_QP_ACCESS_ERR => AsyncEvent::QpAccessErr { qp_num: qp_num() },
                raw::IBV_EVENT_COMM_EST => AsyncEvent::CommEst { qp_num: qp_num() },
                raw::IBV_EVENT_SQ_DRAINED => AsyncEvent::SqDrained { qp_num: qp_num() },
                raw::IBV_EVENT_PATH_MIG => AsyncEvent::PathMig { qp_num: qp_num() },
                raw::IBV_EVENT_PATH_MIG_ERR => AsyncEvent::PathMigErr { qp_num: qp_num() },
                raw::IBV_EVENT_DEVICE_FATAL => AsyncEvent::DeviceFatal,
                raw::IBV_EVENT_PORT_ACTIVE => AsyncEvent::PortActive { port: port() },
                raw::IBV_EVENT_PORT_ERR => AsyncEvent::PortErr { port: port() },
                raw::IBV_EVENT_LID_CHANGE => AsyncEvent::LidChange { port: port() },
                raw::IBV_EVENT_PKEY_CHANGE => AsyncEvent::PkeyChange { port: port() },
                raw::IBV_EVENT_SM_CHANGE => AsyncEvent::SmChange { port: port() },
                raw::IBV_EVENT_SRQ_ERR => AsyncEvent::SrqErr { srq: srq() },
                raw::IBV_EVENT_SRQ_LIMIT_REACHED => AsyncEvent::SrqLimitReached { srq: srq() },
                raw::IBV_EVENT_QP_LAST_WQE_REACHED => AsyncEvent::QpLastWqeReached { qp_num: qp_num() },
                raw::IBV_EVENT_CLIENT_REREGISTER => AsyncEvent::ClientReregister { port: port() },
                raw::IBV_EVENT_GID_CHANGE => AsyncEvent::GidChange { port: port() },
                raw::IBV_EVENT_WQ_FATAL => AsyncEvent::WqFatal,
                other => AsyncEvent::Other(other),
            }
        }
    }
}

/// The asynchronous events of a [`Context`], read without blocking or waited for with a
/// timeout. Holds the context.
pub struct AsyncEvents {
    ctx: Context,
}

impl Context {
    /// The device's asynchronous events. Puts the context's async descriptor in
    /// non-blocking mode (for every reader of this context).
    ///
    /// # Errors
    /// `fcntl` on the async descriptor.
    pub fn async_events(&self) -> Result<AsyncEvents> {
        // SAFETY: the context is open; async_fd is a plain integer field.
        let fd = unsafe { (*self.as_raw()).async_fd };
        set_nonblocking(fd).map_err(|e| {
            Error::from_errno(
                "fcntl (async_fd O_NONBLOCK)",
                e.raw_os_error().unwrap_or(0),
                "the context's async event descriptor refused non-blocking mode",
            )
            .on(self.name())
        })?;
        Ok(AsyncEvents { ctx: self.clone() })
    }
}

impl AsyncEvents {
    /// The next event if one is queued (never blocks).
    ///
    /// # Errors
    /// `ibv_get_async_event` with an errno other than EAGAIN.
    pub fn try_next(&self) -> Result<Option<AsyncEvent>> {
        // SAFETY: all-zero is a valid event (a NULL pointer in the union, type 0).
        let mut e: raw::ibv_async_event = unsafe { std::mem::zeroed() };
        // SAFETY: the context is open; e is writable.
        if unsafe { raw::ibv_get_async_event(self.ctx.as_raw(), &mut e) } != 0 {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            if errno == libc::EAGAIN || errno == libc::EWOULDBLOCK {
                return Ok(None);
            }
            return Err(
                Error::from_errno("ibv_get_async_event", errno, "reading the device's async events failed")
                    .on(self.ctx.name()),
            );
        }
        // SAFETY: e was just returned and is acknowledged right after.
        let event = unsafe { AsyncEvent::from_raw(&e) };
        // SAFETY: acknowledged once.
        unsafe { raw::ibv_ack_async_event(&mut e) };
        Ok(Some(event))
    }

    /// The next event, waiting up to `timeout` (None: forever); `Ok(None)` when it passes.
    ///
    /// # Errors
    /// As [`try_next`](Self::try_next), or `poll` failing.
    pub fn next(&self, timeout: Option<Duration>) -> Result<Option<AsyncEvent>> {
        let until = deadline(timeout);
        loop {
            if let Some(e) = self.try_next()? {
                return Ok(Some(e));
            }
            let readable = wait_readable(self.as_raw_fd(), until)
                .map_err(|e| Error::from_errno("poll (async_fd)", e.raw_os_error().unwrap_or(0), ""))?;
            if !readable {
                return Ok(None);
            }
        }
    }
}

impl AsFd for AsyncEvents {
    /// The context's async descriptor: readable when an event is queued.
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the descriptor stays open while the context (held) is.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}

impl AsRawFd for AsyncEvents {
    /// The context's async descriptor: readable when an event is queued.
    fn as_raw_fd(&self) -> RawFd {
        // SAFETY: the context is open.
        unsafe { (*self.ctx.as_raw()).async_fd }
    }
}

impl std::fmt::Debug for AsyncEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncEvents").field("device", &self.ctx.name()).finish()
    }
}
