//! An S3 server on s3s with an RDMA data path (S3 over RDMA, NVIDIA's `RDMA_PROTOCOL_SPEC.md`
//! v1.0): objects in memory, each in memory registered for it, so a GET's bytes are written
//! to the client straight from the object and a PUT's land in the object's own memory (zero
//! copy). PUT, GET, ranged GET, HEAD, DELETE, multipart upload (a token per part), CRC64NVME
//! and CRC32C checksums, SigV4 (s3s verifies it; the token is a signed header), every decline
//! and error as the spec says (`mlx5dv::s3::protocol`).
//!
//! ```text
//! s3s_server [--listen ADDR] [--device NAME | --rdma-ip IP] [--sl N] [--traffic-class N]
//!            [--access-key K --secret-key S] [--key HEX] [--clients N]
//! ```
//! `--rdma-ip` picks the device, port and GID by the address (`mlx5dv::open_by_ip`), as
//! cuObject's `rdma_dev_addr_list` and libs3rdma's `server_init(ip)` do; `--sl` and
//! `--traffic-class` are the path settings of its requests (`ExecutorConfig::path`).
//! Under `scripts/soft-mlx5 --nodes N` it publishes its URL in the rendezvous directory and
//! serves until a client sends `DELETE /<bucket>/goodbye-<n>` for each of `--clients` clients.

use mlx5dv::s3::checksum::{self, Digest, Hasher};
use mlx5dv::s3::protocol::{self, Body as ReplyBody, Outcome};
use mlx5dv::s3::{AsyncConfig, AsyncExecutor, Direction, Executor, ExecutorConfig, RdmaToken};
use mlx5dv::{Access, Mr, Pd};
use s3s::dto::*;
use s3s::{S3Error, S3ErrorCode, S3Request, S3Response, S3Result, S3};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[path = "../../../../mlx5dv/examples/common/s3.rs"]
mod common;
#[path = "../../../../mlx5dv/examples/common/device.rs"]
mod device;

/// The largest object or part this server takes over RDMA (a token's buffer): larger ones are
/// declined (the client sends them in the body or in parts).
const MAX_RDMA: u64 = 64 << 20;

/// An object: its bytes in memory registered for it, shared by the GETs reading it.
struct Object {
    data: Arc<Mr<Vec<u8>>>,
    etag: String,
    crc64: Digest,
    modified: Timestamp,
    content_type: Option<String>,
}

/// A multipart upload's parts, by number.
#[derive(Default)]
struct Upload {
    key: String,
    parts: BTreeMap<i32, Arc<Object>>,
}

struct Server {
    exec: AsyncExecutor,
    pd: Pd,
    objects: Mutex<HashMap<String, Arc<Object>>>,
    uploads: Mutex<HashMap<String, Upload>>,
    next_upload: AtomicU64,
    goodbyes: AtomicU64,
    clients: u64,
    /// Notified once every client said goodbye.
    done: Arc<tokio::sync::Notify>,
}

