//! The skills folder: a projection of the store that agents read directly.
//!
//! Every active skill is written as `<dir>/<name>/SKILL.md`, atomically
//! (temporary file, then rename), so an agent never reads half a skill; a
//! tombstoned skill's file is removed. [`Projection::fill_in_place`] can
//! make a bulk fill write a new folder's file in place, its record first
//! (read empty or short for the moment it is written; what a kill leaves of
//! it is the node's torn write, [`torn`]); no command turns it on, since an
//! agent must never read half a skill. Files are not fsynced one by one: the
//! store is the durable truth, and [`crate::library::Library::project_all`]
//! rewrites the folder at every start, so a crash loses nothing — while an
//! fsync per file would make loading 10,000 skills take minutes. The folder may be an agent's own
//! skills folder: a file this node did not write (its content differs from
//! what the node last wrote there) belongs to the agent and is never
//! overwritten by a remote skill — the merge already refuses such a packet
//! as a conflict with the local skill the file was imported as.
//!
//! With several skills folders the projection writes into one (the first
//! shared folder), and never writes a skill whose file lives in another:
//! the agent sees it there already. A local skill imported from a folder
//! named otherwise than the skill ([`crate::import::Entries`]) is written
//! in that folder, never in a second one of its name. The same writer,
//! pointed at an agent's folder ([`Projection::into_folder`]), fills the
//! `[[agent]]` folders ([`crate::agents`]) with the same files and records.
//!
//! What the node wrote is recorded as a SHA-256 of the node's instance id
//! and the content ([`Projection::record`]), so the record is bound to the
//! node and its store: a new node (a reinstall, a fresh data folder) on a
//! folder another node wrote finds no record of its own there and takes
//! every file for the agent's, and the folder marker
//! ([`crate::deletion_guard`]) says whose folder it is. Records of older
//! versions (the content's SHA-256 alone) still count for the projection's
//! own overwrites, and for the importer only in a folder this very store
//! marked before ([`Written::Unbound`]). The record is kept in the
//! extended attribute `user.ecp-written` of the `SKILL.md` itself: set on the
//! temporary file before the rename, so the record lands with the content in
//! one step and costs no second file (each new file is an inode to allocate,
//! the largest cost of loading many skills). An agent's edit, in place or by
//! replacing the file, no longer matches it. Where extended attributes are not
//! supported, a marker file `.ecp-written` beside the `SKILL.md` holds the
//! hash instead, as older versions always did; such a marker is still read.
//!
//! A writer killed mid-write (kill -9, a crash) leaves its temporary dot
//! file behind; the node removes those of dead processes at start
//! ([`Projection::sweep_leftovers`]). A power loss can leave the node's
//! file empty or cut at a page ([`torn`]): neither is taken for the agent's.
//!
//! A bundle (#26, `SPEC.md` §12) is written whole from the store's blobs
//! ([`bundle`]): a temporary sibling folder swapped in by rename, so a crash
//! leaves the old folder or the new one; a bundle with a file not held is
//! not written. Each file carries its own record of the write
//! ([`Projection::wrote_file`]), and a tombstone removes only the files
//! the node wrote: an agent's own file in the folder stays, and the folder
//! with it.
//!
//! # Layout
//!
//! - `projection.rs`: the folder, `SKILL.md` writes, records, tombstones.
//! - `projection/atomic.rs`: a file written whole or not at all, and the sweep of killed writers' leftovers.
//! - `projection/batch.rs`: a batch of committed changes, written by several threads.
//! - `projection/bundle.rs`: a bundle's whole folder, its swap and its leftovers.
//! - `projection/own_writes.rs`: the paths this process wrote recently, for the folder watcher.
//! - `projection/torn.rs`: what a power loss can leave of the node's write, not the agent's.
//!
//! A received skill's file says where it came from ([`crate::stamp`]) and
//! carries no grants its origin may not give ([`crate::permissions`]): that
//! text is what the node writes and records as written, so the importer
//! never takes the stamp or a removed grant for the agent's edit.
//!
//! With review intake, a change the user has not accepted is withheld
//! ([`crate::store::Change::withheld`]): the file stays as it is.
//!
//! Names are checked again here, although the merge already did: this is
//! the one place that turns a name into a path.

