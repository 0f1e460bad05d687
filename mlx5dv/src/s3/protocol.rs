//! The S3-over-RDMA protocol around the data path, as data (no HTTP library): the header
//! names; what a server answers for each outcome ([`respond`]: HTTP status, `x-amz-rdma-reply`,
//! `x-amz-rdma-bytes-transferred`, body, S3 error code); and what a client makes of the
//! answer ([`Reply::parse`], [`parse_bytes_transferred`], [`ClientAction::of`]).
//!
//! The rules are those of NVIDIA's `RDMA_PROTOCOL_SPEC.md` v1.0 (draft, October 2025, in
//! their aws-c-s3 fork, branch `nvidia_rdma`), by section:
//!
//! | outcome | PUT | GET |
//! |---|---|---|
//! | moved by RDMA (3.2, 4.2, 4.4, 8.2) | 200, reply `200` | 200, reply `200` (206 and `206` for a `Range`; 204 and `204` for no bytes), bytes transferred |
//! | declined (3.3, 4.3, 7.3) | 200, reply `501`, S3 error `RDMANotSupported` in the body: the client sends the bytes again in the body | 200 (206 for a `Range`), reply `501`, the object in the body |
//! | invalid token (7.1) | 400 `InvalidRDMAToken`, no reply header | the same |
//! | failed after acceptance (7.2) | 500 `RDMATransferFailed`, no reply header | 200 (206), reply `501`, the object in the body |
//! | busy (S3's throttling; 7.1 allows HTTP errors) | 503 `SlowDown`, no reply header | the same |
//! | checksum header malformed, several (S3's rule), or of an algorithm not computed here | 400 `InvalidRequest`, no reply header | the same |
//! | bytes read differ from the request's checksum (3.1 step 4, 5.1) | 400 `BadDigest`, no reply header, nothing stored | (none: the server computes a GET's) |
//!
//! Checksums (spec 5): a PUT's `x-amz-checksum-*` header is of the raw bytes the server
//! RDMA-reads, which it validates before storing ([`Outcome::verified`]); a GET with
//! `x-amz-checksum-mode: ENABLED` ([`checksum_mode_enabled`]) is answered with the checksum
//! header of the bytes moved, which the client validates. The spec gives no error for a
//! mismatch: this is S3's own (`BadDigest`, 400), which 7.1 allows (an HTTP error without
//! the reply header, handled as a standard S3 error). [`super::checksum`] computes them.
//!
//! The bytes-transferred header is required on a GET's success (4.2, 8.3) and sent on a PUT's
//! too (the spec neither asks for nor forbids it: it is statistics). A client reads replies
//! the way the published clients do: `200`/`204`/`206` success, `501` declined, a missing
//! header declined (7.3, 10.2: a server without RDMA ignores the token), and AMD hipObject's
//! `ok`, `err` and `200:<88-hex peer token>` (its RC handshake; `docs/interop.rst`).

use super::checksum::{Algorithm, ChecksumError, ChecksumErrorKind, Digest, CRC32C_HEADER, CRC64NVME_HEADER};
use super::{Direction, Done, TokenError, HIP_TOKEN_LEN};
use crate::WcStatus;

/// The request header carrying the token; a request without it is plain S3.
pub const TOKEN_HEADER: &str = "x-amz-rdma-token";
/// The response header with the outcome: `200`, `204`, `206` (moved by RDMA), `501` (not by
/// RDMA: the body carries, or must carry, the bytes).
pub const REPLY_HEADER: &str = "x-amz-rdma-reply";
/// The response header with the bytes moved by RDMA, in decimal.
pub const BYTES_TRANSFERRED_HEADER: &str = "x-amz-rdma-bytes-transferred";

/// The S3 error code of a token the server cannot parse (spec 7.1).
pub const INVALID_TOKEN: &str = "InvalidRDMAToken";
/// The S3 error code in the body of a declined PUT (spec 3.3).
pub const NOT_SUPPORTED: &str = "RDMANotSupported";
/// The S3 error code of a transfer that failed after the server accepted it (spec 7.2).
pub const TRANSFER_FAILED: &str = "RDMATransferFailed";
/// S3's own code for a request to send again later (HTTP 503), which S3 clients retry.
pub const SLOW_DOWN: &str = "SlowDown";
/// S3's code for bytes that do not match the checksum the request carried (HTTP 400).
pub const BAD_DIGEST: &str = "BadDigest";
/// S3's code for a request it cannot take as written, here a malformed checksum header or
/// several (HTTP 400).
pub const INVALID_REQUEST: &str = "InvalidRequest";
/// The GET request header asking for the object's checksum in the response (`ENABLED`).
pub const CHECKSUM_MODE_HEADER: &str = "x-amz-checksum-mode";

