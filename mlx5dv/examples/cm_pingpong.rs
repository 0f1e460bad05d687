//! An RC ping-pong set up through the RDMA connection manager (feature `cm`), speaking the
//! exchange of rdma-core's `rdma_server` and `rdma_client` (librdmacm/examples, Debian's
//! rdmacm-utils), so either program can be the other's peer.
//!
//! ```text
//! cm_pingpong [-p PORT] [-n ITERS] [-t SECS]          server: listen on every device
//! cm_pingpong [-p PORT] [-n ITERS] [-t SECS] <ip>     client: connect to <ip>:PORT
//! ```
//!
//! The exchange (port 7471 by default): the server posts a 16-byte receive and accepts; the
//! client posts a 16-byte receive, connects and sends 16 bytes; the server, having received
//! them, sends 16 bytes back; both then disconnect. With `-n ITERS` (both sides this program)
//! the exchange repeats on the same connection. Every wait is bounded by `-t` seconds.
//!
//! The queue pair is this crate's `RcQp`, created on the device the address resolves to and
//! moved through INIT, RTR and RTS with the CM's attributes; nothing of the QP is exchanged by
//! hand.
use mlx5dv::cm::{CmParams, Connector, Listener};
use mlx5dv::{devices, Access, Completion, Context, Cq, RcCaps, WcOpcode};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The message size of rdma_server.c / rdma_client.c.
const MSG: usize = 16;
const RECV_WRID: u64 = 1;
const SEND_WRID: u64 = 2;

