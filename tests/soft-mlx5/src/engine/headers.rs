//! The path fields a request carries in its headers (LRH/GRH on InfiniBand, the 802.1Q tag
//! and IP header on RoCE v2, BTH everywhere), the port's P_Key table and the P_Key check a
//! receiving QP makes, and the capture of what arrives (`SOFT_MLX5_CAPTURE`).
//!
//! Where the fields come from, as a ConnectX builds its headers:
//! - DC and UD: the address vector in the WQE (struct mlx5_wqe_av, written by libmlx5's
//!   mlx5_create_ah): SL from `stat_rate_sl` (the low nibble on InfiniBand, bits 1..3 on
//!   Ethernet), traffic class, hop limit and flow label from the GRH part;
//! - RC and UC: the QP's primary path, as modify-QP gave it (mlx5_ib mlx5_set_path);
//! - the BTH P_Key: the entry of the port's P_Key table at the sending QP's P_Key index.

use crate::device::objects::Path;
use crate::engine::wqe::Av;
use crate::profile::{LinkLayer, Profile};
use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// The default P_Key: full membership of the default partition.
pub const DEFAULT_PKEY: u16 = 0xffff;

/// The path fields of one request as they travel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Headers {
    /// InfiniBand: LRH.SL; RoCE: the 802.1Q priority (PCP).
    pub sl: u8,
    /// GRH traffic class (RoCE v2: the IP header's DSCP << 2 | ECN); 0 without a GRH.
    pub tclass: u8,
    /// GRH hop limit (RoCE v2: the IP TTL); 0 without a GRH.
    pub hop_limit: u8,
    /// GRH flow label (20 bits); 0 without a GRH.
    pub flow_label: u32,
    /// BTH P_Key.
    pub pkey: u16,
}

impl Headers {
    /// A DC or UD request's fields, from the WQE's address vector; the P_Key from the
    /// sending QP's index.
    pub fn of_av(profile: &Profile, av: &Av, pkey_index: u16) -> Headers {
        let ethernet = profile.link_layer == LinkLayer::Ethernet;
        // RoCE always carries the GRH (mlx5_create_ah leaves the grh bit clear there: it is
        // implied); on InfiniBand only a global path does.
        let global = ethernet || av.grh;
        Headers {
            sl: av.sl(ethernet),
            tclass: if global { av.tclass } else { 0 },
            hop_limit: if global { av.hop_limit } else { 0 },
            flow_label: if global { av.flow_label } else { 0 },
            pkey: pkey_at(profile, pkey_index).unwrap_or(DEFAULT_PKEY),
        }
    }

    /// An RC or UC request's fields, from the QP's primary path.
    pub fn of_path(profile: &Profile, path: &Path, pkey_index: u16) -> Headers {
        Headers {
            sl: path.sl,
            tclass: path.traffic_class,
            hop_limit: path.hop_limit,
            flow_label: path.flow_label,
            pkey: pkey_at(profile, pkey_index).unwrap_or(DEFAULT_PKEY),
        }
    }
}

/// Port 1's P_Key table. On Ethernet one entry, the default P_Key (mlx5_ib reports
/// `pkey_tbl_len` 1 on RoCE). On InfiniBand the table the subnet manager programmed, here
/// `SOFT_MLX5_PKEYS` (comma-separated hex, e.g. `0xffff,0x8001,0x0001`; the tool refuses one
/// that does not parse, see [`parse_pkeys`]), else the default P_Key alone.
pub fn pkey_table(profile: &Profile) -> &'static [u16] {
    static TABLE: OnceLock<Vec<u16>> = OnceLock::new();
    static ETHERNET: [u16; 1] = [DEFAULT_PKEY];
    if profile.link_layer == LinkLayer::Ethernet {
        return &ETHERNET;
    }
    TABLE.get_or_init(|| match std::env::var("SOFT_MLX5_PKEYS") {
        Ok(list) => parse_pkeys(&list).unwrap_or_else(|e| {
            crate::log(format_args!("SOFT_MLX5_PKEYS: {e}: the table is 0xffff alone"));
            vec![DEFAULT_PKEY]
        }),
        Err(_) => vec![DEFAULT_PKEY],
    })
}

