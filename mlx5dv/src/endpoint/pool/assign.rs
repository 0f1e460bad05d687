//! The assignment policies: which DCI (and stream) an endpoint's requests go on.

use super::DciPool;
use crate::endpoint::Policy;

impl DciPool {
    /// The DCI (fixed under Rand and Streams) and stream of the endpoint at place `i`, in
    /// the class of DCIs it posts on. An endpoint on probation has none under any policy: it
    /// takes a free probation DCI while it has requests outstanding, as under Dcs, so that a
    /// dead target's retries hold one probation DCI and queue no other stranger behind them
    /// (a fixed DCI or stream would: scripts/attack, honest new clients' p99 13-17x under
    /// Rand and Streams with fixed probation DCIs).
    pub(super) fn bind(&self, i: usize, probation: bool) -> (Option<usize>, u16) {
        if probation {
            return (None, 0);
        }
        let count = usize::from(self.main);
        match self.policy {
            Policy::Dcs | Policy::DcsQuota { .. } => (None, 0),
            Policy::Streams { log_concurrent, .. } => {
                (Some(i % count), ((i / count) % (1usize << log_concurrent)) as u16)
            }
            Policy::Rand { seed } => (Some((mix(seed ^ i as u64) % count as u64) as usize), 0),
        }
    }

    /// Binds the proven endpoint at place `i` (nothing outstanding) to its DCI among the
    /// proven endpoints' (Rand, Streams).
    #[cold]
    pub(super) fn rebind(&mut self, i: usize) {
        if std::mem::take(&mut self.eps[i].rebind) {
            let (dci, stream) = self.bind(i, false);
            let e = &mut self.eps[i];
            (e.dci, e.stream) = (dci, stream);
        }
    }
}

/// splitmix64: a fixed, well-spread DCI per endpoint (Rand).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
