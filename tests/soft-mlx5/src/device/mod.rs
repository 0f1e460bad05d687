//! The emulated HCA: its object tables (what mlx5_ib and the firmware keep per device) and the
//! one lock that serialises the command interface and the data path.

pub mod events;
pub mod objects;

use crate::mem::{Dma, LocalDma};
use crate::profile::Profile;
use objects::{Ah, Cq, Mr, Pd, Qp, Srq};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// A table keyed by a handle or an object number: a lookup costs the same however many
/// objects the device holds (the data path looks QPs and CQs up several times per message).
pub type Table<V> = std::collections::HashMap<u32, V, NumberHash>;

/// Hashes a handle or object number (small, mostly consecutive integers) by Fibonacci
/// multiplication: cheap, and spreading consecutive keys over the whole hash, so over a
/// table's control bytes too. Not for keys an adversary picks.
#[derive(Clone, Copy, Debug, Default)]
pub struct NumberHash;

impl std::hash::BuildHasher for NumberHash {
    type Hasher = NumberHasher;
    fn build_hasher(&self) -> NumberHasher {
        NumberHasher(0)
    }
}

/// The hasher of [`NumberHash`].
#[derive(Clone, Copy, Debug, Default)]
pub struct NumberHasher(u64);

impl std::hash::Hasher for NumberHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// First QP number handed out (mlx5 firmware starts user QPs above the reserved range).
pub const FIRST_QPN: u32 = 0x100;
/// The first number of QP number block `b` that is handed out (block 0 starts at
/// [`FIRST_QPN`]).
fn qpn_block_start(b: u32) -> u32 {
    (b << crate::fabric::QPN_BLOCK_SHIFT).max(FIRST_QPN)
}

/// How many numbers of block `b` are handed out.
fn qpn_block_len(b: u32) -> u32 {
    ((b + 1) << crate::fabric::QPN_BLOCK_SHIFT) - qpn_block_start(b)
}

/// First mkey index; keys are index << 8 | variant, as mlx5 mkeys are.
pub const FIRST_MKEY_INDEX: u32 = 0x10;

/// One async event to deliver (struct ib_uverbs_async_event_desc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsyncEvent {
    /// The object's user handle (or the port number for port events).
    pub element: u64,
    /// enum ib_event_type.
    pub event_type: u32,
}

/// ib_event_type values the device raises.
pub mod event {
    /// CQ overrun.
    pub const CQ_ERR: u32 = 0;
    /// QP fatal (requester or responder error moved the QP to ERR).
    pub const QP_FATAL: u32 = 1;
    /// Invalid request on the responder.
    pub const QP_REQ_ERR: u32 = 2;
    /// Access violation on the responder.
    pub const QP_ACCESS_ERR: u32 = 3;
    /// The device failed for good (firmware fatal error, PCI error, removal).
    pub const DEVICE_FATAL: u32 = 8;
    /// Port active.
    pub const PORT_ACTIVE: u32 = 9;
    /// Port down.
    pub const PORT_ERR: u32 = 10;
    /// SRQ limit reached.
    pub const SRQ_LIMIT_REACHED: u32 = 15;
    /// Last WQE reached (QP on an SRQ entered ERR).
    pub const QP_LAST_WQE_REACHED: u32 = 16;
}

/// A DEVX general object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevxObj {
    /// An address vector mapped to an initiator QP (MLX5_OBJ_TYPE_AV_QP_MAPPING).
    AvQpMapping {
        /// The QP number the mapping names.
        qpn: u32,
        /// The firmware object id.
        obj_id: u32,
    },
    /// A QP (RC or DCI) or DCT created by CREATE_QP / CREATE_DCT: the queue pair itself is in
    /// `qps` under the same handle.
    Qp,
    /// An RMP created by CREATE_RMP: the receive queue is in `srqs` under the same handle.
    Rmp,
    /// An indirect mkey created by CREATE_MKEY (KSM): in `ksms` under its key.
    Mkey {
        /// The key.
        key: u32,
    },
}

/// User memory registered for DEVX objects (MLX5_IB_METHOD_DEVX_UMEM_REG): what a QP, DCT or
/// RMP created through DEVX names by `umem_id` for its rings and doorbell record.
#[derive(Clone, Copy, Debug)]
pub struct Umem {
    /// The firmware's umem id.
    pub id: u32,
    /// Start address.
    pub addr: u64,
    /// Length in bytes.
    pub len: u64,
}

