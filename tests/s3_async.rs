//! The async S3 executor (mlx5dv::s3::AsyncExecutor and its Driver) on one emulated node
//! (scripts/soft-mlx5): the wake-up sequence against lost wake-ups (the device paused and
//! resumed around the driver's last poll), reports the executor took from the CQ but had not
//! handed out, the bounded queue of submissions the executor refused with EAGAIN, zero copy
//! from regions of the transfer's own (and bad regions refused), and 64 tokio tasks at once
//! (feature `tokio`).
//!
//! Opt-in: `scripts/soft-mlx5 -- <this test binary> --include-ignored --test-threads=1`.

use mlx5dv::s3::{
    AsyncConfig, AsyncExecutor, Client, ClientConfig, Direction, Driver, Executor, ExecutorConfig, Exposed, Step,
};
use mlx5dv::{Access, Context, DcKey, Mlx5Context, Mr, Pd};
use mlx5dv_suite::device::{open, pause_hook, PauseFn};
use mlx5dv_suite::s3_pattern;
use std::future::Future;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::time::{Duration, Instant};

const KEY: DcKey = DcKey::new(0x4153_594e_4353_3301);

struct Node {
    ctx: Context,
    mlx5: Mlx5Context,
    pd: Pd,
}

fn node() -> Node {
    let (ctx, _port, _gid) = open();
    let mlx5 = ctx.mlx5().expect("an mlx5 device");
    let pd = ctx.alloc_pd().expect("PD");
    Node { ctx, mlx5, pd }
}

impl Node {
    fn executor(&self, f: impl FnOnce(&mut ExecutorConfig)) -> Executor {
        let mut cfg = ExecutorConfig {
            key: KEY,
            ..ExecutorConfig::default()
        };
        cfg.pool.rts.timeout = 10;
        cfg.pool.rts.retry_cnt = 2;
        f(&mut cfg);
        let cq = self
            .ctx
            .create_cq_with_channel(cfg.cq_size())
            .expect("CQ with a channel");
        Executor::new(&self.mlx5, &self.pd, cq, cfg).expect("executor")
    }

    fn client(&self) -> Client {
        Client::new(&self.mlx5, &self.pd, KEY, ClientConfig::default()).expect("client DCT")
    }

    fn exposed(&self, client: &Client, len: usize, seed: u8) -> Exposed<Vec<u8>> {
        mlx5dv_suite::s3_exposed(&self.pd, client, len, seed)
    }

    /// An object's own region (not held by the executor).
    fn object(&self, len: usize, seed: u8) -> Mr<Vec<u8>> {
        self.pd
            .register(s3_pattern(len, u64::from(seed)), Access::LOCAL_WRITE)
            .expect("register")
    }
}

fn bytes<B: mlx5dv::RegionBuffer>(mr: &Mr<B>) -> Vec<u8> {
    let mut v = vec![0u8; mr.len()];
    mr.read(0, &mut v).expect("read");
    v
}

/// A waker that counts its wake-ups.
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counting() -> (Arc<Count>, Waker) {
    let c = Arc::new(Count(AtomicUsize::new(0)));
    (Arc::clone(&c), Waker::from(Arc::clone(&c)))
}

/// Whether `fd` is readable within `timeout` (poll(2)).
fn readable(fd: &Driver, timeout: Duration) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd, valid for the call.
    let rc = unsafe { libc::poll(&mut p, 1, timeout.as_millis() as libc::c_int) };
    assert!(rc >= 0, "poll: {}", std::io::Error::last_os_error());
    rc == 1
}

/// Steps until the driver says Wait (or Finished).
fn settle(driver: &Driver) -> Step {
    loop {
        match driver.step().expect("step") {
            Step::Again => continue,
            other => return other,
        }
    }
}

