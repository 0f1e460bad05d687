//! One node sends to N peers through a pool of W DCIs under each policy, beside RC with one QP
//! per peer: message rate, fairness (most and fewest completions of any peer) and the host
//! memory the provider allocated for the sending queues.
//!
//! Usage: `dc_fanout [-d DEV] [-i PORT] [-n N,N,...] [-w W,W,...] [-t MS]` (defaults: first
//! mlx5 device, port 1, N = 64,256,1024, W = 1,4,16, 100 ms per run). Without a ConnectX:
//! `scripts/soft-mlx5 -- target/release/examples/dc_fanout` (figures are the emulator's, not a
//! NIC's). The peers are DCTs (and, for RC, partner QPs) on the same port; every request is an
//! 8-byte RDMA write to its peer's slot, posted round-robin over the peers; a refused post
//! (EAGAIN: backpressure) moves on to the next peer.
#[path = "common/provider_mem.rs"]
mod provider_mem;

use mlx5dv::endpoint::{Endpoints, PoolConfig, RcEndpoints};
use mlx5dv::{
    Access, DcKey, DcPeer, DcTargetAddr, DciPool, DctBuilder, EndpointId, EpCompletion, Mtu, PeerPath, Policy, RcCaps,
    RcRemote, RemoteMemory, Request, RtsAttr, Sge, WcStatus,
};
use provider_mem::qp_bytes;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const KEY: DcKey = DcKey::new(0xfa_0001);
const MTU: u32 = 1024;
const DEPTH: u32 = 128;

struct Opts {
    dev: Option<String>,
    port: u8,
    peers: Vec<usize>,
    dcis: Vec<usize>,
    run: Duration,
}

fn list(v: &str, what: &str) -> Result<Vec<usize>, String> {
    v.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .map_err(|_| format!("{what} takes numbers like 64,256"))
        })
        .collect()
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        dev: None,
        port: 1,
        peers: vec![64, 256, 1024],
        dcis: vec![1, 4, 16],
        run: Duration::from_millis(100),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "-d" => o.dev = Some(val("-d")?),
            "-i" => o.port = val("-i")?.parse().map_err(|_| "-i takes a port number")?,
            "-n" => o.peers = list(&val("-n")?, "-n")?,
            "-w" => o.dcis = list(&val("-w")?, "-w")?,
            "-t" => o.run = Duration::from_millis(val("-t")?.parse().map_err(|_| "-t takes milliseconds")?),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(o)
}

/// What one run measured.
struct Figures {
    rate: f64,
    most: u64,
    fewest: u64,
}

