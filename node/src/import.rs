//! Skills-folder import: the `SKILL.md` files an agent writes into the
//! skills folder become this node's local skills.
//!
//! Point `--skills-dir` at an agent's own skills folder and every
//! `<dir>/<folder>/SKILL.md` the agent writes is imported as a local skill
//! named by its frontmatter — at start ([`import_all`], from
//! [`Node::bind`](crate::Node::bind)) and whenever the folder changes
//! ([`watch`]). A folder named otherwise than its skill (a vendor prefix in
//! the name, `template/` holding `template-skill`) is shared under the
//! frontmatter name with a warning; the folder name stays local: an edit
//! there imports as that skill, its deletion tombstones it, and the
//! projection writes that skill there, never into a second folder. Two
//! folders claiming one name: the one that held it keeps it, the other is
//! not shared. Several skills folders may be given (`--skills-dir` again,
//! `[[folder]]`): each is imported and watched; a name held by two of them
//! is a [`Duplicate`] (the earlier folder's is imported; `serve` refuses to
//! start). Every run also decides again which local skills are shared
//! ([`crate::sharing`]): an `.ecpignore` edit or an operator's mark takes
//! effect without an edit of the skill. A local skill's confidence is the
//! frontmatter key `confidence`, default [`DEFAULT_CONFIDENCE`]. A skill the
//! agent imported here and then deleted becomes a tombstone, so the deletion
//! travels to peers (not a retired one: the node removed its file,
//! [`crate::outcomes`]) — unless the folder lost its marker or too many went at
//! once ([`crate::deletion_guard`]).
//!
//! Nothing is passed over silently: every folder not imported (invalid
//! frontmatter, over a limit, a name collision, a symlink…) and every
//! shared skill with a warning (a description over the 1,024-character
//! guideline, a name other than its folder's) is kept with its reason
//! ([`Entries`], in the store), and `skill list`, `status` and `/v1/` show
//! them with the local skills kept private and why ([`FolderReport`]).
//!
//! The same folder is the node's [projection](crate::projection): the node
//! writes the skills it holds there too. Files it wrote itself (its record
//! of the write, bound to its instance id, matches: see
//! [`crate::projection::Written`]) are not the agent's and are never
//! imported, which also keeps the node's own writes from triggering import
//! loops; a new node on a folder another node wrote finds no record of its
//! own and imports every skill. The other direction is the projection's
//! job: it never overwrites a file the agent owns, and the merge refuses a
//! remote skill whose name a local one holds (a conflict). An agent's
//! folder (`[[agent]]`, [`crate::agents`]) that is also a skills folder
//! holds the node's copies too: told apart the same way, by that agent's
//! projection ([`Library::writer_of`]).
//!
//! A `SKILL.md` that a power loss left empty or cut short of the node's
//! own write (`projection::torn`) is not the agent's either: passed over,
//! and written again from the store by the projection.
//!
//! A skill folder travels whole, as a bundle (`SPEC.md` §12): `SKILL.md`
//! and every other file under it ([`read_companions`]: hidden entries such
//! as `.git/` left out, the executable bit from the file system), within
//! `[limits] bundle_max_*`; an edit, addition or removal of any file is a
//! new version, an unchanged folder is not. A link, device, socket or pipe
//! in it, or a folder over a limit, keeps the skill home with its reason.
//! A folder whose `SKILL.md` the node wrote is the node's whole.
//!
//! What it does not follow: symlinks (a folder or a `SKILL.md` that is a
//! link may point anywhere on the machine), files over `[limits]
//! max_skill_bytes`. It never tombstones external skills or skills the
//! operator added ([`Source::Operator`]) because their files are missing:
//! only skills whose current version came from this folder belong to it.
//!
//! # Layout
//!
//! - `import.rs`: [`import_all`], its report, the deletion guard's part.
//! - `skill_file`: one `SKILL.md` made into a packet ([`local_packet`],
//!   [`read_skill_file`]), shared with `ecp-node skill add`.
//! - `folder`: one pass over one skills folder.
//! - `companions`: a skill folder's other files ([`read_companions`]).
//! - `entries`: what the import keeps between passes ([`Entries`]).
//! - `report`: what `skill list` and `status` show of it ([`FolderReport`]).
//! - `watch`: following the folders ([`watch`]).

mod companions;
mod entries;
mod folder;
mod report;
mod skill_file;
mod watch;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

pub use companions::{Companion, CompanionError, read_companions};
pub use entries::{Entries, Place};
pub use report::{FolderReport, NotShared, Warned};
pub use skill_file::{
    DEFAULT_CONFIDENCE, LONG_DESCRIPTION, MAX_SKILL_FILE_BYTES, NAME_DIFFERS, SkillFileError,
    frontmatter_name, local_origin, local_packet, read_skill_file, share_warnings,
};
pub(crate) use watch::settle;
pub use watch::{DEFAULT_DEBOUNCE, POLL_INTERVAL, watch};

