//! Support for the workspace tests and benches: the layout tables (C probe and Rust), the
//! C recording function table of the ABI test and the C reference post path.
#![deny(unsafe_op_in_unsafe_fn)]

pub use mlx5dv_raw as raw;

/// A global allocator that counts the allocations of the thread that asks
/// ([`alloc_count::allocations_in`]), for the tests that prove a path allocates nothing. A test
/// binary installs it with `#[global_allocator] static GLOBAL: Counting = Counting;`.
pub mod alloc_count {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The counting allocator (forwards to the system allocator).
    pub struct Counting;
    static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

    thread_local! {
        // Only the measuring thread counts: libtest's other threads allocate at any time.
        static COUNTING: Cell<bool> = const { Cell::new(false) };
    }

    fn count() {
        if COUNTING.with(|c| c.get()) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
    }

    // SAFETY: forwards to the system allocator, counting calls.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            count();
            // SAFETY: same contract as the caller's.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: same contract as the caller's.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            count();
            // SAFETY: same contract as the caller's.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    /// Runs `f` and returns its result with the allocations (and reallocations) this thread
    /// made meanwhile. Counts only where `Counting` is the global allocator.
    pub fn allocations_in<R>(f: impl FnOnce() -> R) -> (R, usize) {
        COUNTING.with(|c| c.set(true));
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let r = f();
        let n = ALLOCATIONS.load(Ordering::Relaxed) - before;
        COUNTING.with(|c| c.set(false));
        (r, n)
    }
}

/// Layout tables and their comparison.
pub mod layout {
    use super::raw;
    use std::collections::BTreeMap;
    use std::ffi::CStr;
    use std::os::raw::{c_char, c_int, c_ulong};

    /// What an entry describes.
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub enum Kind {
        /// A struct or union: `a` = size, `b` = alignment.
        Type,
        /// A field: `a` = offset, `b` = size, `c` = alignment.
        Field,
        /// A constant: `a` = value.
        Const,
        /// An enum type: `a` = size, `b` = 1 if signed.
        Enum,
    }

    /// One measured item.
    #[derive(Clone, Debug)]
    pub struct Entry {
        /// Type or constant name.
        pub ty: &'static str,
        /// Field name for fields.
        pub field: Option<&'static str>,
        /// See [`Kind`].
        pub a: i64,
        /// See [`Kind`].
        pub b: i64,
        /// See [`Kind`].
        pub c: i64,
        /// What it is.
        pub kind: Kind,
    }

    /// Size and alignment of a field's type, without reading anything.
    #[macro_export]
    macro_rules! field_size_align {
        ($t:ty, $f:ident) => {{
            let uninit = core::mem::MaybeUninit::<$t>::uninit();
            let base = uninit.as_ptr();
            // SAFETY: only the address of the field is taken; nothing is read.
            let field = unsafe { core::ptr::addr_of!((*base).$f) };
            (
                $crate::layout::size_of_pointee(field),
                $crate::layout::align_of_pointee(field),
            )
        }};
    }

    /// `size_of` the pointee.
    pub fn size_of_pointee<T>(_: *const T) -> usize {
        core::mem::size_of::<T>()
    }

    /// `align_of` the pointee.
    pub fn align_of_pointee<T>(_: *const T) -> usize {
        core::mem::align_of::<T>()
    }

    include!(concat!(env!("OUT_DIR"), "/layout_rust.rs"));

    #[repr(C)]
    struct CEntry {
        ty: *const c_char,
        field: *const c_char,
        a: i64,
        b: i64,
        c: i64,
        kind: c_int,
    }

    extern "C" {
        static m5dv_layout_c: [CEntry; 0];
        static m5dv_layout_c_len: c_ulong;
        static m5dv_layout_c_version: c_int;
    }

    /// One entry of the C probe, owned.
    #[derive(Clone, Debug)]
    pub struct CItem {
        /// Type or constant name.
        pub ty: String,
        /// Field name.
        pub field: Option<String>,
        /// See [`Kind`].
        pub a: i64,
        /// See [`Kind`].
        pub b: i64,
        /// See [`Kind`].
        pub c: i64,
        /// What it is.
        pub kind: Kind,
    }

    /// The C probe's table, as compiled against the headers under test.
    pub fn c_table() -> Vec<CItem> {
        // SAFETY: the generated C defines the array with m5dv_layout_c_len entries whose
        // strings are static NUL-terminated literals (or NULL for `field`).
        unsafe {
            let base = core::ptr::addr_of!(m5dv_layout_c).cast::<CEntry>();
            (0..m5dv_layout_c_len as usize)
                .map(|i| {
                    let e = &*base.add(i);
                    CItem {
                        ty: CStr::from_ptr(e.ty).to_string_lossy().into_owned(),
                        field: (!e.field.is_null()).then(|| CStr::from_ptr(e.field).to_string_lossy().into_owned()),
                        a: e.a,
                        b: e.b,
                        c: e.c,
                        kind: match e.kind {
                            0 => Kind::Type,
                            1 => Kind::Field,
                            2 => Kind::Const,
                            _ => Kind::Enum,
                        },
                    }
                })
                .collect()
        }
    }

