//! One emulated node's environment: the interposer written out of the binary, the node's sysfs
//! tree, and the variables the command gets.

use crate::args::{Options, RdmaCore};
use soft_mlx5::profile::{LinkLayer, Profile};
use std::ffi::OsString;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The interposer's bytes, built by build.rs (a cdylib of preload/src and this package's library).
static PRELOAD: &[u8] = include_bytes!(env!("SOFT_MLX5_PRELOAD_SO"));
/// Their FNV-1a hash: names the copy on disk.
const PRELOAD_HASH: &str = env!("SOFT_MLX5_PRELOAD_HASH");

/// What every node of a run shares: the interposer on disk, the fabric, the rdma-core build.
pub struct Shared {
    /// The interposer, written out.
    pub preload: PathBuf,
    /// The fabric directory.
    pub fabric: PathBuf,
    /// The rdma-core build directory (None: the system's libraries).
    pub rdma_core: Option<PathBuf>,
    /// Names this build of the tool in the sysfs trees' directory names.
    stamp: String,
    /// Shared locks on the sysfs trees this run uses ([`hold`]), kept while the tool (and so
    /// its command) runs: another build's run removes a tree only under an exclusive one.
    holds: std::sync::Mutex<Vec<fs::File>>,
}

impl Shared {
    /// Writes out the interposer, creates the fabric directory and finds (or builds) rdma-core.
    ///
    /// # Errors
    ///
    /// A sentence naming the path or step that failed.
    pub fn new(opts: &Options, fabric: PathBuf) -> Result<Shared, String> {
        let preload = write_preload()?;
        fs::create_dir_all(&fabric)
            .map_err(|e| format!("cannot create the fabric directory {}: {e}", fabric.display()))?;
        let rdma_core = match &opts.rdma_core {
            RdmaCore::System => None,
            RdmaCore::Version(v) => Some(crate::rdma_core::build_dir(v)?),
        };
        // The tree depends on the code that writes it (this binary) as well as the interposer.
        let built = std::env::current_exe()
            .and_then(|p| p.metadata())
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        Ok(Shared {
            preload,
            fabric,
            rdma_core,
            stamp: format!("{PRELOAD_HASH}-{built}"),
            holds: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// The variables node `node` of `profile` runs with (besides the switches).
    ///
    /// # Errors
    ///
    /// When its sysfs tree cannot be written.
    pub fn node_env(&self, profile: &'static Profile, node: u32) -> Result<Vec<(String, OsString)>, String> {
        let sysfs = self.sysfs_tree(profile, node)?;
        let mut env: Vec<(String, OsString)> = vec![
            ("SYSFS_PATH".into(), sysfs.into()),
            ("SOFT_MLX5_PROFILE".into(), profile.name.into()),
            ("SOFT_MLX5_NODE".into(), node.to_string().into()),
            ("SOFT_MLX5_FABRIC".into(), self.fabric.clone().into()),
            ("MLX5DV_TEST_DEVICE".into(), "mlx5_0".into()),
        ];
        if profile.link_layer == LinkLayer::Ethernet {
            env.push(("MLX5DV_TEST_GID_INDEX".into(), "1".into()));
        }
        if let Some(build) = &self.rdma_core {
            env.push((
                "LD_LIBRARY_PATH".into(),
                prepend(build.join("lib").into(), "LD_LIBRARY_PATH"),
            ));
            env.push(("SOFT_MLX5_RDMA_CORE".into(), build.clone().into()));
        }
        env.push(("LD_PRELOAD".into(), prepend(self.preload.clone().into(), "LD_PRELOAD")));
        Ok(env)
    }

    /// The sysfs tree of a profile and node, written once per build of the tool (to a private
    /// directory, then renamed into place, so concurrent runs never read half a tree).
    fn sysfs_tree(&self, profile: &'static Profile, node: u32) -> Result<PathBuf, String> {
        let prefix = format!("sysfs-{}-{node}-", profile.name);
        let name = format!("{prefix}{}", self.stamp);
        let tree = self.fabric.join(&name);
        // Held before the tree is looked at: a run of another build removing it holds the
        // lock exclusively meanwhile, and this run then finds it gone and writes it again.
        let lock = hold(&self.fabric, &name)?;
        self.holds.lock().unwrap_or_else(|p| p.into_inner()).push(lock);
        // Trees of other builds for this profile and node, unused for a while and held by no
        // run, go (every run looks: a build's last run may long be over).
        remove_stale_trees(&self.fabric, &prefix, &name, Duration::from_secs(600));
        if tree.join(".complete").exists() {
            return Ok(tree);
        }
        let tmp = self.fabric.join(format!(".sysfs.{}.{node}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        let written =
            soft_mlx5::sysfs::write_tree(&tmp, profile, node).and_then(|()| fs::write(tmp.join(".complete"), b""));
        if let Err(e) = written {
            let _ = fs::remove_dir_all(&tmp);
            return Err(format!("cannot write the sysfs tree under {}: {e}", tmp.display()));
        }
        if fs::rename(&tmp, &tree).is_err() {
            // Another run put the same tree in place first.
            let _ = fs::remove_dir_all(&tmp);
        }
        Ok(tree)
    }
}

/// The lock file of the sysfs tree `name` in `fabric`.
fn lock_path(fabric: &Path, name: &str) -> PathBuf {
    fabric.join(format!(".lock-{name}"))
}

/// A shared lock on tree `name`'s lock file (flock(2), released when the file is closed, at
/// the latest when this process ends). A remover unlinks the file under its exclusive lock, so
/// a lock taken on a file no longer at the path is taken again on the new one.
fn hold(fabric: &Path, name: &str) -> Result<fs::File, String> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    let path = lock_path(fabric, name);
    let fail = |e: io::Error| format!("cannot lock the sysfs tree {name} ({}): {e}", path.display());
    loop {
        let f = fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(fail)?;
        // SAFETY: flock on a descriptor this function owns; it blocks only while a remover
        // holds the lock exclusively.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH) } != 0 {
            return Err(fail(io::Error::last_os_error()));
        }
        let same = match (f.metadata(), fs::metadata(&path)) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        };
        if same {
            // Kept across exec (the tool becomes its command on one node): the command holds
            // the tree for its life, and its children with it.
            // SAFETY: F_SETFD on a descriptor this function owns.
            unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFD, 0) };
            return Ok(f);
        }
    }
}

