//! Work requests: a batch over `ibv_wr_start` … `ibv_wr_complete` (aborted on drop), and a
//! builder for each request that allocates nothing.
//!
//! A request collects its operation, its destination (DC) and its data on the stack; the calls
//! into the library happen only at the last step (`sge`, `sge_list` or `inline`), after every
//! bounds check, so a request that is abandoned or refused leaves nothing half-built in the
//! batch. On a DCI the data step exists only after [`Wr::to`](crate::DcPeer) named the destination:
//!
//! ```compile_fail,E0599
//! # fn f(dci: &mut mlx5dv::Dci<mlx5dv::state::Rts>, sge: mlx5dv::Sge<'_>) -> mlx5dv::Result<()> {
//! let mut batch = dci.batch();
//! batch.send(1).sge(sge)?; // error: a DC send needs `.to(&peer)` first
//! # Ok(()) }
//! ```
//!
//! ```
//! # fn f(dci: &mut mlx5dv::Dci<mlx5dv::state::Rts>, peer: &mlx5dv::DcPeer, sge: mlx5dv::Sge<'_>) -> mlx5dv::Result<()> {
//! let mut batch = dci.batch();
//! batch.send(1).to(peer).sge(sge)?;
//! batch.commit()?;
//! # Ok(()) }
//! ```

use crate::addr::RemoteMemory;
use crate::error::{Error, Result, StaticError};
use crate::mr::Sge;
use crate::qp::QpRaw;
use mlx5dv_raw as raw;
use std::marker::PhantomData;

/// Marker: a DC request that still needs [`Wr::to`].
#[derive(Debug)]
pub enum NeedsDest {}
/// Marker: a request ready for its data.
#[derive(Debug)]
pub enum Ready {}

/// Transports with a batch ([`crate::Dci`], [`crate::RcQp`]).
pub trait Transport: sealed::Sealed {
    /// The state a new request starts in.
    type Start;
    /// Whether the crate writes its own sequence number as the request's `wr_id` (DC; see
    /// `sq_accounting.rs`) rather than the caller's (RC, whose failed sends look like failed receives).
    #[doc(hidden)]
    const CRATE_WR_ID: bool;
    /// Whether a request names its destination (DC) rather than the connection's (RC).
    #[doc(hidden)]
    const HAS_DEST: bool;
}

/// DC transport marker.
#[derive(Debug)]
pub enum Dc {}
/// RC transport marker.
#[derive(Debug)]
pub enum Rc {}

impl Transport for Dc {
    type Start = NeedsDest;
    const CRATE_WR_ID: bool = true;
    const HAS_DEST: bool = true;
}
impl Transport for Rc {
    type Start = Ready;
    const CRATE_WR_ID: bool = false;
    const HAS_DEST: bool = false;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Dc {}
    impl Sealed for super::Rc {}
}

#[derive(Copy, Clone, Debug)]
pub(crate) enum Op {
    Send,
    SendImm(u32),
    Write(RemoteMemory),
    WriteImm(RemoteMemory, u32),
    Read(RemoteMemory),
    CmpSwap(RemoteMemory, u64, u64),
    FetchAdd(RemoteMemory, u64),
}

