//! S3's flexible checksums of the bytes an RDMA transfer moves: CRC64/NVME
//! (`x-amz-checksum-crc64nvme`, S3's default) and CRC32C (`x-amz-checksum-crc32c`), as AWS
//! defines them, and their header values (base64 of the big-endian checksum).
//!
//! Both are reflected CRCs computed by one table-driven engine, slicing by 8 (eight bytes a
//! step through eight 256-entry tables built at compile time). A [`Hasher`] is incremental:
//! [`Hasher::update`] over the pieces gives the checksum of their concatenation, and
//! [`Hasher::copy`] checksums bytes while it copies them, so a server that copies a transfer
//! out of a staging buffer gets the checksum without reading the bytes a second time.
//!
//! - CRC64/NVME: polynomial `0xad93d23594c93659` (reflected `0x9a6c9329ac4bc9b5`), initial
//!   value and final XOR all ones, input and output reflected; "123456789" gives
//!   `0xae8b14860a799888`.
//! - CRC32C (Castagnoli): polynomial `0x1edc6f41` (reflected `0x82f63b78`), the same
//!   conventions; "123456789" gives `0xe3069283`.
//!
//! A request's checksum header is untrusted input: [`Digest::parse`] takes exactly the
//! canonical base64 of the checksum's bytes and names what else it got ([`ChecksumError`]).

use crate::{Mr, RegionBuffer};
use std::fmt;

/// The request and response header of a CRC64/NVME checksum.
pub const CRC64NVME_HEADER: &str = "x-amz-checksum-crc64nvme";
/// The request and response header of a CRC32C checksum.
pub const CRC32C_HEADER: &str = "x-amz-checksum-crc32c";
/// S3's other checksum headers (CRC32, SHA-1, SHA-256), which this module does not compute:
/// a request carrying one is refused ([`ChecksumErrorKind::Unsupported`]) rather than
/// stored unchecked.
pub const UNSUPPORTED_HEADERS: [&str; 3] = ["x-amz-checksum-crc32", "x-amz-checksum-sha1", "x-amz-checksum-sha256"];

/// A checksum algorithm S3 names in a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// CRC64/NVME, 8 bytes: S3's default.
    Crc64Nvme,
    /// CRC32C (Castagnoli), 4 bytes.
    Crc32c,
}

impl Algorithm {
    /// Every algorithm, in the order a server looks for their headers.
    pub const ALL: [Algorithm; 2] = [Algorithm::Crc64Nvme, Algorithm::Crc32c];

    /// Its header, `x-amz-checksum-<name>` (lower case, as HTTP/2 sends header names).
    pub const fn header(self) -> &'static str {
        match self {
            Algorithm::Crc64Nvme => CRC64NVME_HEADER,
            Algorithm::Crc32c => CRC32C_HEADER,
        }
    }

    /// S3's name of it (`x-amz-checksum-algorithm`, error messages): `CRC64NVME`, `CRC32C`.
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::Crc64Nvme => "CRC64NVME",
            Algorithm::Crc32c => "CRC32C",
        }
    }

    /// The checksum's width in bytes (8 or 4).
    pub const fn width(self) -> usize {
        match self {
            Algorithm::Crc64Nvme => 8,
            Algorithm::Crc32c => 4,
        }
    }

    /// The algorithm whose header `name` is (HTTP header names are case-insensitive).
    pub fn of_header(name: &str) -> Option<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.header().eq_ignore_ascii_case(name))
    }

    fn engine(self) -> &'static Engine {
        match self {
            Algorithm::Crc64Nvme => &CRC64NVME,
            Algorithm::Crc32c => &CRC32C,
        }
    }
}

/// A reflected CRC of up to 64 bits, sliced by 8: `tables[k][b]` is the CRC register after
/// byte `b` followed by `k` zero bytes, from a zero register.
struct Engine {
    tables: [[u64; 256]; 8],
    /// Initial value and final XOR: all ones of the width.
    ones: u64,
}

