//! Registered memory: buffers the adapter may read and write, described to work requests by
//! scatter/gather entries ([`Sge`]) and to peers by a [`RemoteMemory`] descriptor.
//!
//! # Whose memory
//! A region ([`Mr<B>`]) holds the memory it was registered over, of type `B`, and gives it back
//! on [`Mr::deregister`]:
//! - [`Pd::alloc_mr`]: a zeroed, page-aligned [`AlignedBuf`] the crate allocates;
//! - [`Pd::register`]: memory the application owns: a `Vec<u8>`, a `Box<[u8]>`, an
//!   [`MmapBuf`] (anonymous, huge pages, or a file's pages);
//! - [`Pd::register_borrowed`]: a borrowed `&mut [u8]`, registered for the length of a closure
//!   (a region handle bound only by a lifetime could be `mem::forget`-ed, ending the borrow
//!   while peers can still write the bytes: the closure form deregisters before it returns);
//! - [`Pd::register_raw`] (unsafe): any address and length;
//! - [`Pd::register_dmabuf`]: device memory exported as a dma-buf (GPU buffers);
//! - [`Pd::register_implicit_odp`]: the whole address space, paged on demand.
//!
//! # No references to memory the adapter may write
//! While memory is registered, the adapter (for RDMA reads, atomics and receives) and peers
//! (remote write and atomic access) may write it at any moment, and nothing in Rust's type
//! system can see them do it. So no safe method hands out `&[u8]` or `&mut [u8]` over a
//! region's bytes: [`Mr::read`] and [`Mr::write`] copy, and the unsafe
//! [`Mr::as_slice_unchecked`] states its contract. The bytes come back as ordinary Rust memory
//! when [`Mr::deregister`] returns the buffer. What the second review found (a safe slice held
//! while an RDMA read lands in it) does not compile:
//!
//! ```compile_fail,E0599
//! # fn f(pd: &mlx5dv::Pd) -> mlx5dv::Result<()> {
//! let mr = pd.alloc_mr(8, mlx5dv::Access::LOCAL_WRITE)?;
//! let v = mr.as_slice(); // error: a region's bytes are never behind a safe reference
//! // ... post an RDMA read into `mr`, poll it ...
//! let _ = v[0];
//! # Ok(()) }
//! ```
//!
//! # Lifetime of memory in flight
//! A region holds its PD (and through it the context), so it can be kept anywhere. Dropping a
//! region deregisters it first: once `ibv_dereg_mr` returns, the adapter no longer reaches the
//! memory (requests still naming its key fail with a protection error), and only then is the
//! buffer freed or handed back. A region whose deregistration fails is leaked, never freed,
//! since the adapter may still write it. [`crate::DciPool`], which may post a request again
//! after another peer's failure, holds every region it posts from ([`crate::DciPool::hold`]),
//! so its requests never name memory that is gone.

mod buffer;
mod sge;

pub use buffer::{AlignedBuf, Borrowed, BoundedBuffer, DmaBuf, ImplicitOdp, MmapBuf, RawMemory, RegionBuffer};
pub use sge::Sge;

use crate::addr::RemoteMemory;
use crate::error::{Error, Result};
use crate::pd::Pd;
use mlx5dv_raw as raw;
use std::ptr::NonNull;
use std::sync::Arc;

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
    /// Memory windows may be bound in it (`ibv_bind_mw`): each window grants peers the rights
    /// of its own over a range of the region.
    pub const MW_BIND: Access = Access(raw::IBV_ACCESS_MW_BIND);
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

    /// The rights of these `IBV_ACCESS_*` bits, as the library reports them.
    pub(crate) const fn from_bits(bits: u32) -> Access {
        Access(bits)
    }
}

impl std::ops::BitOr for Access {
    type Output = Access;
    fn bitor(self, rhs: Access) -> Access {
        self.union(rhs)
    }
}

/// A registered memory region over a buffer of type `B`, deregistered on drop (see the
/// [module](self) documentation). Holds its [`Pd`].
pub struct Mr<B = AlignedBuf> {
    region: Arc<Region<B>>,
}

