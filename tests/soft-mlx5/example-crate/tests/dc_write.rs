//! DC RDMA writes between emulated nodes. Under `soft-mlx5 -- cargo test` (one node) a node
//! writes into its own DCT; under `soft-mlx5 --nodes 3 -- cargo test` node 0 serves a buffer
//! and nodes 1 and 2 write into it, meeting in `$SOFT_MLX5_RENDEZVOUS`. Without a device
//! (`MLX5DV_TEST_DEVICE` unset) the tests say "not run" and pass.
use dc_write_example::{Node, Target, WriteError, WC_REM_ACCESS_ERR, WC_RETRY_EXC_ERR};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const KEY: u64 = 0x5eed_c0de;
const SLOT: usize = 4096;

/// The device and GID index soft-mlx5 names (a ConnectX would be named the same way).
fn device() -> Option<(String, i32)> {
    let dev = std::env::var("MLX5DV_TEST_DEVICE").ok()?;
    let gid = std::env::var("MLX5DV_TEST_GID_INDEX")
        .ok()
        .and_then(|g| g.parse().ok())
        .unwrap_or(0);
    Some((dev, gid))
}

fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Publishes a file atomically (readers never see half of it).
fn publish(dir: &Path, name: &str, text: &str) {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, dir.join(name)).unwrap();
}

/// Waits for another node's file.
fn wait_for(dir: &Path, name: &str) -> String {
    let start = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(dir.join(name)) {
            return s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no {name} in {} after 120 s",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pattern(node: usize) -> u8 {
    0x40 + node as u8
}

#[test]
fn dc_writes_from_every_node_land_in_node_zeros_buffer_and_a_wrong_key_lands_nowhere() {
    let Some((dev, gid)) = device() else {
        eprintln!("not run: MLX5DV_TEST_DEVICE is not set (run under soft-mlx5)");
        return;
    };
    let nodes = env_num("SOFT_MLX5_NODES", 1);
    let me = env_num("SOFT_MLX5_NODE_INDEX", 0);
    if nodes == 1 {
        // One node: the DCI writes into its own node's DCT.
        let mut n = Node::open(&dev, gid, 4 * SLOT, KEY).unwrap();
        let t = n.target();
        n.buf()[2 * SLOT..3 * SLOT].fill(0xa5);
        n.write(&t, KEY, 2 * SLOT, SLOT as u64, SLOT).unwrap();
        assert!(
            n.buf()[SLOT..2 * SLOT].iter().all(|b| *b == 0xa5),
            "the write did not land"
        );
        // A ConnectX drops a request with the wrong DC key silently: the DCI retries until it gives up.
        match n.write(&t, KEY ^ 0xff, 2 * SLOT, 3 * SLOT as u64, SLOT) {
            Err(WriteError::Completion(WC_RETRY_EXC_ERR, _)) => {}
            other => panic!("a wrong DC key: expected retry exceeded, got {other:?}"),
        }
        assert!(
            n.buf()[3 * SLOT..].iter().all(|b| *b == 0),
            "a write with the wrong key landed"
        );
        println!("1 node: DC write landed, wrong key refused (retry exceeded)");
        return;
    }
    let dir =
        PathBuf::from(std::env::var("SOFT_MLX5_RENDEZVOUS").expect("SOFT_MLX5_RENDEZVOUS (soft-mlx5 --nodes sets it)"));
    if me == 0 {
        // Node 0 serves slots 1..nodes-1 (slot 0 is where wrong-key writes aim).
        let mut n = Node::open(&dev, gid, nodes * SLOT, KEY).unwrap();
        publish(&dir, "target", &n.target().encode());
        for i in 1..nodes {
            wait_for(&dir, &format!("done-{i}"));
        }
        for i in 1..nodes {
            let slot = &n.buf()[i * SLOT..(i + 1) * SLOT];
            assert!(slot.iter().all(|b| *b == pattern(i)), "node {i}'s write did not land");
        }
        assert!(
            n.buf()[..SLOT].iter().all(|b| *b == 0),
            "a write with the wrong key landed"
        );
        println!(
            "node 0: writes of {} nodes landed; wrong keys landed nowhere",
            nodes - 1
        );
    } else {
        let t = Target::decode(&wait_for(&dir, "target")).unwrap();
        let mut a = Node::open(&dev, gid, SLOT, KEY).unwrap();
        a.buf().fill(pattern(me));
        a.write(&t, KEY, 0, (me * SLOT) as u64, SLOT).unwrap();
        // A DCI in error is done for: the wrong-key write gets a DCI of its own.
        let mut b = Node::open(&dev, gid, SLOT, KEY).unwrap();
        b.buf().fill(0xee);
        match b.write(&t, KEY ^ 0xff, 0, 0, SLOT) {
            Err(WriteError::Completion(WC_RETRY_EXC_ERR, _)) => {}
            other => panic!("a wrong DC key: expected retry exceeded, got {other:?}"),
        }
        publish(&dir, &format!("done-{me}"), "");
        println!(
            "node {me}: wrote slot {me} of node 0's DCT {}; wrong key: retry exceeded",
            t.dctn
        );
    }
}

#[test]
fn a_write_past_the_registered_buffer_is_a_remote_access_error() {
    let Some((dev, gid)) = device() else {
        eprintln!("not run: MLX5DV_TEST_DEVICE is not set (run under soft-mlx5)");
        return;
    };
    let mut n = Node::open(&dev, gid, SLOT, KEY).unwrap();
    let t = n.target();
    match n.write(&t, KEY, 0, (SLOT / 2) as u64, SLOT) {
        Err(WriteError::Completion(WC_REM_ACCESS_ERR, _)) => {}
        other => panic!("a write past the region: expected a remote access error, got {other:?}"),
    }
}

#[test]
fn targets_travel_as_text() {
    let t = Target {
        dctn: 0x1_2345,
        lid: 3,
        gid: [7; 16],
        rkey: 0xdead_beef,
        addr: 1 << 40,
        len: 4096,
    };
    assert_eq!(Target::decode(&t.encode()), Ok(t));
    assert!(Target::decode("1 2 3").is_err());
}
