//! Completion channels: waiting for completions instead of spinning.
//!
//! A CQ created with [`Context::create_cq_with_channel`] owns a completion channel. Arm it
//! with [`Cq::req_notify`], poll the CQ empty (a completion that arrived before arming raises
//! no event), then block in [`Cq::wait`] with a timeout, or put the channel's descriptor
//! ([`Cq::channel`], non-blocking, `AsRawFd`) into epoll and call [`Cq::try_event`] when it
//! is readable. Every event arms once: re-arm before polling again.
//!
//! Events are acknowledged in batches (`ibv_ack_cq_events` takes a lock) and every
//! outstanding one before the CQ is destroyed, which `ibv_destroy_cq` requires.
//!
//! ```no_run
//! # fn f(ctx: &mlx5dv::Context) -> mlx5dv::Result<()> {
//! use std::time::Duration;
//! let cq = ctx.create_cq_with_channel(64)?;
//! let mut done = [mlx5dv::Completion::default(); 16];
//! loop {
//!     cq.req_notify(false)?;
//!     let n = cq.poll(&mut done)?; // drain what came before arming
//!     if n > 0 { break; }
//!     if !cq.wait(Some(Duration::from_secs(1)))? { /* timed out */ }
//! }
//! # Ok(()) }
//! ```

use crate::context::Context;
use crate::cq::Cq;
use crate::error::{Error, Result};
use crate::wait::{deadline, set_nonblocking, wait_readable};
use mlx5dv_raw as raw;
use std::cell::Cell;
use std::os::fd::{AsRawFd, RawFd};
use std::ptr::NonNull;
use std::time::Duration;

/// Events acknowledged together (one `ibv_ack_cq_events` call per batch).
const ACK_BATCH: u32 = 16;

/// A completion channel (`ibv_comp_channel`) owned by one [`Cq`]; its descriptor is
/// non-blocking.
pub struct CompChannel {
    ch: NonNull<raw::ibv_comp_channel>,
    unacked: Cell<u32>,
}

// SAFETY: the channel is a file descriptor; it moves with its CQ, which is used from one
// thread at a time.
unsafe impl Send for CompChannel {}

impl CompChannel {
    fn new(ctx: &Context) -> Result<CompChannel> {
        // SAFETY: the context is open.
        let ch = unsafe { raw::ibv_create_comp_channel(ctx.as_raw()) };
        let ch = NonNull::new(ch).ok_or_else(|| {
            Error::last_os_error("ibv_create_comp_channel", "out of file descriptors or memory").on(ctx.name())
        })?;
        let channel = CompChannel {
            ch,
            unacked: Cell::new(0),
        };
        set_nonblocking(channel.as_raw_fd()).map_err(|e| {
            Error::from_errno(
                "fcntl (comp_channel O_NONBLOCK)",
                e.raw_os_error().unwrap_or(0),
                "the completion channel refused non-blocking mode",
            )
        })?;
        Ok(channel)
    }

    pub(crate) fn as_raw(&self) -> *mut raw::ibv_comp_channel {
        self.ch.as_ptr()
    }

    /// Events read but not yet acknowledged.
    pub fn unacked(&self) -> u32 {
        self.unacked.get()
    }

    /// Acknowledges every event read so far for `cq`.
    pub(crate) fn ack_all(&self, cq: *mut raw::ibv_cq) {
        let n = self.unacked.replace(0);
        if n > 0 {
            // SAFETY: cq is the live CQ this channel serves; n events were read for it.
            unsafe { raw::ibv_ack_cq_events(cq, n) };
        }
    }

    /// Reads one event if queued; counts it for acknowledgement.
    fn try_get(&self, cq: *mut raw::ibv_cq) -> Result<bool> {
        let mut ev_cq: *mut raw::ibv_cq = std::ptr::null_mut();
        let mut ev_ctx: *mut libc::c_void = std::ptr::null_mut();
        // SAFETY: the channel is live; the out-parameters are writable.
        if unsafe { raw::ibv_get_cq_event(self.as_raw(), &mut ev_cq, &mut ev_ctx) } != 0 {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            if errno == libc::EAGAIN || errno == libc::EWOULDBLOCK {
                return Ok(false);
            }
            return Err(Error::from_errno(
                "ibv_get_cq_event",
                errno,
                "reading the completion channel failed",
            ));
        }
        // One CQ per channel: the event is this CQ's.
        debug_assert_eq!(ev_cq, cq);
        self.unacked.set(self.unacked.get() + 1);
        if self.unacked.get() >= ACK_BATCH {
            self.ack_all(cq);
        }
        Ok(true)
    }
}

