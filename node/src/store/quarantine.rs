//! The quarantine: refused packets kept with their reasons and findings
//! until an operator approves or drops them.
//!
//! The same refused packet from the same peer is kept once (a peer that
//! re-sends it on every pull bumps `timesSeen`) — also once it was reviewed:
//! a re-sent packet the operator approved or dropped counts as seen again on
//! that entry instead of coming back for review. Each entry is accounted to
//! its verified sender (table `quarantine_held`, kept by triggers), so
//! holding a refusal costs O(1); the caps on entries and bytes are enforced
//! once per transaction by [`super::quarantine_evict`], each sender's share
//! at a time. A packet larger than the body cap is kept as an excerpt with
//! its size and SHA-256 ([`Truncated`]): enough to review, not to install.

use ecp_protocol::merge::Stage;
use ecp_protocol::{Finding, SkillPacket, Timestamp};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{Source, Store, StoreError, Tx, audit, from_json, now, to_json};

/// Where an entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QuarantineStatus {
    /// Waiting for review.
    Held,
    /// Installed by an operator.
    Approved,
    /// Removed by an operator.
    Dropped,
}

impl QuarantineStatus {
    pub(super) fn from_label(label: &str) -> QuarantineStatus {
        match label {
            "approved" => QuarantineStatus::Approved,
            "dropped" => QuarantineStatus::Dropped,
            _ => QuarantineStatus::Held,
        }
    }
}

impl std::fmt::Display for QuarantineStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            QuarantineStatus::Held => "held",
            QuarantineStatus::Approved => "approved",
            QuarantineStatus::Dropped => "dropped",
        })
    }
}

/// Default: largest packet kept whole (its JSON), 256 KiB.
pub(super) const DEFAULT_BODY_BYTES: u64 = 256 * 1024;
/// How much of a larger packet's JSON is kept, at most.
pub(super) const EXCERPT_BYTES: usize = 16 * 1024;

/// A packet kept as an excerpt: it was larger than the body cap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Truncated {
    /// The size of its JSON as received, bytes.
    pub size: i64,
    /// The SHA-256 of that JSON, hex.
    pub sha256: String,
}

/// One refused packet.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuarantineEntry {
    /// Entry id, for `quarantine approve ID` / `drop ID`.
    pub id: i64,
    /// First received.
    pub received_at: String,
    /// Last received.
    pub last_seen_at: String,
    /// How many times it arrived.
    pub times_seen: i64,
    /// Who sent it (always a [`Source::Peer`]); shown as `peer:<instance>`.
    pub peer: Source,
    /// Its skill name as sent.
    pub skill_name: String,
    /// Its integrityHash as sent.
    pub integrity_hash: String,
    /// The refusing stage.
    pub stage: String,
    /// Why.
    pub reason: String,
    /// Scanner findings.
    pub findings: Vec<Finding>,
    /// The trust in the sender when it was refused: an approval lowers the
    /// packet's confidence by it. `None` for entries from before it was kept.
    pub trust: Option<f64>,
    /// Status.
    pub status: QuarantineStatus,
    /// Whether an ECP/1.1 sender sent it (`SPEC.md` §6.6.1): installed
    /// later (approved, or a bundle whose files arrived), its origin stays
    /// unverified.
    pub legacy_sender: bool,
    /// Set when only an excerpt of the packet was kept: it cannot be approved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<Truncated>,
}

/// What a refused packet is held with.
#[derive(Debug, Clone, Copy)]
pub struct Refusal<'a> {
    /// The sender, as the update names it.
    pub peer: &'a Source,
    /// Who the node verified sent it (configured peer, key or client
    /// address): the quarantine's share is counted per this.
    pub sender: &'a str,
    /// The refusing stage.
    pub stage: Stage,
    /// Why.
    pub reason: &'a str,
    /// The scanner's findings.
    pub findings: &'a [Finding],
    /// The trust in the sender.
    pub trust: f64,
    /// Whether the sender is an ECP/1.1 one (`SPEC.md` §6.6.1): a bundle
    /// held until its files arrive is installed later with its origin
    /// still unverified.
    pub legacy: bool,
}

