//! Device profiles: which ConnectX the emulation presents, chosen by `SOFT_MLX5_PROFILE`.
//!
//! Every capability a profile sets is reported through each path libmlx5 reads it from (sysfs,
//! QUERY_DEVICE, the mlx5 query-device response, the DEVX HCA capability pages), so the library
//! never sees two answers to one question.

/// The link layer of port 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkLayer {
    /// InfiniBand: LID routing, no GRH needed.
    InfiniBand,
    /// RoCE v2: GID routing, GRH required on every address handle.
    Ethernet,
}

/// One emulated device model.
#[derive(Clone, Debug)]
pub struct Profile {
    /// Short name used by `SOFT_MLX5_PROFILE`.
    pub name: &'static str,
    /// What the node description and board id say (always marked emulated).
    pub model: &'static str,
    /// PCI device id (ConnectX-5 0x1017, ConnectX-6 Dx 0x101d, ConnectX-5 VF 0x1018).
    pub pci_device: u16,
    /// `vendor_part_id` in QUERY_DEVICE (mlx5_ib reports the PCI device id).
    pub vendor_part_id: u32,
    /// Firmware version reported as `fw_ver` (major, minor, sub-minor).
    pub fw: (u16, u16, u16),
    /// Port 1 link layer.
    pub link_layer: LinkLayer,
    /// Port 1 LID (InfiniBand; 0 on Ethernet).
    pub lid: u16,
    /// Masked 64-bit atomics (IB_ATOMIC_HCA); false for a VF without atomics.
    pub atomics: bool,
    /// DCI streams caps (max_log_num_concurent, max_log_num_errored); None: no streams.
    pub dci_streams: Option<(u8, u8)>,
    /// The `qpc_extension` HCA cap (stream id reset needs it).
    pub qpc_extension: bool,
    /// `odp_caps` / `dc_odp_caps` advertised.
    pub odp: bool,
    /// AV-to-QP mapping general object supported (mlx5dv_map_ah_to_qp).
    pub av_qp_mapping: bool,
    /// Out-of-order data placement for DC (`cmd_hca_cap.dp_ordering_ooo_all_dc` and
    /// `cmd_hca_cap_2.dp_ordering_force`: ConnectX-7 firmware): mlx5_ib (Linux 6.10+) reports
    /// `MLX5_IB_QUERY_DEV_RESP_FLAGS_OOO_DP` and grants `MLX5_IB_MODIFY_QP_OOO_DP` on DCIs and DCTs.
    pub ooo_dp: bool,
    /// DEVX user contexts (`log_max_uctx` non-zero): without them mlx5_ib refuses a DEVX
    /// ucontext and exposes no DEVX methods (devx.c), so libmlx5 opens without a DEVX uid.
    pub devx: bool,
}

/// Node GUID of device index 0; a device's GUID adds its index (distinct nodes).
pub const NODE_GUID_BASE: u64 = 0x0002_c903_00f5_0000;
/// Largest send/receive queue (WRs); mlx5 reports 1 << log_max_qp_sz = 32768.
pub const MAX_QP_WR: u32 = 32768;
/// Largest CQ (CQEs); 1 << log_max_cq_sz minus one (mlx5_ib_query_device).
pub const MAX_CQE: u32 = (1 << 22) - 1;
/// Scatter/gather entries per WQE (mlx5_ib: max_sq_desc_sz / sizeof(data seg) rounded).
pub const MAX_SGE: u32 = 30;
/// Largest SRQ.
pub const MAX_SRQ_WR: u32 = 32767;
/// Largest send WQE in bytes (`max_sq_desc_sz`, MLX5_CAP_GEN max_wqe_sz_sq).
pub const MAX_SQ_DESC_SZ: u32 = 1024;
/// Largest receive WQE in bytes (`max_rq_desc_sz`).
pub const MAX_RQ_DESC_SZ: u32 = 512;
/// Outstanding RDMA reads/atomics per QP (1 << log_max_ra_req_qp).
pub const MAX_QP_RD_ATOM: u32 = 16;
/// Responder resources per QP (1 << log_max_ra_res_qp).
pub const MAX_QP_INIT_RD_ATOM: u32 = 16;
/// Largest MR.
pub const MAX_MR_SIZE: u64 = u64::MAX;
/// Largest number of QPs (1 << log_max_qp).
pub const MAX_QP: u32 = 1 << 18;
/// log2 of the largest message (`cmd_hca_cap.log_max_msg`, a 5-bit field: providers/mlx5/
/// mlx5_ifc.h): 30, 1 GiB, as a ConnectX-5 reports it. mlx5_ib reports `1 << log_max_msg` as
/// the port's `max_msg_sz` (drivers/infiniband/hw/mlx5/main.c mlx5_query_hca_port and
/// mlx5_query_port_roce; mad.c mlx5_query_mad_ifc_port).
pub const LOG_MAX_MSG: u8 = 30;
/// The `SOFT_MLX5_LOG_MAX_MSG` values accepted: from one 4 KiB page (below that a single
/// MTU-sized packet would exceed it) to 31, the largest the 5-bit field and a u32
/// `max_msg_sz` hold.
pub const LOG_MAX_MSG_RANGE: std::ops::RangeInclusive<u8> = 12..=31;

