//! The pool: its DCIs, posting and polling. Its other parts, each a file: the endpoint table
//! (`table`), the assignment policies (`assign`), recovery and replay (`recovery`), and DCI
//! streams on a given device (`streams`).

mod assign;
mod recovery;
mod streams;
mod table;

use recovery::hold_in_post_order;
use streams::streams_plan;

use super::{DcPeer, EndpointId, EpCompletion, Policy, Request};
use crate::cq::{Cq, LeanCompletion, WcStatus};
use crate::dc::{Dci, DciBuilder, Mlx5Context};
use crate::direct::SendBackend;
use crate::error::{Error, Result, StaticError};
use crate::mr::{Held, Mr, Returned, Sge};
use crate::pd::Pd;
use crate::qp::{state::Rts, RtsAttr};
use std::collections::VecDeque;
use std::sync::Arc;

/// How a [`DciPool`] is built.
#[derive(Copy, Clone, Debug)]
pub struct PoolConfig {
    /// DCIs in the pool (W).
    pub dcis: usize,
    /// Endpoints the pool can hold (its table is allocated at creation).
    pub max_endpoints: usize,
    /// The assignment policy.
    pub policy: Policy,
    /// Send queue depth of each DCI.
    pub max_send_wr: u32,
    /// Port of the DCIs.
    pub port: u8,
    /// P_Key index of the DCIs ([`crate::DciBuilder::pkey_index`]): 0, the default
    /// partition, unless the fabric puts this traffic in another.
    pub pkey_index: u16,
    /// Path MTU in bytes; None: the port's active MTU (as [`crate::DctBuilder`] does).
    pub mtu_bytes: Option<u32>,
    /// Timeout, retries and atomics depth.
    pub rts: RtsAttr,
    /// Whether the DCIs may post atomics (the device must have them).
    pub atomics: bool,
    /// How the DCIs post ([`SendBackend::Direct`]: the pool's CQ must then be a direct one).
    pub backend: SendBackend,
    /// Out-of-order data placement on every DCI ([`crate::DciBuilder::out_of_order_placement`]):
    /// the pool then reaches only DCTs built with it ([`crate::DcTargetAddr::out_of_order`]),
    /// and without it only DCTs built without ([`DciPool::add_endpoint`] refuses the others).
    pub out_of_order: bool,
    /// DCIs of their own, in addition to `dcis`, for endpoints on probation (peers that have
    /// not answered yet: [`DciPool::add_endpoint_on_probation`]). None: every endpoint uses
    /// the `dcis` DCIs.
    pub probation: Option<Probation>,
}

/// DCIs kept apart for endpoints on probation: peers that have not answered yet, whose
/// requests may wait out every ACK timeout (a DCT that is gone, or that never existed).
///
/// An endpoint added with [`DciPool::add_endpoint_on_probation`] posts only on these DCIs
/// until [`DciPool::prove`] (called once its peer has answered) moves it to the others, so a
/// peer that never answers holds (`Dcs`, `DcsQuota`) or blocks (`Rand`, `Streams`: the
/// requests bound to the same DCI wait behind its retries) a probation DCI, never one of
/// the `dcis` that proven endpoints use. Endpoints on probation share these DCIs among
/// themselves: under `Dcs` one at a time per DCI.
///
/// The cost: `dcis` more DCIs (their send queues count against the CQ: see
/// [`DciPool::new`]), and a peer on probation whose answer takes longer than the shorter
/// timeout fails where it would have succeeded on the other DCIs.
#[derive(Copy, Clone, Debug)]
pub struct Probation {
    /// DCIs for endpoints on probation (at least 1).
    pub dcis: usize,
    /// Their ACK timeout and retries: a peer that never answers gives a probation DCI back
    /// after `(retry_cnt + 1) x 4.096 us x 2^timeout`. `max_rd_atomic` and the rest as for
    /// the other DCIs.
    pub rts: RtsAttr,
}

impl Default for PoolConfig {
    /// Four DCIs of 128 requests, 1024 endpoints, `Dcs`, port 1 at its active MTU, no atomics,
    /// no probation DCIs.
    fn default() -> Self {
        PoolConfig {
            dcis: 4,
            max_endpoints: 1024,
            policy: Policy::Dcs,
            max_send_wr: 128,
            port: 1,
            pkey_index: 0,
            mtu_bytes: None,
            rts: RtsAttr::default(),
            atomics: false,
            backend: SendBackend::WrApi,
            out_of_order: false,
            probation: None,
        }
    }
}

/// A posted request, kept until its completion (to post it again after another peer's
/// failure flushed it).
///
/// Its buffers are `'static` because the pool holds their regions ([`DciPool::hold`]).
#[derive(Copy, Clone, Debug)]
struct Posted {
    ep: u32,
    /// The pool's own number for it (unique in the pool): the `wr_id` it is posted with, so
    /// that completions name it exactly whatever the caller's `wr_id`s.
    token: u64,
    wr_id: u64,
    stream: u16,
    req: Request<'static>,
}

