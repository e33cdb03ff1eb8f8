//! Every check, one file per area, checks in ID order within a file.
//!
//! | area | file | what |
//! |---|---|---|
//! | MAN | `manifest.rs` | `GET /ecp/manifest` |
//! | SKL | `skills.rs` | `GET /ecp/skills`: shape, hashes, ids, names, agreement |
//! | HTTP | `http.rs` | content types, 404/405, clean error texts |
//! | PUSH | `push.rs` | `POST /ecp/skills` and the merge |
//! | SYNC | `sync.rs` | sequence numbers, ETag, `?since`, tombstones (ecp-1.2) |
//! | BUN | `bundles.rs` | ECP/1.3 bundles and blobs (skipped without `ecp-1.3` in the manifest) |
//! | VER | `versions.rs` | exact versions by digest, `GET /ecp/skills/{name}?digest=` (skipped without `versions` in the manifest) |
//! | ORG | `origins.rs` | ECP/1.3 origin signatures (skipped without `publicKey` in the manifest) |
//! | REV | `revocations.rs` | revocations (skipped without `revocations` in the manifest) |
//! | OUT | `outcomes.rs` | ECP/1.3 outcome evidence: a packet carrying `outcomes` is merged as without |
//! | PRP | `proposals.rs` | proposals, `POST /ecp/proposals` (skipped without `proposals` in the manifest) |
//! | AUTH | `auth.rs` | `X-ECP-HMAC` (with `--secret`) |
//! | SIGN | `signed.rs` | ECP/1.2 signed requests and responses (with `--key-id`, ecp-1.2) |
//! | ROB | `robustness.rs` | hostile and odd bodies |
//!
//! The run order is the order of [`all`]: the hostile bodies of ROB come
//! last, so a target they bring down has answered everything else first.
//! IDs are stable: a check is never renumbered, and a withdrawn check's ID
//! is never reused.
//!
//! `implied.rs` lists the ecp-1.2 checks ECP/1.1 already implies, which
//! run at SHOULD under ecp-1.1.
//!
//! What several areas share lives here: `state` (what a refused push must
//! not change) and the push helpers of AUTH and SIGN (`push_body`,
//! `merged_and_served`, `not_served`).

use serde_json::{Value, json};

use crate::check::{Check, Ctx, Problem, count, ensure, fail, served};
use crate::packets;
use crate::target::Exchange;

mod auth;
mod bundles;
mod http;
mod implied;
mod manifest;
mod origins;
mod outcomes;
mod proposals;
mod push;
mod revocations;
mod robustness;
mod signed;
mod skills;
mod sync;
mod versions;

pub use implied::why as implied_by_ecp11;

/// Every check, in run order.
pub fn all() -> Vec<&'static Check> {
    [
        manifest::CHECKS,
        skills::CHECKS,
        http::CHECKS,
        push::CHECKS,
        sync::CHECKS,
        bundles::CHECKS,
        versions::CHECKS,
        origins::CHECKS,
        revocations::CHECKS,
        outcomes::CHECKS,
        proposals::CHECKS,
        auth::CHECKS,
        signed::CHECKS,
        robustness::CHECKS,
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// What a refused push must not change: the names, hashes and counts of
/// the manifest and the listing, and their sequence numbers — not their
/// times, which a node may set to the time of the request (the Go
/// reference's `lastUpdate` and `createdAt` are).
fn state(cx: &Ctx<'_>) -> Result<Value, Problem> {
    let (_, m) = cx.manifest()?;
    let (_, l) = cx.listing()?;
    let mut names: Vec<&Value> = m["skillNames"].as_array().map(|a| a.iter().collect()).unwrap_or_default();
    names.sort_by_key(|n| n.to_string());
    let mut skills: Vec<Value> = l["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            json!({
                "skillName": p["skillName"], "id": p["id"], "integrityHash": p["integrityHash"],
                "bundleDigest": p["bundleDigest"], "originInstance": p["originInstance"],
                "confidence": p["confidence"], "shareable": p["shareable"], "deprecated": p["deprecated"],
            })
        })
        .collect();
    skills.sort_by_key(|p| p["skillName"].to_string());
    Ok(json!({
        "manifest": {
            "skillNames": names, "skillCount": m["skillCount"], "sequenceNum": m["sequenceNum"],
        },
        "listing": {"skills": skills, "count": skills.len(), "sequenceNum": l["sequenceNum"]},
    }))
}

/// A push body of one good packet, and the packet's name: what AUTH and
/// SIGN sign, or sign wrongly.
fn push_body(cx: &Ctx<'_>, tag: &str) -> (String, Vec<u8>) {
    let name = cx.name(tag);
    let body = packets::encode(&cx.update(vec![cx.good(&name)]));
    (name, body)
}

/// After an accepted push of [`push_body`] (answered `ex` with `result`):
/// it counted one new skill, and `name` is served.
fn merged_and_served(cx: &Ctx<'_>, ex: &Exchange, result: &Value, name: &str) -> Result<String, Problem> {
    ensure(count(result, "newSkills") == 1, || {
        fail(format!("a correctly signed push of one new skill: newSkills {}", result["newSkills"])).on(ex)
    })?;
    let (lex, listing) = cx.listing()?;
    ensure(served(&listing, name).is_some(), || {
        fail(format!("{name} is not served after a signed push")).on(&lex)
    })?;
    Ok("200, merged and served".into())
}

/// After a refused push of [`push_body`]: `name` is not in the (correctly
/// signed) listing.
fn not_served(cx: &Ctx<'_>, name: &str) -> Result<(), Problem> {
    let (lex, listing) = cx.listing()?;
    ensure(served(&listing, name).is_none(), || {
        fail(format!("{name}, pushed with a refused signature, is served")).on(&lex)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::check::{Needs, Profile};

    #[test]
    fn ids_are_unique_well_formed_and_in_order_within_an_area() {
        let checks = all();
        let mut seen = BTreeSet::new();
        for c in &checks {
            assert!(seen.insert(c.id), "{} twice", c.id);
            let (area, number) = c.id.split_once('-').expect("AREA-NNN");
            assert!(
                [
                    "MAN", "SKL", "HTTP", "PUSH", "SYNC", "BUN", "VER", "ORG", "REV", "OUT", "PRP", "AUTH",
                    "SIGN", "ROB"
                ]
                .contains(&area),
                "{}",
                c.id
            );
            assert!(number.len() == 3 && number.bytes().all(|b| b.is_ascii_digit()), "{}", c.id);
            assert!(c.spec.starts_with('§'), "{}: spec {:?}", c.id, c.spec);
            assert!(!c.title.is_empty() && !c.requirement.is_empty(), "{}", c.id);
            // AUTH needs the legacy secret, SIGN a key (and is ECP/1.2), nothing else needs anything.
            match area {
                "AUTH" => assert_eq!(c.needs, Needs::Secret, "{}", c.id),
                "SIGN" => assert!(c.needs != Needs::Nothing && c.profile == Profile::Ecp12, "{}", c.id),
                _ => assert_eq!(c.needs, Needs::Nothing, "{}", c.id),
            }
            assert!(c.needs != Needs::Secret || area == "AUTH", "{}", c.id);
        }
        for w in checks.windows(2) {
            if w[0].area() == w[1].area() {
                assert!(w[0].id < w[1].id, "{} before {}", w[0].id, w[1].id);
            }
        }
        assert!(checks.len() >= 50, "{} checks", checks.len());
    }
}