/// `log_max_msg` as `SOFT_MLX5_LOG_MAX_MSG=N` sets it (N in [`LOG_MAX_MSG_RANGE`]), so that
/// tests reach the message size limit without GiB buffers; unset or empty: [`LOG_MAX_MSG`]. Another
/// value is reported on stderr and ignored. Both what the device reports (QUERY_PORT's
/// `max_msg_sz`, the HCA caps' `log_max_msg`) and what it enforces follow it.
pub fn log_max_msg_from_env() -> u8 {
    let v = match std::env::var("SOFT_MLX5_LOG_MAX_MSG") {
        Ok(v) if !v.trim().is_empty() => v,
        _ => return LOG_MAX_MSG,
    };
    parse_log_max_msg(&v).unwrap_or_else(|| {
        eprintln!(
            "soft-mlx5 (emulated): SOFT_MLX5_LOG_MAX_MSG={v} ignored: give a log2 in {}..={} (default {LOG_MAX_MSG})",
            LOG_MAX_MSG_RANGE.start(),
            LOG_MAX_MSG_RANGE.end()
        );
        LOG_MAX_MSG
    })
}

/// The most addresses a node's RoCE port may have ([`hosts`]): 10.78.x.x to 10.255.x.x.
pub const MAX_HOSTS: u32 = 178;

/// How many IP addresses (RoCE v2 GIDs, at indexes 1..=H) each node's port has on Ethernet:
/// `SOFT_MLX5_HOSTS=H` (1..=[`MAX_HOSTS`]; default 1), so that one process stands for H
/// hosts of a cluster (a DCT answers on every GID of its port, as a ConnectX's does; a
/// requester picks its source GID by index), and thousands of RoCE hosts need no process
/// each. A setting of the whole fabric, like the profile: every process of it gives the same.
/// Another value is reported on stderr and ignored.
pub fn hosts() -> u32 {
    static HOSTS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *HOSTS.get_or_init(|| match std::env::var("SOFT_MLX5_HOSTS") {
        Ok(v) if !v.trim().is_empty() => parse_hosts(&v).unwrap_or_else(|| {
            eprintln!("soft-mlx5 (emulated): SOFT_MLX5_HOSTS={v} ignored: give 1..={MAX_HOSTS} (default 1)");
            1
        }),
        _ => 1,
    })
}

/// A `SOFT_MLX5_HOSTS` value: a decimal in 1..=[`MAX_HOSTS`], else None.
pub fn parse_hosts(v: &str) -> Option<u32> {
    v.trim().parse::<u32>().ok().filter(|n| (1..=MAX_HOSTS).contains(n))
}

/// A `SOFT_MLX5_LOG_MAX_MSG` value: a decimal log2 in [`LOG_MAX_MSG_RANGE`], else None.
pub fn parse_log_max_msg(v: &str) -> Option<u8> {
    v.trim().parse::<u8>().ok().filter(|n| LOG_MAX_MSG_RANGE.contains(n))
}