impl Op {
    #[inline]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::Send => "ibv_wr_send",
            Op::SendImm(_) => "ibv_wr_send_imm",
            Op::Write(_) => "ibv_wr_rdma_write",
            Op::WriteImm(..) => "ibv_wr_rdma_write_imm",
            Op::Read(_) => "ibv_wr_rdma_read",
            Op::CmpSwap(..) => "ibv_wr_atomic_cmp_swp",
            Op::FetchAdd(..) => "ibv_wr_atomic_fetch_add",
        }
    }

    /// What names a refusal of the crate's own checks, made before any library call.
    #[inline]
    pub(crate) fn check_name(self) -> &'static str {
        match self {
            Op::Send => "Batch::send (checked before posting)",
            Op::SendImm(_) => "Batch::send_imm (checked before posting)",
            Op::Write(_) => "Batch::rdma_write (checked before posting)",
            Op::WriteImm(..) => "Batch::rdma_write_imm (checked before posting)",
            Op::Read(_) => "Batch::rdma_read (checked before posting)",
            Op::CmpSwap(..) => "Batch::atomic_cmp_swp (checked before posting)",
            Op::FetchAdd(..) => "Batch::atomic_fetch_add (checked before posting)",
        }
    }

    #[inline]
    fn send_op_flag(self) -> u32 {
        match self {
            Op::Send => raw::IBV_QP_EX_WITH_SEND,
            Op::SendImm(_) => raw::IBV_QP_EX_WITH_SEND_WITH_IMM,
            Op::Write(_) => raw::IBV_QP_EX_WITH_RDMA_WRITE,
            Op::WriteImm(..) => raw::IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
            Op::Read(_) => raw::IBV_QP_EX_WITH_RDMA_READ,
            Op::CmpSwap(..) => raw::IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
            Op::FetchAdd(..) => raw::IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
        }
    }

    #[inline]
    fn remote(self) -> Option<RemoteMemory> {
        match self {
            Op::Write(r) | Op::WriteImm(r, _) | Op::Read(r) | Op::CmpSwap(r, ..) | Op::FetchAdd(r, _) => Some(r),
            Op::Send | Op::SendImm(_) => None,
        }
    }

    #[inline]
    fn is_atomic(self) -> bool {
        matches!(self, Op::CmpSwap(..) | Op::FetchAdd(..))
    }
}

/// An open batch of work requests on one queue pair: `ibv_wr_start` on creation,
/// [`Batch::commit`] posts them all (`ibv_wr_complete`), dropping it uncommitted discards them
/// (`ibv_wr_abort`).
pub struct Batch<'q, T: Transport> {
    qp: &'q QpRaw,
    /// The direct backend's send queue, looked up once per batch (None: the wr API).
    direct: Option<&'q crate::direct::DirectSq>,
    _t: PhantomData<T>,
}

impl<'q, T: Transport> Batch<'q, T> {
    pub(crate) fn start(qp: &'q QpRaw) -> Self {
        let direct = qp.direct();
        match direct {
            Some(d) => d.start(),
            // SAFETY: the QP is live and in RTS (callers are typestate-restricted); the batch
            // holds the QP's exclusive borrow until commit or abort.
            None => unsafe { raw::ibv_wr_start(qp.qpx.as_ptr()) },
        }
        Batch {
            qp,
            direct,
            _t: PhantomData,
        }
    }

    fn wr(&mut self, wr_id: u64, op: Op) -> Wr<'_, 'q, T, T::Start> {
        Wr {
            batch: self,
            wr_id,
            flags: raw::IBV_SEND_SIGNALED,
            op,
            dest: None,
            stream: Stream::NONE,
            _s: PhantomData,
        }
    }

    /// A send (into the peer's receive queue or SRQ).
    #[inline]
    pub fn send(&mut self, wr_id: u64) -> Wr<'_, 'q, T, T::Start> {
        self.wr(wr_id, Op::Send)
    }

    /// A send with 32-bit immediate data (given in host byte order).
    #[inline]
    pub fn send_imm(&mut self, wr_id: u64, imm: u32) -> Wr<'_, 'q, T, T::Start> {
        self.wr(wr_id, Op::SendImm(imm.to_be()))
    }

    /// An RDMA write into `remote` (the local data must fit in it).
    #[inline]
    pub fn rdma_write(&mut self, wr_id: u64, remote: RemoteMemory) -> Wr<'_, 'q, T, T::Start> {
        self.wr(wr_id, Op::Write(remote))
    }

