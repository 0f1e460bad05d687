//! Build script of soft-mlx5: the LD_PRELOAD interposer the `soft-mlx5` tool carries, and the
//! layout probe of the hand-written uapi module.
//!
//! The interposer (`preload/src`) is a cdylib, which `cargo install` does not install and a
//! package cannot depend on with stable cargo. So this script builds it with a cargo of its own
//! (the same `$CARGO`, profile and target) from a manifest it writes into `OUT_DIR`, into a
//! target directory beside this package's (`target/<profile>/soft-mlx5-preload`, reused between
//! builds), and the `soft-mlx5` binary embeds the library's bytes (`SOFT_MLX5_PRELOAD_SO`,
//! with their hash in `SOFT_MLX5_PRELOAD_HASH`), writing them out once at run time. The nested
//! build builds this package's library again and this script with it, told by
//! `SOFT_MLX5_PRELOAD_BUILD` not to recurse.
//!
//! Reads `src/uapi/{ib_user_verbs,mlx5_abi,ioctl}.rs` (every `pub struct`/`pub union` with its
//! `pub` fields, every `pub const`; parser shared with the workspace's `tests/c/build.rs`) and
//! generates
//! - `uapi_layout_probe.c`: what the C compiler says about each of them (size, alignment, field
//!   offset/size/alignment, constant value) on the kernel headers in `/usr/include/rdma`;
//! - `uapi_layout_rust.rs`: the same table as Rust sees it, for `tests/uapi_layout.rs`.
//!
//! `tests/c/uapi-layout-exceptions.txt` names the anonymous C members. The probe's object is
//! linked into the test targets only.
use std::collections::BTreeMap;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

// Decl, Exceptions, parse_exceptions, parse_rust.
include!("layout_parse.rs");

