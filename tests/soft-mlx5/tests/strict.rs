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
    step(&mut l);
    step(&mut l);
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
fn a_reset_qps_stale_doorbell_record_is_no_overrun_before_libmlx5_zeroes_it() {
    // libmlx5 zeroes the doorbell records only after MODIFY_QP(RESET) returned: in between the
    // device's counters are 0 and the record still holds the old producer counter.
    let mut l = Link::new(Transport::Rc);
    let rk = l.remote.key;
    for _round in 0..3 {
        for n in 0..16 {
            l.post(Wr::write_inline(&[n; 8], l.remote.at(8 * usize::from(n)), rk).unsignaled());
        }
        l.run();
    }
    let qp = l.bed.dev.qps.get_mut(&l.req.h).unwrap();
    qp.state = QpState::Reset;
    qp.reset_send_queue();
    l.bed.dev.reindex_qp(l.req.h);
    step(&mut l);
    step(&mut l);
    assert!(l.bed.dev.fault.is_none(), "{:?}", l.bed.dev.fault);
}

/// MODIFY_QP to `state` with the state alone in the mask, through the kernel path.
fn modify_state(l: &mut Link, h: u32, state: QpState) {
    let r = soft_mlx5::uapi::ib_user_verbs::ib_uverbs_modify_qp {
        qp_handle: h,
        attr_mask: soft_mlx5::kernel::modify::mask::STATE,
        qp_state: state as u8,
        ..Default::default()
    };
    soft_mlx5::kernel::modify::modify_qp(&mut l.bed.dev, &r, None).unwrap();
}

/// The requester to ERR (its work flushed) and then RESET, as DCI recovery does; its handle.
fn requester_to_reset(l: &mut Link) -> u32 {
    let h = l.req.h;
    modify_state(l, h, QpState::Err);
    l.run();
    modify_state(l, h, QpState::Reset);
    h
}

#[test]
fn after_reset_to_rts_a_stale_doorbell_record_is_not_acted_on_until_software_rings_again() {
    // UCX's DCI recovery (uct_ib_mlx5_txwq_reset): ERR -> RST -> RTS with its own producer
    // counter back at 0 but the doorbell record left as it was. Silicon reads the record only
    // when rung, and software rewrites it before it rings: until then the device's send queue
    // is empty, whatever the record says.
    for (rounds, extra) in [(3, 0), (0, 5)] {
        let mut l = Link::new(Transport::Dc);
        let rk = l.remote.key;
        // A DC write with inline data takes two basic blocks: 8 fill the 16 of the ring.
        for _round in 0..rounds {
            for n in 0..8 {
                l.post(Wr::write_inline(&[n; 8], l.remote.at(8 * usize::from(n)), rk).unsignaled());
            }
            l.run();
        }
        for n in 0..extra {
            l.post(Wr::write_inline(&[n; 8], l.remote.at(8 * usize::from(n)), rk));
        }
        l.run();
        assert_eq!(l.scq.drain().len(), extra as usize);
        let h = requester_to_reset(&mut l);
        l.run();
        // INIT, RTR, RTS with the attributes the DCI already has.
        l.bed.dev.qps.get_mut(&h).unwrap().state = QpState::Rts;
        l.bed.dev.reindex_qp(h);
        l.req.sq_pi = 0;
        l.run();
        assert!(l.bed.dev.fault.is_none(), "{:?}", l.bed.dev.fault);
        assert_eq!(l.scq.drain(), vec![], "nothing executes before software rings");
        l.remote.buf.write(0, &[0; 8]);
        let i = l.post(Wr::write_inline(&[0xa5; 8], l.remote.at(0), rk));
        l.run();
        assert!(l.bed.dev.fault.is_none(), "{:?}", l.bed.dev.fault);
        let c = l.scq.drain();
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].opcode, c[0].wqe_counter), (op::REQ, i), "{c:?}");
        assert_eq!(l.remote.buf.read(0, 8), [0xa5; 8]);
    }
}

