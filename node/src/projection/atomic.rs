//! A file written whole or not at all: a temporary dot file in the same
//! folder renamed over the target, named by the writing process so that the
//! leftovers of a writer killed mid-write can be told from a live one's and
//! swept at start. And the one exception, a pull's bulk fill: a new file in
//! a folder just made, written in place ([`write_new_in_place`]).

use std::fs;
use std::io::Write;
use std::path::Path;

use super::{Projection, bundle, xattr};

/// The temporary file of an atomic write of `file_name` by process `pid`: a
/// dot file, so agents and the importer pass over it.
pub(super) fn temporary_name(file_name: &str, pid: u32, n: u64) -> String {
    format!(".{file_name}.tmp-{pid}-{n}")
}

/// The process that wrote a temporary file named by [`temporary_name`].
pub(super) fn temporary_writer(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (_, tail) = rest.rsplit_once(".tmp-")?;
    let (pid, n) = tail.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Whether process `pid` still runs. Where that cannot be told (no `/proc`),
/// it is taken to run, so nothing of a live writer is ever removed.
pub(super) fn is_running(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

impl Projection {
    /// Removes the temporary files that writers killed mid-write (kill -9, a
    /// crash) left in the skill folders; those of running processes (a CLI
    /// writing beside the server) stay. Returns how many were removed.
    pub fn sweep_leftovers(&self) -> usize {
        let mut removed = bundle::sweep(&self.dir);
        let Ok(skills) = fs::read_dir(&self.dir) else { return removed };
        let own = process_id();
        for skill in skills.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())) {
            let Ok(files) = fs::read_dir(skill.path()) else { continue };
            for file in files.flatten() {
                let name = file.file_name();
                let Some(pid) = name.to_str().and_then(temporary_writer) else { continue };
                if pid != own && !is_running(pid) && fs::remove_file(file.path()).is_ok() {
                    removed += 1;
                }
            }
        }
        removed
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder,
/// renamed over the target: readers see the old or the new file, never a mix.
/// With `hash`, the temporary file is marked as written by the node before
/// the rename; returns whether that mark could be set.
pub(super) fn write_atomically(path: &Path, bytes: &[u8], hash: Option<&str>) -> std::io::Result<bool> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    // Unique per process and per write: two threads may project the same skill at once.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(temporary_name(file_name, process_id(), n));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        let marked = hash.is_some_and(|hash| xattr::set_fd(&f, hash).is_ok());
        drop(f);
        fs::rename(&tmp, path)?;
        Ok(marked)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes `bytes` to `path`, a file that does not exist yet in a folder the
/// caller has just made, in place: created, marked as the node's write
/// (`hash`), then written; returns whether the mark could be set. For a
/// pull's bulk fill only ([`Projection::fill_in_place`]): the temporary file
/// and its rename were 3–4 % of a 10,000-skill pull's CPU, and in a folder
/// just made there is no older file for a reader to keep seeing. A reader
/// can see the file empty or short for the moment it is written; what a
/// kill leaves — empty with its record, empty without one (killed between
/// the creation and the record), or its first whole pages — is the node's
/// torn write to everyone ([`super::torn`]): never imported, written again
/// from the store at the next start. A failed write removes the file.
pub(super) fn write_new_in_place(path: &Path, bytes: &[u8], hash: &str) -> std::io::Result<bool> {
    let mut f = fs::OpenOptions::new().write(true).create_new(true).open(path)?;
    let marked = xattr::set_fd(&f, hash).is_ok();
    if let Err(e) = f.write_all(bytes) {
        drop(f);
        let _ = fs::remove_file(path);
        return Err(e);
    }
    Ok(marked)
}

/// This process's id, asked of the kernel once.
pub(super) fn process_id() -> u32 {
    static ID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *ID.get_or_init(std::process::id)
}