/// Whether a GET's `x-amz-checksum-mode` value (None: no header) asks for the checksum
/// header in the response: `ENABLED` (AWS's SDKs send it in upper case; taken in any case).
pub fn checksum_mode_enabled(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.eq_ignore_ascii_case("ENABLED"))
}

/// What became of a request that carried a token, on the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every byte moved by RDMA: `bytes` of them.
    Moved {
        /// The bytes moved (the object, or the range asked for).
        bytes: u64,
    },
    /// The server did not use RDMA: its choice (no RDMA on this endpoint, a token it cannot
    /// serve such as a hipObject RC one, an object larger than the token's buffer or than
    /// its limits, resources short). Spec 2.3.
    Declined,
    /// The token could not be parsed or breaks a rule ([`TokenError`], malformed).
    InvalidToken,
    /// The server accepted the token and the transfer failed (a [`Done`] that is not ok):
    /// `status` is its completion status.
    Failed {
        /// The first failure among the transfer's messages.
        status: WcStatus,
    },
    /// Not now: the server keeps its share of transfers for unproven clients full (the
    /// executor's `EBUSY`), and refuses at once rather than queue. Not an RDMA outcome but
    /// S3's own `503 SlowDown`, which S3 clients send again (spec 7.1: an HTTP error without
    /// the reply header, handled as a standard S3 error).
    Busy,
    /// The request's checksum header is malformed, or it carries several, or one of an
    /// algorithm not computed here: S3's `400 InvalidRequest`, found before any byte moves.
    InvalidChecksum {
        /// The header.
        header: &'static str,
        /// What is wrong with it.
        kind: ChecksumErrorKind,
    },
    /// A PUT's bytes, read by RDMA, do not match the checksum the request carried (spec 3.1,
    /// 5.1): S3's `400 BadDigest`; nothing is stored.
    BadDigest {
        /// The checksum's algorithm.
        algorithm: Algorithm,
    },
}

impl Outcome {
    /// The outcome of a token `RdmaToken::parse` (or `target`) refused: invalid when it is
    /// malformed, declined when it is only unsupported here.
    pub fn of_token_error(e: &TokenError) -> Outcome {
        if e.is_unsupported() {
            Outcome::Declined
        } else {
            Outcome::InvalidToken
        }
    }

    /// The outcome of a checksum header [`super::checksum::requested`] refused.
    pub fn of_checksum_error(e: &ChecksumError) -> Outcome {
        Outcome::InvalidChecksum {
            header: e.header,
            kind: e.kind,
        }
    }

    /// A PUT's outcome once its bytes are checked: `self` if they did not all move or the
    /// request carried no checksum (`expected` None); else `self` when `computed` (the
    /// server's checksum of the bytes read) equals `expected`, and [`Outcome::BadDigest`]
    /// when it differs or is missing or of another algorithm (unchecked bytes are not stored).
    pub fn verified(self, expected: Option<Digest>, computed: Option<Digest>) -> Outcome {
        match (self, expected) {
            (Outcome::Moved { .. }, Some(want)) if computed != Some(want) => Outcome::BadDigest {
                algorithm: want.algorithm,
            },
            _ => self,
        }
    }

    /// The outcome of a transfer the executor refused to start, its token already parsed
    /// (`Executor::submit`, `submit_region`, their async forms): too busy (EBUSY: the
    /// strangers' share is full; EAGAIN: every transfer or endpoint in use) is
    /// [`Outcome::Busy`]; anything else (a token this server cannot serve, EOPNOTSUPP; a range
    /// outside the token's buffer) is [`Outcome::Declined`]: the request goes on over HTTP.
    pub fn of_refusal(e: &crate::Error) -> Outcome {
        match e.errno() {
            Some(libc::EBUSY | libc::EAGAIN) => Outcome::Busy,
            _ => Outcome::Declined,
        }
    }

    /// The outcome of a finished transfer.
    pub fn of_done(d: &Done) -> Outcome {
        if d.is_ok() {
            Outcome::Moved { bytes: d.bytes }
        } else {
            Outcome::Failed { status: d.status }
        }
    }
}