    /// The rdma-core version the C probe was built for.
    pub fn c_version() -> i32 {
        // SAFETY: a plain `const int` defined by the generated probe.
        unsafe { m5dv_layout_c_version }
    }

    fn key(ty: &str, field: Option<&str>) -> String {
        match field {
            Some(f) => format!("{ty}.{f}"),
            None => ty.to_string(),
        }
    }

    /// Every C item compared with its Rust twin: the rules of the layout test.
    ///
    /// Types: Rust size >= C size (newest layout; growth is append-only), alignment equal.
    /// Fields: offset, size and alignment equal. Constants: value equal. Enums: width and
    /// signedness equal. Returns one line per violation.
    pub fn compare(c: &[CItem], rust: &[Entry]) -> Vec<String> {
        let rust: BTreeMap<String, &Entry> = rust.iter().map(|e| (key(e.ty, e.field), e)).collect();
        let mut errors = Vec::new();
        for item in c {
            let k = key(&item.ty, item.field.as_deref());
            let Some(r) = rust.get(&k) else {
                errors.push(format!("{k}: in the C probe but not measured on the Rust side"));
                continue;
            };
            match item.kind {
                Kind::Type => {
                    if r.a < item.a {
                        errors.push(format!(
                            "{k}: Rust size {} < C size {} (the library would write past it)",
                            r.a, item.a
                        ));
                    }
                    if r.b != item.b {
                        errors.push(format!("{k}: Rust alignment {} != C alignment {}", r.b, item.b));
                    }
                }
                Kind::Field => {
                    if (r.a, r.b, r.c) != (item.a, item.b, item.c) {
                        errors.push(format!(
                            "{k}: Rust offset/size/align {}/{}/{} != C {}/{}/{}",
                            r.a, r.b, r.c, item.a, item.b, item.c
                        ));
                    }
                }
                Kind::Const => {
                    if r.a != item.a {
                        errors.push(format!("{k}: Rust value {:#x} != C value {:#x}", r.a, item.a));
                    }
                }
                Kind::Enum => {
                    if (r.a, r.b) != (item.a, item.b) {
                        errors.push(format!(
                            "{k}: Rust size/signed {}/{} != C {}/{}",
                            r.a, r.b, item.a, item.b
                        ));
                    }
                }
            }
        }
        errors
    }

    /// Checks that the C fields known to Rust cover every struct of the header, leaving only
    /// alignment padding: a field the header has and Rust lacks shows up as a gap, an overlap or
    /// a tail. Unions: the largest member, rounded to the alignment, is the size.
    pub fn coverage_gaps(c: &[CItem], unions: &[&str]) -> Vec<String> {
        let mut errors = Vec::new();
        for ty in c.iter().filter(|i| i.kind == Kind::Type) {
            let mut fields: Vec<&CItem> = c.iter().filter(|i| i.kind == Kind::Field && i.ty == ty.ty).collect();
            fields.sort_by_key(|f| f.a);
            let (size, align) = (ty.a, ty.b);
            if unions.contains(&ty.ty.as_str()) {
                let largest = fields.iter().map(|f| f.b).max().unwrap_or(0);
                if (largest + align - 1) / align * align != size {
                    errors.push(format!(
                        "union {}: members reach {largest} bytes but the union has {size}",
                        ty.ty
                    ));
                }
                continue;
            }
            let mut end = 0;
            for f in &fields {
                let name = f.field.as_deref().unwrap_or("?");
                if f.a < end {
                    errors.push(format!(
                        "{}.{name}: overlaps the previous field (offset {} < {end})",
                        ty.ty, f.a
                    ));
                } else if f.a - end >= f.c {
                    errors.push(format!(
                        "{}.{name}: {} unexplained bytes before it at offset {end}: the header has a field Rust lacks",
                        ty.ty,
                        f.a - end
                    ));
                }
                end = end.max(f.a + f.b);
            }
            if size - end >= align {
                errors.push(format!(
                    "{}: {} unexplained bytes after the last field (offset {end} of {size}): the header has a field Rust lacks",
                    ty.ty,
                    size - end
                ));
            }
        }
        errors
    }

    /// Keeps `raw` referenced for the generated table.
    #[doc(hidden)]
    pub fn _raw_link() -> usize {
        core::mem::size_of::<raw::ibv_sge>()
    }
}

/// The C recording function table (`tests/c/abi_recorder.c`) and the C reference post path.
pub mod recorder {
    use super::raw::*;
    use std::ffi::CStr;
    use std::os::raw::{c_char, c_int, c_uint, c_ulong, c_void};
    use std::sync::{Mutex, MutexGuard, OnceLock};

    /// The last call an entry of the fake tables received.
    #[repr(C)]
    #[derive(Copy, Clone, Debug)]
    pub struct Rec {
        /// Entries called since the last reset.
        pub calls: c_ulong,
        op: *const c_char,
        /// The object the entry was called on.
        pub obj: *const c_void,
        /// Scalar arguments in order (zero-extended).
        pub a: [u64; 6],
        /// Pointer arguments in order.
        pub p: [*const c_void; 3],
        /// `ibv_qp_ex.wr_id` when the entry ran.
        pub wr_id: u64,
        /// `ibv_qp_ex.wr_flags` when the entry ran.
        pub wr_flags: c_uint,
    }

