//! The pool: DCIs, the endpoint table, the assignment policies, and recovery with re-posting.

use super::{DcPeer, EndpointId, EpCompletion, Policy, Request};
use crate::cq::{Completion, Cq, WcStatus};
use crate::dc::{Dci, DciBuilder, Mlx5Context};
use crate::direct::SendBackend;
use crate::error::{Error, Result, StaticError};
use crate::mr::{Held, Mr, Sge};
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
    /// Flushed requests of healthy endpoints that provably never left (no streams, or queued
    /// behind the failing request on its own stream), in post order, to post again.
    replay: VecDeque<Posted>,
    /// The endpoint holding the DCI (Dcs, DcsQuota).
    holder: Option<u32>,
    /// The DCI is in ERR: no new requests until it is recovered.
    failed: bool,
    /// Streams on which a request failed (stream 0 without streams), until the stream is
    /// reset or the DCI recovered: no new requests on them meanwhile.
    stream_failed: Vec<bool>,
}

struct Ep {
    peer: DcPeer,
    /// Its DCI: fixed (Rand, Streams) or held while it has requests outstanding (Dcs).
    dci: Option<usize>,
    stream: u16,
    outstanding: u32,
    /// Requests posted since it took its DCI (DcsQuota).
    since_acquire: u32,
    /// Its peer failed, on this DCI: its flushed requests are reported, not posted again,
    /// until that DCI (or its stream) is recovered.
    failed: Option<usize>,
}

/// A region the pool keeps registered while its requests may name it.
struct HeldRegion {
    lkey: u32,
    addr: u64,
    len: u64,
    _region: Arc<dyn Held>,
}

/// W DCIs on one CQ shared by many endpoints (see the [module](super) documentation).
///
/// The pool owns its CQ: every completion on it is one of the pool's DCIs'. It holds every
/// region it posts from ([`DciPool::hold`]), because it may post a request again after
/// another peer's failure: a region is kept registered until the pool is dropped, while the
/// application keeps its [`Mr`] and may rewrite a send buffer between posts.
///
/// A pool moves between threads (`Send`) and is used from one at a time.
pub struct DciPool {
    cq: Cq,
    pd: Pd,
    policy: Policy,
    slots: Vec<Slot>,
    eps: Vec<Ep>,
    /// Sorted by local key.
    held: Vec<HeldRegion>,
    scratch: Vec<Completion>,
    /// Flushed requests whose replay the provider refused (with another error than EAGAIN),
    /// by DCI: they never left, and are reported with `WrFlushErr` by the next poll.
    unposted: VecDeque<(usize, Posted)>,
    /// An endpoint was refused for want of a DCI since one was last given back (DcsQuota).
    waiting: bool,
    recovered: Recoveries,
    /// A recovery error met after completions were written: reported by the next poll.
    deferred: Option<Error>,
    /// The next request's token.
    next_token: u64,
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
    /// Stream resets that failed and were escalated to the full recovery (the DCI was moved
    /// to ERR, its requests of other streams reported flushed, then RESET to RTS).
    pub escalated: u64,
    /// Flushed requests of healthy endpoints reported to them (with `WrFlushErr`) instead of
    /// posted again, because they may have executed: requests of other streams than the
    /// failing one when the whole DCI went to ERR.
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
}

#[inline]
fn would_block(why: &'static StaticError) -> Error {
    Error::from_static(why)
}

