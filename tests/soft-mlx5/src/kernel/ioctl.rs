//! RDMA_VERBS_IOCTL: the ioctl framework's method dispatch (uverbs_ioctl.c) and the DEVX
//! methods libmlx5 uses (drivers/infiniband/hw/mlx5/devx.c): general commands (QUERY_HCA_CAP),
//! general objects (the AV-to-QP mapping behind `mlx5dv_map_ah_to_qp`) and the QP modify behind
//! `mlx5dv_dci_stream_id_reset`.
//!
//! A method the device does not implement answers EPROTONOSUPPORT, which libibverbs takes as
//! "framework present, this method absent" and falls back to the write() command where one
//! exists (libibverbs/cmd_fallback.c `_execute_ioctl_fallback`).

use super::prm::{self, cap, get, get64, set, set64};
use crate::device::objects::{QpKind, QpState};
use crate::device::Device;
use crate::profile::LinkLayer;
use crate::uapi::ioctl::*;
use crate::uapi::read_struct;

/// One attribute of the call, as the library passed it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Attr {
    /// Index in the user's attribute array (to write outputs back).
    index: usize,
    id: u16,
    len: u16,
    pub(super) data: u64,
}

/// A parsed call.
pub(super) struct Call {
    hdr_addr: u64,
    object: u16,
    method: u16,
    attrs: Vec<Attr>,
}

impl Call {
    pub(super) fn attr(&self, id: u16) -> Option<Attr> {
        self.attrs.iter().copied().find(|a| a.id == id)
    }

    /// An input attribute's bytes: inline in `data` up to 8 bytes, else behind the pointer.
    pub(super) fn input(&self, dev: &Device, id: u16) -> Result<Vec<u8>, i32> {
        let a = self.attr(id).ok_or(libc::EINVAL)?;
        let mut buf = vec![0u8; usize::from(a.len)];
        if a.len <= 8 {
            buf.copy_from_slice(&a.data.to_ne_bytes()[..usize::from(a.len)]);
        } else {
            dev.dma.read(a.data, &mut buf);
        }
        Ok(buf)
    }

    /// Room of an output attribute.
    pub(super) fn out_len(&self, id: u16) -> Result<usize, i32> {
        Ok(usize::from(self.attr(id).ok_or(libc::EINVAL)?.len))
    }

    /// Writes an output attribute (uverbs_copy_to) and marks it valid (UVERBS_ATTR_F_VALID_OUTPUT).
    pub(super) fn output(&self, dev: &Device, id: u16, bytes: &[u8]) -> Result<(), i32> {
        let a = self.attr(id).ok_or(libc::EINVAL)?;
        let n = bytes.len().min(usize::from(a.len));
        dev.dma.write(a.data, &bytes[..n]);
        self.mark_valid(dev, a);
        Ok(())
    }

    /// Writes a new object's handle into an IDR output attribute (its `data`).
    pub(super) fn output_handle(&self, dev: &Device, id: u16, handle: u32) -> Result<(), i32> {
        let a = self.attr(id).ok_or(libc::EINVAL)?;
        dev.dma.write(self.attr_addr(a) + 8, &u64::from(handle).to_ne_bytes());
        self.mark_valid(dev, a);
        Ok(())
    }

    fn attr_addr(&self, a: Attr) -> u64 {
        self.hdr_addr + 24 + 16 * a.index as u64
    }

    fn mark_valid(&self, dev: &Device, a: Attr) {
        let flags_addr = self.attr_addr(a) + 4;
        let mut f = [0u8; 2];
        dev.dma.read(flags_addr, &mut f);
        let flags = u16::from_ne_bytes(f) | UVERBS_ATTR_F_VALID_OUTPUT;
        dev.dma.write(flags_addr, &flags.to_ne_bytes());
    }
}

