//! Tier 3, soft-mlx5: the direct CQ reader ([`Context::create_direct_cq`]) against libmlx5's
//! own CQ decoding, on the same CQE bytes (issue 17's differential test).
//!
//! With the device paused (`soft_mlx5_test_pause`), requests of every requester opcode are
//! posted through the wr API on a DCI whose CQ is an ordinary libmlx5 CQ; each request's WQE
//! index is read from the send ring (`mlx5dv_init_obj`: the control segment). For each, the
//! test writes a CQE as the device would (the device's own CQE of a warm-up request as the
//! template, so the user index libmlx5 looks the QP up by is the real one; owner bit of the
//! pass; `op_own` last) into that CQ, and the same bytes into a direct CQ whose stand-in send
//! queue was told the same WQE indexes; then it polls both through `Cq::poll` and compares the
//! whole `Completion`: status, opcode, byte count, immediate, vendor error, wr_id, QP number,
//! source QP, flags. Nothing is excluded. Both CQs have 8 entries, so the ~30 CQEs of a run
//! wrap each ring several times, and the run is repeated with 128-byte CQEs
//! (`MLX5_CQE_SIZE=128`). The direct poll allocates nothing (counted).
//!
//! Opt-in like tests/hw_dc.rs: `scripts/soft-mlx5 -- <this test binary> --include-ignored
//! --test-threads=1` (`MLX5DV_TEST_DEVICE` is set there). A device that cannot be paused (a
//! ConnectX) prints "not run".
use mlx5dv::raw;
use mlx5dv::{Access, Completion, Cq, DcKey, DcPeer, Dci, DciBuilder, Mr, RtsAttr, WcOpcode, WcStatus};
use mlx5dv_suite::alloc_count::{allocations_in, Counting};
use mlx5dv_suite::device::{dct, open};
use std::sync::atomic::{fence, Ordering};

#[global_allocator]
static GLOBAL: Counting = Counting;

const KEY: DcKey = DcKey::new(0x0D1F_F0CE);
const MTU: u32 = 1024;
/// Entries asked for each CQ: libmlx5 makes a ring of 8.
const CQ_ENTRIES: u32 = 7;

type PauseFn = unsafe extern "C" fn(libc::c_int);

/// The emulator's pause hook, when this process runs on soft-mlx5.
fn pause_hook() -> Option<PauseFn> {
    // SAFETY: dlsym with a NUL-terminated name; a non-null result is the hook's address.
    let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"soft_mlx5_test_pause".as_ptr()) };
    // SAFETY: the emulator exports it as `extern "C" fn(c_int)`.
    (!sym.is_null()).then(|| unsafe { std::mem::transmute::<*mut libc::c_void, PauseFn>(sym) })
}

/// A CQ's ring as `mlx5dv_init_obj` describes it, written as the device writes it.
struct Ring {
    cq: raw::mlx5dv_cq,
    /// The device's producer index here (entries written so far).
    pi: u32,
}

impl Ring {
    fn of(cq: &Cq) -> Ring {
        // SAFETY: plain data: all-zero is valid.
        let mut out: raw::mlx5dv_cq = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut obj: raw::mlx5dv_obj = unsafe { std::mem::zeroed() };
        obj.cq.r#in = cq.as_raw_cq();
        obj.cq.out = &mut out;
        // SAFETY: a live mlx5 CQ; `out` outlives the call.
        assert_eq!(unsafe { raw::mlx5dv_init_obj(&mut obj, raw::MLX5DV_OBJ_CQ) }, 0);
        Ring { cq: out, pi: 0 }
    }

    fn cqe64(&self, index: u32) -> *mut u8 {
        let i = (index & (self.cq.cqe_cnt - 1)) as usize;
        // SAFETY: inside the ring of cqe_cnt entries; the 64-byte CQE is the last 64 bytes.
        unsafe {
            self.cq
                .buf
                .cast::<u8>()
                .add(i * self.cq.cqe_size as usize + self.cq.cqe_size as usize - 64)
        }
    }

    fn read(&self, index: u32) -> [u8; 64] {
        let mut b = [0u8; 64];
        // SAFETY: 64 bytes inside the ring.
        unsafe { std::ptr::copy_nonoverlapping(self.cqe64(index), b.as_mut_ptr(), 64) };
        b
    }

