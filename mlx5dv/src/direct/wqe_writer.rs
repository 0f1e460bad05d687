//! A direct QP's send queue: the ring libmlx5 describes (`mlx5dv_init_obj`), the state
//! libmlx5 keeps for it (kept here instead), admission by basic blocks, the WQE writer and
//! the doorbell (see the module above for what is written and why).

use super::barrier::{mmio_flush_writes, udma_to_device_barrier};
use crate::error::{Error, Result};
use crate::qp::QpRaw;
use crate::sq_accounting::Poster;
use crate::wr::{Data, Dest, DestRaw, Op};
use mlx5dv_raw as raw;
use std::cell::Cell;
use std::ptr::NonNull;

const BB: usize = raw::MLX5_SEND_WQE_BB as usize;

/// One direct QP's send queue: where the ring is, and libmlx5's state for it, kept here.
pub(crate) struct DirectSq {
    buf: NonNull<u8>,
    /// `buf` + the ring's bytes.
    qend: *mut u8,
    wqe_cnt: u32,
    /// The send word of the doorbell record.
    dbrec: *mut u32,
    bf_reg: *mut u8,
    /// BlueFlame buffer size (0: no BlueFlame, 8-byte doorbells only).
    bf_size: u32,
    /// libmlx5's `prefer_bf` (MLX5_POST_SEND_PREFER_BF, default on).
    prefer_bf: bool,
    /// The QP was created with WQE signatures (libmlx5's `wq_sig`: MLX5_QP_SIGNATURE set):
    /// each WQE carries one.
    wq_sig: bool,
    /// `qp_num << 8`.
    qpn8: u32,
    /// libmlx5's `sq.cur_post`.
    cur_post: Cell<u32>,
    /// `cur_post` when the batch opened (an aborted batch rolls back to it).
    batch_post: Cell<u32>,
    /// Requests in the open batch, whether one was inline, and the last one's control segment
    /// and size (16-byte units).
    nreq: Cell<u32>,
    inline: Cell<bool>,
    last_ctrl: Cell<*mut u8>,
    last_ds: Cell<u32>,
    bf_offset: Cell<u32>,
    /// Free blocks as last seen (the poller's progress is read again only when a request
    /// needs more).
    room: Cell<u32>,
    /// `cur_post` after each request, by its sequence number (ring of the count's size).
    end_bb: Box<[Cell<u32>]>,
    /// Sequence number and `cur_post` of the last RESET: nothing before them is in the ring.
    base_seq: Cell<u64>,
    base_bb: Cell<u32>,
}

