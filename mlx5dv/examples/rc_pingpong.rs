//! A ping-pong over RC that speaks the out-of-band TCP exchange of rdma-core's
//! `ibv_rc_pingpong` (libibverbs/examples/rc_pingpong.c), so either program can be the other's
//! peer.
//!
//! ```text
//! rc_pingpong [options]              start a server and wait for a connection
//! rc_pingpong [options] <host>       connect to the server at <host>
//! ```
//!
//! The exchange, as rc_pingpong.c does it: the client connects over TCP and sends its address,
//! the server reads it, connects its QP (RTR, RTS), sends its own address and reads the
//! client's `"done"`; the client then connects its QP and sends first. An address is the
//! ASCII message `"%04x:%06x:%06x:%s"` = LID:QPN:PSN:GID, NUL-terminated, always
//! `sizeof "0000:000000:000000:00000000000000000000000000000000"` = 52 bytes. The GID is
//! rdma-core's `gid_to_wire_gid`: four `%08x` of `htonl(*(uint32_t *)(raw + 4 * i))`, which is
//! the 16 GID bytes in network (table) order as 32 hex digits, on hosts of either byte order.
//!
//! Both sides then alternate sends and receives of `--size` bytes from one registered buffer;
//! each stops when it has counted `--iters` send and `--iters` receive completions.
use mlx5dv::{Access, Completion, Cq, PeerPath, RcCaps, RcQp, RcRemote, RtsAttr, Sge};
use std::error::Error;
use std::io::{Read, Write};
use std::net::{Ipv6Addr, TcpListener, TcpStream};
use std::process::ExitCode;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// `wr_id` of every receive (the values of rc_pingpong.c, used as bits of `pending`).
const RECV_WRID: u64 = 1;
/// `wr_id` of every send.
const SEND_WRID: u64 = 2;
/// `sizeof "0000:000000:000000:00000000000000000000000000000000"`: the text and its NUL.
const MSG_LEN: usize = "0000:000000:000000:00000000000000000000000000000000".len() + 1;
/// What the client writes after reading the server's address (`sizeof "done"`, NUL included).
const DONE: &[u8; 5] = b"done\0";

type Res<T> = Result<T, Box<dyn Error>>;

#[derive(Debug)]
struct Opts {
    port: u16,
    ib_dev: Option<String>,
    ib_port: u8,
    size: u32,
    mtu: u32,
    rx_depth: u32,
    iters: u32,
    gid_idx: Option<u8>,
    server: Option<String>,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            port: 18515,
            ib_dev: None,
            ib_port: 1,
            size: 4096,
            mtu: 1024,
            rx_depth: 500,
            iters: 1000,
            gid_idx: None,
            server: None,
        }
    }
}

enum ArgError {
    Help,
    Bad(String),
}

fn usage(argv0: &str) -> String {
    format!(
        "Usage:
  {argv0}            start a server and wait for connection
  {argv0} <host>     connect to server at <host>

Options:
  -p, --port=<port>      listen on/connect to port <port> (default 18515)
  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)
  -i, --ib-port=<port>   use port <port> of IB device (default 1)
  -s, --size=<size>      size of message to exchange (default 4096)
  -m, --mtu=<size>       path MTU: 256, 512, 1024, 2048 or 4096 (default 1024)
  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)
  -n, --iters=<iters>    number of exchanges (default 1000)
  -g, --gid-idx=<gid index> local port gid index (RoCE; default: address by LID)
  -h, --help             print this help
"
    )
}

/// An unsigned number as `strtoul(s, NULL, 0)` reads it (decimal, `0x` hex, `0` octal), but
/// refusing trailing garbage instead of ignoring it.
fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, radix) = if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (hex, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

fn num<T: TryFrom<u64>>(opt: &str, value: &str, min: u64, what: &str) -> Result<T, ArgError> {
    parse_num(value)
        .filter(|&v| v >= min)
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| ArgError::Bad(format!("invalid value '{value}' for {opt}: {what}")))
}

