//! The S3 executor against N rotating clients (scripts/scale): what one server costs as the
//! number of clients it serves grows, and how its DCIs are shared.
//!
//!   s3_scale node --clients N [--transfers T] [--in-flight F] [--bytes B] [--keep-idle K]
//!                 [--max-endpoints E] [--proven-idle-ms M] [--hosts H]
//!
//! Runs under `scripts/soft-mlx5-nodes K+1` (or on K+1 hosts with a shared directory as
//! `SOFT_MLX5_RENDEZVOUS`): node 0 is the server, nodes 1..K hold the clients, client j on node
//! 1 + j % K. On RoCE with `--hosts H` (the emulator's `--hosts H`: each node's port has H
//! addresses, GID indexes 1..=H) a holder's clients are spread over its H addresses, k-th
//! client on GID index 1 + k % H, so that K holders stand for K x H hosts, each a path (an
//! address handle) of its own at the server. A client is what a real one costs its server, not its host: a DCT of its own
//! (all of a node's DCTs share one CQ and SRQ, as receive-less targets may) and B bytes of one
//! registered region behind it, described by a GET token. Each holder publishes its tokens,
//! waits for the server to finish, then checks every byte the server wrote into its clients'
//! buffers.
//!
//! The server (the sync `Executor`, its defaults but for `--keep-idle`, `--max-endpoints` and
//! `--proven-idle-ms`) runs
//! two phases, F transfers in flight at once, each a B-byte GET from one object's region:
//! - A: first contact with each client, in order (min(N, T) transfers);
//! - B: T more, round robin over all N (client (A + t) mod N): past `keep_idle` clients a
//!   returning client's endpoint was released; its standing is remembered, so it comes back
//!   on the main DCIs if it answered within `proven_idle` (2 s by default: a round longer
//!   than that brings it back on probation, as a proof is not banked).
//!
//! Prints per phase: transfers, latency (median, 99th percentile, from submit to `Done`, wall
//! time of the emulator, not of silicon), the executor's counters, requests per DCI (main and
//! probation) against the fair share, and the server's memory (VmRSS, VmHWM). Phase B runs
//! inside [`phase_b`] (never inlined) so that callgrind's `--toggle-collect` counts it alone.

#[path = "common/s3.rs"]
mod common;

use mlx5dv::s3::{Direction, Done, Executor, ExecutorConfig, ExecutorStats, RdmaToken, TokenSpelling};
use mlx5dv::{Access, DctBuilder, Mr};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

type Failure = Box<dyn std::error::Error + Send + Sync>;

const KEY: mlx5dv::DcKey = mlx5dv::s3::REFERENCE_DC_KEY;

#[derive(Clone, Copy, Debug)]
struct Args {
    clients: usize,
    transfers: usize,
    in_flight: usize,
    bytes: usize,
    keep_idle: Option<usize>,
    max_endpoints: Option<usize>,
    hosts: usize,
    proven_idle_ms: Option<usize>,
}

fn args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    if it.next().as_deref() != Some("node") {
        return Err(
            "usage: s3_scale node --clients N [--transfers T] [--in-flight F] [--bytes B] \
                    [--keep-idle K] [--max-endpoints E] [--proven-idle-ms M] [--hosts H] \
                    (under scripts/soft-mlx5-nodes)"
                .into(),
        );
    }
    let mut a = Args {
        clients: 16,
        transfers: 1000,
        in_flight: 32,
        bytes: 64,
        keep_idle: None,
        max_endpoints: None,
        hosts: 1,
        proven_idle_ms: None,
    };
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let n: usize = value.parse().map_err(|e| format!("{flag} {value}: {e}"))?;
        match flag.as_str() {
            "--clients" => a.clients = n,
            "--transfers" => a.transfers = n,
            "--in-flight" => a.in_flight = n,
            "--bytes" => a.bytes = n,
            "--keep-idle" => a.keep_idle = Some(n),
            "--max-endpoints" => a.max_endpoints = Some(n),
            "--hosts" => a.hosts = n,
            "--proven-idle-ms" => a.proven_idle_ms = Some(n),
            other => return Err(format!("unknown option {other}")),
        }
    }
    if a.clients == 0 || a.bytes == 0 || a.in_flight == 0 || a.hosts == 0 || a.hosts > 255 {
        return Err("--clients, --bytes and --in-flight must be at least 1, --hosts 1..255".into());
    }
    Ok(a)
}

