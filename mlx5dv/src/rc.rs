//! Reliable Connected queue pairs on any verbs device, with the same typestate and batch as
//! DC: used to test the post path on soft-RoCE and to compare DC with RC.

use crate::ah::PeerPath;
use crate::context::Context;
use crate::cq::Cq;
use crate::direct::register::OwnRegister;
use crate::direct::{DirectSq, SendBackend};
use crate::error::{Error, Result};
use crate::mr::{Access, Sge};
use crate::pd::Pd;
use crate::qp::{init_attr_ex, poster_for, rts_attr, state, Parents, QpRaw, QpState, RtsAttr, TransitionError};
use crate::sq_accounting::Poster;
use crate::srq::Srq;
use crate::wr::{Batch, Rc};
use mlx5dv_raw as raw;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// Every operation the batch offers, enabled on RC queue pairs by default (the atomics only
/// where the device executes them: libmlx5 refuses a QP asking for atomics otherwise).
pub const RC_DEFAULT_SEND_OPS: u32 = raw::IBV_QP_EX_WITH_SEND
    | raw::IBV_QP_EX_WITH_SEND_WITH_IMM
    | raw::IBV_QP_EX_WITH_RDMA_WRITE
    | raw::IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM
    | raw::IBV_QP_EX_WITH_RDMA_READ
    | raw::IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP
    | raw::IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

/// Sizes of an RC queue pair.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RcCaps {
    /// Send queue depth.
    pub max_send_wr: u32,
    /// Receive queue depth (ignored with an SRQ).
    pub max_recv_wr: u32,
    /// SGEs per send.
    pub max_send_sge: u32,
    /// SGEs per receive.
    pub max_recv_sge: u32,
    /// Inline bytes per send.
    pub max_inline_data: u32,
}

impl Default for RcCaps {
    fn default() -> Self {
        RcCaps {
            max_send_wr: 128,
            max_recv_wr: 128,
            max_send_sge: 1,
            max_recv_sge: 1,
            max_inline_data: 64,
        }
    }
}

/// What the remote side of an RC connection tells us (exchanged out of band).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RcRemote {
    /// Remote QP number.
    pub qp_num: u32,
    /// Remote initial PSN (24 bits).
    pub psn: u32,
    /// The path to the peer.
    pub path: PeerPath,
    /// Path MTU in bytes.
    pub mtu_bytes: u32,
    /// Outstanding RDMA reads/atomics the peer may have against us.
    pub max_dest_rd_atomic: u8,
    /// Minimum RNR NAK timer code.
    pub min_rnr_timer: u8,
}

