//! The requester: a send queue as the HCA's send engine runs it (IBA 9.7, 10.8.3, 11.6.2; mlx5
//! DCI streams per mlx5dv_create_qp(3)).
//!
//! WQEs are fetched in order and put on the wire as far as the transport lets them. Each
//! channel (a DCI stream channel, or the one channel of any other QP) is in order and stops
//! behind a request that was not acknowledged (RNR NAK, NAK, silence): IBA's responder discards
//! what follows such a packet until the requester retries it (9.7.5.1), so nothing behind it in
//! that channel executes first, while other channels go on. Reads and atomics in flight are
//! bounded by max_rd_atomic and an RC peer's max_dest_rd_atomic (mlx5_ib log_sra_max,
//! log_rra_max); a WQE with MLX5_WQE_CTRL_FENCE waits until every earlier read and atomic has
//! completed (IBA 10.8.3.3, IBV_SEND_FENCE). Answers are acted on as they arrive, a pass after
//! their request left, so requests behind them are executed at the target meanwhile. An error
//! that takes the QP to ERR flushes everything outstanding, executed or not. Completions are
//! written in send-queue order (what libmlx5 cq.c and UCX assume), or, with `SOFT_MLX5_OOO=1`,
//! per channel as each finishes.

use super::completer;
use super::cqe::{op, syndrome, Cqe};
use super::headers::Headers;
use super::remote::{self, Awaiting};
use super::responder::{self, Request, Response, ACCESS_LOCAL_WRITE};
use super::timing::{ack_timeout, rnr_delay};
use super::wqe::{decode_send, opcode, raw_send, signature_ok, Av, Data, SendWqe};
use crate::device::events::Owner;
use crate::device::objects::{Path, Qp, QpKind, QpState, Stall};
use crate::device::{event, AsyncEvent, Device};
use crate::fabric::faults::Fate;
use crate::fabric::message::Target;
use crate::profile::LinkLayer;
use std::time::{Duration, Instant};

/// Requests of one channel on the wire to another process at a time. The emulated responder
/// is far slower than a ConnectX, so an unbounded burst behind a lost packet (all of it sent
/// again, go-back-N) could outlast the local ACK timeout of the retry that repairs it.
const REMOTE_WINDOW: usize = 8;

/// One fetched send WQE, from its fetch until its completion is written.
#[derive(Debug)]
pub struct Outstanding {
    /// The WQE as decoded at fetch.
    pub wqe: SendWqe,
    /// The channel it travels on ([`Qp::channel`]).
    pub channel: u16,
    /// Its sequence number in its connection, kept across retries so the responder knows a
    /// retry of what it executed (0 until first sent; see `psn_of`).
    pub psn: u64,
    /// It opens its connection.
    pub first: bool,
    /// Where it is.
    pub state: ReqState,
}

/// Where an outstanding WQE is.
#[derive(Debug)]
pub enum ReqState {
    /// Fetched, not on the wire (or waiting for its retry).
    Queued,
    /// On the wire.
    Sent {
        /// The answer, once in.
        answer: Option<Response>,
        /// The pass from which the answer is acted on (the acknowledgement's flight).
        after: u64,
        /// The request went to another process's device.
        remote: Option<Awaiting>,
    },
    /// Done (successfully, in error or flushed): the CQE to write in its turn.
    Finished {
        /// The CQE.
        cqe: Cqe,
        /// Whether a CQE is written (success of an unsignaled WQE: none).
        signal: bool,
        /// The error took the QP to ERR: when its CQE cannot be written, the affiliated
        /// fatal event reports it instead.
        fatal: bool,
    },
    /// The CQE is written; the slot is released once every older WQE is done too.
    Reported,
}

/// Whether QP `qp` has a request on the wire to another process whose answer has not come.
pub fn awaiting_remote(qp: &Qp) -> bool {
    qp.outstanding.iter().any(|o| {
        matches!(
            &o.state,
            ReqState::Sent {
                answer: None,
                remote: Some(_),
                ..
            }
        )
    })
}

/// Reads and atomics of QP `qp` on the wire (sent, their answer not acted on yet).
pub fn reads_in_flight(qp: &Qp) -> usize {
    qp.outstanding
        .iter()
        .filter(|o| o.wqe.reads_or_atomic() && matches!(o.state, ReqState::Sent { .. }))
        .count()
}

/// Runs the send queue of QP `h` one pass: fetch what was posted, act on the answers that
/// arrived, put what may go on the wire, write the completions that are due. True when it
/// moved.
pub fn run(dev: &mut Device, h: u32, now: Instant) -> bool {
    let Some(qp) = dev.qps.get(&h) else {
        return false;
    };
    if qp.kind == QpKind::Dct || qp.sq.cnt == 0 {
        return false;
    }
    if matches!(qp.state, QpState::Reset | QpState::Init | QpState::Rtr) {
        // WQEs posted before RTS wait in the ring, as on the HCA.
        return false;
    }
    let mut moved = fetch(dev, h);
    moved |= take_answers(dev, h, now);
    moved |= issue(dev, h, now);
    moved |= report(dev, h);
    moved
}

