//! `soft-mlx5`: runs a command, or N of them, over the real libibverbs/libmlx5 on emulated
//! ConnectX nodes. Everything it needs at run time is inside the binary: the LD_PRELOAD
//! interposer (written once to `~/.cache/soft-mlx5`), the device model that writes each node's
//! sysfs tree, and the recipe that builds a second rdma-core into `~/.cache/mlx5dv`.
//!
//! `soft-mlx5 --help` lists the options; docs/testing.md ("soft-mlx5 for your crate") is the guide.
#![deny(unsafe_op_in_unsafe_fn)]

mod args;
mod node;
mod nodes;
mod rdma_core;

use args::Action;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let action = match args::parse(std::env::args_os().skip(1).collect()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("soft-mlx5: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match action {
        Action::Help => {
            print!("{}", args::usage());
            Ok(0)
        }
        Action::Version => {
            println!("soft-mlx5 {} (emulated ConnectX)", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        Action::ListProfiles => {
            for p in soft_mlx5::profile::Profile::all() {
                let default = if std::ptr::eq(p, &soft_mlx5::profile::Profile::all()[0]) {
                    " (default)"
                } else {
                    ""
                };
                println!("{:<24} {}{default}", p.name, p.model);
            }
            Ok(0)
        }
        Action::FetchRdmaCore(v) => rdma_core::build_dir(&v).map(|dir| {
            println!("{}", dir.display());
            0
        }),
        Action::Run(opts) => match opts.nodes {
            Some(n) => nodes::run(&opts, n),
            None => run_one(&opts),
        },
    };
    match result {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(e) => {
            eprintln!("soft-mlx5: {e}");
            ExitCode::from(2)
        }
    }
}

/// Replaces this process with the command on one emulated node (a signal sent to this pid
/// reaches the command). Returns only when the command cannot be started.
fn run_one(opts: &args::Options) -> Result<i32, String> {
    let fabric = match (&opts.fabric, std::env::var_os("SOFT_MLX5_FABRIC")) {
        (Some(f), _) => f.clone(),
        (None, Some(f)) if !f.is_empty() => PathBuf::from(f),
        // SAFETY: getuid has no preconditions and cannot fail.
        _ => std::env::temp_dir().join(format!("soft-mlx5-fabric-{}", unsafe { libc::getuid() })),
    };
    let shared = node::Shared::new(opts, fabric)?;
    let env = shared.node_env(opts.profile, opts.node)?;
    eprintln!("{}", node::banner(opts, opts.node));
    let err = Command::new(&opts.command[0])
        .args(&opts.command[1..])
        .envs(env)
        .envs(opts.env.iter().map(|(k, v)| (*k, v)))
        .exec();
    eprintln!("soft-mlx5: cannot run {:?}: {err}", opts.command[0]);
    Ok(if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    })
}
