//! The crate's side of the S3-over-RDMA rendezvous protocol (tests/s3ref/PROTOCOL.md): the
//! same roles as the reference's drivers (`s3ref_server`, `s3ref_client`, `s3ref_bench`), on
//! `mlx5dv::s3` (a [`Client`] minting tokens, an [`Executor`] executing them), so that tokens
//! minted by either side are executed by the other (`scripts/s3-reference --server ... --client
//! ...`) and the two executors are measured alike (`--bench-cmd`).
//!
//! ```text
//! s3ref-rust [--bench] -s SIZE [-n ROUNDS] [-o read|write|alt] [-t SECONDS]
//!            [-T TRANSFERS] [-q DEPTH] [-w WARMUP] [-E POLLS] [-Y US] [--dcis N]
//! ```
//! `--dcis`: the executor's DCIs (4 for the server; 1 for the benchmark, as the reference's
//! server has one QP).
//! ```text
//! ```
//! Node 0 (`SOFT_MLX5_NODE_INDEX`) is the server (with `--bench`, the benchmark server), the
//! others clients; the device is `MLX5DV_TEST_DEVICE` (port 1), the GID index on RoCE
//! `MLX5DV_TEST_GID_INDEX` (or the port's first RoCE v2 GID).
use mlx5dv::s3::{Client, ClientConfig, Direction, Done, Executor, ExecutorConfig, REFERENCE_DC_KEY};
use mlx5dv::{Access, Context, Mlx5Context, Mr, Pd};
use mlx5dv_suite::s3_pattern;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

struct Opts {
    bench: bool,
    size: usize,
    rounds: u32,
    op: String,
    timeout: Duration,
    transfers: u64,
    depth: usize,
    warmup: Option<u64>,
    empty_polls: u64,
    idle_us: Option<u64>,
    dcis: Option<usize>,
    node: u32,
    clients: u32,
    dir: PathBuf,
}

fn publish(dir: &Path, name: &str, line: &str) -> Result<(), String> {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, format!("{line}\n")).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join(name)).map_err(|e| format!("{name}: {e}"))
}

/// The line of `name` once it exists (None while it does not).
fn read_line(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name))
        .ok()
        .map(|s| s.trim_end().to_string())
}

