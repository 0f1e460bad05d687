//! An S3 server on s3s with an RDMA data path (S3 over RDMA, NVIDIA's `RDMA_PROTOCOL_SPEC.md`
//! v1.0): objects in memory, each in memory registered for it, so a GET's bytes are written
//! to the client straight from the object and a PUT's land in the object's own memory (zero
//! copy). PUT, GET, ranged GET, HEAD, DELETE, multipart upload (a token per part), CRC64NVME
//! and CRC32C checksums, SigV4 (s3s verifies it; the token is a signed header), every decline
//! and error as the spec says (`mlx5dv::s3::protocol`).
//!
//! What any HTTP client can make it hold is bounded (`limits`, `--help` gives the flags and
//! their defaults): multipart uploads open at once, bytes held by their parts, bytes being
//! received at once (RDMA PUTs' registrations and bodies); past a bound the answer is S3's
//! `503 SlowDown` (an S3 client backs off and sends it again), and `400 EntityTooLarge` for
//! a request larger than the bound itself. The bytes of stored objects are bounded too
//! (`--max-stored-bytes`, completed multipart objects included): a PUT or a
//! CompleteMultipartUpload that would pass it is refused before any byte moves or is
//! registered, `507 XMinioStorageFull` as MinIO answers a full drive (see [`storage_full`]
//! for why not SlowDown); a DELETE or an overwrite gives the room back. An upload no request
//! named for `--upload-idle-secs` is abandoned ([`OpenUploads`]): aborted, its room given
//! back, when its bounds are full or a request names it (`404 NoSuchUpload`), so abandoned
//! uploads lock other clients out of multipart for that long at most, not for good. A GET's
//! body holds its object (and its room) while it is read; a client that reads nothing for
//! `--send-timeout-secs` has its connection closed ([`SendTimeout`]) and the room comes back.
//!
//! Multipart upload ids are 128 bits from the OS (`/dev/urandom`), and an upload is found by
//! its bucket, key and id together: another client can neither guess an id nor use one under
//! another key; either is S3's `404 NoSuchUpload`. S3's multipart rules are kept: part numbers
//! 1..=10000 (`400 InvalidArgument`), every part but the last at least 5 MiB, the list of a
//! CompleteMultipartUpload in ascending order and naming uploaded parts by their ETags
//! (`EntityTooSmall`, `InvalidPartOrder`, `InvalidPart`; the upload stays open to be
//! completed again). A GET's body is read from the object a chunk at a time, never copied
//! whole.
//!
//! ```text
//! s3s_server [--listen ADDR] [--device NAME | --rdma-ip IP] [--sl N] [--traffic-class N]
//!            [--access-key K --secret-key S] [--key HEX] [--clients N]
//!            [--max-uploads N] [--max-part-bytes B] [--max-receiving-bytes B]
//!            [--max-stored-bytes B] [--upload-idle-secs S] [--send-timeout-secs S]
//! ```
//! `--rdma-ip` picks the device, port and GID by the address (`mlx5dv::open_by_ip`), as
//! cuObject's `rdma_dev_addr_list` and libs3rdma's `server_init(ip)` do; `--sl` and
//! `--traffic-class` are the path settings of its requests (`ExecutorConfig::path`).
//! Under `scripts/soft-mlx5 --nodes N` it publishes its URL in the rendezvous directory and
//! serves until a client sends `DELETE /<bucket>/goodbye-<n>` for each of `--clients` clients.

use mlx5dv::s3::checksum::{self, Digest};
use mlx5dv::s3::http as s3http;
use mlx5dv::s3::protocol::{self, Body as ReplyBody, Outcome};
use mlx5dv::s3::{AsyncConfig, AsyncExecutor, Direction, Executor, ExecutorConfig, RdmaToken};
use mlx5dv::{Access, Mr, Pd};
use s3s::dto::*;
use s3s::{S3Error, S3ErrorCode, S3Request, S3Response, S3Result, S3};
use std::collections::hash_map::{Entry, OccupiedEntry};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "../bounds.rs"]
mod bounds;
#[path = "../../../../mlx5dv/examples/common/s3.rs"]
mod common;
#[path = "s3s_server/limits.rs"]
mod limits;
#[path = "s3s_server/send_timeout.rs"]
mod send_timeout;

use bounds::{
    Bounds, MAX_PART_BYTES, MAX_RECEIVING_BYTES, MAX_STORED_BYTES, MAX_UPLOADS, SEND_TIMEOUT_SECS, UPLOAD_IDLE_SECS,
};
use limits::{Budget, Held, Refused};
use send_timeout::SendTimeout;

/// The largest object or part this server takes over RDMA (a token's buffer): larger ones are
/// declined (the client sends them in the body or in parts).
const MAX_RDMA: u64 = 64 << 20;
/// S3's largest single PUT or part (5 GiB): a larger body is `400 EntityTooLarge`.
const MAX_BODY: u64 = 5 << 30;
/// S3's part numbers: 1 to 10,000.
const PART_NUMBERS: std::ops::RangeInclusive<i32> = 1..=10_000;
/// S3's smallest part, but for the last one (5 MiB).
const MIN_PART: usize = 5 << 20;
/// The chunk a GET's body, a checksum and a copy read from an object at a time.
const CHUNK: usize = 64 << 10;

/// An object: its bytes in memory registered for it, shared by the GETs reading it.
struct Object {
    data: Arc<Mr<Vec<u8>>>,
    etag: String,
    crc64: Digest,
    modified: Timestamp,
    content_type: Option<String>,
    /// Its bytes, taken from `--max-part-bytes` (a part) or `--max-stored-bytes` (an
    /// object) for as long as it is held: given back when the last holder (the map, a GET
    /// reading it) lets it go.
    _held: Held,
}

/// A multipart upload's parts, by number.
struct Upload {
    parts: BTreeMap<i32, Arc<Object>>,
    /// When a request last named it: its creation, a part (its start and its end), a
    /// CompleteMultipartUpload refused.
    last: Instant,
    /// Its parts being received now: while one is, the upload is not idle.
    receiving: u32,
    /// Its place among `--max-uploads`, given back when it is completed or aborted.
    _slot: Held,
}

impl Upload {
    fn new(slot: Held, now: Instant) -> Upload {
        Upload {
            parts: BTreeMap::new(),
            last: now,
            receiving: 0,
            _slot: slot,
        }
    }

    /// Whether it is abandoned at `now`: no request named it for `idle`, and no part of it is
    /// being received.
    fn idle(&self, now: Instant, idle: Duration) -> bool {
        self.receiving == 0 && now.saturating_duration_since(self.last) >= idle
    }
}

