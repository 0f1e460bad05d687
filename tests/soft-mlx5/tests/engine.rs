//! The data path of soft-mlx5 driven directly, without preloading anything: objects inserted
//! into a [`Device`](soft_mlx5::device::Device) as the kernel commands would insert them, WQEs
//! and doorbell records written as libmlx5 writes them, `engine::step` run, CQEs decoded at the
//! struct mlx5_cqe64 offsets. Each test names the behaviour (IBA / mlx5) it checks.
mod support;

use soft_mlx5::device::event;
use soft_mlx5::device::objects::{QpState, Ring, Stall};
use soft_mlx5::engine::cqe::{op, syndrome, Cqe, CQE64_OFFSETS};
use soft_mlx5::engine::timing::{ack_timeout, rnr_delay};
use soft_mlx5::engine::wqe::{self, decode_send, layout, opcode, Av, Data, SendWqe};
use soft_mlx5::mem::LocalDma;
use std::time::{Duration, Instant};
use support::*;

/// Generous wall-clock budget for timer-driven paths (the timers themselves are scaled down).
const BUDGET: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// Golden WQEs written by the real libmlx5 44 (SOFT_MLX5_LOG=1 dump of the hw_dc tests).
// ---------------------------------------------------------------------------------------------

/// DC RDMA write, inline "odp".
const GOLDEN_WRITE_INLINE: &str = "00000008000105060000000800000000 00000000ffeeddcc8000010400000001 \
     00000000000000000000000000000000 00000000000000000000000000000000 00007f68b2b800000000124200000000 \
     800000036f6470000000000000000000";
/// DC RDMA write with one SGE.
const GOLDEN_WRITE_SGE: &str = "00000008000107060000000800000000 00000000ffeeddcc8000010600000001 \
     00000000000000000000000000000000 00000000000000000000000000000000 00007f68ac06a0400000134200000000 \
     000000080000144200007f68ac06c000";
/// DC send with immediate 0x12345678, inline "into the srq".
const GOLDEN_SEND_IMM: &str = "0000000b000109050000000812345678 00000000ffeeddcc8000010800000001 \
     00000000000000000000000000000000 00000000000000000000000000000000 8000000c696e746f2074686520737271";
/// DC fetch-and-add of 3.
const GOLDEN_FETCH_ADD: &str = "00000012000101070000000800000000 00000000ffeeddcc8000010000000001 \
     00000000000000000000000000000000 00000000000000000000000000000000 00007f68ac0230000000104200000000 \
     00000000000000030000000000000000 000000080000114200007f68ac025000";
/// DC write on stream 5 at WQE index 10.
const GOLDEN_STREAM_WRITE: &str = "00000a0800010f060000050800000000 00000000ffeeddcc8000010e00000001 \
     00000000000000000000000000000000 00000000000000000000000000000000 00007f68ac06a0280000184200000000 \
     80000002050000000000000000000000";

fn unhex(s: &str) -> Vec<u8> {
    let h: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect()
}

/// A send ring of `cnt` basic blocks holding `bytes` from basic block counter `bb` on,
/// wrapping at the end as the SQ does.
fn ring_with(bytes: &[u8], cnt: u32, bb: u32) -> (Buf, Ring) {
    let buf = Buf::new(cnt as usize * 64);
    buf.fill(0xa5);
    let size = cnt as usize * 64;
    let start = (bb & (cnt - 1)) as usize * 64;
    for (i, b) in bytes.iter().enumerate() {
        buf.write((start + i) % size, &[*b]);
    }
    let ring = Ring {
        base: buf.addr(),
        cnt,
        shift: 6,
    };
    (buf, ring)
}

fn decode_golden(hex: &str) -> SendWqe {
    let (_buf, ring) = ring_with(&unhex(hex), 8, 0);
    decode_send(&LocalDma, &ring, 0, true).expect("golden WQE decodes")
}

fn dc_av(dqpn: u32) -> Option<Av> {
    Some(Av {
        key: 0xffee_ddcc,
        dqpn,
        rlid: 1,
        grh: false,
        rgid: [0; 16],
        hop_limit: 0,
        stat_rate_sl: 0,
        tclass: 0,
        flow_label: 0,
    })
}

#[test]
fn golden_dc_rdma_write_with_inline_data_decodes_every_field() {
    let w = decode_golden(GOLDEN_WRITE_INLINE);
    let want = SendWqe {
        index: 0,
        opcode: opcode::RDMA_WRITE,
        qpn: 0x105,
        ds: 6,
        bbs: 2,
        fm_ce_se: wqe::CTRL_CQ_UPDATE,
        imm: 0,
        stream: 0,
        av: dc_av(0x104),
        raddr: Some((0x7f68_b2b8_0000, 0x1242)),
        atomic: None,
        umr: None,
        data: Data::Inline(b"odp".to_vec()),
    };
    assert_eq!(w, want);
    assert!(w.signaled());
}

#[test]
fn golden_dc_rdma_write_with_an_sge_decodes_the_pointer_segment() {
    let w = decode_golden(GOLDEN_WRITE_SGE);
    let want = SendWqe {
        index: 0,
        opcode: opcode::RDMA_WRITE,
        qpn: 0x107,
        ds: 6,
        bbs: 2,
        fm_ce_se: wqe::CTRL_CQ_UPDATE,
        imm: 0,
        stream: 0,
        av: dc_av(0x106),
        raddr: Some((0x7f68_ac06_a040, 0x1342)),
        atomic: None,
        umr: None,
        data: Data::Sges(vec![(0x7f68_ac06_c000, 8, 0x1442)]),
    };
    assert_eq!(w, want);
}

#[test]
fn golden_dc_send_with_immediate_decodes_the_immediate_and_inline_data() {
    let w = decode_golden(GOLDEN_SEND_IMM);
    let want = SendWqe {
        index: 0,
        opcode: opcode::SEND_IMM,
        qpn: 0x109,
        ds: 5,
        bbs: 2,
        fm_ce_se: wqe::CTRL_CQ_UPDATE,
        imm: 0x1234_5678,
        stream: 0,
        av: dc_av(0x108),
        raddr: None,
        atomic: None,
        umr: None,
        data: Data::Inline(b"into the srq".to_vec()),
    };
    assert_eq!(w, want);
}

#[test]
fn golden_dc_fetch_and_add_decodes_the_operands_and_the_local_sge() {
    let w = decode_golden(GOLDEN_FETCH_ADD);
    let want = SendWqe {
        index: 0,
        opcode: opcode::ATOMIC_FA,
        qpn: 0x101,
        ds: 7,
        bbs: 2,
        fm_ce_se: wqe::CTRL_CQ_UPDATE,
        imm: 0,
        stream: 0,
        av: dc_av(0x100),
        raddr: Some((0x7f68_ac02_3000, 0x1042)),
        atomic: Some((3, 0)),
        umr: None,
        data: Data::Sges(vec![(0x7f68_ac02_5000, 8, 0x1142)]),
    };
    assert_eq!(w, want);
}

#[test]
fn golden_dc_write_on_stream_5_at_index_10_decodes_stream_and_index() {
    let w = decode_golden(GOLDEN_STREAM_WRITE);
    let want = SendWqe {
        index: 10,
        opcode: opcode::RDMA_WRITE,
        qpn: 0x10f,
        ds: 6,
        bbs: 2,
        fm_ce_se: wqe::CTRL_CQ_UPDATE,
        imm: 0,
        stream: 5,
        av: dc_av(0x10e),
        raddr: Some((0x7f68_ac06_a028, 0x1842)),
        atomic: None,
        umr: None,
        data: Data::Inline(vec![0x05, 0x00]),
    };
    assert_eq!(w, want);
}

#[test]
fn a_wqe_wrapping_around_the_ring_end_decodes_like_the_unwrapped_one() {
    for hex in [
        GOLDEN_WRITE_INLINE,
        GOLDEN_WRITE_SGE,
        GOLDEN_SEND_IMM,
        GOLDEN_FETCH_ADD,
        GOLDEN_STREAM_WRITE,
    ] {
        let bytes = unhex(hex);
        let straight = decode_golden(hex);
        // Last basic block of a 4-block ring, with the producer counter past several wraps.
        let bb = 4 * 1000 + 3;
        let (buf, ring) = ring_with(&bytes, 4, bb);
        assert_eq!(
            buf.read(0, bytes.len() - 64),
            bytes[64..],
            "the tail sits at the ring start"
        );
        let wrapped = decode_send(&LocalDma, &ring, bb, true).expect("wrapped WQE decodes");
        assert_eq!(wrapped, straight, "{hex}");
    }
}

