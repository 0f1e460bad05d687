//! Registered memory: buffers the adapter may read and write, described to work requests by
//! scatter/gather entries ([`Sge`]) and to peers by a [`RemoteMemory`] descriptor.
//!
//! Least privilege: a region is local-only unless remote access is asked for. Memory the
//! remote side may write (remote write or atomic access) is never handed out as `&[u8]` by a
//! safe method: the peer can change it at any time. Use [`Mr::read`] to copy it out, or the
//! unsafe [`Mr::as_slice_unchecked`] with its contract.

use crate::addr::RemoteMemory;
use crate::error::{Error, Result};
use crate::pd::Pd;
use mlx5dv_raw as raw;
use std::alloc::{self, Layout};
use std::marker::PhantomData;
use std::ptr::NonNull;

/// Access rights of a memory region (`IBV_ACCESS_*`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Access(u32);

impl Access {
    /// The adapter may write it locally (receives, RDMA read targets, atomic results).
    pub const LOCAL_WRITE: Access = Access(raw::IBV_ACCESS_LOCAL_WRITE);
    /// Peers may RDMA-write it (needs LOCAL_WRITE).
    pub const REMOTE_WRITE: Access = Access(raw::IBV_ACCESS_REMOTE_WRITE);
    /// Peers may RDMA-read it.
    pub const REMOTE_READ: Access = Access(raw::IBV_ACCESS_REMOTE_READ);
    /// Peers may run atomics on it (needs LOCAL_WRITE).
    pub const REMOTE_ATOMIC: Access = Access(raw::IBV_ACCESS_REMOTE_ATOMIC);
    /// On-demand paging: pages are faulted in by the adapter (needs the device's ODP caps;
    /// for DC, `Mlx5Caps::dc_odp_caps`).
    pub const ON_DEMAND: Access = Access(raw::IBV_ACCESS_ON_DEMAND);

    /// No access beyond local reads by the adapter (sends from it).
    pub const fn none() -> Access {
        Access(0)
    }

    /// Both sets of rights.
    pub const fn union(self, other: Access) -> Access {
        Access(self.0 | other.0)
    }

    /// Whether every right in `other` is in `self`.
    pub const fn contains(self, other: Access) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether peers can reach this memory at all.
    pub const fn is_remote(self) -> bool {
        self.0 & (raw::IBV_ACCESS_REMOTE_WRITE | raw::IBV_ACCESS_REMOTE_READ | raw::IBV_ACCESS_REMOTE_ATOMIC) != 0
    }

    /// Whether peers can change this memory.
    pub const fn is_remotely_writable(self) -> bool {
        self.0 & (raw::IBV_ACCESS_REMOTE_WRITE | raw::IBV_ACCESS_REMOTE_ATOMIC) != 0
    }

    /// The `IBV_ACCESS_*` bits.
    pub const fn bits(self) -> u32 {
        self.0
    }
}

impl std::ops::BitOr for Access {
    type Output = Access;
    fn bitor(self, rhs: Access) -> Access {
        self.union(rhs)
    }
}

/// A registered, zero-initialised, page-aligned buffer owned by the region; deregistered and
/// freed on drop. Borrows its [`Pd`].
pub struct Mr<'pd> {
    mr: NonNull<raw::ibv_mr>,
    buf: NonNull<u8>,
    layout: Layout,
    access: Access,
    _pd: PhantomData<&'pd Pd<'pd>>,
}

// SAFETY: the registration is a kernel handle usable from any thread; the buffer is owned and
// only exposed through &self reads that copy (or unsafe contracts) and &mut self writes.
unsafe impl Send for Mr<'_> {}
// SAFETY: as above.
unsafe impl Sync for Mr<'_> {}

const PAGE: usize = 4096;

impl<'ctx> Pd<'ctx> {
    /// Allocates `len` zeroed bytes (page-aligned) and registers them with `access`.
    ///
    /// # Errors
    /// - EINVAL: `len` is 0, or remote write/atomic without [`Access::LOCAL_WRITE`] (the
    ///   verbs rule), or `len` too large to allocate;
    /// - `ibv_reg_mr` with the library's errno (ENOMEM: raise `ulimit -l` for locked memory).
    pub fn alloc_mr(&self, len: usize, access: Access) -> Result<Mr<'_>> {
        if len == 0 {
            return Err(Error::invalid("ibv_reg_mr", "a memory region needs at least one byte"));
        }
        if (access.contains(Access::REMOTE_WRITE) || access.contains(Access::REMOTE_ATOMIC))
            && !access.contains(Access::LOCAL_WRITE)
        {
            return Err(Error::invalid(
                "ibv_reg_mr",
                "remote write or atomic access needs Access::LOCAL_WRITE too",
            ));
        }
        let layout = Layout::from_size_align(len.div_ceil(PAGE) * PAGE, PAGE)
            .map_err(|_| Error::invalid("ibv_reg_mr", format!("{len} bytes is too large for one region")))?;
        // SAFETY: layout has a non-zero size.
        let buf = NonNull::new(unsafe { alloc::alloc_zeroed(layout) })
            .ok_or_else(|| Error::from_errno("ibv_reg_mr", libc::ENOMEM, format!("cannot allocate {len} bytes")))?;
        // SAFETY: the PD is live; buf is valid for len bytes and outlives the registration.
        let mr = unsafe { raw::ibv_reg_mr(self.as_raw(), buf.as_ptr().cast(), len, access.bits() as libc::c_int) };
        match NonNull::new(mr) {
            Some(mr) => Ok(Mr {
                mr,
                buf,
                layout,
                access,
                _pd: PhantomData,
            }),
            None => {
                let err = Error::last_os_error(
                    "ibv_reg_mr",
                    "registration failed: raise the locked-memory limit (ulimit -l) or register less",
                )
                .on(self.context().name());
                // SAFETY: allocated above with this layout, never registered.
                unsafe { alloc::dealloc(buf.as_ptr(), layout) };
                Err(err)
            }
        }
    }
}

