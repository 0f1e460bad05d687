//! Out-of-band address exchange: what one peer sends another (over TCP or any other channel)
//! before RDMA traffic can flow.
//!
//! Two things travel out of band:
//!
//! * a [`DcTargetAddr`]: everything a DC initiator needs to reach a DC target (DCT), and
//! * a [`RemoteMemory`]: an address, a length and an rkey for one-sided RDMA reads and writes.
//!
//! The DC access key is deliberately **not** part of [`DcTargetAddr`]: it is a secret, and the
//! application exchanges it separately (or derives it) however its security model requires.
//!
//! # Encoding
//!
//! Both types encode to a fixed-size, versioned, 32-byte blob with [`DcTargetAddr::encode`] /
//! [`RemoteMemory::encode`] and decode with [`DcTargetAddr::decode`] / [`RemoteMemory::decode`].
//! All integers are big-endian (network byte order). Every bit of a blob is either a value or
//! checked, so the encoding is canonical: a blob that decodes re-encodes to the same bytes.
//! Decoding treats its input as untrusted and returns an [`AddrError`] for every malformed
//! blob; it never panics.
//!
//! Common 8-byte header:
//!
//! | Offset | Size | Field    | Value                                                   |
//! |-------:|-----:|----------|---------------------------------------------------------|
//! | 0      | 4    | magic    | `b"M5DV"` ([`MAGIC`])                                   |
//! | 4      | 1    | version  | format version, `1` ([`FORMAT_VERSION`])                |
//! | 5      | 1    | kind     | `1` = [`DcTargetAddr`], `2` = [`RemoteMemory`]          |
//! | 6      | 2    | reserved | must be zero                                            |
//!
//! [`DcTargetAddr`], version 1 ([`DcTargetAddr::ENCODED_LEN`] = 32 bytes):
//!
//! | Offset | Size | Field      | Value                                                     |
//! |-------:|-----:|------------|-----------------------------------------------------------|
//! | 0      | 8    | header     | kind = 1                                                  |
//! | 8      | 2    | lid        | u16, big-endian                                           |
//! | 10     | 1    | port_mtu   | raw `IBV_MTU_*` value, 1 (256 bytes) ..= 5 (4096 bytes)   |
//! | 11     | 1    | flags      | bit 0: out-of-order data placement; other bits zero       |
//! | 12     | 4    | dct_number | u32, big-endian; 24-bit, so byte 12 must be zero          |
//! | 16     | 16   | gid        | the 16 GID bytes, as-is                                   |
//!
//! [`RemoteMemory`], version 1 ([`RemoteMemory::ENCODED_LEN`] = 32 bytes):
//!
//! | Offset | Size | Field    | Value                                                       |
//! |-------:|-----:|----------|-------------------------------------------------------------|
//! | 0      | 8    | header   | kind = 2                                                    |
//! | 8      | 8    | addr     | u64, big-endian                                             |
//! | 16     | 8    | len      | u64, big-endian; `addr + len` must not overflow a u64       |
//! | 24     | 4    | rkey     | u32, big-endian                                             |
//! | 28     | 4    | reserved | must be zero                                                |
//!
//! Decoding checks, in order: that the blob is at least a header long, the magic, the version,
//! the kind, the header's reserved bytes, the exact length, and then the body. A blob from a
//! future version of this format is therefore reported as a version mismatch, not as a length
//! mismatch, even if that version changed the length.
//!
//! ```
//! # use mlx5dv::addr::{DcTargetAddr, Mtu, RemoteMemory};
//! let target = DcTargetAddr { lid: 7, gid: [0; 16], dct_number: 0x12_3456, port_mtu: Mtu::Mtu4096, out_of_order: false };
//! let blob = target.encode()?;
//! assert_eq!(DcTargetAddr::decode(&blob)?, target);
//!
//! let mem = RemoteMemory { addr: 0x1000, len: 4096, rkey: 42 };
//! assert_eq!(RemoteMemory::decode(&mem.encode())?, mem);
//! # Ok::<(), mlx5dv::addr::AddrError>(())
//! ```

use std::fmt;

/// The 4 bytes every address blob starts with.
pub const MAGIC: [u8; 4] = *b"M5DV";

/// The encoding version this library writes, and the only one it reads.
pub const FORMAT_VERSION: u8 = 1;

/// [`DcTargetAddr`]'s flags byte: the DCT places data out of order.
const FLAG_OUT_OF_ORDER: u8 = 1;

/// Length of the common header in front of every address blob.
const HEADER_LEN: usize = 8;

/// Kind byte of an encoded [`DcTargetAddr`].
const KIND_DC_TARGET: u8 = 1;

/// Kind byte of an encoded [`RemoteMemory`].
const KIND_REMOTE_MEMORY: u8 = 2;

