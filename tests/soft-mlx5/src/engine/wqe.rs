//! Send and receive WQEs as libmlx5 writes them (mlx5dv.h segment layouts), decoded.
//!
//! A send WQE is a ctrl segment, then per transport and opcode a datagram segment (DC/UD, the
//! 48-byte extended address vector), a remote-address segment (RDMA, atomics), an atomic
//! segment, then data: pointer segments or one inline segment. `ds` counts 16-byte units; the
//! WQE may wrap from the end of the send ring to its start.

use crate::device::objects::Ring;
use crate::mem::Dma;

/// MLX5_OPCODE_* send opcodes the device executes.
pub mod opcode {
    /// NOP.
    pub const NOP: u8 = 0x00;
    /// Send with invalidate (the responder invalidates the R_Key in `imm`).
    pub const SEND_INVAL: u8 = 0x01;
    /// RDMA write.
    pub const RDMA_WRITE: u8 = 0x08;
    /// RDMA write with immediate.
    pub const RDMA_WRITE_IMM: u8 = 0x09;
    /// Send.
    pub const SEND: u8 = 0x0a;
    /// Send with immediate.
    pub const SEND_IMM: u8 = 0x0b;
    /// RDMA read.
    pub const RDMA_READ: u8 = 0x10;
    /// Compare and swap.
    pub const ATOMIC_CS: u8 = 0x11;
    /// Fetch and add.
    pub const ATOMIC_FA: u8 = 0x12;
    /// User-mode memory registration: libmlx5 binds and unbinds memory windows with it.
    pub const UMR: u8 = 0x25;
}

/// fm_ce_se: MLX5_WQE_CTRL_CQ_UPDATE.
pub const CTRL_CQ_UPDATE: u8 = 2 << 2;
/// fm_ce_se: MLX5_WQE_CTRL_SOLICITED.
pub const CTRL_SOLICITED: u8 = 1 << 1;
/// fm_ce_se: MLX5_WQE_CTRL_FENCE, fence mode 4 in bits 7:5 (libmlx5 sets it for
/// IBV_SEND_FENCE): the WQE waits for every earlier RDMA read and atomic of the send queue.
pub const CTRL_FENCE: u8 = 4 << 5;
/// byte_count flag of an inline segment (MLX5_INLINE_SEG).
pub const INLINE_SEG: u32 = 0x8000_0000;
/// dqp_dct flag of an extended address vector (MLX5_EXTENDED_UD_AV).
pub const EXTENDED_UD_AV: u32 = 0x8000_0000;
/// lkey that ends a receive scatter list early (MLX5_INVALID_LKEY).
pub const INVALID_LKEY: u32 = 0x100;

