//! The Dynamically Connected transport: mlx5 capabilities, DC targets ([`Dct`]) and DC
//! initiators ([`Dci`]).
//!
//! A node needs one DCT (on an SRQ) to be reached by anyone, and a few DCIs to reach anyone:
//! every work request on a DCI names its destination ([`crate::DcPeer`]).
//!
//! The DCT number exists only on a ready [`Dct`]: the device assigns it when the DCT reaches
//! RTR, and the builder returns nothing before that.
//!
//! ```compile_fail,E0599
//! # fn f(b: mlx5dv::DctBuilder<'_, '_>) {
//! let n = b.dct_number(); // error: a DCT has no number until it is built (RTR)
//! # }
//! ```
//!
//! Only a DCI in RTS can post:
//!
//! ```compile_fail,E0599
//! # fn f(dci: &mut mlx5dv::Dci<'_, mlx5dv::state::Rtr>) {
//! let batch = dci.batch(); // error: no `batch` before RTS
//! # }
//! ```
//!
//! A DCI posts from one thread: it is not `Send` (its CQ is polled from the same thread).
//!
//! ```compile_fail,E0277
//! # fn f(dci: mlx5dv::Dci<'static, mlx5dv::state::Rts>) {
//! std::thread::spawn(move || drop(dci)); // error: Dci is not Send
//! # }
//! ```

use crate::context::{mtu_bytes, Context};
use crate::cq::Cq;
use crate::error::{Error, Result};
use crate::mr::Access;
use crate::pd::Pd;
use crate::qp::{init_attr_ex, modify_qp, rts_attr, state, QpRaw, QpState, RtsAttr, TransitionError};
use crate::srq::Srq;
use crate::wr::{Batch, Dc};
use mlx5dv_raw as raw;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// A 64-bit DC access key: initiators must present the key of the DCT they reach. A secret:
/// never shown by `Debug`.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct DcKey(u64);

impl DcKey {
    /// A key with this value.
    pub const fn new(key: u64) -> DcKey {
        DcKey(key)
    }

    /// The value, for handing to the library or to a trusted peer.
    pub const fn expose(&self) -> u64 {
        self.0
    }
}

impl std::fmt::Debug for DcKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DcKey(<redacted>)")
    }
}

/// The mlx5 view of an open device: proof that the mlx5 provider drives it.
#[derive(Debug)]
pub struct Mlx5Context<'ctx> {
    ctx: &'ctx Context,
}

/// DC-related capabilities from `mlx5dv_query_device`; `None` where the device or the running
/// library did not report the field.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Mlx5Caps {
    /// `MLX5DV_CONTEXT_FLAGS_*`.
    pub flags: u64,
    /// DC on-demand-paging capabilities (`IBV_ODP_SUPPORT_*` bits).
    pub dc_odp_caps: Option<u32>,
    /// DCI streams: (max log2 concurrent, max log2 errored).
    pub dci_streams: Option<(u8, u8)>,
    /// Maximum outstanding RDMA read/atomic on a DCT.
    pub max_dc_rd_atom: Option<u64>,
    /// Maximum outstanding RDMA read/atomic on a DCI.
    pub max_dc_init_rd_atom: Option<u64>,
}

impl Context {
    /// The mlx5 view of this device, needed for DC.
    ///
    /// # Errors
    /// EOPNOTSUPP when the device is not driven by the mlx5 provider (`mlx5dv_is_supported`),
    /// e.g. soft-RoCE: DC needs a ConnectX-5 or newer.
    pub fn mlx5(&self) -> Result<Mlx5Context<'_>> {
        // SAFETY: the context is open; its device pointer is valid while it is.
        let supported = unsafe { raw::mlx5dv_is_supported((*self.as_raw()).device) };
        if !supported {
            return Err(Error::from_errno(
                "mlx5dv_is_supported",
                libc::EOPNOTSUPP,
                format!("{} is not an mlx5 device; DC needs ConnectX-5 or newer", self.name()),
            )
            .on(self.name()));
        }
        Ok(Mlx5Context { ctx: self })
    }
}

