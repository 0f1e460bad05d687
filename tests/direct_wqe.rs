//! Tier 3 (soft-mlx5): the direct backend writes the send queue byte for byte as libmlx5's wr
//! API does. One DCI (or one RC QP, connected to a partner), the device paused: each request
//! shape is posted through the wr API and
//! the bytes copied (the whole send ring, prefilled with a pattern so that stale bytes cannot
//! hide a difference, the doorbell record, and the BlueFlame/doorbell register's two
//! buffers); then the QP goes RESET -> RTS (libmlx5 restarts its indexes at 0, and so does
//! the direct writer; an RC QP and its partner are connected again) and the same shape is
//! posted through the direct writer and copied.
//!
//! Excluded, with the reason: which of the two BlueFlame buffers the bytes land in. libmlx5
//! toggles its offset in per-context state that `mlx5dv_init_obj` does not expose, on every
//! doorbell of the test's wr-API phases; the direct writer keeps its own (hardware takes a
//! doorbell or BlueFlame write in either buffer). The bytes written there are compared.
//!
//! At the ring's wrap: libmlx5 gets there by executing requests (the device runs them, their
//! completions free the ring); the direct writer is then put at the same index with the
//! test hook `Dci::diff_test_backend` (`RcQp::diff_test_backend`), as its RESET would put it
//! at 0.
//!
//! Opt-in (needs soft-mlx5's pause hook): `scripts/soft-mlx5 [--profile P] [--rdma-core
//! 44|59] -- cargo test --test direct_wqe -- --ignored`.
use mlx5dv::raw;
use mlx5dv::wr::{Batch, Ready, Transport, Wr};
use mlx5dv::{
    Access, Cq, DcKey, DcPeer, Dci, DciBuilder, Mlx5Context, Mr, PeerPath, RcCaps, RcQp, RemoteMemory, RtsAttr,
    SendBackend, Sge, WcStatus,
};
use mlx5dv_suite::device::{connect_rc, dct, loopback_path, open, pause_hook, PauseFn};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const KEY: DcKey = DcKey::new(0x0123_4567_89AB_CDEF);
const MTU: u32 = 1024;
/// Every test pauses the one device thread: one at a time.
static DEVICE: Mutex<()> = Mutex::new(());

/// Where libmlx5 says the QP's send queue is.
struct Ring {
    buf: *mut u8,
    len: usize,
    wqe_cnt: u32,
    dbrec: *mut u32,
    bf: *mut u8,
    bf_size: usize,
}

fn ring_of(qp: *mut raw::ibv_qp) -> Ring {
    // SAFETY: all-zero is valid for both out-structs.
    let mut out: raw::mlx5dv_qp = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut obj: raw::mlx5dv_obj = unsafe { std::mem::zeroed() };
    obj.qp.r#in = qp;
    obj.qp.out = &mut out;
    // SAFETY: a live mlx5 QP.
    assert_eq!(unsafe { raw::mlx5dv_init_obj(&mut obj, raw::MLX5DV_OBJ_QP) }, 0);
    Ring {
        buf: out.sq.buf.cast(),
        len: (out.sq.wqe_cnt * out.sq.stride) as usize,
        wqe_cnt: out.sq.wqe_cnt,
        // SAFETY: the record's send word.
        dbrec: unsafe { out.dbrec.add(raw::MLX5_SND_DBR as usize) },
        bf: out.bf.reg.cast(),
        bf_size: out.bf.size as usize,
    }
}

/// What a post left in the send queue.
#[derive(PartialEq, Eq, Debug)]
struct Capture {
    ring: Vec<u8>,
    dbrec: u32,
    /// The bytes of the BlueFlame buffer that was written (the 8-byte doorbell included).
    register: Vec<u8>,
}

impl Ring {
    /// A pattern no writer produces by chance in the ring, and zeros in the register.
    fn prefill(&self) {
        for i in 0..self.len {
            // SAFETY: within the ring; the device is paused, nothing else touches it.
            unsafe { self.buf.add(i).write((i as u8).wrapping_mul(13) ^ 0xA5) };
        }
        for i in 0..2 * self.register_len() {
            // SAFETY: the UAR page is plain shared memory on soft-mlx5, with both buffers.
            unsafe { self.bf.add(i).write_volatile(0) };
        }
    }

    fn register_len(&self) -> usize {
        self.bf_size.max(8)
    }

