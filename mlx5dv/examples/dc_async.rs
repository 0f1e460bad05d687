//! A DC client inside a tokio task: the task owns the whole client (context, PD, a DCI pool
//! whose CQ has a completion channel, and the registered `Vec` it sends from), posts DC writes
//! to a DC target, and awaits each completion through the channel's descriptor with tokio's
//! `AsyncFd`: no spinning, no thread of its own.
//!
//!   dc_async [-d DEVICE] [-g GID_INDEX] [-n WRITES]
//!
//! `-g` defaults to the port's RoCE v2 GID index on RoCE (`Context::roce_v2_gid_index`).
//!
//! The target (a DCT and the memory it exposes) lives in `main`, on the same device: the
//! client only knows its address, key and remote memory, as it would across the network.
//! Run it on a ConnectX-5+, or on soft-mlx5: `scripts/soft-mlx5 -- target/debug/examples/dc_async`.
use mlx5dv::endpoint::PoolConfig;
use mlx5dv::{
    Access, Context, DcKey, DcPeer, DcTargetAddr, DciPool, DctBuilder, EpCompletion, PeerPath, RemoteMemory, Request,
    WcStatus,
};
use std::os::fd::{AsRawFd, RawFd};
use std::process::ExitCode;
use std::time::{Duration, Instant};

const KEY: DcKey = DcKey::new(0xA5_7C);
const CHUNK: usize = 64;

struct Opts {
    device: Option<String>,
    gid_index: Option<u8>,
    writes: usize,
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        device: None,
        gid_index: None,
        writes: 1000,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "-d" => o.device = Some(value()?),
            "-g" => o.gid_index = Some(value()?.parse().map_err(|e| format!("-g: {e}"))?),
            "-n" => o.writes = value()?.parse().map_err(|e| format!("-n: {e}"))?,
            other => {
                return Err(format!(
                    "unknown argument {other} (usage: dc_async [-d DEVICE] [-g GID_INDEX] [-n WRITES])"
                ))
            }
        }
    }
    if o.writes == 0 {
        return Err("-n must be at least 1".into());
    }
    Ok(o)
}

/// The descriptor of a completion channel, for `AsyncFd` (the channel stays with the pool).
struct ChannelFd(RawFd);

impl AsRawFd for ChannelFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// Everything the client task owns.
struct Client {
    _ctx: Context,
    pool: DciPool,
    src: mlx5dv::Mr<Vec<u8>>,
    ep: mlx5dv::EndpointId,
}

impl Client {
    fn new(ctx: Context, port: u8, gid_index: Option<u8>, target: &DcTargetAddr) -> mlx5dv::Result<Client> {
        let mlx5 = ctx.mlx5()?;
        let pd = ctx.alloc_pd()?;
        let cq = ctx.create_cq_with_channel(256)?;
        let mut pool = DciPool::new(
            &mlx5,
            &pd,
            cq,
            PoolConfig {
                dcis: 2,
                max_endpoints: 1,
                port,
                ..PoolConfig::default()
            },
        )?;
        let src = pd.register(vec![0u8; CHUNK], Access::LOCAL_WRITE)?;
        pool.hold(&src)?;
        let ah = pd.create_ah(port, &PeerPath::to_dc_target(target, gid_index))?;
        let ep = pool.add_endpoint(DcPeer::new(&ah, target, KEY))?;
        Ok(Client {
            _ctx: ctx,
            pool,
            src,
            ep,
        })
    }

