//! The server's side: tokens executed over a pool of DCIs ([`Executor`], whose documentation
//! says how).

use super::keyed_hash::KeyedHash;
use super::path::PathSettings;
use super::resolver::Resolver;
use super::{Direction, RdmaToken};
use crate::addr::{Mtu, RemoteMemory};
use crate::ah::Ah;
use crate::cq::{Cq, WcStatus};
use crate::dc::{DcKey, DcPeer, Mlx5Context};
use crate::endpoint::{DciPool, EndpointId, EpCompletion, PoolConfig, Probation, Request};
use crate::error::{Error, Result};
use crate::mr::{Access, BoundedBuffer, Held, Mr, Returned, Sge};
use crate::pd::Pd;
use crate::qp::RtsAttr;
use crate::DcTargetAddr;
use mlx5dv_raw as raw;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod clients;
mod config;
mod lru;
mod paths;
mod standing;
mod tenants;
mod transfers;

use clients::{ClientEp, ClientKey, PathAh, PathKey};
pub use config::ExecutorConfig;
use lru::Lru;
use standing::Standing;
pub use tenants::Tenant;
use tenants::Tenants;
pub use transfers::Done;
use transfers::{State, Transfer};

/// Counters of an executor's work.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecutorStats {
    /// Transfers submitted.
    pub submitted: u64,
    /// Transfers finished (reported or not).
    pub finished: u64,
    /// Of them, failed.
    pub failed: u64,
    /// Messages (RDMA reads and writes) posted.
    pub messages: u64,
    /// Endpoints released (idle or gone clients).
    pub released: u64,
    /// Transfers run again because another transfer's failure at the same client flushed
    /// one of their messages.
    pub replays: u64,
    /// Clients that left probation: a message of theirs completed.
    pub proven: u64,
    /// Transfers of clients on probation that failed (dead or forged tokens among them).
    pub unproven_failed: u64,
    /// Submits refused because `unproven_transfers` transfers of clients on probation were
    /// running.
    pub unproven_refused: u64,
    /// Transfers failed because their path's address handle could not be made (RoCE: the
    /// neighbour never answered).
    pub unresolved: u64,
    /// Kept clients sent back to probation: idle longer than
    /// [`ExecutorConfig::proven_idle`] when their next transfer came.
    pub demoted: u64,
    /// Submits refused because their [`Tenant`] had [`ExecutorConfig::tenant_transfers`]
    /// transfers not yet finished, or [`ExecutorConfig::tenant_unproven`] of clients on
    /// probation running.
    pub tenant_refused: u64,
    /// Clients given a new endpoint on the proven DCIs, not on probation: their endpoint had
    /// been released, and their standing said they answered within
    /// [`ExecutorConfig::proven_idle`] and their last transfer did not time out.
    pub recalled: u64,
}