    fn capture(&self) -> Capture {
        // SAFETY: within the ring.
        let ring = unsafe { std::slice::from_raw_parts(self.buf, self.len) }.to_vec();
        // SAFETY: the doorbell record's send word.
        let dbrec = u32::from_be(unsafe { self.dbrec.read_volatile() });
        let n = self.register_len();
        let read = |from: usize| -> Vec<u8> {
            // SAFETY: within the register's two buffers (plain memory on soft-mlx5).
            (from..from + n)
                .map(|i| unsafe { self.bf.add(i).read_volatile() })
                .collect()
        };
        let (a, b) = (read(0), read(self.bf_size));
        let register = if a.iter().any(|&x| x != 0) { a } else { b };
        Capture { ring, dbrec, register }
    }
}

#[derive(Copy, Clone, Debug)]
enum OpKind {
    Send,
    SendImm,
    Write,
    WriteImm,
    Read,
    CmpSwap,
    FetchAdd,
}

#[derive(Copy, Clone, Debug)]
enum DataKind {
    Inline(usize),
    Sge(u32),
    List(usize),
}

#[derive(Copy, Clone, Debug)]
struct Shape {
    op: OpKind,
    data: DataKind,
    signaled: bool,
    fence: bool,
    solicited: bool,
    stream: Option<u16>,
    /// Requests in the batch (one doorbell).
    count: u64,
}

impl Shape {
    /// `count` requests of this shape in one batch, signaled or not.
    fn times(self, count: u64, signaled: bool) -> Shape {
        Shape {
            count,
            signaled,
            ..self
        }
    }

    fn new(op: OpKind, data: DataKind) -> Shape {
        Shape {
            op,
            data,
            signaled: true,
            fence: false,
            solicited: false,
            stream: None,
            count: 1,
        }
    }
}

/// The test's objects: the QP under test and what executes its requests, memory.
struct Bench {
    kind: Kind,
    cq: Cq,
    local: Mr,
    target: Mr,
    pause: PauseFn,
    atomics: bool,
    streams: bool,
    /// The DCT's GID on RoCE (the address vector then carries a GRH).
    gid: Option<[u8; 16]>,
}

/// The transport under test.
enum Kind {
    /// A DCI and the DCT that executes its requests.
    Dc {
        _dct: mlx5dv::Dct,
        peer: DcPeer,
        dci: Option<Dci<mlx5dv::state::Rts>>,
    },
    /// An RC QP and its partner (the target memory's side), connected over `path`.
    Rc {
        qp: Option<RcQp<mlx5dv::state::Rts>>,
        partner: Option<RcQp<mlx5dv::state::Rts>>,
        _partner_cq: Cq,
        port: u8,
        path: PeerPath,
        /// What the partner grants (remote atomics only where the device has them).
        access: Access,
    },
}

const TARGET_ACCESS: Access = Access::LOCAL_WRITE
    .union(Access::REMOTE_WRITE)
    .union(Access::REMOTE_READ)
    .union(Access::REMOTE_ATOMIC);

/// Up to 17 units of 16 bytes: either side of a 256-byte BlueFlame buffer.
const MAX_SGE: u32 = 13;

fn bench() -> Bench {
    let pause =
        pause_hook().expect("the differential test runs on soft-mlx5 (scripts/soft-mlx5): it pauses the device");
    let (ctx, port, gid_index) = open();
    let mlx5: Mlx5Context = ctx.mlx5().expect("mlx5");
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(256).unwrap();
    let dct_cq = ctx.create_cq(256).unwrap();
    let srq = pd.create_srq(64, 1).unwrap();
    let (d, mut addr) = dct(&mlx5, &pd, &dct_cq, &srq, port, gid_index, KEY, MTU, None);
    if let Some(i) = gid_index {
        addr.gid = ctx.query_gid(port, i).unwrap();
    }
    let ah = pd.create_ah(port, &PeerPath::to_dc_target(&addr, gid_index)).unwrap();
    let peer = DcPeer::new(&ah, &addr, KEY);
    let atomics = mlx5.has_atomics().unwrap();
    let streams = mlx5.caps().unwrap().dci_streams.is_some_and(|(c, _)| c >= 2);
    let mut b = DciBuilder::new(&mlx5, &pd, &cq)
        .max_send_wr(32)
        .max_inline_data(64)
        .max_send_sge(MAX_SGE);
    if atomics {
        b = b.with_atomics();
    }
    if streams {
        b = b.streams(2, 1);
    }
    let dci = b.build_ready(port, MTU, RtsAttr::default()).expect("DCI to RTS");
    Bench {
        kind: Kind::Dc {
            _dct: d,
            peer,
            dci: Some(dci),
        },
        cq,
        local: pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap(),
        target: pd.alloc_mr(4096, TARGET_ACCESS).unwrap(),
        pause,
        atomics,
        streams,
        gid: gid_index.map(|_| addr.gid),
    }
}

