//! Refusal reasons (`SPEC.md` › 7.11): the one place that knows which prefix
//! opens a reason and which [`Stage`] each prefix belongs to.
//!
//! A stage may have two prefixes (`structure`: fields or body; `policy`: the
//! policy or a loop), so the prefix, not the stage, is what a refusal names.

use std::fmt;

use super::{Decision, Stage};
use crate::bundle::BundleError;

/// The reason prefixes of `SPEC.md` › 7.11, one per row of its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Prefix {
    /// §7.4: beyond the policy's packet limit.
    Limit,
    /// §7.5.
    Integrity,
    /// §13.5: a signature that does not hold, or not the key the origin is known by.
    Signature,
    /// §13.7: no signature where one is required.
    Unsigned,
    /// §7.6.1.
    Name,
    /// §7.6.2: the fields other than the body.
    Fields,
    /// §7.6.3, §7.6.5: the body and its frontmatter.
    Structure,
    /// §7.6.6, §12: the files of a bundle.
    Bundle,
    /// §12.9: a bundle whose files are not all held yet.
    Pending,
    /// §7.7.
    Safety,
    /// §7.8.1, §7.8.3.
    Policy,
    /// §7.8.2.
    Loop,
    /// §7.9.1.
    Duplicate,
    /// §7.9.2.
    Conflict,
    /// §14.6.
    Revoked,
}

impl Prefix {
    /// The text a reason starts with, before `: `.
    const fn text(self) -> &'static str {
        match self {
            Prefix::Limit | Prefix::Policy => "rejected by policy",
            Prefix::Integrity => "integrity failed",
            Prefix::Signature => "origin signature failed",
            Prefix::Unsigned => "origin signature missing",
            Prefix::Name => "invalid name",
            Prefix::Fields => "invalid packet",
            Prefix::Structure => "invalid structure",
            Prefix::Bundle => "invalid bundle",
            Prefix::Pending => "pending",
            Prefix::Safety => "rejected by safety scan",
            Prefix::Loop => "loop",
            Prefix::Duplicate => "duplicate skill name in this update",
            Prefix::Conflict => "conflict",
            Prefix::Revoked => "revoked by its origin",
        }
    }

    /// The stage a refusal with this prefix is recorded under.
    const fn stage(self) -> Stage {
        match self {
            Prefix::Limit => Stage::Limit,
            Prefix::Integrity => Stage::Integrity,
            Prefix::Signature | Prefix::Unsigned => Stage::Signature,
            Prefix::Name => Stage::Name,
            Prefix::Fields | Prefix::Structure => Stage::Structure,
            Prefix::Bundle | Prefix::Pending => Stage::Bundle,
            Prefix::Safety => Stage::Safety,
            Prefix::Policy | Prefix::Loop => Stage::Policy,
            Prefix::Duplicate => Stage::Duplicate,
            Prefix::Conflict => Stage::Conflict,
            Prefix::Revoked => Stage::Revoked,
        }
    }
}

/// A refused packet: its stage and its whole reason, `"<prefix>: <detail>"`.
#[derive(Debug)]
pub(super) struct Refusal {
    stage: Stage,
    reason: String,
}

impl Refusal {
    /// Written out at once: the reason is all a [`Decision`] keeps.
    pub(super) fn new(prefix: Prefix, detail: impl fmt::Display) -> Self {
        Refusal { stage: prefix.stage(), reason: format!("{}: {detail}", prefix.text()) }
    }
}

impl From<Refusal> for Decision {
    fn from(Refusal { stage, reason }: Refusal) -> Self {
        Decision::Rejected { stage, reason }
    }
}

/// A bundle refused after the merge, when its files are checked
/// ([`BundleManifest::verify_blob`](crate::bundle::BundleManifest::verify_blob)):
/// recorded like any refusal, stage `bundle`.
impl From<BundleError> for Decision {
    fn from(error: BundleError) -> Self {
        Refusal::new(Prefix::Bundle, error).into()
    }
}

/// A bundle not installed because `missing` of its `total` files are not
/// held yet (`SPEC.md` §12.9.2): stage `bundle`, reason `pending: …`,
/// naming the first missing file.
pub(crate) fn pending(missing: usize, total: usize, first: &str) -> Decision {
    let detail = format_args!(
        "{missing} of {total} files not held yet (first: {first}); upload them (POST /ecp/blobs/missing) or \
         the node fetches them and retries"
    );
    Refusal::new(Prefix::Pending, detail).into()
}

/// A bundle whose file `file` the scanner failed on (`scan::guard`):
/// stage `safety`, the failure's fixed text, the file named as shown.
pub(crate) fn scan_failed(file: &str, failed: crate::scan::ScanFailed) -> Decision {
    Refusal::new(Prefix::Safety, format_args!("{failed} (file {})", crate::bundle::shown(file))).into()
}
