//! The memory behind a region: what the application hands in to be registered, and gets back
//! when the region is deregistered.

use crate::error::{Error, Result};
use std::alloc::{self, Layout};
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

/// Memory that can be registered: a stable range of host memory owned (or exclusively
/// borrowed) by the value.
///
/// # Safety
/// `region` must return a range of readable and writable memory that stays valid, at the same
/// address, for as long as the value lives, and that nothing reaches through the value while
/// it is registered (the region holds the value without using it; moving the value must not
/// move the memory, as moving a `Vec` does not move its heap buffer). A region can be leaked
/// (`mem::forget`), and then stays registered forever: the memory must then stay valid and
/// unreached forever too. So a type that borrows memory for a lifetime must not implement this
/// trait (the crate's own [`Borrowed`] does, but no value of it can be made outside
/// [`crate::Pd::register_borrowed`], which never lets the region escape).
pub unsafe trait RegionBuffer: Send {
    /// Start and length of the memory (called once, when the region is registered).
    fn region(&mut self) -> (*mut u8, usize);
}

// SAFETY: a Vec's heap buffer does not move when the Vec does, and the region holds the Vec
// without touching it.
unsafe impl RegionBuffer for Vec<u8> {
    fn region(&mut self) -> (*mut u8, usize) {
        (self.as_mut_ptr(), self.len())
    }
}

// SAFETY: as for Vec.
unsafe impl RegionBuffer for Box<[u8]> {
    fn region(&mut self) -> (*mut u8, usize) {
        (self.as_mut_ptr(), self.len())
    }
}

const PAGE: usize = 4096;

/// A zeroed, page-aligned heap buffer (what [`crate::Pd::alloc_mr`] registers).
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
    len: usize,
}