/// A DEVX event subscription (MLX5_IB_METHOD_DEVX_SUBSCRIBE_EVENT).
#[derive(Clone, Copy, Debug)]
pub struct DevxSub {
    /// The event channel's fd (the application's end).
    pub channel: i32,
    /// The object handle the subscription is for (None: unaffiliated events).
    pub obj: Option<u32>,
    /// The event type (`mlx5_eqe.type`).
    pub event: u16,
    /// The cookie read back with each event.
    pub cookie: u64,
}

/// What a key is for a request ([`Device::translate_window`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowAccess {
    /// No memory window: the key is checked as it is.
    NotAWindow,
    /// A window granting the access: the key of the region it lies in.
    Region(u32),
    /// A window that does not grant it: a remote access error.
    Denied,
}

/// Where the emulator is as strict as silicon although a kinder model would pass more
/// programs (issue 25): each on by default except `qpn_reuse`, each with a switch in the
/// environment (read when a device is made; scripts/soft-mlx5 lists them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strict {
    /// `SOFT_MLX5_BF_ORACLE=0` turns it off: BlueFlame copies are checked against the ring and
    /// for chunks of two writers (engine/bf.rs).
    pub bf_oracle: bool,
    /// `SOFT_MLX5_WQE_SIG=0` turns it off: a QP created with MLX5_QP_FLAG_SIGNATURE has every
    /// send WQE's signature checked (engine/requester.rs).
    pub wqe_sig: bool,
    /// `SOFT_MLX5_QPN_REUSE=1` turns it on: a freed QP/DCT number is the next one handed out.
    pub qpn_reuse: bool,
    /// `SOFT_MLX5_PIN_STRICT=0` turns it off: a writable registration of a shared mapping of a
    /// dirty-tracked file fails with EFAULT (kernel/pin.rs).
    pub pin: bool,
    /// `SOFT_MLX5_DCKEY_SILENT=0` turns it off: a request with a wrong DC key is dropped
    /// silently at another process's DCT and its requester waits its ACK timeouts.
    pub dckey_silent: bool,
    /// `SOFT_MLX5_MR_CACHE=0` turns it off: a deregistered region's key goes to mlx5_ib's MR
    /// cache and the next registration of as many pages gets it back (kernel/write.rs).
    pub mr_cache: bool,
}

impl Strict {
    /// The switches as the environment sets them.
    pub fn from_env() -> Strict {
        let var = |name: &str, default: bool| match std::env::var(name) {
            Ok(v) if v == "0" => false,
            Ok(v) if v == "1" => true,
            _ => default,
        };
        Strict {
            bf_oracle: var("SOFT_MLX5_BF_ORACLE", true),
            wqe_sig: var("SOFT_MLX5_WQE_SIG", true),
            qpn_reuse: var("SOFT_MLX5_QPN_REUSE", false),
            pin: var("SOFT_MLX5_PIN_STRICT", true),
            dckey_silent: var("SOFT_MLX5_DCKEY_SILENT", true),
            mr_cache: var("SOFT_MLX5_MR_CACHE", true),
        }
    }
}