/// The registration and the memory behind it: shared by the [`Mr`] handle and whatever keeps
/// the region alive while requests name it (a pool).
struct Region<B> {
    mr: NonNull<raw::ibv_mr>,
    /// Host address of the bytes (null for device memory and implicit ODP).
    host: *mut u8,
    addr: u64,
    len: usize,
    access: Access,
    /// Taken out by `deregister`; leaked if deregistration fails.
    buf: std::mem::ManuallyDrop<B>,
    pd: Pd,
}

// SAFETY: the registration is a kernel handle usable from any thread; the buffer is held, never
// reached through the region (B: Send is enough: no &B is ever handed out).
unsafe impl<B: Send> Send for Region<B> {}
// SAFETY: as above; the region's own fields are read-only after registration.
unsafe impl<B: Send> Sync for Region<B> {}

/// Something a pool keeps alive (a region, type-erased).
pub(crate) trait Held: Send + Sync {}
impl<B: Send> Held for Region<B> {}

/// A failed operation and what was handed to it, given back so nothing is lost.
///
/// It is an error like any other: `?` turns it into [`Error`], `anyhow::Error` or
/// `Box<dyn std::error::Error + Send + Sync>` (the value is dropped then). Whatever `T` is, a
/// shared reference reaches only the error: the value comes back by [`into_inner`](Self::into_inner)
/// or [`into_parts`](Self::into_parts), or through [`value_mut`](Self::value_mut), which needs
/// the error exclusively; this is what makes it `Sync` (so `?` converts it) even when `T` is
/// not, as a [`Cq`](crate::Cq) is not. So this compiles:
///
/// ```
/// fn why(returned: &mlx5dv::Returned<mlx5dv::Cq>) -> &mlx5dv::Error {
///     returned.error()
/// }
/// fn setup() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
///     # let made: Result<(), mlx5dv::Returned<mlx5dv::Cq>> = Ok(());
///     made?; // e.g. Executor::new(..)?
///     Ok(())
/// }
/// ```
///
/// and this does not:
///
/// ```compile_fail,E0616
/// fn peek(returned: &mlx5dv::Returned<mlx5dv::Cq>) -> &mlx5dv::Cq {
///     &returned.value // private: a shared reference reaches the error only
/// }
/// ```
pub struct Returned<T> {
    error: Error,
    value: T,
}

// SAFETY: through `&Returned<T>` only the `Error` can be reached (`error()`, and the Debug and
// Display impls, which read the error alone); the fields are private and every way to the `T`
// (`into_inner`, `into_parts`, `value_mut`) takes `self` or `&mut self`, which no other thread
// can hold at the same time. Sharing a `&Returned<T>` between threads therefore shares an
// `&Error`, and `Error` is `Sync` (the argument of std's `Exclusive` and of `SyncWrapper`). The
// value may still move to another thread with the whole error, hence `T: Send`.
unsafe impl<T: Send> Sync for Returned<T> {}

impl<T> Returned<T> {
    pub(crate) fn new(error: Error, value: T) -> Self {
        Returned { error, value }
    }

    /// What went wrong.
    pub fn error(&self) -> &Error {
        &self.error
    }

    /// What was handed in, unchanged (the error dropped).
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The error and what was handed in.
    pub fn into_parts(self) -> (Error, T) {
        (self.error, self.value)
    }

    /// What was handed in, to change in place before taking it back (the error is held
    /// exclusively meanwhile).
    pub fn value_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T> std::fmt::Debug for Returned<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.error, f)
    }
}

impl<T> std::fmt::Display for Returned<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.error, f)
    }
}

impl<T> std::error::Error for Returned<T> {}

impl<T> From<Returned<T>> for Error {
    fn from(e: Returned<T>) -> Error {
        e.error
    }
}

/// The verbs rule on access flags: remote write and atomic need local write.
fn check_access(op: &'static str, access: Access) -> Result<()> {
    if (access.contains(Access::REMOTE_WRITE) || access.contains(Access::REMOTE_ATOMIC))
        && !access.contains(Access::LOCAL_WRITE)
    {
        return Err(Error::invalid(
            op,
            "remote write or atomic access needs Access::LOCAL_WRITE too",
        ));
    }
    Ok(())
}

/// What every registration checks first: at least one byte, and the access rule.
fn check_region(op: &'static str, len: usize, access: Access) -> Result<()> {
    if len == 0 {
        return Err(Error::invalid(op, "a memory region needs at least one byte"));
    }
    check_access(op, access)
}