use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ecp_protocol::skill_doc;
use ecp_protocol::{SkillKind, SkillPacket, integrity};

use crate::import::Entries;
use crate::permissions::{self, Grant, PermissionPolicy};
use crate::stamp::{self, Stamp};
use crate::store::Store;
use atomic::{is_running, process_id};
#[cfg(test)]
use atomic::{temporary_name, temporary_writer};
use atomic::{write_atomically, write_new_in_place};
use own_writes::Recent;

/// The file name of a skill inside its folder.
pub const SKILL_FILE: &str = "SKILL.md";
/// Marker file beside `SKILL.md` holding the hash of what this node wrote,
/// so an agent's later edit is recognisable as the agent's: where extended
/// attributes are not supported, and from older versions.
const WRITTEN_MARKER: &str = ".ecp-written";

/// A projection failure (I/O); the store is unaffected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProjectionError {
    /// The skill name cannot be a folder name.
    #[error("skill name {0:?} cannot be used as a folder name")]
    UnsafeName(String),
    /// Writing the folder failed.
    #[error("cannot write skill {name:?} to the skills folder: {source}")]
    Io {
        /// Skill name.
        name: String,
        /// Cause.
        source: std::io::Error,
    },
}

/// Writes skills into one folder.
#[derive(Debug, Clone)]
pub struct Projection {
    dir: PathBuf,
    /// The node's other skills folders (`--skills-dir` given again,
    /// `[[folder]]`): a skill whose file lives in one of them is shown to
    /// the agent there, and never written here too.
    others: Arc<Vec<PathBuf>>,
    /// Paths this process wrote recently, so the folder watcher can tell its
    /// own writes from the agent's: re-importing the whole folder after each
    /// projected file would cost more than the writes themselves. Noted only
    /// once a watcher of this process asks ([`Projection::watched`]).
    own_writes: Arc<Recent>,
    /// This node's instance id, stamped into received skills' files
    /// ([`crate::stamp`]); `None`: files are written as stored.
    node: Option<Arc<str>>,
    /// What becomes of grants in received skills' frontmatter
    /// ([`crate::permissions`]), and the store that knows peers' instance ids.
    permissions: Arc<PermissionPolicy>,
    store: Option<Arc<Store>>,
    /// Where local skills named otherwise than their folder live.
    entries: Entries,
    /// This folder's index among the sharing folders.
    index: Option<usize>,
    /// The store whose blobs hold bundles' files ([`bundle`]); `None`: only
    /// `SKILL.md` is written.
    blobs: Option<Arc<Store>>,
    /// A pull's bulk fill runs: a new skill's file in a folder just made is
    /// written in place ([`Projection::fill_in_place`]).
    fill: Arc<AtomicBool>,
}

/// What the record of a write says about a file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// This node wrote exactly this content.
    Own,
    /// A record without a node (an older version's) matches the content.
    Unbound,
    /// No record matches: the file is the agent's (or another node's).
    No,
}

