//! Writes the seed corpora of the byte-level targets, from the library's own encoders:
//! `seeds CORPUS_DIR` fills `CORPUS_DIR/<target>/seed-*` (a few files of under 140 bytes).
//! The structured targets (`remote_memory_range`, `encode_round_trip`) start from nothing.

use mlx5dv::addr::{DcTargetAddr, Mtu, RemoteMemory};
use mlx5dv::cm::DcAnnouncement;
use mlx5dv::s3::{RdmaToken, TokenForm, TokenSpelling};
use mlx5dv::DcKey;
use std::path::Path;

fn main() -> std::io::Result<()> {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: seeds CORPUS_DIR");
        std::process::exit(2);
    };
    let dir = Path::new(&dir);

    let ib = DcTargetAddr {
        lid: 0x0007,
        gid: [0; 16],
        dct_number: 0x00ab_cdef,
        port_mtu: Mtu::Mtu4096,
        out_of_order: false,
    };
    let roce = DcTargetAddr {
        lid: 0,
        gid: [
            0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55,
        ],
        dct_number: 0x12_3456,
        port_mtu: Mtu::Mtu1024,
        out_of_order: true,
    };
    let memory = RemoteMemory {
        addr: 0x7f00_dead_b000,
        len: 0x10_0000,
        rkey: 0x1122_3344,
    };
    let encoded = |a: DcTargetAddr| a.encode().expect("24-bit DCT numbers").to_vec();
    write(
        dir,
        "addr_decode",
        &[encoded(ib), encoded(roce), memory.encode().to_vec()],
    )?;

    let plain = DcAnnouncement::new(roce);
    let full = DcAnnouncement::new(ib)
        .with_key(DcKey::new(0xffee_ddcc))
        .with_memory(memory);
    let mut reply = full.encode().expect("encodable");
    reply.resize(136, 0); // as a SIDR reply delivers it
    let announced = |a: DcAnnouncement| a.encode().expect("encodable");
    write(
        dir,
        "sidr_announcement",
        &[
            announced(plain),
            announced(DcAnnouncement::new(ib).with_key(DcKey::new(7))),
            announced(DcAnnouncement::new(ib).with_memory(memory)),
            announced(full),
            reply,
        ],
    )?;

    let reference = "0102030405060708:01020304:01020304:0102:010203:1:0102030405060708090a0b0c0d0e0f10";
    let without_gid = RdmaToken {
        addr: 0x7f00_0000_1000,
        len: 4096,
        rkey: 0x1234,
        lid: 7,
        dct_number: 0x4100,
        gid: None,
        spelling: TokenSpelling::default(),
    };
    let at_the_end = RdmaToken {
        addr: 0xffff_ffff_ffff_ff00,
        len: 0xff,
        ..without_gid
    };
    let hip = RdmaToken {
        gid: Some(roce.gid),
        ..without_gid
    };
    let formatted = |t: RdmaToken| t.format().expect("formattable").into_bytes();
    write(
        dir,
        "s3_token",
        &[
            reference.as_bytes().to_vec(),
            formatted(without_gid),
            formatted(at_the_end),
            // NIXL's and minio-cpp's nine fields (the suffix a sub-range), with a ';'.
            format!("{reference}:0102030405060708:0000000000000004;").into_bytes(),
            // Upper case.
            reference.to_uppercase().into_bytes(),
            // hipObject DC, with its curl transport's suffix; and RC.
            formatted(hip.spelled(TokenSpelling {
                form: TokenForm::HipObject { port: 1 },
                suffixed: Some((hip.addr, u64::from(hip.len))),
                ..TokenSpelling::default()
            })),
            formatted(hip.spelled(TokenSpelling {
                form: TokenForm::HipObject { port: 1 },
                ..TokenSpelling::default()
            })),
            {
                let mut rc = formatted(hip.spelled(TokenSpelling {
                    form: TokenForm::HipObject { port: 1 },
                    ..TokenSpelling::default()
                }));
                rc[1] = b'1';
                rc
            },
        ],
    )
}

fn write(dir: &Path, target: &str, seeds: &[Vec<u8>]) -> std::io::Result<()> {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir)?;
    for (i, seed) in seeds.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{i}")), seed)?;
    }
    Ok(())
}
