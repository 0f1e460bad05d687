//! The Dynamically Connected transport: mlx5 capabilities, DC targets ([`Dct`]) and DC
//! initiators ([`Dci`]).
//!
//! A node needs one DCT (on an SRQ) to be reached by anyone, and a few DCIs to reach anyone:
//! every work request on a DCI names its destination ([`crate::DcPeer`]).
//!
//! The DCT number exists only on a ready [`Dct`]: the device assigns it when the DCT reaches
//! RTR, and the builder returns nothing before that.
//!
//! ```compile_fail,E0599
//! # fn f(b: mlx5dv::DctBuilder<'_>) {
//! let n = b.dct_number(); // error: a DCT has no number until it is built (RTR)
//! # }
//! ```
//!
//! Only a DCI in RTS can post:
//!
//! ```compile_fail,E0599
//! # fn f(dci: &mut mlx5dv::Dci<mlx5dv::state::Rtr>) {
//! let batch = dci.batch(); // error: no `batch` before RTS
//! # }
//! ```
//!
//! A DCI moves between threads (`Send`) and posts from one thread at a time (it is not `Sync`:
//! posting opens a batch on the QP's single send queue):
//!
//! ```compile_fail,E0277
//! fn shared<T: Sync>(_: &T) {}
//! # fn f(dci: &mlx5dv::Dci<mlx5dv::state::Rts>) {
//! shared(dci); // error: a Dci is not Sync
//! # }
//! ```

mod caps;
mod initiator;
mod peer;
mod target;

pub use caps::{Mlx5Caps, Mlx5Context, OooRecvWrsCaps};
pub use initiator::{Dci, DciBuilder, DciParts, DCI_DEFAULT_SEND_OPS};
pub use peer::DcPeer;
pub use target::{Dct, DctAttributes, DctBuilder, DctContext, DctState};

use crate::context::mtu_bytes;
use crate::cq::Cq;
use crate::error::{Error, Result};
use crate::pd::Pd;
use crate::qp::init_attr_ex;
use crate::srq::Srq;
use mlx5dv_raw as raw;
use std::ptr::NonNull;

/// A 64-bit DC access key: initiators must present the key of the DCT they reach. A secret:
/// never shown by `Debug`.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct DcKey(u64);

impl DcKey {
    /// A key with this value.
    pub const fn new(key: u64) -> DcKey {
        DcKey(key)
    }

    /// The value, for handing to the library or to a trusted peer.
    pub const fn expose(&self) -> u64 {
        self.0
    }
}

impl std::fmt::Debug for DcKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DcKey(<redacted>)")
    }
}

#[allow(clippy::too_many_arguments)] // the DCT's and the DCI's creation, each a few of them
fn create_dc_qp(
    pd: &Pd,
    cq: &Cq,
    srq: Option<&Srq>,
    cap: raw::ibv_qp_cap,
    send_ops: u64,
    dv: &mut raw::mlx5dv_qp_init_attr,
    own_register: Option<&crate::direct::register::OwnRegister>,
    op: &'static str,
) -> Result<(NonNull<raw::ibv_qp>, raw::ibv_qp_cap)> {
    let atomic_ops = u64::from(raw::IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | raw::IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
    let ctx = pd.context();
    let mut attr = init_attr_ex(pd, cq, srq, cap, raw::IBV_QPT_DRIVER, send_ops);
    if let Some(own) = own_register {
        attr.pd = own.pd();
    }
    // SAFETY: the context, PD, CQ and SRQ are live; both attribute structs are initialised.
    let qp = unsafe { raw::mlx5dv_create_qp(ctx.as_raw(), &mut attr, dv) };
    // The library writes back the capacities it actually created (mlx5: rounded up).
    let cap = attr.cap;
    NonNull::new(qp).map(|qp| (qp, cap)).ok_or_else(|| {
        let err = Error::last_os_error(op, "");
        let hint = if err.is_not_supported() && send_ops & atomic_ops != 0 {
            // libmlx5 refuses atomic send ops without the device's atomic capability
            // (mlx5_qp_fill_wr_pfns): that, not DC, is what failed.
            format!(
                "{} does not support atomics here (atomic_cap is NONE): build the DCI without with_atomics()",
                ctx.name()
            )
        } else if err.is_not_supported() {
            format!(
                "{} is not an mlx5 device with DC support; DC needs ConnectX-5 or newer",
                ctx.name()
            )
        } else {
            "check the capacities against the device limits and the DC attributes".to_string()
        };
        Error::from_errno(op, err.errno().unwrap_or(0), hint).on(ctx.name())
    })
}

fn mtu_code(bytes: u32) -> Option<raw::ibv_mtu> {
    (raw::IBV_MTU_256..=raw::IBV_MTU_4096).find(|&m| mtu_bytes(m) == bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dc_key_never_appears_in_debug_output() {
        let key = DcKey::new(0xFFEE_DDCC_BBAA_9988);
        let text = format!("{key:?}");
        assert!(
            !text.contains("ffeeddcc")
                && !text.contains("FFEEDDCC")
                && !text.contains(&0xFFEE_DDCC_BBAA_9988u64.to_string()),
            "{text}"
        );
        assert_eq!(key.expose(), 0xFFEE_DDCC_BBAA_9988);
    }

    #[test]
    fn mtu_codes_cover_exactly_the_five_ib_mtus() {
        assert_eq!(mtu_code(256), Some(raw::IBV_MTU_256));
        assert_eq!(mtu_code(4096), Some(raw::IBV_MTU_4096));
        assert_eq!(mtu_code(1500), None);
        assert_eq!(mtu_code(0), None);
    }
}
