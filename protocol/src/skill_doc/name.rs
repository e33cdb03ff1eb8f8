//! The skill-name rule: `skillName` is `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`
//! (`ECP.md` › Messages, `ECPSkillPacket`).
//!
//! A byte check instead of a regex: the rule is five lines of code, reads
//! as the spec, and can say which character failed and where.
//!
//! Why the rule also keeps paths out is documented on [`validate_name`].

use thiserror::Error;

/// Longest valid name, in characters (all ASCII, so also bytes).
pub const MAX_NAME_LEN: usize = 64;

/// Names kept in errors are cut to this many characters, so a hostile
/// megabyte-long name cannot flood a log line.
const NAME_IN_ERROR_LEN: usize = 100;

/// Why a skill name is invalid. Names are shown with `{:?}`, which escapes
/// control and invisible characters.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty.
    #[error("skill name is empty; use 1 to 64 letters, digits, `.`, `_` or `-`")]
    Empty,
    /// The name is longer than [`MAX_NAME_LEN`] characters.
    #[error("skill name {name:?} is {len} characters long; the limit is 64")]
    TooLong {
        /// The name (cut to 100 characters).
        name: String,
        /// Its length in characters.
        len: usize,
    },
    /// The first character is not an ASCII letter or digit.
    #[error("skill name {name:?} starts with {ch:?}; start it with a letter or digit")]
    StartsWithInvalidChar {
        /// The name (cut to 100 characters).
        name: String,
        /// The offending character.
        ch: char,
    },
    /// A later character is not an ASCII letter, digit, `.`, `_` or `-`.
    #[error(
        "skill name {name:?} contains {ch:?} at index {index}; \
         use only letters, digits, `.`, `_` and `-`"
    )]
    ContainsInvalidChar {
        /// The name (cut to 100 characters).
        name: String,
        /// The offending character.
        ch: char,
        /// Its position, counted in characters from 0.
        index: usize,
    },
}

/// Checks a skill name against `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`.
///
/// Nodes store skills under their names, so the rule is also what keeps a
/// name a single, harmless path component:
///
/// - no `/` or `\`, so a name never spans directories, and `../x` or
///   `a/../../b` cannot pass;
/// - the first character is a letter or digit, so `.`, `..`, `.hidden`, `-rf`
///   (an option to a shell command) and `/etc` or `\\server` (absolute paths)
///   cannot pass;
/// - no `:`, so no `C:` drive prefix or NTFS stream; no NUL, space or
///   control character.
///
/// Dots later in the name (`v1.2`, `a..b`) are ordinary characters: `..` is
/// only special as a whole component. The rule does not catch names that
/// differ only by case (`Foo`/`foo`) or Windows device names (`CON`, `nul`);
/// stores on such file systems must handle those themselves.
///
/// Characters are checked before length, so a long name with a `/` in it is
/// reported for the `/`, the more telling problem.
///
/// # Errors
///
/// The first rule the name breaks, as a [`NameError`].
pub fn validate_name(name: &str) -> Result<(), NameError> {
    let mut len = 0;
    for (index, ch) in name.chars().enumerate() {
        len = index + 1;
        if index == 0 && !ch.is_ascii_alphanumeric() {
            return Err(NameError::StartsWithInvalidChar { name: shorten(name), ch });
        }
        if !(ch.is_ascii_alphanumeric() || matches!(ch, '.' | '_' | '-')) {
            return Err(NameError::ContainsInvalidChar { name: shorten(name), ch, index });
        }
    }
    match len {
        0 => Err(NameError::Empty),
        len if len > MAX_NAME_LEN => Err(NameError::TooLong { name: shorten(name), len }),
        _ => Ok(()),
    }
}

