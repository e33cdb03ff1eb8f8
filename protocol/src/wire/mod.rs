//! The JSON messages of ECP/1.0 (`ECP.md` › Messages), compatible with the Go
//! implementation in both directions.
//!
//! Go's `encoding/json` shapes what we must accept and what we may send:
//! - a nil slice is encoded as `null`, so every array field accepts `null`
//!   (decoded as empty);
//! - a missing `time.Time` is `"0001-01-01T00:00:00Z"`, so [`Timestamp`]
//!   defaults to that value and accepts `null`;
//! - unknown fields are ignored and missing fields take their zero value, so
//!   every struct here is `#[serde(default)]` and never denies unknown fields;
//! - therefore we only ever *add* optional fields (never rename or retype
//!   one), and we omit our additions when they are empty so that a Go peer
//!   sees exactly the shape it knows.
//!
//! Field names are the wire contract: they are spelled out with
//! `rename_all = "camelCase"` and checked against the reference fixtures in
//! `protocol/testdata/`.
//!
//! # Layout
//!
//! The domain types, each with its serde reference decoding: `manifest`,
//! `merge_result`, `packet` (with a bundle's [`BundleFile`]s), `outcomes`
//! (the [`OutcomeClaim`]s a packet may carry, ECP/1.3), `time`
//! ([`Timestamp`]), `update` ([`KnowledgeUpdate`]) and `blobs` (the blob
//! endpoints' [`BlobQuery`] and [`MissingBlobs`]). `fast`: the fast decoder of an update, which
//! answers `None` (use the reference) or exactly what the reference gives.
//! `count`: the packets of an update counted before any is decoded, so an
//! update over the receiver's limit is refused without being built.

mod blobs;
mod count;
mod fast;
mod manifest;
mod merge_result;
mod outcomes;
mod packet;
mod time;
mod update;

pub use blobs::{BlobQuery, MissingBlobs};
pub use manifest::{
    AUTH_ECP_1_2, AUTH_X_ECP_HMAC, Manifest, PROFILE_ECP_1_3, PROFILE_PROPOSALS, PROFILE_REVOCATIONS,
    PROFILE_VERSIONS,
};
pub use merge_result::MergeResult;
pub use outcomes::OutcomeClaim;
pub use packet::{BundleFile, OriginSignature, Provenance, SkillPacket};
pub use time::Timestamp;
pub use update::{KnowledgeUpdate, PeerStats};

use serde::{Deserialize, Deserializer};

/// Decodes a value that Go may have sent as `null` (a nil slice, an unset
/// string pointer) as its default.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}
