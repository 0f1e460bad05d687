//! A test bench for the device model, without any preloading: a [`Device`] whose tables hold
//! the objects `src/kernel/write.rs` and `src/kernel/modify.rs` would create (same field values),
//! with rings, doorbell records and registered buffers in test-owned aligned heap memory, and
//! the library's side of the rings (posting WQEs, ringing doorbell records, polling CQEs) done
//! as libmlx5 does it.
#![allow(dead_code)]

use soft_mlx5::device::objects::{Cq, Mr, Path, Pd, Qp, QpKind, QpState, Ring, Srq};
use soft_mlx5::device::Device;
use soft_mlx5::engine;
use soft_mlx5::engine::wqe::{opcode, CTRL_CQ_UPDATE, CTRL_FENCE, EXTENDED_UD_AV, INLINE_SEG, INVALID_LKEY};
use soft_mlx5::mem::LocalDma;
use soft_mlx5::profile::Profile;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::sync::Once;
use std::time::{Duration, Instant};

/// The time scale every test runs at: IB timers shrink a thousandfold (order and counts stay).
pub const TIME_SCALE: &str = "0.001";

/// IB_ACCESS_LOCAL_WRITE.
pub const LOCAL_WRITE: u32 = 1;
/// IB_ACCESS_REMOTE_WRITE.
pub const REMOTE_WRITE: u32 = 1 << 1;
/// IB_ACCESS_REMOTE_READ.
pub const REMOTE_READ: u32 = 1 << 2;
/// IB_ACCESS_REMOTE_ATOMIC.
pub const REMOTE_ATOMIC: u32 = 1 << 3;
/// Everything a target buffer needs.
pub const ALL_ACCESS: u32 = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

/// The DC access key the benches' DCTs use.
pub const DC_KEY: u64 = 0xffee_ddcc;

/// Sets `SOFT_MLX5_TIME_SCALE` once, before any device exists (timing.rs reads it on every
/// timer computation, so it must not change while a test runs).
pub fn init_time_scale() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| std::env::set_var("SOFT_MLX5_TIME_SCALE", TIME_SCALE));
}

/// Zeroed, 4096-byte aligned heap memory the device reaches by address (as it reaches the
/// application's memory by DMA). No Rust reference into it is ever held.
pub struct Buf {
    ptr: *mut u8,
    layout: Layout,
}

impl Buf {
    /// `len` zero bytes.
    pub fn new(len: usize) -> Buf {
        let layout = Layout::from_size_align(len.max(64), 4096).unwrap();
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory");
        Buf { ptr, layout }
    }
    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.layout.size()
    }
    /// Whether the buffer is empty (never).
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Device address of byte `off`.
    pub fn at(&self, off: usize) -> u64 {
        assert!(off <= self.len());
        self.ptr as u64 + off as u64
    }
    /// Device address of byte 0.
    pub fn addr(&self) -> u64 {
        self.at(0)
    }
    /// Copies `len` bytes from `off`.
    pub fn read(&self, off: usize, len: usize) -> Vec<u8> {
        assert!(off + len <= self.len());
        let mut v = vec![0u8; len];
        // SAFETY: in bounds of this allocation; the device only writes it from this thread.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(off), v.as_mut_ptr(), len) };
        v
    }
    /// Copies `data` to `off`.
    pub fn write(&self, off: usize, data: &[u8]) {
        assert!(off + data.len() <= self.len());
        // SAFETY: in bounds of this allocation.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(off), data.len()) };
    }
    /// Every byte set to `b`.
    pub fn fill(&self, b: u8) {
        self.write(0, &vec![b; self.len()]);
    }
    /// Big-endian u32 at `off` (doorbell records).
    pub fn put_be32(&self, off: usize, v: u32) {
        self.write(off, &v.to_be_bytes());
    }
    /// Big-endian u32 at `off`.
    pub fn be32(&self, off: usize) -> u32 {
        u32::from_be_bytes(self.read(off, 4).try_into().unwrap())
    }
    /// Host-order u64 at `off` (atomic targets).
    pub fn ne64(&self, off: usize) -> u64 {
        u64::from_ne_bytes(self.read(off, 8).try_into().unwrap())
    }
    /// Host-order u64 to `off`.
    pub fn put_ne64(&self, off: usize, v: u64) {
        self.write(off, &v.to_ne_bytes());
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// A registered buffer.
pub struct TMr {
    /// MR handle.
    pub h: u32,
    /// lkey = rkey (one mlx5 mkey).
    pub key: u32,
    /// The memory.
    pub buf: Buf,
}

impl TMr {
    /// Address of byte `off`.
    pub fn at(&self, off: usize) -> u64 {
        self.buf.at(off)
    }
}

/// One polled CQE, decoded at the struct mlx5_cqe64 / mlx5_err_cqe offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cqe64 {
    /// op_own >> 4.
    pub opcode: u8,
    /// srqn_uidx low 24 bits.
    pub uidx: u32,
    /// imm_inval_pkey.
    pub imm: u32,
    /// byte_cnt.
    pub byte_cnt: u32,
    /// flags_rqpn low 24 bits.
    pub src_qp: u32,
    /// sop_drop_qpn high byte (the WQE's opcode).
    pub wqe_opcode: u8,
    /// sop_drop_qpn low 24 bits.
    pub qpn: u32,
    /// wqe_counter.
    pub wqe_counter: u16,
    /// syndrome (error CQEs).
    pub syndrome: u8,
    /// vendor_err_synd (error CQEs).
    pub vendor_err: u8,
}

