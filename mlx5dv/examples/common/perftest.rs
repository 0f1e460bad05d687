//! perftest's out-of-band TCP exchange (perftest 4.5, which calls itself version 6.06 on the
//! wire; `src/perftest_communication.c`), either side, so that an example can be the peer of
//! `ib_send_bw -c DC` or `ib_write_bw -c DC`. Only the plain TCP exchange is spoken (not
//! `-R`/rdma_cm), with one QP (`-q 1`), in the default report format.
//!
//! What travels, in order (in every step the client writes first, the server reads first):
//! - the version string (16 bytes, NUL padded), then the cycle buffer and the cache line size
//!   (4-byte big-endian ints), then the port MTU as the decimal `ibv_mtu` value (2 bytes:
//!   digit and NUL); both sides then use the smaller MTU;
//! - "hand shakes": one `struct pingpong_dest` as text (LID, outstanding reads, QP number, PSN,
//!   rkey, address, GIDs only when the side runs with a GID index (`-x`), SRQ number), 59 or
//!   108 bytes with the NUL. perftest repeats them as synchronisation points; a DC server's
//!   DCT number is only right once its DCT is in RTR, i.e. in the hand shakes after the first;
//! - for `ib_write_bw`, the client's bandwidth report (size, iterations as 8-byte big-endian
//!   ints, peak and average MB/s and Mmsg/s as byte-swapped doubles), which the server prints;
//! - at the end one more hand shake and the 5 bytes "done\0".
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

/// perftest's TCP port.
pub const DEFAULT_PORT: u16 = 18515;
/// The DC access key perftest's DCIs and DCTs use (`DC_KEY` in `perftest_resources.c`).
pub const DC_KEY: u64 = 0xffee_ddcc;
/// The protocol version this module speaks, as perftest 4.5 sends it.
const VERSION: &str = "6.06";
/// The oldest peer perftest itself accepts (`check_version_compatibility`).
const OLDEST_PEER: f64 = 5.70;
/// perftest's defaults for the cycle buffer (a page) and the cache line.
const CYCLE_BUFFER: i32 = 4096;
const CACHE_LINE: i32 = 64;

/// One side's `struct pingpong_dest`, as the hand shake carries it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dest {
    pub lid: u16,
    pub out_reads: u32,
    /// The QP number; a DC server's DCT number.
    pub qpn: u32,
    pub psn: u32,
    pub rkey: u32,
    pub vaddr: u64,
    /// Sent only when the side runs with a GID index; both sides must agree on that.
    pub gid: Option<[u8; 16]>,
    pub srqn: u32,
}

impl Dest {
    const LEN: usize = 59;
    const LEN_GID: usize = 108;

    /// The message perftest's `ethernet_write_keys` writes, NUL included.
    fn encode(&self) -> Vec<u8> {
        let mut s = format!(
            "{:04x}:{:04x}:{:06x}:{:06x}:{:08x}:{:016x}:",
            self.lid, self.out_reads, self.qpn, self.psn, self.rkey, self.vaddr
        );
        match self.gid {
            Some(gid) => {
                for b in gid {
                    s.push_str(&format!("{b:02x}:"));
                }
                s.push_str(&format!("{:08x}:", self.srqn));
            }
            None => s.push_str(&format!("{:08x}", self.srqn)),
        }
        let mut msg = s.into_bytes();
        msg.push(0);
        msg
    }

    /// Parses a message of `Dest::LEN` (no GID) or `Dest::LEN_GID` bytes.
    fn decode(msg: &[u8]) -> Result<Dest, String> {
        let text = std::str::from_utf8(msg)
            .ok()
            .map(|t| t.trim_end_matches('\0'))
            .ok_or("perftest's address message is not text")?;
        let bad = || format!("cannot parse perftest's address message {text:?}");
        let fields: Vec<u64> = text
            .split(':')
            .filter(|f| !f.is_empty())
            .map(|f| u64::from_str_radix(f, 16))
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        let narrow = |v: u64| u32::try_from(v).map_err(|_| bad());
        let gid = match fields.len() {
            7 => None,
            23 => {
                let mut gid = [0u8; 16];
                for (g, &f) in gid.iter_mut().zip(&fields[6..22]) {
                    *g = u8::try_from(f).map_err(|_| bad())?;
                }
                Some(gid)
            }
            _ => return Err(bad()),
        };
        Ok(Dest {
            lid: u16::try_from(fields[0]).map_err(|_| bad())?,
            out_reads: narrow(fields[1])?,
            qpn: narrow(fields[2])?,
            psn: narrow(fields[3])?,
            rkey: narrow(fields[4])?,
            vaddr: fields[5],
            gid,
            srqn: narrow(fields[fields.len() - 1])?,
        })
    }
}

/// A bandwidth report as `xchg_bw_reports` exchanges it (the server prints the client's).
#[derive(Clone, Copy, Debug, Default)]
pub struct BwReport {
    pub size: u64,
    pub iters: u64,
    /// MB/s (2^20 bytes), perftest's default report format.
    pub bw_peak: f64,
    pub bw_avg: f64,
    /// Millions of messages per second.
    pub msg_rate: f64,
}

/// A connection to a perftest peer, past the version and MTU exchange.
pub struct Session {
    sock: TcpStream,
    /// This side is the server: it reads first.
    server: bool,
    /// The peer's version string.
    pub peer_version: String,
    /// The path MTU both sides use (`ibv_mtu` value: 1 = 256 .. 5 = 4096).
    pub mtu: u32,
    /// The larger of the two sides' cycle buffers: a perftest client's RDMA writes walk that
    /// many bytes from the server's address.
    pub cycle_buffer: usize,
}

