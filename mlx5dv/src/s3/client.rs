//! The client's side: buffers exposed behind a DCT, and the tokens that describe them.
//!
//! A [`Client`] is one DC target (with the small CQ and SRQ a DCT needs; no receive is ever
//! posted: S3 over RDMA moves bytes with one-sided operations only). A registered buffer
//! handed to [`Client::expose`] becomes an [`Exposed`] buffer, whose [`Exposed::mint`] gives a
//! token for the whole buffer or a range of it, for the server to read (PUT) or to write
//! (GET). Each token is a registration of its own, over exactly its range and with exactly its
//! right: [`Exposed::revoke`] deregisters it, after which the token reaches nothing (the
//! server's request fails with a remote access error at the client's adapter), while the
//! buffer and its other tokens stay as they were.

use super::path::PathSettings;
use super::window::{Binder, Window};
use super::{Direction, RdmaToken, TokenSpelling};
use crate::cq::Cq;
use crate::dc::{DcKey, Dct, DctBuilder, Mlx5Context};
use crate::error::{Error, Result};
use crate::mr::{Access, DmaBuf, Mr, RawMemory, RegionBuffer, Returned};
use crate::pd::Pd;
use crate::srq::Srq;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The next exposed buffer's number (process-wide): a [`TokenId`] names its buffer too.
static NEXT_BUFFER: AtomicU64 = AtomicU64::new(0);

/// How a [`Client`] brings up its DCT.
#[derive(Copy, Clone, Debug)]
pub struct ClientConfig {
    /// The port (1 unless the adapter has several).
    pub port: u8,
    /// On RoCE, the GID index the DCT answers from and the tokens carry; None: the port's
    /// first RoCE v2 GID. Unused on InfiniBand, where tokens name the port's LID.
    pub gid_index: Option<u8>,
    /// Path MTU in bytes; None: the port's active MTU.
    pub mtu_bytes: Option<u32>,
    /// Tokens over host memory are memory windows (type 1) bound in the exposed region,
    /// instead of a registration each: a mint and a revoke are a work request each (no system
    /// call, no pinning), and a revoked token's key does not come back while the client lives
    /// (see [`Exposed::revoke`]). Costs the client an RC QP and a small CQ of its own (its
    /// binder) and one registration of each exposed region with [`Access::MW_BIND`]. Tokens
    /// over a dma-buf stay registrations.
    pub windows: bool,
    /// With `windows`: the windows the client allocates over its life (16,384 by default).
    /// Every window stays allocated until the client and its buffers are dropped, unbound
    /// once its tokens are revoked: a window deallocated could have its mkey index handed to
    /// a new window, whose tags would come round to the revoked keys (see
    /// [`Exposed::revoke`]). A window serves 127 tokens (254 binds), so the default lets a
    /// client mint about 2 million tokens, and holds at most 16,384 mkeys (a small struct
    /// each here, an mkey at the device); past it [`Exposed::mint`] answers ENOSPC.
    pub max_windows: usize,
    /// The DCT's partition (its P_Key index: the executor's DCIs must be in the same one) and
    /// its answers' SL, traffic class, hop limit and flow label (RoCE).
    pub path: PathSettings,
}

impl Default for ClientConfig {
    /// Port 1, its first RoCE v2 GID (on RoCE), its active MTU, a registration per token.
    fn default() -> Self {
        ClientConfig {
            port: 1,
            gid_index: None,
            mtu_bytes: None,
            windows: false,
            max_windows: 16_384,
            path: PathSettings::default(),
        }
    }
}

/// What every exposed buffer and token of one client shares: the DCT and where it answers.
struct Target {
    // The DCT goes before the CQ and SRQ it reports to (fields drop in order).
    dct: Dct,
    _srq: Srq,
    _cq: KeptCq,
    /// Binds windows, with `ClientConfig::windows`; holds the client's windows (before the
    /// PD they are allocated on).
    binder: Option<Mutex<Binder>>,
    pd: Pd,
    lid: u16,
    /// The GID tokens carry: on RoCE only.
    gid: Option<[u8; 16]>,
}

