//! RDMA devices: the list libibverbs sees, and what each device is.

use crate::error::{Error, Result};
use mlx5dv_raw as raw;
use std::ffi::CStr;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// The devices libibverbs found, freed on drop.
///
/// On a machine without an RDMA kernel stack (no `ib_uverbs`), the list is empty rather than an
/// error: there are no devices to use, which is what the caller asked.
pub struct DeviceList {
    list: Option<NonNull<*mut raw::ibv_device>>,
    len: usize,
}

/// Lists the RDMA devices of this machine.
///
/// # Errors
/// `ibv_get_device_list` with the errno libibverbs reported, for failures other than the
/// missing kernel stack (ENOSYS), e.g. EPERM when `/dev/infiniband` cannot be read.
pub fn devices() -> Result<DeviceList> {
    let mut n: libc::c_int = 0;
    // SAFETY: n is a valid out-parameter; the returned list is owned by DeviceList.
    let list = unsafe { raw::ibv_get_device_list(&mut n) };
    match NonNull::new(list) {
        Some(list) => Ok(DeviceList {
            list: Some(list),
            len: usize::try_from(n).unwrap_or(0),
        }),
        None => {
            let err = Error::last_os_error(
                "ibv_get_device_list",
                "check that the ib_uverbs module is loaded and /dev/infiniband/uverbs* is readable",
            );
            if err.errno() == Some(libc::ENOSYS) {
                // libibverbs reports "no kernel RDMA support" as ENOSYS: that is zero devices.
                Ok(DeviceList { list: None, len: 0 })
            } else {
                Err(err)
            }
        }
    }
}

/// The environment variables [`open_device_from_env`] reads, in order: the application's
/// (`MLX5DV_DEVICE`), then the one soft-mlx5 and this crate's hardware tests set
/// (`MLX5DV_TEST_DEVICE`).
pub const DEVICE_ENV: [&str; 2] = ["MLX5DV_DEVICE", "MLX5DV_TEST_DEVICE"];

/// Opens the device named `name`, or the first mlx5 device when `name` is None: what a
/// program's `--device` flag does. (By an address of one of its ports: [`crate::open_by_ip`].)
///
/// # Errors
/// `ibv_get_device_list`'s and `ibv_open_device`'s; ENODEV (operation `mlx5dv::open_device`)
/// when no device has that name (the message lists the devices there are), or, for None,
/// when no mlx5 device is present (run on a ConnectX-5 or newer, or under soft-mlx5).
pub fn open_device(name: Option<&str>) -> Result<crate::Context> {
    let list = devices()?;
    let found = match name {
        Some(name) => list.iter().find(|d| d.name() == name),
        None => list.iter().find(Device::is_mlx5),
    };
    match found {
        Some(dev) => dev.open(),
        None => {
            let names: Vec<String> = list.iter().map(|d| d.name()).collect();
            let there = if names.is_empty() {
                "this machine has no RDMA device".to_owned()
            } else {
                format!("the devices here: {}", names.join(", "))
            };
            let why = match name {
                Some(name) => format!("no device is named {name:?}; {there}"),
                None => format!("no mlx5 device; {there}: run on a ConnectX-5 or newer, or under soft-mlx5 (emulated)"),
            };
            Err(Error::from_errno("mlx5dv::open_device", libc::ENODEV, why))
        }
    }
}

/// Opens the device the environment names ([`DEVICE_ENV`]: the first set and not empty), or
/// the first mlx5 device when none does, as [`open_device`].
///
/// # Errors
/// As [`open_device`].
pub fn open_device_from_env() -> Result<crate::Context> {
    let named = DEVICE_ENV
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.is_empty());
    open_device(named.as_deref())
}

impl DeviceList {
    /// Number of devices.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no device was found.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The devices, in libibverbs' order.
    pub fn iter(&self) -> impl Iterator<Item = Device<'_>> + '_ {
        (0..self.len).filter_map(move |i| {
            let list = self.list?;
            // SAFETY: the list holds `len` valid entries (NULL-terminated after them).
            let dev = unsafe { *list.as_ptr().add(i) };
            NonNull::new(dev).map(|dev| Device {
                dev,
                _list: PhantomData,
            })
        })
    }
}

// SAFETY: the list is an immutable array of device pointers owned by this value; libibverbs
// allows reading and freeing it from any thread.
unsafe impl Send for DeviceList {}
// SAFETY: as above: only read through &self.
unsafe impl Sync for DeviceList {}

