//! Transfers as futures, on any runtime ([`AsyncExecutor`] says how).

use super::executor::{Done, Executor, Tenant};
use super::{Direction, RdmaToken};
use crate::cq::WcStatus;
use crate::error::{Error, Result};
use crate::mr::{BoundedBuffer, Held, Mr, Returned, Sge};
use mlx5dv_raw as raw;
use std::collections::VecDeque;
use std::future::Future;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

const OP: &str = "mlx5dv::s3::AsyncExecutor::submit";

/// How an [`AsyncExecutor`] is built.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AsyncConfig {
    /// Submissions kept waiting while the executor refuses more (EAGAIN), started in order as
    /// transfers finish. Past it a submission is refused with EAGAIN.
    pub max_waiting: usize,
    /// Transfers reported per poll of the executor.
    pub batch: usize,
}

impl Default for AsyncConfig {
    /// 1024 waiting submissions, 64 reports per poll.
    fn default() -> Self {
        AsyncConfig {
            max_waiting: 1024,
            batch: 64,
        }
    }
}

/// Counters of the async layer (the executor's own: [`AsyncExecutor::with_executor`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct AsyncStats {
    /// Submissions that waited in the queue (the executor answered EAGAIN).
    pub waited: u64,
    /// Submissions refused because the queue held `max_waiting`.
    pub refused: u64,
    /// Steps of the driver.
    pub steps: u64,
    /// Completion events read from the CQ's channel.
    pub events: u64,
    /// Times the CQ was armed.
    pub arms: u64,
}

/// What the runtime does after [`Driver::step`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Something happened: step again (yielding to other tasks first is fine).
    Again,
    /// The CQ is armed and nothing is pending: wait until the driver's descriptor is readable
    /// or the registered waker is woken, then step again.
    Wait,
    /// Every [`AsyncExecutor`] handle is dropped and every transfer reported, or the driver
    /// failed ([`Driver::fail`]) and every transfer is resolved: the driver is done.
    Finished,
}

/// Memory a transfer names for its own length ([`AsyncExecutor::submit_region`]): a region
/// owned, or shared (several GETs of one object at once), over memory of its own (its buffer
/// a [`BoundedBuffer`](crate::mr::BoundedBuffer)). So this compiles:
///
/// ```
/// # use mlx5dv::s3::{AsyncExecutor, Direction, RdmaToken};
/// # fn f(pd: &mlx5dv::Pd, exec: &AsyncExecutor, token: &RdmaToken) -> mlx5dv::Result<()> {
/// let mr = pd.register(vec![0u8; 4096], mlx5dv::Access::LOCAL_WRITE)?;
/// let _transfer = exec.submit_region(token, 0, Direction::Put, mr, 0, 4096)?;
/// # Ok(())
/// # }
/// ```
///
/// and an implicit on-demand-paging region (its key reaches every address of the process)
/// is not one:
///
/// ```compile_fail,E0277
/// # use mlx5dv::s3::{AsyncExecutor, Direction, RdmaToken};
/// # fn f(pd: &mlx5dv::Pd, exec: &AsyncExecutor, token: &RdmaToken) -> mlx5dv::Result<()> {
/// let odp = pd.register_implicit_odp(mlx5dv::Access::LOCAL_WRITE)?;
/// let victim = vec![0u8; 4096];
/// let _transfer = exec.submit_region(token, 0, Direction::Put, odp, victim.as_ptr() as usize, 4096)?;
/// # Ok(())
/// # }
/// ```
pub trait LentRegion: Send + 'static {
    /// The region's buffer type.
    type Buffer: BoundedBuffer + 'static;
    /// The region.
    fn region(&self) -> &Mr<Self::Buffer>;
}

impl<B: BoundedBuffer + 'static> LentRegion for Mr<B> {
    type Buffer = B;
    fn region(&self) -> &Mr<B> {
        self
    }
}

impl<B: BoundedBuffer + 'static> LentRegion for Arc<Mr<B>> {
    type Buffer = B;
    fn region(&self) -> &Mr<B> {
        self
    }
}