/// What the response's body holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// Nothing (`Content-Length: 0`).
    Empty,
    /// The object's bytes (or the range asked for): a GET served over HTTP.
    Object,
    /// An S3 XML error document ([`error_xml`]) with [`Response::error`]'s code.
    Error,
}

/// A server's answer to a request that carried a token: what the spec says it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// The `x-amz-rdma-reply` value; None: the header is left out.
    pub reply: Option<&'static str>,
    /// The `x-amz-rdma-bytes-transferred` value; None: left out.
    pub bytes_transferred: Option<u64>,
    /// The body.
    pub body: Body,
    /// The S3 error: code and a message (in the body's XML).
    pub error: Option<(&'static str, &'static str)>,
}

/// The answer to a request with a token, moving bytes `direction` (PUT or GET; `ranged`: a
/// GET with a `Range`), whose outcome is `outcome`. The application adds the ordinary S3
/// headers (ETag, Content-Range, checksums) and, for [`Body::Object`], the bytes.
pub fn respond(direction: Direction, ranged: bool, outcome: Outcome) -> Response {
    let get_status = if ranged { 206 } else { 200 };
    let none = Response {
        status: 200,
        reply: None,
        bytes_transferred: None,
        body: Body::Empty,
        error: None,
    };
    // A GET recovers through the body whenever RDMA did not move it (spec 4.3, 7.2).
    let get_by_body = Response {
        status: get_status,
        reply: Some("501"),
        body: Body::Object,
        ..none
    };
    match (outcome, direction) {
        (Outcome::Moved { bytes }, Direction::Put) => Response {
            reply: Some("200"),
            bytes_transferred: Some(bytes),
            ..none
        },
        (Outcome::Moved { bytes: 0 }, Direction::Get) if !ranged => Response {
            status: 204,
            reply: Some("204"),
            bytes_transferred: Some(0),
            ..none
        },
        (Outcome::Moved { bytes }, Direction::Get) => Response {
            status: get_status,
            reply: Some(if ranged { "206" } else { "200" }),
            bytes_transferred: Some(bytes),
            ..none
        },
        (Outcome::Declined, Direction::Put) => Response {
            reply: Some("501"),
            body: Body::Error,
            error: Some((NOT_SUPPORTED, "RDMA not available: send the object in the body")),
            ..none
        },
        (Outcome::InvalidToken, _) => Response {
            status: 400,
            body: Body::Error,
            error: Some((INVALID_TOKEN, "The provided RDMA token is invalid")),
            ..none
        },
        (Outcome::Failed { .. }, Direction::Put) => Response {
            status: 500,
            body: Body::Error,
            error: Some((TRANSFER_FAILED, "RDMA data transfer failed")),
            ..none
        },
        (Outcome::Busy, _) => Response {
            status: 503,
            body: Body::Error,
            error: Some((SLOW_DOWN, "Please reduce your request rate.")),
            ..none
        },
        (Outcome::InvalidChecksum { header, kind }, _) => Response {
            status: 400,
            body: Body::Error,
            error: Some((INVALID_REQUEST, invalid_checksum_message(header, kind))),
            ..none
        },
        (Outcome::BadDigest { algorithm }, _) => Response {
            status: 400,
            body: Body::Error,
            error: Some((BAD_DIGEST, bad_digest_message(algorithm))),
            ..none
        },
        (Outcome::Declined | Outcome::Failed { .. }, Direction::Get) => get_by_body,
    }
}

/// S3's message for a malformed checksum header (or several); ours for an algorithm not
/// computed here.
fn invalid_checksum_message(header: &str, kind: ChecksumErrorKind) -> &'static str {
    match (kind, header) {
        (ChecksumErrorKind::Several, _) => {
            "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed."
        }
        (ChecksumErrorKind::Unsupported, _) => {
            "This server checks x-amz-checksum-crc64nvme and x-amz-checksum-crc32c only."
        }
        (_, CRC64NVME_HEADER) => "Value for x-amz-checksum-crc64nvme header is invalid.",
        (_, CRC32C_HEADER) => "Value for x-amz-checksum-crc32c header is invalid.",
        _ => "Value for x-amz-checksum- header is invalid.",
    }
}