impl<'ctx> Mlx5Context<'ctx> {
    /// Whether the device executes remote atomics for this function (`ibv_query_device`
    /// `atomic_cap` other than `IBV_ATOMIC_NONE`; mlx5_ib reports NONE for a function whose
    /// atomic endianness mode is not host order, e.g. many VFs).
    ///
    /// # Errors
    /// `ibv_query_device` with its errno.
    pub fn has_atomics(&self) -> Result<bool> {
        Ok(self.ctx.query_device()?.0.atomic_cap != raw::IBV_ATOMIC_NONE)
    }

    /// The underlying context.
    pub fn context(&self) -> &'ctx Context {
        self.ctx
    }

    /// DC capabilities (`mlx5dv_query_device` with the DC-ODP, DCI-streams and DC-atomic masks).
    ///
    /// # Errors
    /// `mlx5dv_query_device` with its errno.
    pub fn caps(&self) -> Result<Mlx5Caps> {
        // SAFETY: all-zero is a valid mlx5dv_context (integers and a null pointer).
        let mut out: raw::mlx5dv_context = unsafe { std::mem::zeroed() };
        let asked = raw::MLX5DV_CONTEXT_MASK_DC_ODP_CAPS
            | raw::MLX5DV_CONTEXT_MASK_DCI_STREAMS
            | raw::MLX5DV_CONTEXT_MASK_MAX_DC_RD_ATOM;
        out.comp_mask = u64::from(asked);
        // SAFETY: the context is open; out is the newest (largest) layout.
        let rc = unsafe { raw::mlx5dv_query_device(self.ctx.as_raw(), &mut out) };
        if rc != 0 {
            return Err(
                Error::from_errno("mlx5dv_query_device", rc, "the device did not report mlx5 capabilities")
                    .on(self.ctx.name()),
            );
        }
        let has = |bit: u32| out.comp_mask & u64::from(bit) != 0;
        Ok(Mlx5Caps {
            flags: out.flags,
            dc_odp_caps: has(raw::MLX5DV_CONTEXT_MASK_DC_ODP_CAPS).then_some(out.dc_odp_caps),
            dci_streams: has(raw::MLX5DV_CONTEXT_MASK_DCI_STREAMS).then_some((
                out.dci_streams_caps.max_log_num_concurent,
                out.dci_streams_caps.max_log_num_errored,
            )),
            max_dc_rd_atom: has(raw::MLX5DV_CONTEXT_MASK_MAX_DC_RD_ATOM).then_some(out.max_dc_rd_atom),
            max_dc_init_rd_atom: has(raw::MLX5DV_CONTEXT_MASK_MAX_DC_RD_ATOM).then_some(out.max_dc_init_rd_atom),
        })
    }

    /// The real test of DC support: creates a DCT on `port` and takes it to RTR, then frees it.
    /// Returns the DCT number the device assigned. `sgid_index` is needed on RoCE ports.
    ///
    /// # Errors
    /// Whatever step failed, e.g. `mlx5dv_create_qp (DCT)` with EOPNOTSUPP on an HCA without DC.
    pub fn probe_dc(&self, port: u8, sgid_index: Option<u8>) -> Result<u32> {
        let pd = self.ctx.alloc_pd()?;
        let cq = self.ctx.create_cq(16)?;
        let srq = pd.create_srq(16, 1)?;
        let mut builder = DctBuilder::new(self, &pd, &cq, &srq, DcKey::new(0x0bad_c0de)).port(port);
        if let Some(index) = sgid_index {
            builder = builder.gid_index(index);
        }
        let dct = builder.build()?;
        Ok(dct.dct_number())
    }
}

