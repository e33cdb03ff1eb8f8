//! `ECPSkillPacket`: one skill in transit, with our additive records of
//! where it has been ([`Provenance`]) and of the files beside it
//! ([`BundleFile`]).

use serde::{Deserialize, Serialize};

use super::{OutcomeClaim, Timestamp, null_as_default};

/// One skill in transit (`ECPSkillPacket`).
///
/// Field order follows the Go struct, so our JSON reads like theirs.
/// Build new packets with [`SkillPacket::new`](crate::packet) helpers in
/// [`crate::packet`], which compute the hashes; decoding never trusts them —
/// call [`SkillPacket::verify`] before using a received packet.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SkillPacket {
    /// Packet id: the first 16 hex characters of the body's SHA-256.
    #[serde(deserialize_with = "null_as_default")]
    pub id: String,
    /// Protocol version, `"1.0"`.
    #[serde(deserialize_with = "null_as_default")]
    pub version: String,
    /// When the packet (this version of the skill) was made.
    pub created_at: Timestamp,
    /// The instance that authored the skill.
    #[serde(deserialize_with = "null_as_default")]
    pub origin_instance: String,
    /// Hex of the first 16 bytes of SHA-256(user id); never the raw id.
    #[serde(deserialize_with = "null_as_default")]
    pub origin_user_hash: String,
    /// `"linux/amd64"` style platform of the origin.
    #[serde(rename = "originOS", deserialize_with = "null_as_default")]
    pub origin_os: String,
    /// Agent version at the origin.
    #[serde(deserialize_with = "null_as_default")]
    pub origin_version: String,
    /// Skill identifier, `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`.
    #[serde(deserialize_with = "null_as_default")]
    pub skill_name: String,
    /// One-line description.
    #[serde(deserialize_with = "null_as_default")]
    pub skill_description: String,
    /// The Markdown playbook, usually with YAML frontmatter.
    #[serde(deserialize_with = "null_as_default")]
    pub skill_body: String,
    /// Patterns that led to the skill, e.g. `workflow:debug:bisect`.
    #[serde(deserialize_with = "null_as_default")]
    pub patterns: Vec<String>,
    /// The sender's confidence in the skill, 0.0–1.0.
    pub confidence: f64,
    /// Lowercase hex SHA-256 of `skill_body` (UTF-8 bytes).
    #[serde(deserialize_with = "null_as_default")]
    pub integrity_hash: String,
    /// Whether the skill may be federated.
    pub shareable: bool,
    /// Categories.
    #[serde(deserialize_with = "null_as_default")]
    pub tags: Vec<String>,
    /// Superseded or withdrawn: a tombstone.
    pub deprecated: bool,
    /// Our addition: where the skill has been. Omitted when unknown, so Go
    /// peers see the packet they know.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// Our addition (ECP/1.3 bundles, `SPEC.md` §12.3): `sha256:<hex>` of
    /// the canonical listing of `files`. Omitted for a plain skill.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_default")]
    pub bundle_digest: String,
    /// Our addition (ECP/1.3 bundles, `SPEC.md` §12.2): every file of the
    /// skill folder, `SKILL.md` included, without contents. Omitted for a
    /// plain skill, so the packet is byte for byte an ECP/1.0 one.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub files: Vec<BundleFile>,
    /// Our addition (ECP/1.3 identity, `SPEC.md` §13): the origin's
    /// signature over the packet's canonical form, forwarded unchanged by
    /// every hop. Omitted when unsigned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_signature: Option<OriginSignature>,
    /// Our addition (ECP/1.3 outcome evidence, `SPEC.md` §16): what
    /// instances observed of the skill's uses, a claim per observer. Never
    /// signed, never stored with the packet; omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub outcomes: Vec<OutcomeClaim>,
}

/// `originSignature` (`SPEC.md` §13.4): who signed a packet, with which
/// key, and the signature ([`crate::identity`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OriginSignature {
    /// The origin the signature speaks for (signed): a relay that rewrites
    /// `originInstance` does not change it.
    #[serde(deserialize_with = "null_as_default")]
    pub instance: String,
    /// The key id of `publicKey` ([`crate::identity::key_id`]).
    #[serde(deserialize_with = "null_as_default")]
    pub key_id: String,
    /// The Ed25519 public key, 64 lowercase hex digits.
    #[serde(deserialize_with = "null_as_default")]
    pub public_key: String,
    /// The Ed25519 signature, 128 lowercase hex digits.
    #[serde(deserialize_with = "null_as_default")]
    pub sig: String,
}

/// One file of a bundle (`SPEC.md` §12.2): where it goes and what it is,
/// not its bytes, which travel as a blob named by `sha256`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BundleFile {
    /// Relative to the skill folder, `/`-separated (rules: `SPEC.md` §12.4).
    #[serde(deserialize_with = "null_as_default")]
    pub path: String,
    /// Length in bytes.
    pub size: u64,
    /// `"0644"` or `"0755"`.
    #[serde(deserialize_with = "null_as_default")]
    pub mode: String,
    /// Lowercase hex SHA-256 of the bytes: the blob's name.
    #[serde(deserialize_with = "null_as_default")]
    pub sha256: String,
}

/// Where a skill has been on its way to us (our additive field `provenance`).
///
/// Every hop lowers the skill's confidence by the receiver's trust in the
/// sender; `originConfidence` keeps the author's own figure so the decay along
/// a chain of peers stays visible.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Provenance {
    /// The confidence the origin gave the skill (absent when unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_confidence: Option<f64>,
    /// How many times the skill has been received: 0 at its origin.
    pub hops: u32,
    /// The instances the skill passed through, origin first.
    #[serde(deserialize_with = "null_as_default")]
    pub path: Vec<String>,
    /// The instance the holder received the skill from.
    #[serde(skip_serializing_if = "String::is_empty", deserialize_with = "null_as_default")]
    pub received_from: String,
    /// When the holder received it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received_at: Option<Timestamp>,
    /// Our addition: `true` when a node on the skill's way received it with
    /// an unverified origin (`SPEC.md` §6.6), so later nodes do not take
    /// `originInstance` for the author either. Omitted when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub origin_unverified: bool,
    /// Our addition (ECP/1.3 proposals, `SPEC.md` §17): on a derived
    /// version, the version of the origin's skill it derives from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub derived_from: Option<crate::proposal::DerivedFrom>,
    /// Our addition (`SPEC.md` §17.6): on a version its origin published by
    /// accepting a proposal, the proposer it credits. Travels unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposed_by: Option<crate::proposal::ProposedBy>,
}
