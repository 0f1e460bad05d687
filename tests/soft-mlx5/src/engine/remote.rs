//! Requests that cross to another process's device over the fabric ([`crate::fabric`]): the
//! requester's side (send, then wait for the answer without holding up other queues) and the
//! responder's side (execute a request that arrived, answer it).

use super::requester::ReqState;
use super::responder::{self, Response};
use crate::device::Device;
use crate::fabric::message::{self, Message, Target};
use crate::fabric::Delivery;
use std::time::{Duration, Instant};

/// How often a requester still waiting checks that its peer lives.
const PROBE_EVERY: Duration = Duration::from_millis(20);

/// A request on the wire to another process, awaiting its answer.
#[derive(Debug)]
pub struct Awaiting {
    /// Matches the answer.
    pub seq: u64,
    /// The peer's socket address.
    pub peer: Vec<u8>,
    /// When the request left: its local ACK timer runs from here.
    pub sent: Instant,
    /// When the peer was last known alive.
    pub checked: Instant,
    /// Nobody listens at the peer's address: the request is lost.
    pub lost: bool,
}

/// Sends a request to the device in `slot` of `node`. With `await_answer` it returns what
/// the requester waits on; a peer nobody listens at loses the request.
pub fn send(
    dev: &mut Device,
    node: u32,
    slot: u32,
    target: Target,
    req: &responder::Request<'_>,
    await_answer: bool,
) -> Option<Awaiting> {
    let fabric = dev.fabric.as_mut()?;
    let seq = if await_answer { fabric.next_seq() } else { 0 };
    let peer = fabric.peer(node, slot);
    let delivery = fabric.send(&peer, &message::encode_request(seq, target, req));
    await_answer.then(|| Awaiting {
        seq,
        peer,
        sent: Instant::now(),
        checked: Instant::now(),
        lost: delivery != Delivery::Sent,
    })
}

/// Serves the fabric: sends what waits, executes the requests that arrived and answers them,
/// hands answers to their requesters, and declares lost the requests whose peer died. True
/// when anything moved.
pub fn poll(dev: &mut Device) -> bool {
    let Some(fabric) = dev.fabric.as_mut() else {
        return false;
    };
    fabric.flush();
    let arrived = fabric.receive();
    let moved = !arrived.is_empty();
    for (from, bytes) in arrived {
        match message::decode(&bytes) {
            Some(Message::Request { seq, packet }) => {
                let response = serve(dev, &packet);
                if let (true, Some(fabric)) = (seq != 0, dev.fabric.as_mut()) {
                    if fabric.send(&from, &message::encode_answer(seq, &response)) == Delivery::Faulted {
                        // The answer is lost on the wire: the requester hears nothing, and its
                        // local ACK timer, which runs from when its request left, expires.
                        // Told so, it waits out that timer (IBA 9.7.6.1.3) instead of taking
                        // the emulator's own slowness for a loss.
                        fabric.send_past_faults(&from, &message::encode_answer(seq, &Response::Dropped));
                    }
                }
            }
            Some(Message::Answer { seq, response }) => {
                // The requester QP the answer's sequence number names (Device::remote_seqs);
                // an answer to a request that went away (retried, flushed, reset) finds none.
                let Some(h) = dev.remote_seqs.remove(&seq) else {
                    continue;
                };
                let Some(qp) = dev.qps.get_mut(&h) else {
                    continue;
                };
                if let Some(answer) = qp.outstanding.iter_mut().find_map(|o| awaiting(o, seq)) {
                    *answer = Some(response);
                }
            }
            None => crate::log(format_args!(
                "fabric: a message from {} did not parse",
                String::from_utf8_lossy(&from)
            )),
        }
    }
    check_peers(dev);
    moved
}

/// Executes a request that arrived over the fabric, unless it duplicates one already
/// executed ([`responder::respond_in_order`]).
fn serve(dev: &mut Device, packet: &message::Packet) -> Response {
    let t = packet.target;
    let key = (t.origin, t.epoch, t.channel);
    responder::respond_in_order(dev, key, t.psn, t.first, packet.opcode, |dev| {
        match responder::accept(dev, t.kind, t.dqpn, t.key, packet.src_qpn, packet.slid) {
            Some(th) => responder::respond(dev, th, &packet.request()),
            None => {
                responder::count_key_violation(dev, t.kind, t.dqpn, t.key);
                Response::Dropped
            }
        }
    })
}

/// The answer slot of `o` when it is the request on the wire numbered `seq` whose answer has
/// not come.
fn awaiting(o: &mut super::requester::Outstanding, seq: u64) -> Option<&mut Option<Response>> {
    match &mut o.state {
        ReqState::Sent {
            answer: answer @ None,
            remote: Some(a),
            ..
        } if a.seq == seq => Some(answer),
        _ => None,
    }
}

/// A requester whose peer no longer listens gets "dropped" as its answer: it times out and
/// retries as on a wire where the peer vanished. Only the requests awaiting an answer are
/// looked at ([`Device::remote_seqs`]); an entry whose request went away is dropped here.
fn check_peers(dev: &mut Device) {
    let Device {
        fabric,
        qps,
        remote_seqs,
        ..
    } = dev;
    let Some(fabric) = fabric.as_ref() else {
        return;
    };
    let now = Instant::now();
    remote_seqs.retain(|&seq, h| {
        let Some(qp) = qps.get_mut(h) else {
            return false;
        };
        let Some(o) = qp.outstanding.iter_mut().find(|o| awaiting_ref(o, seq)) else {
            return false;
        };
        let ReqState::Sent {
            answer,
            remote: Some(a),
            ..
        } = &mut o.state
        else {
            return false;
        };
        if now.duration_since(a.checked) >= PROBE_EVERY {
            if fabric.alive(&a.peer) {
                a.checked = now;
            } else {
                crate::log(format_args!("fabric: peer {} gone", String::from_utf8_lossy(&a.peer)));
                *answer = Some(Response::Dropped);
                return false;
            }
        }
        true
    });
}

/// Whether `o` is the request on the wire numbered `seq` whose answer has not come.
fn awaiting_ref(o: &super::requester::Outstanding, seq: u64) -> bool {
    matches!(&o.state, ReqState::Sent { answer: None, remote: Some(a), .. } if a.seq == seq)
}
