//! `DcAnnouncement::decode` and `decode_padded` on any bytes: the private data of a SIDR reply,
//! the only private data of a CM peer the crate decodes (RC private data reaches the
//! application as bytes, undecoded).
//!
//! Accepted: the announcement re-encodes to exactly the input (`decode`), or to the input less
//! its zero padding (`decode_padded`), and the flags say what it carries.
//! Refused: the header's error comes in the documented order (length, magic, version, kind,
//! flags, reserved byte, then the length the flags give); the embedded target's or memory's
//! error is theirs, its offsets counted in the announcement; a `Reserved` error names a set
//! byte; `decode_padded` reports what is wrong with the header before any dirty padding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlx5dv::addr::{AddrError, DcTargetAddr, RemoteMemory};
use mlx5dv::cm::DcAnnouncement;
use mlx5dv_fuzz::{check_display, check_reserved_names_a_set_byte, magic_version_kind_error, HEADER_LEN};

const KIND_DC_ANNOUNCEMENT: u8 = 3;
const FLAG_KEY: u8 = 1;
const FLAG_MEMORY: u8 = 2;

fuzz_target!(|data: &[u8]| {
    let exact = DcAnnouncement::decode(data);
    let padded = DcAnnouncement::decode_padded(data);
    match exact {
        Ok(a) => {
            assert_eq!(a.encode().as_deref(), Ok(data), "{a:?}");
            assert_eq!(a.key.is_some(), data[6] & FLAG_KEY != 0);
            assert_eq!(a.memory.is_some(), data[6] & FLAG_MEMORY != 0);
            assert_eq!(padded, exact, "padding of none");
        }
        Err(ref e) => refused(data, e, false),
    }
    match padded {
        Ok(a) => {
            let blob = a.encode().expect("a decoded announcement encodes");
            assert!(data.starts_with(&blob), "{a:?}");
            assert!(data[blob.len()..].iter().all(|&b| b == 0), "dirty padding accepted");
            assert_eq!(DcAnnouncement::decode(&blob), Ok(a));
        }
        Err(ref e) => refused(data, e, true),
    }
});

/// The header's error in the documented order, or the length the flags give.
fn header(data: &[u8]) -> Result<usize, AddrError> {
    if let Some(e) = magic_version_kind_error(data, KIND_DC_ANNOUNCEMENT, HEADER_LEN + DcTargetAddr::ENCODED_LEN) {
        return Err(e);
    }
    if data[6] & !(FLAG_KEY | FLAG_MEMORY) != 0 {
        return Err(AddrError::Reserved { offset: 6 });
    }
    if data[7] != 0 {
        return Err(AddrError::Reserved { offset: 7 });
    }
    let key = if data[6] & FLAG_KEY != 0 { 8 } else { 0 };
    let memory = if data[6] & FLAG_MEMORY != 0 {
        RemoteMemory::ENCODED_LEN
    } else {
        0
    };
    Ok(HEADER_LEN + DcTargetAddr::ENCODED_LEN + key + memory)
}

/// `e`, an embedded blob's error, with its offsets counted from the announcement's start.
fn shifted(e: AddrError, by: usize) -> AddrError {
    match e {
        AddrError::Reserved { offset } => AddrError::Reserved { offset: offset + by },
        other => other,
    }
}

fn refused(data: &[u8], e: &AddrError, padded: bool) {
    check_display(e);
    check_reserved_names_a_set_byte(data, e);
    let len = match header(data) {
        Err(expected) => return assert_eq!(*e, expected, "header of {data:02x?}"),
        Ok(len) => len,
    };
    if padded {
        if let Some(i) = data.get(len..).and_then(|pad| pad.iter().position(|&b| b != 0)) {
            return assert_eq!(*e, AddrError::Reserved { offset: len + i });
        }
    } else if data.len() != len {
        return assert_eq!(
            *e,
            AddrError::Length {
                expected: len,
                got: data.len()
            }
        );
    }
    if data.len() < len {
        return assert_eq!(
            *e,
            AddrError::Length {
                expected: len,
                got: data.len()
            }
        );
    }
    // Header, length and padding pass: the embedded target's error, else the memory's.
    let target = DcTargetAddr::decode(&data[HEADER_LEN..HEADER_LEN + DcTargetAddr::ENCODED_LEN]);
    let expected = match target {
        Err(t) => shifted(t, HEADER_LEN),
        Ok(_) => {
            let at = len - RemoteMemory::ENCODED_LEN;
            assert!(data[6] & FLAG_MEMORY != 0, "refused with nothing wrong: {e:?}");
            shifted(
                RemoteMemory::decode(&data[at..len]).expect_err("refused with nothing wrong"),
                at,
            )
        }
    };
    assert_eq!(*e, expected, "{data:02x?}");
}
