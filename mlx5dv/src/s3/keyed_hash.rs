//! The hash of the executor's tables (clients and address handles).

use std::hash::{BuildHasher, Hasher};

/// The hash of the executor's tables: a multiply-rotate mix under a key drawn per table (the
/// keys, LIDs, GIDs and DCT numbers, come from tokens, that is from the network), a few
/// instructions a word where SipHash takes hundreds on the submit path. The tables are
/// bounded (`max_endpoints`), so keys made to collide cost at most a scan of that many.
#[derive(Clone)]
pub(super) struct KeyedHash(u64);

impl KeyedHash {
    pub(super) fn random() -> KeyedHash {
        KeyedHash(std::collections::hash_map::RandomState::new().hash_one(0x5333_5244_4d41u64) | 1)
    }
}

impl BuildHasher for KeyedHash {
    type Hasher = Mix;
    fn build_hasher(&self) -> Mix {
        Mix(self.0)
    }
}

pub(super) struct Mix(u64);

impl Mix {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(23);
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
        let x = self.0;
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
}