const PROFILES: &[Profile] = &[
    Profile {
        name: "cx5-ib",
        model: "ConnectX-5 InfiniBand",
        pci_device: 0x1017,
        vendor_part_id: 4119,
        fw: (16, 35, 2000),
        link_layer: LinkLayer::InfiniBand,
        lid: 1,
        atomics: true,
        dci_streams: Some((4, 4)),
        qpc_extension: true,
        odp: true,
        av_qp_mapping: true,
        ooo_dp: false,
        devx: true,
    },
    Profile {
        name: "cx6dx-roce",
        model: "ConnectX-6 Dx RoCE v2",
        pci_device: 0x101d,
        vendor_part_id: 4125,
        fw: (22, 35, 2000),
        link_layer: LinkLayer::Ethernet,
        lid: 0,
        atomics: true,
        dci_streams: Some((4, 4)),
        qpc_extension: true,
        odp: true,
        av_qp_mapping: true,
        ooo_dp: false,
        devx: true,
    },
    Profile {
        name: "vf-no-atomics",
        model: "ConnectX-5 Virtual Function without atomics",
        pci_device: 0x1018,
        vendor_part_id: 4120,
        fw: (16, 35, 2000),
        link_layer: LinkLayer::InfiniBand,
        lid: 1,
        atomics: false,
        dci_streams: Some((4, 4)),
        qpc_extension: true,
        odp: false,
        av_qp_mapping: false,
        ooo_dp: false,
        devx: true,
    },
    Profile {
        name: "cx5-no-streams",
        model: "ConnectX-5 InfiniBand without DCI streams",
        pci_device: 0x1017,
        vendor_part_id: 4119,
        fw: (16, 28, 4000),
        link_layer: LinkLayer::InfiniBand,
        lid: 1,
        atomics: true,
        dci_streams: None,
        qpc_extension: false,
        odp: true,
        av_qp_mapping: false,
        ooo_dp: false,
        devx: true,
    },
    Profile {
        // ConnectX-7 firmware as current releases ship it: DCI streams, but
        // `log_max_dci_errored_streams` 0 (torchcomms's DCI-stream tests met this). A DCI can
        // then only be created with log_num_errored 0, so its first stream error takes the
        // whole DCI to ERR, and libmlx5's mlx5dv_dci_stream_id_reset answers EOPNOTSUPP
        // (providers/mlx5/mlx5.c: `!mctx->dci_streams_caps.max_log_num_errored`).
        name: "cx7-streams-no-errored",
        model: "ConnectX-7 InfiniBand with DCI streams but no errored streams",
        pci_device: 0x1021,
        vendor_part_id: 4129,
        fw: (28, 39, 1002),
        link_layer: LinkLayer::InfiniBand,
        lid: 1,
        atomics: true,
        dci_streams: Some((4, 0)),
        qpc_extension: true,
        odp: true,
        av_qp_mapping: true,
        ooo_dp: true,
        devx: true,
    },
    Profile {
        name: "cx5-no-devx",
        model: "ConnectX-5 InfiniBand without DEVX",
        pci_device: 0x1017,
        vendor_part_id: 4119,
        fw: (16, 35, 2000),
        link_layer: LinkLayer::InfiniBand,
        lid: 1,
        atomics: true,
        dci_streams: Some((4, 4)),
        qpc_extension: true,
        odp: true,
        av_qp_mapping: false,
        ooo_dp: false,
        devx: false,
    },
];