impl Pd {
    /// Allocates `len` zeroed bytes (page-aligned) and registers them with `access`.
    ///
    /// # Errors
    /// - EINVAL: `len` is 0, or remote write/atomic without [`Access::LOCAL_WRITE`] (the
    ///   verbs rule), or `len` too large to allocate;
    /// - `ibv_reg_mr` with the library's errno (ENOMEM: raise `ulimit -l` for locked memory;
    ///   EIO: the device is gone).
    pub fn alloc_mr(&self, len: usize, access: Access) -> Result<Mr> {
        check_access("ibv_reg_mr", access)?;
        Ok(self.register(AlignedBuf::new(len)?, access)?)
    }

    /// Registers memory the application owns: a `Vec<u8>`, a `Box<[u8]>`, an [`MmapBuf`];
    /// [`Mr::deregister`] gives it back.
    ///
    /// # Errors
    /// EINVAL for an empty buffer or remote write/atomic without [`Access::LOCAL_WRITE`];
    /// `ibv_reg_mr` with the library's errno (ENOMEM: raise `ulimit -l`; EIO: the device is
    /// gone). The buffer comes back with the error.
    pub fn register<B: RegionBuffer>(&self, mut buf: B, access: Access) -> std::result::Result<Mr<B>, Returned<B>> {
        let (ptr, len) = buf.region();
        if let Err(error) = check_region("ibv_reg_mr", len, access) {
            return Err(Returned::new(error, buf));
        }
        // SAFETY: the PD is live; the buffer's contract keeps ptr..ptr+len valid and in place
        // for as long as the region holds it.
        let mr = unsafe { raw::ibv_reg_mr(self.as_raw(), ptr.cast(), len, access.bits() as libc::c_int) };
        match NonNull::new(mr) {
            Some(mr) => Ok(self.region(mr, ptr, ptr as u64, len, access, buf)),
            None => Err(Returned::new(reg_mr_error(access).on(self.context().name()), buf)),
        }
    }

