//! The objects a uverbs context owns, as mlx5_ib and the HCA keep them.

/// Protection domain.
#[derive(Debug)]
pub struct Pd {
    /// The PD number (mlx5dv_pd.pdn).
    pub pdn: u32,
}

/// Memory region.
#[derive(Clone, Copy, Debug)]
pub struct Mr {
    /// Owning PD handle.
    pub pd: u32,
    /// Start (iova = address here).
    pub addr: u64,
    /// Length in bytes.
    pub length: u64,
    /// Local key.
    pub lkey: u32,
    /// Remote key (equal to lkey on mlx5: one mkey).
    pub rkey: u32,
    /// IB_ACCESS_* flags.
    pub access: u32,
}

impl Cq {
    /// Address of the 64-byte CQE at producer index `pi`.
    pub fn cqe64_at(&self, pi: u32) -> u64 {
        self.buf + u64::from(pi & (self.ncqe - 1)) * u64::from(self.cqe_size) + u64::from(self.cqe_size - 64)
    }
}

impl Mr {
    /// Whether `[addr, addr+len)` lies inside the region (mlx5 mkey range check).
    pub fn covers(&self, addr: u64, len: u64) -> bool {
        addr >= self.addr && len <= self.length && addr - self.addr <= self.length - len
    }
}

/// An indirect memory key in KSM mode (CREATE_MKEY, `access_mode` KSM): `[start, start+len)`
/// is cut into entities of `1 << log_entity` bytes, entity `i` standing for the same bytes at
/// `entries[i].1` under key `entries[i].0` (PRM "Indirect Memory Key (KSM)").
#[derive(Clone, Debug)]
pub struct Ksm {
    /// Owning PD number's handle.
    pub pd: u32,
    /// First address it covers.
    pub start: u64,
    /// Bytes covered.
    pub len: u64,
    /// log2 of the entity size.
    pub log_entity: u32,
    /// IB_ACCESS_* rights it grants (remote write, read, atomic).
    pub access: u32,
    /// Per entity: the key and address it translates to.
    pub entries: Vec<(u32, u64)>,
}

/// A memory window (ALLOC_MW). mlx5_ib `mlx5_ib_alloc_mw` (mr.c) makes it a free KLM mkey
/// with `umr_en`, local read, `qpn` 0xffffff and `en_rinval` for type 2; it is bound and
/// unbound by UMR work requests on a send queue of its PD (libmlx5 qp.c `set_bind_wr`), each
/// of which names the window by its current key and gives its next 8-bit tag.
#[derive(Clone, Debug)]
pub struct Mw {
    /// Owning PD handle.
    pub pd: u32,
    /// IB_MW_TYPE_1 or IB_MW_TYPE_2.
    pub mw_type: u8,
    /// The mkey: index << 8 | the tag of the last bind.
    pub key: u32,
    /// What it is bound to; None while free.
    pub bound: Option<MwBinding>,
}

/// A memory window's binding (the mkey context a bind's UMR wrote).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MwBinding {
    /// First address (the window is never zero-based: libmlx5 refuses IBV_ACCESS_ZERO_BASED).
    pub start: u64,
    /// Bytes.
    pub len: u64,
    /// IB_ACCESS_REMOTE_* rights it grants.
    pub access: u32,
    /// The one QP number whose incoming requests may use it, or 0xffffff for any QP of its PD
    /// (type 1, and every window libmlx5 binds with a zero length).
    pub qpn: u32,
    /// The key of the region it lies in (the KLM entry's mkey).
    pub mr_key: u32,
}

/// Completion queue.
#[derive(Debug)]
pub struct Cq {
    /// The user's handle (the ibv_cq pointer), returned in completion events.
    pub user_handle: u64,
    /// CQ number.
    pub cqn: u32,
    /// CQE ring.
    pub buf: u64,
    /// Doorbell record: [0] consumer index, [1] arm.
    pub db: u64,
    /// Ring size in CQEs (power of two).
    pub ncqe: u32,
    /// Bytes per CQE: 64, or 128 with the 64-byte CQE in the second half (libmlx5 reads
    /// `cqe + 64` then).
    pub cqe_size: u32,
    /// Producer index (the device's).
    pub pi: u32,
    /// Completion channel (the application's fd of the event file), when created on one.
    pub channel: Option<i32>,
    /// Armed: the sequence number of the arm request waiting for the next CQE.
    pub armed_sn: Option<u32>,
    /// The arm doorbell value last acted on.
    pub last_arm: Option<u32>,
    /// Set when the ring overflowed (CQ error event raised).
    pub overrun: bool,
}

