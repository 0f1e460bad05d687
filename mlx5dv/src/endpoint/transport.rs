//! The same endpoint code over RC or DC: [`Endpoints`] posts a [`Request`] to an endpoint and
//! polls [`EpCompletion`]s whichever transport is behind it, so switching is one line where the
//! endpoints are created (as DOCA's transport type is a property of the instance).

use super::{DciPool, EndpointId, EpCompletion, Request};
use crate::cq::{Completion, Cq};
use crate::error::{Error, Result, StaticError};
use crate::mr::Returned;
use crate::qp::state::Rts;
use crate::rc::RcQp;

/// Endpoints over RC (one connected QP per endpoint) or DC (a [`DciPool`]).
pub enum Endpoints {
    /// One RC QP per endpoint.
    Rc(RcEndpoints),
    /// A pool of DCIs.
    Dc(DciPool),
}

impl Endpoints {
    /// Posts `req` for `ep` (see [`DciPool::post`]; on RC, EAGAIN when the endpoint's send
    /// queue is full).
    ///
    /// # Errors
    /// EAGAIN (backpressure: poll and try again), EINVAL for an unknown endpoint, the post
    /// path's own checks.
    pub fn post(&mut self, ep: EndpointId, wr_id: u64, req: Request<'_>) -> Result<()> {
        match self {
            Endpoints::Rc(rc) => rc.post(ep, wr_id, req),
            Endpoints::Dc(dc) => dc.post(ep, wr_id, req),
        }
    }

    /// Keeps `mr` registered while requests may name it ([`DciPool::hold`]; on RC nothing is
    /// posted twice, so nothing needs holding, and this only checks nothing).
    ///
    /// # Errors
    /// As [`DciPool::hold`].
    pub fn hold<B: crate::mr::BoundedBuffer + 'static>(&mut self, mr: &crate::mr::Mr<B>) -> Result<()> {
        match self {
            Endpoints::Rc(_) => Ok(()),
            Endpoints::Dc(dc) => dc.hold(mr),
        }
    }

    /// Polls up to `out.len()` endpoint completions.
    ///
    /// # Errors
    /// As [`DciPool::poll`], or `Cq::poll` on RC.
    pub fn poll(&mut self, out: &mut [EpCompletion]) -> Result<usize> {
        match self {
            Endpoints::Rc(rc) => rc.poll(out),
            Endpoints::Dc(dc) => dc.poll(out),
        }
    }
}

/// RC endpoints: connected QPs in RTS on one CQ (which it owns), an endpoint each.
pub struct RcEndpoints {
    cq: Cq,
    qps: Vec<RcQp<Rts>>,
    /// (QP number, endpoint), sorted by QP number.
    by_qpn: Vec<(u32, u32)>,
    scratch: Vec<Completion>,
}

static RC_FULL: StaticError = StaticError::new(
    "RcEndpoints::post",
    libc::EAGAIN,
    "the endpoint's send queue is full: poll and try again",
);

impl RcEndpoints {
    /// Room for `max_endpoints` QPs sending on `cq`, which it owns: create the QPs on
    /// [`RcEndpoints::cq`] (the CQ must be theirs alone).
    pub fn new(cq: Cq, max_endpoints: usize) -> Self {
        RcEndpoints {
            cq,
            qps: Vec::with_capacity(max_endpoints),
            by_qpn: Vec::with_capacity(max_endpoints),
            scratch: vec![Completion::default(); 64],
        }
    }

    /// The CQ the endpoints' QPs must report to ([`crate::Pd::create_rc_qp`]).
    pub fn cq(&self) -> &Cq {
        &self.cq
    }