/// Byte offsets and sizes of the segment fields the decoders read, as mlx5dv.h lays them out
/// (struct mlx5_wqe_ctrl_seg, mlx5_wqe_av, mlx5_wqe_raddr_seg, mlx5_wqe_atomic_seg,
/// mlx5_wqe_data_seg, mlx5_wqe_inl_data_seg, mlx5_wqe_srq_next_seg); `SEGMENT_LAYOUT` lists them
/// for the test that compares them with the C compiler's answer on the real header.
pub mod layout {
    /// mlx5_wqe_ctrl_seg.opmod_idx_opcode.
    pub const CTRL_OPMOD_IDX_OPCODE: usize = 0;
    /// mlx5_wqe_ctrl_seg.qpn_ds.
    pub const CTRL_QPN_DS: usize = 4;
    /// mlx5_wqe_ctrl_seg.signature.
    pub const CTRL_SIGNATURE: usize = 8;
    /// mlx5_wqe_ctrl_seg.dci_stream_channel_id (the struct is packed: byte 9).
    pub const CTRL_DCI_STREAM_CHANNEL_ID: usize = 9;
    /// mlx5_wqe_ctrl_seg.fm_ce_se.
    pub const CTRL_FM_CE_SE: usize = 11;
    /// mlx5_wqe_ctrl_seg.imm.
    pub const CTRL_IMM: usize = 12;
    /// sizeof(struct mlx5_wqe_ctrl_seg).
    pub const CTRL_SIZE: usize = 16;
    /// mlx5_wqe_av.key (dc_key, or qkey in the high word).
    pub const AV_KEY: usize = 0;
    /// mlx5_wqe_av.dqp_dct.
    pub const AV_DQP_DCT: usize = 8;
    /// mlx5_wqe_av.stat_rate_sl.
    pub const AV_STAT_RATE_SL: usize = 12;
    /// mlx5_wqe_av.rlid.
    pub const AV_RLID: usize = 14;
    /// mlx5_wqe_av.tclass.
    pub const AV_TCLASS: usize = 26;
    /// mlx5_wqe_av.hop_limit.
    pub const AV_HOP_LIMIT: usize = 27;
    /// mlx5_wqe_av.grh_gid_fl.
    pub const AV_GRH_GID_FL: usize = 28;
    /// mlx5_wqe_av.rgid.
    pub const AV_RGID: usize = 32;
    /// sizeof(struct mlx5_wqe_av) (the extended address vector).
    pub const AV_SIZE: usize = 48;
    /// The compact address vector without the GRH part (dqp_dct without MLX5_EXTENDED_UD_AV).
    pub const AV_COMPACT_SIZE: usize = 16;
    /// mlx5_wqe_raddr_seg.raddr.
    pub const RADDR_RADDR: usize = 0;
    /// mlx5_wqe_raddr_seg.rkey.
    pub const RADDR_RKEY: usize = 8;
    /// sizeof(struct mlx5_wqe_raddr_seg).
    pub const RADDR_SIZE: usize = 16;
    /// mlx5_wqe_atomic_seg.swap_add.
    pub const ATOMIC_SWAP_ADD: usize = 0;
    /// mlx5_wqe_atomic_seg.compare.
    pub const ATOMIC_COMPARE: usize = 8;
    /// sizeof(struct mlx5_wqe_atomic_seg).
    pub const ATOMIC_SIZE: usize = 16;
    /// mlx5_wqe_data_seg.byte_count.
    pub const DATA_BYTE_COUNT: usize = 0;
    /// mlx5_wqe_data_seg.lkey.
    pub const DATA_LKEY: usize = 4;
    /// mlx5_wqe_data_seg.addr.
    pub const DATA_ADDR: usize = 8;
    /// sizeof(struct mlx5_wqe_data_seg).
    pub const DATA_SIZE: usize = 16;
    /// mlx5_wqe_inl_data_seg.byte_count.
    pub const INL_BYTE_COUNT: usize = 0;
    /// sizeof(struct mlx5_wqe_inl_data_seg): the inline bytes follow it.
    pub const INL_SIZE: usize = 4;
    /// mlx5_wqe_srq_next_seg.next_wqe_index.
    pub const SRQ_NEXT_WQE_INDEX: usize = 2;
    /// sizeof(struct mlx5_wqe_srq_next_seg): the scatter list of an SRQ WQE follows it.
    pub const SRQ_NEXT_SIZE: usize = 16;

    /// mlx5_wqe_umr_ctrl_seg.flags.
    pub const UMR_FLAGS: usize = 0;
    /// mlx5_wqe_umr_ctrl_seg.klm_octowords.
    pub const UMR_KLM_OCTOWORDS: usize = 4;
    /// mlx5_wqe_umr_ctrl_seg.mkey_mask.
    pub const UMR_MKEY_MASK: usize = 8;
    /// sizeof(struct mlx5_wqe_umr_ctrl_seg).
    pub const UMR_CTRL_SIZE: usize = 48;
    /// mlx5_wqe_mkey_context_seg.free.
    pub const MKEY_FREE: usize = 0;
    /// mlx5_wqe_mkey_context_seg.access_flags.
    pub const MKEY_ACCESS_FLAGS: usize = 2;
    /// mlx5_wqe_mkey_context_seg.qpn_mkey.
    pub const MKEY_QPN_MKEY: usize = 4;
    /// mlx5_wqe_mkey_context_seg.start_addr.
    pub const MKEY_START_ADDR: usize = 16;
    /// mlx5_wqe_mkey_context_seg.len.
    pub const MKEY_LEN: usize = 24;
    /// sizeof(struct mlx5_wqe_mkey_context_seg).
    pub const MKEY_SIZE: usize = 64;
    /// mlx5_wqe_umr_klm_seg.byte_count.
    pub const KLM_BYTE_COUNT: usize = 0;
    /// mlx5_wqe_umr_klm_seg.mkey.
    pub const KLM_MKEY: usize = 4;
    /// mlx5_wqe_umr_klm_seg.address.
    pub const KLM_ADDRESS: usize = 8;
    /// sizeof(struct mlx5_wqe_umr_klm_seg).
    pub const KLM_SIZE: usize = 16;