/// Shared receive queue.
#[derive(Debug)]
pub struct Srq {
    /// The user's handle, returned in async events.
    pub user_handle: u64,
    /// SRQ number.
    pub srqn: u32,
    /// Owning PD handle.
    pub pd: u32,
    /// WQE ring.
    pub buf: u64,
    /// Doorbell record ([0] = counter of posted WQEs).
    pub db: u64,
    /// Number of WQEs (power of two).
    pub wqe_cnt: u32,
    /// log2 of the WQE stride.
    pub wqe_shift: u32,
    /// Index of the next WQE the device takes (follows next_wqe_index).
    pub head: u32,
    /// WQEs taken so far (compared with the doorbell counter).
    pub taken: u32,
    /// SRQ limit (armed when non-zero).
    pub limit: u32,
    /// User index (CQE v1).
    pub uidx: u32,
    /// Cyclic (an RMP with `wq_type` cyclic): WQEs are taken in ring order, not along
    /// `next_wqe_index`.
    pub cyclic: bool,
}

/// The kind of a queue pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpKind {
    /// Reliable connected.
    Rc,
    /// Unreliable connected: no acknowledgement, no retry, no reads or atomics (IBA 9.8.2).
    Uc,
    /// Unreliable datagram.
    Ud,
    /// DC initiator.
    Dci,
    /// DC target.
    Dct,
}

/// IB queue-pair states, with the uverbs numbering (enum ib_qp_state).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum QpState {
    /// RESET.
    Reset = 0,
    /// INIT.
    Init = 1,
    /// Ready to receive.
    Rtr = 2,
    /// Ready to send.
    Rts = 3,
    /// Send queue drained.
    Sqd = 4,
    /// Send queue error.
    Sqe = 5,
    /// Error.
    Err = 6,
}

impl QpState {
    /// From the uverbs value.
    pub fn from_u32(v: u32) -> Option<Self> {
        Some(match v {
            0 => Self::Reset,
            1 => Self::Init,
            2 => Self::Rtr,
            3 => Self::Rts,
            4 => Self::Sqd,
            5 => Self::Sqe,
            6 => Self::Err,
            _ => return None,
        })
    }
}

/// A path (address vector) as modify-QP gives it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Path {
    /// Destination LID.
    pub dlid: u16,
    /// GRH present.
    pub is_global: bool,
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Source GID index.
    pub sgid_index: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
    /// Service level (InfiniBand: LRH.SL; RoCE: the priority).
    pub sl: u8,
    /// Port.
    pub port: u8,
}

/// A work queue ring inside the QP buffer.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ring {
    /// Address of entry 0.
    pub base: u64,
    /// Entries (power of two, 0 when absent).
    pub cnt: u32,
    /// log2 of the entry size.
    pub shift: u32,
}

impl Ring {
    /// Address of entry `index` (wrapping).
    pub fn entry(&self, index: u32) -> u64 {
        self.base + (u64::from(index & (self.cnt - 1)) << self.shift)
    }
    /// First address past the ring.
    pub fn end(&self) -> u64 {
        self.base + (u64::from(self.cnt) << self.shift)
    }
}

/// Why the head of a send queue is waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stall {
    /// Receiver not ready: retry at the deadline, `left` retries remaining (7 = forever).
    Rnr {
        /// Retries left.
        left: u8,
    },
    /// No response (dropped packet): retry at the deadline, `left` retries remaining.
    Timeout {
        /// Retries left.
        left: u8,
    },
}

