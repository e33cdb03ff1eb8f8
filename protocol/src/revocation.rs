//! Revocations (`SPEC.md` §14, profile ecp-1.3): an origin withdraws one
//! exact version of one of its skills, named by digest, everywhere. A
//! revocation is signed with the origin's key as its packets are
//! ([`crate::identity`]: the same `originSignature` object, the same
//! checks) over its own canonical form, whose first line names it, so a
//! packet's signature is never a revocation's and back.
//!
//! Pure: which key an origin is known by, and what a node does with a
//! revocation that holds, are the caller's. A revocation travels in the
//! `revocations` member of an update ([`crate::KnowledgeUpdate`]).

use serde::{Deserialize, Serialize};

use crate::identity::{NodeKey, SignatureError, verify_text};
use crate::wire::{OriginSignature, SkillPacket, Timestamp, null_as_default};

/// The first line of a revocation's canonical form.
pub const REVOCATION_TAG: &str = "ecp-revocation-v1";
/// The longest `reason`, in bytes.
pub const MAX_REASON_BYTES: usize = 512;
/// The most revocations one update carries; a node sends its newest.
pub const MAX_REVOCATIONS_PER_UPDATE: usize = 1000;

/// One revoked version (`SPEC.md` §14.2).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Revocation {
    /// The skill.
    #[serde(deserialize_with = "null_as_default")]
    pub skill_name: String,
    /// The version's digest ([`version_digest`]).
    #[serde(deserialize_with = "null_as_default")]
    pub digest: String,
    /// Why, for the people who held it: one line.
    #[serde(deserialize_with = "null_as_default")]
    pub reason: String,
    /// When the origin revoked it.
    pub revoked_at: Timestamp,
    /// The origin's signature over [`canonical_form`]; required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_signature: Option<OriginSignature>,
}

/// Why a revocation does not hold (`SPEC.md` §14.4).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RevocationError {
    /// No `originSignature`.
    #[error(
        "the revocation is not signed (originSignature missing); only its origin's signature makes it hold"
    )]
    Unsigned,
    /// `skillName` breaks the name rule.
    #[error("skillName {0:?} is not a skill name")]
    BadName(String),
    /// `digest` is not a version digest.
    #[error("digest {0:?} is neither 64 lowercase hex digits nor sha256:<64 lowercase hex digits>")]
    BadDigest(String),
    /// `reason` empty, too long or not one line.
    #[error("reason must be 1 to {MAX_REASON_BYTES} bytes of one line without control characters")]
    BadReason,
    /// The signature does not hold over the canonical form.
    #[error(
        "the signature of key {key_id} does not match this revocation (name, digest, revokedAt or reason changed after signing)"
    )]
    Mismatch {
        /// The key said to sign.
        key_id: String,
    },
    /// The signature object itself is bad.
    #[error("{0}")]
    Signature(SignatureError),
}

/// A version's digest (`SPEC.md` §5.7): its `bundleDigest`, or its
/// `integrityHash` when it has no other files.
pub fn version_digest(packet: &SkillPacket) -> &str {
    if packet.bundle_digest.is_empty() { &packet.integrity_hash } else { &packet.bundle_digest }
}

/// The text an origin signs (`SPEC.md` §14.3): [`REVOCATION_TAG`], then
/// `instance`, `name`, `digest`, `revokedAt` (canonical RFC 3339) and
/// `reason`, one `field:value` line each, every line ending in `\n`.
pub fn canonical_form(revocation: &Revocation, instance: &str) -> String {
    format!(
        "{REVOCATION_TAG}\ninstance:{instance}\nname:{}\ndigest:{}\nrevokedAt:{}\nreason:{}\n",
        revocation.skill_name, revocation.digest, revocation.revoked_at, revocation.reason
    )
}

impl NodeKey {
    /// `revocation` signed by this key as spoken by `instance` (set as its
    /// `originSignature`).
    pub fn sign_revocation(&self, revocation: &Revocation, instance: &str) -> OriginSignature {
        self.sign_text(&canonical_form(revocation, instance), instance)
    }
}

