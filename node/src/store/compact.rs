//! The compact stored forms of hashes and times (#18 item 2, migration 23):
//! an `integrityHash` of 64 lowercase hex digits is kept as its 32 bytes, a
//! time as Unix nanoseconds — 33 and 9 bytes where their text took 65 and
//! about 31. Whatever has no such form (a hash that is not 64 lowercase hex
//! digits, a time before 1970 or after 2262, such as Go's zero time) stays
//! text, so every value round-trips exactly.
//!
//! The tables keep their text under the old column names as *virtual*
//! generated columns ([`hash_text`], [`time_text`]: plain SQL, no function
//! of this node's, so any SQLite reads them), which cost no bytes and let
//! every query that reads or compares them stay as it was. Writers store
//! [`hash`] and [`time`]; the migration converts with the SQL functions
//! [`register`] adds.

use ecp_protocol::Timestamp;
use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::{Value, ValueRef};

use super::StoreError;

/// The SQL of a virtual column showing the hash stored in `$col` as text:
/// lowercase hex of a BLOB, a TEXT as it is.
macro_rules! hash_text {
    ($col:literal) => {
        concat!("CASE WHEN typeof(", $col, ") = 'blob' THEN lower(hex(", $col, ")) ELSE ", $col, " END")
    };
}
pub(super) use hash_text;

/// The SQL of a virtual column showing the time stored in `$col` as the
/// wire's text ([`Timestamp`]'s `Display`: RFC 3339 in UTC, the fraction's
/// trailing zeros trimmed): from Unix nanoseconds (an INTEGER), or a TEXT
/// as it is.
macro_rules! time_text {
    ($col:literal) => {
        concat!(
            "CASE WHEN typeof(",
            $col,
            ") = 'integer' THEN strftime('%Y-%m-%dT%H:%M:%S', ",
            $col,
            " / 1000000000, 'unixepoch') || CASE WHEN ",
            $col,
            " % 1000000000 = 0 THEN '' ELSE '.' || rtrim(printf('%09d', ",
            $col,
            " % 1000000000), '0') END || 'Z' ELSE ",
            $col,
            " END"
        )
    };
}
pub(super) use time_text;

/// The stored form of a hash: 32 bytes for 64 lowercase hex digits, else the text.
pub(super) fn hash(text: &str) -> Value {
    let bytes = text.as_bytes();
    if bytes.len() != 64 || !bytes.iter().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b)) {
        return Value::Text(text.to_owned());
    }
    let nibble = |b: u8| if b.is_ascii_digit() { b - b'0' } else { b - b'a' + 10 };
    Value::Blob(bytes.chunks_exact(2).map(|pair| nibble(pair[0]) << 4 | nibble(pair[1])).collect())
}

/// The stored form of a time: Unix nanoseconds from 1970 to 2262, else its text.
pub(super) fn time(at: Timestamp) -> Value {
    match at.as_datetime().timestamp_nanos_opt() {
        Some(nanos) if nanos >= 0 => Value::Integer(nanos),
        _ => Value::Text(at.to_string()),
    }
}

/// The stored form of a time held as text: [`time`] of it when the text is
/// exactly what its instant displays as (so the virtual column gives it
/// back byte for byte), else the text unchanged.
fn time_of_text(text: &str) -> Value {
    match Timestamp::parse(text) {
        Ok(at) if at.to_string() == text => time(at),
        _ => Value::Text(text.to_owned()),
    }
}

/// Makes `ecp_hash(text)` and `ecp_time(text)` callable from SQL: the
/// migration that converts the hashes and times stored before
/// ([`super::schema`]). Anything but text is left as it is.
pub(super) fn register(conn: &Connection) -> Result<(), StoreError> {
    let flags = FunctionFlags::SQLITE_DETERMINISTIC | FunctionFlags::SQLITE_UTF8;
    conn.create_scalar_function("ecp_hash", 1, flags, |ctx| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Text(text) => hash(&String::from_utf8_lossy(text)),
            other => owned(other),
        })
    })?;
    conn.create_scalar_function("ecp_time", 1, flags, |ctx| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Text(text) => time_of_text(&String::from_utf8_lossy(text)),
            other => owned(other),
        })
    })?;
    Ok(())
}