/// As [`bench`], for an RC QP connected to a partner on the same port.
fn bench_rc() -> Bench {
    let pause =
        pause_hook().expect("the differential test runs on soft-mlx5 (scripts/soft-mlx5): it pauses the device");
    let (ctx, port, gid_index) = open();
    let mlx5: Mlx5Context = ctx.mlx5().expect("mlx5");
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(256).unwrap();
    let partner_cq = ctx.create_cq(256).unwrap();
    let caps = RcCaps {
        max_send_wr: 32,
        max_recv_wr: 16,
        max_send_sge: MAX_SGE,
        max_recv_sge: 1,
        max_inline_data: 64,
    };
    let qp = pd.create_rc_qp(&cq, None, caps).unwrap();
    let partner = pd.create_rc_qp(&partner_cq, None, caps).unwrap();
    let path = loopback_path(&ctx, port, gid_index);
    let atomics = mlx5.has_atomics().unwrap();
    let access = if atomics {
        TARGET_ACCESS
    } else {
        Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ
    };
    let (qp, partner) = connect_rc(port, path, MTU, (qp, Access::LOCAL_WRITE), (partner, access));
    Bench {
        kind: Kind::Rc {
            qp: Some(qp),
            partner: Some(partner),
            _partner_cq: partner_cq,
            port,
            path,
            access,
        },
        cq,
        local: pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap(),
        target: pd.alloc_mr(4096, access).unwrap(),
        pause,
        atomics,
        streams: false,
        gid: None,
    }
}

/// The request of `s` numbered `i`, with its flags, on any transport.
fn request<'b, 'q, T: Transport>(
    batch: &'b mut Batch<'q, T>,
    s: &Shape,
    i: u64,
    remote: RemoteMemory,
) -> Wr<'b, 'q, T, T::Start> {
    let wr = match s.op {
        OpKind::Send => batch.send(i),
        OpKind::SendImm => batch.send_imm(i, 0xC0DE_0000 | i as u32),
        OpKind::Write => batch.rdma_write(i, remote),
        OpKind::WriteImm => batch.rdma_write_imm(i, remote, 0xBEEF_0000 | i as u32),
        OpKind::Read => batch.rdma_read(i, remote),
        OpKind::CmpSwap => batch.atomic_cmp_swp(i, remote, 0x1111_2222_3333_4444, 0x5555_6666_7777_8888),
        OpKind::FetchAdd => batch.atomic_fetch_add(i, remote, 0x0102_0304_0506_0708),
    };
    let wr = if s.signaled { wr } else { wr.unsignaled() };
    let wr = if s.fence { wr.fence() } else { wr };
    if s.solicited {
        wr.solicited()
    } else {
        wr
    }
}

