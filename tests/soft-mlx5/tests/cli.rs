//! The `soft-mlx5` tool as a user runs it: the interposer it carries is preloaded and finds the
//! emulated device, flags set the emulator's variables, `--nodes N` runs N processes on their
//! own nodes with a rendezvous directory and reports each exit status, `--timeout` stops them.
//! Not built for another machine (`soft_mlx5_cross`, build.rs): there the tool cannot be started.
#![cfg(not(soft_mlx5_cross))]
use std::path::PathBuf;
use std::process::{Command, Output};

/// A cache directory of these tests' own (the interposer is written there, once per build).
fn cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("soft-mlx5-cli-cache")
}

fn tool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_soft-mlx5"))
        .args(args)
        .env("SOFT_MLX5_CACHE", cache())
        .env_remove("SOFT_MLX5_FABRIC")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_carried_interposer_presents_the_emulated_device_to_the_command() {
    // Whatever opens /sys/class/infiniband through the interposer sees mlx5_0, emulated.
    let o = tool(&[
        "--",
        "sh",
        "-c",
        "cat \"$SYSFS_PATH/class/infiniband/mlx5_0/board_id\"; echo \"$LD_PRELOAD\"",
    ]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(out.starts_with("SOFT_MLX5_EMULATED\n"), "{out}");
    let preload = PathBuf::from(out.lines().nth(1).unwrap().split(':').next().unwrap());
    assert!(preload.starts_with(cache()), "{preload:?}");
    // A shared object, not an empty placeholder.
    let bytes = std::fs::read(&preload).unwrap();
    assert!(
        bytes.len() > 100_000 && bytes.starts_with(b"\x7fELF"),
        "{} bytes",
        bytes.len()
    );
}

#[test]
fn switches_set_the_emulators_variables_for_the_command() {
    let o = tool(&[
        "--profile",
        "cx6dx-roce",
        "--node",
        "5",
        "--no-mr-cache",
        "--qpn-reuse",
        "--log-max-msg",
        "16",
        "--lossy",
        "loss=0.01,seed=3",
        "--",
        "sh",
        "-c",
        "echo $SOFT_MLX5_PROFILE $SOFT_MLX5_NODE $SOFT_MLX5_MR_CACHE $SOFT_MLX5_QPN_REUSE $SOFT_MLX5_LOG_MAX_MSG $SOFT_MLX5_FAULTS $MLX5DV_TEST_GID_INDEX",
    ]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout(&o), "cx6dx-roce 5 0 1 16 loss=0.01,seed=3 1\n");
}

#[test]
fn a_bad_value_is_refused_before_anything_runs() {
    let o = tool(&["--log-max-msg", "9", "--", "sh", "-c", "echo ran"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
    assert!(String::from_utf8_lossy(&o.stderr).contains("12..31"), "{o:?}");
}

#[test]
fn nodes_each_get_their_node_and_the_run_fails_when_one_fails() {
    let o = tool(&[
        "--nodes",
        "3",
        "--",
        "sh",
        "-c",
        "touch \"$SOFT_MLX5_RENDEZVOUS/$SOFT_MLX5_NODE_INDEX\"; \
         while [ $(ls \"$SOFT_MLX5_RENDEZVOUS\" | wc -l) -lt $SOFT_MLX5_NODES ]; do sleep 0.01; done; \
         echo node=$SOFT_MLX5_NODE of $SOFT_MLX5_NODES; exit $((SOFT_MLX5_NODE_INDEX == 2 ? 7 : 0))",
    ]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    for i in 0..3 {
        assert!(out.contains(&format!("node {i}: node={i} of 3\n")), "{out}");
    }
    assert!(out.contains("soft-mlx5: node 0 exit 0\n"), "{out}");
    assert!(out.contains("soft-mlx5: node 1 exit 0\n"), "{out}");
    assert!(out.contains("soft-mlx5: node 2 exit 7\n"), "{out}");
}

#[test]
fn a_node_still_running_at_the_timeout_is_stopped_and_reported_as_timed_out() {
    let o = tool(&[
        "--nodes",
        "2",
        "--timeout",
        "1",
        "--",
        "sh",
        "-c",
        "[ $SOFT_MLX5_NODE_INDEX = 0 ] || exec sleep 60",
    ]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains("soft-mlx5: node 0 exit 0\n"), "{out}");
    assert!(
        out.contains("soft-mlx5: node 1 exit 124 (timed out after 1s)\n"),
        "{out}"
    );
}

#[test]
fn a_lossy_run_says_each_node_is_emulated_and_tells_at_exit_what_its_wire_did() {
    // perftest's ib_write_bw between two nodes at 5% loss: each node's log is labelled
    // emulated, and each process tells at exit how many messages its wire lost (perftest is
    // installed by scripts/setup; without it the test says so and checks the labels only).
    let have_perftest = Command::new("sh")
        .args(["-c", "command -v ib_write_bw"])
        .output()
        .is_ok_and(|o| o.status.success());
    let port = 20_000 + std::process::id() % 20_000;
    let script = if have_perftest {
        format!(
            "if [ $SOFT_MLX5_NODE_INDEX = 0 ]; then ib_write_bw -d mlx5_0 -n 300 -p {port}; \
             else sleep 1; ib_write_bw -d mlx5_0 -n 300 -p {port} 127.0.0.1; fi >/dev/null"
        )
    } else {
        eprintln!("ib_write_bw not installed: the tally is not checked");
        "true".to_owned()
    };
    let o = Command::new(env!("CARGO_BIN_EXE_soft-mlx5"))
        .args(["--nodes", "2", "--timeout", "120", "--", "sh", "-c", &script])
        .env("SOFT_MLX5_CACHE", cache())
        .env("SOFT_MLX5_FAULTS", "loss=0.05,seed=5")
        .env_remove("SOFT_MLX5_FABRIC")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    for i in 0..2 {
        assert!(
            out.contains(&format!(
                "node {i}: soft-mlx5 (emulated): profile cx5-ib, rdma-core system, node {i}\n"
            )),
            "{out}"
        );
        if have_perftest {
            let tally = out
                .lines()
                .find(|l| l.starts_with(&format!("node {i}: soft-mlx5 (emulated): node {i} (pid ")))
                .unwrap_or_else(|| panic!("no tally from node {i}: {out}"));
            let lost: u64 = tally
                .split(" lost ")
                .nth(1)
                .and_then(|t| t.split(',').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{tally}"));
            assert!(lost > 0, "300 writes at 5% loss lost nothing: {tally}");
        }
    }
}

/// Another build's sysfs tree on a shared fabric is removed once it is old only if no run
/// holds it: a run of that build (here: the test, holding the tree's lock as that build's tool
/// does for its command's life) keeps it, however long the run lasts; once nothing holds it,
/// the next run removes it. A tree deleted under a run fails every device open it makes later.
#[test]
fn another_builds_sysfs_tree_is_kept_while_a_run_holds_it_and_removed_once_stale_and_free() {
    let fabric = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-stale-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&fabric);
    let name = "sysfs-cx5-ib-0-0000000000000000-1";
    let tree = fabric.join(name);
    std::fs::create_dir_all(tree.join("class")).unwrap();
    std::fs::write(tree.join(".complete"), b"").unwrap();
    let lock = std::fs::File::create(fabric.join(format!(".lock-{name}"))).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    assert_eq!(
        unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_SH) },
        0
    );
    // An hour unused, as a long test binary's tree is after its first device open.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::open(&tree).unwrap().set_modified(hour_ago).unwrap();
    // `command` run by the tool on this fabric; it must succeed.
    let on_fabric = |command: &[&str]| {
        let mut args = vec!["--profile", "cx5-ib", "--fabric", fabric.to_str().unwrap(), "--"];
        args.extend_from_slice(command);
        let o = tool(&args);
        assert!(o.status.success(), "{o:?}");
        o
    };
    let run = || {
        on_fabric(&["true"]);
    };
    run();
    assert!(tree.join(".complete").exists(), "a tree in use was removed");
    // A run's own tree is held by its command (the tool execs it), for the command's life.
    let o = on_fabric(&[
        "sh",
        "-c",
        "lock=\"$(dirname \"$SYSFS_PATH\")/.lock-$(basename \"$SYSFS_PATH\")\"; \
         if flock -n -x \"$lock\" true; then echo free; else echo held; fi",
    ]);
    assert_eq!(stdout(&o).trim(), "held", "{o:?}");
    drop(lock);
    run();
    assert!(!tree.exists(), "a stale tree nothing holds was kept");
    let _ = std::fs::remove_dir_all(&fabric);
}