struct Slot {
    /// None only while a recovery that failed is retried.
    dci: Option<Dci<Rts>>,
    qp_num: u32,
    depth: usize,
    /// Posted and not yet completed, in post order (= completion order).
    inflight: VecDeque<Posted>,
    /// Flushed requests of endpoints not (yet) known to have failed, in post order (by
    /// token: [`hold_in_post_order`]), held
    /// until the DCI (or their stream) has drained: then every completion of the failure is
    /// in, and [`DciPool::decide`] reports those that may have executed and keeps, to post
    /// again, those that provably never left (no streams, or queued behind the failing
    /// request on its own stream).
    replay: VecDeque<Posted>,
    /// Of its requests, how many wait in the pool's `unposted` queue to be reported flushed
    /// (still counted against its depth, so that queue never grows).
    reporting: usize,
    /// The endpoint holding the DCI while it has requests on it: under Dcs and DcsQuota, and
    /// on a probation DCI under every policy.
    holder: Option<u32>,
    /// Dcs, DcsQuota: the endpoint that failed on it (its holder, the only endpoint with
    /// anything on it), until the DCI is recovered, which then clears that endpoint's
    /// `failed` without a walk of the endpoint table; `failed_walk`: more than one did (not
    /// expected), so the recovery walks the table.
    failed_holder: Option<u32>,
    failed_walk: bool,
    /// A probation DCI ([`Probation`]): only endpoints on probation post on it.
    probation: bool,
    /// Requests posted on it so far (replays included): [`DciPool::posted_per_dci`].
    posted: u64,
    /// The DCI is in ERR: no new requests until it is recovered (never, once the pool is
    /// stopped).
    failed: bool,
    /// [`DciPool::stop`] moved it to ERR: the device executes nothing posted on it any more.
    stopped: bool,
    /// Streams on which a request failed or was flushed (stream 0 without streams), until
    /// the stream is reset or the DCI recovered: no new requests on them meanwhile.
    stream_failed: Vec<bool>,
    /// Streams on which an error completion (not a flush) arrived, until the stream is reset
    /// or the DCI recovered: their flushed requests queued behind the failing one.
    erred: Vec<bool>,
}

struct Ep {
    /// None once the endpoint was removed ([`DciPool::remove_endpoint`]): its place waits in
    /// `free` for the next endpoint.
    peer: Option<DcPeer>,
    /// Bumped at each removal: an [`EndpointId`] names this place's endpoint of that generation.
    generation: u32,
    /// Its DCI: fixed (Rand, Streams) or held while it has requests outstanding (Dcs).
    dci: Option<usize>,
    stream: u16,
    outstanding: u32,
    /// Requests posted since it took its DCI (DcsQuota).
    since_acquire: u32,
    /// On probation: it posts on the probation DCIs only.
    probation: bool,
    /// Proven while it had requests outstanding on a probation DCI it is bound to (Rand,
    /// Streams): bound to one of the other DCIs once those are in (its order kept).
    rebind: bool,
    /// Its peer failed on this DCI, or another endpoint's on this DCI (and stream) that
    /// reaches the same target (dc-review-3 finding 7: requests to one DCT are pipelined, so
    /// its flushed ones may have executed): its flushed requests are reported, not posted
    /// again, until that DCI (or its stream) is recovered.
    failed: Option<usize>,
}

/// A region the pool keeps registered while its requests may name it.
struct HeldRegion {
    lkey: u32,
    addr: u64,
    len: u64,
    /// Registered with `LOCAL_WRITE`: reads and atomics may land in it.
    local_write: bool,
    _region: Arc<dyn Held>,
}

/// W DCIs on one CQ shared by many endpoints (see the [module](super) documentation).
///
/// The pool owns its CQ, which must be its DCIs' alone ([`DciPool::new`] refuses a CQ that
/// a DCT or queue pair of the crate reports to, and [`DciPool::poll`] reports, as an error,
/// any completion no DCI of the pool owns). It holds every
/// region it posts from ([`DciPool::hold`]), because it may post a request again after
/// another peer's failure: a region is kept registered until the pool is dropped, while the
/// application keeps its [`Mr`] and may rewrite a send buffer between posts.
///
/// A pool moves between threads (`Send`) and is used from one at a time.
pub struct DciPool {
    cq: Cq,
    pd: Pd,
    policy: Policy,
    /// The DCIs place data out of order ([`PoolConfig::out_of_order`]).
    out_of_order: bool,
    slots: Vec<Slot>,
    eps: Vec<Ep>,
    /// Places of removed endpoints, for the next ones (allocated with the table).
    free: Vec<u32>,
    /// Sorted by local key.
    held: Vec<HeldRegion>,
    /// What one CQ poll read (an array: slicing it at most `SCRATCH` long needs no check).
    scratch: Box<[LeanCompletion; SCRATCH]>,
    /// Completions on the CQ that no DCI of the pool owns (a DCT or QP sharing it): each is
    /// reported by a poll as an error naming it, never dropped. At most `SCRATCH`: the CQ is
    /// read only while it is empty.
    foreign: VecDeque<LeanCompletion>,
    /// Flushed requests to report with `WrFlushErr`, by DCI: those that may have executed,
    /// those of failed endpoints, and those whose replay the provider refused (with another
    /// error than EAGAIN: they never left).
    unposted: VecDeque<(usize, Posted)>,
    /// `Streams` only: a stream error is recovered by resetting the stream. False where the
    /// DCIs tolerate no errored stream (`log_errored` 0, or a device reporting
    /// `max_log_num_errored` 0): every stream error then takes the DCI to ERR, and the pool
    /// recovers the whole DCI (counted in [`Recoveries::dcis`]).
    reset_streams: bool,
    /// An endpoint was refused for want of a DCI since one was last given back (DcsQuota),
    /// by class: `[proven, on probation]`.
    waiting: [bool; 2],
    /// DCIs `0..main` serve proven endpoints, the others ([`Probation`]) those on probation.
    main: u16,
    recovered: Recoveries,
    /// A recovery error met after completions were written: reported by the next poll.
    deferred: Option<Error>,
    /// The next request's token.
    next_token: u64,
    /// No DCI had anything to recover or post again when the last poll looked, and no
    /// completion came since: a DCI's state changes only by completions or recoveries, both
    /// in [`DciPool::poll`], so the idle poll skips the look (checked in debug builds).
    settled: bool,
    /// [`DciPool::stop`] was called: nothing is posted or recovered any more.
    stopped: bool,
}

