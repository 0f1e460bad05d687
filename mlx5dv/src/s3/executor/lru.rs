//! A least-recently-used order kept lazily, for the executor's caches (idle clients'
//! endpoints, unused address handles): no search when an entry is used again.

use std::collections::VecDeque;

/// Keys in the order they were last let go of, each with a stamp its owner keeps. An entry
/// whose owner no longer carries its stamp (used again, or dropped) is stale: skipped when
/// met, and dropped in bulk once the queue holds twice `bound` entries, so taking an entry
/// back out of the order costs its owner one stamp cleared and [`Lru::unlink`].
pub(super) struct Lru<K> {
    queue: VecDeque<(K, u64)>,
    next: u64,
    /// Entries whose owner carries their stamp.
    live: usize,
    /// The live entries the cache keeps (the queue holds at most twice that many).
    bound: usize,
}

impl<K: Copy> Lru<K> {
    /// An empty order for a cache of `bound` entries.
    pub(super) fn new(bound: usize) -> Lru<K> {
        Lru {
            queue: VecDeque::with_capacity(2 * bound + 1),
            next: 0,
            live: 0,
            bound,
        }
    }

    /// The live entries the cache keeps.
    pub(super) fn bound(&self) -> usize {
        self.bound
    }

    /// Live entries.
    pub(super) fn live(&self) -> usize {
        self.live
    }

    /// Puts `key` last (the most recently used) and returns the stamp its owner keeps.
    /// `current` tells whether an entry's owner still carries its stamp (for the bulk drop).
    pub(super) fn push(&mut self, key: K, current: impl Fn(&K, u64) -> bool) -> u64 {
        if self.queue.len() >= 2 * self.bound.max(1) {
            self.queue.retain(|(k, stamp)| current(k, *stamp));
        }
        let stamp = self.next;
        self.next += 1;
        self.live += 1;
        self.queue.push_back((key, stamp));
        stamp
    }

    /// A live entry left the order: its owner cleared its stamp.
    pub(super) fn unlink(&mut self) {
        self.live -= 1;
    }

    /// Takes the least recently used live entry out of the order; `take` clears its owner's
    /// stamp and says whether the owner carried it (false: a stale entry, skipped).
    pub(super) fn pop(&mut self, mut take: impl FnMut(&K, u64) -> bool) -> Option<K> {
        while let Some((k, stamp)) = self.queue.pop_front() {
            if take(&k, stamp) {
                self.live -= 1;
                return Some(k);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::Lru;

    #[test]
    fn the_least_recently_let_go_live_entry_comes_out_first_and_stale_ones_are_skipped() {
        let mut owners: [Option<u64>; 4] = [None; 4];
        let mut lru = Lru::new(2);
        for (k, owner) in owners.iter_mut().enumerate().take(3) {
            *owner = Some(lru.push(k, |_, _| true));
        }
        // Key 0 used again: its entry is stale.
        owners[0] = None;
        lru.unlink();
        assert_eq!(lru.live(), 2);
        let mut take = |k: &usize, s: u64| owners[*k].take_if_eq(s);
        assert_eq!(lru.pop(&mut take), Some(1));
        assert_eq!(lru.pop(&mut take), Some(2));
        assert_eq!(lru.pop(&mut take), None);
        assert_eq!(lru.live(), 0);
    }

    #[test]
    fn the_queue_never_holds_more_than_twice_its_bound_of_entries() {
        let mut owner = None;
        let mut lru = Lru::new(3);
        for _ in 0..100 {
            // One key let go of and used again, over and over: every older entry is stale.
            if owner.take().is_some() {
                lru.unlink();
            }
            owner = Some(lru.push(7u8, |_, s| owner == Some(s)));
            assert!(lru.queue.len() <= 2 * lru.bound() + 1, "{}", lru.queue.len());
        }
        assert_eq!(lru.live(), 1);
    }

    trait TakeIfEq {
        fn take_if_eq(&mut self, s: u64) -> bool;
    }

    impl TakeIfEq for Option<u64> {
        fn take_if_eq(&mut self, s: u64) -> bool {
            if *self == Some(s) {
                *self = None;
                true
            } else {
                false
            }
        }
    }
}
