//! Lists RDMA devices and ports, says whether each is an mlx5 device (a DC candidate).
//!
//! With no device it says so in one line and exits 1, as `ibv_devinfo` does.
use std::process::ExitCode;

fn main() -> ExitCode {
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
        for port in 1..=ports {
            match ctx.query_port(port) {
                Ok(p) => println!(
                    "  port {port}: {}, link layer {}, active MTU {}, LID {}, active_speed_ex {}, port_cap_flags2 {:#x}",
                    p.state_str(),
                    p.link_layer_str(),
                    p.active_mtu_bytes(),
                    p.0.lid,
                    p.0.active_speed_ex,
                    p.0.port_cap_flags2
                ),
                Err(e) => println!("  port {port}: {e}"),
            }
        }
    }
    ExitCode::SUCCESS
}
