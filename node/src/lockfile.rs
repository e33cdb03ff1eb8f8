//! Lockfiles and drift (#25 item 3): `ecp.lock` names the version of every
//! skill in the skills folder — name, digest, origin, and this node's
//! version number as a comment (numbers never travel) — sorted by name, so
//! that a diff of two lockfiles reads as what changed. [`drift`] compares
//! the folder with what the projection would write there: the store's
//! versions (a pinned skill's pinned one), or a lockfile's. A received
//! skill's file is compared with its text as written — grants removed
//! ([`crate::permissions`]) and where it came from stamped
//! ([`crate::stamp`]) — so neither is drift.
//!
//! With `[[agent]]`s (#24) a lockfile describes one folder: the skills
//! folder (`agent` `None`), or an agent's — the skills its listing holds,
//! as its projection writes them.
//!
//! ```toml
//! # ecp.lock: written by `ecp-node lock`; `ecp-node install --locked ecp.lock` installs it
//! version = 1
//!
//! [[skill]]
//! name = "csv-dedupe"
//! digest = "sha256:9a9b…"
//! origin = "ecp-0a1b2c3d4e5f"
//! # local version 3
//! ```

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::fs;

use ecp_protocol::{SkillKind, SkillPacket, integrity};
use serde::{Deserialize, Serialize};

use crate::agents::Agent;
use crate::library::Library;
use crate::projection::SKILL_FILE;
use crate::store::{Hold, Pick, StoreError, digest_of};

/// The lockfile format this node writes and reads.
pub const LOCKFILE_VERSION: u32 = 1;

/// Largest lockfile read (1 MiB: some 5,000 skills).
pub const MAX_LOCKFILE_BYTES: u64 = 1024 * 1024;

/// One locked skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locked {
    /// The skill's name.
    pub name: String,
    /// Its version's digest ([`digest_of`]).
    pub digest: String,
    /// Its `originInstance`.
    pub origin: String,
    /// This node's version number (written as a comment; never read).
    #[serde(skip)]
    pub version: Option<i64>,
}

/// A lockfile: its skills, sorted by name, each once.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lockfile {
    /// The skills.
    pub skills: Vec<Locked>,
}

/// Why a lockfile cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockfileError {
    /// Not TOML of the expected shape.
    #[error("not a lockfile: {0}")]
    Parse(String),
    /// A newer format.
    #[error("lockfile version {0} is newer than this ecp-node knows ({LOCKFILE_VERSION}); upgrade ecp-node")]
    TooNew(u32),
    /// A skill named twice.
    #[error("the lockfile names {0:?} twice; keep one entry per skill")]
    Duplicate(String),
    /// A name or digest that cannot be one.
    #[error("the lockfile's entry {name:?} is invalid: {why}")]
    Invalid {
        /// The entry's name.
        name: String,
        /// What is wrong.
        why: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    #[serde(default)]
    skill: Vec<Locked>,
}

