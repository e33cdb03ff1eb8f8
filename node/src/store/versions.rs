//! A skill's versions as the user acts on them (#25): its history, one
//! version's packet by number or digest, and the versions held — a *pin*
//! keeps a skill's file at one version while newer ones are stored, a
//! *lock* is the version the last lockfile named (`ecp-node lock`,
//! `install`). History pruning keeps every held version ([`is_held`]).
//!
//! A version is identified by its *digest*: the bundle digest, or
//! `integrityHash` for a skill without other files ([`digest_of`]). This
//! node's version numbers are for display only and never travel.

use std::collections::HashMap;

use ecp_protocol::SkillPacket;
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::Serialize;

use super::{Source, Store, StoreError, from_json, now, packed};

pub use ecp_protocol::revocation::version_digest as digest_of;

/// Which version of a skill: this node's number, or a digest (a bundle's
/// `sha256:` form, or 64 hex digits that match either form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// This node's version number.
    Number(i64),
    /// A digest ([`digest_of`]).
    Digest(String),
}

impl Pick {
    /// `VERSION` (a number) or `DIGEST` as the CLI and the API take it.
    ///
    /// # Errors
    ///
    /// A text that is neither, saying what is expected.
    pub fn parse(text: &str) -> Result<Pick, String> {
        let text = text.trim();
        // A digest first: 64 decimal digits are a digest, not a version.
        let hex = text.strip_prefix("sha256:").unwrap_or(text);
        if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Ok(Pick::Digest(text.to_owned()));
        }
        if let Ok(n) = text.parse::<i64>() {
            return if n >= 1 { Ok(Pick::Number(n)) } else { Err(format!("version {n} must be 1 or more")) };
        }
        Err(format!(
            "{:?} is neither a version number nor a digest (64 lowercase hex digits, or sha256:<64 hex> for a \
             bundle); `ecp-node skill history NAME` lists both",
            text.chars().take(80).collect::<String>()
        ))
    }

    /// Whether version `number` with `packet` is the one picked.
    pub fn matches(&self, number: i64, packet: &SkillPacket) -> bool {
        match self {
            Pick::Number(n) => *n == number,
            Pick::Digest(d) => {
                let digest = digest_of(packet);
                digest == d || digest.strip_prefix("sha256:") == Some(d.as_str())
            }
        }
    }
}

/// One kept version, as `skill history` and `GET /v1/skills/{name}/history` show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionEntry {
    /// This node's version number (display only).
    pub version: i64,
    /// Its digest ([`digest_of`]).
    pub digest: String,
    /// Its `originInstance`.
    pub origin: String,
    /// When this node recorded it.
    pub recorded_at: String,
    /// How it arrived: `peer:<instance>`, `skills-dir`, `operator`, …
    pub source: String,
    /// Its stored confidence.
    pub confidence: f64,
    /// A tombstone.
    pub deprecated: bool,
    /// The store's current version (newest).
    pub current: bool,
    /// The version the skill is pinned to (what its file shows).
    pub pinned: bool,
    /// The version the last lockfile named.
    pub locked: bool,
    /// Its origin revoked it (`SPEC.md` §14): the reason it gave.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked: Option<String>,
}

/// A version held by a pin or a lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hold {
    /// The skill.
    pub name: String,
    /// This node's number of the version.
    pub version: i64,
    /// Its digest.
    pub digest: String,
}

const PIN: &str = "pin";
const LOCK: &str = "lock";

/// Whether version `version` of `name` is pinned or locked (pruning keeps it).
pub(super) fn is_held(tx: &Transaction<'_>, name: &str, version: i64) -> Result<bool, StoreError> {
    Ok(tx
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM version_holds WHERE name = ?1 AND version = ?2)")?
        .query_row(params![name, version], |r| r.get(0))?)
}

/// Every kept version of `name` with its packet, oldest first; empty when
/// the skill is not held.
pub(super) fn kept(
    conn: &Connection,
    name: &str,
) -> Result<Vec<(i64, String, String, SkillPacket)>, StoreError> {
    let mut stmt = conn.prepare_cached(concat!(
        "SELECT v.version, ",
        super::compact::time_text!("v.recorded"),
        ", a.name, COALESCE(v.packet, s.packet)
         FROM skill_versions v JOIN skills s ON s.name = v.name JOIN actors a ON a.id = v.actor
         WHERE v.name = ?1 AND (v.packet IS NOT NULL OR v.version = s.version)
         ORDER BY v.version"
    ))?;
    let rows = stmt
        .query_map(params![name], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, packed::column(row, 3)?)))?
        .collect::<Result<Vec<(i64, String, String, String)>, _>>()?;
    rows.into_iter().map(|(version, at, source, json)| Ok((version, at, source, from_json(&json)?))).collect()
}

