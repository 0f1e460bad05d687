//! The `x-amz-rdma-token` descriptor: a client's registered buffer behind its DCT, in every
//! form the published clients write it. [`RdmaToken::parse`] is the one call a server makes on
//! the header; the token remembers how it was spelled ([`TokenSpelling`]) and
//! [`RdmaToken::format`] writes it back exactly.
//!
//! **The reference form** (NVIDIA's `gpu_direct_rdma_access`, `rdma_buffer_get_desc_str`, and
//! cuObject, which S3-over-RDMA clients and servers exchange): seven colon-separated hex fields
//! of fixed widths:
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
//! **The suffix** (nine fields): NIXL's `formatRdmaToken` and minio-cpp (until 2026-08) append
//! `:<address:16 hex>:<size:16 hex>` (fields 7 and 8). MinIO AIStor takes the suffix as an
//! override of fields 0 and 1, and so does this parser, after checking it against them: the
//! suffix range is not empty, does not pass the end of the address space, and lies inside the
//! range fields 0 and 1 describe.
//!
//! **AMD hipObject's form** (ROCm/hipObject `src/rdma/token.cpp`, `encodeRdmaToken`): 44 bytes
//! as 88 hex digits, no colons; the integers little-endian (hipObject copies them in the
//! sender's byte order: x86 and arm64):
//!
//! | # | field | bytes |
//! |---|---|---|
//! | 0 | transport: `00` DC, `01` RC | 1 |
//! | 1 | QP number (the DCT number for DC) | 4 |
//! | 2 | GID, network order (all zeros: none) | 16 |
//! | 3 | rkey | 4 |
//! | 4 | address | 8 |
//! | 5 | length (not 0) | 8 |
//! | 6 | port | 1 |
//! | 7 | LID | 2 |
//!
//! Its suffix, where hipObject's curl transport appends one, is fields 8 and 9. A DC token is
//! served like any other; an RC one is refused as [`TokenErrorKind::Unsupported`] (a DC server
//! cannot reach an RC QP: the server declines, and the client moves the bytes over HTTP).
//!
//! In every form: hex digits in either case (one case per token, so that it formats back
//! exactly), and one trailing `;` tolerated (NIXL's protocol note asks servers to tolerate it).
//!
//! A token is untrusted input (it arrives in an HTTP header): `parse` refuses anything else,
//! naming the field and the rule, before anything is posted; it does not allocate unless it
//! refuses.

use crate::addr::{DcTargetAddr, Mtu, RemoteMemory};

/// The reference form's fields in order: name and width in hex digits.
const FIELDS: [(&str, usize); 7] = [
    ("buffer address", 16),
    ("size", 8),
    ("rkey", 8),
    ("LID", 4),
    ("DCT number", 6),
    ("GID present", 1),
    ("GID", 32),
];

/// hipObject's fields in order: name and width in bytes (two hex digits each).
const HIP_FIELDS: [(&str, usize); 8] = [
    ("hipObject transport", 1),
    ("hipObject QP number", 4),
    ("hipObject GID", 16),
    ("hipObject rkey", 4),
    ("hipObject address", 8),
    ("hipObject length", 8),
    ("hipObject port", 1),
    ("hipObject LID", 2),
];

/// The suffix's two fields (after either form's): name and width in hex digits.
const SUFFIX: [(&str, usize); 2] = [("suffix address", 16), ("suffix size", 16)];

/// Length of a reference-form token: the seven fields and their six colons.
pub const TOKEN_LEN: usize = 16 + 8 + 8 + 4 + 6 + 1 + 32 + 6;

/// Length of a hipObject token: 44 bytes as hex.
pub const HIP_TOKEN_LEN: usize = 88;

/// Length of the suffix with its two colons: `:<address:16>:<size:16>`.
pub const SUFFIX_LEN: usize = 2 + 16 + 16;

/// The longest text `parse` looks at; anything longer is refused before it is split.
const MAX_TEXT: usize = TOKEN_LEN * 4;

/// hipObject's transport byte for DC.
const HIP_DC: u64 = 0x00;
/// hipObject's transport byte for RC.
const HIP_RC: u64 = 0x01;

/// The encoding a token was written in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TokenForm {
    /// The reference's seven colon-separated fields.
    #[default]
    Reference,
    /// AMD hipObject's 88 hex digits (transport DC). `port` is its port byte, which a server
    /// does not use (it sends from its own port) and which is kept to write the token back.
    HipObject {
        /// The client's port number, as the token carries it.
        port: u8,
    },
}

/// How a token was spelled: what [`RdmaToken::format`] needs, beyond the token's values, to
/// write it back exactly as it arrived. The default is the reference form, in lower case,
/// without a suffix or a `;`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TokenSpelling {
    /// The encoding.
    pub form: TokenForm,
    /// Where an `:<address>:<size>` suffix followed the form's fields: the range (address,
    /// size) those fields describe. The suffix itself is the token's `addr` and `len` (it
    /// overrides them, as MinIO AIStor takes it), and lies inside that range.
    pub suffixed: Option<(u64, u64)>,
    /// The hex letters are upper case (a token without letters among its digits reads the
    /// same in either case, and parses as lower case).
    pub upper: bool,
    /// A `;` ends the token.
    pub semicolon: bool,
}

