//! The Dynamically Connected transport: mlx5 capabilities, DC targets ([`Dct`]) and DC
//! initiators ([`Dci`]).
//!
//! A node needs one DCT (on an SRQ) to be reached by anyone, and a few DCIs to reach anyone:
//! every work request on a DCI names its destination ([`crate::DcPeer`]).
//!
//! # From the exp verbs: NVIDIA's DC mapping table, row by row
//!
//! MLNX_OFED's experimental verbs had DC calls of their own; NVIDIA's "DC QPs" migration
//! table maps each to rdma-core and marks some "Not supported by RDMA-Core". The third column
//! is this crate's answer.
//!
//! | exp verbs | rdma-core | mlx5dv |
//! |---|---|---|
//! | `ibv_exp_create_dct` (`ibv_exp_dct_init_attr`: PD, CQ, SRQ, `dc_key`, port, P_Key index, access, min RNR timer, traffic class, flow label, MTU, GID index, hop limit) | `mlx5dv_create_qp` (`MLX5DV_DCTYPE_DCT`, `dct_access_key`), then `ibv_modify_qp` to INIT and RTR | [`DctBuilder`] and its setters; [`DctBuilder::build`] returns a [`Dct`] in RTR |
//! | `ibv_exp_destroy_dct` | `ibv_destroy_qp` | dropping the [`Dct`] |
//! | `ibv_exp_query_dct` | `ibv_query_qp` on the DCT (mlx5_ib: RTR only; remote access bits, port, min RNR timer, MTU, P_Key index; no GRH reaches userspace) | [`Dct::query`] → [`DctAttributes`] |
//! | DCT `dc_key`, `key_violations`, `state`: "Not supported by RDMA-Core" | none in verbs; the DCT context through DEVX `QUERY_DCT` (`mlx5dv_devx_qp_query`, what libmlx5's `query_dct_in_order` does) | [`Dct::query_context`] → [`DctContext`]: [`DctState`] (active, draining, drained), the key (a [`DcKey`], redacted in `Debug`), the violation count, and the GRH fields; without DEVX a clear EOPNOTSUPP/EPROTONOSUPPORT/EINVAL saying so |
//! | `ibv_exp_arm_dct` (key-violation events) | only for a DCT created through DEVX (`ARM_DCT_FOR_KEY_VIOLATION`, event 0x1d) | not offered: the crate's DCTs are verbs DCTs; poll [`DctContext::key_violations`] instead |
//! | `ibv_exp_create_qp` with `IBV_EXP_QPT_DC_INI` | `mlx5dv_create_qp` (`MLX5DV_DCTYPE_DCI`, send-ops flags) | [`DciBuilder`] → [`Dci`] in RESET |
//! | `ibv_exp_modify_qp` (DCI INIT, RTR, RTS) | `ibv_modify_qp` | [`Dci::init`], [`Dci::rtr`], [`Dci::rts`] (typestate); [`DciBuilder::build_ready`] |
//! | `ibv_exp_post_send` with `dc.ah`, `dc.dct_number`, `dc.dct_access_key` | `ibv_wr_*` + `mlx5dv_wr_set_dc_addr` | [`Dci::batch`] with `.to(&`[`DcPeer`]`)` on every request |
//! | `IBV_EXP_DCT_OOO_RW_DATA_PLACEMENT` | `MLX5DV_QP_CREATE_OOO_DP` (rdma-core 55+; `ooo_recv_wrs_caps.max_dct`) | [`DctBuilder::out_of_order_placement`], [`DciBuilder::out_of_order_placement`], [`Mlx5Caps::ooo_recv_wrs`]; refused with the reason where the running libmlx5 or the device lacks it (see below) |
//! | `IBV_EXP_DEVICE_DC_RD_REQ` / `IBV_EXP_DEVICE_DC_RD_RES` | `max_dc_rd_atom` (requester) / `max_dc_init_rd_atom` (responder), `MLX5DV_CONTEXT_MASK_MAX_DC_RD_ATOM`, rdma-core 47+ | [`Mlx5Caps::max_dc_requester_rd_atomic`] / [`Mlx5Caps::max_dc_responder_rd_atomic`]; [`Dci::rts`] refuses a `max_rd_atomic` above the requester limit |
//! | `IBV_EXP_DEVICE_ATTR_MAX_DCT` | no field (the HCA cap `log_max_dct`, readable only by DEVX `QUERY_HCA_CAP`) | not offered; [`Mlx5Context::probe_dc`] tells whether a DCT can be made at all |
//! | DC ODP (`dc_odp_caps`) | `mlx5dv_context.dc_odp_caps` (rdma-core 26+) | [`Mlx5Caps::dc_odp_caps`] |
//! | `IBV_EXP_TM_CAP_DC` (tag matching over DC): "Not supported by RDMA-Core" | no verbs support (no DC rendezvous header in `tm_types.h`; UCX creates a DEVX DCT with `offload_type = RNDV`) | not offered: it needs a DCT created through DEVX, which this crate does not create |
//!
//! # Out-of-order data placement
//!
//! With [`DctBuilder::out_of_order_placement`] and [`DciBuilder::out_of_order_placement`] the
//! device may write the data of an RDMA write or a send into memory in any order, packets of
//! one message included. The DCI and the DCT must both have it, or neither: a DCT built with it
//! says so in its address ([`crate::DcTargetAddr::out_of_order`], bit 0 of the encoding's flags
//! byte, which a decoder from before the flag refuses as a reserved byte set), and a
//! [`crate::DciPool`] refuses an endpoint whose DCT disagrees with its
//! [`crate::PoolConfig::out_of_order`]. A lone [`Dci`] is not checked on the post path: its
//! application pairs it with such DCTs only. Completions stay in order. So:
//!
//! * never poll data memory to learn that data arrived (a flag byte at the end of a buffer can
//!   land before the bytes in front of it): wait for a completion, a write with immediate or a
//!   send the application orders after the data;
//! * post receives of one size to the DCT's SRQ.
//!
//! The builders refuse it with EOPNOTSUPP, before any creation, unless the running libmlx5
//! reports `MLX5DV_CONTEXT_MASK_OOO_RECV_WRS` with a non-zero `max_dct` ([`Mlx5Caps::dc_out_of_order`]):
//! the check is on the library loaded at run time (rdma-core 44 clears the mask bit it does
//! not know), not on the headers the crate was built with.
//!
//! # Typestate
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
///
/// A wrong key is not refused where it is given: the DCT drops the request silently, so the
/// initiator's request ends with [`WcStatus::RetryExcErr`](crate::WcStatus::RetryExcErr) after
/// the ACK timeouts, exactly as for a dead peer, and the target's only trace is its
/// key-violation count ([`Dct::query_context`](crate::Dct::query_context)).
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
        } else if err.errno() == Some(libc::EINVAL) && cap.max_inline_data > 0 {
            match largest_inline(pd, cq, srq, cap, send_ops, dv, own_register) {
                Some(limit) if limit < cap.max_inline_data => format!(
                    "max_inline_data {} exceeds what {} takes with these capacities: at most {limit} bytes \
                     (one send WQE, max_wqe_sz_sq, less the DC headers): ask for at most {limit}",
                    cap.max_inline_data,
                    ctx.name()
                ),
                _ => "check the capacities against the device limits and the DC attributes".to_string(),
            }
        } else {
            "check the capacities against the device limits and the DC attributes".to_string()
        };
        Error::from_errno(op, err.errno().unwrap_or(0), hint).on(ctx.name())
    })
}

