//! One `SKILL.md` made into a local skill packet: read it safely, take
//! name, description, tags and confidence from its frontmatter, and say
//! what a peer would warn about. Shared by the skills-folder import and
//! `ecp-node skill add`, so a skill added by hand and one imported from
//! the folder are made the same way.

use std::fs;
use std::io::Read;
use std::path::Path;

use ecp_protocol::merge::{MAX_LIST_ITEM_BYTES, MAX_LIST_ITEMS, check_description};
use ecp_protocol::packet::Origin;
use ecp_protocol::skill_doc::{self, DocError, StructureError, StructureLimits};
use ecp_protocol::{SkillPacket, Timestamp};

use crate::store::ShareWarning;

/// Largest `SKILL.md` imported or added by default: 100 KB, the structure
/// limit (`[limits] max_skill_bytes`).
pub const MAX_SKILL_FILE_BYTES: usize = skill_doc::DEFAULT_MAX_BYTES;
/// Confidence of a local skill whose frontmatter has no `confidence`.
pub const DEFAULT_CONFIDENCE: f64 = 0.8;
/// [`ShareWarning::code`] of a description over the 1,024-character guideline.
pub const LONG_DESCRIPTION: &str = "long-description";
/// [`ShareWarning::code`] of a skill whose frontmatter name is not its folder's.
pub const NAME_DIFFERS: &str = "name-differs-from-folder";

/// Why a `SKILL.md` cannot become a local skill. The messages say what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillFileError {
    /// The path is a symlink, which the import does not follow.
    #[error("it is a symlink; the skills folder import does not follow links, copy the file instead")]
    Symlink,
    /// The path is not a regular file.
    #[error("it is not a regular file")]
    NotAFile,
    /// The file is larger than the limit.
    #[error("it is {size} bytes, over the limit of {limit}; shorten the skill")]
    TooLarge {
        /// Size in bytes (at least).
        size: u64,
        /// The limit.
        limit: usize,
    },
    /// The file could not be read.
    #[error("cannot read it: {0}")]
    Read(#[source] std::io::Error),
    /// The file is not UTF-8 text.
    #[error("it is not UTF-8 text; save it as UTF-8")]
    NotUtf8,
    /// The frontmatter does not parse.
    #[error("{0}")]
    Document(#[from] DocError),
    /// The document is not a usable skill (no frontmatter or name, bad name, empty body, …).
    #[error("{0}")]
    Structure(#[from] StructureError),
    /// The description is longer than a peer accepts.
    #[error(
        "its description is {len} bytes, over the limit of {limit}; keep it to a paragraph \
         (or raise [limits] max_description_bytes)"
    )]
    DescriptionTooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit ([`StructureLimits::max_description_bytes`]).
        limit: usize,
    },
    /// Too many tags, or a tag too long, for a peer to accept.
    #[error(
        "its tags break the limits ({MAX_LIST_ITEMS} tags of at most {MAX_LIST_ITEM_BYTES} bytes); use fewer, shorter tags"
    )]
    TagsTooLarge,
}

impl SkillFileError {
    /// The short code `skill list` and `status` show for a skill this error
    /// kept from being shared.
    pub fn code(&self) -> &'static str {
        match self {
            SkillFileError::Symlink => "symlink",
            SkillFileError::NotAFile | SkillFileError::Read(_) => "unreadable",
            SkillFileError::TooLarge { .. }
            | SkillFileError::DescriptionTooLong { .. }
            | SkillFileError::TagsTooLarge => "over-limit",
            SkillFileError::NotUtf8 | SkillFileError::Document(_) | SkillFileError::Structure(_) => "invalid",
        }
    }
}

/// The origin of this node's local skills. The user hash is made from the
/// instance id, so no local user name is ever sent, even hashed.
pub fn local_origin(instance_id: &str) -> Origin {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    let os = format!("{}/{arch}", std::env::consts::OS);
    Origin::new(instance_id, instance_id, &os, concat!("ecp-node/", env!("CARGO_PKG_VERSION")))
}