/// Drives the way a runtime does (step until Wait, then sleep until the channel is readable
/// or the driver's registered waker is woken) until `done` holds; fails when neither wakes
/// it for 5 s while `done` does not hold.
fn drive_until(driver: &Driver, mut done: impl FnMut() -> bool) {
    let (woken, waker) = counting();
    loop {
        driver.register(&waker);
        let seen = woken.0.load(Ordering::SeqCst);
        settle(driver);
        if done() {
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while !readable(driver, Duration::from_millis(10)) && woken.0.load(Ordering::SeqCst) == seen {
            assert!(
                Instant::now() < deadline,
                "a lost wake-up: the driver waits, the transfers are not resolved, and nothing wakes it"
            );
        }
    }
}

/// The emulator's pause hook; None (printing "not run") where the device cannot be paused.
fn pausable() -> Option<PauseFn> {
    let hook = pause_hook();
    if hook.is_none() {
        eprintln!("not run: no soft-mlx5 here (a ConnectX cannot be paused)");
    }
    hook
}

fn poll_once<F: Future + Unpin>(f: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(f).poll(&mut TaskContext::from_waker(waker))
}

/// The device is paused while the driver takes its last look and arms the CQ, and resumed
/// after: the completion arrives after the driver's last poll, once it waits. It must raise
/// the channel (the CQ was armed before the driver said Wait), and the next step must hand
/// the Done to the task and wake it. A driver that says Wait without arming, or that reads
/// the arm's event away after arming, leaves the transfer waiting for ever: this fails then.
#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn a_completion_arriving_after_the_drivers_last_poll_raises_the_channel_and_wakes_the_task() {
    let Some(pause) = pausable() else {
        return;
    };
    let n = node();
    let (exec, driver) = AsyncExecutor::new(n.executor(|_| {}), AsyncConfig::default()).expect("async executor");
    let client = n.client();
    const LEN: usize = 64 << 10;
    let mut buf = n.exposed(&client, LEN, 2);
    let (_, token) = buf.mint(0, LEN, Direction::Get).expect("mint");
    // A first transfer makes the client proven and leaves the channel quiet.
    let warm = exec
        .submit_region(&token, 0, Direction::Get, n.object(LEN, 9), 0, LEN)
        .expect("submit");
    let mut warm = warm;
    let (count, waker) = counting();
    drive_until(&driver, || {
        count.0.load(Ordering::SeqCst) > 0 || poll_once(&mut warm, &waker).is_ready()
    });
    for round in 0..20u8 {
        // SAFETY: the emulator's hook: 1 pauses the device thread.
        unsafe { pause(1) };
        let mut t = exec
            .submit_region(&token, 0, Direction::Get, n.object(LEN, round), 0, LEN)
            .expect("submit");
        let (count, waker) = counting();
        assert!(
            poll_once(&mut t, &waker).is_pending(),
            "resolved with the device paused"
        );
        assert_eq!(
            settle(&driver),
            Step::Wait,
            "nothing can complete while the device is paused"
        );
        assert!(
            !readable(&driver, Duration::ZERO),
            "the channel is readable with the device paused"
        );
        // SAFETY: as above; 0 resumes it: the completion comes after the driver's last poll.
        unsafe { pause(0) };
        assert!(
            readable(&driver, Duration::from_secs(5)),
            "round {round}: the completion raised no event: the CQ was not armed when the driver said Wait"
        );
        settle(&driver);
        assert!(
            count.0.load(Ordering::SeqCst) >= 1,
            "round {round}: the task was not woken"
        );
        let Poll::Ready((done, object)) = poll_once(&mut t, &waker) else {
            panic!("round {round}: woken but not resolved");
        };
        assert!(done.is_ok() && done.bytes == LEN as u64, "{done:?}");
        assert!(
            bytes(buf.mr()) == s3_pattern(LEN, u64::from(round)),
            "round {round}: bytes differ"
        );
        drop(object);
    }
    let st = driver.stats();
    assert!(st.arms >= 20 && st.events >= 20, "{st:?}");
}

