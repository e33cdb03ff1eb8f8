//! Revoked versions in the merge (`SPEC.md` §14.6): refused from anyone,
//! at stage `revoked`, naming the version and the origin's reason; other
//! versions of the name, and the version's tombstone, pass.

use super::*;
use crate::revocation::version_digest;

/// A store view that knows the versions their origins revoked.
struct Revoking {
    revoked: HashMap<(String, String), String>,
}

impl StoreView for Revoking {
    fn lookup(&self, _: &str) -> Option<StoredSkill> {
        None
    }

    fn revoked(&self, name: &str, digest: &str) -> Option<String> {
        self.revoked.get(&(name.to_owned(), digest.to_owned())).cloned()
    }
}

#[test]
fn a_revoked_version_is_refused_from_anyone_and_other_versions_pass() {
    let bad = packet("alpha");
    let digest = version_digest(&bad).to_owned();
    let view = Revoking {
        revoked: HashMap::from([(("alpha".to_owned(), digest.clone()), "leaked key".to_owned())]),
    };
    let other = newer_version(&bad, "2026-11-21T10:00:00Z");
    let tombstone = SkillPacket { deprecated: true, ..bad.clone() };
    for sender in ["node-a", "node-z"] {
        let policy = StandardPolicy::default();
        let refused = merge_knowledge(update(vec![bad.clone()]), &view, &policy, &ctx_with(sender, 0.6));
        let (stage, reason) = rejection(&refused, 0);
        assert_eq!(stage, Stage::Revoked, "from {sender}");
        assert_eq!(
            reason,
            format!(
                "revoked by its origin: version {digest} of \"alpha\" was revoked (leaked key); refused from anyone"
            )
        );
        let passed = merge_knowledge(update(vec![other.clone()]), &view, &policy, &ctx_with(sender, 0.6));
        assert_eq!(passed.decisions[0].decision, Decision::New, "another version, from {sender}");
    }
    let withdrawn = merge_knowledge(update(vec![tombstone]), &view, &StandardPolicy::default(), &ctx());
    assert_eq!(withdrawn.decisions[0].decision, Decision::Unchanged, "a tombstone never installs content");
}