/// A client's buffer behind its DCT, as an `x-amz-rdma-token` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RdmaToken {
    /// The buffer's address in the client's address space (its region's IOVA): where a
    /// suffix was given, the suffix's.
    pub addr: u64,
    /// Its length in bytes: 1 to 4 GiB - 1 (where a suffix was given, the suffix's).
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
    /// How the token was written (the reference form for a token minted here).
    pub spelling: TokenSpelling,
}

/// What kind of refusal a [`TokenError`] is: it decides the server's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenErrorKind {
    /// The token is not a token (a broken rule): the request is invalid (the protocol's
    /// `400 InvalidRDMAToken`).
    Malformed,
    /// A well-formed token this server cannot serve (a hipObject RC token; a token without a
    /// GID on RoCE): the server declines RDMA and the client moves the bytes over HTTP.
    Unsupported,
}

/// Why a token was refused: the field, the rule, and whether it is malformed or only
/// unsupported here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenError {
    /// The field's position (0-based) in the token's form: 0 to 6 in the reference form,
    /// 0 to 7 in hipObject's, then the suffix's two (7, 8 or 8, 9); None for the token as a
    /// whole (its length, or its count of fields).
    pub field: Option<usize>,
    /// The field's name (empty for the token as a whole).
    pub name: &'static str,
    /// What is wrong, in a sentence.
    pub why: String,
    /// Malformed, or only unsupported by this server.
    pub kind: TokenErrorKind,
}

impl TokenError {
    /// Whether the token is well formed but cannot be served here: the server declines
    /// RDMA rather than calling the request invalid.
    pub fn is_unsupported(&self) -> bool {
        self.kind == TokenErrorKind::Unsupported
    }
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.field {
            Some(i) => write!(f, "x-amz-rdma-token field {i} ({}): {}", self.name, self.why),
            None => write!(f, "x-amz-rdma-token: {}", self.why),
        }
    }
}

impl std::error::Error for TokenError {}

impl From<TokenError> for crate::Error {
    /// An error of operation `mlx5dv::s3::RdmaToken` with the token error's sentence: EINVAL
    /// for a malformed token, EOPNOTSUPP for one this server cannot serve.
    fn from(e: TokenError) -> Self {
        let (errno, what) = match e.kind {
            TokenErrorKind::Malformed => (libc::EINVAL, "refuse the request (the token is not usable)"),
            TokenErrorKind::Unsupported => (libc::EOPNOTSUPP, "decline RDMA (the client moves the bytes over HTTP)"),
        };
        crate::Error::from_errno("mlx5dv::s3::RdmaToken", errno, format!("{e}: {what}"))
    }
}

/// The form a field belongs to, for its name.
#[derive(Clone, Copy)]
enum In {
    Reference,
    Hip,
}

impl In {
    /// Field `i`'s name: the form's fields, then the suffix's.
    fn name(self, i: usize) -> &'static str {
        let (base, n) = match self {
            In::Reference => (FIELDS.get(i).map(|f| f.0), FIELDS.len()),
            In::Hip => (HIP_FIELDS.get(i).map(|f| f.0), HIP_FIELDS.len()),
        };
        base.or_else(|| SUFFIX.get(i.wrapping_sub(n)).map(|f| f.0))
            .unwrap_or("")
    }
}

#[cold]
fn refuse(form: In, field: usize, why: impl Into<String>) -> TokenError {
    TokenError {
        field: Some(field),
        name: form.name(field),
        why: why.into(),
        kind: TokenErrorKind::Malformed,
    }
}

#[cold]
fn refuse_whole(why: impl Into<String>) -> TokenError {
    TokenError {
        field: None,
        name: "",
        why: why.into(),
        kind: TokenErrorKind::Malformed,
    }
}

/// Offsets of the six colons of a well-formed reference token.
const COLONS: [usize; 6] = [16, 25, 34, 39, 46, 48];

/// The parts of `body` between colons (up to 10 kept) and their count, without allocating.
/// A reference token of its exact shape (its length, and colons there and nowhere else) is
/// split at the fixed offsets; anything else at every colon. Both ways split a token into
/// the same parts.
fn split(body: &str) -> ([&str; 10], usize) {
    let mut parts = [""; 10];
    let b = body.as_bytes();
    if b.len() == TOKEN_LEN
        && COLONS.iter().all(|&c| b[c] == b':')
        && b.iter().filter(|&&c| c == b':').count() == COLONS.len()
    {
        // Splitting at ASCII colons keeps every part on character boundaries.
        let mut start = 0;
        for (i, end) in COLONS.iter().copied().chain([TOKEN_LEN]).enumerate() {
            parts[i] = &body[start..end];
            start = end + 1;
        }
        return (parts, 7);
    }
    let mut count = 0;
    for part in body.split(':') {
        if let Some(slot) = parts.get_mut(count) {
            *slot = part;
        }
        count += 1;
    }
    (parts, count)
}

