//! ABI tests: every shim export (`m5dv_*`) and every Rust inline function of mlx5dv-raw is
//! called against a C recording function table; every argument must arrive bit-exact and
//! every return value must come back. Runs everywhere: no device needed.
use mlx5dv_suite::raw::*;
use mlx5dv_suite::recorder::{recorder, Rec, Recorder};
use std::ffi::c_void;
use std::ptr;

// Values with every byte different and high bits set, so truncation or swaps show.
const RKEY: u32 = 0x89AB_CDEF;
const RADDR: u64 = 0xFEDC_BA98_7654_3210;
const COMPARE: u64 = 0x0123_4567_89AB_CDEF;
const SWAP: u64 = 0xF0E1_D2C3_B4A5_9687;
const ADD: u64 = 0x8000_0000_0000_0001;
const IMM_BE: u32 = 0xDEAD_BEEF_u32.to_be();
const LKEY: u32 = 0x1357_9BDF;
const ADDR: u64 = 0xA5A5_5A5A_0F0F_F0F0;
const LEN: u32 = 0xFFFF_FFFE;
const DCTN: u32 = 0xFEDC_BA98;
const DC_KEY: u64 = 0xFFEE_DDCC_BBAA_9988;
const STREAM: u16 = 0xBEEF;
const WR_ID: u64 = 0x1122_3344_5566_7788;

fn fake<T>(addr: usize) -> *mut T {
    addr as *mut T
}

fn assert_call(rec: &Rec, op: &str, obj: *const c_void, a: &[u64], p: &[*const c_void]) {
    assert_eq!(rec.op(), op, "wrong entry called");
    assert_eq!(rec.obj, obj, "{op}: called on the wrong object");
    assert_eq!(&rec.a[..a.len()], a, "{op}: scalar arguments differ");
    assert!(
        rec.a[a.len()..].iter().all(|&x| x == 0),
        "{op}: unexpected extra scalars {:?}",
        rec.a
    );
    assert_eq!(&rec.p[..p.len()], p, "{op}: pointer arguments differ");
}

/// Runs `call` once through the shim and once through the Rust inline function, checking the
/// same record both times.
fn both(r: &Recorder, shim: impl Fn(), inline: impl Fn(), check: impl Fn(&Rec)) {
    for (path, call) in [("shim", &shim as &dyn Fn()), ("inline", &inline as &dyn Fn())] {
        r.reset();
        call();
        let rec = r.last();
        assert_eq!(
            rec.calls, 1,
            "{path}: expected exactly one entry call, got {}",
            rec.calls
        );
        check(&rec);
    }
}