#[test]
fn after_reset_a_rewritten_ring_rung_once_back_to_the_old_record_value_is_new_work() {
    // UCX's DCI recovery (uct_dc_mlx5_iface_reset_dci -> uct_ib_mlx5_txwq_reset) leaves the
    // record at its old value S but zeroes the ring; a cycle of the same shape (UCX
    // test_uct_peer_failure_multiple: 42 AM shorts of 2 basic blocks and a NOP, 85 each time)
    // brings it back to S. Here the batch is rung once (a WR list: one record write), so no
    // pass can see a value in between: the WQEs written since RESET up to S are what silicon,
    // rung, executes. Before the fix nothing ran and UCX waited for these completions forever.
    let mut l = Link::new(Transport::Dc);
    let rk = l.remote.key;
    for n in 0..3u8 {
        l.post(Wr::write_inline(&[n; 8], l.remote.at(8 * usize::from(n)), rk));
    }
    l.run();
    assert_eq!(l.scq.drain().len(), 3);
    let h = requester_to_reset(&mut l);
    // uct_ib_mlx5_txwq_reset: its counter to 0 and the ring zeroed, the record left as it was.
    let ring_bytes = (l.req.sq_cnt * 64) as usize;
    let sq_off = (l.req.rq_cnt as usize) << l.req.rq_shift;
    l.req.buf.write(sq_off, &vec![0; ring_bytes]);
    l.req.sq_pi = 0;
    l.bed.dev.qps.get_mut(&h).unwrap().state = QpState::Rts;
    l.bed.dev.reindex_qp(h);
    l.run();
    assert_eq!(l.scq.drain(), vec![], "a zeroed ring under the old record runs nothing");
    // Half the batch written, the record not rung: nothing runs yet.
    let av = l.av();
    let first = l.req.write_wqe(&Wr {
        av,
        ..Wr::write_inline(&[0xa0; 8], l.remote.at(0), rk)
    });
    l.run();
    assert_eq!(l.scq.drain(), vec![], "WQEs short of the record are not a post yet");
    for n in 1..3u8 {
        l.req.write_wqe(&Wr {
            av,
            ..Wr::write_inline(&[0xa0 + n; 8], l.remote.at(8 * usize::from(n)), rk)
        });
    }
    l.req.ring_sq();
    assert_eq!(l.req.sq_pi, 6, "the record is back at the value it had at RESET");
    l.run();
    assert!(l.bed.dev.fault.is_none(), "{:?}", l.bed.dev.fault);
    let c = l.scq.drain();
    assert_eq!(c.len(), 3, "the batch rung after RESET executes: {c:?}");
    assert_eq!((c[0].opcode, c[0].wqe_counter), (op::REQ, first), "{c:?}");
    assert_eq!(l.remote.buf.read(0, 24), [[0xa0; 8], [0xa1; 8], [0xa2; 8]].concat());
}

