//! DC ping-pong between two hosts: a DC send round trip (latency) and a stream of DC RDMA
//! writes (message rate). Needs a ConnectX-5 or newer on both sides.
//!
//! Usage: server `dc_pingpong [options]`, client `dc_pingpong [options] SERVER`.
//! Options: `-p PORT` (TCP, default 18516), `-d DEV` (default: first mlx5 device), `-i IB_PORT`
//! (default 1), `-g`/`-x GID_INDEX` (RoCE; default: LID addressing), `-s SIZE` (default 64),
//! `-n ITERS` (default 1000), `-k KEY` (DC key, hex; default ffeeddcc; both sides must agree:
//! it is never sent over the wire), `-c` (find the peer through the RDMA connection manager),
//! `--direct` (the DCI posts through the crate's direct writer, its completions read from a
//! direct CQ of its own: `SendBackend::Direct`; the peer need not do the same),
//! `--perftest send|write` (see below).
//!
//! The TCP exchange: each side sends its DC target address (32 bytes, `DcTargetAddr::encode`)
//! then its remote-memory descriptor (32 bytes, `RemoteMemory::encode`).
//!
//! `-c` (built with `--features cm`) finds the peer through the RDMA connection manager
//! instead (`mlx5dv::cm::sidr`): each side publishes its DC target and memory with a
//! `DcTargetService` (the server on PORT, the client on PORT+1) and resolves the other's by IP
//! address with a SIDR exchange; the server learns the client's address from its request. The
//! address handle then comes from the CM's resolved route. The DC key is still agreed by `-k`
//! on both sides and never published. SERVER must then be an IP address of an RDMA netdev.
//!
//! `--perftest send` or `--perftest write` makes this program the client of a perftest DC
//! server, `ib_send_bw -c DC` or `ib_write_bw -c DC` (perftest 4.5), on SERVER: it speaks
//! perftest's TCP exchange (`common/perftest.rs`; default port 18515), takes the server's DCT
//! number, address, rkey and buffer from it, and posts SIZE-byte DC sends or RDMA writes, ITERS
//! of them, as perftest's client would; for writes it hands perftest its report, which the
//! server prints. Without SERVER it is the DC server of a perftest client instead
//! (`ib_send_bw -c DC HOST` or `ib_write_bw -c DC HOST`): it hands out its DCT, receives the
//! sends (or, for writes, checks that the client's data landed in its buffer and prints the
//! client's report). Give both sides the same `-s` and `-n`, and a GID index on both (perftest
//! `-x`) or on neither; the DC key is perftest's, ffeeddcc, unless `-k` says otherwise.
#[path = "common/perftest.rs"]
mod perftest;

use mlx5dv::{
    Access, Completion, Cq, DcKey, DcPeer, DcTargetAddr, DciBuilder, DctBuilder, Mtu, PeerPath, RemoteMemory, RtsAttr,
    SendBackend, WcStatus,
};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// What a perftest server on the other side measures (`--perftest`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum PerftestVerb {
    /// `ib_send_bw -c DC`.
    Send,
    /// `ib_write_bw -c DC`.
    Write,
}

