//! Tier 3, soft-mlx5: what the direct backend owns that libmlx5 owned for its own QPs, seen
//! through a QP's whole life (dc-review-3.md, findings 2 and 3):
//! - a direct CQ is cleaned of a QP's unread completions when the QP is destroyed or reset
//!   (libmlx5's `mlx5_destroy_qp` and `mlx5_modify_qp(RESET)` clean their own CQs through
//!   `__mlx5_cq_clean`, which returns at once for a CQ `mlx5dv_init_obj` described): no stale
//!   entry fails a poll, reaches another DCI, a new QP given the same number, or retires a
//!   request posted after a recovery;
//! - each direct QP rings a BlueFlame register of its own.
//!
//! Run on soft-mlx5 with `SOFT_MLX5_QPN_REUSE=1` too (scripts/test): the emulator then hands a
//! freed QP number out again at once, so a stale completion of a dropped DCI meets its
//! successor, as on silicon once the numbers wrap.
//!
//! With `MLX5DV_TEST_POLL=lean` every poll is `Cq::poll_lean` (scripts/test runs both): the
//! lean completions must hold to the same rules.
//!
//! Opt-in like tests/hw_dc.rs: `scripts/soft-mlx5 -- <this test binary> --include-ignored
//! --test-threads=1`. The tests that pause the device print "not run" where it cannot be paused
//! (a ConnectX).
use mlx5dv::raw;
use mlx5dv::{Access, Completion, Cq, DcKey, DcPeer, Dci, DciBuilder, LeanCompletion, RtsAttr, SendBackend};
use mlx5dv_suite::device::{dct, loopback_path, open, pause_hook};
use std::time::{Duration, Instant};

const KEY: DcKey = DcKey::new(0x5741_1E00);
const MTU: u32 = 1024;

/// Whether entry `index` of `cq`'s ring holds a completion not yet read (its owner bit is the
/// pass's), looked at without consuming it.
fn ring_holds(cq: &Cq, index: u32) -> bool {
    // SAFETY: plain data: all-zero is valid.
    let mut out: raw::mlx5dv_cq = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut obj: raw::mlx5dv_obj = unsafe { std::mem::zeroed() };
    obj.cq.r#in = cq.as_raw_cq();
    obj.cq.out = &mut out;
    // SAFETY: a live mlx5 CQ; `out` outlives the call.
    assert_eq!(unsafe { raw::mlx5dv_init_obj(&mut obj, raw::MLX5DV_OBJ_CQ) }, 0);
    let i = (index & (out.cqe_cnt - 1)) as usize;
    // SAFETY: the last byte (op_own) of entry i's 64-byte CQE, inside the ring.
    let op_own = unsafe {
        out.buf
            .cast::<u8>()
            .add(i * out.cqe_size as usize + out.cqe_size as usize - 1)
            .read_volatile()
    };
    u32::from(op_own >> 4) != raw::MLX5_CQE_INVALID && u32::from(op_own & 1) == u32::from(index & out.cqe_cnt != 0)
}

/// Waits until the device has written entry `index` of `cq`'s ring.
fn wait_written(cq: &Cq, index: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ring_holds(cq, index) {
        assert!(Instant::now() < deadline, "the device wrote no CQE {index}");
        std::thread::yield_now();
    }
}

/// The poll under test: `Cq::poll`, or `Cq::poll_lean` with `MLX5DV_TEST_POLL=lean` (its
/// completions written back as `Completion`s, what the lean form leaves out at its default).
fn poll(cq: &Cq, buf: &mut [Completion]) -> mlx5dv::Result<usize> {
    if std::env::var_os("MLX5DV_TEST_POLL").is_some_and(|v| v == "lean") {
        let mut lean = [LeanCompletion::default(); 16];
        let room = buf.len().min(lean.len());
        let k = cq.poll_lean(&mut lean[..room])?;
        for (b, l) in buf.iter_mut().zip(&lean[..k]) {
            *b = Completion {
                wr_id: l.wr_id,
                status: l.status,
                opcode: l.opcode,
                byte_len: l.byte_len,
                qp_num: l.qp_num,
                ..Completion::default()
            };
        }
        return Ok(k);
    }
    cq.poll(buf)
}