fn main() -> Result<(), Failure> {
    let a = args()?;
    let index: usize = std::env::var("SOFT_MLX5_NODE_INDEX")?.parse()?;
    let nodes: usize = std::env::var("SOFT_MLX5_NODES")?.parse()?;
    let dir = PathBuf::from(std::env::var_os("SOFT_MLX5_RENDEZVOUS").ok_or("runs under scripts/soft-mlx5-nodes")?);
    if nodes < 2 {
        return Err("needs a server node and at least one client node".into());
    }
    if index == 0 {
        serve(&a, &dir, nodes - 1)
    } else {
        hold(&a, &dir, index, nodes - 1)
    }
}

/// The byte the server's object holds at `i` (the clients check it).
fn object_byte(i: usize) -> u8 {
    (i as u8).wrapping_mul(31).wrapping_add(7)
}

/// A client node: its share of the N clients, each a DCT with B bytes behind it.
fn hold(a: &Args, dir: &Path, index: usize, holders: usize) -> Result<(), Failure> {
    let mine: Vec<usize> = (0..a.clients).filter(|j| j % holders == index - 1).collect();
    let ctx = mlx5dv::open_device_from_env()?;
    let (mlx5, pd) = (ctx.mlx5()?, ctx.alloc_pd()?);
    let port = ctx.query_port(1)?;
    // The port's addresses the clients are spread over: its RoCE v2 GID, or with --hosts H
    // indexes 1..=H (InfiniBand: none, the LID).
    let gid_indexes: Vec<Option<u8>> = if !port.is_ethernet() {
        vec![None]
    } else if a.hosts > 1 {
        (1..=a.hosts as u8).map(Some).collect()
    } else {
        vec![Some(
            ctx.roce_v2_gid_index(1)?.ok_or("the RoCE port has no RoCE v2 GID")?,
        )]
    };
    let cq = ctx.create_cq(1)?;
    let srq = pd.create_srq(1, 1)?;
    let access = Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ;
    let region = pd.register(vec![0u8; mine.len().max(1) * a.bytes], access)?;
    let remote = region.remote().ok_or("the region allows remote access")?;
    let start = Instant::now();
    let mut dcts = Vec::with_capacity(mine.len());
    let mut lines = String::new();
    for (k, _) in mine.iter().enumerate() {
        let gid_index = gid_indexes[k % gid_indexes.len()];
        let dct = DctBuilder::new(&mlx5, &pd, &cq, &srq, KEY)
            .access(access)
            .gid_index(gid_index)
            .build()?;
        let addr = dct.target_addr()?;
        let token = RdmaToken {
            addr: remote.addr + (k * a.bytes) as u64,
            len: a.bytes as u32,
            rkey: remote.rkey,
            lid: addr.lid,
            dct_number: dct.dct_number(),
            gid: gid_index.map(|_| addr.gid),
            spelling: TokenSpelling::default(),
        };
        lines.push_str(&token.format()?);
        lines.push('\n');
        dcts.push(dct);
    }
    let made = start.elapsed();
    common::publish(&dir.join(format!("tokens-{index}")), &lines)?;
    println!(
        "holder {index}: {} clients (DCTs) on {} addresses made in {:.2} s; {}",
        mine.len(),
        gid_indexes.len().min(mine.len()),
        made.as_secs_f64(),
        memory()
    );
    common::wait_for(&dir.join("done"), Duration::from_secs(24 * 3600))?;
    // Every buffer the server wrote holds the object's bytes; one it never reached, zeros.
    let mut bytes = vec![0u8; a.bytes];
    let mut written = 0;
    for (k, client) in mine.iter().enumerate() {
        region.read(k * a.bytes, &mut bytes)?;
        if bytes.iter().enumerate().all(|(i, &b)| b == object_byte(i)) {
            written += 1;
        } else if bytes.iter().any(|&b| b != 0) {
            return Err(format!("holder {index}: client {client} holds bytes the server never sent").into());
        }
    }
    println!(
        "holder {index}: {written} of {} buffers written, every byte right",
        mine.len()
    );
    Ok(())
}

