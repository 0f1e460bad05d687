//! The overrun oracle: stricter than silicon on purpose. A ConnectX trusts the producer
//! counters software writes into the doorbell records; a library that posts more work than the
//! ring holds overwrites WQEs the HCA still owns and silicon executes whatever it then finds.
//! The device here checks, on every pass, that no producer counter runs more than its ring
//! ahead of what the device has consumed (send queue: the oldest WQE not yet completed, since
//! software may reuse a slot only after a CQE covers it, libmlx5 `mlx5_wq_overflow`; receive
//! queue: the receives taken), and a violation fails the run with a message naming the QP.
//!
//! Only a QP that executes its rings is checked. On RESET libmlx5 zeroes its doorbell records
//! only after the kernel's MODIFY_QP returned (`mlx5_modify_qp`: `mlx5_init_qp_indices`, then
//! `db[MLX5_SND_DBR] = db[MLX5_RCV_DBR] = 0`), and the device has reset its consumer counters
//! before that: in between, the record still holds the old producer counter. A ConnectX reads
//! the record only when rung, which software does in RTS (send) or from INIT (receive), long
//! after the zeroing; so the send ring is checked from RTS on, the receive ring out of RESET,
//! and a send record still holding its value from RESET (software that, like UCX, rewrites it
//! only with its next post) is not checked until it changes.

use crate::device::objects::{QpKind, QpState};
use crate::device::Device;

/// Checks QP `h`'s rings; Err names the QP and the ring that overran.
pub fn check(dev: &Device, h: u32) -> Result<(), String> {
    let Some(qp) = dev.qps.get(&h) else {
        return Ok(());
    };
    if qp.kind == QpKind::Dct {
        return Ok(());
    }
    // The doorbell records carry 16-bit counters (MLX5_SND_DBR / MLX5_RCV_DBR).
    let executes_sends = !matches!(qp.state, QpState::Reset | QpState::Init | QpState::Rtr);
    if qp.sq.cnt > 0 && executes_sends {
        // A record left as it was at RESET is not acted on (Qp::sq_producer).
        let pi = qp.sq_producer(dev.dma.as_ref(), dev.dma.read_be32(qp.db + 4) & 0xffff);
        let ahead = pi.wrapping_sub(qp.sq_ci) & 0xffff;
        if ahead > qp.sq.cnt {
            return Err(format!(
                "send queue overrun on QP {:#x}: the producer counter ({pi}) is {ahead} WQE basic blocks \
                 ahead of the oldest WQE the device has not completed ({}), the ring holds {}; software \
                 posted over work the HCA still owns",
                qp.qpn,
                qp.sq_ci & 0xffff,
                qp.sq.cnt
            ));
        }
    }
    if qp.rq.cnt > 0 && qp.srq.is_none() && qp.state != QpState::Reset {
        let posted = dev.dma.read_be32(qp.db) & 0xffff;
        let ahead = posted.wrapping_sub(qp.rq_ci) & 0xffff;
        if ahead > qp.rq.cnt {
            return Err(format!(
                "receive queue overrun on QP {:#x}: the producer counter ({posted}) is {ahead} receive WQEs \
                 ahead of the device's consumer counter ({}), the ring holds {}",
                qp.qpn,
                qp.rq_ci & 0xffff,
                qp.rq.cnt
            ));
        }
    }
    Ok(())
}
