//! Tenants of the S3 executor scheduled fairly (issue 45), on one emulated node
//! (scripts/soft-mlx5): attackers of every class at once, each a tenant of its own, beside an
//! honest new client and an honest proven client, each a tenant of its own too.
//!
//! The attackers, each submitting far past every default bound (100 transfers each: past
//! `unproven_transfers` 64, and 400 together past `max_transfers` 256):
//! - **dead**: tokens naming DCTs nobody serves (first contact: the probation DCIs, 67 ms
//!   each);
//! - **proven-then-dead**: 32 clients proven by one tiny honest GET each, then their DCTs
//!   destroyed (dc-review-5 finding 2; `proven_idle` long, so they are still proven: the
//!   DCIs proven clients use);
//! - **wrong rkeys**: a live client's tokens with another rkey (remote access errors);
//! - **huge lengths**: a live proven client's 1 MiB GETs, as many as it may.
//!
//! The verdict counts, it does not time: how many of the dead attackers' transfers (each
//! holds a DCI of its class for its whole retry time) finished between the honest clients'
//! submissions and their `Done`s. With a tenant each, an honest transfer waits for at most a
//! turn of the ring of its class; with every transfer the default tenant's (the run without
//! tenants), it waits behind the attackers' queue, and is refused while they fill the
//! executor's bounds. Latencies are printed as figures (median, p99: honest alone, with the
//! attackers and tenants, with the attackers and no tenants).

use mlx5dv::s3::{Client, ClientConfig, Direction, Done, Executor, ExecutorConfig, Exposed, RdmaToken, Tenant};
use mlx5dv::{Context, DcKey, Mlx5Context, Mr, Pd};
use mlx5dv_suite::device::{open, pool_cq, test_backend};
use mlx5dv_suite::s3_pattern;
use std::collections::HashMap;
use std::time::{Duration, Instant};

const KEY: DcKey = DcKey::new(0x5333_5253_4b45_5931);
/// Transfers each attacker tries to submit at first: past every default bound.
const ATTEMPTS: u64 = 100;
/// Honest rounds after the first (for the latency figures).
const ROUNDS: u64 = 8;
const PROVEN_DEAD: usize = 32;
const HUGE: usize = 1 << 20;

struct Node {
    ctx: Context,
    mlx5: Mlx5Context,
    pd: Pd,
}

fn node() -> Node {
    let (ctx, _, _) = open();
    let mlx5 = ctx.mlx5().expect("an mlx5 device");
    let pd = ctx.alloc_pd().expect("PD");
    Node { ctx, mlx5, pd }
}

impl Node {
    /// The executor's defaults (4 DCIs `Dcs`, 8 probation DCIs: 16.8 ms x 4 tries; 256
    /// transfers, 64 on probation; a tenant 32 and 8), the proven DCIs' retries shortened to
    /// the probation DCIs' (a dead client fails after 4 x 16.8 ms there too), and `proven_idle` long enough that the
    /// proven-then-dead clients are still proven when they attack.
    fn executor(&self) -> Executor {
        let mut cfg = ExecutorConfig {
            key: KEY,
            proven_idle: Duration::from_secs(600),
            ..ExecutorConfig::default()
        };
        cfg.pool.backend = test_backend();
        // S3_TENANTS_POLICY: another pool policy (dcs-quota, rand, streams), for its figures.
        cfg.pool.policy = match std::env::var("S3_TENANTS_POLICY").as_deref() {
            Ok("dcs-quota") => mlx5dv::Policy::DcsQuota { quota: 16 },
            Ok("rand") => mlx5dv::Policy::Rand { seed: 1 },
            Ok("streams") => mlx5dv::Policy::Streams {
                log_concurrent: 2,
                log_errored: 1,
            },
            _ => mlx5dv::Policy::Dcs,
        };
        cfg.pool.rts.timeout = 12;
        cfg.pool.rts.retry_cnt = 3;
        Executor::new(&self.mlx5, &self.pd, pool_cq(&self.ctx, 1024), cfg).expect("executor")
    }

    fn client(&self) -> Client {
        Client::new(&self.mlx5, &self.pd, KEY, ClientConfig::default()).expect("client DCT")
    }

    fn exposed(&self, client: &Client, len: usize, seed: u8) -> Exposed<Vec<u8>> {
        mlx5dv_suite::s3_exposed(&self.pd, client, len, seed)
    }

