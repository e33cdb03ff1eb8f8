//! Skills-folder import: the `SKILL.md` files an agent writes into the
//! skills folder become this node's local skills.
//!
//! Point `--skills-dir` at an agent's own skills folder and every
//! `<dir>/<name>/SKILL.md` the agent writes is imported as a local skill — at
//! start ([`import_all`], from [`Node::bind`](crate::Node::bind)) and whenever
//! the folder changes ([`watch`]). Several folders may be given (`--skills-dir`
//! again, `[[folder]]`): each is imported and watched; a name held by two of
//! them is a [`Duplicate`] (the earlier folder's is imported; `serve` refuses
//! to start). Every run also decides again which local skills are shared
//! ([`crate::sharing`]): an `.ecpignore` edit or an operator's mark takes
//! effect without an edit of the skill. A local skill's confidence is the
//! frontmatter key `confidence`, default [`DEFAULT_CONFIDENCE`]. A skill the
//! agent imported here and then deleted becomes a tombstone, so the deletion
//! travels to peers — unless the folder lost its marker or too many went at
//! once ([`crate::deletion_guard`]).
//!
//! The same folder is the node's [projection](crate::projection): the node
//! writes the skills it holds there too. Files it wrote itself (their content
//! is what its record of the write says: see [`crate::projection`]) are not the agent's and are
//! never imported, which also keeps the node's own writes from triggering
//! import loops. The other direction is the projection's job: it never
//! overwrites a file the agent owns, and the merge refuses a remote skill
//! whose name a local one holds (a conflict).
//!
//! What it does not follow: symlinks (a folder or a `SKILL.md` that is a
//! link may point anywhere on the machine), files over
//! [`MAX_SKILL_FILE_BYTES`], folder names that are not valid skill names.
//! It never tombstones external skills or skills the operator added
//! ([`Source::Operator`]) because their files are missing: only skills whose
//! current version came from this folder belong to it.
//!
//! [`local_packet`] and [`read_skill_file`] are shared with `ecp-node skill
//! add`, so a skill added by hand and one imported from the folder are made
//! the same way.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ecp_protocol::merge::{MAX_LIST_ITEM_BYTES, MAX_LIST_ITEMS, check_description};
use ecp_protocol::packet::Origin;
use ecp_protocol::scan::{DEFAULT_THRESHOLD, Scanner};
use ecp_protocol::skill_doc::{self, DocError, StructureError, StructureLimits};
use ecp_protocol::{SkillPacket, Timestamp, integrity};
use tokio::sync::mpsc;

use crate::decision_log::{self, Decisions, Verdict};
use crate::deletion_guard::{Marked, Unavailable, check_marker};
use crate::library::Library;
use crate::projection::{Projection, SKILL_FILE};
use crate::sharing::Decider;
use crate::store::{SkillRecord, Source, StoreError};

/// Largest `SKILL.md` imported or added: 100 KB, the structure limit.
pub const MAX_SKILL_FILE_BYTES: usize = skill_doc::DEFAULT_MAX_BYTES;
/// Confidence of a local skill whose frontmatter has no `confidence`.
pub const DEFAULT_CONFIDENCE: f64 = 0.8;
/// Quiet time [`watch`] waits for after a change before importing, so a
/// burst of writes (an editor's save, a tool writing many skills) is one
/// import.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(300);
/// How often [`watch`] rescans the folder when it cannot watch it.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// Why a `SKILL.md` cannot become a local skill. The messages say what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillFileError {
    /// The path is a symlink, which the import does not follow.
    #[error("it is a symlink; the skills folder import does not follow links, copy the file instead")]
    Symlink,
    /// The path is not a regular file.
    #[error("it is not a regular file")]
    NotAFile,
    /// The file is larger than the limit.
    #[error("it is {size} bytes, over the limit of {limit}; shorten the skill")]
    TooLarge {
        /// Size in bytes (at least).
        size: u64,
        /// The limit.
        limit: usize,
    },
    /// The file could not be read.
    #[error("cannot read it: {0}")]
    Read(#[source] std::io::Error),
    /// The file is not UTF-8 text.
    #[error("it is not UTF-8 text; save it as UTF-8")]
    NotUtf8,
    /// The frontmatter does not parse.
    #[error("{0}")]
    Document(#[from] DocError),
    /// The document is not a usable skill (no frontmatter or name, bad name, empty body, …).
    #[error("{0}")]
    Structure(#[from] StructureError),
    /// The frontmatter name differs from the skill's folder name.
    #[error("its frontmatter names the skill {name:?} but its folder is {folder:?}; make them equal")]
    NameMismatch {
        /// The frontmatter `name`.
        name: String,
        /// The folder name.
        folder: String,
    },
    /// The description is longer than a peer accepts.
    #[error("its description is {len} bytes, over the limit of {limit}; keep it to a paragraph")]
    DescriptionTooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit ([`StructureLimits::max_description_bytes`]).
        limit: usize,
    },
    /// Too many tags, or a tag too long, for a peer to accept.
    #[error(
        "its tags break the limits ({MAX_LIST_ITEMS} tags of at most {MAX_LIST_ITEM_BYTES} bytes); use fewer, shorter tags"
    )]
    TagsTooLarge,
}

