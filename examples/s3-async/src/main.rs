//! S3 over RDMA, async: an object server on axum and an async client, on tokio, over the
//! library's async executor (mlx5dv::s3::AsyncExecutor, feature `tokio`).
//!
//!   s3-async node [--tasks T] [--transfers N] [--max-size B] [--windows] [--data-path async|sync]
//!       under scripts/soft-mlx5-nodes: node 0 serves (until every other node said bye),
//!       the others are clients of T tasks x N transfers each
//!   s3-async serve [--listen ADDR] [--clients C] [--data-path async|sync] [--tenant none|ip]
//!   s3-async client --url URL [--tasks T] [--transfers N] [--max-size B] [--windows] [--node I]
//!
//! The server's RDMA data path is src/rdma.rs; HTTP is src/server.rs; the client src/client.rs.
//! `--data-path sync` runs the same server on the sync executor instead, on a thread of its
//! own (src/rdma_sync.rs): the baseline scripts/s3-async-server-count measures it against.
//! `--tenant ip` (node and serve): each request is the tenant of its peer's IP address
//! (`mlx5dv::s3::Tenant`, issue 45: the executor shares its DCIs between tenants fairly and
//! bounds each); `none` (the default): every request is the default tenant's.

mod client;
#[path = "../../../mlx5dv/examples/common/s3.rs"]
mod common;
mod rdma;
mod rdma_sync;
mod server;

use mlx5dv::s3::{Client, ClientConfig};
use rdma::DataPath;
use std::sync::Arc;
use std::time::{Duration, Instant};

type Failure = Box<dyn std::error::Error + Send + Sync>;

struct Args {
    mode: String,
    listen: String,
    url: Option<String>,
    clients: usize,
    plan: client::Plan,
    windows: bool,
    /// The server's data path: the async executor (false) or the sync one on a thread.
    sync: bool,
    /// `--tenant ip`: a request's tenant is its peer's IP address.
    tenant_by_ip: bool,
}

fn args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mode = it
        .next()
        .ok_or("usage: s3-async node|serve|client [options] (see src/main.rs)")?;
    let mut a = Args {
        mode,
        listen: "127.0.0.1:0".into(),
        url: None,
        clients: 1,
        plan: client::Plan {
            node: 1,
            tasks: 16,
            transfers: 1000,
            max_size: 8 << 20,
        },
        windows: false,
        sync: false,
        tenant_by_ip: false,
    };
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let num = |v: String| v.parse::<u64>().map_err(|e| format!("{v}: {e}"));
        match flag.as_str() {
            "--listen" => a.listen = value()?,
            "--url" => a.url = Some(value()?),
            "--clients" => a.clients = num(value()?)? as usize,
            "--tasks" => a.plan.tasks = num(value()?)?,
            "--transfers" => a.plan.transfers = num(value()?)?,
            "--max-size" => a.plan.max_size = num(value()?)? as usize,
            "--node" => a.plan.node = num(value()?)?,
            "--windows" => a.windows = true,
            "--tenant" => {
                a.tenant_by_ip = match value()?.as_str() {
                    "none" => false,
                    "ip" => true,
                    other => return Err(format!("--tenant {other}: none or ip")),
                }
            }
            "--data-path" => {
                a.sync = match value()?.as_str() {
                    "async" => false,
                    "sync" => true,
                    other => return Err(format!("--data-path {other}: async or sync")),
                }
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(a)
}

fn main() -> Result<(), Failure> {
    let mut a = args()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    if a.mode == "node" {
        let index: u64 = std::env::var("SOFT_MLX5_NODE_INDEX")?.parse()?;
        let nodes: usize = std::env::var("SOFT_MLX5_NODES")?.parse()?;
        let file = common::rendezvous_file().ok_or("node mode runs under scripts/soft-mlx5-nodes")?;
        let file = file.with_file_name("s3_async.url");
        if index == 0 {
            a.clients = nodes - 1;
            return rt.block_on(serve(&a, Some(&file)));
        }
        a.plan.node = index;
        a.url = Some(common::wait_for(&file, Duration::from_secs(60))?);
        return rt.block_on(run_client(&a));
    }
    match a.mode.as_str() {
        "serve" => rt.block_on(serve(&a, None)),
        "client" => rt.block_on(run_client(&a)),
        other => Err(format!("unknown mode {other}: node, serve or client").into()),
    }
}

async fn serve(a: &Args, publish: Option<&std::path::Path>) -> Result<(), Failure> {
    let ctx = mlx5dv::open_device_from_env()?;
    let (mlx5, pd) = (ctx.mlx5()?, ctx.alloc_pd()?);
    let key = common::DEFAULT_KEY;
    let path = if a.sync {
        DataPath::Sync(rdma_sync::spawn(rdma::core(&ctx, &mlx5, &pd, key)?)?)
    } else {
        DataPath::Async(rdma::executor(&ctx, &mlx5, &pd, key)?)
    };
    let listener = tokio::net::TcpListener::bind(&a.listen).await?;
    let url = format!("http://{}", listener.local_addr()?);
    match publish {
        Some(file) => common::publish(file, &url)?,
        None => println!("serving on {url}"),
    }
    let (rdma, plain) = server::serve(listener, pd, path.clone(), a.clients, a.plan.max_size, a.tenant_by_ip).await?;
    let (s, in_flight, wakes) = match path {
        DataPath::Async(exec) => {
            let st = exec.stats();
            let wakes = format!(
                "driver: {} steps, {} events, {} arms, {} waited",
                st.steps, st.events, st.arms, st.waited
            );
            (exec.with_executor(|e| e.stats()), exec.in_flight(), wakes)
        }
        DataPath::Sync(path) => {
            let r = path.finish()?;
            let wakes = format!(
                "sync thread: {} sleeps, {} events, {} arms, {} waited",
                r.sleeps, r.events, r.arms, r.waited
            );
            (r.stats, r.in_flight, wakes)
        }
    };
    println!(
        "server: {rdma} transfers by RDMA (each from or into the object's own region), {plain} over plain bodies; \
         executor: {} submitted, {} failed, {} messages; {wakes}",
        s.submitted, s.failed, s.messages
    );
    if s.failed > 0 || in_flight > 0 {
        return Err(format!("{} transfers failed, {in_flight} in flight at the end", s.failed).into());
    }
    Ok(())
}

async fn run_client(a: &Args) -> Result<(), Failure> {
    let url = a.url.clone().ok_or("client mode needs --url")?;
    let ctx = mlx5dv::open_device_from_env()?;
    let (mlx5, pd) = (ctx.mlx5()?, ctx.alloc_pd()?);
    let cfg = ClientConfig {
        windows: a.windows,
        ..ClientConfig::default()
    };
    let client = Arc::new(Client::new(&mlx5, &pd, common::DEFAULT_KEY, cfg)?);
    let start = Instant::now();
    let t = client::run(&url, client, pd, a.plan).await?;
    println!(
        "client {}: {} tasks, {} transfers by RDMA and {} over plain bodies, {} bytes checked, in {:.1} s",
        a.plan.node,
        a.plan.tasks,
        t.rdma,
        t.plain,
        t.bytes,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
