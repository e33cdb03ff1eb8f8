//! A fast decoder for one packet of the plain shape peers send: an object of
//! known fields, each at most once, keys written without escapes, each value
//! of its field's type. For anything else it answers `None`, and the caller
//! decodes with serde_json, which is the reference: where this decoder
//! answers, serde_json gives the same packet (its tests check it).
//!
//! Why: serde_json reads a string into a scratch buffer that grows by
//! doubling, stops at every escape (a skill body has a `\n` every line), and
//! then copies the buffer into a new `String`. Here a string's closing quote
//! is found first with `memchr`, its `String` is allocated once at that size,
//! and the text between escapes is copied in whole.
//!
//! Values that are rare or small in a packet (numbers, `provenance`,
//! `files`, `originSignature`, `outcomes`, fields we do not know) are measured here and handed to serde_json on their own,
//! so they are read exactly as it reads them.

use memchr::memchr2;
use serde::de::IgnoredAny;

use super::split::{Scanner, string_end, value_end};
use crate::wire::{BundleFile, OriginSignature, Provenance, SkillPacket, Timestamp};

/// A JSON text to read packets from, with what is known of it as a whole.
pub(super) struct Source<'a> {
    text: &'a str,
    /// Whether any byte is below U+0020. When none is, no string can hold a
    /// raw control character, and strings are not checked one by one.
    controls: bool,
}

impl<'a> Source<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        // A reduction without early exit, so it compiles to vector code.
        let controls = text.bytes().fold(u8::MAX, u8::min) < 0x20;
        Source { text, controls }
    }
}

/// The packet whose object starts at `start` in `source`, and the position
/// just after it; `None` when it is not of the plain shape or not valid (the
/// caller then asks serde_json).
pub(super) fn decode_at(source: &Source<'_>, start: usize) -> Option<(SkillPacket, usize)> {
    let text = source.text;
    let mut p = Parser { text, at: Scanner { doc: text.as_bytes(), pos: start }, controls: source.controls };
    let mut packet = SkillPacket::default();
    let mut seen = 0u32;
    p.at.expect(b'{')?;
    p.at.skip_ws();
    if p.at.peek()? == b'}' {
        p.at.pos += 1;
    } else {
        loop {
            let field = Field::of(p.key()?);
            p.at.skip_ws();
            p.at.expect(b':')?;
            p.at.skip_ws();
            if let Some(field) = field {
                // serde_json refuses a repeated field.
                let bit = 1u32 << field as u32;
                if seen & bit != 0 {
                    return None;
                }
                seen |= bit;
            }
            match field {
                Some(Field::Id) => packet.id = p.string_or_null()?,
                Some(Field::Version) => packet.version = p.string_or_null()?,
                Some(Field::CreatedAt) => packet.created_at = p.time()?,
                Some(Field::OriginInstance) => packet.origin_instance = p.string_or_null()?,
                Some(Field::OriginUserHash) => packet.origin_user_hash = p.string_or_null()?,
                Some(Field::OriginOs) => packet.origin_os = p.string_or_null()?,
                Some(Field::OriginVersion) => packet.origin_version = p.string_or_null()?,
                Some(Field::SkillName) => packet.skill_name = p.string_or_null()?,
                Some(Field::SkillDescription) => packet.skill_description = p.string_or_null()?,
                Some(Field::SkillBody) => packet.skill_body = p.string_or_null()?,
                Some(Field::Patterns) => packet.patterns = p.strings()?,
                Some(Field::Confidence) => packet.confidence = p.number()?,
                Some(Field::IntegrityHash) => packet.integrity_hash = p.string_or_null()?,
                Some(Field::Shareable) => packet.shareable = p.boolean()?,
                Some(Field::Tags) => packet.tags = p.strings()?,
                Some(Field::Deprecated) => packet.deprecated = p.boolean()?,
                Some(Field::Provenance) => packet.provenance = p.provenance()?,
                Some(Field::BundleDigest) => packet.bundle_digest = p.string_or_null()?,
                Some(Field::Files) => packet.files = p.files()?,
                Some(Field::OriginSignature) => packet.origin_signature = p.origin_signature()?,
                Some(Field::Outcomes) => packet.outcomes = p.array_by_serde()?,
                None => p.ignored()?,
            }
            p.at.skip_ws();
            match p.at.next()? {
                b',' => p.at.skip_ws(),
                b'}' => break,
                _ => return None,
            }
        }
    }
    Some((packet, p.at.pos))
}

