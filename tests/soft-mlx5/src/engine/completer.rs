//! Writing CQEs into a CQ ring, as the HCA does: the 64 bytes, the owner bit last, overrun
//! detection against the consumer index in the doorbell record, and completion events for an
//! armed CQ (mlx5 arm doorbell: `sn << 28 | cmd | ci` in dbrec[1]).

use super::cqe::Cqe;
use crate::device::events::Owner;
use crate::device::{event, AsyncEvent, Device};
use std::sync::atomic::{fence, Ordering};

/// Writes `cqe` into the CQ `cq`; false when the CQ is gone or overran (the CQE is lost and
/// the CQ error event raised, as the HCA does).
pub fn post(dev: &mut Device, cq: u32, cqe: &Cqe) -> bool {
    let dma = &dev.dma;
    let Some(c) = dev.cqs.get_mut(&cq) else {
        return false;
    };
    if c.overrun {
        // An overrun CQ stays in error: nothing more is written to it.
        return false;
    }
    let ci = dma.read_be32(c.db) & 0xff_ffff;
    if c.pi.wrapping_sub(ci) & 0xff_ffff >= c.ncqe {
        // CQ overrun (IBA 11.6.3.3, an affiliated CQ error): the CQ error event, and the QPs
        // completing into this CQ go to ERR with their own fatal event, since the completion
        // that would have reported their work is lost.
        c.overrun = true;
        let ev = AsyncEvent {
            element: c.user_handle,
            event_type: event::CQ_ERR,
        };
        dev.raise(ev, Owner::CqAsync(cq));
        let mut victims: Vec<(u32, u64)> = dev
            .qps
            .iter()
            .filter(|(_, q)| q.send_cq == Some(cq) || q.recv_cq == Some(cq))
            .filter(|(_, q)| {
                q.kind != crate::device::objects::QpKind::Dct && q.state != crate::device::objects::QpState::Err
            })
            .map(|(&h, q)| (h, q.user_handle))
            .collect();
        // In handle order (the order their events are raised in).
        victims.sort_unstable();
        for (h, user_handle) in victims {
            dev.enter_error(h);
            dev.raise(
                AsyncEvent {
                    element: user_handle,
                    event_type: event::QP_FATAL,
                },
                Owner::Qp(h),
            );
        }
        return false;
    }
    let addr = c.cqe64_at(c.pi);
    crate::log(format_args!("cq {:#x} pi {}: {cqe:?}", c.cqn, c.pi));
    let mut bytes = cqe.encode();
    let owner = u8::from(c.pi & c.ncqe != 0);
    bytes[63] |= owner;
    dma.write(addr, &bytes[..63]);
    // The owner byte goes last: libmlx5 reads the rest only once it sees the owner flip.
    fence(Ordering::Release);
    dma.write(addr + 63, &bytes[63..]);
    c.pi = c.pi.wrapping_add(1);
    if c.armed_sn.take().is_some() {
        let (channel, user_handle) = (c.channel, c.user_handle);
        notify(dev, cq, channel, user_handle);
    }
    true
}

/// What the arm doorbell record holds until software first arms the CQ: bits 25..27, which no
/// arm doorbell sets (PRM "CQ doorbell": `arm_sn` 31..28, `cmd` 24, `ci` 23..0; libmlx5
/// `mlx5_arm_cq` writes `sn << 28 | cmd | ci`).
///
/// A ConnectX acts on every CQ doorbell written to the UAR; the emulator cannot see a store,
/// only memory: the UAR word (0x20) holds the last one alone, so of two CQs armed back to back
/// only the second would be seen there, and the first arm of a CQ (sn 0, ci 0) leaves a zeroed
/// record as it was. CREATE_CQ therefore leaves this value in the record (libmlx5 zeroes it
/// before the command and never reads it again; `mlx5_create_cq`), so every CQ's first arm
/// changes its own record and is acted on whatever else was rung after it.
pub const ARM_RECORD_UNARMED: u32 = 0x0e00_0000;

/// CREATE_CQ's side of [`ARM_RECORD_UNARMED`]: the record at `db` (the CQ's doorbell record,
/// arm word at +4) before software arms the CQ.
pub fn init_arm_record(dma: &dyn crate::mem::Dma, db: u64) {
    dma.write(db + 4, &ARM_RECORD_UNARMED.to_be_bytes());
}

/// Looks at the CQ's arm doorbell record and remembers an arm request not yet acted on.
pub fn check_arm(dev: &mut Device, cq: u32) {
    let dma = &dev.dma;
    let Some(c) = dev.cqs.get_mut(&cq) else {
        return;
    };
    let arm = dma.read_be32(c.db + 4);
    let sn = arm >> 28;
    let ci = arm & 0xff_ffff;
    if c.channel.is_none() || c.armed_sn.is_some() || c.last_arm == Some(arm) || arm & ARM_RECORD_UNARMED != 0 {
        return;
    }
    c.last_arm = Some(arm);
    // Armed: the next CQE raises an event; one already waiting past ci raises it now.
    if c.pi.wrapping_sub(ci) & 0xff_ffff != 0 {
        let (channel, user_handle) = (c.channel, c.user_handle);
        notify(dev, cq, channel, user_handle);
    } else {
        c.armed_sn = Some(sn);
    }
}

/// A completion event (struct ib_uverbs_comp_event_desc: the CQ's user handle) on the CQ's
/// completion channel.
fn notify(dev: &mut Device, cq: u32, channel: Option<i32>, user_handle: u64) {
    if let Some(fd) = channel {
        dev.events.push(fd, user_handle.to_ne_bytes().to_vec(), Owner::Cq(cq));
    }
}

/// MODIFY_CQ with op_mod RESIZE, as the HCA carries it out for a user CQ: the CQ must hold
/// the completions still outstanding (producer index minus the consumer index of the doorbell
/// record), or the command fails with BAD_SIZE_OUTS_CQES; otherwise the HCA writes one
/// MLX5_CQE_RESIZE_CQ CQE into the old ring at the producer index and goes on in the new ring
/// from the next index. The library copies what lies between its consumer index and that CQE
/// into the new ring, one index on (libmlx5 `mlx5_cq_resize_copy_cqes`, mlx5_ib
/// `copy_resize_cqes`). Err(command status).
pub fn resize(dev: &mut Device, cq: u32, buf: u64, ncqe: u32) -> Result<(), u8> {
    use crate::kernel::prm::MLX5_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR;
    let dma = &dev.dma;
    let c = dev
        .cqs
        .get_mut(&cq)
        .ok_or(crate::kernel::prm::MLX5_CMD_STAT_BAD_RES_ERR)?;
    let ci = dma.read_be32(c.db) & 0xff_ffff;
    let outstanding = c.pi.wrapping_sub(ci) & 0xff_ffff;
    if outstanding > ncqe {
        return Err(MLX5_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR);
    }
    let addr = c.cqe64_at(c.pi);
    let mut bytes = [0u8; 64];
    bytes[63] = (super::cqe::op::RESIZE_CQ << 4) | u8::from(c.pi & c.ncqe != 0);
    dma.write(addr, &bytes[..63]);
    fence(Ordering::Release);
    dma.write(addr + 63, &bytes[63..]);
    crate::log(format_args!(
        "cq {:#x} pi {}: resize CQE, {} -> {ncqe} entries ({outstanding} outstanding)",
        c.cqn, c.pi, c.ncqe
    ));
    c.pi = c.pi.wrapping_add(1);
    c.buf = buf;
    c.ncqe = ncqe;
    Ok(())
}