use crate::decision_log::Decisions;
use crate::deletion_guard::Unavailable;
use crate::library::Library;
use crate::projection::SKILL_FILE;
use crate::store::{Source, StoreError};

/// A file the import passed over, and why.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Skipped {
    /// The file, relative to its skills folder (`<folder>/SKILL.md`).
    pub path: PathBuf,
    /// Why.
    pub reason: String,
}

/// Two skills folders holding a skill of the same name: the node imports
/// the first folder's and refuses to start until one is renamed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Duplicate {
    /// The skill name.
    pub name: String,
    /// Its file in the earlier folder (the one imported).
    pub first: PathBuf,
    /// Its file in the later folder (passed over).
    pub second: PathBuf,
}

impl std::fmt::Display for Duplicate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "two skills folders hold a skill named {:?}: {} and {}; rename or remove one",
            self.name,
            self.first.display(),
            self.second.display()
        )
    }
}

/// What one [`import_all`] run did.
#[derive(Debug, Clone, Default)]
pub struct ImportReport {
    /// Skills installed or replaced from the agent's files.
    pub imported: Vec<String>,
    /// Received skills the agent edited: kept as derived versions and
    /// proposed to their origins ([`crate::proposals`]).
    pub derived: Vec<String>,
    /// Agent files identical to the local skill already held.
    pub unchanged: usize,
    /// Files the node wrote itself (its projection), not imported.
    pub own_files: usize,
    /// Skills imported earlier whose files the agent deleted: now tombstones.
    pub tombstoned: Vec<String>,
    /// Local skills whose sharing changed without an edit (a mark, an
    /// `.ecpignore`, the settings).
    pub sharing_changed: Vec<String>,
    /// Files passed over, with reasons.
    pub skipped: Vec<Skipped>,
    /// Names held by more than one folder.
    pub duplicates: Vec<Duplicate>,
    /// Folders that lost their marker: nothing was withdrawn.
    pub unavailable: Vec<Unavailable>,
    /// The deletion this run held (too many skills gone at once).
    pub held_deletion: Option<i64>,
}

impl ImportReport {
    /// Logs a one-line summary, and each skipped file as a warning.
    pub fn log(&self) {
        for folder in &self.unavailable {
            tracing::warn!("{folder}");
        }
        for skip in &self.skipped {
            tracing::warn!(file = %skip.path.display(), reason = %skip.reason, "skills folder: file not imported");
        }
        tracing::info!(
            imported = self.imported.len(),
            derived = self.derived.len(),
            unchanged = self.unchanged,
            node_written = self.own_files,
            tombstoned = self.tombstoned.len(),
            sharing_changed = self.sharing_changed.len(),
            skipped = self.skipped.len(),
            "skills folder imported"
        );
    }

    /// Whether the run changed the store.
    pub fn changed(&self) -> bool {
        !self.imported.is_empty() || !self.tombstoned.is_empty() || !self.sharing_changed.is_empty()
    }
}

