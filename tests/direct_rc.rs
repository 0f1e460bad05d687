//! Tier 3 (soft-mlx5): RC queue pairs on the direct backend. A direct RC QP (its send
//! completions on a direct CQ, its receives on an ordinary one) posts writes, sends, reads and
//! atomics to a partner on the wr API; the data lands, the completions name the caller's
//! requests, a remote access error and the flush after it come back on the direct CQ, and the
//! QP works again after a RESET. The CQs that do not suit a backend are refused.
//!
//! Opt-in (needs an mlx5 device): `scripts/soft-mlx5 [--profile P] [--rdma-core 44|59] --
//! cargo test --test direct_rc -- --ignored`.
use mlx5dv::{Access, Completion, Cq, Mr, RcCaps, RcQp, RemoteMemory, SendBackend, WcOpcode, WcStatus};
use mlx5dv_suite::device::{connect_rc, loopback_path, open};
use std::time::{Duration, Instant};

const MTU: u32 = 1024;

/// What the partner grants: remote atomics only where the device has them (a QP granting
/// them is refused otherwise).
fn target_access(atomics: bool) -> Access {
    let rw = Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ;
    if atomics {
        rw | Access::REMOTE_ATOMIC
    } else {
        rw
    }
}

/// Polls `cq` until `n` completions arrived (10 s at most).
fn wait(cq: &Cq, n: usize) -> Vec<Completion> {
    let mut got = Vec::new();
    let mut c = [Completion::default(); 8];
    let deadline = Instant::now() + Duration::from_secs(10);
    while got.len() < n {
        let k = cq.poll(&mut c).expect("poll");
        got.extend_from_slice(&c[..k]);
        assert!(Instant::now() < deadline, "{} of {n} completions: {got:?}", got.len());
    }
    got
}

/// A direct RC QP (`qp`, with its CQs) connected to a wr-API partner on the same port.
struct Pair {
    qp: RcQp<mlx5dv::state::Rts>,
    partner: RcQp<mlx5dv::state::Rts>,
    send_cq: Cq,
    recv_cq: Cq,
    partner_cq: Cq,
    local: Mr,
    target: Mr,
    atomics: bool,
}

