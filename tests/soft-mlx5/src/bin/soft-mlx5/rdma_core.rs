//! A second rdma-core (libibverbs, libmlx5, pyverbs and its tests) built from source into a
//! cache: the recipe is `fetch-rdma-core.sh`, carried inside the binary and run with bash.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The recipe (see its header for what it builds and where).
const RECIPE: &str = include_str!("../../../fetch-rdma-core.sh");

/// The build directory of rdma-core `version` (e.g. "59.0"), built first if the cache lacks it
/// (progress and the time it took on stderr).
///
/// # Errors
///
/// When bash cannot be run or the recipe fails (it prints why and where its log is).
pub fn build_dir(version: &str) -> Result<PathBuf, String> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(RECIPE)
        .arg("soft-mlx5 fetch-rdma-core")
        .arg(version)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run bash for fetch-rdma-core: {e}"))?;
    if !out.status.success() {
        return Err(format!("fetch-rdma-core {version} failed ({})", out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let dir = text.lines().last().unwrap_or_default().trim();
    if dir.is_empty() || !PathBuf::from(dir).join("lib").is_dir() {
        return Err(format!(
            "fetch-rdma-core {version} named no build directory (it printed {text:?})"
        ));
    }
    Ok(PathBuf::from(dir))
}
