//! The DEVX objects a consumer that drives the device through PRM commands creates (UCX does,
//! by default): user memory (umem) registration, the UAR index of a library-chosen register,
//! event channels and subscriptions, and QPs (RC, DCI), DCTs and RMPs created, modified,
//! queried and destroyed by their firmware commands, each mirrored from mlx5_ib
//! (drivers/infiniband/hw/mlx5/devx.c) and the PRM command it carries (the layouts in
//! [`super::prm`]). Objects created this way live in the same tables as their verbs twins, so
//! the data path serves both alike.

use super::ioctl::{fw_error, Call};
use super::prm::{self, get, get64, set};
use crate::device::objects::{Path, Qp, QpKind, QpState, Ring, Srq};
use crate::device::{Device, DevxObj, DevxSub, Umem};
use crate::profile::{self, LinkLayer};
use crate::uapi::ib_user_verbs::ib_uverbs_modify_qp;
use crate::uapi::ioctl::*;

/// IB_ACCESS_* bits a umem may ask for (devx.c `devx_umem_get`: LOCAL_WRITE, REMOTE_WRITE,
/// REMOTE_READ, RELAXED_ORDERING; anything else is EINVAL from `ib_check_mr_access`' callers).
const UMEM_ACCESS: u32 = 1 | 2 | 4 | (1 << 20);

/// MLX5_IB_METHOD_DEVX_UMEM_REG (devx.c): pins `[addr, addr+len)` (ib_umem_get: EFAULT where
/// nothing is mapped) and registers it with the firmware, which hands out a umem id.
pub(super) fn umem_reg(dev: &mut Device, fd: i32, call: &Call) -> Result<(), i32> {
    if super::devx_uid_of(fd) == 0 {
        // devx_umem_reg: only a DEVX context has a uid to own the umem.
        return Err(libc::EINVAL);
    }
    let addr = call.attr(MLX5_IB_ATTR_DEVX_UMEM_REG_ADDR).ok_or(libc::EINVAL)?.data;
    let len = call.attr(MLX5_IB_ATTR_DEVX_UMEM_REG_LEN).ok_or(libc::EINVAL)?.data;
    let access = call.attr(MLX5_IB_ATTR_DEVX_UMEM_REG_ACCESS).ok_or(libc::EINVAL)?.data as u32;
    if access & !UMEM_ACCESS != 0 || len == 0 {
        return Err(libc::EINVAL);
    }
    super::pin::check(addr, len, access)?;
    let handle = dev.handle();
    let id = dev.number();
    dev.umems.insert(handle, Umem { id, addr, len });
    call.output(dev, MLX5_IB_ATTR_DEVX_UMEM_REG_OUT_ID, &id.to_ne_bytes())?;
    call.output_handle(dev, MLX5_IB_ATTR_DEVX_UMEM_REG_HANDLE, handle)
}

/// MLX5_IB_METHOD_DEVX_UMEM_DEREG.
pub(super) fn umem_dereg(dev: &mut Device, call: &Call) -> Result<(), i32> {
    let h = call.attr(MLX5_IB_ATTR_DEVX_UMEM_DEREG_HANDLE).ok_or(libc::EINVAL)?.data as u32;
    dev.umems.remove(&h).map(|_| ()).ok_or(libc::EINVAL)
}

/// MLX5_IB_METHOD_DEVX_QUERY_UAR (devx.c): the firmware UAR index of the library's dynamic
/// register `user_idx` (`bfregn_to_uar_index(.., dyn_bfreg true)`: EINVAL for a page the
/// library never mapped).
pub(super) fn query_uar(dev: &mut Device, fd: i32, call: &Call) -> Result<(), i32> {
    // The page may have been mapped behind the interposer (mlx5_ib's mmap saw it).
    if let Some(p) = super::dyn_sys_page(
        fd,
        call.attr(MLX5_IB_ATTR_DEVX_QUERY_UAR_USER_IDX)
            .map_or(0, |a| a.data as u32),
    ) {
        super::learn_page(dev, fd, p);
    }
    let user_idx = call
        .attr(MLX5_IB_ATTR_DEVX_QUERY_UAR_USER_IDX)
        .ok_or(libc::EINVAL)?
        .data as u32;
    let id = super::dyn_uar_index(fd, user_idx).ok_or(libc::EINVAL)?;
    super::note_devx_uar(fd, id, user_idx);
    call.output(dev, MLX5_IB_ATTR_DEVX_QUERY_UAR_DEV_IDX, &id.to_ne_bytes())
}

