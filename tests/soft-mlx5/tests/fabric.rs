//! Devices of different processes on one fabric (src/fabric): slots, messages, requests that
//! cross to another device and come back, and a peer that dies. Each test makes its devices in
//! one process (each with its own socket, as each process has), so nothing here preloads.

mod support;

use soft_mlx5::engine::cqe::syndrome;
use soft_mlx5::engine::wqe::opcode;
use soft_mlx5::fabric::{Delivery, Fabric, SLOT_SHIFT};
use std::path::PathBuf;
use std::time::Duration;
use support::*;

/// A fresh fabric directory for one test.
fn fabric_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("soft-mlx5-fabric-test-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn devices_of_one_node_claim_distinct_slots_and_a_dead_devices_slot_is_taken_over() {
    let dir = fabric_dir("slots");
    let a = Fabric::join(&dir, 0).unwrap();
    let b = Fabric::join(&dir, 0).unwrap();
    let other_node = Fabric::join(&dir, 1).unwrap();
    assert_eq!((a.slot, b.slot, other_node.slot), (1, 2, 1));
    drop(a);
    // Slot 1's socket file stays, but nobody reads it: the next device takes it over.
    let c = Fabric::join(&dir, 0).unwrap();
    assert_eq!(c.slot, 1);
}

#[test]
fn messages_arrive_whole_with_their_senders_address_even_across_fragments() {
    let dir = fabric_dir("messages");
    let mut a = Fabric::join(&dir, 0).unwrap();
    let mut b = Fabric::join(&dir, 1).unwrap();
    let small = b"hello".to_vec();
    let large: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    assert_eq!(a.send(&a.peer(1, b.slot), &small), Delivery::Sent);
    assert_eq!(a.send(&a.peer(1, b.slot), &large), Delivery::Sent);
    let mut got = Vec::new();
    for _ in 0..1000 {
        a.flush();
        got.extend(b.receive());
        if got.len() == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(got.len(), 2, "both messages arrive");
    let from_a = a.peer(0, a.slot);
    assert_eq!(got[0], (from_a.clone(), small));
    assert_eq!(got[1], (from_a, large));
}

#[test]
fn a_message_to_a_device_that_died_is_lost() {
    let dir = fabric_dir("lost");
    let mut a = Fabric::join(&dir, 0).unwrap();
    let b = Fabric::join(&dir, 1).unwrap();
    let to_b = a.peer(1, b.slot);
    assert!(a.alive(&to_b));
    drop(b);
    assert!(!a.alive(&to_b));
    assert_eq!(a.send(&to_b, b"anyone?"), Delivery::Lost);
    assert_eq!(a.send(&a.peer(5, 9), b"never was"), Delivery::Lost);
}

/// A DCI on node 0 and a DCT on node 1, two devices as two processes would have them.
struct TwoNodes {
    a: Bed,
    b: Bed,
    dci: TQp,
    scq: TCq,
    local: TMr,
    dct: TDct,
    rcq: TCq,
    srq: TSrq,
    target: TMr,
}

impl TwoNodes {
    fn new(dir: &std::path::Path, cfg: &QpCfg) -> TwoNodes {
        let mut a = Bed::on_fabric("cx5-ib", 0, dir);
        let mut b = Bed::on_fabric("cx5-ib", 1, dir);
        let (pa, pb) = (a.pd(), b.pd());
        let scq = a.cq(63);
        let local = a.mr(pa, 4096, ALL_ACCESS);
        let dci = a.dci(pa, &scq, cfg);
        let rcq = b.cq(63);
        let srq = b.srq(pb, 31, 4);
        let target = b.mr(pb, 4096, ALL_ACCESS);
        let dct = b.dct(pb, &rcq, &srq, DC_KEY, cfg);
        TwoNodes {
            a,
            b,
            dci,
            scq,
            local,
            dct,
            rcq,
            srq,
            target,
        }
    }

    fn av(&self, key: u64) -> AvSpec {
        AvSpec {
            key,
            dqpn: self.dct.dctn,
            rlid: self.b.dev.profile.lid_of(1),
        }
    }

    /// Steps both devices until the requester's CQ holds `n` CQEs.
    fn run_until_completions(&mut self, n: usize, budget: Duration) -> Vec<Cqe64> {
        let start = std::time::Instant::now();
        let mut got = Vec::new();
        while got.len() < n {
            assert!(
                start.elapsed() < budget,
                "only {} of {n} completions within {budget:?}",
                got.len()
            );
            soft_mlx5::engine::step(&mut self.a.dev);
            soft_mlx5::engine::step(&mut self.b.dev);
            got.extend(self.scq.drain());
            std::thread::yield_now();
        }
        got
    }
}

#[test]
fn dc_requests_reach_a_dct_of_another_device_and_complete_as_on_one_device() {
    let dir = fabric_dir("dc");
    let mut t = TwoNodes::new(&dir, &QpCfg::default());
    assert_eq!(t.a.dev.slot, 1);
    assert_eq!(
        t.dct.dctn >> SLOT_SHIFT,
        t.b.dev.slot,
        "the DCT number names its device's slot"
    );
    t.local.buf.write(0, b"across the fabric");
    t.target.buf.put_ne64(64, 40);
    let recv = t.srq.post_recv(&[(t.target.buf.at(1024), 64, t.target.key)]);
    let av = t.av(DC_KEY);
    let mut write = Wr::write(
        &[(t.local.buf.addr(), 17, t.local.key)],
        t.target.buf.addr(),
        t.target.key,
    );
    write.av = Some(av);
    let mut send = Wr::send(&[(t.local.buf.addr(), 17, t.local.key)]);
    send.av = Some(av);
    send.opcode = opcode::SEND_IMM;
    send.imm = 0x1234;
    let mut faa = Wr::new(opcode::ATOMIC_FA);
    faa.sges = vec![(t.local.buf.at(512), 8, t.local.key)];
    faa.raddr = Some((t.target.buf.at(64), t.target.key));
    faa.atomic = Some((2, 0));
    faa.av = Some(av);
    let mut read = Wr::new(opcode::RDMA_READ);
    read.sges = vec![(t.local.buf.at(256), 17, t.local.key)];
    read.raddr = Some((t.target.buf.addr(), t.target.key));
    read.av = Some(av);
    for wr in [&write, &send, &faa, &read] {
        t.dci.post(wr);
    }
    let cqes = t.run_until_completions(4, Duration::from_secs(10));
    let ok: Vec<_> = cqes.iter().map(|c| (c.opcode, c.byte_cnt)).collect();
    assert_eq!(
        ok,
        [(0, 17), (0, 17), (0, 8), (0, 17)],
        "four successful requester CQEs"
    );
    assert_eq!(
        t.target.buf.read(0, 17),
        b"across the fabric",
        "the write landed at node 1"
    );
    assert_eq!(t.target.buf.ne64(64), 42, "fetch-and-add added at node 1");
    assert_eq!(t.local.buf.ne64(512), 40, "and returned the original value");
    assert_eq!(
        t.local.buf.read(256, 17),
        b"across the fabric",
        "the read brought it back"
    );
    let rcqes = t.rcq.drain();
    assert_eq!(rcqes.len(), 1);
    assert_eq!(rcqes[0].wqe_counter, recv as u16);
    assert_eq!(rcqes[0].imm, 0x1234);
    assert_eq!(
        rcqes[0].src_qp, t.dci.qpn,
        "the receive names the DCI of the other device"
    );
    assert_eq!(t.target.buf.read(1024, 17), b"across the fabric");
}

/// Two retries of a short timeout: retry-exceeded comes quickly.
fn few_retries() -> QpCfg {
    QpCfg {
        retry_cnt: 2,
        timeout: 8,
        ..QpCfg::default()
    }
}

#[test]
fn a_wrong_dc_key_across_the_fabric_is_dropped_and_the_dci_exhausts_its_retries() {
    let dir = fabric_dir("key");
    let mut t = TwoNodes::new(&dir, &few_retries());
    let mut write = Wr::write(
        &[(t.local.buf.addr(), 8, t.local.key)],
        t.target.buf.addr(),
        t.target.key,
    );
    write.av = Some(t.av(DC_KEY ^ 1));
    t.dci.post(&write);
    let cqes = t.run_until_completions(1, Duration::from_secs(10));
    assert_eq!(cqes[0].syndrome, syndrome::TRANSPORT_RETRY_EXC_ERR);
    assert_eq!(t.target.buf.read(0, 8), [0u8; 8], "nothing was written");
}

/// Posts a write on `t`'s DCI to `av` and returns how long until its completion, and the CQE.
fn time_to_completion(t: &mut TwoNodes, av: AvSpec) -> (Duration, Cqe64) {
    let mut write = Wr::write(
        &[(t.local.buf.addr(), 8, t.local.key)],
        t.target.buf.addr(),
        t.target.key,
    );
    write.av = Some(av);
    let start = std::time::Instant::now();
    t.dci.post(&write);
    let cqes = t.run_until_completions(1, Duration::from_secs(20));
    (start.elapsed(), cqes[0])
}

#[test]
fn a_wrong_dc_key_is_dropped_silently_counted_at_the_dct_and_fails_after_the_ack_timeouts_as_a_dead_target() {
    // mlx5: a DCT drops a request with a wrong DC key without a NAK and counts it in its
    // context (dc_access_key_violation_count); the initiator learns nothing until its local
    // ACK timer (IBA 9.7.6.1.3) has run out retry_cnt + 1 times, exactly as for a target
    // nobody serves. SOFT_MLX5_DCKEY_SILENT=0 retries at once (the kinder model).
    let cfg = QpCfg {
        retry_cnt: 3,
        // 4.096 us * 2^21 = 8.6 s, scaled a thousandfold: 8.6 ms per attempt.
        timeout: 21,
        ..QpCfg::default()
    };
    init_time_scale();
    let per_attempt = soft_mlx5::engine::timing::ack_timeout(21).unwrap();
    let attempts = u32::from(cfg.retry_cnt) + 1;
    let dir = fabric_dir("key-silent");
    let mut t = TwoNodes::new(&dir, &cfg);
    let wrong = t.av(DC_KEY ^ 1);
    let (wrong_key, cqe) = time_to_completion(&mut t, wrong);
    assert_eq!(cqe.syndrome, syndrome::TRANSPORT_RETRY_EXC_ERR);
    assert_eq!(t.target.buf.read(0, 8), [0u8; 8], "nothing was written");
    let violations = t.b.dev.qps[&t.dct.h].dc_access_key_violation_count();
    assert_eq!(violations, attempts, "every attempt counted at the DCT");
    // A target on a node nobody serves: every attempt times out.
    let mut d = TwoNodes::new(&fabric_dir("key-silent-dead"), &cfg);
    let dead = AvSpec {
        rlid: d.b.dev.profile.lid_of(9),
        ..d.av(DC_KEY)
    };
    let (dead_target, cqe) = time_to_completion(&mut d, dead);
    assert_eq!(cqe.syndrome, syndrome::TRANSPORT_RETRY_EXC_ERR);
    assert!(
        wrong_key >= per_attempt * attempts,
        "a wrong key failed after {wrong_key:?}; {attempts} ACK timeouts of {per_attempt:?} take {:?} \
         (a dead target: {dead_target:?})",
        per_attempt * attempts
    );
    // The same timers: no faster than half the dead target's time (a loaded machine adds
    // scheduling delays to either).
    assert!(
        wrong_key * 2 >= dead_target,
        "a wrong key ({wrong_key:?}) fails as late as a dead target ({dead_target:?})"
    );
}

#[test]
fn when_the_peer_device_dies_its_requesters_see_retry_exceeded_as_on_a_wire() {
    let dir = fabric_dir("dies");
    let mut t = TwoNodes::new(&dir, &few_retries());
    let mut write = Wr::write(
        &[(t.local.buf.addr(), 8, t.local.key)],
        t.target.buf.addr(),
        t.target.key,
    );
    write.av = Some(t.av(DC_KEY));
    t.dci.post(&write);
    assert_eq!(t.run_until_completions(1, Duration::from_secs(10))[0].opcode, 0);
    // A request reaches node 1's socket, then node 1's process dies before answering: its
    // device and socket are gone, its socket file stays behind.
    let TwoNodes {
        mut a,
        b,
        mut dci,
        mut scq,
        ..
    } = t;
    dci.post(&write);
    soft_mlx5::engine::step(&mut a.dev);
    assert!(
        soft_mlx5::engine::requester::awaiting_remote(&a.dev.qps[&dci.h]),
        "the request awaits node 1's answer"
    );
    drop(b);
    let start = std::time::Instant::now();
    let cqe = loop {
        soft_mlx5::engine::step(&mut a.dev);
        if let Some(c) = scq.poll() {
            break c;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "the requester hangs");
        std::thread::yield_now();
    };
    assert_eq!(cqe.syndrome, syndrome::TRANSPORT_RETRY_EXC_ERR);
}

// ---------------------------------------------------------------------------------------------
// A lossy wire (SOFT_MLX5_FAULTS): IBA 9.7 retries, duplicate detection, replayed responses.
// ---------------------------------------------------------------------------------------------

/// Both devices' wires with `spec`; a local ACK timeout (4.096 us * 2^21, scaled a
/// thousandfold: about 8.6 ms) longer than a delayed message is held (5 ms), so that what
/// times out is what the faults lost, not a slow step of tests running side by side.
fn lossy(dir: &std::path::Path, spec: &str) -> TwoNodes {
    let mut t = TwoNodes::new(
        dir,
        &QpCfg {
            timeout: 21,
            retry_cnt: 7,
            ..QpCfg::default()
        },
    );
    if !spec.is_empty() {
        for bed in [&mut t.a, &mut t.b] {
            let f = soft_mlx5::fabric::faults::Faults::parse(spec).unwrap();
            bed.dev.fabric.as_mut().unwrap().faults = Some(f);
        }
    }
    t
}

/// Posts `n` fetch-and-adds of 1 to target offset 64, each answered into local offset 8*k,
/// waiting for each before the next (so a ring of 16 never overflows).
fn fetch_adds(t: &mut TwoNodes, n: usize) -> Vec<Cqe64> {
    let mut all = Vec::new();
    for k in 0..n {
        let mut faa = Wr::new(opcode::ATOMIC_FA);
        faa.sges = vec![(t.local.buf.at(8 * k), 8, t.local.key)];
        faa.raddr = Some((t.target.buf.at(2048), t.target.key));
        faa.atomic = Some((1, 0));
        faa.av = Some(t.av(DC_KEY));
        t.dci.post(&faa);
        all.extend(t.run_until_completions(1, Duration::from_secs(20)));
    }
    all
}

#[test]
fn on_a_lossy_reordering_wire_every_fetch_and_add_executes_exactly_once_and_returns_its_own_value() {
    // Lost requests and lost answers are retried with the same PSN; a retry or a copy of
    // something the responder executed is answered from its saved result, never executed
    // again (IBA 9.7.5.1.1).
    for spec in [
        "loss=0.2,seed=3",
        "dup=1",
        "loss=0.1,dup=0.2,reorder=0.2,delay=0.2,seed=11",
    ] {
        let dir = fabric_dir("lossy");
        let mut t = lossy(&dir, spec);
        let c = fetch_adds(&mut t, 40);
        assert!(c.iter().all(|c| c.opcode == 0), "{spec}: {c:?}");
        assert_eq!(t.target.buf.ne64(2048), 40, "{spec}: each executed once");
        let mut seen: Vec<u64> = (0..40).map(|k| t.local.buf.ne64(8 * k)).collect();
        seen.sort_unstable();
        assert_eq!(
            seen,
            (0..40).collect::<Vec<u64>>(),
            "{spec}: each saw its own original value"
        );
    }
}

#[test]
fn on_a_wire_that_loses_everything_the_dci_exhausts_its_retries() {
    let dir = fabric_dir("lossall");
    let mut t = lossy(&dir, "loss=1");
    let mut write = Wr::write(
        &[(t.local.buf.addr(), 8, t.local.key)],
        t.target.buf.addr(),
        t.target.key,
    );
    write.av = Some(t.av(DC_KEY));
    t.dci.post(&write);
    let cqes = t.run_until_completions(1, Duration::from_secs(20));
    assert_eq!(cqes[0].syndrome, syndrome::TRANSPORT_RETRY_EXC_ERR);
}

/// A DC fetch-and-add of 1 on target offset 2048, its original value to local offset 8*k.
fn faa_wr(t: &TwoNodes, k: usize) -> Wr {
    let mut faa = Wr::new(opcode::ATOMIC_FA);
    faa.sges = vec![(t.local.buf.at(8 * k), 8, t.local.key)];
    faa.raddr = Some((t.target.buf.at(2048), t.target.key));
    faa.atomic = Some((1, 0));
    faa.av = Some(t.av(DC_KEY));
    faa
}

#[test]
fn requests_to_another_process_are_pipelined_and_executed_in_order_even_on_a_reordering_lossy_wire() {
    for spec in [
        "",
        "reorder=0.3,delay=0.2,seed=5",
        "loss=0.1,dup=0.2,reorder=0.2,delay=0.1,seed=8",
    ] {
        let dir = fabric_dir("pipelined");
        let mut t = lossy(&dir, spec);
        for batch in 0..5 {
            for k in 0..8 {
                t.dci.post(&faa_wr(&t, batch * 8 + k));
            }
            if batch == 0 && spec.is_empty() {
                // All eight leave in one pass, before any answer is back (IBA 9.7.5: the
                // requester does not wait for each acknowledgement).
                soft_mlx5::engine::step(&mut t.a.dev);
                let qp = &t.a.dev.qps[&t.dci.h];
                assert_eq!(soft_mlx5::engine::requester::reads_in_flight(qp), 8);
            }
            let c = t.run_until_completions(8, Duration::from_secs(20));
            assert!(c.iter().all(|c| c.opcode == 0), "{spec}: {c:?}");
        }
        // In order and once each: the k-th saw k.
        let seen: Vec<u64> = (0..40).map(|k| t.local.buf.ne64(8 * k)).collect();
        assert_eq!(seen, (0..40).collect::<Vec<u64>>(), "{spec:?}");
        assert_eq!(t.target.buf.ne64(2048), 40);
    }
}

#[test]
fn a_write_behind_a_send_waiting_on_rnr_at_another_process_waits_too() {
    // IBA 9.7.5.2.2: after the RNR NAK the responder discards what follows (PSN sequence
    // error) until the send comes again; the write executes only after it.
    let dir = fabric_dir("rnr-order");
    let mut t = TwoNodes::new(
        &dir,
        &QpCfg {
            rnr_retry: 7,
            min_rnr_timer: 31,
            ..QpCfg::default()
        },
    );
    let mut send = Wr::send(&[(t.local.buf.addr(), 4, t.local.key)]);
    send.av = Some(t.av(DC_KEY));
    let mut write = Wr::write_inline(b"late", t.target.buf.at(100), t.target.key);
    write.av = Some(t.av(DC_KEY));
    t.dci.post(&send);
    t.dci.post(&write);
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_millis(30) {
        soft_mlx5::engine::step(&mut t.a.dev);
        soft_mlx5::engine::step(&mut t.b.dev);
        std::thread::yield_now();
    }
    assert_eq!(t.target.buf.read(100, 4), [0; 4], "the write waits behind the send");
    t.srq.post_recv(&[(t.target.buf.at(1024), 16, t.target.key)]);
    let c = t.run_until_completions(2, Duration::from_secs(20));
    assert!(c.iter().all(|c| c.opcode == 0), "{c:?}");
    assert_eq!(t.target.buf.read(100, 4), b"late");
}

#[test]
fn a_retried_atomic_finds_its_result_saved_however_many_atomics_followed_it() {
    // An atomic whose answer was lost stays outstanding, and with it its place in the
    // initiator depth (max_rd_atomic): no more atomics pass it than the responder keeps
    // results for (IBA 9.4.5, responder resources), so its retry is answered from the saved
    // result, never refused and never executed again.
    for seed in 1..=6 {
        let dir = fabric_dir("replay-depth");
        let mut t = TwoNodes::new(
            &dir,
            &QpCfg {
                timeout: 21,
                retry_cnt: 7,
                sq_cnt: 64,
                ..QpCfg::default()
            },
        );
        for bed in [&mut t.a, &mut t.b] {
            let f = soft_mlx5::fabric::faults::Faults::parse(&format!("loss=0.15,seed={seed}")).unwrap();
            bed.dev.fabric.as_mut().unwrap().faults = Some(f);
        }
        for batch in 0..3 {
            for k in 0..32 {
                t.dci.post(&faa_wr(&t, batch * 32 + k));
            }
            let c = t.run_until_completions(32, Duration::from_secs(30));
            assert!(c.iter().all(|c| c.opcode == 0), "seed {seed}: {c:?}");
        }
        let seen: Vec<u64> = (0..96).map(|k| t.local.buf.ne64(8 * k)).collect();
        assert_eq!(seen, (0..96).collect::<Vec<u64>>(), "seed {seed}");
    }
}

/// Two devices whose ports disagree on the message limit (two processes started with different
/// SOFT_MLX5_LOG_MAX_MSG, or two HCAs): the requester's own check lets a 4097-byte message go,
/// and the responder, whose max_msg_sz is 4 KiB, answers NAK invalid request (IBA C9-94;
/// rxe_resp.c check_length), so the DCI completes with a remote invalid request error, nothing
/// is written or read at node 1, and a request within both limits still completes.
#[test]
fn a_message_longer_than_the_responders_max_msg_sz_is_nakked_invalid_request() {
    let dir = fabric_dir("max-msg");
    let mut t = TwoNodes::new(&dir, &few_retries());
    t.a.dev.log_max_msg = 31;
    t.b.dev.log_max_msg = 12;
    // The PDs the DCI and the DCT are in.
    let (pa, pb) = (t.a.dev.qps[&t.dci.h].pd, t.b.dev.qps[&t.dct.h].pd);
    let local = t.a.mr(pa, 8192, ALL_ACCESS);
    let far = t.b.mr(pb, 8192, ALL_ACCESS);
    local.buf.write(0, &[7; 8192]);
    far.buf.write(0, &[9; 8192]);
    let av = t.av(DC_KEY);
    let mut write = Wr::write(&[(local.buf.addr(), 4097, local.key)], far.buf.addr(), far.key);
    write.av = Some(av);
    let mut read = Wr::new(opcode::RDMA_READ);
    read.sges = vec![(local.buf.addr(), 4097, local.key)];
    read.raddr = Some((far.buf.addr(), far.key));
    read.av = Some(av);
    for wr in [&write, &read] {
        let i = t.dci.post(wr);
        let c = t.run_until_completions(1, Duration::from_secs(10));
        assert_eq!(
            (c[0].syndrome, c[0].wqe_counter),
            (syndrome::REMOTE_INVAL_REQ_ERR, i),
            "opcode {:#x}: {c:?}",
            wr.opcode
        );
        // The DCI is in ERR now: a fresh one for the next request.
        t.dci = t.a.dci(pa, &t.scq, &few_retries());
    }
    assert_eq!(far.buf.read(0, 8192), [9; 8192], "nothing was written at node 1");
    assert_eq!(local.buf.read(0, 8192), [7; 8192], "nothing was read back");
    let mut ok = Wr::write(&[(local.buf.addr(), 4096, local.key)], far.buf.addr(), far.key);
    ok.av = Some(av);
    t.dci.post(&ok);
    let c = t.run_until_completions(1, Duration::from_secs(10));
    assert_eq!((c[0].opcode, c[0].syndrome), (0, 0), "{c:?}");
    assert_eq!(far.buf.read(0, 4096), [7; 4096]);
}