/// Where the kernel uapi headers are.
const INCLUDE: &str = "/usr/include";
/// The headers the uapi module mirrors.
const HEADERS: [&str; 7] = [
    "rdma/ib_user_verbs.h",
    "rdma/mlx5-abi.h",
    "rdma/rdma_user_ioctl_cmds.h",
    "rdma/ib_user_ioctl_cmds.h",
    "rdma/mlx5_user_ioctl_cmds.h",
    "rdma/ib_user_ioctl_verbs.h",
    "rdma/mlx5_user_ioctl_verbs.h",
];
/// The Rust files that mirror them.
const FILES: [&str; 3] = ["ib_user_verbs.rs", "mlx5_abi.rs", "ioctl.rs"];

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    // tests/cli.rs runs the built tool as a user does: not where it is built for another
    // machine (the test binary runs under qemu-user, which cannot start the tool it spawns).
    println!("cargo:rustc-check-cfg=cfg(soft_mlx5_cross)");
    if env::var("TARGET").unwrap() != env::var("HOST").unwrap() {
        println!("cargo:rustc-cfg=soft_mlx5_cross");
    }
    build_preload(&root, &out);
    let exceptions_path = root.join("tests/c/uapi-layout-exceptions.txt");
    for file in FILES {
        println!("cargo:rerun-if-changed=src/uapi/{file}");
    }
    println!("cargo:rerun-if-changed={}", exceptions_path.display());
    println!("cargo:rerun-if-changed=layout_parse.rs");
    for header in HEADERS {
        println!("cargo:rerun-if-changed={INCLUDE}/{header}");
    }

    let exc = parse_exceptions(&fs::read_to_string(&exceptions_path).unwrap());
    assert!(
        exc.since.is_empty(),
        "uapi-layout-exceptions.txt: `since` is not used for one header version"
    );
    assert!(
        exc.packed.is_empty(),
        "uapi-layout-exceptions.txt: `packed` is not supported by this probe"
    );
    let mut decls: BTreeMap<String, Decl> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut consts: Vec<String> = Vec::new();
    let mut enums: Vec<String> = Vec::new();
    for file in FILES {
        let src = fs::read_to_string(root.join("src/uapi").join(file)).unwrap();
        parse_rust(&src, &mut decls, &mut order, &mut consts, &mut enums);
    }
    assert!(
        enums.is_empty(),
        "src/uapi: C enums are constants here, not type aliases: {enums:?}"
    );
    if let Some((name, _)) = decls.iter().find(|(_, d)| d.opaque) {
        panic!("src/uapi: {name} has a field that is not `pub`: the probe cannot measure it");
    }
    // Anonymous unions (`skip` types): their parent and the C member their Rust field is measured at.
    let mut anon: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (key, cfield) in &exc.rename {
        let (parent, field) = key.split_once('.').expect("rename TYPE.FIELD CFIELD");
        let ty = format!("{parent}_{field}");
        if let Some(decl) = decls.get(&ty) {
            assert!(
                decl.is_union && exc.skip.contains(&ty),
                "{ty}: only `skip`ped anonymous unions are supported"
            );
            anon.insert(ty, (format!("struct {parent}"), cfield.clone()));
        }
    }
    for name in &exc.skip {
        assert!(
            anon.contains_key(name) || consts.contains(name),
            "uapi-layout-exceptions.txt: `skip {name}` is neither an anonymous union with a `rename` nor a constant"
        );
    }

    let mut c = String::new();
    let mut r = String::new();
    c.push_str("#include <stddef.h>\n");
    for header in HEADERS {
        writeln!(c, "#include <{header}>").unwrap();
    }
    c.push_str("\n#define UAPI_MAX(a, b) ((a) > (b) ? (a) : (b))\n");
    for (rust, (parent, path)) in &exc.nested {
        writeln!(c, "typedef __typeof__((({parent} *)0)->{path}) {rust};").unwrap();
    }
    c.push_str(
        "\nstruct uapi_layout_entry { const char *ty; const char *field; long long a; long long b; long long c; int kind; };\n\
         #define FIELD(CT, T, F, CF) { #T, #F, offsetof(CT, CF), sizeof(((CT *)0)->CF), _Alignof(__typeof__(((CT *)0)->CF)), 1 }\n\
         #define ANON_FIELD(CT, T, F, FIRST) { #T, #F, offsetof(CT, F) - offsetof(CT, FIRST), sizeof(((CT *)0)->F), _Alignof(__typeof__(((CT *)0)->F)), 1 }\n\
         const struct uapi_layout_entry soft_mlx5_uapi_layout_c[] = {\n",
    );
    r.push_str("// What Rust says about each item (generated by tests/soft-mlx5/build.rs).\n");
    r.push_str("fn rust_layout() -> Vec<Entry> {\n    vec![\n");
    let mut pod = String::new();
    let mut anon_c = String::new();
    let mut skipped: Vec<String> = Vec::new();
    for name in &order {
        let decl = &decls[name];
        writeln!(pod, "    is_pod::<uapi::{name}>();").unwrap();
        let is_union = decl.is_union as i64;
        if let Some((parent, first)) = anon.get(name) {
            // C has no name for this union: its size and alignment are those of its members.
            let (mut size, mut align) = ("0".to_string(), "0".to_string());
            for f in &decl.fields {
                size = format!("UAPI_MAX({size}, sizeof((({parent} *)0)->{f}))");
                align = format!("UAPI_MAX({align}, _Alignof(__typeof__((({parent} *)0)->{f})))");
            }
            writeln!(anon_c, "enum {{ {name}_align = {align}, {name}_size = {size} }};").unwrap();
            writeln!(
                c,
                "  {{ \"{name}\", NULL, ({name}_size + {name}_align - 1) / {name}_align * {name}_align, {name}_align, {is_union}, 0 }},"
            )
            .unwrap();
            for field in &decl.fields {
                writeln!(c, "  ANON_FIELD({parent}, {name}, {field}, {first}),").unwrap();
            }
        } else {
            let cty = match exc.nested.get(name) {
                Some(_) => name.clone(),
                None if decl.is_union => format!("union {name}"),
                None => format!("struct {name}"),
            };
            writeln!(
                c,
                "  {{ \"{name}\", NULL, sizeof({cty}), _Alignof({cty}), {is_union}, 0 }},"
            )
            .unwrap();
            for field in &decl.fields {
                let bare = field.trim_start_matches("r#");
                let cfield = exc.rename.get(&format!("{name}.{bare}")).map_or(bare, String::as_str);
                writeln!(c, "  FIELD({cty}, {name}, {bare}, {cfield}),").unwrap();
            }
        }
        writeln!(
            r,
            "        Entry {{ ty: \"{name}\".into(), field: None, a: core::mem::size_of::<uapi::{name}>() as i64, b: core::mem::align_of::<uapi::{name}>() as i64, c: {is_union}, kind: Kind::Type }},"
        )
        .unwrap();
        let offset_of = if decl.is_union {
            "memoffset::offset_of_union"
        } else {
            "memoffset::offset_of"
        };
        for field in &decl.fields {
            let bare = field.trim_start_matches("r#");
            writeln!(
                r,
                "        {{ let (size, align) = field_size_align!(uapi::{name}, {field}); Entry {{ ty: \"{name}\".into(), field: Some(\"{bare}\".into()), a: {offset_of}!(uapi::{name}, {field}) as i64, b: size as i64, c: align as i64, kind: Kind::Field }} }},"
            )
            .unwrap();
        }
    }
    for name in &consts {
        if exc.skip.contains(name) {
            skipped.push(name.clone());
            continue;
        }
        writeln!(c, "  {{ \"{name}\", NULL, (long long)({name}), 0, 0, 2 }},").unwrap();
        writeln!(
            r,
            "        Entry {{ ty: \"{name}\".into(), field: None, a: uapi::{name} as i64, b: 0, c: 0, kind: Kind::Const }},"
        )
        .unwrap();
    }
    c.push_str("};\nconst unsigned long soft_mlx5_uapi_layout_c_len = sizeof(soft_mlx5_uapi_layout_c) / sizeof(soft_mlx5_uapi_layout_c[0]);\n");
    r.push_str("    ]\n}\n\n");
    r.push_str("// Compile-time proof that every uapi struct and union implements `Pod`; returns how many.\n");
    writeln!(
        r,
        "fn all_types_are_pod() -> usize {{\n    fn is_pod<T: uapi::Pod>() {{}}\n{pod}    {}\n}}\n",
        order.len()
    )
    .unwrap();
    writeln!(
        r,
        "// Rust constants the uapi headers do not have (uapi-layout-exceptions.txt)."
    )
    .unwrap();
    writeln!(r, "const SKIPPED: &[&str] = &{skipped:?};").unwrap();
    writeln!(
        r,
        "// The header folder the probe was compiled against.\nconst PROBE_INCLUDE: &str = \"{INCLUDE}/rdma\";"
    )
    .unwrap();

    // The anonymous unions' sizes and alignments go before the table.
    let table = c.find("\nstruct uapi_layout_entry").unwrap();
    c.insert_str(table, &format!("\n{anon_c}"));
    let probe_c = out.join("uapi_layout_probe.c");
    fs::write(&probe_c, c).unwrap();
    fs::write(out.join("uapi_layout_rust.rs"), r).unwrap();
    let objects = cc::Build::new()
        .file(&probe_c)
        .include(INCLUDE)
        .cargo_metadata(false)
        .warnings(true)
        .extra_warnings(false)
        .compile_intermediates();
    for object in objects {
        println!("cargo:rustc-link-arg-tests={}", object.display());
    }
}

