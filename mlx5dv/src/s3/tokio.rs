//! The async executor on tokio (feature `tokio`): [`spawn`] runs its [`Driver`] as a task that
//! waits on the CQ's completion channel through tokio's reactor.

use super::asynchronous::{AsyncConfig, AsyncExecutor, Driver, Step};
use super::executor::Executor;
use crate::error::{Error, Result};
use ::tokio::io::unix::AsyncFd;
use ::tokio::io::Interest;
use std::future::Future;
use std::task::{Context, Poll};

/// Steps in a row before the driver task yields to the runtime's other tasks.
const STEPS_PER_YIELD: u32 = 32;

/// Failed steps in a row after which the driver ends every transfer with the last error
/// ([`Driver::fail`]): fewer are taken as transient (a kernel command that could not allocate,
/// say) and stepped past. The driver then steps on to take in the flush completions of the
/// transfers whose requests were stopped (each resolves once they are in); as many failed
/// steps in a row again, and it ends those at once too (their regions may then still be
/// written: see [`Driver::fail`]).
pub const MAX_FAILED_STEPS: u32 = 8;

/// Shares `exec` between tasks ([`AsyncExecutor::new`]) and spawns its driver on the current
/// tokio runtime. The driver task sleeps in tokio's reactor until the executor's CQ raises a
/// completion event (no thread blocks, nothing spins), and ends once every handle is dropped
/// and every transfer is reported.
///
/// ```no_run
/// # async fn f(mlx5: &mlx5dv::Mlx5Context, pd: &mlx5dv::Pd) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use mlx5dv::s3::{AsyncConfig, Executor, ExecutorConfig};
/// let cfg = ExecutorConfig::default();
/// let cq = pd.context().create_cq_with_channel(cfg.cq_size())?;
/// let exec = mlx5dv::s3::tokio::spawn(Executor::new(mlx5, pd, cq, cfg)?, AsyncConfig::default())?;
/// // exec.submit_region(..)?.await in any number of tasks
/// # drop(exec); Ok(()) }
/// ```
///
/// # Errors
/// [`AsyncExecutor::new`]'s (with the executor back: [`AsyncExecutor::new`] then
/// [`spawn_driver`] keep it); the reactor's refusal to register the channel (its errno; the
/// executor is dropped).
///
/// # Panics
/// Outside a tokio runtime with I/O enabled (tokio's rule for `AsyncFd`).
pub fn spawn(exec: Executor, cfg: AsyncConfig) -> Result<AsyncExecutor> {
    let (handle, driver) = AsyncExecutor::new(exec, cfg)?;
    spawn_driver(driver)?;
    Ok(handle)
}

/// Spawns `driver` ([`AsyncExecutor::new`]'s) on the current tokio runtime (see [`spawn`]).
///
/// # Errors
/// The reactor's refusal to register the channel (its errno).
///
/// # Panics
/// Outside a tokio runtime with I/O enabled (tokio's rule for `AsyncFd`).
pub fn spawn_driver(driver: Driver) -> Result<()> {
    // SAFETY: tokio's registration contract: the descriptor is open and stays the same open
    // file description for the AsyncFd's life. The Driver it takes owns (through the shared
    // executor, which is never taken out) the CQ whose completion channel this descriptor
    // is, and its as_raw_fd returns that one descriptor for its whole life (`Driver`'s
    // AsFd).
    let fd = match unsafe { AsyncFd::register_with_interest(driver, Interest::READABLE | Interest::ERROR) } {
        Ok(fd) => fd,
        Err(e) => {
            return Err(Error::from_errno(
                "mlx5dv::s3::tokio::spawn",
                e.into_parts().1.raw_os_error().unwrap_or(libc::EIO),
                "tokio's reactor refused the completion channel (epoll_ctl)",
            ));
        }
    };
    ::tokio::spawn(run(fd));
    Ok(())
}