/// Round-robin writes to every endpoint for `run`, then drains.
fn drive<'a>(
    eps: &mut Endpoints,
    ids: &[EndpointId],
    local: Sge<'a>,
    slots: &[RemoteMemory],
    run: Duration,
) -> Result<Figures, String> {
    let mut per_peer = vec![0u64; ids.len()];
    let mut out = [EpCompletion::default(); 64];
    let (mut posted, mut done, mut next) = (0u64, 0u64, 0usize);
    let start = Instant::now();
    let mut reap = |eps: &mut Endpoints, per_peer: &mut [u64]| -> Result<u64, String> {
        let n = eps.poll(&mut out).map_err(|e| e.to_string())?;
        for c in &out[..n] {
            if c.status != WcStatus::Success {
                return Err(format!("endpoint {} failed: {}", c.endpoint.index(), c.status));
            }
            per_peer[c.wr_id as usize] += 1;
        }
        Ok(n as u64)
    };
    while start.elapsed() < run {
        for _ in 0..ids.len().min(32) {
            let i = next;
            next = (next + 1) % ids.len();
            match eps.post(
                ids[i],
                i as u64,
                Request::Write {
                    local,
                    remote: slots[i],
                },
            ) {
                Ok(()) => posted += 1,
                Err(e) if e.is_would_block() => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        done += reap(eps, &mut per_peer)?;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while done < posted {
        if Instant::now() > deadline {
            return Err(format!("{} requests never completed", posted - done));
        }
        done += reap(eps, &mut per_peer)?;
    }
    let secs = start.elapsed().as_secs_f64();
    Ok(Figures {
        rate: done as f64 / secs,
        most: per_peer.iter().copied().max().unwrap_or(0),
        fewest: per_peer.iter().copied().min().unwrap_or(0),
    })
}

fn print(n: usize, what: &str, qps: usize, kib: f64, f: &Figures) {
    println!(
        "{n:>6}  {what:<30} {qps:>5} {kib:>11.1} {:>12.0} {:>8} {:>8}",
        f.rate, f.most, f.fewest
    );
}

fn run(o: &Opts) -> Result<(), String> {
    let ctx = mlx5dv::open_device(o.dev.as_deref()).map_err(|e| e.to_string())?;
    let mlx5 = ctx.mlx5().map_err(|e| e.to_string())?;
    let port = ctx.query_port(o.port).map_err(|e| e.to_string())?;
    if port.link_layer_str() == "Ethernet" {
        return Err(
            "dc_fanout addresses its peers by LID: use an InfiniBand port (soft-mlx5: the default profile)".into(),
        );
    }
    let lid = port.lid();
    let streams = mlx5
        .caps()
        .map_err(|e| e.to_string())?
        .dci_streams
        .is_some_and(|(c, _)| c >= 2);
    let pd = ctx.alloc_pd().map_err(|e| e.to_string())?;
    let src = pd.alloc_mr(64, Access::LOCAL_WRITE).map_err(|e| e.to_string())?;
    let local = src.sge(0, 8).map_err(|e| e.to_string())?;
    println!(
        "{}: 8-byte RDMA writes, round-robin over N peers, {} ms per run; rate in completions/s (the device's, here: soft-mlx5 is an emulator)",
        ctx.name(),
        o.run.as_millis()
    );
    println!("memory: host memory libmlx5 allocated for the sending queues (mlx5dv_init_obj), not NIC memory");
    println!(
        "{:>6}  {:<30} {:>5} {:>11} {:>12} {:>8} {:>8}",
        "N", "transport", "QPs", "memory KiB", "msgs/s", "most", "fewest"
    );
    for &n in &o.peers {
        let peer_cq = ctx.create_cq(4096).map_err(|e| e.to_string())?;
        let srq = pd.create_srq(16, 1).map_err(|e| e.to_string())?;
        let target = pd
            .alloc_mr(n * 8, Access::LOCAL_WRITE | Access::REMOTE_WRITE)
            .map_err(|e| e.to_string())?;
        let mem = target.remote().ok_or("the target has no remote access")?;
        let slots: Vec<_> = (0..n).map(|i| mem.slice(i as u64 * 8, 8).expect("in range")).collect();
        let dcts = (0..n)
            .map(|_| {
                DctBuilder::new(&mlx5, &pd, &peer_cq, &srq, KEY)
                    .port(o.port)
                    .mtu(MTU)
                    .access(Access::LOCAL_WRITE | Access::REMOTE_WRITE)
                    .build()
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let addrs: Vec<_> = dcts
            .iter()
            .map(|d| DcTargetAddr {
                lid,
                gid: [0; 16],
                dct_number: d.dct_number(),
                port_mtu: Mtu::Mtu1024,
                out_of_order: false,
            })
            .collect();
        let ahs = addrs
            .iter()
            .map(|a| pd.create_ah(o.port, &PeerPath::to_dc_target(a, None)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;

        // RC: one QP per peer, connected to a partner QP that grants remote writes.
        {
            // Every request is signaled: the CQ holds each QP's whole send queue.
            let cq = ctx.create_cq((n as u32 * DEPTH).max(4096)).map_err(|e| e.to_string())?;
            let caps = RcCaps {
                max_send_wr: DEPTH,
                max_recv_wr: 1,
                ..RcCaps::default()
            };
            let mut rc = RcEndpoints::new(cq, n);
            let mut partners = Vec::with_capacity(n);
            let mut ids = Vec::with_capacity(n);
            let mut kib = 0.0;
            for _ in 0..n {
                let remote = |qp_num| RcRemote {
                    qp_num,
                    psn: 0,
                    path: PeerPath::Lid { lid, sl: 0 },
                    mtu_bytes: MTU,
                    max_dest_rd_atomic: 1,
                    min_rnr_timer: 12,
                };
                let p = pd.create_rc_qp(&peer_cq, None, caps).map_err(|e| e.to_string())?;
                let q = pd.create_rc_qp(rc.cq(), None, caps).map_err(|e| e.to_string())?;
                let p = p
                    .init(o.port, Access::LOCAL_WRITE | Access::REMOTE_WRITE)
                    .map_err(|e| e.to_string())?;
                let q = q.init(o.port, Access::LOCAL_WRITE).map_err(|e| e.to_string())?;
                let p = p.rtr(&remote(q.qp_num())).map_err(|e| e.to_string())?;
                let q = q.rtr(&remote(p.qp_num())).map_err(|e| e.to_string())?;
                let q = q.rts(RtsAttr::default()).map_err(|e| e.to_string())?;
                kib += qp_bytes(q.as_raw())? as f64 / 1024.0;
                partners.push(p);
                ids.push(rc.add(q).map_err(|e| e.to_string())?);
            }
            let mut eps = Endpoints::Rc(rc);
            let f = drive(&mut eps, &ids, local, &slots, o.run)?;
            print(n, "RC, one QP per peer", n, kib, &f);
        }

        for &w in &o.dcis {
            let mut policies = vec![
                ("dcs", Policy::Dcs),
                ("dcs_quota 8", Policy::DcsQuota { quota: 8 }),
                ("rand", Policy::Rand { seed: 1 }),
            ];
            if streams {
                policies.push((
                    "streams (4 per DCI)",
                    Policy::Streams {
                        log_concurrent: 2,
                        log_errored: 1,
                    },
                ));
            }
            for (name, policy) in policies {
                let cq = ctx.create_cq((w as u32 * DEPTH).max(4096)).map_err(|e| e.to_string())?;
                let cfg = PoolConfig {
                    dcis: w,
                    max_endpoints: n,
                    policy,
                    max_send_wr: DEPTH,
                    port: o.port,
                    mtu_bytes: Some(MTU),
                    ..PoolConfig::default()
                };
                let mut pool = DciPool::new(&mlx5, &pd, cq, cfg).map_err(|e| e.to_string())?;
                pool.hold(&src).map_err(|e| e.to_string())?;
                let ids = (0..n)
                    .map(|i| pool.add_endpoint(DcPeer::new(&ahs[i], &addrs[i], KEY)))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| e.to_string())?;
                let kib = pool.dcis().map(|d| qp_bytes(d.as_raw())).sum::<Result<u64, String>>()? as f64 / 1024.0;
                let mut eps = Endpoints::Dc(pool);
                let f = drive(&mut eps, &ids, local, &slots, o.run)?;
                print(n, &format!("DC {w} DCI, {name}"), w, kib, &f);
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("dc_fanout: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dc_fanout: {e}");
            ExitCode::FAILURE
        }
    }
}
