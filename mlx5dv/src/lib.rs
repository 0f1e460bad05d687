//! Safe Rust for the mlx5 Dynamically Connected (DC) RDMA transport.
//!
//! Work in progress: device discovery, contexts and ports, and the error type. DC targets, initiators and the
//! work-request builder build on [`mlx5dv_raw`], re-exported as [`raw`].
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod context;
pub mod device;
pub mod error;

pub use context::{Context, DeviceAttr, PortAttr};
pub use device::{devices, Device, DeviceList};
pub use error::{Error, Result};
pub use mlx5dv_raw as raw;
