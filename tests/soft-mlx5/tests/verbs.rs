//! Small C programs under tests/c, built against the system's libibverbs/libmlx5 and run
//! through the `soft-mlx5` tool as an application runs: each drives the real, unmodified
//! libraries over the emulated device, prints what it saw and exits 0 when the device behaved
//! as the kernel and silicon it names would. A time limit turns a hang into a failure.
//! Not built for another machine (`soft_mlx5_cross`, build.rs): there the tool cannot be started.
#![cfg(not(soft_mlx5_cross))]
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// Builds tests/c/`name`.c into the test's temporary directory.
fn build(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(format!("{name}.c"));
    let bin = tmp().join(format!("verbs-{name}"));
    let out = Command::new("cc")
        .args(["-O1", "-Wall", "-Werror", "-o"])
        .arg(&bin)
        .arg(&src)
        .args(["-libverbs", "-lmlx5"])
        .output()
        .unwrap_or_else(|e| panic!("these tests build C programs with `cc` ({e}): install gcc and libibverbs-dev"));
    assert!(
        out.status.success(),
        "cc {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}

/// Runs tests/c/`name`.c under `soft-mlx5 --profile <profile> <extra>` on a fabric of its own;
/// fails when it exits non-zero or is still running after `limit`. Returns its stdout.
fn run(name: &str, profile: &str, extra: &[&str], args: &[&str], limit: Duration) -> String {
    let bin = build(name);
    let fabric = tmp().join(format!("verbs-fabric-{name}-{profile}-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_soft-mlx5"))
        .args(["--profile", profile, "--fabric"])
        .arg(&fabric)
        .args(extra)
        .arg("--")
        .arg(&bin)
        .args(args)
        .env("SOFT_MLX5_CACHE", tmp().join("soft-mlx5-verbs-cache"))
        .env_remove("SOFT_MLX5_FABRIC")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&fabric);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    match status {
        None => panic!("{name} on {profile} still running after {limit:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"),
        Some(s) => assert!(
            s.success(),
            "{name} on {profile}: {s}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        ),
    }
    stdout
}

const PROFILES: [&str; 2] = ["cx5-ib", "cx6dx-roce"];

#[test]
fn two_cqs_of_one_channel_armed_back_to_back_each_raise_their_event() {
    for p in PROFILES {
        run("cq_arm_two", p, &[], &[], Duration::from_secs(20));
    }
}

/// Parses qp_many's line: (created, errno, seconds of the last call, seconds in all).
fn qp_many(out: &str) -> (u64, i32, f64, f64) {
    let w: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(
        (w.first(), w.get(2), w.get(4), w.get(6)),
        (Some(&"created"), Some(&"errno"), Some(&"last"), Some(&"total")),
        "{out}"
    );
    (
        w[1].parse().unwrap(),
        w[3].parse().unwrap(),
        w[5].parse().unwrap(),
        w[7].parse().unwrap(),
    )
}

/// The two QP-number tests run one at a time: each prints a time, and 20,000 creates take
/// both cores. Their limits are backstops against a hang, never a verdict on speed: a busy
/// machine (CI beside other builds) once took over 120 s for what takes 10 s idle.
static QP_NUMBERS: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn one_process_creates_20000_qps_past_what_one_slot_once_held() {
    let _one = QP_NUMBERS.lock().unwrap_or_else(|p| p.into_inner());
    let out = run("qp_many", "cx5-ib", &[], &["20000"], Duration::from_secs(900));
    let (n, errno, _, total) = qp_many(&out);
    assert_eq!((n, errno), (20_000, 0), "{out}");
    eprintln!("20,000 QPs in {total:.3} s");
}

#[test]
fn when_its_nodes_qp_numbers_run_out_create_qp_fails_enomem_instead_of_searching_for_ever() {
    let _one = QP_NUMBERS.lock().unwrap_or_else(|p| p.into_inner());
    // Every block (fabric::QPN_BLOCKS) of node 0's QP numbers but two is held by a live device (slot 1, which the
    // program's own device claims, of process 1): 2 x 1024 numbers are left.
    let fabric = tmp().join(format!("verbs-fabric-qp_many-cx6dx-roce-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&fabric);
    let node = fabric.join("node0");
    std::fs::create_dir_all(&node).unwrap();
    for b in 0..1u32 << 14 {
        if b != 16 && b != 9000 {
            std::os::unix::fs::symlink("1.1", node.join(format!("qpn{b}"))).unwrap();
        }
    }
    let out = run("qp_many", "cx6dx-roce", &[], &["100000"], Duration::from_secs(600));
    let _ = std::fs::remove_dir_all(&fabric);
    let (n, errno, last, _) = qp_many(&out);
    assert_eq!((n, errno), (2048, libc::ENOMEM), "{out}");
    // How long the failing create took is a figure (idle: well under a millisecond), not a
    // verdict: on a loaded machine one call can wait out a scheduler slice.
    eprintln!("the failing create took {last:.6} s");
}

#[test]
fn an_srq_of_max_wr_0_is_created_with_one_entry_as_mlx5_ib_makes_it() {
    run("srq_zero", "cx5-ib", &[], &[], Duration::from_secs(20));
}

#[test]
fn a_source_gid_index_without_an_entry_is_refused_einval_past_the_table_enodata_when_empty() {
    for p in PROFILES {
        run("sgid_index", p, &[], &[], Duration::from_secs(20));
    }
}

#[test]
fn an_rc_qp_addressed_to_the_wrong_lid_exhausts_its_retries_instead_of_talking_to_itself() {
    let out = run(
        "rc_pair",
        "cx5-ib",
        &["--nodes", "2", "--timeout", "30"],
        &["right"],
        Duration::from_secs(40),
    );
    assert!(
        out.contains("node 0: send status 0") && out.contains("node 1: send status 0"),
        "{out}"
    );
    run(
        "rc_pair",
        "cx5-ib",
        &["--nodes", "2", "--timeout", "30"],
        &["wrong"],
        Duration::from_secs(40),
    );
}

#[test]
fn on_roce_rtr_toward_a_gid_no_node_has_times_out_resolving_its_mac() {
    run("roce_unreachable", "cx6dx-roce", &[], &[], Duration::from_secs(30));
}

#[test]
fn a_copy_of_the_command_fd_by_dup_dup3_or_fcntl64_is_the_device_as_fstat_shows_it() {
    run("dup_import", "cx5-ib", &[], &[], Duration::from_secs(20));
}

#[test]
fn devx_general_caps_say_the_port_type_and_one_port_the_vport_context_is_answered_and_flow_tables_are_absent() {
    for p in PROFILES {
        run("devx_general", p, &[], &[], Duration::from_secs(20));
    }
}

#[test]
fn the_clock_info_page_is_offered_and_mlx5dv_get_clock_info_converts_to_wall_clock_time() {
    run("clock_info", "cx5-ib", &[], &[], Duration::from_secs(20));
}

/// Parses idle_scale's line: (round trips/s before, after, after / before, seconds to create).
fn idle_scale(out: &str) -> (f64, f64, f64, f64) {
    let w: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(
        (w.first(), w.get(2), w.get(4), w.get(6)),
        (Some(&"before"), Some(&"after"), Some(&"ratio"), Some(&"created")),
        "{out}"
    );
    (
        w[1].parse().unwrap(),
        w[3].parse().unwrap(),
        w[5].parse().unwrap(),
        w[9].parse().unwrap(),
    )
}

/// The device thread's work per message does not grow with objects nothing rings (issue 44):
/// a ConnectX reads a doorbell record when it is rung, and a DCT acts only when a request names
/// it. Two RC QPs of one process write to each other through the real libmlx5 and the device
/// thread; their round trips per second with 20,000 idle RESET QPs, DCTs or CQs (made by the
/// real commands) beside them stay above a twentieth of the rate without (the same process,
/// best of five windows each). Wall-clock rates move with the machine's load: idle the ratio is
/// 0.5-1.3, and a run beside a UCX gtest and other sessions' builds (load 8-10 on 2 cores) gave
/// 0.17; a device thread that visited every object on each pass gave 0.001 (QPs), 0.003 (DCTs)
/// and 0.006 (CQs). The margin is for the load; tests/scale.rs makes the load-free verdict (CPU
/// time per message at exact passes per message).
#[test]
fn twenty_thousand_idle_qps_dcts_or_cqs_do_not_slow_a_round_trip_down() {
    let _one = QP_NUMBERS.lock().unwrap_or_else(|p| p.into_inner());
    for kind in ["qp", "dct", "cq"] {
        let out = run("idle_scale", "cx5-ib", &[], &[kind, "20000"], Duration::from_secs(900));
        let (before, after, ratio, made) = idle_scale(&out);
        eprintln!(
            "20,000 idle {kind}s: {before:.0} round trips/s before, {after:.0} after (ratio {ratio:.3}); made in {made:.3} s"
        );
        assert!(ratio > 0.05, "20,000 idle {kind}s slowed the device down: {out}");
    }
}

/// Runs tests/c/dct_farm.c: a process on each of `nodes` (of one fabric) making `per` DCTs, a
/// server on node 0 writing into every one from `dcis` DCIs. Returns every process's output.
fn dct_farm(profile: &str, nodes: &[u32], per: u32, dcis: u32, limit: Duration) -> String {
    let procs = nodes.len();
    let bin = build("dct_farm");
    let root = tmp().join(format!("verbs-dct-farm-{profile}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (fabric, dir) = (root.join("fabric"), root.join("rendezvous"));
    std::fs::create_dir_all(&dir).unwrap();
    let start = |node: u32, args: &[String]| {
        Command::new(env!("CARGO_BIN_EXE_soft-mlx5"))
            .args(["--profile", profile, "--node", &node.to_string(), "--fabric"])
            .arg(&fabric)
            .arg("--")
            .arg(&bin)
            .args(args)
            .env("SOFT_MLX5_CACHE", tmp().join("soft-mlx5-verbs-cache"))
            .env_remove("SOFT_MLX5_FABRIC")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let d = dir.display().to_string();
    let mut children: Vec<_> = nodes
        .iter()
        .enumerate()
        .map(|(i, &n)| start(n, &["farm".into(), d.clone(), i.to_string(), per.to_string()]))
        .collect();
    children.push(start(0, &["server".into(), d, procs.to_string(), dcis.to_string()]));
    let t0 = Instant::now();
    let mut status = vec![None; children.len()];
    while status.iter().any(Option::is_none) && t0.elapsed() < limit {
        for (c, s) in children.iter_mut().zip(status.iter_mut()) {
            if s.is_none() {
                *s = c.try_wait().unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut out = String::new();
    let mut ok = true;
    for (mut c, s) in children.into_iter().zip(status) {
        if s.is_none() {
            let _ = c.kill();
        }
        let o = c.wait_with_output().unwrap();
        ok &= s.is_some_and(|s| s.success());
        out += &String::from_utf8_lossy(&o.stdout);
        if !s.is_some_and(|s| s.success()) {
            out += &String::from_utf8_lossy(&o.stderr);
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        ok,
        "dct_farm ({procs} x {per} DCTs, {profile}) failed or ran past {limit:?}:\n{out}"
    );
    out
}

/// Several processes of one node each hold thousands of DCTs (their numbers from the node's
/// shared 24-bit space), and a server on another node writes into every one of them (issue 44).
#[test]
fn processes_of_one_node_hold_10000_dcts_and_a_server_reaches_each() {
    let _one = QP_NUMBERS.lock().unwrap_or_else(|p| p.into_inner());
    for p in PROFILES {
        let out = dct_farm(p, &[1; 4], 2_500, 8, Duration::from_secs(600));
        eprintln!("{p}:\n{out}");
        assert_eq!(out.matches("written as the server named them: yes").count(), 4, "{out}");
    }
}

/// As above with 100,000 DCTs (4 processes x 25,000); prints the times and each process's
/// VmHWM. Run by hand: `cargo test -p soft-mlx5 --test verbs -- --ignored --nocapture hold_100000`.
#[test]
#[ignore]
fn processes_of_one_node_hold_100000_dcts_and_a_server_reaches_each() {
    let _one = QP_NUMBERS.lock().unwrap_or_else(|p| p.into_inner());
    let t = Instant::now();
    let out = dct_farm("cx5-ib", &[1; 4], 25_000, 16, Duration::from_secs(1800));
    eprintln!("{out}in all {:.1} s", t.elapsed().as_secs_f64());
    assert_eq!(out.matches("written as the server named them: yes").count(), 4, "{out}");
}

/// Nodes past the 64 a fabric once had (fabric::MAX_NODES 4,096): DCTs on nodes 100, 1,000
/// and 4,095 (LID 4,096; RoCE GID ::ffff:10.78.16.0) reached by a server on node 0, on both
/// link layers. Still a process per node: one process cannot be several hosts (issue 44).
#[test]
fn a_server_reaches_dcts_on_nodes_100_1000_and_4095() {
    let _one = QP_NUMBERS.lock().unwrap_or_else(|p| p.into_inner());
    for p in PROFILES {
        let out = dct_farm(p, &[100, 1000, 4095], 600, 8, Duration::from_secs(300));
        eprintln!("{p}:\n{out}");
        assert_eq!(out.matches("written as the server named them: yes").count(), 3, "{out}");
    }
}
