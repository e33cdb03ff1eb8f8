//! The fast decoder of a [`KnowledgeUpdate`], beside its reference
//! (`KnowledgeUpdate::from_json_serde`, serde_json alone).
//!
//! Contract: [`update`] answers `None` = use the reference path; `Some` = the
//! identical update the reference gives (`tests.rs` holds the two together).
//!
//! Why: a large update is mostly its `skills` array, and serde_json reads it
//! on one thread, byte by byte. Here the array is found by a scan, cut into
//! parts the cores decode in parallel, and each packet is read by a reader
//! made for packets; the rest of the envelope still goes through serde_json.
//!
//! # Layout
//!
//! - `split`: finds the `skills` array and checks the plain shape around it;
//!   the small scanning steps the other two share.
//! - `skills_array`: the array, cut into parts decoded in parallel.
//! - `packet`: one packet of the plain shape, without serde_json.
//! - `json_strategies` (tests only): generators of hostile JSON text.
//! - `tests`: the fast decoder against the reference on every input.

#[cfg(test)]
mod json_strategies;
mod packet;
mod skills_array;
mod split;
#[cfg(test)]
mod tests;

use super::KnowledgeUpdate;
use super::update::Envelope;

/// The update, when the document has the plain shape `split` understands
/// and every piece of it decodes; `None` otherwise, whatever the reason.
pub(super) fn update(bytes: &[u8]) -> Option<KnowledgeUpdate> {
    let open = split::skills_array(bytes)?;
    let (skills, close) = skills_array::decode(bytes, open)?;
    split::rest_of_object(bytes, close)?;
    // serde_json checks everything but the array, which is checked above.
    let mut envelope = Vec::with_capacity(bytes.len() - (close - open) + 2);
    envelope.extend_from_slice(&bytes[..open]);
    envelope.extend_from_slice(b"[]");
    envelope.extend_from_slice(&bytes[close..]);
    let envelope: Envelope<'_> = serde_json::from_slice(&envelope).ok()?;
    Some(envelope.with_skills(skills))
}