impl Cqe64 {
    /// Decodes 64 bytes.
    pub fn decode(b: &[u8]) -> Cqe64 {
        let be32 = |o: usize| u32::from_be_bytes(b[o..o + 4].try_into().unwrap());
        Cqe64 {
            opcode: b[63] >> 4,
            uidx: be32(32) & 0xff_ffff,
            imm: be32(36),
            byte_cnt: be32(44),
            src_qp: be32(24) & 0xff_ffff,
            wqe_opcode: b[56],
            qpn: be32(56) & 0xff_ffff,
            wqe_counter: u16::from_be_bytes([b[60], b[61]]),
            syndrome: b[55],
            vendor_err: b[54],
        }
    }
}

/// MLX5_CQE_INVALID: what libmlx5 initialises every CQE's opcode to.
pub const CQE_INVALID: u8 = 0xf;

/// A CQ with the library's consumer index.
pub struct TCq {
    /// CQ handle.
    pub h: u32,
    /// The user handle async events name.
    pub user_handle: u64,
    /// CQE ring.
    pub ring: Buf,
    /// Doorbell record.
    pub db: Buf,
    /// Entries.
    pub ncqe: u32,
    /// Consumer index.
    pub ci: u32,
}

impl TCq {
    fn slot(&self, n: u32) -> Option<[u8; 64]> {
        let off = ((n & (self.ncqe - 1)) * 64) as usize;
        let b: [u8; 64] = self.ring.read(off, 64).try_into().unwrap();
        // mlx5 get_sw_cqe: valid when the opcode is not INVALID and the owner bit matches the
        // wrap parity of the consumer index.
        let owner_ok = (b[63] & 1 != 0) == (n & self.ncqe != 0);
        (b[63] >> 4 != CQE_INVALID && owner_ok).then_some(b)
    }
    /// Whether a CQE waits.
    pub fn ready(&self) -> bool {
        self.slot(self.ci).is_some()
    }
    /// Takes the next CQE and updates the consumer index in the doorbell record.
    pub fn poll(&mut self) -> Option<Cqe64> {
        let b = self.slot(self.ci)?;
        self.ci = self.ci.wrapping_add(1);
        self.db.put_be32(0, self.ci & 0xff_ffff);
        Some(Cqe64::decode(&b))
    }
    /// Every waiting CQE.
    pub fn drain(&mut self) -> Vec<Cqe64> {
        std::iter::from_fn(|| self.poll()).collect()
    }
    /// The raw 64 bytes of ring entry `i`.
    pub fn raw(&self, i: u32) -> Vec<u8> {
        self.ring.read((i * 64) as usize, 64)
    }
    /// ibv_resize_cq as libmlx5 does it (mlx5_resize_cq): a fresh ring of `ncqe` invalid CQEs,
    /// the device's switch (the RESIZE_CQ command), then `mlx5_cq_resize_copy_cqes`: every CQE
    /// from the consumer index up to the resize CQE copied one index on into the new ring with
    /// the new ring's ownership, and the consumer index moved past the resize CQE (the doorbell
    /// record is left for the next poll, as the library leaves it). Err: the command status.
    pub fn resize(&mut self, dev: &mut Device, ncqe: u32) -> Result<(), u8> {
        let ring = Buf::new(ncqe as usize * 64);
        for i in 0..ncqe as usize {
            ring.write(i * 64 + 63, &[CQE_INVALID << 4]);
        }
        engine::completer::resize(dev, self.h, ring.addr(), ncqe)?;
        let mut i = self.ci;
        loop {
            let mut b = self
                .slot(i)
                .expect("CQEs up to the resize CQE are in software ownership");
            if b[63] >> 4 == engine::cqe::op::RESIZE_CQ {
                break;
            }
            let next = i.wrapping_add(1);
            b[63] = (b[63] & !1) | u8::from(next & ncqe != 0);
            ring.write(((next & (ncqe - 1)) * 64) as usize, &b);
            i = next;
        }
        self.ci = self.ci.wrapping_add(1);
        self.ring = ring;
        self.ncqe = ncqe;
        Ok(())
    }
}