/// The server: reads every holder's tokens, then runs phase A and phase B.
fn serve(a: &Args, dir: &Path, holders: usize) -> Result<(), Failure> {
    let mut tokens: Vec<Option<RdmaToken>> = vec![None; a.clients];
    for h in 1..=holders {
        let text = common::wait_for(&dir.join(format!("tokens-{h}")), Duration::from_secs(3600))?;
        let mine = (0..a.clients).filter(|j| j % holders == h - 1);
        for (j, line) in mine.zip(text.lines()) {
            tokens[j] = Some(RdmaToken::parse(line)?);
        }
    }
    let tokens: Vec<RdmaToken> = tokens
        .into_iter()
        .enumerate()
        .map(|(j, t)| t.ok_or(format!("no token for client {j}")))
        .collect::<Result<_, _>>()?;
    let ctx = mlx5dv::open_device_from_env()?;
    let (mlx5, pd) = (ctx.mlx5()?, ctx.alloc_pd()?);
    let mut cfg = ExecutorConfig {
        key: KEY,
        ..ExecutorConfig::default()
    };
    if let Some(k) = a.keep_idle {
        cfg.keep_idle = k;
    }
    if let Some(e) = a.max_endpoints {
        cfg.pool.max_endpoints = e;
    }
    if let Some(ms) = a.proven_idle_ms {
        cfg.proven_idle = Duration::from_millis(ms as u64);
    }
    // Hosts: the distinct addresses (LIDs, GIDs) the clients' tokens name.
    let hosts = tokens
        .iter()
        .map(|t| (t.lid, t.gid))
        .collect::<std::collections::HashSet<_>>()
        .len();
    println!(
        "server: {} clients on {hosts} hosts ({holders} nodes), {} DCIs + {} probation, keep_idle {}, max_endpoints {}, \
         proven_idle {} ms, remembered_clients {}; {}",
        a.clients,
        cfg.pool.dcis,
        cfg.pool.probation.map_or(0, |p| p.dcis),
        cfg.keep_idle,
        cfg.pool.max_endpoints,
        cfg.proven_idle.as_millis(),
        cfg.remembered_clients,
        memory()
    );
    let cq = ctx.create_cq_with_channel(cfg.cq_size())?;
    let mut exec = Executor::new(&mlx5, &pd, cq, cfg)?;
    let object: Vec<u8> = (0..a.bytes).map(object_byte).collect();
    let object = pd.register(object, Access::LOCAL_WRITE)?;
    let first = a.clients.min(a.transfers);
    let mut run = Run {
        exec: &mut exec,
        tokens: &tokens,
        object: &object,
        in_flight: a.in_flight,
        latencies: Vec::new(),
        refused: 0,
        sleeps: 0,
    };
    run.phase("A (first contact)", 0, first, Run::go)?;
    run.phase("B (round robin)", first, a.transfers, phase_b)?;
    common::publish(&dir.join("done"), "done")?;
    Ok(())
}

/// Phase B's transfers, apart so that callgrind can count them alone
/// (`--toggle-collect=s3_scale::phase_b`).
#[inline(never)]
fn phase_b(run: &mut Run<'_>, from: usize, count: usize) -> Result<(), Failure> {
    run.go(from, count)
}

struct Run<'a> {
    exec: &'a mut Executor,
    tokens: &'a [RdmaToken],
    object: &'a Mr<Vec<u8>>,
    in_flight: usize,
    latencies: Vec<Duration>,
    refused: u64,
    /// Sleeps on the completion channel.
    sleeps: u64,
}

