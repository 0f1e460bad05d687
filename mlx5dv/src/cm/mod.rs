//! Connection setup through the RDMA connection manager (librdmacm; feature `cm`): connect
//! by IP address and port instead of exchanging LIDs, GIDs and QP numbers by hand.
//!
//! - RC ([`rc`]): a [`Listener`] and a [`Connector`] bring this crate's [`crate::RcQp`] up with
//!   the CM's attributes; accept or reject with private data; typed events and failures
//!   ([`CmEvent`], [`CmFailure`]); a timeout on every resolve and connect.
//! - DC ([`sidr`]): a DC target published on an IP address and port of the CM's UDP port space
//!   and resolved by initiators with a SIDR exchange ([`DcTargetService`],
//!   [`resolve_dc_target`]).
//!
//! Each id has an event channel of its own, non-blocking, with its descriptor exposed through
//! `AsRawFd` for epoll; every event is acknowledged as soon as it is read, and dropping any
//! object midway destroys its id, so a peer that vanishes mid-handshake leaks nothing.
//!
//! Without RDMA devices (or without the CM's kernel modules) everything fails at the first
//! call with ENODEV and a sentence saying so.

mod event;
mod id;
pub mod rc;
pub mod sidr;

pub use event::{CmEvent, CmFailure};
pub use rc::{CmParams, ConnectRequest, Connection, Connector, Listener};
pub use sidr::{resolve_dc_target, DcAnnouncement, DcResolution, DcTargetService};
