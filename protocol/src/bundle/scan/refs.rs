//! Files `SKILL.md` relies on that the bundle does not contain (`SPEC.md`
//! §12.5.6): a script it runs or sources (`python scripts/fill.py`, `bash
//! ./setup.sh`, `source env.sh`) is `Medium` — the agent would fail, or run
//! whatever file of that name it finds later; a relative Markdown link
//! (`[reference](reference.md)`) is `Low`.
//!
//! A file counts as contained when a path of the bundle is the reference
//! or ends with `/` and the reference: `cd scripts && python fill.py` runs
//! `scripts/fill.py`.

use super::super::BundleManifest;
use super::content::finding;
use crate::scan::{Category, Finding, Severity, scripts_run};

/// Rule id of a script run that the bundle lacks.
pub const MISSING_SCRIPT: &str = "bundle.missing-script";
/// Rule id of a link to a file that the bundle lacks.
pub const MISSING_LINK: &str = "bundle.missing-link";

/// The findings for the files `skill_md` refers to and `manifest` lacks.
pub(super) fn missing(manifest: &BundleManifest, skill_md: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut report = |index: usize, reference: &str, rule: &str, severity, verb: &str| {
        let Some(path) = normalised(reference) else { return };
        if contains(manifest, &path) {
            return;
        }
        let what = format!("{verb} {path}, which the bundle does not contain");
        out.push(finding(rule, (Category::SupplyChain, severity), None, index + 1, &what));
    };
    for (index, script) in scripts_run(skill_md) {
        report(index, script, MISSING_SCRIPT, Severity::Medium, "runs");
    }
    for (index, line) in skill_md.split('\n').enumerate() {
        for target in link_targets(line) {
            report(index, target, MISSING_LINK, Severity::Low, "links to");
        }
    }
    out
}

/// The path a reference names in the skill folder: without `./`, a
/// folder placeholder (`{baseDir}/`, `$SKILL_DIR/`) or a `#fragment`;
/// `None` for what cannot be checked (a variable elsewhere in it, a glob,
/// a path that leaves the folder).
fn normalised(reference: &str) -> Option<String> {
    let mut path = reference.replace('\\', "/");
    if path.starts_with(['{', '$']) {
        path = path.split_once('/')?.1.to_owned();
    }
    let mut path = path.as_str();
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    let path = path.split(['#', '?']).next().unwrap_or("");
    let unchecked = path.is_empty()
        || path.starts_with('/')
        || path.contains(['$', '{', '*', '?', '<', '>', '%', ' '])
        || path.split('/').any(|s| s == "..");
    (!unchecked).then(|| path.to_owned())
}

/// Whether the bundle holds `path`, at its root or under a folder; a
/// reference ending with `/` is a folder, held when a file is under it.
fn contains(manifest: &BundleManifest, path: &str) -> bool {
    manifest.files().iter().any(|f| {
        let p = f.path.as_str();
        if path.ends_with('/') {
            p.starts_with(path) || p.contains(&format!("/{path}"))
        } else {
            p == path || p.strip_suffix(path).is_some_and(|head| head.ends_with('/'))
        }
    })
}

/// The relative targets of the Markdown links and images of `line`:
/// `[text](target)`, `![alt](target "title")`; no URL, no anchor, no
/// absolute path.
fn link_targets(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split_whitespace().next().unwrap_or("");
        let target = target.trim_start_matches('<').trim_end_matches('>');
        let url = target.contains("://") || target.starts_with("mailto:") || target.contains(':');
        // A file has an extension or a folder: `(x)` after `[…]` in code is no link.
        let file_like = target.contains(['.', '/']);
        if file_like && !url && !target.starts_with('#') && !target.starts_with('/') {
            out.push(target);
        }
        rest = &after[end..];
    }
    out
}
