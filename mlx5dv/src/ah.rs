//! Address handles: how a DC initiator names the path to a peer's DC target.

use crate::addr::DcTargetAddr;
use crate::error::{Error, Result};
use crate::pd::Pd;
use mlx5dv_raw as raw;
use std::ptr::NonNull;
use std::sync::Arc;

/// Where a peer is, as an address handle needs it, with the service level to reach it on
/// (the path record's SL where the subnet manager assigns them; 0 otherwise).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PeerPath {
    /// InfiniBand: the peer's LID.
    Lid {
        /// Destination LID.
        lid: u16,
        /// Service level (0..=15).
        sl: u8,
    },
    /// RoCE (or routed InfiniBand): the peer's GID, and the local GID index to send from.
    Gid {
        /// Service level (0..=15; on RoCE the priority).
        sl: u8,
        /// Destination GID.
        gid: [u8; 16],
        /// Local source GID index.
        sgid_index: u8,
        /// Hop limit (64 is usual).
        hop_limit: u8,
        /// Traffic class.
        traffic_class: u8,
        /// Flow label.
        flow_label: u32,
    },
}

impl PeerPath {
    /// The path to a DC target: by GID when `sgid_index` is given (RoCE), by LID otherwise;
    /// on SL 0 (see [`PeerPath::with_sl`]).
    pub fn to_dc_target(addr: &DcTargetAddr, sgid_index: Option<u8>) -> PeerPath {
        match sgid_index {
            Some(sgid_index) => PeerPath::Gid {
                sl: 0,
                gid: addr.gid,
                sgid_index,
                hop_limit: 64,
                traffic_class: 0,
                flow_label: 0,
            },
            None => PeerPath::Lid { lid: addr.lid, sl: 0 },
        }
    }

    /// The same path on service level `sl` (the low 4 bits are used).
    pub fn with_sl(mut self, sl: u8) -> PeerPath {
        match &mut self {
            PeerPath::Lid { sl: s, .. } | PeerPath::Gid { sl: s, .. } => *s = sl,
        }
        self
    }

    /// Its service level.
    pub fn sl(&self) -> u8 {
        match *self {
            PeerPath::Lid { sl, .. } | PeerPath::Gid { sl, .. } => sl,
        }
    }

    pub(crate) fn ah_attr(&self, port: u8) -> raw::ibv_ah_attr {
        let mut attr = raw::ibv_ah_attr {
            port_num: port,
            ..Default::default()
        };
        attr.sl = self.sl() & 0xf;
        match *self {
            PeerPath::Lid { lid, .. } => attr.dlid = lid,
            PeerPath::Gid {
                gid,
                sgid_index,
                hop_limit,
                traffic_class,
                flow_label,
                ..
            } => {
                attr.is_global = 1;
                attr.grh.dgid = raw::ibv_gid { raw: gid };
                attr.grh.sgid_index = sgid_index;
                attr.grh.hop_limit = hop_limit;
                attr.grh.traffic_class = traffic_class;
                attr.grh.flow_label = flow_label;
            }
        }
        attr
    }
}

/// An address handle. A cheap handle: clones share one AH (every [`crate::DcPeer`] holds one),
/// destroyed when the last is dropped. Holds its [`Pd`].
#[derive(Clone)]
pub struct Ah {
    inner: Arc<AhInner>,
}

struct AhInner {
    ah: NonNull<raw::ibv_ah>,
    /// Its mlx5 address vector (`mlx5dv_init_obj`, owned by the AH), which the direct backend
    /// copies into each WQE; null for an adopted AH or another provider's.
    av: *const raw::mlx5_wqe_av,
    /// None for an adopted AH (its PD is the caller's to keep alive).
    _pd: Option<Pd>,
}

// SAFETY: an AH is immutable once created; the library allows use from any thread.
unsafe impl Send for AhInner {}
// SAFETY: as above.
unsafe impl Sync for AhInner {}

impl Pd {
    /// Creates an address handle for `path` through local `port`.
    ///
    /// # Errors
    /// `ibv_create_ah` with the library's errno (EINVAL for a bad port or GID index; on RoCE a
    /// LID path fails: use [`PeerPath::Gid`]).
    pub fn create_ah(&self, port: u8, path: &PeerPath) -> Result<Ah> {
        let mut attr = path.ah_attr(port);
        // SAFETY: the PD is live; attr is initialised.
        let ah = unsafe { raw::ibv_create_ah(self.as_raw(), &mut attr) };
        NonNull::new(ah)
            .map(|ah| {
                let mut new = Ah::new(ah, Some(self.clone()));
                if let Some(inner) = Arc::get_mut(&mut new.inner) {
                    inner.av = mlx5_av(ah, self.context());
                }
                new
            })
            .ok_or_else(|| {
                Error::last_os_error(
                    "ibv_create_ah",
                    "on RoCE address peers by GID with a valid local sgid_index; on InfiniBand by LID",
                )
                .on(self.context().name())
            })
    }
}

