//! Sharing: which of this node's own skills may leave it — the one place
//! that decides.
//!
//! A local skill stays home (is *private*) when, first match wins:
//!
//! 0. it is retired: its recent outcomes failed ([`crate::outcomes`]);
//!    `ecp-node skill restore NAME` brings it back;
//! 1. the operator said so (`ecp-node skill private NAME`);
//! 2. its skills folder is `[[folder]] share = false`;
//! 3. its frontmatter says `shareable: false`;
//! 4. the folder's `.ecpignore` (gitignore syntax) matches it;
//! 5. `[sharing] mode = "listed"` is set and `[sharing] skills` does not name it;
//! 6. `[sharing] eligible = "proven"` is set and it has not proven itself:
//!    fewer than `proven_streak` successes in a row of its current version
//!    and a confidence ([`crate::outcomes::confidence`]) below
//!    `proven_confidence` — decided again after each reported use, so a
//!    skill that degrades is withdrawn again;
//! 7. a secret scan finds credentials in it, unless the operator let this
//!    very content go (`skill share NAME --allow-secrets`, remembered per
//!    `integrityHash`, so an edit is scanned and held again).
//!
//! [`Decider::decide`] applies these rules; the store keeps the outcome with
//! the skill ([`crate::store::Private`]) and serves only what is not private
//! (see `store/sharing.rs`). Every path that installs a local skill or
//! changes an input — the skills-folder import, `skill add`, `skill
//! private|share` from the CLI or `/v1/`, a start with other settings — goes
//! through [`crate::library::Library`], which asks a [`Decider`].
//!
//! External skills are not decided here: whether received skills are served
//! again is `[policy] reshare_external`.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ecp_protocol::SkillPacket;
use ecp_protocol::scan::{ScanFailed, Scanner};
use ecp_protocol::skill_doc;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde::Serialize;

use crate::import::Place;
use crate::projection::SKILL_FILE;
use crate::store::{Mark, Private, SECRET_CODE, Score, Store, StoreError};

/// The [`Private::code`] of a retired skill (#19): kept home until restored.
pub const RETIRED_CODE: &str = "retired";

/// The [`Private::code`] of a skill whose secret scan failed (the scanner
/// panicked on it): kept home, since nothing says it holds no secret.
pub const SCAN_FAILED_CODE: &str = "scan-failed";

/// One skill's secret scan, remembered per content hash.
type SecretScan = Result<Arc<Vec<SecretFinding>>, ScanFailed>;

/// The file in a skills folder whose patterns keep skills private.
pub const IGNORE_FILE: &str = ".ecpignore";
/// Largest `.ecpignore` read; a larger one keeps the whole folder private.
pub const MAX_IGNORE_FILE_BYTES: u64 = 64 * 1024;

/// `[sharing] mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every local skill is shared unless something keeps it private.
    #[default]
    Shared,
    /// Only the skills `[sharing] skills` names are shared.
    Listed,
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(text: &str) -> Result<Mode, String> {
        match text {
            "shared" => Ok(Mode::Shared),
            "listed" => Ok(Mode::Listed),
            other => Err(format!("{other:?} is not a sharing mode; use \"shared\" or \"listed\"")),
        }
    }
}

/// `[sharing] eligible`: which local skills may be broadcast.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Eligible {
    /// Every local skill nothing else keeps home.
    #[default]
    Always,
    /// Only those that proved themselves: `streak` successes in a row, or
    /// a confidence of at least `confidence`.
    Proven {
        /// `[sharing] proven_streak`.
        streak: u64,
        /// `[sharing] proven_confidence`.
        confidence: f64,
    },
}

/// The [`Private::code`] of a local skill that has not proven itself yet.
pub const UNPROVEN_CODE: &str = "unproven";

/// One skills folder the node imports from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    /// The folder.
    pub path: PathBuf,
    /// Whether its skills may be shared (`false`: all of them are private).
    pub share: bool,
}

/// What decides, as configured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// `[sharing] mode`.
    pub mode: Mode,
    /// `[sharing] skills`: the names shared in [`Mode::Listed`].
    pub listed: BTreeSet<String>,
    /// `[sharing] eligible`, `proven_streak`, `proven_confidence`.
    pub eligible: Eligible,
    /// The skills folders, in order; the projection writes into the first
    /// shared one (or the first, when none is shared).
    pub folders: Vec<Folder>,
}

/// One secret finding: which rule matched on which line — never the value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SecretFinding {
    /// The scanner's rule id.
    pub rule: String,
    /// 1-based line of the `SKILL.md`.
    pub line: usize,
}