/// The data step of `s`.
fn finish<T: Transport>(
    wr: Wr<'_, '_, T, Ready>,
    s: &Shape,
    payload: &[u8],
    one: Sge<'_>,
    list: &[Sge<'_>],
) -> mlx5dv::Result<()> {
    match s.data {
        DataKind::Inline(n) => wr.inline(&payload[..n]),
        DataKind::Sge(_) => wr.sge(one),
        DataKind::List(_) => wr.sge_list(list),
    }
}

impl Bench {
    fn qp_raw(&self) -> *mut raw::ibv_qp {
        match &self.kind {
            Kind::Dc { dci, .. } => dci.as_ref().unwrap().as_raw(),
            Kind::Rc { qp, .. } => qp.as_ref().unwrap().as_raw(),
        }
    }

    fn ring(&self) -> Ring {
        ring_of(self.qp_raw())
    }

    /// RESET -> RTS (an RC QP connected to its partner again), then `backend` from ring index
    /// `cur_post`.
    fn restart(&mut self, backend: SendBackend, cur_post: u32) {
        let cq = &self.cq;
        match &mut self.kind {
            Kind::Dc { dci, .. } => {
                let d = dci.take().unwrap().recover().expect("RESET -> RTS");
                let d = dci.insert(d);
                // SAFETY: right after the recovery, nothing outstanding; cur_post is 0
                // (libmlx5's after RESET) or where libmlx5 got to (the wrap case).
                unsafe { d.diff_test_backend(cq, backend, cur_post) }.expect("backend");
            }
            Kind::Rc {
                qp,
                partner,
                port,
                path,
                access,
                ..
            } => {
                let a = qp.take().unwrap().reset().expect("RESET");
                let b = partner.take().unwrap().reset().expect("RESET");
                let (a, b) = connect_rc(*port, *path, MTU, (a, Access::LOCAL_WRITE), (b, *access));
                *partner = Some(b);
                let a = qp.insert(a);
                // SAFETY: as above: connected again after the RESET, nothing outstanding.
                unsafe { a.diff_test_backend(cq, backend, cur_post) }.expect("backend");
            }
        }
    }

    fn remote(&self, len: u64) -> RemoteMemory {
        self.target.remote().unwrap().slice(256, len).unwrap()
    }

    /// Posts `s` in one batch.
    fn post(&mut self, s: &Shape) -> mlx5dv::Result<()> {
        let payload: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(7) ^ 0x3C).collect();
        let (lkey_len, list_len) = match s.data {
            DataKind::Sge(n) => (n, 0),
            DataKind::List(k) => (16, k),
            DataKind::Inline(_) => (0, 0),
        };
        let len = match (s.op, s.data) {
            (OpKind::CmpSwap | OpKind::FetchAdd, _) => 8,
            (_, DataKind::Inline(n)) => n as u64,
            (_, DataKind::Sge(n)) => u64::from(n),
            (_, DataKind::List(k)) => 16 * k as u64,
        };
        let remote = self.remote(len.max(8));
        let local = &self.local;
        let one = local.sge(
            64,
            if matches!(s.op, OpKind::CmpSwap | OpKind::FetchAdd) {
                8
            } else {
                lkey_len.max(1) as usize
            },
        )?;
        let list: Vec<_> = (0..list_len).map(|i| local.sge(512 + 64 * i, 16).unwrap()).collect();
        match &mut self.kind {
            Kind::Dc { dci, peer, .. } => {
                let mut batch = dci.as_mut().unwrap().batch();
                for i in 0..s.count {
                    let wr = request(&mut batch, s, i, remote);
                    let wr = match s.stream {
                        Some(id) => wr.to_stream(peer, id),
                        None => wr.to(peer),
                    };
                    finish(wr, s, &payload, one, &list)?;
                }
                batch.commit()
            }
            Kind::Rc { qp, .. } => {
                let mut batch = qp.as_mut().unwrap().batch();
                for i in 0..s.count {
                    finish(request(&mut batch, s, i, remote), s, &payload, one, &list)?;
                }
                batch.commit()
            }
        }
    }

    /// Writes executed by the device until libmlx5's ring index is `at` (from 0): on a DCI 2-
    /// and 3-block inline RDMA writes, on RC 1-block ones, each waited for.
    fn advance_to(&mut self, at: u32) {
        let rc = matches!(self.kind, Kind::Rc { .. });
        let mut pos = 0;
        while pos < at {
            let left = at - pos;
            // DC: 2 blocks: 5 + 3 units (44 bytes); 3 blocks: 5 + 4 units (60 bytes).
            // RC: 1 block: 2 + 1 units (12 bytes).
            let (n, bbs) = match (rc, left) {
                (true, _) => (12, 1),
                (false, 3 | 5..) => (60, 3),
                (false, _) => (44, 2),
            };
            assert!(rc || left >= 2, "cannot advance a DCI by one block with writes");
            self.post(&Shape::new(OpKind::Write, DataKind::Inline(n)))
                .expect("filler write");
            let mut c = [mlx5dv::Completion::default(); 4];
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let k = self.cq.poll(&mut c).unwrap();
                if k > 0 {
                    assert_eq!(c[0].status, WcStatus::Success, "filler write");
                    break;
                }
                assert!(Instant::now() < deadline, "filler write never completed");
            }
            pos += bbs;
        }
    }

    /// The shape through both backends, from ring index `at`; both captures.
    fn both(&mut self, s: &Shape, at: u32) -> (Capture, Capture) {
        self.restart(SendBackend::WrApi, 0);
        self.advance_to(at);
        let ring = self.ring();
        assert_eq!(
            u32::from_be(unsafe { ring.dbrec.read_volatile() }),
            at,
            "libmlx5's index after the fillers"
        );
        // SAFETY: the hook takes an int and returns once the device thread is idle.
        unsafe { (self.pause)(1) };
        ring.prefill();
        self.post(s).unwrap_or_else(|e| panic!("{s:?} through the wr API: {e}"));
        let lib = ring.capture();
        self.restart(SendBackend::Direct, at);
        ring.prefill();
        self.post(s)
            .unwrap_or_else(|e| panic!("{s:?} through the direct writer: {e}"));
        let direct = ring.capture();
        // Unexecuted WQEs: the next RESET discards them.
        self.restart(SendBackend::WrApi, 0);
        // SAFETY: as above.
        unsafe { (self.pause)(0) };
        (lib, direct)
    }
}