impl DirectSq {
    /// Finds `qp`'s send ring, doorbell record and BlueFlame register (`mlx5dv_init_obj`).
    /// `max_send_wr`: the count's capacity (sizes the per-request ring). The QP's register is
    /// the writer's alone: it was created on a thread domain of its own (`super::register`),
    /// or (the differential test's hook) its caller posts on no other QP meanwhile.
    pub(crate) fn new(qp: NonNull<raw::ibv_qp>, max_send_wr: u32, device: &str) -> Result<DirectSq> {
        const OP: &str = "mlx5dv_init_obj (direct send queue)";
        super::barrier::refuse_unsupported(OP, std::env::consts::ARCH).map_err(|e| e.on(device))?;
        // SAFETY: all-zero is a valid mlx5dv_qp (pointers and integers).
        let mut out: raw::mlx5dv_qp = unsafe { std::mem::zeroed() };
        // SAFETY: all-zero is a valid mlx5dv_obj; only the QP member is asked for.
        let mut obj: raw::mlx5dv_obj = unsafe { std::mem::zeroed() };
        obj.qp.r#in = qp.as_ptr();
        obj.qp.out = &mut out;
        // SAFETY: a live mlx5 QP; `out` is writable for the call.
        let rc = unsafe { raw::mlx5dv_init_obj(&mut obj, raw::MLX5DV_OBJ_QP) };
        if rc != 0 {
            return Err(
                Error::from_errno(OP, rc, "libmlx5 did not describe the QP: use the wr API backend").on(device),
            );
        }
        let (Some(buf), false) = (NonNull::new(out.sq.buf.cast::<u8>()), out.dbrec.is_null()) else {
            return Err(Error::from_errno(
                OP,
                libc::EOPNOTSUPP,
                "the QP has no send ring or doorbell record: use the wr API backend",
            )
            .on(device));
        };
        if out.sq.stride as usize != BB || !out.sq.wqe_cnt.is_power_of_two() || out.sq.wqe_cnt > 1 << 16 {
            return Err(Error::from_errno(
                OP,
                libc::EOPNOTSUPP,
                format!(
                    "send ring of {} blocks of {} bytes: the direct writer needs a power of two of 64-byte blocks; use the wr API backend",
                    out.sq.wqe_cnt, out.sq.stride
                ),
            )
            .on(device));
        }
        let env_on = |name: &str, default: bool| std::env::var_os(name).map_or(default, |v| v != "0");
        let shut_up_bf = env_on("MLX5_SHUT_UP_BF", false);
        // SAFETY: the QP is live.
        let qp_num = unsafe { (*qp.as_ptr()).qp_num };
        // SAFETY: the record has the receive word then the send word.
        let dbrec = unsafe { out.dbrec.add(raw::MLX5_SND_DBR as usize) };
        let bf_size = if shut_up_bf { 0 } else { out.bf.size };
        let prefer_bf = env_on("MLX5_POST_SEND_PREFER_BF", true);
        // libmlx5's create_qp asks mlx5_ib for MLX5_QP_FLAG_SIGNATURE whenever the variable is
        // set, whatever its value (providers/mlx5/verbs.c), and the device then checks every
        // WQE's signature: read now, as libmlx5 read it creating this QP.
        let wq_sig = std::env::var_os("MLX5_QP_SIGNATURE").is_some();
        // SAFETY: as above, from `mlx5dv_init_obj`.
        Ok(unsafe {
            DirectSq::on_ring(
                buf,
                out.sq.wqe_cnt,
                dbrec,
                out.bf.reg.cast(),
                bf_size,
                prefer_bf,
                wq_sig,
                qp_num,
                max_send_wr,
            )
        })
    }

    /// The state for a ring of `wqe_cnt` 64-byte blocks at `buf`, the doorbell record's send
    /// word, the BlueFlame register (`bf_size` 0: 8-byte doorbells only), QP `qp_num`.
    ///
    /// # Safety
    /// The ring, record and register are valid for as long as the result is used.
    #[allow(clippy::too_many_arguments)]
    unsafe fn on_ring(
        buf: NonNull<u8>,
        wqe_cnt: u32,
        dbrec: *mut u32,
        bf_reg: *mut u8,
        bf_size: u32,
        prefer_bf: bool,
        wq_sig: bool,
        qp_num: u32,
        max_send_wr: u32,
    ) -> DirectSq {
        DirectSq {
            buf,
            qend: buf.as_ptr().wrapping_add(wqe_cnt as usize * BB),
            wqe_cnt,
            dbrec,
            bf_reg,
            bf_size,
            prefer_bf,
            wq_sig,
            qpn8: qp_num << 8,
            cur_post: Cell::new(0),
            batch_post: Cell::new(0),
            nreq: Cell::new(0),
            inline: Cell::new(false),
            last_ctrl: Cell::new(std::ptr::null_mut()),
            last_ds: Cell::new(0),
            bf_offset: Cell::new(0),
            room: Cell::new(wqe_cnt),
            end_bb: (0..(max_send_wr.max(1) as usize).next_power_of_two())
                .map(|_| Cell::new(0))
                .collect(),
            base_seq: Cell::new(0),
            base_bb: Cell::new(0),
        }
    }

    /// The ring's basic blocks (`wqe_cnt`), for the WQE-index map.
    pub(crate) fn wqe_cnt(&self) -> u32 {
        self.wqe_cnt
    }

    /// Opens a batch (`mlx5_send_wr_start`).
    #[inline]
    pub(crate) fn start(&self) {
        self.batch_post.set(self.cur_post.get());
        self.nreq.set(0);
        self.inline.set(false);
    }

    /// Discards the open batch (`mlx5_send_wr_abort`): its WQEs stay in the ring, unrung, and
    /// are written over.
    #[inline]
    pub(crate) fn abort(&self) {
        let written = self.cur_post.get().wrapping_sub(self.batch_post.get());
        self.room.set(self.room.get() + written);
        self.cur_post.set(self.batch_post.get());
        self.nreq.set(0);
    }