    /// (C struct, member or "sizeof", value) for every constant above that C can state.
    pub const SEGMENT_LAYOUT: &[(&str, &str, usize)] = &[
        ("mlx5_wqe_ctrl_seg", "opmod_idx_opcode", CTRL_OPMOD_IDX_OPCODE),
        ("mlx5_wqe_ctrl_seg", "qpn_ds", CTRL_QPN_DS),
        ("mlx5_wqe_ctrl_seg", "signature", CTRL_SIGNATURE),
        ("mlx5_wqe_ctrl_seg", "dci_stream_channel_id", CTRL_DCI_STREAM_CHANNEL_ID),
        ("mlx5_wqe_ctrl_seg", "fm_ce_se", CTRL_FM_CE_SE),
        ("mlx5_wqe_ctrl_seg", "imm", CTRL_IMM),
        ("mlx5_wqe_ctrl_seg", "sizeof", CTRL_SIZE),
        ("mlx5_wqe_av", "key", AV_KEY),
        ("mlx5_wqe_av", "key.dc_key", AV_KEY),
        ("mlx5_wqe_av", "dqp_dct", AV_DQP_DCT),
        ("mlx5_wqe_av", "stat_rate_sl", AV_STAT_RATE_SL),
        ("mlx5_wqe_av", "rlid", AV_RLID),
        ("mlx5_wqe_av", "tclass", AV_TCLASS),
        ("mlx5_wqe_av", "hop_limit", AV_HOP_LIMIT),
        ("mlx5_wqe_av", "grh_gid_fl", AV_GRH_GID_FL),
        ("mlx5_wqe_av", "rgid", AV_RGID),
        ("mlx5_wqe_av", "sizeof", AV_SIZE),
        ("mlx5_wqe_datagram_seg", "sizeof", AV_SIZE),
        ("mlx5_wqe_raddr_seg", "raddr", RADDR_RADDR),
        ("mlx5_wqe_raddr_seg", "rkey", RADDR_RKEY),
        ("mlx5_wqe_raddr_seg", "sizeof", RADDR_SIZE),
        ("mlx5_wqe_atomic_seg", "swap_add", ATOMIC_SWAP_ADD),
        ("mlx5_wqe_atomic_seg", "compare", ATOMIC_COMPARE),
        ("mlx5_wqe_atomic_seg", "sizeof", ATOMIC_SIZE),
        ("mlx5_wqe_data_seg", "byte_count", DATA_BYTE_COUNT),
        ("mlx5_wqe_data_seg", "lkey", DATA_LKEY),
        ("mlx5_wqe_data_seg", "addr", DATA_ADDR),
        ("mlx5_wqe_data_seg", "sizeof", DATA_SIZE),
        ("mlx5_wqe_inl_data_seg", "byte_count", INL_BYTE_COUNT),
        ("mlx5_wqe_inl_data_seg", "sizeof", INL_SIZE),
        ("mlx5_wqe_srq_next_seg", "next_wqe_index", SRQ_NEXT_WQE_INDEX),
        ("mlx5_wqe_srq_next_seg", "sizeof", SRQ_NEXT_SIZE),
        ("mlx5_wqe_umr_ctrl_seg", "flags", UMR_FLAGS),
        ("mlx5_wqe_umr_ctrl_seg", "klm_octowords", UMR_KLM_OCTOWORDS),
        ("mlx5_wqe_umr_ctrl_seg", "mkey_mask", UMR_MKEY_MASK),
        ("mlx5_wqe_umr_ctrl_seg", "sizeof", UMR_CTRL_SIZE),
        ("mlx5_wqe_mkey_context_seg", "free", MKEY_FREE),
        ("mlx5_wqe_mkey_context_seg", "access_flags", MKEY_ACCESS_FLAGS),
        ("mlx5_wqe_mkey_context_seg", "qpn_mkey", MKEY_QPN_MKEY),
        ("mlx5_wqe_mkey_context_seg", "start_addr", MKEY_START_ADDR),
        ("mlx5_wqe_mkey_context_seg", "len", MKEY_LEN),
        ("mlx5_wqe_mkey_context_seg", "sizeof", MKEY_SIZE),
        ("mlx5_wqe_umr_klm_seg", "byte_count", KLM_BYTE_COUNT),
        ("mlx5_wqe_umr_klm_seg", "mkey", KLM_MKEY),
        ("mlx5_wqe_umr_klm_seg", "address", KLM_ADDRESS),
        ("mlx5_wqe_umr_klm_seg", "sizeof", KLM_SIZE),
    ];
}
use layout::*;