/// A hex digit's value in the low nibble, `LOWER` for a-f, `UPPER` for A-F, `BAD` for
/// anything else.
const HEX: [u8; 256] = {
    let mut t = [BAD; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = LOWER | (10 + i as u8);
        t[b'A' as usize + i] = UPPER | (10 + i as u8);
        i += 1;
    }
    t
};
const LOWER: u8 = 0x10;
const UPPER: u8 = 0x20;
const BAD: u8 = 0x80;

/// The hex digits seen so far: which cases their letters were in.
#[derive(Default)]
struct Case(u8);

impl Case {
    /// Field `field` (whose digits are checked) made the token mix cases.
    #[inline]
    fn check(&self, form: In, field: usize) -> Result<(), TokenError> {
        if self.0 & (LOWER | UPPER) == LOWER | UPPER {
            return Err(refuse(
                form,
                field,
                "mixes upper- and lower-case hex digits with the fields before it: a token is written in one case",
            ));
        }
        Ok(())
    }
}

/// The value of the (up to 16) hex digits `part[at..at + n]`, of field `field`; their cases
/// join `case`.
#[inline]
fn hex(part: &str, at: usize, n: usize, form: In, field: usize, case: &mut Case) -> Result<u64, TokenError> {
    let bytes = &part.as_bytes()[at..at + n];
    let mut v = 0u64;
    let mut seen = 0u8;
    for &b in bytes {
        let d = HEX[usize::from(b)];
        seen |= d;
        v = (v << 4) | u64::from(d & 0xf);
    }
    if seen & BAD != 0 {
        return Err(not_hex(part, at, bytes, form, field));
    }
    case.0 |= seen;
    Ok(v)
}

#[cold]
fn not_hex(part: &str, at: usize, bytes: &[u8], form: In, field: usize) -> TokenError {
    // The first byte that is not ASCII hex starts a character.
    let k = at + bytes.iter().position(|&b| HEX[usize::from(b)] == BAD).unwrap_or(0);
    let c = part[k..].chars().next().unwrap_or('?');
    refuse(form, field, format!("{c:?} is not a hex digit"))
}

/// Field `i` of `form` is `part`, which must have `width` hex digits.
#[inline]
fn width(part: &str, width: usize, form: In, i: usize) -> Result<(), TokenError> {
    if part.len() != width {
        return Err(refuse(
            form,
            i,
            format!("{} hex digits; this field has exactly {width}", part.len()),
        ));
    }
    Ok(())
}

/// The reference form's seven fields' values (the GID in two halves), their shape checked.
fn reference_shape(parts: &[&str], case: &mut Case) -> Result<[u64; 8], TokenError> {
    let f = In::Reference;
    let mut values = [0u64; 8];
    for (i, (part, (_, w))) in parts.iter().zip(FIELDS).enumerate() {
        width(part, w, f, i)?;
        if i == 6 {
            // The GID: two halves of 64 bits.
            values[6] = hex(part, 0, 16, f, i, case)?;
            values[7] = hex(part, 16, 16, f, i, case)?;
        } else {
            values[i] = hex(part, 0, w, f, i, case)?;
        }
        case.check(f, i)?;
    }
    Ok(values)
}

/// The reference form's token (without a spelling), from its fields' values.
fn reference(values: [u64; 8]) -> Result<RdmaToken, TokenError> {
    let f = In::Reference;
    let (addr, len) = (values[0], values[1] as u32);
    if len == 0 {
        return Err(refuse(f, 1, "size 0: a token describes at least one byte"));
    }
    if addr.checked_add(u64::from(len)).is_none() {
        return Err(refuse(
            f,
            0,
            format!("address {addr:#x} plus size {len:#x} passes the end of the address space"),
        ));
    }
    let gid_zero = values[6] | values[7] == 0;
    let gid = match values[5] {
        1 => {
            let mut g = [0u8; 16];
            g[..8].copy_from_slice(&values[6].to_be_bytes());
            g[8..].copy_from_slice(&values[7].to_be_bytes());
            Some(g)
        }
        0 if gid_zero => None,
        0 => return Err(refuse(f, 6, "a GID is given but the GID-present flag (field 5) is 0")),
        v => return Err(refuse(f, 5, format!("{v}: the GID-present flag is 0 or 1"))),
    };
    Ok(RdmaToken {
        addr,
        len,
        rkey: values[2] as u32,
        lid: values[3] as u16,
        dct_number: values[4] as u32,
        gid,
        spelling: TokenSpelling::default(),
    })
}

/// hipObject's 88 hex digits: its fields' values (little-endian) and the GID's bytes, their
/// shape checked.
fn hip_shape(text: &str, case: &mut Case) -> Result<([u64; 8], [u8; 16]), TokenError> {
    let f = In::Hip;
    let mut values = [0u64; 8];
    let mut gid = [0u8; 16];
    let mut at = 0;
    for (i, (_, bytes)) in HIP_FIELDS.iter().enumerate() {
        // Little-endian integers: byte k is worth 256^k. The GID is bytes in order.
        let mut v = 0u64;
        #[allow(clippy::needless_range_loop)] // k is both the index and the byte's weight
        for k in 0..*bytes {
            let byte = hex(text, at, 2, f, i, case)?;
            at += 2;
            v |= byte << (8 * (k % 8));
            if i == 2 {
                gid[k] = byte as u8;
            }
        }
        case.check(f, i)?;
        values[i] = v;
    }
    Ok((values, gid))
}

