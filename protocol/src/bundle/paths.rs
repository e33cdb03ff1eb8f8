//! The path rules of a bundle (`SPEC.md` §12.4): each path alone
//! ([`check_path`]) and the paths together ([`check_tree`]).
//!
//! A path is written under the receiver's skill folder as it is, on any
//! file system: so it must be relative and normalised, hold nothing a
//! file system or a terminal treats specially, and no two paths may land on
//! one file on a case-insensitive or normalising file system.

use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;

use super::BundleError;

/// Longest path, in bytes (Linux's `PATH_MAX` is 4,096; Windows tools
/// still trip over much less).
pub const MAX_PATH_BYTES: usize = 1024;
/// Longest path segment, in bytes: `NAME_MAX` of common file systems.
pub const MAX_SEGMENT_BYTES: usize = 255;
/// The one file every bundle has, at its root.
pub const SKILL_MD: &str = "SKILL.md";

/// Checks one path: relative, `/`-separated, normalised, printable.
///
/// # Errors
///
/// [`BundleError::BadPath`] naming the first rule it breaks.
pub fn check_path(path: &str) -> Result<(), BundleError> {
    let bad = |problem: &'static str| Err(BundleError::BadPath { path: shown(path), problem });
    if path.is_empty() {
        return bad("is empty");
    }
    if path.len() > MAX_PATH_BYTES {
        return bad("is longer than 1024 bytes");
    }
    if path.starts_with('/') {
        return bad("is absolute; paths are relative to the skill folder");
    }
    if path.contains('\\') {
        return bad("contains a backslash; separate segments with /");
    }
    if path.chars().any(crate::scan::is_invisible) {
        return bad("contains a control or invisible character");
    }
    for (index, segment) in path.split('/').enumerate() {
        match segment {
            "" => return bad("has an empty segment (// or a trailing /)"),
            "." => return bad("has a . segment; send the normalised path"),
            ".." => return bad("has a .. segment; paths stay inside the skill folder"),
            _ if segment.len() > MAX_SEGMENT_BYTES => return bad("has a segment longer than 255 bytes"),
            _ if index == 0 && is_drive(segment) => {
                return bad("starts with a drive letter; paths are relative");
            }
            _ => {}
        }
    }
    Ok(())
}