impl Engine {
    const fn new(reflected_poly: u64, width: u32) -> Engine {
        let mut tables = [[0u64; 256]; 8];
        let mut i = 0;
        while i < 256 {
            let mut crc = i as u64;
            let mut bit = 0;
            while bit < 8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ reflected_poly
                } else {
                    crc >> 1
                };
                bit += 1;
            }
            tables[0][i] = crc;
            i += 1;
        }
        let mut k = 1;
        while k < 8 {
            let mut i = 0;
            while i < 256 {
                let prev = tables[k - 1][i];
                tables[k][i] = (prev >> 8) ^ tables[0][(prev & 0xff) as usize];
                i += 1;
            }
            k += 1;
        }
        let ones = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
        Engine { tables, ones }
    }

    /// One 8-byte step: the register (narrower CRCs keep their upper bits zero) XORed with
    /// the word read little-endian, each byte's effect looked up by its distance from the end.
    #[inline(always)]
    fn step8(&self, crc: u64, word: u64) -> u64 {
        let x = crc ^ word;
        let t = &self.tables;
        t[7][(x & 0xff) as usize]
            ^ t[6][((x >> 8) & 0xff) as usize]
            ^ t[5][((x >> 16) & 0xff) as usize]
            ^ t[4][((x >> 24) & 0xff) as usize]
            ^ t[3][((x >> 32) & 0xff) as usize]
            ^ t[2][((x >> 40) & 0xff) as usize]
            ^ t[1][((x >> 48) & 0xff) as usize]
            ^ t[0][(x >> 56) as usize]
    }

    #[inline(always)]
    fn step1(&self, crc: u64, byte: u8) -> u64 {
        (crc >> 8) ^ self.tables[0][((crc ^ u64::from(byte)) & 0xff) as usize]
    }

    fn update(&self, mut crc: u64, data: &[u8]) -> u64 {
        let mut words = data.chunks_exact(8);
        for w in &mut words {
            crc = self.step8(crc, u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        words.remainder().iter().fold(crc, |c, &b| self.step1(c, b))
    }

    /// `update` over the `len` bytes at `at`, read in place by volatile loads (aligned 8-byte
    /// words, single bytes at the ends): memory the adapter may write, so no Rust reference to
    /// it is ever formed. A byte written meanwhile is folded in as some version of it.
    ///
    /// # Safety
    /// `at..at + len` is readable memory that stays allocated for the call.
    unsafe fn update_in_place(&self, mut crc: u64, at: *const u8, len: usize) -> u64 {
        let head = at.align_offset(8).min(len);
        for i in 0..head {
            // SAFETY: i < len: inside the readable range (the caller's contract).
            crc = self.step1(crc, unsafe { at.add(i).read_volatile() });
        }
        let words = (len - head) / 8;
        for w in 0..words {
            // SAFETY: at + head is 8-aligned and every word ends inside the range.
            let word = unsafe { at.add(head + 8 * w).cast::<u64>().read_volatile() };
            crc = self.step8(crc, u64::from_le(word));
        }
        for i in head + 8 * words..len {
            // SAFETY: i < len.
            crc = self.step1(crc, unsafe { at.add(i).read_volatile() });
        }
        crc
    }

    /// `update` over `src` while copying it into `dst` (the same length): each word is
    /// read once, stored and folded in.
    fn copy(&self, mut crc: u64, dst: &mut [u8], src: &[u8]) -> u64 {
        let mut d = dst.chunks_exact_mut(8);
        let mut s = src.chunks_exact(8);
        for (dw, sw) in (&mut d).zip(&mut s) {
            let w = u64::from_le_bytes(sw.try_into().expect("8 bytes"));
            dw.copy_from_slice(&w.to_le_bytes());
            crc = self.step8(crc, w);
        }
        for (db, &sb) in d.into_remainder().iter_mut().zip(s.remainder()) {
            *db = sb;
            crc = self.step1(crc, sb);
        }
        crc
    }
}

static CRC64NVME: Engine = Engine::new(0x9a6c_9329_ac4b_c9b5, 64);
static CRC32C: Engine = Engine::new(0x82f6_3b78, 32);

/// An incremental checksum: `update` (or `copy`) the bytes in order, in pieces of any size,
/// then `finish`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hasher {
    algorithm: Algorithm,
    /// The CRC register (before the final XOR).
    crc: u64,
}

