//! A stand-in for a direct DCI's send queue, for the workspace's differential test of the CQ
//! reader (tests/direct_cq.rs): it registers, on a direct CQ, the send-queue state the direct
//! writer keeps (a WQE-index map) for a QP number, so the test can feed the WQE indexes of
//! requests libmlx5 wrote and compare the two decoders on the same CQEs. Not part of the API.

use crate::cq::Cq;
use crate::error::{Error, Result};
use crate::sq_accounting::Poster;

/// A send queue with a WQE-index map, registered on a direct CQ under a QP number; closed
/// when dropped (its completions are then refused as unknown).
#[doc(hidden)]
pub struct DirectQueueProbe {
    poster: Poster,
}

impl Cq {
    /// Registers a stand-in direct send queue for `qp_num` on this direct CQ: `max_send_wr`
    /// requests outstanding at most, `wqe_cnt` (a power of two) WQE basic blocks in its ring.
    ///
    /// # Errors
    /// EINVAL when this is not a direct CQ or `wqe_cnt` is not a power of two; EEXIST when a
    /// queue (a QP's or another probe's) is registered under `qp_num` already.
    #[doc(hidden)]
    pub fn direct_queue_probe(&self, qp_num: u32, max_send_wr: u32, wqe_cnt: u32) -> Result<DirectQueueProbe> {
        const OP: &str = "Cq::direct_queue_probe";
        if !self.is_direct() || !wqe_cnt.is_power_of_two() {
            return Err(Error::invalid(
                OP,
                "a direct CQ and a power-of-two WQE count are needed",
            ));
        }
        let poster = Poster::with_wqe_map(max_send_wr, false, wqe_cnt as usize);
        if !self.registry.add(qp_num, poster.shared().clone()) {
            return Err(Error::from_errno(
                OP,
                libc::EEXIST,
                format!("QP number {qp_num:#x} already has a send queue on this CQ: a second one would take its completions"),
            ));
        }
        poster.routed();
        Ok(DirectQueueProbe { poster })
    }
}

impl DirectQueueProbe {
    /// Request `wr_id` was written at WQE index `wqe_index` (posted at once).
    ///
    /// # Errors
    /// EAGAIN when `max_send_wr` requests are outstanding.
    pub fn wrote(&self, wr_id: u64, wqe_index: u16) -> Result<()> {
        let seq = self
            .poster
            .admit(wr_id, true, 0, true)
            .map_err(|r| Error::from_errno("DirectQueueProbe::wrote", libc::EAGAIN, format!("{r:?}")))?;
        self.poster.note_wqe(wqe_index, seq);
        self.poster.commit();
        Ok(())
    }

    /// Requests written and not yet retired by a completion.
    pub fn outstanding(&self) -> u64 {
        self.poster.outstanding()
    }
}

impl Drop for DirectQueueProbe {
    fn drop(&mut self) {
        self.poster.close();
        self.poster.gone();
    }
}

impl std::fmt::Debug for DirectQueueProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectQueueProbe")
            .field("outstanding", &self.outstanding())
            .finish()
    }
}