    /// The QP went through RESET (`mlx5_init_qp_indices`); `next_seq` is the count's next
    /// request (everything before it is retired).
    pub(crate) fn reset(&self, next_seq: u64) {
        self.restart_at(next_seq, 0);
    }

    /// As [`DirectSq::reset`], at ring position `cur_post` (the differential test's hook).
    pub(crate) fn restart_at(&self, next_seq: u64, cur_post: u32) {
        self.cur_post.set(cur_post);
        self.batch_post.set(cur_post);
        self.nreq.set(0);
        self.base_seq.set(next_seq);
        self.base_bb.set(cur_post);
        self.room.set(self.wqe_cnt);
    }

    /// Reads the poller's progress into `room`: the blocks past the last retired request's.
    #[inline(never)]
    fn refill(&self, sq: &Poster) -> u32 {
        let used = self.cur_post.get().wrapping_sub(self.end_before(sq.retired()));
        let room = self.wqe_cnt.saturating_sub(used);
        self.room.set(room);
        room
    }

    /// `cur_post` after the requests before `seq` (all in the ring since the last RESET).
    #[inline]
    fn end_before(&self, seq: u64) -> u32 {
        if seq <= self.base_seq.get() {
            return self.base_bb.get();
        }
        let i = (seq - 1) as usize & (self.end_bb.len() - 1);
        // SAFETY: `end_bb` has a power-of-two length, so the mask keeps `i` in bounds.
        unsafe { self.end_bb.get_unchecked(i) }.get()
    }

    /// Writes one request (the checks of `Wr::emit` passed): a DC one with its destination,
    /// an RC one (`RC`) without; admission by count and by basic blocks, the WQE, and its index in
    /// the count's map.
    #[inline(always)]
    pub(crate) fn post<const RC: bool>(
        &self,
        qp: &QpRaw,
        op: Op,
        dest: Option<Dest<'_>>,
        data: Data<'_>,
        flags: u32,
        wr_id: u64,
    ) -> Result<()> {
        // A DC request names its peer (the typestate batch requires it); an RC request none.
        // `RC` is the transport's constant: each batch keeps only its own branch.
        let dest = if RC {
            None
        } else {
            match dest.filter(|d| !d.raw.av.is_null()) {
                Some(d) => Some(d),
                None => return Err(no_av(op.name(), qp)),
            }
        };
        // Size in 16-byte units: control (and a DC request's address vector), then the op's
        // and the data's.
        let mut ds = if dest.is_some() { 4 } else { 1 } + op_units(op);
        ds += match data {
            Data::Sge(s) => u32::from(s.length != 0),
            Data::List(list) => list.iter().filter(|s| s.length != 0).count() as u32,
            Data::Inline([]) => 0,
            Data::Inline(bytes) => (bytes.len() as u32 + 4).div_ceil(16),
        };
        let bbs = ds.div_ceil(4);
        let sq: &Poster = &qp.sq;
        let cur = self.cur_post.get();
        // Room in the ring past the last retired request's blocks.
        let room = self.room.get();
        if bbs > room && bbs > self.refill(sq) {
            return Err(crate::wr::refused(crate::sq_accounting::Refusal::Full));
        }
        let stream = dest.map_or(0, |d| d.stream.id());
        let seq = sq
            .admit(wr_id, flags & raw::IBV_SEND_SIGNALED != 0, stream, true)
            .map_err(crate::wr::refused)?;
        // SAFETY: the ring has room for `bbs` blocks from `cur` (checked above, nothing
        // unretired there); every write below stays in the ring, wrapping at its end.
        unsafe { self.write(cur, ds, op, dest, data, flags) };
        if self.wq_sig {
            // SAFETY: the request's `ds` units from block `cur`, just written.
            unsafe { self.sign(cur, ds) };
        }
        let next = cur.wrapping_add(bbs);
        self.cur_post.set(next);
        self.room.set(self.room.get() - bbs);
        let i = seq as usize & (self.end_bb.len() - 1);
        // SAFETY: power-of-two length, masked index.
        unsafe { self.end_bb.get_unchecked(i) }.set(next);
        sq.note_wqe(cur as u16, seq);
        self.nreq.set(self.nreq.get() + 1);
        if matches!(data, Data::Inline(_)) {
            self.inline.set(true);
        }
        Ok(())
    }

