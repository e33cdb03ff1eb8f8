//! A bundle's whole folder (#26, `SPEC.md` §12): `SKILL.md` and every
//! listed file, written into a temporary sibling folder, fsynced, then
//! swapped in by rename — the old folder renamed aside, the new one renamed
//! in, the old one removed — so a crash leaves the old folder or the new
//! one, never half a bundle. A folder left aside by a crash between the two
//! renames is put back at start ([`sweep`]), and temporary folders of dead
//! writers are removed.
//!
//! Every file the node writes carries the record of its write (the
//! `user.ecp-written` attribute, bound to the node like `SKILL.md`'s), so
//! the importer tells the node's files from the agent's
//! ([`super::Projection::wrote_file`]). Where the platform keeps no
//! extended attributes, companion files have no record and count as the
//! agent's: a tombstone then leaves them, never removing the agent's work.
//!
//! The agent's own files are kept: a file in the old folder that the
//! listing does not name and the node did not write is carried into the new
//! folder (hard link, else copy); a listed file the agent changed makes the
//! folder the agent's, and it is not overwritten (as with `SKILL.md`).

use std::fs;
use std::io::Write;
use std::path::Path;

use ecp_protocol::SkillPacket;

use super::{SKILL_FILE, Written, is_running, process_id, xattr};

/// Suffix of a bundle folder being written, before `-{pid}-{n}`.
const BUILDING: &str = ".tmp-";
/// Suffix of an old bundle folder renamed aside, before `-{pid}-{n}`.
const ASIDE: &str = ".old-";

/// What became of one bundle write.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The folder now shows the bundle.
    Written,
    /// A listed file the agent changed: the folder is the agent's.
    AgentOwns,
}

/// One file to show: its path in the folder, its bytes, executable or not.
pub(super) struct Planned {
    pub(super) path: String,
    pub(super) bytes: Vec<u8>,
    pub(super) executable: bool,
}

/// The files of `packet`'s bundle besides `SKILL.md`, read from the blob
/// store; `None` when one is not held.
pub(super) fn plan(packet: &SkillPacket, blob: impl Fn(&str) -> Option<Vec<u8>>) -> Option<Vec<Planned>> {
    packet
        .files
        .iter()
        .filter(|f| f.path != SKILL_FILE)
        .map(|f| {
            Some(Planned { path: f.path.clone(), bytes: blob(&f.sha256)?, executable: f.mode == "0755" })
        })
        .collect()
}

/// Whether every planned file is at its place in `dir` with its bytes and mode.
pub(super) fn shown(dir: &Path, files: &[Planned]) -> bool {
    files.iter().all(|f| {
        let path = dir.join(&f.path);
        fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && is_executable(&m) == f.executable)
            && fs::read(&path).is_ok_and(|b| b == f.bytes)
    })
}

/// Writes the folder `dir` as `skill` (`SKILL.md`'s bytes) and `files`;
/// `record` turns content into the record of its write, `owned` says what
/// the record kept on a file says of its content.
pub(super) fn write(
    dir: &Path,
    skill: &[u8],
    files: &[Planned],
    record: &dyn Fn(&[u8]) -> String,
    owned: &dyn Fn(&Path, &[u8]) -> Written,
) -> std::io::Result<Outcome> {
    let old = dir.exists();
    if old {
        for f in files {
            let path = dir.join(&f.path);
            if let Ok(current) = fs::read(&path)
                && current != f.bytes
                && owned(&path, &current) == Written::No
            {
                return Ok(Outcome::AgentOwns);
            }
        }
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    let entry = dir.file_name().and_then(|n| n.to_str()).unwrap_or("skill");
    let tmp = parent.join(sibling(entry, BUILDING));
    let result = (|| {
        fs::create_dir_all(&tmp)?;
        put(&tmp.join(SKILL_FILE), skill, false, &record(skill))?;
        for f in files {
            put(&tmp.join(&f.path), &f.bytes, f.executable, &record(&f.bytes))?;
        }
        if old {
            carry_agents_files(dir, &tmp, Path::new(""), files, owned)?;
        }
        sync_tree(&tmp)?;
        swap(dir, &tmp, parent, entry)
    })();
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    result.map(|()| Outcome::Written)
}

/// Renames `tmp` in as `dir`, the old `dir` aside first and removed after.
fn swap(dir: &Path, tmp: &Path, parent: &Path, entry: &str) -> std::io::Result<()> {
    let aside = parent.join(sibling(entry, ASIDE));
    let had_old = match fs::rename(dir, &aside) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(e),
    };
    if let Err(e) = fs::rename(tmp, dir) {
        if had_old {
            let _ = fs::rename(&aside, dir);
        }
        return Err(e);
    }
    sync_dir(parent)?;
    if had_old {
        fs::remove_dir_all(&aside)?;
    }
    Ok(())
}

