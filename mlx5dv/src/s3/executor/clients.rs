//! The clients an [`Executor`] reaches: the key naming a client's DCT, its endpoint and
//! standing (probation, proven, idle, gone), and the caches' upkeep (kept idle clients and
//! unused address handles, demotion, release; the standing of released clients goes to
//! [`Standing`]).

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

/// An address handle, the clients using it, and (unused and kept) its stamp in the
/// executor's `unused_ahs`.
pub(super) struct PathAh {
    pub(super) ah: Ah,
    pub(super) users: u32,
    pub(super) unused: Option<u64>,
}

impl PathAh {
    /// Its stamp in `unused_ahs` ([`Lru`]).
    fn unused(&mut self) -> &mut Option<u64> {
        &mut self.unused
    }
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
    /// When it last went idle, its last transfer finished (it had answered), or (never idle
    /// yet) when it was added, on the standing table's clock ([`Standing::now`]): kept idle
    /// longer than `proven_idle`, it goes back on probation; released, its standing says it
    /// answered then.
    pub(super) idle_since: u64,
}

impl ClientEp {
    /// Its stamp in the executor's `idle` queue ([`Lru`]).
    fn idle(&mut self) -> &mut Option<u64> {
        &mut self.idle
    }
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
        let stale = match self.clients.get(&client) {
            Some(c) if c.proven && c.idle.is_some() => {
                let now = self.standing.now();
                !self.standing.fresh(c.idle_since, now)
            }
            _ => false,
        };
        if stale {
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
                self.idle.unlink();
            }
            c.active += 1;
            return Ok(Some((c.ep, c.proven)));
        }
        // Released before, its standing remembered: proven if it answered within proven_idle
        // and its last transfer did not time out.
        let now = self.standing.now();
        if full && !self.standing.proven(&client, now) {
            return Err(self.unproven_refused(tenant_full));
        }
        let path = self.path.path_to(target, self.sgid_index);
        // The path's handle, counted as used by one more client from here on.
        let ah = match (self.ahs.get_mut(&client.path), &self.resolver) {
            (Some(p), _) => {
                p.users += 1;
                if p.unused.take().is_some() {
                    self.unused_ahs.unlink();
                }
                p.ah.clone()
            }
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
            (None, None) => {
                let ah = self.pd.create_ah(self.port, &path)?;
                let p = PathAh {
                    ah: ah.clone(),
                    users: 1,
                    unused: None,
                };
                self.ahs.insert(client.path, p);
                ah
            }
        };
        let answered = self.standing.take(&client, now);
        let proven = answered.is_some();
        let mut peer = DcPeer::new(&ah, target, self.key);
        let added = loop {
            let added = if proven {
                self.pool.add_endpoint(peer)
            } else {
                self.pool.add_endpoint_on_probation(peer)
            };
            match added {
                Ok(ep) => break Ok(ep),
                Err(r) if r.error().errno() == Some(libc::ENOSPC) => {
                    // Make room: the least recently used idle client goes.
                    let Some(old) = self.oldest_idle() else {
                        break Err(Error::from_errno(
                            OP_SUBMIT,
                            libc::EAGAIN,
                            "every endpoint of the pool serves a client with transfers running: poll, then submit again (or raise PoolConfig::max_endpoints)",
                        ));
                    };
                    self.release(old);
                    peer = r.into_inner();
                }
                Err(r) => break Err(r.into()),
            }
        };
        let ep = match added {
            Ok(ep) => ep,
            Err(e) => {
                // Not added: the handle's use and the standing taken go back.
                self.drop_ah_user(client.path);
                if let Some(at) = answered {
                    self.standing.remember(client, at);
                }
                return Err(e);
            }
        };
        if proven {
            self.stats.recalled += 1;
        }
        self.clients.insert(
            client,
            ClientEp {
                ep,
                active: 1,
                gone: false,
                replaying: 0,
                idle: None,
                proven,
                idle_since: now,
            },
        );
        Ok(Some((ep, proven)))
    }

    /// A client let go of `path`'s address handle ([`Executor::park_ah`]).
    pub(super) fn drop_ah_user(&mut self, path: PathKey) {
        if let Some(p) = self.ahs.get_mut(&path) {
            p.users = p.users.saturating_sub(1);
            if p.users == 0 {
                self.park_ah(path);
            }
        }
    }

    /// `path`'s address handle, if no client uses it, is kept for the path's next client
    /// (the least recently used unused one going past `kept_address_handles`).
    pub(super) fn park_ah(&mut self, path: PathKey) {
        if !self.ahs.get(&path).is_some_and(|p| p.users == 0 && p.unused.is_none()) {
            return;
        }
        if self.unused_ahs.bound() == 0 {
            self.ahs.remove(&path);
            return;
        }
        self.unused_ahs.push(&mut self.ahs, path, PathAh::unused);
        if self.unused_ahs.live() > self.unused_ahs.bound() {
            if let Some(old) = self.oldest_unused_ah() {
                self.ahs.remove(&old);
            }
        }
    }

    /// Takes the least recently used unused address handle's path out of the queue (its
    /// handle still in `ahs`).
    pub(super) fn oldest_unused_ah(&mut self) -> Option<PathKey> {
        self.unused_ahs.pop(&mut self.ahs, PathAh::unused)
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
    /// lets go of its address handle. Its standing is remembered if it is proven and its
    /// last transfer did not time out: it answered when its last transfer finished.
    fn forget(&mut self, client: ClientKey) {
        if let Some(c) = self.clients.remove(&client) {
            if c.idle.is_some() {
                self.idle.unlink();
            }
            if c.proven && !c.gone {
                self.standing.remember(client, c.idle_since);
            }
        }
        self.stats.released += 1;
        self.drop_ah_user(client.path);
    }

    /// Keeps `client` (idle now) for its next transfer, as the most recently used.
    pub(super) fn keep_idle_client(&mut self, client: ClientKey) {
        self.idle.push(&mut self.clients, client, ClientEp::idle);
    }

    /// Takes the least recently used idle client out of the queue (still with its endpoint).
    pub(super) fn oldest_idle(&mut self) -> Option<ClientKey> {
        self.idle.pop(&mut self.clients, ClientEp::idle)
    }
}
