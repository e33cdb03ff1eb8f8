//! `ecp-node skill add PATH`: a SKILL.md, a skill folder, or a folder of
//! skill folders, each added whole (a bundle) to the running server — the
//! files it lacks uploaded first — or through the operator to the store.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::config::Config;
use ecp_node::import::{self, Companion, SkillFileError};
use ecp_node::operator::{self, AddError, Added};
use ecp_node::projection::SKILL_FILE;
use ecp_protocol::bundle::FileMode;
use ecp_protocol::wire::BundleFile;

use crate::commands::Target;
use crate::commands::output::{emit, one_line, tell};

pub(super) fn add(config: &Config, path: &Path, init: bool) -> anyhow::Result<ExitCode> {
    let skills = skills_to_add(path)?;
    let target = crate::commands::write_target(config, init)?;
    let mut out = String::new();
    let mut refused = 0;
    for skill in &skills {
        match add_one(&target, config, skill)? {
            Ok(Added::Added { name, version, warning }) => {
                let warning = warning.map(|w| format!("; warning: {w}")).unwrap_or_default();
                let _ = writeln!(out, "added      {name} (version {version}){warning}");
            }
            Ok(Added::Unchanged { name }) => {
                let _ = writeln!(out, "unchanged  {name}");
            }
            Err(reason) => {
                refused += 1;
                let _ = writeln!(out, "refused    {}: {}", skill.file.display(), one_line(&reason));
            }
        }
    }
    emit(&out)?;
    if refused > 0 {
        tell(format_args!(
            "ecp-node: {refused} of {} skills refused; fix them and run `ecp-node skill add` again",
            skills.len()
        ));
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// One skill `skill add` was given.
struct ToAdd {
    /// Its SKILL.md.
    file: PathBuf,
    /// The folder name its frontmatter must equal (none for a file or a
    /// skill folder given directly).
    folder: Option<String>,
    /// Whether the other files of the SKILL.md's folder go with it, as a
    /// bundle: yes for a folder, no for a SKILL.md given directly.
    whole: bool,
}

/// The skills named by `path`: a SKILL.md, a skill folder, or a folder of
/// `<name>/SKILL.md` folders.
fn skills_to_add(path: &Path) -> anyhow::Result<Vec<ToAdd>> {
    let meta = std::fs::metadata(path).with_context(|| {
        format!("cannot read {}; pass a SKILL.md file or a folder of <name>/SKILL.md folders", path.display())
    })?;
    if meta.is_file() {
        return Ok(vec![ToAdd { file: path.to_owned(), folder: None, whole: false }]);
    }
    let own = path.join(SKILL_FILE);
    if own.is_file() {
        return Ok(vec![ToAdd { file: own, folder: None, whole: true }]);
    }
    let mut found = Vec::new();
    let entries = std::fs::read_dir(path).with_context(|| format!("cannot list {}", path.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", path.display()))?;
        let file = entry.path().join(SKILL_FILE);
        if file.is_file() {
            let folder = Some(entry.file_name().to_string_lossy().into_owned());
            found.push(ToAdd { file, folder, whole: true });
        }
    }
    if found.is_empty() {
        bail!(
            "{} holds no <name>/SKILL.md; pass a SKILL.md file or a folder of skill folders",
            path.display()
        );
    }
    found.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(found)
}

/// Adds one skill, to the running server (its folder's files uploaded
/// first) or the store. The outer error is a failure of the store or the
/// server (stop); the inner one a refusal of this skill (go on with the next).
fn add_one(target: &Target, config: &Config, skill: &ToAdd) -> anyhow::Result<Result<Added, String>> {
    let folder = skill.folder.as_deref();
    let text = match import::read_skill_file(&skill.file, config.policy.structure.max_bytes) {
        Ok(text) => text,
        Err(SkillFileError::Read(e)) => return Ok(Err(format!("cannot read it: {e}"))),
        Err(e) => return Ok(Err(e.to_string())),
    };
    let companions = match skill.file.parent().filter(|_| skill.whole) {
        Some(dir) => match import::read_companions(dir, text.len() as u64, &config.policy.bundle) {
            Ok(companions) => companions,
            Err(e) => return Ok(Err(e.to_string())),
        },
        None => Vec::new(),
    };
    let added = match target {
        Target::Server(server) => {
            let files: Vec<(String, &Companion)> =
                companions.iter().map(|c| (ecp_protocol::integrity::sha256_hex(&c.bytes), c)).collect();
            let blobs: Vec<(&str, &[u8])> =
                files.iter().map(|(sha, c)| (sha.as_str(), c.bytes.as_slice())).collect();
            let listing: Vec<BundleFile> = files
                .iter()
                .map(|(sha256, c)| BundleFile {
                    path: c.path.clone(),
                    size: c.bytes.len() as u64,
                    mode: FileMode::for_file(&c.path, &c.bytes, c.executable).as_str().to_owned(),
                    sha256: sha256.clone(),
                })
                .collect();
            match server.upload(&blobs)? {
                Ok(()) => server.add_skill(&text, folder, &listing)?,
                Err(refusal) => Err(refusal),
            }
        }
        Target::Store(library) => {
            return match operator::add_skill(library, config, &text, folder, &companions) {
                Ok(added) => Ok(Ok(added)),
                Err(AddError::Refused(why)) => Ok(Err(why)),
                Err(e) => Err(e).context("cannot store the skill"),
            };
        }
    };
    match added {
        Ok(added) => Ok(Ok(added)),
        // A file over the server's limit refuses this skill, not the others.
        Err(refusal) if matches!(refusal.code.as_str(), "skill_refused" | "blob_too_large") => {
            Ok(Err(refusal.message))
        }
        Err(refusal) => Err(refusal.into()),
    }
}