/// MLX5_IB_METHOD_DEVX_ASYNC_EVENT_FD_ALLOC (devx.c): a new event channel file; the only flag
/// is MLX5_IB_UAPI_DEVX_CR_EV_CH_FLAGS_OMIT_DATA (`uverbs_get_flags32`: EINVAL otherwise),
/// with which each event reads as its 8-byte cookie alone.
pub(super) fn event_channel_alloc(dev: &mut Device, call: &Call) -> Result<(), i32> {
    let flags = call
        .attr(MLX5_IB_ATTR_DEVX_ASYNC_EVENT_FD_ALLOC_FLAGS)
        .map_or(0, |a| a.data as u32);
    if flags & !MLX5_IB_UAPI_DEVX_CR_EV_CH_FLAGS_OMIT_DATA != 0 {
        return Err(libc::EINVAL);
    }
    let omit = flags != 0;
    let fd = dev.events.create(if omit { 8 } else { 8 + 64 })?;
    dev.devx_channels.insert(fd, omit);
    call.output_handle(dev, MLX5_IB_ATTR_DEVX_ASYNC_EVENT_FD_ALLOC_HANDLE, fd as u32)
}

/// Event types an object's subscription may name on a device without `event_cap` (devx.c
/// `is_legacy_obj_event_num`).
const LEGACY_OBJ_EVENTS: [u16; 12] = [
    prm::MLX5_EVENT_TYPE_PATH_MIG,
    prm::MLX5_EVENT_TYPE_COMM_EST,
    prm::MLX5_EVENT_TYPE_SQ_DRAINED,
    prm::MLX5_EVENT_TYPE_SRQ_LAST_WQE,
    prm::MLX5_EVENT_TYPE_SRQ_RQ_LIMIT,
    0x04, // MLX5_EVENT_TYPE_CQ_ERROR
    prm::MLX5_EVENT_TYPE_WQ_CATAS_ERROR,
    prm::MLX5_EVENT_TYPE_PATH_MIG_FAILED,
    prm::MLX5_EVENT_TYPE_WQ_INVAL_REQ_ERROR,
    prm::MLX5_EVENT_TYPE_WQ_ACCESS_ERROR,
    prm::MLX5_EVENT_TYPE_SRQ_CATAS_ERROR,
    prm::MLX5_EVENT_TYPE_DCT_DRAINED,
];

/// MLX5_IB_METHOD_DEVX_SUBSCRIBE_EVENT (devx.c): the channel gets the object's events of the
/// listed types, each read back with `cookie`. A context without DEVX, an unknown channel or
/// object, or an event type the object cannot raise is EINVAL (`is_valid_events_legacy`).
pub(super) fn subscribe_event(dev: &mut Device, fd: i32, call: &Call) -> Result<(), i32> {
    if super::devx_uid_of(fd) == 0 {
        return Err(libc::EINVAL);
    }
    let channel = call
        .attr(MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_FD_HANDLE)
        .ok_or(libc::EINVAL)?
        .data as i32;
    if !dev.devx_channels.contains_key(&channel) {
        return Err(libc::EINVAL);
    }
    let obj = call
        .attr(MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_OBJ_HANDLE)
        .map(|a| a.data as u32);
    if let Some(h) = obj {
        if !dev.devx_objs.contains_key(&h) && !dev.qps.contains_key(&h) && !dev.srqs.contains_key(&h) {
            return Err(libc::EINVAL);
        }
    }
    let list = call.input(dev, MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_TYPE_NUM_LIST)?;
    if list.is_empty() || list.len() % 2 != 0 {
        return Err(libc::EINVAL);
    }
    let events: Vec<u16> = list.chunks(2).map(|c| u16::from_ne_bytes([c[0], c[1]])).collect();
    // Unaffiliated events (no object) are port and device events, never QP ones.
    if events.iter().any(|e| obj.is_some() != LEGACY_OBJ_EVENTS.contains(e)) {
        return Err(libc::EINVAL);
    }
    let cookie = call
        .attr(MLX5_IB_ATTR_DEVX_SUBSCRIBE_EVENT_COOKIE)
        .map_or(0, |a| a.data);
    for event in events {
        dev.devx_subs.push(DevxSub {
            channel,
            obj,
            event,
            cookie,
        });
    }
    Ok(())
}

