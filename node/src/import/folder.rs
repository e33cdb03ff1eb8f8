//! One import pass over one skills folder ([`Run::folder`]): each
//! `<entry>/SKILL.md` is read, told apart from the node's own writes, and
//! imported under its frontmatter name — the folder name stays local. Two
//! folders claiming one name: the one that held it before (else the first
//! by name) stays, the other is not shared ("collision"). Every folder
//! passed over, and every shared skill with a warning, is kept with its
//! reason ([`FolderEntry`]).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use ecp_protocol::scan::{DEFAULT_THRESHOLD, Scanner};
use ecp_protocol::skill_doc::StructureLimits;
use ecp_protocol::{ShownConfidence, SkillPacket, integrity};

use super::skill_file::{SkillFileError, frontmatter_name, local_origin, local_packet, read_skill_file};
use super::{
    Companion, CompanionError, Duplicate, ImportReport, Place, Skipped, read_companions, share_warnings,
};
use crate::decision_log::{self, Decisions, Verdict};
use crate::deletion_guard::{Marked, check_marker};
use crate::library::Library;
use crate::projection::{Projection, SKILL_FILE, Written};
use crate::sharing::Decider;
use crate::store::{FolderEntry, HeldSkill, Source};

/// One [`super::import_all`] run's state across folders.
pub(super) struct Run<'a> {
    pub(super) library: &'a Library,
    pub(super) decider: &'a Decider<'a>,
    pub(super) held: &'a HashMap<String, HeldSkill>,
    /// Names with a file in some folder (deleted ones become tombstones).
    pub(super) present: HashSet<String>,
    /// Names with an agent's file, and where it is.
    pub(super) agent: HashMap<String, Place>,
    /// What this pass keeps of the folders ([`crate::import::Entries`]).
    pub(super) entries: Vec<FolderEntry>,
    /// The skills imported, for the decision log.
    pub(super) decisions: Decisions,
}

/// An agent's file that may become a local skill.
struct Found {
    entry: String,
    name: String,
    text: String,
    hash: String,
    /// The folder's other files ([`super::read_companions`]).
    companions: Vec<Companion>,
    /// Every file as the node wrote it, the `SKILL.md` the held local one's.
    written: bool,
}

