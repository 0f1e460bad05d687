//! Tier 3: DC end to end on a ConnectX-5 or newer, the scenarios of rdma-core's own DC tests
//! (tests/test_mlx5_dc.py) plus one DCI reaching many DCTs in turn. Loopback on one device:
//! 2 DCIs and DCTs on an SRQ, MTU 1024, timeout 14, retry 7, RNR retry 7, min RNR timer 12.
//!
//! Opt-in: every test is `#[ignore]`d, so `cargo test` lists them as ignored. Run them with
//! `MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored` (and
//! `MLX5DV_TEST_GID_INDEX=<n>` on RoCE ports, `MLX5DV_TEST_PORT` if not 1). Asked to run
//! without the variable they fail saying so; a capability the device lacks (ODP, streams) is
//! printed as "not run". Nothing here is faked.
use mlx5dv::{
    Access, Completion, DcKey, DcPeer, Dci, DciBuilder, Mlx5Context, PeerPath, QpState, RtsAttr, WcOpcode, WcStatus,
};
use mlx5dv_suite::device::{test_backend, wait, Hw, TestCq};
use std::time::{Duration, Instant};

const KEY: DcKey = DcKey::new(0xFFEE_DDCC);
const MTU: u32 = 1024;

fn hw() -> Hw {
    mlx5dv_suite::device::hw(KEY, MTU)
}

/// Posts one RDMA write of inline `data` to `remote` at `peer` and returns its status.
fn write_inline(
    dci: &mut Dci<mlx5dv::state::Rts>,
    cq: &TestCq,
    wr_id: u64,
    remote: mlx5dv::RemoteMemory,
    peer: &DcPeer,
    data: &[u8],
) -> WcStatus {
    let mut batch = dci.batch();
    batch.rdma_write(wr_id, remote).to(peer).inline(data).unwrap();
    batch.commit().unwrap();
    wait(cq, 1)[0].status
}

