//! Send-queue accounting: the crate's own count of outstanding work requests per queue pair.
//!
//! libmlx5's wr API does not protect a full send queue: `_common_wqe_init_op` detects the
//! overflow, sets the QP's error and returns before moving `cur_ctrl`, so the op builder, the
//! DC address and `_common_wqe_finalize` then write into the previous WQE, possibly already
//! rung and not yet executed (dc-review.md, finding 1). So a request is admitted only if the
//! queue has room, counted against the `max_send_wr` the library created the QP with, and
//! credit comes back with completions. Everything is preallocated at creation; admitting and
//! retiring touch a few cells only.
//!
//! Which request a completion names (dc-review-2, finding 5):
//! - On a DCI the crate owns the work request's `wr_id`: it writes the request's sequence
//!   number there and keeps the caller's `wr_id` in the request's slot; the completion is
//!   mapped back ([`Router::complete`]). So every completion names its request exactly,
//!   whatever the caller's `wr_id`s (0, duplicates) and whatever the order: DCI streams may
//!   complete out of order, in order within a stream only. A completion retires its request
//!   and the earlier requests of its own stream (unsignaled ones that succeeded silently);
//!   credit is the oldest request not yet retired.
//! - libmlx5 counts by position: `mlx5_parse_cqe` sets its tail to the request after the one
//!   the *last processed* completion names, so an older completion processed after a newer one
//!   moves its tail back. Admission therefore uses the lower of the two views (the crate's
//!   oldest outstanding request and libmlx5's last-processed one): libmlx5 never sees a full
//!   ring. (It never blocks for good: the last completion names one of the last `max_send_wr`
//!   requests, so libmlx5 sees at most `max_send_wr - 1` outstanding.)
//! - On an RC QP the `wr_id` stays the caller's: a failed completion cannot be told apart
//!   from a failed receive, whose `wr_id` is the caller's too. RC completes in order, so a
//!   successful (hence signaled) completion retires every earlier request; a failure puts the
//!   QP in ERR and halts posting until the reset, which empties the queue.
//!
//! Threads: a queue pair posts from one thread at a time (it is `Send`, not `Sync`) and its CQ is
//! polled from one thread at a time, maybe another one. So the count is a single-producer,
//! single-consumer ring: the poster writes slots and advances `head` (release), the poller
//! reads them, marks them done and advances `tail` (release); each reads the other's index
//! with acquire. The poller writes only slots in `tail..head`, which the poster does not
//! touch until `tail` has passed them. No lock and no reference count is touched when posting
//! or polling, and no read-modify-write either: on x86-64 and aarch64 these atomics are plain
//! loads and stores. A RESET (the poster empties the queue while a poller may still hold an
//! old completion) moves a `floor` under which nothing counts as outstanding, instead of
//! writing the poller's `tail`.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

/// One request as the poller needs it.
struct Slot {
    /// The caller's `wr_id`.
    wr_id: AtomicU64,
    /// `seq << TAG_SEQ | TAG_VALID | stream << TAG_STREAM | signaled << 1 | done`; 0 (no
    /// `TAG_VALID`) in a slot no request was ever recorded in, which names no request.
    tag: AtomicU64,
}

const TAG_DONE: u64 = 1;
const TAG_SIGNALED: u64 = 2;
const TAG_STREAM: u32 = 2;
/// Set in every recorded request's tag: a slot never written names no sequence number.
const TAG_VALID: u64 = 1 << 18;
const TAG_SEQ: u32 = 19;

/// Whether a slot's `tag` is request `seq`'s (the tag keeps the low 45 bits of the sequence,
/// and `TAG_VALID`: the xor leaves exactly that bit when the sequence bits agree).
#[inline]
fn tag_names(tag: u64, seq: u64) -> bool {
    (tag ^ seq << TAG_SEQ) >> (TAG_SEQ - 1) == 1
}

/// Where a QP stands in its life, for the CQ's registry ([`SendQueue::life`]).
const LIVE: u8 = 0;
/// Being destroyed: its completions are dropped, not reported, but the registry keeps it (more
/// of its completions may still come until the destroy returns).
const CLOSING: u8 = 1;
/// Destroyed: no completion of it can come any more; the registry drops it (and a direct CQ
/// cleans its entries) the next time a QP joins.
const GONE: u8 = 2;

#[inline]
fn tag_stream(tag: u64) -> u64 {
    (tag >> TAG_STREAM) & 0xffff
}

/// Why a request was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `max_send_wr` requests are outstanding.
    Full,
    /// An RC QP reported a failed completion: it is in ERR until reset.
    Halted,
}

/// One QP's send queue as the crate counts it: the part the poster and the poller share.
pub(crate) struct SendQueue {
    /// A power-of-two ring (indexing by mask, no division on the post path), at least
    /// `capacity` long.
    slots: Box<[Slot]>,
    /// `slots.len() - 1`.
    mask: usize,
    /// `max_send_wr`: how many requests may be outstanding.
    capacity: u64,
    /// Requests posted (committed batches), published by the poster.
    head: AtomicU64,
    /// The oldest request not yet retired by a completion. Written by the poller only.
    tail: AtomicU64,
    /// libmlx5's tail: the request after the one the last processed completion named
    /// (u64::MAX where completions come in order: RC). Written by the poller only.
    lib_tail: AtomicU64,
    /// Requests marked done beyond `tail` (completed out of order). The poller's own.
    done_ahead: AtomicU64,
    /// Requests retired by a RESET (everything posted before it), written by the poster only;
    /// the retired count is the larger of `tail` and `floor`.
    floor: AtomicU64,
    halted: AtomicBool,
    /// LIVE, CLOSING or GONE.
    life: AtomicU8,
    /// Completions of this QP may be receives (RC): the `wr_id` stays the caller's and a
    /// failed completion cannot be told apart.
    has_receives: bool,
    /// The direct backend's map from a WQE's index in the ring (`wqe_counter & mask`) to the
    /// sequence number of the request written there; empty on the wr API, where the
    /// completion carries the `wr_id` itself. Written by the poster when it writes the WQE
    /// (before the doorbell), read by the poller for a completion naming that index.
    wqe_seq: Box<[AtomicU64]>,
}

impl SendQueue {
    #[inline]
    fn slot(&self, seq: u64) -> &Slot {
        let i = seq as usize & self.mask;
        debug_assert!(i < self.slots.len());
        // SAFETY: `slots` has `mask + 1` entries (a power of two, made in Poster::new), so
        // `i <= mask` is in bounds.
        unsafe { self.slots.get_unchecked(i) }
    }

