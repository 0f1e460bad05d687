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
    sl: u8,
    out_of_order: bool,
}

impl<'a> DctBuilder<'a> {
    /// A DCT taking receives from `srq`, reporting to `cq`, accepting initiators that present
    /// `key`. Defaults: port 1, no remote access (a DCT that only receives SENDs needs
    /// none; ask for RDMA WRITE, READ or atomics with [`DctBuilder::access`]: the registered
    /// region must grant them too, and mlx5_ib refuses atomics with EOPNOTSUPP on a device
    /// without them), the port's active MTU, min RNR timer 12, no GRH (set
    /// [`DctBuilder::gid_index`] on RoCE), P_Key index 0.
    pub fn new(mlx5: &'a Mlx5Context, pd: &'a Pd, cq: &'a Cq, srq: &'a Srq, key: DcKey) -> Self {
        DctBuilder {
            mlx5,
            pd,
            cq,
            srq,
            key,
            port: 1,
            access: Access::none(),
            mtu: None,
            min_rnr_timer: 12,
            gid_index: None,
            hop_limit: 64,
            traffic_class: 0,
            flow_label: 0,
            pkey_index: 0,
            sl: 0,
            out_of_order: false,
        }
    }

    /// Local port (from 1).
    pub fn port(mut self, port: u8) -> Self {
        self.port = port;
        self
    }

    /// Remote access initiators get (`IBV_ACCESS_REMOTE_*`); default: none. An initiator's
    /// RDMA WRITE, READ or atomic to a DCT that does not grant it fails at the initiator with
    /// `RemAccessErr`, even where the region's key would allow it.
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