/// Queue pair (RC, UD, DCI) or DC target.
#[derive(Debug)]
pub struct Qp {
    /// The user's handle (async events).
    pub user_handle: u64,
    /// The blue-flame register mlx5_ib allocated to it (None: the library chose one, or a
    /// DCT), freed with the QP.
    pub bfregn: Option<u32>,
    /// QP number (for a DCT: the DCT number, assigned at RTR as mlx5_ib does).
    pub qpn: u32,
    /// Kind.
    pub kind: QpKind,
    /// Current state.
    pub state: QpState,
    /// PD handle.
    pub pd: u32,
    /// Send CQ handle.
    pub send_cq: Option<u32>,
    /// Receive CQ handle.
    pub recv_cq: Option<u32>,
    /// SRQ handle.
    pub srq: Option<u32>,
    /// User index (CQE v1).
    pub uidx: u32,
    /// Doorbell record ([0] RQ counter, [1] SQ counter).
    pub db: u64,
    /// Send ring (64-byte WQE basic blocks).
    pub sq: Ring,
    /// Receive ring.
    pub rq: Ring,
    /// Max inline data asked at create.
    pub max_inline_data: u32,
    /// Max send SGEs asked at create (mlx5_ib keeps it as sq.max_gs).
    pub max_send_sge: u32,
    /// Signal every WQE.
    pub sq_sig_all: bool,
    /// Port.
    pub port: u8,
    /// P_Key index.
    pub pkey_index: u16,
    /// IB_ACCESS_* remote access flags (responder).
    pub access: u32,
    /// Path MTU (enum ib_mtu).
    pub path_mtu: u32,
    /// Destination QP (RC).
    pub dest_qpn: u32,
    /// Primary path (RC; DCT: its responder path).
    pub path: Path,
    /// Minimum RNR NAK timer (responder, encoded).
    pub min_rnr_timer: u8,
    /// Local ACK timeout (encoded: 4.096 us * 2^timeout; 0 = infinite).
    pub timeout: u8,
    /// Transport retries.
    pub retry_cnt: u8,
    /// RNR retries (7 = infinite).
    pub rnr_retry: u8,
    /// Initiator depth.
    pub max_rd_atomic: u8,
    /// Responder resources.
    pub max_dest_rd_atomic: u8,
    /// Send PSN.
    pub sq_psn: u32,
    /// Receive PSN.
    pub rq_psn: u32,
    /// DC access key (DCT).
    pub dc_key: u64,
    /// Q_Key (UD).
    pub qkey: u32,
    /// DCI streams: (log_num_concurent, log_num_errored).
    pub dci_streams: Option<(u8, u8)>,
    /// Errored DCI stream channels (see [`Qp::stream_channel`]).
    pub errored_streams: Vec<u16>,
    /// SQ WQEBB counter consumed by the device: the oldest WQE not yet completed.
    pub sq_ci: u32,
    /// RQ WQEs consumed by the device.
    pub rq_ci: u32,
    /// SQ WQEBB counter past the last WQE the requester fetched.
    pub sq_fetched: u32,
    /// The send doorbell record as it was when the QP went to RESET, while software has not
    /// rung since (see [`Qp::sq_producer`]).
    pub sq_stale_record: Option<StaleRecord>,
    /// The WQEs fetched and not yet completed, in send-queue order (engine/requester.rs).
    pub outstanding: std::collections::VecDeque<crate::engine::requester::Outstanding>,
    /// Per channel (a DCI stream channel; 0 otherwise): the retry its head waits for.
    pub stalls: std::collections::BTreeMap<u16, (Stall, std::time::Instant)>,
    /// The requester's packet sequence state (engine/requester.rs).
    pub wire: Wire,
    /// The QP was created with MLX5_QP_FLAG_SIGNATURE (libmlx5: env MLX5_QP_SIGNATURE): mlx5_ib
    /// sets qpc.wq_signature and the HCA checks every send WQE's signature byte.
    pub wq_sig: bool,
    /// The BlueFlame register libmlx5 writes this QP's doorbells to (engine/bf.rs); None when
    /// the emulator does not know it (a library-chosen register, a DCT).
    pub bf: Option<BfReg>,
    /// DCT: requests that named this DCT with a wrong DC access key and were dropped (the PRM
    /// DCT context's `dc_access_key_violation_count`).
    pub dc_key_violations: u32,
    /// Out-of-order data placement (mlx5_ib sets `dp_ordering_1` in the QP or DCT context when
    /// the RESET->INIT modify carries `MLX5_IB_MODIFY_QP_OOO_DP`): a responder with it places
    /// the data of a write or send in any packet order (engine/responder.rs).
    pub ooo_dp: bool,
}