/// An SRQ with the library's free-list head and counter.
pub struct TSrq {
    /// SRQ handle.
    pub h: u32,
    /// WQE ring.
    pub ring: Buf,
    /// Doorbell record.
    pub db: Buf,
    /// WQEs.
    pub cnt: u32,
    /// log2 stride.
    pub shift: u32,
    /// Next free WQE (follows next_wqe_index).
    pub head: u32,
    /// Posted WQEs.
    pub counter: u32,
}

impl TSrq {
    /// mlx5_post_srq_recv: the WQE at the head, its scatter list after the next segment,
    /// an INVALID_LKEY entry when shorter than the stride, then the counter in db[0].
    pub fn post_recv(&mut self, sges: &[(u64, u32, u32)]) -> u32 {
        let index = self.head;
        let off = (index as usize) << self.shift;
        self.head = u32::from(u16::from_be_bytes(self.ring.read(off + 2, 2).try_into().unwrap()));
        write_scatter(&self.ring, off + 16, (1usize << self.shift) - 16, sges);
        self.counter = self.counter.wrapping_add(1);
        self.db.put_be32(0, self.counter);
        index
    }
}

fn write_scatter(ring: &Buf, off: usize, room: usize, sges: &[(u64, u32, u32)]) {
    let mut o = off;
    for &(addr, len, lkey) in sges {
        ring.put_be32(o, len);
        ring.put_be32(o + 4, lkey);
        ring.write(o + 8, &addr.to_be_bytes());
        o += 16;
    }
    if o + 16 <= off + room {
        ring.put_be32(o, 0);
        ring.put_be32(o + 4, INVALID_LKEY);
        ring.write(o + 8, &[0; 8]);
    }
}

/// A QP (RC or DCI) with the library's producer indices.
pub struct TQp {
    /// QP handle.
    pub h: u32,
    /// QP number.
    pub qpn: u32,
    /// User index.
    pub uidx: u32,
    /// The user handle async events name.
    pub user_handle: u64,
    /// RQ then SQ.
    pub buf: Buf,
    /// Doorbell record: [0] RQ counter, [1] SQ counter.
    pub db: Buf,
    /// SQ WQEBBs.
    pub sq_cnt: u32,
    /// RQ WQEs.
    pub rq_cnt: u32,
    /// log2 RQ stride.
    pub rq_shift: u32,
    /// SQ producer index (WQEBBs).
    pub sq_pi: u32,
    /// RQ producer index.
    pub rq_pi: u32,
}

impl TQp {
    fn sq_off(&self) -> usize {
        (self.rq_cnt as usize) << self.rq_shift
    }
    /// Writes the WQE at the producer index (wrapping at the ring end) without the doorbell.
    pub fn write_wqe(&mut self, wr: &Wr) -> u16 {
        let index = self.sq_pi as u16;
        let bytes = encode_send(index, self.qpn, wr);
        let size = (self.sq_cnt as usize) * 64;
        let start = ((self.sq_pi & (self.sq_cnt - 1)) as usize) * 64;
        for (i, chunk) in bytes.chunks(16).enumerate() {
            let rel = (start + i * 16) % size;
            self.buf.write(self.sq_off() + rel, chunk);
        }
        self.sq_pi = self.sq_pi.wrapping_add((bytes.len() / 64) as u32);
        index
    }
    /// Posts one basic block of raw bytes (a malformed WQE) and rings the doorbell.
    pub fn post_raw(&mut self, bb: &[u8; 64]) -> u16 {
        let index = self.sq_pi as u16;
        let off = self.sq_off() + ((self.sq_pi & (self.sq_cnt - 1)) as usize) * 64;
        self.buf.write(off, bb);
        self.sq_pi = self.sq_pi.wrapping_add(1);
        self.ring_sq();
        index
    }
    /// Posts `wr` with its WQE signature (libmlx5 `wq_sig`: the inverse of the XOR of the
    /// WQE's ds * 16 bytes, signature byte 0), or with that signature spoiled.
    pub fn post_signed(&mut self, wr: &Wr, good: bool) -> u16 {
        let index = self.sq_pi as u16;
        let mut bytes = encode_send(index, self.qpn, wr);
        let ds = (u32::from_be_bytes(bytes[4..8].try_into().unwrap()) & 0x3f) as usize;
        bytes[8] = 0;
        let sig = !bytes[..ds * 16].iter().fold(0u8, |a, b| a ^ b);
        bytes[8] = if good { sig } else { sig ^ 0x5a };
        self.post_bytes(&bytes);
        index
    }
    /// Writes whole basic blocks of WQE bytes at the producer index (wrapping) and rings.
    pub fn post_bytes(&mut self, bytes: &[u8]) {
        let size = (self.sq_cnt as usize) * 64;
        let start = ((self.sq_pi & (self.sq_cnt - 1)) as usize) * 64;
        for (i, chunk) in bytes.chunks(16).enumerate() {
            let rel = (start + i * 16) % size;
            self.buf.write(self.sq_off() + rel, chunk);
        }
        self.sq_pi = self.sq_pi.wrapping_add(bytes.len().div_ceil(64) as u32);
        self.ring_sq();
    }
    /// Rings the SQ doorbell record (db[1] = sq producer counter).
    pub fn ring_sq(&self) {
        self.db.put_be32(4, self.sq_pi & 0xffff);
    }
    /// Posts one send WQE; returns its index (wqe_counter).
    pub fn post(&mut self, wr: &Wr) -> u16 {
        let i = self.write_wqe(wr);
        self.ring_sq();
        i
    }
    /// mlx5_post_recv: the scatter list at the producer index, then db[0].
    pub fn post_recv(&mut self, sges: &[(u64, u32, u32)]) -> u32 {
        assert!(self.rq_cnt > 0);
        let index = self.rq_pi;
        let off = ((index & (self.rq_cnt - 1)) as usize) << self.rq_shift;
        write_scatter(&self.buf, off, 1 << self.rq_shift, sges);
        self.rq_pi = self.rq_pi.wrapping_add(1);
        self.db.put_be32(0, self.rq_pi & 0xffff);
        index
    }
}

