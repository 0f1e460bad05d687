//! Event files: the async event file of a context and its completion channels, as ib_uverbs
//! keeps them (uverbs_main.c `ib_uverbs_event_read`, `ib_uverbs_comp_event_handler`).
//!
//! Events wait in a queue the device owns; the application's fd is one end of a datagram
//! socket pair that carries one token per queued event, so poll/epoll/select see the file
//! readable exactly while events wait, as on the kernel's file, with no interposition. A read
//! takes a token and returns the event at the head of the queue; only then does the event
//! count as reported to its object, which is what DESTROY_CQ/QP/SRQ return and what
//! libibverbs waits to see acknowledged before it lets the object go. Destroying an object
//! drops its events still queued (ib_uverbs_release_ucq), tokens included.
//!
//! A queue the kernel closes (the device disassociated: [`EventFiles::close_queue`]) loses its
//! events, and from then on a read fails with EIO and the file polls as `EPOLLERR` alone
//! (uverbs_main.c `ib_uverbs_event_read`, `ib_uverbs_event_poll`; uverbs_std_types.c
//! `ib_uverbs_free_event_queue`). A datagram pair can say exactly that: when the device's end
//! disconnects while a datagram of the application's end waits in it, the kernel sets
//! ECONNRESET on the application's end without shutting it down (af_unix.c
//! `unix_dgram_disconnected`), and `unix_dgram_poll` then reports `EPOLLERR` and nothing else,
//! for as long as nobody receives on it (which would consume the error): a closed file is
//! never received on again.

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
    /// The kernel closed the queue (`is_closed`): nothing is queued any more, reads fail with
    /// EIO.
    pub closed: bool,
}

impl EventFile {
    /// Drops the queued events whose owner `drop` picks, with their tokens from `fd` (the
    /// application's end of this file), unreported.
    fn drop_where(&mut self, fd: i32, drop: impl Fn(Owner) -> bool) {
        let before = self.queue.len();
        self.queue.retain(|(_, o)| !drop(*o));
        for _ in self.queue.len()..before {
            let mut b = [0u8; 1];
            // SAFETY: drains one token from the application's end without blocking; the
            // tokens equal the queue in number, so one is there.
            let _ = unsafe { libc::recv(fd, b.as_mut_ptr().cast(), 1, libc::MSG_DONTWAIT) };
        }
    }
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
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
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
                closed: false,
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

    /// Queues `bytes` for `owner` on file `fd`; nothing on a closed queue
    /// (`ib_uverbs_comp_handler`, `ib_uverbs_async_handler`: `is_closed`).
    pub fn push(&mut self, fd: i32, bytes: Vec<u8>, owner: Owner) {
        if let Some(f) = self.files.get_mut(&fd).filter(|f| !f.closed) {
            // SAFETY: one byte from a local to the token end this module owns; a full socket
            // buffer drops the event, as the kernel's bounded queue would.
            let n = unsafe { libc::send(f.token_fd, [1u8].as_ptr().cast(), 1, libc::MSG_DONTWAIT) };
            if n == 1 {
                f.queue.push_back((bytes, owner));
            }
        }
    }

    /// One read of file `fd` that must not wait (`ib_uverbs_event_read`): the head event,
    /// counted as reported, with its token; None when nothing is queued; EIO once the queue
    /// is closed and empty; EBADF for no such file.
    pub fn read(&mut self, fd: i32) -> Result<Option<Vec<u8>>, i32> {
        let f = self.files.get_mut(&fd).ok_or(libc::EBADF)?;
        let Some((bytes, owner)) = f.queue.pop_front() else {
            return if f.closed { Err(libc::EIO) } else { Ok(None) };
        };
        let mut b = [0u8; 1];
        // SAFETY: takes the event's token from the application's end without blocking; tokens
        // and queued events are equal in number under the device lock.
        let _ = unsafe { libc::recv(fd, b.as_mut_ptr().cast(), 1, libc::MSG_DONTWAIT) };
        *self.reported.entry(owner).or_default() += 1;
        Ok(Some(bytes))
    }

    /// The kernel closes file `fd`'s queue (`ib_uverbs_free_event_queue`, at
    /// disassociation): its queued events are freed unreported, and the file reads EIO and
    /// polls as `EPOLLERR` alone from now on (see the module's notes), which wakes whoever
    /// polls or blocks in a read on it.
    pub fn close_queue(&mut self, fd: i32) {
        let Some(f) = self.files.get_mut(&fd).filter(|f| !f.closed) else {
            return;
        };
        f.closed = true;
        // Before the error is set: a receive would consume it.
        f.drop_where(fd, |_| true);
        // SAFETY: one byte from a local, from the application's end into the device's (its
        // peer), which waits there unread; then the device's end disconnects (AF_UNSPEC):
        // with a datagram of its peer queued, the kernel sets ECONNRESET on the application's
        // end and wakes its waiters. Plain socket calls on descriptors this module created.
        unsafe {
            libc::send(fd, [0u8].as_ptr().cast(), 1, libc::MSG_DONTWAIT);
            let mut unspec: libc::sockaddr = std::mem::zeroed();
            unspec.sa_family = libc::AF_UNSPEC as libc::sa_family_t;
            libc::connect(
                f.token_fd,
                &unspec,
                std::mem::size_of::<libc::sockaddr>() as libc::socklen_t,
            );
        }
    }

