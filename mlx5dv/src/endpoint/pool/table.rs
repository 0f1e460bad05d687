//! The endpoint table: endpoints added (proven, or on probation) and removed, ids checked.

use super::{DciPool, Ep};
use crate::endpoint::{DcPeer, EndpointId, Policy};
use crate::error::{Error, Result};
use crate::mr::Returned;

impl DciPool {
    /// Adds an endpoint for `peer` (without a stream: the pool picks it under `Streams`).
    ///
    /// # Errors
    /// The peer comes back with the error ([`Returned`]; `?` turns it into the [`Error`]):
    /// ENOSPC when the table (`max_endpoints`) is full; EINVAL when the peer's DCT places data
    /// out of order and the pool's DCIs do not, or the other way round (both ends of a DC
    /// connection must agree on `MLX5DV_QP_CREATE_OOO_DP`: see [`PoolConfig::out_of_order`](super::PoolConfig::out_of_order)).
    pub fn add_endpoint(&mut self, peer: DcPeer) -> std::result::Result<EndpointId, Returned<DcPeer>> {
        self.add(peer, false)
    }

    /// Adds an endpoint for `peer` on probation: it posts on the pool's probation DCIs only
    /// ([`PoolConfig::probation`](super::PoolConfig::probation)) until [`DciPool::prove`] moves it to the others. For a
    /// peer not known to answer (its address came from untrusted input): if it never
    /// answers, its requests wait out their ACK timeouts on a probation DCI, not on one that
    /// proven endpoints need.
    ///
    /// # Errors
    /// As [`DciPool::add_endpoint`]; EINVAL for a pool without probation DCIs.
    pub fn add_endpoint_on_probation(&mut self, peer: DcPeer) -> std::result::Result<EndpointId, Returned<DcPeer>> {
        if usize::from(self.main) == self.slots.len() {
            return Err(Returned::new(
                Error::invalid(
                    "DciPool::add_endpoint_on_probation",
                    "the pool has no probation DCIs: create it with PoolConfig::probation",
                ),
                peer,
            ));
        }
        self.add(peer, true)
    }

    /// Ends endpoint `ep`'s probation (its peer has answered): its next requests go to the
    /// pool's other DCIs, once those it has outstanding on a probation DCI are in (so its
    /// requests stay in order). A no-op for an endpoint not on probation.
    ///
    /// # Errors
    /// EINVAL when `ep` names no endpoint of this pool.
    pub fn prove(&mut self, ep: EndpointId) -> Result<()> {
        let Some(i) = self.live(ep) else {
            return Err(Error::invalid(
                "DciPool::prove",
                "no such endpoint in this pool (never added, or removed)",
            ));
        };
        let e = &mut self.eps[i];
        if e.probation {
            e.probation = false;
            // Dcs, DcsQuota: it takes one of the other DCIs once it has given its own back;
            // Rand, Streams: its fixed one among them, once its last request on a probation
            // DCI is in.
            e.rebind = matches!(self.policy, Policy::Rand { .. } | Policy::Streams { .. });
            if e.outstanding == 0 {
                self.rebind(i);
            }
        }
        Ok(())
    }

    pub(super) fn add(&mut self, peer: DcPeer, probation: bool) -> std::result::Result<EndpointId, Returned<DcPeer>> {
        const OP: &str = "DciPool::add_endpoint";
        if self.free.is_empty() && self.eps.len() == self.eps.capacity() {
            return Err(Returned::new(
                Error::from_errno(
                    OP,
                    libc::ENOSPC,
                    "the pool's endpoint table is full: remove endpoints whose peers are gone \
                     (DciPool::remove_endpoint), or create the pool with a larger max_endpoints",
                ),
                peer,
            ));
        }
        if peer.out_of_order() != self.out_of_order {
            let (dct, pool) = if self.out_of_order {
                ("in order", "out of order")
            } else {
                ("out of order", "in order")
            };
            return Err(Returned::new(
                Error::invalid(
                    OP,
                    format!(
                        "DCT {:#x} places data {dct} but the pool's DCIs place it {pool}: both ends must agree \
                         (MLX5DV_QP_CREATE_OOO_DP); reach it from a pool whose PoolConfig::out_of_order matches its \
                         DcTargetAddr::out_of_order",
                        peer.dct_number()
                    ),
                ),
                peer,
            ));
        }
        let i = self.free.last().map_or(self.eps.len(), |&f| f as usize);
        let (dci, stream) = self.bind(i, probation);
        let ep = Ep {
            peer: Some(peer),
            generation: self.eps.get(i).map_or(0, |e| e.generation),
            dci,
            stream,
            outstanding: 0,
            since_acquire: 0,
            probation,
            rebind: false,
            failed: None,
        };
        let id = EndpointId(i as u32, ep.generation);
        if self.free.pop().is_some() {
            self.eps[i] = ep;
        } else {
            self.eps.push(ep);
        }
        Ok(id)
    }

    /// Removes endpoint `ep` (a client that is gone): its place in the table goes to the next
    /// endpoint added, and its peer (with its address handle) comes back to be dropped. Its
    /// id names nothing from now on, even once the place is reused.
    ///
    /// # Errors
    /// EINVAL when `ep` names no endpoint of this pool (never added, or removed already);
    /// EBUSY while it has requests outstanding ([`DciPool::outstanding`]): poll until they are
    /// reported (a dead peer's fail, and are reported, like any other), then remove it.
    pub fn remove_endpoint(&mut self, ep: EndpointId) -> Result<DcPeer> {
        const OP: &str = "DciPool::remove_endpoint";
        let Some(i) = self.live(ep) else {
            return Err(Error::invalid(
                OP,
                "no such endpoint in this pool (never added, or removed)",
            ));
        };
        let e = &mut self.eps[i];
        if e.outstanding > 0 {
            return Err(Error::from_errno(
                OP,
                libc::EBUSY,
                format!(
                    "the endpoint has {} request(s) outstanding: poll until they are reported, then remove it",
                    e.outstanding
                ),
            ));
        }
        let Some(peer) = e.peer.take() else {
            return Err(Error::invalid(OP, "no such endpoint in this pool (removed)"));
        };
        e.generation = e.generation.wrapping_add(1);
        e.failed = None;
        self.free.push(i as u32);
        Ok(peer)
    }

    /// The place of endpoint `ep` if it names a live endpoint of this pool.
    #[inline]
    pub(super) fn live(&self, ep: EndpointId) -> Option<usize> {
        let i = ep.0 as usize;
        let e = self.eps.get(i)?;
        (e.peer.is_some() && e.generation == ep.1).then_some(i)
    }
}
