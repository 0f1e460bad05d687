//! Recovery and replay: a failed peer's DCI (or stream) brought back, flushed requests
//! reported or posted again.

use super::DciPool;
use crate::cq::WcStatus;
use crate::endpoint::{EndpointId, EpCompletion, Policy};
use crate::error::Result;
use crate::qp::QpState;
use std::collections::VecDeque;

impl DciPool {
    /// Reports flushed requests waiting in `unposted` into `out`; returns how many.
    pub(super) fn report_flushed(&mut self, out: &mut [EpCompletion]) -> usize {
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

    /// Endpoint `ep`'s request on DCI `d` is done.
    pub(super) fn retire(&mut self, d: usize, ep: usize) {
        let e = &mut self.eps[ep];
        e.outstanding -= 1;
        if e.outstanding == 0 && self.slots[d].holder == Some(ep as u32) {
            e.dci = None;
            e.since_acquire = 0;
            self.slots[d].holder = None;
            self.waiting[usize::from(self.slots[d].probation)] = false;
        }
    }

    /// DCI `d` is in ERR (or is treated so): no new requests until its full recovery. On a
    /// pool that resets streams, a stream error that ends here is an escalation.
    pub(super) fn dci_failed(&mut self, d: usize) {
        let slot = &mut self.slots[d];
        if !slot.failed {
            slot.failed = true;
            if self.reset_streams {
                self.recovered.escalated += 1;
            }
        }
    }

    /// Whether the pool's DCIs are held by one endpoint at a time (Dcs, DcsQuota).
    fn dcs_like(&self) -> bool {
        matches!(self.policy, Policy::Dcs | Policy::DcsQuota { .. })
    }

    /// Whether DCI `d` is in ERR; a state that cannot be read counts as ERR (the full
    /// recovery is the safe side).
    pub(super) fn dci_in_err(&self, d: usize) -> bool {
        self.slots[d]
            .dci
            .as_ref()
            .map_or(true, |dci| dci.query_state().map_or(true, |s| s == QpState::Err))
    }

    /// A flushed request of an endpoint not known to have failed, on DCI `d`, stream
    /// `stream`: without a failure seen on its stream, either the whole DCI went to ERR, or
    /// (streams) its stream erred and the error completion comes after the flush.
    pub(super) fn flushed(&mut self, d: usize, stream: u16) {
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
    /// (and stream) fails with it (finding 7): under Dcs and DcsQuota that is `ep` alone (it
    /// holds the DCI), found without a walk of the endpoint table, so a failure costs the
    /// same whatever the endpoints held; under Rand and Streams (endpoints bound to a DCI for
    /// good) the table is walked.
    pub(super) fn fail(&mut self, d: usize, ep: usize, stream: u16) {
        let streams = matches!(self.policy, Policy::Streams { .. });
        if self.dcs_like() {
            // One endpoint holds a DCI at a time, the failing one: no other has anything on
            // it (so none reaches the same target over it), and nothing is walked.
            self.eps[ep].failed = Some(d);
            let slot = &mut self.slots[d];
            slot.failed_walk |= slot.failed_holder.is_some_and(|h| h as usize != ep);
            slot.failed_holder = Some(ep as u32);
        } else {
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
    pub(super) fn decide(&mut self, d: usize, only: Option<u16>) {
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
    pub(super) fn restore(&mut self, d: usize) -> Result<()> {
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
                    let (error, dci) = e.into_parts();
                    slot.dci = Some(dci);
                    return Err(error);
                }
            }
            slot.failed = false;
            slot.stream_failed.iter_mut().for_each(|f| *f = false);
            slot.erred.iter_mut().for_each(|f| *f = false);
            self.recovered.dcis += 1;
            // Only the endpoints that failed on this DCI (finding 4: not those of others): under
            // Dcs the one that held it, else every one found.
            let slot = &mut self.slots[d];
            let (holder, walk) = (slot.failed_holder.take(), std::mem::take(&mut slot.failed_walk));
            if self.dcs_like() && !walk {
                if let Some(e) = holder.and_then(|h| self.eps.get_mut(h as usize)) {
                    if e.failed == Some(d) {
                        e.failed = None;
                    }
                }
            } else {
                for ep in self.eps.iter_mut().filter(|e| e.failed == Some(d)) {
                    ep.failed = None;
                }
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
    pub(super) fn replay(&mut self, d: usize) -> Result<()> {
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
}

/// Puts `item`, a flushed request, among the held ones `held` in post order (`token`: the
/// pool's post number, kept by a request posted again). A flush usually comes after every
/// held request and is appended; but a replay that stopped part-way (the send queue full)
/// leaves the later requests of a stream held while the earlier ones run again, and if the
/// DCI then fails those come back flushed a second time: appended, they would be reported
/// (or posted again) after their endpoint's later requests, out of post order.
pub(super) fn hold_in_post_order<T>(held: &mut VecDeque<T>, item: T, token: impl Fn(&T) -> u64) {
    let t = token(&item);
    let at = held.iter().rposition(|h| token(h) < t).map_or(0, |i| i + 1);
    held.insert(at, item);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_flushed_again_after_a_partial_replay_is_held_before_the_later_ones_still_waiting() {
        // Requests 10, 11, 12 of one stream flushed; the replay posted 10 again and stopped
        // (the send queue full); the DCI failed and flushed 10 once more.
        let mut held: VecDeque<u64> = [11, 12].into();
        hold_in_post_order(&mut held, 10, |t| *t);
        assert_eq!(held, [10, 11, 12], "post order");
        // The common case: a flush after every held request is appended.
        hold_in_post_order(&mut held, 20, |t| *t);
        hold_in_post_order(&mut held, 15, |t| *t);
        assert_eq!(held, [10, 11, 12, 15, 20]);
        let mut empty = VecDeque::new();
        hold_in_post_order(&mut empty, 3, |t| *t);
        assert_eq!(empty, [3]);
    }
}