impl Lockfile {
    /// Reads a lockfile's text.
    ///
    /// # Errors
    ///
    /// [`LockfileError`], naming what is wrong.
    pub fn parse(text: &str) -> Result<Lockfile, LockfileError> {
        let file: File = toml::from_str(text).map_err(|e| LockfileError::Parse(e.message().to_owned()))?;
        if file.version > LOCKFILE_VERSION {
            return Err(LockfileError::TooNew(file.version));
        }
        let mut seen = HashSet::new();
        for skill in &file.skill {
            let invalid = |why: String| LockfileError::Invalid { name: skill.name.clone(), why };
            ecp_protocol::skill_doc::validate_name(&skill.name).map_err(|e| invalid(e.to_string()))?;
            if !matches!(Pick::parse(&skill.digest), Ok(Pick::Digest(_))) {
                return Err(invalid(format!("digest {:?} is not a digest", skill.digest)));
            }
            if !seen.insert(skill.name.clone()) {
                return Err(LockfileError::Duplicate(skill.name.clone()));
            }
        }
        let mut skills = file.skill;
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Lockfile { skills })
    }

    /// The lockfile's text: stable, sorted by name.
    pub fn to_toml(&self) -> String {
        let mut out = format!(
            "# ecp.lock: written by `ecp-node lock`; `ecp-node install --locked FILE` installs it\nversion = \
             {LOCKFILE_VERSION}\n"
        );
        let quote = |s: &str| toml::Value::String(s.to_owned()).to_string();
        for s in &self.skills {
            let _ = write!(
                out,
                "\n[[skill]]\nname = {}\ndigest = {}\norigin = {}\n",
                quote(&s.name),
                quote(&s.digest),
                quote(&s.origin)
            );
            if let Some(v) = s.version {
                let _ = writeln!(out, "# local version {v}");
            }
        }
        out
    }

    /// The lockfile of the skills folder: every active skill the projection
    /// writes (a pinned one at its pinned version), sorted by name — but
    /// not a private one, which no other machine could install (no peer
    /// serves it).
    pub fn of(library: &Library, agent: Option<&Agent>) -> Result<Lockfile, StoreError> {
        let private = private_names(library)?;
        let skills = shown(library, agent)?
            .into_iter()
            .filter(|s| !private.contains(&s.packet.skill_name))
            .map(|s| Locked {
                name: s.packet.skill_name.clone(),
                digest: digest_of(&s.packet).to_owned(),
                origin: s.packet.origin_instance.clone(),
                version: Some(s.version),
            })
            .collect();
        Ok(Lockfile { skills })
    }

    /// The locks to record in the store (pruning keeps them): each skill's
    /// version of the lockfile's digest, where the store holds it.
    pub fn holds(&self, library: &Library) -> Result<Vec<Hold>, StoreError> {
        let mut holds = Vec::new();
        for s in &self.skills {
            if let Some((version, _)) =
                library.store().version_packet(&s.name, &Pick::Digest(s.digest.clone()))?
            {
                holds.push(Hold { name: s.name.clone(), version, digest: s.digest.clone() });
            }
        }
        Ok(holds)
    }
}

/// This node's private skills: never in a lockfile (no other machine can
/// install them), and never drift from one at this node.
fn private_names(library: &Library) -> Result<HashSet<String>, StoreError> {
    Ok(library.store().list_skills()?.into_iter().filter(|r| r.private.is_some()).map(|r| r.name).collect())
}

/// A skill as the folder should show it.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The version's packet.
    pub packet: SkillPacket,
    /// Its kind.
    pub kind: SkillKind,
    /// This node's version number of it.
    pub version: i64,
}

/// Every active skill the projection writes to the folder, by name: the
/// current version, or a pinned skill's pinned one; not those review
/// intake or a held deletion keeps out. With `agent`, those of its listing.
pub fn shown(library: &Library, agent: Option<&Agent>) -> Result<Vec<Shown>, StoreError> {
    let listed: Option<HashSet<String>> = match agent {
        Some(agent) => Some(library.agents().listing(library, agent)?.listed().map(str::to_owned).collect()),
        None => None,
    };
    let store = library.store();
    let numbers: BTreeMap<String, i64> =
        store.list_skills()?.into_iter().map(|r| (r.name, r.version)).collect();
    let pins = store.pins()?;
    Ok(library
        .folder_view()?
        .into_iter()
        .filter(|(packet, _)| !packet.deprecated)
        .filter(|(packet, kind)| match &listed {
            Some(listed) => listed.contains(&packet.skill_name),
            // With agents, received skills are in their folders only.
            None => *kind != SkillKind::External || library.agents().is_empty(),
        })
        .map(|(packet, kind)| {
            let name = &packet.skill_name;
            let version = match pins.get(name).filter(|p| p.digest == digest_of(&packet)) {
                Some(pin) => pin.version,
                None => numbers.get(name).copied().unwrap_or_default(),
            };
            Shown { packet, kind, version }
        })
        .collect())
}

