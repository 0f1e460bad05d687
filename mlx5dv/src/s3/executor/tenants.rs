//! The tenants an [`Executor`] schedules: who submitted each transfer ([`Tenant`]), their
//! bounds, and the deficit round robin that shares every class of DCI (probation and
//! proven) between them.
//!
//! Each tenant has two *flows*, one per class of DCI: the transfers of its clients on
//! probation, and those of its proven clients. A flow with transfers waiting to post is in
//! the ring; [`Executor::pump`] visits the ring's flows in turn, gives each visited flow a
//! quantum ([`ExecutorConfig::tenant_quantum`] bytes) and lets it post messages while its
//! deficit is positive, each message costing its length (at least a quantum). So when a DCI
//! of a class gives room, the next flow of that class in the ring takes it: a transfer waits
//! behind one message of each other tenant's, never behind the whole queue of one tenant.
//! Only flows with something to post are in the ring: nothing scans the tenants or the
//! clients.

use super::*;

/// Who a transfer is for: an opaque key the server chooses, such as the request's SigV4
/// access key or the peer's address ([`Tenant::of`]), or a number of its own
/// ([`Tenant::new`]).
///
/// Transfers of different tenants share the executor's DCIs fairly (deficit round robin per
/// class of DCI, see the [`Executor`] documentation), and each tenant other than
/// [`Tenant::DEFAULT`] is bounded by [`ExecutorConfig::tenant_transfers`] and
/// [`ExecutorConfig::tenant_unproven`]. The submissions that name none
/// ([`Executor::submit`] and the like) are the default tenant's.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tenant(u64);

impl Tenant {
    /// The tenant of submissions that name none: bounded only by the executor's own tables
    /// (`max_transfers`, `unproven_transfers`), scheduled beside the others as one tenant.
    pub const DEFAULT: Tenant = Tenant(0);

    /// The tenant numbered `n` by the server (0 is [`Tenant::DEFAULT`]).
    pub const fn new(n: u64) -> Tenant {
        Tenant(n)
    }

    /// The tenant named by `key` (an access key, an address's bytes): a 64-bit hash of it
    /// (FNV-1a, then mixed), never [`Tenant::DEFAULT`]. Two keys may share a tenant (one in
    /// 2^64): they then share its bounds and its turn.
    pub fn of(key: &[u8]) -> Tenant {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in key {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        Tenant(h.max(1))
    }

    /// Its number.
    pub const fn get(self) -> u64 {
        self.0
    }
}

/// No transfer (the end of a flow's list).
pub(super) const NONE: u32 = u32::MAX;

/// One class's transfers of a tenant waiting to post, as a list through the transfers.
#[derive(Copy, Clone, Debug)]
pub(super) struct Flow {
    pub(super) head: u32,
    pub(super) tail: u32,
    /// Bytes it may still post in its turn (negative: owed from a message longer than its
    /// quantum).
    pub(super) deficit: i64,
    /// In the ring (perhaps empty: dropped from it when visited).
    pub(super) in_ring: bool,
}

impl Flow {
    const EMPTY: Flow = Flow {
        head: NONE,
        tail: NONE,
        deficit: 0,
        in_ring: false,
    };
}

/// A tenant with transfers not yet finished.
pub(super) struct TenantState {
    pub(super) key: Tenant,
    /// Its transfers submitted and not yet finished.
    pub(super) transfers: u32,
    /// Of them, of clients on probation.
    pub(super) unproven: u32,
    /// Its messages posted and not yet completed, by class.
    pub(super) outstanding: [u32; 2],
    /// `[proven, on probation]`.
    pub(super) flows: [Flow; 2],
}

/// The tenants with transfers not yet finished (at most `max_transfers`, and the default
/// one, always at place 0) and the ring of flows with transfers to post.
pub(super) struct Tenants {
    index: HashMap<Tenant, u32, KeyedHash>,
    pub(super) table: Vec<TenantState>,
    free: Vec<u32>,
    /// By class (`[proven, on probation]`): the flows (`place * 2 + class`) with transfers
    /// to post, in turn order. A class's DCIs are shared by its ring's flows alone.
    pub(super) ring: [VecDeque<u32>; 2],
}

impl Tenants {
    pub(super) fn new(max_transfers: usize) -> Tenants {
        let mut table = Vec::with_capacity(max_transfers + 1);
        table.push(TenantState {
            key: Tenant::DEFAULT,
            transfers: 0,
            unproven: 0,
            outstanding: [0; 2],
            flows: [Flow::EMPTY; 2],
        });
        Tenants {
            index: HashMap::with_capacity_and_hasher(max_transfers, KeyedHash::random()),
            table,
            free: Vec::with_capacity(max_transfers),
            ring: [(); 2].map(|_| VecDeque::with_capacity(max_transfers + 1)),
        }
    }