impl Ah {
    fn new(ah: NonNull<raw::ibv_ah>, pd: Option<Pd>) -> Ah {
        Ah {
            inner: Arc::new(AhInner {
                ah,
                av: std::ptr::null(),
                _pd: pd,
            }),
        }
    }

    /// The AH's mlx5 address vector, or null (see `AhInner::av`).
    #[inline]
    pub(crate) fn av(&self) -> *const raw::mlx5_wqe_av {
        self.inner.av
    }

    /// Maps this AH to the initiator QP `qp_num` (a DCI or RC QP of this context) whose ECE
    /// congestion-control information the device applies to traffic on this address
    /// (`mlx5dv_map_ah_to_qp(3)`, rdma-core 36+). It is not the remote DCT number.
    ///
    /// # Errors
    /// `mlx5dv_map_ah_to_qp` with its errno: EOPNOTSUPP when the device lacks the AV-to-QP
    /// mapping object or the AH is not global (an InfiniBand LID path), as libmlx5 refuses
    /// those; rdma-core's own test treats that as "not supported".
    pub fn map_to_qp(&self, qp_num: u32) -> Result<()> {
        // SAFETY: the AH is live.
        let rc = unsafe { raw::mlx5dv_map_ah_to_qp(self.as_raw(), qp_num) };
        if rc != 0 {
            return Err(Error::from_errno(
                "mlx5dv_map_ah_to_qp",
                rc,
                "needs a global (GID) AH and a device with the AV-to-QP mapping object; pass an initiator QP number",
            ));
        }
        Ok(())
    }

    /// Adopts an address handle created elsewhere; it is destroyed on drop.
    ///
    /// # Safety
    /// `ah` must be a live AH that nothing else destroys, whose PD outlives the result.
    pub unsafe fn from_raw(ah: NonNull<raw::ibv_ah>) -> Ah {
        Ah::new(ah, None)
    }

    /// The raw AH, for interop.
    #[inline]
    pub fn as_raw(&self) -> *mut raw::ibv_ah {
        self.inner.ah.as_ptr()
    }
}

/// The mlx5 address vector of `ah` (created on `ctx`), or null when the provider is not mlx5.
fn mlx5_av(ah: NonNull<raw::ibv_ah>, ctx: &crate::Context) -> *const raw::mlx5_wqe_av {
    // SAFETY: the context is open; its device pointer is valid while it is.
    if !unsafe { raw::mlx5dv_is_supported((*ctx.as_raw()).device) } {
        return std::ptr::null();
    }
    let mut out = raw::mlx5dv_ah {
        av: std::ptr::null_mut(),
        comp_mask: 0,
    };
    // SAFETY: all-zero is a valid mlx5dv_obj; only the AH member is asked for.
    let mut obj: raw::mlx5dv_obj = unsafe { std::mem::zeroed() };
    obj.ah.r#in = ah.as_ptr().cast();
    obj.ah.out = (&mut out as *mut raw::mlx5dv_ah).cast();
    // SAFETY: a live mlx5 AH; `out` is writable during the call.
    let rc = unsafe { raw::mlx5dv_init_obj(&mut obj, raw::MLX5DV_OBJ_AH) };
    if rc != 0 {
        return std::ptr::null();
    }
    out.av
}

impl Drop for AhInner {
    fn drop(&mut self) {
        // SAFETY: created once, destroyed once, when the last handle (DcPeer values hold one)
        // is gone.
        unsafe { raw::ibv_destroy_ah(self.ah.as_ptr()) };
    }
}

impl std::fmt::Debug for Ah {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ah").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_carries_its_service_level_into_the_address_handle() {
        let lid = PeerPath::Lid { lid: 7, sl: 3 };
        let attr = lid.ah_attr(1);
        assert_eq!((attr.dlid, attr.sl, attr.port_num, attr.is_global), (7, 3, 1, 0));
        let gid = PeerPath::Gid {
            sl: 0,
            gid: [1; 16],
            sgid_index: 2,
            hop_limit: 64,
            traffic_class: 0,
            flow_label: 0,
        }
        .with_sl(5);
        let attr = gid.ah_attr(1);
        assert_eq!((attr.sl, attr.is_global, attr.grh.sgid_index), (5, 1, 2));
        assert_eq!(
            PeerPath::Lid { lid: 1, sl: 0 }.with_sl(0x1f).ah_attr(1).sl,
            0xf,
            "4 bits"
        );
    }
}
