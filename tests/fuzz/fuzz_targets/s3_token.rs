//! `RdmaToken::parse` on any text (an `x-amz-rdma-token` header is untrusted), in every form:
//! the reference's seven fields, nine with the address:size suffix, hipObject's 88 hex digits
//! (with or without the suffix), either case, a trailing `;`.
//!
//! Accepted: the text is canonical for its spelling (`format` gives it back byte for byte, and
//! parsing that gives the same token), the token keeps the rules parse promises (size not 0,
//! no overflow, 24-bit DCT number, a suffix inside the fields' range), its region and target
//! travel through the address codec, and `target` refuses exactly a GID-less token on RoCE,
//! as unsupported, naming the GID field.
//! Refused: a whole-token error only when no form's count of fields (or the length) fits;
//! else the error names the first misshapen field (width, hex, a second case) by this
//! target's own reading of the forms, or, with every field well shaped, a field whose value
//! breaks a rule. Only a hipObject RC token is unsupported rather than malformed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mlx5dv::addr::{DcTargetAddr, RemoteMemory};
use mlx5dv::s3::{RdmaToken, TokenError, TokenErrorKind, TokenForm, HIP_TOKEN_LEN, SUFFIX_LEN, TOKEN_LEN};
use mlx5dv_fuzz::MTUS;

/// Hex digits of each reference field, as the token's documentation lists them.
const WIDTHS: [usize; 7] = [16, 8, 8, 4, 6, 1, 32];
/// Bytes of each hipObject field.
const HIP_BYTES: [usize; 8] = [1, 4, 16, 4, 8, 8, 1, 2];

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
    let s = token.spelling;
    let (base, gid_field) = match s.form {
        TokenForm::Reference => (TOKEN_LEN, 5),
        TokenForm::HipObject { .. } => (HIP_TOKEN_LEN, 2),
    };
    let want = base + if s.suffixed.is_some() { SUFFIX_LEN } else { 0 } + usize::from(s.semicolon);
    assert_eq!(text.len(), want);
    assert_eq!(s.semicolon, text.ends_with(';'));
    assert_eq!(s.upper, text.bytes().any(|b| b.is_ascii_uppercase()));
    assert_ne!(token.len, 0);
    assert!(token.dct_number <= 0x00ff_ffff);
    let end = token.addr.checked_add(u64::from(token.len)).expect("no overflow");
    if let Some((b, n)) = s.suffixed {
        assert!(b <= token.addr && end <= b.checked_add(n).expect("the fields' range fits"));
    }

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
                    assert_eq!((e.field, e.kind), (Some(gid_field), TokenErrorKind::Unsupported));
                }
            }
        }
    }
}

/// One field as this target reads the forms: its text and the hex digits it must have.
struct Field<'a> {
    text: &'a [u8],
    width: usize,
}

/// The fields of `body` by its form (None: no form fits), and whether it is hipObject's.
fn fields(body: &str) -> Option<(Vec<Field<'_>>, bool)> {
    let parts: Vec<&str> = body.split(':').collect();
    let suffix = |from: usize| {
        parts[from..]
            .iter()
            .map(|p| Field {
                text: p.as_bytes(),
                width: 16,
            })
            .collect::<Vec<_>>()
    };
    match parts.len() {
        7 | 9 => {
            let mut f: Vec<Field> = parts[..7]
                .iter()
                .zip(WIDTHS)
                .map(|(p, width)| Field {
                    text: p.as_bytes(),
                    width,
                })
                .collect();
            f.extend(suffix(7));
            Some((f, false))
        }
        1 | 3 if parts[0].len() == HIP_TOKEN_LEN => {
            let mut at = 0;
            let mut f = Vec::new();
            for bytes in HIP_BYTES {
                f.push(Field {
                    text: &parts[0].as_bytes()[at..at + 2 * bytes],
                    width: 2 * bytes,
                });
                at += 2 * bytes;
            }
            f.extend(suffix(1));
            Some((f, true))
        }
        _ => None,
    }
}

fn refused(text: &str, e: &TokenError) {
    assert!(!e.why.is_empty());
    let shown = e.to_string();
    assert!(shown.starts_with("x-amz-rdma-token"), "{shown}");
    let error: mlx5dv::Error = e.clone().into();
    let errno = if e.is_unsupported() {
        libc::EOPNOTSUPP
    } else {
        libc::EINVAL
    };
    assert_eq!(error.errno(), Some(errno));

    let body = text.strip_suffix(';').unwrap_or(text);
    let form = if text.len() > 4 * TOKEN_LEN { None } else { fields(body) };
    let Some(field) = e.field else {
        assert!(form.is_none(), "no field named for {text:?}: {shown}");
        return;
    };
    let Some((fields, hip)) = form else {
        panic!("field {field} named for a token of no form: {shown}");
    };
    assert!(field < fields.len(), "{shown}");
    assert!(!e.name.is_empty() && shown.contains(e.name), "{shown}");
    // The first field misshapen, or whose letters' case differs from an earlier field's.
    let (mut lower, mut upper) = (false, false);
    let first = fields.iter().position(|f| {
        let hex = f.text.len() == f.width && f.text.iter().all(u8::is_ascii_hexdigit);
        lower |= f.text.iter().any(u8::is_ascii_lowercase);
        upper |= f.text.iter().any(u8::is_ascii_uppercase);
        !hex || (lower && upper)
    });
    if let Some(first) = first {
        assert_eq!(field, first, "the first misshapen field is {first}: {shown}");
        assert_eq!(e.kind, TokenErrorKind::Malformed);
        return;
    }
    // Every field is well shaped: the named one breaks a rule on its value.
    let value = |i: usize| {
        let t = std::str::from_utf8(fields[i].text).unwrap();
        if hip && i < HIP_BYTES.len() {
            // Little-endian bytes (the GID's value is only compared with 0).
            let mut b: Vec<u8> = (0..t.len() / 2)
                .map(|k| u8::from_str_radix(&t[2 * k..2 * k + 2], 16).unwrap())
                .collect();
            b.reverse();
            b.iter().fold(0u128, |v, &x| (v << 8) | u128::from(x))
        } else {
            u128::from_str_radix(t, 16).expect("well shaped")
        }
    };
    let max = u128::from(u64::MAX);
    let (a, l, s) = if hip { (4, 5, 8) } else { (0, 1, 7) };
    let (addr, len) = (value(a), value(l));
    let suffixed = fields.len() > s;
    let broken_suffix = |i: usize| {
        let (sa, sl) = (value(s), value(s + 1));
        if i == s {
            sa + sl > max || sa < addr
        } else {
            sl == 0 || sa + sl > addr + len || sl > u128::from(u32::MAX)
        }
    };
    if hip && field == 0 {
        let unsupported = value(0) == 1;
        assert_eq!(e.is_unsupported(), unsupported, "{shown}");
        assert!(value(0) > 0, "{shown}");
        return;
    }
    assert_eq!(e.kind, TokenErrorKind::Malformed, "{shown}");
    let broken = match (hip, field) {
        (_, i) if i == a => addr + len > max,
        (_, i) if i == l => len == 0 || (hip && !suffixed && len > u128::from(u32::MAX)),
        (false, 5) => value(5) > 1,
        (false, 6) => value(5) == 0 && value(6) != 0,
        (true, 1) => value(1) > 0x00ff_ffff,
        (_, i) if suffixed && (i == s || i == s + 1) => broken_suffix(i),
        _ => false,
    };
    assert!(broken, "field {field} of {text:?} breaks no rule: {shown}");
}