/// The device's state.
pub struct Device {
    /// Which ConnectX this is.
    pub profile: &'static Profile,
    /// Node index (distinct LID/GID/GUID per emulated node).
    pub node: u32,
    /// How the device reaches application memory.
    pub dma: Box<dyn Dma + Send>,
    /// PDs by handle.
    pub pds: BTreeMap<u32, Pd>,
    /// MRs by handle (kept with [`Device::insert_mr`] and [`Device::remove_mr`]).
    pub mrs: BTreeMap<u32, Mr>,
    /// MR key (lkey = rkey) -> handle.
    pub mr_keys: Table<u32>,
    /// CQs by handle.
    pub cqs: Table<Cq>,
    /// SRQs by handle.
    pub srqs: BTreeMap<u32, Srq>,
    /// QPs and DCTs by handle.
    pub qps: Table<Qp>,
    /// Kernel-created AHs by handle.
    pub ahs: BTreeMap<u32, Ah>,
    /// QP/DCT number -> handle.
    pub qpn_to_handle: Table<u32>,
    /// What a pass of the data path visits (engine::step), so that its work does not grow with
    /// objects nothing can ring: the QPs whose rings the device executes or checks ([`Qp`]s
    /// other than DCTs, out of RESET: the send ring from RTS on, the receive ring's overrun
    /// oracle from INIT, the flush in ERR), by handle. Kept by [`Device::insert_qp`],
    /// [`Device::reindex_qp`] (every state change) and [`Device::destroy_qp`].
    pub live_qps: std::collections::BTreeSet<u32>,
    /// The CQs created on a completion channel, by handle: the only ones an arm request can
    /// concern (the others raise no event), so the only arm records a pass reads. Kept by
    /// [`Device::insert_cq`] and [`Device::remove_cq`].
    pub channel_cqs: std::collections::BTreeSet<u32>,
    /// CQ number -> handle (the arm doorbell in the UAR page and DEVX commands name a CQ by
    /// its number).
    pub cqn_to_handle: Table<u32>,
    /// The BlueFlame registers QPs were given (engine/bf.rs), by address: the register and the
    /// numbers of the QPs on it. Kept by [`Device::insert_qp`] and [`Device::destroy_qp`].
    pub bf_regs: BTreeMap<u64, (objects::BfReg, std::collections::BTreeSet<u32>)>,
    /// Requests on the wire to another process whose answer has not come: the fabric sequence
    /// number the answer carries -> the requester QP's handle (engine/remote.rs). An entry
    /// whose request went away (retried, flushed, reset, destroyed) is dropped by the next
    /// pass.
    pub remote_seqs: std::collections::HashMap<u64, u32>,
    /// Async event files (one per open context), by the application's fd.
    pub async_fds: Vec<i32>,
    /// Async event files and completion channels.
    pub events: events::EventFiles,
    /// Port 1 state (enum ib_port_state: 4 active, 1 down).
    pub port_state: u32,
    /// DEVX general objects by handle.
    pub devx_objs: BTreeMap<u32, DevxObj>,
    /// DEVX umems by handle.
    pub umems: BTreeMap<u32, Umem>,
    /// Indirect (KSM) mkeys by key.
    pub ksms: BTreeMap<u32, objects::Ksm>,
    /// Memory windows by handle.
    pub mws: BTreeMap<u32, objects::Mw>,
    /// mlx5_ib's MR cache: deregistered regions' keys by (pages, the access flags a UMR cannot
    /// change), most recently stored last.
    pub mr_cache: BTreeMap<(u64, u32), Vec<u32>>,
    /// DEVX event channels (the application's fd) and whether they omit event data.
    pub devx_channels: BTreeMap<i32, bool>,
    /// DEVX event subscriptions.
    pub devx_subs: Vec<DevxSub>,
    /// UAR pages mapped by the application (CQ arm doorbells land there).
    pub uars: Vec<u64>,
    /// This device's slot in its node: the high bits of its QP numbers and mkey indexes (0
    /// when it is alone, off the fabric).
    pub slot: u32,
    /// The wire to devices of other processes (`SOFT_MLX5_FABRIC`).
    pub fabric: Option<crate::fabric::Fabric>,
    /// Set when the overrun oracle caught software posting past a ring (engine/oracle.rs).
    pub fault: Option<String>,
    /// The device failed for good and every open context was disassociated
    /// ([`crate::kernel::device_fatal`]): it executes nothing, and the kernel answers only
    /// destroys.
    pub fatal: bool,
    /// The last QP incarnation number handed out (engine/requester.rs).
    pub next_epoch: u64,
    /// Per requester connection that reached this device over the fabric: what a responder
    /// keeps to answer a duplicate (engine/remote.rs).
    pub connections:
        std::collections::HashMap<crate::engine::responder::ConnectionKey, crate::engine::responder::Connection>,
    /// Faults of the wire between this device's own QPs (`SOFT_MLX5_FAULTS`): loss and
    /// duplication of requests and answers; reordering and delay happen on the fabric only.
    pub faults: Option<crate::fabric::faults::Faults>,
    /// Passes of the data path so far: an answer is acted on a pass after its request left,
    /// so requests behind it are on the wire meanwhile, as on a link with latency.
    pub pass: u64,
    /// Completions of different DCI streams in the order they finish rather than send-queue
    /// order (`SOFT_MLX5_OOO=1`); within a stream always in order.
    pub ooo_streams: bool,
    /// The strict behaviours in force ([`Strict`]).
    pub strict: Strict,
    /// log2 of the largest message the port carries (`cmd_hca_cap.log_max_msg`;
    /// `SOFT_MLX5_LOG_MAX_MSG`, [`crate::profile::log_max_msg_from_env`]): reported as
    /// `max_msg_sz` and in the HCA caps, and enforced by the requester and the responder.
    pub log_max_msg: u8,
    /// The BlueFlame oracle's view of the registers (engine/bf.rs).
    pub bf: crate::engine::bf::Watch,
    /// QP/DCT numbers freed, most recent last (handed out again with `strict.qpn_reuse`).
    freed_qpns: Vec<u32>,
    next_handle: u32,
    next_qpn: u32,
    /// The blocks of QP/DCT numbers this device holds, in the order claimed
    /// ([`crate::fabric::QPN_BLOCK_SHIFT`]), and the same as a set.
    qpn_blocks: Vec<u32>,
    qpn_block_set: std::collections::BTreeSet<u32>,
    /// Which of `qpn_blocks` `next_qpn` is in.
    qpn_cursor: usize,
    /// Holders of other devices' blocks seen so far: (node, block) -> slot. A block is let go
    /// only when its device is gone, so an entry goes stale only with a dead peer.
    qpn_holders: std::cell::RefCell<std::collections::HashMap<(u32, u32), u32>>,
    next_mkey: u32,
    /// Mkey indices handed out, most recent last (at most `MKEY_RECENT`): a freed one among
    /// them is handed out again before a new index, as the firmware recycles mkey indices.
    recent_mkeys: Vec<u32>,
    /// The device-wide 8-bit counter each new mkey's variant comes from (mlx5_ib mr.c
    /// `assign_mkey_variant`: `atomic_inc_return(&dev->mkey_var)`).
    mkey_var: u8,
    next_num: u32,
}

