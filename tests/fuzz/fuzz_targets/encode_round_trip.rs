//! The encoders, from the other side: for any value, the encoder refuses exactly what the
//! decoder would refuse, and the decoder gives back every value the encoder accepted (DC target
//! address, remote memory, SIDR announcement, S3 token).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mlx5dv::addr::{AddrError, DcTargetAddr, RemoteMemory};
use mlx5dv::cm::DcAnnouncement;
use mlx5dv::s3::{RdmaToken, TOKEN_LEN};
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
    } => {
        let token = RdmaToken {
            addr,
            len,
            rkey,
            lid,
            dct_number,
            gid,
        };
        match token.format() {
            Ok(text) => {
                assert_eq!(text.len(), TOKEN_LEN);
                assert_eq!(RdmaToken::parse(&text), Ok(token));
            }
            Err(e) => {
                let field = if dct_number > DCT_NUMBER_MAX {
                    4
                } else if len == 0 {
                    1
                } else {
                    assert!(addr.checked_add(u64::from(len)).is_none(), "{token:?} refused: {e}");
                    0
                };
                assert_eq!(e.field, Some(field), "{e}");
            }
        }
    }
});
