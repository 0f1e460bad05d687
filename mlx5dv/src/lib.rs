//! Safe Rust for the mlx5 Dynamically Connected (DC) RDMA transport.
//!
//! With RC, every node keeps a queue pair per peer. DC needs one DC target ([`Dct`]) and a few
//! DC initiators ([`Dci`]) per node, whatever the cluster size: each work request names its
//! destination ([`DcPeer`]: address handle, remote DCT number, DC key).
//!
//! Objects free themselves on drop and borrow their parents, so none outlives what it was
//! made from:
//!
//! ```compile_fail,E0505
//! # fn f(ctx: &mlx5dv::Context) -> mlx5dv::Result<()> {
//! let pd = ctx.alloc_pd()?;
//! let mr = pd.alloc_mr(4096, mlx5dv::Access::LOCAL_WRITE)?;
//! drop(pd); // error: `pd` is still borrowed by `mr`
//! let _ = mr.lkey();
//! # Ok(()) }
//! ```
//!
//! Queue pairs carry their state in their type ([`state`]); only [`Dci<Rts>`](Dci) and
//! [`RcQp<Rts>`](RcQp) open a [`Batch`] of work requests, and a failed transition returns the
//! object with the error ([`TransitionError`]). The post path allocates nothing, takes no
//! lock and touches no reference count. [`mlx5dv_raw`] is re-exported as [`raw`]; every handle
//! has `as_raw()`.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod addr;
pub mod ah;
pub mod async_event;
#[cfg(feature = "cm")]
pub mod cm;
pub mod comp_channel;
pub mod context;
pub mod cq;
pub mod dc;
pub mod device;
pub mod endpoint;
pub mod error;
pub mod mr;
pub mod pd;
pub mod qp;
pub mod rc;
mod sq;
pub mod srq;
mod wait;
pub mod wr;

pub use addr::{AddrError, DcTargetAddr, Mtu, RemoteMemory};
pub use ah::{Ah, PeerPath};
pub use async_event::{AsyncEvent, AsyncEvents, SrqRef};
pub use comp_channel::CompChannel;
pub use context::{Context, DeviceAttr, PortAttr};
pub use cq::{Completion, Cq, WcOpcode, WcStatus};
pub use dc::{DcKey, Dci, DciBuilder, DciParts, Dct, DctBuilder, Mlx5Caps, Mlx5Context};
pub use device::{devices, Device, DeviceList};
pub use endpoint::{DciPool, EndpointId, EpCompletion, Policy, Request};
pub use error::{Error, Result};
pub use mlx5dv_raw as raw;
pub use mr::{Access, Mr, Sge};
pub use pd::Pd;
pub use qp::{state, QpState, RtsAttr, TransitionError};
pub use rc::{RcCaps, RcQp, RcRemote};
pub use srq::Srq;
pub use wr::{Batch, DcPeer, Wr};