/// An RC queue pair in state `S`. Only `RcQp<Rts>` posts sends; receives can be posted from INIT.
///
/// It holds its PD, CQ and SRQ, moves between threads (`Send`) and posts from one thread at a
/// time (`!Sync`).
pub struct RcQp<S> {
    raw: QpRaw,
    port: u8,
    _state: PhantomData<fn() -> S>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl Pd {
    /// Creates an RC queue pair with the extended post API (every operation of the batch
    /// enabled; the atomics only on a device that executes them, elsewhere an atomic is
    /// refused at its data step with EINVAL), reporting sends and receives to `cq`, receiving
    /// from `srq` if given. It posts through libmlx5's wr API; for separate send and receive
    /// CQs or the direct backend, see [`Pd::create_rc_qp_split`].
    ///
    /// # Errors
    /// EINVAL for a direct CQ ([`Context::create_direct_cq`]) or capacities beyond the
    /// device's limits (`max_qp_wr`, `max_sge`); then `ibv_create_qp_ex (RC)` with the
    /// library's errno.
    pub fn create_rc_qp(&self, cq: &Cq, srq: Option<&Srq>, caps: RcCaps) -> Result<RcQp<state::Reset>> {
        cq.refuse_if_direct("ibv_create_qp_ex (RC)", "RC QP (libmlx5 posts and completes it)")?;
        self.create_rc(cq, None, srq, caps, SendBackend::WrApi)
    }

    /// Creates an RC queue pair as [`Pd::create_rc_qp`] does, with its send completions
    /// reported to `send_cq` and its receive completions (from its own receive queue or from
    /// `srq`) to `recv_cq`, posting through `backend`.
    ///
    /// With [`SendBackend::Direct`] the crate writes the QP's WQEs and rings its doorbell
    /// itself (see `SendBackend`), and reads its send completions itself: `send_cq` must come
    /// from [`Context::create_direct_cq`] and `recv_cq` from [`Context::create_cq`] (the direct
    /// reader decodes requester completions only). No receive completion shares the send CQ,
    /// so the crate names each send completion by its WQE, as on a DC initiator: any `wr_id`s
    /// (duplicates, 0) come back exactly, and a failed completion retires its own request only.
    /// Unlike the wr API backend, posting is not refused after a failure (EIO): the QP is in
    /// ERR and the device completes what is posted then as flushed. [`RcQp::reset`] cleans the
    /// QP's unread completions out of the direct CQ (as libmlx5 cleans its own CQs): poll them
    /// first if they matter.
    ///
    /// # Errors
    /// EINVAL when the CQs do not suit the backend: a direct backend whose `send_cq` is not
    /// direct or whose `recv_cq` is, a wr API backend with either CQ direct; then as
    /// [`Pd::create_rc_qp`]; on the direct backend, `ibv_alloc_td`'s errno where the provider
    /// gives no thread domain (no register of the QP's own: use the wr API), and
    /// `mlx5dv_init_obj (direct send queue)`
    /// when libmlx5 does not describe a ring the writer takes (the QP is destroyed; create it
    /// on the wr API).
    pub fn create_rc_qp_split(
        &self,
        send_cq: &Cq,
        recv_cq: &Cq,
        srq: Option<&Srq>,
        caps: RcCaps,
        backend: SendBackend,
    ) -> Result<RcQp<state::Reset>> {
        const OP: &str = "ibv_create_qp_ex (RC)";
        let refusal = match (backend, send_cq.is_direct(), recv_cq.is_direct()) {
            (SendBackend::Direct, false, _) => Some(
                "an RC QP with the direct backend needs a direct send CQ (Context::create_direct_cq): libmlx5's CQ cannot name the requests the direct writer posts",
            ),
            (SendBackend::Direct, true, true) => Some(
                "the receive CQ of a direct RC QP must be an ordinary CQ (Context::create_cq): the direct CQ reader decodes requester (send) completions only",
            ),
            (SendBackend::WrApi, true, _) | (SendBackend::WrApi, _, true) => Some(
                "a direct CQ (Context::create_direct_cq) serves only the send completions of QPs with the direct backend: give this RC QP CQs from Context::create_cq, or choose SendBackend::Direct",
            ),
            _ => None,
        };
        if let Some(why) = refusal {
            return Err(Error::invalid(OP, why).on(self.context().name()));
        }
        self.create_rc(send_cq, Some(recv_cq), srq, caps, backend)
    }

    /// Creates the QP once its CQs were checked against `backend`.
    fn create_rc(
        &self,
        cq: &Cq,
        recv_cq: Option<&Cq>,
        srq: Option<&Srq>,
        caps: RcCaps,
        backend: SendBackend,
    ) -> Result<RcQp<state::Reset>> {
        let ctx: &Context = self.context();
        let dev = ctx.query_device()?.0;
        let max_wr = dev.max_qp_wr.max(0) as u32;
        let max_sge = dev.max_sge.max(0) as u32;
        if caps.max_send_wr == 0
            || caps.max_send_wr > max_wr
            || caps.max_recv_wr > max_wr
            || caps.max_send_sge > max_sge
            || caps.max_recv_sge > max_sge
        {
            return Err(Error::invalid(
                "ibv_create_qp_ex (RC)",
                format!("capacities {caps:?} exceed this device's limits (max_qp_wr {max_wr}, max_sge {max_sge}) or are zero"),
            )
            .on(ctx.name()));
        }
        let cap = raw::ibv_qp_cap {
            max_send_wr: caps.max_send_wr,
            max_recv_wr: if srq.is_some() { 0 } else { caps.max_recv_wr },
            max_send_sge: caps.max_send_sge,
            max_recv_sge: if srq.is_some() { 0 } else { caps.max_recv_sge },
            max_inline_data: caps.max_inline_data,
        };
        let atomic_ops = raw::IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | raw::IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
        let send_ops = u64::from(if dev.atomic_cap == raw::IBV_ATOMIC_NONE {
            RC_DEFAULT_SEND_OPS & !atomic_ops
        } else {
            RC_DEFAULT_SEND_OPS
        });
        let mut attr = init_attr_ex(self, cq, srq, cap, raw::IBV_QPT_RC, send_ops);
        if let Some(r) = recv_cq {
            attr.recv_cq = r.as_raw_cq();
        }
        // The direct backend: a BlueFlame register of the QP's own, or no QP (see
        // `direct::register`).
        let own_register = match backend {
            SendBackend::Direct => Some(OwnRegister::new(self)?),
            SendBackend::WrApi => None,
        };
        if let Some(own) = &own_register {
            attr.pd = own.pd();
        }
        // SAFETY: the context, PD, CQs and SRQ are live; attr is initialised.
        let qp = unsafe { raw::ibv_create_qp_ex(ctx.as_raw(), &mut attr) };
        let qp = NonNull::new(qp).ok_or_else(|| {
            Error::last_os_error(
                "ibv_create_qp_ex (RC)",
                "check the capacities and the device's atomic capability",
            )
            .on(ctx.name())
        })?;
        // SAFETY: created with send-ops flags.
        let Some(qpx) = NonNull::new(unsafe { raw::ibv_qp_to_qp_ex(qp.as_ptr()) }) else {
            // SAFETY: destroys the QP created above, referenced nowhere else.
            unsafe { raw::ibv_destroy_qp(qp.as_ptr()) };
            return Err(Error::from_errno(
                "ibv_qp_to_qp_ex",
                libc::EOPNOTSUPP,
                "the provider has no extended post API",
            )
            .on(ctx.name()));
        };
        let direct = match backend {
            SendBackend::WrApi => None,
            SendBackend::Direct => match DirectSq::new(qp, attr.cap.max_send_wr, ctx.name()) {
                Ok(d) => Some(d),
                Err(e) => {
                    // SAFETY: destroys the QP created above, referenced nowhere else.
                    unsafe { raw::ibv_destroy_qp(qp.as_ptr()) };
                    return Err(e);
                }
            },
        };
        let mut parents = Parents::of(self, cq, srq);
        parents.own_register = own_register;
        parents.caps = attr.cap;
        parents.recv_cq = recv_cq.map(Cq::core);
        let mut raw_qp = QpRaw {
            qp,
            qpx,
            mqp: None,
            send_ops,
            dci_streams: false,
            // The library writes back the capacities it actually created.
            max_send_sge: attr.cap.max_send_sge,
            max_inline_data: attr.cap.max_inline_data,
            // On the wr API receives may share the CQ (the `wr_id` stays the caller's).
            sq: poster_for(attr.cap.max_send_wr, true, direct.as_ref()),
            direct: direct.is_some(),
            parents,
        };
        raw_qp.parents.direct = direct;
        raw_qp.register(cq);
        Ok(RcQp {
            raw: raw_qp,
            port: 0,
            _state: PhantomData,
            _not_sync: PhantomData,
        })
    }
}

impl<S> RcQp<S> {
    fn into_state<T>(self) -> RcQp<T> {
        RcQp {
            raw: self.raw,
            port: self.port,
            _state: PhantomData,
            _not_sync: PhantomData,
        }
    }

