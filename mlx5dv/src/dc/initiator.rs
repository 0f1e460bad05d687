//! DC initiators: a typestate queue pair that posts to any DC target.

use super::{create_dc_qp, mtu_code, Mlx5Context};
use crate::context::mtu_bytes;
use crate::cq::Cq;
use crate::direct::register::OwnRegister;
use crate::direct::{DirectSq, SendBackend};
use crate::error::{Error, Result};
use crate::pd::Pd;
use crate::qp::{rts_attr, state, Parents, QpRaw, QpState, RtsAttr, TransitionError};
use crate::wr::{Batch, Dc};
use mlx5dv_raw as raw;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// Builds a DC initiator.
#[must_use]
pub struct DciBuilder<'a> {
    mlx5: &'a Mlx5Context,
    pd: &'a Pd,
    cq: &'a Cq,
    cap: raw::ibv_qp_cap,
    send_ops: u64,
    streams: Option<raw::mlx5dv_dci_streams>,
    backend: SendBackend,
    out_of_order: bool,
    pkey_index: u16,
}

/// The RC send operations a DCI enables by default.
pub const DCI_DEFAULT_SEND_OPS: u32 = raw::IBV_QP_EX_WITH_SEND
    | raw::IBV_QP_EX_WITH_SEND_WITH_IMM
    | raw::IBV_QP_EX_WITH_RDMA_WRITE
    | raw::IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM
    | raw::IBV_QP_EX_WITH_RDMA_READ;

impl<'a> DciBuilder<'a> {
    /// A DCI reporting to `cq`. Defaults: 128 sends of 1 SGE, 64 bytes inline, send /
    /// send-imm / write / write-imm / read enabled (add atomics with
    /// [`DciBuilder::with_atomics`]), no streams.
    pub fn new(mlx5: &'a Mlx5Context, pd: &'a Pd, cq: &'a Cq) -> Self {
        DciBuilder {
            mlx5,
            pd,
            cq,
            cap: raw::ibv_qp_cap {
                max_send_wr: 128,
                max_recv_wr: 0,
                max_send_sge: 1,
                max_recv_sge: 0,
                max_inline_data: 64,
            },
            send_ops: u64::from(DCI_DEFAULT_SEND_OPS),
            streams: None,
            backend: SendBackend::WrApi,
            out_of_order: false,
            pkey_index: 0,
        }
    }

    /// Send queue depth.
    pub fn max_send_wr(mut self, n: u32) -> Self {
        self.cap.max_send_wr = n;
        self
    }

    /// SGEs per send.
    pub fn max_send_sge(mut self, n: u32) -> Self {
        self.cap.max_send_sge = n;
        self
    }

    /// Inline data per send.
    pub fn max_inline_data(mut self, n: u32) -> Self {
        self.cap.max_inline_data = n;
        self
    }

