//! Send-queue accounting: the crate's own count of outstanding work requests per queue pair.
//!
//! libmlx5's wr API does not protect a full send queue: `_common_wqe_init_op` detects the
//! overflow, sets the QP's error and returns before moving `cur_ctrl`, so the op builder, the
//! DC address and `_common_wqe_finalize` then write into the previous WQE, possibly already
//! rung and not yet executed (dc-review.md, finding 1). So a request is admitted only if the
//! queue has room, counted against the `max_send_wr` the library created the QP with, and
//! credit comes back with completions: a successful (hence signaled) completion retires
//! every earlier request of its QP, a failed one retires up to the request it names (flushed
//! requests each complete on their own). Everything is preallocated at creation; admitting
//! and retiring touch a few cells only.

//! Threads: a queue pair posts from one thread at a time (it is `Send`, not `Sync`) and its CQ is
//! polled from one thread at a time, maybe another one. So the count is a single-producer,
//! single-consumer ring: the poster writes slots and advances `head` (release), the poller
//! reads them and advances `tail` (release); each reads the other's index with acquire. No
//! lock and no reference count is touched when posting or polling, and no read-modify-write
//! either: on x86-64 and aarch64 these atomics are plain loads and stores. A RESET (the poster
//! empties the queue while a poller may still hold an old completion) moves a `floor` under
//! which nothing counts as outstanding, instead of writing the poller's `tail`.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// One request as the poller needs it.
struct Slot {
    wr_id: AtomicU64,
    signaled: AtomicBool,
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
    /// Requests retired by completions. Written by the poller only.
    tail: AtomicU64,
    /// Requests retired by a RESET (everything posted before it), published by the poster;
    /// the retired count is the larger of `tail` and `floor`.
    floor: AtomicU64,
    halted: AtomicBool,
    /// The QP is gone: its CQ's registry drops the queue at the next change.
    dead: AtomicBool,
    /// Completions of this QP may be receives (RC): a failed one cannot be told apart.
    has_receives: bool,
}

impl SendQueue {
    /// Requests retired, by completions or by a reset (the poller's view).
    #[inline]
    fn retired(&self) -> u64 {
        self.tail
            .load(Ordering::Relaxed)
            .max(self.floor.load(Ordering::Acquire))
    }

    #[inline]
    fn slot(&self, seq: u64) -> &Slot {
        let i = seq as usize & self.mask;
        debug_assert!(i < self.slots.len());
        // SAFETY: `slots` has `mask + 1` entries (a power of two, made in Poster::new), so
        // `i <= mask` is in bounds.
        unsafe { self.slots.get_unchecked(i) }
    }

    /// Retires every request before `seq` (the poller).
    #[inline]
    fn retire_to(&self, seq: u64) {
        self.tail.store(seq, Ordering::Release);
    }

    /// A completion of this QP (the poller): `success`, the `wr_id` it carries, and whether
    /// it is a receive (known only for successful completions).
    #[inline]
    pub(crate) fn complete(&self, wr_id: u64, success: bool, receive: bool) {
        if receive {
            return;
        }
        let (tail, head) = (self.retired(), self.head.load(Ordering::Acquire));
        if success {
            // Only signaled requests complete successfully: it is the oldest one outstanding.
            let mut seq = tail;
            while seq < head {
                if self.slot(seq).signaled.load(Ordering::Relaxed) {
                    self.retire_to(seq + 1);
                    return;
                }
                seq += 1;
            }
            return;
        }
        if self.has_receives {
            // An RC failure puts the QP in ERR, and a failed receive looks the same as a
            // failed send: no more requests until the QP is reset.
            self.halted.store(true, Ordering::Relaxed);
        }
        // The failed request lies between the oldest outstanding one and the oldest signaled
        // one (earlier signaled requests reported success first): the first with this wr_id.
        for seq in tail..head {
            let slot = self.slot(seq);
            if slot.wr_id.load(Ordering::Relaxed) == wr_id {
                self.retire_to(seq + 1);
                return;
            }
            if slot.signaled.load(Ordering::Relaxed) {
                return;
            }
        }
    }
}

/// The poster's side of a send queue, owned by its QP (which is `Send`, not `Sync`): what only
/// the poster writes is kept here in plain cells, and published to the poller at commit.
pub(crate) struct Poster {
    shared: Arc<SendQueue>,
    /// Requests posted (the poster's copy of `shared.head`).
    head: Cell<u64>,
    /// Requests in the open batch.
    pending: Cell<u32>,
    /// The poster's copy of `shared.floor`.
    floor: Cell<u64>,
}

