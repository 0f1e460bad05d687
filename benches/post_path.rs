//! The post path of the raw layer against C: one signalled DC send (start, wr_id/flags, send,
//! set_dc_addr, set_sge, complete) and one RC write, posted to the C recording function table
//! (`tests/c/abi_recorder.c`), so only the calling sequence is measured, not a NIC.
//!
//! - `c_inline`: the sequence written in C with rdma-core's own inline functions, one C call
//!   per request from a loop timed as the safe send's is (`c_dc_chunk`);
//! - `c_loop`: the strictest reference, the same sequence in a loop written in C (no call per
//!   request);
//! - `raw_inline`: the same through mlx5dv-raw's Rust inline functions (direct table calls);
//! - `raw_shim`: the same through the shim's `m5dv_*` exports (one extra call per step);
//! - `safe_dc_send` / `safe_rc_write`: the same through mlx5dv's batch and builder, with its
//!   bounds and operation checks and the send-queue count. Target: within 1.10x of `c_inline`.
//!   The DC send is timed as posts alone (chunks of 256, their completions' credit given back
//!   untimed in between), as `c_inline` and `c_loop` are; `safe_dc_send_and_completion` adds
//!   each completion's accounting, which the C sequence does not do.
//!
//! Group `real_mlx5`: the DC send posted into a real libmlx5 send queue, in C with rdma-core's
//! inline functions (`c_inline`; `c_loop`, the loop in C) and through the safe crate
//! (`safe_dc_send`), so the cost is
//! the provider's WQE building plus ours. It runs on soft-mlx5 only, where the emulator's test
//! hook `soft_mlx5_test_pause` keeps the device thread from draining the queue while requests
//! are timed; between timed chunks (one send queue's worth) the DCI goes RESET -> RTS, untimed.
//! Target: safe within 1.05x of C. `safe_direct` is the same safe code on a DCI of the direct
//! backend (`SendBackend::Direct`: the crate writes the WQE and rings the doorbell itself, as
//! libmlx5 would; its CQ a direct one): target at most 0.7x of `c_inline`. Run both groups in
//! one criterion run with `scripts/soft-mlx5 -- cargo bench --bench post_path`, or as
//! `scripts/post-path` does (`--interleaved`, `--paired`, `--count`). Elsewhere it is skipped
//! with the reason (on a ConnectX the device cannot be paused, and a draining queue measures
//! the NIC, not the post path).
use ::mlx5dv::RemoteMemory;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use mlx5dv_suite::device::{pause_hook, PauseFn};
use mlx5dv_suite::fake::{completed, fakes_of_depth, peer, sge};
use mlx5dv_suite::raw::*;
use mlx5dv_suite::recorder::{m5dv_c_dc_send, m5dv_c_dc_send_loop, m5dv_c_rc_write, recorder};

const DCTN: u32 = 0x00AB_CDEF;
const DC_KEY: u64 = 0xFFEE_DDCC;
const LKEY: u32 = 0x1234;
const RKEY: u32 = 0x5678;
const ADDR: u64 = 0x7f00_0000_1000;
const RADDR: u64 = 0x7f00_0010_0000;
const LEN: u32 = 64;
/// Requests timed between two untimed returns of credit (a typical send queue's depth).
const CHUNK: u64 = 256;

