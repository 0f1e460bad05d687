//! RDMA netlink sockets (`socket(AF_NETLINK, *, NETLINK_RDMA)`) answered by the device model's
//! nldev responder (`soft_mlx5::netlink`).
//!
//! Such a socket is one end of `socketpair(AF_UNIX, SOCK_DGRAM)`, which keeps datagram
//! boundaries and supports MSG_PEEK and MSG_TRUNC (the real length) on receive as netlink does,
//! and which poll/select see as a socket. A request sent on it (send, sendto, sendmsg, write)
//! is answered at once: each reply datagram is written into the other end, where the
//! application's receive reads it. The address calls speak `sockaddr_nl`: bind takes any port,
//! getsockname names the bound port, and a receive says the message came from the kernel
//! (port 0). close also closes the other end. Every other call on the descriptor goes to the
//! Unix socket unchanged.

use crate::fail;
use libc::{c_int, c_void, sa_family_t, size_t, sockaddr, socklen_t, ssize_t};
use soft_mlx5::fdset::FdSet;
use soft_mlx5::netlink::{self, Node, NETLINK_RDMA};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// Descriptors that are emulated RDMA netlink sockets (checked lock-free on every write/close).
static NETLINK_FDS: FdSet = FdSet::new();

/// One emulated socket.
struct Sock {
    /// The other end of the pair: replies are written there.
    peer: c_int,
    /// The bound port id (0 until bound; autobound to the pid on the first send).
    port: u32,
    /// SOCK_RAW or SOCK_DGRAM, as created (SO_TYPE).
    ty: c_int,
}

static SOCKS: Mutex<BTreeMap<c_int, Sock>> = Mutex::new(BTreeMap::new());

fn socks() -> MutexGuard<'static, BTreeMap<c_int, Sock>> {
    SOCKS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `fd` is an emulated RDMA netlink socket.
pub(crate) fn owns(fd: c_int) -> bool {
    NETLINK_FDS.contains(fd)
}

fn pid() -> u32 {
    // SAFETY: getpid has no preconditions.
    unsafe { libc::getpid() as u32 }
}

/// socket(AF_NETLINK, `ty`, NETLINK_RDMA): the application's end of a Unix datagram pair,
/// with the SOCK_CLOEXEC/SOCK_NONBLOCK of `ty`; the reply end is close-on-exec and blocking.
pub(crate) fn socket(ty: c_int) -> c_int {
    let base = ty & !(libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK);
    // netlink_create: raw and datagram sockets only.
    if base != libc::SOCK_RAW && base != libc::SOCK_DGRAM {
        return fail(libc::ESOCKTNOSUPPORT);
    }
    let mut sv = [-1 as c_int; 2];
    // SAFETY: socketpair system call writing two descriptors into `sv`.
    let r = unsafe {
        libc::syscall(
            libc::SYS_socketpair,
            libc::AF_UNIX,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            0,
            sv.as_mut_ptr(),
        )
    };
    if r < 0 {
        return -1;
    }
    let [fd, peer] = sv;
    if ty & libc::SOCK_CLOEXEC == 0 {
        // SAFETY: fcntl system call on a descriptor just created.
        unsafe { libc::syscall(libc::SYS_fcntl, fd, libc::F_SETFD, 0) };
    }
    if ty & libc::SOCK_NONBLOCK != 0 {
        // SAFETY: as above.
        unsafe { libc::syscall(libc::SYS_fcntl, fd, libc::F_SETFL, libc::O_NONBLOCK) };
    }
    socks().insert(
        fd,
        Sock {
            peer,
            port: 0,
            ty: base,
        },
    );
    NETLINK_FDS.mark(fd, true);
    soft_mlx5::log(format_args!("RDMA netlink socket {fd} (nldev answered by the model)"));
    fd
}

/// close: the reply end goes with it.
pub(crate) fn close(fd: c_int) {
    NETLINK_FDS.mark(fd, false);
    if let Some(s) = socks().remove(&fd) {
        // SAFETY: close system call on the pair's other end, which this module owns.
        unsafe { libc::syscall(libc::SYS_close, s.peer) };
    }
}

