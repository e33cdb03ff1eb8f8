//! Why a round with a peer failed: [`SyncError`], and [`SyncFailure`], the
//! error together with the consecutive failures the store now counts.

use crate::store::StoreError;

use super::client::ClientError;
use super::pull;

/// Why a round with a peer failed. Messages carry no secret and no local path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    /// The exchange failed (connect, timeout, status, size).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Our store failed.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The peer's answer is not a valid ECP message.
    #[error("answer does not decode: {0}")]
    Decode(String),
    /// The peer broke the protocol in another way.
    #[error("{0}")]
    Protocol(String),
    /// The peer is this node.
    #[error("the peer is this node itself (its manifest names our instance id); remove it from the peers")]
    ItIsUs,
    /// The peer's manifest names another instance than configured.
    #[error("the peer's manifest names instance {found:?}, but its [[peer]] says instance = {expected:?}")]
    WrongInstance {
        /// Configured.
        expected: String,
        /// Found.
        found: String,
    },
    /// A blocking task panicked or was cancelled.
    #[error("internal error: {0}")]
    Internal(String),
    /// Some pulled new skills did not fit under their origins' limits: the
    /// rest was merged, the cursor stays, and the next rounds fetch them again.
    #[error("origin limit: {0}")]
    OriginLimit(Box<pull::HeldBack>),
}

/// A failed round: the error and the consecutive failures now counted.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct SyncFailure {
    /// What went wrong.
    pub error: SyncError,
    /// Consecutive failures of this direction (pull or push), this one included.
    pub failures: i64,
}
