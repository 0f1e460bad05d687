//! Completion queues (extended, `ibv_create_cq_ex`) and typed completions.
//!
//! Polling fills a caller-provided slice and allocates nothing.

use crate::context::Context;
use crate::error::{Error, Result};
use mlx5dv_raw as raw;
use std::cell::Cell;
use std::ffi::CStr;
use std::marker::PhantomData;
use std::ptr::NonNull;

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
    /// Transport retries exhausted (peer unreachable).
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

const WC_FLAGS: u64 =
    (raw::IBV_WC_EX_WITH_BYTE_LEN | raw::IBV_WC_EX_WITH_IMM | raw::IBV_WC_EX_WITH_QP_NUM | raw::IBV_WC_EX_WITH_SRC_QP)
        as u64;

/// An extended completion queue, destroyed on drop. Poll it from one thread at a time (it is
/// not `Sync`); queue pairs that report to it borrow it.
pub struct Cq<'ctx> {
    cq: NonNull<raw::ibv_cq_ex>,
    ctx: &'ctx Context,
    /// Whether `ibv_next_poll` may be used (see [`Cq::poll`]).
    batched: bool,
    /// The send queues of the QPs reporting here: each completion gives credit back.
    pub(crate) registry: std::rc::Rc<crate::sq::Registry>,
    /// An error met after completions were already read: reported by the next poll.
    deferred_error: Cell<Option<(&'static str, i32)>>,
    /// The completion channel the CQ reports to, when created with one.
    pub(crate) events: Option<crate::comp_channel::CompChannel>,
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: the CQ is a library object usable from any one thread at a time.
unsafe impl Send for Cq<'_> {}

impl Context {
    /// Creates an extended CQ with at least `cqe` entries that reports byte length, immediate
    /// data, QP number and source QP.
    ///
    /// # Errors
    /// EINVAL for `cqe == 0` or beyond the device's `max_cqe`; `ibv_create_cq_ex` with the
    /// library's errno otherwise (EOPNOTSUPP when the provider has no extended CQs).
    pub fn create_cq(&self, cqe: u32) -> Result<Cq<'_>> {
        self.create_cq_on(cqe, None)
    }

    /// Creates the CQ with `channel` (None: without one).
    pub(crate) fn create_cq_on(&self, cqe: u32, channel: Option<crate::comp_channel::CompChannel>) -> Result<Cq<'_>> {
        if cqe == 0 {
            return Err(Error::invalid("ibv_create_cq_ex", "a CQ needs at least one entry"));
        }
        let max = self.query_device()?.0.max_cqe;
        if i64::from(cqe) > i64::from(max) {
            return Err(Error::invalid(
                "ibv_create_cq_ex",
                format!("{cqe} entries exceed this device's max_cqe of {max}"),
            )
            .on(self.name()));
        }
        let mut attr = raw::ibv_cq_init_attr_ex {
            cqe,
            cq_context: std::ptr::null_mut(),
            channel: channel.as_ref().map_or(std::ptr::null_mut(), |c| c.as_raw()),
            comp_vector: 0,
            wc_flags: WC_FLAGS,
            comp_mask: 0,
            flags: 0,
            parent_domain: std::ptr::null_mut(),
        };
        // SAFETY: the context is open; attr is initialised.
        let cq = unsafe { raw::ibv_create_cq_ex(self.as_raw(), &mut attr) };
        let Some(cq) = NonNull::new(cq) else {
            // errno first: nothing else may run before it is read.
            return Err(Error::last_os_error(
                "ibv_create_cq_ex",
                "check cqe against max_cqe and the provider's extended-CQ support",
            )
            .on(self.name()));
        };
        // SAFETY: the context is open and its device pointer valid while it is.
        let batched = unsafe { raw::mlx5dv_is_supported((*self.as_raw()).device) };
        Ok(Cq {
            cq,
            ctx: self,
            batched,
            registry: Default::default(),
            deferred_error: Cell::new(None),
            events: channel,
            _not_sync: PhantomData,
        })
    }
}

