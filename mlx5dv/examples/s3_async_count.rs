//! The server's instructions per transfer, async against sync, on one load (scripts/s3-async-count
//! runs it under callgrind on soft-mlx5, collecting `run_sync` or `run_async` alone, which is
//! the server's side only: the emulated device runs on a thread of its own, and the client's
//! DCT needs no CPU).
//!
//!   s3_async_count sync|async [TRANSFERS] [IN_FLIGHT] [BYTES]
//!
//! The load: TRANSFERS GETs (default 20000) of BYTES (4096) each, IN_FLIGHT (32) at once,
//! every one from an object's own region (`submit_region`) into one client's buffer.
//! - sync: one thread drives the `Executor` and, when a poll finds nothing, sleeps on the
//!   CQ's completion channel (arm, poll again, `Cq::wait`): the sync executor without
//!   spinning, so the count does not depend on how fast the device is;
//! - async: IN_FLIGHT tokio tasks on a current-thread runtime (so every instruction of the
//!   runtime, the tasks and the driver is this thread's), each awaiting its transfers one
//!   after another through `AsyncExecutor`, the driver spawned by `s3::tokio::spawn`.

use mlx5dv::s3::{AsyncConfig, Client, ClientConfig, Direction, Done, Executor, ExecutorConfig, RdmaToken};
use mlx5dv::{Access, Mr};
use std::sync::Arc;

type Failure = Box<dyn std::error::Error + Send + Sync>;

#[path = "common/device.rs"]
mod device;

fn main() -> Result<(), Failure> {
    let mut args = std::env::args().skip(1);
    let mode = args
        .next()
        .ok_or("usage: s3_async_count sync|async [TRANSFERS] [IN_FLIGHT] [BYTES]")?;
    let mut num = |d: usize| args.next().map_or(Ok(d), |v| v.parse::<usize>());
    let (transfers, in_flight, bytes) = (num(20_000)?, num(32)?, num(4096)?);
    let ctx = device::open(std::env::var("MLX5DV_TEST_DEVICE").ok().as_deref())?;
    let (mlx5, pd) = (ctx.mlx5()?, ctx.alloc_pd()?);
    let key = mlx5dv::s3::REFERENCE_DC_KEY;
    let client = Client::new(&mlx5, &pd, key, ClientConfig::default())?;
    let mut buf = client.expose(pd.register(vec![0u8; bytes], Access::LOCAL_WRITE)?)?;
    let (_, token) = buf.mint(0, bytes, Direction::Get)?;
    let cfg = ExecutorConfig {
        key,
        ..ExecutorConfig::default()
    };
    let exec = Executor::new(&mlx5, &pd, ctx.create_cq_with_channel(cfg.cq_size())?, cfg)?;
    let object = Arc::new(pd.register(vec![7u8; bytes], Access::LOCAL_WRITE)?);
    let (moved, sleeps) = match mode.as_str() {
        "sync" => run_sync(exec, &token, &object, transfers, in_flight)?,
        "async" => run_async(exec, &token, &object, transfers, in_flight)?,
        other => return Err(format!("mode {other}: sync or async").into()),
    };
    let mut got = vec![0u8; bytes];
    buf.mr().read(0, &mut got)?;
    if moved != transfers || got.iter().any(|&b| b != 7) {
        return Err(format!("{moved} of {transfers} transfers moved, or the bytes differ").into());
    }
    println!("{mode}: {transfers} transfers of {bytes} bytes, {in_flight} at once, {sleeps} sleeps on the channel");
    drop(pd);
    Ok(())
}

/// The sync executor, sleeping on the completion channel when a poll finds nothing.
#[inline(never)]
fn run_sync(
    mut exec: Executor,
    token: &RdmaToken,
    object: &Mr<Vec<u8>>,
    transfers: usize,
    in_flight: usize,
) -> Result<(usize, u64), Failure> {
    let len = object.len();
    let (mut submitted, mut finished, mut sleeps) = (0, 0, 0);
    let mut out = vec![Done::default(); 64];
    while submitted < in_flight.min(transfers) {
        exec.submit_region(submitted as u64, token, 0, Direction::Get, object, 0, len)?;
        submitted += 1;
    }
    while finished < transfers {
        let mut n = exec.poll(&mut out)?;
        if n == 0 {
            exec.pool().cq().req_notify(false)?;
            n = exec.poll(&mut out)?;
            if n == 0 {
                exec.pool().cq().wait(None)?;
                sleeps += 1;
                continue;
            }
        }
        for d in &out[..n] {
            if !d.is_ok() {
                return Err(format!("transfer {} failed: {d:?}", d.id).into());
            }
            finished += 1;
            if submitted < transfers {
                exec.submit_region(submitted as u64, token, 0, Direction::Get, object, 0, len)?;
                submitted += 1;
            }
        }
    }
    Ok((finished, sleeps))
}

/// The async executor: `in_flight` tasks awaiting their transfers on a current-thread runtime.
#[inline(never)]
fn run_async(
    exec: Executor,
    token: &RdmaToken,
    object: &Arc<Mr<Vec<u8>>>,
    transfers: usize,
    in_flight: usize,
) -> Result<(usize, u64), Failure> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
    rt.block_on(async {
        let exec = mlx5dv::s3::tokio::spawn(exec, AsyncConfig::default())?;
        let len = object.len();
        let mut tasks = Vec::new();
        for t in 0..in_flight {
            let (exec, token, object) = (exec.clone(), *token, Arc::clone(object));
            let mine = transfers / in_flight + usize::from(t < transfers % in_flight);
            tasks.push(tokio::spawn(async move {
                for _ in 0..mine {
                    let (done, _) = exec
                        .submit_region(&token, 0, Direction::Get, Arc::clone(&object), 0, len)?
                        .await;
                    if !done.is_ok() {
                        return Err(Failure::from(format!("a transfer failed: {done:?}")));
                    }
                }
                Ok(mine)
            }));
        }
        let mut moved = 0;
        for t in tasks {
            moved += t.await??;
        }
        // Each Wait of the driver ends in a sleep on the channel (one event read per sleep).
        Ok((moved, exec.stats().events))
    })
}