#[test]
fn the_test_encoder_writes_the_golden_wqes_byte_for_byte() {
    // The WQEs the data-path tests post are built as libmlx5 builds them.
    let av = |dqpn| {
        Some(AvSpec {
            key: 0xffee_ddcc,
            dqpn,
            rlid: 1,
        })
    };
    let cases: [(&str, u16, u32, Wr); 5] = [
        (
            GOLDEN_WRITE_INLINE,
            0,
            0x105,
            Wr {
                av: av(0x104),
                ..Wr::write_inline(b"odp", 0x7f68_b2b8_0000, 0x1242)
            },
        ),
        (
            GOLDEN_WRITE_SGE,
            0,
            0x107,
            Wr {
                av: av(0x106),
                ..Wr::write(&[(0x7f68_ac06_c000, 8, 0x1442)], 0x7f68_ac06_a040, 0x1342)
            },
        ),
        (
            GOLDEN_SEND_IMM,
            0,
            0x109,
            Wr {
                av: av(0x108),
                imm: 0x1234_5678,
                inline: Some(b"into the srq".to_vec()),
                ..Wr::new(opcode::SEND_IMM)
            },
        ),
        (
            GOLDEN_FETCH_ADD,
            0,
            0x101,
            Wr {
                av: av(0x100),
                raddr: Some((0x7f68_ac02_3000, 0x1042)),
                atomic: Some((3, 0)),
                sges: vec![(0x7f68_ac02_5000, 8, 0x1142)],
                ..Wr::new(opcode::ATOMIC_FA)
            },
        ),
        (
            GOLDEN_STREAM_WRITE,
            10,
            0x10f,
            Wr {
                av: av(0x10e),
                ..Wr::write_inline(&[5, 0], 0x7f68_ac06_a028, 0x1842).on_stream(5)
            },
        ),
    ];
    for (hex, index, qpn, wr) in cases {
        let golden = unhex(hex);
        let ours = encode_send(index, qpn, &wr);
        assert_eq!(ours[..golden.len()], golden[..], "{hex}");
        assert!(ours[golden.len()..].iter().all(|&b| b == 0));
    }
}

// ---------------------------------------------------------------------------------------------
// CQE encoding, and the layouts against the real header.
// ---------------------------------------------------------------------------------------------

// struct mlx5_cqe64 (infiniband/mlx5dv.h), checked by `layouts_match_mlx5dv_h_as_cc_compiles_it`.
const CQE_SLID: usize = 22;
const CQE_FLAGS_RQPN: usize = 24;
const CQE_SRQN_UIDX: usize = 32;
const CQE_IMM_INVAL_PKEY: usize = 36;
const CQE_BYTE_CNT: usize = 44;
const CQE_SOP_DROP_QPN: usize = 56;
const CQE_WQE_COUNTER: usize = 60;
const CQE_OP_OWN: usize = 63;
// struct mlx5_err_cqe.
const ERR_SRQN: usize = 32;
const ERR_VENDOR_ERR_SYND: usize = 54;
const ERR_SYNDROME: usize = 55;
const ERR_S_WQE_OPCODE_QPN: usize = 56;
const ERR_WQE_COUNTER: usize = 60;
const ERR_OP_OWN: usize = 63;
const CQE_SIZE: usize = 64;

fn be32_at(b: &[u8], o: usize) -> u32 {
    u32::from_be_bytes(b[o..o + 4].try_into().unwrap())
}

fn be16_at(b: &[u8], o: usize) -> u16 {
    u16::from_be_bytes([b[o], b[o + 1]])
}

#[test]
fn requester_cqe_carries_opcode_qpn_counter_uidx_and_byte_count_at_mlx5_cqe64_offsets() {
    let b = Cqe {
        opcode: op::REQ,
        uidx: 0x12_3456,
        qpn: 0xab_cdef,
        wqe_opcode: opcode::RDMA_READ,
        wqe_counter: 0xbeef,
        byte_cnt: 4096,
        ..Default::default()
    }
    .encode();
    assert_eq!(b.len(), CQE_SIZE);
    assert_eq!(b[CQE_OP_OWN], op::REQ << 4, "owner bit left to the completer");
    assert_eq!(be32_at(&b, CQE_SOP_DROP_QPN), 0x10ab_cdef);
    assert_eq!(be16_at(&b, CQE_WQE_COUNTER), 0xbeef);
    assert_eq!(be32_at(&b, CQE_SRQN_UIDX), 0x12_3456);
    assert_eq!(be32_at(&b, CQE_BYTE_CNT), 4096);
}

#[test]
fn responder_send_with_imm_cqe_carries_byte_count_imm_source_qp_slid_and_uidx() {
    let b = Cqe {
        opcode: op::RESP_SEND_IMM,
        uidx: 7,
        qpn: 0x104,
        wqe_counter: 3,
        byte_cnt: 12,
        imm: 0x1234_5678,
        src_qp: 0x10_0107,
        slid: 1,
        ..Default::default()
    }
    .encode();
    assert_eq!(b[CQE_OP_OWN] >> 4, op::RESP_SEND_IMM);
    assert_eq!(be32_at(&b, CQE_BYTE_CNT), 12);
    // The immediate as it travelled: network order, as libmlx5 copies it to wc.imm_data.
    assert_eq!(b[CQE_IMM_INVAL_PKEY..CQE_IMM_INVAL_PKEY + 4], [0x12, 0x34, 0x56, 0x78]);
    assert_eq!(be32_at(&b, CQE_FLAGS_RQPN), 0x10_0107);
    assert_eq!(be16_at(&b, CQE_SLID), 1);
    assert_eq!(be32_at(&b, CQE_SRQN_UIDX), 7);
    assert_eq!(be32_at(&b, CQE_SOP_DROP_QPN) & 0xff_ffff, 0x104);
    assert_eq!(be16_at(&b, CQE_WQE_COUNTER), 3);
    let grh = Cqe {
        opcode: op::RESP_SEND,
        grh: true,
        src_qp: 9,
        ..Default::default()
    }
    .encode();
    // flags_rqpn bits 28-29: 2 = GRH present.
    assert_eq!(be32_at(&grh, CQE_FLAGS_RQPN), (2 << 28) | 9);
}

#[test]
fn responder_write_with_imm_cqe_carries_the_write_length_and_immediate() {
    let b = Cqe {
        opcode: op::RESP_WR_IMM,
        uidx: 0xff_fffe,
        qpn: 0x200,
        byte_cnt: 64,
        imm: 0xdead_beef,
        src_qp: 0x201,
        ..Default::default()
    }
    .encode();
    assert_eq!(b[CQE_OP_OWN] >> 4, op::RESP_WR_IMM);
    assert_eq!(be32_at(&b, CQE_BYTE_CNT), 64);
    assert_eq!(be32_at(&b, CQE_IMM_INVAL_PKEY), 0xdead_beef);
    assert_eq!(be32_at(&b, CQE_FLAGS_RQPN), 0x201);
    assert_eq!(be32_at(&b, CQE_SRQN_UIDX), 0xff_fffe);
}

#[test]
fn error_cqes_place_syndromes_uidx_qpn_and_counter_as_mlx5_err_cqe() {
    for (opc, synd) in [
        (op::REQ_ERR, syndrome::REMOTE_ACCESS_ERR),
        (op::RESP_ERR, syndrome::WR_FLUSH_ERR),
    ] {
        let b = Cqe {
            opcode: opc,
            uidx: 5,
            qpn: 0x10_0109,
            wqe_opcode: opcode::RDMA_WRITE,
            wqe_counter: 0x1234,
            syndrome: synd,
            vendor_err: 0x93,
            ..Default::default()
        }
        .encode();
        assert_eq!(b[ERR_OP_OWN] >> 4, opc);
        assert_eq!(b[ERR_SYNDROME], synd);
        assert_eq!(b[ERR_VENDOR_ERR_SYND], 0x93);
        assert_eq!(be32_at(&b, ERR_SRQN), 5);
        assert_eq!(be32_at(&b, ERR_S_WQE_OPCODE_QPN), 0x0810_0109);
        assert_eq!(be16_at(&b, ERR_WQE_COUNTER), 0x1234);
    }
}

/// Compiles a probe of `<infiniband/mlx5dv.h>` with the system C compiler and returns what it
/// says for each (label, C expression).
fn c_probe(exprs: &[(String, String)]) -> Vec<(String, usize)> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("engine-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut c =
        String::from("#include <stddef.h>\n#include <stdio.h>\n#include <infiniband/mlx5dv.h>\nint main(void) {\n");
    for (label, expr) in exprs {
        c.push_str(&format!("    printf(\"%s %zu\\n\", \"{label}\", (size_t)({expr}));\n"));
    }
    c.push_str("    return 0;\n}\n");
    let src = dir.join("probe.c");
    let bin = dir.join("probe");
    std::fs::write(&src, c).unwrap();
    let out = std::process::Command::new("cc")
        .arg("-o")
        .arg(&bin)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "this test compiles a probe of <infiniband/mlx5dv.h> with the system C compiler `cc`, \
                 which could not be run ({e}): install a C compiler (gcc) and the rdma-core headers \
                 (libibverbs-dev)"
            )
        });
    assert!(
        out.status.success(),
        "cc failed on the mlx5dv.h probe (are the rdma-core headers installed?):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = std::process::Command::new(&bin).output().expect("run the probe");
    assert!(run.status.success());
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

#[test]
fn layouts_match_mlx5dv_h_as_cc_compiles_it() {
    let mut want: Vec<(String, String, usize)> = Vec::new();
    let mut field = |s: &str, f: &str, v: usize| {
        let expr = if f == "sizeof" {
            format!("sizeof(struct {s})")
        } else {
            format!("offsetof(struct {s}, {f})")
        };
        want.push((format!("{s}.{f}"), expr, v));
    };
    // This test's own constants.
    for (f, v) in [
        ("slid", CQE_SLID),
        ("flags_rqpn", CQE_FLAGS_RQPN),
        ("srqn_uidx", CQE_SRQN_UIDX),
        ("imm_inval_pkey", CQE_IMM_INVAL_PKEY),
        ("byte_cnt", CQE_BYTE_CNT),
        ("sop_drop_qpn", CQE_SOP_DROP_QPN),
        ("wqe_counter", CQE_WQE_COUNTER),
        ("op_own", CQE_OP_OWN),
        ("sizeof", CQE_SIZE),
    ] {
        field("mlx5_cqe64", f, v);
    }
    for (f, v) in [
        ("srqn", ERR_SRQN),
        ("vendor_err_synd", ERR_VENDOR_ERR_SYND),
        ("syndrome", ERR_SYNDROME),
        ("s_wqe_opcode_qpn", ERR_S_WQE_OPCODE_QPN),
        ("wqe_counter", ERR_WQE_COUNTER),
        ("op_own", ERR_OP_OWN),
        ("sizeof", CQE_SIZE),
    ] {
        field("mlx5_err_cqe", f, v);
    }
    // The encoder's table and the decoder's constants.
    for &(f, v) in CQE64_OFFSETS {
        field("mlx5_cqe64", f, v);
    }
    for &(s, f, v) in layout::SEGMENT_LAYOUT {
        field(s, f, v);
    }
    let exprs: Vec<(String, String)> = want.iter().map(|(l, e, _)| (l.clone(), e.clone())).collect();
    let got = c_probe(&exprs);
    assert_eq!(got.len(), want.len());
    let mut wrong = Vec::new();
    for ((label, _, v), (_, c)) in want.iter().zip(&got) {
        if v != c {
            wrong.push(format!("{label}: Rust {v}, C {c}"));
        }
    }
    assert!(wrong.is_empty(), "layouts differ from mlx5dv.h:\n{}", wrong.join("\n"));
    // The decoder's constants are the ones the CQE encoder and the golden WQEs agree with.
    assert_eq!(layout::CTRL_DCI_STREAM_CHANNEL_ID, 9, "mlx5_wqe_ctrl_seg is packed");
}

// ---------------------------------------------------------------------------------------------
// Data path.
// ---------------------------------------------------------------------------------------------

const BOTH: [Transport; 2] = [Transport::Rc, Transport::Dc];

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed)).collect()
}

