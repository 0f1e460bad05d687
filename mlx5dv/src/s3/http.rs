//! The S3-over-RDMA protocol on the [`http`] crate's types (feature `http`, off by default):
//! the lines every axum, hyper, s3s, reqwest or aws-smithy user would otherwise write around
//! [`protocol`].
//!
//! A server reads a request's token, checksum, checksum mode and range out of its
//! [`HeaderMap`] ([`request_token`], [`request_checksum`], [`checksum_mode`], [`range`]) and
//! turns the protocol's answer into an [`http::Response`] ([`response`], or [`answer`] from
//! the transfer's [`Outcome`]); a client puts its
//! token in a header ([`token_header`]) and reads what came back ([`read_answer`]: the reply,
//! the action the spec prescribes, the bytes moved and the checksum).
//!
//! ```
//! use http::{HeaderMap, HeaderValue};
//! use mlx5dv::s3::http::{range, response, ContentRange};
//! use mlx5dv::s3::protocol::{respond, Outcome};
//! use mlx5dv::s3::Direction;
//!
//! let mut headers = HeaderMap::new();
//! headers.insert("range", HeaderValue::from_static("bytes=10-19"));
//! let r = range(&headers, 100).unwrap();
//! assert_eq!(r, Some(ContentRange { first: 10, last: 19, total: 100 }));
//! // The transfer moved the 10 bytes: 206, the reply and the byte count, Content-Range.
//! let answer = respond(Direction::Get, r.is_some(), Outcome::Moved { bytes: 10 });
//! let resp: http::Response<Vec<u8>> = response(&answer, r, None, Vec::new);
//! assert_eq!(resp.status(), 206);
//! assert_eq!(resp.headers()["x-amz-rdma-reply"], "206");
//! assert_eq!(resp.headers()["content-range"], "bytes 10-19/100");
//! ```

use super::checksum::{self, Algorithm, ChecksumError, Digest};
use super::protocol::{self, Body, ClientAction, Outcome, Reply, ReplyError, Response};
use super::{Direction, RdmaToken};
use crate::mr::{Mr, RegionBuffer};
use http::header::{HeaderMap, HeaderValue, CONTENT_RANGE, CONTENT_TYPE, RANGE};
use http::StatusCode;
use std::fmt;

/// The request's token, for a server: None when the request carries no `x-amz-rdma-token`
/// (plain S3), `Some(Err(outcome))` when its value is not a token this crate reads (answer
/// that outcome: [`Outcome::InvalidToken`], or [`Outcome::Declined`] for a form only
/// unsupported here).
pub fn request_token(headers: &HeaderMap) -> Option<Result<RdmaToken, Outcome>> {
    let value = headers.get(protocol::TOKEN_HEADER)?;
    let text = value.to_str().map_err(|_| Outcome::InvalidToken);
    Some(text.and_then(|t| RdmaToken::parse(t).map_err(|e| Outcome::of_token_error(&e))))
}

/// The checksum the request asks the server to validate ([`checksum::requested`] over the
/// headers). `Ok(None)`: none.
///
/// # Errors
/// As [`checksum::requested`]; a header whose value is not visible ASCII is malformed.
/// Answer [`Outcome::of_checksum_error`].
pub fn request_checksum(headers: &HeaderMap) -> Result<Option<Digest>, ChecksumError> {
    // A value that is not text reads as one no algorithm accepts: refused as malformed.
    checksum::requested(|name| headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}")))
}

/// The checksum a GET's response carries, for a server: the CRC64NVME of `len` bytes at `at`
/// of `region` when the request asks for it ([`checksum_mode`]), read in place. Call it only
/// once no transfer writes that range (an object's stored region).
pub fn response_checksum<B: RegionBuffer>(
    headers: &HeaderMap,
    region: &Mr<B>,
    at: usize,
    len: usize,
) -> Option<Digest> {
    // A range outside the region (refused by of_region) has no checksum to send.
    checksum_mode(headers)
        .then(|| Digest::of_region(Algorithm::Crc64Nvme, region, at, len).ok())
        .flatten()
}

