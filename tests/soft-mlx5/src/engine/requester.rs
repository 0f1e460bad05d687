//! The requester: one send queue's WQEs, in order, as the HCA's send engine executes them:
//! routing (RC connection, DC address vector and key), local key checks, the responder's
//! answer (ACK, RNR NAK, NAK, silence), retries with their timers, completions, and the error
//! state with its flush (IBA 10.8.3, 11.6.2; mlx5 DCI streams per mlx5dv_create_qp(3)).

use super::completer;
use super::cqe::{op, syndrome, Cqe};
use super::remote;
use super::responder::{self, Request, Response, ACCESS_LOCAL_WRITE};
use super::timing::{ack_timeout, rnr_delay};
use super::wqe::{decode_send, opcode, Data, SendWqe};
use crate::device::events::Owner;
use crate::device::objects::{Path, QpKind, QpState, Stall};
use crate::device::{event, AsyncEvent, Device};
use crate::fabric::message::Target;
use crate::fabric::{MAX_NODES, SLOT_SHIFT};
use crate::profile::LinkLayer;
use std::time::Instant;

/// Runs the send queue of QP `h` until it is empty or stalled; true when it moved.
pub fn run(dev: &mut Device, h: u32, now: Instant) -> bool {
    let mut moved = false;
    loop {
        let Some(qp) = dev.qps.get(&h) else {
            return moved;
        };
        if qp.kind == QpKind::Dct || qp.sq.cnt == 0 {
            return moved;
        }
        let pi = dev.dma.read_be32(qp.db + 4) & 0xffff;
        if qp.sq_ci & 0xffff == pi {
            return moved;
        }
        let state = qp.state;
        if matches!(state, QpState::Reset | QpState::Init | QpState::Rtr) {
            // WQEs posted before RTS wait in the ring, as on the HCA.
            return moved;
        }
        if let Some((_, until)) = qp.stall {
            if now < until && state != QpState::Err {
                return moved;
            }
        }
        if state != QpState::Err && remote::awaiting(qp) {
            return moved;
        }
        let datagram = matches!(qp.kind, QpKind::Dci | QpKind::Ud);
        let wqe = match decode_send(dev.dma.as_ref(), &qp.sq, qp.sq_ci, datagram) {
            Ok(w) => w,
            Err(e) => {
                crate::log(format_args!("qp {:#x}: undecodable WQE at {}: {e:?}", qp.qpn, qp.sq_ci));
                let bb = qp.sq_ci;
                moved = true;
                if state == QpState::Err {
                    // A QP in ERR executes nothing: every WQE completes with a flush error
                    // (IBA 10.3.1.1, 11.6.2), none is checked again; an unreadable WQE there is
                    // one more flushed basic block, not a second local QP operation error.
                    let placeholder = SendWqe {
                        index: bb as u16,
                        opcode: 0,
                        qpn: qp.qpn,
                        ds: 0,
                        bbs: 1,
                        fm_ce_se: 0,
                        imm: 0,
                        stream: 0,
                        av: None,
                        raddr: None,
                        atomic: None,
                        data: Data::Sges(Vec::new()),
                    };
                    flush(dev, h, &placeholder);
                    continue;
                }
                error(dev, h, bb as u16, 0, 1, syndrome::LOCAL_QP_OP_ERR, 0);
                continue;
            }
        };
        moved = true;
        if state == QpState::Err || stream_errored(dev, h, &wqe) {
            flush(dev, h, &wqe);
            continue;
        }
        match execute(dev, h, &wqe) {
            Outcome::Done(byte_cnt) => complete(dev, h, &wqe, byte_cnt),
            Outcome::Wait(stall, until) => {
                if let Some(qp) = dev.qps.get_mut(&h) {
                    qp.stall = Some((stall, until));
                }
                return moved;
            }
            Outcome::Failed(synd) => {
                error(dev, h, wqe.index, wqe.opcode, wqe.bbs, synd, wqe.stream);
            }
            Outcome::Pending => return moved,
        }
    }
}

