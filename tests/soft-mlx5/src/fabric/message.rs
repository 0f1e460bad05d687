//! What travels between devices: a request packet for a QP of another process, and its
//! answer. Little-endian fields in a fixed order; a message that does not parse is dropped,
//! as a corrupt packet is.

use crate::device::objects::QpKind;
use crate::engine::headers::Headers;
use crate::engine::responder::{Request, Response};

/// Where a request goes, as the requester's headers name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// Destination QP (or DCT) number.
    pub dqpn: u32,
    /// The requester's transport (an RC request reaches only an RC QP, a DC one a DCT).
    pub kind: QpKind,
    /// The DC access key (DC), Q_Key word of the address vector (UD); 0 for RC.
    pub key: u64,
    /// The requester device's incarnation ([`crate::fabric::Fabric::origin`]).
    pub origin: u64,
    /// The requester QP's incarnation ([`crate::device::objects::Wire::epoch`]).
    pub epoch: u64,
    /// The requester's channel (DCI stream channel, else 0): one connection per channel.
    pub channel: u16,
    /// The request's sequence number in its connection, the same on every retry of it (0:
    /// none, UD and UC).
    pub psn: u64,
    /// The request opens a connection (a DCI's first request to this target).
    pub first: bool,
}

/// A request with its payload owned (as it arrives off the wire).
#[derive(Debug, PartialEq, Eq)]
pub struct Packet {
    /// Where it goes.
    pub target: Target,
    /// Requester's QP number.
    pub src_qpn: u32,
    /// Requester's LID.
    pub slid: u16,
    /// GRH present.
    pub grh: bool,
    /// MLX5_OPCODE_*.
    pub opcode: u8,
    /// Immediate.
    pub imm: u32,
    /// Remote address, rkey and length.
    pub remote: Option<(u64, u32, u64)>,
    /// Atomic operands.
    pub atomic: Option<(u64, u64)>,
    /// UD Q_Key.
    pub qkey: Option<u32>,
    /// The path fields of its headers.
    pub headers: Headers,
    /// Payload.
    pub payload: Vec<u8>,
}

impl Packet {
    /// The responder's view.
    pub fn request(&self) -> Request<'_> {
        Request {
            src_qpn: self.src_qpn,
            slid: self.slid,
            grh: self.grh,
            opcode: self.opcode,
            imm: self.imm,
            payload: &self.payload,
            remote: self.remote,
            atomic: self.atomic,
            qkey: self.qkey,
            headers: self.headers,
        }
    }
}

/// One message.
#[derive(Debug, PartialEq, Eq)]
pub enum Message {
    /// A request; `seq` 0 asks for no answer (UD).
    Request {
        /// Matches the answer to the waiting requester.
        seq: u64,
        /// The packet.
        packet: Packet,
    },
    /// The responder's answer to request `seq`.
    Answer {
        /// The request's sequence number.
        seq: u64,
        /// What came back.
        response: Response,
    },
}

fn kind_code(k: QpKind) -> u8 {
    match k {
        QpKind::Rc => 0,
        QpKind::Ud => 1,
        QpKind::Dci => 2,
        QpKind::Dct => 3,
        QpKind::Uc => 4,
    }
}

fn kind_of(c: u8) -> Option<QpKind> {
    Some(match c {
        0 => QpKind::Rc,
        1 => QpKind::Ud,
        2 => QpKind::Dci,
        3 => QpKind::Dct,
        4 => QpKind::Uc,
        _ => return None,
    })
}

/// Encodes a request from the requester's view of it.
pub fn encode_request(seq: u64, target: Target, req: &Request<'_>) -> Vec<u8> {
    let mut w = Vec::with_capacity(96 + req.payload.len());
    w.push(1);
    w.extend_from_slice(&seq.to_le_bytes());
    w.extend_from_slice(&target.dqpn.to_le_bytes());
    w.push(kind_code(target.kind));
    w.extend_from_slice(&target.key.to_le_bytes());
    w.extend_from_slice(&target.origin.to_le_bytes());
    w.extend_from_slice(&target.epoch.to_le_bytes());
    w.extend_from_slice(&target.channel.to_le_bytes());
    w.extend_from_slice(&target.psn.to_le_bytes());
    w.push(u8::from(target.first));
    w.extend_from_slice(&req.src_qpn.to_le_bytes());
    w.extend_from_slice(&req.slid.to_le_bytes());
    w.push(u8::from(req.grh));
    w.push(req.opcode);
    w.extend_from_slice(&req.imm.to_le_bytes());
    let (a, k, l) = req.remote.unwrap_or_default();
    w.push(u8::from(req.remote.is_some()));
    w.extend_from_slice(&a.to_le_bytes());
    w.extend_from_slice(&k.to_le_bytes());
    w.extend_from_slice(&l.to_le_bytes());
    let (x, y) = req.atomic.unwrap_or_default();
    w.push(u8::from(req.atomic.is_some()));
    w.extend_from_slice(&x.to_le_bytes());
    w.extend_from_slice(&y.to_le_bytes());
    w.push(u8::from(req.qkey.is_some()));
    w.extend_from_slice(&req.qkey.unwrap_or_default().to_le_bytes());
    let h = &req.headers;
    w.extend_from_slice(&[h.sl, h.tclass, h.hop_limit]);
    w.extend_from_slice(&h.flow_label.to_le_bytes());
    w.extend_from_slice(&h.pkey.to_le_bytes());
    w.extend_from_slice(req.payload);
    w
}