/// Largest DCT number: InfiniBand QP and DCT numbers are 24 bits wide.
const DCT_NUMBER_MAX: u32 = 0x00FF_FFFF;

/// Path MTU of an InfiniBand or RoCE port, as the verbs `ibv_mtu` enumeration names it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Mtu {
    /// 256 bytes (`IBV_MTU_256` = 1).
    Mtu256,
    /// 512 bytes (`IBV_MTU_512` = 2).
    Mtu512,
    /// 1024 bytes (`IBV_MTU_1024` = 3).
    Mtu1024,
    /// 2048 bytes (`IBV_MTU_2048` = 4).
    Mtu2048,
    /// 4096 bytes (`IBV_MTU_4096` = 5).
    Mtu4096,
}

impl Mtu {
    /// The MTU in bytes: 256, 512, 1024, 2048 or 4096.
    pub fn bytes(self) -> u32 {
        match self {
            Mtu::Mtu256 => 256,
            Mtu::Mtu512 => 512,
            Mtu::Mtu1024 => 1024,
            Mtu::Mtu2048 => 2048,
            Mtu::Mtu4096 => 4096,
        }
    }

    /// The MTU of exactly `n` bytes, or `None` unless `n` is 256, 512, 1024, 2048 or 4096.
    pub fn from_bytes(n: u32) -> Option<Mtu> {
        match n {
            256 => Some(Mtu::Mtu256),
            512 => Some(Mtu::Mtu512),
            1024 => Some(Mtu::Mtu1024),
            2048 => Some(Mtu::Mtu2048),
            4096 => Some(Mtu::Mtu4096),
            _ => None,
        }
    }

    /// The verbs `ibv_mtu` value: `IBV_MTU_256` = 1 ..= `IBV_MTU_4096` = 5.
    pub fn to_raw(self) -> u32 {
        match self {
            Mtu::Mtu256 => 1,
            Mtu::Mtu512 => 2,
            Mtu::Mtu1024 => 3,
            Mtu::Mtu2048 => 4,
            Mtu::Mtu4096 => 5,
        }
    }

    /// The MTU for a verbs `ibv_mtu` value, or `None` unless `v` is 1 ..= 5.
    pub fn from_raw(v: u32) -> Option<Mtu> {
        match v {
            1 => Some(Mtu::Mtu256),
            2 => Some(Mtu::Mtu512),
            3 => Some(Mtu::Mtu1024),
            4 => Some(Mtu::Mtu2048),
            5 => Some(Mtu::Mtu4096),
            _ => None,
        }
    }
}

/// Everything a DC initiator needs to reach a DC target (DCT), except the DC access key.
///
/// The access key is a secret and is not part of the address: exchange it separately.
/// See the [module documentation](self) for the byte encoding.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct DcTargetAddr {
    /// LID of the target's port (InfiniBand; 0 on RoCE, where the GID routes).
    pub lid: u16,
    /// GID of the target's port, as the 16 raw bytes of `ibv_gid`.
    pub gid: [u8; 16],
    /// The DCT number. 24 bits wide: [`encode`](Self::encode) refuses anything above `0x00FF_FFFF`.
    pub dct_number: u32,
    /// Path MTU of the target's port.
    pub port_mtu: Mtu,
    /// The DCT places data out of order (`MLX5DV_QP_CREATE_OOO_DP`,
    /// [`crate::DctBuilder::out_of_order_placement`]): its initiators must do the same
    /// ([`crate::DciBuilder::out_of_order_placement`], [`crate::PoolConfig::out_of_order`]).
    /// Encoded in the flags byte; a decoder from before the flag refuses such an address
    /// (a reserved byte set) rather than reach the DCT without it.
    pub out_of_order: bool,
}

impl DcTargetAddr {
    /// Length in bytes of the encoding produced by [`encode`](Self::encode).
    pub const ENCODED_LEN: usize = 32;

    /// Encodes the address into its 32-byte, version-1 wire format (see the module docs).
    ///
    /// # Errors
    ///
    /// [`AddrError::DctNumber`] if `dct_number` does not fit in 24 bits; the value is never
    /// silently truncated.
    pub fn encode(&self) -> Result<[u8; Self::ENCODED_LEN], AddrError> {
        if self.dct_number > DCT_NUMBER_MAX {
            return Err(AddrError::DctNumber { got: self.dct_number });
        }
        let mut out = [0u8; Self::ENCODED_LEN];
        out[..HEADER_LEN].copy_from_slice(&header(KIND_DC_TARGET));
        out[8..10].copy_from_slice(&self.lid.to_be_bytes());
        // to_raw() is 1..=5, so the narrowing cannot lose bits.
        out[10] = self.port_mtu.to_raw() as u8;
        out[11] = FLAG_OUT_OF_ORDER * u8::from(self.out_of_order);
        out[12..16].copy_from_slice(&self.dct_number.to_be_bytes());
        out[16..32].copy_from_slice(&self.gid);
        Ok(out)
    }