/// hipObject's token and the range its fields 4 and 5 describe, from its fields (the length
/// may pass 4 GiB - 1 where a suffix overrides it: `suffixed`).
fn hip((values, gid): ([u64; 8], [u8; 16]), suffixed: bool) -> Result<(RdmaToken, (u64, u64)), TokenError> {
    let f = In::Hip;
    match values[0] {
        HIP_DC => {}
        HIP_RC => {
            return Err(TokenError {
                kind: TokenErrorKind::Unsupported,
                ..refuse(
                    f,
                    0,
                    "transport 01 is RC: this server reaches clients over DC only (hipObject's RC clients need an RC-to-DC adapter)",
                )
            })
        }
        t => return Err(refuse(f, 0, format!("{t:02x}: the transport is 00 (DC) or 01 (RC)"))),
    }
    let dct_number = values[1] as u32;
    if dct_number > 0x00ff_ffff {
        return Err(refuse(f, 1, format!("{dct_number:#x}: a DCT number has 24 bits")));
    }
    let (addr, len) = (values[4], values[5]);
    if len == 0 {
        return Err(refuse(f, 5, "length 0: a token describes at least one byte"));
    }
    if addr.checked_add(len).is_none() {
        return Err(refuse(
            f,
            4,
            format!("address {addr:#x} plus length {len:#x} passes the end of the address space"),
        ));
    }
    if len > u64::from(u32::MAX) && !suffixed {
        return Err(refuse(f, 5, format!("{len:#x}: a token moves at most 4 GiB - 1 bytes")));
    }
    let token = RdmaToken {
        addr,
        len: len as u32,
        rkey: values[3] as u32,
        lid: values[7] as u16,
        dct_number,
        gid: (gid != [0; 16]).then_some(gid),
        spelling: TokenSpelling {
            form: TokenForm::HipObject { port: values[6] as u8 },
            ..TokenSpelling::default()
        },
    };
    Ok((token, (addr, len)))
}

/// The suffix `parts` (address, size), fields `first` and `first + 1`: their values, their
/// shape checked.
fn suffix_shape(parts: &[&str], f: In, first: usize, case: &mut Case) -> Result<[u64; 2], TokenError> {
    let mut v = [0u64; 2];
    for (k, (part, (_, w))) in parts.iter().zip(SUFFIX).enumerate() {
        width(part, w, f, first + k)?;
        v[k] = hex(part, 0, w, f, first + k, case)?;
        case.check(f, first + k)?;
    }
    Ok(v)
}

/// The suffix's range, `[addr, size]` (its fields `first` and `first + 1`), checked against
/// the range `(base, base_len)` the form's fields describe: the range it overrides with.
fn suffix([addr, size]: [u64; 2], f: In, first: usize, (base, base_len): (u64, u64)) -> Result<(u64, u32), TokenError> {
    if size == 0 {
        return Err(refuse(f, first + 1, "size 0: the suffix describes at least one byte"));
    }
    let Some(end) = addr.checked_add(size) else {
        return Err(refuse(
            f,
            first,
            format!("address {addr:#x} plus size {size:#x} passes the end of the address space"),
        ));
    };
    if addr < base {
        return Err(refuse(
            f,
            first,
            format!("{addr:#x} starts before the buffer the token's fields describe ({base:#x}, {base_len:#x} bytes)"),
        ));
    }
    if end > base + base_len {
        return Err(refuse(
            f,
            first + 1,
            format!("{addr:#x} plus {size:#x} ends past the buffer the token's fields describe ({base:#x}, {base_len:#x} bytes)"),
        ));
    }
    if size > u64::from(u32::MAX) {
        return Err(refuse(
            f,
            first + 1,
            format!("{size:#x}: a token moves at most 4 GiB - 1 bytes"),
        ));
    }
    Ok((addr, size as u32))
}

/// Hex digits in lower and upper case.
const DIGITS: [&[u8; 16]; 2] = [b"0123456789abcdef", b"0123456789ABCDEF"];

/// Appends the `n` low hex digits of `v`.
fn put(out: &mut String, v: u64, n: usize, upper: bool) {
    let digits = DIGITS[usize::from(upper)];
    for i in (0..n).rev() {
        out.push(char::from(digits[((v >> (4 * i)) & 0xf) as usize]));
    }
}

