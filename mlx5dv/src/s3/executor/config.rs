//! What an [`Executor`] is built with: [`ExecutorConfig`].

use super::*;

/// How an [`Executor`] is built.
#[derive(Copy, Clone, Debug)]
pub struct ExecutorConfig {
    /// The DCI pool: DCIs, assignment policy, queue depth, port, backend. Its `max_endpoints`
    /// bounds the clients reached at once (idle ones kept included). Its `probation` (which
    /// [`Executor::new`] requires) sizes the first-contact DCIs: `dcis` of them (2 by
    /// default) for clients that have not answered yet, with their own ACK timeout and
    /// retries (`rts`: 16.8 ms x 4 tries by default). Its
    /// `rts.max_rd_atomic` (RDMA reads in flight per DCI: 16 by default here, so that PUTs
    /// pipeline) is lowered to the device's DC requester limit where that is smaller (to 1
    /// where the library cannot read the limit).
    pub pool: PoolConfig,
    /// The DC key the clients' DCTs expect: the application's secret
    /// ([`crate::s3::REFERENCE_DC_KEY`] to talk to the reference implementations).
    pub key: DcKey,
    /// On RoCE, the local GID index to send from; None: the port's first RoCE v2 GID. Unused
    /// on InfiniBand.
    pub gid_index: Option<u8>,
    /// The largest message posted: a longer transfer is split. None: the port's
    /// `max_msg_sz`.
    pub max_message: Option<u32>,
    /// Transfers accepted at once (the table is allocated at creation).
    pub max_transfers: usize,
    /// Idle clients whose endpoint is kept for their next transfer (a cache: a client whose
    /// endpoint was released keeps its standing, [`ExecutorConfig::remembered_clients`]).
    pub keep_idle: usize,
    /// How long a client stays proven after it last answered (its last transfer finished):
    /// one that comes back later, kept idle or remembered, goes back on probation until a
    /// message of it completes again (a proof is not banked: see the [`Executor`]
    /// documentation). The standing table honours up to 2^30 ms (12 days).
    pub proven_idle: Duration,
    /// Clients whose standing is remembered once their endpoint is released (whether they
    /// answered within `proven_idle` and their last transfer did not time out), so that a
    /// returning proven client gets its new endpoint on the proven DCIs, not on probation.
    /// Only clients that answered take an entry. The table grows with use to at most this
    /// many (rounded down: half to each of two generations, each 7/8 of a power of two),
    /// 29 bytes an entry with the map's control byte, 33 to 66 bytes a remembered client:
    /// the default 2^20 remembers up to 917,504 clients in at most 30 MiB. An entry is
    /// forgotten when its generation goes: once the newer one has `proven_idle` of age (its
    /// entries are stale then), or holds half the entries; so a client that proves new DCTs
    /// evicts another client's standing only by proving half this many of them (each a first
    /// contact on the probation DCIs, within `unproven_transfers` and its tenant's
    /// `tenant_unproven`) between that client's answers. 0: nothing is remembered (a
    /// released client starts on probation again).
    pub remembered_clients: usize,
    /// Address handles no client uses any more kept for the next client behind the same
    /// path (a host: its LID, or its GID on RoCE, where making one asks the kernel to resolve
    /// the neighbour), least recently used first out. Default 4,096 (an address handle is
    /// about a hundred bytes in libmlx5, plus the kernel's on RoCE).
    pub kept_address_handles: usize,
    /// Transfers of clients on probation (none of their messages completed yet) accepted at
    /// once, 1 to `max_transfers`: the rest of the table stays for proven clients (see the
    /// [`Executor`] documentation).
    pub unproven_transfers: usize,
    /// Transfers of one [`Tenant`](super::Tenant) (not the default one) not yet finished at
    /// once: past it the tenant's submits are refused with EBUSY (HTTP 503 Slow Down), so no
    /// tenant fills the transfer table. Default: `max_transfers / 8` (32).
    pub tenant_transfers: usize,
    /// Transfers of one tenant's clients on probation running at once (not the default
    /// tenant's): past it its strangers are refused with EBUSY, so that no tenant takes
    /// every place of `unproven_transfers`. Default: `unproven_transfers / 8` (8).
    pub tenant_unproven: usize,
    /// Messages of one tenant (not the default one) outstanding at once in a class of DCI
    /// (probation, proven): past it its transfers wait in its queue, so that it holds at
    /// most that many places in the DCIs' send queues, where under `Rand` and `Streams` a
    /// request waits behind those posted before it on its DCI (or stream). The default
    /// tenant's are bounded so (by the class's DCIs) only while other tenants wait. Default:
    /// 4.
    pub tenant_inflight: usize,
    /// The bytes a tenant may post in its turn on a class of DCI (deficit round robin: see
    /// the [`Executor`] documentation); a message costs its length, at least one quantum, so
    /// by default each tenant posts one message of up to 64 KiB a turn, and a longer one
    /// costs it turns in proportion. Default: 64 KiB.
    pub tenant_quantum: u64,
    /// The requests' SL, traffic class, hop limit, flow label and the DCIs' P_Key index
    /// (which replaces `pool.pkey_index`: leave that 0).
    pub path: PathSettings,
}

impl Default for ExecutorConfig {
    /// The pool's defaults with 16 reads in flight per DCI and 8 probation DCIs (ACK timeout
    /// 12: 16.8 ms, 3 retries), the reference's key, the port's message limit, 256 transfers
    /// at once of which 64 of clients on probation, 64 idle clients kept, proven for 2 s,
    /// 2^20 clients' standing remembered, 4,096 unused address handles kept; a
    /// tenant has at most 32 transfers, 8 of them on probation, 4 messages outstanding in a
    /// class of DCI, and posts 64 KiB a turn.
    fn default() -> Self {
        let mut pool = PoolConfig::default();
        pool.rts.max_rd_atomic = 16;
        // 8 (was 2): a first contact waits for a free probation DCI, which a dead DCT holds for
        // its whole retry time (67 ms). scripts/attack (1,000 attackers a class, 50 forged
        // tokens a second; cx5-ib, Dcs): honest new clients' median 14.9x, p99 27.9x, GETs
        // completed 0.08x of their unattacked figures with 2; 0.99x, 0.89x, 1.01x with 8.
        pool.probation = Some(Probation {
            dcis: 8,
            rts: RtsAttr {
                timeout: 12,
                retry_cnt: 3,
                ..pool.rts
            },
        });
        ExecutorConfig {
            pool,
            key: crate::s3::REFERENCE_DC_KEY,
            gid_index: None,
            max_message: None,
            max_transfers: 256,
            keep_idle: 64,
            proven_idle: Duration::from_secs(2),
            remembered_clients: 1 << 20,
            kept_address_handles: 4096,
            unproven_transfers: 64,
            tenant_transfers: 32,
            tenant_unproven: 8,
            tenant_inflight: 4,
            tenant_quantum: 64 << 10,
            path: PathSettings::default(),
        }
    }
}

impl ExecutorConfig {
    /// The completions the executor's CQ must hold: a request of every DCI's send queue,
    /// probation DCIs included (`(pool.dcis + pool.probation.dcis) x pool.max_send_wr`; the
    /// library may round the queues up, which [`Executor::new`] checks), plus one.
    pub fn cq_size(&self) -> u32 {
        let dcis = self.pool.dcis + self.pool.probation.map_or(0, |p| p.dcis);
        u32::try_from(dcis)
            .unwrap_or(u32::MAX)
            .saturating_mul(self.pool.max_send_wr)
            .saturating_add(1)
    }
}
