//! What DC and RC queue pairs share: typestate markers, failed transitions that hand the
//! object back, and the attribute plumbing of `ibv_modify_qp`.

use crate::error::{Error, Result};
use mlx5dv_raw as raw;
use std::fmt;
use std::ptr::NonNull;

/// Queue-pair state markers (type parameters of [`crate::Dci`] and [`crate::RcQp`]).
pub mod state {
    /// Just created.
    #[derive(Debug)]
    pub enum Reset {}
    /// Initialised: port and access set.
    #[derive(Debug)]
    pub enum Init {}
    /// Ready to receive.
    #[derive(Debug)]
    pub enum Rtr {}
    /// Ready to send: the only state that can post.
    #[derive(Debug)]
    pub enum Rts {}
}

/// A state transition that failed: the error, and the object in the state it was in before,
/// so nothing that was handed in is lost.
///
/// It is an error like any other: `?` turns it into [`Error`], `anyhow::Error` or
/// `Box<dyn std::error::Error + Send + Sync>` (the object is dropped, and destroyed, then).
/// A shared reference reaches only the error: the object comes back by
/// [`into_inner`](Self::into_inner) or [`into_parts`](Self::into_parts), or through
/// [`object_mut`](Self::object_mut); this is what makes it `Sync` (so `?` converts it) though a
/// QP is not. So this compiles:
///
/// ```
/// use mlx5dv::{state, Dci, TransitionError};
/// fn why(failed: &TransitionError<Dci<state::Reset>>) -> &mlx5dv::Error {
///     failed.error()
/// }
/// fn bring_up(dci: Dci<state::Reset>) -> Result<Dci<state::Init>, Box<dyn std::error::Error + Send + Sync>> {
///     Ok(dci.init(1, 0)?)
/// }
/// ```
///
/// and this does not:
///
/// ```compile_fail,E0616
/// use mlx5dv::{state, Dci, TransitionError};
/// fn peek(failed: &TransitionError<Dci<state::Reset>>) -> &Dci<state::Reset> {
///     &failed.object // private: a shared reference reaches the error only
/// }
/// ```
pub struct TransitionError<T> {
    error: Error,
    object: T,
}

// SAFETY: through `&TransitionError<T>` only the `Error` can be reached (`error()`, and the
// Debug and Display impls, which read the error alone); the fields are private and every way to
// the object (`into_inner`, `into_parts`, `object_mut`) takes `self` or `&mut self`, which no
// other thread can hold at the same time. Sharing a `&TransitionError<T>` shares an `&Error`,
// which is `Sync` (the argument of std's `Exclusive` and of `SyncWrapper`). The object may
// still move to another thread with the whole error, hence `T: Send`.
unsafe impl<T: Send> Sync for TransitionError<T> {}

impl<T> TransitionError<T> {
    pub(crate) fn new(error: Error, object: T) -> Self {
        TransitionError { error, object }
    }

    /// The same error, the object changed by `f` (a typestate conversion).
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> TransitionError<U> {
        TransitionError::new(self.error, f(self.object))
    }

    /// What went wrong.
    pub fn error(&self) -> &Error {
        &self.error
    }

    /// The object back, in the state it was in before (the error dropped).
    pub fn into_inner(self) -> T {
        self.object
    }

    /// The error and the object.
    pub fn into_parts(self) -> (Error, T) {
        (self.error, self.object)
    }

    /// The object, to use in place before taking it back (the error is held exclusively
    /// meanwhile).
    pub fn object_mut(&mut self) -> &mut T {
        &mut self.object
    }
}

impl<T> fmt::Debug for TransitionError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.error, f)
    }
}

impl<T> fmt::Display for TransitionError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)
    }
}

impl<T> std::error::Error for TransitionError<T> {}

impl<T> From<TransitionError<T>> for Error {
    fn from(e: TransitionError<T>) -> Error {
        e.error
    }
}

/// Sending-side timing of the RTS transition.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RtsAttr {
    /// Local ack timeout exponent (4.096 us * 2^timeout); 14 is about 67 ms.
    pub timeout: u8,
    /// Transport retries (0..=7).
    pub retry_cnt: u8,
    /// RNR retries (0..=7; 7 = infinite).
    pub rnr_retry: u8,
    /// First send PSN (24 bits).
    pub sq_psn: u32,
    /// Outstanding RDMA reads/atomics as initiator.
    pub max_rd_atomic: u8,
}

impl Default for RtsAttr {
    /// The values of rdma-core's own DC tests: timeout 14, retry 7, RNR retry 7, PSN 0, 1 read.
    fn default() -> Self {
        RtsAttr {
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            sq_psn: 0,
            max_rd_atomic: 1,
        }
    }
}