/// Handles one RDMA_VERBS_IOCTL whose header is at `hdr_addr`; Err(errno).
pub fn handle(fd: i32, hdr_addr: u64) -> Result<(), i32> {
    let mut dev = crate::device::global();
    let mut head = [0u8; 24];
    dev.dma.read(hdr_addr, &mut head);
    let hdr: ib_uverbs_ioctl_hdr = read_struct(&head);
    // ib_uverbs_ioctl: the length must cover the header and the attribute array.
    if usize::from(hdr.length) != 24 + 16 * usize::from(hdr.num_attrs) || hdr.reserved1 != 0 {
        return Err(libc::EINVAL);
    }
    let mut attrs = Vec::with_capacity(usize::from(hdr.num_attrs));
    for index in 0..usize::from(hdr.num_attrs) {
        let mut raw = [0u8; 16];
        dev.dma.read(hdr_addr + 24 + 16 * index as u64, &mut raw);
        let a: ib_uverbs_attr = read_struct(&raw);
        attrs.push(Attr {
            index,
            id: a.attr_id,
            len: a.len,
            data: a.data(),
        });
    }
    let call = Call {
        hdr_addr,
        object: hdr.object_id,
        method: hdr.method_id,
        attrs,
    };
    let devx = match call.object {
        MLX5_IB_OBJECT_DEVX | MLX5_IB_OBJECT_DEVX_ASYNC_EVENT_FD => Some(super::DevxMethod::Other),
        MLX5_IB_OBJECT_DEVX_OBJ | MLX5_IB_OBJECT_DEVX_UMEM => Some(super::DevxMethod::Object),
        _ => None,
    };
    if let Some(m) = devx {
        super::devx_allowed(dev.profile, super::devx_uid_of(fd), m)?;
    }
    let r = match method(call.object, call.method) {
        // Disassociated (super::device_fatal): a driver method's handler is gone
        // (uverbs_ioctl.c uverbs_disassociate_api_pre, then ib_uverbs_run_method: EIO), and a
        // core method's lookups and new objects fail with EIO (rdma_core.c
        // rdma_lookup_get_uobject, alloc_uobj); the ones this device leaves to write() go there.
        Some(_) if dev.fatal => Err(libc::EIO),
        Some(run) => run(&mut dev, fd, &call),
        None => {
            crate::log(format_args!(
                "ioctl object {:#x} method {:#x}: not implemented, write() fallback",
                hdr.object_id, hdr.method_id
            ));
            Err(libc::EPROTONOSUPPORT)
        }
    };
    if let Err(e) = r {
        crate::log(format_args!(
            "ioctl object {:#x} method {:#x}: errno {e}",
            hdr.object_id, hdr.method_id
        ));
    }
    r
}

/// A method this device implements: what it does to the device for context `fd`.
type Method = fn(&mut Device, i32, &Call) -> Result<(), i32>;

/// The methods this device implements, by object and method id.
fn method(object: u16, method: u16) -> Option<Method> {
    let m: Method = match (object, method) {
        (MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_OTHER) => |dev, _, call| devx_other(dev, call),
        (MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_CREATE) => devx_obj_create,
        (MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_DESTROY) => |dev, _, call| {
            let a = call.attr(MLX5_IB_ATTR_DEVX_OBJ_DESTROY_HANDLE).ok_or(libc::EINVAL)?;
            super::devx::destroy(dev, a.data as u32)
        },
        (MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_MODIFY) => |dev, _, call| devx_qp_modify(dev, call),
        (MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_QUERY) => |dev, _, call| devx_obj_query(dev, call),
        (MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_QUERY_UAR) => super::devx::query_uar,
        (MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_SUBSCRIBE_EVENT) => super::devx::subscribe_event,
        (MLX5_IB_OBJECT_DEVX_UMEM, MLX5_IB_METHOD_DEVX_UMEM_REG) => super::devx::umem_reg,
        (MLX5_IB_OBJECT_DEVX_UMEM, MLX5_IB_METHOD_DEVX_UMEM_DEREG) => |dev, _, call| super::devx::umem_dereg(dev, call),
        (MLX5_IB_OBJECT_DEVX_ASYNC_EVENT_FD, MLX5_IB_METHOD_DEVX_ASYNC_EVENT_FD_ALLOC) => {
            |dev, _, call| super::devx::event_channel_alloc(dev, call)
        }
        (UVERBS_OBJECT_MR, UVERBS_METHOD_ADVISE_MR) => |dev, _, call| advise_mr(dev, call),
        (UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT) => query_context,
        (UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_TABLE) => |dev, _, call| query_gid_table(dev, call),
        (UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_ENTRY) => |dev, _, call| query_gid_entry(dev, call),
        _ => return None,
    };
    Some(m)
}