impl Target {
    /// Unbinds `window` (a token revoked): the binder keeps it, for the next tokens or, worn,
    /// until the client is dropped. Where the unbind fails the window is deallocated instead,
    /// which ends its binding too.
    fn unbind(&self, mut window: Window) {
        if let Some(b) = &self.binder {
            let mut binder = self.binder_lock(b);
            if binder.bind(&mut window, None).is_ok() {
                binder.keep(window);
            }
        }
    }

    /// The binder, locked; a poisoned lock (a panic while binding) is taken as it is: the
    /// binder marks itself broken before anything that could leave it half-done.
    fn binder_lock<'a>(&self, b: &'a Mutex<Binder>) -> std::sync::MutexGuard<'a, Binder> {
        b.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The DCT's CQ, kept alive and never used: nothing polls it, since no receive is posted.
struct KeptCq(#[allow(dead_code)] Cq);

// SAFETY: no reference to the CQ is ever taken (the field is only dropped), so sharing the
// wrapper shares nothing that `Cq`'s own `!Sync` (its per-handle poll state) protects.
unsafe impl Sync for KeptCq {}

/// An S3-over-RDMA client's DC target: buffers exposed behind it are read and written by the
/// servers that hold their tokens (and the DC key). Cheap to clone; the DCT lives until the
/// client and every buffer exposed behind it are gone.
#[derive(Clone)]
pub struct Client {
    target: Arc<Target>,
}

impl Client {
    /// A DCT on `pd` answering to `key`, granting remote read and write (each token narrows
    /// that to its own range and right).
    ///
    /// `key` is the application's secret, agreed with its servers out of band; the reference
    /// implementations' fixed key is [`super::REFERENCE_DC_KEY`].
    ///
    /// # Errors
    /// `ibv_query_port`'s; ENODEV on a RoCE port without a RoCE v2 GID when `gid_index` is
    /// None; the CQ's, SRQ's and DCT's creation errors ([`DctBuilder::build`]); with
    /// `windows`, the binder's (its CQ's and QP's creation and transitions).
    pub fn new(mlx5: &Mlx5Context, pd: &Pd, key: DcKey, cfg: ClientConfig) -> Result<Client> {
        let ctx = pd.context();
        let port = ctx.query_port(cfg.port)?;
        let gid_index = super::roce_gid_index(
            ctx,
            cfg.port,
            port.is_ethernet(),
            cfg.gid_index,
            "mlx5dv::s3::Client::new",
        )?;
        cfg.path
            .check(port.is_ethernet(), "mlx5dv::s3::Client::new")
            .map_err(|e| e.on(ctx.name()))?;
        let cq = ctx.create_cq(1)?;
        let srq = pd.create_srq(1, 1)?;
        let mut b = DctBuilder::new(mlx5, pd, &cq, &srq, key)
            .port(cfg.port)
            .access(Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ)
            .gid_index(gid_index)
            .pkey_index(cfg.path.pkey_index)
            .sl(cfg.path.sl)
            .traffic_class(cfg.path.traffic_class)
            .hop_limit(cfg.path.hop_limit)
            .flow_label(cfg.path.flow_label);
        if let Some(mtu) = cfg.mtu_bytes {
            b = b.mtu(mtu);
        }
        let dct = b.build()?;
        let addr = dct.target_addr()?;
        let binder = if cfg.windows {
            let path = match gid_index {
                Some(g) => crate::PeerPath::Gid {
                    sl: 0,
                    gid: addr.gid,
                    sgid_index: g,
                    hop_limit: 1,
                    traffic_class: 0,
                    flow_label: 0,
                },
                None => crate::PeerPath::Lid { lid: addr.lid, sl: 0 },
            };
            let mtu = cfg.mtu_bytes.unwrap_or_else(|| port.active_mtu_bytes());
            Some(Mutex::new(Binder::new(pd, cfg.port, path, mtu, cfg.max_windows)?))
        } else {
            None
        };
        Ok(Client {
            target: Arc::new(Target {
                dct,
                _srq: srq,
                _cq: KeptCq(cq),
                pd: pd.clone(),
                lid: addr.lid,
                gid: gid_index.map(|_| addr.gid),
                binder,
            }),
        })
    }

    /// The DCT behind which buffers are exposed (its number, its key-violation count).
    pub fn dct(&self) -> &Dct {
        &self.target.dct
    }

    /// Exposes `mr` behind this client's DCT: no token exists yet ([`Exposed::mint`]). The
    /// region may be registered with any rights (local ones are enough: each token is a
    /// registration of its own).
    ///
    /// With [`ClientConfig::windows`], a region over host memory is registered once more,
    /// whole, for the tokens' windows to be bound in.
    ///
    /// # Errors
    /// EINVAL, with `mr` back, when it belongs to another protection domain than the DCT (a
    /// server's request would fail with a remote access error); with windows, that
    /// registration's error, with `mr` back.
    pub fn expose<B>(&self, mr: Mr<B>) -> std::result::Result<Exposed<B>, Returned<Mr<B>>>
    where
        Mr<B>: Expose,
    {
        if mr.pd().as_raw() != self.target.pd.as_raw() {
            return Err(Returned::new(Error::invalid(
                    "mlx5dv::s3::Client::expose",
                    "the region belongs to another protection domain than the client's DCT: register it on the PD the client was created with",
                ), mr));
        }
        let windows = match &self.target.binder {
            Some(_) => match mr.register_base(Witness::new()) {
                Ok(base) => base.map(|b| Box::new(Windows { base: b.0 })),
                Err(error) => return Err(Returned::new(error, mr)),
            },
            None => None,
        };
        Ok(Exposed {
            buffer: NEXT_BUFFER.fetch_add(1, Ordering::Relaxed),
            tokens: Vec::new(),
            free: Vec::new(),
            live: 0,
            windows,
            target: self.target.clone(),
            mr: ManuallyDrop::new(mr),
            given_back: false,
        })
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("dct_number", &self.target.dct.dct_number())
            .field("lid", &self.target.lid)
            .field("roce", &self.target.gid.is_some())
            .finish()
    }
}

/// What a token is: a registration of its own (over host memory, or over a part of a
/// dma-buf), or a memory window bound at an address of the exposed region.
enum Part {
    Host(Mr<RawMemory>),
    DmaBuf(Mr<DmaBuf>),
    Window(Window, u64),
}

impl Part {
    fn mr_addr_rkey(&self) -> (u64, u32) {
        let (addr, remote) = match self {
            Part::Host(m) => (m.addr(), m.remote()),
            Part::DmaBuf(m) => (m.addr(), m.remote()),
            Part::Window(w, addr) => return (*addr, w.rkey()),
        };
        // A token's registration always grants a remote right.
        (addr, remote.map_or(0, |r| r.rkey))
    }

    /// Deregisters it (a window: deallocated, which ends its binding); on failure it comes
    /// back with the error.
    fn deregister(self) -> std::result::Result<(), (Error, Part)> {
        match self {
            Part::Host(m) => m.deregister().map(drop).map_err(|r| {
                let (error, m) = r.into_parts();
                (error, Part::Host(m))
            }),
            Part::DmaBuf(m) => m.deregister().map(drop).map_err(|r| {
                let (error, m) = r.into_parts();
                (error, Part::DmaBuf(m))
            }),
            Part::Window(w, _) => {
                drop(w);
                Ok(())
            }
        }
    }
}

mod sealed {
    use super::{Access, DmaBuf, Error, Mr, Part, RegionBuffer, Result};

    /// Sealed: the crate's regions only. Its method is out of reach of other crates: the trait
    /// cannot be named outside this module, and the method takes a [`Witness`] nobody else can
    /// make, so not even a generic bound on [`super::Expose`] can call it.
    pub trait Sealed {
        /// A registration of `len` bytes at `offset` with `access`, over the same memory.
        ///
        /// # Errors
        /// EINVAL when the range is empty or not inside the region; the registration's error.
        fn register_part(&self, _: Witness, offset: usize, len: usize, access: Access) -> Result<ExposedPart>;

        /// The whole region registered again for windows to be bound in (local write and
        /// [`Access::MW_BIND`], no remote right); None where tokens stay registrations.
        ///
        /// # Errors
        /// The registration's.
        fn register_base(&self, _: Witness) -> Result<Option<ExposedPart>>;
    }

    /// Made only by this module's parent: the proof that the caller is `Exposed::mint`.
    pub struct Witness(());

    impl Witness {
        pub(in crate::s3) fn new() -> Witness {
            Witness(())
        }
    }

    /// A token's registration (opaque; it does not keep the region alive: the `Exposed` that
    /// asked for it holds the region until the registration is gone).
    pub struct ExposedPart(pub(super) Part);

    /// EINVAL unless `len` bytes at `offset` are a non-empty range of a `region`-byte region.
    pub(super) fn check_range(offset: usize, len: usize, region: usize) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if len > 0 && end <= region => Ok(()),
            _ => Err(Error::invalid(
                "mlx5dv::s3::Exposed::mint",
                format!("{len} bytes at offset {offset} is not a non-empty range of this {region}-byte buffer"),
            )),
        }
    }

    impl<B: RegionBuffer> Sealed for Mr<B> {
        fn register_part(&self, _: Witness, offset: usize, len: usize, access: Access) -> Result<ExposedPart> {
            check_range(offset, len, self.len())?;
            // SAFETY: offset + len lies inside the region's host memory (checked above), which
            // the `Exposed` that asks (the only caller: it alone has a `Witness`) holds, through
            // its `Mr`, until this registration is deregistered (its tokens drop before its
            // region); no Rust reference to those bytes is handed out by a region (copies only,
            // or the unsafe `as_slice_unchecked`).
            let mr = unsafe { self.pd().register_raw(self.host_ptr().add(offset), len, access) }?;
            Ok(ExposedPart(Part::Host(mr)))
        }

        fn register_base(&self, w: Witness) -> Result<Option<ExposedPart>> {
            self.register_part(w, 0, self.len(), Access::LOCAL_WRITE | Access::MW_BIND)
                .map(Some)
        }
    }

    impl Sealed for Mr<DmaBuf> {
        fn register_part(&self, _: Witness, offset: usize, len: usize, access: Access) -> Result<ExposedPart> {
            check_range(offset, len, self.len())?;
            let (_, dma_offset, _, iova) = self.dmabuf().parts();
            let fd = self.dmabuf().fd().try_clone_to_owned().map_err(|e| {
                Error::from_errno("dup (dma-buf)", e.raw_os_error().unwrap_or(0), "out of descriptors?")
            })?;
            let part = DmaBuf::new(fd, dma_offset + offset as u64, len, iova + offset as u64);
            Ok(ExposedPart(Part::DmaBuf(self.pd().register_dmabuf(part, access)?)))
        }

        fn register_base(&self, _: Witness) -> Result<Option<ExposedPart>> {
            Ok(None)
        }
    }
}

