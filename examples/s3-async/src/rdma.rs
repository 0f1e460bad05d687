//! The server's RDMA data path, from a request's token to its transfer's `Done`, wake-ups
//! included: the library's async executor on tokio moves the bytes straight between the
//! client's buffer and the object's own registered memory (no staging, no copy).

use mlx5dv::s3::protocol::Outcome;
use mlx5dv::s3::{tokio::spawn, AsyncConfig, AsyncExecutor, Direction, Executor, ExecutorConfig, RdmaToken, Tenant};
use mlx5dv::{Access, Context, DcKey, Mlx5Context, Mr, Pd};
use std::sync::Arc;

/// An object: its bytes in a region of their own (registered once, when stored).
pub type Object = Arc<Mr<Vec<u8>>>;

/// The executor, its CQ with a completion channel (to sleep on).
pub fn core(ctx: &Context, mlx5: &Mlx5Context, pd: &Pd, key: DcKey) -> mlx5dv::Result<Executor> {
    let mut cfg = ExecutorConfig {
        key,
        ..ExecutorConfig::default()
    };
    // A tenant (`--tenant ip`) may take half of the executor's transfers and half of its
    // strangers' share: on one emulated host every client is one tenant (127.0.0.1), whose
    // first contacts (a task each) must fit.
    (cfg.tenant_transfers, cfg.tenant_unproven) = (cfg.max_transfers / 2, cfg.unproven_transfers / 2);
    let cq = ctx.create_cq_with_channel(cfg.cq_size())?;
    Ok(Executor::new(mlx5, pd, cq, cfg)?)
}

/// The executor, shared by every request's task; its driver runs as a tokio task woken by
/// the CQ's completion channel.
pub fn executor(ctx: &Context, mlx5: &Mlx5Context, pd: &Pd, key: DcKey) -> mlx5dv::Result<AsyncExecutor> {
    spawn(core(ctx, mlx5, pd, key)?, AsyncConfig::default())
}

/// A new object's region for a PUT's bytes; None when there is nothing to move, or no memory
/// (send it in the body).
pub fn new_object(pd: &Pd, token: &RdmaToken) -> Option<Mr<Vec<u8>>> {
    let len = token.len as usize;
    (len > 0)
        .then(|| pd.register(vec![0u8; len], Access::LOCAL_WRITE).ok())
        .flatten()
}

/// PUT: the client's bytes RDMA-read into a new object's region; the object once they all
/// moved.
pub async fn put(exec: &AsyncExecutor, tenant: Tenant, pd: &Pd, token: &RdmaToken) -> (Outcome, Option<Object>) {
    let Some(region) = new_object(pd, token) else {
        return (Outcome::Declined, None);
    };
    let len = region.len();
    match exec.submit_region_for(tenant, token, 0, Direction::Put, region, 0, len) {
        Ok(transfer) => {
            let (done, region) = transfer.await;
            (Outcome::of_done(&done), done.is_ok().then(|| Arc::new(region)))
        }
        Err(refused) => (Outcome::of_refusal(refused.error()), None),
    }
}

/// GET (and ranged GET): `len` bytes at `at` of the object RDMA-written into the client's
/// buffer, the object shared with the other requests reading it meanwhile.
pub async fn get(
    exec: &AsyncExecutor,
    tenant: Tenant,
    token: &RdmaToken,
    object: &Object,
    at: usize,
    len: usize,
) -> Outcome {
    match exec.submit_region_for(tenant, token, 0, Direction::Get, Arc::clone(object), at, len) {
        Ok(transfer) => Outcome::of_done(&transfer.await.0),
        Err(refused) => Outcome::of_refusal(refused.error()),
    }
}