    fn local(&self, exec: &mut Executor, len: usize, seed: u8) -> Mr<Vec<u8>> {
        let mr = self
            .pd
            .register(s3_pattern(len, u64::from(seed)), mlx5dv::Access::LOCAL_WRITE)
            .expect("register");
        exec.hold(&mr).expect("hold");
        mr
    }
}

/// The attackers' classes (the id's high bits) and the honest ones'.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Who {
    Dead = 1,
    ProvenDead = 2,
    WrongRkey = 3,
    Huge = 4,
    HonestNew = 5,
    HonestProven = 6,
    /// Not classes: the dead and proven-then-dead attackers' transfers that timed out (retry
    /// exceeded: each held a DCI for its whole retry time; those flushed with one are not
    /// counted).
    DeadTimeouts = 8,
    ProvenDeadTimeouts = 9,
}

const ATTACKERS: [Who; 4] = [Who::Dead, Who::ProvenDead, Who::WrongRkey, Who::Huge];

fn who(id: u64) -> Who {
    match id >> 40 {
        1 => Who::Dead,
        2 => Who::ProvenDead,
        3 => Who::WrongRkey,
        4 => Who::Huge,
        5 => Who::HonestNew,
        _ => Who::HonestProven,
    }
}

fn id(w: Who, seq: u64) -> u64 {
    ((w as u64) << 40) | seq
}

/// One run's outcome.
#[derive(Debug, Default)]
struct Outcome {
    /// For the first honest new and proven GETs: the dead (resp. proven-then-dead)
    /// attackers' transfers that finished between the GET's first submission and its Done.
    new_behind_dead: u64,
    proven_behind_dead: u64,
    /// Submissions of the honest clients refused (EBUSY, EAGAIN) before one was taken.
    honest_refused: u64,
    /// Per honest class, every GET's latency (first submission to Done), in us.
    new_us: Vec<u64>,
    proven_us: Vec<u64>,
    /// Attackers' submissions taken and refused.
    attack_taken: u64,
    attack_refused: u64,
    /// The refusals' reasons seen (the bound named).
    reasons: Vec<String>,
}

struct Attack {
    /// A live token to forge dead ones from.
    template: RdmaToken,
    stale: Vec<RdmaToken>,
    wrong: RdmaToken,
    huge: RdmaToken,
    next_dead: u32,
    next_stale: usize,
    seq: u64,
}

/// What takes the finished transfers off the executor: (executor, per attacker, honest ones).
type Reap<'a> = dyn FnMut(&mut Executor, &mut HashMap<Who, u64>, &mut HashMap<u64, Done>) -> usize + 'a;

