//! The encoders, from the other side: for any value, the encoder refuses exactly what the
//! decoder would refuse, and the decoder gives back every value the encoder accepted (DC target
//! address, remote memory, SIDR announcement, S3 token).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mlx5dv::addr::{AddrError, DcTargetAddr, RemoteMemory};
use mlx5dv::cm::DcAnnouncement;
use mlx5dv::s3::{RdmaToken, TokenForm, TokenSpelling, HIP_TOKEN_LEN, SUFFIX_LEN, TOKEN_LEN};
use mlx5dv::DcKey;
use mlx5dv_fuzz::MTUS;

#[derive(Arbitrary, Debug)]
struct Target {
    lid: u16,
    gid: [u8; 16],
    dct_number: u32,
    mtu: u8,
    out_of_order: bool,
}

impl Target {
    fn value(&self) -> DcTargetAddr {
        DcTargetAddr {
            lid: self.lid,
            gid: self.gid,
            dct_number: self.dct_number,
            port_mtu: MTUS[usize::from(self.mtu) % MTUS.len()],
            out_of_order: self.out_of_order,
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Memory {
    addr: u64,
    len: u64,
    rkey: u32,
}

impl Memory {
    fn value(&self) -> RemoteMemory {
        RemoteMemory {
            addr: self.addr,
            len: self.len,
            rkey: self.rkey,
        }
    }

    fn fits(&self) -> bool {
        self.addr.checked_add(self.len).is_some()
    }
}

#[derive(Arbitrary, Debug)]
enum Value {
    Target(Target),
    Memory(Memory),
    Announcement {
        target: Target,
        key: Option<u64>,
        memory: Option<Memory>,
    },
    Token {
        addr: u64,
        len: u32,
        rkey: u32,
        lid: u16,
        dct_number: u32,
        gid: Option<[u8; 16]>,
        /// hipObject's form with this port byte; None: the reference form.
        hip: Option<u8>,
        /// A suffix, the range before it starting this far below the token's address and
        /// ending this far past its end.
        suffix: Option<(u32, u32)>,
        upper: bool,
        semicolon: bool,
    },
}

const DCT_NUMBER_MAX: u32 = 0x00ff_ffff;

fuzz_target!(|value: Value| match value {
    Value::Target(t) => {
        let addr = t.value();
        match addr.encode() {
            Ok(blob) => {
                assert!(t.dct_number <= DCT_NUMBER_MAX);
                assert_eq!(DcTargetAddr::decode(&blob), Ok(addr));
            }
            Err(e) => {
                assert!(t.dct_number > DCT_NUMBER_MAX);
                assert_eq!(e, AddrError::DctNumber { got: t.dct_number });
            }
        }
    }
    Value::Memory(m) => {
        let expected = if m.fits() { Ok(m.value()) } else { Err(AddrError::Range) };
        assert_eq!(RemoteMemory::decode(&m.value().encode()), expected);
    }
    Value::Announcement { target, key, memory } => {
        let mut a = DcAnnouncement::new(target.value());
        if let Some(k) = key {
            a = a.with_key(DcKey::new(k));
        }
        if let Some(m) = &memory {
            a = a.with_memory(m.value());
        }
        let target_fits = target.dct_number <= DCT_NUMBER_MAX;
        let memory_fits = memory.as_ref().is_none_or(Memory::fits);
        match a.encode() {
            Ok(blob) => {
                assert!(target_fits && memory_fits, "{a:?} encoded, but no decoder accepts it");
                assert!(blob.len() <= DcAnnouncement::MAX_ENCODED_LEN);
                assert_eq!(DcAnnouncement::decode(&blob), Ok(a));
                let mut reply = blob.clone();
                reply.resize(136, 0);
                assert_eq!(
                    DcAnnouncement::decode_padded(&reply),
                    Ok(a),
                    "as a SIDR reply delivers it"
                );
            }
            Err(e) => {
                assert!(!(target_fits && memory_fits), "{a:?} refused: {e}");
                let expected = if target_fits {
                    AddrError::Range
                } else {
                    AddrError::DctNumber { got: target.dct_number }
                };
                assert_eq!(e, expected);
            }
        }
    }
    Value::Token {
        addr,
        len,
        rkey,
        lid,
        dct_number,
        gid,
        hip,
        suffix,
        upper,
        semicolon,
    } => {
        let suffixed = suffix.map(|(below, above)| {
            (
                addr.wrapping_sub(u64::from(below)),
                u64::from(below) + u64::from(len) + u64::from(above),
            )
        });
        let spelling = TokenSpelling {
            form: hip.map_or(TokenForm::Reference, |port| TokenForm::HipObject { port }),
            suffixed,
            upper,
            semicolon,
        };
        let token = RdmaToken {
            addr,
            len,
            rkey,
            lid,
            dct_number,
            gid,
            spelling,
        };
        // The fields format refuses for, in its order: (reference, hipObject).
        let end = addr.checked_add(u64::from(len));
        let suffix_refused = suffixed.and_then(|(base, base_len)| {
            let fits = hip.is_some() || base_len <= u64::from(u32::MAX);
            if base_len == 0 || !fits {
                return Some((1, 5));
            }
            let holds = base <= addr
                && base
                    .checked_add(base_len)
                    .is_some_and(|base_end| end.is_some_and(|end| end <= base_end));
            (!holds).then_some((0, 4))
        });
        let refused = if dct_number > DCT_NUMBER_MAX {
            Some((4, 1))
        } else if len == 0 {
            Some((1, 5))
        } else if end.is_none() {
            Some((0, 4))
        } else if hip.is_some() && gid == Some([0; 16]) {
            Some((2, 2))
        } else {
            suffix_refused
        };
        match token.format() {
            Ok(text) => {
                assert!(refused.is_none(), "{token:?} formatted as {text}");
                let base_len = if hip.is_some() { HIP_TOKEN_LEN } else { TOKEN_LEN };
                let want = base_len + if suffixed.is_some() { SUFFIX_LEN } else { 0 } + usize::from(semicolon);
                assert_eq!(text.len(), want, "{text}");
                let letters: Vec<u8> = text.bytes().filter(u8::is_ascii_alphabetic).collect();
                assert!(letters.iter().all(|b| b.is_ascii_uppercase() == upper), "{text}");
                // A text without hex letters reads the same in either case: it parses as lower.
                let spelled = RdmaToken {
                    spelling: TokenSpelling {
                        upper: upper && !letters.is_empty(),
                        ..spelling
                    },
                    ..token
                };
                assert_eq!(RdmaToken::parse(&text), Ok(spelled), "{text}");
            }
            Err(e) => {
                let Some((reference, hipobject)) = refused else {
                    panic!("{token:?} refused: {e}");
                };
                let field = if hip.is_some() { hipobject } else { reference };
                assert_eq!(e.field, Some(field), "{e}");
            }
        }
    }
});
