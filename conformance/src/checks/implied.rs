//! Which ecp-1.2 checks ECP/1.1 already implies, and why: under
//! `--profile ecp-1.1` they run at SHOULD instead of being skipped, so a run
//! against a Go node under its own profile shows its flaws (as warnings,
//! not MUST failures). Under ecp-1.2 they keep their own level.
//!
//! "Implied" means: it follows from the ECP/1.1 messages and endpoints as
//! `shared/ECP.md` describes them (what a field means, what an endpoint
//! serves), though ECP/1.1 never states it as a rule. What this node adds
//! on top — its merge policy, its field names, its numbers — is not
//! implied and stays ecp-1.2 only. The suite's README lists the choice for
//! every ecp-1.2 check; a test keeps it in step with this table.

/// Ecp-1.2 checks that run at SHOULD under ecp-1.1, each with the ECP/1.1
/// text that implies it.
pub(crate) static ECP11_SHOULD: &[(&str, &str)] = &[
    (
        "SKL-011",
        "a skill is a SKILL.md whose frontmatter holds its name and description; a served body without it is not the skill",
    ),
    (
        "PUSH-008",
        "skillName is defined as ^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$: a name outside it is not a packet to install",
    ),
    ("PUSH-016", "originInstance is \"the instance that authored the skill\": re-serving keeps it"),
    (
        "PUSH-017",
        "the packet fields describe the skill (body, hash, description, patterns, tags, createdAt): re-serving keeps them",
    ),
    ("PUSH-018", "confidence is defined as a number 0.0–1.0: 1.5 is not a valid packet"),
    ("PUSH-023", "a name already held is updated and installed: the new version is then served"),
    ("PUSH-027", "GET /ecp/skills serves every shareable skill; shareable means \"may be federated\""),
    ("PUSH-033", "skillName is defined as ^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$: a line feed is outside it"),
    (
        "ROB-005",
        "a server that reads a body of any size can be exhausted by any client; ECP/1.1 names no number, 8 MiB is tested",
    ),
    ("ROB-007", "messages are JSON, which is UTF-8 (RFC 8259 §8.1); a body that does not decode is a 400"),
    ("SYNC-001", "sequenceNum is a \"monotonic update counter\": it counts changes"),
    ("SYNC-002", "the manifest's and the update's sequenceNum are the same counter"),
];

/// Why ECP/1.1 implies check `id`, if it does.
pub fn why(id: &str) -> Option<&'static str> {
    ECP11_SHOULD.iter().find(|(i, _)| *i == id).map(|(_, why)| *why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Level, Profile};

    #[test]
    fn every_implied_check_exists_is_ecp_1_2_and_no_signed_or_bundle_check() {
        let all = crate::checks::all();
        for (id, why) in ECP11_SHOULD {
            let c = all.iter().find(|c| c.id == *id).unwrap_or_else(|| panic!("{id} is no check"));
            assert_eq!(c.profile, Profile::Ecp12, "{id}: an ecp-1.1 check needs no entry");
            assert!(c.level != Level::May, "{id}: a MAY check stays MAY");
            assert!(
                !["SIGN", "BUN", "ORG", "REV"].contains(&c.area()),
                "{id}: ECP/1.1 has no signatures or bundles"
            );
            assert!(!why.is_empty());
        }
    }

    /// The suite's README says, for every ecp-1.2 check outside SIGN and
    /// BUN, whether ECP/1.1 implies it: the IDs of this table in the
    /// "implied" list, every other one in the "not implied" list.
    #[test]
    fn the_readme_states_the_choice_for_every_ecp_1_2_check() {
        let readme = include_str!("../../README.md");
        let section = readme
            .split("### What ECP/1.1 implies")
            .nth(1)
            .and_then(|s| s.split("\n### ").next())
            .expect("the README has a section \"What ECP/1.1 implies\"");
        let (implied, not) = section.split_once("Not implied").expect("an implied and a not-implied part");
        for c in crate::checks::all() {
            if c.profile != Profile::Ecp12 || ["SIGN", "BUN", "ORG", "REV"].contains(&c.area()) {
                continue;
            }
            let listed_in = |text: &str| text.contains(&format!("`{}`", c.id));
            if why(c.id).is_some() {
                assert!(listed_in(implied) && !listed_in(not), "{}: list it as implied only", c.id);
            } else {
                assert!(listed_in(not) && !listed_in(implied), "{}: list it as not implied only", c.id);
            }
        }
    }
}
