//! Whether the node is alive and whether it is ready, with the reasons:
//! what `/livez`, `/readyz` (and `/healthz`, an alias of `/livez`) answer.
//!
//! Live means the process serves HTTP: a live node that is not ready should
//! be left alone to recover, not restarted. Ready means it can do its job:
//!
//! - `store`: the database takes its write lock within [`STORE_WAIT`], and
//!   the data folder takes a new file (a full disk, a read-only mount or
//!   another process holding the database fails it);
//! - `federator`: federation runs (it stops when the node shuts down, so a
//!   draining node stops taking traffic);
//! - `skills_folder`: every skills folder is there with its marker
//!   ([`crate::deletion_guard`]) — a missing folder, or one that lost its
//!   marker, is unavailable, never empty (nothing is withdrawn meanwhile).
//!
//! Reasons never carry absolute paths: they name the folder by its role.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::federation::Federator;
use crate::library::Library;

/// How long the store's write lock may take before the node is not ready.
pub const STORE_WAIT: Duration = Duration::from_secs(2);

/// The file the data-folder probe writes and removes.
const PROBE_FILE: &str = ".ready-probe";

/// One check of readiness.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Check {
    /// Whether it passed.
    pub ok: bool,
    /// Why it failed (absent when it passed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Check {
    fn from(result: Result<(), String>) -> Check {
        match result {
            Ok(()) => Check { ok: true, reason: None },
            Err(reason) => Check { ok: false, reason: Some(reason) },
        }
    }
}

/// The answer of `/readyz`.
#[derive(Debug, Clone, Serialize)]
pub struct Readiness {
    /// `ready` or `not_ready`.
    pub status: &'static str,
    /// Each check by name.
    pub checks: Checks,
}

/// The checks of [`Readiness`].
#[derive(Debug, Clone, Serialize)]
pub struct Checks {
    /// The store and the data folder take writes.
    pub store: Check,
    /// Federation runs.
    pub federator: Check,
    /// Every skills folder is there with its marker.
    pub skills_folder: Check,
}

impl Readiness {
    /// Whether every check passed.
    pub fn ready(&self) -> bool {
        self.status == "ready"
    }
}

/// A hub replica's readiness (blocking): its database answers. It has no
/// federation and no skills folder, so those checks pass.
pub fn hub(hub: &crate::store::hub::HubStore) -> Readiness {
    let store = Check::from(hub.probe().map_err(|e| {
        tracing::warn!(error = %e, "readiness: the hub's database does not answer");
        "the hub's database does not answer (see the log)".to_owned()
    }));
    let passed = || Check { ok: true, reason: None };
    Readiness {
        status: if store.ok { "ready" } else { "not_ready" },
        checks: Checks { store, federator: passed(), skills_folder: passed() },
    }
}

/// Checks readiness (blocking: it writes to the store and the data folder).
pub fn readiness(library: &Library, data_dir: &Path, federator: Option<&Federator>) -> Readiness {
    let store = Check::from(store_takes_writes(library, data_dir));
    let federator = Check::from(match federator {
        Some(f) if f.running() => Ok(()),
        Some(_) => Err("federation has stopped: the node is shutting down".to_owned()),
        None => Err("federation is not running in this process".to_owned()),
    });
    let skills_folder = Check::from(folders_are_there(library));
    let ready = store.ok && federator.ok && skills_folder.ok;
    Readiness {
        status: if ready { "ready" } else { "not_ready" },
        checks: Checks { store, federator, skills_folder },
    }
}

fn store_takes_writes(library: &Library, data_dir: &Path) -> Result<(), String> {
    library
        .store()
        .probe_write(STORE_WAIT)
        .map_err(|e| format!("the store cannot take a write within {} s: {e}", STORE_WAIT.as_secs()))?;
    let probe = data_dir.join(PROBE_FILE);
    let written = std::fs::write(&probe, b"ready\n").and_then(|()| std::fs::File::open(&probe)?.sync_all());
    let _ = std::fs::remove_file(&probe);
    written.map_err(|e| format!("the data folder cannot take a new file: {}", io_kind(&e)))
}

/// Every skills folder is there with its marker; the reasons of those that
/// are not, joined.
pub fn folders_are_there(library: &Library) -> Result<(), String> {
    let folders = library.sharing().folders();
    let reasons: Vec<String> = folders
        .iter()
        .enumerate()
        .filter_map(|(index, folder)| {
            let reason = match folder_is_there(&folder.path) {
                Err(reason) if folders.len() > 1 => format!("folder {}: {reason}", index + 1),
                Err(reason) => reason,
                Ok(()) => crate::deletion_guard::marker_lost(library, index, &folder.path)?.to_string(),
            };
            Some(reason)
        })
        .collect();
    if reasons.is_empty() { Ok(()) } else { Err(reasons.join("; ")) }
}

fn folder_is_there(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => {
            Err("the skills folder is not a folder; nothing is imported or withdrawn from it".to_owned())
        }
        Err(e) => Err(format!(
            "the skills folder is unavailable ({}); nothing is imported or withdrawn until it is back",
            io_kind(&e)
        )),
    }
}

/// An I/O error without the path the OS may have put in it.
fn io_kind(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(_) => std::io::Error::from(e.kind()).to_string(),
        None => e.kind().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_name_the_problem_without_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("skills-of-someone");
        let reason = folder_is_there(&missing).unwrap_err();
        assert!(reason.contains("unavailable") && !reason.contains("skills-of-someone"), "{reason}");
        let file = dir.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        assert!(folder_is_there(&file).unwrap_err().contains("not a folder"));
        assert_eq!(folder_is_there(dir.path()), Ok(()));
    }

    #[test]
    fn the_data_folder_probe_leaves_nothing_behind_and_fails_where_no_file_can_be_made() {
        let dir = tempfile::tempdir().unwrap();
        let library = Library::open(&dir.path().join("data"), &dir.path().join("skills")).unwrap();
        assert_eq!(store_takes_writes(&library, &dir.path().join("data")), Ok(()));
        assert!(!dir.path().join("data").join(PROBE_FILE).exists());
        // A data folder that is a file cannot take one (this holds for root too).
        let not_a_folder = dir.path().join("plain-file");
        std::fs::write(&not_a_folder, "x").unwrap();
        let reason = store_takes_writes(&library, &not_a_folder).unwrap_err();
        assert!(reason.starts_with("the data folder cannot take a new file"), "{reason}");
        assert!(!reason.contains("plain-file"), "{reason}");
    }
}
