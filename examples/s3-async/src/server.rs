//! The object server on axum: in-memory objects, PUT, GET and ranged GET, over plain bodies
//! and over RDMA when the request carries `x-amz-rdma-token` (mlx5dv::s3::protocol says what
//! each outcome answers). `POST /_bye` counts clients that finished; the server stops after
//! `clients` of them.

use crate::rdma::{self, DataPath, Object};
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{post, put};
use axum::Router;
use mlx5dv::s3::http as s3http;
use mlx5dv::s3::protocol::Outcome;
use mlx5dv::s3::{Direction, Tenant};
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
    /// The largest object (and RDMA PUT) taken.
    max: usize,
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

    fn insert(&self, key: String, stored: Stored) {
        let mut objects = self.objects.write().unwrap_or_else(|p| p.into_inner());
        objects.insert(key, stored);
    }
}

type Shared = Arc<Store>;

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
        max: max_body,
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
    let stored = match s3http::put_request(&headers) {
        Some(request) => {
            let (response, object) = rdma::put(&store.path, store.tenant(peer), &store.pd, request, store.max).await;
            if let Some(object) = object {
                store.rdma_moved.fetch_add(1, Ordering::Relaxed);
                let len = object.len();
                store.insert(key, Stored { object, len });
            }
            return response;
        }
        None => store_bytes(&store.pd, &body),
    };
    let Some(stored) = stored else {
        return status(StatusCode::INSUFFICIENT_STORAGE);
    };
    store.plain.fetch_add(1, Ordering::Relaxed);
    store.insert(key, stored);
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
    if let Some(token) = s3http::request_token(&headers) {
        let outcome = rdma::get(&store.path, store.tenant(peer), token, &stored.object, at, len).await;
        if matches!(outcome, Outcome::Moved { .. }) {
            store.rdma_moved.fetch_add(1, Ordering::Relaxed);
        }
        let sum = s3http::response_checksum(&headers, &stored.object, at, len);
        return s3http::answer(Direction::Get, range, outcome, sum, bytes);
    }
    store.plain.fetch_add(1, Ordering::Relaxed);
    let mut b = Response::builder().status(if range.is_some() { 206 } else { 200 });
    if let Some(r) = range {
        b = b.header("content-range", format!("bytes {}-{}/{}", r.first, r.last, r.total));
    }
    b.body(Body::from(bytes()))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

fn status(code: StatusCode) -> Response {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = code;
    r
}
