//! One completion-queue entry of a direct CQ, decoded as libmlx5 (`providers/mlx5/cq.c`)
//! decodes it for an extended CQ: what `ibv_start_poll`/`ibv_next_poll` and the
//! `ibv_wc_read_*` entries report for the same bytes, which is what [`crate::Cq::poll`]
//! reports on the wr API.
//!
//! Only requester CQEs are decoded: a direct CQ serves the send queues of direct DCIs. Every
//! other entry is a [`Refused`] the poller reports, never a panic and never dropped.

use crate::cq::{Completion, WcOpcode, WcStatus};
use crate::error::Error;
use mlx5dv_raw as raw;

/// A requester CQE, decoded; `completion.wr_id` is still 0 (the CQE names the WQE index, the
/// send queue maps it to the caller's `wr_id`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Requester {
    /// The QP it completes (`sop_drop_qpn`, low 24 bits).
    pub(crate) qp_num: u32,
    /// The index of the WQE it completes.
    pub(crate) wqe_counter: u16,
    /// What libmlx5 would report, but the `wr_id`.
    pub(crate) completion: Completion,
}

/// An entry a direct CQ does not decode (consumed, then reported by the poll).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A responder CQE (a receive or a receive error): no QP with a receive queue may use a
    /// direct CQ.
    Receive { opcode: u8, qp_num: u32 },
    /// A requester CQE with data scattered into it (`MLX5_INLINE_SCATTER_*`) or in compressed
    /// format: the direct DCI is created without scatter-to-CQE and the CQ without compression.
    Format { op_own: u8, qp_num: u32 },
    /// A WQE opcode the direct writer never writes, whose completion opcode libmlx5 takes
    /// from state of its own (`wr_data`: UMR, SET_PSV, NOP, MMO).
    WqeOpcode { wqe_opcode: u8, qp_num: u32 },
    /// A CQE opcode that completes no request (resize, signature error, no packet, reserved).
    Opcode { opcode: u8 },
    /// A requester CQE whose QP and WQE index name no outstanding request of a direct QP on
    /// this CQ (a wr-API QP, a QP of another CQ, or one destroyed since).
    UnknownRequest { qp_num: u32, wqe_counter: u16 },
}

impl Refused {
    /// The error the poll reports (EPROTO: the entry does not belong on a direct CQ).
    pub(crate) fn error(self) -> Error {
        const OP: &str = "Cq::poll (direct)";
        let hint = match self {
            Refused::Receive { opcode, qp_num } => format!(
                "a responder CQE (opcode {opcode}) of QP {qp_num:#x}: a direct CQ serves only the send queues of direct DCIs, never a receive queue"
            ),
            Refused::Format { op_own, qp_num } => format!(
                "a CQE of QP {qp_num:#x} with op_own {op_own:#04x}: inline-scattered or compressed CQEs are not decoded (create the DCI without scatter-to-CQE)"
            ),
            Refused::WqeOpcode { wqe_opcode, qp_num } => format!(
                "a completion of WQE opcode {wqe_opcode:#04x} on QP {qp_num:#x}: the direct backend never writes that opcode"
            ),
            Refused::Opcode { opcode } => format!(
                "a CQE with opcode {opcode} (resize, signature error or reserved), which completes no request on a direct CQ"
            ),
            Refused::UnknownRequest { qp_num, wqe_counter } => format!(
                "a completion of QP {qp_num:#x}, WQE {wqe_counter}: no direct QP of this CQ has that request outstanding (only direct QPs may report to a direct CQ)"
            ),
        };
        Error::from_errno(OP, libc::EPROTO, hint)
    }
}

/// `mlx5_handle_error_cqe`: the status of an error CQE's syndrome.
pub(crate) fn status_of_syndrome(syndrome: u8) -> WcStatus {
    match u32::from(syndrome) {
        raw::MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR => WcStatus::LocLenErr,
        raw::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR => WcStatus::LocQpOpErr,
        raw::MLX5_CQE_SYNDROME_LOCAL_PROT_ERR => WcStatus::LocProtErr,
        raw::MLX5_CQE_SYNDROME_WR_FLUSH_ERR => WcStatus::WrFlushErr,
        raw::MLX5_CQE_SYNDROME_MW_BIND_ERR => WcStatus::MwBindErr,
        raw::MLX5_CQE_SYNDROME_BAD_RESP_ERR => WcStatus::BadRespErr,
        raw::MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR => WcStatus::LocAccessErr,
        raw::MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR => WcStatus::RemInvReqErr,
        raw::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR => WcStatus::RemAccessErr,
        raw::MLX5_CQE_SYNDROME_REMOTE_OP_ERR => WcStatus::RemOpErr,
        raw::MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR => WcStatus::RetryExcErr,
        raw::MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR => WcStatus::RnrRetryExcErr,
        raw::MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR => WcStatus::RemAbortErr,
        _ => WcStatus::GeneralErr,
    }
}

