//! What the user does with a skill's versions (#25): read its history, pin
//! it to one version and unpin it, roll it back — and what the skills
//! folder shows because of a pin. The CLI calls these on the store when no
//! server runs on its data folder; the `/v1/` endpoints call them inside
//! the server.
//!
//! A pin is this node's alone: newer versions that arrive are stored (and
//! served to peers as usual) and shown as available, but the skill's file
//! keeps the pinned version until `skill unpin`. Only received skills are
//! pinned: a local skill's versions are the user's own edits.
//!
//! Rollback on a node that is not the skill's origin restores an earlier
//! version locally and pins it; on the origin it publishes a new version
//! with the earlier content (a newer `createdAt`), so every peer follows.
//! Either way the store changes and the projection writes the file, so the
//! importer takes it for the node's own write, never for a hand edit.
//!
//! Revocation (`SPEC.md` §14) is the origin's alone: [`revoke`] signs and
//! records it, and goes back from the revoked version as a rollback does;
//! peers take it in their merges (`crate::intake`). A revoked version is
//! never served ([`servable`]) and is shown as revoked in the history.

use std::borrow::Cow;
use std::collections::HashMap;

use ecp_protocol::revocation::Revocation;
use ecp_protocol::{SkillKind, SkillPacket};
use serde::Serialize;

use crate::library::Library;
use crate::store::{Change, Hold, Pick, Source, Store, StoreError, VersionEntry, digest_of};

