//! The ring of a direct CQ, read by the crate as libmlx5's `cq.c` reads it: the entry at the
//! consumer index belongs to software when its opcode is not `MLX5_CQE_INVALID` and its owner
//! bit equals the index's wrap bit (`ci & cqe_cnt`); the body is read after a barrier; the
//! consumer index goes to the doorbell record (`update_cons_index`, 24 bits) once a poll is done.
//!
//! The ring lives in the CQ's shared core, so that a direct QP's RESET and destroy can clean its
//! entries out of it from the QP's thread, as libmlx5 does for its own CQs under the CQ's lock
//! (`mlx5_destroy_qp`, `mlx5_modify_qp` to RESET: `__mlx5_cq_clean`, which does nothing for a
//! CQ `mlx5dv_init_obj` described). Reading and cleaning hold the ring's lock: one uncontended
//! atomic swap per poll, never per entry.

use super::barrier::udma_from_device_barrier;
use crate::error::{Error, Result};
use mlx5dv_raw as raw;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// libmlx5's `MLX5_CQ_SET_CI` (providers/mlx5/mlx5.h, not in mlx5dv.h): the doorbell record
/// word holding the consumer index.
const MLX5_CQ_SET_CI: usize = 0;

/// Where a direct CQ's entries are and how far the crate has read them.
pub(crate) struct CqRing {
    /// Entry 0 (`mlx5dv_cq.buf`).
    buf: NonNull<u8>,
    /// `mlx5dv_cq.dbrec`.
    dbrec: NonNull<u32>,
    /// Entries (a power of two).
    cqe_cnt: u32,
    /// 64 or 128 bytes per entry.
    cqe_size: u32,
    /// log2 of `cqe_size`: an entry's offset is its index shifted by it.
    cqe_shift: u32,
    /// The 64-byte CQE of entry 0: `buf` plus `cqe_size - 64` (the second half of a 128-byte
    /// entry).
    cqe64_base: NonNull<u8>,
    /// The CQ number (for errors and Debug).
    cqn: u32,
    /// The consumer index: entries read so far (wraps at 2^32, as libmlx5's does). Written
    /// only under `lock`.
    ci: AtomicU32,
    /// Held while the ring is read or cleaned ([`CqRing::locked`]).
    lock: AtomicBool,
}

// SAFETY: the ring is the library CQ's memory, which lives as long as the core holding this ring;
// every access to it and to the consumer index is made under `lock` (through `Locked`), so one
// thread reads or cleans at a time.
unsafe impl Send for CqRing {}
// SAFETY: as above: shared holders reach the ring only through `locked`.
unsafe impl Sync for CqRing {}

/// The ring while its lock is held: what reads and cleans it.
pub(crate) struct Locked<'a>(&'a CqRing);

impl Drop for Locked<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.lock.store(false, Ordering::Release);
    }
}

impl std::ops::Deref for Locked<'_> {
    type Target = CqRing;
    #[inline]
    fn deref(&self) -> &CqRing {
        self.0
    }
}

impl CqRing {
    /// Describes `cq`'s ring through `mlx5dv_init_obj(MLX5DV_OBJ_CQ)`, which also tells libmlx5
    /// that the consumer index is no longer its own (it then leaves the CQ alone when a QP is
    /// reset or destroyed).
    ///
    /// # Safety
    /// `cq` must be a live CQ of an mlx5 device, polled from now on only through this ring.
    pub(crate) unsafe fn of(cq: *mut raw::ibv_cq, device: &str) -> Result<CqRing> {
        const OP: &str = "mlx5dv_init_obj (CQ)";
        // SAFETY: plain pointers and integers: all-zero is valid.
        let mut out: raw::mlx5dv_cq = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut obj: raw::mlx5dv_obj = unsafe { std::mem::zeroed() };
        obj.cq.r#in = cq;
        obj.cq.out = &mut out;
        // SAFETY: `cq` is a live mlx5 CQ (the caller's contract); `out` outlives the call.
        let rc = unsafe { raw::mlx5dv_init_obj(&mut obj, raw::MLX5DV_OBJ_CQ) };
        if rc != 0 {
            return Err(Error::from_errno(OP, rc, "libmlx5 would not describe the CQ's ring").on(device));
        }
        Self::from_parts(&out).map_err(|e| e.on(device))
    }

