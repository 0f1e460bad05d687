//! The responder: what a target QP or DCT does with one request packet (IBA 9.7.5: receive
//! queue consumption, R_Key validation, the NAKs; the mlx5 DCT's key check).
//!
//! Checks in the order rxe_resp.c makes them (check_op_valid, check_resource, check_rkey),
//! which is the order the IBA responder state machine gives.

use super::completer;
use super::cqe::{op, syndrome, Cqe};
use super::headers;
use super::wqe::{decode_recv, layout, opcode};
use crate::device::events::Owner;
use crate::device::objects::{QpKind, QpState};
use crate::device::{event, AsyncEvent, Device, WindowAccess};
use crate::mem::AtomicOp;
use crate::profile::LinkLayer;

/// IB_ACCESS_REMOTE_WRITE.
pub const ACCESS_REMOTE_WRITE: u32 = 1 << 1;
/// IB_ACCESS_REMOTE_READ.
pub const ACCESS_REMOTE_READ: u32 = 1 << 2;
/// IB_ACCESS_REMOTE_ATOMIC.
pub const ACCESS_REMOTE_ATOMIC: u32 = 1 << 3;
/// IB_ACCESS_LOCAL_WRITE.
pub const ACCESS_LOCAL_WRITE: u32 = 1;

/// One request as it arrives at the responder.
#[derive(Debug)]
pub struct Request<'a> {
    /// The requester's QP (DCI) number.
    pub src_qpn: u32,
    /// The requester's LID.
    pub slid: u16,
    /// Whether the packet carried a GRH (RoCE, or a global IB path).
    pub grh: bool,
    /// MLX5_OPCODE_* of the WQE.
    pub opcode: u8,
    /// Immediate, as posted.
    pub imm: u32,
    /// Payload of a send or write.
    pub payload: &'a [u8],
    /// Remote address, rkey and length (RDMA and atomics).
    pub remote: Option<(u64, u32, u64)>,
    /// Atomic operands (swap_add, compare).
    pub atomic: Option<(u64, u64)>,
    /// Q_Key of a UD send.
    pub qkey: Option<u32>,
    /// The path fields of its headers (SL, traffic class, hop limit, flow label, P_Key).
    pub headers: crate::engine::headers::Headers,
}

/// Bytes a UD receive buffer reserves for the GRH before the payload (IBA 11.4.1.2).
pub const GRH_BYTES: usize = 40;

/// What the requester learns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Response {
    /// ACK; for a read the data, for an atomic the original value.
    Ack(Option<Vec<u8>>),
    /// RNR NAK with the responder's timer.
    RnrNak(u8),
    /// NAK: the requester completes with this syndrome.
    Nak(u8),
    /// Nothing comes back (dropped: the requester times out).
    Dropped,
    /// NAK, PSN sequence error (IBA 9.7.5.2.2): an earlier request of the connection has not
    /// arrived; the requester sends this one again after it.
    OutOfSequence,
}

/// Read and atomic results a responder keeps per connection to replay to a duplicate (its
/// responder resources, IBA 9.4.4, 9.4.5; 16 = 1 << log_max_ra_res_qp).
const REPLAY_DEPTH: usize = 16;

/// A requester connection as a responder tells it apart: the requester device's incarnation
/// (0 for this device), the requester QP's incarnation and its channel.
pub type ConnectionKey = (u64, u64, u16);

/// What a responder remembers of one requester connection: the sequence number it expects
/// next and the read and atomic results it may have to send again.
#[derive(Debug, Default)]
pub struct Connection {
    /// The sequence number of the next new request.
    pub next: u64,
    /// (sequence number, answer) of the latest reads and atomics.
    pub replay: std::collections::VecDeque<(u64, Response)>,
}

