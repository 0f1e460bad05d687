//! The wire between emulated devices in different processes.
//!
//! Each process that loads soft-mlx5 runs its own device model (one per process, as the
//! interposer sees only its own process's memory). When `SOFT_MLX5_FABRIC` names a directory,
//! the processes meet there: every device joins a node directory (`node<N>`, one node = one
//! port with its own LID and GIDs) and claims a slot in it, a unix datagram socket
//! `node<N>/slot<K>`. The slot is part of every QP/DCT number and memory key the device hands
//! out ([`SLOT_SHIFT`]; QP numbers in blocks each process claims in the node directory,
//! [`QPN_BLOCK_SHIFT`]), so the numbers stay unique across all processes of a node, as they
//! are across the users of one HCA, and a requester finds the process that owns a destination
//! QP from its number.
//!
//! A request for a QP of another process travels as a message to that process's socket; the
//! device thread there executes it against its own memory (the responder needs nothing else)
//! and answers. No process ever reads another's memory, so no ptrace rights are needed.
//! Sends never block (what does not fit waits in an outbox), so two devices sending to each
//! other cannot deadlock. A process that dies leaves a socket nobody reads: a send to it is
//! refused, which the requester takes as a packet lost on the wire (it times out and retries
//! until retry-exceeded, as with a peer that vanished from a real fabric).

pub mod faults;
pub mod message;

use std::collections::{HashMap, VecDeque};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Mkey indexes are `slot << SLOT_SHIFT | n`; a device's first block of QP/DCT numbers is the
/// one its slot names ([`QPN_BLOCK_SHIFT`]). 2^10 processes per node (numbers are 24 bits).
pub const SLOT_SHIFT: u32 = 14;
/// QP/DCT numbers belong to processes in blocks of 2^QPN_BLOCK_SHIFT: a node's 24-bit space
/// (one HCA's, as several processes share it) holds [`QPN_BLOCKS`] blocks, each claimed by one
/// process in the node directory (`node<N>/qpn<B>`, a symlink to `<slot>.<pid>`), so a process
/// may hold as many as the node has free and a requester finds the owner of any number.
pub const QPN_BLOCK_SHIFT: u32 = 10;
/// Blocks of QP numbers in a node.
pub const QPN_BLOCKS: u32 = 1 << (24 - QPN_BLOCK_SHIFT);
/// Slots per node.
pub const MAX_SLOTS: u32 = 1 << (24 - SLOT_SHIFT);
/// Nodes a fabric may have (LIDs and GIDs are derived from the node index: LID 1+N, RoCE GID
/// ::ffff:10.78.hi.lo with hi.lo = N+1, `Profile::gid`); each node is a process or several.
pub const MAX_NODES: u32 = 4096;
/// Bytes of one datagram's payload; longer messages travel in fragments.
const FRAGMENT: usize = 60 * 1024;
/// Fragment header: magic, message id, last-fragment flag.
const HEADER: usize = 4 + 8 + 1;
const MAGIC: u32 = 0x534d_5835; // "SMX5"

/// This process's endpoint on the fabric.
pub struct Fabric {
    fd: OwnedFd,
    /// The slot this device claimed in its node.
    pub slot: u32,
    root: PathBuf,
    outbox: VecDeque<(Vec<u8>, Vec<u8>)>,
    partial: HashMap<Vec<u8>, Vec<u8>>,
    next_msg: u64,
    /// This device's incarnation: a responder tells a new process in an old slot (whose
    /// sequence numbers start again) from the one that was there.
    pub origin: u64,
    /// The lossy wire, when asked for (`SOFT_MLX5_FAULTS`).
    pub faults: Option<faults::Faults>,
    /// Messages held back by a reorder or delay fault: (release time, destination, message).
    held: Vec<(std::time::Instant, Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for Fabric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fabric {{ root: {:?}, slot: {} }}", self.root, self.slot)
    }
}

/// What a send found at the other end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Handed to the peer's socket (or queued behind earlier messages to send).
    Sent,
    /// Nobody listens there (no such process, or it died): lost, as on a wire.
    Lost,
    /// Lost on the way by the lossy wire's fault (`SOFT_MLX5_FAULTS`). A wire's sender cannot
    /// tell; the emulator's can, and uses it only to run the local ACK timer from the moment
    /// of the loss, as silicon's timer runs from the lost packet: the emulator's own slowness
    /// (a large message between processes on a busy machine) is then never taken for a loss.
    Faulted,
}