#[derive(Debug)]
enum Phase {
    Free,
    Running,
    Finished(Done),
    /// Its future was dropped: the slot is freed when the transfer is reported.
    Abandoned,
}

struct Slot {
    generation: u32,
    phase: Phase,
    waker: Option<Waker>,
}

/// A submission the executor refused with EAGAIN, waiting its turn.
struct Waiting {
    tenant: Tenant,
    id: u64,
    token: RdmaToken,
    offset: u64,
    direction: Direction,
    local: raw::ibv_sge,
    lent: Option<Arc<dyn Held>>,
}

struct State {
    exec: Executor,
    slots: Vec<Slot>,
    free: Vec<u32>,
    waiting: VecDeque<Waiting>,
    max_waiting: usize,
    out: Vec<Done>,
    /// The driver's waker (closing, and address handles made on RoCE, wake it).
    driver: Option<Waker>,
    /// The driver failed ([`Driver::fail`]): every transfer ends with this error (those with
    /// requests posted once their flush completions are in), and submissions are refused.
    stopped: Option<Error>,
    stats: AsyncStats,
}

struct Shared {
    state: Mutex<State>,
    /// Every [`AsyncExecutor`] handle is gone.
    closed: AtomicBool,
}

impl Shared {
    #[inline]
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves counters at worst: go on with them.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A task took its transfer's slot back: once the handles are gone and no slot is in use,
    /// the driver may finish (no completion event would tell it).
    #[inline]
    fn slot_released(&self, st: &mut State) {
        if self.closed.load(Ordering::Acquire) && st.in_use() == 0 {
            if let Some(w) = st.driver.take() {
                w.wake();
            }
        }
    }
}

/// The handles' common part: its drop tells the driver no submission will come.
struct Handles {
    shared: Arc<Shared>,
}

impl Drop for Handles {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Release);
        if let Some(w) = self.shared.lock().driver.take() {
            w.wake();
        }
    }
}

/// An [`Executor`] shared by tasks: each submission is a future resolving to its [`Done`].
/// Cloning gives another handle on the same executor.
///
/// Transfers as futures, on any runtime: the sync [`Executor`] stays the core; this layer only
/// hands completions to the tasks waiting for them and wakes them (quinn's shape: a state
/// machine without I/O, and a thin driver per runtime).
///
/// - [`AsyncExecutor`]: a shared handle (`Clone`, `&self`), from which any number of tasks
///   submit at once; each submission is a future resolving to its [`Done`]
///   ([`Transfer`]), or to its `Done` and the region it named ([`RegionTransfer`]).
/// - [`Driver`]: what the runtime runs. [`Driver::step`] takes in completions and wakes
///   their tasks; when it answers [`Step::Wait`] the executor's CQ is armed and the runtime
///   waits until the CQ's completion channel (the driver's descriptor, [`AsFd`]) is
///   readable, or the waker given to [`Driver::register`] is woken, then steps again. No
///   thread blocks and nothing spins. With the `tokio` feature, `mlx5dv::s3::tokio::spawn`
///   does all of this on a tokio runtime.
///
/// The executor refuses a submission with EAGAIN when `max_transfers` run or its endpoint
/// table is full of busy clients; here such submissions wait, in order, in a queue of at most
/// [`AsyncConfig::max_waiting`], and start as transfers finish. Past that bound a submission
/// is refused with EAGAIN (answer HTTP 503 Slow Down).
///
/// # The wake-up sequence
/// Each step reads the channel's events (each consumed the arm that raised it), polls the
/// executor until it reports nothing more (Dones it holds are handed out, waiting
/// submissions start), and only when nothing happened arms the CQ and polls once more: a
/// completion that came between that poll and the arm is found by the poll after it, and
/// one that comes later raises an event. Completions the executor has taken from the CQ but
/// not yet reported are drained before arming, since no event would announce them.
///
/// ```no_run
/// # async fn f(exec: &mlx5dv::s3::AsyncExecutor, token: &mlx5dv::s3::RdmaToken,
/// #            object: mlx5dv::Mr<Vec<u8>>) -> mlx5dv::Result<()> {
/// use mlx5dv::s3::Direction;
/// // A GET: the object's own registered bytes written into the client's buffer.
/// let len = object.len();
/// let (done, object) = exec.submit_region(token, 0, Direction::Get, object, 0, len)?.await;
/// assert!(done.is_ok());
/// # drop(object); Ok(()) }
/// ```
#[derive(Clone)]
pub struct AsyncExecutor {
    handles: Arc<Handles>,
}

