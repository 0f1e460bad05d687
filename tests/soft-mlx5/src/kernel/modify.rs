//! MODIFY_QP and QUERY_QP: the state machine and the attribute masks the kernel accepts per QP
//! type and transition (core verbs.c `ib_modify_qp_is_ok` for RC/UD; mlx5_ib qp.c
//! `modify_dci_qp_is_ok` for DCIs and `mlx5_ib_modify_dct` for DCTs), then the attributes.

use crate::device::objects::{Path, QpKind, QpState, StaleRecord};
use crate::device::Device;
use crate::profile::LinkLayer;
use crate::uapi::ib_user_verbs::{ib_uverbs_modify_qp, ib_uverbs_qp_dest, ib_uverbs_query_qp_resp};

/// enum ib_qp_attr_mask bits.
pub mod mask {
    /// IB_QP_STATE.
    pub const STATE: u32 = 1;
    /// IB_QP_CUR_STATE.
    pub const CUR_STATE: u32 = 1 << 1;
    /// IB_QP_ACCESS_FLAGS.
    pub const ACCESS_FLAGS: u32 = 1 << 3;
    /// IB_QP_PKEY_INDEX.
    pub const PKEY_INDEX: u32 = 1 << 4;
    /// IB_QP_PORT.
    pub const PORT: u32 = 1 << 5;
    /// IB_QP_QKEY.
    pub const QKEY: u32 = 1 << 6;
    /// IB_QP_AV.
    pub const AV: u32 = 1 << 7;
    /// IB_QP_PATH_MTU.
    pub const PATH_MTU: u32 = 1 << 8;
    /// IB_QP_TIMEOUT.
    pub const TIMEOUT: u32 = 1 << 9;
    /// IB_QP_RETRY_CNT.
    pub const RETRY_CNT: u32 = 1 << 10;
    /// IB_QP_RNR_RETRY.
    pub const RNR_RETRY: u32 = 1 << 11;
    /// IB_QP_RQ_PSN.
    pub const RQ_PSN: u32 = 1 << 12;
    /// IB_QP_MAX_QP_RD_ATOMIC.
    pub const MAX_QP_RD_ATOMIC: u32 = 1 << 13;
    /// IB_QP_ALT_PATH.
    pub const ALT_PATH: u32 = 1 << 14;
    /// IB_QP_MIN_RNR_TIMER.
    pub const MIN_RNR_TIMER: u32 = 1 << 15;
    /// IB_QP_SQ_PSN.
    pub const SQ_PSN: u32 = 1 << 16;
    /// IB_QP_MAX_DEST_RD_ATOMIC.
    pub const MAX_DEST_RD_ATOMIC: u32 = 1 << 17;
    /// IB_QP_PATH_MIG_STATE.
    pub const PATH_MIG_STATE: u32 = 1 << 18;
    /// IB_QP_DEST_QPN.
    pub const DEST_QPN: u32 = 1 << 20;
}
use mask::*;

