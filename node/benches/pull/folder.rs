//! What a data folder holds on disk, and what a process wrote.

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

/// Bytes of a set of files: allocated on disk (what `du` counts, folders
/// included), of content (their lengths), and of the page-cache pages
/// their content fills (each file's length rounded up to [`PAGE`]).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Bytes {
    pub(crate) on_disk: u64,
    pub(crate) content: u64,
    pub(crate) pages: u64,
}

/// A page of the page cache: what `write_bytes` counts a written file in.
pub(crate) const PAGE: u64 = 4096;

impl Bytes {
    fn add(&mut self, other: Bytes) {
        self.on_disk += other.on_disk;
        self.content += other.content;
        self.pages += other.pages;
    }
}

/// A data folder: the store (everything but the skills folder) and the skills folder.
pub(crate) struct DataFolder {
    pub(crate) store: Bytes,
    pub(crate) skills: Bytes,
}

impl DataFolder {
    /// Measures `data`, counting `skills` (inside it or not) apart.
    pub(crate) fn measure(data: &Path, skills: &Path) -> DataFolder {
        DataFolder { store: walk(data, Some(skills)), skills: walk(skills, None) }
    }

    pub(crate) fn total(&self) -> Bytes {
        let mut total = self.store;
        total.add(self.skills);
        total
    }
}

fn walk(dir: &Path, skip: Option<&Path>) -> Bytes {
    let mut bytes = Bytes::default();
    let Ok(entries) = std::fs::read_dir(dir) else { return bytes };
    for entry in entries.flatten() {
        let path = entry.path();
        if skip == Some(path.as_path()) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        bytes.on_disk += meta.blocks() * 512;
        if meta.is_dir() {
            bytes.add(walk(&path, skip));
        } else {
            bytes.content += meta.len();
            bytes.pages += meta.len().div_ceil(PAGE) * PAGE;
        }
    }
    bytes
}

/// `write_bytes` of a `/proc/<pid>/io` text.
pub(crate) fn write_bytes(io: &str) -> Option<u64> {
    io.lines().find_map(|l| l.strip_prefix("write_bytes:")).and_then(|v| v.trim().parse().ok())
}