    /// Writes `cqe` (its op_own without the owner bit) at the producer index: body first,
    /// then op_own with the owner bit of this pass over the ring.
    fn produce(&mut self, cqe: &[u8; 64]) {
        let p = self.cqe64(self.pi);
        // SAFETY: 64 bytes inside the ring, which the device side (this test) owns until
        // op_own hands the entry over.
        unsafe {
            for (i, b) in cqe[..63].iter().enumerate() {
                p.add(i).write_volatile(*b);
            }
            fence(Ordering::Release);
            p.add(63)
                .write_volatile(cqe[63] & !1 | u8::from(self.pi & self.cq.cqe_cnt != 0));
        }
        self.pi += 1;
    }

    /// The consumer index in the doorbell record.
    fn doorbell_ci(&self) -> u32 {
        // SAFETY: the live doorbell record of the CQ.
        u32::from_be(unsafe { self.cq.dbrec.read_volatile() })
    }
}

/// The WQE-index walk over a DCI's send ring (control segments, `mlx5dv_init_obj`).
struct SendRing {
    buf: *const u8,
    wqe_cnt: u32,
    /// The basic block of the next request's control segment.
    next: u32,
}

impl SendRing {
    fn of(dci: &Dci<mlx5dv::state::Rts>) -> SendRing {
        // SAFETY: plain data: all-zero is valid.
        let mut out: raw::mlx5dv_qp = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut obj: raw::mlx5dv_obj = unsafe { std::mem::zeroed() };
        obj.qp.r#in = dci.as_raw();
        obj.qp.out = &mut out;
        // SAFETY: a live mlx5 QP; `out` outlives the call.
        assert_eq!(unsafe { raw::mlx5dv_init_obj(&mut obj, raw::MLX5DV_OBJ_QP) }, 0);
        assert_eq!(out.sq.stride, 64);
        SendRing {
            buf: out.sq.buf.cast(),
            wqe_cnt: out.sq.wqe_cnt,
            next: 0,
        }
    }

    /// The next request's WQE index (its control segment's) and opcode; steps over it.
    fn take(&mut self) -> (u16, u8) {
        let at = (self.next & (self.wqe_cnt - 1)) as usize * 64;
        let word = |i: usize| {
            let mut b = [0u8; 4];
            // SAFETY: inside the send ring.
            unsafe { std::ptr::copy_nonoverlapping(self.buf.add(at + 4 * i), b.as_mut_ptr(), 4) };
            u32::from_be_bytes(b)
        };
        let (w0, w1) = (word(0), word(1));
        let index = (w0 >> 8) as u16;
        assert_eq!(u32::from(index), self.next & 0xffff, "WQEs in ring order");
        let ds = w1 & 0x3f;
        self.next += ds.div_ceil(4);
        (index, w0 as u8)
    }
}

/// What the device reports for one request.
#[derive(Clone, Copy, Debug)]
enum Outcome {
    Success,
    Error { syndrome: u8, vendor: u8 },
}

/// The CQE the device writes for a request at `wqe_index` with WQE opcode `wqe_opcode`,
/// built on `template` (a CQE the device wrote for this QP).
fn craft(template: &[u8; 64], qpn: u32, wqe_index: u16, wqe_opcode: u8, byte_cnt: u32, outcome: Outcome) -> [u8; 64] {
    use std::mem::offset_of;
    let mut c = *template;
    let mut put = |at: usize, bytes: &[u8]| c[at..at + bytes.len()].copy_from_slice(bytes);
    let sop_drop_qpn = u32::from(wqe_opcode) << 24 | qpn;
    put(offset_of!(raw::mlx5_cqe64, sop_drop_qpn), &sop_drop_qpn.to_be_bytes());
    put(offset_of!(raw::mlx5_cqe64, wqe_counter), &wqe_index.to_be_bytes());
    put(offset_of!(raw::mlx5_cqe64, byte_cnt), &byte_cnt.to_be_bytes());
    let opcode = match outcome {
        Outcome::Success => raw::MLX5_CQE_REQ,
        Outcome::Error { syndrome, vendor } => {
            put(offset_of!(raw::mlx5_err_cqe, vendor_err_synd), &[vendor]);
            put(offset_of!(raw::mlx5_err_cqe, syndrome), &[syndrome]);
            raw::MLX5_CQE_REQ_ERR
        }
    };
    put(offset_of!(raw::mlx5_cqe64, op_own), &[(opcode << 4) as u8]);
    c
}

/// One request shape: how to post it, its WQE opcode, the byte count the device reports.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Send,
    SendImm,
    Write,
    WriteImm,
    Read,
    CompSwap,
    FetchAdd,
}

impl Shape {
    /// The completion opcode `ibv_wc_opcode` documents for it.
    fn wc_opcode(self) -> WcOpcode {
        match self {
            Shape::Send | Shape::SendImm => WcOpcode::Send,
            Shape::Write | Shape::WriteImm => WcOpcode::RdmaWrite,
            Shape::Read => WcOpcode::RdmaRead,
            Shape::CompSwap => WcOpcode::CompSwap,
            Shape::FetchAdd => WcOpcode::FetchAdd,
        }
    }

