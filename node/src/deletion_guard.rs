//! The deletion guard: a cleared skills folder cannot delete the mesh's skills.
//!
//! - Marker: `serve` writes [`MARKER_FILE`] (`.ecp-folder`, the node's
//!   instance id as JSON) into each skills folder the first time it imports
//!   it. A folder the node marked whose marker is gone is *unavailable*
//!   (an empty mount point, a sync tool's temporary state), never empty:
//!   nothing is tombstoned while it is so ([`check_marker`]). A marker
//!   written by another node is adopted: the node writes its own and
//!   imports every skill there as its own. An empty marker (or one that
//!   does not parse) is the user's word that the folder is right as it is.
//!   The marker and the projection's records of its writes are one
//!   mechanism: both name the node ([`crate::projection::Written`]), so a
//!   node takes a file for its own only when its own record says so, and
//!   trusts older records without a node only in a folder it marked before
//!   ([`Marked::Own`]).
//! - Bulk-delete hold: an import pass that would tombstone more than
//!   [`Guard::max`] skills and more than [`Guard::fraction`] of the folder's
//!   skills at once is held ([`Guard::holds`]) until the user accepts
//!   (the tombstones go out) or rejects it (the node writes the files back
//!   from the store: the skills stay). Deliberate actions (`skill rm`,
//!   `skill private`) never pass through here.
//! - Received withdrawals: the same rule per sender, over one push or all
//!   the pages of one pull round, against the skills held from that sender
//!   ([`crate::intake::settle`]); held in the same list, accepted by merging
//!   the tombstones as they came, rejected by dropping them.

use std::path::Path;

use ecp_protocol::StandardPolicy;
use ecp_protocol::merge::SenderKind;
use serde::{Deserialize, Serialize};

use crate::intake::Sender;
use crate::library::Library;
use crate::store::{HeldDeletion, Source, StoreError};

/// The marker file in each skills folder the node serves.
pub const MARKER_FILE: &str = ".ecp-folder";
/// Default of `[limits] max_bulk_delete`.
pub const DEFAULT_MAX_BULK_DELETE: u64 = 5;
/// Default of `[limits] max_bulk_delete_fraction`.
pub const DEFAULT_MAX_BULK_DELETE_FRACTION: f64 = 0.5;

/// When an import pass's deletions are held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Guard {
    /// Most tombstones one pass makes without a hold (`[limits] max_bulk_delete`).
    pub max: u64,
    /// Largest share of the folder's skills one pass tombstones without a
    /// hold (`[limits] max_bulk_delete_fraction`).
    pub fraction: f64,
}

impl Default for Guard {
    fn default() -> Self {
        Guard { max: DEFAULT_MAX_BULK_DELETE, fraction: DEFAULT_MAX_BULK_DELETE_FRACTION }
    }
}

impl Guard {
    /// Whether tombstoning `count` of `total` skills at once is held: over
    /// both the count and the share.
    pub fn holds(&self, count: usize, total: usize) -> bool {
        count as u64 > self.max && count as f64 > self.fraction * total as f64
    }
}

/// What the marker file records.
#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    /// The instance id of the node serving the folder.
    instance: String,
}

/// Why a folder is unavailable; the message names it by its number, never its path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "skills folder {number} has lost its {MARKER_FILE} marker: it is treated as unavailable, not empty, and \
     nothing is withdrawn; put the folder back (mount it, finish the sync), or create an empty {MARKER_FILE} \
     there if its contents are right"
)]
pub struct Unavailable {
    /// The folder's number (1 for the first).
    pub number: usize,
}

/// Whose folder a checked one is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marked {
    /// It carries the marker this node wrote at an earlier import.
    Own,
    /// This node had not marked it before (a new folder, a new data folder
    /// on a folder that lost its marker, an empty marker): marked now.
    /// Records of writes without a node in them are not this node's.
    New,
    /// It carried another node's marker: adopted now. Records of files "the
    /// node wrote" there are that node's, so every skill is imported.
    Adopted,
}

