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
