//! Address handles made off the data path: on RoCE `ibv_create_ah` for a new GID makes the
//! kernel resolve the neighbour (`ib_resolve_eth_dmac` -> `rdma_addr_find_l2_eth_by_grh` ->
//! `rdma_resolve_ip(..., 1000 ms)`), so one for an address that never answers blocks its
//! caller for a second. Each handle is made on a thread of its own (the kernel resolves
//! concurrent calls independently, each caller waiting on its own request), so a silent
//! neighbour delays only the transfers to its own path; the data path asks and collects
//! answers without waiting. The executor bounds the paths asked at once (each has a transfer
//! counted among `unproven_transfers`), and so the threads.

use crate::ah::{Ah, PeerPath};
use crate::error::{Error, Result};
use crate::pd::Pd;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::task::Waker;

/// Makes address handles on `pd`, each on a thread of its own (`mlx5dv-s3-ah`).
pub(super) struct Resolver<K> {
    pd: Pd,
    port: u8,
    /// Cloned into each thread, which sends its answer and ends.
    outbox: Sender<(K, Result<Ah>)>,
    answers: Receiver<(K, Result<Ah>)>,
    /// Woken after each answer (the async layer's driver: nothing else tells it one is in).
    waker: Arc<Mutex<Option<Waker>>>,
}

impl<K: Clone + Send + 'static> Resolver<K> {
    /// A resolver for port `port` of `pd` (no thread yet: one per [`Resolver::ask`]). A
    /// thread still making a handle when the resolver is dropped ends once it is made (then
    /// dropped).
    pub(super) fn new(pd: &Pd, port: u8) -> Self {
        let (outbox, answers) = channel();
        Resolver {
            pd: pd.clone(),
            port,
            outbox,
            answers,
            waker: Arc::new(Mutex::new(None::<Waker>)),
        }
    }

    /// Asks for the handle of `path`, answered under `key`; returns at once. Where no thread
    /// can be started, the answer is that error (EAGAIN), at once.
    pub(super) fn ask(&self, key: K, path: PeerPath) {
        let (pd, port, outbox, wake) = (self.pd.clone(), self.port, self.outbox.clone(), Arc::clone(&self.waker));
        let theirs = key.clone();
        let started = std::thread::Builder::new().name("mlx5dv-s3-ah".into()).spawn(move || {
            // A closed channel: the executor is gone, and the handle with this answer.
            let _ = outbox.send((theirs, pd.create_ah(port, &path)));
            if let Some(w) = wake.lock().ok().and_then(|w| w.clone()) {
                w.wake();
            }
        });
        if let Err(e) = started {
            let error = Error::from_errno(
                "mlx5dv::s3::Executor::submit",
                libc::EAGAIN,
                format!("the thread that makes the path's address handle could not start: {e}"),
            );
            let _ = self.outbox.send((key, Err(error)));
        }
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
        // Empty (never disconnected: the resolver holds a sender): nothing in.
        self.answers.try_recv().ok()
    }
}
