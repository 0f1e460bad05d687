//! Completion queues (extended, `ibv_create_cq_ex`) and typed completions.
//!
//! Polling fills a caller-provided slice and allocates nothing. A [`Cq`] is polled from one
//! thread at a time: it moves between threads (`Send`) but is not shared (`!Sync`), as the
//! extended CQ's start/next/end cursor is one per CQ:
//!
//! ```compile_fail,E0277
//! fn shared<T: Sync>(_: &T) {}
//! # fn f(cq: &mlx5dv::Cq) {
//! shared(cq); // error: a Cq is not Sync
//! # }
//! ```
//!
//! Queue pairs that report to a CQ hold its core, so the CQ is destroyed after the last of
//! them, whichever handle goes first.

mod completion;
mod cqe;
mod events;

pub use completion::{Completion, LeanCompletion, WcOpcode, WcStatus};

use crate::comp_channel::CompChannel;
use crate::context::Context;
use crate::direct::cq_ring::{CqRing, Entry, Locked};
use crate::error::{Error, Result};
use crate::sq_accounting::{Registry, Routed};
use cqe::Refused;
use mlx5dv_raw as raw;
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::Arc;
const WC_FLAGS: u64 =
    (raw::IBV_WC_EX_WITH_BYTE_LEN | raw::IBV_WC_EX_WITH_IMM | raw::IBV_WC_EX_WITH_QP_NUM | raw::IBV_WC_EX_WITH_SRC_QP)
        as u64;

/// An extended completion queue. Poll it from one thread at a time (it is `Send`, not `Sync`);
/// it is destroyed when this handle and every queue pair reporting to it are gone.
pub struct Cq {
    core: Arc<CqCore>,
    /// Whether `ibv_next_poll` may be used (see [`Cq::poll`]).
    batched: bool,
    /// The send queues of the QPs reporting here: each completion gives credit back.
    pub(crate) registry: Registry,
    /// An error met after completions were already read: reported by the next poll.
    deferred_error: Cell<Option<Deferred>>,
}

/// What the next poll reports before reading on.
#[derive(Copy, Clone, Debug)]
enum Deferred {
    /// A provider's poll call failed with this code.
    Provider(&'static str, i32),
    /// A direct CQ held an entry it does not decode (consumed).
    Direct(Refused),
}

/// The library CQ and what it needs to exist: shared by the handle and the queue pairs that
/// report to it.
pub(crate) struct CqCore {
    cq: NonNull<raw::ibv_cq_ex>,
    ctx: Context,
    /// The completion channel the CQ reports to, when created with one (destroyed after it).
    events: Option<CompChannel>,
    /// The ring the crate reads itself (a direct CQ, [`Context::create_direct_cq`]); in the
    /// core so that a direct QP's RESET and destroy clean their entries out of it
    /// ([`CqCore::clean_direct`]).
    direct: Option<CqRing>,
    /// Unit tests' CQs have no library object to destroy.
    #[cfg(test)]
    fake: bool,
}

// SAFETY: the CQ is a library object; through the core only creation-time reads and the final
// destroy happen, and the destroy runs once, on the last holder's thread.
unsafe impl Send for CqCore {}
// SAFETY: as above: shared holders only read immutable fields.
unsafe impl Sync for CqCore {}

impl Context {
    /// Creates an extended CQ with at least `cqe` entries that reports byte length, immediate
    /// data, QP number and source QP.
    ///
    /// # Errors
    /// EINVAL for `cqe == 0` or beyond the device's `max_cqe`; `ibv_create_cq_ex` with the
    /// library's errno otherwise (EOPNOTSUPP when the provider has no extended CQs).
    pub fn create_cq(&self, cqe: u32) -> Result<Cq> {
        self.create_cq_on(cqe, None)
    }

    /// Creates the CQ with `channel` (None: without one).
    pub(crate) fn create_cq_on(&self, cqe: u32, channel: Option<CompChannel>) -> Result<Cq> {
        if cqe == 0 {
            return Err(Error::invalid("ibv_create_cq_ex", "a CQ needs at least one entry"));
        }
        let max = self.query_device()?.0.max_cqe;
        if i64::from(cqe) > i64::from(max) {
            return Err(Error::invalid(
                "ibv_create_cq_ex",
                format!("{cqe} entries exceed this device's max_cqe of {max}"),
            )
            .on(self.name()));
        }
        let mut attr = raw::ibv_cq_init_attr_ex {
            cqe,
            cq_context: std::ptr::null_mut(),
            channel: channel.as_ref().map_or(std::ptr::null_mut(), |c| c.as_raw()),
            comp_vector: 0,
            wc_flags: WC_FLAGS,
            comp_mask: 0,
            flags: 0,
            parent_domain: std::ptr::null_mut(),
        };
        // SAFETY: the context is open; attr is initialised.
        let cq = unsafe { raw::ibv_create_cq_ex(self.as_raw(), &mut attr) };
        let Some(cq) = NonNull::new(cq) else {
            // errno first: nothing else may run before it is read.
            return Err(Error::last_os_error(
                "ibv_create_cq_ex",
                "check cqe against max_cqe and the provider's extended-CQ support",
            )
            .on(self.name()));
        };
        // SAFETY: the context is open and its device pointer valid while it is.
        let batched = unsafe { raw::mlx5dv_is_supported((*self.as_raw()).device) };
        Ok(Cq {
            core: Arc::new(CqCore {
                cq,
                ctx: self.clone(),
                events: channel,
                direct: None,
                #[cfg(test)]
                fake: false,
            }),
            batched,
            registry: Registry::default(),
            deferred_error: Cell::new(None),
        })
    }

