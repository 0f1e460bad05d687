//! PRM command mailbox layouts that libmlx5 uses through DEVX.
//!
//! libmlx5 (rdma-core 44 and 59) drives parts of the device straight through DEVX: it builds firmware
//! command mailboxes (QUERY_HCA_CAP, RTS2RTS_QP, QUERY_QP, CREATE_GENERAL_OBJECT, ...) as big-endian
//! bit fields and reads the replies the same way. soft-mlx5 plays the firmware, so it has to decode those
//! commands and encode the replies at exactly the same bit positions.
//!
//! * [`get`], [`set`], [`get64`], [`set64`] and [`addr_of`] behave like rdma-core's `DEVX_GET`, `DEVX_SET`,
//!   `DEVX_GET64`, `DEVX_SET64` and `DEVX_ADDR_OF`.
//! * Every `pub const` [`Field`] is named `<STRUCT>_<PATH>` after the `mlx5_ifc_<struct>_bits` layout and
//!   the member path libmlx5 uses (`capability.cmd_hca_cap.qpc_extension` is [`CMD_HCA_CAP_QPC_EXTENSION`],
//!   relative to the capability page; [`cap`] places it in the QUERY_HCA_CAP output). Fields of a nested
//!   layout are relative to that layout; [`Field::within`] rebases them.
//! * `<STRUCT>_SZ_BYTES` is the layout size (`DEVX_ST_SZ_BYTES` / `DEVX_UN_SZ_BYTES`).
//!
//! The offsets and widths are facts from rdma-core's `providers/mlx5/mlx5_ifc.h`: they were computed
//! mechanically (`offsetof`/`sizeof` on the `_bits` structs, where each `u8` member is one bit) from
//! v59.0 and compared with v44.0. Every field present in both headers has the same offset and width;
//! `cmd_hca_cap.dp_ordering_ooo_all_{xrc,dc,rc,ud,uc}`, `cmd_hca_cap.fl_rc_qp_when_roce_disabled` and
//! `cmd_hca_cap.sq_ts_format` exist only in v59's header (and only libmlx5 59 reads them).
//!
//! Buffers come from the application (it picks the mailbox sizes), so nothing here panics on a short
//! buffer: reads of bytes that are not there return 0 and writes to them are dropped.

#![forbid(unsafe_code)]

/// A bit field of a PRM layout, as `u8 name[bits]` at `bit_off` in an `mlx5_ifc_*_bits` struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Offset of the field's most significant bit, in bits from the start of the layout (PRM order).
    pub bit_off: usize,
    /// Width in bits.
    pub bits: usize,
}

impl Field {
    /// A field of `bits` bits at bit offset `bit_off`.
    pub const fn new(bit_off: usize, bits: usize) -> Self {
        Field { bit_off, bits }
    }

    /// Byte offset of the field's first byte (`DEVX_BYTE_OFF`).
    pub const fn byte_off(self) -> usize {
        self.bit_off / 8
    }

    /// Size in bytes, rounded up (`DEVX_FLD_SZ_BYTES` for byte-sized fields and nested layouts).
    pub const fn byte_len(self) -> usize {
        self.bits.div_ceil(8)
    }

    /// This field of a nested layout, seen from the layout that holds the nested one at `base`.
    pub const fn within(self, base: Field) -> Field {
        Field {
            bit_off: base.bit_off + self.bit_off,
            bits: self.bits,
        }
    }
}

/// A capability-page field (`CMD_HCA_CAP_*`, `ODP_CAP_*`, ...) placed inside a `query_hca_cap_out` mailbox.
pub const fn cap(f: Field) -> Field {
    f.within(QUERY_HCA_CAP_OUT_CAPABILITY)
}

/// Byte offset of the dword holding `f`, the shift of its low bit and its mask; `None` unless `f` is
/// 1..=32 bits wide and does not cross a dword boundary (the only fields `DEVX_GET`/`DEVX_SET` handle).
const fn dword_slot(f: Field) -> Option<(usize, u32, u32)> {
    let in_dword = f.bit_off % 32;
    if f.bits == 0 || f.bits > 32 || in_dword + f.bits > 32 {
        return None;
    }
    let mask = if f.bits == 32 { u32::MAX } else { (1u32 << f.bits) - 1 };
    Some(((f.bit_off / 32) * 4, (32 - in_dword - f.bits) as u32, mask))
}

fn read_be32(buf: &[u8], off: usize) -> Option<u32> {
    let bytes: [u8; 4] = buf.get(off..off.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_be_bytes(bytes))
}

/// Reads a field of up to 32 bits, like `DEVX_GET`; 0 if the buffer is too short or `f` is wider than a dword.
pub fn get(buf: &[u8], f: Field) -> u32 {
    match dword_slot(f) {
        Some((off, shift, mask)) => read_be32(buf, off).map_or(0, |dw| (dw >> shift) & mask),
        None => 0,
    }
}

/// Writes the low `f.bits` bits of `v`, like `DEVX_SET`; ignored if the buffer is too short (or `f` too wide).
pub fn set(buf: &mut [u8], f: Field, v: u32) {
    let Some((off, shift, mask)) = dword_slot(f) else {
        return;
    };
    let Some(old) = read_be32(buf, off) else { return };
    let new = (old & !(mask << shift)) | ((v & mask) << shift);
    buf[off..off + 4].copy_from_slice(&new.to_be_bytes());
}

/// Byte offset of the big-endian qword `DEVX_GET64`/`DEVX_SET64` use for `f`: the one holding its first bit.
const fn qword_off(f: Field) -> usize {
    (f.bit_off / 64) * 8
}

/// Reads a 64-bit field, like `DEVX_GET64` (the qword holding `f.bit_off`); 0 if the buffer is too short.
pub fn get64(buf: &[u8], f: Field) -> u64 {
    let off = qword_off(f);
    let bytes: Option<[u8; 8]> = off
        .checked_add(8)
        .and_then(|end| buf.get(off..end))
        .and_then(|b| b.try_into().ok());
    bytes.map_or(0, u64::from_be_bytes)
}

/// Writes a 64-bit field, like `DEVX_SET64`; ignored if the buffer is too short.
pub fn set64(buf: &mut [u8], f: Field, v: u64) {
    let off = qword_off(f);
    if let Some(dst) = off.checked_add(8).and_then(|end| buf.get_mut(off..end)) {
        dst.copy_from_slice(&v.to_be_bytes());
    }
}

/// The bytes of a byte-aligned field or nested layout (`DEVX_ADDR_OF`); empty if the buffer does not hold it all.
pub fn addr_of(buf: &[u8], f: Field) -> &[u8] {
    let off = f.byte_off();
    off.checked_add(f.byte_len())
        .and_then(|end| buf.get(off..end))
        .unwrap_or(&[])
}

/// Mutable [`addr_of`]: the bytes of a byte-aligned field or nested layout; empty if the buffer is too short.
pub fn addr_of_mut(buf: &mut [u8], f: Field) -> &mut [u8] {
    let off = f.byte_off();
    match off.checked_add(f.byte_len()) {
        Some(end) if end <= buf.len() => &mut buf[off..end],
        _ => &mut [],
    }
}

// ---- Common command header (`mbox_in` / `mbox_out`): every command starts with these.

/// Command opcode; common to every command input mailbox.
pub const MBOX_IN_OPCODE: Field = Field::new(0x0, 16);
/// DEVX user id (the kernel stamps it for DEVX callers).
pub const MBOX_IN_UID: Field = Field::new(0x10, 16);
/// Opcode modifier; common to every command input mailbox.
pub const MBOX_IN_OP_MOD: Field = Field::new(0x30, 16);
/// Size of the common command input header.
pub const MBOX_IN_SZ_BYTES: usize = 16;
/// Command status (`MLX5_CMD_STAT_*`); libmlx5 maps it to errno on EREMOTEIO.
pub const MBOX_OUT_STATUS: Field = Field::new(0x0, 8);
/// Firmware syndrome accompanying a non-zero status.
pub const MBOX_OUT_SYNDROME: Field = Field::new(0x20, 32);
/// Size of the common command output header.
pub const MBOX_OUT_SZ_BYTES: usize = 16;

// ---- QUERY_HCA_CAP (`query_hca_cap_in` / `query_hca_cap_out`) and the capability page sizes.

/// QUERY_HCA_CAP opcode (`MLX5_CMD_OP_QUERY_HCA_CAP`).
pub const QUERY_HCA_CAP_IN_OPCODE: Field = Field::new(0x0, 16);
/// QUERY_HCA_CAP op_mod: `(cap_type << 1) | current`.
pub const QUERY_HCA_CAP_IN_OP_MOD: Field = Field::new(0x30, 16);
/// Query another function's caps (libmlx5 leaves it 0).
pub const QUERY_HCA_CAP_IN_OTHER_FUNCTION: Field = Field::new(0x40, 1);
/// Function id when `other_function` is set.
pub const QUERY_HCA_CAP_IN_FUNCTION_ID: Field = Field::new(0x50, 16);
/// Size of `query_hca_cap_in`.
pub const QUERY_HCA_CAP_IN_SZ_BYTES: usize = 16;
/// QUERY_HCA_CAP status.
pub const QUERY_HCA_CAP_OUT_STATUS: Field = Field::new(0x0, 8);
/// QUERY_HCA_CAP syndrome.
pub const QUERY_HCA_CAP_OUT_SYNDROME: Field = Field::new(0x20, 32);
/// Capability page (`hca_cap_union`) inside the QUERY_HCA_CAP output.
pub const QUERY_HCA_CAP_OUT_CAPABILITY: Field = Field::new(0x80, 32768);
/// Byte offset of the capability page in the QUERY_HCA_CAP output.
pub const QUERY_HCA_CAP_OUT_CAPABILITY_BYTE_OFF: usize = QUERY_HCA_CAP_OUT_CAPABILITY.byte_off();
/// Size of `query_hca_cap_out` (header + 4 KiB capability page).
pub const QUERY_HCA_CAP_OUT_SZ_BYTES: usize = 4112;
/// Size of the capability union (one capability page).
pub const HCA_CAP_UNION_SZ_BYTES: usize = 4096;
/// Size of the general device capability layout.
pub const CMD_HCA_CAP_SZ_BYTES: usize = 256;
/// Size of the ODP capability layout.
pub const ODP_CAP_SZ_BYTES: usize = 256;
/// Size of the atomic capability layout.
pub const ATOMIC_CAPS_SZ_BYTES: usize = 256;

// ---- General object commands (`general_obj_in_cmd_hdr` / `general_obj_out_cmd_hdr`).

/// General object command opcode (CREATE/MODIFY/QUERY/DESTROY_GENERAL_OBJECT).
pub const GENERAL_OBJ_IN_CMD_HDR_OPCODE: Field = Field::new(0x0, 16);
/// DEVX user id.
pub const GENERAL_OBJ_IN_CMD_HDR_UID: Field = Field::new(0x10, 16);
/// Object type (`MLX5_OBJ_TYPE_*`); sits where other commands have op_mod.
pub const GENERAL_OBJ_IN_CMD_HDR_OBJ_TYPE: Field = Field::new(0x30, 16);
/// Object id (modify/query/destroy).
pub const GENERAL_OBJ_IN_CMD_HDR_OBJ_ID: Field = Field::new(0x40, 32);
/// log2 of the number of objects in a bulk allocation.
pub const GENERAL_OBJ_IN_CMD_HDR_LOG_OBJ_RANGE: Field = Field::new(0x63, 5);
/// Size of `general_obj_in_cmd_hdr` (the whole DESTROY_GENERAL_OBJECT input).
pub const GENERAL_OBJ_IN_CMD_HDR_SZ_BYTES: usize = 16;
/// General object command status.
pub const GENERAL_OBJ_OUT_CMD_HDR_STATUS: Field = Field::new(0x0, 8);
/// General object command syndrome.
pub const GENERAL_OBJ_OUT_CMD_HDR_SYNDROME: Field = Field::new(0x20, 32);
/// Id of the created object.
pub const GENERAL_OBJ_OUT_CMD_HDR_OBJ_ID: Field = Field::new(0x40, 32);
/// Size of `general_obj_out_cmd_hdr` (the whole general object output).
pub const GENERAL_OBJ_OUT_CMD_HDR_SZ_BYTES: usize = 16;

// ---- RTS2RTS_QP (`rts2rts_qp_in` / `rts2rts_qp_out`).

/// RTS2RTS_QP opcode.
pub const RTS2RTS_QP_IN_OPCODE: Field = Field::new(0x0, 16);
/// DEVX user id.
pub const RTS2RTS_QP_IN_UID: Field = Field::new(0x10, 16);
/// RTS2RTS_QP op_mod.
pub const RTS2RTS_QP_IN_OP_MOD: Field = Field::new(0x30, 16);
/// Set when `qpc_data_ext` and `opt_param_mask_95_32` are valid.
pub const RTS2RTS_QP_IN_QPC_EXT: Field = Field::new(0x40, 1);
/// QP number to modify.
pub const RTS2RTS_QP_IN_QPN: Field = Field::new(0x48, 24);
/// Optional parameter mask, bits 31..0 (`MLX5_QPC_OPT_MASK_*`).
pub const RTS2RTS_QP_IN_OPT_PARAM_MASK: Field = Field::new(0x80, 32);
/// QP context inside RTS2RTS_QP input.
pub const RTS2RTS_QP_IN_QPC: Field = Field::new(0xc0, 1856);
/// LAG TX port affinity (mlx5dv_modify_qp_lag_port).
pub const RTS2RTS_QP_IN_QPC_LAG_TX_PORT_AFFINITY: Field = Field::new(0xc4, 4);
/// RoCE UDP source port (mlx5dv_modify_qp_udp_sport).
pub const RTS2RTS_QP_IN_QPC_PRIMARY_ADDRESS_PATH_UDP_SPORT: Field = Field::new(0x290, 16);
/// Optional parameter mask, bits 95..32 (64-bit, `MLX5_QPC_OPT_MASK_32_*`).
pub const RTS2RTS_QP_IN_OPT_PARAM_MASK_95_32: Field = Field::new(0x840, 64);
/// Extended QP context (`qpc_ext`) inside RTS2RTS_QP input.
pub const RTS2RTS_QP_IN_QPC_DATA_EXT: Field = Field::new(0x880, 1536);
/// Size of `rts2rts_qp_in`.
pub const RTS2RTS_QP_IN_SZ_BYTES: usize = 464;
/// RTS2RTS_QP status.
pub const RTS2RTS_QP_OUT_STATUS: Field = Field::new(0x0, 8);
/// RTS2RTS_QP syndrome.
pub const RTS2RTS_QP_OUT_SYNDROME: Field = Field::new(0x20, 32);
/// Size of `rts2rts_qp_out`.
pub const RTS2RTS_QP_OUT_SZ_BYTES: usize = 16;

// ---- INIT2INIT_QP (`init2init_qp_in` / `init2init_qp_out`); same layout as RTS2RTS_QP.

/// INIT2INIT_QP opcode.
pub const INIT2INIT_QP_IN_OPCODE: Field = Field::new(0x0, 16);
/// Set when `qpc_data_ext` and `opt_param_mask_95_32` are valid.
pub const INIT2INIT_QP_IN_QPC_EXT: Field = Field::new(0x40, 1);
/// QP number to modify.
pub const INIT2INIT_QP_IN_QPN: Field = Field::new(0x48, 24);
/// Optional parameter mask, bits 31..0.
pub const INIT2INIT_QP_IN_OPT_PARAM_MASK: Field = Field::new(0x80, 32);
/// QP context inside INIT2INIT_QP input.
pub const INIT2INIT_QP_IN_QPC: Field = Field::new(0xc0, 1856);
/// Optional parameter mask, bits 95..32 (64-bit).
pub const INIT2INIT_QP_IN_OPT_PARAM_MASK_95_32: Field = Field::new(0x840, 64);
/// Extended QP context inside INIT2INIT_QP input.
pub const INIT2INIT_QP_IN_QPC_DATA_EXT: Field = Field::new(0x880, 1536);
/// Size of `init2init_qp_in`.
pub const INIT2INIT_QP_IN_SZ_BYTES: usize = 464;
/// Size of `init2init_qp_out`.
pub const INIT2INIT_QP_OUT_SZ_BYTES: usize = 16;

// ---- Extended QP context (`qpc_ext`), found at `qpc_data_ext` of the modify-QP inputs.

/// Enable DMA MMO on the QP (INIT2INIT, mask `MLX5_QPC_OPT_MASK_32_INIT2INIT_MMO`).
pub const QPC_EXT_MMO: Field = Field::new(0x2, 1);
/// DCI stream channel to reset (mlx5dv_dci_stream_id_reset).
pub const QPC_EXT_DCI_STREAM_CHANNEL_ID: Field = Field::new(0x10, 16);
/// QoS queue group id, requester side.
pub const QPC_EXT_QOS_QUEUE_GROUP_ID_REQUESTER: Field = Field::new(0x20, 32);
/// QoS queue group id, responder side.
pub const QPC_EXT_QOS_QUEUE_GROUP_ID_RESPONDER: Field = Field::new(0x40, 32);
/// Size of `qpc_ext`.
pub const QPC_EXT_SZ_BYTES: usize = 192;

// ---- QUERY_QP (`query_qp_in` / `query_qp_out`).

