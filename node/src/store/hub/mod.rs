//! The hub store: the ECP serving path on PostgreSQL, so that several
//! stateless `ecp-node serve --store postgres://…` replicas behind a load
//! balancer serve one skill set (#18 item 5).
//!
//! What it holds is what serving needs: the skills and their kept
//! versions, bundles' files (§12: the blobs, in chunks, each once, which
//! file of which kept version is which blob, the bundles pending on a
//! blob), the revocations taken (`SPEC.md` §14) and the outcome claims
//! packets carried (§16), the quarantine (every refusal with its reason and
//! findings, held for review), the audit log,
//! the per-origin and per-sender install counts, the keys origins are known
//! by, the nonces of signed requests, and the hub's identity — its instance
//! id and node key, which every replica serves as its own (the key itself
//! in a key file every replica is given, when there is one: only its id is
//! kept then). Nothing else lives in a replica: a replica can be started,
//! killed or replaced at any time.
//!
//! Consistency across replicas:
//! - a write takes the row of the sequence number `FOR UPDATE` before it
//!   reads what it decides on (after the scan, which needs no lock), so
//!   writers (of every replica) queue there and sequence numbers commit in
//!   order: `GET /ecp/skills?since=N` is exact on any replica; pushes
//!   queue on connections of their own, never on the readers';
//! - a request reads the sequence number from the database (one
//!   primary-key lookup), so a push to one replica is served by another on
//!   the very next request; the encoded answers a replica caches are keyed
//!   by it;
//! - every committed change is announced with `NOTIFY ecp_changes`: each
//!   replica LISTENs (`listen`), reads the sequence number, and lets go of the answers it cached for
//!   older sequence numbers at once ([`HubStore::subscribe`]), instead of
//!   holding them until its next request;
//! - what a cached answer says is read from the database alone — its stats
//!   in its packets' snapshot, its `generatedAt` and `uptimeHours` from the
//!   last change ([`HubStore::stamp`]) — so one ETag is one body on every
//!   replica;
//! - the limits on installs per origin and sender, the bundles' limits on
//!   blobs (the quota per sender on blobs no version lists, the cap on all
//!   blobs), and the nonces that
//!   stop a signed request's replay (their expiry on the database's clock,
//!   a cap per key), are rows of the database: they hold across replicas (the per-client request rate stays per replica — see
//!   `deploy/hub/SIZING.md`).
//!
//! Revocations and outcome evidence are a node's (`revoke`, `evidence`): a
//! revocation provably from the skill's origin is kept under a sequence
//! number of its own and served with the feed by every replica, the hub
//! goes back from the revoked version, which no replica serves again; the
//! claims packets carry are kept per skill and observer and served on the
//! skill's packets. A hub counts no outcomes of its own (its stats'
//! `totalUses` stay 0): agents report to a node's `/v1/` API.
//!
//! Bundles are a node's too (`blobs`, hub migration 4): a pushed bundle is
//! installed only when every file it lists is held and passes its entry,
//! the limits and the bundle scan (checked before the sequence number's
//! lock, the blobs' presence again under it), whole with its files and
//! signature; one pushed before its blobs waits (`pending: …`) and is
//! merged again by the upload of its last blob at any replica; over the
//! quarantine's caps, each sender's oldest waiting bundles stop waiting
//! beyond its share (`pending-released`), never another sender's. Blobs no
//! kept version lists are collected after their grace period.
//!
//! The quarantine is reviewed as a node's is (`quarantine`, hub migration
//! 5): any replica's `/v1/quarantine…` lists, shows, approves and drops
//! the entries every replica shares; an approval is installed under the
//! sequence number's lock and announced like a push, so the other
//! replicas serve it on their next request; the caps on held entries and
//! bytes evict each sender down to its share, from counts a trigger keeps.
//!
//! What it does not do: anything that needs a folder (the skills folder,
//! its import and projection, agents' folders), the local `/v1/` API but
//! its search and the quarantine's review, federation with peers, and
//! proposals (SPEC §17): a hub is never a skill's origin, so it could only
//! relay a proposal, and a relay sends it on to the origin or to the peer
//! it had the skill from (§17.6.1) — a hub has no peers and no address of
//! any origin, so a proposal it took would never arrive. It answers 404 to
//! `/ecp/proposals`, which proposers record as `unsupported` (§17), and
//! the proposer may publish its edit under a name of its own (§17.6.5).
//! The manifest lists `ecp-1.3`, `versions` and `revocations`.
//!
//! # Layout
//!
//! - `mod.rs`: [`HubStore`] — connecting, the pool, the reads of serving.
//! - `schema`: the tables and their versioned migrations.
//! - `merge`: [`HubStore::merge`], a push in one transaction.
//! - `quarantine`: refusals held, their caps, and their review (list,
//!   show, approve, drop).
//! - `blobs`: bundles — blobs in chunks, their limits, refs, pending
//!   bundles, collection; the bundles' gate of a push.
//! - `revoke`: the revocations a push carries, taken and applied; those served.
//! - `evidence`: the outcome claims packets carry, kept, weighed and served.
//! - `listen`: the LISTEN connection that follows other replicas' commits.
//! - `search`: full-text search over the skills served (`GET /v1/search`).

