//! soft-mlx5 (emulated) interposer, loaded with LD_PRELOAD: the file operations libibverbs and
//! libmlx5 make on `/dev/infiniband/uverbs0` go to the device model; everything else goes to
//! the kernel unchanged (by system call, so nothing here recurses into itself).
//!
//! `open`, `openat` and `ioctl` are C-variadic. Stable Rust cannot define a variadic function,
//! so they are defined with their widest fixed signature: on x86_64 (System V) and aarch64
//! Linux (AAPCS64) variadic arguments travel in the same registers as fixed ones, so the mode
//! or argument word is read where the caller put it (and ignored when it did not pass one).
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(clippy::missing_safety_doc)]

use libc::{c_char, c_int, c_long, c_uint, c_ulong, c_void, off_t, size_t, ssize_t};
use soft_mlx5::kernel;
use soft_mlx5::sysfs::{CDEV_PATH, UVERBS_DEV};
use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, Ordering};

/// Device fds, one bit per descriptor: checked lock-free on every write/close/mmap, so a log
/// line written while the device lock is held cannot deadlock on it.
static DEVICE_FDS: [AtomicU64; 1024] = [const { AtomicU64::new(0) }; 1024];

fn mark(fd: c_int, on: bool) {
    if let Some(w) = usize::try_from(fd).ok().and_then(|f| DEVICE_FDS.get(f / 64)) {
        let bit = 1u64 << (fd % 64);
        if on {
            w.fetch_or(bit, Ordering::SeqCst);
        } else {
            w.fetch_and(!bit, Ordering::SeqCst);
        }
    }
}

fn is_device(fd: c_int) -> bool {
    usize::try_from(fd)
        .ok()
        .and_then(|f| DEVICE_FDS.get(f / 64))
        .is_some_and(|w| w.load(Ordering::SeqCst) & (1u64 << (fd % 64)) != 0)
}

fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() = e };
}

fn fail<T: From<i8>>(e: c_int) -> T {
    set_errno(e);
    T::from(-1)
}

unsafe fn is_cdev_path(path: *const c_char) -> bool {
    // SAFETY: the caller passes a NUL-terminated path (or NULL, refused by the kernel later).
    !path.is_null() && unsafe { CStr::from_ptr(path) }.to_bytes() == CDEV_PATH.as_bytes()
}

fn open_device() -> c_int {
    // The command device is backed by /dev/null: a real character-device fd the library can
    // hold, close and dup; its operations are served here.
    // SAFETY: plain openat system call on a static NUL-terminated path.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD,
            c"/dev/null".as_ptr(),
            libc::O_RDWR | libc::O_CLOEXEC,
        )
    } as c_int;
    if fd >= 0 {
        mark(fd, true);
        kernel::open(fd);
    }
    fd
}

unsafe fn sys_openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    // SAFETY: forwarding the caller's arguments to the system call.
    unsafe { libc::syscall(libc::SYS_openat, dirfd, path, flags, mode) as c_int }
}

/// open(2).
#[no_mangle]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    // SAFETY: the caller's path.
    if unsafe { is_cdev_path(path) } {
        return open_device();
    }
    // SAFETY: forwarding.
    unsafe { sys_openat(libc::AT_FDCWD, path, flags, mode) }
}

/// open64(2).
#[no_mangle]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    // SAFETY: same contract as open.
    unsafe { open(path, flags, mode) }
}

/// __open_2 (the _FORTIFY_SOURCE entry).
#[no_mangle]
pub unsafe extern "C" fn __open_2(path: *const c_char, flags: c_int) -> c_int {
    // SAFETY: same contract as open, without a mode.
    unsafe { open(path, flags, 0) }
}

/// __open64_2.
#[no_mangle]
pub unsafe extern "C" fn __open64_2(path: *const c_char, flags: c_int) -> c_int {
    // SAFETY: same contract as open, without a mode.
    unsafe { open(path, flags, 0) }
}

/// openat(2).
#[no_mangle]
pub unsafe extern "C" fn openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    // SAFETY: the caller's path.
    if unsafe { is_cdev_path(path) } {
        return open_device();
    }
    // SAFETY: forwarding.
    unsafe { sys_openat(dirfd, path, flags, mode) }
}

/// openat64(2).
#[no_mangle]
pub unsafe extern "C" fn openat64(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    // SAFETY: same contract as openat.
    unsafe { openat(dirfd, path, flags, mode) }
}

/// __openat_2.
#[no_mangle]
pub unsafe extern "C" fn __openat_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    // SAFETY: same contract as openat.
    unsafe { openat(dirfd, path, flags, 0) }
}

fn fill_cdev_stat(st: *mut libc::stat) {
    // SAFETY: the caller passed room for a struct stat.
    let st = unsafe { &mut *st };
    // SAFETY: an all-zero struct stat is valid.
    *st = unsafe { std::mem::zeroed() };
    st.st_mode = libc::S_IFCHR | 0o666;
    st.st_rdev = libc::makedev(UVERBS_DEV.0, UVERBS_DEV.1);
    st.st_nlink = 1;
}

/// stat(2): the command device exists as character device 231:192.
#[no_mangle]
pub unsafe extern "C" fn stat(path: *const c_char, st: *mut libc::stat) -> c_int {
    // SAFETY: the caller's path.
    if unsafe { is_cdev_path(path) } {
        fill_cdev_stat(st);
        return 0;
    }
    // SAFETY: forwarding to newfstatat with the caller's buffer.
    unsafe { libc::syscall(libc::SYS_newfstatat, libc::AT_FDCWD, path, st, 0) as c_int }
}