/// An address vector (struct mlx5_wqe_av) from a datagram segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Av {
    /// dc_key (DC) or qkey in the high word (UD).
    pub key: u64,
    /// Remote DCT or QP number (low 24 bits of dqp_dct).
    pub dqpn: u32,
    /// rlid.
    pub rlid: u16,
    /// GRH present (grh_gid_fl bit 30).
    pub grh: bool,
    /// rgid.
    pub rgid: [u8; 16],
    /// hop_limit.
    pub hop_limit: u8,
    /// stat_rate_sl: the static rate (high nibble) and the service level, as libmlx5's
    /// mlx5_create_ah writes it: the SL in the low 4 bits on InfiniBand, the priority in bits
    /// 1..3 on Ethernet ([`Av::sl`]).
    pub stat_rate_sl: u8,
    /// tclass (the GRH traffic class; on RoCE v2 the IP header's DSCP and ECN bits).
    pub tclass: u8,
    /// The flow label (low 20 bits of grh_gid_fl).
    pub flow_label: u32,
}

impl Av {
    /// The service level the address vector asks for: LRH.SL on InfiniBand, the 802.1Q
    /// priority on Ethernet (mlx5_create_ah: `(sl & 0x7) << 1` there, `sl & 0xf` here).
    pub fn sl(&self, ethernet: bool) -> u8 {
        if ethernet {
            (self.stat_rate_sl >> 1) & 0x7
        } else {
            self.stat_rate_sl & 0xf
        }
    }
}

/// Where the data of a send WQE is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data {
    /// Pointer segments: (addr, byte_count, lkey).
    Sges(Vec<(u64, u32, u32)>),
    /// Inline bytes.
    Inline(Vec<u8>),
}

impl Data {
    /// Total length.
    pub fn len(&self) -> u64 {
        match self {
            Data::Sges(s) => s.iter().map(|&(_, l, _)| u64::from(l)).sum(),
            Data::Inline(b) => b.len() as u64,
        }
    }
    /// Whether there is no data.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A UMR WQE as libmlx5 writes one to bind or unbind a memory window (qp.c `set_bind_wr`:
/// the UMR control segment, the window's new mkey context, and for a bind one KLM entry; the
/// control segment's `imm` names the window by its current key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Umr {
    /// mlx5_wqe_umr_ctrl_seg.flags (MLX5_WQE_UMR_CTRL_FLAG_*).
    pub flags: u8,
    /// mlx5_wqe_umr_ctrl_seg.mkey_mask (MLX5_WQE_UMR_CTRL_MKEY_MASK_*).
    pub mkey_mask: u64,
    /// The mkey context's free bit (MLX5_WQE_MKEY_CONTEXT_FREE).
    pub free: bool,
    /// The mkey context's access flags (MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_*).
    pub access: u8,
    /// qpn_mkey: the QP number in bits 31:8, the window's next tag in 7:0.
    pub qpn_mkey: u32,
    /// Start address and length of the binding.
    pub start: u64,
    /// Length (0: an unbind).
    pub len: u64,
    /// The KLM entry: (byte_count, mkey, address); None without one (an unbind).
    pub klm: Option<(u32, u32, u64)>,
}

/// MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE: a type 2 bind needs a free window.
pub const UMR_CTRL_FLAG_CHECK_FREE: u8 = 1 << 5;
/// MLX5_WQE_MKEY_CONTEXT_FREE.
pub const MKEY_CONTEXT_FREE: u8 = 1 << 6;
/// MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC.
pub const MKEY_ACCESS_ATOMIC: u8 = 1 << 6;
/// MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE.
pub const MKEY_ACCESS_REMOTE_WRITE: u8 = 1 << 5;
/// MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ.
pub const MKEY_ACCESS_REMOTE_READ: u8 = 1 << 4;

