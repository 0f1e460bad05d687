//! Blocking on a file descriptor with a deadline (`poll(2)`), shared by every event source of
//! the crate: completion channels, async device events and the connection manager's channels.

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Puts `fd` in non-blocking mode, so that reading an event never blocks and the fd can sit in
/// an epoll set.
pub(crate) fn set_nonblocking(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL on a descriptor the caller owns; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The instant `timeout` from now (None: wait forever).
pub(crate) fn deadline(timeout: Option<Duration>) -> Option<Instant> {
    timeout.map(|t| Instant::now().checked_add(t).unwrap_or_else(far_future))
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(60 * 60 * 24 * 365)
}

/// Waits until `fd` is readable or `deadline` passes; returns whether it is readable.
/// Interrupted waits resume with the remaining time.
pub(crate) fn wait_readable(fd: RawFd, deadline: Option<Instant>) -> std::io::Result<bool> {
    poll_readable(&mut [readable(fd)], deadline)
}

/// Waits until one of `fds` is readable or `deadline` passes; returns whether one is.
pub(crate) fn wait_any_readable(fds: &[RawFd], deadline: Option<Instant>) -> std::io::Result<bool> {
    let mut pfds: Vec<libc::pollfd> = fds.iter().map(|&fd| readable(fd)).collect();
    poll_readable(&mut pfds, deadline)
}

/// A `pollfd` asking whether `fd` is readable.
fn readable(fd: RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// `poll(2)` on `pfds` until one is ready or `deadline` passes; interrupted waits resume with
/// the remaining time.
fn poll_readable(pfds: &mut [libc::pollfd], deadline: Option<Instant>) -> std::io::Result<bool> {
    loop {
        let timeout_ms: libc::c_int = match deadline {
            None => -1,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                // Round up so a sub-millisecond remainder still waits instead of spinning.
                let ms = left.as_micros().div_ceil(1000);
                ms.min(libc::c_int::MAX as u128) as libc::c_int
            }
        };
        // SAFETY: `pfds` is a live array of `pfds.len()` pollfds for the duration of the call.
        let n = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout_ms) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n > 0 {
            return Ok(true);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_readable_times_out_on_a_silent_pipe_and_wakes_on_data() {
        let mut fds = [0; 2];
        // SAFETY: fds has room for the two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let start = Instant::now();
        assert!(!wait_readable(fds[0], deadline(Some(Duration::from_millis(30)))).unwrap());
        assert!(start.elapsed() >= Duration::from_millis(30));
        // SAFETY: writes one byte from a live buffer into the pipe.
        assert_eq!(unsafe { libc::write(fds[1], b"x".as_ptr().cast(), 1) }, 1);
        assert!(wait_readable(fds[0], deadline(Some(Duration::from_secs(5)))).unwrap());
        // SAFETY: closes the two descriptors opened above.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }

    #[test]
    fn wait_any_readable_times_out_on_silent_pipes_and_wakes_when_the_second_has_data() {
        let (mut a, mut b) = ([0; 2], [0; 2]);
        // SAFETY: each array has room for the two descriptors.
        assert_eq!(unsafe { libc::pipe(a.as_mut_ptr()) }, 0);
        // SAFETY: as above.
        assert_eq!(unsafe { libc::pipe(b.as_mut_ptr()) }, 0);
        assert!(!wait_any_readable(&[a[0], b[0]], deadline(Some(Duration::from_millis(20)))).unwrap());
        // SAFETY: writes one byte from a live buffer into the second pipe.
        assert_eq!(unsafe { libc::write(b[1], b"x".as_ptr().cast(), 1) }, 1);
        assert!(wait_any_readable(&[a[0], b[0]], deadline(Some(Duration::from_secs(5)))).unwrap());
        for fd in a.into_iter().chain(b) {
            // SAFETY: closes a descriptor opened above, once.
            unsafe { libc::close(fd) };
        }
    }
}
