//! Address handles made off the data path: on RoCE `ibv_create_ah` for a new GID makes the
//! kernel resolve the neighbour (`ib_resolve_eth_dmac` -> `rdma_addr_find_l2_eth_by_grh` ->
//! `rdma_resolve_ip(..., 1000 ms)`), so one for an address that never answers blocks its
//! caller for a second. A thread of the executor's makes them; the data path asks and
//! collects answers without waiting.

use crate::ah::{Ah, PeerPath};
use crate::error::{Error, Result};
use crate::pd::Pd;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::task::Waker;

/// A thread that makes address handles on `pd`, one request at a time, in order.
pub(super) struct Resolver<K> {
    requests: Sender<(K, PeerPath)>,
    answers: Receiver<(K, Result<Ah>)>,
    /// Woken after each answer (the async layer's driver: nothing else tells it one is in).
    waker: Arc<Mutex<Option<Waker>>>,
}

impl<K: Send + 'static> Resolver<K> {
    /// Starts the thread (`mlx5dv-s3-ah`) for port `port` of `pd`. It ends once the
    /// resolver is dropped and the handle it may be making is made (then dropped).
    ///
    /// # Errors
    /// The thread could not be started (std's error, as EAGAIN).
    pub(super) fn start(pd: &Pd, port: u8) -> Result<Self> {
        let (requests, inbox) = channel::<(K, PeerPath)>();
        let (outbox, answers) = channel();
        let pd = pd.clone();
        let waker = Arc::new(Mutex::new(None::<Waker>));
        let wake = Arc::clone(&waker);
        std::thread::Builder::new()
            .name("mlx5dv-s3-ah".into())
            .spawn(move || {
                for (key, path) in inbox {
                    if outbox.send((key, pd.create_ah(port, &path))).is_err() {
                        break;
                    }
                    if let Some(w) = wake.lock().ok().and_then(|w| w.clone()) {
                        w.wake();
                    }
                }
            })
            .map_err(|e| {
                Error::from_errno(
                    "mlx5dv::s3::Executor::new",
                    libc::EAGAIN,
                    format!("the thread that makes address handles could not start: {e}"),
                )
            })?;
        Ok(Resolver {
            requests,
            answers,
            waker,
        })
    }

    /// Asks for the handle of `path`, answered under `key`; returns at once.
    pub(super) fn ask(&self, key: K, path: PeerPath) {
        // The thread lives as long as the resolver (it ends only on a closed channel).
        let _ = self.requests.send((key, path));
    }

    /// Wakes `waker` after each answer from now on.
    pub(super) fn wake_on_answer(&self, waker: &Waker) {
        if let Ok(mut w) = self.waker.lock() {
            if !w.as_ref().is_some_and(|w| w.will_wake(waker)) {
                *w = Some(waker.clone());
            }
        }
    }

    /// An answer, if one is in.
    pub(super) fn answer(&self) -> Option<(K, Result<Ah>)> {
        // Empty, or (never while the resolver lives) disconnected: nothing in.
        self.answers.try_recv().ok()
    }
}
