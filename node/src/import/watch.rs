//! Following the skills folders: an import after each burst of changes
//! ([`watch`]), the node's own writes told apart from the agent's, a
//! rescan now and then, and polling where the folders cannot be watched.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::mpsc;

use super::{Duplicate, Skipped, import_all};
use crate::library::Library;
use crate::projection::Projection;

/// Quiet time [`watch`] waits for after a change before importing, so a
/// burst of writes (an editor's save, a tool writing many skills) is one
/// import.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(300);
/// How often [`watch`] rescans the folder when it cannot watch it.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);

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
    // Before the first event can come: from now on the projection notes
    // what it writes, so the watcher can pass over it.
    projection.watched();
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
        // None: the node is stopping (or the pass panicked, which printed).
        let Some(report) = library.in_background(|library| import_all(&library)).await else { return };
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