/// `C:` and the like: absolute on Windows.
fn is_drive(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// The path as a reason may show it: escaped, at most 120 characters.
pub(crate) fn shown(path: &str) -> String {
    const MAX: usize = 120;
    let mut out: String = path.chars().take(MAX).flat_map(char::escape_default).collect();
    if path.chars().nth(MAX).is_some() {
        out.push('…');
    }
    out
}

/// The name a path has on a case-insensitive, normalising file system:
/// NFC, then lowercase (Unicode, not only ASCII).
fn folded(path: &str) -> String {
    path.nfc().flat_map(char::to_lowercase).collect()
}

/// Checks the paths together (each already passed [`check_path`]): no path
/// twice, none equal to another after case folding and normalisation, none
/// that is also the folder of another, and `SKILL.md` exactly once at the
/// root.
///
/// # Errors
///
/// The first problem found, in the order of the rules above.
pub fn check_tree<'a>(paths: impl IntoIterator<Item = &'a str>) -> Result<(), BundleError> {
    let mut files: HashMap<String, &'a str> = HashMap::new();
    let mut skill_md = false;
    let mut all = Vec::new();
    for path in paths {
        skill_md |= path == SKILL_MD;
        if let Some(first) = files.insert(folded(path), path) {
            if first == path {
                return Err(BundleError::DuplicatePath { path: shown(path) });
            }
            return Err(BundleError::CaseCollision { first: shown(first), second: shown(path) });
        }
        all.push(path);
    }
    for path in all {
        // Every folder above a file must not be a file itself.
        let folded_path = folded(path);
        for (cut, _) in folded_path.match_indices('/') {
            if let Some(&file) = files.get(&folded_path[..cut]) {
                return Err(BundleError::FileIsFolder { file: shown(file), path: shown(path) });
            }
        }
    }
    if !skill_md {
        return Err(BundleError::NoSkillMd);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(path: &str) -> String {
        match check_path(path) {
            Err(BundleError::BadPath { problem, .. }) => problem.to_owned(),
            other => panic!("{path:?}: {other:?}"),
        }
    }

    #[test]
    fn accepts_relative_normalised_paths() {
        for path in
            ["SKILL.md", "scripts/fill.py", "a/b/c/d.txt", ".hidden", "x..y", "ünïcode/名前.md", "a b.md"]
        {
            assert_eq!(check_path(path), Ok(()), "{path}");
        }
    }

    #[test]
    fn refuses_each_bad_path_with_its_rule() {
        for (path, want) in [
            ("", "is empty"),
            ("/etc/passwd", "is absolute; paths are relative to the skill folder"),
            ("a\\b", "contains a backslash; separate segments with /"),
            ("a\0b", "contains a control or invisible character"),
            ("a\nb", "contains a control or invisible character"),
            ("a\u{202e}b", "contains a control or invisible character"),
            ("a//b", "has an empty segment (// or a trailing /)"),
            ("a/", "has an empty segment (// or a trailing /)"),
            ("./a", "has a . segment; send the normalised path"),
            ("a/../../b", "has a .. segment; paths stay inside the skill folder"),
            ("..", "has a .. segment; paths stay inside the skill folder"),
            ("C:/x", "starts with a drive letter; paths are relative"),
        ] {
            assert_eq!(problem(path), want, "{path:?}");
        }
    }

    #[test]
    fn path_and_segment_lengths_at_their_limit_and_one_past() {
        let segment = "s".repeat(MAX_SEGMENT_BYTES);
        assert_eq!(check_path(&segment), Ok(()));
        assert_eq!(problem(&format!("{segment}s")), "has a segment longer than 255 bytes");
        let part = "s".repeat(200);
        let mut path = format!("{part}/{part}/{part}/{part}/");
        path.push_str(&"p".repeat(MAX_PATH_BYTES - path.len()));
        assert_eq!(path.len(), MAX_PATH_BYTES);
        assert_eq!(check_path(&path), Ok(()));
        path.push('p');
        assert_eq!(problem(&path), "is longer than 1024 bytes");
    }

    #[test]
    fn tree_rules() {
        assert_eq!(check_tree(["SKILL.md", "scripts/a.py", "scripts/b.py"]), Ok(()));
        assert_eq!(check_tree(["scripts/a.py"]), Err(BundleError::NoSkillMd));
        assert_eq!(check_tree(["sub/SKILL.md"]), Err(BundleError::NoSkillMd));
        assert_eq!(
            check_tree(["SKILL.md", "a.md", "a.md"]),
            Err(BundleError::DuplicatePath { path: "a.md".into() })
        );
        assert_eq!(
            check_tree(["SKILL.md", "skill.md"]),
            Err(BundleError::CaseCollision { first: "SKILL.md".into(), second: "skill.md".into() })
        );
        // Unicode case (not only ASCII) and normalisation (é composed or not).
        assert!(matches!(check_tree(["SKILL.md", "Ä.md", "ä.md"]), Err(BundleError::CaseCollision { .. })));
        assert!(matches!(
            check_tree(["SKILL.md", "caf\u{e9}", "cafe\u{301}"]),
            Err(BundleError::CaseCollision { .. })
        ));
        assert_eq!(
            check_tree(["SKILL.md", "lib", "lib/x.py"]),
            Err(BundleError::FileIsFolder { file: "lib".into(), path: "lib/x.py".into() })
        );
        assert!(matches!(check_tree(["SKILL.md", "LIB", "lib/x.py"]), Err(BundleError::FileIsFolder { .. })));
        assert!(matches!(check_tree(["SKILL.md/x", "SKILL.md"]), Err(BundleError::FileIsFolder { .. })));
    }
}