/// After a refused creation: the largest `max_inline_data` the library accepts with the other
/// capacities unchanged (None if it refuses even 0, so something else was wrong). Found by
/// creating and destroying QPs (bisection), on the failure path only.
fn largest_inline(
    pd: &Pd,
    cq: &Cq,
    srq: Option<&Srq>,
    cap: raw::ibv_qp_cap,
    send_ops: u64,
    dv: &mut raw::mlx5dv_qp_init_attr,
    own_register: Option<&crate::direct::register::OwnRegister>,
) -> Option<u32> {
    let mut accepts = |inline: u32| {
        let mut attr = init_attr_ex(
            pd,
            cq,
            srq,
            raw::ibv_qp_cap {
                max_inline_data: inline,
                ..cap
            },
            raw::IBV_QPT_DRIVER,
            send_ops,
        );
        if let Some(own) = own_register {
            attr.pd = own.pd();
        }
        // SAFETY: as in create_dc_qp: live objects, initialised attributes.
        let qp = unsafe { raw::mlx5dv_create_qp(pd.context().as_raw(), &mut attr, dv) };
        if qp.is_null() {
            return false;
        }
        // SAFETY: the probe QP created just above, referenced by nothing else.
        unsafe { raw::ibv_destroy_qp(qp) };
        true
    };
    if !accepts(0) {
        return None;
    }
    let (mut ok, mut bad) = (0u32, cap.max_inline_data);
    while bad - ok > 1 {
        let mid = ok + (bad - ok) / 2;
        if accepts(mid) {
            ok = mid;
        } else {
            bad = mid;
        }
    }
    Some(ok)
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
