//! Skills and their versions: reads for serving, writes for every change.
//!
//! Each change keeps the version it replaces, up to the store's history
//! depth ([`Store::set_history_depth`]): older superseded versions are
//! pruned in the same transaction, so updates cannot grow the database
//! without bound — but a pinned or locked one (`versions`).
//!
//! Packets are stored compressed ([`super::packed`]), one copy per version:
//! the current version's in `skills`, a superseded one's in its
//! `skill_versions` row (NULL while it is current; an update moves the copy
//! there). So is its integrity hash (migration 24): a version row's `hash`
//! is NULL while it is the current one, read from `skills`.

use std::collections::HashMap;

use ecp_protocol::identity::NodeKey;
use ecp_protocol::merge::content_key;
use ecp_protocol::{SkillKind, SkillPacket, StoredSkill, Timestamp};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};
use serde::Serialize;

use super::{Source, Store, StoreError, Tx, from_json, next_seq, now, packed, to_json};

/// One committed change to a skill: what the skills folder must now show.
#[derive(Debug, Clone)]
pub struct Change {
    /// Sequence number of the change.
    pub seq: i64,
    /// The skill's packet as now stored (`deprecated` for a tombstone).
    pub packet: SkillPacket,
    /// Whether the skill is external (the skills folder marks whose file is whose).
    pub kind: SkillKind,
    /// Kept out of the skills folder (review intake: waiting in the inbox,
    /// or a version the user rejected): the projection leaves the file as is.
    pub withheld: bool,
}

/// A skill as the local API and the CLI list it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillRecord {
    /// Skill name.
    pub name: String,
    /// `local` or `external`.
    pub kind: &'static str,
    /// Origin instance.
    pub origin: String,
    /// Whether `origin` is verified (`SPEC.md` §6.6): false for a copy
    /// received from an ECP/1.1 sender or under the Go default identity,
    /// which the true origin's version replaces.
    pub origin_verified: bool,
    /// The key id that signed the current version (`SPEC.md` §13):
    /// `Some` — "origin verified" by its key; `None` — "origin claimed".
    pub origin_key: Option<String>,
    /// Current version number (1 = first).
    pub version: i64,
    /// The node's confidence in it: the prior moved by the outcomes
    /// agents reported ([`crate::outcomes::confidence`]); the prior itself
    /// while there are none.
    pub confidence: f64,
    /// Stored confidence: the frontmatter's, or as received (lowered by trust).
    pub prior_confidence: f64,
    /// What agents reported about it, all versions together (#19).
    pub score: super::Score,
    /// Tombstoned.
    pub deprecated: bool,
    /// Served to peers (false for a private skill).
    pub shareable: bool,
    /// Why it stays on this node (`frontmatter`, `ecpignore`, `unlisted`,
    /// `operator`, `folder`, `secret`); `null` when it is not private.
    pub private: Option<String>,
    /// The reason in words, with what to do to share it.
    pub private_reason: Option<String>,
    /// One-line description.
    pub description: String,
    /// Tags.
    pub tags: Vec<String>,
    /// `createdAt` of the current version.
    pub created_at: String,
    /// When this node last changed it.
    pub updated_at: String,
    /// Sequence number of its last change.
    pub seq: i64,
    /// `integrityHash` of the current body.
    pub integrity_hash: String,
}

impl SkillRecord {
    /// Its kind, as the projection takes it.
    pub fn skill_kind(&self) -> SkillKind {
        kind_from_label(self.kind)
    }
}

/// One historical version of a skill.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillVersion {
    /// Version number.
    pub version: i64,
    /// Sequence number of the change.
    pub seq: i64,
    /// When it was recorded.
    pub recorded_at: String,
    /// Who made the change.
    pub source: String,
    /// `integrityHash` of that version's body.
    pub integrity_hash: String,
    /// Whether that version is a tombstone.
    pub deprecated: bool,
}

const RECORD_COLUMNS: &str = "name, kind, origin, version, confidence, deprecated, \
                              shareable AND private IS NULL, description, tags, \
                              created_at, updated_at, seq, integrity_hash, private, private_reason, \
                              origin_verified, origin_key";