    /// A completion of this QP (the poller): the `wr_id` it carries, `success`, and whether
    /// it is a receive (known only for successful completions). Returns the caller's `wr_id`
    /// where the crate wrote its own (DCIs); None where the completion already carries the
    /// caller's (RC, receives) or names no request of this queue.
    #[inline(always)]
    pub(crate) fn complete(&self, wr_id: u64, success: bool, receive: bool) -> Option<u64> {
        if receive {
            return None;
        }
        if self.has_receives {
            self.complete_in_order(wr_id, success);
            return None;
        }
        let seq = wr_id;
        let slot = self.slot(seq);
        let tag = slot.tag.load(Ordering::Acquire);
        if !tag_names(tag, seq) {
            // Not a request of this queue, or one a RESET retired whose slot was used again.
            return None;
        }
        // The slot names this request: it was admitted, and a completion naming it means its
        // doorbell rang, possibly before `commit` published it (the wr API rings inside
        // ibv_wr_complete): `head` does not bound what may complete (see `admitted`).
        let user = slot.wr_id.load(Ordering::Relaxed);
        if !self.retire_if_oldest(seq) {
            self.complete_slow(seq, tag);
        }
        Some(user)
    }

    /// [`SendQueue::complete`]'s common case, in order: request `seq` (admitted) is the oldest
    /// and nothing after it has completed yet, so the tail (and libmlx5's, which follows the
    /// last completion) moves past it alone; true if so, else nothing is changed. The slot at
    /// the tail is never marked done (the tail moves past done slots). Below a RESET's floor
    /// this is harmless: what is retired is the larger of the two. (`seq + 1` cannot overflow
    /// here: the tail is a count of retired requests.)
    #[inline(always)]
    fn retire_if_oldest(&self, seq: u64) -> bool {
        if seq == self.tail.load(Ordering::Relaxed) && self.done_ahead.load(Ordering::Relaxed) == 0 {
            self.tail.store(seq.wrapping_add(1), Ordering::Release);
            self.lib_tail.store(seq.wrapping_add(1), Ordering::Release);
            return true;
        }
        false
    }

    /// A successful direct completion naming WQE index `wqe_counter`, if it is the common
    /// case: a DCI's (the crate's slots) oldest request, which it retires
    /// ([`SendQueue::retire_if_oldest`]); its caller's `wr_id`. None, nothing changed, for
    /// anything else (which [`Registry::complete_wqe`] then decides).
    #[inline(always)]
    fn complete_oldest_wqe(&self, wqe_counter: u16) -> Option<u64> {
        if self.has_receives || self.life.load(Ordering::Relaxed) != LIVE {
            return None;
        }
        let seq = self.seq_of_wqe(wqe_counter)?;
        let slot = self.slot(seq);
        if !tag_names(slot.tag.load(Ordering::Acquire), seq) {
            return None;
        }
        let user = slot.wr_id.load(Ordering::Relaxed);
        self.retire_if_oldest(seq).then_some(user)
    }

    /// The rest of [`SendQueue::complete`]: a completion that is not the oldest request's, one
    /// that leaves requests already done after it (out of order), one from before a RESET, or
    /// one reported twice. Kept out of line, so the in-order path stays small (not `#[cold]`:
    /// unsignaled batches take it too).
    #[inline(never)]
    fn complete_slow(&self, seq: u64, tag: u64) {
        // A sequence number no request can have had (the tag check makes this unreachable for
        // a recorded one; kept so no input overflows).
        let Some(after) = seq.checked_add(1) else {
            return;
        };
        // Requests up to this one were rung, published or not yet.
        let head = self.head.load(Ordering::Acquire).max(after);
        let floor = self.floor.load(Ordering::Acquire);
        let done_tail = self.tail.load(Ordering::Relaxed);
        let tail = done_tail.max(floor);
        if seq < tail || tag & TAG_DONE != 0 {
            // Retired already (by a RESET, or reported twice): no credit, and libmlx5's tail
            // stays. No CQE names a retired request after a RESET's floor (a request is retired
            // by its own completion or by a later one of its stream, which comes after it), so
            // only a report by hand gets here, which libmlx5 never processed; and the retired
            // count must never go back (admission caches a limit from it).
            return;
        }
        // libmlx5 moved its tail to just after this request, forwards or backwards (never
        // under the retired count: this request was outstanding).
        self.lib_tail.store(after, Ordering::Release);
        // Past a RESET nothing is done ahead of the tail (the new requests' tags are fresh).
        let ahead = if done_tail < floor {
            0
        } else {
            self.done_ahead.load(Ordering::Relaxed)
        };
        if seq == tail && ahead == 0 {
            self.tail.store(after, Ordering::Release);
            return;
        }
        self.complete_out_of_order(seq, tag, tail, ahead, head);
    }

    /// A completion that is not the oldest outstanding request's, or that leaves requests done
    /// after it: marks it and its stream's earlier requests done, then moves the tail past
    /// every done request.
    fn complete_out_of_order(&self, seq: u64, tag: u64, tail: u64, ahead: u64, head: u64) {
        // This request and the earlier ones of its stream are done (a stream runs in order).
        let stream = tag_stream(tag);
        let mut marked = 0;
        for s in tail..=seq {
            let slot = self.slot(s);
            let t = slot.tag.load(Ordering::Relaxed);
            if tag_stream(t) == stream && t & TAG_DONE == 0 {
                slot.tag.store(t | TAG_DONE, Ordering::Relaxed);
                marked += 1;
            }
        }
        let mut t = tail;
        while t < head && self.slot(t).tag.load(Ordering::Relaxed) & TAG_DONE != 0 {
            t += 1;
        }
        // Slots done but still ahead of the tail (completed out of order): what the fast path
        // must not skip. A RESET may leave stale ones counted: that only costs a scan.
        self.done_ahead
            .store((ahead + marked).saturating_sub(t - tail), Ordering::Relaxed);
        if t != tail {
            self.tail.store(t, Ordering::Release);
        }
    }

    /// The sequence number of the request the direct backend wrote at WQE index
    /// `wqe_counter` (a CQE's `wqe_counter`), or None on the wr API and for an index no
    /// request was written at yet.
    #[inline]
    pub(crate) fn seq_of_wqe(&self, wqe_counter: u16) -> Option<u64> {
        // A power-of-two map: the index masked; an empty map's mask is all ones, and `get`
        // then finds nothing (one bounds check for both).
        let i = usize::from(wqe_counter) & self.wqe_seq.len().wrapping_sub(1);
        let seq = self.wqe_seq.get(i)?.load(Ordering::Acquire);
        (seq != NO_REQUEST).then_some(seq)
    }

    /// Where the QP stands (LIVE, CLOSING, GONE).
    #[inline]
    fn life(&self) -> u8 {
        self.life.load(Ordering::Acquire)
    }