    impl Rec {
        /// Name of the entry (`wr_send`, `poll_cq`, ...), empty if none was called.
        pub fn op(&self) -> &'static str {
            if self.op.is_null() {
                return "";
            }
            // SAFETY: the recorder stores pointers to static string literals only.
            unsafe { CStr::from_ptr(self.op) }.to_str().unwrap_or("?")
        }
    }

    extern "C" {
        fn m5dv_rec_init();
        fn m5dv_rec_reset();
        fn m5dv_rec_last(out: *mut Rec);
        fn m5dv_rec_set_return(value: i64);
        fn m5dv_rec_qp_ex() -> *mut ibv_qp_ex;
        fn m5dv_rec_mqp() -> *mut mlx5dv_qp_ex;
        fn m5dv_rec_cq_ex() -> *mut ibv_cq_ex;
        fn m5dv_rec_context() -> *mut ibv_context;
        fn m5dv_rec_srq() -> *mut ibv_srq;
        /// The C reference DC send: start, wr_id/flags, send, set_dc_addr, set_sge, complete.
        pub fn m5dv_c_dc_send(
            qpx: *mut ibv_qp_ex,
            mqp: *mut mlx5dv_qp_ex,
            ah: *mut ibv_ah,
            dctn: u32,
            dc_key: u64,
            lkey: u32,
            addr: u64,
            length: u32,
            wr_id: u64,
        ) -> c_int;
        /// `n` C reference DC sends in a C loop (wr_ids `wr_id..wr_id + n`): 0, or the first
        /// failure of `ibv_wr_complete`.
        pub fn m5dv_c_dc_send_loop(
            qpx: *mut ibv_qp_ex,
            mqp: *mut mlx5dv_qp_ex,
            ah: *mut ibv_ah,
            dctn: u32,
            dc_key: u64,
            lkey: u32,
            addr: u64,
            length: u32,
            wr_id: u64,
            n: u64,
        ) -> c_int;
        /// The C reference RC write: start, wr_id/flags, rdma_write, set_sge, complete.
        pub fn m5dv_c_rc_write(
            qpx: *mut ibv_qp_ex,
            rkey: u32,
            remote_addr: u64,
            lkey: u32,
            addr: u64,
            length: u32,
            wr_id: u64,
        ) -> c_int;
    }

    /// Exclusive use of the process-wide recorder (tests run in threads).
    pub struct Recorder {
        _guard: MutexGuard<'static, ()>,
    }

    /// Takes the recorder, with fresh fake objects and return value 0.
    pub fn recorder() -> Recorder {
        static LOCK: OnceLock<Mutex<()>> = OnceLock::new();
        let guard = LOCK
            .get_or_init(|| Mutex::new(()))
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // SAFETY: resets static fake objects; the lock keeps other threads out.
        unsafe { m5dv_rec_init() };
        Recorder { _guard: guard }
    }

    impl Recorder {
        /// The last call recorded.
        pub fn last(&self) -> Rec {
            let mut rec = std::mem::MaybeUninit::<Rec>::uninit();
            // SAFETY: writes a whole Rec.
            unsafe {
                m5dv_rec_last(rec.as_mut_ptr());
                rec.assume_init()
            }
        }
        /// Forgets the calls so far.
        pub fn reset(&self) {
            // SAFETY: plain store into the recorder's static.
            unsafe { m5dv_rec_reset() }
        }
        /// What every value-returning entry returns from now on (cast to its type).
        pub fn set_return(&self, value: i64) {
            // SAFETY: plain store into the recorder's static.
            unsafe { m5dv_rec_set_return(value) }
        }
        /// The fake `ibv_qp_ex`.
        pub fn qp_ex(&self) -> *mut ibv_qp_ex {
            // SAFETY: returns the address of a static.
            unsafe { m5dv_rec_qp_ex() }
        }
        /// The fake `mlx5dv_qp_ex`.
        pub fn mqp(&self) -> *mut mlx5dv_qp_ex {
            // SAFETY: returns the address of a static.
            unsafe { m5dv_rec_mqp() }
        }
        /// The fake `ibv_cq_ex`.
        pub fn cq_ex(&self) -> *mut ibv_cq_ex {
            // SAFETY: returns the address of a static.
            unsafe { m5dv_rec_cq_ex() }
        }
        /// The fake `ibv_context` (inside a `verbs_context`).
        pub fn context(&self) -> *mut ibv_context {
            // SAFETY: returns the address of a static.
            unsafe { m5dv_rec_context() }
        }
        /// The fake `ibv_srq`.
        pub fn srq(&self) -> *mut ibv_srq {
            // SAFETY: returns the address of a static.
            unsafe { m5dv_rec_srq() }
        }
    }
}

/// Safe-crate handles around the recorder's fake objects, for the post-path test and bench.
pub mod fake {
    use super::raw;
    use super::recorder::Recorder;
    use mlx5dv::{state, Ah, DcKey, DcPeer, DcTargetAddr, Dci, DciParts, Mtu, RcQp, RtsAttr, Sge};
    use std::mem::ManuallyDrop;
    use std::ptr::NonNull;