/// The event channel `fd` was closed: its subscriptions go with it.
pub fn channel_closed(dev: &mut Device, fd: i32) {
    if dev.devx_channels.remove(&fd).is_some() {
        dev.devx_subs.retain(|s| s.channel != fd);
    }
}

/// The address `offset` bytes into umem `id` with `len` bytes behind it, or None (the firmware
/// refuses a umem it does not know or one too small: BAD_PARAM).
fn umem_at(dev: &Device, id: u32, offset: u64, len: u64) -> Option<u64> {
    let u = dev.umems.values().find(|u| u.id == id)?;
    (offset <= u.len && len <= u.len - offset).then_some(u.addr + offset)
}

/// The handle of the PD numbered `pdn`.
fn pd_by_num(dev: &Device, pdn: u32) -> Option<u32> {
    dev.pds.iter().find(|(_, p)| p.pdn == pdn).map(|(&h, _)| h)
}

/// The handle of the CQ numbered `cqn`.
fn cq_by_num(dev: &Device, cqn: u32) -> Option<u32> {
    dev.cq_by_num(cqn)
}

/// The handle of the SRQ or RMP numbered `srqn`.
fn srq_by_num(dev: &Device, srqn: u32) -> Option<u32> {
    dev.srqs.iter().find(|(_, s)| s.srqn == srqn).map(|(&h, _)| h)
}

/// IB_ACCESS_* remote bits from a QP or DCT context's rre/rwe/rae.
fn access_of(input: &[u8], rre: prm::Field, rwe: prm::Field, rae: prm::Field) -> u32 {
    let mut a = 0;
    if get(input, rwe) != 0 {
        a |= 2;
    }
    if get(input, rre) != 0 {
        a |= 4;
    }
    if get(input, rae) != 0 {
        a |= 8;
    }
    a
}

/// The output mailbox of a create command: status 0 and the new object's number at `num`.
fn created(dev: &mut Device, call: &Call, handle: u32, num: prm::Field, n: u32) -> Result<(), i32> {
    let out_attr = MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT;
    let mut out = vec![0u8; call.out_len(out_attr)?.max(16)];
    set(&mut out, num, n);
    call.output(dev, out_attr, &out)?;
    call.output_handle(dev, MLX5_IB_ATTR_DEVX_OBJ_CREATE_HANDLE, handle)
}