/// S3's message for bytes that do not match the request's checksum.
fn bad_digest_message(algorithm: Algorithm) -> &'static str {
    match algorithm {
        Algorithm::Crc64Nvme => "The CRC64NVME you specified did not match the calculated checksum.",
        Algorithm::Crc32c => "The CRC32C you specified did not match the calculated checksum.",
    }
}

/// What a failed transfer's status says happened, in a sentence (for an error message or a
/// log: the spec's codes do not tell the causes apart).
pub fn failure_cause(status: WcStatus) -> &'static str {
    match status {
        WcStatus::RemAccessErr => {
            "the client's adapter refused the access (rkey, range or right): the token lies or was revoked"
        }
        WcStatus::RetryExcErr => "the client did not answer: it is gone, or its DCT expects another DC key",
        WcStatus::WrFlushErr => "flushed behind another transfer's failure at the same client",
        WcStatus::Success => "no failure",
        _ => "the transfer failed on the server's adapter",
    }
}

/// An S3 XML error document: `code`, and `message` with XML's five special characters
/// escaped (a message may quote a header the client sent).
pub fn error_xml(code: &str, message: &str) -> String {
    let mut out = String::with_capacity(96 + code.len() + message.len());
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>");
    escape(&mut out, code);
    out.push_str("</Code><Message>");
    escape(&mut out, message);
    out.push_str("</Message></Error>");
    out
}

fn escape(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
}

/// An `x-amz-rdma-reply` value as a client reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `200`, `204` or `206` (hipObject's `ok` is 200): the bytes moved by RDMA.
    Moved(u16),
    /// `501`: the server declined; the bytes are in the body (GET) or must be sent in it
    /// (PUT).
    Declined,
    /// No header: the server did not take the token up (a server without RDMA ignores it,
    /// spec 7.3): as declined.
    Absent,
    /// hipObject's RC handshake `<status>:<88-hex peer token>`: the server expects the client
    /// to connect an RC QP to the peer token's (a DC client cannot).
    RcHandshake(u16),
    /// Another status (hipObject's `err` is None): the transfer failed.
    Failed(Option<u16>),
}

/// Why a reply header could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplyError {
    /// The header whose value it is.
    pub header: &'static str,
    /// What is wrong, in a sentence.
    pub why: String,
}

impl std::fmt::Display for ReplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.header, self.why)
    }
}

impl std::error::Error for ReplyError {}

fn reply_error(header: &'static str, why: impl Into<String>) -> ReplyError {
    ReplyError {
        header,
        why: why.into(),
    }
}

/// A three-digit HTTP status (100 to 599), or None.
fn status(text: &str) -> Option<u16> {
    let b = text.as_bytes();
    if b.len() != 3 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = text.parse::<u16>().ok()?;
    (100..=599).contains(&v).then_some(v)
}

impl Reply {
    /// Reads the `x-amz-rdma-reply` header's value (None: the response has none), as the
    /// HTTP library delivers it (surrounding blanks taken off).
    ///
    /// # Errors
    /// A [`ReplyError`] for anything but a three-digit status (100 to 599), `ok`, `err`, or
    /// a status, a colon and a hipObject token's 88 hex digits (either case). The client
    /// treats it as a failure: a reply it cannot read proves nothing moved.
    pub fn parse(value: Option<&str>) -> Result<Reply, ReplyError> {
        let Some(v) = value else {
            return Ok(Reply::Absent);
        };
        let bad = |why: &str| reply_error(REPLY_HEADER, format!("{v:?}: {why}"));
        match v {
            "ok" => return Ok(Reply::Moved(200)),
            "err" => return Ok(Reply::Failed(None)),
            _ => {}
        }
        if let Some((code, peer)) = v.split_once(':') {
            let code = status(code).ok_or_else(|| bad("a status before the colon is 3 digits"))?;
            if peer.len() != HIP_TOKEN_LEN || !peer.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad("a peer token is 88 hex digits"));
            }
            return Ok(Reply::RcHandshake(code));
        }
        match status(v) {
            Some(c @ (200 | 204 | 206)) => Ok(Reply::Moved(c)),
            Some(501) => Ok(Reply::Declined),
            Some(c) => Ok(Reply::Failed(Some(c))),
            None => Err(bad("a reply is a 3-digit status, ok, err, or status:peer-token")),
        }
    }
}