fn one(cq: &mut TCq) -> Cqe64 {
    let v = cq.drain();
    assert_eq!(v.len(), 1, "expected exactly one CQE, got {v:?}");
    v[0]
}

fn assert_req_ok(c: &Cqe64, l: &Link, index: u16, wqe_opcode: u8) {
    assert_eq!(c.opcode, op::REQ, "{c:?}");
    assert_eq!((c.qpn, c.uidx), (l.req.qpn, l.req.uidx), "{c:?}");
    assert_eq!((c.wqe_opcode, c.wqe_counter), (wqe_opcode, index), "{c:?}");
}

#[test]
fn send_scatters_over_several_receive_sges_into_an_rq_or_the_dcts_srq() {
    for t in BOTH {
        let mut l = Link::new(t);
        let data = pattern(100, 1);
        l.local.buf.write(0, &data[..60]);
        l.local.buf.write(1000, &data[60..]);
        let k = l.remote.key;
        let r = l.post_recv(&[
            (l.remote.at(0), 10, k),
            (l.remote.at(100), 30, k),
            (l.remote.at(200), 100, k),
        ]);
        let lk = l.local.key;
        let i = l.post(Wr::send(&[(l.local.at(0), 60, lk), (l.local.at(1000), 40, lk)]));
        l.run();
        let c = one(&mut l.scq);
        assert_req_ok(&c, &l, i, opcode::SEND);
        let c = one(&mut l.rcq);
        let (tqpn, tuidx) = l.target();
        assert_eq!(c.opcode, op::RESP_SEND, "{t:?}");
        assert_eq!((c.byte_cnt, c.src_qp, c.uidx, c.qpn), (100, l.req.qpn, tuidx, tqpn));
        assert_eq!(u32::from(c.wqe_counter), r);
        let m = &l.remote.buf;
        assert_eq!(m.read(0, 10), data[..10]);
        assert_eq!(m.read(100, 30), data[10..40]);
        assert_eq!(m.read(200, 60), data[40..]);
        assert!(m.read(10, 90).iter().all(|&b| b == 0), "gaps between SGEs untouched");
        assert!(
            m.read(260, 40).iter().all(|&b| b == 0),
            "tail of the last SGE untouched"
        );
    }
}

#[test]
fn send_with_immediate_delivers_the_immediate_in_the_responder_cqe() {
    for t in BOTH {
        let mut l = Link::new(t);
        l.local.buf.write(0, b"hello");
        let k = l.remote.key;
        let r0 = l.post_recv(&[(l.remote.at(0), 64, k)]);
        let r1 = l.post_recv(&[(l.remote.at(64), 64, k)]);
        let lk = l.local.key;
        let i0 = l.post(Wr {
            imm: 0x1234_5678,
            opcode: opcode::SEND_IMM,
            ..Wr::send(&[(l.local.at(0), 5, lk)])
        });
        let i1 = l.post(Wr {
            imm: 0xcafe_f00d,
            opcode: opcode::SEND_IMM,
            ..Wr::send(&[(l.local.at(0), 3, lk)])
        });
        l.run();
        let s = l.scq.drain();
        assert_eq!(s.len(), 2);
        assert_req_ok(&s[0], &l, i0, opcode::SEND_IMM);
        assert_req_ok(&s[1], &l, i1, opcode::SEND_IMM);
        let r = l.rcq.drain();
        assert_eq!(r.len(), 2, "{t:?}");
        assert_eq!(
            (r[0].opcode, r[0].imm, r[0].byte_cnt),
            (op::RESP_SEND_IMM, 0x1234_5678, 5)
        );
        assert_eq!(
            (r[1].opcode, r[1].imm, r[1].byte_cnt),
            (op::RESP_SEND_IMM, 0xcafe_f00d, 3)
        );
        // Receives are consumed in order (RQ: producer order; SRQ: the free list's order).
        assert_eq!((u32::from(r[0].wqe_counter), u32::from(r[1].wqe_counter)), (r0, r1));
        assert_eq!(l.remote.buf.read(0, 5), b"hello");
        assert_eq!(l.remote.buf.read(64, 3), b"hel");
    }
}

#[test]
fn rdma_write_lands_remotely_without_consuming_a_receive() {
    for t in BOTH {
        let mut l = Link::new(t);
        let data = pattern(300, 3);
        l.local.buf.write(0, &data);
        let (lk, rk) = (l.local.key, l.remote.key);
        let r = l.post_recv(&[(l.remote.at(4000), 8, rk)]);
        let i = l.post(Wr::write(
            &[(l.local.at(0), 100, lk), (l.local.at(100), 200, lk)],
            l.remote.at(1000),
            rk,
        ));
        l.run();
        assert_req_ok(&one(&mut l.scq), &l, i, opcode::RDMA_WRITE);
        assert!(
            l.rcq.drain().is_empty(),
            "a plain write completes nothing at the responder"
        );
        assert_eq!(l.remote.buf.read(1000, 300), data);
        assert!(l.remote.buf.read(0, 1000).iter().all(|&b| b == 0));
        // The receive is still there for the next send.
        l.post(Wr::send(&[(l.local.at(0), 8, lk)]));
        l.run();
        assert_eq!(u32::from(one(&mut l.rcq).wqe_counter), r);
    }
}

#[test]
fn rdma_write_with_immediate_consumes_a_receive_and_reports_the_write_length() {
    for t in BOTH {
        let mut l = Link::new(t);
        let data = pattern(64, 5);
        l.local.buf.write(0, &data);
        let (lk, rk) = (l.local.key, l.remote.key);
        let r = l.post_recv(&[(l.remote.at(4096), 128, rk)]);
        let i = l.post(Wr {
            opcode: opcode::RDMA_WRITE_IMM,
            imm: 0xabad_1dea,
            ..Wr::write(&[(l.local.at(0), 64, lk)], l.remote.at(8), rk)
        });
        l.run();
        assert_req_ok(&one(&mut l.scq), &l, i, opcode::RDMA_WRITE_IMM);
        let c = one(&mut l.rcq);
        let (tqpn, tuidx) = l.target();
        assert_eq!(c.opcode, op::RESP_WR_IMM, "{t:?}");
        assert_eq!(
            (c.byte_cnt, c.imm, c.src_qp, c.uidx, c.qpn),
            (64, 0xabad_1dea, l.req.qpn, tuidx, tqpn)
        );
        assert_eq!(u32::from(c.wqe_counter), r);
        assert_eq!(l.remote.buf.read(8, 64), data);
        assert!(
            l.remote.buf.read(4096, 128).iter().all(|&b| b == 0),
            "the receive buffer is not written"
        );
    }
}

#[test]
fn rdma_read_lands_locally_and_reports_its_length() {
    for t in BOTH {
        let mut l = Link::new(t);
        let data = pattern(200, 9);
        l.remote.buf.write(512, &data);
        let (lk, rk) = (l.local.key, l.remote.key);
        let i = l.post(Wr {
            opcode: opcode::RDMA_READ,
            ..Wr::write(
                &[(l.local.at(0), 50, lk), (l.local.at(100), 150, lk)],
                l.remote.at(512),
                rk,
            )
        });
        l.run();
        let c = one(&mut l.scq);
        assert_req_ok(&c, &l, i, opcode::RDMA_READ);
        assert_eq!(c.byte_cnt, 200);
        assert_eq!(l.local.buf.read(0, 50), data[..50]);
        assert_eq!(l.local.buf.read(100, 150), data[50..]);
        assert!(l.local.buf.read(50, 50).iter().all(|&b| b == 0));
        assert!(l.rcq.drain().is_empty());
    }
}