/// What the runtime runs for an [`AsyncExecutor`] (see [`AsyncExecutor`]).
pub struct Driver {
    shared: Arc<Shared>,
    /// The CQ's completion channel's descriptor (the executor in `shared` owns it).
    fd: RawFd,
}

impl AsyncExecutor {
    /// Shares `exec` between tasks; the [`Driver`] is what a runtime runs to move its
    /// completions (with tokio: `mlx5dv::s3::tokio::spawn`, feature `tokio`).
    ///
    /// # Errors
    /// With the executor back: EINVAL when its CQ has no completion channel (create it with
    /// [`Context::create_cq_with_channel`](crate::Context::create_cq_with_channel)) or
    /// `cfg.batch` is 0; EOPNOTSUPP for a direct CQ (it cannot be armed: poll it instead).
    // The executor comes back whole on the error path, which runs once at setup.
    #[allow(clippy::result_large_err)]
    pub fn new(exec: Executor, cfg: AsyncConfig) -> std::result::Result<(AsyncExecutor, Driver), Returned<Executor>> {
        const NEW: &str = "mlx5dv::s3::AsyncExecutor::new";
        let cq = exec.pool().cq();
        let fd = match cq.channel() {
            Some(channel) if !cq.is_direct() => channel.as_raw_fd(),
            Some(_) => {
                let e = Error::from_errno(
                    NEW,
                    libc::EOPNOTSUPP,
                    "the executor's CQ is a direct CQ, which cannot be armed: use a CQ from create_cq_with_channel on the WrApi backend",
                );
                return Err(Returned::new(e, exec));
            }
            None => {
                let e = Error::invalid(
                    NEW,
                    "the executor's CQ has no completion channel, so nothing can wake its tasks: create it with Context::create_cq_with_channel",
                );
                return Err(Returned::new(e, exec));
            }
        };
        if cfg.batch == 0 {
            return Err(Returned::new(Error::invalid(NEW, "batch must be at least 1"), exec));
        }
        let n = exec.max_transfers().saturating_add(cfg.max_waiting);
        let Ok(n32) = u32::try_from(n) else {
            return Err(Returned::new(
                Error::invalid(NEW, "max_transfers + max_waiting must fit in 32 bits"),
                exec,
            ));
        };
        let state = State {
            exec,
            slots: (0..n)
                .map(|_| Slot {
                    generation: 0,
                    phase: Phase::Free,
                    waker: None,
                })
                .collect(),
            free: (0..n32).rev().collect(),
            waiting: VecDeque::with_capacity(cfg.max_waiting),
            max_waiting: cfg.max_waiting,
            out: vec![Done::default(); cfg.batch],
            driver: None,
            stopped: None,
            stats: AsyncStats::default(),
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            closed: AtomicBool::new(false),
        });
        let handles = Arc::new(Handles {
            shared: Arc::clone(&shared),
        });
        Ok((AsyncExecutor { handles }, Driver { shared, fd }))
    }

    /// Transfer between the token's buffer at `offset` and `local`, in a region the executor
    /// holds ([`Executor::hold`]); resolves to its [`Done`]. The transfer is submitted now
    /// (or queued, when the executor is full); dropping the future does not cancel it.
    ///
    /// # Errors
    /// [`Executor::submit`]'s, except EAGAIN while the queue has room: the submission waits
    /// instead (an error when it finally starts, EBUSY among them, comes as its `Done`, with
    /// status `GeneralErr` and the error). EAGAIN when `max_waiting` submissions wait; the
    /// driver's error once it failed.
    #[inline]
    pub fn submit(&self, token: &RdmaToken, offset: u64, direction: Direction, local: Sge<'_>) -> Result<Transfer> {
        self.submit_for(Tenant::DEFAULT, token, offset, direction, local)
    }

    /// [`AsyncExecutor::submit`] for `tenant` (see [`Executor::tenant`]: its transfers take
    /// their turn on the DCIs beside the other tenants', and it is bounded by
    /// `ExecutorConfig::tenant_transfers` and `tenant_unproven`: past them the submit is
    /// refused with EBUSY at once, not queued).
    #[inline]
    pub fn submit_for(
        &self,
        tenant: Tenant,
        token: &RdmaToken,
        offset: u64,
        direction: Direction,
        local: Sge<'_>,
    ) -> Result<Transfer> {
        let shared = &self.handles.shared;
        let mut st = shared.lock();
        let local = st.exec.held_local(local, direction)?;
        let id = st.submit(tenant, token, offset, direction, local, None)?;
        Ok(Transfer {
            ticket: Ticket {
                shared: Arc::clone(shared),
                id,
                resolved: false,
            },
        })
    }

    /// Transfer between the token's buffer at `offset` and `len` bytes at `at` of `region`:
    /// memory registered for this object (zero copy), held by the transfer until its
    /// [`Done`], then given back with it. Dropping the future drops the region once the
    /// transfer is reported (the executor keeps its registration until then).
    ///
    /// # Errors
    /// With the region back: [`Executor::submit_region`]'s (EINVAL for a range outside the
    /// region, a PUT into a region without local write, a region of another PD), with the
    /// queueing of [`AsyncExecutor::submit`].
    #[inline]
    pub fn submit_region<R: LentRegion>(
        &self,
        token: &RdmaToken,
        offset: u64,
        direction: Direction,
        region: R,
        at: usize,
        len: usize,
    ) -> std::result::Result<RegionTransfer<R>, Returned<R>> {
        self.submit_region_for(Tenant::DEFAULT, token, offset, direction, region, at, len)
    }

    /// [`AsyncExecutor::submit_region`] for `tenant` (as [`AsyncExecutor::submit_for`]).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn submit_region_for<R: LentRegion>(
        &self,
        tenant: Tenant,
        token: &RdmaToken,
        offset: u64,
        direction: Direction,
        region: R,
        at: usize,
        len: usize,
    ) -> std::result::Result<RegionTransfer<R>, Returned<R>> {
        let shared = &self.handles.shared;
        let mut st = shared.lock();
        let submitted = st
            .exec
            .lend(region.region(), direction, at, len)
            .and_then(|(local, lent)| st.submit(tenant, token, offset, direction, local, Some(lent)));
        match submitted {
            Ok(id) => Ok(RegionTransfer {
                ticket: Ticket {
                    shared: Arc::clone(shared),
                    id,
                    resolved: false,
                },
                region: Some(region),
            }),
            Err(e) => Err(Returned::new(e, region)),
        }
    }

    /// Runs `f` on the executor (its counters, clients, pool), under the lock the driver takes.
    pub fn with_executor<T>(&self, f: impl FnOnce(&mut Executor) -> T) -> T {
        f(&mut self.handles.shared.lock().exec)
    }

    /// The async layer's counters.
    pub fn stats(&self) -> AsyncStats {
        self.handles.shared.lock().stats
    }

    /// Transfers submitted or waiting, and not yet resolved.
    pub fn in_flight(&self) -> usize {
        let st = self.handles.shared.lock();
        st.slots.len() - st.free.len()
    }
}

