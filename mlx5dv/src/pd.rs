//! Protection domains: the scope that memory regions, address handles, SRQs and queue pairs
//! share. Every object made from a [`Pd`] borrows it, so none can outlive it.

use crate::context::Context;
use crate::error::{Error, Result};
use mlx5dv_raw as raw;
use std::ptr::NonNull;

/// A protection domain, freed on drop.
pub struct Pd<'ctx> {
    pd: NonNull<raw::ibv_pd>,
    ctx: &'ctx Context,
}

// SAFETY: a PD is an immutable kernel handle; libibverbs allows using it from any thread.
unsafe impl Send for Pd<'_> {}
// SAFETY: as above; every method takes &self and calls thread-safe verbs.
unsafe impl Sync for Pd<'_> {}

impl Context {
    /// Allocates a protection domain.
    ///
    /// # Errors
    /// `ibv_alloc_pd` with the library's errno (ENOMEM when the device is out of PDs).
    pub fn alloc_pd(&self) -> Result<Pd<'_>> {
        // SAFETY: the context is open.
        let pd = unsafe { raw::ibv_alloc_pd(self.as_raw()) };
        NonNull::new(pd).map(|pd| Pd { pd, ctx: self }).ok_or_else(|| {
            Error::last_os_error("ibv_alloc_pd", "the device is out of protection domains or memory").on(self.name())
        })
    }
}

impl<'ctx> Pd<'ctx> {
    /// The context this PD belongs to.
    pub fn context(&self) -> &'ctx Context {
        self.ctx
    }

    /// The raw PD, for interop.
    pub fn as_raw(&self) -> *mut raw::ibv_pd {
        self.pd.as_ptr()
    }
}

impl Drop for Pd<'_> {
    fn drop(&mut self) {
        // SAFETY: allocated by ibv_alloc_pd and freed once; children borrow self, so they are gone.
        unsafe { raw::ibv_dealloc_pd(self.pd.as_ptr()) };
    }
}

impl std::fmt::Debug for Pd<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pd")
            .field("device", &self.ctx.name())
            .finish_non_exhaustive()
    }
}
