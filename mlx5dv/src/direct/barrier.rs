//! The memory barriers of rdma-core's `util/udma_barrier.h` the direct backend needs, per
//! architecture: ordering the crate's stores and loads against the device's DMA and the
//! write-combining doorbell page; and the 64-byte BlueFlame copy of `util/mmio.h`.
//!
//! Only x86_64 and aarch64 have them here ([`supported`]): on any other architecture a direct
//! QP or CQ is refused (the wr API, whose barriers are libmlx5's, works everywhere). rdma-core
//! uses `sync`/`lwsync` on POWER and `fence ow,ow`/`fence ir,ir` on RISC-V, which nothing here
//! could run or check.

/// Whether the direct backend has rdma-core's barriers for `arch` (`std::env::consts::ARCH`).
pub(crate) fn supported(arch: &str) -> bool {
    matches!(arch, "x86_64" | "aarch64")
}

/// The refusal of a direct QP or CQ on an architecture without the backend's barriers.
pub(crate) fn refuse_unsupported(op: &'static str, arch: &str) -> crate::error::Result<()> {
    if supported(arch) {
        return Ok(());
    }
    Err(crate::error::Error::from_errno(
        op,
        libc::EOPNOTSUPP,
        format!(
            "the direct backend has rdma-core's device barriers for x86_64 and aarch64 only, not {arch}: use SendBackend::WrApi and Context::create_cq (libmlx5's barriers)"
        ),
    ))
}

/// rdma-core's `mmio_memcpy_x64` for one 64-byte block: stores in strictly ascending order, as
/// one 64-byte `st4` on aarch64 (`vst4q_u64` after `vld4q_u64`, as rdma-core); on x86_64 four
/// ordered (volatile) 16-byte SSE stores, where rdma-core's generic path makes eight 8-byte
/// ones: the same ascending order into the write-combining buffer, in half the instructions;
/// elsewhere (and under Miri) eight ordered 8-byte stores.
///
/// # Safety
/// `dst` and `src` are valid for 64 bytes; `dst` 16-byte aligned (a BlueFlame register).
#[inline(always)]
pub(super) unsafe fn mmio_copy_64(dst: *mut u8, src: *const u8) {
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    // SAFETY: per the contract: 64 readable bytes at `src`, 64 writable at `dst`; the vector
    // registers are declared clobbered.
    unsafe {
        std::arch::asm!(
            "ld4 {{v0.2d, v1.2d, v2.2d, v3.2d}}, [{src}]",
            "st4 {{v0.2d, v1.2d, v2.2d, v3.2d}}, [{dst}]",
            src = in(reg) src,
            dst = in(reg) dst,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            options(nostack, preserves_flags)
        )
    };
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    for i in 0..4 {
        use std::arch::x86_64::__m128i;
        // SAFETY: per the contract: the i-th 16 bytes at both ends, `dst` 16-byte aligned;
        // volatile stores are neither merged, split, dropped nor reordered among themselves.
        unsafe {
            let v = src.cast::<__m128i>().add(i).read_unaligned();
            std::ptr::write_volatile(dst.cast::<__m128i>().add(i), v);
        }
    }
    #[cfg(any(miri, not(any(target_arch = "aarch64", target_arch = "x86_64"))))]
    for i in 0..8 {
        // SAFETY: per the contract: word i of the 64 bytes at both ends.
        unsafe {
            let word = src.cast::<u64>().add(i).read_unaligned();
            std::ptr::write_volatile(dst.cast::<u64>().add(i), word);
        }
    }
}

/// rdma-core's `udma_to_device_barrier`: memory the device reads is written before what
/// follows.
#[inline(always)]
pub(super) fn udma_to_device_barrier() {
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    // SAFETY: a barrier instruction only.
    unsafe {
        std::arch::asm!("dmb oshst", options(nostack, preserves_flags))
    };
    #[cfg(not(all(target_arch = "aarch64", not(miri))))]
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

/// rdma-core's `mmio_flush_writes` (and `mmio_wc_start`): stores to write-combining memory
/// leave the CPU before what follows.
#[inline(always)]
pub(super) fn mmio_flush_writes() {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: a barrier instruction only.
    unsafe {
        std::arch::asm!("sfence", options(nostack, preserves_flags))
    };
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    // SAFETY: a barrier instruction only.
    unsafe {
        std::arch::asm!("dsb st", options(nostack, preserves_flags))
    };
    // Miri runs no assembly: a fence stands in (the unit tests' memory is ordinary).
    #[cfg(any(miri, not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// rdma-core's `udma_from_device_barrier`: what the device wrote (a CQE's body) is read after
/// what said it is there (its owner bit).
#[inline(always)]
pub(super) fn udma_from_device_barrier() {
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    // SAFETY: a load barrier instruction (what rdma-core emits on aarch64); touches no memory.
    unsafe {
        core::arch::asm!("dmb oshld", options(nostack, preserves_flags))
    };
    #[cfg(not(all(target_arch = "aarch64", not(miri))))]
    std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_direct_backend_is_refused_where_it_has_no_rdma_core_barriers() {
        assert!(refuse_unsupported("op", "x86_64").is_ok());
        assert!(refuse_unsupported("op", "aarch64").is_ok());
        for arch in ["powerpc64", "riscv64", "s390x", "loongarch64"] {
            let err = refuse_unsupported("Context::create_direct_cq", arch).expect_err(arch);
            assert_eq!(err.errno(), Some(libc::EOPNOTSUPP));
            let text = err.to_string();
            assert!(text.contains(arch) && text.contains("WrApi"), "{text}");
        }
        assert!(supported(std::env::consts::ARCH) == cfg!(any(target_arch = "x86_64", target_arch = "aarch64")));
    }

    #[test]
    fn the_blueflame_block_copy_writes_the_64_bytes_it_reads() {
        #[repr(align(64))]
        struct Block([u64; 8]);
        let src = Block(std::array::from_fn(|i| 0x0101_0101_0101_0101 * (i as u64 + 1)));
        let mut dst = Block([0; 8]);
        // SAFETY: 64 aligned bytes each.
        unsafe { mmio_copy_64(dst.0.as_mut_ptr().cast(), src.0.as_ptr().cast()) };
        assert_eq!(dst.0, src.0);
    }
}