impl State {
    /// Submits (or queues) a transfer; its id names its slot and the slot's generation.
    #[inline]
    fn submit(
        &mut self,
        tenant: Tenant,
        token: &RdmaToken,
        offset: u64,
        direction: Direction,
        local: raw::ibv_sge,
        mut lent: Option<Arc<dyn Held>>,
    ) -> Result<u64> {
        if let Some(e) = &self.stopped {
            return Err(Error::from_errno(
                OP,
                e.errno().unwrap_or(libc::EIO),
                format!("the executor's driver stopped after an error ({e}): make a new executor"),
            ));
        }
        let Some(&slot) = self.free.last() else {
            return Err(self.refuse());
        };
        let s = &mut self.slots[slot as usize];
        let id = (u64::from(s.generation) << 32) | u64::from(slot);
        let started = if self.waiting.is_empty() {
            self.exec.start(tenant, id, token, offset, direction, local, &mut lent)
        } else {
            // Others wait already: this one goes behind them.
            Err(Error::from_errno(OP, libc::EAGAIN, ""))
        };
        match started {
            Ok(()) => {}
            Err(e) if e.is_would_block() => {
                if self.waiting.len() >= self.max_waiting {
                    return Err(self.refuse());
                }
                self.waiting.push_back(Waiting {
                    tenant,
                    id,
                    token: *token,
                    offset,
                    direction,
                    local,
                    lent,
                });
                self.stats.waited += 1;
            }
            Err(e) => return Err(e),
        }
        self.free.pop();
        self.slots[slot as usize].phase = Phase::Running;
        Ok(id)
    }