/// A request of `len` bytes at `buf`: its replies are queued for the application's receive.
///
/// # Safety
/// `buf` points to `len` readable bytes (or is null, refused with EFAULT).
pub(crate) unsafe fn send(fd: c_int, buf: *const c_void, len: size_t) -> ssize_t {
    if buf.is_null() && len != 0 {
        return fail(libc::EFAULT);
    }
    let bytes = if len == 0 {
        &[][..]
    } else {
        // SAFETY: the caller's `len` readable bytes.
        unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) }
    };
    deliver(fd, bytes)
}

/// sendmsg: the gathered iovecs are one request (netlink's destination address is ignored:
/// only the kernel, port 0, answers).
///
/// # Safety
/// `msg` points to a valid `struct msghdr` whose iovecs are readable.
pub(crate) unsafe fn sendmsg(fd: c_int, msg: *const libc::msghdr) -> ssize_t {
    if msg.is_null() {
        return fail(libc::EFAULT);
    }
    // SAFETY: the caller's msghdr.
    let m = unsafe { &*msg };
    let mut bytes = Vec::new();
    if m.msg_iovlen > 0 && !m.msg_iov.is_null() {
        // SAFETY: the caller's array of `msg_iovlen` iovecs.
        let iovs = unsafe { std::slice::from_raw_parts(m.msg_iov, m.msg_iovlen) };
        for v in iovs.iter().filter(|v| v.iov_len > 0) {
            if v.iov_base.is_null() {
                return fail(libc::EFAULT);
            }
            // SAFETY: each iovec names `iov_len` readable bytes.
            bytes.extend_from_slice(unsafe { std::slice::from_raw_parts(v.iov_base.cast::<u8>(), v.iov_len) });
        }
    }
    deliver(fd, &bytes)
}

fn deliver(fd: c_int, request: &[u8]) -> ssize_t {
    let (peer, port) = {
        let mut socks = socks();
        let Some(s) = socks.get_mut(&fd) else {
            return fail(libc::EBADF);
        };
        if s.port == 0 {
            // netlink_autobind on the first send of an unbound socket.
            s.port = pid();
        }
        (s.peer, s.port)
    };
    let replies = netlink::reply(request, port, &Node::from_env());
    soft_mlx5::log(format_args!(
        "RDMA netlink request on {fd} ({} bytes, type {:#x}): {} replies",
        request.len(),
        request.get(4..6).map_or(0, |t| u16::from_ne_bytes([t[0], t[1]])),
        replies.len()
    ));
    for r in &replies {
        // SAFETY: sendto system call on the pair's other end with a local buffer.
        let n = unsafe { libc::syscall(libc::SYS_sendto, peer, r.as_ptr(), r.len(), libc::MSG_NOSIGNAL, 0, 0) };
        if n < 0 {
            return -1;
        }
    }
    request.len() as ssize_t
}

/// Writes `sockaddr_nl { AF_NETLINK, nl_pid: port }` into `addr` (truncated to `*len`, as the
/// kernel does) and sets `*len` to its full size.
///
/// # Safety
/// `addr` has room for `*len` bytes; `len` is valid (either may be null: nothing is written).
unsafe fn put_addr(addr: *mut sockaddr, len: *mut socklen_t, port: u32) {
    if addr.is_null() || len.is_null() {
        return;
    }
    // SAFETY: an all-zero sockaddr_nl is valid.
    let mut nl: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    nl.nl_family = libc::AF_NETLINK as sa_family_t;
    nl.nl_pid = port;
    let size = std::mem::size_of::<libc::sockaddr_nl>();
    // SAFETY: the caller's length word.
    let room = unsafe { *len } as usize;
    // SAFETY: copying at most `room` bytes into the caller's buffer from a local struct.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&nl as *const libc::sockaddr_nl).cast::<u8>(),
            addr.cast::<u8>(),
            room.min(size),
        );
        *len = size as socklen_t;
    }
}

/// bind: any port is taken (nl_pid 0 autobinds to the pid); groups are ignored.
///
/// # Safety
/// `addr` points to `len` readable bytes (or is null).
pub(crate) unsafe fn bind(fd: c_int, addr: *const sockaddr, len: socklen_t) -> c_int {
    if addr.is_null() || (len as usize) < std::mem::size_of::<libc::sockaddr_nl>() {
        return fail(libc::EINVAL);
    }
    // SAFETY: the caller's address, at least a sockaddr_nl long (read unaligned).
    let nl = unsafe { std::ptr::read_unaligned(addr.cast::<libc::sockaddr_nl>()) };
    if c_int::from(nl.nl_family) != libc::AF_NETLINK {
        return fail(libc::EINVAL);
    }
    if let Some(s) = socks().get_mut(&fd) {
        s.port = if nl.nl_pid == 0 { pid() } else { nl.nl_pid };
    }
    0
}

