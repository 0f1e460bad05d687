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
}

/// fm_ce_se: MLX5_WQE_CTRL_CQ_UPDATE.
pub const CTRL_CQ_UPDATE: u8 = 2 << 2;
/// fm_ce_se: MLX5_WQE_CTRL_SOLICITED.
pub const CTRL_SOLICITED: u8 = 1 << 1;
/// byte_count flag of an inline segment (MLX5_INLINE_SEG).
pub const INLINE_SEG: u32 = 0x8000_0000;
/// dqp_dct flag of an extended address vector (MLX5_EXTENDED_UD_AV).
pub const EXTENDED_UD_AV: u32 = 0x8000_0000;
/// lkey that ends a receive scatter list early (MLX5_INVALID_LKEY).
pub const INVALID_LKEY: u32 = 0x100;

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
    /// Data.
    pub data: Data,
}

impl SendWqe {
    /// Whether a successful completion is reported.
    pub fn signaled(&self) -> bool {
        self.fm_ce_se & CTRL_CQ_UPDATE != 0
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

/// Decodes the send WQE at basic block `bb` of the ring; `datagram` says whether the QP's
/// transport carries an address vector (DCI, UD).
pub fn decode_send(dma: &dyn Dma, ring: &Ring, bb: u32, datagram: bool) -> Result<SendWqe, DecodeError> {
    let start = ring.entry(bb);
    let mut ctrl = [0u8; 16];
    read_wrapped(dma, ring, start, 0, &mut ctrl);
    let opmod_idx_opcode = u32::from_be_bytes(ctrl[0..4].try_into().unwrap());
    let qpn_ds = u32::from_be_bytes(ctrl[4..8].try_into().unwrap());
    let ds = (qpn_ds & 0x3f) as u8;
    let bbs = (u32::from(ds) * 16).div_ceil(64);
    if ds == 0 || bbs > ring.cnt {
        return Err(DecodeError::BadSize);
    }
    let mut body = vec![0u8; usize::from(ds) * 16];
    read_wrapped(dma, ring, start, 0, &mut body);
    let opcode = (opmod_idx_opcode & 0xff) as u8;
    let mut wqe = SendWqe {
        index: ((opmod_idx_opcode >> 8) & 0xffff) as u16,
        opcode,
        qpn: qpn_ds >> 8,
        ds,
        bbs,
        fm_ce_se: ctrl[11],
        imm: u32::from_be_bytes(ctrl[12..16].try_into().unwrap()),
        stream: u16::from_be_bytes([ctrl[9], ctrl[10]]),
        av: None,
        raddr: None,
        atomic: None,
        data: Data::Sges(Vec::new()),
    };
    let mut off = 16usize;
    let need = |off: usize, n: usize| {
        if off + n <= body.len() {
            Ok(())
        } else {
            Err(DecodeError::Truncated)
        }
    };
    let be32 = |b: &[u8], o: usize| u32::from_be_bytes(b[o..o + 4].try_into().unwrap());
    let be64 = |b: &[u8], o: usize| u64::from_be_bytes(b[o..o + 8].try_into().unwrap());
    if datagram {
        need(off, 48)?;
        let a = &body[off..off + 48];
        let dqp_dct = be32(a, 8);
        let grh_gid_fl = be32(a, 28);
        let mut rgid = [0u8; 16];
        rgid.copy_from_slice(&a[32..48]);
        wqe.av = Some(Av {
            key: be64(a, 0),
            dqpn: dqp_dct & 0x00ff_ffff,
            rlid: u16::from_be_bytes([a[14], a[15]]),
            grh: grh_gid_fl & (1 << 30) != 0,
            rgid,
            hop_limit: a[27],
        });
        // A compact (non-extended) AV is 16 bytes; libmlx5 always sets the extended bit for DC.
        off += if dqp_dct & EXTENDED_UD_AV != 0 { 48 } else { 16 };
    }
    match opcode {
        opcode::RDMA_WRITE | opcode::RDMA_WRITE_IMM | opcode::RDMA_READ => {
            need(off, 16)?;
            wqe.raddr = Some((be64(&body, off), be32(&body, off + 8)));
            off += 16;
        }
        opcode::ATOMIC_CS | opcode::ATOMIC_FA => {
            need(off, 32)?;
            wqe.raddr = Some((be64(&body, off), be32(&body, off + 8)));
            wqe.atomic = Some((be64(&body, off + 16), be64(&body, off + 24)));
            off += 32;
        }
        opcode::SEND | opcode::SEND_IMM | opcode::NOP => {}
        other => return Err(DecodeError::BadOpcode(other)),
    }
    if off < body.len() && be32(&body, off) & INLINE_SEG != 0 {
        let len = (be32(&body, off) & !INLINE_SEG) as usize;
        need(off + 4, len)?;
        wqe.data = Data::Inline(body[off + 4..off + 4 + len].to_vec());
    } else {
        let mut sges = Vec::new();
        while off + 16 <= body.len() {
            let byte_count = be32(&body, off);
            let lkey = be32(&body, off + 4);
            let addr = be64(&body, off + 8);
            // libmlx5 skips zero-length SGEs when it builds the WQE; a zero byte_count here
            // would mean 2 GiB to the HCA, so only real entries are taken.
            if byte_count != 0 {
                sges.push((addr, byte_count, lkey));
            }
            off += 16;
        }
        wqe.data = Data::Sges(sges);
    }
    Ok(wqe)
}

/// Reads the scatter list of a receive WQE: `first` bytes into the WQE are skipped (the SRQ
/// next segment); entries stop at MLX5_INVALID_LKEY or at the end of the stride.
pub fn decode_recv(dma: &dyn Dma, addr: u64, stride: u32, first: u32) -> Vec<(u64, u32, u32)> {
    let mut out = Vec::new();
    let mut off = first;
    while off + 16 <= stride {
        let byte_count = dma.read_be32(addr + u64::from(off));
        let lkey = dma.read_be32(addr + u64::from(off) + 4);
        if lkey == INVALID_LKEY {
            break;
        }
        out.push((dma.read_be64(addr + u64::from(off) + 8), byte_count, lkey));
        off += 16;
    }
    out
}
