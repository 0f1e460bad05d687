//! The server's instructions per transfer, async against sync, on one load (scripts/s3-async-count
//! runs it under callgrind on soft-mlx5, collecting `run_sync` or `run_async` alone, which is
//! the server's side only: the emulated device runs on a thread of its own, and the client's
//! DCT needs no CPU).
//!
//!   s3_async_count sync|async|floor [TRANSFERS] [IN_FLIGHT] [BYTES]
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

fn main() -> Result<(), Failure> {
    let mut args = std::env::args().skip(1);
    let mode = args
        .next()
        .ok_or("usage: s3_async_count sync|async|floor [TRANSFERS] [IN_FLIGHT] [BYTES]")?;
    let mut num = |d: usize| args.next().map_or(Ok(d), |v| v.parse::<usize>());
    let (transfers, in_flight, bytes) = (num(20_000)?, num(32)?, num(4096)?);
    let ctx = mlx5dv::open_device_from_env()?;
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
        "floor" => run_floor(exec, &token, &object, transfers, in_flight)?,
        other => return Err(format!("mode {other}: sync, async or floor").into()),
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

/// What any thread-safe async layer over the sync executor pays on tokio, measured: the same
/// tasks, runtime and driver steps as `run_async`, through the thinnest handoff a `Send`
/// layer can have (one `Mutex`, a slot per task; no generation, queue, region handed back or
/// dropped future). Not a design: the floor `run_async` is compared with.
#[inline(never)]
fn run_floor(
    exec: Executor,
    token: &RdmaToken,
    object: &Arc<Mr<Vec<u8>>>,
    transfers: usize,
    in_flight: usize,
) -> Result<(usize, u64), Failure> {
    use std::future::poll_fn;
    use std::sync::Mutex;
    use std::task::{Poll, Waker};
    use tokio::io::unix::AsyncFd;

    struct Floor {
        exec: Executor,
        out: Vec<Done>,
        waker: Vec<Option<Waker>>,
        done: Vec<Option<bool>>,
        live: usize,
        events: u64,
    }
    struct Fd(std::os::fd::RawFd);
    impl std::os::fd::AsRawFd for Fd {
        fn as_raw_fd(&self) -> std::os::fd::RawFd {
            self.0
        }
    }
    let fd = Fd(std::os::fd::AsRawFd::as_raw_fd(
        exec.pool().cq().channel().ok_or("the CQ has no channel")?,
    ));
    let floor = Arc::new(Mutex::new(Floor {
        exec,
        out: vec![Done::default(); 64],
        waker: vec![None; in_flight],
        done: vec![None; in_flight],
        live: in_flight,
        events: 0,
    }));
    let rt = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
    rt.block_on(async {
        // SAFETY: the executor in `floor` owns the channel and outlives this AsyncFd (both
        // end with this block), so the descriptor stays the same open file.
        let afd = unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }?;
        let driver = Arc::clone(&floor);
        let drive = tokio::spawn(poll_fn(move |cx| -> Poll<Result<(), Failure>> {
            loop {
                if let Poll::Ready(r) = afd.poll_read_ready(cx) {
                    r?.clear_ready();
                }
                let mut f = driver.lock().unwrap_or_else(|p| p.into_inner());
                let f = &mut *f;
                while f.exec.pool().cq().try_event()? {
                    f.events += 1;
                }
                let mut n = f.exec.poll(&mut f.out)?;
                if n == 0 {
                    if f.live == 0 {
                        return Poll::Ready(Ok(()));
                    }
                    f.exec.pool().cq().req_notify(false)?;
                    n = f.exec.poll(&mut f.out)?;
                    if n == 0 {
                        if afd.poll_read_ready(cx).is_pending() {
                            return Poll::Pending;
                        }
                        continue;
                    }
                }
                for d in &f.out[..n] {
                    let t = d.id as usize;
                    f.done[t] = Some(d.is_ok());
                    if let Some(w) = f.waker[t].take() {
                        w.wake();
                    }
                }
            }
        }));
        let len = object.len();
        let mut tasks = Vec::new();
        for t in 0..in_flight {
            let (floor, token, object) = (Arc::clone(&floor), *token, Arc::clone(object));
            let mine = transfers / in_flight + usize::from(t < transfers % in_flight);
            tasks.push(tokio::spawn(async move {
                for _ in 0..mine {
                    floor.lock().unwrap_or_else(|p| p.into_inner()).exec.submit_region(
                        t as u64,
                        &token,
                        0,
                        Direction::Get,
                        &object,
                        0,
                        len,
                    )?;
                    let ok = poll_fn(|cx| {
                        let mut f = floor.lock().unwrap_or_else(|p| p.into_inner());
                        match f.done[t].take() {
                            Some(ok) => Poll::Ready(ok),
                            None => {
                                f.waker[t] = Some(cx.waker().clone());
                                Poll::Pending
                            }
                        }
                    })
                    .await;
                    if !ok {
                        return Err(Failure::from("a transfer failed"));
                    }
                }
                floor.lock().unwrap_or_else(|p| p.into_inner()).live -= 1;
                Ok::<usize, Failure>(mine)
            }));
        }
        let mut moved = 0;
        for t in tasks {
            moved += t.await??;
        }
        // Every transfer is reported: the driver has nothing left to wait for.
        drive.abort();
        let events = floor.lock().unwrap_or_else(|p| p.into_inner()).events;
        Ok((moved, events))
    })
}
