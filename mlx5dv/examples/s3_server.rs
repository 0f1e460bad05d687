//! An S3-subset object server whose data path is S3 over RDMA: PUT, GET, ranged GET, DELETE
//! of objects in memory, over HTTP (tiny_http), the bytes moved by an [`Executor`] over a
//! pool of DCIs when the request carries an `x-amz-rdma-token`.
//!
//! Every answer to a request with a token is the one `mlx5dv::s3::protocol::respond` gives
//! (NVIDIA's `RDMA_PROTOCOL_SPEC.md` v1.0); the token is read by `RdmaToken::parse` in any
//! client's form (the reference's, NIXL's and minio-cpp's nine fields, hipObject's):
//! - PUT with a token: the body is empty; the server RDMA-reads the token's buffer (its whole
//!   length is the object) and answers `200` with `x-amz-rdma-reply: 200`,
//!   `x-amz-rdma-bytes-transferred` and the ETag.
//! - GET with a token: the server RDMA-writes the object (or the `Range` asked for, answering
//!   `206` with `Content-Range`) into the token's buffer and answers with an empty body.
//! - Declined (`200` with `x-amz-rdma-reply: 501`): a token the server cannot serve (a
//!   hipObject RC token, a token without a GID on RoCE), an object larger than the token's
//!   buffer or than the server's staging buffers, or `--no-rdma`. A PUT's body is an S3 error
//!   (`RDMANotSupported`, the reason in its message): the client sends the bytes in the body;
//!   a GET's body is the object (or its range).
//! - Invalid token (a malformed one): `400` `InvalidRDMAToken` (the field and the rule in the
//!   message), without the reply header.
//! - Failed after acceptance (the token lied: remote access error; the client is gone or
//!   expects another DC key: retry exceeded): a PUT is `500` `RDMATransferFailed` (the cause in
//!   the message); a GET recovers through the body (`200` or `206`, reply `501`, the object).
//!   Nothing else is affected.
//! - Busy: a client that has not answered yet while the strangers' share of the staging
//!   slots is in use: `503` `SlowDown` (S3 clients send it again).
//! - Checksums (spec 5): a PUT's `x-amz-checksum-crc64nvme` or `-crc32c` is checked against
//!   the bytes read by RDMA, summed while they are copied out of the staging slot (no second
//!   pass): a mismatch is `400` `BadDigest` and nothing is stored; a malformed header, or two,
//!   `400` `InvalidRequest`; a success echoes the header. A GET with `x-amz-checksum-mode:
//!   ENABLED` is answered with `x-amz-checksum-crc64nvme` of the bytes moved (summed while
//!   they are copied into the staging slot, or into the body).
//! - Without a token: plain S3, the bytes in the body (a PUT's checksum header checked too).
//!
//! One thread owns the executor and the staging buffers (the data path); HTTP worker threads
//! hand it the RDMA requests over a channel and write its answers themselves: the data path
//! never writes to a socket, so a client that does not read its responses (each connection's
//! responses go out in request order) stalls nobody else's transfers. Clients are released
//! once idle for a second.
//!
//! ```text
//! s3_server [--listen ADDR:PORT] [--publish FILE] [--clients N] [-d DEVICE] [-p PORT]
//!           [-g GID_INDEX] [--key HEX] [--dcis N] [--slots N] [--max-object BYTES] [--no-rdma]
//!           [--policy dcs|dcs-quota|rand|streams] [--tenant none|ip|addr]
//! ```
//! `--tenant`: what names a request's tenant (`mlx5dv::s3::Tenant`, issue 45): `ip` the
//! peer's IP address, `addr` its address and port (each connection a tenant), `none` (the
//! default) every request the default tenant's. Tenants share the DCIs by deficit round
//! robin, each at most `ExecutorConfig::tenant_transfers` transfers (a quarter of the slots
//! here) and `tenant_unproven` of strangers (a quarter of the strangers' share); past them
//! its request is answered 503 (SlowDown).
//! `--policy`: the DCI pool's assignment policy (default dcs). A quarter of the staging slots
//! (at least one) may serve clients that have not answered yet
//! (`ExecutorConfig::unproven_transfers`); a stranger's request past that is answered 503
//! (SlowDown) at once, never queued ahead of other clients' requests.
//! `--clients N`: exit once N clients said goodbye (`POST /_bye`), checking that every
//! endpoint and address handle was released (exit status 1 if not). Under
//! scripts/soft-mlx5-nodes the address is published to the rendezvous directory.
//! Two terminals on one emulated fabric:
//! `scripts/soft-mlx5 --node 0 -- target/debug/examples/s3_server --listen 127.0.0.1:9000` and
//! `scripts/soft-mlx5 --node 1 -- target/debug/examples/s3_client --server http://127.0.0.1:9000`.
use mlx5dv::s3::checksum::{self, Algorithm, Digest, Hasher};
use mlx5dv::s3::protocol::{
    self, Body, Outcome, BYTES_TRANSFERRED_HEADER, CHECKSUM_MODE_HEADER, REPLY_HEADER, TOKEN_HEADER,
};
use mlx5dv::s3::{Direction, Done, Executor, ExecutorConfig, RdmaToken, Tenant};
use mlx5dv::{Access, DcKey, Mr};
use std::collections::{HashMap, VecDeque};
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tiny_http::{Header, Method, Request, Response, Server};