#[test]
fn qp_ex_post_entries_receive_every_argument_bit_exact_with_wr_id_and_flags() {
    let r = recorder();
    let q = r.qp_ex();
    let qo = q as *const c_void;
    // SAFETY: q is the recorder's fake ibv_qp_ex with every entry set; pointers passed are
    // only recorded, never dereferenced.
    unsafe {
        (*q).wr_id = WR_ID;
        (*q).wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE | IBV_SEND_FENCE;
        both(
            &r,
            || m5dv_wr_atomic_cmp_swp(q, RKEY, RADDR, COMPARE, SWAP),
            || ibv_wr_atomic_cmp_swp(q, RKEY, RADDR, COMPARE, SWAP),
            |rec| {
                assert_call(rec, "wr_atomic_cmp_swp", qo, &[RKEY as u64, RADDR, COMPARE, SWAP], &[]);
                assert_eq!(rec.wr_id, WR_ID);
                assert_eq!(rec.wr_flags, IBV_SEND_SIGNALED | IBV_SEND_INLINE | IBV_SEND_FENCE);
            },
        );
        both(
            &r,
            || m5dv_wr_atomic_fetch_add(q, RKEY, RADDR, ADD),
            || ibv_wr_atomic_fetch_add(q, RKEY, RADDR, ADD),
            |rec| assert_call(rec, "wr_atomic_fetch_add", qo, &[RKEY as u64, RADDR, ADD], &[]),
        );
        let mw: *mut ibv_mw = fake(0x1000);
        let info: *const ibv_mw_bind_info = fake(0x2000);
        both(
            &r,
            || m5dv_wr_bind_mw(q, mw, RKEY, info),
            || ibv_wr_bind_mw(q, mw, RKEY, info),
            |rec| assert_call(rec, "wr_bind_mw", qo, &[RKEY as u64], &[mw.cast(), info.cast()]),
        );
        both(
            &r,
            || m5dv_wr_local_inv(q, RKEY),
            || ibv_wr_local_inv(q, RKEY),
            |rec| assert_call(rec, "wr_local_inv", qo, &[RKEY as u64], &[]),
        );
        both(
            &r,
            || m5dv_wr_rdma_read(q, RKEY, RADDR),
            || ibv_wr_rdma_read(q, RKEY, RADDR),
            |rec| assert_call(rec, "wr_rdma_read", qo, &[RKEY as u64, RADDR], &[]),
        );
        both(
            &r,
            || m5dv_wr_rdma_write(q, RKEY, RADDR),
            || ibv_wr_rdma_write(q, RKEY, RADDR),
            |rec| assert_call(rec, "wr_rdma_write", qo, &[RKEY as u64, RADDR], &[]),
        );
        both(
            &r,
            || m5dv_wr_rdma_write_imm(q, RKEY, RADDR, IMM_BE),
            || ibv_wr_rdma_write_imm(q, RKEY, RADDR, IMM_BE),
            |rec| assert_call(rec, "wr_rdma_write_imm", qo, &[RKEY as u64, RADDR, IMM_BE as u64], &[]),
        );
        both(
            &r,
            || m5dv_wr_send(q),
            || ibv_wr_send(q),
            |rec| assert_call(rec, "wr_send", qo, &[], &[]),
        );
        both(
            &r,
            || m5dv_wr_send_imm(q, IMM_BE),
            || ibv_wr_send_imm(q, IMM_BE),
            |rec| assert_call(rec, "wr_send_imm", qo, &[IMM_BE as u64], &[]),
        );
        both(
            &r,
            || m5dv_wr_send_inv(q, RKEY),
            || ibv_wr_send_inv(q, RKEY),
            |rec| assert_call(rec, "wr_send_inv", qo, &[RKEY as u64], &[]),
        );
        let hdr: *mut c_void = fake(0x3000);
        both(
            &r,
            || m5dv_wr_send_tso(q, hdr, 0xFEDC, 0xBA98),
            || ibv_wr_send_tso(q, hdr, 0xFEDC, 0xBA98),
            |rec| assert_call(rec, "wr_send_tso", qo, &[0xFEDC, 0xBA98], &[hdr.cast_const()]),
        );
        let ah: *mut ibv_ah = fake(0x4000);
        both(
            &r,
            || m5dv_wr_set_ud_addr(q, ah, 0x00AB_CDEF, 0x8001_1111),
            || ibv_wr_set_ud_addr(q, ah, 0x00AB_CDEF, 0x8001_1111),
            |rec| {
                assert_call(
                    rec,
                    "wr_set_ud_addr",
                    qo,
                    &[0x00AB_CDEF, 0x8001_1111],
                    &[ah.cast_const().cast()],
                )
            },
        );
        both(
            &r,
            || m5dv_wr_set_xrc_srqn(q, 0xCAFE_F00D),
            || ibv_wr_set_xrc_srqn(q, 0xCAFE_F00D),
            |rec| assert_call(rec, "wr_set_xrc_srqn", qo, &[0xCAFE_F00D], &[]),
        );
        let data: *mut c_void = fake(0x5000);
        both(
            &r,
            || m5dv_wr_set_inline_data(q, data, 0x1_0000_0001),
            || ibv_wr_set_inline_data(q, data, 0x1_0000_0001),
            |rec| assert_call(rec, "wr_set_inline_data", qo, &[0x1_0000_0001], &[data.cast_const()]),
        );
        let bufs: *const ibv_data_buf = fake(0x6000);
        both(
            &r,
            || m5dv_wr_set_inline_data_list(q, 7, bufs),
            || ibv_wr_set_inline_data_list(q, 7, bufs),
            |rec| assert_call(rec, "wr_set_inline_data_list", qo, &[7], &[bufs.cast()]),
        );
        both(
            &r,
            || m5dv_wr_set_sge(q, LKEY, ADDR, LEN),
            || ibv_wr_set_sge(q, LKEY, ADDR, LEN),
            |rec| assert_call(rec, "wr_set_sge", qo, &[LKEY as u64, ADDR, LEN as u64], &[]),
        );
        let sges: *const ibv_sge = fake(0x7000);
        both(
            &r,
            || m5dv_wr_set_sge_list(q, 30, sges),
            || ibv_wr_set_sge_list(q, 30, sges),
            |rec| assert_call(rec, "wr_set_sge_list", qo, &[30], &[sges.cast()]),
        );
        both(
            &r,
            || m5dv_wr_start(q),
            || ibv_wr_start(q),
            |rec| assert_call(rec, "wr_start", qo, &[], &[]),
        );
        both(
            &r,
            || m5dv_wr_abort(q),
            || ibv_wr_abort(q),
            |rec| assert_call(rec, "wr_abort", qo, &[], &[]),
        );
    }
}

