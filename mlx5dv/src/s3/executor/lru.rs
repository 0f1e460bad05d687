//! A least-recently-used order kept lazily, for the executor's caches (idle clients'
//! endpoints, unused address handles): no search when an entry is used again.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hash};

/// Keys in the order they were let go of, each with a stamp its owner (the entry of the
/// key in the cache's map) keeps in a field ([`Stamp`]). An entry whose owner no longer
/// carries its stamp (used again, or dropped) is stale: skipped when met, and dropped in bulk
/// once the queue holds twice `bound` entries, so taking an entry back out of the order
/// costs its owner one stamp cleared and [`Lru::unlink`].
pub(super) struct Lru<K> {
    queue: VecDeque<(K, u64)>,
    next: u64,
    /// Entries whose owner carries their stamp.
    live: usize,
    /// The live entries the cache keeps (the queue holds at most twice that many).
    bound: usize,
}

/// The field of a cache's values that holds their stamp in an [`Lru`] while they are in it.
pub(super) type Stamp<V> = fn(&mut V) -> &mut Option<u64>;

impl<K: Copy + Eq + Hash> Lru<K> {
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

    /// Puts `key` last (the most recently used), its stamp in its owner in `owners` (a no-op
    /// for a key without one).
    pub(super) fn push<V, S: BuildHasher>(&mut self, owners: &mut HashMap<K, V, S>, key: K, stamp: Stamp<V>) {
        if !owners.contains_key(&key) {
            return;
        }
        if self.queue.len() >= 2 * self.bound.max(1) {
            self.queue
                .retain(|(k, s)| owners.get_mut(k).is_some_and(|v| *stamp(v) == Some(*s)));
        }
        let s = self.next;
        self.next += 1;
        self.live += 1;
        self.queue.push_back((key, s));
        if let Some(v) = owners.get_mut(&key) {
            *stamp(v) = Some(s);
        }
    }

    /// A live entry left the order: its owner cleared its stamp.
    pub(super) fn unlink(&mut self) {
        self.live -= 1;
    }

    /// Takes the least recently used live entry out of the order, its owner's stamp cleared
    /// (the owner stays in `owners`).
    pub(super) fn pop<V, S: BuildHasher>(&mut self, owners: &mut HashMap<K, V, S>, stamp: Stamp<V>) -> Option<K> {
        while let Some((k, s)) = self.queue.pop_front() {
            let Some(field) = owners.get_mut(&k).map(stamp).filter(|f| **f == Some(s)) else {
                continue;
            };
            *field = None;
            self.live -= 1;
            return Some(k);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{Lru, Stamp};
    use std::collections::HashMap;

    const STAMP: Stamp<Option<u64>> = |v| v;

    #[test]
    fn the_least_recently_let_go_live_entry_comes_out_first_and_stale_ones_are_skipped() {
        let mut owners: HashMap<u8, Option<u64>> = (0..4).map(|k| (k, None)).collect();
        let mut lru = Lru::new(2);
        for k in 0..3 {
            lru.push(&mut owners, k, STAMP);
        }
        lru.push(&mut owners, 9, STAMP);
        assert_eq!(lru.live(), 3, "a key without an owner is not pushed");
        // Key 0 used again: its entry is stale.
        owners.insert(0, None);
        lru.unlink();
        assert_eq!(lru.pop(&mut owners, STAMP), Some(1));
        assert_eq!(owners[&1], None, "its stamp cleared");
        assert_eq!(lru.pop(&mut owners, STAMP), Some(2));
        assert_eq!(lru.pop(&mut owners, STAMP), None);
        assert_eq!(lru.live(), 0);
    }

    #[test]
    fn the_queue_never_holds_more_than_twice_its_bound_of_entries() {
        let mut owners: HashMap<u8, Option<u64>> = [(7, None)].into_iter().collect();
        let mut lru = Lru::new(3);
        for _ in 0..100 {
            // One key let go of and used again, over and over: every older entry is stale.
            if owners.get_mut(&7).and_then(Option::take).is_some() {
                lru.unlink();
            }
            lru.push(&mut owners, 7, STAMP);
            assert!(lru.queue.len() <= 2 * lru.bound() + 1, "{}", lru.queue.len());
        }
        assert_eq!(lru.live(), 1);
    }
}
