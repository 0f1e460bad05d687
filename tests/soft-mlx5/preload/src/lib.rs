//! soft-mlx5 (emulated) interposer, loaded with LD_PRELOAD: the file operations libibverbs and
//! libmlx5 make on `/dev/infiniband/uverbs0` go to the device model, and RDMA netlink sockets
//! are answered by its nldev model (`netlink_fd`), and paths under /sys/class/infiniband and
//! /sys/class/infiniband_verbs lead into the private sysfs tree (`SYSFS_PATH`); everything else
//! goes to the kernel unchanged (by system call, so nothing here recurses into itself).
//!
//! `open`, `openat` and `ioctl` are C-variadic. Stable Rust cannot define a variadic function,
//! so they are defined with their widest fixed signature: on x86_64 (System V) and aarch64
//! Linux (AAPCS64) variadic arguments travel in the same registers as fixed ones, so the mode
//! or argument word is read where the caller put it (and ignored when it did not pass one).
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(clippy::missing_safety_doc)]

mod netlink_fd;

use libc::{c_char, c_int, c_long, c_uint, c_ulong, c_void, off_t, size_t, ssize_t};
use soft_mlx5::fdset::FdSet;
use soft_mlx5::kernel;
use soft_mlx5::sysfs::{CDEV_PATH, UVERBS_DEV};
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Runs when the interposer is loaded: fork handlers for the device's locks.
extern "C" fn on_load() {
    kernel::install_fork_handlers();
}

#[used]
#[link_section = ".init_array"]
static ON_LOAD: extern "C" fn() = on_load;

/// A test hook of the emulator, not a hardware feature: with `paused` non-zero the device
/// thread executes nothing until it is called with 0, so a benchmark can post into a real
/// libmlx5 send queue without the device draining it. Returns once the device thread is idle
/// (the step it was in, if any, has finished). Found by `dlsym(RTLD_DEFAULT, ...)`; absent on
/// real hardware.
#[no_mangle]
pub extern "C" fn soft_mlx5_test_pause(paused: c_int) {
    soft_mlx5::engine::PAUSED.store(paused != 0, std::sync::atomic::Ordering::Release);
    // The device thread steps under the device lock: holding it once means no step is running.
    drop(soft_mlx5::device::global());
}

/// A test hook of the emulator, not a kernel feature: with `hold` 1, the next thread that
/// destroys a QP is held once the (emulated) kernel has destroyed it and freed its number,
/// before the command returns to the library, until called with 0; -1 changes nothing.
/// Returns 1 while a thread is held, else 0. Lets a test run what another thread may do in
/// that window (create a QP that gets the freed number, with `SOFT_MLX5_QPN_REUSE=1`). Absent
/// on real hardware.
#[no_mangle]
pub extern "C" fn soft_mlx5_test_hold_destroys(hold: c_int) -> c_int {
    use soft_mlx5::kernel::write::{HOLDING, HOLD_ARMED, HOLD_DESTROY, HOLD_OFF};
    use std::sync::atomic::Ordering;
    match hold {
        0 => HOLD_DESTROY.store(HOLD_OFF, Ordering::Release),
        h if h > 0 => HOLD_DESTROY.store(HOLD_ARMED, Ordering::Release),
        _ => {}
    }
    c_int::from(HOLD_DESTROY.load(Ordering::Acquire) == HOLDING)
}

/// A test hook of the emulator, not a hardware feature: the device fails for good (a firmware
/// fatal error, a PCI error, a hot unplug) and the kernel disassociates every open context,
/// as `soft_mlx5::kernel::device_fatal` describes: DEVICE_FATAL on the async event files,
/// completion channels that read EIO and poll as EPOLLERR, EIO for every command but the
/// destroys, nothing executed any more. For the rest of the process: no recovery. Absent on
/// real hardware.
#[no_mangle]
pub extern "C" fn soft_mlx5_test_fatal() {
    kernel::device_fatal(&mut soft_mlx5::device::global());
}