/// Decodes the WQEs posted since the last fetch. An undecodable WQE is a local QP operation
/// error once every older WQE is done (nothing past it can be found: its size is unknown).
fn fetch(dev: &mut Device, h: u32) -> bool {
    let Device {
        dma, qps, strict, bf, ..
    } = dev;
    let Some(qp) = qps.get_mut(&h) else {
        return false;
    };
    let record = dma.read_be32(qp.db + 4) & 0xffff;
    let pi = qp.sq_producer(dma.as_ref(), record);
    if pi == record {
        // Software rang since RESET: the record is live again.
        qp.sq_stale_record = None;
    }
    let datagram = matches!(qp.kind, QpKind::Dci | QpKind::Ud);
    let in_err = qp.state == QpState::Err;
    let check_sig = qp.wq_sig && strict.wqe_sig;
    let mut moved = false;
    let mut bad = None;
    while qp.sq_fetched & 0xffff != pi && qp.sq_fetched.wrapping_sub(qp.sq_ci) < qp.sq.cnt {
        if let (Some(reg), Some(raw)) = (qp.bf, raw_send(dma.as_ref(), &qp.sq, qp.sq_fetched)) {
            bf.fetched(reg, qp.qpn, &raw);
        }
        let (wqe, state) = match decode_send(dma.as_ref(), &qp.sq, qp.sq_fetched, datagram) {
            // A QP created with a WQE signature (mlx5_ib sets qpc.wq_signature for
            // MLX5_QP_FLAG_SIGNATURE) has each WQE's signature checked as it is fetched; a
            // bad one is a local QP operation error (MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR 0x02,
            // IBA 10.3.1 "local QP operation error": the WQE is not well formed), reported once
            // every older WQE is done, the QP going to ERR.
            Ok(w)
                if check_sig
                    && !in_err
                    && !raw_send(dma.as_ref(), &qp.sq, qp.sq_fetched).is_some_and(|b| signature_ok(&b)) =>
            {
                if !qp.outstanding.is_empty() {
                    break;
                }
                crate::log(format_args!("qp {:#x}: WQE {} has a bad signature", qp.qpn, w.index));
                bad = Some(qp.outstanding.len());
                (w, ReqState::Queued)
            }
            Ok(w) => {
                let state = if in_err { flushed(qp, &w) } else { ReqState::Queued };
                (w, state)
            }
            Err(e) => {
                if !in_err && !qp.outstanding.is_empty() {
                    break;
                }
                crate::log(format_args!(
                    "qp {:#x}: undecodable WQE at {}: {e:?}",
                    qp.qpn, qp.sq_fetched
                ));
                let w = placeholder(qp.sq_fetched, qp.qpn);
                // A QP in ERR executes nothing: an unreadable WQE there is one more flushed
                // basic block (IBA 10.3.1.1, 11.6.2), not a second local QP operation error.
                let state = if in_err {
                    flushed(qp, &w)
                } else {
                    bad = Some(qp.outstanding.len());
                    ReqState::Queued
                };
                (w, state)
            }
        };
        qp.sq_fetched = qp.sq_fetched.wrapping_add(wqe.bbs);
        let channel = qp.channel(wqe.stream);
        qp.outstanding.push_back(Outstanding {
            wqe,
            channel,
            psn: 0,
            first: false,
            state,
        });
        moved = true;
        if bad.is_some() {
            break;
        }
    }
    if let Some(i) = bad {
        fail(dev, h, i, syndrome::LOCAL_QP_OP_ERR);
    }
    moved
}

/// A one-basic-block stand-in for a WQE that could not be decoded.
fn placeholder(bb: u32, qpn: u32) -> SendWqe {
    SendWqe {
        index: bb as u16,
        opcode: 0,
        qpn,
        ds: 0,
        bbs: 1,
        fm_ce_se: 0,
        imm: 0,
        stream: 0,
        av: None,
        raddr: None,
        atomic: None,
        umr: None,
        data: Data::Sges(Vec::new()),
    }
}

/// The flush-error completion of `wqe` (IBA 10.3.1.1: every WQE of a QP in ERR).
fn flushed(qp: &Qp, wqe: &SendWqe) -> ReqState {
    ReqState::Finished {
        cqe: Cqe {
            opcode: op::REQ_ERR,
            uidx: qp.uidx,
            qpn: qp.qpn,
            wqe_opcode: wqe.opcode,
            wqe_counter: wqe.index,
            syndrome: syndrome::WR_FLUSH_ERR,
            ..Default::default()
        },
        signal: true,
        fatal: false,
    }
}

