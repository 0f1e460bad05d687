//! The object server on axum: in-memory objects, PUT, GET and ranged GET, over plain bodies
//! and over RDMA when the request carries `x-amz-rdma-token` (mlx5dv::s3::protocol says what
//! each outcome answers). `POST /_bye` counts clients that finished; the server stops after
//! `clients` of them.

use crate::rdma::{self, Object};
use crate::rdma_sync::{self, SyncPath};
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::{post, put};
use axum::Router;
use mlx5dv::s3::checksum::{self, Algorithm, Digest};
use mlx5dv::s3::protocol::{self, Outcome};
use mlx5dv::s3::{AsyncExecutor, Direction, RdmaToken};
use mlx5dv::{Access, Pd};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

/// A stored object: its region and its length (an empty object keeps a one-byte region).
#[derive(Clone)]
struct Stored {
    object: Object,
    len: usize,
}

struct Store {
    objects: RwLock<HashMap<String, Stored>>,
    pd: Pd,
    path: DataPath,
    byes: AtomicUsize,
    clients: usize,
    done: tokio::sync::Notify,
    rdma_moved: AtomicU64,
    plain: AtomicU64,
}

type Shared = Arc<Store>;

/// The RDMA data path the handlers use: the async executor (src/rdma.rs), or the sync one on
/// a thread of its own (src/rdma_sync.rs).
#[derive(Clone)]
pub enum DataPath {
    Async(AsyncExecutor),
    Sync(SyncPath),
}

impl DataPath {
    async fn put(&self, pd: &Pd, token: &RdmaToken) -> (Outcome, Option<Object>) {
        match self {
            DataPath::Async(exec) => rdma::put(exec, pd, token).await,
            DataPath::Sync(path) => rdma_sync::put(path, pd, token).await,
        }
    }

    async fn get(&self, token: &RdmaToken, object: &Object, at: usize, len: usize) -> Outcome {
        match self {
            DataPath::Async(exec) => rdma::get(exec, token, object, at, len).await,
            DataPath::Sync(path) => rdma_sync::get(path, token, object, at, len).await,
        }
    }
}

/// Serves on `listener` until `clients` clients said bye; returns the number of transfers
/// moved by RDMA and over plain bodies.
pub async fn serve(
    listener: tokio::net::TcpListener,
    pd: Pd,
    path: DataPath,
    clients: usize,
) -> std::io::Result<(u64, u64)> {
    let store = Arc::new(Store {
        objects: RwLock::new(HashMap::new()),
        pd,
        path,
        byes: AtomicUsize::new(0),
        clients,
        done: tokio::sync::Notify::new(),
        rdma_moved: AtomicU64::new(0),
        plain: AtomicU64::new(0),
    });
    let app = Router::new()
        .route("/_bye", post(bye))
        .route("/{*key}", put(put_object).get(get_object))
        .with_state(Arc::clone(&store));
    let stop = Arc::clone(&store);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { stop.done.notified().await })
        .await?;
    Ok((
        store.rdma_moved.load(Ordering::Relaxed),
        store.plain.load(Ordering::Relaxed),
    ))
}

async fn bye(State(store): State<Shared>) -> StatusCode {
    if store.byes.fetch_add(1, Ordering::SeqCst) + 1 >= store.clients {
        store.done.notify_one();
    }
    StatusCode::NO_CONTENT
}

fn token_of(headers: &HeaderMap) -> Option<Result<RdmaToken, Outcome>> {
    let value = headers.get(protocol::TOKEN_HEADER)?;
    let text = value.to_str().map_err(|_| Outcome::InvalidToken);
    Some(text.and_then(|t| RdmaToken::parse(t).map_err(|e| Outcome::of_token_error(&e))))
}

/// The response the protocol gives `outcome`, with `body` when it says the object goes in it,
/// and the bytes' checksum `sum` (a PUT's, echoed; a GET's range) when it succeeded.
fn answer(
    direction: Direction,
    range: Option<(usize, usize, usize)>,
    outcome: Outcome,
    sum: Option<Digest>,
    body: impl FnOnce() -> Vec<u8>,
) -> Response {
    let r = protocol::respond(direction, range.is_some(), outcome);
    let mut b = Response::builder().status(r.status);
    if let Some(reply) = r.reply {
        b = b.header(protocol::REPLY_HEADER, reply);
    }
    if let Some(n) = r.bytes_transferred {
        b = b.header(protocol::BYTES_TRANSFERRED_HEADER, n);
    }
    if let (Some((first, last, total)), 200..=299) = (range, r.status) {
        b = b.header("content-range", format!("bytes {first}-{last}/{total}"));
    }
    if let (Some(sum), 200..=299) = (sum, r.status) {
        b = b.header(sum.algorithm.header(), sum.header_value());
    }
    let body = match (r.body, r.error) {
        (protocol::Body::Object, _) => Body::from(body()),
        (protocol::Body::Error, Some((code, msg))) => Body::from(protocol::error_xml(code, msg)),
        _ => Body::empty(),
    };
    b.body(body).unwrap_or_else(|_| Response::new(Body::empty()))
}