/// Builds the interposer cdylib with a nested cargo and tells the `soft-mlx5` binary where it is
/// (`SOFT_MLX5_PRELOAD_SO`) and its FNV-1a hash (`SOFT_MLX5_PRELOAD_HASH`).
fn build_preload(root: &Path, out: &Path) {
    println!("cargo:rerun-if-env-changed=SOFT_MLX5_PRELOAD_BUILD");
    if env::var_os("SOFT_MLX5_PRELOAD_BUILD").is_some() {
        // The nested build itself: it wants this package's library only.
        return;
    }
    let so = out.join("libsoft_mlx5_preload.so");
    if env::var_os("DOCS_RS").is_some() {
        // docs.rs documents the library without network or a second cargo: the binary is
        // built with an empty interposer, which it refuses to run with.
        fs::write(&so, b"").unwrap();
        emit_preload(&so);
        return;
    }
    // The interposer is this package's library plus preload/src: any change there rebuilds it.
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=preload/src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    let libc_req = "0.2";
    let dir = out.join("preload");
    fs::create_dir_all(&dir).unwrap();
    // Paths as TOML literal strings; a package path with a `'` cannot be written that way.
    let lit = |p: &Path| {
        let s = p.display().to_string();
        assert!(
            !s.contains('\''),
            "soft-mlx5: cannot build the interposer from a path with a quote: {s}"
        );
        format!("'{s}'")
    };
    let manifest = format!(
        "# Written by soft-mlx5's build.rs: the LD_PRELOAD interposer, built as a cdylib.\n\
         [package]\nname = \"soft-mlx5-preload-build\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [lib]\nname = \"soft_mlx5_preload\"\ncrate-type = [\"cdylib\"]\npath = {}\n\n\
         [dependencies]\nsoft-mlx5 = {{ path = {} }}\nlibc = \"{libc_req}\"\n\n[workspace]\n",
        lit(&root.join("preload/src/lib.rs")),
        lit(root),
    );
    fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    let profile = env::var("PROFILE").unwrap();
    // OUT_DIR is <target>/[<triple>/]<profile>/build/<pkg>-<hash>/out.
    let target_dir = out
        .ancestors()
        .nth(3)
        .expect("OUT_DIR has the layout cargo gives it")
        .join("soft-mlx5-preload");
    let triple = env::var("TARGET").unwrap();
    let cross = triple != env::var("HOST").unwrap();
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let run = |offline: bool| {
        let mut cmd = Command::new(&cargo);
        cmd.arg("build")
            .arg("--lib")
            .arg("--manifest-path")
            .arg(dir.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&target_dir);
        if profile == "release" {
            cmd.arg("--release");
        }
        if cross {
            cmd.args(["--target", &triple]);
        }
        if offline {
            cmd.arg("--offline");
        }
        // What this cargo told its build script is not for the nested one (clippy's driver,
        // the outer target directory), except RUSTFLAGS (CARGO_ENCODED_RUSTFLAGS), which holds.
        for var in [
            "CARGO_TARGET_DIR",
            "CARGO_BUILD_TARGET_DIR",
            "RUSTC_WORKSPACE_WRAPPER",
            "CLIPPY_ARGS",
            "CARGO_PRIMARY_PACKAGE",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("SOFT_MLX5_PRELOAD_BUILD", "1");
        cmd.output()
            .unwrap_or_else(|e| panic!("soft-mlx5: cannot run {cargo:?} to build the interposer: {e}"))
    };
    // Offline first: the crates it needs (libc, cc) are the ones this build just used.
    let mut result = run(true);
    if !result.status.success() {
        result = run(false);
    }
    if !result.status.success() {
        panic!(
            "soft-mlx5: building the LD_PRELOAD interposer ({}) failed:\n{}",
            dir.join("Cargo.toml").display(),
            String::from_utf8_lossy(&result.stderr)
        );
    }
    let mut built = target_dir.clone();
    if cross {
        built.push(&triple);
    }
    built.push(&profile);
    built.push("libsoft_mlx5_preload.so");
    fs::copy(&built, &so).unwrap_or_else(|e| panic!("soft-mlx5: cannot copy {}: {e}", built.display()));
    emit_preload(&so);
}

/// Hands the interposer's path and hash to the `soft-mlx5` binary.
fn emit_preload(so: &Path) {
    let bytes = fs::read(so).unwrap();
    // FNV-1a 64: names the extracted copy, so a tool never runs another build's interposer.
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    });
    println!("cargo:rustc-env=SOFT_MLX5_PRELOAD_SO={}", so.display());
    println!("cargo:rustc-env=SOFT_MLX5_PRELOAD_HASH={hash:016x}");
}