/// Executes S3-over-RDMA tokens over a pool of DCIs.
///
/// An [`Executor`] takes transfers (a token, an offset into its buffer, a direction, a local
/// buffer and the caller's id) from any number of clients at once and moves the bytes with
/// RDMA reads (PUT) and writes (GET) over a [`DciPool`]: a transfer longer than the message
/// limit is split; the address handle of a path (a LID, or a GID on RoCE) is created once and
/// shared by every client behind it; each transfer completes once, as a [`Done`] with the
/// caller's id, the bytes moved and the status. A client that fails (gone: retry exceeded; a
/// lying token: remote access error) fails its own transfer only: the pool recovers its DCI
/// and the other clients' transfers go on. The same client's other transfers that were
/// pipelined behind the failing one come back flushed (they may have executed, so the pool
/// does not post them again); the executor runs such a transfer again from its start, since
/// an RDMA read or write of the same bytes is harmless to repeat, once nothing of that client
/// is outstanding ahead of it (twice at most, counted in [`ExecutorStats::replays`]).
///
/// # Strangers: clients that have not answered yet
/// A token is untrusted input: it may name a DCT that is gone, that never existed, or that
/// expects another key. A request to such a client is never answered and holds the DCI it is
/// on for every ACK timeout (`RtsAttr` 14 and 7 retries: 8 x 67 ms), while under `Dcs` no other
/// client can use that DCI, and under `Rand` or `Streams` the requests bound to it wait behind
/// it. So a client is *on probation* until one of its messages completes: its transfers run
/// on DCIs of their own ([`crate::Probation`], `ExecutorConfig::pool.probation`: by default 2
/// more DCIs, with an ACK timeout of 16.8 ms and 3 retries, so a client that never answers
/// gives one back after 67 ms), and at most [`ExecutorConfig::unproven_transfers`] transfers
/// of clients on probation run at once (a submit past that is refused with EBUSY, counted in
/// [`ExecutorStats::unproven_refused`]). Once a message of a client completes it is *proven*
/// ([`ExecutorStats::proven`]): its transfers go to the pool's other DCIs, which no stranger
/// ever posts on. Forged tokens therefore cost proven clients nothing, under every pool
/// policy; they compete only with other clients' first contacts. The costs: the probation
/// DCIs (their send queues count against the CQ), a first transfer whose client answers more
/// slowly than the probation timeout fails (it fails, it is not retried on the other DCIs),
/// a new client may wait behind strangers for a probation DCI (or be refused while
/// `unproven_transfers` of theirs run). A client's standing outlives its endpoint: a proven
/// client whose endpoint was released (idle past `keep_idle`) gets its next endpoint on the
/// proven DCIs ([`ExecutorStats::recalled`]) if it answered within `proven_idle` and its last
/// transfer did not time out ([`ExecutorConfig::remembered_clients`]). A proof is not banked:
/// a client whose next transfer comes more than [`ExecutorConfig::proven_idle`] (2 s) after
/// its last one finished, kept idle or remembered, is back on probation until a message of it
/// completes again (a kept one counted in [`ExecutorStats::demoted`]), and so is one whose last
/// transfer timed out (retry exceeded), at once; so clients that answered once, were kept, and then died
/// (an attacker's DCTs, each proven by one small request) fail on the probation DCIs, not on
/// the ones proven clients share. What remains: a client that dies within `proven_idle` of
/// its last answer (or while busy) holds a proven DCI for the full retry time once, as any
/// client that dies does.
///
/// # Tenants: every class of DCI shared fairly
/// Each submission is for a [`Tenant`], an opaque key the server chooses (the request's SigV4
/// access key, the peer's address: [`Tenant::of`]); [`Executor::tenant`] names it, and the
/// calls that name none ([`Executor::submit`], [`Executor::submit_region`],
/// [`Executor::submit_str`], the async layer's) are [`Tenant::DEFAULT`]'s. A transfer waits in
/// its tenant's queue for its class of DCI (probation or proven), and the DCIs of a class are
/// shared between the tenants with transfers waiting for them by deficit round robin: the
/// tenants take turns, each posting a message a turn (up to
/// [`ExecutorConfig::tenant_quantum`], 64 KiB; a longer message costs it turns in
/// proportion), and when a DCI of the class gives room the next tenant in turn takes it. So
/// one tenant's dead, forged or proven-then-dead tokens, wrong keys or huge transfers delay
/// that tenant's transfers, and another tenant's by at most a turn: under `Dcs` an honest
/// transfer that finds every DCI of its class held waits for the next one freed (one dead
/// client's retry time at most: 67 ms on probation by default) and is posted before any
/// other transfer of the tenants ahead of it in the ring, never behind their queues. Only
/// the tenants with transfers waiting are visited (nothing scans the tenants or the
/// clients). Each tenant but the default one is bounded: at most
/// [`ExecutorConfig::tenant_transfers`] (32) of its transfers unfinished and
/// [`ExecutorConfig::tenant_unproven`] (8) of them of clients on probation; past either its
/// submit is refused with EBUSY naming the bound ([`ExecutorStats::tenant_refused`]: answer
/// HTTP 503 Slow Down). And it has at most [`ExecutorConfig::tenant_inflight`] (4) messages
/// outstanding in a class: the rest wait in its queue, not in a DCI's send queue, where under
/// `Rand` and `Streams` (whose DCIs take whatever is posted on them and run it in order) an
/// honest request would wait behind all of them. The default tenant is bounded by the
/// executor's tables only (and, while other tenants wait in a class, to as many messages
/// outstanding there as the class has DCIs), as before tenants: a server that names none gets
/// one queue in submission order. What it does not do: the executor's own bounds
/// (`max_transfers`, `unproven_transfers`) are shared first come, so more tenants at their
/// bounds than those tables hold still fill them (size the tables, or bound the tenants a
/// server admits, for the cluster); and a tenant alone in its class uses every DCI of it (the
/// scheduler does not keep a DCI idle), so a newcomer waits for one to be freed: its median
/// is one dead client's retry time, not its own round trip. Under `Streams` a request of an
/// honest client can still be flushed by other clients' failures on its DCI more often than
/// it is run again (see [`Done::status`], `WrFlushErr`).
///
/// The first-contact (probation) DCIs are `ExecutorConfig::pool.probation`: how many
/// (`dcis`, 2 by default) and their ACK timeout and retries (`rts`); set them for the
/// number of strangers a server expects at once (their send queues count against the CQ:
/// [`ExecutorConfig::cq_size`]).
///
/// # New paths on RoCE
/// On RoCE the address handle of a new GID makes the kernel resolve the neighbour, which for
/// an address that never answers takes a second (`rdma_resolve_ip`'s timeout). Threads of
/// the executor's make those handles, one per path being resolved, concurrently (so a silent
/// neighbour delays only the transfers to its own path, and a new client's handle is made
/// within about one resolution however many silent paths were asked before it; the paths
/// being resolved are bounded by `unproven_transfers`, and so the threads):
/// [`Executor::submit`] only asks, and the transfers of a path being resolved wait (counted
/// among the strangers' `unproven_transfers`) until its handle is made, then run; if it
/// cannot be made they finish with `GeneralErr` and the kernel's error (ETIMEDOUT: the
/// neighbour never answered), counted in [`ExecutorStats::unresolved`], and the path is
/// remembered for 10 s (at most `unproven_transfers` paths): a transfer to it submitted
/// meanwhile is refused at once with that error, so a silent neighbour costs one resolution,
/// not one per token. On InfiniBand a handle names a LID and is made at once.
///
/// Clients come and go: endpoints and address handles are caches. An endpoint is released
/// when its client has no transfer left, except that up to [`ExecutorConfig::keep_idle`] idle
/// clients are kept, least recently used first out, for clients that come back; an address
/// handle no endpoint uses is kept for the next client behind its path (a host), up to
/// [`ExecutorConfig::kept_address_handles`], least recently used first out;
/// [`Executor::release_idle`] releases both. A client whose last transfer ended in
/// retry-exceeded (dead, or presenting another key), or that never answered, is never kept
/// and not remembered. What a released client earned is remembered apart, in a table of at
/// most [`ExecutorConfig::remembered_clients`] entries (when it last answered: 28 bytes a
/// client, see the field), which forgets the oldest half at once when full and what is
/// stale as it goes. Every table is bounded at creation (the paths being resolved by
/// `unproven_transfers`): a server that runs for ever does not grow past them.
///
/// Used from one thread at a time (`Send`): submit and poll from the thread that serves the
/// HTTP requests' data path.
pub struct Executor {
    /// First: dropped (its DCIs destroyed) before `transfers` lets go of lent regions.
    pool: DciPool,
    pd: Pd,
    port: u8,
    /// The GID index to send from, on RoCE.
    sgid_index: Option<u8>,
    /// What the requests' headers carry.
    path: PathSettings,
    mtu: Mtu,
    key: DcKey,
    max_message: u64,
    keep_idle: usize,
    transfers: Vec<Transfer>,
    free: Vec<u32>,
    /// The tenants with transfers not yet finished, and their transfers with messages not
    /// yet posted (a flow per tenant and class of DCI, in the order they came), in turn.
    tenants: Tenants,
    /// [`ExecutorConfig::tenant_quantum`].
    quantum: i64,
    tenant_transfers: usize,
    tenant_unproven: usize,
    /// DCIs by class (`[proven, on probation]`): while others wait, the default tenant's
    /// messages outstanding in a class are at most that many.
    class_dcis: [usize; 2],
    /// [`ExecutorConfig::tenant_inflight`].
    tenant_inflight: usize,
    /// Finished transfers, in the order they finished, to report.
    finished: VecDeque<u32>,
    clients: HashMap<ClientKey, ClientEp, KeyedHash>,
    /// What is remembered of clients whose endpoints were released: their standing.
    standing: Standing,
    /// Address handles, how many clients use each, and the unused ones kept.
    ahs: HashMap<PathKey, PathAh, KeyedHash>,
    /// Idle clients kept (`keep_idle`), least recently used first.
    idle: Lru<ClientKey>,
    /// Address handles no client uses, kept ([`ExecutorConfig::kept_address_handles`]), least
    /// recently used first.
    unused_ahs: Lru<PathKey>,
    scratch: Vec<EpCompletion>,
    /// Transfers waiting to run again, of every client (0: no client's new transfers wait).
    replaying: u32,
    /// Transfers of clients on probation running, and how many may.
    unproven: usize,
    max_unproven: usize,
    /// RoCE: the thread making new paths' address handles.
    resolver: Option<Resolver<PathKey>>,
    /// Paths whose handle is being made, with the transfers (and their targets) waiting.
    resolving: HashMap<PathKey, Vec<(u32, DcTargetAddr)>, KeyedHash>,
    /// Paths whose handle could not be made, when and why (at most `unproven_transfers`,
    /// for [`UNREACHABLE_FOR`]): asked again meanwhile, they are refused at once.
    unreachable: HashMap<PathKey, (Instant, Error), KeyedHash>,
    stats: ExecutorStats,
    /// Why [`Executor::stop`] stopped it: nothing is submitted or posted any more.
    stopped: Option<Error>,
    /// The regions of transfers ended by [`Executor::stop`] whose requests the device may
    /// still execute: kept registered until the executor (its pool first) is dropped.
    loose: Vec<Arc<dyn Held>>,
}