    /// Registers the borrowed `buf` for the length of `f`, which gets the region (to make
    /// scatter/gather entries and the remote descriptor, and to read); the region is
    /// deregistered before this returns, so the bytes are ordinary Rust memory again. Post
    /// nothing through `f` that is still in flight when it returns: such requests fail with a
    /// protection error once the region is gone.
    ///
    /// # Errors
    /// As [`Pd::register`] (then `f` is not called).
    ///
    /// # Panics
    /// Only where `f` panics (the panic goes on once the region is deregistered). If
    /// deregistration fails at the end, after `f` returned or while its panic unwinds (a memory
    /// window still bound to the region), the process aborts: the adapter and peers could
    /// still write bytes whose borrow is ending, and no safe program may see that.
    pub fn register_borrowed<R>(
        &self,
        buf: &mut [u8],
        access: Access,
        f: impl FnOnce(&Mr<Borrowed<'_>>) -> R,
    ) -> Result<R> {
        let guard = DeregisterOrAbort(std::mem::ManuallyDrop::new(self.register(Borrowed::new(buf), access)?));
        // The guard deregisters when `f` returns and when it unwinds alike.
        Ok(f(&guard.0))
    }

    /// Registers `len` bytes at `ptr` that the region does not own.
    ///
    /// # Errors
    /// As [`Pd::register`].
    ///
    /// # Safety
    /// As [`RawMemory::new`]: the memory stays valid until the region is deregistered, and no
    /// Rust reference reaches it meanwhile.
    pub unsafe fn register_raw(&self, ptr: *mut u8, len: usize, access: Access) -> Result<Mr<RawMemory>> {
        // SAFETY: forwarded from the caller.
        Ok(self.register(unsafe { RawMemory::new(ptr, len) }, access)?)
    }

    /// Registers device memory exported as a dma-buf (`ibv_reg_dmabuf_mr`, rdma-core 34+,
    /// kernel 5.12+), e.g. a GPU buffer; the descriptor comes back on deregistration.
    ///
    /// # Errors
    /// EINVAL for an empty range or remote write/atomic without local write; EOPNOTSUPP when
    /// the device or kernel does not register dma-bufs (checked at run time: the call is
    /// made, and its answer reported); the library's errno otherwise. The dma-buf comes back
    /// with the error.
    pub fn register_dmabuf(&self, buf: DmaBuf, access: Access) -> std::result::Result<Mr<DmaBuf>, Returned<DmaBuf>> {
        let (fd, offset, len, iova) = buf.parts();
        if let Err(error) = check_region("ibv_reg_dmabuf_mr", len, access) {
            return Err(Returned::new(error, buf));
        }
        // SAFETY: the PD is live; the descriptor is owned by buf, which the region holds.
        let mr = unsafe { raw::ibv_reg_dmabuf_mr(self.as_raw(), offset, len, iova, fd, access.bits() as libc::c_int) };
        match NonNull::new(mr) {
            Some(mr) => Ok(self.region(mr, std::ptr::null_mut(), iova, len, access, buf)),
            None => Err(Returned::new(Error::last_os_error(
                    "ibv_reg_dmabuf_mr",
                    "the device, driver or kernel (5.12+) may not register dma-bufs; check the exporter's offset and length",
                )
                .on(self.context().name()), buf)),
        }
    }

    /// Registers the whole address space with implicit on-demand paging (`ibv_reg_mr` of
    /// `NULL`, `SIZE_MAX`): one local key for any memory, pages faulted in by the adapter.
    /// Local access only: a remote key over every address of the process is not offered.
    ///
    /// # Errors
    /// EINVAL for remote access rights; EOPNOTSUPP when the device lacks implicit ODP
    /// (`IBV_ODP_SUPPORT_IMPLICIT`); `ibv_reg_mr`'s errno otherwise.
    pub fn register_implicit_odp(&self, access: Access) -> Result<Mr<ImplicitOdp>> {
        const OP: &str = "ibv_reg_mr (implicit ODP)";
        if access.is_remote() {
            return Err(Error::invalid(OP, "implicit ODP is registered for local access only"));
        }
        let ctx = self.context();
        if !ctx.has_implicit_odp()? {
            return Err(Error::from_errno(
                OP,
                libc::EOPNOTSUPP,
                "the device does not offer implicit on-demand paging (IBV_ODP_SUPPORT_IMPLICIT): register buffers explicitly",
            )
            .on(ctx.name()));
        }
        let access = access | Access::ON_DEMAND;
        // SAFETY: the PD is live; NULL/SIZE_MAX is the documented implicit-ODP form.
        let mr = unsafe {
            raw::ibv_reg_mr(
                self.as_raw(),
                std::ptr::null_mut(),
                usize::MAX,
                access.bits() as libc::c_int,
            )
        };
        match NonNull::new(mr) {
            Some(mr) => Ok(self.region(mr, std::ptr::null_mut(), 0, usize::MAX, access, ImplicitOdp::new())),
            None => Err(Error::last_os_error(OP, "the device refused implicit on-demand paging").on(ctx.name())),
        }
    }

    fn region<B>(
        &self,
        mr: NonNull<raw::ibv_mr>,
        host: *mut u8,
        addr: u64,
        len: usize,
        access: Access,
        buf: B,
    ) -> Mr<B> {
        Mr {
            region: Arc::new(Region {
                mr,
                host,
                addr,
                len,
                access,
                buf: std::mem::ManuallyDrop::new(buf),
                pd: self.clone(),
            }),
        }
    }
}

impl<B> Mr<B> {
    #[inline]
    fn raw(&self) -> &raw::ibv_mr {
        // SAFETY: registered and live until the region is dropped.
        unsafe { self.region.mr.as_ref() }
    }

    /// Length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.region.len
    }

    /// Always false: regions have at least one byte.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Local key.
    #[inline]
    pub fn lkey(&self) -> u32 {
        self.raw().lkey
    }

    /// The access rights it was registered with.
    pub fn access(&self) -> Access {
        self.region.access
    }

    /// Start address as work requests name it (the host address; a dma-buf's I/O virtual
    /// address).
    #[inline]
    pub fn addr(&self) -> u64 {
        self.region.addr
    }

    /// The PD it was registered in.
    pub fn pd(&self) -> &Pd {
        &self.region.pd
    }

    /// What a peer needs to reach this region (address, length, rkey), if it allows remote
    /// access at all.
    pub fn remote(&self) -> Option<RemoteMemory> {
        self.region.access.is_remote().then(|| RemoteMemory {
            addr: self.addr(),
            len: self.len() as u64,
            rkey: self.raw().rkey,
        })
    }