/// Why a version action could not be done; each says what to do instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VersionError {
    /// No such skill.
    #[error("no skill named {0:?}; `ecp-node skill list` shows the names")]
    NoSuchSkill(String),
    /// No kept version matches.
    #[error("{name:?} has no kept version {pick}; `ecp-node skill history {name}` lists them")]
    NoSuchVersion {
        /// The skill.
        name: String,
        /// The version or digest asked for.
        pick: String,
    },
    /// The version asked for is a tombstone.
    #[error("version {version} of {name:?} is a tombstone; pick a version with content")]
    Tombstone {
        /// The skill.
        name: String,
        /// Its number.
        version: i64,
    },
    /// Pinning a local skill: its versions are the user's own edits.
    #[error(
        "{0:?} is this node's own skill: its versions are your edits, so it is not pinned; `ecp-node skill \
         rollback {0}` publishes an earlier version again"
    )]
    Local(String),
    /// No earlier version to roll back to.
    #[error("{0:?} has no earlier kept version to roll back to; `ecp-node skill history {0}` lists them")]
    NothingEarlier(String),
    /// Revoking a received skill: only its origin may.
    #[error(
        "{0:?} was received from another node: only its origin revokes its versions; `ecp-node skill pin` or \
         `skill rollback` keeps a version here"
    )]
    NotOrigin(String),
    /// The version is revoked already.
    #[error("version {digest} of {name:?} is revoked already")]
    AlreadyRevoked {
        /// The skill.
        name: String,
        /// The version's digest.
        digest: String,
    },
    /// The reason cannot travel.
    #[error("{0}")]
    BadReason(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a pin, unpin or rollback did, as the CLI prints it and `/v1/` answers.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Done {
    /// The skill.
    pub name: String,
    /// `pinned`, `unpinned`, `not-pinned`, `rolled-back` (pinned here) or `published` (origin).
    pub action: String,
    /// The version the skill's file now shows (this node's number).
    pub version: i64,
    /// Its digest.
    pub digest: String,
    /// A newer version stored but not shown, if any (this node's number).
    pub available: Option<i64>,
}

/// A skill's history: its kept versions, oldest first.
pub fn history(library: &Library, name: &str) -> Result<Vec<VersionEntry>, VersionError> {
    library.store().history(name)?.ok_or_else(|| VersionError::NoSuchSkill(name.to_owned()))
}

/// The current packet and kind of `name`.
fn current(store: &Store, name: &str) -> Result<(SkillPacket, SkillKind, i64), VersionError> {
    let (record, packet, _) = store.skill(name)?.ok_or_else(|| VersionError::NoSuchSkill(name.to_owned()))?;
    Ok((packet, record.skill_kind(), record.version))
}

/// The kept, non-tombstone version `pick` names.
fn picked(store: &Store, name: &str, pick: &Pick) -> Result<(i64, SkillPacket), VersionError> {
    let shown = match pick {
        Pick::Number(n) => n.to_string(),
        Pick::Digest(d) => d.clone(),
    };
    let (version, packet) = store
        .version_packet(name, pick)?
        .ok_or_else(|| VersionError::NoSuchVersion { name: name.to_owned(), pick: shown })?;
    if packet.deprecated {
        return Err(VersionError::Tombstone { name: name.to_owned(), version });
    }
    Ok((version, packet))
}

/// Pins a received skill to the version `pick` names (its current one by
/// default) and writes that version to the folder; blocking.
pub fn pin(library: &Library, name: &str, pick: Option<&Pick>) -> Result<Done, VersionError> {
    let (current_packet, kind, current_version) = current(library.store(), name)?;
    if kind == SkillKind::Local {
        return Err(VersionError::Local(name.to_owned()));
    }
    let (version, packet) = match pick {
        Some(pick) => picked(library.store(), name, pick)?,
        None if current_packet.deprecated => {
            return Err(VersionError::Tombstone { name: name.to_owned(), version: current_version });
        }
        None => (current_version, current_packet),
    };
    hold(library, name, version, &packet, kind, "", "pinned", current_version)
}

/// Records the pin and writes the pinned version to the folder.
#[allow(clippy::too_many_arguments)]
fn hold(
    library: &Library,
    name: &str,
    version: i64,
    packet: &SkillPacket,
    kind: SkillKind,
    why: &str,
    action: &str,
    current_version: i64,
) -> Result<Done, VersionError> {
    let digest = digest_of(packet).to_owned();
    let hold = Hold { name: name.to_owned(), version, digest: digest.clone() };
    library.store().pin(&hold, &Source::Operator, why)?;
    if let Err(e) = library.projection().write(packet, kind) {
        tracing::error!(error = %e, "skills folder not fully updated");
    }
    let available = (current_version > version).then_some(current_version);
    Ok(Done { name: name.to_owned(), action: action.to_owned(), version, digest, available })
}

/// Unpins `name` and writes its current version to the folder (removes
/// its file when that is a tombstone); blocking.
pub fn unpin(library: &Library, name: &str) -> Result<Done, VersionError> {
    let (packet, kind, version) = current(library.store(), name)?;
    let was = library.store().unpin(name, &Source::Operator)?;
    let written = if packet.deprecated {
        library.projection().remove(name)
    } else {
        library.projection().write(&packet, kind)
    };
    if let Err(e) = written {
        tracing::error!(error = %e, "skills folder not fully updated");
    }
    let action = if was { "unpinned" } else { "not-pinned" };
    Ok(Done {
        name: name.to_owned(),
        action: action.into(),
        version,
        digest: digest_of(&packet).into(),
        available: None,
    })
}

/// Rolls `name` back to the version `pick` names (by default the newest
/// kept version older than the one shown, with other content); blocking.
/// A received skill is pinned to it here; a local one (this node is its
/// origin) is published again as a new version that peers take.
pub fn rollback(library: &Library, name: &str, pick: Option<&Pick>) -> Result<Done, VersionError> {
    let store = library.store();
    let (_, kind, current_version) = current(store, name)?;
    let shown = store.pins()?.remove(name).map_or(current_version, |h| h.version);
    let (version, packet) = match pick {
        Some(pick) => picked(store, name, pick)?,
        None => {
            let entries = history(library, name)?;
            let shown_digest = entries.iter().find(|e| e.version == shown).map(|e| e.digest.clone());
            let earlier = entries
                .iter()
                .rev()
                .find(|e| e.version < shown && !e.deprecated && Some(&e.digest) != shown_digest.as_ref())
                .ok_or_else(|| VersionError::NothingEarlier(name.to_owned()))?;
            picked(store, name, &Pick::Number(earlier.version))?
        }
    };
    let why = format!(" — rolled back from version {shown}");
    if kind == SkillKind::External {
        return hold(library, name, version, &packet, kind, &why, "rolled-back", current_version);
    }
    // The origin: the earlier content as a new version, newer than every
    // copy peers hold, so that they follow.
    let mut again = packet;
    again.created_at = crate::store::now().max(again.created_at);
    library.put_local(&again, Source::Operator)?;
    let (now, _, new_version) = current(store, name)?;
    store.transaction(|tx| {
        tx.audit(&Source::Operator, name, "rollback", &format!("to version {version}{why}"))
    })?;
    Ok(Done {
        name: name.to_owned(),
        action: "published".into(),
        version: new_version,
        digest: digest_of(&now).into(),
        available: None,
    })
}

/// Revokes version `pick` of this node's own skill `name` (`SPEC.md` §14):
/// the revocation, signed with the node's key, is recorded (and so served
/// and pushed to peers); when it is the version the skill shows, the
/// newest earlier version that is not revoked is published again as a new
/// version (as a rollback on the origin does), or the skill is withdrawn
/// when there is none. Blocking.
pub fn revoke(library: &Library, name: &str, pick: &Pick, reason: &str) -> Result<Done, VersionError> {
    let store = library.store();
    let (packet, kind, _) = current(store, name)?;
    if kind != SkillKind::Local {
        return Err(VersionError::NotOrigin(name.to_owned()));
    }
    let (version, revoked) = picked(store, name, pick)?;
    let digest = digest_of(&revoked).to_owned();
    let mut revocation = Revocation {
        skill_name: name.to_owned(),
        digest: digest.clone(),
        reason: reason.trim().to_owned(),
        revoked_at: crate::store::now(),
        origin_signature: None,
    };
    store.sign_revocation(&mut revocation);
    ecp_protocol::revocation::verify(&revocation).map_err(|e| VersionError::BadReason(e.to_string()))?;
    let seq = store.transaction(|tx| {
        let seq = tx.record_revocation(&revocation)?;
        if seq.is_some() {
            tx.audit(
                &Source::Operator,
                name,
                "revoke",
                &format!("version {version} ({digest}): {}", revocation.reason),
            )?;
        }
        Ok(seq)
    })?;
    let Some(seq) = seq else {
        return Err(VersionError::AlreadyRevoked { name: name.to_owned(), digest });
    };
    tracing::warn!(skill = %name, %digest, reason = %revocation.reason, "version revoked");
    if digest_of(&packet) == digest && !packet.deprecated {
        let revoked_digests = store.revoked_digests(name)?;
        let earlier = history(library, name)?
            .into_iter()
            .rev()
            .find(|e| !e.deprecated && !revoked_digests.contains_key(&e.digest));
        match earlier {
            Some(e) => {
                let (_, mut again) = picked(store, name, &Pick::Number(e.version))?;
                again.created_at = crate::store::now().max(packet.created_at);
                library.put_local(&again, Source::Operator)?;
            }
            None => {
                library.tombstone(name, Source::Operator)?;
            }
        }
    }
    library.announce(seq);
    let (now, _, now_version) = current(store, name)?;
    Ok(Done {
        name: name.to_owned(),
        action: if now.deprecated { "revoked-removed" } else { "revoked" }.into(),
        version: now_version,
        digest: digest_of(&now).into(),
        available: None,
    })
}

/// `changes` with those of pinned skills withheld from the folder: a
/// pinned skill's file keeps its version whatever arrives.
pub(crate) fn hold_pinned<'a>(store: &Store, changes: &'a [Change]) -> Cow<'a, [Change]> {
    let pins = match store.pins() {
        Ok(pins) if !pins.is_empty() => pins,
        Ok(_) => return Cow::Borrowed(changes),
        Err(e) => {
            tracing::error!(error = %e, "cannot read the pins; changes written as they come");
            return Cow::Borrowed(changes);
        }
    };
    Cow::Owned(
        changes
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.withheld |=
                    pins.get(&c.packet.skill_name).is_some_and(|p| p.digest != digest_of(&c.packet));
                c
            })
            .collect(),
    )
}

