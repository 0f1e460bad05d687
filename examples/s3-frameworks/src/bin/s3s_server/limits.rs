//! What any HTTP client can make the server hold, bounded: multipart uploads open at once,
//! bytes held by their uploaded parts, bytes being received at once (PUTs' and parts' RDMA
//! registrations and bodies). Each is a [`Budget`]; a request takes what it needs as a
//! [`Held`] before it allocates anything, and gives it back when the `Held` is dropped (the
//! request ends, the part or the upload is dropped), so nothing taken can leak.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A bounded amount that requests take from and give back.
#[derive(Debug)]
pub struct Budget {
    /// What is counted, for messages: "multipart uploads open", "bytes held by parts", ...
    pub what: &'static str,
    /// The command-line flag that sets the limit.
    pub flag: &'static str,
    pub limit: u64,
    used: AtomicU64,
}

/// Why a [`Budget::take`] was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// More than the whole limit: this request can never be served.
    TooLarge,
    /// Not now: `used` of the limit is taken by other requests.
    Full { used: u64 },
}

/// An amount taken from a [`Budget`], given back on drop.
#[derive(Debug)]
pub struct Held {
    budget: Arc<Budget>,
    n: u64,
}

impl Budget {
    pub fn new(what: &'static str, flag: &'static str, limit: u64) -> Arc<Budget> {
        Arc::new(Budget {
            what,
            flag,
            limit,
            used: AtomicU64::new(0),
        })
    }

    /// Takes `n`, unless that would pass the limit.
    ///
    /// # Errors
    /// [`Refused::TooLarge`] when `n` exceeds the limit itself, [`Refused::Full`] when what
    /// is held already leaves less than `n`.
    pub fn take(self: &Arc<Self>, n: u64) -> Result<Held, Refused> {
        if n > self.limit {
            return Err(Refused::TooLarge);
        }
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                (used <= self.limit - n).then_some(used + n)
            })
            .map_err(|used| Refused::Full { used })?;
        Ok(Held {
            budget: Arc::clone(self),
            n,
        })
    }

    /// What is held now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.n, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_refuses_past_its_limit_and_gets_back_what_is_dropped() {
        let b = Budget::new("bytes", "--max", 10);
        let six = b.take(6).unwrap();
        assert_eq!(b.take(5).unwrap_err(), Refused::Full { used: 6 });
        assert_eq!(b.take(11).unwrap_err(), Refused::TooLarge);
        let four = b.take(4).unwrap();
        assert_eq!(b.used(), 10);
        assert_eq!(b.take(1).unwrap_err(), Refused::Full { used: 10 });
        drop(six);
        assert_eq!(b.used(), 4);
        assert!(b.take(6).is_ok());
        drop(four);
        assert_eq!(b.used(), 0);
    }
}
