//! `ecp-node skill scan PATH`: the safety scanner over files, no data
//! folder needed; exit 1 when a finding reaches the threshold.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::import;
use ecp_node::projection::SKILL_FILE;
use ecp_protocol::scan::{DEFAULT_THRESHOLD, Finding, Scanner};
use serde::Serialize;
use serde_json::json;

use crate::commands::output::{emit, emit_json, label, one_line, tell};

/// Largest file `skill scan` reads: scanning is useful beyond the 100 KB a
/// node accepts, but not for files that cannot be skills at all.
const SCAN_MAX_BYTES: usize = 16 * 1024 * 1024;

/// One scanned file in `skill scan --json`.
#[derive(Serialize)]
struct ScannedFile {
    path: String,
    findings: Vec<Finding>,
    blocked: bool,
    /// A local skill with this content would be held back from sharing.
    secrets: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// What `skill scan` says of a file the scanner panicked on.
const SCAN_FAILED: &str = "the safety scan failed on it (an internal error of the scanner, not a finding), so it \
                           is not judged; please report it to the ecp maintainers with the skill";

pub(super) fn scan(path: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let meta = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}; pass a SKILL.md file or a folder", path.display()))?;
    let files = if meta.is_dir() {
        let mut files = Vec::new();
        collect_skill_files(path, &mut files)?;
        if files.is_empty() {
            bail!("no SKILL.md under {}", path.display());
        }
        files.sort();
        files
    } else {
        vec![path.to_owned()]
    };
    let scanner = Scanner::standard();
    let scanned: Vec<ScannedFile> = files
        .iter()
        .map(|file| {
            let shown = file.display().to_string();
            match import::read_skill_file(file, SCAN_MAX_BYTES) {
                Ok(text) => match scanner.try_scan(&text) {
                    Ok(report) => {
                        let blocked = report.is_blocked(DEFAULT_THRESHOLD);
                        let secrets = report.has_secrets();
                        ScannedFile { path: shown, findings: report.findings, blocked, secrets, error: None }
                    }
                    // Unjudged is not clean: counted as an error, and the exit code says so.
                    Err(_) => ScannedFile {
                        path: shown,
                        findings: Vec::new(),
                        blocked: false,
                        secrets: false,
                        error: Some(SCAN_FAILED.to_owned()),
                    },
                },
                Err(e) => ScannedFile {
                    path: shown,
                    findings: Vec::new(),
                    blocked: false,
                    secrets: false,
                    error: Some(e.to_string()),
                },
            }
        })
        .collect();
    let errors = scanned.iter().filter(|f| f.error.is_some()).count();
    let blocked = scanned.iter().filter(|f| f.blocked).count();
    let secrets = scanned.iter().filter(|f| f.secrets).count();
    if json {
        emit_json(&json!({ "files": scanned }))?;
    } else {
        let mut out = String::new();
        for file in &scanned {
            if let Some(error) = &file.error {
                tell(format_args!("ecp-node: {}: {error}", file.path));
            }
            for f in &file.findings {
                let _ = writeln!(
                    out,
                    "{}:{}: {} {} ({}): {}",
                    file.path,
                    f.line,
                    label(&f.severity),
                    one_line(&f.rule_id),
                    label(&f.category),
                    one_line(&f.excerpt)
                );
                if !f.message.is_empty() {
                    let _ = writeln!(out, "{}:{}:   why: {}", file.path, f.line, one_line(&f.message));
                }
            }
        }
        let threshold = label(&DEFAULT_THRESHOLD);
        let files = scanned.len();
        let _ = writeln!(
            out,
            "scanned {files} file{}: {blocked} flagged at or above {threshold}{}{}",
            if files == 1 { "" } else { "s" },
            if secrets > 0 {
                format!(", {secrets} with secrets (held back from sharing)")
            } else {
                String::new()
            },
            if errors > 0 {
                format!(", {errors} not scanned (unreadable, or the scan failed)")
            } else {
                String::new()
            }
        );
        emit(&out)?;
    }
    Ok(match (errors, blocked) {
        (0, 0) => ExitCode::SUCCESS,
        (0, _) => ExitCode::from(1),
        _ => ExitCode::from(2),
    })
}

/// Every `SKILL.md` under `dir`; symlinked folders are not followed (a
/// link loop would never end).
fn collect_skill_files(dir: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let Ok(file_type) = entry.file_type() else { continue };
        if file_type.is_dir() {
            collect_skill_files(&entry.path(), files)?;
        } else if entry.file_name() == SKILL_FILE && !file_type.is_symlink() {
            files.push(entry.path());
        }
    }
    Ok(())
}