/// (required, optional) masks beyond IB_QP_STATE for a transition, or None if not allowed.
fn masks(kind: QpKind, cur: QpState, new: QpState) -> Option<(u32, u32)> {
    use QpState::*;
    if new == Reset || (new == Err && cur != Reset && kind != QpKind::Dct) {
        return Some((0, 0));
    }
    match kind {
        // modify_dci_qp_is_ok (drivers/infiniband/hw/mlx5/qp.c).
        QpKind::Dci => match (cur, new) {
            (Reset, Init) => Some((PKEY_INDEX | PORT, 0)),
            (Init, Init) => Some((0, PKEY_INDEX | PORT)),
            (Init, Rtr) => Some((PATH_MTU, PKEY_INDEX | AV)),
            (Rtr, Rts) => Some((
                TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | SQ_PSN,
                MIN_RNR_TIMER,
            )),
            (Rts, Rts) => Some((0, MIN_RNR_TIMER)),
            _ => None,
        },
        // mlx5_ib_modify_dct: RESET->INIT and INIT->RTR only, with exactly these attributes.
        QpKind::Dct => match (cur, new) {
            (Reset, Init) => Some((PKEY_INDEX | PORT | ACCESS_FLAGS, 0)),
            (Init, Rtr) => Some((AV | PATH_MTU | MIN_RNR_TIMER, 0)),
            _ => None,
        },
        // qp_state_table in drivers/infiniband/core/verbs.c, RC column.
        QpKind::Rc => match (cur, new) {
            (Reset, Init) => Some((PKEY_INDEX | PORT | ACCESS_FLAGS, 0)),
            (Init, Init) => Some((0, PKEY_INDEX | PORT | ACCESS_FLAGS)),
            (Init, Rtr) => Some((
                AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER,
                ALT_PATH | ACCESS_FLAGS | PKEY_INDEX,
            )),
            (Rtr, Rts) => Some((
                SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC,
                CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE,
            )),
            (Rts, Rts) => Some((0, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE | MIN_RNR_TIMER)),
            _ => None,
        },
        // qp_state_table in drivers/infiniband/core/verbs.c, UC column.
        QpKind::Uc => match (cur, new) {
            (Reset, Init) => Some((PKEY_INDEX | PORT | ACCESS_FLAGS, 0)),
            (Init, Init) => Some((0, PKEY_INDEX | PORT | ACCESS_FLAGS)),
            (Init, Rtr) => Some((AV | PATH_MTU | DEST_QPN | RQ_PSN, ALT_PATH | ACCESS_FLAGS | PKEY_INDEX)),
            (Rtr, Rts) => Some((SQ_PSN, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE)),
            (Rts, Rts) => Some((0, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE)),
            _ => None,
        },
        // qp_state_table, UD column.
        QpKind::Ud => match (cur, new) {
            (Reset, Init) => Some((PKEY_INDEX | PORT | QKEY, 0)),
            (Init, Init) => Some((0, PKEY_INDEX | PORT | QKEY)),
            (Init, Rtr) => Some((0, PKEY_INDEX | QKEY)),
            (Rtr, Rts) => Some((SQ_PSN, CUR_STATE | QKEY)),
            (Rts, Rts) => Some((0, CUR_STATE | QKEY)),
            _ => None,
        },
    }
}

/// `MLX5_IB_MODIFY_QP_OOO_DP` (`enum mlx5_ib_modify_qp_mask`) and
/// `MLX5_IB_QUERY_DEV_RESP_FLAGS_OOO_DP`, from rdma-core 59's kernel-headers/rdma/mlx5-abi.h
/// (Linux 6.10+): newer than this host's linux-libc-dev, whose headers the uapi module is proven
/// against, so they live here.
pub const MLX5_IB_MODIFY_QP_OOO_DP: u32 = 1 << 0;
/// See [`MLX5_IB_MODIFY_QP_OOO_DP`].
pub const MLX5_IB_QUERY_DEV_RESP_FLAGS_OOO_DP: u32 = 1 << 4;

/// ib_uverbs' copy_ah_attr_from_uverbs: the GRH fields count only when the path is global.
fn path_of(d: &ib_uverbs_qp_dest) -> Path {
    let global = d.is_global != 0;
    Path {
        dlid: d.dlid,
        is_global: global,
        dgid: if global { d.dgid } else { [0; 16] },
        sgid_index: if global { d.sgid_index } else { 0 },
        hop_limit: if global { d.hop_limit } else { 0 },
        traffic_class: if global { d.traffic_class } else { 0 },
        flow_label: if global { d.flow_label } else { 0 },
        sl: d.sl,
        port: d.port_num,
    }
}