    /// Decodes an address from its wire format, treating `bytes` as untrusted.
    ///
    /// # Errors
    ///
    /// * [`AddrError::Length`] if `bytes` is not exactly [`ENCODED_LEN`](Self::ENCODED_LEN) long,
    /// * [`AddrError::Magic`], [`AddrError::Version`] or [`AddrError::Kind`] if the header is not
    ///   that of a version-1 DC target address,
    /// * [`AddrError::Reserved`] if a reserved byte is not zero,
    /// * [`AddrError::Mtu`] if the MTU byte is not an `IBV_MTU_*` value,
    /// * [`AddrError::DctNumber`] if the DCT number does not fit in 24 bits.
    pub fn decode(bytes: &[u8]) -> Result<Self, AddrError> {
        let b = check_header::<{ Self::ENCODED_LEN }>(bytes, KIND_DC_TARGET)?;
        if b[11] & !FLAG_OUT_OF_ORDER != 0 {
            return Err(AddrError::Reserved { offset: 11 });
        }
        let lid = u16::from_be_bytes([b[8], b[9]]);
        let port_mtu = Mtu::from_raw(u32::from(b[10])).ok_or(AddrError::Mtu { got: b[10] })?;
        let dct_number = u32::from_be_bytes([b[12], b[13], b[14], b[15]]);
        if dct_number > DCT_NUMBER_MAX {
            return Err(AddrError::DctNumber { got: dct_number });
        }
        let gid: [u8; 16] = std::array::from_fn(|i| b[16 + i]);
        Ok(DcTargetAddr {
            lid,
            gid,
            dct_number,
            port_mtu,
            out_of_order: b[11] & FLAG_OUT_OF_ORDER != 0,
        })
    }
}

/// A remote memory region, or part of one: its address, its length and the rkey that grants
/// access to it.
///
/// See the [module documentation](self) for the byte encoding.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct RemoteMemory {
    /// Start address in the remote process's address space (or the MR's IOVA).
    pub addr: u64,
    /// Length in bytes.
    pub len: u64,
    /// Remote key of the memory region.
    pub rkey: u32,
}

impl RemoteMemory {
    /// Length in bytes of the encoding produced by [`encode`](Self::encode).
    pub const ENCODED_LEN: usize = 32;

    /// Whether `len` bytes starting `offset` bytes into this region lie entirely inside it.
    ///
    /// Overflow-safe: an `offset + len` that overflows a u64 is simply not contained.
    /// An empty range at any offset up to and including `self.len` is contained.
    pub fn contains(&self, offset: u64, len: u64) -> bool {
        matches!(offset.checked_add(len), Some(end) if end <= self.len)
    }

    /// The sub-range of `len` bytes starting `offset` bytes into this region, with the same rkey.
    ///
    /// # Errors
    ///
    /// [`AddrError::Range`] if the sub-range is not [contained](Self::contains) in this region,
    /// or if `addr + offset + len` overflows a u64 (possible only for a hand-built region whose
    /// own `addr + len` overflows; [`decode`](Self::decode) never returns one).
    pub fn slice(&self, offset: u64, len: u64) -> Result<RemoteMemory, AddrError> {
        if !self.contains(offset, len) {
            return Err(AddrError::Range);
        }
        let addr = self.addr.checked_add(offset).ok_or(AddrError::Range)?;
        addr.checked_add(len).ok_or(AddrError::Range)?;
        Ok(RemoteMemory {
            addr,
            len,
            rkey: self.rkey,
        })
    }

    /// Encodes the descriptor into its 32-byte, version-1 wire format (see the module docs).
    ///
    /// Always succeeds. A hand-built descriptor whose `addr + len` overflows a u64 still
    /// encodes, but [`decode`](Self::decode) rejects the result with [`AddrError::Range`].
    pub fn encode(&self) -> [u8; Self::ENCODED_LEN] {
        let mut out = [0u8; Self::ENCODED_LEN];
        out[..HEADER_LEN].copy_from_slice(&header(KIND_REMOTE_MEMORY));
        out[8..16].copy_from_slice(&self.addr.to_be_bytes());
        out[16..24].copy_from_slice(&self.len.to_be_bytes());
        out[24..28].copy_from_slice(&self.rkey.to_be_bytes());
        out
    }

