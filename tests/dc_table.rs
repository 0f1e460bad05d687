//! Tier 3: every row of NVIDIA's exp-verbs DC mapping table that rdma-core can answer, on a
//! ConnectX-5 or newer (or soft-mlx5): a DCT read back (`ibv_exp_query_dct`), its key, state and
//! key violations (DEVX `QUERY_DCT`), out-of-order data placement
//! (`IBV_EXP_DCT_OOO_RW_DATA_PLACEMENT`) and the DC read/atomic limits
//! (`IBV_EXP_DEVICE_DC_RD_REQ/RES`). The table itself is in the `mlx5dv::dc` rustdoc.
//!
//! Opt-in like tests/hw_dc.rs: `MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test dc_table --
//! --ignored` (`MLX5DV_TEST_GID_INDEX` on RoCE). What a device or library lacks is checked as a
//! refusal with its reason. scripts/test pins what each soft-mlx5 run must find:
//! `MLX5DV_TEST_EXPECT_OOO` (1: out-of-order placement accepted, 0: refused),
//! `MLX5DV_TEST_EXPECT_DEVX` (1: QUERY_DCT answers, 0: refused for want of DEVX) and
//! `MLX5DV_TEST_EXPECT_DC_RD_ATOM` (the requester and responder limits, or `none` where the
//! library predates them); unset, each test takes what the device reports.
use mlx5dv::{
    Access, DcKey, DcPeer, DcTargetAddr, Dci, DciBuilder, DctBuilder, DctState, Mlx5Context, Mtu, RtsAttr, WcOpcode,
    WcStatus,
};
use mlx5dv_suite::device::{test_backend, wait, Hw, TestCq};
use std::time::{Duration, Instant};

const KEY: DcKey = DcKey::new(0x0DC7_AB1E_5EC2_E7ED);
const WRONG_KEY: DcKey = DcKey::new(0x0BAD_0BAD);
const MTU: u32 = 1024;