/// The extended MODIFY_QP: the mlx5 udata (`struct mlx5_ib_modify_qp`) may ask for out-of-order
/// data placement, which mlx5_ib_modify_qp (Linux 6.10+) grants only with the device's
/// `dp_ordering_ooo_all_*` cap for the QP's transport (get_dp_ooo_cap; DCI and DCT: `_dc`), else
/// EOPNOTSUPP; other comp_mask bits are EOPNOTSUPP too. libmlx5 55+ sends it on RESET->INIT.
pub fn modify_qp_ex(
    dev: &mut Device,
    r: &ib_uverbs_modify_qp,
    udata: &[u8],
    dctn: Option<&mut Option<u32>>,
) -> Result<(), i32> {
    let comp_mask = udata
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_ne_bytes);
    if comp_mask & !MLX5_IB_MODIFY_QP_OOO_DP != 0 {
        return Err(libc::EOPNOTSUPP);
    }
    let ooo = comp_mask & MLX5_IB_MODIFY_QP_OOO_DP != 0;
    if ooo {
        let kind = dev.qps.get(&r.qp_handle).ok_or(libc::EINVAL)?.kind;
        // The emulated caps name DC only (dp_ordering_ooo_all_dc).
        if !dev.profile.ooo_dp || !matches!(kind, QpKind::Dci | QpKind::Dct) {
            return Err(libc::EOPNOTSUPP);
        }
    }
    modify_qp(dev, r, dctn)?;
    if ooo {
        if let Some(qp) = dev.qps.get_mut(&r.qp_handle) {
            qp.ooo_dp = true;
        }
    }
    Ok(())
}

/// ib_core's `rdma_fill_sgid_attr` -> `rdma_get_gid_attr` (cache.c) for an address with a GRH:
/// an index past the port's GID table is EINVAL, one whose entry is empty ENODATA.
pub fn sgid_entry(profile: &crate::profile::Profile, index: u8) -> Result<(), i32> {
    if u32::from(index) >= profile.gid_tbl_len() {
        Err(libc::EINVAL)
    } else if u32::from(index) >= profile.gid_count() {
        Err(libc::ENODATA)
    } else {
        Ok(())
    }
}

