//! The uverbs write() commands (drivers/infiniband/core/uverbs_cmd.c) with mlx5_ib's driver
//! data (drivers/infiniband/hw/mlx5: main.c, cq.c, srq.c, qp.c, mr.c, ah.c).
//!
//! A legacy command is `ib_uverbs_cmd_hdr`, the core struct (starting with the response
//! pointer when the command has one), then driver data; an extended one adds
//! `ib_uverbs_ex_cmd_hdr` with the response pointer and the driver sizes in 8-byte words.

use super::{contexts, modify};
use crate::device::events::Owner;
use crate::device::objects::{Cq, Mr, Path, Pd, Qp, QpKind, Ring, Srq};
use crate::device::{self, Device};
use crate::profile::{self, LinkLayer};
use crate::uapi::ib_user_verbs::*;
use crate::uapi::mlx5_abi::*;
use crate::uapi::{read_struct, write_struct, Pod};
use std::sync::atomic::{AtomicU8, Ordering};

/// A decoded command: core and driver input, where the core and driver output go.
pub struct Cmd<'a> {
    /// Core input (after the headers).
    pub core: &'a [u8],
    /// Driver (udata) input.
    pub driver: &'a [u8],
    /// User address of the core response (0: none).
    pub resp: u64,
    /// Bytes of core response the caller has room for.
    pub resp_len: usize,
    /// User address of the driver response.
    pub driver_resp: u64,
    /// Bytes of driver response room.
    pub driver_resp_len: usize,
}

impl Cmd<'_> {
    fn req<T: Pod>(&self) -> T {
        read_struct(self.core)
    }
    fn udata<T: Pod>(&self) -> T {
        read_struct(self.driver)
    }
    fn respond<T: Pod>(&self, dev: &Device, v: &T) -> Result<(), i32> {
        put(dev, self.resp, self.resp_len, v)
    }
    fn respond_driver<T: Pod>(&self, dev: &Device, v: &T) -> Result<(), i32> {
        put(dev, self.driver_resp, self.driver_resp_len, v)
    }
}

/// Copies a response to user memory, truncated to the room given (ib_copy_to_udata).
fn put<T: Pod>(dev: &Device, addr: u64, room: usize, v: &T) -> Result<(), i32> {
    if room == 0 {
        return Ok(());
    }
    if addr == 0 {
        return Err(libc::EFAULT);
    }
    let mut buf = vec![0u8; room.min(std::mem::size_of::<T>())];
    write_struct(&mut buf, v);
    dev.dma.write(addr, &buf);
    Ok(())
}

/// Handles one write() of `buf` on device fd `fd`: Ok(bytes consumed) or Err(errno).
pub fn handle(fd: i32, buf: &[u8]) -> Result<usize, i32> {
    let hdr: ib_uverbs_cmd_hdr = read_struct(buf);
    if buf.len() < std::mem::size_of::<ib_uverbs_cmd_hdr>() {
        return Err(libc::EINVAL);
    }
    let extended = hdr.command & IB_USER_VERBS_CMD_FLAG_EXTENDED != 0;
    let command = hdr.command & IB_USER_VERBS_CMD_COMMAND_MASK;
    let (core_req, core_resp) = core_sizes(command, extended).ok_or(libc::EOPNOTSUPP)?;
    let cmd = if extended {
        let ex: ib_uverbs_ex_cmd_hdr = read_struct(&buf[8..]);
        let start = 8 + std::mem::size_of::<ib_uverbs_ex_cmd_hdr>();
        let core_len = usize::from(hdr.in_words) * 8;
        let drv_len = usize::from(ex.provider_in_words) * 8;
        if buf.len() != start + core_len + drv_len {
            return Err(libc::EINVAL);
        }
        let out = usize::from(hdr.out_words) * 8;
        Cmd {
            core: &buf[start..start + core_len],
            driver: &buf[start + core_len..],
            resp: ex.response,
            resp_len: out,
            driver_resp: ex.response + out as u64,
            driver_resp_len: usize::from(ex.provider_out_words) * 8,
        }
    } else {
        if usize::from(hdr.in_words) * 4 != buf.len() {
            return Err(libc::EINVAL);
        }
        let body = &buf[8..];
        let core_len = core_req.min(body.len());
        let out = usize::from(hdr.out_words) * 4;
        let resp = if core_resp > 0 && core_len >= 8 {
            u64::from_ne_bytes(body[..8].try_into().unwrap())
        } else {
            0
        };
        Cmd {
            core: &body[..core_len],
            driver: &body[core_len..],
            resp,
            resp_len: out.min(core_resp),
            driver_resp: resp + core_resp as u64,
            driver_resp_len: out.saturating_sub(core_resp),
        }
    };
    // Outside the device lock: the kernel resolves a neighbour per call, and a silent one
    // stalls only the thread that asked.
    if let Some(dgid) = unresolved_neighbour(command, extended, &cmd) {
        std::thread::sleep(crate::engine::timing::neighbour_timeout());
        crate::log(format_args!(
            "command {command}: the neighbour of GID {dgid:02x?} never answered: ETIMEDOUT"
        ));
        return Err(libc::ETIMEDOUT);
    }
    let mut dev = device::global();
    let r = if dev.fatal && !destroys(command, extended) {
        // Disassociated (super::device_fatal): no ucontext for a new object and no lookup but
        // for a destroy (rdma_core.c alloc_uobj, rdma_lookup_get_uobject): EIO.
        Err(libc::EIO)
    } else if let Some(e) = FAIL_COMMANDS.lock().unwrap_or_else(|p| p.into_inner()).take(command) {
        Err(e)
    } else {
        dispatch(&mut dev, fd, command, extended, &cmd)
    };
    drop(dev);
    if let Err(e) = r {
        crate::log(format_args!(
            "write command {command} (ex {extended}) failed: errno {e}"
        ));
    } else if command == IB_USER_VERBS_CMD_DESTROY_QP && !extended {
        hold_destroyed_qp();
    }
    r.map(|()| buf.len())
}

/// A test hook, not a kernel feature: once armed ([`HOLD_ARMED`]), the next thread whose
/// DESTROY_QP succeeds is held before the command returns to the library (the QP is destroyed
/// and its number free) until the hold is released ([`HOLD_OFF`]), as the scheduler may hold a
/// thread between the kernel's answer and the library's next step. One destroy only: the
/// holder's own QPs are destroyed as usual meanwhile. Exported to C by the interposer as
/// `soft_mlx5_test_hold_destroys`.
pub static HOLD_DESTROY: AtomicU8 = AtomicU8::new(HOLD_OFF);

/// [`HOLD_DESTROY`]: no destroy is or will be held.
pub const HOLD_OFF: u8 = 0;
/// [`HOLD_DESTROY`]: the next successful DESTROY_QP will be held.
pub const HOLD_ARMED: u8 = 1;
/// [`HOLD_DESTROY`]: a thread is held now.
pub const HOLDING: u8 = 2;

