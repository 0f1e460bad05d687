//! Lists RDMA devices and ports, says whether each is an mlx5 device, reports its DC
//! capabilities and probes DC for real (a DCT taken to RTR).
//!
//! Usage: `devinfo [-g GID_INDEX]` (the GID index the DC probe uses on RoCE ports; default 0).
//! With no device it says so in one line and exits 1, as `ibv_devinfo` does.
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let gid_index = match args.as_slice() {
        [] => 0,
        [flag, n] if flag == "-g" => match n.parse::<u8>() {
            Ok(n) => n,
            Err(_) => {
                eprintln!("devinfo: -g takes a GID index from 0 to 255, not {n:?}");
                return ExitCode::FAILURE;
            }
        },
        _ => {
            eprintln!("usage: devinfo [-g GID_INDEX]");
            return ExitCode::FAILURE;
        }
    };
    let list = match mlx5dv::devices() {
        Ok(list) => list,
        Err(e) => {
            eprintln!("devinfo: {e}");
            return ExitCode::FAILURE;
        }
    };
    if list.is_empty() {
        println!("No IB devices found");
        return ExitCode::FAILURE;
    }
    for dev in list.iter() {
        let mlx5 = dev.is_mlx5();
        println!(
            "{}: guid {:016x}, node type {}, mlx5: {}",
            dev.name(),
            dev.guid(),
            dev.node_type(),
            if mlx5 {
                "yes"
            } else {
                "no (DC unavailable: DC needs ConnectX-5 or newer)"
            }
        );
        let ctx = match dev.open() {
            Ok(ctx) => ctx,
            Err(e) => {
                println!("  cannot open: {e}");
                continue;
            }
        };
        let ports = match ctx.query_device() {
            Ok(attr) => {
                println!("  firmware {}, {} port(s)", attr.fw_ver(), attr.phys_port_cnt());
                attr.phys_port_cnt()
            }
            Err(e) => {
                println!("  {e}");
                continue;
            }
        };
        match ctx.mlx5() {
            Ok(mlx5) => {
                match mlx5.caps() {
                    Ok(caps) => {
                        let na = || "n/a (libmlx5 older than rdma-core 47, or no DEVX to read it)".to_string();
                        println!(
                            "  DC caps: dc_odp_caps {}, DCI streams {}",
                            caps.dc_odp_caps.map_or("n/a".into(), |c| format!("{c:#x}")),
                            caps.dci_streams
                                .map_or("n/a".into(), |(c, e)| format!("log concurrent {c}, log errored {e}")),
                        );
                        println!(
                            "  DC reads/atomics: requester (per DCI, max_dc_rd_atom) {}, responder (per DCT, max_dc_init_rd_atom) {}",
                            caps.max_dc_requester_rd_atomic.map_or_else(na, |v| v.to_string()),
                            caps.max_dc_responder_rd_atomic.map_or_else(na, |v| v.to_string()),
                        );
                        println!(
                            "  DC out-of-order placement: {}",
                            match caps.ooo_recv_wrs {
                                Some(c) if c.max_dct > 0 => format!("yes (max_dct {} receive WRs)", c.max_dct),
                                Some(_) => "no (the device has it, but not for DC)".to_string(),
                                None => "no (libmlx5 older than rdma-core 55, or the device lacks it)".to_string(),
                            }
                        );
                    }
                    Err(e) => println!("  DC caps: {e}"),
                }
                let eth = ctx
                    .query_port(1)
                    .map(|p| p.link_layer_str() == "Ethernet")
                    .unwrap_or(false);
                match mlx5.probe_dc(1, eth.then_some(gid_index)) {
                    Ok(dctn) => println!("  DC probe: a DCT reached RTR on port 1 (DCT number {dctn:#08x}): DC works"),
                    Err(e) => println!("  DC probe: {e}"),
                }
            }
            Err(e) => println!("  DC: {e}"),
        }
        for port in 1..=ports {
            match ctx.query_port(port) {
                Ok(p) => println!(
                    "  port {port}: {}, link layer {}, active MTU {}, LID {}, active_speed_ex {}, port_cap_flags2 {:#x}",
                    p.state_str(),
                    p.link_layer_str(),
                    p.active_mtu_bytes(),
                    p.lid(),
                    p.0.active_speed_ex,
                    p.0.port_cap_flags2
                ),
                Err(e) => println!("  port {port}: {e}"),
            }
        }
    }
    ExitCode::SUCCESS
}