    /// Creates a CQ with at least `cqe` entries that the crate reads itself, for the direct
    /// backend's DCIs (the crate writes their WQEs, so libmlx5's own send-queue state, through
    /// which its CQ maps a completion to a `wr_id`, is not filled for them).
    ///
    /// [`Cq::poll`] then reads the ring found through `mlx5dv_init_obj(MLX5DV_OBJ_CQ)`
    /// (64- or 128-byte entries), decodes each requester CQE as libmlx5 does (status from the
    /// syndrome, vendor error, opcode, byte count, QP number) and maps its WQE index to the
    /// caller's `wr_id`, and writes the consumer index to the CQ's doorbell record. Only direct
    /// DCIs and the sends of direct RC QPs ([`crate::Pd::create_rc_qp_split`], whose receives
    /// go to an ordinary CQ) may report to it: other QPs are refused at creation (EINVAL), and
    /// an entry that is
    /// not a requester completion of a direct QP on this CQ is reported as an error (EPROTO)
    /// by the poll that meets it. It has no completion channel and cannot be armed
    /// ([`Cq::req_notify`] returns EOPNOTSUPP): poll it. [`Cq::as_raw`] must not be polled
    /// through libibverbs.
    ///
    /// # Errors
    /// As [`Context::create_cq`]; EOPNOTSUPP on a device not driven by libmlx5, or when
    /// libmlx5 describes a ring the reader does not decode (entry size other than 64 or 128,
    /// a count that is not a power of two); `mlx5dv_init_obj (CQ)` with libmlx5's errno.
    pub fn create_direct_cq(&self, cqe: u32) -> Result<Cq> {
        const OP: &str = "Context::create_direct_cq";
        crate::direct::barrier::refuse_unsupported(OP, std::env::consts::ARCH).map_err(|e| e.on(self.name()))?;
        // SAFETY: the context is open and its device pointer valid while it is.
        if !unsafe { raw::mlx5dv_is_supported((*self.as_raw()).device) } {
            return Err(Error::from_errno(
                OP,
                libc::EOPNOTSUPP,
                "a direct CQ needs an mlx5 device (libmlx5's CQE format)",
            )
            .on(self.name()));
        }
        let mut cq = self.create_cq_on(cqe, None)?;
        // SAFETY: a live CQ of an mlx5 device (checked above), polled only through the ring
        // from now on (Cq::poll takes the direct path when `direct` is set).
        let ring = unsafe { CqRing::of(cq.as_raw_cq(), self.name()) }?;
        // The CQ was just made: nothing else holds its core yet.
        let Some(core) = Arc::get_mut(&mut cq.core) else {
            return Err(Error::from_errno(OP, libc::EBUSY, "the new CQ's core is shared").on(self.name()));
        };
        core.direct = Some(ring);
        Ok(cq)
    }
}

impl Cq {
    /// Polls up to `out.len()` completions into `out`; returns how many were written.
    ///
    /// Providers disagree on what `ibv_next_poll` returning ENOENT leaves behind: mlx5 expects
    /// `ibv_end_poll` afterwards (as the man page shows), while rxe has already released the CQ
    /// and a following `ibv_end_poll` corrupts it. So on mlx5 one start/next/end batch reads
    /// many completions; elsewhere each completion is its own start/end sequence, which is
    /// correct under both contracts.
    ///
    /// Completions already read are always returned: when `ibv_next_poll` fails after some,
    /// the call returns those, and the next call reports the failure (mlx5 has already
    /// consumed the entry that failed, so it would not be seen again).
    ///
    /// # Errors
    /// `ibv_start_poll`/`ibv_next_poll` with a code other than ENOENT (an empty CQ is
    /// `Ok(0)`). mlx5 returns -2 (CQ_POLL_ERR, reported as EIO with a hint that names it) for
    /// a completion naming a QP or SRQ the context does not know. On a direct CQ
    /// ([`Context::create_direct_cq`]): EPROTO for an entry that is not a requester completion
    /// of a direct QP reporting there (a receive, a QP of the wr API or of another CQ, an
    /// inline-scattered or compressed CQE), consumed. A direct QP's entries leave the CQ when
    /// it is reset or destroyed, as libmlx5 cleans its own CQs; one met while its destroy runs
    /// on another thread is consumed and not reported.
    #[inline]
    pub fn poll(&self, out: &mut [Completion]) -> Result<usize> {
        self.poll_as::<_, false, _>(out)
    }

    /// Polls up to `out.len()` completions into `out` in their lean form
    /// ([`LeanCompletion`]: `wr_id`, status, opcode, byte count and QP number); returns how
    /// many were written. It reads and reports what [`Cq::poll`] does, completion for
    /// completion, but leaves out the immediate, source QP, flags and vendor syndrome, so a
    /// completion costs fewer instructions (on the wr API it skips their reads from
    /// libmlx5). Polling the same CQ with both is fine: each completion is reported once,
    /// by whichever call reads it.
    ///
    /// A slice, not a callback per completion: a direct CQ's ring is locked while it is read,
    /// and a callback that polled the CQ again (or created a QP on it) would wait on itself.
    ///
    /// # Errors
    /// As [`Cq::poll`]: the provider's poll errors (EIO for mlx5's CQ_POLL_ERR), and on a
    /// direct CQ EPROTO for an entry that is not a requester completion of a direct QP
    /// reporting there, consumed; an error met after completions were read is reported by the
    /// next call (of either kind), so none is lost. A failed completion is not an error: it
    /// is reported with its status (see [`LeanCompletion`] for what it then carries).
    #[inline]
    pub fn poll_lean(&self, out: &mut [LeanCompletion]) -> Result<usize> {
        self.poll_as::<_, true, _>(out)
    }