struct Opts {
    server: Option<String>,
    /// 18516 unless `-p`; perftest's 18515 with `--perftest`.
    tcp_port: u16,
    dev: Option<String>,
    ib_port: u8,
    gid_index: Option<u8>,
    size: usize,
    iters: u64,
    key: u64,
    cm: bool,
    direct: bool,
    perftest: Option<PerftestVerb>,
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        server: None,
        tcp_port: 0,
        dev: None,
        ib_port: 1,
        gid_index: None,
        size: 64,
        iters: 1000,
        // perftest's key, so that a perftest peer needs no -k.
        key: perftest::DC_KEY,
        cm: false,
        direct: false,
        perftest: None,
    };
    let mut tcp_port = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "-p" => tcp_port = Some(val("-p")?.parse().map_err(|_| "-p takes a TCP port")?),
            "-d" => o.dev = Some(val("-d")?),
            "-i" => o.ib_port = val("-i")?.parse().map_err(|_| "-i takes a port number")?,
            "-g" | "-x" => o.gid_index = Some(val(&a)?.parse().map_err(|_| format!("{a} takes a GID index"))?),
            "-s" => o.size = val("-s")?.parse().map_err(|_| "-s takes a size in bytes")?,
            "-n" => o.iters = val("-n")?.parse().map_err(|_| "-n takes an iteration count")?,
            "-c" => o.cm = true,
            "--direct" => o.direct = true,
            "--perftest" => {
                o.perftest = Some(match val("--perftest")?.as_str() {
                    "send" => PerftestVerb::Send,
                    "write" => PerftestVerb::Write,
                    _ => return Err("--perftest takes send (ib_send_bw) or write (ib_write_bw)".into()),
                })
            }
            "-k" => {
                o.key =
                    u64::from_str_radix(val("-k")?.trim_start_matches("0x"), 16).map_err(|_| "-k takes a hex key")?
            }
            s if !s.starts_with('-') && o.server.is_none() => o.server = Some(s.to_string()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    o.tcp_port = match (tcp_port, o.perftest) {
        (Some(p), _) => p,
        (None, Some(_)) => perftest::DEFAULT_PORT,
        (None, None) => 18516,
    };
    if o.size == 0 || o.iters == 0 {
        return Err("-s and -n must be at least 1".into());
    }
    if o.perftest.is_some() && o.cm {
        return Err("--perftest speaks perftest's TCP exchange, not the CM: leave out -c".into());
    }
    if o.perftest.is_some() && o.server.is_none() && o.direct {
        return Err("--direct is for the DCI; as perftest's server this side only receives: leave it out".into());
    }
    Ok(o)
}

/// Polls the CQs in turn until a completion `want` takes (the others are consumed).
fn wait(cqs: &[&Cq], want: impl Fn(&Completion) -> bool) -> Result<Completion, String> {
    let mut buf = [Completion::default(); 1];
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        for cq in cqs {
            if cq.poll(&mut buf).map_err(|e| e.to_string())? == 1 {
                let c = buf[0];
                if c.status != WcStatus::Success {
                    return Err(format!("work request {} completed with {}", c.wr_id, c.status));
                }
                if want(&c) {
                    return Ok(c);
                }
            }
        }
        if Instant::now() > deadline {
            return Err("no completion within 10 s: is the peer alive and the key the same?".into());
        }
    }
}