impl Fabric {
    /// Joins the fabric at `root` as a device of node `node`: claims the lowest free slot
    /// (a socket whose process died is taken over), under an exclusive lock on the node
    /// directory so that two processes never claim the same one.
    ///
    /// Errors: the directory or socket cannot be made (errno).
    pub fn join(root: &Path, node: u32) -> std::io::Result<Fabric> {
        let dir = root.join(format!("node{node}"));
        std::fs::create_dir_all(&dir)?;
        let lock = std::fs::File::create(dir.join("lock"))?;
        // SAFETY: flock on a file descriptor this function owns; released when `lock` drops.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let fd = socket()?;
        for slot in 1..MAX_SLOTS {
            let path = slot_path(root, node, slot);
            match bind(&fd, &path) {
                Ok(()) => {
                    crate::log(format_args!("fabric {}: node {node} slot {slot}", root.display()));
                    return Ok(Fabric::bound(fd, root, slot));
                }
                Err(e) if e.raw_os_error() == Some(libc::EADDRINUSE) => {
                    if probe(&fd, &path) == Delivery::Lost {
                        // The process that bound it is gone: take the slot over.
                        std::fs::remove_file(&path)?;
                        bind(&fd, &path)?;
                        crate::log(format_args!("fabric: node {node} slot {slot} taken over"));
                        return Ok(Fabric::bound(fd, root, slot));
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::from_raw_os_error(libc::ENOSPC))
    }

    /// Claims a block of `node`'s QP numbers for this device: `first` if free, else the next
    /// free one (wrapping). A block held by a device that is gone (its slot's socket unread,
    /// or its process dead) is free. None when every block is held: the node's QP numbers
    /// are exhausted. Under the node directory's lock, as slots are claimed.
    pub fn claim_qpn_block(&self, node: u32, first: u32) -> Option<u32> {
        let dir = self.root.join(format!("node{node}"));
        let lock = std::fs::File::create(dir.join("lock")).ok()?;
        // SAFETY: flock on a file descriptor this function owns; released when `lock` drops.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return None;
        }
        let me = format!("{}.{}", self.slot, std::process::id());
        // Most blocks share a few holders: each is looked at once per claim.
        let mut gone: HashMap<(u32, u32), bool> = HashMap::new();
        for i in 0..QPN_BLOCKS {
            let b = (first + i) % QPN_BLOCKS;
            let path = dir.join(format!("qpn{b}"));
            match std::os::unix::fs::symlink(&me, &path) {
                Ok(()) => return Some(b),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = read_holder(&path);
                    let is_gone = match holder {
                        Some(h) => *gone.entry(h).or_insert_with(|| self.holder_gone(&dir, h)),
                        None => true,
                    };
                    if is_gone {
                        let _ = std::fs::remove_file(&path);
                        if std::os::unix::fs::symlink(&me, &path).is_ok() {
                            return Some(b);
                        }
                    }
                }
                Err(_) => return None,
            }
        }
        None
    }

    /// Whether the device (slot, pid) that claimed a block in `node_dir` is gone: its slot's socket has no
    /// reader, or its process no longer exists (its slot may have been taken over since).
    fn holder_gone(&self, node_dir: &Path, (slot, pid): (u32, u32)) -> bool {
        if probe(&self.fd, &node_dir.join(format!("slot{slot}"))) == Delivery::Lost {
            return true;
        }
        // SAFETY: kill with signal 0 sends nothing; it only checks the process exists.
        pid != std::process::id() && unsafe { libc::kill(pid as libc::pid_t, 0) } != 0 && errno() == libc::ESRCH
    }

    /// The slot of the device holding block `block` of `node`'s QP numbers, if any.
    pub fn qpn_block_holder(&self, node: u32, block: u32) -> Option<u32> {
        read_holder(&self.root.join(format!("node{node}")).join(format!("qpn{block}"))).map(|(slot, _)| slot)
    }

    fn bound(fd: OwnedFd, root: &Path, slot: u32) -> Fabric {
        Fabric {
            fd,
            slot,
            root: root.to_path_buf(),
            outbox: VecDeque::new(),
            partial: HashMap::new(),
            next_msg: 1,
            origin: incarnation(),
            faults: None,
            held: Vec::new(),
        }
    }

    /// A fresh request sequence number (never 0).
    pub fn next_seq(&mut self) -> u64 {
        self.next_msg += 1;
        self.next_msg
    }

    /// The socket (for poll()).
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The socket address of the device in `slot` of `node`.
    pub fn peer(&self, node: u32, slot: u32) -> Vec<u8> {
        slot_path(&self.root, node, slot).as_os_str().as_bytes().to_vec()
    }

    /// Sends `msg` to the socket at `to`, in fragments; never blocks. On a lossy wire the
    /// message may be lost, duplicated or held back (the sender cannot tell, as on a wire).
    pub fn send(&mut self, to: &[u8], msg: &[u8]) -> Delivery {
        let fate = self.faults.as_mut().map_or(faults::Fate::Deliver, faults::Faults::fate);
        match fate {
            faults::Fate::Deliver => self.transmit(to, msg),
            faults::Fate::Lose => {
                crate::log(format_args!(
                    "fabric: a message to {} lost (fault)",
                    String::from_utf8_lossy(to)
                ));
                Delivery::Faulted
            }
            faults::Fate::Duplicate => {
                self.transmit(to, msg);
                self.transmit(to, msg)
            }
            faults::Fate::Hold(d) => {
                self.held
                    .push((std::time::Instant::now() + d, to.to_vec(), msg.to_vec()));
                Delivery::Sent
            }
        }
    }

    /// Sends `msg` to `to` as [`Fabric::send`] does, but past the lossy wire's faults: for
    /// what models a timer, not a packet.
    pub fn send_past_faults(&mut self, to: &[u8], msg: &[u8]) -> Delivery {
        self.transmit(to, msg)
    }

    /// Queues `msg` for `to` as fragments and sends what it can.
    fn transmit(&mut self, to: &[u8], msg: &[u8]) -> Delivery {
        let id = self.next_msg;
        self.next_msg += 1;
        let mut chunks = msg.chunks(FRAGMENT).peekable();
        let mut first = true;
        while first || chunks.peek().is_some() {
            first = false;
            let chunk = chunks.next().unwrap_or(&[]);
            let mut d = Vec::with_capacity(HEADER + chunk.len());
            d.extend_from_slice(&MAGIC.to_le_bytes());
            d.extend_from_slice(&id.to_le_bytes());
            d.push(u8::from(chunks.peek().is_none()));
            d.extend_from_slice(chunk);
            self.outbox.push_back((to.to_vec(), d));
        }
        match self.flush() {
            Some((dest, Delivery::Lost)) if dest == to => Delivery::Lost,
            _ => Delivery::Sent,
        }
    }

    /// Sends what waits in the outbox, in order, until the first that does not fit. A
    /// datagram to a socket nobody reads is dropped (with everything queued for it); returns
    /// the last such destination.
    pub fn flush(&mut self) -> Option<(Vec<u8>, Delivery)> {
        if !self.held.is_empty() {
            let now = std::time::Instant::now();
            let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held)
                .into_iter()
                .partition(|(at, _, _)| *at <= now);
            self.held = later;
            for (_, to, msg) in due {
                self.transmit(&to, &msg);
            }
        }
        let mut lost = None;
        while let Some((to, d)) = self.outbox.front() {
            match sendto(&self.fd, to, d) {
                Ok(()) => {
                    self.outbox.pop_front();
                }
                Err(libc::EAGAIN) => break,
                Err(e) => {
                    crate::log(format_args!(
                        "fabric: {} unreachable (errno {e}): dropped",
                        String::from_utf8_lossy(to)
                    ));
                    let dead = to.clone();
                    self.outbox.retain(|(t, _)| *t != dead);
                    lost = Some((dead, Delivery::Lost));
                }
            }
        }
        lost
    }

