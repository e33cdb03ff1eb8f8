//! Stage 5 of the merge: what an admitted packet does to the store.
//!
//! Rules, in order (`SPEC.md` › Merge › Resolution):
//! - a version its origin revoked (§14.6) is refused, from anyone;
//! - an origin known by a key (§13.6): a packet claiming it that this key
//!   did not sign is refused (stage `signature`);
//! - several admitted packets with one name in one update: the one with the
//!   latest `createdAt` wins, ties broken by the larger stored hash, then the
//!   larger bundle digest, then by the earlier position — so the winner does not depend on packet order
//!   except between identical packets; the others are refused as duplicates;
//! - not held: new (a tombstone for a skill not held changes nothing);
//! - held with the same hash, bundle digest and deprecated flag: unchanged —
//!   unless it is an external skill from the packet's origin held at a lower
//!   confidence than the packet brings after trust, or held with an
//!   unverified origin and the packet's is verified: updated;
//! - a packet of unverified origin with the content of a held skill of
//!   verified origin: an echo (a laundered copy, `SPEC.md` §6.6);
//! - held as a local skill: conflict — a remote packet never replaces it;
//! - held with a verified origin, the packet's unverified: conflict;
//! - held signed (`SPEC.md` §13.8): conflict unless the packet is signed
//!   by the same key;
//! - held with an unverified origin, the packet's verified: updated;
//! - held from another origin: conflict — only the origin may replace it;
//! - held from the same origin: updated only when the packet is newer (or is
//!   the tombstone of the very version held); else conflict.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use super::checks::{Admitted, Checked};
use super::refusal::{Prefix, Refusal};
use super::{
    Decision, MergeContext, PacketDecision, SkillKind, StoreView, StoredSkill, content_key, origin_verified,
    receive,
};
use crate::wire::{SkillPacket, Timestamp};

pub(super) fn resolve(
    mut checked: Vec<Vec<Checked>>,
    store: &impl StoreView,
    ctx: &MergeContext<'_>,
) -> Vec<PacketDecision> {
    let winners = pick_winners(checked.iter().flatten());
    // Deciding needs the store, which need not be shareable between threads,
    // so it runs here, in place; building what an installed packet becomes
    // does not, and allocates a dozen strings per packet, so that runs in parallel.
    // Origins first seen in this update, by the key of their first signed packet.
    let mut first_seen: HashMap<String, String> = HashMap::new();
    for c in checked.iter_mut().flatten() {
        let Some(admitted) = &c.admitted else {
            continue;
        };
        c.decision = match winners[c.index] {
            Some(winner) if winner != c.index => {
                let detail =
                    format_args!("packet #{winner} wins (latest createdAt, then larger hash, then first)");
                Refusal::new(Prefix::Duplicate, detail).into()
            }
            _ => {
                if let Some(reason) = revoked(&c.packet, store) {
                    let digest = crate::revocation::version_digest(&c.packet);
                    let name = &c.packet.skill_name;
                    let detail = format_args!(
                        "version {digest} of {name:?} was revoked ({reason}); refused from anyone"
                    );
                    Refusal::new(Prefix::Revoked, detail).into()
                } else {
                    match known_key_refusal(&c.packet, store, &mut first_seen) {
                        Some(refusal) => refusal.into(),
                        None => against_store(&c.packet, admitted, store, ctx),
                    }
                }
            }
        };
    }
    let decided = crate::par::map_chunks(
        checked,
        |_, Checked { index, packet, decision, admitted, findings, warnings, .. }| {
            let packet = match admitted {
                Some(admitted) if decision.installs() => receive(stored_form(packet, admitted), ctx),
                _ => packet,
            };
            PacketDecision { index, packet, decision, findings, warnings }
        },
    );
    crate::par::concat(decided)
}

/// The reason the origin revoked this packet's version, if it did; a
/// tombstone (a withdrawal, which never installs content) never is.
fn revoked(packet: &SkillPacket, store: &impl StoreView) -> Option<String> {
    if packet.deprecated {
        return None;
    }
    store.revoked(&packet.skill_name, crate::revocation::version_digest(packet))
}