/// A firmware command failed: the status goes into the output mailbox and the call fails with
/// EREMOTEIO (mlx5_cmd_check), which libmlx5 turns into an errno by the status.
pub(super) fn fw_error(dev: &Device, call: &Call, out_attr: u16, status: u8) -> Result<(), i32> {
    let mut out = vec![0u8; call.out_len(out_attr)?.max(16)];
    set(&mut out, prm::MBOX_OUT_STATUS, u32::from(status));
    call.output(dev, out_attr, &out)?;
    Err(libc::EREMOTEIO)
}

/// MLX5_IB_METHOD_DEVX_OTHER: the general commands devx_is_general_cmd allows; libmlx5 sends
/// QUERY_HCA_CAP for the general, ODP and atomic capability pages.
fn devx_other(dev: &Device, call: &Call) -> Result<(), i32> {
    let input = call.input(dev, MLX5_IB_ATTR_DEVX_OTHER_CMD_IN)?;
    let opcode = get(&input, prm::QUERY_HCA_CAP_IN_OPCODE) as u16;
    if opcode == prm::MLX5_CMD_OP_QUERY_LAG {
        // A single-port function is in no LAG: lag_state 0 (mlx5_ifc lag_context).
        let out = vec![0u8; call.out_len(MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT)?];
        return call.output(dev, MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT, &out);
    }
    if opcode == prm::MLX5_CMD_OP_QUERY_HCA_VPORT_CONTEXT {
        // devx_is_general_cmd allows it: the port's own vport (port_num 0 on a single-port
        // function), as the firmware reports it (mlx5_ifc hca_vport_context).
        let mut out = vec![0u8; call.out_len(MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT)?];
        if out.len() < 16 + 0x100 {
            return fw_error(
                dev,
                call,
                MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT,
                prm::MLX5_CMD_STAT_BAD_OUTP_LEN_ERR,
            );
        }
        let c = prm::QUERY_HCA_VPORT_CONTEXT_OUT_CONTEXT;
        let guid = crate::profile::NODE_GUID_BASE + u64::from(dev.node);
        set(&mut out, prm::HCA_VPORT_CONTEXT_PORT_PHYSICAL_STATE.within(c), 5);
        set(&mut out, prm::HCA_VPORT_CONTEXT_PORT_STATE.within(c), dev.port_state);
        set(&mut out, prm::HCA_VPORT_CONTEXT_VPORT_STATE.within(c), dev.port_state);
        set64(&mut out, prm::HCA_VPORT_CONTEXT_SYSTEM_IMAGE_GUID.within(c), guid);
        set64(&mut out, prm::HCA_VPORT_CONTEXT_PORT_GUID.within(c), guid);
        set64(&mut out, prm::HCA_VPORT_CONTEXT_NODE_GUID.within(c), guid);
        set(
            &mut out,
            prm::HCA_VPORT_CONTEXT_LID.within(c),
            u32::from(dev.profile.lid_of(dev.node)),
        );
        return call.output(dev, MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT, &out);
    }
    if opcode != prm::MLX5_CMD_OP_QUERY_HCA_CAP {
        // devx_is_general_cmd: anything else is not a general command (of those answered here).
        return Err(libc::EINVAL);
    }
    let op_mod = get(&input, prm::QUERY_HCA_CAP_IN_OP_MOD) as u16;
    let mut out = vec![0u8; call.out_len(MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT)?];
    if out.len() < prm::QUERY_HCA_CAP_OUT_CAPABILITY_BYTE_OFF {
        return fw_error(
            dev,
            call,
            MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT,
            prm::MLX5_CMD_STAT_BAD_OUTP_LEN_ERR,
        );
    }
    let p = dev.profile;
    match op_mod & !1 {
        prm::MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE => {
            set(
                &mut out,
                cap(prm::CMD_HCA_CAP_QPC_EXTENSION),
                u32::from(p.qpc_extension),
            );
            let objs = if p.av_qp_mapping {
                1u64 << prm::MLX5_OBJ_TYPE_AV_QP_MAPPING
            } else {
                0
            };
            set64(&mut out, cap(prm::CMD_HCA_CAP_GENERAL_OBJ_TYPES), objs);
            // What a ConnectX-5 reports and DEVX consumers read: messages up to 1 GiB
            // (log_max_msg 30, or SOFT_MLX5_LOG_MAX_MSG: the limit the port reports as
            // max_msg_sz and the data path enforces), DC targets, CQE version 1, RMPs (log 18), atomics where the
            // profile has them. UMR may not modify an mkey's atomic access here
            // (umr_modify_atomic_disabled: UMR is not modelled); KSM indirect mkeys are
            // (fixed_buffer_size).
            set(&mut out, cap(prm::CMD_HCA_CAP_LOG_MAX_MSG), u32::from(dev.log_max_msg));
            set(&mut out, cap(prm::CMD_HCA_CAP_DCT), 1);
            set(&mut out, cap(prm::CMD_HCA_CAP_CQE_VERSION), 1);
            set(&mut out, cap(prm::CMD_HCA_CAP_LOG_MAX_RMP), 18);
            set(&mut out, cap(prm::CMD_HCA_CAP_ATOMIC), u32::from(p.atomics));
            set(&mut out, cap(prm::CMD_HCA_CAP_UMR_MODIFY_ATOMIC_DISABLED), 1);
            set(&mut out, cap(prm::CMD_HCA_CAP_FIXED_BUFFER_SIZE), 1);
            // 16 outstanding reads/atomics per DC initiator and target (log 4); libmlx5 47+
            // reports them as max_dc_rd_atom (requester) and max_dc_init_rd_atom (responder).
            set(&mut out, cap(prm::CMD_HCA_CAP_LOG_MAX_RA_REQ_DC), LOG_MAX_RA_REQ_DC);
            set(&mut out, cap(prm::CMD_HCA_CAP_LOG_MAX_RA_RES_DC), LOG_MAX_RA_RES_DC);
            // Out-of-order data placement for DC (read by libmlx5 55+ into
            // ooo_recv_wrs_caps.max_dct), on the profiles whose ConnectX has it.
            set(
                &mut out,
                cap(prm::CMD_HCA_CAP_DP_ORDERING_OOO_ALL_DC),
                u32::from(p.ooo_dp),
            );
            set(
                &mut out,
                cap(prm::CMD_HCA_CAP_ROCE),
                u32::from(p.link_layer == LinkLayer::Ethernet),
            );
            // A ConnectX says which link its port runs (port_type 1: Ethernet) and that the
            // function has one port.
            set(
                &mut out,
                cap(prm::CMD_HCA_CAP_PORT_TYPE),
                u32::from(p.link_layer == LinkLayer::Ethernet),
            );
            set(&mut out, cap(prm::CMD_HCA_CAP_NUM_PORTS), 1);
        }
        prm::MLX5_SET_HCA_CAP_OP_MOD_ODP => {
            let on = u32::from(p.odp);
            for f in [
                prm::ODP_CAP_DC_ODP_CAPS_SEND,
                prm::ODP_CAP_DC_ODP_CAPS_RECEIVE,
                prm::ODP_CAP_DC_ODP_CAPS_WRITE,
                prm::ODP_CAP_DC_ODP_CAPS_READ,
                prm::ODP_CAP_DC_ODP_CAPS_ATOMIC,
                prm::ODP_CAP_DC_ODP_CAPS_SRQ_RECEIVE,
            ] {
                set(&mut out, cap(f), on);
            }
        }
        prm::MLX5_SET_HCA_CAP_OP_MOD_ATOMIC => {
            if p.atomics {
                // Compare-swap and fetch-add (bits 0, 1) on 8 bytes (bit 3), host endianness.
                set(&mut out, cap(prm::ATOMIC_CAPS_ATOMIC_OPERATIONS), 0x3);
                set(&mut out, cap(prm::ATOMIC_CAPS_ATOMIC_SIZE_QP), 0x8);
                set(&mut out, cap(prm::ATOMIC_CAPS_ATOMIC_SIZE_DC), 0x8);
                set(&mut out, cap(prm::ATOMIC_CAPS_ATOMIC_REQ_8B_ENDIANNESS_MODE), 1);
                set(
                    &mut out,
                    cap(prm::ATOMIC_CAPS_SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1),
                    1,
                );
            }
        }
        // The NIC flow table page of a function without NIC flow steering: the firmware
        // answers the page, every capability 0 (ft_support and the rest), which mlx5dv_dr and
        // rdma-core's flow tests read as "not supported".
        prm::MLX5_SET_HCA_CAP_OP_MOD_NIC_FLOW_TABLE => {}
        _ => {
            return fw_error(
                dev,
                call,
                MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT,
                prm::MLX5_CMD_STAT_BAD_PARAM_ERR,
            )
        }
    }
    call.output(dev, MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT, &out)
}

