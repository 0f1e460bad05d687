//! The safe post path against the C recording table: every argument arrives, bad input is
//! refused before anything reaches the library, and posting allocates nothing.
use mlx5dv::{Dci, DciParts, RemoteMemory, WcStatus};
use mlx5dv_suite::alloc_count::{allocations_in, Counting};
use mlx5dv_suite::fake::{completed, fake_dci_parts, fakes, peer, sge, FAKE_CAPS};
use mlx5dv_suite::recorder::recorder;
use std::ptr::NonNull;

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
    assert_eq!(rec.wr_id, 0, "a DCI's request carries the crate's slot number");
    assert_eq!(rec.wr_flags, mlx5dv::raw::IBV_SEND_SIGNALED);
    batch.commit().unwrap();
    let mut c = completed(rec.wr_id);
    f.dci.report_completion(&mut c);
    assert_eq!(
        c.wr_id, 0x1122_3344,
        "its completion is mapped back to the caller's wr_id"
    );
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
    assert_eq!(rec.wr_flags, mlx5dv::raw::IBV_SEND_INLINE, "unsignaled + inline");
    drop(batch);
    assert_eq!(r.last().op(), "wr_abort", "an uncommitted batch is aborted on drop");
}

#[test]
fn a_dc_peers_debug_shows_its_dct_and_stream_but_never_its_key() {
    let r = recorder();
    let f = fakes(&r);
    let shown = format!("{:?}", peer(&f.ah, DCTN, KEY).stream(3));
    assert!(
        shown.contains(&DCTN.to_string()) && shown.contains("Some(3)"),
        "{shown}"
    );
    assert!(shown.contains("<redacted>"), "{shown}");
    for key in [KEY.to_string(), format!("{KEY:x}"), format!("{KEY:X}")] {
        assert!(!shown.contains(&key), "the key shows in {shown}");
    }
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
fn a_provider_refusal_at_commit_is_reported_and_gives_the_batch_room_back() {
    let r = recorder();
    let mut f = fakes(&r);
    let p = peer(&f.ah, DCTN, KEY);
    r.set_return(libc::EINVAL as i64);
    let mut batch = f.dci.batch();
    batch.send(1).to(&p).sge(sge(0xA000, 8, 1)).unwrap();
    let err = batch.commit().unwrap_err();
    r.set_return(0);
    assert_eq!(err.errno(), Some(libc::EINVAL));
    assert!(err.to_string().contains("none of its requests was posted"), "{err}");
    assert_eq!(f.dci.outstanding(), 0);
}

#[test]
fn a_full_send_queue_is_refused_before_any_library_call_and_the_batch_stays_usable() {
    let r = recorder();
    let f = fakes(&r);
    let p = peer(&f.ah, DCTN, KEY);
    // SAFETY: the recorder's fake DCI (never destroyed: ManuallyDrop), with 4 send slots.
    let mut dci = std::mem::ManuallyDrop::new(unsafe {
        Dci::from_raw_parts(
            NonNull::new(r.qp_ex()).unwrap(),
            NonNull::new(r.mqp()).unwrap(),
            DciParts {
                caps: mlx5dv::raw::ibv_qp_cap {
                    max_send_wr: 4,
                    ..FAKE_CAPS
                },
                ..fake_dci_parts()
            },
        )
        .expect("no CQ given: nothing to refuse")
    });
    let mut batch = dci.batch();
    for i in 0..4 {
        batch.send(i).to(&p).sge(sge(0xA000, 8, 1)).unwrap();
    }
    batch.commit().unwrap();
    let mut batch = dci.batch();
    let calls = r.last().calls;
    let (err, allocated) = allocations_in(|| batch.send(4).to(&p).sge(sge(0xA000, 8, 1)).unwrap_err());
    assert_eq!(allocated, 0, "refusing the request allocated");
    assert!(
        err.is_would_block(),
        "a full send queue is backpressure (EAGAIN): {err}"
    );
    assert!(err.to_string().contains("max_send_wr"), "{err}");
    assert_eq!(r.last().calls, calls, "the refused request reached the library");
    batch.commit().expect("the batch is still usable");
    // A signaled completion frees it and every request before it.
    dci.report_completion(&mut completed(0));
    let mut batch = dci.batch();
    batch.send(4).to(&p).sge(sge(0xA000, 8, 1)).unwrap();
    batch.commit().unwrap();
    assert_eq!(dci.outstanding(), 4);
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
    let ((), seen) = allocations_in(|| drop(std::hint::black_box(Vec::<u8>::with_capacity(16))));
    assert_eq!(seen, 1, "the counting allocator does not count");
    let ((), allocated) = allocations_in(|| {
        // 40,000 DC requests: more than the fake's 32,768 slots, so credit comes back too.
        for i in 0..20_000u64 {
            let mut batch = f.dci.batch();
            batch.send(i).to(&p).sge(local).unwrap();
            batch.rdma_write(i, remote).to(&p).sge(local).unwrap();
            batch.commit().unwrap();
            // The DCI's requests carry their slot numbers 2i and 2i + 1.
            f.dci.report_completion(&mut completed(2 * i + 1));
            let mut batch = f.rc.batch();
            batch.rdma_write(i, remote).sge(local).unwrap();
            batch.commit().unwrap();
            f.rc.report_completion(&completed(i));
        }
    });
    assert_eq!(allocated, 0, "the post path allocated");
}
