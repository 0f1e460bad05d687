//! `RemoteMemory::contains` and `slice` for any region (hand-built ones included, whose
//! `addr + len` may overflow) and any offset and length, against the arithmetic done in u128.
//!
//! `contains` is exactly `offset + len <= region.len`; `slice` succeeds exactly when the range
//! is contained and its end address fits a u64, and gives that range with the region's rkey;
//! every slice travels through the codec; a region the codec accepts slices wherever it
//! contains, and the codec accepts exactly the regions that do not overflow.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mlx5dv::addr::{AddrError, RemoteMemory};

#[derive(Arbitrary, Debug)]
struct Input {
    addr: u64,
    len: u64,
    rkey: u32,
    offset: u64,
    sub_len: u64,
}

fuzz_target!(|input: Input| {
    let Input {
        addr,
        len,
        rkey,
        offset,
        sub_len,
    } = input;
    let region = RemoteMemory { addr, len, rkey };
    let wide = |v: u64| u128::from(v);
    let contained = wide(offset) + wide(sub_len) <= wide(len);
    let end_fits = wide(addr) + wide(offset) + wide(sub_len) <= wide(u64::MAX);
    let region_fits = wide(addr) + wide(len) <= wide(u64::MAX);

    assert_eq!(region.contains(offset, sub_len), contained);
    match region.slice(offset, sub_len) {
        Ok(s) => {
            assert!(contained && end_fits);
            assert_eq!(
                s,
                RemoteMemory {
                    addr: addr + offset,
                    len: sub_len,
                    rkey
                }
            );
            assert_eq!(RemoteMemory::decode(&s.encode()), Ok(s));
            assert!(s.contains(0, sub_len));
            if let Some(more) = sub_len.checked_add(1) {
                assert!(!s.contains(0, more));
            }
        }
        Err(e) => {
            assert!(
                !(contained && end_fits),
                "{region:?} refused {offset:#x}+{sub_len:#x}: {e}"
            );
            assert_eq!(e, AddrError::Range);
        }
    }

    match RemoteMemory::decode(&region.encode()) {
        Ok(decoded) => {
            assert!(region_fits);
            assert_eq!(decoded, region);
            // A region a peer can send: every contained range slices.
            assert_eq!(decoded.slice(offset, sub_len).is_ok(), contained);
        }
        Err(e) => {
            assert!(!region_fits, "{region:?} refused: {e}");
            assert_eq!(e, AddrError::Range);
        }
    }
});