/// Names the WQE field at `offset` bytes from a WQE's control segment (a DC WQE's when `dc`).
fn field_at(offset: usize, dc: bool) -> &'static str {
    match (offset, dc) {
        (0..=3, _) => "ctrl.opmod_idx_opcode",
        (4..=7, _) => "ctrl.qpn_ds",
        (8, _) => "ctrl.signature",
        (9..=10, _) => "ctrl.dci_stream_channel_id",
        (11, _) => "ctrl.fm_ce_se",
        (12..=15, _) => "ctrl.imm",
        (16..=23, true) => "av.key.dc_key",
        (24..=27, true) => "av.dqp_dct",
        (28..=63, true) => "av (from the AH)",
        (_, true) => "segments after the address vector (raddr / atomic / data / inline)",
        (_, false) => "segments after the control segment (raddr / atomic / data / inline)",
    }
}

/// With `MLX5_QP_SIGNATURE` set (the QPs were created with WQE signatures): the signature bytes
/// of the batch's WQEs that wrap at the ring's end, each checked as the device checks it
/// (the inverted xor of the WQE's units as fetched, wrapping), and the differences. libmlx5's
/// `calc_sig` reads on linearly past the ring's end for such a WQE (what lies beyond the send
/// queue, not the ring's first bytes), so there its byte is not the reference. Also whether
/// the batch's last WQE (the one copied to the BlueFlame register) is one of them.
fn wrapped_signatures(s: &Shape, start: usize, direct: &[u8]) -> (Vec<usize>, bool, Vec<String>) {
    let (mut exempt, mut last, mut out) = (Vec::new(), false, Vec::new());
    if std::env::var_os("MLX5_QP_SIGNATURE").is_none() {
        return (exempt, last, out);
    }
    let len = direct.len();
    let mut pos = start;
    for k in 0..s.count {
        let units = usize::from(direct[(pos + 7) % len] & 0x3f);
        last = pos + units * 16 > len && k + 1 == s.count;
        if pos + units * 16 > len {
            exempt.push((pos + 8) % len);
            let x = (0..units * 16).fold(0u8, |x, i| x ^ direct[(pos + i) % len]);
            if x != 0xff {
                out.push(format!(
                    "{s:?}: the WQE at ring byte {pos:#x} wraps and its signature does not make its xor 0xff ({x:#04x})"
                ));
            }
        }
        pos = (pos + units.div_ceil(4) * 64) % len;
    }
    (exempt, last, out)
}

/// Every difference between the two captures, said in WQE fields.
fn diff(s: &Shape, at: u32, wqe_cnt: u32, dc: bool, lib: &Capture, direct: &Capture) -> Vec<String> {
    let len = lib.ring.len();
    let start = (at % wqe_cnt) as usize * 64;
    let (exempt, last_wraps, mut out) = wrapped_signatures(s, start, &direct.ring);
    for (i, (a, b)) in lib.ring.iter().zip(&direct.ring).enumerate() {
        if a != b && !exempt.contains(&i) {
            let rel = (i + len - start) % len;
            out.push(format!(
                "{s:?} at index {at}: ring byte {i:#x} (+{rel:#x}, {}): libmlx5 {a:#04x}, direct {b:#04x}",
                field_at(rel % (len.max(1)), dc)
            ));
            if out.len() > 8 {
                break;
            }
        }
    }
    if lib.dbrec != direct.dbrec {
        out.push(format!(
            "{s:?}: doorbell record libmlx5 {:#x}, direct {:#x}",
            lib.dbrec, direct.dbrec
        ));
    }
    // The register holds the last WQE's copy: its signature byte as the ring's, checked above.
    let register_differs = if last_wraps && lib.register.len() > 8 && direct.register.len() > 8 {
        let (mut l, mut d) = (lib.register.clone(), direct.register.clone());
        let sig = *exempt.last().unwrap_or(&0);
        // A BlueFlame copy (an 8-byte doorbell leaves the rest of the buffer zero).
        let copied = d.iter().skip(8).any(|&b| b != 0);
        if copied && d[8] != direct.ring[sig] {
            out.push(format!("{s:?}: the register's signature byte is not the ring's"));
        }
        (l[8], d[8]) = (0, 0);
        l != d
    } else {
        lib.register != direct.register
    };
    if register_differs {
        out.push(format!(
            "{s:?}: BlueFlame/doorbell register bytes differ:\n  libmlx5 {:02x?}\n  direct  {:02x?}",
            lib.register, direct.register
        ));
    }
    out
}