fn post_path(c: &mut Criterion) {
    let r = recorder();
    let (q, m) = (r.qp_ex(), r.mqp());
    let ah = 0x1000 as *mut ibv_ah;
    let mut g = c.benchmark_group("post_path");
    let dest = CDest {
        ah,
        dctn: DCTN,
        key: DC_KEY,
    };
    let buf = CBuf {
        lkey: LKEY,
        addr: ADDR,
        len: LEN,
    };

    // Timed as the safe send below is: chunks of one send queue's worth, each a loop of its
    // own, so that criterion's per-iteration overhead is in neither figure. `c_loop`, the
    // strictest reference, posts the chunk by a loop in C, no call per request.
    let c_refs: [(&str, CChunk); 2] = [("dc_send/c_inline", c_dc_chunk), ("dc_send/c_loop", c_loop_chunk)];
    for (name, chunk) in c_refs {
        g.bench_function(name, |b| {
            let mut wr_id = 0u64;
            b.iter_custom(|iters| {
                timed_chunks(iters, |n| {
                    let start = std::time::Instant::now();
                    // SAFETY: the recorder's fake tables have every entry set.
                    wr_id = unsafe { chunk(q, m, dest, buf, wr_id, n) };
                    start.elapsed()
                })
            })
        });
    }
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
    // Queues one chunk deep, as the `real_mlx5` group's DCI (the crate's count keeps a slot
    // per request: the fakes' default depth of 32768 would sweep 512 KiB of slots).
    let mut f = fakes_of_depth(&r, CHUNK as u32);
    // The DCI's requests carry its own sequence number as their wr_id: it runs on across
    // criterion's calls of the routine (warm-up, samples), so it lives out here.
    let mut seq = 0u64;
    let p = peer(&f.ah, DCTN, DC_KEY);
    let local = sge(ADDR, LEN, LKEY);
    // The post alone, as `c_inline` (and the `real_mlx5` group) time it: chunks of one send
    // queue's worth are posted, timed; their completions give the credit back between
    // chunks, untimed.
    g.bench_function("dc_send/safe_dc_send", |b| {
        b.iter_custom(|iters| timed_chunks(iters, |n| safe_chunk_then_credit(&mut f.dci, &p, local, &mut seq, n)))
    });
    // The post and its completion's accounting together (what Cq::poll does per completion),
    // which `c_inline` does not do: the whole cost of a request to the crate.
    g.bench_function("dc_send/safe_dc_send_and_completion", |b| {
        b.iter(|| {
            let mut batch = f.dci.batch();
            let sent = batch.send(seq).to(black_box(&p)).sge(local);
            let posted = batch.commit();
            let mut c = completed(seq);
            f.dci.report_completion(&mut c);
            seq += 1;
            (sent, posted, c.wr_id)
        })
    });
    assert_eq!(
        f.dci.outstanding(),
        0,
        "every request of the bench was posted and retired"
    );
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
    if let Some(rounds) = interleaved_rounds() {
        let mut wr_id = 0u64;
        interleaved(
            "post_path",
            &["c_inline", "c_loop", "safe_dc_send"],
            2,
            rounds,
            CHUNK,
            |v| {
                let start = std::time::Instant::now();
                match v {
                    // SAFETY: the recorder's fake tables have every entry set.
                    0 => wr_id = unsafe { c_dc_chunk(q, m, dest, buf, wr_id, CHUNK) },
                    // SAFETY: as above.
                    1 => wr_id = unsafe { c_loop_chunk(q, m, dest, buf, wr_id, CHUNK) },
                    _ => return safe_chunk_then_credit(&mut f.dci, &p, local, &mut seq, CHUNK),
                }
                start.elapsed()
            },
        );
    }
    drop(r);
}

/// Times `post(n)` over `iters` requests in chunks of [`CHUNK`]: `post` posts the next `n`
/// requests and returns the part of its time to count.
fn timed_chunks(iters: u64, mut post: impl FnMut(u64) -> std::time::Duration) -> std::time::Duration {
    let mut total = std::time::Duration::ZERO;
    let mut done = 0;
    while done < iters {
        let n = CHUNK.min(iters - done);
        total += post(n);
        done += n;
    }
    total
}

/// Posts `n` safe DC sends (numbered from `*seq`, advanced) and returns their time alone;
/// then, untimed, gives their completions' credit back as the poller would.
fn safe_chunk_then_credit(
    dci: &mut ::mlx5dv::Dci<::mlx5dv::state::Rts>,
    p: &::mlx5dv::DcPeer,
    local: ::mlx5dv::Sge<'_>,
    seq: &mut u64,
    n: u64,
) -> std::time::Duration {
    let first = *seq;
    let start = std::time::Instant::now();
    *seq = safe_dc_chunk(dci, p, local, first, n);
    let t = start.elapsed();
    assert_eq!(dci.outstanding(), n, "every request of the chunk was posted");
    for s in first..*seq {
        dci.report_completion(&mut completed(s));
    }
    t
}