fn hold_destroyed_qp() {
    if HOLD_DESTROY
        .compare_exchange(HOLD_ARMED, HOLDING, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return;
    }
    while HOLD_DESTROY.load(Ordering::Acquire) == HOLDING {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Whether command `command` destroys an object: the kernel still serves those once the device
/// is disassociated (the object is gone already; the destroy frees its handle and answers
/// its event counts, which libibverbs waits on).
fn destroys(command: u32, extended: bool) -> bool {
    !extended
        && matches!(
            command,
            IB_USER_VERBS_CMD_DEALLOC_PD
                | IB_USER_VERBS_CMD_DEREG_MR
                | IB_USER_VERBS_CMD_DEALLOC_MW
                | IB_USER_VERBS_CMD_DESTROY_CQ
                | IB_USER_VERBS_CMD_DESTROY_QP
                | IB_USER_VERBS_CMD_DESTROY_SRQ
                | IB_USER_VERBS_CMD_DESTROY_AH
        )
}

/// Commands to fail ([`FAIL_COMMANDS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FailCommands {
    /// The command number (`IB_USER_VERBS_CMD_*`; an extended command has the same number).
    pub command: u32,
    /// How many more fail.
    pub left: u32,
    /// What they fail with.
    pub errno: i32,
}

impl FailCommands {
    /// Whether a command numbered `command` fails now, and with what (counted).
    pub fn take(&mut self, command: u32) -> Option<i32> {
        if self.left == 0 || self.command != command {
            return None;
        }
        self.left -= 1;
        crate::log(format_args!(
            "write command {command}: failed by the test hook (errno {}, {} more)",
            self.errno, self.left
        ));
        Some(self.errno)
    }
}

/// A test hook, not a kernel feature: the next [`FailCommands::left`] commands numbered
/// [`FailCommands::command`] fail with [`FailCommands::errno`] before they reach the device,
/// nothing changed, as mlx5_core fails a firmware command whose entry or mailbox it cannot
/// allocate under memory pressure (drivers/net/ethernet/mellanox/mlx5/core/cmd.c
/// `mlx5_alloc_cmd_msg`, `cmd_alloc_ent` (`alloc_cmd` before 5.x): kzalloc, ENOMEM), which the
/// next attempt may not meet.
/// Exported to C by the interposer as `soft_mlx5_test_fail_commands`.
pub static FAIL_COMMANDS: std::sync::Mutex<FailCommands> = std::sync::Mutex::new(FailCommands {
    command: 0,
    left: 0,
    errno: 0,
});

/// Core request and response sizes of each command this device implements.
fn core_sizes(command: u32, extended: bool) -> Option<(usize, usize)> {
    use std::mem::size_of as s;
    Some(match (command, extended) {
        (IB_USER_VERBS_CMD_GET_CONTEXT, false) => (s::<ib_uverbs_get_context>(), s::<ib_uverbs_get_context_resp>()),
        (IB_USER_VERBS_CMD_QUERY_DEVICE, false) => (s::<ib_uverbs_query_device>(), s::<ib_uverbs_query_device_resp>()),
        (IB_USER_VERBS_EX_CMD_QUERY_DEVICE, true) => {
            (s::<ib_uverbs_ex_query_device>(), s::<ib_uverbs_ex_query_device_resp>())
        }
        (IB_USER_VERBS_CMD_QUERY_PORT, false) => (s::<ib_uverbs_query_port>(), s::<ib_uverbs_query_port_resp>()),
        (IB_USER_VERBS_CMD_ALLOC_PD, false) => (s::<ib_uverbs_alloc_pd>(), s::<ib_uverbs_alloc_pd_resp>()),
        (IB_USER_VERBS_CMD_DEALLOC_PD, false) => (s::<ib_uverbs_dealloc_pd>(), 0),
        (IB_USER_VERBS_CMD_REG_MR, false) => (s::<ib_uverbs_reg_mr>(), s::<ib_uverbs_reg_mr_resp>()),
        (IB_USER_VERBS_CMD_REREG_MR, false) => (s::<ib_uverbs_rereg_mr>(), s::<ib_uverbs_rereg_mr_resp>()),
        (IB_USER_VERBS_CMD_DEREG_MR, false) => (s::<ib_uverbs_dereg_mr>(), 0),
        (IB_USER_VERBS_CMD_ALLOC_MW, false) => (s::<ib_uverbs_alloc_mw>(), s::<ib_uverbs_alloc_mw_resp>()),
        (IB_USER_VERBS_CMD_DEALLOC_MW, false) => (s::<ib_uverbs_dealloc_mw>(), 0),
        (IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, false) => (
            s::<ib_uverbs_create_comp_channel>(),
            s::<ib_uverbs_create_comp_channel_resp>(),
        ),
        (IB_USER_VERBS_CMD_CREATE_CQ, false) => (s::<ib_uverbs_create_cq>(), s::<ib_uverbs_create_cq_resp>()),
        (IB_USER_VERBS_EX_CMD_CREATE_CQ, true) => (s::<ib_uverbs_ex_create_cq>(), s::<ib_uverbs_ex_create_cq_resp>()),
        (IB_USER_VERBS_CMD_RESIZE_CQ, false) => (s::<ib_uverbs_resize_cq>(), s::<ib_uverbs_resize_cq_resp>()),
        (IB_USER_VERBS_CMD_DESTROY_CQ, false) => (s::<ib_uverbs_destroy_cq>(), s::<ib_uverbs_destroy_cq_resp>()),
        (IB_USER_VERBS_CMD_CREATE_QP, false) => (s::<ib_uverbs_create_qp>(), s::<ib_uverbs_create_qp_resp>()),
        (IB_USER_VERBS_EX_CMD_CREATE_QP, true) => (s::<ib_uverbs_ex_create_qp>(), s::<ib_uverbs_ex_create_qp_resp>()),
        (IB_USER_VERBS_CMD_MODIFY_QP, false) => (s::<ib_uverbs_modify_qp>(), 0),
        (IB_USER_VERBS_EX_CMD_MODIFY_QP, true) => (s::<ib_uverbs_ex_modify_qp>(), s::<ib_uverbs_ex_modify_qp_resp>()),
        (IB_USER_VERBS_CMD_QUERY_QP, false) => (s::<ib_uverbs_query_qp>(), s::<ib_uverbs_query_qp_resp>()),
        (IB_USER_VERBS_CMD_DESTROY_QP, false) => (s::<ib_uverbs_destroy_qp>(), s::<ib_uverbs_destroy_qp_resp>()),
        (IB_USER_VERBS_CMD_CREATE_SRQ, false) => (s::<ib_uverbs_create_srq>(), s::<ib_uverbs_create_srq_resp>()),
        (IB_USER_VERBS_CMD_MODIFY_SRQ, false) => (s::<ib_uverbs_modify_srq>(), 0),
        (IB_USER_VERBS_CMD_QUERY_SRQ, false) => (s::<ib_uverbs_query_srq>(), s::<ib_uverbs_query_srq_resp>()),
        (IB_USER_VERBS_CMD_DESTROY_SRQ, false) => (s::<ib_uverbs_destroy_srq>(), s::<ib_uverbs_destroy_srq_resp>()),
        (IB_USER_VERBS_CMD_CREATE_AH, false) => (s::<ib_uverbs_create_ah>(), s::<ib_uverbs_create_ah_resp>()),
        (IB_USER_VERBS_CMD_DESTROY_AH, false) => (s::<ib_uverbs_destroy_ah>(), 0),
        _ => return None,
    })
}

fn dispatch(dev: &mut Device, fd: i32, command: u32, extended: bool, cmd: &Cmd<'_>) -> Result<(), i32> {
    match (command, extended) {
        (IB_USER_VERBS_CMD_GET_CONTEXT, false) => get_context(dev, fd, cmd),
        (IB_USER_VERBS_CMD_QUERY_DEVICE, false) => cmd.respond(dev, &query_device_base(dev)),
        (IB_USER_VERBS_EX_CMD_QUERY_DEVICE, true) => query_device_ex(dev, cmd),
        (IB_USER_VERBS_CMD_QUERY_PORT, false) => query_port(dev, cmd),
        (IB_USER_VERBS_CMD_ALLOC_PD, false) => {
            let h = dev.handle();
            let pdn = dev.number();
            dev.pds.insert(h, Pd { pdn });
            cmd.respond(dev, &ib_uverbs_alloc_pd_resp { pd_handle: h })?;
            cmd.respond_driver(dev, &mlx5_ib_alloc_pd_resp { pdn })
        }
        (IB_USER_VERBS_CMD_DEALLOC_PD, false) => {
            let r: ib_uverbs_dealloc_pd = cmd.req();
            // ib_dealloc_pd_user: a PD still in use is busy (uobject usecnt).
            let busy = dev.mrs.values().any(|m| m.pd == r.pd_handle)
                || dev.qps.values().any(|q| q.pd == r.pd_handle)
                || dev.srqs.values().any(|s| s.pd == r.pd_handle);
            if busy {
                return Err(libc::EBUSY);
            }
            dev.pds.remove(&r.pd_handle).map(|_| ()).ok_or(libc::EINVAL)
        }
        (IB_USER_VERBS_CMD_REG_MR, false) => reg_mr(dev, cmd),
        (IB_USER_VERBS_CMD_REREG_MR, false) => rereg_mr(dev, cmd),
        (IB_USER_VERBS_CMD_DEREG_MR, false) => {
            let r: ib_uverbs_dereg_mr = cmd.req();
            let mr = dev.remove_mr(r.mr_handle).ok_or(libc::EINVAL)?;
            if dev.strict.mr_cache {
                let keys = dev
                    .mr_cache
                    .entry(mr_cache_class(mr.addr, mr.length, mr.access))
                    .or_default();
                keys.push(mr.lkey);
                if keys.len() > MR_CACHE_PER_CLASS {
                    keys.remove(0);
                }
            }
            Ok(())
        }
        (IB_USER_VERBS_CMD_ALLOC_MW, false) => {
            // uverbs_cmd.c ib_uverbs_alloc_mw: type 1 or 2 on a PD of the caller's; mlx5_ib
            // `mlx5_ib_alloc_mw` serves both with a free mkey whose key it returns.
            let r: ib_uverbs_alloc_mw = cmd.req();
            if !dev.pds.contains_key(&r.pd_handle) || !(1..=2).contains(&r.mw_type) {
                return Err(libc::EINVAL);
            }
            let key = dev.mkey();
            let h = dev.handle();
            dev.mws.insert(
                h,
                crate::device::objects::Mw {
                    pd: r.pd_handle,
                    mw_type: r.mw_type,
                    key,
                    bound: None,
                },
            );
            cmd.respond(
                dev,
                &ib_uverbs_alloc_mw_resp {
                    mw_handle: h,
                    rkey: key,
                },
            )
        }
        (IB_USER_VERBS_CMD_DEALLOC_MW, false) => {
            // mlx5_ib `mlx5_ib_dealloc_mw` destroys the mkey, bound or not.
            let r: ib_uverbs_dealloc_mw = cmd.req();
            dev.mws.remove(&r.mw_handle).map(|_| ()).ok_or(libc::EINVAL)
        }
        (IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, false) => {
            let rd = dev.events.create(std::mem::size_of::<ib_uverbs_comp_event_desc>())?;
            contexts().entry(fd).or_default().channels.push(rd);
            cmd.respond(dev, &ib_uverbs_create_comp_channel_resp { fd: rd as u32 })
        }
        (IB_USER_VERBS_CMD_CREATE_CQ, false) => {
            let r: ib_uverbs_create_cq = cmd.req();
            create_cq(dev, fd, cmd, r.user_handle, r.cqe, r.comp_vector, r.comp_channel)
        }
        (IB_USER_VERBS_EX_CMD_CREATE_CQ, true) => {
            let r: ib_uverbs_ex_create_cq = cmd.req();
            create_cq(dev, fd, cmd, r.user_handle, r.cqe, r.comp_vector, r.comp_channel)
        }
        (IB_USER_VERBS_CMD_RESIZE_CQ, false) => resize_cq(dev, cmd),
        (IB_USER_VERBS_CMD_DESTROY_CQ, false) => {
            let r: ib_uverbs_destroy_cq = cmd.req();
            // A CQ a QP still uses is busy (ib_destroy_cq_user: usecnt).
            if dev
                .qps
                .values()
                .any(|q| q.send_cq == Some(r.cq_handle) || q.recv_cq == Some(r.cq_handle))
            {
                return Err(libc::EBUSY);
            }
            dev.remove_cq(r.cq_handle).ok_or(libc::EINVAL)?;
            let comp = dev.events.release(Owner::Cq(r.cq_handle));
            let asynchronous = dev.events.release(Owner::CqAsync(r.cq_handle));
            cmd.respond(
                dev,
                &ib_uverbs_destroy_cq_resp {
                    comp_events_reported: comp,
                    async_events_reported: asynchronous,
                },
            )
        }
        (IB_USER_VERBS_CMD_CREATE_QP, false) => {
            let r: ib_uverbs_create_qp = cmd.req();
            let ex = ib_uverbs_ex_create_qp {
                user_handle: r.user_handle,
                pd_handle: r.pd_handle,
                send_cq_handle: r.send_cq_handle,
                recv_cq_handle: r.recv_cq_handle,
                srq_handle: r.srq_handle,
                max_send_wr: r.max_send_wr,
                max_recv_wr: r.max_recv_wr,
                max_send_sge: r.max_send_sge,
                max_recv_sge: r.max_recv_sge,
                max_inline_data: r.max_inline_data,
                sq_sig_all: r.sq_sig_all,
                qp_type: r.qp_type,
                is_srq: r.is_srq,
                ..Default::default()
            };
            create_qp(dev, fd, cmd, &ex, false)
        }
        (IB_USER_VERBS_EX_CMD_CREATE_QP, true) => {
            let r: ib_uverbs_ex_create_qp = cmd.req();
            create_qp(dev, fd, cmd, &r, true)
        }
        (IB_USER_VERBS_CMD_MODIFY_QP, false) => {
            let r: ib_uverbs_modify_qp = cmd.req();
            modify::modify_qp(dev, &r, None)
        }
        (IB_USER_VERBS_EX_CMD_MODIFY_QP, true) => {
            let r: ib_uverbs_ex_modify_qp = cmd.req();
            let mut dctn = None;
            modify::modify_qp_ex(dev, &r.base, cmd.driver, Some(&mut dctn))?;
            cmd.respond(
                dev,
                &ib_uverbs_ex_modify_qp_resp {
                    comp_mask: 0,
                    response_length: cmd.resp_len.min(8) as u32,
                },
            )?;
            if let Some(dctn) = dctn {
                let resp = mlx5_ib_modify_qp_resp {
                    response_length: std::mem::size_of::<mlx5_ib_modify_qp_resp>() as u32,
                    dctn,
                    ..Default::default()
                };
                cmd.respond_driver(dev, &resp)?;
            }
            Ok(())
        }
        (IB_USER_VERBS_CMD_QUERY_QP, false) => {
            let r: ib_uverbs_query_qp = cmd.req();
            let resp = modify::query_qp(dev, r.qp_handle, r.attr_mask)?;
            cmd.respond(dev, &resp)
        }
        (IB_USER_VERBS_CMD_DESTROY_QP, false) => {
            let r: ib_uverbs_destroy_qp = cmd.req();
            let qp = dev.destroy_qp(r.qp_handle).ok_or(libc::EINVAL)?;
            if let Some(bfregn) = qp.bfregn {
                super::free_bfreg(fd, bfregn);
            }
            let events_reported = dev.events.release(Owner::Qp(r.qp_handle));
            cmd.respond(dev, &ib_uverbs_destroy_qp_resp { events_reported })
        }
        (IB_USER_VERBS_CMD_CREATE_SRQ, false) => create_srq(dev, cmd),
        (IB_USER_VERBS_CMD_MODIFY_SRQ, false) => {
            let r: ib_uverbs_modify_srq = cmd.req();
            let srq = dev.srqs.get_mut(&r.srq_handle).ok_or(libc::EINVAL)?;
            // mlx5_ib_modify_srq: resizing is not supported, the limit is.
            if r.attr_mask & 1 != 0 {
                return Err(libc::EINVAL);
            }
            if r.attr_mask & 2 != 0 {
                srq.limit = r.srq_limit;
            }
            Ok(())
        }
        (IB_USER_VERBS_CMD_QUERY_SRQ, false) => {
            let r: ib_uverbs_query_srq = cmd.req();
            let srq = dev.srqs.get(&r.srq_handle).ok_or(libc::EINVAL)?;
            let resp = ib_uverbs_query_srq_resp {
                max_wr: srq.wqe_cnt - 1,
                max_sge: ((1u32 << srq.wqe_shift) - 16) / 16,
                srq_limit: srq.limit,
                ..Default::default()
            };
            cmd.respond(dev, &resp)
        }
        (IB_USER_VERBS_CMD_DESTROY_SRQ, false) => {
            let r: ib_uverbs_destroy_srq = cmd.req();
            if dev.qps.values().any(|q| q.srq == Some(r.srq_handle)) {
                return Err(libc::EBUSY);
            }
            dev.srqs.remove(&r.srq_handle).ok_or(libc::EINVAL)?;
            let events_reported = dev.events.release(Owner::Srq(r.srq_handle));
            cmd.respond(dev, &ib_uverbs_destroy_srq_resp { events_reported })
        }
        (IB_USER_VERBS_CMD_CREATE_AH, false) => create_ah(dev, cmd),
        (IB_USER_VERBS_CMD_DESTROY_AH, false) => {
            let r: ib_uverbs_destroy_ah = cmd.req();
            dev.ahs.remove(&r.ah_handle).map(|_| ()).ok_or(libc::EINVAL)
        }
        _ => Err(libc::EOPNOTSUPP),
    }
}

/// mlx5_ib_alloc_ucontext: the bfreg layout, CQE version 1, the limits libmlx5 sizes its
/// queues by, and the async event file.
fn get_context(dev: &mut Device, fd: i32, cmd: &Cmd<'_>) -> Result<(), i32> {
    let req: mlx5_ib_alloc_ucontext_req_v2 = cmd.udata();
    // mlx5_ib_alloc_ucontext: bfregs are asked in multiples of 4 per UAR, at most 512.
    if req.total_num_bfregs == 0 || req.total_num_bfregs > 512 || req.num_low_latency_bfregs > req.total_num_bfregs - 1
    {
        return Err(libc::EINVAL);
    }
    static NEXT_UID: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let mut next = NEXT_UID.load(std::sync::atomic::Ordering::Relaxed);
    let uid = super::devx_uid(dev.profile, req.flags, &mut next)?;
    NEXT_UID.store(next, std::sync::atomic::Ordering::Relaxed);
    let mut ctxs = contexts();
    let ctx = ctxs.entry(fd).or_default();
    if ctx.ready {
        return Err(libc::EINVAL);
    }
    ctx.devx_uid = uid;
    // mlx5_ib_alloc_ucontext: total_num_bfregs aligned to the bfregs of a system page (2 with
    // 4K UARs), num_static_sys_pages of them.
    ctx.bfreg_count = vec![0; req.total_num_bfregs.next_multiple_of(2) as usize];
    ctx.low_latency_bfregs = req.num_low_latency_bfregs;
    ctx.num_static_sys_pages = req.total_num_bfregs.div_ceil(2);
    let rd = dev.events.create(std::mem::size_of::<ib_uverbs_async_event_desc>())?;
    ctx.async_fd = Some(rd);
    ctx.ready = true;
    drop(ctxs);
    dev.async_fds.push(rd);
    let total = req.total_num_bfregs.next_multiple_of(4);
    let cqe_version = req.max_cqe_version.min(1);
    if let Some(ctx) = contexts().get_mut(&fd) {
        (ctx.tot_bfregs, ctx.cqe_version) = (total, cqe_version);
    }
    cmd.respond(
        dev,
        &ib_uverbs_get_context_resp {
            async_fd: rd as u32,
            num_comp_vectors: 1,
        },
    )?;
    cmd.respond_driver(dev, &ucontext_resp(dev, total, cqe_version))?;
    crate::engine::start();
    Ok(())
}

/// The driver part of the ucontext as GET_CONTEXT answers it and QUERY_CONTEXT repeats it
/// (mlx5_ib `set_ucontext_resp`, shared by mlx5_ib_alloc_ucontext and mlx5_ib_query_context).
pub(super) fn ucontext_resp(dev: &Device, total: u32, cqe_version: u8) -> mlx5_ib_alloc_ucontext_resp {
    mlx5_ib_alloc_ucontext_resp {
        qp_tab_size: profile::MAX_QP,
        bf_reg_size: super::BF_REG_SIZE,
        tot_bfregs: total,
        cache_line_size: 64,
        max_sq_desc_sz: profile::MAX_SQ_DESC_SZ as u16,
        max_rq_desc_sz: profile::MAX_RQ_DESC_SZ as u16,
        max_send_wqebb: profile::MAX_QP_WR,
        max_recv_wr: profile::MAX_QP_WR,
        max_srq_recv_wr: profile::MAX_SRQ_WR,
        num_ports: 1,
        comp_mask: 0,
        response_length: std::mem::size_of::<mlx5_ib_alloc_ucontext_resp>() as u32,
        cqe_version,
        cmds_supp_uhw: MLX5_USER_CMDS_SUPP_UHW_QUERY_DEVICE | MLX5_USER_CMDS_SUPP_UHW_CREATE_AH,
        eth_min_inline: if dev.profile.link_layer == LinkLayer::Ethernet {
            MLX5_USER_INLINE_MODE_NONE + 1
        } else {
            0
        },
        log_uar_size: 12,
        num_uars_per_page: 1,
        // mlx5_ib_alloc_ucontext: `calc_dynamic_bfregs` (4 KiB pages: MLX5_MAX_DYN_BFREGS,
        // 1024), rounded to whole system pages: the registers libmlx5 hands to thread domains
        // (`mlx5_attach_dedicated_uar`, legacy dynamic UARs mapped with MLX5_IB_MMAP_ALLOC_WC).
        num_dyn_bfregs: super::NUM_DYN_BFREGS,
        // mlx5_ib_alloc_ucontext: BIT(MLX5_IB_CLOCK_INFO_V1) when mlx5_core keeps a clock
        // info page (kernel/mod.rs write_clock_info).
        clock_info_versions: 1,
        ..Default::default()
    }
}

fn query_device_base(dev: &Device) -> ib_uverbs_query_device_resp {
    let p = dev.profile;
    ib_uverbs_query_device_resp {
        fw_ver: p.fw_ver(),
        node_guid: (profile::NODE_GUID_BASE + u64::from(dev.node)).to_be(),
        sys_image_guid: (profile::NODE_GUID_BASE + u64::from(dev.node)).to_be(),
        max_mr_size: profile::MAX_MR_SIZE,
        page_size_cap: 0xffff_f000,
        vendor_id: 0x02c9,
        vendor_part_id: p.vendor_part_id,
        hw_ver: 0,
        max_qp: profile::MAX_QP,
        max_qp_wr: profile::MAX_QP_WR,
        // IB_DEVICE_RC_RNR_NAK_GEN | PORT_ACTIVE_EVENT | SYS_IMAGE_GUID | RESIZE_MAX_WR ...
        device_cap_flags: 0x0003_1c36,
        max_sge: profile::MAX_SGE,
        max_sge_rd: profile::MAX_SGE,
        max_cq: 1 << 24,
        max_cqe: profile::MAX_CQE,
        max_mr: 1 << 24,
        max_pd: 1 << 24,
        max_qp_rd_atom: profile::MAX_QP_RD_ATOM,
        max_ee_rd_atom: 0,
        max_res_rd_atom: profile::MAX_QP_RD_ATOM * profile::MAX_QP,
        max_qp_init_rd_atom: profile::MAX_QP_INIT_RD_ATOM,
        max_ee_init_rd_atom: 0,
        // IB_ATOMIC_HCA (1) when the function has atomics, IB_ATOMIC_NONE otherwise.
        atomic_cap: u32::from(p.atomics),
        max_ee: 0,
        max_rdd: 0,
        max_mw: 1 << 24,
        max_raw_ipv6_qp: 0,
        max_raw_ethy_qp: 0,
        max_mcast_grp: 1 << 21,
        max_mcast_qp_attach: 240,
        max_total_mcast_qp_attach: 240 << 21,
        max_ah: i32::MAX as u32,
        max_fmr: 0,
        max_map_per_fmr: 0,
        max_srq: 1 << 23,
        max_srq_wr: profile::MAX_SRQ_WR,
        max_srq_sge: 31,
        max_pkeys: 128,
        local_ca_ack_delay: 16,
        phys_port_cnt: 1,
        ..Default::default()
    }
}

/// mlx5_ib_query_device with the mlx5 udata response (DCI streams caps among them).
fn query_device_ex(dev: &Device, cmd: &Cmd<'_>) -> Result<(), i32> {
    let p = dev.profile;
    let mut resp = ib_uverbs_ex_query_device_resp {
        base: query_device_base(dev),
        ..Default::default()
    };
    resp.response_length = cmd.resp_len.min(std::mem::size_of::<ib_uverbs_ex_query_device_resp>()) as u32;
    if p.odp {
        // IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT; RC send/recv/write/read/atomic/srq.
        resp.odp_caps.general_caps = 1 | 2;
        resp.odp_caps.per_transport_caps.rc_odp_caps = 0x3f;
        resp.odp_caps.per_transport_caps.ud_odp_caps = 0x3;
    }
    resp.timestamp_mask = (1 << 63) - 1;
    resp.hca_core_clock = 156_250;
    resp.max_dm_size = 0;
    cmd.respond(dev, &resp)?;
    let mut m = mlx5_ib_query_device_resp {
        response_length: std::mem::size_of::<mlx5_ib_query_device_resp>() as u32,
        ..Default::default()
    };
    if let Some((c, e)) = p.dci_streams {
        // libmlx5 takes the caps when the response is long enough to hold them.
        m.dci_streams_caps = mlx5_ib_dci_streams_caps {
            max_log_num_concurent: c,
            max_log_num_errored: e,
        };
    }
    if p.ooo_dp {
        // mlx5_ib_query_device (Linux 6.10+): dp_ordering_force and a dp_ordering_ooo_all_*
        // cap make it report out-of-order data placement; libmlx5 55+ then reads the per
        // transport caps from the HCA cap page (kernel/ioctl.rs).
        m.flags |= super::modify::MLX5_IB_QUERY_DEV_RESP_FLAGS_OOO_DP;
    }
    cmd.respond_driver(dev, &m)
}

/// mlx5_query_port via ib_query_port: active, MTU 4096, LID on InfiniBand.
fn query_port(dev: &Device, cmd: &Cmd<'_>) -> Result<(), i32> {
    let r: ib_uverbs_query_port = cmd.req();
    // ib_query_port: rdma_is_port_valid.
    if r.port_num != 1 {
        return Err(libc::EINVAL);
    }
    let p = dev.profile;
    let eth = p.link_layer == LinkLayer::Ethernet;
    let resp = ib_uverbs_query_port_resp {
        // IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP ... ; on RoCE IB_PORT_IP_BASED_GIDS.
        port_cap_flags: if eth { 0x0401_0000 | (1 << 26) } else { 0x2651_e848 },
        // mlx5_query_hca_port / mlx5_query_port_roce: 1 << MLX5_CAP_GEN(mdev, log_max_msg).
        max_msg_sz: dev.max_msg_sz() as u32,
        gid_tbl_len: p.gid_tbl_len(),
        // mlx5_query_port_roce: 1 on RoCE; on InfiniBand the programmed table (see
        // engine::headers::pkey_table).
        pkey_tbl_len: crate::engine::headers::pkey_table(p).len() as u16,
        lid: p.lid_of(dev.node),
        sm_lid: p.lid_of(0),
        state: dev.port_state as u8,
        max_mtu: 5,
        active_mtu: if eth { 3 } else { 5 },
        lmc: 0,
        max_vl_num: 4,
        sm_sl: 0,
        subnet_timeout: 18,
        active_width: 2,
        active_speed: if eth { 0x40 } else { 0x20 },
        phys_state: 5,
        link_layer: if eth { 2 } else { 1 },
        ..Default::default()
    };
    cmd.respond(dev, &resp)
}

/// IB_ACCESS_* bits the kernel knows: the mandatory ones up to FLUSH_PERSISTENT and the
/// optional range, which a kernel ignores when it does not support a bit (ib_check_mr_access).
const ACCESS_MANDATORY: u32 = (1 << 10) - 1;

/// mlx5_ib_reg_user_mr after ib_check_mr_access.
fn reg_mr(dev: &mut Device, cmd: &Cmd<'_>) -> Result<(), i32> {
    let r: ib_uverbs_reg_mr = cmd.req();
    check_mr_access(dev, r.access_flags)?;
    if !dev.pds.contains_key(&r.pd_handle) {
        return Err(libc::EINVAL);
    }
    if r.length == 0 || r.start.checked_add(r.length).is_none() {
        return Err(libc::EINVAL);
    }
    // ib_umem_get pins the pages (kernel/pin.rs): EFAULT where mm/gup.c refuses.
    pin_user_range(dev, r.start, r.length, r.access_flags)?;
    let cached = dev
        .strict
        .mr_cache
        .then(|| {
            dev.mr_cache
                .get_mut(&mr_cache_class(r.hca_va, r.length, r.access_flags))?
                .pop()
        })
        .flatten();
    let key = match cached {
        Some(k) => k,
        None => dev.mkey(),
    };
    let h = dev.handle();
    dev.insert_mr(
        h,
        Mr {
            pd: r.pd_handle,
            addr: r.hca_va,
            length: r.length,
            lkey: key,
            rkey: key,
            access: r.access_flags,
        },
    );
    cmd.respond(
        dev,
        &ib_uverbs_reg_mr_resp {
            mr_handle: h,
            lkey: key,
            rkey: key,
        },
    )
}

/// Keys the MR cache keeps per class (mlx5_ib sizes its entries by use; a bound keeps the
/// model's memory flat).
const MR_CACHE_PER_CLASS: usize = 256;

/// The MR cache entry a region of `length` bytes at `addr` with `access` falls in: mlx5_ib
/// (mr.c) keys its cache by `mlx5r_cache_rb_key` — the translation entries (4 KiB pages
/// here, `ib_umem_num_dma_blocks`) and `get_unchangeable_access_flags` (remote atomic and
/// relaxed ordering; the others a UMR rewrites). `mlx5_revoke_mr` ->
/// `cache_ent_find_and_store` keeps a deregistered region's mkey there, key unchanged, and
/// `alloc_cacheable_mr` -> `_mlx5_mr_cache_alloc` hands the most recently stored one to the
/// next registration of its class: so a revoked region's key comes back whole.
fn mr_cache_class(addr: u64, length: u64, access: u32) -> (u64, u32) {
    use crate::uapi::ioctl::{IB_UVERBS_ACCESS_RELAXED_ORDERING, IB_UVERBS_ACCESS_REMOTE_ATOMIC};
    let pages = (addr + length).div_ceil(4096) - addr / 4096;
    (
        pages,
        access & (IB_UVERBS_ACCESS_REMOTE_ATOMIC | IB_UVERBS_ACCESS_RELAXED_ORDERING),
    )
}

/// ib_check_mr_access: remote write or atomic needs local write; ODP needs the device cap.
fn check_mr_access(dev: &Device, access: u32) -> Result<(), i32> {
    use crate::uapi::ioctl::{
        IB_UVERBS_ACCESS_LOCAL_WRITE as LOCAL_WRITE, IB_UVERBS_ACCESS_ON_DEMAND as ON_DEMAND,
        IB_UVERBS_ACCESS_OPTIONAL_FIRST, IB_UVERBS_ACCESS_OPTIONAL_LAST,
        IB_UVERBS_ACCESS_REMOTE_ATOMIC as REMOTE_ATOMIC, IB_UVERBS_ACCESS_REMOTE_WRITE as REMOTE_WRITE,
    };
    let optional = (IB_UVERBS_ACCESS_OPTIONAL_LAST << 1) - IB_UVERBS_ACCESS_OPTIONAL_FIRST;
    if access & !(ACCESS_MANDATORY | optional) != 0 {
        return Err(libc::EINVAL);
    }
    // Remote write or atomic access needs local write.
    if access & (REMOTE_WRITE | REMOTE_ATOMIC) != 0 && access & LOCAL_WRITE == 0 {
        return Err(libc::EINVAL);
    }
    // mlx5_ib_reg_user_mr: ODP needs the device's ODP support.
    if access & ON_DEMAND != 0 && !dev.profile.odp {
        return Err(libc::EOPNOTSUPP);
    }
    Ok(())
}

/// ib_uverbs_rereg_mr: IB_MR_REREG_TRANS 1, _PD 2, _ACCESS 4.
fn rereg_mr(dev: &mut Device, cmd: &Cmd<'_>) -> Result<(), i32> {
    let r: ib_uverbs_rereg_mr = cmd.req();
    if r.flags == 0 || r.flags & !7 != 0 {
        return Err(libc::EINVAL);
    }
    if r.flags & 4 != 0 {
        check_mr_access(dev, r.access_flags)?;
    }
    if r.flags & 2 != 0 && !dev.pds.contains_key(&r.pd_handle) {
        return Err(libc::EINVAL);
    }
    let cur_access = dev.mrs.get(&r.mr_handle).ok_or(libc::EINVAL)?.access;
    // mlx5_ib_rereg_user_mr: a new translation is a new ib_umem_get of the new range.
    if r.flags & 1 != 0 {
        let access = if r.flags & 4 != 0 { r.access_flags } else { cur_access };
        pin_user_range(dev, r.start, r.length, access)?;
    }
    let mr = dev.mrs.get_mut(&r.mr_handle).ok_or(libc::EINVAL)?;
    if r.flags & 1 != 0 {
        mr.addr = r.hca_va;
        mr.length = r.length;
    }
    if r.flags & 2 != 0 {
        mr.pd = r.pd_handle;
    }
    if r.flags & 4 != 0 {
        mr.access = r.access_flags;
    }
    let (lkey, rkey) = (mr.lkey, mr.rkey);
    cmd.respond(dev, &ib_uverbs_rereg_mr_resp { lkey, rkey })
}

/// mlx5_ib_create_cq (create_cq_user): a power-of-two ring of `cqe + 1` 64-byte entries.
#[allow(clippy::too_many_arguments)]
fn create_cq(
    dev: &mut Device,
    fd: i32,
    cmd: &Cmd<'_>,
    user_handle: u64,
    cqe: u32,
    comp_vector: u32,
    channel: i32,
) -> Result<(), i32> {
    let u: mlx5_ib_create_cq = cmd.udata();
    // The UAR page the library arms CQs through (libmlx5 mlx5_arm_cq: its first) may have
    // been mapped behind the interposer.
    super::learn_page(dev, fd, 0);
    if cqe == 0 || cqe > profile::MAX_CQE {
        return Err(libc::EINVAL);
    }
    // create_cq (uverbs_cmd.c): the completion vector must exist (num_comp_vectors is 1).
    if comp_vector >= 1 {
        return Err(libc::EINVAL);
    }
    // mlx5_ib_create_cq: entries = roundup_pow_of_two(cqe + 1).
    let ncqe = (cqe + 1).next_power_of_two();
    // mlx5_ib create_cq_user: 64- or 128-byte CQEs (the 64-byte CQE sits in the second half
    // of a 128-byte one; nothing is scattered into the first, as with cs_res off).
    if u.cqe_size != 64 && u.cqe_size != 128 {
        return Err(libc::EINVAL);
    }
    let channel = if channel >= 0 {
        let ctxs = contexts();
        Some(
            *ctxs
                .get(&fd)
                .and_then(|c| c.channels.iter().find(|&&ch| ch == channel))
                .ok_or(libc::EINVAL)?,
        )
    } else {
        None
    };
    let h = dev.handle();
    let cqn = dev.number();
    // Every arm of this CQ must change its arm record (completer.rs ARM_RECORD_UNARMED).
    crate::engine::completer::init_arm_record(dev.dma.as_ref(), u.db_addr);
    dev.insert_cq(
        h,
        Cq {
            user_handle,
            cqn,
            buf: u.buf_addr,
            db: u.db_addr,
            ncqe,
            cqe_size: u.cqe_size,
            pi: 0,
            channel,
            armed_sn: None,
            last_arm: None,
            overrun: false,
        },
    );
    cmd.respond(
        dev,
        &ib_uverbs_create_cq_resp {
            cq_handle: h,
            cqe: ncqe - 1,
        },
    )?;
    cmd.respond_driver(dev, &mlx5_ib_create_cq_resp { cqn, reserved: 0 })
}

/// ib_uverbs_resize_cq -> mlx5_ib_resize_cq (resize_user) -> MODIFY_CQ with op_mod RESIZE: the
/// same checks on `entries` as create, a no-op when the rounded size is the current one, the
/// new ring from the udata (64-byte CQEs, as at create), then the firmware's switch
/// ([`crate::engine::completer::resize`]). The response carries the new `cqe`.
fn resize_cq(dev: &mut Device, cmd: &Cmd<'_>) -> Result<(), i32> {
    let r: ib_uverbs_resize_cq = cmd.req();
    let u: mlx5_ib_resize_cq = cmd.udata();
    let cur = dev.cqs.get(&r.cq_handle).ok_or(libc::EINVAL)?.ncqe;
    // mlx5_ib_resize_cq: entries against 1 << log_max_cq_sz (MAX_CQE + 1), then rounded up to a
    // power of two with room for one more, against the same bound plus one.
    let max = profile::MAX_CQE + 1;
    if r.cqe > max {
        return Err(libc::EINVAL);
    }
    let entries = (r.cqe + 1).next_power_of_two();
    if entries > max + 1 {
        return Err(libc::EINVAL);
    }
    if entries != cur {
        // resize_user: reserved fields must be zero, the CQE size 64 or 128 and the one the
        // CQ has (copy_resize_cqes refuses a change of size).
        let size = dev.cqs.get(&r.cq_handle).map_or(64, |c| c.cqe_size);
        if u.reserved0 != 0 || u.reserved1 != 0 || u32::from(u.cqe_size) != size || u.buf_addr == 0 {
            return Err(libc::EINVAL);
        }
        // The HCA executes WQEs rung before this command in microseconds, long before the
        // command mailbox reaches the firmware; the device thread here may lag by a scheduler
        // slice. Run the data path until it rests, so the firmware's outstanding-CQE check
        // sees what hardware would (rdma-core's test_resize_cq posts six sends and resizes at
        // once).
        crate::engine::settle(dev);
        crate::engine::completer::resize(dev, r.cq_handle, u.buf_addr, entries)
            .map_err(crate::kernel::prm::cmd_status_to_errno)?;
    }
    cmd.respond(
        dev,
        &ib_uverbs_resize_cq_resp {
            cqe: entries - 1,
            reserved: 0,
        },
    )
}

/// mlx5_ib_create_srq: stride = next power of two of (next segment + max_sge data segments),
/// ring = next power of two of max_wr + 1.
fn create_srq(dev: &mut Device, cmd: &Cmd<'_>) -> Result<(), i32> {
    let r: ib_uverbs_create_srq = cmd.req();
    let u: mlx5_ib_create_srq = cmd.udata();
    if !dev.pds.contains_key(&r.pd_handle) {
        return Err(libc::EINVAL);
    }
    // mlx5_ib_create_srq checks max_wr only against the device's maximum (max_wr 0 makes a
    // ring of roundup_pow_of_two(0 + 1) = 1 entry, as pyverbs' SrqInitAttr() asks).
    if r.max_wr >= profile::MAX_SRQ_WR || r.max_sge > 31 {
        return Err(libc::EINVAL);
    }
    let wqe_cnt = (r.max_wr + 1).next_power_of_two();
    let desc = (16 + 16 * r.max_sge.max(1)).next_power_of_two();
    let wqe_shift = desc.trailing_zeros();
    let max_sge = (desc - 16) / 16;
    let h = dev.handle();
    let srqn = dev.number();
    dev.srqs.insert(
        h,
        Srq {
            user_handle: r.user_handle,
            srqn,
            pd: r.pd_handle,
            buf: u.buf_addr,
            db: u.db_addr,
            wqe_cnt,
            wqe_shift,
            head: 0,
            taken: 0,
            limit: r.srq_limit,
            uidx: u.uidx & 0xff_ffff,
            cyclic: false,
        },
    );
    cmd.respond(
        dev,
        &ib_uverbs_create_srq_resp {
            srq_handle: h,
            max_wr: wqe_cnt - 1,
            max_sge,
            srqn,
        },
    )?;
    cmd.respond_driver(dev, &mlx5_ib_create_srq_resp { srqn, reserved: 0 })
}

/// The DGID whose MAC the kernel cannot resolve, for a command that resolves one on RoCE:
/// CREATE_AH (`rdma_create_user_ah`) and MODIFY_QP with an address vector on an RC/UC QP
/// (`_ib_modify_qp`: `is_qp_type_connected`), both through `ib_resolve_eth_dmac`, once the
/// source GID entry was found (`rdma_fill_sgid_attr` comes first; its errors are the command's
/// own). Multicast DGIDs map to a MAC, and a link-local DGID from a RoCE v1 source GID takes
/// its MAC from the GID (`ib_resolve_unicast_gid_dmac`); any other is resolved through the IP
/// neighbour table, which times out (`rdma_resolve_ip`, ETIMEDOUT) for an address whose
/// neighbour never answers: one `SOFT_MLX5_SILENT_GID` names, or one no node of the fabric has.
fn unresolved_neighbour(command: u32, extended: bool, cmd: &Cmd<'_>) -> Option<[u8; 16]> {
    let (sgid_index, dgid) = match (command, extended) {
        (IB_USER_VERBS_CMD_CREATE_AH, false) => {
            let r: ib_uverbs_create_ah = cmd.req();
            if r.attr.is_global == 0 {
                return None;
            }
            (r.attr.grh.sgid_index, r.attr.grh.dgid)
        }
        (IB_USER_VERBS_CMD_MODIFY_QP, false) | (IB_USER_VERBS_EX_CMD_MODIFY_QP, true) => {
            let r: ib_uverbs_modify_qp = cmd.req();
            if r.attr_mask & modify::mask::AV == 0 || r.dest.is_global == 0 {
                return None;
            }
            let kind = device::global().qps.get(&r.qp_handle).map(|q| q.kind);
            if !matches!(kind, Some(QpKind::Rc | QpKind::Uc)) {
                return None;
            }
            (r.dest.sgid_index, r.dest.dgid)
        }
        _ => return None,
    };
    let profile = device::global().profile;
    if profile.link_layer != LinkLayer::Ethernet || modify::sgid_entry(profile, sgid_index).is_err() || dgid[0] == 0xff
    {
        return None;
    }
    // The emulated port's GID 0 is its RoCE v1 one (sysfs gid_attrs/types).
    let link_local = dgid[0] == 0xfe && dgid[1] & 0xc0 == 0x80;
    if link_local && sgid_index == 0 {
        return None;
    }
    let on_fabric = profile.node_of_gid(&dgid).is_some();
    (silent_neighbour(&dgid) || !on_fabric).then_some(dgid)
}

/// Whether `gid` is an IPv4-mapped address (`::ffff:a.b.c.d`) whose dotted form starts with
/// one of the comma-separated prefixes of `SOFT_MLX5_SILENT_GID` (e.g. `10.78.200.`): an
/// on-link address whose neighbour never answers ARP, so the kernel's resolution for
/// `ibv_create_ah` waits out its timeout ([`crate::engine::timing::neighbour_timeout`]).
fn silent_neighbour(gid: &[u8; 16]) -> bool {
    let Ok(list) = std::env::var("SOFT_MLX5_SILENT_GID") else {
        return false;
    };
    if gid[..10] != [0; 10] || gid[10..12] != [0xff, 0xff] {
        return false;
    }
    let ip = format!("{}.{}.{}.{}", gid[12], gid[13], gid[14], gid[15]);
    list.split(',').any(|p| !p.is_empty() && ip.starts_with(p.trim()))
}

/// mlx5_ib_create_ah: on RoCE the GRH is mandatory and the MAC is resolved.
fn create_ah(dev: &mut Device, cmd: &Cmd<'_>) -> Result<(), i32> {
    let r: ib_uverbs_create_ah = cmd.req();
    if !dev.pds.contains_key(&r.pd_handle) || r.attr.port_num != 1 {
        return Err(libc::EINVAL);
    }
    if dev.profile.link_layer == LinkLayer::Ethernet && r.attr.is_global == 0 {
        return Err(libc::EINVAL);
    }
    // ib_uverbs create_ah -> rdma_create_user_ah -> rdma_fill_sgid_attr.
    if r.attr.is_global != 0 {
        super::modify::sgid_entry(dev.profile, r.attr.grh.sgid_index)?;
    }
    let h = dev.handle();
    let path = Path {
        dlid: r.attr.dlid,
        is_global: r.attr.is_global != 0,
        dgid: r.attr.grh.dgid,
        sgid_index: r.attr.grh.sgid_index,
        hop_limit: r.attr.grh.hop_limit,
        traffic_class: r.attr.grh.traffic_class,
        flow_label: r.attr.grh.flow_label,
        sl: r.attr.sl,
        port: r.attr.port_num,
    };
    dev.ahs.insert(h, crate::device::objects::Ah { pd: r.pd_handle, path });
    cmd.respond(dev, &ib_uverbs_create_ah_resp { ah_handle: h })?;
    let mut dmac = [0u8; 6];
    dmac.copy_from_slice(&[0x02, 0xc9, 0, 0, r.attr.grh.dgid[14], r.attr.grh.dgid[15]]);
    cmd.respond_driver(
        dev,
        &mlx5_ib_create_ah_resp {
            response_length: 16,
            dmac,
            reserved: [0; 6],
        },
    )
}

/// create_dci: DCI streams bounded by the device's log_max_dci_stream_channels and
/// log_max_dci_errored_streams (EINVAL beyond them, or without streams).
pub fn dci_streams_allowed(profile: &profile::Profile, log_concurrent: u8, log_errored: u8) -> Result<(u8, u8), i32> {
    match profile.dci_streams {
        Some((mc, me)) if log_concurrent <= mc && log_errored <= me => Ok((log_concurrent, log_errored)),
        _ => Err(libc::EINVAL),
    }
}

/// ib_umem_get's pin of a registration's range (kernel/pin.rs), unless SOFT_MLX5_PIN_STRICT=0.
pub fn pin_user_range(dev: &Device, start: u64, len: u64, access: u32) -> Result<(), i32> {
    if dev.strict.pin {
        super::pin::check(start, len, access)
    } else {
        Ok(())
    }
}

/// mlx5_ib_create_qp: RC/UC/UD through the core types, DCI/DCT through IB_QPT_DRIVER with the
/// mlx5 flags (create_dci / create_dct), each with the checks that decide the outcome.
fn create_qp(dev: &mut Device, fd: i32, cmd: &Cmd<'_>, r: &ib_uverbs_ex_create_qp, ex: bool) -> Result<(), i32> {
    let u: mlx5_ib_create_qp = cmd.udata();
    if !dev.pds.contains_key(&r.pd_handle) {
        return Err(libc::EINVAL);
    }
    const IB_QPT_RC: u8 = 2;
    const IB_QPT_UC: u8 = 3;
    const IB_QPT_UD: u8 = 4;
    const IB_QPT_DRIVER: u8 = 0xff;
    let kind = match r.qp_type {
        IB_QPT_RC => QpKind::Rc,
        IB_QPT_UC => QpKind::Uc,
        IB_QPT_UD => QpKind::Ud,
        IB_QPT_DRIVER => {
            // process_vendor_flags: exactly one of TYPE_DCI / TYPE_DCT.
            let dci = u.flags & MLX5_QP_FLAG_TYPE_DCI != 0;
            let dct = u.flags & MLX5_QP_FLAG_TYPE_DCT != 0;
            match (dci, dct) {
                (true, false) => QpKind::Dci,
                (false, true) => QpKind::Dct,
                _ => return Err(libc::EINVAL),
            }
        }
        _ => return Err(libc::EOPNOTSUPP),
    };
    let cq_ok = |h: u32| dev.cqs.contains_key(&h);
    let srq = (r.is_srq != 0).then_some(r.srq_handle);
    if let Some(s) = srq {
        if !dev.srqs.contains_key(&s) {
            return Err(libc::EINVAL);
        }
    }
    if kind == QpKind::Dct {
        // create_dct: needs an SRQ and a receive CQ.
        if srq.is_none() || !cq_ok(r.recv_cq_handle) {
            return Err(libc::EINVAL);
        }
    } else if !cq_ok(r.send_cq_handle) || (srq.is_none() && kind != QpKind::Dci && !cq_ok(r.recv_cq_handle)) {
        return Err(libc::EINVAL);
    }
    // Capacity: mlx5_ib's calc_sq_size / set_rq_size against the device maxima.
    if r.max_send_wr > profile::MAX_QP_WR
        || r.max_recv_wr > profile::MAX_QP_WR
        || r.max_send_sge > profile::MAX_SGE
        || r.max_recv_sge > profile::MAX_SGE
    {
        return Err(libc::EINVAL);
    }
    if kind != QpKind::Dct
        && (u.sq_wqe_count > profile::MAX_QP_WR || u.sq_wqe_count.count_ones() > 1 || u.rq_wqe_count.count_ones() > 1)
    {
        return Err(libc::EINVAL);
    }
    let mut dci_streams = None;
    if kind == QpKind::Dci && u.flags & MLX5_QP_FLAG_DCI_STREAM != 0 {
        let (c, e) = (u.dci_streams.log_num_concurent, u.dci_streams.log_num_errored);
        dci_streams = Some(dci_streams_allowed(dev.profile, c, e)?);
    }
    let rq = Ring {
        base: u.buf_addr,
        cnt: u.rq_wqe_count,
        shift: u.rq_wqe_shift,
    };
    let sq_base = u.buf_addr + (u64::from(u.rq_wqe_count) << u.rq_wqe_shift);
    let sq = Ring {
        base: sq_base,
        cnt: if kind == QpKind::Dct { 0 } else { u.sq_wqe_count },
        shift: 6,
    };
    let has_recv_cq = cq_ok(r.recv_cq_handle);
    let h = dev.handle();
    // A DCT gets its number at RTR (mlx5_ib_modify_dct creates the firmware object there).
    let qpn = if kind == QpKind::Dct { 0 } else { dev.qpn()? };
    // create_user_qp: the register the library chose (MLX5_QP_FLAG_BFREG_INDEX, a dynamic
    // UAR), else mlx5_ib's allocation; a DCT sends nothing and gets none.
    let (bfregn, bfreg_index) = if kind == QpKind::Dct || u.flags & MLX5_QP_FLAG_BFREG_INDEX != 0 {
        (None, u.bfreg_index)
    } else {
        let n = super::alloc_bfreg(fd);
        (Some(n), super::adjust_bfregn(n))
    };
    // The register libmlx5 will write this QP's doorbells to: mlx5_ib's choice, or the
    // dynamic one the library chose (whose UAR page it must have mapped: mlx5_ib
    // bfregn_to_uar_index fails the create with EINVAL otherwise).
    // The page of the QP's register may have been mapped behind the interposer.
    if kind != QpKind::Dct {
        let page = if bfregn.is_some() {
            Some(bfreg_index / 4)
        } else {
            super::dyn_sys_page(fd, bfreg_index)
        };
        if let Some(p) = page {
            super::learn_page(dev, fd, p);
        }
    }
    let bf = if kind == QpKind::Dct {
        None
    } else if bfregn.is_some() {
        super::bf_register(fd, bfreg_index, false)
    } else {
        Some(super::bf_register(fd, bfreg_index, true).ok_or(libc::EINVAL)?)
    };
    let qp = Qp {
        bfregn,
        user_handle: r.user_handle,
        send_cq: (kind != QpKind::Dct).then_some(r.send_cq_handle),
        recv_cq: has_recv_cq.then_some(r.recv_cq_handle),
        srq,
        uidx: u.uidx & 0xff_ffff,
        db: u.db_addr,
        sq,
        rq,
        max_inline_data: r.max_inline_data,
        max_send_sge: r.max_send_sge,
        sq_sig_all: r.sq_sig_all != 0,
        dc_key: if kind == QpKind::Dct { u.access_key() } else { 0 },
        dci_streams,
        // process_vendor_flags: MLX5_QP_FLAG_SIGNATURE makes mlx5_ib set qpc.wq_signature.
        wq_sig: kind != QpKind::Dct && u.flags & MLX5_QP_FLAG_SIGNATURE != 0,
        bf,
        ..Qp::new(kind, qpn, r.pd_handle)
    };
    crate::log(format_args!(
        "create {kind:?} qpn {qpn:#x} uidx {} sq {} rq {}",
        qp.uidx, qp.sq.cnt, qp.rq.cnt
    ));
    dev.insert_qp(h, qp);
    if kind != QpKind::Dct {
        dev.qpn_to_handle.insert(qpn, h);
    }
    let base = ib_uverbs_create_qp_resp {
        qp_handle: h,
        qpn,
        max_send_wr: r.max_send_wr,
        max_recv_wr: r.max_recv_wr,
        max_send_sge: r.max_send_sge,
        max_recv_sge: r.max_recv_sge,
        max_inline_data: r.max_inline_data,
        ..Default::default()
    };
    if ex {
        cmd.respond(
            dev,
            &ib_uverbs_ex_create_qp_resp {
                base,
                comp_mask: 0,
                response_length: cmd.resp_len as u32,
            },
        )?;
    } else {
        cmd.respond(dev, &base)?;
    }
    cmd.respond_driver(
        dev,
        &mlx5_ib_create_qp_resp {
            bfreg_index,
            ..Default::default()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_disassociation_only_the_destroys_reach_the_device() {
        for c in [
            IB_USER_VERBS_CMD_DEALLOC_PD,
            IB_USER_VERBS_CMD_DEREG_MR,
            IB_USER_VERBS_CMD_DEALLOC_MW,
            IB_USER_VERBS_CMD_DESTROY_CQ,
            IB_USER_VERBS_CMD_DESTROY_QP,
            IB_USER_VERBS_CMD_DESTROY_SRQ,
            IB_USER_VERBS_CMD_DESTROY_AH,
        ] {
            assert!(destroys(c, false), "command {c}");
        }
        for c in [
            IB_USER_VERBS_CMD_GET_CONTEXT,
            IB_USER_VERBS_CMD_QUERY_PORT,
            IB_USER_VERBS_CMD_CREATE_CQ,
            IB_USER_VERBS_CMD_MODIFY_QP,
            IB_USER_VERBS_CMD_REG_MR,
            IB_USER_VERBS_CMD_CREATE_AH,
        ] {
            assert!(!destroys(c, false), "command {c}");
        }
        assert!(!destroys(IB_USER_VERBS_EX_CMD_MODIFY_QP, true));
    }

    #[test]
    fn the_failure_hook_fails_exactly_the_next_commands_of_its_number() {
        let mut f = FailCommands {
            command: IB_USER_VERBS_CMD_MODIFY_QP,
            left: 2,
            errno: libc::ENOMEM,
        };
        assert_eq!(f.take(IB_USER_VERBS_CMD_QUERY_QP), None, "another command");
        assert_eq!(f.take(IB_USER_VERBS_CMD_MODIFY_QP), Some(libc::ENOMEM));
        assert_eq!(
            f.take(IB_USER_VERBS_EX_CMD_MODIFY_QP),
            Some(libc::ENOMEM),
            "extended: same number"
        );
        assert_eq!(f.take(IB_USER_VERBS_CMD_MODIFY_QP), None, "two only");
        assert_eq!(f.left, 0);
    }
}