/// Runs the scenario: `attack`: the attackers are there; `tenants`: each attacker and each
/// honest client is a tenant of its own (else all are the default tenant).
fn run(n: &Node, attack: bool, tenants: bool) -> Outcome {
    let mut exec = n.executor();
    let object = n.local(&mut exec, HUGE, 7);
    let bad = n.local(&mut exec, 4096, 99);
    let tenant = |w: Who| {
        if tenants {
            Tenant::new(w as u64)
        } else {
            Tenant::DEFAULT
        }
    };
    let mut out = Outcome::default();
    let mut done_buf = vec![Done::default(); 64];
    // Dones by class so far (and the timeouts: `Who::DeadTimeouts`).
    let mut finished: HashMap<Who, u64> = HashMap::new();
    let mut honest_done: HashMap<u64, Done> = HashMap::new();
    let mut reap = |exec: &mut Executor, finished: &mut HashMap<Who, u64>, honest: &mut HashMap<u64, Done>| {
        let k = exec.poll(&mut done_buf).expect("poll");
        for d in &done_buf[..k] {
            *finished.entry(who(d.id)).or_default() += 1;
            if d.status == mlx5dv::WcStatus::RetryExcErr {
                match who(d.id) {
                    Who::Dead => *finished.entry(Who::DeadTimeouts).or_default() += 1,
                    Who::ProvenDead => *finished.entry(Who::ProvenDeadTimeouts).or_default() += 1,
                    _ => {}
                }
            }
            if matches!(who(d.id), Who::HonestNew | Who::HonestProven) {
                honest.insert(d.id, d.clone());
            }
        }
        k
    };
    let finish_one = |exec: &mut Executor,
                      id: u64,
                      finished: &mut HashMap<Who, u64>,
                      honest: &mut HashMap<u64, Done>,
                      reap: &mut Reap<'_>| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !honest.contains_key(&id) {
            reap(exec, finished, honest);
            assert!(
                Instant::now() < deadline,
                "honest transfer {id:#x} did not finish in 60 s"
            );
        }
    };

    // The honest proven client: proven before the attack, by a GET of its own.
    let hp = n.client();
    let mut hp_buf = n.exposed(&hp, 4096, 0);
    let (_, hp_token) = hp_buf.mint(0, 4096, Direction::Get).unwrap();
    exec.tenant(tenant(Who::HonestProven))
        .submit(
            id(Who::HonestProven, 0),
            &hp_token,
            0,
            Direction::Get,
            object.sge(0, 4096).unwrap(),
        )
        .unwrap();
    finish_one(
        &mut exec,
        id(Who::HonestProven, 0),
        &mut finished,
        &mut honest_done,
        &mut reap,
    );
    assert!(
        honest_done[&id(Who::HonestProven, 0)].is_ok(),
        "the proven client's first GET"
    );

    // The attackers' clients: proven-then-dead ones (one tiny GET each, then their DCTs
    // destroyed), a live one whose tokens get another rkey, a live proven one for 1 MiB GETs.
    let mut stale = Vec::new();
    for i in 0..PROVEN_DEAD {
        let c = n.client();
        let mut buf = n.exposed(&c, 4096, 0);
        let (_, t) = buf.mint(0, 64, Direction::Get).unwrap();
        let pid = id(Who::ProvenDead, 1_000_000 + i as u64);
        exec.tenant(tenant(Who::ProvenDead))
            .submit(pid, &t, 0, Direction::Get, object.sge(0, 64).unwrap())
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while finished.get(&Who::ProvenDead).copied().unwrap_or(0) < i as u64 + 1 {
            reap(&mut exec, &mut finished, &mut honest_done);
            assert!(Instant::now() < deadline, "a proven-then-dead client's tiny GET");
        }
        stale.push(t);
        drop((buf, c));
    }
    let wrong_client = n.client();
    let mut wrong_buf = n.exposed(&wrong_client, 4096, 0);
    let (_, w) = wrong_buf.mint(0, 4096, Direction::Get).unwrap();
    let huge_client = n.client();
    let mut huge_buf = n.exposed(&huge_client, HUGE, 0);
    let (_, huge) = huge_buf.mint(0, HUGE, Direction::Get).unwrap();
    exec.tenant(tenant(Who::Huge))
        .submit(
            id(Who::Huge, 1_000_000),
            &huge,
            0,
            Direction::Get,
            object.sge(0, 64).unwrap(),
        )
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while finished.get(&Who::Huge).copied().unwrap_or(0) < 1 {
        reap(&mut exec, &mut finished, &mut honest_done);
        assert!(Instant::now() < deadline, "the huge client's tiny GET");
    }
    let base = finished.clone();
    let mut attack_state = Attack {
        template: hp_token,
        stale,
        wrong: RdmaToken {
            rkey: w.rkey ^ 0x00ff_ff00,
            ..w
        },
        huge,
        next_dead: 0,
        next_stale: 0,
        seq: 0,
    };

    // Every attacker submits `limit` transfers (or as many as it is let), in turns.
    let submit_attack = |exec: &mut Executor, a: &mut Attack, out: &mut Outcome, per: u64| {
        for _ in 0..per {
            for w in ATTACKERS {
                a.seq += 1;
                let i = id(w, a.seq);
                let mut s = exec.tenant(tenant(w));
                let r = match w {
                    Who::Dead => {
                        a.next_dead += 1;
                        let t = RdmaToken {
                            dct_number: 0xdead00 + a.next_dead,
                            ..a.template
                        };
                        s.submit(i, &t, 0, Direction::Get, bad.sge(0, 4096).unwrap())
                    }
                    Who::ProvenDead => {
                        a.next_stale += 1;
                        let t = a.stale[a.next_stale % a.stale.len()];
                        s.submit(i, &t, 0, Direction::Get, bad.sge(0, 64).unwrap())
                    }
                    Who::WrongRkey => s.submit(i, &a.wrong, 0, Direction::Get, bad.sge(0, 4096).unwrap()),
                    _ => s.submit(i, &a.huge, 0, Direction::Get, object.sge(0, HUGE).unwrap()),
                };
                match r {
                    Ok(()) => out.attack_taken += 1,
                    Err(e) => {
                        assert!(
                            matches!(e.errno(), Some(libc::EBUSY) | Some(libc::EAGAIN)),
                            "an attacker's refusal: {e}"
                        );
                        out.attack_refused += 1;
                        let reason = [
                            "tenant_transfers",
                            "tenant_unproven",
                            "unproven_transfers",
                            "max_transfers",
                        ]
                        .into_iter()
                        .find(|b| e.to_string().contains(b))
                        .unwrap_or("other");
                        if !out.reasons.iter().any(|r| r == reason) {
                            out.reasons.push(reason.to_string());
                        }
                    }
                }
            }
        }
    };
    if attack {
        submit_attack(&mut exec, &mut attack_state, &mut out, ATTEMPTS);
    }

    // The honest rounds: a new client's first GET and the proven client's GET, submitted
    // (again, after a refusal, as an HTTP client told 503 would) until taken.
    let mut new_clients = Vec::new();
    for round in 0..=ROUNDS {
        if attack && round > 0 {
            // The attackers keep their queues full.
            submit_attack(&mut exec, &mut attack_state, &mut out, ATTEMPTS / 4);
        }
        let c = n.client();
        let mut buf = n.exposed(&c, 4096, 0);
        let (_, nt) = buf.mint(0, 4096, Direction::Get).unwrap();
        let (_, pt) = hp_buf.mint(0, 4096, Direction::Get).unwrap();
        let (nid, pid) = (id(Who::HonestNew, round), id(Who::HonestProven, 100 + round));
        let started = Instant::now();
        let before = finished.clone();
        let mut pending: Vec<(u64, Who, RdmaToken)> = vec![(nid, Who::HonestNew, nt), (pid, Who::HonestProven, pt)];
        let deadline = Instant::now() + Duration::from_secs(60);
        while !pending.is_empty() {
            pending.retain(|&(i, w, t)| {
                match exec
                    .tenant(tenant(w))
                    .submit(i, &t, 0, Direction::Get, object.sge(0, 4096).unwrap())
                {
                    Ok(()) => false,
                    Err(e) if matches!(e.errno(), Some(libc::EBUSY) | Some(libc::EAGAIN)) => {
                        out.honest_refused += 1;
                        true
                    }
                    Err(e) => panic!("an honest submit: {e}"),
                }
            });
            if !pending.is_empty() {
                reap(&mut exec, &mut finished, &mut honest_done);
            }
            assert!(Instant::now() < deadline, "the honest GETs were refused for 60 s");
        }
        let mut latency = HashMap::new();
        while latency.len() < 2 {
            reap(&mut exec, &mut finished, &mut honest_done);
            for i in [nid, pid] {
                if honest_done.contains_key(&i) && !latency.contains_key(&i) {
                    let since = |w| finished.get(&w).copied().unwrap_or(0) - before.get(&w).copied().unwrap_or(0);
                    let (dead, proven_dead) = (since(Who::DeadTimeouts), since(Who::ProvenDeadTimeouts));
                    latency.insert(i, (started.elapsed().as_micros() as u64, dead, proven_dead));
                }
            }
            assert!(Instant::now() < deadline, "the honest GETs did not finish in 60 s");
        }
        for i in [nid, pid] {
            let d = &honest_done[&i];
            assert!(d.is_ok() && d.bytes == 4096, "an honest GET: {d:?}");
        }
        assert!(buf.mr().len() == 4096);
        let mut got = vec![0u8; 4096];
        buf.mr().read(0, &mut got).unwrap();
        assert!(got == s3_pattern(4096, 7)[..4096], "the new client's bytes");
        if round == 0 {
            out.new_behind_dead = latency[&nid].1;
            out.proven_behind_dead = latency[&pid].2;
        }
        out.new_us.push(latency[&nid].0);
        out.proven_us.push(latency[&pid].0);
        new_clients.push((c, buf));
    }
    // Drain the attack: every transfer reported once.
    let deadline = Instant::now() + Duration::from_secs(60);
    while exec.in_flight() > 0 {
        reap(&mut exec, &mut finished, &mut honest_done);
        assert!(Instant::now() < deadline, "the attack did not drain in 60 s");
    }
    let attacked: u64 = ATTACKERS
        .iter()
        .map(|w| finished.get(w).copied().unwrap_or(0) - base.get(w).copied().unwrap_or(0))
        .sum();
    assert_eq!(
        attacked, out.attack_taken,
        "every attacker transfer taken was reported once"
    );
    assert_eq!(exec.tenants(), 0, "no tenant remembered once its transfers finished");
    out
}

