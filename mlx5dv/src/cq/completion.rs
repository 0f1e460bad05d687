//! Typed completions: status, opcode, and what one completion reports.

use mlx5dv_raw as raw;
use std::ffi::CStr;

/// Status of a completion (`enum ibv_wc_status`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WcStatus {
    /// Success.
    Success,
    /// Local length error.
    LocLenErr,
    /// Local QP operation error.
    LocQpOpErr,
    /// Local EE context operation error.
    LocEecOpErr,
    /// Local protection error (lkey or bounds).
    LocProtErr,
    /// Flushed: the QP went to the error state before this work request ran.
    WrFlushErr,
    /// Memory window bind error.
    MwBindErr,
    /// Bad response.
    BadRespErr,
    /// Local access error.
    LocAccessErr,
    /// Remote invalid request.
    RemInvReqErr,
    /// Remote access error (rkey, bounds or rights on the peer).
    RemAccessErr,
    /// Remote operation error.
    RemOpErr,
    /// Transport retries exhausted: the peer did not acknowledge within the ACK timeout times
    /// `retry_cnt + 1` (about 540 ms with [`RtsAttr::default`](crate::RtsAttr)). On DC this is
    /// what a dead peer (a process, DCT or port that is gone) *and* a wrong DC key look like:
    /// a DCT drops a request with the wrong key without answering, and counts it in
    /// [`DctContext::key_violations`](crate::DctContext::key_violations) (read at the target with
    /// [`Dct::query_context`](crate::Dct::query_context)); the target sees nothing else.
    RetryExcErr,
    /// RNR retries exhausted (no receive posted on the peer).
    RnrRetryExcErr,
    /// Local RDD violation.
    LocRddViolErr,
    /// Remote invalid RD request.
    RemInvRdReqErr,
    /// Remote aborted.
    RemAbortErr,
    /// Invalid EE context number.
    InvEecnErr,
    /// Invalid EE context state.
    InvEecStateErr,
    /// Fatal error.
    FatalErr,
    /// Response timeout.
    RespTimeoutErr,
    /// General error.
    GeneralErr,
    /// Tag matching error.
    TmErr,
    /// Tag matching rendezvous incomplete.
    TmRndvIncomplete,
    /// A value this crate does not know.
    Unknown(u32),
}

/// Every known status, in `enum ibv_wc_status` order.
const ALL_STATUS: [WcStatus; 24] = {
    use WcStatus::*;
    [
        Success,
        LocLenErr,
        LocQpOpErr,
        LocEecOpErr,
        LocProtErr,
        WrFlushErr,
        MwBindErr,
        BadRespErr,
        LocAccessErr,
        RemInvReqErr,
        RemAccessErr,
        RemOpErr,
        RetryExcErr,
        RnrRetryExcErr,
        LocRddViolErr,
        RemInvRdReqErr,
        RemAbortErr,
        InvEecnErr,
        InvEecStateErr,
        FatalErr,
        RespTimeoutErr,
        GeneralErr,
        TmErr,
        TmRndvIncomplete,
    ]
};

impl WcStatus {
    /// From the library's value.
    pub fn from_raw(v: raw::ibv_wc_status) -> WcStatus {
        ALL_STATUS.get(v as usize).copied().unwrap_or(WcStatus::Unknown(v))
    }

    /// The library's value.
    pub fn to_raw(self) -> raw::ibv_wc_status {
        match self {
            WcStatus::Unknown(v) => v,
            // ALL_STATUS is in the C enum's order, so the index is the value.
            known => ALL_STATUS
                .iter()
                .position(|&s| s == known)
                .map_or(raw::IBV_WC_GENERAL_ERR, |i| i as u32),
        }
    }

    /// The library's text for it (`ibv_wc_status_str`).
    pub fn as_str(self) -> &'static str {
        // SAFETY: returns a pointer to a static string (or "unknown") for any value.
        let s = unsafe { raw::ibv_wc_status_str(self.to_raw()) };
        if s.is_null() {
            return "unknown";
        }
        // SAFETY: static NUL-terminated string owned by libibverbs for the process lifetime.
        unsafe { CStr::from_ptr(s) }.to_str().unwrap_or("unknown")
    }

    /// Whether it is [`WcStatus::Success`].
    pub fn is_success(self) -> bool {
        self == WcStatus::Success
    }
}