    /// Marks the queue gone; whether it was being destroyed (CLOSING) until now: then its
    /// entries are still to be cleaned out of a direct CQ, by whoever took it from CLOSING
    /// ([`crate::cq::CqCore::release_number`]).
    pub(crate) fn take_number(&self) -> bool {
        self.life.swap(GONE, Ordering::AcqRel) == CLOSING
    }

    /// The caller's `wr_id` of the request whose completion carries `wr_id` (a DCI's slot
    /// number), without retiring anything; None as for [`SendQueue::complete`].
    fn callers_wr_id(&self, wr_id: u64) -> Option<u64> {
        if self.has_receives {
            return None;
        }
        let slot = self.slot(wr_id);
        let user = slot.wr_id.load(Ordering::Relaxed);
        self.admitted(wr_id).then_some(user)
    }

    /// Whether request `seq` was admitted (its slot still names it). A completion can name a
    /// request admitted but not yet published: the doorbell rings before `commit` publishes
    /// the batch, and a poller on another thread may see the completion in between. Nothing
    /// else is admitted and unpublished then (the poster is inside that commit), and an
    /// aborted request never rang, so no completion names it.
    #[inline]
    fn admitted(&self, seq: u64) -> bool {
        tag_names(self.slot(seq).tag.load(Ordering::Acquire), seq)
    }

    /// An RC send completion (in send-queue order; the `wr_id` is the caller's).
    #[inline]
    fn complete_in_order(&self, wr_id: u64, success: bool) {
        let tail = self
            .tail
            .load(Ordering::Relaxed)
            .max(self.floor.load(Ordering::Acquire));
        // Admitted requests, published or not yet (see `admitted`).
        let end = tail + self.capacity;
        if success {
            // Only signaled requests complete successfully: it is the oldest one outstanding.
            let mut seq = tail;
            while seq < end && self.admitted(seq) {
                if self.slot(seq).tag.load(Ordering::Relaxed) & TAG_SIGNALED != 0 {
                    self.tail.store(seq + 1, Ordering::Release);
                    return;
                }
                seq += 1;
            }
            return;
        }
        // An RC failure puts the QP in ERR, and a failed receive looks the same as a failed
        // send: no more requests until the QP is reset (which empties the queue).
        self.halted.store(true, Ordering::Relaxed);
        // The failed request lies between the oldest outstanding one and the oldest signaled
        // one (earlier signaled requests reported success first): the first with this wr_id.
        for seq in (tail..end).take_while(|&s| self.admitted(s)) {
            let slot = self.slot(seq);
            if slot.wr_id.load(Ordering::Relaxed) == wr_id {
                self.tail.store(seq + 1, Ordering::Release);
                return;
            }
            if slot.tag.load(Ordering::Relaxed) & TAG_SIGNALED != 0 {
                return;
            }
        }
    }
}

/// The poster's side of a send queue, owned by its QP (which is `Send`, not `Sync`): what only
/// the poster writes is kept here in plain cells, and published to the poller at commit.
pub(crate) struct Poster {
    shared: Arc<SendQueue>,
    /// The sequence number the next admitted request gets: the requests posted
    /// (`shared.head`, which only the poster writes) plus the open batch's.
    next: Cell<u64>,
    /// Requests below this sequence number are admitted without reading the poller's progress
    /// again: the retired count plus `capacity` when last read, a lower bound of the true
    /// limit (the poller only ever retires more), so most admissions read no cache line the
    /// poller writes.
    limit: Cell<u64>,
    /// A CQ's registry routes this queue's completions ([`Poster::routed`]).
    routed: Cell<bool>,
    /// `shared.slots` and `shared.mask`, kept here so that recording a request reads the
    /// slot's address off the poster alone, not through `shared` (a chain of dependent loads
    /// after the library's calls): measured 1.06x -> 1.04x of C's time through the real
    /// libmlx5 (`scripts/post-path --interleaved`). `shared` keeps the slots alive and in
    /// place (a boxed slice, never resized).
    slots: std::ptr::NonNull<Slot>,
    mask: u32,
}

impl Poster {
    /// Room for `max_send_wr` requests (at least one). `has_receives`: an RC QP (the `wr_id`
    /// stays the caller's); otherwise a DCI (the crate writes its own, see the module).
    pub(crate) fn new(max_send_wr: u32, has_receives: bool) -> Poster {
        Poster::with_wqe_map(max_send_wr, has_receives, 0)
    }

    /// As [`Poster::new`], for the direct backend: with a map from the `wqe_cnt` WQE indexes
    /// of the send ring (a power of two) to the requests written there ([`Poster::note_wqe`]).
    pub(crate) fn with_wqe_map(max_send_wr: u32, has_receives: bool, wqe_cnt: usize) -> Poster {
        debug_assert!(wqe_cnt == 0 || wqe_cnt.is_power_of_two());
        let capacity = u64::from(max_send_wr.max(1));
        let n = (capacity as usize).next_power_of_two();
        let shared = Arc::new(SendQueue {
            slots: (0..n)
                .map(|_| Slot {
                    wr_id: AtomicU64::new(0),
                    tag: AtomicU64::new(0),
                })
                .collect(),
            mask: n - 1,
            capacity,
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            lib_tail: AtomicU64::new(if has_receives { u64::MAX } else { 0 }),
            done_ahead: AtomicU64::new(0),
            floor: AtomicU64::new(0),
            halted: AtomicBool::new(false),
            life: AtomicU8::new(LIVE),
            has_receives,
            wqe_seq: (0..wqe_cnt).map(|_| AtomicU64::new(NO_REQUEST)).collect(),
        });
        Poster {
            // The whole slice's address (its provenance covers every slot); `n` is at most
            // 2^32 (`max_send_wr` is a u32), so `n - 1` fits.
            slots: std::ptr::NonNull::from(&*shared.slots).cast::<Slot>(),
            mask: (n - 1) as u32,
            shared,
            next: Cell::new(0),
            limit: Cell::new(capacity),
            routed: Cell::new(false),
        }
    }

    /// The shared part, for the CQ's registry.
    pub(crate) fn shared(&self) -> &Arc<SendQueue> {
        &self.shared
    }

    /// Requests posted or in the open batch and not yet retired by their completions.
    #[inline]
    pub(crate) fn outstanding(&self) -> u64 {
        // Never negative: the poller retires only published requests, the floor only posted ones.
        let retired = self
            .shared
            .tail
            .load(Ordering::Acquire)
            .max(self.shared.floor.load(Ordering::Relaxed));
        self.next.get().wrapping_sub(retired)
    }