fn run(o: &Opts) -> Result<(), String> {
    let ctx = mlx5dv::open_device(o.dev.as_deref()).map_err(|e| e.to_string())?;
    let mlx5 = ctx.mlx5().map_err(|e| e.to_string())?;
    let port = ctx.query_port(o.ib_port).map_err(|e| e.to_string())?;
    let pd = ctx.alloc_pd().map_err(|e| e.to_string())?;
    let cq = ctx.create_cq(1024).map_err(|e| e.to_string())?;
    let srq = pd.create_srq(256, 1).map_err(|e| e.to_string())?;
    let key = DcKey::new(o.key);
    let dct = DctBuilder::new(&mlx5, &pd, &cq, &srq, key)
        .port(o.ib_port)
        .mtu(1024)
        .access(Access::REMOTE_WRITE | Access::REMOTE_READ)
        .gid_index(o.gid_index);
    let dct = dct.build().map_err(|e| e.to_string())?;
    let mut buf = pd
        .alloc_mr(o.size.max(8) * 2, Access::LOCAL_WRITE | Access::REMOTE_WRITE)
        .map_err(|e| e.to_string())?;
    for i in 0..256 {
        srq.post_recv(i, &[buf.sge(0, o.size).map_err(|e| e.to_string())?])
            .map_err(|e| e.to_string())?;
    }
    let gid = match o.gid_index {
        Some(g) => ctx.query_gid(o.ib_port, g).map_err(|e| e.to_string())?,
        None => [0; 16],
    };
    let mine = DcTargetAddr {
        lid: port.lid(),
        gid,
        dct_number: dct.dct_number(),
        port_mtu: Mtu::Mtu1024,
        out_of_order: false,
    };
    let my_mem = buf.remote().ok_or("the buffer has no remote access")?;

    let (peer_addr, peer_mem, ib_port, path, mut sock) = if o.cm {
        let (addr, mem, port, path) = exchange_cm(o, &mine, &my_mem)?;
        (addr, mem, port, path, None)
    } else {
        let (addr, mem, sock) = exchange_tcp(o, &mine, &my_mem)?;
        (
            addr,
            mem,
            o.ib_port,
            PeerPath::to_dc_target(&addr, o.gid_index),
            Some(sock),
        )
    };
    let ah = pd.create_ah(ib_port, &path).map_err(|e| e.to_string())?;
    let peer = DcPeer::new(&ah, &peer_addr, key);
    // The direct backend reads the DCI's completions from a direct CQ, which only direct DCIs
    // use: the DCT keeps the other one.
    let send_cq = match o.direct {
        true => Some(ctx.create_direct_cq(1024).map_err(|e| e.to_string())?),
        false => None,
    };
    let cqs: Vec<&Cq> = std::iter::once(&cq).chain(send_cq.as_ref()).collect();
    let backend = if o.direct {
        SendBackend::Direct
    } else {
        SendBackend::WrApi
    };
    let mut dci = DciBuilder::new(&mlx5, &pd, send_cq.as_ref().unwrap_or(&cq))
        .backend(backend)
        .max_send_wr(256)
        .build_ready(o.ib_port, 1024, RtsAttr::default())
        .map_err(|e| e.to_string())?;
    buf.write(o.size, &vec![0xA5; o.size]).map_err(|e| e.to_string())?;
    let payload = buf.sge(o.size, o.size).map_err(|e| e.to_string())?;

    // Ping-pong: the client sends first; each side answers every receive with a send.
    let start = Instant::now();
    for i in 0..o.iters {
        if o.server.is_some() || i > 0 {
            let mut batch = dci.batch();
            batch.send(i).to(&peer).sge(payload).map_err(|e| e.to_string())?;
            batch.commit().map_err(|e| e.to_string())?;
        }
        wait(&cqs, |c| c.opcode == Some(mlx5dv::WcOpcode::Recv))?;
        srq.post_recv(256 + i, &[buf.sge(0, o.size).map_err(|e| e.to_string())?])
            .map_err(|e| e.to_string())?;
        if o.server.is_none() && i + 1 == o.iters {
            let mut batch = dci.batch();
            batch.send(i).to(&peer).sge(payload).map_err(|e| e.to_string())?;
            batch.commit().map_err(|e| e.to_string())?;
        }
    }
    let rtt = start.elapsed();
    println!(
        "DC send ping-pong: {} iters of {} bytes, {:.2} usec per round trip",
        o.iters,
        o.size,
        rtt.as_secs_f64() * 1e6 / o.iters as f64
    );

    // Message rate: DC RDMA writes into the peer's buffer, one completion per 64.
    if o.server.is_some() {
        let target = peer_mem.slice(0, o.size as u64).map_err(|e| e.to_string())?;
        let start = Instant::now();
        let mut done = 0;
        while done < o.iters {
            let n = (o.iters - done).min(64);
            let mut batch = dci.batch();
            for j in 0..n {
                let wr = batch.rdma_write(done + j, target).to(&peer);
                let wr = if j + 1 == n { wr } else { wr.unsignaled() };
                wr.sge(payload).map_err(|e| e.to_string())?;
            }
            batch.commit().map_err(|e| e.to_string())?;
            wait(&cqs, |c| c.opcode == Some(mlx5dv::WcOpcode::RdmaWrite))?;
            done += n;
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "DC RDMA write: {} messages of {} bytes in {:.3} s = {:.3} Mmsg/s",
            o.iters,
            o.size,
            secs,
            o.iters as f64 / secs / 1e6
        );
    }
    // Keep both sides alive until the writes are done: a TCP "done", or over the CM one
    // more DC send from the server.
    match &mut sock {
        Some(sock) => {
            sock.write_all(b"done").map_err(|e| e.to_string())?;
            let mut fin = [0u8; 4];
            let _ = sock.read_exact(&mut fin);
        }
        None if o.server.is_some() => {
            let mut batch = dci.batch();
            batch.send(u64::MAX).to(&peer).sge(payload).map_err(|e| e.to_string())?;
            batch.commit().map_err(|e| e.to_string())?;
            wait(&cqs, |c| c.wr_id == u64::MAX)?;
        }
        None => {
            wait(&cqs, |c| c.opcode == Some(mlx5dv::WcOpcode::Recv))?;
        }
    }
    Ok(())
}