/// stat64(2).
#[no_mangle]
pub unsafe extern "C" fn stat64(path: *const c_char, st: *mut libc::stat) -> c_int {
    // SAFETY: same contract as stat (struct stat64 == struct stat on 64-bit Linux).
    unsafe { stat(path, st) }
}

/// fstat(2).
#[no_mangle]
pub unsafe extern "C" fn fstat(fd: c_int, st: *mut libc::stat) -> c_int {
    if is_device(fd) {
        fill_cdev_stat(st);
        return 0;
    }
    // SAFETY: forwarding with the caller's buffer.
    unsafe { libc::syscall(libc::SYS_newfstatat, fd, c"".as_ptr(), st, libc::AT_EMPTY_PATH) as c_int }
}

/// fstat64(2).
#[no_mangle]
pub unsafe extern "C" fn fstat64(fd: c_int, st: *mut libc::stat) -> c_int {
    // SAFETY: same contract as fstat.
    unsafe { fstat(fd, st) }
}

/// write(2): a uverbs command on the device fd.
#[no_mangle]
pub unsafe extern "C" fn write(fd: c_int, buf: *const c_void, count: size_t) -> ssize_t {
    if is_device(fd) {
        if buf.is_null() {
            return fail(libc::EFAULT);
        }
        // SAFETY: the caller's buffer of `count` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), count) };
        return match kernel::write::handle(fd, bytes) {
            Ok(n) => n as ssize_t,
            Err(e) => fail(e),
        };
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_write, fd, buf, count) as ssize_t }
}

/// ioctl(2): RDMA_VERBS_IOCTL on the device fd.
#[no_mangle]
pub unsafe extern "C" fn ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int {
    if is_device(fd) {
        let rdma_verbs_ioctl = soft_mlx5::uapi::ioctl::RDMA_VERBS_IOCTL as c_ulong;
        if request != rdma_verbs_ioctl {
            return fail(libc::ENOTTY);
        }
        return match kernel::ioctl::handle(fd, arg as u64) {
            Ok(()) => 0,
            Err(e) => fail(e),
        };
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_ioctl, fd, request, arg) as c_int }
}

/// mmap(2): UAR pages of the device fd.
#[no_mangle]
pub unsafe extern "C" fn mmap(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    if is_device(fd) {
        return match kernel::mmap(len, off) {
            Ok(p) => p,
            Err(e) => {
                set_errno(e);
                libc::MAP_FAILED
            }
        };
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_mmap, addr, len, prot, flags, fd, off) as *mut c_void }
}

/// mmap64(2).
#[no_mangle]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    // SAFETY: same contract as mmap.
    unsafe { mmap(addr, len, prot, flags, fd, off) }
}

/// munmap(2): a UAR page stops being watched before it goes.
#[no_mangle]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: size_t) -> c_int {
    kernel::munmap(addr as u64, len);
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_munmap, addr, len) as c_int }
}

/// close(2).
#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    if is_device(fd) {
        mark(fd, false);
        kernel::close(fd);
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_close, fd) as c_int }
}

fn dup_result(old: c_int, new: c_long) -> c_int {
    let new = new as c_int;
    if new >= 0 && is_device(old) {
        mark(new, true);
        kernel::dup(old, new);
    }
    new
}

/// dup(2): the copy is the device too.
#[no_mangle]
pub extern "C" fn dup(fd: c_int) -> c_int {
    // SAFETY: plain system call.
    let r = unsafe { libc::syscall(libc::SYS_fcntl, fd, libc::F_DUPFD, 0) };
    dup_result(fd, r)
}

/// dup2(2).
#[no_mangle]
pub extern "C" fn dup2(fd: c_int, new: c_int) -> c_int {
    if fd == new {
        return new;
    }
    if is_device(new) {
        mark(new, false);
        kernel::close(new);
    }
    // SAFETY: plain system call.
    let r = unsafe { libc::syscall(libc::SYS_dup3, fd, new, 0) };
    dup_result(fd, r)
}

/// dup3(2).
#[no_mangle]
pub extern "C" fn dup3(fd: c_int, new: c_int, flags: c_int) -> c_int {
    if is_device(new) {
        mark(new, false);
        kernel::close(new);
    }
    // SAFETY: plain system call.
    let r = unsafe { libc::syscall(libc::SYS_dup3, fd, new, flags) };
    dup_result(fd, r)
}

/// fcntl(2): F_DUPFD/F_DUPFD_CLOEXEC of the device fd yield the device too.
#[no_mangle]
pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, arg: c_long) -> c_int {
    // SAFETY: forwarding; the third argument is an int or pointer in a register either way.
    let r = unsafe { libc::syscall(libc::SYS_fcntl, fd, cmd, arg) };
    if matches!(cmd, libc::F_DUPFD | libc::F_DUPFD_CLOEXEC) {
        return dup_result(fd, r);
    }
    r as c_int
}

/// socket(2): RDMA netlink is answered "not supported", as by a kernel without ib_core, so
/// libibverbs discovers the emulated device through sysfs (SYSFS_PATH) even on a host whose
/// kernel has RDMA devices of its own.
#[no_mangle]
pub extern "C" fn socket(domain: c_int, ty: c_int, protocol: c_int) -> c_int {
    const NETLINK_RDMA: c_int = 20;
    if domain == libc::AF_NETLINK && protocol == NETLINK_RDMA {
        return fail(libc::EPROTONOSUPPORT);
    }
    // SAFETY: plain system call.
    unsafe { libc::syscall(libc::SYS_socket, domain, ty, protocol) as c_int }
}