/// Checks folder `index` (which exists) for its marker: writes one on the
/// first import (or adopts the folder of another node); a folder the node
/// marked before whose marker is gone is [`Unavailable`].
pub fn check_marker(library: &Library, index: usize, dir: &Path) -> Result<Marked, Unavailable> {
    let own = library.store().instance_id();
    let path = dir.join(MARKER_FILE);
    let found = match std::fs::read(&path) {
        Ok(bytes) => Some(serde_json::from_slice::<Marker>(&bytes).map(|m| m.instance).unwrap_or_default()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        // Unreadable: assume it is there rather than withdraw anything.
        Err(_) => Some(own.to_owned()),
    };
    match found {
        Some(instance) if instance == own => Ok(Marked::Own),
        Some(other) => {
            write_marker(library, &path, dir);
            if other.is_empty() {
                tracing::info!(
                    folder = index + 1,
                    "skills folder marker restored; importing the folder again"
                );
                return Ok(Marked::New);
            }
            tracing::info!(
                folder = index + 1,
                served_by = %other,
                "skills folder adopted from another node; importing every skill there as this node's own"
            );
            Ok(Marked::Adopted)
        }
        None if library.store().folder_marked(dir).unwrap_or(true) => Err(Unavailable { number: index + 1 }),
        None => {
            write_marker(library, &path, dir);
            Ok(Marked::New)
        }
    }
}

/// Whether folder `index` is one the node marked whose marker is gone
/// (readiness and status call it; it writes nothing).
pub fn marker_lost(library: &Library, index: usize, dir: &Path) -> Option<Unavailable> {
    let gone = dir.is_dir() && !dir.join(MARKER_FILE).exists();
    (gone && library.store().folder_marked(dir).unwrap_or(true)).then_some(Unavailable { number: index + 1 })
}

fn write_marker(library: &Library, path: &Path, dir: &Path) {
    let marker = Marker { instance: library.store().instance_id().to_owned() };
    let text = serde_json::to_string(&marker).expect("a marker serialises") + "\n";
    match std::fs::write(path, text) {
        // Recorded only once written: a folder that takes no file is never "lost".
        Ok(()) => {
            if let Err(e) = library.store().mark_folder(dir) {
                tracing::warn!(error = %e, "cannot record the skills folder marker in the store");
            }
        }
        Err(e) => tracing::warn!(error = %e.kind(), "cannot write the skills folder marker"),
    }
}

/// What became of a held deletion.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Released {
    /// The deletion.
    pub deletion: HeldDeletion,
    /// The skills it tombstoned (accept), or kept (reject: for the skills
    /// folder's, those whose files were written back).
    pub done: Vec<String>,
}

impl Library {
    /// Accepts held deletion `id`: tombstones each of its skills whose file
    /// is still gone (one that came back stays), or merges the withdrawals
    /// a peer sent as they came, under `policy` (a newer version that
    /// arrived since wins); blocking.
    pub fn accept_deletion(&self, id: i64, policy: &StandardPolicy) -> Result<Released, StoreError> {
        let received = self.store().received_deletion(id)?;
        let deletion = self.store().release_deletion(id, "deletion-accepted", &Source::Operator)?;
        if let (Some(received), Source::Peer(instance)) = (received, &deletion.source) {
            let sender = Sender {
                instance: instance.clone(),
                account: received.account,
                trust: received.trust,
                reshare: received.reshare,
                kind: SenderKind::Current,
            };
            let done = self.withdraw(received.packets, &sender, policy)?;
            return Ok(Released { deletion, done });
        }
        let mut done = Vec::new();
        for name in &deletion.names {
            if !self.has_agent_file(name) && self.tombstone(name, Source::SkillsDir)? {
                done.push(name.clone());
            }
        }
        Ok(Released { deletion, done })
    }

    /// Rejects held deletion `id`: the skills stay. For the skills folder's,
    /// the node writes each missing file back from the store (so the next
    /// import finds it unchanged); a peer's withdrawals are dropped, their
    /// skills' files untouched. Blocking.
    pub fn reject_deletion(&self, id: i64) -> Result<Released, StoreError> {
        let deletion = self.store().release_deletion(id, "deletion-rejected", &Source::Operator)?;
        if deletion.source != Source::SkillsDir {
            let done = deletion.names.clone();
            return Ok(Released { deletion, done });
        }
        let dir = self.projection().dir().to_owned();
        let mut done = Vec::new();
        for name in &deletion.names {
            if self.has_agent_file(name) {
                continue;
            }
            let Some((record, packet, _)) = self.store().skill(name)? else { continue };
            if record.deprecated || record.kind != "local" {
                continue;
            }
            let folder = dir.join(name);
            let written = std::fs::create_dir_all(&folder).and_then(|()| {
                std::fs::write(folder.join(crate::projection::SKILL_FILE), &packet.skill_body)
            });
            match written {
                Ok(()) => done.push(name.clone()),
                Err(e) => tracing::warn!(skill = %name, error = %e.kind(), "cannot write a skill back"),
            }
        }
        Ok(Released { deletion, done })
    }

    /// Whether some skills folder holds a file for `name` (in its own
    /// folder, or the one named otherwise it was imported from).
    fn has_agent_file(&self, name: &str) -> bool {
        let file = crate::projection::SKILL_FILE;
        let folders = self.sharing().folders();
        let aliased = self.entries().alias(name).and_then(|p| Some(folders.get(p.index)?.path.join(p.entry)));
        aliased.is_some_and(|dir| std::fs::symlink_metadata(dir.join(file)).is_ok())
            || folders.iter().any(|f| std::fs::symlink_metadata(f.path.join(name).join(file)).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_is_held_only_over_both_the_count_and_the_share() {
        let guard = Guard::default();
        assert!(!guard.holds(5, 6), "exactly max_bulk_delete is not held");
        assert!(guard.holds(6, 6), "one more is held");
        assert!(!guard.holds(6, 12), "exactly half is not held");
        assert!(guard.holds(7, 12), "more than half is held");
        assert!(!guard.holds(6, 100), "a small share is not held");
    }
}