/// Encodes an answer.
pub fn encode_answer(seq: u64, response: &Response) -> Vec<u8> {
    let mut w = vec![2];
    w.extend_from_slice(&seq.to_le_bytes());
    match response {
        Response::Ack(None) => w.push(0),
        Response::Ack(Some(data)) => {
            w.push(1);
            w.extend_from_slice(data);
        }
        Response::RnrNak(t) => w.extend_from_slice(&[2, *t]),
        Response::Nak(s) => w.extend_from_slice(&[3, *s]),
        Response::Dropped => w.push(4),
        Response::OutOfSequence => w.push(5),
    }
    w
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
    fn flag(&mut self) -> Option<bool> {
        self.u8().map(|b| b != 0)
    }
}

/// Decodes one message; None when it does not parse.
pub fn decode(bytes: &[u8]) -> Option<Message> {
    let mut r = Reader(bytes);
    let tag = r.u8()?;
    let seq = r.u64()?;
    match tag {
        1 => {
            let target = Target {
                dqpn: r.u32()?,
                kind: kind_of(r.u8()?)?,
                key: r.u64()?,
                origin: r.u64()?,
                epoch: r.u64()?,
                channel: r.u16()?,
                psn: r.u64()?,
                first: r.flag()?,
            };
            let (src_qpn, slid, grh, opcode, imm) = (r.u32()?, r.u16()?, r.flag()?, r.u8()?, r.u32()?);
            let has_remote = r.flag()?;
            let remote = (r.u64()?, r.u32()?, r.u64()?);
            let has_atomic = r.flag()?;
            let atomic = (r.u64()?, r.u64()?);
            let has_qkey = r.flag()?;
            let qkey = r.u32()?;
            let headers = Headers {
                sl: r.u8()?,
                tclass: r.u8()?,
                hop_limit: r.u8()?,
                flow_label: r.u32()?,
                pkey: r.u16()?,
            };
            Some(Message::Request {
                seq,
                packet: Packet {
                    target,
                    src_qpn,
                    slid,
                    grh,
                    opcode,
                    imm,
                    remote: has_remote.then_some(remote),
                    atomic: has_atomic.then_some(atomic),
                    qkey: has_qkey.then_some(qkey),
                    headers,
                    payload: r.0.to_vec(),
                },
            })
        }
        2 => {
            let response = match r.u8()? {
                0 => Response::Ack(None),
                1 => Response::Ack(Some(r.0.to_vec())),
                2 => Response::RnrNak(r.u8()?),
                3 => Response::Nak(r.u8()?),
                4 => Response::Dropped,
                5 => Response::OutOfSequence,
                _ => return None,
            };
            Some(Message::Answer { seq, response })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_survives_encoding_with_every_optional_field() {
        let payload = [7u8; 100];
        let req = Request {
            src_qpn: 0x4101,
            slid: 3,
            grh: true,
            opcode: 0x11,
            imm: 0xdead_beef,
            payload: &payload,
            remote: Some((0x1000, 0x4242, 8)),
            atomic: Some((1, 2)),
            qkey: None,
            headers: Headers {
                sl: 5,
                tclass: 0x68,
                hop_limit: 64,
                flow_label: 0xabcde,
                pkey: 0x8001,
            },
        };
        let target = Target {
            dqpn: 0x8100,
            kind: QpKind::Dci,
            key: 0x1234_5678_9abc_def0,
            origin: 0x77,
            epoch: 5,
            channel: 3,
            psn: 41,
            first: true,
        };
        let Some(Message::Request { seq, packet }) = decode(&encode_request(9, target, &req)) else {
            panic!("request did not decode");
        };
        assert_eq!(seq, 9);
        assert_eq!(packet.target, target);
        let back = packet.request();
        assert_eq!(format!("{back:?}"), format!("{req:?}"));
    }

    #[test]
    fn every_answer_survives_encoding_and_a_truncated_one_is_dropped() {
        for r in [
            Response::Ack(None),
            Response::Ack(Some(vec![1, 2, 3])),
            Response::RnrNak(12),
            Response::Nak(0x13),
            Response::Dropped,
            Response::OutOfSequence,
        ] {
            let bytes = encode_answer(5, &r);
            assert_eq!(decode(&bytes), Some(Message::Answer { seq: 5, response: r }));
        }
        assert_eq!(decode(&encode_answer(5, &Response::Nak(1))[..9]), None);
    }
}
