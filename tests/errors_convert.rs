//! Every error type the crate returns converts with `?` into `anyhow::Error` and into
//! `Box<dyn Error + Send + Sync>`, the two error types applications and async runtimes use.
//! Tier 1 (no device): what is proven here is that it compiles. The functions below are never
//! called; they fail to build if a `?` stops converting (as `?` on a `Returned<Cq>` did while
//! `Cq`, not `Sync`, could be reached through `&Returned<Cq>`).

use mlx5dv::addr::AddrError;
use mlx5dv::rc::RcQp;
use mlx5dv::s3::protocol::ReplyError;
use mlx5dv::s3::{Executor, Exposed, RdmaToken, TokenError};
use mlx5dv::{state, AlignedBuf, Cq, DcPeer, Dci, DmaBuf, Error, Mr, Returned, TransitionError};
use std::error::Error as StdError;

type BoxError = Box<dyn StdError + Send + Sync>;

/// What `anyhow::Error: From<E>` and `Box<dyn Error + Send + Sync>: From<E>` ask of `E`.
fn converts<E: StdError + Send + Sync + 'static>() {}

#[test]
fn every_error_type_the_crate_returns_is_error_send_sync_and_static() {
    converts::<Error>();
    converts::<AddrError>();
    converts::<TokenError>();
    converts::<ReplyError>();
    converts::<Returned<Cq>>();
    converts::<Returned<DcPeer>>();
    converts::<Returned<AlignedBuf>>();
    converts::<Returned<DmaBuf>>();
    converts::<Returned<Mr<AlignedBuf>>>();
    converts::<Returned<Exposed<AlignedBuf>>>();
    converts::<Returned<RcQp<state::Rts>>>();
    converts::<TransitionError<Dci<state::Reset>>>();
    converts::<TransitionError<Dci<state::Init>>>();
    converts::<TransitionError<Dci<state::Rtr>>>();
    converts::<TransitionError<RcQp<state::Reset>>>();
    converts::<TransitionError<RcQp<state::Rts>>>();
}

// The shapes a user writes: `?` on the crate's results inside an application's function.

#[allow(dead_code)]
fn executor_into_anyhow(made: Result<Executor, Returned<Cq>>) -> anyhow::Result<Executor> {
    Ok(made?)
}

#[allow(dead_code)]
fn executor_into_box(made: Result<Executor, Returned<Cq>>) -> Result<Executor, BoxError> {
    Ok(made?)
}

#[allow(dead_code)]
fn dci_into_anyhow(dci: Dci<state::Reset>, port: u8) -> anyhow::Result<Dci<state::Init>> {
    Ok(dci.init(port, 0)?)
}

#[allow(dead_code)]
fn dci_into_box(dci: Dci<state::Reset>, port: u8) -> Result<Dci<state::Init>, BoxError> {
    Ok(dci.init(port, 0)?)
}

#[allow(dead_code)]
fn deregister_into_anyhow(mr: Mr<AlignedBuf>) -> anyhow::Result<AlignedBuf> {
    Ok(mr.deregister()?)
}

#[allow(dead_code)]
fn deregister_into_box(mr: Mr<AlignedBuf>) -> Result<AlignedBuf, BoxError> {
    Ok(mr.deregister()?)
}

#[allow(dead_code)]
fn unexpose_into_anyhow(exposed: Exposed<AlignedBuf>) -> anyhow::Result<Mr<AlignedBuf>> {
    Ok(exposed.unexpose()?)
}

#[allow(dead_code)]
fn token_into_anyhow(text: &str) -> anyhow::Result<RdmaToken> {
    Ok(RdmaToken::parse(text)?)
}

#[test]
fn a_token_error_carries_its_message_through_anyhow_and_a_boxed_error() {
    let parsed = || -> anyhow::Result<RdmaToken> { Ok(RdmaToken::parse("not a token")?) };
    let direct = RdmaToken::parse("not a token").unwrap_err().to_string();
    let through_anyhow = parsed().unwrap_err().to_string();
    assert_eq!(through_anyhow, direct);
    let boxed = || -> Result<RdmaToken, BoxError> { Ok(RdmaToken::parse("not a token")?) };
    assert_eq!(boxed().unwrap_err().to_string(), direct);
}