/// Completions the executor took off the CQ in one poll but could not report in it (more
/// than the batch of 1): the driver must hand them all out before it arms and says Wait,
/// since the CQ is empty and no event will ever announce them.
#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn reports_taken_off_the_cq_but_not_yet_handed_out_resolve_before_the_driver_waits() {
    let n = node();
    let cfg = AsyncConfig {
        batch: 1,
        ..AsyncConfig::default()
    };
    let (exec, driver) = AsyncExecutor::new(n.executor(|_| {}), cfg).expect("async executor");
    let client = n.client();
    const LEN: usize = 4096;
    let mut bufs: Vec<_> = (0..8).map(|i| n.exposed(&client, LEN, i)).collect();
    // First the client's path (on RoCE its address handle is made off the data path and
    // taken in by a poll): the 8 transfers below then start at their submission.
    let (_, warm) = bufs[0].mint(0, LEN, Direction::Get).expect("mint");
    let mut warm = exec
        .submit_region(&warm, 0, Direction::Get, n.object(LEN, 1), 0, LEN)
        .expect("submit");
    let (_count, waker) = counting();
    drive_until(&driver, || poll_once(&mut warm, &waker).is_ready());
    let mut transfers = Vec::new();
    for (i, b) in bufs.iter_mut().enumerate() {
        let (_, token) = b.mint(0, LEN, Direction::Get).expect("mint");
        let object = n.object(LEN, 100 + i as u8);
        transfers.push(Some(
            exec.submit_region(&token, 0, Direction::Get, object, 0, LEN)
                .expect("submit"),
        ));
    }
    // Let every completion land before the driver looks: one poll of the executor takes
    // them all off the CQ.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !bufs
        .iter()
        .enumerate()
        .all(|(i, b)| bytes(b.mr()) == s3_pattern(LEN, 100 + i as u64))
    {
        assert!(Instant::now() < deadline, "the device moved nothing");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    let (_count, waker) = counting();
    let mut resolved = 0;
    drive_until(&driver, || {
        for t in transfers.iter_mut() {
            if let Some(f) = t {
                if let Poll::Ready((d, _)) = poll_once(f, &waker) {
                    assert!(d.is_ok(), "{d:?}");
                    *t = None;
                    resolved += 1;
                }
            }
        }
        resolved == 8
    });
    assert_eq!(exec.in_flight(), 0);
}

/// max_transfers 4 and a queue of 4: 8 submissions are taken (4 wait), the 9th is refused
/// with EAGAIN naming the bound; the waiting ones run as the first finish, every byte right.
#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn submissions_past_max_transfers_wait_in_a_bounded_queue_and_past_it_are_refused_with_eagain() {
    let Some(pause) = pausable() else {
        return;
    };
    let n = node();
    let cfg = AsyncConfig {
        max_waiting: 4,
        ..AsyncConfig::default()
    };
    let (exec, driver) = AsyncExecutor::new(n.executor(|c| c.max_transfers = 4), cfg).expect("async executor");
    let client = n.client();
    const LEN: usize = 8192;
    let mut bufs: Vec<_> = (0..9).map(|i| n.exposed(&client, LEN, i)).collect();
    let tokens: Vec<_> = bufs
        .iter_mut()
        .map(|b| b.mint(0, LEN, Direction::Put).expect("mint").1)
        .collect();
    // Paused: none of the first 4 can finish before the queue is full.
    // SAFETY: the emulator's hook (1 pauses, 0 resumes).
    unsafe { pause(1) };
    let mut transfers: Vec<_> = (0..8)
        .map(|i| {
            Some(
                exec.submit_region(&tokens[i], 0, Direction::Put, n.object(LEN, 0), 0, LEN)
                    .expect("submit"),
            )
        })
        .collect();
    let refused = exec
        .submit_region(&tokens[8], 0, Direction::Put, n.object(LEN, 0), 0, LEN)
        .expect_err("a 9th submission with 4 running and 4 waiting");
    assert_eq!(refused.error().errno(), Some(libc::EAGAIN), "{refused}");
    assert!(refused.to_string().contains("max_waiting"), "{refused}");
    // SAFETY: as above.
    unsafe { pause(0) };
    let (_count, waker) = counting();
    let mut landed = 0;
    drive_until(&driver, || {
        for (i, t) in transfers.iter_mut().enumerate() {
            if let Some(f) = t {
                if let Poll::Ready((d, object)) = poll_once(f, &waker) {
                    assert!(d.is_ok() && d.bytes == LEN as u64, "{d:?}");
                    assert!(
                        bytes(&object) == s3_pattern(LEN, i as u64),
                        "transfer {i}: bytes differ"
                    );
                    *t = None;
                    landed += 1;
                }
            }
        }
        landed == 8
    });
    let st = exec.stats();
    assert_eq!((st.waited, st.refused), (4, 1), "{st:?}");
}

