//! Ownership, threads and memory the application owns, end to end on an mlx5 device
//! (soft-mlx5 in CI, tier 3; a ConnectX-5+ when present): one struct owning every DC object
//! moves into a thread and into a tokio task and carries DC traffic there; memory the
//! application owns (a `Vec`, anonymous and file mappings, a borrowed slice, a dma-buf where
//! the device takes one) is registered, written over DC, and handed back.
//!
//! Opt-in like tests/hw_dc.rs: `MLX5DV_TEST_DEVICE=mlx5_0 cargo test --test ownership --
//! --ignored` (`MLX5DV_TEST_GID_INDEX` on RoCE). What the machine cannot offer (huge pages,
//! a dma-buf exporter) is printed as "not run".
use mlx5dv::endpoint::PoolConfig;
use mlx5dv::{
    Access, Completion, Context, Cq, DcKey, DcPeer, DciBuilder, DciPool, Dct, DctBuilder, DmaBuf, EndpointId,
    EpCompletion, MmapBuf, Mr, Pd, PeerPath, RemoteMemory, Request, RtsAttr, Srq, WcStatus,
};
use mlx5dv_suite::device::{fatal_hook, open, own_process, pause_hook};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

#[path = "shared/tokio_runtime.rs"]
mod tokio_runtime;
use tokio_runtime::runtime;

const KEY: DcKey = DcKey::new(0x0B1E_C7ED);
const CHUNK: usize = 64;
const WRITES: usize = 32;

/// A DCT (on its own CQ and SRQ) and the peer that reaches it.
fn target(ctx: &Context, pd: &Pd, port: u8, gid_index: Option<u8>) -> (Cq, Srq, Dct, DcPeer) {
    let mlx5 = ctx.mlx5().expect("mlx5");
    let cq = ctx.create_cq(64).expect("CQ");
    let srq = pd.create_srq(16, 1).expect("SRQ");
    let mtu = ctx.query_port(port).expect("port").active_mtu_bytes();
    let (dct, addr) = mlx5dv_suite::device::dct(&mlx5, pd, &cq, &srq, port, gid_index, KEY, mtu, None);
    let ah = pd
        .create_ah(port, &PeerPath::to_dc_target(&addr, gid_index))
        .expect("address handle");
    (cq, srq, dct, DcPeer::new(&ah, &addr, KEY))
}

/// Everything one DC node needs, owned by one value: no borrows, so it can move anywhere.
struct DcNode {
    _ctx: Context,
    _pd: Pd,
    _rx_cq: Cq,
    _srq: Srq,
    _dct: Dct,
    pool: DciPool,
    ep: EndpointId,
    /// The send buffer, rewritten between posts while the pool holds it.
    src: Mr<Vec<u8>>,
    /// Where the DC writes land (the DCT's side).
    dst: Mr<Vec<u8>>,
    dst_remote: RemoteMemory,
}

impl DcNode {
    fn new(with_channel: bool) -> DcNode {
        let (ctx, port, gid_index) = open();
        let mlx5 = ctx.mlx5().expect("mlx5");
        let pd = ctx.alloc_pd().expect("PD");
        let (rx_cq, srq, dct, peer) = target(&ctx, &pd, port, gid_index);
        let pool_cq = if with_channel {
            ctx.create_cq_with_channel(256)
        } else {
            ctx.create_cq(256)
        }
        .expect("pool CQ");
        let cfg = PoolConfig {
            dcis: 2,
            max_endpoints: 4,
            port,
            ..PoolConfig::default()
        };
        let mut pool = DciPool::new(&mlx5, &pd, pool_cq, cfg).expect("pool");
        let src = pd
            .register(vec![0u8; CHUNK], Access::LOCAL_WRITE)
            .expect("register a Vec");
        let dst = pd
            .register(vec![0u8; CHUNK * WRITES], Access::LOCAL_WRITE | Access::REMOTE_WRITE)
            .expect("register a Vec for remote writes");
        pool.hold(&src).expect("the pool holds the send buffer");
        let ep = pool.add_endpoint(peer).expect("endpoint");
        let dst_remote = dst.remote().expect("remote access");
        DcNode {
            _ctx: ctx,
            _pd: pd,
            _rx_cq: rx_cq,
            _srq: srq,
            _dct: dct,
            pool,
            ep,
            src,
            dst,
            dst_remote,
        }
    }