impl Hasher {
    /// A checksum of no bytes yet.
    pub fn new(algorithm: Algorithm) -> Hasher {
        Hasher {
            algorithm,
            crc: algorithm.engine().ones,
        }
    }

    /// Its algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Folds `data` in, after the bytes before it.
    pub fn update(&mut self, data: &[u8]) {
        self.crc = self.algorithm.engine().update(self.crc, data);
    }

    /// Copies `src` into `dst` and folds it in, in one pass over the bytes (the copy a
    /// server makes out of its staging buffer, checksummed while the bytes are in registers).
    ///
    /// # Panics
    /// If `dst` and `src` differ in length (as `copy_from_slice`): a caller's bug.
    pub fn copy(&mut self, dst: &mut [u8], src: &[u8]) {
        assert_eq!(
            dst.len(),
            src.len(),
            "Hasher::copy: destination and source differ in length"
        );
        self.crc = self.algorithm.engine().copy(self.crc, dst, src);
    }

    /// Folds in `len` bytes at `offset` of a registered region, read where they lie: no copy,
    /// no `unsafe` in the caller, and no reference to memory the adapter may write (the bytes
    /// are read as [`Mr::read`] reads them). Take it once the transfer that wrote the range
    /// has resolved: a region the executor lends (`submit_region`) is written only by the
    /// transfers run on it, so after a PUT's `Done` (or a GET's, for what was sent) the range
    /// holds exactly the bytes that moved. Bytes something still writes (a transfer in
    /// flight, a peer with remote write access) are each folded in as some version of them,
    /// never a wrong read of memory.
    ///
    /// # Errors
    /// EINVAL when the range does not fit in the region.
    pub fn update_region<B: RegionBuffer>(&mut self, region: &Mr<B>, offset: usize, len: usize) -> crate::Result<()> {
        let at = region.host_range(offset, len, "Hasher::update_region")?;
        // SAFETY: `host_range` checked the range against the memory the region holds, which
        // stays allocated while `region` is borrowed.
        self.crc = unsafe { self.algorithm.engine().update_in_place(self.crc, at, len) };
        Ok(())
    }

    /// The checksum of every byte folded in so far (the hasher may go on).
    pub fn finish(&self) -> Digest {
        Digest {
            algorithm: self.algorithm,
            value: self.crc ^ self.algorithm.engine().ones,
        }
    }
}

