//! An S3-over-RDMA client on aws-sdk-s3: it exposes one buffer behind its DCT (mlx5dv's
//! `s3::Client`) and, for each object, PUTs it (multipart above 8 MiB, a token per part),
//! HEADs it, GETs it whole and by range, each by RDMA with `x-amz-rdma-token` added before
//! SigV4 signs the request, checking every byte, the replies, and the CRC64NVME checksums the
//! server returns; then DELETEs it. Tokens are written in turn as each published client writes
//! them (the reference's seven fields, NIXL's nine with a `;`, upper case, hipObject's 88
//! hex). With `--chaos` it also checks, once, that the server answers as the spec says: an
//! invalid token (400 InvalidRDMAToken), a hipObject RC token (declined: the PUT sent again in
//! the body, the GET served in the body), a dead client (its DCT destroyed: the PUT 500
//! RDMATransferFailed, the GET served in the body), a wrong checksum (400 BadDigest), a token
//! changed after signing and a wrong secret (403); and the server's bounds and S3's rules
//! (`bounds_chaos`): too many multipart uploads, parts past the bytes they may hold and RDMA
//! PUTs past the bytes that may be received at once (503 SlowDown, the room given back by
//! aborts and ends), a `Range` past the object (416), a CompleteMultipartUpload naming a part
//! not uploaded or by another ETag (InvalidPart), out of order, with a small part before the
//! last (EntityTooSmall), a part number outside 1..=10000 (InvalidArgument); another key's or
//! a guessed upload id (NoSuchUpload, the owner's upload completed intact); stored objects
//! past `--max-stored-bytes` (507 XMinioStorageFull, the room given back by a DELETE and by an
//! overwrite, counted once; a stalled GET of a DELETEd object keeps its room until it ends:
//! decisive with `--clients 1`, when no other client can free room meanwhile); uploads
//! abandoned past `--max-uploads` (SlowDown, then aborted by the server once
//! `--upload-idle-secs` passed: NoSuchUpload, their room taken again; the case waits that
//! long, so chaos runs give the server a few seconds). The server's bounds are told with
//! `--max-uploads`, `--max-part-bytes`, `--max-receiving-bytes`, `--max-stored-bytes`,
//! `--upload-idle-secs`, `--send-timeout-secs` (as its own flags; defaults the server's). With
//! `--clients 1` a GET left unread past `--send-timeout-secs` is cut by the server and its
//! object's room comes back. With `--stall-once-secs S` the client keeps silent S seconds once
//! inside its first multipart upload: past `--upload-idle-secs` the server must have aborted
//! it, and the client makes it again (a client of a busy machine does the same, and fails
//! only when the server aborted an upload a request named sooner than the idle time).
//!
//! A request refused for room the other clients' chaos holds a moment (503 SlowDown, 507
//! storage full) is sent again after a backoff for as long as it is so refused; one refused
//! for 30 s is told (code, message, request id) every 30 s, the run's timeout the backstop.
//!
//! ```text
//! sdk_client [--server URL] [--objects N] [--max-size B] [--id N] [--clients N] [--chaos]
//!            [--stall-once-secs S] [--device NAME]
//!            [--access-key K] [--secret-key S] [--key HEX]
//!            [--max-uploads N] [--max-part-bytes B] [--max-receiving-bytes B]
//!            [--max-stored-bytes B] [--upload-idle-secs S] [--send-timeout-secs S]
//! ```

use aws_sdk_s3::config::retry::RetryConfig;
use aws_sdk_s3::config::{Credentials, Region, RequestChecksumCalculation, ResponseChecksumValidation};
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::operation::RequestId;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeDeserializationInterceptorContextRef, BeforeTransmitInterceptorContextMut,
};
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use mlx5dv::s3::checksum::{Algorithm, Digest};
use mlx5dv::s3::protocol::{self, ClientAction, Reply};
use mlx5dv::s3::{Client, ClientConfig, Direction, Exposed, RdmaToken};
use mlx5dv::Access;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "../bounds.rs"]
mod bounds;
#[path = "sdk_client/bounds_chaos.rs"]
mod bounds_chaos;
#[path = "../../../../mlx5dv/examples/common/s3.rs"]
mod common;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Parts of a multipart upload, and the size above which an object is uploaded in parts.
const PART: usize = 8 << 20;
const BUCKET: &str = "rdma";

/// What a response said, as read before the SDK deserializes it.
#[derive(Clone, Debug, Default)]
struct Seen {
    status: u16,
    reply: Option<String>,
    bytes: Option<String>,
    crc64: Option<String>,
    content_range: Option<String>,
}

/// Reads the response's status and headers (the SDK's outputs have no field for the RDMA
/// headers).
#[derive(Debug, Clone, Default)]
struct Capture(Arc<Mutex<Seen>>);