/// The out-of-band TCP exchange of addresses and memory descriptors.
fn exchange_tcp(
    o: &Opts,
    mine: &DcTargetAddr,
    my_mem: &RemoteMemory,
) -> Result<(DcTargetAddr, RemoteMemory, TcpStream), String> {
    let mut sock = match &o.server {
        Some(host) => TcpStream::connect((host.as_str(), o.tcp_port))
            .map_err(|e| format!("connect {host}:{}: {e}", o.tcp_port))?,
        None => {
            let listener =
                TcpListener::bind(("0.0.0.0", o.tcp_port)).map_err(|e| format!("listen on {}: {e}", o.tcp_port))?;
            listener.accept().map_err(|e| e.to_string())?.0
        }
    };
    let mut out = [0u8; 64];
    out[..32].copy_from_slice(&mine.encode().map_err(|e| e.to_string())?);
    out[32..].copy_from_slice(&my_mem.encode());
    sock.write_all(&out).map_err(|e| e.to_string())?;
    let mut inp = [0u8; 64];
    sock.read_exact(&mut inp)
        .map_err(|e| format!("reading the peer's address: {e}"))?;
    let peer_addr = DcTargetAddr::decode(&inp[..32]).map_err(|e| e.to_string())?;
    let peer_mem = RemoteMemory::decode(&inp[32..]).map_err(|e| e.to_string())?;
    Ok((peer_addr, peer_mem, sock))
}

/// Publishes this side's DC target through the CM and resolves the peer's (see the docs).
#[cfg(feature = "cm")]
fn exchange_cm(
    o: &Opts,
    mine: &DcTargetAddr,
    my_mem: &RemoteMemory,
) -> Result<(DcTargetAddr, RemoteMemory, u8, PeerPath), String> {
    use mlx5dv::cm::{resolve_dc_target, DcAnnouncement, DcTargetService};
    use std::net::{IpAddr, Ipv4Addr, SocketAddr};
    let timeout = Duration::from_secs(30);
    let announce = DcAnnouncement::new(*mine).with_memory(*my_mem);
    let any = |port| SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), port);
    let res = match &o.server {
        Some(host) => {
            let ip: IpAddr = host
                .parse()
                .map_err(|_| format!("-c needs the server's IP address, not {host}"))?;
            let service = DcTargetService::bind(any(o.tcp_port + 1), announce).map_err(|e| e.to_string())?;
            let res = resolve_dc_target(SocketAddr::new(ip, o.tcp_port), timeout).map_err(|e| e.to_string())?;
            service
                .answer_next(Some(timeout))
                .map_err(|e| e.to_string())?
                .ok_or("the server did not resolve us back")?;
            res
        }
        None => {
            let service = DcTargetService::bind(any(o.tcp_port), announce).map_err(|e| e.to_string())?;
            let client = service
                .answer_next(None)
                .map_err(|e| e.to_string())?
                .ok_or("no request")?;
            resolve_dc_target(SocketAddr::new(client.ip(), o.tcp_port + 1), timeout).map_err(|e| e.to_string())?
        }
    };
    let mem = res.memory().ok_or("the peer published no memory")?;
    Ok((*res.target(), mem, res.port(), res.path()))
}