fn percentile(v: &[u64], p: f64) -> u64 {
    let mut s = v.to_vec();
    s.sort_unstable();
    s[((s.len() - 1) as f64 * p).round() as usize]
}

fn figures(name: &str, o: &Outcome) {
    println!(
        "s3_tenants: {name}: honest new median {} us p99 {} us, proven median {} us p99 {} us; first new GET behind {} \
         dead, first proven GET behind {} proven-then-dead; honest refusals {}; attackers taken {} refused {} ({})",
        percentile(&o.new_us, 0.5),
        percentile(&o.new_us, 0.99),
        percentile(&o.proven_us, 0.5),
        percentile(&o.proven_us, 0.99),
        o.new_behind_dead,
        o.proven_behind_dead,
        o.honest_refused,
        o.attack_taken,
        o.attack_refused,
        o.reasons.join(", "),
    );
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5"]
fn every_attacker_a_tenant_delays_only_itself_and_honest_new_and_proven_clients_take_their_turn() {
    let n = node();
    let alone = run(&n, false, true);
    figures("honest alone", &alone);
    let fair = run(&n, true, true);
    figures("attackers, a tenant each", &fair);
    let one = run(&n, true, false);
    figures("attackers, no tenants (all the default one)", &one);
    let defaults = ExecutorConfig::default();
    // The attack exceeded every default bound.
    assert!(
        ATTEMPTS * ATTACKERS.len() as u64 > defaults.max_transfers as u64
            && ATTEMPTS > defaults.unproven_transfers as u64
            && ATTEMPTS > defaults.tenant_transfers as u64
    );
    // With a tenant each: the honest new client's first GET waits for at most a turn of the
    // probation DCIs' ring: the dead transfers on them when it comes (under Dcs one a DCI;
    // under Rand and Streams at most `tenant_inflight` of the dead tenant's, the rest held
    // back in its queue), and as many again finishing on the other DCIs meanwhile; the
    // proven one's likewise on the main DCIs; neither is refused.
    let dcis = defaults.pool.dcis as u64;
    let probation = defaults.pool.probation.map_or(0, |p| p.dcis) as u64;
    let inflight = defaults.tenant_inflight as u64;
    let (new_most, proven_most) = (2 * probation.max(inflight), 2 * dcis.max(inflight));
    assert!(
        fair.new_behind_dead <= new_most,
        "the honest new client's first GET finished behind {} dead attackers' transfers (a tenant each: at most {new_most})",
        fair.new_behind_dead,
    );
    assert!(
        fair.proven_behind_dead <= proven_most,
        "the honest proven client's GET finished behind {} proven-then-dead attackers' transfers (a tenant each: at \
         most {proven_most})",
        fair.proven_behind_dead,
    );
    // Without tenants it is visibly worse: behind the attackers' queues (32 of each), and
    // refused while they fill the executor's bounds.
    assert!(
        one.new_behind_dead >= 3 * fair.new_behind_dead.max(4)
            && one.proven_behind_dead >= 3 * fair.proven_behind_dead.max(4),
        "without tenants the honest clients waited behind {} dead and {} proven-then-dead transfers, with: {} and {}",
        one.new_behind_dead,
        one.proven_behind_dead,
        fair.new_behind_dead,
        fair.proven_behind_dead
    );
    assert!(
        fair.reasons.iter().any(|r| r == "tenant_transfers") && fair.reasons.iter().any(|r| r == "tenant_unproven"),
        "the tenants' bounds refused the attackers: {:?}",
        fair.reasons
    );
    assert_eq!(
        fair.honest_refused, 0,
        "an honest client was refused beside the tenants' attack"
    );
}
