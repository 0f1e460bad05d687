//! The command line: options, the switches (each one environment variable of the emulator) and
//! the command to run.

use soft_mlx5::fabric::faults::Faults;
use soft_mlx5::profile::{self, Profile};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// What the command line asks for.
pub enum Action {
    /// Run a command on one emulated node, or on N.
    Run(Options),
    /// Print the device profiles.
    ListProfiles,
    /// Build (or find in the cache) a second rdma-core and print its build directory.
    FetchRdmaCore(String),
    /// Print the usage.
    Help,
    /// Print the version.
    Version,
}

/// Which libibverbs/libmlx5 the command loads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RdmaCore {
    /// The system's (Debian bookworm: 44).
    System,
    /// A release built from source into the cache (`fetch-rdma-core`), e.g. "59.0".
    Version(String),
}

/// How to run the command.
#[derive(Debug)]
pub struct Options {
    /// The emulated device.
    pub profile: &'static Profile,
    /// Which rdma-core runtime.
    pub rdma_core: RdmaCore,
    /// The node of a single process.
    pub node: u32,
    /// Start this many processes, on nodes 0..N-1 of a private fabric.
    pub nodes: Option<u32>,
    /// With `nodes`: how long the processes may run.
    pub timeout: Duration,
    /// The fabric directory (default: per user, shared by every single-node run).
    pub fabric: Option<PathBuf>,
    /// The switches' environment variables, in the order given.
    pub env: Vec<(&'static str, String)>,
    /// The command and its arguments.
    pub command: Vec<OsString>,
}

/// A switch: a flag that sets one of the emulator's environment variables.
pub struct Switch {
    /// The flag.
    pub flag: &'static str,
    /// The variable it sets.
    pub var: &'static str,
    /// The value it sets; None: the flag takes the value (`VALUE` in the help).
    pub value: Option<&'static str>,
    /// What it does.
    pub help: &'static str,
}

/// Every switch. The variables keep working from the environment as before; a flag only sets one.
pub const SWITCHES: &[Switch] = &[
    Switch {
        flag: "--lossy",
        var: "SOFT_MLX5_FAULTS",
        value: None,
        help: "SPEC: a lossy wire, e.g. loss=0.01,dup=0.001,reorder=0.01,delay=0.01,seed=1 (retries, NAKs, PSNs as IBA 9.7)",
    },
    Switch {
        flag: "--qpn-reuse",
        var: "SOFT_MLX5_QPN_REUSE",
        value: Some("1"),
        help: "hand a freed QP/DCT number out again at once (the next create gets it)",
    },
    Switch {
        flag: "--log-max-msg",
        var: "SOFT_MLX5_LOG_MAX_MSG",
        value: None,
        help: "N: the port's maximum message size is 2^N (12..31; default 30), reported and enforced",
    },
    Switch {
        flag: "--ooo",
        var: "SOFT_MLX5_OOO",
        value: Some("1"),
        help: "complete different DCI streams out of order (each stream in order)",
    },
    Switch {
        flag: "--hosts",
        var: "SOFT_MLX5_HOSTS",
        value: None,
        help: "H: each node's RoCE port has H addresses (GIDs 1..H: ::ffff:10.(77+i).hi.lo; 1..178, default 1), one process standing for H hosts; give every process of the fabric the same",
    },
    Switch {
        flag: "--silent-gid",
        var: "SOFT_MLX5_SILENT_GID",
        value: None,
        help: "PREFIX[,PREFIX...]: RoCE GIDs ::ffff:PREFIX* never answer ARP: ibv_create_ah blocks 1 s, ETIMEDOUT",
    },
    Switch {
        flag: "--pkeys",
        var: "SOFT_MLX5_PKEYS",
        value: None,
        help: "P[,P...]: port 1's P_Key table on InfiniBand (default 0xffff); a request whose P_Key does not match its target's is dropped",
    },
    Switch {
        flag: "--capture",
        var: "SOFT_MLX5_CAPTURE",
        value: None,
        help: "FILE: append a line per request arriving at a QP or DCT: SL, traffic class, hop limit, flow label, P_Key",
    },
    Switch {
        flag: "--time-scale",
        var: "SOFT_MLX5_TIME_SCALE",
        value: None,
        help: "X: scale the ACK, RNR and neighbour timers by X (> 0; default 1)",
    },
    Switch {
        flag: "--no-bf-oracle",
        var: "SOFT_MLX5_BF_ORACLE",
        value: Some("0"),
        help: "do not abort on a torn or interleaved BlueFlame copy",
    },
    Switch {
        flag: "--no-wqe-sig",
        var: "SOFT_MLX5_WQE_SIG",
        value: Some("0"),
        help: "do not check WQE signatures of QPs created with them",
    },
    Switch {
        flag: "--no-pin-strict",
        var: "SOFT_MLX5_PIN_STRICT",
        value: Some("0"),
        help: "allow writable registrations of shared file mappings (Linux 6.5+ refuses them: EFAULT)",
    },
    Switch {
        flag: "--no-dckey-silent",
        var: "SOFT_MLX5_DCKEY_SILENT",
        value: Some("0"),
        help: "a wrong DC key fails the DCI at once instead of after its ACK timeouts",
    },
    Switch {
        flag: "--no-mr-cache",
        var: "SOFT_MLX5_MR_CACHE",
        value: Some("0"),
        help: "no mlx5_ib MR cache: a deregistered key never comes back with the next registration",
    },
    Switch {
        flag: "--log",
        var: "SOFT_MLX5_LOG",
        value: Some("1"),
        help: "log every command and error CQE the emulator handles to stderr",
    },
];

/// The usage text.
pub fn usage() -> String {
    let mut s = String::from(
        "soft-mlx5 (emulated): runs a command over the real libibverbs/libmlx5 on an emulated ConnectX.\n\n\
         usage: soft-mlx5 [OPTIONS] -- CMD [ARGS...]\n\
         \x20      soft-mlx5 --nodes N [OPTIONS] -- CMD [ARGS...]\n\
         \x20      soft-mlx5 --list-profiles\n\
         \x20      soft-mlx5 fetch-rdma-core [VERSION]\n\n\
         options:\n\
         \x20 --profile P       the emulated device (default cx5-ib; see --list-profiles)\n\
         \x20 --rdma-core V     44 or system: the installed libibverbs/libmlx5; 59 (or 59.0, any X.Y on\n\
         \x20                   PyPI's pyverbs): built from source once into ~/.cache/mlx5dv (MLX5DV_CACHE)\n\
         \x20 --node N          the emulated node (0..4095; default 0): LID 1+N, RoCE GID ::ffff:10.78.0.(N+1) (N+1 in the last 16 bits)\n\
         \x20 --nodes N         start N processes, process i on node i of a private fabric, each told\n\
         \x20                   SOFT_MLX5_NODE_INDEX, SOFT_MLX5_NODES and SOFT_MLX5_RENDEZVOUS (a directory\n\
         \x20                   to meet in); output prefixed \"node I: \"; fails if any process fails\n\
         \x20 --timeout S       with --nodes: kill what still runs after S seconds (default 300)\n\
         \x20 --fabric DIR      where processes meet (SOFT_MLX5_FABRIC; default /tmp/soft-mlx5-fabric-UID)\n\n\
         switches (each sets the environment variable named; the variables work on their own too):\n",
    );
    for sw in SWITCHES {
        let flag = match sw.value {
            Some(_) => sw.flag.to_string(),
            None => format!("{} VALUE", sw.flag),
        };
        let set = match sw.value {
            Some(v) => format!("{}={v}", sw.var),
            None => format!("{}=VALUE", sw.var),
        };
        s.push_str(&format!("  {flag:<20} {set}\n  {:<20} {}\n", "", sw.help));
    }
    s.push_str(
        "\nThe command gets MLX5DV_TEST_DEVICE=mlx5_0 (and MLX5DV_TEST_GID_INDEX=1 on RoCE),\n\
         SOFT_MLX5_RDMA_CORE (the rdma-core build directory, with --rdma-core other than the system's).\n\
         A single process replaces this one (exec); it runs in the current directory.\n",
    );
    s
}

/// Parses the arguments after the program name.
///
/// # Errors
///
/// A message naming the bad option or value.
pub fn parse(args: Vec<OsString>) -> Result<Action, String> {
    let mut opts = Options {
        profile: &Profile::all()[0],
        rdma_core: RdmaCore::System,
        node: 0,
        nodes: None,
        timeout: Duration::from_secs(300),
        fabric: None,
        env: Vec::new(),
        command: Vec::new(),
    };
    let mut it = args.into_iter();
    let mut first = true;
    while let Some(arg) = it.next() {
        let Some(text) = arg.to_str() else {
            return Err(format!("{arg:?}: not an option (options come before --)"));
        };
        if first && text == "fetch-rdma-core" {
            let v = it.next().map(|v| v.to_string_lossy().into_owned());
            if let Some(extra) = it.next() {
                return Err(format!("fetch-rdma-core takes one VERSION, not also {extra:?}"));
            }
            return Ok(Action::FetchRdmaCore(normalize_version(
                v.as_deref().unwrap_or("59.0"),
            )?));
        }
        first = false;
        let (name, inline) = match text.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (text.to_string(), None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it
                    .next()
                    .and_then(|v| v.into_string().ok())
                    .ok_or_else(|| format!("{name} needs {what}")),
            }
        };
        match name.as_str() {
            "--" => {
                opts.command = it.collect();
                break;
            }
            "-h" | "--help" => return Ok(Action::Help),
            "-V" | "--version" => return Ok(Action::Version),
            "--list-profiles" => return Ok(Action::ListProfiles),
            "--profile" => {
                let p = value("a profile name")?;
                opts.profile = Profile::by_name(&p)
                    .ok_or_else(|| format!("unknown profile {p:?}; profiles: {}", profile_names().join(", ")))?;
            }
            "--rdma-core" => {
                let v = value("a version (44, system, 59, 59.0)")?;
                opts.rdma_core = match v.as_str() {
                    "44" | "system" => RdmaCore::System,
                    _ => RdmaCore::Version(normalize_version(&v)?),
                };
            }
            "--node" => opts.node = number(&name, &value("a node number")?, 0, 4095)?,
            "--nodes" => opts.nodes = Some(number(&name, &value("a count")?, 1, 64)?),
            "--timeout" => {
                opts.timeout = Duration::from_secs(u64::from(number(&name, &value("seconds")?, 1, 86_400)?));
            }
            "--fabric" => opts.fabric = Some(PathBuf::from(value("a directory")?)),
            _ => {
                let Some(sw) = SWITCHES.iter().find(|s| s.flag == name) else {
                    return Err(format!(
                        "unknown option {name} (soft-mlx5 --help lists them; the command goes after --)"
                    ));
                };
                let v = match sw.value {
                    Some(v) => {
                        if inline.is_some() {
                            return Err(format!("{name} takes no value"));
                        }
                        v.to_string()
                    }
                    None => {
                        let v = value("a value")?;
                        check_switch(sw, &v)?;
                        v
                    }
                };
                opts.env.push((sw.var, v));
            }
        }
    }
    if opts.command.is_empty() {
        return Err("no command given (soft-mlx5 [OPTIONS] -- CMD [ARGS...])".into());
    }
    if opts.nodes.is_some() && opts.node != 0 {
        return Err("--node and --nodes exclude each other (--nodes N uses nodes 0..N-1)".into());
    }
    Ok(Action::Run(opts))
}