    /// Checks what `mlx5dv_init_obj` reported and keeps it.
    pub(crate) fn from_parts(cq: &raw::mlx5dv_cq) -> Result<CqRing> {
        const OP: &str = "Context::create_direct_cq";
        if cq.cqe_size != 64 && cq.cqe_size != 128 {
            return Err(Error::from_errno(
                OP,
                libc::EOPNOTSUPP,
                format!(
                    "the CQ has {}-byte entries; the direct reader decodes 64- and 128-byte CQEs only",
                    cq.cqe_size
                ),
            ));
        }
        if !cq.cqe_cnt.is_power_of_two() {
            return Err(Error::from_errno(
                OP,
                libc::EOPNOTSUPP,
                format!("the CQ has {} entries, not a power of two", cq.cqe_cnt),
            ));
        }
        let (Some(buf), Some(dbrec)) = (NonNull::new(cq.buf.cast::<u8>()), NonNull::new(cq.dbrec)) else {
            return Err(Error::from_errno(
                OP,
                libc::EOPNOTSUPP,
                "libmlx5 reported no ring or doorbell record for the CQ",
            ));
        };
        Ok(CqRing {
            buf,
            dbrec,
            cqe_cnt: cq.cqe_cnt,
            cqe_size: cq.cqe_size,
            cqe_shift: cq.cqe_size.trailing_zeros(),
            // SAFETY: the entry is cqe_size (64 or 128, checked above) bytes, so its last 64
            // bytes start inside the ring libmlx5 described.
            cqe64_base: unsafe { NonNull::new_unchecked(buf.as_ptr().add(cq.cqe_size as usize - 64)) },
            cqn: cq.cqn,
            ci: AtomicU32::new(0),
            lock: AtomicBool::new(false),
        })
    }

    /// Takes the ring's lock (spinning: a holder reads or cleans a ring of entries and lets
    /// go; nothing blocks while holding it).
    #[inline]
    pub(crate) fn locked(&self) -> Locked<'_> {
        while self.lock.swap(true, Ordering::Acquire) {
            while self.lock.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        }
        Locked(self)
    }

    /// The CQ number.
    pub(crate) fn cqn(&self) -> u32 {
        self.cqn
    }

    /// The start of entry `n` (`get_cqe`: `n` modulo the ring).
    #[inline]
    fn entry(&self, n: u32) -> *mut u8 {
        let index = (n & (self.cqe_cnt - 1)) as usize;
        // SAFETY: index < cqe_cnt and the ring holds cqe_cnt entries of cqe_size bytes
        // (mlx5dv_init_obj), so the entry lies inside it.
        unsafe { self.buf.as_ptr().add(index * self.cqe_size as usize) }
    }

    /// The 64-byte CQE of entry `n`: the entry itself, or its second half with 128-byte CQEs.
    #[inline]
    fn cqe64(&self, n: u32) -> *mut raw::mlx5_cqe64 {
        let offset = ((n & (self.cqe_cnt - 1)) as usize) << self.cqe_shift;
        // SAFETY: the index is below cqe_cnt and the ring holds cqe_cnt entries of cqe_size
        // (= 1 << cqe_shift) bytes, whose last 64 bytes (from cqe64_base on) lie inside each;
        // entries are 64-byte aligned (the ring is page aligned, entries 64 or 128 bytes).
        unsafe { self.cqe64_base.as_ptr().add(offset) }.cast()
    }

    /// `get_sw_cqe`: whether software owns entry `n` (its opcode is not INVALID and its owner
    /// bit is the wrap bit of `n`).
    #[inline]
    fn software_owns(&self, n: u32) -> bool {
        self.owns_at(self.cqe64(n), n)
    }

    /// [`CqRing::software_owns`] for `cqe`, entry `n`'s CQE ([`CqRing::cqe64`]).
    #[inline]
    fn owns_at(&self, cqe: *mut raw::mlx5_cqe64, n: u32) -> bool {
        // SAFETY: a CQE inside the ring (cqe64), a live byte; the device writes op_own last, so
        // it is read on its own first.
        let op_own = unsafe { std::ptr::addr_of!((*cqe).op_own).read_volatile() };
        let owner_bit = u8::from(n & self.cqe_cnt != 0);
        u32::from(op_own >> 4) != raw::MLX5_CQE_INVALID && (op_own & raw::MLX5_CQE_OWNER_MASK as u8) == owner_bit
    }
}

