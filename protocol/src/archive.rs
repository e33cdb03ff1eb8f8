//! Archive signatures (`SPEC.md` §15, profile ecp-1.3): an offline archive
//! of skills is signed by the node that exported it — its header (who,
//! when, how many entries) and each entry (a skill's name, hashes and
//! files) apart, so that a tampered archive is refused naming the entry
//! that failed. The keys, key ids and checks are those of origin
//! signatures ([`crate::identity`]); each canonical form's first line names
//! what it signs.
//!
//! Pure: reading and writing the file, and merging its skills, are the
//! node's.

use crate::identity::{NodeKey, SignatureError, verify_text};
use crate::wire::{OriginSignature, SkillPacket, Timestamp};

/// The `format` of an archive, and the first line of its header's canonical form.
pub const ARCHIVE_FORMAT: &str = "ecp-archive-v1";
/// The first line of an entry's canonical form.
pub const ENTRY_TAG: &str = "ecp-archive-entry-v1";

/// The text the exporter signs for the archive as a whole (`SPEC.md`
/// §15.3): [`ARCHIVE_FORMAT`], then `instance`, `createdAt` and the number
/// of entries, one `field:value` line each, every line ending in `\n`.
pub fn header_form(instance: &str, created_at: &Timestamp, entries: usize) -> String {
    format!("{ARCHIVE_FORMAT}\ninstance:{instance}\ncreatedAt:{created_at}\nentries:{entries}\n")
}

/// The text the exporter signs for one entry (`SPEC.md` §15.3):
/// [`ENTRY_TAG`], the archive's `instance` and `createdAt`, then the
/// packet's `name`, `integrity` (`integrityHash`), `bundle`
/// (`bundleDigest`, empty for a plain skill) and `files` (the SHA-256 of
/// each file the entry carries, sorted, comma-separated).
pub fn entry_form(instance: &str, created_at: &Timestamp, packet: &SkillPacket, files: &[&str]) -> String {
    let mut files = files.to_vec();
    files.sort_unstable();
    format!(
        "{ENTRY_TAG}\ninstance:{instance}\ncreatedAt:{created_at}\nname:{}\nintegrity:{}\nbundle:{}\nfiles:{}\n",
        packet.skill_name,
        packet.integrity_hash,
        packet.bundle_digest,
        files.join(",")
    )
}

impl NodeKey {
    /// The exporter's signature of `canonical` (a [`header_form`] or an
    /// [`entry_form`]) as `instance`: `instance`, `keyId`, `publicKey`, `sig`.
    pub fn sign_archive(&self, canonical: &str, instance: &str) -> OriginSignature {
        debug_assert!(canonical.starts_with(ARCHIVE_FORMAT) || canonical.starts_with(ENTRY_TAG));
        self.sign_text(canonical, instance)
    }
}

/// Checks the exporter's `signature` over `canonical` (a [`header_form`] or
/// an [`entry_form`]): key, key id, instance rule and strict verification,
/// as for an origin signature.
pub fn verify(signature: &OriginSignature, canonical: &str) -> Result<(), SignatureError> {
    if !(canonical.starts_with(ARCHIVE_FORMAT) || canonical.starts_with(ENTRY_TAG)) {
        return Err(SignatureError::BadSignature);
    }
    verify_text(signature, canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet() -> SkillPacket {
        SkillPacket {
            skill_name: "bisect".into(),
            integrity_hash: "a".repeat(64),
            bundle_digest: format!("sha256:{}", "b".repeat(64)),
            ..SkillPacket::default()
        }
    }

    #[test]
    fn an_entry_signature_holds_and_breaks_with_any_signed_field() {
        let key = NodeKey::from_seed(&[8; 32]);
        let at = Timestamp::parse("2026-11-26T08:00:00Z").unwrap();
        let files = ["c".repeat(64), "d".repeat(64)];
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        let text = entry_form("exporter", &at, &packet(), &refs);
        let sig = key.sign_archive(&text, "exporter");
        assert_eq!(verify(&sig, &text), Ok(()));
        // The file order does not matter; the files do.
        let reversed: Vec<&str> = refs.iter().rev().copied().collect();
        assert_eq!(verify(&sig, &entry_form("exporter", &at, &packet(), &reversed)), Ok(()));
        let mut other = packet();
        other.integrity_hash = "e".repeat(64);
        assert!(verify(&sig, &entry_form("exporter", &at, &other, &refs)).is_err());
        assert!(verify(&sig, &entry_form("exporter", &at, &packet(), &refs[..1])).is_err());
        // A header's signature is no entry's.
        let header = header_form("exporter", &at, 2);
        assert!(verify(&key.sign_archive(&header, "exporter"), &text).is_err());
        assert_eq!(verify(&key.sign_archive(&header, "exporter"), &header), Ok(()));
        assert!(verify(&key.sign_archive(&header, "exporter"), &header_form("exporter", &at, 1)).is_err());
    }
}