    /// [`Cq::poll_lean`] with a direct CQ's locked read out of line, None where the first
    /// look found nothing (the idle poll): for a caller whose poll of nothing must stay small
    /// (the pool's: with the read inlined it carried the read's registers, and with a
    /// `Result` the three layers of an idle executor passed its `Ok(0)` on, test by test).
    #[inline]
    pub(crate) fn poll_lean_if_any(&self, out: &mut [LeanCompletion]) -> Option<Result<usize>> {
        self.poll_as::<_, false, _>(out)
    }

    /// [`Cq::poll`] into either form, its outcome `O` (a `Result`, or an `Option` of one that
    /// is None where the first look found nothing); `DIRECT_INLINE`: a direct CQ's locked
    /// read inlined into the caller.
    #[inline(always)]
    fn poll_as<C: Reaped, const DIRECT_INLINE: bool, O: Outcome>(&self, out: &mut [C]) -> O {
        if let Some(ring) = &self.core.direct {
            // A direct CQ with nothing new, the poll of an idle poller: one look at the entry
            // at the consumer index, no lock.
            if !ring.may_have_entry() && self.deferred_error.get().is_none() {
                return O::NOTHING;
            }
            if DIRECT_INLINE {
                return O::read(self.poll_direct_inline(ring, out));
            }
            return O::read(self.poll_direct_locked(ring, out));
        }
        // The library's check for nothing inlined: one ibv_start_poll (through libmlx5's
        // function table) and its ENOENT, before anything else runs.
        if !C::INLINE || self.deferred_error.get().is_some() || out.is_empty() {
            return O::read(self.poll_library(out));
        }
        let cq = self.as_raw();
        let mut attr = raw::ibv_poll_cq_attr { comp_mask: 0 };
        // SAFETY: the CQ is live and polled from this thread only (Cq is !Sync).
        let rc = unsafe { raw::ibv_start_poll(cq, &mut attr) };
        if rc == libc::ENOENT {
            return O::NOTHING;
        }
        O::read(self.poll_started(cq, rc, out))
    }

    /// The poll of a CQ libmlx5 reads after its first `ibv_start_poll` returned `rc` (not
    /// ENOENT).
    #[inline(never)]
    fn poll_started<C: Reaped>(&self, cq: *mut raw::ibv_cq_ex, rc: i32, out: &mut [C]) -> Result<usize> {
        self.poll_into(cq, rc, out, &self.registry.routes().router())
    }

    /// The poll of a CQ libmlx5 reads ([`Cq::poll_lean`] inlines the common case's first
    /// `ibv_start_poll` and comes here with an error deferred or no room).
    #[inline(never)]
    fn poll_library<C: Reaped>(&self, out: &mut [C]) -> Result<usize> {
        if let Some(deferred) = self.deferred_error.take() {
            return Err(self.deferred(deferred));
        }
        if out.is_empty() {
            return Ok(0);
        }
        let cq = self.as_raw();
        let mut attr = raw::ibv_poll_cq_attr { comp_mask: 0 };
        // SAFETY: the CQ is live and polled from this thread only (Cq is !Sync).
        let rc = unsafe { raw::ibv_start_poll(cq, &mut attr) };
        if rc == libc::ENOENT {
            return Ok(0);
        }
        self.poll_into(cq, rc, out, &self.registry.routes().router())
    }

    /// The error of what a previous poll met after reading completions.
    #[cold]
    #[inline(never)]
    fn deferred(&self, deferred: Deferred) -> Error {
        let err = match deferred {
            Deferred::Provider(op, rc) => poll_error(op, rc),
            Deferred::Direct(refused) => refused.error(),
        };
        err.on(self.context().name())
    }

    /// The deferred error, taken (there is one).
    #[cold]
    #[inline(never)]
    fn take_deferred(&self) -> Error {
        match self.deferred_error.take() {
            Some(deferred) => self.deferred(deferred),
            None => Error::invalid("Cq::poll", "no deferred error (a bug in the crate)"),
        }
    }

    /// A direct CQ's poll once an entry may be there (or an error is deferred): under the
    /// ring's lock.
    #[inline(never)]
    fn poll_direct_locked<C: Reaped>(&self, ring: &CqRing, out: &mut [C]) -> Result<usize> {
        self.poll_direct_inline(ring, out)
    }

    /// [`Cq::poll_direct_locked`] inlined into the caller ([`Cq::poll_lean`]'s: its loop
    /// then pays no call, and saves its registers once for all its polls).
    #[inline(always)]
    fn poll_direct_inline<C: Reaped>(&self, ring: &CqRing, out: &mut [C]) -> Result<usize> {
        // Looked at before it is taken: the common case writes nothing, and copies nothing.
        if self.deferred_error.get().is_some() {
            return Err(self.take_deferred());
        }
        self.poll_direct(&ring.locked(), out)
    }