fn create_dc_qp(
    pd: &Pd<'_>,
    cq: &Cq<'_>,
    srq: Option<&Srq<'_>>,
    cap: raw::ibv_qp_cap,
    send_ops: u64,
    dv: &mut raw::mlx5dv_qp_init_attr,
    op: &'static str,
) -> Result<(NonNull<raw::ibv_qp>, raw::ibv_qp_cap)> {
    let atomic_ops = u64::from(raw::IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | raw::IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
    let ctx = pd.context();
    let mut attr = init_attr_ex(pd, cq, srq, cap, raw::IBV_QPT_DRIVER, send_ops);
    // SAFETY: the context, PD, CQ and SRQ are live; both attribute structs are initialised.
    let qp = unsafe { raw::mlx5dv_create_qp(ctx.as_raw(), &mut attr, dv) };
    // The library writes back the capacities it actually created (mlx5: rounded up).
    let cap = attr.cap;
    NonNull::new(qp).map(|qp| (qp, cap)).ok_or_else(|| {
        let err = Error::last_os_error(op, "");
        let hint = if err.is_not_supported() && send_ops & atomic_ops != 0 {
            // libmlx5 refuses atomic send ops without the device's atomic capability
            // (mlx5_qp_fill_wr_pfns): that, not DC, is what failed.
            format!(
                "{} does not support atomics here (atomic_cap is NONE): build the DCI without with_atomics()",
                ctx.name()
            )
        } else if err.is_not_supported() {
            format!(
                "{} is not an mlx5 device with DC support; DC needs ConnectX-5 or newer",
                ctx.name()
            )
        } else {
            "check the capacities against the device limits and the DC attributes".to_string()
        };
        Error::from_errno(op, err.errno().unwrap_or(0), hint).on(ctx.name())
    })
}

/// Builds a ready DC target in one call (create, INIT, RTR).
#[must_use]
pub struct DctBuilder<'a, 'ctx> {
    mlx5: &'a Mlx5Context<'ctx>,
    pd: &'a Pd<'ctx>,
    cq: &'a Cq<'ctx>,
    srq: &'a Srq<'a>,
    key: DcKey,
    port: u8,
    access: Access,
    mtu: Option<raw::ibv_mtu>,
    min_rnr_timer: u8,
    gid_index: Option<u8>,
    hop_limit: u8,
    traffic_class: u8,
    flow_label: u32,
    pkey_index: u16,
}

impl<'a, 'ctx> DctBuilder<'a, 'ctx> {
    /// A DCT taking receives from `srq`, reporting to `cq`, accepting initiators that present
    /// `key`. Defaults: port 1, remote write and read access (atomic access only when asked
    /// with [`DctBuilder::access`]: mlx5_ib refuses it with EOPNOTSUPP on a device without
    /// atomics), the port's active MTU, min RNR timer 12, no GRH (set
    /// [`DctBuilder::gid_index`] on RoCE), P_Key index 0.
    pub fn new(mlx5: &'a Mlx5Context<'ctx>, pd: &'a Pd<'ctx>, cq: &'a Cq<'ctx>, srq: &'a Srq<'a>, key: DcKey) -> Self {
        DctBuilder {
            mlx5,
            pd,
            cq,
            srq,
            key,
            port: 1,
            access: Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ,
            mtu: None,
            min_rnr_timer: 12,
            gid_index: None,
            hop_limit: 64,
            traffic_class: 0,
            flow_label: 0,
            pkey_index: 0,
        }
    }

    /// Local port (from 1).
    pub fn port(mut self, port: u8) -> Self {
        self.port = port;
        self
    }

    /// Remote access initiators get (`IBV_ACCESS_REMOTE_*`).
    pub fn access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }

    /// Path MTU in bytes (256..=4096); default: the port's active MTU.
    ///
    /// An invalid value is reported by [`DctBuilder::build`].
    pub fn mtu(mut self, bytes: u32) -> Self {
        self.mtu = Some(match bytes {
            256 => raw::IBV_MTU_256,
            512 => raw::IBV_MTU_512,
            1024 => raw::IBV_MTU_1024,
            2048 => raw::IBV_MTU_2048,
            4096 => raw::IBV_MTU_4096,
            _ => 0,
        });
        self
    }

    /// Minimum RNR NAK timer code (0..=31).
    pub fn min_rnr_timer(mut self, code: u8) -> Self {
        self.min_rnr_timer = code;
        self
    }

    /// Local GID index: required on RoCE (adds a GRH to the address vector).
    pub fn gid_index(mut self, index: u8) -> Self {
        self.gid_index = Some(index);
        self
    }

    /// GRH hop limit.
    pub fn hop_limit(mut self, hop_limit: u8) -> Self {
        self.hop_limit = hop_limit;
        self
    }

    /// GRH traffic class.
    pub fn traffic_class(mut self, traffic_class: u8) -> Self {
        self.traffic_class = traffic_class;
        self
    }

    /// GRH flow label.
    pub fn flow_label(mut self, flow_label: u32) -> Self {
        self.flow_label = flow_label;
        self
    }

    /// P_Key index.
    pub fn pkey_index(mut self, index: u16) -> Self {
        self.pkey_index = index;
        self
    }

    /// Creates the DCT and takes it to RTR; the result has its DCT number.
    ///
    /// # Errors
    /// EINVAL for an invalid MTU; `mlx5dv_create_qp (DCT)` (EOPNOTSUPP without DC support),
    /// then `ibv_modify_qp (DCT INIT)` / `(DCT RTR)` with the library's errno. Nothing is
    /// left behind on failure.
    pub fn build(self) -> Result<Dct<'a>> {
        let ctx = self.mlx5.ctx;
        let mtu = match self.mtu {
            Some(0) => {
                return Err(Error::invalid(
                    "DctBuilder::mtu",
                    "the MTU must be 256, 512, 1024, 2048 or 4096",
                ))
            }
            Some(mtu) => mtu,
            None => ctx.query_port(self.port)?.0.active_mtu,
        };
        let mut dv = raw::mlx5dv_qp_init_attr {
            comp_mask: u64::from(raw::MLX5DV_QP_INIT_ATTR_MASK_DC),
            create_flags: 0,
            dc_init_attr: raw::mlx5dv_dc_init_attr {
                dc_type: raw::MLX5DV_DCTYPE_DCT,
                key_or_streams: raw::mlx5dv_dc_init_attr_key_or_streams {
                    dct_access_key: self.key.expose(),
                },
            },
            send_ops_flags: 0,
        };
        let (qp, _) = create_dc_qp(
            self.pd,
            self.cq,
            Some(self.srq),
            raw::ibv_qp_cap::default(),
            0,
            &mut dv,
            "mlx5dv_create_qp (DCT)",
        )?;
        let mut dct = Dct {
            qp,
            device: ctx.name().into(),
            dct_number: 0,
            _res: PhantomData,
        };
        let mut attr = raw::ibv_qp_attr {
            qp_state: raw::IBV_QPS_INIT,
            pkey_index: self.pkey_index,
            port_num: self.port,
            qp_access_flags: self.access.bits(),
            ..Default::default()
        };
        dct.modify(
            &mut attr,
            raw::IBV_QP_STATE | raw::IBV_QP_PKEY_INDEX | raw::IBV_QP_PORT | raw::IBV_QP_ACCESS_FLAGS,
            "ibv_modify_qp (DCT INIT)",
        )
        .map_err(|e| {
            if e.is_not_supported() && self.access.contains(Access::REMOTE_ATOMIC) {
                // mlx5_ib_modify_dct: get_atomic_mode < 0 -> EOPNOTSUPP.
                Error::from_errno(
                    "ibv_modify_qp (DCT INIT)",
                    libc::EOPNOTSUPP,
                    "the device does not support remote atomics: build the DCT without Access::REMOTE_ATOMIC",
                )
                .on(&dct.device)
            } else {
                e
            }
        })?;
        let mut attr = raw::ibv_qp_attr {
            qp_state: raw::IBV_QPS_RTR,
            path_mtu: mtu,
            min_rnr_timer: self.min_rnr_timer,
            ..Default::default()
        };
        attr.ah_attr.port_num = self.port;
        if let Some(index) = self.gid_index {
            attr.ah_attr.is_global = 1;
            attr.ah_attr.grh.sgid_index = index;
            attr.ah_attr.grh.hop_limit = self.hop_limit;
            attr.ah_attr.grh.traffic_class = self.traffic_class;
            attr.ah_attr.grh.flow_label = self.flow_label;
        }
        dct.modify(
            &mut attr,
            raw::IBV_QP_STATE | raw::IBV_QP_MIN_RNR_TIMER | raw::IBV_QP_AV | raw::IBV_QP_PATH_MTU,
            "ibv_modify_qp (DCT RTR)",
        )?;
        // SAFETY: the QP is live; the device assigned the DCT number at RTR.
        dct.dct_number = unsafe { (*dct.qp.as_ptr()).qp_num };
        Ok(dct)
    }
}