/// A DC target.
pub struct TDct {
    /// Handle.
    pub h: u32,
    /// DCT number (assigned at RTR).
    pub dctn: u32,
    /// User index.
    pub uidx: u32,
}

/// A datagram address as libmlx5 writes it for DC (mlx5_wqe_av, extended).
#[derive(Clone, Copy, Debug, Default)]
pub struct AvSpec {
    /// dc_key.
    pub key: u64,
    /// DCT number.
    pub dqpn: u32,
    /// rlid.
    pub rlid: u16,
}

/// One send work request.
#[derive(Clone, Debug, Default)]
pub struct Wr {
    /// MLX5_OPCODE_*.
    pub opcode: u8,
    /// CQ update requested.
    pub signaled: bool,
    /// Immediate (host order).
    pub imm: u32,
    /// DCI stream id.
    pub stream: u16,
    /// Address vector (DC).
    pub av: Option<AvSpec>,
    /// Remote address and rkey.
    pub raddr: Option<(u64, u32)>,
    /// (swap_add, compare).
    pub atomic: Option<(u64, u64)>,
    /// Pointer segments.
    pub sges: Vec<(u64, u32, u32)>,
    /// Inline bytes.
    pub inline: Option<Vec<u8>>,
    /// IBV_SEND_FENCE (MLX5_WQE_CTRL_FENCE).
    pub fence: bool,
}

impl Wr {
    /// A signaled WR of `opcode`.
    pub fn new(opcode: u8) -> Wr {
        Wr {
            opcode,
            signaled: true,
            ..Default::default()
        }
    }
    /// Send from `sges`.
    pub fn send(sges: &[(u64, u32, u32)]) -> Wr {
        Wr {
            sges: sges.to_vec(),
            ..Wr::new(opcode::SEND)
        }
    }
    /// RDMA write from `sges` to (raddr, rkey).
    pub fn write(sges: &[(u64, u32, u32)], raddr: u64, rkey: u32) -> Wr {
        Wr {
            sges: sges.to_vec(),
            raddr: Some((raddr, rkey)),
            ..Wr::new(opcode::RDMA_WRITE)
        }
    }
    /// RDMA write of inline bytes.
    pub fn write_inline(data: &[u8], raddr: u64, rkey: u32) -> Wr {
        Wr {
            inline: Some(data.to_vec()),
            raddr: Some((raddr, rkey)),
            ..Wr::new(opcode::RDMA_WRITE)
        }
    }
    /// Unsignaled.
    pub fn unsignaled(mut self) -> Wr {
        self.signaled = false;
        self
    }
    /// Fenced: waits for every earlier read and atomic.
    pub fn fenced(mut self) -> Wr {
        self.fence = true;
        self
    }
    /// On DCI stream `s`.
    pub fn on_stream(mut self, s: u16) -> Wr {
        self.stream = s;
        self
    }
}