#[test]
fn compare_swap_and_fetch_add_work_on_host_endian_memory_and_return_the_old_value() {
    for t in BOTH {
        let mut l = Link::new(t);
        l.remote.buf.put_ne64(8, 5);
        let (lk, rk) = (l.local.key, l.remote.key);
        let atomic = |opc, operands, local: u64, remote: u64| Wr {
            raddr: Some((remote, rk)),
            atomic: Some(operands),
            sges: vec![(local, 8, lk)],
            ..Wr::new(opc)
        };
        let i0 = l.post(atomic(opcode::ATOMIC_FA, (3, 0), l.local.at(0), l.remote.at(8)));
        let i1 = l.post(atomic(opcode::ATOMIC_CS, (100, 8), l.local.at(8), l.remote.at(8)));
        let i2 = l.post(atomic(opcode::ATOMIC_CS, (1, 7), l.local.at(16), l.remote.at(8)));
        l.run();
        let c = l.scq.drain();
        assert_eq!(c.len(), 3, "{t:?}");
        assert_req_ok(&c[0], &l, i0, opcode::ATOMIC_FA);
        assert_req_ok(&c[1], &l, i1, opcode::ATOMIC_CS);
        assert_req_ok(&c[2], &l, i2, opcode::ATOMIC_CS);
        assert!(c.iter().all(|c| c.byte_cnt == 8));
        assert_eq!(l.local.buf.ne64(0), 5, "fetch-add returns the old value");
        assert_eq!(l.local.buf.ne64(8), 8, "compare-swap returns the old value (match)");
        assert_eq!(
            l.local.buf.ne64(16),
            100,
            "compare-swap returns the old value (mismatch)"
        );
        assert_eq!(l.remote.buf.ne64(8), 100, "the failed compare left the value");
    }
}

#[test]
fn inline_data_is_sent_and_written_from_the_wqe_itself() {
    for t in BOTH {
        let mut l = Link::new(t);
        let rk = l.remote.key;
        l.post_recv(&[(l.remote.at(0), 64, rk)]);
        l.post(Wr {
            inline: Some(b"inline send".to_vec()),
            ..Wr::new(opcode::SEND)
        });
        let long = pattern(60, 11);
        l.post(Wr::write_inline(&long, l.remote.at(100), rk));
        l.run();
        assert_eq!(l.scq.drain().len(), 2);
        let c = one(&mut l.rcq);
        assert_eq!((c.opcode, c.byte_cnt), (op::RESP_SEND, 11));
        assert_eq!(l.remote.buf.read(0, 11), b"inline send");
        assert_eq!(l.remote.buf.read(100, 60), long);
    }
}

#[test]
fn unsignaled_wqes_complete_silently_until_a_signaled_one_reports() {
    for t in BOTH {
        let mut l = Link::new(t);
        let rk = l.remote.key;
        l.post(Wr::write_inline(b"a", l.remote.at(0), rk).unsignaled());
        l.post(Wr::write_inline(b"b", l.remote.at(1), rk).unsignaled());
        l.run();
        assert!(l.scq.drain().is_empty(), "{t:?}: unsignaled WQEs produce no CQE");
        assert_eq!(l.remote.buf.read(0, 2), b"ab", "but they executed");
        let i = l.post(Wr::write_inline(b"c", l.remote.at(2), rk));
        l.run();
        let c = one(&mut l.scq);
        assert_req_ok(&c, &l, i, opcode::RDMA_WRITE);
    }
}

#[test]
fn sq_sig_all_signals_every_wqe() {
    for t in BOTH {
        let mut l = Link::with(
            t,
            &QpCfg {
                sq_sig_all: true,
                ..Default::default()
            },
        );
        let rk = l.remote.key;
        let posted: Vec<u16> = (0..3u8)
            .map(|n| l.post(Wr::write_inline(&[n], l.remote.at(n as usize), rk).unsignaled()))
            .collect();
        l.run();
        let c = l.scq.drain();
        assert_eq!(c.iter().map(|c| c.wqe_counter).collect::<Vec<_>>(), posted, "{t:?}");
        assert!(c.iter().all(|c| c.opcode == op::REQ));
    }
}

#[test]
fn wqes_posted_while_the_ring_wraps_execute_in_order() {
    for t in BOTH {
        let mut l = Link::with(
            t,
            &QpCfg {
                sq_cnt: 4,
                ..Default::default()
            },
        );
        let rk = l.remote.key;
        // Each DC write is 2 basic blocks (ctrl + AV + raddr + inline); 7 of them wrap a
        // 4-block ring several times, posted and completed in batches that fit.
        for n in 0..7u16 {
            let i = l.post(Wr::write_inline(&n.to_le_bytes(), l.remote.at(2 * n as usize), rk));
            l.run();
            assert_req_ok(&one(&mut l.scq), &l, i, opcode::RDMA_WRITE);
        }
        let got: Vec<u16> = (0..7)
            .map(|n| u16::from_le_bytes(l.remote.buf.read(2 * n, 2).try_into().unwrap()))
            .collect();
        assert_eq!(got, (0..7).collect::<Vec<_>>());
    }
}

// ---------------------------------------------------------------------------------------------
// Error paths.
// ---------------------------------------------------------------------------------------------

fn assert_flushed(c: &[Cqe64], qpn: u32, uidx: u32, indices: &[u16]) {
    assert_eq!(c.len(), indices.len(), "{c:?}");
    for (c, &i) in c.iter().zip(indices) {
        assert_eq!((c.opcode, c.syndrome), (op::REQ_ERR, syndrome::WR_FLUSH_ERR), "{c:?}");
        assert_eq!((c.qpn, c.uidx, c.wqe_counter), (qpn, uidx, i), "{c:?}");
    }
}

#[test]
fn rnr_retry_7_waits_until_a_receive_is_posted_then_succeeds() {
    for t in BOTH {
        let mut l = Link::with(
            t,
            &QpCfg {
                rnr_retry: 7,
                min_rnr_timer: 1,
                ..Default::default()
            },
        );
        l.local.buf.write(0, b"late");
        let lk = l.local.key;
        let i = l.post(Wr::send(&[(l.local.at(0), 4, lk)]));
        // Counted, not timed (a busy machine runs fewer passes in a given time): 20 RNR
        // NAKs, each re-arming the stall with a new deadline, none using up a retry.
        let h = l.req.h;
        let mut deadlines = Vec::new();
        l.bed.run_until(BUDGET, |bed| {
            if let Some((stall, at)) = bed.dev.qps[&h].stalls.get(&0) {
                assert_eq!(*stall, Stall::Rnr { left: 7 }, "{t:?}: rnr_retry 7 retries for ever");
                if deadlines.last() != Some(at) {
                    deadlines.push(*at);
                }
            }
            deadlines.len() >= 20
        });
        assert!(!l.scq.ready() && !l.rcq.ready(), "{t:?}: still waiting");
        assert_eq!(l.bed.state(l.req.h), QpState::Rts);
        let rk = l.remote.key;
        l.post_recv(&[(l.remote.at(0), 16, rk)]);
        let scq = &l.scq;
        l.bed.run_until(BUDGET, |_| scq.ready());
        assert_req_ok(&one(&mut l.scq), &l, i, opcode::SEND);
        assert_eq!(one(&mut l.rcq).byte_cnt, 4);
        assert_eq!(l.remote.buf.read(0, 4), b"late");
    }
}

#[test]
fn rnr_retry_n_completes_rnr_retry_exceeded_after_n_retries_then_the_qp_flushes() {
    for t in BOTH {
        for n in [0u8, 1, 3] {
            let timer = 14; // 1.92 ms unscaled
            let mut l = Link::with(
                t,
                &QpCfg {
                    rnr_retry: n,
                    min_rnr_timer: timer,
                    ..Default::default()
                },
            );
            let events = l.bed.async_file();
            let lk = l.local.key;
            let start = Instant::now();
            let i0 = l.post(Wr::send(&[(l.local.at(0), 4, lk)]));
            let i1 = l.post(Wr::send(&[(l.local.at(0), 4, lk)]).unsignaled());
            // Watch the retries count down: one retry per expiry of the RNR timer.
            let mut seen = Vec::new();
            let h = l.req.h;
            while !l.scq.ready() {
                soft_mlx5::engine::step(&mut l.bed.dev);
                if let Some((Stall::Rnr { left }, _)) = l.bed.dev.qps[&h].stalls.get(&0) {
                    if seen.last() != Some(left) {
                        seen.push(*left);
                    }
                }
                assert!(start.elapsed() < BUDGET);
            }
            let elapsed = start.elapsed();
            l.run();
            assert_eq!(seen, (0..n).rev().collect::<Vec<_>>(), "{t:?} rnr_retry {n}");
            assert!(elapsed >= rnr_delay(timer) * u32::from(n), "{elapsed:?}");
            let c = l.scq.drain();
            assert_eq!((c[0].opcode, c[0].syndrome), (op::REQ_ERR, syndrome::RNR_RETRY_EXC_ERR));
            assert_eq!((c[0].wqe_counter, c[0].wqe_opcode), (i0, opcode::SEND));
            assert_flushed(&c[1..], l.req.qpn, l.req.uidx, &[i1]);
            assert_eq!(l.bed.state(h), QpState::Err);
            assert_eq!(l.bed.events(&events), [], "the error CQE reports it: no async event");
            // Later WQEs flush, each once.
            let i2 = l.post(Wr::send(&[(l.local.at(0), 4, lk)]).unsignaled());
            l.run();
            assert_flushed(&l.scq.drain(), l.req.qpn, l.req.uidx, &[i2]);
            // RNR is not a responder error: the target stays usable.
            assert!(l.rcq.drain().is_empty());
            if let Some(b) = &l.resp {
                assert_eq!(l.bed.state(b.h), QpState::Rts);
            }
        }
    }
}