/// QUERY_QP opcode.
pub const QUERY_QP_IN_OPCODE: Field = Field::new(0x0, 16);
/// QUERY_QP op_mod.
pub const QUERY_QP_IN_OP_MOD: Field = Field::new(0x30, 16);
/// QP number to query.
pub const QUERY_QP_IN_QPN: Field = Field::new(0x48, 24);
/// Size of `query_qp_in`.
pub const QUERY_QP_IN_SZ_BYTES: usize = 16;
/// QUERY_QP status.
pub const QUERY_QP_OUT_STATUS: Field = Field::new(0x0, 8);
/// QUERY_QP syndrome.
pub const QUERY_QP_OUT_SYNDROME: Field = Field::new(0x20, 32);
/// QUERY_QP opt_param_mask.
pub const QUERY_QP_OUT_OPT_PARAM_MASK: Field = Field::new(0x80, 32);
/// QP context inside QUERY_QP output.
pub const QUERY_QP_OUT_QPC: Field = Field::new(0xc0, 1856);
/// Data-in-order enabled on the QP (mlx5dv_query_qp_data_in_order).
pub const QUERY_QP_OUT_QPC_DATA_IN_ORDER: Field = Field::new(0x11a, 1);
/// LAG TX port affinity (mlx5dv_query_qp_lag_port).
pub const QUERY_QP_OUT_QPC_LAG_TX_PORT_AFFINITY: Field = Field::new(0xc4, 4);
/// Size of `query_qp_out` as libmlx5 allocates it (the trailing `pas` array is empty).
pub const QUERY_QP_OUT_SZ_BYTES: usize = 272;

// ---- QP context (`qpc`) fields libmlx5 reads or writes; relative to the `qpc` start.

/// QP state (`MLX5_QPC_STATE_*`); libmlx5 checks SQDRAINED.
pub const QPC_STATE: Field = Field::new(0x0, 4);
/// LAG TX port affinity.
pub const QPC_LAG_TX_PORT_AFFINITY: Field = Field::new(0x4, 4);
/// Data-in-order enabled.
pub const QPC_DATA_IN_ORDER: Field = Field::new(0x5a, 1);
/// Drain on signature error (INIT2INIT, mask `MLX5_QPC_OPT_MASK_INIT2INIT_DRAIN_SIGERR`).
pub const QPC_DRAIN_SIGERR: Field = Field::new(0x25, 1);
/// Primary address path (`ads`) inside the QP context.
pub const QPC_PRIMARY_ADDRESS_PATH: Field = Field::new(0xc0, 352);
/// RoCE UDP source port of the primary path.
pub const QPC_PRIMARY_ADDRESS_PATH_UDP_SPORT: Field = Field::new(0x1d0, 16);
/// Hardware SQ WQEBB counter (send-WR cancel after SQ drain).
pub const QPC_HW_SQ_WQEBB_COUNTER: Field = Field::new(0x5a0, 16);
/// Size of `qpc`.
pub const QPC_SZ_BYTES: usize = 232;

// ---- QUERY_DCT (`query_dct_in` / `query_dct_out`), used by mlx5dv_query_qp_data_in_order on a DCT.

/// QUERY_DCT opcode.
pub const QUERY_DCT_IN_OPCODE: Field = Field::new(0x0, 16);
/// DCT number to query.
pub const QUERY_DCT_IN_DCTN: Field = Field::new(0x48, 24);
/// Size of `query_dct_in`.
pub const QUERY_DCT_IN_SZ_BYTES: usize = 16;
/// QUERY_DCT status.
pub const QUERY_DCT_OUT_STATUS: Field = Field::new(0x0, 8);
/// DCT context inside QUERY_DCT output.
pub const QUERY_DCT_OUT_DCTC: Field = Field::new(0x80, 896);
/// Data-in-order enabled on the DCT.
pub const QUERY_DCT_OUT_DCTC_DATA_IN_ORDER: Field = Field::new(0x9d, 1);
/// Size of `query_dct_out`.
pub const QUERY_DCT_OUT_SZ_BYTES: usize = 128;

// ---- DCT context (`dctc`) fields a DEVX QUERY_DCT reports; relative to the `dctc` start. rdma-core's
// mlx5_ifc.h names only `data_in_order`: these offsets are Linux's `struct mlx5_ifc_dctc_bits`
// (include/linux/mlx5/mlx5_ifc.h). Those the crate decodes (state, key, violation count, tclass,
// flow_label, my_addr_index, hop_limit) are set here and read back through its own decoder in
// tests/dc_table.rs; the others are copied from the same header, unchecked end to end.

/// GRH flow label.
pub const DCTC_FLOW_LABEL: Field = Field::new(0xec, 20);
/// Requests dropped for a wrong DC access key.
pub const DCTC_DC_ACCESS_KEY_VIOLATION_COUNT: Field = Field::new(0x180, 32);

// ---- QUERY_LAG (`query_lag_in` / `query_lag_out`), used by mlx5dv_query_qp_lag_port.

/// QUERY_LAG opcode.
pub const QUERY_LAG_IN_OPCODE: Field = Field::new(0x0, 16);
/// Size of `query_lag_in`.
pub const QUERY_LAG_IN_SZ_BYTES: usize = 16;
/// QUERY_LAG status.
pub const QUERY_LAG_OUT_STATUS: Field = Field::new(0x0, 8);
/// LAG state (0: no LAG).
pub const QUERY_LAG_OUT_CTX_LAG_STATE: Field = Field::new(0x5d, 3);
/// Active port for affinity 1.
pub const QUERY_LAG_OUT_CTX_TX_REMAP_AFFINITY_1: Field = Field::new(0x7c, 4);
/// Active port for affinity 2.
pub const QUERY_LAG_OUT_CTX_TX_REMAP_AFFINITY_2: Field = Field::new(0x74, 4);
/// Size of `query_lag_out`.
pub const QUERY_LAG_OUT_SZ_BYTES: usize = 16;

// ---- CREATE_GENERAL_OBJECT of type AV_QP_MAPPING (mlx5dv_map_ah_to_qp).

/// General object header inside CREATE (AV_QP_MAPPING) input.
pub const CREATE_AV_QP_MAPPING_IN_HDR: Field = Field::new(0x0, 128);
/// Opcode (`MLX5_CMD_OP_CREATE_GENERAL_OBJECT`).
pub const CREATE_AV_QP_MAPPING_IN_HDR_OPCODE: Field = Field::new(0x0, 16);
/// Object type (`MLX5_OBJ_TYPE_AV_QP_MAPPING`).
pub const CREATE_AV_QP_MAPPING_IN_HDR_OBJ_TYPE: Field = Field::new(0x30, 16);
/// The `av_qp_mapping` object inside the CREATE input.
pub const CREATE_AV_QP_MAPPING_IN_MAPPING: Field = Field::new(0x80, 512);
/// QPN the AH is mapped to (absolute).
pub const CREATE_AV_QP_MAPPING_IN_MAPPING_QPN: Field = Field::new(0xe0, 32);
/// SL / Ethernet priority (absolute).
pub const CREATE_AV_QP_MAPPING_IN_MAPPING_REMOTE_ADDRESS_VECTOR_SL_OR_ETH_PRIO: Field = Field::new(0x164, 4);
/// Source GID index (absolute).
pub const CREATE_AV_QP_MAPPING_IN_MAPPING_REMOTE_ADDRESS_VECTOR_SRC_ADDR_INDEX: Field = Field::new(0x1e4, 8);
/// Remote GID, 16 bytes (absolute).
pub const CREATE_AV_QP_MAPPING_IN_MAPPING_REMOTE_ADDRESS_VECTOR_RGID_OR_RIP: Field = Field::new(0x200, 128);
/// Size of `create_av_qp_mapping_in`.
pub const CREATE_AV_QP_MAPPING_IN_SZ_BYTES: usize = 80;

// ---- The `av_qp_mapping` object and its `ud_av`; relative to the object start.

/// Modify field select (64-bit; libmlx5 leaves it 0).
pub const AV_QP_MAPPING_MODIFY_FIELD_SELECT: Field = Field::new(0x0, 64);
/// QPN the AH is mapped to.
pub const AV_QP_MAPPING_QPN: Field = Field::new(0x60, 32);
/// Remote UD address vector (`ud_av`).
pub const AV_QP_MAPPING_REMOTE_ADDRESS_VECTOR: Field = Field::new(0x80, 384);
/// SL / Ethernet priority (libmlx5 passes `stat_rate_sl`, so only its low nibble lands).
pub const AV_QP_MAPPING_REMOTE_ADDRESS_VECTOR_SL_OR_ETH_PRIO: Field = Field::new(0xe4, 4);
/// Source GID index.
pub const AV_QP_MAPPING_REMOTE_ADDRESS_VECTOR_SRC_ADDR_INDEX: Field = Field::new(0x164, 8);
/// Remote GID / IP, 16 bytes.
pub const AV_QP_MAPPING_REMOTE_ADDRESS_VECTOR_RGID_OR_RIP: Field = Field::new(0x180, 128);
/// Size of `av_qp_mapping`.
pub const AV_QP_MAPPING_SZ_BYTES: usize = 64;
/// Size of `ud_av`.
pub const UD_AV_SZ_BYTES: usize = 48;

// ---- General device capabilities (`cmd_hca_cap`, op_mod GENERAL_DEVICE); relative to the capability page.

/// `cmd_hca_cap.qp_data_in_order`: read by libmlx5 44+59 at context init.
pub const CMD_HCA_CAP_QP_DATA_IN_ORDER: Field = Field::new(0x62, 1);
/// `cmd_hca_cap.num_lag_ports`: read by libmlx5 44+59 at context init.
pub const CMD_HCA_CAP_NUM_LAG_PORTS: Field = Field::new(0x27c, 4);
/// `cmd_hca_cap.lag_tx_port_affinity`: read by libmlx5 44+59 at context init.
pub const CMD_HCA_CAP_LAG_TX_PORT_AFFINITY: Field = Field::new(0x278, 1);
/// `cmd_hca_cap.rts2rts_qp_udp_sport`: read by libmlx5 44+59 at context init.
pub const CMD_HCA_CAP_RTS2RTS_QP_UDP_SPORT: Field = Field::new(0x151, 1);
/// `cmd_hca_cap.rts2rts_lag_tx_port_affinity`: read by libmlx5 44+59 at context init.
pub const CMD_HCA_CAP_RTS2RTS_LAG_TX_PORT_AFFINITY: Field = Field::new(0x152, 1);
/// `cmd_hca_cap.qos`: read by libmlx5 44+59 at context init; non-zero: QOS page queried.
pub const CMD_HCA_CAP_QOS: Field = Field::new(0x21b, 1);
/// `cmd_hca_cap.qpc_extension`: read by libmlx5 44+59 at context init; needed by DCI stream reset.
pub const CMD_HCA_CAP_QPC_EXTENSION: Field = Field::new(0x122, 1);
/// `cmd_hca_cap.general_obj_types`: read by libmlx5 44+59 at context init; bit n: obj type n.
pub const CMD_HCA_CAP_GENERAL_OBJ_TYPES: Field = Field::new(0x400, 64);
/// `cmd_hca_cap.log_max_ra_req_dc`: read by libmlx5 59 only at context init; max_dc_rd_atom = 1 << v.
pub const CMD_HCA_CAP_LOG_MAX_RA_REQ_DC: Field = Field::new(0x12a, 6);
/// `cmd_hca_cap.log_max_ra_res_dc`: read by libmlx5 59 only at context init; max_dc_init_rd_atom = 1 << v.
pub const CMD_HCA_CAP_LOG_MAX_RA_RES_DC: Field = Field::new(0x13a, 6);
/// `cmd_hca_cap.sho`: read by libmlx5 44+59 at context init (signature caps).
pub const CMD_HCA_CAP_SHO: Field = Field::new(0x217, 1);
/// `cmd_hca_cap.sigerr_domain_and_sig_type`: read by libmlx5 44+59 at context init (signature caps).
pub const CMD_HCA_CAP_SIGERR_DOMAIN_AND_SIG_TYPE: Field = Field::new(0x480, 1);
/// `cmd_hca_cap.sig_block_4048`: read by libmlx5 44+59 at context init (signature caps).
pub const CMD_HCA_CAP_SIG_BLOCK_4048: Field = Field::new(0x1f0, 1);
/// `cmd_hca_cap.sig_crc32c`: read by libmlx5 44+59 at context init (signature caps).
pub const CMD_HCA_CAP_SIG_CRC32C: Field = Field::new(0x148, 1);
/// `cmd_hca_cap.sig_crc64_xp10`: read by libmlx5 44+59 at context init (signature caps).
pub const CMD_HCA_CAP_SIG_CRC64_XP10: Field = Field::new(0x147, 1);
/// `cmd_hca_cap.crypto`: read by libmlx5 44+59 at context init; non-zero: CRYPTO page queried.
pub const CMD_HCA_CAP_CRYPTO: Field = Field::new(0x469, 1);
/// `cmd_hca_cap.aes_xts_single_block_le_tweak`: read by libmlx5 44+59 at context init.
pub const CMD_HCA_CAP_AES_XTS_SINGLE_BLOCK_LE_TWEAK: Field = Field::new(0x3f1, 1);
/// `cmd_hca_cap.aes_xts_multi_block_be_tweak`: read by libmlx5 44+59 at context init.
pub const CMD_HCA_CAP_AES_XTS_MULTI_BLOCK_BE_TWEAK: Field = Field::new(0x3f2, 1);
/// `cmd_hca_cap.hca_cap_2`: read by libmlx5 44+59 at context init; non-zero: CAP_2 page queried.
pub const CMD_HCA_CAP_HCA_CAP_2: Field = Field::new(0x20, 1);
/// `cmd_hca_cap.dma_mmo_sq`: read by libmlx5 44+59 at context init.
pub const CMD_HCA_CAP_DMA_MMO_SQ: Field = Field::new(0x153, 1);
/// `cmd_hca_cap.dma_mmo_qp`: read by libmlx5 44+59 at context init.
pub const CMD_HCA_CAP_DMA_MMO_QP: Field = Field::new(0x748, 1);
/// `cmd_hca_cap.log_dma_mmo_max_size`: read by libmlx5 44+59 at context init.
pub const CMD_HCA_CAP_LOG_DMA_MMO_MAX_SIZE: Field = Field::new(0x6b, 5);
/// `cmd_hca_cap.dp_ordering_ooo_all_xrc`: read by libmlx5 59 only at context init (absent from v44 ifc).
pub const CMD_HCA_CAP_DP_ORDERING_OOO_ALL_XRC: Field = Field::new(0x332, 1);
/// `cmd_hca_cap.dp_ordering_ooo_all_dc`: read by libmlx5 59 only at context init (absent from v44 ifc).
pub const CMD_HCA_CAP_DP_ORDERING_OOO_ALL_DC: Field = Field::new(0x333, 1);
/// `cmd_hca_cap.dp_ordering_ooo_all_rc`: read by libmlx5 59 only at context init (absent from v44 ifc).
pub const CMD_HCA_CAP_DP_ORDERING_OOO_ALL_RC: Field = Field::new(0x334, 1);
/// `cmd_hca_cap.dp_ordering_ooo_all_ud`: read by libmlx5 59 only at context init (absent from v44 ifc).
pub const CMD_HCA_CAP_DP_ORDERING_OOO_ALL_UD: Field = Field::new(0x330, 1);
/// `cmd_hca_cap.dp_ordering_ooo_all_uc`: read by libmlx5 59 only at context init (absent from v44 ifc).
pub const CMD_HCA_CAP_DP_ORDERING_OOO_ALL_UC: Field = Field::new(0x331, 1);
/// `cmd_hca_cap.vhca_id`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_VHCA_ID: Field = Field::new(0x30, 16);
/// `cmd_hca_cap.prio_tag_required`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_PRIO_TAG_REQUIRED: Field = Field::new(0x98, 1);
/// `cmd_hca_cap.eswitch_manager`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_ESWITCH_MANAGER: Field = Field::new(0x1a7, 1);
/// `cmd_hca_cap.flex_parser_protocols`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_PROTOCOLS: Field = Field::new(0x540, 32);
/// `cmd_hca_cap.isolate_vl_tc_new`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_ISOLATE_VL_TC_NEW: Field = Field::new(0x93, 1);
/// `cmd_hca_cap.flex_parser_header_modify`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_HEADER_MODIFY: Field = Field::new(0x570, 1);
/// `cmd_hca_cap.sf`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_SF: Field = Field::new(0x680, 1);
/// `cmd_hca_cap.match_definer_format_supported`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_MATCH_DEFINER_FORMAT_SUPPORTED: Field = Field::new(0x7c0, 64);
/// `cmd_hca_cap.roce`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_ROCE: Field = Field::new(0x21d, 1);
/// `cmd_hca_cap.port_type` (mlx5_ifc.h): 0 InfiniBand, 1 Ethernet; mlx5_ib takes the link
/// layer from it (mlx5_port_type_cap_to_rdma_ll).
pub const CMD_HCA_CAP_PORT_TYPE: Field = Field::new(0x1b6, 2);
/// `cmd_hca_cap.num_ports` (mlx5_ifc.h).
pub const CMD_HCA_CAP_NUM_PORTS: Field = Field::new(0x1b8, 8);
/// `query_hca_vport_context_out.hca_vport_context` (mlx5_ifc.h): after the 16-byte header.
pub const QUERY_HCA_VPORT_CONTEXT_OUT_CONTEXT: Field = Field::new(0x80, 0x800);
/// `hca_vport_context.port_physical_state` (5: LinkUp).
pub const HCA_VPORT_CONTEXT_PORT_PHYSICAL_STATE: Field = Field::new(0x110, 4);
/// `hca_vport_context.port_state` (enum ib_port_state).
pub const HCA_VPORT_CONTEXT_PORT_STATE: Field = Field::new(0x118, 4);
/// `hca_vport_context.vport_state`.
pub const HCA_VPORT_CONTEXT_VPORT_STATE: Field = Field::new(0x11c, 4);
/// `hca_vport_context.system_image_guid`.
pub const HCA_VPORT_CONTEXT_SYSTEM_IMAGE_GUID: Field = Field::new(0x140, 64);
/// `hca_vport_context.port_guid`.
pub const HCA_VPORT_CONTEXT_PORT_GUID: Field = Field::new(0x180, 64);
/// `hca_vport_context.node_guid`.
pub const HCA_VPORT_CONTEXT_NODE_GUID: Field = Field::new(0x1c0, 64);
/// `hca_vport_context.lid`.
pub const HCA_VPORT_CONTEXT_LID: Field = Field::new(0x300, 16);
/// `cmd_hca_cap.steering_format_version`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_STEERING_FORMAT_VERSION: Field = Field::new(0x444, 4);
/// `cmd_hca_cap.fl_rc_qp_when_roce_disabled`: read by libmlx5 59 only by mlx5dv_dr (dr_devx.c) (absent from v44 ifc).
pub const CMD_HCA_CAP_FL_RC_QP_WHEN_ROCE_DISABLED: Field = Field::new(0x248, 1);
/// `cmd_hca_cap.sq_ts_format`: read by libmlx5 59 only by mlx5dv_dr (dr_devx.c) (absent from v44 ifc).
pub const CMD_HCA_CAP_SQ_TS_FORMAT: Field = Field::new(0x440, 2);
/// `cmd_hca_cap.log_header_modify_argument_granularity`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_LOG_HEADER_MODIFY_ARGUMENT_GRANULARITY: Field = Field::new(0x76c, 4);
/// `cmd_hca_cap.log_header_modify_argument_max_alloc`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_LOG_HEADER_MODIFY_ARGUMENT_MAX_ALLOC: Field = Field::new(0x773, 5);
/// `cmd_hca_cap.flex_parser_id_icmp_dw0`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_ID_ICMP_DW0: Field = Field::new(0x6cc, 4);
/// `cmd_hca_cap.flex_parser_id_icmp_dw1`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_ID_ICMP_DW1: Field = Field::new(0x6c8, 4);
/// `cmd_hca_cap.flex_parser_id_icmpv6_dw0`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_ID_ICMPV6_DW0: Field = Field::new(0x6d4, 4);
/// `cmd_hca_cap.flex_parser_id_icmpv6_dw1`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_ID_ICMPV6_DW1: Field = Field::new(0x6d0, 4);
/// `cmd_hca_cap.flex_parser_id_geneve_opt_0`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_ID_GENEVE_OPT_0: Field = Field::new(0x6c4, 4);
/// `cmd_hca_cap.flex_parser_id_outer_first_mpls_over_gre`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_ID_OUTER_FIRST_MPLS_OVER_GRE: Field = Field::new(0x6d8, 4);
/// `cmd_hca_cap.flex_parser_id_outer_first_mpls_over_udp_label`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_ID_OUTER_FIRST_MPLS_OVER_UDP_LABEL: Field = Field::new(0x6dc, 4);
/// `cmd_hca_cap.flex_parser_id_gtpu_dw_0`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_ID_GTPU_DW_0: Field = Field::new(0x5e8, 4);
/// `cmd_hca_cap.flex_parser_id_gtpu_teid`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_ID_GTPU_TEID: Field = Field::new(0x618, 4);
/// `cmd_hca_cap.flex_parser_id_gtpu_dw_2`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_ID_GTPU_DW_2: Field = Field::new(0x700, 4);
/// `cmd_hca_cap.flex_parser_id_gtpu_first_ext_dw_0`: read by libmlx5 44+59 by mlx5dv_dr (dr_devx.c).
pub const CMD_HCA_CAP_FLEX_PARSER_ID_GTPU_FIRST_EXT_DW_0: Field = Field::new(0x704, 4);

