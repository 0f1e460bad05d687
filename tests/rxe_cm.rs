//! Tier 2: connection setup through the RDMA connection manager (the `cm` feature) on soft-RoCE
//! (`rxe0` in the QEMU guest of `scripts/rxe-vm`): RC connect, accept, reject and disconnect
//! with private data, timeouts, and the SIDR resolution of a DC target; and the event sources
//! that let a thread sleep instead of spinning (a completion channel with a timeout and in
//! epoll; async port events when the guest's netdev goes down and up). Both sides run in one
//! process, on two threads, over rxe0's address (`RXE_VM_IPV4`). The tests are `#[ignore]`d on
//! the host; `scripts/test` runs this binary in the guest with `--include-ignored`.
//!
//! The one test that is not ignored proves the error without devices on the host (tier 1).
use mlx5dv::addr::{DcTargetAddr, Mtu};
use mlx5dv::cm::{resolve_dc_target, CmFailure, CmParams, Connector, DcAnnouncement, DcTargetService, Listener};
use mlx5dv::{devices, Access, Completion, Context, DcKey, QpState, RcCaps, RemoteMemory, WcOpcode, WcStatus};
use std::net::{IpAddr, SocketAddr};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(10);

fn rxe_ip() -> IpAddr {
    std::env::var("RXE_VM_IPV4")
        .expect("RXE_VM_IPV4 is unset: run this binary through scripts/rxe-vm (scripts/test does)")
        .parse()
        .expect("RXE_VM_IPV4 is an IP address")
}

fn open(name: &str) -> Context {
    let list = devices().expect("device list");
    let dev = list
        .iter()
        .find(|d| d.name() == name)
        .unwrap_or_else(|| panic!("{name} not listed: {list:?}"));
    dev.open().expect("open")
}

