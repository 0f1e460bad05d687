//! DC targets: built ready (RTR) in one call; what initiators address.

use super::{create_dc_qp, DcKey, Mlx5Context};
use crate::addr::{DcTargetAddr, Mtu};
use crate::context::Context;
use crate::cq::Cq;
use crate::error::{Error, Result};
use crate::mr::Access;
use crate::pd::Pd;
use crate::qp::{modify_qp, Parents};
use crate::srq::Srq;
use mlx5dv_raw as raw;
use std::ptr::NonNull;

/// Builds a ready DC target in one call (create, INIT, RTR).
#[must_use]
pub struct DctBuilder<'a> {
    mlx5: &'a Mlx5Context,
    pd: &'a Pd,
    cq: &'a Cq,
    srq: &'a Srq,
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

impl<'a> DctBuilder<'a> {
    /// A DCT taking receives from `srq`, reporting to `cq`, accepting initiators that present
    /// `key`. Defaults: port 1, remote write and read access (atomic access only when asked
    /// with [`DctBuilder::access`]: mlx5_ib refuses it with EOPNOTSUPP on a device without
    /// atomics), the port's active MTU, min RNR timer 12, no GRH (set
    /// [`DctBuilder::gid_index`] on RoCE), P_Key index 0.
    pub fn new(mlx5: &'a Mlx5Context, pd: &'a Pd, cq: &'a Cq, srq: &'a Srq, key: DcKey) -> Self {
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
    /// EINVAL for a direct CQ ([`crate::Context::create_direct_cq`]: a DCT's completions are
    /// receives), an invalid MTU, or a RoCE port without a GID index
    /// ([`DctBuilder::gid_index`]: RoCE routes by GID); `mlx5dv_create_qp (DCT)` (EOPNOTSUPP
    /// without DC support), then `ibv_modify_qp (DCT INIT)` / `(DCT RTR)` with the library's
    /// errno. Nothing is left behind on failure.
    pub fn build(self) -> Result<Dct> {
        let ctx = self.mlx5.context();
        self.cq
            .refuse_if_direct("DctBuilder::build", "DCT (its CQ reports receives)")?;
        let port_attr = ctx.query_port(self.port)?;
        if port_attr.is_ethernet() && self.gid_index.is_none() {
            return Err(Error::invalid(
                "DctBuilder::build",
                format!(
                    "port {} is RoCE (Ethernet): a DCT there needs a GID index, set with DctBuilder::gid_index",
                    self.port
                ),
            )
            .on(ctx.name()));
        }
        let mtu = match self.mtu {
            Some(0) => {
                return Err(Error::invalid(
                    "DctBuilder::mtu",
                    "the MTU must be 256, 512, 1024, 2048 or 4096",
                ))
            }
            Some(mtu) => mtu,
            None => port_attr.0.active_mtu,
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
            None,
            "mlx5dv_create_qp (DCT)",
        )?;
        let mut dct = Dct {
            qp,
            dct_number: 0,
            port: self.port,
            gid_index: self.gid_index,
            mtu,
            ctx: ctx.clone(),
            _parents: Parents::of(self.pd, self.cq, Some(self.srq)),
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
                .on(dct.ctx.name())
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

/// A DC target in RTR, ready to be reached; destroyed on drop. Holds its PD, CQ and SRQ.
pub struct Dct {
    qp: NonNull<raw::ibv_qp>,
    dct_number: u32,
    port: u8,
    gid_index: Option<u8>,
    mtu: raw::ibv_mtu,
    ctx: Context,
    _parents: Box<Parents>,
}

// SAFETY: a DCT in RTR is only queried and destroyed; the library allows both from any thread.
unsafe impl Send for Dct {}
// SAFETY: as above: every method takes &self and reads immutable fields or calls thread-safe
// verbs.
unsafe impl Sync for Dct {}

impl Dct {
    fn modify(&self, attr: &mut raw::ibv_qp_attr, mask: u32, op: &'static str) -> Result<()> {
        modify_qp(
            self.qp,
            self.ctx.name(),
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

    /// The address initiators need to reach this DCT (its port's LID, the GID at its GID index
    /// on RoCE, its DCT number and path MTU), ready to be encoded and handed to peers.
    ///
    /// # Errors
    /// `ibv_query_port` / `ibv_query_gid` with their errno.
    pub fn target_addr(&self) -> Result<DcTargetAddr> {
        let port = self.ctx.query_port(self.port)?;
        let gid = match self.gid_index {
            Some(index) => self.ctx.query_gid(self.port, index)?,
            None => [0; 16],
        };
        Ok(DcTargetAddr {
            lid: port.lid(),
            gid,
            dct_number: self.dct_number,
            port_mtu: Mtu::from_raw(self.mtu).unwrap_or(Mtu::Mtu1024),
        })
    }

    /// The port it was brought up on.
    pub fn port(&self) -> u8 {
        self.port
    }

    /// The raw QP, for interop.
    pub fn as_raw(&self) -> *mut raw::ibv_qp {
        self.qp.as_ptr()
    }
}

impl Drop for Dct {
    fn drop(&mut self) {
        // SAFETY: created once, destroyed once; its parents (fields) are released after it.
        unsafe { raw::ibv_destroy_qp(self.qp.as_ptr()) };
    }
}

impl std::fmt::Debug for Dct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dct")
            .field("device", &self.ctx.name())
            .field("dct_number", &self.dct_number)
            .finish()
    }
}
