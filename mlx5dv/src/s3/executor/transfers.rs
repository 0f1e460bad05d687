//! The transfers an [`Executor`] runs: their slots, their messages posted and completed,
//! replays after a flush, and the [`Done`] each is reported with.

use super::tenants::{Step, NONE};
use super::*;

/// A finished transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Done {
    /// The id it was submitted with.
    pub id: u64,
    /// Bytes moved: the whole length on success; on failure those of its messages that
    /// completed before it failed.
    pub bytes: u64,
    /// Success, or the first failure among its messages: `RetryExcErr` (the client is gone,
    /// or its DCT expects another key), `RemAccessErr` (the token lies: rkey, range or right,
    /// or it was revoked), `WrFlushErr` (flushed by other transfers' failures at the same
    /// client more often than it is run again); `GeneralErr` when the provider refused to post
    /// one of its messages, or the executor was stopped ([`Executor::stop`]; `error` says why,
    /// and whether its local buffer may still be written or read by the device).
    pub status: WcStatus,
    /// The provider's refusal, where a message could not be posted.
    pub error: Option<Error>,
}

impl Done {
    /// Whether every byte moved.
    pub fn is_ok(&self) -> bool {
        self.status == WcStatus::Success
    }
}

impl Default for Done {
    /// A placeholder to fill arrays with before polling.
    fn default() -> Self {
        Done {
            id: 0,
            bytes: 0,
            status: WcStatus::Success,
            error: None,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum State {
    Free,
    /// Waiting for its path's address handle (RoCE, a new GID).
    Resolving,
    /// Messages to post or outstanding.
    Running,
    /// Finished, waiting to be reported.
    Finished,
}

pub(super) struct Transfer {
    pub(super) state: State,
    pub(super) id: u64,
    pub(super) client: ClientKey,
    pub(super) ep: EndpointId,
    pub(super) direction: Direction,
    /// The local buffer (inside a region the pool holds, or the one `lent` keeps).
    pub(super) local: raw::ibv_sge,
    /// The region of a transfer named with [`Executor::submit_region`]: kept registered
    /// until the transfer is reported.
    pub(super) lent: Option<Arc<dyn Held>>,
    /// The client's bytes (offset applied, the transfer's length).
    pub(super) remote: RemoteMemory,
    /// Bytes posted so far (the next message starts there).
    pub(super) next: u64,
    /// Messages posted and not completed.
    pub(super) posted: u32,
    /// A message was flushed (another transfer to the same client failed before it): the
    /// transfer runs again from its start once its messages are in (see `MAX_REPLAYS`).
    pub(super) flushed: bool,
    pub(super) replays: u8,
    /// Waiting to run again, counted in its client's `replaying` until its first message is
    /// posted or it ends.
    pub(super) replay_waiting: bool,
    /// Submitted while its client was on probation: counted in the executor's `unproven`
    /// (and its tenant's), and scheduled among the transfers on probation.
    pub(super) unproven: bool,
    /// Its tenant's place in the executor's `tenants`.
    pub(super) tenant: u32,
    /// In its tenant's flow (messages to post), between these two transfers.
    pub(super) queued: bool,
    pub(super) qprev: u32,
    pub(super) qnext: u32,
    pub(super) bytes: u64,
    pub(super) status: WcStatus,
    pub(super) error: Option<Error>,
}

impl Executor {
    /// Starts transfer `id` from `local` (checked: in a held region, or in `lent`'s, which
    /// the transfer takes when it starts, and leaves where it is when it does not).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::s3) fn start(
        &mut self,
        tenant: Tenant,
        id: u64,
        token: &RdmaToken,
        offset: u64,
        direction: Direction,
        local: raw::ibv_sge,
        lent: &mut Option<Arc<dyn Held>>,
    ) -> Result<()> {
        if let Some(why) = &self.stopped {
            return Err(stopped_refusal(why));
        }
        let len = u64::from(local.length);
        if len == 0 {
            return Err(Error::invalid(
                OP_SUBMIT,
                "an empty local buffer: a transfer moves at least one byte",
            ));
        }
        let remote = token.remote().slice(offset, len).map_err(|_| {
            Error::invalid(
                OP_SUBMIT,
                format!(
                    "{len} bytes at offset {offset} lie outside the token's {}-byte buffer: refuse the request",
                    token.len
                ),
            )
        })?;
        let target = token.target(self.mtu, self.sgid_index.is_some())?;
        let Some(&slot) = self.free.last() else {
            return Err(Error::from_errno(
                OP_SUBMIT,
                libc::EAGAIN,
                "max_transfers transfers are running: poll, then submit again",
            ));
        };
        let place = self.tenants.find(tenant);
        let (mine, mine_unproven) = place.map_or((0, 0), |p| {
            let t = &self.tenants.table[p as usize];
            (t.transfers as usize, t.unproven as usize)
        });
        let bounded = tenant != Tenant::DEFAULT;
        if bounded && mine >= self.tenant_transfers {
            return Err(self.tenant_refused(tenant, "tenant_transfers", mine));
        }
        let tenant_full = bounded && mine_unproven >= self.tenant_unproven;
        let client = ClientKey {
            path: match self.sgid_index {
                Some(_) => PathKey::Gid(target.gid),
                None => PathKey::Lid(target.lid),
            },
            dct_number: target.dct_number,
        };
        let Some((ep, proven)) = self.endpoint(client, &target, false, tenant_full.then_some(tenant))? else {
            // Its path's address handle is being made: the transfer waits for it.
            self.free.pop();
            let mut t = Transfer::running(id, client, EndpointId::default(), direction, local, remote);
            (t.state, t.unproven, t.lent) = (State::Resolving, true, lent.take());
            t.tenant = self.tenants.place(tenant);
            let ts = &mut self.tenants.table[t.tenant as usize];
            (ts.transfers, ts.unproven) = (ts.transfers + 1, ts.unproven + 1);
            self.unproven += 1;
            self.transfers[slot as usize] = t;
            self.stats.submitted += 1;
            if let Some(waiting) = self.resolving.get_mut(&client.path) {
                waiting.push((slot, target));
            }
            return Ok(());
        };
        self.free.pop();
        let place = self.tenants.place(tenant);
        let ts = &mut self.tenants.table[place as usize];
        (ts.transfers, ts.unproven) = (ts.transfers + 1, ts.unproven + u32::from(!proven));
        self.unproven += usize::from(!proven);
        // Written in place (the slot is free: reported, its region and error taken).
        let t = &mut self.transfers[slot as usize];
        t.begin(id, client, ep, direction, local, remote);
        (t.unproven, t.lent, t.tenant) = (!proven, lent.take(), place);
        let place = place as usize;
        self.stats.submitted += 1;
        let class = usize::from(!proven);
        if self.tenants.ring[class].is_empty() && self.post_direct(slot, place, class) {
            return Ok(());
        }
        self.enqueue(slot);
        self.pump();
        Ok(())
    }

    /// Posts transfer `slot` (of the tenant at `place`, in `class`) at once, nobody waiting
    /// for that class of DCI: true once nothing of it is left to post, false when the DCIs
    /// (or its tenant's `tenant_inflight`) take no more now (it then waits in its flow).
    #[inline]
    fn post_direct(&mut self, slot: u32, place: usize, class: usize) -> bool {
        let cap = if place == 0 {
            u32::MAX
        } else {
            self.tenant_inflight as u32
        };
        loop {
            if self.tenants.table[place].outstanding[class] >= cap {
                return false;
            }
            match self.post_next(slot) {
                Step::Posted { last, .. } => {
                    self.tenants.table[place].outstanding[class] += 1;
                    if last {
                        return true;
                    }
                }
                Step::Blocked | Step::NoFreeDci => return false,
                Step::Done => {
                    self.finish_if_done(slot);
                    return true;
                }
            }
        }
    }

    /// The refusal of a tenant's transfer past its `bound` (`have` of its transfers count).
    #[cold]
    pub(super) fn tenant_refused(&mut self, tenant: Tenant, bound: &str, have: usize) -> Error {
        self.stats.tenant_refused += 1;
        Error::from_errno(
            OP_SUBMIT,
            libc::EBUSY,
            format!(
                "tenant {:#x} has {have} transfers {} (ExecutorConfig::{bound}): refuse the request (HTTP 503 Slow \
                 Down); the other tenants' are not held up",
                tenant.get(),
                if bound == "tenant_transfers" {
                    "not yet finished"
                } else {
                    "of clients that have not answered yet running"
                },
            ),
        )
    }

    /// [`Executor::poll`] with something to move on.
    #[inline(never)]
    pub(super) fn poll_moving(&mut self, out: &mut [Done]) -> Result<usize> {
        if !self.resolving.is_empty() {
            self.resolved();
        }
        let n = self.pool.poll(&mut self.scratch)?;
        self.poll_read(n, out)
    }

    /// [`Executor::poll`] once the pool reported `n` completions (in `scratch`).
    #[inline(never)]
    pub(super) fn poll_read(&mut self, n: usize, out: &mut [Done]) -> Result<usize> {
        for i in 0..n {
            let c = self.scratch[i];
            self.completed(c);
        }
        if !self.tenants.ring[0].is_empty() || !self.tenants.ring[1].is_empty() {
            self.pump();
        }
        let mut k = 0;
        while k < out.len() {
            let Some(slot) = self.finished.pop_front() else {
                break;
            };
            let t = &mut self.transfers[slot as usize];
            out[k] = Done {
                id: t.id,
                bytes: t.bytes,
                status: t.status,
                error: t.error.take(),
            };
            t.state = State::Free;
            // Reported: no request names its region any more.
            t.lent = None;
            self.free.push(slot);
            k += 1;
        }
        Ok(k)
    }

    /// One message's completion.
    pub(super) fn completed(&mut self, c: EpCompletion) {
        let slot = (c.wr_id >> 32) as usize;
        let index = c.wr_id & 0xffff_ffff;
        let max = self.max_message;
        let Some(t) = self.transfers.get_mut(slot).filter(|t| t.state == State::Running) else {
            return;
        };
        t.posted -= 1;
        let mine = &mut self.tenants.table[t.tenant as usize].outstanding[usize::from(t.unproven)];
        *mine = mine.saturating_sub(1);
        if c.status == WcStatus::Success {
            t.bytes += max.min(t.remote.len - index * max);
            if t.unproven {
                let client = t.client;
                self.prove(client);
            }
        } else if c.status == WcStatus::WrFlushErr && t.replays < MAX_REPLAYS {
            t.flushed = true;
        } else if t.status == WcStatus::Success {
            t.status = c.status;
        }
        self.finish_if_done(slot as u32);
    }

    /// Posts transfer `slot`'s next message, if the DCIs take it.
    pub(super) fn post_next(&mut self, slot: u32) -> Step {
        let max = self.max_message;
        let t = &mut self.transfers[slot as usize];
        if t.next >= t.remote.len || t.status != WcStatus::Success || t.flushed {
            return Step::Done;
        }
        if t.next == 0 {
            if t.replay_waiting {
                if self.pool.outstanding(t.ep) > 0 {
                    // A transfer runs again only with nothing of its client ahead of it,
                    // so no other transfer's failure flushes it again.
                    return Step::Blocked;
                }
            } else if self.replaying > 0 && self.clients.get(&t.client).is_some_and(|c| c.replaying > 0) {
                // New transfers of a client wait behind its replays.
                return Step::Blocked;
            }
        }
        let len = max.min(t.remote.len - t.next);
        // SAFETY: a part of the transfer's local buffer, which lies in a region the pool
        // holds for its life (checked by submit) or in the one `lent` keeps until the
        // transfer is reported (checked by submit_region).
        let local = unsafe {
            Sge::from_raw(raw::ibv_sge {
                addr: t.local.addr + t.next,
                length: len as u32,
                lkey: t.local.lkey,
            })
        };
        let remote = RemoteMemory {
            addr: t.remote.addr + t.next,
            len,
            rkey: t.remote.rkey,
        };
        let req = match t.direction {
            Direction::Put => Request::Read { local, remote },
            Direction::Get => Request::Write { local, remote },
        };
        let wr_id = (u64::from(slot) << 32) | (t.next / max);
        let posted = if t.lent.is_some() {
            // SAFETY: `lent` keeps the region registered until the transfer is reported,
            // after every message of it is (submit_region checked its range and access).
            unsafe { self.pool.post_lent(t.ep, wr_id, req) }
        } else {
            self.pool.post(t.ep, wr_id, req)
        };
        match posted {
            Ok(()) => {
                let t = &mut self.transfers[slot as usize];
                t.posted += 1;
                t.next += len;
                let last = t.next >= t.remote.len;
                self.stats.messages += 1;
                self.replay_started(slot);
                Step::Posted { len, last }
            }
            // Refused for a client that holds no DCI: the pool found none of its class free
            // (the only refusal it gives such a client).
            Err(e) if e.is_would_block() && self.pool.assignment(self.transfers[slot as usize].ep).is_none() => {
                Step::NoFreeDci
            }
            Err(e) if e.is_would_block() => Step::Blocked,
            Err(e) => {
                let t = &mut self.transfers[slot as usize];
                t.status = WcStatus::GeneralErr;
                t.error = Some(e);
                Step::Done
            }
        }
    }

    /// Transfer `slot` no longer waits to run again (its first message is posted, or it
    /// ends): its client's new transfers may go.
    pub(super) fn replay_started(&mut self, slot: u32) {
        let t = &mut self.transfers[slot as usize];
        if std::mem::take(&mut t.replay_waiting) {
            if let Some(c) = self.clients.get_mut(&t.client) {
                c.replaying -= 1;
                self.replaying -= 1;
            }
        }
    }

    /// Finishes transfer `slot` once nothing of it is left to post or outstanding.
    pub(super) fn finish_if_done(&mut self, slot: u32) {
        let t = &mut self.transfers[slot as usize];
        let all_posted = t.next >= t.remote.len || t.status != WcStatus::Success || t.flushed;
        if t.state != State::Running || t.posted > 0 || !all_posted {
            return;
        }
        let gone = t.flushed && self.clients.get(&t.client).is_some_and(|c| c.gone);
        if t.flushed && t.status == WcStatus::Success {
            if gone {
                // Its client is dead (or expects another key): running it again would only
                // time out again, and flush the other clients on that DCI.
                t.status = WcStatus::WrFlushErr;
            } else {
                // Run it again from its start (the bytes counted so far are moved again).
                t.flushed = false;
                t.replays += 1;
                t.next = 0;
                t.bytes = 0;
                t.replay_waiting = true;
                self.stats.replays += 1;
                if let Some(c) = self.clients.get_mut(&t.client) {
                    c.replaying += 1;
                    self.replaying += 1;
                }
                self.enqueue(slot);
                return;
            }
        }
        self.replay_started(slot);
        // Still in its flow if it failed before all was posted: dropped from there.
        self.dequeue(slot);
        let t = &mut self.transfers[slot as usize];
        if t.unproven {
            self.unproven -= 1;
            if t.status != WcStatus::Success {
                self.stats.unproven_failed += 1;
            }
        }
        self.tenants.finished(t.tenant, t.unproven);
        if t.status != WcStatus::Success {
            self.stats.failed += 1;
        }
        t.state = State::Finished;
        self.stats.finished += 1;
        let (client, status) = (t.client, t.status);
        self.finished.push_back(slot);
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        c.active -= 1;
        c.gone |= status == WcStatus::RetryExcErr;
        if c.active > 0 {
            return;
        }
        c.idle_since = self.standing.now();
        if c.gone || !c.proven || self.keep_idle == 0 {
            self.release(client);
            return;
        }
        if self.idle.live() >= self.keep_idle {
            if let Some(old) = self.oldest_idle() {
                self.release(old);
            }
        }
        self.keep_idle_client(client);
    }
}

impl Transfer {
    /// The free slot starts a transfer: as [`Transfer::running`], written field by field.
    #[inline(always)]
    fn begin(
        &mut self,
        id: u64,
        client: ClientKey,
        ep: EndpointId,
        direction: Direction,
        local: raw::ibv_sge,
        remote: RemoteMemory,
    ) {
        self.state = State::Running;
        self.id = id;
        self.client = client;
        self.ep = ep;
        self.direction = direction;
        self.local = local;
        self.lent = None;
        self.remote = remote;
        self.next = 0;
        self.posted = 0;
        self.flushed = false;
        self.replays = 0;
        self.replay_waiting = false;
        self.unproven = false;
        self.tenant = 0;
        self.queued = false;
        self.qprev = NONE;
        self.qnext = NONE;
        self.bytes = 0;
        self.status = WcStatus::Success;
        self.error = None;
    }

    pub(super) fn running(
        id: u64,
        client: ClientKey,
        ep: EndpointId,
        direction: Direction,
        local: raw::ibv_sge,
        remote: RemoteMemory,
    ) -> Transfer {
        Transfer {
            state: State::Running,
            id,
            client,
            ep,
            direction,
            local,
            lent: None,
            remote,
            next: 0,
            posted: 0,
            flushed: false,
            replays: 0,
            replay_waiting: false,
            unproven: false,
            tenant: 0,
            queued: false,
            qprev: NONE,
            qnext: NONE,
            bytes: 0,
            status: WcStatus::Success,
            error: None,
        }
    }

    pub(super) fn free() -> Transfer {
        let nowhere = ClientKey {
            path: PathKey::Lid(0),
            dct_number: 0,
        };
        let local = raw::ibv_sge {
            addr: 0,
            length: 0,
            lkey: 0,
        };
        let remote = RemoteMemory {
            addr: 0,
            len: 0,
            rkey: 0,
        };
        Transfer {
            state: State::Free,
            ..Transfer::running(0, nowhere, EndpointId::default(), Direction::Get, local, remote)
        }
    }
}
