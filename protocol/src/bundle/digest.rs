//! The bundle digest (`SPEC.md` §12.3): SHA-256 of the canonical listing of
//! a bundle's files.
//!
//! The listing has one line per file, sorted by the path's UTF-8 bytes:
//! `<sha256> <mode> <size> <path>\n` — lowercase hex, `0644` or `0755`,
//! decimal bytes, the path as sent. A path holds no control character
//! (§12.4), so a line break cannot be forged inside one.

use std::fmt::Write as _;

use crate::integrity;
use crate::wire::BundleFile;

/// What opens a bundle digest's text form.
pub const DIGEST_PREFIX: &str = "sha256:";

/// The canonical listing of `files`, in any order.
pub fn canonical_listing(files: &[BundleFile]) -> String {
    let mut sorted: Vec<&BundleFile> = files.iter().collect();
    sorted.sort_unstable_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    let mut listing = String::with_capacity(files.iter().map(|f| f.path.len() + 90).sum());
    for file in sorted {
        // Writing to a String cannot fail.
        let _ = writeln!(listing, "{} {} {} {}", file.sha256, file.mode, file.size, file.path);
    }
    listing
}

/// `sha256:<hex>` of the canonical listing of `files`.
pub fn bundle_digest(files: &[BundleFile]) -> String {
    format!("{DIGEST_PREFIX}{}", integrity::sha256_hex(canonical_listing(files).as_bytes()))
}

/// Whether `text` is 64 lowercase hex characters: a SHA-256 as blob ids,
/// `sha256` fields and `integrityHash` write it.
pub fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, content: &[u8], mode: &str) -> BundleFile {
        BundleFile {
            path: path.into(),
            size: content.len() as u64,
            mode: mode.into(),
            sha256: integrity::sha256_hex(content),
        }
    }

    #[test]
    fn listing_is_sorted_by_path_bytes_whatever_the_order_given() {
        let a = file("b.md", b"b", "0644");
        let b = file("a/z.py", b"z", "0755");
        let c = file("B.md", b"B", "0644");
        let listing = canonical_listing(&[a.clone(), b.clone(), c.clone()]);
        let paths: Vec<&str> = listing.lines().map(|l| l.rsplit(' ').next().unwrap()).collect();
        assert_eq!(paths, ["B.md", "a/z.py", "b.md"]);
        assert_eq!(listing.lines().nth(1).unwrap(), format!("{} 0755 1 a/z.py", b.sha256));
        assert!(listing.ends_with('\n'));
        assert_eq!(
            bundle_digest(&[c, a, b]),
            bundle_digest(&[
                file("b.md", b"b", "0644"),
                file("a/z.py", b"z", "0755"),
                file("B.md", b"B", "0644")
            ])
        );
    }

    #[test]
    fn every_field_changes_the_digest() {
        let base = [file("SKILL.md", b"x", "0644"), file("run.sh", b"echo", "0755")];
        let digest = bundle_digest(&base);
        assert!(digest.starts_with(DIGEST_PREFIX) && is_sha256_hex(&digest[DIGEST_PREFIX.len()..]));
        let mut changed = base.clone();
        changed[1].mode = "0644".into();
        assert_ne!(bundle_digest(&changed), digest);
        let mut changed = base.clone();
        changed[1].size += 1;
        assert_ne!(bundle_digest(&changed), digest);
        let mut changed = base.clone();
        changed[1].path = "run2.sh".into();
        assert_ne!(bundle_digest(&changed), digest);
        let mut changed = base.clone();
        changed[1].sha256 = integrity::sha256_hex(b"echo!");
        assert_ne!(bundle_digest(&changed), digest);
    }

    #[test]
    fn sha256_hex_is_64_lowercase_hex() {
        assert!(is_sha256_hex(&"a".repeat(64)));
        assert!(!is_sha256_hex(&"a".repeat(63)));
        assert!(!is_sha256_hex(&"a".repeat(65)));
        assert!(!is_sha256_hex(&"A".repeat(64)));
        assert!(!is_sha256_hex(&"g".repeat(64)));
    }
}
