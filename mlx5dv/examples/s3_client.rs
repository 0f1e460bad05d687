//! An S3-over-RDMA client (ureq over HTTP): its buffer exposed behind its DCT, a token minted
//! for each request and revoked once answered. Against `s3_server` it PUTs objects of sizes
//! from 1 byte to `--max-size`, GETs them back whole and by range, checks every byte and each
//! ETag, and DELETEs them, until it has minted `--tokens` tokens.
//!
//! ```text
//! s3_client [--server URL] [--id N] [--tokens N] [--max-size BYTES] [-d DEVICE] [-p PORT]
//!           [-g GID_INDEX] [--key HEX] [--chaos EVERY] [--die-at N] [--for SECONDS]
//!           [--latency FILE] [--attacker RATE]
//! ```
//! - `--for SECONDS`: stop after that long (or `--tokens`, whichever comes first).
//! - `--latency FILE`: write each RDMA request (PUT, GET, ranged GET) a line: when it was
//!   sent (wall clock, microseconds since the Unix epoch) and its latency (from sending it to
//!   its answer, microseconds); the median and 99th percentile are printed in any case.
//! - `--attacker RATE`: no honest work: for `--for` seconds (10 by default), in windows, send
//!   RATE GETs a second with forged tokens, in turn naming a DCT number nobody serves (a new
//!   one each time) and this node's DCT that expects another DC key; no byte may move by RDMA
//!   (the server's GET recovers through the body: reply 501). A window is one second of
//!   sending, until every answer is in; a quiet second follows. It prints what the server
//!   answered; with `--latency FILE` it writes each window a line (its first token sent, its
//!   last answer in: microseconds since the Unix epoch), so that honest requests can be told
//!   apart by whether the attack was on while they ran, within one run.
//! - `--chaos EVERY`: every EVERY-th object also sends a bad request, in turn: a GET with a
//!   token that lies (its rkey changed: the write fails, the buffer stays untouched, and the
//!   object comes in the body with reply 501), a malformed token (400 `InvalidRDMAToken`: the
//!   client then sends the bytes in the body), a ranged GET with a token of a DCT that
//!   expects another DC key (the server's writes go unanswered: the range comes in the body),
//!   and a PUT with a hipObject RC token (declined, 200 with reply 501: the client sends the
//!   bytes in the body).
//!
//! Every RDMA PUT carries `x-amz-checksum-crc64nvme` of its bytes (summed as they are copied
//! into the exposed buffer), which the server must echo; every RDMA GET asks for the checksum
//! (`x-amz-checksum-mode: ENABLED`) and checks it against the bytes in the buffer (summed as
//! they are copied out). Each `--chaos` event also PUTs with a checksum of other bytes (400
//! `BadDigest`, nothing stored: the object reads back unchanged) and with a malformed one
//! (400 `InvalidRequest`).
//!
//! Its honest tokens are written in turn as each published client writes them: the
//! reference's seven fields (cuObject), NIXL's and minio-cpp's nine (with a `;`), upper case,
//! and hipObject's 88 hex digits.
//! Every answer is read with `mlx5dv::s3::protocol` (`Reply::parse`, strict
//! `parse_bytes_transferred`, `ClientAction::of`).
//! - `--die-at N`: the run happens in a child process, killed (SIGKILL) while the server
//!   writes the N-th object into its buffer; this process checks it was killed and says
//!   goodbye for it.
//!
//! On success it prints one line of counts and says goodbye to the server (`POST /_bye`).
//! Under scripts/soft-mlx5-nodes the server's address comes from the rendezvous directory and
//! the id is the node's index.
use mlx5dv::s3::checksum::{self, Algorithm, Digest, CRC64NVME_HEADER};
use mlx5dv::s3::protocol::{
    self, ClientAction, BYTES_TRANSFERRED_HEADER, CHECKSUM_MODE_HEADER, REPLY_HEADER, TOKEN_HEADER,
};
use mlx5dv::s3::{Client, ClientConfig, Direction, Exposed, RdmaToken};
use mlx5dv::{Access, DcKey};
use std::io::Read;
use std::process::ExitCode;
use std::time::Duration;

