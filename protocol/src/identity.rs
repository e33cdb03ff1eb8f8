//! Node identity and origin signatures (`SPEC.md` §13, profile ecp-1.3):
//! a node's Ed25519 key, the short checksummed *key id* derived from it
//! (the instance id of a node made since), and the signature an origin
//! puts on every packet it authors, which every hop forwards unchanged.
//!
//! Pure: the caller keeps the key's seed (the node writes it to its data
//! folder); here it signs and verifies. What a receiver does with a packet
//! whose signer it knows or not is decided in the merge
//! ([`crate::merge`], stage `signature`).

use std::fmt;

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};

use crate::wire::{OriginSignature, SkillPacket};

/// The base32 alphabet of key ids (RFC 4648, upper case).
const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/// Bytes of SHA-256(public key) a key id encodes: 120 bits, 24 characters.
const ID_BYTES: usize = 15;
/// Characters per group of a key id, before its check character.
const GROUP: usize = 6;
/// Groups of a key id.
const GROUPS: usize = 4;
/// Length of a key id as written: 4 groups of 6 + 1 check characters, 3 dashes.
pub const KEY_ID_LEN: usize = GROUPS * (GROUP + 1) + GROUPS - 1;
/// The first line of every signed canonical form: names what is signed and
/// its version, so a signature over one kind of text is never valid for another.
pub const CANONICAL_TAG: &str = "ecp-origin-signature-v1";

/// Why an origin signature does not hold (`SPEC.md` §13.5).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// `publicKey` is not 64 hex digits of a valid Ed25519 key.
    #[error("publicKey is not an Ed25519 public key (64 lowercase hex digits)")]
    BadKey,
    /// `keyId` is not the key id of `publicKey`.
    #[error("keyId {key_id:?} is not the id of publicKey (which is {actual})")]
    KeyIdMismatch {
        /// As sent (shortened to a key id's length).
        key_id: String,
        /// Derived from the key.
        actual: String,
    },
    /// `sig` is not 128 hex digits.
    #[error("sig is not an Ed25519 signature (128 lowercase hex digits)")]
    BadSignature,
    /// The signature does not verify over the packet's canonical form.
    #[error(
        "the signature of key {key_id} does not match this packet (name, integrityHash, bundleDigest, \
         createdAt, deprecated, confidence or origin changed after signing)"
    )]
    Mismatch {
        /// The key that was said to sign.
        key_id: String,
    },
    /// `instance` is a key id, but not this key's: an instance made from one
    /// key claimed by another.
    #[error("the origin {instance:?} is the key id of another key than {key_id}")]
    NotTheInstanceKey {
        /// The instance the signature names.
        instance: String,
        /// The key that signed.
        key_id: String,
    },
    /// `instance` is not a valid instance id.
    #[error("instance {0}")]
    BadInstance(String),
}

/// A node's own Ed25519 key. Never printed: `Debug` shows its key id only.
#[derive(Clone)]
pub struct NodeKey(SigningKey);

impl fmt::Debug for NodeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("NodeKey").field(&self.key_id()).finish()
    }
}

impl NodeKey {
    /// The key of a 32-byte secret seed (fresh random bytes for a new key).
    pub fn from_seed(seed: &[u8; 32]) -> NodeKey {
        NodeKey(SigningKey::from_bytes(seed))
    }

    /// The secret seed, for the caller to keep (owner-only).
    pub fn seed(&self) -> [u8; 32] {
        self.0.to_bytes()
    }

    /// The public key, 64 lowercase hex digits.
    pub fn public_hex(&self) -> String {
        hex::encode(self.0.verifying_key().as_bytes())
    }

    /// The Ed25519 signature of `message` (node-key request signatures,
    /// [`crate::node_auth`]).
    pub(crate) fn sign_bytes(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign(message).to_bytes()
    }

    /// The key id ([`key_id`]) of this key.
    pub fn key_id(&self) -> String {
        key_id(self.0.verifying_key().as_bytes())
    }

