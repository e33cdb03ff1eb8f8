//! The skills folder: a projection of the store that agents read directly.
//!
//! Every active skill is written as `<dir>/<name>/SKILL.md`, atomically
//! (temporary file, then rename), so an agent never reads half a skill; a
//! tombstoned skill's file is removed. Files are not fsynced one by one: the
//! store is the durable truth, and [`crate::library::Library::project_all`]
//! rewrites the folder at every start, so a crash loses nothing — while an
//! fsync per file would make loading 10,000 skills take minutes. The folder may be an agent's own
//! skills folder: a file this node did not write (its content differs from
//! what the node last wrote there) belongs to the agent and is never
//! overwritten by a remote skill — the merge already refuses such a packet
//! as a conflict with the local skill the file was imported as.
//!
//! Names are checked again here, although the merge already did: this is
//! the one place that turns a name into a path.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ecp_protocol::skill_doc;
use ecp_protocol::{SkillKind, SkillPacket, integrity};

use crate::store::Change;

/// The file name of a skill inside its folder.
pub const SKILL_FILE: &str = "SKILL.md";
/// Marker file beside `SKILL.md` holding the hash of what this node wrote,
/// so an agent's later edit is recognisable as the agent's.
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

/// How long a path the node wrote counts as the node's own in file events.
const OWN_WRITE_WINDOW: Duration = Duration::from_secs(5);

/// Writes skills into one folder.
#[derive(Debug, Clone)]
pub struct Projection {
    dir: PathBuf,
    /// Paths this process wrote recently, so the folder watcher can tell its
    /// own writes from the agent's: re-importing the whole folder after each
    /// projected file would cost more than the writes themselves.
    own_writes: Arc<Mutex<HashMap<PathBuf, Instant>>>,
}

impl Projection {
    /// A projection into `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Projection { dir: dir.into(), own_writes: Arc::default() }
    }

    /// Whether `path` was written (or created, or removed) by this process
    /// within the last few seconds.
    pub fn is_own_write(&self, path: &Path) -> bool {
        let own = self.own_writes.lock().unwrap_or_else(|p| p.into_inner());
        own.get(path).is_some_and(|at| at.elapsed() < OWN_WRITE_WINDOW)
    }

    fn note_own_writes(&self, dir: &Path) {
        let mut own = self.own_writes.lock().unwrap_or_else(|p| p.into_inner());
        if own.len() > 4096 {
            own.retain(|_, at| at.elapsed() < OWN_WRITE_WINDOW);
        }
        let now = Instant::now();
        own.insert(dir.to_path_buf(), now);
        own.insert(dir.join(SKILL_FILE), now);
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder of one skill, after checking that the name is a safe folder name.
    fn skill_dir(&self, name: &str) -> Result<PathBuf, ProjectionError> {
        skill_doc::validate_name(name).map_err(|_| ProjectionError::UnsafeName(name.to_owned()))?;
        Ok(self.dir.join(name))
    }

    /// Applies committed changes to the folder.
    pub fn apply(&self, changes: &[Change]) -> Result<(), ProjectionError> {
        for change in changes {
            if change.packet.deprecated {
                self.remove(&change.packet.skill_name)?;
            } else {
                self.write(&change.packet, change.kind)?;
            }
        }
        Ok(())
    }

    /// Writes one skill, unless the agent owns a different file of that name.
    pub fn write(&self, packet: &SkillPacket, kind: SkillKind) -> Result<(), ProjectionError> {
        let name = &packet.skill_name;
        let dir = self.skill_dir(name)?;
        let io = |source| ProjectionError::Io { name: name.clone(), source };
        let file = dir.join(SKILL_FILE);
        if fs::read(&file).ok().as_deref() == Some(packet.skill_body.as_bytes()) {
            return self.mark_written(&dir, &packet.skill_body).map_err(io);
        }
        // A file the node did not write is the agent's: never overwritten,
        // whatever the store says (a local skill imported from it will be
        // re-imported with the agent's newer content).
        if self.agent_owns(&dir)? {
            if kind == SkillKind::External {
                tracing::warn!(skill = %name, "skills folder holds the agent's own SKILL.md of this name; not overwritten");
            }
            return Ok(());
        }
        self.note_own_writes(&dir);
        fs::create_dir_all(&dir).map_err(io)?;
        write_atomically(&file, packet.skill_body.as_bytes()).map_err(io)?;
        self.mark_written(&dir, &packet.skill_body).map_err(io)
    }

    /// Removes a skill's file (and its folder when nothing else is in it),
    /// unless the file is the agent's own.
    pub fn remove(&self, name: &str) -> Result<(), ProjectionError> {
        let dir = self.skill_dir(name)?;
        let io = |source| ProjectionError::Io { name: name.to_owned(), source };
        if self.agent_owns(&dir)? {
            return Ok(());
        }
        self.note_own_writes(&dir);
        for file in [SKILL_FILE, WRITTEN_MARKER] {
            match fs::remove_file(dir.join(file)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(e)),
            }
        }
        // Only an empty folder goes: an agent's other files stay.
        let _ = fs::remove_dir(&dir);
        Ok(())
    }

    /// Whether `dir/SKILL.md` exists and is not what this node last wrote.
    fn agent_owns(&self, dir: &Path) -> Result<bool, ProjectionError> {
        let Ok(current) = fs::read(dir.join(SKILL_FILE)) else { return Ok(false) };
        Ok(written_hash(dir).as_deref() != Some(&integrity::sha256_hex(&current)))
    }

    fn mark_written(&self, dir: &Path, body: &str) -> std::io::Result<()> {
        write_atomically(&dir.join(WRITTEN_MARKER), integrity::body_hash(body).as_bytes())
    }

    /// Whether the node wrote the file at `dir/SKILL.md` exactly as it is now.
    pub fn wrote(&self, name: &str, content: &[u8]) -> bool {
        let Ok(dir) = self.skill_dir(name) else { return false };
        written_hash(&dir).as_deref() == Some(&integrity::sha256_hex(content))
    }
}

