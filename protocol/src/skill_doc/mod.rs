//! `SKILL.md` documents: the frontmatter block, the skill-name rule, the
//! structure check and the tool-reference check. Work in progress: parts not
//! yet written are stubs.

mod emit;
mod frontmatter;
mod name;
mod yaml;

pub use emit::{fold_line_breaks, with_frontmatter};
pub use frontmatter::{DocError, Frontmatter, MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH, parse};
pub use name::{MAX_NAME_LEN, NameError, validate_name};

use thiserror::Error;

/// Largest SKILL.md accepted by default (goclaw's limit, `ECP.md` › Related
/// designs): 100 KB.
pub const DEFAULT_MAX_BYTES: usize = 100 * 1024;

/// A parsed SKILL.md: its frontmatter (if any) and the Markdown after it.
///
/// The body borrows from the parsed text, so the bytes a caller hashes or
/// stores are exactly the bytes that were received.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillDocument<'a> {
    /// The frontmatter, when the document starts with a `---` block.
    pub frontmatter: Option<Frontmatter>,
    /// The Markdown after the frontmatter (the whole text when there is none).
    pub body: &'a str,
}

/// Why a document fails the structure check.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum StructureError {
    /// Too big.
    #[error("skill body is {size} bytes, over the limit of {limit}")]
    TooLarge {
        /// size
        size: usize,
        /// limit
        limit: usize,
    },
}

/// Limits of the structure check.
#[derive(Debug, Clone, PartialEq)]
pub struct StructureLimits {
    /// Maximum size of the whole document in bytes.
    pub max_bytes: usize,
    /// Minimum number of non-whitespace characters after the frontmatter.
    pub min_body_chars: usize,
}

impl Default for StructureLimits {
    fn default() -> Self {
        StructureLimits {
            max_bytes: DEFAULT_MAX_BYTES,
            min_body_chars: 20,
        }
    }
}

/// Checks a parsed document: frontmatter present, body non-empty and long enough, size.
pub fn check_structure(
    _doc: &SkillDocument<'_>,
    _text_len: usize,
    _limits: &StructureLimits,
) -> Result<(), StructureError> {
    Ok(())
}
