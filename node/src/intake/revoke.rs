//! The revocations an update carries (`SPEC.md` §14.5): each is taken
//! only when it is provably from the skill's origin — its signature holds,
//! and its key is the key that origin is known by here (or the origin's
//! instance id is that key's id). Taken, it is recorded, and a received
//! skill holding the revoked version goes back from it; refused, it is
//! audited (`rejected:revocation`) with its reason and logged. Both run in
//! the merge's transaction, before its packets are decided, so that the
//! revoked version in the same update is refused already.

use ecp_protocol::identity::is_key_id;
use ecp_protocol::revocation::{self, MAX_REVOCATIONS_PER_UPDATE, Revocation};
use ecp_protocol::wire::OriginSignature;

use crate::store::{Change, Source, StoreError, Tx};

/// What the revocations of one update did.
#[derive(Debug, Default)]
pub(super) struct Taken {
    /// The skills that went back from a revoked version (or were unpinned from one).
    pub changes: Vec<Change>,
    /// The sequence number of the last one recorded, if any was.
    pub seq: Option<i64>,
}

/// Checks, records and applies `revocations` from `source`.
pub(super) fn take(tx: &Tx<'_>, revocations: &[Revocation], source: &Source) -> Result<Taken, StoreError> {
    let mut taken = Taken::default();
    for (i, r) in revocations.iter().enumerate() {
        let name = r.skill_name.chars().take(128).collect::<String>();
        if i >= MAX_REVOCATIONS_PER_UPDATE {
            let reason = format!("beyond the {MAX_REVOCATIONS_PER_UPDATE} revocations one update may carry");
            refuse(tx, source, &name, &reason)?;
            continue;
        }
        // Held already (this node's own coming back, or a relay's repeat): nothing to check.
        if tx.is_revoked(&r.skill_name, &r.digest)? {
            continue;
        }
        if let Err(reason) = from_the_origin(tx, r) {
            refuse(tx, source, &name, &reason)?;
            continue;
        }
        let Some(seq) = tx.record_revocation(r)? else { continue };
        taken.seq = Some(seq);
        let origin = r.origin_signature.as_ref().map_or("", |s| s.instance.as_str());
        tx.audit(
            source,
            &r.skill_name,
            "revocation",
            &format!("version {} by {origin}: {}", r.digest, r.reason),
        )?;
        tracing::warn!(skill = %r.skill_name, digest = %r.digest, %origin, reason = %r.reason, "a version was revoked by its origin");
        if let Some(rolled) = tx.roll_back_revoked(&r.skill_name, &r.digest, source)? {
            if rolled.unpinned {
                tracing::warn!(skill = %r.skill_name, digest = %r.digest, "the skill was pinned to the revoked version: unpinned");
            }
            taken.changes.push(rolled.change);
        }
    }
    Ok(taken)
}

/// Why `r` is not provably from its skill's origin, if it is not.
fn from_the_origin(tx: &Tx<'_>, r: &Revocation) -> Result<(), String> {
    let signature = revocation::verify(r).map_err(|e| format!("revocation refused: {e}"))?;
    let instance = signature.instance.as_str();
    let held = tx.view(&[&r.skill_name], false).map_err(|e| e.to_string())?.remove(&r.skill_name);
    let known = if is_key_id(instance) {
        None
    } else {
        tx.origin_keys_of([instance]).map_err(|e| e.to_string())?.remove(instance)
    };
    by_the_origin(&r.skill_name, signature, held.as_ref().map(|h| h.origin.as_str()), known.as_deref())
}

/// Why a revocation of `name` whose `signature` holds is not provably from
/// the skill's origin, if it is not (`SPEC.md` §14.5.1): `held` is the
/// origin of the version held of `name`, if one is; `known` the key the
/// signing instance is known by, if one is. Shared with the hub's merge.
pub(crate) fn by_the_origin(
    name: &str,
    signature: &OriginSignature,
    held: Option<&str>,
    known: Option<&str>,
) -> Result<(), String> {
    let instance = signature.instance.as_str();
    if let Some(held) = held
        && held != instance
    {
        return Err(format!(
            "revocation refused: it is signed for {instance:?}, but this node holds {name:?} from its origin \
             {held:?}; only the origin revokes its versions"
        ));
    }
    if is_key_id(instance) {
        // The instance id is the key's own id, which the signature checked.
        return Ok(());
    }
    match known {
        Some(key) if key == signature.key_id => Ok(()),
        Some(key) => Err(format!(
            "revocation refused: signed by key {}, but the origin {instance:?} is known here by key {key}",
            signature.key_id
        )),
        None => Err(format!(
            "revocation refused: this node knows no key of the origin {instance:?}, so it cannot tell it from a \
             forgery; pin the origin's key ([origin_keys] in peers.toml) or take a signed skill of it first"
        )),
    }
}

/// Records a refused revocation: audited and logged, nothing else changes.
fn refuse(tx: &Tx<'_>, source: &Source, name: &str, reason: &str) -> Result<(), StoreError> {
    tracing::warn!(skill = %name, sender = %source, %reason, "revocation refused");
    tx.audit(source, name, "rejected:revocation", reason)
}