/// CREATE_QP through DEVX: an RC QP or a DCI over umems (the WQ buffer, receive queue first,
/// then the send queue; the doorbell record at `dbr_addr` of its umem), its CQs and SRQ/RMP by
/// number. What the firmware refuses (an unknown PD, CQ, SRQ, UAR or umem, a service type it
/// does not create here) is BAD_PARAM.
pub(super) fn create_qp(dev: &mut Device, fd: i32, call: &Call, input: &[u8]) -> Result<(), i32> {
    let out_attr = MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT;
    let bad = |dev: &Device| fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_PARAM_ERR);
    let q = |f: prm::Field| get(input, f.within(prm::CREATE_QP_IN_QPC));
    let kind = match q(prm::QPC_ST) {
        prm::MLX5_QPC_ST_RC => QpKind::Rc,
        prm::MLX5_QPC_ST_DCI => QpKind::Dci,
        _ => return bad(dev),
    };
    let Some(pd) = pd_by_num(dev, q(prm::QPC_PD)) else {
        return bad(dev);
    };
    let (Some(scq), Some(rcq)) = (cq_by_num(dev, q(prm::QPC_CQN_SND)), cq_by_num(dev, q(prm::QPC_CQN_RCV))) else {
        return bad(dev);
    };
    super::learn_uar(dev, fd, q(prm::QPC_UAR_PAGE));
    if !super::owns_uar(fd, q(prm::QPC_UAR_PAGE)) {
        return bad(dev);
    }
    let srq = match q(prm::QPC_RQ_TYPE) {
        0 => None,
        1 => match srq_by_num(dev, q(prm::QPC_SRQN_RMPN_XRQN)) {
            Some(h) => Some(h),
            None => return bad(dev),
        },
        _ => return bad(dev),
    };
    let sq_cnt = if q(prm::QPC_NO_SQ) != 0 {
        0
    } else {
        1u32 << q(prm::QPC_LOG_SQ_SIZE)
    };
    let (rq_cnt, rq_shift) = if srq.is_none() && kind == QpKind::Rc {
        (1u32 << q(prm::QPC_LOG_RQ_SIZE), q(prm::QPC_LOG_RQ_STRIDE) + 4)
    } else {
        (0, 4)
    };
    if sq_cnt > profile::MAX_QP_WR.next_power_of_two() || rq_cnt > profile::MAX_QP_WR.next_power_of_two() {
        return bad(dev);
    }
    let wq_len = (u64::from(rq_cnt) << rq_shift) + (u64::from(sq_cnt) << 6);
    let wq_off = get64(input, prm::CREATE_QP_IN_WQ_UMEM_OFFSET);
    let Some(wq) = umem_at(dev, get(input, prm::CREATE_QP_IN_WQ_UMEM_ID), wq_off, wq_len) else {
        return bad(dev);
    };
    let dbr_off = get64(input, prm::QPC_DBR_ADDR.within(prm::CREATE_QP_IN_QPC));
    let Some(db) = umem_at(dev, q(prm::QPC_DBR_UMEM_ID), dbr_off, 8) else {
        return bad(dev);
    };
    // Device::qpn: out of numbers is the firmware's LIM_ERR.
    let Ok(qpn) = dev.qpn() else {
        return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_LIM_ERR);
    };
    let h = dev.handle();
    let mut qp = Qp::new(kind, qpn, pd);
    qp.send_cq = Some(scq);
    qp.recv_cq = Some(rcq);
    qp.srq = srq;
    qp.uidx = q(prm::QPC_USER_INDEX);
    qp.bf = super::devx_qp_bf_register(fd, q(prm::QPC_UAR_PAGE));
    qp.db = db;
    qp.rq = Ring {
        base: wq,
        cnt: rq_cnt,
        shift: rq_shift,
    };
    qp.sq = Ring {
        base: wq + (u64::from(rq_cnt) << rq_shift),
        cnt: sq_cnt,
        shift: 6,
    };
    crate::log(format_args!(
        "DEVX create {kind:?} qpn {qpn:#x} uidx {} sq {sq_cnt} at {:#x} rq {rq_cnt} dbrec {db:#x}, UAR {:#x} register {:?}",
        qp.uidx,
        qp.sq.base,
        q(prm::QPC_UAR_PAGE),
        qp.bf.map(|b| b.addr)
    ));
    dev.insert_qp(h, qp);
    dev.qpn_to_handle.insert(qpn, h);
    dev.devx_objs.insert(h, DevxObj::Qp);
    created(dev, call, h, prm::CREATE_QP_OUT_QPN, qpn)
}