    /// A direct CQ's poll: reads the ring itself (see [`Context::create_direct_cq`]). An entry
    /// it does not decode is consumed (as libmlx5 consumes one it fails on) and reported: at
    /// once when nothing was read before it, else by the next call.
    #[inline(always)]
    fn poll_direct<C: Reaped>(&self, ring: &Locked<'_>, out: &mut [C]) -> Result<usize> {
        let mut n = 0;
        let mut refused = None;
        while n < out.len() {
            let Some(entry) = ring.next() else {
                break;
            };
            // The common entry first, inlined: a successful completion of the oldest request
            // of the QP the last one was routed to.
            if let Some(req) = cqe::decode_success(&entry.read()) {
                if let Some(wr_id) = self.registry.complete_oldest_wqe(req.qp_num, req.wqe_counter) {
                    out[n] = C::from_direct(req.completion, wr_id);
                    n += 1;
                    continue;
                }
            }
            match self.route_entry(entry) {
                Ok(Some((completion, wr_id))) => {
                    out[n] = C::from_direct(completion, wr_id);
                    n += 1;
                }
                // libmlx5 would have cleaned it out (the QP is being destroyed).
                Ok(None) => {}
                Err(r) => {
                    refused = Some(r);
                    break;
                }
            }
        }
        // (Called only with an entry seen at the consumer index: rewriting the same index when
        // that entry was cleaned away meanwhile is harmless.)
        ring.update_cons_index();
        if let Some(r) = refused {
            return self.refused(r, n);
        }
        Ok(n)
    }

    /// Any direct entry ([`Cq::poll_direct`]'s first try failed): decoded and routed, out of
    /// line. The completion and the caller's `wr_id`; None for an entry of a QP being
    /// destroyed (consumed, not reported); the refusal of an entry it does not decode or
    /// route.
    #[inline(never)]
    fn route_entry(&self, entry: Entry<'_>) -> std::result::Result<Option<(Completion, u64)>, Refused> {
        let req = cqe::decode(&entry.read())?;
        let success = req.completion.status.is_success();
        match self.registry.complete_wqe(req.qp_num, req.wqe_counter, success) {
            Routed::Request(wr_id) => Ok(Some((req.completion, wr_id))),
            Routed::Stale => Ok(None),
            Routed::Unknown => Err(Refused::UnknownRequest {
                qp_num: req.qp_num,
                wqe_counter: req.wqe_counter,
            }),
        }
    }

    /// A direct poll that met an entry it does not decode after reading `n` completions: the
    /// error now when `n` is 0, else kept for the next poll.
    #[cold]
    #[inline(never)]
    fn refused(&self, r: Refused, n: usize) -> Result<usize> {
        if n == 0 {
            return Err(r.error().on(self.context().name()));
        }
        self.deferred_error.set(Some(Deferred::Direct(r)));
        Ok(n)
    }

    /// Reads on from a first `ibv_start_poll` that returned `rc` (not ENOENT), `out` not
    /// empty.
    #[inline(never)]
    fn poll_into<C: Reaped>(
        &self,
        cq: *mut raw::ibv_cq_ex,
        mut rc: i32,
        out: &mut [C],
        router: &crate::sq_accounting::Router<'_>,
    ) -> Result<usize> {
        let mut n = 0;
        loop {
            if rc == libc::ENOENT {
                break;
            }
            if rc != 0 {
                if n > 0 {
                    self.deferred_error.set(Some(Deferred::Provider("ibv_start_poll", rc)));
                    break;
                }
                return Err(poll_error("ibv_start_poll", rc).on(self.context().name()));
            }
            loop {
                // SAFETY: a completion is current between a successful start/next_poll and end_poll.
                let lean = unsafe { read_lean(cq) };
                // The crate's slot number (DCIs) back to the caller's wr_id.
                let wr_id = router
                    .complete(
                        lean.qp_num,
                        lean.wr_id,
                        lean.status.is_success(),
                        lean.opcode.is_some_and(WcOpcode::is_receive),
                    )
                    .unwrap_or(lean.wr_id);
                // SAFETY: as above.
                out[n] = unsafe { C::from_library(LeanCompletion { wr_id, ..lean }, cq) };
                n += 1;
                if !self.batched || n == out.len() {
                    break;
                }
                // SAFETY: as above (mlx5: ENOENT keeps the batch open until end_poll).
                let rc = unsafe { raw::ibv_next_poll(cq) };
                if rc == libc::ENOENT {
                    break;
                }
                if rc != 0 {
                    // The n completions read so far are the caller's: keep the error for the
                    // next call (the end_poll below consumes them).
                    self.deferred_error.set(Some(Deferred::Provider("ibv_next_poll", rc)));
                    break;
                }
            }
            // SAFETY: ends the batch started above.
            unsafe { raw::ibv_end_poll(cq) };
            if self.batched || n == out.len() {
                break;
            }
            let mut attr = raw::ibv_poll_cq_attr { comp_mask: 0 };
            // SAFETY: the CQ is live and polled from this thread only (Cq is !Sync).
            rc = unsafe { raw::ibv_start_poll(cq, &mut attr) };
        }
        Ok(n)
    }

    /// The completions it holds, as the library created it (`ibv_cq.cqe`: at least what
    /// [`Context::create_cq`] asked for, rounded by the provider).
    pub fn capacity(&self) -> u32 {
        // SAFETY: the CQ is live; `cqe` is set at creation (and by a resize, which the crate
        // does not do).
        let cqe = unsafe { (*self.as_raw_cq()).cqe };
        u32::try_from(cqe).unwrap_or(0)
    }

    /// The context it was created on.
    pub fn context(&self) -> &Context {
        &self.core.ctx
    }

    /// The raw extended CQ, for interop.
    #[inline]
    pub fn as_raw(&self) -> *mut raw::ibv_cq_ex {
        self.core.cq.as_ptr()
    }

    /// The base CQ (`ibv_cq_ex_to_cq`), for queue-pair creation.
    pub fn as_raw_cq(&self) -> *mut raw::ibv_cq {
        raw::ibv_cq_ex_to_cq(self.as_raw())
    }