/// What the pool has done to bring DCIs back after peers failed.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Recoveries {
    /// DCIs brought from ERR back to RTS.
    pub dcis: u64,
    /// DCI streams reset (the DCI stayed in RTS).
    pub streams: u64,
    /// Flushed requests of healthy endpoints posted again.
    pub reposted: u64,
    /// Stream errors that escalated to the recovery of the whole DCI (also counted in `dcis`
    /// once it is done), on a `Streams` pool that resets streams: the device refused the
    /// stream reset (the pool then moves the DCI to ERR), or the DCI itself entered ERR (more
    /// streams in error at once than `log_errored` allows). Where the DCIs tolerate no errored
    /// stream at all (see [`Policy::Streams`]) every stream error recovers the DCI: counted in
    /// `dcis` only.
    pub escalated: u64,
    /// Flushed requests of healthy endpoints reported to them (with `WrFlushErr`) instead of
    /// posted again, because they may have executed: requests of other streams than the
    /// failing one when the whole DCI went to ERR. A failed endpoint's own flushed requests
    /// (and those of endpoints failed with it: the same target on the same DCI and stream)
    /// are reported to it and never counted here.
    pub reported_flushed: u64,
}

const SCRATCH: usize = 64;

/// The refusals of `post` (backpressure): statics, so refusing allocates nothing.
mod busy {
    use crate::error::StaticError;
    const OP: &str = "DciPool::post";
    pub(super) static QUOTA: StaticError = StaticError::new(
        OP,
        libc::EAGAIN,
        "this endpoint used its quota while others wait: poll until it drains",
    );
    pub(super) static NO_DCI: StaticError = StaticError::new(
        OP,
        libc::EAGAIN,
        "every DCI is held by an active endpoint: poll and try again",
    );
    pub(super) static NO_PROBATION_DCI: StaticError = StaticError::new(
        OP,
        libc::EAGAIN,
        "every probation DCI (for peers that have not answered yet) is held by an active endpoint: poll and try again",
    );
    pub(super) static RECOVERING: StaticError = StaticError::new(
        OP,
        libc::EAGAIN,
        "the DCI is recovering from another peer's failure: poll and try again",
    );
    pub(super) static FULL: StaticError =
        StaticError::new(OP, libc::EAGAIN, "the DCI's send queue is full: poll and try again");
    pub(super) static STOPPED: StaticError = StaticError::new(
        OP,
        libc::ESHUTDOWN,
        "the pool was stopped (DciPool::stop): its DCIs are in ERR for good; make a new pool",
    );
    pub(super) static NO_LOCAL_WRITE: StaticError = StaticError::new(
        OP,
        libc::EINVAL,
        "an RDMA read or atomic writes its result into the local buffer, whose region was registered without \
         Access::LOCAL_WRITE (the device would fail it with a local protection error): register that region \
         with Access::LOCAL_WRITE, or read into another one",
    );
}

#[inline]
fn would_block(why: &'static StaticError) -> Error {
    Error::from_static(why)
}

impl DciPool {
    /// Creates the pool: `cfg.dcis` DCIs in RTS reporting to `cq` (which the pool then owns),
    /// and room for `cfg.max_endpoints`.
    ///
    /// The rule for `cq`: it is the pool's DCIs' alone. No DCT, queue pair or SRQ may report
    /// to it: the pool reads every completion on it as one of its DCIs' and has no one to
    /// hand another's to. A CQ that a DCT or QP of the crate already reports to is refused
    /// here; a completion of anything else that reaches it later is reported by
    /// [`DciPool::poll`] as an error naming it (never dropped silently). Give DCTs and other
    /// QPs a CQ of their own.
    ///
    /// Every pool request is signaled, so `cq` must hold a completion for every request the
    /// DCIs can have outstanding: `dcis` x `max_send_wr` as the library rounded it (a CQ that
    /// overruns stops reporting completions: the pool would hang).
    ///
    /// [`Policy::Streams`] needs a device with DCI streams. Where the device reports
    /// `max_log_num_errored` 0 (a DCI there tolerates no errored stream, and refuses stream
    /// resets), the pool falls back to recovering the whole DCI after a stream error: the
    /// DCIs are created with `log_errored` 0 whatever was asked, and each such recovery is
    /// counted in [`Recoveries::dcis`]. The same holds for `log_errored: 0` on any device.
    ///
    /// # Errors
    /// EINVAL for no DCIs or a zero queue depth, for a CQ a DCT or QP already reports to, and
    /// for a CQ smaller than the DCIs' send queues together (the message names both sizes);
    /// with [`Policy::Streams`], EOPNOTSUPP on a device without DCI streams and EINVAL for
    /// more streams (or errored streams) than it reports, both before any DCI is created; the
    /// DCI creation and transitions with their errors (EOPNOTSUPP for atomics the device
    /// lacks, named before any library call). The CQ comes back with the error
    /// ([`Returned`]; `?` turns it into the [`Error`]), the DCIs made so far destroyed.
    pub fn new(mlx5: &Mlx5Context, pd: &Pd, cq: Cq, cfg: PoolConfig) -> std::result::Result<Self, Returned<Cq>> {
        match Self::build_slots(mlx5, pd, &cq, cfg) {
            Ok((slots, needed, reset_streams)) => Ok(DciPool {
                main: cfg.dcis as u16,
                cq,
                pd: pd.clone(),
                policy: cfg.policy,
                out_of_order: cfg.out_of_order,
                slots,
                eps: Vec::with_capacity(cfg.max_endpoints),
                free: Vec::with_capacity(cfg.max_endpoints),
                held: Vec::new(),
                scratch: Box::new([LeanCompletion::default(); SCRATCH]),
                foreign: VecDeque::with_capacity(SCRATCH),
                unposted: VecDeque::with_capacity(needed),
                reset_streams,
                waiting: [false; 2],
                recovered: Recoveries::default(),
                deferred: None,
                next_token: 0,
                settled: false,
                stopped: false,
            }),
            // The DCIs made so far are gone: nothing of the pool reports to the CQ any more.
            Err(error) => Err(Returned::new(error, cq)),
        }
    }