/// The send WQE libmlx5 builds for `wr` (ctrl, datagram, raddr, atomic, data), padded to
/// whole 64-byte basic blocks.
pub fn encode_send(index: u16, qpn: u32, wr: &Wr) -> Vec<u8> {
    let mut b = vec![0u8; 16];
    if let Some(av) = wr.av {
        let mut a = [0u8; 48];
        a[0..8].copy_from_slice(&av.key.to_be_bytes());
        a[8..12].copy_from_slice(&(av.dqpn | EXTENDED_UD_AV).to_be_bytes());
        a[14..16].copy_from_slice(&av.rlid.to_be_bytes());
        b.extend_from_slice(&a);
    }
    if let Some((raddr, rkey)) = wr.raddr {
        b.extend_from_slice(&raddr.to_be_bytes());
        b.extend_from_slice(&rkey.to_be_bytes());
        b.extend_from_slice(&[0; 4]);
    }
    if let Some((swap_add, compare)) = wr.atomic {
        b.extend_from_slice(&swap_add.to_be_bytes());
        b.extend_from_slice(&compare.to_be_bytes());
    }
    if let Some(data) = &wr.inline {
        b.extend_from_slice(&(data.len() as u32 | INLINE_SEG).to_be_bytes());
        b.extend_from_slice(data);
        b.resize(b.len().div_ceil(16) * 16, 0);
    } else {
        for &(addr, len, lkey) in &wr.sges {
            b.extend_from_slice(&len.to_be_bytes());
            b.extend_from_slice(&lkey.to_be_bytes());
            b.extend_from_slice(&addr.to_be_bytes());
        }
    }
    let ds = (b.len() / 16) as u32;
    b[0..4].copy_from_slice(&((u32::from(index) << 8) | u32::from(wr.opcode)).to_be_bytes());
    b[4..8].copy_from_slice(&((qpn << 8) | ds).to_be_bytes());
    b[9..11].copy_from_slice(&wr.stream.to_be_bytes());
    b[11] = if wr.signaled { CTRL_CQ_UPDATE } else { 0 };
    if wr.fence {
        b[11] |= CTRL_FENCE;
    }
    b[12..16].copy_from_slice(&wr.imm.to_be_bytes());
    b.resize(b.len().div_ceil(64) * 64, 0);
    b
}

/// Modify-QP attributes a bench QP gets on its way to RTS (or a DCT to RTR).
#[derive(Clone, Copy, Debug)]
pub struct QpCfg {
    /// IB_QP_ACCESS_FLAGS (RC responder, DCT).
    pub access: u32,
    /// Local ACK timeout (encoded).
    pub timeout: u8,
    /// Transport retries.
    pub retry_cnt: u8,
    /// RNR retries (7 = infinite).
    pub rnr_retry: u8,
    /// Responder RNR NAK timer (encoded).
    pub min_rnr_timer: u8,
    /// sq_sig_all at create.
    pub sq_sig_all: bool,
    /// SQ WQEBBs.
    pub sq_cnt: u32,
    /// RQ WQEs (RC).
    pub rq_cnt: u32,
    /// Receive SGEs per RQ WQE (RC).
    pub rq_sge: u32,
    /// DCI streams (log_num_concurent, log_num_errored).
    pub dci_streams: Option<(u8, u8)>,
}

impl Default for QpCfg {
    fn default() -> Self {
        QpCfg {
            access: REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 12,
            sq_sig_all: false,
            sq_cnt: 16,
            rq_cnt: 16,
            rq_sge: 4,
            dci_streams: None,
        }
    }
}

/// The device and the objects' handles.
pub struct Bed {
    /// The device model.
    pub dev: Device,
    next_uidx: u32,
}

impl Default for Bed {
    fn default() -> Self {
        Self::new()
    }
}

impl Bed {
    /// A ConnectX-5 on InfiniBand, node 0 (LID 1).
    pub fn new() -> Bed {
        Bed::with_profile("cx5-ib")
    }

    /// A device of the named profile.
    pub fn with_profile(name: &str) -> Bed {
        init_time_scale();
        let profile = Profile::by_name(name).expect("profile");
        Bed {
            dev: Device::new(profile, 0, Box::new(LocalDma)),
            next_uidx: 1,
        }
    }

    /// A device of the named profile at `node`, on the fabric at `root` (as a process started
    /// by scripts/soft-mlx5 with `--node`); its numbers carry the slot it claimed.
    pub fn on_fabric(name: &str, node: u32, root: &std::path::Path) -> Bed {
        init_time_scale();
        let profile = Profile::by_name(name).expect("profile");
        let mut dev = Device::new(profile, node, Box::new(LocalDma));
        dev.attach(soft_mlx5::fabric::Fabric::join(root, node).expect("join the fabric"));
        Bed { dev, next_uidx: 1 }
    }

    fn uidx(&mut self) -> u32 {
        self.next_uidx += 1;
        self.next_uidx - 1
    }

    /// ALLOC_PD.
    pub fn pd(&mut self) -> u32 {
        let h = self.dev.handle();
        let pdn = self.dev.number();
        self.dev.pds.insert(h, Pd { pdn });
        h
    }

    /// REG_MR of `len` fresh bytes with `access`.
    pub fn mr(&mut self, pd: u32, len: usize, access: u32) -> TMr {
        let buf = Buf::new(len);
        let key = self.dev.mkey();
        let h = self.dev.handle();
        self.dev.insert_mr(
            h,
            Mr {
                pd,
                addr: buf.addr(),
                length: len as u64,
                lkey: key,
                rkey: key,
                access,
            },
        );
        TMr { h, key, buf }
    }