const OP_SUBMIT: &str = "mlx5dv::s3::Executor::submit";

/// How often a transfer runs again after one of its messages was flushed by another
/// transfer's failure at the same client (the pool reports such a message flushed because it
/// may have executed there). Running an RDMA read or write of the same bytes again is
/// harmless, so an honest transfer is not failed for another one's lying token.
const MAX_REPLAYS: u8 = 2;

impl Executor {
    /// An executor over a new [`DciPool`] on `cq` (the pool's rules: the CQ is the pool's
    /// alone and holds a completion for every request its DCIs can have outstanding).
    ///
    /// The CQ must hold a completion for every request of every DCI, probation ones included
    /// ([`ExecutorConfig::cq_size`]).
    ///
    /// # Errors
    /// With the CQ back: [`DciPool::new`]'s errors; `ibv_query_port`'s; ENODEV on a RoCE port
    /// without a RoCE v2 GID when `gid_index` is None; EINVAL for `max_transfers` 0 or a
    /// `max_message` of 0, for `unproven_transfers` 0, and for a pool without probation DCIs
    /// (`pool.probation` None: strangers' dead tokens would hold the DCIs every client uses);
    /// on RoCE, EAGAIN when the thread that makes address handles cannot start.
    pub fn new(
        mlx5: &Mlx5Context,
        pd: &Pd,
        cq: Cq,
        cfg: ExecutorConfig,
    ) -> std::result::Result<Executor, Returned<Cq>> {
        let (sgid_index, mtu, max_msg) = match port_facts(pd, &cfg) {
            Ok(f) => f,
            Err(error) => return Err(Returned::new(error, cq)),
        };
        let mut pool_cfg = cfg.pool;
        pool_cfg.pkey_index = cfg.path.pkey_index;
        match mlx5.caps() {
            Ok(caps) => {
                // Unknown (no DEVX): 1, which every device takes.
                let limit = caps
                    .max_dc_requester_rd_atomic
                    .map_or(1, |l| u8::try_from(l).unwrap_or(u8::MAX).max(1));
                pool_cfg.rts.max_rd_atomic = pool_cfg.rts.max_rd_atomic.min(limit);
            }
            Err(error) => return Err(Returned::new(error, cq)),
        }
        if cfg.pool.probation.is_none() || cfg.unproven_transfers == 0 {
            let error = Error::invalid(
                "mlx5dv::s3::Executor::new",
                "the executor runs the transfers of clients that have not answered yet on DCIs of their own, so that \
                 tokens naming dead or forged DCTs cannot hold the DCIs proven clients use: set pool.probation \
                 (ExecutorConfig::default has 8 DCIs) and unproven_transfers to at least 1",
            );
            return Err(Returned::new(error, cq));
        }
        let resolver = sgid_index.map(|_| Resolver::new(pd, cfg.pool.port));
        let pool = DciPool::new(mlx5, pd, cq, pool_cfg)?;
        let endpoints = cfg.pool.max_endpoints;
        let max_unproven = cfg.unproven_transfers.min(cfg.max_transfers);
        Ok(Executor {
            pool,
            pd: pd.clone(),
            port: cfg.pool.port,
            sgid_index,
            path: cfg.path,
            mtu,
            key: cfg.key,
            max_message: u64::from(max_msg),
            keep_idle: cfg.keep_idle.min(endpoints),
            transfers: (0..cfg.max_transfers).map(|_| Transfer::free()).collect(),
            free: (0..cfg.max_transfers as u32).rev().collect(),
            tenants: Tenants::new(cfg.max_transfers),
            quantum: i64::try_from(cfg.tenant_quantum.max(1)).unwrap_or(i64::MAX),
            tenant_transfers: cfg.tenant_transfers.max(1),
            tenant_unproven: cfg.tenant_unproven.max(1),
            class_dcis: [cfg.pool.dcis.max(1), cfg.pool.probation.map_or(1, |p| p.dcis.max(1))],
            tenant_inflight: cfg.tenant_inflight.max(1),
            finished: VecDeque::with_capacity(cfg.max_transfers),
            clients: HashMap::with_capacity_and_hasher(endpoints, KeyedHash::random()),
            standing: Standing::new(cfg.remembered_clients, cfg.proven_idle),
            ahs: HashMap::with_capacity_and_hasher(
                endpoints.saturating_add(cfg.kept_address_handles).min(1 << 16),
                KeyedHash::random(),
            ),
            idle: Lru::new(cfg.keep_idle.min(endpoints)),
            unused_ahs: Lru::new(cfg.kept_address_handles),
            scratch: vec![EpCompletion::default(); 64],
            replaying: 0,
            unproven: 0,
            max_unproven,
            resolver,
            resolving: HashMap::with_capacity_and_hasher(max_unproven, KeyedHash::random()),
            unreachable: HashMap::with_capacity_and_hasher(max_unproven, KeyedHash::random()),
            stats: ExecutorStats::default(),
            stopped: None,
            loose: Vec::new(),
        })
    }