/// Flushes every outstanding WQE of `channel` (None: of every channel) that has not finished,
/// including those the target executed whose acknowledgement had not come back.
fn flush_pending(qp: &mut Qp, channel: Option<u16>) -> bool {
    let mut moved = false;
    for i in 0..qp.outstanding.len() {
        let o = &qp.outstanding[i];
        let pending = matches!(o.state, ReqState::Queued | ReqState::Sent { .. });
        let of_channel = match channel {
            Some(c) => c == o.channel,
            None => true,
        };
        if pending && of_channel {
            let state = flushed(qp, &qp.outstanding[i].wqe);
            qp.outstanding[i].state = state;
            moved = true;
        }
    }
    moved
}

/// Acts on the answers that have arrived, in send-queue order.
fn take_answers(dev: &mut Device, h: u32, now: Instant) -> bool {
    let pass = dev.pass;
    let mut moved = false;
    let mut i = 0;
    loop {
        let Some(qp) = dev.qps.get_mut(&h) else {
            return moved;
        };
        if qp.state == QpState::Err {
            return flush_pending(qp, None) || moved;
        }
        let Some(o) = qp.outstanding.get_mut(i) else {
            return moved;
        };
        if let ReqState::Sent {
            answer: answer @ Some(_),
            after,
            remote,
        } = &mut o.state
        {
            if *after <= pass {
                let answer = answer.take();
                // Silence from another process is known when its timer ran out, or earlier
                // when its target dropped it (a wrong DC key) or died: the ACK timer runs from
                // when the request left.
                let sent = remote.as_ref().map(|a| a.sent);
                o.state = ReqState::Queued;
                if let Some(a) = answer {
                    conclude(dev, h, i, a, now, sent);
                }
                moved = true;
            }
        }
        i += 1;
    }
}

/// What the requester makes of the responder's answer (or of its silence) to WQE `i`; `sent`:
/// when a request to another process left.
fn conclude(dev: &mut Device, h: u32, i: usize, answer: Response, now: Instant, sent: Option<Instant>) {
    let qp = &dev.qps[&h];
    let o = &qp.outstanding[i];
    let channel = o.channel;
    if matches!(qp.kind, QpKind::Ud | QpKind::Uc) {
        // Unreliable datagram or connection: no ACK, no retry; the request completes once on
        // the wire, whatever became of it (IBA 9.8).
        let n = o.wqe.data.len() as u32;
        return finish(dev, h, i, n);
    }
    match answer {
        Response::Ack(reply) => {
            let wqe = &dev.qps[&h].outstanding[i].wqe;
            // Read data and atomic results land in local memory now, with the response.
            if let Some(bytes) = reply {
                scatter_local(dev, &wqe.data, &bytes);
            }
            let byte_cnt = match wqe.opcode {
                opcode::ATOMIC_CS | opcode::ATOMIC_FA => 8,
                _ => wqe.data.len() as u32,
            };
            finish(dev, h, i, byte_cnt);
        }
        Response::RnrNak(timer) => {
            let left = match qp.stalls.get(&channel) {
                Some((Stall::Rnr { left }, _)) => *left,
                _ => qp.rnr_retry,
            };
            // rnr_retry 7 means retry forever (IBA 9.7.5.2.8).
            if left == 0 {
                return fail(dev, h, i, syndrome::RNR_RETRY_EXC_ERR);
            }
            let left = if left == 7 { 7 } else { left - 1 };
            if let Some(qp) = dev.qps.get_mut(&h) {
                qp.stalls.insert(channel, (Stall::Rnr { left }, now + rnr_delay(timer)));
            }
        }
        Response::Nak(synd) => fail(dev, h, i, synd),
        // Sent again once the requests before it are answered (go-back-N, IBA 9.7.5.2.2); no
        // retry is counted, nothing was lost.
        Response::OutOfSequence => {}
        Response::Dropped => {
            let left = match qp.stalls.get(&channel) {
                Some((Stall::Timeout { left }, _)) => *left,
                _ => qp.retry_cnt.saturating_add(1),
            };
            if left == 0 {
                return fail(dev, h, i, syndrome::TRANSPORT_RETRY_EXC_ERR);
            }
            let stall = match (ack_timeout(qp.timeout), sent) {
                // The local ACK timer started when the request left (IBA 9.7.6.1.3): a target
                // that dropped it silently (a wrong DC key, mlx5 drops it without a NAK) or
                // died is known only once the timer expires, as for a target that never was.
                // SOFT_MLX5_DCKEY_SILENT=0: retried as soon as the drop is known (kinder).
                (Some(t), Some(s)) if dev.strict.dckey_silent => (Stall::Timeout { left: left - 1 }, (s + t).max(now)),
                (Some(_), Some(_)) => (Stall::Timeout { left: left - 1 }, now),
                (Some(t), None) => (Stall::Timeout { left: left - 1 }, now + t),
                // Timeout 0 waits forever: the QP never completes the WQE.
                (None, _) => (Stall::Timeout { left }, now + Duration::from_secs(3600)),
            };
            if let Some(qp) = dev.qps.get_mut(&h) {
                qp.stalls.insert(channel, stall);
            }
        }
    }
}

