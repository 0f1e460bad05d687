//! Protection domains: the scope that memory regions, address handles, SRQs and queue pairs
//! share. Every object made from a [`Pd`] holds a handle to it, so the PD is freed only after
//! the last of them.

use crate::context::Context;
use crate::error::{Error, Result};
use mlx5dv_raw as raw;
use std::ptr::NonNull;
use std::sync::Arc;

/// A protection domain. A cheap handle: clones share one PD, freed when the last handle (every
/// object made from it holds one) is dropped.
#[derive(Clone)]
pub struct Pd {
    inner: Arc<PdInner>,
}

struct PdInner {
    pd: NonNull<raw::ibv_pd>,
    ctx: Context,
}

// SAFETY: a PD is an immutable kernel handle; libibverbs allows using it from any thread.
unsafe impl Send for PdInner {}
// SAFETY: as above; every method takes &self and calls thread-safe verbs.
unsafe impl Sync for PdInner {}

impl Context {
    /// Allocates a protection domain.
    ///
    /// # Errors
    /// `ibv_alloc_pd` with the library's errno (ENOMEM when the device is out of PDs).
    pub fn alloc_pd(&self) -> Result<Pd> {
        // SAFETY: the context is open.
        let pd = unsafe { raw::ibv_alloc_pd(self.as_raw()) };
        NonNull::new(pd)
            .map(|pd| Pd {
                inner: Arc::new(PdInner { pd, ctx: self.clone() }),
            })
            .ok_or_else(|| {
                Error::last_os_error("ibv_alloc_pd", "the device is out of protection domains or memory")
                    .on(self.name())
            })
    }
}

impl Pd {
    /// The context this PD belongs to.
    pub fn context(&self) -> &Context {
        &self.inner.ctx
    }

    /// The raw PD, for interop.
    #[inline]
    pub fn as_raw(&self) -> *mut raw::ibv_pd {
        self.inner.pd.as_ptr()
    }
}

impl Drop for PdInner {
    fn drop(&mut self) {
        // SAFETY: allocated by ibv_alloc_pd and freed once, when the last handle is gone (every
        // child holds one, so none is left).
        unsafe { raw::ibv_dealloc_pd(self.pd.as_ptr()) };
    }
}

impl std::fmt::Debug for Pd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pd")
            .field("device", &self.inner.ctx.name())
            .finish_non_exhaustive()
    }
}