    /// libmlx5's `wq_sig` (`_common_wqe_finalize`): the WQE's signature byte (control segment
    /// byte 8, 0 until then) becomes the inverted xor of its `ds` 16-byte units. The units are
    /// read as the device fetches them, wrapping at the ring's end (libmlx5's `calc_sig` reads
    /// on past `qend`, which for a WQE that wraps is not what the device checks).
    ///
    /// # Safety
    /// The request's `ds` units from block `cur` are written, in the ring.
    #[cold]
    unsafe fn sign(&self, cur: u32, ds: u32) {
        let idx = (cur & (self.wqe_cnt - 1)) as usize;
        // SAFETY: `idx` is below `wqe_cnt`: a block of the ring.
        let ctrl = unsafe { self.buf.as_ptr().add(idx * BB) };
        let mut p = ctrl;
        let mut x = 0u8;
        for _ in 0..ds * 16 {
            // SAFETY: within the request's units, wrapping at `qend` (per the contract).
            unsafe {
                x ^= p.read();
                p = p.add(1);
            }
            if p == self.qend {
                p = self.buf.as_ptr();
            }
        }
        // SAFETY: byte 8 of the control segment.
        unsafe { ctrl.add(8).write(!x) };
    }

    /// # Safety
    /// `ds` units from block `cur` are free ring space.
    #[inline(always)]
    unsafe fn write(&self, cur: u32, ds: u32, op: Op, dest: Option<Dest<'_>>, data: Data<'_>, flags: u32) {
        let idx = (cur & (self.wqe_cnt - 1)) as usize;
        // The caller's room check: the request's blocks from `ctrl` are free ring space, and
        // every segment below is written within them, wrapping at `qend`.
        // SAFETY: `idx` is below `wqe_cnt`, so the block is in the ring.
        let ctrl = unsafe { self.buf.as_ptr().add(idx * BB) };
        let (opcode, imm) = op_code(op);
        let mut fm_ce_se = 0u8;
        if flags & raw::IBV_SEND_FENCE != 0 {
            fm_ce_se |= raw::MLX5_WQE_CTRL_FENCE as u8;
        }
        if flags & raw::IBV_SEND_SIGNALED != 0 {
            fm_ce_se |= raw::MLX5_WQE_CTRL_CQ_UPDATE as u8;
        }
        if flags & raw::IBV_SEND_SOLICITED != 0 {
            fm_ce_se |= raw::MLX5_WQE_CTRL_SOLICITED as u8;
        }
        let sid = dest.map_or(0, |d| d.stream.id()).to_be_bytes();
        // SAFETY: the control segment is the first 16 bytes of `ctrl`'s block.
        unsafe {
            put32(ctrl, ((cur & 0xffff) << 8 | opcode).to_be());
            put32(ctrl.add(4), (ds | self.qpn8).to_be());
            put32(ctrl.add(8), u32::from_ne_bytes([0, sid[0], sid[1], fm_ce_se]));
            if let Some(imm) = imm {
                put32(ctrl.add(12), imm);
            }
        }
        // RC: the segments follow the control segment in its block (no datagram segment).
        // SAFETY: 16 bytes into a block of the ring.
        let mut seg = unsafe { ctrl.add(16) };
        if let Some(dest) = dest {
            // SAFETY: the address vector fills the rest of `ctrl`'s block; `dest.av` is the
            // AH's 48-byte vector (non-null: checked by `post`), kept alive by the peer.
            unsafe { self.put_av(ctrl, dest.raw) };
            // SAFETY: one past the block at most (`qend`), replaced by the ring's start then.
            seg = unsafe { ctrl.add(BB) };
            if seg == self.qend {
                seg = self.buf.as_ptr();
            }
        }
        if let Some(r) = op_remote(op) {
            // SAFETY: the remote-address segment, at a block's start, in the request's blocks.
            unsafe {
                put64(seg, r.addr.to_be());
                put32(seg.add(8), r.rkey.to_be());
                put32(seg.add(12), 0);
                seg = seg.add(16);
            }
            match op {
                // SAFETY: the atomic segment follows in the same block.
                Op::CmpSwap(_, compare, swap) => unsafe {
                    put64(seg, swap.to_be());
                    put64(seg.add(8), compare.to_be());
                    seg = seg.add(16);
                },
                // SAFETY: as above.
                Op::FetchAdd(_, add) => unsafe {
                    put64(seg, add.to_be());
                    seg = seg.add(16);
                },
                _ => {}
            }
        }
        match data {
            Data::Sge(s) => {
                if s.length != 0 {
                    // SAFETY: the data segment, the request's last 16 bytes.
                    unsafe { put_dseg(seg, &s) };
                }
            }
            Data::List(list) => {
                for s in list {
                    if seg == self.qend {
                        seg = self.buf.as_ptr();
                    }
                    if s.length == 0 {
                        continue;
                    }
                    // SAFETY: one of the request's data segments, wrapped above at `qend`.
                    unsafe {
                        put_dseg(seg, s);
                        seg = seg.add(16);
                    }
                }
            }
            Data::Inline(bytes) => {
                if !bytes.is_empty() {
                    // SAFETY: the inline header and its bytes are the request's last units;
                    // the copy wraps at `qend`.
                    unsafe {
                        self.copy_wrapping(seg.add(4), bytes);
                        put32(seg, (bytes.len() as u32 | raw::MLX5_INLINE_SEG).to_be());
                    }
                }
            }
        }
        self.last_ctrl.set(ctrl);
        self.last_ds.set(ds);
    }

