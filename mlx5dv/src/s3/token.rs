//! The `x-amz-rdma-token` descriptor: a client's registered buffer behind its DCT, as seven
//! colon-separated lowercase hex fields of fixed widths (the format of NVIDIA's
//! `gpu_direct_rdma_access` sample, `rdma_buffer_get_desc_str`, which S3-over-RDMA clients and
//! servers exchange):
//!
//! | # | field | hex digits |
//! |---|---|---|
//! | 0 | buffer address | 16 |
//! | 1 | size in bytes (not 0) | 8 |
//! | 2 | rkey | 8 |
//! | 3 | LID (0 on RoCE) | 4 |
//! | 4 | DCT number | 6 |
//! | 5 | GID present (`0` or `1`) | 1 |
//! | 6 | GID, the 16 bytes in network order | 32 |
//!
//! A token is untrusted input (it arrives in an HTTP header): [`RdmaToken::parse`] refuses
//! anything but exactly that shape, naming the field and why, before anything is posted.

use crate::addr::{DcTargetAddr, Mtu, RemoteMemory};

/// The fields in order: name and width in hex digits.
const FIELDS: [(&str, usize); 7] = [
    ("buffer address", 16),
    ("size", 8),
    ("rkey", 8),
    ("LID", 4),
    ("DCT number", 6),
    ("GID present", 1),
    ("GID", 32),
];

/// Length of every token: the fields and their six colons.
pub const TOKEN_LEN: usize = 16 + 8 + 8 + 4 + 6 + 1 + 32 + 6;

/// A client's buffer behind its DCT, as an `x-amz-rdma-token` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RdmaToken {
    /// The buffer's address in the client's address space (its region's IOVA).
    pub addr: u64,
    /// Its length in bytes: 1 to 4 GiB - 1.
    pub len: u32,
    /// The remote key of the client's region.
    pub rkey: u32,
    /// The LID of the client's port (0 on RoCE).
    pub lid: u16,
    /// The client's DCT number (24 bits).
    pub dct_number: u32,
    /// The GID of the client's port (network order), where the token carries one: RoCE
    /// always does.
    pub gid: Option<[u8; 16]>,
}

/// Why a token was refused: the field (0 to 6, or none for the whole token) and the rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenError {
    /// The field's position (0-based), None for the token as a whole.
    pub field: Option<usize>,
    /// What is wrong, in a sentence.
    pub why: String,
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.field {
            Some(i) => write!(f, "x-amz-rdma-token field {i} ({}): {}", FIELDS[i].0, self.why),
            None => write!(f, "x-amz-rdma-token: {}", self.why),
        }
    }
}

impl std::error::Error for TokenError {}

impl From<TokenError> for crate::Error {
    /// An EINVAL error of operation `mlx5dv::s3::RdmaToken` with the token error's sentence.
    fn from(e: TokenError) -> Self {
        crate::Error::from_errno(
            "mlx5dv::s3::RdmaToken",
            libc::EINVAL,
            format!("{e}: refuse the request (the token is not usable)"),
        )
    }
}

fn refuse(field: Option<usize>, why: impl Into<String>) -> TokenError {
    TokenError { field, why: why.into() }
}

/// Offsets of the six colons of a well-formed token.
const COLONS: [usize; 6] = [16, 25, 34, 39, 46, 48];