// SAFETY: the buffer is owned; access goes through &self / &mut self.
unsafe impl Send for AlignedBuf {}
// SAFETY: as above.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// `len` zeroed bytes, page-aligned.
    ///
    /// # Errors
    /// EINVAL for 0 bytes or a size too large for one allocation; ENOMEM when the allocator
    /// has none.
    pub fn new(len: usize) -> Result<AlignedBuf> {
        if len == 0 {
            return Err(Error::invalid("AlignedBuf::new", "a buffer needs at least one byte"));
        }
        let layout = Layout::from_size_align(len.div_ceil(PAGE) * PAGE, PAGE)
            .map_err(|_| Error::invalid("AlignedBuf::new", format!("{len} bytes is too large for one buffer")))?;
        // SAFETY: layout has a non-zero size.
        let ptr = NonNull::new(unsafe { alloc::alloc_zeroed(layout) }).ok_or_else(|| {
            Error::from_errno("AlignedBuf::new", libc::ENOMEM, format!("cannot allocate {len} bytes"))
        })?;
        Ok(AlignedBuf { ptr, layout, len })
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: owned, initialised (zeroed) and valid for len bytes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above; &mut self is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

// SAFETY: the allocation never moves and is freed only on drop.
unsafe impl RegionBuffer for AlignedBuf {
    fn region(&mut self) -> (*mut u8, usize) {
        (self.ptr.as_ptr(), self.len)
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new with this layout, freed once.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuf").field("len", &self.len).finish()
    }
}

/// A memory mapping owned by the value, unmapped on drop: anonymous memory, huge pages, or a
/// file's pages (shared with every other mapping of the file).
pub struct MmapBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is owned; access goes through &self / &mut self.
unsafe impl Send for MmapBuf {}
// SAFETY: as above.
unsafe impl Sync for MmapBuf {}

impl MmapBuf {
    /// `len` bytes of private anonymous memory (zeroed).
    ///
    /// # Errors
    /// EINVAL for 0 bytes; `mmap`'s errno (ENOMEM).
    pub fn anonymous(len: usize) -> Result<MmapBuf> {
        Self::map(len, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0, "mmap (anonymous)")
    }

    /// `len` bytes of private anonymous memory in huge pages (`MAP_HUGETLB`, the system's
    /// default huge page size; `len` is rounded up to it by the kernel).
    ///
    /// # Errors
    /// EINVAL for 0 bytes; ENOMEM when no huge pages are reserved
    /// (`/proc/sys/vm/nr_hugepages`).
    pub fn huge_pages(len: usize) -> Result<MmapBuf> {
        Self::map(
            len,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB,
            -1,
            0,
            "mmap (MAP_HUGETLB)",
        )
    }

    /// `len` bytes of `file` from `offset` (a multiple of the page size), shared: writes reach
    /// the file.
    ///
    /// Registering it writable ([`Access::LOCAL_WRITE`](crate::Access::LOCAL_WRITE), which
    /// remote write and atomics need) pins its pages for writing, which Linux 6.5+ refuses for
    /// files on page-cache filesystems such as ext4 or xfs (`ibv_reg_mr` fails with EFAULT):
    /// there, map a file on tmpfs (`/dev/shm`) or hugetlbfs, or register it read-only.
    ///
    /// # Safety
    /// The file's pages are shared with every other mapping of the file, in this process and
    /// others, and with writes through the file itself: [`MmapBuf::as_slice`] and
    /// [`MmapBuf::as_mut_slice`] hand out references that must not see bytes change under them.
    /// So, while this mapping lives, nobody else may modify the mapped range: no other mapping
    /// writes it, no process writes or truncates the file (as `memmap2::MmapMut::map_mut`
    /// asks). Bytes the adapter writes while the region is registered are not affected: a
    /// registered `MmapBuf` hands out no slice ([`crate::Mr::read`] copies).
    ///
    /// Safe code cannot map a file (its slices could change under it):
    ///
    /// ```compile_fail,E0133
    /// let file = std::fs::File::open("/dev/zero").unwrap();
    /// let map = mlx5dv::MmapBuf::file(&file, 0, 4096);
    /// ```
    ///
    /// # Errors
    /// EINVAL for 0 bytes or an unaligned offset; `mmap`'s errno (EACCES when the file is not
    /// open for reading and writing).
    pub unsafe fn file(file: &std::fs::File, offset: u64, len: usize) -> Result<MmapBuf> {
        let offset = libc::off_t::try_from(offset)
            .map_err(|_| Error::invalid("mmap (file)", "the offset does not fit off_t"))?;
        Self::map(len, libc::MAP_SHARED, file.as_raw_fd(), offset, "mmap (file)")
    }

    fn map(len: usize, flags: libc::c_int, fd: libc::c_int, offset: libc::off_t, op: &'static str) -> Result<MmapBuf> {
        if len == 0 {
            return Err(Error::invalid(op, "a mapping needs at least one byte"));
        }
        // SAFETY: a fresh mapping chosen by the kernel; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                offset,
            )
        };
        if p == libc::MAP_FAILED {
            let hint = if flags & libc::MAP_HUGETLB != 0 {
                "reserve huge pages first (echo N > /proc/sys/vm/nr_hugepages)"
            } else {
                "check the length, the offset's alignment and the file's open mode (read and write)"
            };
            return Err(Error::last_os_error(op, hint));
        }
        let ptr = NonNull::new(p.cast()).ok_or_else(|| Error::from_errno(op, libc::ENOMEM, "mmap returned NULL"))?;
        Ok(MmapBuf { ptr, len })
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the mapping is readable and valid for len bytes while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, mutably (a file mapping's other writers are excluded by
    /// [`MmapBuf::file`]'s contract).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above; &mut self is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

// SAFETY: the mapping never moves and is unmapped only on drop.
unsafe impl RegionBuffer for MmapBuf {
    fn region(&mut self) -> (*mut u8, usize) {
        (self.ptr.as_ptr(), self.len)
    }
}

impl Drop for MmapBuf {
    fn drop(&mut self) {
        // SAFETY: mapped in map with this length, unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

impl std::fmt::Debug for MmapBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MmapBuf").field("len", &self.len).finish()
    }
}

/// Memory the region does not own, registered by address and length
/// ([`crate::Pd::register_raw`]): nothing is freed on deregistration.
#[derive(Debug)]
pub struct RawMemory {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: only an address; the caller of register_raw vouched for the memory.
unsafe impl Send for RawMemory {}
// SAFETY: as above.
unsafe impl Sync for RawMemory {}

impl RawMemory {
    /// `len` bytes at `ptr`.
    ///
    /// # Safety
    /// The memory must be readable and writable, stay valid until the region made from it is
    /// deregistered, and not be reached through Rust references while it is registered (the
    /// adapter and peers may write it at any time).
    pub unsafe fn new(ptr: *mut u8, len: usize) -> RawMemory {
        RawMemory { ptr, len }
    }
}

// SAFETY: guaranteed by RawMemory::new's contract.
unsafe impl RegionBuffer for RawMemory {
    fn region(&mut self) -> (*mut u8, usize) {
        (self.ptr, self.len)
    }
}

/// A borrowed slice while [`crate::Pd::register_borrowed`] keeps it registered: the region
/// cannot outlive the call (the lifetime), cannot be kept by a pool (not `'static`), and is
/// deregistered before the borrow ends.
#[derive(Debug)]
pub struct Borrowed<'a> {
    ptr: *mut u8,
    len: usize,
    _slice: std::marker::PhantomData<&'a mut [u8]>,
}

// SAFETY: stands for an exclusive borrow of bytes (Send like &mut [u8]).
unsafe impl Send for Borrowed<'_> {}
// SAFETY: as above; nothing reads through it.
unsafe impl Sync for Borrowed<'_> {}

impl<'a> Borrowed<'a> {
    pub(crate) fn new(slice: &'a mut [u8]) -> Borrowed<'a> {
        Borrowed {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _slice: std::marker::PhantomData,
        }
    }
}

// SAFETY: the exclusive borrow keeps the bytes alive and untouched until register_borrowed
// has deregistered them.
unsafe impl RegionBuffer for Borrowed<'_> {
    fn region(&mut self) -> (*mut u8, usize) {
        (self.ptr, self.len)
    }
}

/// A dma-buf (device memory, such as a GPU buffer exported by its driver), registered with
/// [`crate::Pd::register_dmabuf`]: the region holds the descriptor and gives it back on
/// deregistration. Its bytes are not host memory: the region has no `read`/`write`.
#[derive(Debug)]
pub struct DmaBuf {
    fd: std::os::fd::OwnedFd,
    offset: u64,
    len: usize,
    iova: u64,
}

impl DmaBuf {
    /// `len` bytes at `offset` of the dma-buf `fd`, addressed in work requests from `iova`.
    pub fn new(fd: std::os::fd::OwnedFd, offset: u64, len: usize, iova: u64) -> DmaBuf {
        DmaBuf { fd, offset, len, iova }
    }

    /// The descriptor.
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.fd.as_fd()
    }

    pub(crate) fn parts(&self) -> (libc::c_int, u64, usize, u64) {
        (self.fd.as_raw_fd(), self.offset, self.len, self.iova)
    }

    /// The descriptor back.
    pub fn into_fd(self) -> std::os::fd::OwnedFd {
        self.fd
    }
}

mod sealed {
    /// Sealed: [`super::BoundedBuffer`]'s impls below only.
    pub trait Sealed {}
}

/// A buffer whose registration covers exactly memory the value owns or borrows: every
/// [`RegionBuffer`] (`Vec<u8>`, [`AlignedBuf`], [`MmapBuf`], ...) and a [`DmaBuf`], never an
/// [`ImplicitOdp`] region, whose key reaches every address of the process. What a pool or an
/// executor posts from at an offset the caller names ([`crate::DciPool::hold`],
/// [`crate::s3::Executor::submit_region`], [`crate::s3::LentRegion`]): an offset inside such a
/// region is inside its memory, so a safe caller cannot aim the device at memory of the
/// process that is not the region's.
///
/// Sealed: implemented by the crate only (a `RegionBuffer` of your own is one through that
/// trait's contract).
pub trait BoundedBuffer: sealed::Sealed + Send {}

impl<T: RegionBuffer> sealed::Sealed for T {}
impl<T: RegionBuffer> BoundedBuffer for T {}
impl sealed::Sealed for DmaBuf {}
impl BoundedBuffer for DmaBuf {}

/// The whole address space of the process, registered with implicit on-demand paging
/// ([`crate::Pd::register_implicit_odp`]): any address can be used with its local key, so
/// scatter/gather entries for it are made with the unsafe [`crate::Sge::from_raw`]. Not a
/// [`BoundedBuffer`]: no pool or executor posts from it.
#[derive(Debug)]
pub struct ImplicitOdp(());

impl ImplicitOdp {
    pub(crate) fn new() -> ImplicitOdp {
        ImplicitOdp(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffers_are_zeroed_page_aligned_and_refuse_zero_bytes() {
        let mut b = AlignedBuf::new(100).unwrap();
        assert_eq!(b.as_slice(), &[0u8; 100][..]);
        assert_eq!(b.region().0 as usize % PAGE, 0);
        assert_eq!(AlignedBuf::new(0).unwrap_err().errno(), Some(libc::EINVAL));
    }

    #[test]
    fn an_anonymous_mapping_is_writable_and_keeps_its_address_when_moved() {
        let mut m = MmapBuf::anonymous(8192).unwrap();
        m.as_mut_slice()[8191] = 7;
        let (p, len) = m.region();
        let moved = Box::new(m);
        assert_eq!((moved.ptr.as_ptr(), moved.len), (p, len));
        assert_eq!(moved.as_slice()[8191], 7);
    }
}
