//! What the S3 executor remembers of a client apart from its endpoint (issue 45), on one
//! emulated node (scripts/soft-mlx5): endpoints and address handles are caches, dropped and
//! made again, while a client's standing (it answered within `proven_idle`, its last transfer
//! did not time out) is kept in a table of its own. So a returning honest client whose endpoint
//! was released runs on the proven DCIs, not on probation; a client whose last transfer timed
//! out, or whose last answer is older than `proven_idle`, is back on probation; the table is
//! bounded. Every verdict counts requests per DCI (`DciPool::posted_per_dci`) and the
//! executor's counters: none depends on how busy the machine is.

use mlx5dv::s3::{Client, ClientConfig, Direction, Done, Executor, Exposed, RdmaToken};
use mlx5dv::{DcKey, Mr, WcStatus};
use mlx5dv_suite::{s3_pattern, S3Node};
use std::time::{Duration, Instant};

const KEY: DcKey = DcKey::new(0x5333_5253_4b45_5931);

/// A client of the node: its DCT, a 4 KiB buffer behind it and a GET token for it.
struct Peer {
    token: RdmaToken,
    _buf: Exposed<Vec<u8>>,
    _client: Client,
}

fn peer(n: &S3Node) -> Peer {
    let client = Client::new(&n.mlx5, &n.pd, KEY, ClientConfig::default()).expect("client DCT");
    let mut buf = mlx5dv_suite::s3_exposed(&n.pd, &client, 4096, 0);
    let (_, token) = buf.mint(0, 4096, Direction::Get).expect("mint");
    Peer {
        token,
        _buf: buf,
        _client: client,
    }
}

/// A 4 KiB server-side buffer the executor holds.
fn object(n: &S3Node, exec: &mut Executor) -> Mr<Vec<u8>> {
    let mr =
        n.pd.register(s3_pattern(4096, 3), mlx5dv::Access::LOCAL_WRITE)
            .expect("register");
    exec.hold(&mr).expect("hold");
    mr
}

/// Requests posted so far on the main DCIs and on the probation DCIs.
fn posted(exec: &Executor) -> (u64, u64) {
    exec.pool().posted_per_dci().fold(
        (0, 0),
        |(m, p), (probation, n)| if probation { (m, p + n) } else { (m + n, p) },
    )
}