/// How many recently handed-out mkey indices `Device::mkey` looks through for a freed one.
const MKEY_RECENT: usize = 256;

impl Device {
    /// A device of `profile` at node `node`, reaching memory through `dma`.
    pub fn new(profile: &'static Profile, node: u32, dma: Box<dyn Dma + Send>) -> Self {
        Device {
            profile,
            node,
            dma,
            pds: BTreeMap::new(),
            mrs: BTreeMap::new(),
            mr_keys: Table::default(),
            cqs: Table::default(),
            srqs: BTreeMap::new(),
            qps: Table::default(),
            ahs: BTreeMap::new(),
            qpn_to_handle: Table::default(),
            live_qps: Default::default(),
            channel_cqs: Default::default(),
            cqn_to_handle: Default::default(),
            bf_regs: BTreeMap::new(),
            remote_seqs: Default::default(),
            async_fds: Vec::new(),
            events: events::EventFiles::default(),
            port_state: 4,
            uars: Vec::new(),
            devx_objs: BTreeMap::new(),
            umems: BTreeMap::new(),
            ksms: BTreeMap::new(),
            mws: BTreeMap::new(),
            mr_cache: BTreeMap::new(),
            devx_channels: BTreeMap::new(),
            devx_subs: Vec::new(),
            slot: 0,
            fabric: None,
            fault: None,
            fatal: false,
            pass: 0,
            next_epoch: 0,
            connections: Default::default(),
            faults: None,
            ooo_streams: false,
            strict: Strict::from_env(),
            log_max_msg: crate::profile::log_max_msg_from_env(),
            bf: Default::default(),
            freed_qpns: Vec::new(),
            next_handle: 1,
            next_qpn: FIRST_QPN,
            qpn_blocks: Vec::new(),
            qpn_block_set: Default::default(),
            qpn_cursor: 0,
            qpn_holders: Default::default(),
            next_mkey: FIRST_MKEY_INDEX,
            recent_mkeys: Vec::new(),
            mkey_var: 0,
            next_num: 1,
        }
    }

    /// The port's maximum message size in bytes (`max_msg_sz` = 1 << log_max_msg, as
    /// mlx5_ib computes it in mlx5_query_hca_port).
    pub fn max_msg_sz(&self) -> u64 {
        1u64 << self.log_max_msg
    }

    /// A fresh object handle.
    pub fn handle(&mut self) -> u32 {
        self.next_handle += 1;
        self.next_handle - 1
    }

    /// Puts the device on the fabric: its numbers carry the slot it claimed from now on.
    pub fn attach(&mut self, fabric: crate::fabric::Fabric) {
        self.slot = fabric.slot;
        self.fabric = Some(fabric);
    }

    /// Takes the device off the fabric (a forked child: the socket is its parent's).
    pub fn detach(&mut self) {
        self.fabric = None;
    }

