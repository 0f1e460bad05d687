//! Finds rdma-core, compiles the C shim against its headers and links libibverbs and libmlx5.
//!
//! Search order for the headers (a folder holding `infiniband/verbs.h`):
//! 1. `MLX5DV_RDMA_INCLUDE_DIR_<TARGET>` (target triple with `-` as `_`), then `MLX5DV_RDMA_INCLUDE_DIR`;
//! 2. `pkg-config --variable=includedir libibverbs` (native builds only);
//! 3. the sysroot's standard folders: `/usr/include`, `/usr/local/include`, `/opt/rdma-core/include`
//!    (upstream rdma-core and MLNX_OFED both install into `/usr`).
//!
//! Libraries (a folder holding `libibverbs.so`): `MLX5DV_RDMA_LIB_DIR_<TARGET>`, `MLX5DV_RDMA_LIB_DIR`,
//! then `/usr/lib/<multiarch>`, `/usr/lib64`, `/usr/lib`, `/usr/local/lib64`, `/usr/local/lib`.
//! `MLX5DV_SYSROOT` prefixes the standard folders (for cross sysroots).
//!
//! With the `cm` feature it also checks for `rdma/rdma_cma.h` in that folder and links
//! `rdmacm`; without it nothing of librdmacm is linked.
//!
//! With `DOCS_RS` set nothing is compiled or linked. Dependents get `DEP_MLX5DV_SHIM_INCLUDE`
//! (rdma-core's include folder) and `DEP_MLX5DV_SHIM_SHIM_INCLUDE` (the shim's header folder).
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const FEATURES: &[(&str, &str, &str, &str)] = &[
    // (cfg name, C define, header, text that proves the header has it)
    (
        "m5dv_wr_atomic_write",
        "M5DV_HAVE_WR_ATOMIC_WRITE",
        "verbs.h",
        "(*wr_atomic_write)",
    ),
    ("m5dv_wr_flush", "M5DV_HAVE_WR_FLUSH", "verbs.h", "(*wr_flush)"),
    (
        "m5dv_dc_addr_stream",
        "M5DV_HAVE_DC_ADDR_STREAM",
        "mlx5dv.h",
        "(*wr_set_dc_addr_stream)",
    ),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=shim/m5dv_shim.c");
    println!("cargo:rerun-if-changed=shim/m5dv_shim.h");
    for (cfg, ..) in FEATURES {
        println!("cargo:rustc-check-cfg=cfg({cfg})");
    }
    let target = env::var("TARGET").expect("cargo sets TARGET");
    let host = env::var("HOST").expect("cargo sets HOST");
    let target_var = target.replace('-', "_");
    for var in [
        "MLX5DV_RDMA_INCLUDE_DIR",
        "MLX5DV_RDMA_LIB_DIR",
        "MLX5DV_SYSROOT",
        "DOCS_RS",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
        println!("cargo:rerun-if-env-changed={var}_{target_var}");
    }
    if env::var_os("DOCS_RS").is_some() {
        return;
    }

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let shim_dir = manifest.join("shim");
    let sysroot = env_for("MLX5DV_SYSROOT", &target_var)
        .map(PathBuf::from)
        .unwrap_or_default();
    let include = find_include(&target_var, &sysroot, target == host).unwrap_or_else(|| {
        panic!(
            "\n\nmlx5dv-raw: rdma-core development headers not found (infiniband/verbs.h and \
             infiniband/mlx5dv.h).\n  Debian/Ubuntu: apt-get install libibverbs-dev{}\n  \
             RHEL/Fedora/Rocky: dnf install rdma-core-devel\n  Or set MLX5DV_RDMA_INCLUDE_DIR to \
             the folder that holds infiniband/verbs.h (MLX5DV_RDMA_INCLUDE_DIR_{target_var} for \
             this target only).\n\n",
            debian_arch(&target).map(|a| format!(":{a}")).unwrap_or_default()
        )
    });
    for header in ["verbs.h", "mlx5dv.h"] {
        println!(
            "cargo:rerun-if-changed={}",
            include.join("infiniband").join(header).display()
        );
    }

    let mut build = cc::Build::new();
    build
        .file(shim_dir.join("m5dv_shim.c"))
        .include(&shim_dir)
        .include(&include);
    build
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Wno-unused-parameter");
    let mut defines = Vec::new();
    for (cfg, define, header, needle) in FEATURES {
        let text = fs::read_to_string(include.join("infiniband").join(header)).unwrap_or_default();
        if text.contains(needle) {
            build.define(define, None);
            println!("cargo:rustc-cfg={cfg}");
            defines.push(*define);
        }
    }
    build.compile("m5dv_shim");

    match find_lib_dir(&target, &target_var, &sysroot) {
        Some(dir) => println!("cargo:rustc-link-search=native={}", dir.display()),
        None => println!(
            "cargo:warning=mlx5dv-raw: libibverbs.so not found; binaries will fail to link. \
             Install libibverbs-dev (Debian/Ubuntu) or rdma-core-devel (RHEL), or set \
             MLX5DV_RDMA_LIB_DIR."
        ),
    }
    println!("cargo:rustc-link-lib=dylib=ibverbs");
    println!("cargo:rustc-link-lib=dylib=mlx5");
    if env::var_os("CARGO_FEATURE_CM").is_some() {
        let header = include.join("rdma/rdma_cma.h");
        println!("cargo:rerun-if-changed={}", header.display());
        if !header.is_file() {
            panic!(
                "\n\nmlx5dv-raw: the `cm` feature needs librdmacm's development files (rdma/rdma_cma.h \
                 next to infiniband/verbs.h in {}).\n  Debian/Ubuntu: apt-get install librdmacm-dev{}\n  \
                 RHEL/Fedora/Rocky: dnf install rdma-core-devel\n  Or build without the `cm` feature.\n\n",
                include.display(),
                debian_arch(&target).map(|a| format!(":{a}")).unwrap_or_default()
            );
        }
        println!("cargo:rustc-link-lib=dylib=rdmacm");
        println!("cargo:cm=1");
    }
    println!("cargo:include={}", include.display());
    println!("cargo:shim_include={}", shim_dir.display());
    println!("cargo:shim_defines={}", defines.join(","));
}