/// Applies a MODIFY_QP. For a DCT reaching RTR, `dctn` receives the DCT number the firmware
/// assigned (mlx5_ib_modify_dct returns it in the udata response).
pub fn modify_qp(dev: &mut Device, r: &ib_uverbs_modify_qp, dctn: Option<&mut Option<u32>>) -> Result<(), i32> {
    let link_layer = dev.profile.link_layer;
    let atomics = dev.profile.atomics;
    let qp = dev.qps.get(&r.qp_handle).ok_or(libc::EINVAL)?;
    let kind = qp.kind;
    let cur = if r.attr_mask & CUR_STATE != 0 {
        QpState::from_u32(u32::from(r.cur_qp_state)).ok_or(libc::EINVAL)?
    } else {
        qp.state
    };
    let new = if r.attr_mask & STATE != 0 {
        QpState::from_u32(u32::from(r.qp_state)).ok_or(libc::EINVAL)?
    } else {
        cur
    };
    let (req, opt) = masks(kind, cur, new).ok_or(libc::EINVAL)?;
    let extra = r.attr_mask & !(STATE | CUR_STATE);
    // is_valid_mask / ib_modify_qp_is_ok: every required bit, nothing outside required|optional.
    if extra & req != req || extra & !(req | opt) != 0 {
        crate::log(format_args!(
            "modify {kind:?} {cur:?}->{new:?}: mask {:#x} not in req {req:#x} opt {opt:#x}",
            r.attr_mask
        ));
        return Err(libc::EINVAL);
    }
    // mlx5_ib_modify_qp: port and P_Key index against the port and its table.
    if r.attr_mask & PORT != 0 && r.port_num != 1 {
        return Err(libc::EINVAL);
    }
    if r.attr_mask & PKEY_INDEX != 0 && crate::engine::headers::pkey_at(dev.profile, r.pkey_index).is_none() {
        return Err(libc::EINVAL);
    }
    if r.attr_mask & AV != 0 {
        let p = path_of(&r.dest);
        // ib_resolve_eth_dmac / rdma_check_ah_attr: RoCE needs a GRH; the source GID exists.
        if link_layer == LinkLayer::Ethernet && !p.is_global {
            return Err(libc::EINVAL);
        }
        if p.is_global {
            sgid_entry(dev.profile, p.sgid_index)?;
        }
    }
    if r.attr_mask & PATH_MTU != 0 && !(1..=5).contains(&r.path_mtu) {
        return Err(libc::EINVAL);
    }
    if r.attr_mask & MAX_QP_RD_ATOMIC != 0 && u32::from(r.max_rd_atomic) > crate::profile::MAX_QP_RD_ATOM {
        return Err(libc::EINVAL);
    }
    if r.attr_mask & MAX_DEST_RD_ATOMIC != 0 && u32::from(r.max_dest_rd_atomic) > crate::profile::MAX_QP_INIT_RD_ATOM {
        return Err(libc::EINVAL);
    }
    // get_atomic_mode: remote atomic access on a function without atomics is not supported
    // (mlx5_ib_modify_dct returns -EOPNOTSUPP; the RC path likewise).
    if r.attr_mask & ACCESS_FLAGS != 0 && r.qp_access_flags & 8 != 0 && !atomics {
        return Err(libc::EOPNOTSUPP);
    }
    let assign_dctn = kind == QpKind::Dct && new == QpState::Rtr && cur == QpState::Init;
    let new_dctn = if assign_dctn { Some(dev.qpn()?) } else { None };
    let qp = dev.qps.get_mut(&r.qp_handle).ok_or(libc::EINVAL)?;
    let m = r.attr_mask;
    if m & PORT != 0 {
        qp.port = r.port_num;
    }
    if m & PKEY_INDEX != 0 {
        qp.pkey_index = r.pkey_index;
    }
    if m & ACCESS_FLAGS != 0 {
        qp.access = r.qp_access_flags;
    }
    if m & AV != 0 {
        qp.path = path_of(&r.dest);
    }
    if m & PATH_MTU != 0 {
        qp.path_mtu = u32::from(r.path_mtu);
    }
    if m & DEST_QPN != 0 {
        qp.dest_qpn = r.dest_qp_num;
    }
    if m & MIN_RNR_TIMER != 0 {
        qp.min_rnr_timer = r.min_rnr_timer;
    }
    if m & TIMEOUT != 0 {
        qp.timeout = r.timeout;
    }
    if m & RETRY_CNT != 0 {
        qp.retry_cnt = r.retry_cnt;
    }
    if m & RNR_RETRY != 0 {
        qp.rnr_retry = r.rnr_retry;
    }
    if m & MAX_QP_RD_ATOMIC != 0 {
        qp.max_rd_atomic = r.max_rd_atomic;
    }
    if m & MAX_DEST_RD_ATOMIC != 0 {
        qp.max_dest_rd_atomic = r.max_dest_rd_atomic;
    }
    if m & SQ_PSN != 0 {
        qp.sq_psn = r.sq_psn;
    }
    if m & RQ_PSN != 0 {
        qp.rq_psn = r.rq_psn;
    }
    if m & QKEY != 0 {
        qp.qkey = r.qkey;
    }
    // Software that rewrote the send record since RESET (libmlx5 zeroes it as soon as
    // MODIFY_QP(RESET) returns) made it live again, whatever it writes later
    // (Qp::sq_producer): a record back at its old value after a zeroing is new work.
    if let Some(stale) = qp.sq_stale_record {
        if qp.db != 0 && dev.dma.read_be32(qp.db + 4) & 0xffff != stale.value {
            qp.sq_stale_record = None;
        }
    }
    if new == QpState::Reset {
        // To RESET the HCA forgets the rings' progress: counters restart at 0, as libmlx5
        // resets its own (mlx5_modify_qp -> mlx5_init_qp_indices).
        qp.reset_send_queue();
        // The record keeps the old producer until software rings again (Qp::sq_producer);
        // what the ring holds now tells a later post of as many basic blocks from it.
        qp.sq_stale_record = (qp.sq.cnt > 0 && qp.db != 0).then(|| {
            let value = dev.dma.read_be32(qp.db + 4) & 0xffff;
            StaleRecord::at_reset(dev.dma.as_ref(), &qp.sq, value)
        });
        qp.rq_ci = 0;
        qp.errored_streams.clear();
    }
    qp.state = new;
    let qpn = qp.qpn;
    if let Some(n) = new_dctn {
        qp.qpn = n;
        dev.qpn_to_handle.insert(n, r.qp_handle);
    }
    dev.reindex_qp(r.qp_handle);
    if let (Some(out), Some(n)) = (dctn, new_dctn) {
        *out = Some(n);
    }
    crate::log(format_args!(
        "modify {kind:?} {:#x}: {cur:?} -> {new:?} mask {:#x}",
        new_dctn.unwrap_or(qpn),
        r.attr_mask
    ));
    Ok(())
}