/// A P_Key table as `SOFT_MLX5_PKEYS` gives it: 1 to 128 comma-separated 16-bit hex values
/// (`0x` optional), none of them an invalid P_Key (`0x0000`, `0x8000`).
pub fn parse_pkeys(text: &str) -> Result<Vec<u16>, String> {
    let table = text
        .split(',')
        .map(|p| {
            let p = p.trim();
            let hex = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")).unwrap_or(p);
            match u16::from_str_radix(hex, 16) {
                Ok(k) if k & 0x7fff != 0 => Ok(k),
                _ => Err(format!("{p:?} is not a valid P_Key (16-bit hex, base not 0)")),
            }
        })
        .collect::<Result<Vec<u16>, String>>()?;
    if table.len() > 128 {
        return Err(format!("{} P_Keys: a ConnectX port's table holds 128", table.len()));
    }
    Ok(table)
}

/// The P_Key at `index` of port 1's table, if the table has that entry.
pub fn pkey_at(profile: &Profile, index: u16) -> Option<u16> {
    pkey_table(profile).get(usize::from(index)).copied()
}

/// IBA 10.9.3 (P_Key matching): the low 15 bits equal, not both limited members (bit 15 clear),
/// and not the invalid P_Key (base 0).
pub fn pkeys_match(a: u16, b: u16) -> bool {
    a & 0x7fff == b & 0x7fff && a & 0x7fff != 0 && (a | b) & 0x8000 != 0
}

/// Appends a line for a request that reached QP or DCT `dqpn` of `node` to the file
/// `SOFT_MLX5_CAPTURE` names (nothing when unset): a packet capture's view of the path fields.
/// Each line is written whole with one `write` to a file opened for appending, so the nodes'
/// processes can share one file.
pub fn capture(node: u32, dqpn: u32, src_qpn: u32, opcode: u8, len: u64, h: &Headers, accepted: bool) {
    static FILE: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    let file = FILE.get_or_init(|| {
        let path = std::env::var_os("SOFT_MLX5_CAPTURE")?;
        match std::fs::OpenOptions::new().create(true).append(true).open(&path) {
            Ok(f) => Some(Mutex::new(f)),
            Err(e) => {
                crate::log(format_args!("SOFT_MLX5_CAPTURE {path:?}: {e}: nothing is captured"));
                None
            }
        }
    });
    let Some(file) = file else {
        return;
    };
    let line = format!(
        "node={node} dqpn={dqpn:#x} src_qpn={src_qpn:#x} opcode={opcode:#x} len={len} sl={} tclass={} hop_limit={} \
         flow_label={:#x} pkey={:#06x} {}\n",
        h.sl,
        h.tclass,
        h.hop_limit,
        h.flow_label,
        h.pkey,
        if accepted { "accepted" } else { "dropped:pkey" }
    );
    if let Ok(mut f) = file.lock() {
        // A capture that cannot be written loses its line, never the request.
        let _ = f.write_all(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkeys_match_as_iba_says_full_with_limited_but_never_two_limited_members() {
        assert!(pkeys_match(0xffff, 0xffff));
        assert!(pkeys_match(0xffff, 0x7fff));
        assert!(pkeys_match(0x8001, 0x0001));
        assert!(!pkeys_match(0x0001, 0x0001));
        assert!(!pkeys_match(0x8001, 0x8002));
        assert!(!pkeys_match(0x8000, 0x8000));
    }

    #[test]
    fn a_pkey_table_parses_from_hex_and_an_invalid_key_is_refused() {
        assert_eq!(parse_pkeys("0xffff, 8001,0x0001"), Ok(vec![0xffff, 0x8001, 0x0001]));
        assert!(parse_pkeys("0xffff,0x8000").is_err());
        assert!(parse_pkeys("0xffff,zz").is_err());
        assert!(parse_pkeys("").is_err());
    }

    #[test]
    fn the_sl_is_read_where_mlx5_create_ah_writes_it_for_each_link_layer() {
        // mlx5_create_ah: InfiniBand `static_rate << 4 | sl`, Ethernet `static_rate << 4 | (sl & 7) << 1`.
        let av = |stat_rate_sl| Av {
            stat_rate_sl,
            ..Av::default()
        };
        assert_eq!(av(0x30 | 13).sl(false), 13);
        assert_eq!(av(0x30 | (5 << 1)).sl(true), 5);
    }
}
