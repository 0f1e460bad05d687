//! An open device ([`Context`]) and its port attributes.

use crate::device::Device;
use crate::error::{Error, Result};
use mlx5dv_raw as raw;
use std::ffi::CStr;
use std::ptr::NonNull;
use std::sync::Arc;

/// An open RDMA device. A cheap handle: clones share one open device, and every object made
/// from it holds a clone, so the device is closed when the last of them is dropped.
#[derive(Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    ctx: NonNull<raw::ibv_context>,
    name: Box<str>,
    /// Unit tests' contexts have no library object to close.
    #[cfg(test)]
    fake: bool,
}

// SAFETY: libibverbs contexts may be used from any thread; creation and destruction of
// objects on them are serialised by the library.
unsafe impl Send for ContextInner {}
// SAFETY: as above; every method takes &self and calls thread-safe verbs.
unsafe impl Sync for ContextInner {}

impl Context {
    /// Opens `device`.
    ///
    /// # Errors
    /// `ibv_open_device` with the library's errno: EPERM/EACCES when `/dev/infiniband/uverbs*`
    /// is not accessible, ENOMEM, or ENODEV when the device went away.
    pub fn open(device: &Device<'_>) -> Result<Context> {
        // SAFETY: the device pointer is valid while its list is; the context outlives the list.
        let ctx = unsafe { raw::ibv_open_device(device.as_raw()) };
        NonNull::new(ctx)
            .map(|ctx| Context {
                inner: Arc::new(ContextInner {
                    ctx,
                    name: device.name().into(),
                    #[cfg(test)]
                    fake: false,
                }),
            })
            .ok_or_else(|| Error::last_os_error("ibv_open_device", "check permissions on /dev/infiniband/uverbs* and that the provider library is installed (ibverbs-providers)"))
    }

    /// The device's kernel name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Device attributes (`ibv_query_device`).
    ///
    /// # Errors
    /// `ibv_query_device` with the errno it returned.
    pub fn query_device(&self) -> Result<DeviceAttr> {
        // SAFETY: all-zero is a valid ibv_device_attr (integers and a char array).
        let mut attr: raw::ibv_device_attr = unsafe { std::mem::zeroed() };
        // SAFETY: the context is open; attr is writable and of the header's size or larger.
        let rc = unsafe { raw::ibv_query_device(self.as_raw(), &mut attr) };
        if rc != 0 {
            return Err(Error::command(
                "ibv_query_device",
                rc,
                "the device may have been removed; reopen it",
            ));
        }
        Ok(DeviceAttr(attr))
    }

    /// Port attributes, through the inline `ibv_query_port` (full struct, not the compat one).
    ///
    /// # Errors
    /// `ibv_query_port` with its errno; EINVAL for a port number the device does not have
    /// (ports are numbered from 1).
    pub fn query_port(&self, port: u8) -> Result<PortAttr> {
        let mut attr = raw::ibv_port_attr::default();
        // SAFETY: the context is open; attr is at least as large as the shim's header struct.
        let rc = unsafe { raw::ibv_query_port(self.as_raw(), port, &mut attr) };
        if rc != 0 {
            return Err(Error::from_errno(
                "ibv_query_port",
                rc,
                "ports are numbered from 1 to the device's phys_port_cnt",
            )
            .on(self.name()));
        }
        Ok(PortAttr(attr))
    }