use sealed::{ExposedPart, Sealed as _, Witness};

/// A region whose ranges can be exposed by tokens: one over host memory (every
/// [`RegionBuffer`]: `Vec<u8>`, `Box<[u8]>`, [`crate::AlignedBuf`], [`crate::MmapBuf`], raw
/// memory) or over a dma-buf ([`DmaBuf`], e.g. GPU memory). Implemented by the crate only, and
/// it gives other crates nothing to call: a part of a region is registered only by
/// [`Exposed::mint`], which holds the region for as long as the part's registration lives.
/// An implicit on-demand-paging region is not one: it spans the whole address space and is
/// registered for local access only (expose a buffer of your own instead).
///
/// ```compile_fail,E0599
/// # fn f(pd: &mlx5dv::Pd) -> mlx5dv::Result<()> {
/// use mlx5dv::s3::Expose;
/// use mlx5dv::Access;
/// let mr = pd.register(vec![0u8; 4096], Access::LOCAL_WRITE)?;
/// // 4 KiB past the region's end, writable by any peer: not callable from another crate.
/// let _part = mr.register_part(4096, 4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE)?;
/// # Ok(())
/// # }
/// ```
///
/// Nor through a generic bound: the method is reachable there (a supertrait's), but it takes
/// a `Witness`, which no other crate can name or make (E0603: its module is private):
///
/// ```compile_fail,E0603
/// fn part<T: mlx5dv::s3::Expose>(region: &T) {
///     let witness = mlx5dv::s3::client::sealed::Witness::new();
///     let _ = region.register_part(witness, 4096, 4096, mlx5dv::Access::REMOTE_WRITE);
/// }
/// ```
///
/// (rustdoc checks the error code on nightly, or with `RUSTC_BOOTSTRAP=1`; on stable only that
/// it fails.)
pub trait Expose: sealed::Sealed {}