    /// An RDMA write with immediate data (host byte order) into `remote`.
    #[inline]
    pub fn rdma_write_imm(&mut self, wr_id: u64, remote: RemoteMemory, imm: u32) -> Wr<'_, 'q, T, T::Start> {
        self.wr(wr_id, Op::WriteImm(remote, imm.to_be()))
    }

    /// An RDMA read from `remote` into the local buffers (which must not exceed it).
    #[inline]
    pub fn rdma_read(&mut self, wr_id: u64, remote: RemoteMemory) -> Wr<'_, 'q, T, T::Start> {
        self.wr(wr_id, Op::Read(remote))
    }

    /// A 64-bit compare-and-swap at the start of `remote` (8-byte aligned, 8 bytes long);
    /// the old value lands in the 8-byte local buffer: the swap happened if it equals
    /// `compare`.
    ///
    /// # Byte order
    /// The old value lands in the local buffer in the host's byte order: read it with
    /// `u64::from_ne_bytes` (`let mut old = [0; 8]; mr.read(0, &mut old)?;`), and keep the
    /// target's 8 bytes as a native `u64` (`to_ne_bytes`). mlx5 HCAs convert 8-byte atomic
    /// responses per the requester's endianness mode, and mlx5_core selects host endianness
    /// (`atomic_req_8B_endianness_mode`, Linux f91e6d8941bf); mlx5_ib reports atomics
    /// (`atomic_cap` HCA) only on a device in that mode, and otherwise none (da7525d2a9ae), so an atomic this crate posts never returns a
    /// big-endian value: it is refused at creation (`with_atomics()`: EOPNOTSUPP) instead.
    /// `compare`, `swap` and `add` are host-order values; the crate passes them as they are.
    /// Mixed-endian clusters (big-endian hosts) are outside what this is tested on.
    #[inline]
    pub fn atomic_cmp_swp(
        &mut self,
        wr_id: u64,
        remote: RemoteMemory,
        compare: u64,
        swap: u64,
    ) -> Wr<'_, 'q, T, T::Start> {
        self.wr(wr_id, Op::CmpSwap(remote, compare, swap))
    }

    /// A 64-bit fetch-and-add at the start of `remote` (8-byte aligned, 8 bytes long); the
    /// old value lands in the 8-byte local buffer.
    ///
    /// # Byte order
    /// The old value lands in the local buffer in the host's byte order: read it with
    /// `u64::from_ne_bytes` (`let mut old = [0; 8]; mr.read(0, &mut old)?;`), and keep the
    /// target's 8 bytes as a native `u64` (`to_ne_bytes`). mlx5 HCAs convert 8-byte atomic
    /// responses per the requester's endianness mode, and mlx5_core selects host endianness
    /// (`atomic_req_8B_endianness_mode`, Linux f91e6d8941bf); mlx5_ib reports atomics
    /// (`atomic_cap` HCA) only on a device in that mode, and otherwise none (da7525d2a9ae), so an atomic this crate posts never returns a
    /// big-endian value: it is refused at creation (`with_atomics()`: EOPNOTSUPP) instead.
    /// `add` is host-order value; the crate passes it as they are.
    /// Mixed-endian clusters (big-endian hosts) are outside what this is tested on.
    #[inline]
    pub fn atomic_fetch_add(&mut self, wr_id: u64, remote: RemoteMemory, add: u64) -> Wr<'_, 'q, T, T::Start> {
        self.wr(wr_id, Op::FetchAdd(remote, add))
    }