/// A test hook of the emulator, not a kernel feature: with `count` >= 0, the next `count`
/// uverbs commands numbered `command` (`IB_USER_VERBS_CMD_*`, plain or extended) fail with
/// `errno`, as mlx5_core fails a command it cannot allocate under memory pressure (see
/// `soft_mlx5::kernel::write::FAIL_COMMANDS`); a negative `count` changes nothing. Returns how
/// many were still to fail before the call. Absent on real hardware.
#[no_mangle]
pub extern "C" fn soft_mlx5_test_fail_commands(command: c_uint, count: c_int, errno: c_int) -> c_int {
    use soft_mlx5::kernel::write::{FailCommands, FAIL_COMMANDS};
    let mut f = FAIL_COMMANDS.lock().unwrap_or_else(|p| p.into_inner());
    let left = f.left;
    if let Ok(count) = u32::try_from(count) {
        *f = FailCommands {
            command,
            left: count,
            errno,
        };
    }
    c_int::try_from(left).unwrap_or(c_int::MAX)
}

/// Device fds.
static DEVICE_FDS: FdSet = FdSet::new();

fn mark(fd: c_int, on: bool) {
    DEVICE_FDS.mark(fd, on);
}

fn is_device(fd: c_int) -> bool {
    DEVICE_FDS.contains(fd)
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

/// The class folders ib_core and ib_uverbs give the device under /sys.
const SYS_CLASSES: [&[u8]; 2] = [b"/sys/class/infiniband", b"/sys/class/infiniband_verbs"];

/// The private sysfs tree (`SYSFS_PATH`) the device is described in, if any.
fn sysfs_root() -> Option<&'static [u8]> {
    static ROOT: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    ROOT.get_or_init(|| {
        use std::os::unix::ffi::OsStringExt;
        std::env::var_os("SYSFS_PATH").map(|p| p.into_vec())
    })
    .as_deref()
}

/// `path` inside /sys/class/infiniband or /sys/class/infiniband_verbs, as the same path under
/// `root`; anything else: None.
fn in_private_tree(root: &[u8], path: &[u8]) -> Option<Vec<u8>> {
    let inside = SYS_CLASSES.iter().any(|c| {
        path.strip_prefix(*c)
            .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
    });
    inside.then(|| [root, &path[b"/sys".len()..]].concat())
}

/// A path inside /sys/class/infiniband or /sys/class/infiniband_verbs, as the same path in
/// the private tree: a tool that reads the device's sysfs files directly (rdma-core's tests
/// `cat` a P_Key) sees the files libibverbs reads through `SYSFS_PATH`, which are the ones
/// ib_core would show there. Anything else, or no private tree: None.
unsafe fn sysfs_redirect(path: *const c_char) -> Option<CString> {
    if path.is_null() {
        return None;
    }
    // SAFETY: the caller's NUL-terminated path.
    let p = unsafe { CStr::from_ptr(path) }.to_bytes();
    if !p.starts_with(b"/sys/class/infiniband") {
        return None;
    }
    CString::new(in_private_tree(sysfs_root()?, p)?).ok()
}