/// A DC target in RTR, ready to be reached; destroyed on drop. Borrows its PD, CQ and SRQ.
pub struct Dct<'a> {
    qp: NonNull<raw::ibv_qp>,
    device: Box<str>,
    dct_number: u32,
    _res: PhantomData<&'a Srq<'a>>,
}

impl Dct<'_> {
    fn modify(&self, attr: &mut raw::ibv_qp_attr, mask: u32, op: &'static str) -> Result<()> {
        modify_qp(
            self.qp,
            &self.device,
            attr,
            mask,
            op,
            "check the port, GID index (RoCE), MTU and access flags",
        )
    }

    /// The DCT number initiators address (assigned by the device at RTR).
    pub fn dct_number(&self) -> u32 {
        self.dct_number
    }

    /// The raw QP, for interop.
    pub fn as_raw(&self) -> *mut raw::ibv_qp {
        self.qp.as_ptr()
    }
}

impl Drop for Dct<'_> {
    fn drop(&mut self) {
        // SAFETY: created once, destroyed once.
        unsafe { raw::ibv_destroy_qp(self.qp.as_ptr()) };
    }
}

impl std::fmt::Debug for Dct<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dct")
            .field("device", &self.device)
            .field("dct_number", &self.dct_number)
            .finish()
    }
}