/// MLX5_IB_METHOD_DEVX_OBJ_CREATE: general objects; the device knows the AV-to-QP mapping.
fn devx_obj_create(dev: &mut Device, fd: i32, call: &Call) -> Result<(), i32> {
    let input = call.input(dev, MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_IN)?;
    let out_attr = MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT;
    let opcode = get(&input, prm::GENERAL_OBJ_IN_CMD_HDR_OPCODE) as u16;
    match opcode {
        prm::MLX5_CMD_OP_CREATE_QP => return super::devx::create_qp(dev, fd, call, &input),
        prm::MLX5_CMD_OP_CREATE_DCT => return super::devx::create_dct(dev, call, &input),
        prm::MLX5_CMD_OP_CREATE_RMP => return super::devx::create_rmp(dev, call, &input),
        prm::MLX5_CMD_OP_CREATE_MKEY => return super::devx::create_mkey(dev, call, &input),
        _ => {}
    }
    let obj_type = get(&input, prm::GENERAL_OBJ_IN_CMD_HDR_OBJ_TYPE) as u16;
    if opcode != prm::MLX5_CMD_OP_CREATE_GENERAL_OBJECT {
        return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_OP_ERR);
    }
    if obj_type != prm::MLX5_OBJ_TYPE_AV_QP_MAPPING || !dev.profile.av_qp_mapping {
        return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_PARAM_ERR);
    }
    let qpn = get(&input, prm::CREATE_AV_QP_MAPPING_IN_MAPPING_QPN) & 0xff_ffff;
    // The firmware resolves the QP the mapping names (an initiator: its ECE is what counts).
    match dev.qp_by_num(qpn) {
        Some((_, q)) if q.kind != QpKind::Dct => {}
        _ => return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_PARAM_ERR),
    }
    let handle = dev.handle();
    let obj_id = dev.number();
    dev.devx_objs
        .insert(handle, crate::device::DevxObj::AvQpMapping { qpn, obj_id });
    let mut out = vec![0u8; call.out_len(out_attr)?];
    set(&mut out, prm::GENERAL_OBJ_OUT_CMD_HDR_OBJ_ID, obj_id);
    call.output(dev, out_attr, &out)?;
    call.output_handle(dev, MLX5_IB_ATTR_DEVX_OBJ_CREATE_HANDLE, handle)
}