/// Executes a request (`execute`) in its connection's order (IBA 9.7.5.1): the expected one is
/// executed; an earlier one, a retry after a lost answer or a copy the wire made, is
/// acknowledged again, never executed again (a read or atomic gets its saved result, IBA
/// 9.7.5.1.1, 9.4.5); a later one waits for the missing one (PSN sequence error NAK). A `first`
/// request opens the connection anew (a DCI reaching this target again). PSN 0 (unreliable
/// transports) is executed as it comes.
pub fn respond_in_order(
    dev: &mut Device,
    key: ConnectionKey,
    psn: u64,
    first: bool,
    opcode: u8,
    execute: impl FnOnce(&mut Device) -> Response,
) -> Response {
    if psn == 0 {
        return execute(dev);
    }
    let read_or_atomic = matches!(opcode, opcode::RDMA_READ | opcode::ATOMIC_CS | opcode::ATOMIC_FA);
    let next = dev.connections.get(&key).map(|c| c.next);
    match next {
        Some(n) if psn < n => {
            crate::log(format_args!("responder: duplicate PSN {psn} (expected {n})"));
            let saved = dev
                .connections
                .get(&key)
                .and_then(|c| c.replay.iter().find(|(p, _)| *p == psn))
                .map(|(_, r)| r.clone());
            if let Some(r) = saved {
                return r;
            }
            if opcode != opcode::RDMA_READ {
                return if read_or_atomic {
                    Response::Nak(syndrome::REMOTE_INVAL_REQ_ERR)
                } else {
                    Response::Ack(None)
                };
            }
            // Beyond the saved results a read may simply be read again (IBA 9.7.5.1.1).
            return execute(dev);
        }
        Some(n) if psn == n => {}
        _ if first => dev.connections.entry(key).or_default().next = psn,
        _ => return Response::OutOfSequence,
    }
    let response = execute(dev);
    if matches!(response, Response::Ack(_)) {
        let c = dev.connections.entry(key).or_default();
        c.next = psn + 1;
        if read_or_atomic {
            c.replay.push_back((psn, response.clone()));
            if c.replay.len() > REPLAY_DEPTH {
                c.replay.pop_front();
            }
        }
    }
    response
}

/// The QP or DCT numbered `dqpn` that a request of a `kind` requester (QP `src_qpn`) reaches,
/// or None, when it is dropped: an RC request only reaches the RC QP connected to the
/// requester, a DC request only a DCT whose access key it carries (a wrong key is dropped
/// silently: the mlx5 DC access key check), a UD one only a UD QP.
pub fn accept(dev: &Device, kind: QpKind, dqpn: u32, key: u64, src_qpn: u32, slid: u16) -> Option<u32> {
    let (h, t) = dev.qp_by_num(dqpn)?;
    // IBA 9.6.1.5 (connected services): the packet's source QP and, on InfiniBand, its SLID
    // must be the receiving QP's remote end (its dest QPN and its path's DLID); a packet that
    // is not is silently dropped, and its requester runs out of retries.
    let from_peer = |t: &crate::device::objects::Qp| {
        t.dest_qpn == src_qpn && (dev.profile.link_layer != LinkLayer::InfiniBand || t.path.dlid == slid)
    };
    let ok = match kind {
        QpKind::Rc => t.kind == QpKind::Rc && from_peer(t),
        QpKind::Uc => t.kind == QpKind::Uc && from_peer(t),
        QpKind::Dci => t.kind == QpKind::Dct && t.dc_key == key,
        QpKind::Ud => t.kind == QpKind::Ud,
        QpKind::Dct => false,
    };
    ok.then_some(h)
}

/// A DC request that named DCT `dqpn` with a wrong access key: the DCT drops it without an
/// answer (no NAK: the initiator sees only its ACK timeouts) and counts it in its context's
/// `dc_access_key_violation_count` (mlx5 PRM DCT context; mlx5_ib reports it through QUERY_DCT).
pub fn count_key_violation(dev: &mut Device, kind: QpKind, dqpn: u32, key: u64) {
    if kind != QpKind::Dci {
        return;
    }
    let Some(&h) = dev.qpn_to_handle.get(&dqpn) else {
        return;
    };
    if let Some(t) = dev.qps.get_mut(&h) {
        if t.kind == QpKind::Dct && t.dc_key != key {
            t.dc_key_violations = t.dc_key_violations.saturating_add(1);
            crate::log(format_args!("dct {dqpn:#x}: DC key violation ({key:#x}), dropped"));
        }
    }
}