    /// GID table entry `index` of `port` (16 bytes, network order).
    ///
    /// # Errors
    /// `ibv_query_gid` with its errno (EINVAL for an index beyond the table); ENODATA for an
    /// empty entry (which libibverbs itself reports as an all-zero GID).
    pub fn query_gid(&self, port: u8, index: u8) -> Result<[u8; 16]> {
        let mut gid = raw::ibv_gid::default();
        // SAFETY: the context is open; gid is writable.
        let rc = unsafe { raw::ibv_query_gid(self.as_raw(), port, libc::c_int::from(index), &mut gid) };
        if rc != 0 {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(rc.abs());
            return Err(Error::from_errno(
                "ibv_query_gid",
                errno,
                "the GID index must be below the port's gid_tbl_len",
            )
            .on(self.name()));
        }
        // SAFETY: every bit pattern of the union is a valid [u8; 16].
        let raw_gid = unsafe { gid.raw };
        if raw_gid == [0; 16] {
            // libibverbs reports an empty table entry as success with a zero GID.
            return Err(Error::from_errno(
                "ibv_query_gid",
                libc::ENODATA,
                format!("GID index {index} of port {port} is empty: pick a populated index (ibv_devinfo -v)"),
            )
            .on(self.name()));
        }
        Ok(raw_gid)
    }

    /// The GID index a RoCE v2 DC target or initiator on `port` should use: the first
    /// populated RoCE v2 entry of the port's GID table, preferring an IPv4-mapped GID (routable
    /// between subnets) over an IPv6 link-local one. `None` on an InfiniBand port, which needs
    /// no GID index, so the result goes straight into
    /// [`DctBuilder::gid_index`](crate::DctBuilder::gid_index) on either link layer.
    ///
    /// Reads the GID types from sysfs as libibverbs does
    /// (`<ibdev_path>/ports/<port>/gid_attrs/types/<index>`; `ibdev_path` honours
    /// `SYSFS_PATH`), so it works with every rdma-core version.
    ///
    /// # Errors
    /// `ibv_query_port` with its errno for a port the device does not have; ENODATA (operation
    /// `Context::roce_v2_gid_index`) when the port is Ethernet but no RoCE v2 GID is populated:
    /// give the network interface an IP address, or choose the index by hand (`show_gids`).
    pub fn roce_v2_gid_index(&self, port: u8) -> Result<Option<u8>> {
        let attr = self.query_port(port)?;
        if !attr.is_ethernet() {
            return Ok(None);
        }
        let ports = self.port_sysfs(port);
        let len = u8::try_from(attr.0.gid_tbl_len.max(0)).unwrap_or(u8::MAX);
        pick_roce_v2_gid(&ports, len)
            .ok_or_else(|| {
                Error::from_errno(
                    "Context::roce_v2_gid_index",
                    libc::ENODATA,
                    format!(
                        "port {port} is Ethernet but none of its {len} GIDs is a populated RoCE v2 entry in {}: \
                     give its network interface an IP address, or pick a GID index by hand (show_gids)",
                        ports.display()
                    ),
                )
                .on(self.name())
            })
            .map(Some)
    }

    /// The index of `gid` in `port`'s GID table, if it is there; with `roce_v2`, only an entry
    /// of type RoCE v2 counts (its type read from sysfs as in [`Context::roce_v2_gid_index`]).
    ///
    /// # Errors
    /// `ibv_query_port` with its errno for a port the device does not have.
    pub fn gid_index_of(&self, port: u8, gid: &[u8; 16], roce_v2: bool) -> Result<Option<u8>> {
        let attr = self.query_port(port)?;
        let len = u8::try_from(attr.0.gid_tbl_len.max(0)).unwrap_or(u8::MAX);
        let types = self.port_sysfs(port).join("gid_attrs/types");
        Ok((0..len).find(|&i| {
            // An empty or unreadable entry is not the GID.
            self.query_gid(port, i).is_ok_and(|g| &g == gid)
                && (!roce_v2 || std::fs::read_to_string(types.join(i.to_string())).is_ok_and(|t| t.trim() == "RoCE v2"))
        }))
    }

    /// `port`'s sysfs directory as libibverbs reads it: `<ibdev_path>/ports/<port>`
    /// (`ibdev_path` honours `SYSFS_PATH`).
    fn port_sysfs(&self, port: u8) -> std::path::PathBuf {
        // SAFETY: the context is open; its device pointer and the device's path are set by
        // libibverbs at open and live as long as the context.
        let ibdev_path = unsafe { CStr::from_ptr((*(*self.as_raw()).device).ibdev_path.as_ptr()) };
        std::path::Path::new(&*ibdev_path.to_string_lossy())
            .join("ports")
            .join(port.to_string())
    }

