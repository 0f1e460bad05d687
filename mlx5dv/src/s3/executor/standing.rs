//! What an [`Executor`](super::Executor) remembers of clients whose endpoints it let go:
//! their standing (when they last answered), apart from the endpoints and address handles,
//! which are caches.

use super::clients::ClientKey;
use super::KeyedHash;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The longest `proven_idle` the table honours (a longer one counts as this): entries' times
/// are 32-bit milliseconds, and no entry outlives three of these (see [`Standing::age`]).
const LONGEST_IDLE_MS: u64 = 1 << 30;

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
    /// When the young generation began (the table's clock: [`Standing::now`]).
    young_since: u64,
    /// The clock's last reading.
    last: u64,
    epoch: Instant,
    /// `proven_idle`, in milliseconds.
    idle_ms: u64,
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
        Standing {
            young: HashMap::with_hasher(KeyedHash::random()),
            old: HashMap::with_hasher(KeyedHash::random()),
            per_generation,
            young_since: 0,
            last: 0,
            epoch: Instant::now(),
            idle_ms: u64::try_from(proven_idle.as_millis()).map_or(LONGEST_IDLE_MS, |ms| ms.min(LONGEST_IDLE_MS)),
        }
    }

    /// The table's clock, which clients' answers are stamped with: milliseconds since it
    /// was made.
    #[inline]
    pub(super) fn now(&mut self) -> u64 {
        let d = self.epoch.elapsed();
        self.last = d.as_secs() * 1000 + u64::from(d.subsec_millis());
        self.last
    }

    /// Whether an answer at `then` is recent enough at `now` to prove its client
    /// (`proven_idle`; both read from [`Standing::now`]).
    #[inline]
    pub(super) fn fresh(&self, then: u64, now: u64) -> bool {
        now.saturating_sub(then) <= self.idle_ms
    }

    /// Clients remembered (their standing stale or not).
    pub(super) fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    /// Whether `client` answered within `proven_idle` of `now` and its last transfer did not
    /// time out.
    pub(super) fn proven(&mut self, client: &ClientKey, now: u64) -> bool {
        self.age(now);
        let then = self.young.get(client).or_else(|| self.old.get(client));
        then.is_some_and(|&then| self.fresh_stamp(then, now))
    }

    /// `client`'s standing taken out of the table (its endpoint carries it from now on):
    /// when it answered, if within `proven_idle` of `now` (None: a stranger).
    #[inline]
    pub(super) fn take(&mut self, client: &ClientKey, now: u64) -> Option<u64> {
        if self.young.is_empty() && self.old.is_empty() {
            return None;
        }
        self.age(now);
        let then = match self.young.remove(client) {
            Some(then) => then,
            None => self.old.remove(client)?,
        };
        // The answer's full time: `now` less the entry's age (read modulo 2^32).
        let age = u64::from((now as u32).wrapping_sub(then));
        (age <= self.idle_ms).then(|| now - age.min(now))
    }

    /// Remembers that `client` answered at `at` (the table's clock) and its last transfer did
    /// not time out.
    pub(super) fn remember(&mut self, client: ClientKey, at: u64) {
        if self.per_generation == 0 {
            return;
        }
        let now = self.last.max(at);
        self.age(now);
        if self.young.len() >= self.per_generation {
            self.rotate(now);
        }
        // (Not in the old generation: a client's entry is taken out when its endpoint is made.)
        self.young.insert(client, at as u32);
    }

    /// Forgets `client`.
    #[cfg(test)]
    pub(super) fn forget(&mut self, client: &ClientKey) {
        if self.young.remove(client).is_none() {
            self.old.remove(client);
        }
    }

    /// Whether an entry stamped `then` (32 bits) is fresh at `now`.
    fn fresh_stamp(&self, then: u32, now: u64) -> bool {
        u64::from((now as u32).wrapping_sub(then)) <= self.idle_ms
    }

    /// Forgets what is worth nothing now: the old generation once the young one is
    /// `proven_idle` old (all its entries are older), both once it is twice that. An entry
    /// therefore lives less than three `proven_idle`s, at most 3 x 2^30 ms, and its age read
    /// modulo 2^32 is right.
    #[inline]
    fn age(&mut self, now: u64) {
        let since = now.saturating_sub(self.young_since);
        if since >= self.idle_ms {
            if since >= 2 * self.idle_ms {
                self.young.clear();
            }
            self.rotate(now);
        }
    }

    /// The young generation becomes the old one; the old one is forgotten.
    fn rotate(&mut self, now: u64) {
        self.old.clear();
        std::mem::swap(&mut self.young, &mut self.old);
        self.young_since = now;
    }
}

#[cfg(test)]
mod tests {
    use super::super::clients::{ClientKey, PathKey};
    use super::Standing;
    use std::time::Duration;

    fn key(i: u32) -> ClientKey {
        ClientKey {
            path: PathKey::Lid(1),
            dct_number: i,
        }
    }

    #[test]
    fn a_client_remembered_within_proven_idle_is_proven_and_a_forgotten_one_is_not() {
        let mut s = Standing::new(16, Duration::from_secs(60));
        let now = s.now();
        assert!(!s.proven(&key(1), now), "never seen");
        s.remember(key(1), now);
        assert!(s.proven(&key(1), now));
        assert!(!s.proven(&key(2), now));
        s.forget(&key(1));
        assert!(!s.proven(&key(1), now), "forgotten (it timed out)");
        s.remember(key(1), now);
        let later = s.now();
        assert_eq!(s.take(&key(1), later), Some(now), "taken, with when it answered");
        assert_eq!(s.take(&key(1), later), None, "taken out");
    }

    #[test]
    fn an_answer_older_than_proven_idle_proves_nothing() {
        let mut s = Standing::new(16, Duration::from_millis(20));
        let now = s.now();
        s.remember(key(1), now);
        // Past twice proven_idle (a slow machine only sleeps longer).
        std::thread::sleep(Duration::from_millis(40));
        let now = s.now();
        assert!(!s.proven(&key(1), now), "a proof is not banked");
        assert_eq!(s.len(), 0, "both generations, past proven_idle, went");
    }

    #[test]
    fn the_table_never_holds_more_than_its_entries_and_keeps_the_last_ones_remembered() {
        let mut s = Standing::new(64, Duration::from_secs(60));
        for i in 0..10_000 {
            let now = s.now();
            s.remember(key(i), now);
            assert!(s.len() <= 64, "{} entries", s.len());
        }
        let now = s.now();
        // The last generation's worth of inserts is always remembered.
        assert_eq!(
            s.per_generation, 28,
            "half of 64, rounded down to 7/8 of a power of two"
        );
        assert!((10_000 - 28..10_000).all(|i| s.proven(&key(i), now)));
        assert!(!s.proven(&key(0), now));
    }

    #[test]
    fn no_entries_remember_nothing() {
        let mut s = Standing::new(0, Duration::from_secs(60));
        let now = s.now();
        s.remember(key(1), now);
        assert!(!s.proven(&key(1), now));
        assert_eq!(s.len(), 0);
    }
}