    /// A fresh QP/DCT number (24 bits), from the blocks this device holds: the one its slot
    /// names first ([`crate::fabric::SLOT_SHIFT`]), then whatever blocks of its node are free
    /// (claimed in the node directory, [`crate::fabric::Fabric::claim_qpn_block`]; off the
    /// fabric, the whole space is this device's). Numbers start at [`FIRST_QPN`] and skip
    /// those in use after a wrap. With `strict.qpn_reuse` the most recently freed number comes
    /// back first: firmware allocates QP numbers from a bitmap and may hand a freed one out at
    /// once, so a stale completion of a destroyed QP meets its successor.
    ///
    /// Err(ENOMEM) when every number of the node is in use: the firmware fails CREATE_QP /
    /// CREATE_DCT with status LIM_ERR (resources past the device's limits), which mlx5_core's
    /// `cmd_status_to_err` makes -ENOMEM.
    pub fn qpn(&mut self) -> Result<u32, i32> {
        if self.strict.qpn_reuse {
            while let Some(qpn) = self.freed_qpns.pop() {
                if !self.qpn_to_handle.contains_key(&qpn) {
                    return Ok(qpn);
                }
            }
        }
        let capacity: usize = self.qpn_blocks.iter().map(|&b| qpn_block_len(b) as usize).sum();
        if self.qpn_to_handle.len() >= capacity {
            let b = self.claim_qpn_block().ok_or(libc::ENOMEM)?;
            self.qpn_blocks.push(b);
            self.qpn_block_set.insert(b);
            self.qpn_cursor = self.qpn_blocks.len() - 1;
            self.next_qpn = qpn_block_start(b);
            if self.qpn_blocks.len() == 1 {
                // Each HCA numbers its QPs on its own: devices of different nodes start at
                // different numbers, so a QP number meant for one node is not also a QP of
                // another (a path to the wrong LID then finds no QP, as on a real fabric).
                self.next_qpn += 16 * (self.node % 48);
            }
        }
        // A free number exists in the blocks held: this ends within one round of them.
        let span = 1u32 << crate::fabric::QPN_BLOCK_SHIFT;
        loop {
            let qpn = self.next_qpn;
            if (qpn + 1) % span == 0 {
                self.qpn_cursor = (self.qpn_cursor + 1) % self.qpn_blocks.len();
                self.next_qpn = qpn_block_start(self.qpn_blocks[self.qpn_cursor]);
            } else {
                self.next_qpn = qpn + 1;
            }
            if !self.qpn_to_handle.contains_key(&qpn) {
                return Ok(qpn);
            }
        }
    }

    /// One more block of QP numbers: after the last one held (the slot's own first).
    fn claim_qpn_block(&self) -> Option<u32> {
        use crate::fabric::{QPN_BLOCKS, QPN_BLOCK_SHIFT, SLOT_SHIFT};
        let first = self
            .qpn_blocks
            .last()
            .map_or((self.slot << SLOT_SHIFT) >> QPN_BLOCK_SHIFT, |b| (b + 1) % QPN_BLOCKS);
        match &self.fabric {
            Some(f) => f.claim_qpn_block(self.node, first),
            None => (0..QPN_BLOCKS)
                .map(|i| (first + i) % QPN_BLOCKS)
                .find(|b| !self.qpn_block_set.contains(b)),
        }
    }

    /// Whether QP/DCT number `qpn` is one of this device's.
    pub fn owns_qpn(&self, qpn: u32) -> bool {
        self.qpn_block_set.contains(&(qpn >> crate::fabric::QPN_BLOCK_SHIFT))
    }

    /// The slot of the device on `node` that holds QP/DCT number `qpn`: this device's for its
    /// own, else the fabric's record (None off the fabric, or for a number nobody holds).
    pub fn qpn_holder(&self, node: u32, qpn: u32) -> Option<u32> {
        if node == self.node && self.owns_qpn(qpn) {
            return Some(self.slot);
        }
        let block = qpn >> crate::fabric::QPN_BLOCK_SHIFT;
        if let Some(&slot) = self.qpn_holders.borrow().get(&(node, block)) {
            return Some(slot);
        }
        let slot = self.fabric.as_ref()?.qpn_block_holder(node, block)?;
        if node == self.node && slot == self.slot {
            // A block a former device of this slot held: nobody's now.
            return None;
        }
        self.qpn_holders.borrow_mut().insert((node, block), slot);
        Some(slot)
    }

    /// A QP or DCT made by a command: into the tables, and into what a pass visits when it
    /// executes its rings already (its number is the caller's to map).
    pub fn insert_qp(&mut self, h: u32, qp: Qp) {
        if let Some(reg) = qp.bf {
            self.bf_regs
                .entry(reg.addr)
                .or_insert((reg, Default::default()))
                .1
                .insert(qp.qpn);
        }
        self.qps.insert(h, qp);
        self.reindex_qp(h);
    }