/// MLX5_IB_METHOD_DEVX_OBJ_MODIFY on a QP: RTS2RTS with the DCI stream channel id resets that
/// stream's error state (mlx5dv_dci_stream_id_reset).
fn devx_qp_modify(dev: &mut Device, call: &Call) -> Result<(), i32> {
    let input = call.input(dev, MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_IN)?;
    let out_attr = MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_OUT;
    let handle = call.attr(MLX5_IB_ATTR_DEVX_OBJ_MODIFY_HANDLE).ok_or(libc::EINVAL)?.data as u32;
    let opcode = get(&input, prm::RTS2RTS_QP_IN_OPCODE) as u16;
    let qpn = get(&input, prm::RTS2RTS_QP_IN_QPN);
    let qp = dev.qps.get_mut(&handle).ok_or(libc::EINVAL)?;
    // devx_is_valid_obj_id: the command must name the object the handle refers to.
    if qp.qpn != qpn {
        return Err(libc::EINVAL);
    }
    if opcode != prm::MLX5_CMD_OP_RTS2RTS_QP {
        return super::devx::modify_qp(dev, call, handle, &input);
    }
    if qp.state != QpState::Rts {
        return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_QP_STATE_ERR);
    }
    let mask = get64(&input, prm::RTS2RTS_QP_IN_OPT_PARAM_MASK_95_32);
    if get(&input, prm::RTS2RTS_QP_IN_QPC_EXT) == 1 && mask & prm::MLX5_QPC_OPT_MASK_32_DCI_STREAM_CHANNEL_ID != 0 {
        let stream = get(
            &input,
            prm::QPC_EXT_DCI_STREAM_CHANNEL_ID.within(prm::RTS2RTS_QP_IN_QPC_DATA_EXT),
        ) as u16;
        // The firmware resets a stream that is in error; a healthy one is a bad parameter
        // (rdma-core's test_dc_send_stream_bad_flow expects that reset to fail).
        match qp.stream_channel(stream) {
            Some(c) if qp.errored_streams.contains(&c) => {
                qp.errored_streams.retain(|&s| s != c);
                crate::log(format_args!("qp {qpn:#x}: stream {stream} (channel {c}) reset"));
            }
            _ => return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_PARAM_ERR),
        }
    }
    let out = vec![0u8; call.out_len(out_attr)?];
    call.output(dev, out_attr, &out)
}