mod blobs;
mod connection;
mod evidence;
mod listen;
mod merge;
mod quarantine;
mod revoke;
mod schema;
mod search;

use std::collections::HashMap;
use std::sync::atomic::AtomicI64;

use ecp_protocol::identity::NodeKey;
use ecp_protocol::{SkillPacket, Timestamp};
use tokio::sync::watch;

use super::{FeedRow, StoreError, Summary, digest_of, from_json, now, packed};
use crate::intake::Limits;
use crate::serving::Stamp;

pub use blobs::{CHUNK, ServedBlob};
pub use connection::{Fault, fault, next_step, parse_url};
use connection::{Pool, connect};

/// The channel every commit is announced on, with its sequence number.
const CHANNEL: &str = "ecp_changes";

/// Connections each replica holds by default for requests that read (the
/// sequence number, a rebuilt feed, a version, `/readyz`, nonces).
pub const DEFAULT_POOL: usize = 4;

/// Connections each replica holds for pushes, apart from the readers'
/// (review H2): pushes queue for the sequence number's lock, and however
/// many wait, reads and `/readyz` still find a connection. Two: one push
/// writes under the lock while the next runs its scan.
pub const PUSH_POOL: usize = 2;

/// The store of a hub replica: a pool of connections to the shared database.
#[derive(Debug)]
pub struct HubStore {
    /// For reads.
    pool: Pool,
    /// For pushes ([`PUSH_POOL`]).
    pushes: Pool,
    instance_id: String,
    key: NodeKey,
    /// When the hub was made.
    created: Timestamp,
    limits: Limits,
    /// The newest sequence number announced (`NOTIFY`) or read.
    sequence: watch::Sender<i64>,
    /// When this replica last collected unused blobs (Unix seconds).
    collected: AtomicI64,
}

impl HubStore {
    /// Connects to the database at `url` with `pool` connections (at
    /// least 1) for reads and [`PUSH_POOL`] for pushes, migrating its
    /// schema and creating the hub's identity on first use — with `key`,
    /// the key of the hub's key file, when given; starts following other
    /// replicas' commits.
    pub fn connect(
        url: &str,
        pool: usize,
        limits: Limits,
        key: Option<NodeKey>,
    ) -> Result<HubStore, StoreError> {
        let config = parse_url(url)?;
        let mut first = connect(&config)?;
        let Identity { instance_id, key, created } = {
            let mut tx = first.transaction()?;
            schema::migrate(&mut tx)?;
            let indexed = search::backfill(&mut tx)?;
            if indexed > 0 {
                tracing::info!(skills = indexed, "hub: indexed the skills held for search");
            }
            let identity = identity(&mut tx, key)?;
            tx.commit()?;
            identity
        };
        let pushes = Pool::open(&config, PUSH_POOL, Vec::new())?;
        let pool = Pool::open(&config, pool, vec![first])?;
        let seq = current_seq(&mut *pool.get()?)?;
        let store = HubStore {
            pool,
            pushes,
            instance_id,
            key,
            created,
            limits,
            sequence: watch::channel(seq).0,
            collected: AtomicI64::new(0),
        };
        listen::start(store.pool.config.clone(), store.sequence.clone());
        Ok(store)
    }