    /// Rewrites the send buffer with `i`'s pattern and posts it to slot `i`.
    fn post(&mut self, i: usize) {
        self.src
            .write(0, &[i as u8 + 1; CHUNK])
            .expect("rewrite the send buffer");
        let req = Request::Write {
            local: self.src.sge(0, CHUNK).expect("sge"),
            remote: self.dst_remote.slice((i * CHUNK) as u64, CHUNK as u64).expect("slot"),
        };
        self.pool.post(self.ep, i as u64, req).expect("post");
    }

    fn check(&self, c: &EpCompletion, i: usize) {
        assert_eq!((c.endpoint, c.wr_id, c.status), (self.ep, i as u64, WcStatus::Success));
    }

    /// `WRITES` DC writes, one at a time (the buffer is rewritten only once the previous one
    /// completed), polling the pool.
    fn run(&mut self) {
        let mut out = [EpCompletion::default(); 4];
        for i in 0..WRITES {
            self.post(i);
            let until = Instant::now() + Duration::from_secs(10);
            loop {
                assert!(Instant::now() < until, "write {i} did not complete");
                let n = self.pool.poll(&mut out).expect("poll");
                if n > 0 {
                    self.check(&out[0], i);
                    break;
                }
            }
        }
    }

    /// As `run`, but waiting for each completion through the CQ's completion channel with
    /// tokio's `AsyncFd`, never spinning; what failed, naming the write. It waits for the
    /// channel to be readable or in error: once the device is gone (a fatal error, a PCI error
    /// or a hot unplug disassociates the context) the kernel closes the channel's queue, which
    /// then polls as EPOLLERR alone and reads EIO (uverbs_main.c, `ib_uverbs_event_poll`,
    /// `ib_uverbs_event_read`); tokio wakes no task waiting for `Interest::READABLE` alone on
    /// that, only one waiting for `Interest::ERROR`.
    async fn run_async(&mut self) -> Result<(), String> {
        struct Fd(RawFd);
        impl AsRawFd for Fd {
            fn as_raw_fd(&self) -> RawFd {
                self.0
            }
        }
        let fd = self.pool.cq().channel().expect("a CQ with a channel").as_raw_fd();
        // SAFETY: the channel's descriptor stays open while the pool lives, and the pool (borrowed
        // by this call) outlives the AsyncFd, dropped when this function returns.
        let interest = tokio::io::Interest::READABLE | tokio::io::Interest::ERROR;
        let afd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(Fd(fd), interest) }.expect("AsyncFd");
        let mut out = [EpCompletion::default(); 4];
        let mut waits = 0;
        for i in 0..WRITES {
            self.post(i);
            loop {
                self.pool.cq().req_notify(false).expect("arm");
                // Drain what arrived before arming, then sleep until the channel says more did.
                if self.pool.poll(&mut out).expect("poll") > 0 {
                    self.check(&out[0], i);
                    break;
                }
                let mut ready = tokio::time::timeout(Duration::from_secs(10), afd.ready(interest))
                    .await
                    .map_err(|_| format!("write {i}: no completion event within 10 s"))?
                    .expect("readiness");
                while self.pool.cq().try_event().map_err(|e| format!("write {i}: {e}"))? {}
                ready.clear_ready();
                waits += 1;
            }
        }
        assert!(waits > 0, "the task never waited on the channel");
        Ok(())
    }

    /// Every slot holds its write's pattern, read back from the Vec the region returns.
    fn finish(self) {
        let DcNode { pool, dst, src, .. } = self;
        drop(pool);
        let src = src.deregister().expect("the pool is gone: the send buffer comes back");
        assert_eq!(src, vec![WRITES as u8; CHUNK], "the last pattern written");
        let dst = dst.deregister().expect("deregister the target");
        for i in 0..WRITES {
            assert_eq!(&dst[i * CHUNK..(i + 1) * CHUNK], &[i as u8 + 1; CHUNK][..], "slot {i}");
        }
    }
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn a_struct_owning_every_dc_object_moves_into_a_spawned_thread_and_carries_dc_writes_there() {
    let node = DcNode::new(false);
    let node = std::thread::spawn(move || {
        let mut node = node;
        node.run();
        node
    })
    .join()
    .expect("the thread ran the traffic");
    node.finish();
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn a_struct_owning_every_dc_object_runs_in_a_tokio_task_awaiting_completions_through_the_channel() {
    let rt = runtime();
    let node = DcNode::new(true);
    let node = rt
        .block_on(async move {
            tokio::spawn(async move {
                let mut node = node;
                node.run_async().await.expect("the traffic");
                node
            })
            .await
        })
        .expect("the task ran the traffic");
    node.finish();
}

/// The device is lost (soft-mlx5's fatal hook: a firmware fatal error, PCI error or hot
/// unplug, the kernel disassociating the context) while a tokio task awaits a completion
/// through the channel (the device paused: the write cannot complete first). The channel then
/// polls as EPOLLERR alone: the task must wake at once and fail with EIO from reading it,
/// not sleep until its 10 s timeout (for ever, without one) as a task waiting for
/// `Interest::READABLE` alone does. In a process of its own: the device stays dead.
#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn a_task_awaiting_the_channel_wakes_and_fails_with_eio_once_the_device_is_lost() {
    if !own_process("a_task_awaiting_the_channel_wakes_and_fails_with_eio_once_the_device_is_lost") {
        return;
    }
    let (Some(pause), Some(fatal)) = (pause_hook(), fatal_hook()) else {
        eprintln!("not run: no soft-mlx5 here (a ConnectX cannot be made to fail)");
        return;
    };
    let rt = runtime();
    let node = DcNode::new(true);
    // SAFETY: the emulator's hook: 1 pauses the device thread.
    unsafe { pause(1) };
    let task = rt.spawn(async move {
        let mut node = node;
        let result = node.run_async().await;
        (node, result)
    });
    // Let the task post its first write and go to sleep on the channel.
    std::thread::sleep(Duration::from_millis(200));
    let lost = Instant::now();
    // SAFETY: the emulator's hooks: the device goes fatal, then its (dead) thread is let go.
    unsafe {
        fatal();
        pause(0);
    }
    let (node, result) = rt.block_on(task).expect("the task");
    let waited = lost.elapsed();
    let e = result.expect_err("traffic on a lost device");
    assert!(
        waited < Duration::from_secs(3),
        "the task slept {waited:?} on a lost device: its error was {e}"
    );
    assert!(
        e.contains("ibv_get_cq_event") && e.contains(&format!("errno {}", libc::EIO)),
        "{e}"
    );
    drop(node);
}

