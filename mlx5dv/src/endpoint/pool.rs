//! The pool: DCIs, the endpoint table, the assignment policies, and recovery with re-posting.

use super::{DcPeer, EndpointId, EpCompletion, Policy, Request};
use crate::cq::{Completion, Cq, WcStatus};
use crate::dc::{Dci, DciBuilder, Mlx5Context};
use crate::direct::SendBackend;
use crate::error::{Error, Result, StaticError};
use crate::mr::{Held, Mr, Returned, Sge};
use crate::pd::Pd;
use crate::qp::{state::Rts, QpState, RtsAttr};
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
}

impl Default for PoolConfig {
    /// Four DCIs of 128 requests, 1024 endpoints, `Dcs`, port 1 at its active MTU, no atomics.
    fn default() -> Self {
        PoolConfig {
            dcis: 4,
            max_endpoints: 1024,
            policy: Policy::Dcs,
            max_send_wr: 128,
            port: 1,
            mtu_bytes: None,
            rts: RtsAttr::default(),
            atomics: false,
            backend: SendBackend::WrApi,
            out_of_order: false,
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
    /// Flushed requests of endpoints not (yet) known to have failed, in post order, held
    /// until the DCI (or their stream) has drained: then every completion of the failure is
    /// in, and [`DciPool::decide`] reports those that may have executed and keeps, to post
    /// again, those that provably never left (no streams, or queued behind the failing
    /// request on its own stream).
    replay: VecDeque<Posted>,
    /// Of its requests, how many wait in the pool's `unposted` queue to be reported flushed
    /// (still counted against its depth, so that queue never grows).
    reporting: usize,
    /// The endpoint holding the DCI (Dcs, DcsQuota).
    holder: Option<u32>,
    /// The DCI is in ERR: no new requests until it is recovered.
    failed: bool,
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
    scratch: Vec<Completion>,
    /// Completions on the CQ that no DCI of the pool owns (a DCT or QP sharing it): each is
    /// reported by a poll as an error naming it, never dropped. At most `SCRATCH`: the CQ is
    /// read only while it is empty.
    foreign: VecDeque<Completion>,
    /// Flushed requests to report with `WrFlushErr`, by DCI: those that may have executed,
    /// those of failed endpoints, and those whose replay the provider refused (with another
    /// error than EAGAIN: they never left).
    unposted: VecDeque<(usize, Posted)>,
    /// `Streams` only: a stream error is recovered by resetting the stream. False where the
    /// DCIs tolerate no errored stream (`log_errored` 0, or a device reporting
    /// `max_log_num_errored` 0): every stream error then takes the DCI to ERR, and the pool
    /// recovers the whole DCI (counted in [`Recoveries::dcis`]).
    reset_streams: bool,
    /// An endpoint was refused for want of a DCI since one was last given back (DcsQuota).
    waiting: bool,
    recovered: Recoveries,
    /// A recovery error met after completions were written: reported by the next poll.
    deferred: Option<Error>,
    /// The next request's token.
    next_token: u64,
    /// No DCI had anything to recover or post again when the last poll looked, and no
    /// completion came since: a DCI's state changes only by completions or recoveries, both
    /// in [`DciPool::poll`], so the idle poll skips the look (checked in debug builds).
    settled: bool,
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
    pub(super) static RECOVERING: StaticError = StaticError::new(
        OP,
        libc::EAGAIN,
        "the DCI is recovering from another peer's failure: poll and try again",
    );
    pub(super) static FULL: StaticError =
        StaticError::new(OP, libc::EAGAIN, "the DCI's send queue is full: poll and try again");
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
                cq,
                pd: pd.clone(),
                policy: cfg.policy,
                out_of_order: cfg.out_of_order,
                slots,
                eps: Vec::with_capacity(cfg.max_endpoints),
                free: Vec::with_capacity(cfg.max_endpoints),
                held: Vec::new(),
                scratch: vec![Completion::default(); SCRATCH],
                foreign: VecDeque::with_capacity(SCRATCH),
                unposted: VecDeque::with_capacity(needed),
                reset_streams,
                waiting: false,
                recovered: Recoveries::default(),
                deferred: None,
                next_token: 0,
                settled: false,
            }),
            // The DCIs made so far are gone: nothing of the pool reports to the CQ any more.
            Err(error) => Err(Returned { error, value: cq }),
        }
    }

    /// What [`DciPool::new`] checks and builds on `cq`: the DCIs' slots, the requests they
    /// can have outstanding together, and whether stream errors are recovered per stream.
    fn build_slots(mlx5: &Mlx5Context, pd: &Pd, cq: &Cq, cfg: PoolConfig) -> Result<(Vec<Slot>, usize, bool)> {
        const OP: &str = "DciPool::new";
        if cfg.dcis == 0 || cfg.dcis > usize::from(u16::MAX) || cfg.max_send_wr == 0 {
            return Err(Error::invalid(
                OP,
                "a pool needs 1..=65535 DCIs with a send queue depth of at least 1",
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
        let mut slots = Vec::with_capacity(cfg.dcis);
        for _ in 0..cfg.dcis {
            let mut b = DciBuilder::new(mlx5, pd, cq)
                .max_send_wr(cfg.max_send_wr)
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
            let dci = b.build_ready(cfg.port, mtu_bytes, cfg.rts)?;
            let depth = dci.caps().max_send_wr as usize;
            slots.push(Slot {
                qp_num: dci.qp_num(),
                dci: Some(dci),
                depth,
                inflight: VecDeque::with_capacity(depth),
                replay: VecDeque::with_capacity(depth),
                reporting: 0,
                holder: None,
                failed: false,
                stream_failed: vec![false; streams],
                erred: vec![false; streams],
            });
        }
        let needed: u64 = slots.iter().map(|s| s.depth as u64).sum();
        cq.check_room(OP, needed, || {
            format!(
                "{} DCIs x max_send_wr {} (as the library rounded {})",
                cfg.dcis, slots[0].depth, cfg.max_send_wr
            )
        })?;
        Ok((slots, needed as usize, plan.is_some_and(|(_, p)| p.reset_streams)))
    }

    /// Adds an endpoint for `peer` (without a stream: the pool picks it under `Streams`).
    ///
    /// # Errors
    /// The peer comes back with the error ([`Returned`]; `?` turns it into the [`Error`]):
    /// ENOSPC when the table (`max_endpoints`) is full; EINVAL when the peer's DCT places data
    /// out of order and the pool's DCIs do not, or the other way round (both ends of a DC
    /// connection must agree on `MLX5DV_QP_CREATE_OOO_DP`: see [`PoolConfig::out_of_order`]).
    pub fn add_endpoint(&mut self, peer: DcPeer) -> std::result::Result<EndpointId, Returned<DcPeer>> {
        const OP: &str = "DciPool::add_endpoint";
        if self.free.is_empty() && self.eps.len() == self.eps.capacity() {
            return Err(Returned {
                error: Error::from_errno(
                    OP,
                    libc::ENOSPC,
                    "the pool's endpoint table is full: remove endpoints whose peers are gone \
                     (DciPool::remove_endpoint), or create the pool with a larger max_endpoints",
                ),
                value: peer,
            });
        }
        if peer.out_of_order() != self.out_of_order {
            let (dct, pool) = if self.out_of_order {
                ("in order", "out of order")
            } else {
                ("out of order", "in order")
            };
            return Err(Returned {
                error: Error::invalid(
                    OP,
                    format!(
                        "DCT {:#x} places data {dct} but the pool's DCIs place it {pool}: both ends must agree \
                         (MLX5DV_QP_CREATE_OOO_DP); reach it from a pool whose PoolConfig::out_of_order matches its \
                         DcTargetAddr::out_of_order",
                        peer.dct_number()
                    ),
                ),
                value: peer,
            });
        }
        let i = self.free.last().map_or(self.eps.len(), |&f| f as usize);
        let w = self.slots.len();
        let (dci, stream) = match self.policy {
            Policy::Dcs | Policy::DcsQuota { .. } => (None, 0),
            Policy::Streams { log_concurrent, .. } => (Some(i % w), ((i / w) % (1usize << log_concurrent)) as u16),
            Policy::Rand { seed } => (Some((mix(seed ^ i as u64) % w as u64) as usize), 0),
        };
        let ep = Ep {
            peer: Some(peer),
            generation: self.eps.get(i).map_or(0, |e| e.generation),
            dci,
            stream,
            outstanding: 0,
            since_acquire: 0,
            failed: None,
        };
        let id = EndpointId(i as u32, ep.generation);
        if self.free.pop().is_some() {
            self.eps[i] = ep;
        } else {
            self.eps.push(ep);
        }
        Ok(id)
    }

    /// Removes endpoint `ep` (a client that is gone): its place in the table goes to the next
    /// endpoint added, and its peer (with its address handle) comes back to be dropped. Its
    /// id names nothing from now on, even once the place is reused.
    ///
    /// # Errors
    /// EINVAL when `ep` names no endpoint of this pool (never added, or removed already);
    /// EBUSY while it has requests outstanding ([`DciPool::outstanding`]): poll until they are
    /// reported (a dead peer's fail, and are reported, like any other), then remove it.
    pub fn remove_endpoint(&mut self, ep: EndpointId) -> Result<DcPeer> {
        const OP: &str = "DciPool::remove_endpoint";
        let Some(i) = self.live(ep) else {
            return Err(Error::invalid(
                OP,
                "no such endpoint in this pool (never added, or removed)",
            ));
        };
        let e = &mut self.eps[i];
        if e.outstanding > 0 {
            return Err(Error::from_errno(
                OP,
                libc::EBUSY,
                format!(
                    "the endpoint has {} request(s) outstanding: poll until they are reported, then remove it",
                    e.outstanding
                ),
            ));
        }
        let Some(peer) = e.peer.take() else {
            return Err(Error::invalid(OP, "no such endpoint in this pool (removed)"));
        };
        e.generation = e.generation.wrapping_add(1);
        e.failed = None;
        self.free.push(i as u32);
        Ok(peer)
    }

    /// The place of endpoint `ep` if it names a live endpoint of this pool.
    #[inline]
    fn live(&self, ep: EndpointId) -> Option<usize> {
        let i = ep.0 as usize;
        let e = self.eps.get(i)?;
        (e.peer.is_some() && e.generation == ep.1).then_some(i)
    }

    /// Keeps `mr` registered for as long as the pool lives, so that requests posted from it
    /// can be posted again after another peer's failure. Every region a request names must be
    /// held first; holding one twice is a no-op. The application keeps its [`Mr`] (reading
    /// and writing it as before); [`Mr::deregister`] answers EBUSY until the pool is gone.
    ///
    /// # Errors
    /// EINVAL for a region of another PD (the DCIs could not use it).
    pub fn hold<B: Send + 'static>(&mut self, mr: &Mr<B>) -> Result<()> {
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
    /// (the device would fail it with a local protection error); the builder's checks (SGE against the DCI's caps) and `ibv_wr_complete` otherwise. A
    /// refused request was not posted.
    pub fn post(&mut self, ep: EndpointId, wr_id: u64, req: Request<'_>) -> Result<()> {
        let Some(i) = self.live(ep) else {
            return Err(Error::invalid(
                "DciPool::post",
                "no such endpoint in this pool (never added, or removed)",
            ));
        };
        let e = &self.eps[i];
        let d = match (self.policy, e.dci) {
            (Policy::DcsQuota { quota }, Some(_)) if e.since_acquire >= quota && self.waiting => {
                return Err(would_block(&busy::QUOTA));
            }
            (_, Some(d)) => d,
            (_, None) => match self.slots.iter().position(|s| s.holder.is_none() && !s.failed) {
                Some(d) => d,
                None => {
                    self.waiting = true;
                    return Err(would_block(&busy::NO_DCI));
                }
            },
        };
        let s = &self.slots[d];
        if s.failed
            || s.stream_failed[usize::from(e.stream)]
            || (!s.replay.is_empty() && s.replay.iter().any(|p| p.stream == e.stream))
        {
            // (Requests waiting to be posted again go first: the endpoint's order.)
            return Err(would_block(&busy::RECOVERING));
        }
        if s.inflight.len() + s.replay.len() + s.reporting >= s.depth {
            return Err(would_block(&busy::FULL));
        }
        let p = Posted {
            ep: ep.0,
            token: self.next_token,
            wr_id,
            stream: e.stream,
            req: req.map_local(|local| self.held_sge(local, req.writes_local()))?,
        };
        self.post_on(d, &p)?;
        self.next_token += 1;
        let e = &mut self.eps[i];
        if matches!(self.policy, Policy::Dcs | Policy::DcsQuota { .. }) && e.dci.is_none() {
            e.dci = Some(d);
            e.since_acquire = 0;
            self.slots[d].holder = Some(ep.0);
        }
        e.outstanding += 1;
        e.since_acquire += 1;
        Ok(())
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
    #[inline]
    pub fn poll(&mut self, out: &mut [EpCompletion]) -> Result<usize> {
        // The idle poll: nothing held back, no DCI to recover, nothing new on the CQ.
        if self.settled && self.deferred.is_none() && self.foreign.is_empty() && self.unposted.is_empty() {
            let room = out.len().min(SCRATCH);
            return match self.cq.poll(&mut self.scratch[..room]) {
                Ok(0) => Ok(0),
                read => self.poll_read(out, Some(read)),
            };
        }
        self.poll_read(out, None)
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
            None => self.cq.poll(&mut self.scratch[..room]),
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
                WcStatus::WrFlushErr if self.eps[ep].failed.is_none() => {
                    // Another peer's failure flushed it (or its own, whose error completion
                    // comes later): held until every completion of the failure is in.
                    self.flushed(d, p.stream);
                    self.slots[d].replay.push_back(p);
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
            if self.settled {
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

    /// Reports flushed requests waiting in `unposted` into `out`; returns how many.
    fn report_flushed(&mut self, out: &mut [EpCompletion]) -> usize {
        let mut n = 0;
        while n < out.len() {
            let Some((d, p)) = self.unposted.pop_front() else {
                break;
            };
            out[n] = EpCompletion {
                endpoint: EndpointId(p.ep, self.eps[p.ep as usize].generation),
                wr_id: p.wr_id,
                status: WcStatus::WrFlushErr,
                opcode: None,
            };
            n += 1;
            self.slots[d].reporting -= 1;
            self.retire(d, p.ep as usize);
        }
        n
    }

    /// The error for completion `c`, which no DCI of the pool owns.
    #[cold]
    fn foreign_error(&self, c: &Completion) -> Error {
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

    /// Endpoint `ep`'s request on DCI `d` is done.
    fn retire(&mut self, d: usize, ep: usize) {
        let e = &mut self.eps[ep];
        e.outstanding -= 1;
        if e.outstanding == 0 && matches!(self.policy, Policy::Dcs | Policy::DcsQuota { .. }) {
            e.dci = None;
            e.since_acquire = 0;
            self.slots[d].holder = None;
            self.waiting = false;
        }
    }

    /// DCI `d` is in ERR (or is treated so): no new requests until its full recovery. On a
    /// pool that resets streams, a stream error that ends here is an escalation.
    fn dci_failed(&mut self, d: usize) {
        let slot = &mut self.slots[d];
        if !slot.failed {
            slot.failed = true;
            if self.reset_streams {
                self.recovered.escalated += 1;
            }
        }
    }

    /// Whether DCI `d` is in ERR; a state that cannot be read counts as ERR (the full
    /// recovery is the safe side).
    fn dci_in_err(&self, d: usize) -> bool {
        self.slots[d]
            .dci
            .as_ref()
            .map_or(true, |dci| dci.query_state().map_or(true, |s| s == QpState::Err))
    }

    /// A flushed request of an endpoint not known to have failed, on DCI `d`, stream
    /// `stream`: without a failure seen on its stream, either the whole DCI went to ERR, or
    /// (streams) its stream erred and the error completion comes after the flush.
    fn flushed(&mut self, d: usize, stream: u16) {
        let slot = &self.slots[d];
        if slot.failed || slot.stream_failed[usize::from(stream)] {
            return;
        }
        if !self.reset_streams || self.dci_in_err(d) {
            self.dci_failed(d);
        } else {
            self.slots[d].stream_failed[usize::from(stream)] = true;
        }
    }

    /// Endpoint `ep`'s peer failed on DCI `d` (stream `stream`): the DCI entered ERR, or with
    /// streams only the stream did. Every endpoint reaching the same target over this DCI
    /// (and stream) fails with it (finding 7).
    fn fail(&mut self, d: usize, ep: usize, stream: u16) {
        let streams = matches!(self.policy, Policy::Streams { .. });
        for i in 0..self.eps.len() {
            let same = i == ep || {
                let (e, f) = (&self.eps[i], &self.eps[ep]);
                e.dci == Some(d)
                    && (!streams || e.stream == stream)
                    && matches!((&e.peer, &f.peer), (Some(a), Some(b)) if a.same_target(b))
            };
            if same {
                self.eps[i].failed = Some(d);
            }
        }
        let slot = &mut self.slots[d];
        slot.stream_failed[usize::from(stream)] = true;
        slot.erred[usize::from(stream)] = true;
        if !self.reset_streams || self.dci_in_err(d) {
            self.dci_failed(d);
        }
    }

    /// Decides the held flushed requests of DCI `d` (of stream `only`, when given) once
    /// every completion of the failure is in: those of failed endpoints, and (the whole DCI
    /// having gone to ERR) those of other streams than a failing one, may have executed and
    /// go to be reported; the others stay, to be posted again.
    fn decide(&mut self, d: usize, only: Option<u16>) {
        let streams = matches!(self.policy, Policy::Streams { .. });
        let mut i = 0;
        while i < self.slots[d].replay.len() {
            let slot = &self.slots[d];
            let p = slot.replay[i];
            if only.is_some_and(|s| s != p.stream) {
                i += 1;
                continue;
            }
            let failed = self.eps[p.ep as usize].failed == Some(d);
            let other_stream = streams && slot.failed && !slot.erred[usize::from(p.stream)];
            if !(failed || other_stream) {
                i += 1;
                continue;
            }
            if !failed {
                self.recovered.reported_flushed += 1;
            }
            let slot = &mut self.slots[d];
            slot.replay.remove(i);
            slot.reporting += 1;
            self.unposted.push_back((d, p));
        }
    }

    /// Brings DCI `d` (or its errored streams) back once nothing of it (of them) is
    /// outstanding, and posts again what the failure flushed before it left.
    fn restore(&mut self, d: usize) -> Result<()> {
        let slot = &self.slots[d];
        if slot.failed {
            if !slot.inflight.is_empty() || slot.dci.is_none() {
                return Ok(());
            }
            self.decide(d, None);
            let slot = &mut self.slots[d];
            let Some(dci) = slot.dci.take() else {
                return Ok(());
            };
            match dci.recover() {
                // (The recovery's RESET cleaned a direct CQ of this DCI's entries.)
                Ok(dci) => slot.dci = Some(dci),
                Err(e) => {
                    slot.dci = Some(e.object);
                    return Err(e.error);
                }
            }
            slot.failed = false;
            slot.stream_failed.iter_mut().for_each(|f| *f = false);
            slot.erred.iter_mut().for_each(|f| *f = false);
            self.recovered.dcis += 1;
            // Only the endpoints that failed on this DCI (finding 4: not those of others).
            for ep in self.eps.iter_mut().filter(|e| e.failed == Some(d)) {
                ep.failed = None;
            }
        }
        for s in 0..self.slots[d].stream_failed.len() {
            let slot = &self.slots[d];
            if !slot.stream_failed[s] || slot.inflight.iter().any(|p| usize::from(p.stream) == s) {
                continue;
            }
            if slot.dci.is_none() {
                return Ok(());
            }
            // The DCI may have entered ERR after its state was read (hardware moves it there
            // once the errored streams reach the limit): then it needs the full recovery.
            if self.dci_in_err(d) {
                self.dci_failed(d);
                return Ok(());
            }
            let Some(dci) = self.slots[d].dci.as_mut() else {
                return Ok(());
            };
            if dci.reset_stream_code(s as u16) != 0 {
                // Escalate (finding 6): to ERR, so that every other stream's request
                // completes (flushed) before the full recovery on a later poll. The refusal
                // is not made into an Error: polling allocates nothing.
                dci.force_error()?;
                self.dci_failed(d);
                return Ok(());
            }
            self.decide(d, Some(s as u16));
            let slot = &mut self.slots[d];
            slot.stream_failed[s] = false;
            slot.erred[s] = false;
            self.recovered.streams += 1;
            for ep in self
                .eps
                .iter_mut()
                .filter(|e| e.failed == Some(d) && usize::from(e.stream) == s)
            {
                ep.failed = None;
            }
        }
        self.replay(d)
    }

    /// Posts again, in order, the flushed requests of DCI `d` whose stream is back (finding
    /// 3: nothing is dropped, nothing stranded). A post refused with EAGAIN keeps its request
    /// (and those behind it) for the next call; one refused otherwise is reported with
    /// `WrFlushErr` by the next poll (it never left), the others are still posted, and the
    /// first such error is returned.
    fn replay(&mut self, d: usize) -> Result<()> {
        let mut refused = None;
        let mut i = 0;
        while i < self.slots[d].replay.len() {
            let slot = &self.slots[d];
            let p = slot.replay[i];
            if slot.failed || slot.stream_failed[usize::from(p.stream)] {
                i += 1;
                continue;
            }
            match self.post_on(d, &p) {
                Ok(()) => self.recovered.reposted += 1,
                // The send queue has no room yet (libmlx5 may count a request as outstanding
                // until a later completion): it stays first in line for the next poll.
                Err(e) if e.is_would_block() => break,
                Err(e) => {
                    self.slots[d].reporting += 1;
                    self.unposted.push_back((d, p));
                    refused.get_or_insert(e);
                }
            }
            self.slots[d].replay.remove(i);
        }
        refused.map_or(Ok(()), Err)
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

    /// Requests in flight on all DCIs (posted, not completed, flushed ones included).
    pub fn in_flight(&self) -> usize {
        self.slots
            .iter()
            .map(|s| s.inflight.len() + s.replay.len())
            .sum::<usize>()
            + self.unposted.len()
    }
}

/// How a `Streams` pool's DCIs are built and recovered.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct StreamsPlan {
    /// The `log_errored` the DCIs are created with.
    log_errored: u8,
    /// Whether a stream error is recovered by resetting the stream (per-stream isolation).
    /// False where the DCIs tolerate no errored stream: the first stream error takes the DCI
    /// to ERR (and the device refuses stream resets), so the pool recovers the whole DCI.
    reset_streams: bool,
}

/// The plan for `Policy::Streams { log_concurrent, log_errored }` on a device reporting
/// `device` as its DCI streams caps (max log2 concurrent, max log2 errored; None: none).
///
/// A device with `max_log_num_errored` 0 gets DCIs with `log_errored` 0, whatever was asked,
/// recovered as a whole (the fallback [`DciPool::new`] documents); `log_errored` 0 asked of
/// any device means the same.
fn streams_plan(device: Option<(u8, u8)>, log_concurrent: u8, log_errored: u8) -> Result<StreamsPlan> {
    const OP: &str = "DciPool::new";
    let (max_concurrent, max_errored) = match device {
        Some((c, e)) if c > 0 => (c, e),
        _ => {
            return Err(Error::from_errno(
                OP,
                libc::EOPNOTSUPP,
                "Policy::Streams needs DCI streams, and the device reports none (mlx5dv_query_device: \
                 dci_streams_caps.max_log_num_concurent is 0 or absent): use another Policy (Dcs, DcsQuota or Rand)",
            ))
        }
    };
    if log_concurrent > max_concurrent {
        return Err(Error::invalid(
            OP,
            format!(
                "Policy::Streams asks for 2^{log_concurrent} streams per DCI, the device allows 2^{max_concurrent} \
                 (max_log_num_concurent): ask for log_concurrent {max_concurrent} at most"
            ),
        ));
    }
    if max_errored == 0 {
        return Ok(StreamsPlan {
            log_errored: 0,
            reset_streams: false,
        });
    }
    if log_errored > max_errored {
        return Err(Error::invalid(
            OP,
            format!(
                "Policy::Streams asks for 2^{log_errored} errored streams per DCI, the device allows 2^{max_errored} \
                 (max_log_num_errored): ask for log_errored {max_errored} at most"
            ),
        ));
    }
    Ok(StreamsPlan {
        log_errored,
        reset_streams: log_errored > 0,
    })
}

/// splitmix64: a fixed, well-spread DCI per endpoint (Rand).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_on_a_device_with_no_errored_streams_fall_back_to_recovering_the_whole_dci() {
        // max_log_num_errored 0: the first stream error takes the DCI to ERR and stream resets
        // are refused, so nothing may promise per-stream isolation there.
        for asked in [0, 1, 4] {
            assert_eq!(
                streams_plan(Some((4, 0)), 2, asked).unwrap(),
                StreamsPlan {
                    log_errored: 0,
                    reset_streams: false
                },
                "log_errored {asked} asked"
            );
        }
    }

    #[test]
    fn streams_reset_streams_only_where_the_dcis_tolerate_an_errored_stream() {
        assert_eq!(
            streams_plan(Some((4, 4)), 2, 1).unwrap(),
            StreamsPlan {
                log_errored: 1,
                reset_streams: true
            }
        );
        assert_eq!(
            streams_plan(Some((4, 4)), 2, 0).unwrap(),
            StreamsPlan {
                log_errored: 0,
                reset_streams: false
            },
            "log_errored 0: the first error takes the DCI to ERR"
        );
    }

    #[test]
    fn streams_without_dci_streams_are_refused_naming_the_pool_and_saying_use_another_policy() {
        for device in [None, Some((0, 0)), Some((0, 3))] {
            let e = streams_plan(device, 1, 0).unwrap_err();
            assert_eq!((e.op(), e.errno()), ("DciPool::new", Some(libc::EOPNOTSUPP)));
            assert!(e.hint().contains("use another Policy"), "{e}");
        }
    }

    #[test]
    fn streams_beyond_the_devices_caps_are_refused_naming_the_limit() {
        let e = streams_plan(Some((2, 1)), 3, 0).unwrap_err();
        assert_eq!(e.errno(), Some(libc::EINVAL));
        assert!(e.hint().contains("log_concurrent 2 at most"), "{e}");
        let e = streams_plan(Some((2, 1)), 2, 2).unwrap_err();
        assert!(e.hint().contains("log_errored 1 at most"), "{e}");
    }
}