impl<B: RegionBuffer> Expose for Mr<B> {}

impl Expose for Mr<DmaBuf> {}

/// What an exposed buffer binds its tokens' windows in (the client's binder keeps the
/// windows themselves).
struct Windows {
    /// The region registered whole for windows ([`Part::Host`]): dropped after every window
    /// bound in it is unbound.
    base: Part,
}

/// Names one token of an [`Exposed`] buffer, to revoke it. A revoked token's id names nothing,
/// even once its place is reused, and names nothing on another buffer.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct TokenId {
    /// The buffer's number ([`NEXT_BUFFER`]).
    buffer: u64,
    index: u32,
    generation: u32,
}

struct Slot {
    generation: u32,
    /// None once revoked.
    part: Option<ExposedPart>,
}

/// A registered buffer behind a client's DCT, and the tokens minted for it.
///
/// A [`Client`] is one DC target (with the small CQ and SRQ a DCT needs; no receive is ever
/// posted: S3 over RDMA moves bytes with one-sided operations only). A registered buffer
/// handed to [`Client::expose`] becomes an [`Exposed`] buffer, whose [`Exposed::mint`] gives a
/// token for the whole buffer or a range of it, for the server to read (PUT) or to write
/// (GET). Each token is a registration of its own, over exactly its range and with exactly its
/// right: [`Exposed::revoke`] deregisters it, after which the token reaches nothing (the
/// server's request fails with a remote access error at the client's adapter), while the
/// buffer and its other tokens stay as they were.
///
/// Its bytes are reached by copies ([`Exposed::mr`]'s `read`, [`Exposed::write`]): a server
/// may be writing them at any time while a token for them lives. Dropping it revokes every
/// token, then drops the region (or leaks it, when a token's registration cannot be
/// deregistered: the adapter could still write it).
///
/// The region stays in place for as long as a token's registration over its memory lives:
/// no `&mut Mr` is handed out, so it cannot be swapped out and freed behind the tokens.
///
/// ```compile_fail
/// # fn f(pd: &mlx5dv::Pd, client: &mlx5dv::s3::Client) -> mlx5dv::Result<()> {
/// use mlx5dv::{s3::Direction, Access};
/// let Ok(mut exposed) = client.expose(pd.register(vec![0u8; 4096], Access::LOCAL_WRITE)?) else {
///     return Ok(());
/// };
/// let (_id, _token) = exposed.mint(0, 4096, Direction::Get)?;
/// let other = pd.register(vec![0u8; 1], Access::LOCAL_WRITE)?;
/// // The 4 KiB buffer freed while the token's registration still lets a server write it.
/// drop(std::mem::replace(exposed.mr_mut(), other));
/// # Ok(())
/// # }
/// ```
pub struct Exposed<B> {
    /// Its number, which its tokens' ids carry.
    buffer: u64,
    // The tokens' registrations and windows go before the registration the windows are bound
    // in, and both before the region they lie in (fields drop in order).
    tokens: Vec<Slot>,
    free: Vec<u32>,
    live: usize,
    /// With windows: what binds them.
    windows: Option<Box<Windows>>,
    target: Arc<Target>,
    /// Dropped by `Drop` only once no token's registration reaches it: a token whose
    /// deregistration fails leaks it instead (the adapter could still write it).
    mr: ManuallyDrop<Mr<B>>,
    /// Taken out by `unexpose`.
    given_back: bool,
}