impl Mr<'_> {
    fn raw(&self) -> &raw::ibv_mr {
        // SAFETY: registered and live until drop.
        unsafe { self.mr.as_ref() }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.raw().length
    }

    /// Always false: regions have at least one byte.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Local key.
    pub fn lkey(&self) -> u32 {
        self.raw().lkey
    }

    /// The access rights it was registered with.
    pub fn access(&self) -> Access {
        self.access
    }

    /// Start address.
    pub fn addr(&self) -> u64 {
        self.buf.as_ptr() as u64
    }

    /// What a peer needs to reach this region (address, length, rkey), if it allows remote
    /// access at all.
    pub fn remote(&self) -> Option<RemoteMemory> {
        self.access.is_remote().then(|| RemoteMemory {
            addr: self.addr(),
            len: self.len() as u64,
            rkey: self.raw().rkey,
        })
    }

    /// A scatter/gather entry for `len` bytes at `offset`.
    ///
    /// # Errors
    /// EINVAL when the range is empty, does not fit in the region, or is longer than 4 GiB - 1.
    #[inline]
    pub fn sge(&self, offset: usize, len: usize) -> Result<Sge<'_>> {
        match offset.checked_add(len) {
            Some(end) if len > 0 && end <= self.len() && len <= u32::MAX as usize => Ok(Sge {
                sge: raw::ibv_sge {
                    addr: self.addr() + offset as u64,
                    length: len as u32,
                    lkey: self.lkey(),
                },
                _mr: PhantomData,
            }),
            _ => Err(Error::invalid(
                "scatter/gather entry",
                format!(
                    "{len} bytes at offset {offset} is not a non-empty range of this {}-byte region",
                    self.len()
                ),
            )),
        }
    }

    /// Copies bytes out of the region.
    ///
    /// # Errors
    /// EINVAL when the range does not fit.
    pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        self.check(offset, dst.len(), "Mr::read")?;
        // SAFETY: in bounds (checked); the peer or adapter may write concurrently, which a byte
        // copy out of DMA memory tolerates (the caller sees some version of each byte).
        unsafe { std::ptr::copy_nonoverlapping(self.buf.as_ptr().add(offset), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Copies bytes into the region.
    ///
    /// # Errors
    /// EINVAL when the range does not fit.
    pub fn write(&mut self, offset: usize, src: &[u8]) -> Result<()> {
        self.check(offset, src.len(), "Mr::write")?;
        // SAFETY: in bounds (checked); &mut self means no local borrow is live.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.buf.as_ptr().add(offset), src.len()) };
        Ok(())
    }

    /// The whole region as a slice, when no peer can write it (no remote write or atomic).
    pub fn as_slice(&self) -> Option<&[u8]> {
        // SAFETY: no remote writer exists; local writes by the adapter only follow posts the
        // caller makes, and the slice is tied to &self.
        (!self.access.is_remotely_writable()).then(|| unsafe { self.as_slice_unchecked() })
    }

    /// The whole region as a mutable slice, when no peer can write it.
    pub fn as_mut_slice(&mut self) -> Option<&mut [u8]> {
        if self.access.is_remotely_writable() {
            return None;
        }
        // SAFETY: as in as_slice; &mut self excludes other local borrows.
        Some(unsafe { std::slice::from_raw_parts_mut(self.buf.as_ptr(), self.len()) })
    }

    /// The whole region as a slice, whatever its access rights.
    ///
    /// # Safety
    /// No peer (and no posted work request of this process) may write the region while the
    /// slice is alive: remote writes would change memory behind a shared reference.
    pub unsafe fn as_slice_unchecked(&self) -> &[u8] {
        // SAFETY: the buffer is valid for len bytes; the caller upholds the no-writer contract.
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr(), self.len()) }
    }

    fn check(&self, offset: usize, len: usize, op: &'static str) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len() => Ok(()),
            _ => Err(Error::invalid(
                op,
                format!("{len} bytes at offset {offset} exceed the {}-byte region", self.len()),
            )),
        }
    }

    /// The raw MR, for interop.
    pub fn as_raw(&self) -> *mut raw::ibv_mr {
        self.mr.as_ptr()
    }
}

impl Drop for Mr<'_> {
    fn drop(&mut self) {
        // SAFETY: registered once and deregistered once; the buffer is freed only after.
        unsafe {
            raw::ibv_dereg_mr(self.mr.as_ptr());
            alloc::dealloc(self.buf.as_ptr(), self.layout);
        }
    }
}

impl std::fmt::Debug for Mr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mr")
            .field("addr", &format_args!("{:#x}", self.addr()))
            .field("len", &self.len())
            .field("lkey", &self.lkey())
            .field("access", &self.access)
            .finish()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_is_least_privilege_by_default() {
        assert_eq!(Access::default(), Access::none());
        assert!(!Access::default().is_remote());
        assert!(Access::REMOTE_READ.is_remote() && !Access::REMOTE_READ.is_remotely_writable());
        assert!((Access::LOCAL_WRITE | Access::REMOTE_WRITE).is_remotely_writable());
        assert!((Access::LOCAL_WRITE | Access::REMOTE_ATOMIC).contains(Access::REMOTE_ATOMIC));
    }
}