fn env_for(var: &str, target_var: &str) -> Option<String> {
    env::var(format!("{var}_{target_var}"))
        .ok()
        .or_else(|| env::var(var).ok())
        .filter(|v| !v.is_empty())
}

fn has_headers(dir: &Path) -> bool {
    dir.join("infiniband/verbs.h").is_file() && dir.join("infiniband/mlx5dv.h").is_file()
}

fn find_include(target_var: &str, sysroot: &Path, native: bool) -> Option<PathBuf> {
    if let Some(dir) = env_for("MLX5DV_RDMA_INCLUDE_DIR", target_var) {
        let dir = PathBuf::from(dir);
        if has_headers(&dir) {
            return Some(dir);
        }
        panic!(
            "mlx5dv-raw: MLX5DV_RDMA_INCLUDE_DIR={} does not hold infiniband/verbs.h and infiniband/mlx5dv.h",
            dir.display()
        );
    }
    if native {
        if let Ok(out) = Command::new("pkg-config")
            .args(["--variable=includedir", "libibverbs"])
            .output()
        {
            let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if out.status.success() && has_headers(&dir) {
                return Some(dir);
            }
        }
    }
    ["usr/include", "usr/local/include", "opt/rdma-core/include"]
        .iter()
        .map(|d| sysroot_join(sysroot, d))
        .find(|d| has_headers(d))
}

fn sysroot_join(sysroot: &Path, dir: &str) -> PathBuf {
    if sysroot.as_os_str().is_empty() {
        Path::new("/").join(dir)
    } else {
        sysroot.join(dir)
    }
}

fn find_lib_dir(target: &str, target_var: &str, sysroot: &Path) -> Option<PathBuf> {
    if let Some(dir) = env_for("MLX5DV_RDMA_LIB_DIR", target_var) {
        return Some(PathBuf::from(dir));
    }
    let mut candidates = Vec::new();
    if let Some(multiarch) = multiarch(target) {
        candidates.push(format!("usr/lib/{multiarch}"));
    }
    candidates.extend(["usr/lib64", "usr/lib", "usr/local/lib64", "usr/local/lib"].map(String::from));
    candidates
        .iter()
        .map(|d| sysroot_join(sysroot, d))
        .find(|d| d.join("libibverbs.so").exists())
}

/// Debian's multiarch tuple for a Rust target.
fn multiarch(target: &str) -> Option<String> {
    let arch = target.split('-').next()?;
    let env = if target.ends_with("gnueabihf") {
        "gnueabihf"
    } else {
        "gnu"
    };
    target.contains("-linux-").then(|| format!("{arch}-linux-{env}"))
}

/// Debian's architecture name for a Rust target (for the install hint).
fn debian_arch(target: &str) -> Option<&'static str> {
    let host = env::var("HOST").ok()?;
    if host == target {
        return None;
    }
    match target.split('-').next()? {
        "x86_64" => Some("amd64"),
        "aarch64" => Some("arm64"),
        "powerpc64le" => Some("ppc64el"),
        "s390x" => Some("s390x"),
        _ => None,
    }
}
