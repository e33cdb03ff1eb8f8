//! Offline archives (#25 item 5, `SPEC.md` §15): skills carried between
//! machines with no network path to each other, in one self-contained
//! JSON file — each skill's packet as this node serves it (provenance and
//! origin signature included), the bytes of its bundle's files, and the
//! exporting node's signature over the archive's header and over each
//! entry ([`ecp_protocol::archive`]).
//!
//! Import checks the whole file before it changes anything — its size and
//! every entry's, the header's signature, each entry's signature and the
//! SHA-256 of each file it carries — and refuses a tampered archive naming
//! the skill whose entry failed. Then it stores the files and merges the
//! packets as a peer update from the exporter: the same checks, with the
//! trust of the configured peer whose instance and key the exporter has,
//! else the trust asked for.

use std::collections::{BTreeMap, HashMap};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ecp_protocol::archive::{ARCHIVE_FORMAT, entry_form, header_form, verify};
use ecp_protocol::identity::is_key_id;
use ecp_protocol::merge::SenderKind;
use ecp_protocol::wire::OriginSignature;
use ecp_protocol::{KnowledgeUpdate, MergeResult, SkillPacket, StandardPolicy, Timestamp};
use serde::{Deserialize, Serialize};

use crate::intake::Sender;
use crate::library::Library;
use crate::store::{StoreError, now};

/// The bundle's own `SKILL.md`, which travels as the packet's body.
const SKILL_MD: &str = "SKILL.md";

/// How large an archive, and each of its entries, may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveLimits {
    /// The whole file, in bytes.
    pub archive_bytes: u64,
    /// One entry: its body and the bytes of its files (decoded).
    pub entry_bytes: u64,
}

/// The defaults: 1 GiB per archive, 64 MiB per skill (a bundle's files
/// are at most 16 MiB each by default, `SPEC.md` §12.6).
pub const DEFAULT_LIMITS: ArchiveLimits = ArchiveLimits { archive_bytes: 1 << 30, entry_bytes: 64 << 20 };

/// An archive as written (`SPEC.md` §15.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Archive {
    /// [`ARCHIVE_FORMAT`].
    pub format: String,
    /// When it was exported.
    pub created_at: Timestamp,
    /// The exporter and its signature over the header.
    pub exporter: OriginSignature,
    /// The skills.
    pub entries: Vec<Entry>,
}

/// One skill of an archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The packet, as the exporter serves it.
    pub packet: SkillPacket,
    /// The bytes of its bundle's files (`SKILL.md` aside), base64, by SHA-256.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// The exporter's signature over the entry, 128 hex digits.
    pub sig: String,
}