/// What finds an open multipart upload: its object's name (`bucket/key`) and its id. Both
/// together, so that an id is no use under another bucket or key (S3's NoSuchUpload).
type UploadKey = (String, String);

/// The open multipart uploads. One that no request named for `idle` (`--upload-idle-secs`)
/// is abandoned, as S3's lifecycle rule AbortIncompleteMultipartUpload and MinIO's stale
/// upload cleanup abort one: a request naming it finds it gone (NoSuchUpload, its room given
/// back then), and when `--max-uploads` or `--max-part-bytes` is full every abandoned upload
/// is aborted before a request is refused ([`OpenUploads::abort_idle`]). No timer: an honest
/// server pays an `Instant` a request.
struct OpenUploads {
    map: Mutex<HashMap<UploadKey, Upload>>,
    idle: Duration,
}

type Uploads = Arc<OpenUploads>;

impl OpenUploads {
    fn new(idle: Duration) -> Uploads {
        Arc::new(OpenUploads {
            map: Mutex::default(),
            idle,
        })
    }

    /// Opens upload `at` with its place among `--max-uploads`.
    fn create(&self, at: UploadKey, slot: Held) {
        self.map.lock().unwrap().insert(at, Upload::new(slot, Instant::now()));
    }

    /// `f` on upload `at`, under the map's lock, the request counted as the upload's
    /// activity. NoSuchUpload if there is none, or if it is abandoned (then aborted: its
    /// place and its parts' bytes given back, out of the lock).
    fn with<R>(
        &self,
        at: &UploadKey,
        f: impl FnOnce(OccupiedEntry<'_, UploadKey, Upload>) -> S3Result<R>,
    ) -> S3Result<R> {
        self.with_at(at, Instant::now(), f)
    }

    fn with_at<R>(
        &self,
        at: &UploadKey,
        now: Instant,
        f: impl FnOnce(OccupiedEntry<'_, UploadKey, Upload>) -> S3Result<R>,
    ) -> S3Result<R> {
        let mut map = self.map.lock().unwrap();
        let Entry::Occupied(mut upload) = map.entry(at.clone()) else {
            return Err(no_such_upload());
        };
        if upload.get().idle(now, self.idle) {
            let abandoned = upload.remove();
            drop(map);
            drop(abandoned);
            return Err(no_such_upload());
        }
        upload.get_mut().last = now;
        f(upload)
    }

    /// A part of upload `at` starts to be received: until the [`Receiving`] is dropped (the
    /// part stored, refused, or its request dropped) the upload is not idle.
    fn receiving<'a>(&'a self, at: &'a UploadKey) -> S3Result<Receiving<'a>> {
        self.with(at, |mut upload| {
            upload.get_mut().receiving += 1;
            Ok(Receiving { uploads: self, at })
        })
    }

    /// Aborts every abandoned upload at `now` (their places and parts' bytes given back, out
    /// of the lock): one pass over the uploads, made only when a bound is full. How many.
    fn abort_idle(&self, now: Instant) -> usize {
        let abandoned: Vec<_> = {
            let mut map = self.map.lock().unwrap();
            map.extract_if(|_, u| u.idle(now, self.idle)).collect()
        };
        abandoned.len()
    }
}

/// A part of an upload being received (see [`OpenUploads::receiving`]).
struct Receiving<'a> {
    uploads: &'a OpenUploads,
    at: &'a UploadKey,
}

impl Drop for Receiving<'_> {
    fn drop(&mut self) {
        if let Some(upload) = self.uploads.map.lock().unwrap().get_mut(self.at) {
            upload.receiving -= 1;
            upload.last = Instant::now();
        }
    }
}

/// The stored objects, by name (`bucket/key`).
type Objects = Arc<Mutex<HashMap<String, Arc<Object>>>>;

/// The bounds on what clients can make the server hold.
#[derive(Clone)]
struct Limits {
    uploads: Arc<Budget>,
    part_bytes: Arc<Budget>,
    receiving: Arc<Budget>,
    stored: Arc<Budget>,
}

struct Server {
    exec: AsyncExecutor,
    pd: Pd,
    objects: Objects,
    uploads: Uploads,
    limits: Limits,
    goodbyes: AtomicU64,
    clients: u64,
    /// Notified once every client said goodbye.
    done: Arc<tokio::sync::Notify>,
}

fn name(bucket: &str, key: &str) -> String {
    format!("{bucket}/{key}")
}

/// Where upload `id` of `key` of `bucket` is found.
fn upload_key(bucket: &str, key: &str, id: &str) -> UploadKey {
    (name(bucket, key), id.to_owned())
}

/// A new multipart upload id: 128 bits from the OS's generator, in hex, so that no client
/// can guess another's (S3's ids are unguessable too).
///
/// # Errors
/// `500 InternalError` when `/dev/urandom` cannot be read.
fn new_upload_id() -> S3Result<String> {
    use std::io::Read as _;
    let mut bits = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bits))
        .map_err(|e| {
            s3_error(
                "InternalError",
                &format!("reading /dev/urandom for an upload id: {e}"),
                500,
            )
        })?;
    Ok(hex(&bits))
}

fn s3_error(code: &str, message: &str, status: u16) -> S3Error {
    let mut e = S3Error::with_message(
        S3ErrorCode::from_bytes(code.as_bytes()).unwrap_or(S3ErrorCode::Custom(code.to_owned().into())),
        message.to_owned(),
    );
    e.set_status_code(http_status(status));
    e
}

fn http_status(code: u16) -> http::StatusCode {
    http::StatusCode::from_u16(code).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR)
}

fn header<'a, T>(req: &'a S3Request<T>, name: &str) -> Option<&'a str> {
    req.headers.get(name).and_then(|v| v.to_str().ok())
}

/// The spec's answer to a request with a token, for an outcome other than success: an S3
/// error (status, code, no reply header) or, for a declined or failed GET and a declined PUT,
/// the headers to add to an ordinary answer.
enum Answer {
    /// Answer normally, adding `x-amz-rdma-reply` (and for a GET, the object in the body).
    Reply(protocol::Response),
    Error(S3Error),
}

fn answer(direction: Direction, ranged: bool, outcome: Outcome) -> Answer {
    let r = protocol::respond(direction, ranged, outcome);
    match (r.body, r.error, r.reply) {
        (ReplyBody::Error, Some((code, message)), None) => Answer::Error(s3_error(code, message, r.status)),
        _ => Answer::Reply(r),
    }
}

