//! How the data path's packets travel: the service level, traffic class, hop limit, flow
//! label and partition a deployment gives its RDMA traffic (docs/s3-over-rdma.md, "Path
//! settings", says what to set on RoCE and on InfiniBand).

use crate::addr::DcTargetAddr;
use crate::ah::PeerPath;
use crate::error::{Error, Result};

/// The path fields of the executor's requests ([`super::ExecutorConfig::path`]) or of a
/// client DCT's answers ([`super::ClientConfig::path`]).
///
/// - InfiniBand: `sl` is the service level the subnet manager maps to a virtual lane; the GRH
///   fields are unused (LIDs route within a subnet); `pkey_index` picks the partition.
/// - RoCE v2: `sl` is the 802.1Q priority (0..=7: the lossless one where PFC is on, when the
///   switches trust PCP); `traffic_class` is the IP header's DSCP (bits 7..2) and ECN (bits
///   1..0): the lossless class where the switches trust DSCP, e.g. 106 for DSCP 26 with ECN
///   capable transport; `hop_limit` is the IP TTL; `flow_label` (IPv6 flow label, and the
///   source of libmlx5's UDP source port) spreads flows over ECMP paths.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PathSettings {
    /// Service level: 0..=15 on InfiniBand, 0..=7 (the priority) on RoCE.
    pub sl: u8,
    /// GRH traffic class (RoCE v2: DSCP << 2 | ECN).
    pub traffic_class: u8,
    /// GRH hop limit (RoCE v2: the IP TTL), at least 1.
    pub hop_limit: u8,
    /// GRH flow label, 20 bits.
    pub flow_label: u32,
    /// Index in the port's P_Key table of the partition the DCIs or the DCT are in.
    pub pkey_index: u16,
}

impl Default for PathSettings {
    /// SL 0, traffic class 0, hop limit 64, flow label 0, P_Key index 0 (the default
    /// partition).
    fn default() -> Self {
        PathSettings {
            sl: 0,
            traffic_class: 0,
            hop_limit: 64,
            flow_label: 0,
            pkey_index: 0,
        }
    }
}

impl PathSettings {
    /// Checks the settings for a port of the given link layer, naming `op` in the error.
    ///
    /// # Errors
    /// EINVAL for an SL above 15 (above 7 on RoCE, where it is a 3-bit priority: libmlx5
    /// would keep its low 3 bits silently), a flow label wider than 20 bits, a hop limit of 0
    /// (the first router drops the packet).
    pub(crate) fn check(&self, ethernet: bool, op: &'static str) -> Result<()> {
        let max_sl = if ethernet { 7 } else { 15 };
        if self.sl > max_sl {
            return Err(Error::from_errno(
                op,
                libc::EINVAL,
                format!(
                    "service level {} is out of range on {}: give 0..={max_sl}{}",
                    self.sl,
                    if ethernet { "RoCE" } else { "InfiniBand" },
                    if ethernet { " (the 802.1Q priority)" } else { "" }
                ),
            ));
        }
        if self.flow_label > 0xf_ffff {
            return Err(Error::from_errno(
                op,
                libc::EINVAL,
                format!("flow label {:#x} is wider than 20 bits", self.flow_label),
            ));
        }
        if self.hop_limit == 0 {
            return Err(Error::from_errno(
                op,
                libc::EINVAL,
                "a hop limit of 0 is dropped by the first router: give at least 1 (64 is usual)",
            ));
        }
        Ok(())
    }

    /// The path to a client's DCT with these settings: by GID from `sgid_index` on RoCE, by
    /// LID on InfiniBand.
    pub(crate) fn path_to(&self, target: &DcTargetAddr, sgid_index: Option<u8>) -> PeerPath {
        match PeerPath::to_dc_target(target, sgid_index).with_sl(self.sl) {
            PeerPath::Gid {
                sl, gid, sgid_index, ..
            } => PeerPath::Gid {
                sl,
                gid,
                sgid_index,
                hop_limit: self.hop_limit,
                traffic_class: self.traffic_class,
                flow_label: self.flow_label,
            },
            lid => lid,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_out_of_range_for_the_link_layer_are_refused_with_einval() {
        let ok = PathSettings {
            sl: 7,
            traffic_class: 106,
            flow_label: 0xf_ffff,
            ..PathSettings::default()
        };
        assert!(ok.check(true, "t").is_ok());
        let sl8 = PathSettings { sl: 8, ..ok };
        assert!(sl8.check(false, "t").is_ok(), "SL 8 is an InfiniBand SL");
        let e = sl8.check(true, "t").unwrap_err();
        assert_eq!(e.errno(), Some(libc::EINVAL));
        assert!(e.to_string().contains("0..=7"), "{e}");
        assert!(PathSettings { sl: 16, ..ok }.check(false, "t").is_err());
        assert!(PathSettings {
            flow_label: 1 << 20,
            ..ok
        }
        .check(false, "t")
        .is_err());
        assert!(PathSettings { hop_limit: 0, ..ok }.check(true, "t").is_err());
    }

    #[test]
    fn a_roce_path_carries_every_setting_and_an_infiniband_one_its_sl() {
        let s = PathSettings {
            sl: 3,
            traffic_class: 106,
            hop_limit: 9,
            flow_label: 0x12345,
            pkey_index: 0,
        };
        let target = DcTargetAddr {
            lid: 7,
            gid: [1; 16],
            dct_number: 0x100,
            port_mtu: crate::Mtu::Mtu4096,
            out_of_order: false,
        };
        let attr = s.path_to(&target, Some(3)).ah_attr(1);
        assert_eq!(
            (
                attr.sl,
                attr.grh.traffic_class,
                attr.grh.hop_limit,
                attr.grh.flow_label,
                attr.grh.sgid_index
            ),
            (3, 106, 9, 0x12345, 3)
        );
        let attr = s.path_to(&target, None).ah_attr(1);
        assert_eq!((attr.sl, attr.dlid, attr.is_global), (3, 7, 0));
    }
}