fn open_device() -> c_int {
    // The command device is backed by a memfd: a real fd the library can hold, close and dup,
    // and one that the kernel's own mmap maps (a library's memory hooks may call libc's mmap
    // directly, bypassing this interposer): the UAR pages the library maps are pages of this
    // file, which the device maps too (kernel::mmap, kernel::learn_mappings). Its commands are
    // served here; fstat answers for the character device.
    // SAFETY: plain memfd_create system call on a static NUL-terminated name.
    let fd = unsafe { libc::syscall(libc::SYS_memfd_create, c"uverbs0".as_ptr(), libc::MFD_CLOEXEC) } as c_int;
    if fd < 0 {
        return fd;
    }
    // SAFETY: sizes the fresh, sparse file; no memory is touched.
    if unsafe { libc::syscall(libc::SYS_ftruncate, fd, kernel::DEVICE_FILE_LEN) } < 0 {
        // SAFETY: closing the fd opened above.
        unsafe { libc::syscall(libc::SYS_close, fd) };
        return -1;
    }
    mark(fd, true);
    kernel::open(fd);
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
    // SAFETY: the caller's path.
    if let Some(p) = unsafe { sysfs_redirect(path) } {
        // SAFETY: a NUL-terminated path owned here, the caller's flags and mode.
        return unsafe { sys_openat(libc::AT_FDCWD, p.as_ptr(), flags, mode) };
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
    // SAFETY: the caller's path (absolute when redirected, so dirfd does not matter).
    if let Some(p) = unsafe { sysfs_redirect(path) } {
        // SAFETY: a NUL-terminated path owned here, the caller's flags and mode.
        return unsafe { sys_openat(libc::AT_FDCWD, p.as_ptr(), flags, mode) };
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
    // SAFETY: the caller's path.
    if let Some(p) = unsafe { sysfs_redirect(path) } {
        // SAFETY: a NUL-terminated path owned here and the caller's buffer.
        return unsafe { libc::syscall(libc::SYS_newfstatat, libc::AT_FDCWD, p.as_ptr(), st, 0) as c_int };
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

/// What access(2) answers for the command device, as for the real node (crw-rw-rw-, root's):
/// every mode but X_OK is granted, X_OK only to root (the kernel grants root execute only
/// where some execute bit is set: none is).
fn cdev_access(mode: c_int) -> c_int {
    if mode & !(libc::R_OK | libc::W_OK | libc::X_OK) != 0 {
        return fail(libc::EINVAL);
    }
    if mode & libc::X_OK != 0 {
        return fail(libc::EACCES);
    }
    0
}

/// access(2): the command device exists (as `stat` says) and is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn access(path: *const c_char, mode: c_int) -> c_int {
    // SAFETY: the caller's path.
    if unsafe { is_cdev_path(path) } {
        return cdev_access(mode);
    }
    // SAFETY: the caller's path, possibly redirected into the private sysfs tree.
    let redirected = unsafe { sysfs_redirect(path) };
    let p = redirected.as_ref().map_or(path, |p| p.as_ptr());
    // SAFETY: a NUL-terminated path.
    unsafe { libc::syscall(libc::SYS_faccessat, libc::AT_FDCWD, p, mode) as c_int }
}

/// euidaccess(3) (eaccess): as access, for the effective ids.
#[no_mangle]
pub unsafe extern "C" fn euidaccess(path: *const c_char, mode: c_int) -> c_int {
    // SAFETY: the caller's path.
    if unsafe { is_cdev_path(path) } {
        return cdev_access(mode);
    }
    // SAFETY: the caller's path, possibly redirected into the private sysfs tree.
    let redirected = unsafe { sysfs_redirect(path) };
    let p = redirected.as_ref().map_or(path, |p| p.as_ptr());
    // SAFETY: a NUL-terminated path; AT_EACCESS checks the effective ids.
    unsafe { sys_faccessat(libc::AT_FDCWD, p, mode, libc::AT_EACCESS) }
}

/// eaccess(3).
#[no_mangle]
pub unsafe extern "C" fn eaccess(path: *const c_char, mode: c_int) -> c_int {
    // SAFETY: same contract as euidaccess.
    unsafe { euidaccess(path, mode) }
}

/// faccessat(2): an absolute path to the command device (dirfd does not matter then).
#[no_mangle]
pub unsafe extern "C" fn faccessat(dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int {
    // SAFETY: the caller's path.
    if unsafe { is_cdev_path(path) } {
        if flags & !(libc::AT_EACCESS | libc::AT_SYMLINK_NOFOLLOW | libc::AT_EMPTY_PATH) != 0 {
            return fail(libc::EINVAL);
        }
        return cdev_access(mode);
    }
    // SAFETY: the caller's path, possibly redirected into the private sysfs tree.
    let redirected = unsafe { sysfs_redirect(path) };
    let p = redirected.as_ref().map_or(path, |p| p.as_ptr());
    // SAFETY: forwarding with a NUL-terminated path.
    unsafe { sys_faccessat(dirfd, p, mode, flags) }
}

/// faccessat2(2), or faccessat(2) where the kernel lacks it (before 5.8) and no flag is given.
unsafe fn sys_faccessat(dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int {
    // SAFETY: the caller's NUL-terminated path.
    let r = unsafe { libc::syscall(libc::SYS_faccessat2, dirfd, path, mode, flags) } as c_int;
    // SAFETY: reads this thread's errno.
    if r == -1 && flags == 0 && unsafe { *libc::__errno_location() } == libc::ENOSYS {
        // SAFETY: as above.
        return unsafe { libc::syscall(libc::SYS_faccessat, dirfd, path, mode) } as c_int;
    }
    r
}

/// write(2): a uverbs command on the device fd.
#[no_mangle]
pub unsafe extern "C" fn write(fd: c_int, buf: *const c_void, count: size_t) -> ssize_t {
    if netlink_fd::owns(fd) {
        // SAFETY: the caller's buffer of `count` bytes.
        return unsafe { netlink_fd::send(fd, buf, count) };
    }
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

/// read(2): an event file (async events, completion channel) hands out one queued event.
#[no_mangle]
pub unsafe extern "C" fn read(fd: c_int, buf: *mut c_void, count: size_t) -> ssize_t {
    if kernel::is_event_fd(fd) {
        if buf.is_null() {
            return fail(libc::EFAULT);
        }
        // SAFETY: the caller's buffer of `count` bytes.
        let out = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), count) };
        return match kernel::event_read(fd, out) {
            Ok(n) => n as ssize_t,
            Err(e) => fail(e),
        };
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_read, fd, buf, count) as ssize_t }
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
        if let Err(e) = kernel::mmap_check(off) {
            set_errno(e);
            return libc::MAP_FAILED;
        }
        // SAFETY: the caller's mapping of the device file.
        let p = unsafe { libc::syscall(libc::SYS_mmap, addr, len, prot, flags, fd, off) };
        if p == -1 {
            // errno set by the system call.
            return libc::MAP_FAILED;
        }
        UAR_MAPPED.store(true, Ordering::Release);
        kernel::mmap(fd, len, off);
        return p as *mut c_void;
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

/// Set by the first UAR page mapped: until then no munmap can concern the device.
static UAR_MAPPED: AtomicBool = AtomicBool::new(false);

/// munmap(2): a UAR page stops being watched before it goes. Before any UAR was mapped the
/// device is not consulted: jemalloc (rustc's allocator) unmaps pages while it initialises,
/// and creating the device there allocates, which re-entered jemalloc's init lock and hung
/// `cargo build` under the preload.
#[no_mangle]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: size_t) -> c_int {
    if UAR_MAPPED.load(Ordering::Acquire) {
        kernel::munmap(addr as u64, len);
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_munmap, addr, len) as c_int }
}

/// close(2).
#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    if netlink_fd::owns(fd) {
        netlink_fd::close(fd);
    }
    if is_device(fd) {
        mark(fd, false);
        kernel::close(fd);
    }
    if kernel::is_event_fd(fd) {
        kernel::event_close(fd);
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
    dup3(fd, new, 0)
}