/// An RDMA PUT's token and the checksum its bytes must match, for a server: None when the
/// request carries no token (plain S3); `Some(Err(outcome))`, to answer before any byte
/// moves, when the token ([`request_token`]) or the checksum ([`request_checksum`]) is
/// malformed, the token's refusal first.
pub fn put_request(headers: &HeaderMap) -> Option<Result<(RdmaToken, Option<Digest>), Outcome>> {
    let token = request_token(headers)?;
    Some(token.and_then(|t| match request_checksum(headers) {
        Ok(sum) => Ok((t, sum)),
        Err(e) => Err(Outcome::of_checksum_error(&e)),
    }))
}

/// The headers of a request that moves bytes by RDMA, for a client: `token` in
/// `x-amz-rdma-token`, and `checksum` in its algorithm's header when given (a PUT's bytes'),
/// else `x-amz-checksum-mode: ENABLED` (a GET asks for its range's).
///
/// # Errors
/// As [`token_header`]: EINVAL when the token cannot be written in its form.
pub fn rdma_headers(token: &RdmaToken, checksum: Option<Digest>) -> crate::Result<HeaderMap> {
    let mut headers = HeaderMap::new();
    headers.insert(protocol::TOKEN_HEADER, token_header(token)?);
    match checksum {
        // Base64: always a header value.
        Some(d) => {
            if let Ok(v) = HeaderValue::from_str(&d.header_value()) {
                headers.insert(d.algorithm.header(), v);
            }
        }
        None => {
            headers.insert(protocol::CHECKSUM_MODE_HEADER, HeaderValue::from_static("ENABLED"));
        }
    }
    Ok(headers)
}

/// Whether a GET asks for its checksum in the response (`x-amz-checksum-mode: ENABLED`).
pub fn checksum_mode(headers: &HeaderMap) -> bool {
    protocol::checksum_mode_enabled(
        headers
            .get(protocol::CHECKSUM_MODE_HEADER)
            .and_then(|v| v.to_str().ok()),
    )
}

/// A byte range of an object: `first..=last` of `total` bytes (`Content-Range: bytes
/// first-last/total`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContentRange {
    /// The first byte.
    pub first: u64,
    /// The last byte (inclusive).
    pub last: u64,
    /// The object's length.
    pub total: u64,
}

impl ContentRange {
    /// How many bytes it covers.
    pub fn len(&self) -> u64 {
        self.last - self.first + 1
    }

    /// Never: a range covers at least one byte.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// A `Range` header this server cannot satisfy: answer 416 (S3's `InvalidRange`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeNotSatisfiable {
    /// The header's value, as received (lossy).
    pub value: String,
    /// The object's length.
    pub total: u64,
}

impl fmt::Display for RangeNotSatisfiable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Range {:?} is not one satisfiable byte range of an object of {} bytes (one range: bytes=a-b, bytes=a-, bytes=-n)",
            self.value, self.total
        )
    }
}

impl std::error::Error for RangeNotSatisfiable {}

/// The request's `Range` of an object of `total` bytes (RFC 9110 14.1.2, one range, as S3
/// serves): `bytes=a-b` (b past the end is cut to it), `bytes=a-`, `bytes=-n` (the last n).
/// `Ok(None)`: no header, the whole object.
///
/// # Errors
/// [`RangeNotSatisfiable`] for a malformed header, several ranges, a first byte past the end,
/// `bytes=-0`, or any range of an empty object: answer 416.
pub fn range(headers: &HeaderMap, total: u64) -> Result<Option<ContentRange>, RangeNotSatisfiable> {
    let Some(value) = headers.get(RANGE) else {
        return Ok(None);
    };
    let refused = || RangeNotSatisfiable {
        value: String::from_utf8_lossy(value.as_bytes()).into_owned(),
        total,
    };
    let text = value.to_str().map_err(|_| refused())?;
    let (a, b) = text
        .trim()
        .strip_prefix("bytes=")
        .and_then(|r| r.split_once('-'))
        .ok_or_else(refused)?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let last = total.checked_sub(1).ok_or_else(refused)?;
    let (first, end) = match (digits(a), digits(b)) {
        (true, true) => (
            a.parse::<u64>().map_err(|_| refused())?,
            b.parse::<u64>().unwrap_or(u64::MAX).min(last),
        ),
        (true, false) if b.is_empty() => (a.parse::<u64>().map_err(|_| refused())?, last),
        (false, true) if a.is_empty() => {
            let n = b.parse::<u64>().unwrap_or(u64::MAX);
            if n == 0 {
                return Err(refused());
            }
            (total.saturating_sub(n), last)
        }
        _ => return Err(refused()),
    };
    if first > end {
        return Err(refused());
    }
    Ok(Some(ContentRange {
        first,
        last: end,
        total,
    }))
}