    /// Local GID index: required on RoCE (adds a GRH to the address vector). Takes a `u8` or
    /// an `Option<u8>`: `None` (the default) means no GRH, as an InfiniBand port needs, so
    /// `.gid_index(ctx.roce_v2_gid_index(port)?)` fits both link layers
    /// (see [`Context::roce_v2_gid_index`](crate::Context::roce_v2_gid_index)).
    pub fn gid_index(mut self, index: impl Into<Option<u8>>) -> Self {
        self.gid_index = index.into();
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

    /// Service level of the DCT's answers (ACKs and READ responses): on RoCE the priority,
    /// which mlx5_ib puts in the DCT context's `eth_prio`; on InfiniBand the SL of the
    /// initiator's request is answered on, so this is unused there.
    pub fn sl(mut self, sl: u8) -> Self {
        self.sl = sl;
        self
    }

    /// Out-of-order data placement (`MLX5DV_QP_CREATE_OOO_DP`, rdma-core 55+): the device may
    /// place the data of RDMA writes and sends into memory in any order, packets of one
    /// message included; completions still arrive in order. Set it on both ends, this DCT and
    /// every DCI that reaches it ([`crate::DciBuilder::out_of_order_placement`]), or on
    /// neither. Whoever reads the data must wait for the completion (a receive, a write with
    /// immediate, or a message of the application's own after the data), never poll the data
    /// memory for a last byte to change; receives posted to the SRQ should all be of one size.
    /// See the [module](crate::dc) documentation.
    ///
    /// [`DctBuilder::build`] refuses it (EOPNOTSUPP, saying why) unless the running libmlx5
    /// and the device report it for DC ([`super::Mlx5Caps::dc_out_of_order`]).
    pub fn out_of_order_placement(mut self) -> Self {
        self.out_of_order = true;
        self
    }

    /// Creates the DCT and takes it to RTR; the result has its DCT number.
    ///
    /// # Errors
    /// EINVAL for a direct CQ ([`crate::Context::create_direct_cq`]: a DCT's completions are
    /// receives), an invalid MTU, or a RoCE port without a GID index
    /// ([`DctBuilder::gid_index`]: RoCE routes by GID); EOPNOTSUPP for
    /// [`DctBuilder::out_of_order_placement`] where the library or the device lacks it (before
    /// any creation); `mlx5dv_create_qp (DCT)` (EOPNOTSUPP without DC support), then `ibv_modify_qp (DCT INIT)` / `(DCT RTR)` with the library's
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
        let mut comp_mask = raw::MLX5DV_QP_INIT_ATTR_MASK_DC;
        let mut create_flags = 0;
        if self.out_of_order {
            self.mlx5
                .check_out_of_order("mlx5dv_create_qp (DCT, out-of-order placement)", "DCT")?;
            comp_mask |= raw::MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS;
            create_flags |= raw::MLX5DV_QP_CREATE_OOO_DP;
        }
        let mut dv = raw::mlx5dv_qp_init_attr {
            comp_mask: u64::from(comp_mask),
            create_flags,
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
            out_of_order: self.out_of_order,
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
        attr.ah_attr.sl = self.sl;
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
    out_of_order: bool,
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
            out_of_order: self.out_of_order,
        })
    }

    /// The port it was brought up on.
    pub fn port(&self) -> u8 {
        self.port
    }

    /// Whether it was built with out-of-order data placement
    /// ([`DctBuilder::out_of_order_placement`]): its initiators must use it too.
    pub fn out_of_order_placement(&self) -> bool {
        self.out_of_order
    }

    /// The attributes the device holds for this DCT, read back with `ibv_query_qp` (what the
    /// exp verbs called `ibv_exp_query_dct`). mlx5_ib answers for a DCT in RTR only, which a
    /// [`Dct`] always is, and with less than it keeps: remote access bits only
    /// (`IBV_ACCESS_LOCAL_WRITE` is not reported), and no GRH at all (its
    /// `mlx5_ib_dct_query_qp` fills the traffic class, flow label, GID index and hop limit
    /// without marking the answer global, so ib_uverbs copies none of them out). Those, the DC
    /// key, the real state and the key-violation count come from [`Dct::query_context`].
    ///
    /// # Errors
    /// `ibv_query_qp (DCT)` with the library's errno (EINVAL from a kernel that does not
    /// answer for DCTs).
    pub fn query(&self) -> Result<DctAttributes> {
        let mut attr = raw::ibv_qp_attr::default();
        // SAFETY: all-zero is valid for the init-attr out-parameter (pointers and integers).
        let mut init: raw::ibv_qp_init_attr = unsafe { std::mem::zeroed() };
        // Exactly the attributes mlx5_ib_dct_query_qp accepts (any other bit: EINVAL).
        let mask = raw::IBV_QP_STATE
            | raw::IBV_QP_ACCESS_FLAGS
            | raw::IBV_QP_PORT
            | raw::IBV_QP_MIN_RNR_TIMER
            | raw::IBV_QP_AV
            | raw::IBV_QP_PATH_MTU
            | raw::IBV_QP_PKEY_INDEX;
        // SAFETY: the QP is live; both out-parameters are writable.
        let rc = unsafe { raw::ibv_query_qp(self.qp.as_ptr(), &mut attr, mask as libc::c_int, &mut init) };
        if rc != 0 {
            return Err(Error::from_errno(
                "ibv_query_qp (DCT)",
                rc,
                "mlx5_ib answers a DCT query only in RTR; the device may have been removed",
            )
            .on(self.ctx.name()));
        }
        Ok(DctAttributes {
            port: attr.port_num,
            access: Access::from_bits(attr.qp_access_flags),
            min_rnr_timer: attr.min_rnr_timer,
            mtu: Mtu::from_raw(attr.path_mtu),
            pkey_index: attr.pkey_index,
        })
    }

    /// What the DCT's firmware context holds and verbs do not report: its real state, its DC
    /// key, how many requests it dropped for a wrong key, and its GRH fields (traffic class,
    /// flow label, GID index, hop limit), which [`Dct::query`] cannot give. Read with DEVX `QUERY_DCT`
    /// (`mlx5dv_devx_qp_query` on this verbs DCT), as rdma-core does for `data_in_order`.
    ///
    /// # Errors
    /// `mlx5dv_devx_qp_query (QUERY_DCT)`: EOPNOTSUPP, EPROTONOSUPPORT or EINVAL where the device
    /// or the context has no DEVX (the message says so: the context is readable only through
    /// DEVX); EREMOTEIO with the firmware's status and syndrome when the command fails.
    pub fn query_context(&self) -> Result<DctContext> {
        const OP: &str = "mlx5dv_devx_qp_query (QUERY_DCT)";
        let mut input = [0u8; query_dct::IN_BYTES];
        let mut out = [0u8; query_dct::OUT_BYTES];
        query_dct::encode(&mut input, self.dct_number);
        // SAFETY: the QP is live; both mailboxes are valid for their lengths.
        let rc = unsafe {
            raw::mlx5dv_devx_qp_query(
                self.qp.as_ptr(),
                input.as_ptr().cast(),
                input.len(),
                out.as_mut_ptr().cast(),
                out.len(),
            )
        };
        let status = query_dct::status(&out);
        if rc != 0 || status != 0 {
            let hint = match rc {
                libc::EOPNOTSUPP | libc::EPROTONOSUPPORT | libc::EINVAL if status == 0 => {
                    "this device or context has no DEVX (mlx5 DEVX user contexts are off, or the firmware or kernel lacks them): the DC key, the DCT's real state and its key-violation count are readable only through DEVX QUERY_DCT; Dct::query reads the rest".to_string()
                }
                _ => format!(
                    "the firmware refused QUERY_DCT (status {status:#x}, syndrome {:#x}): check that the DCT still exists",
                    query_dct::syndrome(&out)
                ),
            };
            let errno = if rc != 0 { rc } else { libc::EREMOTEIO };
            return Err(Error::from_errno(OP, errno, hint).on(self.ctx.name()));
        }
        Ok(query_dct::decode(&out))
    }

    /// The raw QP, for interop.
    pub fn as_raw(&self) -> *mut raw::ibv_qp {
        self.qp.as_ptr()
    }
}