/// The secret findings of a `SKILL.md` text that hold it back: the
/// scanner's `secret` family at
/// [`SECRET_SEVERITY`](ecp_protocol::scan::SECRET_SEVERITY) and above (documented
/// examples such as `AKIAIOSFODNN7EXAMPLE`, placeholders and references to
/// values kept elsewhere are reported by `skill scan`, and shared).
///
/// A scan that panics is [`ScanFailed`]: the caller keeps the skill home
/// (fail closed), since nothing says it holds no secret.
pub fn secret_findings(text: &str) -> Result<Vec<SecretFinding>, ScanFailed> {
    let report = Scanner::standard().try_scan(text)?;
    Ok(report.secrets().map(|f| SecretFinding { rule: f.rule_id.clone(), line: f.line }).collect())
}

/// Most scans remembered by content hash: an import run decides again for
/// every local skill, and scanning unchanged content again would be waste.
const SCAN_CACHE_ENTRIES: usize = 4096;

/// The sharing settings plus a cache of secret scans; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Sharing {
    settings: Arc<Settings>,
    scans: Arc<Mutex<HashMap<String, SecretScan>>>,
}

impl Sharing {
    /// Sharing with `settings`.
    pub fn new(settings: Settings) -> Sharing {
        Sharing { settings: Arc::new(settings), scans: Arc::default() }
    }

    /// One folder, shared, in mode `shared`: the default.
    pub fn single(dir: &Path) -> Sharing {
        Sharing::new(Settings {
            folders: vec![Folder { path: dir.to_owned(), share: true }],
            ..Settings::default()
        })
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The folders.
    pub fn folders(&self) -> &[Folder] {
        &self.settings.folders
    }

    /// The index of the folder holding `<name>/SKILL.md`, if any.
    pub fn folder_of(&self, name: &str) -> Option<usize> {
        skill_doc::validate_name(name).ok()?;
        self.folders().iter().position(|f| f.path.join(name).join(SKILL_FILE).exists())
    }

    /// A decider with the operator's marks and each folder's `.ecpignore` as they are now.
    pub fn decider(&self, store: &Store) -> Result<Decider<'_>, StoreError> {
        Ok(Decider {
            sharing: self,
            marks: store.sharing_marks()?,
            retired: store.retired_names()?,
            scores: match self.settings.eligible {
                Eligible::Always => HashMap::new(),
                Eligible::Proven { .. } => store.scores()?,
            },
            ignores: self.folders().iter().map(|f| IgnoreFile::read(&f.path)).collect(),
        })
    }

    /// A failed scan is remembered like a finished one: the scanner is
    /// deterministic, so scanning the same content again would fail again.
    fn scan(&self, packet: &SkillPacket) -> SecretScan {
        let mut scans = self.scans.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = scans.get(&packet.integrity_hash) {
            return found.clone();
        }
        let found = secret_findings(&packet.skill_body).map(Arc::new);
        if scans.len() >= SCAN_CACHE_ENTRIES {
            scans.clear();
        }
        scans.insert(packet.integrity_hash.clone(), found.clone());
        found
    }
}

/// A folder's `.ecpignore`, read once per decider.
#[derive(Debug)]
enum IgnoreFile {
    Absent,
    Patterns(Gitignore),
    /// Unreadable, too large or invalid: every skill of the folder stays
    /// private until it is fixed (the reason says how).
    Broken(String),
}

impl IgnoreFile {
    fn read(folder: &Path) -> IgnoreFile {
        let file = folder.join(IGNORE_FILE);
        match std::fs::metadata(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return IgnoreFile::Absent,
            Err(e) => return IgnoreFile::Broken(format!("cannot read it: {}", e.kind())),
            Ok(meta) if !meta.is_file() => return IgnoreFile::Broken("it is not a file".into()),
            Ok(meta) if meta.len() > MAX_IGNORE_FILE_BYTES => {
                return IgnoreFile::Broken(format!(
                    "it is {} bytes, over the limit of {MAX_IGNORE_FILE_BYTES}",
                    meta.len()
                ));
            }
            Ok(_) => {}
        }
        let mut builder = GitignoreBuilder::new(folder);
        if let Some(e) = builder.add(&file) {
            return IgnoreFile::Broken(e.to_string());
        }
        match builder.build() {
            Ok(patterns) => IgnoreFile::Patterns(patterns),
            Err(e) => IgnoreFile::Broken(e.to_string()),
        }
    }
}

/// What [`Decider::decide`] found (also the answer of `POST
/// /v1/skills/{name}/private|share`, which the CLI reads back).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct Decision {
    /// Why the skill stays home; `None`: it is shared.
    pub private: Option<Private>,
    /// The secret findings that hold it back (empty unless `private` is
    /// the secret scan's).
    pub secrets: Vec<SecretFinding>,
}