    /// Posts every request of the batch.
    ///
    /// # Errors
    /// `ibv_wr_complete` with the provider's errno; the batch is then discarded. (A full send
    /// queue never gets this far: each request is refused at its data step instead, with
    /// EAGAIN.)
    #[inline]
    pub fn commit(self) -> Result<()> {
        // Closed here, by either path: the abort in Drop must not run.
        let this = std::mem::ManuallyDrop::new(self);
        if let Some(d) = this.direct {
            // Published before the doorbell: a completion read right after it finds them.
            this.qp.sq.commit();
            d.commit();
            return Ok(());
        }
        // SAFETY: closes the batch opened in start.
        let rc = unsafe { raw::ibv_wr_complete(this.qp.qpx.as_ptr()) };
        if rc != 0 {
            this.qp.sq.abort();
            return Err(Error::from_errno(
                "ibv_wr_complete",
                rc,
                "the provider refused the batch; none of its requests was posted",
            )
            .on(this.qp.device()));
        }
        this.qp.sq.commit();
        Ok(())
    }
}

impl<T: Transport> Drop for Batch<'_, T> {
    /// A batch dropped without [`Batch::commit`] (which skips this) is discarded.
    fn drop(&mut self) {
        match self.direct {
            Some(d) => d.abort(),
            // SAFETY: discards the batch opened in start.
            None => unsafe { raw::ibv_wr_abort(self.qp.qpx.as_ptr()) },
        }
        self.qp.sq.abort();
    }
}

/// A DC destination as the library takes it (see [`crate::DcPeer`], which holds one; a
/// request refers to it rather than copying it, so its fields are read at the call that
/// takes them).
#[derive(Copy, Clone)]
pub(crate) struct DestRaw {
    pub(crate) ah: *mut raw::ibv_ah,
    /// The AH's mlx5 address vector (the direct backend copies it); null for an adopted AH.
    pub(crate) av: *const raw::mlx5_wqe_av,
    pub(crate) dctn: u32,
    pub(crate) key: u64,
}

/// A DC request's destination and DCI stream, as the direct backend's writer takes them.
#[derive(Copy, Clone)]
pub(crate) struct Dest<'a> {
    pub(crate) raw: &'a DestRaw,
    pub(crate) stream: Stream,
}

/// A request's DCI stream or none, packed as `1 << 16 | id` (0: none) so that the post path
/// reads the id written into the WQE (0 without a stream) without a branch.
#[derive(Copy, Clone)]
pub(crate) struct Stream(u32);

impl Stream {
    /// No stream id.
    pub(crate) const NONE: Stream = Stream(0);

    #[inline]
    pub(crate) fn new(id: Option<u16>) -> Stream {
        id.map_or(Stream::NONE, |id| Stream(1 << 16 | u32::from(id)))
    }

    #[inline]
    pub(crate) fn is_some(self) -> bool {
        self.0 != 0
    }

    /// The id written into the WQE: 0 without a stream.
    #[inline]
    pub(crate) fn id(self) -> u16 {
        self.0 as u16
    }

    #[inline]
    pub(crate) fn get(self) -> Option<u16> {
        self.is_some().then_some(self.id())
    }

    /// This stream, or `other` where there is none.
    #[inline]
    pub(crate) fn or(self, other: Stream) -> Stream {
        if self.is_some() {
            self
        } else {
            other
        }
    }
}

/// One work request being built. Nothing reaches the library until its data step.
#[must_use = "a work request is posted only by its data step (sge, sge_list or inline)"]
pub struct Wr<'b, 'q, T: Transport, S> {
    batch: &'b mut Batch<'q, T>,
    wr_id: u64,
    flags: u32,
    op: Op,
    /// A DC request's destination (None until named; always None on RC).
    dest: Option<&'b DestRaw>,
    /// A DC request's DCI stream.
    stream: Stream,
    _s: PhantomData<S>,
}

impl<'b, 'q, T: Transport, S> Wr<'b, 'q, T, S> {
    /// Asks for no completion on success (the default is a completion for every request);
    /// signal one request in a while so the send queue can drain.
    #[inline]
    pub fn unsignaled(mut self) -> Self {
        self.flags &= !raw::IBV_SEND_SIGNALED;
        self
    }

    /// Waits for earlier RDMA reads and atomics of this QP before starting.
    #[inline]
    pub fn fence(mut self) -> Self {
        self.flags |= raw::IBV_SEND_FENCE;
        self
    }