    /// Gives QP `h` the BlueFlame register `reg` (engine/bf.rs watches it from now on).
    pub fn set_bf(&mut self, h: u32, reg: Option<objects::BfReg>) {
        let Some(qp) = self.qps.get_mut(&h) else {
            return;
        };
        let (old, qpn) = (std::mem::replace(&mut qp.bf, reg), qp.qpn);
        if let Some(old) = old {
            if let Some((_, on)) = self.bf_regs.get_mut(&old.addr) {
                on.remove(&qpn);
                if on.is_empty() {
                    self.bf_regs.remove(&old.addr);
                }
            }
        }
        if let Some(reg) = reg {
            self.bf_regs
                .entry(reg.addr)
                .or_insert((reg, Default::default()))
                .1
                .insert(qpn);
        }
    }

    /// QP `h` changed state: a pass visits it from INIT to ERR, never in RESET, never a DCT
    /// (responder-only: a request that names it is what makes it act).
    pub fn reindex_qp(&mut self, h: u32) {
        match self.qps.get(&h) {
            Some(qp) if qp.kind != objects::QpKind::Dct && qp.state != objects::QpState::Reset => {
                self.live_qps.insert(h);
            }
            _ => {
                self.live_qps.remove(&h);
            }
        }
    }

    /// A CQ made by CREATE_CQ: into the tables, by number, and among those a pass reads the arm
    /// record of when it has a completion channel.
    pub fn insert_cq(&mut self, h: u32, cq: Cq) {
        self.cqn_to_handle.insert(cq.cqn, h);
        if cq.channel.is_some() {
            self.channel_cqs.insert(h);
        }
        self.cqs.insert(h, cq);
    }

    /// DESTROY_CQ of CQ `h`.
    pub fn remove_cq(&mut self, h: u32) -> Option<Cq> {
        let cq = self.cqs.remove(&h)?;
        if self.cqn_to_handle.get(&cq.cqn) == Some(&h) {
            self.cqn_to_handle.remove(&cq.cqn);
        }
        self.channel_cqs.remove(&h);
        Some(cq)
    }

    /// The handle of the CQ numbered `cqn`.
    pub fn cq_by_num(&self, cqn: u32) -> Option<u32> {
        self.cqn_to_handle.get(&cqn).copied()
    }

    /// DESTROY_QP of QP or DCT `h`: it leaves the tables and its number is free again.
    pub fn destroy_qp(&mut self, h: u32) -> Option<Qp> {
        // Off the register it had (engine/bf.rs) and out of what a pass visits.
        self.set_bf(h, None);
        let qp = self.qps.remove(&h)?;
        self.live_qps.remove(&h);
        if self.qpn_to_handle.get(&qp.qpn) == Some(&h) {
            self.qpn_to_handle.remove(&qp.qpn);
            self.freed_qpns.push(qp.qpn);
            // Only the recent past matters; keep the list short.
            if self.freed_qpns.len() > 4096 {
                self.freed_qpns.drain(..2048);
            }
        }
        Some(qp)
    }

    /// A fresh mkey (lkey = rkey): index `slot << SLOT_SHIFT | n`, variant from the device's
    /// 8-bit counter (mlx5_ib `assign_mkey_variant`), as unkind as mlx5_ib and the firmware:
    /// a freed index is handed out again (the most recently handed-out free one first) before
    /// a new one, so a new key may share its index with a key that was revoked.
    pub fn mkey(&mut self) -> u32 {
        let span = 1u32 << crate::fabric::SLOT_SHIFT;
        let base = self.slot << crate::fabric::SLOT_SHIFT;
        let index_of = |key: u32| (key >> 8) & (span - 1);
        // Indices still in use: registrations, KSMs, windows, keys kept by the MR cache.
        let in_use: std::collections::HashSet<u32> = self
            .mrs
            .values()
            .map(|m| index_of(m.lkey))
            .chain(self.ksms.keys().map(|&k| index_of(k)))
            .chain(self.mws.values().map(|w| index_of(w.key)))
            .chain(self.mr_cache.values().flatten().map(|&k| index_of(k)))
            .collect();
        let n = match self.recent_mkeys.iter().rposition(|i| !in_use.contains(i)) {
            Some(at) => self.recent_mkeys.remove(at),
            None => loop {
                let n = self.next_mkey;
                self.next_mkey = if n + 1 >= span { FIRST_MKEY_INDEX } else { n + 1 };
                if !in_use.contains(&n) {
                    break n;
                }
            },
        };
        self.recent_mkeys.push(n);
        if self.recent_mkeys.len() > MKEY_RECENT {
            self.recent_mkeys.remove(0);
        }
        self.mkey_var = self.mkey_var.wrapping_add(1);
        ((base | n) << 8) | u32::from(self.mkey_var)
    }