/// Commands on a device that is lost (soft-mlx5's fatal hook; the kernel answers every
/// command but the destroys with EIO once it disassociated the context) fail with EIO saying
/// the device is gone and what to do (open it again), not a limit to raise: a registration
/// once told to raise the locked-memory limit, a PD to free protection domains or memory.
/// In a process of its own: the device stays dead.
#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn commands_on_a_lost_device_fail_with_eio_saying_the_device_is_gone_not_naming_a_limit() {
    if !own_process("commands_on_a_lost_device_fail_with_eio_saying_the_device_is_gone_not_naming_a_limit") {
        return;
    }
    let Some(fatal) = fatal_hook() else {
        eprintln!("not run: no soft-mlx5 here (a ConnectX cannot be made to fail)");
        return;
    };
    let (ctx, _port, _gid_index) = open();
    let pd = ctx.alloc_pd().expect("PD");
    // SAFETY: the emulator's hook: the device goes fatal for the rest of the process.
    unsafe { fatal() };
    let registration = pd
        .register(vec![0u8; 4096], Access::LOCAL_WRITE)
        .map(drop)
        .map_err(|r| r.error().clone());
    let errors = [
        ("ibv_reg_mr", registration),
        ("ibv_alloc_pd", ctx.alloc_pd().map(drop)),
        // (A CQ's creation first asks the device for its limits.)
        ("ibv_query_device", ctx.create_cq(16).map(drop)),
    ];
    for (op, result) in errors {
        let e = result.expect_err("a command on a lost device");
        let text = e.to_string();
        assert_eq!(e.errno(), Some(libc::EIO), "{op}: {text}");
        assert!(text.contains(op), "{text}");
        assert!(
            text.contains("the device is gone") && text.contains("open the device again"),
            "{op} does not say the device is gone: {text}"
        );
        assert!(
            !text.contains("ulimit") && !text.contains("out of") && !text.contains("check "),
            "{op} blames a limit or its arguments: {text}"
        );
    }
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn dropping_handles_in_any_order_frees_the_objects_after_their_children() {
    let (ctx, port, gid_index) = open();
    let pd = ctx.alloc_pd().expect("PD");
    let (rx_cq, srq, dct, peer) = target(&ctx, &pd, port, gid_index);
    let mut mr = pd.alloc_mr(64, Access::LOCAL_WRITE).expect("MR");
    let number = dct.dct_number();
    // Parents first: each child still holds what it needs, and still works.
    drop((ctx, pd, rx_cq, srq));
    let addr = dct.target_addr().expect("the DCT's context is still open");
    assert_eq!((addr.dct_number, peer.dct_number()), (number, number));
    mr.write(0, b"alive").expect("the region is still registered memory");
    let mut back = [0u8; 5];
    mr.read(0, &mut back).unwrap();
    assert_eq!(&back, b"alive");
    mr.pd()
        .context()
        .query_port(port)
        .expect("the region's PD keeps the context open");
    drop(peer);
    drop(dct);
    drop(mr);
}

