//! Replays the inputs kept from fuzzing (`testdata/fuzz-regressions/<target>/`)
//! through the checks of the fuzz targets, on stable Rust, so what fuzzing
//! found stays fixed and the kept corpus keeps exercising the invariants.
//!
//! The checks are `fuzz/src/lib.rs`, included here as a module: the fuzz
//! targets (`cargo +nightly fuzz run <target>`, see `fuzz/README.md`) call the
//! very same functions. Add a crash input by copying it into its target's
//! folder under any name.

use std::path::{Path, PathBuf};

#[allow(unreachable_pub, dead_code)]
#[path = "../../../fuzz/src/lib.rs"]
mod harness;

fn folder(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fuzz-regressions").join(target)
}

/// Runs `check` on every file of the target's folder; fails once, naming
/// every input that panicked.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = folder(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: no kept inputs", dir.display());
    let failed: Vec<String> = files
        .iter()
        .filter(|path| {
            let data = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            std::panic::catch_unwind(|| check(&data)).is_err()
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "{target}: {} of {} kept inputs fail:\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
}

#[test]
fn update_merge() {
    replay("update_merge", harness::update_merge);
}

#[test]
fn frontmatter() {
    replay("frontmatter", harness::frontmatter);
}

#[test]
fn scanner() {
    replay("scanner", harness::scanner);
}

#[test]
fn bundle_listing() {
    replay("bundle_listing", harness::bundle_listing);
}

#[test]
fn signature() {
    replay("signature", harness::signature);
}

/// Every folder belongs to a target replayed above.
#[test]
fn every_folder_is_replayed() {
    let root = folder("");
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("read {}: {e}", root.display()))
        .map(|entry| entry.expect("directory entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name != "README.md")
        .collect();
    names.sort();
    assert_eq!(names, ["bundle_listing", "frontmatter", "scanner", "signature", "update_merge"]);
}
