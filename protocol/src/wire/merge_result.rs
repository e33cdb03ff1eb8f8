//! `ECPMergeResult`: the truthful outcome of one merge.

use serde::{Deserialize, Serialize};

use super::null_as_default;

/// What a merge did with an update (`ECPMergeResult`, the answer to
/// `POST /ecp/skills`).
///
/// Unlike the reference implementation, the counts are truthful:
/// `new_skills + updated_skills + unchanged + rejected_skills` equals the
/// number of packets in the update, and every rejected packet has exactly one
/// `"<skillName>: <reason>"` line in `conflicts`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct MergeResult {
    /// Packets installed under a name not held before.
    pub new_skills: u64,
    /// Packets that replaced (or withdrew) a held skill.
    pub updated_skills: u64,
    /// Packets refused or in conflict; each has one line in `conflicts`.
    pub rejected_skills: u64,
    /// One line per refused packet, `"<skillName>: <reason>"`, in packet order.
    #[serde(deserialize_with = "null_as_default")]
    pub conflicts: Vec<String>,
    /// Our addition: packets identical to what is held. Omitted when zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub unchanged: u64,
    /// Our addition: one line per warning on a packet that was not refused,
    /// `"<skillName>: <warning>"` (`SPEC.md` §7.10.5). Omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub warnings: Vec<String>,
}

impl MergeResult {
    /// Number of packets this result accounts for.
    pub fn total(&self) -> u64 {
        self.new_skills + self.updated_skills + self.rejected_skills + self.unchanged
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