/// `mlx5_cq_read_wc_opcode` for a requester CQE: the completion opcode of the WQE opcode in
/// `sop_drop_qpn`'s top byte (one load from a table of every byte's answer).
#[inline(always)]
fn requester_opcode(wqe_opcode: u8, qp_num: u32) -> Result<WcOpcode, Refused> {
    REQUESTER_OPCODES[usize::from(wqe_opcode)].ok_or(Refused::WqeOpcode { wqe_opcode, qp_num })
}

/// [`requester_opcode`]'s answer for each WQE opcode byte; None for a refused one.
static REQUESTER_OPCODES: [Option<WcOpcode>; 256] = {
    let mut table = [None; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = requester_opcode_of(i as u32);
        i += 1;
    }
    table
};

/// The completion opcode of WQE opcode `wqe_opcode` (None: UMR, SET_PSV, NOP or MMO, whose
/// completion opcode libmlx5 takes from state of its own, `wr_data`).
const fn requester_opcode_of(wqe_opcode: u32) -> Option<WcOpcode> {
    Some(match wqe_opcode {
        raw::MLX5_OPCODE_RDMA_WRITE_IMM | raw::MLX5_OPCODE_RDMA_WRITE => WcOpcode::RdmaWrite,
        raw::MLX5_OPCODE_SEND_IMM | raw::MLX5_OPCODE_SEND | raw::MLX5_OPCODE_SEND_INVAL => WcOpcode::Send,
        raw::MLX5_OPCODE_RDMA_READ => WcOpcode::RdmaRead,
        raw::MLX5_OPCODE_ATOMIC_CS => WcOpcode::CompSwap,
        raw::MLX5_OPCODE_ATOMIC_FA => WcOpcode::FetchAdd,
        raw::MLX5_OPCODE_TSO => WcOpcode::Other(raw::IBV_WC_TSO),
        raw::MLX5_OPCODE_UMR | raw::MLX5_OPCODE_SET_PSV | raw::MLX5_OPCODE_NOP | raw::MLX5_OPCODE_MMO => return None,
        // libmlx5 returns 0 (IBV_WC_SEND; "un-expected opcode in cqe", a debug message only).
        _ => WcOpcode::Send,
    })
}

/// op_own's bits of a CQE with data scattered into it (refused: see [`Refused::Format`]).
const SCATTER: u8 = (raw::MLX5_INLINE_SCATTER_32 | raw::MLX5_INLINE_SCATTER_64) as u8;

/// Decodes one CQE that the ring reader found owned by software.
///
/// What it reports, field by field, is what the crate reads from libmlx5's extended CQ for
/// the same bytes: on success the opcode from the WQE opcode, `byte_len` = `byte_cnt` (the
/// extended CQ's `read_byte_len` does not substitute 8 for atomics as `ibv_poll_cq` does),
/// no immediate (libmlx5 flags one only on responder CQEs), `src_qp` and the GRH flag from
/// `flags_rqpn`; on error the status from the syndrome and the vendor syndrome.
#[inline(always)]
pub(crate) fn decode(cqe: &raw::mlx5_cqe64) -> Result<Requester, Refused> {
    let opcode = raw::mlx5dv_get_cqe_opcode(cqe);
    let sop_drop_qpn = u32::from_be(cqe.sop_drop_qpn);
    let qp_num = sop_drop_qpn & 0xff_ffff;
    let wqe_counter = u16::from_be(cqe.wqe_counter);
    // The requester's two opcodes tested first, one at a time (a jump table costs more).
    if u32::from(opcode) == raw::MLX5_CQE_REQ {
        if cqe.op_own & SCATTER != 0 {
            return Err(Refused::Format {
                op_own: cqe.op_own,
                qp_num,
            });
        }
        let opcode = requester_opcode((sop_drop_qpn >> 24) as u8, qp_num)?;
        return Ok(succeeded(cqe, sop_drop_qpn, opcode));
    }
    if u32::from(opcode) == raw::MLX5_CQE_REQ_ERR {
        let err = as_err_cqe(cqe);
        return Ok(Requester {
            qp_num,
            wqe_counter,
            completion: Completion {
                wr_id: 0,
                status: status_of_syndrome(err.syndrome),
                qp_num,
                vendor_err: u32::from(err.vendor_err_synd),
                ..Completion::default()
            },
        });
    }
    Err(refuse_opcode(opcode, qp_num))
}