fn parse_args(args: &[String]) -> Result<Opts, ArgError> {
    let mut o = Opts::default();
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        // The option's canonical name, and its value if it came attached (`--x=v`, `-xv`).
        let (name, attached): (String, Option<String>) = if arg == "--" {
            positional.extend(args[i..].iter().cloned());
            break;
        } else if let Some(long) = arg.strip_prefix("--") {
            let (n, v) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let short = match n {
                "port" => "p",
                "ib-dev" => "d",
                "ib-port" => "i",
                "size" => "s",
                "mtu" => "m",
                "rx-depth" => "r",
                "iters" => "n",
                "gid-idx" => "g",
                "help" => "h",
                _ => return Err(ArgError::Bad(format!("unrecognized option '--{n}'"))),
            };
            (short.to_string(), v)
        } else if arg.len() > 1 && arg.starts_with('-') {
            let mut chars = arg[1..].chars();
            let c = chars.next().unwrap_or('?');
            let rest = chars.as_str();
            (c.to_string(), (!rest.is_empty()).then(|| rest.to_string()))
        } else {
            positional.push(arg.clone());
            continue;
        };
        if name == "h" {
            return Err(ArgError::Help);
        }
        if !"pdisrmng".contains(name.as_str()) || name.len() != 1 {
            return Err(ArgError::Bad(format!("invalid option '{arg}'")));
        }
        let value = match attached {
            Some(v) => v,
            None if i < args.len() => {
                i += 1;
                args[i - 1].clone()
            }
            None => return Err(ArgError::Bad(format!("option '{arg}' requires an argument"))),
        };
        let opt = format!("-{name}");
        match name.as_str() {
            "p" => o.port = num(&opt, &value, 0, "a TCP port, 0..65535")?,
            "d" => o.ib_dev = Some(value),
            "i" => o.ib_port = num(&opt, &value, 1, "a port number, 1..255")?,
            "s" => o.size = num(&opt, &value, 1, "a message size in bytes, 1..4294967295")?,
            "m" => {
                o.mtu = num(&opt, &value, 0, "256, 512, 1024, 2048 or 4096")?;
                if ![256, 512, 1024, 2048, 4096].contains(&o.mtu) {
                    return Err(ArgError::Bad(format!(
                        "invalid value '{value}' for -m: 256, 512, 1024, 2048 or 4096"
                    )));
                }
            }
            "r" => o.rx_depth = num(&opt, &value, 1, "at least one receive")?,
            "n" => o.iters = num(&opt, &value, 1, "at least one iteration")?,
            "g" => o.gid_idx = Some(num(&opt, &value, 0, "a GID table index, 0..255")?),
            _ => unreachable!("checked against the option list above"),
        }
    }
    match positional.len() {
        0 => {}
        1 => o.server = positional.pop(),
        _ => {
            return Err(ArgError::Bad(format!(
                "only one server name expected, got {positional:?}"
            )))
        }
    }
    Ok(o)
}

/// One side's address, as rc_pingpong.c's `struct pingpong_dest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Dest {
    lid: u16,
    qpn: u32,
    psn: u32,
    gid: [u8; 16],
}

impl Dest {
    /// `sprintf(msg, "%04x:%06x:%06x:%s", lid, qpn, psn, gid_to_wire_gid(gid))`, NUL-padded.
    fn to_wire(self) -> [u8; MSG_LEN] {
        let gid: String = self.gid.iter().map(|b| format!("{b:02x}")).collect();
        let text = format!("{:04x}:{:06x}:{:06x}:{gid}", self.lid, self.qpn, self.psn);
        let mut msg = [0u8; MSG_LEN];
        let n = text.len().min(MSG_LEN - 1);
        msg[..n].copy_from_slice(&text.as_bytes()[..n]);
        msg
    }