fn pair() -> Pair {
    let (ctx, port, gid_index) = open();
    let atomics = ctx.mlx5().unwrap().has_atomics().unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let send_cq = ctx.create_direct_cq(64).unwrap();
    let recv_cq = ctx.create_cq(64).unwrap();
    let partner_cq = ctx.create_cq(64).unwrap();
    let caps = RcCaps {
        max_send_wr: 16,
        ..RcCaps::default()
    };
    let qp = pd
        .create_rc_qp_split(&send_cq, &recv_cq, None, caps, SendBackend::Direct)
        .expect("a direct RC QP");
    assert_eq!(qp.backend(), SendBackend::Direct);
    let partner = pd.create_rc_qp(&partner_cq, None, caps).unwrap();
    let access = Access::LOCAL_WRITE | Access::REMOTE_WRITE;
    let (qp, partner) = connect_rc(
        port,
        loopback_path(&ctx, port, gid_index),
        MTU,
        (qp, access),
        (partner, target_access(atomics)),
    );
    Pair {
        qp,
        partner,
        send_cq,
        recv_cq,
        partner_cq,
        local: pd.alloc_mr(4096, access).unwrap(),
        target: pd.alloc_mr(4096, target_access(atomics)).unwrap(),
        atomics,
    }
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- cargo test --test direct_rc -- --ignored"]
fn a_direct_rc_qp_writes_sends_reads_and_runs_atomics_with_its_completions_on_the_direct_cq() {
    let mut p = pair();
    let remote = |off: u64, len: u64| -> RemoteMemory { p.target.remote().unwrap().slice(off, len).unwrap() };
    let (read_at, cas_at, faa_at) = (remote(128, 8), remote(512, 8), remote(520, 8));
    let write_at = remote(64, 16);
    let inline_at = remote(0, 5);
    p.target.write(128, &0x0A0B_0C0D_0E0F_1011u64.to_le_bytes()).unwrap();
    p.target.write(512, &5u64.to_le_bytes()).unwrap();
    p.target.write(520, &100u64.to_le_bytes()).unwrap();
    p.local.write(64, &[0x5A; 16]).unwrap();
    p.local.write(96, b"a send!").unwrap();
    // The partner's receive for the send, and ours for its send back.
    p.partner.post_recv(90, &[p.target.sge(1024, 64).unwrap()]).unwrap();
    p.qp.post_recv(91, &[p.local.sge(2048, 64).unwrap()]).unwrap();
    let mut expected = vec![
        (12, WcOpcode::RdmaWrite),
        (13, WcOpcode::Send),
        (14, WcOpcode::RdmaRead),
    ];
    {
        let local = &p.local;
        let mut batch = p.qp.batch();
        // Unsignaled: no completion of its own, retired by the next one's.
        batch.rdma_write(11, inline_at).unsignaled().inline(b"hello").unwrap();
        batch.rdma_write(12, write_at).sge(local.sge(64, 16).unwrap()).unwrap();
        batch.send_imm(13, 0xC0FFEE).sge(local.sge(96, 7).unwrap()).unwrap();
        batch.rdma_read(14, read_at).sge(local.sge(256, 8).unwrap()).unwrap();
        if p.atomics {
            batch
                .atomic_cmp_swp(15, cas_at, 5, 6)
                .fence()
                .sge(local.sge(264, 8).unwrap())
                .unwrap();
            batch
                .atomic_fetch_add(16, faa_at, 11)
                .sge(local.sge(272, 8).unwrap())
                .unwrap();
            expected.push((15, WcOpcode::CompSwap));
            expected.push((16, WcOpcode::FetchAdd));
        }
        batch.commit().unwrap();
    }
    let got = wait(&p.send_cq, expected.len());
    let seen: Vec<_> = got.iter().map(|c| (c.wr_id, c.opcode.unwrap(), c.status)).collect();
    let want: Vec<_> = expected.iter().map(|&(w, o)| (w, o, WcStatus::Success)).collect();
    assert_eq!(seen, want, "the direct CQ names each signaled request, in order");
    assert_eq!(got[2].byte_len, 8, "the read's byte count");
    assert!(got.iter().all(|c| c.qp_num == p.qp.qp_num()));
    assert_eq!(p.qp.outstanding(), 0, "every request retired");
    let recv = wait(&p.partner_cq, 1);
    assert_eq!(
        (recv[0].wr_id, recv[0].status, recv[0].imm, recv[0].byte_len),
        (90, WcStatus::Success, Some(0xC0FFEE), 7)
    );
    let mut buf = [0u8; 16];
    p.target.read(0, &mut buf[..5]).unwrap();
    assert_eq!(&buf[..5], b"hello");
    p.target.read(64, &mut buf).unwrap();
    assert_eq!(buf, [0x5A; 16]);
    p.target.read(1024, &mut buf[..7]).unwrap();
    assert_eq!(&buf[..7], b"a send!");
    let word = |mr: &Mr, off: usize| {
        let mut w = [0u8; 8];
        mr.read(off, &mut w).unwrap();
        u64::from_le_bytes(w)
    };
    assert_eq!(word(&p.local, 256), 0x0A0B_0C0D_0E0F_1011, "the read's data");
    if p.atomics {
        assert_eq!((word(&p.local, 264), word(&p.target, 512)), (5, 6), "compare-and-swap");
        assert_eq!((word(&p.local, 272), word(&p.target, 520)), (100, 111), "fetch-and-add");
    }
    // The receive side stays on the ordinary CQ, with the caller's wr_id.
    {
        let mut batch = p.partner.batch();
        batch.send(40).inline(b"back").unwrap();
        batch.commit().unwrap();
    }
    assert_eq!(wait(&p.partner_cq, 1)[0].status, WcStatus::Success);
    let recv = wait(&p.recv_cq, 1);
    assert_eq!(
        (recv[0].wr_id, recv[0].status, recv[0].opcode, recv[0].byte_len),
        (91, WcStatus::Success, Some(WcOpcode::Recv), 4)
    );
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- cargo test --test direct_rc -- --ignored"]
fn a_direct_rc_qp_reports_a_remote_access_error_then_flushes_and_works_again_after_a_reset() {
    let (ctx, port, gid_index) = open();
    let mut p = pair();
    let good = p.target.remote().unwrap().slice(0, 8).unwrap();
    let bad = RemoteMemory {
        rkey: good.rkey ^ 0x00ff_ff00,
        ..good
    };
    {
        let mut batch = p.qp.batch();
        batch.rdma_write(7, bad).inline(b"nope").unwrap();
        batch.commit().unwrap();
    }
    let got = wait(&p.send_cq, 1);
    assert_eq!((got[0].wr_id, got[0].status), (7, WcStatus::RemAccessErr), "{got:?}");
    // The QP is in ERR: what is posted now completes flushed, named exactly (wr_id 7 again).
    {
        let mut batch = p.qp.batch();
        batch.rdma_write(7, good).inline(b"late").unwrap();
        batch.rdma_write(8, good).unsignaled().inline(b"late").unwrap();
        batch.commit().unwrap();
    }
    let got = wait(&p.send_cq, 2);
    let seen: Vec<_> = got.iter().map(|c| (c.wr_id, c.status)).collect();
    assert_eq!(seen, [(7, WcStatus::WrFlushErr), (8, WcStatus::WrFlushErr)]);
    assert_eq!(p.qp.outstanding(), 0);
    let mut w = [0u8; 4];
    p.target.read(0, &mut w).unwrap();
    assert_eq!(w, [0; 4], "nothing was written");
    // RESET, connected again: the direct writer restarts at block 0 and posts.
    let a = p.qp.reset().unwrap();
    let b = p.partner.reset().unwrap();
    let access = Access::LOCAL_WRITE | Access::REMOTE_WRITE;
    let (mut a, _b) = connect_rc(
        port,
        loopback_path(&ctx, port, gid_index),
        MTU,
        (a, access),
        (b, target_access(p.atomics)),
    );
    {
        let mut batch = a.batch();
        batch.rdma_write(9, good).inline(b"good").unwrap();
        batch.commit().unwrap();
    }
    let got = wait(&p.send_cq, 1);
    assert_eq!((got[0].wr_id, got[0].status), (9, WcStatus::Success));
    p.target.read(0, &mut w).unwrap();
    assert_eq!(&w, b"good");
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- cargo test --test direct_rc -- --ignored"]
fn rc_cqs_that_do_not_suit_the_backend_are_refused_with_einval_and_the_reason() {
    let (ctx, _, _) = open();
    let pd = ctx.alloc_pd().unwrap();
    let plain = ctx.create_cq(64).unwrap();
    let direct = ctx.create_direct_cq(64).unwrap();
    let caps = RcCaps::default();
    let refused = |send: &Cq, recv: &Cq, backend, why: &str| {
        let err = pd.create_rc_qp_split(send, recv, None, caps, backend).expect_err(why);
        assert_eq!(err.errno(), Some(libc::EINVAL), "{err}");
        assert!(err.to_string().contains(why), "{err}");
    };
    refused(&plain, &plain, SendBackend::Direct, "needs a direct send CQ");
    refused(
        &direct,
        &direct,
        SendBackend::Direct,
        "decodes requester (send) completions only",
    );
    refused(&direct, &plain, SendBackend::WrApi, "serves only the send completions");
    refused(&plain, &direct, SendBackend::WrApi, "serves only the send completions");
    let err = pd
        .create_rc_qp(&direct, None, caps)
        .expect_err("a wr-API RC QP on a direct CQ");
    assert_eq!(err.errno(), Some(libc::EINVAL));
    let qp = pd
        .create_rc_qp_split(&plain, &ctx.create_cq(64).unwrap(), None, caps, SendBackend::WrApi)
        .expect("separate CQs on the wr API");
    assert_eq!(qp.backend(), SendBackend::WrApi);
    let qp = pd
        .create_rc_qp_split(&direct, &plain, None, caps, SendBackend::Direct)
        .expect("a direct send CQ and an ordinary receive CQ");
    assert_eq!(qp.backend(), SendBackend::Direct);
}