// SAFETY: a device entry is immutable library data, valid while its list is (the borrow).
unsafe impl Send for Device<'_> {}
// SAFETY: as above.
unsafe impl Sync for Device<'_> {}

impl Drop for DeviceList {
    fn drop(&mut self) {
        if let Some(list) = self.list {
            // SAFETY: the list came from ibv_get_device_list and is freed once.
            unsafe { raw::ibv_free_device_list(list.as_ptr()) };
        }
    }
}

impl std::fmt::Debug for DeviceList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// One device of a [`DeviceList`]; valid while the list is.
#[derive(Clone, Copy)]
pub struct Device<'list> {
    dev: NonNull<raw::ibv_device>,
    _list: PhantomData<&'list DeviceList>,
}

impl Device<'_> {
    /// Kernel name, e.g. `mlx5_0` or `rxe0`.
    pub fn name(&self) -> String {
        // SAFETY: the device is live while the list is; the name is NUL-terminated.
        let name = unsafe { raw::ibv_get_device_name(self.dev.as_ptr()) };
        if name.is_null() {
            return String::new();
        }
        // SAFETY: non-NULL, NUL-terminated, owned by the library.
        unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
    }

    /// Node GUID in host byte order.
    pub fn guid(&self) -> u64 {
        // SAFETY: the device is live while the list is.
        u64::from_be(unsafe { raw::ibv_get_device_guid(self.dev.as_ptr()) })
    }

    /// Node type (`IBV_NODE_*`).
    pub fn node_type(&self) -> raw::ibv_node_type {
        // SAFETY: the device is live while the list is.
        unsafe { (*self.dev.as_ptr()).node_type }
    }

    /// Whether the mlx5 provider drives this device (`mlx5dv_is_supported`): the precondition
    /// for DC. A `true` here still needs a DCT probe to prove DC works.
    pub fn is_mlx5(&self) -> bool {
        // SAFETY: the device is live while the list is.
        unsafe { raw::mlx5dv_is_supported(self.dev.as_ptr()) }
    }

    /// Opens the device.
    ///
    /// # Errors
    /// See [`crate::Context::open`].
    pub fn open(&self) -> Result<crate::Context> {
        crate::Context::open(self)
    }

    /// The raw device, for interop.
    pub fn as_raw(&self) -> *mut raw::ibv_device {
        self.dev.as_ptr()
    }
}

impl std::fmt::Debug for Device<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("name", &self.name())
            .field("guid", &format_args!("{:016x}", self.guid()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opening_a_device_no_one_has_is_enodev_naming_it_and_the_devices_there_are() {
        let Err(e) = open_device(Some("no-such-device")) else {
            panic!("a device named no-such-device was opened")
        };
        assert_eq!(e.errno(), Some(libc::ENODEV));
        let text = e.to_string();
        assert!(
            text.contains("\"no-such-device\"") && text.contains("mlx5dv::open_device"),
            "{text}"
        );
        let names: Vec<String> = devices().unwrap().iter().map(|d| d.name()).collect();
        if names.is_empty() {
            assert!(text.contains("no RDMA device"), "{text}");
        } else {
            assert!(
                names.iter().all(|n| text.contains(n.as_str())),
                "{text} lists {names:?}"
            );
        }
        // Without an mlx5 device (here, or rxe in the guest), the first mlx5 device is none.
        if !devices().unwrap().iter().any(|d| d.is_mlx5()) {
            let Err(e) = open_device(None) else {
                panic!("an mlx5 device was opened where none is listed")
            };
            assert_eq!(e.errno(), Some(libc::ENODEV));
            assert!(e.to_string().contains("soft-mlx5"), "{e}");
        }
    }

    #[test]
    fn listing_devices_succeeds_and_is_empty_without_a_kernel_rdma_stack() {
        let list = devices().expect("listing devices must not fail on a machine without RDMA");
        let kernel_has_verbs = std::path::Path::new("/sys/class/infiniband_verbs").exists();
        if !kernel_has_verbs {
            assert!(
                list.is_empty(),
                "no uverbs in the kernel, yet devices were listed: {list:?}"
            );
            assert_eq!(list.iter().count(), 0);
        } else {
            assert_eq!(list.iter().count(), list.len());
        }
    }
}
