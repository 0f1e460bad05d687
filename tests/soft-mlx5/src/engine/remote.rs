//! Requests that cross to another process's device over the fabric ([`crate::fabric`]): the
//! requester's side (send, then wait for the answer without holding up other queues) and the
//! responder's side (execute a request that arrived, answer it).

use super::responder::{self, Response};
use crate::device::objects::Qp;
use crate::device::Device;
use crate::fabric::message::{self, Message, Target};
use crate::fabric::Delivery;
use std::time::{Duration, Instant};

/// How often a requester still waiting checks that its peer lives.
const PROBE_EVERY: Duration = Duration::from_millis(20);

/// A send queue whose head request went to another process.
#[derive(Debug)]
pub struct Awaiting {
    /// Matches the answer.
    pub seq: u64,
    /// The peer's socket address.
    pub peer: Vec<u8>,
    /// When the peer was last known alive.
    pub checked: Instant,
    /// The answer, once it is in.
    pub answer: Option<Response>,
}

/// Whether QP `qp` waits for an answer that has not come.
pub fn awaiting(qp: &Qp) -> bool {
    qp.remote.as_ref().is_some_and(|a| a.answer.is_none())
}

/// The answer for QP `h`'s head request, if it came.
pub fn take_answer(dev: &mut Device, h: u32) -> Option<Response> {
    let qp = dev.qps.get_mut(&h)?;
    if qp.remote.as_ref()?.answer.is_some() {
        return qp.remote.take()?.answer;
    }
    None
}

/// Sends QP `h`'s request to the device in `slot` of `node`. With `await_answer` the QP waits
/// for the answer; a peer nobody listens at loses the request (answer: dropped).
pub fn send(
    dev: &mut Device,
    h: u32,
    node: u32,
    slot: u32,
    target: Target,
    req: &responder::Request<'_>,
    await_answer: bool,
) {
    let Some(fabric) = dev.fabric.as_mut() else {
        return;
    };
    let seq = if await_answer { fabric.next_seq() } else { 0 };
    let peer = fabric.peer(node, slot);
    let delivery = fabric.send(&peer, &message::encode_request(seq, target, req));
    if let (true, Some(qp)) = (await_answer, dev.qps.get_mut(&h)) {
        qp.remote = Some(Awaiting {
            seq,
            peer,
            checked: Instant::now(),
            answer: (delivery == Delivery::Lost).then_some(Response::Dropped),
        });
    }
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
                let t = packet.target;
                let response = match responder::accept(dev, t.kind, t.dqpn, t.key, packet.src_qpn) {
                    Some(th) => responder::respond(dev, th, &packet.request()),
                    None => Response::Dropped,
                };
                if let (true, Some(fabric)) = (seq != 0, dev.fabric.as_mut()) {
                    fabric.send(&from, &message::encode_answer(seq, &response));
                }
            }
            Some(Message::Answer { seq, response }) => {
                let waiting = dev.qps.values_mut().filter_map(|q| q.remote.as_mut());
                if let Some(a) = waiting.into_iter().find(|a| a.seq == seq && a.answer.is_none()) {
                    a.answer = Some(response);
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

/// A requester whose peer no longer listens gets "dropped" as its answer: it times out and
/// retries as on a wire where the peer vanished.
fn check_peers(dev: &mut Device) {
    let Device { fabric, qps, .. } = dev;
    let Some(fabric) = fabric.as_ref() else {
        return;
    };
    let now = Instant::now();
    for a in qps.values_mut().filter_map(|q| q.remote.as_mut()) {
        if a.answer.is_none() && now.duration_since(a.checked) >= PROBE_EVERY {
            if fabric.alive(&a.peer) {
                a.checked = now;
            } else {
                crate::log(format_args!("fabric: peer {} gone", String::from_utf8_lossy(&a.peer)));
                a.answer = Some(Response::Dropped);
            }
        }
    }
}