/// Builds a DC initiator.
#[must_use]
pub struct DciBuilder<'a, 'ctx> {
    mlx5: &'a Mlx5Context<'ctx>,
    pd: &'a Pd<'ctx>,
    cq: &'a Cq<'ctx>,
    cap: raw::ibv_qp_cap,
    send_ops: u64,
    streams: Option<raw::mlx5dv_dci_streams>,
}

/// The RC send operations a DCI enables by default.
pub const DCI_DEFAULT_SEND_OPS: u32 = raw::IBV_QP_EX_WITH_SEND
    | raw::IBV_QP_EX_WITH_SEND_WITH_IMM
    | raw::IBV_QP_EX_WITH_RDMA_WRITE
    | raw::IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM
    | raw::IBV_QP_EX_WITH_RDMA_READ;

impl<'a, 'ctx> DciBuilder<'a, 'ctx> {
    /// A DCI reporting to `cq`. Defaults: 128 sends of 1 SGE, 64 bytes inline, send /
    /// send-imm / write / write-imm / read enabled (add atomics with
    /// [`DciBuilder::with_atomics`]), no streams.
    pub fn new(mlx5: &'a Mlx5Context<'ctx>, pd: &'a Pd<'ctx>, cq: &'a Cq<'ctx>) -> Self {
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
    /// (bounded by [`Mlx5Caps::dci_streams`]).
    pub fn streams(mut self, log_concurrent: u8, log_errored: u8) -> Self {
        self.streams = Some(raw::mlx5dv_dci_streams {
            log_num_concurent: log_concurrent,
            log_num_errored: log_errored,
        });
        self
    }

    /// Creates the DCI (in RESET).
    ///
    /// # Errors
    /// EINVAL for a zero send queue; `mlx5dv_create_qp (DCI)` with the library's errno
    /// (EOPNOTSUPP: not an mlx5 device with DC).
    pub fn build(self) -> Result<Dci<'a, state::Reset>> {
        let ctx = self.mlx5.ctx;
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
            create_flags: raw::MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE,
            dc_init_attr: raw::mlx5dv_dc_init_attr {
                dc_type: raw::MLX5DV_DCTYPE_DCI,
                key_or_streams,
            },
            send_ops_flags: 0,
        };
        let (qp, caps) = create_dc_qp(
            self.pd,
            self.cq,
            None,
            self.cap,
            self.send_ops,
            &mut dv,
            "mlx5dv_create_qp (DCI)",
        )?;
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
        let mqp = NonNull::new(unsafe { raw::mlx5dv_qp_ex_from_ibv_qp_ex(qpx.as_ptr()) });
        let mut raw_qp = QpRaw {
            qp,
            qpx,
            mqp,
            send_ops: self.send_ops,
            dci_streams: self.streams.is_some(),
            caps,
            device: ctx.name().into(),
            // A DCI has no receive queue: every completion of its number is a send's.
            sq: std::rc::Rc::new(crate::sq::SendQueue::new(caps.max_send_wr, false)),
            registry: None,
        };
        raw_qp.register(&self.cq.registry);
        if mqp.is_none() {
            return Err(Error::from_errno(
                "mlx5dv_qp_ex_from_ibv_qp_ex",
                libc::EOPNOTSUPP,
                "the DCI has no mlx5 post API",
            )
            .on(ctx.name()));
        }
        Ok(Dci {
            raw: raw_qp,
            port: 0,
            pkey_index: 0,
            mtu: 0,
            rts: RtsAttr::default(),
            _res: PhantomData,
            _state: PhantomData,
        })
    }

    /// Creates the DCI and takes it to RTS on `port` with path MTU `mtu_bytes` (the common case).
    ///
    /// # Errors
    /// Whatever step failed; the half-built DCI is destroyed.
    pub fn build_ready(self, port: u8, mtu_bytes: u32, rts: RtsAttr) -> Result<Dci<'a, state::Rts>> {
        let dci = self.build()?;
        let dci = dci.init(port, 0).map_err(|e| e.error)?;
        let dci = dci.rtr(mtu_bytes).map_err(|e| e.error)?;
        dci.rts(rts).map_err(|e| e.error)
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
    pub cq: Option<&'d Cq<'d>>,
}

