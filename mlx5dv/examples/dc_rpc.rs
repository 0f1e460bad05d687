//! A request/response service over DC, written the way a DC server has to be: one DCT on an
//! SRQ serves any number of clients; each request carries the address of the client's own DCT
//! (a `DcTargetAddr` blob), and the reply goes there through a `DciPool`. The guide
//! (docs/guide.md) walks through it.
//!
//! What it shows, each marked `(1)`..`(6)` in the code:
//! 1. the SRQ filled to what the provider created (`Srq::capacity`) and refilled as each
//!    request is copied out;
//! 2. an address handle and pool endpoint per client, made once and cached by (LID, GID, DCT
//!    number);
//! 3. send buffers freed by *their own* send completion, never by the reply: with DC the
//!    peer's reply can be polled before your send's completion;
//! 4. backpressure: a send the pool refuses with EAGAIN (`Error::is_would_block`) stays queued
//!    and is retried after polling, as is a reply that finds no free send buffer;
//! 5. sleeping on both CQs (the DCT's receives and the pool's sends) with `Cq::wait_any`, no
//!    `unsafe`;
//! 6. DC has no liveness: a client that dies is seen only when the server sends to it, so the
//!    server ends on its own timeout as well as on every client's BYE.
//!
//! The requests: PUT (store a value under a key), GET (read it back), BYE. Every client checks
//! every reply (its request id, status and contents) and exits 0 only if all its requests
//! were answered correctly.
//!
//! On soft-mlx5 (three emulated nodes: node 0 serves, nodes 1 and 2 are clients; the server
//! publishes its address in `$SOFT_MLX5_RENDEZVOUS`):
//!
//!   scripts/soft-mlx5-nodes 3 -- target/debug/examples/dc_rpc
//!   scripts/soft-mlx5-nodes --profile cx6dx-roce 3 -- target/debug/examples/dc_rpc -n 2000
//!
//! On hardware (the address file travels however you like: a shared file system, scp):
//!
//!   dc_rpc --server ADDR_FILE [--clients 2]          # on the server host
//!   dc_rpc --connect ADDR_FILE [--id 1] [-n 1000]    # on each client host
//!
//! Options: -d DEVICE, -p PORT (1), -g GID_INDEX (default: the port's RoCE v2 GID on RoCE,
//! none on InfiniBand), -n REQUESTS per client (1000), -w WINDOW requests in flight per client
//! (16), --timeout SECONDS (10): how long either side waits with nothing received before it
//! gives up (a server also waits that long for its first request).
use mlx5dv::endpoint::PoolConfig;
use mlx5dv::{
    Access, Completion, Context, Cq, DcKey, DcPeer, DcTargetAddr, DciPool, DctBuilder, EndpointId, EpCompletion, Mr,
    PeerPath, Request, Srq, WcStatus,
};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The service's DC access key: a DCT accepts only initiators that present it.
const KEY: DcKey = DcKey::new(0x5e_4c_1c_e0);
/// Every message, request or reply, is one fixed-size buffer.
const MSG: usize = 128;
const MAGIC: u32 = 0x4443_5250; // "DCRP"
const PUT: u8 = 1;
const GET: u8 = 2;
const BYE: u8 = 3;
/// A reply's kind is the request's with this bit.
const REPLY: u8 = 0x80;
const OK: u8 = 0;
const NOT_FOUND: u8 = 1;
const BAD_REQUEST: u8 = 2;
/// Header: magic (4), kind (1), status (1), value length (2), request id (8), key (8).
const HEADER: usize = 24;
/// Where the reply-to address sits in a request.
const ADDR_AT: usize = HEADER;
/// Where the value sits, in requests and replies.
const VALUE_AT: usize = ADDR_AT + DcTargetAddr::ENCODED_LEN;
const MAX_VALUE: usize = MSG - VALUE_AT;
/// Send buffers of the server: replies in flight at once (each freed by its own completion).
const SERVER_SLOTS: usize = 256;