fn record_from_row(row: &Row<'_>) -> rusqlite::Result<SkillRecord> {
    let kind: String = row.get(1)?;
    let tags: String = row.get(8)?;
    Ok(SkillRecord {
        name: row.get(0)?,
        kind: if kind == "local" { "local" } else { "external" },
        origin: row.get(2)?,
        version: row.get(3)?,
        confidence: row.get(4)?,
        prior_confidence: row.get(4)?,
        score: super::Score::default(),
        deprecated: row.get(5)?,
        shareable: row.get(6)?,
        description: row.get(7)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        created_at: row.get(9)?,
        updated_at: row.get(10)?,
        seq: row.get(11)?,
        integrity_hash: row.get(12)?,
        private: row.get(13)?,
        private_reason: row.get(14)?,
        origin_verified: row.get(15)?,
        origin_key: row.get(16)?,
    })
}

/// Gives each record its score and the confidence that follows from it.
fn with_scores(conn: &Connection, records: &mut [SkillRecord]) -> Result<(), StoreError> {
    let mut scores = super::outcomes::scores(conn)?;
    for record in records {
        if let Some(score) = scores.remove(&record.name) {
            record.confidence = crate::outcomes::confidence(record.prior_confidence, &score);
            record.score = score;
        }
    }
    Ok(())
}

pub(super) fn kind_from_label(label: &str) -> SkillKind {
    if label == "local" { SkillKind::Local } else { SkillKind::External }
}

/// Writes a new current version of `packet.skill_name`, keeping at most
/// `depth` superseded versions; returns the change. A local packet is
/// signed with `key` first (`SPEC.md` §13): this node is its origin.
pub(super) fn upsert(
    tx: &Transaction<'_>,
    packet: &SkillPacket,
    kind: SkillKind,
    shareable: bool,
    source: &Source,
    (depth, key): (u64, &NodeKey),
) -> Result<Change, StoreError> {
    // A retired skill stays out of the skills folder, and a retired
    // external one is not served, whatever version comes (#19).
    let retired = super::outcomes::is_retired(tx, &packet.skill_name)?;
    let shareable = shareable && !(retired && kind == SkillKind::External);
    let signed;
    let packet = if kind == SkillKind::Local {
        let mut copy = packet.clone();
        super::identity::sign(&mut copy, key);
        signed = copy;
        &signed
    } else {
        packet
    };
    let seq = next_seq(tx)?;
    let recorded = super::compact::time(now());
    let hash = super::compact::hash(&packet.integrity_hash);
    let version: i64 = tx
        .prepare_cached("SELECT version FROM skills WHERE name = ?1")?
        .query_row(params![packet.skill_name], |r| r.get(0))
        .optional()?
        .unwrap_or(0)
        + 1;
    let packed = super::packed::pack_stored(&to_json(packet));
    if version > 1 && (depth > 0 || super::versions::is_held(tx, &packet.skill_name, version - 1)?) {
        // The version superseded keeps its own copy and hash from now on:
        // until now they were the ones in `skills` (one stored copy per version).
        tx.prepare_cached(
            "UPDATE skill_versions SET (packet, hash) = (SELECT packet, hash FROM skills WHERE name = ?1)
             WHERE name = ?1 AND version = ?2",
        )?
        .execute(params![packet.skill_name, version - 1])?;
    }
    tx.prepare_cached(
        "INSERT INTO skills (name, local, origin, version, hash, created, updated, deprecated,
                             shareable, confidence, description, tags, seq, packet, bundle_digest,
                             origin_verified, origin_key)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
         ON CONFLICT (name) DO UPDATE SET
             local = excluded.local, origin = excluded.origin, version = excluded.version,
             hash = excluded.hash, created = excluded.created,
             updated = excluded.updated, deprecated = excluded.deprecated,
             shareable = excluded.shareable, confidence = excluded.confidence,
             description = excluded.description, tags = excluded.tags, seq = excluded.seq,
             packet = excluded.packet, bundle_digest = excluded.bundle_digest,
             origin_verified = excluded.origin_verified, origin_key = excluded.origin_key,
             -- Sharing decisions are about this node's own skills.
             private = CASE WHEN excluded.local THEN skills.private END,
             private_reason = CASE WHEN excluded.local THEN skills.private_reason END,
             withdrawal = CASE WHEN excluded.local THEN skills.withdrawal END",
    )?
    .execute(params![
        packet.skill_name,
        kind == SkillKind::Local,
        packet.origin_instance,
        version,
        hash,
        super::compact::time(packet.created_at),
        recorded,
        packet.deprecated,
        shareable,
        packet.confidence,
        packet.skill_description,
        to_json(&packet.tags),
        seq,
        packed,
        packet.bundle_digest,
        kind == SkillKind::Local
            || packet.origin_signature.is_some()
            || !packet.provenance.as_ref().is_some_and(|p| p.origin_unverified),
        packet.origin_signature.as_ref().map(|s| s.key_id.as_str()),
    ])?;
    // Current: its hash and packet are those in `skills` (NULL here).
    let actor = super::source::actor_id(tx, source)?;
    tx.prepare_cached(
        "INSERT INTO skill_versions (name, version, seq, recorded, actor, deprecated)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![packet.skill_name, version, seq, recorded, actor, packet.deprecated])?;
    super::blobs::add_refs(tx, packet, version)?;
    super::inbox::withdraw(tx, &packet.skill_name, source, packet.deprecated)?;
    super::search::follow(tx, packet, seq)?;
    let oldest_kept = version.saturating_sub(i64::try_from(depth).unwrap_or(i64::MAX));
    // A pinned or locked version stays whatever its age.
    tx.prepare_cached(
        "DELETE FROM skill_versions WHERE name = ?1 AND version < ?2
         AND version NOT IN (SELECT version FROM version_holds WHERE name = ?1)",
    )?
    .execute(params![packet.skill_name, oldest_kept])?;
    Ok(Change { seq, packet: packet.clone(), kind, withheld: retired })
}