#[test]
fn after_reset_a_record_software_zeroed_and_rang_back_to_its_old_value_is_new_work() {
    // libmlx5: MODIFY_QP(RESET), then both records zeroed (mlx5_modify_qp), INIT..RTS and a
    // post that brings the send record back to the value it had at RESET.
    let mut l = Link::new(Transport::Dc);
    let rk = l.remote.key;
    let i = l.post(Wr::write_inline(&[1; 8], l.remote.at(0), rk));
    l.run();
    assert_eq!(l.scq.drain().len(), 1);
    let h = requester_to_reset(&mut l);
    l.req.db.put_be32(4, 0);
    l.req.sq_pi = 0;
    let r = soft_mlx5::uapi::ib_user_verbs::ib_uverbs_modify_qp {
        qp_handle: h,
        attr_mask: {
            use soft_mlx5::kernel::modify::mask::*;
            STATE | PKEY_INDEX | PORT
        },
        qp_state: QpState::Init as u8,
        port_num: 1,
        ..Default::default()
    };
    soft_mlx5::kernel::modify::modify_qp(&mut l.bed.dev, &r, None).unwrap();
    // RTR, RTS with the attributes the DCI already has.
    l.bed.dev.qps.get_mut(&h).unwrap().state = QpState::Rts;
    l.bed.dev.reindex_qp(h);
    assert_eq!(l.post(Wr::write_inline(&[2; 8], l.remote.at(0), rk)), i);
    l.run();
    let c = l.scq.drain();
    assert_eq!(c.len(), 1, "the post after RESET executes: {c:?}");
    assert_eq!(l.remote.buf.read(0, 8), [2; 8]);
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

// ---------------------------------------------------------------------------------------------
// S1, S2: a pipelined send queue; the fence (MLX5_WQE_CTRL_FENCE).
// ---------------------------------------------------------------------------------------------

const BOTH: [Transport; 2] = [Transport::Rc, Transport::Dc];

#[test]
fn a_write_behind_a_read_gathers_its_data_before_the_read_lands_unless_fenced() {
    // IBA 10.8.3.3: requests are pipelined, so a write gathers its local data when it leaves,
    // before the response of an earlier read has landed there; IBV_SEND_FENCE makes it wait
    // for every earlier read and atomic.
    for t in BOTH {
        for fence in [false, true] {
            let mut l = Link::new(t);
            l.local.buf.write(0, &[1; 8]);
            l.remote.buf.write(0, &[9; 8]);
            let r = read_wr(&l, 8);
            l.post(r);
            let mut w = Wr::write(&[(l.local.at(0), 8, l.local.key)], l.remote.at(100), l.remote.key);
            if fence {
                w = w.fenced();
            }
            l.post(w);
            l.run();
            let c = l.scq.drain();
            assert_eq!(c.len(), 2, "{t:?}: {c:?}");
            assert!(c.iter().all(|c| c.opcode == op::REQ), "{c:?}");
            let want = if fence { [9; 8] } else { [1; 8] };
            assert_eq!(l.remote.buf.read(100, 8), want, "{t:?}, fence {fence}");
        }
    }
}

#[test]
fn reads_and_atomics_in_flight_are_bounded_by_max_rd_atomic_and_the_rc_peers_max_dest_rd_atomic() {
    // mlx5_ib: log_sra_max = ilog2(max_rd_atomic), log_rra_max = ilog2(max_dest_rd_atomic).
    for (own, peer, want) in [(16, 16, 4), (2, 16, 2), (3, 16, 2), (16, 1, 1), (0, 16, 1)] {
        let mut l = Link::new(Transport::Rc);
        let (a, b) = (l.req.h, l.resp.as_ref().unwrap().h);
        l.bed.dev.qps.get_mut(&a).unwrap().max_rd_atomic = own;
        l.bed.dev.qps.get_mut(&b).unwrap().max_dest_rd_atomic = peer;
        for n in 0..2 {
            let r = read_wr(&l, 8);
            l.post(r);
            let f = fetch_add_wr(&l, 8 + 8 * n, 1);
            l.post(f);
        }
        step(&mut l);
        let sent = soft_mlx5::engine::requester::reads_in_flight(&l.bed.dev.qps[&a]);
        assert_eq!(sent, want, "max_rd_atomic {own}, peer max_dest_rd_atomic {peer}");
        l.run();
        assert_eq!(l.scq.drain().len(), 4);
        assert_eq!(l.remote.buf.ne64(64), 2, "both atomics executed once");
    }
}

// ---------------------------------------------------------------------------------------------
// DCI streams as silicon runs them (mlx5dv_create_qp(3), mlx5dv_dci_stream_id_reset(3)).
// ---------------------------------------------------------------------------------------------

fn dc_streams(log_concurrent: u8, log_errored: u8) -> Link {
    Link::with(
        Transport::Dc,
        &QpCfg {
            dci_streams: Some((log_concurrent, log_errored)),
            rnr_retry: 7,
            min_rnr_timer: 31,
            ..Default::default()
        },
    )
}

#[test]
fn an_rnr_wait_on_one_dci_stream_does_not_stop_the_others_but_a_dci_without_streams_waits() {
    for streams in [true, false] {
        let mut l = if streams {
            dc_streams(2, 2)
        } else {
            Link::with(
                Transport::Dc,
                &QpCfg {
                    rnr_retry: 7,
                    min_rnr_timer: 31,
                    ..Default::default()
                },
            )
        };
        let (lk, rk) = (l.local.key, l.remote.key);
        // No receive posted at the DCT's SRQ: the send on stream 1 waits on RNR.
        let i_send = l.post(Wr::send(&[(l.local.at(0), 4, lk)]).on_stream(1));
        let i_write = l.post(Wr::write_inline(&[7; 4], l.remote.at(200), rk).on_stream(2));
        l.bed.run_for(std::time::Duration::from_millis(20));
        let executed = l.remote.buf.read(200, 4) == [7; 4];
        assert_eq!(
            executed, streams,
            "streams {streams}: the write went ahead of the waiting send"
        );
        // Send-queue order: the write's completion waits behind the send's.
        assert!(l.scq.drain().is_empty());
        l.post_recv(&[(l.remote.at(0), 16, rk)]);
        let scq = &l.scq;
        l.bed.run_until(std::time::Duration::from_secs(20), |_| scq.ready());
        l.run();
        let c = l.scq.drain();
        let order: Vec<u16> = c.iter().map(|c| c.wqe_counter).collect();
        assert_eq!(order, [i_send, i_write], "streams {streams}: {c:?}");
        assert_eq!(l.remote.buf.read(200, 4), [7; 4]);
    }
}

#[test]
fn with_out_of_order_completions_a_stream_completes_before_an_older_waiting_stream() {
    // SOFT_MLX5_OOO=1: completions of different streams as they finish, each stream in order.
    let mut l = dc_streams(2, 2);
    l.bed.dev.ooo_streams = true;
    let (lk, rk) = (l.local.key, l.remote.key);
    let i_send = l.post(Wr::send(&[(l.local.at(0), 4, lk)]).on_stream(1));
    let i_after = l.post(Wr::write_inline(&[1], l.remote.at(300), rk).on_stream(1));
    let i_write = l.post(Wr::write_inline(&[7; 4], l.remote.at(200), rk).on_stream(2));
    let scq = &l.scq;
    l.bed.run_until(std::time::Duration::from_secs(20), |_| scq.ready());
    let c = l.scq.drain();
    assert_eq!(c.iter().map(|c| c.wqe_counter).collect::<Vec<_>>(), [i_write], "{c:?}");
    assert_eq!(
        l.remote.buf.read(300, 1),
        [0],
        "stream 1 stays in order behind its send"
    );
    // The slots stay the device's until the oldest WQE completes (the overrun oracle's view).
    assert_eq!(l.bed.dev.qps[&l.req.h].sq_ci, 0);
    l.post_recv(&[(l.remote.at(0), 16, rk)]);
    let scq = &l.scq;
    l.bed.run_until(std::time::Duration::from_secs(20), |_| scq.ready());
    l.run();
    let c = l.scq.drain();
    assert_eq!(c.iter().map(|c| c.wqe_counter).collect::<Vec<_>>(), [i_send, i_after]);
    assert_eq!(l.remote.buf.read(300, 1), [1]);
}

#[test]
fn an_error_taking_the_dci_to_err_flushes_requests_the_target_executed_before_their_ack() {
    // log_num_errored 0: the first stream error takes the DCI to ERR. The write on stream 2
    // left with the failing one and was executed at the DCT; its acknowledgement finds the DCI
    // in ERR, so it completes with a flush (mlx5dv_create_qp(3): the DCI moves to error and
    // every outstanding WQE is flushed).
    let mut l = dc_streams(2, 0);
    let (lk, rk) = (l.local.key, l.remote.key);
    let bad = Wr::write(&[(l.local.at(0), 8, lk)], l.remote.at(0), 0x00de_ad42).on_stream(1);
    let i_bad = l.post(bad);
    let i_good = l.post(Wr::write_inline(&[5; 4], l.remote.at(200), rk).on_stream(2));
    l.run();
    let c = l.scq.drain();
    assert_eq!(c.len(), 2, "{c:?}");
    assert_eq!(
        (c[0].opcode, c[0].syndrome, c[0].wqe_counter),
        (op::REQ_ERR, syndrome::REMOTE_ACCESS_ERR, i_bad)
    );
    assert_eq!(
        (c[1].opcode, c[1].syndrome, c[1].wqe_counter),
        (op::REQ_ERR, syndrome::WR_FLUSH_ERR, i_good)
    );
    assert_eq!(l.remote.buf.read(200, 4), [5; 4], "executed at the target all the same");
    assert_eq!(l.bed.state(l.req.h), QpState::Err);
}

// ---------------------------------------------------------------------------------------------
// A lossy wire between a device's own QPs (SOFT_MLX5_FAULTS; IBA 9.7.5.1.1, 9.7.6.1.3).
// ---------------------------------------------------------------------------------------------

#[test]
fn on_a_lossy_wire_within_one_device_every_atomic_executes_once_and_every_read_returns_its_data() {
    for t in BOTH {
        for spec in ["loss=0.25,seed=9", "dup=1", "loss=0.1,dup=0.3,seed=4"] {
            let mut l = Link::new(t);
            l.bed.dev.faults = Some(soft_mlx5::fabric::faults::Faults::parse(spec).unwrap());
            l.remote.buf.write(512, &[3; 64]);
            for k in 0..30 {
                let f = fetch_add_wr(&l, 8 * k, 1);
                l.post(f);
                let r = Wr {
                    opcode: opcode::RDMA_READ,
                    ..Wr::write(
                        &[(l.local.at(1024 + 64 * k), 64, l.local.key)],
                        l.remote.at(512),
                        l.remote.key,
                    )
                };
                l.post(r);
                let mut got = Vec::new();
                while got.len() < 2 {
                    let scq = &l.scq;
                    l.bed.run_until(std::time::Duration::from_secs(20), |_| scq.ready());
                    got.extend(l.scq.drain());
                }
                assert!(got.iter().all(|c| c.opcode == op::REQ), "{t:?} {spec}: {got:?}");
                assert_eq!(l.local.buf.read(1024 + 64 * k, 64), [3; 64], "{t:?} {spec}");
            }
            assert_eq!(l.remote.buf.ne64(64), 30, "{t:?} {spec}: each atomic executed once");
            let mut seen: Vec<u64> = (0..30).map(|k| l.local.buf.ne64(8 * k)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..30).collect::<Vec<u64>>(), "{t:?} {spec}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Issue 25 part 2: strict where the reading found the emulator kind. Each has a switch that
// turns it off (scripts/soft-mlx5 lists them); with the switch off these tests fail.
// ---------------------------------------------------------------------------------------------

/// A UAR page of the application's, with one BlueFlame register (at MLX5_BF_OFFSET) given to
/// each of `qps`, as mlx5_ib's alloc_bfreg shares a medium-class register.
fn share_bf_register(l: &mut Link, qps: &[u32]) -> (Buf, usize) {
    use soft_mlx5::device::objects::BfReg;
    let page = Buf::new(4096);
    let reg = BfReg {
        addr: page.at(0x800),
        half: 256,
    };
    share_bf_register_at(l, qps, page, reg)
}

/// As [`share_bf_register`], at register `reg` of UAR page `page`.
fn share_bf_register_at(l: &mut Link, qps: &[u32], page: Buf, reg: soft_mlx5::device::objects::BfReg) -> (Buf, usize) {
    l.bed.dev.uars.push(page.addr());
    for h in qps {
        l.bed.dev.set_bf(*h, Some(reg));
    }
    // Judge a half as soon as it stops changing (the default waits out a preempted writer).
    l.bed.dev.bf.settle = std::time::Duration::ZERO;
    l.bed.dev.bf.settle_reposted = std::time::Duration::ZERO;
    let off = (reg.addr - page.addr()) as usize;
    (page, off)
}

/// Two DCIs on one register, both with a DC write posted (doorbell record rung, WQE fetched):
/// returns their WQEs as libmlx5 wrote them to the rings.
fn two_dcis_with_a_write_each(l: &mut Link) -> (TQp, Vec<u8>, Vec<u8>, Buf, usize) {
    two_dcis_on_register(l, None)
}

/// As [`two_dcis_with_a_write_each`], on register `at` (a UAR page and a register in it) when
/// given.
fn two_dcis_on_register(
    l: &mut Link,
    at: Option<(Buf, soft_mlx5::device::objects::BfReg)>,
) -> (TQp, Vec<u8>, Vec<u8>, Buf, usize) {
    let cfg = QpCfg::default();
    let mut y = l.bed.dci(l.pd, &l.scq, &cfg);
    let xh = l.req.h;
    let (page, off) = match at {
        Some((page, reg)) => share_bf_register_at(l, &[xh, y.h], page, reg),
        None => share_bf_register(l, &[xh, y.h]),
    };
    let rk = l.remote.key;
    let mut wx = Wr::write_inline(&[0x11; 20], l.remote.at(0), rk);
    wx.av = l.av();
    // Another flag in the control segment: the first chunks differ beyond the control word.
    let mut wy = Wr::write_inline(&[0x22; 20], l.remote.at(64), rk).unsignaled();
    wy.av = l.av();
    let ix = l.req.post(&wx);
    let iy = y.post(&wy);
    let bx = encode_send(ix, l.req.qpn, &wx);
    let by = encode_send(iy, y.qpn, &wy);
    assert_eq!((bx.len(), by.len()), (128, 128), "two 64-byte chunks each");
    step(l);
    (y, bx, by, page, off)
}

#[test]
fn blueflame_chunks_of_two_qps_interleaved_on_one_register_fail_the_run_naming_both_qps() {
    let mut l = Link::new(Transport::Dc);
    let (y, bx, by, page, off) = two_dcis_with_a_write_each(&mut l);
    // Two CPUs copy to the same half without the register's lock: X's first chunk, then Y's
    // second chunk lands after X's.
    page.write(off, &bx[..64]);
    page.write(off + 64, &by[64..128]);
    for _ in 0..3 {
        step(&mut l);
    }
    let fault = l.bed.dev.fault.clone().expect("the interleaving is caught");
    let (qx, qy) = (format!("{:#x}", l.req.qpn), format!("{:#x}", y.qpn));
    assert!(
        fault.contains("interleaved") && fault.contains(&qx) && fault.contains(&qy),
        "{fault}"
    );
}

/// A thread domain's register: libmlx5 (verbs.c `mlx5_attach_dedicated_uar`, legacy dynamic
/// UARs) maps its own UAR page with MLX5_IB_MMAP_ALLOC_WC and creates the QP with
/// MLX5_QP_FLAG_BFREG_INDEX and the register's index; mlx5_ib (`bfregn_to_uar_index`) finds
/// the page as `index / 2 + num_static_sys_pages`, the register is `index % 2` in it.
#[test]
fn blueflame_chunks_of_two_qps_interleaved_on_a_thread_domains_dynamic_register_fail_the_run() {
    // libmlx5 asks for 16 bfregs: 8 static system pages (2 bfregs each, MLX5_NON_FP_BFREGS_PER_UAR).
    let mut ctx = soft_mlx5::kernel::Ucontext {
        num_static_sys_pages: 8,
        ..Default::default()
    };
    // The library's second ALLOC_WC page (index 1) is system page 8 + 1; its registers are
    // dynamic bfregs 2 and 3.
    let page = Buf::new(4096);
    ctx.uar_pages.insert(9, page.addr());
    let reg = ctx
        .bf_register(3, true)
        .expect("a QP created with BFREG_INDEX 3 writes its doorbells to a watched register");
    assert_eq!(
        (reg.addr, reg.half),
        (page.at(0x800 + 512), 256),
        "register 1 of the page, at MLX5_BF_OFFSET + bf_reg_size"
    );
    assert_eq!(
        ctx.bf_register(4, true),
        None,
        "a register of a dynamic page never mapped: mlx5_ib refuses the QP (EINVAL)"
    );
    let mut l = Link::new(Transport::Dc);
    let (y, bx, by, page, off) = two_dcis_on_register(&mut l, Some((page, reg)));
    page.write(off, &bx[..64]);
    page.write(off + 64, &by[64..128]);
    for _ in 0..3 {
        step(&mut l);
    }
    let fault = l
        .bed
        .dev
        .fault
        .clone()
        .expect("the interleaving on the dynamic register is caught");
    let (qx, qy) = (format!("{:#x}", l.req.qpn), format!("{:#x}", y.qpn));
    assert!(
        fault.contains("interleaved") && fault.contains(&qx) && fault.contains(&qy),
        "{fault}"
    );
}

#[test]
fn a_blueflame_copy_that_differs_from_the_ring_fails_the_run_naming_the_qp() {
    let mut l = Link::new(Transport::Dc);
    let (_y, bx, _, page, off) = two_dcis_with_a_write_each(&mut l);
    let mut torn = bx.clone();
    torn[64 + 20] ^= 0xff; // inline data the ring does not hold
    page.write(off + 256, &torn);
    for _ in 0..3 {
        step(&mut l);
    }
    let fault = l.bed.dev.fault.clone().expect("the bad copy is caught");
    assert!(
        fault.contains("torn or differs") && fault.contains(&format!("{:#x}", l.req.qpn)),
        "{fault}"
    );
}

#[test]
fn blueflame_copies_and_8_byte_doorbells_as_libmlx5_writes_them_pass_the_blueflame_oracle() {
    let mut l = Link::new(Transport::Dc);
    let (mut y, bx, by, page, off) = two_dcis_with_a_write_each(&mut l);
    // post_send_db under the lock: X's copy in half 0, Y's in half 1.
    page.write(off, &bx);
    page.write(off + 256, &by);
    step(&mut l);
    step(&mut l);
    // Then Y posts two WQEs at once: an 8-byte doorbell (its last control word) in half 0,
    // over X's copy, whose first chunk differs from Y's only in that word.
    let rk = l.remote.key;
    let mut w = Wr::write_inline(&[0x33; 20], l.remote.at(128), rk).unsignaled();
    w.av = l.av();
    y.write_wqe(&w);
    let mut w2 = w.clone();
    w2.inline = Some(vec![0x44; 20]);
    let i2 = y.write_wqe(&w2);
    y.ring_sq();
    step(&mut l);
    let b2 = encode_send(i2, y.qpn, &w2);
    page.write(off, &b2[..8]);
    for _ in 0..4 {
        step(&mut l);
    }
    assert!(l.bed.dev.fault.is_none(), "{:?}", l.bed.dev.fault);
    l.run();
    assert_eq!(l.remote.buf.read(128, 20), [0x44; 20]);
}

#[test]
fn with_wqe_signatures_a_wqe_whose_signature_is_wrong_completes_with_a_local_qp_operation_error() {
    // mlx5_ib sets qpc.wq_signature for MLX5_QP_FLAG_SIGNATURE (libmlx5: MLX5_QP_SIGNATURE set).
    let mut l = Link::new(Transport::Dc);
    l.bed.dev.qps.get_mut(&l.req.h).unwrap().wq_sig = true;
    let rk = l.remote.key;
    let mut w = Wr::write_inline(&[1; 8], l.remote.at(0), rk);
    w.av = l.av();
    let good = l.req.post_signed(&w, true);
    l.run();
    let c = l.scq.drain();
    assert_eq!((c[0].opcode, c[0].wqe_counter), (op::REQ, good), "{c:?}");
    let mut w = Wr::write_inline(&[2; 8], l.remote.at(0), rk);
    w.av = l.av();
    let bad = l.req.post_signed(&w, false);
    l.run();
    let c = l.scq.drain();
    assert_eq!(
        (c[0].opcode, c[0].syndrome, c[0].wqe_counter),
        (op::REQ_ERR, syndrome::LOCAL_QP_OP_ERR, bad),
        "{c:?}"
    );
    assert_eq!(l.remote.buf.read(0, 8), [1; 8], "the bad WQE did not execute");
    assert_eq!(l.bed.state(l.req.h), QpState::Err);
}

#[test]
fn with_qpn_reuse_a_destroyed_qps_number_is_the_next_one_handed_out() {
    // SOFT_MLX5_QPN_REUSE=1 (CI's direct-backend suites): on here as there; =0 turns it off.
    let mut bed = Bed::new();
    bed.dev.strict.qpn_reuse = std::env::var("SOFT_MLX5_QPN_REUSE").map_or(true, |v| v != "0");
    let pd = bed.pd();
    let cq = bed.cq(15);
    let a = bed.dci(pd, &cq, &QpCfg::default());
    let _b = bed.dci(pd, &cq, &QpCfg::default());
    bed.destroy_qp(a.h);
    let c = bed.dci(pd, &cq, &QpCfg::default());
    assert_eq!(c.qpn, a.qpn, "the freed number comes back at once");
    bed.destroy_qp(c.h);
    let srq = bed.srq(pd, 15, 1);
    let d = bed.dct(pd, &cq, &srq, DC_KEY, &QpCfg::default());
    assert_eq!(d.dctn, a.qpn, "a DCT gets it too");
}

/// A file of `len` bytes in `dir`, mapped MAP_SHARED read-write (or MAP_PRIVATE).
fn map_file(dir: &std::path::Path, name: &str, len: usize, flags: i32) -> (u64, std::fs::File) {
    use std::os::fd::AsRawFd;
    let path = dir.join(format!("{}-{name}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    f.set_len(len as u64).unwrap();
    let _ = std::fs::remove_file(&path);
    // SAFETY: a fresh mapping of a file this test owns; unmapped never (the test process ends).
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            f.as_raw_fd(),
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    (p as u64, f)
}

fn fs_magic(dir: &std::path::Path) -> i64 {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid path and a zeroed statfs the call fills.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    assert_eq!(unsafe { libc::statfs(c.as_ptr(), &mut st) }, 0);
    st.f_type as i64
}

#[test]
fn a_writable_registration_of_a_shared_mapping_of_a_dirty_tracked_file_is_refused_with_efault() {
    // Linux 6.5+ mm/gup.c check_vma_flags -> writable_file_mapping_allowed: ib_umem_get's
    // FOLL_LONGTERM | FOLL_WRITE pin of such a mapping fails with EFAULT.
    use soft_mlx5::kernel::write::pin_user_range;
    let bed = Bed::new();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    const TMPFS: i64 = 0x0102_1994;
    assert_ne!(
        fs_magic(&dir),
        TMPFS,
        "the target directory is on a dirty-tracked filesystem"
    );
    let len = 3 * 4096;
    let (shared, _f1) = map_file(&dir, "shared", len, libc::MAP_SHARED);
    for access in [LOCAL_WRITE, LOCAL_WRITE | REMOTE_WRITE, LOCAL_WRITE | REMOTE_ATOMIC] {
        assert_eq!(
            pin_user_range(&bed.dev, shared, len as u64, access),
            Err(libc::EFAULT),
            "access {access:#x}"
        );
    }
    // Part of the range is enough.
    assert_eq!(
        pin_user_range(&bed.dev, shared + 4096, 8, LOCAL_WRITE),
        Err(libc::EFAULT)
    );
    // A read-only registration pins without FOLL_WRITE.
    assert_eq!(pin_user_range(&bed.dev, shared, len as u64, REMOTE_READ), Ok(()));
    // A private mapping, tmpfs and anonymous memory need no dirty tracking.
    let (private, _f2) = map_file(&dir, "private", len, libc::MAP_PRIVATE);
    assert_eq!(pin_user_range(&bed.dev, private, len as u64, ALL_ACCESS), Ok(()));
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() && fs_magic(shm) == TMPFS {
        let (on_tmpfs, _f3) = map_file(shm, "soft-mlx5-pin", len, libc::MAP_SHARED);
        assert_eq!(pin_user_range(&bed.dev, on_tmpfs, len as u64, ALL_ACCESS), Ok(()));
    }
    let anon = Buf::new(len);
    assert_eq!(pin_user_range(&bed.dev, anon.addr(), len as u64, ALL_ACCESS), Ok(()));
}

#[test]
fn on_cx7_streams_no_errored_the_first_stream_error_takes_the_dci_to_err_and_more_errored_streams_are_refused() {
    // Current ConnectX-7 firmware: log_max_dci_errored_streams 0. create_dci refuses a DCI
    // with errored streams (libmlx5 refuses it too, and answers mlx5dv_dci_stream_id_reset
    // with EOPNOTSUPP since max_log_num_errored is 0); the DCI it allows has
    // log_num_errored 0, so one stream error takes it to ERR and flushes every stream.
    use soft_mlx5::kernel::write::dci_streams_allowed;
    let p = soft_mlx5::profile::Profile::by_name("cx7-streams-no-errored").expect("profile");
    assert_eq!(dci_streams_allowed(p, 2, 1), Err(libc::EINVAL));
    let (c, e) = dci_streams_allowed(p, 2, 0).expect("log_num_errored 0");
    let mut l = Link::with(
        Transport::Dc,
        &QpCfg {
            dci_streams: Some((c, e)),
            ..Default::default()
        },
    );
    let (lk, rk) = (l.local.key, l.remote.key);
    let bad = Wr::write(&[(l.local.at(0), 8, lk)], l.remote.at(0), 0x00de_ad42).on_stream(1);
    let i_bad = l.post(bad);
    let i_other = l.post(Wr::write_inline(&[5; 4], l.remote.at(200), rk).on_stream(2));
    l.run();
    let c = l.scq.drain();
    assert_eq!(
        (c[0].syndrome, c[0].wqe_counter, c[1].syndrome, c[1].wqe_counter),
        (syndrome::REMOTE_ACCESS_ERR, i_bad, syndrome::WR_FLUSH_ERR, i_other),
        "{c:?}"
    );
    assert_eq!(l.bed.state(l.req.h), QpState::Err);
}

#[test]
fn an_8_byte_doorbell_over_a_blueflame_copy_made_long_before_passes_the_blueflame_oracle() {
    // libmlx5 rings a batch with an 8-byte doorbell (its last control word) into the half
    // the toggle points at; the rest of that half may still hold a copy of a WQE posted
    // hundreds of WQEs before (here a send), whose first chunk beyond the control word is the
    // same DC address vector.
    let mut l = Link::new(Transport::Dc);
    let (_y, _, _, page, off) = two_dcis_with_a_write_each(&mut l);
    l.run();
    let lk = l.local.key;
    let mut send = Wr::send(&[(l.local.at(0), 8, lk)]);
    send.av = l.av();
    l.post_recv(&[(l.remote.at(0), 64, l.remote.key)]);
    let i = l.req.post(&send);
    step(&mut l);
    page.write(off, &encode_send(i, l.req.qpn, &send));
    for _ in 0..3 {
        step(&mut l);
    }
    l.run();
    let rk = l.remote.key;
    let mut last = Vec::new();
    for round in 0..40u8 {
        let mut w = Wr::write_inline(&[round; 20], l.remote.at(256), rk);
        w.av = l.av();
        l.req.write_wqe(&w);
        let i = l.req.write_wqe(&w);
        l.req.ring_sq();
        last = encode_send(i, l.req.qpn, &w);
        // Batches toggle between the halves; this one leaves the first half alone.
        page.write(off + 256, &last[..8]);
        l.run();
        l.scq.drain();
    }
    page.write(off, &last[..8]);
    for _ in 0..3 {
        step(&mut l);
    }
    assert!(l.bed.dev.fault.is_none(), "{:?}", l.bed.dev.fault);
}