/// The rounds of the interleaved measurement (`POST_PATH_INTERLEAVED=N`), if asked for.
fn interleaved_rounds() -> Option<usize> {
    let v = std::env::var("POST_PATH_INTERLEAVED").ok()?;
    match v.parse() {
        Ok(n) if n > 0 => Some(n),
        _ => panic!("POST_PATH_INTERLEAVED={v}: give a number of rounds above 0"),
    }
}

/// The interleaved measurement (`POST_PATH_INTERLEAVED=N`, `scripts/post-path --interleaved`):
/// `rounds` rounds, in each one chunk of `per_chunk` requests of every variant, back to back
/// (the order rotated every round; `chunk(v)` posts one of variant `v` and returns its timed
/// part). Drift of the machine is slower than a round (microseconds), so the ratio of two
/// variants within a round is free of it, unlike two criterion runs seconds apart. Prints
/// each variant's median ns per request and, for every variant after the first `refs` (the C
/// references), the median and quartiles of its per-round ratio to each reference.
fn interleaved(
    group: &str,
    names: &[&str],
    refs: usize,
    rounds: usize,
    per_chunk: u64,
    mut chunk: impl FnMut(usize) -> std::time::Duration,
) {
    let k = names.len();
    let mut ns = vec![Vec::with_capacity(rounds); k];
    // Unmeasured warm-up: a round of each.
    for v in 0..k {
        chunk(v);
    }
    for r in 0..rounds {
        for i in 0..k {
            let v = (r + i) % k;
            ns[v].push(chunk(v).as_nanos() as f64 / per_chunk as f64);
        }
    }
    let median = |x: &mut Vec<f64>| {
        x.sort_by(f64::total_cmp);
        (x[x.len() / 2], x[x.len() / 4], x[x.len() * 3 / 4])
    };
    let mut line = format!("interleaved {group} ({rounds} rounds of {per_chunk})");
    for v in 0..k {
        let (m, _, _) = median(&mut ns[v].clone());
        line += &format!(" | {} {m:.3} ns", names[v]);
    }
    println!("{line}");
    for v in refs..k {
        for c in 0..refs {
            let mut ratios: Vec<f64> = ns[v].iter().zip(&ns[c]).map(|(a, b)| a / b).collect();
            let (m, q1, q3) = median(&mut ratios);
            println!(
                "interleaved {group}/{}/{}: {m:.3}x (quartiles {q1:.3}x, {q3:.3}x)",
                names[v], names[c]
            );
        }
    }
}

/// Posts `n` signalled DC sends of `local` to `p`, numbered from `seq` (returned past the
/// last): the timed part of `safe_dc_send`, a function of its own so that callgrind can count
/// exactly it (`--toggle-collect=*safe_dc_chunk*`).
#[inline(never)]
fn safe_dc_chunk(
    dci: &mut ::mlx5dv::Dci<::mlx5dv::state::Rts>,
    p: &::mlx5dv::DcPeer,
    local: ::mlx5dv::Sge<'_>,
    mut seq: u64,
    n: u64,
) -> u64 {
    // Opaque once per chunk, as C's AH (the compiler specialises on neither).
    let p = black_box(p);
    for _ in 0..n {
        let mut batch = dci.batch();
        let sent = batch.send(seq).to(p).sge(local);
        let posted = batch.commit();
        // Checked as a caller checks them (and as the `real_mlx5` group does).
        assert!(sent.is_ok() && posted.is_ok(), "post failed: {sent:?} {posted:?}");
        seq += 1;
    }
    seq
}

/// The destination of a C send: its AH, DCT number and DC key.
#[derive(Clone, Copy)]
struct CDest {
    ah: *mut ibv_ah,
    dctn: u32,
    key: u64,
}

/// The local buffer of a C send.
#[derive(Clone, Copy)]
struct CBuf {
    lkey: u32,
    addr: u64,
    len: u32,
}