    /// `sscanf(msg, "%x:%x:%x:%s", ...)` and `wire_gid_to_gid`.
    fn from_wire(msg: &[u8]) -> Result<Dest, String> {
        let end = msg.iter().position(|&b| b == 0).unwrap_or(msg.len());
        let text = String::from_utf8_lossy(&msg[..end]);
        let bad = || format!("malformed address from the peer: {text:?} (expected LID:QPN:PSN:GID in hex)");
        let mut parts = text.split(':');
        let mut field = |max: u32| {
            parts
                .next()
                .and_then(|f| u32::from_str_radix(f, 16).ok())
                .filter(|&v| v <= max)
                .ok_or_else(bad)
        };
        let lid = field(0xffff)? as u16;
        let qpn = field(0xff_ffff)?;
        let psn = field(0xff_ffff)?;
        let wire = parts.next().ok_or_else(bad)?;
        if parts.next().is_some() || wire.len() != 32 || !wire.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let mut gid = [0u8; 16];
        for (i, byte) in gid.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&wire[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(Dest { lid, qpn, psn, gid })
    }

    fn print(&self, which: &str) {
        println!(
            "  {which} LID 0x{:04x}, QPN 0x{:06x}, PSN 0x{:06x}, GID {}",
            self.lid,
            self.qpn,
            self.psn,
            Ipv6Addr::from(self.gid)
        );
    }
}

/// A random 24-bit PSN: from /dev/urandom, else from the clock and the process id.
fn random_psn() -> u32 {
    let mut b = [0u8; 4];
    let from_urandom = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    let v = match from_urandom {
        Ok(()) => u32::from_le_bytes(b),
        Err(_) => {
            let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
            t.subsec_nanos() ^ (t.as_secs() as u32) ^ std::process::id().wrapping_mul(2_654_435_761)
        }
    };
    v & 0x00ff_ffff
}

/// Reads exactly `buf.len()` bytes of `what` from the peer (`who`).
fn read_msg(stream: &mut TcpStream, buf: &mut [u8], what: &str, who: &str) -> Res<()> {
    stream.read_exact(buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            format!("couldn't read the {who}'s {what}: the {who} closed the connection first (see its output for why)")
        } else {
            format!("couldn't read the {who}'s {what}: {e}")
        }
    })?;
    Ok(())
}

fn read_dest(stream: &mut TcpStream, who: &str) -> Res<Dest> {
    let mut msg = [0u8; MSG_LEN];
    read_msg(stream, &mut msg, "address", who)?;
    Ok(Dest::from_wire(&msg)?)
}

fn write_dest(stream: &mut TcpStream, my: &Dest) -> Res<()> {
    stream
        .write_all(&my.to_wire())
        .map_err(|e| format!("couldn't send the local address: {e}"))?;
    Ok(())
}

/// Listens as getaddrinfo(NULL, port, AI_PASSIVE) orders it (IPv4 first) and takes one client.
fn accept_one(port: u16) -> Res<TcpStream> {
    let listener = TcpListener::bind(("0.0.0.0", port))
        .or_else(|_| TcpListener::bind(("::", port)))
        .map_err(|e| format!("couldn't listen to port {port}: {e}"))?;
    let (stream, _) = listener.accept().map_err(|e| format!("accept() failed: {e}"))?;
    Ok(stream)
}

/// Posts `n` receives of the whole buffer.
fn post_recvs<S>(qp: &RcQp<S>, sge: Sge<'_>, n: u32) -> mlx5dv::Result<()> {
    for _ in 0..n {
        qp.post_recv(RECV_WRID, &[sge])?;
    }
    Ok(())
}

fn post_send(qp: &mut RcQp<mlx5dv::state::Rts>, sge: Sge<'_>) -> mlx5dv::Result<()> {
    let mut batch = qp.batch();
    batch.send(SEND_WRID).sge(sge)?;
    batch.commit()
}

