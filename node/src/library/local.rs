//! Local skills written through the library: installed or replaced (alone
//! or with their folder's files) with their sharing decided, and
//! withdrawn; each committed, projected and announced as every change is.

use ecp_protocol::SkillPacket;

use super::Library;
use super::share_decisions::warn_secrets;
use crate::import::{Companion, Place};
use crate::sharing::Decider;
use crate::store::{Source, StoreError};

impl Library {
    /// Installs or replaces a local skill, deciding whether it is shared;
    /// blocking. `false` when content and decision are what the store holds.
    pub fn put_local(&self, packet: &SkillPacket, source: Source) -> Result<bool, StoreError> {
        let decider = self.sharing.decider(&self.store)?;
        self.put_local_with(&decider, packet, &[], self.folder_of(&packet.skill_name).as_ref(), source)
    }

    /// Installs or replaces a local skill whose folder holds `companions`
    /// besides its `SKILL.md`, as a bundle (`SPEC.md` §12) under
    /// [`Library::bundle_limits`]; blocking. `false` when content and
    /// decision are what the store holds.
    ///
    /// # Errors
    ///
    /// [`StoreError::Bundle`] for a folder that breaks a rule of §12.4–§12.6
    /// (nothing is stored), or the store's error.
    pub fn put_local_bundle(
        &self,
        packet: SkillPacket,
        companions: &[Companion],
        source: Source,
    ) -> Result<bool, StoreError> {
        let packet = self.bundled(packet, companions)?;
        let decider = self.sharing.decider(&self.store)?;
        self.put_local_with(
            &decider,
            &packet,
            companions,
            self.folder_of(&packet.skill_name).as_ref(),
            source,
        )
    }

    /// `packet` made the bundle of its `SKILL.md` and `companions` under
    /// [`Library::bundle_limits`]; a plain skill without companions.
    ///
    /// # Errors
    ///
    /// The first rule of §12.4–§12.6 the folder breaks.
    pub fn bundled(
        &self,
        packet: SkillPacket,
        companions: &[Companion],
    ) -> Result<SkillPacket, ecp_protocol::bundle::BundleError> {
        if companions.is_empty() {
            return Ok(packet);
        }
        let files = companions.iter().map(|c| (c.path.as_str(), c.bytes.as_slice(), c.executable));
        let manifest =
            ecp_protocol::bundle::BundleManifest::for_skill(&packet.skill_body, files, &self.bundle)?;
        packet.with_bundle(&manifest)
    }

    /// [`Library::put_local`] with a decider made for several skills, the
    /// skill found in `folder` (an index of the sharing folders), and the
    /// contents of the files `packet` lists besides `SKILL.md`
    /// ([`Library::bundled`]): each is stored once as a blob before the
    /// packet. A file already held costs nothing; one left unused (the
    /// skill unchanged) is collected after the grace period.
    pub fn put_local_with(
        &self,
        decider: &Decider<'_>,
        packet: &SkillPacket,
        companions: &[Companion],
        folder: Option<&Place>,
        source: Source,
    ) -> Result<bool, StoreError> {
        // This node's own files: no sender quota, only the store's cap.
        let contents = companions.iter().map(|c| c.bytes.as_slice());
        self.store.put_blobs_bytes(contents, "", &self.limits.blobs)?;
        let decision = decider.decide(packet, folder);
        let change = self.store.put_local(packet, decision.private.as_ref(), source)?;
        if change.is_some() {
            warn_secrets(&packet.skill_name, &decision);
        }
        self.committed(change.as_slice());
        Ok(change.is_some())
    }

    /// Tombstones a skill; blocking. `false` when it already was one.
    pub fn tombstone(&self, name: &str, source: Source) -> Result<bool, StoreError> {
        let change = self.store.tombstone(name, source)?;
        self.committed(change.as_slice());
        Ok(change.is_some())
    }
}