    /// Admits one request of `stream` (0 without streams) into the open batch and records it
    /// ([`Poster::reserve`] then [`Poster::record`]); returns the `wr_id` to write into the
    /// work request: the crate's sequence number where `crate_wr_id` (a DCI), the caller's
    /// otherwise (RC). `crate_wr_id` is a constant of the transport, so each caller keeps only
    /// its own branch.
    #[inline]
    pub(crate) fn admit(&self, wr_id: u64, signaled: bool, stream: u16, crate_wr_id: bool) -> Result<u64, Refusal> {
        let seq = self.reserve(crate_wr_id)?;
        self.record(seq, wr_id, signaled, stream);
        Ok(if crate_wr_id { seq } else { wr_id })
    }

    /// Admits one request into the open batch without recording it yet: returns its sequence
    /// number, which [`Poster::record`] must be given before the batch's doorbell (on the wr
    /// API, before `ibv_wr_complete`), with nothing in between that can fail. Until then the
    /// request is unknown to the poller, as if not admitted, which is right while no
    /// completion can name it.
    ///
    /// The wr API records after the library's calls for the request, not before: the same
    /// instructions, yet on soft-mlx5 the safe post through the real libmlx5 measured 1.095x
    /// of C's time with them before the calls and 1.067x after (`scripts/post-path --paired 6
    /// --group real_mlx5`, medians).
    #[inline]
    pub(crate) fn reserve(&self, crate_wr_id: bool) -> Result<u64, Refusal> {
        debug_assert_eq!(crate_wr_id, !self.shared.has_receives);
        // Only an RC QP halts (a failed completion of a DCI is handled by its recovery).
        if !crate_wr_id && self.shared.halted.load(Ordering::Relaxed) {
            return Err(Refusal::Halted);
        }
        let seq = self.next.get();
        if seq >= self.limit.get() && !self.refill() {
            return Err(Refusal::Full);
        }
        self.next.set(seq + 1);
        Ok(seq)
    }

    /// Records request `seq` (reserved by [`Poster::reserve`]): the caller's `wr_id`, whether
    /// it is signaled, its stream (0 without streams).
    #[inline]
    pub(crate) fn record(&self, seq: u64, wr_id: u64, signaled: bool, stream: u16) {
        debug_assert!(seq < self.next.get(), "only a reserved request is recorded");
        let i = seq as usize & self.mask as usize;
        debug_assert!(i < self.shared.slots.len());
        // SAFETY: `slots` points to `shared`'s `mask + 1` slots, which `shared` keeps alive and
        // in place; `i <= mask`.
        let slot = unsafe { &*self.slots.as_ptr().add(i) };
        slot.wr_id.store(wr_id, Ordering::Relaxed);
        slot.tag.store(
            seq << TAG_SEQ | TAG_VALID | u64::from(stream) << TAG_STREAM | u64::from(signaled) << 1,
            Ordering::Relaxed,
        );
    }

    /// Reads the poller's progress into `limit`; false when the queue is still full.
    #[inline(never)]
    fn refill(&self) -> bool {
        let limit = self.retired() + self.shared.capacity;
        self.limit.set(limit);
        self.next.get() < limit
    }

    /// The requests before this one are retired: the lower of the crate's and libmlx5's
    /// views (see the module), above any RESET.
    #[inline]
    pub(crate) fn retired(&self) -> u64 {
        let shared = &*self.shared;
        shared
            .tail
            .load(Ordering::Acquire)
            .min(shared.lib_tail.load(Ordering::Acquire))
            .max(shared.floor.load(Ordering::Relaxed))
    }

    /// The direct backend wrote request `seq` (as [`Poster::admit`] returned it) at WQE index
    /// `wqe_index` of the ring: a completion naming that index retires it.
    #[inline]
    pub(crate) fn note_wqe(&self, wqe_index: u16, seq: u64) {
        let map = &self.shared.wqe_seq;
        debug_assert!(!map.is_empty(), "a WQE map exists only for the direct backend");
        let i = usize::from(wqe_index) & (map.len() - 1);
        map[i].store(seq, Ordering::Release);
    }

    /// Requests posted (committed batches).
    #[inline]
    fn posted(&self) -> u64 {
        // The poster is the only writer of `head`: its own last store.
        self.shared.head.load(Ordering::Relaxed)
    }

    /// The open batch was posted: its slots become visible to the poller.
    #[inline]
    pub(crate) fn commit(&self) {
        self.shared.head.store(self.next.get(), Ordering::Release);
    }

    /// The open batch was discarded: its room is free again.
    #[inline]
    pub(crate) fn abort(&self) {
        self.next.set(self.posted());
    }

    /// The QP went through RESET: its queue is empty again.
    pub(crate) fn reset(&self) {
        let head = self.posted();
        self.next.set(head);
        self.limit.set(head + self.shared.capacity);
        self.shared.floor.store(head, Ordering::Release);
        self.shared.halted.store(false, Ordering::Relaxed);
    }

    /// Its completions are routed by a CQ's registry (the queue was added to it).
    pub(crate) fn routed(&self) {
        self.routed.set(true);
    }

    /// A completion reported by hand (for a QP whose CQ the crate does not poll); returns
    /// the caller's `wr_id` as [`SendQueue::complete`] does. Where a CQ's registry routes the
    /// completions already, only the `wr_id` is looked up: the poller there retires them (a
    /// second retirer would race it, and count twice).
    #[inline]
    pub(crate) fn complete(&self, wr_id: u64, success: bool, receive: bool) -> Option<u64> {
        if self.routed.get() {
            return if receive {
                None
            } else {
                self.shared.callers_wr_id(wr_id)
            };
        }
        self.shared.complete(wr_id, success, receive)
    }

    /// The QP is being destroyed: its completions are dropped from now on (a new QP may get
    /// its number once the destroy returns: [`Poster::gone`]).
    pub(crate) fn close(&self) {
        self.shared.life.store(CLOSING, Ordering::Release);
    }

    /// The QP is destroyed: no completion of it can come any more, so the registry may drop the
    /// queue, and a direct CQ its entries, when the next QP joins.
    pub(crate) fn gone(&self) {
        self.shared.life.store(GONE, Ordering::Release);
    }
}

/// A WQE-map entry no request was written at.
const NO_REQUEST: u64 = u64::MAX;

/// What a completion read from a direct CQ is, for its poller ([`Registry::complete_wqe`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Routed {
    /// A request's completion: the caller's `wr_id`.
    Request(u64),
    /// An entry of a QP being destroyed, which libmlx5 would clean out of its own CQ (the
    /// drop cleans what is left once the destroy returns). Consumed and not reported.
    Stale,
    /// It names no request of a QP reporting here.
    Unknown,
}

