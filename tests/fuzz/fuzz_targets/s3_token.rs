//! `RdmaToken::parse` on any text (an `x-amz-rdma-token` header is untrusted).
//!
//! Accepted: the text is canonical (`format` gives it back byte for byte, and parsing that
//! gives the same token), the token keeps the rules parse promises (size not 0, no overflow,
//! 24-bit DCT number), its region and target travel through the address codec, and `target`
//! refuses exactly a GID-less token on RoCE, naming field 5.
//! Refused: the error names the field that is wrong (the first misshapen one, or the one whose
//! value breaks a rule), and names none only when the count of fields or the length is wrong.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlx5dv::addr::{DcTargetAddr, RemoteMemory};
use mlx5dv::s3::{RdmaToken, TokenError, TOKEN_LEN};
use mlx5dv_fuzz::MTUS;

/// Hex digits of each field, as the token's documentation lists them.
const WIDTHS: [usize; 7] = [16, 8, 8, 4, 6, 1, 32];

fuzz_target!(|data: &[u8]| {
    // Invalid UTF-8 becomes U+FFFD: multi-byte characters are exercised either way.
    let text = String::from_utf8_lossy(data);
    match RdmaToken::parse(&text) {
        Ok(token) => accepted(&text, token),
        Err(e) => refused(&text, &e),
    }
});

fn accepted(text: &str, token: RdmaToken) {
    assert_eq!(token.format().as_deref(), Ok(text), "not canonical: {token:?}");
    assert_eq!(RdmaToken::parse(&token.format().unwrap()), Ok(token));
    assert_eq!(text.len(), TOKEN_LEN);
    assert_ne!(token.len, 0);
    assert!(token.dct_number <= 0x00ff_ffff);
    assert!(token.addr.checked_add(u64::from(token.len)).is_some());

    let remote = token.remote();
    assert_eq!(
        remote,
        RemoteMemory {
            addr: token.addr,
            len: u64::from(token.len),
            rkey: token.rkey
        }
    );
    assert_eq!(RemoteMemory::decode(&remote.encode()), Ok(remote));
    assert_eq!(remote.slice(0, remote.len), Ok(remote));

    for mtu in MTUS {
        for roce in [false, true] {
            match token.target(mtu, roce) {
                Ok(t) => {
                    assert!(!roce || token.gid.is_some(), "a GID-less token accepted on RoCE");
                    assert_eq!(
                        t,
                        DcTargetAddr {
                            lid: token.lid,
                            gid: token.gid.unwrap_or([0; 16]),
                            dct_number: token.dct_number,
                            port_mtu: mtu,
                            out_of_order: false,
                        }
                    );
                    let blob = t.encode().expect("a parsed token's DCT number fits 24 bits");
                    assert_eq!(DcTargetAddr::decode(&blob), Ok(t));
                }
                Err(e) => {
                    assert!(roce && token.gid.is_none(), "{token:?} refused: {e}");
                    assert_eq!(e.field, Some(5));
                }
            }
        }
    }
}

/// Whether `part` has exactly `width` lowercase hex digits.
fn well_shaped(part: &str, width: usize) -> bool {
    part.len() == width && part.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn refused(text: &str, e: &TokenError) {
    assert!(!e.why.is_empty());
    let shown = e.to_string();
    assert!(shown.starts_with("x-amz-rdma-token"), "{shown}");
    let error: mlx5dv::Error = e.clone().into();
    assert_eq!(error.errno(), Some(libc::EINVAL));

    let parts: Vec<&str> = text.split(':').collect();
    let whole_token_wrong = text.len() > 4 * TOKEN_LEN || parts.len() != WIDTHS.len();
    let Some(field) = e.field else {
        assert!(whole_token_wrong, "no field named for {text:?}: {shown}");
        return;
    };
    assert!(
        !whole_token_wrong,
        "field {field} named for a token of the wrong shape: {shown}"
    );
    assert!(field < WIDTHS.len(), "{shown}");
    if let Some(first) = (0..WIDTHS.len()).find(|&i| !well_shaped(parts[i], WIDTHS[i])) {
        assert_eq!(field, first, "the first misshapen field is {first}: {shown}");
        return;
    }
    // Every field is well shaped: the named one breaks a rule on its value.
    let value = |i: usize| u128::from_str_radix(parts[i], 16).expect("well shaped");
    let (addr, len) = (value(0), value(1));
    let broken = match field {
        0 => addr + len > u128::from(u64::MAX),
        1 => len == 0,
        5 => value(5) > 1,
        6 => value(5) == 0 && value(6) != 0,
        _ => false,
    };
    assert!(broken, "field {field} of {text:?} breaks no rule: {shown}");
}