impl Run<'_> {
    /// The skill folder `entry` of folder `index` held when last read: a
    /// file that cannot be read now still keeps that skill from being
    /// tombstoned.
    fn known(&self, index: usize, entry: &str) -> String {
        self.library.entries().name_of(index, entry).unwrap_or_else(|| entry.to_owned())
    }

    /// Records `entry` of folder `index` as passed over, with why.
    fn skip(
        &mut self,
        report: &mut ImportReport,
        index: usize,
        entry: &str,
        name: Option<String>,
        code: &str,
        reason: String,
    ) {
        report.skipped.push(Skipped { path: Path::new(entry).join(SKILL_FILE), reason: reason.clone() });
        self.entries.push(FolderEntry {
            folder: index + 1,
            entry: entry.to_owned(),
            name,
            code: Some(code.to_owned()),
            reason: Some(reason),
            warnings: Vec::new(),
        });
    }

    /// Imports one folder; `false` when it exists but cannot be listed.
    pub(super) fn folder(&mut self, index: usize, dir: &Path, report: &mut ImportReport) -> bool {
        let library = self.library;
        // The projection's folder, or an agent's (#24): both hold files the node wrote.
        let writer = library.writer_of(dir).cloned();
        let listing = match fs::read_dir(dir) {
            Ok(entries) => entries,
            // A missing folder (not created yet, or an unmounted disk) says
            // nothing about what the agent deleted: no tombstones.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
            Err(e) => {
                report
                    .skipped
                    .push(Skipped { path: PathBuf::new(), reason: format!("cannot list the folder: {e}") });
                return false;
            }
        };
        let marked = match check_marker(library, index, dir) {
            Ok(marked) => marked,
            Err(unavailable) => {
                report.unavailable.push(unavailable);
                return false;
            }
        };
        let mut listing: Vec<_> = listing.filter_map(Result::ok).collect();
        listing.sort_by_key(fs::DirEntry::file_name);
        let mut found = Vec::new();
        for item in listing {
            let Some(entry) = item.file_name().to_str().map(str::to_owned) else {
                let lossy = item.file_name().to_string_lossy().into_owned();
                if item.path().join(SKILL_FILE).exists() {
                    let reason = "its folder name is not UTF-8 text; rename the folder".to_owned();
                    self.skip(report, index, &lossy, None, "invalid", reason);
                }
                continue;
            };
            if entry.starts_with('.') {
                continue;
            }
            if let Some(file) = self.read(index, &item, &entry, writer.as_ref(), marked, report) {
                found.push(file);
            }
        }
        self.import_found(index, found, report);
        true
    }

    /// Reads one skill folder: the agent's file, or `None` when there is
    /// none, it is the node's own, or it is passed over (recorded).
    #[allow(clippy::too_many_arguments)]
    fn read(
        &mut self,
        index: usize,
        item: &fs::DirEntry,
        entry: &str,
        writer: Option<&Projection>,
        marked: Marked,
        report: &mut ImportReport,
    ) -> Option<Found> {
        let library = self.library;
        // A file type from read_dir does not follow symlinks.
        let file_type = item.file_type().ok()?;
        if file_type.is_symlink() {
            if fs::metadata(item.path()).is_ok_and(|m| m.is_dir()) {
                let known = self.known(index, entry);
                self.present.insert(known.clone());
                let reason = "the skill folder is a symlink; links are not followed, copy the folder instead";
                self.skip(
                    report,
                    index,
                    entry,
                    Some(known),
                    SkillFileError::Symlink.code(),
                    reason.to_owned(),
                );
            }
            return None;
        }
        if !file_type.is_dir() {
            return None;
        }
        let file = item.path().join(SKILL_FILE);
        let meta = match fs::symlink_metadata(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            meta => meta,
        };
        // From here on the file exists: whatever happens, its skill is not "deleted".
        let known = self.known(index, entry);
        self.present.insert(known.clone());
        // What a power loss left of the node's write is not the agent's: the
        // projection writes the store's version over it.
        if let (Some(writer), Ok(meta)) = (writer, &meta)
            && meta.is_file()
            && crate::projection::may_be_torn(meta.len())
            && fs::read(&file).is_ok_and(|bytes| super::torn_copy(library, writer, entry, &bytes))
        {
            tracing::warn!(skill = %entry, bytes = meta.len(), "skills folder: a SKILL.md the node's write left torn (a power loss?); not imported, written again from the store");
            report.own_files += 1;
            return None;
        }
        let text = match meta {
            Err(e) => Err(SkillFileError::Read(e)),
            Ok(meta) if meta.file_type().is_symlink() => Err(SkillFileError::Symlink),
            Ok(_) => read_skill_file(&file, library.structure_limits().max_bytes),
        };
        let text = match text {
            Ok(text) => text,
            Err(e) => {
                self.skip(report, index, entry, Some(known), e.code(), e.to_string());
                return None;
            }
        };
        let hash = integrity::body_hash(&text);
        let held_same =
            |name: &str| self.held.get(name).filter(|r| !r.deprecated && r.integrity_hash == hash);
        let local_same = held_same(&known).is_some_and(|r| r.kind == "local");
        // In an agent's folder the node also copies local skills of other
        // agents' folders (#24): a copy it wrote is never the agent's.
        let agent_copy = writer.is_some_and(|w| w.dir() != library.projection().dir());
        if let Some(writer) = writer
            && (agent_copy || !local_same)
        {
            // Only the projection's and agents' folders hold files the node
            // wrote; records without a node count only in a folder this
            // store marked before.
            let own = node_wrote(writer, marked, entry, SKILL_FILE, text.as_bytes());
            let external = |r: &&HeldSkill| !r.deprecated && r.kind == "external";
            if own
                || (self.held.get(entry).filter(external).is_some_and(|r| r.integrity_hash != hash)
                    && super::stamped_copy(library, entry, &text))
                // The node's copy of an external skill whose record is not
                // written yet (or was lost): still the node's file.
                || held_same(entry).is_some_and(|r| r.kind != "local")
            {
                report.own_files += 1;
                return None;
            }
        }
        let Some(name) =
            frontmatter_name(&text).filter(|n| ecp_protocol::skill_doc::validate_name(n).is_ok())
        else {
            // The packet says what is wrong with the document.
            let limits = library.structure_limits();
            let origin = local_origin(library.store().instance_id());
            let reason = match local_packet(&text, Some(entry), &origin, limits, crate::store::now()) {
                Err(e) => e,
                Ok(_) => ecp_protocol::skill_doc::StructureError::NameMissing.into(),
            };
            self.skip(report, index, entry, Some(known), reason.code(), reason.to_string());
            return None;
        };
        // The node's own folder was passed over above, with its SKILL.md:
        // the projection writes a bundle whole.
        let companions = match read_companions(&item.path(), text.len() as u64, library.bundle_limits()) {
            Ok(companions) => companions,
            Err(e) => {
                self.skip(report, index, entry, Some(known), e.code(), e.to_string());
                return None;
            }
        };
        // Read only where it can count: the node's local skill, its SKILL.md unchanged.
        let written = writer.filter(|_| local_same).is_some_and(|w| {
            node_wrote(w, marked, entry, SKILL_FILE, text.as_bytes())
                && companions.iter().all(|c| node_wrote(w, marked, entry, &c.path, &c.bytes))
        });
        Some(Found { entry: entry.to_owned(), name, text, hash, companions, written })
    }

    /// Imports the agent's files of folder `index`, one per name.
    fn import_found(&mut self, index: usize, found: Vec<Found>, report: &mut ImportReport) {
        let library = self.library;
        let dir = library.sharing().folders()[index].path.clone();
        // Who keeps a name two folders claim: the one that held it before,
        // else the first by folder name.
        let mut keeper: HashMap<String, String> = HashMap::new();
        for f in &found {
            let before = match library.entries().alias(&f.name) {
                Some(place) => place.index == index && place.entry == f.entry,
                None => f.entry == f.name,
            };
            match keeper.entry(f.name.clone()) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(f.entry.clone());
                }
                std::collections::hash_map::Entry::Occupied(mut o) if before => {
                    o.insert(f.entry.clone());
                }
                std::collections::hash_map::Entry::Occupied(_) => {}
            }
        }
        let origin = local_origin(library.store().instance_id());
        let limits: StructureLimits = library.structure_limits().clone();
        for Found { entry, name, text, hash, companions, written } in found {
            self.present.insert(name.clone());
            let kept = &keeper[&name];
            if *kept != entry {
                let reason = format!(
                    "its frontmatter names it {name:?}, which the skill in folder {kept:?} already is; give \
                     one of them another name"
                );
                self.skip(report, index, &entry, Some(name), "collision", reason);
                continue;
            }
            let rel = Path::new(&entry).join(SKILL_FILE);
            if let Some(earlier) = self.agent.get(&name) {
                let first =
                    library.sharing().folders()[earlier.index].path.join(&earlier.entry).join(SKILL_FILE);
                let reason = format!(
                    "skills folder {} holds a skill named {name:?} too; rename or remove one",
                    earlier.index + 1
                );
                report.duplicates.push(Duplicate { name: name.clone(), first, second: dir.join(&rel) });
                self.skip(report, index, &entry, Some(name), "duplicate", reason);
                continue;
            }
            let place = Place { index, entry: entry.clone() };
            if entry != name {
                library.entries().note_alias(&name, &place);
            }
            self.agent.insert(name.clone(), place.clone());
            if self.held.get(&name).is_some_and(|r| !r.deprecated && r.kind != "local") {
                // The agent changed a received skill: only its origin may
                // replace it, so the edit is kept as a derived version (#20).
                match crate::proposals::derive(library, &name, &entry, &text) {
                    Ok(crate::proposals::Derived::Recorded(_)) => report.derived.push(name.clone()),
                    Ok(crate::proposals::Derived::Unchanged) => report.unchanged += 1,
                    Err((code, reason)) => self.skip(report, index, &entry, Some(name), &code, reason),
                }
                continue;
            }
            let held = self
                .held
                .get(&name)
                .filter(|r| !r.deprecated && r.integrity_hash == hash)
                // A folder the node wrote whole, lacking no file the store
                // lists, is the projection of an earlier version that the
                // store moved past while it was written (its next write
                // replaces it), never the agent's edit: importing it would
                // bring that version back. A file the agent edited, added or
                // removed is the agent's.
                .filter(|_| {
                    same_files(library, &name, &companions)
                        || (written && lacks_none(library, &name, &companions))
                });
            let warnings = match held {
                Some(record) => {
                    report.unchanged += 1;
                    // Unchanged: the same warnings as when it was imported, from what the store holds.
                    share_warnings(Some(&entry), &name, &record.description, &limits).unwrap_or_default()
                }
                None => match local_packet(&text, Some(&entry), &origin, &limits, crate::store::now()) {
                    Err(e) => {
                        self.skip(report, index, &entry, Some(name), e.code(), e.to_string());
                        continue;
                    }
                    Ok((packet, warnings)) => {
                        let packet = match library.bundled(packet, &companions) {
                            Ok(packet) => packet,
                            Err(e) => {
                                let reason = CompanionError::from(e);
                                self.skip(
                                    report,
                                    index,
                                    &entry,
                                    Some(name),
                                    reason.code(),
                                    reason.to_string(),
                                );
                                continue;
                            }
                        };
                        for warning in &warnings {
                            tracing::warn!(skill = %name, file = %rel.display(), "{}", warning.message);
                        }
                        match library.put_local_with(
                            self.decider,
                            &packet,
                            &companions,
                            Some(&place),
                            Source::SkillsDir,
                        ) {
                            Ok(true) => {
                                let replaced = self.held.get(&name).is_some_and(|r| !r.deprecated);
                                self.decisions.push(imported(&packet, replaced));
                                report.imported.push(name.clone());
                            }
                            Ok(false) => report.unchanged += 1,
                            Err(e) => {
                                self.skip(
                                    report,
                                    index,
                                    &entry,
                                    Some(name),
                                    "store",
                                    format!("cannot store it: {e}"),
                                );
                                continue;
                            }
                        }
                        warnings
                    }
                },
            };
            if !warnings.is_empty() || entry != name {
                self.entries.push(FolderEntry {
                    folder: index + 1,
                    entry,
                    name: Some(name),
                    code: None,
                    reason: None,
                    warnings,
                });
            }
        }
    }
}

