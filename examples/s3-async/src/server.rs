//! The object server on axum: in-memory objects, PUT, GET and ranged GET, over plain bodies
//! and over RDMA when the request carries `x-amz-rdma-token` (mlx5dv::s3::protocol says what
//! each outcome answers). `POST /_bye` counts clients that finished; the server stops after
//! `clients` of them.

use crate::rdma::{self, Object};
use crate::rdma_sync::{self, SyncPath};
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{post, put};
use axum::Router;
use mlx5dv::s3::checksum::{Algorithm, Digest};
use mlx5dv::s3::http::{self as s3http, ContentRange};
use mlx5dv::s3::protocol::{self, Outcome};
use mlx5dv::s3::{AsyncExecutor, Direction, RdmaToken, Tenant};
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
    /// `--tenant ip`: a request's tenant is its peer's IP address (else the default one).
    tenant_by_ip: bool,
}

impl Store {
    /// The tenant of a request from `peer`.
    fn tenant(&self, peer: std::net::SocketAddr) -> Tenant {
        if self.tenant_by_ip {
            Tenant::of(peer.ip().to_string().as_bytes())
        } else {
            Tenant::DEFAULT
        }
    }
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
    async fn put(&self, tenant: Tenant, pd: &Pd, token: &RdmaToken) -> (Outcome, Option<Object>) {
        match self {
            DataPath::Async(exec) => rdma::put(exec, tenant, pd, token).await,
            DataPath::Sync(path) => rdma_sync::put(path, tenant, pd, token).await,
        }
    }

    async fn get(&self, tenant: Tenant, token: &RdmaToken, object: &Object, at: usize, len: usize) -> Outcome {
        match self {
            DataPath::Async(exec) => rdma::get(exec, tenant, token, object, at, len).await,
            DataPath::Sync(path) => rdma_sync::get(path, tenant, token, object, at, len).await,
        }
    }
}

/// Serves on `listener` (plain bodies up to `max_body` bytes) until `clients` clients said
/// bye; returns the number of transfers moved by RDMA and over plain bodies.
pub async fn serve(
    listener: tokio::net::TcpListener,
    pd: Pd,
    path: DataPath,
    clients: usize,
    max_body: usize,
    tenant_by_ip: bool,
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
        tenant_by_ip,
    });
    // axum refuses bodies past 2 MiB (413) unless told: plain PUTs here carry whole objects,
    // up to the largest RDMA size, so the limit is set to it. An RDMA PUT's body is empty.
    let app = Router::new()
        .route("/_bye", post(bye))
        .route("/{*key}", put(put_object).get(get_object))
        .layer(DefaultBodyLimit::max(max_body))
        .with_state(Arc::clone(&store));
    let stop = Arc::clone(&store);
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
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

/// The response the protocol gives `outcome` (`s3::http::response`: status, reply, bytes
/// moved, Content-Range, the checksum `sum` when it succeeded), with `body` when it says the
/// object goes in it.
fn answer(
    direction: Direction,
    range: Option<ContentRange>,
    outcome: Outcome,
    sum: Option<Digest>,
    body: impl FnOnce() -> Vec<u8>,
) -> Response {
    s3http::response(
        &protocol::respond(direction, range.is_some(), outcome),
        range,
        sum,
        body,
    )
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

async fn put_object(
    State(store): State<Shared>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    Path(key): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let stored = match s3http::request_token(&headers) {
        Some(Ok(token)) => {
            // The request's checksum, refused before any byte moves when it is malformed.
            let expected = match s3http::request_checksum(&headers) {
                Ok(expected) => expected,
                Err(e) => return answer(Direction::Put, None, Outcome::of_checksum_error(&e), None, Vec::new),
            };
            let (outcome, object) = store.path.put(store.tenant(peer), &store.pd, &token).await;
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

async fn get_object(
    State(store): State<Shared>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    Path(key): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(stored) = store
        .objects
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .cloned()
    else {
        return status(StatusCode::NOT_FOUND);
    };
    let Ok(range) = s3http::range(&headers, stored.len as u64) else {
        return status(StatusCode::RANGE_NOT_SATISFIABLE);
    };
    let (at, len) = range.map_or((0, stored.len), |r| (r.first as usize, r.len() as usize));
    let bytes = || {
        let mut v = vec![0u8; len];
        if len > 0 {
            // In range: checked above.
            let _ = stored.object.read(at, &mut v);
        }
        v
    };
    // The range's CRC64NVME when the client asks for it (x-amz-checksum-mode), read in place
    // from the object's region, which no transfer writes once stored.
    let sum = || {
        s3http::checksum_mode(&headers)
            .then(|| Digest::of_region(Algorithm::Crc64Nvme, &stored.object, at, len).ok())
            .flatten()
    };
    match s3http::request_token(&headers) {
        Some(Ok(token)) => {
            let outcome = if len == 0 {
                Outcome::Moved { bytes: 0 }
            } else {
                store
                    .path
                    .get(store.tenant(peer), &token, &stored.object, at, len)
                    .await
            };
            if matches!(outcome, Outcome::Moved { .. }) {
                store.rdma_moved.fetch_add(1, Ordering::Relaxed);
            }
            answer(Direction::Get, range, outcome, sum(), bytes)
        }
        Some(Err(outcome)) => answer(Direction::Get, range, outcome, sum(), bytes),
        None => {
            store.plain.fetch_add(1, Ordering::Relaxed);
            let mut b = Response::builder().status(if range.is_some() { 206 } else { 200 });
            if let Some(r) = range {
                b = b.header("content-range", format!("bytes {}-{}/{}", r.first, r.last, r.total));
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