/// For each packet (by position): the index of the winning packet of its name,
/// when more than one admitted packet carries that name.
fn pick_winners<'a>(checked: impl Iterator<Item = &'a Checked> + Clone) -> Vec<Option<usize>> {
    struct Best<'a> {
        key: (Timestamp, &'a str, &'a str),
        index: usize,
        contested: bool,
    }
    // Each name was hashed in stage 4: the map gives a slot in `best`, and
    // every packet remembers its slot. Sized up front, so it never rehashes.
    let len = checked.clone().count();
    let mut slots: HashMap<NameKey<'_>, usize, BuildHasherDefault<Prehashed>> =
        HashMap::with_capacity_and_hasher(len, BuildHasherDefault::default());
    let mut best: Vec<Best<'_>> = Vec::new();
    let mut slot_of: Vec<Option<usize>> = Vec::with_capacity(len);
    for c in checked {
        let Some(admitted) = &c.admitted else {
            slot_of.push(None);
            continue;
        };
        let key = (c.packet.created_at, admitted.stored_hash(&c.packet), c.packet.bundle_digest.as_str());
        let name = NameKey { hash: c.name_hash, name: &c.packet.skill_name };
        let slot = *slots.entry(name).or_insert_with(|| {
            best.push(Best { key, index: c.index, contested: false });
            best.len() - 1
        });
        let b = &mut best[slot];
        if b.index != c.index {
            b.contested = true;
            // Strictly greater: on a full tie the earlier packet keeps the name.
            if key > b.key {
                b.key = key;
                b.index = c.index;
            }
        }
        slot_of.push(Some(slot));
    }
    slot_of.iter().map(|s| s.map(|s| &best[s]).filter(|b| b.contested).map(|b| b.index)).collect()
}

/// A skill name with its hash, computed beforehand (under a random key, so
/// that names chosen to collide cannot slow the map down).
struct NameKey<'a> {
    hash: u64,
    name: &'a str,
}

impl Hash for NameKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl PartialEq for NameKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for NameKey<'_> {}

/// The hasher of [`NameKey`]: passes its precomputed hash through.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; fold anything else in rather than drop it.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

fn against_store(
    packet: &SkillPacket,
    admitted: &Admitted,
    store: &impl StoreView,
    ctx: &MergeContext<'_>,
) -> Decision {
    let conflict =
        |detail: &dyn std::fmt::Display| -> Decision { Refusal::new(Prefix::Conflict, detail).into() };
    let verified = origin_verified(packet, ctx);
    match store.lookup(&packet.skill_name) {
        None if packet.deprecated => Decision::Unchanged,
        None => Decision::New,
        Some(held)
            if held.integrity_hash == admitted.stored_hash(packet)
                && held.bundle_digest == packet.bundle_digest
                && held.deprecated == packet.deprecated =>
        {
            // A verified packet also confirms the origin of a copy held
            // unverified, and a signed one the origin of a copy held unsigned.
            let signs_held = packet.origin_signature.is_some()
                && held.origin_key.is_none()
                && held.kind == SkillKind::External
                && held.origin == packet.origin_instance;
            if raises_confidence(&held, packet, ctx.trust)
                || (verified && !held.origin_verified)
                || signs_held
            {
                Decision::Updated { previous_hash: held.integrity_hash }
            } else {
                Decision::Unchanged
            }
        }
        Some(held) if !verified && held.origin_verified && is_laundered_copy(&held, packet) => Decision::Echo,
        Some(held) if held.kind == SkillKind::Local => {
            conflict(&"a locally authored skill has this name; a remote packet never replaces it")
        }
        // Rule 4b first: a legacy sender gets the reason that names its
        // case; the key rule then refuses every other packet K did not sign.
        Some(held) if !verified && held.origin_verified => conflict(&format_args!(
            "this node holds the skill from the verified origin {:?}; a packet of unverified origin (from an \
             ECP/1.1 sender, or claiming {:?}) never replaces it",
            held.origin,
            super::GO_DEFAULT_INSTANCE
        )),
        Some(StoredSkill { origin_key: Some(key), .. })
            if packet.origin_signature.as_ref().is_none_or(|s| s.key_id != key) =>
        {
            conflict(&format_args!(
                "this node holds the skill signed by key {key}; only a packet signed by that key may replace it"
            ))
        }
        Some(held) if verified && !held.origin_verified => {
            Decision::Updated { previous_hash: held.integrity_hash }
        }
        Some(held) if held.origin != packet.origin_instance => conflict(&format_args!(
            "this node holds the skill from origin {:?}; only that origin may replace it",
            held.origin
        )),
        Some(held) => {
            let newer = packet.created_at > held.created_at;
            let withdraws_held =
                packet.created_at == held.created_at && packet.deprecated && !held.deprecated;
            if newer || withdraws_held {
                Decision::Updated { previous_hash: held.integrity_hash }
            } else {
                conflict(&format_args!(
                    "createdAt {} is not newer than the held version's {}",
                    packet.created_at, held.created_at
                ))
            }
        }
    }
}