/// The profiles' names, default first.
pub fn profile_names() -> Vec<&'static str> {
    Profile::all().iter().map(|p| p.name).collect()
}

/// A decimal number in [lo, hi].
fn number(name: &str, v: &str, lo: u32, hi: u32) -> Result<u32, String> {
    v.parse::<u32>()
        .ok()
        .filter(|n| (lo..=hi).contains(n))
        .ok_or_else(|| format!("{name} must be a number in {lo}..{hi}, not {v:?}"))
}

/// "59" -> "59.0"; "59.0" stays; anything else is refused.
fn normalize_version(v: &str) -> Result<String, String> {
    let ok = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match v.split_once('.') {
        None if ok(v) => Ok(format!("{v}.0")),
        Some((a, b)) if ok(a) && ok(b) => Ok(v.to_string()),
        _ => Err(format!("rdma-core version {v:?}: expected N or N.M (e.g. 59 or 59.0)")),
    }
}

/// The values the emulator would otherwise ignore or clamp: refused here, with what is accepted.
fn check_switch(sw: &Switch, v: &str) -> Result<(), String> {
    match sw.var {
        "SOFT_MLX5_FAULTS" => Faults::parse(v).map(drop).map_err(|e| format!("{}: {e}", sw.flag)),
        "SOFT_MLX5_LOG_MAX_MSG" => profile::parse_log_max_msg(v).map(drop).ok_or_else(|| {
            format!(
                "{} must be a log2 in {}..{}, not {v:?}",
                sw.flag,
                profile::LOG_MAX_MSG_RANGE.start(),
                profile::LOG_MAX_MSG_RANGE.end()
            )
        }),
        "SOFT_MLX5_HOSTS" => profile::parse_hosts(v)
            .map(drop)
            .ok_or_else(|| format!("{} must be 1..{}, not {v:?}", sw.flag, profile::MAX_HOSTS)),
        "SOFT_MLX5_PKEYS" => soft_mlx5::engine::headers::parse_pkeys(v)
            .map(drop)
            .map_err(|e| format!("{}: {e}", sw.flag)),
        "SOFT_MLX5_TIME_SCALE" => match v.parse::<f64>() {
            Ok(x) if x > 0.0 && x.is_finite() => Ok(()),
            _ => Err(format!("{} must be a number above 0, not {v:?}", sw.flag)),
        },
        _ if v.is_empty() => Err(format!("{} needs a value", sw.flag)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Options, String> {
        match parse(args.iter().map(OsString::from).collect())? {
            Action::Run(o) => Ok(o),
            _ => Err("not a run".into()),
        }
    }

    #[test]
    fn switches_set_the_variables_the_emulator_reads() {
        let o = run(&[
            "--qpn-reuse",
            "--no-mr-cache",
            "--lossy",
            "loss=0.01,seed=1",
            "--log-max-msg=16",
            "--",
            "true",
        ])
        .unwrap();
        assert_eq!(
            o.env,
            vec![
                ("SOFT_MLX5_QPN_REUSE", "1".to_string()),
                ("SOFT_MLX5_MR_CACHE", "0".to_string()),
                ("SOFT_MLX5_FAULTS", "loss=0.01,seed=1".to_string()),
                ("SOFT_MLX5_LOG_MAX_MSG", "16".to_string()),
            ]
        );
        assert_eq!(o.command, vec![OsString::from("true")]);
    }

    #[test]
    fn values_the_emulator_would_ignore_are_refused() {
        assert!(run(&["--lossy", "lose=0.1", "--", "true"])
            .unwrap_err()
            .contains("unknown fault"));
        assert!(run(&["--log-max-msg", "40", "--", "true"])
            .unwrap_err()
            .contains("12..31"));
        assert!(run(&["--time-scale", "0", "--", "true"]).is_err());
        assert!(run(&["--hosts", "179", "--", "true"]).unwrap_err().contains("1..178"));
        assert!(run(&["--hosts", "178", "--", "true"]).is_ok());
        assert!(run(&["--profile", "cx9", "--", "true"]).unwrap_err().contains("cx5-ib"));
        assert!(run(&["--node", "4096", "--", "true"]).is_err());
        assert!(run(&["--node", "4095", "--", "true"]).is_ok());
        assert!(run(&["--nodes", "3", "--node", "1", "--", "true"]).is_err());
        assert!(run(&["--qpn-reuse=1", "--", "true"]).is_err());
        assert!(run(&["--profile", "cx5-ib"]).unwrap_err().contains("no command"));
    }

    #[test]
    fn rdma_core_versions_name_a_release() {
        assert_eq!(
            run(&["--rdma-core", "44", "--", "x"]).unwrap().rdma_core,
            RdmaCore::System
        );
        assert_eq!(
            run(&["--rdma-core", "59", "--", "x"]).unwrap().rdma_core,
            RdmaCore::Version("59.0".into())
        );
        assert!(run(&["--rdma-core", "59.x", "--", "x"]).is_err());
    }
}
