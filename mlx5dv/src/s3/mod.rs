//! S3 over RDMA: its DC data path, as a library.
//!
//! A client registers a buffer behind its DCT and sends a descriptor of it, the token, in the
//! `x-amz-rdma-token` header; the storage server RDMA-reads it (PUT) or RDMA-writes it (GET)
//! over a pool of DCIs, and answers with `x-amz-rdma-reply`. This module has the three pieces
//! of that data path; HTTP stays the application's:
//!
//! - [`RdmaToken`]: the token, parsed strictly as untrusted input in every form the published
//!   clients write (the reference's, NVIDIA's `gpu_direct_rdma_access`; NIXL's and
//!   minio-cpp's nine fields; AMD hipObject's), and formatted back as it was spelled;
//! - [`checksum`]: CRC64/NVME and CRC32C of the bytes moved (`x-amz-checksum-*`), folded
//!   into a copy the server makes anyway;
//! - [`protocol`]: the headers, what a server answers for each outcome and what a client
//!   makes of the answer, as NVIDIA's `RDMA_PROTOCOL_SPEC.md` says (no HTTP library);
//! - the client's side: a [`Client`] (its DCT) exposes registered buffers ([`Exposed`]: host
//!   memory of any kind, or a dma-buf), mints a token for a buffer or a range of it, and
//!   revokes it, after which it reaches no memory but what a later token of the same client
//!   may be given its key for ([`Exposed::revoke`] says exactly what holds);
//! - the server's side: an [`Executor`] runs transfers (token, offset, direction, local
//!   buffer, the caller's id) from any number of clients over a [`crate::DciPool`], and
//!   reports each once ([`Done`]: id, bytes, status).
//!
//! The token carries no DC key: client and server agree on it out of band. The reference
//! implementations hard-code one, offered here as [`REFERENCE_DC_KEY`] to talk to them.
//!
//! ```no_run
//! # fn main() -> mlx5dv::Result<()> {
//! use mlx5dv::s3::{Client, ClientConfig, Direction, Executor, ExecutorConfig, REFERENCE_DC_KEY};
//! use mlx5dv::{devices, Access};
//! let list = devices()?;
//! let ctx = list.iter().next().expect("an mlx5 device").open()?;
//! let (mlx5, pd) = (ctx.mlx5()?, ctx.alloc_pd()?);
//! // The client: a buffer behind its DCT, and a token for the server to write it (GET).
//! let client = Client::new(&mlx5, &pd, REFERENCE_DC_KEY, ClientConfig::default())?;
//! let mut exposed = client.expose(pd.register(vec![0u8; 1 << 20], Access::LOCAL_WRITE)?)?;
//! let (id, token) = exposed.mint(0, 1 << 20, Direction::Get)?;
//! let header = token.format().expect("a minted token formats"); // x-amz-rdma-token
//! // The server: the object's bytes written into the client's buffer.
//! let cq = ctx.create_cq(1024)?;
//! let mut exec = Executor::new(&mlx5, &pd, cq, ExecutorConfig::default())?;
//! let object = pd.register(vec![7u8; 1 << 20], Access::LOCAL_WRITE)?;
//! exec.hold(&object)?;
//! exec.submit_str(1, &header, 0, Direction::Get, object.sge(0, 1 << 20)?)?;
//! let mut done = [mlx5dv::s3::Done::default()];
//! while exec.poll(&mut done)? == 0 {}
//! assert!(done[0].is_ok() && done[0].bytes == 1 << 20);
//! exposed.revoke(id)?; // the token's registration is gone
//! # Ok(())
//! # }
//! ```

mod asynchronous;
pub mod checksum;
mod client;
mod executor;
#[cfg(feature = "http")]
pub mod http;
mod keyed_hash;
mod objects;
mod path;
pub mod protocol;
mod resolver;
mod token;
#[cfg(feature = "tokio")]
pub mod tokio;
mod window;

pub use asynchronous::{AsyncConfig, AsyncExecutor, AsyncStats, Driver, LentRegion, RegionTransfer, Step, Transfer};
pub use client::{Client, ClientConfig, Expose, Exposed, TokenGuard, TokenId};
pub use executor::{Done, Executor, ExecutorConfig, ExecutorStats, Tenant, TenantSubmit};
pub use objects::Received;
pub use path::PathSettings;
pub use token::{
    RdmaToken, TokenError, TokenErrorKind, TokenForm, TokenSpelling, HIP_TOKEN_LEN, SUFFIX_LEN, TOKEN_LEN,
};

use crate::context::Context;
use crate::dc::DcKey;
use crate::error::{Error, Result};

/// The DC key NVIDIA's `gpu_direct_rdma_access` sample hard-codes on both sides
/// (`0xffeeddcc`), which the S3-over-RDMA implementations derived from it use: to be reached
/// by (or reach) them, a DCT or an executor must present it. It is public knowledge, so it
/// keeps nobody out: an application of its own should agree on a secret key instead.
pub const REFERENCE_DC_KEY: DcKey = DcKey::new(0xffee_ddcc);

/// Which way a transfer moves the bytes, named after the S3 request that causes it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// PUT: the server RDMA-reads the client's buffer (the token grants remote read).
    Put,
    /// GET (and ranged GET): the server RDMA-writes the client's buffer (the token grants
    /// remote write).
    Get,
}

/// The GID index a RoCE port is used from: `given`, else the port's first RoCE v2 GID; None
/// on InfiniBand (`ethernet` false), where LIDs route.
///
/// # Errors
/// `Context::roce_v2_gid_index`'s; ENODEV, naming `op`, for a RoCE port without a RoCE v2 GID.
fn roce_gid_index(ctx: &Context, port: u8, ethernet: bool, given: Option<u8>, op: &'static str) -> Result<Option<u8>> {
    if !ethernet || given.is_some() {
        return Ok(given.filter(|_| ethernet));
    }
    match ctx.roce_v2_gid_index(port)? {
        Some(g) => Ok(Some(g)),
        None => Err(Error::from_errno(
            op,
            libc::ENODEV,
            "the RoCE port has no RoCE v2 GID: give the GID index in the configuration, or configure an address on its netdev",
        )
        .on(ctx.name())),
    }
}