    /// A DCI, an RC QP and an AH over the recorder's tables. Never dropped for real: the fake
    /// objects are static and must not reach `ibv_destroy_*`.
    pub struct FakeQps {
        /// DCI in RTS with every DCI operation enabled and streams.
        pub dci: ManuallyDrop<Dci<state::Rts>>,
        /// RC QP in RTS with every operation enabled.
        pub rc: ManuallyDrop<RcQp<state::Rts>>,
        /// Address handle (a fake pointer, only recorded).
        pub ah: ManuallyDrop<Ah>,
    }

    /// All send operations the batches know.
    pub const ALL_OPS: u64 = mlx5dv::rc::RC_DEFAULT_SEND_OPS as u64;

    /// Capacities of the fake QPs: room for every request the tests build.
    pub const FAKE_CAPS: raw::ibv_qp_cap = raw::ibv_qp_cap {
        max_send_wr: 1 << 15,
        max_recv_wr: 0,
        max_send_sge: 16,
        max_recv_sge: 0,
        max_inline_data: 256,
    };

    /// How the fake DCI is described: every operation, streams, [`FAKE_CAPS`], no CQ.
    pub fn fake_dci_parts() -> DciParts<'static> {
        DciParts {
            send_ops: ALL_OPS,
            dci_streams: true,
            caps: FAKE_CAPS,
            port: 1,
            pkey_index: 0,
            mtu: raw::IBV_MTU_1024,
            rts: RtsAttr::default(),
            device: "fake0",
            cq: None,
        }
    }

    /// A successful completion of request `wr_id`, to give send-queue credit back on the fakes
    /// (no CQ feeds them).
    pub fn completed(wr_id: u64) -> mlx5dv::Completion {
        mlx5dv::Completion {
            wr_id,
            ..Default::default()
        }
    }

    /// Builds the fakes.
    pub fn fakes(r: &Recorder) -> FakeQps {
        fakes_of_depth(r, FAKE_CAPS.max_send_wr)
    }

    /// Builds the fakes with send queues of `max_send_wr` requests (the crate's count keeps a
    /// slot per request: a bench wants the depth of a real queue, whose slots stay in cache).
    pub fn fakes_of_depth(r: &Recorder, max_send_wr: u32) -> FakeQps {
        let caps = raw::ibv_qp_cap {
            max_send_wr,
            ..FAKE_CAPS
        };
        let qpx = NonNull::new(r.qp_ex()).unwrap();
        let mqp = NonNull::new(r.mqp()).unwrap();
        // SAFETY: the recorder's fake tables have every entry set (streams included); the
        // handles are never dropped, so no destroy call reaches them.
        unsafe {
            FakeQps {
                dci: ManuallyDrop::new(
                    Dci::from_raw_parts(
                        qpx,
                        mqp,
                        DciParts {
                            caps,
                            ..fake_dci_parts()
                        },
                    )
                    .expect("no CQ given: nothing to refuse"),
                ),
                rc: ManuallyDrop::new(RcQp::from_raw_parts(qpx, ALL_OPS, caps, "fake0")),
                ah: ManuallyDrop::new(Ah::from_raw(NonNull::new(0x1000 as *mut raw::ibv_ah).unwrap())),
            }
        }
    }

    /// A DC peer at DCT `dctn` with `key`, through `ah`.
    pub fn peer(ah: &Ah, dctn: u32, key: u64) -> DcPeer {
        let addr = DcTargetAddr {
            lid: 1,
            gid: [0; 16],
            dct_number: dctn,
            port_mtu: Mtu::Mtu1024,
            out_of_order: false,
        };
        DcPeer::new(ah, &addr, DcKey::new(key))
    }

    /// A scatter/gather entry with any values (the recorder only records them).
    pub fn sge(addr: u64, length: u32, lkey: u32) -> Sge<'static> {
        // SAFETY: only ever passed to the recording table, which reads no memory.
        unsafe { Sge::from_raw(raw::ibv_sge { addr, length, lkey }) }
    }
}

/// The device the opt-in device tests run on (soft-mlx5 in CI, a ConnectX-5+ when present).
/// xorshift64: reproducible randomness for traffic and faults.
pub struct Rng(pub u64);