/// dup3(2): a device fd that `new` replaces is closed first, as the kernel would close it.
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

/// fcntl64: what `fcntl` is in a program built with 64-bit file offsets against glibc 2.28+
/// (Python's `os.dup` calls it with F_DUPFD_CLOEXEC).
#[no_mangle]
pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, arg: c_long) -> c_int {
    // SAFETY: as fcntl.
    unsafe { fcntl(fd, cmd, arg) }
}

/// socket(2): an RDMA netlink socket is answered by the emulated device's nldev model (see
/// `netlink_fd`), so `rdma` and libibverbs see only the emulated device, even on a host whose
/// kernel has RDMA devices of its own.
#[no_mangle]
pub extern "C" fn socket(domain: c_int, ty: c_int, protocol: c_int) -> c_int {
    if domain == libc::AF_NETLINK && protocol == soft_mlx5::netlink::NETLINK_RDMA {
        return netlink_fd::socket(ty);
    }
    // SAFETY: plain system call.
    unsafe { libc::syscall(libc::SYS_socket, domain, ty, protocol) as c_int }
}

/// bind(2): an RDMA netlink socket takes any port.
#[no_mangle]
pub unsafe extern "C" fn bind(fd: c_int, addr: *const libc::sockaddr, len: libc::socklen_t) -> c_int {
    if netlink_fd::owns(fd) {
        // SAFETY: the caller's address of `len` bytes.
        return unsafe { netlink_fd::bind(fd, addr, len) };
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_bind, fd, addr, len) as c_int }
}

/// getsockname(2): an RDMA netlink socket names its `sockaddr_nl`.
#[no_mangle]
pub unsafe extern "C" fn getsockname(fd: c_int, addr: *mut libc::sockaddr, len: *mut libc::socklen_t) -> c_int {
    if netlink_fd::owns(fd) {
        // SAFETY: the caller's buffer and length.
        return unsafe { netlink_fd::getsockname(fd, addr, len) };
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_getsockname, fd, addr, len) as c_int }
}

/// setsockopt(2): every option of an RDMA netlink socket is accepted (and has no effect).
#[no_mangle]
pub unsafe extern "C" fn setsockopt(
    fd: c_int,
    level: c_int,
    name: c_int,
    val: *const c_void,
    len: libc::socklen_t,
) -> c_int {
    if netlink_fd::owns(fd) {
        return 0;
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_setsockopt, fd, level, name, val, len) as c_int }
}