/// WQE `i` completed successfully; its channel's retry counters start afresh.
fn finish(dev: &mut Device, h: u32, i: usize, byte_cnt: u32) {
    let Some(qp) = dev.qps.get_mut(&h) else {
        return;
    };
    let o = &qp.outstanding[i];
    let cqe = Cqe {
        opcode: op::REQ,
        uidx: qp.uidx,
        qpn: qp.qpn,
        wqe_opcode: o.wqe.opcode,
        wqe_counter: o.wqe.index,
        byte_cnt,
        ..Default::default()
    };
    let signal = o.wqe.signaled() || qp.sq_sig_all;
    let channel = o.channel;
    qp.stalls.remove(&channel);
    qp.outstanding[i].state = ReqState::Finished {
        cqe,
        signal,
        fatal: false,
    };
}

/// WQE `i` completed in error. On a DCI with streams only its stream enters error (its later
/// WQEs flush) until 2^log_num_errored distinct streams have erred; then, as on any other QP,
/// the QP goes to ERR and everything outstanding flushes (mlx5dv_create_qp(3),
/// mlx5dv_dci_stream_id_reset(3); IBA 10.8.3, 11.6.2).
fn fail(dev: &mut Device, h: u32, i: usize, synd: u8) {
    let Some(qp) = dev.qps.get_mut(&h) else {
        return;
    };
    let o = &qp.outstanding[i];
    let cqe = Cqe {
        opcode: op::REQ_ERR,
        uidx: qp.uidx,
        qpn: qp.qpn,
        wqe_opcode: o.wqe.opcode,
        wqe_counter: o.wqe.index,
        syndrome: synd,
        vendor_err: 0x80 | synd,
        ..Default::default()
    };
    let (channel, index) = (o.channel, o.wqe.index);
    let mut to_err = true;
    if let Some((_, log_errored)) = qp.dci_streams {
        if !qp.errored_streams.contains(&channel) {
            qp.errored_streams.push(channel);
        }
        to_err = qp.errored_streams.len() >= 1usize << log_errored;
    }
    qp.stalls.remove(&channel);
    qp.outstanding[i].state = ReqState::Finished {
        cqe,
        signal: true,
        fatal: to_err,
    };
    crate::log(format_args!(
        "qp {:#x}: WQE {index} failed, syndrome {synd:#x}{}",
        qp.qpn,
        if to_err { ", QP to ERR" } else { ", stream error" }
    ));
    if to_err {
        dev.enter_error(h);
        if let Some(qp) = dev.qps.get_mut(&h) {
            flush_pending(qp, None);
        }
    } else {
        flush_pending(qp, Some(channel));
        // The HCA reconnects the stream when it is used again.
        if let Some((_, to)) = qp.wire.channels.get_mut(&channel) {
            *to = None;
        }
    }
}

/// mlx5_ib programs log_sra_max = ilog2(max_rd_atomic) (and log_rra_max likewise), so the
/// HCA keeps 2^that reads and atomics in flight; 0 leaves the field 0: one.
fn rd_atomic_depth(n: u8) -> usize {
    1usize << n.max(1).ilog2()
}

/// How many reads and atomics QP `h` may have on the wire: its own initiator depth and, for an
/// RC peer on this device, the peer's responder resources.
fn rd_atomic_bound(dev: &Device, h: u32) -> usize {
    let qp = &dev.qps[&h];
    let own = rd_atomic_depth(qp.max_rd_atomic);
    if qp.kind != QpKind::Rc {
        return own;
    }
    match dev.qp_by_num(qp.dest_qpn) {
        Some((_, peer)) if peer.kind == QpKind::Rc && peer.dest_qpn == qp.qpn => {
            own.min(rd_atomic_depth(peer.max_dest_rd_atomic))
        }
        _ => own,
    }
}