impl Rng {
    /// The next number (the state must not be 0).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The bytes of `seed` that the S3-over-RDMA tests and the rendezvous protocol exchange
/// (tests/s3ref/PROTOCOL.md): byte k is `(k * 7 + seed) % 251`, so never 0xff.
pub fn s3_pattern(len: usize, seed: u64) -> Vec<u8> {
    (0..len as u64).map(|k| ((k * 7 + seed) % 251) as u8).collect()
}

/// A buffer of `len` bytes filled with `s3_pattern(seed)`, registered with local access only
/// (tokens grant the remote rights) and exposed behind `client`.
///
/// # Panics
/// When the registration or the exposure fails.
pub fn s3_exposed(pd: &mlx5dv::Pd, client: &mlx5dv::s3::Client, len: usize, seed: u8) -> mlx5dv::s3::Exposed<Vec<u8>> {
    let mr = pd
        .register(s3_pattern(len, u64::from(seed)), mlx5dv::Access::LOCAL_WRITE)
        .expect("register");
    client.expose(mr).expect("expose")
}

/// One emulated node's device, its mlx5 context and a PD, for the S3 executor's tests.
pub struct S3Node {
    pub ctx: mlx5dv::Context,
    pub mlx5: mlx5dv::Mlx5Context,
    pub pd: mlx5dv::Pd,
}

impl S3Node {
    /// The test device ([`device::open`]), its mlx5 context and a PD.
    ///
    /// # Panics
    /// When the device is not an mlx5 one, or no PD can be made.
    pub fn open() -> S3Node {
        let (ctx, _, _) = device::open();
        let mlx5 = ctx.mlx5().expect("an mlx5 device");
        let pd = ctx.alloc_pd().expect("PD");
        S3Node { ctx, mlx5, pd }
    }

    /// An executor with `key`, the executor's defaults but for `f`, on the test backend
    /// ([`device::test_backend`]), a dead client failing in a few milliseconds (ACK timeout
    /// 10, 2 retries) on the proven DCIs, and a CQ of 1,024.
    ///
    /// # Panics
    /// When the executor cannot be made.
    pub fn executor(
        &self,
        key: mlx5dv::DcKey,
        f: impl FnOnce(&mut mlx5dv::s3::ExecutorConfig),
    ) -> mlx5dv::s3::Executor {
        let mut cfg = mlx5dv::s3::ExecutorConfig {
            key,
            ..mlx5dv::s3::ExecutorConfig::default()
        };
        cfg.pool.backend = device::test_backend();
        cfg.pool.rts.timeout = 10;
        cfg.pool.rts.retry_cnt = 2;
        f(&mut cfg);
        mlx5dv::s3::Executor::new(&self.mlx5, &self.pd, device::pool_cq(&self.ctx, 1024), cfg).expect("executor")
    }
}

pub mod device {
    use mlx5dv::rc::{RcQp, RcRemote};
    use mlx5dv::{
        devices, state, Access, Context, Cq, DcKey, DcTargetAddr, Dct, DctBuilder, Mlx5Context, Pd, PeerPath, RtsAttr,
        Srq,
    };

    /// A DCT on `srq` with `key` and path MTU `mtu` (`access`: the builder's default when
    /// None; by GID index on RoCE), taken to RTR, and the address initiators reach it at.
    ///
    /// # Panics
    /// When the DCT cannot be built: the test's device is unusable.
    #[allow(clippy::too_many_arguments)]
    pub fn dct(
        mlx5: &Mlx5Context,
        pd: &Pd,
        cq: &Cq,
        srq: &Srq,
        port: u8,
        gid_index: Option<u8>,
        key: DcKey,
        mtu: u32,
        access: Option<Access>,
    ) -> (Dct, DcTargetAddr) {
        let b = DctBuilder::new(mlx5, pd, cq, srq, key).port(port).mtu(mtu);
        // The suite's DCTs are written to and read from unless a test says otherwise.
        let b = b.access(access.unwrap_or(Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ));
        let dct = match gid_index {
            Some(g) => b.gid_index(g),
            None => b,
        }
        .build()
        .expect("DCT to RTR");
        let addr = dct.target_addr().expect("the DCT's address");
        (dct, addr)
    }

    /// The path from `port` back to itself (by GID index on RoCE, by LID on InfiniBand).
    ///
    /// # Panics
    /// When the port or GID cannot be queried.
    pub fn loopback_path(ctx: &Context, port: u8, gid_index: Option<u8>) -> PeerPath {
        match gid_index {
            Some(g) => PeerPath::Gid {
                sl: 0,
                gid: ctx.query_gid(port, g).unwrap(),
                sgid_index: g,
                hop_limit: 1,
                traffic_class: 0,
                flow_label: 0,
            },
            None => PeerPath::Lid {
                lid: ctx.query_port(port).unwrap().0.lid,
                sl: 0,
            },
        }
    }

    /// Connects `a` and `b` (in RESET) to each other over `path` on `port` with path MTU
    /// `mtu`, granting peers `a_access` and `b_access`; both in RTS.
    ///
    /// # Panics
    /// When a transition fails.
    pub fn connect_rc(
        port: u8,
        path: PeerPath,
        mtu: u32,
        (a, a_access): (RcQp<state::Reset>, Access),
        (b, b_access): (RcQp<state::Reset>, Access),
    ) -> (RcQp<state::Rts>, RcQp<state::Rts>) {
        let remote = |qp_num| RcRemote {
            qp_num,
            psn: 0,
            path,
            mtu_bytes: mtu,
            max_dest_rd_atomic: 4,
            min_rnr_timer: 12,
        };
        let a = a.init(port, a_access).unwrap();
        let b = b.init(port, b_access).unwrap();
        let rts = RtsAttr {
            max_rd_atomic: 4,
            ..RtsAttr::default()
        };
        let a_num = a.qp_num();
        let a = a.rtr(&remote(b.qp_num())).unwrap();
        let b = b.rtr(&remote(a_num)).unwrap();
        let a = a.rts(rts).unwrap();
        let b = b.rts(rts).unwrap();
        (a, b)
    }

