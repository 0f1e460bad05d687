//! The same RDMA data path on the sync `Executor` (`--data-path sync`), as an axum server
//! without `AsyncExecutor` builds it: the executor on a thread of its own; the handlers queue
//! jobs for it (the token, the direction and the object's own region: zero copy, as in
//! src/rdma.rs) and await each job's answer on a one-shot channel. It is the baseline the
//! async path is measured against (scripts/s3-async-server-count, docs/performance.md).
//!
//! The thread never spins. Each round it takes every queued job and starts it, then polls the
//! executor until it reports nothing more, answering each finished transfer and starting the
//! jobs the executor refused with EAGAIN (they wait, in order, until transfers finish). A round
//! that found nothing to do sleeps in poll(2) on the CQ's completion channel and on an eventfd
//! the handlers write. Why no wake-up is lost:
//! - Completions. Before it sleeps the thread arms the CQ (`req_notify`) and polls once more:
//!   a completion that came before the arm is found by that poll (and the thread does not
//!   sleep); one that comes after it raises an event, which leaves the channel readable until
//!   the event is read. Each event consumed the arm that raised it, and the CQ is armed again
//!   before every sleep. The executor hands out every `Done` it took off the CQ before the arm
//!   (the thread polls until a poll reports fewer than its buffer holds): no event would
//!   announce those.
//! - Jobs. The queue, a `sleeping` flag and `closed` share one mutex. The thread's last look
//!   before it sleeps is under that lock: finding jobs (or `closed` newly set), it does not
//!   sleep; finding none, it sets `sleeping`. A handler pushes under the lock and, finding
//!   `sleeping` set, clears it and writes the eventfd (readable until read). So a job pushed
//!   after the thread's last look finds the flag set and wakes the thread, one pushed before
//!   it is seen by it, and a handler makes the system call at most once per sleep (never while
//!   the thread is busy). A stale write (the thread woke for a completion, the job was taken
//!   with the others) costs one round that finds nothing.
//! - The end. [`SyncPath::finish`] sets `closed` the same way (under the lock, writing the
//!   eventfd if the thread sleeps); the thread ends once it saw `closed` and every job it took
//!   is answered, and a job queued after `closed` is declined at once.
//! - RoCE. A new path's address handle is made on a thread of the executor's, which no
//!   completion announces: `Executor::wake_on_resolved` is given a waker that writes the
//!   eventfd (after the answer is in), so the next round posts what waited for it.

use crate::rdma::Object;
use crate::Failure;
use mlx5dv::s3::checksum::Digest;
use mlx5dv::s3::protocol::Outcome;
use mlx5dv::s3::{Direction, Done, Executor, ExecutorStats, RdmaToken, Tenant};
use mlx5dv::{Access, Pd, WcStatus};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Wake, Waker};
use tokio::sync::oneshot;

/// Jobs kept waiting while the executor refuses more (EAGAIN): as many as the async path's
/// queue (`AsyncConfig::default().max_waiting`). Past it a job is refused (503 Slow Down).
const MAX_WAITING: usize = 1024;

/// Failed rounds in a row after which the executor is stopped, its transfers ended (the tokio
/// driver's rule, `MAX_FAILED_STEPS`): fewer are taken as transient and run again.
const MAX_FAILED: u32 = mlx5dv::s3::tokio::MAX_FAILED_STEPS;

