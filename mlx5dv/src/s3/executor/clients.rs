//! The clients an [`Executor`] remembers: the key naming a client's DCT, its endpoint and
//! standing (probation, proven, idle, gone), and the table's upkeep (kept idle clients,
//! demotion, release).

use super::paths::UNREACHABLE_FOR;
use super::*;

/// What names a client's DCT: the path to its port and its DCT number.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct ClientKey {
    pub(super) path: PathKey,
    pub(super) dct_number: u32,
}

/// What an address handle is made for: a LID (InfiniBand) or a GID (RoCE).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum PathKey {
    Lid(u16),
    Gid([u8; 16]),
}

pub(super) struct ClientEp {
    pub(super) ep: EndpointId,
    /// Transfers of this client not yet finished.
    pub(super) active: u32,
    /// A transfer of it ended in retry-exceeded (dead, or another key): its flushed transfers
    /// are not run again, and it is not kept once idle.
    pub(super) gone: bool,
    /// Its transfers waiting to run again: its new transfers wait behind them (else a client
    /// kept busy would never let a replay run alone).
    pub(super) replaying: u32,
    /// While it is idle and kept: the stamp of its entry in the executor's `idle` queue.
    pub(super) idle: Option<u64>,
    /// A message of it completed: its endpoint left probation.
    pub(super) proven: bool,
    /// When it last went idle, its last transfer finished (it had answered): kept idle
    /// longer than `proven_idle`, it goes back on probation.
    pub(super) idle_since: Instant,
}

impl Executor {
    /// The endpoint of `client` (a kept one, or a new one on probation), counted as busy
    /// with one more transfer, and whether the client is proven; None while its path's
    /// address handle is being made (RoCE). `admitted`: the transfer is already counted
    /// among the strangers' (it waited for its path). `tenant_full`: the transfer's tenant
    /// has `tenant_unproven` transfers of clients on probation running.
    pub(super) fn endpoint(
        &mut self,
        client: ClientKey,
        target: &DcTargetAddr,
        admitted: bool,
        tenant_full: Option<Tenant>,
    ) -> Result<Option<(EndpointId, bool)>> {
        let full = !admitted && (self.unproven >= self.max_unproven || tenant_full.is_some());
        if self
            .clients
            .get(&client)
            .is_some_and(|c| c.proven && c.idle.is_some() && c.idle_since.elapsed() > self.proven_idle)
        {
            if full {
                return Err(self.unproven_refused(tenant_full));
            }
            self.demote(client);
        }
        if let Some(c) = self.clients.get_mut(&client) {
            if !c.proven && full {
                return Err(self.unproven_refused(tenant_full));
            }
            if c.idle.take().is_some() {
                // Busy again: its entry in the idle queue is stale from now on.
                self.idle_clients -= 1;
            }
            c.active += 1;
            return Ok(Some((c.ep, c.proven)));
        }
        if full {
            return Err(self.unproven_refused(tenant_full));
        }
        let path = self.path.path_to(target, self.sgid_index);
        let ah = match (self.ahs.get(&client.path), &self.resolver) {
            (Some((ah, _)), _) => ah.clone(),
            (None, Some(resolver)) => {
                if let Some((at, e)) = self.unreachable.get(&client.path) {
                    if at.elapsed() < UNREACHABLE_FOR {
                        return Err(e.clone());
                    }
                }
                if let std::collections::hash_map::Entry::Vacant(v) = self.resolving.entry(client.path) {
                    resolver.ask(client.path, path);
                    v.insert(Vec::new());
                }
                return Ok(None);
            }
            (None, None) => self.pd.create_ah(self.port, &path)?,
        };
        let mut peer = DcPeer::new(&ah, target, self.key);
        let ep = loop {
            match self.pool.add_endpoint_on_probation(peer) {
                Ok(ep) => break ep,
                Err(r) if r.error().errno() == Some(libc::ENOSPC) => {
                    // Make room: the least recently used idle client goes.
                    let Some(old) = self.oldest_idle() else {
                        return Err(Error::from_errno(
                            OP_SUBMIT,
                            libc::EAGAIN,
                            "every endpoint of the pool serves a client with transfers running: poll, then submit again (or raise PoolConfig::max_endpoints)",
                        ));
                    };
                    self.release(old);
                    peer = r.into_inner();
                }
                Err(r) => return Err(r.into()),
            }
        };
        self.ahs.entry(client.path).or_insert((ah, 0)).1 += 1;
        self.clients.insert(
            client,
            ClientEp {
                ep,
                active: 1,
                gone: false,
                replaying: 0,
                idle: None,
                proven: false,
                idle_since: Instant::now(),
            },
        );
        Ok(Some((ep, false)))
    }