/// A DCI and a DCT on one device: writes `local` into `remote` and waits for the completion.
struct Loop {
    ctx: Context,
    pd: Pd,
    cq: Cq,
    dci: mlx5dv::Dci<mlx5dv::state::Rts>,
    peer: DcPeer,
    _target: (Cq, Srq, Dct),
}

impl Loop {
    fn new() -> Loop {
        let (ctx, port, gid_index) = open();
        let pd = ctx.alloc_pd().expect("PD");
        let (rx_cq, srq, dct, peer) = target(&ctx, &pd, port, gid_index);
        let mlx5 = ctx.mlx5().expect("mlx5");
        let cq = ctx.create_cq(256).expect("CQ");
        let mtu = ctx.query_port(port).expect("port").active_mtu_bytes();
        let dci = DciBuilder::new(&mlx5, &pd, &cq)
            .build_ready(port, mtu, RtsAttr::default())
            .expect("DCI");
        Loop {
            ctx,
            pd,
            cq,
            dci,
            peer,
            _target: (rx_cq, srq, dct),
        }
    }

    fn write(&mut self, local: mlx5dv::Sge<'_>, remote: RemoteMemory) {
        let mut b = self.dci.batch();
        b.rdma_write(7, remote).to(&self.peer).sge(local).expect("write");
        b.commit().expect("commit");
        let mut out = [Completion::default(); 1];
        let until = Instant::now() + Duration::from_secs(10);
        while self.cq.poll(&mut out).expect("poll") == 0 {
            assert!(Instant::now() < until, "the write did not complete");
        }
        assert_eq!((out[0].wr_id, out[0].status), (7, WcStatus::Success));
    }
}