    /// Keeps `mr` registered for the pool's life, so transfers may use it as their local
    /// buffer ([`DciPool::hold`]); PUT's buffers need [`crate::Access::LOCAL_WRITE`].
    ///
    /// # Errors
    /// EINVAL for a region of another PD.
    ///
    /// An implicit on-demand-paging region is not held (it spans the whole address space):
    ///
    /// ```compile_fail,E0277
    /// # fn f(pd: &mlx5dv::Pd, exec: &mut mlx5dv::s3::Executor) -> mlx5dv::Result<()> {
    /// let odp = pd.register_implicit_odp(mlx5dv::Access::LOCAL_WRITE)?;
    /// exec.hold(&odp)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn hold<B: BoundedBuffer + 'static>(&mut self, mr: &Mr<B>) -> Result<()> {
        self.pool.hold(mr)
    }

    /// Submits transfer `id`: `local.len()` bytes between `local` and the token's buffer at
    /// `offset`, read from the client ([`Direction::Put`]: into `local`) or written to it
    /// ([`Direction::Get`]: from `local`). Its messages are posted now as far as the DCIs take
    /// them, the rest by [`Executor::poll`]; it completes once, in a [`Done`] with `id`.
    ///
    /// # Errors
    /// Nothing is posted, and no completion will come, when:
    /// - EINVAL: the range `offset..offset + local.len()` is not inside the token's buffer, or
    ///   `local` is empty; the token has no GID on a RoCE port; `local` is not in a region
    ///   the executor holds ([`Executor::hold`]), or (PUT) its region lacks local write;
    /// - EAGAIN ([`Error::is_would_block`]): `max_transfers` are running, or a new client
    ///   finds the endpoint table full of busy clients: poll, then submit again;
    /// - EBUSY: the client is on probation (none of its messages completed yet) and
    ///   `unproven_transfers` transfers of such clients are running: refuse the request (HTTP
    ///   503 Slow Down), or submit it again later, but do not queue it ahead of other clients'
    ///   (it may wait long: strangers' tokens may be dead);
    /// - `ibv_create_ah`'s error for a new client's path on InfiniBand (on RoCE the handle is
    ///   made off the data path: its failure comes as the transfer's [`Done`]); on RoCE, the
    ///   error a path's handle failed with in the last 10 s (ETIMEDOUT: its neighbour never
    ///   answered), at once.
    pub fn submit(
        &mut self,
        id: u64,
        token: &RdmaToken,
        offset: u64,
        direction: Direction,
        local: Sge<'_>,
    ) -> Result<()> {
        self.tenant(Tenant::DEFAULT).submit(id, token, offset, direction, local)
    }

    /// Submits for `tenant`: [`Executor::submit`], [`Executor::submit_region`] and
    /// [`Executor::submit_str`] as the tenant's (those called on the executor itself are
    /// [`Tenant::DEFAULT`]'s). Its transfers wait in its own queue and take their turn on the
    /// DCIs beside the other tenants' (see the [`Executor`] documentation).
    ///
    /// ```
    /// # use mlx5dv::s3::{Direction, Executor, RdmaToken, Tenant};
    /// # fn f(exec: &mut Executor, token: &RdmaToken, object: mlx5dv::Sge<'_>) -> mlx5dv::Result<()> {
    /// // The request's SigV4 access key names its tenant.
    /// exec.tenant(Tenant::of(b"AKIAIOSFODNN7EXAMPLE")).submit(1, token, 0, Direction::Get, object)?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// Those of the calls, and EBUSY when the tenant (not the default one) has
    /// [`ExecutorConfig::tenant_transfers`] transfers not yet finished, or its client is on
    /// probation and the tenant has [`ExecutorConfig::tenant_unproven`] transfers of clients
    /// on probation running ([`ExecutorStats::tenant_refused`]): refuse the request (HTTP 503
    /// Slow Down).
    pub fn tenant(&mut self, tenant: Tenant) -> TenantSubmit<'_> {
        TenantSubmit { exec: self, tenant }
    }

    /// Tenants with transfers not yet finished.
    pub fn tenants(&self) -> usize {
        self.tenants.active()
    }

    /// `local`, checked to lie in a region the pool holds (one it may write for a PUT).
    pub(super) fn held_local(&self, local: Sge<'_>, direction: Direction) -> Result<raw::ibv_sge> {
        Ok(self.pool.held_sge(local, direction == Direction::Put)?.raw())
    }

    /// Submits transfer `id` between the token's buffer at `offset` and `len` bytes at `at` of
    /// `region`, memory the caller registered for this object (zero copy: the bytes move
    /// straight to and from it), not one the executor holds for its life. The executor keeps
    /// the registration alive until the transfer's [`Done`] is reported by [`Executor::poll`]
    /// and lets go of it then ([`Mr::deregister`] answers EBUSY until then). Otherwise as
    /// [`Executor::submit`].
    ///
    /// Reading or writing the region's bytes while the transfer runs races with the device:
    /// hand the region over until its `Done` (the async layer,
    /// [`AsyncExecutor::submit_region`](super::AsyncExecutor::submit_region), takes it by value
    /// and gives it back with the `Done`).
    ///
    /// # Errors
    /// Nothing is posted, and no completion will come, when:
    /// - EINVAL: `len` is 0, or `at..at + len` is not inside the region, or longer than a
    ///   message's 32-bit length; the region is of another protection domain than the
    ///   executor's; for [`Direction::Put`] the region lacks [`Access::LOCAL_WRITE`] (the
    ///   device writes it);
    /// - otherwise [`Executor::submit`]'s.
    ///
    /// # Which regions
    /// A region over memory it owns or borrows ([`RegionBuffer`](crate::RegionBuffer): `Vec<u8>`,
    /// [`crate::AlignedBuf`], [`crate::MmapBuf`], ...; or a [`crate::DmaBuf`]): the buffer type
    /// is a [`BoundedBuffer`](crate::mr::BoundedBuffer). So this compiles:
    ///
    /// ```
    /// # use mlx5dv::s3::{Direction, Executor, RdmaToken};
    /// # fn f(pd: &mlx5dv::Pd, exec: &mut Executor, token: &RdmaToken) -> mlx5dv::Result<()> {
    /// let mr = pd.register(vec![0u8; 4096], mlx5dv::Access::LOCAL_WRITE)?;
    /// exec.submit_region(1, token, 0, Direction::Put, &mr, 0, 4096)?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// and an implicit on-demand-paging region, whose key covers the whole address space (so
    /// `at` would be any address of the process, a live `Vec`'s or freed memory), does not:
    ///
    /// ```compile_fail,E0277
    /// # use mlx5dv::s3::{Direction, Executor, RdmaToken};
    /// # fn f(pd: &mlx5dv::Pd, exec: &mut Executor, token: &RdmaToken) -> mlx5dv::Result<()> {
    /// let odp = pd.register_implicit_odp(mlx5dv::Access::LOCAL_WRITE)?;
    /// let victim = vec![0u8; 4096];
    /// let view: &[u8] = &victim;
    /// // The device would write the client's bytes under a shared borrow.
    /// exec.submit_region(1, token, 0, Direction::Put, &odp, view.as_ptr() as usize, 4096)?;
    /// # Ok(())
    /// # }
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn submit_region<B: BoundedBuffer + 'static>(
        &mut self,
        id: u64,
        token: &RdmaToken,
        offset: u64,
        direction: Direction,
        region: &Mr<B>,
        at: usize,
        len: usize,
    ) -> Result<()> {
        self.tenant(Tenant::DEFAULT)
            .submit_region(id, token, offset, direction, region, at, len)
    }

    /// The local buffer `at..at + len` of `region` for a transfer `direction`, checked, and
    /// a keep-alive handle on the region ([`Executor::submit_region`]'s errors).
    pub(super) fn lend<B: BoundedBuffer + 'static>(
        &self,
        region: &Mr<B>,
        direction: Direction,
        at: usize,
        len: usize,
    ) -> Result<(raw::ibv_sge, Arc<dyn Held>)> {
        const OP: &str = "mlx5dv::s3::Executor::submit_region";
        if region.pd().as_raw() != self.pd.as_raw() {
            return Err(Error::invalid(
                OP,
                "the region belongs to another protection domain than the executor's: register it on the executor's PD",
            ));
        }
        if direction == Direction::Put && !region.access().contains(Access::LOCAL_WRITE) {
            return Err(Error::invalid(
                OP,
                "a PUT writes the region (the device places the client's bytes there): register it with Access::LOCAL_WRITE",
            ));
        }
        let inside = at.checked_add(len).is_some_and(|end| end <= region.len());
        let Some(length) = u32::try_from(len).ok().filter(|_| inside) else {
            return Err(Error::invalid(
                OP,
                format!(
                    "{len} bytes at offset {at} lie outside the {}-byte region (or exceed 4 GiB - 1): refuse the request",
                    region.len()
                ),
            ));
        };
        let local = raw::ibv_sge {
            addr: region.addr() + at as u64,
            length,
            lkey: region.lkey(),
        };
        Ok((local, region.hold()))
    }

    /// Parses `token` (untrusted text) and submits it ([`Executor::submit`]).
    ///
    /// # Errors
    /// EINVAL naming the field and the rule a malformed token breaks ([`RdmaToken::parse`]),
    /// before anything is posted; then [`Executor::submit`]'s.
    pub fn submit_str(
        &mut self,
        id: u64,
        token: &str,
        offset: u64,
        direction: Direction,
        local: Sge<'_>,
    ) -> Result<()> {
        self.tenant(Tenant::DEFAULT)
            .submit_str(id, token, offset, direction, local)
    }

    /// Moves transfers on and reports up to `out.len()` finished ones, each exactly once, in
    /// the order they finished; returns how many. Posts the messages the DCIs could not take
    /// before, and releases the endpoints of clients left idle (see [`Executor`]).
    ///
    /// # Errors
    /// [`DciPool::poll`]'s (nothing is lost: transfers finish on later calls).
    #[inline]
    pub fn poll(&mut self, out: &mut [Done]) -> Result<usize> {
        // The poll of an idle server (nothing resolving, ready to post or finished, and
        // nothing new from the pool) is inlined into the caller's loop; the rest is not.
        if self.resolving.is_empty()
            && self.tenants.ring[0].is_empty()
            && self.tenants.ring[1].is_empty()
            && self.finished.is_empty()
        {
            return match self.pool.poll_if_any(&mut self.scratch) {
                None | Some(Ok(0)) => Ok(0),
                Some(read) => self.poll_read(read?, out),
            };
        }
        self.poll_moving(out)
    }

    /// Stops the executor for good, for a server giving up (its device keeps failing
    /// commands, or is gone): every transfer not yet reported ends with status `GeneralErr`
    /// and `why`, and nothing posted before runs after, whatever the device does next.
    ///
    /// The pool's DCIs are moved to ERR ([`DciPool::stop`]): the device sends no request and
    /// places no response of theirs any more, and each request outstanding completes
    /// flushed. A transfer is reported by [`Executor::poll`] once its requests' completions
    /// are in (at once when none was posted), since only then is its local buffer quiet: a
    /// PUT's bytes no longer written by the device, a GET's no longer read (a region lent to
    /// it, [`Executor::submit_region`], is let go then, as after any Done). So poll on until
    /// [`Executor::in_flight`] is 0. A transfer with requests on a DCI that could not be moved
    /// to ERR is reported at once, its error saying that the device may still execute them:
    /// its local buffer may still be written (PUT) or read (GET), and a lent region stays
    /// registered until the executor is dropped (its DCIs destroyed first); do not reuse that
    /// memory for anything else until then.
    ///
    /// Called again, it moves to ERR the DCIs it could not before, and reports at once, the
    /// same way, the transfers whose completions have not come (for a device that answers no
    /// more: a dead device writes no flush completion). Submissions are refused from the first
    /// call on (ESHUTDOWN, naming `why`).
    ///
    /// # Errors
    /// The first DCI that could not be moved to ERR ([`DciPool::stop`]'s error): the
    /// executor is stopped all the same, and the transfers concerned say so in their Done.
    pub fn stop(&mut self, why: &Error) -> Result<()> {
        const OP: &str = "mlx5dv::s3::Executor::stop";
        let again = self.stopped.is_some();
        if !again {
            self.stopped = Some(why.clone());
        }
        let stopped = self.pool.stop();
        let loose_note = match (&stopped, again) {
            (_, true) => "their completions (flushed) have not come: the device may still execute them".to_string(),
            (Err(e), false) => {
                format!("the DCI they are posted on could not be moved to ERR ({e}): the device may still execute them")
            }
            (Ok(()), false) => String::new(),
        };
        // Requests the device may still execute: those on DCIs not stopped, or (called again)
        // every one not yet completed.
        let mut loose: Vec<bool> = vec![again; self.transfers.len()];
        for wr_id in self.pool.unstopped() {
            if let Some(l) = loose.get_mut((wr_id >> 32) as usize) {
                *l = true;
            }
        }
        // Paths being resolved (RoCE) are forgotten: their transfers posted nothing.
        let waiting: Vec<u32> = self
            .resolving
            .drain()
            .flat_map(|(_, w)| w.into_iter().map(|(slot, _)| slot))
            .collect();
        for slot in waiting {
            self.transfers[slot as usize].state = State::Running;
        }
        for (slot, loose) in loose.into_iter().enumerate() {
            let t = &mut self.transfers[slot];
            if t.state != State::Running {
                continue;
            }
            t.status = WcStatus::GeneralErr;
            t.error = Some(why.clone());
            if loose && t.posted > 0 {
                t.error = Some(why.adding(format!(
                    "{OP}: {} request(s) of this transfer were outstanding and {loose_note}, so its local buffer may still be written (PUT) or read (GET): do not reuse that memory (a lent region stays registered until the executor is dropped)",
                    t.posted
                )));
                // Its completions, if they come, find it finished and are ignored.
                t.posted = 0;
                if let Some(region) = t.lent.take() {
                    self.loose.push(region);
                }
            }
            self.finish_if_done(slot as u32);
        }
        stopped
    }

    /// Wakes `waker` each time a new path's address handle is made (RoCE), which no
    /// completion announces: the transfers that waited for it are posted by the next
    /// [`Executor::poll`]. The handle is made on a thread of the executor's, and the waker is
    /// woken after its answer is in, so a poll after the wake finds it. The last waker given
    /// is kept (the async layer's driver gives its own). On InfiniBand no path is resolved and
    /// nothing wakes it.
    ///
    /// For a thread that sleeps on the CQ's completion channel (`Cq::req_notify` then a wait
    /// on [`Cq::channel`](crate::Cq::channel)'s descriptor): without it, transfers to a new
    /// RoCE client wait, unposted, for a completion that never comes. Give a waker that ends
    /// that sleep, e.g. one that writes an eventfd polled beside the channel
    /// (`std::task::Wake` makes one from any `Arc`).
    pub fn wake_on_resolved(&self, waker: &std::task::Waker) {
        if let Some(r) = &self.resolver {
            r.wake_on_answer(waker);
        }
    }

    /// Releases every idle client's endpoint and the address handles no endpoint uses any
    /// more (a server going quiet, or a test checking that nothing was kept). What is
    /// remembered of the clients (their standing) stays.
    pub fn release_idle(&mut self) {
        while let Some(c) = self.oldest_idle() {
            self.release(c);
        }
        while let Some(path) = self.oldest_unused_ah() {
            self.ahs.remove(&path);
        }
    }

    /// Transfers accepted at once ([`ExecutorConfig::max_transfers`]).
    pub fn max_transfers(&self) -> usize {
        self.transfers.len()
    }

    /// Transfers submitted and not yet reported.
    pub fn in_flight(&self) -> usize {
        self.transfers.len() - self.free.len()
    }

    /// Clients with an endpoint: those with transfers running and the idle ones kept.
    pub fn clients(&self) -> usize {
        self.clients.len()
    }

    /// Address handles held (one per path: a LID, or a GID on RoCE), those no client uses
    /// that are kept ([`ExecutorConfig::kept_address_handles`]) included.
    pub fn address_handles(&self) -> usize {
        self.ahs.len()
    }

    /// Clients whose standing is remembered apart from an endpoint (released ones that
    /// answered and whose last transfer did not time out; stale entries included until
    /// their generation goes): at most [`ExecutorConfig::remembered_clients`].
    pub fn remembered(&self) -> usize {
        self.standing.len()
    }

    /// The largest message posted (longer transfers are split).
    pub fn max_message(&self) -> u64 {
        self.max_message
    }

    /// Counters.
    pub fn stats(&self) -> ExecutorStats {
        self.stats
    }

    /// The pool underneath (its recoveries, its DCIs).
    pub fn pool(&self) -> &DciPool {
        &self.pool
    }
}