fn written_hash(dir: &Path) -> Option<String> {
    fs::read_to_string(dir.join(WRITTEN_MARKER)).ok().map(|s| s.trim().to_owned())
}

/// Writes `bytes` to `path` through a temporary file in the same folder,
/// renamed over the target: readers see the old or the new file, never a mix.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    // Unique per process and per write: two threads may project the same skill at once.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{file_name}.tmp-{}-{n}", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecp_protocol::Timestamp;
    use ecp_protocol::packet::Origin;

    fn packet(name: &str, body: &str) -> SkillPacket {
        let origin = Origin::new("peer", "u", "linux", "1");
        SkillPacket::new(&origin, name, "d", body, 0.9, Timestamp::go_zero())
    }

    #[test]
    fn writes_and_removes_skill_files() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Projection::new(tmp.path());
        p.write(&packet("alpha", "---\nname: alpha\n---\nbody\n"), SkillKind::External).unwrap();
        let file = tmp.path().join("alpha").join(SKILL_FILE);
        assert_eq!(fs::read_to_string(&file).unwrap(), "---\nname: alpha\n---\nbody\n");
        assert!(p.wrote("alpha", fs::read(&file).unwrap().as_slice()));
        p.remove("alpha").unwrap();
        assert!(!file.exists());
        assert!(!tmp.path().join("alpha").exists());
    }

    #[test]
    fn never_overwrites_an_agents_own_file_with_an_external_skill() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("alpha");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(SKILL_FILE), "agent's own\n").unwrap();
        let p = Projection::new(tmp.path());
        p.write(&packet("alpha", "remote\n"), SkillKind::External).unwrap();
        assert_eq!(fs::read_to_string(dir.join(SKILL_FILE)).unwrap(), "agent's own\n");
    }

    #[test]
    fn never_overwrites_or_removes_a_file_the_agent_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Projection::new(tmp.path());
        p.write(&packet("alpha", "v1\n"), SkillKind::Local).unwrap();
        let file = tmp.path().join("alpha").join(SKILL_FILE);
        fs::write(&file, "the agent's edit\n").unwrap();
        p.write(&packet("alpha", "v1\n"), SkillKind::Local).unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "the agent's edit\n");
        p.remove("alpha").unwrap();
        assert!(file.exists());
    }

    #[test]
    fn remembers_its_own_writes_for_the_folder_watcher() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Projection::new(tmp.path());
        let file = tmp.path().join("alpha").join(SKILL_FILE);
        assert!(!p.is_own_write(&file));
        p.write(&packet("alpha", "v1\n"), SkillKind::External).unwrap();
        assert!(p.is_own_write(&file));
        assert!(p.is_own_write(&tmp.path().join("alpha")));
        assert!(!p.is_own_write(&tmp.path().join("beta").join(SKILL_FILE)));
    }

    #[test]
    fn refuses_names_that_are_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Projection::new(tmp.path().join("skills"));
        for name in ["../escape", "/etc", "a/b", ""] {
            assert!(matches!(
                p.write(&packet(name, "x"), SkillKind::Local),
                Err(ProjectionError::UnsafeName(_))
            ));
        }
        assert!(!tmp.path().join("escape").exists());
    }
}