impl<'ctx> Cq<'ctx> {
    /// Polls up to `out.len()` completions into `out`; returns how many were written.
    ///
    /// Providers disagree on what `ibv_next_poll` returning ENOENT leaves behind: mlx5 expects
    /// `ibv_end_poll` afterwards (as the man page shows), while rxe has already released the CQ
    /// and a following `ibv_end_poll` corrupts it. So on mlx5 one start/next/end batch reads
    /// many completions; elsewhere each completion is its own start/end sequence, which is
    /// correct under both contracts.
    ///
    /// Completions already read are always returned: when `ibv_next_poll` fails after some,
    /// the call returns those, and the next call reports the failure (mlx5 has already
    /// consumed the entry that failed, so it would not be seen again).
    ///
    /// # Errors
    /// `ibv_start_poll`/`ibv_next_poll` with a code other than ENOENT (an empty CQ is
    /// `Ok(0)`). mlx5 returns -2 (CQ_POLL_ERR, reported as EIO with a hint that names it) for
    /// a completion naming a QP or SRQ the context does not know.
    #[inline]
    pub fn poll(&self, out: &mut [Completion]) -> Result<usize> {
        if let Some((op, rc)) = self.deferred_error.take() {
            return Err(poll_error(op, rc).on(self.ctx.name()));
        }
        let cq = self.cq.as_ptr();
        let mut n = 0;
        while n < out.len() {
            let mut attr = raw::ibv_poll_cq_attr { comp_mask: 0 };
            // SAFETY: the CQ is live and polled from this thread only (Cq is !Sync).
            let rc = unsafe { raw::ibv_start_poll(cq, &mut attr) };
            if rc == libc::ENOENT {
                break;
            }
            if rc != 0 {
                if n > 0 {
                    self.deferred_error.set(Some(("ibv_start_poll", rc)));
                    break;
                }
                return Err(poll_error("ibv_start_poll", rc).on(self.ctx.name()));
            }
            loop {
                // SAFETY: a completion is current between a successful start/next_poll and end_poll.
                out[n] = unsafe { read_current(cq) };
                let c = &out[n];
                self.registry.complete(
                    c.qp_num,
                    c.wr_id,
                    c.status.is_success(),
                    c.opcode.is_some_and(WcOpcode::is_receive),
                );
                n += 1;
                if !self.batched || n == out.len() {
                    break;
                }
                // SAFETY: as above (mlx5: ENOENT keeps the batch open until end_poll).
                let rc = unsafe { raw::ibv_next_poll(cq) };
                if rc == libc::ENOENT {
                    break;
                }
                if rc != 0 {
                    // The n completions read so far are the caller's: keep the error for the
                    // next call (the end_poll below consumes them).
                    self.deferred_error.set(Some(("ibv_next_poll", rc)));
                    break;
                }
            }
            // SAFETY: ends the batch started above.
            unsafe { raw::ibv_end_poll(cq) };
            if self.batched {
                break;
            }
        }
        Ok(n)
    }

    /// The context it was created on.
    pub fn context(&self) -> &'ctx Context {
        self.ctx
    }

    /// The raw extended CQ, for interop.
    pub fn as_raw(&self) -> *mut raw::ibv_cq_ex {
        self.cq.as_ptr()
    }

    /// The base CQ (`ibv_cq_ex_to_cq`), for queue-pair creation.
    pub fn as_raw_cq(&self) -> *mut raw::ibv_cq {
        raw::ibv_cq_ex_to_cq(self.cq.as_ptr())
    }
}

/// The error of a failed start/next_poll, with what the code means.
fn poll_error(op: &'static str, rc: i32) -> Error {
    if rc == -2 {
        // Not an errno: libmlx5's CQ_POLL_ERR, reported as EIO.
        return Error::from_errno(
            op,
            libc::EIO,
            "mlx5 CQ_POLL_ERR (-2): a completion for a QP or SRQ this context does not know (destroyed with completions pending?)",
        );
    }
    Error::from_errno(op, rc, "the provider refused to poll this CQ (a CQ overrun is not reported here but as the IBV_EVENT_CQ_ERR async event: see Context::async_events)")
}

