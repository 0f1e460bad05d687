//! The S3 executor under every attack at once (issue 45's attack benchmark), on one node
//! (`scripts/attack`, under soft-mlx5): how much honest new and honest proven clients lose
//! while attackers of every class, each a tenant of its own, send forged tokens.
//!
//!   s3_attack [--attackers N] [--rate R] [--for S] [--new K] [--proven K] [--policy P]
//!             [--probation-dcis D]
//!
//! The attackers: N tenants per class (default 1000), R forged tokens a second in all
//! (default 50), in turn over the classes and, within a class, over its tenants:
//! - **dead**: a DCT number nobody serves (first contact: the probation DCIs);
//! - **proven-then-dead**: clients proven by one tiny GET each, then their DCTs destroyed
//!   (min(N, 256) of them);
//! - **wrong rkey**: a live client's token with another rkey (a remote access error);
//! - **huge**: a live proven client's 1 MiB GETs;
//! - **silent GID** (RoCE): an address whose neighbour never answers (its address handle
//!   times out).
//!
//! They send in windows, as `s3_client --attacker` does: a second of tokens, until each of them
//! is answered, then a quiet second. Beside them, K honest new clients (each GET to a client
//! never met before) and K honest proven clients (proven before the run) each keep one GET
//! of 4 KiB in flight, each a tenant of its own. Every honest GET must succeed, its bytes
//! checked. A GET counts as attacked when it ran while a window was open, as alone
//! otherwise: both from the same run, interleaved second by second, so the machine's load
//! weighs on both alike.
//!
//! Prints, per honest class: median and 99th percentile latency alone and attacked, GETs
//! completed per second alone and attacked, and the ratios against the targets
//! (median 2x, p99 5x, completed 0.8x; printed, not enforced: these are figures); then what
//! the attackers were answered. Latencies are the emulator's wall time, not silicon's.
use mlx5dv::s3::{Client, ClientConfig, Direction, Done, Executor, ExecutorConfig, Exposed, RdmaToken, Tenant};
use mlx5dv::{Access, DcKey, Policy};
use std::collections::HashMap;
use std::time::{Duration, Instant};

type Failure = Box<dyn std::error::Error + Send + Sync>;

const KEY: DcKey = mlx5dv::s3::REFERENCE_DC_KEY;
const HONEST_LEN: usize = 4096;
const HUGE: usize = 1 << 20;

/// The attackers' classes, and the honest ones, as the high bits of a transfer's id.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Class {
    Dead = 1,
    ProvenDead = 2,
    WrongRkey = 3,
    Huge = 4,
    SilentGid = 5,
    New = 6,
    Proven = 7,
}

impl Class {
    fn of(id: u64) -> Class {
        match id >> 48 {
            1 => Class::Dead,
            2 => Class::ProvenDead,
            3 => Class::WrongRkey,
            4 => Class::Huge,
            5 => Class::SilentGid,
            6 => Class::New,
            _ => Class::Proven,
        }
    }

    fn id(self, seq: u64) -> u64 {
        ((self as u64) << 48) | seq
    }

    /// Attacker `i` of this class, a tenant of its own.
    fn tenant(self, i: u64) -> Tenant {
        Tenant::new(((self as u64) << 32) | (i + 1))
    }
}