/// The ways an R_Key check fails at the responder.
#[derive(Clone, Copy, Debug)]
enum BadRemote {
    /// No MR has the key.
    UnknownKey,
    /// The range runs past the region's end.
    OutsideTheRegion,
    /// The region was registered without remote write.
    WithoutTheRight,
    /// The region belongs to another PD.
    OfAnotherPd,
}

/// (raddr, rkey) of a write that fails the responder's R_Key check in `how`.
fn bad_remote(l: &mut Link, how: BadRemote) -> (u64, u32, Option<TMr>) {
    match how {
        BadRemote::UnknownKey => (l.remote.at(0), 0x00de_ad42, None),
        BadRemote::OutsideTheRegion => (l.remote.at(8192 - 4), l.remote.key, None),
        BadRemote::WithoutTheRight => {
            let pd = l.pd;
            let mr = l.bed.mr(pd, 4096, LOCAL_WRITE | REMOTE_READ);
            (mr.at(0), mr.key, Some(mr))
        }
        BadRemote::OfAnotherPd => {
            let pd2 = l.bed.pd();
            let mr = l.bed.mr(pd2, 4096, ALL_ACCESS);
            (mr.at(0), mr.key, Some(mr))
        }
    }
}

#[test]
fn remote_access_errors_complete_remote_access_err_and_flush_everything_behind_exactly_once() {
    for t in BOTH {
        for how in [
            BadRemote::UnknownKey,
            BadRemote::OutsideTheRegion,
            BadRemote::WithoutTheRight,
            BadRemote::OfAnotherPd,
        ] {
            let mut l = Link::new(t);
            let events = l.bed.async_file();
            let (raddr, rkey, target_mr) = bad_remote(&mut l, how);
            l.local.buf.write(0, &pattern(16, 1));
            let (lk, rk) = (l.local.key, l.remote.key);
            if let Some(b) = &mut l.resp {
                b.post_recv(&[(l.remote.at(4096), 64, rk)]);
            }
            let i0 = l.post(Wr::write(&[(l.local.at(0), 8, lk)], raddr, rkey));
            let i1 = l.post(Wr::write_inline(b"behind", l.remote.at(0), rk).unsignaled());
            let i2 = l.post(Wr::send(&[(l.local.at(0), 8, lk)]));
            l.run();
            let c = l.scq.drain();
            let ctx = format!("{t:?} {how:?}: {c:?}");
            assert_eq!(c.len(), 3, "{ctx}");
            assert_eq!(
                (c[0].opcode, c[0].syndrome),
                (op::REQ_ERR, syndrome::REMOTE_ACCESS_ERR),
                "{ctx}"
            );
            assert_eq!((c[0].wqe_counter, c[0].wqe_opcode), (i0, opcode::RDMA_WRITE));
            assert_flushed(&c[1..], l.req.qpn, l.req.uidx, &[i1, i2]);
            assert_eq!(l.bed.state(l.req.h), QpState::Err, "{ctx}");
            assert!(
                l.remote.buf.read(0, 8192).iter().all(|&b| b == 0),
                "{ctx}: nothing written"
            );
            if let Some(mr) = &target_mr {
                assert!(mr.buf.read(0, 16).iter().all(|&b| b == 0), "{ctx}");
            }
            // Nothing more, however long the device runs.
            l.run();
            assert!(l.scq.drain().is_empty(), "{ctx}");
            let events = l.bed.events(&events);
            match (&l.resp, &l.dct) {
                (Some(b), _) => {
                    // RC: the responder QP goes to ERR too and flushes its receive queue.
                    assert_eq!(l.bed.state(b.h), QpState::Err, "{ctx}");
                    let r = one(&mut l.rcq);
                    assert_eq!(
                        (r.opcode, r.syndrome, r.qpn, r.wqe_counter),
                        (op::RESP_ERR, 5, b.qpn, 0)
                    );
                    // The responder reports through the access violation event (no CQE there);
                    // the requester through its error CQE only.
                    assert_eq!(events, [(b.user_handle, event::QP_ACCESS_ERR)], "{ctx}");
                }
                (None, Some(d)) => {
                    // DC: the DCT keeps no state per initiator and stays ready for others.
                    assert_eq!(l.bed.state(d.h), QpState::Rtr, "{ctx}");
                    assert!(l.rcq.drain().is_empty());
                    assert_eq!(events, [], "{ctx}: the error CQE reports it");
                    let cfg = QpCfg::default();
                    let pd = l.pd;
                    let mut other = l.bed.dci(pd, &l.scq, &cfg);
                    let av = l.av();
                    other.post(&Wr {
                        av,
                        ..Wr::write_inline(b"other", l.remote.at(0), rk)
                    });
                    l.post_recv(&[(l.remote.at(64), 16, rk)]);
                    other.post(&Wr {
                        av,
                        inline: Some(b"hi".to_vec()),
                        ..Wr::new(opcode::SEND)
                    });
                    l.run();
                    let c = l.scq.drain();
                    assert_eq!(c.len(), 2, "{ctx}: {c:?}");
                    assert!(c.iter().all(|c| c.opcode == op::REQ && c.qpn == other.qpn));
                    assert_eq!(l.remote.buf.read(0, 5), b"other");
                    assert_eq!(one(&mut l.rcq).byte_cnt, 2);
                    // Its rings die with it: out of the device first (DESTROY_QP).
                    l.bed.destroy_qp(other.h);
                }
                _ => unreachable!(),
            }
            // A WQE posted later flushes once.
            let i3 = l.post(Wr::write_inline(b"x", l.remote.at(0), rk));
            l.run();
            assert_flushed(&l.scq.drain(), l.req.qpn, l.req.uidx, &[i3]);
        }
    }
}

#[test]
fn an_unreadable_wqe_completes_local_qp_operation_error_once_and_later_ones_flush() {
    for t in BOTH {
        let mut l = Link::new(t);
        let events = l.bed.async_file();
        let raw = |index: u16, opc: u8, qpn: u32, ds: u8| {
            let mut b = [0u8; 64];
            b[0..4].copy_from_slice(&((u32::from(index) << 8) | u32::from(opc)).to_be_bytes());
            b[4..8].copy_from_slice(&((qpn << 8) | u32::from(ds)).to_be_bytes());
            b[11] = wqe::CTRL_CQ_UPDATE;
            b
        };
        let qpn = l.req.qpn;
        // ds = 0: no WQE the HCA can size.
        let i0 = l.req.post_raw(&raw(l.req.sq_pi as u16, opcode::RDMA_WRITE, qpn, 0));
        l.run();
        let c = one(&mut l.scq);
        assert_eq!(
            (c.opcode, c.syndrome, c.wqe_counter),
            (op::REQ_ERR, syndrome::LOCAL_QP_OP_ERR, i0)
        );
        assert_eq!(l.bed.state(l.req.h), QpState::Err, "{t:?}");
        // In ERR nothing is executed or checked any more: malformed or not, WQEs flush.
        let i1 = l.req.post_raw(&raw(l.req.sq_pi as u16, 0x3f, qpn, 0));
        let rk = l.remote.key;
        let i2 = l.post(Wr::write_inline(b"x", l.remote.at(0), rk));
        l.run();
        assert_flushed(&l.scq.drain(), qpn, l.req.uidx, &[i1, i2]);
        assert_eq!(l.bed.events(&events), [], "the error CQE reports it: no QP fatal event");
        // An opcode the device does not execute is a local QP operation error as well.
        let mut l = Link::new(t);
        let qpn = l.req.qpn;
        let i = l.req.post_raw(&raw(0, 0x3f, qpn, 1));
        l.run();
        let c = one(&mut l.scq);
        assert_eq!((c.syndrome, c.wqe_counter), (syndrome::LOCAL_QP_OP_ERR, i));
    }
}

#[test]
fn a_bad_lkey_completes_local_protection_error_without_sending_anything() {
    for t in BOTH {
        for case in 0..3 {
            let mut l = Link::new(t);
            let rk = l.remote.key;
            let pd2 = l.bed.pd();
            let other_pd = l.bed.mr(pd2, 64, ALL_ACCESS);
            let read_only = {
                let pd = l.pd;
                l.bed.mr(pd, 64, REMOTE_READ)
            };
            let wr = match case {
                // An lkey no MR has.
                0 => Wr::write(&[(l.local.at(0), 8, 0x00be_ef42)], l.remote.at(0), rk),
                // An MR of another PD.
                1 => Wr::write(&[(other_pd.at(0), 8, other_pd.key)], l.remote.at(0), rk),
                // A read into a region without local write.
                _ => Wr {
                    opcode: opcode::RDMA_READ,
                    ..Wr::write(&[(read_only.at(0), 8, read_only.key)], l.remote.at(0), rk)
                },
            };
            l.remote.buf.write(0, b"original");
            let i = l.post(wr);
            l.run();
            let c = one(&mut l.scq);
            assert_eq!(
                (c.opcode, c.syndrome, c.wqe_counter),
                (op::REQ_ERR, syndrome::LOCAL_PROT_ERR, i)
            );
            assert_eq!(l.bed.state(l.req.h), QpState::Err, "{t:?} case {case}");
            assert_eq!(l.remote.buf.read(0, 8), b"original");
            assert!(read_only.buf.read(0, 8).iter().all(|&b| b == 0));
            if let Some(b) = &l.resp {
                assert_eq!(l.bed.state(b.h), QpState::Rts, "nothing reached the responder");
            }
        }
    }
}