    /// Writes `n` chunks (chunk `i` filled with `i`'s low byte) into `remote`, one at a time,
    /// awaiting each completion; returns the latencies.
    async fn run(&mut self, remote: RemoteMemory, n: usize) -> Result<Vec<Duration>, String> {
        let channel = self
            .pool
            .cq()
            .channel()
            .ok_or("the pool's CQ has no completion channel")?;
        // Readable, and in error: once the device is gone (a fatal error, a PCI error or a hot
        // unplug disassociates the context) the kernel closes the channel's queue, which then
        // polls as EPOLLERR alone (uverbs_main.c, ib_uverbs_event_poll). Tokio wakes no reader
        // for that, only a task waiting for Interest::ERROR: a task waiting for READABLE alone
        // would sleep for ever (here, until its timeout) on a lost device.
        let interest = tokio::io::Interest::READABLE | tokio::io::Interest::ERROR;
        // SAFETY: the channel's descriptor stays open while the pool lives, and the pool
        // (borrowed by this call) outlives the AsyncFd, dropped when this function returns.
        let afd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(ChannelFd(channel.as_raw_fd()), interest) }
            .map_err(|e| format!("AsyncFd: {e}"))?;
        let mut out = [EpCompletion::default(); 4];
        let mut lat = Vec::with_capacity(n);
        for i in 0..n {
            self.src.write(0, &[i as u8; CHUNK]).map_err(|e| e.to_string())?;
            let slot = remote
                .slice(((i % 64) * CHUNK) as u64, CHUNK as u64)
                .map_err(|e| e.to_string())?;
            let started = Instant::now();
            let req = Request::Write {
                local: self.src.sge(0, CHUNK).map_err(|e| e.to_string())?,
                remote: slot,
            };
            self.pool.post(self.ep, i as u64, req).map_err(|e| e.to_string())?;
            loop {
                self.pool.cq().req_notify(false).map_err(|e| e.to_string())?;
                let k = self.pool.poll(&mut out).map_err(|e| e.to_string())?;
                if k > 0 {
                    if out[0].status != WcStatus::Success || out[0].wr_id != i as u64 {
                        return Err(format!("write {i}: {:?}", out[0]));
                    }
                    lat.push(started.elapsed());
                    break;
                }
                let mut ready = tokio::time::timeout(Duration::from_secs(5), afd.ready(interest))
                    .await
                    .map_err(|_| format!("write {i}: no completion event within 5 s"))?
                    .map_err(|e| e.to_string())?;
                // On a lost device the channel is in error and this read fails with EIO.
                while self.pool.cq().try_event().map_err(|e| e.to_string())? {}
                ready.clear_ready();
            }
        }
        Ok(lat)
    }
}

fn run(o: Opts) -> Result<(), String> {
    let ctx = mlx5dv::open_device(o.device.as_deref()).map_err(|e| e.to_string())?;
    let port = 1;
    // -g, or the port's RoCE v2 GID index on RoCE (None on InfiniBand, which needs none).
    let gid_index = match o.gid_index {
        Some(g) => Some(g),
        None => ctx.roce_v2_gid_index(port).map_err(|e| e.to_string())?,
    };
    // The target side: a DCT and 64 chunks of memory it exposes.
    let mlx5 = ctx.mlx5().map_err(|e| e.to_string())?;
    let pd = ctx.alloc_pd().map_err(|e| e.to_string())?;
    let cq = ctx.create_cq(64).map_err(|e| e.to_string())?;
    let srq = pd.create_srq(16, 1).map_err(|e| e.to_string())?;
    let b = DctBuilder::new(&mlx5, &pd, &cq, &srq, KEY)
        .port(port)
        .access(Access::REMOTE_WRITE)
        .gid_index(gid_index);
    let dct = b.build().map_err(|e| e.to_string())?;
    let addr = dct.target_addr().map_err(|e| e.to_string())?;
    let memory = pd
        .register(vec![0u8; 64 * CHUNK], Access::LOCAL_WRITE | Access::REMOTE_WRITE)
        .map_err(|e| e.to_string())?;
    let remote = memory.remote().ok_or("the target memory has no remote access")?;

    let mut client = Client::new(ctx.clone(), port, gid_index, &addr).map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let n = o.writes;
    let task = rt.spawn(async move {
        let lat = client.run(remote, n).await;
        (client, lat)
    });
    let (client, lat) = rt.block_on(task).map_err(|e| format!("the client task failed: {e}"))?;
    let mut lat = lat?;
    drop(client);
    lat.sort();
    let back = memory.deregister().map_err(|e| e.to_string())?;
    let last = (n - 1) % 64;
    if back[last * CHUNK..(last + 1) * CHUNK] != [(n - 1) as u8; CHUNK] {
        return Err("the target memory does not hold the last write".into());
    }
    println!(
        "dc_async on {}: {n} DC writes from a tokio task, each awaited through the completion channel: median {:.1} us, p99 {:.1} us",
        ctx.name(),
        lat[n / 2].as_secs_f64() * 1e6,
        lat[(n * 99 / 100).min(n - 1)].as_secs_f64() * 1e6,
    );
    drop(dct);
    Ok(())
}

fn main() -> ExitCode {
    let r = parse().and_then(run);
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dc_async: {e}");
            ExitCode::FAILURE
        }
    }
}