    #[cold]
    fn refuse(&mut self) -> Error {
        self.stats.refused += 1;
        Error::from_errno(
            OP,
            libc::EAGAIN,
            format!(
                "max_transfers run and {} submissions wait (AsyncConfig::max_waiting): refuse the request (HTTP 503 Slow Down)",
                self.waiting.len()
            ),
        )
    }

    /// Hands a finished transfer to its task.
    #[inline]
    fn deliver(&mut self, d: Done) {
        let slot = (d.id & 0xffff_ffff) as usize;
        let Some(s) = self
            .slots
            .get_mut(slot)
            .filter(|s| u64::from(s.generation) == d.id >> 32)
        else {
            return;
        };
        match s.phase {
            Phase::Running => {
                s.phase = Phase::Finished(d);
                if let Some(w) = s.waker.take() {
                    w.wake();
                }
            }
            Phase::Abandoned => self.release(slot),
            Phase::Free | Phase::Finished(_) => {}
        }
    }

    /// Frees a slot whose transfer was reported and whose task is done with it (its waker
    /// was taken by [`State::deliver`] or cleared when the future was dropped).
    #[inline]
    fn release(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        debug_assert!(s.waker.is_none());
        s.phase = Phase::Free;
        s.generation = s.generation.wrapping_add(1);
        self.free.push(slot as u32);
    }

    /// Polls the executor until it reports nothing more, handing out what finished and
    /// starting waiting submissions; whether anything happened.
    fn reap(&mut self) -> Result<bool> {
        let mut progress = false;
        loop {
            let n = self.exec.poll(&mut self.out)?;
            for i in 0..n {
                let o = &mut self.out[i];
                // Only the error owns anything: the rest is copied, and the buffer's next
                // report overwrites it.
                let d = Done {
                    id: o.id,
                    bytes: o.bytes,
                    status: o.status,
                    error: o.error.take(),
                };
                self.deliver(d);
            }
            progress |= n > 0;
            while let Some(w) = self.waiting.front_mut() {
                match self
                    .exec
                    .start(w.tenant, w.id, &w.token, w.offset, w.direction, w.local, &mut w.lent)
                {
                    Err(e) if e.is_would_block() => break,
                    started => {
                        let w = self.waiting.pop_front().map(|w| w.id).unwrap_or_default();
                        if let Err(e) = started {
                            self.deliver(Done {
                                id: w,
                                bytes: 0,
                                status: WcStatus::GeneralErr,
                                error: Some(e),
                            });
                        }
                        progress = true;
                    }
                }
            }
            if n < self.out.len() {
                return Ok(progress);
            }
        }
    }