/// The origin of this node's local skills. The user hash is made from the
/// instance id, so no local user name is ever sent, even hashed.
pub fn local_origin(instance_id: &str) -> Origin {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    let os = format!("{}/{arch}", std::env::consts::OS);
    Origin::new(instance_id, instance_id, &os, concat!("ecp-node/", env!("CARGO_PKG_VERSION")))
}

/// Reads a `SKILL.md` (following symlinks: the caller decides about them)
/// as UTF-8, refusing anything but a regular file of at most `limit` bytes.
pub fn read_skill_file(path: &Path, limit: usize) -> Result<String, SkillFileError> {
    // Check before opening: opening a FIFO would block.
    let meta = fs::metadata(path).map_err(SkillFileError::Read)?;
    if !meta.is_file() {
        return Err(SkillFileError::NotAFile);
    }
    if meta.len() > limit as u64 {
        return Err(SkillFileError::TooLarge { size: meta.len(), limit });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The file may grow between the check and the read: read one byte past the limit at most.
    fs::File::open(path)
        .and_then(|f| f.take(limit as u64 + 1).read_to_end(&mut bytes))
        .map_err(SkillFileError::Read)?;
    if bytes.len() > limit {
        return Err(SkillFileError::TooLarge { size: bytes.len() as u64, limit });
    }
    String::from_utf8(bytes).map_err(|_| SkillFileError::NotUtf8)
}

/// Makes a local skill packet of a `SKILL.md` text: name, description, tags
/// and confidence from its frontmatter, the whole text as body.
///
/// `folder`, when the file sits in a skill folder, must equal the
/// frontmatter name. The document must pass
/// [`check_structure`](skill_doc::check_structure) under `limits`, and its
/// description and tags must fit what peers accept.
pub fn local_packet(
    text: &str,
    folder: Option<&str>,
    origin: &Origin,
    limits: &StructureLimits,
    created_at: Timestamp,
) -> Result<SkillPacket, SkillFileError> {
    let doc = skill_doc::parse(text)?;
    skill_doc::check_structure(&doc, text.len(), limits)?;
    let frontmatter = doc.frontmatter.unwrap_or_default();
    let Some(name) = frontmatter.name else {
        return Err(StructureError::NameMissing.into());
    };
    if let Some(folder) = folder
        && folder != name
    {
        return Err(SkillFileError::NameMismatch { name, folder: folder.to_owned() });
    }
    let description =
        skill_doc::fold_line_breaks(frontmatter.description.as_deref().unwrap_or_default()).trim().to_owned();
    // Over the guideline is a warning, as when a peer receives it.
    match check_description(&description, limits.max_description_bytes) {
        Err(_) => {
            let limit = limits.max_description_bytes;
            return Err(SkillFileError::DescriptionTooLong { len: description.len(), limit });
        }
        Ok(Some(warning)) => tracing::warn!(skill = %name, "{warning}"),
        Ok(None) => {}
    }
    if frontmatter.tags.len() > MAX_LIST_ITEMS
        || frontmatter.tags.iter().any(|t| t.len() > MAX_LIST_ITEM_BYTES)
    {
        return Err(SkillFileError::TagsTooLarge);
    }
    let confidence = frontmatter.confidence.unwrap_or(DEFAULT_CONFIDENCE);
    Ok(SkillPacket::new(origin, &name, &description, text, confidence, created_at)
        .with_tags(frontmatter.tags))
}

/// A file the import passed over, and why.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Skipped {
    /// The file, relative to its skills folder (`<name>/SKILL.md`).
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

/// Imports every `<folder>/<name>/SKILL.md` the agent wrote, in each skills
/// folder, as a local skill; tombstones skills imported earlier whose files
/// are gone; decides again which local skills are shared. Blocking; nothing
/// here fails as a whole — each problem is a [`Skipped`] (or a [`Duplicate`]).
pub fn import_all(library: &Library) -> ImportReport {
    let mut report = ImportReport::default();
    let store_failed = |report: &mut ImportReport, e: StoreError| {
        report.skipped.push(Skipped { path: PathBuf::new(), reason: format!("cannot read the store: {e}") });
    };
    let held: HashMap<String, SkillRecord> = match library.store().list_skills() {
        Ok(records) => records.into_iter().map(|r| (r.name.clone(), r)).collect(),
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
    let mut run = Run {
        library,
        decider: &decider,
        held: &held,
        present: HashSet::new(),
        agent: HashMap::new(),
        decisions: Decisions::default(),
    };
    let mut complete = true;
    for (index, folder) in library.sharing().folders().iter().enumerate() {
        complete &= run.folder(index, &folder.path, &mut report);
    }
    let Run { present, agent, decisions, .. } = run;
    decisions.log();
    // A folder that cannot be listed says nothing about what the agent deleted.
    match library
        .store()
        .active_local_from(&Source::SkillsDir)
        .map(|owned| if complete { owned } else { Vec::new() })
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
    let folder_of = |name: &str| agent.get(name).copied().or(projection_folder);
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

/// One [`import_all`] run's state across folders.
struct Run<'a> {
    library: &'a Library,
    decider: &'a Decider<'a>,
    held: &'a HashMap<String, SkillRecord>,
    /// Names with a file in some folder (deleted ones become tombstones).
    present: HashSet<String>,
    /// Names with an agent's file, and the folder that holds it.
    agent: HashMap<String, usize>,
    /// The skills imported, for the decision log.
    decisions: Decisions,
}

impl Run<'_> {
    /// Imports one folder; `false` when it exists but cannot be listed.
    fn folder(&mut self, index: usize, dir: &Path, report: &mut ImportReport) -> bool {
        let library = self.library;
        let is_projection = dir == library.projection().dir();
        let entries = match fs::read_dir(dir) {
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
        let origin = local_origin(library.store().instance_id());
        let limits = StructureLimits::default();
        let mut folders: Vec<_> = entries.filter_map(Result::ok).collect();
        folders.sort_by_key(fs::DirEntry::file_name);
        for entry in folders {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
            let rel = Path::new(&name).join(SKILL_FILE);
            let skip = |report: &mut ImportReport, reason: String| {
                report.skipped.push(Skipped { path: rel.clone(), reason });
            };
            // A file type from read_dir does not follow symlinks.
            let Ok(file_type) = entry.file_type() else { continue };
            if name.starts_with('.') {
                continue;
            }
            if file_type.is_symlink() {
                if fs::metadata(entry.path()).is_ok_and(|m| m.is_dir()) {
                    skip(report, "the skill folder is a symlink; links are not followed".to_owned());
                    self.present.insert(name);
                }
                continue;
            }
            if !file_type.is_dir() {
                continue;
            }
            let file = entry.path().join(SKILL_FILE);
            let meta = match fs::symlink_metadata(&file) {
                Ok(meta) => meta,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    self.present.insert(name);
                    skip(report, format!("cannot read it: {e}"));
                    continue;
                }
            };
            // From here on the file exists: whatever happens, the skill is not "deleted".
            self.present.insert(name.clone());
            if let Err(e) = skill_doc::validate_name(&name) {
                skip(report, format!("the folder name is not a skill name: {e}"));
                continue;
            }
            if meta.file_type().is_symlink() {
                skip(report, SkillFileError::Symlink.to_string());
                continue;
            }
            let text = match read_skill_file(&file, MAX_SKILL_FILE_BYTES) {
                Ok(text) => text,
                Err(e) => {
                    skip(report, e.to_string());
                    continue;
                }
            };
            // Only the projection folder holds files the node wrote; in an
            // adopted folder, the records are another node's (#25).
            if is_projection && marked == Marked::Own && library.projection().wrote(&name, text.as_bytes()) {
                report.own_files += 1;
                continue;
            }
            let hash = integrity::body_hash(&text);
            if is_projection
                && self
                    .held
                    .get(&name)
                    .is_some_and(|r| !r.deprecated && r.kind == "external" && r.integrity_hash != hash)
                && stamped_copy(library, &name, &text)
            {
                report.own_files += 1;
                continue;
            }
            let held = self.held.get(&name).filter(|r| !r.deprecated && r.integrity_hash == hash);
            if is_projection && held.is_some_and(|r| r.kind != "local") {
                // The node's copy of an external skill whose marker is not
                // written yet (or was lost): still the node's file.
                report.own_files += 1;
                continue;
            }
            if let Some(&earlier) = self.agent.get(&name) {
                let first = library.sharing().folders()[earlier].path.join(&rel);
                report.duplicates.push(Duplicate { name, first, second: dir.join(&rel) });
                continue;
            }
            self.agent.insert(name.clone(), index);
            if held.is_some() {
                report.unchanged += 1;
                continue;
            }
            let packet = match local_packet(&text, Some(&name), &origin, &limits, crate::store::now()) {
                Ok(packet) => packet,
                Err(e) => {
                    skip(report, e.to_string());
                    continue;
                }
            };
            match library.put_local_with(self.decider, &packet, Some(index), Source::SkillsDir) {
                Ok(true) => {
                    let replaced = self.held.get(&name).is_some_and(|r| !r.deprecated);
                    self.decisions.push(imported(&packet, replaced));
                    report.imported.push(name);
                }
                Ok(false) => report.unchanged += 1,
                Err(e) => skip(report, format!("cannot store it: {e}")),
            }
        }
        true
    }
}

/// The decision log's account of a skill imported from the agent's folder,
/// with the safety scan's top finding when it flags the skill (peers will
/// refuse it), as `ecp-node skill add` warns.
fn imported(packet: &SkillPacket, replaced: bool) -> decision_log::Decision {
    let report = Scanner::standard().scan(&packet.skill_body);
    let finding = decision_log::top_finding(&report.findings, DEFAULT_THRESHOLD).cloned();
    decision_log::Decision {
        skill: packet.skill_name.clone(),
        origin: packet.origin_instance.clone(),
        sender: "skills-folder".to_owned(),
        peer: "local".to_owned(),
        verdict: if replaced { Verdict::Updated } else { Verdict::New },
        stage: "import",
        reason: format!("confidence {}", packet.confidence),
        finding,
    }
}

/// How often a watched folder is rescanned anyway.
const RESCAN_INTERVAL: Duration = Duration::from_secs(30);

/// Watches the skills folder and runs [`import_all`] after each burst of
/// changes (quiet for `debounce`). If the folder cannot be watched, logs one
/// warning and rescans it every [`POLL_INTERVAL`] instead. Runs until dropped.
pub async fn watch(library: Library, debounce: Duration) {
    let folders: Vec<PathBuf> = library.sharing().folders().iter().map(|f| f.path.clone()).collect();
    let mut imports = Imports::default();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let watchers: notify::Result<Vec<_>> =
        folders.iter().map(|dir| start_watcher(dir, library.projection().clone(), tx.clone())).collect();
    drop(tx);
    match watchers {
        Ok(_watchers) => {
            // `_watchers` live as long as this loop; dropping them stops the events.
            // What changed between the import at start and now has sent no event.
            imports.run(&library, false).await;
            // A watch can go quiet without an error (the folder itself
            // replaced, an overflowing event queue): rescan now and then too.
            let mut rescan = tokio::time::interval(RESCAN_INTERVAL);
            rescan.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            rescan.tick().await;
            loop {
                tokio::select! {
                    event = rx.recv() => {
                        if event.is_none() {
                            break;
                        }
                        settle(&mut rx, debounce).await;
                    }
                    _ = rescan.tick() => {}
                }
                imports.run(&library, true).await;
            }
            tracing::warn!("skills folder watcher stopped; polling the folder every 2 s instead");
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch the skills folder; polling it every 2 s instead");
        }
    }
    let mut tick = tokio::time::interval(POLL_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        imports.run(&library, true).await;
    }
}

/// Starts a recursive watcher on `dir` (created if missing) that sends one
/// `()` per relevant event. Events on paths the node's own projection just
/// wrote are not relevant (an agent write landing on the same path in that
/// moment is caught by the periodic rescan).
fn start_watcher(
    dir: &Path,
    projection: Projection,
    tx: mpsc::UnboundedSender<()>,
) -> notify::Result<notify::RecommendedWatcher> {
    use notify::Watcher;
    fs::create_dir_all(dir).map_err(notify::Error::io)?;
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // An error (e.g. a queue overflow) may hide changes: rescan.
        if event.as_ref().is_ok_and(|e| !relevant(e) || own_write(&projection, e)) {
            return;
        }
        let _ = tx.send(());
    })?;
    watcher.watch(dir, notify::RecursiveMode::Recursive)?;
    Ok(watcher)
}

