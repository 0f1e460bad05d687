//! The kernel side of the emulated device: what mlx5_ib answers to libibverbs and libmlx5.
//!
//! The interposer hands every operation on the emulated `/dev/infiniband/uverbs0` to this
//! module: the uverbs write() commands ([`write`]), RDMA_VERBS_IOCTL ([`ioctl`]), mmap of UAR
//! pages. Decoding of the ABI lives here; the objects and the data path live in
//! [`crate::device`] and [`crate::engine`].

pub mod ioctl;
pub mod modify;
pub mod prm;
pub mod write;

use crate::device;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// What the kernel keeps per open of the command device (a ucontext after GET_CONTEXT).
#[derive(Debug, Default)]
pub struct Ucontext {
    /// GET_CONTEXT done.
    pub ready: bool,
    /// Async event pipe (read end handed to the library, write end kept).
    pub async_pipe: Option<(i32, i32)>,
    /// Completion channel pipes created on this context (read end -> write end).
    pub channels: BTreeMap<i32, i32>,
}

/// Open command-device fds and their contexts.
static CONTEXTS: Mutex<BTreeMap<i32, Ucontext>> = Mutex::new(BTreeMap::new());

fn contexts() -> std::sync::MutexGuard<'static, BTreeMap<i32, Ucontext>> {
    CONTEXTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers `fd` as an open of the command device.
pub fn open(fd: i32) {
    contexts().insert(fd, Ucontext::default());
    crate::log(format_args!("uverbs0 opened as fd {fd}"));
}

/// Whether `fd` is an open of the command device.
pub fn is_device_fd(fd: i32) -> bool {
    contexts().contains_key(&fd)
}

/// A dup of a device fd shares its context, as a dup of the real file would.
pub fn dup(old: i32, new: i32) {
    let mut c = contexts();
    if c.contains_key(&old) {
        c.insert(
            new,
            Ucontext {
                ready: true,
                ..Default::default()
            },
        );
    }
}

/// The device fd is closed: a last close tears the context down (its pipes are closed).
pub fn close(fd: i32) {
    if let Some(ctx) = contexts().remove(&fd) {
        if let Some((_, w)) = ctx.async_pipe {
            device::global().async_fds.retain(|&f| f != w);
            // SAFETY: closing the write end this module created for the context.
            unsafe { libc::close(w) };
        }
        for (_, w) in ctx.channels {
            // SAFETY: as above, a completion channel's write end we own.
            unsafe { libc::close(w) };
        }
    }
}

/// mmap of the command device: UAR pages (MLX5_IB_MMAP_REGULAR_PAGE and friends) become
/// anonymous shared memory the device thread watches for CQ arm doorbells.
pub fn mmap(len: usize, offset: i64) -> Result<*mut libc::c_void, i32> {
    let cmd = (offset >> 12) >> 8;
    // MLX5_IB_MMAP_REGULAR_PAGE 0, _WC_PAGE 2, _NC_PAGE 3, _ALLOC_WC 6: UAR pages.
    if !matches!(cmd, 0 | 2 | 3 | 6) {
        return Err(libc::EINVAL);
    }
    // SAFETY: a fresh anonymous shared mapping; no existing memory is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(libc::ENOMEM);
    }
    device::global().uars.push(p as u64);
    crate::engine::start();
    Ok(p)
}

/// munmap of anything: a UAR page leaves the device's watch list first (under the device
/// lock, so the device thread never reads an unmapped page).
pub fn munmap(addr: u64, len: usize) {
    device::global().uars.retain(|&u| u < addr || u >= addr + len as u64);
}

/// Creates a pipe whose read end the library gets (async events, completion channels): the
/// library reads and polls it as it would the kernel's event files, with no interposition.
pub fn event_pipe() -> Result<(i32, i32), i32> {
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EMFILE));
    }
    Ok((fds[0], fds[1]))
}