#[test]
fn wr_complete_returns_the_library_status_unchanged() {
    let r = recorder();
    let q = r.qp_ex();
    for status in [0, libc::ENOMEM, libc::EINVAL, -1, i32::MIN] {
        r.set_return(status as i64);
        // SAFETY: fake ibv_qp_ex from the recorder.
        unsafe {
            assert_eq!(m5dv_wr_complete(q), status);
            assert_eq!(ibv_wr_complete(q), status);
        }
        assert_eq!(r.last().op(), "wr_complete");
    }
}

#[cfg(m5dv_wr_atomic_write)]
#[test]
fn atomic_write_entry_receives_every_argument() {
    let r = recorder();
    let q = r.qp_ex();
    let value: *const c_void = fake(0x8000);
    // SAFETY: fake ibv_qp_ex; the value pointer is only recorded.
    unsafe {
        both(
            &r,
            || m5dv_wr_atomic_write(q, RKEY, RADDR, value),
            || ibv_wr_atomic_write(q, RKEY, RADDR, value),
            |rec| assert_call(rec, "wr_atomic_write", q.cast(), &[RKEY as u64, RADDR], &[value]),
        );
    }
}

#[cfg(m5dv_wr_flush)]
#[test]
fn flush_entry_receives_every_argument() {
    let r = recorder();
    let q = r.qp_ex();
    // SAFETY: fake ibv_qp_ex.
    unsafe {
        both(
            &r,
            || m5dv_wr_flush(q, RKEY, RADDR, 0x1_0000_0003, 0xA5, 0x5A),
            || ibv_wr_flush(q, RKEY, RADDR, 0x1_0000_0003, 0xA5, 0x5A),
            |rec| {
                assert_call(
                    rec,
                    "wr_flush",
                    q.cast(),
                    &[RKEY as u64, RADDR, 0x1_0000_0003, 0xA5, 0x5A],
                    &[],
                )
            },
        );
    }
}

#[test]
fn dc_address_reaches_the_mlx5_entry_with_full_dct_number_and_key() {
    let r = recorder();
    let m = r.mqp();
    let ah: *mut ibv_ah = fake(0x9000);
    // SAFETY: fake mlx5dv_qp_ex; the AH pointer is only recorded.
    unsafe {
        both(
            &r,
            || m5dv_wr_set_dc_addr(m, ah, DCTN, DC_KEY),
            || mlx5dv_wr_set_dc_addr(m, ah, DCTN, DC_KEY),
            |rec| {
                assert_call(
                    rec,
                    "wr_set_dc_addr",
                    m.cast(),
                    &[DCTN as u64, DC_KEY],
                    &[ah.cast_const().cast()],
                )
            },
        );
    }
}

