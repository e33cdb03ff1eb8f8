//! A skill folder's files besides `SKILL.md` ([`read_companions`]): what
//! makes a local skill a bundle (`SPEC.md` §12).
//!
//! Every regular file under the skill folder travels, at any depth, with
//! the executable bit the file system gives it (kept on the wire only for
//! text scripts). Hidden entries — any file or folder whose name starts
//! with `.`, such as `.git/`, `.DS_Store` or an `.ecpignore` — are the
//! agent's or its tools' bookkeeping, not the skill, and are left out; so
//! is nothing else. A symlink, device, socket or pipe anywhere in the
//! folder refuses the whole skill (a link may point anywhere on the
//! machine; a bundle never holds half a folder), as does a folder over the
//! bundle limits: the sizes are checked before any file is read.

use std::fs;
use std::io::Read;
use std::path::Path;

use ecp_protocol::bundle::{BundleError, BundleLimits, SKILL_MD};
use thiserror::Error;

/// One file of a skill folder besides its `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Companion {
    /// Its path relative to the skill folder, `/`-separated.
    pub path: String,
    /// Its content.
    pub bytes: Vec<u8>,
    /// Whether the file system marks it executable.
    pub executable: bool,
}

/// Why a skill folder's files cannot travel with it.
#[derive(Debug, Error)]
pub enum CompanionError {
    /// A symlink inside the folder.
    #[error("{0:?} is a symlink; links are not followed, copy the file instead")]
    Symlink(String),
    /// A device, socket or pipe inside the folder.
    #[error("{0:?} is not a regular file (a device, socket or pipe); remove it from the skill folder")]
    Special(String),
    /// A file or folder name that is not UTF-8 text.
    #[error("a file name under {0:?} is not UTF-8 text; rename it")]
    NotUtf8(String),
    /// A bundle limit or path rule.
    #[error("{0} (see [limits] bundle_max_files, bundle_max_file_bytes, bundle_max_bytes)")]
    Bundle(#[from] BundleError),
    /// A file that cannot be read.
    #[error("cannot read {path:?}: {error}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        error: std::io::Error,
    },
}

impl CompanionError {
    /// The short code kept with the folder entry (`skill list`).
    pub fn code(&self) -> &'static str {
        match self {
            CompanionError::Symlink(_) => "symlink",
            CompanionError::Special(_) => "not-a-file",
            CompanionError::NotUtf8(_) => "invalid",
            CompanionError::Bundle(_) => "bundle",
            CompanionError::Read { .. } => "read",
        }
    }
}

/// The files of the skill folder `dir` besides its root `SKILL.md`, sorted
/// by path, within `limits` (the `SKILL.md` counts as one file and its
/// `skill_bytes` towards the bundle size).
///
/// # Errors
///
/// The first file that keeps the folder from travelling whole.
pub fn read_companions(
    dir: &Path,
    skill_bytes: u64,
    limits: &BundleLimits,
) -> Result<Vec<Companion>, CompanionError> {
    let mut found = Vec::new();
    list(dir, "", &mut found)?;
    found.sort_by(|a: &(String, fs::Metadata), b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let count = found.len() + 1;
    if count > limits.max_files {
        return Err(BundleError::TooManyFiles { count, limit: limits.max_files }.into());
    }
    let mut total = skill_bytes;
    for (path, meta) in &found {
        if meta.len() > limits.max_file_bytes {
            let (size, limit) = (meta.len(), limits.max_file_bytes);
            return Err(BundleError::FileTooLarge { path: path.clone(), size, limit }.into());
        }
        total += meta.len();
    }
    if total > limits.max_bundle_bytes {
        return Err(BundleError::BundleTooLarge { size: total, limit: limits.max_bundle_bytes }.into());
    }
    found.into_iter().map(|(path, meta)| read_one(dir, path, &meta, limits)).collect()
}

/// Lists the regular files under `dir/prefix`, with their metadata.
fn list(dir: &Path, prefix: &str, found: &mut Vec<(String, fs::Metadata)>) -> Result<(), CompanionError> {
    let here = dir.join(prefix);
    let read = |error| CompanionError::Read { path: shown(prefix), error };
    for item in fs::read_dir(&here).map_err(read)? {
        let item = item.map_err(read)?;
        let name = item.file_name();
        let Some(name) = name.to_str() else { return Err(CompanionError::NotUtf8(shown(prefix))) };
        if name.starts_with('.') {
            continue;
        }
        let path = if prefix.is_empty() { name.to_owned() } else { format!("{prefix}/{name}") };
        if path == SKILL_MD {
            continue;
        }
        // Not followed: the type of the entry itself.
        let meta = fs::symlink_metadata(item.path())
            .map_err(|error| CompanionError::Read { path: path.clone(), error })?;
        let file_type = meta.file_type();
        if file_type.is_symlink() {
            return Err(CompanionError::Symlink(path));
        } else if file_type.is_dir() {
            list(dir, &path, found)?;
        } else if file_type.is_file() {
            found.push((path, meta));
        } else {
            return Err(CompanionError::Special(path));
        }
    }
    Ok(())
}

/// Reads one listed file, no more than the per-file limit even if it grew.
fn read_one(
    dir: &Path,
    path: String,
    meta: &fs::Metadata,
    limits: &BundleLimits,
) -> Result<Companion, CompanionError> {
    let read = |error| CompanionError::Read { path: path.clone(), error };
    let file = fs::File::open(dir.join(&path)).map_err(read)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limits.max_file_bytes + 1).read_to_end(&mut bytes).map_err(read)?;
    let size = bytes.len() as u64;
    if size > limits.max_file_bytes {
        return Err(BundleError::FileTooLarge { path, size, limit: limits.max_file_bytes }.into());
    }
    Ok(Companion { executable: executable(meta), path, bytes })
}

#[cfg(unix)]
fn executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_: &fs::Metadata) -> bool {
    false
}

/// The folder as a message shows it.
fn shown(prefix: &str) -> String {
    if prefix.is_empty() { ".".to_owned() } else { prefix.to_owned() }
}
