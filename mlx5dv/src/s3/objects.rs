//! An S3 server's two RDMA transfers on the [`AsyncExecutor`], as every server that keeps each
//! object in a region of its own writes them: a PUT's bytes read straight into a new region
//! and checked where they landed ([`AsyncExecutor::put_object`]), and a GET's range written
//! from the object's region ([`AsyncExecutor::get_object`]). Each gives the
//! [`Outcome`] the protocol answers ([`protocol::respond`](super::protocol::respond)).

use super::checksum::Digest;
use super::protocol::Outcome;
use super::{AsyncExecutor, Direction, LentRegion, RdmaToken, Tenant};
use crate::mr::Mr;
use crate::{Access, Pd};

/// What [`AsyncExecutor::put_object`] received.
#[derive(Debug)]
pub struct Received {
    /// What to answer: `Moved` when every byte moved and matched the request's checksum;
    /// `BadDigest` when they moved and did not; `Declined`, `Busy` or `Failed` otherwise.
    pub outcome: Outcome,
    /// The object's region, its length the token's: only when `outcome` is `Moved` (bytes
    /// that did not all move, or did not match, are never handed back as an object).
    pub object: Option<Mr<Vec<u8>>>,
    /// The server's checksum of the bytes that moved, in the request's algorithm (to echo):
    /// None when the request carried none or the bytes did not all move.
    pub checksum: Option<Digest>,
}

impl AsyncExecutor {
    /// PUT for `tenant` (whose share of the DCIs it waits in: [`Tenant`]; `Tenant::DEFAULT` for
    /// a server that names none): registers a region of the token's length on `pd` (local
    /// write), RDMA-reads the client's bytes into it (no staging copy), and checks them where
    /// they landed against
    /// `expected`, the request's checksum (read with `s3::checksum::Digest::parse` or
    /// `s3::http::request_checksum`; a malformed one is answered before calling this).
    ///
    /// Never fails as a call: every refusal is an outcome the protocol answers. `Declined`
    /// (the client sends the body instead) when the token names no bytes, more than
    /// `max_len` (the token's length is the client's claim: this bounds what one request
    /// makes the server register), or the registration fails (memory short: the errno is
    /// not the client's business); `Busy` (503 SlowDown) or `Declined` when the executor
    /// refuses the transfer ([`Outcome::of_refusal`]); `Failed` with the completion status
    /// when the transfer fails.
    pub async fn put_object(
        &self,
        tenant: Tenant,
        pd: &Pd,
        token: &RdmaToken,
        expected: Option<Digest>,
        max_len: usize,
    ) -> Received {
        let refused = |outcome| Received {
            outcome,
            object: None,
            checksum: None,
        };
        let len = match usize::try_from(token.len) {
            Ok(len) if len > 0 && len <= max_len => len,
            _ => return refused(Outcome::Declined),
        };
        let Ok(region) = pd.register(vec![0u8; len], Access::LOCAL_WRITE) else {
            return refused(Outcome::Declined);
        };
        let (done, region) = match self.submit_region_for(tenant, token, 0, Direction::Put, region, 0, len) {
            Ok(transfer) => transfer.await,
            Err(e) => return refused(Outcome::of_refusal(e.error())),
        };
        let outcome = Outcome::of_done(&done);
        if !done.is_ok() {
            return refused(outcome);
        }
        // The transfer is reported: nothing writes the region any more. The range is the
        // region's own, so of_region cannot refuse it.
        let checksum = expected.and_then(|d| Digest::of_region(d.algorithm, &region, 0, len).ok());
        let outcome = outcome.verified(expected, checksum);
        let object = matches!(outcome, Outcome::Moved { .. }).then_some(region);
        Received {
            outcome,
            object,
            checksum,
        }
    }

    /// GET (or a ranged GET) for `tenant`: RDMA-writes `len` bytes at `at` of `object` into
    /// the token's buffer. `object` is lent to the transfer and dropped when it is reported: pass an
    /// `Arc<Mr<_>>` to serve several GETs of one object at once.
    ///
    /// Never fails as a call: `Moved` when every byte moved (at once, with no transfer, for
    /// `len` 0: an empty object or range); `Busy` or `Declined` when the
    /// executor refuses the transfer ([`Outcome::of_refusal`]: EINVAL for a range outside
    /// the object or the token's buffer is `Declined`); `Failed` with the completion status.
    pub async fn get_object<R: LentRegion + Unpin>(
        &self,
        tenant: Tenant,
        token: &RdmaToken,
        object: R,
        at: usize,
        len: usize,
    ) -> Outcome {
        match self.submit_region_for(tenant, token, 0, Direction::Get, object, at, len) {
            Ok(transfer) => Outcome::of_done(&transfer.await.0),
            Err(e) => Outcome::of_refusal(e.error()),
        }
    }
}