#[test]
fn wrong_dc_key_is_dropped_silently_and_the_dci_completes_with_retry_exceeded() {
    let (timeout, retry_cnt) = (16u8, 2u8);
    let mut l = Link::with(
        Transport::Dc,
        &QpCfg {
            timeout,
            retry_cnt,
            ..Default::default()
        },
    );
    let rk = l.remote.key;
    l.post_recv(&[(l.remote.at(4096), 64, rk)]);
    let dctn = l.dct.as_ref().unwrap().dctn;
    let wrong = Some(AvSpec {
        key: DC_KEY + 1,
        dqpn: dctn,
        rlid: 1,
    });
    let start = Instant::now();
    let i0 = l.req.post(&Wr {
        av: wrong,
        ..Wr::write_inline(b"intruder", l.remote.at(0), rk)
    });
    let i1 = l.req.post(&Wr {
        av: wrong,
        inline: Some(b"intruder".to_vec()),
        ..Wr::new(opcode::SEND)
    });
    let scq = &l.scq;
    l.bed.run_until(BUDGET, |_| scq.ready());
    let elapsed = start.elapsed();
    l.run();
    // The first transmission and each retry wait one local ACK timeout.
    let bound = ack_timeout(timeout).unwrap() * (u32::from(retry_cnt) + 1);
    assert!(elapsed >= bound, "completed after {elapsed:?}, before {bound:?}");
    let c = l.scq.drain();
    assert_eq!(
        (c[0].opcode, c[0].syndrome, c[0].wqe_counter),
        (op::REQ_ERR, syndrome::TRANSPORT_RETRY_EXC_ERR, i0)
    );
    assert_flushed(&c[1..], l.req.qpn, l.req.uidx, &[i1]);
    assert_eq!(l.bed.state(l.req.h), QpState::Err);
    // Silently: the DCT wrote nothing, consumed nothing, completed nothing, and is still up.
    assert!(l.remote.buf.read(0, 8192).iter().all(|&b| b == 0));
    assert!(l.rcq.drain().is_empty());
    assert_eq!(l.bed.state(l.dct.as_ref().unwrap().h), QpState::Rtr);
    let pd = l.pd;
    let mut good = l.bed.dci(pd, &l.scq, &QpCfg::default());
    let av = l.av();
    good.post(&Wr {
        av,
        inline: Some(b"friend".to_vec()),
        ..Wr::new(opcode::SEND)
    });
    l.run();
    assert_eq!(one(&mut l.scq).opcode, op::REQ);
    let r = one(&mut l.rcq);
    assert_eq!(
        (r.wqe_counter, r.src_qp),
        (0, good.qpn),
        "the receive the intruder did not take"
    );
}

#[test]
fn a_destroyed_or_absent_dct_leaves_the_dci_to_retry_exceeded() {
    for destroyed in [true, false] {
        let (timeout, retry_cnt) = (12u8, 1u8);
        let mut l = Link::with(
            Transport::Dc,
            &QpCfg {
                timeout,
                retry_cnt,
                ..Default::default()
            },
        );
        let rk = l.remote.key;
        let dct = l.dct.take().unwrap();
        let dqpn = if destroyed {
            l.bed.destroy_qp(dct.h);
            dct.dctn
        } else {
            0xab_cdef
        };
        let start = Instant::now();
        let i = l.req.post(&Wr {
            av: Some(AvSpec {
                key: DC_KEY,
                dqpn,
                rlid: 1,
            }),
            ..Wr::write_inline(b"nobody", l.remote.at(0), rk)
        });
        let scq = &l.scq;
        l.bed.run_until(BUDGET, |_| scq.ready());
        assert!(start.elapsed() >= ack_timeout(timeout).unwrap() * (u32::from(retry_cnt) + 1));
        let c = one(&mut l.scq);
        assert_eq!(
            (c.opcode, c.syndrome, c.wqe_counter),
            (op::REQ_ERR, syndrome::TRANSPORT_RETRY_EXC_ERR, i)
        );
        assert_eq!(l.bed.state(l.req.h), QpState::Err);
        assert!(l.remote.buf.read(0, 6).iter().all(|&b| b == 0));
    }
}

#[test]
fn a_dci_stream_error_errors_only_that_stream_until_2_pow_log_num_errored_streams_have_failed() {
    // 4 concurrent streams, 2^1 = 2 errored streams move the DCI to ERR.
    let mut l = Link::with(
        Transport::Dc,
        &QpCfg {
            dci_streams: Some((2, 1)),
            ..Default::default()
        },
    );
    let events = l.bed.async_file();
    let (lk, rk) = (l.local.key, l.remote.key);
    let h = l.req.h;
    let bad = |l: &Link, s: u16| Wr::write(&[(l.local.at(0), 8, lk)], l.remote.at(0), 0x00de_ad42).on_stream(s);
    let good = |l: &Link, s: u16, at: usize| Wr::write_inline(&[s as u8 + 1], l.remote.at(at), rk).on_stream(s);

    // An error on stream 1: that WQE fails, the DCI stays in RTS.
    let i = l.post(bad(&l, 1));
    l.run();
    let c = one(&mut l.scq);
    assert_eq!(
        (c.opcode, c.syndrome, c.wqe_counter),
        (op::REQ_ERR, syndrome::REMOTE_ACCESS_ERR, i)
    );
    assert_eq!(l.bed.state(h), QpState::Rts);
    // Other streams carry on; stream 1 flushes (even a WQE that would fail is not executed).
    let i_ok = l.post(good(&l, 2, 10));
    let i_fl = l.post(good(&l, 1, 11));
    let i_fl2 = l.post(bad(&l, 1));
    let i_ok2 = l.post(good(&l, 0, 12));
    l.run();
    let c = l.scq.drain();
    assert_eq!(c.len(), 4, "{c:?}");
    assert_req_ok(&c[0], &l, i_ok, opcode::RDMA_WRITE);
    assert_flushed(&c[1..3], l.req.qpn, l.req.uidx, &[i_fl, i_fl2]);
    assert_req_ok(&c[3], &l, i_ok2, opcode::RDMA_WRITE);
    assert_eq!(l.remote.buf.read(10, 3), [3, 0, 1]);
    assert_eq!(
        l.bed.state(h),
        QpState::Rts,
        "a flushed WQE of an errored stream is no new error"
    );
    assert!(l.bed.events(&events).is_empty());

    // The stream reset (RTS2RTS with dci_stream_channel_id, ioctl.rs) clears the entry.
    l.bed.dev.qps.get_mut(&h).unwrap().errored_streams.retain(|&s| s != 1);
    let i = l.post(good(&l, 1, 20));
    l.run();
    assert_req_ok(&one(&mut l.scq), &l, i, opcode::RDMA_WRITE);
    assert_eq!(l.remote.buf.read(20, 1), [2]);

    // Errors on two distinct streams: the second moves the DCI to ERR.
    let i2 = l.post(bad(&l, 2));
    l.run();
    assert_eq!(one(&mut l.scq).wqe_counter, i2);
    assert_eq!(l.bed.state(h), QpState::Rts, "one errored stream of the two allowed");
    let i3 = l.post(bad(&l, 3));
    let i4 = l.post(good(&l, 0, 30));
    l.run();
    let c = l.scq.drain();
    assert_eq!((c[0].syndrome, c[0].wqe_counter), (syndrome::REMOTE_ACCESS_ERR, i3));
    assert_flushed(&c[1..], l.req.qpn, l.req.uidx, &[i4]);
    assert_eq!(l.bed.state(h), QpState::Err);
    assert_eq!(l.bed.events(&events), [], "every error was reported in a CQE");
    // i4 went on the wire with i3 (another stream) and was executed at the DCT; its
    // acknowledgement came back to a DCI in ERR, so it completes with a flush all the same.
    assert_eq!(l.remote.buf.read(30, 1), [1]);
}

#[test]
fn a_qp_in_err_flushes_its_posted_receives_and_send_wqes_each_once() {
    let mut l = Link::new(Transport::Rc);
    let rk = l.remote.key;
    let b = l.resp.take().unwrap();
    let mut b = b;
    let r: Vec<u32> = (0..3).map(|n| b.post_recv(&[(l.remote.at(64 * n), 64, rk)])).collect();
    l.bed.modify_to_err(b.h);
    l.run();
    let c = l.rcq.drain();
    assert_eq!(c.len(), 3, "{c:?}");
    for (c, &r) in c.iter().zip(&r) {
        assert_eq!((c.opcode, c.syndrome), (op::RESP_ERR, syndrome::WR_FLUSH_ERR));
        assert_eq!((c.qpn, c.uidx, u32::from(c.wqe_counter)), (b.qpn, b.uidx, r));
    }
    let late = b.post_recv(&[(l.remote.at(0), 64, rk)]);
    l.run();
    let c = one(&mut l.rcq);
    assert_eq!((c.syndrome, u32::from(c.wqe_counter)), (syndrome::WR_FLUSH_ERR, late));
    // Its send queue flushes too, signaled or not; the peer sees nothing.
    let i0 = b.post(&Wr::write_inline(b"x", l.remote.at(0), rk).unsignaled());
    let i1 = b.post(&Wr::write_inline(b"y", l.remote.at(1), rk));
    l.run();
    assert_flushed(&l.rcq.drain(), b.qpn, b.uidx, &[i0, i1]);
    l.run();
    assert!(l.rcq.drain().is_empty() && l.scq.drain().is_empty());
    assert!(l.remote.buf.read(0, 2).iter().all(|&b| b == 0));
}