struct Opts {
    port: u16,
    iters: u32,
    timeout: Duration,
    server: Option<IpAddr>,
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        port: 7471,
        iters: 1,
        timeout: Duration::from_secs(10),
        server: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        match a.as_str() {
            "-p" => o.port = val("-p")?.parse().map_err(|_| "-p takes a port")?,
            "-n" => o.iters = val("-n")?.parse().map_err(|_| "-n takes a count")?,
            "-t" => o.timeout = Duration::from_secs(val("-t")?.parse().map_err(|_| "-t takes seconds")?),
            "-h" | "--help" => return Err(String::new()),
            ip if o.server.is_none() && !ip.starts_with('-') => {
                o.server = Some(ip.parse().map_err(|_| format!("{ip} is not an IP address"))?)
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if o.iters == 0 {
        return Err("-n must be at least 1".into());
    }
    Ok(o)
}

fn open(name: &str) -> Result<Context, String> {
    let list = devices().map_err(|e| e.to_string())?;
    let dev = list
        .iter()
        .find(|d| d.name() == name)
        .ok_or_else(|| format!("the CM chose {name}, which ibv_get_device_list does not list"))?;
    dev.open().map_err(|e| e.to_string())
}

/// Polls `cq` until a completion of `wr_id` is at hand (or the deadline passes); completions
/// of the other kind that arrive meanwhile are kept in `seen` for their own wait.
fn wait(cq: &Cq, wr_id: u64, seen: &mut [Option<Completion>; 3], until: Instant) -> Result<Completion, String> {
    let mut buf = [Completion::default(); 4];
    loop {
        if let Some(c) = seen[wr_id as usize].take() {
            return Ok(c);
        }
        let n = cq.poll(&mut buf).map_err(|e| e.to_string())?;
        for c in &buf[..n] {
            if !c.status.is_success() {
                return Err(format!("work request {} failed: {}", c.wr_id, c.status));
            }
            seen[c.wr_id as usize] = Some(*c);
        }
        if n == 0 && Instant::now() > until {
            return Err(format!("no completion of work request {wr_id} in time"));
        }
        std::hint::spin_loop();
    }
}

/// Posts the one 16-byte receive, at the start of the buffer.
fn post_recv<S>(qp: &mlx5dv::RcQp<S>, mr: &mlx5dv::Mr) -> Result<(), String> {
    let sge = mr.sge(0, MSG).map_err(|e| e.to_string())?;
    qp.post_recv(RECV_WRID, &[sge]).map_err(|e| e.to_string())
}

fn run(o: &Opts) -> Result<(), String> {
    let until = Instant::now() + o.timeout;
    let params = CmParams {
        timeout: o.timeout,
        ..CmParams::default()
    };
    let access = Access::LOCAL_WRITE;
    let caps = RcCaps {
        max_send_wr: 4,
        max_recv_wr: 4,
        ..RcCaps::default()
    };
    // Each side first needs the device: the client's from the resolved route, the server's
    // from the request.
    enum Side {
        Client(Connector),
        Server(mlx5dv::cm::ConnectRequest),
    }
    let side = match o.server {
        Some(ip) => {
            let c = Connector::resolve(SocketAddr::new(ip, o.port), o.timeout).map_err(|e| e.to_string())?;
            Side::Client(c)
        }
        None => {
            let l =
                Listener::bind(SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), o.port), 1).map_err(|e| e.to_string())?;
            println!("cm_pingpong: listening on port {}", o.port);
            let r = l
                .next_request(Some(o.timeout))
                .map_err(|e| e.to_string())?
                .ok_or("no connection request in time")?;
            Side::Server(r)
        }
    };
    let name = match &side {
        Side::Client(c) => c.device_name(),
        Side::Server(r) => r.device_name(),
    }
    .ok_or("the CM bound no device")?;
    let ctx = open(&name)?;
    let pd = ctx.alloc_pd().map_err(|e| e.to_string())?;
    let cq = ctx.create_cq(16).map_err(|e| e.to_string())?;
    let mut mr = pd.alloc_mr(2 * MSG, access).map_err(|e| e.to_string())?;
    let qp = pd.create_rc_qp(&cq, None, caps).map_err(|e| e.to_string())?;
    let (mut qp, mut conn) = match side {
        Side::Client(c) => {
            let qp = c.init_qp(qp, access).map_err(|e| e.to_string())?;
            post_recv(&qp, &mr)?;
            c.connect(qp, &params).map_err(|e| e.to_string())?
        }
        Side::Server(r) => {
            let qp = r.init_qp(qp, access).map_err(|e| e.to_string())?;
            post_recv(&qp, &mr)?;
            r.accept(qp, &params).map_err(|e| e.to_string())?
        }
    };
    println!(
        "cm_pingpong: connected over {name}, {:?} <-> {:?}",
        conn.local_addr(),
        conn.peer_addr()
    );
    let client = o.server.is_some();
    let start = Instant::now();
    let mut seen = [None; 3];
    for i in 0..o.iters {
        let last = i + 1 == o.iters;
        let send = |qp: &mut mlx5dv::RcQp<mlx5dv::state::Rts>,
                    mr: &mut mlx5dv::Mr,
                    seen: &mut [Option<Completion>; 3]|
         -> Result<(), String> {
            let msg: [u8; MSG] = std::array::from_fn(|k| (i as u8).wrapping_add(k as u8));
            mr.write(MSG, &msg).map_err(|e| e.to_string())?;
            let mut batch = qp.batch();
            batch
                .send(SEND_WRID)
                .sge(mr.sge(MSG, MSG).map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
            batch.commit().map_err(|e| e.to_string())?;
            let c = wait(&cq, SEND_WRID, seen, until)?;
            debug_assert_eq!(c.opcode, Some(WcOpcode::Send));
            Ok(())
        };
        if client {
            send(&mut qp, &mut mr, &mut seen)?;
            let c = wait(&cq, RECV_WRID, &mut seen, until)?;
            if c.byte_len as usize != MSG {
                return Err(format!("received {} bytes, expected {MSG}", c.byte_len));
            }
            if !last {
                post_recv(&qp, &mr)?;
            }
        } else {
            let c = wait(&cq, RECV_WRID, &mut seen, until)?;
            if c.byte_len as usize != MSG {
                return Err(format!("received {} bytes, expected {MSG}", c.byte_len));
            }
            if !last {
                post_recv(&qp, &mr)?;
            }
            send(&mut qp, &mut mr, &mut seen)?;
        }
    }
    let elapsed = start.elapsed();
    // Both sides disconnect, as rdma_server and rdma_client do; the peer may have been first.
    let _ = conn.disconnect();
    conn.wait_disconnected(o.timeout).map_err(|e| e.to_string())?;
    println!(
        "cm_pingpong: {} exchange(s) of {MSG} bytes in {:.1} ms",
        o.iters,
        elapsed.as_secs_f64() * 1e3
    );
    Ok(())
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("cm_pingpong: {e}");
            }
            eprintln!("usage: cm_pingpong [-p PORT] [-n ITERS] [-t SECS] [SERVER_IP]");
            return ExitCode::from(2);
        }
    };
    match run(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cm_pingpong: {e}");
            ExitCode::FAILURE
        }
    }
}