/// Removes the sysfs trees of `fabric` whose name starts with `prefix`, other than `keep`, not
/// modified for `age` and held by no run ([`hold`]): each under an exclusive lock, its lock
/// file unlinked last.
fn remove_stale_trees(fabric: &Path, prefix: &str, keep: &str, age: Duration) {
    use std::os::fd::AsRawFd;
    let Ok(entries) = fs::read_dir(fabric) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name == keep || !name.starts_with(prefix) || !older(&e, age) {
            continue;
        }
        let lock = lock_path(fabric, &name);
        let Ok(f) = fs::File::options().create(true).truncate(false).write(true).open(&lock) else {
            continue;
        };
        // SAFETY: flock on a descriptor this function owns; LOCK_NB: never waits on a run.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            continue;
        }
        let _ = fs::remove_dir_all(e.path());
        let _ = fs::remove_file(&lock);
    }
}

/// Whether `e` was not modified for `age`.
fn older(e: &fs::DirEntry, age: Duration) -> bool {
    e.metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|d| d > age)
}

/// `value` in front of the variable `var`'s current value, colon-separated.
fn prepend(value: OsString, var: &str) -> OsString {
    match std::env::var_os(var) {
        Some(old) if !old.is_empty() => {
            let mut v = value;
            v.push(":");
            v.push(old);
            v
        }
        _ => value,
    }
}

/// Where the interposer is written: `$SOFT_MLX5_CACHE`, else `$XDG_CACHE_HOME/soft-mlx5`, else
/// `~/.cache/soft-mlx5` (a directory on an executable filesystem, which `/tmp` may not be).
fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("SOFT_MLX5_CACHE") {
        return d.into();
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Path::new(&d).join("soft-mlx5");
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => Path::new(&home).join(".cache/soft-mlx5"),
        // SAFETY: getuid has no preconditions and cannot fail.
        None => std::env::temp_dir().join(format!("soft-mlx5-cache-{}", unsafe { libc::getuid() })),
    }
}

/// Writes the embedded interposer to the cache once (named by its hash, so every build of the
/// tool has its own) and returns its path.
fn write_preload() -> Result<PathBuf, String> {
    if PRELOAD.is_empty() {
        return Err("this soft-mlx5 was built without its interposer (DOCS_RS set at build time); reinstall it".into());
    }
    let dir = cache_dir();
    let name = format!("libsoft_mlx5_preload-{PRELOAD_HASH}.so");
    let path = dir.join(&name);
    if let Ok(f) = fs::File::options().append(true).open(&path) {
        if f.metadata().is_ok_and(|m| m.len() == PRELOAD.len() as u64) {
            // In use: keep it past the clean-up below.
            let _ = f.set_modified(SystemTime::now());
            return Ok(path);
        }
    }
    let fail = |what: &str, e: io::Error| {
        format!(
            "cannot {what} the interposer in {} ({e}); set SOFT_MLX5_CACHE to a writable directory",
            dir.display()
        )
    };
    fs::create_dir_all(&dir).map_err(|e| fail("create a directory for", e))?;
    let tmp = dir.join(format!(".{name}.{}", std::process::id()));
    let mut f = fs::File::create(&tmp).map_err(|e| fail("write", e))?;
    f.write_all(PRELOAD)
        .and_then(|()| f.sync_all())
        .map_err(|e| fail("write", e))?;
    fs::rename(&tmp, &path).map_err(|e| fail("place", e))?;
    // Other builds' copies unused for a day go (a running process keeps its mapping).
    remove_stale(&dir, "libsoft_mlx5_preload-", &path, Duration::from_secs(86_400));
    Ok(path)
}

/// Removes the entries of `dir` whose name starts with `prefix`, other than `keep`, not modified
/// for `age`.
fn remove_stale(dir: &Path, prefix: &str, keep: &Path, age: Duration) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let path = e.path();
        if older(&e, age) && path != keep && e.file_name().to_string_lossy().starts_with(prefix) {
            let _ = if path.is_dir() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
        }
    }
}

/// The line that says a node is emulated: its profile, its rdma-core and its number.
pub fn banner(opts: &crate::args::Options, node: u32) -> String {
    let rdma_core = match &opts.rdma_core {
        crate::args::RdmaCore::System => "system".to_string(),
        crate::args::RdmaCore::Version(v) => v.clone(),
    };
    format!(
        "soft-mlx5 (emulated): profile {}, rdma-core {rdma_core}, node {node}",
        opts.profile.name
    )
}
