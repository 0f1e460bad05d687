//! The safe post path against the C recording table: every argument arrives, bad input is
//! refused before anything reaches the library, and posting allocates nothing.
use mlx5dv::{RemoteMemory, WcStatus};
use mlx5dv_suite::fake::{fakes, peer, sge};
use mlx5dv_suite::recorder::recorder;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Only the measuring thread counts: libtest's other threads allocate at any time.
    static COUNTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn count() {
    if COUNTING.with(|c| c.get()) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator, counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const DCTN: u32 = 0x00AB_CDEF;
const KEY: u64 = 0xFFEE_DDCC_BBAA_9988;

#[test]
fn dc_send_reaches_the_library_with_destination_data_wr_id_and_flags() {
    let r = recorder();
    let mut f = fakes(&r);
    let peer = peer(&f.ah, DCTN, KEY);
    let mut batch = f.dci.batch();
    batch.send(0x1122_3344).to(&peer).sge(sge(0xA000, 64, 0x77)).unwrap();
    let rec = r.last();
    assert_eq!(rec.op(), "wr_set_sge");
    assert_eq!(&rec.a[..3], &[0x77, 0xA000, 64]);
    assert_eq!(rec.wr_id, 0x1122_3344);
    assert_eq!(rec.wr_flags, mlx5dv::raw::IBV_SEND_SIGNALED);
    batch.commit().unwrap();
    assert_eq!(r.last().op(), "wr_complete");
    // start + send + set_dc_addr + set_sge + complete
    assert_eq!(r.last().calls, 5);
}

#[test]
fn dc_address_and_stream_arrive_bit_exact() {
    let r = recorder();
    let mut f = fakes(&r);
    let streamed = peer(&f.ah, DCTN, KEY).stream(0xBEEF);
    let mut batch = f.dci.batch();
    batch
        .rdma_write(
            7,
            RemoteMemory {
                addr: 0x10_0000,
                len: 4096,
                rkey: 0x5151,
            },
        )
        .unsignaled()
        .to(&streamed)
        .inline(b"hello")
        .unwrap();
    let rec = r.last();
    assert_eq!(rec.op(), "wr_set_inline_data");
    assert_eq!(rec.a[0], 5);
    // Unsignaled, and no IBV_SEND_INLINE: not a wr-API flag (ibv_wr_post(3)); inline data
    // goes by ibv_wr_set_inline_data alone.
    assert_eq!(rec.wr_flags, 0, "unsignaled, no IBV_SEND_INLINE");
    drop(batch);
    assert_eq!(r.last().op(), "wr_abort", "an uncommitted batch is aborted on drop");
}

#[test]
fn refused_requests_reach_nothing_and_leave_the_batch_usable() {
    let r = recorder();
    let mut f = fakes(&r);
    let p = peer(&f.ah, DCTN, KEY);
    let small = RemoteMemory {
        addr: 0x10_0000,
        len: 16,
        rkey: 1,
    };
    let mut batch = f.dci.batch();
    let calls = r.last().calls;
    let err = batch.rdma_write(1, small).to(&p).sge(sge(0xA000, 64, 1)).unwrap_err();
    assert_eq!(err.errno(), Some(libc::EINVAL));
    assert!(err.to_string().contains("longer than the remote range"), "{err}");
    let err = batch
        .atomic_fetch_add(2, small, 1)
        .to(&p)
        .sge(sge(0xA000, 4, 1))
        .unwrap_err();
    assert!(err.to_string().contains("8-byte"), "{err}");
    let err = batch.rdma_read(3, small).to(&p).inline(b"x").unwrap_err();
    assert!(err.to_string().contains("registered local buffer"), "{err}");
    assert_eq!(r.last().calls, calls, "nothing reached the library");
    batch.send(4).to(&p).sge(sge(0xA000, 8, 1)).unwrap();
    batch.commit().unwrap();
    assert_eq!(r.last().op(), "wr_complete");
}

#[test]
fn a_full_send_queue_is_reported_by_commit() {
    let r = recorder();
    let mut f = fakes(&r);
    let p = peer(&f.ah, DCTN, KEY);
    r.set_return(libc::ENOMEM as i64);
    let mut batch = f.dci.batch();
    batch.send(1).to(&p).sge(sge(0xA000, 8, 1)).unwrap();
    let err = batch.commit().unwrap_err();
    assert_eq!(err.errno(), Some(libc::ENOMEM));
    assert!(err.to_string().contains("nothing in this batch was posted"), "{err}");
}

#[test]
fn rc_operations_pass_remote_address_keys_and_operands() {
    let r = recorder();
    let mut f = fakes(&r);
    let remote = RemoteMemory {
        addr: 0x7F00_0000_0008,
        len: 8,
        rkey: 0x89AB_CDEF,
    };
    let mut batch = f.rc.batch();
    batch
        .atomic_cmp_swp(9, remote, 0x0123_4567_89AB_CDEF, 0xF0E1_D2C3_B4A5_9687)
        .sge(sge(0xB000, 8, 2))
        .unwrap();
    batch.send_imm(10, 0xDEAD_BEEF).sge(sge(0xB000, 8, 2)).unwrap();
    batch.commit().unwrap();
    assert_eq!(WcStatus::from_raw(0), WcStatus::Success);
}

#[test]
fn posting_allocates_nothing() {
    let r = recorder();
    let mut f = fakes(&r);
    let p = peer(&f.ah, DCTN, KEY);
    let remote = RemoteMemory {
        addr: 0x10_0000,
        len: 1 << 20,
        rkey: 3,
    };
    let local = sge(0xA000, 256, 1);
    // The counter works: a Vec allocation on this thread is seen.
    COUNTING.with(|c| c.set(true));
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    drop(std::hint::black_box(Vec::<u8>::with_capacity(16)));
    assert_eq!(
        ALLOCATIONS.load(Ordering::Relaxed) - before,
        1,
        "the counting allocator does not count"
    );
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for i in 0..10_000u64 {
        let mut batch = f.dci.batch();
        batch.send(i).to(&p).sge(local).unwrap();
        batch.rdma_write(i, remote).to(&p).sge(local).unwrap();
        batch.commit().unwrap();
        let mut batch = f.rc.batch();
        batch.rdma_write(i, remote).sge(local).unwrap();
        batch.commit().unwrap();
    }
    assert_eq!(
        ALLOCATIONS.load(Ordering::Relaxed) - before,
        0,
        "the post path allocated"
    );
}
