//! The hash of the executor's tables (clients and address handles).

use std::hash::{BuildHasher, Hasher};

/// The hash of the executor's tables: a folded-multiply mix under two keys drawn per table
/// (the keys, LIDs, GIDs and DCT numbers, come from tokens, that is from the network), a few
/// instructions a word where SipHash takes hundreds on the submit path. The tables are
/// bounded (`max_endpoints`), so keys made to collide cost at most a scan of that many.
#[derive(Clone)]
pub(super) struct KeyedHash {
    /// The state a hash starts from.
    seed: u64,
    /// The multiplier (odd).
    mul: u64,
}

impl KeyedHash {
    pub(super) fn random() -> KeyedHash {
        let r = std::collections::hash_map::RandomState::new();
        KeyedHash {
            seed: r.hash_one(0x5333_5244_4d41u64),
            mul: r.hash_one(0x4b45_5932u64) | 1,
        }
    }
}

impl BuildHasher for KeyedHash {
    type Hasher = Mix;
    fn build_hasher(&self) -> Mix {
        Mix {
            state: self.seed,
            mul: self.mul,
        }
    }
}

pub(super) struct Mix {
    state: u64,
    mul: u64,
}

impl Mix {
    /// One word in: the 128-bit product of state and word with the keyed multiplier, its
    /// halves folded (as foldhash and wyhash mix). The high half takes the carries of every
    /// bit, so no difference between two words passes through it the same way under every key
    /// (a 64-bit multiply then a rotation carried a top-bit difference to one fixed bit, which
    /// the next word could cancel: dc-review-4.md, finding 7).
    #[inline]
    fn add(&mut self, word: u64) {
        let p = u128::from(self.state ^ word) * u128::from(self.mul);
        self.state = (p as u64) ^ ((p >> 64) as u64);
    }
}

impl Hasher for Mix {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(w));
        }
    }
    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }
    fn write_u16(&mut self, v: u16) {
        self.add(u64::from(v));
    }
    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
    fn finish(&self) -> u64 {
        let x = self.state;
        (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (x >> 32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_alike_in_one_table_and_the_key_differs_between_tables() {
        let (a, b) = (KeyedHash::random(), KeyedHash::random());
        let gid = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(a.hash_one((gid, 0x4100u32)), a.hash_one((gid, 0x4100u32)));
        assert_ne!(a.hash_one((gid, 0x4100u32)), b.hash_one((gid, 0x4100u32)));
        // 1,024 neighbouring DCT numbers spread over 1,024 buckets as random keys would (about
        // 1 - 1/e of them used), by the low bits (the table's index) and the top 7 (its tags).
        let hashes: Vec<u64> = (0..1024u32).map(|d| a.hash_one((gid, d))).collect();
        let low: std::collections::HashSet<u64> = hashes.iter().map(|h| h & 1023).collect();
        let top: std::collections::HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        assert!(low.len() > 550, "{} of 1024 buckets used", low.len());
        assert!(top.len() > 110, "the top 7 bits take {} values of 128", top.len());
        let mut other = gid;
        other[15] ^= 1;
        assert_ne!(a.hash_one((gid, 1u32)), a.hash_one((other, 1u32)));
    }

    /// Words hashed in sequence as the tables hash their keys (a GID's two halves, then a
    /// DCT number or LID).
    fn words(k: &KeyedHash, w: [u64; 3]) -> u64 {
        let mut h = k.build_hasher();
        for x in w {
            h.write_u64(x);
        }
        h.finish()
    }

    #[test]
    fn no_difference_between_keys_collides_whatever_the_table_key() {
        // dc-review-4.md, finding 7: a difference in a word's top bit, cancelled by one in the
        // next word where the mix moved it, collided under every key.
        let (lo, hi, d) = (0xfe80_0000_0000_0000u64, 0x0202_c9ff_fe00_0001u64, 0x4100u64);
        let variants = [
            (lo ^ 1 << 63, hi ^ 1 << 22, d),
            (lo, hi ^ 1 << 63, d ^ 1 << 22),
            (lo ^ 1 << 63, hi ^ 1 << 63 ^ 1 << 22, d ^ 1 << 22),
        ];
        for _ in 0..64 {
            let k = KeyedHash::random();
            let base = words(&k, [lo, hi, d]);
            for (a, b, c) in variants {
                assert_ne!(
                    base,
                    words(&k, [a, b, c]),
                    "({a:#x}, {b:#x}, {c:#x}) collides with the base"
                );
            }
        }
    }
}