impl<B> Drop for Exposed<B> {
    fn drop(&mut self) {
        let mut reached = false;
        let parts = self.tokens.iter_mut().filter_map(|s| s.part.take().map(|p| p.0));
        let base = self.windows.take().map(|w| w.base);
        for part in parts.chain(base) {
            // A window is unbound and kept by the client (its index is not handed out again).
            let part = match part {
                Part::Window(window, _) => {
                    self.target.unbind(window);
                    continue;
                }
                part => part,
            };
            if let Err((e, part)) = part.deregister() {
                eprintln!("mlx5dv: {e}; the exposed buffer is leaked: a token's registration still reaches it");
                std::mem::forget(part);
                reached = true;
            }
        }
        if !reached && !self.given_back {
            // SAFETY: dropped once, here (not given back); no token's registration reaches
            // its memory any more.
            unsafe { ManuallyDrop::drop(&mut self.mr) };
        }
    }
}

impl<B> Exposed<B>
where
    Mr<B>: Expose,
{
    /// A token for `len` bytes at `offset` of the buffer, granting the server the one
    /// operation `direction` needs (remote read for [`Direction::Put`], remote write for
    /// [`Direction::Get`]) on exactly that range. A buffer used both ways gets two tokens.
    ///
    /// # Errors
    /// EINVAL when the range is empty, lies outside the buffer or is longer than a token can
    /// describe (4 GiB - 1: mint several); the registration's error otherwise (ENOMEM:
    /// `ulimit -l`; a dma-buf's exporter refusing).
    pub fn mint(&mut self, offset: usize, len: usize, direction: Direction) -> Result<(TokenId, RdmaToken)> {
        const OP: &str = "mlx5dv::s3::Exposed::mint";
        if len > u32::MAX as usize {
            return Err(Error::invalid(
                OP,
                format!("{len} bytes: a token describes at most 4 GiB - 1; mint one per part"),
            ));
        }
        let access = match direction {
            Direction::Put => Access::REMOTE_READ,
            Direction::Get => Access::LOCAL_WRITE | Access::REMOTE_WRITE,
        };
        let part = match (&mut self.windows, &self.target.binder) {
            (Some(w), Some(binder)) => {
                let Part::Host(base) = &w.base else {
                    return Err(Error::invalid(OP, "windows are bound in host memory only"));
                };
                // Within the region, so within `base` (which covers it whole).
                sealed::check_range(offset, len, self.mr.len())?;
                let addr = base.addr() + offset as u64;
                let to = (base.as_raw(), addr, len as u64, access);
                let mut binder = self.target.binder_lock(binder);
                let mut window = binder.window(&self.target.pd)?;
                if let Err(e) = binder.bind(&mut window, Some(to)) {
                    drop(binder);
                    // A window whose bind failed is dropped: its state is the device's guess.
                    return Err(e);
                }
                ExposedPart(Part::Window(window, addr))
            }
            _ => self.mr.register_part(Witness::new(), offset, len, access)?,
        };
        let (addr, rkey) = part.0.mr_addr_rkey();
        let token = RdmaToken {
            addr,
            len: len as u32,
            rkey,
            lid: self.target.lid,
            dct_number: self.target.dct.dct_number(),
            gid: self.target.gid,
            spelling: TokenSpelling::default(),
        };
        let index = match self.free.pop() {
            Some(i) => {
                self.tokens[i as usize].part = Some(part);
                i
            }
            None => {
                self.tokens.push(Slot {
                    generation: 0,
                    part: Some(part),
                });
                (self.tokens.len() - 1) as u32
            }
        };
        self.live += 1;
        let generation = self.tokens[index as usize].generation;
        Ok((
            TokenId {
                buffer: self.buffer,
                index,
                generation,
            },
            token,
        ))
    }

    /// [`mint`](Self::mint), the token revoked when the guard is dropped: an early return
    /// (a `?`) or a panic between minting and revoking cannot leave the token valid for as long
    /// as the buffer lives. The guard borrows the buffer (read it through
    /// [`TokenGuard::exposed`]); [`TokenGuard::revoke`] revokes it and reports a failure,
    /// [`TokenGuard::disarm`] keeps the token (revoke it with [`revoke`](Self::revoke)).
    /// Bind the guard to a name (`let (_guard, token)`): `let (_, token)` drops it, and revokes
    /// the token, at once. While the guard lives the buffer is borrowed: one guarded token at a
    /// time; several tokens of one buffer are minted with [`mint`](Self::mint).
    ///
    /// ```no_run
    /// # fn f(mut exposed: mlx5dv::s3::Exposed<Vec<u8>>) -> mlx5dv::Result<()> {
    /// use mlx5dv::s3::Direction;
    /// let (guard, token) = exposed.mint_guarded(0, 4096, Direction::Get)?;
    /// let text = token.format()?; // sent to the server with the request
    /// # let _ = text;
    /// // ... the server writes; an error returned here revokes the token too ...
    /// guard.revoke()?; // or let it drop
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`mint`](Self::mint).
    pub fn mint_guarded(
        &mut self,
        offset: usize,
        len: usize,
        direction: Direction,
    ) -> Result<(TokenGuard<'_, B>, RdmaToken)> {
        let (id, token) = self.mint(offset, len, direction)?;
        Ok((
            TokenGuard {
                exposed: self,
                id,
                armed: true,
            },
            token,
        ))
    }
}