/// The current packet and kind of a skill.
pub(super) fn current(
    conn: &Connection,
    name: &str,
) -> Result<Option<(SkillPacket, SkillKind, bool)>, StoreError> {
    let row = conn
        .prepare_cached("SELECT packet, kind, shareable FROM skills WHERE name = ?1")?
        .query_row(params![name], |row| {
            Ok((packed::column(row, 0)?, row.get::<_, String>(1)?, row.get::<_, bool>(2)?))
        })
        .optional()?;
    match row {
        None => Ok(None),
        Some((json, kind, shareable)) => {
            let kind = kind_from_label(&kind);
            Ok(Some((from_json(&json)?, kind, shareable)))
        }
    }
}

/// What `GET /ecp/skills` and the manifest are made of.
#[derive(Debug, Clone, Default)]
pub struct Served {
    /// Sequence number the listing is consistent with.
    pub seq: i64,
    /// Packets as stored JSON, in sequence order.
    pub packets: Vec<String>,
    /// Sum of their stored confidences (for the update's `avgConfidence`).
    pub confidence_sum: f64,
}

/// The fields of a skill's record that an import compares a file with
/// ([`Store::held_skills`]).
#[derive(Debug, Clone)]
pub struct HeldSkill {
    /// `local` or `external`.
    pub kind: &'static str,
    /// Tombstoned.
    pub deprecated: bool,
    /// The current version's body hash.
    pub integrity_hash: String,
    /// The current version's description.
    pub description: String,
}

/// One row of [`Store::each_feed_row`]: a served packet as it is stored.
#[derive(Debug, Clone, Copy)]
pub struct FeedRow<'a> {
    /// The sequence number of the skill's newest change.
    pub seq: i64,
    /// The packet's JSON as a zstd frame ([`super::unpack_into`] restores it).
    pub frame: &'a [u8],
    /// The length of that JSON.
    pub size: usize,
    /// Its stored confidence.
    pub confidence: f64,
    /// Whether it is a tombstone (served only to `?since=` requests).
    pub deprecated: bool,
    /// The outcome claims the packet carries (`SPEC.md` §16.2), added to
    /// its JSON with [`super::add_claims`]; none for a tombstone.
    pub claims: &'a [ecp_protocol::OutcomeClaim],
}

/// What the manifest and `status` report.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Sequence number of the newest change.
    pub sequence: i64,
    /// Names of the active skills served to peers, sorted.
    pub skill_names: Vec<String>,
    /// Up to 10 most used tags of those skills.
    pub top_tags: Vec<String>,
    /// When the newest change happened (RFC 3339), if any.
    pub last_update: Option<String>,
    /// Active local skills.
    pub local_skills: i64,
    /// Active external skills.
    pub external_skills: i64,
    /// Tombstones.
    pub tombstones: i64,
    /// Active local skills that stay on this node (held back for secrets included).
    pub private_skills: i64,
    /// Of those, the ones held back because a secret scan found credentials.
    pub held_for_secrets: i64,
    /// Quarantine entries waiting for review.
    pub quarantine_held: i64,
    /// Skills from peers waiting in the inbox (review intake).
    pub inbox_waiting: i64,
}