impl Intercept for Capture {
    fn name(&self) -> &'static str {
        "mlx5dv-rdma-reply"
    }

    fn read_before_deserialization(
        &self,
        ctx: &BeforeDeserializationInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> std::result::Result<(), BoxError> {
        let r = ctx.response();
        let h = |n: &str| r.headers().get(n).map(str::to_owned);
        *self.0.lock().unwrap() = Seen {
            status: r.status().as_u16(),
            reply: h(protocol::REPLY_HEADER),
            bytes: h(protocol::BYTES_TRANSFERRED_HEADER),
            crc64: h("x-amz-checksum-crc64nvme"),
            content_range: h("content-range"),
        };
        Ok(())
    }
}

impl Capture {
    fn seen(&self) -> Seen {
        self.0.lock().unwrap().clone()
    }
    fn action(&self, direction: Direction) -> Result<(Seen, ClientAction)> {
        let s = self.seen();
        let reply = Reply::parse(s.reply.as_deref())?;
        Ok((s.clone(), ClientAction::of(direction, s.status, reply)))
    }
}

/// Adds `x-amz-rdma-token` before SigV4 signs the request (aws-smithy runs `mutate_request`
/// in `modify_before_signing`) and reads the answer's RDMA headers into `cap`.
trait WithToken: Sized {
    fn rdma_token(self, token: String, cap: &Capture) -> Self;
}

impl<T, E, B> WithToken for aws_sdk_s3::client::customize::CustomizableOperation<T, E, B> {
    fn rdma_token(self, token: String, cap: &Capture) -> Self {
        self.mutate_request(move |req| {
            req.headers_mut().insert(protocol::TOKEN_HEADER, token.clone());
        })
        .interceptor(cap.clone())
    }
}

/// Changes the token after the request was signed: the server must refuse the signature.
#[derive(Debug)]
struct Tamper;

impl Intercept for Tamper {
    fn name(&self) -> &'static str {
        "tamper-after-signing"
    }

    fn modify_before_transmit(
        &self,
        ctx: &mut BeforeTransmitInterceptorContextMut<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> std::result::Result<(), BoxError> {
        let headers = ctx.request_mut().headers_mut();
        if let Some(t) = headers.get(protocol::TOKEN_HEADER).map(str::to_owned) {
            // The same buffer, one byte shorter: a token a man in the middle might send.
            let mut token = RdmaToken::parse(&t).map_err(|e| e.to_string())?;
            token.len -= 1;
            headers.insert(protocol::TOKEN_HEADER, token.format().map_err(|e| e.to_string())?);
        }
        Ok(())
    }
}

struct Args {
    server: Option<String>,
    objects: usize,
    max_size: usize,
    id: u64,
    /// How many clients the server has (0: not told): with 1, no other client frees or takes
    /// room while a chaos case counts it.
    clients: u64,
    chaos: bool,
    /// Seconds this client stays silent once, after the first part of its first multipart
    /// upload of the objects (0: never), as a client descheduled that long would: past the
    /// server's `--upload-idle-secs` the upload must be found aborted and made again, once.
    stall_once_secs: u64,
    device: Option<String>,
    access_key: String,
    secret_key: String,
    key: mlx5dv::DcKey,
    /// The server's bounds, which `--chaos` proves.
    bounds: bounds::Bounds,
}

fn args() -> std::result::Result<Args, String> {
    let mut a = Args {
        server: None,
        objects: 100,
        max_size: 64 << 20,
        id: std::env::var("SOFT_MLX5_NODE_INDEX")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1),
        clients: 0,
        chaos: false,
        stall_once_secs: 0,
        device: None,
        access_key: "mlx5dv".into(),
        secret_key: "mlx5dv-secret".into(),
        key: common::DEFAULT_KEY,
        bounds: bounds::Bounds::default(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let num = |v: String| v.parse::<usize>().map_err(|e| format!("{flag} {v}: {e}"));
        if let Some(slot) = a.bounds.slot(&flag) {
            *slot = num(value()?)? as u64;
            continue;
        }
        match flag.as_str() {
            "--server" => a.server = Some(value()?),
            "--objects" => a.objects = num(value()?)?,
            "--max-size" => a.max_size = num(value()?)?,
            "--id" => a.id = num(value()?)? as u64,
            "--clients" => a.clients = num(value()?)? as u64,
            "--chaos" => a.chaos = true,
            "--stall-once-secs" => a.stall_once_secs = num(value()?)? as u64,
            "--device" => a.device = Some(value()?),
            "--access-key" => a.access_key = value()?,
            "--secret-key" => a.secret_key = value()?,
            "--key" => a.key = common::parse_key(&value()?)?,
            _ => return Err(format!("unknown argument {flag} (see the header of sdk_client.rs)")),
        }
    }
    Ok(a)
}

