//! S3 over RDMA: the pieces of its DC data path.
//!
//! A client registers a buffer behind its DCT and sends a descriptor of it, the token, in the
//! `x-amz-rdma-token` header; the storage server RDMA-reads it (PUT) or RDMA-writes it (GET)
//! over a pool of DCIs. So far this module has the token ([`RdmaToken`]): parsed strictly, as
//! untrusted input, and formatted as the reference (NVIDIA's `gpu_direct_rdma_access`) writes
//! it. The client's exposed buffers and the server's executor are not here yet.

mod token;

pub use token::{RdmaToken, TokenError, TOKEN_LEN};