struct Job {
    tenant: Tenant,
    token: RdmaToken,
    direction: Direction,
    region: Object,
    at: usize,
    len: usize,
    answer: oneshot::Sender<Outcome>,
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    sleeping: bool,
    closed: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    /// The eventfd the thread sleeps on beside the completion channel.
    wake: File,
    /// The thread, until [`SyncPath::finish`] joins it.
    thread: Mutex<Option<std::thread::JoinHandle<Report>>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Changes the queue under its lock and wakes the thread if it sleeps (the module's
    /// sequence).
    fn tell<T>(&self, change: impl FnOnce(&mut Queue) -> T) -> T {
        let mut q = self.lock();
        let r = change(&mut q);
        let sleeping = std::mem::take(&mut q.sleeping);
        drop(q);
        if sleeping {
            self.ring();
        }
        r
    }

    /// Writes the eventfd: the thread's poll(2) returns (or its next one does at once).
    fn ring(&self) {
        // An eventfd's write fails only when its counter would pass 2^64 - 2: not with one
        // write per sleep and one per address handle made.
        let _ = (&self.wake).write(&1u64.to_ne_bytes());
    }
}

/// A new path's address handle made (RoCE: `Executor::wake_on_resolved`): the thread's sleep
/// ends, whether or not it sleeps now (a stale write costs one round that finds nothing).
impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.ring();
    }
}

/// The handlers' side (`Clone`: one per request), and the thread's end
/// ([`SyncPath::finish`]).
#[derive(Clone)]
pub struct SyncPath {
    shared: Arc<Shared>,
}

/// What the thread did, for the server's last line.
#[derive(Default)]
pub struct Report {
    pub stats: ExecutorStats,
    pub in_flight: usize,
    pub sleeps: u64,
    pub events: u64,
    pub arms: u64,
    pub waited: u64,
}

/// Starts the thread that owns `exec` (its CQ from `create_cq_with_channel`: rdma::core).
pub fn spawn(exec: Executor) -> Result<SyncPath, Failure> {
    let cq = exec.pool().cq();
    let channel = cq
        .channel()
        .ok_or("the executor's CQ needs a completion channel")?
        .as_raw_fd();
    // SAFETY: eventfd(2) takes no pointer.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("eventfd: {}", std::io::Error::last_os_error()).into());
    }
    // SAFETY: `fd` is a descriptor eventfd just opened, which nothing else owns.
    let wake = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let shared = Arc::new(Shared {
        queue: Mutex::default(),
        wake,
        thread: Mutex::default(),
    });
    // RoCE: a new path's address handle, made on a thread of the executor's, wakes the sleep.
    exec.wake_on_resolved(&Waker::from(Arc::clone(&shared)));
    let max = exec.max_transfers();
    let mut dp = DataPath {
        exec,
        shared: Arc::clone(&shared),
        channel,
        answers: (0..max).map(|_| None).collect(),
        free: (0..max as u64).rev().collect(),
        jobs: Vec::with_capacity(max),
        waiting: VecDeque::with_capacity(MAX_WAITING),
        out: vec![Done::default(); 64],
        stopped: false,
        report: Report::default(),
    };
    let thread = std::thread::Builder::new()
        .name("rdma-data-path".into())
        .spawn(move || dp.run())?;
    *shared.thread.lock().unwrap_or_else(|p| p.into_inner()) = Some(thread);
    Ok(SyncPath { shared })
}

impl SyncPath {
    /// Queues the transfer and awaits its outcome.
    async fn transfer(
        &self,
        tenant: Tenant,
        token: &RdmaToken,
        direction: Direction,
        region: Object,
        at: usize,
        len: usize,
    ) -> Outcome {
        let (answer, outcome) = oneshot::channel();
        let job = Job {
            tenant,
            token: *token,
            direction,
            region,
            at,
            len,
            answer,
        };
        let queued = self.shared.tell(|q| {
            if q.closed {
                return false;
            }
            q.jobs.push(job);
            true
        });
        if !queued {
            return Outcome::Declined; // the server is stopping: send it in the body
        }
        // The thread answers every job it took; it ends only once it took them all.
        outcome.await.unwrap_or(Outcome::Failed {
            status: WcStatus::GeneralErr,
        })
    }
}