fn wait(cq: &mlx5dv::Cq, n: usize) -> Vec<Completion> {
    let mut got = Vec::new();
    let mut buf = [Completion::default(); 16];
    let deadline = Instant::now() + TIMEOUT;
    while got.len() < n {
        let k = cq.poll(&mut buf).expect("poll");
        got.extend_from_slice(&buf[..k]);
        assert!(Instant::now() < deadline, "timed out with {got:?}");
    }
    got
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Runs `server` on a thread with a listener bound to rxe0's address (any port) and returns
/// the address to connect to and the thread.
fn serve<T: Send + 'static>(
    server: impl FnOnce(Listener) -> T + Send + 'static,
) -> (SocketAddr, std::thread::JoinHandle<T>) {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let listener = Listener::bind(SocketAddr::new(rxe_ip(), 0), 4).expect("listen");
        tx.send(listener.local_addr().expect("bound address")).unwrap();
        server(listener)
    });
    let addr = rx.recv_timeout(TIMEOUT).expect("the listener came up");
    assert_ne!(addr.port(), 0, "a port was chosen");
    (addr, handle)
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn cm_connect_accept_send_and_disconnect_with_private_data_byte_for_byte() {
    let request_data = pattern(56, 1);
    let accept_data = pattern(196, 2);
    let (req, acc) = (request_data.clone(), accept_data.clone());
    let (addr, server) = serve(move |listener| {
        let request = listener.next_request(Some(TIMEOUT)).unwrap().expect("a request");
        assert_eq!(request.private_data(), &req[..], "request private data");
        let ctx = open(&request.device_name().expect("device"));
        let pd = ctx.alloc_pd().unwrap();
        let cq = ctx.create_cq(16).unwrap();
        let mr = pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap();
        let qp = pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap();
        let qp = request.init_qp(qp, Access::LOCAL_WRITE).unwrap();
        qp.post_recv(9, &[mr.sge(0, 64).unwrap()]).unwrap();
        let params = CmParams {
            private_data: &acc,
            timeout: TIMEOUT,
            ..CmParams::default()
        };
        let (qp, conn) = request.accept(qp, &params).unwrap();
        assert_eq!(conn.private_data(), &req[..]);
        let c = wait(&cq, 1);
        assert_eq!(
            (c[0].wr_id, c[0].status, c[0].opcode, c[0].byte_len),
            (9, WcStatus::Success, Some(WcOpcode::Recv), 16)
        );
        let mut got = [0u8; 16];
        mr.read(0, &mut got).unwrap();
        assert_eq!(&got, b"sixteen bytes!!!");
        conn.wait_disconnected(TIMEOUT).expect("the client disconnects");
        assert_eq!(qp.query_state().unwrap(), QpState::Rts, "the QP stays the caller's");
    });

    let connector = Connector::resolve(addr, TIMEOUT).expect("resolve");
    let name = connector.device_name().expect("resolved to a device");
    assert_eq!(name, std::env::var("RXE_VM_DEVICE").unwrap());
    let ctx = open(&name);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let mut mr = pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap();
    let qp = pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap();
    let qp = connector.init_qp(qp, Access::LOCAL_WRITE).unwrap();
    let params = CmParams {
        private_data: &request_data,
        timeout: TIMEOUT,
        ..CmParams::default()
    };
    let (mut qp, mut conn) = connector.connect(qp, &params).expect("connect");
    assert_eq!(conn.private_data(), &accept_data[..], "accept private data");
    assert_eq!(conn.peer_addr(), Some(addr));
    mr.write(0, b"sixteen bytes!!!").unwrap();
    let mut batch = qp.batch();
    batch.send(1).sge(mr.sge(0, 16).unwrap()).unwrap();
    batch.commit().unwrap();
    let c = wait(&cq, 1);
    assert_eq!((c[0].wr_id, c[0].status), (1, WcStatus::Success));
    conn.disconnect().unwrap();
    conn.wait_disconnected(TIMEOUT).expect("our own disconnect completes");
    server.join().expect("server thread");
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn cm_reject_reaches_the_requester_with_reason_and_private_data() {
    let reject_data = pattern(148, 3);
    let rej = reject_data.clone();
    let (addr, server) = serve(move |listener| {
        let request = listener.next_request(Some(TIMEOUT)).unwrap().expect("a request");
        request.reject(&rej).expect("reject");
    });
    let connector = Connector::resolve(addr, TIMEOUT).expect("resolve");
    let ctx = open(&connector.device_name().unwrap());
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let qp = pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap();
    let qp = connector.init_qp(qp, Access::LOCAL_WRITE).unwrap();
    let err = connector
        .connect(qp, &CmParams::default())
        .expect_err("the server rejects");
    assert_eq!(err.error().errno(), Some(libc::ECONNREFUSED), "{}", err.error());
    match err.error().cm_failure() {
        Some(CmFailure::Rejected { reason, private_data }) => {
            assert_eq!(*reason, 28, "IB_CM_REJ_CONSUMER_DEFINED");
            assert_eq!(&private_data[..reject_data.len()], &reject_data[..]);
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert_eq!(
        err.into_inner().query_state().unwrap(),
        QpState::Reset,
        "the QP comes back reset"
    );
    server.join().expect("server thread");
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn cm_connect_to_a_port_nobody_listens_on_fails_typed_within_the_timeout() {
    // Bind and drop a listener to find a port that is free now.
    let port = Listener::bind(SocketAddr::new(rxe_ip(), 0), 1)
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let timeout = Duration::from_secs(3);
    let start = Instant::now();
    let connector = Connector::resolve(SocketAddr::new(rxe_ip(), port), timeout).expect("resolve");
    let ctx = open(&connector.device_name().unwrap());
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let qp = pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap();
    let qp = connector.init_qp(qp, Access::LOCAL_WRITE).unwrap();
    let params = CmParams {
        timeout,
        ..CmParams::default()
    };
    let err = connector.connect(qp, &params).expect_err("nobody listens");
    let elapsed = start.elapsed();
    assert!(elapsed < timeout * 2, "took {elapsed:?}");
    match err.error().cm_failure() {
        Some(CmFailure::Rejected { reason: 8, .. }) => assert_eq!(err.error().errno(), Some(libc::ECONNREFUSED)),
        other => panic!(
            "expected rejection reason 8 (invalid service id), got {other:?}: {}",
            err.error()
        ),
    }
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn cm_connect_to_an_address_that_never_answers_times_out_with_etimedout() {
    // 10.77.0.99 is on dummy0's subnet (no ARP on a dummy link): the address and route
    // resolve, and the request goes nowhere.
    let dst: SocketAddr = "10.77.0.99:7471".parse().unwrap();
    let timeout = Duration::from_secs(2);
    let start = Instant::now();
    let connector = Connector::resolve(dst, timeout).expect("resolves on a NOARP link");
    let ctx = open(&connector.device_name().unwrap());
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let qp = pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap();
    let qp = connector.init_qp(qp, Access::LOCAL_WRITE).unwrap();
    let params = CmParams {
        timeout,
        ..CmParams::default()
    };
    let err = connector.connect(qp, &params).expect_err("no answer");
    assert!(start.elapsed() >= timeout, "gave up early: {:?}", start.elapsed());
    assert!(
        start.elapsed() < timeout * 3,
        "the timeout was not honoured: {:?}",
        start.elapsed()
    );
    assert_eq!(err.error().cm_failure(), Some(&CmFailure::TimedOut), "{}", err.error());
    assert_eq!(err.error().errno(), Some(libc::ETIMEDOUT));
    assert_eq!(err.into_inner().query_state().unwrap(), QpState::Reset);
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn cm_resolve_of_an_unroutable_address_fails_at_once_with_enetunreach() {
    let err = Connector::resolve("192.0.2.1:7471".parse().unwrap(), Duration::from_secs(2))
        .expect_err("no route to TEST-NET-1 in the guest");
    // The kernel refuses at once: no route, no event to wait for.
    assert_eq!(err.op(), "rdma_resolve_addr", "{err}");
    assert_eq!(err.errno(), Some(libc::ENETUNREACH), "{err}");
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn cm_listener_fd_is_pollable_and_a_dropped_request_is_refused() {
    let (addr, server) = serve(|listener| {
        // The descriptor in poll(2) turns readable when the request arrives.
        let fd = std::os::fd::AsRawFd::as_raw_fd(&listener);
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        assert_eq!(
            unsafe { libc::poll(&mut pfd, 1, 10_000) },
            1,
            "the request makes the fd readable"
        );
        let request = listener.next_request(Some(Duration::ZERO)).unwrap().expect("queued");
        // The peer vanishes mid-handshake from its own point of view: we just drop the request.
        drop(request);
    });
    let connector = Connector::resolve(addr, TIMEOUT).expect("resolve");
    let ctx = open(&connector.device_name().unwrap());
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let qp = pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap();
    let qp = connector.init_qp(qp, Access::LOCAL_WRITE).unwrap();
    let err = connector
        .connect(qp, &CmParams::default())
        .expect_err("a dropped request is refused");
    assert!(
        matches!(
            err.error().cm_failure(),
            Some(CmFailure::Rejected { .. } | CmFailure::Unreachable { .. })
        ),
        "{}",
        err.error()
    );
    server.join().unwrap();
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn sidr_resolution_returns_the_published_dct_number_key_memory_and_a_usable_ah() {
    let device = std::env::var("RXE_VM_DEVICE").unwrap();
    let gid_index: u8 = std::env::var("RXE_VM_GID_INDEX").unwrap().parse().unwrap();
    let ctx = open(&device);
    let gid = ctx.query_gid(1, gid_index).unwrap();
    // rxe has no DCT: the published address is what a DCT on this port would publish.
    let target = DcTargetAddr {
        lid: 0,
        gid,
        dct_number: 0x00ab_cdef,
        port_mtu: Mtu::Mtu1024,
        out_of_order: false,
    };
    let memory = RemoteMemory {
        addr: 0x7f00_0000_1000,
        len: 1 << 20,
        rkey: 0x1234,
    };
    let announcement = DcAnnouncement::new(target)
        .with_key(DcKey::new(0xffee_ddcc))
        .with_memory(memory);
    let service = DcTargetService::bind(SocketAddr::new(rxe_ip(), 0), announcement).expect("bind");
    let addr = service.local_addr().unwrap();
    let server = std::thread::spawn(move || service.answer_next(Some(TIMEOUT)));

    let res = resolve_dc_target(addr, TIMEOUT).expect("SIDR resolution");
    let answered = server.join().unwrap().expect("answer");
    assert!(answered.is_some(), "the service saw the request");
    assert_eq!(res.target().dct_number, 0x00ab_cdef);
    assert_eq!(res.target(), &target);
    assert_eq!(res.key(), Some(DcKey::new(0xffee_ddcc)));
    assert_eq!(res.memory(), Some(memory));
    assert_eq!(res.device_name(), Some(device.as_str()));
    assert_eq!(res.qkey(), mlx5dv::raw::RDMA_UDP_QKEY);
    match res.path() {
        mlx5dv::PeerPath::Gid {
            sl: 0,
            gid: dgid,
            sgid_index,
            ..
        } => {
            assert_eq!(dgid, gid, "the GRH names the target's GID");
            assert_eq!(sgid_index, gid_index, "from rxe0's IPv4 GID");
        }
        other => panic!("RoCE needs a GRH, got {other:?}"),
    }
    let pd = ctx.alloc_pd().unwrap();
    let ah = res.create_ah(&pd).expect("an address handle from the resolved route");
    let peer = mlx5dv::DcPeer::new(&ah, res.target(), res.key().unwrap());
    assert_eq!(peer.dct_number(), 0x00ab_cdef);
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn sidr_without_opt_ins_publishes_neither_key_nor_memory_and_nobody_listening_is_typed() {
    let ctx = open(&std::env::var("RXE_VM_DEVICE").unwrap());
    let gid = ctx
        .query_gid(1, std::env::var("RXE_VM_GID_INDEX").unwrap().parse().unwrap())
        .unwrap();
    let target = DcTargetAddr {
        lid: 0,
        gid,
        dct_number: 7,
        port_mtu: Mtu::Mtu4096,
        out_of_order: false,
    };
    let service = DcTargetService::bind(SocketAddr::new(rxe_ip(), 0), DcAnnouncement::new(target)).unwrap();
    let addr = service.local_addr().unwrap();
    let server = std::thread::spawn(move || service.answer_next(Some(TIMEOUT)).map(|a| a.is_some()));
    let res = resolve_dc_target(addr, TIMEOUT).unwrap();
    assert!(server.join().unwrap().unwrap());
    assert_eq!((res.key(), res.memory()), (None, None));
    assert_eq!(res.target().dct_number, 7);

    // The service is gone: its port no longer answers.
    let err = resolve_dc_target(addr, Duration::from_secs(3)).expect_err("nobody listens");
    // SIDR reply status 1: IB_SIDR_UNSUPPORTED, no service on that port.
    assert_eq!(err.cm_failure(), Some(&CmFailure::Unreachable { status: 1 }), "{err}");
    assert_eq!(err.errno(), Some(libc::EHOSTUNREACH));
}

#[test]
fn cm_without_rdma_devices_fails_with_enodev_and_says_why() {
    if std::env::var_os("RXE_VM_DEVICE").is_some() {
        // In the guest a device exists: the same call must then succeed.
        let listener = Listener::bind("0.0.0.0:0".parse().unwrap(), 1).expect("listen with rxe0 present");
        assert!(listener.local_addr().is_some());
        return;
    }
    assert!(
        devices().map(|d| d.is_empty()).unwrap_or(true),
        "tier 1 runs without devices"
    );
    let err = Listener::bind("0.0.0.0:7471".parse().unwrap(), 1).expect_err("no devices");
    assert_eq!(err.errno(), Some(libc::ENODEV), "{err}");
    assert!(err.to_string().contains("rdma_ucm"), "the hint names the module: {err}");
    let err =
        Connector::resolve("127.0.0.1:7471".parse().unwrap(), Duration::from_millis(100)).expect_err("no devices");
    assert_eq!(err.errno(), Some(libc::ENODEV), "{err}");
    let err = resolve_dc_target("127.0.0.1:7471".parse().unwrap(), Duration::from_millis(100)).expect_err("no devices");
    assert_eq!(err.errno(), Some(libc::ENODEV), "{err}");
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn completion_channel_times_out_without_a_completion_wakes_for_one_and_is_epoll_readable() {
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (addr, server) = serve(move |listener| {
        let request = listener.next_request(Some(TIMEOUT)).unwrap().expect("a request");
        let ctx = open(&request.device_name().unwrap());
        let pd = ctx.alloc_pd().unwrap();
        let cq = ctx.create_cq_with_channel(16).unwrap();
        let mr = pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap();
        let qp = pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap();
        let qp = request.init_qp(qp, Access::LOCAL_WRITE).unwrap();
        qp.post_recv(1, &[mr.sge(0, 64).unwrap()]).unwrap();
        qp.post_recv(2, &[mr.sge(64, 64).unwrap()]).unwrap();
        let (_qp, _conn) = request.accept(qp, &CmParams::default()).unwrap();
        let mut done = [Completion::default(); 4];

        // Armed, nothing sent: the wait times out.
        cq.req_notify(false).unwrap();
        assert_eq!(cq.poll(&mut done).unwrap(), 0);
        let start = Instant::now();
        assert!(
            !cq.wait(Some(Duration::from_millis(300))).unwrap(),
            "no completion, no event"
        );
        assert!(start.elapsed() >= Duration::from_millis(300));

        // Blocked in wait, woken by the peer's send.
        go_tx.send(()).unwrap();
        assert!(cq.wait(Some(TIMEOUT)).unwrap(), "the send wakes the waiter");
        assert_eq!(cq.poll(&mut done).unwrap(), 1);
        assert_eq!((done[0].wr_id, done[0].opcode), (1, Some(WcOpcode::Recv)));

        // The channel's fd in epoll: not ready while armed and idle, ready after a send.
        let fd = std::os::fd::AsRawFd::as_raw_fd(cq.channel().unwrap());
        // SAFETY: epoll_create1 takes no pointers.
        let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        assert!(ep >= 0);
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: 42,
        };
        // SAFETY: ep and fd are open; ev is valid for the call.
        assert_eq!(unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) }, 0);
        cq.req_notify(false).unwrap();
        let mut out = [libc::epoll_event { events: 0, u64: 0 }; 1];
        // SAFETY: out has room for one event.
        assert_eq!(unsafe { libc::epoll_wait(ep, out.as_mut_ptr(), 1, 200) }, 0, "idle");
        assert!(!cq.try_event().unwrap());
        go_tx.send(()).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { libc::epoll_wait(ep, out.as_mut_ptr(), 1, 10_000) }, 1, "ready");
        let token = out[0].u64;
        assert_eq!(token, 42);
        assert!(cq.try_event().unwrap());
        assert_eq!(cq.poll(&mut done).unwrap(), 1);
        assert_eq!(done[0].wr_id, 2);
        assert_eq!(
            cq.channel().unwrap().unacked(),
            2,
            "acknowledged in a batch, at the latest on drop"
        );
        // SAFETY: closes the epoll descriptor opened above.
        unsafe { libc::close(ep) };
    });
    let connector = Connector::resolve(addr, TIMEOUT).unwrap();
    let ctx = open(&connector.device_name().unwrap());
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let mut mr = pd.alloc_mr(4096, Access::LOCAL_WRITE).unwrap();
    let qp = pd.create_rc_qp(&cq, None, RcCaps::default()).unwrap();
    let qp = connector.init_qp(qp, Access::LOCAL_WRITE).unwrap();
    let (mut qp, _conn) = connector.connect(qp, &CmParams::default()).unwrap();
    mr.write(0, b"wake up").unwrap();
    for wr_id in 1..=2 {
        go_rx.recv_timeout(TIMEOUT).expect("the server is waiting");
        // Let the server block first.
        std::thread::sleep(Duration::from_millis(100));
        let mut batch = qp.batch();
        batch.send(wr_id).sge(mr.sge(0, 7).unwrap()).unwrap();
        batch.commit().unwrap();
        assert_eq!(wait(&cq, 1)[0].status, WcStatus::Success);
    }
    server.join().expect("server thread");
}

#[test]
#[ignore = "needs soft-RoCE: scripts/test runs it in the QEMU guest (scripts/rxe-vm)"]
fn async_events_report_port_down_and_up_when_the_netdev_goes_down_and_up() {
    let device = std::env::var("RXE_VM_DEVICE").unwrap();
    let gid_index: u8 = std::env::var("RXE_VM_GID_INDEX").unwrap().parse().unwrap();
    let ctx = open(&device);
    let events = ctx.async_events().unwrap();
    assert_eq!(
        events.next(Some(Duration::from_millis(100))).unwrap(),
        None,
        "quiet at first"
    );
    let ip = |state: &str| {
        let status = std::process::Command::new("ip")
            .args(["link", "set", "dummy0", state])
            .status()
            .expect("ip");
        assert!(status.success(), "ip link set dummy0 {state}");
    };
    // Bring the link back whatever happens, so the tests after this one find rxe0 usable.
    struct Up<F: Fn(&str)>(F);
    impl<F: Fn(&str)> Drop for Up<F> {
        fn drop(&mut self) {
            (self.0)("up");
        }
    }
    let up = Up(ip);
    (up.0)("down");
    let until = Instant::now() + TIMEOUT;
    loop {
        let e = events
            .next(Some(until.saturating_duration_since(Instant::now())))
            .unwrap();
        match e {
            Some(mlx5dv::AsyncEvent::PortErr { port }) => {
                assert_eq!(port, 1);
                break;
            }
            Some(_) => continue, // GID changes come with it
            None => panic!("no PORT_ERR within {TIMEOUT:?}"),
        }
    }
    drop(up);
    loop {
        let e = events
            .next(Some(until.saturating_duration_since(Instant::now())))
            .unwrap();
        match e {
            Some(mlx5dv::AsyncEvent::PortActive { port }) => {
                assert_eq!(port, 1);
                break;
            }
            Some(_) => continue,
            None => panic!("no PORT_ACTIVE within {TIMEOUT:?}"),
        }
    }
    // Wait until the IPv4 GID is back before handing rxe0 to the next test.
    while ctx.query_gid(1, gid_index).is_err() {
        assert!(Instant::now() < until, "the GID did not come back");
        std::thread::sleep(Duration::from_millis(50));
    }
}