fn reply_headers(r: &protocol::Response) -> http::HeaderMap {
    let mut h = http::HeaderMap::new();
    if let Some(reply) = r.reply {
        h.insert(
            protocol::REPLY_HEADER,
            reply.parse().expect("a reply is a header value"),
        );
    }
    if let Some(n) = r.bytes_transferred {
        h.insert(protocol::BYTES_TRANSFERRED_HEADER, n.into());
    }
    h
}

/// The digest of `range` of a region's bytes, read where they lie (no copy): the object's
/// region, which no transfer writes once its PUT resolved.
fn digest_of(mr: &Mr<Vec<u8>>, range: std::ops::Range<usize>, algorithm: checksum::Algorithm) -> Digest {
    Digest::of_region(algorithm, mr, range.start, range.len()).expect("a range inside the region")
}

/// A GET's body: `range` of the object, read from its memory a chunk at a time as the
/// connection takes it, so that a GET holds a chunk, never a copy of the object. The body
/// holds the object itself, not only its memory: its room in `--max-stored-bytes` stays
/// taken while a client reads it, however slowly, so a DELETE or an overwrite during a
/// stalled GET does not give back room whose memory is still pinned.
fn body_of(obj: &Arc<Object>, range: std::ops::Range<usize>) -> StreamingBlob {
    let obj = Arc::clone(obj);
    let end = range.end;
    let chunks = range.step_by(CHUNK).map(move |at| {
        let mut v = vec![0u8; CHUNK.min(end - at)];
        obj.data.read(at, &mut v).expect("inside the region");
        Ok::<_, std::io::Error>(bytes::Bytes::from(v))
    });
    StreamingBlob::wrap(futures_util::stream::iter(chunks))
}

/// Copies all of `from` into `to` at `at`, a chunk at a time.
fn copy_into(to: &mut Mr<Vec<u8>>, at: usize, from: &Mr<Vec<u8>>) {
    let mut chunk = vec![0u8; CHUNK.min(from.len())];
    let mut done = 0;
    while done < from.len() {
        let n = chunk.len().min(from.len() - done);
        from.read(done, &mut chunk[..n]).expect("inside the region");
        to.write(at + done, &chunk[..n]).expect("inside the region");
        done += n;
    }
}

/// Takes `n` from `budget` for a request: past the whole limit S3's `400 EntityTooLarge`
/// (sending it again cannot help), past what is free now S3's `503 SlowDown` (an S3 client
/// backs off and sends it again; `then` says what frees room).
fn take(budget: &Arc<Budget>, n: u64, then: &str) -> S3Result<Held> {
    budget.take(n).map_err(|r| match r {
        Refused::TooLarge => too_large(budget, n),
        Refused::Full { used } => s3_error(
            protocol::SLOW_DOWN,
            &format!(
                "Please reduce your request rate: {} are limited to {} ({}), {used} are taken; {then}.",
                budget.what, budget.limit, budget.flag
            ),
            503,
        ),
    })
}

/// A request of `n` larger than all of `budget`: S3's `400 EntityTooLarge`, naming the bound.
fn too_large(budget: &Budget, n: u64) -> S3Error {
    s3_error(
        "EntityTooLarge",
        &format!(
            "Your proposed upload exceeds the maximum allowed size: {n} bytes, and {} are limited to {} ({}).",
            budget.what, budget.limit, budget.flag
        ),
        400,
    )
}

/// MinIO's code for a full store (S3 has none: it does not fill).
const STORAGE_FULL: &str = "XMinioStorageFull";

/// Takes an object's `n` bytes from `--max-stored-bytes`: past the whole bound `400
/// EntityTooLarge`, past what is free now `507 XMinioStorageFull`, MinIO's answer when its
/// drives are full. Not `503 SlowDown`: stored room comes back only when a client DELETEs or
/// overwrites an object, not with time, so an S3 client's backoff and retries (it retries a
/// 503, not a 507) would only repeat the refusal; a 507 says at once that objects must go.
/// A request with a token is answered the same, without the reply header (spec 7.1: an HTTP
/// error, an ordinary S3 error to the client) and before any byte moves: declining it would
/// only have the client send the same bytes in the body to be refused again.
fn storage_full(budget: &Arc<Budget>, n: u64) -> S3Result<Held> {
    budget.take(n).map_err(|r| match r {
        Refused::TooLarge => too_large(budget, n),
        Refused::Full { used } => s3_error(
            STORAGE_FULL,
            &format!(
                "Storage reached its limit: an object of {n} bytes does not fit; {} are limited to {} ({}), {used} are taken. Delete objects, or raise {}.",
                budget.what, budget.limit, budget.flag, budget.flag
            ),
            507,
        ),
    })
}

const UPLOADS_FREE: &str =
    "complete or abort multipart uploads in progress (one idle for --upload-idle-secs is aborted), then send it again";
const SEND_AGAIN: &str = "send it again later";

fn no_such_upload() -> S3Error {
    s3_error("NoSuchUpload", "The specified upload does not exist.", 404)
}

impl Server {
    /// A PUT (`part` false) or an UploadPart: its bytes, by RDMA when a token came (the
    /// token's whole buffer), else from the body (`length` bytes, its Content-Length); checked
    /// against the request's checksum. The object, or the answer. Before any memory is
    /// allocated, the bytes are taken from `--max-receiving-bytes` until the request ends and,
    /// for as long as the object is held, from `--max-part-bytes` (a part) or
    /// `--max-stored-bytes` (an object: an overwrite holds the old object's room too until it
    /// replaces it, as both are in memory until then).
    async fn receive<T>(
        &self,
        req: &S3Request<T>,
        body: Option<StreamingBlob>,
        length: Option<i64>,
        part: bool,
    ) -> S3Result<(Arc<Object>, Option<protocol::Response>)> {
        let expected =
            s3http::request_checksum(&req.headers).map_err(|e| put_refused(Outcome::of_checksum_error(&e)))?;
        let content_type = header(req, "content-type").map(str::to_owned);
        let Some(text) = header(req, protocol::TOKEN_HEADER) else {
            let len = length.and_then(|l| u64::try_from(l).ok()).ok_or_else(|| {
                s3_error(
                    "MissingContentLength",
                    "You must provide the Content-Length HTTP header.",
                    411,
                )
            })?;
            if len > MAX_BODY {
                return Err(s3_error(
                    "EntityTooLarge",
                    &format!(
                        "Your proposed upload exceeds the maximum allowed size: {len} bytes, S3's limit {MAX_BODY}."
                    ),
                    400,
                ));
            }
            let held = self.hold(len, part)?;
            let _receiving = take(&self.limits.receiving, len, SEND_AGAIN)?;
            let bytes = collect(body, len).await?;
            let mr = Arc::new(self.register(bytes)?);
            return self.finish_put(mr, expected, content_type, held).map(|o| (o, None));
        };
        let token = match RdmaToken::parse(text) {
            // A token larger than all that may be received at once is declined: its bytes
            // come in the body, where the same bound answers EntityTooLarge.
            Ok(t) if u64::from(t.len) <= MAX_RDMA.min(self.limits.receiving.limit) => t,
            Ok(_) => return Err(put_refused(Outcome::Declined)),
            Err(e) => return Err(put_refused(Outcome::of_token_error(&e))),
        };
        let len = token.len as usize;
        let held = self.hold(len as u64, part)?;
        let receiving = take(&self.limits.receiving, len as u64, SEND_AGAIN)?;
        let mr = self.register(vec![0u8; len])?;
        let transfer = match self.exec.submit_region(&token, 0, Direction::Put, mr, 0, len) {
            Ok(t) => t,
            Err(e) => return Err(put_refused(Outcome::of_refusal(e.error()))),
        };
        // The room stays taken until the transfer is reported, not until this request ends:
        // a client that hangs up drops this handler mid-transfer, while the executor keeps
        // the region registered (and the device may write it) until its Done. So the room
        // goes with the transfer, awaited in a task of its own.
        let (done, mr) = tokio::spawn(async move {
            let reported = transfer.await;
            drop(receiving);
            reported
        })
        .await
        .map_err(|e| s3_error("InternalError", &format!("the RDMA transfer's task: {e}"), 500))?;
        if !done.is_ok() {
            return Err(put_refused(Outcome::of_done(&done)));
        }
        // The bytes are in: checked against the request's checksum as a body's are.
        let obj = self.finish_put(Arc::new(mr), expected, content_type, held)?;
        let r = protocol::respond(Direction::Put, false, Outcome::of_done(&done));
        Ok((obj, Some(r)))
    }