/// Executes `req` at the QP or DCT `target` (a handle).
pub fn respond(dev: &mut Device, target: u32, req: &Request<'_>) -> Response {
    let Some(qp) = dev.qps.get(&target) else {
        return Response::Dropped;
    };
    // A QP accepts packets in RTR and later; RESET/INIT/ERR drop them (IBA 10.3.1).
    if !matches!(qp.state, QpState::Rtr | QpState::Rts | QpState::Sqd) {
        return Response::Dropped;
    }
    // IBA 9.6.1.1 and 10.9.3: the BTH P_Key must match the receiving QP's (the entry at its
    // P_Key index); a packet that does not is dropped without an answer, and its requester
    // sees only its ACK timeouts.
    let own = headers::pkey_at(dev.profile, qp.pkey_index).unwrap_or(headers::DEFAULT_PKEY);
    let accepted = headers::pkeys_match(req.headers.pkey, own);
    let len = req.remote.map_or(req.payload.len() as u64, |(_, _, len)| len);
    headers::capture(dev.node, qp.qpn, req.src_qpn, req.opcode, len, &req.headers, accepted);
    if !accepted {
        crate::log(format_args!(
            "qp {:#x}: P_Key {:#06x} of a request from {:#x} does not match its own {own:#06x}: dropped",
            qp.qpn, req.headers.pkey, req.src_qpn
        ));
        return Response::Dropped;
    }
    let access = qp.responder_access();
    let pd = qp.pd;
    if qp.kind == QpKind::Ud {
        return receive_datagram(dev, target, req);
    }
    let needed = match req.opcode {
        opcode::RDMA_WRITE | opcode::RDMA_WRITE_IMM => ACCESS_REMOTE_WRITE,
        opcode::RDMA_READ => ACCESS_REMOTE_READ,
        opcode::ATOMIC_CS | opcode::ATOMIC_FA => ACCESS_REMOTE_ATOMIC,
        _ => 0,
    };
    // check_op_valid: an operation the QP's access flags do not enable is an invalid request.
    if access & needed != needed {
        return fail(dev, target, syndrome::REMOTE_INVAL_REQ_ERR, event::QP_REQ_ERR);
    }
    if needed & ACCESS_REMOTE_ATOMIC != 0 && !dev.profile.atomics {
        // A function without the atomic capability answers atomics with an invalid request.
        return fail(dev, target, syndrome::REMOTE_INVAL_REQ_ERR, event::QP_REQ_ERR);
    }
    // check_length: a message longer than this port's maximum message size is an invalid
    // request (IBA C9-94 for the RETH DMA length; rxe_resp.c rxe_resp_check_length answers
    // RESPST_ERR_LENGTH, i.e. NAK invalid request, class C on RC). Its requester checks its
    // own port's limit first, so only a requester whose limit is higher gets here (another
    // process started with another SOFT_MLX5_LOG_MAX_MSG, or another HCA).
    let len = req.remote.map_or(req.payload.len() as u64, |(_, _, len)| len);
    if len > dev.max_msg_sz() {
        return fail(dev, target, syndrome::REMOTE_INVAL_REQ_ERR, event::QP_REQ_ERR);
    }
    // A zero-length RDMA READ or WRITE has no R_Key or address checked (IBA C9-88, as
    // rxe_resp.c check_rkey notes): it touches no memory.
    let remote = req.remote.filter(|&(_, _, len)| len != 0 || req.atomic.is_some());
    // A memory window's key first translates to the key of the region it lies in, whose own
    // remote rights then do not matter (the window's do).
    let mut remote = remote;
    let mut via_window = false;
    if let Some((addr, rkey, len)) = remote {
        match dev.translate_window(addr, rkey, len, pd, needed, dev.qps[&target].qpn) {
            WindowAccess::Region(k) => {
                remote = Some((addr, k, len));
                via_window = true;
            }
            WindowAccess::NotAWindow => {}
            WindowAccess::Denied => return fail(dev, target, syndrome::REMOTE_ACCESS_ERR, event::QP_ACCESS_ERR),
        }
    }
    // An indirect (KSM) key first translates the range to the region and key of its entity.
    if let Some((addr, rkey, len)) = remote.filter(|_| !via_window) {
        match dev.translate_indirect(addr, rkey, len, pd, needed) {
            Some((a, k)) => remote = Some((a, k, len)),
            None => return fail(dev, target, syndrome::REMOTE_ACCESS_ERR, event::QP_ACCESS_ERR),
        }
    }
    // check_rkey: the key names a region of this PD that allows the access and holds the range.
    if let Some((addr, rkey, len)) = remote {
        let ok = dev
            .mr_by_key(rkey)
            .is_some_and(|mr| mr.pd == pd && (via_window || mr.access & needed == needed) && mr.covers(addr, len));
        let aligned = req.atomic.is_none() || (addr % 8 == 0 && len == 8);
        if !ok || !aligned {
            return fail(dev, target, syndrome::REMOTE_ACCESS_ERR, event::QP_ACCESS_ERR);
        }
    }
    // Send with invalidate: the R_Key it carries must name a type 2 window of this QP's PD
    // bound to this QP, which the message invalidates once it is placed (IBA's Send with
    // Invalidate; mlx5_ib enables it on type 2 windows only: `en_rinval` in
    // `mlx5_ib_alloc_mw`); any other key is an invalid request.
    let invalidate = if req.opcode == opcode::SEND_INVAL {
        let qpn = dev.qps[&target].qpn;
        match super::window::remotely_invalidated(dev, req.imm, pd, qpn) {
            Some(h) => Some(h),
            None => return fail(dev, target, syndrome::REMOTE_INVAL_REQ_ERR, event::QP_REQ_ERR),
        }
    } else {
        None
    };
    let needs_recv = matches!(
        req.opcode,
        opcode::SEND | opcode::SEND_IMM | opcode::SEND_INVAL | opcode::RDMA_WRITE_IMM
    );
    let recv = if needs_recv {
        match take_recv(dev, target) {
            Some(r) => Some(r),
            None => return Response::RnrNak(dev.qps[&target].min_rnr_timer),
        }
    } else {
        None
    };
    let ooo = out_of_order_packets(dev, target);
    let dma = &dev.dma;
    let mut reply = None;
    match req.opcode {
        opcode::RDMA_WRITE | opcode::RDMA_WRITE_IMM => {
            if let Some((addr, _, _)) = remote {
                match ooo {
                    Some(mtu) => place_out_of_order(dev, mtu, &[(addr, req.payload)]),
                    None => dma.write(addr, req.payload),
                }
            }
        }
        opcode::RDMA_READ => {
            if let Some((addr, _, len)) = remote {
                let mut data = vec![0u8; len as usize];
                dma.read(addr, &mut data);
                reply = Some(data);
            }
        }
        opcode::ATOMIC_CS | opcode::ATOMIC_FA => {
            if let (Some((addr, _, _)), Some((swap_add, compare))) = (remote, req.atomic) {
                let op = if req.opcode == opcode::ATOMIC_CS {
                    AtomicOp::CompareSwap(compare, swap_add)
                } else {
                    AtomicOp::FetchAdd(swap_add)
                };
                // The original value returns in host order too (requestor endianness mode).
                reply = Some(dma.atomic_u64(addr, op).to_ne_bytes().to_vec());
            }
        }
        _ => {}
    }
    if let Some(recv) = recv {
        let qp = &dev.qps[&target];
        let (uidx, qpn, cq) = (qp.uidx, qp.qpn, qp.recv_cq);
        let data: &[u8] = if req.opcode == opcode::RDMA_WRITE_IMM {
            &[]
        } else {
            req.payload
        };
        let mut cqe = Cqe {
            uidx,
            qpn,
            wqe_counter: recv.index,
            byte_cnt: req.payload.len() as u32,
            imm: req.imm,
            src_qp: req.src_qpn,
            grh: req.grh,
            slid: req.slid,
            ..Default::default()
        };
        cqe.opcode = match req.opcode {
            opcode::SEND => op::RESP_SEND,
            opcode::SEND_IMM => op::RESP_SEND_IMM,
            opcode::SEND_INVAL => op::RESP_SEND_INV,
            _ => op::RESP_WR_IMM,
        };
        if let Err(synd) = scatter(dev, pd, &recv.sges, data, ooo) {
            cqe.opcode = op::RESP_ERR;
            cqe.syndrome = synd;
            if let Some(cq) = cq {
                completer::post(dev, cq, &cqe);
            }
            let remote = if synd == syndrome::LOCAL_LENGTH_ERR {
                syndrome::REMOTE_INVAL_REQ_ERR
            } else {
                syndrome::REMOTE_OP_ERR
            };
            // The responder's error CQE reports it, so no affiliated async event (IBA 11.6.3.1:
            // those are for errors a completion cannot report); the RC QP still goes to ERR.
            if dev.qps.get(&target).is_some_and(|q| q.kind == QpKind::Rc) {
                dev.enter_error(target);
            }
            return Response::Nak(remote);
        }
        if let Some(w) = invalidate.and_then(|h| dev.mws.get_mut(&h)) {
            w.bound = None;
        }
        if let Some(cq) = cq {
            completer::post(dev, cq, &cqe);
        }
    }
    Response::Ack(reply)
}