    /// Moves the QP with attributes computed elsewhere (the connection manager's
    /// `rdma_init_qp_attr`); the port is taken from them when the mask names it.
    #[cfg(feature = "cm")]
    pub(crate) fn modify_with<T>(
        mut self,
        attr: &mut raw::ibv_qp_attr,
        mask: u32,
        op: &'static str,
        hint: &'static str,
    ) -> std::result::Result<RcQp<T>, TransitionError<Self>> {
        match self.raw.modify(attr, mask, op, hint) {
            Ok(()) => {
                if mask & raw::IBV_QP_PORT != 0 {
                    self.port = attr.port_num;
                }
                Ok(self.into_state())
            }
            Err(error) => Err(TransitionError::new(error, self)),
        }
    }

    /// The same QP under another state marker, for a QP whose real state is unknown (a failed
    /// reset): its next transition reports the device's error.
    #[cfg(feature = "cm")]
    pub(crate) fn into_state_unchecked<T>(self) -> RcQp<T> {
        self.into_state()
    }

    /// The device the QP was created on.
    #[cfg(feature = "cm")]
    pub(crate) fn device_name(&self) -> &str {
        self.raw.device()
    }

    /// Whether the QP receives from an SRQ.
    #[cfg(feature = "cm")]
    pub(crate) fn has_srq(&self) -> bool {
        // SAFETY: the QP is live; srq is a plain pointer field.
        !unsafe { (*self.raw.qp.as_ptr()).srq }.is_null()
    }

