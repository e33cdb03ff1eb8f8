//! Building and verifying [`SkillPacket`]s (`ECP.md` › Messages).
//!
//! A packet's hashes are always computed here, never typed in: [`SkillPacket::new`]
//! fills `integrityHash`, `id` and `originUserHash`, and [`SkillPacket::reseal`]
//! recomputes them after the body changed. Received packets are checked with
//! [`SkillPacket::verify`]. [`SkillPacket::with_bundle`] adds the files of a
//! bundle.

use crate::PROTOCOL_VERSION;
use crate::bundle::{self, BundleError, BundleManifest};
use crate::error::IntegrityError;
use crate::integrity;
use crate::wire::{SkillPacket, Timestamp};

/// Who authors a skill: the `origin*` fields of a packet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Origin {
    /// `originInstance`: the authoring instance's id.
    pub instance: String,
    /// `originUserHash`: see [`integrity::user_hash`].
    pub user_hash: String,
    /// `originOS`, e.g. `linux/amd64`.
    pub os: String,
    /// `originVersion`: the agent or node version.
    pub version: String,
}

impl Origin {
    /// An origin for `instance`; the user id is hashed, never kept.
    pub fn new(instance: &str, user_id: &str, os: &str, version: &str) -> Self {
        Origin {
            instance: instance.to_owned(),
            user_hash: integrity::user_hash(user_id),
            os: os.to_owned(),
            version: version.to_owned(),
        }
    }
}

/// A confidence as people read it: at most four decimals, trailing zeros
/// dropped (`0.72`, not the product's `0.7200000000000001`). For messages,
/// logs and pages only; the wire carries the value itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShownConfidence(pub f64);

impl std::fmt::Display for ShownConfidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = format!("{:.4}", self.0);
        let text = text.trim_end_matches('0');
        f.write_str(text.strip_suffix('.').map_or(text, |whole| whole))
    }
}

impl SkillPacket {
    /// A new shareable packet authored by `origin`, with its hashes computed.
    pub fn new(
        origin: &Origin,
        name: &str,
        description: &str,
        body: &str,
        confidence: f64,
        created_at: Timestamp,
    ) -> Self {
        let mut packet = SkillPacket {
            version: PROTOCOL_VERSION.to_owned(),
            created_at,
            origin_instance: origin.instance.clone(),
            origin_user_hash: origin.user_hash.clone(),
            origin_os: origin.os.clone(),
            origin_version: origin.version.clone(),
            skill_name: name.to_owned(),
            skill_description: description.to_owned(),
            skill_body: body.to_owned(),
            confidence,
            shareable: true,
            ..SkillPacket::default()
        };
        packet.reseal();
        packet
    }

    /// Sets the tags.
    pub fn with_tags<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the patterns that led to the skill.
    pub fn with_patterns<I: IntoIterator<Item = S>, S: Into<String>>(mut self, patterns: I) -> Self {
        self.patterns = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// Makes the packet a bundle (`SPEC.md` §12): sets `files` and
    /// `bundleDigest` from `manifest`, which must list this body as its
    /// `SKILL.md`. Call it after the last change to the body.
    ///
    /// # Errors
    ///
    /// [`BundleError::SkillMdMismatch`] when the manifest's `SKILL.md` is
    /// another body.
    pub fn with_bundle(mut self, manifest: &BundleManifest) -> Result<Self, BundleError> {
        let skill_md = manifest.entry(bundle::SKILL_MD).ok_or(BundleError::NoSkillMd)?;
        if skill_md.sha256 != self.integrity_hash {
            return Err(BundleError::SkillMdMismatch { what: "its sha256 is not integrityHash" });
        }
        self.files = manifest.files().to_vec();
        self.bundle_digest = manifest.digest().to_owned();
        Ok(self)
    }

    /// Recomputes `integrityHash` and `id` from the current body.
    pub fn reseal(&mut self) {
        self.integrity_hash = integrity::body_hash(&self.skill_body);
        self.id = integrity::packet_id(&self.integrity_hash);
    }

    /// Checks that `integrityHash` is the SHA-256 of the body.
    ///
    /// The `id` is not checked: the reference implementation reuses ids across
    /// packets (see `testdata/push1.json`), so an id mismatch says nothing
    /// about the body. We rewrite the id of every packet we store.
    pub fn verify(&self) -> Result<(), IntegrityError> {
        integrity::verify_body(&self.skill_body, &self.integrity_hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SkillPacket {
        let origin = Origin::new("alice-laptop", "test", "linux/amd64", "5.0.0");
        let at = Timestamp::parse("2026-11-20T10:00:00Z").unwrap();
        SkillPacket::new(&origin, "demo", "A demo", "---\nname: demo\n---\nbody\n", 0.9, at)
    }

    #[test]
    fn new_packet_has_computed_hashes_and_verifies() {
        let p = sample();
        assert_eq!(p.integrity_hash, integrity::body_hash(&p.skill_body));
        assert_eq!(p.id, p.integrity_hash[..16]);
        assert_eq!(p.origin_user_hash, "9f86d081884c7d659a2feaa0c55ad015");
        assert_eq!(p.version, "1.0");
        assert!(p.shareable);
        assert!(p.verify().is_ok());
    }

    #[test]
    fn with_bundle_sets_files_and_digest_for_this_body_only() {
        let p = sample();
        let limits = bundle::BundleLimits::default();
        let script: &[u8] = b"#!/bin/sh\necho hi\n";
        let manifest = BundleManifest::for_skill(&p.skill_body, [("run.sh", script, true)], &limits).unwrap();
        let bundled = p.clone().with_bundle(&manifest).unwrap();
        assert_eq!(bundled.files, manifest.files());
        assert_eq!(bundled.bundle_digest, manifest.digest());
        assert_eq!(BundleManifest::from_packet(&bundled, &limits).unwrap(), Some(manifest));

        let other = BundleManifest::for_skill("another body", [], &limits).unwrap();
        assert_eq!(
            p.with_bundle(&other),
            Err(BundleError::SkillMdMismatch { what: "its sha256 is not integrityHash" })
        );
    }

    #[test]
    fn a_shown_confidence_has_at_most_four_decimals_and_no_trailing_zeros() {
        let shown = |c: f64| ShownConfidence(c).to_string();
        assert_eq!(shown(0.8 * 0.9), "0.72");
        assert_eq!(shown(0.9 * 0.6), "0.54");
        assert_eq!(shown(1.0), "1");
        assert_eq!(shown(0.0), "0");
        assert_eq!(shown(0.5), "0.5");
        assert_eq!(shown(0.123_46), "0.1235", "rounded at the fourth decimal");
        assert_eq!(shown(0.000_04), "0", "below the fourth decimal reads as 0");
    }

    #[test]
    fn verify_fails_after_body_changes_and_reseal_repairs_it() {
        let mut p = sample();
        p.skill_body.push_str("more\n");
        assert!(p.verify().is_err());
        p.reseal();
        assert!(p.verify().is_ok());
        assert_eq!(p.id, p.integrity_hash[..16]);
    }
}
