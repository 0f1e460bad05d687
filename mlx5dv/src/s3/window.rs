//! Tokens as memory windows: a client's binder (a send queue of its own for bind work
//! requests) and its windows.
//!
//! A type 1 window answers requests arriving at any QP of its PD, a DCT included (libmlx5
//! `set_umr_mkey_seg` gives it QP number 0xffffff; a type 2 window answers only the QP that
//! bound it, and a DCT posts nothing). Binding is a work request, not a system call: libmlx5
//! turns `ibv_bind_mw` into a UMR WQE on the QP it is posted on, which rewrites the window's
//! mkey with a new 8-bit tag (`ibv_inc_rkey`), so every key the window had before reaches
//! nothing; an unbind (a bind of length 0) does the same and leaves the window free.
//!
//! The binder is an RC QP connected to itself, in the client's PD: a bind never reaches the
//! wire, but only a connected QP in RTS executes one. Its CQ is read here alone.

use crate::error::{Error, Result};
use crate::mr::Access;
use crate::pd::Pd;
use crate::{PeerPath, RtsAttr};
use mlx5dv_raw as raw;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

const OP_BIND: &str = "ibv_bind_mw (s3 token)";

/// Binds a window at most this many times, then retires it (kept, unbound, until the client
/// is dropped) for a new one: its 8-bit tag never comes round to a key it had (a revoked
/// token's).
pub(super) const BINDS_PER_WINDOW: u32 = 254;

/// A bind completes in microseconds (a local work request); past this the binder is broken.
const BIND_TIMEOUT: Duration = Duration::from_secs(5);

/// A memory window of type 1, deallocated on drop.
pub(super) struct Window {
    mw: NonNull<raw::ibv_mw>,
    /// Binds made (an unbind counts too: it also takes a tag).
    binds: u32,
}

// SAFETY: a window is a library object with no thread affinity; the crate touches it only
// under the binder's lock or at drop, through a unique owner.
unsafe impl Send for Window {}
// SAFETY: shared references only read its key (a plain field libmlx5 writes under a bind,
// which takes `&mut`).
unsafe impl Sync for Window {}

impl Window {
    /// A type 1 window on `pd`.
    ///
    /// # Errors
    /// `ibv_alloc_mw`'s errno (EOPNOTSUPP: no memory windows on this device).
    pub(super) fn alloc(pd: &Pd) -> Result<Window> {
        // SAFETY: the PD is live.
        let mw = unsafe { raw::ibv_alloc_mw(pd.as_raw(), raw::IBV_MW_TYPE_1) };
        match NonNull::new(mw) {
            Some(mw) => Ok(Window { mw, binds: 0 }),
            None => Err(Error::last_os_error(
                "ibv_alloc_mw (s3 token)",
                "no memory window: the device may not offer them (ClientConfig::windows false mints registrations instead)",
            )
            .on(pd.context().name())),
        }
    }

    /// Its current key: the bound token's rkey.
    pub(super) fn rkey(&self) -> u32 {
        // SAFETY: the window is live; libmlx5 writes the key only inside a bind (`&mut self`).
        unsafe { (*self.mw.as_ptr()).rkey }
    }

    /// Whether it has taken all the binds it may.
    pub(super) fn worn(&self) -> bool {
        self.binds >= BINDS_PER_WINDOW
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        // SAFETY: allocated once, deallocated once; a bound window is destroyed with its
        // binding (mlx5_ib destroys the mkey), so its keys reach nothing after.
        unsafe { raw::ibv_dealloc_mw(self.mw.as_ptr()) };
    }
}

/// The client's send queue for binds: an RC QP connected to itself, and its CQ.
pub(super) struct Binder {
    qp: NonNull<raw::ibv_qp>,
    cq: NonNull<raw::ibv_cq>,
    device: String,
    /// A bind failed: the QP is in error and binds nothing more.
    broken: bool,
    /// Unbound windows with binds left, for the next tokens (of any buffer of the client).
    spare: Vec<Window>,
    /// Worn windows, kept allocated (unbound) until the client is dropped: deallocated, their
    /// mkey index could go to a new window whose tags pass through their revoked keys.
    worn: Vec<Window>,
    /// Windows allocated, and how many may be (`ClientConfig::max_windows`).
    allocated: usize,
    max_windows: usize,
}

