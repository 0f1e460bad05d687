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

fn wait(cq: &mlx5dv::Cq<'_>, n: usize) -> Vec<Completion> {
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