    /// Drops every queued event whose owner is not the device (their objects' events, freed
    /// when the objects are: `ib_uverbs_release_uevent`), tokens included, unreported.
    pub fn drop_object_events(&mut self, fd: i32) {
        if let Some(f) = self.files.get_mut(&fd) {
            f.drop_where(fd, |o| o != Owner::Device);
        }
    }

    /// Drops every queued event of `owner` (with its token) and returns, then forgets, how
    /// many of its events were reported.
    pub fn release(&mut self, owner: Owner) -> u32 {
        for (&fd, f) in self.files.iter_mut() {
            f.drop_where(fd, |o| o == owner);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// poll(2) of `fd` for POLLIN, waiting up to `ms` milliseconds: (its result, revents).
    fn poll_in(fd: i32, ms: i32) -> (i32, i16) {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        assert!(n >= 0);
        (n, p.revents)
    }

    /// poll(2) of `fd` for POLLIN, without waiting: its revents.
    fn revents(fd: i32) -> i16 {
        poll_in(fd, 0).1
    }

    /// Closes file `fd`, both ends.
    fn discard(mut files: EventFiles, fd: i32) {
        files.close(fd);
        // SAFETY: the application's end, which the test created.
        unsafe { libc::close(fd) };
    }

    #[test]
    fn a_file_is_readable_exactly_while_events_wait_and_each_read_takes_one_counted_as_reported() {
        let mut files = EventFiles::default();
        let fd = files.create(8).unwrap();
        assert_eq!(revents(fd), 0);
        assert_eq!(
            files.read(fd),
            Ok(None),
            "nothing queued: the caller waits or says EAGAIN"
        );
        files.push(fd, vec![1; 8], Owner::Cq(3));
        files.push(fd, vec![2; 8], Owner::Cq(3));
        assert_eq!(revents(fd), libc::POLLIN);
        assert_eq!(files.read(fd), Ok(Some(vec![1; 8])));
        assert_eq!(files.read(fd), Ok(Some(vec![2; 8])));
        assert_eq!(revents(fd), 0, "both tokens taken");
        assert_eq!(files.release(Owner::Cq(3)), 2);
        assert_eq!(files.read(-1), Err(libc::EBADF));
        discard(files, fd);
    }

    /// ib_uverbs_free_event_queue then ib_uverbs_event_read / ib_uverbs_event_poll: queued
    /// events freed unreported, reads EIO, the file polls as POLLERR alone (no POLLIN, no
    /// POLLHUP: a reactor that waits for readability alone never wakes), for good, and
    /// nothing is queued any more.
    #[test]
    fn a_closed_queue_drops_its_events_reads_eio_and_polls_as_pollerr_alone_for_good() {
        let mut files = EventFiles::default();
        let fd = files.create(8).unwrap();
        files.push(fd, vec![7; 8], Owner::Cq(5));
        files.close_queue(fd);
        for _ in 0..3 {
            assert_eq!(revents(fd), libc::POLLERR);
            assert_eq!(files.read(fd), Err(libc::EIO));
        }
        files.push(fd, vec![8; 8], Owner::Cq(5));
        assert_eq!(files.read(fd), Err(libc::EIO), "a closed queue takes no event");
        assert_eq!(revents(fd), libc::POLLERR);
        assert_eq!(files.release(Owner::Cq(5)), 0, "the dropped event was never reported");
        // epoll, as tokio's reactor registers (edge-triggered, EPOLLIN | EPOLLRDHUP): EPOLLERR.
        // SAFETY: plain epoll calls on descriptors owned here.
        unsafe {
            let ep = libc::epoll_create1(libc::EPOLL_CLOEXEC);
            let mut ev = libc::epoll_event {
                events: (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET) as u32,
                u64: 1,
            };
            assert_eq!(libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev), 0);
            let mut out = [libc::epoll_event { events: 0, u64: 0 }];
            assert_eq!(libc::epoll_wait(ep, out.as_mut_ptr(), 1, 0), 1);
            let events = out[0].events;
            assert_eq!(events, libc::EPOLLERR as u32);
            libc::close(ep);
        }
        discard(files, fd);
    }

    #[test]
    fn closing_the_queue_wakes_a_poller_already_waiting() {
        let mut files = EventFiles::default();
        let fd = files.create(8).unwrap();
        let waiter = std::thread::spawn(move || poll_in(fd, 10_000));
        std::thread::sleep(std::time::Duration::from_millis(50));
        files.close_queue(fd);
        assert_eq!(waiter.join().unwrap(), (1, libc::POLLERR));
        discard(files, fd);
    }

    #[test]
    fn dropping_object_events_keeps_the_devices_own() {
        let mut files = EventFiles::default();
        let fd = files.create(16).unwrap();
        files.push(fd, vec![1; 16], Owner::Qp(4));
        files.push(fd, vec![2; 16], Owner::Device);
        files.push(fd, vec![3; 16], Owner::CqAsync(6));
        files.drop_object_events(fd);
        assert_eq!(files.read(fd), Ok(Some(vec![2; 16])));
        assert_eq!(files.read(fd), Ok(None));
        assert_eq!(revents(fd), 0, "the dropped events' tokens went with them");
        discard(files, fd);
    }
}
