//! The BlueFlame oracle: what a doorbell written to a BlueFlame register carries is what a
//! ConnectX executes for it, so a copy that is torn, that differs from the ring, or whose
//! 64-byte chunks come from two writers makes silicon execute something software never
//! posted. libmlx5 (providers/mlx5/qp.c `post_send_db`) writes, after the doorbell record, either
//! the whole WQE (`mlx5_bf_copy`, `align(ds * 16, 64)` bytes, only when it fits the register's
//! half, `bf->buf_size`) or the first 8 bytes of its control segment (`mmio_write64_be`) to
//! `bf->reg + bf->offset`, then toggles `bf->offset` between the register's two halves; a
//! register several QPs share (mlx5_ib `alloc_bfreg`'s medium class, `need_uuar_lock` in
//! mlx5.c) is written under `bf->lock`, because two CPUs copying to it at once interleave
//! their write-combined chunks.
//!
//! The emulated HCA cannot trap a store to the mapped UAR page. It reads both halves of every
//! register a QP was given (kernel/mod.rs `bf_register`) on each pass and, once a half has
//! stayed unchanged over two passes and either for [`Watch::settle`], or for
//! [`Watch::settle_reposted`] once the QP it names has rung its doorbell record again (libmlx5
//! writes the record of its next post after the copy, so its own copy is complete then; a
//! copy still in progress is not torn), judges what the last write left there against the WQEs the device fetched from the rings of the QPs on
//! that register:
//! - the control segment's first 8 bytes name a QP on the register and one of its fetched
//!   WQEs (otherwise the content is stale: a destroyed QP's, or a slot reused since);
//! - if the rest of the first chunk differs from that WQE, it was an 8-byte doorbell;
//! - if it agrees, every chunk of the WQE that fits the half must agree too, unless the whole
//!   half is an 8-byte doorbell over an earlier copy (of a WQE whose chunks are all there);
//! - otherwise a chunk from another QP's WQE is an interleaving of two writers, and any other
//!   difference a torn copy or one that differs from the ring: the run fails naming the QPs.
//!
//! Stricter than silicon only in failing loudly where silicon would execute the mix.

use crate::device::objects::BfReg;
use crate::device::Device;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

/// WQEs remembered per register: the copies a half may still hold come from the last few
/// doorbells, and every WQE is fetched before its ring slot can be reused.
const RECENT: usize = 64;

/// Basic block (and BlueFlame chunk) size.
const CHUNK: usize = 64;

/// What the oracle keeps between passes.
#[derive(Debug)]
pub struct Watch {
    /// How long a half must stay unchanged before it is judged (default 1 s: a writer
    /// preempted in the middle of a copy is not a torn copy).
    pub settle: Duration,
    /// How long, once the QP whose WQE the half names has posted again (default 2 ms).
    pub settle_reposted: Duration,
    /// Per register address: the WQEs fetched from the rings of its QPs, newest last
    /// (QP number, the WQE's ds * 16 bytes).
    recent: HashMap<u64, VecDeque<(u32, Vec<u8>)>>,
    /// Per half address: what it held at the last pass, since when, and whether judged.
    halves: HashMap<u64, Half>,
    /// The registers read on each pass, with when a QP on each last had a WQE fetched: libmlx5
    /// writes a register only in a post that rings the QP's doorbell record too, so a register
    /// is read from its QPs' next fetch until its halves are judged and `settle` has passed
    /// since (a copy may land after the fetch of its WQE); a register of QPs that post nothing
    /// is not read at all.
    active: HashMap<u64, Instant>,
}

impl Default for Watch {
    fn default() -> Self {
        Watch {
            settle: Duration::from_secs(1),
            settle_reposted: Duration::from_millis(2),
            recent: HashMap::new(),
            halves: HashMap::new(),
            active: HashMap::new(),
        }
    }
}

#[derive(Debug)]
struct Half {
    bytes: Vec<u8>,
    /// Whether the last change touched the control word (the first 8 bytes) alone: an 8-byte
    /// doorbell over whatever the half held, however long ago that was copied.
    doorbell_only: bool,
    since: Instant,
    /// Passes that found it unchanged.
    passes: u32,
    judged: bool,
}

/// What a half's content says.
enum Verdict {
    /// Consistent: a whole copy of the WQE named, or an 8-byte doorbell.
    Fine,
    /// A BlueFlame copy that agrees with the ring (logged with SOFT_MLX5_LOG).
    Copy(u32, u32),
    /// Its WQE has not been fetched yet: judge again later.
    Later,
    /// A torn, foreign or interleaved copy.
    Bad(String),
}