/// Zero copy's bad input: a range outside the region, a PUT into a region the device may not
/// write, a region of another PD: each refused with EINVAL saying what to do, the region
/// given back, nothing posted. A region in use cannot be deregistered until its Done.
#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn a_transfers_own_region_is_checked_held_until_its_done_and_given_back() {
    let n = node();
    let mut sync = n.executor(|_| {});
    let client = n.client();
    const LEN: usize = 4096;
    let mut buf = n.exposed(&client, LEN, 7);
    let (_, put) = buf.mint(0, LEN, Direction::Put).expect("mint");
    let object = n.object(LEN, 0);
    let e = sync
        .submit_region(1, &put, 0, Direction::Put, &object, 1, LEN)
        .expect_err("a range past the region's end");
    assert_eq!(e.errno(), Some(libc::EINVAL));
    assert!(e.to_string().contains("outside the 4096-byte region"), "{e}");
    let read_only = n.pd.register(vec![0u8; LEN], Access::none()).expect("register");
    let e = sync
        .submit_region(2, &put, 0, Direction::Put, &read_only, 0, LEN)
        .expect_err("a PUT into a region without local write");
    assert!(e.to_string().contains("LOCAL_WRITE"), "{e}");
    let other_pd = n.ctx.alloc_pd().expect("PD");
    let foreign = other_pd
        .register(vec![0u8; LEN], Access::LOCAL_WRITE)
        .expect("register");
    let e = sync
        .submit_region(3, &put, 0, Direction::Put, &foreign, 0, LEN)
        .expect_err("a region of another PD");
    assert!(e.to_string().contains("protection domain"), "{e}");
    assert_eq!(sync.in_flight(), 0, "a refused submission holds nothing");
    // Held until its Done: deregistration is refused until the executor reported it.
    sync.submit_region(4, &put, 0, Direction::Put, &object, 0, LEN)
        .expect("submit");
    let object = match object.deregister() {
        Err(r) => r.into_inner(),
        Ok(_) => panic!("a region in use by a transfer was deregistered"),
    };
    let mut out = [mlx5dv::s3::Done::default()];
    let deadline = Instant::now() + Duration::from_secs(10);
    while sync.poll(&mut out).expect("poll") == 0 {
        assert!(Instant::now() < deadline, "the PUT never finished");
    }
    assert!(out[0].is_ok(), "{:?}", out[0]);
    assert!(bytes(&object) == s3_pattern(LEN, 7));
    object.deregister().expect("given back after its Done");

    // The async layer gives the region back with the error.
    let (exec, _driver) = AsyncExecutor::new(sync, AsyncConfig::default()).expect("async executor");
    let region = n.object(LEN, 0);
    let back = exec
        .submit_region(&put, 0, Direction::Put, region, 0, LEN + 1)
        .expect_err("a range past the region's end");
    assert_eq!(back.into_inner().len(), LEN, "the region comes back");
}

/// A future dropped before it resolved does not cancel its transfer; its slot is freed once
/// the transfer is reported (dropped while running) or at once (dropped after its Done came
/// but before it was polled), and then serves the next submission, whose future resolves to
/// its own Done. A slot that stayed taken would leave `in_flight` above 0 here for ever.
#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn a_future_dropped_before_its_done_frees_its_slot_for_the_next_submission() {
    let n = node();
    let client = n.client();
    const LEN: usize = 4096;
    let mut buf = n.exposed(&client, LEN, 0);
    let (_, get) = buf.mint(0, LEN, Direction::Get).expect("mint");
    let cfg = AsyncConfig {
        max_waiting: 0,
        ..AsyncConfig::default()
    };
    let (exec, driver) = AsyncExecutor::new(n.executor(|_| {}), cfg).expect("async executor");
    // Dropped while its transfer runs: the slot is freed when the driver hands out its Done.
    let running = exec
        .submit_region(&get, 0, Direction::Get, n.object(LEN, 1), 0, LEN)
        .expect("submit");
    drop(running);
    assert_eq!(exec.in_flight(), 1, "dropping the future does not cancel the transfer");
    drive_until(&driver, || exec.in_flight() == 0);
    // Dropped after its Done came, before it was polled again: the slot is freed by the drop.
    let (woken, waker) = counting();
    let mut finished = exec
        .submit_region(&get, 0, Direction::Get, n.object(LEN, 2), 0, LEN)
        .expect("submit");
    assert!(poll_once(&mut finished, &waker).is_pending());
    drive_until(&driver, || woken.0.load(Ordering::SeqCst) > 0);
    assert_eq!(exec.in_flight(), 1, "its Done waits for the future");
    drop(finished);
    assert_eq!(exec.in_flight(), 0, "the drop frees a slot whose Done came");
    // The slots serve again, each future resolving to its own transfer's Done.
    for seed in 3..6 {
        let (woken, waker) = counting();
        let mut next = exec
            .submit_region(&get, 0, Direction::Get, n.object(LEN, seed), 0, LEN)
            .expect("submit");
        let seen = woken.0.load(Ordering::SeqCst);
        assert!(poll_once(&mut next, &waker).is_pending());
        drive_until(&driver, || woken.0.load(Ordering::SeqCst) > seen);
        let Poll::Ready((done, object)) = poll_once(&mut next, &waker) else {
            panic!("woken but not resolved");
        };
        assert!(done.is_ok(), "{done:?}");
        assert!(
            bytes(buf.mr()) == s3_pattern(LEN, u64::from(seed)),
            "the bytes of transfer {seed}"
        );
        drop(object);
        assert_eq!(exec.in_flight(), 0);
    }
}

