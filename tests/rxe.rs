//! Tier 2: the safe crate on a real kernel RDMA stack (soft-RoCE `rxe0` in the QEMU guest of
//! `scripts/rxe-vm`). The tests are `#[ignore]`d on the host (`cargo test` lists them as
//! ignored); `scripts/test` runs this binary in the guest with `--include-ignored`, where
//! `RXE_VM_DEVICE` names the device.
use mlx5dv::{devices, Access, Completion, Context, PeerPath, RcCaps, RcRemote, RtsAttr, WcOpcode, WcStatus};
use std::time::{Duration, Instant};

fn rxe() -> (Context, u8) {
    let Ok(name) = std::env::var("RXE_VM_DEVICE") else {
        panic!("RXE_VM_DEVICE is unset: run this binary through scripts/rxe-vm (scripts/test does)");
    };
    let gid_index: u8 = std::env::var("RXE_VM_GID_INDEX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let list = devices().expect("device list");
    let dev = list
        .iter()
        .find(|d| d.name() == name)
        .unwrap_or_else(|| panic!("{name} not listed: {list:?}"));
    (dev.open().expect("open"), gid_index)
}

fn wait(cq: &mlx5dv::Cq, n: usize) -> Vec<Completion> {
    let mut got = Vec::new();
    let mut buf = [Completion::default(); 16];
    let deadline = Instant::now() + Duration::from_secs(10);
    while got.len() < n {
        let k = cq.poll(&mut buf).expect("poll");
        got.extend_from_slice(&buf[..k]);
        assert!(Instant::now() < deadline, "timed out with {got:?}");
    }
    got
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn rxe_is_listed_opened_and_refused_for_dc() {
    let (ctx, _) = rxe();
    let port = ctx.query_port(1).expect("port 1");
    assert_eq!(port.link_layer_str(), "Ethernet");
    let err = ctx.mlx5().expect_err("rxe is not mlx5");
    assert!(err.is_not_supported());
    let text = err.to_string();
    assert!(
        text.contains("is not an mlx5 device; DC needs ConnectX-5 or newer"),
        "{text}"
    );
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn rc_loopback_write_send_and_read_deliver_the_bytes() {
    let (ctx, gid_index) = rxe();
    let gid = ctx.query_gid(1, gid_index).expect("gid");
    let pd = ctx.alloc_pd().expect("pd");
    let cq = ctx.create_cq(64).expect("cq");
    let mut src = pd.alloc_mr(4096, Access::LOCAL_WRITE).expect("src mr");
    let dst = pd
        .alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ)
        .expect("dst mr");
    let a = pd.create_rc_qp(&cq, None, RcCaps::default()).expect("qp a");
    let b = pd.create_rc_qp(&cq, None, RcCaps::default()).expect("qp b");
    let path = PeerPath::Gid {
        sl: 0,
        gid,
        sgid_index: gid_index,
        hop_limit: 64,
        traffic_class: 0,
        flow_label: 0,
    };
    let remote = |qp_num| RcRemote {
        qp_num,
        psn: 0,
        path,
        mtu_bytes: 1024,
        max_dest_rd_atomic: 1,
        min_rnr_timer: 12,
    };
    let (an, bn) = (a.qp_num(), b.qp_num());
    let access = Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ;
    let mut a = a
        .init(1, access)
        .unwrap()
        .rtr(&remote(bn))
        .unwrap()
        .rts(RtsAttr::default())
        .unwrap();
    let b = b
        .init(1, access)
        .unwrap()
        .rtr(&remote(an))
        .unwrap()
        .rts(RtsAttr::default())
        .unwrap();

    src.write(0, b"written by RDMA").unwrap();
    let target = dst.remote().unwrap().slice(100, 15).unwrap();
    let mut batch = a.batch();
    batch.rdma_write(1, target).sge(src.sge(0, 15).unwrap()).unwrap();
    batch.commit().unwrap();
    let c = wait(&cq, 1);
    assert_eq!(
        (c[0].wr_id, c[0].status, c[0].opcode),
        (1, WcStatus::Success, Some(WcOpcode::RdmaWrite))
    );
    let mut seen = [0u8; 15];
    dst.read(100, &mut seen).unwrap();
    assert_eq!(&seen, b"written by RDMA");

    b.post_recv(7, &[dst.sge(1000, 64).unwrap()]).unwrap();
    src.write(0, b"hello over send").unwrap();
    let mut batch = a.batch();
    batch.send_imm(2, 0xCAFE_F00D).sge(src.sge(0, 15).unwrap()).unwrap();
    batch.commit().unwrap();
    let mut c = wait(&cq, 2);
    c.sort_by_key(|c| c.wr_id);
    assert_eq!(
        (c[0].wr_id, c[0].status, c[0].opcode),
        (2, WcStatus::Success, Some(WcOpcode::Send))
    );
    let recv = c[1];
    assert_eq!(
        (recv.wr_id, recv.status, recv.opcode, recv.byte_len, recv.imm),
        (7, WcStatus::Success, Some(WcOpcode::Recv), 15, Some(0xCAFE_F00D))
    );
    assert_eq!(recv.qp_num, bn);
    dst.read(1000, &mut seen).unwrap();
    assert_eq!(&seen, b"hello over send");

    let source = dst.remote().unwrap().slice(100, 15).unwrap();
    let mut batch = a.batch();
    batch.rdma_read(3, source).sge(src.sge(2000, 15).unwrap()).unwrap();
    batch.commit().unwrap();
    let c = wait(&cq, 1);
    assert_eq!(
        (c[0].wr_id, c[0].status, c[0].opcode, c[0].byte_len),
        (3, WcStatus::Success, Some(WcOpcode::RdmaRead), 15)
    );
    src.read(2000, &mut seen).unwrap();
    assert_eq!(&seen, b"written by RDMA");
}

const ALL_REMOTE: Access = Access::LOCAL_WRITE
    .union(Access::REMOTE_WRITE)
    .union(Access::REMOTE_READ)
    .union(Access::REMOTE_ATOMIC);

/// Two RC QPs on rxe0 connected to each other (loopback through the GID).
fn connect(
    ctx: &Context,
    gid_index: u8,
    a: mlx5dv::RcQp<mlx5dv::state::Reset>,
    b: mlx5dv::RcQp<mlx5dv::state::Reset>,
) -> (mlx5dv::RcQp<mlx5dv::state::Rts>, mlx5dv::RcQp<mlx5dv::state::Rts>) {
    let gid = ctx.query_gid(1, gid_index).expect("gid");
    let path = PeerPath::Gid {
        sl: 0,
        gid,
        sgid_index: gid_index,
        hop_limit: 64,
        traffic_class: 0,
        flow_label: 0,
    };
    let remote = |qp_num| RcRemote {
        qp_num,
        psn: 0x1234,
        path,
        mtu_bytes: 1024,
        max_dest_rd_atomic: 4,
        min_rnr_timer: 12,
    };
    let (an, bn) = (a.qp_num(), b.qp_num());
    let rts = RtsAttr {
        max_rd_atomic: 4,
        sq_psn: 0x1234,
        ..RtsAttr::default()
    };
    let a = a
        .init(1, ALL_REMOTE)
        .unwrap()
        .rtr(&remote(bn))
        .unwrap()
        .rts(rts)
        .unwrap();
    let b = b
        .init(1, ALL_REMOTE)
        .unwrap()
        .rtr(&remote(an))
        .unwrap()
        .rts(rts)
        .unwrap();
    (a, b)
}

fn by_wr_id(mut c: Vec<Completion>) -> Vec<Completion> {
    c.sort_by_key(|c| c.wr_id);
    c
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn port_and_gid_table_of_rxe0_are_real_and_empty_entries_are_refused() {
    let (ctx, gid_index) = rxe();
    let port = ctx.query_port(1).unwrap();
    assert!(port.is_ethernet());
    assert_eq!(port.state_str(), "active");
    assert!(port.0.gid_tbl_len > i32::from(gid_index));
    let gid = ctx.query_gid(1, gid_index).unwrap();
    // rxe0 sits on dummy0 with 10.77.0.1: its RoCE v2 GID is the IPv4-mapped address.
    assert_eq!(&gid[10..], &[0xff, 0xff, 10, 77, 0, 1], "{gid:02x?}");
    let empty = ctx.query_gid(1, 200).expect_err("GID 200 is empty on rxe0");
    assert_eq!(empty.errno(), Some(libc::ENODATA));
    assert_eq!(
        ctx.query_port(9).expect_err("rxe0 has one port").errno(),
        Some(libc::EINVAL)
    );
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn devinfo_example_reports_rxe0_as_not_mlx5_with_dc_unavailable() {
    rxe();
    // target/<profile>/deps/rxe-<hash> -> target/<profile>/examples/devinfo
    let exe = std::env::current_exe().unwrap();
    let devinfo = exe.parent().and_then(|d| d.parent()).unwrap().join("examples/devinfo");
    assert!(devinfo.exists(), "build the examples first ({})", devinfo.display());
    let out = std::process::Command::new(&devinfo).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("rxe0:") && text.contains("mlx5: no (DC unavailable"),
        "{text}"
    );
    assert!(
        text.contains("rxe0 is not an mlx5 device; DC needs ConnectX-5 or newer"),
        "{text}"
    );
    assert!(text.contains("link layer Ethernet"), "{text}");
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn every_rc_operation_moves_the_right_bytes_and_reports_the_right_completion() {
    let (ctx, gid_index) = rxe();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(256).unwrap();
    let srq = pd.create_srq(32, 2).unwrap();
    let caps = RcCaps {
        max_send_sge: 2,
        max_recv_sge: 2,
        ..RcCaps::default()
    };
    let a = pd.create_rc_qp(&cq, None, caps).unwrap();
    let b = pd.create_rc_qp(&cq, Some(&srq), caps).unwrap();
    let (mut a, b) = connect(&ctx, gid_index, a, b);
    let (an, bn) = (a.qp_num(), b.qp_num());
    let mut src = pd.alloc_mr(8192, Access::LOCAL_WRITE).unwrap();
    let dst = pd.alloc_mr(8192, ALL_REMOTE).unwrap();
    let remote = dst.remote().unwrap();
    let mut seen = [0u8; 32];

    // Send with an SGE list (gathered) into b's SRQ, scattered into two buffers. Equal
    // lengths: rxe before rdma-core PR 1744 sums the first entry's length num_sge times.
    src.write(0, b"gathered").unwrap();
    src.write(100, b"-by-two!").unwrap();
    srq.post_recv(50, &[dst.sge(0, 10).unwrap(), dst.sge(512, 100).unwrap()])
        .unwrap();
    let mut batch = a.batch();
    batch
        .send(1)
        .sge_list(&[src.sge(0, 8).unwrap(), src.sge(100, 8).unwrap()])
        .unwrap();
    batch.commit().unwrap();
    let c = by_wr_id(wait(&cq, 2));
    assert_eq!(
        (c[0].wr_id, c[0].status, c[0].opcode, c[0].qp_num),
        (1, WcStatus::Success, Some(WcOpcode::Send), an)
    );
    assert_eq!(
        (c[1].wr_id, c[1].opcode, c[1].byte_len, c[1].qp_num, c[1].imm),
        (50, Some(WcOpcode::Recv), 16, bn, None)
    );
    dst.read(0, &mut seen[..10]).unwrap();
    dst.read(512, &mut seen[10..16]).unwrap();
    assert_eq!(&seen[..16], b"gathered-by-two!");

    // Inline send.
    srq.post_recv(51, &[dst.sge(1024, 64).unwrap()]).unwrap();
    let mut batch = a.batch();
    batch.send(2).inline(b"inline!").unwrap();
    batch.commit().unwrap();
    let c = by_wr_id(wait(&cq, 2));
    assert_eq!((c[1].wr_id, c[1].byte_len), (51, 7));
    dst.read(1024, &mut seen[..7]).unwrap();
    assert_eq!(&seen[..7], b"inline!");

    // RDMA write with immediate: bytes land, b gets a receive completion with the immediate.
    srq.post_recv(52, &[dst.sge(2048, 8).unwrap()]).unwrap();
    src.write(200, b"write+imm").unwrap();
    let mut batch = a.batch();
    batch
        .rdma_write_imm(3, remote.slice(3000, 9).unwrap(), 0x0BAD_F00D)
        .sge(src.sge(200, 9).unwrap())
        .unwrap();
    batch.commit().unwrap();
    let c = by_wr_id(wait(&cq, 2));
    assert_eq!((c[0].wr_id, c[0].opcode), (3, Some(WcOpcode::RdmaWrite)));
    assert_eq!(
        (c[1].wr_id, c[1].opcode, c[1].imm, c[1].byte_len),
        (52, Some(WcOpcode::RecvRdmaWithImm), Some(0x0BAD_F00D), 9)
    );
    dst.read(3000, &mut seen[..9]).unwrap();
    assert_eq!(&seen[..9], b"write+imm");

    // Atomics on an 8-byte counter at dst[4096]: FAA then CAS, old values land locally.
    let counter = remote.slice(4096, 8).unwrap();
    let mut batch = a.batch();
    batch
        .atomic_fetch_add(4, counter, 40)
        .sge(src.sge(4000, 8).unwrap())
        .unwrap();
    batch.commit().unwrap();
    assert_eq!(wait(&cq, 1)[0].opcode, Some(WcOpcode::FetchAdd));
    let mut batch = a.batch();
    batch
        .atomic_cmp_swp(5, counter, 40, 0xDEAD)
        .sge(src.sge(4008, 8).unwrap())
        .unwrap();
    batch.commit().unwrap();
    let c = wait(&cq, 1);
    assert_eq!(
        (c[0].wr_id, c[0].opcode, c[0].byte_len),
        (5, Some(WcOpcode::CompSwap), 8)
    );
    let mut old = [0u8; 16];
    src.read(4000, &mut old).unwrap();
    assert_eq!(
        (
            u64::from_ne_bytes(old[..8].try_into().unwrap()),
            u64::from_ne_bytes(old[8..].try_into().unwrap())
        ),
        (0, 40)
    );
    let mut now = [0u8; 8];
    dst.read(4096, &mut now).unwrap();
    assert_eq!(u64::from_ne_bytes(now), 0xDEAD);

    // Ten unsignaled writes and a signaled tail: one completion, every write landed.
    let mut batch = a.batch();
    for i in 0..10u64 {
        src.write(5000 + 8 * i as usize, &(i + 100).to_ne_bytes()).unwrap_or(());
    }
    for i in 0..10u64 {
        let wr = batch.rdma_write(100 + i, remote.slice(6000 + 8 * i, 8).unwrap());
        let wr = if i == 9 { wr } else { wr.unsignaled() };
        wr.sge(src.sge(5000 + 8 * i as usize, 8).unwrap()).unwrap();
    }
    batch.commit().unwrap();
    let c = wait(&cq, 1);
    assert_eq!(c[0].wr_id, 109);
    std::thread::sleep(Duration::from_millis(100));
    let mut extra = [Completion::default(); 4];
    assert_eq!(cq.poll(&mut extra).unwrap(), 0, "unsignaled writes must not complete");
    for i in 0..10u64 {
        dst.read(6000 + 8 * i as usize, &mut now).unwrap();
        assert_eq!(u64::from_ne_bytes(now), i + 100);
    }
    drop(b);
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn remote_access_error_flushes_every_posted_request_exactly_once_and_the_qps_recover() {
    let (ctx, gid_index) = rxe();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(256).unwrap();
    let a = pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap();
    let b = pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap();
    let (mut a, b) = connect(&ctx, gid_index, a, b);
    let src = pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap();
    let read_only = pd.alloc_mr(4096, Access::LOCAL_WRITE | Access::REMOTE_READ).unwrap();
    let writable = pd.alloc_mr(4096, ALL_REMOTE).unwrap();

    let mut batch = a.batch();
    batch
        .rdma_write(1, read_only.remote().unwrap().slice(0, 8).unwrap())
        .sge(src.sge(0, 8).unwrap())
        .unwrap();
    for i in 2..=8u64 {
        batch
            .rdma_write(i, writable.remote().unwrap().slice(8 * i, 8).unwrap())
            .sge(src.sge(0, 8).unwrap())
            .unwrap();
    }
    batch.commit().unwrap();
    let c = by_wr_id(wait(&cq, 8));
    assert_eq!(c[0].status, WcStatus::RemAccessErr, "{c:?}");
    let ids: Vec<u64> = c.iter().map(|c| c.wr_id).collect();
    assert_eq!(ids, (1..=8).collect::<Vec<_>>(), "every wr_id exactly once");
    assert!(c[1..].iter().all(|c| c.status == WcStatus::WrFlushErr), "{c:?}");
    assert_eq!(a.query_state().unwrap(), mlx5dv::QpState::Err);
    std::thread::sleep(Duration::from_millis(50));
    let mut late = [Completion::default(); 8];
    assert_eq!(cq.poll(&mut late).unwrap(), 0, "nothing completes twice");

    // Reset and reconnect both ends, then traffic flows again.
    let a = a.reset().unwrap();
    let b = b.reset().unwrap();
    let (mut a, _b) = connect(&ctx, gid_index, a, b);
    let mut batch = a.batch();
    batch
        .rdma_write(9, writable.remote().unwrap().slice(0, 8).unwrap())
        .inline(b"again ok")
        .unwrap();
    batch.commit().unwrap();
    assert_eq!(wait(&cq, 1)[0].status, WcStatus::Success);
    let mut seen = [0u8; 8];
    writable.read(0, &mut seen).unwrap();
    assert_eq!(&seen, b"again ok");
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn bad_input_gets_clear_errors_and_the_process_keeps_working() {
    let (ctx, gid_index) = rxe();
    let max = ctx.query_device().unwrap().0;
    let err = ctx.create_cq(u32::MAX).expect_err("beyond max_cqe");
    assert!(err.to_string().contains("max_cqe"), "{err}");
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(64).unwrap();
    let too_deep = RcCaps {
        max_send_wr: max.max_qp_wr as u32 + 1,
        ..RcCaps::default()
    };
    let err = pd.create_rc_qp(&cq, None, too_deep).expect_err("beyond max_qp_wr");
    assert!(err.to_string().contains("max_qp_wr"), "{err}");
    assert_eq!(
        pd.alloc_mr(0, Access::LOCAL_WRITE).expect_err("zero length").errno(),
        Some(libc::EINVAL)
    );
    let err = pd
        .alloc_mr(64, Access::REMOTE_WRITE)
        .expect_err("remote write without local write");
    assert!(err.to_string().contains("LOCAL_WRITE"), "{err}");
    let mr = pd.alloc_mr(4096, ALL_REMOTE).unwrap();
    assert!(mr.sge(4000, 200).is_err() && mr.sge(0, 0).is_err() && mr.sge(usize::MAX, 2).is_err());
    assert!(mlx5dv::DcTargetAddr::decode(&[0u8; 31]).is_err());
    assert!(mlx5dv::RemoteMemory::decode(b"M5DV\x01\x02\0\0garbage-garbage-garbage!").is_err());
    assert!(pd.create_srq(0, 1).is_err());
    // Still working.
    let a = pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap();
    let b = pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap();
    let (mut a, _b) = connect(&ctx, gid_index, a, b);
    let mut batch = a.batch();
    batch.rdma_write(1, mr.remote().unwrap()).inline(b"fine").unwrap();
    batch.commit().unwrap();
    assert_eq!(wait(&cq, 1)[0].status, WcStatus::Success);
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map(|d| d.count()).unwrap_or(0)
}

fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse::<u64>().ok())
        .unwrap_or(0)
        * 4
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn churning_a_thousand_qps_cqs_mrs_and_ahs_returns_fds_and_memory_to_the_start() {
    let (ctx, gid_index) = rxe();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(64).unwrap();
    let gid = ctx.query_gid(1, gid_index).unwrap();
    let path = PeerPath::Gid {
        sl: 0,
        gid,
        sgid_index: gid_index,
        hop_limit: 64,
        traffic_class: 0,
        flow_label: 0,
    };
    let round = |n: usize| {
        for _ in 0..n {
            drop(pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap());
            drop(ctx.create_cq(64).unwrap());
            drop(pd.alloc_mr(64 * 1024, ALL_REMOTE).unwrap());
            drop(pd.create_ah(1, &path).unwrap());
        }
    };
    round(50); // warm-up: allocator arenas and library caches
    let (fds, rss) = (open_fds(), rss_kib());
    round(1000);
    let (fds_after, rss_after) = (open_fds(), rss_kib());
    eprintln!("churn: fds {fds} -> {fds_after}, RSS {rss} KiB -> {rss_after} KiB");
    assert_eq!(fds_after, fds, "file descriptors leaked");
    assert!(
        rss_after <= rss + 1024,
        "resident memory grew by {} KiB",
        rss_after.saturating_sub(rss)
    );
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn dc_creation_on_rxe_fails_with_eopnotsupp_and_leaks_nothing() {
    use mlx5dv::raw;
    let (ctx, _) = rxe();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let fds = open_fds();
    for _ in 0..100 {
        assert!(ctx.mlx5().expect_err("not mlx5").is_not_supported());
        // The FFI beneath: what libmlx5 says for a DCI on a non-mlx5 device.
        // SAFETY: context, PD and CQ are live; all-zero attrs are valid input structs.
        let (qp, errno) = unsafe {
            let mut attr: raw::ibv_qp_init_attr_ex = std::mem::zeroed();
            attr.qp_type = raw::IBV_QPT_DRIVER;
            attr.send_cq = cq.as_raw_cq();
            attr.recv_cq = cq.as_raw_cq();
            attr.pd = pd.as_raw();
            attr.comp_mask = raw::IBV_QP_INIT_ATTR_PD | raw::IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
            attr.send_ops_flags = u64::from(raw::IBV_QP_EX_WITH_SEND);
            attr.cap.max_send_wr = 16;
            attr.cap.max_send_sge = 1;
            let mut dv: raw::mlx5dv_qp_init_attr = std::mem::zeroed();
            dv.comp_mask = u64::from(raw::MLX5DV_QP_INIT_ATTR_MASK_DC);
            dv.dc_init_attr.dc_type = raw::MLX5DV_DCTYPE_DCI;
            let qp = raw::mlx5dv_create_qp(ctx.as_raw(), &mut attr, &mut dv);
            (qp, std::io::Error::last_os_error().raw_os_error())
        };
        assert!(qp.is_null());
        assert_eq!(errno, Some(libc::EOPNOTSUPP));
    }
    assert_eq!(open_fds(), fds);
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn soak_of_100k_rdma_writes_loses_no_completion_and_lands_the_last_bytes() {
    let (ctx, gid_index) = rxe();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(1024).unwrap();
    let caps = RcCaps {
        max_send_wr: 512,
        ..RcCaps::default()
    };
    let a = pd.create_rc_qp(&cq, None, caps).unwrap();
    let b = pd.create_rc_qp(&cq, None, caps).unwrap();
    let (mut a, _b) = connect(&ctx, gid_index, a, b);
    let dst = pd.alloc_mr(4096, ALL_REMOTE).unwrap();
    let remote = dst.remote().unwrap();
    const TOTAL: u64 = 100_000;
    const BATCH: u64 = 64;
    let start = Instant::now();
    let mut completions = 0u64;
    let mut buf = [Completion::default(); 64];
    let mut posted = 0u64;
    let mut outstanding = 0u64;
    while posted < TOTAL || outstanding > 0 {
        if posted < TOTAL && outstanding < 4 {
            let mut batch = a.batch();
            for j in 0..BATCH {
                let i = posted + j;
                let slot = (i % 512) * 8;
                let wr = batch.rdma_write(i, remote.slice(slot, 8).unwrap());
                let wr = if j + 1 == BATCH { wr } else { wr.unsignaled() };
                wr.inline(&i.to_le_bytes()).unwrap();
            }
            batch.commit().unwrap();
            posted += BATCH;
            outstanding += 1;
        }
        let k = cq.poll(&mut buf).unwrap();
        for c in &buf[..k] {
            assert_eq!(c.status, WcStatus::Success, "{c:?}");
            assert_eq!(c.wr_id % BATCH, BATCH - 1, "only batch tails are signaled");
        }
        completions += k as u64;
        outstanding -= k as u64;
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "soak stalled at {posted} posted, {completions} completions"
        );
    }
    let total = posted;
    eprintln!(
        "soak: {total} RDMA writes, {completions} completions in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert_eq!(completions, total / BATCH);
    let mut slot = [0u8; 8];
    for s in 0..512u64 {
        dst.read((s * 8) as usize, &mut slot).unwrap();
        let last = (total - 1) - ((total - 1 - s) % 512);
        assert_eq!(u64::from_le_bytes(slot), last, "slot {s}");
    }
}