/// Puts on the wire every queued WQE the transport lets go (see the module comment).
fn issue(dev: &mut Device, h: u32, now: Instant) -> bool {
    let Some(qp) = dev.qps.get(&h) else {
        return false;
    };
    if qp.state == QpState::Err {
        return false;
    }
    let bound = rd_atomic_bound(dev, h);
    let mut blocked: Vec<u16> = Vec::new();
    // Channels with a request on the wire to another process, its answer still out, and the
    // address it went to.
    let mut pending: Vec<(u16, Option<Av>)> = Vec::new();
    let (mut reads_sent, mut reads_unfinished) = (0usize, 0usize);
    let mut moved = false;
    for i in 0..dev.qps[&h].outstanding.len() {
        let Some(qp) = dev.qps.get_mut(&h) else {
            return moved;
        };
        let o = &qp.outstanding[i];
        let (ch, ra) = (o.channel, o.wqe.reads_or_atomic());
        match &o.state {
            ReqState::Sent { answer, .. } => {
                match answer {
                    Some(Response::Ack(_)) => {}
                    None => pending.push((ch, o.wqe.av)),
                    Some(_) => blocked.push(ch),
                }
                if ra {
                    reads_sent += 1;
                    reads_unfinished += 1;
                }
                continue;
            }
            ReqState::Finished { .. } => {
                // Done but not retired: an older request is still unacknowledged, so this
                // one still holds its place in the initiator depth (and the result in the
                // responder's resources that a retry of the older one may need).
                if ra {
                    reads_sent += 1;
                }
                continue;
            }
            ReqState::Reported => continue,
            ReqState::Queued => {}
        }
        let fence_waits = o.wqe.fenced() && reads_unfinished > 0;
        if ra {
            reads_unfinished += 1;
        }
        // A request sent before goes again only once those ahead of it are answered; a DCI
        // reaches another target only once its channel has nothing on the wire (the HCA
        // drains a DC connection before it connects elsewhere).
        let ahead = pending.iter().rev().find(|(c, _)| *c == ch).map(|(_, av)| *av);
        let in_flight = pending.iter().filter(|(c, _)| *c == ch).count();
        let resend_waits = ahead.is_some_and(|av| o.psn != 0 || av != o.wqe.av) || in_flight >= REMOTE_WINDOW;
        if blocked.contains(&ch) {
            continue;
        }
        if resend_waits {
            blocked.push(ch);
            continue;
        }
        if qp.dci_streams.is_some() && qp.errored_streams.contains(&ch) {
            // A WQE of a stream in error is flushed, not executed, until the stream is reset.
            let state = flushed(qp, &qp.outstanding[i].wqe);
            qp.outstanding[i].state = state;
            moved = true;
            continue;
        }
        let retry_later = qp.stalls.get(&ch).is_some_and(|(_, until)| now < *until);
        if retry_later || fence_waits || (ra && reads_sent >= bound) {
            blocked.push(ch);
            continue;
        }
        if matches!(qp.stalls.get(&ch), Some((Stall::Timeout { left: 0 }, _))) {
            // The last retry's ACK timer ran out: retry_cnt retries after the first attempt
            // and no more (IBA 9.7.6.1.3, C9-140), so nothing is sent again.
            fail(dev, h, i, syndrome::TRANSPORT_RETRY_EXC_ERR);
            blocked.push(ch);
            moved = true;
            continue;
        }
        let mut wqe = o.wqe.clone();
        // Indirect (KSM) local keys name the region and address of their entity: the data
        // is gathered from, or read responses land at, the translated addresses.
        let need = if wqe.reads_or_atomic() { ACCESS_LOCAL_WRITE } else { 0 };
        let pd = dev.qps[&h].pd;
        if let Data::Sges(sges) = &mut wqe.data {
            for sge in sges.iter_mut() {
                if let Some((a, k)) = dev.translate_indirect(sge.0, sge.2, u64::from(sge.1), pd, need) {
                    (sge.0, sge.2) = (a, k);
                }
            }
            if let Some(qp) = dev.qps.get_mut(&h) {
                qp.outstanding[i].wqe.data = wqe.data.clone();
            }
        }
        let (answer, remote) = execute(dev, h, i, &wqe);
        let (acked, on_wire) = (matches!(answer, Some(Response::Ack(_))), answer.is_none());
        let after = dev.pass + 1;
        if let Some(a) = &remote {
            // Its answer finds it by this number (remote::poll).
            dev.remote_seqs.insert(a.seq, h);
        }
        if let Some(qp) = dev.qps.get_mut(&h) {
            qp.outstanding[i].state = ReqState::Sent { answer, after, remote };
        }
        if on_wire {
            pending.push((ch, wqe.av));
        } else if !acked {
            blocked.push(ch);
        }
        if ra {
            reads_sent += 1;
        }
        moved = true;
    }
    moved
}

