//! The safety scan of a bundle's files (`SPEC.md` §12.5.5–§12.5.6): what
//! stage 3 of the merge (§7.7) does for `SKILL.md`, done for every other
//! file once its bytes are held, before the bundle is installed.
//!
//! [`scan_bundle`] checks each file as [`BundleManifest::verify_blob`]
//! does, then:
//!
//! - scans every text file with the language of its name (`text`): Markdown
//!   and plain text as prose, a script as a fenced block of its language
//!   (code analysis, shell rules), data as a block of data;
//! - walks every archive (`.tar`, `.tar.gz`, `.gz`, `.zip`, recognised by
//!   their bytes, also a zip appended to an image) and scans its members
//!   the same way, named
//!   `scripts/c.tar.gz!src/x.py`, under the limits against decompression
//!   bombs of [`BundleLimits`] (`archive`);
//! - reports content that does not match its extension, unreadable
//!   archives and members that would unpack outside their folder
//!   (`content`), and the files `SKILL.md` runs or links to that the
//!   bundle lacks (`refs`).
//!
//! # Layout
//!
//! - `mod.rs`: [`scan_bundle`] and [`BundleScan`].
//! - `text.rs`: how a text file is read and scanned.
//! - `archive.rs`: the archive walk and its limits.
//! - `content.rs`: findings on what a file is.
//! - `refs.rs`: files `SKILL.md` refers to.

use std::collections::HashSet;

mod archive;
mod content;
mod refs;
#[cfg(test)]
mod tests;
mod text;

use archive::{Archives, Event};

use super::kind::{self, ContentKind, KindMismatch};
use super::{BundleError, BundleLimits, BundleManifest, SKILL_MD, paths};
use crate::merge::{Decision, safety_decision};
use crate::policy::AcceptPolicy;
use crate::scan::{Category, Finding, ScanFailed, ScanReport, Scanner, Severity, guarded};

pub use content::{ESCAPE, MISMATCH, UNREADABLE};
pub use refs::{MISSING_LINK, MISSING_SCRIPT};

/// What [`scan_bundle`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleScan {
    /// The findings in the files other than `SKILL.md` (each names its
    /// file), and those about `SKILL.md`'s references (`file` unset), in
    /// path order. `SKILL.md`'s own findings are the merge's (stage 3).
    pub report: ScanReport,
    /// Set when the bundle must not be installed: `pending` while a file is
    /// not held (§12.9.2), `invalid bundle` for a file that fails §12.5 or
    /// an archive past a limit (§12.6.2), `rejected by safety scan` for a
    /// finding at the policy's threshold (§7.7.2, naming its file). A node
    /// records it in place of the merge's installing decision.
    pub refusal: Option<Decision>,
}

/// Scans the files of the bundle `manifest` whose `SKILL.md` is
/// `skill_md`; `blob` gives the bytes held for a SHA-256 (`None`: not
/// held). Archive limits and the threshold are `policy`'s; the files'
/// own checks use the limits `manifest` was made with.
///
/// Pure and bounded: `blob` is asked once per file and the bytes are held
/// together (at most the bundle's limit), each archive unpacked to its
/// limits, one member in memory at a time per level. Call it for an installing decision of a bundle, after the merge;
/// a refusal replaces the decision.
pub fn scan_bundle<B: AsRef<[u8]>>(
    manifest: &BundleManifest,
    skill_md: &str,
    blob: impl Fn(&str) -> Option<B>,
    policy: &(impl AcceptPolicy + ?Sized),
) -> BundleScan {
    let held: Vec<_> =
        manifest.files().iter().filter(|f| f.path != SKILL_MD).map(|f| (f, blob(&f.sha256))).collect();
    let refused = |refusal, findings| BundleScan {
        report: ScanReport { findings, classifier: None },
        refusal: Some(refusal),
    };
    let missing: HashSet<&str> =
        held.iter().filter(|(_, b)| b.is_none()).map(|(f, _)| f.sha256.as_str()).collect();
    if let Some(pending) = manifest.pending_decision(|sha| !missing.contains(sha)) {
        return refused(pending, Vec::new());
    }
    let limits = policy.bundle_limits();
    let mut scan = Scan {
        scanner: Scanner::standard(),
        limits: &limits,
        findings: refs::missing(manifest, skill_md),
        failed: None,
    };
    let archives = Archives::new(&limits);
    for (file, bytes) in &held {
        let bytes = bytes.as_ref().map_or(&[][..], AsRef::as_ref);
        let checked = manifest.verify_blob(&file.path, bytes).and_then(|check| {
            scan.file(&file.path, bytes, check.kind, check.mismatch);
            archives.walk(&file.path, bytes, check.kind, &mut |event| scan.event(event))
        });
        if let Err(e) = checked {
            return refused(e.into(), scan.findings);
        }
        if let Some((name, failed)) = scan.failed.take() {
            return refused(crate::merge::scan_failed(&name, failed), scan.findings);
        }
    }
    let refusal = safety_decision(&scan.findings, policy.scan_threshold());
    BundleScan { report: ScanReport { findings: scan.findings, classifier: None }, refusal }
}

/// The findings of one bundle, as its files and members are met.
struct Scan<'l> {
    scanner: &'static Scanner,
    limits: &'l BundleLimits,
    findings: Vec<Finding>,
    /// The first file or member the scanner failed on (`scan::guard`),
    /// which refuses the bundle.
    failed: Option<(String, ScanFailed)>,
}

impl Scan<'_> {
    /// A file or member that is not an archive walked here: its mismatch
    /// and, when text, its scan.
    fn file(&mut self, name: &str, bytes: &[u8], kind: ContentKind, mismatch: Option<KindMismatch>) {
        let text = text::text_of(bytes, kind);
        if let Some(m) = mismatch {
            let readable = kind == ContentKind::Binary && text.is_some();
            self.findings.push(content::mismatch(name, &m, readable));
        }
        if let Some(text) = text {
            match guarded(|| text::scan(self.scanner, name, &text)) {
                Ok(findings) => self.findings.extend(findings),
                Err(failed) => {
                    self.failed.get_or_insert_with(|| (name.to_owned(), failed));
                }
            }
        }
    }

    /// What the archive walk met.
    fn event(&mut self, event: Event<'_>) -> Result<(), BundleError> {
        match event {
            Event::Member { name, bytes, kind } => {
                if (kind.is_native_executable() || kind.is_bytecode()) && !self.limits.allow_native_code {
                    return Err(BundleError::NativeCode { path: paths::shown(name), kind });
                }
                self.file(name, bytes, kind, kind::kind_mismatch(name, kind));
            }
            Event::Unreadable { name, why } => {
                let what = format!("cannot be read, so not scanned: {why}");
                let severity = (Category::Concealment, Severity::High);
                self.findings.push(content::finding(UNREADABLE, severity, Some(name), 1, &what));
            }
            Event::Escape { name } => {
                let what = "unpacks outside its folder (an absolute path, .. or a link out)";
                let severity = (Category::PathTraversal, Severity::High);
                self.findings.push(content::finding(ESCAPE, severity, Some(name), 1, what));
            }
        }
        Ok(())
    }
}