/// The seven fields, without allocating (a server parses one token per request): at the fixed
/// offsets when the token has its exact shape (its length, and colons there and nowhere else),
/// else split at every colon (to say what is wrong). Both ways split a token into the same
/// fields, so they accept and refuse the same tokens for the same reasons.
fn split(text: &str) -> Result<[&str; 7], TokenError> {
    let b = text.as_bytes();
    if b.len() == TOKEN_LEN
        && COLONS.iter().all(|&c| b[c] == b':')
        && b.iter().filter(|&&c| c == b':').count() == COLONS.len()
    {
        // Splitting at ASCII colons keeps every part on character boundaries.
        let mut parts = [""; 7];
        let mut start = 0;
        for (i, end) in COLONS.iter().copied().chain([TOKEN_LEN]).enumerate() {
            parts[i] = &text[start..end];
            start = end + 1;
        }
        return Ok(parts);
    }
    let mut parts = [""; 7];
    let mut count = 0;
    for part in text.split(':') {
        if let Some(slot) = parts.get_mut(count) {
            *slot = part;
        }
        count += 1;
    }
    if count != FIELDS.len() {
        return Err(refuse(
            None,
            format!("{count} colon-separated fields; a token has exactly 7"),
        ));
    }
    Ok(parts)
}

/// Each byte's value as a lowercase hex digit, or 0xff.
const HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// The value of up to 16 lowercase hex digits of field `field`, from `at`.
fn hex(part: &str, at: usize, field: usize) -> Result<u64, TokenError> {
    let bytes = &part.as_bytes()[at..part.len().min(at + 16)];
    let mut v = 0u64;
    let mut bad = 0u8;
    for &b in bytes {
        let d = HEX[usize::from(b)];
        bad |= d;
        v = (v << 4) | u64::from(d & 0xf);
    }
    if bad & 0xf0 != 0 {
        // The first byte that is not ASCII hex starts a character.
        let k = at + bytes.iter().position(|&b| HEX[usize::from(b)] == 0xff).unwrap_or(0);
        let c = part[k..].chars().next().unwrap_or('?');
        return Err(refuse(Some(field), format!("{c:?} is not a lowercase hex digit")));
    }
    Ok(v)
}

impl RdmaToken {
    /// Parses a token, treating `text` as untrusted.
    ///
    /// # Errors
    /// A [`TokenError`] naming the field and the rule it broke: not seven fields; a field of
    /// another width; a character that is not lowercase hex; size 0; an address range that
    /// overflows (`addr + size` past 2^64); a GID-present flag other than `0` or `1`; a GID
    /// given with the flag `0`. Nothing is truncated or guessed.
    pub fn parse(text: &str) -> Result<RdmaToken, TokenError> {
        if text.len() > TOKEN_LEN * 4 {
            return Err(refuse(
                None,
                format!("{} bytes long; a token has exactly {TOKEN_LEN}", text.len()),
            ));
        }
        let parts = split(text)?;
        let mut values = [0u128; 7];
        for (i, (part, (_, width))) in parts.iter().zip(FIELDS).enumerate() {
            if part.len() != width {
                return Err(refuse(
                    Some(i),
                    format!("{} hex digits; this field has exactly {width}", part.len()),
                ));
            }
            values[i] = match *part {
                // The GID: two halves of at most 64 bits each.
                p if p.len() > 16 => (u128::from(hex(p, 0, i)?) << 64) | u128::from(hex(p, 16, i)?),
                p => u128::from(hex(p, 0, i)?),
            };
        }
        let addr = values[0] as u64;
        let len = values[1] as u32;
        if len == 0 {
            return Err(refuse(Some(1), "size 0: a token describes at least one byte"));
        }
        if addr.checked_add(u64::from(len)).is_none() {
            return Err(refuse(
                Some(0),
                format!("address {addr:#x} plus size {len:#x} passes the end of the address space"),
            ));
        }
        let gid_bytes = values[6].to_be_bytes();
        let gid = match values[5] {
            1 => Some(gid_bytes),
            0 if values[6] == 0 => None,
            0 => {
                return Err(refuse(
                    Some(6),
                    "a GID is given but the GID-present flag (field 5) is 0",
                ))
            }
            f => return Err(refuse(Some(5), format!("{f}: the GID-present flag is 0 or 1"))),
        };
        Ok(RdmaToken {
            addr,
            len,
            rkey: values[2] as u32,
            lid: values[3] as u16,
            dct_number: values[4] as u32,
            gid,
        })
    }