    /// Enables compare-and-swap and fetch-and-add. The device must have atomics
    /// ([`Mlx5Context::has_atomics`]): without them [`DciBuilder::build`] fails with
    /// EOPNOTSUPP and says so.
    pub fn with_atomics(mut self) -> Self {
        self.send_ops |= u64::from(raw::IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | raw::IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
        self
    }

    /// DCI streams: 2^`log_concurrent` streams, up to 2^`log_errored` in error at once
    /// (bounded by [`Mlx5Caps::dci_streams`](super::Mlx5Caps::dci_streams): [`DciBuilder::build`]
    /// checks them first).
    pub fn streams(mut self, log_concurrent: u8, log_errored: u8) -> Self {
        self.streams = Some(raw::mlx5dv_dci_streams {
            log_num_concurent: log_concurrent,
            log_num_errored: log_errored,
        });
        self
    }

    /// Out-of-order data placement (`MLX5DV_QP_CREATE_OOO_DP`, rdma-core 55+): the DCTs this
    /// DCI reaches must have it too ([`crate::DctBuilder::out_of_order_placement`]); the DC
    /// address ([`crate::DcTargetAddr`]) does not carry it, so agreeing on it is the
    /// application's part. Their data may land in any order; completions stay in order. See
    /// the [module](crate::dc) documentation.
    ///
    /// [`DciBuilder::build`] refuses it (EOPNOTSUPP, saying why) unless the running libmlx5
    /// and the device report it for DC ([`super::Mlx5Caps::dc_out_of_order`]).
    pub fn out_of_order_placement(mut self) -> Self {
        self.out_of_order = true;
        self
    }

    /// The P_Key index [`DciBuilder::build_ready`] initialises the DCI with (default 0): the
    /// entry of the port's P_Key table its packets carry, which must match the target DCT's
    /// (a partition's full member reaches its full and limited members; two limited members
    /// never reach each other: their packets are dropped and the DCI sees ACK timeouts).
    pub fn pkey_index(mut self, index: u16) -> Self {
        self.pkey_index = index;
        self
    }

    /// How the DCI posts: libmlx5's wr API (the default) or the crate's direct writer
    /// ([`SendBackend::Direct`], which needs a CQ from `Context::create_direct_cq`).
    pub fn backend(mut self, backend: SendBackend) -> Self {
        self.backend = backend;
        self
    }

    /// Refuses a backend that does not match the CQ: the direct CQ maps completions through
    /// the direct writer's WQE indexes, which a wr-API DCI does not fill.
    fn check_backend(&self) -> Result<()> {
        const OP: &str = "mlx5dv_create_qp (DCI)";
        match (self.backend, self.cq.is_direct()) {
            (SendBackend::Direct, false) => Err(Error::invalid(
                OP,
                "a DCI with the direct backend needs a direct CQ (Context::create_direct_cq): libmlx5's CQ cannot name the requests the direct writer posts",
            )
            .on(self.mlx5.context().name())),
            (SendBackend::WrApi, true) => Err(Error::invalid(
                OP,
                "a direct CQ (Context::create_direct_cq) serves only DCIs with the direct backend (DciBuilder::backend(SendBackend::Direct)): give this DCI a CQ from Context::create_cq",
            )
            .on(self.mlx5.context().name())),
            _ => Ok(()),
        }
    }

    /// Refuses streams the device does not have, naming the capability.
    fn check_streams(&self, asked: raw::mlx5dv_dci_streams) -> Result<()> {
        const OP: &str = "mlx5dv_create_qp (DCI streams)";
        let ctx = self.mlx5.context();
        match self.mlx5.caps()?.dci_streams {
            None | Some((0, _)) => Err(Error::from_errno(
                OP,
                libc::EOPNOTSUPP,
                "the device reports no DCI streams (mlx5dv_query_device: dci_streams_caps.max_log_num_concurent is 0 or absent): build the DCI without streams",
            )
            .on(ctx.name())),
            Some((max_concurrent, max_errored))
                if asked.log_num_concurent > max_concurrent || asked.log_num_errored > max_errored =>
            {
                Err(Error::invalid(
                    OP,
                    format!(
                        "log_concurrent {} / log_errored {} exceed the device's dci_streams_caps (max_log_num_concurent {max_concurrent}, max_log_num_errored {max_errored})",
                        asked.log_num_concurent, asked.log_num_errored
                    ),
                )
                .on(ctx.name()))
            }
            Some(_) => Ok(()),
        }
    }

    /// Creates the DCI (in RESET).
    ///
    /// Every request may be signaled, so the CQ must hold a completion for each request the
    /// send queue can have outstanding (`max_send_wr` as the library rounded it): a CQ that
    /// overruns stops reporting completions and the requests hang. DCIs sharing a CQ must
    /// fit it together; that sum is the caller's to keep (a [`crate::DciPool`] checks it).
    ///
    /// # Errors
    /// EINVAL for a zero send queue, and for a CQ smaller than the send queue (the message
    /// names both sizes; the DCI is destroyed); with streams, EOPNOTSUPP when the device reports no DCI
    /// streams and EINVAL for sizes beyond its `dci_streams_caps` (both before any library
    /// call); EOPNOTSUPP for [`DciBuilder::out_of_order_placement`] where the running libmlx5
    /// or the device lacks it (before any creation); EINVAL when the backend and the CQ do not match (the direct backend needs a CQ
    /// from `Context::create_direct_cq`, which serves only the direct backend);
    /// `mlx5dv_create_qp (DCI)` with the library's errno (EOPNOTSUPP: not an mlx5 device with
    /// DC); on the direct backend, `ibv_alloc_td`'s errno where the provider gives no thread
    /// domain (no register of the DCI's own: build it on the wr API), and
    /// `mlx5dv_init_obj (direct send queue)` when libmlx5 does not
    /// describe a ring the writer takes (the DCI is destroyed; build it on the wr API).
    pub fn build(self) -> Result<Dci<state::Reset>> {
        let ctx = self.mlx5.context();
        self.check_backend()?;
        if let Some(asked) = self.streams {
            self.check_streams(asked)?;
        }
        if self.out_of_order {
            self.mlx5
                .check_out_of_order("mlx5dv_create_qp (DCI, out-of-order placement)", "DCI")?;
        }
        // The requester limit RTS is checked against (None: the library does not report it).
        let max_rd_atomic = self.mlx5.caps()?.max_dc_requester_rd_atomic;
        if self.cap.max_send_wr == 0 || self.cap.max_send_sge == 0 {
            return Err(Error::invalid(
                "mlx5dv_create_qp (DCI)",
                "a DCI needs max_send_wr and max_send_sge of at least 1",
            )
            .on(ctx.name()));
        }
        let mut comp_mask = raw::MLX5DV_QP_INIT_ATTR_MASK_DC | raw::MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS;
        let key_or_streams = match self.streams {
            Some(streams) => {
                comp_mask |= raw::MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
                raw::mlx5dv_dc_init_attr_key_or_streams { dci_streams: streams }
            }
            None => raw::mlx5dv_dc_init_attr_key_or_streams { dct_access_key: 0 },
        };
        let mut dv = raw::mlx5dv_qp_init_attr {
            comp_mask: u64::from(comp_mask),
            create_flags: raw::MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE
                | if self.out_of_order {
                    raw::MLX5DV_QP_CREATE_OOO_DP
                } else {
                    0
                },
            dc_init_attr: raw::mlx5dv_dc_init_attr {
                dc_type: raw::MLX5DV_DCTYPE_DCI,
                key_or_streams,
            },
            send_ops_flags: 0,
        };
        // The direct backend: a BlueFlame register of the DCI's own, or no DCI (see
        // `direct::register`).
        let own_register = match self.backend {
            SendBackend::Direct => Some(OwnRegister::new(self.pd)?),
            SendBackend::WrApi => None,
        };
        let (qp, caps) = create_dc_qp(
            self.pd,
            self.cq,
            None,
            self.cap,
            self.send_ops,
            &mut dv,
            own_register.as_ref(),
            "mlx5dv_create_qp (DCI)",
        )?;
        // Every request may be signaled: the CQ must hold the whole send queue (as the library
        // rounded it), or it overruns and stops reporting completions.
        if let Err(e) = self
            .cq
            .check_room("DciBuilder::build", u64::from(caps.max_send_wr), || {
                format!(
                    "a DCI with max_send_wr {} (as the library rounded {})",
                    caps.max_send_wr, self.cap.max_send_wr
                )
            })
        {
            // SAFETY: destroys the QP created above, which nothing else references.
            unsafe { raw::ibv_destroy_qp(qp.as_ptr()) };
            return Err(e);
        }
        // SAFETY: created with send-ops flags, so the extended post API exists.
        let qpx = NonNull::new(unsafe { raw::ibv_qp_to_qp_ex(qp.as_ptr()) });
        let Some(qpx) = qpx else {
            // SAFETY: destroys the QP created above, which nothing else references.
            unsafe { raw::ibv_destroy_qp(qp.as_ptr()) };
            return Err(
                Error::from_errno("ibv_qp_to_qp_ex", libc::EOPNOTSUPP, "the DCI has no extended post API")
                    .on(ctx.name()),
            );
        };
        // SAFETY: the QP was created by mlx5dv_create_qp, so it is an mlx5 QP.
        let Some(mqp) = NonNull::new(unsafe { raw::mlx5dv_qp_ex_from_ibv_qp_ex(qpx.as_ptr()) }) else {
            // SAFETY: destroys the QP created above, which nothing else references.
            unsafe { raw::ibv_destroy_qp(qp.as_ptr()) };
            return Err(Error::from_errno(
                "mlx5dv_qp_ex_from_ibv_qp_ex",
                libc::EOPNOTSUPP,
                "the DCI has no mlx5 post API (mlx5dv_qp_ex)",
            )
            .on(ctx.name()));
        };
        let direct = match self.backend {
            SendBackend::WrApi => None,
            SendBackend::Direct => match DirectSq::new(qp, caps.max_send_wr, ctx.name()) {
                Ok(d) => Some(d),
                Err(e) => {
                    // SAFETY: destroys the QP created above, which nothing else references.
                    unsafe { raw::ibv_destroy_qp(qp.as_ptr()) };
                    return Err(e);
                }
            },
        };
        let mut raw_qp = QpRaw {
            qp,
            qpx,
            mqp: Some(mqp),
            send_ops: self.send_ops,
            dci_streams: self.streams.is_some(),
            max_send_sge: caps.max_send_sge,
            max_inline_data: caps.max_inline_data,
            // A DCI has no receive queue: every completion of its number is a send's. The
            // direct backend's completions name WQE indexes, mapped to requests.
            sq: crate::qp::poster_for(caps.max_send_wr, false, direct.as_ref()),
            direct: direct.is_some(),
            parents: Parents::of(self.pd, self.cq, None),
        };
        raw_qp.parents.direct = direct;
        raw_qp.parents.own_register = own_register;
        raw_qp.parents.caps = caps;
        raw_qp.parents.dc_rd_atomic_limit = max_rd_atomic;
        raw_qp.register(self.cq);
        Ok(Dci {
            raw: raw_qp,
            port: 0,
            pkey_index: 0,
            mtu: 0,
            rts: RtsAttr::default(),
            _state: PhantomData,
            _not_sync: PhantomData,
        })
    }

    /// Creates the DCI and takes it to RTS on `port` with path MTU `mtu_bytes` (the common case).
    ///
    /// # Errors
    /// Whatever step failed; the half-built DCI is destroyed.
    pub fn build_ready(self, port: u8, mtu_bytes: u32, rts: RtsAttr) -> Result<Dci<state::Rts>> {
        let pkey_index = self.pkey_index;
        let dci = self.build()?;
        let dci = dci.init(port, pkey_index).map_err(Error::from)?;
        let dci = dci.rtr(mtu_bytes).map_err(Error::from)?;
        dci.rts(rts).map_err(Error::from)
    }
}

/// How a DCI adopted with [`Dci::from_raw_parts`] was created and brought up.
#[derive(Copy, Clone, Debug)]
pub struct DciParts<'d> {
    /// `IBV_QP_EX_WITH_*` flags it was created with.
    pub send_ops: u64,
    /// Whether it was created with DCI streams.
    pub dci_streams: bool,
    /// Its capacities as the library reported them at creation.
    pub caps: raw::ibv_qp_cap,
    /// Port it was initialised on.
    pub port: u8,
    /// P_Key index it was initialised with.
    pub pkey_index: u16,
    /// Path MTU of its RTR transition.
    pub mtu: raw::ibv_mtu,
    /// Its RTS attributes.
    pub rts: RtsAttr,
    /// Device name, for error messages.
    pub device: &'d str,
    /// The CQ its send completions go to, polled with [`Cq::poll`]: completions then give
    /// send-queue credit back by themselves. Without it, report each completion of this DCI
    /// with [`Dci::report_completion`].
    pub cq: Option<&'d Cq>,
}