/// A token of an [`Exposed`] buffer that is revoked when this is dropped
/// ([`Exposed::mint_guarded`]).
///
/// A revocation that fails on drop is reported on stderr, and the token is left as a failed
/// [`Exposed::revoke`] leaves it: valid, revocable again with its id (lost with the guard:
/// [`Exposed::unexpose`] or dropping the buffer revokes it then). Call
/// [`revoke`](Self::revoke) to see the error instead.
#[must_use = "dropping the guard revokes the token at once"]
pub struct TokenGuard<'a, B> {
    exposed: &'a mut Exposed<B>,
    id: TokenId,
    /// Revoke on drop.
    armed: bool,
}

impl<B> TokenGuard<'_, B> {
    /// The token's id.
    pub fn id(&self) -> TokenId {
        self.id
    }

    /// The buffer the token lies in (its bytes: [`Exposed::mr`]).
    pub fn exposed(&self) -> &Exposed<B> {
        self.exposed
    }

    /// Keeps the token: nothing is revoked when the guard goes; its id is returned for
    /// [`Exposed::revoke`].
    pub fn disarm(mut self) -> TokenId {
        self.armed = false;
        self.id
    }

    /// Revokes the token now ([`Exposed::revoke`]).
    ///
    /// # Errors
    /// [`Exposed::revoke`]'s (`ibv_dereg_mr`'s errno): the token then stays valid, and its id
    /// comes back with the error to revoke it again.
    pub fn revoke(mut self) -> std::result::Result<(), Returned<TokenId>> {
        self.armed = false;
        self.exposed
            .revoke(self.id)
            .map_err(|error| Returned::new(error, self.id))
    }
}