/// PUT for `tenant` of at most `max` bytes into a new object's region, checked against
/// `expected` where the bytes landed: as `AsyncExecutor::put_object`, the transfer run by the
/// thread. The outcome, the object when it is `Moved`, the server's checksum of the bytes.
pub async fn put(
    path: &SyncPath,
    tenant: Tenant,
    pd: &Pd,
    token: &RdmaToken,
    expected: Option<Digest>,
    max: usize,
) -> (Outcome, Option<Object>, Option<Digest>) {
    let len = usize::try_from(token.len).unwrap_or(usize::MAX);
    let region = (len > 0 && len <= max)
        .then(|| pd.register(vec![0u8; len], Access::LOCAL_WRITE).ok())
        .flatten();
    let Some(region) = region else {
        return (Outcome::Declined, None, None);
    };
    let object = Arc::new(region);
    let outcome = path
        .transfer(tenant, token, Direction::Put, Arc::clone(&object), 0, len)
        .await;
    // Answered: nothing writes the region any more.
    let sum = expected
        .filter(|_| matches!(outcome, Outcome::Moved { .. }))
        .and_then(|d| Digest::of_region(d.algorithm, &object, 0, len).ok());
    let outcome = outcome.verified(expected, sum);
    (outcome, matches!(outcome, Outcome::Moved { .. }).then_some(object), sum)
}

/// GET for `tenant`: as `AsyncExecutor::get_object`, the transfer run by the thread.
pub async fn get(
    path: &SyncPath,
    tenant: Tenant,
    token: &RdmaToken,
    object: &Object,
    at: usize,
    len: usize,
) -> Outcome {
    path.transfer(tenant, token, Direction::Get, Arc::clone(object), at, len)
        .await
}

impl SyncPath {
    /// Ends the thread once the transfers it took are answered (call it once the handlers
    /// are done: a job queued later is declined); what it did.
    pub fn finish(&self) -> Result<Report, Failure> {
        self.shared.tell(|q| q.closed = true);
        let thread = self.shared.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        let thread = thread.ok_or("the RDMA data path's thread was finished already")?;
        thread.join().map_err(|_| "the RDMA data path's thread panicked".into())
    }
}

/// The thread's state.
struct DataPath {
    exec: Executor,
    shared: Arc<Shared>,
    /// The CQ's completion channel's descriptor (the executor owns it).
    channel: i32,
    /// Each running transfer's answer, by its id; the ids free.
    answers: Vec<Option<oneshot::Sender<Outcome>>>,
    free: Vec<u64>,
    /// The queue taken in a round (its buffer goes back to the handlers' side).
    jobs: Vec<Job>,
    /// Jobs the executor refused with EAGAIN, in order.
    waiting: VecDeque<Job>,
    out: Vec<Done>,
    /// The executor was stopped after `MAX_FAILED` failed rounds.
    stopped: bool,
    report: Report,
}

impl DataPath {
    fn run(&mut self) -> Report {
        let mut failed = 0;
        loop {
            match self.round() {
                Ok(true) => break,
                Ok(false) => failed = 0,
                Err(e) => {
                    failed += 1;
                    if failed >= MAX_FAILED {
                        // Its transfers end (those with requests posted once their flush
                        // completions are in; called again, at once), new ones are refused.
                        eprintln!("s3-async: the RDMA data path stops the executor: {e}");
                        let _ = self.exec.stop(&e);
                        (self.stopped, failed) = (true, 0);
                    }
                }
            }
        }
        // Closed for good (a stopped executor's thread ends too, rather than spin on a
        // channel in error): later jobs are declined by `transfer`, these here.
        let left = {
            let mut q = self.shared.lock();
            q.closed = true;
            std::mem::take(&mut q.jobs)
        };
        for job in left {
            let _ = job.answer.send(Outcome::Declined);
        }
        let (stats, in_flight) = (self.exec.stats(), self.exec.in_flight());
        Report {
            stats,
            in_flight,
            ..std::mem::take(&mut self.report)
        }
    }