/// An S3 client of `url` signing with `secret`, sending a failed request again as `retry`
/// says.
fn sdk(url: &str, access: &str, secret: &str, retry: RetryConfig) -> aws_sdk_s3::Client {
    let cfg = aws_sdk_s3::Config::builder()
        .behavior_version_latest()
        .region(Region::new("us-east-1"))
        .endpoint_url(url)
        .force_path_style(true)
        .credentials_provider(Credentials::new(access, secret, None, None, "sdk_client"))
        .http_client(aws_smithy_http_client::Builder::new().build_http())
        // The body of an RDMA request is empty: the SDK must neither checksum it nor check a
        // GET's empty body against the checksum of the bytes RDMA moved. This client sums the
        // bytes itself (x-amz-checksum-crc64nvme) and checks what the server returns.
        .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
        .response_checksum_validation(ResponseChecksumValidation::WhenRequired)
        .retry_config(retry)
        .build();
    aws_sdk_s3::Client::from_conf(cfg)
}

/// Object `n`'s size: 1 B, then 64 MiB (at most `max`), then mostly small with some large.
fn size_of(n: usize, seed: u64, max: usize) -> usize {
    let r = seed.wrapping_add(n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11;
    let size = match n {
        0 => 1,
        1 => max,
        _ if n % 50 == 7 => (8 << 20) + (r as usize % (max.saturating_sub(8 << 20).max(1))),
        _ if n % 10 == 3 => 1 + (r as usize % (8 << 20)),
        // Log-uniform from 1 B to 1 MiB.
        _ => 1usize << (r % 21),
    };
    size.clamp(1, max)
}

struct Run {
    s3: aws_sdk_s3::Client,
    exposed: Exposed<Vec<u8>>,
    port: u8,
    id: u64,
    /// The server's `--upload-idle-secs`: an upload no request named for that long may be
    /// aborted ([`Run::put_parts`]).
    upload_idle: Duration,
    /// Multipart uploads the server aborted as idle, rightly (see [`Run::put_parts`]), and
    /// made again.
    uploads_made_again: usize,
    /// A silence to keep once after a part (`--stall-once-secs`), taken by the first upload.
    stall_once: Option<Duration>,
}

/// What became of one try at a multipart upload.
enum Upload {
    Done,
    /// Aborted by the server as idle: `silent` is at most how long no request of ours named
    /// it, as the client can bound it (from the last request's sending to the answer that
    /// found it gone).
    Aborted {
        silent: Duration,
    },
}

/// How many times a multipart upload is made again after the server rightly aborted it as
/// idle (each time this client was descheduled past `--upload-idle-secs`).
const UPLOAD_TRIES: usize = 5;

/// `e` and each of its sources, joined by ": ". An S3 failure reads
/// `service error: unhandled error (SlowDown): Error { code: "SlowDown", message: "...",
/// aws_request_id: "..." }`: the SDK's own Display stops at "service error".
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut at = e.source();
    while let Some(source) = at {
        text = format!("{text}: {source}");
        at = source.source();
    }
    text
}

fn check(ok: bool, what: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(what().into())
    }
}

impl Run {
    /// The buffer's first `len` bytes.
    fn buffer(&self, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        self.exposed.mr().read(0, &mut v).expect("inside the buffer");
        v
    }

