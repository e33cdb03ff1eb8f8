//! Confidence lowering and provenance (`SPEC.md` › Confidence lowering).
//!
//! An accepted external skill is stored with
//! `confidence = received × trust(sender)`, clamped to [0, 1]; the accept
//! threshold applies to the confidence *as received*. So a skill of
//! confidence `c` keeps travelling while `c × trust^k` stays at or above the
//! threshold of the next node: with trust 0.6 and threshold 0.6, a skill of
//! 1.0 reaches its neighbours at 0.6 and their neighbours at 0.36, where it
//! stops. Hop count and path grow by one per hop, so loops are detectable.

use super::MergeContext;
use crate::integrity;
use crate::wire::{Provenance, SkillPacket};

/// Trust in a sender nobody configured (GEP's default factor).
pub const DEFAULT_TRUST: f64 = 0.6;

/// The packet as this node stores it after accepting it from `ctx.sender`:
/// confidence lowered, provenance extended, `id` and `version` normalised,
/// `outcomes` taken off.
///
/// Also the way a quarantined packet is admitted by hand: it is still
/// external, still lowered.
pub fn receive(mut packet: SkillPacket, ctx: &MergeContext<'_>) -> SkillPacket {
    let received = packet.confidence;
    let origin_unverified = !super::origin_verified(&packet, ctx);
    let incoming = packet.provenance.take();
    let origin_confidence = incoming
        .as_ref()
        .and_then(|p| p.origin_confidence)
        .filter(|c| c.is_finite())
        .unwrap_or(received)
        .clamp(0.0, 1.0);
    let hops = incoming.as_ref().map_or(0, |p| p.hops).saturating_add(1);
    // A proposal's credit and a derived version's source travel unchanged (§17.6).
    let (derived_from, proposed_by) =
        incoming.as_ref().map_or((None, None), |p| (p.derived_from.clone(), p.proposed_by.clone()));
    let mut path = incoming.map(|p| p.path).unwrap_or_default();
    if path.is_empty() {
        path.push(packet.origin_instance.clone());
    }
    if path.last().map(String::as_str) != Some(ctx.sender) && !ctx.sender.is_empty() {
        path.push(ctx.sender.to_owned());
    }
    packet.confidence = lowered(received, ctx.trust);
    // Evidence is kept apart, per observer (`SPEC.md` §16.4), never as part of the skill.
    packet.outcomes.clear();
    packet.provenance = Some(Provenance {
        origin_confidence: Some(origin_confidence),
        hops,
        path,
        received_from: ctx.sender.to_owned(),
        received_at: Some(ctx.now),
        origin_unverified,
        derived_from,
        proposed_by,
    });
    // Written into the strings the packet brought: same text as new strings,
    // two allocations fewer per packet.
    packet.version.clear();
    packet.version.push_str(crate::PROTOCOL_VERSION);
    packet.id.clear();
    packet.id.push_str(integrity::id_of(&packet.integrity_hash));
    packet
}

/// The confidence a packet received at `received` is stored at, from a
/// sender trusted `trust` (clamped to [0, 1]; not a number counts as 0).
pub(super) fn lowered(received: f64, trust: f64) -> f64 {
    let trust = if trust.is_finite() { trust.clamp(0.0, 1.0) } else { 0.0 };
    (received * trust).clamp(0.0, 1.0)
}