/// One message, as it travels.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Msg {
    kind: u8,
    status: u8,
    req_id: u64,
    key: u64,
    reply_to: [u8; DcTargetAddr::ENCODED_LEN],
    value: Vec<u8>,
}

impl Msg {
    fn encode(&self) -> [u8; MSG] {
        let mut b = [0u8; MSG];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4] = self.kind;
        b[5] = self.status;
        let len = self.value.len().min(MAX_VALUE);
        b[6..8].copy_from_slice(&(len as u16).to_le_bytes());
        b[8..16].copy_from_slice(&self.req_id.to_le_bytes());
        b[16..24].copy_from_slice(&self.key.to_le_bytes());
        b[ADDR_AT..VALUE_AT].copy_from_slice(&self.reply_to);
        b[VALUE_AT..VALUE_AT + len].copy_from_slice(&self.value[..len]);
        b
    }

    /// Parses a received message; untrusted input, so every field is checked.
    fn decode(b: &[u8]) -> Result<Msg, String> {
        if b.len() != MSG {
            return Err(format!("a message of {} bytes, not {MSG}", b.len()));
        }
        let word = |r: std::ops::Range<usize>| {
            let mut a = [0u8; 8];
            a[..r.len()].copy_from_slice(&b[r]);
            u64::from_le_bytes(a)
        };
        if word(0..4) != u64::from(MAGIC) {
            return Err("bad magic".into());
        }
        let len = word(6..8) as usize;
        if len > MAX_VALUE {
            return Err(format!("a value of {len} bytes, more than {MAX_VALUE}"));
        }
        let mut reply_to = [0u8; DcTargetAddr::ENCODED_LEN];
        reply_to.copy_from_slice(&b[ADDR_AT..VALUE_AT]);
        Ok(Msg {
            kind: b[4],
            status: b[5],
            req_id: word(8..16),
            key: word(16..24),
            reply_to,
            value: b[VALUE_AT..VALUE_AT + len].to_vec(),
        })
    }
}

enum Role {
    Server { publish: PathBuf, clients: usize },
    Client { connect: PathBuf, id: u64 },
}

struct Opts {
    role: Role,
    device: Option<String>,
    port: u8,
    gid_index: Option<u8>,
    requests: u64,
    window: usize,
    timeout: Duration,
}

const USAGE: &str = "usage: dc_rpc (--server FILE [--clients N] | --connect FILE [--id N]) [-d DEVICE] [-p PORT] \
                     [-g GID_INDEX] [-n REQUESTS] [-w WINDOW] [--timeout SECONDS]; under scripts/soft-mlx5-nodes \
                     no role is needed: node 0 serves, the others are its clients";