/// CREATE_DCT through DEVX: the DCT is created ready to receive (the PRM has no modify for a
/// DCT; mlx5_ib's verbs path issues the same command at RTR), on its CQ and SRQ/RMP.
pub(super) fn create_dct(dev: &mut Device, call: &Call, input: &[u8]) -> Result<(), i32> {
    let out_attr = MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT;
    let bad = |dev: &Device| fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_PARAM_ERR);
    let d = |f: prm::Field| get(input, f.within(prm::CREATE_DCT_IN_DCTC));
    let Some(pd) = pd_by_num(dev, d(prm::DCTC_PD)) else {
        return bad(dev);
    };
    let Some(cq) = cq_by_num(dev, d(prm::DCTC_CQN)) else {
        return bad(dev);
    };
    let Some(srq) = srq_by_num(dev, d(prm::DCTC_SRQN_XRQN)) else {
        return bad(dev);
    };
    let access = access_of(
        &input[prm::CREATE_DCT_IN_DCTC.byte_off()..],
        prm::DCTC_RRE,
        prm::DCTC_RWE,
        prm::DCTC_RAE,
    );
    // get_atomic_mode: remote atomics on a function without them are refused.
    if access & 8 != 0 && !dev.profile.atomics {
        return bad(dev);
    }
    let port = d(prm::DCTC_PORT);
    let mtu = d(prm::DCTC_MTU);
    if port != 1
        || !(1..=5).contains(&mtu)
        || u32::from(d(prm::DCTC_MY_ADDR_INDEX) as u8) >= dev.profile.gid_count().max(1)
    {
        return bad(dev);
    }
    let Ok(dctn) = dev.qpn() else {
        return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_LIM_ERR);
    };
    let h = dev.handle();
    let mut qp = Qp::new(QpKind::Dct, dctn, pd);
    qp.recv_cq = Some(cq);
    qp.srq = Some(srq);
    qp.uidx = d(prm::DCTC_USER_INDEX);
    qp.access = access;
    qp.dc_key = get64(input, prm::DCTC_DC_ACCESS_KEY.within(prm::CREATE_DCT_IN_DCTC));
    qp.min_rnr_timer = d(prm::DCTC_MIN_RNR_NAK) as u8;
    qp.path_mtu = mtu;
    qp.pkey_index = d(prm::DCTC_PKEY_INDEX) as u16;
    qp.path = Path {
        sgid_index: d(prm::DCTC_MY_ADDR_INDEX) as u8,
        hop_limit: d(prm::DCTC_HOP_LIMIT) as u8,
        port: 1,
        is_global: dev.profile.link_layer == LinkLayer::Ethernet,
        ..Path::default()
    };
    qp.state = QpState::Rtr;
    crate::log(format_args!("DEVX create DCT {dctn:#x} uidx {}", qp.uidx));
    dev.insert_qp(h, qp);
    dev.qpn_to_handle.insert(dctn, h);
    dev.devx_objs.insert(h, DevxObj::Qp);
    created(dev, call, h, prm::CREATE_DCT_OUT_DCTN, dctn)
}

/// CREATE_RMP through DEVX: a shared receive queue over a umem, linked-list or cyclic.
pub(super) fn create_rmp(dev: &mut Device, call: &Call, input: &[u8]) -> Result<(), i32> {
    let out_attr = MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT;
    let bad = |dev: &Device| fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_PARAM_ERR);
    let rmpc = prm::CREATE_RMP_IN_RMPC;
    let wq = prm::RMPC_WQ.within(rmpc);
    let w = |f: prm::Field| get(input, f.within(wq));
    if get(input, prm::RMPC_STATE.within(rmpc)) != prm::MLX5_RMPC_STATE_RDY {
        return bad(dev);
    }
    let cyclic = match w(prm::WQ_WQ_TYPE) {
        prm::MLX5_WQ_TYPE_LINKED_LIST => false,
        prm::MLX5_WQ_TYPE_CYCLIC => true,
        // Striding (multi-packet) RQs are not modelled.
        _ => return bad(dev),
    };
    let Some(pd) = pd_by_num(dev, w(prm::WQ_PD)) else {
        return bad(dev);
    };
    let (log_sz, log_stride) = (w(prm::WQ_LOG_WQ_SZ), w(prm::WQ_LOG_WQ_STRIDE));
    if log_stride < 4 || (1u32 << log_sz) > profile::MAX_SRQ_WR.next_power_of_two() {
        return bad(dev);
    }
    let len = 1u64 << (log_sz + log_stride);
    let off = get64(input, prm::WQ_WQ_UMEM_OFFSET.within(wq));
    let Some(buf) = umem_at(dev, w(prm::WQ_WQ_UMEM_ID), off, len) else {
        return bad(dev);
    };
    let dbr_off = get64(input, prm::WQ_DBR_ADDR.within(wq));
    let Some(db) = umem_at(dev, w(prm::WQ_DBR_UMEM_ID), dbr_off, 4) else {
        return bad(dev);
    };
    let h = dev.handle();
    let srqn = dev.number();
    dev.srqs.insert(
        h,
        Srq {
            user_handle: 0,
            srqn,
            pd,
            buf,
            db,
            wqe_cnt: 1 << log_sz,
            wqe_shift: log_stride,
            head: 0,
            taken: 0,
            limit: 0,
            uidx: 0,
            cyclic,
        },
    );
    dev.devx_objs.insert(h, DevxObj::Rmp);
    crate::log(format_args!(
        "DEVX create RMP {srqn:#x} {} WQEs of {} bytes{}",
        1u32 << log_sz,
        1u32 << log_stride,
        if cyclic { ", cyclic" } else { "" }
    ));
    created(dev, call, h, prm::CREATE_RMP_OUT_RMPN, srqn)
}