/// INIT -> RTR -> RTS towards `rem`, with rc_pingpong.c's attributes. As there, the path is global
/// (GRH, hop limit 1, sent from local GID index `-g`) when the peer sent a GID (non-zero
/// interface id), by the peer's LID otherwise. One difference: on InfiniBand (`roce` false) the
/// path is always by LID, because [`PeerPath::Gid`] carries no DLID (rc_pingpong.c sets both
/// the GRH and the DLID); within one subnet the GRH is not needed.
fn connect(
    qp: RcQp<mlx5dv::state::Init>,
    o: &Opts,
    roce: bool,
    my_psn: u32,
    rem: &Dest,
) -> Res<RcQp<mlx5dv::state::Rts>> {
    let path = match o.gid_idx {
        Some(sgid_index) if roce && rem.gid[8..] != [0; 8] => PeerPath::Gid {
            sl: 0,
            gid: rem.gid,
            sgid_index,
            hop_limit: 1,
            traffic_class: 0,
            flow_label: 0,
        },
        _ => PeerPath::Lid { lid: rem.lid, sl: 0 },
    };
    let remote = RcRemote {
        qp_num: rem.qpn,
        psn: rem.psn,
        path,
        mtu_bytes: o.mtu,
        max_dest_rd_atomic: 1,
        min_rnr_timer: 12,
    };
    let qp = qp.rtr(&remote)?;
    let rts = RtsAttr {
        timeout: 14,
        retry_cnt: 7,
        rnr_retry: 7,
        sq_psn: my_psn,
        max_rd_atomic: 1,
    };
    Ok(qp.rts(rts)?)
}