/// QUERY_QP: the attributes as the kernel reports them (`attr_mask` as the caller asked).
pub fn query_qp(dev: &Device, h: u32, attr_mask: u32) -> Result<ib_uverbs_query_qp_resp, i32> {
    let qp = dev.qps.get(&h).ok_or(libc::EINVAL)?;
    if qp.kind == QpKind::Dct {
        return query_dct(qp, attr_mask);
    }
    let mut r = ib_uverbs_query_qp_resp::default();
    r.dest.dgid = qp.path.dgid;
    r.dest.dlid = qp.path.dlid;
    r.dest.is_global = u8::from(qp.path.is_global);
    r.dest.sgid_index = qp.path.sgid_index;
    r.dest.hop_limit = qp.path.hop_limit;
    r.dest.port_num = qp.path.port;
    r.qp_state = qp.state as u8;
    r.cur_qp_state = qp.state as u8;
    r.path_mtu = qp.path_mtu as u8;
    // mlx5_ib_query_qp reads the access bits back from the QPC (rre/rwe/rae), so the ones
    // max_dest_rd_atomic = 0 cleared are not reported.
    r.qp_access_flags = qp.responder_access();
    r.pkey_index = qp.pkey_index;
    r.port_num = qp.port;
    r.dest_qp_num = qp.dest_qpn;
    r.sq_psn = qp.sq_psn;
    r.rq_psn = qp.rq_psn;
    r.max_rd_atomic = qp.max_rd_atomic;
    r.max_dest_rd_atomic = qp.max_dest_rd_atomic;
    r.min_rnr_timer = qp.min_rnr_timer;
    r.timeout = qp.timeout;
    r.retry_cnt = qp.retry_cnt;
    r.rnr_retry = qp.rnr_retry;
    r.qkey = qp.qkey;
    r.sq_sig_all = u8::from(qp.sq_sig_all);
    r.max_send_wr = qp.sq.cnt;
    r.max_recv_wr = qp.rq.cnt;
    r.max_inline_data = qp.max_inline_data;
    // mlx5_ib_query_qp: cap.max_recv_sge is rq.max_gs, what one receive WQE stride holds;
    // cap.max_send_sge is sq.max_gs, as created.
    r.max_send_sge = qp.max_send_sge;
    r.max_recv_sge = if qp.rq.cnt > 0 { (1u32 << qp.rq.shift) / 16 } else { 0 };
    Ok(r)
}

/// mlx5_ib_dct_query_qp (drivers/infiniband/hw/mlx5/qp.c): only these attributes (else EINVAL),
/// only in RTR (else EINVAL), read from the DCT context: the remote access bits (rre, rwe, rae),
/// port, min_rnr_nak, path MTU and P_Key index. It fills the GRH fields without setting
/// IB_AH_GRH, so ib_uverbs' copy_ah_attr_to_uverbs reports the path as not global and copies no
/// GRH field (nor a port in the address): none of them reaches userspace.
fn query_dct(qp: &crate::device::objects::Qp, attr_mask: u32) -> Result<ib_uverbs_query_qp_resp, i32> {
    let supported = STATE | ACCESS_FLAGS | PORT | MIN_RNR_TIMER | AV | PATH_MTU | PKEY_INDEX;
    if attr_mask & !supported != 0 || qp.state != QpState::Rtr {
        return Err(libc::EINVAL);
    }
    let mut r = ib_uverbs_query_qp_resp::default();
    if attr_mask & STATE != 0 {
        r.qp_state = QpState::Rtr as u8;
    }
    if attr_mask & ACCESS_FLAGS != 0 {
        use crate::engine::responder::{ACCESS_REMOTE_ATOMIC, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};
        r.qp_access_flags = qp.access & (ACCESS_REMOTE_READ | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC);
    }
    if attr_mask & PORT != 0 {
        r.port_num = qp.port;
    }
    if attr_mask & MIN_RNR_TIMER != 0 {
        r.min_rnr_timer = qp.min_rnr_timer;
    }
    if attr_mask & PATH_MTU != 0 {
        r.path_mtu = qp.path_mtu as u8;
    }
    if attr_mask & PKEY_INDEX != 0 {
        r.pkey_index = qp.pkey_index;
    }
    Ok(r)
}
