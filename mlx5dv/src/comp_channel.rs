//! Completion channels: waiting for completions instead of spinning.
//!
//! A CQ created with [`Context::create_cq_with_channel`](crate::Context::create_cq_with_channel) owns a completion channel. Arm it
//! with [`Cq::req_notify`](crate::Cq::req_notify), poll the CQ empty (a completion that arrived before arming raises
//! no event), then block in [`Cq::wait`](crate::Cq::wait) with a timeout, or put the channel's descriptor
//! ([`Cq::channel`](crate::Cq::channel), non-blocking, `AsFd`) into epoll and call [`Cq::try_event`](crate::Cq::try_event) when it
//! is readable. Every event arms once: re-arm before polling again. To sleep on several CQs
//! (a DC server's receive and send CQs), use [`Cq::wait_any`](crate::Cq::wait_any).
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
use crate::error::{Error, Result};
use crate::wait::set_nonblocking;
use mlx5dv_raw as raw;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

/// Events acknowledged together (one `ibv_ack_cq_events` call per batch).
const ACK_BATCH: u32 = 16;

/// A completion channel (`ibv_comp_channel`) owned by one [`Cq`](crate::Cq); its descriptor is
/// non-blocking.
pub struct CompChannel {
    ch: NonNull<raw::ibv_comp_channel>,
    unacked: AtomicU32,
}

// SAFETY: the channel is a file descriptor; it moves with its CQ.
unsafe impl Send for CompChannel {}
// SAFETY: reads of events go through the CQ handle (one thread at a time); the shared core only
// acknowledges at destruction, and the count is atomic.
unsafe impl Sync for CompChannel {}

impl CompChannel {
    pub(crate) fn new(ctx: &Context) -> Result<CompChannel> {
        // SAFETY: the context is open.
        let ch = unsafe { raw::ibv_create_comp_channel(ctx.as_raw()) };
        let ch = NonNull::new(ch).ok_or_else(|| {
            Error::last_os_error("ibv_create_comp_channel", "out of file descriptors or memory").on(ctx.name())
        })?;
        let channel = CompChannel {
            ch,
            unacked: AtomicU32::new(0),
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
        self.unacked.load(Ordering::Relaxed)
    }

    /// Acknowledges every event read so far for `cq`.
    pub(crate) fn ack_all(&self, cq: *mut raw::ibv_cq) {
        let n = self.unacked.swap(0, Ordering::Relaxed);
        if n > 0 {
            // SAFETY: cq is the live CQ this channel serves; n events were read for it.
            unsafe { raw::ibv_ack_cq_events(cq, n) };
        }
    }

    /// Reads one event if queued; counts it for acknowledgement.
    pub(crate) fn try_get(&self, cq: *mut raw::ibv_cq) -> Result<bool> {
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
        if self.unacked.fetch_add(1, Ordering::Relaxed) + 1 >= ACK_BATCH {
            self.ack_all(cq);
        }
        Ok(true)
    }
}

impl AsFd for CompChannel {
    /// Readable when the armed CQ got a completion.
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the descriptor stays open while the channel lives (it is closed by
        // ibv_destroy_comp_channel in drop).
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
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
            .field("unacked", &self.unacked())
            .finish()
    }
}