/// MLX5_IB_METHOD_DEVX_OBJ_DESTROY of a QP, DCT or RMP made here (the others: AV mappings).
pub(super) fn destroy(dev: &mut Device, h: u32) -> Result<(), i32> {
    match dev.devx_objs.remove(&h).ok_or(libc::EINVAL)? {
        DevxObj::Qp => {
            dev.destroy_qp(h);
            dev.events.release(crate::device::events::Owner::Qp(h));
        }
        DevxObj::Rmp => {
            // The firmware refuses to destroy an RMP a QP or DCT still uses.
            if dev.qps.values().any(|q| q.srq == Some(h)) {
                dev.devx_objs.insert(h, DevxObj::Rmp);
                return Err(libc::EBUSY);
            }
            dev.srqs.remove(&h);
        }
        DevxObj::Mkey { key } => {
            dev.ksms.remove(&key);
        }
        DevxObj::AvQpMapping { .. } => {}
    }
    dev.devx_subs.retain(|s| s.obj != Some(h));
    Ok(())
}

/// The modify-QP commands: each names the state it starts from and the one it reaches.
fn transition(opcode: u16) -> Option<(Option<QpState>, QpState)> {
    use QpState::*;
    Some(match opcode {
        prm::MLX5_CMD_OP_RST2INIT_QP => (Some(Reset), Init),
        prm::MLX5_CMD_OP_INIT2RTR_QP => (Some(Init), Rtr),
        prm::MLX5_CMD_OP_RTR2RTS_QP => (Some(Rtr), Rts),
        prm::MLX5_CMD_OP_2ERR_QP => (None, Err),
        prm::MLX5_CMD_OP_2RST_QP => (None, Reset),
        _ => return None,
    })
}