/// An executor whose CQ has no completion channel cannot wake tasks: refused, with it back.
#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn an_executor_without_a_completion_channel_is_refused_and_given_back() {
    let n = node();
    let cfg = ExecutorConfig {
        key: KEY,
        ..ExecutorConfig::default()
    };
    let cq = n.ctx.create_cq(cfg.cq_size()).expect("CQ");
    let exec = Executor::new(&n.mlx5, &n.pd, cq, cfg).expect("executor");
    let Err(r) = AsyncExecutor::new(exec, AsyncConfig::default()) else {
        panic!("an executor without a channel was taken");
    };
    assert_eq!(r.error().errno(), Some(libc::EINVAL));
    assert!(r.to_string().contains("create_cq_with_channel"), "{r}");
    assert_eq!(r.into_inner().in_flight(), 0);
}

/// 64 tokio tasks on a multi-thread runtime, each 40 PUTs and GETs of its own sizes (1 B to
/// 256 KiB) between its buffer and objects' own regions, every byte checked; the driver task
/// ends once the handles are gone.
#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 -- <test binary> --include-ignored --test-threads=1"]
fn sixty_four_tokio_tasks_put_and_get_through_one_executor_every_byte_checked() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_io()
        .build()
        .expect("runtime");
    let n = Arc::new(node());
    let exec = rt.block_on(async {
        mlx5dv::s3::tokio::spawn(n.executor(|c| c.max_transfers = 32), AsyncConfig::default()).expect("spawn")
    });
    let client = Arc::new(n.client());
    let tasks: Vec<_> = (0..64u64)
        .map(|task| {
            let (exec, n, client) = (exec.clone(), Arc::clone(&n), Arc::clone(&client));
            rt.spawn(async move {
                const MAX: usize = 256 << 10;
                let mut buf = n.exposed(&client, MAX, 0);
                for i in 0..40u64 {
                    let len = ((1 + (task * 7919 + i * 104_729) % MAX as u64) >> (i % 9)).max(1) as usize;
                    let seed = task * 1000 + i;
                    buf.write(0, &s3_pattern(len, seed)).expect("write");
                    let (put_id, put) = buf.mint(0, len, Direction::Put).expect("mint");
                    let object = n.object(len, 0);
                    let (done, object) = exec
                        .submit_region(&put, 0, Direction::Put, object, 0, len)
                        .expect("submit PUT")
                        .await;
                    assert!(done.is_ok(), "{done:?}");
                    assert!(bytes(&object) == s3_pattern(len, seed), "task {task} PUT {i}");
                    buf.revoke(put_id).expect("revoke");
                    buf.write(0, &vec![0u8; len]).expect("clear");
                    let (get_id, get) = buf.mint(0, len, Direction::Get).expect("mint");
                    let (done, _object) = exec
                        .submit_region(&get, 0, Direction::Get, Arc::new(object), 0, len)
                        .expect("submit GET")
                        .await;
                    assert!(done.is_ok(), "{done:?}");
                    let mut got = vec![0u8; len];
                    buf.mr().read(0, &mut got).expect("read");
                    assert!(got == s3_pattern(len, seed), "task {task} GET {i}");
                    buf.revoke(get_id).expect("revoke");
                }
            })
        })
        .collect();
    rt.block_on(async {
        for t in tasks {
            t.await.expect("task");
        }
    });
    let st = exec.stats();
    assert_eq!(exec.in_flight(), 0);
    assert!(st.events > 0, "the driver never slept on the channel: {st:?}");
    println!("{st:?}");
    // The last handle gone, the driver task ends (nothing else is alive on the runtime).
    drop(exec);
    let deadline = Instant::now() + Duration::from_secs(5);
    while rt.metrics().num_alive_tasks() > 0 {
        assert!(Instant::now() < deadline, "the driver task outlived every handle");
        std::thread::sleep(Duration::from_millis(10));
    }
}
