//! The sysfs tree libibverbs discovers devices through when RDMA netlink is unavailable
//! (libibverbs/init.c `find_sysfs_devs`, `setup_sysfs_uverbs`; sysfs.c honours `SYSFS_PATH`).
//!
//! Layout mirrors what the PCI core, ib_uverbs and ib_core create for a ConnectX function: the
//! PCI device's folder `devices/pci0000:00/0000:08:00.0` (its `vendor` 0x15b3, `device` id,
//! `modalias`, link width and speed), below it the devices `infiniband/mlx5_0` (node type and
//! GUIDs, firmware, board id, port 1: state, LID, GIDs, P_Keys) and `infiniband_verbs/uverbs0`
//! (dev, ibdev, abi_version), each with its `device` link back to the PCI folder, and the class
//! folders `class/infiniband/mlx5_0` and `class/infiniband_verbs/uverbs0` as links to them
//! (drivers/base/core.c `device_add_class_symlinks`). A program that resolves
//! `class/infiniband/mlx5_0` with realpath and strips `infiniband/mlx5_0` finds the PCI
//! function there, as on a real host.

use crate::profile::{LinkLayer, Profile, NODE_GUID_BASE};
use std::fs;
use std::io;
use std::path::Path;

/// Character device numbers of uverbs0 (major 231, minor 192), as ib_uverbs registers them.
pub const UVERBS_DEV: (u32, u32) = (231, 192);
/// The device name libibverbs lists.
pub const IBDEV: &str = "mlx5_0";
/// The PCI function the device sits on (bus address), below `devices/pci0000:00`.
pub const PCI_BDF: &str = "0000:08:00.0";
/// The command device path the library opens.
pub const CDEV_PATH: &str = "/dev/infiniband/uverbs0";

fn guid_text(guid: u64) -> String {
    let b = guid.to_be_bytes();
    format!(
        "{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}",
        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
    )
}

fn gid_text(gid: &[u8; 16]) -> String {
    gid.chunks(2)
        .map(|c| format!("{:02x}{:02x}", c[0], c[1]))
        .collect::<Vec<_>>()
        .join(":")
}