impl Poster {
    /// Room for `max_send_wr` requests (at least one).
    pub(crate) fn new(max_send_wr: u32, has_receives: bool) -> Poster {
        let capacity = u64::from(max_send_wr.max(1));
        let n = (capacity as usize).next_power_of_two();
        Poster {
            shared: Arc::new(SendQueue {
                slots: (0..n)
                    .map(|_| Slot {
                        wr_id: AtomicU64::new(0),
                        signaled: AtomicBool::new(false),
                    })
                    .collect(),
                mask: n - 1,
                capacity,
                head: AtomicU64::new(0),
                tail: AtomicU64::new(0),
                floor: AtomicU64::new(0),
                halted: AtomicBool::new(false),
                dead: AtomicBool::new(false),
                has_receives,
            }),
            head: Cell::new(0),
            pending: Cell::new(0),
            floor: Cell::new(0),
        }
    }

    /// The shared part, for the CQ's registry.
    pub(crate) fn shared(&self) -> &Arc<SendQueue> {
        &self.shared
    }

    /// Requests posted or in the open batch and not yet retired.
    #[inline]
    pub(crate) fn outstanding(&self) -> u64 {
        // Never negative: the poller retires only published requests, the floor only posted ones.
        let retired = self.shared.tail.load(Ordering::Acquire).max(self.floor.get());
        (self.head.get() + u64::from(self.pending.get())).wrapping_sub(retired)
    }

    /// Admits one request into the open batch.
    #[inline]
    pub(crate) fn admit(&self, wr_id: u64, signaled: bool) -> Result<(), Refusal> {
        if self.shared.halted.load(Ordering::Relaxed) {
            return Err(Refusal::Halted);
        }
        if self.outstanding() >= self.shared.capacity {
            return Err(Refusal::Full);
        }
        let pending = self.pending.get();
        let slot = self.shared.slot(self.head.get() + u64::from(pending));
        slot.wr_id.store(wr_id, Ordering::Relaxed);
        slot.signaled.store(signaled, Ordering::Relaxed);
        self.pending.set(pending + 1);
        Ok(())
    }

    /// The open batch was posted: its slots become visible to the poller.
    #[inline]
    pub(crate) fn commit(&self) {
        let head = self.head.get() + u64::from(self.pending.replace(0));
        self.head.set(head);
        self.shared.head.store(head, Ordering::Release);
    }

    /// The open batch was discarded.
    #[inline]
    pub(crate) fn abort(&self) {
        self.pending.set(0);
    }

    /// The QP went through RESET: its queue is empty again.
    pub(crate) fn reset(&self) {
        self.pending.set(0);
        self.floor.set(self.head.get());
        self.shared.floor.store(self.head.get(), Ordering::Release);
        self.shared.halted.store(false, Ordering::Relaxed);
    }

    /// A completion reported by hand (for a QP whose CQ the crate does not poll).
    #[inline]
    pub(crate) fn complete(&self, wr_id: u64, success: bool, receive: bool) {
        self.shared.complete(wr_id, success, receive);
    }

    /// The QP is being destroyed: no completion of its number is this queue's any more.
    pub(crate) fn close(&self) {
        self.shared.dead.store(true, Ordering::Release);
    }
}

/// The send queues of the QPs reporting to one CQ, by QP number (sorted).
///
/// It lives in the [`crate::Cq`] handle, which is not `Sync`: queues join (a QP created on the
/// CQ, through `&Cq`) and completions are routed (`Cq::poll`) on the thread that holds the CQ.
/// A QP dropped elsewhere only marks its queue dead (an atomic); the queue leaves the list the
/// next time a QP joins.
#[derive(Default)]
pub(crate) struct Registry {
    queues: RefCell<Vec<(u32, Arc<SendQueue>)>>,
}

impl Registry {
    /// Adds `qp_num`'s queue (at QP creation; allocates), dropping queues of destroyed QPs.
    pub(crate) fn add(&self, qp_num: u32, sq: Arc<SendQueue>) {
        let mut q = self.queues.borrow_mut();
        q.retain(|e| !e.1.dead.load(Ordering::Acquire));
        let at = q.partition_point(|e| e.0 < qp_num);
        q.insert(at, (qp_num, sq));
    }

