//! The post path of the raw layer against C: one signalled DC send (start, wr_id/flags, send,
//! set_dc_addr, set_sge, complete) and one RC write, posted to the C recording function table
//! (`tests/c/abi_recorder.c`), so only the calling sequence is measured, not a NIC.
//!
//! - `c_inline`: the sequence written in C with rdma-core's own inline functions;
//! - `raw_inline`: the same through mlx5dv-raw's Rust inline functions (direct table calls);
//! - `raw_shim`: the same through the shim's `m5dv_*` exports (one extra call per step);
//! - `safe_dc_send` / `safe_rc_write`: the same through mlx5dv's batch and builder, with its
//!   bounds and operation checks. Target: within 1.10x of `c_inline`.
use ::mlx5dv::RemoteMemory;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use mlx5dv_suite::fake::{completed, fakes, peer, sge};
use mlx5dv_suite::raw::*;
use mlx5dv_suite::recorder::{m5dv_c_dc_send, m5dv_c_rc_write, recorder};

const DCTN: u32 = 0x00AB_CDEF;
const DC_KEY: u64 = 0xFFEE_DDCC;
const LKEY: u32 = 0x1234;
const RKEY: u32 = 0x5678;
const ADDR: u64 = 0x7f00_0000_1000;
const RADDR: u64 = 0x7f00_0010_0000;
const LEN: u32 = 64;

fn post_path(c: &mut Criterion) {
    let r = recorder();
    let (q, m) = (r.qp_ex(), r.mqp());
    let ah = 0x1000 as *mut ibv_ah;
    let mut g = c.benchmark_group("post_path");

    g.bench_function("dc_send/c_inline", |b| {
        let mut wr_id = 0u64;
        b.iter(|| {
            wr_id += 1;
            // SAFETY: the recorder's fake tables have every entry set.
            unsafe { m5dv_c_dc_send(q, m, black_box(ah), DCTN, DC_KEY, LKEY, ADDR, LEN, wr_id) }
        })
    });
    g.bench_function("dc_send/raw_inline", |b| {
        let mut wr_id = 0u64;
        b.iter(|| {
            wr_id += 1;
            // SAFETY: as above.
            unsafe {
                ibv_wr_start(q);
                (*q).wr_id = wr_id;
                (*q).wr_flags = IBV_SEND_SIGNALED;
                ibv_wr_send(q);
                mlx5dv_wr_set_dc_addr(m, black_box(ah), DCTN, DC_KEY);
                ibv_wr_set_sge(q, LKEY, ADDR, LEN);
                ibv_wr_complete(q)
            }
        })
    });
    g.bench_function("dc_send/raw_shim", |b| {
        let mut wr_id = 0u64;
        b.iter(|| {
            wr_id += 1;
            // SAFETY: as above.
            unsafe {
                m5dv_wr_start(q);
                (*q).wr_id = wr_id;
                (*q).wr_flags = IBV_SEND_SIGNALED;
                m5dv_wr_send(q);
                m5dv_wr_set_dc_addr(m, black_box(ah), DCTN, DC_KEY);
                m5dv_wr_set_sge(q, LKEY, ADDR, LEN);
                m5dv_wr_complete(q)
            }
        })
    });
    let mut f = fakes(&r);
    g.bench_function("dc_send/safe_dc_send", |b| {
        let p = peer(&f.ah, DCTN, DC_KEY);
        let local = sge(ADDR, LEN, LKEY);
        let mut wr_id = 0u64;
        b.iter(|| {
            wr_id += 1;
            let mut batch = f.dci.batch();
            let sent = batch.send(wr_id).to(black_box(&p)).sge(local);
            let posted = batch.commit();
            // The credit its completion gives back (what Cq::poll does per completion).
            f.dci.report_completion(&completed(wr_id));
            (sent, posted)
        })
    });
    g.bench_function("rc_write/safe_rc_write", |b| {
        let remote = RemoteMemory {
            addr: RADDR,
            len: 1 << 20,
            rkey: RKEY,
        };
        let local = sge(ADDR, LEN, LKEY);
        let mut wr_id = 0u64;
        b.iter(|| {
            wr_id += 1;
            let mut batch = f.rc.batch();
            let written = batch.rdma_write(wr_id, black_box(remote)).sge(local);
            let posted = batch.commit();
            f.rc.report_completion(&completed(wr_id));
            (written, posted)
        })
    });
    g.bench_function("rc_write/c_inline", |b| {
        let mut wr_id = 0u64;
        b.iter(|| {
            wr_id += 1;
            // SAFETY: as above.
            unsafe { m5dv_c_rc_write(q, RKEY, black_box(RADDR), LKEY, ADDR, LEN, wr_id) }
        })
    });
    g.bench_function("rc_write/raw_inline", |b| {
        let mut wr_id = 0u64;
        b.iter(|| {
            wr_id += 1;
            // SAFETY: as above.
            unsafe {
                ibv_wr_start(q);
                (*q).wr_id = wr_id;
                (*q).wr_flags = IBV_SEND_SIGNALED;
                ibv_wr_rdma_write(q, RKEY, black_box(RADDR));
                ibv_wr_set_sge(q, LKEY, ADDR, LEN);
                ibv_wr_complete(q)
            }
        })
    });
    g.finish();
    drop(r);
}

criterion_group!(benches, post_path);
criterion_main!(benches);