/// The driver task: [`drive`] on every wake-up, which the channel's readiness, the driver's
/// registered waker, or an error on the channel gives.
///
/// The error matters: once the device is gone (a fatal error, a PCI error, a hot unplug
/// disassociates the context), the kernel closes the completion channel's queue, after which
/// it polls as `EPOLLERR` alone and reads fail with EIO (uverbs_main.c `ib_uverbs_event_poll`,
/// `ib_uverbs_event_read`). Tokio wakes no reader for `EPOLLERR` alone, only a task waiting
/// for [`Interest::ERROR`]; without that the driver would sleep for ever and so would every
/// transfer. Seen once, the error stays (the queue never reopens): the steps from then on fail
/// until [`MAX_FAILED_STEPS`] end the transfers.
async fn run(fd: AsyncFd<Driver>) {
    let mut failed = 0;
    let mut error = std::pin::pin!(fd.ready(Interest::ERROR));
    let mut errored = false;
    std::future::poll_fn(|cx| {
        if !errored {
            match error.as_mut().poll(cx) {
                Poll::Ready(Ok(_)) => errored = true,
                Poll::Ready(Err(e)) => return reactor_failed(fd.get_ref(), &e),
                Poll::Pending => {}
            }
        }
        drive(&fd, cx, &mut failed, errored)
    })
    .await
}

/// The error every transfer ends with when [`MAX_FAILED_STEPS`] steps failed in a row, the
/// last with `last` (its errno): says so, and what the channel's error means.
fn given_up(last: &Error, errored: bool) -> Error {
    let errno = last.errno().unwrap_or(libc::EIO);
    let gone = if errored && errno == libc::EIO {
        "; the completion channel reports an error and reads fail with EIO: the device is gone (a fatal \
         error, a PCI error or a hot unplug disassociated the context), and with it every transfer: open the \
         device again and make a new executor"
    } else {
        "; the transfers are ended: make a new executor"
    };
    Error::from_errno(
        "mlx5dv::s3::tokio (driver)",
        errno,
        format!("{MAX_FAILED_STEPS} steps failed in a row, the last with: {last}{gone}"),
    )
}

/// Tokio's reactor failed on the channel (it is shutting down): every transfer ends now, none
/// waiting for its flush completions (nothing would take them in).
fn reactor_failed(driver: &Driver, e: &std::io::Error) -> Poll<()> {
    let error = Error::from_errno(
        "mlx5dv::s3::tokio (reactor)",
        e.raw_os_error().unwrap_or(libc::EIO),
        "tokio's reactor failed on the completion channel",
    );
    driver.fail(error.clone());
    driver.fail(error);
    Poll::Ready(())
}

/// One wake-up of the driver task: steps until it must wait (see [`Driver::step`]). `errored`:
/// the channel polled as an error.
fn drive(fd: &AsyncFd<Driver>, cx: &mut Context<'_>, failed: &mut u32, errored: bool) -> Poll<()> {
    let driver = fd.get_ref();
    driver.register(cx.waker());
    for _ in 0..STEPS_PER_YIELD {
        // Readiness seen so far is cleared before the step reads the events: an event after
        // this sets it again.
        if let Poll::Ready(ready) = fd.poll_read_ready(cx) {
            match ready {
                Ok(mut guard) => guard.clear_ready(),
                Err(e) => return reactor_failed(driver, &e),
            }
        }
        match driver.step() {
            Ok(Step::Again) => *failed = 0,
            Ok(Step::Wait) => {
                *failed = 0;
                if fd.poll_read_ready(cx).is_pending() {
                    return Poll::Pending;
                }
            }
            Ok(Step::Finished) => return Poll::Ready(()),
            Err(e) => {
                *failed += 1;
                if *failed >= MAX_FAILED_STEPS {
                    // The first time the executor is stopped and the steps go on to take in
                    // the flush completions; the second, those still awaited are given up.
                    driver.fail(given_up(&e, errored));
                    *failed = 0;
                }
            }
        }
    }
    // Busy: let the other tasks run, then go on.
    cx.waker().wake_by_ref();
    Poll::Pending
}
