//! DC destinations: what each work request on a DCI names.

use super::DcKey;
use crate::addr::DcTargetAddr;
use crate::ah::Ah;
use crate::wr::{Dc, DestRaw, NeedsDest, Ready, Stream, Wr};

/// A DC destination: address handle, remote DCT number, DC key and optional DCI stream. Holds
/// its [`Ah`] (a clone of the handle, taken when the peer is made, never when posting).
#[derive(Clone)]
pub struct DcPeer {
    ah: Ah,
    /// What a request names, read on every post without going through the handle: `ah`'s
    /// library pointer and mlx5 address vector (the direct backend's, or null), the DCT
    /// number and the key (a secret: `Debug` shows it as a redacted [`DcKey`]).
    dest: DestRaw,
    stream: Stream,
    /// The target places data out of order ([`DcTargetAddr::out_of_order`]).
    out_of_order: bool,
}

impl DcPeer {
    /// The DC target `addr`, reached through `ah`, presenting `key`.
    pub fn new(ah: &Ah, addr: &DcTargetAddr, key: DcKey) -> DcPeer {
        DcPeer {
            ah: ah.clone(),
            dest: DestRaw {
                ah: ah.as_raw(),
                av: ah.av(),
                dctn: addr.dct_number,
                key: key.expose(),
            },
            stream: Stream::NONE,
            out_of_order: addr.out_of_order,
        }
    }

    /// Whether the target places data out of order ([`DcTargetAddr::out_of_order`]): the
    /// DCIs that reach it must too.
    pub fn out_of_order(&self) -> bool {
        self.out_of_order
    }

    /// Sends on DCI stream `stream_id` (the DCI must have been built with streams).
    pub fn stream(mut self, stream_id: u16) -> Self {
        self.stream = Stream::new(Some(stream_id));
        self
    }

    /// The remote DCT number.
    pub fn dct_number(&self) -> u32 {
        self.dest.dctn
    }

    /// The address handle.
    pub fn ah(&self) -> &Ah {
        &self.ah
    }

    /// Whether `other` names the same DC target: the same DCT number and key, reached at the
    /// same remote LID and GID (one AH, or address vectors that agree). Where an address
    /// cannot be read (an adopted AH, another provider's) the DCT number and key decide: for
    /// the pool, which fails such endpoints together, that is the safe side.
    pub(crate) fn same_target(&self, other: &DcPeer) -> bool {
        let (a, b) = (&self.dest, &other.dest);
        if a.dctn != b.dctn || a.key != b.key {
            return false;
        }
        if a.ah == b.ah || a.av.is_null() || b.av.is_null() {
            return true;
        }
        // SAFETY: both address vectors belong to AHs these peers hold (alive), which libmlx5
        // wrote at their creation and never changes.
        let (x, y) = unsafe { (&*a.av, &*b.av) };
        // On RoCE (a remote MAC) libmlx5 keeps a UDP source port in `rlid`: the MAC and GID
        // name the target there; on InfiniBand the LID (and the GID with a GRH).
        let roce = x.rmac != [0; 6] || y.rmac != [0; 6];
        x.rgid == y.rgid && x.rmac == y.rmac && (roce || x.rlid == y.rlid)
    }
}

// SAFETY: `dest.ah` and `dest.av` point into the AH that `ah` keeps alive; an AH is immutable and
// usable from any thread.
unsafe impl Send for DcPeer {}
// SAFETY: as above.
unsafe impl Sync for DcPeer {}

impl std::fmt::Debug for DcPeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DcPeer")
            .field("dct_number", &self.dest.dctn)
            .field("key", &DcKey::new(self.dest.key))
            .field("stream", &self.stream.get())
            .finish()
    }
}

impl<'b, 'q> Wr<'b, 'q, Dc, NeedsDest> {
    /// Names the DC destination: the step a DC request cannot skip.
    #[inline]
    pub fn to(self, peer: &'b DcPeer) -> Wr<'b, 'q, Dc, Ready> {
        self.with_dest(&peer.dest, peer.stream)
    }

    /// Names the DC destination, on `stream` when given (the pool's per-endpoint stream).
    #[inline]
    pub(crate) fn dest_on(self, peer: &'b DcPeer, stream: Option<u16>) -> Wr<'b, 'q, Dc, Ready> {
        self.with_dest(&peer.dest, Stream::new(stream).or(peer.stream))
    }

    /// Names the DC destination on DCI stream `stream_id` (overriding the peer's own).
    #[inline]
    pub fn to_stream(self, peer: &'b DcPeer, stream_id: u16) -> Wr<'b, 'q, Dc, Ready> {
        self.with_dest(&peer.dest, Stream::new(Some(stream_id)))
    }
}
