//! One server per skills folder: `serve` holds an OS lock (`flock`) on each
//! skills folder itself for its whole life, so a second node started on a
//! folder another running node serves is refused at start, naming the
//! folder by its number. The two would otherwise take each other's files
//! for the agent's and adopt the folder back and forth ([`crate::deletion_guard`]).
//!
//! The lock is the kernel's, on the folder's own inode: no file is added
//! to the agent's folder, and the lock goes with the process however it
//! ends. A node that stopped leaves nothing behind, so a new node on the
//! same folder (a reinstall, a fresh data folder) starts and adopts it.

use std::fs::{File, TryLockError};
use std::path::Path;

/// Why a skills folder could not be locked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FolderLockError {
    /// Another running node serves the folder.
    #[error(
        "skills folder {number} is served by another running ecp-node; stop that node first, or give this one \
         another skills folder (--skills-dir)"
    )]
    InUse {
        /// The folder's number (1 for the first).
        number: usize,
    },
    /// The folder could not be opened or locked.
    #[error("cannot lock skills folder {number}: {source}")]
    Io {
        /// The folder's number (1 for the first).
        number: usize,
        /// The cause.
        source: std::io::Error,
    },
}

/// The locks on a node's skills folders, held until dropped.
#[derive(Debug)]
pub struct FolderLocks {
    _files: Vec<File>,
}

impl FolderLocks {
    /// Locks each of `folders` (the first is number 1). A folder that does
    /// not exist yet is created, as the watcher would; one that cannot be
    /// created (an unmounted disk's parent) is not locked: nothing is
    /// imported from or written to it until it appears.
    pub fn acquire<'a>(folders: impl IntoIterator<Item = &'a Path>) -> Result<FolderLocks, FolderLockError> {
        let mut files = Vec::new();
        for (i, dir) in folders.into_iter().enumerate() {
            let number = i + 1;
            if std::fs::create_dir_all(dir).is_err() {
                continue;
            }
            let file = File::open(dir).map_err(|source| FolderLockError::Io { number, source })?;
            match file.try_lock() {
                Ok(()) => files.push(file),
                Err(TryLockError::WouldBlock) => return Err(FolderLockError::InUse { number }),
                Err(TryLockError::Error(source)) => return Err(FolderLockError::Io { number, source }),
            }
        }
        Ok(FolderLocks { _files: files })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_a_folder_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let first = FolderLocks::acquire([a.as_path()]).unwrap();
        let err = FolderLocks::acquire([b.as_path(), a.as_path()]).unwrap_err();
        assert!(matches!(err, FolderLockError::InUse { number: 2 }), "{err:?}");
        assert!(!err.to_string().contains(&*dir.path().to_string_lossy()), "no path in {err}");
        drop(first);
        FolderLocks::acquire([b.as_path(), a.as_path()]).expect("free once the first node stopped");
    }
}