/// A UD receive: a Q_Key mismatch or no posted receive drops the datagram silently (UD has
/// no RNR); the payload lands after the 40-byte GRH area, byte_cnt counts both.
fn receive_datagram(dev: &mut Device, target: u32, req: &Request<'_>) -> Response {
    let qp = &dev.qps[&target];
    if req.qkey != Some(qp.qkey) || !matches!(req.opcode, opcode::SEND | opcode::SEND_IMM) {
        return Response::Dropped;
    }
    let (pd, uidx, qpn, cq) = (qp.pd, qp.uidx, qp.qpn, qp.recv_cq);
    let Some(recv) = take_recv(dev, target) else {
        return Response::Dropped;
    };
    let mut data = vec![0u8; GRH_BYTES + req.payload.len()];
    data[GRH_BYTES..].copy_from_slice(req.payload);
    let mut cqe = Cqe {
        opcode: if req.opcode == opcode::SEND {
            op::RESP_SEND
        } else {
            op::RESP_SEND_IMM
        },
        uidx,
        qpn,
        wqe_counter: recv.index,
        byte_cnt: data.len() as u32,
        imm: req.imm,
        src_qp: req.src_qpn,
        grh: req.grh,
        slid: req.slid,
        ..Default::default()
    };
    if let Err(synd) = scatter(dev, pd, &recv.sges, &data, None) {
        cqe.opcode = op::RESP_ERR;
        cqe.syndrome = synd;
    }
    if let Some(cq) = cq {
        completer::post(dev, cq, &cqe);
    }
    Response::Ack(None)
}

