//! `ECPManifest`: the cheap answer to "what do you have?".

use serde::{Deserialize, Serialize};

use super::{Timestamp, null_as_default};

/// A node's summary (`ECPManifest`, `GET /ecp/manifest`): enough for a puller
/// to decide whether a full or `since` pull is worth it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Manifest {
    /// The node's instance id.
    #[serde(deserialize_with = "null_as_default")]
    pub instance: String,
    /// Protocol version, `"1.0"`.
    #[serde(deserialize_with = "null_as_default")]
    pub version: String,
    /// When the manifest was generated.
    pub generated_at: Timestamp,
    /// Sequence number of the newest change (always 0 from the Go implementation).
    pub sequence_num: i64,
    /// Number of shareable skills; equals `skill_names.len()`.
    pub skill_count: i64,
    /// Names of the shareable skills.
    #[serde(deserialize_with = "null_as_default")]
    pub skill_names: Vec<String>,
    /// The most used tags.
    #[serde(deserialize_with = "null_as_default")]
    pub top_tags: Vec<String>,
    /// When the skill set last changed.
    pub last_update: Timestamp,
}
