//! `ECPKnowledgeUpdate`: a batch of packets with the sender's statistics.

use serde::{Deserialize, Serialize};

use super::{SkillPacket, Timestamp, null_as_empty, null_as_empty_string};

/// A batch of skills from one peer (`ECPKnowledgeUpdate`): the body of
/// `POST /ecp/skills` and the answer to `GET /ecp/skills`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct KnowledgeUpdate {
    /// Update id, free-form.
    #[serde(deserialize_with = "null_as_empty_string")]
    pub id: String,
    /// The instance that sent the update.
    #[serde(deserialize_with = "null_as_empty_string")]
    pub peer_instance: String,
    /// When the update was generated.
    pub generated_at: Timestamp,
    /// The packets, in the sender's order.
    #[serde(deserialize_with = "null_as_empty")]
    pub skills: Vec<SkillPacket>,
    /// The sender's statistics; informational only.
    pub stats: PeerStats,
    /// The sender's change counter. The Go implementation always sends 0; our
    /// nodes send the sequence number of their newest change.
    pub sequence_num: i64,
}

/// A sender's statistics (`stats` of an update). Informational: nothing in
/// the merge depends on it, because a peer can claim anything here.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PeerStats {
    /// Skills the sender holds.
    pub total_skills: i64,
    /// Skill extractions the sender has made.
    pub total_extractions: i64,
    /// Mean confidence of the sender's skills.
    pub avg_confidence: f64,
    /// Sender uptime in hours.
    pub uptime_hours: f64,
    /// The sender's most used workflows.
    #[serde(deserialize_with = "null_as_empty")]
    pub top_workflows: Vec<String>,
}