/// Polls `cq` until `n` completions came, failing on any error; then checks nothing else comes
/// within a short while.
fn exactly(cq: &Cq, n: usize) -> Vec<Completion> {
    let mut got = Vec::new();
    let mut buf = [Completion::default(); 16];
    let deadline = Instant::now() + Duration::from_secs(10);
    while got.len() < n {
        let k = poll(cq, &mut buf).expect("a direct CQ poll");
        got.extend_from_slice(&buf[..k]);
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {n} completions: {got:?}"
        );
    }
    let quiet = Instant::now() + Duration::from_millis(100);
    while Instant::now() < quiet {
        let k = poll(cq, &mut buf).expect("a direct CQ poll");
        got.extend_from_slice(&buf[..k]);
    }
    assert_eq!(got.len(), n, "exactly {n} completions: {got:?}");
    got
}

/// A DC node on the test device: PD, a DCT with a 4 KiB target, and a peer for it.
struct Node {
    ctx: mlx5dv::Context,
    mlx5: mlx5dv::Mlx5Context,
    pd: mlx5dv::Pd,
    port: u8,
    peer: DcPeer,
    remote: mlx5dv::RemoteMemory,
    _keep: (mlx5dv::Dct, mlx5dv::Cq, mlx5dv::Srq, mlx5dv::Mr, mlx5dv::Ah),
}

fn node() -> Node {
    let (ctx, port, gid_index) = open();
    let mlx5 = ctx.mlx5().expect("mlx5");
    let pd = ctx.alloc_pd().expect("PD");
    let cq = ctx.create_cq(64).expect("CQ");
    let srq = pd.create_srq(16, 1).expect("SRQ");
    let (dct, addr) = dct(&mlx5, &pd, &cq, &srq, port, gid_index, KEY, MTU, None);
    let target = pd
        .alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE)
        .expect("target");
    let remote = target.remote().expect("remote write");
    let ah = pd.create_ah(port, &loopback_path(&ctx, port, gid_index)).expect("AH");
    let peer = DcPeer::new(&ah, &addr, KEY);
    Node {
        ctx,
        mlx5,
        pd,
        port,
        peer,
        remote,
        _keep: (dct, cq, srq, target, ah),
    }
}

impl Node {
    fn dci(&self, cq: &Cq) -> Dci<mlx5dv::state::Rts> {
        DciBuilder::new(&self.mlx5, &self.pd, cq)
            .max_send_wr(8)
            .backend(SendBackend::Direct)
            .build_ready(self.port, MTU, RtsAttr::default())
            .expect("direct DCI to RTS")
    }

    fn write(&self, dci: &mut Dci<mlx5dv::state::Rts>, wr_id: u64) {
        let mut batch = dci.batch();
        batch
            .rdma_write(wr_id, self.remote.slice(0, 8).unwrap())
            .to(&self.peer)
            .inline(&wr_id.to_le_bytes())
            .unwrap();
        batch.commit().unwrap();
    }
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn a_dropped_direct_dcis_unread_completion_reaches_neither_a_dci_sharing_its_cq_nor_the_dci_given_its_number() {
    let n = node();
    let cq = n.ctx.create_direct_cq(16).expect("direct CQ");
    let mut a = n.dci(&cq);
    let b_other = n.dci(&cq);
    let a_num = a.qp_num();
    n.write(&mut a, 100);
    wait_written(&cq, 0);
    drop(a);
    // The DCI sharing the CQ: nothing of A's is reported, nor fails its polls.
    let mut b = b_other;
    n.write(&mut b, 7);
    let got = exactly(&cq, 1);
    assert_eq!((got[0].wr_id, got[0].qp_num), (7, b.qp_num()), "{got:?}");
    // Once more with A's completion unread, and a DCI created after A is gone: with
    // SOFT_MLX5_QPN_REUSE=1 it gets A's number, as numbers come back on silicon.
    let mut a = n.dci(&cq);
    let a_num2 = a.qp_num();
    n.write(&mut a, 101);
    wait_written(&cq, 1);
    drop(a);
    let mut c = n.dci(&cq);
    eprintln!(
        "dropped DCIs {a_num:#x}, {a_num2:#x}; the new DCI is {:#x}{}",
        c.qp_num(),
        if c.qp_num() == a_num2 {
            " (the dropped one's number)"
        } else {
            ""
        }
    );
    n.write(&mut c, 9);
    n.write(&mut c, 10);
    let got = exactly(&cq, 2);
    let ids: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.qp_num)).collect();
    assert_eq!(ids, [(9, c.qp_num()), (10, c.qp_num())], "{got:?}");
    assert_eq!(c.outstanding(), 0);
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn a_recovered_direct_dcis_unread_completion_never_retires_a_request_posted_after_the_recovery() {
    let Some(pause) = pause_hook() else {
        eprintln!("not run: no soft-mlx5 here (a ConnectX cannot be paused)");
        return;
    };
    let n = node();
    let cq = n.ctx.create_direct_cq(16).expect("direct CQ");
    let mut dci = n.dci(&cq);
    n.write(&mut dci, 100);
    wait_written(&cq, 0);
    // A recovery with the completion unread: the send queue restarts at WQE index 0, where the
    // stale entry points.
    let mut dci = dci.recover().expect("recover");
    // SAFETY: the emulator's hook, called with 1 (pause) then 0 (resume).
    unsafe { pause(1) };
    n.write(&mut dci, 200);
    let mut out = [Completion::default(); 4];
    let k = poll(&cq, &mut out);
    // SAFETY: as above.
    unsafe { pause(0) };
    assert_eq!(
        k.expect("a poll after the recovery").min(4),
        0,
        "nothing completed while the device was paused: {:?}",
        &out[..1]
    );
    assert_eq!(
        dci.outstanding(),
        1,
        "the request posted after the recovery is outstanding"
    );
    let got = exactly(&cq, 1);
    assert_eq!(got[0].wr_id, 200, "{got:?}");
    assert!(got[0].status.is_success(), "{got:?}");
}