/// Reads `x-amz-rdma-bytes-transferred` (spec 4.2: a decimal integer), strictly: digits
/// only, no sign, blank or leading zero, at most 2^64 - 1.
///
/// # Errors
/// A [`ReplyError`] naming the rule the value breaks.
pub fn parse_bytes_transferred(value: &str) -> Result<u64, ReplyError> {
    let bad = |why: &str| reply_error(BYTES_TRANSFERRED_HEADER, format!("{value:?}: {why}"));
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("a byte count is decimal digits only"));
    }
    if value.len() > 1 && value.starts_with('0') {
        return Err(bad("a byte count has no leading zero"));
    }
    value.parse::<u64>().map_err(|_| bad("more than 2^64 - 1 bytes"))
}

/// What a client does with a response to a request that carried a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientAction {
    /// The bytes moved by RDMA: the PUT is stored; the GET's bytes are in the buffer (check
    /// `x-amz-rdma-bytes-transferred` against the length asked for).
    Done,
    /// A GET served over HTTP: the object is in the body.
    ReadBody,
    /// A PUT the server did not store by RDMA: send it again with the bytes in the body.
    /// (Without a reply header this is the spec's reading, 7.3: a server without RDMA stored
    /// the empty body. NIXL's protocol note says MinIO AIStor leaves the header out of a PUT's
    /// success too, answering 200 and the ETag: against it, this sends the bytes a second
    /// time, over HTTP: the object is right, the bandwidth spent twice.)
    SendBody,
    /// `503` without a reply (S3's SlowDown): send the same request again a little later.
    Retry,
    /// A failure: the HTTP status says which (400 an invalid token, 500 a failed transfer,
    /// any S3 error); nothing was moved that the client may rely on.
    Failed,
}