impl RdmaToken {
    /// Parses a token in any of its forms ([`TokenForm`]; a suffix, a `;`, either case: see
    /// [`TokenSpelling`]), treating `text` as untrusted. Allocates nothing unless it refuses.
    ///
    /// # Errors
    /// A [`TokenError`] naming the field and the rule it broke: not a form's count of fields
    /// (7 or 9 colon-separated, or hipObject's 88 digits alone or with the suffix); a field
    /// of another width; a character that is not hex, or a case other than the token's;
    /// size 0; an address range that passes the end of the address space; a GID-present flag
    /// other than `0` or `1`; a GID given with the flag `0`; a hipObject transport other
    /// than DC or RC, a QP number wider than 24 bits, a length over 4 GiB - 1; a suffix
    /// that is empty, overflows or leaves the range the fields before it describe. Those
    /// are [`TokenErrorKind::Malformed`]; a hipObject RC token is
    /// [`TokenErrorKind::Unsupported`]. Nothing is truncated or guessed.
    pub fn parse(text: &str) -> Result<RdmaToken, TokenError> {
        if text.len() > MAX_TEXT {
            return Err(refuse_whole(format!(
                "{} bytes long; a token has {TOKEN_LEN} (the reference form) to {} (hipObject's with a suffix)",
                text.len(),
                HIP_TOKEN_LEN + SUFFIX_LEN + 1
            )));
        }
        let (body, semicolon) = match text.strip_suffix(';') {
            Some(body) => (body, true),
            None => (text, false),
        };
        let (parts, count) = split(body);
        let mut case = Case::default();
        // Every field's shape first (the first misshapen one is named), then the rules.
        let (mut token, f, field, base, suffix_values) = match count {
            7 | 9 => {
                let values = reference_shape(&parts[..7], &mut case)?;
                let s = if count == 9 {
                    Some(suffix_shape(&parts[7..9], In::Reference, 7, &mut case)?)
                } else {
                    None
                };
                let t = reference(values)?;
                (t, In::Reference, 7, (t.addr, u64::from(t.len)), s)
            }
            1 | 3 if parts[0].len() == HIP_TOKEN_LEN => {
                let values = hip_shape(parts[0], &mut case)?;
                let s = if count == 3 {
                    Some(suffix_shape(&parts[1..3], In::Hip, HIP_FIELDS.len(), &mut case)?)
                } else {
                    None
                };
                let (t, range) = hip(values, count == 3)?;
                (t, In::Hip, HIP_FIELDS.len(), range, s)
            }
            _ => {
                return Err(refuse_whole(format!(
                    "{count} colon-separated fields; a token has 7 (9 with an address:size suffix), \
                     or is hipObject's {HIP_TOKEN_LEN} hex digits (with the suffix: 3)"
                )))
            }
        };
        if let Some(v) = suffix_values {
            let (addr, len) = suffix(v, f, field, base)?;
            token.addr = addr;
            token.len = len;
            token.spelling.suffixed = Some(base);
        }
        token.spelling.upper = case.0 & UPPER != 0;
        token.spelling.semicolon = semicolon;
        Ok(token)
    }

    /// The token's text, spelled as [`RdmaToken::spelling`] says: a token parsed from a
    /// header gives back that header byte for byte; a minted one, the reference form in
    /// lower case (the GID field all zeros without a GID).
    ///
    /// # Errors
    /// A [`TokenError`] when the token could not be parsed back: size 0, a DCT number wider
    /// than 24 bits, an address range past the end of the address space, or a suffixed
    /// spelling whose range (the fields before the suffix) is empty, overflows, does not
    /// hold the token's range, or (in the reference form) is longer than its 8-digit size
    /// field can say; in hipObject's form, a GID of all zeros (which it writes for none).
    pub fn format(&self) -> Result<String, TokenError> {
        let s = self.spelling;
        let (f, dct_field, size_field, addr_field) = match s.form {
            TokenForm::Reference => (In::Reference, 4, 1, 0),
            TokenForm::HipObject { .. } => (In::Hip, 1, 5, 4),
        };
        if self.dct_number > 0x00ff_ffff {
            return Err(refuse(
                f,
                dct_field,
                format!("{:#x} is wider than 24 bits", self.dct_number),
            ));
        }
        if self.len == 0 {
            return Err(refuse(f, size_field, "size 0: a token describes at least one byte"));
        }
        let Some(end) = self.addr.checked_add(u64::from(self.len)) else {
            return Err(refuse(
                f,
                addr_field,
                "the address range passes the end of the address space",
            ));
        };
        if matches!(s.form, TokenForm::HipObject { .. }) && self.gid == Some([0; 16]) {
            return Err(refuse(f, 2, "an all-zero GID is how hipObject writes none: say None"));
        }
        let (base_addr, base_len) = s.suffixed.unwrap_or((self.addr, u64::from(self.len)));
        if s.suffixed.is_some() {
            let fits = match s.form {
                TokenForm::Reference => base_len <= u64::from(u32::MAX),
                TokenForm::HipObject { .. } => true,
            };
            if base_len == 0 || !fits {
                return Err(refuse(
                    f,
                    size_field,
                    format!("{base_len:#x}: not a size this field can say"),
                ));
            }
            match base_addr.checked_add(base_len) {
                Some(base_end) if base_addr <= self.addr && end <= base_end => {}
                _ => {
                    return Err(refuse(
                        f,
                        addr_field,
                        "the range before the suffix does not hold the token's range",
                    ))
                }
            }
        }
        let upper = s.upper;
        let mut out = String::with_capacity(HIP_TOKEN_LEN + SUFFIX_LEN + 1);
        let gid = self.gid.unwrap_or([0; 16]);
        match s.form {
            TokenForm::Reference => {
                put(&mut out, base_addr, 16, upper);
                out.push(':');
                put(&mut out, base_len, 8, upper);
                out.push(':');
                put(&mut out, u64::from(self.rkey), 8, upper);
                out.push(':');
                put(&mut out, u64::from(self.lid), 4, upper);
                out.push(':');
                put(&mut out, u64::from(self.dct_number), 6, upper);
                out.push(':');
                out.push(if self.gid.is_some() { '1' } else { '0' });
                out.push(':');
                for b in gid {
                    put(&mut out, u64::from(b), 2, upper);
                }
            }
            TokenForm::HipObject { port } => {
                let le = |out: &mut String, v: u64, bytes: usize| {
                    for k in 0..bytes {
                        put(out, (v >> (8 * k)) & 0xff, 2, upper);
                    }
                };
                le(&mut out, HIP_DC, 1);
                le(&mut out, u64::from(self.dct_number), 4);
                for b in gid {
                    put(&mut out, u64::from(b), 2, upper);
                }
                le(&mut out, u64::from(self.rkey), 4);
                le(&mut out, base_addr, 8);
                le(&mut out, base_len, 8);
                le(&mut out, u64::from(port), 1);
                le(&mut out, u64::from(self.lid), 2);
            }
        }
        if s.suffixed.is_some() {
            out.push(':');
            put(&mut out, self.addr, 16, upper);
            out.push(':');
            put(&mut out, u64::from(self.len), 16, upper);
        }
        if s.semicolon {
            out.push(';');
        }
        Ok(out)
    }