enum Outcome {
    Done(u32),
    Wait(Stall, Instant),
    Failed(u8),
    /// The request went to another process's device; its answer is awaited.
    Pending,
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

/// Sends the WQE's request and interprets the answer.
fn execute(dev: &mut Device, h: u32, wqe: &SendWqe) -> Outcome {
    if let Some(answer) = remote::take_answer(dev, h) {
        return conclude(dev, h, wqe, answer);
    }
    let qp = &dev.qps[&h];
    let (pd, kind, qpn) = (qp.pd, qp.kind, qp.qpn);
    if wqe.opcode == opcode::NOP {
        return Outcome::Done(0);
    }
    // Local side first: the gather list (send/write) or the scatter list (read/atomic).
    let local_write = matches!(wqe.opcode, opcode::RDMA_READ | opcode::ATOMIC_CS | opcode::ATOMIC_FA);
    if let Data::Sges(sges) = &wqe.data {
        for &(addr, len, lkey) in sges {
            let need = if local_write { ACCESS_LOCAL_WRITE } else { 0 };
            let ok = dev
                .mr_by_key(lkey)
                .is_some_and(|mr| mr.pd == pd && mr.access & need == need && mr.covers(addr, u64::from(len)));
            if !ok {
                return Outcome::Failed(syndrome::LOCAL_PROT_ERR);
            }
        }
    }
    if matches!(wqe.opcode, opcode::ATOMIC_CS | opcode::ATOMIC_FA) && wqe.data.len() != 8 {
        return Outcome::Failed(syndrome::LOCAL_LENGTH_ERR);
    }
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
    };
    let answer = match route(dev, h, wqe) {
        Dest::Local(t) => responder::respond(dev, t, &req),
        Dest::Nowhere => Response::Dropped,
        Dest::Remote(node, slot, target) => {
            // Unreliable datagram: nothing comes back, so nothing is awaited.
            let await_answer = kind != QpKind::Ud;
            remote::send(dev, h, node, slot, target, &req, await_answer);
            if await_answer {
                return Outcome::Pending;
            }
            Response::Dropped
        }
    };
    conclude(dev, h, wqe, answer)
}

/// What the requester makes of the responder's answer (or of its silence).
fn conclude(dev: &mut Device, h: u32, wqe: &SendWqe, answer: Response) -> Outcome {
    let now = Instant::now();
    let qp = &dev.qps[&h];
    if qp.kind == QpKind::Ud {
        // Unreliable datagram: no ACK, no retry; the send completes once on the wire, whatever
        // became of it (IBA 9.8).
        return Outcome::Done(wqe.data.len() as u32);
    }
    match answer {
        Response::Ack(reply) => {
            if let Some(bytes) = reply {
                scatter_local(dev, &wqe.data, &bytes);
            }
            let byte_cnt = match wqe.opcode {
                opcode::ATOMIC_CS | opcode::ATOMIC_FA => 8,
                _ => wqe.data.len() as u32,
            };
            Outcome::Done(byte_cnt)
        }
        Response::RnrNak(timer) => {
            let left = match qp.stall {
                Some((Stall::Rnr { left }, _)) => left,
                _ => qp.rnr_retry,
            };
            // rnr_retry 7 means retry forever (IBA 9.7.5.2.8).
            if left == 0 {
                return Outcome::Failed(syndrome::RNR_RETRY_EXC_ERR);
            }
            let left = if left == 7 { 7 } else { left - 1 };
            Outcome::Wait(Stall::Rnr { left }, now + rnr_delay(timer))
        }
        Response::Nak(synd) => Outcome::Failed(synd),
        Response::Dropped => {
            let left = match qp.stall {
                Some((Stall::Timeout { left }, _)) => left,
                _ => qp.retry_cnt.saturating_add(1),
            };
            if left == 0 {
                return Outcome::Failed(syndrome::TRANSPORT_RETRY_EXC_ERR);
            }
            match ack_timeout(qp.timeout) {
                Some(t) => Outcome::Wait(Stall::Timeout { left: left - 1 }, now + t),
                // Timeout 0 waits forever: the QP never completes the WQE.
                None => Outcome::Wait(Stall::Timeout { left }, now + std::time::Duration::from_secs(3600)),
            }
        }
    }
}

/// Where the request goes: the RC peer, or the QP/DCT the address vector names. A request
/// for this device is checked here (the RC peer's connection, the DCT's key); one for another
/// process's device is checked there.
fn route(dev: &Device, h: u32, wqe: &SendWqe) -> Dest {
    let qp = &dev.qps[&h];
    let (node, dqpn, key) = match (qp.kind, wqe.av) {
        (QpKind::Rc, _) => (path_node(dev, &qp.path), qp.dest_qpn, 0),
        (QpKind::Dci | QpKind::Ud, Some(av)) => (av_node(dev, &av), av.dqpn, av.key),
        _ => return Dest::Nowhere,
    };
    let Some(node) = node else {
        return Dest::Nowhere;
    };
    let slot = dqpn >> SLOT_SHIFT;
    if node == dev.node && slot == dev.slot {
        return responder::accept(dev, qp.kind, dqpn, key, qp.qpn).map_or(Dest::Nowhere, Dest::Local);
    }
    if dev.fabric.is_none() {
        return Dest::Nowhere;
    }
    Dest::Remote(
        node,
        slot,
        Target {
            dqpn,
            kind: qp.kind,
            key,
        },
    )
}

/// The node an RC path leads to: by DLID on InfiniBand, by GID on RoCE.
fn path_node(dev: &Device, path: &Path) -> Option<u32> {
    match dev.profile.link_layer {
        LinkLayer::InfiniBand => node_of_lid(dev, path.dlid),
        LinkLayer::Ethernet => node_of_gid(dev, &path.dgid),
    }
}