#[path = "common/s3.rs"]
mod s3;

const USAGE: &str = "s3_client [--server URL] [--id N] [--tokens N] [--max-size BYTES] [-d DEVICE] [-p PORT] \
                     [-g GID_INDEX] [--key HEX] [--chaos EVERY] [--die-at N] [--for SECONDS] [--latency FILE] \
                     [--attacker RATE]";

#[derive(Clone)]
struct Opts {
    server: Option<String>,
    id: u64,
    tokens: u64,
    max_size: usize,
    device: Option<String>,
    port: u8,
    gid_index: Option<u8>,
    key: DcKey,
    chaos: Option<u64>,
    die_at: Option<u64>,
    kill_self_at: Option<u64>,
    duration: Option<Duration>,
    latency: Option<std::path::PathBuf>,
    attacker: Option<u64>,
}

/// What came back from the server.
struct Reply {
    status: u16,
    /// `x-amz-rdma-reply`, read as the protocol says.
    rdma: protocol::Reply,
    /// `x-amz-rdma-bytes-transferred`, strictly decimal.
    bytes: Option<u64>,
    etag: Option<String>,
    /// The `x-amz-checksum-*` header, read strictly.
    sum: Option<Digest>,
    body: Vec<u8>,
}

impl Reply {
    /// What the client does with it, for a request moving bytes `dir`.
    fn action(&self, dir: Direction) -> ClientAction {
        ClientAction::of(dir, self.status, self.rdma)
    }

    /// The start of the body, as text (an S3 error's XML says why).
    fn why(&self) -> String {
        let text = String::from_utf8_lossy(&self.body[..self.body.len().min(300)]).into_owned();
        if self.body.len() > 300 {
            format!("{text}...")
        } else {
            text
        }
    }
}

fn call(req: ureq::Request, body: &[u8]) -> Result<Reply, String> {
    let resp = match req.send_bytes(body) {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => return Err(format!("HTTP: {e}")),
    };
    let status = resp.status();
    let rdma = protocol::Reply::parse(resp.header(REPLY_HEADER)).map_err(|e| e.to_string())?;
    let bytes = match resp.header(BYTES_TRANSFERRED_HEADER) {
        Some(v) => Some(protocol::parse_bytes_transferred(v).map_err(|e| e.to_string())?),
        None => None,
    };
    let etag = resp.header("ETag").map(str::to_string);
    let sum = checksum::requested(|n| resp.header(n)).map_err(|e| e.to_string())?;
    let mut body = Vec::new();
    resp.into_reader()
        .read_to_end(&mut body)
        .map_err(|e| format!("HTTP body: {e}"))?;
    Ok(Reply {
        status,
        rdma,
        bytes,
        etag,
        sum,
        body,
    })
}

/// A small deterministic generator (splitmix64) for sizes and ranges.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// 1..=max, spread evenly over the powers of two (as many small objects as large ones).
    fn size(&mut self, max: usize) -> usize {
        let bits = usize::BITS - max.leading_zeros();
        let top = 1usize << (self.next() % u64::from(bits));
        (1 + (self.next() as usize) % top).min(max)
    }
}

struct Run {
    o: Opts,
    agent: ureq::Agent,
    url: String,
    buf: Exposed<Vec<u8>>,
    /// A DCT expecting another key, and a buffer behind it (chaos).
    wrong: Exposed<Vec<u8>>,
    _clients: (Client, Client),
    tokens: u64,
    rdma: u64,
    fallbacks: u64,
    refused_as_expected: u64,
    /// Each RDMA request's latency, in microseconds.
    latencies: Vec<u64>,
    /// When each RDMA request was sent ([`unix_us`]), in `latencies`' order.
    sent_at: Vec<u64>,
    /// 503 answers sent again.
    slow_downs: u64,
}

