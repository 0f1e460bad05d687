//! Safe Rust for the mlx5 Dynamically Connected (DC) RDMA transport.
//!
//! With RC, every node keeps a queue pair per peer. DC needs one DC target ([`Dct`]) and a few
//! DC initiators ([`Dci`]) per node, whatever the cluster size: each work request names its
//! destination ([`DcPeer`]: address handle, remote DCT number, DC key).
//!
//! # Ownership
//! Every handle is `'static`: an object holds what it was made from (a region its PD, a queue
//! pair its PD, CQ and SRQ, a PD its context) through reference counts that change only when
//! objects are made or dropped, never when posting or polling. So the library objects are
//! freed in the order libibverbs needs whatever order the handles are dropped in, and a
//! struct can own them all:
//!
//! ```no_run
//! # use mlx5dv::*;
//! struct Transport {
//!     ctx: Context,
//!     pd: Pd,
//!     dct: Dct,
//!     pool: DciPool,
//!     buf: Mr<Vec<u8>>,
//! }
//! # fn build(ctx: Context) -> Result<Transport> {
//! let mlx5 = ctx.mlx5()?;
//! let pd = ctx.alloc_pd()?;
//! let cq = ctx.create_cq(1024)?;
//! let srq = pd.create_srq(256, 1)?;
//! let dct = DctBuilder::new(&mlx5, &pd, &cq, &srq, DcKey::new(7)).build()?;
//! let pool = DciPool::new(&mlx5, &pd, ctx.create_cq(1024)?, PoolConfig::default())?;
//! let buf = pd.register(vec![0u8; 4096], Access::LOCAL_WRITE)?;
//! drop((cq, srq)); // the DCT holds them
//! Ok(Transport { ctx, pd, dct, pool, buf })
//! # }
//! ```
//!
//! # Threads
//! Contexts, PDs, regions, SRQs, address handles and DCTs are `Send` and `Sync`. Queue pairs,
//! CQs and the DCI pool are `Send` but not `Sync`: each posts (or polls) from one thread at a
//! time, which is what libibverbs' single send queue and CQ cursor allow without a lock. A
//! queue pair and its CQ may live on different threads: the send-queue count they share is a
//! single-producer, single-consumer ring of atomics.
//!
//! # Memory
//! See [`mr`]: memory the application owns (`Vec<u8>`, `Box<[u8]>`, mmap'd files, huge pages,
//! a borrowed slice, dma-bufs) is registered and given back on deregistration, and no safe
//! reference ever points at bytes the adapter may be writing.
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
mod direct;
pub mod endpoint;
pub mod error;
pub mod local_ip;
pub mod mr;
pub mod pd;
pub mod qp;
pub mod rc;
pub mod s3;
mod sq_accounting;
pub mod srq;
mod wait;
pub mod wr;

pub use addr::{AddrError, DcTargetAddr, Mtu, RemoteMemory};
pub use ah::{Ah, PeerPath};
pub use async_event::{AsyncEvent, AsyncEvents, SrqRef};
pub use comp_channel::CompChannel;
pub use context::{Context, DeviceAttr, PortAttr};
pub use cq::{Completion, Cq, LeanCompletion, WcOpcode, WcStatus};
pub use dc::{
    DcKey, DcPeer, Dci, DciBuilder, DciParts, Dct, DctAttributes, DctBuilder, DctContext, DctState, Mlx5Caps,
    Mlx5Context, OooRecvWrsCaps,
};
pub use device::{devices, open_device, open_device_from_env, Device, DeviceList, DEVICE_ENV};
#[doc(hidden)]
pub use direct::probe::DirectQueueProbe;
pub use direct::SendBackend;
pub use endpoint::{DciPool, EndpointId, EpCompletion, Policy, PoolConfig, Probation, Request};
pub use error::{Error, Result};
pub use local_ip::{open_by_ip, LocalPort};
pub use mlx5dv_raw as raw;
pub use mr::{Access, AlignedBuf, BoundedBuffer, DmaBuf, MmapBuf, Mr, RegionBuffer, Returned, Sge};
pub use pd::Pd;
pub use qp::{state, QpState, RtsAttr, TransitionError};
pub use rc::{RcCaps, RcQp, RcRemote};
pub use srq::Srq;
pub use wr::{Batch, Wr};