/// A class C/D responder error (IBA 9.9.3): an RC responder QP goes to ERR and raises its
/// event; a DCT stays ready for other initiators (it keeps no per-initiator state to break).
fn fail(dev: &mut Device, target: u32, syndrome: u8, ev: u32) -> Response {
    if let Some(qp) = dev.qps.get(&target) {
        if qp.kind == QpKind::Rc {
            let e = AsyncEvent {
                element: qp.user_handle,
                event_type: ev,
            };
            dev.enter_error(target);
            dev.raise(e, Owner::Qp(target));
        }
    }
    Response::Nak(syndrome)
}

/// A receive WQE taken from an RQ or SRQ.
struct Recv {
    index: u16,
    sges: Vec<(u64, u32, u32)>,
}

/// Takes the next receive WQE of the target's SRQ or RQ (doorbell record counter vs taken).
fn take_recv(dev: &mut Device, target: u32) -> Option<Recv> {
    let dma = &dev.dma;
    let qp = dev.qps.get_mut(&target)?;
    if let Some(srq_h) = qp.srq {
        let srq = dev.srqs.get_mut(&srq_h)?;
        let posted = dma.read_be32(srq.db) & 0xffff;
        if posted == srq.taken & 0xffff {
            return None;
        }
        // A cyclic RMP is taken in ring order; a linked list along next_wqe_index.
        let index = if srq.cyclic {
            srq.taken & (srq.wqe_cnt - 1)
        } else {
            srq.head
        };
        let addr = srq.buf + (u64::from(index & (srq.wqe_cnt - 1)) << srq.wqe_shift);
        // struct mlx5_wqe_srq_next_seg: next_wqe_index at byte 2 links the free list.
        let mut next = [0u8; 2];
        dma.read(addr + layout::SRQ_NEXT_WQE_INDEX as u64, &mut next);
        let next = u32::from(u16::from_be_bytes(next));
        let sges = decode_recv(dma.as_ref(), addr, 1 << srq.wqe_shift, layout::SRQ_NEXT_SIZE as u32);
        srq.head = next;
        srq.taken = srq.taken.wrapping_add(1);
        // An armed SRQ limit fires once the posted receives drop below it, then disarms
        // (IBA 10.2.9.2, 11.6.3.2; ib_uverbs IB_EVENT_SRQ_LIMIT_REACHED).
        let left = posted.wrapping_sub(srq.taken) & 0xffff;
        let fired = (srq.limit > 0 && left < srq.limit).then_some(srq.user_handle);
        if fired.is_some() {
            srq.limit = 0;
        }
        if let Some(element) = fired {
            let ev = AsyncEvent {
                element,
                event_type: event::SRQ_LIMIT_REACHED,
            };
            dev.raise(ev, Owner::Srq(srq_h));
        }
        return Some(Recv {
            index: index as u16,
            sges,
        });
    }
    if qp.rq.cnt == 0 {
        return None;
    }
    let posted = dma.read_be32(qp.db) & 0xffff;
    if posted == qp.rq_ci & 0xffff {
        return None;
    }
    let index = qp.rq_ci;
    let sges = decode_recv(dma.as_ref(), qp.rq.entry(index), 1 << qp.rq.shift, 0);
    qp.rq_ci = qp.rq_ci.wrapping_add(1);
    Some(Recv {
        index: index as u16,
        sges,
    })
}

