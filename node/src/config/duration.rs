//! The one duration parser of the configuration files: `[limits]
//! request_timeout` and `header_read_timeout` in `node.toml`; `interval` and
//! `timeout` in `peers.toml`.
//!
//! A duration is [humantime](humantime::parse_duration) text: numbers with a
//! unit, summed, surrounding spaces ignored. Units: `ns`, `us`, `ms`,
//! `s`/`sec`/`second(s)`, `m`/`min`/`minute(s)`, `h`/`hr`/`hour(s)`,
//! `d`/`day(s)`, `w`/`week(s)`, `M`/`month(s)`, `y`/`year(s)`. So `"200ms"`,
//! `"30s"`, `"1.5s"`, `"5m"`, `"1h 30m"` and `"1h30m"` are accepted; a bare number
//! (`"30"`) is not, and neither is zero — every duration here is a wait or a
//! deadline, and zero would mean "never" or "at once".

use std::time::Duration;

/// Why a duration was refused. The key it belongs to is named by the caller.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DurationError {
    /// Not a duration.
    #[error("{text:?}: {reason}; write e.g. \"30s\", \"5m\" or \"200ms\"")]
    Invalid {
        /// The text as written.
        text: String,
        /// What humantime found wrong.
        reason: humantime::DurationError,
    },
    /// A duration of zero.
    #[error("must be longer than zero")]
    Zero,
}

/// Parses a duration as the module doc describes.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    match humantime::parse_duration(text.trim()) {
        Ok(d) if d.is_zero() => Err(DurationError::Zero),
        Ok(d) => Ok(d),
        Err(reason) => Err(DurationError::Invalid { text: text.to_owned(), reason }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_every_spelling_the_docs_and_tests_use() {
        let ms = Duration::from_millis;
        let s = Duration::from_secs;
        for (text, expected) in [
            ("200ms", ms(200)),
            ("1s", s(1)),
            ("2s", s(2)),
            ("5s", s(5)),
            ("10s", s(10)),
            ("30s", s(30)),
            ("1m", s(60)),
            ("5m", s(300)),
            ("1h", s(3600)),
            ("1h 30m", s(5400)),
            ("1h30m", s(5400)),
            ("2min", s(120)),
            ("1 day", s(86_400)),
            (" 30s ", s(30)),
            ("1500us", ms(1) + Duration::from_micros(500)),
            ("1.5s", ms(1500)),
        ] {
            assert_eq!(parse(text), Ok(expected), "{text:?}");
        }
    }

    #[test]
    fn refuses_zero_bare_numbers_and_words_with_an_example() {
        assert_eq!(parse("0s"), Err(DurationError::Zero));
        assert_eq!(parse("0ms").unwrap_err().to_string(), "must be longer than zero");
        for text in ["30", "soon", "", "5 parsecs", "-1s"] {
            let err = parse(text).expect_err(text).to_string();
            assert!(err.starts_with(&format!("{text:?}: ")) && err.ends_with("\"200ms\""), "{err}");
        }
    }
}