impl CqRing {
    /// Whether the entry at the consumer index may be software's, read without the lock: a
    /// poll that finds nothing then costs no lock. False only when that entry was the
    /// device's when read; a clean running at the same time moves the consumer index only
    /// past entries software owned, so a stale index names an entry software owned too (true:
    /// the caller then reads under the lock, which settles it).
    #[inline]
    pub(crate) fn may_have_entry(&self) -> bool {
        self.software_owns(self.ci.load(Ordering::Relaxed))
    }
}

/// An entry software owns, found by [`Locked::next`] while the ring's lock is held: the device
/// does not write it until the consumer index is published ([`Locked::update_cons_index`]),
/// and nothing else moves it while the lock is held ([`Locked::clean`], the only other writer,
/// holds the lock too; the poll that holds the entry calls it not).
#[derive(Copy, Clone)]
pub(crate) struct Entry<'a> {
    /// Its 64-byte CQE in the ring.
    cqe: *mut raw::mlx5_cqe64,
    _ring: std::marker::PhantomData<&'a CqRing>,
}

impl Entry<'_> {
    /// The CQE, copied out. A plain read, as libmlx5's: the caller's decoding then loads only
    /// the fields it uses (a volatile copy loads all 64 bytes one by one); read again where a
    /// rare case needs it, rather than kept in memory for it.
    #[inline(always)]
    pub(crate) fn read(&self) -> raw::mlx5_cqe64 {
        // SAFETY: a CQE inside the ring, software's (seen by `next`, after which the barrier
        // orders the body's reads) until the poll publishes the consumer index: the device does
        // not write it while it is read, and a clean waits for the lock the poll holds.
        unsafe { self.cqe.read() }
    }
}