/// Posts `n` signalled DC sends through the C sequence (`m5dv_c_dc_send`, rdma-core's inline
/// functions), numbered from `wr_id` (returned past the last): the same loop as
/// [`safe_dc_chunk`], for C, so that both are timed and counted alike
/// (`--toggle-collect=*c_dc_chunk*`).
///
/// # Safety
/// `q` and `m` are the tables of a live DCI in RTS (or the recorder's) created with the send
/// ops, with room for `n` more requests.
#[inline(never)]
unsafe fn c_dc_chunk(q: *mut ibv_qp_ex, m: *mut mlx5dv_qp_ex, dest: CDest, buf: CBuf, mut wr_id: u64, n: u64) -> u64 {
    // Opaque once per chunk, as the safe loop's peer.
    let ah = black_box(dest.ah);
    for _ in 0..n {
        // SAFETY: as the caller guarantees.
        let rc = unsafe { m5dv_c_dc_send(q, m, ah, dest.dctn, dest.key, buf.lkey, buf.addr, buf.len, wr_id) };
        // Checked as the safe loop checks its results.
        assert_eq!(rc, 0, "post failed");
        wr_id += 1;
    }
    wr_id
}

/// A C reference's chunk: [`c_dc_chunk`] or [`c_loop_chunk`].
type CChunk = unsafe fn(*mut ibv_qp_ex, *mut mlx5dv_qp_ex, CDest, CBuf, u64, u64) -> u64;

/// Posts `n` signalled DC sends as [`c_dc_chunk`] does, through the loop written in C
/// (`m5dv_c_dc_send_loop`, no call per request): the `c_loop` reference.
///
/// # Safety
/// As [`c_dc_chunk`].
unsafe fn c_loop_chunk(q: *mut ibv_qp_ex, m: *mut mlx5dv_qp_ex, dest: CDest, buf: CBuf, wr_id: u64, n: u64) -> u64 {
    // SAFETY: as the caller guarantees.
    let rc = unsafe {
        m5dv_c_dc_send_loop(
            q,
            m,
            black_box(dest.ah),
            dest.dctn,
            dest.key,
            buf.lkey,
            buf.addr,
            buf.len,
            wr_id,
            n,
        )
    };
    assert_eq!(rc, 0, "post failed");
    wr_id + n
}

/// Times `post(state, first, n)` (posting requests `first..first + n`) over `iters` requests
/// in chunks of one send queue, the device paused; between chunks (untimed) `reset` empties
/// the queue.
fn paused_chunks<S>(
    pause: PauseFn,
    iters: u64,
    depth: u64,
    state: &mut S,
    mut post: impl FnMut(&mut S, u64, u64),
    mut reset: impl FnMut(&mut S),
) -> std::time::Duration {
    let mut total = std::time::Duration::ZERO;
    let mut done = 0;
    // SAFETY: the hook takes an int and returns once the device thread is idle.
    unsafe { pause(1) };
    while done < iters {
        let n = depth.min(iters - done);
        let start = std::time::Instant::now();
        post(state, done, n);
        total += start.elapsed();
        done += n;
        reset(state);
    }
    // SAFETY: as above.
    unsafe { pause(0) };
    total
}