    /// Whether the device pages in any address on demand with one registration
    /// (`IBV_ODP_SUPPORT_IMPLICIT` in `ibv_query_device_ex`'s ODP caps).
    ///
    /// # Errors
    /// `ibv_query_device_ex` with its errno.
    pub fn has_implicit_odp(&self) -> Result<bool> {
        // SAFETY: all-zero is a valid ibv_device_attr_ex (integers and arrays).
        let mut attr: raw::ibv_device_attr_ex = unsafe { std::mem::zeroed() };
        // SAFETY: the context is open; attr is writable and at least the header's size.
        let rc = unsafe { raw::ibv_query_device_ex(self.as_raw(), std::ptr::null(), &mut attr) };
        if rc != 0 {
            return Err(Error::command("ibv_query_device_ex", rc, "the device may have been removed").on(self.name()));
        }
        let odp = attr.odp_caps.general_caps;
        Ok(odp & u64::from(raw::IBV_ODP_SUPPORT) != 0 && odp & u64::from(raw::IBV_ODP_SUPPORT_IMPLICIT) != 0)
    }

    /// The raw context, for interop.
    #[inline]
    pub fn as_raw(&self) -> *mut raw::ibv_context {
        self.inner.ctx.as_ptr()
    }
}

#[cfg(test)]
impl Context {
    /// A context over a fake `ibv_context` pointer for unit tests of code that only names it;
    /// never dropped (nothing may close it).
    pub(crate) fn fake(name: &str) -> Context {
        Context {
            inner: Arc::new(ContextInner {
                ctx: NonNull::dangling(),
                name: name.into(),
                fake: true,
            }),
        }
    }
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        #[cfg(test)]
        if self.fake {
            return;
        }
        // SAFETY: opened by ibv_open_device and closed once, when the last handle (every
        // object made from the context holds one) is gone.
        unsafe { raw::ibv_close_device(self.ctx.as_ptr()) };
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}

/// Device attributes.
#[derive(Clone, Copy, Debug)]
pub struct DeviceAttr(pub raw::ibv_device_attr);

impl DeviceAttr {
    /// Firmware version.
    pub fn fw_ver(&self) -> String {
        let bytes: Vec<u8> = self
            .0
            .fw_ver
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Number of physical ports.
    pub fn phys_port_cnt(&self) -> u8 {
        self.0.phys_port_cnt
    }
}

/// Port attributes.
#[derive(Clone, Copy, Debug)]
pub struct PortAttr(pub raw::ibv_port_attr);

impl PortAttr {
    /// State name as libibverbs spells it (`active`, `down`, ...).
    pub fn state_str(&self) -> String {
        // SAFETY: returns a static string for any value.
        let s = unsafe { raw::ibv_port_state_str(self.0.state) };
        if s.is_null() {
            return format!("state {}", self.0.state);
        }
        // SAFETY: non-NULL static NUL-terminated string.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    }

    /// Link layer: "InfiniBand" or "Ethernet" (RoCE).
    pub fn link_layer_str(&self) -> &'static str {
        match self.0.link_layer {
            raw::IBV_LINK_LAYER_ETHERNET => "Ethernet",
            raw::IBV_LINK_LAYER_INFINIBAND | raw::IBV_LINK_LAYER_UNSPECIFIED => "InfiniBand",
            _ => "unknown",
        }
    }

    /// Base LID (InfiniBand; 0 on RoCE).
    pub fn lid(&self) -> u16 {
        self.0.lid
    }

    /// Whether the link layer is Ethernet (RoCE: peers are addressed by GID).
    pub fn is_ethernet(&self) -> bool {
        self.0.link_layer == raw::IBV_LINK_LAYER_ETHERNET
    }

