//! S3 over RDMA in front of strangers, on one emulated node (scripts/soft-mlx5): seeded random
//! sequences of honest transfers among forged tokens (DCT numbers nobody serves, a wrong DC
//! key, rkeys nobody registered, ranges past a registration, the wrong direction), malformed
//! tokens, revocations under running transfers, clients that die with transfers running, and
//! releases of idle clients, against one executor. After every step and at the end:
//! - every accepted transfer is reported exactly once, and none that was refused;
//! - an honest transfer (its token neither revoked nor its client killed under it) succeeds
//!   with every byte right, and a forged one fails without changing a byte it should not;
//! - the executor's tables stay bounded, and hold nothing once everything is released;
//! - no panic, no hang (every sequence drains within a deadline).
//!
//! Odd seeds give the honest clients memory-window tokens, even ones registrations.
//!
//! `S3_HOSTILE_SEQUENCES` (default 6), `S3_HOSTILE_OPS` (operations per sequence, default
//! 400) and `S3_HOSTILE_SEED` (the first sequence's seed, default 1) set the run; it prints
//! how many sequences, operations and transfers of each kind it ran.

use mlx5dv::s3::{Client, ClientConfig, Direction, Done, Executor, ExecutorConfig, Exposed, RdmaToken, TokenId};
use mlx5dv::{Access, DcKey, Mr, WcStatus};
use mlx5dv_suite::device::{open, pool_cq, test_backend};
use mlx5dv_suite::{s3_pattern, Rng};
use std::collections::HashMap;
use std::time::{Duration, Instant};

const KEY: DcKey = DcKey::new(0x4853_5449_4c45_0001);
/// A client's buffer is cut in regions; a region serves one transfer at a time.
const REGIONS: usize = 8;
const REGION: usize = 8 << 10;
/// Honest clients at any time.
const CLIENTS: usize = 6;
/// Server-side landing slots for PUTs (one region each).
const SLOTS: usize = 48;
/// The server's object, the source of every GET.
const OBJECT: usize = 64 << 10;
const MAX_TRANSFERS: usize = 48;
const KEEP_IDLE: usize = 4;
/// Address handles kept with no client, and clients' standing remembered apart from their
/// endpoints: small, so that the bounds are reached.
const KEPT_AHS: usize = 2;
const REMEMBERED: usize = 16;

/// 1..=n from `rng`.
fn one_to(rng: &mut Rng, n: usize) -> usize {
    1 + rng.below(n)
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

struct Honest {
    /// The DCT: kept alive with the buffer.
    _client: Client,
    buf: Exposed<Vec<u8>>,
    /// Which transfer holds each region.
    busy: [Option<u64>; REGIONS],
    generation: u32,
}

/// What a reported transfer must have done.
#[derive(Debug, Clone)]
enum Expect {
    /// Honest: succeeds; a GET leaves `object[obj..obj + len]` at the client's `at`; a PUT
    /// leaves the client's `pattern[offset..offset + len]` in landing slot `slot`.
    Honest {
        client: usize,
        generation: u32,
        region: usize,
        token: TokenId,
        dir: Direction,
        len: usize,
        offset: usize,
        obj: usize,
        slot: usize,
        pattern: u64,
    },
    /// Its token was revoked, or its client killed, while it ran: any outcome, once.
    Tainted {
        client: usize,
        generation: u32,
        region: Option<usize>,
        slot: Option<usize>,
    },
    /// Forged: fails with one of `fails`; `guard` (client, generation, region, token, bytes
    /// before) must be unchanged afterwards.
    Forged {
        kind: &'static str,
        fails: &'static [WcStatus],
        /// The honest client whose path it names, if any: a death widens `fails`.
        names: Option<usize>,
        guard: Option<(usize, u32, usize, TokenId, Vec<u8>)>,
    },
}

#[derive(Default, Debug)]
struct Figures {
    sequences: u64,
    operations: u64,
    honest_ok: u64,
    forged_failed: u64,
    tainted: u64,
    refused_at_submit: u64,
    backpressure: u64,
    revoked_under_transfer: u64,
    killed: u64,
    released: u64,
}

struct Run<'a> {
    mlx5: &'a mlx5dv::Mlx5Context,
    pd: &'a mlx5dv::Pd,
    rng: Rng,
    exec: Executor,
    object: Mr<Vec<u8>>,
    landing: Mr<Vec<u8>>,
    /// Forged PUTs land here (never checked).
    junk: Mr<Vec<u8>>,
    slots: [bool; SLOTS],
    honest: Vec<Option<Honest>>,
    generations: u32,
    /// The honest clients' tokens are memory windows (odd seeds) or registrations.
    windows: bool,
    wrong_key: (Client, Exposed<Vec<u8>>),
    running: HashMap<u64, Expect>,
    next_id: u64,
    fig: Figures,
}