/// A runtime QP state, as `ibv_query_qp` reports it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QpState {
    /// Reset.
    Reset,
    /// Init.
    Init,
    /// Ready to receive.
    Rtr,
    /// Ready to send.
    Rts,
    /// Send queue drained.
    Sqd,
    /// Send queue error.
    Sqe,
    /// Error: every posted request completes flushed; reset and reconnect to recover.
    Err,
    /// Unknown.
    Unknown,
}

/// The raw handles of a queue pair with the extended post API.
pub(crate) struct QpRaw {
    pub(crate) qp: NonNull<raw::ibv_qp>,
    pub(crate) qpx: NonNull<raw::ibv_qp_ex>,
    pub(crate) mqp: Option<NonNull<raw::mlx5dv_qp_ex>>,
    /// `IBV_QP_EX_WITH_*` the QP was created with: the post path refuses anything else.
    pub(crate) send_ops: u64,
    /// Whether the DCI was created with streams (`wr_set_dc_addr_stream` usable).
    pub(crate) dci_streams: bool,
    /// `parents.caps.max_send_sge` and `.max_inline_data`, the two capacities the post path
    /// checks (SGE count, inline length) before any library call, kept here on its cache line.
    pub(crate) max_send_sge: u32,
    pub(crate) max_inline_data: u32,
    /// The crate's count of outstanding requests (never lets libmlx5 see a full queue).
    pub(crate) sq: crate::sq_accounting::Poster,
    /// Whether the direct backend drives the send queue (its state is `parents.direct`: the
    /// QP stays small, and the wr API's post path tests this flag only).
    pub(crate) direct: bool,
    /// What the QP was made from, kept alive until it is destroyed, and its device's name.
    pub(crate) parents: Box<Parents>,
}

/// The objects a queue pair was created from: it holds them so that they outlive it (touched
/// at creation and destruction only). An adopted QP may hold none.
#[derive(Default)]
pub(crate) struct Parents {
    /// The direct backend's thread and parent domain (a BlueFlame register of the QP's own),
    /// freed after the QP and before its PD (fields drop in order).
    #[allow(dead_code)]
    pub(crate) own_register: Option<crate::direct::register::OwnRegister>,
    /// The device's name, for errors (here, off the post path's cache lines).
    pub(crate) device: Box<str>,
    #[allow(dead_code)] // held, never read: dropping them is their whole use
    pub(crate) pd: Option<crate::pd::Pd>,
    #[allow(dead_code)]
    pub(crate) cq: Option<std::sync::Arc<crate::cq::CqCore>>,
    /// The receive CQ of an RC QP created with a separate one (`Pd::create_rc_qp_split`).
    #[allow(dead_code)]
    pub(crate) recv_cq: Option<std::sync::Arc<crate::cq::CqCore>>,
    #[allow(dead_code)]
    pub(crate) srq: Option<crate::srq::Srq>,
    /// The direct backend's send-queue state (see `QpRaw::direct`).
    pub(crate) direct: Option<crate::direct::DirectSq>,
    /// The capacities the library created the QP with (it may round requests up).
    pub(crate) caps: raw::ibv_qp_cap,
    /// A DCI's requester limit for RTS (`max_dc_rd_atom`), where the library reports it.
    pub(crate) dc_rd_atomic_limit: Option<u64>,
}

impl Parents {
    /// Boxed: a failed transition hands the QP back inside the error, which stays small.
    pub(crate) fn of(pd: &crate::pd::Pd, cq: &crate::cq::Cq, srq: Option<&crate::srq::Srq>) -> Box<Parents> {
        Box::new(Parents {
            own_register: None,
            device: pd.context().name().into(),
            pd: Some(pd.clone()),
            cq: Some(cq.core()),
            recv_cq: None,
            srq: srq.cloned(),
            direct: None,
            caps: raw::ibv_qp_cap::default(),
            dc_rd_atomic_limit: None,
        })
    }
}

// SAFETY: the QP's library objects may be used from any thread, one at a time: QpRaw is reached
// only through a handle that is Send and not Sync (posting needs &mut, state queries are verbs
// calls the library serialises); the send-queue count is built for a poster and a poller on
// different threads (the poster's pointer to its slots goes with the Arc that owns them).
unsafe impl Send for QpRaw {}

impl QpRaw {
    pub(crate) fn modify(
        &self,
        attr: &mut raw::ibv_qp_attr,
        mask: u32,
        op: &'static str,
        hint: &'static str,
    ) -> Result<()> {
        modify_qp(self.qp, self.device(), attr, mask, op, hint)
    }

