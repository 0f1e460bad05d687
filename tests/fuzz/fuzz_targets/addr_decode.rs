//! `DcTargetAddr::decode` and `RemoteMemory::decode` on any bytes (a peer sends them out of
//! band).
//!
//! Accepted: the encoding is canonical, so the blob re-encodes to exactly the input bytes (all
//! 32 of them: no bit is ignored); at most one of the two kinds accepts a blob; a decoded region
//! never overflows and slices back to itself.
//! Refused: the error is the one the documented order of checks gives (length, magic, version,
//! kind, the header's reserved bytes, the exact length), then one that is true of the body;
//! a `Reserved` error names a byte that is set.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlx5dv::addr::{AddrError, DcTargetAddr, Mtu, RemoteMemory};
use mlx5dv_fuzz::{check_display, check_reserved_names_a_set_byte, magic_version_kind_error};

const KIND_DC_TARGET: u8 = 1;
const KIND_REMOTE_MEMORY: u8 = 2;

fuzz_target!(|data: &[u8]| {
    let target = DcTargetAddr::decode(data);
    let memory = RemoteMemory::decode(data);
    assert!(!(target.is_ok() && memory.is_ok()), "both kinds accept {data:02x?}");
    match target {
        Ok(t) => assert_eq!(t.encode().as_ref().map(|b| &b[..]), Ok(data), "{t:?}"),
        Err(e) => target_refused(data, &e),
    }
    match memory {
        Ok(m) => {
            assert_eq!(&m.encode()[..], data, "{m:?}");
            assert!(m.addr.checked_add(m.len).is_some());
            assert!(m.contains(0, m.len) && m.contains(m.len, 0));
            assert_eq!(m.slice(0, m.len), Ok(m));
        }
        Err(e) => memory_refused(data, &e),
    }
});

/// The header's error in the documented order, None once the header and length pass.
fn header_error(data: &[u8], kind: u8) -> Option<AddrError> {
    let length = AddrError::Length {
        expected: 32,
        got: data.len(),
    };
    magic_version_kind_error(data, kind, 32)
        .or_else(|| {
            (6..8)
                .find(|&i| data[i] != 0)
                .map(|offset| AddrError::Reserved { offset })
        })
        .or_else(|| (data.len() != 32).then_some(length))
}

fn target_refused(data: &[u8], e: &AddrError) {
    check_display(e);
    check_reserved_names_a_set_byte(data, e);
    if let Some(expected) = header_error(data, KIND_DC_TARGET) {
        assert_eq!(*e, expected);
        return;
    }
    let true_of_the_body = match *e {
        AddrError::Reserved { offset } => offset == 11 && data[11] & !1 != 0,
        AddrError::Mtu { got } => got == data[10] && Mtu::from_raw(u32::from(got)).is_none(),
        AddrError::DctNumber { got } => {
            got == u32::from_be_bytes([data[12], data[13], data[14], data[15]]) && got > 0x00ff_ffff
        }
        _ => false,
    };
    assert!(true_of_the_body, "{e:?} for the DC target {data:02x?}");
}

fn memory_refused(data: &[u8], e: &AddrError) {
    check_display(e);
    check_reserved_names_a_set_byte(data, e);
    if let Some(expected) = header_error(data, KIND_REMOTE_MEMORY) {
        assert_eq!(*e, expected);
        return;
    }
    let addr = u64::from_be_bytes(data[8..16].try_into().unwrap());
    let len = u64::from_be_bytes(data[16..24].try_into().unwrap());
    let true_of_the_body = match *e {
        // The first reserved byte set.
        AddrError::Reserved { offset } => (28..32).find(|&i| data[i] != 0) == Some(offset),
        AddrError::Range => addr.checked_add(len).is_none(),
        _ => false,
    };
    assert!(true_of_the_body, "{e:?} for the remote memory {data:02x?}");
}