/// Writes the tree for `profile` at node `node` under `root` (replacing what is there).
///
/// # Errors
/// Any I/O error creating the folders or files.
pub fn write_tree(root: &Path, profile: &Profile, node: u32) -> io::Result<()> {
    let put = |rel: &str, text: &str| -> io::Result<()> {
        let p = root.join(rel);
        if let Some(dir) = p.parent() {
            fs::create_dir_all(dir)?;
        }
        fs::write(p, format!("{text}\n"))
    };
    let link = |rel: &str, target: &str| -> io::Result<()> {
        let p = root.join(rel);
        if let Some(dir) = p.parent() {
            fs::create_dir_all(dir)?;
        }
        let _ = fs::remove_file(&p);
        std::os::unix::fs::symlink(target, p)
    };
    let guid = NODE_GUID_BASE + u64::from(node);
    let pci = format!("devices/pci0000:00/{PCI_BDF}");
    put("class/infiniband_verbs/abi_version", "6")?;
    let uv = format!("{pci}/infiniband_verbs/uverbs0");
    put(&format!("{uv}/ibdev"), IBDEV)?;
    put(&format!("{uv}/dev"), &format!("{}:{}", UVERBS_DEV.0, UVERBS_DEV.1))?;
    put(&format!("{uv}/abi_version"), "1")?;
    link(&format!("{uv}/device"), &format!("../../../{PCI_BDF}"))?;
    link("class/infiniband_verbs/uverbs0", &format!("../../{uv}"))?;
    let ib = format!("{pci}/infiniband/{IBDEV}");
    link(&format!("{ib}/device"), &format!("../../../{PCI_BDF}"))?;
    link(&format!("class/infiniband/{IBDEV}"), &format!("../../{ib}"))?;
    put(&format!("{ib}/node_type"), "1: CA")?;
    put(&format!("{ib}/node_guid"), &guid_text(guid))?;
    put(&format!("{ib}/sys_image_guid"), &guid_text(guid))?;
    put(
        &format!("{ib}/fw_ver"),
        &format!("{}.{}.{}", profile.fw.0, profile.fw.1, profile.fw.2),
    )?;
    put(&format!("{ib}/hca_type"), &format!("MT{}", profile.vendor_part_id))?;
    put(&format!("{ib}/board_id"), "SOFT_MLX5_EMULATED")?;
    put(
        &format!("{ib}/node_desc"),
        &format!("soft-mlx5 (emulated) {} node {node}", profile.model),
    )?;
    // The PCI function (drivers/pci/pci-sysfs.c): what the mlx5 provider matches on
    // (modalias) and what programs read the device's identity from (vendor, device).
    put(
        &format!("{pci}/modalias"),
        &format!(
            "pci:v000015B3d0000{:04X}sv000015B3sd00000008bc02sc07i00",
            profile.pci_device
        ),
    )?;
    put(&format!("{pci}/vendor"), "0x15b3")?;
    put(&format!("{pci}/device"), &format!("0x{:04x}", profile.pci_device))?;
    put(&format!("{pci}/subsystem_vendor"), "0x15b3")?;
    put(&format!("{pci}/subsystem_device"), "0x0008")?;
    put(&format!("{pci}/class"), "0x020700")?;
    put(&format!("{pci}/numa_node"), "-1")?;
    put(&format!("{pci}/current_link_speed"), "8.0 GT/s PCIe")?;
    put(&format!("{pci}/current_link_width"), "16")?;
    let port = format!("{ib}/ports/1");
    put(&format!("{port}/state"), "4: ACTIVE")?;
    put(&format!("{port}/phys_state"), "5: LinkUp")?;
    let (ll, rate) = match profile.link_layer {
        LinkLayer::InfiniBand => ("InfiniBand", "100 Gb/sec (4X EDR)"),
        LinkLayer::Ethernet => ("Ethernet", "100 Gb/sec (2X HDR)"),
    };
    put(&format!("{port}/link_layer"), ll)?;
    put(&format!("{port}/rate"), rate)?;
    put(&format!("{port}/lid"), &format!("0x{:x}", profile.lid_of(node)))?;
    put(&format!("{port}/sm_lid"), &format!("0x{:x}", profile.lid_of(0)))?;
    put(&format!("{port}/lid_mask_count"), "0")?;
    put(&format!("{port}/sm_sl"), "0")?;
    put(&format!("{port}/cap_mask"), "0x2651e848")?;
    for (i, pkey) in crate::engine::headers::pkey_table(profile).iter().enumerate() {
        put(&format!("{port}/pkeys/{i}"), &format!("{pkey:#06x}"))?;
    }
    // ib_core shows every entry of the table; an empty one reads as the zero GID
    // (show_port_gid) and has no type (its gid_attrs read fails, here: no file).
    for i in profile.gid_count()..profile.gid_tbl_len() {
        put(&format!("{port}/gids/{i}"), &gid_text(&[0; 16]))?;
    }
    for i in 0..profile.gid_count() {
        let gid = profile.gid(node, i).unwrap_or([0; 16]);
        put(&format!("{port}/gids/{i}"), &gid_text(&gid))?;
        let ty = match (profile.link_layer, i) {
            (LinkLayer::InfiniBand, _) => "IB/RoCE v1",
            (LinkLayer::Ethernet, 0) => "IB/RoCE v1",
            _ => "RoCE v2",
        };
        put(&format!("{port}/gid_attrs/types/{i}"), ty)?;
        if profile.link_layer == LinkLayer::Ethernet {
            put(&format!("{port}/gid_attrs/ndevs/{i}"), &format!("smlx{node}"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_names_the_device_as_emulated_and_carries_the_connectx5_modalias() {
        let dir = std::env::temp_dir().join(format!("soft-mlx5-sysfs-test-{}", std::process::id()));
        write_tree(&dir, Profile::by_name("cx5-ib").unwrap(), 0).unwrap();
        let read = |p: &str| fs::read_to_string(dir.join(p)).unwrap();
        assert!(read("class/infiniband/mlx5_0/node_desc").contains("soft-mlx5 (emulated)"));
        assert!(read("class/infiniband/mlx5_0/device/modalias").starts_with("pci:v000015B3d00001017"));
        // realpath of the class entry, less `infiniband/mlx5_0`, is the PCI function.
        let real = fs::canonicalize(dir.join("class/infiniband/mlx5_0")).unwrap();
        let pci = real.parent().unwrap().parent().unwrap();
        assert!(pci.ends_with(format!("pci0000:00/{PCI_BDF}")), "{}", pci.display());
        assert_eq!(fs::read_to_string(pci.join("vendor")).unwrap(), "0x15b3\n");
        assert_eq!(fs::read_to_string(pci.join("device")).unwrap(), "0x1017\n");
        assert_eq!(read("class/infiniband_verbs/uverbs0/dev"), "231:192\n");
        assert_eq!(
            read("class/infiniband/mlx5_0/ports/1/gids/0"),
            "fe80:0000:0000:0000:0002:c903:00f5:0000\n"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
