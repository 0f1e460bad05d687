//! Path settings of S3 over RDMA on one emulated node (scripts/soft-mlx5): what
//! `ExecutorConfig::path` and `ClientConfig::path` set is what the requests carry on the wire,
//! as the device that receives them sees it, and the partition (P_Key) decides whether they
//! are taken at all. The device finds an address's port and GID by its IP
//! (`mlx5dv::open_by_ip`).
//!
//! Run with `SOFT_MLX5_CAPTURE=<file>` (soft-mlx5 appends a line per request arriving at a QP
//! or DCT, with its headers' SL, traffic class, hop limit, flow label and P_Key) and, on
//! InfiniBand, `SOFT_MLX5_PKEYS=0xffff,0x8001,0x0001` (scripts/test does both).

use mlx5dv::s3::{Client, ClientConfig, Direction, Done, Executor, ExecutorConfig, PathSettings};
use mlx5dv::{Access, Context, DcKey, Mlx5Context, Pd, WcStatus};
use mlx5dv_suite::device::{open, pool_cq, test_backend};
use mlx5dv_suite::s3_pattern;
use std::net::IpAddr;
use std::time::{Duration, Instant};

const KEY: DcKey = DcKey::new(0x5041_5448_5345_5454);

struct Node {
    ctx: Context,
    mlx5: Mlx5Context,
    pd: Pd,
    ethernet: bool,
}

fn node() -> Node {
    let (ctx, _, _) = open();
    let mlx5 = ctx.mlx5().expect("an mlx5 device");
    let pd = ctx.alloc_pd().expect("PD");
    let ethernet = ctx.query_port(1).expect("port").is_ethernet();
    Node {
        ctx,
        mlx5,
        pd,
        ethernet,
    }
}

impl Node {
    fn executor(&self, path: PathSettings) -> Executor {
        let mut cfg = ExecutorConfig {
            key: KEY,
            path,
            ..ExecutorConfig::default()
        };
        cfg.pool.backend = test_backend();
        // A request nobody takes fails in a few hundred milliseconds, not seconds.
        cfg.pool.rts.timeout = 10;
        cfg.pool.rts.retry_cnt = 2;
        if let Some(p) = cfg.pool.probation.as_mut() {
            p.rts.timeout = 10;
            p.rts.retry_cnt = 2;
        }
        Executor::new(&self.mlx5, &self.pd, pool_cq(&self.ctx, 1024), cfg).expect("executor")
    }

    fn client(&self, path: PathSettings) -> Client {
        let cfg = ClientConfig {
            path,
            ..ClientConfig::default()
        };
        Client::new(&self.mlx5, &self.pd, KEY, cfg).expect("client DCT")
    }

    /// One GET of `len` bytes from the executor into a buffer of `client`'s: its outcome, and
    /// whether the bytes arrived.
    fn get(&self, exec: &mut Executor, client: &Client, len: usize) -> (Done, bool) {
        let mr = self.pd.register(vec![0u8; len], Access::LOCAL_WRITE).expect("register");
        let mut exposed = client.expose(mr).expect("expose");
        let (_, token) = exposed.mint(0, len, Direction::Get).expect("mint");
        let object = self
            .pd
            .register(s3_pattern(len, 7), Access::LOCAL_WRITE)
            .expect("register");
        exec.hold(&object).expect("hold");
        exec.submit(1, &token, 0, Direction::Get, object.sge(0, len).unwrap())
            .expect("submit");
        let mut out = [Done::default()];
        let deadline = Instant::now() + Duration::from_secs(10);
        while exec.poll(&mut out).expect("poll") == 0 {
            assert!(Instant::now() < deadline, "the GET never finished");
        }
        let mut got = vec![0u8; len];
        exposed.mr().read(0, &mut got).expect("read");
        (out[0].clone(), got == s3_pattern(len, 7))
    }
}