    /// The hub's instance id, shared by its replicas.
    pub fn instance_id(&self) -> &str {
        &self.instance_id
    }

    /// The hub's node key, shared by its replicas.
    pub fn node_key(&self) -> &NodeKey {
        &self.key
    }

    /// The sequence number of the newest committed change, from the
    /// database; blocking.
    pub fn sequence(&self) -> Result<i64, StoreError> {
        let seq = current_seq(&mut *self.pool.get()?)?;
        listen::raise(&self.sequence, seq);
        Ok(seq)
    }

    /// Follows the newest sequence number any replica committed, as
    /// announced by `NOTIFY` (or read).
    pub fn subscribe(&self) -> watch::Receiver<i64> {
        self.sequence.subscribe()
    }

    /// Whether the database answers (readiness).
    pub fn probe(&self) -> Result<(), StoreError> {
        self.pool.get()?.simple_query("SELECT 1")?;
        Ok(())
    }

    /// Counts and names for the manifest.
    pub fn summary(&self) -> Result<Summary, StoreError> {
        let mut conn = self.pool.get()?;
        let mut tx = conn.build_transaction().read_only(true).isolation_level(REPEATABLE).start()?;
        let summary = summary_in(&mut tx)?;
        tx.commit()?;
        Ok(summary)
    }

    /// The `generatedAt` and `uptimeHours` of answers built from `summary`:
    /// its last change, and the hub's age then — functions of the
    /// database alone, the same on every replica (review H9).
    pub fn stamp(&self, summary: &Summary) -> Stamp {
        let changed = summary.last_update.as_deref().and_then(|t| Timestamp::parse(t).ok());
        let generated_at = changed.unwrap_or(self.created).max(self.created);
        let age = (generated_at.as_datetime() - self.created.as_datetime()).num_milliseconds();
        Stamp { generated_at, uptime_hours: age as f64 / 3_600_000.0 }
    }