#[cfg(not(feature = "cm"))]
fn exchange_cm(
    _: &Opts,
    _: &DcTargetAddr,
    _: &RemoteMemory,
) -> Result<(DcTargetAddr, RemoteMemory, u8, PeerPath), String> {
    Err("-c needs the connection manager: build with `--features cm`".into())
}

impl PerftestVerb {
    /// How many hand shakes perftest makes before the test: ib_send_bw sends its address,
    /// syncs, sends it again (a DCT's number is only right once the DCT is in RTR) and syncs
    /// once its receives are posted; ib_write_bw sends its address twice and syncs.
    fn hand_shakes(self) -> u32 {
        match self {
            PerftestVerb::Send => 4,
            PerftestVerb::Write => 3,
        }
    }
}

/// This side's address for perftest: QP (or DCT) number `qpn` and the buffer `mr`.
fn perftest_dest(
    ctx: &mlx5dv::Context,
    o: &Opts,
    port: &mlx5dv::PortAttr,
    qpn: u32,
    mr: &mlx5dv::Mr,
) -> Result<perftest::Dest, String> {
    let mem = mr.remote().ok_or("the buffer has no remote access")?;
    Ok(perftest::Dest {
        lid: port.lid(),
        out_reads: 1,
        qpn,
        psn: RtsAttr::default().sq_psn,
        rkey: mem.rkey,
        vaddr: mem.addr,
        gid: match o.gid_index {
            Some(g) => Some(ctx.query_gid(o.ib_port, g).map_err(|e| e.to_string())?),
            None => None,
        },
        srqn: 0,
    })
}

