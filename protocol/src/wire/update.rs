//! `ECPKnowledgeUpdate`: a batch of packets with the sender's statistics.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::DecodeError;

use super::{SkillPacket, Timestamp, fast, null_as_default};

/// A batch of skills from one peer (`ECPKnowledgeUpdate`): the body of
/// `POST /ecp/skills` and the answer to `GET /ecp/skills`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct KnowledgeUpdate {
    /// Update id, free-form.
    #[serde(deserialize_with = "null_as_default")]
    pub id: String,
    /// The instance that sent the update.
    #[serde(deserialize_with = "null_as_default")]
    pub peer_instance: String,
    /// When the update was generated.
    pub generated_at: Timestamp,
    /// The packets, in the sender's order.
    #[serde(deserialize_with = "null_as_default")]
    pub skills: Vec<SkillPacket>,
    /// The sender's statistics; informational only.
    #[serde(deserialize_with = "null_as_default")]
    pub stats: PeerStats,
    /// The sender's change counter. The Go implementation always sends 0; our
    /// nodes send the sequence number of their newest change.
    pub sequence_num: i64,
    /// ECP/1.3 (`SPEC.md` §14): versions their origins revoked, which the
    /// sender holds. Omitted when empty; a node that does not know it (a Go
    /// node) ignores it.
    #[serde(deserialize_with = "null_as_default", skip_serializing_if = "Vec::is_empty")]
    pub revocations: Vec<crate::revocation::Revocation>,
}

/// A sender's statistics (`stats` of an update). Informational: nothing in
/// the merge depends on it, because a peer can claim anything here.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PeerStats {
    /// Skills the sender holds.
    pub total_skills: i64,
    /// Skill extractions the sender has made.
    pub total_extractions: i64,
    /// Mean confidence of the sender's skills.
    pub avg_confidence: f64,
    /// Sender uptime in hours.
    pub uptime_hours: f64,
    /// The sender's most used workflows.
    #[serde(deserialize_with = "null_as_default")]
    pub top_workflows: Vec<String>,
    /// Our addition (`SPEC.md` §3.4): uses of the sender's skills its
    /// agents reported; omitted when 0, so Go nodes see their own shape.
    #[serde(skip_serializing_if = "is_zero")]
    pub total_uses: i64,
    /// Our addition: of those, successes; omitted when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub total_successes: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl KnowledgeUpdate {
    /// Decodes an update from JSON bytes (a `POST /ecp/skills` body or a
    /// `GET /ecp/skills` answer).
    ///
    /// The same result as `serde_json::from_slice`, faster for large updates:
    /// the fast decoder (`wire::fast`) cuts the `skills` array into parts
    /// that the cores decode in parallel; an update of any other shape, and
    /// every error, goes through serde_json.
    pub fn from_json(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::from_json_at_most(bytes, usize::MAX)
    }

    /// [`from_json`](Self::from_json) of an update of at most `max_packets`
    /// packets: one with more is refused ([`DecodeError::TooManyPackets`])
    /// before any packet is decoded, so its size in memory is never reached.
    pub fn from_json_at_most(bytes: &[u8], max_packets: usize) -> Result<Self, DecodeError> {
        check_utf8(bytes)?;
        if let Some(count) = super::count::packets_over(bytes, max_packets) {
            return Err(DecodeError::TooManyPackets { count, max: max_packets });
        }
        match fast::update(bytes) {
            Some(update) => Ok(update),
            // Not the plain shape, or not valid: serde_json alone decides, and says why.
            None => Self::decode_with_serde(bytes),
        }
    }

    /// The reference [`from_json`](Self::from_json) is tested against: the
    /// same UTF-8 check, then serde_json alone.
    #[cfg(test)]
    pub(super) fn from_json_serde(bytes: &[u8]) -> Result<Self, DecodeError> {
        check_utf8(bytes)?;
        Self::decode_with_serde(bytes)
    }

    /// The decoder [`from_json`](Self::from_json) falls back on: serde_json
    /// splits the update into raw packets on one thread, which are then
    /// decoded in parallel.
    fn decode_with_serde(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut envelope: Envelope<'_> = serde_json::from_slice(bytes)?;
        let raw = envelope.skills.take().unwrap_or_default();
        let decoded = crate::par::map_indexed(raw, |index, raw| {
            serde_json::from_str::<SkillPacket>(raw.get()).map_err(|e| DecodeError::in_packet(index, &e))
        });
        let skills = decoded.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok(envelope.with_skills(skills))
    }
}

/// Refuses bytes that are not UTF-8 anywhere (`SPEC.md` §2.1.1). JSON
/// decoders skip unknown fields without reading their strings, so invalid
/// UTF-8 there would otherwise pass: the whole body is checked first.
fn check_utf8(bytes: &[u8]) -> Result<(), DecodeError> {
    simdutf8::compat::from_utf8(bytes)
        .map(|_| ())
        .map_err(|e| DecodeError::invalid_utf8(bytes, e.valid_up_to()))
}

/// An update with its packets not yet decoded.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Envelope<'a> {
    id: Option<String>,
    peer_instance: Option<String>,
    generated_at: Timestamp,
    #[serde(borrow)]
    skills: Option<Vec<&'a RawValue>>,
    stats: Option<PeerStats>,
    sequence_num: i64,
    revocations: Option<Vec<crate::revocation::Revocation>>,
}

impl Envelope<'_> {
    pub(super) fn with_skills(self, skills: Vec<SkillPacket>) -> KnowledgeUpdate {
        KnowledgeUpdate {
            id: self.id.unwrap_or_default(),
            peer_instance: self.peer_instance.unwrap_or_default(),
            generated_at: self.generated_at,
            skills,
            stats: self.stats.unwrap_or_default(),
            sequence_num: self.sequence_num,
            revocations: self.revocations.unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_anywhere_is_refused_with_its_place_even_in_fields_nobody_reads() {
        let body = b"{\"peerInstance\":\"p\",\n  \"future\":\"\xff\",\"skills\":[]}";
        match KnowledgeUpdate::from_json(body) {
            Err(DecodeError::InvalidUtf8 { offset, line, column }) => {
                assert_eq!((offset, line, column), (33, 2, 13));
                assert_eq!(body[offset], 0xff);
            }
            other => panic!("expected InvalidUtf8, got {other:?}"),
        }
        // A truncated multi-byte character at the very end.
        let cut = b"{\"peerInstance\":\"\xc3";
        assert!(matches!(KnowledgeUpdate::from_json(cut), Err(DecodeError::InvalidUtf8 { offset: 17, .. })));
        // Valid multi-byte text passes on to the decoder.
        let fine = "{\"peerInstance\":\"ノード\",\"future\":\"é\",\"skills\":[]}";
        assert_eq!(KnowledgeUpdate::from_json(fine.as_bytes()).unwrap().peer_instance, "ノード");
    }

    #[test]
    fn stats_carry_reported_uses_only_when_there_are_some_and_read_back() {
        let go_shape = serde_json::to_value(PeerStats::default()).unwrap();
        let keys: Vec<&str> = go_shape.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["avgConfidence", "topWorkflows", "totalExtractions", "totalSkills", "uptimeHours"]);
        let used = PeerStats { total_uses: 4, total_successes: 3, ..PeerStats::default() };
        let json = serde_json::to_value(&used).unwrap();
        assert_eq!(
            (&json["totalUses"], &json["totalSuccesses"]),
            (&serde_json::json!(4), &serde_json::json!(3))
        );
        assert_eq!(serde_json::from_value::<PeerStats>(json).unwrap(), used);
    }
}