/// Submissions for one [`Tenant`] ([`Executor::tenant`]).
pub struct TenantSubmit<'a> {
    exec: &'a mut Executor,
    tenant: Tenant,
}

impl TenantSubmit<'_> {
    /// [`Executor::submit`] for the tenant.
    pub fn submit(
        &mut self,
        id: u64,
        token: &RdmaToken,
        offset: u64,
        direction: Direction,
        local: Sge<'_>,
    ) -> Result<()> {
        let local = self.exec.held_local(local, direction)?;
        self.exec
            .start(self.tenant, id, token, offset, direction, local, &mut None)
    }

    /// [`Executor::submit_region`] for the tenant.
    #[allow(clippy::too_many_arguments)]
    pub fn submit_region<B: BoundedBuffer + 'static>(
        &mut self,
        id: u64,
        token: &RdmaToken,
        offset: u64,
        direction: Direction,
        region: &Mr<B>,
        at: usize,
        len: usize,
    ) -> Result<()> {
        let (local, lent) = self.exec.lend(region, direction, at, len)?;
        self.exec
            .start(self.tenant, id, token, offset, direction, local, &mut Some(lent))
    }

    /// [`Executor::submit_str`] for the tenant.
    pub fn submit_str(
        &mut self,
        id: u64,
        token: &str,
        offset: u64,
        direction: Direction,
        local: Sge<'_>,
    ) -> Result<()> {
        let token = RdmaToken::parse(token)?;
        self.submit(id, &token, offset, direction, local)
    }
}

