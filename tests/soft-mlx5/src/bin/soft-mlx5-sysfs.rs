//! Writes the emulated device's sysfs tree: `soft-mlx5-sysfs DIR [PROFILE] [NODE]`.
use soft_mlx5::profile::Profile;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: soft-mlx5-sysfs DIR [PROFILE] [NODE]");
        return ExitCode::from(2);
    };
    let name = args.get(1).map(String::as_str).unwrap_or("cx5-ib");
    let Some(profile) = Profile::by_name(name) else {
        let names: Vec<_> = Profile::all().iter().map(|p| p.name).collect();
        eprintln!("soft-mlx5: unknown profile {name:?}; profiles: {}", names.join(", "));
        return ExitCode::from(2);
    };
    let node = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(0);
    match soft_mlx5::sysfs::write_tree(std::path::Path::new(dir), profile, node) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("soft-mlx5: cannot write the sysfs tree under {dir}: {e}");
            ExitCode::FAILURE
        }
    }
}
