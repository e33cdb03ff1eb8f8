//! The paths this process wrote recently, so the folder watcher can tell its
//! own writes from the agent's.
//!
//! A bulk pull writes thousands of files within the window, so pruning runs
//! only when the map has doubled since the last prune (amortised O(1) per
//! write) and reads the clock once, not once per entry: pruning at a fixed
//! size on every write made a 10,000-skill pull quadratic.
//!
//! Only a process that watches a folder reads the paths ([`Recent::watched`]):
//! the others (`ecp-node pull`, every command but `serve`) note nothing, as a
//! watcher in another process never sees this one's map. A 10,000-skill pull
//! spent 1.1 % of its CPU hashing and inserting paths no one would read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a path the node wrote counts as the node's own in file events.
pub(super) const OWN_WRITE_WINDOW: Duration = Duration::from_secs(5);

/// Below this many entries the map is never pruned.
const PRUNE_FLOOR: usize = 4096;

/// The paths a process's projections wrote recently, noted once a folder
/// watcher of this process asks for them.
#[derive(Debug, Default)]
pub(super) struct Recent {
    watched: AtomicBool,
    writes: Mutex<OwnWrites>,
}

impl Recent {
    /// From now on, writes are noted: a folder watcher of this process
    /// starts. Called before the watcher's first event can come, so no
    /// write it sees goes unnoted (one missed in the moment it starts only
    /// costs an import pass).
    pub(super) fn watched(&self) {
        self.watched.store(true, Ordering::Release);
    }

    /// Whether writes are noted: whether [`Recent::note`]'s paths are worth
    /// building.
    pub(super) fn noting(&self) -> bool {
        self.watched.load(Ordering::Acquire)
    }

    /// Records `paths` as written now, when a watcher reads them.
    pub(super) fn note(&self, paths: impl IntoIterator<Item = PathBuf>) {
        if self.noting() {
            self.writes.lock().unwrap_or_else(|p| p.into_inner()).note(paths);
        }
    }

    /// Whether `path` was written within the window.
    pub(super) fn contains(&self, path: &Path) -> bool {
        self.writes.lock().unwrap_or_else(|p| p.into_inner()).contains(path)
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.writes.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// Paths and when they were written.
#[derive(Debug)]
pub(super) struct OwnWrites {
    at: HashMap<PathBuf, Instant>,
    /// The size at which the next prune runs: twice what the last one kept.
    prune_at: usize,
}

impl Default for OwnWrites {
    fn default() -> Self {
        OwnWrites { at: HashMap::new(), prune_at: PRUNE_FLOOR }
    }
}

impl OwnWrites {
    /// Records `paths` as written now.
    pub(super) fn note(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        let now = Instant::now();
        self.at.extend(paths.into_iter().map(|p| (p, now)));
        if self.at.len() >= self.prune_at {
            self.at.retain(|_, at| now.saturating_duration_since(*at) < OWN_WRITE_WINDOW);
            self.prune_at = (self.at.len() * 2).max(PRUNE_FLOOR);
        }
    }

    /// Whether `path` was written within the window.
    pub(super) fn contains(&self, path: &Path) -> bool {
        self.at.get(path).is_some_and(|at| at.elapsed() < OWN_WRITE_WINDOW)
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.at.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_within_the_window_survive_pruning_and_the_map_prunes_at_twice_what_it_kept() {
        let mut own = OwnWrites::default();
        own.note((0..PRUNE_FLOOR - 1).map(|i| PathBuf::from(format!("/f/{i}"))));
        assert_eq!(own.prune_at, PRUNE_FLOOR, "one below the floor: not pruned yet");
        own.note([PathBuf::from("/f/last")]);
        // At the floor it prunes; everything is recent, so all is kept.
        assert_eq!(own.len(), PRUNE_FLOOR);
        assert_eq!(own.prune_at, 2 * PRUNE_FLOOR);
        assert!(own.contains(Path::new("/f/0")) && own.contains(Path::new("/f/last")));
        assert!(!own.contains(Path::new("/f/other")));
    }

    #[test]
    fn nothing_is_noted_until_a_watcher_asks_and_everything_after() {
        let recent = Recent::default();
        recent.note([PathBuf::from("/before")]);
        assert_eq!(recent.len(), 0, "no watcher: nothing kept");
        assert!(!recent.contains(Path::new("/before")));
        recent.watched();
        recent.note([PathBuf::from("/after")]);
        assert_eq!(recent.len(), 1);
        assert!(recent.contains(Path::new("/after")) && !recent.contains(Path::new("/before")));
    }

    #[test]
    fn expired_entries_go_at_the_next_prune() {
        let mut own = OwnWrites::default();
        let old = Instant::now().checked_sub(OWN_WRITE_WINDOW + Duration::from_secs(1));
        let Some(old) = old else { return }; // a clock too young to go back: nothing to test
        own.at.extend((0..PRUNE_FLOOR - 1).map(|i| (PathBuf::from(format!("/old/{i}")), old)));
        assert!(!own.contains(Path::new("/old/0")), "expired");
        own.note([PathBuf::from("/new")]);
        assert_eq!(own.len(), 1, "the expired entries were pruned");
        assert_eq!(own.prune_at, PRUNE_FLOOR);
    }
}