/// A BlueFlame register: its address in the mapped UAR page and the size of each of its two
/// halves (libmlx5 `bf->reg`, `bf->buf_size`; `bf->offset` toggles between the halves).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BfReg {
    /// Address of the register's first half.
    pub addr: u64,
    /// Bytes per half (bf_reg_size / 2).
    pub half: u32,
}

/// A requester's packet sequence numbering: per channel, consecutive numbers (kept across
/// retries) within one incarnation of the QP, so a responder tells a retry from a new request
/// and a request that overtook one still missing.
#[derive(Debug, Default)]
pub struct Wire {
    /// This incarnation of the QP (device-unique; 0 until the first request, renewed by RESET).
    pub epoch: u64,
    /// Per channel: the last sequence number used and the target it went to (a DCI starts a
    /// new connection when its target changes).
    pub channels: std::collections::BTreeMap<u16, (u64, Option<WireDest>)>,
}

/// Where a connection leads: (node, slot, QP or DCT number); this device's own targets are
/// (u32::MAX, 0, handle).
pub type WireDest = (u32, u32, u32);

/// Address handle created through the kernel (RoCE: mlx5_ib resolves the MAC).
#[derive(Clone, Copy, Debug)]
pub struct Ah {
    /// PD handle.
    pub pd: u32,
    /// The path.
    pub path: Path,
}

impl Qp {
    /// A fresh queue pair of `kind` in RESET with nothing set yet: as the firmware makes a
    /// DEVX QP, and the base the verbs path fills from its command.
    pub fn new(kind: QpKind, qpn: u32, pd: u32) -> Qp {
        Qp {
            bfregn: None,
            user_handle: 0,
            qpn,
            kind,
            state: QpState::Reset,
            pd,
            send_cq: None,
            recv_cq: None,
            srq: None,
            uidx: 0,
            db: 0,
            sq: Ring::default(),
            rq: Ring::default(),
            // The firmware keeps no such limits: the WQE's own length decides.
            max_inline_data: crate::profile::MAX_SQ_DESC_SZ,
            max_send_sge: crate::profile::MAX_SGE,
            sq_sig_all: false,
            port: 1,
            pkey_index: 0,
            access: 0,
            path_mtu: 0,
            dest_qpn: 0,
            path: Path::default(),
            min_rnr_timer: 0,
            timeout: 0,
            retry_cnt: 0,
            rnr_retry: 0,
            max_rd_atomic: 0,
            max_dest_rd_atomic: 0,
            sq_psn: 0,
            rq_psn: 0,
            dc_key: 0,
            qkey: 0,
            dci_streams: None,
            errored_streams: Vec::new(),
            // A DEVX QP asks for out-of-order placement in its own context (not modelled here).
            ooo_dp: false,
            sq_ci: 0,
            rq_ci: 0,
            sq_fetched: 0,
            sq_stale_record: None,
            outstanding: Default::default(),
            stalls: Default::default(),
            wire: Default::default(),
            wq_sig: false,
            bf: None,
            dc_key_violations: 0,
        }
    }

    /// The remote access this QP grants as a responder. On RC, mlx5_ib's
    /// `to_mlx5_access_flags` keeps only remote write in the QPC when max_dest_rd_atomic is 0:
    /// with no responder resources there is nowhere to hold a read or an atomic, so the HCA
    /// answers them as operations the QP does not enable. A DCT's rre/rwe/rae come from its
    /// access flags alone (mlx5_ib create_dct), so it keeps them.
    pub fn responder_access(&self) -> u32 {
        use crate::engine::responder::ACCESS_REMOTE_WRITE;
        if self.kind == QpKind::Rc && self.max_dest_rd_atomic == 0 {
            self.access & ACCESS_REMOTE_WRITE
        } else {
            self.access
        }
    }

