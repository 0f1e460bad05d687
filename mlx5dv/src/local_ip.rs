//! The local RDMA device, port and GID that an IP address of this machine names, the way a
//! deployment configures S3 over RDMA (cuObject's `rdma_dev_addr_list`, libs3rdma's
//! `server_init(ip)`) and the way the kernel's connection manager binds an address
//! (`rdma_bind_addr` -> `cma_acquire_dev_by_src_ip`):
//!
//! - on RoCE the address is in the port's GID table: a RoCE v2 entry holds the IPv4-mapped
//!   (`::ffff:a.b.c.d`) or IPv6 address of the netdev it was made for;
//! - on InfiniBand the address belongs to an IPoIB interface, whose 20-byte hardware address
//!   ends with the port GID it runs on (`/sys/class/net/<if>/address`).

use crate::context::Context;
use crate::device::devices;
use crate::error::{Error, Result};
use std::net::IpAddr;

/// What [`open_by_ip`] found: the device's context, the port, and the GID index to send from
/// (None on InfiniBand, where LIDs route: the form [`crate::s3::ExecutorConfig::gid_index`]
/// and [`crate::DctBuilder::gid_index`] take).
#[derive(Debug)]
pub struct LocalPort {
    /// The device, opened.
    pub context: Context,
    /// The port the address is on.
    pub port: u8,
    /// RoCE: the index of the address's RoCE v2 GID. InfiniBand: None.
    pub gid_index: Option<u8>,
}

/// The GID an IP address has in a RoCE GID table: IPv4 mapped into IPv6 (`::ffff:a.b.c.d`),
/// an IPv6 address as it is.
pub fn roce_gid_of(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// Opens the RDMA device whose port carries the IP address `ip` of this machine.
///
/// RoCE: the port whose GID table has `ip` as a RoCE v2 entry. InfiniBand: the port whose GID
/// the IPoIB interface holding `ip` runs on.
///
/// # Errors
/// `ibv_get_device_list`'s, `ibv_open_device`'s and `ibv_query_device`'s; ENODEV (operation `mlx5dv::open_by_ip`)
/// when no port of any device answers to `ip`: the message names the address and says where
/// it was looked for.
pub fn open_by_ip(ip: IpAddr) -> Result<LocalPort> {
    let list = devices()?;
    let ipoib_gid = ipoib_gid_of(ip);
    for dev in list.iter() {
        let context = dev.open()?;
        let ports = context.query_device()?.phys_port_cnt();
        for port in 1..=ports {
            let Ok(attr) = context.query_port(port) else {
                continue;
            };
            // RoCE: Some(its GID index); InfiniBand: None (LIDs route).
            let found: Option<Option<u8>> = if attr.is_ethernet() {
                context.gid_index_of(port, &roce_gid_of(ip), true)?.map(Some)
            } else {
                match &ipoib_gid {
                    Some(gid) => context.gid_index_of(port, gid, false)?.map(|_| None),
                    None => None,
                }
            };
            if let Some(gid_index) = found {
                return Ok(LocalPort {
                    context,
                    port,
                    gid_index,
                });
            }
        }
    }
    Err(Error::from_errno(
        "mlx5dv::open_by_ip",
        libc::ENODEV,
        format!(
            "no RDMA port answers to {ip}: on RoCE the address must be on the netdev of an RDMA port (a RoCE v2 \
             GID, see show_gids); on InfiniBand on an IPoIB interface (ip addr show). {} device(s) looked at",
            list.len()
        ),
    ))
}

/// The port GID of the IPoIB interface holding `ip`, if one does.
fn ipoib_gid_of(ip: IpAddr) -> Option<[u8; 16]> {
    let name = interface_of(ip)?;
    let net = std::path::Path::new("/sys/class/net").join(name);
    // ARPHRD_INFINIBAND.
    if std::fs::read_to_string(net.join("type")).ok()?.trim() != "32" {
        return None;
    }
    ipoib_hw_gid(&std::fs::read_to_string(net.join("address")).ok()?)
}

/// The GID in an IPoIB hardware address as sysfs prints it: 20 bytes in hex separated by
/// colons, the first 4 the flags and QP number, the last 16 the port GID.
pub(crate) fn ipoib_hw_gid(text: &str) -> Option<[u8; 16]> {
    let bytes: Vec<u8> = text
        .trim()
        .split(':')
        .map(|b| u8::from_str_radix(b, 16))
        .collect::<std::result::Result<_, _>>()
        .ok()?;
    if bytes.len() != 20 {
        return None;
    }
    bytes[4..].try_into().ok()
}

/// The name of the interface that has address `ip` (getifaddrs).
fn interface_of(ip: IpAddr) -> Option<String> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: head is a valid out-parameter; the list is freed below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return None;
    }
    let mut found = None;
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: cur is an entry of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        if ifa.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: ifa_addr points at a sockaddr whose family says its size.
        let addr = unsafe { sockaddr_ip(ifa.ifa_addr) };
        if addr == Some(ip) {
            // SAFETY: ifa_name is a NUL-terminated string of the list.
            found = Some(
                unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) }
                    .to_string_lossy()
                    .into_owned(),
            );
            break;
        }
    }
    // SAFETY: frees the list getifaddrs returned, once.
    unsafe { libc::freeifaddrs(head) };
    found
}

/// The IP address of an AF_INET or AF_INET6 sockaddr.
///
/// # Safety
/// `sa` points at a sockaddr at least as large as its family's.
unsafe fn sockaddr_ip(sa: *const libc::sockaddr) -> Option<IpAddr> {
    // SAFETY: the caller's contract: a readable sockaddr.
    match i32::from(unsafe { (*sa).sa_family }) {
        libc::AF_INET => {
            // SAFETY: the family says it is a sockaddr_in.
            let sin = unsafe { &*sa.cast::<libc::sockaddr_in>() };
            Some(IpAddr::from(u32::from_be(sin.sin_addr.s_addr).to_be_bytes()))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says it is a sockaddr_in6.
            let sin6 = unsafe { &*sa.cast::<libc::sockaddr_in6>() };
            Some(IpAddr::from(sin6.sin6_addr.s6_addr))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv4_address_is_looked_for_as_its_ipv4_mapped_gid() {
        let gid = roce_gid_of("10.78.0.2".parse().unwrap());
        assert_eq!(gid, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 78, 0, 2]);
        let v6: IpAddr = "fe80::1".parse().unwrap();
        assert_eq!(roce_gid_of(v6)[0..2], [0xfe, 0x80]);
    }

    #[test]
    fn an_ipoib_hardware_address_gives_the_port_gid_of_its_last_16_bytes() {
        let text = "00:00:10:49:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c\n";
        let gid = ipoib_hw_gid(text).unwrap();
        assert_eq!(gid[..2], [0xfe, 0x80]);
        assert_eq!(gid[15], 0x0c);
        assert_eq!(
            ipoib_hw_gid("00:11:22:33:44:55"),
            None,
            "an Ethernet address is not one"
        );
        assert_eq!(ipoib_hw_gid("zz:00"), None);
    }

    #[test]
    fn the_loopback_address_is_found_on_lo() {
        assert_eq!(interface_of("127.0.0.1".parse().unwrap()).as_deref(), Some("lo"));
    }
}