impl Run {
    fn new(o: &Opts, url: &str) -> Result<Run, String> {
        let ctx = mlx5dv::open_device(o.device.as_deref()).map_err(|e| e.to_string())?;
        let mlx5 = ctx.mlx5().map_err(|e| e.to_string())?;
        let pd = ctx.alloc_pd().map_err(|e| e.to_string())?;
        let cfg = ClientConfig {
            port: o.port,
            gid_index: o.gid_index,
            ..ClientConfig::default()
        };
        let client = Client::new(&mlx5, &pd, o.key, cfg).map_err(|e| e.to_string())?;
        let wrong_key = DcKey::new(o.key.expose() ^ 0x5a5a);
        let other = Client::new(&mlx5, &pd, wrong_key, cfg).map_err(|e| e.to_string())?;
        let reg = |len| {
            pd.register(vec![0u8; len], Access::LOCAL_WRITE)
                .map_err(|e| e.to_string())
        };
        let buf = client.expose(reg(o.max_size)?).map_err(|e| e.to_string())?;
        let wrong = other.expose(reg(4096)?).map_err(|e| e.to_string())?;
        Ok(Run {
            o: o.clone(),
            agent: ureq::AgentBuilder::new().timeout(Duration::from_secs(60)).build(),
            url: url.to_string(),
            buf,
            wrong,
            _clients: (client, other),
            tokens: 0,
            rdma: 0,
            fallbacks: 0,
            refused_as_expected: 0,
            latencies: Vec::new(),
            sent_at: Vec::new(),
            slow_downs: 0,
        })
    }

    fn object(&self, i: u64) -> String {
        format!("{}/bucket/c{}-o{i}", self.url, self.o.id)
    }

    fn mint(&mut self, len: usize, dir: Direction) -> Result<(mlx5dv::s3::TokenId, RdmaToken), String> {
        self.tokens += 1;
        self.buf.mint(0, len, dir).map_err(|e| e.to_string())
    }

    /// `call`, its latency recorded. A 503 (SlowDown: the server is busy with clients that
    /// have not answered yet, and this one has not either; `ClientAction::Retry`) is sent
    /// again after 20 ms, up to 50 times, as S3 clients do; the latency counts the waits.
    fn timed(&mut self, req: ureq::Request, dir: Direction) -> Result<Reply, String> {
        let t = std::time::Instant::now();
        self.sent_at.push(unix_us());
        let mut r = call(req.clone(), &[]);
        for _ in 0..50 {
            if !matches!(&r, Ok(reply) if reply.action(dir) == ClientAction::Retry) {
                break;
            }
            self.slow_downs += 1;
            std::thread::sleep(Duration::from_millis(20));
            r = call(req.clone(), &[]);
        }
        self.latencies.push(t.elapsed().as_micros() as u64);
        r
    }

    fn check_rdma(&mut self, what: &str, dir: Direction, r: &Reply, status: u16, bytes: usize) -> Result<(), String> {
        if r.action(dir) != ClientAction::Done
            || r.status != status
            || r.rdma != protocol::Reply::Moved(status)
            || r.bytes != Some(bytes as u64)
        {
            return Err(format!(
                "{what}: HTTP {} reply {:?} bytes {:?} ({}); wanted {status} by RDMA, {bytes} bytes",
                r.status,
                r.rdma,
                r.bytes,
                r.why()
            ));
        }
        self.rdma += 1;
        Ok(())
    }

    fn buffer(&self, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        self.buf.mr().read(0, &mut v).expect("in the buffer");
        v
    }

    /// The first `len` bytes of the buffer, and their checksum (summed as they are copied out).
    fn buffer_summed(&self, len: usize) -> (Vec<u8>, Digest) {
        let mut v = vec![0u8; len];
        let mr = self.buf.mr();
        let sum = s3::read_summed(&mut v, Algorithm::Crc64Nvme, |at, c| mr.read(at, c)).expect("in the buffer");
        (v, sum)
    }

