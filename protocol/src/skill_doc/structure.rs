//! The structure check: is a parsed `SKILL.md` a usable skill at all?
//! [`check_structure`], and [`frontmatter_mismatch`] for the merge.
//!
//! This is what the reference lacks (`ECP.md` › Flaws, 5: "an empty skill
//! body is accepted"); the size limit is goclaw's 100 KB (`ECP.md` › Related
//! designs).

use thiserror::Error;

use super::name::{NameError, validate_name};
use super::{DEFAULT_MAX_BYTES, DEFAULT_MAX_DESCRIPTION_BYTES, SkillDocument};

/// Default of [`StructureLimits::min_body_chars`]: a playbook shorter than
/// this cannot say when to use it and what to do.
pub const DEFAULT_MIN_BODY_CHARS: usize = 20;

/// Why a document fails the structure check.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum StructureError {
    /// The whole document is larger than [`StructureLimits::max_bytes`].
    #[error("skill document is {size} bytes, over the limit of {limit}; shorten it")]
    TooLarge {
        /// Size of the whole document, in bytes.
        size: usize,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The document has no `---` frontmatter block.
    #[error("skill document has no frontmatter; start it with a `---` block holding `name`")]
    FrontmatterMissing,
    /// The frontmatter has no `name` key (or it is null).
    #[error("skill frontmatter has no `name`; add `name: <skill-name>`")]
    NameMissing,
    /// The frontmatter `name` breaks the skill-name rule.
    #[error("skill frontmatter `name` is invalid: {0}")]
    NameInvalid(#[source] NameError),
    /// The body has no non-whitespace character.
    #[error("skill body is empty; write the playbook after the frontmatter")]
    BodyEmpty,
    /// The body has fewer non-whitespace characters than
    /// [`StructureLimits::min_body_chars`].
    #[error("skill body has {chars} non-whitespace characters, fewer than {min}; say more")]
    BodyTooShort {
        /// Non-whitespace characters found.
        chars: usize,
        /// The minimum.
        min: usize,
    },
}

/// Limits of the structure check.
#[derive(Debug, Clone, PartialEq)]
pub struct StructureLimits {
    /// Maximum size of the whole document in bytes.
    pub max_bytes: usize,
    /// Minimum number of non-whitespace characters after the frontmatter.
    pub min_body_chars: usize,
    /// Maximum size of `skillDescription` in bytes (the importer's and the
    /// merge's hard limit; over 1,024 characters is only a warning).
    pub max_description_bytes: usize,
}

impl Default for StructureLimits {
    fn default() -> Self {
        StructureLimits {
            max_bytes: DEFAULT_MAX_BYTES,
            min_body_chars: DEFAULT_MIN_BODY_CHARS,
            max_description_bytes: DEFAULT_MAX_DESCRIPTION_BYTES,
        }
    }
}

/// Checks a parsed document: size, frontmatter present with a valid `name`,
/// body non-empty and long enough, in that order.
///
/// `text_len` is the length in bytes of the text `doc` was parsed from (the
/// document only borrows its body, so it cannot know). Whether the name
/// matches the packet's `skillName` is not checked here: see
/// [`frontmatter_mismatch`].
///
/// # Errors
///
/// The first check that fails, as a [`StructureError`].
pub fn check_structure(
    doc: &SkillDocument<'_>,
    text_len: usize,
    limits: &StructureLimits,
) -> Result<(), StructureError> {
    if text_len > limits.max_bytes {
        return Err(StructureError::TooLarge { size: text_len, limit: limits.max_bytes });
    }
    let frontmatter = doc.frontmatter.as_ref().ok_or(StructureError::FrontmatterMissing)?;
    let name = frontmatter.name.as_deref().ok_or(StructureError::NameMissing)?;
    validate_name(name).map_err(StructureError::NameInvalid)?;
    // Counting stops at the minimum: a long body costs no more than a short one.
    let chars = doc.body.chars().filter(|c| !c.is_whitespace()).take(limits.min_body_chars.max(1)).count();
    if chars == 0 {
        return Err(StructureError::BodyEmpty);
    }
    if chars < limits.min_body_chars {
        return Err(StructureError::BodyTooShort { chars, min: limits.min_body_chars });
    }
    Ok(())
}

/// The frontmatter names a different skill than the packet carrying it.
///
/// Not an error by itself: a renamed skill, or a Go peer's body, can
/// legitimately differ, and the merge decides. It implements `Error` so a
/// merge that rejects for it can say why.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("frontmatter names the skill {frontmatter_name:?}, the packet calls it {skill_name:?}")]
pub struct NameMismatch {
    /// The `name` in the frontmatter.
    pub frontmatter_name: String,
    /// The packet's `skillName`.
    pub skill_name: String,
}

/// Compares the frontmatter `name` with the packet's `skillName`, exactly
/// (case matters). `None` when they agree, and also when the frontmatter or
/// its name is missing, which [`check_structure`] reports.
#[must_use]
pub fn frontmatter_mismatch(doc: &SkillDocument<'_>, skill_name: &str) -> Option<NameMismatch> {
    let name = doc.frontmatter.as_ref()?.name.as_deref()?;
    (name != skill_name)
        .then(|| NameMismatch { frontmatter_name: name.to_owned(), skill_name: skill_name.to_owned() })
}

#[cfg(test)]
mod tests {
    use super::super::{Frontmatter, parse};
    use super::*;

    const BODY: &str = "# Title\n\nA body long enough to pass.\n";

    fn doc_named<'a>(name: Option<&str>, body: &'a str) -> SkillDocument<'a> {
        let frontmatter = Frontmatter { name: name.map(str::to_owned), ..Frontmatter::default() };
        SkillDocument { frontmatter: Some(frontmatter), body }
    }

    fn check(doc: &SkillDocument<'_>) -> Result<(), StructureError> {
        check_structure(doc, 100, &StructureLimits::default())
    }

    #[test]
    fn accepts_well_formed_document() {
        let text = format!("---\nname: ok\ndescription: d\n---\n{BODY}");
        let doc = parse(&text).unwrap();
        assert_eq!(check_structure(&doc, text.len(), &StructureLimits::default()), Ok(()));
    }

    #[test]
    fn default_limits_are_100_kb_and_20_chars() {
        assert_eq!(
            StructureLimits::default(),
            StructureLimits { max_bytes: 100 * 1024, min_body_chars: 20, max_description_bytes: 4096 }
        );
    }

    #[test]
    fn rejects_document_over_max_bytes() {
        let doc = doc_named(Some("ok"), BODY);
        assert_eq!(
            check_structure(&doc, DEFAULT_MAX_BYTES + 1, &StructureLimits::default()),
            Err(StructureError::TooLarge { size: DEFAULT_MAX_BYTES + 1, limit: DEFAULT_MAX_BYTES })
        );
        assert_eq!(check_structure(&doc, DEFAULT_MAX_BYTES, &StructureLimits::default()), Ok(()));
    }

    #[test]
    fn honours_configured_max_bytes() {
        let limits = StructureLimits { max_bytes: 50, ..StructureLimits::default() };
        assert_eq!(
            check_structure(&doc_named(Some("ok"), BODY), 51, &limits),
            Err(StructureError::TooLarge { size: 51, limit: 50 })
        );
    }

    #[test]
    fn rejects_document_without_frontmatter() {
        let doc = SkillDocument { frontmatter: None, body: BODY };
        assert_eq!(check(&doc), Err(StructureError::FrontmatterMissing));
    }

    #[test]
    fn rejects_frontmatter_without_name() {
        assert_eq!(check(&doc_named(None, BODY)), Err(StructureError::NameMissing));
        let doc = parse("---\ndescription: d\nname:\n---\nbody").unwrap();
        assert_eq!(check(&doc), Err(StructureError::NameMissing));
    }

    #[test]
    fn rejects_frontmatter_with_invalid_name() {
        assert_eq!(
            check(&doc_named(Some("../x"), BODY)),
            Err(StructureError::NameInvalid(NameError::StartsWithInvalidChar {
                name: "../x".into(),
                ch: '.',
            }))
        );
    }

    #[test]
    fn rejects_empty_body() {
        assert_eq!(check(&doc_named(Some("ok"), "")), Err(StructureError::BodyEmpty));
    }

    #[test]
    fn rejects_whitespace_only_body() {
        assert_eq!(check(&doc_named(Some("ok"), " \n\t\r\n ")), Err(StructureError::BodyEmpty));
        let limits = StructureLimits { min_body_chars: 0, ..StructureLimits::default() };
        assert_eq!(
            check_structure(&doc_named(Some("ok"), "\n"), 10, &limits),
            Err(StructureError::BodyEmpty)
        );
    }

    #[test]
    fn rejects_body_shorter_than_min_chars() {
        // 19 non-whitespace characters, padded with whitespace.
        let body = "  a b c d e f g h i j k l m n o p q r s \n\n";
        assert_eq!(
            check(&doc_named(Some("ok"), body)),
            Err(StructureError::BodyTooShort { chars: 19, min: 20 })
        );
        assert_eq!(check(&doc_named(Some("ok"), &format!("{body}t"))), Ok(()));
    }

    #[test]
    fn honours_configured_min_body_chars() {
        let limits = StructureLimits { min_body_chars: 1, ..StructureLimits::default() };
        assert_eq!(check_structure(&doc_named(Some("ok"), "x"), 10, &limits), Ok(()));
    }

    #[test]
    fn checks_size_before_anything_else() {
        let doc = SkillDocument { frontmatter: None, body: "" };
        assert!(matches!(
            check_structure(&doc, usize::MAX, &StructureLimits::default()),
            Err(StructureError::TooLarge { .. })
        ));
    }

    #[test]
    fn reports_frontmatter_name_mismatch() {
        let doc = doc_named(Some("git-bisekt"), BODY);
        assert_eq!(
            frontmatter_mismatch(&doc, "git-bisect"),
            Some(NameMismatch { frontmatter_name: "git-bisekt".into(), skill_name: "git-bisect".into() })
        );
    }

    #[test]
    fn name_mismatch_is_case_sensitive() {
        assert!(frontmatter_mismatch(&doc_named(Some("Git"), BODY), "git").is_some());
    }

    #[test]
    fn no_mismatch_when_names_agree_or_are_missing() {
        assert_eq!(frontmatter_mismatch(&doc_named(Some("a"), BODY), "a"), None);
        assert_eq!(frontmatter_mismatch(&doc_named(None, BODY), "a"), None);
        let doc = SkillDocument { frontmatter: None, body: BODY };
        assert_eq!(frontmatter_mismatch(&doc, "a"), None);
    }

    #[test]
    fn mismatch_does_not_fail_structure_check() {
        let doc = doc_named(Some("other-name"), BODY);
        assert_eq!(check(&doc), Ok(()));
    }
}