impl DciPool {
    /// Creates the pool: `cfg.dcis` DCIs in RTS reporting to `cq` (which the pool then owns),
    /// and room for `cfg.max_endpoints`.
    ///
    /// Every pool request is signaled, so `cq` must hold a completion for every request the
    /// DCIs can have outstanding: `dcis` x `max_send_wr` as the library rounded it (a CQ that
    /// overruns stops reporting completions: the pool would hang).
    ///
    /// # Errors
    /// EINVAL for no DCIs or a zero queue depth, and for a CQ smaller than the DCIs' send
    /// queues together (the message names both sizes); the DCI creation and transitions with
    /// their errors (EOPNOTSUPP for streams or atomics the device lacks, named before any
    /// library call).
    pub fn new(mlx5: &Mlx5Context, pd: &Pd, cq: Cq, cfg: PoolConfig) -> Result<Self> {
        if cfg.dcis == 0 || cfg.dcis > usize::from(u16::MAX) || cfg.max_send_wr == 0 {
            return Err(Error::invalid(
                "DciPool::new",
                "a pool needs 1..=65535 DCIs with a send queue depth of at least 1",
            ));
        }
        let streams = match cfg.policy {
            Policy::Streams { log_concurrent, .. } => 1usize << log_concurrent,
            _ => 1,
        };
        let mtu_bytes = match cfg.mtu_bytes {
            Some(bytes) => bytes,
            None => mlx5.context().query_port(cfg.port)?.active_mtu_bytes(),
        };
        let mut slots = Vec::with_capacity(cfg.dcis);
        for _ in 0..cfg.dcis {
            let mut b = DciBuilder::new(mlx5, pd, &cq)
                .max_send_wr(cfg.max_send_wr)
                .backend(cfg.backend);
            if cfg.atomics {
                b = b.with_atomics();
            }
            if let Policy::Streams {
                log_concurrent,
                log_errored,
            } = cfg.policy
            {
                b = b.streams(log_concurrent, log_errored);
            }
            let dci = b.build_ready(cfg.port, mtu_bytes, cfg.rts)?;
            let depth = dci.caps().max_send_wr as usize;
            slots.push(Slot {
                qp_num: dci.qp_num(),
                dci: Some(dci),
                depth,
                inflight: VecDeque::with_capacity(depth),
                replay: VecDeque::with_capacity(depth),
                holder: None,
                failed: false,
                stream_failed: vec![false; streams],
            });
        }
        let needed: u64 = slots.iter().map(|s| s.depth as u64).sum();
        check_cq_room("DciPool::new", &cq, needed, || {
            format!(
                "{} DCIs x max_send_wr {} (as the library rounded {})",
                cfg.dcis, slots[0].depth, cfg.max_send_wr
            )
        })?;
        Ok(DciPool {
            cq,
            pd: pd.clone(),
            policy: cfg.policy,
            slots,
            eps: Vec::with_capacity(cfg.max_endpoints),
            held: Vec::new(),
            scratch: vec![Completion::default(); SCRATCH],
            unposted: VecDeque::with_capacity(needed as usize),
            waiting: false,
            recovered: Recoveries::default(),
            deferred: None,
            next_token: 0,
        })
    }