/// A value SQL gave, as it is.
fn owned(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Integer(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// What SQLite's virtual columns show for `hash` and `time` values
    /// (NULL for a NULL).
    fn shown(conn: &Connection, hash: Value, time: Value) -> (Option<String>, Option<String>) {
        conn.query_row(
            concat!("SELECT ", hash_text!("?1"), ", ", time_text!("?2")),
            rusqlite::params![hash, time],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    }

    proptest! {
        #[test]
        fn a_time_reads_back_as_its_wire_text(seconds in -62_135_596_800i64..253_402_300_799, nanos in 0u32..1_000_000_000, trim in 0u32..10) {
            // Fractions with 0 to 9 digits, as the wire carries them.
            let nanos = nanos / 10u32.pow(trim) * 10u32.pow(trim);
            let at = Timestamp::from_unix(seconds, nanos).unwrap();
            let conn = Connection::open_in_memory().unwrap();
            let stored = time(at);
            let fits = seconds >= 0 && i128::from(seconds) * 1_000_000_000 + i128::from(nanos) <= i128::from(i64::MAX);
            prop_assert_eq!(matches!(stored, Value::Integer(_)), fits);
            let (_, text) = shown(&conn, Value::Null, stored);
            prop_assert_eq!(text, Some(at.to_string()));
            prop_assert_eq!(time_of_text(&at.to_string()), time(at));
        }

        #[test]
        fn a_hash_reads_back_as_its_text(bytes in proptest::collection::vec(any::<u8>(), 32)) {
            let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let conn = Connection::open_in_memory().unwrap();
            prop_assert_eq!(hash(&text), Value::Blob(bytes));
            prop_assert_eq!(shown(&conn, hash(&text), Value::Null).0, Some(text));
        }
    }

    #[test]
    fn what_has_no_compact_form_stays_text() {
        let conn = Connection::open_in_memory().unwrap();
        let upper = "A".repeat(64);
        for odd in ["", "h", &"a".repeat(63), &"a".repeat(65), &upper, &format!("{}g", "a".repeat(63))] {
            assert_eq!(hash(odd), Value::Text(odd.to_owned()), "{odd}");
            assert_eq!(shown(&conn, hash(odd), Value::Null).0.as_deref(), Some(odd));
        }
        // Go's zero time is before 1970; a text that is not canonical keeps its own spelling.
        for odd in ["0001-01-01T00:00:00Z", "2026-11-26T10:00:00.500Z0", "2026-11-26T10:00:00+02:00", "t"] {
            let stored = time_of_text(odd);
            assert_eq!(stored, Value::Text(odd.to_owned()), "{odd}");
            assert_eq!(shown(&conn, Value::Null, stored).1.as_deref(), Some(odd));
        }
        assert_eq!(time_of_text("2026-11-26T10:00:00.5Z"), Value::Integer(1_795_687_200_500_000_000));
        // The last nanosecond an i64 holds, and the first it does not.
        let last = Timestamp::parse("2262-04-11T23:47:16.854775807Z").unwrap();
        assert_eq!(time(last), Value::Integer(i64::MAX));
        let past = Timestamp::parse("2262-04-11T23:47:16.854775808Z").unwrap();
        assert_eq!(time(past), Value::Text(past.to_string()));
        assert_eq!(time(Timestamp::from_unix(0, 0).unwrap()), Value::Integer(0));
        let before = Timestamp::from_unix(-1, 999_999_999).unwrap();
        assert_eq!(time(before), Value::Text("1969-12-31T23:59:59.999999999Z".into()));
    }

    #[test]
    fn the_sql_functions_convert_text_and_leave_the_rest() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let hex = "0f".repeat(32);
        let (h, t, n): (Vec<u8>, i64, Option<i64>) = conn
            .query_row(
                "SELECT ecp_hash(?1), ecp_time('1970-01-01T00:00:01.25Z'), ecp_time(NULL)",
                [&hex],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!((h, t, n), (vec![0x0f; 32], 1_250_000_000, None));
        let kept: (String, i64) =
            conn.query_row("SELECT ecp_hash('h'), ecp_time(7)", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!(kept, ("h".to_owned(), 7));
    }
}
