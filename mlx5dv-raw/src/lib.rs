//! Hand-written raw bindings to rdma-core's `libibverbs` and `libmlx5` for the mlx5
//! Dynamically Connected (DC) transport. No bindgen, no libclang.
//!
//! - [`verbs`]: `infiniband/verbs.h`, [`mlx5dv`]: `infiniband/mlx5dv.h`, each in header order
//!   with the C names, newest layout (rdma-core 65). Layout tests in the workspace prove every
//!   field's offset against the real headers of rdma-core 44, 56.1 and 65.0 on x86_64 and
//!   aarch64.
//! - `rdma_cma` (feature `cm`): `rdma/rdma_cma.h`, the RDMA connection manager (librdmacm),
//!   with the same layout proof. Without the feature nothing of librdmacm is declared or linked.
//! - [`inline`]: the headers' static-inline functions under their C names.
//! - [`shim`]: the C shim's `m5dv_*` exports (non-inline versions of those functions).
//!
//! Everything is re-exported at the crate root under its C name, as the `libc` crate does.
//!
//! `build.rs` finds rdma-core (see the crate README for `MLX5DV_RDMA_INCLUDE_DIR` and
//! `MLX5DV_RDMA_LIB_DIR`), compiles the shim and links `ibverbs` and `mlx5` (and `rdmacm` with the `cm` feature). Under docs.rs
//! (`DOCS_RS`) it builds without rdma-core.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
#![allow(non_camel_case_types, non_upper_case_globals)]

pub mod inline;
mod layout;
pub mod mlx5dv;
#[cfg(feature = "cm")]
pub mod rdma_cma;
pub mod shim;
pub mod verbs;

pub use inline::*;
pub use mlx5dv::*;
#[cfg(feature = "cm")]
pub use rdma_cma::*;
pub use shim::*;
pub use verbs::*;