    fn wqe_opcode(self) -> u32 {
        match self {
            Shape::Send => raw::MLX5_OPCODE_SEND,
            Shape::SendImm => raw::MLX5_OPCODE_SEND_IMM,
            Shape::Write => raw::MLX5_OPCODE_RDMA_WRITE,
            Shape::WriteImm => raw::MLX5_OPCODE_RDMA_WRITE_IMM,
            Shape::Read => raw::MLX5_OPCODE_RDMA_READ,
            Shape::CompSwap => raw::MLX5_OPCODE_ATOMIC_CS,
            Shape::FetchAdd => raw::MLX5_OPCODE_ATOMIC_FA,
        }
    }
}

struct Rig {
    dci: Dci<mlx5dv::state::Rts>,
    peer: DcPeer,
    target: Mr,
    local: Mr,
}

impl Rig {
    fn post(&mut self, shape: Shape, wr_id: u64, signaled: bool) {
        let remote = self.target.remote().expect("remote").slice(0, 8).expect("8 bytes");
        let mut batch = self.dci.batch();
        let wr = match shape {
            Shape::Send => batch.send(wr_id),
            Shape::SendImm => batch.send_imm(wr_id, 0x0102_0304),
            Shape::Write => batch.rdma_write(wr_id, remote),
            Shape::WriteImm => batch.rdma_write_imm(wr_id, remote, 0x0506_0708),
            Shape::Read => batch.rdma_read(wr_id, remote),
            Shape::CompSwap => batch.atomic_cmp_swp(wr_id, remote, 1, 2),
            Shape::FetchAdd => batch.atomic_fetch_add(wr_id, remote, 3),
        };
        let wr = if signaled { wr } else { wr.unsignaled() };
        wr.to(&self.peer)
            .sge(self.local.sge(0, 8).expect("sge"))
            .expect("request accepted");
        batch.commit().expect("posted");
    }
}

fn poll_one(cq: &Cq, what: &str) -> Completion {
    let mut out = [Completion::default(); 4];
    let n = cq.poll(&mut out).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(n, 1, "{what}: one completion");
    out[0]
}