struct Args {
    attackers: u64,
    rate: u64,
    secs: u64,
    new: usize,
    proven: usize,
    policy: Policy,
    /// Probation DCIs (None: the executor's default).
    probation_dcis: Option<usize>,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        attackers: 1000,
        rate: 50,
        secs: 10,
        new: 2,
        proven: 2,
        policy: Policy::Dcs,
        probation_dcis: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let n = || value.parse::<u64>().map_err(|e| format!("{flag} {value}: {e}"));
        match flag.as_str() {
            "--attackers" => a.attackers = n()?.max(1),
            "--rate" => a.rate = n()?.max(1),
            "--for" => a.secs = n()?.max(2),
            "--new" => a.new = n()? as usize,
            "--proven" => a.proven = n()? as usize,
            "--probation-dcis" => a.probation_dcis = Some(n()?.max(1) as usize),
            "--policy" => {
                a.policy = match value.as_str() {
                    "dcs" => Policy::Dcs,
                    "dcs-quota" => Policy::DcsQuota { quota: 16 },
                    "rand" => Policy::Rand { seed: 1 },
                    "streams" => Policy::Streams {
                        log_concurrent: 2,
                        log_errored: 1,
                    },
                    p => return Err(format!("--policy {p}: dcs, dcs-quota, rand or streams")),
                }
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(a)
}

/// An honest client: its DCT, its exposed buffer, and the GET it has in flight.
struct Honest {
    /// Kept for its DCT.
    _client: Client,
    buf: Exposed<Vec<u8>>,
    /// The GET in flight: its id and when it was first tried.
    running: Option<(u64, Instant)>,
    /// When the GET not yet taken was first tried (refused: EBUSY, EAGAIN).
    tried: Option<Instant>,
}

fn main() -> Result<(), Failure> {
    let a = args()?;
    let ctx = mlx5dv::open_device_from_env()?;
    let (mlx5, pd) = (ctx.mlx5()?, ctx.alloc_pd()?);
    let roce = ctx.query_port(1)?.is_ethernet();
    let mut cfg = ExecutorConfig {
        key: KEY,
        ..ExecutorConfig::default()
    };
    cfg.pool.policy = a.policy;
    if let (Some(n), Some(p)) = (a.probation_dcis, cfg.pool.probation.as_mut()) {
        p.dcis = n;
    }
    let cq = ctx.create_cq(cfg.cq_size())?;
    let mut exec = Executor::new(&mlx5, &pd, cq, cfg)?;
    let object: Vec<u8> = (0..HUGE).map(|i| (i as u8).wrapping_mul(31).wrapping_add(7)).collect();
    let object = pd.register(object, Access::LOCAL_WRITE)?;
    exec.hold(&object)?;
    let client = || Client::new(&mlx5, &pd, KEY, ClientConfig::default());
    let expose = |c: &Client, len: usize| -> Result<Exposed<Vec<u8>>, Failure> {
        let mr = pd.register(vec![0u8; len], Access::LOCAL_WRITE)?;
        Ok(c.expose(mr).map_err(|_| "expose")?)
    };
    let mut dones = vec![Done::default(); 256];
    let mut finish = |exec: &mut Executor, id: u64| -> Result<Done, Failure> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let k = exec.poll(&mut dones)?;
            if let Some(d) = dones[..k].iter().find(|d| d.id == id) {
                return Ok(d.clone());
            }
            if Instant::now() > deadline {
                return Err(format!("transfer {id:#x} did not finish in 60 s").into());
            }
        }
    };

    // Proven clients (the honest ones, the huge attacker's, the proven-then-dead ones): one
    // GET each before the run.
    let mut seq = 0u64;
    let mut prove = |exec: &mut Executor, tenant: Tenant, c: &mut Exposed<Vec<u8>>, len: usize| {
        seq += 1;
        let (_, t) = c.mint(0, len, Direction::Get)?;
        exec.tenant(tenant).submit(
            Class::Proven.id(1 << 40 | seq),
            &t,
            0,
            Direction::Get,
            object.sge(0, len)?,
        )?;
        let d = finish(exec, Class::Proven.id(1 << 40 | seq))?;
        if !d.is_ok() {
            return Err(format!("proving a client: {d:?}").into());
        }
        Ok::<RdmaToken, Failure>(t)
    };
    let mut proven = Vec::new();
    for i in 0..a.proven {
        let c = client()?;
        let mut buf = expose(&c, HONEST_LEN)?;
        prove(&mut exec, Class::Proven.tenant(i as u64), &mut buf, 64)?;
        proven.push(Honest {
            _client: c,
            buf,
            running: None,
            tried: None,
        });
    }
    // New honest clients: each GET to a client never met before, made ahead of the run (before the
    // proven-then-dead clients, so that no DCT made later takes one of their numbers).
    let fresh_n = (a.new as u64 * a.secs * 400).max(16) as usize;
    let mut fresh: Vec<Honest> = Vec::with_capacity(fresh_n);
    for _ in 0..fresh_n {
        let c = client()?;
        let buf = expose(&c, HONEST_LEN)?;
        fresh.push(Honest {
            _client: c,
            buf,
            running: None,
            tried: None,
        });
    }
    let mut news: Vec<Option<Honest>> = (0..a.new).map(|_| fresh.pop()).collect();

    let stale_n = a.attackers.min(256);
    let mut stale = Vec::new();
    for i in 0..stale_n {
        let c = client()?;
        let mut buf = expose(&c, 64)?;
        stale.push(prove(&mut exec, Class::ProvenDead.tenant(i), &mut buf, 64)?);
        drop((buf, c));
    }
    let huge_client = client()?;
    let mut huge_buf = expose(&huge_client, HUGE)?;
    let huge = prove(&mut exec, Class::Huge.tenant(0), &mut huge_buf, 64)?;
    let (huge, _) = (huge_buf.mint(0, HUGE, Direction::Get)?.1, huge);
    let wrong_client = client()?;
    let mut wrong_buf = expose(&wrong_client, HONEST_LEN)?;
    let wrong = wrong_buf.mint(0, HONEST_LEN, Direction::Get)?.1;
    let wrong = RdmaToken {
        rkey: wrong.rkey ^ 0x00ff_ff00,
        ..wrong
    };
    let template = wrong;
    let mut classes = vec![Class::Dead, Class::ProvenDead, Class::WrongRkey, Class::Huge];
    if roce {
        classes.push(Class::SilentGid);
    }
    // A landing buffer for the attackers' GETs (never checked: they must not succeed, but
    // the huge one's may).
    let sink = pd.register(vec![0u8; HUGE], Access::LOCAL_WRITE)?;
    exec.hold(&sink)?;