    /// The place of `tenant`, if it has transfers not yet finished (the default one always).
    #[inline]
    pub(super) fn find(&self, tenant: Tenant) -> Option<u32> {
        if tenant == Tenant::DEFAULT {
            return Some(0);
        }
        self.index.get(&tenant).copied()
    }

    /// The place of `tenant`, made for it if it had none.
    #[inline]
    pub(super) fn place(&mut self, tenant: Tenant) -> u32 {
        if let Some(p) = self.find(tenant) {
            return p;
        }
        self.add(tenant)
    }

    #[cold]
    fn add(&mut self, tenant: Tenant) -> u32 {
        let fresh = |flows: [Flow; 2]| TenantState {
            key: tenant,
            transfers: 0,
            unproven: 0,
            outstanding: [0; 2],
            // A place's flows may still be in the ring, empty (dropped when visited): they
            // stay there, not put in twice.
            flows: flows.map(|f| Flow {
                in_ring: f.in_ring,
                ..Flow::EMPTY
            }),
        };
        let p = match self.free.pop() {
            Some(p) => {
                let flows = self.table[p as usize].flows;
                self.table[p as usize] = fresh(flows);
                p
            }
            None => {
                self.table.push(fresh([Flow::EMPTY; 2]));
                (self.table.len() - 1) as u32
            }
        };
        self.index.insert(tenant, p);
        p
    }

    /// A transfer of place `p` finished: the tenant is forgotten with its last one (not the
    /// default one).
    #[inline]
    pub(super) fn finished(&mut self, p: u32, unproven: bool) {
        let t = &mut self.table[p as usize];
        t.transfers -= 1;
        t.unproven -= u32::from(unproven);
        if t.transfers == 0 && p != 0 {
            let key = t.key;
            self.index.remove(&key);
            self.free.push(p);
        }
    }

    /// Tenants with transfers not yet finished (the default one counted when it has some).
    pub(super) fn active(&self) -> usize {
        self.index.len() + usize::from(self.table[0].transfers > 0)
    }
}

/// What posting a transfer's next message did.
pub(super) enum Step {
    /// A message of this many bytes was posted; `last`: none of the transfer is left to post.
    Posted { len: u64, last: bool },
    /// The DCIs took nothing now (its DCI's queue is full or recovering, or it waits behind
    /// its client's replays).
    Blocked,
    /// Its client holds no DCI and none of its class is free: until a completion frees one,
    /// no transfer of a client without a DCI in that class can go (the pool refuses each the
    /// same way), so the pump tries none of them again.
    NoFreeDci,
    /// Nothing of it is left to post (all posted, or it failed).
    Done,
}

impl Executor {
    /// Puts transfer `slot` at the end of its tenant's flow (a no-op if it is in one).
    #[inline]
    pub(super) fn enqueue(&mut self, slot: u32) {
        let t = &mut self.transfers[slot as usize];
        if t.queued {
            return;
        }
        t.queued = true;
        t.qnext = NONE;
        let class = usize::from(t.unproven);
        let f = t.tenant * 2 + class as u32;
        let flow = &mut self.tenants.table[t.tenant as usize].flows[class];
        t.qprev = flow.tail;
        let tail = std::mem::replace(&mut flow.tail, slot);
        if tail == NONE {
            flow.head = slot;
        } else {
            self.transfers[tail as usize].qnext = slot;
        }
        if !flow.in_ring {
            flow.in_ring = true;
            flow.deficit = 0;
            self.tenants.ring[class].push_back(f);
        }
    }

