//! Access to the memory the application registered and the rings libmlx5 allocated.
//!
//! The device reads and writes process memory by address, as a ConnectX does by DMA. Here the
//! device model runs inside the application's process (loaded with LD_PRELOAD), so an address
//! the library handed over (a ring, a doorbell record, a registered buffer) is a pointer into
//! this address space. Every access goes through [`Dma`], so the model's code never holds a
//! reference into memory the application may change at any moment.

/// DMA into the application's address space.
pub trait Dma {
    /// Copies `buf.len()` bytes from `addr`.
    fn read(&self, addr: u64, buf: &mut [u8]);
    /// Copies `data` to `addr`.
    fn write(&self, addr: u64, data: &[u8]);
    /// Reads a big-endian u32 (doorbell records, WQE words).
    fn read_be32(&self, addr: u64) -> u32 {
        let mut b = [0u8; 4];
        self.read(addr, &mut b);
        u32::from_be_bytes(b)
    }
    /// Reads a big-endian u64.
    fn read_be64(&self, addr: u64) -> u64 {
        let mut b = [0u8; 8];
        self.read(addr, &mut b);
        u64::from_be_bytes(b)
    }
    /// 64-bit compare-and-swap / fetch-and-add on 8 aligned bytes in host byte order; returns
    /// the old value. mlx5_core configures the HCA's requestor endianness mode to host order
    /// when the device supports it (main.c handle_hca_cap_atomic), and mlx5_ib advertises
    /// IB_ATOMIC_HCA only in that mode (get_atomic_caps): the mode the profiles report.
    fn atomic_u64(&self, addr: u64, op: AtomicOp) -> u64;
}

/// The two IB atomics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// Compare and swap: (compare, swap).
    CompareSwap(u64, u64),
    /// Fetch and add.
    FetchAdd(u64),
}

/// DMA into this process: addresses are pointers.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalDma;

impl Dma for LocalDma {
    fn read(&self, addr: u64, buf: &mut [u8]) {
        // SAFETY: the address lies in a ring, doorbell record or registered region the library
        // handed to the device and that the device's bounds checks placed `buf.len()` bytes in;
        // volatile-free byte copy, as DMA does not synchronise with the CPU either.
        unsafe { std::ptr::copy_nonoverlapping(addr as usize as *const u8, buf.as_mut_ptr(), buf.len()) }
    }

    fn write(&self, addr: u64, data: &[u8]) {
        // SAFETY: as for `read`: the range was validated against a registration or a ring.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as usize as *mut u8, data.len()) }
    }

    fn atomic_u64(&self, addr: u64, op: AtomicOp) -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        // SAFETY: the responder checked that `addr` is 8-byte aligned and inside a region
        // registered with remote atomic access; AtomicU64 has the layout of u64.
        let cell = unsafe { &*(addr as usize as *const AtomicU64) };
        match op {
            AtomicOp::CompareSwap(compare, swap) => {
                let mut cur = cell.load(Ordering::SeqCst);
                loop {
                    if cur != compare {
                        return cur;
                    }
                    match cell.compare_exchange(cur, swap, Ordering::SeqCst, Ordering::SeqCst) {
                        Ok(old) => return old,
                        Err(now) => cur = now,
                    }
                }
            }
            AtomicOp::FetchAdd(add) => {
                let mut cur = cell.load(Ordering::SeqCst);
                loop {
                    let new = cur.wrapping_add(add);
                    match cell.compare_exchange(cur, new, Ordering::SeqCst, Ordering::SeqCst) {
                        Ok(old) => return old,
                        Err(now) => cur = now,
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomics_work_on_host_endian_memory() {
        let mut word = 5u64;
        let addr = &mut word as *mut u64 as u64;
        let dma = LocalDma;
        assert_eq!(dma.atomic_u64(addr, AtomicOp::FetchAdd(3)), 5);
        assert_eq!(dma.atomic_u64(addr, AtomicOp::CompareSwap(7, 1)), 8);
        assert_eq!(dma.atomic_u64(addr, AtomicOp::CompareSwap(8, 1)), 8);
        assert_eq!(word, 1);
    }
}