impl Projection {
    /// A projection into `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Projection {
            dir: dir.into(),
            others: Arc::default(),
            own_writes: Arc::default(),
            node: None,
            permissions: Arc::default(),
            store: None,
            entries: Entries::default(),
            index: None,
            blobs: None,
            fill: Arc::default(),
        }
    }

    /// While `on`, this projection (and every one made from it) writes a
    /// new skill's `SKILL.md`, in a folder it has just made, in place rather
    /// than through a temporary file ([`atomic::write_new_in_place`]): for
    /// `ecp-node pull`'s fill of an empty store, whose folder is mostly
    /// folders it makes. Every other write stays a rename.
    pub fn fill_in_place(&self, on: bool) {
        self.fill.store(on, Ordering::Relaxed);
    }

    /// The projection, writing bundles' whole folders from `store`'s blobs.
    #[must_use]
    pub fn with_blobs(mut self, store: Arc<Store>) -> Self {
        self.blobs = Some(store);
        self
    }

    /// The projection, writing local skills named otherwise than their
    /// folder into that folder (`entries`); `index` is this folder's among
    /// the sharing folders.
    #[must_use]
    pub fn with_entries(mut self, entries: Entries, index: Option<usize>) -> Self {
        self.entries = entries;
        self.index = index;
        self
    }

    /// The record of a write of `content` ([`Written`]): bound to the node
    /// when the projection knows it.
    fn record(&self, content: &[u8]) -> String {
        match self.node.as_deref() {
            Some(node) => {
                let mut bound = Vec::with_capacity(node.len() + 1 + content.len());
                bound.extend_from_slice(node.as_bytes());
                bound.push(0);
                bound.extend_from_slice(content);
                integrity::sha256_hex(&bound)
            }
            None => integrity::sha256_hex(content),
        }
    }

    /// What the record kept for the file `dir/SKILL.md` says of `content`.
    fn written(&self, dir: &Path, content: &[u8]) -> Written {
        let Some(recorded) = written_hash(dir, &dir.join(SKILL_FILE)) else { return Written::No };
        if recorded == self.record(content) {
            Written::Own
        } else if recorded == integrity::sha256_hex(content) {
            Written::Unbound
        } else {
            Written::No
        }
    }

    /// What the record kept on the file `path` says of `content`: through
    /// [`Self::written`] for a `SKILL.md`, its attribute for a bundle's other
    /// files (which older versions never wrote, so only `Own` or `No`).
    fn file_written(&self, path: &Path, content: &[u8]) -> Written {
        if path.file_name().is_some_and(|n| n == SKILL_FILE)
            && let Some(dir) = path.parent()
        {
            return self.written(dir, content);
        }
        match xattr::get_path(path) {
            Some(recorded) if recorded == self.record(content) => Written::Own,
            _ => Written::No,
        }
    }

    /// The projection, stamping received skills' files as written by `node`.
    #[must_use]
    pub fn stamped_by(mut self, node: &str) -> Self {
        self.node = Some(node.into());
        self
    }

    /// The projection, applying `policy` to received skills' grants; `store`
    /// knows the instance ids learned from peers' manifests.
    #[must_use]
    pub fn with_permissions(mut self, policy: PermissionPolicy, store: Arc<Store>) -> Self {
        self.permissions = Arc::new(policy);
        self.store = Some(store);
        self
    }

    /// The policy on received skills' grants.
    pub fn permissions(&self) -> &Arc<PermissionPolicy> {
        &self.permissions
    }

    /// The grants removed from `packet`'s file: those of a received skill
    /// unless its origin keeps them ([`PermissionPolicy::keeps`]).
    pub fn removed_grants(&self, packet: &SkillPacket, kind: SkillKind) -> Vec<Grant> {
        if kind != SkillKind::External
            || self.permissions.keeps(&packet.origin_instance, self.store.as_deref())
        {
            return Vec::new();
        }
        self.permissions.grants(&packet.skill_body)
    }

    /// What the folder shows for `packet`: a received skill's body without
    /// the grants its origin may not give ([`crate::permissions`]) and with
    /// where it came from in its frontmatter ([`crate::stamp`]), any other
    /// skill's body as stored.
    pub fn content<'a>(&self, packet: &'a SkillPacket, kind: SkillKind) -> Cow<'a, str> {
        let mut body = Cow::Borrowed(packet.skill_body.as_str());
        if !self.removed_grants(packet, kind).is_empty() {
            body = Cow::Owned(permissions::strip(&self.permissions, &body));
        }
        let Some(node) = self.node.as_deref().filter(|_| kind == SkillKind::External) else {
            return body;
        };
        let origin_signed = packet.origin_signature.is_some();
        let stamp =
            Stamp { origin: &packet.origin_instance, origin_signed, confidence: packet.confidence, node };
        match stamp::stamp(&body, &stamp) {
            Some(stamped) => Cow::Owned(stamped),
            None => body,
        }
    }

    /// The same projection writing into `dir` alone (an agent's folder,
    /// [`crate::agents`]): the same stamp, grants, blobs and record of
    /// recent writes (the folder watcher's), no other folders.
    #[must_use]
    pub fn into_folder(&self, dir: impl Into<PathBuf>) -> Projection {
        Projection {
            dir: dir.into(),
            others: Arc::default(),
            entries: Entries::default(),
            index: None,
            ..self.clone()
        }
    }

    /// The projection, knowing the node's other skills folders.
    #[must_use]
    pub fn with_other_folders(mut self, others: Vec<PathBuf>) -> Self {
        self.others = Arc::new(others);
        self
    }

    /// Whether `path` was written (or created, or removed) by this process
    /// within the last few seconds, since a folder watcher asked
    /// ([`Projection::watched`]).
    pub fn is_own_write(&self, path: &Path) -> bool {
        self.own_writes.contains(path)
    }

    /// From now on this process's writes (by this projection and every one
    /// made from it) are noted for [`Projection::is_own_write`]: a folder
    /// watcher starts.
    pub fn watched(&self) {
        self.own_writes.watched();
    }

    fn note_own_paths(&self, paths: impl IntoIterator<Item = PathBuf>) {
        self.own_writes.note(paths);
    }

    fn note_own_writes(&self, dir: &Path) {
        if self.own_writes.noting() {
            self.note_own_paths([dir.to_path_buf(), dir.join(SKILL_FILE)]);
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder of one skill, after checking that the name is a safe
    /// folder name: the one it was imported from when that is named
    /// otherwise; `None` when its file lives in another skills folder.
    fn skill_dir(&self, name: &str) -> Result<Option<PathBuf>, ProjectionError> {
        skill_doc::validate_name(name).map_err(|_| ProjectionError::UnsafeName(name.to_owned()))?;
        match self.entries.alias(name) {
            Some(place) if Some(place.index) == self.index => Ok(Some(self.dir.join(place.entry))),
            Some(_) => Ok(None),
            None if self.others.iter().any(|other| other.join(name).join(SKILL_FILE).exists()) => Ok(None),
            None => Ok(Some(self.dir.join(name))),
        }
    }

    /// The folder `name`'s files are written in, when it is this folder
    /// (`None`: an invalid name, or its file lives in another folder).
    pub fn folder_of(&self, name: &str) -> Option<PathBuf> {
        self.skill_dir(name).ok().flatten()
    }

    /// Writes one skill, unless the agent owns a different file of that name.
    pub fn write(&self, packet: &SkillPacket, kind: SkillKind) -> Result<(), ProjectionError> {
        let name = &packet.skill_name;
        let Some(dir) = self.skill_dir(name)? else { return Ok(()) };
        if let Some(store) = self.blobs.as_deref().filter(|_| !packet.files.is_empty()) {
            return self.write_bundle(&dir, packet, kind, store);
        }
        let io = |source| ProjectionError::Io { name: name.clone(), source };
        let file = dir.join(SKILL_FILE);
        let content = self.content(packet, kind);
        let body = content.as_bytes();
        let hash = self.record(body);
        // The folder first: one this call made holds no file, so there is
        // nothing to read (a new skill's `open` of a missing file cost as
        // much as its write). Noted before it is made, for the watcher.
        if self.own_writes.noting() {
            self.note_own_paths([dir.clone()]);
        }
        let made = match fs::create_dir(&dir) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                fs::create_dir_all(&dir).map_err(io)?;
                true
            }
            Err(e) => return Err(io(e)),
        };
        // Read once: a missing file is all there is to know.
        let current = if made { None } else { fs::read(&file).ok() };
        let replaced = match current {
            Some(current) if current == body => {
                // Already shown (an imported agent file, or a record lost):
                // recorded as the node's, so a later version may replace it.
                // Not noted as an own write: that would hide the agent's next
                // change to the file from the watcher, and the folder watcher
                // ignores the attribute change itself.
                if self.written(&dir, body) != Written::Own {
                    self.mark_in_place(&dir, &file, &hash).map_err(io)?;
                }
                return Ok(());
            }
            // A file the node did not write is the agent's: never overwritten,
            // whatever the store says (a local skill imported from it will be
            // re-imported with the agent's newer content).
            Some(current) => {
                let received = kind == SkillKind::External;
                if self.written(&dir, &current) == Written::No
                    && !self.torn_at(&dir, &current, Some(body), received)
                {
                    if kind == SkillKind::External {
                        tracing::warn!(skill = %name, "skills folder holds the agent's own SKILL.md of this name; not overwritten");
                    }
                    return Ok(());
                }
                true
            }
            None => false,
        };
        self.note_own_writes(&dir);
        let recorded = if made && self.fill.load(Ordering::Relaxed) {
            write_new_in_place(&file, body, &hash)
        } else {
            write_atomically(&file, body, Some(&hash))
        };
        if recorded.map_err(io)? {
            if replaced {
                // An older version's marker would outlive the file it describes.
                remove_if_present(&dir.join(WRITTEN_MARKER)).map_err(io)?;
            }
            Ok(())
        } else {
            write_marker(&dir, &hash).map_err(io)
        }
    }

    /// Writes a bundle's whole folder ([`bundle`]), unless the agent owns it
    /// or a file of it is not held (then it is not installed either).
    fn write_bundle(
        &self,
        dir: &Path,
        packet: &SkillPacket,
        kind: SkillKind,
        store: &Store,
    ) -> Result<(), ProjectionError> {
        let name = &packet.skill_name;
        let io = |source| ProjectionError::Io { name: name.clone(), source };
        let content = self.content(packet, kind);
        let body = content.as_bytes();
        let Some(files) = bundle::plan(packet, |sha256| store.blob_files().read(sha256).ok()) else {
            tracing::warn!(skill = %name, "bundle not projected: a file of it is not held");
            return Ok(());
        };
        let owned = |path: &Path, content: &[u8]| self.file_written(path, content);
        match fs::read(dir.join(SKILL_FILE)) {
            Ok(current) if current == body && bundle::shown(dir, &files) => {
                // Already shown (an imported agent folder, or records lost):
                // recorded as the node's, so a later version may replace it.
                if self.written(dir, body) != Written::Own {
                    self.mark_in_place(dir, &dir.join(SKILL_FILE), &self.record(body)).map_err(io)?;
                }
                for f in &files {
                    let path = dir.join(&f.path);
                    if self.file_written(&path, &f.bytes) != Written::Own {
                        let _ = xattr::set_path(&path, &self.record(&f.bytes));
                    }
                }
                return Ok(());
            }
            Ok(current)
                if current != body
                    && self.written(dir, &current) == Written::No
                    && !self.torn_at(dir, &current, Some(body), kind == SkillKind::External) =>
            {
                if kind == SkillKind::External {
                    tracing::warn!(skill = %name, "skills folder holds the agent's own SKILL.md of this name; not overwritten");
                }
                return Ok(());
            }
            _ => {}
        }
        self.note_own_writes(dir);
        if self.own_writes.noting() {
            self.note_own_paths(files.iter().map(|f| dir.join(&f.path)));
        }
        let record = |content: &[u8]| self.record(content);
        if bundle::write(dir, body, &files, &record, &owned).map_err(io)? == bundle::Outcome::AgentOwns {
            tracing::warn!(skill = %name, "skills folder holds the agent's own version of a file of this bundle; not overwritten");
        }
        Ok(())
    }

    /// Removes a skill's files (and its folder when nothing else is in it),
    /// unless its `SKILL.md` is the agent's own: every file the node wrote
    /// goes, the agent's stay (and their folders with them).
    pub fn remove(&self, name: &str) -> Result<(), ProjectionError> {
        let Some(dir) = self.skill_dir(name)? else { return Ok(()) };
        let io = |source| ProjectionError::Io { name: name.to_owned(), source };
        if self.agent_owns(&dir) {
            return Ok(());
        }
        self.note_own_writes(&dir);
        // SKILL.md's record may be the marker: read before the marker goes.
        bundle::remove(&dir, &|path, content| self.file_written(path, content)).map_err(io)?;
        remove_if_present(&dir.join(WRITTEN_MARKER)).map_err(io)?;
        // Only an empty folder goes: an agent's other files stay.
        let _ = fs::remove_dir(&dir);
        Ok(())
    }

    /// Whether `dir/SKILL.md` exists and is not what this node last wrote.
    fn agent_owns(&self, dir: &Path) -> bool {
        let Ok(current) = fs::read(dir.join(SKILL_FILE)) else { return false };
        self.written(dir, &current) == Written::No && !self.torn_at(dir, &current, None, false)
    }

    /// Records the file already at `file` as written by the node.
    fn mark_in_place(&self, dir: &Path, file: &Path, hash: &str) -> std::io::Result<()> {
        match xattr::set_path(file, hash) {
            Ok(()) => remove_if_present(&dir.join(WRITTEN_MARKER)),
            Err(_) => write_marker(dir, hash),
        }
    }

    /// What the record of the file `<entry>/SKILL.md` (`entry`: a folder
    /// read from this one) says of `content`, its content now.
    pub fn wrote(&self, entry: &str, content: &[u8]) -> Written {
        self.wrote_file(entry, SKILL_FILE, content)
    }

    /// What the record of the file `<entry>/<path>` (`path`: relative,
    /// `/`-separated, as in a bundle's listing) says of `content`, its
    /// content now: `Own` when this node wrote exactly this content there.
    pub fn wrote_file(&self, entry: &str, path: &str, content: &[u8]) -> Written {
        let bad_entry = entry.is_empty() || entry.starts_with('.') || entry.contains(['/', '\\']);
        let bad_part = |p: &str| matches!(p, "" | "." | "..") || p.contains('\\');
        if bad_entry || path.split('/').any(bad_part) {
            return Written::No;
        }
        self.file_written(&self.dir.join(entry).join(path), content)
    }

    /// Forgets that the node wrote `name`'s file, as if the record were lost.
    #[cfg(test)]
    pub(crate) fn forget_written(&self, name: &str) {
        let dir = self.dir.join(name);
        let _ = xattr::remove_path(&dir.join(SKILL_FILE));
        let _ = fs::remove_file(dir.join(WRITTEN_MARKER));
    }
}

