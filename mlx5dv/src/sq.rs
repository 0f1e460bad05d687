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

use std::cell::{Cell, RefCell};
use std::rc::Rc;

#[derive(Clone, Copy, Default)]
struct Slot {
    wr_id: u64,
    signaled: bool,
}

/// Why a request was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `max_send_wr` requests are outstanding.
    Full,
    /// An RC QP reported a failed completion: it is in ERR until reset.
    Halted,
}

/// One QP's send queue as the crate counts it.
pub(crate) struct SendQueue {
    /// A power-of-two ring (indexing by mask, no division on the post path), at least
    /// `capacity` long.
    slots: Box<[Cell<Slot>]>,
    /// `max_send_wr`: how many requests may be outstanding.
    capacity: u64,
    /// Requests posted (committed batches).
    head: Cell<u64>,
    /// Requests in the open batch.
    pending: Cell<u32>,
    /// Requests retired by completions.
    tail: Cell<u64>,
    halted: Cell<bool>,
    /// Completions of this QP may be receives (RC): a failed one cannot be told apart.
    has_receives: bool,
}

impl SendQueue {
    /// Room for `max_send_wr` requests (at least one).
    pub(crate) fn new(max_send_wr: u32, has_receives: bool) -> SendQueue {
        let capacity = u64::from(max_send_wr.max(1));
        let n = (capacity as usize).next_power_of_two();
        SendQueue {
            slots: (0..n).map(|_| Cell::new(Slot::default())).collect(),
            capacity,
            head: Cell::new(0),
            pending: Cell::new(0),
            tail: Cell::new(0),
            halted: Cell::new(false),
            has_receives,
        }
    }

    /// The capacity (`max_send_wr`).
    pub(crate) fn capacity(&self) -> u32 {
        self.capacity as u32
    }

    /// Requests posted or in the open batch and not yet retired.
    #[inline]
    pub(crate) fn outstanding(&self) -> u64 {
        self.head.get() - self.tail.get() + u64::from(self.pending.get())
    }

    #[inline]
    fn slot(&self, seq: u64) -> &Cell<Slot> {
        &self.slots[seq as usize & (self.slots.len() - 1)]
    }

    /// Admits one request into the open batch.
    #[inline]
    pub(crate) fn admit(&self, wr_id: u64, signaled: bool) -> Result<(), Refusal> {
        if self.halted.get() {
            return Err(Refusal::Halted);
        }
        if self.outstanding() >= self.capacity {
            return Err(Refusal::Full);
        }
        let seq = self.head.get() + u64::from(self.pending.get());
        self.slot(seq).set(Slot { wr_id, signaled });
        self.pending.set(self.pending.get() + 1);
        Ok(())
    }

    /// The open batch was posted.
    #[inline]
    pub(crate) fn commit(&self) {
        self.head.set(self.head.get() + u64::from(self.pending.get()));
        self.pending.set(0);
    }

    /// The open batch was discarded.
    #[inline]
    pub(crate) fn abort(&self) {
        self.pending.set(0);
    }

    /// The QP went through RESET: its queue is empty again.
    pub(crate) fn reset(&self) {
        self.head.set(0);
        self.tail.set(0);
        self.pending.set(0);
        self.halted.set(false);
    }

    /// A completion of this QP: `success`, the `wr_id` it carries, and whether it is a
    /// receive (known only for successful completions).
    #[inline]
    pub(crate) fn complete(&self, wr_id: u64, success: bool, receive: bool) {
        if receive {
            return;
        }
        let (tail, head) = (self.tail.get(), self.head.get());
        if success {
            // Only signaled requests complete successfully: it is the oldest one outstanding.
            if let Some(seq) = (tail..head).find(|&s| self.slot(s).get().signaled) {
                self.tail.set(seq + 1);
            }
            return;
        }
        if self.has_receives {
            // An RC failure puts the QP in ERR, and a failed receive looks the same as a
            // failed send: no more requests until the QP is reset.
            self.halted.set(true);
        }
        // The failed request lies between the oldest outstanding one and the oldest signaled
        // one (earlier signaled requests reported success first): the first with this wr_id.
        for seq in tail..head {
            let slot = self.slot(seq).get();
            if slot.wr_id == wr_id {
                self.tail.set(seq + 1);
                return;
            }
            if slot.signaled {
                return;
            }
        }
    }
}

/// The send queues of the QPs reporting to one CQ, by QP number (sorted), shared between
/// the CQ (which feeds completions) and the QPs (which leave on drop).
#[derive(Default)]
pub(crate) struct Registry {
    queues: RefCell<Vec<(u32, Rc<SendQueue>)>>,
}

impl Registry {
    /// Adds `qp_num`'s queue (at QP creation; allocates).
    pub(crate) fn add(&self, qp_num: u32, sq: Rc<SendQueue>) {
        let mut q = self.queues.borrow_mut();
        let at = q.partition_point(|e| e.0 < qp_num);
        q.insert(at, (qp_num, sq));
    }

    /// Removes `qp_num`'s queue (at QP drop).
    pub(crate) fn remove(&self, qp_num: u32) {
        self.queues.borrow_mut().retain(|e| e.0 != qp_num);
    }

    /// Feeds one completion to its QP's queue, if the QP is registered.
    #[inline]
    pub(crate) fn complete(&self, qp_num: u32, wr_id: u64, success: bool, receive: bool) {
        if let Ok(q) = self.queues.try_borrow() {
            if let Ok(i) = q.binary_search_by_key(&qp_num, |e| e.0) {
                q[i].1.complete(wr_id, success, receive);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_refuses_until_a_signaled_completion_retires_everything_before_it() {
        let sq = SendQueue::new(4, false);
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
        let sq = SendQueue::new(2, false);
        sq.admit(1, true).unwrap();
        sq.admit(2, true).unwrap();
        sq.abort();
        assert_eq!(sq.outstanding(), 0);
    }

    #[test]
    fn failed_and_flushed_completions_retire_up_to_the_request_they_name() {
        let sq = SendQueue::new(8, false);
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
        let sq = SendQueue::new(4, true);
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
    fn the_registry_routes_completions_by_qp_number() {
        let reg = Registry::default();
        let a = Rc::new(SendQueue::new(2, false));
        let b = Rc::new(SendQueue::new(2, false));
        reg.add(0x20, b.clone());
        reg.add(0x10, a.clone());
        a.admit(1, true).unwrap();
        a.commit();
        b.admit(1, true).unwrap();
        b.commit();
        reg.complete(0x10, 1, true, false);
        assert_eq!((a.outstanding(), b.outstanding()), (0, 1));
        reg.remove(0x20);
        reg.complete(0x20, 1, true, false);
        assert_eq!(b.outstanding(), 1);
    }
}