    /// A part's `len` bytes taken from `--max-part-bytes`, an object's from
    /// `--max-stored-bytes`.
    fn hold(&self, len: u64, part: bool) -> S3Result<Held> {
        if part {
            self.take_for_uploads(&self.limits.part_bytes, len)
        } else {
            storage_full(&self.limits.stored, len)
        }
    }

    /// Takes `n` from `budget` (`--max-uploads` or `--max-part-bytes`) as [`take`] does, but
    /// when it is full the abandoned uploads are aborted first (their room given back) and it
    /// is taken again: only then may a request be refused for room an upload holds.
    fn take_for_uploads(&self, budget: &Arc<Budget>, n: u64) -> S3Result<Held> {
        take(budget, n, UPLOADS_FREE).or_else(|refused| {
            if n <= budget.limit && self.uploads.abort_idle(Instant::now()) > 0 {
                take(budget, n, UPLOADS_FREE)
            } else {
                Err(refused)
            }
        })
    }

    /// The object `key` of `bucket`, or S3's NoSuchKey.
    fn object(&self, bucket: &str, key: &str) -> S3Result<Arc<Object>> {
        let obj = self.objects.lock().unwrap().get(&name(bucket, key)).cloned();
        obj.ok_or_else(no_such_key)
    }

    /// Registers `bytes` as an object's or a part's memory (local write: a PUT lands in it).
    fn register(&self, bytes: Vec<u8>) -> S3Result<Mr<Vec<u8>>> {
        let len = bytes.len();
        self.pd
            .register(bytes, Access::LOCAL_WRITE)
            .map_err(|e| s3_error("InternalError", &format!("registering {len} bytes: {}", e.error()), 500))
    }

    /// The object of a PUT or a part whose bytes are in `data`, once they match the request's
    /// checksum (`Outcome::verified`: else S3's BadDigest, nothing stored); `held`, its
    /// bytes taken from their bound, stays with it.
    fn finish_put(
        &self,
        data: Arc<Mr<Vec<u8>>>,
        expected: Option<Digest>,
        content_type: Option<String>,
        held: Held,
    ) -> S3Result<Arc<Object>> {
        let crc64 = digest_of(&data, 0..data.len(), checksum::Algorithm::Crc64Nvme);
        let computed = expected.map(|want| {
            if want.algorithm == crc64.algorithm {
                crc64
            } else {
                digest_of(&data, 0..data.len(), want.algorithm)
            }
        });
        let moved = Outcome::Moved {
            bytes: data.len() as u64,
        };
        let verified = moved.verified(expected, computed);
        if verified != moved {
            return Err(put_refused(verified));
        }
        Ok(Arc::new(Object {
            etag: format!("\"{}\"", hex(&crc64.to_be_bytes())),
            data,
            crc64,
            modified: Timestamp::from(std::time::SystemTime::now()),
            content_type,
            _held: held,
        }))
    }
}

/// A PUT that stores nothing: the spec's answer to `outcome` (an S3 error; a declined PUT's
/// is a 200 with the reply header, see [`declined`]).
fn put_refused(outcome: Outcome) -> S3Error {
    match answer(Direction::Put, false, outcome) {
        Answer::Error(e) => e,
        Answer::Reply(r) => declined(r),
    }
}

/// A declined PUT: HTTP 200 with `x-amz-rdma-reply: 501` and an XML error body (spec 3.3).
/// s3s answers an `S3Error` with its status and XML; the reply header rides along.
fn declined(r: protocol::Response) -> S3Error {
    let (code, message) = r.error.unwrap_or((protocol::NOT_SUPPORTED, "RDMA not available"));
    let mut e = s3_error(code, message, r.status);
    e.set_headers(reply_headers(&r));
    e
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A body of `len` bytes (its Content-Length, taken from the bounds already): more or fewer
/// bytes are S3's `400 IncompleteBody`.
async fn collect(body: Option<StreamingBlob>, len: u64) -> S3Result<Vec<u8>> {
    use futures_util::StreamExt;
    let differs = |came: &str| {
        s3_error(
            "IncompleteBody",
            &format!(
                "You did not provide the number of bytes specified by the Content-Length HTTP header ({len}): {came}."
            ),
            400,
        )
    };
    let capacity = usize::try_from(len).map_err(|_| differs("more than this machine holds"))?;
    let mut v = Vec::with_capacity(capacity);
    if let Some(mut body) = body {
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| s3_error("IncompleteBody", &e.to_string(), 400))?;
            if v.len() + chunk.len() > capacity {
                return Err(differs("more came"));
            }
            v.extend_from_slice(&chunk);
        }
    }
    if v.len() != capacity {
        return Err(differs(&format!("{} came", v.len())));
    }
    Ok(v)
}