/// The hash of what the node last wrote to `file` (`dir/SKILL.md`): its
/// extended attribute, else the marker file.
fn written_hash(dir: &Path, file: &Path) -> Option<String> {
    xattr::get_path(file)
        .or_else(|| fs::read_to_string(dir.join(WRITTEN_MARKER)).ok().map(|s| s.trim().to_owned()))
}

fn write_marker(dir: &Path, hash: &str) -> std::io::Result<()> {
    write_atomically(&dir.join(WRITTEN_MARKER), hash.as_bytes(), None).map(|_| ())
}

fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The `user.ecp-written` extended attribute, where the platform has them.
/// Every error (no support on this system or file system, no attribute)
/// reads as "not recorded"; the caller then falls back to the marker file.
#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
mod xattr {
    use std::path::Path;

    use rustix::fs::XattrFlags;

    const NAME: &str = "user.ecp-written";
    /// A hex SHA-256 is 64 bytes; anything longer is not ours.
    const MAX: usize = 128;

    pub(super) fn set_fd(file: &std::fs::File, hash: &str) -> std::io::Result<()> {
        Ok(rustix::fs::fsetxattr(file, NAME, hash.as_bytes(), XattrFlags::empty())?)
    }

    pub(super) fn set_path(path: &Path, hash: &str) -> std::io::Result<()> {
        // Not following a symlink: the node writes regular files only.
        Ok(rustix::fs::lsetxattr(path, NAME, hash.as_bytes(), XattrFlags::empty())?)
    }