fn run(o: &Opts) -> Res<()> {
    let list = mlx5dv::devices()?;
    let dev = match &o.ib_dev {
        None => list.iter().next().ok_or("No IB devices found")?,
        Some(name) => list.iter().find(|d| d.name() == *name).ok_or_else(|| {
            let names: Vec<String> = list.iter().map(|d| d.name()).collect();
            if names.is_empty() {
                format!("IB device {name} not found (no RDMA devices on this machine)")
            } else {
                format!("IB device {name} not found (devices: {})", names.join(", "))
            }
        })?,
    };
    let ctx = dev.open()?;
    let port = ctx.query_port(o.ib_port)?;
    let lid = port.lid();
    let roce = port.link_layer_str() == "Ethernet";
    if !roce && lid == 0 {
        return Err(format!(
            "couldn't get the local LID ({} port {} is {})",
            ctx.name(),
            o.ib_port,
            port.state_str()
        )
        .into());
    }
    if roce && o.gid_idx.is_none() {
        // ibv_rc_pingpong would go on and fail at RTR: RoCE has no LIDs.
        return Err(format!(
            "{} port {} is RoCE (Ethernet link layer), which has no LIDs: address peers by GID with -g <gid index>",
            ctx.name(),
            o.ib_port
        )
        .into());
    }
    let gid = match o.gid_idx {
        Some(index) => {
            let gid = ctx.query_gid(o.ib_port, index)?;
            // libibverbs reports an unpopulated table entry as success with an all-zero GID
            // (its "preserve API behavior for empty GID"); such a GID routes nowhere.
            if gid == [0; 16] {
                return Err(format!(
                    "GID index {index} of {} port {} is empty: pick a populated index (see ibv_devinfo -v)",
                    ctx.name(),
                    o.ib_port
                )
                .into());
            }
            gid
        }
        None => [0; 16],
    };
    let pd = ctx.alloc_pd()?;
    let size = o.size as usize;
    let mut mr = pd.alloc_mr(size, Access::LOCAL_WRITE)?;
    // rc_pingpong.c fills its buffer with 0x7b.
    mr.write(0, &vec![0x7b; size])?;
    let mr = mr;
    let sge = mr.sge(0, size)?;
    let cq: Cq = ctx.create_cq(o.rx_depth + 1)?;
    let caps = RcCaps {
        max_send_wr: 1,
        max_recv_wr: o.rx_depth,
        max_send_sge: 1,
        max_recv_sge: 1,
        max_inline_data: 0,
    };
    let qp = pd.create_rc_qp(&cq, None, caps)?;
    let qp = qp.init(o.ib_port, Access::none())?;
    post_recvs(&qp, sge, o.rx_depth)?;
    let mut routs = o.rx_depth;

    let my_psn = random_psn();
    let my = Dest {
        lid,
        qpn: qp.qp_num(),
        psn: my_psn,
        gid,
    };
    my.print("local address: ");

    let mut qp = match &o.server {
        Some(host) => {
            let mut s = TcpStream::connect((host.as_str(), o.port))
                .map_err(|e| format!("couldn't connect to {host}:{}: {e}", o.port))?;
            write_dest(&mut s, &my)?;
            let rem = read_dest(&mut s, "server")?;
            s.write_all(DONE).map_err(|e| format!("couldn't send \"done\": {e}"))?;
            drop(s);
            rem.print("remote address:");
            connect(qp, o, roce, my_psn, &rem)?
        }
        None => {
            let mut s = accept_one(o.port)?;
            let rem = read_dest(&mut s, "client")?;
            let qp = connect(qp, o, roce, my_psn, &rem)?;
            write_dest(&mut s, &my)?;
            let mut done = [0u8; DONE.len()];
            read_msg(&mut s, &mut done, "\"done\"", "client")?;
            drop(s);
            rem.print("remote address:");
            qp
        }
    };

    let mut pending = RECV_WRID;
    if o.server.is_some() {
        post_send(&mut qp, sge)?;
        pending |= SEND_WRID;
    }
    let start = Instant::now();
    let (mut rcnt, mut scnt) = (0u32, 0u32);
    let mut wcs = [Completion::default(); 2];
    while rcnt < o.iters || scnt < o.iters {
        let n = cq.poll(&mut wcs)?;
        for wc in &wcs[..n] {
            if !wc.status.is_success() {
                return Err(format!(
                    "Failed status {} ({}) for wr_id {}",
                    wc.status,
                    wc.status.to_raw(),
                    wc.wr_id
                )
                .into());
            }
            match wc.wr_id {
                SEND_WRID => scnt += 1,
                RECV_WRID => {
                    routs -= 1;
                    if routs <= 1 {
                        post_recvs(&qp, sge, o.rx_depth - routs)?;
                        routs = o.rx_depth;
                    }
                    rcnt += 1;
                }
                other => return Err(format!("Completion for unknown wr_id {other}").into()),
            }
            pending &= !wc.wr_id;
            if scnt < o.iters && pending == 0 {
                post_send(&mut qp, sge)?;
                pending = RECV_WRID | SEND_WRID;
            }
        }
    }
    let usec = start.elapsed().as_secs_f64() * 1e6;
    let bytes = u64::from(o.size) * u64::from(o.iters) * 2;
    println!(
        "{bytes} bytes in {:.2} seconds = {:.2} Mbit/sec",
        usec / 1e6,
        bytes as f64 * 8.0 / usec
    );
    println!(
        "{} iters in {:.2} seconds = {:.2} usec/iter",
        o.iters,
        usec / 1e6,
        usec / f64::from(o.iters)
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let argv0 = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .map_or("rc_pingpong".into(), |n| n.to_string_lossy().into_owned());
    let opts = match parse_args(args.get(1..).unwrap_or(&[])) {
        Ok(o) => o,
        Err(ArgError::Help) => {
            print!("{}", usage(&argv0));
            return ExitCode::SUCCESS;
        }
        Err(ArgError::Bad(why)) => {
            eprintln!("{argv0}: {why}");
            eprint!("{}", usage(&argv0));
            return ExitCode::FAILURE;
        }
    };
    match run(&opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{argv0}: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_format_matches_rc_pingpong() {
        let mut gid = [0u8; 16];
        gid[10] = 0xff;
        gid[11] = 0xff;
        gid[12..].copy_from_slice(&[10, 77, 0, 1]);
        let d = Dest {
            lid: 0,
            qpn: 0x11,
            psn: 0xabcdef,
            gid,
        };
        let msg = d.to_wire();
        assert_eq!(msg.len(), 52);
        assert_eq!(&msg[..51], b"0000:000011:abcdef:00000000000000000000ffff0a4d0001");
        assert_eq!(msg[51], 0);
        assert_eq!(Dest::from_wire(&msg), Ok(d));
    }
}
