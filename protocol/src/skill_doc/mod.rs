//! `SKILL.md` documents: the frontmatter block, the skill-name rule, the
//! structure check and the tool-reference check.
//!
//! A skill travels as the `skillBody` of a packet (`ECP.md` › Messages): a
//! Markdown playbook that usually opens with a YAML frontmatter block holding
//! `name` and `description`. Every received body is untrusted text from a
//! stranger, so every function here is total: it never panics, reads no more
//! of the input than it needs, and bounds the work an attacker can ask for.
//!
//! This module does not decide what to do with a skill. It answers questions
//! (is the name valid, is the document well formed, which tools does it
//! mention, does its frontmatter agree with the packet) and the merge decides.
//!
//! # Layout
//!
//! The submodules are private; their public items are re-exported here.
//!
//! - `frontmatter`: finding the `---` block and reading its YAML into a
//!   [`Frontmatter`] ([`parse`], [`DocError`]); its unit tests are in
//!   `frontmatter/tests.rs`.
//! - `yaml`: the bounded YAML event reader behind it (no aliases, no
//!   anchors, limited nesting), which never builds a `yaml_rust2::Yaml`;
//!   `yaml::fast` beside it reads the plain `key: value` form without the
//!   parser (`None` = use the event reader, `Some` = its identical tree).
//! - `emit`: [`with_frontmatter`], which rebuilds a `SKILL.md` from the
//!   packet fields for bodies a Go peer served without their frontmatter.
//! - `name`: [`validate_name`], the `skillName` rule of `ECP.md` › Messages.
//! - `structure`: [`check_structure`] and [`frontmatter_mismatch`].
//! - `references`: [`check_references`] against [`KnownTools`].
//!
//! # Example
//!
//! ```
//! use ecp_protocol::skill_doc::{self, KnownTools, StructureLimits};
//!
//! let text = "---\nname: hello\ndescription: Say hello\n---\nRun `bash` and print a greeting.\n";
//! let doc = skill_doc::parse(text)?;
//! skill_doc::check_structure(&doc, text.len(), &StructureLimits::default())?;
//! assert_eq!(doc.frontmatter.as_ref().and_then(|f| f.name.as_deref()), Some("hello"));
//! let refs = skill_doc::check_references(doc.body, &KnownTools::default());
//! assert_eq!(refs.referenced, ["bash"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod emit;
mod frontmatter;
mod name;
mod references;
mod structure;
mod yaml;

#[cfg(test)]
mod tests;

pub use emit::{fold_line_breaks, with_frontmatter};
pub(crate) use frontmatter::parse_name;
pub(crate) use frontmatter::split_list;
pub use frontmatter::{
    DocError, Frontmatter, MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH, parse, plain_keys,
};
pub use name::{MAX_NAME_LEN, NameError, validate_name};
pub use references::{KnownTools, ReferenceReport, check_document_references, check_references};
pub use structure::{
    DEFAULT_MIN_BODY_CHARS, NameMismatch, StructureError, StructureLimits, check_structure,
    frontmatter_mismatch,
};

/// Largest SKILL.md accepted by default (goclaw's limit, `ECP.md` › Related
/// designs): 100 KB.
pub const DEFAULT_MAX_BYTES: usize = 100 * 1024;

/// Longest description accepted by default, in bytes: 4 KiB. Published
/// skills run a little over the 1,024-character guideline, which is a
/// warning (`SPEC.md` §7.6.2.2); this limit only bounds what a peer stores.
pub const DEFAULT_MAX_DESCRIPTION_BYTES: usize = 4 * 1024;

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