impl Session {
    /// Connects to a perftest server (`my_mtu` is this side's port MTU as an `ibv_mtu` value).
    pub fn connect(host: &str, port: u16, my_mtu: u32) -> Result<Session, String> {
        let sock =
            TcpStream::connect((host, port)).map_err(|e| format!("connect to perftest at {host}:{port}: {e}"))?;
        Session::start(sock, false, my_mtu)
    }

    /// Waits on `port` for one perftest client.
    pub fn accept(port: u16, my_mtu: u32) -> Result<Session, String> {
        let listener = TcpListener::bind(("0.0.0.0", port)).map_err(|e| format!("listen on {port}: {e}"))?;
        let (sock, _) = listener.accept().map_err(|e| format!("accept on {port}: {e}"))?;
        Session::start(sock, true, my_mtu)
    }

    /// Exchanges versions, buffer sizes and MTUs.
    fn start(sock: TcpStream, server: bool, my_mtu: u32) -> Result<Session, String> {
        if !(1..=5).contains(&my_mtu) {
            return Err(format!("port MTU value {my_mtu} is not an ibv_mtu (1..=5)"));
        }
        let mut c = Session {
            sock,
            server,
            peer_version: String::new(),
            mtu: my_mtu,
            cycle_buffer: CYCLE_BUFFER as usize,
        };
        let mut version = [0u8; 16];
        version[..VERSION.len()].copy_from_slice(VERSION.as_bytes());
        let theirs = c.xchg(&version)?;
        c.peer_version = String::from_utf8_lossy(&theirs).trim_end_matches('\0').to_string();
        match c.peer_version.parse::<f64>() {
            Ok(v) if v >= OLDEST_PEER => {}
            _ => {
                return Err(format!(
                    "perftest version {:?} on the other side: this exchange is perftest {VERSION}'s; {OLDEST_PEER} or newer is needed",
                    c.peer_version
                ))
            }
        }
        let theirs = c.xchg(&CYCLE_BUFFER.to_be_bytes())?;
        let theirs = i32::from_be_bytes([theirs[0], theirs[1], theirs[2], theirs[3]]);
        c.cycle_buffer = c.cycle_buffer.max(usize::try_from(theirs).unwrap_or(0));
        c.xchg(&CACHE_LINE.to_be_bytes())?;
        let theirs = c.xchg(&[b'0' + my_mtu as u8, 0])?;
        match theirs[0].checked_sub(b'0') {
            Some(m @ 1..=5) => c.mtu = c.mtu.min(u32::from(m)),
            _ => return Err(format!("perftest sent MTU {:?}, not an ibv_mtu value", &theirs[..])),
        }
        Ok(c)
    }

    /// Sends `mine` and receives as many bytes, in this side's order (`ctx_xchg_data`).
    fn xchg(&mut self, mine: &[u8]) -> Result<Vec<u8>, String> {
        let mut theirs = vec![0u8; mine.len()];
        if self.server {
            self.read(&mut theirs)?;
            self.write(mine)?;
        } else {
            self.write(mine)?;
            self.read(&mut theirs)?;
        }
        Ok(theirs)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.sock
            .write_all(bytes)
            .map_err(|e| format!("writing to perftest: {e}"))
    }

    fn read(&mut self, bytes: &mut [u8]) -> Result<(), String> {
        self.sock
            .read_exact(bytes)
            .map_err(|e| format!("reading from perftest (did it stop? see its output): {e}"))
    }

    /// One hand shake: sends `mine`, returns the peer's (`ctx_hand_shake`).
    pub fn hand_shake(&mut self, mine: &Dest) -> Result<Dest, String> {
        let msg = mine.encode();
        if msg.len() != if mine.gid.is_some() { Dest::LEN_GID } else { Dest::LEN } {
            return Err(format!("{mine:?} does not fit perftest's fixed-width address message"));
        }
        Dest::decode(&self.xchg(&msg)?)
            .map_err(|e| format!("{e} (both sides must run with a GID index, perftest -x, or neither)"))
    }

    /// Sends this side's report and returns the peer's (`xchg_bw_reports`).
    pub fn bw_report(&mut self, mine: &BwReport) -> Result<BwReport, String> {
        let u = |c: &mut Session, v: u64| -> Result<u64, String> {
            let b = c.xchg(&v.to_be_bytes())?;
            Ok(u64::from_be_bytes(b.try_into().map_err(|_| "short report")?))
        };
        let f = |c: &mut Session, v: f64| -> Result<f64, String> { Ok(f64::from_bits(u(c, v.to_bits())?)) };
        Ok(BwReport {
            size: u(self, mine.size)?,
            iters: u(self, mine.iters)?,
            bw_peak: f(self, mine.bw_peak)?,
            bw_avg: f(self, mine.bw_avg)?,
            msg_rate: f(self, mine.msg_rate)?,
        })
    }

    /// The closing hand shake and "done" (`ctx_close_connection`, which both sides send
    /// without waiting for the other's, then close): reads the peer's first, so the peer has
    /// finished when this returns and a peer that already closed cannot fail our read.
    pub fn close(mut self, mine: &Dest) -> Result<(), String> {
        self.hand_shake(mine)?;
        let mut done = [0u8; 5];
        self.read(&mut done)?;
        self.write(b"done\0")
    }
}