impl Watch {
    /// The device fetched `wqe` (its ds * 16 bytes) of QP `qpn`, whose register is `reg`.
    pub fn fetched(&mut self, reg: BfReg, qpn: u32, wqe: &[u8]) {
        self.active.insert(reg.addr, Instant::now());
        let list = self.recent.entry(reg.addr).or_default();
        list.push_back((qpn, wqe.to_vec()));
        if list.len() > RECENT {
            list.pop_front();
        }
    }
}

/// One pass of the oracle over every watched register: Err names the QPs whose doorbells
/// left a copy silicon would not execute as posted.
pub fn check(dev: &mut Device) -> Result<(), String> {
    if !dev.strict.bf_oracle {
        return Ok(());
    }
    // The registers QPs were given and the QPs on each (Device::bf_regs), and each watched
    // QP's send producer counter (its doorbell record), read when a half names it.
    let Device {
        bf_regs: regs,
        bf: watch,
        dma,
        uars,
        qps,
        qpn_to_handle,
        ..
    } = dev;
    let pi_of = |qpn: u32| {
        let qp = qps.get(qpn_to_handle.get(&qpn)?)?;
        qp.bf.map(|_| dma.read_be32(qp.db + 4) & 0xffff)
    };
    let now = Instant::now();
    // Registers no QP uses any more (destroyed QPs, closed contexts) are forgotten.
    watch.recent.retain(|a, _| regs.contains_key(a));
    watch.active.retain(|a, _| regs.contains_key(a));
    watch.halves.retain(|h, _| {
        regs.range(..=*h)
            .next_back()
            .is_some_and(|(a, (r, _))| *h < a + 2 * u64::from(r.half))
    });
    // The registers read this pass: those a QP fetched from lately (Watch::active), in address
    // order; not every register of every context (a process with a hundred contexts has
    // hundreds, and most are quiet).
    let mut active: Vec<(u64, Instant)> = watch.active.iter().map(|(&a, &t)| (a, t)).collect();
    active.sort_unstable_by_key(|&(a, _)| a);
    for (addr, last_fetch) in active {
        let Some((reg, qpns)) = regs.get(&addr) else {
            continue;
        };
        let reg = *reg;
        // Only a register of a page still mapped is read (kernel::munmap drops unmapped UAR
        // pages under the device lock; the UAR pages mapped are page-aligned, the device's
        // own mappings).
        let page = addr & !0xfff;
        let mapped = uars.contains(&page) && addr - page + 2 * u64::from(reg.half) <= 4096;
        if !mapped || reg.half == 0 {
            continue;
        }
        for half_addr in [addr, addr + u64::from(reg.half)] {
            let mut bytes = vec![0u8; reg.half as usize];
            dma.read(half_addr, &mut bytes);
            let empty = VecDeque::new();
            let recent = watch.recent.get(&addr).unwrap_or(&empty);
            let fault = |what: String| {
                format!(
                    "BlueFlame oracle: register {addr:#x} (half at +{:#x}): {what}; silicon executes what \
                     the BlueFlame copy holds (libmlx5 post_send_db copies under the register's lock and \
                     toggles its offset)",
                    half_addr - addr
                )
            };
            let h = watch.halves.entry(half_addr).or_insert_with(|| Half {
                bytes: vec![0; bytes.len()],
                doorbell_only: false,
                since: now,
                passes: 0,
                judged: true,
            });
            if h.bytes != bytes {
                // An 8-byte doorbell over what the half held (the control word changed alone,
                // and what was there had stayed put for a pass: no copy still in progress).
                // What it covers is judged now, while its WQE is still remembered; later
                // doorbells over it need no judging.
                let word0_only = h.bytes[8..] == bytes[8..];
                let settled = h.judged || h.doorbell_only || h.passes >= 1;
                if word0_only && settled && !h.judged && !h.doorbell_only {
                    if let Verdict::Bad(what) = judge(&h.bytes, qpns, recent) {
                        h.judged = true;
                        return Err(fault(what));
                    }
                }
                h.doorbell_only = word0_only && settled;
                h.bytes = bytes;
                h.since = now;
                h.passes = 0;
                h.judged = false;
                continue;
            }
            h.passes = h.passes.saturating_add(1);
            if h.judged || h.passes < 2 {
                continue;
            }
            // The QP the half names rang again: the record moved past the WQE's end.
            let (named, index) = (qpn_of(&h.bytes), index_of(&h.bytes));
            let ds = u32::from(h.bytes[7] & 0x3f);
            let end = (index + (ds * 16).div_ceil(CHUNK as u32)) & 0xffff;
            let reposted = pi_of(named).is_some_and(|p| p != end);
            let waited = now.duration_since(h.since);
            if waited < watch.settle && !(reposted && waited >= watch.settle_reposted) {
                continue;
            }
            if h.doorbell_only {
                h.judged = true;
                continue;
            }
            match judge(&h.bytes, qpns, recent) {
                Verdict::Fine => h.judged = true,
                Verdict::Copy(qpn, index) => {
                    h.judged = true;
                    crate::log(format_args!(
                        "BlueFlame oracle: register {addr:#x}: the copy of QP {qpn:#x}'s WQE {index} agrees with its ring"
                    ));
                }
                // A WQE the device has not fetched in ten seconds is not coming.
                Verdict::Later => h.judged = now.duration_since(h.since) > Duration::from_secs(10),
                Verdict::Bad(what) => {
                    h.judged = true;
                    return Err(fault(what));
                }
            }
        }
        let judged = [addr, addr + u64::from(reg.half)]
            .iter()
            .all(|a| watch.halves.get(a).is_some_and(|h| h.judged && h.passes >= 2));
        if judged && now.duration_since(last_fetch) >= watch.settle {
            watch.active.remove(&addr);
        }
    }
    Ok(())
}