/// getsockopt(2).
#[no_mangle]
pub unsafe extern "C" fn getsockopt(
    fd: c_int,
    level: c_int,
    name: c_int,
    val: *mut c_void,
    len: *mut libc::socklen_t,
) -> c_int {
    if netlink_fd::owns(fd) {
        // SAFETY: the caller's buffer and length.
        return unsafe { netlink_fd::getsockopt(fd, level, name, val, len) };
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_getsockopt, fd, level, name, val, len) as c_int }
}

/// sendto(2): a request on an RDMA netlink socket is answered by the model.
#[no_mangle]
pub unsafe extern "C" fn sendto(
    fd: c_int,
    buf: *const c_void,
    len: size_t,
    flags: c_int,
    addr: *const libc::sockaddr,
    addrlen: libc::socklen_t,
) -> ssize_t {
    if netlink_fd::owns(fd) {
        // SAFETY: the caller's buffer of `len` bytes.
        return unsafe { netlink_fd::send(fd, buf, len) };
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_sendto, fd, buf, len, flags, addr, addrlen) as ssize_t }
}

/// send(2).
#[no_mangle]
pub unsafe extern "C" fn send(fd: c_int, buf: *const c_void, len: size_t, flags: c_int) -> ssize_t {
    // SAFETY: same contract as sendto, without an address.
    unsafe { sendto(fd, buf, len, flags, std::ptr::null(), 0) }
}

/// sendmsg(2).
#[no_mangle]
pub unsafe extern "C" fn sendmsg(fd: c_int, msg: *const libc::msghdr, flags: c_int) -> ssize_t {
    if netlink_fd::owns(fd) {
        // SAFETY: the caller's msghdr.
        return unsafe { netlink_fd::sendmsg(fd, msg) };
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_sendmsg, fd, msg, flags) as ssize_t }
}

/// recvfrom(2): replies on an RDMA netlink socket come from the kernel's address.
#[no_mangle]
pub unsafe extern "C" fn recvfrom(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    flags: c_int,
    addr: *mut libc::sockaddr,
    addrlen: *mut libc::socklen_t,
) -> ssize_t {
    if netlink_fd::owns(fd) {
        // SAFETY: the caller's buffers.
        return unsafe { netlink_fd::recvfrom(fd, buf, len, flags, addr, addrlen) };
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_recvfrom, fd, buf, len, flags, addr, addrlen) as ssize_t }
}

/// recvmsg(2).
#[no_mangle]
pub unsafe extern "C" fn recvmsg(fd: c_int, msg: *mut libc::msghdr, flags: c_int) -> ssize_t {
    if netlink_fd::owns(fd) {
        // SAFETY: the caller's msghdr.
        return unsafe { netlink_fd::recvmsg(fd, msg, flags) };
    }
    // SAFETY: forwarding.
    unsafe { libc::syscall(libc::SYS_recvmsg, fd, msg, flags) as ssize_t }
}

#[cfg(test)]
mod tests {
    use super::{cdev_access, in_private_tree};

    #[test]
    fn the_device_node_answers_access_as_a_crw_rw_rw_character_device() {
        assert_eq!(cdev_access(libc::R_OK | libc::W_OK), 0);
        assert_eq!(cdev_access(libc::F_OK), 0);
        assert_eq!(cdev_access(libc::X_OK), -1, "no execute bit on the node");
        assert_eq!(std::io::Error::last_os_error().raw_os_error(), Some(libc::EACCES));
        assert_eq!(cdev_access(0x40), -1, "an unknown mode bit");
    }

    #[test]
    fn the_device_classes_under_sys_lead_into_the_private_tree_and_nothing_else_does() {
        let root = b"/tmp/soft-mlx5.x";
        let map = |p: &str| in_private_tree(root, p.as_bytes()).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(
            map("/sys/class/infiniband/mlx5_0/ports/1/pkeys/0").as_deref(),
            Some("/tmp/soft-mlx5.x/class/infiniband/mlx5_0/ports/1/pkeys/0")
        );
        assert_eq!(
            map("/sys/class/infiniband_verbs/uverbs0/ibdev").as_deref(),
            Some("/tmp/soft-mlx5.x/class/infiniband_verbs/uverbs0/ibdev")
        );
        assert_eq!(
            map("/sys/class/infiniband").as_deref(),
            Some("/tmp/soft-mlx5.x/class/infiniband")
        );
        assert_eq!(map("/sys/class/infiniband_mad/umad0"), None);
        assert_eq!(map("/sys/class/net/eth0"), None);
        assert_eq!(map("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"), None);
    }
}
