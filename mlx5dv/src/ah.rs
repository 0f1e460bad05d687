//! Address handles: how a DC initiator names the path to a peer's DC target.

use crate::addr::DcTargetAddr;
use crate::error::{Error, Result};
use crate::pd::Pd;
use mlx5dv_raw as raw;
use std::ptr::NonNull;
use std::sync::Arc;

/// Where a peer is, as an address handle needs it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PeerPath {
    /// InfiniBand: the peer's LID.
    Lid(u16),
    /// RoCE (or routed InfiniBand): the peer's GID, and the local GID index to send from.
    Gid {
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
    /// The path to a DC target: by GID when `sgid_index` is given (RoCE), by LID otherwise.
    pub fn to_dc_target(addr: &DcTargetAddr, sgid_index: Option<u8>) -> PeerPath {
        match sgid_index {
            Some(sgid_index) => PeerPath::Gid {
                gid: addr.gid,
                sgid_index,
                hop_limit: 64,
                traffic_class: 0,
                flow_label: 0,
            },
            None => PeerPath::Lid(addr.lid),
        }
    }

    pub(crate) fn ah_attr(&self, port: u8) -> raw::ibv_ah_attr {
        let mut attr = raw::ibv_ah_attr {
            port_num: port,
            ..Default::default()
        };
        match *self {
            PeerPath::Lid(lid) => attr.dlid = lid,
            PeerPath::Gid {
                gid,
                sgid_index,
                hop_limit,
                traffic_class,
                flow_label,
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
            .map(|ah| Ah::new(ah, Some(self.clone())))
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
            inner: Arc::new(AhInner { ah, _pd: pd }),
        }
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