/// Whether every path of `event` is one the node's projection just wrote
/// (dot-files, its temporary files and markers, count as its own too).
fn own_write(projection: &Projection, event: &notify::Event) -> bool {
    !event.paths.is_empty() && event.paths.iter().all(|p| projection.is_own_write(p) || node_dot_file(p))
}

/// Whether `text` is exactly the file the projection writes for the held
/// external skill `name` (its body with the stamp of where it came from):
/// the node's copy whose record of the write is missing, not an edit.
fn stamped_copy(library: &Library, name: &str, text: &str) -> bool {
    let Ok(Some((_, packet, _))) = library.store().skill(name) else { return false };
    library.projection().content(&packet, ecp_protocol::SkillKind::External) == text
}

/// Whether `path` is a dot-file of the node's (a temporary file, a marker):
/// every dot-file but the user's `.ecpignore`.
fn node_dot_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| {
        let n = n.to_string_lossy();
        n.starts_with('.') && n != crate::sharing::IGNORE_FILE
    })
}

/// Whether an event may change what the import sees. Reads (the import's
/// own included) are not, nor changes of metadata only (the projection
/// recording a file as its own sets an attribute); neither are writes that
/// only touch the node's dot-files — its temporary files and markers — since a
/// rename onto `SKILL.md` names `SKILL.md` itself. An `.ecpignore` is the user's.
fn relevant(event: &notify::Event) -> bool {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    match event.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => {}
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_)) => return false,
        _ => {}
    }
    event.paths.is_empty() || event.paths.iter().any(|p| !node_dot_file(p))
}

