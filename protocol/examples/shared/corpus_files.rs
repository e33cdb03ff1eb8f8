//! The scan corpus's files, for the examples that read it (the trainer,
//! the precision table): where it is, its Markdown files in a stable
//! order, and `older.txt`'s names. How a file is split (TRAIN, HELD, …) is
//! each reader's, after the corpus test's (`tests/it/scan_corpus.rs`).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// `testdata/scan-corpus`.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/scan-corpus")
}

/// Every `.md` file under `dir`, sorted.
pub(crate) fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display())) {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                collect(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    collect(dir, &mut out);
    out.sort();
    out
}

/// The names in `older.txt` (one `class/file.md` a line, `#` comments).
pub(crate) fn older(root: &Path) -> BTreeSet<String> {
    fs::read_to_string(root.join("older.txt"))
        .expect("older.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}