/// Decides for each local skill whether it is shared, with the inputs read once.
#[derive(Debug)]
pub struct Decider<'a> {
    sharing: &'a Sharing,
    marks: HashMap<String, Mark>,
    retired: HashSet<String>,
    /// The outcomes' scores, read only when eligibility is `proven`.
    scores: HashMap<String, Score>,
    ignores: Vec<IgnoreFile>,
}

fn private(code: &str, reason: String) -> Option<Private> {
    Some(Private { code: code.to_owned(), reason })
}

impl Decider<'_> {
    /// Whether `packet`, a local skill at `place` (a folder of
    /// [`Sharing::folders`] and its own folder there; `None`: in none of
    /// them), is shared.
    pub fn decide(&self, packet: &SkillPacket, place: Option<&Place>) -> Decision {
        let name = &packet.skill_name;
        let mark = self.marks.get(name).cloned().unwrap_or_default();
        let settings = self.sharing.settings();
        let folder = place.and_then(|p| Some((p.index, settings.folders.get(p.index)?)));
        let decided = |private| Decision { private, secrets: Vec::new() };
        if self.retired.contains(name) {
            return decided(private(
                RETIRED_CODE,
                format!("retired, its recent uses failed; `ecp-node skill restore {name}` brings it back"),
            ));
        }
        if mark.private {
            return decided(private(
                "operator",
                format!(
                    "made private with `ecp-node skill private`; `ecp-node skill share {name}` shares it"
                ),
            ));
        }
        // No path in the reason: it is shown by the API and kept in the audit log.
        if folder.is_some_and(|(_, f)| !f.share) {
            return decided(private(
                "folder",
                "its skills folder is share = false ([[folder]] in node.toml; `ecp-node status` lists the folders)"
                    .to_owned(),
            ));
        }
        let frontmatter = skill_doc::parse(&packet.skill_body).ok().and_then(|d| d.frontmatter);
        if frontmatter.and_then(|f| f.shareable) == Some(false) {
            return decided(private(
                "frontmatter",
                "its frontmatter says shareable: false; remove that line to share it".to_owned(),
            ));
        }
        if let Some((i, _)) = folder {
            match &self.ignores[i] {
                IgnoreFile::Absent => {}
                IgnoreFile::Patterns(patterns) => {
                    let entry = place.map_or(name.as_str(), |p| p.entry.as_str());
                    let path = Path::new(entry).join(SKILL_FILE);
                    if patterns.matched_path_or_any_parents(&path, false).is_ignore() {
                        return decided(private(
                            "ecpignore",
                            format!(
                                "{IGNORE_FILE} in its skills folder matches it; change that file to share it"
                            ),
                        ));
                    }
                }
                IgnoreFile::Broken(problem) => {
                    return decided(private(
                        "ecpignore",
                        format!("{IGNORE_FILE} in its skills folder cannot be used ({problem}); fix it"),
                    ));
                }
            }
        }
        if settings.mode == Mode::Listed && !settings.listed.contains(name) {
            return decided(private(
                "unlisted",
                "[sharing] mode is \"listed\" and [sharing] skills does not name it; add it there to share it"
                    .to_owned(),
            ));
        }
        if let Eligible::Proven { streak, confidence } = settings.eligible {
            let score = self.scores.get(name).cloned().unwrap_or_default();
            let has = crate::outcomes::confidence(packet.confidence, &score);
            if score.streak < i64::try_from(streak).unwrap_or(i64::MAX) && has < confidence {
                return decided(private(
                    UNPROVEN_CODE,
                    format!(
                        "[sharing] eligible is \"proven\": it is shared after {streak} successes in a row (it has {}) \
                         or at confidence {confidence:.2} (it has {has:.2}); report its uses with `ecp-node skill \
                         outcome {name} success|failure`",
                        score.streak
                    ),
                ));
            }
        }
        if mark.allow_secrets.as_deref() == Some(packet.integrity_hash.as_str()) {
            return decided(None);
        }
        let Ok(secrets) = self.sharing.scan(packet) else {
            return decided(private(
                SCAN_FAILED_CODE,
                format!(
                    "the secret scan failed on it (an internal error of the scanner, not a finding), so it \
                     stays home; please report it to the ecp maintainers, or share it anyway with \
                     `ecp-node skill share {name} --allow-secrets`"
                ),
            ));
        };
        let Some(first) = secrets.first() else { return decided(None) };
        let more = match secrets.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        Decision {
            private: private(
                SECRET_CODE,
                format!(
                    "the secret scan found {} on line {}{more}; remove it, or share it anyway with \
                     `ecp-node skill share {name} --allow-secrets`",
                    first.rule, first.line
                ),
            ),
            secrets: secrets.as_ref().clone(),
        }
    }
}

#[cfg(test)]
mod tests;