/// The send queues of the QPs reporting to one CQ, by QP number (sorted).
///
/// It lives in the [`crate::Cq`] handle, which is not `Sync`: queues join (a QP created on the
/// CQ, through `&Cq`) and completions are routed (`Cq::poll`) on the thread that holds the CQ.
/// A QP dropped elsewhere only marks its queue dead (an atomic); the queue leaves the list the
/// next time a QP joins.
pub(crate) struct Registry {
    queues: RefCell<Vec<(u32, Arc<SendQueue>)>>,
    /// The queue the last direct completion was routed to ([`Registry::complete_wqe`]) and its
    /// QP number (`NO_QP`: none): a CQ's completions come in runs of one QP's, so most are
    /// routed with one compare, without borrowing `queues`. The pointer is to the queue of an
    /// `Arc` in `queues`, which only `add` drops, and `add` empties the cache first (so a QP
    /// number handed out again is looked up anew, never routed to the old queue).
    last: Cell<(u32, *const SendQueue)>,
}

/// No QP number (they are 24 bits): the route cache of an empty [`Registry`].
const NO_QP: u32 = u32::MAX;

// SAFETY: `last`'s pointer is to a queue whose `Arc` is in `queues` (SendQueue is Send and
// Sync): moving the registry to another thread moves that `Arc` with it.
unsafe impl Send for Registry {}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            queues: RefCell::default(),
            last: Cell::new((NO_QP, std::ptr::null())),
        }
    }
}

impl Registry {
    /// Adds `qp_num`'s queue (at QP creation; allocates), dropping queues of destroyed QPs.
    /// Refused (false, nothing changed) while a queue of that number is live or being
    /// destroyed: two queues never share a number.
    pub(crate) fn add(&self, qp_num: u32, sq: Arc<SendQueue>) -> bool {
        let mut q = self.queues.borrow_mut();
        if q.iter().any(|e| e.0 == qp_num && e.1.life() != GONE) {
            return false;
        }
        // The cached queue may be one dropped here, and its number this QP's.
        self.last.set((NO_QP, std::ptr::null()));
        q.retain(|e| e.1.life() != GONE);
        let at = q.partition_point(|e| e.0 < qp_num);
        q.insert(at, (qp_num, sq));
        true
    }

    /// Calls `f` with each queue registered under `qp_num`: the kernel gave that number to a
    /// new QP, so whatever holds it (a QP whose destroy returned in the kernel but whose thread
    /// has not finished dropping it, or a stand-in of the differential test) is no QP any more.
    pub(crate) fn evict(&self, qp_num: u32, mut f: impl FnMut(&SendQueue)) {
        for e in self.queues.borrow().iter().filter(|e| e.0 == qp_num) {
            f(&e.1);
        }
    }

    /// The queues borrowed for routing completions until the result is dropped (a guard,
    /// not a closure: a direct poll's whole read would be the closure, which LLVM calls out
    /// of line, saving and restoring every register once a poll).
    #[inline(always)]
    pub(crate) fn routes(&self) -> Routes<'_> {
        Routes(self.queues.borrow())
    }

    /// The queue of QP `qp_num` if it is the cached one ([`Registry::complete_wqe`]'s).
    #[inline(always)]
    fn cached(&self, qp_num: u32) -> Option<&SendQueue> {
        let (cached, sq) = self.last.get();
        if cached != qp_num {
            return None;
        }
        // SAFETY: the number matched, so not NO_QP's null: the pointer is to the queue of an
        // `Arc` in `queues`, dropped only by `add`, which empties the cache first; the
        // reference lives as long as `&self` and is used only within the routing of one
        // completion (`complete_wqe`, `complete_oldest_wqe`), which calls no `add`.
        Some(unsafe { &*sq })
    }

    /// Feeds one send completion read directly from the CQ (direct backend: it names the WQE
    /// index, not a `wr_id`): the caller's `wr_id`, an entry of a QP being destroyed, or none
    /// of a QP driven by the direct backend here. Routed through the cache of the last QP
    /// seen, else looked up ([`Registry::complete_wqe_looked_up`]).
    #[inline(always)]
    pub(crate) fn complete_wqe(&self, qp_num: u32, wqe_counter: u16, success: bool) -> Routed {
        match self.cached(qp_num) {
            Some(sq) => complete_queue(sq, wqe_counter, success),
            None => self.complete_wqe_looked_up(qp_num, wqe_counter, success),
        }
    }

    /// [`Registry::complete_wqe`]'s common case alone: a successful completion of the cached
    /// QP's oldest request (live, a DCI), retired; its caller's `wr_id`. None, nothing
    /// changed, for anything else. The direct poll's first try.
    #[inline(always)]
    pub(crate) fn complete_oldest_wqe(&self, qp_num: u32, wqe_counter: u16) -> Option<u64> {
        self.cached(qp_num)?.complete_oldest_wqe(wqe_counter)
    }

    /// [`Registry::complete_wqe`] for a QP other than the cached one's: looked up in
    /// `queues`, and cached.
    #[inline(never)]
    fn complete_wqe_looked_up(&self, qp_num: u32, wqe_counter: u16, success: bool) -> Routed {
        let queues = self.queues.borrow();
        let Some(i) = Router(&queues).position(qp_num) else {
            return Routed::Unknown;
        };
        let sq = &queues[i].1;
        self.last.set((qp_num, Arc::as_ptr(sq)));
        complete_queue(sq, wqe_counter, success)
    }
}

/// A direct completion of `sq`'s QP ([`Registry::complete_wqe`]).
#[inline(always)]
fn complete_queue(sq: &SendQueue, wqe_counter: u16, success: bool) -> Routed {
    if sq.life.load(Ordering::Relaxed) != LIVE {
        return Routed::Stale;
    }
    match sq
        .seq_of_wqe(wqe_counter)
        .and_then(|seq| sq.complete(seq, success, false))
    {
        Some(wr_id) => Routed::Request(wr_id),
        None => Routed::Unknown,
    }
}

/// The registry's queues while borrowed ([`Registry::routes`]).
pub(crate) struct Routes<'a>(std::cell::Ref<'a, Vec<(u32, Arc<SendQueue>)>>);

impl Routes<'_> {
    /// A router over them.
    #[inline(always)]
    pub(crate) fn router(&self) -> Router<'_> {
        Router(&self.0)
    }
}

/// The registry's queues, looked up by QP number while its lock is held.
pub(crate) struct Router<'a>(&'a [(u32, Arc<SendQueue>)]);

