//! The async client: tasks, each with a buffer behind the process's DCT, PUT and GET objects
//! (whole and by range) with a token per request (revoked when its guard drops), some over
//! plain bodies, and check every byte.
//!
//! Minting stays synchronous: with `--windows` a mint and a revoke are one memory-window bind
//! each (a work request and its completion, microseconds on hardware, no system call), else one
//! registration each; neither waits on the network, so a task does it inline.

use crate::common::pattern;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::Request;
use hyper_util::client::legacy::{connect::HttpConnector, Client as Http};
use hyper_util::rt::TokioExecutor;
use mlx5dv::s3::checksum::{Algorithm, Digest};
use mlx5dv::s3::http::{rdma_headers, read_answer, Answer};
use mlx5dv::s3::protocol::Reply;
use mlx5dv::s3::{Client, Direction, Exposed};
use mlx5dv::{Access, Pd};
use std::sync::Arc;

type HttpClient = Http<HttpConnector, Full<Bytes>>;

/// What one process runs.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// This process's number (objects' names and bytes differ per process).
    pub node: u64,
    /// Tasks at once.
    pub tasks: u64,
    /// Transfers per task (half PUTs, half GETs).
    pub transfers: u64,
    /// The largest object.
    pub max_size: usize,
}

/// What the tasks did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Transfers moved by RDMA, every byte checked.
    pub rdma: u64,
    /// Transfers over plain bodies, every byte checked.
    pub plain: u64,
    /// Bytes checked.
    pub bytes: u64,
}

/// The size of object `j` of task `task`: 1 B to `max` (see docs/guide.md for the mix).
pub fn size_of(task: u64, j: u64, max: usize) -> usize {
    let h = (task.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ j.wrapping_mul(0xbf58_476d_1ce4_e5b9)).rotate_left(29);
    let log_uniform = |lo: usize, hi: usize| {
        let (a, b) = (lo.max(1).ilog2(), hi.ilog2());
        let bits = a + (h % u64::from(b - a + 1)) as u32;
        ((1usize << bits) + (h >> 20) as usize % (1usize << bits)).clamp(lo, hi)
    };
    match j % 100 {
        0 if j % 200 == 0 => max,                            // the largest, twice in 1,000 transfers
        0 => 1,                                              // the smallest
        50 => log_uniform(1 << 20, max),                     // 1 MiB .. max
        10 | 30 | 70 | 90 => log_uniform(64 << 10, 1 << 20), // 64 KiB .. 1 MiB
        _ => log_uniform(1, 64 << 10),                       // 1 B .. 64 KiB
    }
}

/// Runs `plan` against the server at `base` (`http://host:port`).
pub async fn run(base: &str, client: Arc<Client>, pd: Pd, plan: Plan) -> Result<Tally, String> {
    let http: HttpClient = Http::builder(TokioExecutor::new()).build_http();
    let mut tasks = Vec::new();
    for t in 0..plan.tasks {
        let (http, client, pd, base) = (http.clone(), Arc::clone(&client), pd.clone(), base.to_string());
        tasks.push(tokio::spawn(
            async move { task(&base, &http, &client, &pd, plan, t).await },
        ));
    }
    let mut tally = Tally::default();
    for t in tasks {
        let got = t.await.map_err(|e| format!("a task panicked: {e}"))??;
        tally.rdma += got.rdma;
        tally.plain += got.plain;
        tally.bytes += got.bytes;
    }
    let bye = Request::post(format!("{base}/_bye"))
        .body(Full::default())
        .map_err(err)?;
    http.request(bye).await.map_err(|e| format!("bye: {e}"))?;
    Ok(tally)
}