/// RST2INIT, INIT2RTR, RTR2RTS, 2ERR and 2RST on a QP (DEVX-created, or a verbs QP through
/// `mlx5dv_devx_qp_modify`): the QP context's fields become the attributes of the same
/// transition through MODIFY_QP, so both paths share one state machine and its checks; a
/// command from the wrong state is BAD_QP_STATE (the firmware's answer).
pub(super) fn modify_qp(dev: &mut Device, call: &Call, handle: u32, input: &[u8]) -> Result<(), i32> {
    use crate::kernel::modify::mask::*;
    let out_attr = MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_OUT;
    let opcode = get(input, prm::MODIFY_QP_IN_OPCODE) as u16;
    let Some((from, to)) = transition(opcode) else {
        return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_OP_ERR);
    };
    let (kind, state) = {
        let qp = dev.qps.get(&handle).ok_or(libc::EINVAL)?;
        (qp.kind, qp.state)
    };
    if from.is_some_and(|f| f != state) || (to == QpState::Err && state == QpState::Reset) {
        return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_QP_STATE_ERR);
    }
    let qpc = prm::RST2INIT_QP_IN_QPC;
    let q = |f: prm::Field| get(input, f.within(qpc));
    let opt = get(input, prm::RST2INIT_QP_IN_OPT_PARAM_MASK);
    let ethernet = dev.profile.link_layer == LinkLayer::Ethernet;
    let mut r = ib_uverbs_modify_qp {
        qp_handle: handle,
        attr_mask: STATE,
        qp_state: to as u8,
        ..Default::default()
    };
    let remote = || access_of(&input[qpc.byte_off()..], prm::QPC_RRE, prm::QPC_RWE, prm::QPC_RAE);
    let path = || {
        let mut dest = crate::uapi::ib_user_verbs::ib_uverbs_qp_dest::default();
        dest.dgid
            .copy_from_slice(prm::addr_of(input, prm::QPC_PAP_RGID_RIP.within(qpc)));
        dest.dlid = q(prm::QPC_PAP_RLID) as u16;
        dest.is_global = u8::from(q(prm::QPC_PAP_GRH) != 0 || ethernet);
        dest.sgid_index = q(prm::QPC_PAP_SRC_ADDR_INDEX) as u8;
        dest.hop_limit = q(prm::QPC_PAP_HOP_LIMIT) as u8;
        dest.traffic_class = q(prm::QPC_PAP_TCLASS) as u8;
        dest.sl = q(prm::QPC_PAP_SL) as u8;
        dest.port_num = (q(prm::QPC_PAP_VHCA_PORT_NUM) as u8).max(1);
        dest
    };
    match (opcode, kind) {
        (prm::MLX5_CMD_OP_RST2INIT_QP, _) => {
            r.attr_mask |= PKEY_INDEX | PORT;
            r.pkey_index = q(prm::QPC_PAP_PKEY_INDEX) as u16;
            r.port_num = q(prm::QPC_PAP_VHCA_PORT_NUM) as u8;
            if kind == QpKind::Rc {
                r.attr_mask |= ACCESS_FLAGS;
                r.qp_access_flags = remote();
            }
        }
        (prm::MLX5_CMD_OP_INIT2RTR_QP, QpKind::Rc) => {
            r.dest = path();
            r.attr_mask |= AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER;
            r.path_mtu = q(prm::QPC_MTU) as u8;
            r.dest_qp_num = q(prm::QPC_REMOTE_QPN);
            r.rq_psn = q(prm::QPC_NEXT_RCV_PSN);
            r.max_dest_rd_atomic = 1 << q(prm::QPC_LOG_RRA_MAX);
            r.min_rnr_timer = q(prm::QPC_MIN_RNR_NAK) as u8;
            if opt & (prm::MLX5_QP_OPTPAR_RRE | prm::MLX5_QP_OPTPAR_RWE | prm::MLX5_QP_OPTPAR_RAE) != 0 {
                r.attr_mask |= ACCESS_FLAGS;
                r.qp_access_flags = remote();
            }
        }
        (prm::MLX5_CMD_OP_INIT2RTR_QP, _) => {
            // A DCI has no remote end: the path carries its port (and SL).
            r.dest = path();
            r.attr_mask |= AV | PATH_MTU;
            r.path_mtu = q(prm::QPC_MTU) as u8;
        }
        (prm::MLX5_CMD_OP_RTR2RTS_QP, _) => {
            r.attr_mask |= TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC;
            r.timeout = q(prm::QPC_PAP_ACK_TIMEOUT) as u8;
            r.retry_cnt = q(prm::QPC_RETRY_COUNT) as u8;
            r.rnr_retry = q(prm::QPC_RNR_RETRY) as u8;
            r.sq_psn = q(prm::QPC_NEXT_SEND_PSN);
            r.max_rd_atomic = 1 << q(prm::QPC_LOG_SRA_MAX);
        }
        _ => {}
    }
    if to == QpState::Err {
        // The QP stops: one on an SRQ raises "last WQE reached" (Device::enter_error).
        dev.enter_error(handle);
    } else if let Err(e) = crate::kernel::modify::modify_qp(dev, &r, None) {
        crate::log(format_args!("DEVX modify {opcode:#x} on {handle}: errno {e}"));
        return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_PARAM_ERR);
    }
    let out = vec![0u8; call.out_len(out_attr)?];
    call.output(dev, out_attr, &out)
}