/// A `Range` outside an object of `len` bytes: S3's `416 InvalidRange`, with the
/// `Content-Range: bytes */len` RFC 9110 (14.4) asks for.
fn not_satisfiable(len: u64) -> S3Error {
    let mut e = s3_error("InvalidRange", "The requested range is not satisfiable", 416);
    let mut h = http::HeaderMap::new();
    h.insert(
        http::header::CONTENT_RANGE,
        format!("bytes */{len}").parse().expect("a header value"),
    );
    e.set_headers(h);
    e
}

fn no_such_key() -> S3Error {
    s3_error("NoSuchKey", "The specified key does not exist.", 404)
}

#[async_trait::async_trait]
impl S3 for Server {
    async fn create_bucket(&self, _req: S3Request<CreateBucketInput>) -> S3Result<S3Response<CreateBucketOutput>> {
        Ok(S3Response::new(CreateBucketOutput::default()))
    }

    async fn head_bucket(&self, _req: S3Request<HeadBucketInput>) -> S3Result<S3Response<HeadBucketOutput>> {
        Ok(S3Response::new(HeadBucketOutput::default()))
    }

    async fn put_object(&self, mut req: S3Request<PutObjectInput>) -> S3Result<S3Response<PutObjectOutput>> {
        let body = req.input.body.take();
        let (obj, reply) = self.receive(&req, body, req.input.content_length, false).await?;
        let key = name(&req.input.bucket, &req.input.key);
        let out = PutObjectOutput {
            e_tag: Some(ETag::Strong(obj.etag.trim_matches('"').to_owned())),
            checksum_crc64nvme: header(&req, checksum::CRC64NVME_HEADER).map(|_| obj.crc64.header_value()),
            ..Default::default()
        };
        self.objects.lock().unwrap().insert(key, obj);
        let mut resp = S3Response::new(out);
        if let Some(r) = reply {
            resp.headers = reply_headers(&r);
        }
        Ok(resp)
    }

    async fn head_object(&self, req: S3Request<HeadObjectInput>) -> S3Result<S3Response<HeadObjectOutput>> {
        let obj = self.object(&req.input.bucket, &req.input.key)?;
        Ok(S3Response::new(HeadObjectOutput {
            content_length: Some(obj.data.len() as i64),
            e_tag: Some(ETag::Strong(obj.etag.trim_matches('"').to_owned())),
            last_modified: Some(obj.modified.clone()),
            content_type: obj.content_type.clone(),
            checksum_crc64nvme: Some(obj.crc64.header_value()),
            accept_ranges: Some("bytes".into()),
            ..Default::default()
        }))
    }

    async fn get_object(&self, req: S3Request<GetObjectInput>) -> S3Result<S3Response<GetObjectOutput>> {
        let obj = self.object(&req.input.bucket, &req.input.key)?;
        let len = obj.data.len() as u64;
        let (range, ranged) = match req.input.range {
            Some(r) => (r.check(len).map_err(|_| not_satisfiable(len))?, true),
            None => (0..len, false),
        };
        let n = (range.end - range.start) as usize;
        let mode = s3http::checksum_mode(&req.headers);
        let mut out = GetObjectOutput {
            e_tag: Some(ETag::Strong(obj.etag.trim_matches('"').to_owned())),
            last_modified: Some(obj.modified.clone()),
            content_type: obj.content_type.clone(),
            accept_ranges: Some("bytes".into()),
            content_range: ranged.then(|| format!("bytes {}-{}/{len}", range.start, range.end.saturating_sub(1))),
            ..Default::default()
        };
        // The checksum of the bytes moved: the object's, or the range's.
        let sum = mode.then(|| {
            if ranged {
                digest_of(
                    &obj.data,
                    range.start as usize..range.end as usize,
                    checksum::Algorithm::Crc64Nvme,
                )
            } else {
                obj.crc64
            }
        });
        out.checksum_crc64nvme = sum.map(|d| d.header_value());
        let outcome = match s3http::request_token(&req.headers) {
            None => None,
            Some(token) => Some(match token {
                Err(refused) => refused,
                Ok(t) if (t.len as usize) < n || n as u64 > MAX_RDMA => Outcome::Declined,
                Ok(_) if n == 0 => Outcome::Moved { bytes: 0 },
                Ok(t) => {
                    match self
                        .exec
                        .submit_region(&t, 0, Direction::Get, Arc::clone(&obj.data), range.start as usize, n)
                    {
                        // A client that hangs up drops this handler, while the executor keeps
                        // the object's memory until its Done: the object (its room in
                        // `--max-stored-bytes`) goes with the transfer, awaited in a task of
                        // its own, as a PUT's receiving room does.
                        Ok(transfer) => {
                            let holding = Arc::clone(&obj);
                            let done = tokio::spawn(async move {
                                let (done, _region) = transfer.await;
                                drop(holding);
                                done
                            })
                            .await
                            .map_err(|e| s3_error("InternalError", &format!("the RDMA transfer's task: {e}"), 500))?;
                            Outcome::of_done(&done)
                        }
                        Err(e) => Outcome::of_refusal(e.error()),
                    }
                }
            }),
        };
        let status = if ranged { 206 } else { 200 };
        let Some(outcome) = outcome else {
            out.content_length = Some(n as i64);
            out.body = Some(body_of(&obj, range.start as usize..range.end as usize));
            let mut resp = S3Response::new(out);
            resp.status = Some(http_status(status));
            return Ok(resp);
        };
        match answer(Direction::Get, ranged, outcome) {
            Answer::Error(e) => Err(e),
            Answer::Reply(r) => {
                if r.body == ReplyBody::Object {
                    out.content_length = Some(n as i64);
                    out.body = Some(body_of(&obj, range.start as usize..range.end as usize));
                } else {
                    out.content_length = Some(0);
                }
                let mut resp = S3Response::new(out);
                resp.status = Some(http_status(r.status));
                resp.headers = reply_headers(&r);
                Ok(resp)
            }
        }
    }

    async fn delete_object(&self, req: S3Request<DeleteObjectInput>) -> S3Result<S3Response<DeleteObjectOutput>> {
        self.objects
            .lock()
            .unwrap()
            .remove(&name(&req.input.bucket, &req.input.key));
        if req.input.key.starts_with("goodbye-") {
            let n = self.goodbyes.fetch_add(1, Ordering::SeqCst) + 1;
            if n >= self.clients {
                self.done.notify_one();
            }
        }
        Ok(S3Response::new(DeleteObjectOutput::default()))
    }

    async fn create_multipart_upload(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        let slot = self.take_for_uploads(&self.limits.uploads, 1)?;
        let id = new_upload_id()?;
        self.uploads
            .create(upload_key(&req.input.bucket, &req.input.key, &id), slot);
        Ok(S3Response::new(CreateMultipartUploadOutput {
            bucket: Some(req.input.bucket),
            key: Some(req.input.key),
            upload_id: Some(id),
            ..Default::default()
        }))
    }