fn real_mlx5(c: &mut Criterion) {
    use ::mlx5dv::{
        state::Rts, Access, DcKey, DcPeer, DcTargetAddr, Dci, DciBuilder, DctBuilder, Mtu, PeerPath, RtsAttr,
    };
    let Some(pause) = pause_hook() else {
        println!("real_mlx5: not run: no soft-mlx5 here (run under scripts/soft-mlx5; a ConnectX cannot be paused)");
        return;
    };
    let name = std::env::var("MLX5DV_TEST_DEVICE").unwrap_or_else(|_| "mlx5_0".into());
    let list = ::mlx5dv::devices().expect("device list");
    let dev = list.iter().find(|d| d.name() == name).expect("the soft-mlx5 device");
    let ctx = dev.open().expect("open");
    let mlx5 = ctx.mlx5().expect("mlx5");
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(4096).unwrap();
    let srq = pd.create_srq(64, 1).unwrap();
    let key = DcKey::new(DC_KEY);
    let dct = DctBuilder::new(&mlx5, &pd, &cq, &srq, key)
        .port(1)
        .access(Access::REMOTE_WRITE)
        .mtu(1024)
        .build()
        .unwrap();
    let port = ctx.query_port(1).unwrap();
    let addr = DcTargetAddr {
        lid: port.0.lid,
        gid: [0; 16],
        dct_number: dct.dct_number(),
        port_mtu: Mtu::Mtu1024,
        out_of_order: false,
    };
    let ah = pd.create_ah(1, &PeerPath::to_dc_target(&addr, None)).unwrap();
    let mr = pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap();
    let local = mr.sge(0, LEN as usize).unwrap();
    let dci = || {
        DciBuilder::new(&mlx5, &pd, &cq)
            .max_send_wr(256)
            .build_ready(1, 1024, RtsAttr::default())
            .unwrap()
    };
    // The direct backend's DCI reports to a direct CQ of its own.
    let direct_cq = ctx.create_direct_cq(4096).unwrap();
    let direct_dci = || {
        DciBuilder::new(&mlx5, &pd, &direct_cq)
            .backend(::mlx5dv::SendBackend::Direct)
            .max_send_wr(256)
            .build_ready(1, 1024, RtsAttr::default())
            .unwrap()
    };
    // Back to an empty send queue: RESET -> RTS (the WQEs posted were never executed).
    let renew = |d: &mut Option<Dci<Rts>>| *d = Some(d.take().unwrap().recover().unwrap());
    let mut g = c.benchmark_group("real_mlx5");
    let mut c_dci = Some(dci());
    let depth = u64::from(c_dci.as_ref().unwrap().caps().max_send_wr);
    // Looked up once, as a C program keeps them (and as the safe crate does): RESET -> RTS
    // keeps the QP, so they stay valid across chunks.
    // SAFETY: a live mlx5 DCI created with send ops flags, so both tables exist.
    let (qpx, m) = unsafe {
        let qpx = ibv_qp_to_qp_ex(c_dci.as_ref().unwrap().as_raw());
        (qpx, mlx5dv_qp_ex_from_ibv_qp_ex(qpx))
    };
    let dest = CDest {
        ah: ah.as_raw(),
        dctn: addr.dct_number,
        key: DC_KEY,
    };
    let buf = CBuf {
        lkey: local.lkey(),
        addr: local.addr(),
        len: LEN,
    };
    let c_post = |_: &mut Option<Dci<Rts>>, first: u64, n: u64| {
        // SAFETY: a live mlx5 DCI in RTS created with the send ops; at most its depth is
        // posted before it is reset.
        unsafe { c_dc_chunk(qpx, m, dest, buf, first, n) };
    };
    g.bench_function("dc_send/c_inline", |b| {
        b.iter_custom(|iters| paused_chunks(pause, iters, depth, &mut c_dci, c_post, renew))
    });
    // The strictest reference: the chunk posted by a loop in C, on the same DCI.
    let c_loop = |_: &mut Option<Dci<Rts>>, first: u64, n: u64| {
        // SAFETY: as `c_post`.
        unsafe { c_loop_chunk(qpx, m, dest, buf, first, n) };
    };
    g.bench_function("dc_send/c_loop", |b| {
        b.iter_custom(|iters| paused_chunks(pause, iters, depth, &mut c_dci, c_loop, renew))
    });
    let mut safe_dci = Some(dci());
    let p = DcPeer::new(&ah, &addr, key);
    // Safe DC sends through the batch, whatever the DCI's backend: the recording group's
    // loop, on the DCI taken out of its Option once per chunk (as C's loop takes its table).
    let post = |d: &mut Option<Dci<Rts>>, first: u64, n: u64| {
        safe_dc_chunk(d.as_mut().unwrap(), &p, local, first, n);
    };
    g.bench_function("dc_send/safe_dc_send", |b| {
        b.iter_custom(|iters| paused_chunks(pause, iters, depth, &mut safe_dci, post, renew))
    });
    // The same safe batch code on a DCI of the direct backend (the crate writes the WQE and
    // rings the doorbell): the same peer, buffer, chunks and RESET between them.
    // The write8-inline and poll cases' direct DCI (made before the name is shadowed).
    let w_direct = direct_dci();
    let mut direct_dci = Some(direct_dci());
    assert_eq!(u64::from(direct_dci.as_ref().unwrap().caps().max_send_wr), depth);
    g.bench_function("dc_send/safe_direct", |b| {
        b.iter_custom(|iters| paused_chunks(pause, iters, depth, &mut direct_dci, post, renew))
    });
    // The 8-byte inline RDMA WRITE (UCX's `put_short`), signalled, on both backends: posted
    // and timed as the sends are (chunks of one send queue, RESET between them).
    let target = pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let remote = target.remote().expect("a remote-writable MR");
    let write8 = |d: &mut Option<Dci<Rts>>, first: u64, n: u64| {
        write8_chunk(d.as_mut().unwrap(), &p, remote, first, n);
        counted(n);
    };
    let mut w_dcis = [Some(dci()), Some(w_direct)];
    for (backend, d) in ["wr", "direct"].into_iter().zip(&mut w_dcis) {
        g.bench_function(format!("write8-inline/{backend}"), |b| {
            b.iter_custom(|iters| paused_chunks(pause, iters, depth, d, write8, renew))
        });
    }
    g.finish();
    // A DCI of its own CQ whose one completion tells the poll cases that the device has run
    // what was posted before it.
    let probe_cq = ctx.create_cq(64).unwrap();
    let mut probe = DciBuilder::new(&mlx5, &pd, &probe_cq)
        .max_send_wr(16)
        .build_ready(1, 1024, RtsAttr::default())
        .unwrap();
    let mut run_device = || {
        write8_chunk(&mut probe, &p, remote, 0, 1);
        let mut c = [::mlx5dv::Completion::default()];
        while probe_cq.poll(&mut c).expect("probe poll") == 0 {
            std::thread::yield_now();
        }
        assert!(c[0].status.is_success(), "{:?}", c[0]);
    };
    polls(c, &cq, &direct_cq, &mut w_dcis, &p, remote, &mut run_device);
    // The divisor of scripts/post-path --count for the cases that count here.
    println!(
        "post-path count: {} counted",
        COUNTED.load(std::sync::atomic::Ordering::Relaxed)
    );
    if let Some(rounds) = interleaved_rounds() {
        let mut states = [c_dci, safe_dci, direct_dci];
        // SAFETY: the hook takes an int and returns once the device thread is idle.
        unsafe { pause(1) };
        interleaved(
            "real_mlx5",
            &["c_inline", "c_loop", "safe_dc_send", "safe_direct"],
            2,
            rounds,
            depth,
            |v| {
                // Both C references post on the C DCI.
                let i = v.saturating_sub(1);
                let start = std::time::Instant::now();
                match v {
                    0 => c_post(&mut states[i], 0, depth),
                    1 => c_loop(&mut states[i], 0, depth),
                    _ => post(&mut states[i], 0, depth),
                }
                let t = start.elapsed();
                renew(&mut states[i]);
                t
            },
        );
        // SAFETY: as above.
        unsafe { pause(0) };
    }
}