    /// A dma-buf of `len` bytes from the kernel's udmabuf driver (memfd pages), if it exists.
    pub fn udmabuf(len: u64) -> Option<std::os::fd::OwnedFd> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let dev = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/udmabuf")
            .ok()?;
        // SAFETY: plain syscalls on descriptors this function owns.
        unsafe {
            let memfd = libc::memfd_create(c"mlx5dv-udmabuf".as_ptr(), libc::MFD_ALLOW_SEALING);
            if memfd < 0 || libc::ftruncate(memfd, len as libc::off_t) != 0 {
                return None;
            }
            libc::fcntl(memfd, libc::F_ADD_SEALS, libc::F_SEAL_SHRINK);
            #[repr(C)]
            struct Create {
                memfd: u32,
                flags: u32,
                offset: u64,
                size: u64,
            }
            let create = Create {
                memfd: memfd as u32,
                flags: 0,
                offset: 0,
                size: len,
            };
            // UDMABUF_CREATE = _IOW('u', 0x42, struct udmabuf_create)
            let req = (1u64 << 30) | ((std::mem::size_of::<Create>() as u64) << 16) | (u64::from(b'u') << 8) | 0x42;
            let fd = libc::ioctl(dev.as_raw_fd(), req as _, &create);
            libc::close(memfd);
            (fd >= 0).then(|| std::os::fd::OwnedFd::from_raw_fd(fd))
        }
    }

    /// Opens `MLX5DV_TEST_DEVICE`: the context, port 1, and `MLX5DV_TEST_GID_INDEX` (RoCE).
    ///
    /// # Panics
    /// Without `MLX5DV_TEST_DEVICE`, or when it names no listed device: the opt-in tests were
    /// asked for without one.
    pub fn open() -> (Context, u8, Option<u8>) {
        let Ok(name) = std::env::var("MLX5DV_TEST_DEVICE") else {
            panic!("this test needs MLX5DV_TEST_DEVICE naming an mlx5 device (soft-mlx5: scripts/soft-mlx5)");
        };
        let gid_index = std::env::var("MLX5DV_TEST_GID_INDEX").ok().and_then(|g| g.parse().ok());
        let list = devices().expect("device list");
        let dev = list
            .iter()
            .find(|d| d.name() == name)
            .expect("MLX5DV_TEST_DEVICE is listed");
        (dev.open().expect("open"), 1, gid_index)
    }

    /// The send backend the DC suites run their DCIs on: `MLX5DV_TEST_BACKEND=direct` for the
    /// direct writer, unset or `wr` for libmlx5's wr API.
    ///
    /// # Panics
    /// For another value: the run asked for a backend that does not exist.
    pub fn test_backend() -> mlx5dv::SendBackend {
        match std::env::var("MLX5DV_TEST_BACKEND").as_deref() {
            Err(_) | Ok("wr") => mlx5dv::SendBackend::WrApi,
            Ok("direct") => mlx5dv::SendBackend::Direct,
            Ok(other) => panic!("MLX5DV_TEST_BACKEND={other}: use `direct` or `wr`"),
        }
    }

    /// A CQ for a pool's DCIs of [`test_backend`] (a direct CQ on the direct backend).
    ///
    /// # Panics
    /// When it cannot be created.
    pub fn pool_cq(ctx: &Context, cqe: u32) -> Cq {
        match test_backend() {
            mlx5dv::SendBackend::Direct => ctx.create_direct_cq(cqe).expect("direct CQ"),
            _ => ctx.create_cq(cqe).expect("CQ"),
        }
    }

    /// The pool defaults, on [`test_backend`].
    pub fn test_pool_config() -> mlx5dv::PoolConfig {
        mlx5dv::PoolConfig {
            backend: test_backend(),
            ..mlx5dv::PoolConfig::default()
        }
    }

    /// The CQs of a DC test: the one its DCTs report to, and the DCIs' (the same one on the wr
    /// API; on the direct backend a direct CQ of their own, which only direct DCIs may use).
    /// Derefs to the DCTs' CQ; [`TestCq::poll`] polls both.
    pub struct TestCq {
        recv: Cq,
        send: Option<Cq>,
    }

    impl TestCq {
        /// CQs of `cqe` entries for [`test_backend`].
        ///
        /// # Panics
        /// When a CQ cannot be created.
        pub fn new(ctx: &Context, cqe: u32) -> TestCq {
            let send = match test_backend() {
                mlx5dv::SendBackend::Direct => Some(ctx.create_direct_cq(cqe).expect("direct CQ")),
                _ => None,
            };
            TestCq {
                recv: ctx.create_cq(cqe).expect("CQ"),
                send,
            }
        }

        /// The CQ for the DCIs (build them with `.backend(test_backend())`).
        pub fn send(&self) -> &Cq {
            self.send.as_ref().unwrap_or(&self.recv)
        }