    /// The stream channel a DCI stream id selects: one of the 2^log_num_concurent channels the
    /// DCI was created with, the id taken modulo their number. rdma-core's own stream tests
    /// (tests/mlx5_base.py `generate_stream_id`) post on ids up to 2^log_num_concurent + 2 and
    /// reset errors on them, which hardware accepts; None for a DCI without streams.
    pub fn stream_channel(&self, stream: u16) -> Option<u16> {
        self.dci_streams.map(|(log_c, _)| stream & ((1u16 << log_c) - 1))
    }

    /// The in-order channel a WQE of `stream` travels on: its DCI stream channel, or the one
    /// channel of a QP without streams.
    pub fn channel(&self, stream: u16) -> u16 {
        self.stream_channel(stream).unwrap_or(0)
    }

    /// The DCT context's `dc_access_key_violation_count` (what a DEVX QUERY_DCT reports):
    /// requests dropped because they carried a wrong DC access key.
    pub fn dc_access_key_violation_count(&self) -> u32 {
        self.dc_key_violations
    }

    /// The send producer counter the device acts on, given the doorbell record's 16 bits.
    /// To RESET the HCA forgets the send queue (its producer is 0 in the QP context, PRM
    /// "QP context" `sq_wqe_counter`) and reads the record again only when software rings
    /// the next doorbell, having written the record first (libmlx5 zeroes it after
    /// MODIFY_QP(RESET); UCX `uct_ib_mlx5_txwq_reset` zeroes only its own counter and leaves
    /// the old value there until its next post). So a record still holding the value it had
    /// at RESET says nothing by itself: the device's queue is what it fetched, unless the
    /// ring shows the post that brought the record back to that value
    /// ([`StaleRecord::reposted`]: software posted exactly as many basic blocks as before the
    /// reset and the device saw none of the values in between, as when one doorbell rings a
    /// batch).
    pub fn sq_producer(&self, dma: &dyn crate::mem::Dma, record: u32) -> u32 {
        match self.sq_stale_record {
            Some(stale) if stale.value == record && !stale.reposted(dma, &self.sq, self.qpn) => {
                self.sq_fetched & 0xffff
            }
            _ => record,
        }
    }

    /// Forgets the send queue's progress (to RESET: libmlx5 restarts its counters too).
    pub fn reset_send_queue(&mut self) {
        self.sq_ci = 0;
        self.sq_fetched = 0;
        self.outstanding.clear();
        self.stalls.clear();
        self.wire = Wire::default();
    }
}

/// The send doorbell record a QP had at RESET, kept while software has not visibly rung since
/// ([`Qp::sq_producer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaleRecord {
    /// The record's 16 bits at RESET.
    pub value: u32,
    /// A digest of the ring's first `value` basic blocks at RESET (what software posted
    /// before it), or None when `value` exceeds the ring: software then cannot bring the
    /// record back to it without the device seeing it move (it would have to post more than
    /// the ring holds with nothing completed).
    pub ring: Option<u64>,
}

impl StaleRecord {
    /// The record of send ring `sq` at RESET, `value`, with the ring's content then.
    pub fn at_reset(dma: &dyn crate::mem::Dma, sq: &Ring, value: u32) -> StaleRecord {
        let ring = (value <= sq.cnt).then(|| crate::engine::wqe::ring_digest(dma, sq, value));
        StaleRecord { value, ring }
    }

    /// Whether the record, back at `value`, is a post made since RESET: the ring holds, from
    /// basic block 0 (where both sides restart) to exactly `value`, a chain of WQEs naming QP
    /// `qpn` each with the index of its slot, and the ring is not what it was at RESET.
    /// Software writes a WQE's control segment's index and size last (libmlx5
    /// `_mlx5_post_send`, UCX `uct_rc_mlx5_common_post_send`) and the record after every WQE
    /// it covers, so such a chain is a finished post; a ring left as it was (nothing posted)
    /// or zeroed and partly rewritten (UCX's reset, a post under way) is not.
    pub fn reposted(&self, dma: &dyn crate::mem::Dma, sq: &Ring, qpn: u32) -> bool {
        let Some(digest) = self.ring else {
            return false;
        };
        crate::engine::wqe::chain_reaches(dma, sq, qpn, self.value)
            && crate::engine::wqe::ring_digest(dma, sq, self.value) != digest
    }
}