/// One GET of `token` into the client, polled to its end (10 s backstop against a hang);
/// the requests it posted on the main and the probation DCIs come back with its Done.
fn get(exec: &mut Executor, object: &Mr<Vec<u8>>, token: &RdmaToken, id: u64) -> (Done, (u64, u64)) {
    let before = posted(exec);
    exec.submit(id, token, 0, Direction::Get, object.sge(0, 4096).unwrap())
        .expect("submit");
    let mut out = vec![Done::default(); 4];
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let k = exec.poll(&mut out).expect("poll");
        if k > 0 {
            assert_eq!(k, 1);
            let after = posted(exec);
            return (out[0].clone(), (after.0 - before.0, after.1 - before.1));
        }
        assert!(Instant::now() < deadline, "transfer {id} never finished");
    }
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5"]
fn returning_proven_clients_past_keep_idle_run_on_the_main_dcis_not_on_probation() {
    // 16 rotating clients, 2 kept idle: every return finds its endpoint released.
    let n = S3Node::open();
    let mut exec = n.executor(KEY, |c| c.keep_idle = 2);
    let object = object(&n, &mut exec);
    let peers: Vec<Peer> = (0..16).map(|_| peer(&n)).collect();
    for (i, p) in peers.iter().enumerate() {
        let (done, (_, probation)) = get(&mut exec, &object, &p.token, i as u64);
        assert!(done.is_ok(), "first contact: {done:?}");
        assert_eq!(probation, 1, "a first contact runs on probation");
    }
    let released = exec.stats().released;
    let mut on = (0, 0);
    for round in 1..=3u64 {
        for (i, p) in peers.iter().enumerate() {
            let (done, (main, probation)) = get(&mut exec, &object, &p.token, 100 * round + i as u64);
            assert!(done.is_ok(), "{done:?}");
            on = (on.0 + main, on.1 + probation);
        }
    }
    let s = exec.stats();
    assert!(
        s.released - released >= 3 * 14,
        "the rotation released the returning clients' endpoints: {s:?}"
    );
    assert_eq!(
        on,
        (3 * 16, 0),
        "(main, probation) requests of 48 returns of proven clients whose endpoints were released: {s:?}"
    );
    assert_eq!(s.recalled, 3 * 16, "every return found its endpoint released: {s:?}");
    assert!(exec.remembered() <= 16);
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5"]
fn a_released_proven_client_is_back_on_probation_once_a_transfer_of_it_timed_out() {
    let n = S3Node::open();
    let mut exec = n.executor(KEY, |c| c.keep_idle = 0);
    let object = object(&n, &mut exec);
    let peer = peer(&n);
    assert!(get(&mut exec, &object, &peer.token, 0).0.is_ok(), "first contact");
    let (done, on) = get(&mut exec, &object, &peer.token, 1);
    assert!(done.is_ok(), "{done:?}");
    assert_eq!(on, (1, 0), "proven, its endpoint released: back on the main DCIs");
    // Its DCT destroyed: its next transfer times out (on a main DCI: it is still proven).
    let token = peer.token;
    drop(peer);
    let (done, on) = get(&mut exec, &object, &token, 2);
    assert_eq!(done.status, WcStatus::RetryExcErr, "{done:?}");
    assert_eq!(on, (1, 0));
    // Released again, its standing gone with the timeout: probation.
    let (done, on) = get(&mut exec, &object, &token, 3);
    assert_eq!(done.status, WcStatus::RetryExcErr, "{done:?}");
    assert_eq!(
        on,
        (0, 1),
        "a client whose last transfer timed out runs on probation: {:?}",
        exec.stats()
    );
    assert_eq!(exec.remembered(), 0, "a timed-out client is not remembered");
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5"]
fn a_released_client_whose_last_answer_is_older_than_proven_idle_is_back_on_probation() {
    const IDLE: Duration = Duration::from_millis(100);
    let n = S3Node::open();
    let mut exec = n.executor(KEY, |c| {
        c.keep_idle = 0;
        c.proven_idle = IDLE;
    });
    let object = object(&n, &mut exec);
    let peer = peer(&n);
    assert!(get(&mut exec, &object, &peer.token, 0).0.is_ok(), "first contact");
    let (done, on) = get(&mut exec, &object, &peer.token, 1);
    assert!(done.is_ok(), "{done:?}");
    assert_eq!(on, (1, 0), "answered just now, its endpoint released: the main DCIs");
    // Ten times proven_idle (only a lower bound matters: a slow machine only waits longer).
    std::thread::sleep(IDLE * 10);
    let (done, on) = get(&mut exec, &object, &peer.token, 2);
    assert!(done.is_ok(), "{done:?}");
    assert_eq!(on, (0, 1), "a proof is not banked: {:?}", exec.stats());
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5"]
fn a_hosts_address_handle_outlives_its_last_client_until_release_idle() {
    let n = S3Node::open();
    let mut exec = n.executor(KEY, |c| c.keep_idle = 0);
    let object = object(&n, &mut exec);
    let peer = peer(&n);
    assert!(get(&mut exec, &object, &peer.token, 0).0.is_ok());
    assert_eq!(exec.clients(), 0, "keep_idle 0: the endpoint is released");
    assert_eq!(exec.address_handles(), 1, "the host's address handle is kept");
    assert!(get(&mut exec, &object, &peer.token, 1).0.is_ok());
    exec.release_idle();
    assert_eq!((exec.clients(), exec.address_handles()), (0, 0));
    assert_eq!(exec.remembered(), 1, "its standing stays");
}

#[test]
#[ignore = "needs an mlx5 device: scripts/soft-mlx5"]
fn the_standing_table_never_holds_more_than_remembered_clients() {
    let n = S3Node::open();
    let mut exec = n.executor(KEY, |c| {
        c.keep_idle = 0;
        c.remembered_clients = 16;
    });
    let object = object(&n, &mut exec);
    let mut most = 0;
    for i in 0..40u64 {
        let peer = peer(&n);
        assert!(get(&mut exec, &object, &peer.token, i).0.is_ok());
        most = most.max(exec.remembered());
    }
    assert!(most <= 16, "{most} clients remembered");
    assert!(most >= 7, "{most}: a generation holds 7 of 16");
}
