//! Matchers over JSON values: field types of the wire messages (SPEC §3)
//! and a few shared expectations. Each returns the mismatches it found as
//! lines `field: expected …, got …`, empty when everything matches.

use serde_json::Value;

use crate::packets;

/// The JSON type a field must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A string.
    Str,
    /// An integer: no fraction, no exponent (SPEC §2.6.1).
    Int,
    /// Any number (SPEC §2.6.2).
    Num,
    /// `true` or `false`.
    Bool,
    /// An RFC 3339 string (SPEC §2.5).
    Time,
    /// An array of strings, or `null` (SPEC §2.3.2).
    StrList,
    /// An object, or `null`.
    ObjectOrNull,
    /// An array, or `null`.
    ListOrNull,
}

impl Kind {
    fn describe(self) -> &'static str {
        match self {
            Kind::Str => "a string",
            Kind::Int => "an integer",
            Kind::Num => "a number",
            Kind::Bool => "a boolean",
            Kind::Time => "an RFC 3339 time",
            Kind::StrList => "an array of strings or null",
            Kind::ObjectOrNull => "an object or null",
            Kind::ListOrNull => "an array or null",
        }
    }

    fn matches(self, v: &Value) -> bool {
        match self {
            Kind::Str => v.is_string(),
            Kind::Int => v.is_i64() || v.is_u64(),
            Kind::Num => v.is_number(),
            Kind::Bool => v.is_boolean(),
            Kind::Time => v.as_str().is_some_and(|s| packets::parse_time(s).is_some()),
            Kind::StrList => v.is_null() || v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            Kind::ObjectOrNull => v.is_null() || v.is_object(),
            Kind::ListOrNull => v.is_null() || v.is_array(),
        }
    }
}

/// The fields of a Manifest (SPEC §3.5).
pub const MANIFEST_FIELDS: &[(&str, Kind)] = &[
    ("instance", Kind::Str),
    ("version", Kind::Str),
    ("generatedAt", Kind::Time),
    ("sequenceNum", Kind::Int),
    ("skillCount", Kind::Int),
    ("skillNames", Kind::StrList),
    ("topTags", Kind::StrList),
    ("lastUpdate", Kind::Time),
];

/// The fields of a KnowledgeUpdate (SPEC §3.3).
pub const UPDATE_FIELDS: &[(&str, Kind)] = &[
    ("id", Kind::Str),
    ("peerInstance", Kind::Str),
    ("generatedAt", Kind::Time),
    ("skills", Kind::ListOrNull),
    ("stats", Kind::ObjectOrNull),
    ("sequenceNum", Kind::Int),
];

/// The fields of a SkillPacket (SPEC §3.1); `provenance` is optional and checked apart.
pub const PACKET_FIELDS: &[(&str, Kind)] = &[
    ("id", Kind::Str),
    ("version", Kind::Str),
    ("createdAt", Kind::Time),
    ("originInstance", Kind::Str),
    ("originUserHash", Kind::Str),
    ("originOS", Kind::Str),
    ("originVersion", Kind::Str),
    ("skillName", Kind::Str),
    ("skillDescription", Kind::Str),
    ("skillBody", Kind::Str),
    ("patterns", Kind::StrList),
    ("confidence", Kind::Num),
    ("integrityHash", Kind::Str),
    ("shareable", Kind::Bool),
    ("tags", Kind::StrList),
    ("deprecated", Kind::Bool),
];

/// The fields of a MergeResult (SPEC §3.6); `unchanged` is optional.
pub const RESULT_FIELDS: &[(&str, Kind)] = &[
    ("newSkills", Kind::Int),
    ("updatedSkills", Kind::Int),
    ("rejectedSkills", Kind::Int),
    ("conflicts", Kind::StrList),
];

/// Mismatches of `value` (at `at`) against `fields`: each must be present with its kind.
pub fn fields(value: &Value, at: &str, fields: &[(&str, Kind)]) -> Vec<String> {
    let Some(object) = value.as_object() else {
        return vec![format!("{at}: expected an object, got {}", short(value))];
    };
    let mut out = Vec::new();
    for (name, kind) in fields {
        match object.get(*name) {
            None => out.push(format!("{at}.{name}: missing, expected {}", kind.describe())),
            Some(v) if !kind.matches(v) => {
                out.push(format!("{at}.{name}: expected {}, got {}", kind.describe(), short(v)))
            }
            Some(_) => {}
        }
    }
    out
}

/// Mismatches of a `provenance` object (SPEC §3.2), when present.
pub fn provenance(packet: &Value, at: &str) -> Vec<String> {
    let Some(p) = packet.get("provenance") else { return Vec::new() };
    if p.is_null() {
        return Vec::new();
    }
    let mut out = fields(
        p,
        &format!("{at}.provenance"),
        &[("originConfidence", Kind::Num), ("hops", Kind::Int), ("path", Kind::StrList)],
    );
    if let Some(obj) = p.as_object() {
        if obj.is_empty() {
            out.push(format!("{at}.provenance: an empty object (SPEC §3.2.1: omit it instead)"));
        }
        if let Some(c) = obj.get("originConfidence").and_then(Value::as_f64)
            && !(0.0..=1.0).contains(&c)
        {
            out.push(format!("{at}.provenance.originConfidence: {c} is outside 0..1"));
        }
        if obj.get("hops").and_then(Value::as_i64).is_some_and(|h| h < 1) {
            out.push(format!("{at}.provenance.hops: a re-served skill has been received at least once"));
        }
        if let Some(t) = obj.get("receivedAt")
            && !Kind::Time.matches(t)
        {
            out.push(format!("{at}.provenance.receivedAt: expected an RFC 3339 time, got {}", short(t)));
        }
    }
    out
}

/// A value shown briefly.
pub fn short(v: &Value) -> String {
    crate::target::cut(&v.to_string(), 80)
}

/// A packet shown briefly: its body cut, so the other fields stay readable.
pub fn short_packet(p: &Value) -> String {
    let mut shown = p.clone();
    if let Some(body) = p["skillBody"].as_str() {
        shown["skillBody"] = Value::String(crate::target::cut(body, 60));
    }
    shown.to_string()
}