    /// Whether this CQ is read directly (the direct backend's CQ, which only direct QPs may
    /// use) rather than through libmlx5's poll functions.
    pub(crate) fn is_direct(&self) -> bool {
        self.core.direct.is_some()
    }

    /// Refuses (EINVAL) to create a QP of `kind` reporting here when this is a direct CQ:
    /// only the direct backend's QPs may use one (see [`Context::create_direct_cq`]).
    pub(crate) fn refuse_if_direct(&self, op: &'static str, kind: &str) -> Result<()> {
        if let Some(ring) = &self.core.direct {
            return Err(Error::invalid(
                op,
                format!(
                    "CQ {:#x} is a direct CQ, which only the direct backend's DCIs and RC send queues may use; a {kind} needs a CQ from Context::create_cq",
                    ring.cqn()
                ),
            )
            .on(self.context().name()));
        }
        Ok(())
    }

    /// A handle that keeps the library CQ alive (held by the queue pairs reporting to it).
    pub(crate) fn core(&self) -> Arc<CqCore> {
        self.core.clone()
    }

    /// How many queue pairs, DCTs and DCIs made by the crate report here (each holds the core;
    /// an object adopted without this CQ is not counted).
    pub(crate) fn reporters(&self) -> usize {
        Arc::strong_count(&self.core) - 1
    }

    /// Refuses (EINVAL, for `op`) a CQ that cannot hold `needed` completions (each a signaled
    /// request that may be outstanding at once); `what` says where the number comes from. The
    /// one check of [`crate::DciPool::new`], [`crate::DciBuilder::build`] and
    /// [`crate::endpoint::RcEndpoints::add`].
    pub(crate) fn check_room(&self, op: &'static str, needed: u64, what: impl FnOnce() -> String) -> Result<()> {
        let capacity = self.capacity();
        if needed > u64::from(capacity) {
            return Err(Error::invalid(
                op,
                format!(
                    "the CQ holds {capacity} completions but {} signals up to {needed} at once: a CQ that overruns stops \
                     reporting completions and the requests hang; create the CQ with at least {needed} entries or use \
                     fewer or shallower send queues",
                    what()
                ),
            )
            .on(self.context().name()));
        }
        Ok(())
    }
}

/// The error of a failed start/next_poll, with what the code means.
fn poll_error(op: &'static str, rc: i32) -> Error {
    if rc == -2 {
        // Not an errno: libmlx5's CQ_POLL_ERR, reported as EIO.
        return Error::from_errno(
            op,
            libc::EIO,
            "mlx5 CQ_POLL_ERR (-2): a completion for a QP or SRQ this context does not know (destroyed with completions pending?)",
        );
    }
    Error::from_errno(op, rc, "the provider refused to poll this CQ (a CQ overrun is not reported here but as the IBV_EVENT_CQ_ERR async event: see Context::async_events)")
}

/// The fields of libmlx5's current completion that route it (and all a [`LeanCompletion`]
/// keeps).
///
/// # Safety
/// `cq` must be inside a start_poll/end_poll sequence with a current completion.
#[inline(always)]
unsafe fn read_lean(cq: *mut raw::ibv_cq_ex) -> LeanCompletion {
    // SAFETY: guaranteed by the caller.
    unsafe {
        let status = WcStatus::from_raw((*cq).status);
        let wr_id = (*cq).wr_id;
        let qp_num = raw::ibv_wc_read_qp_num(cq);
        if !status.is_success() {
            return LeanCompletion {
                wr_id,
                status,
                qp_num,
                ..LeanCompletion::default()
            };
        }
        LeanCompletion {
            wr_id,
            status,
            opcode: Some(WcOpcode::from_raw(raw::ibv_wc_read_opcode(cq))),
            byte_len: raw::ibv_wc_read_byte_len(cq),
            qp_num,
        }
    }
}

/// What a poll returns ([`Cq::poll_as`]): what it read, or nothing found at the first look.
trait Outcome {
    /// Nothing found at the first look.
    const NOTHING: Self;
    /// What a read returned.
    fn read(r: Result<usize>) -> Self;
}

impl Outcome for Result<usize> {
    const NOTHING: Self = Ok(0);
    #[inline(always)]
    fn read(r: Result<usize>) -> Self {
        r
    }
}

impl Outcome for Option<Result<usize>> {
    const NOTHING: Self = None;
    #[inline(always)]
    fn read(r: Result<usize>) -> Self {
        Some(r)
    }
}

/// What a poll writes: a [`Completion`] ([`Cq::poll`]) or a [`LeanCompletion`]
/// ([`Cq::poll_lean`]), made from libmlx5's current completion (its routed lean fields, and
/// what else the form keeps) or from a direct CQE's decoding.
trait Reaped: Copy {
    /// Whether the library's first `ibv_start_poll` is inlined into the poll's caller.
    const INLINE: bool;
    /// From `lean` ([`read_lean`]'s, its `wr_id` the caller's) and, for what else it keeps,
    /// libmlx5's current completion.
    ///
    /// # Safety
    /// As [`read_lean`].
    unsafe fn from_library(lean: LeanCompletion, cq: *mut raw::ibv_cq_ex) -> Self;
    /// From a direct CQE's decoding and the caller's `wr_id` (inlined: what it drops is not
    /// computed).
    fn from_direct(c: Completion, wr_id: u64) -> Self;
}

impl Reaped for Completion {
    const INLINE: bool = false;
    #[inline(always)]
    unsafe fn from_library(lean: LeanCompletion, cq: *mut raw::ibv_cq_ex) -> Self {
        let LeanCompletion {
            wr_id,
            status,
            opcode,
            byte_len,
            qp_num,
        } = lean;
        // SAFETY: guaranteed by the caller (a current completion).
        unsafe {
            if !status.is_success() {
                return Completion {
                    wr_id,
                    status,
                    qp_num,
                    vendor_err: raw::ibv_wc_read_vendor_err(cq),
                    ..Completion::default()
                };
            }
            let wc_flags = raw::ibv_wc_read_wc_flags(cq);
            Completion {
                wr_id,
                status,
                opcode,
                byte_len,
                imm: (wc_flags & raw::IBV_WC_WITH_IMM != 0).then(|| u32::from_be(raw::ibv_wc_read_imm_data(cq))),
                qp_num,
                src_qp: raw::ibv_wc_read_src_qp(cq),
                wc_flags,
                vendor_err: 0,
            }
        }
    }
    #[inline(always)]
    fn from_direct(c: Completion, wr_id: u64) -> Self {
        Completion { wr_id, ..c }
    }
}

impl Reaped for LeanCompletion {
    const INLINE: bool = true;
    #[inline(always)]
    unsafe fn from_library(lean: LeanCompletion, _: *mut raw::ibv_cq_ex) -> Self {
        lean
    }
    #[inline(always)]
    fn from_direct(c: Completion, wr_id: u64) -> Self {
        LeanCompletion { wr_id, ..c.into() }
    }
}

impl CqCore {
    /// On a direct CQ, removes the unread entries of QP `qp_num` (as libmlx5 cleans its CQs
    /// when a QP goes to RESET or is destroyed, which it does not do for a CQ described through
    /// `mlx5dv_init_obj`); returns how many. Call it once the QP is in RESET or destroyed (from
    /// any thread: it waits for a poll in progress), before its send queue is used again: a
    /// stale entry would otherwise name a WQE index a new request may hold, or reach a new QP
    /// given the same number. 0 on a CQ libmlx5 reads.
    pub(crate) fn clean_direct(&self, qp_num: u32) -> u32 {
        self.direct.as_ref().map_or(0, |ring| ring.locked().clean(qp_num))
    }

