//! The ConnectX data path: a device thread that polls doorbell records as the HCA's doorbell
//! logic would see them, executes send WQEs (requester), serves requests at their targets
//! (responder) and writes CQEs (completer).

pub mod bf;
pub mod completer;
pub mod cqe;
pub mod headers;
pub mod oracle;
pub mod remote;
pub mod requester;
pub mod responder;
pub mod timing;
pub mod window;
pub mod wqe;

use crate::device::objects::{QpKind, QpState};
use crate::device::{self, Device};
use cqe::{op, syndrome, Cqe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One pass over the queues that may have been rung: returns whether anything moved.
///
/// A ConnectX reads a doorbell record when software rings it; the emulator cannot trap the
/// store, so it reads the records of what may have been rung on every pass, and nothing else:
/// the arm records of the CQs on a completion channel ([`Device::channel_cqs`]), and the QPs
/// out of RESET other than DCTs ([`Device::live_qps`]), in handle order. A DCT is driven by
/// the requests that name it, a RESET QP executes nothing, a CQ without a channel raises no
/// event: however many of them a process holds, a pass does not look at them.
pub fn step(dev: &mut Device) -> bool {
    let now = Instant::now();
    dev.pass += 1;
    let mut moved = remote::poll(dev);
    scan_uar_doorbells(dev);
    let mut at = None;
    while let Some(cq) = next_after(&dev.channel_cqs, at) {
        at = Some(cq);
        completer::check_arm(dev, cq);
    }
    // A QP that enters the set during the pass (a CQ overrun's victim) is visited in it when
    // its handle is past the cursor, as a pass over every handle in order would.
    let mut at = None;
    while let Some(h) = next_after(&dev.live_qps, at) {
        at = Some(h);
        if let Err(msg) = oracle::check(dev, h) {
            // The QP's rings no longer say what software meant: nothing more of it runs, and
            // the device thread ends the process with this message (see `start`).
            if dev.fault.is_none() {
                crate::log(format_args!("{msg}"));
                dev.fault = Some(msg);
            }
            continue;
        }
        moved |= requester::run(dev, h, now);
        moved |= flush_receive_queue(dev, h);
    }
    // The BlueFlame copies of the doorbells rung so far (bf.rs): a mix fails the run as an
    // overrun does.
    if let Err(msg) = bf::check(dev) {
        if dev.fault.is_none() {
            crate::log(format_args!("{msg}"));
            dev.fault = Some(msg);
        }
    }
    moved
}

/// The first handle of `set` past `at` (the first of all when None).
fn next_after(set: &std::collections::BTreeSet<u32>, at: Option<u32>) -> Option<u32> {
    use std::ops::Bound::{Excluded, Unbounded};
    match at {
        None => set.first().copied(),
        Some(a) => set.range((Excluded(a), Unbounded)).next().copied(),
    }
}

/// Runs the data path until nothing moves (bounded): what a firmware command that observes
/// data-path state sees on hardware, where rung work is executed long before the command is.
pub fn settle(dev: &mut Device) {
    for _ in 0..1024 {
        if !step(dev) {
            return;
        }
    }
}

/// A QP in ERR completes every posted receive WQE with a flush error (IBA 10.3.1.1).
fn flush_receive_queue(dev: &mut Device, h: u32) -> bool {
    let dma = &dev.dma;
    let Some(qp) = dev.qps.get_mut(&h) else {
        return false;
    };
    if qp.state != QpState::Err || qp.kind == QpKind::Dct || qp.srq.is_some() || qp.rq.cnt == 0 {
        return false;
    }
    let posted = dma.read_be32(qp.db) & 0xffff;
    let mut cqes = Vec::new();
    while qp.rq_ci & 0xffff != posted {
        cqes.push(Cqe {
            opcode: op::RESP_ERR,
            uidx: qp.uidx,
            qpn: qp.qpn,
            wqe_counter: qp.rq_ci as u16,
            syndrome: syndrome::WR_FLUSH_ERR,
            ..Default::default()
        });
        qp.rq_ci = qp.rq_ci.wrapping_add(1);
    }
    let cq = qp.recv_cq;
    let moved = !cqes.is_empty();
    if let Some(cq) = cq {
        for c in &cqes {
            completer::post(dev, cq, c);
        }
    }
    moved
}

/// The CQ arm doorbell libmlx5 writes into the UAR page (offset MLX5_CQ_DOORBELL 0x20:
/// `sn << 28 | cmd | ci`, then the CQ number): a re-arm that writes the record's value again
/// leaves it unchanged, so the UAR write is what tells. It holds only the last doorbell rung;
/// every CQ's first arm is seen in its own record (completer.rs `ARM_RECORD_UNARMED`).
fn scan_uar_doorbells(dev: &mut Device) {
    for i in 0..dev.uars.len() {
        let uar = dev.uars[i];
        let word = dev.dma.read_be64(uar + 0x20);
        if word == 0 {
            continue;
        }
        dev.dma.write(uar + 0x20, &[0u8; 8]);
        let cqn = (word & 0xff_ffff) as u32;
        if let Some(c) = dev.cq_by_num(cqn).and_then(|h| dev.cqs.get_mut(&h)) {
            c.last_arm = None;
        }
    }
}

static RUNNING: AtomicBool = AtomicBool::new(false);

/// A test hook, not a hardware feature: while set, the device thread executes nothing (it
/// neither reads doorbells nor serves the fabric), so a benchmark can measure what posting
/// costs the library without the device draining the queue under it. Exported to C by the
/// interposer as `soft_mlx5_test_pause`.
pub static PAUSED: AtomicBool = AtomicBool::new(false);

/// After fork() in the child: no device thread runs there, so the next [`start`] makes one.
pub fn forget_thread() {
    RUNNING.store(false, Ordering::SeqCst);
}

/// Starts the device thread of this process (once).
pub fn start() {
    if RUNNING.swap(true, Ordering::SeqCst) {
        return;
    }
    let spawned = std::thread::Builder::new().name("soft-mlx5 device".into()).spawn(|| {
        // The application's threads busy-poll their CQs on the same cores; a real HCA does not
        // compete with them for a CPU. A higher priority (where the process may take one)
        // keeps a round trip from waiting out scheduler slices; nothing else depends on it.
        // SAFETY: setpriority on this thread's id; failure (no CAP_SYS_NICE) changes nothing.
        unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, -10) };
        let mut last_work = Instant::now();
        loop {
            if PAUSED.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_micros(100));
                continue;
            }
            let (moved, wire) = {
                let mut dev = device::global();
                // Checked again under the lock: whoever paused and then took the lock knows
                // no step runs after it.
                if PAUSED.load(Ordering::Acquire) {
                    continue;
                }
                // A device that failed for good executes nothing: no doorbell is read, no CQE
                // written, no event raised, no peer answered.
                let moved = !dev.fatal && step(&mut dev);
                if let Some(msg) = &dev.fault {
                    // A software overrun fails the run at once, naming the QP (oracle.rs).
                    eprintln!("soft-mlx5 (emulated): {msg}");
                    std::process::abort();
                }
                (moved, dev.fabric.as_ref().map(|f| f.raw_fd()))
            };
            // Busy while there is work and for 50 us after it (the next doorbell of a
            // ping-pong comes soon); then wait up to 100 us, or until a message arrives on the
            // fabric, so an idle device costs little CPU (a real HCA has its own silicon for
            // this). No sched_yield: on a loaded machine it gives away a whole time slice.
            if moved {
                last_work = Instant::now();
            } else if last_work.elapsed() > Duration::from_micros(50) {
                wait(wire, Duration::from_micros(100));
            }
        }
    });
    if spawned.is_err() {
        RUNNING.store(false, Ordering::SeqCst);
    }
}

/// Sleeps for `limit`, or less when the fabric socket `wire` becomes readable.
fn wait(wire: Option<i32>, limit: Duration) {
    let Some(fd) = wire else {
        std::thread::sleep(limit);
        return;
    };
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: limit.as_nanos() as libc::c_long,
    };
    // SAFETY: one live pollfd and a valid timespec; no signal mask is changed.
    unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
}
