//! The in-memory store: a `HashMap` by skill name as the [`StoreView`] a
//! merge reads, and [`MergeOutcome::apply_to`] to write what it decided, as a
//! node writes it to its own store. For tests, fuzzing and tools that merge
//! without a database.

use std::collections::HashMap;

use super::{MergeOutcome, SkillKind, StoreView, StoredSkill};

impl StoreView for HashMap<String, StoredSkill> {
    fn lookup(&self, name: &str) -> Option<StoredSkill> {
        self.get(name).cloned()
    }
}

impl MergeOutcome {
    /// Writes every installing decision into `store`: the packet as stored,
    /// held as an external skill from its origin.
    pub fn apply_to(&self, store: &mut HashMap<String, StoredSkill>) {
        for d in self.decisions.iter().filter(|d| d.decision.installs()) {
            let p = &d.packet;
            store.insert(
                p.skill_name.clone(),
                StoredSkill {
                    kind: SkillKind::External,
                    origin: p.origin_instance.clone(),
                    integrity_hash: p.integrity_hash.clone(),
                    created_at: p.created_at,
                    deprecated: p.deprecated,
                    confidence: Some(p.confidence),
                    bundle_digest: p.bundle_digest.clone(),
                    origin_verified: !p.provenance.as_ref().is_some_and(|v| v.origin_unverified),
                    content_key: Some(super::content_key(&p.skill_body)),
                    origin_key: p.origin_signature.as_ref().map(|s| s.key_id.clone()),
                },
            );
        }
    }
}