/// The response the protocol's answer `r` gives (see [`protocol::respond`]): its status,
/// `x-amz-rdma-reply` and `x-amz-rdma-bytes-transferred` as the answer has them, and when it
/// succeeded `Content-Range` (`range`) and the checksum header (`checksum`: a PUT's, echoed, or
/// a GET's range). The body: `object()` when the answer says the object goes in it (a GET
/// served over HTTP), the S3 error XML for an error (`Content-Type: application/xml`), else
/// empty.
pub fn response<B: From<Vec<u8>>>(
    r: &Response,
    range: Option<ContentRange>,
    checksum: Option<Digest>,
    object: impl FnOnce() -> Vec<u8>,
) -> http::Response<B> {
    let mut headers = HeaderMap::new();
    if let Some(reply) = r.reply {
        headers.insert(protocol::REPLY_HEADER, HeaderValue::from_static(reply));
    }
    if let Some(n) = r.bytes_transferred {
        headers.insert(protocol::BYTES_TRANSFERRED_HEADER, HeaderValue::from(n));
    }
    let ok = (200..300).contains(&r.status);
    if let (Some(c), true) = (range, ok) {
        let value = format!("bytes {}-{}/{}", c.first, c.last, c.total);
        // Digits, '-', '/' and a space: always a header value.
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert(CONTENT_RANGE, v);
        }
    }
    if let (Some(d), true) = (checksum, ok) {
        // Base64: always a header value.
        if let Ok(v) = HeaderValue::from_str(&d.header_value()) {
            headers.insert(d.algorithm.header(), v);
        }
    }
    let body = match (r.body, r.error) {
        (Body::Object, _) => object(),
        (Body::Error, Some((code, message))) => {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/xml"));
            protocol::error_xml(code, message).into_bytes()
        }
        _ => Vec::new(),
    };
    let mut resp = http::Response::new(B::from(body));
    // respond() gives statuses 200..=599 only.
    *resp.status_mut() = StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    *resp.headers_mut() = headers;
    resp
}

/// The response to `outcome`, the result of a request moving bytes `direction` (with
/// `range` when it named one): [`protocol::respond`] then [`response`], for a server whose
/// handler holds the outcome.
///
/// ```
/// use mlx5dv::s3::http::answer;
/// use mlx5dv::s3::protocol::Outcome;
/// use mlx5dv::s3::Direction;
///
/// let resp: http::Response<Vec<u8>> = answer(Direction::Put, None, Outcome::Busy, None, Vec::new);
/// assert_eq!(resp.status(), 503);
/// assert!(resp.headers().get("x-amz-rdma-reply").is_none(), "S3's SlowDown, no reply");
/// ```
pub fn answer<B: From<Vec<u8>>>(
    direction: Direction,
    range: Option<ContentRange>,
    outcome: Outcome,
    checksum: Option<Digest>,
    object: impl FnOnce() -> Vec<u8>,
) -> http::Response<B> {
    response(
        &protocol::respond(direction, range.is_some(), outcome),
        range,
        checksum,
        object,
    )
}

/// A token as the value of `x-amz-rdma-token` ([`protocol::TOKEN_HEADER`]), for a client.
///
/// # Errors
/// EINVAL when the token cannot be written in its form ([`RdmaToken::format`]'s error).
pub fn token_header(token: &RdmaToken) -> crate::Result<HeaderValue> {
    let text = token
        .format()
        .map_err(|e| crate::Error::invalid("x-amz-rdma-token", e.to_string()))?;
    HeaderValue::from_str(&text)
        .map_err(|_| crate::Error::invalid("x-amz-rdma-token", "the written token is not a header value"))
}

/// What a response to a request that carried a token says, for a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The `x-amz-rdma-reply`.
    pub reply: Reply,
    /// What the spec has the client do now ([`ClientAction::of`]).
    pub action: ClientAction,
    /// `x-amz-rdma-bytes-transferred`, if present.
    pub bytes_transferred: Option<u64>,
    /// The checksum header (CRC64NVME or CRC32C), if present.
    pub checksum: Option<Digest>,
}