    /// The token with another spelling (the same buffer and DCT).
    pub fn spelled(self, spelling: TokenSpelling) -> RdmaToken {
        RdmaToken { spelling, ..self }
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
    /// A [`TokenError`] ([`TokenErrorKind::Unsupported`], naming the GID-present field) for a
    /// token without a GID on RoCE.
    pub fn target(&self, port_mtu: Mtu, roce: bool) -> Result<DcTargetAddr, TokenError> {
        if roce && self.gid.is_none() {
            let (f, i) = match self.spelling.form {
                TokenForm::Reference => (In::Reference, 5),
                TokenForm::HipObject { .. } => (In::Hip, 2),
            };
            return Err(TokenError {
                kind: TokenErrorKind::Unsupported,
                ..refuse(
                    f,
                    i,
                    "no GID, and RoCE routes by GID only: the client must send its GID",
                )
            });
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
        assert_eq!(t.spelling, TokenSpelling::default());
        assert_eq!(t.format().unwrap(), EXAMPLE);
        assert_eq!(EXAMPLE.len(), TOKEN_LEN);
    }

    #[test]
    fn an_infiniband_token_without_a_gid_round_trips_and_is_declined_on_roce() {
        let t = RdmaToken {
            addr: 0x7f00_0000_1000,
            len: 4096,
            rkey: 0x1234,
            lid: 7,
            dct_number: 0x4100,
            gid: None,
            spelling: TokenSpelling::default(),
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
        assert!(e.is_unsupported(), "{e:?}");
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
                assert_eq!(e.kind, TokenErrorKind::Malformed, "{e}");
                assert_eq!(e.field.is_some(), !e.name.is_empty(), "{e:?}");
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
        assert_eq!(refused(";"), None);
        assert_eq!(refused(&fields[..6].join(":")), None);
        assert_eq!(refused(&format!("{EXAMPLE}:00")), None, "eight fields");
        assert_eq!(
            refused(&format!("{EXAMPLE}:{}:{}:00", "0".repeat(16), "0".repeat(16))),
            None,
            "ten"
        );
        // Widths, one digit short and one long, in every field.
        for (i, (_, width)) in FIELDS.iter().enumerate() {
            assert_eq!(refused(&with(i, &"0".repeat(width - 1))), Some(i), "field {i} short");
            assert_eq!(refused(&with(i, &"0".repeat(width + 1))), Some(i), "field {i} long");
        }
        // Not hex.
        assert_eq!(refused(&with(2, "0102030G")), Some(2));
        assert_eq!(refused(&with(3, "+102")), Some(3), "a sign");
        assert_eq!(refused(&with(4, " 10203")), Some(4), "a space");
        assert_eq!(refused(&format!("{EXAMPLE};;")), Some(6), "a second ';'");
        assert_eq!(refused(&format!("{EXAMPLE} ;")), Some(6), "a space before the ';'");
        // One case per token: an upper-case field before the GID's lower-case letters.
        assert_eq!(refused(&with(2, "0102030A")), Some(6), "mixed case");
        assert!(RdmaToken::parse(&with(2, "0102030a")).is_ok());
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
        // A suffix spelling whose range does not hold the token's.
        let outside = t.spelled(TokenSpelling {
            suffixed: Some((t.addr + 1, u64::from(t.len))),
            ..TokenSpelling::default()
        });
        assert_eq!(outside.format().unwrap_err().field, Some(0));
        let too_long = t.spelled(TokenSpelling {
            suffixed: Some((t.addr, 1 << 32)),
            ..TokenSpelling::default()
        });
        assert_eq!(too_long.format().unwrap_err().field, Some(1));
        // hipObject writes no GID as zeros: an all-zero GID cannot be told from none.
        let zero_gid = RdmaToken {
            gid: Some([0; 16]),
            ..t.spelled(TokenSpelling {
                form: TokenForm::HipObject { port: 1 },
                ..TokenSpelling::default()
            })
        };
        assert_eq!(zero_gid.format().unwrap_err().field, Some(2));
    }

    #[test]
    fn a_token_error_converts_into_an_einval_error_keeping_its_sentence() {
        let e: crate::Error = RdmaToken::parse("x").unwrap_err().into();
        assert_eq!(e.errno(), Some(libc::EINVAL));
        assert!(e.to_string().contains("7"), "{e}");
    }

    // The tokens below are written the way each published implementation writes them.
    //
    // - NVIDIA gpu_direct_rdma_access, gpu_direct_rdma_access.c, rdma_buffer_get_desc_str:
    //   "%016llx:%08lx:%08x:%04x:%06x:%d:" and the GID as 32 lower-case hex digits.
    // - NIXL (ai-dynamo/nixl PR 1840), src/utils/object/rdma_protocol.h, formatRdmaToken:
    //   descriptor + ":%016" PRIx64 ":%016" PRIx64 (the buffer's address and size).
    // - minio-cpp (until PR 244, 2026-08-07), include/miniocpp/rdma.h, objectPut/objectGet:
    //   snprintf(io_str, sizeof IO_DESC_STR, "%s:%016lx:%016lx;", desc_str, buf, size), whose
    //   buffer (the nine fields' 114 characters and the NUL) cuts the ';' off: the wire sees
    //   nine fields. NIXL's protocol note (src/plugins/obj/RDMA_PROTOCOL.md, ai-dynamo/nixl
    //   PR 1741): "A trailing `;` (some clients append one) must be tolerated".
    // - AMD hipObject, src/rdma/token.cpp, encodeRdmaToken: the 44 bytes (memcpy of the
    //   host-order integers) as lower-case hex; decodeRdmaTokenHex accepts either case;
    //   examples/s3_curl_ops.cpp appends "%.*s:%016lx:%016lx" (the buffer and the object size).

    /// A RoCE client's token, as the reference writes it (GID ::ffff:192.168.1.42).
    const NVIDIA: &str = "00007f3a5c000000:00100000:001f2e97:0000:007a03:1:00000000000000000000ffffc0a8012a";

    #[test]
    fn nixl_and_minio_cpp_nine_fields_override_the_range_and_format_back() {
        // NIXL: the descriptor of a 1 MiB registration, the suffix naming 64 KiB inside it.
        let nixl = format!("{NVIDIA}:00007f3a5c010000:0000000000010000");
        let t = RdmaToken::parse(&nixl).unwrap();
        let base = RdmaToken::parse(NVIDIA).unwrap();
        assert_eq!((t.addr, t.len), (0x7f3a_5c01_0000, 0x1_0000), "the suffix overrides");
        assert_eq!((t.rkey, t.dct_number, t.gid), (base.rkey, base.dct_number, base.gid));
        assert_eq!(t.spelling.suffixed, Some((0x7f3a_5c00_0000, 0x10_0000)));
        assert_eq!(t.remote().addr, 0x7f3a_5c01_0000);
        assert_eq!(t.format().unwrap(), nixl);
        // minio-cpp: the same range twice (its buf and size are the descriptor's), with and
        // without the ';' its format string asks for.
        let minio = format!("{NVIDIA}:00007f3a5c000000:0000000000100000");
        let m = RdmaToken::parse(&minio).unwrap();
        assert_eq!((m.addr, m.len), (base.addr, base.len));
        assert_eq!(m.format().unwrap(), minio);
        let semi = format!("{minio};");
        let s = RdmaToken::parse(&semi).unwrap();
        assert!(s.spelling.semicolon);
        assert_eq!(s.format().unwrap(), semi);
        assert_eq!(
            RdmaToken {
                spelling: m.spelling,
                ..s
            },
            m,
            "the ';' changes nothing else"
        );
    }

    #[test]
    fn a_suffix_outside_the_fields_range_is_refused_naming_the_suffix_field() {
        let with = |a: &str, s: &str| format!("{NVIDIA}:{a}:{s}");
        // Empty, before the buffer, past its end, overflowing, not hex, of another width.
        assert_eq!(refused(&with("00007f3a5c000000", "0000000000000000")), Some(8));
        assert_eq!(refused(&with("00007f3a5bffffff", "0000000000000010")), Some(7));
        assert_eq!(refused(&with("00007f3a5c0fffff", "0000000000000002")), Some(8));
        assert_eq!(refused(&with("00007f3a5c000000", "0000000000100001")), Some(8));
        assert_eq!(refused(&with("ffffffffffffffff", "0000000000000002")), Some(7));
        assert_eq!(refused(&with("00007f3a5c00000g", "0000000000000010")), Some(7));
        assert_eq!(refused(&with("00007f3a5c000000", "000000000000010")), Some(8));
        // The last byte of the buffer is inside.
        let last = RdmaToken::parse(&with("00007f3a5c0fffff", "0000000000000001")).unwrap();
        assert_eq!((last.addr, last.len), (0x7f3a_5c0f_ffff, 1));
        let e = RdmaToken::parse(&with("00007f3a5c0fffff", "0000000000000002")).unwrap_err();
        assert!(e.to_string().contains("field 8 (suffix size)"), "{e}");
    }

    #[test]
    fn upper_case_tokens_parse_and_format_back_in_upper_case() {
        let upper = NVIDIA.to_uppercase();
        let t = RdmaToken::parse(&upper).unwrap();
        assert!(t.spelling.upper);
        assert_eq!(t.format().unwrap(), upper);
        assert_eq!(
            RdmaToken {
                spelling: TokenSpelling::default(),
                ..t
            },
            RdmaToken::parse(NVIDIA).unwrap()
        );
        let nine = format!("{upper}:00007F3A5C010000:0000000000010000;");
        assert_eq!(RdmaToken::parse(&nine).unwrap().format().unwrap(), nine);
        // A lower-case suffix after upper-case fields mixes cases.
        assert_eq!(refused(&format!("{upper}:00007f3a5c010000:0000000000010000")), Some(7));
    }

    /// A DC token as hipObject's encodeRdmaToken writes it: transport 00, QP (DCT) number
    /// 0x7a03, GID ::ffff:192.168.1.42, rkey 0xdeadbeef, address 0x7f0000001000, length
    /// 4096, port 1, LID 0, the integers little-endian.
    const HIP_DC: &str = concat!(
        "00",
        "037a0000",
        "00000000000000000000ffffc0a8012a",
        "efbeadde",
        "00100000007f0000",
        "0010000000000000",
        "01",
        "0000"
    );

    #[test]
    fn a_hipobject_dc_token_parses_as_the_same_buffer_and_dct_and_formats_back() {
        assert_eq!(HIP_DC.len(), HIP_TOKEN_LEN);
        let t = RdmaToken::parse(HIP_DC).unwrap();
        let mut gid = [0u8; 16];
        gid[10..].copy_from_slice(&[0xff, 0xff, 192, 168, 1, 42]);
        assert_eq!(
            (t.addr, t.len, t.rkey, t.lid, t.dct_number, t.gid),
            (0x7f00_0000_1000, 4096, 0xdead_beef, 0, 0x7a03, Some(gid))
        );
        assert_eq!(t.spelling.form, TokenForm::HipObject { port: 1 });
        assert_eq!(t.format().unwrap(), HIP_DC);
        assert_eq!(t.target(Mtu::Mtu4096, true).unwrap().dct_number, 0x7a03);
        // The same in upper case (decodeRdmaTokenHex takes it), with s3_curl_ops's suffix.
        let upper = format!("{}:00007F0000001800:0000000000000200", HIP_DC.to_uppercase());
        let u = RdmaToken::parse(&upper).unwrap();
        assert_eq!((u.addr, u.len), (0x7f00_0000_1800, 0x200));
        assert_eq!(u.spelling.suffixed, Some((0x7f00_0000_1000, 4096)));
        assert_eq!(u.format().unwrap(), upper);
        // A suffix past hipObject's length is refused naming it (field 9).
        let past = format!("{HIP_DC}:00007f0000001800:0000000000000801");
        assert_eq!(refused(&past), Some(9));
    }

    #[test]
    fn a_hipobject_rc_token_is_unsupported_naming_rc_and_bad_ones_are_malformed() {
        let rc = format!("01{}", &HIP_DC[2..]);
        let e = RdmaToken::parse(&rc).unwrap_err();
        assert_eq!((e.field, e.kind), (Some(0), TokenErrorKind::Unsupported));
        assert!(e.to_string().contains("RC"), "{e}");
        let as_error: crate::Error = e.into();
        assert_eq!(as_error.errno(), Some(libc::EOPNOTSUPP));
        let at = |i: usize, v: &str| format!("{}{v}{}", &HIP_DC[..i], &HIP_DC[i + v.len()..]);
        assert_eq!(refused(&at(0, "02")), Some(0), "transport 02");
        assert_eq!(refused(&at(2, "037a0001")), Some(1), "a QP number of 25 bits");
        assert_eq!(refused(&at(10, "0g")), Some(2), "not hex in the GID");
        assert_eq!(refused(&at(66, "0000000000000000")), Some(5), "length 0");
        assert_eq!(refused(&at(66, "0000000001000000")), Some(5), "length 2^32");
        assert_eq!(refused(&at(50, "00f0ffffffffffff")), Some(4), "past the end");
        assert_eq!(
            refused(&at(84, "000A")),
            Some(7),
            "a LID in another case than the GID's"
        );
        assert_eq!(refused(&HIP_DC[1..]), None, "87 digits");
        assert_eq!(refused(&format!("{HIP_DC}:00")), None, "two parts");
    }

    #[test]
    fn a_refusal_names_the_field_its_number_and_the_rule_in_one_sentence() {
        let e = RdmaToken::parse(&EXAMPLE.replace("0102:", "01z2:")).unwrap_err();
        assert_eq!(e.to_string(), "x-amz-rdma-token field 3 (LID): 'z' is not a hex digit");
        let e = RdmaToken::parse(&format!("02{}", &HIP_DC[2..])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x-amz-rdma-token field 0 (hipObject transport): 02: the transport is 00 (DC) or 01 (RC)"
        );
    }
}