/// QUERY_QP through DEVX (MLX5_IB_METHOD_DEVX_OBJ_QUERY or `mlx5dv_devx_qp_query`): the QP
/// context's state, the send queue's progress and what the modify commands set.
pub(super) fn query_qp(dev: &Device, call: &Call, handle: u32, out_attr: u16) -> Result<(), i32> {
    let qp = dev.qps.get(&handle).ok_or(libc::EINVAL)?;
    let mut out = vec![0u8; call.out_len(out_attr)?];
    if out.len() < prm::QUERY_QP_OUT_SZ_BYTES {
        return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_OUTP_LEN_ERR);
    }
    let qpc = prm::QUERY_QP_OUT_QPC;
    let state = prm::MLX5_QPC_STATE
        .iter()
        .find(|(s, _)| *s == qp.state as u8)
        .map_or(0, |(_, v)| *v);
    set(&mut out, prm::QPC_STATE.within(qpc), state);
    set(&mut out, prm::QPC_HW_SQ_WQEBB_COUNTER.within(qpc), qp.sq_ci & 0xffff);
    set(&mut out, prm::QPC_MTU.within(qpc), qp.path_mtu);
    set(&mut out, prm::QPC_REMOTE_QPN.within(qpc), qp.dest_qpn);
    set(&mut out, prm::QPC_RETRY_COUNT.within(qpc), u32::from(qp.retry_cnt));
    set(&mut out, prm::QPC_RNR_RETRY.within(qpc), u32::from(qp.rnr_retry));
    set(&mut out, prm::QPC_PAP_ACK_TIMEOUT.within(qpc), u32::from(qp.timeout));
    set(&mut out, prm::QPC_PAP_RLID.within(qpc), u32::from(qp.path.dlid));
    set(&mut out, prm::QPC_PAP_VHCA_PORT_NUM.within(qpc), u32::from(qp.port));
    set(&mut out, prm::QPC_USER_INDEX.within(qpc), qp.uidx);
    call.output(dev, out_attr, &out)
}

/// CREATE_MKEY through DEVX: an indirect key in KSM mode (what UCX builds over a registered
/// region for its atomic and invalidatable keys). The key is the firmware's index with the
/// variant byte the command names (`mkey_7_0`); its entities translate to the direct keys and
/// addresses listed after the mkey context. Other access modes (MTT, KLM, ...) are not
/// modelled: BAD_PARAM.
pub(super) fn create_mkey(dev: &mut Device, call: &Call, input: &[u8]) -> Result<(), i32> {
    let out_attr = MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT;
    let bad = |dev: &Device| fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_PARAM_ERR);
    let m = |f: prm::Field| get(input, f.within(prm::CREATE_MKEY_IN_MKC));
    if m(prm::MKC_ACCESS_MODE_1_0) != prm::MLX5_MKC_ACCESS_MODE_KSM {
        return bad(dev);
    }
    let Some(pd) = pd_by_num(dev, m(prm::MKC_PD)) else {
        return bad(dev);
    };
    let n = get(input, prm::CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE) as usize;
    let log_entity = m(prm::MKC_LOG_ENTITY_SIZE);
    let start = get64(input, prm::MKC_START_ADDR.within(prm::CREATE_MKEY_IN_MKC));
    let len = get64(input, prm::MKC_LEN.within(prm::CREATE_MKEY_IN_MKC));
    let base = prm::CREATE_MKEY_IN_KLM_PAS_MTT_BYTE_OFF;
    if n == 0 || input.len() < base + n * prm::KLM_SZ_BYTES || (n as u64) << log_entity < len {
        return bad(dev);
    }
    let entries = (0..n)
        .map(|i| {
            let e = &input[base + i * prm::KLM_SZ_BYTES..];
            (get(e, prm::KLM_MKEY), get64(e, prm::KLM_ADDRESS))
        })
        .collect();
    let mut access = 0;
    for (f, bit) in [(prm::MKC_LW, 1), (prm::MKC_RW, 2), (prm::MKC_RR, 4), (prm::MKC_A, 8)] {
        if m(f) != 0 {
            access |= bit;
        }
    }
    let index = dev.mkey() >> 8;
    let key = (index << 8) | m(prm::MKC_MKEY_7_0);
    dev.ksms.insert(
        key,
        crate::device::objects::Ksm {
            pd,
            start,
            len,
            log_entity,
            access,
            entries,
        },
    );
    let h = dev.handle();
    dev.devx_objs.insert(h, DevxObj::Mkey { key });
    crate::log(format_args!(
        "DEVX create KSM mkey {key:#x}: {start:#x}+{len:#x}, {n} entities of 2^{log_entity}"
    ));
    created(dev, call, h, prm::CREATE_MKEY_OUT_MKEY_INDEX, index)
}