    /// Adds the endpoint that `qp` (connected to its peer, its send CQ this one's) reaches.
    ///
    /// Every request is signaled, so the CQ must hold a completion for every request the
    /// QPs can have outstanding together (their `max_send_wr` as the library rounded it).
    ///
    /// # Errors
    /// ENOSPC when `max_endpoints` are there already; EINVAL when the QP's send CQ is not
    /// [`RcEndpoints::cq`] (its completions would never reach [`Endpoints::poll`]), and when
    /// the CQ cannot hold the send queues of the QPs added so far and this one (the message
    /// names the sizes). The QP comes back with the error ([`Returned`]).
    pub fn add(&mut self, qp: RcQp<Rts>) -> std::result::Result<EndpointId, Returned<RcQp<Rts>>> {
        match self.check(&qp) {
            Ok(()) => {}
            Err(error) => return Err(Returned::new(error, qp)),
        }
        let ep = self.qps.len() as u32;
        let at = self.by_qpn.partition_point(|&(q, _)| q < qp.qp_num());
        self.by_qpn.insert(at, (qp.qp_num(), ep));
        self.qps.push(qp);
        Ok(EndpointId(ep, 0))
    }

    /// What [`RcEndpoints::add`] refuses.
    fn check(&self, qp: &RcQp<Rts>) -> Result<()> {
        const OP: &str = "RcEndpoints::add";
        if self.qps.len() == self.qps.capacity() {
            return Err(Error::from_errno(
                OP,
                libc::ENOSPC,
                "the endpoint table is full: create it with a larger max_endpoints",
            ));
        }
        // SAFETY: the QP is live (held by `qp`); its send CQ pointer is set at creation.
        let send_cq = unsafe { (*qp.as_raw()).send_cq };
        if send_cq != self.cq.as_raw_cq() {
            return Err(Error::invalid(
                OP,
                format!(
                    "QP {:#x} sends to another CQ than the endpoints': its completions would never reach \
                     RcEndpoints::poll and its requests would wait forever; create it on RcEndpoints::cq()",
                    qp.qp_num()
                ),
            )
            .on(self.cq.context().name()));
        }
        let needed: u64 = self
            .qps
            .iter()
            .chain(std::iter::once(qp))
            .map(|q| u64::from(q.caps().max_send_wr))
            .sum();
        self.cq.check_room(OP, needed, || {
            format!("{} RC QPs with max_send_wr {} in all", self.qps.len() + 1, needed)
        })
    }

    fn post(&mut self, ep: EndpointId, wr_id: u64, req: Request<'_>) -> Result<()> {
        let Some(qp) = self.qps.get_mut(ep.0 as usize) else {
            return Err(Error::invalid("RcEndpoints::post", "no such endpoint"));
        };
        if qp.outstanding() >= u64::from(qp.caps().max_send_wr) {
            return Err(Error::from_static(&RC_FULL));
        }
        let mut b = qp.batch();
        match req {
            Request::Send { local } => b.send(wr_id).sge(local),
            Request::SendImm { local, imm } => b.send_imm(wr_id, imm).sge(local),
            Request::Write { local, remote } => b.rdma_write(wr_id, remote).sge(local),
            Request::WriteImm { local, remote, imm } => b.rdma_write_imm(wr_id, remote, imm).sge(local),
            Request::Read { local, remote } => b.rdma_read(wr_id, remote).sge(local),
            Request::CompareSwap {
                local,
                remote,
                compare,
                swap,
            } => b.atomic_cmp_swp(wr_id, remote, compare, swap).sge(local),
            Request::FetchAdd { local, remote, add } => b.atomic_fetch_add(wr_id, remote, add).sge(local),
        }?;
        b.commit()
    }

    fn poll(&mut self, out: &mut [EpCompletion]) -> Result<usize> {
        let room = out.len().min(self.scratch.len());
        let k = self.cq.poll(&mut self.scratch[..room])?;
        let mut n = 0;
        for c in &self.scratch[..k] {
            let Ok(i) = self.by_qpn.binary_search_by_key(&c.qp_num, |&(q, _)| q) else {
                continue;
            };
            out[n] = EpCompletion {
                endpoint: EndpointId(self.by_qpn[i].1, 0),
                wr_id: c.wr_id,
                status: c.status,
                opcode: c.opcode,
            };
            n += 1;
        }
        Ok(n)
    }
}