    /// Visits every served packet (tombstones included) in sequence order,
    /// from one snapshot; returns that snapshot's sequence number and
    /// summary (review H9: the listing's stats are of the same state as
    /// its packets). Rows are streamed, not read whole.
    pub fn each_feed_row(
        &self,
        mut visit: impl FnMut(FeedRow<'_>) -> Result<(), StoreError>,
    ) -> Result<(i64, Summary), StoreError> {
        let mut conn = self.pool.get()?;
        let mut tx = conn.build_transaction().read_only(true).isolation_level(REPEATABLE).start()?;
        let summary = summary_in(&mut tx)?;
        let seq = summary.sequence;
        let claims = evidence::served(&mut tx)?;
        let none: [&str; 0] = [];
        let mut rows = tx.query_raw(
            "SELECT seq, packet, confidence, deprecated, name FROM hub_skills WHERE shareable ORDER BY seq",
            none,
        )?;
        while let Some(row) = postgres::fallible_iterator::FallibleIterator::next(&mut rows)? {
            let (frame, size) = packed::frame(rusqlite::types::ValueRef::Blob(row.get(1)))?;
            let deprecated: bool = row.get(3);
            // A tombstone carries no claims (SPEC §16.2.2).
            let carried = if deprecated { None } else { claims.get(row.get::<_, &str>(4)) };
            visit(FeedRow {
                seq: row.get(0),
                frame: &frame,
                size,
                confidence: row.get(2),
                deprecated,
                claims: carried.map_or(&[][..], Vec::as_slice),
            })?;
        }
        drop(rows);
        tx.commit()?;
        Ok((seq, summary))
    }

    /// The version of `name` whose digest is `digest`, when the skill is
    /// served and active and that version is not a tombstone (`SPEC.md` §5.7).
    pub fn servable(&self, name: &str, digest: &str) -> Result<Option<SkillPacket>, StoreError> {
        let mut conn = self.pool.get()?;
        let rows = conn.query(
            "SELECT COALESCE(v.packet, s.packet) FROM hub_versions v JOIN hub_skills s ON s.name = v.name
             WHERE v.name = $1 AND $2 IN (v.integrity_hash, v.bundle_digest) AND s.shareable AND NOT s.deprecated AND NOT v.deprecated
               AND NOT EXISTS (SELECT 1 FROM hub_revocations r
                               WHERE r.name = v.name AND r.digest IN (v.integrity_hash, v.bundle_digest))
             ORDER BY v.version DESC",
            &[&name, &digest],
        )?;
        for row in rows {
            let packet: SkillPacket = from_json(&packed::json(rusqlite::types::ValueRef::Blob(row.get(0)))?)?;
            if digest_of(&packet) == digest {
                return Ok(Some(packet));
            }
        }
        Ok(None)
    }

    /// The revocations recorded after sequence number `since` (every one
    /// for 0), at most the newest 1,000, in sequence order, each with its
    /// sequence number and as the JSON it travels as (`SPEC.md` §14.4).
    pub fn revocations_after(&self, since: i64) -> Result<Vec<(i64, String)>, StoreError> {
        revoke::after(&mut *self.pool.get()?, since)
    }

    /// Admits the nonce of a signed request by `key_id` for `keep` seconds
    /// from now — the database's now, one clock for every replica (review
    /// H5) — unless any replica admitted it already ([`Admission::Replayed`])
    /// or the key holds `cap` nonces already ([`Admission::Full`]: a key
    /// cannot fill the table). Nonces past their time are forgotten first.
    pub fn admit_nonce(
        &self,
        key_id: &str,
        nonce: &str,
        keep: i64,
        cap: usize,
    ) -> Result<Admission, StoreError> {
        let mut conn = self.pool.get()?;
        let mut tx = conn.transaction()?;
        tx.execute("DELETE FROM hub_nonces WHERE until < EXTRACT(EPOCH FROM now())::BIGINT", &[])?;
        // One key's admissions in turn, across replicas: the cap holds.
        tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&key_id])?;
        let held: i64 = tx.query_one("SELECT COUNT(*) FROM hub_nonces WHERE key_id = $1", &[&key_id])?.get(0);
        let cap = i64::try_from(cap).unwrap_or(i64::MAX);
        let admission = if held >= cap {
            let known = tx
                .query_opt("SELECT 1 FROM hub_nonces WHERE key_id = $1 AND nonce = $2", &[&key_id, &nonce])?;
            if known.is_some() { Admission::Replayed } else { Admission::Full }
        } else {
            let admitted = tx.execute(
                "INSERT INTO hub_nonces (key_id, nonce, until) VALUES ($1, $2, EXTRACT(EPOCH FROM now())::BIGINT + $3)
                 ON CONFLICT DO NOTHING",
                &[&key_id, &nonce, &keep],
            )?;
            if admitted == 1 { Admission::Admitted } else { Admission::Replayed }
        };
        tx.commit()?;
        Ok(admission)
    }
}

/// What became of a signed request's nonce ([`HubStore::admit_nonce`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Taken: the request goes on.
    Admitted,
    /// Admitted before, by this replica or another: a replay.
    Replayed,
    /// The key holds as many nonces as it may: retry when some expire.
    Full,
}

/// [`HubStore::summary`] in `tx`'s snapshot.
fn summary_in(tx: &mut postgres::Transaction<'_>) -> Result<Summary, StoreError> {
    let sequence = current_seq(tx)?;
    let rows =
        tx.query("SELECT name, tags FROM hub_skills WHERE shareable AND NOT deprecated ORDER BY name", &[])?;
    let mut skill_names = Vec::with_capacity(rows.len());
    let mut tag_counts: HashMap<String, usize> = HashMap::new();
    for row in rows {
        skill_names.push(row.get::<_, String>(0));
        for tag in serde_json::from_str::<Vec<String>>(row.get(1)).unwrap_or_default() {
            *tag_counts.entry(tag).or_default() += 1;
        }
    }
    let mut tags: Vec<(String, usize)> = tag_counts.into_iter().collect();
    tags.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let counts = tx.query_one(
        "SELECT (SELECT MAX(updated_at) FROM hub_skills),
                (SELECT COUNT(*) FROM hub_skills WHERE NOT deprecated),
                (SELECT COUNT(*) FROM hub_skills WHERE deprecated),
                (SELECT COALESCE(SUM(entries), 0)::BIGINT FROM hub_quarantine_held)",
        &[],
    )?;
    Ok(Summary {
        sequence,
        skill_names,
        top_tags: tags.into_iter().take(10).map(|(t, _)| t).collect(),
        last_update: counts.get(0),
        external_skills: counts.get(1),
        tombstones: counts.get(2),
        quarantine_held: counts.get(3),
        ..Summary::default()
    })
}