impl Run<'_> {
    /// Runs `count` transfers through `f`, then prints what they did.
    fn phase(
        &mut self,
        name: &str,
        from: usize,
        count: usize,
        f: fn(&mut Self, usize, usize) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        let before = self.exec.stats();
        let posted: Vec<u64> = self.exec.pool().posted_per_dci().map(|(_, n)| n).collect();
        self.latencies.clear();
        self.refused = 0;
        self.sleeps = 0;
        let start = Instant::now();
        f(self, from, count)?;
        let took = start.elapsed();
        let after = self.exec.stats();
        let mut lat = std::mem::take(&mut self.latencies);
        lat.sort_unstable();
        let pct = |p: usize| lat.get((lat.len() * p / 100).min(lat.len().saturating_sub(1))).copied();
        let us = |d: Option<Duration>| d.map_or(0.0, |d| d.as_secs_f64() * 1e6);
        let (mut main, mut probation) = (Vec::new(), Vec::new());
        for ((is_probation, n), was) in self.exec.pool().posted_per_dci().zip(posted) {
            if is_probation {
                probation.push(n - was);
            } else {
                main.push(n - was);
            }
        }
        // Within each class of DCI (main, probation), the busiest DCI against an even share of
        // the class's requests: a transfer may go on any DCI of its client's class and on no
        // other, so an idle class says nothing of how the other shares its DCIs. (Over every
        // DCI, the idle probation DCIs of a phase of proven clients alone would make an even
        // spread over the main ones read (main + probation) / main times its share.)
        let share = |v: &[u64]| {
            let total: u64 = v.iter().sum();
            let fair = total as f64 / v.len().max(1) as f64;
            if fair > 0.0 {
                v.iter().copied().max().unwrap_or(0) as f64 / fair
            } else {
                0.0
            }
        };
        let (share_main, share_probation) = (share(&main), share(&probation));
        println!(
            "phase {name}: {count} transfers in {:.2} s, latency median {:.0} us, p99 {:.0} us; refused for room {}, {} sleeps; \
             {}; {} remembered; requests per DCI: main {main:?}, probation {probation:?} (the busiest {share_main:.2}x \
             an even share of the main DCIs' requests, {share_probation:.2}x of the probation DCIs'); {}",
            took.as_secs_f64(),
            us(pct(50)),
            us(pct(99)),
            self.refused,
            self.sleeps,
            delta(&before, &after),
            self.exec.remembered(),
            memory()
        );
        Ok(())
    }

    /// Transfers `from..from + count` (client `t mod N` for transfer t), `in_flight` at once;
    /// a submission refused for room (EBUSY, EAGAIN) is made again once one finishes.
    fn go(&mut self, from: usize, count: usize) -> Result<(), Failure> {
        let n = self.tokens.len();
        let len = self.object.len();
        let mut waiting: VecDeque<usize> = (from..from + count).collect();
        let mut started: Vec<Option<Instant>> = vec![None; count];
        let (mut running, mut finished) = (0usize, 0usize);
        let mut out = vec![Done::default(); 64];
        while finished < count {
            while running < self.in_flight {
                let Some(t) = waiting.pop_front() else { break };
                let token = &self.tokens[t % n];
                match self
                    .exec
                    .submit_region(t as u64, token, 0, Direction::Get, self.object, 0, len)
                {
                    Ok(()) => {
                        started[t - from] = Some(Instant::now());
                        running += 1;
                    }
                    Err(e) if matches!(e.errno(), Some(libc::EBUSY | libc::EAGAIN)) => {
                        self.refused += 1;
                        waiting.push_front(t);
                        break;
                    }
                    Err(e) => return Err(format!("transfer {t} (client {}): {e}", t % n).into()),
                }
            }
            let mut got = self.exec.poll(&mut out)?;
            if got == 0 {
                // Nothing came: sleep on the CQ's completion channel (armed, then polled once
                // more: a completion before the arm is found by that poll), so that the count
                // holds the transfers' work and not a busy loop's. At most 1 ms: on RoCE a new
                // path's address handle is made on the executor's thread, which no completion
                // announces.
                self.exec.pool().cq().req_notify(false)?;
                got = self.exec.poll(&mut out)?;
                if got == 0 {
                    self.exec.pool().cq().wait(Some(Duration::from_millis(1)))?;
                    self.sleeps += 1;
                    continue;
                }
            }
            for d in &out[..got] {
                let t = d.id as usize;
                if !d.is_ok() {
                    return Err(format!("transfer {t} (client {}) failed: {d:?}", t % n).into());
                }
                if let Some(s) = started[t - from].take() {
                    self.latencies.push(s.elapsed());
                }
                running -= 1;
                finished += 1;
            }
        }
        Ok(())
    }
}

/// What the executor's counters moved by in a phase.
fn delta(b: &ExecutorStats, a: &ExecutorStats) -> String {
    format!(
        "executor: {} messages, {} released, {} recalled, {} proven, {} demoted, {} unproven refused",
        a.messages - b.messages,
        a.released - b.released,
        a.recalled - b.recalled,
        a.proven - b.proven,
        a.demoted - b.demoted,
        a.unproven_refused - b.unproven_refused
    )
}

/// This process's resident memory now and at its peak (Linux /proc/self/status).
fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or("?")
            .to_string()
    };
    format!("VmRSS {} kB, VmHWM {} kB", field("VmRSS:"), field("VmHWM:"))
}
