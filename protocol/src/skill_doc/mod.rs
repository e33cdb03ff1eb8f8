//! `SKILL.md` documents: the frontmatter block, the skill-name rule, the
//! structure check and the tool-reference check. Work in progress: parts not
//! yet written are stubs.

mod emit;
mod frontmatter;
mod name;
mod references;
mod structure;
mod yaml;

pub use emit::{fold_line_breaks, with_frontmatter};
pub use frontmatter::{DocError, Frontmatter, MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH, parse};
pub use name::{MAX_NAME_LEN, NameError, validate_name};
pub use references::{KnownTools, ReferenceReport, check_document_references, check_references};
pub use structure::{
    DEFAULT_MIN_BODY_CHARS, NameMismatch, StructureError, StructureLimits, check_structure,
    frontmatter_mismatch,
};

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