/// What the counted (`scripts/post-path --count`) function of the bench that ran handled:
/// requests posted, completions reaped or polls made, the divisor of its instructions.
static COUNTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn counted(n: u64) {
    COUNTED.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
}

/// Posts `n` signalled 8-byte inline RDMA WRITEs to `p` (`remote`), numbered from `seq`: the
/// `write8-inline` cases, a function of its own so that callgrind counts exactly it.
#[inline(never)]
fn write8_chunk(
    dci: &mut ::mlx5dv::Dci<::mlx5dv::state::Rts>,
    p: &::mlx5dv::DcPeer,
    remote: RemoteMemory,
    mut seq: u64,
    n: u64,
) -> u64 {
    let p = black_box(p);
    for _ in 0..n {
        let mut batch = dci.batch();
        let written = batch.rdma_write(seq, remote).to(p).inline(&seq.to_le_bytes());
        let posted = batch.commit();
        assert!(written.is_ok() && posted.is_ok(), "post failed: {written:?} {posted:?}");
        seq += 1;
    }
    seq
}

/// Polls `cq` `calls` times into `out` and returns the completions reaped: the `completion-N`
/// and `empty-poll` cases (callgrind counts exactly this function).
#[inline(never)]
fn poll_calls(cq: &::mlx5dv::Cq, out: &mut [::mlx5dv::Completion], calls: u64) -> u64 {
    polls_with(cq, out, calls, ::mlx5dv::Cq::poll)
}

