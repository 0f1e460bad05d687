//! What an [`Executor`](super::Executor) remembers of clients whose endpoints it let go:
//! their standing (when they last answered), apart from the endpoints and address handles,
//! which are caches.

use super::clients::ClientKey;
use super::KeyedHash;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The longest `proven_idle` the table honours (a longer one counts as this): entries' times
/// are 32-bit milliseconds, and no entry outlives three of these (see [`Standing::age`]).
const LONGEST_IDLE_MS: u32 = u32::MAX / 4;

/// Clients that answered and whose last transfer did not time out, each with when it last
/// answered (milliseconds since the table was made, 32 bits): a client in it that answered
/// within `proven_idle` is proven, any other is a stranger. A client that never answered, that
/// answered too long ago, or whose last transfer timed out is not in it (or its entry is
/// stale): "unproven" costs nothing to remember.
///
/// Two generations, each of at most half the entries: entries go into the young one; it
/// becomes the old one (the old one forgotten) when it is full, or when it is `proven_idle`
/// old (every entry of the old one then answered longer ago than that: worth nothing). So the
/// table never holds more than its entries, an entry lives at least half the table's inserts
/// after its client's last answer, and forgetting a generation costs a clear of its control
/// bytes, not a scan. An entry is a key (24 bytes) and a time (4), 29 bytes with the map's
/// control byte; a full generation fills 7/8 of its map's buckets, so a full table costs 33
/// bytes a client (2^20 entries: 917,504 clients in 2 x 15 MiB), allocated as the table grows
/// (a map that doubled is half full: 66 bytes an entry at most), and kept once grown.
pub(super) struct Standing {
    young: HashMap<ClientKey, u32, KeyedHash>,
    old: HashMap<ClientKey, u32, KeyedHash>,
    /// Entries a generation holds at most.
    per_generation: usize,
    /// When the young generation began.
    young_since: Instant,
    epoch: Instant,
    proven_idle: Duration,
}

impl Standing {
    /// A table of at most `entries` clients whose standing lasts `proven_idle` after their
    /// last answer (fewer than 2 entries: no client is remembered). A generation holds half
    /// the entries rounded down to 7/8 of a power of two (what a map's buckets hold before
    /// it doubles): 2^20 entries make generations of 458,752.
    pub(super) fn new(entries: usize, proven_idle: Duration) -> Standing {
        let half = entries / 2;
        let mut buckets = 8usize;
        while buckets.checked_mul(2).is_some_and(|b| b / 8 * 7 <= half) {
            buckets *= 2;
        }
        let per_generation = if half < 7 { half } else { buckets / 8 * 7 };
        let now = Instant::now();
        Standing {
            young: HashMap::with_hasher(KeyedHash::random()),
            old: HashMap::with_hasher(KeyedHash::random()),
            per_generation,
            young_since: now,
            epoch: now,
            proven_idle: proven_idle.min(Duration::from_millis(u64::from(LONGEST_IDLE_MS))),
        }
    }

    /// Clients remembered (their standing stale or not).
    pub(super) fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    /// Whether `client` answered within `proven_idle` and its last transfer did not time out.
    #[inline]
    pub(super) fn proven(&mut self, client: &ClientKey) -> bool {
        if self.young.is_empty() && self.old.is_empty() {
            return false;
        }
        let now = Instant::now();
        self.age(now);
        let Some(&then) = self.young.get(client).or_else(|| self.old.get(client)) else {
            return false;
        };
        u128::from(self.ms(now).wrapping_sub(then)) <= self.proven_idle.as_millis()
    }

    /// Remembers that `client` answered at `at` and its last transfer did not time out.
    pub(super) fn remember(&mut self, client: ClientKey, at: Instant) {
        if self.per_generation == 0 {
            return;
        }
        let now = Instant::now();
        self.age(now);
        if self.young.len() >= self.per_generation {
            self.rotate(now);
        }
        self.old.remove(&client);
        let at = self.ms(at);
        self.young.insert(client, at);
    }

    /// Forgets `client` (its endpoint carries its standing from now on, or it timed out).
    pub(super) fn forget(&mut self, client: &ClientKey) {
        if self.young.remove(client).is_none() {
            self.old.remove(client);
        }
    }

    /// `at` in the entries' time: milliseconds since the table was made, modulo 2^32 (an
    /// entry's age is read modulo 2^32 too, right since no entry lives 2^32 ms: see `age`).
    fn ms(&self, at: Instant) -> u32 {
        at.saturating_duration_since(self.epoch).as_millis() as u32
    }

    /// Forgets what is worth nothing now: the old generation once the young one is
    /// `proven_idle` old (all its entries are older), both once it is twice that. An entry
    /// therefore lives less than three `proven_idle`s, at most 3 x 2^30 ms.
    fn age(&mut self, now: Instant) {
        let since = now.saturating_duration_since(self.young_since);
        if since >= 2 * self.proven_idle {
            self.young.clear();
            self.old.clear();
            self.young_since = now;
        } else if since >= self.proven_idle {
            self.rotate(now);
        }
    }

    /// The young generation becomes the old one; the old one is forgotten.
    fn rotate(&mut self, now: Instant) {
        self.old.clear();
        std::mem::swap(&mut self.young, &mut self.old);
        self.young_since = now;
    }
}

#[cfg(test)]
mod tests {
    use super::super::clients::{ClientKey, PathKey};
    use super::Standing;
    use std::time::{Duration, Instant};

    fn key(i: u32) -> ClientKey {
        ClientKey {
            path: PathKey::Lid(1),
            dct_number: i,
        }
    }

    #[test]
    fn a_client_remembered_within_proven_idle_is_proven_and_a_forgotten_one_is_not() {
        let mut s = Standing::new(16, Duration::from_secs(60));
        assert!(!s.proven(&key(1)), "never seen");
        s.remember(key(1), Instant::now());
        assert!(s.proven(&key(1)));
        assert!(!s.proven(&key(2)));
        s.forget(&key(1));
        assert!(!s.proven(&key(1)), "forgotten (it timed out)");
    }

    #[test]
    fn an_answer_older_than_proven_idle_proves_nothing() {
        let mut s = Standing::new(16, Duration::from_millis(20));
        s.remember(key(1), Instant::now());
        // Past twice proven_idle (a slow machine only sleeps longer).
        std::thread::sleep(Duration::from_millis(40));
        assert!(!s.proven(&key(1)), "a proof is not banked");
        assert_eq!(s.len(), 0, "both generations, past proven_idle, went");
    }

    #[test]
    fn the_table_never_holds_more_than_its_entries_and_keeps_the_last_ones_remembered() {
        let mut s = Standing::new(64, Duration::from_secs(60));
        for i in 0..10_000 {
            s.remember(key(i), Instant::now());
            assert!(s.len() <= 64, "{} entries", s.len());
        }
        // The last generation's worth of inserts is always remembered.
        assert_eq!(
            s.per_generation, 28,
            "half of 64, rounded down to 7/8 of a power of two"
        );
        assert!((10_000 - 28..10_000).all(|i| s.proven(&key(i))));
        assert!(!s.proven(&key(0)));
    }

    #[test]
    fn no_entries_remember_nothing() {
        let mut s = Standing::new(0, Duration::from_secs(60));
        s.remember(key(1), Instant::now());
        assert!(!s.proven(&key(1)));
        assert_eq!(s.len(), 0);
    }
}
