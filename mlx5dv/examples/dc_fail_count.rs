//! What a failed request costs a `DciPool` against the endpoints it holds (issue 45: failure
//! handling without a scan of the whole table): a pool (`Dcs`, 4 DCIs) with N endpoints (a
//! server's remembered clients, none of them busy) and one more naming a DCT nobody serves;
//! F writes to that one, each failing with retry exceeded (ACK timeout 8, 1 retry) and its DCI
//! recovered before the next. Under callgrind (`scripts/dc-fail-count`) only [`failures`] is
//! collected, so the instructions per failed request can be compared between N.
//!
//!   dc_fail_count [--endpoints N] [--failures F]   (InfiniBand; under scripts/soft-mlx5)

use mlx5dv::endpoint::{EpCompletion, PoolConfig, Request};
use mlx5dv::{Access, DcKey, DcPeer, DcTargetAddr, DciPool, DctBuilder, EndpointId, PeerPath, Policy, WcStatus};
use std::time::{Duration, Instant};

type Failure = Box<dyn std::error::Error + Send + Sync>;

const KEY: DcKey = DcKey::new(0x4641_494c_434f_554e);

fn main() -> Result<(), Failure> {
    let (mut endpoints, mut count) = (1000usize, 20usize);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let n: usize = value.parse().map_err(|e| format!("{flag} {value}: {e}"))?;
        match flag.as_str() {
            "--endpoints" => endpoints = n,
            "--failures" => count = n,
            other => {
                return Err(format!("unknown option {other}: dc_fail_count [--endpoints N] [--failures F]").into())
            }
        }
    }
    let ctx = mlx5dv::open_device_from_env()?;
    let (mlx5, pd) = (ctx.mlx5()?, ctx.alloc_pd()?);
    if ctx.query_port(1)?.is_ethernet() {
        return Err("dc_fail_count runs on InfiniBand (--profile cx5-ib)".into());
    }
    // A live DCT, for the port's address: the endpoints name other DCT numbers behind it.
    let (dct_cq, srq) = (ctx.create_cq(16)?, pd.create_srq(16, 1)?);
    let dct = DctBuilder::new(&mlx5, &pd, &dct_cq, &srq, KEY).port(1).build()?;
    let live = dct.target_addr()?;
    let cfg = PoolConfig {
        dcis: 4,
        max_endpoints: endpoints + 1,
        policy: Policy::Dcs,
        port: 1,
        ..PoolConfig::default()
    };
    let mut cfg = cfg;
    (cfg.rts.timeout, cfg.rts.retry_cnt) = (8, 1);
    let cq = ctx.create_cq(4 * cfg.max_send_wr + 1)?;
    let mut pool = DciPool::new(&mlx5, &pd, cq, cfg)?;
    let ah = pd.create_ah(1, &PeerPath::to_dc_target(&live, None))?;
    let other = |dct_number: u32| DcTargetAddr { dct_number, ..live };
    for i in 0..endpoints as u32 {
        // DCT numbers nobody is sent to (24 bits, away from the live one's).
        pool.add_endpoint(DcPeer::new(&ah, &other(0x80_0000 + i), KEY))?;
    }
    let dead = pool.add_endpoint(DcPeer::new(&ah, &other(0x7f_fff0), KEY))?;
    let buf = pd.register(vec![0u8; 64], Access::LOCAL_WRITE)?;
    pool.hold(&buf)?;
    let start = Instant::now();
    let failed = failures(&mut pool, dead, &buf, count)?;
    println!(
        "dc_fail_count: {endpoints} endpoints, {failed} of {count} writes to a dead DCT failed with retry exceeded, \
         {} DCI recoveries, in {:.2} s",
        pool.recoveries().dcis,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `count` writes to `dead`, one at a time, each polled to its completion and the pool until
/// its DCI is back (a post refused for room meanwhile is tried again); returns how many
/// failed with retry exceeded. Never inlined: callgrind collects it alone.
#[inline(never)]
fn failures(pool: &mut DciPool, dead: EndpointId, buf: &mlx5dv::Mr<Vec<u8>>, count: usize) -> Result<usize, Failure> {
    let mut out = [EpCompletion::default(); 8];
    let mut failed = 0;
    let deadline = Instant::now() + Duration::from_secs(600);
    for i in 0..count {
        let remote = mlx5dv::RemoteMemory {
            addr: 0x1000,
            len: 64,
            rkey: 1,
        };
        loop {
            match pool.post(
                dead,
                i as u64,
                Request::Write {
                    local: buf.sge(0, 64)?,
                    remote,
                },
            ) {
                Ok(()) => break,
                Err(e) if e.is_would_block() => {
                    if pool.poll(&mut out)? == 0 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                Err(e) => return Err(e.into()),
            }
            if Instant::now() > deadline {
                return Err("the pool never took the write (backstop)".into());
            }
        }
        'done: loop {
            let k = pool.poll(&mut out)?;
            if k == 0 {
                // The ACK timeouts run: sleep, so that the count holds the failure's work and
                // not a busy loop's (whose length is the machine's speed).
                std::thread::sleep(Duration::from_millis(1));
            }
            for c in &out[..k] {
                if c.wr_id == i as u64 {
                    failed += usize::from(c.status == WcStatus::RetryExcErr);
                    break 'done;
                }
            }
            if Instant::now() > deadline {
                return Err("the write never completed (backstop)".into());
            }
        }
    }
    // The last failure's DCI back.
    while pool.in_flight() > 0 {
        if pool.poll(&mut out)? == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    Ok(failed)
}