/// A decoded send WQE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendWqe {
    /// WQE index (wqe_counter) from opmod_idx_opcode.
    pub index: u16,
    /// MLX5_OPCODE_*.
    pub opcode: u8,
    /// QP number in qpn_ds.
    pub qpn: u32,
    /// 16-byte units.
    pub ds: u8,
    /// 64-byte basic blocks the WQE occupies.
    pub bbs: u32,
    /// fm_ce_se.
    pub fm_ce_se: u8,
    /// Immediate (big-endian as posted; host order here).
    pub imm: u32,
    /// DCI stream (dci_stream_channel_id).
    pub stream: u16,
    /// Address vector (DC, UD).
    pub av: Option<Av>,
    /// Remote address and rkey.
    pub raddr: Option<(u64, u32)>,
    /// Atomic: (swap_add, compare).
    pub atomic: Option<(u64, u64)>,
    /// A memory window bind or unbind (UMR).
    pub umr: Option<Umr>,
    /// Data.
    pub data: Data,
}

impl SendWqe {
    /// Whether a successful completion is reported.
    pub fn signaled(&self) -> bool {
        self.fm_ce_se & CTRL_CQ_UPDATE != 0
    }
    /// Whether the fence mode is MLX5_WQE_CTRL_FENCE (the initiator small fence waits for
    /// local invalidations and UMRs, which this device never has in flight).
    pub fn fenced(&self) -> bool {
        self.fm_ce_se & (7 << 5) == CTRL_FENCE
    }
    /// Whether the responder must hold it in its read/atomic resources (IBA 9.4.4, 9.4.5):
    /// what max_rd_atomic and max_dest_rd_atomic count.
    pub fn reads_or_atomic(&self) -> bool {
        matches!(self.opcode, opcode::RDMA_READ | opcode::ATOMIC_CS | opcode::ATOMIC_FA)
    }
}

/// Why a WQE could not be decoded (the HCA reports a local QP operation error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// ds is 0 or larger than the ring.
    BadSize,
    /// An opcode the device does not execute.
    BadOpcode(u8),
    /// The segments do not fit in ds.
    Truncated,
}

/// Reads `len` bytes of the WQE starting `off` bytes into it, wrapping at the ring end.
fn read_wrapped(dma: &dyn Dma, ring: &Ring, start: u64, off: u64, buf: &mut [u8]) {
    let size = ring.end() - ring.base;
    let rel = (start - ring.base + off) % size;
    let first = ((size - rel) as usize).min(buf.len());
    dma.read(ring.base + rel, &mut buf[..first]);
    if first < buf.len() {
        dma.read(ring.base, &mut buf[first..]);
    }
}

/// The WQE at basic block `bb` as the device fetches it: its ds * 16 bytes (wrapping at the
/// ring end), or None when ds is 0 or larger than the ring.
pub fn raw_send(dma: &dyn Dma, ring: &Ring, bb: u32) -> Option<Vec<u8>> {
    let start = ring.entry(bb);
    let mut ctrl = [0u8; CTRL_SIZE];
    read_wrapped(dma, ring, start, 0, &mut ctrl);
    let ds = u32::from_be_bytes(ctrl[CTRL_QPN_DS..CTRL_QPN_DS + 4].try_into().ok()?) & 0x3f;
    if ds == 0 || (ds * 16).div_ceil(64) > ring.cnt {
        return None;
    }
    let mut body = vec![0u8; ds as usize * 16];
    read_wrapped(dma, ring, start, 0, &mut body);
    Some(body)
}

/// A digest of the first `bbs` basic blocks of send ring `ring` (at most the ring: from its
/// start, no wrap), to tell later whether software rewrote them.
pub fn ring_digest(dma: &dyn Dma, ring: &Ring, bbs: u32) -> u64 {
    use std::hash::Hasher;
    let mut bytes = vec![0u8; bbs.min(ring.cnt) as usize * 64];
    dma.read(ring.base, &mut bytes);
    let mut h = std::hash::DefaultHasher::new();
    h.write(&bytes);
    h.finish()
}

/// Whether send ring `ring` holds, from basic block 0, a chain of WQEs of QP `qpn` that ends
/// exactly at basic block `end` (at most the ring): each control segment names `qpn` and
/// carries the index of its own slot, and its size (ds) leads to the next.
pub fn chain_reaches(dma: &dyn Dma, ring: &Ring, qpn: u32, end: u32) -> bool {
    let mut bb = 0u32;
    while bb < end && end <= ring.cnt {
        let at = ring.entry(bb);
        let opmod_idx_opcode = dma.read_be32(at + CTRL_OPMOD_IDX_OPCODE as u64);
        let qpn_ds = dma.read_be32(at + CTRL_QPN_DS as u64);
        let ds = qpn_ds & 0x3f;
        if ds == 0 || qpn_ds >> 8 != qpn || (opmod_idx_opcode >> 8) & 0xffff != bb {
            return false;
        }
        bb += (ds * 16).div_ceil(64);
    }
    bb == end
}