impl ClientAction {
    /// The action for a response of HTTP status `http` with `reply` to a request moving
    /// bytes `direction`.
    pub fn of(direction: Direction, http: u16, reply: Reply) -> ClientAction {
        let ok = (200..300).contains(&http);
        match (reply, direction) {
            (Reply::Moved(_), _) if ok => ClientAction::Done,
            (Reply::Declined | Reply::Absent, Direction::Get) if ok => ClientAction::ReadBody,
            (Reply::Declined | Reply::Absent, Direction::Put) if ok => ClientAction::SendBody,
            (Reply::Absent, _) if http == 503 => ClientAction::Retry,
            _ => ClientAction::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::s3::RdmaToken;

    const GET: Direction = Direction::Get;
    const PUT: Direction = Direction::Put;

    #[test]
    fn a_refused_submission_is_busy_when_full_and_declined_otherwise() {
        let e = |errno| crate::Error::from_errno("t", errno, "");
        assert_eq!(Outcome::of_refusal(&e(libc::EBUSY)), Outcome::Busy);
        assert_eq!(Outcome::of_refusal(&e(libc::EAGAIN)), Outcome::Busy);
        assert_eq!(Outcome::of_refusal(&e(libc::EOPNOTSUPP)), Outcome::Declined);
        assert_eq!(Outcome::of_refusal(&e(libc::EINVAL)), Outcome::Declined);
    }

    #[test]
    fn success_is_the_http_status_and_the_same_reply_with_the_bytes() {
        let moved = Outcome::Moved { bytes: 4096 };
        let put = respond(PUT, false, moved);
        assert_eq!(
            (put.status, put.reply, put.bytes_transferred),
            (200, Some("200"), Some(4096))
        );
        assert_eq!((put.body, put.error), (Body::Empty, None));
        let get = respond(GET, false, moved);
        assert_eq!(
            (get.status, get.reply, get.bytes_transferred),
            (200, Some("200"), Some(4096))
        );
        assert_eq!(get.body, Body::Empty);
        let ranged = respond(GET, true, moved);
        assert_eq!((ranged.status, ranged.reply), (206, Some("206")));
        let nothing = respond(GET, false, Outcome::Moved { bytes: 0 });
        assert_eq!(
            (nothing.status, nothing.reply, nothing.bytes_transferred),
            (204, Some("204"), Some(0))
        );
    }

    #[test]
    fn a_declined_put_is_200_with_reply_501_and_an_error_body_and_a_get_carries_the_object() {
        let put = respond(PUT, false, Outcome::Declined);
        assert_eq!((put.status, put.reply, put.body), (200, Some("501"), Body::Error));
        assert_eq!(put.error.map(|e| e.0), Some(NOT_SUPPORTED));
        assert_eq!(put.bytes_transferred, None);
        let get = respond(GET, false, Outcome::Declined);
        assert_eq!(
            (get.status, get.reply, get.body, get.error),
            (200, Some("501"), Body::Object, None)
        );
        assert_eq!(respond(GET, true, Outcome::Declined).status, 206);
    }

    #[test]
    fn an_invalid_token_is_400_invalid_rdma_token_without_the_reply_header() {
        for (dir, ranged) in [(PUT, false), (GET, false), (GET, true)] {
            let r = respond(dir, ranged, Outcome::InvalidToken);
            assert_eq!((r.status, r.reply, r.body), (400, None, Body::Error));
            assert_eq!(r.error.map(|e| e.0), Some(INVALID_TOKEN));
        }
    }

    #[test]
    fn a_failure_after_acceptance_is_a_500_for_a_put_and_the_body_for_a_get() {
        for status in [
            WcStatus::RemAccessErr,
            WcStatus::RetryExcErr,
            WcStatus::WrFlushErr,
            WcStatus::GeneralErr,
        ] {
            let failed = Outcome::Failed { status };
            let put = respond(PUT, false, failed);
            assert_eq!((put.status, put.reply, put.body), (500, None, Body::Error));
            assert_eq!(put.error.map(|e| e.0), Some(TRANSFER_FAILED));
            let get = respond(GET, true, failed);
            assert_eq!((get.status, get.reply, get.body), (206, Some("501"), Body::Object));
            assert!(!failure_cause(status).is_empty());
        }
        assert!(failure_cause(WcStatus::RetryExcErr).contains("DC key"));
    }

    #[test]
    fn busy_is_s3s_slow_down_without_the_reply_header() {
        for dir in [PUT, GET] {
            let r = respond(dir, false, Outcome::Busy);
            assert_eq!((r.status, r.reply, r.body), (503, None, Body::Error));
            assert_eq!(r.error.map(|e| e.0), Some(SLOW_DOWN));
            assert_eq!(
                ClientAction::of(dir, r.status, Reply::parse(r.reply).unwrap()),
                ClientAction::Retry
            );
        }
    }

    #[test]
    fn a_put_whose_bytes_differ_from_its_checksum_is_400_bad_digest_without_the_reply() {
        use crate::s3::checksum::{Algorithm::*, Digest};
        let moved = Outcome::Moved { bytes: 9 };
        let right = Digest::of(Crc64Nvme, b"123456789");
        let wrong = Digest::of(Crc64Nvme, b"123456780");
        assert_eq!(moved.verified(Some(right), Some(right)), moved);
        assert_eq!(moved.verified(None, Some(right)), moved, "no checksum asked for");
        assert_eq!(moved.verified(None, None), moved);
        let bad = Outcome::BadDigest { algorithm: Crc64Nvme };
        assert_eq!(moved.verified(Some(right), Some(wrong)), bad);
        assert_eq!(moved.verified(Some(right), None), bad, "unchecked bytes are not stored");
        let c32 = Digest::of(Crc32c, b"123456789");
        assert_eq!(
            moved.verified(Some(right), Some(c32)),
            bad,
            "another algorithm checks nothing"
        );
        // A transfer that failed stays failed: the checksum is not what went wrong.
        let failed = Outcome::Failed {
            status: WcStatus::RetryExcErr,
        };
        assert_eq!(failed.verified(Some(right), None), failed);
        let r = respond(PUT, false, bad);
        assert_eq!((r.status, r.reply, r.body), (400, None, Body::Error));
        assert_eq!(r.error.map(|e| e.0), Some(BAD_DIGEST));
        assert!(r.error.unwrap().1.contains("CRC64NVME"));
        let r32 = respond(PUT, false, Outcome::BadDigest { algorithm: Crc32c });
        assert!(r32.error.unwrap().1.contains("CRC32C"));
        assert_eq!(
            ClientAction::of(PUT, r.status, Reply::parse(r.reply).unwrap()),
            ClientAction::Failed
        );
    }

    #[test]
    fn a_malformed_or_doubled_checksum_header_is_400_invalid_request_without_the_reply() {
        use crate::s3::checksum::{requested, CRC32C_HEADER, CRC64NVME_HEADER};
        let malformed = requested(|h| (h == CRC32C_HEADER).then_some("4waSgw=")).unwrap_err();
        let o = Outcome::of_checksum_error(&malformed);
        assert_eq!(
            o,
            Outcome::InvalidChecksum {
                header: CRC32C_HEADER,
                kind: ChecksumErrorKind::Length { got: 7, want: 8 }
            }
        );
        for dir in [PUT, GET] {
            let r = respond(dir, false, o);
            assert_eq!((r.status, r.reply, r.body), (400, None, Body::Error));
            assert_eq!(r.error.map(|e| e.0), Some(INVALID_REQUEST));
            assert!(r.error.unwrap().1.contains(CRC32C_HEADER));
        }
        let both = requested(|h| match h {
            CRC64NVME_HEADER => Some("AAAAAAAAAAA="),
            CRC32C_HEADER => Some("AAAAAA=="),
            _ => None,
        })
        .unwrap_err();
        let o = Outcome::of_checksum_error(&both);
        assert!(
            matches!(
                o,
                Outcome::InvalidChecksum {
                    kind: ChecksumErrorKind::Several,
                    ..
                }
            ),
            "{o:?}"
        );
        assert!(respond(PUT, false, o).error.unwrap().1.contains("single"));
        // An algorithm not computed here: refused, never stored unchecked.
        let sha = requested(|h| (h == "x-amz-checksum-sha256").then_some("x")).unwrap_err();
        let r = respond(PUT, false, Outcome::of_checksum_error(&sha));
        assert_eq!((r.status, r.reply), (400, None));
        assert_eq!(r.error.map(|e| e.0), Some(INVALID_REQUEST));
        assert!(r.error.unwrap().1.contains("only"));
    }

    #[test]
    fn a_get_returns_its_checksum_when_the_mode_is_enabled() {
        assert!(checksum_mode_enabled(Some("ENABLED")));
        assert!(checksum_mode_enabled(Some("enabled")));
        assert!(!checksum_mode_enabled(None));
        assert!(!checksum_mode_enabled(Some("DISABLED")));
        assert!(!checksum_mode_enabled(Some("")));
        assert!(!checksum_mode_enabled(Some("ENABLED ")));
    }

    #[test]
    fn each_done_status_and_token_refusal_maps_to_its_outcome() {
        let mut d = Done {
            id: 1,
            bytes: 512,
            ..Done::default()
        };
        assert_eq!(Outcome::of_done(&d), Outcome::Moved { bytes: 512 });
        d.status = WcStatus::RemAccessErr;
        assert_eq!(
            Outcome::of_done(&d),
            Outcome::Failed {
                status: WcStatus::RemAccessErr
            }
        );
        let malformed = RdmaToken::parse("x").unwrap_err();
        assert_eq!(Outcome::of_token_error(&malformed), Outcome::InvalidToken);
        let rc = format!("01{}", "0".repeat(86));
        let unsupported = RdmaToken::parse(&rc).unwrap_err();
        assert_eq!(Outcome::of_token_error(&unsupported), Outcome::Declined);
    }

    #[test]
    fn the_error_document_escapes_what_the_message_quotes() {
        let x = error_xml(INVALID_TOKEN, "field 3 (LID): '<' is not a hex digit & \"so\"");
        assert_eq!(
            x,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InvalidRDMAToken</Code>\
             <Message>field 3 (LID): &apos;&lt;&apos; is not a hex digit &amp; &quot;so&quot;</Message></Error>"
        );
    }

    #[test]
    fn a_client_reads_every_published_reply() {
        assert_eq!(Reply::parse(Some("200")), Ok(Reply::Moved(200)));
        assert_eq!(Reply::parse(Some("204")), Ok(Reply::Moved(204)));
        assert_eq!(Reply::parse(Some("206")), Ok(Reply::Moved(206)));
        assert_eq!(Reply::parse(Some("501")), Ok(Reply::Declined));
        assert_eq!(Reply::parse(None), Ok(Reply::Absent));
        // hipObject (src/rdma/token.cpp, parseRdmaReplyHttpCode): ok, err, status:peer-token.
        assert_eq!(Reply::parse(Some("ok")), Ok(Reply::Moved(200)));
        assert_eq!(Reply::parse(Some("err")), Ok(Reply::Failed(None)));
        let peer = format!("200:01{}", "Ab".repeat(43));
        assert_eq!(Reply::parse(Some(&peer)), Ok(Reply::RcHandshake(200)));
        // Other statuses fail; anything else is unreadable.
        assert_eq!(Reply::parse(Some("403")), Ok(Reply::Failed(Some(403))));
        for bad in [
            "", "20", "2000", "099", "600", "+200", " 200", "200 ", "200x", "OK", "200:", "200:0g", "abc:00",
        ] {
            let e = Reply::parse(Some(bad)).unwrap_err();
            assert_eq!(e.header, REPLY_HEADER);
            assert!(e.to_string().contains(REPLY_HEADER), "{e}");
        }
        let short_peer = format!("200:{}", "0".repeat(87));
        assert!(Reply::parse(Some(&short_peer)).is_err());
    }

    #[test]
    fn bytes_transferred_is_strict_decimal() {
        assert_eq!(parse_bytes_transferred("0"), Ok(0));
        assert_eq!(parse_bytes_transferred("10485760"), Ok(10_485_760));
        assert_eq!(parse_bytes_transferred("18446744073709551615"), Ok(u64::MAX));
        for bad in [
            "",
            "-1",
            "+1",
            " 1",
            "1 ",
            "0x10",
            "010",
            "1e3",
            "18446744073709551616",
            "１",
        ] {
            let e = parse_bytes_transferred(bad).unwrap_err();
            assert_eq!(e.header, BYTES_TRANSFERRED_HEADER, "{bad:?}");
        }
    }

    #[test]
    fn a_client_acts_on_each_answer_as_the_spec_says() {
        use ClientAction::*;
        for (dir, http, reply, want) in [
            (PUT, 200, Reply::Moved(200), Done),
            (GET, 206, Reply::Moved(206), Done),
            (GET, 204, Reply::Moved(204), Done),
            (PUT, 200, Reply::Declined, SendBody),
            (GET, 200, Reply::Declined, ReadBody),
            (PUT, 200, Reply::Absent, SendBody),
            (GET, 200, Reply::Absent, ReadBody),
            (PUT, 400, Reply::Absent, Failed),
            (GET, 400, Reply::Absent, Failed),
            (PUT, 500, Reply::Absent, Failed),
            (GET, 503, Reply::Absent, Retry),
            (PUT, 503, Reply::Failed(Some(503)), Failed),
            (PUT, 200, Reply::Failed(None), Failed),
            (GET, 200, Reply::Failed(Some(403)), Failed),
            (GET, 200, Reply::RcHandshake(200), Failed),
            (GET, 500, Reply::Moved(200), Failed),
        ] {
            assert_eq!(ClientAction::of(dir, http, reply), want, "{dir:?} {http} {reply:?}");
        }
    }

    #[test]
    fn what_a_server_answers_a_client_reads_back_as_the_spec_means_it() {
        let outcomes = [
            Outcome::Moved { bytes: 10 },
            Outcome::Moved { bytes: 0 },
            Outcome::Declined,
            Outcome::InvalidToken,
            Outcome::Failed {
                status: WcStatus::RetryExcErr,
            },
            Outcome::Busy,
            Outcome::InvalidChecksum {
                header: CRC64NVME_HEADER,
                kind: ChecksumErrorKind::Several,
            },
            Outcome::BadDigest {
                algorithm: Algorithm::Crc32c,
            },
        ];
        for dir in [PUT, GET] {
            for ranged in [false, true] {
                for o in outcomes {
                    if dir == PUT && (ranged || o == (Outcome::Moved { bytes: 0 })) {
                        continue;
                    }
                    let r = respond(dir, ranged, o);
                    let action = ClientAction::of(dir, r.status, Reply::parse(r.reply).unwrap());
                    let want = match (o, dir) {
                        (Outcome::Moved { .. }, _) => ClientAction::Done,
                        (Outcome::Busy, _) => ClientAction::Retry,
                        (Outcome::InvalidToken | Outcome::InvalidChecksum { .. } | Outcome::BadDigest { .. }, _) => {
                            ClientAction::Failed
                        }
                        (Outcome::Failed { .. }, Direction::Put) => ClientAction::Failed,
                        (_, Direction::Get) => ClientAction::ReadBody,
                        (Outcome::Declined, Direction::Put) => ClientAction::SendBody,
                    };
                    assert_eq!(action, want, "{dir:?} ranged={ranged} {o:?}: {r:?}");
                    if let (Some(n), Direction::Get) = (r.bytes_transferred, dir) {
                        assert_eq!(parse_bytes_transferred(&n.to_string()), Ok(n));
                    }
                }
            }
        }
    }
}