    /// The signature of `packet` as authored by `instance` with this key:
    /// set it as the packet's `originSignature` after the last change to
    /// the fields of [`canonical_form`].
    pub fn sign(&self, packet: &SkillPacket, instance: &str) -> OriginSignature {
        self.sign_text(&canonical_form(packet, instance), instance)
    }

    /// The signature of `canonical` (a canonical form of this crate, whose
    /// first line names what it is) as spoken by `instance` with this key.
    pub(crate) fn sign_text(&self, canonical: &str, instance: &str) -> OriginSignature {
        let sig = self.0.sign(canonical.as_bytes());
        OriginSignature {
            instance: instance.to_owned(),
            key_id: self.key_id(),
            public_key: self.public_hex(),
            sig: hex::encode(sig.to_bytes()),
        }
    }
}

/// The key id of an Ed25519 public key (`SPEC.md` §13.2): the first 15
/// bytes of its SHA-256 in base32 (24 characters), in four groups of six,
/// each followed by a Luhn mod 32 check character, joined by dashes —
/// `XXXXXXC-XXXXXXC-XXXXXXC-XXXXXXC`. Short enough to read out and type;
/// a mistyped character fails its group's check.
pub fn key_id(public_key: &[u8; 32]) -> String {
    let digest = Sha256::digest(public_key);
    let plain = base32(&digest[..ID_BYTES]);
    let groups: Vec<String> = plain
        .as_bytes()
        .chunks(GROUP)
        .map(|group| {
            let mut text = String::from_utf8(group.to_vec()).expect("base32 is ASCII");
            text.push(char::from(luhn32(group)));
            text
        })
        .collect();
    groups.join("-")
}

/// The key id of a public key written as 64 lowercase hex digits (as
/// `publicKey` of a manifest or signature); `None` when it is not a valid
/// Ed25519 key.
pub fn key_id_of(public_hex: &str) -> Option<String> {
    let key = decode_hex::<32>(public_hex)?;
    VerifyingKey::from_bytes(&key).ok()?;
    Some(key_id(&key))
}

/// `text` as a key id in its written form (upper case, dashes), when it is
/// one: case, spaces and dashes are forgiven, a wrong check character is not.
pub fn parse_key_id(text: &str) -> Option<String> {
    let plain: Vec<u8> =
        text.bytes().filter(|b| !matches!(b, b'-' | b' ')).map(|b| b.to_ascii_uppercase()).collect();
    if plain.len() != GROUPS * (GROUP + 1) || !plain.iter().all(|b| ALPHABET.contains(b)) {
        return None;
    }
    let mut groups = Vec::with_capacity(GROUPS);
    for group in plain.chunks(GROUP + 1) {
        let (data, check) = group.split_at(GROUP);
        if luhn32(data) != check[0] {
            return None;
        }
        groups.push(String::from_utf8(group.to_vec()).ok()?);
    }
    Some(groups.join("-"))
}

/// Whether `instance` is written as a key id (then only that key may sign for it).
pub fn is_key_id(instance: &str) -> bool {
    instance.len() == KEY_ID_LEN && parse_key_id(instance).as_deref() == Some(instance)
}

/// The text an origin signs (`SPEC.md` §13.3): one `field:value` line per
/// field after [`CANONICAL_TAG`], each ending in `\n`, in this order —
/// `instance` (the origin named by the signature), `name`, `integrity`,
/// `bundle` (empty for a plain skill), `createdAt` (RFC 3339 UTC, as
/// the wire writes it), `deprecated` (`true`/`false`) and `confidence` (the
/// confidence as authored, in millionths, rounded: `provenance.originConfidence`
/// once the packet has travelled, else `confidence`).
pub fn canonical_form(packet: &SkillPacket, instance: &str) -> String {
    let confidence = authored_confidence(packet);
    let millionths = (confidence.clamp(0.0, 1.0) * 1_000_000.0).round() as u32;
    format!(
        "{CANONICAL_TAG}\ninstance:{instance}\nname:{}\nintegrity:{}\nbundle:{}\ncreatedAt:{}\ndeprecated:{}\nconfidence:{millionths}\n",
        packet.skill_name, packet.integrity_hash, packet.bundle_digest, packet.created_at, packet.deprecated,
    )
}