/// Writes the CQEs that are due: in send-queue order, or per channel with `ooo_streams`; then
/// releases the slots of the oldest WQEs whose completions are written.
fn report(dev: &mut Device, h: u32) -> bool {
    let ooo = dev.ooo_streams;
    let mut moved = false;
    let mut head_clear = true;
    let mut waiting: Vec<u16> = Vec::new();
    let mut i = 0;
    loop {
        let Some(qp) = dev.qps.get_mut(&h) else {
            return moved;
        };
        let Some(o) = qp.outstanding.get_mut(i) else {
            break;
        };
        let due = head_clear || (ooo && !waiting.contains(&o.channel));
        match std::mem::replace(&mut o.state, ReqState::Reported) {
            ReqState::Finished { cqe, signal, fatal } if due => {
                let (cq, user_handle) = (qp.send_cq, qp.user_handle);
                let posted = signal && cq.is_some_and(|cq| completer::post(dev, cq, &cqe));
                // The error CQE reports it: the affiliated "local work queue catastrophic
                // error" (IB_EVENT_QP_FATAL) is for errors no completion can report (IBA
                // 11.6.3.1; mlx5 MLX5_EVENT_TYPE_WQ_CATAS_ERROR), e.g. when the CQ overran.
                if fatal && !posted {
                    dev.raise(
                        AsyncEvent {
                            element: user_handle,
                            event_type: event::QP_FATAL,
                        },
                        Owner::Qp(h),
                    );
                }
                moved = true;
            }
            ReqState::Reported => {}
            other => {
                o.state = other;
                head_clear = false;
                if !ooo {
                    break;
                }
                waiting.push(o.channel);
            }
        }
        i += 1;
    }
    if let Some(qp) = dev.qps.get_mut(&h) {
        while qp
            .outstanding
            .front()
            .is_some_and(|o| matches!(o.state, ReqState::Reported))
        {
            if let Some(o) = qp.outstanding.pop_front() {
                qp.sq_ci = qp.sq_ci.wrapping_add(o.wqe.bbs);
                moved = true;
            }
        }
    }
    moved
}

/// Where a request goes.
enum Dest {
    /// A QP or DCT of this device (its handle).
    Local(u32),
    /// A QP or DCT of another process: its node and slot, and what the headers name.
    Remote(u32, u32, Target),
    /// Nowhere: the packet is lost (the requester will time out).
    Nowhere,
}