fn wait_line(dir: &Path, name: &str, limit: Duration) -> Result<String, String> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(l) = read_line(dir, name) {
            return Ok(l);
        }
        if Instant::now() > deadline {
            return Err(format!("{name} did not appear within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

struct Dev {
    ctx: Context,
    mlx5: Mlx5Context,
    pd: Pd,
}

fn open() -> Result<Dev, String> {
    let name = std::env::var("MLX5DV_TEST_DEVICE").map_err(|_| "MLX5DV_TEST_DEVICE is not set".to_string())?;
    let list = mlx5dv::devices().map_err(|e| e.to_string())?;
    let dev = list
        .iter()
        .find(|d| d.name() == name)
        .ok_or(format!("no device {name}"))?;
    let ctx = dev.open().map_err(|e| e.to_string())?;
    let mlx5 = ctx.mlx5().map_err(|e| e.to_string())?;
    let pd = ctx.alloc_pd().map_err(|e| e.to_string())?;
    Ok(Dev { ctx, mlx5, pd })
}

fn gid_index() -> Option<u8> {
    std::env::var("MLX5DV_TEST_GID_INDEX").ok().and_then(|g| g.parse().ok())
}

fn client(o: &Opts) -> Result<(), String> {
    let d = open()?;
    let cfg = ClientConfig {
        gid_index: gid_index(),
        ..ClientConfig::default()
    };
    let c = Client::new(&d.mlx5, &d.pd, REFERENCE_DC_KEY, cfg).map_err(|e| e.to_string())?;
    let mr =
        d.pd.register(vec![0u8; o.size], Access::LOCAL_WRITE)
            .map_err(|e| e.to_string())?;
    let mut buf = c.expose(mr).map_err(|e| e.to_string())?;
    let i = o.node;
    for r in 0..o.rounds {
        let read = match o.op.as_str() {
            "read" => true,
            "write" => false,
            _ => (i + r) % 2 == 1,
        };
        let seed = 1000 * i + r;
        let fill = if read {
            s3_pattern(o.size, u64::from(seed))
        } else {
            vec![0xff; o.size]
        };
        buf.write(0, &fill).map_err(|e| e.to_string())?;
        // The server reads (PUT) or writes (GET) the buffer: the token grants just that.
        let dir = if read { Direction::Put } else { Direction::Get };
        let (id, token) = buf.mint(0, o.size, dir).map_err(|e| e.to_string())?;
        let text = token.format().map_err(|e| e.to_string())?;
        let op = if read { "read" } else { "write" };
        publish(&o.dir, &format!("token.{i}.{r}"), &format!("{op} {seed} {text}"))?;
        let done = wait_line(&o.dir, &format!("done.{i}.{r}"), o.timeout)?;
        let bytes: u64 = done
            .strip_prefix("ok ")
            .and_then(|b| b.parse().ok())
            .ok_or(format!("round {r}: the server answered {done:?}"))?;
        if bytes == 0 || !bytes.is_multiple_of(o.size as u64) {
            return Err(format!("round {r}: {bytes} bytes for a {}-byte token", o.size));
        }
        if !read {
            let mut got = vec![0u8; o.size];
            buf.mr().read(0, &mut got).map_err(|e| e.to_string())?;
            if let Some(k) = got
                .iter()
                .zip(s3_pattern(o.size, u64::from(seed)))
                .position(|(a, b)| *a != b)
            {
                return Err(format!("round {r}: the bytes written differ at {k}"));
            }
        }
        buf.revoke(id).map_err(|e| e.to_string())?;
    }
    println!("s3ref-rust client {i}: {} rounds of {} bytes checked", o.rounds, o.size);
    Ok(())
}

/// An executor with room for `depth` transfers, on `dcis` DCIs.
fn executor(d: &Dev, depth: usize, dcis: usize) -> Result<Executor, String> {
    let mut cfg = ExecutorConfig {
        gid_index: gid_index(),
        max_transfers: depth.max(1),
        ..ExecutorConfig::default()
    };
    cfg.pool.dcis = dcis.max(1);
    if let Some(n) = std::env::var("S3REF_MAX_RD_ATOMIC").ok().and_then(|v| v.parse().ok()) {
        cfg.pool.rts.max_rd_atomic = n;
    }
    let cq = d.ctx.create_cq(cfg.cq_size()).map_err(|e| e.to_string())?;
    Executor::new(&d.mlx5, &d.pd, cq, cfg).map_err(|e| e.to_string())
}

/// A token file's line: (read, seed, token text).
fn parse_line(line: &str) -> Result<(bool, u32, String), String> {
    let mut f = line.split(' ');
    match (f.next(), f.next().and_then(|s| s.parse().ok()), f.next(), f.next()) {
        (Some(op @ ("read" | "write")), Some(seed), Some(token), None) => Ok((op == "read", seed, token.to_string())),
        _ => Err(format!("malformed token line {line:?}")),
    }
}

/// A page-aligned local buffer the executor holds, filled with 0xff (as the reference's
/// drivers map theirs).
fn local(d: &Dev, exec: &mut Executor, size: usize) -> Result<Mr, String> {
    let mut mr = d.pd.alloc_mr(size, Access::LOCAL_WRITE).map_err(|e| e.to_string())?;
    mr.write(0, &vec![0xff; size]).map_err(|e| e.to_string())?;
    exec.hold(&mr).map_err(|e| e.to_string())?;
    Ok(mr)
}

fn server(o: &Opts) -> Result<(), String> {
    let d = open()?;
    let mut exec = executor(&d, o.clients as usize, o.dcis.unwrap_or(4))?;
    let n = o.clients as usize;
    let mut bufs = Vec::new();
    for _ in 0..n {
        bufs.push(local(&d, &mut exec, o.size)?);
    }
    // Per client: its next round, and the (read, seed) of the token being executed.
    let mut next = vec![0u32; n];
    let mut running: Vec<Option<(bool, u32)>> = vec![None; n];
    let mut failures = 0;
    let mut out = vec![Done::default(); 16];
    let mut last = Instant::now();
    while next.iter().any(|&r| r < o.rounds) {
        for c in 0..n {
            let i = c as u32 + 1;
            if next[c] >= o.rounds || running[c].is_some() {
                continue;
            }
            if read_line(&o.dir, &format!("abort.{i}")).is_some() {
                failures += o.rounds - next[c];
                next[c] = o.rounds;
                continue;
            }
            let Some(line) = read_line(&o.dir, &format!("token.{i}.{}", next[c])) else {
                continue;
            };
            let started = parse_line(&line).and_then(|(read, seed, token)| {
                let fill = if read {
                    vec![0xff; o.size]
                } else {
                    s3_pattern(o.size, u64::from(seed))
                };
                bufs[c].write(0, &fill).map_err(|e| e.to_string())?;
                let len = o.size.min(bufs[c].len());
                let dir = if read { Direction::Put } else { Direction::Get };
                let sge = bufs[c].sge(0, len).map_err(|e| e.to_string())?;
                exec.submit_str(c as u64, &token, 0, dir, sge)
                    .map_err(|e| e.to_string())?;
                Ok((read, seed))
            });
            match started {
                Ok(s) => running[c] = Some(s),
                Err(e) => {
                    failures += 1;
                    publish(&o.dir, &format!("done.{i}.{}", next[c]), &format!("err {e}"))?;
                    next[c] += 1;
                }
            }
        }
        let k = exec.poll(&mut out).map_err(|e| e.to_string())?;
        for d in &out[..k] {
            let c = d.id as usize;
            let (read, seed) = running[c].take().expect("a transfer of this client runs");
            let mut reply = format!("ok {}", d.bytes);
            if !d.is_ok() {
                reply = format!("err {:?}", d.status);
            } else if read {
                let mut got = vec![0u8; o.size];
                bufs[c].read(0, &mut got).map_err(|e| e.to_string())?;
                if let Some(k) = got
                    .iter()
                    .zip(s3_pattern(o.size, u64::from(seed)))
                    .position(|(a, b)| *a != b)
                {
                    reply = format!("err the bytes read differ at {k}");
                }
            }
            if !reply.starts_with("ok") {
                failures += 1;
            }
            publish(&o.dir, &format!("done.{}.{}", c + 1, next[c]), &reply)?;
            next[c] += 1;
            last = Instant::now();
        }
        if k == 0 {
            if last.elapsed() > o.timeout {
                return Err(format!("nothing happened for {:?}", o.timeout));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    println!(
        "s3ref-rust server: {} clients x {} rounds, {failures} failed; endpoints {} address handles {}",
        n,
        o.rounds,
        exec.clients(),
        exec.address_handles()
    );
    if failures > 0 {
        return Err(format!("{failures} tokens failed"));
    }
    Ok(())
}

/// The phase marker callgrind dumps before (PROTOCOL.md, "Benchmark").
#[no_mangle]
#[inline(never)]
pub extern "C" fn s3bench_phase(phase: i32) {
    std::hint::black_box(phase);
}

/// One transfer submitted: the token parsed from its text, as a server takes it from a header.
#[no_mangle]
#[inline(never)]
pub fn s3rust_submit(exec: &mut Executor, id: u64, token: &str, dir: Direction, mr: &Mr) -> bool {
    match mr.sge(0, mr.len()) {
        Ok(sge) => exec.submit_str(id, token, 0, dir, sge).is_ok(),
        Err(_) => false,
    }
}

/// One poll for finished transfers.
#[no_mangle]
#[inline(never)]
pub fn s3rust_poll(exec: &mut Executor, out: &mut [Done]) -> usize {
    exec.poll(out).unwrap_or(usize::MAX)
}

struct Bench {
    tokens: Vec<(bool, u32, String)>,
    bufs: Vec<Mr>,
    done: Vec<u64>,
    polls: u64,
    empty: u64,
}

impl Bench {
    /// `n` transfers at depth `q`, round-robin over the clients' tokens.
    fn run(&mut self, exec: &mut Executor, o: &Opts, n: u64) -> Result<(), String> {
        let mut out = vec![Done::default(); 16];
        let (mut submitted, mut completed, mut outstanding, mut next) = (0u64, 0u64, 0usize, 0usize);
        let mut last = Instant::now();
        while completed < n {
            while outstanding < o.depth && submitted < n {
                let (read, _, token) = &self.tokens[next];
                let dir = if *read { Direction::Put } else { Direction::Get };
                if !s3rust_submit(exec, next as u64, token, dir, &self.bufs[next]) {
                    return Err(format!("submit failed after {submitted} transfers"));
                }
                submitted += 1;
                outstanding += 1;
                next = (next + 1) % self.tokens.len();
            }
            let got = s3rust_poll(exec, &mut out);
            if got == usize::MAX {
                return Err("poll failed".into());
            }
            self.polls += 1;
            if got == 0 {
                self.empty += 1;
                match o.idle_us {
                    Some(0) => std::thread::yield_now(),
                    Some(us) => std::thread::sleep(Duration::from_micros(us)),
                    None => {}
                }
                if self.empty & 4095 == 0 && last.elapsed() > o.timeout {
                    return Err(format!("no completion for {:?} ({outstanding} outstanding)", o.timeout));
                }
                continue;
            }
            for d in &out[..got] {
                if !d.is_ok() {
                    return Err(format!("transfer to client {} completed with {:?}", d.id + 1, d.status));
                }
                self.done[d.id as usize] += 1;
            }
            completed += got as u64;
            outstanding -= got;
            last = Instant::now();
        }
        Ok(())
    }
}

fn bench(o: &Opts) -> Result<(), String> {
    let d = open()?;
    // One DCI unless told otherwise: the reference's server has one QP.
    let mut exec = executor(&d, o.depth, o.dcis.unwrap_or(1))?;
    let mut b = Bench {
        tokens: Vec::new(),
        bufs: Vec::new(),
        done: vec![0; o.clients as usize],
        polls: 0,
        empty: 0,
    };
    for i in 1..=o.clients {
        let line = wait_line(&o.dir, &format!("token.{i}.0"), o.timeout)?;
        let (read, seed, token) = parse_line(&line)?;
        let mr = local(&d, &mut exec, o.size)?;
        let mut mr = mr;
        if !read {
            mr.write(0, &s3_pattern(o.size, u64::from(seed)))
                .map_err(|e| e.to_string())?;
        }
        b.tokens.push((read, seed, token));
        b.bufs.push(mr);
    }
    s3bench_phase(1);
    let warmup = o.warmup.unwrap_or(4 * o.depth as u64);
    let mut result = b.run(&mut exec, o, warmup);
    s3bench_phase(2);
    (b.polls, b.empty) = (0, 0);
    let t0 = Instant::now();
    if result.is_ok() {
        result = b.run(&mut exec, o, o.transfers);
    }
    let secs = t0.elapsed().as_secs_f64();
    s3bench_phase(3);
    let mut out = vec![Done::default(); 16];
    for _ in 0..o.empty_polls {
        if result.is_ok() && s3rust_poll(&mut exec, &mut out) != 0 {
            result = Err("a completion after the run".into());
        }
    }
    s3bench_phase(4);
    for (c, (read, seed, _)) in b.tokens.iter().enumerate() {
        if result.is_ok() && *read {
            let mut got = vec![0u8; o.size];
            b.bufs[c].read(0, &mut got).map_err(|e| e.to_string())?;
            if got != s3_pattern(o.size, u64::from(*seed)) {
                result = Err(format!("client {}: the bytes read differ", c + 1));
            }
        }
        let reply = match &result {
            Ok(()) if b.done[c] > 0 => format!("ok {}", b.done[c] * o.size as u64),
            _ => "err benchmark failed".to_string(),
        };
        publish(&o.dir, &format!("done.{}.0", c + 1), &reply)?;
    }
    result?;
    let reads = b.tokens.iter().filter(|t| t.0).count();
    let op = match reads {
        0 => "write",
        r if r == b.tokens.len() => "read",
        _ => "mixed",
    };
    println!(
        "transfers={} seconds={secs:.6} rate={:.1}/s size={} depth={} clients={} op={op} polls={} empty_polls={}",
        o.transfers,
        o.transfers as f64 / secs,
        o.size,
        o.depth,
        o.clients,
        b.polls,
        b.empty
    );
    Ok(())
}

fn parse() -> Result<Opts, String> {
    let env_num = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u32>().ok());
    let mut o = Opts {
        bench: false,
        size: 65536,
        rounds: 1,
        op: "alt".into(),
        timeout: Duration::from_secs(30),
        transfers: 10_000,
        depth: 16,
        warmup: None,
        empty_polls: 0,
        idle_us: None,
        dcis: None,
        node: env_num("SOFT_MLX5_NODE_INDEX").unwrap_or(0),
        clients: env_num("SOFT_MLX5_NODES").map_or(1, |n| n.saturating_sub(1).max(1)),
        dir: std::env::var_os("SOFT_MLX5_RENDEZVOUS").map_or_else(|| PathBuf::from("."), PathBuf::from),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--bench" {
            o.bench = true;
            continue;
        }
        let v = args.next().ok_or(format!("{a} needs a value"))?;
        let num = || v.parse::<u64>().map_err(|e| format!("{a} {v}: {e}"));
        match a.as_str() {
            "-s" => o.size = num()? as usize,
            "-n" => o.rounds = num()? as u32,
            "-o" => o.op = v.clone(),
            "-t" => o.timeout = Duration::from_secs(num()?),
            "-T" => o.transfers = num()?,
            "-q" => o.depth = num()? as usize,
            "-w" => o.warmup = Some(num()?),
            "-E" => o.empty_polls = num()?,
            "-Y" => o.idle_us = Some(num()?),
            "--dcis" => o.dcis = Some(num()? as usize),
            "-D" => o.dir = PathBuf::from(&v),
            "-i" => o.node = num()? as u32,
            "-c" => o.clients = num()? as u32,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(o)
}

fn main() -> ExitCode {
    let r = parse().and_then(|o| match (o.node, o.bench) {
        (0, true) => bench(&o),
        (0, false) => server(&o),
        _ => client(&o).inspect_err(|e| {
            let _ = publish(&o.dir, &format!("abort.{}", o.node), e);
        }),
    });
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("s3ref-rust: {e}");
            ExitCode::FAILURE
        }
    }
}