/// A DC initiator in state `S` ([`state::Reset`] … [`state::Rts`]). Only `Dci<Rts>` posts.
pub struct Dci<'a, S> {
    raw: QpRaw,
    port: u8,
    pkey_index: u16,
    mtu: raw::ibv_mtu,
    rts: RtsAttr,
    _res: PhantomData<&'a Cq<'a>>,
    _state: PhantomData<S>,
}

impl<'a, S> Dci<'a, S> {
    fn into_state<T>(self) -> Dci<'a, T> {
        Dci {
            raw: self.raw,
            port: self.port,
            pkey_index: self.pkey_index,
            mtu: self.mtu,
            rts: self.rts,
            _res: PhantomData,
            _state: PhantomData,
        }
    }

    /// The DCI's QP number.
    pub fn qp_num(&self) -> u32 {
        self.raw.qp_num()
    }

    /// The capacities the library created the DCI with (requests may have been rounded up):
    /// the limits the post path enforces for inline data and SGE lists.
    pub fn caps(&self) -> raw::ibv_qp_cap {
        self.raw.caps
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
}

fn mtu_code(bytes: u32) -> Option<raw::ibv_mtu> {
    (raw::IBV_MTU_256..=raw::IBV_MTU_4096).find(|&m| mtu_bytes(m) == bytes)
}

impl<'a> Dci<'a, state::Reset> {
    /// RESET -> INIT on `port` (P_Key index `pkey_index`).
    ///
    /// # Errors
    /// `ibv_modify_qp (DCI INIT)` with the library's errno; the DCI comes back in RESET.
    pub fn init(
        mut self,
        port: u8,
        pkey_index: u16,
    ) -> std::result::Result<Dci<'a, state::Init>, TransitionError<Self>> {
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
            Err(error) => Err(TransitionError { error, object: self }),
        }
    }
}

impl<'a> Dci<'a, state::Init> {
    /// INIT -> RTR with path MTU `mtu_bytes` (256..=4096).
    ///
    /// # Errors
    /// EINVAL for another MTU; `ibv_modify_qp (DCI RTR)`; the DCI comes back in INIT.
    pub fn rtr(mut self, mtu_bytes: u32) -> std::result::Result<Dci<'a, state::Rtr>, TransitionError<Self>> {
        let Some(mtu) = mtu_code(mtu_bytes) else {
            return Err(TransitionError {
                error: Error::invalid(
                    "ibv_modify_qp (DCI RTR)",
                    "the MTU must be 256, 512, 1024, 2048 or 4096",
                ),
                object: self,
            });
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
            Err(error) => Err(TransitionError { error, object: self }),
        }
    }
}

impl<'a> Dci<'a, state::Rtr> {
    /// RTR -> RTS.
    ///
    /// # Errors
    /// `ibv_modify_qp (DCI RTS)`; the DCI comes back in RTR.
    pub fn rts(mut self, rts: RtsAttr) -> std::result::Result<Dci<'a, state::Rts>, TransitionError<Self>> {
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
            Err(error) => Err(TransitionError { error, object: self }),
        }
    }
}