/// [`decode`]'s common case alone: a successful requester CQE, decoded as [`decode`] decodes
/// it; None for any other entry (which [`decode`] then tells apart). The direct poll's first
/// try: it tests the opcode, the scatter bits and the WQE opcode in one go.
#[inline(always)]
pub(crate) fn decode_success(cqe: &raw::mlx5_cqe64) -> Option<Requester> {
    if u32::from(raw::mlx5dv_get_cqe_opcode(cqe)) != raw::MLX5_CQE_REQ || cqe.op_own & SCATTER != 0 {
        return None;
    }
    let sop_drop_qpn = u32::from_be(cqe.sop_drop_qpn);
    let opcode = REQUESTER_OPCODES[(sop_drop_qpn >> 24) as usize]?;
    Some(succeeded(cqe, sop_drop_qpn, opcode))
}

/// A successful requester CQE (opcode REQ, no scatter bits) whose WQE opcode completes as
/// `opcode`; `sop_drop_qpn` in host order.
#[inline(always)]
fn succeeded(cqe: &raw::mlx5_cqe64, sop_drop_qpn: u32, opcode: WcOpcode) -> Requester {
    let qp_num = sop_drop_qpn & 0xff_ffff;
    let flags_rqpn = u32::from_be(cqe.flags_rqpn);
    Requester {
        qp_num,
        wqe_counter: u16::from_be(cqe.wqe_counter),
        completion: Completion {
            wr_id: 0,
            status: WcStatus::Success,
            opcode: Some(opcode),
            byte_len: u32::from_be(cqe.byte_cnt),
            imm: None,
            qp_num,
            src_qp: flags_rqpn & 0xff_ffff,
            wc_flags: if (flags_rqpn >> 28) & 3 != 0 {
                raw::IBV_WC_GRH
            } else {
                0
            },
            vendor_err: 0,
        },
    }
}

/// Why an entry that is no requester completion is refused.
#[cold]
#[inline(never)]
fn refuse_opcode(opcode: u8, qp_num: u32) -> Refused {
    match u32::from(opcode) {
        raw::MLX5_CQE_RESP_WR_IMM
        | raw::MLX5_CQE_RESP_SEND
        | raw::MLX5_CQE_RESP_SEND_IMM
        | raw::MLX5_CQE_RESP_SEND_INV
        | raw::MLX5_CQE_RESP_ERR => Refused::Receive { opcode, qp_num },
        _ => Refused::Opcode { opcode },
    }
}

