//! RDMA_VERBS_IOCTL: the ioctl framework's method dispatch (uverbs_ioctl.c).
//!
//! A method the device does not implement answers EPROTONOSUPPORT, which libibverbs takes as
//! "framework present, this method absent" and falls back to the write() command where one
//! exists (libibverbs/cmd_fallback.c `_execute_ioctl_fallback`).

use crate::uapi::ioctl::ib_uverbs_ioctl_hdr;
use crate::uapi::read_struct;

/// Handles one RDMA_VERBS_IOCTL on a device fd; Err(errno).
pub fn handle(_fd: i32, hdr_addr: u64) -> Result<(), i32> {
    let mut head = [0u8; 24];
    // SAFETY: the library passes a pointer to a struct ib_uverbs_ioctl_hdr (24 bytes fixed).
    unsafe { std::ptr::copy_nonoverlapping(hdr_addr as usize as *const u8, head.as_mut_ptr(), head.len()) };
    let hdr: ib_uverbs_ioctl_hdr = read_struct(&head);
    crate::log(format_args!(
        "ioctl object {:#x} method {:#x}: not implemented here",
        hdr.object_id, hdr.method_id
    ));
    Err(libc::EPROTONOSUPPORT)
}
