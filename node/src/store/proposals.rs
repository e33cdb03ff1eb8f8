//! Derived versions and proposals (#20, `SPEC.md` §17): the agent's edit
//! of a received skill, kept beside the original it derives from, and the
//! proposals this node sent (`outgoing`), holds for its user's review
//! (`incoming`) or passes on toward an origin (`relayed`). A proposal's id
//! names the edit and the version edited, so a copy arriving again folds
//! into the row that holds it (`copies`).

use ecp_protocol::SkillPacket;
use ecp_protocol::proposal::{DerivedFrom, ProposalState};
use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;

use super::{Store, StoreError, from_json, now, to_json};

/// A received skill as this node's agent edited it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DerivedVersion {
    /// The skill's name.
    pub name: String,
    /// What it derives from.
    pub derived_from: DerivedFrom,
    /// The edit as a packet of this node (signed, `provenance.derivedFrom` set).
    #[serde(skip)]
    pub packet: SkillPacket,
    /// `active` (the agent uses it), `retired` (the origin's newer version
    /// replaced it) or `forked` (published under another name).
    pub state: String,
    /// When it was recorded.
    pub created_at: String,
}

/// Which side of a proposal this node is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// This node proposed it.
    Outgoing,
    /// This node is the origin: its user reviews it.
    Incoming,
    /// This node passes it on toward the origin.
    Relayed,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::Outgoing => "outgoing",
            Role::Incoming => "incoming",
            Role::Relayed => "relayed",
        }
    }

    fn parse(text: &str) -> Result<Role, StoreError> {
        match text {
            "outgoing" => Ok(Role::Outgoing),
            "incoming" => Ok(Role::Incoming),
            "relayed" => Ok(Role::Relayed),
            other => Err(StoreError::Corrupt(format!("proposal role {other:?}"))),
        }
    }
}

/// A proposal as the store holds it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalRecord {
    /// Its id (`SPEC.md` §17.3).
    pub id: String,
    /// This node's side of it.
    pub role: Role,
    /// The skill's name.
    pub name: String,
    /// What the edit derives from.
    pub derived_from: DerivedFrom,
    /// `integrityHash` of the edit.
    pub hash: String,
    /// The proposing instance.
    pub proposer: String,
    /// The peer URL it was passed to, if any.
    pub next_hop: Option<String>,
    /// Where it stands.
    pub state: ProposalState,
    /// The origin's note.
    pub note: String,
    /// For an accepted proposal, the version its origin published.
    pub published_hash: String,
    /// Copies received (duplicates fold into one).
    pub copies: i64,
    /// First received or sent.
    pub created_at: String,
    /// Last change of state.
    pub updated_at: String,
    /// The derived packet.
    #[serde(skip)]
    pub packet: SkillPacket,
}

/// A proposal to record ([`Store::record_proposal`]).
#[derive(Debug, Clone)]
pub struct NewProposal<'a> {
    /// Its id.
    pub id: &'a str,
    /// This node's side.
    pub role: Role,
    /// What it derives from.
    pub derived_from: &'a DerivedFrom,
    /// The derived packet.
    pub packet: &'a SkillPacket,
    /// The account that sent it here (`''` when made here).
    pub sender: &'a str,
    /// Its first state.
    pub state: ProposalState,
}

/// What [`Store::record_proposal`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// A new proposal.
    New,
    /// A copy of one held: folded into it.
    Folded,
    /// The sender has sent `limit` proposals in the past hour: refused.
    Limited {
        /// The limit.
        limit: u64,
    },
}

const COLUMNS: &str = "id, role, name, base_origin, base_hash, hash, proposer, next_hop, packet, state, note, \
                       published_hash, copies, created_at, updated_at";

fn record(row: &Row<'_>) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        id: row.get(0)?,
        role: row.get(1)?,
        name: row.get(2)?,
        base_origin: row.get(3)?,
        base_hash: row.get(4)?,
        hash: row.get(5)?,
        proposer: row.get(6)?,
        next_hop: row.get(7)?,
        packet_json: row.get(8)?,
        state: row.get(9)?,
        note: row.get(10)?,
        published_hash: row.get(11)?,
        copies: row.get(12)?,
        created_at: row.get(13)?,
        updated_at: row.get(14)?,
    })
}

/// A row's columns, before the typed ones are read.
struct RawRow {
    id: String,
    role: String,
    state: String,
    name: String,
    base_origin: String,
    base_hash: String,
    hash: String,
    proposer: String,
    next_hop: Option<String>,
    note: String,
    published_hash: String,
    copies: i64,
    created_at: String,
    updated_at: String,
    packet_json: String,
}

fn typed(r: RawRow) -> Result<ProposalRecord, StoreError> {
    Ok(ProposalRecord {
        role: Role::parse(&r.role)?,
        state: r.state.parse().map_err(StoreError::Corrupt)?,
        derived_from: DerivedFrom {
            origin: r.base_origin,
            name: r.name.clone(),
            integrity_hash: r.base_hash,
        },
        packet: from_json(&r.packet_json)?,
        id: r.id,
        name: r.name,
        hash: r.hash,
        proposer: r.proposer,
        next_hop: r.next_hop,
        note: r.note,
        published_hash: r.published_hash,
        copies: r.copies,
        created_at: r.created_at,
        updated_at: r.updated_at,
    })
}