/// The crate's thread-safety promises, checked by the compiler: a change that makes one of
/// these types lose `Send` or `Sync` does not build. Queue pairs, CQs and the pool are `Send`
/// and deliberately not `Sync` (each posts or polls from one thread at a time: the send queue
/// and the CQ's poll cursor are single-threaded in libibverbs' model, and the crate's own
/// send-queue count is single-producer, single-consumer); the `compile_fail` examples in
/// [`cq`], [`dc`] and below prove the `!Sync` side.
///
/// ```compile_fail,E0277
/// fn shared<T: Sync>(_: &T) {}
/// # fn f(pool: &mlx5dv::DciPool, qp: &mlx5dv::RcQp<mlx5dv::state::Rts>) {
/// shared(pool); // error: a DciPool is not Sync
/// # }
/// ```
///
/// ```compile_fail,E0277
/// fn shared<T: Sync>(_: &T) {}
/// # fn f(qp: &mlx5dv::RcQp<mlx5dv::state::Rts>) {
/// shared(qp); // error: an RcQp is not Sync
/// # }
/// ```
pub mod thread_safety {
    use super::*;

    const fn send_sync<T: Send + Sync>() {}
    const fn send<T: Send>() {}

    const _: () = {
        send_sync::<DeviceList>();
        send_sync::<Device<'static>>();
        send_sync::<Context>();
        send_sync::<Mlx5Context>();
        send_sync::<Pd>();
        send_sync::<Mr>();
        send_sync::<Mr<Vec<u8>>>();
        send_sync::<Mr<Box<[u8]>>>();
        send_sync::<Mr<MmapBuf>>();
        send_sync::<Mr<mr::Borrowed<'static>>>();
        send_sync::<Mr<DmaBuf>>();
        send_sync::<Mr<mr::ImplicitOdp>>();
        send_sync::<AlignedBuf>();
        send_sync::<MmapBuf>();
        send_sync::<Sge<'static>>();
        send_sync::<Srq>();
        send_sync::<Ah>();
        send_sync::<DcPeer>();
        send_sync::<Dct>();
        send_sync::<s3::Client>();
        send_sync::<s3::Exposed<Vec<u8>>>();
        send_sync::<s3::Exposed<DmaBuf>>();
        send_sync::<s3::RdmaToken>();
        send::<s3::Executor>();
        send_sync::<CompChannel>();
        send_sync::<AsyncEvents>();
        send_sync::<Error>();
        // Errors that hand an object back: Sync even when the object is not, so `?` converts
        // them into `anyhow::Error` and `Box<dyn Error + Send + Sync>` (tests/errors_convert.rs).
        send_sync::<Returned<Cq>>();
        send_sync::<Returned<RcQp<state::Rts>>>();
        send_sync::<TransitionError<Dci<state::Reset>>>();
        send_sync::<TransitionError<RcQp<state::Reset>>>();
        send_sync::<Request<'static>>();
        send::<Cq>();
        send::<Dci<state::Reset>>();
        send::<Dci<state::Rts>>();
        send::<RcQp<state::Reset>>();
        send::<RcQp<state::Rts>>();
        send::<DciPool>();
        send::<endpoint::RcEndpoints>();
        send::<endpoint::Endpoints>();
    };

    #[cfg(feature = "cm")]
    const _: () = {
        send::<cm::Listener>();
        send::<cm::Connector>();
        send::<cm::ConnectRequest>();
        send::<cm::Connection>();
        send::<cm::DcTargetService>();
    };
}