/// The first at most `max` bytes of `text`, cut at a character boundary.
pub(super) fn excerpt(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn hold(
    conn: &Connection,
    packet: &SkillPacket,
    refusal: &Refusal<'_>,
    body_cap: u64,
) -> Result<(), StoreError> {
    let Refusal { peer, sender, stage, reason, findings, trust, legacy } = *refusal;
    let at = now().to_string();
    let stage = stage.name();
    // A held entry first; else the newest reviewed one.
    let existing: Option<i64> = conn
        .prepare_cached(
            "SELECT id FROM quarantine
             WHERE peer = ?1 AND skill_name = ?2 AND integrity_hash = ?3 AND stage = ?4
             ORDER BY status = 'held' DESC, id DESC LIMIT 1",
        )?
        .query_row(params![peer, packet.skill_name, packet.integrity_hash, stage], |row| row.get(0))
        .optional()?;
    if let Some(id) = existing {
        conn.prepare_cached(
            "UPDATE quarantine SET last_seen_at = ?1, times_seen = times_seen + 1, reason = ?2, trust = ?3,
                                   legacy = ?5
             WHERE id = ?4",
        )?
        .execute(params![at, reason, trust, id, legacy])?;
        return Ok(());
    }
    let whole = to_json(packet);
    let (body, truncated) = if whole.len() as u64 > body_cap {
        let kept = excerpt(&whole, EXCERPT_BYTES.min(usize::try_from(body_cap).unwrap_or(usize::MAX)));
        let truncated = Truncated {
            size: i64::try_from(whole.len()).unwrap_or(i64::MAX),
            sha256: hex::encode(Sha256::digest(whole.as_bytes())),
        };
        (kept, Some(truncated))
    } else {
        (whole.as_str(), None)
    };
    let findings = to_json(&findings);
    // What the entry weighs against the byte cap: all it stores.
    let bytes = i64::try_from(body.len() + findings.len() + reason.len()).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "INSERT INTO quarantine (received_at, last_seen_at, times_seen, peer, skill_name, integrity_hash, stage,
                                 reason, findings, packet, status, trust, sender, bytes, body_size, body_sha256,
                                 legacy)
         VALUES (?1, ?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'held', ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![
        at,
        peer,
        packet.skill_name,
        packet.integrity_hash,
        stage,
        reason,
        findings,
        body,
        trust,
        sender,
        bytes,
        truncated.as_ref().map(|t| t.size),
        truncated.as_ref().map(|t| t.sha256.as_str()),
        legacy
    ])?;
    Ok(())
}

fn entry_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<(QuarantineEntry, String)> {
    let status: String = row.get(10)?;
    let findings: String = row.get(9)?;
    let trust: Option<f64> = row.get(12)?;
    let size: Option<i64> = row.get(13)?;
    let sha256: Option<String> = row.get(14)?;
    let legacy_sender: bool = row.get(15)?;
    Ok((
        QuarantineEntry {
            id: row.get(0)?,
            received_at: row.get(1)?,
            last_seen_at: row.get(2)?,
            times_seen: row.get(3)?,
            peer: row.get(4)?,
            skill_name: row.get(5)?,
            integrity_hash: row.get(6)?,
            stage: row.get(7)?,
            reason: row.get(8)?,
            findings: serde_json::from_str(&findings).unwrap_or_default(),
            trust,
            status: QuarantineStatus::from_label(&status),
            legacy_sender,
            truncated: size.map(|size| Truncated { size, sha256: sha256.unwrap_or_default() }),
        },
        row.get(11)?,
    ))
}

const ENTRY_COLUMNS: &str = "id, received_at, last_seen_at, times_seen, peer, skill_name, integrity_hash, stage, \
                             reason, findings, status, packet, trust, body_size, body_sha256, legacy";

/// A held entry and its packet JSON: `NoSuchQuarantineEntry` when there is
/// no such entry, `QuarantineEntryNotHeld` when it was approved or dropped.
fn held_entry(conn: &Connection, id: i64) -> Result<(QuarantineEntry, String), StoreError> {
    let found = conn
        .query_row(
            &format!("SELECT {ENTRY_COLUMNS} FROM quarantine WHERE id = ?1"),
            params![id],
            entry_from_row,
        )
        .optional()?;
    match found {
        None => Err(StoreError::NoSuchQuarantineEntry(id)),
        Some((entry, _)) if entry.status != QuarantineStatus::Held => {
            Err(StoreError::QuarantineEntryNotHeld { id, status: entry.status })
        }
        Some(held) => Ok(held),
    }
}

fn drop_held(conn: &Connection, id: i64) -> Result<QuarantineEntry, StoreError> {
    let (entry, _) = held_entry(conn, id)?;
    set_status(conn, id, QuarantineStatus::Dropped)?;
    let reason = format!("entry {id} from {}, refused at stage {}", entry.peer, entry.stage);
    audit::record(conn, &Source::Operator, &entry.skill_name, "quarantine-drop", &reason)?;
    Ok(entry)
}

