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