/// The refusal of a packet whose origin is known by a key (`SPEC.md`
/// §13.6) that did not sign it: signed by another key (an impostor), or
/// not signed at all (a downgrade). An origin not known yet is known from
/// its first signed packet on, in this update too.
fn known_key_refusal(
    packet: &SkillPacket,
    store: &impl StoreView,
    first_seen: &mut HashMap<String, String>,
) -> Option<Refusal> {
    let origin = &packet.origin_instance;
    let known = store.origin_key(origin).or_else(|| first_seen.get(origin).cloned());
    match (&packet.origin_signature, known) {
        (Some(signature), Some(known)) if signature.key_id != known => Some(Refusal::new(
            Prefix::Signature,
            format_args!(
                "the origin {origin:?} is known by key {known}; this packet is signed by key {}, which may \
                 not speak for it",
                signature.key_id
            ),
        )),
        (None, Some(known)) => Some(Refusal::new(
            Prefix::Unsigned,
            format_args!(
                "the origin {origin:?} signs its skills (key {known}); an unsigned packet claiming it is \
                 refused as a downgrade"
            ),
        )),
        (Some(signature), None) => {
            first_seen.insert(origin.clone(), signature.key_id.clone());
            None
        }
        _ => None,
    }
}

/// Whether `packet` carries the Markdown of `held` (its [`content_key`]) in
/// the same state (active or withdrawn): what a Go node serves back of a
/// skill it got from us, frontmatter stripped, under its own origin.
fn is_laundered_copy(held: &super::StoredSkill, packet: &SkillPacket) -> bool {
    held.deprecated == packet.deprecated
        && held.content_key.as_deref().is_some_and(|key| key == content_key(&packet.skill_body))
}

/// Whether the same content as `held` arriving in `packet` from a sender
/// trusted `trust` raises the held confidence (`SPEC.md` §7.9.2.4): so trust
/// does not depend on which path brought a skill first. Only an active
/// external skill, only from its own origin, only upwards — so copies that
/// keep coming back at the same or a lower confidence change nothing.
fn raises_confidence(held: &super::StoredSkill, packet: &SkillPacket, trust: f64) -> bool {
    /// Below this, a difference is floating-point noise, not a raise.
    const MARGIN: f64 = 1e-9;
    let Some(stored) = held.confidence else { return false };
    held.kind == SkillKind::External
        && !held.deprecated
        && held.origin == packet.origin_instance
        && super::receive::lowered(packet.confidence, trust) > stored + MARGIN
}

/// The packet with the body that will be stored (frontmatter rebuilt if needed).
fn stored_form(mut packet: SkillPacket, admitted: Admitted) -> SkillPacket {
    if let Some(rebuilt) = admitted.rebuilt {
        packet.skill_body = rebuilt.body;
        packet.integrity_hash = rebuilt.hash;
    }
    packet
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_one_hash_stay_apart() {
        let mut slots: HashMap<NameKey<'_>, usize, BuildHasherDefault<Prehashed>> = HashMap::default();
        slots.insert(NameKey { hash: 7, name: "a" }, 0);
        slots.insert(NameKey { hash: 7, name: "b" }, 1);
        slots.insert(NameKey { hash: 7, name: "a" }, 2);
        assert_eq!(slots.len(), 2);
        assert_eq!(slots.get(&NameKey { hash: 7, name: "a" }), Some(&2));
        assert_eq!(slots.get(&NameKey { hash: 7, name: "b" }), Some(&1));
    }
}
