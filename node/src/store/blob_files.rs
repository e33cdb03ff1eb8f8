//! The bytes of blobs, as files in the data folder: `<data>/blobs/ab/<hex>`,
//! one per SHA-256 whatever number of skills and versions list it.
//!
//! A blob is written to a temporary file under `<data>/blobs/tmp/`, hashed
//! and counted while it is written (a [`BlobWriter`]), refused past its size
//! limit or when its digest is not the one announced, synced, and only then
//! renamed into place ([`BlobFiles::place`], a batch at a time): a crash leaves a temporary
//! file (removed at the next start), never a blob with the wrong bytes.
//! Which blobs are held, and who brought them, is the database's
//! (`blobs.rs`); this module owns the files alone.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use sha2::{Digest, Sha256};

/// The folder of blobs inside the data folder.
pub const BLOBS_DIR: &str = "blobs";
/// The folder of uploads in progress inside [`BLOBS_DIR`].
const TMP_DIR: &str = "tmp";

/// The blob files of one data folder.
#[derive(Debug)]
pub struct BlobFiles {
    dir: PathBuf,
    /// Held while a blob is put in place and recorded, and while unused
    /// blobs are collected: a collection never removes a file an upload
    /// has just put back.
    commit: Mutex<()>,
}

/// Why a blob being written was refused.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// More bytes than the limit.
    #[error("the blob is over the limit of {limit} bytes per file")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// The bytes hash to another digest than announced.
    #[error("the body's SHA-256 is {actual}, not the {expected} it was sent as")]
    DigestMismatch {
        /// The digest announced (the path's).
        expected: String,
        /// The digest of what arrived.
        actual: String,
    },
    /// The file system failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// A blob being written: a temporary file, hashed and counted as it grows;
/// removed when dropped before [`BlobFiles::place`].
#[derive(Debug)]
pub struct BlobWriter {
    file: File,
    path: PathBuf,
    hash: Sha256,
    size: u64,
    limit: u64,
}

/// A written blob whose digest checked out, ready to be put in place.
#[derive(Debug)]
pub struct VerifiedBlob {
    writer: BlobWriter,
    sha256: String,
}

impl VerifiedBlob {
    /// Its SHA-256, lowercase hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.writer.size
    }

    /// Its bytes, read again from the temporary file: a hub replica copies
    /// them into the hub's database from there, a chunk at a time.
    ///
    /// # Errors
    ///
    /// The file system's error.
    pub fn reopen(&self) -> io::Result<File> {
        File::open(&self.writer.path)
    }
}

impl BlobWriter {
    /// Appends `chunk`.
    ///
    /// # Errors
    ///
    /// [`WriteError::TooLarge`] once the blob grows past its limit (nothing
    /// more is written), or the file system's error.
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), WriteError> {
        let size = self.size.saturating_add(chunk.len() as u64);
        if size > self.limit {
            return Err(WriteError::TooLarge { limit: self.limit });
        }
        self.file.write_all(chunk)?;
        self.hash.update(chunk);
        self.size = size;
        Ok(())
    }

    /// Ends the blob: checks that its digest is `expected` and syncs it.
    ///
    /// # Errors
    ///
    /// [`WriteError::DigestMismatch`], or the file system's error.
    pub fn finish(mut self, expected: &str) -> Result<VerifiedBlob, WriteError> {
        let actual = hex::encode(std::mem::take(&mut self.hash).finalize());
        if actual != expected {
            return Err(WriteError::DigestMismatch { expected: expected.to_owned(), actual });
        }
        self.file.sync_all()?;
        Ok(VerifiedBlob { writer: self, sha256: actual })
    }
}

impl Drop for BlobWriter {
    fn drop(&mut self) {
        // After a commit the temporary file is gone and this fails harmlessly.
        let _ = fs::remove_file(&self.path);
    }
}