    fn in_use(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// After [`Driver::fail`]: whether a transfer is still to be reported by the executor
    /// (its requests' flush completions have not all come).
    #[cold]
    fn draining(&self) -> bool {
        self.slots
            .iter()
            .any(|s| matches!(s.phase, Phase::Running | Phase::Abandoned))
    }
}

impl Driver {
    /// Takes in completions, wakes their tasks and starts waiting submissions; arms the CQ
    /// when nothing was pending (see [`AsyncExecutor`] for the sequence).
    ///
    /// After [`Driver::fail`] the steps take in the flush completions of the transfers it
    /// stopped, and answer [`Step::Finished`] once every transfer is resolved.
    ///
    /// # Errors
    /// `ibv_get_cq_event`, [`Executor::poll`]'s and [`Cq::req_notify`](crate::Cq::req_notify)'s:
    /// nothing is lost, so the runtime may step again; [`Driver::fail`] ends every transfer
    /// instead.
    pub fn step(&self) -> Result<Step> {
        let mut st = self.shared.lock();
        st.stats.steps += 1;
        if st.stopped.is_some() && !st.draining() {
            return Ok(Step::Finished);
        }
        let cq = st.exec.pool().cq();
        let mut events = 0;
        while cq.try_event()? {
            events += 1;
        }
        st.stats.events += events;
        if st.reap()? {
            return Ok(Step::Again);
        }
        if self.shared.closed.load(Ordering::Acquire) && st.in_use() == 0 {
            return Ok(Step::Finished);
        }
        st.exec.pool().cq().req_notify(false)?;
        st.stats.arms += 1;
        if st.reap()? {
            return Ok(Step::Again);
        }
        Ok(Step::Wait)
    }

    /// Wakes `waker` when a step is due that no completion event announces: the last
    /// handle dropped, or (RoCE) a new path's address handle made.
    pub fn register(&self, waker: &Waker) {
        let mut st = self.shared.lock();
        st.exec.wake_on_resolved(waker);
        if !st.driver.as_ref().is_some_and(|w| w.will_wake(waker)) {
            st.driver = Some(waker.clone());
        }
        drop(st);
        if self.shared.closed.load(Ordering::Acquire) {
            waker.wake_by_ref();
        }
    }

    /// Ends every transfer not yet resolved with `error` (status `GeneralErr`) and refuses
    /// submissions from now on (with `error`'s errno): for a runtime whose steps keep failing
    /// (the tokio driver calls it after `MAX_FAILED_STEPS` failed steps in a row).
    ///
    /// Nothing posted before runs after, even on a device that is alive: the executor is
    /// stopped ([`Executor::stop`]), its DCIs moved to ERR, where the device sends none of
    /// their requests and places none of their responses any more, and completes each request
    /// flushed. Submissions waiting for a slot resolve at once, and so do transfers with
    /// nothing posted. A transfer with requests posted resolves once their flush completions
    /// are in, so keep stepping ([`Driver::step`] takes them in, and answers
    /// [`Step::Finished`] once every transfer is resolved): only then is its region quiet
    /// (the device writes a PUT's region no more, reads a GET's no more), and given back free
    /// (nothing holds its registration).
    ///
    /// Where a DCI could not be moved to ERR (`ibv_modify_qp` failed: ENOMEM when the kernel
    /// could not run the command; EIO once the device is gone, which then executes nothing
    /// anyway, but that cannot be told apart), the transfers with requests on it resolve at
    /// once, and their error says that the device may still execute those requests: the
    /// region given back may still be written (PUT) or read (GET) by the device, and its
    /// registration is held until the executor is dropped (its DCIs destroyed first:
    /// [`Mr::deregister`] answers EBUSY until then). Do not reuse such a region for another
    /// object. Called again while transfers wait for their flush completions (the steps keep
    /// failing: a device that answers no more writes none), it ends those at once the same way.
    pub fn fail(&self, error: Error) {
        let mut st = self.shared.lock();
        let waiting: Vec<u64> = st.waiting.drain(..).map(|w| w.id).collect();
        for id in waiting {
            st.deliver(Done {
                id,
                bytes: 0,
                status: WcStatus::GeneralErr,
                error: Some(error.clone()),
            });
        }
        // The transfers in the executor end there: reported as soon as nothing of them can
        // run any more (its error, when a DCI could not be stopped, is in their Dones).
        let _ = st.exec.stop(&error);
        if st.stopped.is_none() {
            st.stopped = Some(error);
        }
        // What the stop ended at once; an error here comes again from the next step.
        let _ = st.reap();
        if let Some(w) = st.driver.take() {
            w.wake();
        }
    }