/// Imports every `<folder>/<entry>/SKILL.md` the agent wrote, in each
/// skills folder, as a local skill; tombstones skills imported earlier
/// whose files are gone; decides again which local skills are shared.
/// Blocking; nothing here fails as a whole — each problem is a [`Skipped`]
/// (or a [`Duplicate`]), kept with its reason in [`Entries`].
pub fn import_all(library: &Library) -> ImportReport {
    let mut report = ImportReport::default();
    let store_failed = |report: &mut ImportReport, e: StoreError| {
        report.skipped.push(Skipped { path: PathBuf::new(), reason: format!("cannot read the store: {e}") });
    };
    let held = match library.store().held_skills() {
        Ok(held) => held,
        Err(e) => {
            store_failed(&mut report, e);
            return report;
        }
    };
    let decider = match library.sharing().decider(library.store()) {
        Ok(decider) => decider,
        Err(e) => {
            store_failed(&mut report, e);
            return report;
        }
    };
    let mut run = folder::Run {
        library,
        decider: &decider,
        held: &held,
        present: HashSet::new(),
        agent: HashMap::new(),
        entries: Vec::new(),
        decisions: Decisions::default(),
    };
    // The numbers of the folders read whole.
    let mut read = HashSet::new();
    for (index, folder) in library.sharing().folders().iter().enumerate() {
        if run.folder(index, &folder.path, &mut report) {
            read.insert(index + 1);
        }
    }
    let complete = read.len() == library.sharing().folders().len();
    let folder::Run { present, agent, mut entries, decisions, .. } = run;
    decisions.log();
    // What a folder that could not be read kept stays as it was.
    entries.extend(library.entries().all().into_iter().filter(|e| !read.contains(&e.folder)));
    // Before the tombstones: the projection finds a skill's folder by these.
    if let Err(e) = library.entries().replace(library.store(), entries) {
        store_failed(&mut report, e);
    }
    // A folder that cannot be listed says nothing about what the agent
    // deleted; a retired skill's file was removed by the node, not the agent.
    let retired = library.store().retired_names();
    match library
        .store()
        .active_local_from(&Source::SkillsDir)
        .and_then(|owned| Ok((owned, retired?)))
        .map(
            |(owned, retired)| {
                if complete {
                    owned.into_iter().filter(|n| !retired.contains(n)).collect()
                } else {
                    Vec::new()
                }
            },
        )
        .and_then(|owned| guard_deletions(library, owned, &present, &mut report))
    {
        Ok(gone) => {
            for name in gone {
                match library.tombstone(&name, Source::SkillsDir) {
                    Ok(true) => report.tombstoned.push(name),
                    Ok(false) => {}
                    Err(e) => report.skipped.push(Skipped {
                        path: Path::new(&name).join(SKILL_FILE),
                        reason: format!("its file is gone but the tombstone failed: {e}"),
                    }),
                }
            }
        }
        Err(e) => store_failed(&mut report, e),
    }
    let projection_folder = library.projection_folder();
    let folder_of = |name: &str| {
        agent.get(name).cloned().or_else(|| Some(Place { index: projection_folder?, entry: name.to_owned() }))
    };
    match library.reconcile_sharing(&decider, folder_of, Source::SkillsDir) {
        Ok(changed) => report.sharing_changed = changed,
        Err(e) => store_failed(&mut report, e),
    }
    report
}

/// Of the skills imported from the folders (`owned`), those whose files are
/// gone and may be tombstoned now: not those a held deletion keeps, and
/// none when there are so many that they are held ([`Guard::holds`]). A held
/// deletion whose files are all back is dropped.
///
/// [`Guard::holds`]: crate::deletion_guard::Guard::holds
fn guard_deletions(
    library: &Library,
    owned: Vec<String>,
    present: &HashSet<String>,
    report: &mut ImportReport,
) -> Result<Vec<String>, StoreError> {
    let total = owned.len();
    let mut gone: Vec<String> = owned.into_iter().filter(|n| !present.contains(n)).collect();
    for held in library.store().held_deletions()?.into_iter().filter(|d| d.source == Source::SkillsDir) {
        if held.names.iter().all(|n| present.contains(n)) {
            library.store().release_deletion(held.id, "deletion-dropped", &Source::SkillsDir)?;
            tracing::info!(deletion = held.id, "held deletion dropped: its files are back");
            continue;
        }
        gone.retain(|n| !held.names.contains(n));
    }
    if library.deletion_guard().holds(gone.len(), total) {
        let held = library.store().hold_deletion(&Source::SkillsDir, &gone)?;
        tracing::warn!(
            deletion = held.id,
            count = gone.len(),
            of = total,
            "skills folder: {} of {total} skills are gone at once; nothing is withdrawn until you run \
             `ecp-node deletions accept {}` (or reject it to write them back)",
            gone.len(),
            held.id
        );
        report.held_deletion = Some(held.id);
        gone.clear();
    }
    Ok(gone)
}

/// Whether `text` is exactly the file the projection writes for the held
/// external skill `name` (its body with the stamp of where it came from):
/// the node's copy whose record of the write is missing, not an edit.
fn stamped_copy(library: &Library, name: &str, text: &str) -> bool {
    let Ok(Some((_, packet, _))) = library.store().skill(name) else { return false };
    library.projection().content(&packet, ecp_protocol::SkillKind::External) == text
}

/// Whether `bytes`, the `SKILL.md` of folder `entry` that `writer` writes,
/// is what a power loss left of the node's write of the skill the store
/// holds under that name ([`crate::projection::Projection::torn`]).
fn torn_copy(library: &Library, writer: &crate::projection::Projection, entry: &str, bytes: &[u8]) -> bool {
    use ecp_protocol::SkillKind;
    let (intended, kind) = match library.store().skill(entry) {
        Ok(Some((record, packet, _))) => {
            let kind = if record.kind == "external" { SkillKind::External } else { SkillKind::Local };
            (Some(writer.content(&packet, kind).into_owned()), kind)
        }
        _ => (None, SkillKind::Local),
    };
    writer.torn(entry, bytes, intended.as_deref().map(str::as_bytes), kind == SkillKind::External)
}

#[cfg(test)]
mod tests;