    /// What [`DciPool::new`] checks and builds on `cq`: the DCIs' slots, the requests they
    /// can have outstanding together, and whether stream errors are recovered per stream.
    fn build_slots(mlx5: &Mlx5Context, pd: &Pd, cq: &Cq, cfg: PoolConfig) -> Result<(Vec<Slot>, usize, bool)> {
        const OP: &str = "DciPool::new";
        let extra = cfg.probation.map_or(0, |p| p.dcis);
        if cfg.dcis == 0 || cfg.dcis + extra > usize::from(u16::MAX) || cfg.max_send_wr == 0 {
            return Err(Error::invalid(
                OP,
                "a pool needs 1..=65535 DCIs (probation ones included) with a send queue depth of at least 1",
            ));
        }
        if cfg.probation.is_some_and(|p| p.dcis == 0) {
            return Err(Error::invalid(
                OP,
                "PoolConfig::probation names no DCI: give it at least 1, or set it to None",
            ));
        }
        let others = cq.reporters();
        if others > 0 {
            return Err(Error::invalid(
                OP,
                format!(
                    "{others} DCT(s) or queue pair(s) already report to this CQ: the pool reads every completion on \
                     its CQ as its DCIs' and could not hand theirs on (a receive would be lost); give the pool a CQ \
                     of its own"
                ),
            )
            .on(cq.context().name()));
        }
        let (streams, plan) = match cfg.policy {
            Policy::Streams {
                log_concurrent,
                log_errored,
            } => {
                let plan = streams_plan(mlx5.caps()?.dci_streams, log_concurrent, log_errored)
                    .map_err(|e| e.on(mlx5.context().name()))?;
                (1usize << log_concurrent, Some((log_concurrent, plan)))
            }
            _ => (1, None),
        };
        let mtu_bytes = match cfg.mtu_bytes {
            Some(bytes) => bytes,
            None => mlx5.context().query_port(cfg.port)?.active_mtu_bytes(),
        };
        let mut slots = Vec::with_capacity(cfg.dcis + extra);
        for k in 0..cfg.dcis + extra {
            let probation = k >= cfg.dcis;
            let rts = match cfg.probation {
                Some(p) if probation => RtsAttr {
                    max_rd_atomic: cfg.rts.max_rd_atomic,
                    ..p.rts
                },
                _ => cfg.rts,
            };
            let mut b = DciBuilder::new(mlx5, pd, cq)
                .max_send_wr(cfg.max_send_wr)
                .pkey_index(cfg.pkey_index)
                .backend(cfg.backend);
            if cfg.atomics {
                b = b.with_atomics();
            }
            if cfg.out_of_order {
                b = b.out_of_order_placement();
            }
            if let Some((log_concurrent, plan)) = plan {
                b = b.streams(log_concurrent, plan.log_errored);
            }
            let dci = b.build_ready(cfg.port, mtu_bytes, rts)?;
            let depth = dci.caps().max_send_wr as usize;
            slots.push(Slot {
                qp_num: dci.qp_num(),
                dci: Some(dci),
                depth,
                inflight: VecDeque::with_capacity(depth),
                replay: VecDeque::with_capacity(depth),
                reporting: 0,
                holder: None,
                failed_holder: None,
                failed_walk: false,
                probation,
                posted: 0,
                failed: false,
                stopped: false,
                stream_failed: vec![false; streams],
                erred: vec![false; streams],
            });
        }
        let needed: u64 = slots.iter().map(|s| s.depth as u64).sum();
        cq.check_room(OP, needed, || {
            format!(
                "{} DCIs x max_send_wr {} (as the library rounded {})",
                cfg.dcis + extra,
                slots[0].depth,
                cfg.max_send_wr
            )
        })?;
        Ok((slots, needed as usize, plan.is_some_and(|(_, p)| p.reset_streams)))
    }