impl Router<'_> {
    /// Where `qp_num`'s queue is (the list is sorted by QP number): a scan of a short list
    /// (a CQ's few QPs: a pool's DCIs, the S3 executor's 4 + 8 probation ones), which costs
    /// less than a search's setup up to 16 (callgrind, scripts/s3-async-count: a binary
    /// search over the executor's 12 DCIs cost 47 instructions a completion more than over
    /// its former 6 scanned).
    #[inline]
    fn position(&self, qp_num: u32) -> Option<usize> {
        if self.0.len() <= 16 {
            return self.0.iter().position(|e| e.0 == qp_num);
        }
        self.0.binary_search_by_key(&qp_num, |e| e.0).ok()
    }

    /// Feeds one completion to its QP's queue, if the QP is registered and alive; returns
    /// the caller's `wr_id` where the crate wrote its own into the request (DCIs).
    // Always inlined: its one caller per completion form ([`crate::Cq::poll`]'s and
    // `poll_lean`'s reads of libmlx5) otherwise calls it out of line.
    #[inline(always)]
    pub(crate) fn complete(&self, qp_num: u32, wr_id: u64, success: bool, receive: bool) -> Option<u64> {
        let i = self.position(qp_num)?;
        let sq = &self.0[i].1;
        if sq.life.load(Ordering::Relaxed) != LIVE {
            return None;
        }
        sq.complete(wr_id, success, receive)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DCI's queue (the crate owns the wr_id) and an RC QP's.
    const DCI: bool = false;
    const RC: bool = true;

    /// Admits as the queue's transport does (the crate's wr_id on a DCI, the caller's on RC).
    fn admit(sq: &Poster, wr_id: u64, signaled: bool, stream: u16) -> Result<u64, Refusal> {
        sq.admit(wr_id, signaled, stream, !sq.shared.has_receives)
    }

    #[test]
    fn a_full_queue_refuses_until_a_signaled_completion_retires_everything_before_it() {
        let sq = Poster::new(4, DCI);
        for i in 0..3 {
            assert_eq!(
                admit(&sq, 100 + i, false, 0),
                Ok(i),
                "the request carries its slot number"
            );
        }
        admit(&sq, 103, true, 0).unwrap();
        assert_eq!(admit(&sq, 104, true, 0), Err(Refusal::Full));
        sq.commit();
        assert_eq!(admit(&sq, 104, true, 0), Err(Refusal::Full));
        assert_eq!(
            sq.complete(3, true, false),
            Some(103),
            "mapped back to the caller's wr_id"
        );
        assert_eq!(sq.outstanding(), 0);
        admit(&sq, 104, true, 0).unwrap();
    }

    #[test]
    fn an_aborted_batch_gives_its_room_back() {
        let sq = Poster::new(2, DCI);
        admit(&sq, 1, true, 0).unwrap();
        admit(&sq, 2, true, 0).unwrap();
        sq.abort();
        assert_eq!(sq.outstanding(), 0);
        admit(&sq, 3, true, 0).unwrap();
        admit(&sq, 4, true, 0).unwrap();
        assert_eq!(
            admit(&sq, 5, true, 0),
            Err(Refusal::Full),
            "the room given back, no more"
        );
    }

    #[test]
    fn failed_and_flushed_completions_retire_up_to_the_request_they_name() {
        let sq = Poster::new(8, DCI);
        for (i, signaled) in [(10, false), (11, false), (12, true), (13, false), (14, true)] {
            admit(&sq, i, signaled, 0).unwrap();
        }
        sq.commit();
        assert_eq!(sq.complete(1, false, false), Some(11)); // 10 succeeded silently, 11 failed
        assert_eq!(sq.outstanding(), 3);
        sq.complete(2, false, false); // flushed
        sq.complete(3, false, false);
        sq.complete(4, false, false);
        assert_eq!(sq.outstanding(), 0);
    }

    #[test]
    fn two_signaled_requests_completing_newer_failed_then_older_succeeded_leave_nothing_outstanding() {
        // dc-review-2 finding 5 (a): it leaked one credit when completions assumed queue order.
        let sq = Poster::new(4, DCI);
        admit(&sq, 1, true, 1).unwrap();
        admit(&sq, 2, true, 2).unwrap();
        sq.commit();
        assert_eq!(sq.complete(1, false, false), Some(2));
        assert_eq!(sq.outstanding(), 2, "the older request is still out");
        assert_eq!(sq.complete(0, true, false), Some(1));
        assert_eq!(sq.outstanding(), 0);
    }

    #[test]
    fn four_unsignaled_requests_with_wr_id_0_three_flushed_leave_nothing_outstanding() {
        // dc-review-2 finding 5 (b): the first succeeded silently, the second failed, two
        // flushed; every wr_id is 0, so the caller's wr_id cannot tell them apart.
        let sq = Poster::new(4, DCI);
        for _ in 0..4 {
            admit(&sq, 0, false, 0).unwrap();
        }
        sq.commit();
        for seq in 1..4 {
            assert_eq!(sq.complete(seq, false, false), Some(0));
        }
        assert_eq!(sq.outstanding(), 0);
        assert_eq!(admit(&sq, 0, true, 0), Ok(4), "the whole queue is free again");
    }

    #[test]
    fn out_of_order_streams_admit_no_more_than_libmlx5s_last_processed_completion_allows() {
        // libmlx5's tail follows the last processed completion: after stream 2's newer request
        // then stream 1's older one, it counts everything after the older one as outstanding.
        let sq = Poster::new(4, DCI);
        admit(&sq, 10, true, 1).unwrap(); // 0
        admit(&sq, 20, true, 2).unwrap(); // 1
        admit(&sq, 21, true, 2).unwrap(); // 2
        sq.commit();
        assert_eq!(sq.complete(2, true, false), Some(21), "stream 2 retires 1 and 2");
        assert_eq!(
            sq.outstanding(),
            3,
            "request 0 (stream 1) is still out: nothing retires"
        );
        admit(&sq, 30, true, 1).unwrap(); // 3: one slot free
        assert_eq!(admit(&sq, 31, true, 1), Err(Refusal::Full));
        sq.commit();
        assert_eq!(sq.complete(0, true, false), Some(10));
        assert_eq!(sq.outstanding(), 1, "the crate sees request 3 only");
        // libmlx5's tail is back at 1: it counts 1, 2 and 3 as outstanding, one slot is free.
        admit(&sq, 40, true, 1).unwrap();
        assert_eq!(
            admit(&sq, 41, true, 1),
            Err(Refusal::Full),
            "libmlx5 would see a full ring"
        );
        sq.commit();
        sq.complete(4, true, false);
        assert_eq!(sq.outstanding(), 0);
        for i in 0..4 {
            admit(&sq, 50 + i, true, 0).unwrap();
        }
    }

    #[test]
    fn a_completion_polled_between_the_doorbell_and_the_batchs_publication_still_retires_its_request() {
        // The wr API rings the doorbell inside ibv_wr_complete, before `commit` publishes the
        // batch: a fast device and a poller on another thread can report the request first.
        let sq = Poster::new(4, DCI);
        for wr_id in [7, 8] {
            admit(&sq, wr_id, true, 0).unwrap();
        }
        assert_eq!(sq.complete(0, true, false), Some(7), "the doorbell rang: genuine");
        assert_eq!(sq.complete(1, true, false), Some(8));
        sq.commit();
        assert_eq!(sq.outstanding(), 0, "no credit lost to the race");
        for wr_id in 10..14 {
            admit(&sq, wr_id, true, 0).unwrap();
        }
        // The same on RC, where the wr_id is the caller's.
        let rc = Poster::new(2, RC);
        admit(&rc, 5, false, 0).unwrap();
        admit(&rc, 6, true, 0).unwrap();
        rc.complete(6, true, false);
        rc.commit();
        assert_eq!(rc.outstanding(), 0);
    }

    #[test]
    fn a_completion_reported_twice_retires_nothing_more() {
        let sq = Poster::new(2, DCI);
        admit(&sq, 5, true, 0).unwrap();
        admit(&sq, 6, true, 0).unwrap();
        sq.commit();
        sq.complete(0, true, false);
        assert_eq!(sq.complete(0, true, false), Some(5));
        assert_eq!(sq.outstanding(), 1);
        assert_eq!(sq.complete(9, true, false), None, "a request never posted");
    }

    #[test]
    fn a_completion_reported_again_after_its_request_retired_never_lowers_what_counts_as_retired() {
        // Admission caches a limit from the retired count, so that count must never go back:
        // a completion libmlx5 never processed (reported again by hand) must not move the
        // crate's copy of libmlx5's tail back under requests already retired.
        let sq = Poster::new(4, DCI);
        for stream in 0..4 {
            admit(&sq, 10 + u64::from(stream), true, stream).unwrap();
        }
        sq.commit();
        // Out of order (streams): the newest first, then the rest.
        for seq in [3, 0, 1, 2] {
            sq.complete(seq, true, false);
        }
        let retired = sq.retired();
        assert_eq!(
            retired, 3,
            "libmlx5's tail follows its last processed completion (seq 2)"
        );
        sq.complete(0, true, false);
        assert!(
            sq.retired() >= retired,
            "retired went back from {retired} to {}",
            sq.retired()
        );
    }

    #[test]
    fn rc_keeps_the_callers_wr_id_and_an_rc_failure_halts_until_reset() {
        let sq = Poster::new(4, RC);
        assert_eq!(admit(&sq, 1, true, 0), Ok(1));
        sq.commit();
        assert_eq!(sq.complete(99, true, true), None);
        assert_eq!(sq.outstanding(), 1, "receives do not retire sends");
        sq.complete(7, false, false);
        assert_eq!(admit(&sq, 2, true, 0), Err(Refusal::Halted));
        sq.reset();
        admit(&sq, 2, true, 0).unwrap();
        sq.commit();
        assert_eq!(sq.complete(2, true, false), None);
        assert_eq!(sq.outstanding(), 0);
    }

    #[test]
    fn a_reset_empties_the_queue_even_when_a_stale_completion_is_reported_after_it() {
        let sq = Poster::new(4, DCI);
        for i in 0..4 {
            admit(&sq, i, true, 0).unwrap();
        }
        sq.commit();
        sq.reset();
        assert_eq!(sq.outstanding(), 0);
        // A poller that read request 0's completion before the reset reports it now.
        assert_eq!(sq.complete(0, true, false), Some(0));
        assert_eq!(sq.outstanding(), 0, "the stale completion does not count twice");
        for i in 10..14 {
            admit(&sq, i, true, 0).unwrap();
        }
        sq.commit();
        assert_eq!(sq.outstanding(), 4, "the queue is whole again after the reset");
        assert_eq!(sq.complete(4, true, false), Some(10));
        assert_eq!(
            sq.outstanding(),
            3,
            "a completion after the reset retires the new request"
        );
    }

    #[test]
    fn a_completion_reported_by_hand_for_a_routed_queue_is_mapped_but_not_counted_twice() {
        let reg = Registry::default();
        let sq = Poster::new(4, DCI);
        reg.add(0x30, sq.shared().clone());
        sq.routed();
        admit(&sq, 77, true, 0).unwrap();
        admit(&sq, 78, true, 0).unwrap();
        sq.commit();
        assert_eq!(sq.complete(0, true, false), Some(77), "mapped");
        assert_eq!(sq.outstanding(), 2, "the CQ's poller retires it, not the hand report");
        assert_eq!(reg.routes().router().complete(0x30, 0, true, false), Some(77));
        assert_eq!(sq.outstanding(), 1);
    }

    #[test]
    fn a_direct_completion_names_its_wqe_index_and_retires_the_request_written_there() {
        let reg = Registry::default();
        let sq = Poster::with_wqe_map(4, DCI, 4);
        reg.add(0x40, sq.shared().clone());
        sq.routed();
        // Three requests; the second takes two WQE basic blocks (indexes 1 and 2).
        for (wr_id, index) in [(70, 0u16), (71, 1), (72, 3)] {
            let seq = admit(&sq, wr_id, true, 0).unwrap();
            sq.note_wqe(index, seq);
        }
        sq.commit();
        assert_eq!(
            reg.complete_wqe(0x40, 1, true),
            Routed::Request(71),
            "index 1: the second request"
        );
        assert_eq!(reg.complete_wqe(0x40, 3, true), Routed::Request(72));
        assert_eq!(sq.outstanding(), 0, "in-order retirement covers the first one too");
        assert_eq!(reg.complete_wqe(0x41, 0, true), Routed::Unknown, "an unknown QP");
        let wr = Poster::new(4, DCI);
        reg.add(0x50, wr.shared().clone());
        assert_eq!(
            reg.complete_wqe(0x50, 0, true),
            Routed::Unknown,
            "a wr-API queue has no WQE map"
        );
    }

    #[test]
    fn the_registry_routes_completions_by_qp_number() {
        let reg = Registry::default();
        let a = Poster::new(2, DCI);
        let b = Poster::new(2, DCI);
        reg.add(0x20, b.shared().clone());
        reg.add(0x10, a.shared().clone());
        admit(&a, 1, true, 0).unwrap();
        a.commit();
        admit(&b, 1, true, 0).unwrap();
        b.commit();
        assert_eq!(reg.routes().router().complete(0x10, 0, true, false), Some(1));
        assert_eq!((a.outstanding(), b.outstanding()), (0, 1));
        b.close();
        reg.routes().router().complete(0x20, 0, true, false);
        assert_eq!(b.outstanding(), 1, "a closed queue gets no completions");
        assert!(
            !reg.add(0x20, Poster::new(2, DCI).shared().clone()),
            "a QP being destroyed keeps its number until the destroy returns"
        );
        b.gone();
        assert!(reg.add(0x20, Poster::new(2, DCI).shared().clone()));
        assert_eq!(
            reg.queues.borrow().len(),
            2,
            "the dead queue left when the list changed"
        );
    }

    /// A signaled request of `stream` admitted and written at WQE index `index` (direct).
    fn written(sq: &Poster, wr_id: u64, index: u16, stream: u16) {
        let seq = admit(sq, wr_id, true, stream).unwrap();
        sq.note_wqe(index, seq);
    }

    #[test]
    fn a_qp_number_handed_out_again_routes_to_the_new_queue_not_the_cached_old_one() {
        let reg = Registry::default();
        let old = Poster::with_wqe_map(4, DCI, 8);
        assert!(reg.add(0x30, old.shared().clone()));
        written(&old, 5, 0, 0);
        old.commit();
        assert_eq!(
            reg.complete_wqe(0x30, 0, true),
            Routed::Request(5),
            "looked up, then cached"
        );
        written(&old, 6, 1, 0);
        old.commit();
        old.close();
        assert_eq!(
            reg.complete_oldest_wqe(0x30, 1),
            None,
            "a closing queue is not the common case"
        );
        assert_eq!(
            reg.complete_wqe(0x30, 1, true),
            Routed::Stale,
            "the cached queue, closing"
        );
        old.gone();
        let new = Poster::with_wqe_map(4, DCI, 8);
        assert!(reg.add(0x30, new.shared().clone()), "the kernel gave 0x30 out again");
        written(&new, 9, 0, 0);
        new.commit();
        assert_eq!(
            reg.complete_oldest_wqe(0x30, 0),
            None,
            "the old queue is no longer cached"
        );
        assert_eq!(
            reg.complete_wqe(0x30, 0, true),
            Routed::Request(9),
            "the new queue, looked up anew"
        );
        assert_eq!(new.outstanding(), 0);
        written(&new, 10, 1, 0);
        new.commit();
        assert_eq!(reg.complete_oldest_wqe(0x30, 1), Some(10), "the new queue, cached");
    }

    #[test]
    fn the_common_case_route_changes_nothing_for_a_completion_it_leaves_to_the_full_one() {
        let reg = Registry::default();
        let sq = Poster::with_wqe_map(4, DCI, 8);
        assert!(reg.add(0x40, sq.shared().clone()));
        written(&sq, 70, 0, 0);
        written(&sq, 71, 1, 0);
        sq.commit();
        assert_eq!(reg.complete_oldest_wqe(0x40, 0), None, "nothing cached yet");
        assert_eq!(reg.complete_wqe(0x40, 1, true), Routed::Request(71), "cached");
        assert_eq!(sq.outstanding(), 0, "the second request retires the first (its stream)");
        written(&sq, 72, 2, 1);
        written(&sq, 73, 3, 2);
        sq.commit();
        assert_eq!(reg.complete_oldest_wqe(0x40, 3), None, "not the oldest: out of order");
        assert_eq!(sq.outstanding(), 2, "left unchanged for the full route");
        assert_eq!(
            reg.complete_oldest_wqe(0x40, 5),
            None,
            "an index no request was written at"
        );
        assert_eq!(reg.complete_oldest_wqe(0x41, 2), None, "another QP");
        assert_eq!(reg.complete_wqe(0x40, 3, true), Routed::Request(73));
        assert_eq!(sq.outstanding(), 2, "out of order: credit waits for the older request");
        assert_eq!(
            reg.complete_oldest_wqe(0x40, 2),
            None,
            "requests done ahead: the full route"
        );
        assert_eq!(reg.complete_wqe(0x40, 2, true), Routed::Request(72));
        assert_eq!(sq.outstanding(), 0);
        written(&sq, 74, 4, 0);
        sq.commit();
        assert_eq!(reg.complete_oldest_wqe(0x40, 4), Some(74), "in order again");
        assert_eq!(sq.outstanding(), 0);
    }

    #[test]
    fn a_second_live_queue_under_one_qp_number_is_refused_and_the_first_keeps_its_completions() {
        let reg = Registry::default();
        let a = Poster::with_wqe_map(4, DCI, 8);
        assert!(reg.add(0x30, a.shared().clone()));
        let seq = admit(&a, 5, true, 0).unwrap();
        a.note_wqe(0, seq);
        a.commit();
        let b = Poster::with_wqe_map(4, DCI, 8);
        assert!(!reg.add(0x30, b.shared().clone()), "a live number is refused");
        assert_eq!(reg.complete_wqe(0x30, 0, true), Routed::Request(5));
        assert_eq!(a.outstanding(), 0);
    }

    #[test]
    fn a_fresh_queue_names_no_sequence_number_and_no_completion_overflows_or_retires_anything() {
        for has_wqe_map in [false, true] {
            let sq = Poster::with_wqe_map(4, DCI, if has_wqe_map { 8 } else { 0 });
            // Every slot, and numbers at the ends of the range: u64::MAX was what an unwritten
            // slot's tag named, and `seq + 1` overflowed on it.
            for seq in (0..64).chain([u64::MAX, u64::MAX - 1, (1 << 45) - 1, 1 << 46]) {
                assert_eq!(sq.shared.complete(seq, true, false), None, "seq {seq:#x}");
                assert_eq!(sq.shared.complete(seq, false, false), None, "seq {seq:#x}, failed");
            }
            assert_eq!(sq.outstanding(), 0);
            assert_eq!(sq.retired(), 0, "nothing was retired");
            if has_wqe_map {
                for index in 0..8 {
                    assert_eq!(sq.shared.seq_of_wqe(index), None, "WQE index {index} holds nothing yet");
                }
            }
        }
    }

    #[test]
    fn a_completion_naming_the_last_sequence_number_of_a_written_slot_does_not_overflow() {
        let sq = Poster::new(4, DCI);
        let seq = admit(&sq, 9, true, 0).unwrap();
        sq.commit();
        // A forged or corrupted wr_id: the slot's low bits but another request.
        assert_eq!(sq.shared.complete(u64::MAX - 3 + seq, true, false), None);
        assert_eq!(sq.outstanding(), 1);
        assert_eq!(sq.shared.complete(seq, true, false), Some(9));
    }
}