/// A DC initiator in state `S` ([`state::Reset`] … [`state::Rts`]). Only `Dci<Rts>` posts.
///
/// A DCI holds its PD and CQ, moves between threads (`Send`) and posts from one thread at a
/// time (`!Sync`).
pub struct Dci<S> {
    raw: QpRaw,
    port: u8,
    pkey_index: u16,
    mtu: raw::ibv_mtu,
    rts: RtsAttr,
    _state: PhantomData<fn() -> S>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl<S> Dci<S> {
    fn into_state<T>(self) -> Dci<T> {
        Dci {
            raw: self.raw,
            port: self.port,
            pkey_index: self.pkey_index,
            mtu: self.mtu,
            rts: self.rts,
            _state: PhantomData,
            _not_sync: PhantomData,
        }
    }

    /// The DCI's QP number.
    pub fn qp_num(&self) -> u32 {
        self.raw.qp_num()
    }

    /// The capacities the library created the DCI with (requests may have been rounded up):
    /// the limits the post path enforces for inline data and SGE lists.
    pub fn caps(&self) -> raw::ibv_qp_cap {
        self.raw.parents.caps
    }

    /// The state the device reports (e.g. to see that it went to ERR after a failure).
    ///
    /// # Errors
    /// `ibv_query_qp` with its errno.
    pub fn query_state(&self) -> Result<QpState> {
        self.raw.query_state()
    }

    /// The raw QP, for interop.
    pub fn as_raw(&self) -> *mut raw::ibv_qp {
        self.raw.qp.as_ptr()
    }

    /// How the DCI posts ([`DciBuilder::backend`]).
    pub fn backend(&self) -> SendBackend {
        if self.raw.direct {
            SendBackend::Direct
        } else {
            SendBackend::WrApi
        }
    }
}

impl Dci<state::Reset> {
    /// RESET -> INIT on `port` (P_Key index `pkey_index`).
    ///
    /// # Errors
    /// `ibv_modify_qp (DCI INIT)` with the library's errno; the DCI comes back in RESET.
    pub fn init(mut self, port: u8, pkey_index: u16) -> std::result::Result<Dci<state::Init>, TransitionError<Self>> {
        let mut attr = raw::ibv_qp_attr {
            qp_state: raw::IBV_QPS_INIT,
            port_num: port,
            pkey_index,
            ..Default::default()
        };
        match self.raw.modify(
            &mut attr,
            raw::IBV_QP_STATE | raw::IBV_QP_PKEY_INDEX | raw::IBV_QP_PORT,
            "ibv_modify_qp (DCI INIT)",
            "check the port number (from 1) and P_Key index",
        ) {
            Ok(()) => {
                self.port = port;
                self.pkey_index = pkey_index;
                Ok(self.into_state())
            }
            Err(error) => Err(TransitionError::new(error, self)),
        }
    }
}

impl Dci<state::Init> {
    /// INIT -> RTR with path MTU `mtu_bytes` (256..=4096).
    ///
    /// # Errors
    /// EINVAL for another MTU; `ibv_modify_qp (DCI RTR)`; the DCI comes back in INIT.
    pub fn rtr(mut self, mtu_bytes: u32) -> std::result::Result<Dci<state::Rtr>, TransitionError<Self>> {
        let Some(mtu) = mtu_code(mtu_bytes) else {
            return Err(TransitionError::new(
                Error::invalid(
                    "ibv_modify_qp (DCI RTR)",
                    "the MTU must be 256, 512, 1024, 2048 or 4096",
                ),
                self,
            ));
        };
        let mut attr = raw::ibv_qp_attr {
            qp_state: raw::IBV_QPS_RTR,
            path_mtu: mtu,
            ..Default::default()
        };
        attr.ah_attr.port_num = self.port;
        match self.raw.modify(
            &mut attr,
            raw::IBV_QP_STATE | raw::IBV_QP_PATH_MTU,
            "ibv_modify_qp (DCI RTR)",
            "check the MTU against the port's",
        ) {
            Ok(()) => {
                self.mtu = mtu;
                Ok(self.into_state())
            }
            Err(error) => Err(TransitionError::new(error, self)),
        }
    }
}

impl Dci<state::Rtr> {
    /// RTR -> RTS.
    ///
    /// # Errors
    /// EINVAL when `rts.max_rd_atomic` exceeds the device's DC requester limit
    /// ([`super::Mlx5Caps::max_dc_requester_rd_atomic`], where the library reports it); then
    /// `ibv_modify_qp (DCI RTS)`. Either way the DCI comes back in RTR.
    pub fn rts(mut self, rts: RtsAttr) -> std::result::Result<Dci<state::Rts>, TransitionError<Self>> {
        let limit = self.raw.parents.dc_rd_atomic_limit;
        if let Some(limit) = limit.filter(|&l| u64::from(rts.max_rd_atomic) > l) {
            let error = Error::invalid(
                "ibv_modify_qp (DCI RTS)",
                format!(
                    "max_rd_atomic {} exceeds the device's DC requester limit of {limit} outstanding reads/atomics per DCI (mlx5dv_context.max_dc_rd_atom): lower RtsAttr::max_rd_atomic",
                    rts.max_rd_atomic
                ),
            )
            .on(self.raw.device());
            return Err(TransitionError::new(error, self));
        }
        let (mut attr, mask) = rts_attr(&rts);
        match self.raw.modify(
            &mut attr,
            mask,
            "ibv_modify_qp (DCI RTS)",
            "check timeout, retry counts and max_rd_atomic against the device",
        ) {
            Ok(()) => {
                self.rts = rts;
                Ok(self.into_state())
            }
            Err(error) => Err(TransitionError::new(error, self)),
        }
    }
}

impl Dci<state::Rts> {
    /// Adopts a DCI created elsewhere, already in RTS; it is destroyed on drop. `parts` says
    /// how it was created and brought up, so that the post path checks against its real
    /// capacities and [`Dci::recover`] brings it back exactly as it was.
    ///
    /// # Safety
    /// `qpx` must be the extended post API of a live mlx5 DCI in RTS (its `qp_base` the QP) and
    /// `mqp` its `mlx5dv_qp_ex`; `parts` must describe it truthfully (`send_ops` exactly the
    /// `IBV_QP_EX_WITH_*` flags it was created with, `dci_streams` only if it was created with
    /// `MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS`: in libmlx5 before 37 the
    /// `wr_set_dc_addr_stream` slot overlaps other data, so nothing at run time can check it;
    /// `caps` as the library reported them at creation; created with `sq_sig_all` 0); nothing
    /// else may destroy it or post on it; its PD (and its CQ unless given in `parts.cq`, which
    /// the DCI then holds) must outlive it. Its requests carry the crate's slot numbers as
    /// their `wr_id`s: [`Cq::poll`] and [`Dci::report_completion`] give the caller's back.
    /// When `parts.cq` is given, that CQ must be polled only through [`Cq::poll`] on that very
    /// `Cq` handle, from the one thread holding it at a time: never through the raw CQ
    /// (`ibv_poll_cq`, `ibv_start_poll`, another handle over the same CQ), which would take
    /// completions without giving their credit back. Otherwise every completion of this DCI
    /// must be reported, once, with [`Dci::report_completion`], from the thread that holds
    /// the DCI (the credit is the DCI's own state, which is not `Sync`).
    ///
    /// # Errors
    /// EINVAL when `parts.cq` is a direct CQ ([`crate::Context::create_direct_cq`]): the
    /// adopted DCI posts through libmlx5's wr API, whose completions a direct CQ cannot map to
    /// requests (each would be refused, and the DCI never get its credit back).
    pub unsafe fn from_raw_parts(
        qpx: NonNull<raw::ibv_qp_ex>,
        mqp: NonNull<raw::mlx5dv_qp_ex>,
        parts: DciParts<'_>,
    ) -> Result<Dci<state::Rts>> {
        if let Some(cq) = parts.cq {
            cq.refuse_if_direct("Dci::from_raw_parts", "DCI adopted on the wr API")?;
        }
        let raw_qp = QpRaw {
            qp: qpx.cast(),
            qpx,
            mqp: Some(mqp),
            send_ops: parts.send_ops,
            dci_streams: parts.dci_streams,
            max_send_sge: parts.caps.max_send_sge,
            max_inline_data: parts.caps.max_inline_data,
            sq: crate::sq_accounting::Poster::new(parts.caps.max_send_wr, false),
            direct: false,
            parents: Box::new(Parents {
                device: parts.device.into(),
                cq: parts.cq.map(Cq::core),
                caps: parts.caps,
                ..Parents::default()
            }),
        };
        if let Some(cq) = parts.cq {
            raw_qp.register(cq);
        }
        Ok(Dci {
            raw: raw_qp,
            port: parts.port,
            pkey_index: parts.pkey_index,
            mtu: parts.mtu,
            rts: parts.rts,
            _state: PhantomData,
            _not_sync: PhantomData,
        })
    }