fn name(bucket: &str, key: &str) -> String {
    format!("{bucket}/{key}")
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

/// Registers `len` bytes for an object or a part (local write: a PUT lands in it).
fn region(pd: &Pd, len: usize) -> S3Result<Mr<Vec<u8>>> {
    pd.register(vec![0u8; len], Access::LOCAL_WRITE)
        .map_err(|e| s3_error("InternalError", &format!("registering {len} bytes: {}", e.error()), 500))
}

/// The CRC64NVME of a region's bytes, read in cache-sized chunks.
fn crc64_of(mr: &Mr<Vec<u8>>) -> Digest {
    let mut h = Hasher::new(checksum::Algorithm::Crc64Nvme);
    let mut chunk = vec![0u8; 32 << 10];
    let mut at = 0;
    while at < mr.len() {
        let n = chunk.len().min(mr.len() - at);
        mr.read(at, &mut chunk[..n]).expect("inside the region");
        h.update(&chunk[..n]);
        at += n;
    }
    h.finish()
}

fn bytes_of(mr: &Mr<Vec<u8>>, range: std::ops::Range<usize>) -> Vec<u8> {
    let mut v = vec![0u8; range.len()];
    mr.read(range.start, &mut v).expect("inside the region");
    v
}

impl Server {
    /// A PUT or an UploadPart: its bytes, by RDMA when a token came (the token's whole buffer),
    /// else from the body; checked against the request's checksum. The object, or the answer.
    async fn receive<T>(
        &self,
        req: &S3Request<T>,
        body: Option<StreamingBlob>,
    ) -> S3Result<(Arc<Object>, Option<protocol::Response>)> {
        let expected =
            checksum::requested(|n| header(req, n)).map_err(|e| put_refused(Outcome::of_checksum_error(&e)))?;
        let content_type = header(req, "content-type").map(str::to_owned);
        let Some(text) = header(req, protocol::TOKEN_HEADER) else {
            let bytes = collect(body).await?;
            let mr = self.store_bytes(&bytes)?;
            return self.finish_put(mr, expected, content_type).map(|o| (o, None));
        };
        let token = match RdmaToken::parse(text) {
            Ok(t) if u64::from(t.len) <= MAX_RDMA => t,
            Ok(_) => return Err(put_refused(Outcome::Declined)),
            Err(e) => return Err(put_refused(Outcome::of_token_error(&e))),
        };
        let len = token.len as usize;
        let mr = region(&self.pd, len)?;
        let outcome = match self.exec.submit_region(&token, 0, Direction::Put, mr, 0, len) {
            Ok(t) => match t.await {
                // The bytes are in: checked against the request's checksum as a body's are.
                (done, mr) if done.is_ok() => {
                    let obj = self.finish_put(Arc::new(mr), expected, content_type)?;
                    let r = protocol::respond(Direction::Put, false, Outcome::of_done(&done));
                    return Ok((obj, Some(r)));
                }
                (done, _) => Outcome::of_done(&done),
            },
            Err(e) => Outcome::of_refusal(e.error()),
        };
        Err(put_refused(outcome))
    }

    /// The object `key` of `bucket`, or S3's NoSuchKey.
    fn object(&self, bucket: &str, key: &str) -> S3Result<Arc<Object>> {
        let obj = self.objects.lock().unwrap().get(&name(bucket, key)).cloned();
        obj.ok_or_else(no_such_key)
    }

    fn store_bytes(&self, bytes: &[u8]) -> S3Result<Arc<Mr<Vec<u8>>>> {
        let mut mr = region(&self.pd, bytes.len())?;
        mr.write(0, bytes).expect("the region is as long as the bytes");
        Ok(Arc::new(mr))
    }

    /// The object of a PUT or a part whose bytes are in `data`, once they match the request's
    /// checksum (`Outcome::verified`: else S3's BadDigest, nothing stored).
    fn finish_put(
        &self,
        data: Arc<Mr<Vec<u8>>>,
        expected: Option<Digest>,
        content_type: Option<String>,
    ) -> S3Result<Arc<Object>> {
        let crc64 = crc64_of(&data);
        let computed = expected.map(|want| {
            if want.algorithm == crc64.algorithm {
                crc64
            } else {
                Digest::of(want.algorithm, &bytes_of(&data, 0..data.len()))
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

async fn collect(body: Option<StreamingBlob>) -> S3Result<Vec<u8>> {
    use futures_util::StreamExt;
    let mut v = Vec::new();
    if let Some(mut body) = body {
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| s3_error("IncompleteBody", &e.to_string(), 400))?;
            v.extend_from_slice(&chunk);
        }
    }
    Ok(v)
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
        let (obj, reply) = self.receive(&req, body).await?;
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
            Some(r) => (
                r.check(len)
                    .map_err(|_| s3_error("InvalidRange", "The requested range is not satisfiable", 416))?,
                true,
            ),
            None => (0..len, false),
        };
        let n = (range.end - range.start) as usize;
        let mode = protocol::checksum_mode_enabled(header(&req, protocol::CHECKSUM_MODE_HEADER));
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
                Digest::of(
                    checksum::Algorithm::Crc64Nvme,
                    &bytes_of(&obj.data, range.start as usize..range.end as usize),
                )
            } else {
                obj.crc64
            }
        });
        out.checksum_crc64nvme = sum.map(|d| d.header_value());
        let outcome = match header(&req, protocol::TOKEN_HEADER) {
            None => None,
            Some(text) => Some(match RdmaToken::parse(text) {
                Err(e) => Outcome::of_token_error(&e),
                Ok(t) if (t.len as usize) < n || n as u64 > MAX_RDMA => Outcome::Declined,
                Ok(_) if n == 0 => Outcome::Moved { bytes: 0 },
                Ok(t) => {
                    match self
                        .exec
                        .submit_region(&t, 0, Direction::Get, Arc::clone(&obj.data), range.start as usize, n)
                    {
                        Ok(transfer) => Outcome::of_done(&transfer.await.0),
                        Err(e) => Outcome::of_refusal(e.error()),
                    }
                }
            }),
        };
        let status = if ranged { 206 } else { 200 };
        let Some(outcome) = outcome else {
            out.content_length = Some(n as i64);
            out.body = Some(StreamingBlob::from(s3s::Body::from(bytes_of(
                &obj.data,
                range.start as usize..range.end as usize,
            ))));
            let mut resp = S3Response::new(out);
            resp.status = Some(http_status(status));
            return Ok(resp);
        };
        match answer(Direction::Get, ranged, outcome) {
            Answer::Error(e) => Err(e),
            Answer::Reply(r) => {
                if r.body == ReplyBody::Object {
                    out.content_length = Some(n as i64);
                    out.body = Some(StreamingBlob::from(s3s::Body::from(bytes_of(
                        &obj.data,
                        range.start as usize..range.end as usize,
                    ))));
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
        let id = format!("upload-{}", self.next_upload.fetch_add(1, Ordering::Relaxed));
        let key = name(&req.input.bucket, &req.input.key);
        self.uploads.lock().unwrap().insert(
            id.clone(),
            Upload {
                key,
                parts: BTreeMap::new(),
            },
        );
        Ok(S3Response::new(CreateMultipartUploadOutput {
            bucket: Some(req.input.bucket),
            key: Some(req.input.key),
            upload_id: Some(id),
            ..Default::default()
        }))
    }

    async fn upload_part(&self, mut req: S3Request<UploadPartInput>) -> S3Result<S3Response<UploadPartOutput>> {
        if !self.uploads.lock().unwrap().contains_key(&req.input.upload_id) {
            return Err(s3_error("NoSuchUpload", "The specified upload does not exist.", 404));
        }
        let body = req.input.body.take();
        let (part, reply) = self.receive(&req, body).await?;
        let out = UploadPartOutput {
            e_tag: Some(ETag::Strong(part.etag.trim_matches('"').to_owned())),
            checksum_crc64nvme: Some(part.crc64.header_value()),
            ..Default::default()
        };
        let mut uploads = self.uploads.lock().unwrap();
        let upload = uploads
            .get_mut(&req.input.upload_id)
            .ok_or_else(|| s3_error("NoSuchUpload", "The upload was completed or aborted meanwhile.", 404))?;
        upload.parts.insert(req.input.part_number, part);
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
        let upload = self.uploads.lock().unwrap().remove(&req.input.upload_id);
        let upload = upload.ok_or_else(|| s3_error("NoSuchUpload", "The specified upload does not exist.", 404))?;
        let listed = req.input.multipart_upload.and_then(|m| m.parts).unwrap_or_default();
        let mut parts = Vec::with_capacity(listed.len());
        for p in &listed {
            let n = p.part_number.unwrap_or(0);
            let part = upload
                .parts
                .get(&n)
                .ok_or_else(|| s3_error("InvalidPart", &format!("part {n} was not uploaded"), 400))?;
            let etag = p.e_tag.as_ref().map(|e| e.value().to_owned());
            if etag.as_deref() != Some(part.etag.trim_matches('"')) {
                return Err(s3_error("InvalidPart", &format!("part {n}'s ETag differs"), 400));
            }
            parts.push(Arc::clone(part));
        }
        let total: usize = parts.iter().map(|p| p.data.len()).sum();
        let mut whole = region(&self.pd, total)?;
        let mut at = 0;
        for p in &parts {
            whole
                .write(at, &bytes_of(&p.data, 0..p.data.len()))
                .expect("inside the region");
            at += p.data.len();
        }
        let obj = self.finish_put(Arc::new(whole), None, None)?;
        let out = CompleteMultipartUploadOutput {
            bucket: Some(req.input.bucket.clone()),
            key: Some(req.input.key.clone()),
            e_tag: Some(ETag::Strong(format!("{}-{}", obj.etag.trim_matches('"'), parts.len()))),
            checksum_crc64nvme: Some(obj.crc64.header_value()),
            checksum_type: Some(ChecksumType::from_static(ChecksumType::FULL_OBJECT)),
            ..Default::default()
        };
        self.objects.lock().unwrap().insert(upload.key, obj);
        Ok(S3Response::new(out))
    }

    async fn abort_multipart_upload(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        self.uploads.lock().unwrap().remove(&req.input.upload_id);
        Ok(S3Response::new(AbortMultipartUploadOutput::default()))
    }
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
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        listen: "127.0.0.1:0".into(),
        device: None,
        rdma_ip: None,
        path: mlx5dv::s3::PathSettings::default(),
        access_key: "mlx5dv".into(),
        secret_key: "mlx5dv-secret".into(),
        key: common::DEFAULT_KEY,
        clients: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--listen" => a.listen = value()?,
            "--device" => a.device = Some(value()?),
            "--rdma-ip" => a.rdma_ip = Some(value()?.parse().map_err(|e| format!("--rdma-ip: {e}"))?),
            "--sl" => a.path.sl = value()?.parse().map_err(|e| format!("--sl: {e}"))?,
            "--traffic-class" => a.path.traffic_class = value()?.parse().map_err(|e| format!("--traffic-class: {e}"))?,
            "--access-key" => a.access_key = value()?,
            "--secret-key" => a.secret_key = value()?,
            "--key" => a.key = common::parse_key(&value()?)?,
            "--clients" => a.clients = value()?.parse().map_err(|e| format!("--clients: {e}"))?,
            _ => return Err(format!("unknown argument {flag}; usage: s3s_server [--listen ADDR] [--device NAME | --rdma-ip IP] [--sl N] [--traffic-class N] [--access-key K] [--secret-key S] [--key HEX] [--clients N]")),
        }
    }
    Ok(a)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let a = args()?;
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
        None => device::open(a.device.as_deref())?,
    };
    let (mlx5, pd) = (ctx.mlx5()?, ctx.alloc_pd()?);
    let (port, gid_index) = (cfg.pool.port, cfg.gid_index);
    // The RDMA data path: the executor, shared by every request's task; its driver sleeps in
    // tokio's reactor on the CQ's completion channel.
    let cq = ctx.create_cq_with_channel(cfg.cq_size())?;
    let exec = mlx5dv::s3::tokio::spawn(Executor::new(&mlx5, &pd, cq, cfg)?, AsyncConfig::default())?;
    let done = Arc::new(tokio::sync::Notify::new());
    let server = Server {
        exec: exec.clone(),
        pd,
        objects: Mutex::default(),
        uploads: Mutex::default(),
        next_upload: AtomicU64::new(1),
        goodbyes: AtomicU64::new(0),
        clients: a.clients,
        done: Arc::clone(&done),
    };
    let mut builder = s3s::service::S3ServiceBuilder::new(server);
    builder.set_auth(s3s::auth::SimpleAuth::from_single(a.access_key, a.secret_key));
    let service = builder.build();
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
    Ok(())
}
