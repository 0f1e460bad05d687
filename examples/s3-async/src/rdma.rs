//! The server's RDMA data path, from a request's token to its response: the library's async
//! executor on tokio moves the bytes straight between the client's buffer and the object's own
//! registered memory (no staging, no copy), and checks a PUT's checksum where its bytes landed.
//! `--data-path sync` runs the same transfers on the sync executor (src/rdma_sync.rs).

use crate::rdma_sync::{self, SyncPath};
use axum::response::Response;
use mlx5dv::s3::checksum::Digest;
use mlx5dv::s3::http as s3http;
use mlx5dv::s3::protocol::Outcome;
use mlx5dv::s3::{tokio::spawn, AsyncConfig, AsyncExecutor, Direction, Executor, ExecutorConfig, RdmaToken, Tenant};
use mlx5dv::{Context, DcKey, Mlx5Context, Mr, Pd};
use std::sync::Arc;

/// An object: its bytes in a region of their own (registered once, when stored).
pub type Object = Arc<Mr<Vec<u8>>>;

/// The executor, its CQ with a completion channel (to sleep on).
pub fn core(ctx: &Context, mlx5: &Mlx5Context, pd: &Pd, key: DcKey) -> mlx5dv::Result<Executor> {
    let cfg = ExecutorConfig {
        key,
        ..ExecutorConfig::default()
    };
    let cq = ctx.create_cq_with_channel(cfg.cq_size())?;
    Ok(Executor::new(mlx5, pd, cq, cfg)?)
}

/// The executor, shared by every request's task; its driver runs as a tokio task woken by
/// the CQ's completion channel.
pub fn executor(ctx: &Context, mlx5: &Mlx5Context, pd: &Pd, key: DcKey) -> mlx5dv::Result<AsyncExecutor> {
    spawn(core(ctx, mlx5, pd, key)?, AsyncConfig::default())
}

/// Which executor runs the transfers: the async one, or the sync one on a thread of its own.
#[derive(Clone)]
pub enum DataPath {
    Async(AsyncExecutor),
    Sync(SyncPath),
}

/// An RDMA PUT for `tenant` (its token and checksum, or the outcome a malformed one is answered) of at
/// most `max` bytes: its response, and the object when every byte moved into the object's
/// new region and matched the request's checksum there.
pub async fn put(
    path: &DataPath,
    tenant: Tenant,
    pd: &Pd,
    request: Result<(RdmaToken, Option<Digest>), Outcome>,
    max: usize,
) -> (Response, Option<Object>) {
    let (outcome, object, sum) = match (request, path) {
        (Err(outcome), _) => (outcome, None, None),
        (Ok((token, expected)), DataPath::Async(exec)) => {
            let got = exec.put_object(tenant, pd, &token, expected, max).await;
            (got.outcome, got.object.map(Arc::new), got.checksum)
        }
        (Ok((token, expected)), DataPath::Sync(sync)) => rdma_sync::put(sync, tenant, pd, &token, expected, max).await,
    };
    (s3http::answer(Direction::Put, None, outcome, sum, Vec::new), object)
}

/// An RDMA GET for `tenant` of `len` bytes at `at` of `object`: what the protocol answers.
pub async fn get(
    path: &DataPath,
    tenant: Tenant,
    token: Result<RdmaToken, Outcome>,
    object: &Object,
    at: usize,
    len: usize,
) -> Outcome {
    match (token, path) {
        (Err(outcome), _) => outcome,
        (Ok(token), DataPath::Async(exec)) => exec.get_object(tenant, &token, Arc::clone(object), at, len).await,
        (Ok(token), DataPath::Sync(sync)) => rdma_sync::get(sync, tenant, &token, object, at, len).await,
    }
}