/// # Safety
/// `cq` must be inside a start_poll/end_poll sequence with a current completion.
#[inline]
unsafe fn read_current(cq: *mut raw::ibv_cq_ex) -> Completion {
    // SAFETY: guaranteed by the caller.
    unsafe {
        let status = WcStatus::from_raw((*cq).status);
        let wr_id = (*cq).wr_id;
        let qp_num = raw::ibv_wc_read_qp_num(cq);
        if !status.is_success() {
            return Completion {
                wr_id,
                status,
                qp_num,
                vendor_err: raw::ibv_wc_read_vendor_err(cq),
                ..Completion::default()
            };
        }
        let wc_flags = raw::ibv_wc_read_wc_flags(cq);
        Completion {
            wr_id,
            status,
            opcode: Some(WcOpcode::from_raw(raw::ibv_wc_read_opcode(cq))),
            byte_len: raw::ibv_wc_read_byte_len(cq),
            imm: (wc_flags & raw::IBV_WC_WITH_IMM != 0).then(|| u32::from_be(raw::ibv_wc_read_imm_data(cq))),
            qp_num,
            src_qp: raw::ibv_wc_read_src_qp(cq),
            wc_flags,
            vendor_err: 0,
        }
    }
}

impl Drop for Cq<'_> {
    fn drop(&mut self) {
        // ibv_destroy_cq waits until every event it reported was acknowledged.
        if let Some(channel) = &self.events {
            channel.ack_all(self.as_raw_cq());
        }
        // SAFETY: created once, destroyed once; queue pairs borrow the CQ, so they are gone.
        unsafe { raw::ibv_destroy_cq(self.as_raw_cq()) };
        // The channel (a field) is destroyed after the CQ, as libibverbs requires.
    }
}