    /// Decodes a descriptor from its wire format, treating `bytes` as untrusted.
    ///
    /// # Errors
    ///
    /// * [`AddrError::Length`] if `bytes` is not exactly [`ENCODED_LEN`](Self::ENCODED_LEN) long,
    /// * [`AddrError::Magic`], [`AddrError::Version`] or [`AddrError::Kind`] if the header is not
    ///   that of a version-1 remote memory descriptor,
    /// * [`AddrError::Reserved`] if a reserved byte is not zero,
    /// * [`AddrError::Range`] if `addr + len` overflows a u64.
    pub fn decode(bytes: &[u8]) -> Result<Self, AddrError> {
        let b = check_header::<{ Self::ENCODED_LEN }>(bytes, KIND_REMOTE_MEMORY)?;
        check_reserved(b, 28..32)?;
        let addr = u64::from_be_bytes(std::array::from_fn(|i| b[8 + i]));
        let len = u64::from_be_bytes(std::array::from_fn(|i| b[16 + i]));
        let rkey = u32::from_be_bytes([b[24], b[25], b[26], b[27]]);
        addr.checked_add(len).ok_or(AddrError::Range)?;
        Ok(RemoteMemory { addr, len, rkey })
    }
}

/// The common header for a blob of `kind`.
fn header(kind: u8) -> [u8; HEADER_LEN] {
    [MAGIC[0], MAGIC[1], MAGIC[2], MAGIC[3], FORMAT_VERSION, kind, 0, 0]
}

/// Checks the header and exact length of a blob that should be of `kind` and `N` bytes long,
/// returning it as a fixed-size array so the body can be read without fallible indexing.
/// Checks the first six bytes of an encoding's header: magic, format version, kind.
pub(crate) fn check_magic_version_kind(head: &[u8], kind: u8) -> Result<(), AddrError> {
    let magic = [head[0], head[1], head[2], head[3]];
    if magic != MAGIC {
        return Err(AddrError::Magic { got: magic });
    }
    if head[4] != FORMAT_VERSION {
        return Err(AddrError::Version {
            got: head[4],
            supported: FORMAT_VERSION,
        });
    }
    if head[5] != kind {
        return Err(AddrError::Kind {
            expected: kind,
            got: head[5],
        });
    }
    Ok(())
}

fn check_header<const N: usize>(bytes: &[u8], kind: u8) -> Result<&[u8; N], AddrError> {
    let length_error = AddrError::Length {
        expected: N,
        got: bytes.len(),
    };
    let Some(head) = bytes.get(..HEADER_LEN) else {
        return Err(length_error);
    };
    check_magic_version_kind(head, kind)?;
    check_reserved(head, 6..8)?;
    <&[u8; N]>::try_from(bytes).map_err(|_| length_error)
}

/// Fails with the offset of the first non-zero byte in `bytes[range]`.
fn check_reserved(bytes: &[u8], range: std::ops::Range<usize>) -> Result<(), AddrError> {
    match range.into_iter().find(|&i| bytes.get(i).is_some_and(|&b| b != 0)) {
        Some(offset) => Err(AddrError::Reserved { offset }),
        None => Ok(()),
    }
}

/// Why an address could not be encoded or decoded, or a range could not be formed.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddrError {
    /// The blob is not as long as this kind of address encodes to.
    Length {
        /// The length this kind of address encodes to.
        expected: usize,
        /// The length of the blob.
        got: usize,
    },
    /// The blob does not start with [`MAGIC`].
    Magic {
        /// The blob's first 4 bytes.
        got: [u8; 4],
    },
    /// The blob's format version is not [`FORMAT_VERSION`].
    Version {
        /// The blob's version.
        got: u8,
        /// The version this library reads.
        supported: u8,
    },
    /// The blob encodes a different kind of address.
    Kind {
        /// The kind the caller asked to decode (1 = DC target address, 2 = remote memory).
        expected: u8,
        /// The kind in the blob.
        got: u8,
    },
    /// A reserved byte is not zero.
    Reserved {
        /// Offset of the byte in the blob.
        offset: usize,
    },
    /// The MTU byte is not an `IBV_MTU_*` value (1 ..= 5).
    Mtu {
        /// The MTU byte.
        got: u8,
    },
    /// A DCT number does not fit in 24 bits.
    DctNumber {
        /// The DCT number.
        got: u32,
    },
    /// A remote memory range's `addr + len` overflows a u64, or a requested slice lies outside
    /// its region.
    Range,
}

/// A person-readable name for an address kind byte.
fn kind_name(kind: u8) -> String {
    match kind {
        KIND_DC_TARGET => "a DC target address (kind 1)".to_owned(),
        KIND_REMOTE_MEMORY => "a remote memory descriptor (kind 2)".to_owned(),
        other => format!("an unknown kind of address ({other})"),
    }
}