    /// Runs `f` with a router for completions.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&Router<'_>) -> R) -> R {
        f(&Router(&self.queues.borrow()))
    }
}

/// The registry's queues, looked up by QP number while its lock is held.
pub(crate) struct Router<'a>(&'a [(u32, Arc<SendQueue>)]);

impl Router<'_> {
    /// Feeds one completion to its QP's queue, if the QP is registered and alive.
    #[inline]
    pub(crate) fn complete(&self, qp_num: u32, wr_id: u64, success: bool, receive: bool) {
        if let Ok(i) = self.0.binary_search_by_key(&qp_num, |e| e.0) {
            let sq = &self.0[i].1;
            if !sq.dead.load(Ordering::Relaxed) {
                sq.complete(wr_id, success, receive);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_refuses_until_a_signaled_completion_retires_everything_before_it() {
        let sq = Poster::new(4, false);
        for i in 0..3 {
            sq.admit(i, false).unwrap();
        }
        sq.admit(3, true).unwrap();
        assert_eq!(sq.admit(4, true), Err(Refusal::Full));
        sq.commit();
        assert_eq!(sq.admit(4, true), Err(Refusal::Full));
        sq.complete(3, true, false);
        assert_eq!(sq.outstanding(), 0);
        sq.admit(4, true).unwrap();
    }

    #[test]
    fn an_aborted_batch_gives_its_room_back() {
        let sq = Poster::new(2, false);
        sq.admit(1, true).unwrap();
        sq.admit(2, true).unwrap();
        sq.abort();
        assert_eq!(sq.outstanding(), 0);
    }

    #[test]
    fn failed_and_flushed_completions_retire_up_to_the_request_they_name() {
        let sq = Poster::new(8, false);
        for (i, signaled) in [(10, false), (11, false), (12, true), (13, false), (14, true)] {
            sq.admit(i, signaled).unwrap();
        }
        sq.commit();
        sq.complete(11, false, false); // 10 succeeded silently, 11 failed
        assert_eq!(sq.outstanding(), 3);
        sq.complete(12, false, false); // flushed
        sq.complete(13, false, false);
        sq.complete(14, false, false);
        assert_eq!(sq.outstanding(), 0);
    }

    #[test]
    fn receives_do_not_retire_sends_and_an_rc_failure_halts_until_reset() {
        let sq = Poster::new(4, true);
        sq.admit(1, true).unwrap();
        sq.commit();
        sq.complete(99, true, true);
        assert_eq!(sq.outstanding(), 1);
        sq.complete(7, false, false);
        assert_eq!(sq.admit(2, true), Err(Refusal::Halted));
        sq.reset();
        sq.admit(2, true).unwrap();
    }

    #[test]
    fn a_reset_empties_the_queue_even_when_a_stale_completion_is_reported_after_it() {
        let sq = Poster::new(4, false);
        for i in 0..4 {
            sq.admit(i, true).unwrap();
        }
        sq.commit();
        sq.reset();
        assert_eq!(sq.outstanding(), 0);
        // A poller that read request 0's completion before the reset reports it now.
        sq.complete(0, true, false);
        assert_eq!(sq.outstanding(), 0, "the stale completion does not count twice");
        for i in 10..14 {
            sq.admit(i, true).unwrap();
        }
        sq.commit();
        assert_eq!(sq.outstanding(), 4, "the queue is whole again after the reset");
        sq.complete(10, true, false);
        assert_eq!(
            sq.outstanding(),
            3,
            "a completion after the reset retires the new request"
        );
    }

    #[test]
    fn the_registry_routes_completions_by_qp_number() {
        let reg = Registry::default();
        let a = Poster::new(2, false);
        let b = Poster::new(2, false);
        reg.add(0x20, b.shared().clone());
        reg.add(0x10, a.shared().clone());
        a.admit(1, true).unwrap();
        a.commit();
        b.admit(1, true).unwrap();
        b.commit();
        reg.with(|r| r.complete(0x10, 1, true, false));
        assert_eq!((a.outstanding(), b.outstanding()), (0, 1));
        b.close();
        reg.with(|r| r.complete(0x20, 1, true, false));
        assert_eq!(b.outstanding(), 1, "a closed queue gets no completions");
        reg.add(0x20, Poster::new(2, false).shared().clone());
        assert_eq!(
            reg.queues.borrow().len(),
            2,
            "the dead queue left when the list changed"
        );
    }
}