    /// A DC request's address vector (`mlx5dv_wr_set_dc_addr`): the AH's, with the DCT
    /// number and the key, after the control segment at `ctrl`.
    ///
    /// # Safety
    /// `ctrl` is a block of the ring; `dest.av` points to the AH's 48-byte vector.
    #[inline(always)]
    unsafe fn put_av(&self, ctrl: *mut u8, dest: &DestRaw) {
        // SAFETY: per the contract: bytes 16 to 63 of the block.
        unsafe {
            let av = ctrl.add(16);
            std::ptr::copy_nonoverlapping(dest.av.cast::<u8>(), av, std::mem::size_of::<raw::mlx5_wqe_av>());
            let dqp = av.add(std::mem::offset_of!(raw::mlx5_wqe_av, dqp_dct));
            put32(
                dqp,
                dqp.cast::<u32>().read() | (dest.dctn | raw::MLX5_EXTENDED_UD_AV).to_be(),
            );
            put64(av, dest.key.to_be());
        }
    }

    /// Copies `bytes` to `dest`, continuing at the ring's start where it ends.
    ///
    /// # Safety
    /// `dest` is in the ring and `bytes` fit in free ring space from it.
    #[inline(always)]
    unsafe fn copy_wrapping(&self, dest: *mut u8, bytes: &[u8]) {
        let room = self.qend as usize - dest as usize;
        // SAFETY: per the contract; the two parts are within the ring.
        unsafe {
            if bytes.len() > room {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), dest, room);
                std::ptr::copy_nonoverlapping(bytes.as_ptr().add(room), self.buf.as_ptr(), bytes.len() - room);
            } else {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), dest, bytes.len());
            }
        }
    }

    /// Posts the open batch (`mlx5_send_wr_complete` -> `post_send_db`): doorbell record,
    /// then BlueFlame or doorbell.
    /// Out of line: the batch's commit stays small enough to inline on the wr API (the
    /// barriers here cost more than the call).
    #[inline(never)]
    pub(crate) fn commit(&self) {
        let nreq = self.nreq.replace(0);
        if nreq == 0 {
            return;
        }
        let cur = self.cur_post.get();
        // The WQEs are written before the doorbell record.
        udma_to_device_barrier();
        // SAFETY: the doorbell record's send word, in memory the device reads.
        unsafe { std::ptr::write_volatile(self.dbrec, (cur & 0xffff).to_be()) };
        // The record is written before the register (mmio_wc_start).
        mmio_flush_writes();
        let ds = self.last_ds.get();
        let ctrl = self.last_ctrl.get();
        let offset = self.bf_offset.get();
        // SAFETY: the register is the QP's BlueFlame/doorbell register with two buffers of
        // `bf_size` bytes (or a doorbell when 0); `ctrl` is the last WQE, in the ring.
        unsafe {
            let reg = self.bf_reg.add(offset as usize);
            // `bf_size` 0 (no BlueFlame) fails the size test.
            if nreq == 1 && (self.inline.get() || self.prefer_bf) && ds > 1 && ds * 16 <= self.bf_size {
                self.bf_copy(reg, ctrl, (ds as usize * 16).div_ceil(BB));
            } else {
                std::ptr::write_volatile(reg.cast::<u64>(), ctrl.cast::<u64>().read());
            }
        }
        mmio_flush_writes();
        self.bf_offset.set(offset ^ self.bf_size);
    }

    /// Copies `blocks` 64-byte blocks from `src` (wrapping at the ring's end) to the register,
    /// in ascending order, block by block, as rdma-core's `mmio_memcpy_x64` does; the barriers
    /// around the call keep the stores from being dropped or moved out.
    ///
    /// # Safety
    /// `reg` has room for them; `src` is a block of the ring.
    #[inline(always)]
    unsafe fn bf_copy(&self, reg: *mut u8, mut src: *mut u8, blocks: usize) {
        for b in 0..blocks {
            // SAFETY: per the contract: 64 bytes within a block of the ring, to 64 bytes of
            // the register.
            unsafe {
                super::barrier::mmio_copy_64(reg.add(b * BB), src);
                src = src.add(BB);
            }
            if src == self.qend {
                src = self.buf.as_ptr();
            }
        }
    }
}