#[test]
fn a_send_longer_than_the_receive_is_a_local_length_error_there_and_a_remote_invalid_request_here() {
    for t in BOTH {
        let mut l = Link::new(t);
        let events = l.bed.async_file();
        let (lk, rk) = (l.local.key, l.remote.key);
        let r = l.post_recv(&[(l.remote.at(0), 8, rk), (l.remote.at(100), 8, rk)]);
        let i = l.post(Wr::send(&[(l.local.at(0), 17, lk)]));
        l.run();
        let c = one(&mut l.scq);
        assert_eq!(
            (c.opcode, c.syndrome, c.wqe_counter),
            (op::REQ_ERR, syndrome::REMOTE_INVAL_REQ_ERR, i)
        );
        let c = one(&mut l.rcq);
        assert_eq!(
            (c.opcode, c.syndrome, u32::from(c.wqe_counter)),
            (op::RESP_ERR, syndrome::LOCAL_LENGTH_ERR, r)
        );
        assert_eq!(l.bed.state(l.req.h), QpState::Err);
        match (&l.resp, &l.dct) {
            (Some(b), _) => assert_eq!(l.bed.state(b.h), QpState::Err, "the RC responder enters ERR"),
            (None, Some(d)) => assert_eq!(l.bed.state(d.h), QpState::Rtr, "a DCT stays up"),
            _ => unreachable!(),
        }
        // Both sides' errors were reported in CQEs: no affiliated event.
        assert_eq!(l.bed.events(&events), [], "{t:?}");
    }
}

#[test]
fn an_error_that_no_cqe_can_report_raises_the_qp_fatal_event() {
    let mut bed = Bed::new();
    let events = bed.async_file();
    let pd = bed.pd();
    let full = bed.cq(1); // 2 entries
    let other = bed.cq(15);
    let remote = bed.mr(pd, 64, ALL_ACCESS);
    let (mut a, b) = bed.rc_pair(pd, &full, &other, &QpCfg::default());
    a.post(&Wr::write_inline(b"1", remote.at(0), remote.key));
    a.post(&Wr::write_inline(b"2", remote.at(1), remote.key));
    bed.run();
    assert!(bed.events(&events).is_empty());
    // The CQ is full (nothing polled): the error CQE of the next WQE is lost with the CQ.
    a.post(&Wr::write_inline(b"3", remote.at(2), 0x00de_ad42));
    bed.run();
    assert_eq!(
        bed.events(&events),
        [
            (b.user_handle, event::QP_ACCESS_ERR),
            (full.user_handle, event::CQ_ERR),
            (a.user_handle, event::QP_FATAL)
        ]
    );
    assert_eq!(bed.state(a.h), QpState::Err);
}

#[test]
fn a_cq_overrun_raises_the_cq_error_event_loses_the_cqe_and_takes_its_qps_to_err() {
    let mut bed = Bed::new();
    let events = bed.async_file();
    let pd = bed.pd();
    let small = bed.cq(3); // 4 entries
    let other = bed.cq(15);
    let remote = bed.mr(pd, 64, ALL_ACCESS);
    let (mut a, _b) = bed.rc_pair(pd, &small, &other, &QpCfg::default());
    for n in 0..6u8 {
        a.post(&Wr::write_inline(&[n + 1], remote.at(n as usize), remote.key));
    }
    bed.run();
    // All six were on the wire together and executed at the target; WQE 4's CQE was lost
    // and the overrun took the QP to ERR (IBA 11.6.3.3), so WQE 5, executed but not yet
    // acknowledged, completes with a flush.
    assert_eq!(remote.buf.read(0, 6), [1, 2, 3, 4, 5, 6]);
    assert_eq!(
        bed.events(&events),
        [(small.user_handle, event::CQ_ERR), (a.user_handle, event::QP_FATAL)],
        "each raised once"
    );
    assert_eq!(bed.dev.qps[&a.h].state, QpState::Err);
    assert!(bed.dev.cqs[&small.h].overrun);
    // The four entries hold WQEs 0..3, none overwritten by 4 or 5.
    let raw: Vec<u16> = (0..4).map(|i| Cqe64::decode(&small.raw(i)).wqe_counter).collect();
    assert_eq!(raw, [0, 1, 2, 3]);
    let mut small = small;
    let c = small.drain();
    assert_eq!(c.iter().map(|c| c.wqe_counter).collect::<Vec<_>>(), [0, 1, 2, 3]);
}

#[test]
fn cqes_of_the_second_pass_around_the_ring_carry_the_owner_bit_set() {
    let mut bed = Bed::new();
    let pd = bed.pd();
    let mut cq = bed.cq(3); // 4 entries
    let other = bed.cq(15);
    let remote = bed.mr(pd, 64, ALL_ACCESS);
    let (mut a, _b) = bed.rc_pair(pd, &cq, &other, &QpCfg::default());
    let mut got = Vec::new();
    for n in 0..6u8 {
        a.post(&Wr::write_inline(&[n], remote.at(n as usize), remote.key));
        bed.run();
        let slot = n as u32 & 3;
        let owner = cq.raw(slot)[63] & 1;
        assert_eq!(owner, u8::from(n >= 4), "CQE {n}");
        got.push(cq.poll().expect("a CQE").wqe_counter);
    }
    assert_eq!(got, [0, 1, 2, 3, 4, 5]);
}

#[test]
fn a_cq_resize_ends_the_old_ring_with_a_resize_cqe_and_goes_on_in_the_new_one() {
    // MODIFY_CQ (resize) on the HCA, with libmlx5's mlx5_cq_resize_copy_cqes on the other side:
    // what was waiting in the old ring and what comes after arrive in order, once each.
    let mut bed = Bed::new();
    let pd = bed.pd();
    let mut cq = bed.cq(3); // 4 entries
    let other = bed.cq(15);
    let remote = bed.mr(pd, 64, ALL_ACCESS);
    let (mut a, _b) = bed.rc_pair(pd, &cq, &other, &QpCfg::default());
    for n in 0..3u8 {
        a.post(&Wr::write_inline(&[n], remote.at(n as usize), remote.key));
    }
    bed.run();
    assert_eq!(cq.poll().map(|c| c.wqe_counter), Some(0));
    // Two CQEs wait (indices 1 and 2): the resize CQE takes index 3 of the old ring.
    cq.resize(&mut bed.dev, 8).expect("two outstanding CQEs fit in 8");
    // Five more: with the two copied ones and the resize CQE the doorbell record still counts
    // (the library updates it at its next poll), the new ring is then full, not overrun.
    for n in 3..8u8 {
        a.post(&Wr::write_inline(&[n], remote.at(n as usize), remote.key));
    }
    bed.run();
    let got: Vec<u16> = cq.drain().iter().map(|c| c.wqe_counter).collect();
    assert_eq!(got, [1, 2, 3, 4, 5, 6, 7]);
    assert!(!bed.dev.cqs[&cq.h].overrun);
    assert_eq!(bed.dev.cqs[&cq.h].ncqe, 8);
}

#[test]
fn a_cq_resize_smaller_than_its_outstanding_cqes_fails_and_changes_nothing() {
    // MLX5_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR (mlx5_ib_resize_cq returns it as EINVAL).
    let mut bed = Bed::new();
    let pd = bed.pd();
    let mut cq = bed.cq(7); // 8 entries
    let other = bed.cq(15);
    let remote = bed.mr(pd, 64, ALL_ACCESS);
    let (mut a, _b) = bed.rc_pair(pd, &cq, &other, &QpCfg::default());
    for n in 0..6u8 {
        a.post(&Wr::write_inline(&[n], remote.at(n as usize), remote.key));
    }
    bed.run();
    assert_eq!(
        cq.resize(&mut bed.dev, 2),
        Err(soft_mlx5::kernel::prm::MLX5_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR)
    );
    assert_eq!((bed.dev.cqs[&cq.h].ncqe, bed.dev.cqs[&cq.h].pi), (8, 6));
    let got: Vec<u16> = cq.drain().iter().map(|c| c.wqe_counter).collect();
    assert_eq!(got, [0, 1, 2, 3, 4, 5]);
}