/// The fields of a packet, as the wire spells them.
#[derive(Clone, Copy)]
enum Field {
    Id,
    Version,
    CreatedAt,
    OriginInstance,
    OriginUserHash,
    OriginOs,
    OriginVersion,
    SkillName,
    SkillDescription,
    SkillBody,
    Patterns,
    Confidence,
    IntegrityHash,
    Shareable,
    Tags,
    Deprecated,
    Provenance,
    BundleDigest,
    Files,
    OriginSignature,
    Outcomes,
}

impl Field {
    fn of(key: &[u8]) -> Option<Field> {
        Some(match key {
            b"id" => Field::Id,
            b"version" => Field::Version,
            b"createdAt" => Field::CreatedAt,
            b"originInstance" => Field::OriginInstance,
            b"originUserHash" => Field::OriginUserHash,
            b"originOS" => Field::OriginOs,
            b"originVersion" => Field::OriginVersion,
            b"skillName" => Field::SkillName,
            b"skillDescription" => Field::SkillDescription,
            b"skillBody" => Field::SkillBody,
            b"patterns" => Field::Patterns,
            b"confidence" => Field::Confidence,
            b"integrityHash" => Field::IntegrityHash,
            b"shareable" => Field::Shareable,
            b"tags" => Field::Tags,
            b"deprecated" => Field::Deprecated,
            b"provenance" => Field::Provenance,
            b"bundleDigest" => Field::BundleDigest,
            b"files" => Field::Files,
            b"originSignature" => Field::OriginSignature,
            b"outcomes" => Field::Outcomes,
            _ => return None,
        })
    }
}

/// Whether `bytes` holds a byte JSON forbids raw in a string (U+0000 to U+001F).
/// Written as a reduction without early exit, so it compiles to vector code.
fn has_control(bytes: &[u8]) -> bool {
    bytes.iter().fold(false, |found, &b| found | (b < 0x20))
}

/// The position of the first `"` or `\` at or after `from`.
fn quote_or_backslash(bytes: &[u8], from: usize) -> Option<usize> {
    memchr2(b'"', b'\\', bytes.get(from..)?).map(|i| from + i)
}

/// A position in the packet's text.
struct Parser<'a> {
    text: &'a str,
    /// The position, and the steps shared with the splitter.
    at: Scanner<'a>,
    /// See [`Source::controls`].
    controls: bool,
}

impl<'a> Parser<'a> {
    /// [`has_control`], when the text may hold control bytes at all.
    fn has_control(&self, bytes: &[u8]) -> bool {
        self.controls && has_control(bytes)
    }

    /// Moves past `word` if the text continues with it.
    fn literal(&mut self, word: &[u8]) -> bool {
        let found = self.at.doc[self.at.pos..].starts_with(word);
        if found {
            self.at.pos += word.len();
        }
        found
    }