    /// The raw MR, for interop.
    pub fn as_raw(&self) -> *mut raw::ibv_mr {
        self.region.mr.as_ptr()
    }

    /// Host address of the region's first byte (null for a dma-buf or implicit ODP).
    pub(crate) fn host_ptr(&self) -> *mut u8 {
        self.region.host
    }

    /// Deregisters the region and gives the memory back.
    ///
    /// # Errors
    /// EBUSY while something else keeps the region alive (a [`crate::DciPool`] that holds it:
    /// drop the pool first); `ibv_dereg_mr` with its errno (EBUSY: memory windows are still
    /// bound to it). The region comes back with the error, still registered.
    pub fn deregister(self) -> std::result::Result<B, Returned<Mr<B>>> {
        let region = match Arc::try_unwrap(self.region) {
            Ok(region) => region,
            Err(region) => {
                return Err(Returned::new(
                    Error::from_errno(
                        "ibv_dereg_mr",
                        libc::EBUSY,
                        "a pool still holds this region for requests it may post: drop the pool first",
                    ),
                    Mr { region },
                ))
            }
        };
        // The region's Drop (which deregisters) must not run once this call has.
        let mut region = std::mem::ManuallyDrop::new(region);
        // SAFETY: registered once; on success nothing uses the registration again.
        let rc = unsafe { raw::ibv_dereg_mr(region.mr.as_ptr()) };
        if rc != 0 {
            let error = Error::from_errno(
                "ibv_dereg_mr",
                rc,
                "the region is still registered (memory windows bound to it?) and comes back with this error",
            )
            .on(region.pd.context().name());
            return Err(Returned::new(
                error,
                Mr {
                    region: Arc::new(std::mem::ManuallyDrop::into_inner(region)),
                },
            ));
        }
        // SAFETY: each field that owns something is moved or dropped exactly once, and the
        // region itself is never dropped (ManuallyDrop); the adapter no longer reaches buf.
        unsafe {
            std::ptr::drop_in_place(&mut region.pd);
            Ok(std::mem::ManuallyDrop::take(&mut region.buf))
        }
    }

    /// A keep-alive handle on the region, for a pool that may post from it later.
    pub(crate) fn hold(&self) -> Arc<dyn Held>
    where
        B: Send + 'static,
    {
        self.region.clone()
    }