    pub(super) fn get_path(path: &Path) -> Option<String> {
        let mut buf = [0u8; MAX];
        let n = rustix::fs::lgetxattr(path, NAME, &mut buf[..]).ok()?;
        String::from_utf8(buf[..n].to_vec()).ok()
    }

    #[cfg(test)]
    pub(super) fn remove_path(path: &Path) -> std::io::Result<()> {
        Ok(rustix::fs::lremovexattr(path, NAME)?)
    }
}

/// No extended attributes here: the marker file records every write.
#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
mod xattr {
    use std::path::Path;

    fn unsupported() -> std::io::Error {
        std::io::Error::from(std::io::ErrorKind::Unsupported)
    }

    pub(super) fn set_fd(_file: &std::fs::File, _hash: &str) -> std::io::Result<()> {
        Err(unsupported())
    }

    pub(super) fn set_path(_path: &Path, _hash: &str) -> std::io::Result<()> {
        Err(unsupported())
    }

    pub(super) fn get_path(_path: &Path) -> Option<String> {
        None
    }

    #[cfg(test)]
    pub(super) fn remove_path(_path: &Path) -> std::io::Result<()> {
        Err(unsupported())
    }
}

mod atomic;
mod batch;
mod bundle;
mod own_writes;
mod torn;
pub use torn::may_be_torn;
#[cfg(test)]
mod tests;