    /// A GET by RDMA's checksum: the server's header must be that of the bytes that landed.
    fn check_sum(what: &str, r: &Reply, landed: Digest) -> Result<(), String> {
        if r.sum != Some(landed) {
            return Err(format!(
                "{what}: the server's checksum {:?}, the bytes in the buffer have {landed}",
                r.sum.map(|d| d.to_string())
            ));
        }
        Ok(())
    }

    /// PUT, GET, maybe a ranged GET, DELETE of object `i`.
    fn round(&mut self, i: u64, rng: &mut Rng) -> Result<(), String> {
        let size = if self.o.kill_self_at == Some(i) {
            self.o.max_size
        } else {
            rng.size(self.o.max_size)
        };
        let data = s3::pattern(size, (self.o.id << 32) | i);
        let url = self.object(i);
        // PUT: the server reads the buffer, and checks it against the checksum.
        let buf = &mut self.buf;
        let sum = s3::write_summed(&data, Algorithm::Crc64Nvme, |at, c| buf.write(at, c)).map_err(|e| e.to_string())?;
        let (t, token) = self.mint(size, Direction::Put)?;
        let text = s3::spelled(&token, i, self.o.port);
        let put = self
            .agent
            .put(&url)
            .set(TOKEN_HEADER, &text)
            .set(CRC64NVME_HEADER, &sum.header_value());
        let r = self.timed(put, Direction::Put)?;
        self.buf.revoke(t).map_err(|e| e.to_string())?;
        self.check_rdma(&format!("PUT {url} ({text})"), Direction::Put, &r, 200, size)?;
        if r.sum != Some(sum) {
            return Err(format!(
                "PUT {url}: the server echoed {:?}, the bytes sent have {sum}",
                r.sum.map(|d| d.to_string())
            ));
        }
        if r.etag.as_deref() != Some(&*s3::etag(&data)) {
            return Err(format!(
                "PUT {url}: ETag {:?}, the bytes sent hash to {}",
                r.etag,
                s3::etag(&data)
            ));
        }
        // GET: the server writes the buffer.
        self.buf.write(0, &vec![0xee; size]).map_err(|e| e.to_string())?;
        let (t, token) = self.mint(size, Direction::Get)?;
        if self.o.kill_self_at == Some(i) {
            // Killed while the server writes: it finds the DCT gone.
            let (agent, text, url) = (self.agent.clone(), token.format().unwrap(), url.clone());
            std::thread::spawn(move || call(agent.get(&url).set(TOKEN_HEADER, &text), &[]));
            std::thread::sleep(Duration::from_millis(3));
            // SAFETY: raising a signal on this process.
            unsafe { libc::raise(libc::SIGKILL) };
        }
        let text = s3::spelled(&token, i + 1, self.o.port);
        let get = self
            .agent
            .get(&url)
            .set(TOKEN_HEADER, &text)
            .set(CHECKSUM_MODE_HEADER, "ENABLED");
        let r = self.timed(get, Direction::Get)?;
        self.buf.revoke(t).map_err(|e| e.to_string())?;
        self.check_rdma(&format!("GET {url} ({text})"), Direction::Get, &r, 200, size)?;
        let (landed, landed_sum) = self.buffer_summed(size);
        if landed != data {
            return Err(format!("GET {url}: the bytes in the buffer differ from those PUT"));
        }
        Self::check_sum(&format!("GET {url}"), &r, landed_sum)?;
        // A ranged GET, every third object.
        if i % 3 == 0 {
            let a = (rng.next() as usize) % size;
            let b = a + (rng.next() as usize) % (size - a);
            let n = b - a + 1;
            let (t, token) = self.mint(n, Direction::Get)?;
            let text = s3::spelled(&token, i + 2, self.o.port);
            let r = self.timed(
                self.agent
                    .get(&url)
                    .set(TOKEN_HEADER, &text)
                    .set(CHECKSUM_MODE_HEADER, "ENABLED")
                    .set("Range", &format!("bytes={a}-{b}")),
                Direction::Get,
            )?;
            self.buf.revoke(t).map_err(|e| e.to_string())?;
            self.check_rdma(&format!("GET {url} bytes={a}-{b} ({text})"), Direction::Get, &r, 206, n)?;
            let (landed, landed_sum) = self.buffer_summed(n);
            if landed != data[a..=b] {
                return Err(format!("GET {url} bytes={a}-{b}: the range landed wrong"));
            }
            Self::check_sum(&format!("GET {url} bytes={a}-{b}"), &r, landed_sum)?;
        }
        if let Some(every) = self.o.chaos {
            if i % every == every - 1 {
                self.chaos(i / every, &url, &data)?;
            }
        }
        let r = call(self.agent.delete(&url), &[])?;
        if r.status != 204 {
            return Err(format!("DELETE {url}: HTTP {}", r.status));
        }
        Ok(())
    }