impl AsRawFd for CompChannel {
    /// Readable when the armed CQ got a completion.
    fn as_raw_fd(&self) -> RawFd {
        // SAFETY: the channel is live; fd is a plain integer field.
        unsafe { (*self.ch.as_ptr()).fd }
    }
}

impl Drop for CompChannel {
    fn drop(&mut self) {
        // SAFETY: created once, destroyed once, after its CQ (the CQ's Drop runs first).
        unsafe { raw::ibv_destroy_comp_channel(self.ch.as_ptr()) };
    }
}

impl std::fmt::Debug for CompChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompChannel")
            .field("fd", &self.as_raw_fd())
            .field("unacked", &self.unacked.get())
            .finish()
    }
}

impl Context {
    /// Creates a CQ like [`Context::create_cq`] that reports to a completion channel of its
    /// own, so a thread can sleep until a completion arrives.
    ///
    /// # Errors
    /// `ibv_create_comp_channel`; then as [`Context::create_cq`].
    pub fn create_cq_with_channel(&self, cqe: u32) -> Result<Cq<'_>> {
        let channel = CompChannel::new(self)?;
        self.create_cq_on(cqe, Some(channel))
    }
}

impl Cq<'_> {
    /// The CQ's completion channel, if it was created with one (its descriptor is for epoll).
    pub fn channel(&self) -> Option<&CompChannel> {
        self.events.as_ref()
    }

    fn channel_or_err(&self, op: &'static str) -> Result<&CompChannel> {
        self.events.as_ref().ok_or_else(|| {
            Error::invalid(
                op,
                "this CQ has no completion channel: create it with create_cq_with_channel",
            )
        })
    }

    /// Arms the CQ: its channel gets an event for the next completion (only the next
    /// solicited one with `solicited_only`).
    ///
    /// # Errors
    /// EINVAL for a CQ without a channel; `ibv_req_notify_cq` with the provider's errno.
    pub fn req_notify(&self, solicited_only: bool) -> Result<()> {
        self.channel_or_err("ibv_req_notify_cq")?;
        // SAFETY: the CQ is live and has a channel.
        let rc = unsafe { raw::ibv_req_notify_cq(self.as_raw_cq(), libc::c_int::from(solicited_only)) };
        if rc != 0 {
            return Err(
                Error::from_errno("ibv_req_notify_cq", rc, "the provider refused to arm the CQ")
                    .on(self.context().name()),
            );
        }
        Ok(())
    }

    /// Waits up to `timeout` (None: forever) for the armed CQ's event; returns whether one
    /// came. Poll the CQ afterwards, and re-arm before waiting again.
    ///
    /// # Errors
    /// EINVAL for a CQ without a channel; `ibv_get_cq_event`; `poll`.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<bool> {
        let channel = self.channel_or_err("ibv_get_cq_event")?;
        let until = deadline(timeout);
        loop {
            if channel.try_get(self.as_raw_cq())? {
                return Ok(true);
            }
            let readable = wait_readable(channel.as_raw_fd(), until)
                .map_err(|e| Error::from_errno("poll (comp_channel)", e.raw_os_error().unwrap_or(0), ""))?;
            if !readable {
                return Ok(false);
            }
        }
    }

    /// Reads the CQ's event if one is queued (never blocks: for use after epoll reports the
    /// channel readable); returns whether there was one.
    ///
    /// # Errors
    /// EINVAL for a CQ without a channel; `ibv_get_cq_event`.
    pub fn try_event(&self) -> Result<bool> {
        self.channel_or_err("ibv_get_cq_event")?.try_get(self.as_raw_cq())
    }

    /// Acknowledges every event read so far now, instead of at the next batch or at drop.
    pub fn ack_events(&self) {
        if let Some(channel) = &self.events {
            channel.ack_all(self.as_raw_cq());
        }
    }
}