    /// Takes transfer `slot` out of its flow (a no-op if it is in none).
    #[inline]
    pub(super) fn dequeue(&mut self, slot: u32) {
        if !self.transfers[slot as usize].queued {
            return;
        }
        self.unlink(slot);
    }

    fn unlink(&mut self, slot: u32) {
        let t = &mut self.transfers[slot as usize];
        t.queued = false;
        let (prev, next) = (t.qprev, t.qnext);
        let flow = &mut self.tenants.table[t.tenant as usize].flows[usize::from(t.unproven)];
        if prev == NONE {
            flow.head = next;
        } else {
            self.transfers[prev as usize].qnext = next;
        }
        if next == NONE {
            flow.tail = prev;
        } else {
            self.transfers[next as usize].qprev = prev;
        }
    }

    /// Posts what the DCIs take of the transfers waiting: in each class of DCI, the ring's
    /// flows in turn (deficit round robin), each posting while its deficit lasts, until a
    /// whole turn of the ring posts nothing.
    pub(super) fn pump(&mut self) {
        for class in [1, 0] {
            if !self.tenants.ring[class].is_empty() {
                self.pump_class(class);
            }
        }
    }

    fn pump_class(&mut self, class: usize) {
        let q = self.quantum;
        let (dcis, inflight) = (self.class_dcis[class], self.tenant_inflight);
        // Visits in a row that posted nothing though the flow had credit.
        let mut blocked = 0usize;
        // Flows put back at the end of the ring since a flow last posted: they did not have
        // their turn (blocked, or owing), so they are put back where they were when the pump
        // stops, and the first of them takes the next DCI that frees (a flow that posted goes
        // behind them).
        let mut unserved = 0usize;
        // The pool said no DCI of the class is free: the transfers of clients without one are
        // passed over for the rest of this pump without a post (nothing frees a DCI during
        // it), so a pump costs a post attempt per transfer that may go, not per transfer
        // waiting.
        // By the endpoints' probation flag (which DCIs they may take).
        let mut no_free_dci = [false; 2];
        while let Some(f) = self.tenants.ring[class].pop_front() {
            let p = (f / 2) as usize;
            let flow = &mut self.tenants.table[p].flows[class];
            if flow.head == NONE {
                (flow.in_ring, flow.deficit) = (false, 0);
                continue;
            }
            // Alone in its class: nobody to be fair to, nothing owed, and it posts all the
            // DCIs take in this one visit (one pass over its queue, as without tenants).
            let alone = self.tenants.ring[class].is_empty();
            flow.deficit = if alone { i64::MAX / 2 } else { flow.deficit + q };
            // A tenant has at most `tenant_inflight` messages outstanding in a class (the
            // default tenant only while others wait, and then at most the class's DCIs): the
            // rest wait their turn here, not in a DCI's send queue (under Rand and Streams a
            // DCI takes whatever is posted on it, and runs it in order).
            let cap = if p == 0 {
                if alone {
                    usize::MAX
                } else {
                    dcis
                }
            } else {
                inflight
            };
            let capped = self.tenants.table[p].outstanding[class] as usize >= cap;
            if capped {
                let ring = &mut self.tenants.ring[class];
                ring.push_back(f);
                if passed_over(ring, &mut blocked, &mut unserved) {
                    break;
                }
                continue;
            }
            let flow = &mut self.tenants.table[p].flows[class];
            if flow.deficit <= 0 {
                // Still owing for a long message: its turn passes.
                self.tenants.ring[class].push_back(f);
                unserved += 1;
                continue;
            }
            let mut deficit = flow.deficit;
            let mut cur = flow.head;
            let mut posted = false;
            while cur != NONE && deficit > 0 {
                let ep = self.transfers[cur as usize].ep;
                // (Looked up only once the pool said so: the common pump pays nothing.)
                if no_free_dci.contains(&true)
                    && self.pool.assignment(ep).is_none()
                    && self.pool.on_probation(ep).is_some_and(|p| no_free_dci[usize::from(p)])
                {
                    cur = self.transfers[cur as usize].qnext;
                    continue;
                }
                match self.post_next(cur) {
                    Step::Posted { len, last } => {
                        deficit -= (len as i64).max(q);
                        posted = true;
                        let mine = &mut self.tenants.table[p].outstanding[class];
                        *mine += 1;
                        let full = *mine as usize >= cap;
                        if last {
                            let next = self.transfers[cur as usize].qnext;
                            self.dequeue(cur);
                            self.finish_if_done(cur);
                            cur = next;
                        }
                        if full {
                            break;
                        }
                    }
                    // The next transfer of the flow may go where this one cannot (its
                    // client holds a DCI, or is bound to another).
                    Step::Blocked => cur = self.transfers[cur as usize].qnext,
                    Step::NoFreeDci => {
                        if let Some(p) = self.pool.on_probation(ep) {
                            no_free_dci[usize::from(p)] = true;
                        }
                        cur = self.transfers[cur as usize].qnext;
                    }
                    Step::Done => {
                        let next = self.transfers[cur as usize].qnext;
                        self.dequeue(cur);
                        self.finish_if_done(cur);
                        cur = next;
                    }
                }
            }
            let flow = &mut self.tenants.table[p].flows[class];
            if flow.head == NONE {
                // Nothing left to post: out of the ring until its next transfer.
                (flow.in_ring, flow.deficit) = (false, 0);
                if posted {
                    (blocked, unserved) = (0, 0);
                }
                continue;
            }
            // Credit not used (blocked) is not banked.
            flow.deficit = deficit.min(q);
            let ring = &mut self.tenants.ring[class];
            ring.push_back(f);
            if posted {
                (blocked, unserved) = (0, 0);
                continue;
            }
            if passed_over(ring, &mut blocked, &mut unserved) {
                break;
            }
        }
    }
}

/// Counts a flow just put back at the end of `ring` without posting (blocked, or not its
/// turn); true when every flow of the ring has been visited in a row without posting: the
/// ring is then turned back so that the flows that did not have their turn are where they
/// were, the first of them at its head, and the pump stops.
fn passed_over(ring: &mut VecDeque<u32>, blocked: &mut usize, unserved: &mut usize) -> bool {
    *blocked += 1;
    *unserved += 1;
    if *blocked < ring.len() {
        return false;
    }
    let back = *unserved % ring.len();
    ring.rotate_right(back);
    true
}

#[cfg(test)]
mod tests {
    use super::Tenant;

    #[test]
    fn a_key_names_the_same_tenant_each_time_and_never_the_default_one() {
        assert_eq!(Tenant::of(b"AKIAIOSFODNN7EXAMPLE"), Tenant::of(b"AKIAIOSFODNN7EXAMPLE"));
        assert_ne!(Tenant::of(b"10.0.0.1"), Tenant::of(b"10.0.0.2"));
        for key in [&b""[..], b"\0", b"0", b"10.0.0.1"] {
            assert_ne!(Tenant::of(key), Tenant::DEFAULT, "{key:?}");
        }
        assert_eq!(Tenant::new(0), Tenant::DEFAULT);
        assert_eq!(Tenant::new(7).get(), 7);
    }
}
