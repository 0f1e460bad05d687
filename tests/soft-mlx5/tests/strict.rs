//! Where a ConnectX is stricter than a naive model, and so is soft-mlx5: each test names the
//! kernel, PRM, IBA or man-page behaviour it mirrors and fails when that behaviour is off.
mod support;

use soft_mlx5::device::objects::QpState;
use soft_mlx5::engine::cqe::{op, syndrome};
use soft_mlx5::engine::wqe::opcode;
use support::*;

fn read_wr(l: &Link, len: u32) -> Wr {
    Wr {
        opcode: opcode::RDMA_READ,
        ..Wr::write(&[(l.local.at(0), len, l.local.key)], l.remote.at(0), l.remote.key)
    }
}

fn fetch_add_wr(l: &Link, local_off: usize, add: u64) -> Wr {
    Wr {
        raddr: Some((l.remote.at(64), l.remote.key)),
        atomic: Some((add, 0)),
        sges: vec![(l.local.at(local_off), 8, l.local.key)],
        ..Wr::new(opcode::ATOMIC_FA)
    }
}

// ---------------------------------------------------------------------------------------------
// S3: max_dest_rd_atomic = 0 (mlx5_ib to_mlx5_access_flags).
// ---------------------------------------------------------------------------------------------

#[test]
fn an_rc_responder_with_max_dest_rd_atomic_0_refuses_reads_and_atomics_but_takes_writes() {
    for wr in [read_wr as fn(&Link, u32) -> Wr, |l: &Link, _| fetch_add_wr(l, 0, 1)] {
        let mut l = Link::new(Transport::Rc);
        let b = l.resp.as_ref().map(|b| b.h).unwrap();
        l.bed.dev.qps.get_mut(&b).unwrap().max_dest_rd_atomic = 0;
        l.remote.buf.write(0, &[7; 8]);
        let w = wr(&l, 8);
        let i = l.post(w);
        l.run();
        let c = l.scq.drain();
        assert_eq!(
            (c[0].opcode, c[0].syndrome, c[0].wqe_counter),
            (op::REQ_ERR, syndrome::REMOTE_INVAL_REQ_ERR, i),
            "{c:?}"
        );
        assert_eq!(l.local.buf.read(0, 8), [0; 8], "nothing was read");
        assert_eq!(
            l.bed.state(b),
            QpState::Err,
            "an invalid request takes the RC responder to ERR"
        );
    }
    // Remote write stays enabled.
    let mut l = Link::new(Transport::Rc);
    let b = l.resp.as_ref().map(|b| b.h).unwrap();
    l.bed.dev.qps.get_mut(&b).unwrap().max_dest_rd_atomic = 0;
    let rk = l.remote.key;
    let i = l.post(Wr::write_inline(&[9, 9], l.remote.at(0), rk));
    l.run();
    let c = l.scq.drain();
    assert_eq!((c[0].opcode, c[0].wqe_counter), (op::REQ, i), "{c:?}");
    assert_eq!(l.remote.buf.read(0, 2), [9, 9]);
}

#[test]
fn a_dct_reads_and_atomics_do_not_depend_on_max_dest_rd_atomic() {
    // A DCT takes rre/rae from its access flags alone (mlx5_ib create_dct).
    let mut l = Link::new(Transport::Dc);
    let d = l.dct.as_ref().map(|d| d.h).unwrap();
    assert_eq!(l.bed.dev.qps[&d].max_dest_rd_atomic, 0);
    l.remote.buf.write(0, &[5; 8]);
    let w = read_wr(&l, 8);
    let i = l.post(w);
    l.run();
    let c = l.scq.drain();
    assert_eq!((c[0].opcode, c[0].wqe_counter), (op::REQ, i), "{c:?}");
    assert_eq!(l.local.buf.read(0, 8), [5; 8]);
}

// ---------------------------------------------------------------------------------------------
// S5: the overrun oracle (stricter than silicon on purpose; engine/oracle.rs).
// ---------------------------------------------------------------------------------------------

/// One pass of the device without the bench's oracle assertion.
fn step(l: &mut Link) {
    soft_mlx5::engine::step(&mut l.bed.dev);
}

#[test]
fn posting_more_than_the_send_ring_holds_past_the_oldest_uncompleted_wqe_fails_naming_the_qp() {
    // RC writes of 8 inline bytes take one 64-byte basic block; the ring holds 16.
    let mut l = Link::new(Transport::Rc);
    let rk = l.remote.key;
    for n in 0..16 {
        l.post(Wr::write_inline(&[n; 8], l.remote.at(8 * usize::from(n)), rk).unsignaled());
    }
    l.run();
    // Sixteen executed and consumed: another full ring is fine.
    for n in 0..16 {
        l.post(Wr::write_inline(&[n; 8], l.remote.at(8 * usize::from(n)), rk).unsignaled());
    }
    l.run();
    assert!(l.bed.dev.fault.is_none());

    // A send with no receive waits on RNR (rnr_retry 7): it stays uncompleted, so the 16 basic
    // blocks from it on are all software may post.
    let lk = l.local.key;
    l.post(Wr::send(&[(l.local.at(0), 4, lk)]));
    l.run();
    for n in 0..15 {
        l.post(Wr::write_inline(&[n; 8], l.remote.at(0), rk).unsignaled());
    }
    step(&mut l);
    assert!(l.bed.dev.fault.is_none(), "{:?}", l.bed.dev.fault);
    l.post(Wr::write_inline(&[1; 8], l.remote.at(0), rk).unsignaled());
    step(&mut l);
    let fault = l.bed.dev.fault.clone().expect("the overrun is caught");
    let qpn = format!("{:#x}", l.req.qpn);
    assert!(fault.contains("send queue overrun") && fault.contains(&qpn), "{fault}");
}

#[test]
fn posting_more_receives_than_the_receive_ring_holds_fails_naming_the_qp() {
    let mut l = Link::new(Transport::Rc);
    let k = l.remote.key;
    for _ in 0..16 {
        l.post_recv(&[(l.remote.at(0), 8, k)]);
    }
    step(&mut l);
    assert!(l.bed.dev.fault.is_none());
    l.post_recv(&[(l.remote.at(0), 8, k)]);
    step(&mut l);
    let fault = l.bed.dev.fault.clone().expect("the overrun is caught");
    let qpn = format!("{:#x}", l.resp.as_ref().unwrap().qpn);
    assert!(
        fault.contains("receive queue overrun") && fault.contains(&qpn),
        "{fault}"
    );
}