fn store_bytes(pd: &Pd, bytes: &[u8]) -> Option<Stored> {
    let mut v = bytes.to_vec();
    if v.is_empty() {
        v.push(0);
    }
    let mr = pd.register(v, Access::LOCAL_WRITE).ok()?;
    Some(Stored {
        object: Arc::new(mr),
        len: bytes.len(),
    })
}

async fn put_object(State(store): State<Shared>, Path(key): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    let stored = match token_of(&headers) {
        Some(Ok(token)) => {
            // The request's checksum, refused before any byte moves when it is malformed.
            let expected = match checksum::requested(|h| headers.get(h).and_then(|v| v.to_str().ok())) {
                Ok(expected) => expected,
                Err(e) => return answer(Direction::Put, None, Outcome::of_checksum_error(&e), None, Vec::new),
            };
            let (outcome, object) = store.path.put(&store.pd, &token).await;
            let Some(object) = object else {
                return answer(Direction::Put, None, outcome, None, Vec::new);
            };
            // The bytes that moved, checksummed where they landed (no copy): the transfer
            // resolved, so nothing writes the object's region any more.
            let len = token.len as usize;
            let computed = expected.and_then(|d| Digest::of_region(d.algorithm, &object, 0, len).ok());
            let outcome = outcome.verified(expected, computed);
            if matches!(outcome, Outcome::Moved { .. }) {
                store.rdma_moved.fetch_add(1, Ordering::Relaxed);
                store
                    .objects
                    .write()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(key, Stored { object, len });
            }
            return answer(Direction::Put, None, outcome, computed, Vec::new);
        }
        Some(Err(outcome)) => return answer(Direction::Put, None, outcome, None, Vec::new),
        None => store_bytes(&store.pd, &body),
    };
    let Some(stored) = stored else {
        return status(StatusCode::INSUFFICIENT_STORAGE);
    };
    store.plain.fetch_add(1, Ordering::Relaxed);
    store
        .objects
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, stored);
    status(StatusCode::OK)
}

async fn get_object(State(store): State<Shared>, Path(key): Path<String>, headers: HeaderMap) -> Response {
    let Some(stored) = store
        .objects
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .cloned()
    else {
        return status(StatusCode::NOT_FOUND);
    };
    let asked = headers.get("range").map(HeaderValue::to_str);
    let range = match asked.map(|h| h.ok().and_then(|h| parse_range(h, stored.len))) {
        None => None,
        Some(Some(r)) => Some(r),
        Some(None) => return status(StatusCode::RANGE_NOT_SATISFIABLE),
    };
    let (at, len) = range.map_or((0, stored.len), |(a, b)| (a, b + 1 - a));
    let bytes = || {
        let mut v = vec![0u8; len];
        if len > 0 {
            // In range: checked above.
            let _ = stored.object.read(at, &mut v);
        }
        v
    };
    let content_range = range.map(|(a, b)| (a, b, stored.len));
    // The range's CRC64NVME when the client asks for it (x-amz-checksum-mode), read in place
    // from the object's region, which no transfer writes once stored.
    let mode = headers
        .get(protocol::CHECKSUM_MODE_HEADER)
        .and_then(|v| v.to_str().ok());
    let sum = || {
        protocol::checksum_mode_enabled(mode)
            .then(|| Digest::of_region(Algorithm::Crc64Nvme, &stored.object, at, len).ok())
            .flatten()
    };
    match token_of(&headers) {
        Some(Ok(token)) => {
            let outcome = if len == 0 {
                Outcome::Moved { bytes: 0 }
            } else {
                store.path.get(&token, &stored.object, at, len).await
            };
            if matches!(outcome, Outcome::Moved { .. }) {
                store.rdma_moved.fetch_add(1, Ordering::Relaxed);
            }
            answer(Direction::Get, content_range, outcome, sum(), bytes)
        }
        Some(Err(outcome)) => answer(Direction::Get, content_range, outcome, sum(), bytes),
        None => {
            store.plain.fetch_add(1, Ordering::Relaxed);
            let mut b = Response::builder().status(if range.is_some() { 206 } else { 200 });
            if let Some((a, z, total)) = content_range {
                b = b.header("content-range", format!("bytes {a}-{z}/{total}"));
            }
            b.body(Body::from(bytes()))
                .unwrap_or_else(|_| Response::new(Body::empty()))
        }
    }
}

fn status(code: StatusCode) -> Response {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = code;
    r
}

/// `bytes=a-b`, `bytes=a-`, `bytes=-n` of an object of `len` bytes: the inclusive range,
/// None when it is malformed or not satisfiable.
fn parse_range(h: &str, len: usize) -> Option<(usize, usize)> {
    let (a, b) = h.strip_prefix("bytes=")?.split_once('-')?;
    let last = len.checked_sub(1)?;
    let (first, end) = match (a.parse::<usize>(), b.parse::<usize>()) {
        (Ok(a), Ok(b)) => (a, b.min(last)),
        (Ok(a), Err(_)) if b.is_empty() => (a, last),
        (Err(_), Ok(n)) if a.is_empty() && n > 0 => (len.saturating_sub(n), last),
        _ => return None,
    };
    (first <= end).then_some((first, end))
}