    /// Whether a device still listens at `to` (an empty datagram, which receivers ignore).
    pub fn alive(&self, to: &[u8]) -> bool {
        sendto(&self.fd, to, &[]).map_or_else(|e| e == libc::EAGAIN, |()| true)
    }

    /// Every whole message that has arrived, with its sender's address; never blocks.
    pub fn receive(&mut self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; HEADER + FRAGMENT];
        while let Some((n, from)) = recvfrom(&self.fd, &mut buf) {
            if n < HEADER || u32::from_le_bytes(buf[..4].try_into().unwrap_or_default()) != MAGIC {
                continue;
            }
            let last = buf[12] != 0;
            let part = self.partial.entry(from.clone()).or_default();
            part.extend_from_slice(&buf[HEADER..n]);
            if last {
                let msg = self.partial.remove(&from).unwrap_or_default();
                out.push((from, msg));
            }
        }
        out
    }
}

/// A number that differs between processes and between runs (pid and clock), never 0.
fn incarnation() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (u64::from(std::process::id()) << 40 ^ nanos) | 1
}

/// (slot, pid) of a QP number block's holder (`<slot>.<pid>`).
fn read_holder(path: &Path) -> Option<(u32, u32)> {
    let target = std::fs::read_link(path).ok()?;
    let (slot, pid) = target.to_str()?.split_once('.')?;
    Some((slot.parse().ok()?, pid.parse().ok()?))
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn slot_path(root: &Path, node: u32, slot: u32) -> PathBuf {
    root.join(format!("node{node}")).join(format!("slot{slot}"))
}

fn socket() -> std::io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the result is checked before it is wrapped.
    let fd = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor this function owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // Room for a few full fragments in flight; above net.core.wmem_max only for root.
    let size: libc::c_int = 4 << 20;
    for opt in [
        libc::SO_SNDBUFFORCE,
        libc::SO_SNDBUF,
        libc::SO_RCVBUFFORCE,
        libc::SO_RCVBUF,
    ] {
        // SAFETY: setsockopt with a c_int option value of the right size; failure is harmless
        // (the default buffer holds a fragment).
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as u32,
            )
        };
    }
    Ok(fd)
}