    /// CREATE_CQ with room for `cqe` entries (ring: the next power of two of cqe + 1).
    pub fn cq(&mut self, cqe: u32) -> TCq {
        let ncqe = (cqe + 1).next_power_of_two();
        let ring = Buf::new(ncqe as usize * 64);
        for i in 0..ncqe as usize {
            // mlx5_alloc_cq_buf: every CQE starts invalid, owner bit 0.
            ring.write(i * 64 + 63, &[CQE_INVALID << 4]);
        }
        let db = Buf::new(64);
        let h = self.dev.handle();
        let cqn = self.dev.number();
        let user_handle = 0xc000_0000 | u64::from(h);
        // As kernel/write.rs create_cq leaves the arm record.
        soft_mlx5::engine::completer::init_arm_record(&soft_mlx5::mem::LocalDma, db.addr());
        self.dev.insert_cq(
            h,
            Cq {
                user_handle,
                cqn,
                buf: ring.addr(),
                db: db.addr(),
                ncqe,
                cqe_size: 64,
                pi: 0,
                channel: None,
                armed_sn: None,
                last_arm: None,
                overrun: false,
            },
        );
        TCq {
            h,
            user_handle,
            ring,
            db,
            ncqe,
            ci: 0,
        }
    }

    /// CREATE_SRQ for `max_wr` WQEs of `max_sge` entries, the free list linked as
    /// mlx5_alloc_srq_buf links it.
    pub fn srq(&mut self, pd: u32, max_wr: u32, max_sge: u32) -> TSrq {
        let cnt = (max_wr + 1).next_power_of_two();
        let desc = (16 + 16 * max_sge.max(1)).next_power_of_two();
        let shift = desc.trailing_zeros();
        let ring = Buf::new((cnt as usize) << shift);
        for i in 0..cnt {
            let next = ((i + 1) & (cnt - 1)) as u16;
            ring.write(((i as usize) << shift) + 2, &next.to_be_bytes());
        }
        let db = Buf::new(64);
        let h = self.dev.handle();
        let srqn = self.dev.number();
        let uidx = self.uidx();
        self.dev.srqs.insert(
            h,
            Srq {
                user_handle: 0x5000_0000 | u64::from(h),
                srqn,
                pd,
                buf: ring.addr(),
                db: db.addr(),
                wqe_cnt: cnt,
                wqe_shift: shift,
                head: 0,
                taken: 0,
                limit: 0,
                uidx,
                cyclic: false,
            },
        );
        TSrq {
            h,
            ring,
            db,
            cnt,
            shift,
            head: 0,
            counter: 0,
        }
    }

    fn qp(&mut self, kind: QpKind, pd: u32, send_cq: &TCq, recv_cq: &TCq, cfg: &QpCfg) -> TQp {
        let (rq_cnt, rq_shift) = if kind == QpKind::Rc {
            (
                cfg.rq_cnt,
                (16 * cfg.rq_sge.max(1)).next_power_of_two().trailing_zeros(),
            )
        } else {
            (0, 0)
        };
        let rq_bytes = (rq_cnt as usize) << rq_shift;
        let buf = Buf::new(rq_bytes + cfg.sq_cnt as usize * 64);
        let db = Buf::new(64);
        let h = self.dev.handle();
        let qpn = self.dev.qpn().unwrap();
        let uidx = self.uidx();
        let user_handle = 0x9000_0000 | u64::from(h);
        let lid = self.dev.profile.lid_of(self.dev.node);
        let qp = Qp {
            user_handle,
            bfregn: None,
            qpn,
            kind,
            // RESET -> INIT -> RTR -> RTS with the attributes below (modify.rs).
            state: QpState::Rts,
            pd,
            send_cq: Some(send_cq.h),
            recv_cq: Some(recv_cq.h),
            srq: None,
            uidx,
            db: db.addr(),
            sq: Ring {
                base: buf.at(rq_bytes),
                cnt: cfg.sq_cnt,
                shift: 6,
            },
            rq: Ring {
                base: buf.addr(),
                cnt: rq_cnt,
                shift: rq_shift,
            },
            max_inline_data: 64,
            max_send_sge: 1,
            sq_sig_all: cfg.sq_sig_all,
            port: 1,
            pkey_index: 0,
            access: if kind == QpKind::Rc { cfg.access } else { 0 },
            path_mtu: 5,
            dest_qpn: 0,
            path: Path {
                dlid: lid,
                port: 1,
                ..Default::default()
            },
            min_rnr_timer: cfg.min_rnr_timer,
            timeout: cfg.timeout,
            retry_cnt: cfg.retry_cnt,
            rnr_retry: cfg.rnr_retry,
            max_rd_atomic: 16,
            max_dest_rd_atomic: if kind == QpKind::Rc { 16 } else { 0 },
            sq_psn: 0,
            rq_psn: 0,
            dc_key: 0,
            qkey: 0,
            dci_streams: if kind == QpKind::Dci { cfg.dci_streams } else { None },
            errored_streams: Vec::new(),
            sq_ci: 0,
            rq_ci: 0,
            sq_fetched: 0,
            sq_stale_record: None,
            outstanding: Default::default(),
            stalls: Default::default(),
            wire: Default::default(),
            wq_sig: false,
            bf: None,
            dc_key_violations: 0,
            ooo_dp: false,
        };
        self.dev.insert_qp(h, qp);
        self.dev.qpn_to_handle.insert(qpn, h);
        TQp {
            h,
            qpn,
            uidx,
            user_handle,
            buf,
            db,
            sq_cnt: cfg.sq_cnt,
            rq_cnt,
            rq_shift,
            sq_pi: 0,
            rq_pi: 0,
        }
    }