/// A DCT's attributes as `ibv_query_qp` reports them (see [`Dct::query`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DctAttributes {
    /// Port.
    pub port: u8,
    /// Remote access granted to initiators.
    pub access: Access,
    /// Minimum RNR NAK timer code.
    pub min_rnr_timer: u8,
    /// Path MTU (`None` for a value outside the five IB MTUs).
    pub mtu: Option<Mtu>,
    /// P_Key index.
    pub pkey_index: u16,
}

/// The state of a DCT's firmware context (`dctc.state`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DctState {
    /// Accepting requests.
    Active,
    /// Being drained: no new connections, outstanding ones finishing.
    Draining,
    /// Drained: no connection left.
    Drained,
    /// A value the PRM does not define.
    Unknown(u8),
}

/// What the firmware's DCT context holds beyond verbs (see [`Dct::query_context`]). `Debug`
/// redacts the key.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DctContext {
    /// The DCT's real state.
    pub state: DctState,
    /// The DC access key the DCT checks (a secret: never shown by `Debug`).
    pub key: DcKey,
    /// Requests dropped because they presented a wrong key (`dc_access_key_violation_count`).
    pub key_violations: u32,
    /// GRH traffic class (`tclass`).
    pub traffic_class: u8,
    /// GRH flow label (`flow_label`, 20 bits).
    pub flow_label: u32,
    /// Local GID index (`my_addr_index`; 0 for a DCT built without one).
    pub gid_index: u8,
    /// GRH hop limit (`hop_limit`; 0 for a DCT built without a GID index).
    pub hop_limit: u8,
}

/// The DEVX `QUERY_DCT` mailboxes, at the bit offsets of Linux's `include/linux/mlx5/mlx5_ifc.h`
/// (`mlx5_ifc_query_dct_in_bits`, `mlx5_ifc_query_dct_out_bits`, `mlx5_ifc_dctc_bits`;
/// rdma-core's copy of `dctc` names only `data_in_order`). Big-endian, offsets in bits.
mod query_dct {
    use super::{DcKey, DctContext, DctState};

    /// `MLX5_CMD_OP_QUERY_DCT`.
    pub const OPCODE: u16 = 0x713;
    /// `sizeof(query_dct_in)`.
    pub const IN_BYTES: usize = 16;
    /// `sizeof(query_dct_out)`: 16 bytes of header, then the 112-byte `dctc`.
    pub const OUT_BYTES: usize = 128;
    const DCTC: usize = 0x80;
    /// `dctc.state`, 4 bits.
    const STATE: usize = 0x04;
    /// `dctc.dc_access_key`, 64 bits.
    const DC_ACCESS_KEY: usize = 0x100;
    /// `dctc.dc_access_key_violation_count`, 32 bits.
    const KEY_VIOLATIONS: usize = 0x180;
    /// `dctc.tclass`, 8 bits.
    const TCLASS: usize = 0xe0;
    /// `dctc.flow_label`, 20 bits.
    const FLOW_LABEL: usize = 0xec;
    /// `dctc.my_addr_index`, 8 bits.
    const MY_ADDR_INDEX: usize = 0x168;
    /// `dctc.hop_limit`, 8 bits.
    const HOP_LIMIT: usize = 0x178;