/// What scripts/test says this run must find (None: take what the device reports).
fn expect(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

/// Whether this is soft-mlx5 (scripts/soft-mlx5 names the profile).
fn on_soft_mlx5() -> bool {
    std::env::var_os("SOFT_MLX5_PROFILE").is_some()
}

fn hw() -> Hw {
    mlx5dv_suite::device::hw(KEY, MTU)
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test dc_table -- --ignored"]
fn dct_reads_back_every_attribute_it_was_built_with() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(16, 1).unwrap();
    let remote = if mlx5.has_atomics().unwrap() {
        Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC
    } else {
        Access::REMOTE_WRITE | Access::REMOTE_READ
    };
    // A GRH on InfiniBand too (GID index 0), so that every GRH field travels.
    let gid_index = hw.gid_index.unwrap_or(0);
    let dct = DctBuilder::new(&mlx5, &pd, &cq, &srq, KEY)
        .port(hw.port)
        .access(Access::LOCAL_WRITE | remote)
        .mtu(2048)
        .min_rnr_timer(17)
        .pkey_index(0)
        .gid_index(gid_index)
        .hop_limit(9)
        .traffic_class(0x28)
        .flow_label(0x1_2345)
        .build()
        .expect("DCT to RTR");

    let attr = dct.query().expect("ibv_query_qp on a DCT in RTR");
    assert_eq!(attr.port, hw.port);
    // mlx5_ib reports the remote access bits only.
    assert_eq!(attr.access, remote, "{attr:?}");
    assert_eq!(attr.min_rnr_timer, 17);
    assert_eq!(attr.mtu, Some(Mtu::Mtu2048));
    assert_eq!(attr.pkey_index, 0);

    match (dct.query_context(), expect("MLX5DV_TEST_EXPECT_DEVX").as_deref()) {
        (Ok(c), None | Some("1")) => {
            assert_eq!(c.state, DctState::Active);
            assert_eq!(c.key, KEY, "the DC key read back (compared, never printed)");
            assert_eq!(c.key_violations, 0);
            assert_eq!(
                (c.traffic_class, c.flow_label, c.gid_index, c.hop_limit),
                (0x28, 0x1_2345, gid_index, 9)
            );
            assert!(!format!("{c:?}").contains(&format!("{:x}", KEY.expose())), "{c:?}");
        }
        (Err(e), None | Some("0")) => {
            assert!(
                e.hint().contains("DEVX")
                    && matches!(e.errno(), Some(libc::EOPNOTSUPP | libc::EPROTONOSUPPORT | libc::EINVAL)),
                "{e}"
            );
            eprintln!("not run: the DCT context needs DEVX here: {e}");
        }
        (r, want) => panic!("QUERY_DCT: expected DEVX {want:?}, got {r:?}"),
    }
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test dc_table -- --ignored"]
fn dct_context_without_devx_is_refused_saying_that_it_needs_devx() {
    let hw = hw();
    if expect("MLX5DV_TEST_EXPECT_DEVX").as_deref() != Some("0") {
        eprintln!("not run: this run has DEVX (MLX5DV_TEST_EXPECT_DEVX is not 0)");
        return;
    }
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(16, 1).unwrap();
    let dct = hw.dct_builder(&mlx5, &pd, &cq, &srq).build().unwrap();
    let e = dct.query_context().expect_err("QUERY_DCT without DEVX");
    assert_eq!(e.op(), "mlx5dv_devx_qp_query (QUERY_DCT)");
    assert!(e.hint().contains("no DEVX"), "{e}");
    assert!(e.errno().is_some_and(|n| n != 0), "{e}");
    // What verbs give still works.
    assert_eq!(dct.query().unwrap().port, hw.port);
}

/// Posts one inline RDMA write to `peer` and returns its completion status.
fn write_to(dci: &mut Dci<mlx5dv::state::Rts>, cq: &TestCq, peer: &DcPeer, remote: mlx5dv::RemoteMemory) -> WcStatus {
    let mut batch = dci.batch();
    batch.rdma_write(1, remote).to(peer).inline(b"key?").unwrap();
    batch.commit().unwrap();
    wait(cq, 1)[0].status
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test dc_table -- --ignored"]
fn dct_key_violation_count_rises_by_exactly_the_wrong_key_requests_sent() {
    let hw = hw();
    if expect("MLX5DV_TEST_EXPECT_DEVX").as_deref() == Some("0") {
        eprintln!("not run: the key-violation count is read through DEVX, absent here");
        return;
    }
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(16, 1).unwrap();
    let dct = hw.dct_builder(&mlx5, &pd, &cq, &srq).build().unwrap();
    let target = pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let remote = target.remote().unwrap().slice(0, 4).unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let good = DcPeer::new(&ah, &addr, KEY);
    let bad = DcPeer::new(&ah, &addr, WRONG_KEY);
    // No retries: each wrong-key request reaches the DCT exactly once (every retry would be
    // dropped and counted too), and its DCI goes to ERR at the first ACK timeout (~4 ms).
    let rts = RtsAttr {
        timeout: 10,
        retry_cnt: 0,
        ..RtsAttr::default()
    };
    let mut dci = DciBuilder::new(&mlx5, &pd, cq.send())
        .backend(test_backend())
        .build_ready(hw.port, MTU, rts)
        .expect("DCI to RTS");
    let before = dct.query_context().expect("QUERY_DCT").key_violations;
    assert_eq!(before, 0);
    let wrong = 3;
    for i in 0..wrong {
        assert_eq!(
            write_to(&mut dci, &cq, &good, remote),
            WcStatus::Success,
            "right key, round {i}"
        );
        assert_eq!(
            write_to(&mut dci, &cq, &bad, remote),
            WcStatus::RetryExcErr,
            "a wrong key is dropped silently: the DCI sees only its ACK timeout"
        );
        dci = dci.recover().expect("DCI back to RTS");
    }
    let after = dct.query_context().expect("QUERY_DCT").key_violations;
    assert_eq!(
        after - before,
        wrong,
        "one violation per wrong-key request, none per right one"
    );
}

/// Whether this run must find out-of-order placement (None: whatever the device reports).
fn expect_ooo(mlx5: &Mlx5Context) -> bool {
    let caps = mlx5.caps().unwrap();
    match expect("MLX5DV_TEST_EXPECT_OOO").as_deref() {
        Some("1") => {
            assert!(caps.dc_out_of_order(), "out-of-order placement expected: {caps:?}");
            true
        }
        Some("0") => {
            assert!(!caps.dc_out_of_order(), "out-of-order placement not expected: {caps:?}");
            false
        }
        _ => caps.dc_out_of_order(),
    }
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test dc_table -- --ignored"]
fn out_of_order_placement_is_accepted_on_both_ends_or_refused_with_the_reason() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(16, 1).unwrap();
    if !expect_ooo(&mlx5) {
        let e = hw
            .dct_builder(&mlx5, &pd, &cq, &srq)
            .out_of_order_placement()
            .build()
            .expect_err("out-of-order DCT where it is not reported");
        assert_eq!(e.errno(), Some(libc::EOPNOTSUPP), "{e}");
        assert!(e.hint().contains("out-of-order"), "{e}");
        let e = DciBuilder::new(&mlx5, &pd, cq.send())
            .backend(test_backend())
            .out_of_order_placement()
            .build()
            .expect_err("out-of-order DCI where it is not reported");
        assert_eq!(e.errno(), Some(libc::EOPNOTSUPP), "{e}");
        assert!(e.op().contains("out-of-order"), "{e}");
        eprintln!("refused, as it must be here: {e}");
        return;
    }
    let dct = hw
        .dct_builder(&mlx5, &pd, &cq, &srq)
        .out_of_order_placement()
        .build()
        .expect("out-of-order DCT");
    assert!(dct.out_of_order_placement());
    let mut dci = DciBuilder::new(&mlx5, &pd, cq.send())
        .backend(test_backend())
        .out_of_order_placement()
        .build_ready(hw.port, MTU, RtsAttr::default())
        .expect("out-of-order DCI");
    let rx = pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap();
    srq.post_recv(9, &[rx.sge(0, 4096).unwrap()]).unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let peer = DcPeer::new(&ah, &addr, KEY);
    let mut src = pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap();
    let msg: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
    src.write(0, &msg).unwrap();
    let mut batch = dci.batch();
    batch.send(3).to(&peer).sge(src.sge(0, msg.len()).unwrap()).unwrap();
    batch.commit().unwrap();
    let mut c = wait(&cq, 2);
    c.sort_by_key(|c| c.wr_id);
    assert_eq!((c[0].wr_id, c[0].status), (3, WcStatus::Success));
    assert_eq!((c[1].wr_id, c[1].status, c[1].byte_len), (9, WcStatus::Success, 3000));
    // After the receive completion every byte is there, whatever order it landed in.
    let mut seen = vec![0u8; msg.len()];
    rx.read(0, &mut seen).unwrap();
    assert_eq!(seen, msg);
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test dc_table -- --ignored"]
fn out_of_order_placement_catches_an_application_polling_the_last_byte() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    if !expect_ooo(&mlx5) {
        eprintln!("not run: no out-of-order placement here (refusal: see the test above)");
        return;
    }
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(16, 1).unwrap();
    let dct = hw
        .dct_builder(&mlx5, &pd, &cq, &srq)
        .out_of_order_placement()
        .build()
        .unwrap();
    let mut dci = DciBuilder::new(&mlx5, &pd, cq.send())
        .backend(test_backend())
        .out_of_order_placement()
        .build_ready(hw.port, MTU, RtsAttr::default())
        .unwrap();
    const LEN: usize = 8 * MTU as usize;
    let target = pd.alloc_mr(LEN, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let mut src = pd.alloc_mr(LEN, Access::LOCAL_WRITE).unwrap();
    src.write(0, &[0xAB; LEN]).unwrap();
    // Write with immediate: its receive completion is the correct signal that data arrived.
    let rx = pd.alloc_mr(64, Access::LOCAL_WRITE).unwrap();
    srq.post_recv(9, &[rx.sge(0, 64).unwrap()]).unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let peer = DcPeer::new(&ah, &addr, KEY);
    let mut batch = dci.batch();
    batch
        .rdma_write_imm(4, target.remote().unwrap(), 0x0D0E)
        .to(&peer)
        .sge(src.sge(0, LEN).unwrap())
        .unwrap();
    batch.commit().unwrap();
    // The application that polls data memory: wait for the last byte, then take the buffer.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last = [0u8; 1];
    while last[0] != 0xAB {
        target.read(LEN - 1, &mut last).unwrap();
        std::hint::black_box(&last);
        assert!(Instant::now() < deadline, "the last byte never arrived");
    }
    let mut taken = vec![0u8; LEN];
    target.read(0, &mut taken).unwrap();
    let stale = taken.iter().filter(|&&b| b != 0xAB).count();
    if on_soft_mlx5() {
        assert!(
            stale > 0,
            "out-of-order placement must show a poller of the last byte a buffer not yet whole"
        );
    } else {
        eprintln!("silicon placed {stale} byte(s) after the last one (any number is allowed)");
    }
    // The right way: the completion says the data is all there.
    let mut c = wait(&cq, 2);
    c.sort_by_key(|c| c.wr_id);
    assert_eq!((c[0].wr_id, c[0].status), (4, WcStatus::Success));
    assert_eq!(
        (c[1].wr_id, c[1].opcode, c[1].imm),
        (9, Some(WcOpcode::RecvRdmaWithImm), Some(0x0D0E))
    );
    target.read(0, &mut taken).unwrap();
    assert!(taken.iter().all(|&b| b == 0xAB), "whole after the completion");
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test dc_table -- --ignored"]
fn dc_read_atomic_limits_are_reported_as_requester_and_responder_and_bound_dci_rts() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let caps = mlx5.caps().unwrap();
    let limits = (caps.max_dc_requester_rd_atomic, caps.max_dc_responder_rd_atomic);
    match expect("MLX5DV_TEST_EXPECT_DC_RD_ATOM").as_deref() {
        Some("none") => assert_eq!(
            limits,
            (None, None),
            "a library before rdma-core 47, or one without DEVX to read them, reports none"
        ),
        Some(n) => {
            let n: u64 = n.parse().expect("MLX5DV_TEST_EXPECT_DC_RD_ATOM is a number or none");
            assert_eq!(limits, (Some(n), Some(n)));
        }
        None => {}
    }
    let Some(requester) = limits.0 else {
        eprintln!("not run: the library does not report the DC limits (rdma-core 47+)");
        return;
    };
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let dci = DciBuilder::new(&mlx5, &pd, cq.send())
        .backend(test_backend())
        .build()
        .unwrap()
        .init(hw.port, 0)
        .unwrap()
        .rtr(MTU)
        .unwrap();
    let Ok(over) = u8::try_from(requester + 1) else {
        eprintln!("not run: the requester limit {requester} does not fit RtsAttr::max_rd_atomic");
        return;
    };
    let refused = dci
        .rts(RtsAttr {
            max_rd_atomic: over,
            ..RtsAttr::default()
        })
        .expect_err("max_rd_atomic above the DC requester limit");
    assert_eq!(refused.error().errno(), Some(libc::EINVAL));
    assert!(refused.error().hint().contains("max_dc_rd_atom"), "{}", refused.error());
    // The DCI came back in RTR: at the limit it goes on.
    refused
        .into_inner()
        .rts(RtsAttr {
            max_rd_atomic: requester as u8,
            ..RtsAttr::default()
        })
        .expect("RTS at the requester limit");
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test dc_table -- --ignored"]
fn a_pool_reaches_only_dcts_that_agree_on_out_of_order_placement_and_hands_a_refused_peer_back() {
    use mlx5dv::{DciPool, PoolConfig};
    use mlx5dv_suite::device::{pool_cq, test_pool_config};
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cfg = PoolConfig {
        dcis: 1,
        max_send_wr: 16,
        port: hw.port,
        mtu_bytes: Some(MTU),
        ..test_pool_config()
    };
    let mut in_order = DciPool::new(&mlx5, &pd, pool_cq(&hw.ctx, 256), cfg).expect("pool");
    // An address saying its DCT places data out of order (as such a DCT's target_addr says),
    // through the wire format and back.
    let (mut addr, ah) = hw.ah_to(&pd, 0x1234);
    addr.out_of_order = true;
    let addr = DcTargetAddr::decode(&addr.encode().unwrap()).unwrap();
    assert!(addr.out_of_order, "the flag survives the wire format");
    let back = in_order
        .add_endpoint(DcPeer::new(&ah, &addr, KEY))
        .expect_err("an in-order pool refuses an out-of-order DCT");
    assert_eq!(back.error().errno(), Some(libc::EINVAL), "{}", back.error());
    let text = back.error().to_string();
    assert!(
        text.contains("both ends") && text.contains("PoolConfig::out_of_order"),
        "{text}"
    );
    assert_eq!(back.into_inner().dct_number(), 0x1234, "the peer comes back");
    if !expect_ooo(&mlx5) {
        eprintln!("the rest not run: no out-of-order placement here");
        return;
    }
    let cq = TestCq::new(&hw.ctx, 64);
    let srq = pd.create_srq(16, 1).unwrap();
    let dct = hw
        .dct_builder(&mlx5, &pd, &cq, &srq)
        .out_of_order_placement()
        .build()
        .expect("out-of-order DCT");
    let target = dct.target_addr().unwrap();
    assert!(target.out_of_order, "an out-of-order DCT's address says so");
    assert!(in_order.add_endpoint(DcPeer::new(&ah, &target, KEY)).is_err());
    let mut ooo = DciPool::new(
        &mlx5,
        &pd,
        pool_cq(&hw.ctx, 256),
        PoolConfig {
            out_of_order: true,
            ..cfg
        },
    )
    .expect("out-of-order pool");
    ooo.add_endpoint(DcPeer::new(&ah, &target, KEY))
        .expect("an out-of-order pool reaches it");
    let (plain, plain_ah) = hw.ah_to(&pd, 0x4321);
    assert!(
        ooo.add_endpoint(DcPeer::new(&plain_ah, &plain, KEY)).is_err(),
        "and refuses an in-order DCT"
    );
}