/// Units of 16 bytes the operation adds after the address vector.
#[inline(always)]
fn op_units(op: Op) -> u32 {
    match op {
        Op::Send | Op::SendImm(_) => 0,
        Op::Write(_) | Op::WriteImm(..) | Op::Read(_) => 1,
        Op::CmpSwap(..) | Op::FetchAdd(..) => 2,
    }
}

/// The WQE opcode, and the immediate (already big-endian) for the `_IMM` ones.
#[inline(always)]
fn op_code(op: Op) -> (u32, Option<u32>) {
    match op {
        Op::Send => (raw::MLX5_OPCODE_SEND, None),
        Op::SendImm(imm) => (raw::MLX5_OPCODE_SEND_IMM, Some(imm)),
        Op::Write(_) => (raw::MLX5_OPCODE_RDMA_WRITE, None),
        Op::WriteImm(_, imm) => (raw::MLX5_OPCODE_RDMA_WRITE_IMM, Some(imm)),
        Op::Read(_) => (raw::MLX5_OPCODE_RDMA_READ, None),
        Op::CmpSwap(..) => (raw::MLX5_OPCODE_ATOMIC_CS, None),
        Op::FetchAdd(..) => (raw::MLX5_OPCODE_ATOMIC_FA, None),
    }
}

#[inline(always)]
fn op_remote(op: Op) -> Option<crate::addr::RemoteMemory> {
    match op {
        Op::Write(r) | Op::WriteImm(r, _) | Op::Read(r) | Op::CmpSwap(r, ..) | Op::FetchAdd(r, _) => Some(r),
        Op::Send | Op::SendImm(_) => None,
    }
}

/// Out of line and given the name only: an `Op` passed by value would be passed by
/// reference, and keep the request's builder in memory on the post path.
#[cold]
#[inline(never)]
fn no_av(op: &'static str, qp: &QpRaw) -> Error {
    Error::invalid(
        op,
        "the peer's address handle has no mlx5 address vector (an adopted AH): create it with Pd::create_ah for a direct DCI",
    )
    .on(qp.device())
}

/// # Safety
/// `p` is valid for a 4-byte write, 4-byte aligned.
#[inline(always)]
unsafe fn put32(p: *mut u8, v: u32) {
    // SAFETY: per the contract.
    unsafe { p.cast::<u32>().write(v) }
}

/// # Safety
/// `p` is valid for an 8-byte write, 8-byte aligned.
#[inline(always)]
unsafe fn put64(p: *mut u8, v: u64) {
    // SAFETY: per the contract.
    unsafe { p.cast::<u64>().write(v) }
}