    /// The refusal of a client on probation while `unproven_transfers` such transfers run,
    /// or `tenant_unproven` of its tenant's.
    #[cold]
    pub(super) fn unproven_refused(&mut self, tenant_full: Option<Tenant>) -> Error {
        if let Some(tenant) = tenant_full {
            if self.unproven < self.max_unproven {
                let have = self
                    .tenants
                    .find(tenant)
                    .map_or(0, |p| self.tenants.table[p as usize].unproven);
                return self.tenant_refused(tenant, "tenant_unproven", have as usize);
            }
        }
        self.stats.unproven_refused += 1;
        Error::from_errno(
            OP_SUBMIT,
            libc::EBUSY,
            format!(
                "{} transfers of clients that have not answered yet are running (ExecutorConfig::unproven_transfers): \
                 refuse the request (HTTP 503 Slow Down), or submit it again later",
                self.unproven
            ),
        )
    }

    /// A message of `client` completed: it leaves probation.
    #[cold]
    pub(super) fn prove(&mut self, client: ClientKey) {
        if let Some(c) = self.clients.get_mut(&client).filter(|c| !c.proven) {
            c.proven = true;
            self.stats.proven += 1;
            // (Its endpoint is live: it has this transfer running.)
            let _ = self.pool.prove(c.ep);
        }
    }

    /// A kept idle client idle past `proven_idle` goes back on probation (its endpoint
    /// removed and added again on probation, its address handle kept): a proof is not banked.
    /// Where its endpoint cannot be added again it is released (the caller adds it anew).
    #[cold]
    pub(super) fn demote(&mut self, client: ClientKey) {
        let Some(c) = self.clients.get(&client) else {
            return;
        };
        let Ok(peer) = self.pool.remove_endpoint(c.ep) else {
            // Requests outstanding (cannot happen for an idle client): leave it as it is.
            return;
        };
        self.stats.demoted += 1;
        match self.pool.add_endpoint_on_probation(peer) {
            Ok(ep) => {
                if let Some(c) = self.clients.get_mut(&client) {
                    (c.ep, c.proven) = (ep, false);
                }
            }
            // (Cannot happen: its place was just freed.) Forgotten as `release` forgets.
            Err(_) => self.forget(client),
        }
    }

    /// Removes an idle client's endpoint, and its address handle if no other client uses it.
    pub(super) fn release(&mut self, client: ClientKey) {
        let Some(c) = self.clients.get(&client) else {
            return;
        };
        if self.pool.remove_endpoint(c.ep).is_err() {
            // Requests still outstanding (cannot happen for an idle client): keep it.
            return;
        }
        self.forget(client);
    }

    /// Drops `client` (its endpoint already gone) from the table, counted as released, and
    /// its address handle if no other client uses it.
    fn forget(&mut self, client: ClientKey) {
        if self.clients.remove(&client).is_some_and(|c| c.idle.is_some()) {
            self.idle_clients -= 1;
        }
        self.stats.released += 1;
        if let Some(entry) = self.ahs.get_mut(&client.path) {
            entry.1 -= 1;
            if entry.1 == 0 {
                self.ahs.remove(&client.path);
            }
        }
    }

    /// Keeps `client` (idle now) for its next transfer, as the most recently used.
    pub(super) fn keep_idle_client(&mut self, client: ClientKey) {
        let stamp = self.next_idle_stamp;
        self.next_idle_stamp += 1;
        if let Some(c) = self.clients.get_mut(&client) {
            c.idle = Some(stamp);
            c.idle_since = Instant::now();
            self.idle_clients += 1;
            self.idle.push_back((client, stamp));
        }
        if self.idle.len() >= 2 * self.keep_idle.max(1) {
            let clients = &self.clients;
            self.idle
                .retain(|(k, stamp)| clients.get(k).is_some_and(|c| c.idle == Some(*stamp)));
        }
    }

    /// Takes the least recently used idle client out of the queue (still with its endpoint).
    pub(super) fn oldest_idle(&mut self) -> Option<ClientKey> {
        while let Some((k, stamp)) = self.idle.pop_front() {
            if let Some(c) = self.clients.get_mut(&k).filter(|c| c.idle == Some(stamp)) {
                c.idle = None;
                self.idle_clients -= 1;
                return Some(k);
            }
        }
        None
    }
}