impl BlobFiles {
    /// The blob files under `data_dir`; uploads a crash interrupted are removed.
    /// The folders are made by the first upload ([`BlobFiles::writer`]): a
    /// node that never holds a blob keeps no empty ones (a block each on
    /// ext4, #18 item 2).
    pub(super) fn open(data_dir: &Path) -> io::Result<BlobFiles> {
        let dir = data_dir.join(BLOBS_DIR);
        match fs::remove_dir_all(dir.join(TMP_DIR)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        Ok(BlobFiles { dir, commit: Mutex::new(()) })
    }

    /// Where the blob `sha256` (64 lowercase hex characters) lives.
    pub fn path(&self, sha256: &str) -> PathBuf {
        self.dir.join(&sha256[..2]).join(sha256)
    }

    /// The bytes of blob `sha256`.
    ///
    /// # Errors
    ///
    /// The file system's error (`NotFound` for a blob not held).
    pub fn read(&self, sha256: &str) -> io::Result<Vec<u8>> {
        fs::read(self.path(sha256))
    }

    /// A new blob of at most `limit` bytes.
    ///
    /// # Errors
    ///
    /// The file system's error.
    pub fn writer(&self, limit: u64) -> io::Result<BlobWriter> {
        let tmp = self.dir.join(TMP_DIR);
        fs::create_dir_all(&tmp)?;
        let path = tmp.join(hex::encode(rand::random::<[u8; 12]>()));
        let file = File::options().write(true).create_new(true).open(&path)?;
        Ok(BlobWriter { file, path, hash: Sha256::new(), size: 0, limit })
    }

    /// The lock [`BlobFiles::place`] and the collection of unused blobs hold.
    pub(super) fn lock(&self) -> MutexGuard<'_, ()> {
        self.commit.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Puts `blobs` in place (the caller holds [`BlobFiles::lock`]): each
    /// renamed into its folder, then each folder synced once, however many
    /// of the blobs it received.
    pub(super) fn place(&self, blobs: &[&VerifiedBlob]) -> io::Result<()> {
        let mut folders: Vec<PathBuf> = Vec::new();
        for blob in blobs {
            let target = self.path(&blob.sha256);
            let folder = target.parent().expect("a blob path has a folder").to_path_buf();
            if !folders.contains(&folder) {
                fs::create_dir_all(&folder)?;
                folders.push(folder);
            }
            fs::rename(&blob.writer.path, &target)?;
        }
        // The renames are durable once their folders are synced.
        for folder in &folders {
            File::open(folder)?.sync_all()?;
        }
        Ok(())
    }

    /// Removes the file of blob `sha256`, if there is one.
    pub(super) fn remove(&self, sha256: &str) -> io::Result<()> {
        match fs::remove_file(self.path(sha256)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELLO: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

    #[test]
    fn a_blob_is_written_once_checked_and_placed_by_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let files = BlobFiles::open(dir.path()).unwrap();
        let mut w = files.writer(5).unwrap();
        w.write(b"hel").unwrap();
        w.write(b"lo").unwrap();
        let blob = w.finish(HELLO).unwrap();
        assert_eq!(blob.size(), 5);
        files.place(&[&blob]).unwrap();
        drop(blob);
        assert_eq!(files.read(HELLO).unwrap(), b"hello");
        assert!(dir.path().join("blobs/2c").join(HELLO).is_file());
        assert_eq!(fs::read_dir(dir.path().join("blobs/tmp")).unwrap().count(), 0);
    }

    #[test]
    fn the_folders_are_made_by_the_first_upload_and_its_leftovers_removed_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let files = BlobFiles::open(dir.path()).unwrap();
        assert!(!dir.path().join(BLOBS_DIR).exists(), "no blob, no folder");
        assert!(files.read(HELLO).is_err());
        let mut w = files.writer(5).unwrap();
        w.write(b"hel").unwrap();
        // A crash mid-upload leaves its temporary file: the next open removes it.
        std::mem::forget(w);
        assert_eq!(fs::read_dir(dir.path().join("blobs/tmp")).unwrap().count(), 1);
        let files = BlobFiles::open(dir.path()).unwrap();
        assert!(!dir.path().join("blobs/tmp").exists());
        let mut w = files.writer(5).unwrap();
        w.write(b"hello").unwrap();
        files.place(&[&w.finish(HELLO).unwrap()]).unwrap();
        assert_eq!(files.read(HELLO).unwrap(), b"hello");
    }

    #[test]
    fn one_byte_past_the_limit_or_a_wrong_digest_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let files = BlobFiles::open(dir.path()).unwrap();
        let mut w = files.writer(4).unwrap();
        w.write(b"hell").unwrap();
        assert!(matches!(w.write(b"o"), Err(WriteError::TooLarge { limit: 4 })));
        drop(w);
        let mut w = files.writer(5).unwrap();
        w.write(b"hellO").unwrap();
        assert!(matches!(w.finish(HELLO), Err(WriteError::DigestMismatch { .. })));
        assert_eq!(fs::read_dir(dir.path().join("blobs/tmp")).unwrap().count(), 0);
        assert!(files.read(HELLO).is_err());
    }
}