/// The confidence the origin gave the packet: kept in provenance once a
/// receiver lowered `confidence`.
fn authored_confidence(packet: &SkillPacket) -> f64 {
    let authored = packet.provenance.as_ref().and_then(|p| p.origin_confidence).unwrap_or(packet.confidence);
    if authored.is_finite() { authored } else { 0.0 }
}

/// Checks the packet's `originSignature`, if any: `Ok(None)` for an
/// unsigned packet, `Ok(Some(signature))` when it holds — its key id is its
/// key's, the instance it names is no other key's id, and the signature
/// verifies over [`canonical_form`].
pub fn verify(packet: &SkillPacket) -> Result<Option<&OriginSignature>, SignatureError> {
    let Some(signature) = &packet.origin_signature else { return Ok(None) };
    verify_text(signature, &canonical_form(packet, &signature.instance))?;
    Ok(Some(signature))
}

/// Checks `signature` over the canonical text `canonical` (which names the
/// signature's `instance`): its key id is its key's, the instance it names
/// is no other key's id, and the signature verifies — strictly.
pub(crate) fn verify_text(signature: &OriginSignature, canonical: &str) -> Result<(), SignatureError> {
    crate::merge::check_instance_id(&signature.instance).map_err(SignatureError::BadInstance)?;
    let key = decode_hex::<32>(&signature.public_key).ok_or(SignatureError::BadKey)?;
    let verifying = VerifyingKey::from_bytes(&key).map_err(|_| SignatureError::BadKey)?;
    let actual = key_id(&key);
    if signature.key_id != actual {
        let key_id = signature.key_id.chars().take(KEY_ID_LEN).collect();
        return Err(SignatureError::KeyIdMismatch { key_id, actual });
    }
    if is_key_id(&signature.instance) && signature.instance != actual {
        return Err(SignatureError::NotTheInstanceKey {
            instance: signature.instance.clone(),
            key_id: actual,
        });
    }
    let sig = decode_hex::<64>(&signature.sig).ok_or(SignatureError::BadSignature)?;
    // Strict: no malleable signatures, no small-order keys.
    verifying
        .verify_strict(canonical.as_bytes(), &Signature::from_bytes(&sig))
        .map_err(|_| SignatureError::Mismatch { key_id: actual })
}

/// Exactly `N` bytes of lowercase hex.
pub(crate) fn decode_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N || text.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let mut out = [0u8; N];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}

/// RFC 4648 base32 without padding.
fn base32(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 8 / 5 + 1);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for &b in bytes {
        buffer = (buffer << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(ALPHABET[((buffer >> bits) & 31) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[((buffer << (5 - bits)) & 31) as usize]));
    }
    out
}