    /// QP `qp_num`, whose send queue is `sq`, is destroyed in the kernel (its number may be
    /// handed out again): marks the queue gone and, on a direct CQ, cleans its entries out,
    /// once. Called by the thread that destroyed it, after the destroy returned, and by the
    /// thread that creates a QP given the same number, before that QP joins the CQ: whichever
    /// comes first cleans, under the ring's lock, so the entries are gone before the new QP can
    /// post, and a late clean never takes the new QP's entries (dc-review-4.md, finding 6).
    pub(crate) fn release_number(&self, qp_num: u32, sq: &crate::sq_accounting::SendQueue) {
        match &self.direct {
            Some(ring) => {
                let ring = ring.locked();
                if sq.take_number() {
                    ring.clean(qp_num);
                }
            }
            None => {
                sq.take_number();
            }
        }
    }
}

impl Drop for CqCore {
    fn drop(&mut self) {
        #[cfg(test)]
        if self.fake {
            return;
        }
        let cq = raw::ibv_cq_ex_to_cq(self.cq.as_ptr());
        // ibv_destroy_cq waits until every event it reported was acknowledged.
        if let Some(channel) = &self.events {
            channel.ack_all(cq);
        }
        // SAFETY: created once, destroyed once, when the handle and every QP reporting here
        // (each holds the core) are gone.
        unsafe { raw::ibv_destroy_cq(cq) };
        // The channel (a field) is destroyed after the CQ, as libibverbs requires.
    }
}

impl std::fmt::Debug for Cq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cq")
            .field("device", &self.context().name())
            .field("direct", &self.core.direct)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::VecDeque;
    use std::ffi::{c_int, c_uint};

    thread_local! {
        /// What the fake CQ's start_poll/next_poll return, in order (then ENOENT), and the
        /// calls it saw.
        static SCRIPT: RefCell<VecDeque<i32>> = const { RefCell::new(VecDeque::new()) };
        static CALLS: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
        static NEXT_WR_ID: Cell<u64> = const { Cell::new(1) };
    }

    /// Pops the next scripted code; a success makes a new current completion (wr_id 1, 2, ...).
    unsafe fn step(cq: *mut raw::ibv_cq_ex, op: &'static str) -> c_int {
        CALLS.with(|c| c.borrow_mut().push(op));
        let rc = SCRIPT.with(|s| s.borrow_mut().pop_front()).unwrap_or(libc::ENOENT);
        if rc == 0 {
            let id = NEXT_WR_ID.with(|n| n.replace(n.get() + 1));
            // SAFETY: the test's fake CQ, alive for the whole test.
            unsafe {
                (*cq).wr_id = id;
                (*cq).status = raw::IBV_WC_SUCCESS;
            }
        }
        rc
    }
    unsafe extern "C" fn start_poll(cq: *mut raw::ibv_cq_ex, _: *mut raw::ibv_poll_cq_attr) -> c_int {
        // SAFETY: forwarded from the caller.
        unsafe { step(cq, "start") }
    }
    unsafe extern "C" fn next_poll(cq: *mut raw::ibv_cq_ex) -> c_int {
        // SAFETY: forwarded from the caller.
        unsafe { step(cq, "next") }
    }
    unsafe extern "C" fn end_poll(_: *mut raw::ibv_cq_ex) {
        CALLS.with(|c| c.borrow_mut().push("end"));
    }
    unsafe extern "C" fn read_u32(_: *mut raw::ibv_cq_ex) -> u32 {
        0
    }
    unsafe extern "C" fn read_flags(_: *mut raw::ibv_cq_ex) -> c_uint {
        0
    }
    unsafe extern "C" fn read_opcode(_: *mut raw::ibv_cq_ex) -> raw::ibv_wc_opcode {
        raw::IBV_WC_SEND
    }