fn shorten(name: &str) -> String {
    match name.char_indices().nth(NAME_IN_ERROR_LEN) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_valid_names() {
        for name in ["a", "Z", "0", "git-bisect-regression", "v1.2.3", "a..b", "x.", "a_b-C.9"] {
            assert_eq!(validate_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn accepts_name_of_64_chars() {
        assert_eq!(validate_name(&"a".repeat(64)), Ok(()));
    }

    #[test]
    fn rejects_empty_name() {
        assert_eq!(validate_name(""), Err(NameError::Empty));
    }

    #[test]
    fn rejects_name_of_65_chars() {
        let name = "a".repeat(65);
        assert_eq!(validate_name(&name), Err(NameError::TooLong { name, len: 65 }));
    }

    #[test]
    fn rejects_name_starting_with_dot() {
        for name in [".", "..", ".hidden", "..."] {
            assert_eq!(
                validate_name(name),
                Err(NameError::StartsWithInvalidChar { name: name.into(), ch: '.' }),
                "{name}"
            );
        }
    }

    #[test]
    fn rejects_name_starting_with_dash_or_underscore() {
        assert!(matches!(validate_name("-rf"), Err(NameError::StartsWithInvalidChar { ch: '-', .. })));
        assert!(matches!(validate_name("_x"), Err(NameError::StartsWithInvalidChar { ch: '_', .. })));
    }

    #[test]
    fn rejects_absolute_paths() {
        assert!(matches!(
            validate_name("/etc/passwd"),
            Err(NameError::StartsWithInvalidChar { ch: '/', .. })
        ));
        assert!(matches!(
            validate_name("\\\\server\\share"),
            Err(NameError::StartsWithInvalidChar { ch: '\\', .. })
        ));
        assert_eq!(
            validate_name("C:evil"),
            Err(NameError::ContainsInvalidChar { name: "C:evil".into(), ch: ':', index: 1 })
        );
    }

    #[test]
    fn rejects_name_with_slash() {
        assert_eq!(
            validate_name("a/../../b"),
            Err(NameError::ContainsInvalidChar { name: "a/../../b".into(), ch: '/', index: 1 })
        );
    }

    #[test]
    fn rejects_name_with_backslash() {
        assert!(matches!(
            validate_name("a\\b"),
            Err(NameError::ContainsInvalidChar { ch: '\\', index: 1, .. })
        ));
    }

    #[test]
    fn rejects_name_with_space_nul_or_control() {
        for (name, ch) in [("a b", ' '), ("a\0b", '\0'), ("a\nb", '\n'), ("a\u{202e}b", '\u{202e}')] {
            assert!(
                matches!(validate_name(name), Err(NameError::ContainsInvalidChar { ch: c, index: 1, .. }) if c == ch),
                "{name:?}"
            );
        }
    }

    #[test]
    fn rejects_non_ascii_letters() {
        assert!(matches!(
            validate_name("café"),
            Err(NameError::ContainsInvalidChar { ch: 'é', index: 3, .. })
        ));
        assert!(matches!(validate_name("éa"), Err(NameError::StartsWithInvalidChar { ch: 'é', .. })));
    }

    #[test]
    fn reports_bad_char_before_length() {
        let name = format!("{}/", "a".repeat(100));
        assert!(matches!(
            validate_name(&name),
            Err(NameError::ContainsInvalidChar { ch: '/', index: 100, .. })
        ));
    }

    #[test]
    fn cuts_long_names_in_errors() {
        let Err(NameError::TooLong { name, len }) = validate_name(&"a".repeat(10_000)) else {
            panic!("expected TooLong");
        };
        assert_eq!(len, 10_000);
        assert_eq!(name, format!("{}…", "a".repeat(100)));
    }

    #[test]
    fn error_message_escapes_the_name() {
        let err = validate_name("a\u{1b}[31m").unwrap_err();
        assert_eq!(
            err.to_string(),
            "skill name \"a\\u{1b}[31m\" contains '\\u{1b}' at index 1; \
             use only letters, digits, `.`, `_` and `-`"
        );
    }
}