    /// The token's text: fixed widths, lowercase, the GID field all zeros without a GID.
    ///
    /// # Errors
    /// A [`TokenError`] when the token could not be parsed back: size 0, a DCT number wider
    /// than 24 bits, or an address range past the end of the address space.
    pub fn format(&self) -> Result<String, TokenError> {
        if self.dct_number > 0x00ff_ffff {
            return Err(refuse(Some(4), format!("{:#x} is wider than 24 bits", self.dct_number)));
        }
        if self.len == 0 {
            return Err(refuse(Some(1), "size 0: a token describes at least one byte"));
        }
        if self.addr.checked_add(u64::from(self.len)).is_none() {
            return Err(refuse(Some(0), "the address range passes the end of the address space"));
        }
        let gid = u128::from_be_bytes(self.gid.unwrap_or([0; 16]));
        Ok(format!(
            "{:016x}:{:08x}:{:08x}:{:04x}:{:06x}:{}:{gid:032x}",
            self.addr,
            self.len,
            self.rkey,
            self.lid,
            self.dct_number,
            u8::from(self.gid.is_some()),
        ))
    }

    /// The client's buffer as remote memory to read (PUT) or write (GET).
    pub fn remote(&self) -> RemoteMemory {
        RemoteMemory {
            addr: self.addr,
            len: u64::from(self.len),
            rkey: self.rkey,
        }
    }