/// MLX5_IB_METHOD_DEVX_OBJ_QUERY on a verbs QP (mlx5dv_devx_qp_query): QUERY_DCT on a DCT, what
/// rdma-core's query_dct_in_order sends and what reads a DCT's key, state and key violations.
/// devx.c: the command must be a query (devx_is_obj_query_cmd) naming the object the handle
/// refers to (devx_is_valid_obj_id: a DCT's object id is its DCT number, which exists from RTR).
fn devx_dct_query(dev: &Device, call: &Call) -> Result<(), i32> {
    let input = call.input(dev, MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_IN)?;
    let out_attr = MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_OUT;
    let handle = call.attr(MLX5_IB_ATTR_DEVX_OBJ_QUERY_HANDLE).ok_or(libc::EINVAL)?.data as u32;
    let opcode = get(&input, prm::QUERY_DCT_IN_OPCODE) as u16;
    let qp = dev.qps.get(&handle).ok_or(libc::EINVAL)?;
    if opcode != prm::MLX5_CMD_OP_QUERY_DCT {
        // Other QP queries (QUERY_QP) are not emulated: the kernel would pass them on, so the
        // firmware's answer is what a caller sees.
        return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_OP_ERR);
    }
    let dctn = get(&input, prm::QUERY_DCT_IN_DCTN);
    if qp.kind != QpKind::Dct || qp.state != QpState::Rtr || qp.qpn != dctn {
        return Err(libc::EINVAL);
    }
    let mut out = vec![0u8; call.out_len(out_attr)?];
    if out.len() < prm::QUERY_DCT_OUT_SZ_BYTES {
        return fw_error(dev, call, out_attr, prm::MLX5_CMD_STAT_BAD_OUTP_LEN_ERR);
    }
    write_dctc(dev, qp, &mut out);
    call.output(dev, out_attr, &out)
}

/// The DCT context as mlx5_ib_modify_dct built it (RESET->INIT: rre/rwe/rae, pkey_index, port;
/// INIT->RTR: min_rnr_nak, tclass, flow_label, mtu, my_addr_index, hop_limit) and as the
/// firmware keeps it: state active (a verbs DCT is drained only on its destruction) and the
/// count of requests dropped for a wrong key.
fn write_dctc(dev: &Device, qp: &crate::device::objects::Qp, out: &mut [u8]) {
    use crate::engine::responder::{ACCESS_REMOTE_ATOMIC, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};
    let at = |f: prm::Field| f.within(prm::QUERY_DCT_OUT_DCTC);
    let access = qp.access;
    set(out, at(prm::DCTC_STATE), 0);
    set(out, at(prm::DCTC_RRE), u32::from(access & ACCESS_REMOTE_READ != 0));
    set(out, at(prm::DCTC_RWE), u32::from(access & ACCESS_REMOTE_WRITE != 0));
    set(
        out,
        at(prm::DCTC_RAE),
        u32::from(access & ACCESS_REMOTE_ATOMIC != 0 && dev.profile.atomics),
    );
    // Responder resources: log2 of what one DCT serves (log_max_ra_res_dc).
    set(out, at(prm::DCTC_CS_RES), LOG_MAX_RA_RES_DC);
    set(out, at(prm::DCTC_MIN_RNR_NAK), u32::from(qp.min_rnr_timer));
    set(out, at(prm::DCTC_PD), qp.pd);
    set(out, at(prm::DCTC_TCLASS), u32::from(qp.path.traffic_class));
    set(out, at(prm::DCTC_FLOW_LABEL), qp.path.flow_label);
    set64(out, at(prm::DCTC_DC_ACCESS_KEY), qp.dc_key);
    set(out, at(prm::DCTC_MTU), qp.path_mtu);
    set(out, at(prm::DCTC_PORT), u32::from(qp.port));
    set(out, at(prm::DCTC_PKEY_INDEX), u32::from(qp.pkey_index));
    set(out, at(prm::DCTC_MY_ADDR_INDEX), u32::from(qp.path.sgid_index));
    set(out, at(prm::DCTC_HOP_LIMIT), u32::from(qp.path.hop_limit));
    set(
        out,
        at(prm::DCTC_DC_ACCESS_KEY_VIOLATION_COUNT),
        qp.dc_access_key_violation_count(),
    );
}