/// The BlueFlame register `mlx5dv_init_obj` gives for `qp` (its address; size 0: none).
fn blueflame_of(qp: *mut raw::ibv_qp) -> (usize, u32) {
    // SAFETY: plain data: all-zero is valid.
    let mut out: raw::mlx5dv_qp = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut obj: raw::mlx5dv_obj = unsafe { std::mem::zeroed() };
    obj.qp.r#in = qp;
    obj.qp.out = &mut out;
    // SAFETY: a live mlx5 QP; `out` outlives the call.
    assert_eq!(unsafe { raw::mlx5dv_init_obj(&mut obj, raw::MLX5DV_OBJ_QP) }, 0);
    (out.bf.reg as usize, out.bf.size)
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn each_of_twenty_four_direct_dcis_rings_a_blueflame_register_no_other_qp_uses() {
    let n = node();
    let cq = n.ctx.create_direct_cq(64).expect("direct CQ");
    let wr_cq = n.ctx.create_cq(256).expect("CQ");
    // libmlx5's own DCIs first, so the shared registers are handed out, then the direct ones
    // (UCX's default is 32 DCIs; 24 made soft-mlx5's mlx5_ib share 9 registers in the third
    // reading).
    let wr_dcis: Vec<Dci<mlx5dv::state::Rts>> = (0..8)
        .map(|_| {
            DciBuilder::new(&n.mlx5, &n.pd, &wr_cq)
                .build_ready(n.port, MTU, RtsAttr::default())
                .expect("wr-API DCI")
        })
        .collect();
    let direct: Vec<Dci<mlx5dv::state::Rts>> = (0..24).map(|_| n.dci(&cq)).collect();
    let mut users: std::collections::BTreeMap<usize, Vec<String>> = Default::default();
    for (kind, dci) in wr_dcis
        .iter()
        .map(|d| ("wr", d))
        .chain(direct.iter().map(|d| ("direct", d)))
    {
        let (reg, size) = blueflame_of(dci.as_raw());
        assert!(
            size > 0 || kind == "wr",
            "direct DCI {:#x} has no BlueFlame register",
            dci.qp_num()
        );
        users
            .entry(reg)
            .or_default()
            .push(format!("{kind} {:#x}", dci.qp_num()));
    }
    for (reg, qps) in &users {
        if qps.iter().any(|q| q.starts_with("direct")) {
            assert_eq!(qps.len(), 1, "register {reg:#x} is shared by {qps:?}");
        }
    }
    // Each still works through its own register.
    for (i, mut dci) in direct.into_iter().enumerate() {
        n.write(&mut dci, 1000 + i as u64);
        let got = exactly(&cq, 1);
        assert_eq!(got[0].wr_id, 1000 + i as u64, "{got:?}");
        assert!(got[0].status.is_success(), "{got:?}");
    }
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn adopting_a_dci_whose_cq_is_a_direct_one_is_refused_with_einval() {
    let n = node();
    let cq = n.ctx.create_cq(256).expect("CQ");
    let direct_cq = n.ctx.create_direct_cq(256).expect("direct CQ");
    let dci = DciBuilder::new(&n.mlx5, &n.pd, &cq)
        .build_ready(n.port, MTU, RtsAttr::default())
        .expect("wr-API DCI");
    // SAFETY: the DCI's own live objects; the refusal adopts nothing (no second destroy).
    let err = unsafe {
        let qpx = std::ptr::NonNull::new(raw::ibv_qp_to_qp_ex(dci.as_raw())).unwrap();
        let mqp = std::ptr::NonNull::new(raw::mlx5dv_qp_ex_from_ibv_qp_ex(qpx.as_ptr())).unwrap();
        Dci::from_raw_parts(
            qpx,
            mqp,
            mlx5dv::DciParts {
                device: "mlx5_0",
                cq: Some(&direct_cq),
                caps: dci.caps(),
                send_ops: 0,
                dci_streams: false,
                port: n.port,
                pkey_index: 0,
                mtu: raw::IBV_MTU_1024,
                rts: RtsAttr::default(),
            },
        )
    }
    .expect_err("a direct CQ is refused");
    assert_eq!(err.errno(), Some(libc::EINVAL), "{err}");
    assert!(err.to_string().contains("direct CQ"), "{err}");
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn a_stand_in_queue_under_a_live_dcis_number_is_refused_with_eexist_and_the_dci_keeps_its_completions() {
    let n = node();
    let cq = n.ctx.create_direct_cq(64).expect("direct CQ");
    let mut dci = n.dci(&cq);
    let err = cq
        .direct_queue_probe(dci.qp_num(), 8, 8)
        .expect_err("the DCI's number is taken");
    assert_eq!(err.errno(), Some(libc::EEXIST), "{err}");
    let probe = cq.direct_queue_probe(0x00ff_fff0, 8, 8).expect("a free number");
    let err = cq
        .direct_queue_probe(0x00ff_fff0, 8, 8)
        .expect_err("a second stand-in under one number");
    assert_eq!(err.errno(), Some(libc::EEXIST), "{err}");
    drop(probe);
    n.write(&mut dci, 77);
    let got = exactly(&cq, 1);
    assert_eq!((got[0].wr_id, got[0].qp_num), (77, dci.qp_num()), "{got:?}");
    assert_eq!(dci.outstanding(), 0);
}

/// Thread domains allocated until the provider gives no more (each holds a BlueFlame register
/// of its own: mlx5_ib hands a context 1,024 dynamic ones), freed on drop.
struct ThreadDomains(Vec<*mut raw::ibv_td>);

impl ThreadDomains {
    fn exhaust(ctx: &mlx5dv::Context) -> ThreadDomains {
        let mut tds = Vec::new();
        loop {
            let mut attr = raw::ibv_td_init_attr { comp_mask: 0 };
            // SAFETY: the context is open; the attribute struct is initialised.
            let td = unsafe { raw::ibv_alloc_td(ctx.as_raw(), &mut attr) };
            if td.is_null() {
                break;
            }
            tds.push(td);
            assert!(tds.len() < 1 << 16, "the provider never ran out of thread domains");
        }
        ThreadDomains(tds)
    }
}

impl Drop for ThreadDomains {
    fn drop(&mut self) {
        for &td in &self.0 {
            // SAFETY: allocated above, used by nothing, freed once.
            unsafe { raw::ibv_dealloc_td(td) };
        }
    }
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn a_direct_dci_is_refused_where_the_provider_has_no_thread_domain_left_and_builds_again_once_one_is_free() {
    // dc-review-4.md, finding 4: without a thread domain the QP gets a register libmlx5 may
    // share with its own QPs, whose BlueFlame copies it makes under a lock the direct writer
    // cannot take: an unlocked doorbell store could land inside another QP's copy.
    let n = node();
    let cq = n.ctx.create_direct_cq(64).expect("direct CQ");
    let tds = ThreadDomains::exhaust(&n.ctx);
    assert!(!tds.0.is_empty(), "the provider gives thread domains at all");
    let err = DciBuilder::new(&n.mlx5, &n.pd, &cq)
        .max_send_wr(8)
        .backend(SendBackend::Direct)
        .build()
        .map(|dci| format!("a direct DCI {:#x} built on a register it may share", dci.qp_num()))
        .expect_err("no direct DCI without a register of its own");
    assert!(err.to_string().contains("ibv_alloc_td"), "{err}");
    assert!(err.to_string().contains("SendBackend::WrApi"), "{err}");
    // libmlx5's own DCIs still build there, and the direct one once a thread domain is free.
    let wr_cq = n.ctx.create_cq(64).expect("CQ");
    DciBuilder::new(&n.mlx5, &n.pd, &wr_cq)
        .max_send_wr(8)
        .build_ready(n.port, MTU, RtsAttr::default())
        .expect("a wr-API DCI without thread domains");
    drop(tds);
    let mut dci = n.dci(&cq);
    assert!(blueflame_of(dci.as_raw()).1 > 0, "a BlueFlame register of its own");
    n.write(&mut dci, 5);
    let got = exactly(&cq, 1);
    assert_eq!((got[0].wr_id, got[0].status.is_success()), (5, true), "{got:?}");
}

/// The emulator's hook that holds the next thread destroying a QP once the QP is destroyed and
/// its number free (`soft_mlx5_test_hold_destroys`: 1 arms, 0 releases, -1 only asks; returns
/// 1 while a thread is held); None on hardware.
type HoldFn = unsafe extern "C" fn(libc::c_int) -> libc::c_int;

fn hold_destroys_hook() -> Option<HoldFn> {
    // SAFETY: dlsym with a NUL-terminated name; RTLD_DEFAULT searches the loaded objects.
    let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"soft_mlx5_test_hold_destroys".as_ptr()) };
    // SAFETY: the preload exports it with exactly this signature.
    (!sym.is_null()).then(|| unsafe { std::mem::transmute::<*mut libc::c_void, HoldFn>(sym) })
}

/// Releases the held destroys when dropped (a failed assertion must not leave a thread held).
struct Release(HoldFn);

impl Drop for Release {
    fn drop(&mut self) {
        // SAFETY: the preload's hook.
        unsafe { (self.0)(0) };
    }
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn a_dci_given_the_number_of_one_still_being_dropped_gets_none_of_its_completions_and_loses_none_of_its_own() {
    // dc-review-4.md, finding 6: DCI A dropped on one thread, its number freed by the kernel;
    // before that thread cleans A's entries out of the direct CQ, the CQ's thread creates B,
    // which gets A's number. A's unread entry must not reach B, and the late clean must not
    // take B's entries.
    let Some(hold) = hold_destroys_hook() else {
        eprintln!("not run: needs soft-mlx5's hook that holds a destroying thread (no such hook on a ConnectX)");
        return;
    };
    let n = node();
    let cq = n.ctx.create_direct_cq(16).expect("direct CQ");
    let mut a = n.dci(&cq);
    let a_num = a.qp_num();
    n.write(&mut a, 100);
    wait_written(&cq, 0);
    std::thread::scope(|s| {
        let _release = Release(hold);
        // SAFETY: the preload's hook.
        unsafe { hold(1) };
        let dropper = s.spawn(move || drop(a));
        let deadline = Instant::now() + Duration::from_secs(10);
        // SAFETY: the preload's hook (-1: only asks).
        while unsafe { hold(-1) } == 0 {
            assert!(
                Instant::now() < deadline,
                "the drop of A never reached the kernel's destroy"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut b = n.dci(&cq);
        assert_eq!(
            b.qp_num(),
            a_num,
            "B did not get A's number: run with SOFT_MLX5_QPN_REUSE=1 (freed numbers handed out at once)"
        );
        let mut buf = [Completion::default(); 4];
        let k = poll(&cq, &mut buf).expect("a poll while A's destroy is unfinished");
        assert_eq!(&buf[..k], &[], "A's completion reached B");
        n.write(&mut b, 7);
        wait_written(&cq, 1);
        // SAFETY: the preload's hook.
        unsafe { hold(0) };
        dropper.join().expect("A dropped");
        let got = exactly(&cq, 1);
        assert_eq!((got[0].wr_id, got[0].qp_num), (7, b.qp_num()), "{got:?}");
        assert_eq!(b.outstanding(), 0);
    });
}