#[path = "common/s3.rs"]
mod s3;

const USAGE: &str =
    "s3_server [--listen ADDR:PORT] [--publish FILE] [--clients N] [-d DEVICE] [-p PORT] [-g GID_INDEX] \
                     [--key HEX] [--dcis N] [--slots N] [--max-object BYTES] [--no-rdma] \
                     [--policy dcs|dcs-quota|rand|streams] [--tenant none|ip|addr]";

struct Opts {
    listen: String,
    publish: Option<std::path::PathBuf>,
    clients: Option<usize>,
    device: Option<String>,
    port: u8,
    gid_index: Option<u8>,
    key: DcKey,
    dcis: usize,
    slots: usize,
    max_object: usize,
    rdma: bool,
    policy: mlx5dv::Policy,
    tenant: TenantBy,
}

/// What names a request's tenant (`--tenant`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum TenantBy {
    None,
    Ip,
    Addr,
}

impl TenantBy {
    fn of(self, peer: Option<&std::net::SocketAddr>) -> Tenant {
        match (self, peer) {
            (TenantBy::Ip, Some(a)) => Tenant::of(a.ip().to_string().as_bytes()),
            (TenantBy::Addr, Some(a)) => Tenant::of(a.to_string().as_bytes()),
            _ => Tenant::DEFAULT,
        }
    }
}

type Store = Arc<Mutex<HashMap<String, Arc<Vec<u8>>>>>;

type Answer = Response<std::io::Cursor<Vec<u8>>>;

/// Where the data path sends a request's answer: the HTTP worker that holds the request
/// waits for it and writes it.
type Reply = mpsc::Sender<Answer>;

/// What the HTTP workers hand the data path.
enum Job {
    Transfer(Transfer),
    Bye(Reply),
    Stats(Reply),
}

/// A PUT or GET with a token, to move by RDMA.
struct Transfer {
    req: Reply,
    /// Whose request (`--tenant`).
    tenant: Tenant,
    key: String,
    token: RdmaToken,
    dir: Direction,
    /// GET: the `Range` header.
    range: Option<String>,
    /// PUT: the checksum the request carries, to check the bytes read against.
    expected: Option<Digest>,
    /// GET: `x-amz-checksum-mode: ENABLED`, the answer carries the checksum of the bytes.
    checksum: bool,
}

/// A transfer in flight: where to answer, and what.
struct Running {
    req: Reply,
    slot: usize,
    key: String,
    /// GET: the object and the range asked for (its bytes go in the body if RDMA fails).
    get: Option<GetOf>,
    /// PUT: the checksum the request carries.
    expected: Option<Digest>,
}