impl std::fmt::Display for WcStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What completed (`enum ibv_wc_opcode`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WcOpcode {
    /// Send.
    Send,
    /// RDMA write.
    RdmaWrite,
    /// RDMA read.
    RdmaRead,
    /// Compare-and-swap.
    CompSwap,
    /// Fetch-and-add.
    FetchAdd,
    /// Memory window bind.
    BindMw,
    /// Local invalidate.
    LocalInv,
    /// Receive (a send arrived).
    Recv,
    /// Receive of an RDMA write with immediate.
    RecvRdmaWithImm,
    /// Another value.
    Other(u32),
}

impl WcOpcode {
    /// Whether this completes a receive (an arriving send or write with immediate).
    pub fn is_receive(self) -> bool {
        matches!(self, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm)
    }

    /// From the library's value.
    pub fn from_raw(v: raw::ibv_wc_opcode) -> WcOpcode {
        match v {
            raw::IBV_WC_SEND => WcOpcode::Send,
            raw::IBV_WC_RDMA_WRITE => WcOpcode::RdmaWrite,
            raw::IBV_WC_RDMA_READ => WcOpcode::RdmaRead,
            raw::IBV_WC_COMP_SWAP => WcOpcode::CompSwap,
            raw::IBV_WC_FETCH_ADD => WcOpcode::FetchAdd,
            raw::IBV_WC_BIND_MW => WcOpcode::BindMw,
            raw::IBV_WC_LOCAL_INV => WcOpcode::LocalInv,
            raw::IBV_WC_RECV => WcOpcode::Recv,
            raw::IBV_WC_RECV_RDMA_WITH_IMM => WcOpcode::RecvRdmaWithImm,
            other => WcOpcode::Other(other),
        }
    }
}

/// One typed completion.
///
/// For a failed completion only `wr_id`, `status`, `qp_num` and `vendor_err` are meaningful
/// (the library leaves the rest undefined); this type then reports `opcode = None`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The work request id given when posting.
    pub wr_id: u64,
    /// Status.
    pub status: WcStatus,
    /// What completed (None for failed completions).
    pub opcode: Option<WcOpcode>,
    /// Bytes transferred (receives, reads, atomics).
    pub byte_len: u32,
    /// Immediate data in host byte order, when the completion carries one.
    pub imm: Option<u32>,
    /// Local QP number.
    pub qp_num: u32,
    /// Source QP number (UD/DC receives).
    pub src_qp: u32,
    /// `IBV_WC_*` flags.
    pub wc_flags: u32,
    /// Vendor error syndrome (failed completions).
    pub vendor_err: u32,
}

impl Default for Completion {
    fn default() -> Self {
        Completion {
            wr_id: 0,
            status: WcStatus::Success,
            opcode: None,
            byte_len: 0,
            imm: None,
            qp_num: 0,
            src_qp: 0,
            wc_flags: 0,
            vendor_err: 0,
        }
    }
}

/// A completion with only what a poller of requests uses: the lean form of [`Completion`],
/// filled by [`Cq::poll_lean`](crate::Cq::poll_lean), which reads and writes less per
/// completion than [`Cq::poll`](crate::Cq::poll) (no immediate, source QP, flags or vendor
/// syndrome: poll with [`Cq::poll`](crate::Cq::poll) where those matter).
///
/// For a failed completion `wr_id`, `status` and `qp_num` are meaningful; `opcode` is then
/// None and `byte_len` 0 (the library leaves them undefined), as in [`Completion`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LeanCompletion {
    /// The work request id given when posting.
    pub wr_id: u64,
    /// Status.
    pub status: WcStatus,
    /// What completed (None for failed completions).
    pub opcode: Option<WcOpcode>,
    /// Bytes transferred (receives, reads, atomics); 0 for failed completions.
    pub byte_len: u32,
    /// Local QP number.
    pub qp_num: u32,
}

impl Default for LeanCompletion {
    fn default() -> Self {
        LeanCompletion {
            wr_id: 0,
            status: WcStatus::Success,
            opcode: None,
            byte_len: 0,
            qp_num: 0,
        }
    }
}

impl From<Completion> for LeanCompletion {
    #[inline]
    fn from(c: Completion) -> Self {
        LeanCompletion {
            wr_id: c.wr_id,
            status: c.status,
            opcode: c.opcode,
            byte_len: c.byte_len,
            qp_num: c.qp_num,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_status_round_trips_and_unknown_values_are_kept() {
        for v in 0..24 {
            let s = WcStatus::from_raw(v);
            assert!(!matches!(s, WcStatus::Unknown(_)), "{v}");
            assert_eq!(s.to_raw(), v);
        }
        assert_eq!(WcStatus::from_raw(99), WcStatus::Unknown(99));
        assert_eq!(WcStatus::Unknown(99).to_raw(), 99);
        assert_eq!(WcStatus::from_raw(raw::IBV_WC_REM_ACCESS_ERR), WcStatus::RemAccessErr);
        assert_eq!(WcStatus::from_raw(raw::IBV_WC_WR_FLUSH_ERR), WcStatus::WrFlushErr);
    }

    #[test]
    fn status_text_comes_from_the_library() {
        assert_eq!(WcStatus::Success.as_str(), "success");
        assert_eq!(WcStatus::RemAccessErr.as_str(), "remote access error");
    }

    #[test]
    fn opcodes_map_from_library_values() {
        assert_eq!(WcOpcode::from_raw(raw::IBV_WC_RECV), WcOpcode::Recv);
        assert_eq!(
            WcOpcode::from_raw(raw::IBV_WC_RECV_RDMA_WITH_IMM),
            WcOpcode::RecvRdmaWithImm
        );
        assert_eq!(WcOpcode::from_raw(raw::IBV_WC_FETCH_ADD), WcOpcode::FetchAdd);
        assert_eq!(WcOpcode::from_raw(77), WcOpcode::Other(77));
    }
}