    /// One bad request (the k-th): each must fail alone, answered as the protocol says.
    fn chaos(&mut self, k: u64, url: &str, data: &[u8]) -> Result<(), String> {
        let size = data.len();
        match k % 4 {
            0 => {
                // A lying token: another rkey. The client's adapter refuses the write; the GET
                // recovers through the body.
                self.buf.write(0, &vec![0xee; size]).map_err(|e| e.to_string())?;
                let (t, token) = self.mint(size, Direction::Get)?;
                let liar = RdmaToken {
                    rkey: token.rkey ^ 0x8000,
                    ..token
                };
                let r = call(self.agent.get(url).set(TOKEN_HEADER, &liar.format().unwrap()), &[])?;
                self.buf.revoke(t).map_err(|e| e.to_string())?;
                if r.action(Direction::Get) != ClientAction::ReadBody
                    || (r.status, r.rdma) != (200, protocol::Reply::Declined)
                    || r.body != data
                    || self.buffer(size) != vec![0xee; size]
                {
                    return Err(format!(
                        "a lying token: HTTP {} reply {:?}, {} bytes in the body; wanted 200, 501, the object in the body, the buffer untouched",
                        r.status,
                        r.rdma,
                        r.body.len()
                    ));
                }
                self.fallbacks += 1;
            }
            1 => {
                // A malformed token (GID-present flag 2): 400 InvalidRDMAToken, then the body.
                let (t, token) = self.mint(size, Direction::Put)?;
                let bad = token
                    .format()
                    .unwrap()
                    .replacen(":1:", ":2:", 1)
                    .replacen(":0:", ":2:", 1);
                let r = call(self.agent.put(url).set(TOKEN_HEADER, &bad), &[])?;
                self.buf.revoke(t).map_err(|e| e.to_string())?;
                if r.action(Direction::Put) != ClientAction::Failed
                    || (r.status, r.rdma) != (400, protocol::Reply::Absent)
                    || !r.why().contains(protocol::INVALID_TOKEN)
                {
                    return Err(format!(
                        "a malformed token: HTTP {} reply {:?} ({}); wanted 400 InvalidRDMAToken, no reply",
                        r.status,
                        r.rdma,
                        r.why()
                    ));
                }
                self.body_fallback(url, data)?;
            }
            2 => {
                // A DCT that expects another key: the server's write is never answered; the
                // range comes in the body.
                self.tokens += 1;
                self.wrong.write(0, &[0xee; 4096]).map_err(|e| e.to_string())?;
                let n = size.min(4096);
                let (t, token) = self.wrong.mint(0, n, Direction::Get).map_err(|e| e.to_string())?;
                let r = call(
                    self.agent
                        .get(url)
                        .set(TOKEN_HEADER, &token.format().unwrap())
                        .set("Range", &format!("bytes=0-{}", n - 1)),
                    &[],
                )?;
                self.wrong.revoke(t).map_err(|e| e.to_string())?;
                let mut v = vec![0u8; 4096];
                self.wrong.mr().read(0, &mut v).expect("in the buffer");
                if r.action(Direction::Get) != ClientAction::ReadBody
                    || (r.status, r.rdma) != (206, protocol::Reply::Declined)
                    || r.body != data[..n]
                    || v != [0xee; 4096]
                {
                    return Err(format!(
                        "a wrong key: HTTP {} reply {:?}, {} bytes in the body; wanted 206, 501, the range in the body, the buffer untouched",
                        r.status,
                        r.rdma,
                        r.body.len()
                    ));
                }
                self.fallbacks += 1;
            }
            _ => {
                // A hipObject RC token: well formed, but a DC server cannot reach an RC QP:
                // declined (200, reply 501); the client sends the bytes in the body.
                let (t, token) = self.mint(size, Direction::Put)?;
                let hip = s3::spelled(&token, 3, self.o.port);
                let rc = format!("01{}", &hip[2..]);
                let r = call(self.agent.put(url).set(TOKEN_HEADER, &rc), &[])?;
                self.buf.revoke(t).map_err(|e| e.to_string())?;
                if r.action(Direction::Put) != ClientAction::SendBody
                    || (r.status, r.rdma) != (200, protocol::Reply::Declined)
                    || !r.why().contains(protocol::NOT_SUPPORTED)
                {
                    return Err(format!(
                        "an RC token: HTTP {} reply {:?} ({}); wanted 200, 501 RDMANotSupported",
                        r.status,
                        r.rdma,
                        r.why()
                    ));
                }
                self.body_fallback(url, data)?;
            }
        }
        self.refused_as_expected += 1;
        self.checksum_chaos(url, data)
    }