    /// A fresh PD/CQ/SRQ number.
    pub fn number(&mut self) -> u32 {
        self.next_num += 1;
        self.next_num - 1
    }

    /// The MR whose lkey (or rkey) is `key`: found through [`Device::mr_keys`], so a request's
    /// key costs the same however many regions the device holds.
    pub fn mr_by_key(&self, key: u32) -> Option<&Mr> {
        self.mrs.get(self.mr_keys.get(&key)?).filter(|m| m.lkey == key)
    }

    /// REG_MR: region `h` into the tables, by handle and by key.
    pub fn insert_mr(&mut self, h: u32, mr: Mr) {
        self.mr_keys.insert(mr.lkey, h);
        self.mrs.insert(h, mr);
    }

    /// DEREG_MR of region `h`.
    pub fn remove_mr(&mut self, h: u32) -> Option<Mr> {
        let mr = self.mrs.remove(&h)?;
        if self.mr_keys.get(&mr.lkey) == Some(&h) {
            self.mr_keys.remove(&mr.lkey);
        }
        Some(mr)
    }

    /// `len` bytes at `addr` under `key`, with an indirect (KSM) key resolved to the direct key
    /// and address of the entity holding them: the KSM key must belong to `pd`, grant `needed`
    /// and cover the range, which must lie in one entity (a range across two entities would
    /// need a scatter the model does not do). A direct key comes back as it is.
    pub fn translate_indirect(&self, addr: u64, key: u32, len: u64, pd: u32, needed: u32) -> Option<(u64, u32)> {
        let Some(k) = self.ksms.get(&key) else {
            return Some((addr, key));
        };
        if k.pd != pd || k.access & needed != needed || addr < k.start || len > k.len || addr - k.start > k.len - len {
            return None;
        }
        let rel = addr - k.start;
        let entity = 1u64 << k.log_entity;
        let (i, off) = (rel >> k.log_entity, rel & (entity - 1));
        if off + len > entity {
            return None;
        }
        let &(mkey, va) = k.entries.get(usize::try_from(i).ok()?)?;
        Some((va + off, mkey))
    }

    /// The memory window whose mkey index `key` names (whatever its tag).
    pub fn mw_by_index(&self, key: u32) -> Option<&objects::Mw> {
        self.mws.values().find(|w| w.key >> 8 == key >> 8)
    }

    /// `len` bytes at `addr` under `key` arriving at QP or DCT `qpn` of `pd`, with a memory
    /// window's key resolved to the key of the region it lies in. As the HCA checks a
    /// window (IBA 10.6.7.2, o10-36.2.1: the R_Key's 8-bit key must be the window's current one,
    /// the window bound, of the QP's PD, type 2 bound to this QP, granting the access over the
    /// range); the region's own remote rights do not matter then, only that it still exists
    /// (a window over a deregistered region reaches nothing).
    pub fn translate_window(&self, addr: u64, key: u32, len: u64, pd: u32, needed: u32, qpn: u32) -> WindowAccess {
        let Some(w) = self.mw_by_index(key) else {
            return WindowAccess::NotAWindow;
        };
        let Some(b) = w.bound else {
            return WindowAccess::Denied;
        };
        let ok = w.key == key
            && w.pd == pd
            && (b.qpn == 0x00ff_ffff || b.qpn == qpn)
            && b.access & needed == needed
            && addr >= b.start
            && len <= b.len
            && addr - b.start <= b.len - len;
        let region = self
            .mr_by_key(b.mr_key)
            .is_some_and(|mr| mr.pd == pd && mr.covers(addr, len));
        if ok && region {
            WindowAccess::Region(b.mr_key)
        } else {
            WindowAccess::Denied
        }
    }

    /// The QP or DCT numbered `qpn`.
    pub fn qp_by_num(&self, qpn: u32) -> Option<(u32, &Qp)> {
        let h = *self.qpn_to_handle.get(&qpn)?;
        self.qps.get(&h).map(|q| (h, q))
    }

    /// Moves QP `h` to ERR. One attached to an SRQ then raises "last WQE reached": it will
    /// take no more receives from the SRQ (IBA 10.2.9.5, 11.6.3.2; mlx5
    /// MLX5_EVENT_TYPE_SRQ_LAST_WQE). Flushing its queues is the data path's part.
    pub fn enter_error(&mut self, h: u32) {
        let Some(qp) = self.qps.get_mut(&h) else {
            return;
        };
        if qp.state == objects::QpState::Err {
            return;
        }
        qp.state = objects::QpState::Err;
        let on_srq = qp.srq.is_some();
        self.reindex_qp(h);
        let Some(qp) = self.qps.get(&h) else {
            return;
        };
        if on_srq {
            let ev = AsyncEvent {
                element: qp.user_handle,
                event_type: event::QP_LAST_WQE_REACHED,
            };
            self.raise(ev, events::Owner::Qp(h));
        }
    }