    /// Gives back the send-queue credit of one completion of this DCI polled elsewhere than
    /// through [`Cq::poll`], and puts the request's own `wr_id` into `c`: a DCI's work
    /// requests carry the crate's slot number as their `wr_id` (so that completions in any
    /// order name their request exactly), which [`Cq::poll`] maps back by itself. For a DCI
    /// whose CQ the crate polls (built by the crate, or adopted with [`DciParts::cq`]) only
    /// the `wr_id` is mapped: that CQ's [`Cq::poll`] gives the credit back, and counting it
    /// here too would count it twice. A completion that names no request of this DCI is left
    /// as it is.
    #[inline]
    pub fn report_completion(&self, c: &mut crate::cq::Completion) {
        if let Some(wr_id) = self.raw.sq.complete(c.wr_id, c.status.is_success(), false) {
            c.wr_id = wr_id;
        }
    }

    /// Requests posted and not yet completed, as the crate counts them (at most
    /// `caps().max_send_wr`).
    pub fn outstanding(&self) -> u64 {
        self.raw.sq.outstanding()
    }

    /// Opens a batch of work requests (`ibv_wr_start`); every request names its destination.
    #[inline]
    pub fn batch(&mut self) -> Batch<'_, Dc> {
        Batch::start(&self.raw)
    }

