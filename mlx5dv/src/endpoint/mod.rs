//! DC endpoints over a pool of DCIs: many peers, a few initiators.
//!
//! An endpoint names one peer (its DCT through a [`DcPeer`]: address handle, DCT number, key).
//! A [`DciPool`] owns W DCIs on one CQ and decides, by the [`Policy`] chosen at creation,
//! which DCI carries an endpoint's next request (the policies of UCX's dc_mlx5 transport):
//!
//! - [`Policy::Dcs`]: an endpoint with requests outstanding keeps its DCI, so its requests
//!   stay in order; an idle endpoint gives its DCI back; with no DCI free the post is refused
//!   with EAGAIN (backpressure: nothing is queued behind the caller's back);
//! - [`Policy::DcsQuota`]: as `Dcs`, but an endpoint that has posted `quota` requests on its
//!   DCI while others were refused posts no more until it has drained and given the DCI back;
//! - [`Policy::Streams`]: every DCI is built with DCI streams and each endpoint has its own
//!   (DCI, stream id): a failing peer errors its stream, not the DCI (where the DCIs tolerate
//!   an errored stream: see [`Policy::Streams`] for when the whole DCI is recovered instead);
//! - [`Policy::Rand`]: each endpoint is bound to a pseudo-random DCI for its lifetime.
//!
//! Every request is signaled, and its completion comes back through [`DciPool::poll`] as an
//! [`EpCompletion`] naming the endpoint. When a peer fails (retry exceeded, a remote access
//! error, a DCT that is gone), its endpoint gets the error; the pool brings the DCI back
//! (RESET, RTS, or a stream reset; a stream reset the device refuses escalates to the full
//! recovery) on its own, and re-posts, in their original order, the requests of the other
//! endpoints that the failure flushed and that provably never left: without streams all of
//! them (the DCI stops at the failing request, and finishes with one DCT before it connects
//! to another), with streams those queued behind it on its own stream. A flushed request
//! that may have executed at its target is reported to its endpoint with `WrFlushErr`, once,
//! never run twice: one of another stream when the whole DCI went to ERR, and one of any
//! endpoint that reaches the failing endpoint's target (DCT number, LID/GID and key) over the
//! same DCI (and stream), since requests to one DCT are pipelined: such an endpoint fails
//! together with the failing one. Each request completes exactly once. The CQ must be the
//! pool's alone (a DCT's or another QP's completions on it are reported as errors, never
//! dropped) and hold a completion for every request the DCIs can have outstanding (both
//! checked at creation). The bookkeeping is allocated when the pool is created: posting and
//! polling allocate nothing, recoveries included.
//!
//! DC has no liveness: no connection exists to break, so a peer that dies (its process, its
//! DCT, its port) is noticed only when a request is sent to it, which then fails with
//! `RetryExcErr` after the ACK timeouts; a peer that was only going to send *to* you is never
//! noticed at all, and no completion or async event says anything. Heartbeats and timeouts
//! are the application's: a server waiting for a client's requests needs a deadline, and a
//! client waiting for a reply needs one too (its request may have been executed and
//! acknowledged by a device whose process then died).
//!
//! [`Endpoints`] puts RC (one connected QP per endpoint, [`RcEndpoints`]) and DC (the pool)
//! behind the same post and poll, so an application switches transport where it creates its
//! endpoints.

mod pool;
mod transport;

pub use pool::{DciPool, PoolConfig, Probation, Recoveries};
pub use transport::{Endpoints, RcEndpoints};

use crate::addr::RemoteMemory;
use crate::cq::{WcOpcode, WcStatus};
use crate::mr::Sge;

pub use crate::dc::DcPeer;

/// An endpoint of a [`DciPool`]: an opaque handle that only the pool's
/// [`add_endpoint`](DciPool::add_endpoint) makes, so a request cannot name an endpoint that was
/// never added. Copy it, compare it, hash it, key a map with it; [`index`](Self::index) is its
/// place in the pool's endpoint table (0, 1, 2, ... in the order they were added; the place of
/// a removed endpoint is given to a later one), for an application's own per-endpoint arrays.
/// The id of an endpoint that was removed ([`DciPool::remove_endpoint`]) names nothing, even
/// once its place is reused. `EndpointId::default()` is the first endpoint's id, meant for
/// filling poll buffers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct EndpointId(pub(crate) u32, pub(crate) u32);

impl EndpointId {
    /// Its place in the pool's endpoint table: 0 for the first endpoint added, 1 for the next
    /// (a removed endpoint's place goes to a later one).
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// How a [`DciPool`] assigns DCIs to endpoints.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Policy {
    /// A DCI per active endpoint, given back when the endpoint is idle.
    Dcs,
    /// As `Dcs`, but an endpoint gives its DCI up after `quota` requests when others wait.
    DcsQuota {
        /// Requests an endpoint may post on one DCI while others are refused.
        quota: u32,
    },
    /// DCIs with DCI streams; each endpoint on its own (DCI, stream).
    ///
    /// A stream error is recovered by resetting the stream while the DCI stays in RTS, when
    /// the DCIs tolerate an errored stream (`log_errored` > 0 on a device reporting
    /// `max_log_num_errored` > 0). It escalates to the recovery of the whole DCI (counted in
    /// [`Recoveries::escalated`] and [`Recoveries::dcis`]) when the device refuses the stream
    /// reset (e.g. without DEVX), or when the DCI itself enters ERR because more streams are in
    /// error at once than 2^`log_errored`. With `log_errored` 0, or on a device reporting
    /// `max_log_num_errored` 0 (there the DCIs are created with 0 whatever was asked), the
    /// first stream error takes the DCI to ERR: the pool then recovers the whole DCI after
    /// every stream error (counted in [`Recoveries::dcis`] only), and a failing peer flushes
    /// the other streams' requests of its DCI (reported, as they may have executed).
    Streams {
        /// log2 of the concurrent streams per DCI (`mlx5dv_dci_streams.log_num_concurent`).
        log_concurrent: u8,
        /// log2 of the errored streams a DCI tolerates before it enters ERR.
        log_errored: u8,
    },
    /// A fixed pseudo-random DCI per endpoint, from `seed`.
    Rand {
        /// Seed of the assignment.
        seed: u64,
    },
}