        /// Polls the DCTs' CQ, then the DCIs' if it is another one, into `out`.
        ///
        /// # Errors
        /// As [`Cq::poll`].
        pub fn poll(&self, out: &mut [mlx5dv::Completion]) -> mlx5dv::Result<usize> {
            let n = self.recv.poll(out)?;
            match &self.send {
                Some(send) if n < out.len() => Ok(n + send.poll(&mut out[n..])?),
                _ => Ok(n),
            }
        }
    }

    impl std::ops::Deref for TestCq {
        type Target = Cq;
        fn deref(&self) -> &Cq {
            &self.recv
        }
    }

    /// soft-mlx5's test hook `soft_mlx5_test_pause(1/0)`: stops (1) or restarts (0) the
    /// emulated device thread, so posted WQEs stay unexecuted. None when this process does
    /// not run on soft-mlx5 (a ConnectX cannot be paused).
    pub type PauseFn = unsafe extern "C" fn(libc::c_int);

    /// The emulator's pause hook, when this process runs on soft-mlx5.
    pub fn pause_hook() -> Option<PauseFn> {
        // SAFETY: the preload exports it with exactly this signature.
        soft_mlx5_hook(c"soft_mlx5_test_pause").map(|sym| unsafe { std::mem::transmute::<_, PauseFn>(sym) })
    }

    /// soft-mlx5's test hook `soft_mlx5_test_fatal()`: the device fails for good (a firmware
    /// fatal error, PCI error or hot unplug) and the kernel disassociates every open context:
    /// DEVICE_FATAL on the async event files, completion channels that read EIO and poll as
    /// EPOLLERR alone, EIO for every command but the destroys, nothing executed any more, for
    /// the rest of the process.
    pub type FatalFn = unsafe extern "C" fn();

    /// The emulator's fatal hook, when this process runs on soft-mlx5.
    pub fn fatal_hook() -> Option<FatalFn> {
        // SAFETY: the preload exports it with exactly this signature.
        soft_mlx5_hook(c"soft_mlx5_test_fatal").map(|sym| unsafe { std::mem::transmute::<_, FatalFn>(sym) })
    }

    /// soft-mlx5's test hook `soft_mlx5_test_fail_commands(command, count, errno)`: the next
    /// `count` uverbs commands numbered `command` fail with `errno` (a negative count changes
    /// nothing); returns how many were still to fail.
    pub type FailCommandsFn = unsafe extern "C" fn(libc::c_uint, libc::c_int, libc::c_int) -> libc::c_int;

    /// The emulator's command-failure hook, when this process runs on soft-mlx5.
    pub fn fail_commands_hook() -> Option<FailCommandsFn> {
        // SAFETY: the preload exports it with exactly this signature.
        soft_mlx5_hook(c"soft_mlx5_test_fail_commands")
            .map(|sym| unsafe { std::mem::transmute::<_, FailCommandsFn>(sym) })
    }

    /// IB_USER_VERBS_CMD_ALLOC_PD (rdma/ib_user_verbs.h): what ibv_alloc_pd writes.
    pub const CMD_ALLOC_PD: libc::c_uint = 3;
    /// IB_USER_VERBS_CMD_MODIFY_QP (rdma/ib_user_verbs.h): what ibv_modify_qp writes.
    pub const CMD_MODIFY_QP: libc::c_uint = 26;

    /// An error as a kernel gives one: ENOMEM from a command it could not allocate for
    /// (`fail_commands` fails one ALLOC_PD on `ctx`): the reason a runtime or a server gives
    /// a device up with.
    ///
    /// # Panics
    /// When ALLOC_PD does not fail (the hook is not soft-mlx5's).
    pub fn kernel_enomem(ctx: &Context, fail_commands: FailCommandsFn) -> mlx5dv::Error {
        // SAFETY: the emulator's hook, with its C types.
        unsafe { fail_commands(CMD_ALLOC_PD, 1, libc::ENOMEM) };
        ctx.alloc_pd().expect_err("ALLOC_PD failing with ENOMEM")
    }

    /// Set in the child process [`own_process`] starts.
    const OWN_PROCESS: &str = "MLX5DV_TEST_OWN_PROCESS";