/// Reads a `SKILL.md` (following symlinks: the caller decides about them)
/// as UTF-8, refusing anything but a regular file of at most `limit` bytes.
pub fn read_skill_file(path: &Path, limit: usize) -> Result<String, SkillFileError> {
    // Check before opening: opening a FIFO would block.
    let meta = fs::metadata(path).map_err(SkillFileError::Read)?;
    if !meta.is_file() {
        return Err(SkillFileError::NotAFile);
    }
    if meta.len() > limit as u64 {
        return Err(SkillFileError::TooLarge { size: meta.len(), limit });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The file may grow between the check and the read: read one byte past the limit at most.
    fs::File::open(path)
        .and_then(|f| f.take(limit as u64 + 1).read_to_end(&mut bytes))
        .map_err(SkillFileError::Read)?;
    if bytes.len() > limit {
        return Err(SkillFileError::TooLarge { size: bytes.len() as u64, limit });
    }
    String::from_utf8(bytes).map_err(|_| SkillFileError::NotUtf8)
}

/// The frontmatter name of a `SKILL.md` text, when it has one that parses.
pub fn frontmatter_name(text: &str) -> Option<String> {
    skill_doc::parse(text).ok()?.frontmatter?.name
}

/// What a local skill `name` with `description`, in `folder`, is shared
/// with a warning for: a description over the guideline (as a peer warns
/// when it receives it), a folder named otherwise. A description over the
/// hard limit is an error.
pub fn share_warnings(
    folder: Option<&str>,
    name: &str,
    description: &str,
    limits: &StructureLimits,
) -> Result<Vec<ShareWarning>, SkillFileError> {
    let mut warnings = Vec::new();
    if let Some(folder) = folder.filter(|f| *f != name) {
        warnings.push(ShareWarning {
            code: NAME_DIFFERS.to_owned(),
            message: format!(
                "its frontmatter names it {name:?} but its folder is {folder:?}: shared as {name:?}, and peers \
                 put it in a folder of that name; rename the folder to {name:?} to silence this"
            ),
        });
    }
    match check_description(description, limits.max_description_bytes) {
        Err(_) => {
            let limit = limits.max_description_bytes;
            return Err(SkillFileError::DescriptionTooLong { len: description.len(), limit });
        }
        Ok(Some(warning)) => {
            warnings.push(ShareWarning { code: LONG_DESCRIPTION.to_owned(), message: warning.to_string() })
        }
        Ok(None) => {}
    }
    Ok(warnings)
}

/// Makes a local skill packet of a `SKILL.md` text: name, description, tags
/// and confidence from its frontmatter, the whole text as body; with the
/// warnings a peer would give (description over the guideline) and, when
/// the file sits in `folder` named otherwise, that it is shared under its
/// frontmatter name.
///
/// The document must pass [`check_structure`](skill_doc::check_structure)
/// under `limits`, and its description and tags must fit what peers accept.
pub fn local_packet(
    text: &str,
    folder: Option<&str>,
    origin: &Origin,
    limits: &StructureLimits,
    created_at: Timestamp,
) -> Result<(SkillPacket, Vec<ShareWarning>), SkillFileError> {
    let doc = skill_doc::parse(text)?;
    skill_doc::check_structure(&doc, text.len(), limits)?;
    let frontmatter = doc.frontmatter.unwrap_or_default();
    let Some(name) = frontmatter.name else {
        return Err(StructureError::NameMissing.into());
    };
    let description =
        skill_doc::fold_line_breaks(frontmatter.description.as_deref().unwrap_or_default()).trim().to_owned();
    let warnings = share_warnings(folder, &name, &description, limits)?;
    if frontmatter.tags.len() > MAX_LIST_ITEMS
        || frontmatter.tags.iter().any(|t| t.len() > MAX_LIST_ITEM_BYTES)
    {
        return Err(SkillFileError::TagsTooLarge);
    }
    let confidence = frontmatter.confidence.unwrap_or(DEFAULT_CONFIDENCE);
    let packet = SkillPacket::new(origin, &name, &description, text, confidence, created_at)
        .with_tags(frontmatter.tags);
    Ok((packet, warnings))
}