/// The Luhn mod 32 check character of `group` (characters of [`ALPHABET`]).
fn luhn32(group: &[u8]) -> u8 {
    let value = |c: u8| ALPHABET.iter().position(|&a| a == c).unwrap_or(0) as u32;
    let mut factor = 2;
    let mut sum = 0;
    for &c in group.iter().rev() {
        let addend = factor * value(c);
        factor = if factor == 2 { 1 } else { 2 };
        sum += addend / 32 + addend % 32;
    }
    ALPHABET[((32 - sum % 32) % 32) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Origin;
    use crate::wire::Timestamp;

    fn packet() -> SkillPacket {
        let origin = Origin::new("alice-laptop", "u", "linux/amd64", "1");
        let at = Timestamp::parse("2026-11-20T10:00:00Z").unwrap();
        SkillPacket::new(&origin, "demo", "A demo", "---\nname: demo\n---\nbody\n", 0.9, at)
    }

    #[test]
    fn a_key_id_has_four_checked_groups_and_reads_back_in_any_case() {
        let key = NodeKey::from_seed(&[7; 32]);
        let id = key.key_id();
        assert_eq!(id.len(), KEY_ID_LEN);
        assert_eq!(id.matches('-').count(), 3);
        assert!(is_key_id(&id));
        assert_eq!(parse_key_id(&id.to_lowercase().replace('-', "")), Some(id.clone()));
        // Every single-character typo is caught by its group's check.
        for (i, c) in id.char_indices().filter(|(_, c)| *c != '-') {
            for other in ALPHABET.iter().map(|&b| char::from(b)).filter(|&o| o != c) {
                let mut typo = id.clone();
                typo.replace_range(i..=i, &other.to_string());
                assert_eq!(parse_key_id(&typo), None, "{typo}");
            }
        }
        assert_eq!(parse_key_id(&id[..KEY_ID_LEN - 1]), None, "one character short");
        assert_eq!(parse_key_id(&format!("{id}A")), None, "one character long");
        assert!(!is_key_id("alice-laptop"));
    }

    #[test]
    fn a_signed_packet_verifies_and_every_signed_field_breaks_it() {
        let key = NodeKey::from_seed(&[1; 32]);
        let mut p = packet();
        p.origin_signature = Some(key.sign(&p, "alice-laptop"));
        assert_eq!(verify(&p).unwrap().unwrap().key_id, key.key_id());
        // Not signed: instance on the packet, tags, description.
        let mut relayed = p.clone();
        relayed.origin_instance = "ok-agent".into();
        relayed.tags = vec!["x".into()];
        assert!(verify(&relayed).is_ok());
        let changes: [fn(&mut SkillPacket); 6] = [
            |p| p.skill_name = "other".into(),
            |p| p.integrity_hash = "0".repeat(64),
            |p| p.bundle_digest = "sha256:00".into(),
            |p| p.created_at = Timestamp::parse("2026-11-20T10:00:01Z").unwrap(),
            |p| p.deprecated = true,
            |p| p.confidence = 0.95,
        ];
        for change in changes {
            let mut q = p.clone();
            change(&mut q);
            assert_eq!(verify(&q), Err(SignatureError::Mismatch { key_id: key.key_id() }));
        }
        let mut claimed = p.clone();
        claimed.origin_signature.as_mut().unwrap().instance = "bob".into();
        assert!(matches!(verify(&claimed), Err(SignatureError::Mismatch { .. })));
    }

    #[test]
    fn lowered_confidence_still_verifies_through_the_authored_one() {
        let key = NodeKey::from_seed(&[2; 32]);
        let mut p = packet();
        p.origin_signature = Some(key.sign(&p, "alice-laptop"));
        p.confidence = 0.54;
        p.provenance = Some(crate::wire::Provenance { origin_confidence: Some(0.9), ..Default::default() });
        assert!(verify(&p).is_ok());
    }

    #[test]
    fn another_key_or_a_forged_key_id_is_refused() {
        let (a, b) = (NodeKey::from_seed(&[3; 32]), NodeKey::from_seed(&[4; 32]));
        let mut p = packet();
        let mut sig = a.sign(&p, "alice-laptop");
        sig.key_id = b.key_id();
        p.origin_signature = Some(sig);
        assert!(matches!(verify(&p), Err(SignatureError::KeyIdMismatch { .. })));
        // A key-id instance signed by another key.
        let mut q = packet();
        q.origin_signature = Some(b.sign(&q, &a.key_id()));
        assert!(matches!(verify(&q), Err(SignatureError::NotTheInstanceKey { .. })));
        let mut r = packet();
        let mut sig = a.sign(&r, "alice-laptop");
        sig.sig.truncate(126);
        r.origin_signature = Some(sig);
        assert_eq!(verify(&r), Err(SignatureError::BadSignature));
        let mut s = packet();
        let mut sig = a.sign(&s, "alice-laptop");
        sig.public_key = sig.public_key.to_uppercase();
        s.origin_signature = Some(sig);
        assert_eq!(verify(&s), Err(SignatureError::BadKey));
    }
}
