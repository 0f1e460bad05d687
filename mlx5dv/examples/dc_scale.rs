//! DC against RC at scale, per node: for N peers, how many queue pairs, how much host memory
//! the provider (libmlx5) allocates for them, and how long creating them and bringing them up
//! takes. RC: one QP per peer. DC: one DCT (receiving on one SRQ) and W DCIs, whatever N is.
//!
//! Usage: `dc_scale [-d DEV] [-i PORT] [-n N,N,...] [-w W,W,...]`
//! (defaults: first mlx5 device, port 1, N = 16,64,256,1024, W = 1,4,16). On a machine without
//! a ConnectX: `scripts/soft-mlx5 -- target/release/examples/dc_scale` (the emulated device,
//! real libmlx5). On a ConnectX it runs the same, on the hardware.
//!
//! Memory is what libmlx5 allocates in host memory for each queue, read back from the provider
//! with `mlx5dv_init_obj` (ring geometry), not NIC memory:
//! - work-queue rings: send ring (`sq.wqe_cnt` x `sq.stride`) plus receive ring (`rq.wqe_cnt` x
//!   `rq.stride`), one buffer rounded up to the page (providers/mlx5/verbs.c,
//!   `mlx5_alloc_qp_buf`: `align(qp->buf_size, page_size)`);
//! - bookkeeping arrays of the same function: `sq.wrid` (8 bytes), `sq.wr_data` (4) and
//!   `sq.wqe_head` (4) per send basic block, `rq.wrid` (8) per receive WQE;
//! - a doorbell record: one cache line from a shared page (providers/mlx5/dbrec.c, 64 bytes);
//! - the SRQ of the DCT: `stride` x (`tail` + 1) WQEs (srq.c sets `tail` to the ring size less
//!   one), page-rounded, plus its 8-byte `wrid` per WQE and a doorbell record.
//!
//! RC QPs are connected to partner QPs on the same port (loopback); the partners stand for the
//! peers' side and are neither timed nor counted. Times on soft-mlx5 are the emulated kernel's,
//! not firmware's.
use mlx5dv::{Access, Cq, DcKey, DciBuilder, DctBuilder, Mlx5Context, Pd, PeerPath, RcCaps, RcQp, RcRemote, RtsAttr};
#[path = "common/provider_mem.rs"]
mod provider_mem;

use provider_mem::{qp_bytes, srq_bytes};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Send queue depth of every RC QP and DCI; receive queue depth of every RC QP.
const DEPTH: u32 = 128;
/// Receive WQEs of the DCT's SRQ.
const SRQ_DEPTH: u32 = 1024;
const MTU: u32 = 1024;

struct Opts {
    dev: Option<String>,
    port: u8,
    peers: Vec<usize>,
    dcis: Vec<usize>,
}

fn list(v: &str, what: &str) -> Result<Vec<usize>, String> {
    v.split(',')
        .map(|x| x.trim().parse().map_err(|_| format!("{what} takes numbers like 16,64")))
        .collect()
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        dev: None,
        port: 1,
        peers: vec![16, 64, 256, 1024],
        dcis: vec![1, 4, 16],
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "-d" => o.dev = Some(val("-d")?),
            "-i" => o.port = val("-i")?.parse().map_err(|_| "-i takes a port number")?,
            "-n" => o.peers = list(&val("-n")?, "-n")?,
            "-w" => o.dcis = list(&val("-w")?, "-w")?,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(o)
}

struct Row {
    what: String,
    qps: usize,
    bytes: u64,
    time: Duration,
}