impl fmt::Display for AddrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddrError::Length { expected, got } => write!(
                f,
                "address blob is {got} bytes, expected {expected}: the peer sent a truncated or different message"
            ),
            AddrError::Magic { got } => write!(
                f,
                "address blob starts with {got:02x?}, not \"M5DV\": the peer is not sending mlx5dv addresses, \
                 or the stream is out of step with the message boundaries"
            ),
            AddrError::Version { got, supported } if got > supported => write!(
                f,
                "address blob version {got} is newer than this library understands ({supported}): \
                 upgrade mlx5dv on this side"
            ),
            AddrError::Version { got, supported } => write!(
                f,
                "address blob version {got} is not one this library understands ({supported}): \
                 the blob is corrupt or the peer's mlx5dv is incompatible"
            ),
            AddrError::Kind { expected, got } => write!(
                f,
                "address blob holds {}, expected {}: the peer sent a different message than this side expects",
                kind_name(*got),
                kind_name(*expected)
            ),
            AddrError::Reserved { offset } => write!(
                f,
                "address blob has a non-zero reserved byte at offset {offset}: the blob is corrupt \
                 or the peer uses an incompatible encoding"
            ),
            AddrError::Mtu { got } => write!(
                f,
                "address blob has MTU code {got}, expected 1..=5 (IBV_MTU_256..IBV_MTU_4096): \
                 the blob is corrupt or the peer uses an incompatible encoding"
            ),
            AddrError::DctNumber { got } => write!(
                f,
                "DCT number {got:#x} is wider than 24 bits: InfiniBand DCT numbers are 24-bit, so the value \
                 is corrupt or did not come from a DCT"
            ),
            AddrError::Range => write!(
                f,
                "remote memory range is out of bounds: addr + len overflows 64 bits, or the requested slice \
                 lies outside the region; check the offsets and the descriptor the peer sent"
            ),
        }
    }
}