const REPEATABLE: postgres::IsolationLevel = postgres::IsolationLevel::RepeatableRead;

fn current_seq(conn: &mut impl postgres::GenericClient) -> Result<i64, StoreError> {
    let row = conn.query_one("SELECT value FROM hub_meta WHERE key = 'sequence'", &[])?;
    row.get::<_, String>(0).parse().map_err(|_| StoreError::Corrupt("the hub's sequence number".into()))
}

/// The hub's identity: what every replica serves as its own.
struct Identity {
    instance_id: String,
    key: NodeKey,
    /// When the hub was made (for `uptimeHours`, [`HubStore::stamp`]).
    created: Timestamp,
}

/// The hub's identity, created by the first replica (under the migration
/// lock `tx` holds), its node key `file_key` when the replica was given
/// one (review H7: kept out of the database, only its id recorded, so that
/// a replica given another key is refused; a key found in the database is
/// moved out once a replica brings it in a file), else the key kept in
/// `hub_meta`, made there for a new hub.
fn identity(tx: &mut postgres::Transaction<'_>, file_key: Option<NodeKey>) -> Result<Identity, StoreError> {
    let meta = |tx: &mut postgres::Transaction<'_>, key: &str| -> Result<Option<String>, StoreError> {
        let row = tx.query_opt("SELECT value FROM hub_meta WHERE key = $1", &[&key])?;
        Ok(row.map(|r| r.get(0)))
    };
    let in_database = match meta(tx, "node_key")? {
        Some(hex) => {
            let mut seed = [0u8; 32];
            hex::decode_to_slice(hex.trim(), &mut seed)
                .map_err(|_| StoreError::Corrupt("the hub's node key".into()))?;
            Some(NodeKey::from_seed(&seed))
        }
        None => None,
    };
    let recorded = meta(tx, "node_key_id")?.or_else(|| in_database.as_ref().map(NodeKey::key_id));
    let key = match (file_key, in_database) {
        (Some(key), held) => {
            if let Some(id) = recorded.filter(|id| *id != key.key_id()) {
                return Err(StoreError::HubKey(format!(
                    "the key file holds key {}, the hub's key is {id}: give every replica the same key file",
                    key.key_id()
                )));
            }
            if held.is_some() {
                tx.execute("DELETE FROM hub_meta WHERE key = 'node_key'", &[])?;
                tracing::info!("hub: the node key is in the key file now; removed from the database");
            }
            key
        }
        (None, Some(key)) => key,
        (None, None) if recorded.is_some() => {
            return Err(StoreError::HubKey(
                "it is kept in a key file, and this replica was given none: start it with --hub-key-file \
                 (ECP_HUB_KEY_FILE) naming the file every replica uses"
                    .into(),
            ));
        }
        (None, None) => {
            let seed = rand::random::<[u8; 32]>();
            tx.execute("INSERT INTO hub_meta (key, value) VALUES ('node_key', $1)", &[&hex::encode(seed)])?;
            NodeKey::from_seed(&seed)
        }
    };
    tx.execute(
        "INSERT INTO hub_meta (key, value) VALUES ('node_key_id', $1), ('instance_id', $1),
             ('created_at', COALESCE((SELECT MIN(updated_at) FROM hub_skills), $2))
         ON CONFLICT (key) DO NOTHING",
        &[&key.key_id(), &now().to_string()],
    )?;
    let instance_id = meta(tx, "instance_id")?.unwrap_or_else(|| key.key_id());
    let created = meta(tx, "created_at")?
        .and_then(|t| Timestamp::parse(&t).ok())
        .ok_or_else(|| StoreError::Corrupt("the hub's creation time".into()))?;
    Ok(Identity { instance_id, key, created })
}