    /// PUTs `data` by RDMA (multipart above 8 MiB), sending it in the body where the server
    /// declines, again later while it is busy or its store full.
    async fn put(&mut self, key: &str, data: &[u8], n: usize) -> Result<()> {
        self.exposed.write(0, data)?;
        if data.len() > PART {
            return self.put_parts(key, data, n).await;
        }
        let sum = Digest::of(Algorithm::Crc64Nvme, data).header_value();
        let mut patience = Patience::new(key);
        loop {
            let (_guard, token) = self.exposed.mint_guarded(0, data.len(), Direction::Put)?;
            let text = common::spelled(&token, n as u64, self.port);
            let cap = Capture::default();
            let r = self
                .s3
                .put_object()
                .bucket(BUCKET)
                .key(key)
                .checksum_crc64_nvme(&sum)
                .customize()
                .rdma_token(text, &cap)
                .send()
                .await;
            let (seen, action) = cap.action(Direction::Put)?;
            if patience.refused(&r, None) {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
            match action {
                ClientAction::Done => {
                    r?;
                    check(seen.bytes.as_deref() == Some(&data.len().to_string()), || {
                        format!("{key}: PUT moved {:?} bytes", seen.bytes)
                    })?;
                    return Ok(());
                }
                ClientAction::SendBody => {
                    let s3 = &self.s3;
                    backing_off(None, || {
                        s3.put_object()
                            .bucket(BUCKET)
                            .key(key)
                            .checksum_crc64_nvme(&sum)
                            .body(ByteStream::from(data.to_vec()))
                            .send()
                    })
                    .await?;
                    return Ok(());
                }
                ClientAction::Retry => tokio::time::sleep(Duration::from_millis(20)).await,
                ClientAction::Failed | ClientAction::ReadBody => {
                    return Err(format!("{key}: PUT answered {seen:?}: {:?}", r.err()).into());
                }
            }
        }
    }

    /// A multipart upload: a token per 8 MiB part, each with its own checksum; each request
    /// sent again while the server answers SlowDown (its bounds reached by other clients).
    ///
    /// The server aborts an upload no request named for `--upload-idle-secs`; a machine busy
    /// enough can hold this client that long between two requests. A NoSuchUpload for our
    /// own upload is then taken as the server's right only if the time from the sending of
    /// the last request that named it to the answer that found it gone (more than the
    /// server's own measure of the silence) reached the idle time: the upload is made again
    /// (at most [`UPLOAD_TRIES`] times, counted). Sooner, the server aborted an upload in use:
    /// an error. So the verdict does not hang on the machine's load.
    async fn put_parts(&mut self, key: &str, data: &[u8], n: usize) -> Result<()> {
        // Every checksum first, the whole object's and each part's: no upload waits on them
        // (in a debug build on a busy machine an 8 MiB part's took seconds).
        let whole = Digest::of(Algorithm::Crc64Nvme, data).header_value();
        let sums: Vec<String> = data
            .chunks(PART)
            .map(|part| Digest::of(Algorithm::Crc64Nvme, part).header_value())
            .collect();
        for _ in 0..UPLOAD_TRIES {
            match self.put_parts_once(key, data, n, (&whole, &sums)).await? {
                Upload::Done => return Ok(()),
                Upload::Aborted { silent } if silent >= self.upload_idle => {
                    self.uploads_made_again += 1;
                    eprintln!(
                        "sdk_client {}: {key}: the upload was aborted as idle after up to {:.1} s unnamed (--upload-idle-secs {}): the machine held this client; made again",
                        self.id,
                        silent.as_secs_f64(),
                        self.upload_idle.as_secs()
                    );
                }
                Upload::Aborted { silent } => {
                    return Err(format!(
                        "{key}: the server aborted the upload as idle though a request named it at most {:.3} s before (--upload-idle-secs {})",
                        silent.as_secs_f64(),
                        self.upload_idle.as_secs()
                    )
                    .into())
                }
            }
        }
        Err(format!("{key}: the upload was aborted as idle {UPLOAD_TRIES} times").into())
    }

    /// One try at [`Run::put_parts`].
    async fn put_parts_once(
        &mut self,
        key: &str,
        data: &[u8],
        n: usize,
        (whole, sums): (&str, &[String]),
    ) -> Result<Upload> {
        let s3 = &self.s3;
        // When the request before this one that named the upload was sent (its last try; a
        // try refused SlowDown names it too), and when this one was: the server may have
        // found it idle only if the silence since `before` reached the idle time.
        let (before, named) = (
            std::cell::Cell::new(Instant::now()),
            std::cell::Cell::new(Instant::now()),
        );
        let name = || before.set(named.replace(Instant::now()));
        let up = backing_off(None, || s3.create_multipart_upload().bucket(BUCKET).key(key).send()).await?;
        let upload_id = up.upload_id().ok_or("no upload id")?.to_owned();
        let mut done = Vec::new();
        for (i, at) in (0..data.len()).step_by(PART).enumerate() {
            let len = PART.min(data.len() - at);
            let part = (i + 1) as i32;
            let sum = &sums[i];
            let (_guard, token) = self.exposed.mint_guarded(at, len, Direction::Put)?;
            let text = common::spelled(&token, (n + i) as u64, self.port);
            let cap = Capture::default();
            let out = backing_off(None, || {
                name();
                s3.upload_part()
                    .bucket(BUCKET)
                    .key(key)
                    .upload_id(&upload_id)
                    .part_number(part)
                    .checksum_crc64_nvme(sum)
                    .customize()
                    .rdma_token(text.clone(), &cap)
                    .send()
            })
            .await;
            if let Some(aborted) = gone(&out, before.get()) {
                return Ok(aborted);
            }
            let out = out?;
            let (seen, action) = cap.action(Direction::Put)?;
            check(action == ClientAction::Done, || format!("{key} part {part}: {seen:?}"))?;
            check(out.checksum_crc64_nvme() == Some(sum.as_str()), || {
                format!("{key} part {part}: checksum {:?}", out.checksum_crc64_nvme())
            })?;
            if let Some(stall) = self.stall_once.take() {
                tokio::time::sleep(stall).await;
            }
            done.push(
                CompletedPart::builder()
                    .part_number(part)
                    .set_e_tag(out.e_tag().map(str::to_owned))
                    .build(),
            );
        }
        let list = CompletedMultipartUpload::builder().set_parts(Some(done)).build();
        let out = backing_off(None, || {
            name();
            s3.complete_multipart_upload()
                .bucket(BUCKET)
                .key(key)
                .upload_id(&upload_id)
                .multipart_upload(list.clone())
                .send()
        })
        .await;
        if let Some(aborted) = gone(&out, before.get()) {
            return Ok(aborted);
        }
        let out = out?;
        check(out.checksum_crc64_nvme() == Some(whole), || {
            format!(
                "{key}: the whole object's checksum {:?}, mine {whole}",
                out.checksum_crc64_nvme()
            )
        })?;
        Ok(Upload::Done)
    }

    /// GETs `range` (None: all) of the object by RDMA into the buffer and checks it against
    /// `want`, and the checksum the server returns against the bytes that landed.
    async fn get(&mut self, key: &str, want: &[u8], range: Option<(usize, usize)>, n: usize) -> Result<()> {
        let (from, to) = range.unwrap_or((0, want.len()));
        let len = to - from;
        loop {
            self.exposed.write(0, &vec![0xa5; len.max(1)])?;
            let (guard, token) = self.exposed.mint_guarded(0, len.max(1), Direction::Get)?;
            let text = common::spelled(&token, n as u64, self.port);
            let cap = Capture::default();
            let mut req = self.s3.get_object().bucket(BUCKET).key(key);
            if range.is_some() {
                req = req.range(format!("bytes={from}-{}", to - 1));
            }
            // The checksum asked for by header, not `checksum_mode`: the SDK would check it
            // against the empty body.
            let r = req
                .customize()
                .rdma_token(text, &cap)
                .mutate_request(|req| {
                    req.headers_mut().insert(protocol::CHECKSUM_MODE_HEADER, "ENABLED");
                })
                .send()
                .await;
            drop(guard);
            let (seen, action) = cap.action(Direction::Get)?;
            let got = match action {
                ClientAction::Done => {
                    r?;
                    check(seen.bytes.as_deref() == Some(&len.to_string()), || {
                        format!("{key}: GET moved {:?} of {len}", seen.bytes)
                    })?;
                    self.buffer(len)
                }
                ClientAction::ReadBody => r?.body.collect().await?.into_bytes().to_vec(),
                ClientAction::Retry => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
                _ => return Err(format!("{key}: GET answered {seen:?}: {:?}", r.err()).into()),
            };
            check(got == want[from..to], || {
                format!("{key}: GET {from}..{to}: the bytes differ")
            })?;
            let sum = Digest::of(Algorithm::Crc64Nvme, &got).header_value();
            check(seen.crc64.as_deref() == Some(sum.as_str()), || {
                format!("{key}: GET checksum {:?}, of the bytes {sum}", seen.crc64)
            })?;
            if range.is_some() {
                let cr = format!("bytes {from}-{}/{}", to - 1, want.len());
                check(seen.status == 206 && seen.content_range.as_deref() == Some(&cr), || {
                    format!("{key}: ranged GET {seen:?}")
                })?;
            }
            return Ok(());
        }
    }

    /// Object `n`: PUT, HEAD, GET, ranged GET, DELETE; its size.
    async fn object(&mut self, n: usize, max: usize) -> Result<usize> {
        let size = size_of(n, self.id, max);
        let data = common::pattern(size, self.id << 32 | n as u64);
        let key = format!("c{}-{n}", self.id);
        self.put(&key, &data, n).await?;
        let head = self.s3.head_object().bucket(BUCKET).key(&key).send().await?;
        check(head.content_length() == Some(size as i64), || {
            format!("{key}: HEAD length {:?}", head.content_length())
        })?;
        self.get(&key, &data, None, n + 1).await?;
        let from = (n * 7919) % size;
        let to = from + 1 + (n * 104_729) % (size - from);
        self.get(&key, &data, Some((from, to)), n + 2).await?;
        self.s3.delete_object().bucket(BUCKET).key(&key).send().await?;
        Ok(size)
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let a = args()?;
    let url = match a.server.clone() {
        Some(u) => u,
        None => {
            let path = common::rendezvous_file().ok_or("--server URL, or run under scripts/soft-mlx5 --nodes")?;
            common::wait_for(&path, Duration::from_secs(120))?
        }
    };
    let ctx = mlx5dv::open_device(a.device.as_deref())?;
    let (mlx5, pd) = (ctx.mlx5()?, ctx.alloc_pd()?);
    let client = Client::new(&mlx5, &pd, a.key, ClientConfig::default())?;
    let exposed = client.expose(pd.register(vec![0u8; a.max_size.max(PART)], Access::LOCAL_WRITE)?)?;
    // S3's retries, backing off from 20 ms (not 1 s): the other clients' chaos holds the
    // server's bounds a moment at a time.
    let retry = RetryConfig::standard()
        .with_initial_backoff(Duration::from_millis(20))
        .with_max_backoff(Duration::from_secs(1));
    let s3 = sdk(&url, &a.access_key, &a.secret_key, retry);
    let _ = s3.create_bucket().bucket(BUCKET).send().await;
    let mut run = Run {
        s3,
        exposed,
        port: 1,
        id: a.id,
        upload_idle: Duration::from_secs(a.bounds.upload_idle_secs),
        uploads_made_again: 0,
        stall_once: None,
    };
    if a.chaos {
        chaos(&mut run, &a, &url)
            .await
            .map_err(|e| format!("client {}: chaos: {}", a.id, chain(&*e)))?;
    }
    let start = std::time::Instant::now();
    let (mut bytes, mut largest) = (0, 0);
    run.stall_once = (a.stall_once_secs > 0).then(|| Duration::from_secs(a.stall_once_secs));
    for n in 0..a.objects {
        let size = run
            .object(n, a.max_size)
            .await
            .map_err(|e| format!("client {}: object {n}: {}", a.id, chain(&*e)))?;
        bytes += size;
        largest = largest.max(size);
    }
    eprintln!(
        "sdk_client {}: {} objects, {} MiB in all, the largest {largest} B (PUT, HEAD, GET, ranged GET, DELETE) by RDMA, every byte and checksum checked, in {:.1} s; the longest a request waited for room: {:.1} s; uploads aborted as idle and made again: {}",
        a.id,
        a.objects,
        bytes >> 20,
        start.elapsed().as_secs_f64(),
        longest_wait().as_secs_f64(),
        run.uploads_made_again
    );
    if a.stall_once_secs > 0 {
        let want = usize::from(a.stall_once_secs >= a.bounds.upload_idle_secs);
        check(run.stall_once.is_none() && run.uploads_made_again == want, || {
            format!(
                "client {}: silent {} s once inside an upload (--upload-idle-secs {}): {} uploads made again, {want} expected{}",
                a.id,
                a.stall_once_secs,
                a.bounds.upload_idle_secs,
                run.uploads_made_again,
                if run.stall_once.is_some() { " (no multipart upload to stall)" } else { "" }
            )
        })?;
    }
    run.s3
        .delete_object()
        .bucket(BUCKET)
        .key(format!("goodbye-{}", a.id))
        .send()
        .await?;
    Ok(())
}

/// How the server refused a request: its HTTP status, S3 error code and message.
#[derive(Debug, Default)]
struct Refusal {
    status: u16,
    code: String,
    message: String,
}

impl Refusal {
    /// A refusal with this status and code.
    fn is(&self, status: u16, code: &str) -> bool {
        self.status == status && self.code == code
    }
}

/// The refusal of a request, None if it succeeded.
fn refusal<T, E: ProvideErrorMetadata>(r: std::result::Result<T, SdkError<E, HttpResponse>>) -> Option<Refusal> {
    let e = r.err()?;
    Some(Refusal {
        status: e.raw_response().map_or(0, |r| r.status().as_u16()),
        code: e.code().unwrap_or_default().to_owned(),
        message: e.message().unwrap_or_default().to_owned(),
    })
}

/// The upload aborted, if `r` is S3's 404 NoSuchUpload; the request that named it before was
/// sent at `named`.
fn gone<T, E: ProvideErrorMetadata>(
    r: &std::result::Result<T, SdkError<E, HttpResponse>>,
    named: Instant,
) -> Option<Upload> {
    let e = r.as_ref().err()?;
    let found = e.code() == Some("NoSuchUpload") && e.raw_response().is_some_and(|r| r.status().as_u16() == 404);
    found.then(|| Upload::Aborted {
        silent: named.elapsed(),
    })
}

/// The code of a refused request.
fn code_of(r: &Option<Refusal>) -> Option<&str> {
    r.as_ref().map(|r| r.code.as_str())
}

/// MinIO's code for a full store, which the s3s server answers with 507.
const STORAGE_FULL: &str = "XMinioStorageFull";

/// Whether a request was refused for room the other clients may hold a moment: S3's 503
/// SlowDown, or 507 storage full (client 1's chaos fills the store a moment); with a message
/// without `but` (if any).
fn refused_for_now<T, E: ProvideErrorMetadata>(
    r: &std::result::Result<T, SdkError<E, HttpResponse>>,
    but: Option<&str>,
) -> bool {
    r.as_ref().is_err_and(|e| {
        let status = e.raw_response().map(|r| r.status().as_u16());
        let code = e.code();
        ((code == Some(protocol::SLOW_DOWN) && status == Some(503))
            || (code == Some(STORAGE_FULL) && status == Some(507)))
            && but.is_none_or(|but| !e.message().unwrap_or_default().contains(but))
    })
}

/// How long one request has been refused for room ([`refused_for_now`]). It is sent again for
/// as long as the server refuses it so: no deadline, since the room another client's chaos
/// holds comes back when that case ends, however slow the machine (a deadline of a minute
/// failed a busy machine's CI run: client 1's store case holds the store about 50 s on an idle
/// one). A refusal that lasts is told every [`Patience::TELL`] with its code, message and
/// request id, so a leak shows as those lines and, at last, the run's own timeout. The longest
/// wait is kept for the client's closing line ([`longest_wait`]).
struct Patience<'a> {
    what: &'a str,
    start: Instant,
    told: Duration,
}

/// The longest a request of this client waited for room, in milliseconds.
static LONGEST_WAIT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The longest a request of this client waited for room (503 SlowDown, 507 storage full).
fn longest_wait() -> Duration {
    Duration::from_millis(LONGEST_WAIT_MS.load(std::sync::atomic::Ordering::Relaxed))
}

impl<'a> Patience<'a> {
    /// How often a refusal that lasts is told.
    const TELL: Duration = Duration::from_secs(30);

