//! The memory barriers of rdma-core's `util/udma_barrier.h` the direct backend needs, per
//! architecture: ordering the crate's stores and loads against the device's DMA and the
//! write-combining doorbell page.

use std::sync::atomic::Ordering;

/// rdma-core's `udma_to_device_barrier`: memory the device reads is written before what
/// follows.
#[inline(always)]
pub(super) fn udma_to_device_barrier() {
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a barrier instruction only.
    unsafe {
        std::arch::asm!("dmb oshst", options(nostack, preserves_flags))
    };
    #[cfg(not(target_arch = "aarch64"))]
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
}

/// rdma-core's `mmio_flush_writes` (and `mmio_wc_start`): stores to write-combining memory
/// leave the CPU before what follows.
#[inline(always)]
pub(super) fn mmio_flush_writes() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a barrier instruction only.
    unsafe {
        std::arch::asm!("sfence", options(nostack, preserves_flags))
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a barrier instruction only.
    unsafe {
        std::arch::asm!("dsb st", options(nostack, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    std::sync::atomic::fence(Ordering::SeqCst);
}

/// rdma-core's `udma_from_device_barrier`: what the device wrote (a CQE's body) is read after
/// what said it is there (its owner bit).
#[inline(always)]
pub(super) fn udma_from_device_barrier() {
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a load barrier instruction (what rdma-core emits on aarch64); touches no memory.
    unsafe {
        core::arch::asm!("dmb oshld", options(nostack, preserves_flags))
    };
    #[cfg(not(target_arch = "aarch64"))]
    std::sync::atomic::fence(Ordering::Acquire);
}
