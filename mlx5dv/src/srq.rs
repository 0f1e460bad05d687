//! Shared receive queues: where a DC target (and, optionally, RC queue pairs) take receive
//! buffers from.

use crate::error::{Error, Result};
use crate::mr::Sge;
use crate::pd::Pd;
use mlx5dv_raw as raw;
use std::ptr::NonNull;
use std::sync::Arc;

/// A shared receive queue. A cheap handle: clones share one SRQ (a DCT holds one), destroyed
/// when the last is dropped. Holds its [`Pd`].
#[derive(Clone)]
pub struct Srq {
    inner: Arc<SrqInner>,
}

struct SrqInner {
    srq: NonNull<raw::ibv_srq>,
    pd: Pd,
    /// The receives it holds, as the provider created it.
    capacity: u32,
    /// SGEs per receive, as the provider created it.
    max_sge: u32,
}

// SAFETY: posting to an SRQ takes the provider's lock; the handle is usable from any thread.
unsafe impl Send for SrqInner {}
// SAFETY: as above; post_recv takes &self and the provider serialises it.
unsafe impl Sync for SrqInner {}

impl Pd {
    /// Creates a shared receive queue of `max_wr` receives with up to `max_sge` entries each.
    /// The provider rounds `max_wr` up (libmlx5: to a power of two, less one, so 256 holds 511):
    /// [`Srq::capacity`] says what it holds.
    ///
    /// # Errors
    /// EINVAL for zero sizes or sizes beyond the device's `max_srq_wr`/`max_srq_sge`;
    /// `ibv_create_srq` with the library's errno otherwise.
    pub fn create_srq(&self, max_wr: u32, max_sge: u32) -> Result<Srq> {
        let ctx = self.context();
        let dev = ctx.query_device()?.0;
        if max_wr == 0
            || max_sge == 0
            || i64::from(max_wr) > i64::from(dev.max_srq_wr)
            || i64::from(max_sge) > i64::from(dev.max_srq_sge)
        {
            return Err(Error::invalid(
                "ibv_create_srq",
                format!(
                    "max_wr {max_wr} / max_sge {max_sge} must be 1..={} / 1..={}",
                    dev.max_srq_wr, dev.max_srq_sge
                ),
            )
            .on(ctx.name()));
        }
        let mut attr = raw::ibv_srq_init_attr {
            srq_context: std::ptr::null_mut(),
            attr: raw::ibv_srq_attr {
                max_wr,
                max_sge,
                srq_limit: 0,
            },
        };
        // SAFETY: the PD is live; attr is initialised.
        let srq = unsafe { raw::ibv_create_srq(self.as_raw(), &mut attr) };
        NonNull::new(srq)
            .map(|srq| Srq {
                // ibv_create_srq writes back the sizes the provider created.
                inner: Arc::new(SrqInner {
                    srq,
                    pd: self.clone(),
                    capacity: attr.attr.max_wr.max(max_wr),
                    max_sge: attr.attr.max_sge.max(max_sge),
                }),
            })
            .ok_or_else(|| {
                Error::last_os_error("ibv_create_srq", "check the sizes against the device limits").on(ctx.name())
            })
    }
}

impl Srq {
    /// Posts one receive of `sges` (scattered in order) with `wr_id`.
    ///
    /// # Errors
    /// EINVAL for an empty SGE list; `ibv_post_srq_recv` with the provider's errno: ENOMEM when
    /// the SRQ is full (the message gives its [`capacity`](Self::capacity)) or the receive has
    /// more SGEs than the SRQ takes (the message says which).
    #[inline]
    pub fn post_recv(&self, wr_id: u64, sges: &[Sge<'_>]) -> Result<()> {
        let mut wr = Sge::recv_wr(wr_id, sges, "ibv_post_srq_recv")?;
        let mut bad = std::ptr::null_mut();
        // SAFETY: the SRQ is live; wr and the SGEs outlive the call (the library copies them).
        let rc = unsafe { raw::ibv_post_srq_recv(self.as_raw(), &mut wr, &mut bad) };
        if rc != 0 {
            return Err(self.post_error(rc, sges.len()));
        }
        Ok(())
    }

    #[cold]
    fn post_error(&self, rc: i32, sges: usize) -> Error {
        let hint = if sges > self.inner.max_sge as usize {
            format!(
                "the receive has {sges} SGEs, the SRQ takes {} per receive: use fewer or create it with a larger max_sge",
                self.inner.max_sge
            )
        } else if rc == libc::ENOMEM {
            format!(
                "the SRQ is full: it holds {} receives (Srq::capacity) and all are posted; post again as receives complete",
                self.inner.capacity
            )
        } else {
            "the provider refused the receive".to_string()
        };
        Error::from_errno("ibv_post_srq_recv", rc, hint).on(self.inner.pd.context().name())
    }

    /// The receives it holds at once, as the provider created it: at least what
    /// [`Pd::create_srq`] asked for, rounded up (libmlx5 holds 511 for 256, 7 for 4). Post this
    /// many receives to fill it; one more fails with ENOMEM.
    #[inline]
    pub fn capacity(&self) -> u32 {
        self.inner.capacity
    }

    /// The raw SRQ, for interop.
    #[inline]
    pub fn as_raw(&self) -> *mut raw::ibv_srq {
        self.inner.srq.as_ptr()
    }

    /// The PD it was created in.
    pub fn pd(&self) -> &Pd {
        &self.inner.pd
    }
}

impl Drop for SrqInner {
    fn drop(&mut self) {
        // SAFETY: created once, destroyed once, when the last handle (queue pairs on it hold
        // one) is gone.
        unsafe { raw::ibv_destroy_srq(self.srq.as_ptr()) };
    }
}

impl std::fmt::Debug for Srq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Srq")
            .field("device", &self.inner.pd.context().name())
            .finish_non_exhaustive()
    }
}