fn sockaddr(path: &[u8]) -> Option<(libc::sockaddr_un, libc::socklen_t)> {
    // SAFETY: sockaddr_un is plain old data; all-zero is a valid value.
    let mut sa: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if path.len() >= sa.sun_path.len() {
        return None;
    }
    sa.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (d, s) in sa.sun_path.iter_mut().zip(path) {
        *d = *s as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + path.len() + 1;
    Some((sa, len as libc::socklen_t))
}

fn bind(fd: &OwnedFd, path: &Path) -> std::io::Result<()> {
    let (sa, len) =
        sockaddr(path.as_os_str().as_bytes()).ok_or(std::io::Error::from_raw_os_error(libc::ENAMETOOLONG))?;
    // SAFETY: `sa` is a valid sockaddr_un of `len` bytes.
    if unsafe { libc::bind(fd.as_raw_fd(), (&sa as *const libc::sockaddr_un).cast(), len) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn sendto(fd: &OwnedFd, to: &[u8], data: &[u8]) -> Result<(), i32> {
    let (sa, len) = sockaddr(to).ok_or(libc::ENAMETOOLONG)?;
    // SAFETY: `data` is a live slice; `sa` a valid sockaddr_un of `len` bytes.
    let n = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            data.as_ptr().cast(),
            data.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            (&sa as *const libc::sockaddr_un).cast(),
            len,
        )
    };
    if n < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
    }
    Ok(())
}

fn probe(fd: &OwnedFd, path: &Path) -> Delivery {
    match sendto(fd, path.as_os_str().as_bytes(), &[]) {
        Ok(()) | Err(libc::EAGAIN) => Delivery::Sent,
        Err(_) => Delivery::Lost,
    }
}

fn recvfrom(fd: &OwnedFd, buf: &mut [u8]) -> Option<(usize, Vec<u8>)> {
    // SAFETY: sockaddr_un is plain old data; all-zero is a valid value.
    let mut sa: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
    // SAFETY: `buf` and `sa` are live and writable for the lengths given.
    let n = unsafe {
        libc::recvfrom(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT,
            (&mut sa as *mut libc::sockaddr_un).cast(),
            &mut len,
        )
    };
    if n < 0 {
        return None;
    }
    let plen = (len as usize).saturating_sub(std::mem::size_of::<libc::sa_family_t>());
    let path: Vec<u8> = sa.sun_path[..plen.min(sa.sun_path.len())]
        .iter()
        .map(|&c| c as u8)
        .take_while(|&c| c != 0)
        .collect();
    Some((n as usize, path))
}