    /// An extended CQ whose poll entries follow `script` (a provider's return codes).
    fn fake_cq(script: &[i32]) -> Box<raw::ibv_cq_ex> {
        SCRIPT.with(|s| *s.borrow_mut() = script.iter().copied().collect());
        CALLS.with(|c| c.borrow_mut().clear());
        NEXT_WR_ID.with(|n| n.set(1));
        // SAFETY: ibv_cq_ex is plain data (pointers, integers, optional fn pointers): all-zero
        // is a valid value; the entries polling uses are filled in below.
        let mut cq: Box<raw::ibv_cq_ex> = Box::new(unsafe { std::mem::zeroed() });
        cq.start_poll = Some(start_poll);
        cq.next_poll = Some(next_poll);
        cq.end_poll = Some(end_poll);
        cq.read_opcode = Some(read_opcode);
        cq.read_vendor_err = Some(read_u32);
        cq.read_byte_len = Some(read_u32);
        cq.read_imm_data = Some(read_u32);
        cq.read_qp_num = Some(read_u32);
        cq.read_src_qp = Some(read_u32);
        cq.read_wc_flags = Some(read_flags);
        cq
    }

    /// A `Cq` over `raw` (its core destroys nothing: there is no library).
    fn cq_over(ctx: &Context, raw: &mut raw::ibv_cq_ex, batched: bool) -> Cq {
        Cq {
            core: Arc::new(CqCore {
                cq: NonNull::from(raw),
                ctx: ctx.clone(),
                events: None,
                direct: None,
                fake: true,
            }),
            batched,
            registry: Registry::default(),
            deferred_error: Cell::new(None),
        }
    }