/// The pin of `name`, if it is pinned.
pub(super) fn pin_of(conn: &Connection, name: &str) -> Result<Option<Hold>, StoreError> {
    Ok(holds_of(conn, PIN)?.remove(name))
}

/// Removes the pin of `name`; `false` when it was not pinned.
pub(super) fn drop_pin(conn: &Connection, name: &str) -> Result<bool, StoreError> {
    let removed = conn
        .prepare_cached("DELETE FROM version_holds WHERE name = ?1 AND hold = ?2")?
        .execute(params![name, PIN])?;
    Ok(removed > 0)
}

fn holds_of(conn: &Connection, hold: &str) -> Result<HashMap<String, Hold>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT name, version, digest FROM version_holds WHERE hold = ?1")?;
    let rows = stmt
        .query_map(params![hold], |r| Ok(Hold { name: r.get(0)?, version: r.get(1)?, digest: r.get(2)? }))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows.into_iter().map(|h| (h.name.clone(), h)).collect())
}

impl Store {
    /// Every kept version of `name`, oldest first; `None` when the skill is not held.
    pub fn history(&self, name: &str) -> Result<Option<Vec<VersionEntry>>, StoreError> {
        let conn = self.conn();
        let Some(current): Option<i64> = conn
            .prepare_cached("SELECT version FROM skills WHERE name = ?1")?
            .query_row(params![name], |r| r.get(0))
            .optional()?
        else {
            return Ok(None);
        };
        let pin = holds_of(&conn, PIN)?.remove(name);
        let lock = holds_of(&conn, LOCK)?.remove(name);
        let revoked = super::revocations::revoked_of(&conn, name)?;
        let entries = kept(&conn, name)?
            .into_iter()
            .map(|(version, recorded_at, source, packet)| VersionEntry {
                version,
                digest: digest_of(&packet).to_owned(),
                origin: packet.origin_instance.clone(),
                recorded_at,
                source,
                confidence: packet.confidence,
                deprecated: packet.deprecated,
                current: version == current,
                pinned: pin.as_ref().is_some_and(|h| h.version == version),
                locked: lock.as_ref().is_some_and(|h| h.version == version),
                revoked: revoked.get(digest_of(&packet)).cloned(),
            })
            .collect();
        Ok(Some(entries))
    }

    /// The kept version of `name` that `pick` names, with its number: the
    /// newest of that digest when several versions share it.
    pub fn version_packet(&self, name: &str, pick: &Pick) -> Result<Option<(i64, SkillPacket)>, StoreError> {
        let conn = self.conn();
        Ok(kept(&conn, name)?
            .into_iter()
            .rev()
            .find(|(n, _, _, packet)| pick.matches(*n, packet))
            .map(|(n, _, _, packet)| (n, packet)))
    }

    /// Every pinned skill's pin, by name.
    pub fn pins(&self) -> Result<HashMap<String, Hold>, StoreError> {
        holds_of(&self.conn(), PIN)
    }

    /// Every locked skill's lock, by name.
    pub fn locks(&self) -> Result<HashMap<String, Hold>, StoreError> {
        holds_of(&self.conn(), LOCK)
    }