impl<'a> Dci<'a, state::Rts> {
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
    /// else may destroy it or post on it; the objects it reports to must outlive `'a`.
    pub unsafe fn from_raw_parts(
        qpx: NonNull<raw::ibv_qp_ex>,
        mqp: NonNull<raw::mlx5dv_qp_ex>,
        parts: DciParts<'_>,
    ) -> Dci<'a, state::Rts> {
        let mut raw_qp = QpRaw {
            qp: qpx.cast(),
            qpx,
            mqp: Some(mqp),
            send_ops: parts.send_ops,
            dci_streams: parts.dci_streams,
            caps: parts.caps,
            device: parts.device.into(),
            sq: std::rc::Rc::new(crate::sq::SendQueue::new(parts.caps.max_send_wr, false)),
            registry: None,
        };
        if let Some(cq) = parts.cq {
            raw_qp.register(&cq.registry);
        }
        Dci {
            raw: raw_qp,
            port: parts.port,
            pkey_index: parts.pkey_index,
            mtu: parts.mtu,
            rts: parts.rts,
            _res: PhantomData,
            _state: PhantomData,
        }
    }

    /// Gives back the send-queue credit of one completion of this DCI polled elsewhere than
    /// through [`Cq::poll`] on the CQ given to [`DciParts::cq`] (which does it by itself).
    #[inline]
    pub fn report_completion(&self, c: &crate::cq::Completion) {
        self.raw.sq.complete(c.wr_id, c.status.is_success(), false);
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
    /// Poll the CQ first: the RESET step makes libmlx5 discard this DCI's completions still in
    /// the CQ (`mlx5_modify_qp` -> `mlx5_cq_clean`), so whatever was not polled before the call
    /// is gone after it. The caller owns the CQ and must drain it.
    ///
    /// # Errors
    /// The failing transition; the DCI comes back (in an unknown state: call again or drop it).
    pub fn recover(self) -> std::result::Result<Dci<'a, state::Rts>, TransitionError<Self>> {
        let (port, pkey_index, mtu_b, rts) = (self.port, self.pkey_index, mtu_bytes(self.mtu), self.rts);
        if let Err(error) = self.raw.to_reset("ibv_modify_qp (DCI RESET)") {
            return Err(TransitionError { error, object: self });
        }
        let reset: Dci<'a, state::Reset> = self.into_state();
        let init = match reset.init(port, pkey_index) {
            Ok(dci) => dci,
            Err(e) => {
                return Err(TransitionError {
                    error: e.error,
                    object: e.object.into_state(),
                })
            }
        };
        let rtr = match init.rtr(mtu_b) {
            Ok(dci) => dci,
            Err(e) => {
                return Err(TransitionError {
                    error: e.error,
                    object: e.object.into_state(),
                })
            }
        };
        rtr.rts(rts).map_err(|e| TransitionError {
            error: e.error,
            object: e.object.into_state(),
        })
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
                    .on(&self.raw.device),
            );
        }
        // SAFETY: the QP is a live mlx5 DCI with streams.
        let rc = unsafe { raw::mlx5dv_dci_stream_id_reset(self.raw.qp.as_ptr(), stream_id) };
        if rc != 0 {
            let hint = if rc == libc::EOPNOTSUPP {
                // mlx5.c: not RTS, no qpc_extension cap, or max_log_num_errored == 0.
                "the DCI must be in RTS on a device with the qpc_extension cap and errored streams (max_log_num_errored > 0)"
            } else {
                "the firmware refused the reset: reset only a stream that is in error"
            };
            return Err(Error::from_errno("mlx5dv_dci_stream_id_reset", rc, hint).on(&self.raw.device));
        }
        Ok(())
    }
}

impl<S> std::fmt::Debug for Dci<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dci")
            .field("device", &self.raw.device)
            .field("qp_num", &self.raw.qp_num())
            .field("state", &std::any::type_name::<S>())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dc_key_never_appears_in_debug_output() {
        let key = DcKey::new(0xFFEE_DDCC_BBAA_9988);
        let text = format!("{key:?}");
        assert!(
            !text.contains("ffeeddcc")
                && !text.contains("FFEEDDCC")
                && !text.contains(&0xFFEE_DDCC_BBAA_9988u64.to_string()),
            "{text}"
        );
        assert_eq!(key.expose(), 0xFFEE_DDCC_BBAA_9988);
    }

    #[test]
    fn mtu_codes_cover_exactly_the_five_ib_mtus() {
        assert_eq!(mtu_code(256), Some(raw::IBV_MTU_256));
        assert_eq!(mtu_code(4096), Some(raw::IBV_MTU_4096));
        assert_eq!(mtu_code(1500), None);
        assert_eq!(mtu_code(0), None);
    }
}