    pub(crate) fn to_reset(&self, op: &'static str) -> Result<()> {
        let mut attr = raw::ibv_qp_attr {
            qp_state: raw::IBV_QPS_RESET,
            ..Default::default()
        };
        self.modify(
            &mut attr,
            raw::IBV_QP_STATE,
            op,
            "the QP could not be reset; destroy it and create a new one",
        )?;
        // RESET empties the send queue (libmlx5 resets its indices and cleans the CQ). A direct
        // send CQ is cleaned here, as libmlx5 cleans its own: the QP's WQE indexes restart at
        // 0, so an entry left from before would name a request written after.
        if self.direct().is_some() {
            self.clean_send_cq(self.qp_num());
        }
        self.sq.reset();
        if let Some(d) = self.direct() {
            d.reset(self.sq.retired());
        }
        Ok(())
    }

    /// The differential test's hook (`Dci::diff_test_backend`, `RcQp::diff_test_backend`): the
    /// QP posts through `backend` from now on, its count new (`receives`: on the wr API,
    /// completions of receives share its CQ, as on RC) and registered on `cq`, the direct
    /// writer at ring position `cur_post`.
    ///
    /// # Errors
    /// The direct backend's `mlx5dv_init_obj` ([`crate::direct::DirectSq::new`]).
    pub(crate) fn switch_backend(
        &mut self,
        cq: &crate::cq::Cq,
        backend: crate::direct::SendBackend,
        cur_post: u32,
        receives: bool,
    ) -> Result<()> {
        let direct = match backend {
            crate::direct::SendBackend::WrApi => None,
            // Created on the wr API, its register may be one libmlx5 shares: the hook's caller
            // posts on no other QP meanwhile (its safety contract), so BlueFlame is rung there
            // as libmlx5 would.
            crate::direct::SendBackend::Direct => Some(crate::direct::DirectSq::new(
                self.qp,
                self.parents.caps.max_send_wr,
                self.device(),
            )?),
        };
        self.sq.close();
        self.sq = poster_for(self.parents.caps.max_send_wr, receives, direct.as_ref());
        if let Some(d) = &direct {
            d.restart_at(0, cur_post);
        }
        self.direct = direct.is_some();
        self.parents.direct = direct;
        self.register(cq);
        Ok(())
    }

    /// Puts the queue in the CQ's registry so completions give credit back. The kernel gave
    /// this QP its number, so a queue registered under it by hand (the differential test's
    /// stand-in) is no QP's any more.
    pub(crate) fn register(&self, cq: &crate::cq::Cq) {
        let core = cq.core();
        cq.registry
            .evict(self.qp_num(), |old| core.release_number(self.qp_num(), old));
        let added = cq.registry.add(self.qp_num(), self.sq.shared().clone());
        debug_assert!(added, "no live queue keeps a number the kernel handed out again");
        self.sq.routed();
    }

    /// Removes the unread entries of QP `qp_num` (this one's: read before a destroy) from its
    /// direct send CQ (none on the wr API, where libmlx5 cleans its CQs itself).
    fn clean_send_cq(&self, qp_num: u32) {
        if let Some(cq) = &self.parents.cq {
            cq.clean_direct(qp_num);
        }
    }

    pub(crate) fn query_state(&self) -> Result<QpState> {
        let mut attr = raw::ibv_qp_attr::default();
        // SAFETY: all-zero is valid for the init-attr out-parameter (pointers and integers).
        let mut init: raw::ibv_qp_init_attr = unsafe { std::mem::zeroed() };
        // SAFETY: the QP is live; both out-parameters are writable.
        let rc = unsafe { raw::ibv_query_qp(self.qp.as_ptr(), &mut attr, raw::IBV_QP_STATE as libc::c_int, &mut init) };
        if rc != 0 {
            return Err(Error::command("ibv_query_qp", rc, "the device may have been removed").on(self.device()));
        }
        Ok(match attr.qp_state {
            raw::IBV_QPS_RESET => QpState::Reset,
            raw::IBV_QPS_INIT => QpState::Init,
            raw::IBV_QPS_RTR => QpState::Rtr,
            raw::IBV_QPS_RTS => QpState::Rts,
            raw::IBV_QPS_SQD => QpState::Sqd,
            raw::IBV_QPS_SQE => QpState::Sqe,
            raw::IBV_QPS_ERR => QpState::Err,
            _ => QpState::Unknown,
        })
    }

    /// The direct backend's send queue, None on the wr API.
    #[inline(always)]
    pub(crate) fn direct(&self) -> Option<&crate::direct::DirectSq> {
        if self.direct {
            self.parents.direct.as_ref()
        } else {
            None
        }
    }

    /// The device's name, for errors.
    pub(crate) fn device(&self) -> &str {
        &self.parents.device
    }

    pub(crate) fn qp_num(&self) -> u32 {
        // SAFETY: the QP is live.
        unsafe { (*self.qp.as_ptr()).qp_num }
    }
}