/// `current` (every skill's current packet and kind) with each pinned
/// skill's pinned version instead: what the folder shows.
pub(crate) fn with_pins(
    store: &Store,
    mut current: Vec<(SkillPacket, SkillKind)>,
) -> Result<Vec<(SkillPacket, SkillKind)>, StoreError> {
    let pins: HashMap<String, Hold> = store.pins()?;
    if pins.is_empty() {
        return Ok(current);
    }
    for (packet, _) in &mut current {
        let Some(pin) = pins.get(&packet.skill_name) else { continue };
        if pin.digest == digest_of(packet) {
            continue;
        }
        match store.version_packet(&pin.name, &Pick::Number(pin.version))? {
            Some((_, pinned)) => *packet = pinned,
            None => {
                tracing::warn!(skill = %pin.name, "the pinned version is no longer kept; the current one is shown")
            }
        }
    }
    Ok(current)
}

/// The version of `name` whose digest is `digest`, as `GET
/// /ecp/skills/{name}?digest=HEX` serves it (`SPEC.md` §5.7): `None`
/// unless the skill is served to peers now (not private, not withdrawn, not
/// a tombstone, shared again when received) and that version is not a
/// tombstone or revoked and would be shared itself — an earlier version of a local
/// skill is decided again, so one that held a secret never leaves. Blocking.
pub fn servable(library: &Library, name: &str, digest: &str) -> Result<Option<SkillPacket>, StoreError> {
    let store = library.store();
    let Some((record, _, _)) = store.skill(name)? else { return Ok(None) };
    if !record.shareable || record.deprecated {
        return Ok(None);
    }
    let Some((_, packet)) = store.version_packet(name, &Pick::Digest(digest.to_owned()))? else {
        return Ok(None);
    };
    if packet.deprecated || store.revoked_digests(name)?.contains_key(digest_of(&packet)) {
        return Ok(None);
    }
    if record.skill_kind() == SkillKind::Local {
        let decider = library.sharing().decider(store)?;
        if decider.decide(&packet, library.folder_of(name).as_ref()).private.is_some() {
            return Ok(None);
        }
    }
    Ok(Some(packet))
}