/// Whether the held version of `name` lists the files the folder holds
/// now besides its unchanged `SKILL.md`: an edit of any file is a new
/// version, and a folder that lost or gained a file too.
fn same_files(library: &Library, name: &str, companions: &[Companion]) -> bool {
    let Ok(Some((_, held, _))) = library.store().skill(name) else { return false };
    let packet = SkillPacket { bundle_digest: String::new(), files: Vec::new(), ..held.clone() };
    library.bundled(packet, companions).is_ok_and(|now| now.bundle_digest == held.bundle_digest)
}

/// Whether every file held skill `name` lists is among `companions` (or is its `SKILL.md`).
fn lacks_none(library: &Library, name: &str, companions: &[Companion]) -> bool {
    let Ok(Some((_, held, _))) = library.store().skill(name) else { return false };
    let present: HashSet<&str> = companions.iter().map(|c| c.path.as_str()).chain([SKILL_FILE]).collect();
    held.files.iter().all(|f| present.contains(f.path.as_str()))
}

/// Whether `writer`'s record says the node wrote `content` at
/// `<entry>/<path>`; records without a node count only in a folder this
/// store marked before.
fn node_wrote(writer: &Projection, marked: Marked, entry: &str, path: &str, content: &[u8]) -> bool {
    match writer.wrote_file(entry, path, content) {
        Written::Own => true,
        Written::Unbound => marked == Marked::Own,
        Written::No => false,
    }
}

/// The decision log's account of a skill imported from the agent's folder,
/// with the safety scan's top finding when it flags the skill (peers will
/// refuse it), as `ecp-node skill add` warns.
fn imported(packet: &SkillPacket, replaced: bool) -> decision_log::Decision {
    let scanned = Scanner::standard().try_scan(&packet.skill_body);
    let finding = scanned
        .as_ref()
        .ok()
        .and_then(|r| decision_log::top_finding(&r.findings, DEFAULT_THRESHOLD).cloned());
    let failed = if scanned.is_err() {
        "; the safety scan failed on it (an internal error, not a finding)"
    } else {
        ""
    };
    decision_log::Decision {
        skill: packet.skill_name.clone(),
        origin: packet.origin_instance.clone(),
        sender: "skills-folder".to_owned(),
        peer: "local".to_owned(),
        verdict: if replaced { Verdict::Updated } else { Verdict::New },
        stage: "import",
        reason: format!("confidence {}{failed}", ShownConfidence(packet.confidence)),
        finding,
    }
}
