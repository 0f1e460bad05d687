//! Waiting for completions: a CQ's completion channel (see [`crate::comp_channel`]).

use super::Cq;
use crate::comp_channel::CompChannel;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::wait::{deadline, wait_any_readable, wait_readable};
use mlx5dv_raw as raw;
use std::os::fd::AsRawFd;
use std::time::Duration;

impl Context {
    /// Creates a CQ like [`Context::create_cq`] that reports to a completion channel of its
    /// own, so a thread can sleep until a completion arrives.
    ///
    /// # Errors
    /// `ibv_create_comp_channel`; then as [`Context::create_cq`].
    pub fn create_cq_with_channel(&self, cqe: u32) -> Result<Cq> {
        let channel = CompChannel::new(self)?;
        self.create_cq_on(cqe, Some(channel))
    }
}

impl Cq {
    /// The CQ's completion channel, if it was created with one (its descriptor is for epoll).
    pub fn channel(&self) -> Option<&CompChannel> {
        self.core.events.as_ref()
    }

    fn channel_or_err(&self, op: &'static str) -> Result<&CompChannel> {
        self.core.events.as_ref().ok_or_else(|| {
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
    /// EINVAL for a CQ without a channel; EOPNOTSUPP for a direct CQ
    /// ([`Context::create_direct_cq`]); `ibv_req_notify_cq` with the provider's errno.
    pub fn req_notify(&self, solicited_only: bool) -> Result<()> {
        if self.is_direct() {
            // libmlx5's mlx5_arm_cq writes its own consumer index and arm_sn, which a direct
            // reader does not keep: arming through it would ask for the wrong event.
            return Err(Error::from_errno(
                "ibv_req_notify_cq",
                libc::EOPNOTSUPP,
                "a direct CQ cannot be armed (libmlx5 would arm it at its own consumer index, not the crate's): poll it",
            )
            .on(self.context().name()));
        }
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

    /// Sleeps until any of `cqs` has an event, with no `unsafe` and no epoll of your own: a DC
    /// server's receive CQ (the DCT's) and send CQ (its [`DciPool`](crate::DciPool)'s) from
    /// one thread. Returns the index in `cqs` of the CQ whose event it read, or `None` when
    /// `timeout` (None: forever) passed first.
    ///
    /// Each CQ needs its own channel ([`Context::create_cq_with_channel`]). The pattern is the
    /// one [`Cq::wait`] has, over every CQ: arm each ([`Cq::req_notify`]), poll each empty
    /// (completions that came before arming raise no event), then `wait_any`. Poll *every* CQ
    /// after it returns, not only the one named: others may have completions too. Their
    /// events stay queued and make the next call return at once, which costs one spurious
    /// wake-up and loses nothing.
    ///
    /// ```no_run
    /// # fn f(ctx: &mlx5dv::Context) -> mlx5dv::Result<()> {
    /// use mlx5dv::{Completion, Cq};
    /// use std::time::Duration;
    /// let (rx, tx) = (ctx.create_cq_with_channel(256)?, ctx.create_cq_with_channel(256)?);
    /// let mut done = [Completion::default(); 16];
    /// loop {
    ///     rx.req_notify(false)?;
    ///     tx.req_notify(false)?;
    ///     let n = rx.poll(&mut done)? + tx.poll(&mut done)?; // handle them
    ///     if n == 0 && Cq::wait_any(&[&rx, &tx], Some(Duration::from_secs(1)))?.is_none() {
    ///         break; // a second with nothing on either CQ
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// EINVAL (operation `Cq::wait_any`) for an empty list or a CQ without a channel;
    /// `ibv_get_cq_event`; `poll (comp_channel)` with its errno.
    pub fn wait_any(cqs: &[&Cq], timeout: Option<Duration>) -> Result<Option<usize>> {
        if cqs.is_empty() {
            return Err(Error::invalid("Cq::wait_any", "no CQ to wait on: pass at least one"));
        }
        let mut fds = Vec::with_capacity(cqs.len());
        for cq in cqs {
            fds.push(cq.channel_or_err("Cq::wait_any")?.as_raw_fd());
        }
        let until = deadline(timeout);
        loop {
            for (i, cq) in cqs.iter().enumerate() {
                if cq.channel_or_err("Cq::wait_any")?.try_get(cq.as_raw_cq())? {
                    return Ok(Some(i));
                }
            }
            let readable = wait_any_readable(&fds, until).map_err(|e| {
                Error::from_errno(
                    "poll (comp_channel)",
                    e.raw_os_error().unwrap_or(0),
                    "waiting on the CQs' completion channels failed",
                )
            })?;
            if !readable {
                return Ok(None);
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
        if let Some(channel) = &self.core.events {
            channel.ack_all(self.as_raw_cq());
        }
    }
}
