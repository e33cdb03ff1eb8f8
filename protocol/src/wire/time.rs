//! [`Timestamp`]: an RFC 3339 instant as Go's `time.Time` puts it on the wire.

use std::fmt;
use std::ops::RangeInclusive;

use chrono::{DateTime, Datelike, NaiveDate, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::TimeError;

/// The years an RFC 3339 time can spell: four digits. An instant outside them
/// (in UTC) has no wire form, so [`Timestamp::parse`] and
/// [`Timestamp::from_unix`] refuse it rather than let a node store a time it
/// could never send back.
const WIRE_YEARS: RangeInclusive<i32> = 0..=9999;

/// Go's zero time, built once at compile time: every packet decoded starts
/// from a default that holds it.
const GO_ZERO: Timestamp = Timestamp(
    NaiveDate::from_ymd_opt(1, 1, 1)
        .expect("0001-01-01 is a valid date")
        .and_hms_opt(0, 0, 0)
        .expect("00:00:00 is a valid time")
        .and_utc(),
);

/// An instant in UTC, encoded as RFC 3339 with nanoseconds and trailing zeros
/// trimmed — the form Go's `time.Time` marshals to (`RFC3339Nano`).
///
/// The default value is Go's zero time, `0001-01-01T00:00:00Z`, which is what
/// a Go peer sends for a time it never set; `null` decodes to it as well.
/// Offsets other than `Z` are accepted and normalised to UTC, provided the
/// instant stays within the years 0000 to 9999 in UTC.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

impl Timestamp {
    /// Go's zero `time.Time`.
    pub fn go_zero() -> Self {
        GO_ZERO
    }

    /// Wraps a chrono instant.
    pub fn from_datetime(at: DateTime<Utc>) -> Self {
        Timestamp(at)
    }

    /// The instant as a chrono value.
    pub fn as_datetime(&self) -> DateTime<Utc> {
        self.0
    }

    /// Seconds since the Unix epoch (negative before 1970).
    pub fn unix_seconds(&self) -> i64 {
        self.0.timestamp()
    }

    /// Builds a timestamp from Unix seconds and nanoseconds; `None` when out
    /// of range (outside the years 0000 to 9999).
    pub fn from_unix(seconds: i64, nanos: u32) -> Option<Self> {
        DateTime::from_timestamp(seconds, nanos).filter(|t| WIRE_YEARS.contains(&t.year())).map(Timestamp)
    }

    /// Whether this is Go's zero time, i.e. "never set".
    pub fn is_go_zero(&self) -> bool {
        *self == Self::go_zero()
    }

    /// Parses an RFC 3339 string.
    ///
    /// # Errors
    ///
    /// [`TimeError::Syntax`] for a text that is not RFC 3339, and
    /// [`TimeError::YearOutOfRange`] when its offset moves the instant out of
    /// the years 0000 to 9999 in UTC: its canonical form would not be RFC 3339,
    /// so every re-encoding of a message holding it would fail to decode.
    pub fn parse(text: &str) -> Result<Self, TimeError> {
        let at = DateTime::parse_from_rfc3339(text)?.with_timezone(&Utc);
        if !WIRE_YEARS.contains(&at.year()) {
            return Err(TimeError::YearOutOfRange { year: at.year() });
        }
        Ok(Timestamp(at))
    }
}

impl Default for Timestamp {
    fn default() -> Self {
        Self::go_zero()
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(at: DateTime<Utc>) -> Self {
        Timestamp(at)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // AutoSi prints 0, 3, 6 or 9 fraction digits; Go trims every trailing
        // zero, so trim the rest to match it byte for byte.
        let text = self.0.to_rfc3339_opts(SecondsFormat::AutoSi, true);
        match text.split_once('.') {
            Some((whole, fraction)) => {
                let digits = fraction.trim_end_matches('Z').trim_end_matches('0');
                write!(f, "{whole}.{digits}Z")
            }
            None => f.write_str(&text),
        }
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text: Option<std::borrow::Cow<'de, str>> = Option::deserialize(deserializer)?;
        match text {
            None => Ok(Timestamp::go_zero()),
            Some(text) => Timestamp::parse(&text)
                .map_err(|e| serde::de::Error::custom(format_args!("time {text:?} is not RFC 3339: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_time_round_trips_as_go_writes_it() {
        let zero: Timestamp = serde_json::from_str("\"0001-01-01T00:00:00Z\"").unwrap();
        assert!(zero.is_go_zero());
        assert_eq!(serde_json::to_string(&zero).unwrap(), "\"0001-01-01T00:00:00Z\"");
    }

    #[test]
    fn null_decodes_to_zero_time() {
        let t: Timestamp = serde_json::from_str("null").unwrap();
        assert!(t.is_go_zero());
    }

    #[test]
    fn nanoseconds_are_kept_and_trailing_zeros_trimmed_like_go() {
        let t = Timestamp::parse("2026-11-22T07:58:02.71999807Z").unwrap();
        assert_eq!(t.as_datetime().timestamp_subsec_nanos(), 719_998_070);
        assert_eq!(t.to_string(), "2026-11-22T07:58:02.71999807Z");
        let whole = Timestamp::parse("2026-11-20T10:00:05Z").unwrap();
        assert_eq!(whole.to_string(), "2026-11-20T10:00:05Z");
        let millis = Timestamp::parse("2026-11-20T10:00:05.500Z").unwrap();
        assert_eq!(millis.to_string(), "2026-11-20T10:00:05.5Z");
    }

    #[test]
    fn offsets_are_normalised_to_utc() {
        let t = Timestamp::parse("2026-11-20T12:00:05+02:00").unwrap();
        assert_eq!(t.to_string(), "2026-11-20T10:00:05Z");
    }

    #[test]
    fn refuses_offsets_that_leave_the_years_of_rfc3339() {
        // Caught by the wire round-trip check of the update_merge fuzz target: these decoded,
        // but re-encoded as "-0001-12-31T23:59:00Z" and "+10000-01-01T23:58:59Z", which
        // nothing decodes, so a node holding one could no longer serve its skills.
        assert_eq!(
            Timestamp::parse("0000-01-01T00:00:00+00:01"),
            Err(TimeError::YearOutOfRange { year: -1 })
        );
        assert_eq!(
            Timestamp::parse("9999-12-31T23:59:59-23:59"),
            Err(TimeError::YearOutOfRange { year: 10_000 })
        );
        let err = serde_json::from_str::<Timestamp>("\"0000-01-01T00:00:00+00:01\"").unwrap_err();
        assert!(err.to_string().contains("outside 0000 to 9999"), "{err}");
        // The edges themselves are fine and round-trip.
        for text in ["0000-01-01T00:00:00Z", "0000-01-01T00:01:00+00:01", "9999-12-31T23:59:59.999999999Z"] {
            let t = Timestamp::parse(text).unwrap();
            assert_eq!(Timestamp::parse(&t.to_string()), Ok(t), "{text}");
        }
    }

    #[test]
    fn from_unix_stays_within_the_years_of_rfc3339() {
        let last = Timestamp::parse("9999-12-31T23:59:59Z").unwrap().unix_seconds();
        assert!(Timestamp::from_unix(last, 999_999_999).is_some());
        assert_eq!(Timestamp::from_unix(last + 1, 0), None);
        let first = Timestamp::parse("0000-01-01T00:00:00Z").unwrap().unix_seconds();
        assert!(Timestamp::from_unix(first, 0).is_some());
        assert_eq!(Timestamp::from_unix(first - 1, 0), None);
    }

    #[test]
    fn rejects_text_that_is_not_rfc3339() {
        assert!(serde_json::from_str::<Timestamp>("\"yesterday\"").is_err());
        assert!(serde_json::from_str::<Timestamp>("12").is_err());
    }
}