impl Answer {
    /// Whether the server says all `len` bytes moved by RDMA: a 2xx status with the reply
    /// `Moved` ([`ClientAction::Done`]) and `x-amz-rdma-bytes-transferred` equal to `len` (a
    /// server that leaves the count out, or counts other bytes, has not said so).
    pub fn moved(&self, len: u64) -> bool {
        self.action == ClientAction::Done && self.bytes_transferred == Some(len)
    }
}

/// Why a response could not be read ([`read_answer`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswerError {
    /// The reply or bytes-transferred header is malformed.
    Reply(ReplyError),
    /// A checksum header is malformed.
    Checksum(ChecksumError),
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnswerError::Reply(e) => write!(f, "the server's answer: {e}"),
            AnswerError::Checksum(e) => write!(f, "the server's answer: {e}"),
        }
    }
}

impl std::error::Error for AnswerError {}

/// Reads the answer to a request moving bytes `direction` that carried a token: the status,
/// reply, the spec's action, the bytes moved and the checksum. The response is untrusted input:
/// each header is read strictly.
///
/// # Errors
/// [`AnswerError::Reply`] for a reply or byte count that is not the spec's (or not text),
/// [`AnswerError::Checksum`] for a checksum header that is not canonical base64 of its width.
pub fn read_answer(direction: Direction, status: StatusCode, headers: &HeaderMap) -> Result<Answer, AnswerError> {
    let text = |name: &'static str| -> Result<Option<&str>, ReplyError> {
        headers
            .get(name)
            .map(|v| {
                v.to_str().map_err(|_| ReplyError {
                    header: name,
                    why: "the value is not visible ASCII".into(),
                })
            })
            .transpose()
    };
    let reply = Reply::parse(text(protocol::REPLY_HEADER).map_err(AnswerError::Reply)?).map_err(AnswerError::Reply)?;
    let bytes_transferred = text(protocol::BYTES_TRANSFERRED_HEADER)
        .map_err(AnswerError::Reply)?
        .map(protocol::parse_bytes_transferred)
        .transpose()
        .map_err(AnswerError::Reply)?;
    let mut checksum = None;
    for a in Algorithm::ALL {
        if let Some(v) = headers.get(a.header()) {
            let d = Digest::parse(a, v.to_str().unwrap_or("\u{fffd}")).map_err(AnswerError::Checksum)?;
            checksum.get_or_insert(d);
        }
    }
    Ok(Answer {
        status: status.as_u16(),
        reply,
        action: ClientAction::of(direction, status.as_u16(), reply),
        bytes_transferred,
        checksum,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn cr(first: u64, last: u64, total: u64) -> Option<ContentRange> {
        Some(ContentRange { first, last, total })
    }

    #[test]
    fn ranges_are_read_as_rfc_9110_has_them_and_unsatisfiable_ones_refused() {
        let r = |v: &str, total| range(&headers(&[("range", v)]), total);
        assert_eq!(range(&HeaderMap::new(), 10), Ok(None));
        assert_eq!(r("bytes=0-0", 10), Ok(cr(0, 0, 10)));
        assert_eq!(r("bytes=2-5", 10), Ok(cr(2, 5, 10)));
        assert_eq!(r("bytes=2-500", 10), Ok(cr(2, 9, 10)), "cut to the end");
        assert_eq!(r("bytes=7-", 10), Ok(cr(7, 9, 10)));
        assert_eq!(r("bytes=-3", 10), Ok(cr(7, 9, 10)));
        assert_eq!(r("bytes=-30", 10), Ok(cr(0, 9, 10)), "more than the object: all of it");
        assert_eq!(r("bytes=0-99999999999999999999999", 10), Ok(cr(0, 9, 10)));
        for bad in [
            "bytes=10-",
            "bytes=5-2",
            "bytes=-0",
            "bytes=-",
            "bytes=a-b",
            "bytes=1-2,4-5",
            "items=1-2",
            "bytes=+1-2",
            "bytes= 1-2",
            "bytes=99999999999999999999999-",
        ] {
            assert!(r(bad, 10).is_err(), "{bad}");
        }
        assert!(r("bytes=0-0", 0).is_err(), "an empty object has no byte range");
        let e = r("bytes=5-2", 10).unwrap_err();
        assert!(
            e.to_string().contains("bytes=5-2") && e.to_string().contains("10 bytes"),
            "{e}"
        );
    }

    #[test]
    fn a_request_token_is_none_absent_refused_invalid_and_parsed_otherwise() {
        assert_eq!(request_token(&HeaderMap::new()), None);
        let got = request_token(&headers(&[(protocol::TOKEN_HEADER, "0:nonsense")]));
        assert_eq!(got.map(|r| r.err()), Some(Some(Outcome::InvalidToken)));
        let mut h = HeaderMap::new();
        h.insert(protocol::TOKEN_HEADER, HeaderValue::from_bytes(b"\xff\xfe").unwrap());
        assert_eq!(request_token(&h).map(|r| r.err()), Some(Some(Outcome::InvalidToken)));
    }

    #[test]
    fn a_request_checksum_is_read_strictly() {
        let sum = Digest::of(Algorithm::Crc64Nvme, b"abc");
        let h = headers(&[(Algorithm::Crc64Nvme.header(), &sum.header_value())]);
        assert_eq!(request_checksum(&h), Ok(Some(sum)));
        assert_eq!(request_checksum(&HeaderMap::new()), Ok(None));
        assert!(request_checksum(&headers(&[(Algorithm::Crc64Nvme.header(), "AAAA")])).is_err());
        let mut h = HeaderMap::new();
        h.insert(
            Algorithm::Crc32c.header(),
            HeaderValue::from_bytes(b"\xffAAAAA==").unwrap(),
        );
        assert!(
            request_checksum(&h).is_err(),
            "not text: malformed, never taken as absent"
        );
        assert!(checksum_mode(&headers(&[(protocol::CHECKSUM_MODE_HEADER, "enabled")])));
        assert!(!checksum_mode(&HeaderMap::new()));
    }

    #[test]
    fn the_response_carries_the_answers_status_headers_and_body() {
        let sum = Digest::of(Algorithm::Crc64Nvme, b"0123456789");
        let moved = protocol::respond(Direction::Get, true, Outcome::Moved { bytes: 10 });
        let resp: http::Response<Vec<u8>> = response(&moved, cr(0, 9, 20), Some(sum), || unreachable!());
        assert_eq!(resp.status(), 206);
        assert_eq!(resp.headers()[protocol::REPLY_HEADER], "206");
        assert_eq!(resp.headers()[protocol::BYTES_TRANSFERRED_HEADER], "10");
        assert_eq!(resp.headers()[CONTENT_RANGE], "bytes 0-9/20");
        assert_eq!(
            resp.headers()[Algorithm::Crc64Nvme.header()],
            sum.header_value().as_str()
        );
        assert!(resp.body().is_empty());
        // Declined GET: the object in the body.
        let declined = protocol::respond(Direction::Get, false, Outcome::Declined);
        let resp: http::Response<Vec<u8>> = response(&declined, None, None, || b"object".to_vec());
        assert_eq!(
            (resp.status(), resp.body().as_slice()),
            (StatusCode::OK, &b"object"[..])
        );
        // An error: its XML, no range or checksum even if given.
        let bad = protocol::respond(Direction::Put, false, Outcome::InvalidToken);
        let resp: http::Response<Vec<u8>> = response(&bad, cr(0, 9, 20), Some(sum), || unreachable!());
        assert_eq!(resp.status(), 400);
        assert_eq!(resp.headers()[CONTENT_TYPE], "application/xml");
        assert!(resp.headers().get(CONTENT_RANGE).is_none());
        assert!(resp.headers().get(Algorithm::Crc64Nvme.header()).is_none());
        let xml = String::from_utf8(resp.into_body()).unwrap();
        assert!(xml.contains(protocol::INVALID_TOKEN), "{xml}");
    }

    #[test]
    fn a_clients_reading_of_the_answer_follows_the_spec_and_refuses_malformed_headers() {
        let sum = Digest::of(Algorithm::Crc64Nvme, b"x");
        let h = headers(&[
            (protocol::REPLY_HEADER, "200"),
            (protocol::BYTES_TRANSFERRED_HEADER, "4096"),
            (Algorithm::Crc64Nvme.header(), &sum.header_value()),
        ]);
        let a = read_answer(Direction::Put, StatusCode::OK, &h).unwrap();
        assert_eq!(
            a,
            Answer {
                status: 200,
                reply: Reply::Moved(200),
                action: ClientAction::Done,
                bytes_transferred: Some(4096),
                checksum: Some(sum),
            }
        );
        let busy = read_answer(Direction::Get, StatusCode::SERVICE_UNAVAILABLE, &HeaderMap::new()).unwrap();
        assert_eq!((busy.reply, busy.action), (Reply::Absent, ClientAction::Retry));
        let declined = read_answer(
            Direction::Put,
            StatusCode::OK,
            &headers(&[(protocol::REPLY_HEADER, "501")]),
        )
        .unwrap();
        assert_eq!(declined.action, ClientAction::SendBody);
        for (k, v) in [
            (protocol::REPLY_HEADER, "2OO"),
            (protocol::BYTES_TRANSFERRED_HEADER, "+12"),
            (Algorithm::Crc32c.header(), "not base64"),
        ] {
            assert!(
                read_answer(Direction::Get, StatusCode::OK, &headers(&[(k, v)])).is_err(),
                "{k}: {v}"
            );
        }
    }

    #[test]
    fn a_put_request_is_its_token_and_checksum_and_either_malformed_is_the_outcome_to_answer() {
        let text = "00007f3a5c000000:00100000:001f2e97:0000:007a03:1:00000000000000000000ffffc0a8012a";
        let token = RdmaToken::parse(text).unwrap();
        let sum = Digest::of(Algorithm::Crc64Nvme, b"x");
        let crc = Algorithm::Crc64Nvme.header();
        assert_eq!(put_request(&headers(&[(crc, &sum.header_value())])), None);
        assert_eq!(
            put_request(&headers(&[(protocol::TOKEN_HEADER, text), (crc, &sum.header_value())])),
            Some(Ok((token, Some(sum))))
        );
        assert_eq!(
            put_request(&headers(&[(protocol::TOKEN_HEADER, text)])),
            Some(Ok((token, None)))
        );
        let bad_sum = put_request(&headers(&[(protocol::TOKEN_HEADER, text), (crc, "not base64")]));
        assert!(
            matches!(bad_sum, Some(Err(Outcome::InvalidChecksum { .. }))),
            "{bad_sum:?}"
        );
        let bad_token = put_request(&headers(&[(protocol::TOKEN_HEADER, "x"), (crc, "not base64")]));
        assert_eq!(bad_token, Some(Err(Outcome::InvalidToken)), "the token's refusal first");

        // A client's headers carry the token and either the checksum or the checksum mode,
        // which a server reads back as sent.
        let put = rdma_headers(&token, Some(sum)).unwrap();
        assert_eq!(put_request(&put), Some(Ok((token, Some(sum)))));
        assert!(!checksum_mode(&put));
        let get = rdma_headers(&token, None).unwrap();
        assert_eq!(request_token(&get), Some(Ok(token)));
        assert!(checksum_mode(&get) && request_checksum(&get) == Ok(None));
    }

    #[test]
    fn an_answer_says_moved_only_for_a_done_reply_counting_exactly_the_bytes_asked_for() {
        let read = |status: u16, pairs: &[(&'static str, &str)]| {
            read_answer(Direction::Get, StatusCode::from_u16(status).unwrap(), &headers(pairs)).unwrap()
        };
        let moved = read(
            206,
            &[
                (protocol::REPLY_HEADER, "206"),
                (protocol::BYTES_TRANSFERRED_HEADER, "10"),
            ],
        );
        assert!(moved.moved(10));
        assert!(!moved.moved(11), "another count");
        assert!(!read(206, &[(protocol::REPLY_HEADER, "206")]).moved(10), "no count");
        let failed = read(
            500,
            &[
                (protocol::REPLY_HEADER, "500"),
                (protocol::BYTES_TRANSFERRED_HEADER, "10"),
            ],
        );
        assert!(!failed.moved(10), "a failure");
        assert!(!read(200, &[(protocol::REPLY_HEADER, "501")]).moved(0), "declined");
    }

    #[test]
    fn a_token_header_is_the_tokens_written_form() {
        // The reference's seven fields (NVIDIA's sample token, s3/token.rs's tests).
        let text = "00007f3a5c000000:00100000:001f2e97:0000:007a03:1:00000000000000000000ffffc0a8012a";
        let token = RdmaToken::parse(text).unwrap();
        let v = token_header(&token).unwrap();
        assert_eq!(v.to_str().unwrap(), text);
        assert_eq!(
            request_token(&headers(&[(protocol::TOKEN_HEADER, text)])),
            Some(Ok(token))
        );
    }
}