// SAFETY: library objects without thread affinity, used under the client's lock only.
unsafe impl Send for Binder {}

impl Binder {
    /// An RC QP on `pd` connected to itself over `path` (the client's own port) at `mtu_bytes`.
    ///
    /// # Errors
    /// `ibv_create_cq`'s, `ibv_create_qp`'s and the transitions' errnos.
    pub(super) fn new(pd: &Pd, port: u8, path: PeerPath, mtu_bytes: u32, max_windows: usize) -> Result<Binder> {
        let ctx = pd.context();
        // SAFETY: the context is open; no channel, no user context.
        let cq = unsafe { raw::ibv_create_cq(ctx.as_raw(), 4, std::ptr::null_mut(), std::ptr::null_mut(), 0) };
        let cq = NonNull::new(cq)
            .ok_or_else(|| Error::last_os_error("ibv_create_cq (s3 binder)", "out of CQs?").on(ctx.name()))?;
        let mut init = raw::ibv_qp_init_attr {
            qp_context: std::ptr::null_mut(),
            send_cq: cq.as_ptr(),
            recv_cq: cq.as_ptr(),
            srq: std::ptr::null_mut(),
            cap: raw::ibv_qp_cap {
                max_send_wr: 2,
                max_recv_wr: 1,
                max_send_sge: 1,
                max_recv_sge: 1,
                max_inline_data: 0,
            },
            qp_type: raw::IBV_QPT_RC,
            sq_sig_all: 1,
        };
        // SAFETY: the PD and CQ are live; init is initialised.
        let qp = unsafe { raw::ibv_create_qp(pd.as_raw(), &mut init) };
        let Some(qp) = NonNull::new(qp) else {
            let e = Error::last_os_error("ibv_create_qp (s3 binder)", "out of QPs?").on(ctx.name());
            // SAFETY: the CQ made above, used by nothing.
            unsafe { raw::ibv_destroy_cq(cq.as_ptr()) };
            return Err(e);
        };
        let binder = Binder {
            qp,
            cq,
            device: ctx.name().to_string(),
            broken: false,
            spare: Vec::new(),
            worn: Vec::new(),
            allocated: 0,
            max_windows,
        };
        binder.connect(port, path, mtu_bytes)?;
        Ok(binder)
    }

    /// An unbound window for a token: a spare one, or a new one on `pd`.
    ///
    /// # Errors
    /// ENOSPC once `max_windows` were allocated (they stay allocated for the client's life);
    /// `ibv_alloc_mw`'s errno.
    pub(super) fn window(&mut self, pd: &Pd) -> Result<Window> {
        if let Some(w) = self.spare.pop() {
            return Ok(w);
        }
        if self.allocated >= self.max_windows {
            return Err(Error::from_errno(
                "mlx5dv::s3::Exposed::mint",
                libc::ENOSPC,
                format!(
                    "the client has allocated its {} windows (ClientConfig::max_windows), each kept until it is \
                     dropped so that no revoked key comes back: create a new client",
                    self.max_windows
                ),
            ));
        }
        let w = Window::alloc(pd)?;
        self.allocated += 1;
        Ok(w)
    }

    /// Takes back an unbound window: a spare, or kept for the client's life once worn.
    pub(super) fn keep(&mut self, window: Window) {
        if window.worn() {
            self.worn.push(window);
        } else {
            self.spare.push(window);
        }
    }