/// `--perftest`: the client of a perftest DC server (see the module docs).
fn run_perftest(o: &Opts, verb: PerftestVerb) -> Result<(), String> {
    let host = o.server.as_deref().ok_or("--perftest needs the server's address")?;
    let ctx = mlx5dv::open_device(o.dev.as_deref()).map_err(|e| e.to_string())?;
    let mlx5 = ctx.mlx5().map_err(|e| e.to_string())?;
    let port = ctx.query_port(o.ib_port).map_err(|e| e.to_string())?;
    let mut session = perftest::Session::connect(host, o.tcp_port, port.0.active_mtu)?;
    let mtu = Mtu::from_raw(session.mtu).ok_or("perftest agreed on no valid MTU")?;
    let pd = ctx.alloc_pd().map_err(|e| e.to_string())?;
    let (cq, backend) = match o.direct {
        true => (ctx.create_direct_cq(256), SendBackend::Direct),
        false => (ctx.create_cq(256), SendBackend::WrApi),
    };
    let cq = cq.map_err(|e| e.to_string())?;
    let mut dci = DciBuilder::new(&mlx5, &pd, &cq)
        .backend(backend)
        .max_send_wr(128)
        .build_ready(o.ib_port, mtu.bytes(), RtsAttr::default())
        .map_err(|e| e.to_string())?;
    let mut buf = pd
        .alloc_mr(o.size, Access::LOCAL_WRITE | Access::REMOTE_WRITE)
        .map_err(|e| e.to_string())?;
    buf.write(0, &vec![0xA5; o.size]).map_err(|e| e.to_string())?;
    let mine = perftest_dest(&ctx, o, &port, dci.qp_num(), &buf)?;
    // The last hand shake before the test names the server's DCT.
    let mut server = session.hand_shake(&mine)?;
    for _ in 1..verb.hand_shakes() {
        server = session.hand_shake(&mine)?;
    }
    let target = DcTargetAddr {
        lid: server.lid,
        gid: server.gid.unwrap_or_default(),
        dct_number: server.qpn,
        port_mtu: mtu,
        out_of_order: false,
    };
    let ah = pd
        .create_ah(o.ib_port, &PeerPath::to_dc_target(&target, o.gid_index))
        .map_err(|e| e.to_string())?;
    let peer = DcPeer::new(&ah, &target, DcKey::new(o.key));
    let remote = RemoteMemory {
        addr: server.vaddr,
        len: o.size as u64,
        rkey: server.rkey,
    };
    let payload = buf.sge(0, o.size).map_err(|e| e.to_string())?;

    // The test: batches of up to 64 requests, the last one signaled.
    let start = Instant::now();
    let (mut done, mut peak) = (0, 0f64);
    while done < o.iters {
        let n = (o.iters - done).min(64);
        let batch_start = Instant::now();
        let mut batch = dci.batch();
        for j in 0..n {
            let wr = match verb {
                PerftestVerb::Send => batch.send(done + j),
                PerftestVerb::Write => batch.rdma_write(done + j, remote),
            }
            .to(&peer);
            let wr = if j + 1 == n { wr } else { wr.unsignaled() };
            wr.sge(payload).map_err(|e| e.to_string())?;
        }
        batch.commit().map_err(|e| e.to_string())?;
        wait(&[&cq], |c| c.wr_id == done + n - 1)?;
        peak = peak.max((n as usize * o.size) as f64 / batch_start.elapsed().as_secs_f64());
        done += n;
    }
    let secs = start.elapsed().as_secs_f64();
    const MB: f64 = (1 << 20) as f64;
    let report = perftest::BwReport {
        size: o.size as u64,
        iters: o.iters,
        bw_peak: peak / MB,
        bw_avg: (o.size as f64 * o.iters as f64) / secs / MB,
        msg_rate: o.iters as f64 / secs / 1e6,
    };
    let (name, what) = match verb {
        PerftestVerb::Send => ("ib_send_bw", "DC sends"),
        PerftestVerb::Write => ("ib_write_bw", "DC RDMA writes"),
    };
    println!(
        "perftest peer ({name} -c DC, version {}, {} backend): {} {what} of {} bytes in {:.3} s: peak {:.2} MB/s, average {:.2} MB/s, {:.6} Mmsg/s",
        session.peer_version,
        if o.direct { "direct" } else { "wr API" },
        o.iters,
        o.size,
        secs,
        report.bw_peak,
        report.bw_avg,
        report.msg_rate
    );
    // ib_write_bw's server learns the result from us: a sync, then the report it prints.
    if verb == PerftestVerb::Write {
        session.hand_shake(&mine)?;
        session.bw_report(&report)?;
    }
    session.close(&mine)
}