    /// Queues an async event (struct ib_uverbs_async_event_desc) for `owner` on every open
    /// context's async event file.
    pub fn raise(&mut self, ev: AsyncEvent, owner: events::Owner) {
        // An object created through DEVX has no ib object: its events reach the DEVX event
        // channels subscribed to them, not the async event file (mlx5_ib devx.c
        // `mlx5_devx_event_notifier`, `dispatch_event_fd`).
        if let events::Owner::Qp(h) | events::Owner::Srq(h) = owner {
            if self.devx_objs.contains_key(&h) {
                self.raise_devx(h, ev.event_type);
                return;
            }
        }
        let mut desc = vec![0u8; 16];
        desc[0..8].copy_from_slice(&ev.element.to_ne_bytes());
        desc[8..12].copy_from_slice(&ev.event_type.to_ne_bytes());
        for fd in self.async_fds.clone() {
            self.events.push(fd, desc.clone(), owner);
        }
        crate::log(format_args!("async event {} on {:#x}", ev.event_type, ev.element));
    }
}

impl Device {
    /// Delivers event `event_type` (enum ib_event_type) of DEVX object `h` to the channels
    /// subscribed to its mlx5 event type: the cookie, then (unless the channel omits data) the
    /// 64-byte EQE with its type (struct mlx5_ib_uapi_devx_async_event_hdr).
    fn raise_devx(&mut self, h: u32, event_type: u32) {
        use crate::kernel::prm;
        let t = match event_type {
            event::QP_FATAL => prm::MLX5_EVENT_TYPE_WQ_CATAS_ERROR,
            event::QP_REQ_ERR => prm::MLX5_EVENT_TYPE_WQ_INVAL_REQ_ERROR,
            event::QP_ACCESS_ERR => prm::MLX5_EVENT_TYPE_WQ_ACCESS_ERROR,
            event::QP_LAST_WQE_REACHED => prm::MLX5_EVENT_TYPE_SRQ_LAST_WQE,
            event::SRQ_LIMIT_REACHED => prm::MLX5_EVENT_TYPE_SRQ_RQ_LIMIT,
            _ => return,
        };
        let subs: Vec<DevxSub> = self
            .devx_subs
            .iter()
            .filter(|s| s.obj == Some(h) && s.event == t)
            .copied()
            .collect();
        for sub in subs {
            let Some(&omit) = self.devx_channels.get(&sub.channel) else {
                continue;
            };
            let mut bytes = sub.cookie.to_ne_bytes().to_vec();
            if !omit {
                let mut eqe = [0u8; 64];
                eqe[1] = t as u8;
                bytes.extend_from_slice(&eqe);
            }
            self.events.push(sub.channel, bytes, events::Owner::Device);
        }
        crate::log(format_args!("DEVX event {t:#x} on object {h}"));
    }
}

static DEVICE: OnceLock<Mutex<Device>> = OnceLock::new();

/// The process's emulated device (created on first use from `SOFT_MLX5_PROFILE`,
/// `SOFT_MLX5_NODE` and, to reach devices of other processes, `SOFT_MLX5_FABRIC`).
pub fn global() -> MutexGuard<'static, Device> {
    let m = DEVICE.get_or_init(|| {
        let node = std::env::var("SOFT_MLX5_NODE")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let mut dev = Device::new(Profile::from_env(), node, Box::new(LocalDma));
        dev.ooo_streams = std::env::var("SOFT_MLX5_OOO").is_ok_and(|v| v == "1");
        dev.faults = crate::fabric::faults::Faults::from_env();
        if let Some(root) = std::env::var_os("SOFT_MLX5_FABRIC") {
            match crate::fabric::Fabric::join(std::path::Path::new(&root), node) {
                Ok(mut f) => {
                    f.faults = crate::fabric::faults::Faults::from_env();
                    dev.attach(f);
                }
                Err(e) => eprintln!(
                    "soft-mlx5 (emulated): cannot join the fabric at {} ({e}); this process's device reaches only itself",
                    std::path::Path::new(&root).display()
                ),
            }
        }
        Mutex::new(dev)
    });
    m.lock().unwrap_or_else(|e| e.into_inner())
}