/// A submission's refusal once the executor was stopped for `why` ([`Executor::stop`]).
#[cold]
fn stopped_refusal(why: &Error) -> Error {
    Error::from_errno(
        OP_SUBMIT,
        libc::ESHUTDOWN,
        format!("the executor was stopped ({why}): make a new executor"),
    )
}

/// The port's RoCE GID index (None on InfiniBand), its active MTU and the message limit.
fn port_facts(pd: &Pd, cfg: &ExecutorConfig) -> Result<(Option<u8>, Mtu, u32)> {
    const OP: &str = "mlx5dv::s3::Executor::new";
    let ctx = pd.context();
    let port = ctx.query_port(cfg.pool.port)?;
    let sgid_index = super::roce_gid_index(ctx, cfg.pool.port, port.is_ethernet(), cfg.gid_index, OP)?;
    cfg.path.check(port.is_ethernet(), OP).map_err(|e| e.on(ctx.name()))?;
    if cfg.pool.pkey_index != 0 && cfg.pool.pkey_index != cfg.path.pkey_index {
        return Err(Error::invalid(
            OP,
            "the DCIs' P_Key index is set twice, differently: set it in ExecutorConfig::path and leave pool.pkey_index 0",
        ));
    }
    if cfg.max_transfers == 0 || cfg.max_message == Some(0) {
        return Err(Error::invalid(OP, "max_transfers and max_message must be at least 1"));
    }
    let mtu = Mtu::from_raw(port.0.active_mtu).unwrap_or(Mtu::Mtu1024);
    let port_max = if port.0.max_msg_sz == 0 {
        1 << 30
    } else {
        port.0.max_msg_sz
    };
    let max_msg = cfg.max_message.map_or(port_max, |m| m.min(port_max));
    Ok((sgid_index, mtu, max_msg))
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("in_flight", &self.in_flight())
            .field("clients", &self.clients())
            .field("address_handles", &self.address_handles())
            .field("stats", &self.stats)
            .finish()
    }
}