/// One difference between the skills folder and what it should hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "drift", rename_all = "camelCase")]
pub enum Drift {
    /// A file differs from what the node would write (edited by hand).
    #[serde(rename_all = "camelCase")]
    Edited {
        /// The skill.
        name: String,
        /// The file, relative to the skill's folder.
        file: String,
    },
    /// The skill's `SKILL.md` (or a file of its bundle) is not there.
    #[serde(rename_all = "camelCase")]
    Missing {
        /// The skill.
        name: String,
        /// The file, relative to the skill's folder.
        file: String,
    },
    /// A skill folder the node would not write (not in the lockfile, or not held).
    Extra {
        /// The folder's name.
        name: String,
    },
    /// The lockfile names a version the store does not hold.
    #[serde(rename_all = "camelCase")]
    NotHeld {
        /// The skill.
        name: String,
        /// The version's digest.
        digest: String,
    },
    /// The folder shows another version than the lockfile names.
    #[serde(rename_all = "camelCase")]
    OtherVersion {
        /// The skill.
        name: String,
        /// The version the lockfile names.
        locked: String,
        /// The version the node shows.
        shown: String,
    },
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Drift::Edited { name, file } => {
                write!(f, "edited   {name}/{file}: differs from what the node wrote")
            }
            Drift::Missing { name, file } => write!(f, "missing  {name}/{file}"),
            Drift::Extra { name } => write!(f, "extra    {name}: the node would not write this skill folder"),
            Drift::NotHeld { name, digest } => {
                write!(f, "not held {name}: the store holds no version {digest}")
            }
            Drift::OtherVersion { name, locked, shown } => {
                write!(f, "version  {name}: the lockfile names {locked}, the node shows {shown}")
            }
        }
    }
}

/// The drift of the skills folder from what the projection would write —
/// the store's versions, or with `locked` the lockfile's — in name order.
pub fn drift(
    library: &Library,
    agent: Option<&Agent>,
    locked: Option<&Lockfile>,
) -> Result<Vec<Drift>, StoreError> {
    let shown = shown(library, agent)?;
    let mut drifts = Vec::new();
    let expected: Vec<(SkillPacket, SkillKind)> = match locked {
        None => shown.into_iter().map(|s| (s.packet, s.kind)).collect(),
        Some(lock) => {
            let by_name: BTreeMap<&str, &Shown> =
                shown.iter().map(|s| (s.packet.skill_name.as_str(), s)).collect();
            let mut expected = Vec::new();
            for l in &lock.skills {
                let Some((_, packet)) =
                    library.store().version_packet(&l.name, &Pick::Digest(l.digest.clone()))?
                else {
                    drifts.push(Drift::NotHeld { name: l.name.clone(), digest: l.digest.clone() });
                    continue;
                };
                match by_name.get(l.name.as_str()) {
                    Some(s) if digest_of(&s.packet) != digest_of(&packet) => {
                        drifts.push(Drift::OtherVersion {
                            name: l.name.clone(),
                            locked: l.digest.clone(),
                            shown: digest_of(&s.packet).to_owned(),
                        })
                    }
                    _ => {}
                }
                let kind = by_name.get(l.name.as_str()).map_or(SkillKind::External, |s| s.kind);
                expected.push((packet, kind));
            }
            // Private skills stay out of lockfiles: this node shows its own as they are.
            let private = private_names(library)?;
            let locked: HashSet<&str> = lock.skills.iter().map(|l| l.name.as_str()).collect();
            for s in &shown {
                if private.contains(&s.packet.skill_name) && !locked.contains(s.packet.skill_name.as_str()) {
                    expected.push((s.packet.clone(), s.kind));
                }
            }
            expected
        }
    };
    let projection = match agent.and_then(|a| library.agents().projection_of(&a.name)) {
        Some(projection) => projection,
        None => library.projection(),
    };
    let mut folders = HashSet::new();
    for (packet, kind) in &expected {
        let name = &packet.skill_name;
        let Some(dir) = projection.folder_of(name) else { continue };
        if let Some(entry) = dir.file_name().and_then(|n| n.to_str()) {
            folders.insert(entry.to_owned());
        }
        let content = projection.content(packet, *kind);
        match fs::read(dir.join(SKILL_FILE)) {
            Err(_) => drifts.push(Drift::Missing { name: name.clone(), file: SKILL_FILE.to_owned() }),
            Ok(bytes) if bytes != content.as_bytes() => {
                drifts.push(Drift::Edited { name: name.clone(), file: SKILL_FILE.to_owned() });
            }
            Ok(_) => {}
        }
        for file in packet.files.iter().filter(|f| f.path != SKILL_FILE) {
            match fs::read(dir.join(&file.path)) {
                Err(_) => drifts.push(Drift::Missing { name: name.clone(), file: file.path.clone() }),
                Ok(bytes) if integrity::sha256_hex(&bytes) != file.sha256 => {
                    drifts.push(Drift::Edited { name: name.clone(), file: file.path.clone() });
                }
                Ok(_) => {}
            }
        }
    }
    if let Ok(listing) = fs::read_dir(projection.dir()) {
        for item in listing.filter_map(Result::ok) {
            let Some(entry) = item.file_name().to_str().map(str::to_owned) else { continue };
            if !entry.starts_with('.') && !folders.contains(&entry) && item.path().join(SKILL_FILE).exists() {
                drifts.push(Drift::Extra { name: entry });
            }
        }
    }
    drifts.sort_by(|a, b| drift_name(a).cmp(drift_name(b)));
    Ok(drifts)
}