fn set_status(conn: &Connection, id: i64, status: QuarantineStatus) -> Result<(), StoreError> {
    conn.execute("UPDATE quarantine SET status = ?1 WHERE id = ?2", params![status.to_string(), id])?;
    Ok(())
}

impl Tx<'_> {
    /// Keeps a refused packet, once per peer, name, hash and stage: a packet
    /// already held, approved or dropped counts as seen again on its entry.
    /// The caps are enforced once, at the end of the transaction
    /// ([`Tx::evict_quarantine_over`]).
    /// A packet whose JSON is over `body_cap` bytes is kept as an excerpt
    /// with its size and SHA-256.
    pub fn quarantine(
        &self,
        packet: &SkillPacket,
        refusal: &Refusal<'_>,
        body_cap: u64,
    ) -> Result<(), StoreError> {
        hold(self.sql, packet, refusal, body_cap)
    }

    /// A held entry and its packet as received, read under the write lock
    /// (see [`Store::quarantined`]); [`StoreError::CannotApprove`] when only
    /// an excerpt of the packet was kept.
    pub fn held_quarantine_entry(&self, id: i64) -> Result<(QuarantineEntry, SkillPacket), StoreError> {
        let (entry, packet) = held_entry(self.sql, id)?;
        if let Some(Truncated { size, sha256 }) = &entry.truncated {
            return Err(StoreError::CannotApprove(format!(
                "the packet was {size} bytes, over the quarantine's body limit ([limits] quarantine_body_bytes), so \
                 only an excerpt was kept (SHA-256 {sha256}); drop the entry, and if you want the skill, have the \
                 sender send it again once the node accepts it (a larger max_skill_bytes or another policy)"
            )));
        }
        Ok((entry, from_json(&packet)?))
    }

    /// Marks an entry approved or dropped.
    pub fn set_quarantine_status(&self, id: i64, status: QuarantineStatus) -> Result<(), StoreError> {
        set_status(self.sql, id, status)
    }
}

impl Store {
    /// Held entries, oldest first.
    pub fn quarantine(&self) -> Result<Vec<QuarantineEntry>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS} FROM quarantine WHERE status = 'held' ORDER BY id"
        ))?;
        let rows =
            stmt.query_map([], entry_from_row)?.map(|r| r.map(|(e, _)| e)).collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// A held entry and its packet as received (`None` when only an excerpt
    /// was kept, see [`QuarantineEntry::truncated`]).
    pub fn quarantined(&self, id: i64) -> Result<(QuarantineEntry, Option<SkillPacket>), StoreError> {
        let (entry, packet) = held_entry(&self.conn(), id)?;
        let packet = match entry.truncated {
            Some(_) => None,
            None => Some(from_json(&packet)?),
        };
        Ok((entry, packet))
    }

    /// Marks a held entry dropped; audited. Returns the entry as it was.
    pub fn quarantine_drop(&self, id: i64) -> Result<QuarantineEntry, StoreError> {
        self.write(|tx| drop_held(tx, id))
    }

    /// Marks dropped every held entry first received longer than `age` ago
    /// (every one when `None`), each audited, in one transaction. Returns them.
    pub fn quarantine_drop_older_than(
        &self,
        age: Option<std::time::Duration>,
    ) -> Result<Vec<QuarantineEntry>, StoreError> {
        let cutoff = age.map(drop_cutoff);
        self.write(|tx| {
            let held: Vec<(i64, String)> = tx
                .prepare_cached("SELECT id, received_at FROM quarantine WHERE status = 'held' ORDER BY id")?
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect::<Result<_, _>>()?;
            held.into_iter()
                .filter(|(_, received)| old_enough(received, cutoff))
                .map(|(id, _)| drop_held(tx, id))
                .collect()
        })
    }
}

/// Whether an entry received at `received` goes in a drop before `cutoff`
/// (every one when `None`). An unreadable time is no age: such an entry
/// goes only with all of them. A node's drop and a hub's share it.
pub(crate) fn old_enough(received: &str, cutoff: Option<Timestamp>) -> bool {
    cutoff.is_none_or(|cutoff| Timestamp::parse(received).is_ok_and(|at| at < cutoff))
}

/// The time before which a held entry is old enough for a drop by `age`
/// (Go's zero time when `age` reaches before any time there is). A node's
/// drop and a hub's share it.
pub(crate) fn drop_cutoff(age: std::time::Duration) -> Timestamp {
    chrono::Duration::from_std(age)
        .ok()
        .and_then(|age| chrono::Utc::now().checked_sub_signed(age))
        .map_or_else(Timestamp::go_zero, Timestamp::from_datetime)
}