impl Profile {
    /// Every profile, default first.
    pub fn all() -> &'static [Profile] {
        PROFILES
    }

    /// The profile called `name`.
    pub fn by_name(name: &str) -> Option<&'static Profile> {
        PROFILES.iter().find(|p| p.name == name)
    }

    /// The profile `SOFT_MLX5_PROFILE` names, or the default (ConnectX-5 on InfiniBand).
    pub fn from_env() -> &'static Profile {
        std::env::var("SOFT_MLX5_PROFILE")
            .ok()
            .and_then(|n| Self::by_name(&n))
            .unwrap_or(&PROFILES[0])
    }

    /// The GID at `index` of port 1: index 0 is the link-local GID from the port GUID; on
    /// Ethernet indexes 1..=H are the IPv4-mapped RoCE v2 GIDs of the node's H addresses
    /// ([`hosts`]): 10.(77+i).hi.lo at index i, hi.lo being node+1 in 16 bits (index 1:
    /// 10.78.0.<node+1> for the first 255 nodes).
    pub fn gid(&self, node: u32, index: u32) -> Option<[u8; 16]> {
        self.gid_among(node, index, hosts())
    }

    /// [`Profile::gid`] on a fabric whose nodes have `hosts` addresses each.
    fn gid_among(&self, node: u32, index: u32, hosts: u32) -> Option<[u8; 16]> {
        let guid = NODE_GUID_BASE + u64::from(node);
        let mut gid = [0u8; 16];
        match (index, self.link_layer) {
            (0, _) => {
                gid[0] = 0xfe;
                gid[1] = 0x80;
                gid[8..].copy_from_slice(&guid.to_be_bytes());
                Some(gid)
            }
            (i, LinkLayer::Ethernet) if i <= hosts => {
                gid[10] = 0xff;
                gid[11] = 0xff;
                let [hi, lo] = ((node + 1) as u16).to_be_bytes();
                gid[12..].copy_from_slice(&[10, (77 + i) as u8, hi, lo]);
                Some(gid)
            }
            _ => None,
        }
    }

    /// The node whose port has `gid` among its GIDs (the inverse of [`Profile::gid`], computed
    /// rather than searched: resolving a message's destination costs the same however many
    /// nodes there are).
    pub fn node_of_gid(&self, gid: &[u8; 16]) -> Option<u32> {
        self.node_of_gid_among(gid, hosts())
    }

    /// [`Profile::node_of_gid`] on a fabric whose nodes have `hosts` addresses each.
    fn node_of_gid_among(&self, gid: &[u8; 16], hosts: u32) -> Option<u32> {
        let (node, index) = if gid[..2] == [0xfe, 0x80] {
            let guid = u64::from_be_bytes(gid[8..].try_into().ok()?);
            (u32::try_from(guid.checked_sub(NODE_GUID_BASE)?).ok()?, 0)
        } else if gid[..12] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] && gid[12] == 10 && gid[13] >= 78 {
            let node = u32::from(u16::from_be_bytes([gid[14], gid[15]]).checked_sub(1)?);
            (node, u32::from(gid[13]) - 77)
        } else {
            return None;
        };
        let known = node < crate::fabric::MAX_NODES && self.gid_among(node, index, hosts).as_ref() == Some(gid);
        known.then_some(node)
    }

    /// The node whose port has LID `lid` (InfiniBand; none on Ethernet, whose LIDs are 0).
    pub fn node_of_lid(&self, lid: u16) -> Option<u32> {
        let node = u32::from(lid.checked_sub(self.lid)?);
        (lid != 0 && node < crate::fabric::MAX_NODES && self.lid_of(node) == lid).then_some(node)
    }

    /// Size of port 1's GID table as mlx5 reports it (gid_tbl_len): 128 on InfiniBand, 256
    /// on RoCE; entries past [`Profile::gid_count`] are empty.
    pub fn gid_tbl_len(&self) -> u32 {
        match self.link_layer {
            LinkLayer::InfiniBand => 128,
            LinkLayer::Ethernet => 256,
        }
    }

    /// Number of GID entries port 1 has in use: the link-local one, and on Ethernet one per
    /// address of the node ([`hosts`]).
    pub fn gid_count(&self) -> u32 {
        match self.link_layer {
            LinkLayer::InfiniBand => 1,
            LinkLayer::Ethernet => 1 + hosts(),
        }
    }

    /// `fw_ver` as mlx5_ib packs it in QUERY_DEVICE.
    pub fn fw_ver(&self) -> u64 {
        (u64::from(self.fw.0) << 32) | (u64::from(self.fw.1) << 16) | u64::from(self.fw.2)
    }

    /// The LID of node `node` (InfiniBand), 0 on Ethernet.
    pub fn lid_of(&self, node: u32) -> u16 {
        match self.link_layer {
            LinkLayer::InfiniBand => self.lid + node as u16,
            LinkLayer::Ethernet => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_profile_is_connectx5_on_infiniband() {
        let p = &Profile::all()[0];
        assert_eq!(
            (p.name, p.link_layer, p.pci_device),
            ("cx5-ib", LinkLayer::InfiniBand, 0x1017)
        );
    }

    #[test]
    fn a_node_with_many_addresses_has_a_roce_gid_each_and_every_one_leads_back_to_it() {
        let p = Profile::by_name("cx6dx-roce").unwrap();
        for hosts in [1, 2, MAX_HOSTS] {
            for n in [0, 1, 255, 256, crate::fabric::MAX_NODES - 1] {
                for i in 0..=hosts {
                    let g = p.gid_among(n, i, hosts).unwrap();
                    assert_eq!(
                        p.node_of_gid_among(&g, hosts),
                        Some(n),
                        "hosts {hosts} node {n} gid {i}"
                    );
                }
                assert_eq!(p.gid_among(n, hosts + 1, hosts), None, "past the node's addresses");
            }
        }
        let g = p.gid_among(4, 3, 3).unwrap();
        assert_eq!(&g[10..], &[0xff, 0xff, 10, 80, 0, 5]);
        // An address of a host index the fabric's nodes do not have belongs to nobody.
        assert_eq!(p.node_of_gid_among(&g, 2), None);
        // InfiniBand ports have their one GID whatever the setting.
        let ib = Profile::by_name("cx5-ib").unwrap();
        assert_eq!(ib.gid_among(0, 1, 8), None);
    }

    #[test]
    fn hosts_accepts_1_to_178_and_refuses_anything_else() {
        assert_eq!(parse_hosts("1"), Some(1));
        assert_eq!(parse_hosts(" 178 "), Some(178));
        for bad in ["0", "179", "-1", "", "x", "0x10"] {
            assert_eq!(parse_hosts(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn log_max_msg_accepts_12_to_31_and_refuses_anything_else() {
        assert_eq!(parse_log_max_msg("16"), Some(16));
        assert_eq!(parse_log_max_msg(" 12 "), Some(12));
        assert_eq!(parse_log_max_msg("31"), Some(31));
        for bad in ["11", "32", "0", "-1", "", "16k", "0x10"] {
            assert_eq!(parse_log_max_msg(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn roce_profile_has_an_ipv4_mapped_gid_at_index_1() {
        let p = Profile::by_name("cx6dx-roce").unwrap();
        let g = p.gid(2, 1).unwrap();
        assert_eq!(&g[10..], &[0xff, 0xff, 10, 78, 0, 3]);
        assert!(Profile::by_name("cx5-ib").unwrap().gid(0, 1).is_none());
    }

    #[test]
    fn the_node_of_a_gid_or_lid_is_the_one_whose_port_has_it_and_no_other() {
        for p in Profile::all() {
            for n in 0..crate::fabric::MAX_NODES {
                for i in 0..p.gid_count() {
                    assert_eq!(
                        p.node_of_gid(&p.gid(n, i).unwrap()),
                        Some(n),
                        "{} node {n} gid {i}",
                        p.name
                    );
                }
                let lid = p.lid_of(n);
                assert_eq!(p.node_of_lid(lid), (lid != 0).then_some(n), "{} node {n}", p.name);
            }
            let past = crate::fabric::MAX_NODES;
            assert_eq!(p.node_of_gid(&p.gid(past, 0).unwrap()), None, "{}", p.name);
            assert_eq!(p.node_of_lid(p.lid_of(past)), None, "{}", p.name);
            assert_eq!(p.node_of_lid(0), None);
            let mut other = p.gid(3, 0).unwrap();
            other[2] = 1;
            assert_eq!(p.node_of_gid(&other), None);
            assert_eq!(p.node_of_gid(&[0; 16]), None);
        }
    }
}