    /// Adds an endpoint for `peer` (without a stream: the pool picks it under `Streams`).
    ///
    /// # Errors
    /// ENOSPC when the table (`max_endpoints`) is full.
    pub fn add_endpoint(&mut self, peer: DcPeer) -> Result<EndpointId> {
        if self.eps.len() == self.eps.capacity() {
            return Err(Error::from_errno(
                "DciPool::add_endpoint",
                libc::ENOSPC,
                "the pool's endpoint table is full: create it with a larger max_endpoints",
            ));
        }
        let i = self.eps.len();
        let w = self.slots.len();
        let (dci, stream) = match self.policy {
            Policy::Dcs | Policy::DcsQuota { .. } => (None, 0),
            Policy::Streams { log_concurrent, .. } => (Some(i % w), ((i / w) % (1usize << log_concurrent)) as u16),
            Policy::Rand { seed } => (Some((mix(seed ^ i as u64) % w as u64) as usize), 0),
        };
        self.eps.push(Ep {
            peer,
            dci,
            stream,
            outstanding: 0,
            since_acquire: 0,
            failed: None,
        });
        Ok(EndpointId(i as u32))
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
                _region: mr.hold(),
            },
        );
        Ok(())
    }

    /// `sge` lies in a region the pool holds: the same entry, valid for the pool's life.
    #[inline]
    fn held_sge(&self, sge: Sge<'_>) -> Result<Sge<'static>> {
        let ok = match self.held.binary_search_by_key(&sge.lkey(), |h| h.lkey) {
            Ok(i) => {
                let h = &self.held[i];
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
    /// endpoint or a buffer outside the regions the pool holds ([`DciPool::hold`]); the
    /// builder's checks (SGE against the DCI's caps) and `ibv_wr_complete` otherwise. A
    /// refused request was not posted.
    pub fn post(&mut self, ep: EndpointId, wr_id: u64, req: Request<'_>) -> Result<()> {
        let i = ep.0 as usize;
        let Some(e) = self.eps.get(i) else {
            return Err(Error::invalid("DciPool::post", "no such endpoint in this pool"));
        };
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
        if s.inflight.len() + s.replay.len() >= s.depth {
            return Err(would_block(&busy::FULL));
        }
        let p = Posted {
            ep: ep.0,
            token: self.next_token,
            wr_id,
            stream: e.stream,
            req: req.map_local(|local| self.held_sge(local))?,
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
        let peer = &self.eps[p.ep as usize].peer;
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
    /// this call does when the DCI's last outstanding request has completed. A flushed
    /// request that may have executed (another stream's, when the whole DCI went to ERR) is
    /// reported with `WrFlushErr`, never posted again: posting it could run it twice.
    ///
    /// # Errors
    /// `Cq::poll`'s; a recovery transition that failed (the pool tries again on the next
    /// call); the provider refusing to post a flushed request again (that request is then
    /// reported to its endpoint with `WrFlushErr` by the next call: it never left). An error
    /// met after completions were written to `out` is reported by the next call, so none is
    /// lost.
    pub fn poll(&mut self, out: &mut [EpCompletion]) -> Result<usize> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        let mut n = 0;
        // First, replays the provider refused: they never left (finding 3: none is dropped).
        while n < out.len() {
            let Some((d, p)) = self.unposted.pop_front() else {
                break;
            };
            out[n] = EpCompletion {
                endpoint: EndpointId(p.ep),
                wr_id: p.wr_id,
                status: WcStatus::WrFlushErr,
                opcode: None,
            };
            n += 1;
            self.retire(d, p.ep as usize);
        }
        let room = (out.len() - n).min(SCRATCH);
        let k = match self.cq.poll(&mut self.scratch[..room]) {
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
                        endpoint: EndpointId(p.ep),
                        wr_id: p.wr_id,
                        status: c.status,
                        opcode: c.opcode,
                    };
                    n += 1;
                    self.retire(d, ep);
                }
                WcStatus::WrFlushErr if self.eps[ep].failed.is_none() && self.replayable(d, p.stream) => {
                    // Another peer's failure flushed it before it left: post it again later,
                    // in order.
                    let slot = &mut self.slots[d];
                    if !slot.stream_failed[usize::from(p.stream)] {
                        // A flush without a failure on its stream: the whole DCI is in ERR.
                        slot.failed = true;
                    }
                    slot.replay.push_back(p);
                }
                status => {
                    out[n] = EpCompletion {
                        endpoint: EndpointId(p.ep),
                        wr_id: p.wr_id,
                        status,
                        opcode: None,
                    };
                    n += 1;
                    if status != WcStatus::WrFlushErr {
                        self.fail(d, ep, p.stream);
                    } else if self.eps[ep].failed.is_none() {
                        // Another stream's failure took the whole DCI to ERR: this request may
                        // have executed, so it is reported, not posted again.
                        self.slots[d].failed = true;
                        self.recovered.reported_flushed += 1;
                    }
                    self.retire(d, ep);
                }
            }
        }
        for d in 0..self.slots.len() {
            if let Err(e) = self.restore(d) {
                if n == 0 {
                    return Err(e);
                }
                self.deferred = Some(e);
                break;
            }
        }
        Ok(n)
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

    /// Whether a flushed request of a healthy endpoint on DCI `d`, stream `stream`, provably
    /// never left: without streams the DCI stops at the failing request and everything
    /// flushed was queued behind it; with streams only the failing stream stops, so only
    /// requests of a stream that failed (queued behind its failing request: a stream runs in
    /// order) never left, while other streams' requests may have executed before the flush.
    fn replayable(&self, d: usize, stream: u16) -> bool {
        !matches!(self.policy, Policy::Streams { .. }) || self.slots[d].stream_failed[usize::from(stream)]
    }

    /// Endpoint `ep`'s peer failed on DCI `d` (stream `stream`): the DCI entered ERR, or with
    /// streams only the stream did. A state that cannot be read counts as ERR: the full
    /// recovery is the safe side.
    fn fail(&mut self, d: usize, ep: usize, stream: u16) {
        self.eps[ep].failed = Some(d);
        let slot = &mut self.slots[d];
        slot.stream_failed[usize::from(stream)] = true;
        let dci_err = match (&self.policy, slot.dci.as_ref()) {
            (Policy::Streams { .. }, Some(dci)) => dci.query_state().map_or(true, |s| s == QpState::Err),
            _ => true,
        };
        if dci_err {
            slot.failed = true;
        }
    }

    /// Brings DCI `d` (or its errored streams) back once nothing of it (of them) is
    /// outstanding, and posts again what the failure flushed before it left.
    fn restore(&mut self, d: usize) -> Result<()> {
        let slot = &mut self.slots[d];
        if slot.failed {
            if !slot.inflight.is_empty() {
                return Ok(());
            }
            let Some(dci) = slot.dci.take() else {
                return Ok(());
            };
            match dci.recover() {
                Ok(dci) => {
                    // A direct CQ is not cleaned by libmlx5 at the RESET: entries of this DCI
                    // left in it would name WQE indexes its new requests take (none is
                    // posted yet; 0 on a CQ libmlx5 reads).
                    self.cq.clean_direct(dci.qp_num());
                    slot.dci = Some(dci)
                }
                Err(e) => {
                    slot.dci = Some(e.object);
                    return Err(e.error);
                }
            }
            slot.failed = false;
            slot.stream_failed.iter_mut().for_each(|f| *f = false);
            self.recovered.dcis += 1;
            // Only the endpoints that failed on this DCI (finding 4: not those of others).
            for ep in self.eps.iter_mut().filter(|e| e.failed == Some(d)) {
                ep.failed = None;
            }
        }
        for s in 0..self.slots[d].stream_failed.len() {
            let slot = &mut self.slots[d];
            if !slot.stream_failed[s] || slot.inflight.iter().any(|p| usize::from(p.stream) == s) {
                continue;
            }
            let Some(dci) = slot.dci.as_mut() else {
                return Ok(());
            };
            // The DCI may have entered ERR after its state was read (hardware moves it there
            // once the errored streams reach the limit): then it needs the full recovery.
            if dci.query_state()? == QpState::Err {
                slot.failed = true;
                return Ok(());
            }
            if dci.reset_stream(s as u16).is_err() {
                // Escalate (finding 6): to ERR, so that every other stream's request
                // completes (flushed) before the full recovery on a later poll.
                dci.force_error()?;
                slot.failed = true;
                self.recovered.escalated += 1;
                return Ok(());
            }
            slot.stream_failed[s] = false;
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
        self.eps.get(ep.0 as usize).map_or(0, |e| e.outstanding)
    }

    /// The DCI index (0..W) and stream `ep` posts on now, if it has one.
    pub fn assignment(&self, ep: EndpointId) -> Option<(usize, u16)> {
        let e = self.eps.get(ep.0 as usize)?;
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

/// Refuses a CQ that cannot hold `needed` completions (each a signaled request that may be
/// outstanding at once); `what` says where the number comes from.
pub(super) fn check_cq_room(op: &'static str, cq: &Cq, needed: u64, what: impl FnOnce() -> String) -> Result<()> {
    let capacity = cq.capacity();
    if needed > u64::from(capacity) {
        return Err(Error::invalid(
            op,
            format!(
                "the CQ holds {capacity} completions but {} signals up to {needed} at once: a CQ that overruns stops \
                 reporting completions and the requests hang; create the CQ with at least {needed} entries or use \
                 fewer or shallower send queues",
                what()
            ),
        )
        .on(cq.context().name()));
    }
    Ok(())
}

/// splitmix64: a fixed, well-spread DCI per endpoint (Rand).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