    /// Brings a DCI that went to ERR (after a failed request) back to RTS with every setting
    /// it was brought up with (port, P_Key index, MTU, RTS timing): RESET, INIT, RTR, RTS.
    ///
    /// Poll the CQ first if its completions matter: the RESET step discards this DCI's
    /// completions still in the CQ (libmlx5's `mlx5_modify_qp` -> `mlx5_cq_clean`; on the
    /// direct backend ([`SendBackend::Direct`]) the crate cleans the direct CQ the same way,
    /// since libmlx5 leaves it alone), so whatever was not polled before the call is gone after
    /// it, and none can be taken for a request posted after it.
    ///
    /// # Errors
    /// The failing transition; the DCI comes back (in an unknown state: call again or drop it).
    pub fn recover(self) -> std::result::Result<Dci<state::Rts>, TransitionError<Self>> {
        let (port, pkey_index, mtu_b, rts) = (self.port, self.pkey_index, mtu_bytes(self.mtu), self.rts);
        if let Err(error) = self.raw.to_reset("ibv_modify_qp (DCI RESET)") {
            return Err(TransitionError::new(error, self));
        }
        let reset: Dci<state::Reset> = self.into_state();
        let init = match reset.init(port, pkey_index) {
            Ok(dci) => dci,
            Err(e) => return Err(e.map(Dci::into_state)),
        };
        let rtr = match init.rtr(mtu_b) {
            Ok(dci) => dci,
            Err(e) => return Err(e.map(Dci::into_state)),
        };
        rtr.rts(rts).map_err(|e| e.map(Dci::into_state))
    }