// ---- General device capabilities 2 (`cmd_hca_cap_2`, op_mod GENERAL_DEVICE_CAP_2).

/// `cmd_hca_cap_2.log_reserved_qpn_granularity`: read by libmlx5 44+59 at context init.
pub const CMD_HCA_CAP_2_LOG_RESERVED_QPN_GRANULARITY: Field = Field::new(0x93, 5);

// ---- Atomic capabilities (`atomic_caps`, op_mod ATOMIC).

/// `atomic_caps.fetch_add_pci_atomic`: read by libmlx5 44+59 by ibv_query_device_ex.
pub const ATOMIC_CAPS_FETCH_ADD_PCI_ATOMIC: Field = Field::new(0x280, 16);
/// `atomic_caps.swap_pci_atomic`: read by libmlx5 44+59 by ibv_query_device_ex.
pub const ATOMIC_CAPS_SWAP_PCI_ATOMIC: Field = Field::new(0x290, 16);
/// `atomic_caps.compare_swap_pci_atomic`: read by libmlx5 44+59 by ibv_query_device_ex.
pub const ATOMIC_CAPS_COMPARE_SWAP_PCI_ATOMIC: Field = Field::new(0x2a0, 16);
/// `atomic_caps.atomic_req_8B_endianness_mode`: not read by libmlx5 44/59.
pub const ATOMIC_CAPS_ATOMIC_REQ_8B_ENDIANNESS_MODE: Field = Field::new(0x40, 2);
/// `atomic_caps.supported_atomic_req_8B_endianness_mode_1`: not read by libmlx5 44/59.
pub const ATOMIC_CAPS_SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1: Field = Field::new(0x46, 1);
/// `atomic_caps.atomic_operations`: not read by libmlx5 44/59.
pub const ATOMIC_CAPS_ATOMIC_OPERATIONS: Field = Field::new(0x90, 16);
/// `atomic_caps.atomic_size_qp`: not read by libmlx5 44/59.
pub const ATOMIC_CAPS_ATOMIC_SIZE_QP: Field = Field::new(0xb0, 16);
/// `atomic_caps.atomic_size_dc`: not read by libmlx5 44/59.
pub const ATOMIC_CAPS_ATOMIC_SIZE_DC: Field = Field::new(0xd0, 16);

// ---- QoS capabilities (`qos_cap`, op_mod QOS; union member `qos_caps`).

/// `qos_cap.nic_sq_scheduling`: read by libmlx5 44+59 at context init.
pub const QOS_CAP_NIC_SQ_SCHEDULING: Field = Field::new(0x8, 1);
/// `qos_cap.nic_bw_share`: read by libmlx5 44+59 at context init if nic_sq_scheduling.
pub const QOS_CAP_NIC_BW_SHARE: Field = Field::new(0x9, 1);
/// `qos_cap.nic_rate_limit`: read by libmlx5 44+59 at context init if nic_sq_scheduling.
pub const QOS_CAP_NIC_RATE_LIMIT: Field = Field::new(0xa, 1);
/// `qos_cap.nic_qp_scheduling`: read by libmlx5 44+59 at context init.
pub const QOS_CAP_NIC_QP_SCHEDULING: Field = Field::new(0x21, 1);
/// `qos_cap.nic_element_type`: read by libmlx5 44+59 at context init.
pub const QOS_CAP_NIC_ELEMENT_TYPE: Field = Field::new(0x100, 16);
/// `qos_cap.nic_tsar_type`: read by libmlx5 44+59 at context init.
pub const QOS_CAP_NIC_TSAR_TYPE: Field = Field::new(0x110, 16);

// ---- Crypto capabilities (`crypto_caps`, op_mod CRYPTO).

/// `crypto_caps.wrapped_crypto_operational`: read by libmlx5 44+59 at context init.
pub const CRYPTO_CAPS_WRAPPED_CRYPTO_OPERATIONAL: Field = Field::new(0x0, 1);
/// `crypto_caps.wrapped_crypto_going_to_commissioning`: read by libmlx5 44+59 at context init.
pub const CRYPTO_CAPS_WRAPPED_CRYPTO_GOING_TO_COMMISSIONING: Field = Field::new(0x1, 1);
/// `crypto_caps.wrapped_import_method`: read by libmlx5 44+59 at context init.
pub const CRYPTO_CAPS_WRAPPED_IMPORT_METHOD: Field = Field::new(0x18, 8);
/// `crypto_caps.log_max_num_deks`: read by libmlx5 44+59 at context init.
pub const CRYPTO_CAPS_LOG_MAX_NUM_DEKS: Field = Field::new(0x2b, 5);
/// `crypto_caps.failed_selftests`: read by libmlx5 44+59 at context init.
pub const CRYPTO_CAPS_FAILED_SELFTESTS: Field = Field::new(0x40, 16);

// ---- ODP capabilities (`odp_cap`, op_mod ODP); one `odp_per_transport_service_cap` per transport.

/// `odp_cap.sig`: not read by libmlx5 44/59.
pub const ODP_CAP_SIG: Field = Field::new(0x40, 1);
/// `odp_cap.rc_odp_caps.send`: not read by libmlx5 44/59.
pub const ODP_CAP_RC_ODP_CAPS_SEND: Field = Field::new(0x80, 1);
/// `odp_cap.rc_odp_caps.receive`: not read by libmlx5 44/59.
pub const ODP_CAP_RC_ODP_CAPS_RECEIVE: Field = Field::new(0x81, 1);
/// `odp_cap.rc_odp_caps.write`: not read by libmlx5 44/59.
pub const ODP_CAP_RC_ODP_CAPS_WRITE: Field = Field::new(0x82, 1);
/// `odp_cap.rc_odp_caps.read`: not read by libmlx5 44/59.
pub const ODP_CAP_RC_ODP_CAPS_READ: Field = Field::new(0x83, 1);
/// `odp_cap.rc_odp_caps.atomic`: not read by libmlx5 44/59.
pub const ODP_CAP_RC_ODP_CAPS_ATOMIC: Field = Field::new(0x84, 1);
/// `odp_cap.rc_odp_caps.srq_receive`: not read by libmlx5 44/59.
pub const ODP_CAP_RC_ODP_CAPS_SRQ_RECEIVE: Field = Field::new(0x85, 1);
/// `odp_cap.uc_odp_caps.send`: not read by libmlx5 44/59.
pub const ODP_CAP_UC_ODP_CAPS_SEND: Field = Field::new(0xa0, 1);
/// `odp_cap.uc_odp_caps.receive`: not read by libmlx5 44/59.
pub const ODP_CAP_UC_ODP_CAPS_RECEIVE: Field = Field::new(0xa1, 1);
/// `odp_cap.uc_odp_caps.write`: not read by libmlx5 44/59.
pub const ODP_CAP_UC_ODP_CAPS_WRITE: Field = Field::new(0xa2, 1);
/// `odp_cap.uc_odp_caps.read`: not read by libmlx5 44/59.
pub const ODP_CAP_UC_ODP_CAPS_READ: Field = Field::new(0xa3, 1);
/// `odp_cap.uc_odp_caps.atomic`: not read by libmlx5 44/59.
pub const ODP_CAP_UC_ODP_CAPS_ATOMIC: Field = Field::new(0xa4, 1);
/// `odp_cap.uc_odp_caps.srq_receive`: not read by libmlx5 44/59.
pub const ODP_CAP_UC_ODP_CAPS_SRQ_RECEIVE: Field = Field::new(0xa5, 1);
/// `odp_cap.ud_odp_caps.send`: not read by libmlx5 44/59.
pub const ODP_CAP_UD_ODP_CAPS_SEND: Field = Field::new(0xc0, 1);
/// `odp_cap.ud_odp_caps.receive`: not read by libmlx5 44/59.
pub const ODP_CAP_UD_ODP_CAPS_RECEIVE: Field = Field::new(0xc1, 1);
/// `odp_cap.ud_odp_caps.write`: not read by libmlx5 44/59.
pub const ODP_CAP_UD_ODP_CAPS_WRITE: Field = Field::new(0xc2, 1);
/// `odp_cap.ud_odp_caps.read`: not read by libmlx5 44/59.
pub const ODP_CAP_UD_ODP_CAPS_READ: Field = Field::new(0xc3, 1);
/// `odp_cap.ud_odp_caps.atomic`: not read by libmlx5 44/59.
pub const ODP_CAP_UD_ODP_CAPS_ATOMIC: Field = Field::new(0xc4, 1);
/// `odp_cap.ud_odp_caps.srq_receive`: not read by libmlx5 44/59.
pub const ODP_CAP_UD_ODP_CAPS_SRQ_RECEIVE: Field = Field::new(0xc5, 1);
/// `odp_cap.xrc_odp_caps.send`: not read by libmlx5 44/59.
pub const ODP_CAP_XRC_ODP_CAPS_SEND: Field = Field::new(0xe0, 1);
/// `odp_cap.xrc_odp_caps.receive`: not read by libmlx5 44/59.
pub const ODP_CAP_XRC_ODP_CAPS_RECEIVE: Field = Field::new(0xe1, 1);
/// `odp_cap.xrc_odp_caps.write`: not read by libmlx5 44/59.
pub const ODP_CAP_XRC_ODP_CAPS_WRITE: Field = Field::new(0xe2, 1);
/// `odp_cap.xrc_odp_caps.read`: not read by libmlx5 44/59.
pub const ODP_CAP_XRC_ODP_CAPS_READ: Field = Field::new(0xe3, 1);
/// `odp_cap.xrc_odp_caps.atomic`: not read by libmlx5 44/59.
pub const ODP_CAP_XRC_ODP_CAPS_ATOMIC: Field = Field::new(0xe4, 1);
/// `odp_cap.xrc_odp_caps.srq_receive`: not read by libmlx5 44/59.
pub const ODP_CAP_XRC_ODP_CAPS_SRQ_RECEIVE: Field = Field::new(0xe5, 1);
/// `odp_cap.dc_odp_caps.send`: read by libmlx5 44+59 by mlx5dv_query_device (DC_ODP_CAPS).
pub const ODP_CAP_DC_ODP_CAPS_SEND: Field = Field::new(0x100, 1);
/// `odp_cap.dc_odp_caps.receive`: read by libmlx5 44+59 by mlx5dv_query_device (DC_ODP_CAPS).
pub const ODP_CAP_DC_ODP_CAPS_RECEIVE: Field = Field::new(0x101, 1);
/// `odp_cap.dc_odp_caps.write`: read by libmlx5 44+59 by mlx5dv_query_device (DC_ODP_CAPS).
pub const ODP_CAP_DC_ODP_CAPS_WRITE: Field = Field::new(0x102, 1);
/// `odp_cap.dc_odp_caps.read`: read by libmlx5 44+59 by mlx5dv_query_device (DC_ODP_CAPS).
pub const ODP_CAP_DC_ODP_CAPS_READ: Field = Field::new(0x103, 1);
/// `odp_cap.dc_odp_caps.atomic`: read by libmlx5 44+59 by mlx5dv_query_device (DC_ODP_CAPS).
pub const ODP_CAP_DC_ODP_CAPS_ATOMIC: Field = Field::new(0x104, 1);
/// `odp_cap.dc_odp_caps.srq_receive`: read by libmlx5 44+59 by mlx5dv_query_device (DC_ODP_CAPS).
pub const ODP_CAP_DC_ODP_CAPS_SRQ_RECEIVE: Field = Field::new(0x105, 1);

