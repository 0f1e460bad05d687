//! The mlx5 view of a device and its DC capabilities.

use super::{DcKey, DctBuilder};
use crate::context::Context;
use crate::error::{Error, Result};
use mlx5dv_raw as raw;

/// The mlx5 view of an open device: proof that the mlx5 provider drives it.
#[derive(Clone, Debug)]
pub struct Mlx5Context {
    ctx: Context,
}

/// DC-related capabilities from `mlx5dv_query_device`; `None` where the device or the running
/// library did not report the field (the library clears the `comp_mask` bits it does not know,
/// so an older libmlx5 than the headers' reads as `None`, never as garbage).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Mlx5Caps {
    /// `MLX5DV_CONTEXT_FLAGS_*`.
    pub flags: u64,
    /// DC on-demand-paging capabilities (`IBV_ODP_SUPPORT_*` bits).
    pub dc_odp_caps: Option<u32>,
    /// DCI streams: (max log2 concurrent, max log2 errored).
    pub dci_streams: Option<(u8, u8)>,
    /// REQUESTER limit: RDMA reads and atomics one DCI may have outstanding (the most
    /// `RtsAttr::max_rd_atomic` a DCI takes). libmlx5's `max_dc_rd_atom`
    /// (`MLX5DV_CONTEXT_MASK_MAX_DC_RD_ATOM`, rdma-core 47+; `1 << log_max_ra_req_dc`): the
    /// reverse of `ibv_device_attr`, where `max_qp_rd_atom` is the responder side. `None` also
    /// where the library could not read it (no DEVX: libmlx5 then reports 0).
    pub max_dc_requester_rd_atomic: Option<u64>,
    /// RESPONDER limit: incoming RDMA reads and atomics one DCT serves at once. libmlx5's
    /// `max_dc_init_rd_atom` (rdma-core 47+; `1 << log_max_ra_res_dc`).
    pub max_dc_responder_rd_atomic: Option<u64>,
    /// Out-of-order data placement (`MLX5DV_CONTEXT_MASK_OOO_RECV_WRS`, rdma-core 55+, and a
    /// device whose kernel reports it): the most receive WRs a QP created with
    /// `MLX5DV_QP_CREATE_OOO_DP` may have, per transport. `None`: no out-of-order placement here.
    pub ooo_recv_wrs: Option<OooRecvWrsCaps>,
}

/// `struct mlx5dv_ooo_recv_wrs_caps`: per transport, the most receive WRs of a QP with
/// out-of-order data placement; 0 where the transport has none.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct OooRecvWrsCaps {
    /// RC.
    pub max_rc: u32,
    /// XRC.
    pub max_xrc: u32,
    /// DC: libmlx5 checks this one for DCTs and DCIs alike (both are `IBV_QPT_DRIVER`).
    pub max_dct: u32,
    /// UD.
    pub max_ud: u32,
    /// UC.
    pub max_uc: u32,
}

impl Mlx5Caps {
    /// The capabilities an `mlx5dv_query_device` answer holds, by its returned `comp_mask`.
    pub(crate) fn from_raw(out: &raw::mlx5dv_context) -> Mlx5Caps {
        let has = |bit: u32| out.comp_mask & u64::from(bit) != 0;
        // libmlx5 reads the limits from the HCA caps through DEVX; without DEVX it still sets the
        // mask bit, with 0 (`1 << log` is never 0 on a device that has DC): that is "unknown".
        let rd_atom = |v: u64| (has(raw::MLX5DV_CONTEXT_MASK_MAX_DC_RD_ATOM) && v > 0).then_some(v);
        let ooo = out.ooo_recv_wrs_caps;
        Mlx5Caps {
            flags: out.flags,
            dc_odp_caps: has(raw::MLX5DV_CONTEXT_MASK_DC_ODP_CAPS).then_some(out.dc_odp_caps),
            dci_streams: has(raw::MLX5DV_CONTEXT_MASK_DCI_STREAMS).then_some((
                out.dci_streams_caps.max_log_num_concurent,
                out.dci_streams_caps.max_log_num_errored,
            )),
            max_dc_requester_rd_atomic: rd_atom(out.max_dc_rd_atom),
            max_dc_responder_rd_atomic: rd_atom(out.max_dc_init_rd_atom),
            ooo_recv_wrs: has(raw::MLX5DV_CONTEXT_MASK_OOO_RECV_WRS).then_some(OooRecvWrsCaps {
                max_rc: ooo.max_rc,
                max_xrc: ooo.max_xrc,
                max_dct: ooo.max_dct,
                max_ud: ooo.max_ud,
                max_uc: ooo.max_uc,
            }),
        }
    }

    /// Whether DC queue pairs may be created with out-of-order data placement
    /// (`ooo_recv_wrs.max_dct` non-zero: what libmlx5 checks for DCIs and DCTs).
    pub fn dc_out_of_order(&self) -> bool {
        self.ooo_recv_wrs.is_some_and(|c| c.max_dct > 0)
    }
}

impl Context {
    /// The mlx5 view of this device, needed for DC.
    ///
    /// # Errors
    /// EOPNOTSUPP when the device is not driven by the mlx5 provider (`mlx5dv_is_supported`),
    /// e.g. soft-RoCE: DC needs a ConnectX-5 or newer.
    pub fn mlx5(&self) -> Result<Mlx5Context> {
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
        Ok(Mlx5Context { ctx: self.clone() })
    }
}