fn ready_dci(hw: &Hw, mlx5: &Mlx5Context, pd: &mlx5dv::Pd, cq: &TestCq) -> Dci<mlx5dv::state::Rts> {
    let builder = DciBuilder::new(mlx5, pd, cq.send()).backend(test_backend());
    // Atomics only where the device has them (a VF may not): asking otherwise fails.
    let builder = if mlx5.has_atomics().unwrap() {
        builder.with_atomics()
    } else {
        builder
    };
    let dci = builder
        .build_ready(hw.port, MTU, RtsAttr::default())
        .expect("DCI to RTS");
    assert_eq!(dci.backend(), test_backend());
    dci
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn dc_rdma_write_reaches_the_dct_memory() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(64, 1).unwrap();
    let dct = hw.dct_builder(&mlx5, &pd, &cq, &srq).build().expect("DCT to RTR");
    let target = pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let mut src = pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap();
    src.write(0, b"dc write").unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let peer = DcPeer::new(&ah, &addr, KEY);
    let mut dci = ready_dci(&hw, &mlx5, &pd, &cq);
    let mut batch = dci.batch();
    batch
        .rdma_write(1, target.remote().unwrap().slice(64, 8).unwrap())
        .to(&peer)
        .sge(src.sge(0, 8).unwrap())
        .unwrap();
    batch.commit().unwrap();
    let c = wait(&cq, 1);
    assert_eq!(
        (c[0].wr_id, c[0].status, c[0].opcode),
        (1, WcStatus::Success, Some(WcOpcode::RdmaWrite))
    );
    let mut seen = [0u8; 8];
    target.read(64, &mut seen).unwrap();
    assert_eq!(&seen, b"dc write");
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn dc_send_lands_in_the_dct_srq() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(64, 1).unwrap();
    let rx = pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap();
    srq.post_recv(77, &[rx.sge(0, 1024).unwrap()]).unwrap();
    let dct = hw.dct_builder(&mlx5, &pd, &cq, &srq).build().unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let peer = DcPeer::new(&ah, &addr, KEY);
    let mut dci = ready_dci(&hw, &mlx5, &pd, &cq);
    let mut batch = dci.batch();
    batch
        .send_imm(5, 0x1234_5678)
        .to(&peer)
        .inline(b"into the srq")
        .unwrap();
    batch.commit().unwrap();
    let mut c = wait(&cq, 2);
    c.sort_by_key(|c| c.wr_id);
    assert_eq!((c[0].wr_id, c[0].status), (5, WcStatus::Success));
    assert_eq!(
        (c[1].wr_id, c[1].opcode, c[1].byte_len, c[1].imm),
        (77, Some(WcOpcode::Recv), 12, Some(0x1234_5678))
    );
    let mut seen = [0u8; 12];
    rx.read(0, &mut seen).unwrap();
    assert_eq!(&seen, b"into the srq");
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn dc_fetch_and_add_with_max_dc_rd_atom_outstanding_sums_exactly() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    if !mlx5.has_atomics().unwrap() {
        eprintln!("not run: {} has no atomics (atomic_cap NONE)", hw.ctx.name());
        return;
    }
    let caps = mlx5.caps().unwrap();
    // The DC limits exist from rdma-core 47 (else 1): the DCI may have the requester limit
    // outstanding (max_dc_rd_atom), the DCT serves the responder limit (max_dc_init_rd_atom).
    let qp_limit = hw.ctx.query_device().unwrap().0.max_qp_init_rd_atom.max(1) as u64;
    let dc_limit = caps
        .max_dc_requester_rd_atomic
        .unwrap_or(1)
        .min(caps.max_dc_responder_rd_atomic.unwrap_or(1));
    let outstanding = dc_limit.clamp(1, qp_limit.min(16)) as u8;
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(64, 1).unwrap();
    let dct = hw
        .dct_builder(&mlx5, &pd, &cq, &srq)
        .access(Access::LOCAL_WRITE | Access::REMOTE_ATOMIC)
        .build()
        .unwrap();
    let counter = pd.alloc_mr(64, Access::LOCAL_WRITE | Access::REMOTE_ATOMIC).unwrap();
    let old = pd.alloc_mr(8 * 16, Access::LOCAL_WRITE).unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let peer = DcPeer::new(&ah, &addr, KEY);
    let mut dci = DciBuilder::new(&mlx5, &pd, cq.send())
        .backend(test_backend())
        .with_atomics()
        .build_ready(
            hw.port,
            MTU,
            RtsAttr {
                max_rd_atomic: outstanding,
                ..RtsAttr::default()
            },
        )
        .unwrap();
    let remote = counter.remote().unwrap().slice(0, 8).unwrap();
    let mut batch = dci.batch();
    for i in 0..outstanding {
        batch
            .atomic_fetch_add(u64::from(i), remote, 3)
            .to(&peer)
            .sge(old.sge(8 * usize::from(i), 8).unwrap())
            .unwrap();
    }
    batch.commit().unwrap();
    let c = wait(&cq, usize::from(outstanding));
    assert!(
        c.iter()
            .all(|c| c.status == WcStatus::Success && c.opcode == Some(WcOpcode::FetchAdd)),
        "{c:?}"
    );
    let mut total = [0u8; 8];
    counter.read(0, &mut total).unwrap();
    assert_eq!(u64::from_ne_bytes(total), 3 * u64::from(outstanding));
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn dc_rdma_write_after_mapping_the_ah_to_the_dci() {
    // As rdma-core's test_dc_ah_to_qp_mapping: the AH is mapped to an initiator (a DCI), and
    // EOPNOTSUPP (no AV-to-QP mapping object, or a non-global InfiniBand AH) means not run.
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(64, 1).unwrap();
    let dct = hw.dct_builder(&mlx5, &pd, &cq, &srq).build().unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let mut dci = ready_dci(&hw, &mlx5, &pd, &cq);
    if let Err(e) = ah.map_to_qp(dci.qp_num()) {
        assert_eq!(e.errno(), Some(libc::EOPNOTSUPP), "mlx5dv_map_ah_to_qp: {e}");
        eprintln!("not run: {} does not map AHs to QPs here ({e})", hw.ctx.name());
        return;
    }
    let target = pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let peer = DcPeer::new(&ah, &addr, KEY);
    assert_eq!(
        write_inline(&mut dci, &cq, 9, target.remote().unwrap(), &peer, b"mapped"),
        WcStatus::Success
    );
    let mut seen = [0u8; 6];
    target.read(0, &mut seen).unwrap();
    assert_eq!(&seen, b"mapped");
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn dc_rdma_write_into_odp_memory_when_the_device_allows_it() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let odp = mlx5.caps().unwrap().dc_odp_caps.unwrap_or(0);
    if odp & mlx5dv::raw::IBV_ODP_SUPPORT_WRITE == 0 {
        eprintln!(
            "not run: {} reports no DC ODP write support (dc_odp_caps {odp:#x})",
            hw.ctx.name()
        );
        return;
    }
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(64, 1).unwrap();
    let dct = hw.dct_builder(&mlx5, &pd, &cq, &srq).build().unwrap();
    // dc_odp_caps come from the HCA caps; whether ODP registration is allowed is the
    // kernel's call: as rdma-core's OdpDc, a refused ODP registration means not run.
    let target = match pd.alloc_mr(1 << 20, Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::ON_DEMAND) {
        Ok(mr) => mr,
        Err(e) if e.errno() == Some(libc::EOPNOTSUPP) => {
            eprintln!("not run: {} refuses ODP registration ({e})", hw.ctx.name());
            return;
        }
        Err(e) => panic!("ODP registration: {e}"),
    };
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let peer = DcPeer::new(&ah, &addr, KEY);
    let mut dci = ready_dci(&hw, &mlx5, &pd, &cq);
    assert_eq!(
        write_inline(
            &mut dci,
            &cq,
            1,
            target.remote().unwrap().slice(512 * 1024, 3).unwrap(),
            &peer,
            b"odp"
        ),
        WcStatus::Success
    );
    let mut seen = [0u8; 3];
    target.read(512 * 1024, &mut seen).unwrap();
    assert_eq!(&seen, b"odp");
}

fn streams_caps(hw: &Hw, mlx5: &Mlx5Context) -> Option<(u8, u8)> {
    match mlx5.caps().unwrap().dci_streams {
        Some((c, e)) if c > 0 => Some((c.min(3), e.min(c.min(3)))),
        _ => {
            eprintln!("not run: {} reports no DCI streams", hw.ctx.name());
            None
        }
    }
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn dci_streams_carry_traffic_on_every_stream_id() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let Some((log_c, log_e)) = streams_caps(&hw, &mlx5) else {
        return;
    };
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(64, 1).unwrap();
    let dct = hw.dct_builder(&mlx5, &pd, &cq, &srq).build().unwrap();
    let target = pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let mut dci = DciBuilder::new(&mlx5, &pd, cq.send())
        .backend(test_backend())
        .streams(log_c, log_e)
        .build_ready(hw.port, MTU, RtsAttr::default())
        .unwrap();
    let streams = 1u16 << log_c;
    for round in 0..3u16 {
        let mut batch = dci.batch();
        for s in 0..streams {
            let peer = DcPeer::new(&ah, &addr, KEY).stream(s);
            let offset = u64::from(s) * 8;
            batch
                .rdma_write(
                    u64::from(round * streams + s),
                    target.remote().unwrap().slice(offset, 2).unwrap(),
                )
                .to(&peer)
                .inline(&s.to_le_bytes())
                .unwrap();
        }
        batch.commit().unwrap();
        let c = wait(&cq, usize::from(streams));
        assert!(c.iter().all(|c| c.status == WcStatus::Success), "{c:?}");
    }
    for s in 0..streams {
        let mut seen = [0u8; 2];
        target.read(usize::from(s) * 8, &mut seen).unwrap();
        assert_eq!(u16::from_le_bytes(seen), s);
    }
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn dci_stream_errors_up_to_the_limit_then_err_then_recovery_carries_traffic_again() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let Some((log_c, log_e)) = streams_caps(&hw, &mlx5) else {
        return;
    };
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(64, 1).unwrap();
    let dct = hw
        .dct_builder(&mlx5, &pd, &cq, &srq)
        .access(Access::LOCAL_WRITE | Access::REMOTE_WRITE)
        .build()
        .unwrap();
    let target = pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let mut dci = DciBuilder::new(&mlx5, &pd, cq.send())
        .backend(test_backend())
        .streams(log_c, log_e)
        .build_ready(hw.port, MTU, RtsAttr::default())
        .unwrap();
    let mut bad = target.remote().unwrap();
    bad.rkey ^= 0x00FF_FF00;
    // As rdma-core's test_dc_stream_qp_recovery: the DCI enters ERR once the number of
    // distinct errored streams reaches 2^log_num_errored (mlx5dv_create_qp(3)); the state
    // is then polled for up to a second, as the transition follows the last error CQE.
    let allowed = 1u16 << log_e;
    for s in 0..allowed {
        assert_eq!(
            write_inline(
                &mut dci,
                &cq,
                u64::from(s),
                bad,
                &DcPeer::new(&ah, &addr, KEY).stream(s),
                b"x"
            ),
            WcStatus::RemAccessErr
        );
        if s + 1 < allowed {
            assert_eq!(dci.query_state().unwrap(), QpState::Rts, "{} errored streams", s + 1);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(1);
    while dci.query_state().unwrap() != QpState::Err && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(dci.query_state().unwrap(), QpState::Err);
    let mut dci = dci.recover().expect("ERR -> RESET -> RTS");
    assert_eq!(
        write_inline(
            &mut dci,
            &cq,
            200,
            target.remote().unwrap(),
            &DcPeer::new(&ah, &addr, KEY).stream(0),
            b"ok"
        ),
        WcStatus::Success
    );
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn dci_stream_id_reset_recovers_a_stream_without_the_dci_entering_err() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let Some((log_c, log_e)) = streams_caps(&hw, &mlx5) else {
        return;
    };
    // mlx5dv_dci_stream_id_reset needs errored streams (max_log_num_errored > 0) and the
    // qpc_extension cap; with log_num_errored 0 the first error takes the DCI to ERR.
    if log_e == 0 {
        eprintln!(
            "not run: {} allows no errored DCI streams (max_log_num_errored 0)",
            hw.ctx.name()
        );
        return;
    }
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(64, 1).unwrap();
    let dct = hw.dct_builder(&mlx5, &pd, &cq, &srq).build().unwrap();
    let target = pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let mut dci = DciBuilder::new(&mlx5, &pd, cq.send())
        .backend(test_backend())
        .streams(log_c, log_e)
        .build_ready(hw.port, MTU, RtsAttr::default())
        .unwrap();
    let mut bad = target.remote().unwrap();
    bad.rkey ^= 0x00FF_FF00;
    assert_eq!(
        write_inline(&mut dci, &cq, 1, bad, &DcPeer::new(&ah, &addr, KEY).stream(1), b"x"),
        WcStatus::RemAccessErr
    );
    dci.reset_stream(1).expect("mlx5dv_dci_stream_id_reset");
    assert_eq!(dci.query_state().unwrap(), QpState::Rts);
    assert_eq!(
        write_inline(
            &mut dci,
            &cq,
            2,
            target.remote().unwrap(),
            &DcPeer::new(&ah, &addr, KEY).stream(1),
            b"again"
        ),
        WcStatus::Success
    );
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn one_dci_reaches_many_dcts_in_turn() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(64, 1).unwrap();
    let dcts: Vec<_> = (0..8)
        .map(|_| hw.dct_builder(&mlx5, &pd, &cq, &srq).build().unwrap())
        .collect();
    let targets: Vec<_> = (0..8)
        .map(|_| pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap())
        .collect();
    let addrs: Vec<_> = dcts.iter().map(|d| hw.addr_of(d.dct_number())).collect();
    let ahs: Vec<_> = addrs
        .iter()
        .map(|a| pd.create_ah(hw.port, &PeerPath::to_dc_target(a, hw.gid_index)).unwrap())
        .collect();
    let mut dci = ready_dci(&hw, &mlx5, &pd, &cq);
    for (i, ((addr, ah), target)) in addrs.iter().zip(&ahs).zip(&targets).enumerate() {
        assert_eq!(
            write_inline(
                &mut dci,
                &cq,
                i as u64,
                target.remote().unwrap(),
                &DcPeer::new(ah, addr, KEY),
                &[i as u8; 4]
            ),
            WcStatus::Success,
            "DCT {i}"
        );
    }
    for (i, target) in targets.iter().enumerate() {
        let mut seen = [0u8; 4];
        target.read(0, &mut seen).unwrap();
        assert_eq!(seen, [i as u8; 4], "DCT {i}");
    }
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn probe_dc_finds_dc_whether_or_not_the_device_has_atomics() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let dctn = mlx5.probe_dc(hw.port, hw.gid_index).expect("probe_dc");
    assert_ne!(dctn, 0);
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn asking_for_atomics_without_the_capability_fails_and_says_atomics() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    if mlx5.has_atomics().unwrap() {
        eprintln!("not run: {} has atomics", hw.ctx.name());
        return;
    }
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(16, 1).unwrap();
    let err = hw
        .dct_builder(&mlx5, &pd, &cq, &srq)
        .access(Access::LOCAL_WRITE | Access::REMOTE_ATOMIC)
        .build()
        .expect_err("a DCT with remote atomic access on a device without atomics");
    assert_eq!(err.errno(), Some(libc::EOPNOTSUPP));
    assert!(err.to_string().contains("atomics"), "{err}");
    let err = DciBuilder::new(&mlx5, &pd, cq.send())
        .backend(test_backend())
        .with_atomics()
        .build()
        .expect_err("a DCI with atomic send ops on a device without atomics");
    assert_eq!(err.errno(), Some(libc::EOPNOTSUPP));
    assert!(err.to_string().contains("atomics"), "{err}");
    // Without atomics both work: DC itself is there.
    hw.dct_builder(&mlx5, &pd, &cq, &srq)
        .build()
        .expect("DCT without atomics");
    DciBuilder::new(&mlx5, &pd, cq.send())
        .backend(test_backend())
        .build()
        .expect("DCI without atomics");
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn inline_and_sge_lists_beyond_the_created_caps_are_refused_at_the_data_step_and_the_batch_stays_usable() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(16, 1).unwrap();
    let dct = hw.dct_builder(&mlx5, &pd, &cq, &srq).build().unwrap();
    let target = pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let src = pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let peer = DcPeer::new(&ah, &addr, KEY);
    let mut dci = ready_dci(&hw, &mlx5, &pd, &cq);
    let caps = dci.caps();
    let too_long = vec![7u8; caps.max_inline_data as usize + 1];
    let sges: Vec<_> = (0..=caps.max_send_sge as usize)
        .map(|i| src.sge(i * 8, 8).unwrap())
        .collect();
    let mut batch = dci.batch();
    let err = batch
        .rdma_write(1, target.remote().unwrap())
        .to(&peer)
        .inline(&too_long)
        .expect_err("inline data beyond max_inline_data");
    assert!(err.to_string().contains("max_inline_data"), "{err}");
    let err = batch
        .rdma_write(2, target.remote().unwrap())
        .to(&peer)
        .sge_list(&sges)
        .expect_err("more SGEs than max_send_sge");
    assert!(err.to_string().contains("max_send_sge"), "{err}");
    // Nothing of the refused requests reached the library: the batch still posts cleanly.
    batch
        .rdma_write(3, target.remote().unwrap())
        .to(&peer)
        .inline(b"fits")
        .unwrap();
    batch.commit().expect("the batch after two refusals");
    let c = wait(&cq, 1);
    assert_eq!((c[0].wr_id, c[0].status), (3, WcStatus::Success));
    let mut seen = [0u8; 4];
    target.read(0, &mut seen).unwrap();
    assert_eq!(&seen, b"fits");
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn raw_wr_api_rewrites_a_posted_wqe_when_the_send_queue_overflows() {
    // The hazard the safe crate's accounting exists for (dc-review.md finding 1), shown once
    // through the raw crate: libmlx5's wr API, asked for one request more than the queue
    // holds, writes that request's remote address, DC address and data segment into the last
    // WQE already posted, and reports ENOMEM as if nothing had happened.
    use mlx5dv::raw;
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(16, 1).unwrap();
    let dct = hw.dct_builder(&mlx5, &pd, &cq, &srq).build().unwrap();
    let target = pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let inbox = pd.alloc_mr(64, Access::LOCAL_WRITE).unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    // Posted through libmlx5's wr API by hand: a wr-API DCI, whatever the suite's backend.
    let dci = DciBuilder::new(&mlx5, &pd, &cq)
        .max_send_wr(8)
        .build_ready(hw.port, MTU, RtsAttr::default())
        .unwrap();
    let depth = dci.caps().max_send_wr as usize;
    let rkey = target.remote().unwrap().rkey;
    let base = target.remote().unwrap().addr;
    // SAFETY: the DCI is a live mlx5 DCI in RTS created with send ops; nothing else posts on
    // it while this test does; every buffer outlives the posts.
    unsafe {
        let qpx = raw::ibv_qp_to_qp_ex(dci.as_raw());
        let mqp = raw::mlx5dv_qp_ex_from_ibv_qp_ex(qpx);
        let post = |i: usize, payload: &[u8], offset: u64, wr_id: u64| -> i32 {
            raw::ibv_wr_start(qpx);
            (*qpx).wr_id = wr_id;
            (*qpx).wr_flags = raw::IBV_SEND_SIGNALED;
            if i == 0 {
                raw::ibv_wr_send(qpx);
            } else {
                raw::ibv_wr_rdma_write(qpx, rkey, base + offset);
            }
            raw::mlx5dv_wr_set_dc_addr(mqp, ah.as_raw(), addr.dct_number, KEY.expose());
            raw::ibv_wr_set_inline_data(qpx, payload.as_ptr().cast_mut().cast(), payload.len());
            raw::ibv_wr_complete(qpx)
        };
        // Request 0 is a send to an empty SRQ: RNR, so everything behind it waits.
        assert_eq!(post(0, b"head", 0, 0), 0);
        for i in 1..depth {
            assert_eq!(post(i, &[i as u8], 8 * i as u64, i as u64), 0, "request {i}");
        }
        // One more than the queue holds: refused...
        assert_eq!(post(depth, &[0xEE], 1024, 999), libc::ENOMEM);
    }
    // ...and yet, once the head is served, the last posted request writes 0xEE at 1024 and
    // its own byte never arrives.
    srq.post_recv(1, &[inbox.sge(0, 64).unwrap()]).unwrap();
    let c = wait(&cq, depth + 1);
    assert!(c.iter().all(|c| c.status == WcStatus::Success), "{c:?}");
    let mut seen = [0u8; 1025];
    target.read(0, &mut seen).unwrap();
    assert_eq!(seen[1024], 0xEE, "the overflowing request executed");
    assert_eq!(seen[8 * (depth - 1)], 0, "the last posted request was rewritten");
    assert_eq!(seen[8], 1, "earlier requests are intact");
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn the_safe_crate_refuses_a_request_the_send_queue_cannot_hold_and_completions_give_credit_back() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(16, 1).unwrap();
    let dct = hw.dct_builder(&mlx5, &pd, &cq, &srq).build().unwrap();
    let target = pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let peer = DcPeer::new(&ah, &addr, KEY);
    let mut dci = DciBuilder::new(&mlx5, &pd, cq.send())
        .backend(test_backend())
        .max_send_wr(8)
        .build_ready(hw.port, MTU, RtsAttr::default())
        .unwrap();
    let depth = dci.caps().max_send_wr as u64;
    let remote = target.remote().unwrap();
    let mut batch = dci.batch();
    for i in 0..depth {
        // Unsignaled but the last: one completion retires them all.
        let wr = batch.rdma_write(i, remote.slice(8 * i, 1).unwrap()).to(&peer);
        let wr = if i + 1 < depth { wr.unsignaled() } else { wr };
        wr.inline(&[i as u8 + 1]).unwrap();
    }
    let err = batch
        .rdma_write(depth, remote.slice(2048, 1).unwrap())
        .to(&peer)
        .inline(&[0xEE])
        .expect_err("a request beyond max_send_wr");
    assert!(
        err.is_would_block(),
        "a full send queue is backpressure (EAGAIN): {err}"
    );
    batch.commit().expect("the requests that fit");
    let mut batch = dci.batch();
    assert!(batch
        .rdma_write(depth, remote.slice(2048, 1).unwrap())
        .to(&peer)
        .inline(&[0xEE])
        .is_err());
    drop(batch);
    let c = wait(&cq, 1);
    assert_eq!((c[0].wr_id, c[0].status), (depth - 1, WcStatus::Success));
    assert_eq!(
        dci.outstanding(),
        0,
        "the signaled completion retired every earlier request"
    );
    let mut batch = dci.batch();
    batch
        .rdma_write(depth, remote.slice(2048, 1).unwrap())
        .to(&peer)
        .inline(&[0xEE])
        .unwrap();
    batch.commit().unwrap();
    wait(&cq, 1);
    let mut seen = [0u8; 2049];
    target.read(0, &mut seen).unwrap();
    for i in 0..depth as usize {
        assert_eq!(seen[8 * i], i as u8 + 1, "request {i}");
    }
    assert_eq!(seen[2048], 0xEE);
}

#[test]
#[ignore = "needs a ConnectX-5+: MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test hw_dc -- --ignored"]
fn recover_after_draining_the_cq_loses_no_completion_and_carries_traffic_again() {
    let hw = hw();
    let mlx5 = hw.ctx.mlx5().expect("mlx5");
    let pd = hw.ctx.alloc_pd().unwrap();
    let cq = TestCq::new(&hw.ctx, 256);
    let srq = pd.create_srq(16, 1).unwrap();
    let dct = hw.dct_builder(&mlx5, &pd, &cq, &srq).build().unwrap();
    let target = pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let (addr, ah) = hw.ah_to(&pd, dct.dct_number());
    let peer = DcPeer::new(&ah, &addr, KEY);
    let mut dci = ready_dci(&hw, &mlx5, &pd, &cq);
    let mut bad = target.remote().unwrap();
    bad.rkey ^= 0x00FF_FF00;
    let mut batch = dci.batch();
    batch.rdma_write(1, bad).to(&peer).inline(b"x").unwrap();
    for id in 2..5 {
        batch
            .rdma_write(id, target.remote().unwrap())
            .to(&peer)
            .unsignaled()
            .inline(b"y")
            .unwrap();
    }
    batch.commit().unwrap();
    // The caller drains the CQ before recover(): RESET discards what is left in it.
    let c = wait(&cq, 4);
    let mut ids: Vec<u64> = c.iter().map(|c| c.wr_id).collect();
    ids.sort_unstable();
    assert_eq!(ids, [1, 2, 3, 4], "every request completes exactly once: {c:?}");
    assert_eq!(c[0].status, WcStatus::RemAccessErr);
    assert!(c[1..].iter().all(|c| c.status == WcStatus::WrFlushErr), "{c:?}");
    assert_eq!(dci.outstanding(), 0, "flushed completions give their credit back");
    assert_eq!(dci.query_state().unwrap(), QpState::Err);
    let mut dci = dci.recover().expect("ERR -> RESET -> RTS with the same settings");
    let mut batch = dci.batch();
    batch
        .rdma_write(5, target.remote().unwrap())
        .to(&peer)
        .inline(b"ok")
        .unwrap();
    batch.commit().unwrap();
    let c = wait(&cq, 1);
    assert_eq!((c[0].wr_id, c[0].status), (5, WcStatus::Success));
    let mut buf = [0u8; 64];
    assert_eq!(
        cq.poll(&mut [Completion::default(); 4]).unwrap(),
        0,
        "nothing else arrives"
    );
    target.read(0, &mut buf[..2]).unwrap();
    assert_eq!(&buf[..2], b"ok");
}