fn assert_no_difference(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn shapes(b: &Bench) -> Vec<Shape> {
    use DataKind::*;
    use OpKind::*;
    let mut v = Vec::new();
    for op in [Send, SendImm, Write, WriteImm] {
        for data in [
            Inline(0),
            Inline(1),
            Inline(12),
            Inline(28),
            Inline(60),
            Inline(64),
            Sge(40),
            Sge(1),
            List(1),
            List(3),
            List(11),
            List(12),
            List(MAX_SGE as usize),
        ] {
            v.push(Shape::new(op, data));
        }
    }
    for data in [Sge(40), Sge(1), List(2)] {
        v.push(Shape::new(Read, data));
    }
    if b.atomics {
        v.push(Shape::new(CmpSwap, Sge(8)));
        v.push(Shape::new(FetchAdd, Sge(8)));
    }
    let mut flagged = Vec::new();
    for base in [
        Shape::new(Send, Inline(12)),
        Shape::new(Write, Sge(40)),
        Shape::new(Read, Sge(40)),
    ] {
        flagged.push(Shape {
            signaled: false,
            ..base
        });
        flagged.push(Shape { fence: true, ..base });
        flagged.push(Shape {
            solicited: true,
            ..base
        });
        flagged.push(Shape {
            fence: true,
            signaled: false,
            ..base
        });
        flagged.push(Shape { count: 3, ..base });
        flagged.push(Shape {
            count: 2,
            signaled: false,
            ..base
        });
        if b.streams {
            flagged.push(Shape {
                stream: Some(1),
                ..base
            });
            flagged.push(Shape {
                stream: Some(3),
                fence: true,
                ..base
            });
        }
    }
    if b.atomics {
        flagged.push(Shape {
            fence: true,
            ..Shape::new(FetchAdd, Sge(8))
        });
        flagged.push(Shape {
            signaled: false,
            ..Shape::new(CmpSwap, Sge(8))
        });
    }
    v.extend(flagged);
    v
}

/// Every shape of [`shapes`] from ring index 0, both backends; the differences.
fn compare_every_shape(b: &mut Bench) -> Vec<String> {
    let ring = b.ring();
    let (wqe_cnt, dc) = (ring.wqe_cnt, matches!(b.kind, Kind::Dc { .. }));
    eprintln!("BlueFlame buffer: {} bytes", ring.bf_size);
    let mut failures = Vec::new();
    let all = shapes(b);
    for (i, s) in all.iter().enumerate() {
        let (lib, direct) = b.both(s, 0);
        if let (0, Some(gid)) = (i, b.gid) {
            // RoCE: the address vector (from byte 16) carries the GRH with the DCT's GID.
            assert_eq!(&lib.ring[16 + 32..16 + 48], &gid, "libmlx5's AV has the GID");
            assert_ne!(gid, [0; 16]);
        }
        failures.extend(diff(s, 0, wqe_cnt, dc, &lib, &direct));
    }
    eprintln!(
        "{} shapes compared (DC {dc}, atomics {}, streams {}), ring of {wqe_cnt} blocks",
        all.len(),
        b.atomics,
        b.streams
    );
    failures
}

/// Each `(index, shape)` from that ring index, and each atomic (where the device has them) in
/// the ring's last block, both backends; the differences.
fn compare_at(b: &mut Bench, cases: &[(u32, Shape)]) -> Vec<String> {
    let (n, dc) = (b.ring().wqe_cnt, matches!(b.kind, Kind::Dc { .. }));
    let mut cases = cases.to_vec();
    if b.atomics {
        for op in [OpKind::CmpSwap, OpKind::FetchAdd] {
            cases.push((n - 1, Shape::new(op, DataKind::Sge(8))));
        }
    }
    let mut failures = Vec::new();
    for (at, s) in &cases {
        let (lib, direct) = b.both(s, *at);
        failures.extend(diff(s, *at, n, dc, &lib, &direct));
    }
    eprintln!(
        "{} shapes compared at the wrap of a ring of {n} blocks (DC {dc})",
        cases.len()
    );
    failures
}

#[test]
#[ignore = "needs soft-mlx5: scripts/soft-mlx5 -- cargo test --test direct_wqe -- --ignored"]
fn direct_wqes_equal_libmlx5s_for_every_request_shape() {
    let _one = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    assert_no_difference(&compare_every_shape(&mut bench()));
}

#[test]
#[ignore = "needs soft-mlx5: scripts/soft-mlx5 -- cargo test --test direct_wqe -- --ignored"]
fn rc_direct_wqes_equal_libmlx5s_for_every_request_shape() {
    let _one = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    assert_no_difference(&compare_every_shape(&mut bench_rc()));
}

#[test]
#[ignore = "needs soft-mlx5: scripts/soft-mlx5 -- cargo test --test direct_wqe -- --ignored"]
fn direct_wqes_equal_libmlx5s_at_the_rings_wrap() {
    use DataKind::*;
    use OpKind::*;
    let _one = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let mut b = bench();
    let n = b.ring().wqe_cnt;
    let cases = [
        // Control and address vector in the last block: the next segment is the ring's first.
        (n - 1, Shape::new(Send, Sge(40))),
        (n - 1, Shape::new(Send, Inline(60))),
        (n - 1, Shape::new(Write, Inline(28))),
        (n - 1, Shape::new(WriteImm, List(MAX_SGE as usize))),
        (n - 1, Shape::new(Read, Sge(40))),
        // The inline bytes or the SGE list cross the ring's end.
        (n - 2, Shape::new(Write, Inline(60))),
        (n - 2, Shape::new(SendImm, Inline(64))),
        (n - 2, Shape::new(Send, List(MAX_SGE as usize))),
        // A batch whose second request starts at the ring's first block.
        (n - 2, Shape::new(Write, Sge(40)).times(2, true)),
        (n - 3, Shape::new(Send, Inline(12)).times(3, false)),
    ];
    assert_no_difference(&compare_at(&mut b, &cases));
}

#[test]
#[ignore = "needs soft-mlx5: scripts/soft-mlx5 -- cargo test --test direct_wqe -- --ignored"]
fn rc_direct_wqes_equal_libmlx5s_at_the_rings_wrap() {
    use DataKind::*;
    use OpKind::*;
    let _one = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let mut b = bench_rc();
    let n = b.ring().wqe_cnt;
    let cases = [
        // A one-block request in the ring's last block.
        (n - 1, Shape::new(Send, Sge(40))),
        (n - 1, Shape::new(Write, Sge(40))),
        (n - 1, Shape::new(Read, Sge(40))),
        (
            n - 1,
            Shape {
                fence: true,
                ..Shape::new(Read, Sge(40))
            },
        ),
        // The inline bytes or the SGE list cross the ring's end.
        (n - 1, Shape::new(Write, Inline(60))),
        (n - 1, Shape::new(SendImm, Inline(64))),
        (n - 1, Shape::new(Send, List(MAX_SGE as usize))),
        (n - 2, Shape::new(WriteImm, List(MAX_SGE as usize))),
        (n - 1, Shape::new(Send, Inline(28))),
        // A batch whose later requests start at the ring's first block.
        (n - 1, Shape::new(Write, Sge(40)).times(2, true)),
        (n - 2, Shape::new(Send, Inline(28)).times(3, false)),
    ];
    assert_no_difference(&compare_at(&mut b, &cases));
}

#[test]
#[ignore = "needs soft-mlx5: scripts/soft-mlx5 -- cargo test --test direct_wqe -- --ignored"]
fn a_direct_dci_needs_a_direct_cq_and_a_wr_api_dci_refuses_one_both_einval_naming_the_cq() {
    let (ctx, port, _) = open();
    let mlx5 = ctx.mlx5().expect("mlx5");
    let pd = ctx.alloc_pd().unwrap();
    let plain = ctx.create_cq(256).unwrap();
    let direct = ctx.create_direct_cq(256).unwrap();
    let err = DciBuilder::new(&mlx5, &pd, &plain)
        .backend(SendBackend::Direct)
        .build()
        .expect_err("a direct DCI on libmlx5's CQ");
    assert_eq!(err.errno(), Some(libc::EINVAL));
    assert!(err.to_string().contains("needs a direct CQ"), "{err}");
    let err = DciBuilder::new(&mlx5, &pd, &direct)
        .build()
        .expect_err("a wr-API DCI on a direct CQ");
    assert_eq!(err.errno(), Some(libc::EINVAL));
    assert!(
        err.to_string().contains("serves only DCIs with the direct backend"),
        "{err}"
    );
    let dci = DciBuilder::new(&mlx5, &pd, &direct)
        .backend(SendBackend::Direct)
        .build_ready(port, MTU, RtsAttr::default())
        .expect("a direct DCI on a direct CQ");
    assert_eq!(dci.backend(), SendBackend::Direct);
    let dci = DciBuilder::new(&mlx5, &pd, &plain)
        .build_ready(port, MTU, RtsAttr::default())
        .expect("a wr-API DCI on libmlx5's CQ");
    assert_eq!(dci.backend(), SendBackend::WrApi);
}

#[test]
#[ignore = "needs soft-mlx5: scripts/soft-mlx5 -- cargo test --test direct_wqe -- --ignored"]
fn a_direct_dci_refuses_a_peer_whose_adopted_ah_has_no_mlx5_address_vector_and_stays_usable() {
    let _one = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let (ctx, port, gid_index) = open();
    let mlx5 = ctx.mlx5().expect("mlx5");
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_direct_cq(256).unwrap();
    let dct_cq = ctx.create_cq(64).unwrap();
    let srq = pd.create_srq(16, 1).unwrap();
    let (_dct, mut addr) = dct(&mlx5, &pd, &dct_cq, &srq, port, gid_index, KEY, MTU, None);
    if let Some(i) = gid_index {
        addr.gid = ctx.query_gid(port, i).unwrap();
    }
    let path = PeerPath::to_dc_target(&addr, gid_index);
    let mut attr = raw::ibv_ah_attr {
        port_num: port,
        dlid: addr.lid,
        ..Default::default()
    };
    if let Some(i) = gid_index {
        attr.is_global = 1;
        attr.grh.dgid = raw::ibv_gid { raw: addr.gid };
        attr.grh.sgid_index = i;
        attr.grh.hop_limit = 64;
    }
    // SAFETY: the PD is live; the attributes are initialised.
    let ah = std::ptr::NonNull::new(unsafe { raw::ibv_create_ah(pd.as_raw(), &mut attr) }).expect("raw AH");
    // SAFETY: a live AH nothing else destroys; its PD outlives it (dropped last here).
    let adopted = unsafe { mlx5dv::Ah::from_raw(ah) };
    let mut dci = DciBuilder::new(&mlx5, &pd, &cq)
        .backend(SendBackend::Direct)
        .build_ready(port, MTU, RtsAttr::default())
        .unwrap();
    let target = pd.alloc_mr(64, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    let remote = target.remote().unwrap();
    let mut batch = dci.batch();
    let err = batch
        .rdma_write(1, remote)
        .to(&DcPeer::new(&adopted, &addr, KEY))
        .inline(b"x")
        .expect_err("no address vector to copy");
    assert_eq!(err.errno(), Some(libc::EINVAL));
    assert!(err.to_string().contains("no mlx5 address vector"), "{err}");
    // The batch stays usable: the same request through an AH of the crate's completes.
    let ah = pd.create_ah(port, &path).unwrap();
    batch
        .rdma_write(2, remote)
        .to(&DcPeer::new(&ah, &addr, KEY))
        .inline(b"y")
        .unwrap();
    batch.commit().unwrap();
    let mut c = [mlx5dv::Completion::default(); 2];
    let deadline = Instant::now() + Duration::from_secs(10);
    while cq.poll(&mut c).unwrap() == 0 {
        assert!(Instant::now() < deadline, "no completion");
    }
    assert_eq!((c[0].wr_id, c[0].status), (2, WcStatus::Success));
    let mut seen = [0u8; 1];
    target.read(0, &mut seen).unwrap();
    assert_eq!(&seen, b"y");
}