    /// One round (the module's sequence); whether the thread is done: closed (or the
    /// executor stopped), every job it took answered.
    fn round(&mut self) -> mlx5dv::Result<bool> {
        let closed = {
            let mut q = self.shared.lock();
            std::mem::swap(&mut q.jobs, &mut self.jobs);
            q.closed
        };
        let mut jobs = std::mem::take(&mut self.jobs);
        for job in jobs.drain(..) {
            if self.waiting.is_empty() {
                if let Err(job) = self.start(job, false) {
                    self.wait(job);
                }
            } else {
                self.wait(job); // behind those waiting already
            }
        }
        self.jobs = jobs;
        if self.reap()? {
            return Ok(false);
        }
        if (closed || self.stopped) && self.exec.in_flight() == 0 && self.waiting.is_empty() {
            return Ok(true);
        }
        self.exec.pool().cq().req_notify(false)?;
        self.report.arms += 1;
        if self.reap()? {
            return Ok(false);
        }
        {
            let mut q = self.shared.lock();
            if !q.jobs.is_empty() || q.closed != closed {
                return Ok(false);
            }
            q.sleeping = true;
        }
        self.sleep()?;
        Ok(false)
    }

    /// Submits `job`; gives it back when it must wait (EAGAIN, or no id free, which is the
    /// executor's EAGAIN too: it has as many). A refusal is answered: at once as the async
    /// path refuses, or (a job that waited) as its `Done` with the error would be.
    fn start(&mut self, job: Job, waited: bool) -> Result<(), Job> {
        let Some(&id) = self.free.last() else {
            return Err(job);
        };
        let region: &mlx5dv::Mr<Vec<u8>> = &job.region;
        match self
            .exec
            .tenant(job.tenant)
            .submit_region(id, &job.token, 0, job.direction, region, job.at, job.len)
        {
            // The executor keeps the region registered (and alive) until the Done.
            Ok(()) => {
                self.free.pop();
                self.answers[id as usize] = Some(job.answer);
            }
            Err(e) if e.is_would_block() => return Err(job),
            Err(e) => {
                let outcome = match waited {
                    false => Outcome::of_refusal(&e),
                    true => Outcome::Failed {
                        status: WcStatus::GeneralErr,
                    },
                };
                let _ = job.answer.send(outcome);
            }
        }
        Ok(())
    }

    /// Queues `job` behind those waiting, or refuses it past `MAX_WAITING`.
    fn wait(&mut self, job: Job) {
        if self.waiting.len() >= MAX_WAITING {
            let _ = job.answer.send(Outcome::Busy);
            return;
        }
        self.waiting.push_back(job);
        self.report.waited += 1;
    }

    /// Polls the executor until it reports nothing more, answering each finished transfer
    /// and starting waiting jobs as room frees; whether anything finished or started.
    fn reap(&mut self) -> mlx5dv::Result<bool> {
        let mut progress = false;
        loop {
            let n = self.exec.poll(&mut self.out)?;
            for d in &self.out[..n] {
                if let Some(answer) = self.answers[d.id as usize].take() {
                    // A handler gone (its client hung up) leaves the answer unread.
                    let _ = answer.send(Outcome::of_done(d));
                }
                self.free.push(d.id);
            }
            progress |= n > 0;
            while let Some(job) = self.waiting.pop_front() {
                if let Err(job) = self.start(job, true) {
                    self.waiting.push_front(job);
                    break;
                }
                progress = true;
            }
            if n < self.out.len() {
                return Ok(progress);
            }
        }
    }

    /// Sleeps until the CQ raised an event, or a handler or a new path's address handle
    /// (RoCE) wrote the eventfd; reads what woke it.
    fn sleep(&mut self) -> mlx5dv::Result<()> {
        let mut fds = [self.channel, self.shared.wake.as_raw_fd()].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        // SAFETY: `fds` is an array of 2 pollfds, live for the call. It fails only with EINTR
        // or ENOMEM here: either way the next round looks again.
        unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        self.report.sleeps += 1;
        if fds[0].revents != 0 {
            while self.exec.pool().cq().try_event()? {
                self.report.events += 1;
            }
        }
        if fds[1].revents != 0 {
            // Resets the counter; EAGAIN (already read) is as good.
            let _ = (&self.shared.wake).read(&mut [0u8; 8]);
        }
        Ok(())
    }
}