/// getsockname: the socket's `sockaddr_nl`.
///
/// # Safety
/// As [`put_addr`].
pub(crate) unsafe fn getsockname(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t) -> c_int {
    if addr.is_null() || len.is_null() {
        return fail(libc::EFAULT);
    }
    let port = socks().get(&fd).map_or(0, |s| s.port);
    // SAFETY: the caller's buffer and length.
    unsafe { put_addr(addr, len, port) };
    0
}

/// getsockopt: SO_DOMAIN/SO_PROTOCOL/SO_TYPE say netlink; other SOL_SOCKET options are the
/// Unix socket's (SO_RCVBUF, SO_ERROR...); netlink-level options read as int 0.
///
/// # Safety
/// `val` has room for `*len` bytes; `len` is valid.
pub(crate) unsafe fn getsockopt(fd: c_int, level: c_int, name: c_int, val: *mut c_void, len: *mut socklen_t) -> c_int {
    let answer = match (level, name) {
        (libc::SOL_SOCKET, libc::SO_DOMAIN) => Some(libc::AF_NETLINK),
        (libc::SOL_SOCKET, libc::SO_PROTOCOL) => Some(NETLINK_RDMA),
        (libc::SOL_SOCKET, libc::SO_TYPE) => Some(socks().get(&fd).map_or(libc::SOCK_RAW, |s| s.ty)),
        (libc::SOL_SOCKET, _) => None,
        _ => Some(0),
    };
    let Some(v) = answer else {
        // SAFETY: forwarding the caller's buffers.
        return unsafe { libc::syscall(libc::SYS_getsockopt, fd, level, name, val, len) as c_int };
    };
    if val.is_null() || len.is_null() {
        return fail(libc::EFAULT);
    }
    // SAFETY: the caller's length word and buffer of that many bytes.
    unsafe {
        let n = (*len as usize).min(std::mem::size_of::<c_int>());
        std::ptr::copy_nonoverlapping((&v as *const c_int).cast::<u8>(), val.cast::<u8>(), n);
        *len = n as socklen_t;
    }
    0
}

/// recvfrom: the Unix socket's datagram (MSG_PEEK, MSG_TRUNC and MSG_DONTWAIT behave as on
/// netlink), from the kernel's address.
///
/// # Safety
/// `buf` has room for `len` bytes; `addr`/`addrlen` as for [`put_addr`].
pub(crate) unsafe fn recvfrom(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    flags: c_int,
    addr: *mut sockaddr,
    addrlen: *mut socklen_t,
) -> ssize_t {
    // SAFETY: forwarding the caller's buffer; no address is asked of the Unix socket.
    let n = unsafe { libc::syscall(libc::SYS_recvfrom, fd, buf, len, flags, 0, 0) } as ssize_t;
    if n >= 0 {
        // SAFETY: the caller's address buffer.
        unsafe { put_addr(addr, addrlen, 0) };
    }
    n
}

/// recvmsg: as [`recvfrom`], the name (when asked for) being the kernel's `sockaddr_nl`.
///
/// # Safety
/// `msg` points to a valid `struct msghdr` with writable iovecs, name and control buffers.
pub(crate) unsafe fn recvmsg(fd: c_int, msg: *mut libc::msghdr, flags: c_int) -> ssize_t {
    if msg.is_null() {
        return fail(libc::EFAULT);
    }
    // SAFETY: the caller's msghdr, copied so the Unix socket is asked for no name.
    let mut m = unsafe { std::ptr::read(msg) };
    m.msg_name = std::ptr::null_mut();
    m.msg_namelen = 0;
    // SAFETY: recvmsg system call with the caller's iovecs and control buffer.
    let n = unsafe { libc::syscall(libc::SYS_recvmsg, fd, &mut m as *mut libc::msghdr, flags) } as ssize_t;
    if n >= 0 {
        // SAFETY: writing back the fields the kernel updates, and the name, into the caller's
        // msghdr.
        unsafe {
            (*msg).msg_flags = m.msg_flags;
            (*msg).msg_controllen = m.msg_controllen;
            put_addr((*msg).msg_name.cast::<sockaddr>(), &mut (*msg).msg_namelen, 0);
        }
    }
    n
}