    /// PUTs by RDMA whose checksum lies (of other bytes: 400 BadDigest) or is malformed (400
    /// InvalidRequest): refused without the reply header, and the object stays as it was.
    fn checksum_chaos(&mut self, url: &str, data: &[u8]) -> Result<(), String> {
        let other = s3::pattern(data.len(), u64::MAX - self.tokens);
        self.buf.write(0, &other).map_err(|e| e.to_string())?;
        let lie = Digest::of(Algorithm::Crc64Nvme, data).header_value();
        for (value, code) in [
            (lie.as_str(), protocol::BAD_DIGEST),
            ("not base64!!", protocol::INVALID_REQUEST),
        ] {
            let (t, token) = self.mint(data.len(), Direction::Put)?;
            let put = self
                .agent
                .put(url)
                .set(TOKEN_HEADER, &token.format().unwrap())
                .set(CRC64NVME_HEADER, value);
            let r = call(put, &[])?;
            self.buf.revoke(t).map_err(|e| e.to_string())?;
            if r.action(Direction::Put) != ClientAction::Failed
                || (r.status, r.rdma) != (400, protocol::Reply::Absent)
                || !r.why().contains(code)
            {
                return Err(format!(
                    "a PUT with {CRC64NVME_HEADER}: {value}: HTTP {} reply {:?} ({}); wanted 400 {code}, no reply",
                    r.status,
                    r.rdma,
                    r.why()
                ));
            }
            let back = call(self.agent.get(url), &[])?;
            if back.status != 200 || back.body != data {
                return Err(format!(
                    "after a refused PUT ({code}): GET {url} is HTTP {}, {} bytes: the object changed",
                    back.status,
                    back.body.len()
                ));
            }
            self.refused_as_expected += 1;
        }
        Ok(())
    }

    /// The object sent in the body, then read back in the body.
    fn body_fallback(&mut self, url: &str, data: &[u8]) -> Result<(), String> {
        self.fallbacks += 1;
        let sum = Digest::of(Algorithm::Crc64Nvme, data);
        let r = call(self.agent.put(url).set(CRC64NVME_HEADER, &sum.header_value()), data)?;
        let back = call(self.agent.get(url), &[])?;
        if r.status != 200 || back.status != 200 || back.body != data {
            return Err(format!(
                "the body fallback: PUT {} ({}) GET {}",
                r.status,
                r.why(),
                back.status
            ));
        }
        Ok(())
    }
}

fn bye(url: &str) -> Result<(), String> {
    call(ureq::post(&format!("{url}/_bye")), &[]).map(drop)
}

