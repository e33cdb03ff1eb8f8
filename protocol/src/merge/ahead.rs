//! Stage 3's scan run ahead of a merge: a caller that has an update's
//! bodies before it can merge them (a pull merging a page in slices, one
//! transaction each) scans them on a thread of its own, outside any
//! transaction, and hands the reports to [`merge_knowledge_ahead`].
//!
//! The merge must decide exactly as if it had scanned itself, so a report
//! is kept under the SHA-256 of the very text it scanned, computed here
//! ([`ScanAhead::of`] is the only way to make one): the merge uses it for
//! a packet only once stage 1 has proven that the packet's body has that
//! hash, and only when it scans the body as received (a body rebuilt with
//! frontmatter is another text, scanned in the merge as before). A report
//! the merge does not use — a packet refused before stage 3, one whose
//! content the node holds as received (`SPEC.md` §7.7.9) — changes
//! nothing but the CPU spent on it.

use std::collections::HashMap;

use super::{MergeContext, MergeOutcome, StoreView, check_update_with, resolve_update};
use crate::integrity;
use crate::policy::AcceptPolicy;
use crate::scan::{ScanFailed, ScanReport, Scanner};
use crate::wire::KnowledgeUpdate;

/// One body scanned ahead: its hash and what the scan said.
#[derive(Debug, Clone)]
pub struct ScanAhead {
    hash: String,
    report: Result<ScanReport, ScanFailed>,
}

impl ScanAhead {
    /// Scans `body` as stage 3 does ([`Scanner::try_scan`]: a panic is
    /// [`ScanFailed`]) and hashes it as stage 1 does.
    pub fn of(body: &str) -> ScanAhead {
        ScanAhead { hash: integrity::body_hash(body), report: Scanner::standard().try_scan(body) }
    }

    /// The SHA-256 (hex) of the body scanned.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// A report kept under `hash` whatever text it came from: for the
    /// tests that show which reports the merge takes.
    #[cfg(test)]
    pub(super) fn forged(hash: &str, report: Result<ScanReport, ScanFailed>) -> ScanAhead {
        ScanAhead { hash: hash.to_owned(), report }
    }
}

/// Bodies scanned ahead, by their hash.
#[derive(Debug, Clone, Default)]
pub struct ScannedAhead(HashMap<String, Result<ScanReport, ScanFailed>>);

impl ScannedAhead {
    /// Nothing scanned ahead: the merge scans every body itself.
    pub fn new() -> ScannedAhead {
        ScannedAhead::default()
    }

    /// Keeps `scan` for the merge.
    pub fn add(&mut self, scan: ScanAhead) {
        self.0.insert(scan.hash, scan.report);
    }

    /// How many bodies are kept.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The report of the body whose SHA-256 is `hash`, if it was scanned ahead.
    pub(super) fn report(&self, hash: &str) -> Option<&Result<ScanReport, ScanFailed>> {
        self.0.get(hash)
    }
}

impl FromIterator<ScanAhead> for ScannedAhead {
    fn from_iter<I: IntoIterator<Item = ScanAhead>>(scans: I) -> ScannedAhead {
        let mut ahead = ScannedAhead::new();
        ahead.extend(scans);
        ahead
    }
}

impl Extend<ScanAhead> for ScannedAhead {
    fn extend<I: IntoIterator<Item = ScanAhead>>(&mut self, scans: I) {
        for scan in scans {
            self.add(scan);
        }
    }
}

/// [`merge_knowledge`](super::merge_knowledge), its scans taken from
/// `ahead` where it holds the body (the same decisions, findings and
/// counts: see the module's comment).
pub fn merge_knowledge_ahead(
    update: KnowledgeUpdate,
    store: &impl StoreView,
    policy: &impl AcceptPolicy,
    ctx: &MergeContext<'_>,
    ahead: &ScannedAhead,
) -> MergeOutcome {
    resolve_update(check_update_with(update, store, policy, ctx, ahead), store, ctx)
}