    /// The client's DCT as a DC target, at `port_mtu` (the token carries no MTU: the server's
    /// path MTU). `roce`: the server's port is RoCE, where only a GID routes.
    ///
    /// # Errors
    /// A [`TokenError`] (field 5) for a token without a GID on RoCE.
    pub fn target(&self, port_mtu: Mtu, roce: bool) -> Result<DcTargetAddr, TokenError> {
        if roce && self.gid.is_none() {
            return Err(refuse(
                Some(5),
                "no GID, and RoCE routes by GID only: the client must send its GID (flag 1)",
            ));
        }
        Ok(DcTargetAddr {
            lid: self.lid,
            gid: self.gid.unwrap_or([0; 16]),
            dct_number: self.dct_number,
            port_mtu,
            out_of_order: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "0102030405060708:01020304:01020304:0102:010203:1:0102030405060708090a0b0c0d0e0f10";

    #[test]
    fn the_reference_example_parses_field_by_field_and_formats_back_identically() {
        let t = RdmaToken::parse(EXAMPLE).unwrap();
        assert_eq!(t.addr, 0x0102_0304_0506_0708);
        assert_eq!(t.len, 0x0102_0304);
        assert_eq!(t.rkey, 0x0102_0304);
        assert_eq!(t.lid, 0x0102);
        assert_eq!(t.dct_number, 0x01_0203);
        assert_eq!(t.gid, Some([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]));
        assert_eq!(t.format().unwrap(), EXAMPLE);
        assert_eq!(EXAMPLE.len(), TOKEN_LEN);
    }

    #[test]
    fn an_infiniband_token_without_a_gid_round_trips_and_is_refused_on_roce() {
        let t = RdmaToken {
            addr: 0x7f00_0000_1000,
            len: 4096,
            rkey: 0x1234,
            lid: 7,
            dct_number: 0x4100,
            gid: None,
        };
        let text = t.format().unwrap();
        assert_eq!(
            text,
            "00007f0000001000:00001000:00001234:0007:004100:0:00000000000000000000000000000000"
        );
        assert_eq!(RdmaToken::parse(&text), Ok(t));
        assert_eq!(t.target(Mtu::Mtu1024, false).unwrap().lid, 7);
        let e = t.target(Mtu::Mtu1024, true).unwrap_err();
        assert_eq!(e.field, Some(5));
        assert!(e.to_string().contains("RoCE"), "{e}");
        assert_eq!(
            t.remote(),
            RemoteMemory {
                addr: 0x7f00_0000_1000,
                len: 4096,
                rkey: 0x1234
            }
        );
    }

    /// The field a malformed token is refused for.
    fn refused(text: &str) -> Option<usize> {
        match RdmaToken::parse(text) {
            Ok(t) => panic!("{text:?} parsed as {t:?}"),
            Err(e) => {
                assert!(!e.why.is_empty());
                e.field
            }
        }
    }

    #[test]
    fn every_malformed_token_is_refused_naming_the_field() {
        let fields: Vec<&str> = EXAMPLE.split(':').collect();
        let with = |i: usize, v: &str| {
            let mut f = fields.clone();
            f[i] = v;
            f.join(":")
        };
        // Field count.
        assert_eq!(refused(""), None);
        assert_eq!(refused(&fields[..6].join(":")), None);
        assert_eq!(refused(&format!("{EXAMPLE}:00")), None);
        // Widths, one digit short and one long, in every field.
        for (i, (_, width)) in FIELDS.iter().enumerate() {
            assert_eq!(refused(&with(i, &"0".repeat(width - 1))), Some(i), "field {i} short");
            assert_eq!(refused(&with(i, &"0".repeat(width + 1))), Some(i), "field {i} long");
        }
        // Not lowercase hex.
        assert_eq!(refused(&with(2, "0102030G")), Some(2));
        assert_eq!(refused(&with(2, "0102030A")), Some(2), "uppercase");
        assert_eq!(refused(&with(3, "+102")), Some(3), "a sign");
        assert_eq!(refused(&with(4, " 10203")), Some(4), "a space");
        // Size 0 and an overflowing range.
        assert_eq!(refused(&with(1, "00000000")), Some(1));
        assert_eq!(refused(&with(0, "ffffffffffffff00")), Some(0));
        // The GID flag.
        assert_eq!(refused(&with(5, "2")), Some(5));
        assert_eq!(refused(&with(5, "0")), Some(6), "a GID with the flag 0");
        // Huge input is refused before it is split.
        assert_eq!(refused(&"0:".repeat(10_000)), None);
    }

    #[test]
    fn a_colon_inside_a_field_is_refused_as_a_field_count_whatever_the_tokens_length() {
        // The token's length and its six colons in place, and a seventh inside a field: eight
        // fields, as the same token one digit longer (which takes the general split) says.
        for at in [47, 60] {
            let extra = format!("{}:{}", &EXAMPLE[..at], &EXAMPLE[at + 1..]);
            assert_eq!(extra.len(), TOKEN_LEN);
            assert_eq!(refused(&format!("{extra}0")), None, "{at}: one digit longer");
            assert_eq!(refused(&extra), None, "{at}: at the token's length");
        }
    }

    #[test]
    fn a_range_ending_at_the_last_address_parses_and_one_byte_more_is_refused() {
        let zeros = "0".repeat(32);
        let t = RdmaToken::parse(&format!("ffffffffffffff00:000000ff:00000001:0001:000001:0:{zeros}")).unwrap();
        assert_eq!(t.addr + u64::from(t.len), u64::MAX);
        assert_eq!(
            refused(&format!("ffffffffffffff00:00000100:00000001:0001:000001:0:{zeros}")),
            Some(0)
        );
    }

    #[test]
    fn formatting_refuses_what_parsing_would_refuse() {
        let t = RdmaToken::parse(EXAMPLE).unwrap();
        let wide = RdmaToken {
            dct_number: 0x0100_0000,
            ..t
        };
        assert_eq!(wide.format().unwrap_err().field, Some(4));
        let empty = RdmaToken { len: 0, ..t };
        assert_eq!(empty.format().unwrap_err().field, Some(1));
    }

    #[test]
    fn a_token_error_converts_into_an_einval_error_keeping_its_sentence() {
        let e: crate::Error = RdmaToken::parse("x").unwrap_err().into();
        assert_eq!(e.errno(), Some(libc::EINVAL));
        assert!(e.to_string().contains("7"), "{e}");
    }
}