    /// A scatter/gather entry for `len` bytes at `offset`.
    fn sge_in(&self, offset: usize, len: usize) -> Result<Sge<'_>> {
        match offset.checked_add(len) {
            Some(end) if len > 0 && end <= self.len() && len <= u32::MAX as usize => {
                // SAFETY: the range lies inside this live registration, and the entry borrows
                // the region.
                Ok(unsafe {
                    Sge::from_raw(raw::ibv_sge {
                        addr: self.addr() + offset as u64,
                        length: len as u32,
                        lkey: self.lkey(),
                    })
                })
            }
            _ => Err(Error::invalid(
                "scatter/gather entry",
                format!(
                    "{len} bytes at offset {offset} is not a non-empty range of this {}-byte region",
                    self.len()
                ),
            )),
        }
    }
}
impl<B: RegionBuffer> Mr<B> {
    /// A scatter/gather entry for `len` bytes at `offset`.
    ///
    /// # Errors
    /// EINVAL when the range is empty, does not fit in the region, or is longer than 4 GiB - 1.
    #[inline]
    pub fn sge(&self, offset: usize, len: usize) -> Result<Sge<'_>> {
        self.sge_in(offset, len)
    }

    /// Copies bytes out of the region. The adapter or a peer may be writing them meanwhile:
    /// each byte read is some version of it.
    ///
    /// # Errors
    /// EINVAL when the range does not fit.
    pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        self.check(offset, dst.len(), "Mr::read")?;
        // SAFETY: in bounds (checked) of host memory the region holds; no Rust reference to it
        // exists (none is ever handed out), so a raw copy races only with the adapter's DMA.
        unsafe { std::ptr::copy_nonoverlapping(self.region.host.add(offset), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Copies bytes into the region (for instance a send buffer between posts; a pool that
    /// holds the region does not stop this).
    ///
    /// # Errors
    /// EINVAL when the range does not fit.
    pub fn write(&mut self, offset: usize, src: &[u8]) -> Result<()> {
        self.check(offset, src.len(), "Mr::write")?;
        // SAFETY: in bounds (checked); &mut self excludes every other copy through this
        // handle, and no Rust reference to the bytes exists.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.region.host.add(offset), src.len()) };
        Ok(())
    }

    /// The whole region as a slice.
    ///
    /// # Safety
    /// Nothing may write the region while the slice is alive: no posted RDMA read, atomic or
    /// receive into it, and no peer with remote write or atomic access to it.
    pub unsafe fn as_slice_unchecked(&self) -> &[u8] {
        // SAFETY: the buffer is valid for len bytes; the caller upholds the no-writer contract.
        unsafe { std::slice::from_raw_parts(self.region.host, self.len()) }
    }

    /// The host address of `len` bytes at `offset`, checked to lie inside the region (EINVAL,
    /// naming `op`, otherwise). Never dereferenced here; the bytes stay allocated while the
    /// region is borrowed.
    pub(crate) fn host_range(&self, offset: usize, len: usize, op: &'static str) -> Result<*const u8> {
        self.check(offset, len, op)?;
        // SAFETY: offset <= len of the allocation the region holds (checked above).
        Ok(unsafe { self.region.host.add(offset) }.cast_const())
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
}

impl Mr<DmaBuf> {
    /// The dma-buf it was registered over.
    pub(crate) fn dmabuf(&self) -> &DmaBuf {
        &self.region.buf
    }

    /// A scatter/gather entry for `len` bytes at `offset` of the dma-buf range.
    ///
    /// # Errors
    /// As [`Mr::sge`].
    #[inline]
    pub fn sge(&self, offset: usize, len: usize) -> Result<Sge<'_>> {
        self.sge_in(offset, len)
    }
}

/// The error of a failed `ibv_reg_mr` (errno read first), with what it means here.
fn reg_mr_error(access: Access) -> Error {
    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    // ib_umem_get pins with FOLL_WRITE for a writable region (remote write and atomics imply
    // local write).
    let hint = if errno == libc::EFAULT && access.contains(Access::LOCAL_WRITE) {
        "the kernel would not pin the pages for writing: Linux 6.5+ refuses a writable registration of a MAP_SHARED mapping of a file on a page-cache filesystem such as ext4 or xfs (mm/gup.c, writable_file_mapping_allowed); map a file on tmpfs or hugetlbfs, use anonymous memory, or register the file without write access"
    } else if errno == libc::EFAULT {
        "the kernel could not pin the pages: is every byte of the buffer mapped?"
    } else {
        "registration failed: raise the locked-memory limit (ulimit -l) or register less"
    };
    // EIO says the device is gone instead: no limit to raise.
    Error::command("ibv_reg_mr", errno, hint)
}

/// [`Pd::register_borrowed`]'s region: deregistered when the call ends, normally or by a
/// panic of its closure, or the process aborts.
struct DeregisterOrAbort<'a>(std::mem::ManuallyDrop<Mr<Borrowed<'a>>>);

impl Drop for DeregisterOrAbort<'_> {
    fn drop(&mut self) {
        // SAFETY: taken once, here; the guard is not used after its drop.
        let mr = unsafe { std::mem::ManuallyDrop::take(&mut self.0) };
        // Only the closure saw the region, through a shared reference: no other handle exists
        // (a Borrowed region cannot be held by a pool), so deregistration is the guard's.
        if let Err(e) = mr.deregister() {
            eprintln!(
                "mlx5dv: {}; aborting: a borrowed buffer would stay writable by the adapter",
                e.error()
            );
            std::process::abort();
        }
    }
}

impl<B> Drop for Region<B> {
    fn drop(&mut self) {
        // SAFETY: registered once and deregistered once (deregister() never lets this run).
        let rc = unsafe { raw::ibv_dereg_mr(self.mr.as_ptr()) };
        if rc == 0 {
            // SAFETY: dropped once; the adapter no longer reaches the memory.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.buf) };
        }
        // Otherwise the buffer is leaked: the adapter or a peer may still write it.
    }
}

impl<B> std::fmt::Debug for Mr<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mr")
            .field("addr", &format_args!("{:#x}", self.addr()))
            .field("len", &self.len())
            .field("lkey", &self.lkey())
            .field("access", &self.region.access)
            .finish()
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