    /// The async layer's counters.
    pub fn stats(&self) -> AsyncStats {
        self.shared.lock().stats
    }
}

impl AsFd for Driver {
    /// The executor's CQ's completion channel: readable once an armed CQ got a completion.
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the executor in `shared` owns the CQ and its channel; this driver keeps
        // `shared` alive and the executor is never taken out of it, so the descriptor stays
        // open (and the same) for as long as the driver lives.
        unsafe { BorrowedFd::borrow_raw(self.fd) }
    }
}

impl AsRawFd for Driver {
    /// As [`AsFd::as_fd`]: the same descriptor for the driver's whole life.
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver").field("fd", &self.fd).finish()
    }
}

impl std::fmt::Debug for AsyncExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncExecutor")
            .field("in_flight", &self.in_flight())
            .field("stats", &self.stats())
            .finish()
    }
}

/// A submitted transfer's place: resolves once, frees its slot when dropped.
struct Ticket {
    shared: Arc<Shared>,
    id: u64,
    resolved: bool,
}

impl Ticket {
    /// Until it resolves, a ticket's slot is its own (only `poll_done` and `drop` release it),
    /// so the slot's generation is the ticket's.
    #[inline]
    fn poll_done(&mut self, cx: &mut Context<'_>) -> Poll<Done> {
        if self.resolved {
            return Poll::Ready(self.polled_again());
        }
        let mut st = self.shared.lock();
        let slot = (self.id & 0xffff_ffff) as usize;
        let s = &mut st.slots[slot];
        debug_assert_eq!(u64::from(s.generation), self.id >> 32);
        if let Phase::Finished(d) = &mut s.phase {
            let d = std::mem::take(d);
            st.release(slot);
            self.shared.slot_released(&mut st);
            self.resolved = true;
            return Poll::Ready(d);
        }
        if !s.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            s.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    #[cold]
    fn polled_again(&self) -> Done {
        Done {
            id: self.id,
            bytes: 0,
            status: WcStatus::GeneralErr,
            error: Some(Error::invalid(OP, "the transfer's future was polled after it resolved")),
        }
    }
}

impl Drop for Ticket {
    #[inline]
    fn drop(&mut self) {
        if !self.resolved {
            self.abandon();
        }
    }
}

impl Ticket {
    /// Dropped before it resolved: the slot is freed now if its transfer was reported, or
    /// when it is.
    #[cold]
    #[inline(never)]
    fn abandon(&mut self) {
        let mut st = self.shared.lock();
        let slot = (self.id & 0xffff_ffff) as usize;
        let s = &mut st.slots[slot];
        debug_assert_eq!(u64::from(s.generation), self.id >> 32);
        match s.phase {
            Phase::Finished(_) => {
                st.release(slot);
                self.shared.slot_released(&mut st);
            }
            Phase::Running => {
                s.phase = Phase::Abandoned;
                s.waker = None;
            }
            _ => {}
        }
    }
}

/// A transfer from memory the executor holds: resolves to its [`Done`]
/// ([`AsyncExecutor::submit`]).
#[must_use = "the transfer runs anyway; await it to learn its outcome"]
pub struct Transfer {
    ticket: Ticket,
}

impl Future for Transfer {
    type Output = Done;
    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Done> {
        self.ticket.poll_done(cx)
    }
}

/// A transfer naming a region of its own: resolves to its [`Done`] and the region
/// ([`AsyncExecutor::submit_region`]).
#[must_use = "the transfer runs anyway; await it to get the region back"]
pub struct RegionTransfer<R> {
    ticket: Ticket,
    region: Option<R>,
}

/// # Panics
/// When polled again after it resolved (the region was given back then).
impl<R: Unpin> Future for RegionTransfer<R> {
    type Output = (Done, R);
    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<(Done, R)> {
        let done = std::task::ready!(self.ticket.poll_done(cx));
        match self.region.take() {
            Some(r) => Poll::Ready((done, r)),
            None => panic!("RegionTransfer polled after it resolved"),
        }
    }
}

impl std::fmt::Debug for Transfer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transfer").field("id", &self.ticket.id).finish()
    }
}

impl<R> std::fmt::Debug for RegionTransfer<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegionTransfer").field("id", &self.ticket.id).finish()
    }
}