/// Sends the WQE's request: the answer when it is known at once (this device's target, a
/// local check that failed, a lost packet), and what awaits another process's answer.
fn execute(dev: &mut Device, h: u32, i: usize, wqe: &SendWqe) -> (Option<Response>, Option<Awaiting>) {
    let qp = &dev.qps[&h];
    let (pd, kind, qpn) = (qp.pd, qp.kind, qp.qpn);
    let channel = qp.outstanding[i].channel;
    if wqe.opcode == opcode::NOP {
        return (Some(Response::Ack(None)), None);
    }
    // A memory window bind or unbind: a local operation, done when the WQE executes.
    if wqe.opcode == opcode::UMR {
        let r = match super::window::bind(dev, pd, wqe) {
            Ok(()) => Response::Ack(None),
            Err(super::window::BindError) => {
                crate::log(format_args!(
                    "qp {qpn:#x}: memory window bind error (key {:#x})",
                    wqe.imm
                ));
                Response::Nak(syndrome::MW_BIND_ERR)
            }
        };
        return (Some(r), None);
    }
    // A message longer than the port's maximum message size is never sent (IBA: a message
    // may not exceed the port's max_msg_sz, 1 << cmd_hca_cap.log_max_msg as mlx5_ib reports
    // it in mlx5_query_hca_port): the ConnectX completes the WQE with
    // MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR (0x01; libmlx5 cq.c mlx5_handle_error_cqe:
    // IBV_WC_LOC_LEN_ERR) and nothing reaches the wire, as soft-RoCE refuses such a WR
    // (rxe_verbs.c validate_send_wr: length > RXE_PORT_MAX_MSG_SZ). The length is the WQE's
    // total data length whatever the opcode: the gathered bytes of a send or write, the
    // scattered length of a read (its RETH DMA length); an atomic's 8 bytes never reach it.
    if wqe.data.len() > dev.max_msg_sz() {
        crate::log(format_args!(
            "qp {qpn:#x}: a {}-byte message exceeds max_msg_sz {}: local length error",
            wqe.data.len(),
            dev.max_msg_sz()
        ));
        return (Some(Response::Nak(syndrome::LOCAL_LENGTH_ERR)), None);
    }
    // Local side first: the gather list (send/write) or the scatter list (read/atomic).
    let local_write = wqe.reads_or_atomic();
    if let Data::Sges(sges) = &wqe.data {
        for &(addr, len, lkey) in sges {
            let need = if local_write { ACCESS_LOCAL_WRITE } else { 0 };
            let ok = dev
                .mr_by_key(lkey)
                .is_some_and(|mr| mr.pd == pd && mr.access & need == need && mr.covers(addr, u64::from(len)));
            if !ok {
                return (Some(Response::Nak(syndrome::LOCAL_PROT_ERR)), None);
            }
        }
    }
    if matches!(wqe.opcode, opcode::ATOMIC_CS | opcode::ATOMIC_FA) && wqe.data.len() != 8 {
        return (Some(Response::Nak(syndrome::LOCAL_LENGTH_ERR)), None);
    }
    // Send and write data is gathered now, when the request leaves (a later read's data,
    // landing with its response, is not in it unless the WQE was fenced).
    let payload = if local_write {
        Vec::new()
    } else {
        gather(dev, &wqe.data)
    };
    let (slid, grh) = (
        dev.profile.lid_of(dev.node),
        dev.profile.link_layer == LinkLayer::Ethernet,
    );
    let raddr = wqe.raddr.map(|(addr, rkey)| (addr, rkey, wqe.data.len()));
    let qp = &dev.qps[&h];
    let headers = match (qp.kind, &wqe.av) {
        (QpKind::Dci | QpKind::Ud, Some(av)) => Headers::of_av(dev.profile, av, qp.pkey_index),
        _ => Headers::of_path(dev.profile, &qp.path, qp.pkey_index),
    };
    let req = Request {
        src_qpn: qpn,
        slid,
        grh,
        opcode: wqe.opcode,
        imm: wqe.imm,
        payload: &payload,
        remote: raddr,
        atomic: wqe.atomic,
        qkey: udp_qkey(dev, h, wqe),
        headers,
    };
    match route(dev, h, wqe) {
        Dest::Local(t) if dev.faults.is_none() => (Some(responder::respond(dev, t, &req)), None),
        Dest::Local(t) => {
            // A lossy wire between this device's own QPs: the request may be lost or arrive
            // twice, and so may its answer; retries carry the same PSN (see `psn_of`).
            let (epoch, psn, first) = if matches!(kind, QpKind::Ud | QpKind::Uc) {
                (0, 0, false)
            } else {
                psn_of(dev, h, i, (u32::MAX, 0, t))
            };
            let (there, back) = match dev.faults.as_mut() {
                Some(f) => (f.fate(), f.fate()),
                None => (Fate::Deliver, Fate::Deliver),
            };
            let copies = match there {
                Fate::Lose => 0,
                Fate::Duplicate => 2,
                Fate::Deliver | Fate::Hold(_) => 1,
            };
            let mut answer = Response::Dropped;
            for _ in 0..copies {
                answer = responder::respond_in_order(dev, (0, epoch, channel), psn, first, wqe.opcode, |dev| {
                    responder::respond(dev, t, &req)
                });
            }
            if back == Fate::Lose {
                answer = Response::Dropped;
            }
            (Some(answer), None)
        }
        Dest::Nowhere => {
            // A DCT of this device that refused the key counts it.
            if let Some(av) = wqe.av {
                if av_node(dev, &av) == Some(dev.node) && dev.owns_qpn(av.dqpn) {
                    responder::count_key_violation(dev, kind, av.dqpn, av.key);
                }
            }
            (Some(Response::Dropped), None)
        }
        Dest::Remote(node, slot, mut target) => {
            // Unreliable datagram: nothing comes back, so nothing is awaited.
            let await_answer = !matches!(kind, QpKind::Ud | QpKind::Uc);
            if await_answer {
                (target.epoch, target.psn, target.first) = psn_of(dev, h, i, (node, slot, target.dqpn));
                target.channel = channel;
            }
            // Only a lossy wire loses a message to a live peer, and the emulator knows when
            // it does: a request lost on the way is answered "dropped" now (its timer runs
            // from now), an answer lost on the way back is replaced by a "dropped" one (the
            // timer runs from when the request left). Otherwise the answer is awaited however
            // long the peer's process takes (a slow process is no lost packet, as a responder
            // in silicon answers in microseconds), and a dead peer is found by probing.
            match remote::send(dev, node, slot, target, &req, await_answer) {
                Some(a) if await_answer && !a.lost => (None, Some(a)),
                _ => (Some(Response::Dropped), None),
            }
        }
    }
}

/// WQE `i`'s place in its connection, going to `dest` (node, slot, QP/DCT): the QP's
/// incarnation, its sequence number and whether it opens the connection. Numbered when first
/// sent, consecutively per channel, and the same on every retry; a DCI opens a new connection
/// whenever its target changes (or after its stream erred), as the HCA reconnects then.
fn psn_of(dev: &mut Device, h: u32, i: usize, dest: (u32, u32, u32)) -> (u64, u64, bool) {
    let epoch = dev.next_epoch + 1;
    let Some(qp) = dev.qps.get_mut(&h) else {
        return (0, 0, false);
    };
    if qp.wire.epoch == 0 {
        qp.wire.epoch = epoch;
        dev.next_epoch = epoch;
    }
    let Some(o) = qp.outstanding.get_mut(i) else {
        return (0, 0, false);
    };
    if o.psn == 0 {
        let (last, to) = qp.wire.channels.entry(o.channel).or_default();
        *last += 1;
        o.psn = *last;
        o.first = *to != Some(dest);
        *to = Some(dest);
    }
    (qp.wire.epoch, o.psn, o.first)
}

