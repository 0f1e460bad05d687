//! Scatter/gather entries: bounds-checked pieces of registered memory for work requests.

use crate::error::{Error, Result};
use mlx5dv_raw as raw;
use std::marker::PhantomData;

/// A bounds-checked scatter/gather entry into a registered region; layout-identical to
/// `struct ibv_sge`, so a slice of them is passed to the library as is.
#[repr(transparent)]
#[derive(Copy, Clone, Debug)]
pub struct Sge<'mr> {
    sge: raw::ibv_sge,
    _mr: PhantomData<&'mr ()>,
}

impl Sge<'_> {
    /// An entry for memory registered elsewhere.
    ///
    /// # Safety
    /// `lkey` must be the local key of a live registration that covers `addr .. addr + length`
    /// for as long as any work request using the entry may run.
    pub unsafe fn from_raw(sge: raw::ibv_sge) -> Sge<'static> {
        Sge { sge, _mr: PhantomData }
    }

    /// The entry as the library takes it.
    #[inline]
    pub(crate) fn raw(&self) -> raw::ibv_sge {
        self.sge
    }

    /// Start address.
    pub fn addr(&self) -> u64 {
        self.sge.addr
    }

    /// Length in bytes.
    pub fn len(&self) -> u32 {
        self.sge.length
    }

    /// Always false: an Sge covers at least one byte.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Local key.
    pub fn lkey(&self) -> u32 {
        self.sge.lkey
    }

    /// A one-entry receive work request over `sges` (shared by QP and SRQ receives).
    ///
    /// # Errors
    /// EINVAL for an empty list (`op` names the verb that would have been called).
    #[inline]
    pub(crate) fn recv_wr(wr_id: u64, sges: &[Sge<'_>], op: &'static str) -> Result<raw::ibv_recv_wr> {
        if sges.is_empty() {
            return Err(Error::invalid(op, "a receive needs at least one buffer"));
        }
        let list = Sge::as_raw_slice(sges);
        Ok(raw::ibv_recv_wr {
            wr_id,
            next: std::ptr::null_mut(),
            sg_list: list.as_ptr().cast_mut(),
            num_sge: list.len() as libc::c_int,
        })
    }

    pub(crate) fn as_raw_slice<'a>(sges: &'a [Sge<'_>]) -> &'a [raw::ibv_sge] {
        // SAFETY: Sge is repr(transparent) over ibv_sge.
        unsafe { std::slice::from_raw_parts(sges.as_ptr().cast(), sges.len()) }
    }
}