impl Store {
    /// Records `packet`, the agent's edit of the received skill `from`
    /// names, as its active derived version (replacing an earlier edit).
    /// `false` when that very edit is already the active one.
    pub fn put_derived(&self, from: &DerivedFrom, packet: &SkillPacket) -> Result<bool, StoreError> {
        self.write(|tx| {
            let held: Option<(String, String)> = tx
                .query_row("SELECT hash, state FROM derived WHERE name = ?1", params![from.name], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()?;
            if held.is_some_and(|(hash, state)| hash == packet.integrity_hash && state == "active") {
                return Ok(false);
            }
            tx.execute(
                "INSERT INTO derived (name, base_origin, base_hash, hash, packet, state, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'active', ?6)
                 ON CONFLICT (name) DO UPDATE SET base_origin = excluded.base_origin,
                   base_hash = excluded.base_hash, hash = excluded.hash, packet = excluded.packet,
                   state = 'active', created_at = excluded.created_at",
                params![
                    from.name,
                    from.origin,
                    from.integrity_hash,
                    packet.integrity_hash,
                    to_json(packet),
                    now().to_string()
                ],
            )?;
            Ok(true)
        })
    }

    /// The derived version of `name`, whatever its state.
    pub fn derived(&self, name: &str) -> Result<Option<DerivedVersion>, StoreError> {
        let conn = self.conn();
        let row: Option<(String, String, String, String, String, String)> = conn
            .query_row(
                "SELECT base_origin, base_hash, hash, packet, state, created_at FROM derived WHERE name = ?1",
                params![name],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
            )
            .optional()?;
        row.map(|(origin, base, _, packet, state, created_at)| {
            Ok(DerivedVersion {
                name: name.to_owned(),
                derived_from: DerivedFrom { origin, name: name.to_owned(), integrity_hash: base },
                packet: from_json(&packet)?,
                state,
                created_at,
            })
        })
        .transpose()
    }

    /// The names of the active derived versions.
    pub fn active_derived_names(&self) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT name FROM derived WHERE state = 'active' ORDER BY name")?;
        let names = stmt.query_map([], |r| r.get(0))?.collect::<Result<Vec<String>, _>>()?;
        Ok(names)
    }

    /// Sets the state of the derived version of `name`; `false` when there is none.
    pub fn set_derived_state(&self, name: &str, state: &str) -> Result<bool, StoreError> {
        self.write(|tx| {
            Ok(tx.execute("UPDATE derived SET state = ?2 WHERE name = ?1", params![name, state])? > 0)
        })
    }

    /// Records a proposal, or folds a copy into the one held under its id.
    /// A new one from `sender` is refused when `per_hour` (0: no limit)
    /// proposals of that sender arrived in the past hour.
    pub fn record_proposal(&self, new: &NewProposal<'_>, per_hour: u64) -> Result<Recorded, StoreError> {
        let at = now();
        let unix = at.unix_seconds();
        self.write(|tx| {
            let folded = tx.execute(
                "UPDATE proposals SET copies = copies + 1 WHERE id = ?1",
                params![new.id],
            )?;
            if folded > 0 {
                return Ok(Recorded::Folded);
            }
            if per_hour > 0 && !new.sender.is_empty() {
                let recent: i64 = tx.query_row(
                    "SELECT COUNT(*) FROM proposals WHERE sender = ?1 AND received_unix > ?2",
                    params![new.sender, unix - 3600],
                    |r| r.get(0),
                )?;
                if recent as u64 >= per_hour {
                    return Ok(Recorded::Limited { limit: per_hour });
                }
            }
            let text = at.to_string();
            tx.execute(
                "INSERT INTO proposals (id, role, name, base_origin, base_hash, hash, proposer, sender, packet,
                   state, received_unix, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12)",
                params![
                    new.id,
                    new.role.as_str(),
                    new.derived_from.name,
                    new.derived_from.origin,
                    new.derived_from.integrity_hash,
                    new.packet.integrity_hash,
                    new.packet.origin_instance,
                    new.sender,
                    to_json(new.packet),
                    new.state.as_str(),
                    unix,
                    text
                ],
            )?;
            Ok(Recorded::New)
        })
    }

    /// The proposal `id`.
    pub fn proposal(&self, id: &str) -> Result<Option<ProposalRecord>, StoreError> {
        let conn = self.conn();
        let sql = format!("SELECT {COLUMNS} FROM proposals WHERE id = ?1");
        let row = conn.query_row(&sql, params![id], record).optional()?;
        row.map(typed).transpose()
    }

    /// Every proposal, newest first; only those of `role` when given.
    pub fn proposals(&self, role: Option<Role>) -> Result<Vec<ProposalRecord>, StoreError> {
        let conn = self.conn();
        let sql = format!(
            "SELECT {COLUMNS} FROM proposals WHERE ?1 IS NULL OR role = ?1 ORDER BY received_unix DESC, id"
        );
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(params![role.map(Role::as_str)], record)?.collect::<Result<Vec<_>, _>>()?;
        rows.into_iter().map(typed).collect()
    }

    /// Records where proposal `id` stands; `next_hop` when it was passed on.
    pub fn set_proposal_state(
        &self,
        id: &str,
        state: ProposalState,
        note: &str,
        published_hash: &str,
        next_hop: Option<&str>,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute(
                "UPDATE proposals SET state = ?2, note = ?3, published_hash = ?4,
                   next_hop = COALESCE(?5, next_hop), updated_at = ?6 WHERE id = ?1",
                params![id, state.as_str(), note, published_hash, next_hop, now().to_string()],
            )?;
            Ok(())
        })
    }
}