impl<B> Drop for TokenGuard<'_, B> {
    fn drop(&mut self) {
        if self.armed {
            if let Err(e) = self.exposed.revoke(self.id) {
                eprintln!(
                    "mlx5dv: {e}; the token dropped with its guard stays valid until the buffer is unexposed or dropped"
                );
            }
        }
    }
}

impl<B> std::fmt::Debug for TokenGuard<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenGuard")
            .field("id", &self.id)
            .field("armed", &self.armed)
            .finish()
    }
}

impl<B> Exposed<B> {
    /// Revokes token `id`: its registration is deregistered, so a server's read or write with
    /// it fails with a remote access error, and a request already executing with it completes
    /// or fails whole at the adapter's discretion, as `ibv_dereg_mr` decides. The buffer and
    /// its other tokens are untouched.
    ///
    /// # What revocation guarantees
    /// With [`ClientConfig::windows`] (a token is a type 1 memory window): the revoke is an
    /// unbind, a work request that gives the window a new 8-bit tag, so once this returns the
    /// token's key reaches nothing, and it does not come back while the client lives: a
    /// window is bound at most 254 times (a mint and a revoke are two binds), so its 8-bit tag
    /// never comes round, and then kept allocated, unbound, until the client and its buffers
    /// are dropped ([`ClientConfig::max_windows`] bounds how many), so its mkey index is not
    /// handed to another window meanwhile. That matters: mlx5_ib gives each new mkey its
    /// variant from a device-wide 8-bit counter (`assign_mkey_variant`), so a window on a
    /// recycled index starts at an arbitrary tag and its next 254 binds pass through almost
    /// every tag the old window's revoked tokens carried. What remains: a window whose unbind
    /// (or bind) fails is deallocated instead, which ends its binding, and once the client is
    /// dropped its windows are deallocated; then a later window on the same PD (another
    /// client's) may be given such an index, and a revoked key of it may name that window's
    /// token.
    ///
    /// With registrations (the default, and tokens over a dma-buf), once this returns the
    /// token's memory key names no registration, until a later registration is given the
    /// same 32-bit key: mlx5_ib hands a deregistered key out again (its MR cache keeps a
    /// revoked mkey, `mlx5_revoke_mr` -> `cache_ent_find_and_store`, and gives it whole to the
    /// next registration of as many pages; soft-mlx5 models it). The next token minted over
    /// the same range then carries the revoked one's key, and a server still holding the
    /// revoked token (a slow one, or one that replays) reaches it, with the later token's
    /// right. What holds whatever the keys:
    /// - only holders of the DC key reach the DCT at all: per-token keys are not secrets;
    /// - a key that works names a live registration or window, so a revoked token reaches at
    ///   most what a live token of this client exposes: never memory outside a live token,
    ///   never a buffer after it was unexposed or dropped.
    ///
    /// Why type 1 windows: a type 2 window answers only requests arriving at the QP that bound
    /// it (libmlx5's `set_umr_mkey_seg` writes that QP's number into the window), and a DCT
    /// posts nothing, so no type 2 window is reachable through a DCT; a type 1 window answers
    /// any QP of its PD, the DCT included.
    ///
    /// # Errors
    /// ENOENT when `id` names no live token of this buffer (revoked already, or another
    /// buffer's); `ibv_dereg_mr`'s errno (the token then stays valid, and may be revoked
    /// again).
    pub fn revoke(&mut self, id: TokenId) -> Result<()> {
        let slot = self
            .tokens
            .get_mut(id.index as usize)
            .filter(|s| id.buffer == self.buffer && s.generation == id.generation && s.part.is_some())
            .ok_or_else(|| {
                Error::from_errno(
                    "mlx5dv::s3::Exposed::revoke",
                    libc::ENOENT,
                    "no such token on this buffer (revoked already, or minted by another one)",
                )
            })?;
        let part = slot.part.take().map(|p| p.0);
        match part {
            // An unbind gives the window a new key: the token's reaches nothing. Where the
            // unbind fails, the window is deallocated instead, which ends its binding too.
            Some(Part::Window(window, _)) => self.target.unbind(window),
            Some(part) => {
                if let Err((error, part)) = part.deregister() {
                    slot.part = Some(ExposedPart(part));
                    return Err(error);
                }
            }
            None => {}
        }
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(id.index);
        self.live -= 1;
        Ok(())
    }