    fn calls() -> Vec<&'static str> {
        CALLS.with(|c| c.borrow().clone())
    }

    #[test]
    fn poll_returns_the_completions_read_before_a_next_poll_error_and_reports_the_error_next_call() {
        let ctx = Context::fake("mlx5_fake");
        // mlx5: two completions, then CQ_POLL_ERR (-2) for the third entry.
        let mut raw = fake_cq(&[0, 0, -2]);
        let cq = cq_over(&ctx, &mut raw, true);
        let mut out = [Completion::default(); 8];
        assert_eq!(cq.poll(&mut out).expect("the two completions read"), 2);
        assert_eq!((out[0].wr_id, out[1].wr_id), (1, 2));
        assert!(out[..2].iter().all(|c| c.status == WcStatus::Success));
        assert_eq!(calls(), ["start", "next", "next", "end"], "the batch is closed");
        let err = cq.poll(&mut out).expect_err("the error comes with the next call");
        assert_eq!(err.errno(), Some(libc::EIO));
        let text = err.to_string();
        assert!(text.contains("ibv_next_poll") && text.contains("CQ_POLL_ERR"), "{text}");
        assert_eq!(calls().len(), 4, "reporting it touches the CQ no more");
        assert_eq!(cq.poll(&mut out).expect("then polling goes on"), 0);
    }

    #[test]
    fn poll_without_batching_keeps_what_it_read_when_a_later_start_poll_fails() {
        let ctx = Context::fake("rxe_fake");
        let mut raw = fake_cq(&[0, libc::EIO]);
        let cq = cq_over(&ctx, &mut raw, false);
        let mut out = [Completion::default(); 4];
        assert_eq!(cq.poll(&mut out).unwrap(), 1);
        assert_eq!(out[0].wr_id, 1);
        assert_eq!(
            calls(),
            ["start", "end", "start"],
            "no end_poll after a failed start_poll"
        );
        assert_eq!(cq.poll(&mut out).unwrap_err().errno(), Some(libc::EIO));
    }

    use crate::direct::cq_ring::tests::{cqe, err_cqe, TestRing};

    /// A direct CQ over `t`'s ring whose registry routes QP 0x40's queue (returned), which
    /// holds requests 100, 101 and 102 at WQE indexes 0, 2 and 3.
    fn direct_cq_with_requests(
        ctx: &Context,
        raw: &mut raw::ibv_cq_ex,
        t: &mut TestRing,
    ) -> (Cq, crate::sq_accounting::Poster) {
        let mut cq = cq_over(ctx, raw, true);
        Arc::get_mut(&mut cq.core).unwrap().direct = Some(t.ring());
        assert!(cq.is_direct());
        let sq = crate::sq_accounting::Poster::with_wqe_map(8, false, 8);
        cq.registry.add(0x40, sq.shared().clone());
        sq.routed();
        for (wr_id, index) in [(100, 0u16), (101, 2), (102, 3)] {
            let seq = sq.admit(wr_id, true, 0, true).unwrap();
            sq.note_wqe(index, seq);
        }
        sq.commit();
        (cq, sq)
    }

    #[test]
    fn a_direct_poll_maps_each_wqe_index_to_the_callers_wr_id_and_reports_a_foreign_entry() {
        let ctx = Context::fake("mlx5_fake");
        let mut raw = fake_cq(&[]);
        let mut t = TestRing::new(4, 64);
        let (cq, _sq) = direct_cq_with_requests(&ctx, &mut raw, &mut t);
        t.produce(0, cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_RDMA_WRITE, 0x40, 0));
        t.produce(1, err_cqe(raw::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, 0x88, 0x40, 2));
        // A receive, then an entry of a QP the CQ does not know.
        t.produce(2, cqe(raw::MLX5_CQE_RESP_SEND, 0, 0x40, 0));
        t.produce(3, cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_SEND, 0x41, 3));
        let mut out = [Completion::default(); 8];
        assert_eq!(cq.poll(&mut out).expect("the two completions before the receive"), 2);
        assert_eq!((out[0].wr_id, out[0].opcode), (100, Some(WcOpcode::RdmaWrite)));
        assert_eq!(
            (out[1].wr_id, out[1].status, out[1].vendor_err),
            (101, WcStatus::RemAccessErr, 0x88)
        );
        assert_eq!(u32::from_be(t.dbrec[0]), 3, "the receive was consumed too");
        let err = cq.poll(&mut out).expect_err("the receive is reported next");
        assert_eq!(err.errno(), Some(libc::EPROTO));
        assert!(err.to_string().contains("responder"), "{err}");
        let err = cq.poll(&mut out).expect_err("nothing read before it: reported at once");
        assert!(err.to_string().contains("0x41"), "{err}");
        assert_eq!(u32::from_be(t.dbrec[0]), 4);
        assert_eq!(cq.poll(&mut out).unwrap(), 0);
        assert_eq!(calls(), Vec::<&str>::new(), "libmlx5's poll is never called");
        let refusal = cq.refuse_if_direct("create", "DCT").unwrap_err();
        assert_eq!(refusal.errno(), Some(libc::EINVAL));
        assert!(refusal.to_string().contains("direct CQ"), "{refusal}");
    }

    #[test]
    fn a_lean_direct_poll_maps_wqe_indexes_reports_failures_and_defers_a_foreign_entry_as_poll_does() {
        let ctx = Context::fake("mlx5_fake");
        let mut raw = fake_cq(&[]);
        let mut t = TestRing::new(8, 64);
        let (cq, _sq) = direct_cq_with_requests(&ctx, &mut raw, &mut t);
        let mut write = cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_RDMA_READ, 0x40, 0);
        write.byte_cnt = 8u32.to_be();
        t.produce(0, write);
        t.produce(1, err_cqe(raw::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, 0x88, 0x40, 2));
        // A NOP's completion (never written by the direct backend), then a QP the CQ does not
        // know, then the last request.
        t.produce(2, cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_NOP, 0x40, 5));
        t.produce(3, cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_SEND, 0x41, 3));
        t.produce(4, cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_SEND, 0x40, 3));
        let mut out = [LeanCompletion::default(); 8];
        assert_eq!(cq.poll_lean(&mut out).expect("the two before the NOP"), 2);
        assert_eq!(
            out[0],
            LeanCompletion {
                wr_id: 100,
                status: WcStatus::Success,
                opcode: Some(WcOpcode::RdmaRead),
                byte_len: 8,
                qp_num: 0x40,
            }
        );
        assert_eq!(
            out[1],
            LeanCompletion {
                wr_id: 101,
                status: WcStatus::RemAccessErr,
                opcode: None,
                byte_len: 0,
                qp_num: 0x40,
            },
            "a failed completion: no opcode, no byte count"
        );
        // The deferred refusal is reported by the next call of either kind.
        let mut full = [Completion::default(); 8];
        let err = cq.poll(&mut full).expect_err("the NOP is reported next");
        assert_eq!(err.errno(), Some(libc::EPROTO));
        assert!(err.to_string().contains("opcode 0x00"), "{err}");
        let err = cq
            .poll_lean(&mut out)
            .expect_err("nothing read before it: reported at once");
        assert!(err.to_string().contains("0x41"), "{err}");
        assert_eq!(cq.poll_lean(&mut out).unwrap(), 1);
        assert_eq!((out[0].wr_id, out[0].opcode), (102, Some(WcOpcode::Send)));
        assert_eq!(cq.poll_lean(&mut out).unwrap(), 0);
        assert_eq!(u32::from_be(t.dbrec[0]), 5);
        assert_eq!(calls(), Vec::<&str>::new(), "libmlx5's poll is never called");
    }

    #[test]
    fn a_lean_poll_of_the_library_keeps_what_it_read_before_a_next_poll_error() {
        let ctx = Context::fake("mlx5_fake");
        let mut raw = fake_cq(&[0, 0, -2]);
        let cq = cq_over(&ctx, &mut raw, true);
        let mut out = [LeanCompletion::default(); 8];
        assert_eq!(cq.poll_lean(&mut out).expect("the two completions read"), 2);
        assert_eq!((out[0].wr_id, out[1].wr_id), (1, 2));
        assert_eq!(calls(), ["start", "next", "next", "end"]);
        let err = cq.poll_lean(&mut out).expect_err("the error comes with the next call");
        assert_eq!(err.errno(), Some(libc::EIO));
        assert_eq!(cq.poll_lean(&mut out).expect("then polling goes on"), 0);
        assert_eq!(cq.poll_lean(&mut []).expect("no room: nothing read"), 0);
    }

    #[test]
    fn a_start_poll_error_with_nothing_read_is_returned_at_once() {
        let ctx = Context::fake("mlx5_fake");
        let mut raw = fake_cq(&[libc::EIO]);
        let cq = cq_over(&ctx, &mut raw, true);
        let mut out = [Completion::default(); 4];
        let err = cq.poll(&mut out).unwrap_err();
        assert_eq!(err.errno(), Some(libc::EIO));
        assert!(err.to_string().contains("ibv_start_poll"), "{err}");
        assert_eq!(calls(), ["start"]);
        assert_eq!(cq.poll(&mut out).unwrap(), 0, "nothing deferred");
    }
}