    /// A key without escapes (a key with one is left to serde_json).
    fn key(&mut self) -> Option<&'a [u8]> {
        self.at.key().filter(|key| !self.has_control(key))
    }

    /// A string, or `null` for the empty string (how Go sends an unset one).
    fn string_or_null(&mut self) -> Option<String> {
        if self.literal(b"null") { Some(String::new()) } else { self.string() }
    }

    /// A string value: only the escapes JSON defines, no raw control bytes,
    /// no surrogate escapes (pairs and their errors are serde_json's).
    fn string(&mut self) -> Option<String> {
        self.at.expect(b'"')?;
        let start = self.at.pos;
        let mut at = quote_or_backslash(self.at.doc, start)?;
        if self.at.doc[at] == b'"' {
            let text = &self.text[start..at];
            self.at.pos = at + 1;
            return (!self.has_control(text.as_bytes())).then(|| text.to_owned());
        }
        // Escapes only shorten the text, so its raw length is room enough.
        let end = string_end(self.at.doc, start)?;
        let mut out = String::with_capacity(end - 1 - start);
        let mut from = start;
        loop {
            let run = &self.text[from..at];
            if self.has_control(run.as_bytes()) {
                return None;
            }
            out.push_str(run);
            if self.at.doc[at] == b'"' {
                self.at.pos = at + 1;
                return Some(out);
            }
            from = at + 2;
            match *self.at.doc.get(at + 1)? {
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'/' => out.push('/'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    let hex = self.at.doc.get(at + 2..at + 6)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    let code =
                        hex.iter().fold(0u32, |code, &h| code * 16 + (h as char).to_digit(16).unwrap_or(0));
                    // `None` for a surrogate.
                    out.push(char::from_u32(code)?);
                    from = at + 6;
                }
                _ => return None,
            }
            at = quote_or_backslash(self.at.doc, from)?;
        }
    }

    /// A list of strings, or `null` for none.
    fn strings(&mut self) -> Option<Vec<String>> {
        let mut out = Vec::new();
        if self.literal(b"null") {
            return Some(out);
        }
        self.at.expect(b'[')?;
        self.at.skip_ws();
        if self.at.peek()? == b']' {
            self.at.pos += 1;
            return Some(out);
        }
        loop {
            out.push(self.string()?);
            self.at.skip_ws();
            match self.at.next()? {
                b',' => self.at.skip_ws(),
                b']' => return Some(out),
                _ => return None,
            }
        }
    }

    /// A time, or `null` for Go's zero time.
    fn time(&mut self) -> Option<Timestamp> {
        if self.literal(b"null") {
            return Some(Timestamp::go_zero());
        }
        // A time is written without escapes: read it where it is.
        match self.unescaped_string() {
            Some(text) => Timestamp::parse(text).ok(),
            None => Timestamp::parse(&self.string()?).ok(),
        }
    }

    /// A string without escapes or control bytes, borrowed from the text;
    /// `None`, with nothing read, for any other value.
    fn unescaped_string(&mut self) -> Option<&'a str> {
        if self.at.peek()? != b'"' {
            return None;
        }
        let start = self.at.pos + 1;
        let end = quote_or_backslash(self.at.doc, start)?;
        let text = &self.text[start..end];
        if self.at.doc[end] != b'"' || self.has_control(text.as_bytes()) {
            return None;
        }
        self.at.pos = end + 1;
        Some(text)
    }

    fn boolean(&mut self) -> Option<bool> {
        if self.literal(b"true") {
            Some(true)
        } else if self.literal(b"false") {
            Some(false)
        } else {
            None
        }
    }

    /// A number, read by serde_json itself (its grammar, rounding and range).
    fn number(&mut self) -> Option<f64> {
        let start = self.at.pos;
        let len = self.at.doc[start..]
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(self.at.doc.len() - start);
        self.at.pos += len;
        serde_json::from_str(self.text.get(start..self.at.pos)?).ok()
    }

    /// `provenance`: `null`, or an object read by serde_json.
    fn provenance(&mut self) -> Option<Option<Provenance>> {
        if self.literal(b"null") {
            return Some(None);
        }
        if self.at.peek()? != b'{' {
            return None;
        }
        self.value_by_serde::<Provenance>().map(Some)
    }

    /// `originSignature`: `null`, or an object read by serde_json.
    fn origin_signature(&mut self) -> Option<Option<OriginSignature>> {
        if self.literal(b"null") {
            return Some(None);
        }
        if self.at.peek()? != b'{' {
            return None;
        }
        self.value_by_serde::<OriginSignature>().map(Some)
    }

    /// `files`: `null`, or an array read by serde_json (rare, and small
    /// beside a body).
    fn files(&mut self) -> Option<Vec<BundleFile>> {
        self.array_by_serde()
    }

    /// An array of small objects (`files`, `outcomes`): `null`, or read by serde_json.
    fn array_by_serde<T: serde::de::DeserializeOwned>(&mut self) -> Option<Vec<T>> {
        if self.literal(b"null") {
            return Some(Vec::new());
        }
        if self.at.peek()? != b'[' {
            return None;
        }
        self.value_by_serde::<Vec<T>>()
    }

    /// The value of a field we do not know: checked by serde_json as it checks one, then dropped.
    fn ignored(&mut self) -> Option<()> {
        self.value_by_serde::<IgnoredAny>().map(|_| ())
    }

    fn value_by_serde<T: serde::de::DeserializeOwned>(&mut self) -> Option<T> {
        let start = self.at.pos;
        self.at.pos = value_end(self.at.doc, start)?;
        serde_json::from_str(self.text.get(start..self.at.pos)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::packet::Origin;
    use crate::wire::fast::json_strategies;

    /// The packet `text` holds, with nothing but whitespace after it.
    fn decode(text: &str) -> Option<SkillPacket> {
        let (packet, end) = decode_at(&Source::new(text), 0)?;
        text[end..].trim_matches([' ', '\t', '\n', '\r']).is_empty().then_some(packet)
    }

    /// Where the fast decoder answers, serde_json gives the same packet.
    fn agrees_with_serde(text: &str) -> bool {
        let Some(fast) = decode(text) else {
            return false;
        };
        assert_eq!(serde_json::from_str::<SkillPacket>(text).ok(), Some(fast), "{text}");
        true
    }

    fn packet(body: &str) -> SkillPacket {
        let origin = Origin::new("node-a", "user", "linux/amd64", "1.0.0");
        let at = Timestamp::parse("2026-11-20T10:00:00.25Z").expect("RFC 3339");
        SkillPacket::new(&origin, "a-skill", "Says \"hi\"", body, 0.9, at).with_tags(["x", "y"])
    }

    #[test]
    fn decodes_what_serde_json_writes() {
        let mut traveled =
            packet("---\nname: a-skill\n---\n\tTabs, \"quotes\", \\ and \u{1} or \u{7f} é 🦀\r\n");
        traveled.provenance = Some(Provenance {
            origin_confidence: Some(1.0),
            hops: 2,
            path: vec!["a".into(), "b".into()],
            received_from: "b".into(),
            received_at: Some(Timestamp::go_zero()),
            origin_unverified: true,
            ..Provenance::default()
        });
        let mut bundle = packet("---\nname: a-skill\n---\nbody");
        bundle.bundle_digest = "sha256:00".into();
        bundle.files =
            vec![BundleFile { path: "a/b.py".into(), size: 7, mode: "0755".into(), sha256: "ff".into() }];
        let mut evidenced = packet("---\nname: a-skill\n---\nbody");
        evidenced.outcomes = vec![crate::wire::OutcomeClaim {
            observer: "b".into(),
            uses: 3,
            successes: 2,
            failures: 1,
            streak: 0,
            at: Timestamp::parse("2026-11-20T11:00:00Z").expect("RFC 3339"),
        }];
        for p in [packet("plain"), packet(""), traveled, bundle, evidenced, SkillPacket::default()] {
            let text = serde_json::to_string(&p).expect("encodes");
            assert_eq!(decode(&text), Some(p), "{text}");
        }
    }

    #[test]
    fn reads_nulls_unknown_fields_and_whitespace_as_serde_does() {
        for text in [
            "{}",
            "{ } ",
            r#"{"id":null,"tags":null,"createdAt":null,"provenance":null,"patterns":[]}"#,
            r#"{"files":null,"bundleDigest":null}"#,
            r#"{"outcomes":null}"#,
            r#"{"outcomes":[{"observer":"a","uses":1,"failures":1,"at":null,"x":2}]}"#,
            r#"{"files":[{"path":"x","mode":null,"extra":1}],"bundleDigest":"sha256:1"}"#,
            r#"{ "skillName" : "a" , "x" : [1, {"y": "\"}"}], "confidence": 1e-1 }"#,
            r#"{"skillBody":"\u00e9\u0000\/\b\f\n\r\t\\\"","confidence":-0}"#,
        ] {
            assert!(agrees_with_serde(text), "{text}");
        }
    }

    #[test]
    fn leaves_the_unusual_to_serde() {
        for text in [
            r#"{"sk\u0069llName":"a"}"#,
            r#"{"skillName":"a","skillName":"b"}"#,
            r#"{"skillBody":"\ud83e\udd80"}"#,
            r#"{"skillBody":"\ud800"}"#,
            "{\"skillBody\":\"\u{1}\"}",
            "{\"x\u{1}\":1}",
            r#"{"skillBody":"\u+0a1"}"#,
            r#"{"skillBody":"\x"}"#,
            r#"["id"]"#,
            r#"{"confidence":"0.5"}"#,
            r#"{"confidence":1e400}"#,
            r#"{"tags":[null]}"#,
            r#"{"deprecated":truex}"#,
            r#"{"createdAt":"yesterday"}"#,
            r#"{"provenance":{"hops":-1}}"#,
            r#"{"provenance":[]}"#,
            r#"{"files":{}}"#,
            r#"{"files":[{"size":"1"}]}"#,
            r#"{"outcomes":[{"uses":-1}]}"#,
            r#"{"outcomes":{}}"#,
            r#"{"bundleDigest":1}"#,
            r#"{"skillName":"a",}"#,
            r#"{"skillName":"a"} x"#,
            r#"{"skillName":"a""#,
        ] {
            assert_eq!(decode(text), None, "{text}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

        /// Generated packets, good and bad: never a different answer than serde_json's.
        #[test]
        fn never_disagrees_with_serde(text in json_strategies::packet()) {
            agrees_with_serde(&text);
        }

        /// Any packet serde_json writes, the fast decoder reads back.
        #[test]
        fn reads_back_any_packet(
            strings in prop::collection::vec(any::<String>(), 4),
            tags in prop::collection::vec(any::<String>(), 0..3),
            confidence in -1e300f64..1e300,
            seconds in 0i64..253_402_300_799,
            nanos in 0u32..1_000_000_000,
            flags in any::<(bool, bool)>(),
        ) {
            let mut p = packet(&strings[0]);
            p.skill_name = strings[1].clone();
            p.skill_description = strings[2].clone();
            p.origin_os = strings[3].clone();
            p.tags = tags;
            p.confidence = confidence;
            p.created_at = Timestamp::from_unix(seconds, nanos).expect("in range");
            (p.shareable, p.deprecated) = flags;
            let text = serde_json::to_string(&p).expect("encodes");
            prop_assert_eq!(decode(&text), Some(p));
        }
    }
}
