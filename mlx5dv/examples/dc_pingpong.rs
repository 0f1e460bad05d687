//! DC ping-pong between two hosts: a DC send round trip (latency) and a stream of DC RDMA
//! writes (message rate). Needs a ConnectX-5 or newer on both sides.
//!
//! Usage: server `dc_pingpong [options]`, client `dc_pingpong [options] SERVER`.
//! Options: `-p PORT` (TCP, default 18516), `-d DEV` (default: first device), `-i IB_PORT`
//! (default 1), `-g GID_INDEX` (RoCE; default: LID addressing), `-s SIZE` (default 64),
//! `-n ITERS` (default 1000), `-k KEY` (DC key, hex; default ffeeddcc; both sides must agree:
//! it is never sent over the wire).
//!
//! The TCP exchange: each side sends its DC target address (32 bytes, `DcTargetAddr::encode`)
//! then its remote-memory descriptor (32 bytes, `RemoteMemory::encode`).
use mlx5dv::{
    Access, Completion, Cq, DcKey, DcPeer, DcTargetAddr, DciBuilder, DctBuilder, Mtu, PeerPath, RemoteMemory, RtsAttr,
    WcStatus,
};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::ExitCode;
use std::time::{Duration, Instant};

struct Opts {
    server: Option<String>,
    tcp_port: u16,
    dev: Option<String>,
    ib_port: u8,
    gid_index: Option<u8>,
    size: usize,
    iters: u64,
    key: u64,
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        server: None,
        tcp_port: 18516,
        dev: None,
        ib_port: 1,
        gid_index: None,
        size: 64,
        iters: 1000,
        key: 0xffee_ddcc,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "-p" => o.tcp_port = val("-p")?.parse().map_err(|_| "-p takes a TCP port")?,
            "-d" => o.dev = Some(val("-d")?),
            "-i" => o.ib_port = val("-i")?.parse().map_err(|_| "-i takes a port number")?,
            "-g" => o.gid_index = Some(val("-g")?.parse().map_err(|_| "-g takes a GID index")?),
            "-s" => o.size = val("-s")?.parse().map_err(|_| "-s takes a size in bytes")?,
            "-n" => o.iters = val("-n")?.parse().map_err(|_| "-n takes an iteration count")?,
            "-k" => {
                o.key =
                    u64::from_str_radix(val("-k")?.trim_start_matches("0x"), 16).map_err(|_| "-k takes a hex key")?
            }
            s if !s.starts_with('-') && o.server.is_none() => o.server = Some(s.to_string()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if o.size == 0 || o.iters == 0 {
        return Err("-s and -n must be at least 1".into());
    }
    Ok(o)
}

fn wait(cq: &Cq<'_>, want: impl Fn(&Completion) -> bool) -> Result<Completion, String> {
    let mut buf = [Completion::default(); 1];
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if cq.poll(&mut buf).map_err(|e| e.to_string())? == 1 {
            let c = buf[0];
            if c.status != WcStatus::Success {
                return Err(format!("work request {} completed with {}", c.wr_id, c.status));
            }
            if want(&c) {
                return Ok(c);
            }
        }
        if Instant::now() > deadline {
            return Err("no completion within 10 s: is the peer alive and the key the same?".into());
        }
    }
}

fn run(o: &Opts) -> Result<(), String> {
    let list = mlx5dv::devices().map_err(|e| e.to_string())?;
    let dev = match &o.dev {
        Some(name) => list
            .iter()
            .find(|d| &d.name() == name)
            .ok_or(format!("no device named {name}"))?,
        None => list.iter().next().ok_or("No IB devices found")?,
    };
    let ctx = dev.open().map_err(|e| e.to_string())?;
    let mlx5 = ctx.mlx5().map_err(|e| e.to_string())?;
    let port = ctx.query_port(o.ib_port).map_err(|e| e.to_string())?;
    let pd = ctx.alloc_pd().map_err(|e| e.to_string())?;
    let cq = ctx.create_cq(1024).map_err(|e| e.to_string())?;
    let srq = pd.create_srq(256, 1).map_err(|e| e.to_string())?;
    let key = DcKey::new(o.key);
    let mut dct = DctBuilder::new(&mlx5, &pd, &cq, &srq, key).port(o.ib_port).mtu(1024);
    if let Some(g) = o.gid_index {
        dct = dct.gid_index(g);
    }
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
        lid: port.0.lid,
        gid,
        dct_number: dct.dct_number(),
        port_mtu: Mtu::Mtu1024,
    };
    let my_mem = buf.remote().ok_or("the buffer has no remote access")?;

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
    let ah = pd
        .create_ah(o.ib_port, &PeerPath::to_dc_target(&peer_addr, o.gid_index))
        .map_err(|e| e.to_string())?;
    let peer = DcPeer::new(&ah, &peer_addr, key);
    let mut dci = DciBuilder::new(&mlx5, &pd, &cq)
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
        wait(&cq, |c| c.opcode == Some(mlx5dv::WcOpcode::Recv))?;
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
            wait(&cq, |c| c.opcode == Some(mlx5dv::WcOpcode::RdmaWrite))?;
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
    sock.write_all(b"done").map_err(|e| e.to_string())?;
    let mut fin = [0u8; 4];
    let _ = sock.read_exact(&mut fin);
    Ok(())
}

fn main() -> ExitCode {
    let opts = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("dc_pingpong: {e}\nusage: dc_pingpong [-p PORT] [-d DEV] [-i IB_PORT] [-g GID_INDEX] [-s SIZE] [-n ITERS] [-k HEXKEY] [SERVER]");
            return ExitCode::FAILURE;
        }
    };
    match run(&opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dc_pingpong: {e}");
            ExitCode::FAILURE
        }
    }
}