    /// Active MTU in bytes.
    pub fn active_mtu_bytes(&self) -> u32 {
        mtu_bytes(self.0.active_mtu)
    }
}

/// Bytes of an `IBV_MTU_*` value (0 for an unknown one).
pub fn mtu_bytes(mtu: raw::ibv_mtu) -> u32 {
    match mtu {
        raw::IBV_MTU_256..=raw::IBV_MTU_4096 => 128 << mtu,
        _ => 0,
    }
}

/// The first RoCE v2 entry of a port's GID table under `ports` (sysfs `.../ports/<port>`),
/// an IPv4-mapped one first. Entries whose type cannot be read (empty ones) or whose GID is
/// zero are skipped.
fn pick_roce_v2_gid(ports: &std::path::Path, len: u8) -> Option<u8> {
    let mut first = None;
    for i in 0..len {
        let Ok(ty) = std::fs::read_to_string(ports.join("gid_attrs/types").join(i.to_string())) else {
            continue;
        };
        if ty.trim() != "RoCE v2" {
            continue;
        }
        let gid = std::fs::read_to_string(ports.join("gids").join(i.to_string())).unwrap_or_default();
        let gid = gid.trim();
        if gid.is_empty() || gid.chars().all(|c| c == '0' || c == ':') {
            continue;
        }
        if gid.starts_with("0000:0000:0000:0000:0000:ffff:") {
            return Some(i);
        }
        first.get_or_insert(i);
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mtu_enum_maps_to_bytes_and_unknown_values_to_zero() {
        assert_eq!(mtu_bytes(raw::IBV_MTU_256), 256);
        assert_eq!(mtu_bytes(raw::IBV_MTU_1024), 1024);
        assert_eq!(mtu_bytes(raw::IBV_MTU_4096), 4096);
        assert_eq!(mtu_bytes(0), 0);
        assert_eq!(mtu_bytes(6), 0);
    }

    fn gid_table(entries: &[(&str, &str)]) -> std::path::PathBuf {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mlx5dv-gids-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(dir.join("gid_attrs/types")).unwrap();
        std::fs::create_dir_all(dir.join("gids")).unwrap();
        for (i, (ty, gid)) in entries.iter().enumerate() {
            std::fs::write(dir.join("gids").join(i.to_string()), format!("{gid}\n")).unwrap();
            if !ty.is_empty() {
                std::fs::write(dir.join("gid_attrs/types").join(i.to_string()), format!("{ty}\n")).unwrap();
            }
        }
        dir
    }

    const LINK_LOCAL: &str = "fe80:0000:0000:0000:0000:00ff:fe00:0001";
    const V4_MAPPED: &str = "0000:0000:0000:0000:0000:ffff:0a00:0001";
    const ZERO: &str = "0000:0000:0000:0000:0000:0000:0000:0000";

    #[test]
    fn roce_v2_gid_is_the_first_v2_entry_skipping_v1_and_empty_ones() {
        let dir = gid_table(&[("IB/RoCE v1", LINK_LOCAL), ("", ZERO), ("RoCE v2", LINK_LOCAL)]);
        assert_eq!(pick_roce_v2_gid(&dir, 3), Some(2));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn roce_v2_gid_prefers_an_ipv4_mapped_entry_over_link_local() {
        let dir = gid_table(&[
            ("IB/RoCE v1", LINK_LOCAL),
            ("RoCE v2", LINK_LOCAL),
            ("IB/RoCE v1", V4_MAPPED),
            ("RoCE v2", V4_MAPPED),
        ]);
        assert_eq!(pick_roce_v2_gid(&dir, 4), Some(3));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn roce_v2_gid_is_none_without_a_populated_v2_entry() {
        let dir = gid_table(&[("IB/RoCE v1", LINK_LOCAL), ("RoCE v2", ZERO)]);
        assert_eq!(pick_roce_v2_gid(&dir, 2), None);
        assert_eq!(pick_roce_v2_gid(&dir.join("missing"), 2), None);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