#[test]
fn a_cq_of_128_byte_cqes_carries_each_cqe64_in_the_second_half_of_its_entry() {
    // mlx5_ib create_cq_user accepts cqe_size 128; libmlx5 then reads the mlx5_cqe64 at
    // cqe + 64 and the owner bit in byte 127.
    let mut bed = Bed::new();
    let pd = bed.pd();
    let small = bed.cq(3);
    let other = bed.cq(15);
    let ring = Buf::new(4 * 128);
    ring.fill(0xab);
    {
        let c = bed.dev.cqs.get_mut(&small.h).unwrap();
        c.cqe_size = 128;
        c.buf = ring.addr();
    }
    let remote = bed.mr(pd, 64, ALL_ACCESS);
    let (mut a, _b) = bed.rc_pair(pd, &small, &other, &QpCfg::default());
    let mut idx = Vec::new();
    for n in 0..5u8 {
        idx.push(a.post(&Wr::write_inline(&[n], remote.at(n as usize), remote.key)));
        bed.run();
        // The library's consumer index moves on (doorbell record), so five fit in four.
        small.db.put_be32(0, u32::from(n) + 1);
    }
    // Entry 0 now holds the fifth (second pass: owner bit set).
    for (n, &i) in idx.iter().enumerate().skip(1) {
        let entry = (n % 4) * 128;
        let c = Cqe64::decode(&ring.read(entry + 64, 64));
        assert_eq!((c.opcode, c.wqe_counter, c.qpn), (op::REQ, i, a.qpn), "CQE {n}");
        assert_eq!(
            ring.read(entry + 127, 1)[0] & 1,
            u8::from(n >= 4),
            "owner bit of CQE {n}"
        );
        assert!(ring.read(entry, 64).iter().all(|&b| b == 0xab), "first half untouched");
    }
}

#[test]
fn a_uc_qp_completes_on_the_wire_and_a_send_without_a_receive_is_dropped_not_retried() {
    // IBA 9.8.2: unreliable connected, no acknowledgements, no RNR NAK; writes land, a send
    // finding no receive is lost, and the requester completes both once sent.
    let mut l = Link::new(Transport::Rc);
    let b = l.resp.as_ref().unwrap().h;
    for h in [l.req.h, b] {
        l.bed.dev.qps.get_mut(&h).unwrap().kind = soft_mlx5::device::objects::QpKind::Uc;
    }
    let (lk, rk) = (l.local.key, l.remote.key);
    l.local.buf.write(0, b"uc!!");
    let i_w = l.post(Wr::write_inline(b"wire", l.remote.at(0), rk));
    let i_s = l.post(Wr::send(&[(l.local.at(0), 4, lk)]));
    l.run();
    let c = l.scq.drain();
    assert_eq!(c.len(), 2, "{c:?}");
    assert_req_ok(&c[0], &l, i_w, opcode::RDMA_WRITE);
    assert_req_ok(&c[1], &l, i_s, opcode::SEND);
    assert_eq!(l.remote.buf.read(0, 4), b"wire");
    assert!(l.rcq.drain().is_empty(), "nothing received");
    // A receive posted now takes the next send, not the lost one.
    l.post_recv(&[(l.remote.at(100), 16, rk)]);
    l.post(Wr::send(&[(l.local.at(0), 4, lk)]));
    l.run();
    assert_eq!(one(&mut l.rcq).byte_cnt, 4);
    assert_eq!(l.remote.buf.read(100, 4), b"uc!!");
    assert_eq!(l.bed.state(l.req.h), QpState::Rts);
}

/// An indirect mkey in KSM mode (CREATE_MKEY through DEVX; UCX's atomic keys): an access
/// through it is translated entity by entity to the direct key and address each entity names
/// (PRM "Indirect Memory Key (KSM)"), and one outside the range it covers is a remote access
/// error.
#[test]
fn an_rdma_write_through_a_ksm_key_lands_where_its_entity_points_and_outside_it_is_an_access_error() {
    use soft_mlx5::device::objects::Ksm;
    let mut l = Link::new(Transport::Dc);
    // A KSM key at an offset of 0x1c8 from the region, one 4 KiB entity pointing back to it.
    let start = l.remote.at(0) + 0x1c8;
    let ksm_key = 0x00ab_cd11;
    l.bed.dev.ksms.insert(
        ksm_key,
        Ksm {
            pd: l.pd,
            start,
            len: 256,
            log_entity: 12,
            access: 2 | 4 | 8,
            entries: vec![(l.remote.key, l.remote.at(0))],
        },
    );
    let mut w = Wr::write_inline(&[5; 8], start + 16, ksm_key);
    w.av = l.av();
    let i = l.post(w);
    l.run();
    let c = l.scq.drain();
    assert_eq!((c[0].opcode, c[0].wqe_counter), (op::REQ, i), "{c:?}");
    assert_eq!(l.remote.buf.read(16, 8), [5; 8], "entity 0 starts at the region");
    let mut w = Wr::write_inline(&[6; 8], start + 256, ksm_key);
    w.av = l.av();
    let i = l.post(w);
    l.run();
    let c = l.scq.drain();
    assert_eq!(
        (c[0].opcode, c[0].syndrome, c[0].wqe_counter),
        (op::REQ_ERR, syndrome::REMOTE_ACCESS_ERR, i),
        "past the key's range: {c:?}"
    );
}

/// A zero-length RDMA WRITE names no memory: the responder checks no R_Key or address for it
/// (IBA C9-88), so one with key 0 and address 0 (UCX's rc_verbs flush) completes.
#[test]
fn a_zero_length_rdma_write_completes_whatever_its_rkey_and_address() {
    let mut l = Link::new(Transport::Rc);
    let i = l.post(Wr::write(&[], 0, 0));
    l.run();
    let c = l.scq.drain();
    assert_eq!((c[0].opcode, c[0].syndrome, c[0].wqe_counter), (op::REQ, 0, i), "{c:?}");
    let b = l.resp.as_ref().map(|b| b.h).unwrap();
    assert_eq!(
        l.bed.state(b),
        QpState::Rts,
        "the responder did not see an invalid request"
    );
}

/// The three message-carrying requests of `len` bytes, gathered from or scattered to two SGEs
/// of the local buffer (the limit is on the message, not on one SGE): a send, an RDMA write
/// and an RDMA read to or from the start of the remote buffer.
fn messages_of(l: &Link, len: u32) -> [(u8, Wr); 3] {
    let (lk, rk) = (l.local.key, l.remote.key);
    let half = len / 2;
    let sges = [(l.local.at(0), half, lk), (l.local.at(half as usize), len - half, lk)];
    [
        (opcode::SEND, Wr::send(&sges)),
        (opcode::RDMA_WRITE, Wr::write(&sges, l.remote.at(0), rk)),
        (
            opcode::RDMA_READ,
            Wr {
                opcode: opcode::RDMA_READ,
                ..Wr::write(&sges, l.remote.at(0), rk)
            },
        ),
    ]
}

/// A message longer than the port's max_msg_sz (1 << log_max_msg, here lowered to 4 KiB as
/// SOFT_MLX5_LOG_MAX_MSG=12 does) is never sent: the requester completes it with
/// MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR (IBV_WC_LOC_LEN_ERR) and the QP enters ERR, for a send,
/// an RDMA write and an RDMA read alike, on RC and DC; one of exactly max_msg_sz completes.
#[test]
fn a_message_longer_than_max_msg_sz_completes_local_length_error_and_one_at_the_limit_succeeds() {
    for t in BOTH {
        for (which, len) in [("at the limit", 4096u32), ("one byte over", 4097)] {
            for k in 0..3 {
                let mut l = Link::new(t);
                l.bed.dev.log_max_msg = 12;
                assert_eq!(l.bed.dev.max_msg_sz(), 4096);
                let data = pattern(len as usize, 11);
                l.local.buf.write(0, &data);
                l.remote.buf.write(0, &pattern(len as usize, 12));
                let rk = l.remote.key;
                let r = l.post_recv(&[(l.remote.at(0), 8192, rk)]);
                let (opc, wr) = messages_of(&l, len).into_iter().nth(k).unwrap();
                let i = l.post(wr);
                l.run();
                let c = one(&mut l.scq);
                let what = format!("{t:?}, opcode {opc:#x}, {len} bytes ({which})");
                if len == 4096 {
                    assert_req_ok(&c, &l, i, opc);
                    assert_eq!(l.bed.state(l.req.h), QpState::Rts, "{what}");
                    match opc {
                        opcode::RDMA_READ => assert_eq!(l.local.buf.read(0, 4096), pattern(4096, 12), "{what}"),
                        _ => assert_eq!(l.remote.buf.read(0, 4096), data, "{what}"),
                    }
                    if opc == opcode::SEND {
                        let rc = one(&mut l.rcq);
                        assert_eq!((rc.byte_cnt, u32::from(rc.wqe_counter)), (4096, r), "{what}");
                    }
                } else {
                    assert_eq!(
                        (c.opcode, c.syndrome, c.wqe_counter),
                        (op::REQ_ERR, syndrome::LOCAL_LENGTH_ERR, i),
                        "{what}"
                    );
                    assert_eq!(l.bed.state(l.req.h), QpState::Err, "{what}");
                    assert_eq!(
                        l.remote.buf.read(0, 4097),
                        pattern(4097, 12),
                        "{what}: nothing written there"
                    );
                    assert_eq!(l.local.buf.read(0, 4097), data, "{what}: nothing read here");
                    assert!(l.rcq.drain().is_empty(), "{what}: the responder saw nothing");
                    if let Some(b) = &l.resp {
                        assert_eq!(l.bed.state(b.h), QpState::Rts, "{what}: nothing reached the responder");
                    }
                }
            }
        }
    }
}

/// The default limit is what a ConnectX-5 reports: log_max_msg 30, max_msg_sz 1 GiB.
#[test]
fn the_default_max_msg_sz_is_1_gib_as_a_connectx_5_reports_it() {
    if std::env::var_os("SOFT_MLX5_LOG_MAX_MSG").is_some() {
        eprintln!("not run: SOFT_MLX5_LOG_MAX_MSG is set");
        return;
    }
    let bed = Bed::new();
    assert_eq!((bed.dev.log_max_msg, bed.dev.max_msg_sz()), (30, 1 << 30));
}