    /// RESET -> INIT -> RTR (to itself) -> RTS.
    fn connect(&self, port: u8, path: PeerPath, mtu_bytes: u32) -> Result<()> {
        const HINT: &str = "the client's own port and path should always do: report this";
        // SAFETY: the QP is live.
        let qp_num = unsafe { (*self.qp.as_ptr()).qp_num };
        let mut attr = raw::ibv_qp_attr {
            qp_state: raw::IBV_QPS_INIT,
            port_num: port,
            ..Default::default()
        };
        let mask = raw::IBV_QP_STATE | raw::IBV_QP_PKEY_INDEX | raw::IBV_QP_PORT | raw::IBV_QP_ACCESS_FLAGS;
        crate::qp::modify_qp(
            self.qp,
            &self.device,
            &mut attr,
            mask,
            "ibv_modify_qp (s3 binder INIT)",
            HINT,
        )?;
        let mtu = (raw::IBV_MTU_256..=raw::IBV_MTU_4096)
            .find(|&m| crate::context::mtu_bytes(m) == mtu_bytes)
            .unwrap_or(raw::IBV_MTU_1024);
        let itself = crate::RcRemote {
            qp_num,
            psn: 0,
            path,
            mtu_bytes,
            max_dest_rd_atomic: 0,
            min_rnr_timer: 12,
        };
        let (mut attr, mask) = crate::rc::rtr_attr(&itself, port, mtu);
        crate::qp::modify_qp(
            self.qp,
            &self.device,
            &mut attr,
            mask,
            "ibv_modify_qp (s3 binder RTR)",
            HINT,
        )?;
        let (mut attr, mask) = crate::qp::rts_attr(&RtsAttr::default());
        crate::qp::modify_qp(
            self.qp,
            &self.device,
            &mut attr,
            mask,
            "ibv_modify_qp (s3 binder RTS)",
            HINT,
        )
    }

    /// Binds `window` over `len` bytes at `addr` of region `mr` (registered with
    /// [`Access::MW_BIND`]) granting `access`, or unbinds it (`to` None); waits for the bind's
    /// completion. Either way the window takes a new key.
    ///
    /// # Errors
    /// EIO once a bind has failed (the binder's QP is in error; the client binds no more);
    /// `ibv_bind_mw`'s errno; the completion's status (IBV_WC_MW_BIND_ERR: the region does
    /// not allow binding, or the range is not in it), as EIO.
    pub(super) fn bind(&mut self, window: &mut Window, to: Option<(*mut raw::ibv_mr, u64, u64, Access)>) -> Result<()> {
        if self.broken {
            return Err(Error::from_errno(
                OP_BIND,
                libc::EIO,
                "an earlier bind failed and the client's binder is in error: create a new client",
            )
            .on(&self.device));
        }
        let (mr, addr, length, access) = to.unwrap_or((std::ptr::null_mut(), 0, 0, Access::none()));
        let mut bind = raw::ibv_mw_bind {
            wr_id: 0,
            send_flags: raw::IBV_SEND_SIGNALED,
            bind_info: raw::ibv_mw_bind_info {
                mr,
                addr,
                length,
                mw_access_flags: access.bits(),
            },
        };
        window.binds += 1;
        // SAFETY: the QP, window and region (when given) are live and of one PD.
        let rc = unsafe { raw::ibv_bind_mw(self.qp.as_ptr(), window.mw.as_ptr(), &mut bind) };
        if rc != 0 {
            return Err(Error::from_errno(OP_BIND, rc, "the window could not be bound").on(&self.device));
        }
        let deadline = Instant::now() + BIND_TIMEOUT;
        // SAFETY: plain data: all-zero is valid.
        let mut wc: raw::ibv_wc = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: the CQ is live; one entry of room.
            let n = unsafe { raw::ibv_poll_cq(self.cq.as_ptr(), 1, &mut wc) };
            if n > 0 {
                break;
            }
            if n < 0 || Instant::now() > deadline {
                self.broken = true;
                return Err(Error::from_errno(OP_BIND, libc::EIO, "the bind never completed").on(&self.device));
            }
            std::hint::spin_loop();
        }
        if wc.status != raw::IBV_WC_SUCCESS {
            self.broken = true;
            return Err(Error::from_errno(
                OP_BIND,
                libc::EIO,
                format!(
                    "the bind failed with completion status {} (a memory window bind error: the region must be registered with MW_BIND and hold the range)",
                    wc.status
                ),
            )
            .on(&self.device));
        }
        Ok(())
    }
}

impl Drop for Binder {
    fn drop(&mut self) {
        // SAFETY: created once, destroyed once, the QP before its CQ.
        unsafe {
            raw::ibv_destroy_qp(self.qp.as_ptr());
            raw::ibv_destroy_cq(self.cq.as_ptr());
        }
    }
}