/// [`poll_calls`] with [`::mlx5dv::Cq::poll_lean`]: the `completion-N/B-lean` cases.
#[inline(never)]
fn lean_poll_calls(cq: &::mlx5dv::Cq, out: &mut [::mlx5dv::LeanCompletion], calls: u64) -> u64 {
    polls_with(cq, out, calls, ::mlx5dv::Cq::poll_lean)
}

/// `calls` polls of `cq` with `poll` into `out`: the completions reaped.
#[inline(always)]
fn polls_with<C>(
    cq: &::mlx5dv::Cq,
    out: &mut [C],
    calls: u64,
    poll: impl Fn(&::mlx5dv::Cq, &mut [C]) -> ::mlx5dv::Result<usize>,
) -> u64 {
    let mut reaped = 0;
    for _ in 0..calls {
        reaped += poll(cq, black_box(&mut *out)).expect("poll") as u64;
    }
    reaped
}

/// The poll cases, counted only (`POST_PATH_COUNT=1`, set by `scripts/post-path --count`):
/// their completions come from the running device, whose latency a timing would measure.
///
/// - `completion-1/B`, `completion-16/B`: 16 signalled 8-byte inline writes posted (untimed)
///   on a DCI of backend B, then one more on a probe DCI of another CQ, whose completion
///   (polled untimed) says the device has run them; then reaped by 16 polls of one
///   completion or one poll of 16; divided by the completions reaped. `-lean`: the same,
///   reaped with `Cq::poll_lean`.
/// - `empty-poll/B`: polls of B's empty CQ; divided by the polls. `empty-poll/pool` and
///   `empty-poll/executor`: a DCI pool's and an S3 executor's polls with nothing to report, on
///   the direct backend (`-wr`: on the wr API).
///
/// A timed poll that finds fewer than the 16 (the device completed the probe first) is
/// topped up untimed and counted as short. The count of short polls is printed with the
/// divisor: scripts/post-path says so beside a figure that has any.
fn polls(
    c: &mut Criterion,
    cq: &::mlx5dv::Cq,
    direct_cq: &::mlx5dv::Cq,
    dcis: &mut [Option<::mlx5dv::Dci<::mlx5dv::state::Rts>>; 2],
    p: &::mlx5dv::DcPeer,
    remote: RemoteMemory,
    run_device: &mut dyn FnMut(),
) {
    if std::env::var_os("POST_PATH_COUNT").is_none() {
        println!("real_mlx5/completion-*, empty-poll: counted only (scripts/post-path --count)");
        return;
    }
    const BATCH: u64 = 16;
    let mut g = c.benchmark_group("real_mlx5");
    let mut out = [::mlx5dv::Completion::default(); BATCH as usize];
    let mut lean_out = [::mlx5dv::LeanCompletion::default(); BATCH as usize];
    let mut short = 0u64;
    let mut seq = 1u64 << 40;
    for (backend, (d, cq)) in ["wr", "direct"].into_iter().zip(dcis.iter_mut().zip([cq, direct_cq])) {
        let d = d.as_mut().unwrap();
        for (case, per_call, lean) in [
            ("completion-1", 1usize, false),
            ("completion-16", BATCH as usize, false),
            ("completion-1", 1, true),
            ("completion-16", BATCH as usize, true),
        ] {
            let api = if lean { "-lean" } else { "" };
            g.bench_function(format!("{case}/{backend}{api}"), |b| {
                b.iter_custom(|iters| {
                    let mut total = std::time::Duration::ZERO;
                    let mut done = 0;
                    while done < iters {
                        seq = write8_chunk(d, p, remote, seq, BATCH);
                        run_device();
                        let start = std::time::Instant::now();
                        let calls = BATCH / per_call as u64;
                        let reaped = if lean {
                            lean_poll_calls(cq, &mut lean_out[..per_call], calls)
                        } else {
                            poll_calls(cq, &mut out[..per_call], calls)
                        };
                        total += start.elapsed();
                        counted(reaped);
                        let mut left = BATCH - reaped;
                        if left > 0 {
                            short += 1;
                            std::thread::sleep(std::time::Duration::from_millis(1));
                        }
                        while left > 0 {
                            left -= cq.poll(&mut out[..1]).expect("poll") as u64;
                        }
                        assert!(out[0].status.is_success(), "{:?}", out[0]);
                        done += BATCH;
                    }
                    total
                })
            });
        }
        g.bench_function(format!("empty-poll/{backend}"), |b| {
            b.iter_custom(|iters| {
                let start = std::time::Instant::now();
                let reaped = poll_calls(cq, &mut out, iters);
                assert_eq!(reaped, 0, "the CQ is empty");
                counted(iters);
                start.elapsed()
            })
        });
    }
    // The pool's and the S3 executor's poll when nothing happened (a server polling while
    // idle), on each backend, each over a CQ of its own (a direct one for the direct backend).
    let ctx = cq.context();
    let mlx5 = ctx.mlx5().expect("mlx5");
    let pd = ctx.alloc_pd().expect("pd");
    for (suffix, backend) in [
        ("", ::mlx5dv::SendBackend::Direct),
        ("-wr", ::mlx5dv::SendBackend::WrApi),
    ] {
        let new_cq = || match backend {
            ::mlx5dv::SendBackend::Direct => ctx.create_direct_cq(1024).unwrap(),
            _ => ctx.create_cq(1024).unwrap(),
        };
        let cfg = ::mlx5dv::PoolConfig {
            backend,
            ..::mlx5dv::PoolConfig::default()
        };
        let mut pool = ::mlx5dv::DciPool::new(&mlx5, &pd, new_cq(), cfg).expect("pool");
        let mut ep_out = [::mlx5dv::EpCompletion::default(); 16];
        g.bench_function(format!("empty-poll/pool{suffix}"), |b| {
            b.iter_custom(|iters| {
                let start = std::time::Instant::now();
                assert_eq!(pool_poll_calls(&mut pool, &mut ep_out, iters), 0, "nothing to report");
                counted(iters);
                start.elapsed()
            })
        });
        let mut ecfg = ::mlx5dv::s3::ExecutorConfig::default();
        ecfg.pool.backend = backend;
        let mut executor = ::mlx5dv::s3::Executor::new(&mlx5, &pd, new_cq(), ecfg).expect("executor");
        let mut done: Vec<::mlx5dv::s3::Done> = Vec::with_capacity(16);
        done.resize_with(16, || ::mlx5dv::s3::Done {
            id: 0,
            bytes: 0,
            status: ::mlx5dv::WcStatus::Success,
            error: None,
        });
        g.bench_function(format!("empty-poll/executor{suffix}"), |b| {
            b.iter_custom(|iters| {
                let start = std::time::Instant::now();
                assert_eq!(
                    executor_poll_calls(&mut executor, &mut done, iters),
                    0,
                    "nothing to report"
                );
                counted(iters);
                start.elapsed()
            })
        });
    }
    g.finish();
    println!("post-path count: {short} short polls");
}

/// Polls `pool` `calls` times: the `empty-poll/pool` case (callgrind counts exactly this).
#[inline(never)]
fn pool_poll_calls(pool: &mut ::mlx5dv::DciPool, out: &mut [::mlx5dv::EpCompletion], calls: u64) -> u64 {
    let mut n = 0;
    for _ in 0..calls {
        n += pool.poll(black_box(&mut *out)).expect("poll") as u64;
    }
    n
}

/// Polls `executor` `calls` times: the `empty-poll/executor` case.
#[inline(never)]
fn executor_poll_calls(executor: &mut ::mlx5dv::s3::Executor, out: &mut [::mlx5dv::s3::Done], calls: u64) -> u64 {
    let mut n = 0;
    for _ in 0..calls {
        n += executor.poll(black_box(&mut *out)).expect("poll") as u64;
    }
    n
}

criterion_group!(benches, post_path, real_mlx5);
criterion_main!(benches);