/// `--perftest` without SERVER: the DC target of a perftest client (see the module docs).
fn run_perftest_server(o: &Opts, verb: PerftestVerb) -> Result<(), String> {
    let ctx = mlx5dv::open_device(o.dev.as_deref()).map_err(|e| e.to_string())?;
    let mlx5 = ctx.mlx5().map_err(|e| e.to_string())?;
    let port = ctx.query_port(o.ib_port).map_err(|e| e.to_string())?;
    let mut session = perftest::Session::accept(o.tcp_port, port.0.active_mtu)?;
    let mtu = Mtu::from_raw(session.mtu).ok_or("perftest agreed on no valid MTU")?;
    let pd = ctx.alloc_pd().map_err(|e| e.to_string())?;
    let cq = ctx.create_cq(1024).map_err(|e| e.to_string())?;
    let srq = pd.create_srq(256, 1).map_err(|e| e.to_string())?;
    let dct = DctBuilder::new(&mlx5, &pd, &cq, &srq, DcKey::new(o.key))
        .port(o.ib_port)
        .access(Access::REMOTE_WRITE | Access::REMOTE_READ)
        .mtu(mtu.bytes())
        .gid_index(o.gid_index);
    let dct = dct.build().map_err(|e| e.to_string())?;
    // A perftest client's writes walk SIZE-byte steps up to its cycle buffer from our address.
    let mut buf = pd
        .alloc_mr(
            2 * o.size.max(session.cycle_buffer),
            Access::LOCAL_WRITE | Access::REMOTE_WRITE,
        )
        .map_err(|e| e.to_string())?;
    // perftest fills its buffer with random bytes: writes that land change this pattern.
    buf.write(0, &vec![0xA5; o.size]).map_err(|e| e.to_string())?;
    let mine = perftest_dest(&ctx, o, &port, dct.dct_number(), &buf)?;
    // The receives are up before the last hand shake, after which an ib_send_bw client sends.
    for _ in 1..verb.hand_shakes() {
        session.hand_shake(&mine)?;
    }
    let recv = buf.sge(0, o.size).map_err(|e| e.to_string())?;
    let mut posted = 0;
    if verb == PerftestVerb::Send {
        while posted < o.iters.min(256) {
            srq.post_recv(posted, &[recv]).map_err(|e| e.to_string())?;
            posted += 1;
        }
    }
    session.hand_shake(&mine)?;
    match verb {
        PerftestVerb::Send => {
            let mut start = None;
            for i in 0..o.iters {
                let c = wait(&[&cq], |c| c.opcode == Some(mlx5dv::WcOpcode::Recv))?;
                start.get_or_insert_with(Instant::now);
                if c.byte_len as usize != o.size {
                    return Err(format!("receive {i} holds {} bytes, not -s {}", c.byte_len, o.size));
                }
                if posted < o.iters {
                    srq.post_recv(posted, &[recv]).map_err(|e| e.to_string())?;
                    posted += 1;
                }
            }
            // Timed from the first receive, as perftest's server does.
            let secs = start.map_or(0.0, |t| t.elapsed().as_secs_f64());
            println!(
                "perftest peer (ib_send_bw -c DC client, version {}): received {} DC sends of {} bytes in {secs:.3} s: {:.2} MB/s, {:.6} Mmsg/s",
                session.peer_version,
                o.iters,
                o.size,
                (o.size as f64 * o.iters as f64) / secs / (1 << 20) as f64,
                o.iters as f64 / secs / 1e6
            );
        }
        PerftestVerb::Write => {
            // The client's sync once its writes are complete, then its report.
            session.hand_shake(&mine)?;
            let theirs = session.bw_report(&perftest::BwReport::default())?;
            let mut landed = vec![0u8; o.size];
            buf.read(0, &mut landed).map_err(|e| e.to_string())?;
            if landed.iter().all(|&b| b == 0xA5) {
                return Err("the client reported its writes, but our buffer is unchanged".into());
            }
            println!(
                "perftest peer (ib_write_bw -c DC client, version {}): the client reports {} DC RDMA writes of {} bytes: peak {:.2} MB/s, average {:.2} MB/s, {:.6} Mmsg/s; our buffer holds its data",
                session.peer_version, theirs.iters, theirs.size, theirs.bw_peak, theirs.bw_avg, theirs.msg_rate
            );
        }
    }
    session.close(&mine)
}

fn main() -> ExitCode {
    let opts = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("dc_pingpong: {e}\nusage: dc_pingpong [-p PORT] [-d DEV] [-i IB_PORT] [-g GID_INDEX] [-s SIZE] [-n ITERS] [-k HEXKEY] [-c] [--direct] [--perftest send|write] [SERVER]");
            return ExitCode::FAILURE;
        }
    };
    let result = match (opts.perftest, &opts.server) {
        (Some(verb), Some(_)) => run_perftest(&opts, verb),
        (Some(verb), None) => run_perftest_server(&opts, verb),
        (None, _) => run(&opts),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dc_pingpong: {e}");
            ExitCode::FAILURE
        }
    }
}