impl Mlx5Context {
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
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// DC capabilities (`mlx5dv_query_device` with the DC-ODP, DCI-streams, DC read/atomic and
    /// out-of-order masks; what the running libmlx5 does not know reads as `None`).
    ///
    /// # Errors
    /// `mlx5dv_query_device` with its errno.
    pub fn caps(&self) -> Result<Mlx5Caps> {
        // SAFETY: all-zero is a valid mlx5dv_context (integers and a null pointer).
        let mut out: raw::mlx5dv_context = unsafe { std::mem::zeroed() };
        let asked = raw::MLX5DV_CONTEXT_MASK_DC_ODP_CAPS
            | raw::MLX5DV_CONTEXT_MASK_DCI_STREAMS
            | raw::MLX5DV_CONTEXT_MASK_MAX_DC_RD_ATOM
            | raw::MLX5DV_CONTEXT_MASK_OOO_RECV_WRS;
        out.comp_mask = u64::from(asked);
        // SAFETY: the context is open; out is the newest (largest) layout.
        let rc = unsafe { raw::mlx5dv_query_device(self.ctx.as_raw(), &mut out) };
        if rc != 0 {
            return Err(
                Error::from_errno("mlx5dv_query_device", rc, "the device did not report mlx5 capabilities")
                    .on(self.ctx.name()),
            );
        }
        Ok(Mlx5Caps::from_raw(&out))
    }

    /// Refuses out-of-order data placement on a DC queue pair (`what`: "DCI" or "DCT") unless
    /// the running libmlx5 and the device both report it.
    pub(crate) fn check_out_of_order(&self, op: &'static str, what: &str) -> Result<()> {
        let caps = self.caps()?;
        if caps.dc_out_of_order() {
            return Ok(());
        }
        let why = match caps.ooo_recv_wrs {
            None => "neither the running libmlx5 nor the device reports out-of-order data placement (mlx5dv_query_device returned no MLX5DV_CONTEXT_MASK_OOO_RECV_WRS: libmlx5 older than rdma-core 55, or a device or kernel without dp_ordering_ooo)",
            Some(_) => "the device reports out-of-order data placement, but not for DC (ooo_recv_wrs_caps.max_dct is 0)",
        };
        Err(Error::from_errno(
            op,
            libc::EOPNOTSUPP,
            format!("{why}: build the {what} without out_of_order_placement(), on both ends"),
        )
        .on(self.ctx.name()))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(comp_mask: u32) -> raw::mlx5dv_context {
        // SAFETY: all-zero is a valid mlx5dv_context (integers and a null pointer).
        let mut out: raw::mlx5dv_context = unsafe { std::mem::zeroed() };
        out.comp_mask = u64::from(comp_mask);
        out.max_dc_rd_atom = 16;
        out.max_dc_init_rd_atom = 64;
        out.ooo_recv_wrs_caps.max_dct = 32768;
        out
    }

    #[test]
    fn dc_rd_atom_maps_max_dc_rd_atom_to_the_requester_and_init_to_the_responder() {
        let caps = Mlx5Caps::from_raw(&answer(raw::MLX5DV_CONTEXT_MASK_MAX_DC_RD_ATOM));
        assert_eq!(caps.max_dc_requester_rd_atomic, Some(16));
        assert_eq!(caps.max_dc_responder_rd_atomic, Some(64));
    }

    #[test]
    fn fields_whose_mask_bit_the_library_cleared_read_as_none() {
        // What libmlx5 44 answers: it clears MAX_DC_RD_ATOM and OOO_RECV_WRS, whatever it left
        // in the struct.
        let caps = Mlx5Caps::from_raw(&answer(0));
        assert_eq!(caps.max_dc_requester_rd_atomic, None);
        assert_eq!(caps.max_dc_responder_rd_atomic, None);
        assert_eq!(caps.ooo_recv_wrs, None);
        assert!(!caps.dc_out_of_order());
    }

    #[test]
    fn dc_rd_atom_of_zero_reads_as_unknown_not_as_no_reads() {
        // What libmlx5 59 answers on a context without DEVX: the bit set, the values 0.
        let mut out = answer(raw::MLX5DV_CONTEXT_MASK_MAX_DC_RD_ATOM);
        out.max_dc_rd_atom = 0;
        out.max_dc_init_rd_atom = 0;
        let caps = Mlx5Caps::from_raw(&out);
        assert_eq!(caps.max_dc_requester_rd_atomic, None);
        assert_eq!(caps.max_dc_responder_rd_atomic, None);
    }

    #[test]
    fn out_of_order_on_dc_needs_the_mask_and_a_non_zero_max_dct() {
        let caps = Mlx5Caps::from_raw(&answer(raw::MLX5DV_CONTEXT_MASK_OOO_RECV_WRS));
        assert!(caps.dc_out_of_order());
        let mut rc_only = answer(raw::MLX5DV_CONTEXT_MASK_OOO_RECV_WRS);
        rc_only.ooo_recv_wrs_caps.max_dct = 0;
        rc_only.ooo_recv_wrs_caps.max_rc = 8;
        assert!(!Mlx5Caps::from_raw(&rc_only).dc_out_of_order());
    }
}