/// Checks a revocation's fields and signature: `Ok` with the signature
/// when it holds. Whether its signer is the skill's origin (the key the
/// origin is known by) is the receiver's to decide (`SPEC.md` §14.5).
pub fn verify(revocation: &Revocation) -> Result<&OriginSignature, RevocationError> {
    crate::skill_doc::validate_name(&revocation.skill_name)
        .map_err(|_| RevocationError::BadName(revocation.skill_name.chars().take(128).collect()))?;
    if !is_digest(&revocation.digest) {
        return Err(RevocationError::BadDigest(revocation.digest.chars().take(80).collect()));
    }
    let reason = &revocation.reason;
    if reason.is_empty() || reason.len() > MAX_REASON_BYTES || reason.chars().any(char::is_control) {
        return Err(RevocationError::BadReason);
    }
    let signature = revocation.origin_signature.as_ref().ok_or(RevocationError::Unsigned)?;
    verify_text(signature, &canonical_form(revocation, &signature.instance)).map_err(|e| match e {
        SignatureError::Mismatch { key_id } => RevocationError::Mismatch { key_id },
        other => RevocationError::Signature(other),
    })?;
    Ok(signature)
}

/// 64 lowercase hex digits, bare or after `sha256:`.
fn is_digest(text: &str) -> bool {
    let hex = text.strip_prefix("sha256:").unwrap_or(text);
    hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn revocation() -> Revocation {
        Revocation {
            skill_name: "bisect".into(),
            digest: "a".repeat(64),
            reason: "leaks the token".into(),
            revoked_at: Timestamp::parse("2026-11-26T08:00:00Z").unwrap(),
            origin_signature: None,
        }
    }

    fn signed(key: &NodeKey) -> Revocation {
        let mut r = revocation();
        r.origin_signature = Some(key.sign_revocation(&r, "alice-laptop"));
        r
    }

    #[test]
    fn a_signed_revocation_holds_and_every_signed_field_breaks_it() {
        let key = NodeKey::from_seed(&[5; 32]);
        let r = signed(&key);
        assert_eq!(verify(&r).unwrap().key_id, key.key_id());
        let changes: [fn(&mut Revocation); 5] = [
            |r| r.skill_name = "other".into(),
            |r| r.digest = "b".repeat(64),
            |r| r.revoked_at = Timestamp::parse("2026-11-26T08:00:01Z").unwrap(),
            |r| r.reason = "another reason".into(),
            |r| r.origin_signature.as_mut().unwrap().instance = "bob".into(),
        ];
        for change in changes {
            let mut q = r.clone();
            change(&mut q);
            assert_eq!(verify(&q), Err(RevocationError::Mismatch { key_id: key.key_id() }), "{q:?}");
        }
    }

    #[test]
    fn a_packet_signature_is_not_a_revocation_signature() {
        let key = NodeKey::from_seed(&[6; 32]);
        let mut r = revocation();
        let packet = SkillPacket { skill_name: "bisect".into(), ..SkillPacket::default() };
        r.origin_signature = Some(key.sign(&packet, "alice-laptop"));
        assert!(matches!(verify(&r), Err(RevocationError::Mismatch { .. })));
    }

    #[test]
    fn fields_are_checked_before_the_signature() {
        let key = NodeKey::from_seed(&[7; 32]);
        assert_eq!(verify(&revocation()), Err(RevocationError::Unsigned));
        let resign = |change: fn(&mut Revocation)| {
            let mut r = revocation();
            change(&mut r);
            r.origin_signature = Some(key.sign_revocation(&r, "alice-laptop"));
            verify(&r).map(|_| ())
        };
        assert_eq!(resign(|r| r.reason = "x".repeat(MAX_REASON_BYTES)), Ok(()), "at the limit");
        assert_eq!(resign(|r| r.reason = "x".repeat(MAX_REASON_BYTES + 1)), Err(RevocationError::BadReason));
        assert_eq!(resign(|r| r.reason = String::new()), Err(RevocationError::BadReason));
        assert_eq!(resign(|r| r.reason = "two\nlines".into()), Err(RevocationError::BadReason));
        assert_eq!(resign(|r| r.digest = format!("sha256:{}", "c".repeat(64))), Ok(()));
        assert!(matches!(resign(|r| r.digest = "A".repeat(64)), Err(RevocationError::BadDigest(_))));
        assert!(matches!(resign(|r| r.digest = "a".repeat(63)), Err(RevocationError::BadDigest(_))));
        assert!(matches!(resign(|r| r.skill_name = "../x".into()), Err(RevocationError::BadName(_))));
    }

    #[test]
    fn the_digest_of_a_version_is_its_bundle_digest_else_its_hash() {
        let mut p = SkillPacket { integrity_hash: "d".repeat(64), ..SkillPacket::default() };
        assert_eq!(version_digest(&p), "d".repeat(64));
        p.bundle_digest = format!("sha256:{}", "e".repeat(64));
        assert_eq!(version_digest(&p), p.bundle_digest);
    }
}