#[cfg(m5dv_dc_addr_stream)]
#[test]
fn dc_address_with_stream_id_reaches_the_mlx5_entry() {
    let r = recorder();
    let m = r.mqp();
    let ah: *mut ibv_ah = fake(0xA000);
    // SAFETY: fake mlx5dv_qp_ex; the AH pointer is only recorded.
    unsafe {
        both(
            &r,
            || m5dv_wr_set_dc_addr_stream(m, ah, DCTN, DC_KEY, STREAM),
            || mlx5dv_wr_set_dc_addr_stream(m, ah, DCTN, DC_KEY, STREAM),
            |rec| {
                assert_call(
                    rec,
                    "wr_set_dc_addr_stream",
                    m.cast(),
                    &[DCTN as u64, DC_KEY, STREAM as u64],
                    &[ah.cast_const().cast()],
                )
            },
        );
    }
}

#[test]
fn shim_reports_the_optional_entries_it_was_compiled_with() {
    // SAFETY: no arguments.
    let features = unsafe { m5dv_shim_features() };
    assert_eq!(features & M5DV_FEATURE_WR_ATOMIC_WRITE != 0, cfg!(m5dv_wr_atomic_write));
    assert_eq!(features & M5DV_FEATURE_WR_FLUSH != 0, cfg!(m5dv_wr_flush));
    assert_eq!(features & M5DV_FEATURE_DC_ADDR_STREAM != 0, cfg!(m5dv_dc_addr_stream));
}

#[test]
fn context_ops_post_and_poll_pass_pointers_and_return_status() {
    let r = recorder();
    let ctx = r.context();
    let qp = r.qp_ex().cast::<ibv_qp>();
    let cq = ibv_cq_ex_to_cq(r.cq_ex());
    let srq = r.srq();
    let send_wr: *mut ibv_send_wr = fake(0xB000);
    let bad_send: *mut *mut ibv_send_wr = fake(0xB100);
    let recv_wr: *mut ibv_recv_wr = fake(0xC000);
    let bad_recv: *mut *mut ibv_recv_wr = fake(0xC100);
    let wc: *mut ibv_wc = fake(0xD000);
    // SAFETY: the fake QP, CQ and SRQ point at the fake context whose ops record; the other
    // pointers are only recorded.
    unsafe {
        assert_eq!((*qp).context, ctx);
        r.set_return(libc::ENOMEM as i64);
        both(
            &r,
            || assert_eq!(m5dv_post_send(qp, send_wr, bad_send), libc::ENOMEM),
            || assert_eq!(ibv_post_send(qp, send_wr, bad_send), libc::ENOMEM),
            |rec| {
                assert_call(
                    rec,
                    "post_send",
                    qp.cast(),
                    &[],
                    &[send_wr.cast_const().cast(), bad_send.cast_const().cast()],
                )
            },
        );
        both(
            &r,
            || assert_eq!(m5dv_post_recv(qp, recv_wr, bad_recv), libc::ENOMEM),
            || assert_eq!(ibv_post_recv(qp, recv_wr, bad_recv), libc::ENOMEM),
            |rec| {
                assert_call(
                    rec,
                    "post_recv",
                    qp.cast(),
                    &[],
                    &[recv_wr.cast_const().cast(), bad_recv.cast_const().cast()],
                )
            },
        );
        both(
            &r,
            || assert_eq!(m5dv_post_srq_recv(srq, recv_wr, bad_recv), libc::ENOMEM),
            || assert_eq!(ibv_post_srq_recv(srq, recv_wr, bad_recv), libc::ENOMEM),
            |rec| {
                assert_call(
                    rec,
                    "post_srq_recv",
                    srq.cast(),
                    &[],
                    &[recv_wr.cast_const().cast(), bad_recv.cast_const().cast()],
                )
            },
        );
        r.set_return(17);
        both(
            &r,
            || assert_eq!(m5dv_poll_cq(cq, 64, wc), 17),
            || assert_eq!(ibv_poll_cq(cq, 64, wc), 17),
            |rec| assert_call(rec, "poll_cq", cq.cast(), &[64], &[wc.cast_const().cast()]),
        );
        r.set_return(0);
        both(
            &r,
            || assert_eq!(m5dv_req_notify_cq(cq, 1), 0),
            || assert_eq!(ibv_req_notify_cq(cq, 1), 0),
            |rec| assert_call(rec, "req_notify_cq", cq.cast(), &[1], &[]),
        );
    }
}

