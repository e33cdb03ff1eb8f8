//! The operator's and the node's sharing decisions on local skills: what
//! `skill private` and `skill share` mark, and deciding again for every
//! local skill when an input changed (marks, `.ecpignore`, settings, a
//! retirement or a restore). Each decision is stored and announced through
//! the library like every other change.

use super::Library;
use crate::import::Place;
use crate::sharing::{Decider, Decision};
use crate::store::{Mark, Source, StoreError};

/// Logs each secret finding that holds `name` back: the skill, the line
/// and the rule — never the matched value.
pub(super) fn warn_secrets(name: &str, decision: &Decision) {
    for finding in &decision.secrets {
        tracing::warn!(
            skill = %name,
            file = %format!("{name}/{}", crate::projection::SKILL_FILE),
            line = finding.line,
            rule = %finding.rule,
            "secret found: the skill is held back from sharing; remove it, or run \
             `ecp-node skill share {name} --allow-secrets`"
        );
    }
}

impl Library {
    /// Decides again for every active local skill (the operator's marks, an
    /// `.ecpignore` or the settings may have changed) and stores what
    /// changed; blocking. `folder_of` says which folder holds a skill. Returns
    /// the names whose decision changed.
    pub fn reconcile_sharing(
        &self,
        decider: &Decider<'_>,
        folder_of: impl Fn(&str) -> Option<Place>,
        source: Source,
    ) -> Result<Vec<String>, StoreError> {
        let mut changed = Vec::new();
        let mut changes = Vec::new();
        for skill in self.store.local_skills()? {
            let name = &skill.packet.skill_name;
            let decision = decider.decide(&skill.packet, folder_of(name).as_ref());
            if decision.private == skill.private {
                continue;
            }
            warn_secrets(name, &decision);
            changes.extend(self.store.set_private(name, decision.private.as_ref(), source.clone())?);
            changed.push(name.clone());
        }
        self.committed(&changes);
        Ok(changed)
    }

    /// [`Library::reconcile_sharing`] with a fresh decider, each skill in
    /// the folder [`Library::folder_of`] names; blocking.
    pub fn reconcile_all(&self, source: Source) -> Result<Vec<String>, StoreError> {
        let decider = self.sharing.decider(&self.store)?;
        self.reconcile_sharing(&decider, |name| self.folder_of(name), source)
    }

    /// `ecp-node skill private NAME`: keeps a local skill home (withdrawn
    /// from peers if they had it); blocking.
    pub fn make_private(&self, name: &str) -> Result<Decision, StoreError> {
        self.mark(name, |mark| mark.private = true)
    }

    /// `ecp-node skill share NAME [--allow-secrets]`: undoes `skill private`
    /// and, with `allow_secrets`, lets the skill's current content go
    /// whatever the secret scan finds; blocking. The decision says whether
    /// it is now shared, or what still keeps it home.
    pub fn share(&self, name: &str, allow_secrets: bool) -> Result<Decision, StoreError> {
        let hash = self.local_hash(name)?;
        self.mark(name, |mark| {
            mark.private = false;
            if allow_secrets {
                mark.allow_secrets = Some(hash);
            }
        })
    }

    /// The `integrityHash` of an active local skill; an error naming the problem otherwise.
    fn local_hash(&self, name: &str) -> Result<String, StoreError> {
        let Some((record, _, _)) = self.store.skill(name)? else {
            return Err(StoreError::NoSuchSkill(name.to_owned()));
        };
        if record.kind != "local" {
            return Err(StoreError::NotLocal(name.to_owned()));
        }
        if record.deprecated {
            return Err(StoreError::NoSuchSkill(name.to_owned()));
        }
        Ok(record.integrity_hash)
    }

    /// Changes the operator's mark on `name` and decides again.
    fn mark(&self, name: &str, change: impl FnOnce(&mut Mark)) -> Result<Decision, StoreError> {
        self.local_hash(name)?;
        let mut mark = self.store.sharing_marks()?.remove(name).unwrap_or_default();
        change(&mut mark);
        self.store.set_sharing_mark(name, &mark)?;
        self.decide_again(name, Source::Operator)
    }

    /// Decides again whether the local skill `name` is shared and stores
    /// the decision (a retirement or a restore changed an input); blocking.
    pub(crate) fn decide_again(&self, name: &str, source: Source) -> Result<Decision, StoreError> {
        let decider = self.sharing.decider(&self.store)?;
        let Some((_, packet, _)) = self.store.skill(name)? else {
            return Err(StoreError::NoSuchSkill(name.to_owned()));
        };
        let decision = decider.decide(&packet, self.folder_of(name).as_ref());
        let change = self.store.set_private(name, decision.private.as_ref(), source)?;
        self.committed(change.as_slice());
        Ok(decision)
    }
}