fn drift_name(d: &Drift) -> &str {
    match d {
        Drift::Edited { name, .. }
        | Drift::Missing { name, .. }
        | Drift::Extra { name }
        | Drift::NotHeld { name, .. }
        | Drift::OtherVersion { name, .. } => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locked(name: &str, digest: &str) -> Locked {
        Locked { name: name.into(), digest: digest.into(), origin: "ecp-a".into(), version: Some(2) }
    }

    #[test]
    fn a_lockfile_reads_back_what_it_wrote_sorted_and_stable() {
        let (d1, d2) = ("a".repeat(64), format!("sha256:{}", "b".repeat(64)));
        let lock = Lockfile { skills: vec![locked("alpha", &d1), locked("beta", &d2)] };
        let text = lock.to_toml();
        assert!(text.contains("# local version 2"), "{text}");
        let read = Lockfile::parse(&text).expect("parses");
        let expected: Vec<_> = lock.skills.iter().map(|s| Locked { version: None, ..s.clone() }).collect();
        assert_eq!(read.skills, expected);
        // Out of order in the file: read sorted, written the same again.
        let swapped = format!(
            "version = 1\n[[skill]]\nname = \"beta\"\ndigest = \"{d2}\"\norigin = \"ecp-a\"\n\
             [[skill]]\nname = \"alpha\"\ndigest = \"{d1}\"\norigin = \"ecp-a\"\n"
        );
        assert_eq!(Lockfile::parse(&swapped).unwrap().to_toml(), read.to_toml());
    }

    #[test]
    fn a_bad_lockfile_is_refused_naming_the_problem() {
        let d = "a".repeat(64);
        let cases = [
            ("version = 2\n".to_owned(), "newer"),
            ("nonsense".to_owned(), "not a lockfile"),
            (
                format!(
                    "version = 1\n[[skill]]\nname = \"a\"\ndigest = \"{d}\"\norigin = \"o\"\nextra = 1\n"
                ),
                "not a lockfile",
            ),
            (
                format!("version = 1\n[[skill]]\nname = \"Bad Name\"\ndigest = \"{d}\"\norigin = \"o\"\n"),
                "Bad Name",
            ),
            (
                "version = 1\n[[skill]]\nname = \"a\"\ndigest = \"abc\"\norigin = \"o\"\n".to_owned(),
                "not a digest",
            ),
            (
                format!(
                    "version = 1\n[[skill]]\nname = \"a\"\ndigest = \"{d}\"\norigin = \"o\"\n\
                     [[skill]]\nname = \"a\"\ndigest = \"{d}\"\norigin = \"o\"\n"
                ),
                "twice",
            ),
        ];
        for (text, expected) in cases {
            let e = Lockfile::parse(&text).expect_err(&text).to_string();
            assert!(e.contains(expected), "{text:?}: {e}");
        }
        assert!(Lockfile::parse("version = 1\n").is_ok_and(|l| l.skills.is_empty()));
    }
}
