//! Findings about what a file is rather than what it says (`SPEC.md`
//! §12.5.4, §12.5.5): content that does not match its extension, an
//! archive that cannot be read, an archive member that would unpack
//! outside its folder. Each is on line 1 of its file.

use super::super::kind::{ContentKind, KindMismatch, SCRIPT_EXTENSIONS};
use crate::scan::{Category, Finding, Severity};

/// Rule id of a content that does not match its extension.
pub const MISMATCH: &str = "bundle.content-mismatch";
/// Rule id of an archive (or a member of one) the scanner cannot read.
pub const UNREADABLE: &str = "bundle.unreadable-archive";
/// Rule id of an archive member whose path or link leaves its folder.
pub const ESCAPE: &str = "bundle.archive-path-escape";

/// How bad a mismatch is. A file that is not what a reader or a runner
/// takes it for is `High`: a binary named as a script (`logo.png` named
/// `run.py`), a script named as a binary (`run.py` named `logo.png`).
/// Binary for binary (a PNG named `.pdf`) and text in another encoding (a
/// UTF-16 `.txt`) is `Low`; an archive or unreadable bytes under a text
/// extension is `Medium` (an archive is scanned through all the same).
fn severity(m: &KindMismatch, readable: bool) -> Severity {
    let script = SCRIPT_EXTENSIONS.contains(&m.extension.as_str());
    let promises_text = super::super::kind::expected_kinds(&format!("x.{}", m.extension))
        .is_some_and(|kinds| kinds.contains(&ContentKind::Text));
    match m.found {
        ContentKind::Text => Severity::High,
        ContentKind::Svg => Severity::Medium,
        _ if readable && promises_text => Severity::Low,
        _ if readable => Severity::High,
        found if found.is_native_executable() || found.is_bytecode() => Severity::High,
        _ if script => Severity::High,
        ContentKind::Gzip | ContentKind::Zip | ContentKind::Tar => Severity::Medium,
        _ if promises_text => Severity::Medium,
        _ => Severity::Low,
    }
}

/// A finding on `line` of `file` (`None`: `SKILL.md`), its excerpt cut to
/// the scanner's length.
pub(super) fn finding(
    rule_id: &str,
    (category, severity): (Category, Severity),
    file: Option<&str>,
    line: usize,
    excerpt: &str,
) -> Finding {
    Finding {
        rule_id: rule_id.to_owned(),
        category,
        severity,
        line,
        excerpt: excerpt.chars().take(80).collect::<String>().trim().to_owned(),
        file: file.map(str::to_owned),
        message: crate::scan::message(rule_id, category),
    }
}

/// The finding for a mismatch of `file`; `readable`: the content is text
/// in an encoding other than UTF-8 (see `text::text_of`).
pub(super) fn mismatch(file: &str, m: &KindMismatch, readable: bool) -> Finding {
    let severity = severity(m, readable);
    let what = match (m.found, readable) {
        (ContentKind::Binary, true) => format!("a .{} file holds text that is not UTF-8", m.extension),
        _ => m.to_string(),
    };
    finding(MISMATCH, (Category::Concealment, severity), Some(file), 1, &what)
}
