//! `ECPMergeResult`: the truthful outcome of one merge.

use serde::{Deserialize, Serialize};

use super::null_as_default;

/// What a merge did with an update (`ECPMergeResult`, the answer to
/// `POST /ecp/skills`).
///
/// Unlike the reference implementation, the counts are truthful:
/// `new_skills + updated_skills + unchanged + rejected_skills + held_skills`
/// equals the number of packets in the update, every rejected packet has
/// exactly one `"<skillName>: <reason>"` line in `conflicts`, and every held
/// one a line in `held`.
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
    /// Our addition: packets neither applied nor refused but held for the
    /// receiving node's user (withdrawals over its deletion guard). Omitted
    /// when zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub held_skills: u64,
    /// Our addition: one line per held packet, `"<skillName>: <reason>"`, in
    /// packet order. Omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub held: Vec<String>,
    /// Our addition: one line per warning on a packet that was not refused,
    /// `"<skillName>: <warning>"` (`SPEC.md` §7.10.5). Omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub warnings: Vec<String>,
}

impl MergeResult {
    /// Number of packets this result accounts for.
    pub fn total(&self) -> u64 {
        self.new_skills + self.updated_skills + self.rejected_skills + self.unchanged + self.held_skills
    }

    /// Adds the counts and lines of `more` (another part of the same
    /// update, or of the same round).
    pub fn absorb(&mut self, more: MergeResult) {
        self.new_skills += more.new_skills;
        self.updated_skills += more.updated_skills;
        self.rejected_skills += more.rejected_skills;
        self.unchanged += more.unchanged;
        self.held_skills += more.held_skills;
        self.conflicts.extend(more.conflicts);
        self.held.extend(more.held);
        self.warnings.extend(more.warnings);
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absorb_keeps_the_warnings_of_both_parts() {
        let mut first =
            MergeResult { new_skills: 1, warnings: vec!["a: long".into()], ..MergeResult::default() };
        first.absorb(MergeResult {
            new_skills: 1,
            warnings: vec!["b: long".into()],
            ..MergeResult::default()
        });
        assert_eq!((first.new_skills, first.warnings), (2, vec!["a: long".to_owned(), "b: long".to_owned()]));
    }

    #[test]
    fn held_packets_are_counted_and_listed_only_when_there_are_some() {
        let none = serde_json::to_value(MergeResult { updated_skills: 1, ..MergeResult::default() }).unwrap();
        assert!(none.get("heldSkills").is_none() && none.get("held").is_none(), "{none}");
        let held = MergeResult {
            updated_skills: 1,
            held_skills: 2,
            held: vec!["a: deletion held".into(), "b: deletion held".into()],
            ..MergeResult::default()
        };
        let json = serde_json::to_value(&held).unwrap();
        assert_eq!(
            (json["heldSkills"].as_u64(), json["held"][1].as_str()),
            (Some(2), Some("b: deletion held"))
        );
        assert_eq!(held.total(), 3);
        let mut sum =
            MergeResult { rejected_skills: 1, conflicts: vec!["c: no".into()], ..MergeResult::default() };
        sum.absorb(held.clone());
        assert_eq!((sum.total(), sum.held.len(), sum.conflicts.len()), (4, 2, 1));
        assert_eq!(serde_json::from_value::<MergeResult>(json).unwrap(), held);
        let go: MergeResult = serde_json::from_str(
            r#"{"newSkills":0,"updatedSkills":0,"rejectedSkills":0,"conflicts":null,"held":null}"#,
        )
        .unwrap();
        assert!(go.held.is_empty());
    }
}
