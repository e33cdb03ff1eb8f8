//! `--cleanup` (on by default): after the checks, withdraw what the run
//! created on the target, and say what it could not remove.
//!
//! A black-box client has one way to remove a skill: the protocol's
//! withdrawal, a tombstone (`deprecated: true`) from the skill's origin
//! (SPEC §7.9.3). So the suite reads the target's listing, and for every
//! live skill named `ecpconf-<run>-…` pushes the served packet back with
//! `deprecated: true` and the same `createdAt` (rule 7), as the origin it
//! is served with. It sends at most [`BATCH`] withdrawals per push: more
//! from one sender at once is a bulk withdrawal that a node may hold for
//! its operator (§7.9.3.4, default limit 5). Then it reads the listing again.
//!
//! What it does not do: it cannot remove what the protocol has no request
//! for — the target's quarantine and audit entries of the packets it
//! refused, the tombstones themselves, blobs, and copies its neighbours
//! took ([`NOT_REMOVABLE`]). Nor does its outcome change a check's.

use serde_json::{Value, json};

use crate::check::{Ctx, conflicts, count};

/// Withdrawals per push: the default bulk-withdrawal limit of SPEC §7.9.3.4.1.
pub const BATCH: usize = 5;

/// What a withdrawal through the protocol can never remove.
pub const NOT_REMOVABLE: &[&str] = &[
    "the target's quarantine and audit entries of the packets it refused (the suite pushes refused packets on purpose)",
    "the tombstones: each withdrawn skill stays a `deprecated: true` record, served to `?since` pullers",
    "blobs the BUN checks uploaded, and bundles still pending their blobs (not served, so not withdrawable)",
    "copies on the target's neighbours, if it federates: what they pulled or were pushed, and their \
     quarantine entries of what they refused",
];

/// What the cleanup did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cleanup {
    /// Skills the run created that are no longer served as active.
    pub withdrawn: Vec<String>,
    /// Skills the run created that are still served as active, each with why.
    pub left: Vec<(String, String)>,
    /// Set when the cleanup could not read or write the target at all.
    pub error: Option<String>,
}

/// The live skills of this run in `listing`: names `ecpconf-<run>-…`, not deprecated.
fn live<'v>(cx: &Ctx<'_>, listing: &'v Value) -> Vec<&'v Value> {
    let prefix = cx.name("");
    listing["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| {
            p["skillName"].as_str().is_some_and(|n| n.starts_with(&prefix)) && p["deprecated"] != true
        })
        .collect()
}

/// The tombstone of served packet `p`: the same packet, `deprecated`,
/// without the files of a bundle (§12.9.5) and the receiving node's
/// provenance, at the confidence the suite pushes (the served one is
/// lowered and might fall under the target's threshold).
fn tombstone(p: &Value) -> Value {
    let mut t = p.clone();
    if let Some(o) = t.as_object_mut() {
        for key in ["files", "bundleDigest", "provenance"] {
            o.remove(key);
        }
    }
    t["deprecated"] = json!(true);
    t["confidence"] = json!(0.9);
    t
}

/// Withdraws every live skill of this run from the target.
pub fn withdraw(cx: &Ctx<'_>) -> Cleanup {
    let mut out = Cleanup::default();
    let listing = match cx.listing() {
        Ok((_, l)) => l,
        Err(e) => {
            out.error = Some(format!("could not read GET /ecp/skills: {}", describe(&e)));
            return out;
        }
    };
    let targets: Vec<Value> = live(cx, &listing).into_iter().cloned().collect();
    let mut why: Vec<(String, String)> = Vec::new();
    for batch in targets.chunks(BATCH) {
        let update = cx.update(batch.iter().map(tombstone).collect());
        match cx.push(&update) {
            Ok((_, result)) => {
                for line in conflicts(&result).into_iter().chain(lines(&result, "held")) {
                    if let Some((name, reason)) = line.split_once(": ") {
                        why.push((name.to_owned(), reason.to_owned()));
                    }
                }
                if count(&result, "heldSkills") > 0 && lines(&result, "held").is_empty() {
                    for p in batch {
                        why.push((name_of(p), "held by the target's bulk-withdrawal guard".into()));
                    }
                }
            }
            Err(e) => {
                for p in batch {
                    why.push((name_of(p), format!("the withdrawal push failed: {}", describe(&e))));
                }
            }
        }
    }
    let after = match cx.listing() {
        Ok((_, l)) => l,
        Err(e) => {
            out.error = Some(format!("could not read GET /ecp/skills after withdrawing: {}", describe(&e)));
            return out;
        }
    };
    let still: Vec<String> = live(cx, &after).into_iter().map(name_of).collect();
    for p in &targets {
        let name = name_of(p);
        if still.contains(&name) {
            let reason = why
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, r)| r.clone())
                .unwrap_or_else(|| "still served as active after its tombstone was accepted".into());
            out.left.push((name, reason));
        } else {
            out.withdrawn.push(name);
        }
    }
    out
}

fn name_of(p: &Value) -> String {
    p["skillName"].as_str().unwrap_or_default().to_owned()
}

/// The string lines of array `key` of a MergeResult.
fn lines(result: &Value, key: &str) -> Vec<String> {
    result[key].as_array().into_iter().flatten().filter_map(|l| l.as_str().map(str::to_owned)).collect()
}

fn describe(problem: &crate::check::Problem) -> String {
    match problem {
        crate::check::Problem::Fail { reason, .. } => reason.clone(),
        crate::check::Problem::Skip(r) | crate::check::Problem::Error(r) => r.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packets;

    #[test]
    fn a_tombstone_is_the_served_packet_deprecated_without_files_or_provenance() {
        let body = packets::skill_md("ecpconf-1-a", "d");
        let mut served = packets::good_packet("o", "ecpconf-1-a", "2026-01-01T00:00:00Z");
        packets::set_body(&mut served, &body);
        served["confidence"] = json!(0.54);
        served["files"] = json!([{"path": "SKILL.md"}]);
        served["bundleDigest"] = json!("ab");
        served["provenance"] = json!({"hops": 1});
        let t = tombstone(&served);
        assert_eq!(t["deprecated"], true);
        assert_eq!(t["confidence"], 0.9);
        assert_eq!(t["createdAt"], served["createdAt"], "the same createdAt: rule 7");
        assert_eq!(t["integrityHash"], served["integrityHash"]);
        assert!(t.get("files").is_none() && t.get("bundleDigest").is_none() && t.get("provenance").is_none());
    }
}