/// The content key of the packet in column `i` (stored packed), when the
/// query read it: the key of its body (`SPEC.md` §6.6.4).
fn held_content_key(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    if matches!(row.get_ref(i)?, rusqlite::types::ValueRef::Null) {
        return Ok(None);
    }
    let json = packed::column(row, i)?;
    let packet: SkillPacket = serde_json::from_str(&json)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Blob, e.into()))?;
    Ok(Some(content_key(&packet.skill_body)))
}

impl Tx<'_> {
    /// The merge's view of the named skills (tombstones included). With
    /// `content`, each with its body's content key, so that laundered
    /// copies from a legacy sender are recognised (`SPEC.md` §6.6.4); the
    /// bodies are read only then.
    pub fn view(&self, names: &[&str], content: bool) -> Result<HashMap<String, StoredSkill>, StoreError> {
        let mut stmt = self.sql.prepare_cached(
            "SELECT kind, origin, integrity_hash, created_at, deprecated, confidence, bundle_digest,
                    origin_verified, CASE WHEN ?2 THEN packet END, origin_key
             FROM skills WHERE name = ?1",
        )?;
        let mut view = HashMap::with_capacity(names.len());
        for &name in names {
            if view.contains_key(name) {
                continue;
            }
            let held = stmt
                .query_row(params![name, content], |row| {
                    let kind: String = row.get(0)?;
                    let created: String = row.get(3)?;
                    Ok(StoredSkill {
                        kind: kind_from_label(&kind),
                        origin: row.get(1)?,
                        integrity_hash: row.get(2)?,
                        created_at: Timestamp::parse(&created).unwrap_or_default(),
                        deprecated: row.get(4)?,
                        confidence: Some(row.get(5)?),
                        bundle_digest: row.get(6)?,
                        origin_verified: row.get(7)?,
                        content_key: held_content_key(row, 8)?,
                        origin_key: row.get(9)?,
                    })
                })
                .optional()?;
            if let Some(held) = held {
                view.insert(name.to_owned(), held);
            }
        }
        Ok(view)
    }

    /// Writes `packet` as the new current version of its skill; the change
    /// to project.
    pub fn install(
        &self,
        packet: &SkillPacket,
        kind: SkillKind,
        shareable: bool,
        source: &Source,
    ) -> Result<Change, StoreError> {
        upsert(self.sql, packet, kind, shareable, source, (self.history_depth, self.key))
    }

    /// Whether a skill named `name` is held (tombstones included), and as which kind.
    pub fn kind_of(&self, name: &str) -> Result<Option<SkillKind>, StoreError> {
        Ok(current(self.sql, name)?.map(|(_, kind, _)| kind))
    }
}

