//! What the S3-over-RDMA server and client examples share: the object digest, the byte
//! patterns the client checks, and how a process finds its device and its peer. (The headers
//! and what each answer means are the library's: `mlx5dv::s3::protocol`.)
#![allow(dead_code)] // each example uses its part

use mlx5dv::DcKey;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The examples' DC key unless `--key` says otherwise: the reference implementations' own,
/// so clients and servers built on them interoperate (it keeps nobody out).
pub const DEFAULT_KEY: DcKey = mlx5dv::s3::REFERENCE_DC_KEY;

/// The object's ETag: FNV-1a (64 bits) of its bytes, in hex. (S3 uses MD5; this example
/// needs only a digest both sides compute.)
pub fn etag(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("\"{h:016x}\"")
}

/// Object `seed`'s bytes.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut v = Vec::with_capacity(len);
    while v.len() < len {
        // xorshift64: cheap, and every object differs from every other.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = (len - v.len()).min(8);
        v.extend_from_slice(&x.to_le_bytes()[..n]);
    }
    v
}

/// Parses a hex key (`0x...` or plain).
pub fn parse_key(s: &str) -> Result<DcKey, String> {
    u64::from_str_radix(s.trim_start_matches("0x"), 16)
        .map(DcKey::new)
        .map_err(|e| format!("--key {s}: {e}"))
}

/// Under scripts/soft-mlx5-nodes: the file where the server publishes its HTTP address.
pub fn rendezvous_file() -> Option<PathBuf> {
    std::env::var_os("SOFT_MLX5_RENDEZVOUS").map(|d| Path::new(&d).join("s3_server.url"))
}

/// Writes `text` to `path` under a temporary name first, so a reader never sees half of it.
pub fn publish(path: &Path, text: &str) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Waits (up to `limit`) for `path` to exist and returns its text.
pub fn wait_for(path: &Path, limit: Duration) -> Result<String, String> {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            return Ok(s.trim().to_string());
        }
        if Instant::now() > deadline {
            return Err(format!("{} did not appear within {limit:?}", path.display()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The bytes a copy is checksummed behind: a chunk is summed right after it is copied, while
/// it is still in the cache (L1/L2), so the checksum costs no second pass through memory.
const SUM_CHUNK: usize = 32 << 10;

/// Copies `src` out through `write(offset, chunk)` (into a registered buffer), checksumming
/// each chunk as it goes: the checksum of `src` with the algorithm `alg`.
pub fn write_summed<E>(
    src: &[u8],
    alg: mlx5dv::s3::checksum::Algorithm,
    mut write: impl FnMut(usize, &[u8]) -> Result<(), E>,
) -> Result<mlx5dv::s3::checksum::Digest, E> {
    let mut h = mlx5dv::s3::checksum::Hasher::new(alg);
    for (i, chunk) in src.chunks(SUM_CHUNK).enumerate() {
        write(i * SUM_CHUNK, chunk)?;
        h.update(chunk);
    }
    Ok(h.finish())
}

/// Fills `dst` through `read(offset, chunk)` (out of a registered buffer), checksumming each
/// chunk as it lands: the checksum of the bytes read.
pub fn read_summed<E>(
    dst: &mut [u8],
    alg: mlx5dv::s3::checksum::Algorithm,
    mut read: impl FnMut(usize, &mut [u8]) -> Result<(), E>,
) -> Result<mlx5dv::s3::checksum::Digest, E> {
    let mut h = mlx5dv::s3::checksum::Hasher::new(alg);
    for (i, chunk) in dst.chunks_mut(SUM_CHUNK).enumerate() {
        read(i * SUM_CHUNK, chunk)?;
        h.update(chunk);
    }
    Ok(h.finish())
}

/// `token` written the way the `i`-th published client writes it, in turn: the reference's
/// seven fields (NVIDIA gpu_direct_rdma_access, cuObject), NIXL's and minio-cpp's nine (the
/// suffix the same range, with a `;`), upper case, hipObject's 88 hex digits (its DC form).
pub fn spelled(token: &mlx5dv::s3::RdmaToken, i: u64, port: u8) -> String {
    let spelling = match i % 4 {
        0 => mlx5dv::s3::TokenSpelling::default(),
        1 => mlx5dv::s3::TokenSpelling {
            suffixed: Some((token.addr, u64::from(token.len))),
            semicolon: true,
            ..mlx5dv::s3::TokenSpelling::default()
        },
        2 => mlx5dv::s3::TokenSpelling {
            upper: true,
            ..mlx5dv::s3::TokenSpelling::default()
        },
        _ => mlx5dv::s3::TokenSpelling {
            form: mlx5dv::s3::TokenForm::HipObject { port },
            ..mlx5dv::s3::TokenSpelling::default()
        },
    };
    token
        .spelled(spelling)
        .format()
        .expect("a minted token formats in every form")
}
