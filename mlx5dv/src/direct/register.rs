//! A BlueFlame register of a direct QP's own.
//!
//! libmlx5 lets several of its QPs share one BlueFlame register and serialises them with a lock
//! (`post_send_db` in providers/mlx5/qp.c takes `bf->lock` when `bf->need_lock`: the
//! kernel's medium-latency bfregs, and dynamic UARs shared once the dedicated ones are used up)
//! that the direct writer cannot take; the register's single `bf->offset` is libmlx5's too. So
//! a direct QP is created on a parent domain with a thread domain of its own, as UCX gives its
//! DCIs one (`uct_ib_mlx5_iface_get_res_domain` -> `ibv_alloc_td`): libmlx5 serves a thread
//! domain with a register nobody else uses (`mlx5_attach_dedicated_uar`), without a lock, and
//! the QP's BlueFlame offset is the writer's alone. Where the provider gives no thread domain
//! (no dynamic UARs, or all of them taken), a direct QP is refused: the register libmlx5 would
//! give it instead may be one its own QPs BlueFlame-copy into under that lock, and even an
//! 8-byte doorbell store from outside the lock can land inside such a copy (UCX's `DB_LOCK`
//! mode takes a lock of its own around its 8-byte store for the same reason).

use crate::error::{Error, Result};
use crate::pd::Pd;
use mlx5dv_raw as raw;
use std::ptr::NonNull;

/// A thread domain and the parent domain (over the QP's PD) a direct QP is created on; freed
/// after the QP.
pub(crate) struct OwnRegister {
    parent: NonNull<raw::ibv_pd>,
    td: NonNull<raw::ibv_td>,
}

// SAFETY: library objects used only at QP creation and freed once, on the last holder's thread.
unsafe impl Send for OwnRegister {}

impl OwnRegister {
    /// A thread domain and a parent domain over `pd`.
    ///
    /// # Errors
    /// `ibv_alloc_td`'s errno when the provider gives no thread domain (the direct backend
    /// cannot be used there: the message says to build the QP on the wr API), and
    /// `ibv_alloc_parent_domain`'s.
    pub(crate) fn new(pd: &Pd) -> Result<OwnRegister> {
        let ctx = pd.context();
        let mut td_attr = raw::ibv_td_init_attr { comp_mask: 0 };
        // SAFETY: the context is open; the attribute struct is initialised.
        let td = unsafe { raw::ibv_alloc_td(ctx.as_raw(), &mut td_attr) };
        let Some(td) = NonNull::new(td) else {
            return Err(Error::last_os_error(
                "ibv_alloc_td",
                "no thread domain, so no BlueFlame register of the QP's own, which the direct backend needs (libmlx5 may share the register it would give instead with its own QPs, under a lock the direct writer cannot take): build this QP with SendBackend::WrApi and a CQ from Context::create_cq, or free thread domains (each direct QP holds one)",
            )
            .on(ctx.name()));
        };
        let mut attr = raw::ibv_parent_domain_init_attr {
            pd: pd.as_raw(),
            td: td.as_ptr(),
            comp_mask: 0,
            alloc: None,
            free: None,
            pd_context: std::ptr::null_mut(),
        };
        // SAFETY: the context, PD and thread domain are live; attr is initialised.
        let parent = unsafe { raw::ibv_alloc_parent_domain(ctx.as_raw(), &mut attr) };
        let Some(parent) = NonNull::new(parent) else {
            let err = Error::last_os_error("ibv_alloc_parent_domain", "no parent domain for the thread domain")
                .on(ctx.name());
            // SAFETY: the thread domain made above, used by nothing.
            unsafe { raw::ibv_dealloc_td(td.as_ptr()) };
            return Err(err);
        };
        Ok(OwnRegister { parent, td })
    }

    /// The parent domain, given as the QP's PD at creation.
    pub(crate) fn pd(&self) -> *mut raw::ibv_pd {
        self.parent.as_ptr()
    }
}

impl Drop for OwnRegister {
    fn drop(&mut self) {
        // SAFETY: made once in `new`, freed once, after the QP created on them (the QP's
        // parents drop after it is destroyed). A failure (a QP that could not be destroyed
        // still holds them) leaves them allocated, which is all that can be done.
        unsafe {
            if raw::ibv_dealloc_pd(self.parent.as_ptr()) == 0 {
                raw::ibv_dealloc_td(self.td.as_ptr());
            }
        }
    }
}