    /// The QP number (to give to the peer).
    pub fn qp_num(&self) -> u32 {
        self.raw.qp_num()
    }

    /// The capacities the library created the QP with (requests may have been rounded up).
    pub fn caps(&self) -> raw::ibv_qp_cap {
        self.raw.parents.caps
    }

    /// Requests posted and not yet completed, as the crate counts them (at most
    /// `caps().max_send_wr`).
    pub fn outstanding(&self) -> u64 {
        self.raw.sq.outstanding()
    }

    /// The state the device reports.
    ///
    /// # Errors
    /// `ibv_query_qp` with its errno.
    pub fn query_state(&self) -> Result<QpState> {
        self.raw.query_state()
    }

    /// Posts one receive into the QP's own receive queue (not with an SRQ).
    ///
    /// # Errors
    /// EINVAL for an empty list; `ibv_post_recv` with the provider's errno (ENOMEM: queue full;
    /// EINVAL in RESET).
    #[inline]
    pub fn post_recv(&self, wr_id: u64, sges: &[Sge<'_>]) -> Result<()> {
        let mut wr = Sge::recv_wr(wr_id, sges, "ibv_post_recv")?;
        let mut bad = std::ptr::null_mut();
        // SAFETY: the QP is live; wr and SGEs outlive the call.
        let rc = unsafe { raw::ibv_post_recv(self.raw.qp.as_ptr(), &mut wr, &mut bad) };
        if rc != 0 {
            return Err(Error::from_errno(
                "ibv_post_recv",
                rc,
                "the receive queue is full, or the QP is in RESET or uses an SRQ",
            )
            .on(self.raw.device()));
        }
        Ok(())
    }

    /// Any state -> RESET (to recover from ERR, then INIT/RTR/RTS again).
    ///
    /// # Errors
    /// `ibv_modify_qp (RC RESET)`; the QP comes back unchanged.
    pub fn reset(self) -> std::result::Result<RcQp<state::Reset>, TransitionError<Self>> {
        match self.raw.to_reset("ibv_modify_qp (RC RESET)") {
            Ok(()) => Ok(self.into_state()),
            Err(error) => Err(TransitionError::new(error, self)),
        }
    }

    /// The raw QP, for interop.
    pub fn as_raw(&self) -> *mut raw::ibv_qp {
        self.raw.qp.as_ptr()
    }

    /// How the QP posts (chosen at creation, [`Pd::create_rc_qp_split`]).
    pub fn backend(&self) -> SendBackend {
        if self.raw.direct {
            SendBackend::Direct
        } else {
            SendBackend::WrApi
        }
    }

    /// Test hook of the differential test (`tests/direct_wqe.rs`), not an API: from now on the
    /// QP posts through `backend`, its send queue empty, the direct writer's ring position at
    /// `cur_post`, its send completions counted through `cq` (an ordinary CQ: the test polls
    /// only the wr API's requests, which the device executes).
    ///
    /// # Safety
    /// Only right after a RESET (and the way back to RTS), with nothing outstanding and nothing
    /// of this QP in `cq`, its send CQ; `cur_post` then is libmlx5's own position for this QP.
    /// The direct writer rings BlueFlame on the register libmlx5 gave this QP: no other thread
    /// may post on a QP of this context meanwhile (the register may be shared).
    ///
    /// # Errors
    /// As [`Pd::create_rc_qp_split`] for the direct backend's `mlx5dv_init_obj`.
    #[doc(hidden)]
    pub unsafe fn diff_test_backend(&mut self, cq: &Cq, backend: SendBackend, cur_post: u32) -> Result<()> {
        self.raw.switch_backend(cq, backend, cur_post, true)
    }
}

impl RcQp<state::Reset> {
    /// RESET -> INIT on `port`, granting peers `access`.
    ///
    /// # Errors
    /// `ibv_modify_qp (RC INIT)`; the QP comes back in RESET.
    pub fn init(mut self, port: u8, access: Access) -> std::result::Result<RcQp<state::Init>, TransitionError<Self>> {
        let mut attr = raw::ibv_qp_attr {
            qp_state: raw::IBV_QPS_INIT,
            port_num: port,
            pkey_index: 0,
            qp_access_flags: access.bits(),
            ..Default::default()
        };
        let mask = raw::IBV_QP_STATE | raw::IBV_QP_PKEY_INDEX | raw::IBV_QP_PORT | raw::IBV_QP_ACCESS_FLAGS;
        match self.raw.modify(
            &mut attr,
            mask,
            "ibv_modify_qp (RC INIT)",
            "check the port number (from 1) and the access flags",
        ) {
            Ok(()) => {
                self.port = port;
                Ok(self.into_state())
            }
            Err(error) => Err(TransitionError::new(error, self)),
        }
    }
}

impl RcQp<state::Init> {
    /// INIT -> RTR, connected to `remote`.
    ///
    /// # Errors
    /// EINVAL for an MTU other than 256..4096; `ibv_modify_qp (RC RTR)`; the QP comes back in INIT.
    pub fn rtr(self, remote: &RcRemote) -> std::result::Result<RcQp<state::Rtr>, TransitionError<Self>> {
        let Some(mtu) =
            (raw::IBV_MTU_256..=raw::IBV_MTU_4096).find(|&m| crate::context::mtu_bytes(m) == remote.mtu_bytes)
        else {
            return Err(TransitionError::new(
                Error::invalid("ibv_modify_qp (RC RTR)", "the MTU must be 256, 512, 1024, 2048 or 4096"),
                self,
            ));
        };
        let (mut attr, mask) = rtr_attr(remote, self.port, mtu);
        match self.raw.modify(
            &mut attr,
            mask,
            "ibv_modify_qp (RC RTR)",
            "check the peer's QP number, path (GID index on RoCE) and MTU",
        ) {
            Ok(()) => Ok(self.into_state()),
            Err(error) => Err(TransitionError::new(error, self)),
        }
    }
}

/// The INIT -> RTR attributes and mask of an RC QP on `port` connected to `remote` at path
/// MTU `mtu` (an IBV_MTU_* value).
pub(crate) fn rtr_attr(remote: &RcRemote, port: u8, mtu: raw::ibv_mtu) -> (raw::ibv_qp_attr, u32) {
    let attr = raw::ibv_qp_attr {
        qp_state: raw::IBV_QPS_RTR,
        path_mtu: mtu,
        dest_qp_num: remote.qp_num,
        rq_psn: remote.psn & 0x00FF_FFFF,
        max_dest_rd_atomic: remote.max_dest_rd_atomic,
        min_rnr_timer: remote.min_rnr_timer,
        ah_attr: remote.path.ah_attr(port),
        ..Default::default()
    };
    let mask = raw::IBV_QP_STATE
        | raw::IBV_QP_AV
        | raw::IBV_QP_PATH_MTU
        | raw::IBV_QP_DEST_QPN
        | raw::IBV_QP_RQ_PSN
        | raw::IBV_QP_MAX_DEST_RD_ATOMIC
        | raw::IBV_QP_MIN_RNR_TIMER;
    (attr, mask)
}

impl RcQp<state::Rtr> {
    /// RTR -> RTS.
    ///
    /// # Errors
    /// `ibv_modify_qp (RC RTS)`; the QP comes back in RTR.
    pub fn rts(self, rts: RtsAttr) -> std::result::Result<RcQp<state::Rts>, TransitionError<Self>> {
        let (mut attr, mask) = rts_attr(&rts);
        match self.raw.modify(
            &mut attr,
            mask,
            "ibv_modify_qp (RC RTS)",
            "check timeout, retry counts and max_rd_atomic",
        ) {
            Ok(()) => Ok(self.into_state()),
            Err(error) => Err(TransitionError::new(error, self)),
        }
    }
}

impl RcQp<state::Rts> {
    /// Adopts an RC QP created elsewhere, already in RTS; it is destroyed on drop.
    ///
    /// # Safety
    /// `qpx` must be the extended post API of a live RC QP in RTS (its `qp_base` the QP);
    /// `send_ops` must be exactly the `IBV_QP_EX_WITH_*` flags it was created with and `caps`
    /// its capacities as the library reported them at creation (the post path checks inline
    /// length and SGE count against them, and counts outstanding requests against
    /// `max_send_wr`: report each of its send completions with
    /// [`RcQp::report_completion`]); created with `sq_sig_all` 0; nothing else may destroy it
    /// or post on it; the objects it reports to must outlive it; report completions from one
    /// thread at a time.
    pub unsafe fn from_raw_parts(
        qpx: NonNull<raw::ibv_qp_ex>,
        send_ops: u64,
        caps: raw::ibv_qp_cap,
        device: &str,
    ) -> RcQp<state::Rts> {
        let raw_qp = QpRaw {
            qp: qpx.cast(),
            qpx,
            mqp: None,
            send_ops,
            dci_streams: false,
            max_send_sge: caps.max_send_sge,
            max_inline_data: caps.max_inline_data,
            sq: Poster::new(caps.max_send_wr, true),
            direct: false,
            parents: Box::new(Parents {
                device: device.into(),
                caps,
                ..Parents::default()
            }),
        };
        RcQp {
            raw: raw_qp,
            port: 1,
            _state: PhantomData,
            _not_sync: PhantomData,
        }
    }

    /// Gives back the send-queue credit of one completion of this QP polled elsewhere than
    /// through [`crate::Cq::poll`] on the CQ it was created with (which does it by itself).
    /// On the direct backend it retires nothing: its send CQ routes every completion (only
    /// [`crate::Cq::poll`] reads it).
    #[inline]
    pub fn report_completion(&self, c: &crate::cq::Completion) {
        let receive = c.opcode.is_some_and(crate::cq::WcOpcode::is_receive);
        self.raw.sq.complete(c.wr_id, c.status.is_success(), receive);
    }

    /// Opens a batch of work requests (`ibv_wr_start`).
    #[inline]
    pub fn batch(&mut self) -> Batch<'_, Rc> {
        Batch::start(&self.raw)
    }
}

impl<S> std::fmt::Debug for RcQp<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RcQp")
            .field("device", &self.raw.device())
            .field("qp_num", &self.raw.qp_num())
            .field("state", &std::any::type_name::<S>())
            .finish()
    }
}