/// The differential run with the CQE size libmlx5 picks under the current environment.
fn differential(pause: PauseFn, cqe_size: u32) {
    let (ctx, port, gid_index) = open();
    let mlx5 = ctx.mlx5().expect("mlx5");
    let atomics = mlx5.has_atomics().expect("caps");
    let pd = ctx.alloc_pd().expect("PD");
    let rx_cq = ctx.create_cq(16).expect("DCT CQ");
    let srq = pd.create_srq(16, 1).expect("SRQ");
    let access = Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ;
    let access = if atomics {
        access | Access::REMOTE_ATOMIC
    } else {
        access
    };
    let (_dct, addr) = dct(&mlx5, &pd, &rx_cq, &srq, port, gid_index, KEY, MTU, Some(access));
    let ah = pd
        .create_ah(port, &mlx5dv::PeerPath::to_dc_target(&addr, gid_index))
        .expect("AH");
    let lib_cq = ctx.create_cq(CQ_ENTRIES).expect("libmlx5 CQ");
    let direct_cq = ctx.create_direct_cq(CQ_ENTRIES).expect("direct CQ");
    // A send queue the small CQ holds (DciBuilder::build refuses one it could overrun).
    let builder = DciBuilder::new(&mlx5, &pd, &lib_cq).max_send_wr(4);
    let builder = if atomics { builder.with_atomics() } else { builder };
    let dci = builder.build_ready(port, MTU, RtsAttr::default()).expect("DCI");
    let mut rig = Rig {
        dci,
        peer: DcPeer::new(&ah, &addr, KEY),
        target: pd.alloc_mr(64, access).expect("target"),
        local: pd.alloc_mr(64, Access::LOCAL_WRITE).expect("local"),
    };
    let mut lib_ring = Ring::of(&lib_cq);
    let mut dir_ring = Ring::of(&direct_cq);
    assert_eq!(lib_ring.cq.cqe_size, cqe_size, "libmlx5's CQE size");
    assert_eq!(dir_ring.cq.cqe_size, cqe_size, "the direct CQ's CQE size");
    assert_eq!((lib_ring.cq.cqe_cnt, dir_ring.cq.cqe_cnt), (8, 8));
    let mut sq = SendRing::of(&rig.dci);
    let qpn = rig.dci.qp_num();
    let probe = direct_cq
        .direct_queue_probe(qpn, 128, sq.wqe_cnt)
        .expect("stand-in direct send queue");

    // Warm-up, device running: its CQE is the template (user index, flags as the device sets them).
    rig.post(Shape::Write, 1, true);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut out = [Completion::default(); 1];
    while lib_cq.poll(&mut out).expect("poll") == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the warm-up write never completed"
        );
    }
    assert_eq!((out[0].wr_id, out[0].status), (1, WcStatus::Success));
    let template = lib_ring.read(0);
    lib_ring.pi = 1;
    sq.take();

    // SAFETY: the emulator's hook; from here the device executes nothing.
    unsafe { pause(1) };
    let mut shapes = vec![Shape::Send, Shape::SendImm, Shape::Write, Shape::WriteImm, Shape::Read];
    if atomics {
        shapes.extend([Shape::CompSwap, Shape::FetchAdd]);
    } else {
        eprintln!(
            "not run: compare-and-swap and fetch-and-add ({} has no atomics)",
            ctx.name()
        );
    }
    let syndromes = [
        raw::MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR,
        raw::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
        raw::MLX5_CQE_SYNDROME_LOCAL_PROT_ERR,
        raw::MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
        raw::MLX5_CQE_SYNDROME_MW_BIND_ERR,
        raw::MLX5_CQE_SYNDROME_BAD_RESP_ERR,
        raw::MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR,
        raw::MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
        raw::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
        raw::MLX5_CQE_SYNDROME_REMOTE_OP_ERR,
        raw::MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR,
        raw::MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR,
        raw::MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR,
        0x7f, // no such syndrome: libmlx5 says general error
    ];
    // (shape, signaled, outcome)
    let mut cases: Vec<(Shape, bool, Outcome)> = shapes.iter().map(|&s| (s, true, Outcome::Success)).collect();
    for (i, &s) in syndromes.iter().enumerate() {
        let shape = shapes[i % shapes.len()];
        cases.push((
            shape,
            true,
            Outcome::Error {
                syndrome: s as u8,
                vendor: 0x40 + i as u8,
            },
        ));
    }
    // libmlx5's special case: an ODP page fault (remote aborted, vendor syndrome 0x93).
    cases.push((
        Shape::Read,
        true,
        Outcome::Error {
            syndrome: raw::MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR as u8,
            vendor: raw::MLX5_CQE_VENDOR_SYNDROME_ODP_PFAULT as u8,
        },
    ));
    // A QP in error flushes every outstanding WQE, unsignaled ones included.
    for &s in &shapes {
        cases.push((
            s,
            false,
            Outcome::Error {
                syndrome: raw::MLX5_CQE_SYNDROME_WR_FLUSH_ERR as u8,
                vendor: 0xf9,
            },
        ));
    }

    let mut direct_poll_allocations = 0;
    for (i, &(shape, signaled, outcome)) in cases.iter().enumerate() {
        let wr_id = 1000 + i as u64;
        rig.post(shape, wr_id, signaled);
        let (wqe_index, opcode) = sq.take();
        assert_eq!(
            u32::from(opcode),
            shape.wqe_opcode(),
            "the control segment of {shape:?}"
        );
        probe.wrote(wr_id, wqe_index).expect("stand-in queue has room");
        // Atomics move 8 bytes; the others a count with every byte set (byte order and width show).
        let byte_cnt = if matches!(shape, Shape::CompSwap | Shape::FetchAdd) {
            8
        } else {
            0x0102_0300 + i as u32
        };
        let mut cqe = craft(&template, qpn, wqe_index, opcode, byte_cnt, outcome);
        if i % 2 == 1 {
            // flags_rqpn (GRH bits, source QP), which the device leaves 0 on a requester CQE:
            // set on every other entry so that both decoders are seen reading it alike.
            let at = std::mem::offset_of!(raw::mlx5_cqe64, flags_rqpn);
            cqe[at..at + 4].copy_from_slice(&(2u32 << 28 | 0x00ab_cdef).to_be_bytes());
        }
        lib_ring.produce(&cqe);
        dir_ring.produce(&cqe);
        let what = format!("case {i}: {shape:?} signaled {signaled} {outcome:?}, {cqe_size}-byte CQEs");
        let theirs = poll_one(&lib_cq, &format!("libmlx5, {what}"));
        let mut got = [Completion::default(); 4];
        let (n, allocated) = allocations_in(|| direct_cq.poll(&mut got));
        direct_poll_allocations += allocated;
        assert_eq!(
            n.unwrap_or_else(|e| panic!("direct, {what}: {e}")),
            1,
            "direct, {what}: one completion"
        );
        let ours = got[0];
        assert_eq!(ours, theirs, "{what}");
        // The crafted bytes reached both decoders: libmlx5 saw this request's CQE.
        match outcome {
            Outcome::Success => assert_eq!(
                (theirs.status, theirs.opcode, theirs.byte_len),
                (WcStatus::Success, Some(shape.wc_opcode()), byte_cnt),
                "{what}"
            ),
            Outcome::Error { vendor, .. } => {
                assert!(
                    !theirs.status.is_success() && theirs.vendor_err == u32::from(vendor),
                    "{what}: {theirs:?}"
                )
            }
        }
        assert_eq!(ours.wr_id, wr_id, "{what}: the caller's wr_id");
        assert_eq!(
            dir_ring.doorbell_ci(),
            dir_ring.pi,
            "{what}: consumer index in the doorbell record"
        );
        let mut none = [Completion::default(); 2];
        assert_eq!(direct_cq.poll(&mut none).expect("empty"), 0, "{what}: nothing more");
    }
    assert_eq!(direct_poll_allocations, 0, "the direct poll allocates nothing");
    assert_eq!(probe.outstanding(), 0, "every request retired");
    assert!(dir_ring.pi > 3 * dir_ring.cq.cqe_cnt, "the rings wrapped");

    // An entry that is not a requester completion of a direct QP is reported, and consumed.
    let foreign = craft(&template, qpn, 0, 0, 0, Outcome::Success);
    let mut receive = foreign;
    receive[63] = (raw::MLX5_CQE_RESP_SEND << 4) as u8;
    dir_ring.produce(&receive);
    let mut out = [Completion::default(); 2];
    let err = direct_cq.poll(&mut out).expect_err("a receive on a direct CQ");
    assert_eq!(err.errno(), Some(libc::EPROTO), "{err}");
    let unknown = craft(&template, qpn + 1, 0, raw::MLX5_OPCODE_SEND as u8, 0, Outcome::Success);
    dir_ring.produce(&unknown);
    let err = direct_cq.poll(&mut out).expect_err("a QP the direct CQ does not serve");
    assert!(
        err.to_string().contains(&format!("{:#x}", qpn + 1)),
        "QP {qpn:#x}: {err}"
    );
    assert_eq!(dir_ring.doorbell_ci(), dir_ring.pi, "both consumed");

    // The DCI goes while the device is paused: its unexecuted WQEs never run.
    drop(rig);
    // SAFETY: the emulator's hook.
    unsafe { pause(0) };
}