    async fn upload_part(&self, mut req: S3Request<UploadPartInput>) -> S3Result<S3Response<UploadPartOutput>> {
        let number = req.input.part_number;
        if !PART_NUMBERS.contains(&number) {
            return Err(s3_error(
                "InvalidArgument",
                &format!("Part number must be an integer between 1 and 10000, inclusive: {number} is not."),
                400,
            ));
        }
        let at = upload_key(&req.input.bucket, &req.input.key, &req.input.upload_id);
        // The upload is not idle while the part is received, however long that takes.
        let receiving = self.uploads.receiving(&at)?;
        let body = req.input.body.take();
        let (part, reply) = self.receive(&req, body, req.input.content_length, true).await?;
        let out = UploadPartOutput {
            e_tag: Some(ETag::Strong(part.etag.trim_matches('"').to_owned())),
            checksum_crc64nvme: Some(part.crc64.header_value()),
            ..Default::default()
        };
        // Completed or aborted meanwhile: the part is dropped, its bytes given back. A part
        // sent again replaces the one before (S3's rule), whose bytes are given back.
        let replaced = self
            .uploads
            .with(&at, |mut upload| Ok(upload.get_mut().parts.insert(number, part)))?;
        drop((receiving, replaced));
        let mut resp = S3Response::new(out);
        if let Some(r) = reply {
            resp.headers = reply_headers(&r);
        }
        Ok(resp)
    }

    async fn complete_multipart_upload(
        &self,
        req: S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<S3Response<CompleteMultipartUploadOutput>> {
        let listed = req.input.multipart_upload.and_then(|m| m.parts).unwrap_or_default();
        // The list checked against the parts, the object's room taken and the upload taken in
        // one hold of the lock: a list S3 refuses, or an object the store has no room for,
        // leaves the upload open, to be completed again.
        let place = upload_key(&req.input.bucket, &req.input.key, &req.input.upload_id);
        let (parts, held, upload) = self.uploads.with(&place, |upload| {
            let parts = listed_parts(upload.get(), &listed)?;
            let total = parts.iter().map(|p| p.data.len() as u64).sum();
            let held = storage_full(&self.limits.stored, total)?;
            Ok((parts, held, upload.remove()))
        })?;
        drop(upload);
        let total: usize = parts.iter().map(|p| p.data.len()).sum();
        let mut whole = self.register(vec![0u8; total])?;
        let mut at = 0;
        for p in &parts {
            copy_into(&mut whole, at, &p.data);
            at += p.data.len();
        }
        // The parts, and their bytes in `--max-part-bytes`, are let go here.
        drop(parts);
        let obj = self.finish_put(Arc::new(whole), None, None, held)?;
        let out = CompleteMultipartUploadOutput {
            bucket: Some(req.input.bucket.clone()),
            key: Some(req.input.key.clone()),
            e_tag: Some(ETag::Strong(format!("{}-{}", obj.etag.trim_matches('"'), listed.len()))),
            checksum_crc64nvme: Some(obj.crc64.header_value()),
            checksum_type: Some(ChecksumType::from_static(ChecksumType::FULL_OBJECT)),
            ..Default::default()
        };
        self.objects.lock().unwrap().insert(place.0, obj);
        Ok(S3Response::new(out))
    }

    async fn abort_multipart_upload(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        // Its place and its parts' bytes are given back as it is dropped.
        let at = upload_key(&req.input.bucket, &req.input.key, &req.input.upload_id);
        let upload = self.uploads.with(&at, |upload| Ok(upload.remove()))?;
        drop(upload);
        Ok(S3Response::new(AbortMultipartUploadOutput::default()))
    }
}

/// The parts a CompleteMultipartUpload lists, as S3 checks them: at least one
/// (`MalformedXML`), in ascending order of part number (`InvalidPartOrder`), each uploaded
/// and named by its ETag (`InvalidPart`), each but the last at least 5 MiB (`EntityTooSmall`).
fn listed_parts(upload: &Upload, listed: &[CompletedPart]) -> S3Result<Vec<Arc<Object>>> {
    if listed.is_empty() {
        return Err(s3_error(
            "MalformedXML",
            "The XML you provided was not well-formed or did not validate against our published schema: it lists no part.",
            400,
        ));
    }
    let mut parts = Vec::with_capacity(listed.len());
    let mut previous = 0;
    for p in listed {
        // A part without a number, or with none S3 hands out, names no part: said as such,
        // not as a list out of order.
        let Some(n) = p.part_number.filter(|n| PART_NUMBERS.contains(n)) else {
            return Err(s3_error(
                "InvalidPart",
                &format!(
                    "One or more of the specified parts could not be found: a part number must be an integer between 1 and 10000, inclusive: {}.",
                    p.part_number.map_or("none was given".to_owned(), |n| format!("{n} is not"))
                ),
                400,
            ));
        };
        if n <= previous {
            return Err(s3_error(
                "InvalidPartOrder",
                &format!("The list of parts was not in ascending order: part {n} after part {previous}."),
                400,
            ));
        }
        previous = n;
        let invalid = |why: &str| {
            s3_error(
                "InvalidPart",
                &format!("One or more of the specified parts could not be found: part {n} {why}."),
                400,
            )
        };
        let part = upload.parts.get(&n).ok_or_else(|| invalid("was not uploaded"))?;
        let etag = p.e_tag.as_ref().map(|e| e.value().to_owned());
        if etag.as_deref() != Some(part.etag.trim_matches('"')) {
            return Err(invalid("has another ETag"));
        }
        parts.push(Arc::clone(part));
    }
    let last = parts.len() - 1;
    if let Some((i, small)) = parts[..last].iter().enumerate().find(|(_, p)| p.data.len() < MIN_PART) {
        return Err(s3_error(
            "EntityTooSmall",
            &format!(
                "Your proposed upload is smaller than the minimum allowed object size: part {} has {} bytes, every part but the last needs {MIN_PART}.",
                listed[i].part_number.unwrap_or(0),
                small.data.len()
            ),
            400,
        ));
    }
    Ok(parts)
}

struct Args {
    listen: String,
    device: Option<String>,
    rdma_ip: Option<std::net::IpAddr>,
    path: mlx5dv::s3::PathSettings,
    access_key: String,
    secret_key: String,
    key: mlx5dv::DcKey,
    clients: u64,
    bounds: Bounds,
}

fn usage() -> String {
    format!(
        "usage: s3s_server [OPTIONS]
  --listen ADDR             the HTTP address (default 127.0.0.1:0: a free port)
  --device NAME             the RDMA device (default: the first mlx5 device)
  --rdma-ip IP              the device, port and GID of this address, instead of --device
  --sl N                    the RDMA requests' service level (default 0)
  --traffic-class N         the RDMA requests' traffic class (default 0)
  --access-key K            the SigV4 access key (default mlx5dv)
  --secret-key S            its secret (default mlx5dv-secret)
  --key HEX                 the DC key the clients' DCTs expect (default the reference's)
  --clients N               exit once N clients said goodbye (default 1)
Bounds on what any client can make the server hold. Past one the answer is S3's 503 SlowDown
(S3 clients send the request again after a backoff); a request larger than the bound itself
is 400 EntityTooLarge:
  --max-uploads N           multipart uploads open at once (default {MAX_UPLOADS})
  --max-part-bytes B        bytes held by the uploaded parts of open multipart uploads
                            (default {MAX_PART_BYTES}: 2 GiB)
  --max-receiving-bytes B   bytes being received at once by PUTs and parts, RDMA PUTs'
                            registrations and bodies (default {MAX_RECEIVING_BYTES}: 1 GiB)
  --max-stored-bytes B      bytes of stored objects, completed multipart objects included
                            (default {MAX_STORED_BYTES}: 4 GiB); past it 507 XMinioStorageFull
                            (MinIO's full drive: room comes back by DELETEs and overwrites,
                            not by waiting, so S3 clients do not retry it)
  --upload-idle-secs S      a multipart upload no request named for S seconds (its creation,
                            a part, a refused CompleteMultipartUpload; a part being received
                            keeps it) is abandoned: aborted, its place and its parts' bytes
                            given back, when one of the two bounds above on uploads is full
                            or a request names it (then 404 NoSuchUpload), as S3's lifecycle
                            rule AbortIncompleteMultipartUpload does (default {UPLOAD_IDLE_SECS}: 10 min)
  --send-timeout-secs S     a response's write may wait S seconds for the client to read
                            (since the last that moved); a client reading nothing for that
                            long has its connection closed, what its response held (a GET's
                            object and its room) let go, as nginx's send_timeout (default
                            {SEND_TIMEOUT_SECS})
S3's rules hold as well: part numbers 1..=10000, every part but the last at least 5 MiB, a
body at most 5 GiB."
    )
}