    /// Two RC QPs in RTS connected to each other (same node: dlid = own LID).
    pub fn rc_pair(&mut self, pd: u32, a_cq: &TCq, b_cq: &TCq, cfg: &QpCfg) -> (TQp, TQp) {
        let a = self.qp(QpKind::Rc, pd, a_cq, a_cq, cfg);
        let b = self.qp(QpKind::Rc, pd, b_cq, b_cq, cfg);
        self.dev.qps.get_mut(&a.h).unwrap().dest_qpn = b.qpn;
        self.dev.qps.get_mut(&b.h).unwrap().dest_qpn = a.qpn;
        (a, b)
    }

    /// An RC QP as CREATE_QP leaves it: in RESET (nothing of it executes).
    pub fn reset_qp(&mut self, pd: u32, cq: &TCq, cfg: &QpCfg) -> TQp {
        let q = self.qp(QpKind::Rc, pd, cq, cq, cfg);
        self.dev.qps.get_mut(&q.h).unwrap().state = QpState::Reset;
        self.dev.reindex_qp(q.h);
        q
    }

    /// A DCI in RTS.
    pub fn dci(&mut self, pd: u32, cq: &TCq, cfg: &QpCfg) -> TQp {
        self.qp(QpKind::Dci, pd, cq, cq, cfg)
    }

    /// A DCT on `srq` in RTR with `key` (number assigned at INIT->RTR as modify.rs does).
    pub fn dct(&mut self, pd: u32, cq: &TCq, srq: &TSrq, key: u64, cfg: &QpCfg) -> TDct {
        let h = self.dev.handle();
        let uidx = self.uidx();
        let dctn = self.dev.qpn().unwrap();
        let lid = self.dev.profile.lid_of(self.dev.node);
        let qp = Qp {
            user_handle: 0xd000_0000 | u64::from(h),
            bfregn: None,
            qpn: dctn,
            kind: QpKind::Dct,
            state: QpState::Rtr,
            pd,
            send_cq: None,
            recv_cq: Some(cq.h),
            srq: Some(srq.h),
            uidx,
            db: 0,
            sq: Ring::default(),
            rq: Ring::default(),
            max_inline_data: 0,
            max_send_sge: 0,
            sq_sig_all: false,
            port: 1,
            pkey_index: 0,
            access: cfg.access,
            path_mtu: 5,
            dest_qpn: 0,
            path: Path {
                dlid: lid,
                port: 1,
                ..Default::default()
            },
            min_rnr_timer: cfg.min_rnr_timer,
            timeout: 0,
            retry_cnt: 0,
            rnr_retry: 0,
            max_rd_atomic: 0,
            max_dest_rd_atomic: 0,
            sq_psn: 0,
            rq_psn: 0,
            dc_key: key,
            qkey: 0,
            dci_streams: None,
            errored_streams: Vec::new(),
            sq_ci: 0,
            rq_ci: 0,
            sq_fetched: 0,
            sq_stale_record: None,
            outstanding: Default::default(),
            stalls: Default::default(),
            wire: Default::default(),
            wq_sig: false,
            bf: None,
            dc_key_violations: 0,
            ooo_dp: false,
        };
        self.dev.insert_qp(h, qp);
        self.dev.qpn_to_handle.insert(dctn, h);
        TDct { h, dctn, uidx }
    }

    /// DESTROY_QP of a QP or DCT (write.rs: both tables).
    pub fn destroy_qp(&mut self, h: u32) {
        self.dev.destroy_qp(h).expect("qp");
    }

    /// The QP's state.
    pub fn state(&self, h: u32) -> QpState {
        self.dev.qps[&h].state
    }

    /// MODIFY_QP to ERR (allowed from any state but RESET, modify.rs).
    pub fn modify_to_err(&mut self, h: u32) {
        self.dev.qps.get_mut(&h).unwrap().state = QpState::Err;
        self.dev.reindex_qp(h);
    }

    /// Steps the device until a pass moves nothing (the timers are not waited for).
    pub fn run(&mut self) {
        for _ in 0..100_000 {
            let moved = engine::step(&mut self.dev);
            // Every test runs under the overrun oracle (the device thread aborts there).
            assert!(self.dev.fault.is_none(), "{:?}", self.dev.fault);
            if !moved {
                return;
            }
        }
        panic!("the device never went quiet");
    }