#[cfg(test)]
/// Every layout field above with the size in bytes of the layout it belongs to (for the fit checks).
const ALL_FIELDS: &[(&str, Field, usize)] = &[
    ("MBOX_IN_OPCODE", MBOX_IN_OPCODE, MBOX_IN_SZ_BYTES),
    ("MBOX_IN_UID", MBOX_IN_UID, MBOX_IN_SZ_BYTES),
    ("MBOX_IN_OP_MOD", MBOX_IN_OP_MOD, MBOX_IN_SZ_BYTES),
    ("MBOX_OUT_STATUS", MBOX_OUT_STATUS, MBOX_OUT_SZ_BYTES),
    ("MBOX_OUT_SYNDROME", MBOX_OUT_SYNDROME, MBOX_OUT_SZ_BYTES),
    (
        "QUERY_HCA_CAP_IN_OPCODE",
        QUERY_HCA_CAP_IN_OPCODE,
        QUERY_HCA_CAP_IN_SZ_BYTES,
    ),
    (
        "QUERY_HCA_CAP_IN_OP_MOD",
        QUERY_HCA_CAP_IN_OP_MOD,
        QUERY_HCA_CAP_IN_SZ_BYTES,
    ),
    (
        "QUERY_HCA_CAP_IN_OTHER_FUNCTION",
        QUERY_HCA_CAP_IN_OTHER_FUNCTION,
        QUERY_HCA_CAP_IN_SZ_BYTES,
    ),
    (
        "QUERY_HCA_CAP_IN_FUNCTION_ID",
        QUERY_HCA_CAP_IN_FUNCTION_ID,
        QUERY_HCA_CAP_IN_SZ_BYTES,
    ),
    (
        "QUERY_HCA_CAP_OUT_STATUS",
        QUERY_HCA_CAP_OUT_STATUS,
        QUERY_HCA_CAP_OUT_SZ_BYTES,
    ),
    (
        "QUERY_HCA_CAP_OUT_SYNDROME",
        QUERY_HCA_CAP_OUT_SYNDROME,
        QUERY_HCA_CAP_OUT_SZ_BYTES,
    ),
    (
        "QUERY_HCA_CAP_OUT_CAPABILITY",
        QUERY_HCA_CAP_OUT_CAPABILITY,
        QUERY_HCA_CAP_OUT_SZ_BYTES,
    ),
    (
        "GENERAL_OBJ_IN_CMD_HDR_OPCODE",
        GENERAL_OBJ_IN_CMD_HDR_OPCODE,
        GENERAL_OBJ_IN_CMD_HDR_SZ_BYTES,
    ),
    (
        "GENERAL_OBJ_IN_CMD_HDR_UID",
        GENERAL_OBJ_IN_CMD_HDR_UID,
        GENERAL_OBJ_IN_CMD_HDR_SZ_BYTES,
    ),
    (
        "GENERAL_OBJ_IN_CMD_HDR_OBJ_TYPE",
        GENERAL_OBJ_IN_CMD_HDR_OBJ_TYPE,
        GENERAL_OBJ_IN_CMD_HDR_SZ_BYTES,
    ),
    (
        "GENERAL_OBJ_IN_CMD_HDR_OBJ_ID",
        GENERAL_OBJ_IN_CMD_HDR_OBJ_ID,
        GENERAL_OBJ_IN_CMD_HDR_SZ_BYTES,
    ),
    (
        "GENERAL_OBJ_IN_CMD_HDR_LOG_OBJ_RANGE",
        GENERAL_OBJ_IN_CMD_HDR_LOG_OBJ_RANGE,
        GENERAL_OBJ_IN_CMD_HDR_SZ_BYTES,
    ),
    (
        "GENERAL_OBJ_OUT_CMD_HDR_STATUS",
        GENERAL_OBJ_OUT_CMD_HDR_STATUS,
        GENERAL_OBJ_OUT_CMD_HDR_SZ_BYTES,
    ),
    (
        "GENERAL_OBJ_OUT_CMD_HDR_SYNDROME",
        GENERAL_OBJ_OUT_CMD_HDR_SYNDROME,
        GENERAL_OBJ_OUT_CMD_HDR_SZ_BYTES,
    ),
    (
        "GENERAL_OBJ_OUT_CMD_HDR_OBJ_ID",
        GENERAL_OBJ_OUT_CMD_HDR_OBJ_ID,
        GENERAL_OBJ_OUT_CMD_HDR_SZ_BYTES,
    ),
    ("RTS2RTS_QP_IN_OPCODE", RTS2RTS_QP_IN_OPCODE, RTS2RTS_QP_IN_SZ_BYTES),
    ("RTS2RTS_QP_IN_UID", RTS2RTS_QP_IN_UID, RTS2RTS_QP_IN_SZ_BYTES),
    ("RTS2RTS_QP_IN_OP_MOD", RTS2RTS_QP_IN_OP_MOD, RTS2RTS_QP_IN_SZ_BYTES),
    ("RTS2RTS_QP_IN_QPC_EXT", RTS2RTS_QP_IN_QPC_EXT, RTS2RTS_QP_IN_SZ_BYTES),
    ("RTS2RTS_QP_IN_QPN", RTS2RTS_QP_IN_QPN, RTS2RTS_QP_IN_SZ_BYTES),
    (
        "RTS2RTS_QP_IN_OPT_PARAM_MASK",
        RTS2RTS_QP_IN_OPT_PARAM_MASK,
        RTS2RTS_QP_IN_SZ_BYTES,
    ),
    ("RTS2RTS_QP_IN_QPC", RTS2RTS_QP_IN_QPC, RTS2RTS_QP_IN_SZ_BYTES),
    (
        "RTS2RTS_QP_IN_QPC_LAG_TX_PORT_AFFINITY",
        RTS2RTS_QP_IN_QPC_LAG_TX_PORT_AFFINITY,
        RTS2RTS_QP_IN_SZ_BYTES,
    ),
    (
        "RTS2RTS_QP_IN_QPC_PRIMARY_ADDRESS_PATH_UDP_SPORT",
        RTS2RTS_QP_IN_QPC_PRIMARY_ADDRESS_PATH_UDP_SPORT,
        RTS2RTS_QP_IN_SZ_BYTES,
    ),
    (
        "RTS2RTS_QP_IN_OPT_PARAM_MASK_95_32",
        RTS2RTS_QP_IN_OPT_PARAM_MASK_95_32,
        RTS2RTS_QP_IN_SZ_BYTES,
    ),
    (
        "RTS2RTS_QP_IN_QPC_DATA_EXT",
        RTS2RTS_QP_IN_QPC_DATA_EXT,
        RTS2RTS_QP_IN_SZ_BYTES,
    ),
    ("RTS2RTS_QP_OUT_STATUS", RTS2RTS_QP_OUT_STATUS, RTS2RTS_QP_OUT_SZ_BYTES),
    (
        "RTS2RTS_QP_OUT_SYNDROME",
        RTS2RTS_QP_OUT_SYNDROME,
        RTS2RTS_QP_OUT_SZ_BYTES,
    ),
    (
        "INIT2INIT_QP_IN_OPCODE",
        INIT2INIT_QP_IN_OPCODE,
        INIT2INIT_QP_IN_SZ_BYTES,
    ),
    (
        "INIT2INIT_QP_IN_QPC_EXT",
        INIT2INIT_QP_IN_QPC_EXT,
        INIT2INIT_QP_IN_SZ_BYTES,
    ),
    ("INIT2INIT_QP_IN_QPN", INIT2INIT_QP_IN_QPN, INIT2INIT_QP_IN_SZ_BYTES),
    (
        "INIT2INIT_QP_IN_OPT_PARAM_MASK",
        INIT2INIT_QP_IN_OPT_PARAM_MASK,
        INIT2INIT_QP_IN_SZ_BYTES,
    ),
    ("INIT2INIT_QP_IN_QPC", INIT2INIT_QP_IN_QPC, INIT2INIT_QP_IN_SZ_BYTES),
    (
        "INIT2INIT_QP_IN_OPT_PARAM_MASK_95_32",
        INIT2INIT_QP_IN_OPT_PARAM_MASK_95_32,
        INIT2INIT_QP_IN_SZ_BYTES,
    ),
    (
        "INIT2INIT_QP_IN_QPC_DATA_EXT",
        INIT2INIT_QP_IN_QPC_DATA_EXT,
        INIT2INIT_QP_IN_SZ_BYTES,
    ),
    ("QPC_EXT_MMO", QPC_EXT_MMO, QPC_EXT_SZ_BYTES),
    (
        "QPC_EXT_DCI_STREAM_CHANNEL_ID",
        QPC_EXT_DCI_STREAM_CHANNEL_ID,
        QPC_EXT_SZ_BYTES,
    ),
    (
        "QPC_EXT_QOS_QUEUE_GROUP_ID_REQUESTER",
        QPC_EXT_QOS_QUEUE_GROUP_ID_REQUESTER,
        QPC_EXT_SZ_BYTES,
    ),
    (
        "QPC_EXT_QOS_QUEUE_GROUP_ID_RESPONDER",
        QPC_EXT_QOS_QUEUE_GROUP_ID_RESPONDER,
        QPC_EXT_SZ_BYTES,
    ),
    ("QUERY_QP_IN_OPCODE", QUERY_QP_IN_OPCODE, QUERY_QP_IN_SZ_BYTES),
    ("QUERY_QP_IN_OP_MOD", QUERY_QP_IN_OP_MOD, QUERY_QP_IN_SZ_BYTES),
    ("QUERY_QP_IN_QPN", QUERY_QP_IN_QPN, QUERY_QP_IN_SZ_BYTES),
    ("QUERY_QP_OUT_STATUS", QUERY_QP_OUT_STATUS, QUERY_QP_OUT_SZ_BYTES),
    ("QUERY_QP_OUT_SYNDROME", QUERY_QP_OUT_SYNDROME, QUERY_QP_OUT_SZ_BYTES),
    (
        "QUERY_QP_OUT_OPT_PARAM_MASK",
        QUERY_QP_OUT_OPT_PARAM_MASK,
        QUERY_QP_OUT_SZ_BYTES,
    ),
    ("QUERY_QP_OUT_QPC", QUERY_QP_OUT_QPC, QUERY_QP_OUT_SZ_BYTES),
    (
        "QUERY_QP_OUT_QPC_DATA_IN_ORDER",
        QUERY_QP_OUT_QPC_DATA_IN_ORDER,
        QUERY_QP_OUT_SZ_BYTES,
    ),
    (
        "QUERY_QP_OUT_QPC_LAG_TX_PORT_AFFINITY",
        QUERY_QP_OUT_QPC_LAG_TX_PORT_AFFINITY,
        QUERY_QP_OUT_SZ_BYTES,
    ),
    ("QPC_STATE", QPC_STATE, QPC_SZ_BYTES),
    ("QPC_LAG_TX_PORT_AFFINITY", QPC_LAG_TX_PORT_AFFINITY, QPC_SZ_BYTES),
    ("QPC_DATA_IN_ORDER", QPC_DATA_IN_ORDER, QPC_SZ_BYTES),
    ("QPC_DRAIN_SIGERR", QPC_DRAIN_SIGERR, QPC_SZ_BYTES),
    ("QPC_PRIMARY_ADDRESS_PATH", QPC_PRIMARY_ADDRESS_PATH, QPC_SZ_BYTES),
    (
        "QPC_PRIMARY_ADDRESS_PATH_UDP_SPORT",
        QPC_PRIMARY_ADDRESS_PATH_UDP_SPORT,
        QPC_SZ_BYTES,
    ),
    ("QPC_HW_SQ_WQEBB_COUNTER", QPC_HW_SQ_WQEBB_COUNTER, QPC_SZ_BYTES),
    ("QUERY_DCT_IN_OPCODE", QUERY_DCT_IN_OPCODE, QUERY_DCT_IN_SZ_BYTES),
    ("QUERY_DCT_IN_DCTN", QUERY_DCT_IN_DCTN, QUERY_DCT_IN_SZ_BYTES),
    ("QUERY_DCT_OUT_STATUS", QUERY_DCT_OUT_STATUS, QUERY_DCT_OUT_SZ_BYTES),
    ("QUERY_DCT_OUT_DCTC", QUERY_DCT_OUT_DCTC, QUERY_DCT_OUT_SZ_BYTES),
    (
        "QUERY_DCT_OUT_DCTC_DATA_IN_ORDER",
        QUERY_DCT_OUT_DCTC_DATA_IN_ORDER,
        QUERY_DCT_OUT_SZ_BYTES,
    ),
    ("DCTC_STATE", DCTC_STATE, DCTC_SZ_BYTES),
    ("DCTC_RRE", DCTC_RRE, DCTC_SZ_BYTES),
    ("DCTC_RWE", DCTC_RWE, DCTC_SZ_BYTES),
    ("DCTC_RAE", DCTC_RAE, DCTC_SZ_BYTES),
    ("DCTC_CS_RES", DCTC_CS_RES, DCTC_SZ_BYTES),
    ("DCTC_MIN_RNR_NAK", DCTC_MIN_RNR_NAK, DCTC_SZ_BYTES),
    ("DCTC_PD", DCTC_PD, DCTC_SZ_BYTES),
    ("DCTC_TCLASS", DCTC_TCLASS, DCTC_SZ_BYTES),
    ("DCTC_FLOW_LABEL", DCTC_FLOW_LABEL, DCTC_SZ_BYTES),
    ("DCTC_DC_ACCESS_KEY", DCTC_DC_ACCESS_KEY, DCTC_SZ_BYTES),
    ("DCTC_MTU", DCTC_MTU, DCTC_SZ_BYTES),
    ("DCTC_PORT", DCTC_PORT, DCTC_SZ_BYTES),
    ("DCTC_PKEY_INDEX", DCTC_PKEY_INDEX, DCTC_SZ_BYTES),
    ("DCTC_MY_ADDR_INDEX", DCTC_MY_ADDR_INDEX, DCTC_SZ_BYTES),
    ("DCTC_HOP_LIMIT", DCTC_HOP_LIMIT, DCTC_SZ_BYTES),
    (
        "DCTC_DC_ACCESS_KEY_VIOLATION_COUNT",
        DCTC_DC_ACCESS_KEY_VIOLATION_COUNT,
        DCTC_SZ_BYTES,
    ),
    ("QUERY_LAG_IN_OPCODE", QUERY_LAG_IN_OPCODE, QUERY_LAG_IN_SZ_BYTES),
    ("QUERY_LAG_OUT_STATUS", QUERY_LAG_OUT_STATUS, QUERY_LAG_OUT_SZ_BYTES),
    (
        "QUERY_LAG_OUT_CTX_LAG_STATE",
        QUERY_LAG_OUT_CTX_LAG_STATE,
        QUERY_LAG_OUT_SZ_BYTES,
    ),
    (
        "QUERY_LAG_OUT_CTX_TX_REMAP_AFFINITY_1",
        QUERY_LAG_OUT_CTX_TX_REMAP_AFFINITY_1,
        QUERY_LAG_OUT_SZ_BYTES,
    ),
    (
        "QUERY_LAG_OUT_CTX_TX_REMAP_AFFINITY_2",
        QUERY_LAG_OUT_CTX_TX_REMAP_AFFINITY_2,
        QUERY_LAG_OUT_SZ_BYTES,
    ),
    (
        "CREATE_AV_QP_MAPPING_IN_HDR",
        CREATE_AV_QP_MAPPING_IN_HDR,
        CREATE_AV_QP_MAPPING_IN_SZ_BYTES,
    ),
    (
        "CREATE_AV_QP_MAPPING_IN_HDR_OPCODE",
        CREATE_AV_QP_MAPPING_IN_HDR_OPCODE,
        CREATE_AV_QP_MAPPING_IN_SZ_BYTES,
    ),
    (
        "CREATE_AV_QP_MAPPING_IN_HDR_OBJ_TYPE",
        CREATE_AV_QP_MAPPING_IN_HDR_OBJ_TYPE,
        CREATE_AV_QP_MAPPING_IN_SZ_BYTES,
    ),
    (
        "CREATE_AV_QP_MAPPING_IN_MAPPING",
        CREATE_AV_QP_MAPPING_IN_MAPPING,
        CREATE_AV_QP_MAPPING_IN_SZ_BYTES,
    ),
    (
        "CREATE_AV_QP_MAPPING_IN_MAPPING_QPN",
        CREATE_AV_QP_MAPPING_IN_MAPPING_QPN,
        CREATE_AV_QP_MAPPING_IN_SZ_BYTES,
    ),
    (
        "CREATE_AV_QP_MAPPING_IN_MAPPING_REMOTE_ADDRESS_VECTOR_SL_OR_ETH_PRIO",
        CREATE_AV_QP_MAPPING_IN_MAPPING_REMOTE_ADDRESS_VECTOR_SL_OR_ETH_PRIO,
        CREATE_AV_QP_MAPPING_IN_SZ_BYTES,
    ),
    (
        "CREATE_AV_QP_MAPPING_IN_MAPPING_REMOTE_ADDRESS_VECTOR_SRC_ADDR_INDEX",
        CREATE_AV_QP_MAPPING_IN_MAPPING_REMOTE_ADDRESS_VECTOR_SRC_ADDR_INDEX,
        CREATE_AV_QP_MAPPING_IN_SZ_BYTES,
    ),
    (
        "CREATE_AV_QP_MAPPING_IN_MAPPING_REMOTE_ADDRESS_VECTOR_RGID_OR_RIP",
        CREATE_AV_QP_MAPPING_IN_MAPPING_REMOTE_ADDRESS_VECTOR_RGID_OR_RIP,
        CREATE_AV_QP_MAPPING_IN_SZ_BYTES,
    ),
    (
        "AV_QP_MAPPING_MODIFY_FIELD_SELECT",
        AV_QP_MAPPING_MODIFY_FIELD_SELECT,
        AV_QP_MAPPING_SZ_BYTES,
    ),
    ("AV_QP_MAPPING_QPN", AV_QP_MAPPING_QPN, AV_QP_MAPPING_SZ_BYTES),
    (
        "AV_QP_MAPPING_REMOTE_ADDRESS_VECTOR",
        AV_QP_MAPPING_REMOTE_ADDRESS_VECTOR,
        AV_QP_MAPPING_SZ_BYTES,
    ),
    (
        "AV_QP_MAPPING_REMOTE_ADDRESS_VECTOR_SL_OR_ETH_PRIO",
        AV_QP_MAPPING_REMOTE_ADDRESS_VECTOR_SL_OR_ETH_PRIO,
        AV_QP_MAPPING_SZ_BYTES,
    ),
    (
        "AV_QP_MAPPING_REMOTE_ADDRESS_VECTOR_SRC_ADDR_INDEX",
        AV_QP_MAPPING_REMOTE_ADDRESS_VECTOR_SRC_ADDR_INDEX,
        AV_QP_MAPPING_SZ_BYTES,
    ),
    (
        "AV_QP_MAPPING_REMOTE_ADDRESS_VECTOR_RGID_OR_RIP",
        AV_QP_MAPPING_REMOTE_ADDRESS_VECTOR_RGID_OR_RIP,
        AV_QP_MAPPING_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_QP_DATA_IN_ORDER",
        CMD_HCA_CAP_QP_DATA_IN_ORDER,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_NUM_LAG_PORTS",
        CMD_HCA_CAP_NUM_LAG_PORTS,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_LAG_TX_PORT_AFFINITY",
        CMD_HCA_CAP_LAG_TX_PORT_AFFINITY,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_RTS2RTS_QP_UDP_SPORT",
        CMD_HCA_CAP_RTS2RTS_QP_UDP_SPORT,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_RTS2RTS_LAG_TX_PORT_AFFINITY",
        CMD_HCA_CAP_RTS2RTS_LAG_TX_PORT_AFFINITY,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    ("CMD_HCA_CAP_QOS", CMD_HCA_CAP_QOS, CMD_HCA_CAP_SZ_BYTES),
    (
        "CMD_HCA_CAP_QPC_EXTENSION",
        CMD_HCA_CAP_QPC_EXTENSION,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_GENERAL_OBJ_TYPES",
        CMD_HCA_CAP_GENERAL_OBJ_TYPES,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_LOG_MAX_RA_REQ_DC",
        CMD_HCA_CAP_LOG_MAX_RA_REQ_DC,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_LOG_MAX_RA_RES_DC",
        CMD_HCA_CAP_LOG_MAX_RA_RES_DC,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    ("CMD_HCA_CAP_SHO", CMD_HCA_CAP_SHO, CMD_HCA_CAP_SZ_BYTES),
    (
        "CMD_HCA_CAP_SIGERR_DOMAIN_AND_SIG_TYPE",
        CMD_HCA_CAP_SIGERR_DOMAIN_AND_SIG_TYPE,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_SIG_BLOCK_4048",
        CMD_HCA_CAP_SIG_BLOCK_4048,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    ("CMD_HCA_CAP_SIG_CRC32C", CMD_HCA_CAP_SIG_CRC32C, CMD_HCA_CAP_SZ_BYTES),
    (
        "CMD_HCA_CAP_SIG_CRC64_XP10",
        CMD_HCA_CAP_SIG_CRC64_XP10,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    ("CMD_HCA_CAP_CRYPTO", CMD_HCA_CAP_CRYPTO, CMD_HCA_CAP_SZ_BYTES),
    (
        "CMD_HCA_CAP_AES_XTS_SINGLE_BLOCK_LE_TWEAK",
        CMD_HCA_CAP_AES_XTS_SINGLE_BLOCK_LE_TWEAK,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_AES_XTS_MULTI_BLOCK_BE_TWEAK",
        CMD_HCA_CAP_AES_XTS_MULTI_BLOCK_BE_TWEAK,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    ("CMD_HCA_CAP_HCA_CAP_2", CMD_HCA_CAP_HCA_CAP_2, CMD_HCA_CAP_SZ_BYTES),
    ("CMD_HCA_CAP_DMA_MMO_SQ", CMD_HCA_CAP_DMA_MMO_SQ, CMD_HCA_CAP_SZ_BYTES),
    ("CMD_HCA_CAP_DMA_MMO_QP", CMD_HCA_CAP_DMA_MMO_QP, CMD_HCA_CAP_SZ_BYTES),
    (
        "CMD_HCA_CAP_LOG_DMA_MMO_MAX_SIZE",
        CMD_HCA_CAP_LOG_DMA_MMO_MAX_SIZE,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_DP_ORDERING_OOO_ALL_XRC",
        CMD_HCA_CAP_DP_ORDERING_OOO_ALL_XRC,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_DP_ORDERING_OOO_ALL_DC",
        CMD_HCA_CAP_DP_ORDERING_OOO_ALL_DC,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_DP_ORDERING_OOO_ALL_RC",
        CMD_HCA_CAP_DP_ORDERING_OOO_ALL_RC,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_DP_ORDERING_OOO_ALL_UD",
        CMD_HCA_CAP_DP_ORDERING_OOO_ALL_UD,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_DP_ORDERING_OOO_ALL_UC",
        CMD_HCA_CAP_DP_ORDERING_OOO_ALL_UC,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    ("CMD_HCA_CAP_VHCA_ID", CMD_HCA_CAP_VHCA_ID, CMD_HCA_CAP_SZ_BYTES),
    (
        "CMD_HCA_CAP_PRIO_TAG_REQUIRED",
        CMD_HCA_CAP_PRIO_TAG_REQUIRED,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_ESWITCH_MANAGER",
        CMD_HCA_CAP_ESWITCH_MANAGER,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_PROTOCOLS",
        CMD_HCA_CAP_FLEX_PARSER_PROTOCOLS,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_ISOLATE_VL_TC_NEW",
        CMD_HCA_CAP_ISOLATE_VL_TC_NEW,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_HEADER_MODIFY",
        CMD_HCA_CAP_FLEX_PARSER_HEADER_MODIFY,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    ("CMD_HCA_CAP_SF", CMD_HCA_CAP_SF, CMD_HCA_CAP_SZ_BYTES),
    (
        "CMD_HCA_CAP_MATCH_DEFINER_FORMAT_SUPPORTED",
        CMD_HCA_CAP_MATCH_DEFINER_FORMAT_SUPPORTED,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    ("CMD_HCA_CAP_ROCE", CMD_HCA_CAP_ROCE, CMD_HCA_CAP_SZ_BYTES),
    ("CMD_HCA_CAP_PORT_TYPE", CMD_HCA_CAP_PORT_TYPE, CMD_HCA_CAP_SZ_BYTES),
    ("CMD_HCA_CAP_NUM_PORTS", CMD_HCA_CAP_NUM_PORTS, CMD_HCA_CAP_SZ_BYTES),
    (
        "CMD_HCA_CAP_STEERING_FORMAT_VERSION",
        CMD_HCA_CAP_STEERING_FORMAT_VERSION,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FL_RC_QP_WHEN_ROCE_DISABLED",
        CMD_HCA_CAP_FL_RC_QP_WHEN_ROCE_DISABLED,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_SQ_TS_FORMAT",
        CMD_HCA_CAP_SQ_TS_FORMAT,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_LOG_HEADER_MODIFY_ARGUMENT_GRANULARITY",
        CMD_HCA_CAP_LOG_HEADER_MODIFY_ARGUMENT_GRANULARITY,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_LOG_HEADER_MODIFY_ARGUMENT_MAX_ALLOC",
        CMD_HCA_CAP_LOG_HEADER_MODIFY_ARGUMENT_MAX_ALLOC,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_ID_ICMP_DW0",
        CMD_HCA_CAP_FLEX_PARSER_ID_ICMP_DW0,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_ID_ICMP_DW1",
        CMD_HCA_CAP_FLEX_PARSER_ID_ICMP_DW1,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_ID_ICMPV6_DW0",
        CMD_HCA_CAP_FLEX_PARSER_ID_ICMPV6_DW0,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_ID_ICMPV6_DW1",
        CMD_HCA_CAP_FLEX_PARSER_ID_ICMPV6_DW1,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_ID_GENEVE_OPT_0",
        CMD_HCA_CAP_FLEX_PARSER_ID_GENEVE_OPT_0,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_ID_OUTER_FIRST_MPLS_OVER_GRE",
        CMD_HCA_CAP_FLEX_PARSER_ID_OUTER_FIRST_MPLS_OVER_GRE,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_ID_OUTER_FIRST_MPLS_OVER_UDP_LABEL",
        CMD_HCA_CAP_FLEX_PARSER_ID_OUTER_FIRST_MPLS_OVER_UDP_LABEL,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_ID_GTPU_DW_0",
        CMD_HCA_CAP_FLEX_PARSER_ID_GTPU_DW_0,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_ID_GTPU_TEID",
        CMD_HCA_CAP_FLEX_PARSER_ID_GTPU_TEID,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_ID_GTPU_DW_2",
        CMD_HCA_CAP_FLEX_PARSER_ID_GTPU_DW_2,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_FLEX_PARSER_ID_GTPU_FIRST_EXT_DW_0",
        CMD_HCA_CAP_FLEX_PARSER_ID_GTPU_FIRST_EXT_DW_0,
        CMD_HCA_CAP_SZ_BYTES,
    ),
    (
        "CMD_HCA_CAP_2_LOG_RESERVED_QPN_GRANULARITY",
        CMD_HCA_CAP_2_LOG_RESERVED_QPN_GRANULARITY,
        HCA_CAP_UNION_SZ_BYTES,
    ),
    (
        "ATOMIC_CAPS_FETCH_ADD_PCI_ATOMIC",
        ATOMIC_CAPS_FETCH_ADD_PCI_ATOMIC,
        ATOMIC_CAPS_SZ_BYTES,
    ),
    (
        "ATOMIC_CAPS_SWAP_PCI_ATOMIC",
        ATOMIC_CAPS_SWAP_PCI_ATOMIC,
        ATOMIC_CAPS_SZ_BYTES,
    ),
    (
        "ATOMIC_CAPS_COMPARE_SWAP_PCI_ATOMIC",
        ATOMIC_CAPS_COMPARE_SWAP_PCI_ATOMIC,
        ATOMIC_CAPS_SZ_BYTES,
    ),
    (
        "ATOMIC_CAPS_ATOMIC_REQ_8B_ENDIANNESS_MODE",
        ATOMIC_CAPS_ATOMIC_REQ_8B_ENDIANNESS_MODE,
        ATOMIC_CAPS_SZ_BYTES,
    ),
    (
        "ATOMIC_CAPS_SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1",
        ATOMIC_CAPS_SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1,
        ATOMIC_CAPS_SZ_BYTES,
    ),
    (
        "ATOMIC_CAPS_ATOMIC_OPERATIONS",
        ATOMIC_CAPS_ATOMIC_OPERATIONS,
        ATOMIC_CAPS_SZ_BYTES,
    ),
    (
        "ATOMIC_CAPS_ATOMIC_SIZE_QP",
        ATOMIC_CAPS_ATOMIC_SIZE_QP,
        ATOMIC_CAPS_SZ_BYTES,
    ),
    (
        "ATOMIC_CAPS_ATOMIC_SIZE_DC",
        ATOMIC_CAPS_ATOMIC_SIZE_DC,
        ATOMIC_CAPS_SZ_BYTES,
    ),
    (
        "QOS_CAP_NIC_SQ_SCHEDULING",
        QOS_CAP_NIC_SQ_SCHEDULING,
        HCA_CAP_UNION_SZ_BYTES,
    ),
    ("QOS_CAP_NIC_BW_SHARE", QOS_CAP_NIC_BW_SHARE, HCA_CAP_UNION_SZ_BYTES),
    ("QOS_CAP_NIC_RATE_LIMIT", QOS_CAP_NIC_RATE_LIMIT, HCA_CAP_UNION_SZ_BYTES),
    (
        "QOS_CAP_NIC_QP_SCHEDULING",
        QOS_CAP_NIC_QP_SCHEDULING,
        HCA_CAP_UNION_SZ_BYTES,
    ),
    (
        "QOS_CAP_NIC_ELEMENT_TYPE",
        QOS_CAP_NIC_ELEMENT_TYPE,
        HCA_CAP_UNION_SZ_BYTES,
    ),
    ("QOS_CAP_NIC_TSAR_TYPE", QOS_CAP_NIC_TSAR_TYPE, HCA_CAP_UNION_SZ_BYTES),
    (
        "CRYPTO_CAPS_WRAPPED_CRYPTO_OPERATIONAL",
        CRYPTO_CAPS_WRAPPED_CRYPTO_OPERATIONAL,
        HCA_CAP_UNION_SZ_BYTES,
    ),
    (
        "CRYPTO_CAPS_WRAPPED_CRYPTO_GOING_TO_COMMISSIONING",
        CRYPTO_CAPS_WRAPPED_CRYPTO_GOING_TO_COMMISSIONING,
        HCA_CAP_UNION_SZ_BYTES,
    ),
    (
        "CRYPTO_CAPS_WRAPPED_IMPORT_METHOD",
        CRYPTO_CAPS_WRAPPED_IMPORT_METHOD,
        HCA_CAP_UNION_SZ_BYTES,
    ),
    (
        "CRYPTO_CAPS_LOG_MAX_NUM_DEKS",
        CRYPTO_CAPS_LOG_MAX_NUM_DEKS,
        HCA_CAP_UNION_SZ_BYTES,
    ),
    (
        "CRYPTO_CAPS_FAILED_SELFTESTS",
        CRYPTO_CAPS_FAILED_SELFTESTS,
        HCA_CAP_UNION_SZ_BYTES,
    ),
    ("ODP_CAP_SIG", ODP_CAP_SIG, ODP_CAP_SZ_BYTES),
    ("ODP_CAP_RC_ODP_CAPS_SEND", ODP_CAP_RC_ODP_CAPS_SEND, ODP_CAP_SZ_BYTES),
    (
        "ODP_CAP_RC_ODP_CAPS_RECEIVE",
        ODP_CAP_RC_ODP_CAPS_RECEIVE,
        ODP_CAP_SZ_BYTES,
    ),
    ("ODP_CAP_RC_ODP_CAPS_WRITE", ODP_CAP_RC_ODP_CAPS_WRITE, ODP_CAP_SZ_BYTES),
    ("ODP_CAP_RC_ODP_CAPS_READ", ODP_CAP_RC_ODP_CAPS_READ, ODP_CAP_SZ_BYTES),
    (
        "ODP_CAP_RC_ODP_CAPS_ATOMIC",
        ODP_CAP_RC_ODP_CAPS_ATOMIC,
        ODP_CAP_SZ_BYTES,
    ),
    (
        "ODP_CAP_RC_ODP_CAPS_SRQ_RECEIVE",
        ODP_CAP_RC_ODP_CAPS_SRQ_RECEIVE,
        ODP_CAP_SZ_BYTES,
    ),
    ("ODP_CAP_UC_ODP_CAPS_SEND", ODP_CAP_UC_ODP_CAPS_SEND, ODP_CAP_SZ_BYTES),
    (
        "ODP_CAP_UC_ODP_CAPS_RECEIVE",
        ODP_CAP_UC_ODP_CAPS_RECEIVE,
        ODP_CAP_SZ_BYTES,
    ),
    ("ODP_CAP_UC_ODP_CAPS_WRITE", ODP_CAP_UC_ODP_CAPS_WRITE, ODP_CAP_SZ_BYTES),
    ("ODP_CAP_UC_ODP_CAPS_READ", ODP_CAP_UC_ODP_CAPS_READ, ODP_CAP_SZ_BYTES),
    (
        "ODP_CAP_UC_ODP_CAPS_ATOMIC",
        ODP_CAP_UC_ODP_CAPS_ATOMIC,
        ODP_CAP_SZ_BYTES,
    ),
    (
        "ODP_CAP_UC_ODP_CAPS_SRQ_RECEIVE",
        ODP_CAP_UC_ODP_CAPS_SRQ_RECEIVE,
        ODP_CAP_SZ_BYTES,
    ),
    ("ODP_CAP_UD_ODP_CAPS_SEND", ODP_CAP_UD_ODP_CAPS_SEND, ODP_CAP_SZ_BYTES),
    (
        "ODP_CAP_UD_ODP_CAPS_RECEIVE",
        ODP_CAP_UD_ODP_CAPS_RECEIVE,
        ODP_CAP_SZ_BYTES,
    ),
    ("ODP_CAP_UD_ODP_CAPS_WRITE", ODP_CAP_UD_ODP_CAPS_WRITE, ODP_CAP_SZ_BYTES),
    ("ODP_CAP_UD_ODP_CAPS_READ", ODP_CAP_UD_ODP_CAPS_READ, ODP_CAP_SZ_BYTES),
    (
        "ODP_CAP_UD_ODP_CAPS_ATOMIC",
        ODP_CAP_UD_ODP_CAPS_ATOMIC,
        ODP_CAP_SZ_BYTES,
    ),
    (
        "ODP_CAP_UD_ODP_CAPS_SRQ_RECEIVE",
        ODP_CAP_UD_ODP_CAPS_SRQ_RECEIVE,
        ODP_CAP_SZ_BYTES,
    ),
    ("ODP_CAP_XRC_ODP_CAPS_SEND", ODP_CAP_XRC_ODP_CAPS_SEND, ODP_CAP_SZ_BYTES),
    (
        "ODP_CAP_XRC_ODP_CAPS_RECEIVE",
        ODP_CAP_XRC_ODP_CAPS_RECEIVE,
        ODP_CAP_SZ_BYTES,
    ),
    (
        "ODP_CAP_XRC_ODP_CAPS_WRITE",
        ODP_CAP_XRC_ODP_CAPS_WRITE,
        ODP_CAP_SZ_BYTES,
    ),
    ("ODP_CAP_XRC_ODP_CAPS_READ", ODP_CAP_XRC_ODP_CAPS_READ, ODP_CAP_SZ_BYTES),
    (
        "ODP_CAP_XRC_ODP_CAPS_ATOMIC",
        ODP_CAP_XRC_ODP_CAPS_ATOMIC,
        ODP_CAP_SZ_BYTES,
    ),
    (
        "ODP_CAP_XRC_ODP_CAPS_SRQ_RECEIVE",
        ODP_CAP_XRC_ODP_CAPS_SRQ_RECEIVE,
        ODP_CAP_SZ_BYTES,
    ),
    ("ODP_CAP_DC_ODP_CAPS_SEND", ODP_CAP_DC_ODP_CAPS_SEND, ODP_CAP_SZ_BYTES),
    (
        "ODP_CAP_DC_ODP_CAPS_RECEIVE",
        ODP_CAP_DC_ODP_CAPS_RECEIVE,
        ODP_CAP_SZ_BYTES,
    ),
    ("ODP_CAP_DC_ODP_CAPS_WRITE", ODP_CAP_DC_ODP_CAPS_WRITE, ODP_CAP_SZ_BYTES),
    ("ODP_CAP_DC_ODP_CAPS_READ", ODP_CAP_DC_ODP_CAPS_READ, ODP_CAP_SZ_BYTES),
    (
        "ODP_CAP_DC_ODP_CAPS_ATOMIC",
        ODP_CAP_DC_ODP_CAPS_ATOMIC,
        ODP_CAP_SZ_BYTES,
    ),
    (
        "ODP_CAP_DC_ODP_CAPS_SRQ_RECEIVE",
        ODP_CAP_DC_ODP_CAPS_SRQ_RECEIVE,
        ODP_CAP_SZ_BYTES,
    ),
];

// ---- DEVX objects and commands a DEVX consumer (UCX) drives: QPs (RC, DCI), DCTs and RMPs created
// through DEVX over user memory (umem), their modify/query commands, more general capabilities.
// Offsets and widths from the `_bits` layouts of the PRM as UCX 1.13 declares them
// (src/uct/ib/mlx5/dv/ib_mlx5_ifc.h, computed mechanically with offsetof/sizeof) and, for
// `wq_umem_offset`, the kernel's include/linux/mlx5/mlx5_ifc.h.

/// `create_qp_in.opcode`.
pub const CREATE_QP_IN_OPCODE: Field = Field::new(0x0, 16);
/// `create_qp_in.uid`.
pub const CREATE_QP_IN_UID: Field = Field::new(0x10, 16);
/// `create_qp_in.qpc`.
pub const CREATE_QP_IN_QPC: Field = Field::new(0xc0, 1856);
/// `create_qp_in.wq_umem_id`.
pub const CREATE_QP_IN_WQ_UMEM_ID: Field = Field::new(0x840, 32);
/// `create_qp_in.wq_umem_valid`.
pub const CREATE_QP_IN_WQ_UMEM_VALID: Field = Field::new(0x860, 1);
/// `create_qp_out.status`.
pub const CREATE_QP_OUT_STATUS: Field = Field::new(0x0, 8);
/// `create_qp_out.syndrome`.
pub const CREATE_QP_OUT_SYNDROME: Field = Field::new(0x20, 32);
/// `create_qp_out.qpn`.
pub const CREATE_QP_OUT_QPN: Field = Field::new(0x48, 24);
/// `modify_qp_in.opcode`.
pub const MODIFY_QP_IN_OPCODE: Field = Field::new(0x0, 16);
/// `modify_qp_in.qpn`.
pub const MODIFY_QP_IN_QPN: Field = Field::new(0x48, 24);
/// `rst2init_qp_in.opt_param_mask`.
pub const RST2INIT_QP_IN_OPT_PARAM_MASK: Field = Field::new(0x80, 32);
/// `rst2init_qp_in.qpc`.
pub const RST2INIT_QP_IN_QPC: Field = Field::new(0xc0, 1856);
/// `init2rtr_qp_in.opt_param_mask`.
pub const INIT2RTR_QP_IN_OPT_PARAM_MASK: Field = Field::new(0x80, 32);
/// `init2rtr_qp_in.qpc`.
pub const INIT2RTR_QP_IN_QPC: Field = Field::new(0xc0, 1856);
/// `rtr2rts_qp_in.opt_param_mask`.
pub const RTR2RTS_QP_IN_OPT_PARAM_MASK: Field = Field::new(0x80, 32);
/// `rtr2rts_qp_in.qpc`.
pub const RTR2RTS_QP_IN_QPC: Field = Field::new(0xc0, 1856);
/// `qpc.st`.
pub const QPC_ST: Field = Field::new(0x8, 8);
/// `qpc.pm_state`.
pub const QPC_PM_STATE: Field = Field::new(0x13, 2);
/// `qpc.full_handshake`.
pub const QPC_FULL_HANDSHAKE: Field = Field::new(0x83, 1);
/// `qpc.rdma_wr_disabled`.
pub const QPC_RDMA_WR_DISABLED: Field = Field::new(0x15, 1);
/// `qpc.pd`.
pub const QPC_PD: Field = Field::new(0x28, 24);
/// `qpc.mtu`.
pub const QPC_MTU: Field = Field::new(0x40, 3);
/// `qpc.log_msg_max`.
pub const QPC_LOG_MSG_MAX: Field = Field::new(0x43, 5);
/// `qpc.log_rq_size`.
pub const QPC_LOG_RQ_SIZE: Field = Field::new(0x49, 4);
/// `qpc.log_rq_stride`.
pub const QPC_LOG_RQ_STRIDE: Field = Field::new(0x4d, 3);
/// `qpc.no_sq`.
pub const QPC_NO_SQ: Field = Field::new(0x50, 1);
/// `qpc.log_sq_size`.
pub const QPC_LOG_SQ_SIZE: Field = Field::new(0x51, 4);
/// `qpc.uar_page`.
pub const QPC_UAR_PAGE: Field = Field::new(0x68, 24);
/// `qpc.user_index`.
pub const QPC_USER_INDEX: Field = Field::new(0x88, 24);
/// `qpc.log_ack_req_freq`.
pub const QPC_LOG_ACK_REQ_FREQ: Field = Field::new(0x380, 4);
/// `qpc.log_sra_max`.
pub const QPC_LOG_SRA_MAX: Field = Field::new(0x388, 3);
/// `qpc.retry_count`.
pub const QPC_RETRY_COUNT: Field = Field::new(0x38d, 3);
/// `qpc.rnr_retry`.
pub const QPC_RNR_RETRY: Field = Field::new(0x390, 3);
/// `qpc.next_send_psn`.
pub const QPC_NEXT_SEND_PSN: Field = Field::new(0x3c8, 24);
/// `qpc.cqn_snd`.
pub const QPC_CQN_SND: Field = Field::new(0x3e8, 24);
/// `qpc.log_rra_max`.
pub const QPC_LOG_RRA_MAX: Field = Field::new(0x488, 3);
/// `qpc.atomic_mode`.
pub const QPC_ATOMIC_MODE: Field = Field::new(0x48c, 4);
/// `qpc.rre`.
pub const QPC_RRE: Field = Field::new(0x490, 1);
/// `qpc.rwe`.
pub const QPC_RWE: Field = Field::new(0x491, 1);
/// `qpc.rae`.
pub const QPC_RAE: Field = Field::new(0x492, 1);
/// `qpc.min_rnr_nak`.
pub const QPC_MIN_RNR_NAK: Field = Field::new(0x4a3, 5);
/// `qpc.next_rcv_psn`.
pub const QPC_NEXT_RCV_PSN: Field = Field::new(0x4a8, 24);
/// `qpc.cqn_rcv`.
pub const QPC_CQN_RCV: Field = Field::new(0x4e8, 24);
/// `qpc.dbr_addr`.
pub const QPC_DBR_ADDR: Field = Field::new(0x500, 64);
/// `qpc.rq_type`.
pub const QPC_RQ_TYPE: Field = Field::new(0x565, 3);
/// `qpc.srqn_rmpn_xrqn`.
pub const QPC_SRQN_RMPN_XRQN: Field = Field::new(0x568, 24);
/// `qpc.remote_qpn`.
pub const QPC_REMOTE_QPN: Field = Field::new(0xa8, 24);
/// `qpc.dbr_umem_id`.
pub const QPC_DBR_UMEM_ID: Field = Field::new(0x720, 32);
/// `qpc.offload_type`.
pub const QPC_OFFLOAD_TYPE: Field = Field::new(0x18, 4);
/// `qpc.primary_address_path.pkey_index`.
pub const QPC_PAP_PKEY_INDEX: Field = Field::new(0xd0, 16);
/// `qpc.primary_address_path.grh`.
pub const QPC_PAP_GRH: Field = Field::new(0xe8, 1);
/// `qpc.primary_address_path.mlid`.
pub const QPC_PAP_MLID: Field = Field::new(0xe9, 7);
/// `qpc.primary_address_path.rlid`.
pub const QPC_PAP_RLID: Field = Field::new(0xf0, 16);
/// `qpc.primary_address_path.ack_timeout`.
pub const QPC_PAP_ACK_TIMEOUT: Field = Field::new(0x100, 5);
/// `qpc.primary_address_path.src_addr_index`.
pub const QPC_PAP_SRC_ADDR_INDEX: Field = Field::new(0x108, 8);
/// `qpc.primary_address_path.hop_limit`.
pub const QPC_PAP_HOP_LIMIT: Field = Field::new(0x118, 8);
/// `qpc.primary_address_path.tclass`.
pub const QPC_PAP_TCLASS: Field = Field::new(0x124, 8);
/// `qpc.primary_address_path.flow_label`.
pub const QPC_PAP_FLOW_LABEL: Field = Field::new(0x12c, 20);
/// `qpc.primary_address_path.rgid_rip`.
pub const QPC_PAP_RGID_RIP: Field = Field::new(0x140, 128);
/// `qpc.primary_address_path.sl`.
pub const QPC_PAP_SL: Field = Field::new(0x1e4, 4);
/// `qpc.primary_address_path.eth_prio`.
pub const QPC_PAP_ETH_PRIO: Field = Field::new(0x1e1, 3);
/// `qpc.primary_address_path.vhca_port_num`.
pub const QPC_PAP_VHCA_PORT_NUM: Field = Field::new(0x1e8, 8);
/// `qpc.primary_address_path.rmac_47_32`.
pub const QPC_PAP_RMAC_47_32: Field = Field::new(0x1f0, 16);
/// `qpc.primary_address_path.udp_sport`.
pub const QPC_PAP_UDP_SPORT: Field = Field::new(0x1d0, 16);
/// `qpc.primary_address_path.dscp`.
pub const QPC_PAP_DSCP: Field = Field::new(0x1ca, 6);
/// `qpc.primary_address_path.log_rtm`.
pub const QPC_PAP_LOG_RTM: Field = Field::new(0x110, 4);
/// `create_dct_in.opcode`.
pub const CREATE_DCT_IN_OPCODE: Field = Field::new(0x0, 16);
/// `create_dct_in.dct_context_entry`.
pub const CREATE_DCT_IN_DCTC: Field = Field::new(0x80, 512);
/// `create_dct_out.status`.
pub const CREATE_DCT_OUT_STATUS: Field = Field::new(0x0, 8);
/// `create_dct_out.dctn`.
pub const CREATE_DCT_OUT_DCTN: Field = Field::new(0x48, 24);
/// `dctc.state`.
pub const DCTC_STATE: Field = Field::new(0x4, 4);
/// `dctc.offload_type`.
pub const DCTC_OFFLOAD_TYPE: Field = Field::new(0x18, 4);
/// `dctc.user_index`.
pub const DCTC_USER_INDEX: Field = Field::new(0x28, 24);
/// `dctc.cs_res`.
pub const DCTC_CS_RES: Field = Field::new(0x88, 8);
/// `dctc.atomic_mode`.
pub const DCTC_ATOMIC_MODE: Field = Field::new(0x68, 4);
/// `dctc.rre`.
pub const DCTC_RRE: Field = Field::new(0x6c, 1);
/// `dctc.rwe`.
pub const DCTC_RWE: Field = Field::new(0x6d, 1);
/// `dctc.rae`.
pub const DCTC_RAE: Field = Field::new(0x6e, 1);
/// `dctc.pd`.
pub const DCTC_PD: Field = Field::new(0xc8, 24);
/// `dctc.srqn_xrqn`.
pub const DCTC_SRQN_XRQN: Field = Field::new(0xa8, 24);
/// `dctc.cqn`.
pub const DCTC_CQN: Field = Field::new(0x48, 24);
/// `dctc.min_rnr_nak`.
pub const DCTC_MIN_RNR_NAK: Field = Field::new(0x93, 5);
/// `dctc.dc_access_key`.
pub const DCTC_DC_ACCESS_KEY: Field = Field::new(0x100, 64);
/// `dctc.mtu`.
pub const DCTC_MTU: Field = Field::new(0x145, 3);
/// `dctc.port`.
pub const DCTC_PORT: Field = Field::new(0x148, 8);
/// `dctc.pkey_index`.
pub const DCTC_PKEY_INDEX: Field = Field::new(0x150, 16);
/// `dctc.my_addr_index`.
pub const DCTC_MY_ADDR_INDEX: Field = Field::new(0x168, 8);
/// `dctc.hop_limit`.
pub const DCTC_HOP_LIMIT: Field = Field::new(0x178, 8);
/// `dctc.tclass`.
pub const DCTC_TCLASS: Field = Field::new(0xe0, 8);
/// `dctc.force_full_handshake`.
pub const DCTC_FORCE_FULL_HANDSHAKE: Field = Field::new(0x72, 1);
/// `create_rmp_in.opcode`.
pub const CREATE_RMP_IN_OPCODE: Field = Field::new(0x0, 16);
/// `create_rmp_in.rmp_context`.
pub const CREATE_RMP_IN_RMPC: Field = Field::new(0x100, 1920);
/// `create_rmp_out.status`.
pub const CREATE_RMP_OUT_STATUS: Field = Field::new(0x0, 8);
/// `create_rmp_out.rmpn`.
pub const CREATE_RMP_OUT_RMPN: Field = Field::new(0x48, 24);
/// `rmpc.state`.
pub const RMPC_STATE: Field = Field::new(0x8, 4);
/// `rmpc.basic_cyclic_rcv_wqe`.
pub const RMPC_BASIC_CYCLIC_RCV_WQE: Field = Field::new(0x20, 1);
/// `rmpc.wq`.
pub const RMPC_WQ: Field = Field::new(0x180, 1536);
/// `wq.wq_type`.
pub const WQ_WQ_TYPE: Field = Field::new(0x0, 4);
/// `wq.page_offset`.
pub const WQ_PAGE_OFFSET: Field = Field::new(0x2b, 5);
/// `wq.pd`.
pub const WQ_PD: Field = Field::new(0x48, 24);
/// `wq.dbr_addr`.
pub const WQ_DBR_ADDR: Field = Field::new(0x80, 64);
/// `wq.dbr_umem_id`.
pub const WQ_DBR_UMEM_ID: Field = Field::new(0x140, 32);
/// `wq.wq_umem_id`.
pub const WQ_WQ_UMEM_ID: Field = Field::new(0x160, 32);
/// `wq.log_wq_stride`.
pub const WQ_LOG_WQ_STRIDE: Field = Field::new(0x10c, 4);
/// `wq.log_wq_pg_sz`.
pub const WQ_LOG_WQ_PG_SZ: Field = Field::new(0x113, 5);
/// `wq.log_wq_sz`.
pub const WQ_LOG_WQ_SZ: Field = Field::new(0x11b, 5);
/// `cmd_hca_cap.log_max_msg`.
pub const CMD_HCA_CAP_LOG_MAX_MSG: Field = Field::new(0x1c3, 5);
/// `cmd_hca_cap.dct`.
pub const CMD_HCA_CAP_DCT: Field = Field::new(0x21a, 1);
/// `cmd_hca_cap.lag_dct`.
pub const CMD_HCA_CAP_LAG_DCT: Field = Field::new(0x276, 2);
/// `cmd_hca_cap.cqe_version`.
pub const CMD_HCA_CAP_CQE_VERSION: Field = Field::new(0x1fc, 4);
/// `cmd_hca_cap.log_max_rmp`.
pub const CMD_HCA_CAP_LOG_MAX_RMP: Field = Field::new(0x383, 5);
/// `cmd_hca_cap.umr_modify_atomic_disabled`.
pub const CMD_HCA_CAP_UMR_MODIFY_ATOMIC_DISABLED: Field = Field::new(0x208, 1);
/// `cmd_hca_cap.atomic`.
pub const CMD_HCA_CAP_ATOMIC: Field = Field::new(0x21e, 1);
/// `cmd_hca_cap.pg`.
pub const CMD_HCA_CAP_PG: Field = Field::new(0x227, 1);
/// `cmd_hca_cap.rndv_offload_dc`.
pub const CMD_HCA_CAP_RNDV_OFFLOAD_DC: Field = Field::new(0x5f2, 1);
/// `cmd_hca_cap.compact_address_vector`.
pub const CMD_HCA_CAP_COMPACT_ADDRESS_VECTOR: Field = Field::new(0x200, 1);
/// `cmd_hca_cap.fixed_buffer_size`.
pub const CMD_HCA_CAP_FIXED_BUFFER_SIZE: Field = Field::new(0x108, 1);
/// `cmd_hca_cap.ooo_sl_mask`.
pub const CMD_HCA_CAP_OOO_SL_MASK: Field = Field::new(0x138, 1);
/// `cmd_hca_cap.cqe_compression`.
pub const CMD_HCA_CAP_CQE_COMPRESSION: Field = Field::new(0x5bf, 1);
/// `modify_qp_out.status`.
pub const MODIFY_QP_OUT_STATUS: Field = Field::new(0x0, 8);
/// `create_qp_in.wq_umem_offset` (kernel mlx5_ifc.h: right after the QP context).
pub const CREATE_QP_IN_WQ_UMEM_OFFSET: Field = Field::new(0x800, 64);
/// `wq.wq_umem_offset` (kernel mlx5_ifc.h).
pub const WQ_WQ_UMEM_OFFSET: Field = Field::new(0x180, 64);
/// `create_dct_in` size in bytes.
pub const CREATE_DCT_IN_SZ_BYTES: usize = 128;
/// `create_dct_out` size in bytes.
pub const CREATE_DCT_OUT_SZ_BYTES: usize = 16;
/// `create_qp_in` size in bytes.
pub const CREATE_QP_IN_SZ_BYTES: usize = 272;
/// `create_qp_out` size in bytes.
pub const CREATE_QP_OUT_SZ_BYTES: usize = 16;
/// `create_rmp_in` size in bytes.
pub const CREATE_RMP_IN_SZ_BYTES: usize = 272;
/// `create_rmp_out` size in bytes.
pub const CREATE_RMP_OUT_SZ_BYTES: usize = 16;
/// `dctc` size in bytes.
pub const DCTC_SZ_BYTES: usize = 64;
/// `rmpc` size in bytes.
pub const RMPC_SZ_BYTES: usize = 240;
/// `wq` size in bytes.
pub const WQ_SZ_BYTES: usize = 192;

/// `create_mkey_in.opcode`.
pub const CREATE_MKEY_IN_OPCODE: Field = Field::new(0x0, 16);
/// `create_mkey_in.memory_key_mkey_entry` (the mkey context, `mkc`).
pub const CREATE_MKEY_IN_MKC: Field = Field::new(0x80, 512);
/// `create_mkey_in.translations_octword_actual_size`.
pub const CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE: Field = Field::new(0x300, 32);
/// `create_mkey_in.klm_pas_mtt`: the translation entries start here.
pub const CREATE_MKEY_IN_KLM_PAS_MTT_BYTE_OFF: usize = 0x110;
/// `create_mkey_out.mkey_index`.
pub const CREATE_MKEY_OUT_MKEY_INDEX: Field = Field::new(0x48, 24);
/// `mkc.access_mode_1_0`.
pub const MKC_ACCESS_MODE_1_0: Field = Field::new(0x16, 2);
/// `mkc.a` (remote atomic).
pub const MKC_A: Field = Field::new(0x11, 1);
/// `mkc.lw` (local write).
pub const MKC_LW: Field = Field::new(0x14, 1);
/// `mkc.rw` (remote write).
pub const MKC_RW: Field = Field::new(0x12, 1);
/// `mkc.rr` (remote read).
pub const MKC_RR: Field = Field::new(0x13, 1);
/// `mkc.qpn`.
pub const MKC_QPN: Field = Field::new(0x20, 24);
/// `mkc.mkey_7_0` (the key's variant byte).
pub const MKC_MKEY_7_0: Field = Field::new(0x38, 8);
/// `mkc.pd`.
pub const MKC_PD: Field = Field::new(0x68, 24);
/// `mkc.start_addr`.
pub const MKC_START_ADDR: Field = Field::new(0x80, 64);
/// `mkc.len`.
pub const MKC_LEN: Field = Field::new(0xc0, 64);
/// `mkc.translations_octword_size`.
pub const MKC_TRANSLATIONS_OCTWORD_SIZE: Field = Field::new(0x1a0, 32);
/// `mkc.log_entity_size`.
pub const MKC_LOG_ENTITY_SIZE: Field = Field::new(0x1db, 5);
/// `klm.mkey` (KSM entries are `klm`s of 16 bytes, `byte_count` unused).
pub const KLM_MKEY: Field = Field::new(0x20, 32);
/// `klm.address`.
pub const KLM_ADDRESS: Field = Field::new(0x40, 64);
/// `klm` size in bytes.
pub const KLM_SZ_BYTES: usize = 16;
/// `mkc.access_mode_1_0` KSM.
pub const MLX5_MKC_ACCESS_MODE_KSM: u32 = 0x3;

/// QP service types (`qpc.st`).
pub const MLX5_QPC_ST_RC: u32 = 0x0;
/// `qpc.st` DC initiator.
pub const MLX5_QPC_ST_DCI: u32 = 0x5;
/// `qpc.pm_state` migrated (the only one UCX and libmlx5 use).
pub const MLX5_QPC_PM_STATE_MIGRATED: u32 = 0x3;
/// `rmpc.state` ready.
pub const MLX5_RMPC_STATE_RDY: u32 = 0x1;
/// `wq.wq_type` linked list (receive WQEs chained through `next_wqe_index`).
pub const MLX5_WQ_TYPE_LINKED_LIST: u32 = 0x0;
/// `wq.wq_type` cyclic (receive WQEs taken in ring order).
pub const MLX5_WQ_TYPE_CYCLIC: u32 = 0x1;
/// `opt_param_mask` bits of INIT2RTR / RTR2RTS: remote read, atomic, write enable.
pub const MLX5_QP_OPTPAR_RRE: u32 = 1 << 1;
/// `opt_param_mask`: remote atomic enable.
pub const MLX5_QP_OPTPAR_RAE: u32 = 1 << 2;
/// `opt_param_mask`: remote write enable.
pub const MLX5_QP_OPTPAR_RWE: u32 = 1 << 3;
/// `qpc.state` values (QUERY_QP): reset, init, RTR, RTS, SQ error, SQ drained, error.
pub const MLX5_QPC_STATE: [(u8, u32); 7] = [(0, 0x0), (1, 0x1), (2, 0x2), (3, 0x3), (5, 0x4), (4, 0x5), (6, 0x6)];
/// Event types (`mlx5_eqe.type`, DEVX subscriptions): path migrated.
pub const MLX5_EVENT_TYPE_PATH_MIG: u16 = 0x01;
/// Communication established.
pub const MLX5_EVENT_TYPE_COMM_EST: u16 = 0x02;
/// SQ drained.
pub const MLX5_EVENT_TYPE_SQ_DRAINED: u16 = 0x03;
/// WQ catastrophic error (IB_EVENT_QP_FATAL).
pub const MLX5_EVENT_TYPE_WQ_CATAS_ERROR: u16 = 0x05;
/// Path migration failed.
pub const MLX5_EVENT_TYPE_PATH_MIG_FAILED: u16 = 0x07;
/// WQ invalid request (IB_EVENT_QP_REQ_ERR).
pub const MLX5_EVENT_TYPE_WQ_INVAL_REQ_ERROR: u16 = 0x10;
/// WQ access error (IB_EVENT_QP_ACCESS_ERR).
pub const MLX5_EVENT_TYPE_WQ_ACCESS_ERROR: u16 = 0x11;
/// SRQ catastrophic error.
pub const MLX5_EVENT_TYPE_SRQ_CATAS_ERROR: u16 = 0x12;
/// Last WQE reached on a QP attached to an SRQ (IB_EVENT_QP_LAST_WQE_REACHED).
pub const MLX5_EVENT_TYPE_SRQ_LAST_WQE: u16 = 0x13;
/// SRQ limit reached.
pub const MLX5_EVENT_TYPE_SRQ_RQ_LIMIT: u16 = 0x14;
/// DCT drained.
pub const MLX5_EVENT_TYPE_DCT_DRAINED: u16 = 0x1c;
/// DCT key violation.
pub const MLX5_EVENT_TYPE_DCT_KEY_VIOLATION: u16 = 0x1d;

// ---- Command opcodes (`mbox_in.opcode`).

/// Opcode QUERY_HCA_CAP (op_mod selects the page, see [`hca_cap_op_mod`]).
pub const MLX5_CMD_OP_QUERY_HCA_CAP: u16 = 0x100;
/// Opcode CREATE_MKEY.
pub const MLX5_CMD_OP_CREATE_MKEY: u16 = 0x200;
/// Opcode CREATE_QP (DEVX QPs: UCX's RC QPs and DCIs).
pub const MLX5_CMD_OP_CREATE_QP: u16 = 0x500;
/// Opcode RST2INIT_QP.
pub const MLX5_CMD_OP_RST2INIT_QP: u16 = 0x502;
/// Opcode INIT2RTR_QP.
pub const MLX5_CMD_OP_INIT2RTR_QP: u16 = 0x503;
/// Opcode RTR2RTS_QP.
pub const MLX5_CMD_OP_RTR2RTS_QP: u16 = 0x504;
/// Opcode 2ERR_QP.
pub const MLX5_CMD_OP_2ERR_QP: u16 = 0x507;
/// Opcode 2RST_QP.
pub const MLX5_CMD_OP_2RST_QP: u16 = 0x50a;
/// Opcode CREATE_DCT.
pub const MLX5_CMD_OP_CREATE_DCT: u16 = 0x710;
/// Opcode DRAIN_DCT.
pub const MLX5_CMD_OP_DRAIN_DCT: u16 = 0x712;
/// Opcode QUERY_HCA_VPORT_CONTEXT.
pub const MLX5_CMD_OP_QUERY_HCA_VPORT_CONTEXT: u16 = 0x762;
/// Opcode CREATE_RMP.
pub const MLX5_CMD_OP_CREATE_RMP: u16 = 0x90c;
/// Opcode INIT2INIT_QP (libmlx5: DMA MMO, QoS queue groups, drain_sigerr).
pub const MLX5_CMD_OP_INIT2INIT_QP: u16 = 0x50e;
/// Opcode RTS2RTS_QP (libmlx5: LAG port, UDP sport, DCI stream reset, QoS queue groups).
pub const MLX5_CMD_OP_RTS2RTS_QP: u16 = 0x505;
/// Opcode QUERY_QP (libmlx5: data-in-order, LAG port, SQ drain state).
pub const MLX5_CMD_OP_QUERY_QP: u16 = 0x50b;
/// Opcode QUERY_DCT (libmlx5: data-in-order of a DCT).
pub const MLX5_CMD_OP_QUERY_DCT: u16 = 0x713;
/// Opcode QUERY_LAG (libmlx5: LAG port queries).
pub const MLX5_CMD_OP_QUERY_LAG: u16 = 0x842;
/// Opcode CREATE_GENERAL_OBJECT.
pub const MLX5_CMD_OP_CREATE_GENERAL_OBJECT: u16 = 0xa00;
/// Opcode MODIFY_GENERAL_OBJECT.
pub const MLX5_CMD_OP_MODIFY_GENERAL_OBJECT: u16 = 0xa01;
/// Opcode QUERY_GENERAL_OBJECT.
pub const MLX5_CMD_OP_QUERY_GENERAL_OBJECT: u16 = 0xa02;
/// Opcode DESTROY_GENERAL_OBJECT.
pub const MLX5_CMD_OP_DESTROY_GENERAL_OBJECT: u16 = 0xa03;

// ---- Command status values (`mbox_out.status`); the errno libmlx5 maps each to is in [`cmd_status_to_errno`].

/// Command status: success.
pub const MLX5_CMD_STAT_OK: u8 = 0x0;
/// Command status: internal error (libmlx5: EIO).
pub const MLX5_CMD_STAT_INT_ERR: u8 = 0x1;
/// Command status: bad opcode (libmlx5: EINVAL).
pub const MLX5_CMD_STAT_BAD_OP_ERR: u8 = 0x2;
/// Command status: bad parameter (libmlx5: EINVAL).
pub const MLX5_CMD_STAT_BAD_PARAM_ERR: u8 = 0x3;
/// Command status: bad system state (libmlx5: EIO).
pub const MLX5_CMD_STAT_BAD_SYS_STATE_ERR: u8 = 0x4;
/// Command status: bad resource (libmlx5: EINVAL).
pub const MLX5_CMD_STAT_BAD_RES_ERR: u8 = 0x5;
/// Command status: resource busy (libmlx5: EBUSY).
pub const MLX5_CMD_STAT_RES_BUSY: u8 = 0x6;
/// Command status: limits exceeded (libmlx5: ENOMEM).
pub const MLX5_CMD_STAT_LIM_ERR: u8 = 0x8;
/// Command status: bad resource state (libmlx5: EINVAL).
pub const MLX5_CMD_STAT_BAD_RES_STATE_ERR: u8 = 0x9;
/// Command status: bad index (libmlx5: EINVAL).
pub const MLX5_CMD_STAT_IX_ERR: u8 = 0xa;
/// Command status: no resources (libmlx5: EAGAIN).
pub const MLX5_CMD_STAT_NO_RES_ERR: u8 = 0xf;
/// Command status: bad input length (libmlx5: EIO).
pub const MLX5_CMD_STAT_BAD_INP_LEN_ERR: u8 = 0x50;
/// Command status: bad output length (libmlx5: EIO).
pub const MLX5_CMD_STAT_BAD_OUTP_LEN_ERR: u8 = 0x51;
/// Command status: bad QP state (libmlx5: EINVAL).
pub const MLX5_CMD_STAT_BAD_QP_STATE_ERR: u8 = 0x10;
/// Command status: bad packet (libmlx5: EINVAL).
pub const MLX5_CMD_STAT_BAD_PKT_ERR: u8 = 0x30;
/// Command status: bad size / too many outstanding CQEs (libmlx5: EINVAL).
pub const MLX5_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR: u8 = 0x40;

// ---- QUERY_HCA_CAP op_mod: `(cap_type << 1) | current`.

/// QUERY_HCA_CAP op_mod bit 0 clear: maximum (supported) capabilities.
pub const HCA_CAP_OPMOD_GET_MAX: u16 = 0;
/// QUERY_HCA_CAP op_mod bit 0 set: current capabilities (what libmlx5 always asks for).
pub const HCA_CAP_OPMOD_GET_CUR: u16 = 1;
/// Capability type: general device (`cmd_hca_cap`).
pub const MLX5_CAP_GENERAL: u16 = 0;
/// Capability type: on-demand paging (`odp_cap`).
pub const MLX5_CAP_ODP: u16 = 2;
/// Capability type: atomics (`atomic_caps`).
pub const MLX5_CAP_ATOMIC: u16 = 3;
/// op_mod (cap type << 1) of the general device page.
pub const MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE: u16 = 0x0;
/// op_mod (cap type << 1) of the RoCE page.
pub const MLX5_SET_HCA_CAP_OP_MOD_ROCE: u16 = 0x8;
/// op_mod (cap type << 1) of the NIC flow table page.
pub const MLX5_SET_HCA_CAP_OP_MOD_NIC_FLOW_TABLE: u16 = 0xe;
/// op_mod (cap type << 1) of the e-switch flow table page.
pub const MLX5_SET_HCA_CAP_OP_MOD_ESW_FLOW_TABLE: u16 = 0x10;
/// op_mod (cap type << 1) of the QoS page.
pub const MLX5_SET_HCA_CAP_OP_MOD_QOS: u16 = 0x18;
/// op_mod (cap type << 1) of the e-switch page.
pub const MLX5_SET_HCA_CAP_OP_MOD_ESW: u16 = 0x12;
/// op_mod (cap type << 1) of the device memory page.
pub const MLX5_SET_HCA_CAP_OP_MOD_DEVICE_MEMORY: u16 = 0x1e;
/// op_mod (cap type << 1) of the crypto page.
pub const MLX5_SET_HCA_CAP_OP_MOD_CRYPTO: u16 = 0x34;
/// op_mod (cap type << 1) of the general device page 2.
pub const MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE_CAP_2: u16 = 0x40;
/// op_mod (cap type << 1) of the ODP page; libmlx5 writes it as `MLX5_CAP_ODP << 1` (no ifc.h name).
pub const MLX5_SET_HCA_CAP_OP_MOD_ODP: u16 = MLX5_CAP_ODP << 1;
/// op_mod (cap type << 1) of the atomic page; libmlx5 writes it as `MLX5_CAP_ATOMIC << 1` (no ifc.h name).
pub const MLX5_SET_HCA_CAP_OP_MOD_ATOMIC: u16 = MLX5_CAP_ATOMIC << 1;

// ---- General object types (`general_obj_in_cmd_hdr.obj_type`, bit numbers of `cmd_hca_cap.general_obj_types`).

/// General object type DEK; libmlx5 checks bit 12 of `general_obj_types`.
pub const MLX5_OBJ_TYPE_DEK: u16 = 0xc;
/// General object type CRYPTO_LOGIN; libmlx5 checks its bit of `general_obj_types`.
pub const MLX5_OBJ_TYPE_CRYPTO_LOGIN: u16 = 0x1f;
/// General object type HEADER_MODIFY_ARGUMENT (DR checks its bit).
pub const MLX5_OBJ_TYPE_HEADER_MODIFY_ARGUMENT: u16 = 0x23;
/// General object type SCHEDULING_ELEMENT (mlx5dv_sched_*).
pub const MLX5_OBJ_TYPE_SCHEDULING_ELEMENT: u16 = 0x26;
/// General object type RESERVED_QPN; libmlx5 checks its bit of `general_obj_types`.
pub const MLX5_OBJ_TYPE_RESERVED_QPN: u16 = 0x2c;
/// General object type AV_QP_MAPPING; libmlx5 checks its bit of `general_obj_types`.
pub const MLX5_OBJ_TYPE_AV_QP_MAPPING: u16 = 0x3a;

// ---- Modify-QP optional parameter masks.

/// `opt_param_mask_95_32` bit: `qpc_ext.dci_stream_channel_id` is valid.
pub const MLX5_QPC_OPT_MASK_32_DCI_STREAM_CHANNEL_ID: u64 = 0x1;
/// `opt_param_mask_95_32` bit: `qpc_ext.qos_queue_group_id_*` are valid.
pub const MLX5_QPC_OPT_MASK_32_QOS_QUEUE_GROUP_ID: u64 = 0x2;
/// `opt_param_mask_95_32` bit: `qpc.primary_address_path.udp_sport` is valid.
pub const MLX5_QPC_OPT_MASK_32_UDP_SPORT: u64 = 0x4;
/// `opt_param_mask_95_32` bit: `qpc_ext.mmo` is valid (INIT2INIT).
pub const MLX5_QPC_OPT_MASK_32_INIT2INIT_MMO: u64 = 0x8;
/// `opt_param_mask` bit: `qpc.drain_sigerr` is valid (INIT2INIT).
pub const MLX5_QPC_OPT_MASK_INIT2INIT_DRAIN_SIGERR: u32 = 0x800;
/// `opt_param_mask` bit: `qpc.lag_tx_port_affinity` is valid (RTS2RTS).
pub const MLX5_QPC_OPT_MASK_RTS2RTS_LAG_TX_PORT_AFFINITY: u32 = 0x8000;

// ---- Other values.

/// `qpc.state` value SQ drained (the only state libmlx5 compares against).
pub const MLX5_QPC_STATE_SQDRAINED: u8 = 5;
/// `crypto_caps.wrapped_import_method` bit: AES-XTS wrapped import.
pub const MLX5_CRYPTO_CAPS_WRAPPED_IMPORT_METHOD_AES: u32 = 4;

// ---- Helpers around the numeric values.

/// QUERY_HCA_CAP op_mod for capability type `cap_type` (`MLX5_CAP_*`), current or maximum values.
pub const fn hca_cap_op_mod(cap_type: u16, current: bool) -> u16 {
    (cap_type << 1) | current as u16
}

/// Capability type (`MLX5_CAP_*` numbering) requested by a QUERY_HCA_CAP op_mod.
pub const fn hca_cap_type(op_mod: u16) -> u16 {
    op_mod >> 1
}

/// Whether a QUERY_HCA_CAP op_mod asks for current (rather than maximum) capabilities.
pub const fn hca_cap_is_current(op_mod: u16) -> bool {
    op_mod & HCA_CAP_OPMOD_GET_CUR != 0
}

/// The errno libmlx5 derives from a command status (`mlx5_cmd_status_to_err`, same in 44 and 59).
pub fn cmd_status_to_errno(status: u8) -> i32 {
    match status {
        MLX5_CMD_STAT_OK => 0,
        MLX5_CMD_STAT_RES_BUSY => libc::EBUSY,
        MLX5_CMD_STAT_LIM_ERR => libc::ENOMEM,
        MLX5_CMD_STAT_NO_RES_ERR => libc::EAGAIN,
        MLX5_CMD_STAT_BAD_OP_ERR
        | MLX5_CMD_STAT_BAD_PARAM_ERR
        | MLX5_CMD_STAT_BAD_RES_ERR
        | MLX5_CMD_STAT_BAD_RES_STATE_ERR
        | MLX5_CMD_STAT_IX_ERR
        | MLX5_CMD_STAT_BAD_QP_STATE_ERR
        | MLX5_CMD_STAT_BAD_PKT_ERR
        | MLX5_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR => libc::EINVAL,
        // INT_ERR, BAD_SYS_STATE_ERR, BAD_INP_LEN_ERR, BAD_OUTP_LEN_ERR and anything unknown.
        _ => libc::EIO,
    }
}

/// libmlx5's errno for a failed DEVX call (`mlx5_get_cmd_status_err`): EREMOTEIO -> `out` status, else `err`.
// So a firmware-level failure must reach libmlx5 as EREMOTEIO with status/syndrome in the output mailbox.
pub fn libmlx5_cmd_errno(err: i32, out: &[u8]) -> i32 {
    if err == libc::EREMOTEIO {
        cmd_status_to_errno(get(out, MBOX_OUT_STATUS) as u8)
    } else {
        err
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit `i` of `buf` in PRM order (bit 0 is the MSB of byte 0).
    fn bit(buf: &[u8], i: usize) -> bool {
        buf[i / 8] & (0x80 >> (i % 8)) != 0
    }

    /// Sets `f` to `v` in a patterned buffer and checks every bit: the field's bits hold `v` (MSB first),
    /// every other bit is unchanged.
    fn check_only_field_changes(f: Field, v: u64) {
        for fill in [0x00u8, 0xff, 0xa5] {
            let before: Vec<u8> = (0..64).map(|i| fill ^ (i as u8).wrapping_mul(17)).collect();
            let mut buf = before.clone();
            if f.bits == 64 {
                set64(&mut buf, f, v);
            } else {
                set(&mut buf, f, v as u32);
            }
            for i in 0..buf.len() * 8 {
                if (f.bit_off..f.bit_off + f.bits).contains(&i) {
                    let want = (v >> (f.bits - 1 - (i - f.bit_off))) & 1 == 1;
                    assert_eq!(bit(&buf, i), want, "field bit {i} of {f:?}");
                } else {
                    assert_eq!(bit(&buf, i), bit(&before, i), "neighbour bit {i} of {f:?}");
                }
            }
        }
    }

    #[test]
    fn round_trips() {
        let mut buf = [0u8; 64];
        for (f, v) in [
            (Field::new(0x122, 1), 1u32),
            (Field::new(0x4, 4), 0xa),
            (Field::new(0x3c, 4), 0x5),
            (Field::new(0x30, 16), 0xbeef),
            (Field::new(0x48, 24), 0x12_3456),
            (Field::new(0x40, 32), 0xdead_beef),
            (Field::new(0x63, 5), 0x15),
        ] {
            set(&mut buf, f, v);
            assert_eq!(get(&buf, f), v, "{f:?}");
        }
        let f64 = Field::new(0x100, 64);
        set64(&mut buf, f64, 0x0123_4567_89ab_cdef);
        assert_eq!(get64(&buf, f64), 0x0123_4567_89ab_cdef);
    }

    #[test]
    fn set_leaves_neighbours_alone() {
        for (f, v) in [
            (Field::new(0x122, 1), 1u64),
            (Field::new(0x122, 1), 0),
            (Field::new(0x4, 4), 0x9),
            (Field::new(0x30, 16), 0x8001),
            (Field::new(0x48, 24), 0x80_0001),
            (Field::new(0x40, 32), 0x8000_0001),
            (Field::new(0x63, 5), 0x11),
            (Field::new(0x100, 64), 0x8000_0000_0000_0001),
        ] {
            check_only_field_changes(f, v);
        }
    }

    #[test]
    fn set_drops_bits_above_the_width() {
        let mut buf = [0u8; 8];
        set(&mut buf, Field::new(0x4, 4), 0xff);
        assert_eq!(buf, [0x0f, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(get(&buf, Field::new(0x4, 4)), 0xf);
    }

    #[test]
    fn short_buffers_and_bad_shapes_do_not_panic() {
        let mut short = [0xffu8; 6];
        assert_eq!(get(&short, QUERY_HCA_CAP_IN_OP_MOD), 0);
        set(&mut short, QUERY_HCA_CAP_IN_OP_MOD, 0);
        assert_eq!(short, [0xff; 6]);
        assert_eq!(get64(&short, Field::new(0, 64)), 0);
        set64(&mut short, Field::new(0, 64), 0);
        assert_eq!(short, [0xff; 6]);
        assert!(addr_of(&short, QUERY_HCA_CAP_OUT_CAPABILITY).is_empty());
        assert!(addr_of_mut(&mut short, QUERY_HCA_CAP_OUT_CAPABILITY).is_empty());
        // Wider than a dword, or crossing one: not something DEVX_GET/DEVX_SET can express.
        assert_eq!(get(&[0xff; 16], Field::new(0, 33)), 0);
        assert_eq!(get(&[0xff; 16], Field::new(0x1c, 8)), 0);
        assert_eq!(get(&[0xff; 16], Field::new(0, 0)), 0);
        assert_eq!(get(&[0xff; 16], Field::new(usize::MAX - 3, 1)), 0);
        assert_eq!(get64(&[0xff; 16], Field::new(usize::MAX - 3, 64)), 0);
        assert!(addr_of(&[0xff; 16], Field::new(usize::MAX - 3, 128)).is_empty());
    }

    #[test]
    fn every_field_fits_its_layout() {
        for &(name, f, layout_bytes) in ALL_FIELDS {
            assert!(f.bit_off + f.bits <= layout_bytes * 8, "{name} overruns its layout");
            if f.bits == 64 {
                assert_eq!(f.bit_off % 64, 0, "{name}: DEVX_GET64 needs qword alignment");
            } else if f.bits <= 32 {
                assert!(f.bit_off % 32 + f.bits <= 32, "{name} crosses a dword");
            } else {
                assert_eq!(f.bit_off % 8, 0, "{name}: nested layout not byte-aligned");
                assert_eq!(f.bits % 8, 0, "{name}: nested layout not whole bytes");
            }
        }
    }

    #[test]
    fn command_headers_at_known_bytes() {
        let mut b = [0u8; QUERY_HCA_CAP_IN_SZ_BYTES];
        set(&mut b, QUERY_HCA_CAP_IN_OPCODE, u32::from(MLX5_CMD_OP_QUERY_HCA_CAP));
        set(
            &mut b,
            QUERY_HCA_CAP_IN_OP_MOD,
            u32::from(hca_cap_op_mod(MLX5_CAP_ODP, true)),
        );
        assert_eq!(b, [0x01, 0x00, 0, 0, 0, 0, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0, 0]);

        let mut out = vec![0u8; QUERY_HCA_CAP_OUT_SZ_BYTES];
        out[0] = 0x03;
        out[4..8].copy_from_slice(&0x1234_5678u32.to_be_bytes());
        assert_eq!(get(&out, QUERY_HCA_CAP_OUT_STATUS), 3);
        assert_eq!(get(&out, QUERY_HCA_CAP_OUT_SYNDROME), 0x1234_5678);
        assert_eq!(get(&out, MBOX_OUT_STATUS), 3);
        assert_eq!(
            QUERY_HCA_CAP_OUT_CAPABILITY.byte_off(),
            QUERY_HCA_CAP_OUT_CAPABILITY_BYTE_OFF
        );
        assert_eq!(
            addr_of(&out, QUERY_HCA_CAP_OUT_CAPABILITY).len(),
            HCA_CAP_UNION_SZ_BYTES
        );
        // qpc_extension is bit 0x122 of the page: byte 0x24, mask 0x20.
        set(&mut out, cap(CMD_HCA_CAP_QPC_EXTENSION), 1);
        assert_eq!(out[16 + 0x24], 0x20);
        set64(
            &mut out,
            cap(CMD_HCA_CAP_GENERAL_OBJ_TYPES),
            1 << MLX5_OBJ_TYPE_AV_QP_MAPPING,
        );
        assert_eq!(out[16 + 0x80..16 + 0x88], [0x04, 0, 0, 0, 0, 0, 0, 0]);
        set(&mut out, cap(ODP_CAP_DC_ODP_CAPS_SRQ_RECEIVE), 1);
        assert_eq!(out[16 + 0x20], 0x04);

        let mut g = [0u8; GENERAL_OBJ_IN_CMD_HDR_SZ_BYTES];
        set(
            &mut g,
            GENERAL_OBJ_IN_CMD_HDR_OPCODE,
            u32::from(MLX5_CMD_OP_DESTROY_GENERAL_OBJECT),
        );
        set(
            &mut g,
            GENERAL_OBJ_IN_CMD_HDR_OBJ_TYPE,
            u32::from(MLX5_OBJ_TYPE_AV_QP_MAPPING),
        );
        set(&mut g, GENERAL_OBJ_IN_CMD_HDR_OBJ_ID, 0xa1b2_c3d4);
        assert_eq!(g[..12], [0x0a, 0x03, 0, 0, 0, 0, 0x00, 0x3a, 0xa1, 0xb2, 0xc3, 0xd4]);
        let mut go = [0u8; GENERAL_OBJ_OUT_CMD_HDR_SZ_BYTES];
        go[8..12].copy_from_slice(&[0, 0, 0x12, 0x34]);
        assert_eq!(get(&go, GENERAL_OBJ_OUT_CMD_HDR_OBJ_ID), 0x1234);

        let mut m = vec![0u8; RTS2RTS_QP_IN_SZ_BYTES];
        set(&mut m, RTS2RTS_QP_IN_OPCODE, u32::from(MLX5_CMD_OP_RTS2RTS_QP));
        set(&mut m, RTS2RTS_QP_IN_QPC_EXT, 1);
        set(&mut m, RTS2RTS_QP_IN_QPN, 0x00ab_cdef);
        set64(
            &mut m,
            RTS2RTS_QP_IN_OPT_PARAM_MASK_95_32,
            MLX5_QPC_OPT_MASK_32_DCI_STREAM_CHANNEL_ID,
        );
        set(
            &mut m,
            QPC_EXT_DCI_STREAM_CHANNEL_ID.within(RTS2RTS_QP_IN_QPC_DATA_EXT),
            0x0102,
        );
        assert_eq!(m[..2], [0x05, 0x05]);
        assert_eq!(m[8..12], [0x80, 0xab, 0xcd, 0xef]);
        assert_eq!(m[0x108..0x110], [0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(m[0x110..0x114], [0, 0, 0x01, 0x02]);

        let mut q = [0u8; QUERY_QP_IN_SZ_BYTES];
        set(&mut q, QUERY_QP_IN_QPN, 0x12_3456);
        assert_eq!(q[8..12], [0, 0x12, 0x34, 0x56]);
        let mut qo = vec![0u8; QUERY_QP_OUT_SZ_BYTES];
        set(
            &mut qo,
            QPC_STATE.within(QUERY_QP_OUT_QPC),
            u32::from(MLX5_QPC_STATE_SQDRAINED),
        );
        assert_eq!(qo[0x18], 0x50);
        assert_eq!(
            QPC_DATA_IN_ORDER.within(QUERY_QP_OUT_QPC),
            QUERY_QP_OUT_QPC_DATA_IN_ORDER
        );

        let mut av = [0u8; CREATE_AV_QP_MAPPING_IN_SZ_BYTES];
        set(&mut av, CREATE_AV_QP_MAPPING_IN_MAPPING_QPN, 0x77);
        addr_of_mut(
            &mut av,
            CREATE_AV_QP_MAPPING_IN_MAPPING_REMOTE_ADDRESS_VECTOR_RGID_OR_RIP,
        )
        .fill(0xee);
        assert_eq!(av[0x1c..0x20], [0, 0, 0, 0x77]);
        assert!(av[0x40..0x50].iter().all(|&b| b == 0xee));
        assert_eq!(
            AV_QP_MAPPING_QPN.within(CREATE_AV_QP_MAPPING_IN_MAPPING),
            CREATE_AV_QP_MAPPING_IN_MAPPING_QPN
        );
    }

    #[test]
    fn layout_sizes() {
        assert_eq!(MBOX_IN_SZ_BYTES, 16);
        assert_eq!(MBOX_OUT_SZ_BYTES, 16);
        assert_eq!(QUERY_HCA_CAP_IN_SZ_BYTES, 16);
        assert_eq!(HCA_CAP_UNION_SZ_BYTES, 4096);
        assert_eq!(QUERY_HCA_CAP_OUT_SZ_BYTES, 16 + 4096);
        assert_eq!(QUERY_HCA_CAP_OUT_CAPABILITY_BYTE_OFF, 16);
        assert_eq!(CMD_HCA_CAP_SZ_BYTES, 256);
        assert_eq!(ODP_CAP_SZ_BYTES, 256);
        assert_eq!(ATOMIC_CAPS_SZ_BYTES, 256);
        assert_eq!(GENERAL_OBJ_IN_CMD_HDR_SZ_BYTES, 16);
        assert_eq!(GENERAL_OBJ_OUT_CMD_HDR_SZ_BYTES, 16);
        assert_eq!(QPC_SZ_BYTES, 232);
        assert_eq!(QPC_EXT_SZ_BYTES, 192);
        assert_eq!(RTS2RTS_QP_IN_SZ_BYTES, 464);
        assert_eq!(INIT2INIT_QP_IN_SZ_BYTES, RTS2RTS_QP_IN_SZ_BYTES);
        assert_eq!(RTS2RTS_QP_OUT_SZ_BYTES, 16);
        assert_eq!(QUERY_QP_IN_SZ_BYTES, 16);
        assert_eq!(QUERY_QP_OUT_SZ_BYTES, 272);
        assert_eq!(QUERY_DCT_OUT_SZ_BYTES, 128);
        assert_eq!(QUERY_LAG_OUT_SZ_BYTES, 16);
        assert_eq!(AV_QP_MAPPING_SZ_BYTES, 64);
        assert_eq!(CREATE_AV_QP_MAPPING_IN_SZ_BYTES, 80);
        assert_eq!(UD_AV_SZ_BYTES, 48);
    }

    #[test]
    fn op_mod_and_errno() {
        assert_eq!(
            hca_cap_op_mod(MLX5_CAP_GENERAL, true),
            MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE | HCA_CAP_OPMOD_GET_CUR
        );
        assert_eq!(hca_cap_op_mod(MLX5_CAP_ODP, true), 5);
        assert_eq!(hca_cap_op_mod(MLX5_CAP_ATOMIC, false), MLX5_SET_HCA_CAP_OP_MOD_ATOMIC);
        assert_eq!(hca_cap_type(MLX5_SET_HCA_CAP_OP_MOD_QOS | 1), 0xc);
        assert!(hca_cap_is_current(
            MLX5_SET_HCA_CAP_OP_MOD_CRYPTO | HCA_CAP_OPMOD_GET_CUR
        ));
        assert!(!hca_cap_is_current(MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE_CAP_2));
        assert_eq!(cmd_status_to_errno(MLX5_CMD_STAT_OK), 0);
        assert_eq!(cmd_status_to_errno(MLX5_CMD_STAT_BAD_PARAM_ERR), libc::EINVAL);
        assert_eq!(cmd_status_to_errno(MLX5_CMD_STAT_BAD_OP_ERR), libc::EINVAL);
        assert_eq!(cmd_status_to_errno(MLX5_CMD_STAT_NO_RES_ERR), libc::EAGAIN);
        assert_eq!(cmd_status_to_errno(MLX5_CMD_STAT_LIM_ERR), libc::ENOMEM);
        assert_eq!(cmd_status_to_errno(0x7f), libc::EIO);
        let mut out = [0u8; MBOX_OUT_SZ_BYTES];
        set(&mut out, MBOX_OUT_STATUS, u32::from(MLX5_CMD_STAT_RES_BUSY));
        assert_eq!(libmlx5_cmd_errno(libc::EREMOTEIO, &out), libc::EBUSY);
        assert_eq!(libmlx5_cmd_errno(libc::EOPNOTSUPP, &out), libc::EOPNOTSUPP);
    }
}