    /// Tokens minted and not revoked.
    pub fn tokens(&self) -> usize {
        self.live
    }

    /// The region (read its bytes with [`Mr::read`]; post from it locally).
    pub fn mr(&self) -> &Mr<B> {
        &self.mr
    }

    /// Revokes every token and gives the region back.
    ///
    /// # Errors
    /// A revocation's error, with the buffer (and the tokens not yet revoked) back.
    pub fn unexpose(mut self) -> std::result::Result<Mr<B>, Returned<Exposed<B>>> {
        for index in 0..self.tokens.len() {
            let s = &self.tokens[index];
            if s.part.is_none() {
                continue;
            }
            let id = TokenId {
                buffer: self.buffer,
                index: index as u32,
                generation: s.generation,
            };
            if let Err(error) = self.revoke(id) {
                return Err(Returned::new(error, self));
            }
        }
        if let Some(w) = self.windows.take() {
            if let Err((error, base)) = w.base.deregister() {
                self.windows = Some(Box::new(Windows { base }));
                return Err(Returned::new(error, self));
            }
        }
        // SAFETY: taken once: `given_back` keeps `Drop` from dropping it again.
        let mr = unsafe { ManuallyDrop::take(&mut self.mr) };
        self.given_back = true;
        Ok(mr)
    }
}

impl<B: RegionBuffer> Exposed<B> {
    /// Copies `src` into the buffer at `offset` (before a server reads it: [`Mr::write`]).
    /// There is no `&mut Mr` to the region: swapped out of its place, it could be freed
    /// while the tokens' registrations over its memory still let servers write it.
    ///
    /// # Errors
    /// EINVAL when the range does not fit.
    pub fn write(&mut self, offset: usize, src: &[u8]) -> Result<()> {
        self.mr.write(offset, src)
    }
}

impl<B> std::fmt::Debug for Exposed<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exposed")
            .field("len", &self.mr.len())
            .field("tokens", &self.live)
            .field("dct_number", &self.target.dct.dct_number())
            .finish()
    }
}