/// Where the request goes: the RC peer, or the QP/DCT the address vector names. A request
/// for this device is checked here (the RC peer's connection, the DCT's key); one for another
/// process's device is checked there.
fn route(dev: &Device, h: u32, wqe: &SendWqe) -> Dest {
    let qp = &dev.qps[&h];
    let (node, dqpn, key) = match (qp.kind, wqe.av) {
        (QpKind::Rc | QpKind::Uc, _) => (path_node(dev, &qp.path), qp.dest_qpn, 0),
        (QpKind::Dci | QpKind::Ud, Some(av)) => (av_node(dev, &av), av.dqpn, av.key),
        _ => return Dest::Nowhere,
    };
    let Some(node) = node else {
        return Dest::Nowhere;
    };
    if node == dev.node && dev.owns_qpn(dqpn) {
        let slid = dev.profile.lid_of(dev.node);
        return responder::accept(dev, qp.kind, dqpn, key, qp.qpn, slid).map_or(Dest::Nowhere, Dest::Local);
    }
    // The process holding the number's block (fabric/mod.rs QPN_BLOCK_SHIFT); nobody's is
    // lost on the wire.
    let Some(slot) = dev.qpn_holder(node, dqpn) else {
        return Dest::Nowhere;
    };
    Dest::Remote(
        node,
        slot,
        Target {
            dqpn,
            kind: qp.kind,
            key,
            origin: dev.fabric.as_ref().map_or(0, |f| f.origin),
            epoch: 0,
            channel: 0,
            psn: 0,
            first: false,
        },
    )
}

/// The node an RC path leads to: by DLID on InfiniBand, by GID on RoCE.
/// On InfiniBand a path with a GRH reaches a port only if the DGID is one of its GIDs (IBA
/// 9.6.1.1 GRH checks: a DGID the port does not own is dropped silently).
fn path_node(dev: &Device, path: &Path) -> Option<u32> {
    match dev.profile.link_layer {
        LinkLayer::InfiniBand => {
            node_of_lid(dev, path.dlid).filter(|&n| !path.is_global || owns_gid(dev, n, &path.dgid))
        }
        LinkLayer::Ethernet => node_of_gid(dev, &path.dgid),
    }
}

/// Whether `gid` is one of node `n`'s port GIDs.
fn owns_gid(dev: &Device, n: u32, gid: &[u8; 16]) -> bool {
    dev.profile.node_of_gid(gid) == Some(n)
}

/// The node an address vector leads to: by LID (or a GRH's GID) on InfiniBand; always by GID
/// on RoCE, where libmlx5 leaves the AV's GRH bit clear (mlx5_create_ah sets grh = 0 when
/// is_eth) because the GRH is implied.
fn av_node(dev: &Device, av: &super::wqe::Av) -> Option<u32> {
    match dev.profile.link_layer {
        LinkLayer::InfiniBand => {
            // The DLID decides where the packet goes; there a GRH's DGID must be the port's.
            match node_of_lid(dev, av.rlid) {
                Some(n) => Some(n).filter(|&n| !av.grh || owns_gid(dev, n, &av.rgid)),
                None => av.grh.then(|| node_of_gid(dev, &av.rgid)).flatten(),
            }
        }
        LinkLayer::Ethernet => node_of_gid(dev, &av.rgid),
    }
}

fn node_of_lid(dev: &Device, lid: u16) -> Option<u32> {
    dev.profile.node_of_lid(lid)
}

fn node_of_gid(dev: &Device, gid: &[u8; 16]) -> Option<u32> {
    dev.profile.node_of_gid(gid)
}

/// The Q_Key a UD send carries: the WQE's, or the QP's own when the WQE's has the high bit
/// set (IBA 10.2.5, controlled Q_Keys). None for other transports.
fn udp_qkey(dev: &Device, h: u32, wqe: &SendWqe) -> Option<u32> {
    let qp = &dev.qps[&h];
    if qp.kind != QpKind::Ud {
        return None;
    }
    let wqe_qkey = (wqe.av?.key >> 32) as u32;
    Some(if wqe_qkey & 0x8000_0000 != 0 { qp.qkey } else { wqe_qkey })
}

fn gather(dev: &Device, data: &Data) -> Vec<u8> {
    match data {
        Data::Inline(b) => b.clone(),
        Data::Sges(sges) => {
            let mut out = Vec::with_capacity(data.len() as usize);
            for &(addr, len, _) in sges {
                let start = out.len();
                out.resize(start + len as usize, 0);
                dev.dma.read(addr, &mut out[start..]);
            }
            out
        }
    }
}

fn scatter_local(dev: &Device, data: &Data, bytes: &[u8]) {
    if let Data::Sges(sges) = data {
        let mut off = 0usize;
        for &(addr, len, _) in sges {
            let n = (len as usize).min(bytes.len() - off);
            dev.dma.write(addr, &bytes[off..off + n]);
            off += n;
        }
    }
}