impl std::error::Error for AddrError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> DcTargetAddr {
        DcTargetAddr {
            lid: 0x1234,
            gid: [
                0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55,
            ],
            dct_number: 0x00AB_CDEF,
            port_mtu: Mtu::Mtu4096,
            out_of_order: false,
        }
    }

    fn memory() -> RemoteMemory {
        RemoteMemory {
            addr: 0x0000_7f00_dead_b000,
            len: 0x0000_0000_0010_0000,
            rkey: 0x1122_3344,
        }
    }

    /// Decodes `blob` as both kinds; must never panic.
    fn decode_both(blob: &[u8]) -> (Result<DcTargetAddr, AddrError>, Result<RemoteMemory, AddrError>) {
        (DcTargetAddr::decode(blob), RemoteMemory::decode(blob))
    }

    /// A small deterministic pseudo-random byte source (Knuth's MMIX LCG).
    struct Lcg(u64);

    impl Lcg {
        fn next_byte(&mut self) -> u8 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 56) as u8
        }
    }

    #[test]
    fn mtu_converts_between_bytes_and_raw_verbs_values() {
        let all = [Mtu::Mtu256, Mtu::Mtu512, Mtu::Mtu1024, Mtu::Mtu2048, Mtu::Mtu4096];
        let raw = [
            mlx5dv_raw::IBV_MTU_256,
            mlx5dv_raw::IBV_MTU_512,
            mlx5dv_raw::IBV_MTU_1024,
            mlx5dv_raw::IBV_MTU_2048,
            mlx5dv_raw::IBV_MTU_4096,
        ];
        for (i, (&mtu, &raw)) in all.iter().zip(raw.iter()).enumerate() {
            assert_eq!(mtu.bytes(), 256 << i);
            assert_eq!(mtu.to_raw(), raw);
            assert_eq!(Mtu::from_raw(raw), Some(mtu));
            assert_eq!(Mtu::from_bytes(mtu.bytes()), Some(mtu));
        }
        for bad in [0, 6, 7, 255, u32::MAX] {
            assert_eq!(Mtu::from_raw(bad), None);
        }
        for bad in [0, 1, 128, 255, 257, 1500, 8192, 9000, u32::MAX] {
            assert_eq!(Mtu::from_bytes(bad), None);
        }
    }

    #[test]
    fn dc_target_addr_round_trips_through_its_32_byte_encoding() {
        let mut a = target();
        for mtu in [Mtu::Mtu256, Mtu::Mtu512, Mtu::Mtu1024, Mtu::Mtu2048, Mtu::Mtu4096] {
            for (lid, dct_number) in [(0, 0), (1, 1), (u16::MAX, 0x00FF_FFFF), (0x1234, 0x00AB_CDEF)] {
                a.lid = lid;
                a.dct_number = dct_number;
                a.port_mtu = mtu;
                let blob = a.encode().unwrap();
                assert_eq!(blob.len(), DcTargetAddr::ENCODED_LEN);
                assert_eq!(DcTargetAddr::decode(&blob), Ok(a));
            }
        }
    }

    #[test]
    fn remote_memory_round_trips_through_its_32_byte_encoding() {
        for m in [
            memory(),
            RemoteMemory {
                addr: 0,
                len: 0,
                rkey: 0,
            },
            RemoteMemory {
                addr: 0,
                len: u64::MAX,
                rkey: u32::MAX,
            },
            RemoteMemory {
                addr: u64::MAX,
                len: 0,
                rkey: 1,
            },
        ] {
            let blob = m.encode();
            assert_eq!(blob.len(), RemoteMemory::ENCODED_LEN);
            assert_eq!(RemoteMemory::decode(&blob), Ok(m));
        }
    }

    #[test]
    fn encoding_is_big_endian_and_matches_the_documented_layout() {
        #[rustfmt::skip]
        let expected_target: [u8; 32] = [
            b'M', b'5', b'D', b'V', 1, 1, 0, 0,          // header: magic, version 1, kind 1, reserved
            0x12, 0x34,                                  // lid
            5,                                           // IBV_MTU_4096
            0,                                           // reserved
            0x00, 0xAB, 0xCD, 0xEF,                      // dct_number
            0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // gid
            0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55,
        ];
        assert_eq!(target().encode().unwrap(), expected_target);

        #[rustfmt::skip]
        let expected_memory: [u8; 32] = [
            b'M', b'5', b'D', b'V', 1, 2, 0, 0,                 // header: magic, version 1, kind 2, reserved
            0x00, 0x00, 0x7f, 0x00, 0xde, 0xad, 0xb0, 0x00,     // addr
            0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00,     // len
            0x11, 0x22, 0x33, 0x44,                             // rkey
            0, 0, 0, 0,                                         // reserved
        ];
        assert_eq!(memory().encode(), expected_memory);
    }

    #[test]
    fn decoding_rejects_truncated_and_overlong_blobs() {
        let t = target().encode().unwrap();
        let m = memory().encode();
        for len in 0..32 {
            assert_eq!(
                DcTargetAddr::decode(&t[..len]),
                Err(AddrError::Length { expected: 32, got: len })
            );
            assert_eq!(
                RemoteMemory::decode(&m[..len]),
                Err(AddrError::Length { expected: 32, got: len })
            );
        }
        for extra in [1, 2, 31, 32, 100] {
            let mut long_t = t.to_vec();
            long_t.resize(32 + extra, 0);
            assert_eq!(
                DcTargetAddr::decode(&long_t),
                Err(AddrError::Length {
                    expected: 32,
                    got: 32 + extra
                })
            );
            let mut long_m = m.to_vec();
            long_m.resize(32 + extra, 0);
            assert_eq!(
                RemoteMemory::decode(&long_m),
                Err(AddrError::Length {
                    expected: 32,
                    got: 32 + extra
                })
            );
        }
    }

    #[test]
    fn decoding_rejects_wrong_magic() {
        for mut blob in [target().encode().unwrap(), memory().encode()] {
            blob[..4].copy_from_slice(b"M5DW");
            let want = AddrError::Magic { got: *b"M5DW" };
            assert_eq!(DcTargetAddr::decode(&blob), Err(want.clone()));
            assert_eq!(RemoteMemory::decode(&blob), Err(want));
        }
        let zeros = [0u8; 32];
        assert_eq!(DcTargetAddr::decode(&zeros), Err(AddrError::Magic { got: [0; 4] }));
        assert_eq!(RemoteMemory::decode(&zeros), Err(AddrError::Magic { got: [0; 4] }));
    }

    #[test]
    fn decoding_rejects_future_versions() {
        for version in [0u8, 2, 3, 255] {
            let want = AddrError::Version {
                got: version,
                supported: 1,
            };
            let mut t = target().encode().unwrap();
            t[4] = version;
            assert_eq!(DcTargetAddr::decode(&t), Err(want.clone()));
            let mut m = memory().encode();
            m[4] = version;
            assert_eq!(RemoteMemory::decode(&m), Err(want.clone()));
            // A future version may change the length: still reported as a version mismatch.
            let mut longer = t.to_vec();
            longer.extend_from_slice(&[0; 8]);
            assert_eq!(DcTargetAddr::decode(&longer), Err(want.clone()));
            assert_eq!(DcTargetAddr::decode(&t[..HEADER_LEN]), Err(want));
        }
        let newer = AddrError::Version { got: 2, supported: 1 }.to_string();
        assert!(newer.contains("newer") && newer.contains("upgrade"), "{newer}");
    }

    #[test]
    fn decoding_rejects_the_other_kind() {
        let t = target().encode().unwrap();
        let m = memory().encode();
        assert_eq!(RemoteMemory::decode(&t), Err(AddrError::Kind { expected: 2, got: 1 }));
        assert_eq!(DcTargetAddr::decode(&m), Err(AddrError::Kind { expected: 1, got: 2 }));
        for kind in [0u8, 3, 255] {
            let mut b = t;
            b[5] = kind;
            assert_eq!(
                DcTargetAddr::decode(&b),
                Err(AddrError::Kind { expected: 1, got: kind })
            );
            assert_eq!(
                RemoteMemory::decode(&b),
                Err(AddrError::Kind { expected: 2, got: kind })
            );
        }
    }

    #[test]
    fn an_out_of_order_target_round_trips_through_flag_bit_0_of_byte_11() {
        let t = DcTargetAddr {
            out_of_order: true,
            ..target()
        };
        let b = t.encode().unwrap();
        assert_eq!(b[11], 1);
        assert_eq!(DcTargetAddr::decode(&b), Ok(t));
        assert_eq!(target().encode().unwrap()[11], 0, "in order: the byte stays zero");
    }

    #[test]
    fn decoding_rejects_nonzero_reserved_bytes() {
        for offset in [6, 7, 11] {
            // Byte 11 holds the flags: bit 0 (out-of-order placement) is defined.
            for value in [2u8, 0x80, 0xfe, 0xff] {
                let mut b = target().encode().unwrap();
                b[offset] = value;
                assert_eq!(DcTargetAddr::decode(&b), Err(AddrError::Reserved { offset }));
            }
        }
        for offset in [6, 7, 28, 29, 30, 31] {
            for value in [1u8, 0x80, 0xff] {
                let mut b = memory().encode();
                b[offset] = value;
                assert_eq!(RemoteMemory::decode(&b), Err(AddrError::Reserved { offset }));
            }
        }
    }

    #[test]
    fn decoding_rejects_unknown_mtu() {
        for code in [0u8, 6, 7, 0x80, 0xff] {
            let mut b = target().encode().unwrap();
            b[10] = code;
            assert_eq!(DcTargetAddr::decode(&b), Err(AddrError::Mtu { got: code }));
        }
    }

    #[test]
    fn decoding_rejects_dct_numbers_wider_than_24_bits() {
        for top in [0x01u8, 0x80, 0xff] {
            let mut b = target().encode().unwrap();
            b[12] = top;
            let got = u32::from_be_bytes([top, 0xAB, 0xCD, 0xEF]);
            assert_eq!(DcTargetAddr::decode(&b), Err(AddrError::DctNumber { got }));
        }
    }

    #[test]
    fn encoding_refuses_dct_numbers_wider_than_24_bits() {
        for dct_number in [0x0100_0000, 0x01FF_FFFF, 0x8000_0000, u32::MAX] {
            let a = DcTargetAddr { dct_number, ..target() };
            assert_eq!(a.encode(), Err(AddrError::DctNumber { got: dct_number }));
        }
        let edge = DcTargetAddr {
            dct_number: 0x00FF_FFFF,
            ..target()
        };
        assert!(edge.encode().is_ok());
    }

    #[test]
    fn remote_memory_decoding_rejects_overflowing_ranges() {
        for (addr, len) in [(u64::MAX, 1), (1, u64::MAX), (u64::MAX, u64::MAX), (1 << 63, 1 << 63)] {
            let blob = RemoteMemory { addr, len, rkey: 9 }.encode();
            assert_eq!(RemoteMemory::decode(&blob), Err(AddrError::Range));
        }
        // The largest ranges that just fit still decode.
        for (addr, len) in [(u64::MAX - 1, 1), (1, u64::MAX - 1), (1 << 63, (1 << 63) - 1)] {
            let m = RemoteMemory { addr, len, rkey: 9 };
            assert_eq!(RemoteMemory::decode(&m.encode()), Ok(m));
        }
    }

    #[test]
    fn remote_memory_slice_is_bounds_checked_and_overflow_safe() {
        let m = RemoteMemory {
            addr: 0x1000,
            len: 0x100,
            rkey: 7,
        };
        assert!(m.contains(0, 0x100));
        assert!(m.contains(0x100, 0));
        assert!(m.contains(0x80, 0x80));
        assert!(!m.contains(0x80, 0x81));
        assert!(!m.contains(0x101, 0));
        assert!(!m.contains(u64::MAX, 1));
        assert!(!m.contains(1, u64::MAX));
        assert!(!m.contains(u64::MAX, u64::MAX));

        assert_eq!(
            m.slice(0x10, 0x20),
            Ok(RemoteMemory {
                addr: 0x1010,
                len: 0x20,
                rkey: 7
            })
        );
        assert_eq!(m.slice(0, 0x100), Ok(m));
        assert_eq!(
            m.slice(0x100, 0),
            Ok(RemoteMemory {
                addr: 0x1100,
                len: 0,
                rkey: 7
            })
        );
        assert_eq!(m.slice(0x80, 0x81), Err(AddrError::Range));
        assert_eq!(m.slice(0x101, 0), Err(AddrError::Range));
        assert_eq!(m.slice(u64::MAX, 2), Err(AddrError::Range));
        assert_eq!(m.slice(2, u64::MAX), Err(AddrError::Range));

        // A hand-built region whose addr + len overflows: slices past the end of the address space fail.
        let wild = RemoteMemory {
            addr: u64::MAX - 4,
            len: 100,
            rkey: 1,
        };
        assert_eq!(
            wild.slice(0, 4),
            Ok(RemoteMemory {
                addr: u64::MAX - 4,
                len: 4,
                rkey: 1
            })
        );
        assert_eq!(wild.slice(0, 5), Err(AddrError::Range));
        assert_eq!(wild.slice(5, 0), Err(AddrError::Range));
        assert_eq!(wild.slice(50, 10), Err(AddrError::Range));
    }

    #[test]
    fn every_single_byte_corruption_of_header_is_detected() {
        for blob in [target().encode().unwrap(), memory().encode()] {
            for i in 0..HEADER_LEN {
                for flip in 1..=255u8 {
                    let mut b = blob;
                    b[i] ^= flip;
                    let (t, m) = decode_both(&b);
                    assert!(t.is_err() && m.is_err(), "byte {i} ^ {flip:#x} went undetected");
                }
            }
        }
    }

    #[test]
    fn every_single_byte_corruption_of_a_blob_is_detected_or_decodes_to_a_different_value() {
        let t = target();
        let m = memory();
        let (tb, mb) = (t.encode().unwrap(), m.encode());
        for i in 0..32 {
            for flip in 1..=255u8 {
                let mut b = tb;
                b[i] ^= flip;
                if let Ok(decoded) = DcTargetAddr::decode(&b) {
                    assert_ne!(decoded, t, "byte {i} ^ {flip:#x}");
                    assert_eq!(decoded.encode(), Ok(b), "decoding is canonical");
                }
                let mut b = mb;
                b[i] ^= flip;
                if let Ok(decoded) = RemoteMemory::decode(&b) {
                    assert_ne!(decoded, m, "byte {i} ^ {flip:#x}");
                    assert_eq!(decoded.encode(), b, "decoding is canonical");
                }
            }
        }
    }

    #[test]
    fn decoding_arbitrary_bytes_of_every_length_up_to_64_never_panics() {
        let mut rng = Lcg(0x4D35_4456_5EED_0001);
        let (mut ok_target, mut ok_memory) = (0usize, 0usize);
        for len in 0..=64usize {
            for round in 0..2_000 {
                let mut blob: Vec<u8> = (0..len).map(|_| rng.next_byte()).collect();
                // Most rounds get a valid header prefix so the body checks are exercised too.
                if round % 4 != 0 {
                    let kind = if round % 2 == 0 {
                        KIND_DC_TARGET
                    } else {
                        KIND_REMOTE_MEMORY
                    };
                    let h = header(kind);
                    let n = len.min(HEADER_LEN);
                    blob[..n].copy_from_slice(&h[..n]);
                    // Half of those also get each checked body field made plausible with even odds,
                    // so every body check both passes and fails somewhere in the run.
                    if round % 8 < 4 {
                        for (at, plausible) in [(10, rng.next_byte() % 7), (11, 0), (12, 0), (28, 0)] {
                            if at < len && rng.next_byte() % 2 == 0 {
                                blob[at] = plausible;
                            }
                        }
                        if len >= 32 && blob[28] == 0 {
                            blob[29..32].fill(0);
                        }
                    }
                }
                let (t, m) = decode_both(&blob);
                if let Ok(a) = t {
                    assert_eq!(a.encode().map(|e| e.to_vec()), Ok(blob.clone()));
                    ok_target += 1;
                }
                if let Ok(r) = m {
                    assert_eq!(r.encode().to_vec(), blob);
                    ok_memory += 1;
                }
                for e in [t.err(), m.err()].into_iter().flatten() {
                    assert!(!e.to_string().is_empty());
                }
            }
        }
        // The run must reach the success path of both decoders, not just their early rejections.
        assert!(ok_target > 0 && ok_memory > 0, "{ok_target} {ok_memory}");
    }

    #[test]
    fn every_error_explains_itself_in_a_sentence() {
        let all = [
            AddrError::Length { expected: 32, got: 31 },
            AddrError::Magic { got: *b"HTTP" },
            AddrError::Version { got: 2, supported: 1 },
            AddrError::Version { got: 0, supported: 1 },
            AddrError::Kind { expected: 1, got: 2 },
            AddrError::Kind { expected: 2, got: 9 },
            AddrError::Reserved { offset: 11 },
            AddrError::Mtu { got: 6 },
            AddrError::DctNumber { got: 0x0100_0000 },
            AddrError::Range,
        ];
        for e in &all {
            let s = e.to_string();
            assert!(s.contains(": "), "{s}");
            let _: &dyn std::error::Error = e;
        }
        assert_eq!(
            all[0].to_string(),
            "address blob is 31 bytes, expected 32: the peer sent a truncated or different message"
        );
        assert_eq!(
            all[2].to_string(),
            "address blob version 2 is newer than this library understands (1): upgrade mlx5dv on this side"
        );
    }
}