/// Whether chunk `k` of `bytes` agrees with chunk `k` of `wqe` over the WQE's length.
fn chunk_eq(bytes: &[u8], wqe: &[u8], k: usize, from: usize) -> bool {
    let lo = k * CHUNK + from;
    let hi = ((k + 1) * CHUNK).min(wqe.len()).min(bytes.len());
    lo >= hi || bytes[lo..hi] == wqe[lo..hi]
}

fn qpn_of(ctrl: &[u8]) -> u32 {
    u32::from_be_bytes([ctrl[4], ctrl[5], ctrl[6], ctrl[7]]) >> 8
}

fn index_of(ctrl: &[u8]) -> u32 {
    (u32::from_be_bytes([ctrl[0], ctrl[1], ctrl[2], ctrl[3]]) >> 8) & 0xffff
}

fn judge(bytes: &[u8], qpns: &BTreeSet<u32>, recent: &VecDeque<(u32, Vec<u8>)>) -> Verdict {
    let qpn = qpn_of(bytes);
    if !qpns.contains(&qpn) {
        return Verdict::Fine;
    }
    let Some((_, wqe)) = recent
        .iter()
        .rev()
        .find(|(q, w)| *q == qpn && w.len() >= 8 && w[..8] == bytes[..8])
    else {
        return Verdict::Later;
    };
    let chunks = wqe.len().div_ceil(CHUNK);
    if chunks * CHUNK > bytes.len() || !chunk_eq(bytes, wqe, 0, 8) {
        // Too large to be copied, or the rest of the first chunk is not this WQE's: an
        // 8-byte doorbell.
        return Verdict::Fine;
    }
    let Some(k) = (1..chunks).find(|&k| !chunk_eq(bytes, wqe, k, 0)) else {
        return Verdict::Copy(qpn, index_of(bytes));
    };
    // An 8-byte doorbell over an earlier copy whose first chunk looked the same (DC WQEs to
    // one DCT share their first 64 bytes but the control word): every chunk of that copy is
    // there.
    let over_earlier_copy = recent.iter().any(|(_, v)| {
        v.len() >= 8 && chunk_eq(bytes, v, 0, 8) && (1..v.len().div_ceil(CHUNK)).all(|j| chunk_eq(bytes, v, j, 0))
    });
    if over_earlier_copy {
        return Verdict::Fine;
    }
    let index = index_of(bytes);
    crate::log(format_args!(
        "BlueFlame oracle: the half holds {}; QP {:#x}'s WQE is {}",
        super::wqe::hex(&bytes[..chunks * CHUNK]),
        qpn,
        super::wqe::hex(wqe)
    ));
    let foreign = recent
        .iter()
        .rev()
        .find(|(q, v)| *q != qpn && v.len() > k * CHUNK && chunk_eq(bytes, v, k, 0));
    Verdict::Bad(match foreign {
        Some((other, v)) => format!(
            "64-byte chunks of two writers interleaved: chunk {k} is QP {other:#x}'s (its WQE {}), the others \
             QP {qpn:#x}'s WQE {index}; QPs {qpn:#x} and {other:#x} share this register",
            index_of(v)
        ),
        None => format!(
            "the BlueFlame copy of QP {qpn:#x}'s WQE {index} is torn or differs from its ring from chunk {k} on"
        ),
    })
}