/// RC: N QPs, each created and brought to RTS against a partner QP.
fn rc(pd: &Pd, cq: &Cq, port: u8, lid: u16, n: usize) -> Result<Row, String> {
    let caps = RcCaps {
        max_send_wr: DEPTH,
        max_recv_wr: DEPTH,
        ..RcCaps::default()
    };
    let partners = (0..n)
        .map(|_| pd.create_rc_qp(cq, None, caps))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut qps = Vec::with_capacity(n);
    for p in &partners {
        let qp = pd.create_rc_qp(cq, None, caps).map_err(|e| e.to_string())?;
        let qp = qp.init(port, Access::LOCAL_WRITE).map_err(|e| e.to_string())?;
        let remote = RcRemote {
            qp_num: p.qp_num(),
            psn: 0,
            path: PeerPath::Lid { lid, sl: 0 },
            mtu_bytes: MTU,
            max_dest_rd_atomic: 1,
            min_rnr_timer: 12,
        };
        let qp = qp.rtr(&remote).map_err(|e| e.to_string())?;
        let qp: RcQp<mlx5dv::state::Rts> = qp.rts(RtsAttr::default()).map_err(|e| e.to_string())?;
        qps.push(qp);
    }
    let time = start.elapsed();
    let bytes = qps.iter().map(|q| qp_bytes(q.as_raw())).sum::<Result<u64, String>>()?;
    Ok(Row {
        what: "RC, one QP per peer".into(),
        qps: n,
        bytes,
        time,
    })
}

/// DC: one DCT on an SRQ and `w` DCIs in RTS.
fn dc(mlx5: &Mlx5Context, pd: &Pd, cq: &Cq, port: u8, w: usize) -> Result<Row, String> {
    let start = Instant::now();
    let srq = pd.create_srq(SRQ_DEPTH, 1).map_err(|e| e.to_string())?;
    let dct = DctBuilder::new(mlx5, pd, cq, &srq, DcKey::new(0xffee_ddcc))
        .port(port)
        .mtu(MTU)
        .build()
        .map_err(|e| e.to_string())?;
    let dcis = (0..w)
        .map(|_| {
            DciBuilder::new(mlx5, pd, cq)
                .max_send_wr(DEPTH)
                .build_ready(port, MTU, RtsAttr::default())
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let time = start.elapsed();
    // The DCT has no work-queue buffer of its own: it receives on the SRQ.
    let mut bytes = srq_bytes(srq.as_raw())?;
    for d in &dcis {
        bytes += qp_bytes(d.as_raw())?;
    }
    drop(dct);
    Ok(Row {
        what: format!("DC, 1 DCT + {w} DCI{}", if w == 1 { "" } else { "s" }),
        qps: 1 + w,
        bytes,
        time,
    })
}

fn run(o: &Opts) -> Result<(), String> {
    let ctx = mlx5dv::open_device(o.dev.as_deref()).map_err(|e| e.to_string())?;
    let mlx5 = ctx.mlx5().map_err(|e| e.to_string())?;
    let port = ctx.query_port(o.port).map_err(|e| e.to_string())?;
    if port.link_layer_str() == "Ethernet" {
        return Err(
            "dc_scale connects its RC QPs by LID: use an InfiniBand port (soft-mlx5: the default profile)".into(),
        );
    }
    let pd = ctx.alloc_pd().map_err(|e| e.to_string())?;
    let max_n = o.peers.iter().copied().max().unwrap_or(0) as u32;
    let cq = ctx
        .create_cq((2 * max_n * DEPTH).clamp(1024, 65536))
        .map_err(|e| e.to_string())?;
    println!(
        "{}: per node, N peers; send queues {DEPTH} deep, RC receive queues {DEPTH} deep, the DCT's SRQ {SRQ_DEPTH} deep",
        ctx.name()
    );
    println!("memory: host memory libmlx5 allocated for the queues (rings, bookkeeping, doorbell records), read with mlx5dv_init_obj; not NIC memory");
    println!(
        "{:>6}  {:<24} {:>6} {:>12} {:>12}",
        "N", "transport", "QPs", "memory KiB", "set-up ms"
    );
    for &n in &o.peers {
        let mut rows = vec![rc(&pd, &cq, o.port, port.lid(), n)?];
        for &w in &o.dcis {
            rows.push(dc(&mlx5, &pd, &cq, o.port, w)?);
        }
        for r in rows {
            println!(
                "{n:>6}  {:<24} {:>6} {:>12.1} {:>12.2}",
                r.what,
                r.qps,
                r.bytes as f64 / 1024.0,
                r.time.as_secs_f64() * 1e3
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("dc_scale: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dc_scale: {e}");
            ExitCode::FAILURE
        }
    }
}
