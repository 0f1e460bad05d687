//! What a token costs the client: a mint and a revoke, as a registration each (the default)
//! and as a memory window each (`ClientConfig::windows`), timed in one process, the two kinds
//! in alternating rounds so that the machine's drift falls on both alike.
//!
//! ```text
//! cargo run --release --example s3_token_cost -- [-d DEVICE] [--len BYTES] [--rounds N]
//! ```
//!
//! On soft-mlx5 (`scripts/soft-mlx5 -- target/release/examples/s3_token_cost`) a registration
//! is the emulated kernel's bookkeeping, with none of the pinning and firmware commands a
//! ConnectX needs, and a bind waits for the emulated device thread: the figures compare the
//! two paths through the real libmlx5, not what silicon would take.

use mlx5dv::s3::{Client, ClientConfig, Direction, REFERENCE_DC_KEY};
use mlx5dv::{devices, Access};
use std::time::Instant;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> mlx5dv::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let len: usize = arg(&args, "--len").and_then(|v| v.parse().ok()).unwrap_or(1 << 20);
    let rounds: usize = arg(&args, "--rounds").and_then(|v| v.parse().ok()).unwrap_or(20);
    const PER_ROUND: usize = 100;
    let list = devices()?;
    let dev = match arg(&args, "-d") {
        Some(name) => list.iter().find(|d| d.name() == name),
        None => list.iter().next(),
    };
    let Some(dev) = dev else {
        eprintln!("s3_token_cost: no RDMA device (run it under scripts/soft-mlx5, or name one with -d)");
        std::process::exit(2);
    };
    let ctx = dev.open()?;
    let (mlx5, pd) = (ctx.mlx5()?, ctx.alloc_pd()?);
    let mut kinds = Vec::new();
    for windows in [false, true] {
        let cfg = ClientConfig {
            windows,
            ..ClientConfig::default()
        };
        let client = Client::new(&mlx5, &pd, REFERENCE_DC_KEY, cfg)?;
        let exposed = client.expose(pd.register(vec![0u8; len], Access::LOCAL_WRITE)?)?;
        kinds.push((
            if windows { "window" } else { "registration" },
            client,
            exposed,
            Vec::new(),
        ));
    }
    for _ in 0..rounds {
        for (_, _, exposed, ns) in &mut kinds {
            let t = Instant::now();
            for _ in 0..PER_ROUND {
                let (id, _token) = exposed.mint(0, len, Direction::Get)?;
                exposed.revoke(id)?;
            }
            ns.push(t.elapsed().as_nanos() as f64 / PER_ROUND as f64);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut medians = Vec::new();
    for (name, _, _, ns) in &mut kinds {
        let m = median(ns);
        println!(
            "s3 token {name}: {:.1} us per mint + revoke ({len} bytes, median of {rounds} rounds of {PER_ROUND})",
            m / 1000.0
        );
        medians.push(m);
    }
    println!("s3 token window/registration: {:.2}", medians[1] / medians[0]);
    Ok(())
}
