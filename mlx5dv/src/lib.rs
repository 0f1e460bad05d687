//! Safe Rust for the mlx5 Dynamically Connected (DC) RDMA transport (work in progress).
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
pub use mlx5dv_raw as raw;