async fn task(base: &str, http: &HttpClient, client: &Client, pd: &Pd, plan: Plan, t: u64) -> Result<Tally, String> {
    let mr = pd
        .register(vec![0u8; plan.max_size], Access::LOCAL_WRITE)
        .map_err(err)?;
    let mut buf = client.expose(mr).map_err(err)?;
    let mut tally = Tally::default();
    let global = plan.node * 1000 + t;
    for j in 0..plan.transfers / 2 {
        let len = size_of(global, j, plan.max_size);
        let seed = (global << 32) | j;
        let data = pattern(len, seed);
        let url = format!("{base}/n{}-t{t}-{}", plan.node, j % 4);
        let plain = j % 10 == 9;
        // PUT
        if plain {
            let req = Request::put(&url).body(Full::new(Bytes::from(data.clone())));
            let (status, ..) = send(http, req).await?;
            check(status == 200, || format!("{url}: plain PUT answered {status}"))?;
        } else {
            let sum = Digest::of(Algorithm::Crc64Nvme, &data);
            if j == 0 {
                // Once a task: the bytes changed after their checksum (one byte flipped in
                // the buffer): 400 BadDigest, nothing stored.
                let mut bad = data.clone();
                bad[len / 2] ^= 0x01;
                buf.write(0, &bad).map_err(err)?;
                let url = format!("{url}-bad");
                let a = rdma(http, &mut buf, Request::put(&url), len, Direction::Put, Some(sum)).await?;
                check(a.status == 400 && a.reply == Reply::Absent, || {
                    format!("{url}: an RDMA PUT with one byte unlike its checksum answered {a:?}")
                })?;
                let (status, _) = send(http, Request::get(&url).body(Full::default())).await?;
                check(status == 404, || format!("{url}: stored after BadDigest ({status})"))?;
            }
            buf.write(0, &data).map_err(err)?;
            let a = rdma(http, &mut buf, Request::put(&url), len, Direction::Put, Some(sum)).await?;
            check(
                a.status == 200 && a.moved(len as u64) && a.checksum == Some(sum),
                || format!("{url}: RDMA PUT of {len} bytes (CRC64NVME {sum}) answered {a:?}"),
            )?;
        }
        // GET: by range one time in three.
        let (a, b) = if j % 3 == 1 && len > 1 {
            (len / 3, len - 1 - len / 5)
        } else {
            (0, len - 1)
        };
        let ranged = (a, b) != (0, len - 1);
        let want = &data[a..=b];
        let mut req = Request::get(&url);
        if ranged {
            req = req.header("range", format!("bytes={a}-{b}"));
        }
        let expect = if ranged { 206 } else { 200 };
        if plain {
            let (status, body) = send(http, req.body(Full::default())).await?;
            check(status == expect && body == want, || {
                format!("{url}: plain GET {a}-{b}: {status}, bytes differ")
            })?;
        } else {
            buf.write(0, &vec![!want[0]; want.len()]).map_err(err)?;
            let ans = rdma(http, &mut buf, req, want.len(), Direction::Get, None).await?;
            // The bytes that landed, checksummed in the buffer (no copy), against the
            // server's checksum of its range; then compared.
            let landed = Digest::of_region(Algorithm::Crc64Nvme, buf.mr(), 0, want.len()).map_err(err)?;
            let mut got = vec![0u8; want.len()];
            buf.mr().read(0, &mut got).map_err(err)?;
            let ok = ans.status == expect && ans.moved(want.len() as u64) && ans.checksum == Some(landed);
            check(ok && got == want, || {
                format!(
                    "{url}: RDMA GET {a}-{b}: answered {ans:?}, landed CRC64NVME {landed}, bytes differ: {}",
                    got != want
                )
            })?;
        }
        let moved = (len + want.len()) as u64;
        tally.bytes += moved;
        if plain {
            tally.plain += 2;
        } else {
            tally.rdma += 2;
        }
    }
    unexpose(buf)?;
    Ok(tally)
}

fn unexpose(buf: Exposed<Vec<u8>>) -> Result<(), String> {
    buf.unexpose().map(drop).map_err(err)
}

/// Sends `req` with a token for the buffer's first `len` bytes moving `direction` (revoked once
/// answered) and, for a PUT, their checksum `sum` (a GET asks for its range's): the server's
/// answer, as the spec reads it.
async fn rdma(
    http: &HttpClient,
    buf: &mut Exposed<Vec<u8>>,
    req: hyper::http::request::Builder,
    len: usize,
    direction: Direction,
    sum: Option<Digest>,
) -> Result<Answer, String> {
    let (_guard, token) = buf.mint_guarded(0, len, direction).map_err(err)?;
    let mut req = req.body(Full::default()).map_err(err)?;
    req.headers_mut().extend(rdma_headers(&token, sum).map_err(err)?);
    let resp = http.request(req).await.map_err(err)?;
    let answer = read_answer(direction, resp.status(), resp.headers()).map_err(err)?;
    resp.into_body().collect().await.map_err(err)?;
    Ok(answer)
}

/// Sends `req` over plain HTTP: the status and the body.
async fn send(
    http: &HttpClient,
    req: Result<Request<Full<Bytes>>, hyper::http::Error>,
) -> Result<(u16, Bytes), String> {
    let resp = http.request(req.map_err(err)?).await.map_err(err)?;
    let status = resp.status().as_u16();
    Ok((status, resp.into_body().collect().await.map_err(err)?.to_bytes()))
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn check(ok: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(what())
    }
}