impl<'a> Run<'a> {
    fn new(node: &'a (mlx5dv::Context, mlx5dv::Mlx5Context, mlx5dv::Pd), seed: u64) -> Run<'a> {
        let (ctx, mlx5, pd) = node;
        let mut cfg = ExecutorConfig {
            key: KEY,
            max_transfers: MAX_TRANSFERS,
            keep_idle: KEEP_IDLE,
            kept_address_handles: KEPT_AHS,
            remembered_clients: REMEMBERED,
            ..ExecutorConfig::default()
        };
        cfg.pool.backend = test_backend();
        // A dead or wrong-keyed client fails in about 13 ms (4.2 ms x 3 tries), proven or not.
        cfg.pool.rts.timeout = 10;
        cfg.pool.rts.retry_cnt = 2;
        if let Some(p) = &mut cfg.pool.probation {
            p.rts.timeout = 10;
            p.rts.retry_cnt = 2;
        }
        let cqe = cfg.cq_size();
        let mut exec = Executor::new(mlx5, pd, pool_cq(ctx, cqe), cfg).expect("executor");
        let reg = |v: Vec<u8>| pd.register(v, Access::LOCAL_WRITE).expect("register");
        let object = reg(s3_pattern(OBJECT, 77));
        let landing = reg(vec![0u8; SLOTS * REGION]);
        let junk = reg(vec![0u8; REGION]);
        for m in [&object, &landing, &junk] {
            exec.hold(m).expect("hold");
        }
        let wrong = Client::new(mlx5, pd, DcKey::new(0xbad), ClientConfig::default()).expect("client");
        let wrong_buf = wrong.expose(reg(vec![0u8; REGION])).expect("expose");
        let mut run = Run {
            mlx5,
            pd,
            rng: Rng(0x9e37_79b9_7f4a_7c15 ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d)),
            exec,
            object,
            landing,
            junk,
            slots: [false; SLOTS],
            honest: Vec::new(),
            generations: 0,
            windows: seed % 2 == 1,
            wrong_key: (wrong, wrong_buf),
            running: HashMap::new(),
            next_id: 0,
            fig: Figures::default(),
        };
        for _ in 0..CLIENTS {
            let c = run.new_client();
            run.honest.push(Some(c));
        }
        run
    }

    fn new_client(&mut self) -> Honest {
        self.generations += 1;
        let cfg = ClientConfig {
            windows: self.windows,
            ..ClientConfig::default()
        };
        let client = Client::new(self.mlx5, self.pd, KEY, cfg).expect("client DCT");
        let mr = self
            .pd
            .register(vec![0u8; REGIONS * REGION], Access::LOCAL_WRITE)
            .expect("register");
        Honest {
            buf: client.expose(mr).expect("expose"),
            _client: client,
            busy: [None; REGIONS],
            generation: self.generations,
        }
    }