fn run(o: &Opts, url: &str) -> Result<(), String> {
    let mut r = Run::new(o, url)?;
    let mut rng = Rng(o.id.wrapping_mul(1_000_003) ^ 0x5333);
    let mut i = 0;
    let start = std::time::Instant::now();
    while r.tokens < o.tokens && o.duration.map_or(true, |d| start.elapsed() < d) {
        r.round(i, &mut rng)?;
        i += 1;
    }
    println!(
        "s3_client {}: {i} objects, {} tokens, {} moved by RDMA and checked, {} bad requests refused as they should be, {} body fallbacks",
        o.id, r.tokens, r.rdma, r.refused_as_expected, r.fallbacks
    );
    let mut l = r.latencies.clone();
    l.sort_unstable();
    if !l.is_empty() {
        println!(
            "s3_client {}: latency of {} RDMA requests: median {} us, 99th percentile {} us ({} answers 503 sent again)",
            o.id,
            l.len(),
            l[l.len() / 2],
            l[(l.len() * 99 / 100).min(l.len() - 1)],
            r.slow_downs
        );
    }
    if let Some(path) = &o.latency {
        let text: String = r
            .sent_at
            .iter()
            .zip(&r.latencies)
            .map(|(at, v)| format!("{at} {v}\n"))
            .collect();
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// `--attacker RATE`: forged tokens at RATE a second, each of which must fail.
fn attack(o: &Opts, url: &str, rate: u64) -> Result<(), String> {
    let r = Run::new(o, url)?;
    let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(60)).build();
    // An object to GET (sent in the body: no token).
    let obj = format!("{url}/bucket/attacker{}", o.id);
    let put = call(agent.put(&obj), &s3::pattern(4096, 1))?;
    if put.status != 200 {
        return Err(format!("the attacker's object: PUT HTTP {}", put.status));
    }
    let mut buf = r.buf;
    let mut wrong = r.wrong;
    let (_, real) = buf.mint(0, 4096, Direction::Get).map_err(|e| e.to_string())?;
    let (_, wrong_key) = wrong.mint(0, 4096, Direction::Get).map_err(|e| e.to_string())?;
    let every = Duration::from_secs(1) / rate.max(1) as u32;
    let duration = o.duration.unwrap_or(Duration::from_secs(10));
    let start = std::time::Instant::now();
    let mut sent = 0u64;
    let mut answers: std::collections::BTreeMap<(u16, String), u64> = Default::default();
    let mut moved = 0;
    let mut windows = String::new();
    while start.elapsed() < duration {
        // A window: a second of forged tokens, until every answer is in; then a quiet second.
        let (opened, on) = (unix_us(), std::time::Instant::now());
        let mut threads = Vec::new();
        let mut k = 0u32;
        while on.elapsed() < Duration::from_secs(1) {
            let token = if sent % 2 == 0 {
                // A DCT number nobody serves, a new one each time (a new endpoint at the server).
                RdmaToken {
                    dct_number: 0xa0_0000 | (((o.id & 0xf) << 16) as u32) | (sent as u32 & 0xffff),
                    ..real
                }
            } else {
                wrong_key
            };
            let (agent, obj) = (agent.clone(), obj.clone());
            threads.push(std::thread::spawn(move || {
                call(agent.get(&obj).set(TOKEN_HEADER, &token.format().unwrap()), &[]).map(|r| {
                    let moved = r.action(Direction::Get) == ClientAction::Done;
                    (r.status, format!("{:?}", r.rdma), moved)
                })
            }));
            sent += 1;
            k += 1;
            if let Some(wait) = (every * k).checked_sub(on.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        for t in threads {
            let (status, reply, by_rdma) = t.join().map_err(|_| "an attacker thread panicked".to_string())??;
            moved += u64::from(by_rdma);
            *answers.entry((status, reply)).or_default() += 1;
        }
        windows.push_str(&format!("{opened} {}\n", unix_us()));
        std::thread::sleep(Duration::from_secs(1));
    }
    let elapsed = start.elapsed();
    println!(
        "s3_client {} (attacker): {sent} forged tokens in {} windows over {:.1} s ({rate} a second while on; dead DCT numbers and a wrong DC key in turn); the server answered {answers:?}",
        o.id,
        windows.lines().count(),
        elapsed.as_secs_f64(),
    );
    if let Some(path) = &o.latency {
        std::fs::write(path, windows).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if moved > 0 {
        return Err(format!("{moved} forged tokens moved bytes by RDMA: {answers:?}"));
    }
    Ok(())
}

/// The wall clock in microseconds since the Unix epoch: one clock for every process of this
/// machine, so that an attacker's windows and honest requests can be lined up.
fn unix_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// Runs the client in a child process that is killed mid-run (`--die-at`).
fn run_and_die(o: &Opts) -> Result<(), String> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let at = args.iter().position(|a| a == "--die-at").expect("--die-at was given");
    args[at] = "--kill-self-at".into();
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let status = std::process::Command::new(exe)
        .args(&args)
        .arg("--no-bye")
        .status()
        .map_err(|e| e.to_string())?;
    use std::os::unix::process::ExitStatusExt;
    if status.signal() != Some(libc::SIGKILL) {
        return Err(format!(
            "the child to be killed at object {:?} ended otherwise: {status}",
            o.die_at
        ));
    }
    println!(
        "s3_client {}: killed (SIGKILL) while the server wrote object {}",
        o.id,
        o.die_at.unwrap_or(0)
    );
    Ok(())
}

fn parse() -> Result<(Opts, bool), String> {
    let mut o = Opts {
        server: None,
        id: std::env::var("SOFT_MLX5_NODE_INDEX")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1),
        tokens: 1000,
        max_size: 4 << 20,
        device: None,
        port: 1,
        gid_index: None,
        key: s3::DEFAULT_KEY,
        chaos: None,
        die_at: None,
        kill_self_at: None,
        duration: None,
        latency: None,
        attacker: None,
    };
    let mut say_bye = true;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value ({USAGE})"));
        let num = |v: String| v.parse::<u64>().map_err(|e| format!("{a}: {e}"));
        match a.as_str() {
            "--server" => o.server = Some(value()?),
            "--id" => o.id = num(value()?)?,
            "--tokens" => o.tokens = num(value()?)?,
            "--max-size" => o.max_size = num(value()?)?.max(1) as usize,
            "-d" => o.device = Some(value()?),
            "-p" => o.port = num(value()?)? as u8,
            "-g" => o.gid_index = Some(num(value()?)? as u8),
            "--key" => o.key = s3::parse_key(&value()?)?,
            "--chaos" => o.chaos = Some(num(value()?)?.max(1)),
            "--die-at" => o.die_at = Some(num(value()?)?),
            "--kill-self-at" => o.kill_self_at = Some(num(value()?)?),
            "--no-bye" => say_bye = false,
            "--for" => o.duration = Some(Duration::from_secs(num(value()?)?)),
            "--latency" => o.latency = Some(value()?.into()),
            "--attacker" => o.attacker = Some(num(value()?)?),
            other => return Err(format!("unknown argument {other} ({USAGE})")),
        }
    }
    Ok((o, say_bye))
}

fn main() -> ExitCode {
    let result = parse().and_then(|(o, say_bye)| {
        let url = match (&o.server, s3::rendezvous_file()) {
            (Some(url), _) => url.clone(),
            (None, Some(file)) => s3::wait_for(&file, Duration::from_secs(60))?,
            (None, None) => return Err(format!("give --server URL ({USAGE})")),
        };
        let r = if let Some(rate) = o.attacker {
            attack(&o, &url, rate)
        } else if o.die_at.is_some() {
            run_and_die(&o)
        } else {
            run(&o, &url)
        };
        // Goodbye even after a failure, so the server does not wait for this client.
        if say_bye {
            bye(&url)?;
        }
        r
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("s3_client: {e}");
            ExitCode::FAILURE
        }
    }
}