impl Locked<'_> {
    /// The next entry if software owns it (`mlx5_get_next_cqe`), the consumer index advanced
    /// past it.
    #[inline(always)]
    pub(crate) fn next(&self) -> Option<Entry<'_>> {
        let ci = self.ci.load(Ordering::Relaxed);
        let cqe = self.cqe64(ci);
        if !self.owns_at(cqe, ci) {
            return None;
        }
        udma_from_device_barrier();
        self.ci.store(ci.wrapping_add(1), Ordering::Relaxed);
        Some(Entry {
            cqe,
            _ring: std::marker::PhantomData,
        })
    }
    /// `__mlx5_cq_clean`: removes the unread entries of QP `qp_num` (by the QP number in
    /// `sop_drop_qpn`), moving the later entries of other QPs back over them, and returns how
    /// many were removed. Call it once the QP is in RESET or destroyed (no new entries of it
    /// can come), where libmlx5 cleans its own CQs: it leaves a CQ that `mlx5dv_init_obj`
    /// described alone.
    pub(crate) fn clean(&self, qp_num: u32) -> u32 {
        let ci = self.ci.load(Ordering::Relaxed);
        let last = ci.wrapping_add(self.cqe_cnt - 1);
        let mut pi = ci;
        while self.software_owns(pi) && pi != last {
            pi = pi.wrapping_add(1);
        }
        udma_from_device_barrier();
        let mut freed = 0u32;
        while pi != ci {
            pi = pi.wrapping_sub(1);
            // SAFETY: a CQE inside the ring, owned by software (found above).
            let qpn = u32::from_be(unsafe { std::ptr::addr_of!((*self.cqe64(pi)).sop_drop_qpn).read() }) & 0xff_ffff;
            if qpn == qp_num {
                freed += 1;
            } else if freed > 0 {
                let dest = pi.wrapping_add(freed);
                // SAFETY: both entries lie inside the ring (entry) and differ (freed > 0,
                // fewer than cqe_cnt apart); the destination keeps its own owner bit, which
                // marks it software's at its place in the ring.
                unsafe {
                    let op_own = std::ptr::addr_of_mut!((*self.cqe64(dest)).op_own);
                    let owner = op_own.read() & raw::MLX5_CQE_OWNER_MASK as u8;
                    std::ptr::copy_nonoverlapping(self.entry(pi), self.entry(dest), self.cqe_size as usize);
                    op_own.write(owner | (op_own.read() & !(raw::MLX5_CQE_OWNER_MASK as u8)));
                }
            }
        }
        if freed > 0 {
            self.ci.store(ci.wrapping_add(freed), Ordering::Relaxed);
            self.update_cons_index();
        }
        freed
    }

    /// `update_cons_index`: tells the device how far the ring was read (after the entries were
    /// copied out, so it may reuse them).
    #[inline]
    pub(crate) fn update_cons_index(&self) {
        let ci = (self.ci.load(Ordering::Relaxed) & 0xff_ffff).to_be();
        // SAFETY: the doorbell record is a 4-byte-aligned, live word of the CQ's doorbell
        // page, which the device only reads; the release store orders the CQE reads before it.
        let word = unsafe { AtomicU32::from_ptr(self.dbrec.as_ptr().add(MLX5_CQ_SET_CI)) };
        word.store(ci, Ordering::Release);
    }

    /// The consumer index (entries read so far).
    #[cfg(test)]
    pub(crate) fn consumer_index(&self) -> u32 {
        self.ci.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for CqRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CqRing")
            .field("cqn", &self.cqn)
            .field("cqe_cnt", &self.cqe_cnt)
            .field("cqe_size", &self.cqe_size)
            .field("ci", &self.ci.load(Ordering::Relaxed))
            .finish()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A CQE as the device writes it: `opcode` in op_own's high nibble, big-endian fields.
    pub(crate) fn cqe(opcode: u32, wqe_opcode: u32, qp_num: u32, wqe_counter: u16) -> raw::mlx5_cqe64 {
        // SAFETY: plain integers: all-zero is valid.
        let mut c: raw::mlx5_cqe64 = unsafe { std::mem::zeroed() };
        c.sop_drop_qpn = (wqe_opcode << 24 | qp_num).to_be();
        c.wqe_counter = wqe_counter.to_be();
        c.op_own = (opcode << 4) as u8;
        c
    }

    /// An error CQE with `syndrome` and `vendor`.
    pub(crate) fn err_cqe(syndrome: u32, vendor: u8, qp_num: u32, wqe_counter: u16) -> raw::mlx5_cqe64 {
        let mut c = cqe(raw::MLX5_CQE_REQ_ERR, raw::MLX5_OPCODE_SEND, qp_num, wqe_counter);
        // The error view: vendor_err_synd at 54, syndrome at 55 (mlx5_err_cqe).
        // SAFETY: mlx5_cqe64 is 64 plain bytes.
        let bytes = unsafe { &mut *(&mut c as *mut raw::mlx5_cqe64).cast::<[u8; 64]>() };
        bytes[54] = vendor;
        bytes[55] = syndrome as u8;
        c
    }

    /// A ring in test memory, as libmlx5 initialises it (every entry's op_own INVALID << 4).
    pub(crate) struct TestRing {
        mem: Vec<u64>,
        pub(crate) dbrec: Box<[u32; 2]>,
        cqe_cnt: u32,
        cqe_size: u32,
    }

    impl TestRing {
        pub(crate) fn new(cqe_cnt: u32, cqe_size: u32) -> TestRing {
            let mut r = TestRing {
                mem: vec![0; (cqe_cnt * cqe_size / 8) as usize],
                dbrec: Box::new([0; 2]),
                cqe_cnt,
                cqe_size,
            };
            for i in 0..cqe_cnt {
                r.bytes_of(i)[63] = (raw::MLX5_CQE_INVALID << 4) as u8;
            }
            r
        }
        fn bytes_of(&mut self, index: u32) -> &mut [u8] {
            let start = (index * self.cqe_size + self.cqe_size - 64) as usize;
            // SAFETY: mem is plain u64s; viewed as bytes within its length.
            let all = unsafe { std::slice::from_raw_parts_mut(self.mem.as_mut_ptr().cast::<u8>(), self.mem.len() * 8) };
            &mut all[start..start + 64]
        }
        /// The device writes CQE number `pi` (producer index) with the owner bit of its pass.
        pub(crate) fn produce(&mut self, pi: u32, mut c: raw::mlx5_cqe64) {
            c.op_own |= u8::from(pi & self.cqe_cnt != 0);
            let cnt = self.cqe_cnt;
            // SAFETY: mlx5_cqe64 is 64 plain bytes.
            let src = unsafe { std::slice::from_raw_parts((&c as *const raw::mlx5_cqe64).cast::<u8>(), 64) };
            self.bytes_of(pi & (cnt - 1)).copy_from_slice(src);
        }
        pub(crate) fn ring(&mut self) -> CqRing {
            CqRing::from_parts(&raw::mlx5dv_cq {
                buf: self.mem.as_mut_ptr().cast(),
                dbrec: self.dbrec.as_mut_ptr(),
                cqe_cnt: self.cqe_cnt,
                cqe_size: self.cqe_size,
                cq_uar: std::ptr::null_mut(),
                cqn: 7,
                comp_mask: 0,
            })
            .expect("a valid ring")
        }
    }

    fn wqe_of(c: &raw::mlx5_cqe64) -> u16 {
        u16::from_be(c.wqe_counter)
    }

    #[test]
    fn entries_are_read_in_order_across_the_wrap_by_owner_bit_for_64_and_128_byte_cqes() {
        for size in [64, 128] {
            let mut t = TestRing::new(4, size);
            let owned = t.ring();
            let ring = owned.locked();
            assert!(ring.next().is_none(), "an INVALID entry is the device's");
            // Three passes over a 4-entry ring: the owner bit flips each pass.
            for pi in 0..12u32 {
                t.produce(pi, cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_SEND, 1, pi as u16));
                let got = ring.next().expect("the entry just written").read();
                assert_eq!(wqe_of(&got), pi as u16, "{size}-byte CQEs, entry {pi}");
                assert!(ring.next().is_none(), "the next entry still has last pass's owner bit");
            }
            assert_eq!(ring.consumer_index(), 12);
        }
    }

    #[test]
    fn an_entry_of_the_previous_pass_is_not_read_again() {
        let mut t = TestRing::new(2, 64);
        let owned = t.ring();
        let ring = owned.locked();
        t.produce(0, cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_SEND, 1, 0));
        t.produce(1, cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_SEND, 1, 1));
        assert!(ring.next().is_some() && ring.next().is_some());
        // ci = 2: entry 0 must carry owner 1 now; it still has 0 from the first pass.
        assert!(ring.next().is_none());
    }

    #[test]
    fn cleaning_a_qp_removes_its_unread_entries_and_keeps_the_others_in_order_across_the_wrap() {
        for size in [64, 128] {
            let mut t = TestRing::new(4, size);
            let owned = t.ring();
            let ring = owned.locked();
            // Two read entries, then four unread ones crossing the wrap: QPs 1, 2, 1, 3.
            for pi in 0..2u32 {
                t.produce(pi, cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_SEND, 9, pi as u16));
                assert!(ring.next().is_some());
            }
            for (pi, qpn) in [(2u32, 1u32), (3, 2), (4, 1), (5, 3)] {
                t.produce(pi, cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_SEND, qpn, pi as u16));
            }
            assert_eq!(ring.clean(1), 2, "{size}-byte CQEs");
            assert_eq!(u32::from_be(t.dbrec[0]), 4, "the consumer index passes the two removed");
            let left: Vec<(u32, u16)> = std::iter::from_fn(|| ring.next().map(|e| e.read()))
                .map(|c| (u32::from_be(c.sop_drop_qpn) & 0xff_ffff, wqe_of(&c)))
                .collect();
            assert_eq!(left, [(2, 3), (3, 5)], "{size}-byte CQEs: the others, in order");
            assert_eq!(ring.clean(7), 0, "nothing of a QP without entries");
            // The ring goes on: the device's next entry is read where it lands.
            t.produce(6, cqe(raw::MLX5_CQE_REQ, raw::MLX5_OPCODE_SEND, 4, 6));
            assert_eq!(ring.next().map(|c| wqe_of(&c.read())), Some(6));
        }
    }

    #[test]
    fn the_consumer_index_goes_to_doorbell_word_0_big_endian_in_24_bits() {
        let mut t = TestRing::new(2, 64);
        let owned = t.ring();
        let ring = owned.locked();
        ring.ci.store(0x0123_4567, Ordering::Relaxed);
        ring.update_cons_index();
        assert_eq!(u32::from_be(t.dbrec[0]), 0x23_4567);
        assert_eq!(t.dbrec[1], 0, "the arm word is not touched");
    }

    #[test]
    fn rings_the_reader_cannot_decode_are_refused() {
        let mut t = TestRing::new(4, 64);
        let mut attr = raw::mlx5dv_cq {
            buf: t.mem.as_mut_ptr().cast(),
            dbrec: t.dbrec.as_mut_ptr(),
            cqe_cnt: 4,
            cqe_size: 32,
            cq_uar: std::ptr::null_mut(),
            cqn: 1,
            comp_mask: 0,
        };
        let err = CqRing::from_parts(&attr).unwrap_err();
        assert_eq!(err.errno(), Some(libc::EOPNOTSUPP));
        assert!(err.to_string().contains("32-byte"), "{err}");
        attr.cqe_size = 64;
        attr.cqe_cnt = 3;
        assert_eq!(CqRing::from_parts(&attr).unwrap_err().errno(), Some(libc::EOPNOTSUPP));
    }
}
