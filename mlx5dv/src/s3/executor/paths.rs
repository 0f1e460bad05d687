//! The paths an [`Executor`] resolves on RoCE: address handles made off the data path, and
//! failed paths remembered for a while.

use super::*;

/// How long a RoCE path whose address handle could not be made is refused at once, with the
/// error it failed with, before it is resolved again: a silent neighbour costs a resolution
/// (a second) once, not once per token naming it.
pub(super) const UNREACHABLE_FOR: Duration = Duration::from_secs(10);

impl Executor {
    /// Takes in the address handles made since the last call: the transfers waiting for
    /// each run, or fail with the reason it could not be made.
    #[cold]
    pub(super) fn resolved(&mut self) {
        while let Some((path, made)) = self.resolver.as_ref().and_then(Resolver::answer) {
            let Some(waiting) = self.resolving.remove(&path) else {
                continue;
            };
            let made = match made {
                Ok(ah) => {
                    self.ahs.entry(path).or_insert(PathAh {
                        ah,
                        users: 0,
                        unused: None,
                    });
                    self.unreachable.remove(&path);
                    Ok(())
                }
                Err(e) => {
                    let e = Error::from_errno(
                        OP_SUBMIT,
                        e.errno().unwrap_or(libc::EHOSTUNREACH),
                        format!(
                            "the client's address could not be resolved (ETIMEDOUT: its neighbour never answered): it \
                             is unreachable from this port; refuse its request ({e})"
                        ),
                    );
                    self.remember_unreachable(path, &e);
                    Err(e)
                }
            };
            for (slot, target) in waiting {
                let client = self.transfers[slot as usize].client;
                let ep = match &made {
                    Ok(()) => self.endpoint(client, &target, true, None),
                    Err(e) => {
                        self.stats.unresolved += 1;
                        Err(e.clone())
                    }
                };
                let ep = ep.and_then(|ep| {
                    ep.ok_or_else(|| {
                        Error::from_errno(
                            OP_SUBMIT,
                            libc::EPROTO,
                            "the path's address handle was made and then lost",
                        )
                    })
                });
                let t = &mut self.transfers[slot as usize];
                t.state = State::Running;
                match ep {
                    Ok((ep, proven)) => {
                        t.ep = ep;
                        if proven {
                            // Counted among the strangers' while it waited; its client's
                            // standing (or a transfer of it before) proved it meanwhile.
                            t.unproven = false;
                            self.unproven -= 1;
                            let ts = &mut self.tenants.table[t.tenant as usize];
                            ts.unproven -= 1;
                        }
                        self.enqueue(slot);
                    }
                    Err(e) => {
                        t.status = WcStatus::GeneralErr;
                        t.error = Some(e);
                        self.finish_if_done(slot);
                    }
                }
            }
            // No client took it (every endpoint refused): kept unused, as when a host's last
            // client leaves it.
            self.park_ah(path);
        }
    }

    /// Remembers that `path`'s handle could not be made (for [`UNREACHABLE_FOR`]), in a table
    /// of at most `unproven_transfers` paths: the expired ones go first, else the oldest.
    #[cold]
    pub(super) fn remember_unreachable(&mut self, path: PathKey, e: &Error) {
        let cap = self.max_unproven.max(1);
        if self.unreachable.len() >= cap && !self.unreachable.contains_key(&path) {
            self.unreachable.retain(|_, (at, _)| at.elapsed() < UNREACHABLE_FOR);
            if self.unreachable.len() >= cap {
                let oldest = self.unreachable.iter().min_by_key(|(_, (at, _))| *at).map(|(k, _)| *k);
                if let Some(k) = oldest {
                    self.unreachable.remove(&k);
                }
            }
        }
        self.unreachable.insert(path, (Instant::now(), e.clone()));
    }
}