    fn new(what: &'a str) -> Self {
        Patience {
            what,
            start: Instant::now(),
            told: Duration::ZERO,
        }
    }

    /// Whether `r` is refused for room (but for a message naming `but`), to be sent again;
    /// tells a refusal that lasted another [`Patience::TELL`].
    fn refused<T, E: ProvideErrorMetadata>(
        &mut self,
        r: &std::result::Result<T, SdkError<E, HttpResponse>>,
        but: Option<&str>,
    ) -> bool {
        let Err(e) = r else { return false };
        if !refused_for_now(r, but) {
            return false;
        }
        let waited = self.start.elapsed();
        let ms = u64::try_from(waited.as_millis()).unwrap_or(u64::MAX);
        LONGEST_WAIT_MS.fetch_max(ms, std::sync::atomic::Ordering::Relaxed);
        if waited >= self.told + Self::TELL {
            self.told = waited;
            eprintln!(
                "sdk_client: {}: still refused after {:.0} s ({}); sending it again",
                self.what,
                waited.as_secs_f64(),
                refusal_text(e)
            );
        }
        true
    }
}

/// A refusal's HTTP status, S3 error code, message and request id, for a person to read.
fn refusal_text<E: ProvideErrorMetadata>(e: &SdkError<E, HttpResponse>) -> String {
    format!(
        "{} {}: {:?}, request id {}",
        e.raw_response().map_or(0, |r| r.status().as_u16()),
        e.code().unwrap_or("(no code)"),
        e.message().unwrap_or_default(),
        e.request_id().unwrap_or("(none)")
    )
}

/// Sends a request (`send` builds and sends it) again while the server answers 503
/// SlowDown, as S3 asks, or 507 storage full (see [`refused_for_now`]), backing off from
/// 20 ms to 1 s, for as long as it is so refused ([`Patience`]); a refusal whose message names
/// `but` is returned.
async fn backing_off<T, E, F, Fut>(but: Option<&str>, mut send: F) -> std::result::Result<T, SdkError<E, HttpResponse>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = std::result::Result<T, SdkError<E, HttpResponse>>>,
    E: ProvideErrorMetadata,
{
    let mut patience = Patience::new("a request");
    let mut pause = Duration::from_millis(20);
    loop {
        let r = send().await;
        if !patience.refused(&r, but) {
            return r;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(1));
    }
}

/// A PUT of `key` carrying `token` (no body), with `sum` as its CRC64NVME, the token changed
/// after signing with `tamper`, sent again while it is answered SlowDown or storage full (the
/// other clients' chaos reaching the server's bounds) but for one naming `but`: what came
/// back, and how it was refused.
async fn put_token(
    s3: &aws_sdk_s3::Client,
    key: &str,
    (token, sum): (String, Option<String>),
    tamper: bool,
    but: Option<&str>,
) -> (Seen, Option<Refusal>) {
    let cap = Capture::default();
    let r = backing_off(but, || {
        let mut op = s3
            .put_object()
            .bucket(BUCKET)
            .key(key)
            .set_checksum_crc64_nvme(sum.clone())
            .customize()
            .rdma_token(token.clone(), &cap);
        if tamper {
            op = op.interceptor(Tamper);
        }
        op.send()
    })
    .await;
    (cap.seen(), refusal(r))
}

impl Run {
    /// A GET of `key` carrying `token`: what came back, and the body.
    async fn get_token(&self, key: &str, token: String) -> Result<(Seen, Vec<u8>)> {
        let cap = Capture::default();
        let out = self
            .s3
            .get_object()
            .bucket(BUCKET)
            .key(key)
            .customize()
            .rdma_token(token, &cap)
            .send()
            .await?;
        Ok((cap.seen(), out.body.collect().await?.into_bytes().to_vec()))
    }
}

/// The answers the spec gives for what goes wrong, each checked once.
async fn chaos(run: &mut Run, a: &Args, url: &str) -> Result<()> {
    let data = common::pattern(4096, 99);
    let key = format!("c{}-chaos", a.id);
    run.put(&key, &data, 0).await?;
    // An invalid token: 400 InvalidRDMAToken, no reply header.
    let (s, code) = put_token(&run.s3, &key, ("0:nonsense".into(), None), false, None).await;
    check(
        s.status == 400 && s.reply.is_none() && code_of(&code) == Some(protocol::INVALID_TOKEN),
        || format!("an invalid token: {s:?} {code:?}"),
    )?;
    // A hipObject RC token: declined (200, reply 501); the GET is served in the body.
    let (guard, token) = run.exposed.mint_guarded(0, 4096, Direction::Get)?;
    let hip = common::spelled(&token, 3, run.port);
    drop(guard);
    let (s, body) = run.get_token(&key, format!("01{}", &hip[2..])).await?;
    let action = ClientAction::of(Direction::Get, s.status, Reply::parse(s.reply.as_deref())?);
    check(
        action == ClientAction::ReadBody && s.reply.as_deref() == Some("501"),
        || format!("an RC token: {s:?}"),
    )?;
    check(body == data, || "an RC token's GET: the body differs".into())?;
    // A dead client: a DCT of its own, destroyed, then named by tokens. PUT: 500
    // RDMATransferFailed; GET: 200, reply 501, the object in the body.
    let (put_text, get_text) = dead_client_tokens(run, a.key, 4096)?;
    let (s, code) = put_token(&run.s3, &key, (put_text, None), false, None).await;
    check(
        s.status == 500 && code_of(&code) == Some(protocol::TRANSFER_FAILED),
        || format!("a dead client's PUT: {s:?} {code:?}"),
    )?;
    let (s, body) = run.get_token(&key, get_text).await?;
    check(
        s.status == 200 && s.reply.as_deref() == Some("501") && body == data,
        || format!("a dead client's GET: {s:?}, the body the object's: {}", body == data),
    )?;
    // A checksum of other bytes: 400 BadDigest, the object unchanged.
    run.exposed.write(0, &data)?;
    let (id, token) = run.exposed.mint(0, 4096, Direction::Put)?;
    let other = Digest::of(Algorithm::Crc64Nvme, b"other bytes").header_value();
    let (s, code) = put_token(&run.s3, &key, (token.format()?, Some(other)), false, None).await;
    check(code_of(&code) == Some(protocol::BAD_DIGEST), || {
        format!("a wrong checksum: {s:?} {code:?}")
    })?;
    // SigV4 covers the token: one changed after signing, and a wrong secret, are refused.
    let (s, code) = put_token(&run.s3, &key, (token.format()?, None), true, None).await;
    check(code_of(&code) == Some("SignatureDoesNotMatch"), || {
        format!("a token changed after signing: {s:?} {code:?}")
    })?;
    run.exposed.revoke(id)?;
    let wrong = sdk(url, &a.access_key, "not-the-secret", RetryConfig::standard());
    let r = wrong.head_object().bucket(BUCKET).key(&key).send().await;
    check(r.is_err(), || "a wrong secret was accepted".into())?;
    let bounds = bounds_chaos::prove(run, a, url, &key, &data).await?;
    // And the server serves as before.
    run.put(&key, &data, 1).await?;
    run.get(&key, &data, None, 0).await?;
    run.s3.delete_object().bucket(BUCKET).key(&key).send().await?;
    eprintln!(
        "sdk_client {}: chaos: invalid token 400, RC token declined, dead client 500 / GET by body, BadDigest, tampered token and wrong secret 403: as the spec says; {bounds}",
        a.id
    );
    Ok(())
}

/// Tokens (PUT, GET) of `len` bytes of a client that no longer exists: a DCT of its own,
/// destroyed with its registration before the tokens are used.
fn dead_client_tokens(run: &Run, key: mlx5dv::DcKey, len: usize) -> Result<(String, String)> {
    let pd = run.exposed.mr().pd().clone();
    let dead = Client::new(&pd.context().mlx5()?, &pd, key, ClientConfig::default())?;
    let mut e = dead.expose(pd.register(vec![0u8; len], Access::LOCAL_WRITE)?)?;
    let (_, p) = e.mint(0, len, Direction::Put)?;
    let (_, g) = e.mint(0, len, Direction::Get)?;
    Ok((p.format()?, g.format()?))
    // `dead`, `e` and their registrations are destroyed here.
}