    /// Test hook of the differential test (`tests/direct_wqe.rs`), not an API: from now on the
    /// DCI posts through `backend`, its send queue empty, the direct writer's ring position at
    /// `cur_post` (libmlx5's after a RESET is 0; the test puts the writer where libmlx5 got
    /// by executing requests).
    ///
    /// # Safety
    /// Only right after [`Dci::recover`] (RESET -> RTS), with nothing outstanding and nothing
    /// of this DCI in `cq`, its CQ; `cur_post` then is libmlx5's own position for this QP. The
    /// direct writer rings BlueFlame on the register libmlx5 gave this DCI: no other thread may
    /// post on a QP of this context meanwhile (the register may be shared).
    ///
    /// # Errors
    /// As [`DciBuilder::build`] for the direct backend's `mlx5dv_init_obj`.
    #[doc(hidden)]
    pub unsafe fn diff_test_backend(&mut self, cq: &Cq, backend: SendBackend, cur_post: u32) -> Result<()> {
        self.raw.switch_backend(cq, backend, cur_post, false)
    }

    /// Moves the DCI to ERR (every request outstanding completes flushed), for a recovery
    /// that [`Dci::reset_stream`] could not do (the pool escalates to RESET-to-RTS this way),
    /// or to stop a pool ([`crate::DciPool::stop`]).
    pub(crate) fn force_error(&mut self) -> Result<()> {
        let mut attr = raw::ibv_qp_attr {
            qp_state: raw::IBV_QPS_ERR,
            ..Default::default()
        };
        self.raw.modify(
            &mut attr,
            raw::IBV_QP_STATE,
            "ibv_modify_qp (DCI ERR)",
            "the DCI could not be moved to ERR, so the device may still execute what was posted on it; destroy the \
             pool's DCIs and create new ones",
        )
    }