/// A GET's object and the inclusive range of it asked for (None: all of it).
struct GetOf {
    obj: Arc<Vec<u8>>,
    range: Option<(u64, u64)>,
    /// The request asked for the checksum (`x-amz-checksum-mode: ENABLED`).
    checksum: bool,
    /// The checksum of the bytes asked for, once summed (as they were staged).
    sum: Option<Digest>,
}

impl GetOf {
    /// The bytes asked for.
    fn part(&self) -> &[u8] {
        match self.range {
            Some((a, b)) => &self.obj[a as usize..=b as usize],
            None => &self.obj,
        }
    }
}

/// The object `key` and the range the `Range` header `h` asks for, or the plain S3 answer
/// (404, 416) when there is none.
fn get_of(store: &Store, key: &str, h: Option<&str>, checksum: bool) -> Result<GetOf, Answer> {
    let Some(obj) = store.lock().unwrap().get(key).cloned() else {
        return Err(Response::from_string("NoSuchKey").with_status_code(404));
    };
    match range(h, obj.len() as u64) {
        Err(()) => Err(Response::from_string("InvalidRange").with_status_code(416)),
        Ok(range) => Ok(GetOf {
            obj,
            range,
            checksum,
            sum: None,
        }),
    }
}

/// The answer `mlx5dv::s3::protocol` gives for a request with a token moving bytes `dir`
/// whose outcome is `outcome`: its status and headers, the GET's ETag and Content-Range, and
/// the body it says (the object's bytes asked for, or an S3 error whose message ends with
/// `why`), with the checksum header of the bytes when it succeeds: `sum` (a PUT's, checked),
/// or a GET's when asked for (summed as the bytes were staged, or copied into the body).
fn rdma_answer(dir: Direction, get: Option<&GetOf>, outcome: Outcome, why: &str, sum: Option<Digest>) -> Answer {
    let ranged = get.is_some_and(|g| g.range.is_some());
    let r = protocol::respond(dir, ranged, outcome);
    let mut sum = sum.or(get.and_then(|g| g.sum));
    let body = match (r.body, r.error, get) {
        (Body::Object, _, Some(g)) if g.checksum => {
            let mut h = Hasher::new(Algorithm::Crc64Nvme);
            let mut v = vec![0u8; g.part().len()];
            h.copy(&mut v, g.part());
            sum = Some(h.finish());
            v
        }
        (Body::Object, _, Some(g)) => g.part().to_vec(),
        (Body::Error, Some((code, message)), _) => protocol::error_xml(code, &format!("{message}: {why}")).into_bytes(),
        _ => Vec::new(),
    };
    let mut resp = Response::from_data(body).with_status_code(r.status);
    if let Some(v) = r.reply {
        resp = resp.with_header(header(REPLY_HEADER, v));
    }
    if let Some(n) = r.bytes_transferred {
        resp = resp.with_header(header(BYTES_TRANSFERRED_HEADER, &n.to_string()));
    }
    if let (Some(d), 200..=299) = (sum, r.status) {
        resp = resp.with_header(header(d.algorithm.header(), &d.header_value()));
    }
    if r.body == Body::Error {
        resp = resp.with_header(header("Content-Type", "application/xml"));
    }
    if let (Some(g), 200..=299) = (get, r.status) {
        resp = resp.with_header(header("ETag", &s3::etag(&g.obj)));
        if let Some((a, b)) = g.range {
            resp = resp.with_header(header("Content-Range", &format!("bytes {a}-{b}/{}", g.obj.len())));
        }
    }
    resp
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("ASCII header")
}

/// The value of `req`'s header `name` (any case).
fn header_of<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.headers()
        .iter()
        .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str())
}

/// Whether a GET asks for the checksum of its bytes.
fn checksum_mode(req: &Request) -> bool {
    protocol::checksum_mode_enabled(header_of(req, CHECKSUM_MODE_HEADER))
}

fn token_of(req: &Request) -> Option<String> {
    req.headers()
        .iter()
        .find(|h| h.field.equiv(TOKEN_HEADER))
        .map(|h| h.value.as_str().to_string())
}

/// Answers `req`, ignoring a client that went away meanwhile.
fn answer(req: Request, resp: Answer) {
    let _ = req.respond(resp);
}