    /// A live client with a free region: (client index, region).
    fn free_region(&mut self) -> Option<(usize, usize)> {
        let c = self.rng.below(CLIENTS);
        let h = self.honest[c].as_ref()?;
        let r = self.rng.below(REGIONS);
        h.busy[r].is_none().then_some((c, r))
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Submits; on a refusal for load (EAGAIN, EBUSY) polls and says false; any other
    /// refusal fails the test unless `forged`.
    fn submit(
        &mut self,
        id: u64,
        token: &RdmaToken,
        offset: usize,
        dir: Direction,
        local: Local,
        forged: bool,
    ) -> bool {
        let (mr, at, len) = match local {
            Local::Object(at, len) => (&self.object, at, len),
            Local::Slot(s, len) => (&self.landing, s * REGION, len),
            Local::Junk(len) => (&self.junk, 0, len),
        };
        let sge = mr.sge(at, len).expect("sge");
        match self.exec.submit(id, token, offset as u64, dir, sge) {
            Ok(()) => true,
            Err(e) if e.is_would_block() || e.errno() == Some(libc::EBUSY) => {
                self.fig.backpressure += 1;
                self.poll();
                false
            }
            Err(e) if forged => {
                self.fig.refused_at_submit += 1;
                eprintln!("forged transfer refused at submit: {e}");
                false
            }
            Err(e) => panic!("an honest transfer refused: {e}"),
        }
    }

    fn honest_transfer(&mut self) {
        let Some((c, region)) = self.free_region() else { return };
        let dir = if self.rng.below(2) == 0 {
            Direction::Get
        } else {
            Direction::Put
        };
        let slot = match dir {
            Direction::Put => match (0..SLOTS).find(|&s| !self.slots[s]) {
                Some(s) => s,
                None => return,
            },
            Direction::Get => 0,
        };
        let len = one_to(&mut self.rng, REGION);
        let offset = self.rng.below(REGION - len + 1);
        let obj = self.rng.below(OBJECT - len + 1);
        let pattern = self.rng.next();
        let h = self.honest[c].as_mut().expect("live");
        if dir == Direction::Put {
            h.buf
                .write(region * REGION, &s3_pattern(REGION, pattern))
                .expect("write");
        }
        let (token_id, token) = h.buf.mint(region * REGION, REGION, dir).expect("mint");
        let generation = h.generation;
        let id = self.id();
        let local = match dir {
            Direction::Get => Local::Object(obj, len),
            Direction::Put => Local::Slot(slot, len),
        };
        if !self.submit(id, &token, offset, dir, local, false) {
            let h = self.honest[c].as_mut().expect("live");
            h.buf.revoke(token_id).expect("revoke an unused token");
            return;
        }
        let h = self.honest[c].as_mut().expect("live");
        h.busy[region] = Some(id);
        if dir == Direction::Put {
            self.slots[slot] = true;
        }
        self.running.insert(
            id,
            Expect::Honest {
                client: c,
                generation,
                region,
                token: token_id,
                dir,
                len,
                offset,
                obj,
                slot,
                pattern,
            },
        );
    }

    fn forged_transfer(&mut self) {
        // Its own failure, or a flush: a client that failed once has its other transfers
        // flushed with the DCI and failed, not run again.
        const RETRY: &[WcStatus] = &[WcStatus::RetryExcErr, WcStatus::WrFlushErr];
        const ACCESS: &[WcStatus] = &[WcStatus::RemAccessErr, WcStatus::WrFlushErr];
        let kind = self.rng.below(6);
        let dir = if self.rng.below(2) == 0 {
            Direction::Get
        } else {
            Direction::Put
        };
        let len = one_to(&mut self.rng, REGION);
        let local = match dir {
            Direction::Get => Local::Object(0, len),
            Direction::Put => Local::Junk(len),
        };
        let id = self.id();
        // A token of a live client, for the forgeries that keep its path.
        let shape = |run: &mut Run| -> Option<(usize, RdmaToken)> {
            let c = run.rng.below(CLIENTS);
            let h = run.honest[c].as_mut()?;
            let (t, token) = h.buf.mint(0, REGION, Direction::Get).ok()?;
            h.buf.revoke(t).expect("revoke");
            Some((c, token))
        };
        let mut names = None;
        let (token, what, fails, guard) = match kind {
            0 => {
                let Some((_, mut t)) = shape(self) else { return };
                // A DCT number nobody serves: the honest ones are the executor's own few.
                t.dct_number = 0x00f0_0000 | (self.rng.next() as u32 & 0xf_ffff);
                (t, "dead DCT", RETRY, None)
            }
            1 => {
                // Dropped at the DCT for its key, before any rkey is looked at.
                let (t, token) = self.wrong_key.1.mint(0, REGION, Direction::Get).expect("mint");
                self.wrong_key.1.revoke(t).expect("revoke");
                (token, "wrong DC key", RETRY, None)
            }
            2 => {
                let Some((c, mut t)) = shape(self) else { return };
                names = Some(c);
                // An rkey far above any the emulated device handed out.
                t.rkey ^= 0x8000_0000 | (self.rng.next() as u32 & 0x7fff_ff00);
                (t, "unregistered rkey", ACCESS, None)
            }
            3 | 4 => {
                // A live token of a free region, lied about: its length doubled and the
                // transfer placed past its registration (3), or used the wrong way (4).
                let Some((c, region)) = self.free_region() else { return };
                let h = self.honest[c].as_mut().expect("live");
                let granted = if kind == 3 { dir } else { other(dir) };
                let (t, mut token) = h.buf.mint(region * REGION, REGION, granted).expect("mint");
                let mut before = vec![0u8; REGION];
                h.buf.mr().read(region * REGION, &mut before).expect("read");
                let what = if kind == 3 {
                    token.len *= 2;
                    "range past its registration"
                } else {
                    "wrong direction"
                };
                h.busy[region] = Some(id);
                names = Some(c);
                (token, what, ACCESS, Some((c, h.generation, region, t, before)))
            }
            _ => {
                // Malformed text: refused before anything is posted.
                let garbage = format!("{:x}:zz:{}", self.rng.next(), self.rng.next());
                let sge = self.object.sge(0, len).expect("sge");
                let err = self
                    .exec
                    .submit_str(id, &garbage, 0, dir, sge)
                    .expect_err("a malformed token is refused");
                assert_eq!(err.errno(), Some(libc::EINVAL), "{err}");
                self.fig.refused_at_submit += 1;
                return;
            }
        };
        let offset = if what == "range past its registration" {
            REGION
        } else {
            0
        };
        if self.submit(id, &token, offset, dir, local, true) {
            self.running.insert(
                id,
                Expect::Forged {
                    kind: what,
                    fails,
                    names,
                    guard,
                },
            );
        } else if let Some((c, _, region, t, _)) = guard {
            let h = self.honest[c].as_mut().expect("live");
            h.busy[region] = None;
            h.buf.revoke(t).expect("revoke");
        }
    }

    /// Revokes the token of a running honest transfer.
    fn revoke_under_transfer(&mut self) {
        let Some(id) = self.pick_running(|e| matches!(e, Expect::Honest { .. })) else {
            return;
        };
        let Some(Expect::Honest {
            client,
            generation,
            region,
            token,
            dir,
            slot,
            ..
        }) = self.running.get(&id).cloned()
        else {
            return;
        };
        let h = self.honest[client].as_mut().expect("a running transfer's client lives");
        h.buf.revoke(token).expect("revoke a live token");
        self.fig.revoked_under_transfer += 1;
        self.running.insert(
            id,
            Expect::Tainted {
                client,
                generation,
                region: Some(region),
                slot: (dir == Direction::Put).then_some(slot),
            },
        );
    }

    /// Kills a client (its DCT and buffer go) with whatever runs against it.
    fn kill_client(&mut self) {
        let c = self.rng.below(CLIENTS);
        let Some(dead) = self.honest[c].take() else { return };
        for e in self.running.values_mut() {
            match e {
                Expect::Honest {
                    client,
                    generation,
                    dir,
                    slot,
                    ..
                } if *client == c => {
                    *e = Expect::Tainted {
                        client: *client,
                        generation: *generation,
                        region: None,
                        slot: (*dir == Direction::Put).then_some(*slot),
                    };
                }
                Expect::Tainted { client, region, .. } if *client == c => *region = None,
                Expect::Forged {
                    names, fails, guard, ..
                } if *names == Some(c) => {
                    // Its DCT is gone: a retry-exceeded failure now, as for a dead DCT.
                    *fails = &[WcStatus::RemAccessErr, WcStatus::RetryExcErr, WcStatus::WrFlushErr];
                    *guard = None;
                }
                _ => {}
            }
        }
        drop(dead);
        self.fig.killed += 1;
        let fresh = self.new_client();
        self.honest[c] = Some(fresh);
    }

    fn pick_running(&mut self, f: impl Fn(&Expect) -> bool) -> Option<u64> {
        let ids: Vec<u64> = self.running.iter().filter(|(_, e)| f(e)).map(|(&id, _)| id).collect();
        (!ids.is_empty()).then(|| ids[self.rng.below(ids.len())])
    }

    fn poll(&mut self) -> usize {
        let mut out = [Done::default(), Done::default(), Done::default(), Done::default()];
        let k = self.exec.poll(&mut out).expect("poll");
        for d in &out[..k] {
            self.reported(d);
        }
        self.check_bounds();
        k
    }

    fn check_bounds(&self) {
        let clients = self.exec.clients();
        assert!(
            clients <= MAX_TRANSFERS + KEEP_IDLE,
            "{clients} clients held: more than running transfers plus the idle ones kept"
        );
        assert!(
            self.exec.address_handles() <= clients + KEPT_AHS,
            "more address handles than clients and the unused ones kept"
        );
        assert!(
            self.exec.remembered() <= REMEMBERED,
            "{} clients remembered",
            self.exec.remembered()
        );
        assert!(self.exec.in_flight() <= MAX_TRANSFERS);
        assert_eq!(
            self.exec.in_flight(),
            self.running.len(),
            "running transfers as the executor counts them"
        );
    }

    fn reported(&mut self, d: &Done) {
        let e = self
            .running
            .remove(&d.id)
            .unwrap_or_else(|| panic!("transfer {} reported twice, or never submitted: {d:?}", d.id));
        match e {
            Expect::Honest {
                client,
                generation,
                region,
                token,
                dir,
                len,
                offset,
                obj,
                slot,
                pattern,
            } => {
                assert!(
                    d.is_ok() && d.bytes == len as u64,
                    "an honest {dir:?} of {len} bytes: {d:?}"
                );
                let h = self.honest[client].as_mut().expect("an honest transfer's client lives");
                assert_eq!(h.generation, generation);
                match dir {
                    Direction::Get => {
                        let mut got = vec![0u8; len];
                        h.buf.mr().read(region * REGION + offset, &mut got).expect("read");
                        let mut want = vec![0u8; len];
                        self.object.read(obj, &mut want).expect("read");
                        assert!(got == want, "GET {}: the client's bytes differ from the object's", d.id);
                    }
                    Direction::Put => {
                        let mut got = vec![0u8; len];
                        self.landing.read(slot * REGION, &mut got).expect("read");
                        assert!(
                            got[..] == s3_pattern(REGION, pattern)[offset..offset + len],
                            "PUT {}: the landed bytes differ from the client's",
                            d.id
                        );
                        self.slots[slot] = false;
                    }
                }
                h.busy[region] = None;
                h.buf.revoke(token).expect("revoke a finished transfer's token");
                self.fig.honest_ok += 1;
            }
            Expect::Tainted {
                client,
                generation,
                region,
                slot,
            } => {
                if let (Some(r), Some(h)) = (region, self.honest[client].as_mut()) {
                    if h.generation == generation {
                        h.busy[r] = None;
                    }
                }
                if let Some(s) = slot {
                    self.slots[s] = false;
                }
                self.fig.tainted += 1;
            }
            Expect::Forged { kind, fails, guard, .. } => {
                assert!(
                    !d.is_ok() && fails.contains(&d.status),
                    "a forged transfer ({kind}) must fail with {fails:?}: {d:?}"
                );
                if let Some((c, generation, region, t, before)) = guard {
                    let h = self.honest[c].as_mut().expect("guarded client lives");
                    assert_eq!(h.generation, generation);
                    let mut now = vec![0u8; REGION];
                    h.buf.mr().read(region * REGION, &mut now).expect("read");
                    assert!(now == before, "a forged transfer ({kind}) changed a client's bytes");
                    h.busy[region] = None;
                    h.buf.revoke(t).expect("revoke");
                }
                self.fig.forged_failed += 1;
            }
        }
    }

    fn step(&mut self) {
        match self.rng.below(100) {
            0..=44 => self.honest_transfer(),
            45..=69 => self.forged_transfer(),
            70..=74 => self.revoke_under_transfer(),
            75..=76 => self.kill_client(),
            77..=78 => {
                self.exec.release_idle();
                self.fig.released += 1;
            }
            _ => {
                self.poll();
            }
        }
        self.fig.operations += 1;
    }

    fn drain(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.running.is_empty() {
            if self.poll() == 0 {
                std::thread::yield_now();
            }
            assert!(
                Instant::now() < deadline,
                "hung: {} transfers never reported: {:?}",
                self.running.len(),
                self.running.values().take(4).collect::<Vec<_>>()
            );
        }
        self.exec.release_idle();
        assert_eq!(
            (self.exec.in_flight(), self.exec.clients(), self.exec.address_handles()),
            (0, 0, 0),
            "released: nothing left"
        );
    }
}

enum Local {
    Object(usize, usize),
    Slot(usize, usize),
    Junk(usize),
}

fn other(d: Direction) -> Direction {
    match d {
        Direction::Get => Direction::Put,
        Direction::Put => Direction::Get,
    }
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5"]
fn random_interleavings_of_strangers_honest_clients_revocations_and_deaths_keep_every_invariant() {
    let (ctx, _port, _gid) = open();
    let mlx5 = ctx.mlx5().expect("an mlx5 device");
    let pd = ctx.alloc_pd().expect("PD");
    let node = (ctx, mlx5, pd);
    let sequences = env("S3_HOSTILE_SEQUENCES", 6);
    let ops = env("S3_HOSTILE_OPS", 400);
    let first = env("S3_HOSTILE_SEED", 1);
    let started = Instant::now();
    let mut total = Figures::default();
    for seq in 0..sequences {
        let seed = first + seq;
        let mut run = Run::new(&node, seed);
        for _ in 0..ops {
            run.step();
        }
        run.drain();
        let f = &run.fig;
        eprintln!("s3_hostile: seed {seed}: {f:?}");
        total.sequences += 1;
        total.operations += f.operations;
        total.honest_ok += f.honest_ok;
        total.forged_failed += f.forged_failed;
        total.tainted += f.tainted;
        total.refused_at_submit += f.refused_at_submit;
        total.backpressure += f.backpressure;
        total.revoked_under_transfer += f.revoked_under_transfer;
        total.killed += f.killed;
        total.released += f.released;
    }
    eprintln!(
        "s3_hostile: {} sequences, {} operations, {} transfers reported once each ({} honest, every byte checked; {} forged, each failed; {} under a revoke or a death); {} malformed refused at submit, {} submits refused for load and retried later; {} clients killed, in {:.1} s",
        total.sequences,
        total.operations,
        total.honest_ok + total.forged_failed + total.tainted,
        total.honest_ok,
        total.forged_failed,
        total.tainted,
        total.refused_at_submit,
        total.backpressure,
        total.killed,
        started.elapsed().as_secs_f64()
    );
    assert!(total.honest_ok > 0 && total.forged_failed > 0, "the mix ran both kinds");
}
