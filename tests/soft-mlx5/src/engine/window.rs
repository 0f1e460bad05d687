//! Memory windows bound and unbound by work requests: what a ConnectX does with the UMR WQE
//! libmlx5 writes for `ibv_bind_mw` (providers/mlx5/qp.c `set_bind_wr`: the window named by
//! its current key in the control segment's `imm`, its new mkey context, one KLM entry into
//! the region for a bind, none for an unbind). The responder's side, a request through a
//! window, is `Device::translate_window`.

use super::responder::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_ATOMIC, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};
use super::wqe::{
    SendWqe, MKEY_ACCESS_ATOMIC, MKEY_ACCESS_REMOTE_READ, MKEY_ACCESS_REMOTE_WRITE, UMR_CTRL_FLAG_CHECK_FREE,
};
use crate::device::objects::MwBinding;
use crate::device::Device;

/// IB_ACCESS_MW_BIND: a region windows may be bound in.
pub const ACCESS_MW_BIND: u32 = 1 << 4;

/// MLX5_WQE_UMR_CTRL_MKEY_MASK_* (mlx5dv.h): which fields of the mkey context a UMR writes;
/// the others keep their value, whatever the WQE holds there (libmlx5 leaves an unbind's
/// address, length and rights as the ring slot had them).
mod mask {
    pub const LEN: u64 = 1 << 0;
    pub const START_ADDR: u64 = 1 << 6;
    pub const MKEY: u64 = 1 << 13;
    pub const ACCESS: u64 = (1 << 18) | (1 << 19) | (1 << 20) | (1 << 21);
    pub const FREE: u64 = 1 << 29;
}

/// A memory window bind error (MLX5_CQE_SYNDROME_MW_BIND_ERR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindError;

/// The remote rights an mkey context's access flags grant.
fn remote_rights(flags: u8) -> u32 {
    let mut access = 0;
    if flags & MKEY_ACCESS_REMOTE_WRITE != 0 {
        access |= ACCESS_REMOTE_WRITE;
    }
    if flags & MKEY_ACCESS_REMOTE_READ != 0 {
        access |= ACCESS_REMOTE_READ;
    }
    if flags & MKEY_ACCESS_ATOMIC != 0 {
        access |= ACCESS_REMOTE_ATOMIC;
    }
    access
}

/// Executes the bind or unbind `wqe` (a UMR) posted on a QP of PD `pd`; Err is a memory window
/// bind error (MLX5_CQE_SYNDROME_MW_BIND_ERR, libmlx5's IBV_WC_MW_BIND_ERR). The checks are
/// IBA 10.6.7.2.2's: the window is named by its current key and belongs to the QP's PD; a
/// type 2 bind asks for a free window (MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE); a bind's region is
/// of the same PD, was registered with IB_ACCESS_MW_BIND, holds the range, and has local
/// write when the window grants remote write or atomics. Either way the window takes the new
/// 8-bit tag, so every key it had before reaches nothing.
pub fn bind(dev: &mut Device, pd: u32, wqe: &SendWqe) -> Result<(), BindError> {
    let umr = wqe.umr.ok_or(BindError)?;
    let (&handle, w) = dev.mws.iter().find(|(_, w)| w.key == wqe.imm).ok_or(BindError)?;
    if w.pd != pd || (umr.flags & UMR_CTRL_FLAG_CHECK_FREE != 0 && w.bound.is_some()) {
        return Err(BindError);
    }
    let m = umr.mkey_mask;
    let bound = match umr.klm {
        // An unbind: the window made free (its address, length and rights are not written).
        None if m & mask::FREE != 0 && umr.free => None,
        None => return Err(BindError),
        Some((count, mr_key, address)) => {
            let len = u64::from(count);
            let writes = mask::FREE | mask::LEN | mask::START_ADDR;
            if m & writes != writes || umr.free || len == 0 || umr.len != len || umr.start != address {
                return Err(BindError);
            }
            let access = if m & mask::ACCESS != 0 {
                remote_rights(umr.access)
            } else {
                0
            };
            let mr = dev.mr_by_key(mr_key).ok_or(BindError)?;
            let needs_local_write = access & (ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC) != 0;
            if mr.pd != pd
                || mr.access & ACCESS_MW_BIND == 0
                || !mr.covers(address, len)
                || (needs_local_write && mr.access & ACCESS_LOCAL_WRITE == 0)
            {
                return Err(BindError);
            }
            Some(MwBinding {
                start: address,
                len,
                access,
                qpn: umr.qpn_mkey >> 8,
                mr_key,
            })
        }
    };
    let w = dev.mws.get_mut(&handle).ok_or(BindError)?;
    if m & mask::MKEY != 0 {
        w.key = (w.key & !0xff) | (umr.qpn_mkey & 0xff);
    }
    w.bound = bound;
    Ok(())
}

/// The window a Send with Invalidate arriving at QP `qpn` of PD `pd` invalidates with `key`:
/// a bound type 2 window of that PD, bound to that QP, whose current key it is.
pub fn remotely_invalidated(dev: &Device, key: u32, pd: u32, qpn: u32) -> Option<u32> {
    dev.mws
        .iter()
        .find(|(_, w)| w.key == key && w.mw_type == 2 && w.pd == pd && w.bound.is_some_and(|b| b.qpn == qpn))
        .map(|(&h, _)| h)
}