/// Answers handed to workers and not yet written: the server waits for them before it exits
/// (else the last client's goodbye could go unanswered).
static UNSENT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Hands the answer to the worker holding the request (it never blocks the data path).
fn reply(to: Reply, resp: Answer) {
    UNSENT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    if to.send(resp).is_err() {
        UNSENT.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

fn range_of(req: &Request) -> Option<String> {
    req.headers()
        .iter()
        .find(|h| h.field.equiv("range"))
        .map(|h| h.value.as_str().to_string())
}

/// `bytes=a-b`, `bytes=a-`, `bytes=-n` (the `Range` header `h`) of an object of `len` bytes:
/// the inclusive range.
fn range(h: Option<&str>, len: u64) -> Result<Option<(u64, u64)>, ()> {
    let Some(h) = h else {
        return Ok(None);
    };
    let spec = h.strip_prefix("bytes=").ok_or(())?;
    let (a, b) = spec.split_once('-').ok_or(())?;
    let (first, last) = match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(a), Ok(b)) => (a, b.min(len.saturating_sub(1))),
        (Ok(a), Err(_)) if b.is_empty() => (a, len.saturating_sub(1)),
        (Err(_), Ok(n)) if a.is_empty() && n > 0 => (len.saturating_sub(n), len.saturating_sub(1)),
        _ => return Err(()),
    };
    if len == 0 || first > last || first >= len {
        return Err(());
    }
    Ok(Some((first, last)))
}