/// A checksum: its algorithm and value (CRC32C's in the low 32 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Digest {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The value, as the algorithm's check values are written.
    pub value: u64,
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_digit(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Base64 characters and `=` pads of a value of `n` bytes (n < 3 * 2^k for the widths here).
const fn encoded_shape(n: usize) -> (usize, usize) {
    let chars = (n * 8).div_ceil(6);
    (chars, (4 - chars % 4) % 4)
}

impl Digest {
    /// The checksum of `data`.
    pub fn of(algorithm: Algorithm, data: &[u8]) -> Digest {
        let mut h = Hasher::new(algorithm);
        h.update(data);
        h.finish()
    }

    /// The checksum of `len` bytes at `offset` of a registered region, read in place (see
    /// [`Hasher::update_region`]: after the transfer that wrote them resolved):
    ///
    /// ```no_run
    /// # async fn f(exec: &mlx5dv::s3::AsyncExecutor, pd: &mlx5dv::Pd, token: &mlx5dv::s3::RdmaToken) -> mlx5dv::Result<()> {
    /// use mlx5dv::s3::checksum::{Algorithm, Digest};
    /// use mlx5dv::s3::Direction;
    /// let region = pd.register(vec![0u8; token.len as usize], mlx5dv::Access::LOCAL_WRITE)?;
    /// let len = region.len();
    /// let (done, region) = exec.submit_region(token, 0, Direction::Put, region, 0, len)?.await;
    /// if done.is_ok() {
    ///     let sum = Digest::of_region(Algorithm::Crc64Nvme, &region, 0, len)?;
    ///     println!("{}", sum.header_value());
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// EINVAL when the range does not fit in the region.
    pub fn of_region<B: RegionBuffer>(
        algorithm: Algorithm,
        region: &Mr<B>,
        offset: usize,
        len: usize,
    ) -> crate::Result<Digest> {
        let mut h = Hasher::new(algorithm);
        h.update_region(region, offset, len)?;
        Ok(h.finish())
    }

    /// The checksum's bytes, big-endian (4 or 8 of them), as S3 encodes them.
    pub fn to_be_bytes(&self) -> Vec<u8> {
        self.value.to_be_bytes()[8 - self.algorithm.width()..].to_vec()
    }

    /// The header value: base64 (standard alphabet, padded) of the big-endian bytes.
    pub fn header_value(&self) -> String {
        let bytes = self.to_be_bytes();
        let mut out = String::with_capacity(12);
        for chunk in bytes.chunks(3) {
            let mut group = [0u8; 3];
            group[..chunk.len()].copy_from_slice(chunk);
            let v = u32::from(group[0]) << 16 | u32::from(group[1]) << 8 | u32::from(group[2]);
            for i in 0..=chunk.len() {
                out.push(BASE64[(v >> (18 - 6 * i) & 63) as usize] as char);
            }
            for _ in chunk.len()..3 {
                out.push('=');
            }
        }
        out
    }

    /// Reads a header value of `algorithm`, strictly: exactly the canonical base64 of the
    /// checksum's bytes (12 characters for CRC64NVME, 8 for CRC32C, with their `=` pads),
    /// as the header arrives after HTTP took surrounding blanks off.
    ///
    /// # Errors
    /// A [`ChecksumError`] naming the header, the value and what is wrong: the length, a
    /// character outside base64's alphabet (and where), a pad missing or misplaced, or
    /// bits set below the last byte (a non-canonical spelling).
    pub fn parse(algorithm: Algorithm, value: &str) -> Result<Digest, ChecksumError> {
        let err = |kind| ChecksumError {
            header: algorithm.header(),
            value: value.chars().take(64).collect(),
            kind,
        };
        let b = value.as_bytes();
        let (chars, pads) = encoded_shape(algorithm.width());
        if b.len() != chars + pads {
            return Err(err(ChecksumErrorKind::Length {
                got: b.len(),
                want: chars + pads,
            }));
        }
        let mut bits: u128 = 0;
        for (at, &c) in b[..chars].iter().enumerate() {
            match base64_digit(c) {
                Some(d) => bits = bits << 6 | u128::from(d),
                None if c == b'=' => return Err(err(ChecksumErrorKind::Padding)),
                None => return Err(err(ChecksumErrorKind::Character { at, byte: c })),
            }
        }
        if let Some(at) = b[chars..].iter().position(|&c| c != b'=') {
            let c = b[chars + at];
            return Err(if base64_digit(c).is_some() {
                err(ChecksumErrorKind::Padding)
            } else {
                err(ChecksumErrorKind::Character {
                    at: chars + at,
                    byte: c,
                })
            });
        }
        let extra = chars * 6 - algorithm.width() * 8;
        if bits & ((1 << extra) - 1) != 0 {
            return Err(err(ChecksumErrorKind::TrailingBits));
        }
        Ok(Digest {
            algorithm,
            value: (bits >> extra) as u64,
        })
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.algorithm.header(), self.header_value())
    }
}

/// What is wrong with a checksum header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChecksumErrorKind {
    /// Not the length of the checksum's base64 (`want` characters with pads).
    Length {
        /// The value's length in bytes.
        got: usize,
        /// The length of the algorithm's encoding.
        want: usize,
    },
    /// A byte outside base64's alphabet, at byte `at`.
    Character {
        /// Its position in the value.
        at: usize,
        /// The byte.
        byte: u8,
    },
    /// A `=` among the digits, or a digit where the pads go.
    Padding,
    /// The last digit has bits set below the checksum's last byte: not the canonical spelling.
    TrailingBits,
    /// More than one checksum header in a request (S3 takes one).
    Several,
    /// An algorithm S3 has that this module does not compute ([`UNSUPPORTED_HEADERS`]).
    Unsupported,
}

/// A checksum header a request cannot carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChecksumError {
    /// The header.
    pub header: &'static str,
    /// Its value (at most 64 characters of it).
    pub value: String,
    /// What is wrong.
    pub kind: ChecksumErrorKind,
}

