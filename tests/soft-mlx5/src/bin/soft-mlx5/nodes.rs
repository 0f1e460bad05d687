//! `--nodes N`: N processes, process i on emulated node i of a private fabric, each in a process
//! group of its own; their output prefixed "node I: "; each one's exit status reported.

use crate::args::Options;
use crate::node::Shared;
use std::fs::{self, File};
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// The signal that interrupted the run (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::Relaxed);
}

/// A private directory for one run (fabric/ and rendezvous/), removed when dropped.
struct RunDir(PathBuf);

impl RunDir {
    fn new() -> Result<RunDir, String> {
        let base = std::env::temp_dir();
        for attempt in 0..100u32 {
            let dir = base.join(format!("soft-mlx5-nodes.{}.{attempt}", std::process::id()));
            if fs::create_dir(&dir).is_ok() {
                let run = RunDir(dir);
                for sub in ["fabric", "rendezvous"] {
                    fs::create_dir(run.0.join(sub))
                        .map_err(|e| format!("cannot create {}: {e}", run.0.join(sub).display()))?;
                }
                return Ok(run);
            }
        }
        Err(format!("cannot create a run directory under {}", base.display()))
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Runs `opts.command` on nodes 0..n-1 and returns the exit code: 0 when every process exited 0,
/// 1 when one did not, 128 + the signal when the run was interrupted.
///
/// # Errors
///
/// When the run cannot be set up or a process cannot be started (those started are killed).
pub fn run(opts: &Options, n: u32) -> Result<i32, String> {
    let run = RunDir::new()?;
    let fabric = opts.fabric.clone().unwrap_or_else(|| run.0.join("fabric"));
    let shared = Shared::new(opts, fabric)?;
    let mut envs = Vec::new();
    for i in 0..n {
        envs.push(shared.node_env(opts.profile, i)?);
    }
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(sig, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    }
    // Every node's log says it is emulated (a single run says it too, in main.rs).
    for i in 0..n {
        println!("node {i}: {}", crate::node::banner(opts, i));
    }
    let mut children: Vec<Child> = Vec::new();
    let mut readers = Vec::new();
    for (i, env) in envs.into_iter().enumerate() {
        let (read, write) = match pipe() {
            Ok(p) => p,
            Err(e) => {
                stop(&children, libc::SIGKILL);
                return Err(e);
            }
        };
        let write2 = write.try_clone().map_err(|e| format!("cannot duplicate a pipe: {e}"))?;
        let mut cmd = Command::new(&opts.command[0]);
        cmd.args(&opts.command[1..])
            .envs(env)
            .envs(opts.env.iter().map(|(k, v)| (*k, v)))
            .env("SOFT_MLX5_NODE_INDEX", i.to_string())
            .env("SOFT_MLX5_NODES", n.to_string())
            .env("SOFT_MLX5_RENDEZVOUS", run.0.join("rendezvous"))
            .stdin(Stdio::null())
            .stdout(Stdio::from(write))
            .stderr(Stdio::from(write2))
            .process_group(0);
        match cmd.spawn() {
            Ok(child) => children.push(child),
            Err(e) => {
                stop(&children, libc::SIGKILL);
                return Err(format!("cannot start {:?}: {e}", opts.command[0]));
            }
        }
        // `cmd` still holds the write ends: dropping it leaves the child the only writer.
        drop(cmd);
        readers.push(thread::spawn(move || prefix_lines(i, read)));
    }
    let deadline = Instant::now() + opts.timeout;
    let mut status: Vec<Option<ExitStatus>> = vec![None; children.len()];
    // The processes still running when the timeout stopped them.
    let mut timed_out = vec![false; children.len()];
    let mut killed_at: Option<Instant> = None;
    while status.iter().any(Option::is_none) {
        for (child, st) in children.iter_mut().zip(status.iter_mut()) {
            if st.is_none() {
                *st = child.try_wait().map_err(|e| format!("cannot wait for a node: {e}"))?;
            }
        }
        let sig = SIGNAL.load(Ordering::Relaxed);
        if killed_at.is_none() && (sig != 0 || Instant::now() >= deadline) {
            if sig == 0 {
                for (t, st) in timed_out.iter_mut().zip(&status) {
                    *t = st.is_none();
                }
            }
            stop(&children, if sig != 0 { sig } else { libc::SIGTERM });
            killed_at = Some(Instant::now());
        }
        if killed_at.is_some_and(|t| t.elapsed() > Duration::from_secs(5)) {
            stop(&children, libc::SIGKILL);
        }
        thread::sleep(Duration::from_millis(20));
    }
    // What the processes left running in their groups goes too, so the output pipes close.
    stop(&children, libc::SIGKILL);
    for r in readers {
        let _ = r.join();
    }
    let sig = SIGNAL.load(Ordering::Relaxed);
    let mut failed = false;
    for (i, st) in status.iter().enumerate() {
        let st = st.expect("every status collected");
        // As timeout(1) reports it: 124 for a process it had to stop.
        let code = match (timed_out[i], st.code(), st.signal()) {
            (true, _, _) => 124,
            (false, Some(c), _) => c,
            (false, None, Some(s)) => 128 + s,
            (false, None, None) => 1,
        };
        let note = if timed_out[i] {
            format!(" (timed out after {}s)", opts.timeout.as_secs())
        } else {
            String::new()
        };
        println!("soft-mlx5: node {i} exit {code}{note}");
        failed |= code != 0;
    }
    Ok(if sig != 0 { 128 + sig } else { i32::from(failed) })
}

/// Sends `sig` to every child's process group.
fn stop(children: &[Child], sig: libc::c_int) {
    for c in children {
        let pgid = c.id() as libc::pid_t;
        // SAFETY: kill has no memory preconditions; a group that is gone answers ESRCH.
        unsafe { libc::kill(-pgid, sig) };
    }
}

/// A pipe, both ends close-on-exec (the child gets dup2'd copies).
fn pipe() -> Result<(File, OwnedFd), String> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("cannot create a pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: pipe2 just returned these descriptors; nothing else owns them.
    let (read, write) = unsafe { (File::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((read, write))
}

/// Copies a node's output to stdout, each line prefixed "node I: ".
fn prefix_lines(node: usize, read: File) {
    let mut r = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(format!("node {node}: ").as_bytes());
                let _ = out.write_all(&line);
                let _ = out.flush();
            }
        }
    }
}