impl Store {
    /// Counts and names for the manifest and `status`.
    pub fn summary(&self) -> Result<Summary, StoreError> {
        let conn = self.conn();
        let sequence = super::current_seq(&conn)?;
        let mut stmt =
            conn.prepare_cached("SELECT name, tags FROM served WHERE deprecated = 0 ORDER BY name")?;
        let mut skill_names = Vec::new();
        let mut tag_counts: HashMap<String, usize> = HashMap::new();
        let rows = stmt.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))?;
        for row in rows {
            let (name, tags) = row?;
            skill_names.push(name);
            for tag in serde_json::from_str::<Vec<String>>(&tags).unwrap_or_default() {
                *tag_counts.entry(tag).or_default() += 1;
            }
        }
        let mut tags: Vec<(String, usize)> = tag_counts.into_iter().collect();
        tags.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let top_tags = tags.into_iter().take(10).map(|(t, _)| t).collect();
        let count = |sql: &str| -> Result<i64, rusqlite::Error> { conn.query_row(sql, [], |r| r.get(0)) };
        Ok(Summary {
            sequence,
            skill_names,
            top_tags,
            last_update: conn.query_row("SELECT MAX(updated_at) FROM skills", [], |r| r.get(0))?,
            local_skills: count("SELECT COUNT(*) FROM skills WHERE kind = 'local' AND deprecated = 0")?,
            external_skills: count("SELECT COUNT(*) FROM skills WHERE kind = 'external' AND deprecated = 0")?,
            tombstones: count("SELECT COUNT(*) FROM skills WHERE deprecated = 1")?,
            private_skills: count(
                "SELECT COUNT(*) FROM skills WHERE kind = 'local' AND deprecated = 0 AND private IS NOT NULL",
            )?,
            held_for_secrets: conn.query_row(
                "SELECT COUNT(*) FROM skills WHERE kind = 'local' AND deprecated = 0 AND private = ?1",
                params![super::SECRET_CODE],
                |r| r.get(0),
            )?,
            quarantine_held: count("SELECT COUNT(*) FROM quarantine WHERE status = 'held'")?,
            inbox_waiting: count("SELECT COUNT(*) FROM inbox")?,
        })
    }

    /// The served packets (the `served` view: private skills left out,
    /// withdrawn ones as their withdrawal): without `since`, every active one; with it,
    /// every one changed after sequence `since`, tombstones included.
    pub fn served_packets(&self, since: Option<i64>) -> Result<Served, StoreError> {
        let claims = self.served_claims()?;
        let conn = self.conn();
        let seq = super::current_seq(&conn)?;
        type Row = (String, String, f64, bool);
        let read = |sql: &str, args: &[&dyn rusqlite::ToSql]| -> Result<Vec<Row>, StoreError> {
            let mut stmt = conn.prepare_cached(sql)?;
            let rows = stmt
                .query_map(args, |row| Ok((row.get(0)?, packed::column(row, 1)?, row.get(2)?, row.get(3)?)))?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        };
        let rows = match since {
            None => read(
                "SELECT name, packet, confidence, deprecated FROM served WHERE deprecated = 0 ORDER BY seq",
                &[],
            )?,
            Some(since) => read(
                "SELECT name, packet, confidence, deprecated FROM served WHERE seq > ?1 ORDER BY seq",
                &[&since],
            )?,
        };
        let confidence_sum = rows.iter().map(|(_, _, c, _)| c).sum();
        let packets = rows
            .into_iter()
            .map(|(name, packet, _, deprecated)| match claims.get(&name) {
                Some(carried) if !deprecated => {
                    let mut json = packet.into_bytes();
                    super::add_claims(&mut json, carried);
                    String::from_utf8(json).expect("JSON with claims added stays UTF-8")
                }
                _ => packet,
            })
            .collect();
        Ok(Served { seq, packets, confidence_sum })
    }

    /// Every served packet (tombstones and withdrawals included) in sequence
    /// order, still packed, with its sequence number, stored confidence and
    /// whether it is a tombstone, handed to `visit` one at a time: what the
    /// HTTP layer's feed of `GET /ecp/skills` answers is made of, without the
    /// whole listing's JSON in memory at once. Returns the sequence number
    /// the rows are consistent with.
    pub fn each_feed_row(
        &self,
        mut visit: impl FnMut(FeedRow<'_>) -> Result<(), StoreError>,
    ) -> Result<i64, StoreError> {
        let claims = self.served_claims()?;
        let conn = self.conn();
        let seq = super::current_seq(&conn)?;
        let mut stmt =
            conn.prepare_cached("SELECT seq, packet, confidence, deprecated, name FROM served ORDER BY seq")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let (frame, size) = packed::frame(row.get_ref(1)?)?;
            let deprecated: bool = row.get(3)?;
            let name: String = row.get(4)?;
            let carried = match claims.get(&name) {
                Some(carried) if !deprecated => carried.as_slice(),
                _ => &[],
            };
            visit(FeedRow {
                seq: row.get(0)?,
                frame: &frame,
                size,
                confidence: row.get(2)?,
                deprecated,
                claims: carried,
            })?;
        }
        Ok(seq)
    }

    /// The current packet and kind of every skill (tombstones included), in
    /// one query: what the skills folder must show.
    pub fn current_packets(&self) -> Result<Vec<(SkillPacket, SkillKind)>, StoreError> {
        let all = self.current_packets_after("", usize::MAX)?;
        Ok(all.into_iter().map(|(_, packet, kind)| (packet, kind)).collect())
    }

    /// [`Store::current_packets`] a page at a time: at most `limit` skills
    /// whose names sort after `after` (`""`: from the first), in name order,
    /// each with its name (the cursor of the next page), so that walking
    /// 100,000 skills holds one page in memory, not all of them.
    pub fn current_packets_after(
        &self,
        after: &str,
        limit: usize,
    ) -> Result<Vec<(String, SkillPacket, SkillKind)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached("SELECT name, packet, kind FROM skills WHERE name > ?1 ORDER BY name LIMIT ?2")?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt
            .query_map(params![after, limit], |row| {
                Ok((row.get::<_, String>(0)?, packed::column(row, 1)?, row.get::<_, String>(2)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(name, json, kind)| Ok((name, from_json(&json)?, kind_from_label(&kind))))
            .collect()
    }

    /// Every skill (tombstones included), by name.
    pub fn list_skills(&self) -> Result<Vec<SkillRecord>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("SELECT {RECORD_COLUMNS} FROM skills ORDER BY name"))?;
        let mut rows = stmt.query_map([], record_from_row)?.collect::<Result<Vec<_>, _>>()?;
        with_scores(&conn, &mut rows)?;
        Ok(rows)
    }

    /// What the importer compares the agent's files with, for every skill:
    /// a few fields of [`Store::list_skills`]'s records, since at 100,000
    /// skills the whole records cost about 135 MB at every start.
    pub fn held_skills(&self) -> Result<HashMap<String, HeldSkill>, StoreError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT name, kind, deprecated, integrity_hash, description FROM skills")?;
        let rows = stmt.query_map([], |row| {
            let kind: String = row.get(1)?;
            Ok((
                row.get(0)?,
                HeldSkill {
                    kind: if kind == "local" { "local" } else { "external" },
                    deprecated: row.get(2)?,
                    integrity_hash: row.get(3)?,
                    description: row.get(4)?,
                },
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One skill: its record, current packet and every version.
    pub fn skill(
        &self,
        name: &str,
    ) -> Result<Option<(SkillRecord, SkillPacket, Vec<SkillVersion>)>, StoreError> {
        let conn = self.conn();
        let record = conn
            .query_row(
                &format!("SELECT {RECORD_COLUMNS} FROM skills WHERE name = ?1"),
                params![name],
                record_from_row,
            )
            .optional()?;
        let Some(mut record) = record else { return Ok(None) };
        with_scores(&conn, std::slice::from_mut(&mut record))?;
        let Some((packet, _, _)) = current(&conn, name)? else { return Ok(None) };
        let mut stmt = conn.prepare_cached(concat!(
            "SELECT v.version, v.seq, ",
            super::compact::time_text!("v.recorded"),
            ", a.name, ",
            super::compact::hash_text!("COALESCE(v.hash, s.hash)"),
            ", v.deprecated
             FROM skill_versions v JOIN actors a ON a.id = v.actor JOIN skills s ON s.name = v.name
             WHERE v.name = ?1 ORDER BY v.version"
        ))?;
        let versions = stmt
            .query_map(params![name], |row| {
                Ok(SkillVersion {
                    version: row.get(0)?,
                    seq: row.get(1)?,
                    recorded_at: row.get(2)?,
                    source: row.get(3)?,
                    integrity_hash: row.get(4)?,
                    deprecated: row.get(5)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some((record, packet, versions)))
    }

    /// Names of the active local skills whose current version was made by
    /// `source` (the skills-folder import asks which skills it owns).
    pub fn active_local_from(&self, source: &Source) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT s.name FROM skills s
             JOIN skill_versions v ON v.name = s.name AND v.version = s.version
             WHERE s.kind = 'local' AND s.deprecated = 0
               AND v.actor = (SELECT id FROM actors WHERE name = ?1)
             ORDER BY s.name",
        )?;
        let names = stmt.query_map(params![source], |row| row.get(0))?.collect::<Result<Vec<_>, _>>()?;
        Ok(names)
    }

    /// Tombstones a skill: a new version with `deprecated: true`. A local
    /// skill's tombstone is served, so the deletion travels to every peer; an
    /// external skill removed here is only withdrawn here (not served), since
    /// only its origin may withdraw it for everyone.
    pub fn tombstone(&self, name: &str, source: Source) -> Result<Option<Change>, StoreError> {
        self.write(|tx| {
            let Some((mut packet, kind, _)) = current(tx, name)? else {
                return Err(StoreError::NoSuchSkill(name.to_owned()));
            };
            if packet.deprecated {
                return Ok(None);
            }
            super::blobs::make_tombstone(&mut packet);
            let shareable = match kind {
                SkillKind::Local => {
                    // A newer createdAt makes the tombstone win at every peer.
                    packet.created_at = now().max(packet.created_at);
                    true
                }
                SkillKind::External => false,
            };
            let change = upsert(tx, &packet, kind, shareable, &source, (self.history_depth(), &self.key))?;
            super::audit::record(tx, &source, name, "tombstone", "")?;
            Ok(Some(change))
        })
    }
}