    /// Pins `hold.name` to its version (replacing an earlier pin); audited as `actor`'s.
    pub fn pin(&self, hold: &Hold, actor: &Source, why: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO version_holds (name, hold, version, digest, held_at) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (name, hold) DO UPDATE SET version = excluded.version, digest = excluded.digest,
                     held_at = excluded.held_at",
            )?
            .execute(params![hold.name, PIN, hold.version, hold.digest, now().to_string()])?;
            let reason = format!("version {} ({}){why}", hold.version, hold.digest);
            super::audit::record(tx, actor, &hold.name, "pin", &reason)
        })
    }

    /// Unpins `name`; `false` when it was not pinned.
    pub fn unpin(&self, name: &str, actor: &Source) -> Result<bool, StoreError> {
        self.write(|tx| {
            let removed = drop_pin(tx, name)?;
            if removed {
                super::audit::record(tx, actor, name, "unpin", "")?;
            }
            Ok(removed)
        })
    }

    /// Replaces every lock with `locks` (the versions a lockfile names).
    pub fn set_locks(&self, locks: &[Hold]) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.prepare_cached("DELETE FROM version_holds WHERE hold = ?1")?.execute(params![LOCK])?;
            let at = now().to_string();
            let mut insert = tx.prepare_cached(
                "INSERT INTO version_holds (name, hold, version, digest, held_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for hold in locks {
                insert.execute(params![hold.name, LOCK, hold.version, hold.digest, at])?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use ecp_protocol::{Origin, SkillKind};

    use super::*;

    fn install(store: &Store, i: usize) {
        let origin = Origin::new("node-a", "someone", "linux/amd64", "1.0");
        let body = format!("---\nname: a\n---\nversion {i} of a\n");
        let packet = SkillPacket::new(&origin, "a", "d", &body, 0.9, now());
        store
            .transaction(|tx| tx.install(&packet, SkillKind::External, true, &Source::Operator).map(drop))
            .unwrap();
    }

    fn kept_versions(store: &Store) -> Vec<i64> {
        store.history("a").unwrap().unwrap().iter().map(|v| v.version).collect()
    }

    #[test]
    fn pruning_keeps_the_pinned_and_the_locked_version_at_any_depth() {
        for depth in [0, 1] {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open(dir.path()).unwrap();
            store.set_history_depth(depth);
            let hold = |v: i64| {
                let (_, p) = store.version_packet("a", &Pick::Number(v)).unwrap().unwrap();
                Hold { name: "a".into(), version: v, digest: digest_of(&p).to_owned() }
            };
            // Each held while it is current: at depth 0 nothing older is kept.
            install(&store, 1);
            store.pin(&hold(1), &Source::Operator, "").unwrap();
            install(&store, 2);
            store.set_locks(&[hold(2)]).unwrap();
            for i in 3..=5 {
                install(&store, i);
            }
            // Depth 0 keeps only the current version, depth 1 one more: and the held ones.
            let expected: Vec<i64> = if depth == 0 { vec![1, 2, 5] } else { vec![1, 2, 4, 5] };
            assert_eq!(kept_versions(&store), expected, "depth {depth}");
            let (_, pinned) =
                store.version_packet("a", &Pick::Number(1)).unwrap().expect("the pinned packet");
            assert!(pinned.skill_body.contains("version 1 of a"), "its packet is kept too");
            // Unpinned and unlocked, the old versions go at the next change.
            assert!(store.unpin("a", &Source::Operator).unwrap());
            assert!(!store.unpin("a", &Source::Operator).unwrap(), "a second unpin finds nothing");
            store.set_locks(&[]).unwrap();
            install(&store, 6);
            let expected: Vec<i64> = if depth == 0 { vec![6] } else { vec![5, 6] };
            assert_eq!(kept_versions(&store), expected, "depth {depth}");
        }
    }

    #[test]
    fn a_pick_is_a_number_or_a_digest_and_nothing_else() {
        let hex = "a".repeat(64);
        assert_eq!(Pick::parse("3"), Ok(Pick::Number(3)));
        assert_eq!(Pick::parse(&hex), Ok(Pick::Digest(hex.clone())));
        assert_eq!(Pick::parse(&"0".repeat(64)), Ok(Pick::Digest("0".repeat(64))));
        assert_eq!(Pick::parse(&format!("sha256:{hex}")), Ok(Pick::Digest(format!("sha256:{hex}"))));
        for bad in ["0", "-1", "", "abc", &"A".repeat(64), &"a".repeat(63), &"a".repeat(65)] {
            assert!(Pick::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_digest_pick_matches_a_bundle_by_its_hex_too() {
        let hex = "b".repeat(64);
        let packet = SkillPacket { bundle_digest: format!("sha256:{hex}"), ..SkillPacket::default() };
        assert!(Pick::Digest(hex.clone()).matches(1, &packet));
        assert!(Pick::Digest(format!("sha256:{hex}")).matches(1, &packet));
        assert!(!Pick::Digest("c".repeat(64)).matches(1, &packet));
        assert!(Pick::Number(1).matches(1, &packet) && !Pick::Number(2).matches(1, &packet));
    }
}