/// One captured request: the fields of a line soft-mlx5 wrote.
#[derive(Debug)]
struct Seen {
    dqpn: u32,
    sl: u8,
    tclass: u8,
    hop_limit: u8,
    flow_label: u32,
    pkey: u16,
    accepted: bool,
}

/// The requests the capture file holds that arrived at QP or DCT `dqpn`.
fn captured(dqpn: u32) -> Vec<Seen> {
    let path = std::env::var("SOFT_MLX5_CAPTURE")
        .expect("this test reads soft-mlx5's capture: run it with SOFT_MLX5_CAPTURE=<file> (scripts/test does)");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let num = |v: &str| {
        v.strip_prefix("0x")
            .map_or_else(|| v.parse::<u64>(), |h| u64::from_str_radix(h, 16))
            .unwrap_or_else(|e| panic!("capture field {v:?}: {e}"))
    };
    text.lines()
        .filter_map(|line| {
            let field = |name: &str| {
                line.split_whitespace()
                    .find_map(|kv| kv.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
                    .map(num)
            };
            let seen = Seen {
                dqpn: field("dqpn")? as u32,
                sl: field("sl")? as u8,
                tclass: field("tclass")? as u8,
                hop_limit: field("hop_limit")? as u8,
                flow_label: field("flow_label")? as u32,
                pkey: field("pkey")? as u16,
                accepted: line.ends_with(" accepted"),
            };
            (seen.dqpn == dqpn).then_some(seen)
        })
        .collect()
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 with SOFT_MLX5_CAPTURE"]
fn the_executors_sl_traffic_class_hop_limit_and_flow_label_are_what_its_requests_carry() {
    let n = node();
    let set = PathSettings {
        sl: 5,
        traffic_class: 106,
        hop_limit: 9,
        flow_label: 0x1_2345,
        pkey_index: 0,
    };
    let mut exec = n.executor(set);
    let client = n.client(PathSettings::default());
    let (done, arrived) = n.get(&mut exec, &client, 64 << 10);
    assert!(done.is_ok() && arrived, "{done:?}");
    let seen = captured(client.dct().dct_number());
    assert!(!seen.is_empty(), "no request to the client's DCT was captured");
    for s in &seen {
        assert!(s.accepted, "{s:?}");
        assert_eq!(s.sl, 5, "the SL (RoCE: the priority) of {s:?}");
        if n.ethernet {
            // RoCE v2: the GRH fields are the IP header's DSCP/ECN, TTL and flow label.
            assert_eq!((s.tclass, s.hop_limit, s.flow_label), (106, 9, 0x1_2345), "{s:?}");
        } else {
            // InfiniBand within a subnet: LIDs route, no GRH is sent.
            assert_eq!((s.tclass, s.hop_limit, s.flow_label), (0, 0, 0), "{s:?}");
        }
        assert_eq!(s.pkey, 0xffff, "{s:?}");
    }
    // The defaults, for contrast: SL 0, traffic class 0.
    let mut plain = n.executor(PathSettings::default());
    let other = n.client(PathSettings::default());
    let (done, arrived) = n.get(&mut plain, &other, 4096);
    assert!(done.is_ok() && arrived, "{done:?}");
    let seen = captured(other.dct().dct_number());
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|s| s.sl == 0 && s.tclass == 0), "{seen:?}");
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 with SOFT_MLX5_CAPTURE"]
fn settings_the_link_layer_cannot_carry_are_refused_before_anything_is_made() {
    let n = node();
    let sl = if n.ethernet { 8 } else { 16 };
    let cfg = ExecutorConfig {
        key: KEY,
        path: PathSettings {
            sl,
            ..PathSettings::default()
        },
        ..ExecutorConfig::default()
    };
    let err = Executor::new(&n.mlx5, &n.pd, pool_cq(&n.ctx, 1024), cfg).expect_err("an SL the link cannot carry");
    assert_eq!(err.error().errno(), Some(libc::EINVAL), "{}", err.error());
    let cfg = ClientConfig {
        path: PathSettings {
            flow_label: 1 << 20,
            ..PathSettings::default()
        },
        ..ClientConfig::default()
    };
    let err = Client::new(&n.mlx5, &n.pd, KEY, cfg).expect_err("a 21-bit flow label");
    assert_eq!(err.errno(), Some(libc::EINVAL), "{err}");
}

/// IBA 10.9.3: a request is taken only when its P_Key and the target's match and they are not
/// both limited members. The port's table here is `0xffff, 0x8001, 0x0001` (SOFT_MLX5_PKEYS):
/// DCIs in the limited member 0x0001 reach a DCT that is a full member 0x8001, and do not reach
/// one that is a limited member too, whose device drops their requests without an answer
/// (their DCI sees ACK timeouts). On RoCE the table is the default P_Key alone, and an index
/// past it is refused.
#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5 with SOFT_MLX5_CAPTURE (and SOFT_MLX5_PKEYS on InfiniBand)"]
fn a_limited_member_reaches_a_full_member_of_its_partition_and_never_another_limited_one() {
    let n = node();
    let table = n.ctx.query_port(1).expect("port").0.pkey_tbl_len;
    let in_partition = |pkey_index| PathSettings {
        pkey_index,
        ..PathSettings::default()
    };
    if n.ethernet {
        assert_eq!(table, 1, "mlx5 reports one P_Key on RoCE");
        let err = Client::new(
            &n.mlx5,
            &n.pd,
            KEY,
            ClientConfig {
                path: in_partition(1),
                ..ClientConfig::default()
            },
        )
        .expect_err("a P_Key index past the table");
        assert_eq!(err.errno(), Some(libc::EINVAL), "{err}");
        return;
    }
    assert!(
        table >= 3,
        "this test needs the P_Key table 0xffff,0x8001,0x0001 (SOFT_MLX5_PKEYS); the port has {table} entries"
    );
    let mut exec = n.executor(in_partition(2));
    let full = n.client(in_partition(1));
    let (done, arrived) = n.get(&mut exec, &full, 4096);
    assert!(done.is_ok() && arrived, "a limited member reaches a full one: {done:?}");
    let limited = n.client(in_partition(2));
    let (done, arrived) = n.get(&mut exec, &limited, 4096);
    assert_eq!(done.status, WcStatus::RetryExcErr, "two limited members: {done:?}");
    assert!(!arrived, "no byte reaches the other limited member");
    let seen = captured(limited.dct().dct_number());
    assert!(
        !seen.is_empty() && seen.iter().all(|s| !s.accepted && s.pkey == 0x0001),
        "{seen:?}"
    );
    assert!(captured(full.dct().dct_number())
        .iter()
        .all(|s| s.accepted && s.pkey == 0x0001));
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5"]
fn open_by_ip_finds_the_port_and_gid_an_address_is_on_and_refuses_one_that_is_nowhere() {
    let n = node();
    if n.ethernet {
        // The port's IPv4-mapped RoCE v2 GID is the address of its netdev.
        let index = n.ctx.roce_v2_gid_index(1).expect("gid index").expect("a RoCE v2 GID");
        let gid = n.ctx.query_gid(1, index).expect("gid");
        let ip = IpAddr::from([gid[12], gid[13], gid[14], gid[15]]);
        let found = mlx5dv::open_by_ip(ip).expect("the device of the address");
        assert_eq!(found.context.name(), n.ctx.name());
        assert_eq!((found.port, found.gid_index), (1, Some(index)));
    }
    // No port has it (and on this emulated InfiniBand no IPoIB interface exists).
    let err = mlx5dv::open_by_ip("192.0.2.77".parse().unwrap()).expect_err("an address of no port");
    assert_eq!(err.errno(), Some(libc::ENODEV), "{err}");
    assert!(err.to_string().contains("192.0.2.77"), "{err}");
}