/// Why an archive could not be written or taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArchiveError {
    /// A skill asked for is not one this node serves.
    #[error(
        "{0:?} is not a skill this node shares (unknown, withdrawn, private or not shared again); `ecp-node skill \
         list` shows them"
    )]
    NotShared(String),
    /// The file is over its size limit.
    #[error("the archive is {size} bytes, over the limit of {limit}; split it (archive export NAMES…)")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Not an archive.
    #[error("not an ECP archive: {0}")]
    NotAnArchive(String),
    /// The header's signature does not hold.
    #[error("the archive was changed after it was signed, or not signed by the key it names: {0}")]
    Header(String),
    /// An entry failed its check.
    #[error("the archive's entry for {name:?} was refused: {why}; nothing was imported")]
    Tampered {
        /// The skill.
        name: String,
        /// What failed.
        why: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Exports the skills `names` (every skill this node serves when empty),
/// signed with the node's key; blocking.
pub fn export(library: &Library, names: &[String]) -> Result<Archive, ArchiveError> {
    let store = library.store();
    let served = store.served_packets(None)?;
    let mut packets: BTreeMap<String, SkillPacket> = BTreeMap::new();
    for json in &served.packets {
        let packet: SkillPacket =
            serde_json::from_str(json).map_err(|e| StoreError::Corrupt(format!("a stored packet: {e}")))?;
        packets.insert(packet.skill_name.clone(), packet);
    }
    let chosen: Vec<SkillPacket> = if names.is_empty() {
        packets.into_values().collect()
    } else {
        let mut chosen = Vec::new();
        for name in names {
            chosen.push(packets.remove(name).ok_or_else(|| ArchiveError::NotShared(name.clone()))?);
        }
        chosen
    };
    let (key, instance, created_at) = (store.node_key(), store.instance_id(), now());
    let mut entries = Vec::with_capacity(chosen.len());
    for packet in chosen {
        let mut files = BTreeMap::new();
        for file in packet.files.iter().filter(|f| f.path != SKILL_MD) {
            let bytes = store.blob_files().read(&file.sha256).map_err(StoreError::from)?;
            files.insert(file.sha256.clone(), BASE64.encode(bytes));
        }
        let shas: Vec<&str> = files.keys().map(String::as_str).collect();
        let sig = key.sign_archive(&entry_form(instance, &created_at, &packet, &shas), instance).sig;
        entries.push(Entry { packet, files, sig });
    }
    let exporter = key.sign_archive(&header_form(instance, &created_at, entries.len()), instance);
    Ok(Archive { format: ARCHIVE_FORMAT.to_owned(), created_at, exporter, entries })
}

/// An archive read and checked: nothing of it is taken yet.
#[derive(Debug)]
pub struct Checked {
    /// The exporter as it signed.
    pub exporter: OriginSignature,
    /// The packets, in the archive's order.
    pub packets: Vec<SkillPacket>,
    /// The files' bytes.
    pub files: Vec<Vec<u8>>,
}

/// Reads and checks `bytes` as an archive under `limits`: every entry's
/// size, signature and files, before anything is taken.
pub fn check(bytes: &[u8], limits: ArchiveLimits) -> Result<Checked, ArchiveError> {
    let size = bytes.len() as u64;
    if size > limits.archive_bytes {
        return Err(ArchiveError::TooLarge { size, limit: limits.archive_bytes });
    }
    let archive: Archive =
        serde_json::from_slice(bytes).map_err(|e| ArchiveError::NotAnArchive(e.to_string()))?;
    if archive.format != ARCHIVE_FORMAT {
        return Err(ArchiveError::NotAnArchive(format!(
            "format {:?}, not {ARCHIVE_FORMAT:?}",
            archive.format.chars().take(40).collect::<String>()
        )));
    }
    let (exporter, at) = (&archive.exporter, &archive.created_at);
    verify(exporter, &header_form(&exporter.instance, at, archive.entries.len()))
        .map_err(|e| ArchiveError::Header(e.to_string()))?;
    let mut files = Vec::new();
    let mut packets = Vec::with_capacity(archive.entries.len());
    for entry in archive.entries {
        let name = entry.packet.skill_name.chars().take(128).collect::<String>();
        let refuse = |why: String| ArchiveError::Tampered { name: name.clone(), why };
        let mut entry_size = entry.packet.skill_body.len() as u64;
        let mut decoded = Vec::with_capacity(entry.files.len());
        for (sha, text) in &entry.files {
            let bytes = BASE64.decode(text).map_err(|_| refuse(format!("file {sha:.16}… is not base64")))?;
            entry_size += bytes.len() as u64;
            if entry_size > limits.entry_bytes {
                return Err(refuse(format!("it is over {} bytes", limits.entry_bytes)));
            }
            if ecp_protocol::integrity::sha256_hex(&bytes) != *sha {
                return Err(refuse(format!("file {sha:.16}… does not hold the bytes its SHA-256 names")));
            }
            decoded.push(bytes);
        }
        if entry_size > limits.entry_bytes {
            return Err(refuse(format!("it is over {} bytes", limits.entry_bytes)));
        }
        if let Some(f) =
            entry.packet.files.iter().find(|f| f.path != SKILL_MD && !entry.files.contains_key(&f.sha256))
        {
            return Err(refuse(format!("its file {} is not in the archive", f.path)));
        }
        let shas: Vec<&str> = entry.files.keys().map(String::as_str).collect();
        let signature = OriginSignature { sig: entry.sig.clone(), ..exporter.clone() };
        verify(&signature, &entry_form(&exporter.instance, at, &entry.packet, &shas))
            .map_err(|_| refuse("changed after the exporter signed it".into()))?;
        files.extend(decoded);
        packets.push(entry.packet);
    }
    Ok(Checked { exporter: archive.exporter, packets, files })
}

/// The trust an archive's skills are merged with: that of the configured
/// peer (`peers`: instance → trust) whose instance exported it, when the
/// exporter's key is the key that instance is known by here (or the
/// instance is the key's own id); else `fallback`.
pub fn exporter_trust(
    library: &Library,
    exporter: &OriginSignature,
    peers: &HashMap<String, f64>,
    fallback: f64,
) -> Result<f64, StoreError> {
    let Some(&trust) = peers.get(&exporter.instance) else { return Ok(fallback) };
    let known = library.store().origin_keys()?.into_iter().find(|k| k.instance == exporter.instance);
    let proven = is_key_id(&exporter.instance) || known.is_some_and(|k| k.key_id == exporter.key_id);
    Ok(if proven { trust } else { fallback })
}

/// Takes a checked archive: stores its files, then merges its packets as
/// an update from the exporter, with `trust`; blocking.
pub fn import(
    library: &Library,
    checked: Checked,
    trust: f64,
    reshare: bool,
    policy: &StandardPolicy,
) -> Result<MergeResult, StoreError> {
    let account = format!("archive:{}", checked.exporter.key_id);
    library.store().put_blobs_bytes(
        checked.files.iter().map(Vec::as_slice),
        &account,
        &library.limits().blobs,
    )?;
    let sender = Sender {
        instance: checked.exporter.instance.clone(),
        account,
        trust,
        reshare,
        kind: SenderKind::Current,
    };
    let update = KnowledgeUpdate {
        peer_instance: checked.exporter.instance,
        skills: checked.packets,
        ..KnowledgeUpdate::default()
    };
    library.merge(update, &sender, policy)
}

#[cfg(test)]
mod tests;