    /// `mlx5dv_dci_stream_id_reset` on a DCI built with streams: 0, or the library's errno.
    /// Makes no [`Error`] (a refusal allocates nothing: the pool's poll escalates on it).
    pub(crate) fn reset_stream_code(&mut self, stream_id: u16) -> i32 {
        if !self.raw.dci_streams {
            return libc::EINVAL;
        }
        // SAFETY: the QP is a live mlx5 DCI with streams (checked above).
        unsafe { raw::mlx5dv_dci_stream_id_reset(self.raw.qp.as_ptr(), stream_id) }
    }

    /// Resets DCI stream `stream_id` after an error on it, without taking the DCI to ERR
    /// (`mlx5dv_dci_stream_id_reset`, rdma-core 37+).
    ///
    /// # Errors
    /// EINVAL when the DCI was built without streams; the library's errno otherwise.
    pub fn reset_stream(&mut self, stream_id: u16) -> Result<()> {
        if !self.raw.dci_streams {
            return Err(
                Error::invalid("mlx5dv_dci_stream_id_reset", "this DCI was built without DCI streams")
                    .on(self.raw.device()),
            );
        }
        let rc = self.reset_stream_code(stream_id);
        if rc != 0 {
            let hint = if rc == libc::EOPNOTSUPP {
                // mlx5.c: not RTS, no qpc_extension cap, or max_log_num_errored == 0.
                "the DCI must be in RTS on a device with the qpc_extension cap and errored streams (max_log_num_errored > 0)"
            } else {
                "the firmware refused the reset: reset only a stream that is in error"
            };
            return Err(Error::from_errno("mlx5dv_dci_stream_id_reset", rc, hint).on(self.raw.device()));
        }
        Ok(())
    }
}

impl<S> std::fmt::Debug for Dci<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dci")
            .field("device", &self.raw.device())
            .field("qp_num", &self.raw.qp_num())
            .field("state", &std::any::type_name::<S>())
            .finish()
    }
}