fn parse() -> Result<Opts, String> {
    let (mut server, mut connect, mut clients, mut id) = (None, None, None, None);
    let mut o = Opts {
        role: Role::Client {
            connect: PathBuf::new(),
            id: 0,
        },
        device: None,
        port: 1,
        gid_index: None,
        requests: 1000,
        window: 16,
        timeout: Duration::from_secs(10),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value ({USAGE})"));
        let num = |v: String| v.parse::<u64>().map_err(|e| format!("{a}: {e}"));
        match a.as_str() {
            "--server" => server = Some(PathBuf::from(value()?)),
            "--connect" => connect = Some(PathBuf::from(value()?)),
            "--clients" => clients = Some(num(value()?)? as usize),
            "--id" => id = Some(num(value()?)?),
            "-d" => o.device = Some(value()?),
            "-p" => o.port = num(value()?)? as u8,
            "-g" => o.gid_index = Some(num(value()?)? as u8),
            "-n" => o.requests = num(value()?)?,
            "-w" => o.window = num(value()?)? as usize,
            "--timeout" => o.timeout = Duration::from_secs(num(value()?)?),
            other => return Err(format!("unknown argument {other} ({USAGE})")),
        }
    }
    // Under scripts/soft-mlx5-nodes: node 0 serves the others, meeting in the rendezvous dir.
    let node = std::env::var("SOFT_MLX5_NODE_INDEX")
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
    let nodes = std::env::var("SOFT_MLX5_NODES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok());
    let rendezvous = std::env::var_os("SOFT_MLX5_RENDEZVOUS").map(|d| Path::new(&d).join("dc_rpc.server"));
    o.role = match (server, connect, node, nodes, rendezvous) {
        (Some(publish), None, ..) => Role::Server {
            publish,
            clients: clients.unwrap_or(1),
        },
        (None, Some(connect), node, ..) => Role::Client {
            connect,
            id: id.or(node).unwrap_or(1),
        },
        (None, None, Some(0), Some(n), Some(file)) => Role::Server {
            publish: file,
            clients: clients.unwrap_or(n.saturating_sub(1)),
        },
        (None, None, Some(i), _, Some(file)) => Role::Client {
            connect: file,
            id: id.unwrap_or(i),
        },
        _ => return Err(format!("no role ({USAGE})")),
    };
    if o.requests == 0 || o.window == 0 {
        return Err("-n and -w must be at least 1".into());
    }
    Ok(o)
}

/// What both roles have: a DCT on an SRQ taking messages, the buffers behind it, and a pool
/// sending from registered slots.
struct Node {
    ctx: Context,
    port: u8,
    gid_index: Option<u8>,
    srq: Srq,
    rx_cq: Cq,
    rx_buf: Mr<Vec<u8>>,
    _dct: mlx5dv::Dct,
    addr: DcTargetAddr,
    pool: DciPool,
    tx_buf: Mr<Vec<u8>>,
    /// Send buffers not in flight: a slot returns here only on its own send completion (3).
    free_slots: Vec<usize>,
    pd: mlx5dv::Pd,
}

impl Node {
    fn new(ctx: Context, o: &Opts, slots: usize, max_endpoints: usize) -> mlx5dv::Result<Node> {
        let port = o.port;
        // On RoCE the GID index the DCT and the address handles use; None on InfiniBand.
        let gid_index = match o.gid_index {
            Some(g) => Some(g),
            None => ctx.roce_v2_gid_index(port)?,
        };
        let mlx5 = ctx.mlx5()?;
        let pd = ctx.alloc_pd()?;
        // (1) The SRQ holds what the provider created, which is more than asked for.
        let srq = pd.create_srq(256, 1)?;
        let rx_cq = ctx.create_cq_with_channel(srq.capacity() + 1)?;
        let rx_buf = pd.register(vec![0u8; srq.capacity() as usize * MSG], Access::LOCAL_WRITE)?;
        for i in 0..srq.capacity() as usize {
            srq.post_recv(i as u64, &[rx_buf.sge(i * MSG, MSG)?])?;
        }
        // The DCT only receives SENDs: it grants no remote access (the default).
        let dct = DctBuilder::new(&mlx5, &pd, &rx_cq, &srq, KEY)
            .port(port)
            .gid_index(gid_index)
            .build()?;
        let addr = dct.target_addr()?;
        let cfg = PoolConfig {
            max_endpoints,
            port,
            ..PoolConfig::default()
        };
        // The pool's CQ is its own (a DCT or SRQ must not report to it) and must hold every
        // send its DCIs can have outstanding: DciPool::new says how many if it is too small.
        let pool_cq = ctx.create_cq_with_channel(1024)?;
        let mut pool = DciPool::new(&mlx5, &pd, pool_cq, cfg)?;
        let tx_buf = pd.register(vec![0u8; slots * MSG], Access::LOCAL_WRITE)?;
        pool.hold(&tx_buf)?;
        Ok(Node {
            ctx,
            port,
            gid_index,
            srq,
            rx_cq,
            rx_buf,
            _dct: dct,
            addr,
            pool,
            tx_buf,
            free_slots: (0..slots).rev().collect(),
            pd,
        })
    }

    /// Copies receive `i` out and gives the buffer back to the SRQ at once (1).
    fn take_message(&mut self, c: &Completion) -> mlx5dv::Result<Result<Msg, String>> {
        let i = c.wr_id as usize;
        let mut b = [0u8; MSG];
        self.rx_buf.read(i * MSG, &mut b)?;
        self.srq.post_recv(c.wr_id, &[self.rx_buf.sge(i * MSG, MSG)?])?;
        if c.byte_len as usize != MSG {
            return Ok(Err(format!("a message of {} bytes", c.byte_len)));
        }
        Ok(Msg::decode(&b))
    }

    /// Sends `msg` to `ep` from a free slot. Ok(false): not now (no free slot, or the pool
    /// refused with EAGAIN (4)): poll the pool and try again.
    fn try_send(&mut self, ep: EndpointId, msg: &Msg) -> mlx5dv::Result<bool> {
        let Some(slot) = self.free_slots.pop() else {
            return Ok(false);
        };
        self.tx_buf.write(slot * MSG, &msg.encode())?;
        let req = Request::Send {
            local: self.tx_buf.sge(slot * MSG, MSG)?,
        };
        match self.pool.post(ep, slot as u64, req) {
            Ok(()) => Ok(true),
            Err(e) if e.is_would_block() => {
                self.free_slots.push(slot);
                Ok(false)
            }
            Err(e) => {
                self.free_slots.push(slot);
                Err(e)
            }
        }
    }

    /// Polls the pool: each send completion frees its own slot (3). Returns the failed ones.
    fn reap_sends(&mut self, out: &mut [EpCompletion]) -> mlx5dv::Result<(usize, Vec<EpCompletion>)> {
        let n = self.pool.poll(out)?;
        let mut failed = Vec::new();
        for c in &out[..n] {
            self.free_slots.push(c.wr_id as usize);
            if c.status != WcStatus::Success {
                failed.push(*c);
            }
        }
        Ok((n, failed))
    }

    /// (5) Arms both CQs; the caller polls both again before sleeping.
    fn arm(&self) -> mlx5dv::Result<()> {
        self.rx_cq.req_notify(false)?;
        self.pool.cq().req_notify(false)
    }

    /// (5) Sleeps until either CQ has an event or `timeout` passes.
    fn sleep(&self, timeout: Duration) -> mlx5dv::Result<()> {
        Cq::wait_any(&[&self.rx_cq, self.pool.cq()], Some(timeout)).map(drop)
    }

    /// An endpoint for a peer's DC target: one AH and one endpoint per address, cached (2).
    fn endpoint(
        &mut self,
        cache: &mut HashMap<(u16, [u8; 16], u32), EndpointId>,
        addr: &DcTargetAddr,
    ) -> mlx5dv::Result<EndpointId> {
        let key = (addr.lid, addr.gid, addr.dct_number);
        if let Some(&ep) = cache.get(&key) {
            return Ok(ep);
        }
        let ah = self
            .pd
            .create_ah(self.port, &PeerPath::to_dc_target(addr, self.gid_index))?;
        let ep = self.pool.add_endpoint(DcPeer::new(&ah, addr, KEY))?;
        cache.insert(key, ep);
        Ok(ep)
    }
}

fn server(o: &Opts, publish: &Path, clients: usize) -> Result<(), String> {
    // Room for every client plus a few that reconnect under a new DCT number.
    let ctx = mlx5dv::open_device(o.device.as_deref()).map_err(|e| e.to_string())?;
    let mut node = Node::new(ctx, o, SERVER_SLOTS, (clients * 2).max(8)).map_err(|e| e.to_string())?;
    // Publish the address: written under a temporary name and renamed, so a reader never
    // sees half of it.
    let blob = node.addr.encode().map_err(|e| e.to_string())?;
    let tmp = publish.with_extension("tmp");
    std::fs::write(&tmp, blob).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, publish).map_err(|e| format!("{}: {e}", publish.display()))?;
    println!(
        "dc_rpc server on {} port {}: DCT {:#x}, SRQ of {} receives, waiting for {clients} client(s)",
        node.ctx.name(),
        node.port,
        node.addr.dct_number,
        node.srq.capacity()
    );

    let mut store: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut cache = HashMap::new();
    let mut backlog: VecDeque<(EndpointId, Msg)> = VecDeque::new();
    let (mut rx_out, mut tx_out) = ([Completion::default(); 32], [EpCompletion::default(); 32]);
    let (mut byes, mut served, mut refused, mut failed_sends) = (0usize, 0u64, 0u64, 0u64);
    let mut armed = false;
    let mut heard = Instant::now();
    loop {
        let mut progress = false;
        // Requests: copy out, refill the SRQ, answer into the backlog.
        let n = node.rx_cq.poll(&mut rx_out).map_err(|e| e.to_string())?;
        for c in &rx_out[..n] {
            progress = true;
            heard = Instant::now();
            if c.status != WcStatus::Success {
                return Err(format!("receive {}: {}", c.wr_id, c.status));
            }
            let msg = match node.take_message(c).map_err(|e| e.to_string())? {
                Ok(m) => m,
                Err(why) => {
                    // Untrusted input: no address to answer to, so drop it.
                    eprintln!("dc_rpc server: dropped a malformed request ({why})");
                    continue;
                }
            };
            let Ok(reply_to) = DcTargetAddr::decode(&msg.reply_to) else {
                eprintln!(
                    "dc_rpc server: dropped request {} with a malformed reply address",
                    msg.req_id
                );
                continue;
            };
            let ep = match node.endpoint(&mut cache, &reply_to) {
                Ok(ep) => ep,
                Err(e) => {
                    // E.g. the endpoint table is full (max_endpoints: size it for every client
                    // the server will see). One client is refused; the others go on.
                    eprintln!("dc_rpc server: cannot answer request {}: {e}", msg.req_id);
                    continue;
                }
            };
            let (status, value) = match msg.kind {
                PUT => {
                    store.insert(msg.key, msg.value.clone());
                    (OK, Vec::new())
                }
                GET => match store.get(&msg.key) {
                    Some(v) => (OK, v.clone()),
                    None => (NOT_FOUND, Vec::new()),
                },
                BYE => {
                    byes += 1;
                    (OK, Vec::new())
                }
                _ => (BAD_REQUEST, Vec::new()),
            };
            served += 1;
            backlog.push_back((
                ep,
                Msg {
                    kind: msg.kind | REPLY,
                    status,
                    req_id: msg.req_id,
                    key: msg.key,
                    reply_to: [0; DcTargetAddr::ENCODED_LEN],
                    value,
                },
            ));
        }
        // Send completions: each frees its own slot.
        let (m, failed) = node.reap_sends(&mut tx_out).map_err(|e| e.to_string())?;
        progress |= m > 0;
        for c in failed {
            // (6) The only way a dead client shows: a send to it fails (RetryExcErr), after
            // the ACK timeouts. Its later replies fail the same way; the pool recovers.
            failed_sends += 1;
            eprintln!(
                "dc_rpc server: a reply to endpoint {} failed: {}",
                c.endpoint.index(),
                c.status
            );
        }
        // Replies, in order, while slots and the send queues have room (4).
        while let Some((ep, reply)) = backlog.front() {
            if !node.try_send(*ep, reply).map_err(|e| e.to_string())? {
                refused += 1;
                break;
            }
            backlog.pop_front();
            progress = true;
        }
        let idle = backlog.is_empty() && node.free_slots.len() == SERVER_SLOTS;
        if byes >= clients && idle {
            break;
        }
        if heard.elapsed() > o.timeout {
            return Err(format!(
                "no request for {:?}, with {byes} of {clients} BYEs: a client that died is never seen by DC \
                 unless we send to it (6)",
                o.timeout
            ));
        }
        if progress {
            armed = false;
            continue;
        }
        if !armed {
            // Arm, then poll once more: what came before arming raises no event.
            node.arm().map_err(|e| e.to_string())?;
            armed = true;
            continue;
        }
        // Nothing to do: sleep on both CQs (or briefly, while replies wait for room).
        let nap = if backlog.is_empty() {
            Duration::from_millis(200)
        } else {
            Duration::from_millis(1)
        };
        node.sleep(nap).map_err(|e| e.to_string())?;
        armed = false;
    }
    println!(
        "dc_rpc server: served {served} requests from {} client endpoint(s), {byes} BYEs, {refused} sends deferred \
         (backpressure), {failed_sends} failed, {} keys stored",
        cache.len(),
        store.len()
    );
    Ok(())
}

