//! Compiles src/dc.c with the system's C compiler and links libibverbs and libmlx5
//! (Debian: libibverbs-dev, which carries libmlx5's headers and link library too).
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    println!("cargo:rerun-if-changed=src/dc.c");
    let obj = out.join("dc.o");
    let ok = Command::new(&cc)
        .args([
            "-c", "-O2", "-g", "-fPIC", "-Wall", "-Wextra", "-Werror", "src/dc.c", "-o",
        ])
        .arg(&obj)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc:?}: {e}"));
    assert!(ok.success(), "compiling src/dc.c failed (is libibverbs-dev installed?)");
    let lib = out.join("libdcwrite.a");
    let _ = std::fs::remove_file(&lib);
    let ok = Command::new("ar")
        .arg("crs")
        .arg(&lib)
        .arg(&obj)
        .status()
        .expect("cannot run ar");
    assert!(ok.success(), "ar failed");
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=dcwrite");
    println!("cargo:rustc-link-lib=dylib=mlx5");
    println!("cargo:rustc-link-lib=dylib=ibverbs");
}