#[test]
fn extended_cq_poll_and_read_entries_return_exact_values() {
    let r = recorder();
    let cq = r.cq_ex();
    let co = cq as *const c_void;
    // SAFETY: fake ibv_cq_ex; the attr pointer is only recorded.
    unsafe {
        assert_eq!(m5dv_cq_ex_to_cq(cq), cq.cast::<ibv_cq>());
        assert_eq!(ibv_cq_ex_to_cq(cq), cq.cast::<ibv_cq>());
        let attr: *mut ibv_poll_cq_attr = fake(0xE000);
        r.set_return(libc::ENOENT as i64);
        both(
            &r,
            || assert_eq!(m5dv_start_poll(cq, attr), libc::ENOENT),
            || assert_eq!(ibv_start_poll(cq, attr), libc::ENOENT),
            |rec| assert_call(rec, "start_poll", co, &[], &[attr.cast_const().cast()]),
        );
        both(
            &r,
            || assert_eq!(m5dv_next_poll(cq), libc::ENOENT),
            || assert_eq!(ibv_next_poll(cq), libc::ENOENT),
            |rec| assert_call(rec, "next_poll", co, &[], &[]),
        );
        both(
            &r,
            || m5dv_end_poll(cq),
            || ibv_end_poll(cq),
            |rec| assert_call(rec, "end_poll", co, &[], &[]),
        );

        let v: i64 = 0x7EDC_BA98_7654_3211;
        r.set_return(v);
        macro_rules! read {
            ($shim:ident, $inline:ident, $op:literal, $ty:ty) => {
                both(
                    &r,
                    || assert_eq!($shim(cq), v as $ty, $op),
                    || assert_eq!($inline(cq), v as $ty, $op),
                    |rec| assert_call(rec, $op, co, &[], &[]),
                );
            };
        }
        read!(m5dv_wc_read_opcode, ibv_wc_read_opcode, "read_opcode", ibv_wc_opcode);
        read!(m5dv_wc_read_vendor_err, ibv_wc_read_vendor_err, "read_vendor_err", u32);
        read!(m5dv_wc_read_byte_len, ibv_wc_read_byte_len, "read_byte_len", u32);
        read!(m5dv_wc_read_imm_data, ibv_wc_read_imm_data, "read_imm_data", u32);
        read!(
            m5dv_wc_read_invalidated_rkey,
            ibv_wc_read_invalidated_rkey,
            "read_imm_data",
            u32
        );
        read!(m5dv_wc_read_qp_num, ibv_wc_read_qp_num, "read_qp_num", u32);
        read!(m5dv_wc_read_src_qp, ibv_wc_read_src_qp, "read_src_qp", u32);
        read!(m5dv_wc_read_wc_flags, ibv_wc_read_wc_flags, "read_wc_flags", u32);
        read!(m5dv_wc_read_slid, ibv_wc_read_slid, "read_slid", u32);
        read!(m5dv_wc_read_sl, ibv_wc_read_sl, "read_sl", u8);
        read!(
            m5dv_wc_read_dlid_path_bits,
            ibv_wc_read_dlid_path_bits,
            "read_dlid_path_bits",
            u8
        );
        read!(
            m5dv_wc_read_completion_ts,
            ibv_wc_read_completion_ts,
            "read_completion_ts",
            u64
        );
        read!(
            m5dv_wc_read_completion_wallclock_ns,
            ibv_wc_read_completion_wallclock_ns,
            "read_completion_wallclock_ns",
            u64
        );
        read!(m5dv_wc_read_cvlan, ibv_wc_read_cvlan, "read_cvlan", u16);
        read!(m5dv_wc_read_flow_tag, ibv_wc_read_flow_tag, "read_flow_tag", u32);

        let mut info = ibv_wc_tm_info::default();
        let info_ptr = ptr::addr_of_mut!(info);
        both(
            &r,
            || m5dv_wc_read_tm_info(cq, info_ptr),
            || ibv_wc_read_tm_info(cq, info_ptr),
            |rec| assert_call(rec, "read_tm_info", co, &[], &[info_ptr.cast_const().cast()]),
        );
        assert_eq!(info.tag, v as u64);
        assert_eq!(info.r#priv, !(v as u64) as u32);
    }
}

#[test]
fn verbs_context_entries_are_found_and_get_the_header_struct_sizes() {
    let r = recorder();
    let ctx = r.context();
    let co = ctx as *const c_void;
    // SAFETY: the fake context sits in a fake verbs_context with the entries set; attribute
    // pointers are only recorded (except where noted).
    unsafe {
        r.set_return(0x1234_5000);
        let cq_attr: *mut ibv_cq_init_attr_ex = fake(0xF000);
        both(
            &r,
            || assert_eq!(m5dv_create_cq_ex(ctx, cq_attr) as usize, 0x1234_5000),
            || assert_eq!(ibv_create_cq_ex(ctx, cq_attr) as usize, 0x1234_5000),
            |rec| assert_call(rec, "create_cq_ex", co, &[], &[cq_attr.cast_const().cast()]),
        );

        let td_attr: *mut ibv_td_init_attr = fake(0xF100);
        both(
            &r,
            || assert_eq!(m5dv_alloc_td(ctx, td_attr) as usize, 0x1234_5000),
            || assert_eq!(ibv_alloc_td(ctx, td_attr) as usize, 0x1234_5000),
            |rec| assert_call(rec, "alloc_td", co, &[], &[td_attr.cast_const().cast()]),
        );
        let pd_attr: *mut ibv_parent_domain_init_attr = fake(0xF200);
        both(
            &r,
            || assert_eq!(m5dv_alloc_parent_domain(ctx, pd_attr) as usize, 0x1234_5000),
            || assert_eq!(ibv_alloc_parent_domain(ctx, pd_attr) as usize, 0x1234_5000),
            |rec| assert_call(rec, "alloc_parent_domain", co, &[], &[pd_attr.cast_const().cast()]),
        );
        // ibv_dealloc_td finds the entry through the thread domain's context.
        let mut td = ibv_td { context: ctx };
        let tp = ptr::addr_of_mut!(td);
        r.set_return(0);
        both(
            &r,
            || assert_eq!(m5dv_dealloc_td(tp), 0),
            || assert_eq!(ibv_dealloc_td(tp), 0),
            |rec| assert_call(rec, "dealloc_td", tp.cast_const().cast(), &[], &[]),
        );
        r.set_return(0x1234_5000);

        // Not exactly IBV_QP_INIT_ATTR_PD, so the header takes the verbs_context path.
        let mut qp_attr: ibv_qp_init_attr_ex = std::mem::zeroed();
        qp_attr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
        let qa = ptr::addr_of_mut!(qp_attr);
        both(
            &r,
            || assert_eq!(m5dv_create_qp_ex(ctx, qa) as usize, 0x1234_5000),
            || assert_eq!(ibv_create_qp_ex(ctx, qa) as usize, 0x1234_5000),
            |rec| assert_call(rec, "create_qp_ex", co, &[], &[qa.cast_const().cast()]),
        );

        let mut srq_attr: ibv_srq_init_attr_ex = std::mem::zeroed();
        srq_attr.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ;
        let sa = ptr::addr_of_mut!(srq_attr);
        both(
            &r,
            || assert_eq!(m5dv_create_srq_ex(ctx, sa) as usize, 0x1234_5000),
            || assert_eq!(ibv_create_srq_ex(ctx, sa) as usize, 0x1234_5000),
            |rec| assert_call(rec, "create_srq_ex", co, &[], &[sa.cast_const().cast()]),
        );

        r.set_return(0);
        let mut dev_attr: ibv_device_attr_ex = std::mem::zeroed();
        let da = ptr::addr_of_mut!(dev_attr);
        let header_size = |rec: &Rec| rec.a[0] as usize;
        both(
            &r,
            || assert_eq!(m5dv_query_device_ex(ctx, ptr::null(), da), 0),
            || assert_eq!(ibv_query_device_ex(ctx, ptr::null(), da), 0),
            |rec| {
                assert_eq!(rec.op(), "query_device_ex");
                assert_eq!(rec.p[1], da.cast_const().cast());
                assert!(
                    header_size(rec) >= 232 && header_size(rec) <= std::mem::size_of::<ibv_device_attr_ex>(),
                    "library told to fill {} bytes; Rust has {}",
                    header_size(rec),
                    std::mem::size_of::<ibv_device_attr_ex>()
                );
            },
        );

        let mut port: ibv_port_attr = std::mem::zeroed();
        let pa = ptr::addr_of_mut!(port);
        let shim_size = m5dv_port_attr_size();
        both(
            &r,
            || assert_eq!(m5dv_query_port(ctx, 0xAB, pa), 0),
            || assert_eq!(ibv_query_port(ctx, 0xAB, pa), 0),
            |rec| {
                assert_call(
                    rec,
                    "query_port",
                    co,
                    &[0xAB, shim_size as u64],
                    &[pa.cast_const().cast()],
                )
            },
        );
        assert!(
            shim_size > 48,
            "the inline ibv_query_port must pass the full struct, not the 48-byte compat one"
        );
        assert!(shim_size <= std::mem::size_of::<ibv_port_attr>());
    }
}

#[test]
fn query_device_ex_rejects_unknown_input_mask_without_calling_the_library() {
    let r = recorder();
    let input = ibv_query_device_ex_input { comp_mask: 1 };
    // SAFETY: fake context; the header returns before any call.
    let rc = unsafe { ibv_query_device_ex(r.context(), &input, &mut std::mem::zeroed()) };
    assert_eq!(rc, libc::EINVAL);
    assert_eq!(r.last().calls, 0);
}

#[test]
fn c_and_rust_dc_send_sequences_make_the_same_calls() {
    let r = recorder();
    let (q, m) = (r.qp_ex(), r.mqp());
    let ah: *mut ibv_ah = fake(0x1_0000);
    r.set_return(0);
    // SAFETY: fake tables; the AH is only recorded.
    unsafe {
        r.reset();
        assert_eq!(
            mlx5dv_suite::recorder::m5dv_c_dc_send(q, m, ah, DCTN, DC_KEY, LKEY, ADDR, LEN, WR_ID),
            0
        );
        let c_rec = r.last();
        r.reset();
        ibv_wr_start(q);
        (*q).wr_id = WR_ID;
        (*q).wr_flags = IBV_SEND_SIGNALED;
        ibv_wr_send(q);
        mlx5dv_wr_set_dc_addr(m, ah, DCTN, DC_KEY);
        ibv_wr_set_sge(q, LKEY, ADDR, LEN);
        assert_eq!(ibv_wr_complete(q), 0);
        let rust_rec = r.last();
        assert_eq!(c_rec.calls, 5);
        assert_eq!(rust_rec.calls, 5);
        assert_eq!(
            (c_rec.op(), c_rec.wr_id, c_rec.wr_flags),
            (rust_rec.op(), rust_rec.wr_id, rust_rec.wr_flags)
        );
        assert_eq!(c_rec.wr_id, WR_ID);
    }
}