impl std::fmt::Debug for Cq<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cq")
            .field("device", &self.ctx.name())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::VecDeque;
    use std::ffi::{c_int, c_uint};

    thread_local! {
        /// What the fake CQ's start_poll/next_poll return, in order (then ENOENT), and the
        /// calls it saw.
        static SCRIPT: RefCell<VecDeque<i32>> = const { RefCell::new(VecDeque::new()) };
        static CALLS: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
        static NEXT_WR_ID: Cell<u64> = const { Cell::new(1) };
    }

    /// Pops the next scripted code; a success makes a new current completion (wr_id 1, 2, ...).
    unsafe fn step(cq: *mut raw::ibv_cq_ex, op: &'static str) -> c_int {
        CALLS.with(|c| c.borrow_mut().push(op));
        let rc = SCRIPT.with(|s| s.borrow_mut().pop_front()).unwrap_or(libc::ENOENT);
        if rc == 0 {
            let id = NEXT_WR_ID.with(|n| n.replace(n.get() + 1));
            // SAFETY: the test's fake CQ, alive for the whole test.
            unsafe {
                (*cq).wr_id = id;
                (*cq).status = raw::IBV_WC_SUCCESS;
            }
        }
        rc
    }
    unsafe extern "C" fn start_poll(cq: *mut raw::ibv_cq_ex, _: *mut raw::ibv_poll_cq_attr) -> c_int {
        // SAFETY: forwarded from the caller.
        unsafe { step(cq, "start") }
    }
    unsafe extern "C" fn next_poll(cq: *mut raw::ibv_cq_ex) -> c_int {
        // SAFETY: forwarded from the caller.
        unsafe { step(cq, "next") }
    }
    unsafe extern "C" fn end_poll(_: *mut raw::ibv_cq_ex) {
        CALLS.with(|c| c.borrow_mut().push("end"));
    }
    unsafe extern "C" fn read_u32(_: *mut raw::ibv_cq_ex) -> u32 {
        0
    }
    unsafe extern "C" fn read_flags(_: *mut raw::ibv_cq_ex) -> c_uint {
        0
    }
    unsafe extern "C" fn read_opcode(_: *mut raw::ibv_cq_ex) -> raw::ibv_wc_opcode {
        raw::IBV_WC_SEND
    }

    /// An extended CQ whose poll entries follow `script` (a provider's return codes).
    fn fake_cq(script: &[i32]) -> Box<raw::ibv_cq_ex> {
        SCRIPT.with(|s| *s.borrow_mut() = script.iter().copied().collect());
        CALLS.with(|c| c.borrow_mut().clear());
        NEXT_WR_ID.with(|n| n.set(1));
        // SAFETY: ibv_cq_ex is plain data (pointers, integers, optional fn pointers): all-zero
        // is a valid value; the entries polling uses are filled in below.
        let mut cq: Box<raw::ibv_cq_ex> = Box::new(unsafe { std::mem::zeroed() });
        cq.start_poll = Some(start_poll);
        cq.next_poll = Some(next_poll);
        cq.end_poll = Some(end_poll);
        cq.read_opcode = Some(read_opcode);
        cq.read_vendor_err = Some(read_u32);
        cq.read_byte_len = Some(read_u32);
        cq.read_imm_data = Some(read_u32);
        cq.read_qp_num = Some(read_u32);
        cq.read_src_qp = Some(read_u32);
        cq.read_wc_flags = Some(read_flags);
        cq
    }

    /// A `Cq` over `raw` (never dropped: there is no library to destroy it).
    fn cq_over<'a>(ctx: &'a Context, raw: &mut raw::ibv_cq_ex, batched: bool) -> std::mem::ManuallyDrop<Cq<'a>> {
        std::mem::ManuallyDrop::new(Cq {
            cq: NonNull::from(raw),
            ctx,
            batched,
            registry: Default::default(),
            deferred_error: Cell::new(None),
            events: None,
            _not_sync: PhantomData,
        })
    }

    fn calls() -> Vec<&'static str> {
        CALLS.with(|c| c.borrow().clone())
    }

    #[test]
    fn poll_returns_the_completions_read_before_a_next_poll_error_and_reports_the_error_next_call() {
        let ctx = Context::fake("mlx5_fake");
        // mlx5: two completions, then CQ_POLL_ERR (-2) for the third entry.
        let mut raw = fake_cq(&[0, 0, -2]);
        let cq = cq_over(&ctx, &mut raw, true);
        let mut out = [Completion::default(); 8];
        assert_eq!(cq.poll(&mut out).expect("the two completions read"), 2);
        assert_eq!((out[0].wr_id, out[1].wr_id), (1, 2));
        assert!(out[..2].iter().all(|c| c.status == WcStatus::Success));
        assert_eq!(calls(), ["start", "next", "next", "end"], "the batch is closed");
        let err = cq.poll(&mut out).expect_err("the error comes with the next call");
        assert_eq!(err.errno(), Some(libc::EIO));
        let text = err.to_string();
        assert!(text.contains("ibv_next_poll") && text.contains("CQ_POLL_ERR"), "{text}");
        assert_eq!(calls().len(), 4, "reporting it touches the CQ no more");
        assert_eq!(cq.poll(&mut out).expect("then polling goes on"), 0);
    }

    #[test]
    fn poll_without_batching_keeps_what_it_read_when_a_later_start_poll_fails() {
        let ctx = Context::fake("rxe_fake");
        let mut raw = fake_cq(&[0, libc::EIO]);
        let cq = cq_over(&ctx, &mut raw, false);
        let mut out = [Completion::default(); 4];
        assert_eq!(cq.poll(&mut out).unwrap(), 1);
        assert_eq!(out[0].wr_id, 1);
        assert_eq!(
            calls(),
            ["start", "end", "start"],
            "no end_poll after a failed start_poll"
        );
        assert_eq!(cq.poll(&mut out).unwrap_err().errno(), Some(libc::EIO));
    }

    #[test]
    fn a_start_poll_error_with_nothing_read_is_returned_at_once() {
        let ctx = Context::fake("mlx5_fake");
        let mut raw = fake_cq(&[libc::EIO]);
        let cq = cq_over(&ctx, &mut raw, true);
        let mut out = [Completion::default(); 4];
        let err = cq.poll(&mut out).unwrap_err();
        assert_eq!(err.errno(), Some(libc::EIO));
        assert!(err.to_string().contains("ibv_start_poll"), "{err}");
        assert_eq!(calls(), ["start"]);
        assert_eq!(cq.poll(&mut out).unwrap(), 0, "nothing deferred");
    }

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