    // The run.
    let start = Instant::now();
    let every = Duration::from_secs(1) / a.rate as u32;
    let mut windows: Vec<(Instant, Instant)> = Vec::new();
    let mut window: Option<(Instant, u32)> = None; // (opened, tokens sent)
    let mut quiet_until = start;
    let mut attack_running = 0u64;
    let mut sent = 0u64;
    let mut refused: HashMap<String, u64> = HashMap::new();
    let mut honest_refused: HashMap<Class, u64> = HashMap::new();
    let mut answered: HashMap<(Class, String), u64> = HashMap::new();
    // Honest GETs: (class, started, ended, ok).
    let mut honest: Vec<(Class, Instant, Instant)> = Vec::new();
    let mut next_id = 0u64;
    let mut out = vec![Done::default(); 256];
    loop {
        let now = Instant::now();
        let running_out = now.duration_since(start) >= Duration::from_secs(a.secs);
        // The attack: windows of a second, closed once every token of it is answered.
        match window {
            None if !running_out && now >= quiet_until => window = Some((now, 0)),
            Some((opened, n))
                if now.duration_since(opened) < Duration::from_secs(1) && every * n <= now.duration_since(opened) =>
            {
                let class = classes[(sent % classes.len() as u64) as usize];
                let i = (sent / classes.len() as u64) % a.attackers;
                let id = class.id(sent);
                let mut s = exec.tenant(class.tenant(i));
                let r = match class {
                    Class::Dead => {
                        let t = RdmaToken {
                            dct_number: 0xf0_0000 | (sent as u32 & 0xf_ffff),
                            ..template
                        };
                        s.submit(id, &t, 0, Direction::Get, sink.sge(0, HONEST_LEN)?)
                    }
                    Class::ProvenDead => {
                        let t = stale[(i % stale_n) as usize];
                        s.submit(id, &t, 0, Direction::Get, sink.sge(0, 64)?)
                    }
                    Class::WrongRkey => s.submit(id, &wrong, 0, Direction::Get, sink.sge(0, HONEST_LEN)?),
                    Class::Huge => s.submit(id, &huge, 0, Direction::Get, sink.sge(0, HUGE)?),
                    _ => {
                        let mut gid = [0u8; 16];
                        gid[10..].copy_from_slice(&[0xff, 0xff, 10, 78, 250, (i % 250) as u8]);
                        let t = RdmaToken {
                            gid: Some(gid),
                            ..template
                        };
                        s.submit(id, &t, 0, Direction::Get, sink.sge(0, HONEST_LEN)?)
                    }
                };
                sent += 1;
                window = Some((opened, n + 1));
                match r {
                    Ok(()) => attack_running += 1,
                    Err(e) => {
                        let why = [
                            "tenant_transfers",
                            "tenant_unproven",
                            "unproven_transfers",
                            "max_transfers",
                        ]
                        .into_iter()
                        .find(|b| e.to_string().contains(b))
                        .map_or_else(|| e.to_string(), str::to_string);
                        *refused.entry(why).or_default() += 1;
                    }
                }
            }
            // (Within the second, before the next token is due: nothing to do.)
            Some((opened, _)) if now.duration_since(opened) < Duration::from_secs(1) => {}
            Some((opened, _)) if attack_running == 0 => {
                windows.push((opened, now));
                window = None;
                quiet_until = now + Duration::from_secs(1);
            }
            _ => {}
        }
        // The honest clients: one GET in flight each (one refused is tried again, as an S3
        // client sends a 503 again; its latency counts from the first try).
        if !running_out {
            let news = news
                .iter_mut()
                .enumerate()
                .filter_map(|(k, h)| Some((Class::New, k, h.as_mut()?)));
            for (class, k, h) in news.chain(proven.iter_mut().enumerate().map(|(k, h)| (Class::Proven, k, h))) {
                if h.running.is_some() {
                    continue;
                }
                next_id += 1;
                let (_, t) = h.buf.mint(0, HONEST_LEN, Direction::Get)?;
                let id = class.id(next_id);
                let first = *h.tried.get_or_insert_with(Instant::now);
                match exec
                    .tenant(class.tenant(k as u64))
                    .submit(id, &t, 0, Direction::Get, object.sge(0, HONEST_LEN)?)
                {
                    Ok(()) => (h.running, h.tried) = (Some((id, first)), None),
                    Err(e) if matches!(e.errno(), Some(libc::EBUSY | libc::EAGAIN)) => {
                        *honest_refused.entry(class).or_default() += 1;
                    }
                    Err(e) => return Err(format!("an honest {class:?} GET: {e}").into()),
                }
            }
        }
        let k = exec.poll(&mut out)?;
        for d in &out[..k] {
            let class = Class::of(d.id);
            let ended = Instant::now();
            let mut check = |h: &mut Honest| -> Result<bool, Failure> {
                match h.running {
                    Some((id, s)) if id == d.id => {
                        if !d.is_ok() {
                            return Err(format!("an honest {class:?} GET failed: {d:?}").into());
                        }
                        let mut got = vec![0u8; HONEST_LEN];
                        h.buf.mr().read(0, &mut got)?;
                        if got.iter().enumerate().any(|(i, &b)| b != object_byte(i)) {
                            return Err(format!("an honest {class:?} GET landed wrong bytes").into());
                        }
                        honest.push((class, s, ended));
                        h.running = None;
                        Ok(true)
                    }
                    _ => Ok(false),
                }
            };
            match class {
                Class::New => {
                    for slot in news.iter_mut() {
                        if let Some(h) = slot {
                            if check(h)? {
                                // The next GET goes to a client never met before.
                                *slot = fresh.pop();
                                break;
                            }
                        }
                    }
                }
                Class::Proven => {
                    for h in proven.iter_mut() {
                        if check(h)? {
                            break;
                        }
                    }
                }
                attacker => {
                    attack_running -= 1;
                    let what = if d.is_ok() {
                        "Done".to_string()
                    } else {
                        format!("{:?}", d.status)
                    };
                    *answered.entry((attacker, what)).or_default() += 1;
                }
            }
        }
        let honest_running =
            news.iter().flatten().any(|h| h.running.is_some()) || proven.iter().any(|h| h.running.is_some());
        if running_out && window.is_none() && !honest_running && attack_running == 0 {
            break;
        }
        if k == 0 {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let attacked = |s: Instant, e: Instant| windows.iter().any(|&(o, c)| s <= c && e >= o);
    let on_secs: f64 = windows.iter().map(|(o, c)| c.duration_since(*o).as_secs_f64()).sum();
    println!(
        "s3_attack: {} attackers a class ({:?}), {sent} forged tokens in {} windows ({on_secs:.1} s of {secs:.1} s), {} a second while on; policy {:?}",
        a.attackers,
        classes,
        windows.len(),
        a.rate,
        a.policy
    );
    for class in [Class::New, Class::Proven] {
        let mut alone: Vec<u64> = Vec::new();
        let mut under: Vec<u64> = Vec::new();
        for &(c, s, e) in &honest {
            if c == class {
                let us = e.duration_since(s).as_micros() as u64;
                if attacked(s, e) {
                    under.push(us);
                } else {
                    alone.push(us);
                }
            }
        }
        let (m0, p0) = percentiles(&mut alone);
        let (m1, p1) = percentiles(&mut under);
        let rate0 = alone.len() as f64 / (secs - on_secs).max(0.001);
        let rate1 = under.len() as f64 / on_secs.max(0.001);
        println!(
            "s3_attack: honest {class:?}: alone median {m0} us, p99 {p0} us, {rate0:.0} GETs/s ({}); attacked median {m1} us, p99 {p1} us, {rate1:.0} GETs/s ({}); ratios {:.2}x median (target 2x), {:.2}x p99 (5x), {:.2}x completed (0.8x)",
            alone.len(),
            under.len(),
            m1 as f64 / m0.max(1) as f64,
            p1 as f64 / p0.max(1) as f64,
            rate1 / rate0.max(0.001)
        );
    }
    let mut answered: Vec<_> = answered.into_iter().collect();
    answered.sort_by_key(|((c, w), _)| (*c as u8, w.clone()));
    println!("s3_attack: honest submissions refused (tried again): {honest_refused:?}; attackers answered {answered:?}; refused {refused:?}");
    let stats = exec.stats();
    println!(
        "s3_attack: executor: {} messages, {} proven, {} demoted, {} unproven refused, {} tenant refused",
        stats.messages, stats.proven, stats.demoted, stats.unproven_refused, stats.tenant_refused
    );
    drop((huge_client, wrong_client, fresh, news, proven));
    Ok(())
}

/// The byte the object holds at `i`.
fn object_byte(i: usize) -> u8 {
    (i as u8).wrapping_mul(31).wrapping_add(7)
}

/// Median and 99th percentile of `v` (0 when empty).
fn percentiles(v: &mut [u64]) -> (u64, u64) {
    v.sort_unstable();
    let at = |p: usize| {
        v.get((v.len() * p / 100).min(v.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    (at(50), at(99))
}