const RW: Access = Access::LOCAL_WRITE.union(Access::REMOTE_WRITE);

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn a_registered_vec_and_boxed_slice_carry_dc_writes_and_come_back_with_the_data() {
    let mut l = Loop::new();
    let src =
        l.pd.register(b"owned memory over DC".to_vec(), Access::LOCAL_WRITE)
            .unwrap();
    let dst = l.pd.register(vec![0u8; 4096].into_boxed_slice(), RW).unwrap();
    l.write(src.sge(0, 20).unwrap(), dst.remote().unwrap().slice(100, 20).unwrap());
    let back = dst.deregister().unwrap();
    assert_eq!(&back[100..120], b"owned memory over DC");
    assert_eq!(src.deregister().unwrap(), b"owned memory over DC".to_vec());
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn anonymous_and_file_mappings_carry_dc_writes() {
    let mut l = Loop::new();
    let mut src =
        l.pd.register(MmapBuf::anonymous(8192).unwrap(), Access::LOCAL_WRITE)
            .unwrap();
    src.write(4096, b"from an anonymous mapping").unwrap();
    // A tmpfs file: Linux 6.5+ pins a shared file mapping for writing only there (or on
    // hugetlbfs); a writable registration of a page-cache file's mapping is refused below.
    let (path, file) = scratch_file(std::path::Path::new("/dev/shm"), "ownership");
    // SAFETY: a file of this test's own, mapped once, written by nobody else while mapped.
    let map = unsafe { MmapBuf::file(&file, 0, 8192) }.unwrap();
    let dst = l.pd.register(map, RW).unwrap();
    l.write(
        src.sge(4096, 25).unwrap(),
        dst.remote().unwrap().slice(4096 + 10, 25).unwrap(),
    );
    drop(dst.deregister().unwrap()); // unmapped: the data is in the file
    let on_disk = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(&on_disk[4106..4131], b"from an anonymous mapping");
    match MmapBuf::huge_pages(2 << 20) {
        Ok(huge) => {
            let mut huge = l.pd.register(huge, Access::LOCAL_WRITE).unwrap();
            huge.write(0, b"huge").unwrap();
            l.write(
                huge.sge(0, 4).unwrap(),
                src.remote().unwrap_or_else(|| local_target(&l)),
            );
        }
        Err(e) => println!("huge pages: not run ({e})"),
    }
}

/// A fresh remotely writable region for writes whose landing place is not checked.
fn local_target(l: &Loop) -> RemoteMemory {
    let mr = l.pd.alloc_mr(4096, RW).unwrap();
    let r = mr.remote().unwrap();
    std::mem::forget(mr); // stays registered for the rest of the test process
    r
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn a_borrowed_slice_carries_dc_writes_and_is_usable_again_once_deregistered() {
    let mut l = Loop::new();
    let src = l.pd.register(b"borrowed".to_vec(), Access::LOCAL_WRITE).unwrap();
    let mut buf = [0u8; 512];
    let pd = l.pd.clone();
    pd.register_borrowed(&mut buf, RW, |dst| {
        l.write(src.sge(0, 8).unwrap(), dst.remote().unwrap().slice(40, 8).unwrap());
    })
    .unwrap();
    assert_eq!(&buf[40..48], b"borrowed");
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn a_dma_buf_is_registered_where_the_device_and_kernel_offer_it() {
    let l = Loop::new();
    let Some(fd) = mlx5dv_suite::device::udmabuf(8192) else {
        println!("dma-buf: not run (no dma-buf exporter here: /dev/udmabuf is absent)");
        return;
    };
    match l.pd.register_dmabuf(DmaBuf::new(fd, 0, 8192, 0), RW) {
        Ok(mr) => {
            assert_eq!(mr.len(), 8192);
            assert!(mr.sge(0, 64).is_ok());
            let back = mr.deregister().expect("deregister");
            drop(back.into_fd());
        }
        Err(e) if e.error().is_not_supported() || e.error().errno() == Some(libc::EPROTONOSUPPORT) => {
            println!(
                "dma-buf: not run (the device does not register dma-bufs: {})",
                e.error()
            );
            drop(e.into_inner());
        }
        Err(e) => panic!("dma-buf registration failed: {}", e.error()),
    }
    let _ = &l.ctx;
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn implicit_on_demand_paging_is_registered_where_the_device_has_it_and_refused_otherwise() {
    let l = Loop::new();
    let has = l.ctx.has_implicit_odp().expect("query");
    match l.pd.register_implicit_odp(Access::LOCAL_WRITE) {
        Ok(mr) => {
            assert!(has, "registered without the capability");
            assert_eq!(mr.len(), usize::MAX);
        }
        Err(e) if !has => assert!(e.is_not_supported(), "{e}"),
        Err(e) => println!("implicit ODP: advertised, but the device refused it: {e}"),
    }
    assert!(l.pd.register_implicit_odp(RW).unwrap_err().errno() == Some(libc::EINVAL));
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn streams_beyond_the_devices_dci_streams_caps_are_refused_before_the_library_naming_the_cap() {
    let (ctx, port, _) = open();
    let mlx5 = ctx.mlx5().expect("mlx5");
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let caps = mlx5.caps().unwrap().dci_streams;
    let ask = match caps {
        Some((c, _)) if c > 0 => c + 1, // more than the device has
        _ => 1,                         // any stream at all
    };
    let err = DciBuilder::new(&mlx5, &pd, &cq).streams(ask, 0).build().unwrap_err();
    assert!(err.to_string().contains("dci_streams_caps"), "{err}");
    match caps {
        Some((c, _)) if c > 0 => assert_eq!(err.errno(), Some(libc::EINVAL), "{err}"),
        _ => assert!(err.is_not_supported(), "{err}"),
    }
    let _ = port;
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn a_dct_on_a_roce_port_without_a_gid_index_is_refused_saying_so() {
    let (ctx, port, _) = open();
    if !ctx.query_port(port).unwrap().is_ethernet() {
        println!(
            "RoCE DCT without a GID index: not run ({} port {port} is InfiniBand)",
            ctx.name()
        );
        return;
    }
    let mlx5 = ctx.mlx5().expect("mlx5");
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let srq = pd.create_srq(16, 1).unwrap();
    let err = DctBuilder::new(&mlx5, &pd, &cq, &srq, KEY)
        .port(port)
        .build()
        .unwrap_err();
    assert_eq!(err.errno(), Some(libc::EINVAL), "{err}");
    assert!(err.to_string().contains("gid_index"), "{err}");
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn a_pool_without_an_mtu_takes_the_ports_active_mtu_and_a_dct_gives_its_address() {
    let (ctx, port, gid_index) = open();
    let pd = ctx.alloc_pd().unwrap();
    let (_cq, _srq, dct, _peer) = target(&ctx, &pd, port, gid_index);
    let addr = dct.target_addr().unwrap();
    let port_attr = ctx.query_port(port).unwrap();
    assert_eq!(addr.dct_number, dct.dct_number());
    assert_eq!(addr.lid, port_attr.lid());
    assert_eq!(addr.port_mtu.bytes(), port_attr.active_mtu_bytes());
    if let Some(g) = gid_index {
        assert_eq!(addr.gid, ctx.query_gid(port, g).unwrap());
    }
    let pool = DciPool::new(
        &ctx.mlx5().unwrap(),
        &pd,
        ctx.create_cq(128).unwrap(),
        PoolConfig {
            dcis: 1,
            port,
            ..PoolConfig::default()
        },
    )
    .expect("a pool at the port's active MTU");
    assert_eq!(pool.dcis().count(), 1);
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn a_writable_registration_of_a_page_cache_files_mapping_fails_with_efault_naming_the_restriction_and_read_only_passes()
{
    let l = Loop::new();
    // The build's own directory: a disk filesystem, never tmpfs.
    let (path, file) = scratch_file(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")), "pin");
    // SAFETY: a file of this test's own, written by nobody else while mapped.
    let map = unsafe { MmapBuf::file(&file, 0, 8192) }.unwrap();
    let strict =
        std::env::var("SOFT_MLX5_PROFILE").is_ok() && std::env::var("SOFT_MLX5_PIN_STRICT").as_deref() != Ok("0");
    let map = match l.pd.register(map, RW) {
        Ok(mr) => {
            // A kernel before 6.5 (or a hugetlbfs/tmpfs target dir) pins it.
            assert!(
                !strict,
                "soft-mlx5 pins as Linux 6.5+ does: this registration must fail"
            );
            println!("a writable file registration passed here (kernel before 6.5?)");
            mr.deregister().unwrap()
        }
        Err(back) => {
            assert_eq!(back.error().errno(), Some(libc::EFAULT), "{}", back.error());
            let text = back.error().to_string();
            assert!(
                text.contains("tmpfs") && text.contains("writable_file_mapping_allowed"),
                "{text}"
            );
            back.into_inner()
        }
    };
    // Read-only: no write pin, so it passes everywhere; the mapping came back intact.
    let ro =
        l.pd.register(map, Access::REMOTE_READ)
            .expect("a read-only registration");
    drop(ro.deregister().unwrap());
    std::fs::remove_file(&path).unwrap();
}

/// A new 8 KiB file of this process's in `dir`, open for reading and writing.
fn scratch_file(dir: &std::path::Path, tag: &str) -> (std::path::PathBuf, std::fs::File) {
    let path = dir.join(format!("mlx5dv-{tag}-{}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    file.set_len(8192).unwrap();
    (path, file)
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn an_srq_reports_the_capacity_the_provider_rounded_up_to_and_takes_exactly_that_many_receives() {
    let (ctx, _, _) = open();
    let pd = ctx.alloc_pd().unwrap();
    let srq = pd.create_srq(256, 1).unwrap();
    let capacity = srq.capacity();
    assert!(capacity >= 256, "capacity {capacity} below the 256 asked for");
    let mr = pd.alloc_mr(64, Access::LOCAL_WRITE).unwrap();
    for i in 0..capacity {
        srq.post_recv(u64::from(i), &[mr.sge(0, 64).unwrap()])
            .unwrap_or_else(|e| panic!("receive {i} of a capacity of {capacity}: {e}"));
    }
    let err = srq
        .post_recv(u64::from(capacity), &[mr.sge(0, 64).unwrap()])
        .expect_err("one receive beyond the capacity");
    assert_eq!(err.errno(), Some(libc::ENOMEM), "{err}");
    assert!(
        err.to_string()
            .contains(&format!("the SRQ is full: it holds {capacity} receives")),
        "{err}"
    );
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn roce_v2_gid_index_finds_the_ports_v2_entry_on_roce_and_is_none_on_infiniband() {
    let (ctx, port, gid_index) = open();
    let found = ctx.roce_v2_gid_index(port).unwrap();
    if ctx.query_port(port).unwrap().is_ethernet() {
        // soft-mlx5's RoCE profile sets MLX5DV_TEST_GID_INDEX to its RoCE v2 entry.
        assert!(found.is_some(), "a RoCE port has a RoCE v2 GID");
        if gid_index.is_some() {
            assert_eq!(found, gid_index);
        }
    } else {
        assert_eq!(found, None, "an InfiniBand port needs no GID index");
    }
    // What it returns builds a DCT on either link layer, with no `if let`.
    let mlx5 = ctx.mlx5().expect("mlx5");
    let cq = ctx.create_cq(16).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let srq = pd.create_srq(16, 1).unwrap();
    DctBuilder::new(&mlx5, &pd, &cq, &srq, KEY)
        .port(port)
        .gid_index(found)
        .build()
        .expect("a DCT with the found GID index");
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn a_dct_grants_no_remote_access_unless_asked_and_what_it_is_asked_for() {
    let (ctx, port, _) = open();
    let gid_index = ctx.roce_v2_gid_index(port).unwrap();
    let mlx5 = ctx.mlx5().expect("mlx5");
    let cq = ctx.create_cq(16).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let srq = pd.create_srq(16, 1).unwrap();
    let plain = DctBuilder::new(&mlx5, &pd, &cq, &srq, KEY)
        .port(port)
        .gid_index(gid_index)
        .build()
        .unwrap();
    let access = plain.query().unwrap().access;
    assert!(
        !access.contains(Access::REMOTE_WRITE)
            && !access.contains(Access::REMOTE_READ)
            && !access.contains(Access::REMOTE_ATOMIC),
        "a DCT built without .access() grants {access:?}"
    );
    let writable = DctBuilder::new(&mlx5, &pd, &cq, &srq, KEY)
        .port(port)
        .gid_index(gid_index)
        .access(Access::REMOTE_WRITE)
        .build()
        .unwrap();
    let access = writable.query().unwrap().access;
    assert!(access.contains(Access::REMOTE_WRITE), "{access:?}");
    assert!(!access.contains(Access::REMOTE_READ), "{access:?}");
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn wait_any_sleeps_on_a_dcts_and_a_dcis_cq_and_names_each_when_its_completion_comes() {
    let (ctx, port, gid_index) = open();
    let mlx5 = ctx.mlx5().expect("mlx5");
    let pd = ctx.alloc_pd().unwrap();
    let rx = ctx.create_cq_with_channel(64).unwrap();
    let tx = ctx.create_cq_with_channel(256).unwrap();
    let srq = pd.create_srq(16, 1).unwrap();
    let mtu = ctx.query_port(port).unwrap().active_mtu_bytes();
    let (_dct, addr) = mlx5dv_suite::device::dct(&mlx5, &pd, &rx, &srq, port, gid_index, KEY, mtu, None);
    let ah = pd.create_ah(port, &PeerPath::to_dc_target(&addr, gid_index)).unwrap();
    let peer = DcPeer::new(&ah, &addr, KEY);
    let mut dci = DciBuilder::new(&mlx5, &pd, &tx)
        .build_ready(port, mtu, RtsAttr::default())
        .unwrap();
    let buf = pd.alloc_mr(128, Access::LOCAL_WRITE).unwrap();
    let target = pd.alloc_mr(64, Access::LOCAL_WRITE | Access::REMOTE_WRITE).unwrap();
    srq.post_recv(1, &[buf.sge(64, 64).unwrap()]).unwrap();
    let mut out = [Completion::default(); 4];

    rx.req_notify(false).unwrap();
    // soft-mlx5 sees a CQ's first arm (consumer index 0: the doorbell record is unchanged)
    // only in the UAR doorbell register, which the next arm overwrites before its device
    // thread reads it; hardware takes each doorbell write. Give it time between the two.
    std::thread::sleep(Duration::from_millis(20));
    tx.req_notify(false).unwrap();
    let start = Instant::now();
    assert_eq!(
        Cq::wait_any(&[&rx, &tx], Some(Duration::from_millis(50))).unwrap(),
        None
    );
    assert!(start.elapsed() >= Duration::from_millis(50));

    // An unsignaled SEND completes on the receive CQ only: wait_any names it.
    let mut b = dci.batch();
    b.send(2).unsignaled().to(&peer).sge(buf.sge(0, 16).unwrap()).unwrap();
    b.commit().unwrap();
    assert_eq!(
        Cq::wait_any(&[&rx, &tx], Some(Duration::from_secs(10))).unwrap(),
        Some(0)
    );
    rx.req_notify(false).unwrap();
    let n = rx.poll(&mut out).unwrap();
    assert!(
        out[..n].iter().any(|c| c.wr_id == 1 && c.status == WcStatus::Success),
        "{:?}",
        &out[..n]
    );

    // A signaled RDMA WRITE completes on the send CQ only: wait_any names that one.
    let mut b = dci.batch();
    b.rdma_write(3, target.remote().unwrap())
        .to(&peer)
        .sge(buf.sge(0, 16).unwrap())
        .unwrap();
    b.commit().unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < until, "no send completion after 10 s");
        // The SEND's completion (unsignaled) may not raise an event; a spurious wake of the
        // receive CQ is allowed, a missed one of the send CQ is not.
        let woke = Cq::wait_any(&[&rx, &tx], Some(Duration::from_secs(10))).unwrap();
        if woke == Some(1) {
            break;
        }
        rx.req_notify(false).unwrap();
        assert_eq!(rx.poll(&mut out).unwrap(), 0, "nothing else reaches the receive CQ");
    }
    let n = tx.poll(&mut out).unwrap();
    assert!(
        out[..n].iter().any(|c| c.wr_id == 3 && c.status == WcStatus::Success),
        "{:?}",
        &out[..n]
    );
    let err = Cq::wait_any(&[&ctx.create_cq(4).unwrap()], None).unwrap_err();
    assert_eq!(err.errno(), Some(libc::EINVAL), "{err}");
    assert!(err.to_string().contains("create_cq_with_channel"), "{err}");
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5, or MLX5DV_TEST_DEVICE on a ConnectX-5+"]
fn a_dci_asking_for_too_much_inline_data_is_refused_naming_the_devices_limit_which_then_builds() {
    let (ctx, port, _) = open();
    let mlx5 = ctx.mlx5().expect("mlx5");
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(512).unwrap();
    let mtu = ctx.query_port(port).unwrap().active_mtu_bytes();
    let err = DciBuilder::new(&mlx5, &pd, &cq)
        .max_inline_data(100_000)
        .build_ready(port, mtu, RtsAttr::default())
        .expect_err("100,000 bytes inline");
    assert_eq!(err.errno(), Some(libc::EINVAL), "{err}");
    let text = err.to_string();
    let limit: u32 = text
        .split("at most ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the error names no limit: {text}"));
    assert!(text.contains("max_inline_data 100000"), "{text}");
    assert!(limit > 0 && limit < 100_000, "{text}");
    DciBuilder::new(&mlx5, &pd, &cq)
        .max_inline_data(limit)
        .build_ready(port, mtu, RtsAttr::default())
        .unwrap_or_else(|e| panic!("the limit it named ({limit}) is refused: {e}"));
}