/// `log_max_ra_req_dc`: 16 outstanding reads/atomics per DC initiator.
const LOG_MAX_RA_REQ_DC: u32 = 4;
/// `log_max_ra_res_dc`: 16 served at once per DC target.
const LOG_MAX_RA_RES_DC: u32 = 4;

/// MLX5_IB_METHOD_DEVX_OBJ_QUERY on a QP the handle names (devx_is_valid_obj_id: the command
/// must name that object): QUERY_DCT on a DCT ([`devx_dct_query`]), or QUERY_QP.
fn devx_obj_query(dev: &Device, call: &Call) -> Result<(), i32> {
    let input = call.input(dev, MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_IN)?;
    let out_attr = MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_OUT;
    let handle = call.attr(MLX5_IB_ATTR_DEVX_OBJ_QUERY_HANDLE).ok_or(libc::EINVAL)?.data as u32;
    let opcode = get(&input, prm::QUERY_QP_IN_OPCODE) as u16;
    if opcode == prm::MLX5_CMD_OP_QUERY_DCT {
        return devx_dct_query(dev, call);
    }
    let qp = dev.qps.get(&handle).ok_or(libc::EINVAL)?;
    if opcode != prm::MLX5_CMD_OP_QUERY_QP || qp.qpn != get(&input, prm::QUERY_QP_IN_QPN) {
        return Err(libc::EINVAL);
    }
    super::devx::query_qp(dev, call, handle, out_attr)
}

/// UVERBS_METHOD_ADVISE_MR (mlx5_ib_advise_mr): prefetch advice on ODP regions of the PD. The
/// device reaches application memory directly, so a valid prefetch has nothing left to do;
/// what decides the outcome is the kernel's checks.
fn advise_mr(dev: &Device, call: &Call) -> Result<(), i32> {
    let pd = call.attr(UVERBS_ATTR_ADVISE_MR_PD_HANDLE).ok_or(libc::EINVAL)?.data as u32;
    let advice = call.attr(UVERBS_ATTR_ADVISE_MR_ADVICE).ok_or(libc::EINVAL)?.data as u32;
    let flags = call.attr(UVERBS_ATTR_ADVISE_MR_FLAGS).map_or(0, |a| a.data as u32);
    let known = matches!(
        advice,
        IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH
            | IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE
            | IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT
    );
    // The only flag is IB_UVERBS_ADVISE_MR_FLAG_FLUSH (bit 0).
    if !known || flags & !1 != 0 {
        return Err(libc::EOPNOTSUPP);
    }
    if !dev.pds.contains_key(&pd) {
        return Err(libc::EINVAL);
    }
    let list = call.input(dev, UVERBS_ATTR_ADVISE_MR_SGE_LIST)?;
    if list.is_empty() || list.len() % 16 != 0 {
        return Err(libc::EINVAL);
    }
    for sge in list.chunks_exact(16) {
        let addr = u64::from_ne_bytes(sge[0..8].try_into().unwrap_or_default());
        let length = u32::from_ne_bytes(sge[8..12].try_into().unwrap_or_default());
        let lkey = u32::from_ne_bytes(sge[12..16].try_into().unwrap_or_default());
        // mlx5_ib_prefetch_sg_list: each key names an ODP region of this PD holding the range.
        let ok = dev.mr_by_key(lkey).is_some_and(|mr| {
            mr.pd == pd && mr.access & IB_UVERBS_ACCESS_ON_DEMAND != 0 && mr.covers(addr, u64::from(length))
        });
        if !ok {
            return Err(libc::ENOENT);
        }
    }
    Ok(())
}