#[test]
#[ignore = "soft-mlx5 (a paused device): scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn direct_decoding_equals_libmlx5s_for_every_opcode_syndrome_and_flush_across_the_wrap_with_64_and_128_byte_cqes() {
    let Some(pause) = pause_hook() else {
        eprintln!("not run: no soft-mlx5 here (a ConnectX cannot be paused)");
        return;
    };
    differential(pause, 64);
    // libmlx5 reads MLX5_CQE_SIZE at each CQ creation (get_cqe_size); this test's thread is the
    // only one creating CQs (--test-threads=1).
    std::env::set_var("MLX5_CQE_SIZE", "128");
    differential(pause, 128);
    std::env::remove_var("MLX5_CQE_SIZE");
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn a_direct_cq_refuses_dcts_rc_qps_and_arming() {
    let (ctx, port, gid_index) = open();
    let mlx5 = ctx.mlx5().expect("mlx5");
    let pd = ctx.alloc_pd().expect("PD");
    let cq = ctx.create_direct_cq(16).expect("direct CQ");
    let srq = pd.create_srq(16, 1).expect("SRQ");
    let b = mlx5dv::DctBuilder::new(&mlx5, &pd, &cq, &srq, KEY).port(port);
    let b = match gid_index {
        Some(g) => b.gid_index(g),
        None => b,
    };
    let err = b.build().expect_err("a DCT on a direct CQ");
    assert_eq!(err.errno(), Some(libc::EINVAL), "{err}");
    assert!(err.to_string().contains("direct CQ"), "{err}");
    let err = pd
        .create_rc_qp(&cq, None, mlx5dv::RcCaps::default())
        .expect_err("an RC QP on a direct CQ");
    assert_eq!(err.errno(), Some(libc::EINVAL), "{err}");
    assert!(err.to_string().contains("direct CQ"), "{err}");
    let err = cq.req_notify(false).expect_err("arming a direct CQ");
    assert_eq!(err.errno(), Some(libc::EOPNOTSUPP), "{err}");
    let mut out = [Completion::default(); 4];
    assert_eq!(cq.poll(&mut out).expect("an empty direct CQ"), 0);
}