impl Drop for QpRaw {
    fn drop(&mut self) {
        // Before the destroy: its completions are dropped from now on.
        self.sq.close();
        let qp_num = self.qp_num();
        // SAFETY: created once, destroyed once; batches borrow the QP mutably, so none is open.
        // Its parents (fields) are released after it.
        let rc = unsafe { raw::ibv_destroy_qp(self.qp.as_ptr()) };
        if rc == 0 {
            // No entry of it can come any more, and its number may go to a new QP: what is
            // left of it leaves the direct CQ, as libmlx5's `mlx5_destroy_qp` cleans its own,
            // unless a new QP given its number meanwhile has done it.
            match (&self.parents.cq, self.direct) {
                (Some(cq), true) => cq.release_number(qp_num, self.sq.shared()),
                _ => self.sq.gone(),
            }
        }
    }
}

/// A QP's count of outstanding requests. On the wr API, `receives`: receive completions
/// share its CQ (RC), so the `wr_id` stays the caller's; otherwise (DCIs) the crate writes its
/// own. On the direct backend no receive shares the send CQ, and completions name WQEs,
/// mapped to requests through the ring's WQE indexes.
pub(crate) fn poster_for(
    max_send_wr: u32,
    receives: bool,
    direct: Option<&crate::direct::DirectSq>,
) -> crate::sq_accounting::Poster {
    match direct {
        None => crate::sq_accounting::Poster::new(max_send_wr, receives),
        Some(d) => crate::sq_accounting::Poster::with_wqe_map(max_send_wr, false, d.wqe_cnt() as usize),
    }
}

/// The creation attributes both QP kinds share: one CQ for sends and receives, an optional SRQ,
/// and the extended post API when `send_ops` is non-zero.
pub(crate) fn init_attr_ex(
    pd: &crate::pd::Pd,
    cq: &crate::cq::Cq,
    srq: Option<&crate::srq::Srq>,
    cap: raw::ibv_qp_cap,
    qp_type: raw::ibv_qp_type,
    send_ops: u64,
) -> raw::ibv_qp_init_attr_ex {
    raw::ibv_qp_init_attr_ex {
        qp_context: std::ptr::null_mut(),
        send_cq: cq.as_raw_cq(),
        recv_cq: cq.as_raw_cq(),
        srq: srq.map_or(std::ptr::null_mut(), |s| s.as_raw()),
        cap,
        qp_type,
        sq_sig_all: 0,
        comp_mask: if send_ops != 0 {
            raw::IBV_QP_INIT_ATTR_PD | raw::IBV_QP_INIT_ATTR_SEND_OPS_FLAGS
        } else {
            raw::IBV_QP_INIT_ATTR_PD
        },
        pd: pd.as_raw(),
        xrcd: std::ptr::null_mut(),
        create_flags: 0,
        max_tso_header: 0,
        rwq_ind_tbl: std::ptr::null_mut(),
        rx_hash_conf: raw::ibv_rx_hash_conf {
            rx_hash_function: 0,
            rx_hash_key_len: 0,
            rx_hash_key: std::ptr::null_mut(),
            rx_hash_fields_mask: 0,
        },
        source_qpn: 0,
        send_ops_flags: send_ops,
    }
}

/// `ibv_modify_qp` with the crate's error on failure (shared by every QP kind, DCTs included).
pub(crate) fn modify_qp(
    qp: NonNull<raw::ibv_qp>,
    device: &str,
    attr: &mut raw::ibv_qp_attr,
    mask: u32,
    op: &'static str,
    hint: &'static str,
) -> Result<()> {
    // SAFETY: callers own a live QP; attr is initialised for the bits in mask.
    let rc = unsafe { raw::ibv_modify_qp(qp.as_ptr(), attr, mask as libc::c_int) };
    if rc != 0 {
        return Err(Error::command(op, rc, hint).on(device));
    }
    Ok(())
}

pub(crate) fn rts_attr(rts: &RtsAttr) -> (raw::ibv_qp_attr, u32) {
    let attr = raw::ibv_qp_attr {
        qp_state: raw::IBV_QPS_RTS,
        timeout: rts.timeout,
        retry_cnt: rts.retry_cnt,
        rnr_retry: rts.rnr_retry,
        sq_psn: rts.sq_psn & 0x00FF_FFFF,
        max_rd_atomic: rts.max_rd_atomic,
        ..Default::default()
    };
    let mask = raw::IBV_QP_STATE
        | raw::IBV_QP_TIMEOUT
        | raw::IBV_QP_RETRY_CNT
        | raw::IBV_QP_RNR_RETRY
        | raw::IBV_QP_SQ_PSN
        | raw::IBV_QP_MAX_QP_RD_ATOMIC;
    (attr, mask)
}
