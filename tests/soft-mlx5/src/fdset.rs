//! A set of file descriptors, one bit each, checked without a lock: the interposer asks it on
//! every write/read/close/mmap of the process, and a log line written while the device lock is
//! held must not deadlock on the question.

use std::sync::atomic::{AtomicU64, Ordering};

/// Descriptors below 65536.
pub struct FdSet([AtomicU64; 1024]);

impl FdSet {
    /// The empty set.
    pub const fn new() -> Self {
        FdSet([const { AtomicU64::new(0) }; 1024])
    }

    /// Adds (`on`) or removes `fd`.
    pub fn mark(&self, fd: i32, on: bool) {
        if let Some(w) = usize::try_from(fd).ok().and_then(|f| self.0.get(f / 64)) {
            let bit = 1u64 << (fd % 64);
            if on {
                w.fetch_or(bit, Ordering::SeqCst);
            } else {
                w.fetch_and(!bit, Ordering::SeqCst);
            }
        }
    }

    /// Whether `fd` is in the set.
    pub fn contains(&self, fd: i32) -> bool {
        usize::try_from(fd)
            .ok()
            .and_then(|f| self.0.get(f / 64))
            .is_some_and(|w| w.load(Ordering::SeqCst) & (1u64 << (fd % 64)) != 0)
    }
}

impl Default for FdSet {
    fn default() -> Self {
        Self::new()
    }
}