/// GID table entry `index` of port 1 as ib_core reports it (None: empty): InfiniBand GIDs are
/// IB type; on RoCE index 0 is v1, index 1 v2 (as the sysfs tree says).
fn gid_entry(dev: &Device, index: u32) -> Option<ib_uverbs_gid_entry> {
    let gid = dev.profile.gid(dev.node, index)?;
    let gid_type = match (dev.profile.link_layer, index) {
        (LinkLayer::InfiniBand, _) => IB_UVERBS_GID_TYPE_IB,
        (LinkLayer::Ethernet, 0) => IB_UVERBS_GID_TYPE_ROCE_V1,
        _ => IB_UVERBS_GID_TYPE_ROCE_V2,
    };
    let word = |i: usize| u64::from_ne_bytes(gid[i * 8..i * 8 + 8].try_into().unwrap_or_default());
    Some(ib_uverbs_gid_entry {
        gid: [word(0), word(1)],
        gid_index: index,
        port_num: 1,
        gid_type,
        netdev_ifindex: 0,
    })
}

fn entry_bytes(e: &ib_uverbs_gid_entry, size: usize) -> Vec<u8> {
    let mut out = vec![0u8; size];
    crate::uapi::write_struct(&mut out, e);
    out
}

/// UVERBS_METHOD_QUERY_GID_TABLE (ib_uverbs_query_gid_table, rdma_query_gid_table): every
/// valid entry of every port, in the caller's entry size; a buffer too small is EINVAL.
fn query_gid_table(dev: &Device, call: &Call) -> Result<(), i32> {
    let entry_size = call
        .attr(UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE)
        .ok_or(libc::EINVAL)?
        .data as usize;
    let flags = call.attr(UVERBS_ATTR_QUERY_GID_TABLE_FLAGS).map_or(0, |a| a.data);
    if flags != 0 || entry_size == 0 {
        return Err(libc::EINVAL);
    }
    let room = call.out_len(UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES)? / entry_size;
    let entries: Vec<_> = (0..dev.profile.gid_tbl_len())
        .filter_map(|i| gid_entry(dev, i))
        .collect();
    if entries.len() > room {
        return Err(libc::EINVAL);
    }
    let bytes: Vec<u8> = entries.iter().flat_map(|e| entry_bytes(e, entry_size)).collect();
    call.output(dev, UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES, &bytes)?;
    call.output(
        dev,
        UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES,
        &(entries.len() as u64).to_ne_bytes(),
    )
}

/// UVERBS_METHOD_QUERY_GID_ENTRY (ib_uverbs_query_gid_entry): one entry; an invalid port is
/// EINVAL, an empty index ENODATA (rdma_get_gid_attr).
/// UVERBS_METHOD_QUERY_CONTEXT (ib_uverbs `UVERBS_HANDLER(UVERBS_METHOD_QUERY_CONTEXT)`):
/// the completion vectors, the core's optional features (IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS)
/// and, from mlx5_ib `mlx5_ib_query_context`, the ucontext response GET_CONTEXT gave; what
/// ibv_import_device asks of a copied command fd.
fn query_context(dev: &mut Device, fd: i32, call: &Call) -> Result<(), i32> {
    let (total, cqe_version) = {
        let ctxs = super::contexts();
        let ctx = ctxs.get(&fd).filter(|c| c.ready).ok_or(libc::EINVAL)?;
        (ctx.tot_bfregs, ctx.cqe_version)
    };
    call.output(dev, UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, &1u32.to_ne_bytes())?;
    if call.attr(UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT).is_some() {
        call.output(dev, UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT, &1u64.to_ne_bytes())?;
    }
    if call.attr(MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX).is_some() {
        let resp = super::write::ucontext_resp(dev, total, cqe_version);
        let mut out = vec![0u8; std::mem::size_of_val(&resp)];
        crate::uapi::write_struct(&mut out, &resp);
        call.output(dev, MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX, &out)?;
    }
    Ok(())
}

fn query_gid_entry(dev: &Device, call: &Call) -> Result<(), i32> {
    let port = call.attr(UVERBS_ATTR_QUERY_GID_ENTRY_PORT).ok_or(libc::EINVAL)?.data as u32;
    let index = call
        .attr(UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX)
        .ok_or(libc::EINVAL)?
        .data as u32;
    let flags = call.attr(UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS).map_or(0, |a| a.data);
    if flags != 0 || port != 1 || index >= dev.profile.gid_tbl_len() {
        return Err(libc::EINVAL);
    }
    let e = gid_entry(dev, index).ok_or(libc::ENODATA)?;
    let size = call.out_len(UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY)?;
    call.output(dev, UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY, &entry_bytes(&e, size))
}