    /// Sets the solicited-event bit (sends).
    #[inline]
    pub fn solicited(mut self) -> Self {
        self.flags |= raw::IBV_SEND_SOLICITED;
        self
    }
}

impl<'b, 'q, T: Transport, S> Wr<'b, 'q, T, S> {
    /// The same request with its destination named, on `stream` (the DC step, see
    /// `crate::dc`).
    #[inline]
    pub(crate) fn with_dest<N>(self, dest: &'b DestRaw, stream: Stream) -> Wr<'b, 'q, T, N> {
        Wr {
            batch: self.batch,
            wr_id: self.wr_id,
            flags: self.flags,
            op: self.op,
            dest: Some(dest),
            stream,
            _s: PhantomData,
        }
    }
}

#[derive(Copy, Clone)]
pub(crate) enum Data<'a> {
    Sge(raw::ibv_sge),
    List(&'a [raw::ibv_sge]),
    Inline(&'a [u8]),
}

impl<T: Transport> Wr<'_, '_, T, Ready> {
    /// Finishes the request with one local buffer.
    ///
    /// # Errors
    /// EINVAL (nothing is posted and the batch stays usable) when the QP was not created for
    /// this operation, the data does not fit the remote range, or an atomic's buffer is not
    /// 8 bytes; EAGAIN ([`Error::is_would_block`], allocating nothing) when the send queue
    /// holds `max_send_wr` requests not yet completed (on the direct backend also when the
    /// ring has no room for the request's 64-byte blocks); EIO when an RC QP reported a failed
    /// completion and waits for a reset. On the direct backend, EINVAL for a peer whose AH has
    /// no mlx5 address vector (adopted with `Ah::from_raw`).
    #[inline]
    pub fn sge(self, sge: Sge<'_>) -> Result<()> {
        let total = u64::from(sge.len());
        self.emit(
            Data::Sge(raw::ibv_sge {
                addr: sge.addr(),
                length: sge.len(),
                lkey: sge.lkey(),
            }),
            total,
        )
    }

    /// Finishes the request with a gather/scatter list.
    ///
    /// Provider bug to know: soft-RoCE (rxe) in rdma-core before the fix of PR 1744 (so 44,
    /// Debian bookworm) computes the total length as `num_sge` times the first entry's length;
    /// there, use entries of equal length.
    ///
    /// # Errors
    /// As [`Wr::sge`], and EINVAL for an empty list or more entries than the QP's created
    /// `max_send_sge`.
    #[inline]
    pub fn sge_list(self, sges: &[Sge<'_>]) -> Result<()> {
        if sges.is_empty() {
            return Err(Error::invalid(self.op.name(), "an SGE list needs at least one entry"));
        }
        let total = sges.iter().map(|s| u64::from(s.len())).sum();
        self.emit(Data::List(Sge::as_raw_slice(sges)), total)
    }

    /// Finishes the request with inline data (copied into the work request; no memory region
    /// needed; at most the QP's `max_inline_data`).
    ///
    /// # Errors
    /// As [`Wr::sge`]; EINVAL for reads and atomics (they need a local buffer to land in) and
    /// for data longer than the QP's created `max_inline_data`.
    #[inline]
    pub fn inline(mut self, data: &[u8]) -> Result<()> {
        if matches!(self.op, Op::Read(_)) || self.op.is_atomic() {
            return Err(Error::invalid(
                self.op.name(),
                "reads and atomics need a registered local buffer, not inline data",
            ));
        }
        // IBV_SEND_INLINE stays although ibv_wr_post(3) does not list it: soft-RoCE (rdma-core
        // 44's rxe, kernel 6.1) takes the data as inline only when the WQE's send_flags say so
        // (without it the request fails with a local QP operation error); libmlx5 ignores the
        // bit for data and itself requires it for mkey configuration.
        self.flags |= raw::IBV_SEND_INLINE;
        self.emit(Data::Inline(data), data.len() as u64)
    }

    #[inline(always)]
    fn emit(self, data: Data<'_>, total: u64) -> Result<()> {
        let qp = self.batch.qp;
        if qp.send_ops & u64::from(self.op.send_op_flag()) == 0 {
            return Err(unfit(self.op.name(), qp, Unfit::OpNotEnabled));
        }
        // A stream id on a DCI without streams (`&`: no short circuit to branch on).
        if self.stream.is_some() & !qp.dci_streams {
            return Err(unfit(self.op.name(), qp, Unfit::NoStreams));
        }
        // Checked here, before any call: libmlx5 would only flag the overflow in the QP
        // (mqp->err = ENOMEM) and fail the whole batch at commit as if the queue were full.
        match data {
            Data::Inline(bytes) if bytes.len() > qp.max_inline_data as usize => {
                return Err(too_many(self.op.check_name(), qp, TooMany::InlineBytes(bytes.len())));
            }
            Data::List(list) if list.len() > qp.max_send_sge as usize => {
                return Err(too_many(self.op.check_name(), qp, TooMany::Sges(list.len())));
            }
            _ => {}
        }
        if let Some(remote) = self.op.remote() {
            if let Some(why) = unfit_remote(self.op.is_atomic(), total, remote) {
                return Err(why
                    .error(self.op.check_name(), total, remote.addr, remote.len)
                    .on(qp.device()));
            }
        }
        if let Some(d) = self.batch.direct {
            let dest = self.dest.map(|raw| Dest {
                raw,
                stream: self.stream,
            });
            return if T::HAS_DEST {
                d.post::<false>(qp, self.op, dest, data, self.flags, self.wr_id)
            } else {
                d.post::<true>(qp, self.op, dest, data, self.flags, self.wr_id)
            };
        }
        // Last: the queue must have room (finding 1: libmlx5 would overwrite a posted WQE).
        // On a DCI the request carries the crate's slot number as its wr_id (mapped back to
        // this one by Cq::poll), so that completions in any order name it exactly.
        let seq = match qp.sq.reserve(T::CRATE_WR_ID) {
            Ok(seq) => seq,
            Err(refusal) => return Err(refused(refusal)),
        };
        let wr_id = if T::CRATE_WR_ID { seq } else { self.wr_id };
        let q = qp.qpx.as_ptr();
        // SAFETY: the batch is open on a live QP in RTS; the operation's entry is enabled
        // (checked above); a DC request has its destination and its DCI an mlx5dv_qp_ex (both
        // Some, see below), whose DC entries exist; pointers passed stay valid during the calls.
        unsafe {
            (*q).wr_id = wr_id;
            (*q).wr_flags = self.flags;
            match self.op {
                Op::Send => raw::ibv_wr_send(q),
                Op::SendImm(imm) => raw::ibv_wr_send_imm(q, imm),
                Op::Write(r) => raw::ibv_wr_rdma_write(q, r.rkey, r.addr),
                Op::WriteImm(r, imm) => raw::ibv_wr_rdma_write_imm(q, r.rkey, r.addr, imm),
                Op::Read(r) => raw::ibv_wr_rdma_read(q, r.rkey, r.addr),
                Op::CmpSwap(r, compare, swap) => raw::ibv_wr_atomic_cmp_swp(q, r.rkey, r.addr, compare, swap),
                Op::FetchAdd(r, add) => raw::ibv_wr_atomic_fetch_add(q, r.rkey, r.addr, add),
            }
            if T::HAS_DEST {
                // A DC request reaches its data step only through `to` (typestate), and a DCI
                // always has its mlx5dv_qp_ex (its builder and from_raw_parts both set it).
                debug_assert!(self.dest.is_some() && qp.mqp.is_some());
                let (dest, mqp) = (self.dest.unwrap_unchecked(), qp.mqp.unwrap_unchecked());
                match self.stream.get() {
                    None => raw::mlx5dv_wr_set_dc_addr(mqp.as_ptr(), dest.ah, dest.dctn, dest.key),
                    Some(stream) => {
                        raw::mlx5dv_wr_set_dc_addr_stream(mqp.as_ptr(), dest.ah, dest.dctn, dest.key, stream)
                    }
                }
            }
            match data {
                Data::Sge(s) => raw::ibv_wr_set_sge(q, s.lkey, s.addr, s.length),
                Data::List(list) => raw::ibv_wr_set_sge_list(q, list.len(), list.as_ptr()),
                Data::Inline(bytes) => raw::ibv_wr_set_inline_data(q, bytes.as_ptr().cast_mut().cast(), bytes.len()),
            }
        }
        // Recorded after the calls (see `Poster::reserve`), before any doorbell: nothing rings
        // until the batch's ibv_wr_complete.
        let signaled = self.flags & raw::IBV_SEND_SIGNALED != 0;
        qp.sq.record(seq, self.wr_id, signaled, self.stream.id());
        Ok(())
    }
}

/// A request this QP was not created for, refused before any call.
#[derive(Clone, Copy)]
enum Unfit {
    /// Its operation is not among the QP's `send_ops`.
    OpNotEnabled,
    /// It names a stream and the DCI has none.
    NoStreams,
}

/// The error of an [`Unfit`] request, built out of the post path's line.
#[cold]
#[inline(never)]
fn unfit(op: &'static str, qp: &QpRaw, why: Unfit) -> Error {
    let why = match why {
        Unfit::OpNotEnabled => "this queue pair was not created with this operation enabled (send_ops)",
        Unfit::NoStreams => "a stream id needs a DCI built with DCI streams (DciBuilder::streams)",
    };
    Error::invalid(op, why).on(qp.device())
}

/// Data beyond what the QP was created for (`max_inline_data`, `max_send_sge`).
#[derive(Clone, Copy)]
enum TooMany {
    /// Inline data of this many bytes.
    InlineBytes(usize),
    /// A list of this many SGEs.
    Sges(usize),
}

/// The error of a request with [`TooMany`] bytes or entries, built out of the post path's
/// line.
#[cold]
#[inline(never)]
fn too_many(op: &'static str, qp: &QpRaw, what: TooMany) -> Error {
    let why = match what {
        TooMany::InlineBytes(n) => format!(
            "{n} bytes of inline data exceed this QP's max_inline_data of {}: use an SGE or create the QP with more",
            qp.max_inline_data
        ),
        TooMany::Sges(n) => format!(
            "{n} SGEs exceed this QP's max_send_sge of {}: merge buffers or create the QP with more",
            qp.max_send_sge
        ),
    };
    Error::invalid(op, why).on(qp.device())
}

/// The refusals of the send-queue accounting: statics, so refusing allocates nothing.
static SQ_FULL: StaticError = StaticError::new(
    "work request",
    libc::EAGAIN,
    "the send queue holds max_send_wr requests not yet completed: poll the CQ (a signaled completion \
     frees every earlier request) or create the QP with a larger max_send_wr; nothing was posted and the \
     batch stays usable",
);
static SQ_HALTED: StaticError = StaticError::new(
    "work request",
    libc::EIO,
    "the QP reported a failed completion and is in ERR: reset and reconnect it before posting",
);

/// The error of a request the send-queue accounting did not admit.
#[inline]
pub(crate) fn refused(refusal: crate::sq_accounting::Refusal) -> Error {
    match refusal {
        crate::sq_accounting::Refusal::Full => Error::from_static(&SQ_FULL),
        crate::sq_accounting::Refusal::Halted => Error::from_static(&SQ_HALTED),
    }
}

/// Which rule a request's local data and remote range break.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum UnfitRemote {
    /// An atomic's local buffer is not 8 bytes.
    AtomicLocalLen,
    /// An atomic's remote address is not 8-byte aligned.
    AtomicAlign,
    /// An atomic's remote range is shorter than 8 bytes.
    AtomicRemoteLen,
    /// A write's or read's local data is longer than the remote range.
    Longer,
}

/// The first rule `total` local bytes against `remote` break, if any.
#[inline(always)]
fn unfit_remote(atomic: bool, total: u64, remote: RemoteMemory) -> Option<UnfitRemote> {
    if atomic {
        if total != 8 {
            Some(UnfitRemote::AtomicLocalLen)
        } else if remote.addr % 8 != 0 {
            Some(UnfitRemote::AtomicAlign)
        } else if remote.len < 8 {
            Some(UnfitRemote::AtomicRemoteLen)
        } else {
            None
        }
    } else if total > remote.len {
        Some(UnfitRemote::Longer)
    } else {
        None
    }
}

impl UnfitRemote {
    /// The refusal's error, for `total` local bytes against the remote range at `addr` of
    /// `len` bytes (scalars: a `RemoteMemory` would be passed by reference, kept in memory on
    /// the post path for this cold call).
    #[cold]
    #[inline(never)]
    fn error(self, op: &'static str, total: u64, addr: u64, len: u64) -> Error {
        Error::invalid(
            op,
            match self {
                UnfitRemote::AtomicLocalLen => format!(
                    "the local buffer is {total} bytes, an atomic needs exactly 8 (the old value lands there): pass an 8-byte SGE"
                ),
                UnfitRemote::AtomicAlign => format!(
                    "the remote address {:#x} is not 8-byte aligned, as an atomic's must be: align the target",
                    addr
                ),
                UnfitRemote::AtomicRemoteLen => format!(
                    "the remote range is {} bytes, an atomic needs 8: pass a RemoteMemory of at least 8 bytes",
                    len
                ),
                UnfitRemote::Longer => format!(
                    "the local data is {total} bytes, longer than the remote range of {} bytes: shorten it or widen the range",
                    len
                ),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REMOTE: RemoteMemory = RemoteMemory {
        addr: 0x1000,
        len: 64,
        rkey: 1,
    };

    fn refusal(atomic: bool, total: u64, remote: RemoteMemory) -> String {
        unfit_remote(atomic, total, remote)
            .expect("refused")
            .error(Op::FetchAdd(remote, 1).check_name(), total, remote.addr, remote.len)
            .to_string()
    }

    #[test]
    fn an_atomic_refusal_names_the_rule_it_broke_with_the_numbers() {
        let text = refusal(true, 4, REMOTE);
        assert!(
            text.contains("the local buffer is 4 bytes, an atomic needs exactly 8"),
            "{text}"
        );
        let text = refusal(true, 8, RemoteMemory { addr: 0x1004, ..REMOTE });
        assert!(text.contains("remote address 0x1004 is not 8-byte aligned"), "{text}");
        let text = refusal(true, 8, RemoteMemory { len: 4, ..REMOTE });
        assert!(
            text.contains("the remote range is 4 bytes, an atomic needs 8"),
            "{text}"
        );
        assert_eq!(unfit_remote(true, 8, REMOTE), None);
    }

    #[test]
    fn a_refusal_by_the_crates_own_checks_names_the_builder_not_a_library_call() {
        let text = refusal(true, 4, REMOTE);
        assert!(
            text.starts_with("Batch::atomic_fetch_add (checked before posting)"),
            "{text}"
        );
        assert!(!text.contains("ibv_wr_"), "{text}");
        let text = refusal(false, 128, REMOTE);
        assert!(
            text.contains("the local data is 128 bytes, longer than the remote range of 64 bytes"),
            "{text}"
        );
        assert_eq!(unfit_remote(false, 64, REMOTE), None);
    }
}