/// Waits until no event arrived for `debounce`, or at most ten times that
/// while events keep coming, so a busy folder still gets imported.
pub(crate) async fn settle(rx: &mut mpsc::UnboundedReceiver<()>, debounce: Duration) {
    let give_up = tokio::time::Instant::now() + debounce * 10;
    while let Ok(Some(())) = tokio::time::timeout(debounce, rx.recv()).await {
        if tokio::time::Instant::now() >= give_up {
            return;
        }
    }
}

/// Runs imports for [`watch`], remembering what was skipped last time so
/// that a bad file is logged when it appears or changes, not on every run.
#[derive(Default)]
struct Imports {
    skipped: HashSet<Skipped>,
    duplicates: HashSet<Duplicate>,
}

impl Imports {
    /// One import; `warn` is false when the skips were just logged elsewhere.
    async fn run(&mut self, library: &Library, warn: bool) {
        let library = library.clone();
        let Ok(report) = tokio::task::spawn_blocking(move || import_all(&library)).await else {
            tracing::error!("skills folder import panicked");
            return;
        };
        for skip in report.skipped.iter().filter(|s| warn && !self.skipped.contains(*s)) {
            tracing::warn!(file = %skip.path.display(), reason = %skip.reason, "skills folder: file not imported");
        }
        self.skipped = report.skipped.iter().cloned().collect();
        if report.changed() {
            tracing::info!(
                imported = ?report.imported,
                tombstoned = ?report.tombstoned,
                sharing_changed = ?report.sharing_changed,
                "skills folder changed"
            );
        }
        for duplicate in report.duplicates.iter().filter(|d| !self.duplicates.contains(*d)) {
            tracing::warn!(
                skill = %duplicate.name,
                "two skills folders hold this skill; the earlier folder's is used — rename or remove one"
            );
        }
        self.duplicates = report.duplicates.iter().cloned().collect();
    }
}

#[cfg(test)]
mod tests;