/// # Safety
/// `p` is a 16-byte segment of the ring.
#[inline(always)]
unsafe fn put_dseg(p: *mut u8, s: &raw::ibv_sge) {
    // SAFETY: per the contract.
    unsafe {
        put32(p, s.length.to_be());
        put32(p.add(4), s.lkey.to_be());
        put64(p.add(8), s.addr.to_be());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::RemoteMemory;
    use crate::qp::Parents;
    use std::mem::ManuallyDrop;

    /// A ring of `wqe_cnt` blocks in memory, no device: what `mlx5dv_init_obj` would describe.
    struct Fake {
        ring: Vec<u64>,
        dbrec: [u32; 2],
        bf: BfRegister,
    }

    /// A BlueFlame register's two buffers, aligned as the device's page is.
    #[repr(align(64))]
    struct BfRegister([u64; 128]);

    impl Fake {
        /// A ring of `blocks` zeroed 64-byte blocks, its doorbell record and BlueFlame buffer.
        fn with_blocks(blocks: usize) -> Fake {
            Fake {
                ring: vec![0; blocks * BB / 8],
                dbrec: [0; 2],
                bf: BfRegister([0; 128]),
            }
        }
    }

    fn direct_sq(f: &mut Fake, wqe_cnt: u32, max_send_wr: u32) -> DirectSq {
        direct_sq_signed(f, wqe_cnt, max_send_wr, false)
    }

    fn direct_sq_signed(f: &mut Fake, wqe_cnt: u32, max_send_wr: u32, wq_sig: bool) -> DirectSq {
        let buf = NonNull::new(f.ring.as_mut_ptr().cast::<u8>()).unwrap();
        let dbrec = f.dbrec.as_mut_ptr().wrapping_add(1);
        // SAFETY: `f` outlives the queue in the test (ring of `wqe_cnt` blocks, 2 BlueFlame
        // buffers of 256 bytes).
        unsafe {
            DirectSq::on_ring(
                buf,
                wqe_cnt,
                dbrec,
                f.bf.0.as_mut_ptr().cast(),
                256,
                true,
                wq_sig,
                0x123,
                max_send_wr,
            )
        }
    }

    /// A QP around `d` whose library handles are never touched (`post` reads the count and,
    /// for errors, the device name): never dropped, so nothing is destroyed.
    fn qp(d: DirectSq, max_send_wr: u32, wqe_cnt: u32) -> ManuallyDrop<QpRaw> {
        ManuallyDrop::new(QpRaw {
            qp: NonNull::dangling(),
            qpx: NonNull::dangling(),
            mqp: None,
            send_ops: 0,
            dci_streams: false,
            max_send_sge: 1,
            max_inline_data: 64,
            sq: Poster::with_wqe_map(max_send_wr, false, wqe_cnt as usize),
            direct: true,
            parents: Box::new(Parents {
                device: "fake0".into(),
                direct: Some(d),
                caps: raw::ibv_qp_cap {
                    max_send_wr,
                    max_send_sge: 1,
                    max_inline_data: 64,
                    ..Default::default()
                },
                ..Parents::default()
            }),
        })
    }

    /// Posts one signaled RC write of inline `bytes` (wr_id 5) at ring block `start` and rings
    /// it; returns the remote memory it names.
    fn rc_inline_write_at(q: &QpRaw, start: u32, bytes: &[u8]) -> RemoteMemory {
        let d = q.direct().unwrap();
        d.restart_at(0, start);
        let remote = RemoteMemory {
            addr: 0x1122_3344_5566_7788,
            len: 64,
            rkey: 0xAABB_CCDD,
        };
        d.start();
        d.post::<true>(
            q,
            Op::Write(remote),
            None,
            Data::Inline(bytes),
            raw::IBV_SEND_SIGNALED,
            5,
        )
        .unwrap();
        d.commit();
        remote
    }

    #[test]
    fn an_rc_request_has_no_address_vector_its_segments_follow_the_control_segment_and_wrap() {
        let mut f = Fake::with_blocks(8);
        let q = qp(direct_sq(&mut f, 8, 8), 8, 8);
        let d = q.direct().unwrap();
        let bytes: Vec<u8> = (0..60).collect();
        let remote = rc_inline_write_at(&q, 7, &bytes);
        q.sq.commit();
        // Control 1 + remote address 1 + inline 4 units: 2 blocks from the ring's last.
        assert_eq!(d.cur_post.get(), 9);
        assert_eq!(u32::from_be(f.dbrec[1]), 9);
        let ring: Vec<u8> = f.ring.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let ctrl = &ring[7 * BB..];
        let be32 = |b: &[u8]| u32::from_be_bytes(b[..4].try_into().unwrap());
        assert_eq!(be32(ctrl), 7 << 8 | raw::MLX5_OPCODE_RDMA_WRITE);
        assert_eq!(be32(&ctrl[4..]), 0x123 << 8 | 6, "QP number and 6 units");
        assert_eq!(ctrl[11], raw::MLX5_WQE_CTRL_CQ_UPDATE as u8);
        assert_eq!(
            &ctrl[16..24],
            &remote.addr.to_be_bytes(),
            "remote address right after the control"
        );
        assert_eq!(be32(&ctrl[24..]), remote.rkey);
        assert_eq!(be32(&ctrl[32..]), 60 | raw::MLX5_INLINE_SEG);
        assert_eq!(&ctrl[36..64], &bytes[..28], "inline bytes to the ring's end");
        assert_eq!(&ring[..32], &bytes[28..], "the rest at the ring's start");
    }

    #[test]
    fn a_request_whose_blocks_would_overwrite_an_unretired_wqe_is_refused_until_the_oldest_retires() {
        // 8 blocks, room for 64 requests by count: the blocks bind first.
        let mut f = Fake::with_blocks(8);
        let q = qp(direct_sq(&mut f, 8, 64), 64, 8);
        let d = q.direct().unwrap();
        let av = [0u8; 48];
        let dest = DestRaw {
            ah: std::ptr::null_mut(),
            av: av.as_ptr().cast(),
            dctn: 0x42,
            key: 7,
        };
        let remote = RemoteMemory {
            addr: 0x1000,
            len: 64,
            rkey: 9,
        };
        // An inline write of 60 bytes: 4 + 1 + 4 units, 3 blocks.
        let write = |wr_id| {
            d.post::<false>(
                &q,
                Op::Write(remote),
                Some(Dest {
                    raw: &dest,
                    stream: crate::wr::Stream::NONE,
                }),
                Data::Inline(&[0xAB; 60]),
                raw::IBV_SEND_SIGNALED,
                wr_id,
            )
        };
        d.start();
        write(1).unwrap();
        write(2).unwrap();
        let err = write(3).expect_err("3 blocks do not fit in the 2 left");
        assert!(err.is_would_block(), "{err}");
        d.commit();
        q.sq.commit();
        assert_eq!(u32::from_be(f.dbrec[1]), 6, "the doorbell record names the next block");
        // The first request's completion frees its 3 blocks: now it fits, at block 6 (wrapping).
        assert_eq!(q.sq.shared().complete(0, true, false), Some(1));
        d.start();
        write(3).unwrap();
        assert_eq!(d.cur_post.get(), 9);
        assert_eq!(
            q.sq.shared().seq_of_wqe(6),
            Some(2),
            "a completion naming block 6 retires the third request"
        );
        let err = write(4).expect_err("the second request still holds blocks 3 to 5");
        assert!(err.is_would_block(), "{err}");
        d.abort();
        q.sq.abort();
        assert_eq!(d.cur_post.get(), 6, "an aborted batch gives its blocks back");
    }

    #[test]
    fn a_qp_created_with_signatures_carries_each_wqes_inverted_xor_also_across_the_wrap() {
        for (wq_sig, start) in [(true, 0), (true, 7), (false, 7)] {
            let mut f = Fake::with_blocks(8);
            let q = qp(direct_sq_signed(&mut f, 8, 8, wq_sig), 8, 8);
            let bytes: Vec<u8> = (1..=60).collect();
            rc_inline_write_at(&q, start, &bytes);
            let ring: Vec<u8> = f.ring.iter().flat_map(|w| w.to_ne_bytes()).collect();
            // The request's 6 units (96 bytes) as the device fetches them, from block `start`.
            let wqe: Vec<u8> = (0..96).map(|i| ring[(start as usize * BB + i) % ring.len()]).collect();
            let all = wqe.iter().fold(0u8, |x, b| x ^ b);
            if wq_sig {
                assert_eq!(all, 0xff, "from block {start}: the signature makes the WQE's xor 0xff");
                assert_ne!(wqe[8], 0, "from block {start}");
            } else {
                assert_eq!(wqe[8], 0, "no signature on a QP created without");
            }
        }
    }
}
