//! Event files: the async event file of a context and its completion channels, as ib_uverbs
//! keeps them (uverbs_main.c `ib_uverbs_event_read`, `ib_uverbs_comp_event_handler`).
//!
//! Events wait in a queue the device owns; the application's fd is one end of a socket pair
//! that carries one token byte per queued event, so poll/epoll/select and blocking or
//! non-blocking reads behave as on the kernel's file with no interposition. A read consumes a
//! token and returns the event at the head of the queue; only then does the event count as
//! reported to its object, which is what DESTROY_CQ/QP/SRQ return and what libibverbs waits
//! to see acknowledged before it lets the object go. Destroying an object drops its events
//! still queued (ib_uverbs_release_ucq), tokens included.

use crate::fdset::FdSet;
use std::collections::{BTreeMap, VecDeque};

/// The application's fds of every event file, for the interposer's lock-free check.
pub static EVENT_FDS: FdSet = FdSet::new();

/// The object an event belongs to (its reported counter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Owner {
    /// A CQ handle: its completion events.
    Cq(u32),
    /// A CQ handle: its async events (CQ error).
    CqAsync(u32),
    /// A QP handle.
    Qp(u32),
    /// An SRQ handle.
    Srq(u32),
    /// The device or a port.
    Device,
}

/// One event file.
#[derive(Debug, Default)]
pub struct EventFile {
    /// The end the device writes tokens into.
    pub token_fd: i32,
    /// Bytes of one event (8: ib_uverbs_comp_event_desc, 16: ib_uverbs_async_event_desc).
    pub event_size: usize,
    /// Queued events: their bytes (8 for completion, 16 for async) and owner.
    pub queue: VecDeque<(Vec<u8>, Owner)>,
}

/// Every event file of the device, by the fd the application holds.
#[derive(Debug, Default)]
pub struct EventFiles {
    files: BTreeMap<i32, EventFile>,
    /// Events read by the application, per owner.
    pub reported: BTreeMap<Owner, u32>,
}

impl EventFiles {
    /// Creates an event file whose events are `event_size` bytes; returns the application's fd.
    pub fn create(&mut self, event_size: usize) -> Result<i32, i32> {
        let mut fds = [0i32; 2];
        // SAFETY: fds has room for the pair socketpair writes.
        let rc = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EMFILE));
        }
        self.files.insert(
            fds[0],
            EventFile {
                token_fd: fds[1],
                event_size,
                queue: VecDeque::new(),
            },
        );
        EVENT_FDS.mark(fds[0], true);
        Ok(fds[0])
    }

    /// Whether `fd` is an event file.
    pub fn contains(&self, fd: i32) -> bool {
        self.files.contains_key(&fd)
    }

    /// The size of one event of file `fd`.
    pub fn event_size(&self, fd: i32) -> Option<usize> {
        self.files.get(&fd).map(|f| f.event_size)
    }

    /// Queues `bytes` for `owner` on file `fd`.
    pub fn push(&mut self, fd: i32, bytes: Vec<u8>, owner: Owner) {
        if let Some(f) = self.files.get_mut(&fd) {
            // SAFETY: one byte from a local to the token end this module owns; a full socket
            // buffer drops the event, as the kernel's bounded queue would.
            let n = unsafe { libc::send(f.token_fd, [1u8].as_ptr().cast(), 1, libc::MSG_DONTWAIT) };
            if n == 1 {
                f.queue.push_back((bytes, owner));
            }
        }
    }

    /// The application consumed one token from `fd`: the head event, counted as reported.
    pub fn take(&mut self, fd: i32) -> Option<Vec<u8>> {
        let (bytes, owner) = self.files.get_mut(&fd)?.queue.pop_front()?;
        *self.reported.entry(owner).or_default() += 1;
        Some(bytes)
    }

    /// Drops every queued event of `owner` (with its token) and returns, then forgets, how
    /// many of its events were reported.
    pub fn release(&mut self, owner: Owner) -> u32 {
        for (&fd, f) in self.files.iter_mut() {
            let before = f.queue.len();
            f.queue.retain(|(_, o)| *o != owner);
            for _ in f.queue.len()..before {
                let mut b = [0u8; 1];
                // SAFETY: drains one token from the application's end without blocking; the
                // tokens outnumber or equal the queue, so one is there.
                let _ = unsafe { libc::recv(fd, b.as_mut_ptr().cast(), 1, libc::MSG_DONTWAIT) };
            }
        }
        self.reported.remove(&owner).unwrap_or(0)
    }

    /// Closes the file `fd` (its token end; the application closes its own).
    pub fn close(&mut self, fd: i32) {
        EVENT_FDS.mark(fd, false);
        if let Some(f) = self.files.remove(&fd) {
            // SAFETY: the token end this module created.
            unsafe { libc::close(f.token_fd) };
        }
    }
}