    /// Whether this process runs test `name`'s body: true in the child this starts (this
    /// binary again, `name` alone, same soft-mlx5 environment); elsewhere it runs that child,
    /// fails when it does not pass its one test within 120 s (killing it then), and returns
    /// false. For a device going fatal ([`fatal_hook`]), which it stays for the rest of its
    /// process, as the kernel's disassociation does to the contexts open on it.
    ///
    /// # Panics
    /// When the child fails, hangs or cannot be started.
    pub fn own_process(name: &str) -> bool {
        use std::process::{Command, Stdio};
        use std::time::Duration;
        if std::env::var_os(OWN_PROCESS).is_some() {
            return true;
        }
        let exe = std::env::current_exe().expect("this test binary");
        let child = Command::new(exe)
            .args([name, "--exact", "--include-ignored", "--test-threads=1", "--nocapture"])
            .env(OWN_PROCESS, "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the test's own process");
        let pid = child.id() as libc::pid_t;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(child.wait_with_output()));
        let Ok(out) = rx.recv_timeout(Duration::from_secs(120)) else {
            // SAFETY: kill(2) of the child started above, which has not been waited for.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("{name}: its process hung (killed after 120 s)");
        };
        let out = out.expect("wait for the test's own process");
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && text.contains("test result: ok. 1 passed"),
            "{name} in its own process:\n{text}"
        );
        if text.contains("not run") {
            eprintln!("not run (in its own process): no soft-mlx5 here");
        }
        false
    }

    fn soft_mlx5_hook(name: &std::ffi::CStr) -> Option<*mut libc::c_void> {
        // SAFETY: dlsym with a NUL-terminated name; RTLD_DEFAULT searches the loaded objects.
        let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        (!sym.is_null()).then_some(sym)
    }

    /// The device of the hardware-tier tests (tests/hw_dc.rs, tests/dc_table.rs): opened from
    /// `MLX5DV_TEST_DEVICE`, on `MLX5DV_TEST_PORT` (default 1) and, on RoCE,
    /// `MLX5DV_TEST_GID_INDEX`; the DC key and path MTU its DCTs are built with.
    pub struct Hw {
        /// The open device.
        pub ctx: Context,
        /// The port.
        pub port: u8,
        /// The GID index (RoCE).
        pub gid_index: Option<u8>,
        /// The DC key of the DCTs [`Hw::dct_builder`] makes.
        pub key: DcKey,
        /// Their path MTU in bytes.
        pub mtu: u32,
    }

    /// Opens the hardware tier's device (see [`Hw`]).
    ///
    /// # Panics
    /// Without `MLX5DV_TEST_DEVICE`, when it names no listed device, or on a RoCE port without
    /// `MLX5DV_TEST_GID_INDEX`: the opt-in tests were asked for without what they need.
    pub fn hw(key: DcKey, mtu: u32) -> Hw {
        let Ok(name) = std::env::var("MLX5DV_TEST_DEVICE") else {
            panic!("the DC hardware tests need MLX5DV_TEST_DEVICE naming a ConnectX-5+ device (e.g. mlx5_0)");
        };
        let port = std::env::var("MLX5DV_TEST_PORT")
            .ok()
            .and_then(|p| p.parse().ok())
            .unwrap_or(1);
        let gid_index = std::env::var("MLX5DV_TEST_GID_INDEX").ok().and_then(|g| g.parse().ok());
        let list = devices().expect("device list");
        let dev = list
            .iter()
            .find(|d| d.name() == name)
            .unwrap_or_else(|| panic!("MLX5DV_TEST_DEVICE={name} is not listed: {list:?}"));
        let ctx = dev.open().expect("open device");
        let eth = ctx.query_port(port).expect("port").link_layer_str() == "Ethernet";
        assert!(
            !eth || gid_index.is_some(),
            "{name} port {port} is RoCE: set MLX5DV_TEST_GID_INDEX"
        );
        Hw {
            ctx,
            port,
            gid_index,
            key,
            mtu,
        }
    }

    impl Hw {
        /// The address of DCT `dct_number` on this port (in-order placement, MTU 1024).
        ///
        /// # Panics
        /// When the port or GID cannot be queried.
        pub fn addr_of(&self, dct_number: u32) -> DcTargetAddr {
            let port = self.ctx.query_port(self.port).expect("port");
            let gid = self
                .gid_index
                .map(|i| self.ctx.query_gid(self.port, i).expect("gid"))
                .unwrap_or([0; 16]);
            DcTargetAddr {
                lid: port.lid(),
                gid,
                dct_number,
                port_mtu: mlx5dv::Mtu::Mtu1024,
                out_of_order: false,
            }
        }

        /// The address of DCT `dct_number` on this port and an address handle leading to it.
        ///
        /// # Panics
        /// When the address handle cannot be created.
        pub fn ah_to(&self, pd: &Pd, dct_number: u32) -> (DcTargetAddr, mlx5dv::Ah) {
            let addr = self.addr_of(dct_number);
            let ah = pd
                .create_ah(self.port, &PeerPath::to_dc_target(&addr, self.gid_index))
                .expect("address handle to the DCT");
            (addr, ah)
        }

        /// A DCT builder on this port with the key and MTU, minimum RNR timer 12, remote write
        /// and read access, and the GID index on RoCE.
        pub fn dct_builder<'a>(&self, mlx5: &'a Mlx5Context, pd: &'a Pd, cq: &'a Cq, srq: &'a Srq) -> DctBuilder<'a> {
            let b = DctBuilder::new(mlx5, pd, cq, srq, self.key)
                .port(self.port)
                .mtu(self.mtu)
                .min_rnr_timer(12)
                .access(Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ);
            match self.gid_index {
                Some(i) => b.gid_index(i),
                None => b,
            }
        }
    }

    /// Polls `cq` (both of its CQs) until `n` completions came.
    ///
    /// # Panics
    /// On a poll error, or after 10 s without them.
    pub fn wait(cq: &TestCq, n: usize) -> Vec<mlx5dv::Completion> {
        let mut got = Vec::new();
        let mut buf = [mlx5dv::Completion::default(); 32];
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while got.len() < n {
            let k = cq.poll(&mut buf).expect("poll");
            got.extend_from_slice(&buf[..k]);
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {n} completions, got {got:?}"
            );
        }
        got
    }
}