/// The error view of a CQE (`(struct mlx5_err_cqe *)cqe64` in C).
#[inline(always)]
fn as_err_cqe(cqe: &raw::mlx5_cqe64) -> raw::mlx5_err_cqe {
    const _: () = assert!(std::mem::size_of::<raw::mlx5_cqe64>() == std::mem::size_of::<raw::mlx5_err_cqe>());
    // SAFETY: both are 64-byte plain-integer structs (any bit pattern is valid), and
    // mlx5_err_cqe's alignment (4) is below mlx5_cqe64's (8).
    unsafe { std::ptr::read((cqe as *const raw::mlx5_cqe64).cast::<raw::mlx5_err_cqe>()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::direct::cq_ring::tests::{cqe, err_cqe};

    #[test]
    fn each_requester_wqe_opcode_reports_libmlx5s_completion_opcode() {
        let cases = [
            (raw::MLX5_OPCODE_SEND, WcOpcode::Send),
            (raw::MLX5_OPCODE_SEND_IMM, WcOpcode::Send),
            (raw::MLX5_OPCODE_SEND_INVAL, WcOpcode::Send),
            (raw::MLX5_OPCODE_RDMA_WRITE, WcOpcode::RdmaWrite),
            (raw::MLX5_OPCODE_RDMA_WRITE_IMM, WcOpcode::RdmaWrite),
            (raw::MLX5_OPCODE_RDMA_READ, WcOpcode::RdmaRead),
            (raw::MLX5_OPCODE_ATOMIC_CS, WcOpcode::CompSwap),
            (raw::MLX5_OPCODE_ATOMIC_FA, WcOpcode::FetchAdd),
            (raw::MLX5_OPCODE_TSO, WcOpcode::Other(raw::IBV_WC_TSO)),
            (raw::MLX5_OPCODE_ATOMIC_MASKED_FA, WcOpcode::Send),
        ];
        for (wqe_op, want) in cases {
            let mut c = cqe(raw::MLX5_CQE_REQ, wqe_op, 0x1234, 7);
            c.byte_cnt = 8u32.to_be();
            let r = decode(&c).expect("a requester CQE");
            assert_eq!((r.qp_num, r.wqe_counter), (0x1234, 7));
            assert_eq!(r.completion.opcode, Some(want), "WQE opcode {wqe_op:#x}");
            assert_eq!(r.completion.status, WcStatus::Success);
            assert_eq!(r.completion.byte_len, 8);
            assert_eq!(r.completion.imm, None, "libmlx5 flags no immediate on a requester CQE");
        }
    }

    #[test]
    fn each_syndrome_maps_as_mlx5_handle_error_cqe_and_keeps_the_vendor_syndrome() {
        let cases = [
            (raw::MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, WcStatus::LocLenErr),
            (raw::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, WcStatus::LocQpOpErr),
            (raw::MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, WcStatus::LocProtErr),
            (raw::MLX5_CQE_SYNDROME_WR_FLUSH_ERR, WcStatus::WrFlushErr),
            (raw::MLX5_CQE_SYNDROME_MW_BIND_ERR, WcStatus::MwBindErr),
            (raw::MLX5_CQE_SYNDROME_BAD_RESP_ERR, WcStatus::BadRespErr),
            (raw::MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR, WcStatus::LocAccessErr),
            (raw::MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, WcStatus::RemInvReqErr),
            (raw::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, WcStatus::RemAccessErr),
            (raw::MLX5_CQE_SYNDROME_REMOTE_OP_ERR, WcStatus::RemOpErr),
            (raw::MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, WcStatus::RetryExcErr),
            (raw::MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR, WcStatus::RnrRetryExcErr),
            (raw::MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR, WcStatus::RemAbortErr),
            (0x7f, WcStatus::GeneralErr),
        ];
        for (syndrome, want) in cases {
            let r = decode(&err_cqe(syndrome, 0x93, 0x55, 3)).expect("a requester error");
            assert_eq!(r.completion.status, want, "syndrome {syndrome:#x}");
            assert_eq!(r.completion.vendor_err, 0x93);
            assert_eq!((r.completion.qp_num, r.wqe_counter), (0x55, 3));
            assert_eq!(r.completion.opcode, None);
        }
    }

    #[test]
    fn receives_scattered_cqes_and_other_opcodes_are_refused_not_decoded() {
        for op in [
            raw::MLX5_CQE_RESP_SEND,
            raw::MLX5_CQE_RESP_SEND_IMM,
            raw::MLX5_CQE_RESP_WR_IMM,
            raw::MLX5_CQE_RESP_SEND_INV,
            raw::MLX5_CQE_RESP_ERR,
        ] {
            assert_eq!(
                decode(&cqe(op, 0, 9, 0)),
                Err(Refused::Receive {
                    opcode: op as u8,
                    qp_num: 9
                })
            );
        }
        for op in [
            raw::MLX5_CQE_RESIZE_CQ,
            raw::MLX5_CQE_SIG_ERR,
            raw::MLX5_CQE_NO_PACKET,
            8,
        ] {
            assert_eq!(decode(&cqe(op, 0, 9, 0)), Err(Refused::Opcode { opcode: op as u8 }));
        }
        let mut scattered = cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_RDMA_READ, 9, 0);
        scattered.op_own |= raw::MLX5_INLINE_SCATTER_32 as u8;
        assert!(matches!(decode(&scattered), Err(Refused::Format { .. })));
        let nop = cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_NOP, 9, 0);
        assert!(matches!(decode(&nop), Err(Refused::WqeOpcode { wqe_opcode: 0, .. })));
        let text = Refused::Receive { opcode: 2, qp_num: 9 }.error().to_string();
        assert!(text.contains("responder") && text.contains("0x9"), "{text}");
    }

    #[test]
    fn the_grh_flag_and_source_qp_come_from_flags_rqpn() {
        let mut c = cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_SEND, 1, 0);
        c.flags_rqpn = (1u32 << 28 | 0xabcdef).to_be();
        let r = decode(&c).unwrap().completion;
        assert_eq!((r.wc_flags, r.src_qp), (raw::IBV_WC_GRH, 0xabcdef));
    }
}