/// The node an address vector leads to: by LID (or a GRH's GID) on InfiniBand; always by GID
/// on RoCE, where libmlx5 leaves the AV's GRH bit clear (mlx5_create_ah sets grh = 0 when
/// is_eth) because the GRH is implied.
fn av_node(dev: &Device, av: &super::wqe::Av) -> Option<u32> {
    match dev.profile.link_layer {
        LinkLayer::InfiniBand => {
            node_of_lid(dev, av.rlid).or_else(|| av.grh.then(|| node_of_gid(dev, &av.rgid)).flatten())
        }
        LinkLayer::Ethernet => node_of_gid(dev, &av.rgid),
    }
}

fn node_of_lid(dev: &Device, lid: u16) -> Option<u32> {
    (0..MAX_NODES).find(|&n| dev.profile.lid_of(n) == lid && lid != 0)
}

fn node_of_gid(dev: &Device, gid: &[u8; 16]) -> Option<u32> {
    let nodes = std::iter::once(dev.node).chain((0..MAX_NODES).filter(|&n| n != dev.node));
    nodes
        .into_iter()
        .find(|&n| (0..dev.profile.gid_count()).any(|i| dev.profile.gid(n, i).as_ref() == Some(gid)))
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

fn advance(dev: &mut Device, h: u32, bbs: u32) {
    if let Some(qp) = dev.qps.get_mut(&h) {
        qp.sq_ci = qp.sq_ci.wrapping_add(bbs);
        qp.stall = None;
        qp.remote = None;
    }
}

fn complete(dev: &mut Device, h: u32, wqe: &SendWqe, byte_cnt: u32) {
    let qp = &dev.qps[&h];
    let (signal, cq) = (wqe.signaled() || qp.sq_sig_all, qp.send_cq);
    let cqe = Cqe {
        opcode: op::REQ,
        uidx: qp.uidx,
        qpn: qp.qpn,
        wqe_opcode: wqe.opcode,
        wqe_counter: wqe.index,
        byte_cnt,
        ..Default::default()
    };
    advance(dev, h, wqe.bbs);
    if let (true, Some(cq)) = (signal, cq) {
        completer::post(dev, cq, &cqe);
    }
}

fn stream_errored(dev: &Device, h: u32, wqe: &SendWqe) -> bool {
    let qp = &dev.qps[&h];
    qp.stream_channel(wqe.stream)
        .is_some_and(|c| qp.errored_streams.contains(&c))
}

/// A WQE completed in error: the error CQE, then the QP goes to ERR (the rest is flushed by
/// `run`). On a DCI with streams only the WQE's stream enters error, until the number of
/// distinct errored streams reaches 2^log_num_errored (mlx5dv_create_qp(3)).
fn error(dev: &mut Device, h: u32, index: u16, wqe_opcode: u8, bbs: u32, synd: u8, stream: u16) {
    let qp = dev.qps.get_mut(&h).expect("caller holds the handle");
    let cqe = Cqe {
        opcode: op::REQ_ERR,
        uidx: qp.uidx,
        qpn: qp.qpn,
        wqe_opcode,
        wqe_counter: index,
        syndrome: synd,
        vendor_err: 0x80 | synd,
        ..Default::default()
    };
    let cq = qp.send_cq;
    let mut to_err = true;
    if let Some((_, log_errored)) = qp.dci_streams {
        let channel = qp.stream_channel(stream).unwrap_or(stream);
        if !qp.errored_streams.contains(&channel) {
            qp.errored_streams.push(channel);
        }
        to_err = qp.errored_streams.len() >= 1usize << log_errored;
    }
    qp.sq_ci = qp.sq_ci.wrapping_add(bbs);
    qp.stall = None;
    qp.remote = None;
    crate::log(format_args!(
        "qp {:#x}: WQE {index} failed, syndrome {synd:#x}{}",
        qp.qpn,
        if to_err { ", QP to ERR" } else { ", stream error" }
    ));
    let user_handle = qp.user_handle;
    if to_err {
        dev.enter_error(h);
    }
    let reported = cq.is_some_and(|cq| completer::post(dev, cq, &cqe));
    // The error CQE reports it: the affiliated "local work queue catastrophic error"
    // (IB_EVENT_QP_FATAL) is for errors that cannot be reported in a completion (IBA 11.6.3.1;
    // mlx5 raises MLX5_EVENT_TYPE_WQ_CATAS_ERROR only then), e.g. when the CQ overran.
    if to_err && !reported {
        dev.raise(
            AsyncEvent {
                element: user_handle,
                event_type: event::QP_FATAL,
            },
            Owner::Qp(h),
        );
    }
}

/// Completes a WQE of a QP in ERR (or of an errored stream) with a flush error.
fn flush(dev: &mut Device, h: u32, wqe: &SendWqe) {
    let qp = &dev.qps[&h];
    let cqe = Cqe {
        opcode: op::REQ_ERR,
        uidx: qp.uidx,
        qpn: qp.qpn,
        wqe_opcode: wqe.opcode,
        wqe_counter: wqe.index,
        syndrome: syndrome::WR_FLUSH_ERR,
        ..Default::default()
    };
    let cq = qp.send_cq;
    advance(dev, h, wqe.bbs);
    if let Some(cq) = cq {
        completer::post(dev, cq, &cqe);
    }
}