/// One request for an endpoint: the operation and its buffers. The local buffer is borrowed
/// only for the call that posts it: a [`DciPool`] checks that its region is one the pool holds
/// ([`DciPool::hold`]) and keeps the region registered itself, so the application may
/// rewrite the buffer (through its `&mut Mr`) between posts.
#[derive(Copy, Clone, Debug)]
pub enum Request<'m> {
    /// Send `local`.
    Send {
        /// What to send.
        local: Sge<'m>,
    },
    /// Send `local` with immediate data.
    SendImm {
        /// What to send.
        local: Sge<'m>,
        /// Immediate (host order).
        imm: u32,
    },
    /// RDMA write of `local` to `remote`.
    Write {
        /// Source.
        local: Sge<'m>,
        /// Destination.
        remote: RemoteMemory,
    },
    /// RDMA write with immediate.
    WriteImm {
        /// Source.
        local: Sge<'m>,
        /// Destination.
        remote: RemoteMemory,
        /// Immediate (host order).
        imm: u32,
    },
    /// RDMA read of `remote` into `local`.
    Read {
        /// Destination.
        local: Sge<'m>,
        /// Source.
        remote: RemoteMemory,
    },
    /// 64-bit compare-and-swap at `remote`; the old value lands in `local` (8 bytes), in host
    /// byte order (`u64::from_ne_bytes`; see [`Batch::atomic_cmp_swp`](crate::Batch::atomic_cmp_swp)).
    CompareSwap {
        /// The old value's buffer.
        local: Sge<'m>,
        /// The target word.
        remote: RemoteMemory,
        /// Expected value.
        compare: u64,
        /// New value.
        swap: u64,
    },
    /// 64-bit fetch-and-add at `remote`; the old value lands in `local` (8 bytes), in host
    /// byte order (`u64::from_ne_bytes`; see [`Batch::atomic_fetch_add`](crate::Batch::atomic_fetch_add)).
    FetchAdd {
        /// The old value's buffer.
        local: Sge<'m>,
        /// The target word.
        remote: RemoteMemory,
        /// What to add.
        add: u64,
    },
}

impl<'m> Request<'m> {
    /// The local buffer.
    pub fn local(&self) -> Sge<'m> {
        match *self {
            Request::Send { local }
            | Request::SendImm { local, .. }
            | Request::Write { local, .. }
            | Request::WriteImm { local, .. }
            | Request::Read { local, .. }
            | Request::CompareSwap { local, .. }
            | Request::FetchAdd { local, .. } => local,
        }
    }

    /// Whether the device writes into the local buffer (an RDMA read's data, an atomic's old
    /// value): its region then needs [`crate::Access::LOCAL_WRITE`].
    pub fn writes_local(&self) -> bool {
        matches!(
            self,
            Request::Read { .. } | Request::CompareSwap { .. } | Request::FetchAdd { .. }
        )
    }

    /// The same request with its local buffer replaced by `f`'s.
    pub(crate) fn map_local<'n, E>(self, f: impl FnOnce(Sge<'m>) -> Result<Sge<'n>, E>) -> Result<Request<'n>, E> {
        Ok(match self {
            Request::Send { local } => Request::Send { local: f(local)? },
            Request::SendImm { local, imm } => Request::SendImm { local: f(local)?, imm },
            Request::Write { local, remote } => Request::Write {
                local: f(local)?,
                remote,
            },
            Request::WriteImm { local, remote, imm } => Request::WriteImm {
                local: f(local)?,
                remote,
                imm,
            },
            Request::Read { local, remote } => Request::Read {
                local: f(local)?,
                remote,
            },
            Request::CompareSwap {
                local,
                remote,
                compare,
                swap,
            } => Request::CompareSwap {
                local: f(local)?,
                remote,
                compare,
                swap,
            },
            Request::FetchAdd { local, remote, add } => Request::FetchAdd {
                local: f(local)?,
                remote,
                add,
            },
        })
    }
}

/// A completed request of an endpoint.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EpCompletion {
    /// Whose request it was.
    pub endpoint: EndpointId,
    /// The wr_id it was posted with.
    pub wr_id: u64,
    /// Its status: success, or the peer's failure (a request flushed by its own endpoint's
    /// failure reports `WrFlushErr`).
    pub status: WcStatus,
    /// What completed (None for failed completions).
    pub opcode: Option<WcOpcode>,
}

impl Default for EpCompletion {
    /// A placeholder to fill arrays with before polling: endpoint 0, wr_id 0, success.
    fn default() -> Self {
        EpCompletion {
            endpoint: EndpointId(0, 0),
            wr_id: 0,
            status: WcStatus::Success,
            opcode: None,
        }
    }
}