/// The value client `id` stores under its key `k`.
fn value_of(id: u64, k: u64) -> Vec<u8> {
    let len = 8 + ((id * 7 + k) % (MAX_VALUE as u64 - 8)) as usize;
    (0..len)
        .map(|i| (id as usize * 31 + k as usize * 17 + i) as u8)
        .collect()
}

/// A request in flight, with what its reply must say.
struct Expect {
    kind: u8,
    key: u64,
    value: Vec<u8>,
}

fn read_addr(file: &Path, timeout: Duration) -> Result<DcTargetAddr, String> {
    let until = Instant::now() + timeout;
    loop {
        match std::fs::read(file) {
            Ok(blob) => return DcTargetAddr::decode(&blob).map_err(|e| format!("{}: {e}", file.display())),
            Err(e) if Instant::now() > until => return Err(format!("{}: {e}", file.display())),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn client(o: &Opts, connect: &Path, id: u64) -> Result<(), String> {
    let server_addr = read_addr(connect, o.timeout)?;
    let ctx = mlx5dv::open_device(o.device.as_deref()).map_err(|e| e.to_string())?;
    let mut node = Node::new(ctx, o, o.window + 1, 1).map_err(|e| e.to_string())?;
    let me = node.addr.encode().map_err(|e| e.to_string())?;
    let mut cache = HashMap::new();
    let server = node.endpoint(&mut cache, &server_addr).map_err(|e| e.to_string())?;

    // Requests 0..n: a PUT of a new key, or a GET of a key whose PUT was answered.
    let mut in_flight: HashMap<u64, Expect> = HashMap::new();
    let mut acked: Vec<u64> = Vec::new();
    let (mut next_id, mut next_key, mut answered, mut refused) = (0u64, 0u64, 0u64, 0u64);
    let mut pending: Option<(u64, Msg, Expect)> = None;
    let mut bye_sent = false;
    let mut bye_answered = false;
    let (mut rx_out, mut tx_out) = ([Completion::default(); 32], [EpCompletion::default(); 32]);
    let mut armed = false;
    let mut heard = Instant::now();
    while !bye_answered {
        let mut progress = false;
        // The next request, unless one is already waiting for room.
        if pending.is_none() && in_flight.len() < o.window {
            if next_id < o.requests {
                let put = acked.is_empty() || next_id % 2 == 0;
                let (kind, key) = if put {
                    next_key += 1;
                    (PUT, (id << 32) | next_key)
                } else {
                    (GET, acked[(next_id as usize / 2) % acked.len()])
                };
                let value = value_of(id, key & 0xffff_ffff);
                let msg = Msg {
                    kind,
                    status: OK,
                    req_id: next_id,
                    key,
                    reply_to: me,
                    value: if put { value.clone() } else { Vec::new() },
                };
                pending = Some((next_id, msg, Expect { kind, key, value }));
                next_id += 1;
            } else if in_flight.is_empty() && !bye_sent {
                let msg = Msg {
                    kind: BYE,
                    status: OK,
                    req_id: u64::MAX,
                    key: 0,
                    reply_to: me,
                    value: Vec::new(),
                };
                let expect = Expect {
                    kind: BYE,
                    key: 0,
                    value: Vec::new(),
                };
                pending = Some((u64::MAX, msg, expect));
                bye_sent = true;
            }
        }
        if let Some((req_id, msg, _)) = &pending {
            let req_id = *req_id;
            if node.try_send(server, msg).map_err(|e| e.to_string())? {
                let (_, _, expect) = pending.take().ok_or("no pending request")?;
                in_flight.insert(req_id, expect);
                progress = true;
            } else {
                refused += 1;
            }
        }
        // Send completions free slots (3): a reply may already have come.
        let (m, failed) = node.reap_sends(&mut tx_out).map_err(|e| e.to_string())?;
        progress |= m > 0;
        if let Some(c) = failed.first() {
            // (6) The server is dead or the key is wrong: both look like this (RetryExcErr).
            return Err(format!(
                "a request to the server failed: {}: is the server alive and the key the same?",
                c.status
            ));
        }
        // Replies: each checked against what was asked.
        let n = node.rx_cq.poll(&mut rx_out).map_err(|e| e.to_string())?;
        for c in &rx_out[..n] {
            progress = true;
            heard = Instant::now();
            if c.status != WcStatus::Success {
                return Err(format!("receive {}: {}", c.wr_id, c.status));
            }
            let reply = node.take_message(c).map_err(|e| e.to_string())??;
            let expect = in_flight
                .remove(&reply.req_id)
                .ok_or(format!("a reply to request {} that is not in flight", reply.req_id))?;
            if reply.kind != expect.kind | REPLY || reply.key != expect.key {
                return Err(format!(
                    "request {}: reply kind {:#x} key {:#x}, expected {:#x} {:#x}",
                    reply.req_id,
                    reply.kind,
                    reply.key,
                    expect.kind | REPLY,
                    expect.key
                ));
            }
            match expect.kind {
                PUT if reply.status == OK => acked.push(expect.key),
                GET if reply.status == OK && reply.value == expect.value => {}
                BYE if reply.status == OK => bye_answered = true,
                _ => {
                    return Err(format!(
                        "request {} ({}): status {}, value {:?}, expected {:?}",
                        reply.req_id, expect.kind, reply.status, reply.value, expect.value
                    ))
                }
            }
            if expect.kind != BYE {
                answered += 1;
            }
        }
        if heard.elapsed() > o.timeout {
            return Err(format!(
                "no reply for {:?}: {answered} of {} answered; DC does not tell us whether the server \
                 is alive (6)",
                o.timeout, o.requests
            ));
        }
        if progress {
            armed = false;
            continue;
        }
        if !armed {
            node.arm().map_err(|e| e.to_string())?;
            armed = true;
            continue;
        }
        node.sleep(if pending.is_some() {
            Duration::from_millis(1)
        } else {
            Duration::from_millis(200)
        })
        .map_err(|e| e.to_string())?;
        armed = false;
    }
    // Our own sends must complete before the pool goes (the BYE's completion may trail its
    // reply).
    let until = Instant::now() + Duration::from_secs(5);
    while node.free_slots.len() < o.window + 1 && Instant::now() < until {
        node.reap_sends(&mut tx_out).map_err(|e| e.to_string())?;
    }
    if answered != o.requests {
        return Err(format!("{answered} of {} requests answered", o.requests));
    }
    println!(
        "dc_rpc client {id}: all {} requests answered correctly ({} keys, {refused} sends deferred by backpressure)",
        o.requests,
        acked.len()
    );
    Ok(())
}

fn main() -> ExitCode {
    let result = parse().and_then(|o| match &o.role {
        Role::Server { publish, clients } => server(&o, publish, *clients),
        Role::Client { connect, id } => client(&o, connect, *id),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dc_rpc: {e}");
            ExitCode::FAILURE
        }
    }
}