/// Whether a send WQE's signature holds. libmlx5 (providers/mlx5/qp.c `wq_sig`, `calc_sig`)
/// zeroes the signature byte (ctrl byte 8), XORs the WQE's ds * 16 bytes and stores the
/// inverse there; the XOR of all the bytes, signature included, is then 0xff.
pub fn signature_ok(wqe: &[u8]) -> bool {
    wqe.iter().fold(0u8, |a, b| a ^ b) == 0xff
}

/// Decodes the send WQE at basic block `bb` of the ring; `datagram` says whether the QP's
/// transport carries an address vector (DCI, UD).
pub fn decode_send(dma: &dyn Dma, ring: &Ring, bb: u32, datagram: bool) -> Result<SendWqe, DecodeError> {
    let start = ring.entry(bb);
    let mut ctrl = [0u8; CTRL_SIZE];
    read_wrapped(dma, ring, start, 0, &mut ctrl);
    let be32 = |b: &[u8], o: usize| u32::from_be_bytes(b[o..o + 4].try_into().unwrap());
    let be64 = |b: &[u8], o: usize| u64::from_be_bytes(b[o..o + 8].try_into().unwrap());
    let opmod_idx_opcode = be32(&ctrl, CTRL_OPMOD_IDX_OPCODE);
    let qpn_ds = be32(&ctrl, CTRL_QPN_DS);
    let ds = (qpn_ds & 0x3f) as u8;
    let bbs = (u32::from(ds) * 16).div_ceil(64);
    if ds == 0 || bbs > ring.cnt {
        return Err(DecodeError::BadSize);
    }
    let mut body = vec![0u8; usize::from(ds) * 16];
    read_wrapped(dma, ring, start, 0, &mut body);
    crate::log(format_args!("WQE at bb {bb}: {}", hex(&body)));
    let opcode = (opmod_idx_opcode & 0xff) as u8;
    let mut wqe = SendWqe {
        index: ((opmod_idx_opcode >> 8) & 0xffff) as u16,
        opcode,
        qpn: qpn_ds >> 8,
        ds,
        bbs,
        fm_ce_se: ctrl[CTRL_FM_CE_SE],
        imm: be32(&ctrl, CTRL_IMM),
        stream: u16::from_be_bytes([ctrl[CTRL_DCI_STREAM_CHANNEL_ID], ctrl[CTRL_DCI_STREAM_CHANNEL_ID + 1]]),
        av: None,
        raddr: None,
        atomic: None,
        umr: None,
        data: Data::Sges(Vec::new()),
    };
    let mut off = CTRL_SIZE;
    let need = |off: usize, n: usize| {
        if off + n <= body.len() {
            Ok(())
        } else {
            Err(DecodeError::Truncated)
        }
    };
    if datagram {
        // The compact AV is read first; the GRH part only when the extended bit says it is there.
        need(off, AV_COMPACT_SIZE)?;
        let dqp_dct = be32(&body, off + AV_DQP_DCT);
        let extended = dqp_dct & EXTENDED_UD_AV != 0;
        let size = if extended { AV_SIZE } else { AV_COMPACT_SIZE };
        need(off, size)?;
        let mut a = [0u8; AV_SIZE];
        a[..size].copy_from_slice(&body[off..off + size]);
        let grh_gid_fl = be32(&a, AV_GRH_GID_FL);
        let mut rgid = [0u8; 16];
        rgid.copy_from_slice(&a[AV_RGID..AV_RGID + 16]);
        wqe.av = Some(Av {
            key: be64(&a, AV_KEY),
            dqpn: dqp_dct & 0x00ff_ffff,
            rlid: u16::from_be_bytes([a[AV_RLID], a[AV_RLID + 1]]),
            grh: grh_gid_fl & (1 << 30) != 0,
            rgid,
            hop_limit: a[AV_HOP_LIMIT],
            stat_rate_sl: a[AV_STAT_RATE_SL],
            tclass: a[AV_TCLASS],
            flow_label: grh_gid_fl & 0x000f_ffff,
        });
        // A compact (non-extended) AV is 16 bytes; libmlx5 always sets the extended bit for DC.
        off += size;
    }
    match opcode {
        opcode::RDMA_WRITE | opcode::RDMA_WRITE_IMM | opcode::RDMA_READ => {
            need(off, RADDR_SIZE)?;
            wqe.raddr = Some((be64(&body, off + RADDR_RADDR), be32(&body, off + RADDR_RKEY)));
            off += RADDR_SIZE;
        }
        opcode::ATOMIC_CS | opcode::ATOMIC_FA => {
            need(off, RADDR_SIZE + ATOMIC_SIZE)?;
            wqe.raddr = Some((be64(&body, off + RADDR_RADDR), be32(&body, off + RADDR_RKEY)));
            off += RADDR_SIZE;
            wqe.atomic = Some((be64(&body, off + ATOMIC_SWAP_ADD), be64(&body, off + ATOMIC_COMPARE)));
            off += ATOMIC_SIZE;
        }
        opcode::SEND | opcode::SEND_IMM | opcode::SEND_INVAL | opcode::NOP => {}
        opcode::UMR if !datagram => {
            need(off, UMR_CTRL_SIZE + MKEY_SIZE)?;
            let klm_octowords = u16::from_be_bytes([body[off + UMR_KLM_OCTOWORDS], body[off + UMR_KLM_OCTOWORDS + 1]]);
            let (flags, mkey_mask) = (body[off + UMR_FLAGS], be64(&body, off + UMR_MKEY_MASK));
            off += UMR_CTRL_SIZE;
            let m = off;
            off += MKEY_SIZE;
            let klm = if klm_octowords > 0 {
                need(off, usize::from(klm_octowords) * 16)?;
                let k = (
                    be32(&body, off + KLM_BYTE_COUNT),
                    be32(&body, off + KLM_MKEY),
                    be64(&body, off + KLM_ADDRESS),
                );
                Some(k)
            } else {
                None
            };
            wqe.umr = Some(Umr {
                flags,
                mkey_mask,
                free: body[m + MKEY_FREE] & MKEY_CONTEXT_FREE != 0,
                access: body[m + MKEY_ACCESS_FLAGS],
                qpn_mkey: be32(&body, m + MKEY_QPN_MKEY),
                start: be64(&body, m + MKEY_START_ADDR),
                len: be64(&body, m + MKEY_LEN),
                klm,
            });
            // No data segments follow.
            return Ok(wqe);
        }
        other => return Err(DecodeError::BadOpcode(other)),
    }
    if off < body.len() && be32(&body, off + INL_BYTE_COUNT) & INLINE_SEG != 0 {
        let len = (be32(&body, off + INL_BYTE_COUNT) & !INLINE_SEG) as usize;
        need(off + INL_SIZE, len)?;
        wqe.data = Data::Inline(body[off + INL_SIZE..off + INL_SIZE + len].to_vec());
    } else {
        let mut sges = Vec::new();
        while off + DATA_SIZE <= body.len() {
            let byte_count = be32(&body, off + DATA_BYTE_COUNT);
            let lkey = be32(&body, off + DATA_LKEY);
            let addr = be64(&body, off + DATA_ADDR);
            // libmlx5 skips zero-length SGEs when it builds the WQE; a zero byte_count here
            // would mean 2 GiB to the HCA, so only real entries are taken.
            if byte_count != 0 {
                sges.push((addr, byte_count, lkey));
            }
            off += DATA_SIZE;
        }
        wqe.data = Data::Sges(sges);
    }
    Ok(wqe)
}

/// Lower-case hex of `bytes`, 16-byte units separated by spaces (log lines, golden dumps).
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2 + bytes.len() / 16);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 && i % 16 == 0 {
            s.push(' ');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Reads the scatter list of a receive WQE: `first` bytes into the WQE are skipped (the SRQ
/// next segment); entries stop at MLX5_INVALID_LKEY or at the end of the stride.
pub fn decode_recv(dma: &dyn Dma, addr: u64, stride: u32, first: u32) -> Vec<(u64, u32, u32)> {
    let mut out = Vec::new();
    let mut off = first;
    let seg = DATA_SIZE as u32;
    while off + seg <= stride {
        let at = addr + u64::from(off);
        let byte_count = dma.read_be32(at + DATA_BYTE_COUNT as u64);
        let lkey = dma.read_be32(at + DATA_LKEY as u64);
        if lkey == INVALID_LKEY {
            break;
        }
        out.push((dma.read_be64(at + DATA_ADDR as u64), byte_count, lkey));
        off += seg;
    }
    out
}