impl fmt::Display for ChecksumError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}: ", self.header, self.value)?;
        match &self.kind {
            ChecksumErrorKind::Length { got, want } => write!(
                f,
                "{got} characters, the base64 of the checksum's bytes is {want} (with its = pads)"
            ),
            ChecksumErrorKind::Character { at, byte } => {
                write!(f, "byte {byte:#04x} at {at} is not base64 (A-Z a-z 0-9 + /)")
            }
            ChecksumErrorKind::Padding => write!(f, "the = pads belong at the end only, and all of them"),
            ChecksumErrorKind::TrailingBits => {
                write!(
                    f,
                    "the last digit sets bits past the checksum: not its canonical base64"
                )
            }
            ChecksumErrorKind::Several => write!(f, "a request carries one x-amz-checksum-* header, not several"),
            ChecksumErrorKind::Unsupported => {
                write!(f, "this server checks CRC64NVME and CRC32C only: send one of those")
            }
        }
    }
}

impl std::error::Error for ChecksumError {}

/// The checksum a request asks the server to validate: of its `x-amz-checksum-*` headers
/// (looked up through `header`, by lower-case name), the one it carries, parsed.
/// `Ok(None)`: none.
///
/// # Errors
/// [`Digest::parse`]'s for a malformed value; [`ChecksumErrorKind::Several`] for two
/// algorithms' headers at once; [`ChecksumErrorKind::Unsupported`] for one of
/// [`UNSUPPORTED_HEADERS`] (the bytes could not be checked as the client asks).
pub fn requested<'a>(header: impl Fn(&str) -> Option<&'a str>) -> Result<Option<Digest>, ChecksumError> {
    if let Some((name, v)) = UNSUPPORTED_HEADERS.iter().find_map(|&n| header(n).map(|v| (n, v))) {
        return Err(ChecksumError {
            header: name,
            value: v.chars().take(64).collect(),
            kind: ChecksumErrorKind::Unsupported,
        });
    }
    let mut found: Option<Digest> = None;
    for a in Algorithm::ALL {
        if let Some(v) = header(a.header()) {
            if let Some(first) = found {
                return Err(ChecksumError {
                    header: a.header(),
                    value: format!("{v} (and {first})"),
                    kind: ChecksumErrorKind::Several,
                });
            }
            found = Some(Digest::parse(a, v)?);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    const C64: Algorithm = Algorithm::Crc64Nvme;
    const C32: Algorithm = Algorithm::Crc32c;

    /// A bit-at-a-time reference CRC: the definition itself, without tables.
    fn bitwise(a: Algorithm, data: &[u8]) -> u64 {
        let (poly, ones) = match a {
            C64 => (0x9a6c_9329_ac4b_c9b5u64, u64::MAX),
            C32 => (0x82f6_3b78, 0xffff_ffff),
        };
        let mut crc = ones;
        for &b in data {
            crc ^= u64::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ poly } else { crc >> 1 };
            }
        }
        crc ^ ones
    }

    /// A small deterministic generator (xorshift64*), for data and split points.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn bytes(&mut self, n: usize) -> Vec<u8> {
            (0..n).map(|_| self.next() as u8).collect()
        }
    }

    #[test]
    fn the_published_check_values_hold() {
        // The CRC catalogue's check values ("123456789"): CRC-64/NVME and CRC-32/ISCSI.
        assert_eq!(Digest::of(C64, b"123456789").value, 0xae8b_1486_0a79_9888);
        assert_eq!(Digest::of(C32, b"123456789").value, 0xe306_9283);
        for a in Algorithm::ALL {
            assert_eq!(Digest::of(a, b"").value, 0);
        }
    }

    #[test]
    fn aws_test_vectors_hold() {
        // aws-c-checksums tests/crc64_test.c (as aws-crt-swift's ChecksumsTests.swift
        // repeats them): 32 zero bytes, and the bytes 0..32.
        let iota: Vec<u8> = (0..32).collect();
        assert_eq!(Digest::of(C64, &[0u8; 32]).value, 0xcf34_7343_4d4e_cf3b);
        assert_eq!(Digest::of(C64, &iota).value, 0xb9d9_d4a8_492c_bd7f);
        // aws-c-s3 tests/s3_checksums_crc64nvme_tests.c: "aaaaaaaaaa", one-shot and in pieces.
        let aaaa = Digest::of(C64, b"aaaaaaaaaa");
        assert_eq!(aaaa.to_be_bytes(), [0x0c, 0x1a, 0x80, 0x03, 0x6d, 0x65, 0xc5, 0x55]);
        let mut h = Hasher::new(C64);
        (0..5).for_each(|_| h.update(b"aa"));
        assert_eq!(h.finish(), aaaa);
        // aws-crt-swift ChecksumsTests.swift testCRC32C.
        assert_eq!(Digest::of(C32, b"Hello").value, 2_178_485_787);
        assert_eq!(
            Digest::of(C32, b"{\"foo\":\"base64 encoded sha1 checksum\"}").value,
            3_565_301_023
        );
        // RFC 3720 (iSCSI) appendix B.4: 32 bytes of zeros, of ones, increasing, decreasing.
        let down: Vec<u8> = (0..32).rev().collect();
        assert_eq!(Digest::of(C32, &[0u8; 32]).value, 0x8a91_36aa);
        assert_eq!(Digest::of(C32, &[0xffu8; 32]).value, 0x62a8_ab43);
        assert_eq!(Digest::of(C32, &iota).value, 0x46dd_794e);
        assert_eq!(Digest::of(C32, &down).value, 0x113f_db5c);
    }

    #[test]
    fn the_tables_agree_with_the_bitwise_definition_at_every_length() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let data = rng.bytes(300);
        for a in Algorithm::ALL {
            for n in 0..data.len() {
                assert_eq!(Digest::of(a, &data[..n]).value, bitwise(a, &data[..n]), "{a:?} {n}");
            }
        }
    }

    #[test]
    fn the_in_place_read_agrees_with_the_bitwise_definition_at_every_alignment_and_length() {
        let mut rng = Rng(7);
        let data = rng.bytes(300);
        for a in Algorithm::ALL {
            for start in 0..16 {
                for n in 0..data.len() - start {
                    let at = data[start..].as_ptr();
                    // SAFETY: at..at + n lies inside `data`.
                    let crc = unsafe { a.engine().update_in_place(a.engine().ones, at, n) };
                    let want = bitwise(a, &data[start..start + n]);
                    assert_eq!(crc ^ a.engine().ones, want, "{a:?} from {start}, {n} bytes");
                }
            }
        }
    }

    #[test]
    fn incremental_equals_one_shot_at_random_split_points() {
        let mut rng = Rng(42);
        let data = rng.bytes(64 * 1024 + 13);
        for a in Algorithm::ALL {
            let whole = Digest::of(a, &data);
            for _ in 0..50 {
                let mut cuts: Vec<usize> = (0..(rng.next() % 8))
                    .map(|_| (rng.next() % (data.len() as u64 + 1)) as usize)
                    .collect();
                cuts.push(0);
                cuts.push(data.len());
                cuts.sort_unstable();
                let mut h = Hasher::new(a);
                let mut c = Hasher::new(a);
                let mut copy = vec![0u8; data.len()];
                for w in cuts.windows(2) {
                    h.update(&data[w[0]..w[1]]);
                    c.copy(&mut copy[w[0]..w[1]], &data[w[0]..w[1]]);
                }
                assert_eq!(h.finish(), whole, "{a:?} cut at {cuts:?}");
                assert_eq!(c.finish(), whole, "{a:?} copied, cut at {cuts:?}");
                assert!(copy == data, "the copy holds the bytes");
            }
        }
    }

    #[test]
    fn a_header_value_is_base64_of_the_big_endian_bytes_and_reads_back() {
        // aws-c-s3's "aaaaaaaaaa" bytes 0c1a80036d65c555, in base64.
        let aaaa = Digest::of(C64, b"aaaaaaaaaa");
        assert_eq!(aaaa.header_value(), "DBqAA21lxVU=");
        assert_eq!(Digest::of(C32, b"123456789").header_value(), "4waSgw==");
        assert_eq!(Digest::of(C64, b"").header_value(), "AAAAAAAAAAA=");
        let mut rng = Rng(7);
        for _ in 0..200 {
            for a in Algorithm::ALL {
                let d = Digest::of(a, &rng.bytes(17));
                assert_eq!(Digest::parse(a, &d.header_value()), Ok(d));
            }
        }
        assert_eq!(aaaa.to_string(), "x-amz-checksum-crc64nvme: DBqAA21lxVU=");
    }

    #[test]
    fn a_malformed_header_value_is_refused_naming_what_is_wrong() {
        use ChecksumErrorKind::*;
        for (a, v, want) in [
            (C64, "", Length { got: 0, want: 12 }),
            (C64, "DBqAA21lxVU", Length { got: 11, want: 12 }),
            (C64, "DBqAA21lxVU==", Length { got: 13, want: 12 }),
            (C32, "DBqAA21lxVU=", Length { got: 12, want: 8 }),
            (C64, "DBqAA21l-VU=", Character { at: 8, byte: b'-' }),
            (C64, "DBqAA21l VU=", Character { at: 8, byte: b' ' }),
            (C64, "DBqAA21lxV_=", Character { at: 10, byte: b'_' }),
            (C64, "DBqAA21lxVU.", Character { at: 11, byte: b'.' }),
            (C64, "DBqAA21lxVUA", Padding),
            (C64, "DBqAA21lx=U=", Padding),
            (C32, "4waSg===", Padding),
            (C32, "4waSgw=A", Padding),
            (C64, "DBqAA21lxVV=", TrailingBits),
            (C32, "4waSgx==", TrailingBits),
            (C64, "DBqAA21lxVé", Character { at: 10, byte: 0xc3 }),
        ] {
            let e = Digest::parse(a, v).unwrap_err();
            assert_eq!(e.kind, want, "{a:?} {v:?}");
            assert_eq!(e.header, a.header());
            assert!(e.to_string().starts_with(a.header()), "{e}");
        }
    }

    #[test]
    fn a_request_carries_at_most_one_checksum_header() {
        let good = Digest::of(C32, b"x");
        let value = good.header_value();
        let one = |name: &str| (name == CRC32C_HEADER).then_some(value.as_str());
        assert_eq!(requested(one), Ok(Some(good)));
        assert_eq!(requested(|_| None), Ok(None));
        let both = |n: &str| (n == CRC64NVME_HEADER || n == CRC32C_HEADER).then_some("AAAAAAAAAAA=");
        assert_eq!(requested(both).unwrap_err().kind, ChecksumErrorKind::Several);
        let sha = |name: &str| (name == "x-amz-checksum-sha256").then_some("AAAA");
        let e = requested(sha).unwrap_err();
        assert_eq!(
            (e.header, e.kind),
            ("x-amz-checksum-sha256", ChecksumErrorKind::Unsupported)
        );
        let bad = |name: &str| (name == CRC64NVME_HEADER).then_some("nope");
        assert_eq!(
            requested(bad).unwrap_err().kind,
            ChecksumErrorKind::Length { got: 4, want: 12 }
        );
        assert_eq!(Algorithm::of_header("X-Amz-Checksum-CRC64NVME"), Some(C64));
        assert_eq!(Algorithm::of_header("x-amz-checksum-crc32"), None);
    }

    #[test]
    fn speed_is_reported_for_information_only() {
        // Not an assertion: a figure for the report (a debug build is far slower than release).
        let data = Rng(1).bytes(4 << 20);
        let mut dst = vec![0u8; data.len()];
        for a in Algorithm::ALL {
            let t = std::time::Instant::now();
            let d = Digest::of(a, &data);
            let update = t.elapsed();
            let t = std::time::Instant::now();
            let mut h = Hasher::new(a);
            h.copy(&mut dst, &data);
            let copy = t.elapsed();
            assert_eq!(h.finish(), d);
            let gbs = |e: std::time::Duration| data.len() as f64 / e.as_secs_f64().max(1e-9) / 1e9;
            eprintln!(
                "{}: update {:.2} GB/s, copy+update {:.2} GB/s",
                a.name(),
                gbs(update),
                gbs(copy)
            );
        }
    }
}