/// An HTTP worker: plain S3 requests are answered here, RDMA ones go to the data path.
fn worker(http: Arc<Server>, store: Store, jobs: mpsc::Sender<Job>, rdma: bool, tenant_by: TenantBy) {
    while let Ok(mut req) = http.recv() {
        let path = req.url().split('?').next().unwrap_or("").to_string();
        let key = path.trim_start_matches('/').to_string();
        let token = token_of(&req);
        let (to, from) = mpsc::channel();
        let job = match (req.method(), path.as_str(), token) {
            (Method::Post, "/_bye", _) => Job::Bye(to),
            (Method::Get, "/_stats", _) => Job::Stats(to),
            (_, _, _) if key.is_empty() => {
                answer(req, Response::from_string("no object named").with_status_code(400));
                continue;
            }
            (Method::Put, _, Some(t)) | (Method::Get, _, Some(t)) => {
                let dir = if *req.method() == Method::Put {
                    Direction::Put
                } else {
                    Direction::Get
                };
                let parsed = if rdma {
                    RdmaToken::parse(&t).map_err(|e| (protocol::Outcome::of_token_error(&e), e.to_string()))
                } else {
                    Err((Outcome::Declined, "this server does not serve RDMA (--no-rdma)".into()))
                };
                match (parsed, dir) {
                    (Ok(token), Direction::Put) => match checksum::requested(|n| header_of(&req, n)) {
                        Ok(expected) => Job::Transfer(Transfer {
                            req: to,
                            tenant: tenant_by.of(req.remote_addr()),
                            key,
                            token,
                            dir,
                            range: None,
                            expected,
                            checksum: false,
                        }),
                        Err(e) => {
                            let outcome = Outcome::of_checksum_error(&e);
                            answer(req, rdma_answer(dir, None, outcome, &e.to_string(), None));
                            continue;
                        }
                    },
                    (Ok(token), Direction::Get) => Job::Transfer(Transfer {
                        req: to,
                        tenant: tenant_by.of(req.remote_addr()),
                        key,
                        token,
                        dir,
                        range: range_of(&req),
                        expected: None,
                        checksum: checksum_mode(&req),
                    }),
                    (Err((outcome, why)), Direction::Get) if outcome != Outcome::InvalidToken => {
                        // Declined: the object goes in the body.
                        match get_of(&store, &key, range_of(&req).as_deref(), checksum_mode(&req)) {
                            Ok(g) => answer(req, rdma_answer(dir, Some(&g), outcome, &why, None)),
                            Err(resp) => answer(req, resp),
                        }
                        continue;
                    }
                    (Err((outcome, why)), _) => {
                        answer(req, rdma_answer(dir, None, outcome, &why, None));
                        continue;
                    }
                }
            }
            (Method::Put, _, None) => {
                let sum = checksum::requested(|n| header_of(&req, n));
                let mut body = Vec::new();
                if req.as_reader().read_to_end(&mut body).is_err() {
                    continue;
                }
                // The body's checksum, as S3 checks it (here after the read: the bytes came
                // through the socket, not a copy this server makes).
                let outcome = match sum {
                    Err(e) => Some((Outcome::of_checksum_error(&e), e.to_string())),
                    Ok(Some(want)) if Digest::of(want.algorithm, &body) != want => Some((
                        Outcome::BadDigest {
                            algorithm: want.algorithm,
                        },
                        format!("the body's {}", Digest::of(want.algorithm, &body)),
                    )),
                    Ok(_) => None,
                };
                if let Some((outcome, why)) = outcome {
                    answer(req, rdma_answer(Direction::Put, None, outcome, &why, None));
                    continue;
                }
                let tag = s3::etag(&body);
                store.lock().unwrap().insert(key, Arc::new(body));
                answer(req, Response::from_data(Vec::new()).with_header(header("ETag", &tag)));
                continue;
            }
            (Method::Get, _, None) => {
                let obj = store.lock().unwrap().get(&key).cloned();
                match obj {
                    None => answer(req, Response::from_string("NoSuchKey").with_status_code(404)),
                    Some(obj) => match range(range_of(&req).as_deref(), obj.len() as u64) {
                        Err(()) => answer(req, Response::from_string("InvalidRange").with_status_code(416)),
                        Ok(None) => {
                            let tag = s3::etag(&obj);
                            answer(req, Response::from_data(obj.to_vec()).with_header(header("ETag", &tag)));
                        }
                        Ok(Some((a, b))) => {
                            let cr = format!("bytes {a}-{b}/{}", obj.len());
                            let part = obj[a as usize..=b as usize].to_vec();
                            answer(
                                req,
                                Response::from_data(part)
                                    .with_status_code(206)
                                    .with_header(header("Content-Range", &cr)),
                            );
                        }
                    },
                }
                continue;
            }
            (Method::Delete, _, _) => {
                let gone = store.lock().unwrap().remove(&key).is_some();
                answer(
                    req,
                    Response::from_data(Vec::new()).with_status_code(if gone { 204 } else { 404 }),
                );
                continue;
            }
            _ => {
                answer(req, Response::from_string("NotImplemented").with_status_code(501));
                continue;
            }
        };
        if jobs.send(job).is_err() {
            return;
        }
        // The data path's answer (it drops the sender only when it exits).
        if let Ok(resp) = from.recv() {
            answer(req, resp);
            UNSENT.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

struct DataPath {
    exec: Executor,
    slots: Vec<Mr<Vec<u8>>>,
    free: Vec<usize>,
    waiting: VecDeque<Job>,
    running: HashMap<u64, Running>,
    next_id: u64,
    store: Store,
    max_object: usize,
    byes: usize,
    ok: u64,
    failed: u64,
    declined: u64,
    /// PUTs whose bytes did not match their checksum (refused, 400 BadDigest).
    bad_digests: u64,
}

impl DataPath {
    /// Starts `job`'s transfer; gives it back when it must wait (no staging slot, or the
    /// executor is full).
    fn start(&mut self, job: Job) -> Option<Job> {
        let t = match job {
            Job::Transfer(t) => t,
            Job::Bye(req) => {
                self.byes += 1;
                reply(req, Response::from_data(Vec::new()).with_status_code(204));
                return None;
            }
            Job::Stats(req) => {
                let s = self.exec.stats();
                let text = format!(
                    "clients={} address_handles={} in_flight={} submitted={} messages={} replays={} released={}\n",
                    self.exec.clients(),
                    self.exec.address_handles(),
                    self.exec.in_flight(),
                    s.submitted,
                    s.messages,
                    s.replays,
                    s.released
                );
                reply(req, Response::from_string(text));
                return None;
            }
        };
        let dir = t.dir;
        let Some(&slot) = self.free.last() else {
            return Some(Job::Transfer(t));
        };
        let (len, get) = if dir == Direction::Put {
            (t.token.len as usize, None)
        } else {
            let mut g = match get_of(&self.store, &t.key, t.range.as_deref(), t.checksum) {
                Ok(g) => g,
                Err(resp) => {
                    reply(t.req, resp);
                    return None;
                }
            };
            let n = g.part().len();
            if n == 0 {
                // An empty object: nothing to move (204, no bytes).
                reply(t.req, rdma_answer(dir, Some(&g), Outcome::Moved { bytes: 0 }, "", None));
                return None;
            }
            if n > t.token.len as usize {
                self.declined += 1;
                let why = "the token's buffer is smaller than the object: it is in the body";
                reply(t.req, rdma_answer(dir, Some(&g), Outcome::Declined, why, None));
                return None;
            }
            if n <= self.max_object {
                let staging = &mut self.slots[slot];
                if t.checksum {
                    // Summed while staged: each chunk right after its copy.
                    g.sum = s3::write_summed(g.part(), Algorithm::Crc64Nvme, |at, c| staging.write(at, c)).ok();
                } else {
                    let _ = staging.write(0, g.part());
                }
            }
            (n, Some(g))
        };
        if len > self.max_object {
            self.declined += 1;
            let why = "the object is larger than the server's staging buffers";
            reply(t.req, rdma_answer(dir, get.as_ref(), Outcome::Declined, why, None));
            return None;
        }
        let id = self.next_id;
        let sge = self.slots[slot]
            .sge(0, len)
            .expect("a staging slot holds max_object bytes");
        match self.exec.tenant(t.tenant).submit(id, &t.token, 0, dir, sge) {
            Ok(()) => {}
            Err(e) if e.is_would_block() => {
                return Some(Job::Transfer(t));
            }
            Err(e) if e.errno() == Some(libc::EBUSY) => {
                // A stranger (its DCT has not answered yet) while the strangers' share of the
                // slots is in use: refused at once, not queued ahead of other clients.
                self.declined += 1;
                reply(t.req, rdma_answer(dir, None, Outcome::Busy, &e.to_string(), None));
                return None;
            }
            Err(e) => {
                // What the executor cannot do for this token (no GID on RoCE, ...).
                self.declined += 1;
                reply(
                    t.req,
                    rdma_answer(dir, get.as_ref(), Outcome::Declined, &e.to_string(), None),
                );
                return None;
            }
        }
        self.next_id += 1;
        self.free.pop();
        self.running.insert(
            id,
            Running {
                req: t.req,
                slot,
                key: t.key,
                get,
                expected: t.expected,
            },
        );
        None
    }

    fn finish(&mut self, d: &Done) {
        let Some(r) = self.running.remove(&d.id) else {
            return;
        };
        self.free.push(r.slot);
        let dir = if r.get.is_some() {
            Direction::Get
        } else {
            Direction::Put
        };
        let outcome = Outcome::of_done(d);
        if !d.is_ok() {
            self.failed += 1;
            let why = match &d.error {
                Some(e) => format!("{:?}, {}: {e}", d.status, protocol::failure_cause(d.status)),
                None => format!("{:?}, {}", d.status, protocol::failure_cause(d.status)),
            };
            reply(r.req, rdma_answer(dir, r.get.as_ref(), outcome, &why, None));
            return;
        }
        if r.get.is_none() {
            // Out of the staging slot, summed as it is copied (spec 3.1: validated before
            // it is stored).
            let mut obj = vec![0u8; d.bytes as usize];
            let staging = &self.slots[r.slot];
            let computed = match r.expected {
                Some(want) => s3::read_summed(&mut obj, want.algorithm, |at, c| staging.read(at, c)).ok(),
                None => {
                    let _ = staging.read(0, &mut obj);
                    None
                }
            };
            let outcome = outcome.verified(r.expected, computed);
            if let Outcome::BadDigest { .. } = outcome {
                self.bad_digests += 1;
                let why = match computed {
                    Some(c) => format!("the {} bytes read by RDMA have {c}", d.bytes),
                    None => "the bytes read by RDMA could not be summed".into(),
                };
                reply(r.req, rdma_answer(dir, None, outcome, &why, None));
                return;
            }
            self.ok += 1;
            let tag = s3::etag(&obj);
            self.store.lock().unwrap().insert(r.key, Arc::new(obj));
            reply(
                r.req,
                rdma_answer(dir, None, outcome, "", computed).with_header(header("ETag", &tag)),
            );
        } else {
            self.ok += 1;
            reply(r.req, rdma_answer(dir, r.get.as_ref(), outcome, "", None));
        }
    }
}

fn serve(o: Opts) -> Result<(), String> {
    let http = Arc::new(Server::http(&o.listen).map_err(|e| format!("listen on {}: {e}", o.listen))?);
    let url = format!("http://{}", http.server_addr().to_ip().ok_or("not an IP listener")?);
    println!(
        "s3_server: listening on {url} (RDMA {})",
        if o.rdma { "on" } else { "off" }
    );
    let store: Store = Arc::default();
    let (tx, rx) = mpsc::channel();
    // A worker waits for each RDMA request's answer: as many as the transfers at once, and more.
    for _ in 0..o.slots.max(8) + 16 {
        let (http, store, tx) = (http.clone(), store.clone(), tx.clone());
        std::thread::spawn(move || worker(http, store, tx, o.rdma, o.tenant));
    }
    let ctx = mlx5dv::open_device(o.device.as_deref()).map_err(|e| e.to_string())?;
    let mlx5 = ctx.mlx5().map_err(|e| e.to_string())?;
    let pd = ctx.alloc_pd().map_err(|e| e.to_string())?;
    let mut cfg = ExecutorConfig {
        key: o.key,
        gid_index: o.gid_index,
        max_transfers: o.slots,
        unproven_transfers: (o.slots / 4).max(1),
        tenant_transfers: (o.slots / 4).max(1),
        tenant_unproven: (o.slots / 16).max(1),
        ..ExecutorConfig::default()
    };
    (cfg.pool.dcis, cfg.pool.port, cfg.pool.policy) = (o.dcis, o.port, o.policy);
    let cq = ctx.create_cq(cfg.cq_size()).map_err(|e| e.to_string())?;
    let mut exec = Executor::new(&mlx5, &pd, cq, cfg).map_err(|e| e.to_string())?;
    let mut slots = Vec::new();
    for _ in 0..o.slots {
        let mr = pd
            .register(vec![0u8; o.max_object], Access::LOCAL_WRITE)
            .map_err(|e| e.to_string())?;
        exec.hold(&mr).map_err(|e| e.to_string())?;
        slots.push(mr);
    }
    // Published only now: a client that finds the address finds a server ready to move bytes.
    if let Some(path) = &o.publish {
        s3::publish(path, &url)?;
    }
    let mut dp = DataPath {
        exec,
        free: (0..slots.len()).rev().collect(),
        slots,
        waiting: VecDeque::new(),
        running: HashMap::new(),
        next_id: 0,
        store,
        max_object: o.max_object,
        byes: 0,
        ok: 0,
        failed: 0,
        declined: 0,
        bad_digests: 0,
    };
    let mut done = vec![Done::default(); 32];
    let mut last_work = Instant::now();
    loop {
        // New requests: block briefly when nothing is in flight.
        let first = if dp.running.is_empty() && dp.waiting.is_empty() {
            rx.recv_timeout(Duration::from_millis(50)).ok()
        } else {
            rx.try_recv().ok()
        };
        if let Some(job) = first {
            dp.waiting.push_back(job);
            dp.waiting.extend(rx.try_iter());
        }
        while let Some(job) = dp.waiting.pop_front() {
            if let Some(job) = dp.start(job) {
                dp.waiting.push_front(job);
                break;
            }
            last_work = Instant::now();
        }
        // A poll error loses nothing (a recovery that failed is tried again by the next
        // poll): say so, and go on serving.
        let n = match dp.exec.poll(&mut done) {
            Ok(n) => n,
            Err(e) => {
                eprintln!("s3_server: {e}");
                std::thread::sleep(Duration::from_millis(10));
                0
            }
        };
        for d in &done[..n] {
            dp.finish(d);
            last_work = Instant::now();
        }
        if dp.running.is_empty() && last_work.elapsed() > Duration::from_secs(1) && dp.exec.clients() > 0 {
            // Clients idle for a second: their endpoints and address handles go.
            dp.exec.release_idle();
        }
        if o.clients.is_some_and(|c| dp.byes >= c) && dp.running.is_empty() && dp.waiting.is_empty() {
            dp.exec.release_idle();
            let s = dp.exec.stats();
            println!(
                "s3_server: {} clients done: transfers ok={} failed={} declined={} bad_digest={} messages={} \
                 replays={}; endpoints left {}, address handles left {}, released {}",
                dp.byes,
                dp.ok,
                dp.failed,
                dp.declined,
                dp.bad_digests,
                s.messages,
                s.replays,
                dp.exec.clients(),
                dp.exec.address_handles(),
                s.released
            );
            // The workers write the answers handed to them (the last goodbye's among them).
            let deadline = Instant::now() + Duration::from_secs(5);
            while UNSENT.load(std::sync::atomic::Ordering::SeqCst) > 0 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            if dp.exec.clients() != 0 || dp.exec.address_handles() != 0 {
                return Err("endpoints or address handles were not released".into());
            }
            return Ok(());
        }
    }
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        listen: "127.0.0.1:0".into(),
        publish: s3::rendezvous_file(),
        clients: None,
        device: None,
        port: 1,
        gid_index: None,
        key: s3::DEFAULT_KEY,
        dcis: 4,
        slots: 16,
        max_object: 8 << 20,
        rdma: true,
        policy: mlx5dv::Policy::Dcs,
        tenant: TenantBy::None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value ({USAGE})"));
        let num = |v: String| v.parse::<u64>().map_err(|e| format!("{a}: {e}"));
        match a.as_str() {
            "--listen" => o.listen = value()?,
            "--publish" => o.publish = Some(value()?.into()),
            "--clients" => o.clients = Some(num(value()?)? as usize),
            "-d" => o.device = Some(value()?),
            "-p" => o.port = num(value()?)? as u8,
            "-g" => o.gid_index = Some(num(value()?)? as u8),
            "--key" => o.key = s3::parse_key(&value()?)?,
            "--dcis" => o.dcis = num(value()?)? as usize,
            "--slots" => o.slots = num(value()?)? as usize,
            "--max-object" => o.max_object = num(value()?)? as usize,
            "--no-rdma" => o.rdma = false,
            "--policy" => {
                o.policy = match value()?.as_str() {
                    "dcs" => mlx5dv::Policy::Dcs,
                    "dcs-quota" => mlx5dv::Policy::DcsQuota { quota: 16 },
                    "rand" => mlx5dv::Policy::Rand { seed: 1 },
                    "streams" => mlx5dv::Policy::Streams {
                        log_concurrent: 2,
                        log_errored: 1,
                    },
                    p => return Err(format!("--policy {p}: dcs, dcs-quota, rand or streams ({USAGE})")),
                }
            }
            "--tenant" => {
                o.tenant = match value()?.as_str() {
                    "none" => TenantBy::None,
                    "ip" => TenantBy::Ip,
                    "addr" => TenantBy::Addr,
                    t => return Err(format!("--tenant {t}: none, ip or addr ({USAGE})")),
                }
            }
            other => return Err(format!("unknown argument {other} ({USAGE})")),
        }
    }
    if o.clients.is_none() {
        // Under scripts/soft-mlx5-nodes: every other node is a client.
        o.clients = std::env::var("SOFT_MLX5_NODES")
            .ok()
            .and_then(|n| n.parse::<usize>().ok())
            .map(|n| n - 1);
    }
    Ok(o)
}

fn main() -> ExitCode {
    match parse().and_then(serve) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("s3_server: {e}");
            ExitCode::FAILURE
        }
    }
}