/// How long the device stalls after placing the packet that holds a message's last byte, when
/// it places the packets out of order: long enough that an application polling that byte for
/// arrival reads the earlier bytes before they land, on a loaded machine too.
const OOO_PLACEMENT_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// The packet size of `target`'s messages when it places their data out of order (`ooo_dp`:
/// mlx5_ib's dp_ordering_1, set through MLX5_IB_MODIFY_QP_OOO_DP), else None.
fn out_of_order_packets(dev: &Device, target: u32) -> Option<usize> {
    let qp = dev.qps.get(&target).filter(|q| q.ooo_dp)?;
    // enum ib_mtu: 1 = 256 bytes ... 5 = 4096 bytes.
    Some(128usize << qp.path_mtu.clamp(1, 5))
}

/// Out-of-order data placement, made visible: the message (`pieces`, destination address and
/// bytes, in message order) is cut into packets of `mtu` bytes, which land last packet first:
/// the one holding the final byte lands, the device stalls for [`OOO_PLACEMENT_PAUSE`], then
/// the others land from the back. With data-path ordering off (ConnectX-7 `dp_ordering_1`,
/// packets spread over paths) the PRM promises nothing about the order in which a message's
/// packets reach memory, only that the completion comes after all of them; the reverse order
/// is the one that catches an application polling its buffer's last byte for arrival.
fn place_out_of_order(dev: &Device, mtu: usize, pieces: &[(u64, &[u8])]) {
    let total: usize = pieces.iter().map(|(_, b)| b.len()).sum();
    let packets = total.div_ceil(mtu);
    for (n, p) in (0..packets).rev().enumerate() {
        let (start, end) = (p * mtu, ((p + 1) * mtu).min(total));
        let mut off = 0usize;
        for &(addr, bytes) in pieces {
            let (lo, hi) = (start.max(off), end.min(off + bytes.len()));
            if lo < hi {
                dev.dma.write(addr + (lo - off) as u64, &bytes[lo - off..hi - off]);
            }
            off += bytes.len();
        }
        if n == 0 && packets > 1 {
            crate::log(format_args!(
                "responder: out-of-order placement, last of {packets} packets placed first"
            ));
            std::thread::sleep(OOO_PLACEMENT_PAUSE);
        }
    }
}

/// Scatters `data` over receive SGEs (out of order with `ooo`, the packet size):
/// Err(LOCAL_LENGTH_ERR) when they are too short, Err(LOCAL_PROT_ERR) when an lkey does not
/// name a local-writable region of the PD.
fn scatter(dev: &Device, pd: u32, sges: &[(u64, u32, u32)], data: &[u8], ooo: Option<usize>) -> Result<(), u8> {
    let room: u64 = sges.iter().map(|&(_, l, _)| u64::from(l)).sum();
    if (data.len() as u64) > room {
        return Err(syndrome::LOCAL_LENGTH_ERR);
    }
    let mut off = 0usize;
    let mut pieces = Vec::new();
    for &(addr, len, lkey) in sges {
        if off == data.len() {
            break;
        }
        let n = (len as usize).min(data.len() - off);
        // An indirect (KSM) key names the region and address of its entity.
        let Some((addr, lkey)) = dev.translate_indirect(addr, lkey, n as u64, pd, ACCESS_LOCAL_WRITE) else {
            return Err(syndrome::LOCAL_PROT_ERR);
        };
        let ok = dev
            .mr_by_key(lkey)
            .is_some_and(|mr| mr.pd == pd && mr.access & ACCESS_LOCAL_WRITE != 0 && mr.covers(addr, n as u64));
        if !ok {
            return Err(syndrome::LOCAL_PROT_ERR);
        }
        match ooo {
            // In order, each SGE's bytes land as it is checked.
            None => dev.dma.write(addr, &data[off..off + n]),
            Some(_) => pieces.push((addr, &data[off..off + n])),
        }
        off += n;
    }
    if let Some(mtu) = ooo {
        place_out_of_order(dev, mtu, &pieces);
    }
    Ok(())
}
