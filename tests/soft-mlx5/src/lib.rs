//! soft-mlx5 (emulated): a model of the mlx5_ib kernel driver's user ABI and of the ConnectX
//! data path, for running the real, unmodified libibverbs and libmlx5 without a ConnectX.
//!
//! - [`uapi`]: the kernel's user-ABI structs (`/usr/include/rdma`), hand-written.
//! - [`kernel`]: the uverbs write() commands and RDMA_VERBS_IOCTL methods as mlx5_ib answers
//!   them, with the checks that decide outcomes.
//! - [`device`]: the objects the HCA keeps; [`engine`]: the data path (requester, responder,
//!   completer) over WQE and CQE formats.
//! - [`sysfs`]: the sysfs tree libibverbs discovers the device through; [`profile`]: which
//!   ConnectX is emulated.
//! - [`fabric`]: the wire between devices of different processes (several processes on one
//!   emulated node, several nodes on one machine).
//! - [`netlink`]: the RDMA netlink (nldev) answers for the device, as `rdma` and libibverbs'
//!   netlink discovery ask them.
//!
//! It never poses as hardware: its node description, board id and every log line say
//! "soft-mlx5 (emulated)".
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod device;
pub mod engine;
pub mod fabric;
pub mod fdset;
pub mod kernel;
pub mod mem;
pub mod netlink;
pub mod profile;
pub mod sysfs;
pub mod uapi;

/// Writes a log line (prefixed "soft-mlx5 (emulated)") to stderr when `SOFT_MLX5_LOG` is set.
pub fn log(args: std::fmt::Arguments<'_>) {
    if std::env::var_os("SOFT_MLX5_LOG").is_some() {
        eprintln!("soft-mlx5 (emulated): {args}");
    }
}