    /// Steps the device until `done` holds or `budget` has passed (then panics).
    pub fn run_until(&mut self, budget: Duration, mut done: impl FnMut(&Bed) -> bool) {
        let start = Instant::now();
        loop {
            engine::step(&mut self.dev);
            assert!(self.dev.fault.is_none(), "{:?}", self.dev.fault);
            if done(self) {
                return;
            }
            assert!(start.elapsed() < budget, "nothing happened within {budget:?}");
            std::thread::yield_now();
        }
    }

    /// Steps the device for `d` (timer-driven paths that must not finish).
    pub fn run_for(&mut self, d: Duration) {
        let start = Instant::now();
        while start.elapsed() < d {
            engine::step(&mut self.dev);
            std::thread::yield_now();
        }
    }

    /// An async event file of a context (as GET_CONTEXT creates it): the device queues every
    /// async event on it.
    pub fn async_file(&mut self) -> AsyncFile {
        let fd = self.dev.events.create(16).expect("event file");
        self.dev.async_fds.push(fd);
        AsyncFile { fd }
    }

    /// Every (element, event_type) queued on `f` so far, read as ib_uverbs_event_read returns
    /// them (one token, then the head event: struct ib_uverbs_async_event_desc).
    pub fn events(&mut self, f: &AsyncFile) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        while let Some(d) = self.dev.events.read(f.fd).expect("an open event file") {
            out.push((
                u64::from_ne_bytes(d[0..8].try_into().unwrap()),
                u32::from_ne_bytes(d[8..12].try_into().unwrap()),
            ));
        }
        out
    }
}

/// The application's end of an async event file.
pub struct AsyncFile {
    fd: i32,
}

/// An RC pair or a DCI with a DCT, with a CQ per side, a local and a remote buffer.
pub struct Link {
    /// The device.
    pub bed: Bed,
    /// The PD everything is in.
    pub pd: u32,
    /// The requester (RC QP A or the DCI).
    pub req: TQp,
    /// RC: the responder QP B.
    pub resp: Option<TQp>,
    /// DC: the DCT.
    pub dct: Option<TDct>,
    /// DC: the DCT's SRQ.
    pub srq: Option<TSrq>,
    /// The requester's CQ.
    pub scq: TCq,
    /// The responder's CQ.
    pub rcq: TCq,
    /// A local buffer (all access).
    pub local: TMr,
    /// A remote buffer (all access).
    pub remote: TMr,
}

/// Which transport a [`Link`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Reliable connected, receives from the responder's RQ.
    Rc,
    /// Dynamically connected, receives from the DCT's SRQ.
    Dc,
}

impl Link {
    /// A link with the default attributes.
    pub fn new(t: Transport) -> Link {
        Link::with(t, &QpCfg::default())
    }

    /// A link with `cfg` on both sides.
    pub fn with(t: Transport, cfg: &QpCfg) -> Link {
        let mut bed = Bed::new();
        let pd = bed.pd();
        let scq = bed.cq(63);
        let rcq = bed.cq(63);
        let local = bed.mr(pd, 8192, ALL_ACCESS);
        let remote = bed.mr(pd, 8192, ALL_ACCESS);
        let (req, resp, dct, srq) = match t {
            Transport::Rc => {
                let (a, b) = bed.rc_pair(pd, &scq, &rcq, cfg);
                (a, Some(b), None, None)
            }
            Transport::Dc => {
                let srq = bed.srq(pd, 31, 4);
                let dct = bed.dct(pd, &rcq, &srq, DC_KEY, cfg);
                let dci = bed.dci(pd, &scq, cfg);
                (dci, None, Some(dct), Some(srq))
            }
        };
        Link {
            bed,
            pd,
            req,
            resp,
            dct,
            srq,
            scq,
            rcq,
            local,
            remote,
        }
    }

    /// The address vector a DC WQE carries (None on RC).
    pub fn av(&self) -> Option<AvSpec> {
        self.dct.as_ref().map(|d| AvSpec {
            key: DC_KEY,
            dqpn: d.dctn,
            rlid: self.bed.dev.profile.lid_of(0),
        })
    }

    /// Posts `wr` on the requester (with the DCT's address on DC).
    pub fn post(&mut self, mut wr: Wr) -> u16 {
        wr.av = wr.av.or(self.av());
        self.req.post(&wr)
    }

    /// Posts a receive at the target (RC: B's RQ; DC: the DCT's SRQ); returns its index.
    pub fn post_recv(&mut self, sges: &[(u64, u32, u32)]) -> u32 {
        match (&mut self.resp, &mut self.srq) {
            (Some(b), _) => b.post_recv(sges),
            (None, Some(s)) => s.post_recv(sges),
            _ => unreachable!(),
        }
    }

    /// The target's QP/DCT number and user index.
    pub fn target(&self) -> (u32, u32) {
        match (&self.resp, &self.dct) {
            (Some(b), _) => (b.qpn, b.uidx),
            (None, Some(d)) => (d.dctn, d.uidx),
            _ => unreachable!(),
        }
    }

    /// Runs the device until it is quiet.
    pub fn run(&mut self) {
        self.bed.run();
    }
}