/// The arguments, or why they are wrong; `Ok(None)` for `--help`.
fn args() -> Result<Option<Args>, String> {
    let mut a = Args {
        listen: "127.0.0.1:0".into(),
        device: None,
        rdma_ip: None,
        path: mlx5dv::s3::PathSettings::default(),
        access_key: "mlx5dv".into(),
        secret_key: "mlx5dv-secret".into(),
        key: common::DEFAULT_KEY,
        clients: 1,
        bounds: Bounds::default(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let bound = |v: String| match v.parse::<u64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{flag} {v}: a bound is a whole number above 0")),
        };
        if let Some(slot) = a.bounds.slot(&flag) {
            *slot = bound(value()?)?;
            continue;
        }
        match flag.as_str() {
            "--listen" => a.listen = value()?,
            "--device" => a.device = Some(value()?),
            "--rdma-ip" => a.rdma_ip = Some(value()?.parse().map_err(|e| format!("--rdma-ip: {e}"))?),
            "--sl" => a.path.sl = value()?.parse().map_err(|e| format!("--sl: {e}"))?,
            "--traffic-class" => {
                a.path.traffic_class = value()?.parse().map_err(|e| format!("--traffic-class: {e}"))?
            }
            "--access-key" => a.access_key = value()?,
            "--secret-key" => a.secret_key = value()?,
            "--key" => a.key = common::parse_key(&value()?)?,
            "--clients" => a.clients = value()?.parse().map_err(|e| format!("--clients: {e}"))?,
            "--help" | "-h" => return Ok(None),
            _ => return Err(format!("unknown argument {flag}\n{}", usage())),
        }
    }
    Ok(Some(a))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let Some(a) = args()? else {
        println!("{}", usage());
        return Ok(());
    };
    let mut cfg = ExecutorConfig {
        key: a.key,
        path: a.path,
        ..Default::default()
    };
    let ctx = match a.rdma_ip {
        Some(ip) => {
            let local = mlx5dv::open_by_ip(ip)?;
            (cfg.pool.port, cfg.gid_index) = (local.port, local.gid_index);
            local.context
        }
        None => mlx5dv::open_device(a.device.as_deref())?,
    };
    let (mlx5, pd) = (ctx.mlx5()?, ctx.alloc_pd()?);
    let (port, gid_index) = (cfg.pool.port, cfg.gid_index);
    // The RDMA data path: the executor, shared by every request's task; its driver sleeps in
    // tokio's reactor on the CQ's completion channel.
    let cq = ctx.create_cq_with_channel(cfg.cq_size())?;
    let exec = mlx5dv::s3::tokio::spawn(Executor::new(&mlx5, &pd, cq, cfg)?, AsyncConfig::default())?;
    let done = Arc::new(tokio::sync::Notify::new());
    let limits = Limits {
        uploads: Budget::new("multipart uploads open at once", "--max-uploads", a.bounds.max_uploads),
        part_bytes: Budget::new(
            "bytes held by uploaded parts",
            "--max-part-bytes",
            a.bounds.max_part_bytes,
        ),
        receiving: Budget::new(
            "bytes being received at once",
            "--max-receiving-bytes",
            a.bounds.max_receiving_bytes,
        ),
        stored: Budget::new(
            "bytes of stored objects",
            "--max-stored-bytes",
            a.bounds.max_stored_bytes,
        ),
    };
    let uploads = OpenUploads::new(Duration::from_secs(a.bounds.upload_idle_secs));
    let objects = Objects::default();
    let server = Server {
        exec: exec.clone(),
        pd,
        objects: Arc::clone(&objects),
        uploads: Arc::clone(&uploads),
        limits: limits.clone(),
        goodbyes: AtomicU64::new(0),
        clients: a.clients,
        done: Arc::clone(&done),
    };
    let mut builder = s3s::service::S3ServiceBuilder::new(server);
    builder.set_auth(s3s::auth::SimpleAuth::from_single(a.access_key, a.secret_key));
    let service = with_request_ids(builder.build());
    let listener = tokio::net::TcpListener::bind(&a.listen).await?;
    let url = format!("http://{}", listener.local_addr()?);
    eprintln!(
        "s3s_server: serving S3 over RDMA at {url} (device {}, port {port}, GID index {gid_index:?}, {:?})",
        ctx.name(),
        a.path
    );
    if let Some(path) = common::rendezvous_file() {
        common::publish(&path, &url)?;
    }
    let http = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (socket, _) = accepted?;
                let socket = SendTimeout::new(socket, Duration::from_secs(a.bounds.send_timeout_secs));
                let conn = http.serve_connection(hyper_util::rt::TokioIo::new(socket), service.clone()).into_owned();
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            () = done.notified() => break,
        }
    }
    let (stats, clients, ahs) = exec.with_executor(|e| (e.stats(), e.clients(), e.address_handles()));
    eprintln!(
        "s3s_server: every client said goodbye; {stats:?}; {clients} clients and {ahs} address handles still held"
    );
    held_as_counted(&uploads, &objects, &limits)
}

