//! The messages of the blob endpoints (`SPEC.md` §12.8): the body of
//! `POST /ecp/blobs/missing` and its answer.

use serde::{Deserialize, Serialize};

use super::null_as_default;

/// `POST /ecp/blobs/missing`: the blobs a sender is about to need the
/// receiver to hold. Check it with [`BlobQuery::validate`](crate::bundle).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BlobQuery {
    /// SHA-256 digests, lowercase hex.
    #[serde(deserialize_with = "null_as_default")]
    pub blobs: Vec<String>,
}

/// The answer: the digests of the query the receiver does not hold, in the
/// query's order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MissingBlobs {
    /// The ones to upload.
    #[serde(deserialize_with = "null_as_default")]
    pub missing: Vec<String>,
}