    fn be32(buf: &[u8], bit: usize) -> u32 {
        let at = bit / 32 * 4;
        buf.get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_be_bytes)
    }

    /// The input: opcode and DCT number (`dctn`, 24 bits at 0x48).
    pub fn encode(input: &mut [u8; IN_BYTES], dctn: u32) {
        input[0..2].copy_from_slice(&OPCODE.to_be_bytes());
        input[8..12].copy_from_slice(&(dctn & 0x00ff_ffff).to_be_bytes());
    }

    /// `status` (8 bits at 0).
    pub fn status(out: &[u8]) -> u8 {
        (be32(out, 0) >> 24) as u8
    }

    /// `syndrome` (32 bits at 0x20).
    pub fn syndrome(out: &[u8]) -> u32 {
        be32(out, 0x20)
    }

    /// A field of `bits` bits at bit offset `at` of the `dctc` (within one dword).
    fn field(out: &[u8], at: usize, bits: usize) -> u32 {
        let bit = DCTC + at;
        let v = be32(out, bit) >> (32 - bits - bit % 32);
        if bits == 32 {
            v
        } else {
            v & ((1 << bits) - 1)
        }
    }

    pub fn decode(out: &[u8; OUT_BYTES]) -> DctContext {
        let state = field(out, STATE, 4) as u8;
        let key = (u64::from(be32(out, DCTC + DC_ACCESS_KEY)) << 32) | u64::from(be32(out, DCTC + DC_ACCESS_KEY + 32));
        DctContext {
            state: match state {
                0 => DctState::Active,
                1 => DctState::Draining,
                2 => DctState::Drained,
                s => DctState::Unknown(s),
            },
            key: DcKey::new(key),
            key_violations: field(out, KEY_VIOLATIONS, 32),
            traffic_class: field(out, TCLASS, 8) as u8,
            flow_label: field(out, FLOW_LABEL, 20),
            gid_index: field(out, MY_ADDR_INDEX, 8) as u8,
            hop_limit: field(out, HOP_LIMIT, 8) as u8,
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn query_dct_fields_sit_at_the_kernel_mlx5_ifc_offsets() {
            let mut input = [0u8; IN_BYTES];
            encode(&mut input, 0x12_3456);
            assert_eq!(input[..12], [0x07, 0x13, 0, 0, 0, 0, 0, 0, 0x00, 0x12, 0x34, 0x56]);
            let mut out = [0u8; OUT_BYTES];
            // dctc starts at byte 16: state in the low nibble of its first byte, the key at
            // byte 16 + 32, the violation count at 16 + 48.
            out[16] = 0x02;
            out[48..56].copy_from_slice(&0x0102_0304_0506_0708u64.to_be_bytes());
            out[64..68].copy_from_slice(&7u32.to_be_bytes());
            // tclass and flow label share the dword at dctc byte 28; my_addr_index and
            // hop_limit the one at dctc byte 44.
            out[16 + 28..16 + 32].copy_from_slice(&((0xa4u32 << 24) | 0xb_cdef).to_be_bytes());
            out[16 + 44..16 + 48].copy_from_slice(&0x0003_0040u32.to_be_bytes());
            let c = decode(&out);
            assert_eq!((c.traffic_class, c.flow_label), (0xa4, 0xb_cdef));
            assert_eq!((c.gid_index, c.hop_limit), (3, 0x40));
            assert_eq!(c.state, DctState::Drained);
            assert_eq!(c.key.expose(), 0x0102_0304_0506_0708);
            assert_eq!(c.key_violations, 7);
            assert_eq!(status(&out), 0);
        }

        #[test]
        fn dct_context_debug_redacts_the_key() {
            let mut out = [0u8; OUT_BYTES];
            out[48..56].copy_from_slice(&0xFFEE_DDCC_BBAA_9988u64.to_be_bytes());
            let text = format!("{:?}", decode(&out));
            assert!(!text.to_lowercase().contains("ffeeddcc"), "{text}");
            assert!(text.contains("redacted"), "{text}");
        }
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
            .field("out_of_order_placement", &self.out_of_order)
            .finish()
    }
}