/// `service` with S3's `x-amz-request-id` on every response, errors included (s3s sets none):
/// the id the SDK reports with a failure (`aws_request_id`), so a client's failure line names
/// the request. Ids are the server's sequence numbers, 16 hex digits as S3 writes them.
fn with_request_ids(
    service: s3s::service::S3Service,
) -> impl hyper::service::Service<
    http::Request<hyper::body::Incoming>,
    Response = s3s::HttpResponse,
    Error = s3s::HttpError,
    Future = impl Future<Output = Result<s3s::HttpResponse, s3s::HttpError>> + Send,
> + Clone {
    let next = Arc::new(AtomicU64::new(1));
    let service = Arc::new(service);
    let call = move |req| {
        let id = next.fetch_add(1, Ordering::Relaxed);
        let service = Arc::clone(&service);
        async move {
            let mut resp = hyper::service::Service::call(&*service, req).await?;
            if let Ok(value) = http::HeaderValue::from_str(&format!("{id:016X}")) {
                resp.headers_mut().insert("x-amz-request-id", value);
            }
            Ok(resp)
        }
    };
    hyper::service::service_fn(call)
}

/// Checks that the bounds count what is held: the open uploads and their parts' bytes, the
/// stored objects' bytes (an overwrite or a DELETE counted once, given back once), and
/// nothing being received (every client said goodbye). A difference is a leak.
fn held_as_counted(
    uploads: &Uploads,
    objects: &Objects,
    limits: &Limits,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (open, part_bytes) = {
        let uploads = uploads.map.lock().unwrap();
        let bytes = uploads.values().flat_map(|u| u.parts.values());
        (uploads.len() as u64, bytes.map(|p| p.data.len() as u64).sum::<u64>())
    };
    let (stored, stored_bytes) = {
        let objects = objects.lock().unwrap();
        let bytes = objects.values().map(|o| o.data.len() as u64).sum::<u64>();
        (objects.len(), bytes)
    };
    let counted = (
        limits.uploads.used(),
        limits.part_bytes.used(),
        limits.stored.used(),
        limits.receiving.used(),
    );
    eprintln!(
        "s3s_server: {open} multipart uploads open holding {part_bytes} bytes in parts, {stored} objects of {stored_bytes} bytes stored; counted: {} uploads, {} part bytes, {} stored bytes, {} bytes being received",
        counted.0, counted.1, counted.2, counted.3
    );
    if counted != (open, part_bytes, stored_bytes, 0) {
        return Err("the bounds' counts differ from what is held: a leak".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An upload with no part: what `listed_parts` checks a list against.
    fn empty_upload() -> Upload {
        let uploads = Budget::new("uploads", "--max-uploads", 1);
        Upload::new(uploads.take(1).unwrap(), Instant::now())
    }

    #[test]
    fn an_upload_no_request_named_for_the_idle_time_is_aborted_and_its_room_given_back() {
        let (slots, idle) = (Budget::new("uploads", "--max-uploads", 2), Duration::from_secs(60));
        let uploads = OpenUploads::new(idle);
        let (old, named) = (upload_key("b", "k", "old"), upload_key("b", "k", "named"));
        let t0 = Instant::now();
        uploads.create(old.clone(), slots.take(1).unwrap());
        uploads.create(named.clone(), slots.take(1).unwrap());
        assert_eq!(uploads.abort_idle(t0 + idle / 2), 0, "none idle yet");
        // A request naming one at half the idle time keeps it for another idle time.
        uploads.with_at(&named, t0 + idle / 2, |_| Ok(())).unwrap();
        assert_eq!(uploads.abort_idle(t0 + idle + Duration::from_secs(1)), 1);
        assert_eq!(slots.used(), 1, "the abandoned upload's place is given back");
        let gone = uploads.with_at(&old, t0 + idle, |_| Ok(()));
        assert_eq!(gone.unwrap_err().code(), &S3ErrorCode::NoSuchUpload);
        // Named past its idle time, the other is gone too, its place given back.
        let late = uploads.with_at(&named, t0 + 2 * idle, |_| Ok(()));
        assert_eq!(late.unwrap_err().code(), &S3ErrorCode::NoSuchUpload);
        assert_eq!((slots.used(), uploads.map.lock().unwrap().len()), (0, 0));
    }

    #[test]
    fn an_upload_is_not_idle_while_a_part_of_it_is_received() {
        let (slots, idle) = (Budget::new("uploads", "--max-uploads", 1), Duration::from_secs(60));
        let uploads = OpenUploads::new(idle);
        let at = upload_key("b", "k", "id");
        uploads.create(at.clone(), slots.take(1).unwrap());
        let receiving = uploads.receiving(&at).unwrap();
        let later = Instant::now() + 10 * idle;
        assert_eq!(uploads.abort_idle(later), 0, "a part is being received");
        uploads.with_at(&at, later, |_| Ok(())).unwrap();
        drop(receiving);
        // The part's end is activity too: idle from then on.
        assert_eq!(uploads.abort_idle(Instant::now() + idle / 2), 0);
        assert_eq!(uploads.abort_idle(Instant::now() + 20 * idle), 1);
        assert_eq!(slots.used(), 0);
    }

    #[test]
    fn a_listed_part_without_a_part_number_or_outside_s3s_numbers_is_refused_as_such() {
        let upload = empty_upload();
        for number in [None, Some(0), Some(-5), Some(10_001)] {
            let listed = [CompletedPart {
                part_number: number,
                ..Default::default()
            }];
            let Err(e) = listed_parts(&upload, &listed) else {
                panic!("{number:?}: taken");
            };
            let message = e.message().unwrap_or_default().to_owned();
            assert_ne!(
                e.code(),
                &S3ErrorCode::InvalidPartOrder,
                "{number:?}: a list of one part is in order; the number is what is wrong: {message}"
            );
            assert!(message.contains("1 and 10000"), "{number:?}: {message}");
        }
    }
}