/// Links (else copies) into `tmp` the files of `dir` under `rel` that the
/// bundle does not list and the node did not write: the agent's.
fn carry_agents_files(
    dir: &Path,
    tmp: &Path,
    rel: &Path,
    files: &[Planned],
    owned: &dyn Fn(&Path, &[u8]) -> Written,
) -> std::io::Result<()> {
    for entry in fs::read_dir(dir.join(rel))? {
        let entry = entry?;
        let rel = rel.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            carry_agents_files(dir, tmp, &rel, files, owned)?;
            continue;
        }
        let name = rel.to_string_lossy().replace('\\', "/");
        if !kind.is_file() || name == SKILL_FILE || files.iter().any(|f| f.path == name) {
            continue;
        }
        let from = dir.join(&rel);
        if fs::read(&from).is_ok_and(|c| owned(&from, &c) != Written::No) {
            continue;
        }
        let to = tmp.join(&rel);
        if let Some(p) = to.parent() {
            fs::create_dir_all(p)?;
        }
        if fs::hard_link(&from, &to).is_err() {
            fs::copy(&from, &to)?;
        }
    }
    Ok(())
}

/// Writes one file with its record and mode.
fn put(path: &Path, bytes: &[u8], executable: bool, record: &str) -> std::io::Result<()> {
    if let Some(p) = path.parent() {
        fs::create_dir_all(p)?;
    }
    let mut f = fs::File::create(path)?;
    f.write_all(bytes)?;
    let _ = xattr::set_fd(&f, record);
    if executable {
        set_executable(&f)?;
    }
    f.sync_all()
}

/// Fsyncs every folder under and including `dir` (files were synced as written).
fn sync_tree(dir: &Path) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            sync_tree(&entry.path())?;
        }
    }
    sync_dir(dir)
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    fs::File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(unix)]
fn set_executable(f: &fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    f.set_permissions(fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn set_executable(_f: &fs::File) -> std::io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn is_executable(m: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_m: &fs::Metadata) -> bool {
    true
}

/// A dot sibling of the folder `entry`, unique per process and write.
fn sibling(entry: &str, kind: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(".{entry}{kind}{}-{n}", process_id())
}

/// The folder a sibling named by [`sibling`] belongs to, whether it was set
/// aside, and its writer's process id.
fn parse_sibling(name: &str) -> Option<(&str, bool, u32)> {
    let rest = name.strip_prefix('.')?;
    let (entry, aside, tail) = match (rest.rsplit_once(BUILDING), rest.rsplit_once(ASIDE)) {
        (Some((entry, tail)), _) => (entry, false, tail),
        (None, Some((entry, tail))) => (entry, true, tail),
        (None, None) => return None,
    };
    let (pid, n) = tail.split_once('-')?;
    n.parse::<u64>().ok()?;
    Some((entry, aside, pid.parse().ok()?))
}

/// Cleans the bundle folders dead writers left in `dir`: an old folder set
/// aside is put back when its place is empty (the crash fell between the two
/// renames) and removed otherwise; a folder being written is removed.
/// Returns how many were cleaned.
pub(super) fn sweep(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else { return 0 };
    let own = process_id();
    let mut cleaned = 0;
    for e in entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())) {
        let name = e.file_name();
        let Some((entry, aside, pid)) = name.to_str().and_then(parse_sibling) else { continue };
        if pid == own || is_running(pid) {
            continue;
        }
        let place = dir.join(entry);
        let done = if aside && !place.exists() {
            fs::rename(e.path(), &place).is_ok()
        } else {
            fs::remove_dir_all(e.path()).is_ok()
        };
        cleaned += usize::from(done);
    }
    cleaned
}

/// Removes from `dir` the files the node wrote (`owned` says `Own` or
/// `Unbound`) and the folders left empty; the agent's files stay, and the
/// folder with them.
pub(super) fn remove(dir: &Path, owned: &dyn Fn(&Path, &[u8]) -> Written) -> std::io::Result<()> {
    let Ok(entries) = fs::read_dir(dir) else { return Ok(()) };
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            remove(&path, owned)?;
        } else if kind.is_file() && fs::read(&path).is_ok_and(|c| owned(&path, &c) != Written::No) {
            fs::remove_file(&path)?;
        }
    }
    let _ = fs::remove_dir(dir);
    Ok(())
}