    /// Keeps `mr` registered for as long as the pool lives, so that requests posted from it
    /// can be posted again after another peer's failure. Every region a request names must be
    /// held first; holding one twice is a no-op. The application keeps its [`Mr`] (reading
    /// and writing it as before); [`Mr::deregister`] answers EBUSY until the pool is gone.
    ///
    /// # Errors
    /// EINVAL for a region of another PD (the DCIs could not use it).
    ///
    /// Only a region over memory of its own is held (its buffer a
    /// [`BoundedBuffer`](crate::mr::BoundedBuffer)); an implicit on-demand-paging region,
    /// whose key reaches every address of the process, is not:
    ///
    /// ```compile_fail,E0277
    /// # fn f(pd: &mlx5dv::Pd, pool: &mut mlx5dv::DciPool) -> mlx5dv::Result<()> {
    /// let odp = pd.register_implicit_odp(mlx5dv::Access::LOCAL_WRITE)?;
    /// pool.hold(&odp)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn hold<B: crate::mr::BoundedBuffer + 'static>(&mut self, mr: &Mr<B>) -> Result<()> {
        if mr.pd().as_raw() != self.pd.as_raw() {
            return Err(Error::invalid(
                "DciPool::hold",
                "the region belongs to another protection domain than the pool's DCIs",
            ));
        }
        let lkey = mr.lkey();
        let at = match self.held.binary_search_by_key(&lkey, |h| h.lkey) {
            Ok(_) => return Ok(()),
            Err(at) => at,
        };
        self.held.insert(
            at,
            HeldRegion {
                lkey,
                addr: mr.addr(),
                len: mr.len() as u64,
                local_write: mr.access().contains(crate::mr::Access::LOCAL_WRITE),
                _region: mr.hold(),
            },
        );
        Ok(())
    }

    /// `sge` lies in a region the pool holds (one the device may write when `written`: an
    /// RDMA read's or atomic's local buffer): the same entry, valid for the pool's life.
    #[inline]
    pub(crate) fn held_sge(&self, sge: Sge<'_>, written: bool) -> Result<Sge<'static>> {
        let ok = match self.held.binary_search_by_key(&sge.lkey(), |h| h.lkey) {
            Ok(i) => {
                let h = &self.held[i];
                if written && !h.local_write {
                    return Err(Error::from_static(&busy::NO_LOCAL_WRITE));
                }
                sge.addr() >= h.addr && sge.addr() - h.addr + u64::from(sge.len()) <= h.len
            }
            Err(_) => false,
        };
        if !ok {
            return Err(Error::invalid(
                "DciPool::post",
                "the request's buffer is not in a region the pool holds: call DciPool::hold(&mr) once for each region you post from",
            ));
        }
        // SAFETY: the entry lies inside a registration the pool keeps alive (held above) for
        // as long as any request naming it may be posted.
        Ok(unsafe { Sge::from_raw(sge.raw()) })
    }

    /// Posts `req` for endpoint `ep`, signaled, with `wr_id` (any value: the pool matches
    /// completions by a number of its own, so duplicates and out-of-order streams are fine).
    ///
    /// # Errors
    /// EAGAIN when no DCI can take it now (all held by other endpoints, its DCI's send queue
    /// full, its DCI or stream recovering, or its quota used while others wait): poll and try
    /// again ([`Error::is_would_block`]; refusing allocates nothing). EINVAL for an unknown
    /// endpoint or a buffer outside the regions the pool holds ([`DciPool::hold`]), and for
    /// an RDMA read or atomic whose local buffer's region lacks [`crate::Access::LOCAL_WRITE`]
    /// (the device would fail it with a local protection error); ESHUTDOWN once the pool was
    /// stopped ([`DciPool::stop`]); the builder's checks (SGE against the DCI's caps) and
    /// `ibv_wr_complete` otherwise. A refused request was not posted.
    pub fn post(&mut self, ep: EndpointId, wr_id: u64, req: Request<'_>) -> Result<()> {
        self.post_checked(ep, wr_id, req, true)
    }

    /// Posts `req` like [`DciPool::post`], its local buffer in a region the pool does not
    /// hold.
    ///
    /// # Safety
    /// The local buffer's region stays registered until the request is reported by
    /// [`DciPool::poll`] (the pool may post it again until then), and the region's access
    /// allows what the request does to it (local write for a read or an atomic).
    pub(crate) unsafe fn post_lent(&mut self, ep: EndpointId, wr_id: u64, req: Request<'_>) -> Result<()> {
        self.post_checked(ep, wr_id, req, false)
    }

    #[inline]
    fn post_checked(&mut self, ep: EndpointId, wr_id: u64, req: Request<'_>, held: bool) -> Result<()> {
        let Some(i) = self.live(ep) else {
            return Err(Error::invalid(
                "DciPool::post",
                "no such endpoint in this pool (never added, or removed)",
            ));
        };
        if self.eps[i].rebind && self.eps[i].outstanding == 0 {
            self.rebind(i);
        }
        let e = &self.eps[i];
        let d = match (self.policy, e.dci) {
            (Policy::DcsQuota { quota }, Some(d))
                if e.since_acquire >= quota && self.waiting[usize::from(self.slots[d].probation)] =>
            {
                return Err(self.refused(&busy::QUOTA));
            }
            (_, Some(d)) => d,
            (_, None) => match self
                .slots
                .iter()
                .position(|s| s.holder.is_none() && !s.failed && s.probation == e.probation)
            {
                Some(d) => d,
                None => {
                    self.waiting[usize::from(e.probation)] = true;
                    let why = if e.probation {
                        &busy::NO_PROBATION_DCI
                    } else {
                        &busy::NO_DCI
                    };
                    return Err(self.refused(why));
                }
            },
        };
        let s = &self.slots[d];
        if s.failed
            || s.stream_failed[usize::from(e.stream)]
            || (!s.replay.is_empty() && s.replay.iter().any(|p| p.stream == e.stream))
        {
            // (Requests waiting to be posted again go first: the endpoint's order.)
            return Err(self.refused(&busy::RECOVERING));
        }
        if s.inflight.len() + s.replay.len() + s.reporting >= s.depth {
            return Err(would_block(&busy::FULL));
        }
        let p = Posted {
            ep: ep.0,
            token: self.next_token,
            wr_id,
            stream: e.stream,
            req: req.map_local(|local| {
                if held {
                    self.held_sge(local, req.writes_local())
                } else {
                    // SAFETY: post_lent's caller keeps the region registered until the
                    // request is reported, which is as long as the pool may post it.
                    Ok(unsafe { Sge::from_raw(local.raw()) })
                }
            })?,
        };
        self.post_on(d, &p)?;
        self.next_token += 1;
        let e = &mut self.eps[i];
        if e.dci.is_none() {
            // Dcs, DcsQuota, and any policy's endpoint on probation: the DCI is its own until
            // its last request is in (`retire`).
            e.dci = Some(d);
            e.since_acquire = 0;
            self.slots[d].holder = Some(ep.0);
        }
        e.outstanding += 1;
        e.since_acquire += 1;
        Ok(())
    }

    /// A post refused for `why` (backpressure), or because the pool was stopped, whose DCIs
    /// all count as failed for good.
    #[cold]
    fn refused(&self, why: &'static StaticError) -> Error {
        Error::from_static(if self.stopped { &busy::STOPPED } else { why })
    }

    /// Posts `p` on DCI `d` and records it.
    fn post_on(&mut self, d: usize, p: &Posted) -> Result<()> {
        let stream = matches!(self.policy, Policy::Streams { .. }).then_some(p.stream);
        // A request's endpoint is live: removal waits for its requests.
        let Some(peer) = self.eps[p.ep as usize].peer.as_ref() else {
            return Err(Error::invalid("DciPool::post", "the request's endpoint was removed"));
        };
        let slot = &mut self.slots[d];
        let Some(dci) = slot.dci.as_mut() else {
            return Err(would_block(&busy::RECOVERING));
        };
        let mut b = dci.batch();
        let built = match p.req {
            Request::Send { local } => b.send(p.token).dest_on(peer, stream).sge(local),
            Request::SendImm { local, imm } => b.send_imm(p.token, imm).dest_on(peer, stream).sge(local),
            Request::Write { local, remote } => b.rdma_write(p.token, remote).dest_on(peer, stream).sge(local),
            Request::WriteImm { local, remote, imm } => {
                b.rdma_write_imm(p.token, remote, imm).dest_on(peer, stream).sge(local)
            }
            Request::Read { local, remote } => b.rdma_read(p.token, remote).dest_on(peer, stream).sge(local),
            Request::CompareSwap {
                local,
                remote,
                compare,
                swap,
            } => b
                .atomic_cmp_swp(p.token, remote, compare, swap)
                .dest_on(peer, stream)
                .sge(local),
            Request::FetchAdd { local, remote, add } => b
                .atomic_fetch_add(p.token, remote, add)
                .dest_on(peer, stream)
                .sge(local),
        };
        built?;
        b.commit()?;
        slot.inflight.push_back(*p);
        slot.posted += 1;
        Ok(())
    }

    /// Polls the CQ: up to `out.len()` completions of the endpoints' requests, each request
    /// reported exactly once. A flushed request of a healthy endpoint that provably never
    /// left (no streams, or queued behind the failing request on its own stream) is not
    /// reported: it is posted again once its DCI (or stream) has been brought back, which
    /// this call does when the DCI's (stream's) last outstanding request has completed. A
    /// flushed request that may have executed is reported with `WrFlushErr`, never posted
    /// again (posting it could run it twice): another stream's, when the whole DCI went to
    /// ERR, and every flushed request of an endpoint that reaches the failing request's
    /// target (DCT number, LID/GID and key) over the same DCI (and stream), since requests to
    /// one DCT are pipelined: such an endpoint fails together with the failing one. Whether a
    /// flushed request may have executed is decided once every completion of the failure is
    /// in (a flush may come before its stream's error completion), so it may be reported a
    /// call or two after it was read.
    ///
    /// On a `Streams` pool a stream error is recovered by resetting the stream, and escalates
    /// to the recovery of the whole DCI ([`Recoveries::escalated`]) when the device refuses
    /// the reset or the DCI itself entered ERR (more streams in error than `log_errored`
    /// allows); where the DCIs tolerate no errored stream every stream error recovers the
    /// DCI (see [`DciPool::new`]). Polling allocates nothing, recoveries included.
    ///
    /// # Errors
    /// `Cq::poll`'s; a recovery transition that failed (the pool tries again on the next
    /// call); the provider refusing to post a flushed request again (that request is then
    /// reported to its endpoint with `WrFlushErr` by the next call: it never left); EPROTO
    /// for a completion on the pool's CQ that no DCI of the pool owns (a DCT, QP or SRQ
    /// sharing it, against [`DciPool::new`]'s rule), once per such completion, naming its
    /// QP number, `wr_id`, opcode and status (it is consumed: the message is all that is
    /// left of it). An error met after completions were written to `out` is reported by the
    /// next call, so none is lost.
    #[inline(always)]
    pub fn poll(&mut self, out: &mut [EpCompletion]) -> Result<usize> {
        match self.poll_if_any(out) {
            None => Ok(0),
            Some(read) => read,
        }
    }

    /// [`DciPool::poll`], None for the idle poll that found nothing (nothing held back, no
    /// DCI to recover, nothing new on the CQ): a caller polling while idle (the S3
    /// executor) then returns at once, without an `Ok(0)` to look at.
    #[inline(always)]
    pub(crate) fn poll_if_any(&mut self, out: &mut [EpCompletion]) -> Option<Result<usize>> {
        if self.settled && self.deferred.is_none() && self.foreign.is_empty() && self.unposted.is_empty() {
            let room = out.len().min(SCRATCH);
            return match self.cq.poll_lean_if_any(&mut self.scratch[..room]) {
                None => None,
                read => Some(self.poll_read(out, read)),
            };
        }
        Some(self.poll_read(out, None))
    }

    /// [`DciPool::poll`] past its idle case, given what it read from the CQ (None: nothing
    /// read yet).
    #[inline(never)]
    fn poll_read(&mut self, out: &mut [EpCompletion], read: Option<Result<usize>>) -> Result<usize> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        if let Some(c) = self.foreign.pop_front() {
            return Err(self.foreign_error(&c));
        }
        // First, flushed requests decided on (or whose replay the provider refused).
        let mut n = if self.unposted.is_empty() {
            0
        } else {
            self.report_flushed(out)
        };
        let room = (out.len() - n).min(SCRATCH);
        let read = match read {
            Some(read) => read,
            None => self.cq.poll_lean_if_any(&mut self.scratch[..room]).unwrap_or(Ok(0)),
        };
        let k = match read {
            Ok(k) => k,
            Err(e) if n > 0 => {
                self.deferred = Some(e);
                return Ok(n);
            }
            Err(e) => return Err(e),
        };
        for j in 0..k {
            let c = self.scratch[j];
            let Some(d) = self.slots.iter().position(|s| s.qp_num == c.qp_num) else {
                // Not the pool's (newuser-4 B1): reported as an error, never dropped.
                self.foreign.push_back(c);
                continue;
            };
            // In post order, except that DCI streams may complete out of order: the request
            // is the one with this token.
            let inflight = &mut self.slots[d].inflight;
            let at = match inflight.front() {
                Some(f) if f.token == c.wr_id => Some(0),
                _ => inflight.iter().position(|q| q.token == c.wr_id),
            };
            let Some(p) = at.and_then(|i| inflight.remove(i)) else {
                continue;
            };
            let ep = p.ep as usize;
            match c.status {
                WcStatus::Success => {
                    out[n] = EpCompletion {
                        endpoint: EndpointId(p.ep, self.eps[p.ep as usize].generation),
                        wr_id: p.wr_id,
                        status: c.status,
                        opcode: c.opcode,
                    };
                    n += 1;
                    self.retire(d, ep);
                }
                WcStatus::WrFlushErr if self.eps[ep].failed.is_none() && !self.stopped => {
                    // Another peer's failure flushed it (or its own, whose error completion
                    // comes later): held until every completion of the failure is in.
                    self.flushed(d, p.stream);
                    hold_in_post_order(&mut self.slots[d].replay, p, |q| q.token);
                }
                status => {
                    out[n] = EpCompletion {
                        endpoint: EndpointId(p.ep, self.eps[p.ep as usize].generation),
                        wr_id: p.wr_id,
                        status,
                        opcode: None,
                    };
                    n += 1;
                    if status != WcStatus::WrFlushErr {
                        self.fail(d, ep, p.stream);
                    }
                    self.retire(d, ep);
                }
            }
        }
        let mut failure = None;
        // A DCI with nothing to recover or post again: restore would do nothing for it. The
        // idle poll (no completion since a poll found every DCI so) does not look again.
        let settled = |s: &Slot| !s.failed && s.replay.is_empty() && !s.stream_failed.contains(&true);
        if k > 0 {
            self.settled = false;
        }
        debug_assert!(
            !self.settled || self.slots.iter().all(settled),
            "a DCI's recovery state changed outside DciPool::poll"
        );
        if !self.settled && self.slots.iter().all(settled) {
            self.settled = true;
        }
        for d in 0..self.slots.len() {
            // (A stopped pool recovers nothing: its DCIs stay in ERR.)
            if self.settled || self.stopped {
                break;
            }
            if let Err(e) = self.restore(d) {
                failure = Some(e);
                break;
            }
        }
        if !self.unposted.is_empty() {
            n += self.report_flushed(&mut out[n..]);
        }
        if let Some(e) = failure {
            if n == 0 {
                return Err(e);
            }
            self.deferred = Some(e);
        } else if n == 0 {
            if let Some(c) = self.foreign.pop_front() {
                return Err(self.foreign_error(&c));
            }
        }
        Ok(n)
    }

    /// Stops the pool for good: moves every DCI to ERR (`ibv_modify_qp` to `IBV_QPS_ERR`,
    /// which IBA 10.3.1 lets any state go to, and mlx5_ib any but RESET:
    /// `modify_dci_qp_is_ok`), so that the device executes nothing more of
    /// what was posted: a QP in ERR sends no request and takes in no response (an RDMA read's
    /// data still on the wire is dropped, never placed), and each request outstanding
    /// completes flushed. For a server that gives up (a device that keeps failing its
    /// commands) and must not have requests posted before that run after it.
    ///
    /// A request's buffers are the device's until its completion, flushed or not, is polled:
    /// only then is it sure that nothing of it is placed any more (mlx5_ib's own drain moves
    /// its QP to ERR, then waits for a flush completion: `mlx5_ib_drain_sq`). So poll on:
    /// every request is still reported once, the flushed ones with `WrFlushErr` (none is
    /// posted again, none recovered). From now on nothing is posted (ESHUTDOWN) and no DCI is
    /// brought back.
    ///
    /// # Errors
    /// The first DCI that could not be moved to ERR (`ibv_modify_qp`'s errno: ENOMEM when the
    /// kernel could not run the command; EIO once the device is gone, which then executes
    /// nothing anyway; EINVAL for a DCI left in RESET by a recovery that failed, which has
    /// nothing outstanding). The other DCIs are stopped all the same; the requests posted on
    /// one that was not may still execute (and still complete, if the device lives): their
    /// buffers stay the device's. Calling it again tries those DCIs again.
    pub fn stop(&mut self) -> Result<()> {
        self.stopped = true;
        self.settled = false;
        let mut failure = None;
        for (d, slot) in self.slots.iter_mut().enumerate() {
            slot.failed = true;
            if slot.stopped {
                continue;
            }
            // No DCI (a recovery that failed is being retried): nothing of it is outstanding.
            let stopped = slot.dci.as_mut().map_or(Ok(()), Dci::force_error);
            match stopped {
                Ok(()) => slot.stopped = true,
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
            // Flushed requests held to be posted again never will be: they are reported.
            while let Some(p) = slot.replay.pop_front() {
                slot.reporting += 1;
                self.unposted.push_back((d, p));
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// The `wr_id`s of the requests outstanding on DCIs that [`DciPool::stop`] could not move
    /// to ERR: the device may still execute them.
    pub(crate) fn unstopped(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots
            .iter()
            .filter(|s| self.stopped && !s.stopped)
            .flat_map(|s| s.inflight.iter().map(|p| p.wr_id))
    }

    /// The error for completion `c`, which no DCI of the pool owns.
    #[cold]
    fn foreign_error(&self, c: &LeanCompletion) -> Error {
        Error::from_errno(
            "DciPool::poll",
            libc::EPROTO,
            format!(
                "a completion that no DCI of the pool owns reached its CQ (QP {:#x}, wr_id {:#x}, opcode {:?}, status \
                 {:?}, {} bytes) and was consumed: a DCT, QP or SRQ reports to the pool's CQ, whose completions the \
                 pool cannot hand on; give the pool a CQ of its own (see DciPool::new)",
                c.qp_num, c.wr_id, c.opcode, c.status, c.byte_len
            ),
        )
        .on(self.cq.context().name())
    }

    /// The pool's CQ, for its completion channel when it was created with one
    /// ([`Cq::req_notify`], [`Cq::try_event`], [`Cq::channel`]'s descriptor for epoll or an
    /// async runtime). Do not poll it: its completions are the pool's ([`DciPool::poll`]).
    pub fn cq(&self) -> &Cq {
        &self.cq
    }

    /// What the pool has recovered so far.
    pub fn recoveries(&self) -> Recoveries {
        self.recovered
    }

    /// The pool's DCIs (for their states and numbers).
    pub fn dcis(&self) -> impl Iterator<Item = &Dci<Rts>> {
        self.slots.iter().filter_map(|s| s.dci.as_ref())
    }

    /// Requests posted so far on each DCI, in DCI index order (the main DCIs, then the
    /// probation ones), replays included: how the pool shares its DCIs among endpoints. Each
    /// item: whether it is a probation DCI, and its count.
    pub fn posted_per_dci(&self) -> impl Iterator<Item = (bool, u64)> + '_ {
        self.slots.iter().map(|s| (s.probation, s.posted))
    }

    /// Requests of `ep` posted and not yet reported (flushed ones waiting to be posted again
    /// included).
    pub fn outstanding(&self, ep: EndpointId) -> u32 {
        self.live(ep).map_or(0, |i| self.eps[i].outstanding)
    }

    /// The DCI index (0..W) and stream `ep` posts on now, if it has one.
    pub fn assignment(&self, ep: EndpointId) -> Option<(usize, u16)> {
        let e = &self.eps[self.live(ep)?];
        e.dci.map(|d| (d, e.stream))
    }

    /// Whether `ep` is on probation (posts only on probation DCIs), if it is live.
    pub(crate) fn on_probation(&self, ep: EndpointId) -> Option<bool> {
        self.live(ep).map(|i| self.eps[i].probation)
    }

    /// Requests in flight on all DCIs (posted, not completed, flushed ones included).
    pub fn in_flight(&self) -> usize {
        self.slots
            .iter()
            .map(|s| s.inflight.len() + s.replay.len())
            .sum::<usize>()
            + self.unposted.len()
    }
}
