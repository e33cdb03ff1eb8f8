//! The durable store: SQLite (WAL) is the source of truth for skills, their
//! versions, the quarantine, the audit log, the sequence number and each
//! peer's federation state.
//!
//! Every change bumps the sequence number in the same transaction, so
//! `GET /ecp/skills?since=N` is exact. All methods block: async callers use
//! `spawn_blocking`. One connection behind a mutex serialises this process's
//! writers; other processes (the CLI on the same `--data`) are serialised by
//! SQLite's own locks, and [`Store::data_version`] tells when they changed
//! something.
//!
//! What it does not do: write the skills folder ([`crate::projection`]) or
//! decide merges ([`crate::intake`] does, with
//! [`ecp_protocol::merge_knowledge`]). A merge is applied through [`Tx`]:
//! [`Store::transaction`] hands out one write transaction whose primitives
//! (read the view, install a version, quarantine a refusal, append to the
//! audit log, check and count the per-origin limits, read and mark a
//! quarantine entry) the caller combines; it commits all or nothing.
//!
//! # Layout
//!
//! - `mod.rs`: opening, the sequence number, [`StoreError`], [`Tx`].
//! - `schema`: the tables and their migrations.
//! - `source`: [`Source`], who made a change, and its one stored text form.
//! - `skills`: skills and their versions — reads for serving, installs, tombstones.
//! - [`identity`]: the node's key, the signature on what it authors, and
//!   the keys it knows other origins by.
//! - `packed`: the stored form of packets (zstd, with the built-in
//!   dictionary), and reading every form.
//! - `compact`: the stored form of hashes (32 bytes) and times (Unix
//!   nanoseconds), shown as text by virtual columns.
//! - [`search`]: ranked full-text search (FTS5 matching; BM25-like ranking
//!   with field weights and an evidence boost; a tags filter) and its
//!   index, which follows every write and is rebuilt at open when missing
//!   or corrupt.
//! - `sharing`: a local skill's privacy, stored with its content; the
//!   withdrawal served when a shared skill becomes private; the operator's marks.
//! - `quarantine`: refused packets held for review, deduplicated.
//! - `quarantine_evict`: the quarantine's caps, shared fairly between senders.
//! - `inbox`: received skills waiting for the user's review, and the
//!   user's verdicts on versions.
//! - `audit`: the audit log; its entries told to an observer after each
//!   commit ([`Store::observe_audit`]); [`AuditReader`], read-only access for
//!   `ecp-node audit`.
//! - `deletions`: the deletion guard's records — folders marked, deletions
//!   held for the user (the skills folder's, and peers' withdrawals with
//!   what accepting them needs), and what a sender's withdrawals weigh against.
//! - `folder_entries`: what the skills-folder import keeps of each skill
//!   folder across passes (a skill named otherwise than its folder, why one
//!   is not shared, the warnings of one that is).
//! - `outcomes`: outcomes agents report, each skill's score kept across
//!   versions, retirement and restore.
//! - `outcomes_mesh`: peers' outcome evidence (`SPEC.md` §16), the newest
//!   claim per skill and observer, and the claims served packets carry.
//! - [`origin_limits`]: installs per origin, new skills per sender, per rolling hour and day.
//! - `proposals`: derived versions of received skills, and proposals —
//!   outgoing, incoming for review, relayed (#20).
//! - `peers`: each peer's federation state (cursor, ETags, failures, pushes).
//! - `blobs`: bundles' blobs — which are held and who brought them, which
//!   kept version uses which, the quota and cap, collection after the grace
//!   period, the acceptance check of a bundle ([`Tx::bundle_decision`]).
//! - `versions`: a skill's history, one version by number or digest, and
//!   the versions held — pinned or locked — which pruning keeps (#25).
//! - `revocations`: versions their origins revoked (`SPEC.md` §14): refused,
//!   not served, sent on; a received skill going back from one.
//! - [`hub`]: the hub store — the serving path on PostgreSQL, shared by
//!   several replicas (`--store postgres://…`).
//! - `bulk`: a rollback journal while a pull fills an empty store, and
//!   back to WAL after.
//! - `blob_files`: the blobs' bytes, files under `<data>/blobs/`, written
//!   through a temporary file, checked, synced and renamed.

mod audit;
mod blob_files;
mod blobs;
mod bulk;
mod compact;
mod deletions;
mod folder_entries;
pub mod hub;
pub mod identity;
mod inbox;
pub mod origin_limits;
mod outcomes;
mod outcomes_mesh;
mod packed;
mod peers;
mod proposals;
mod quarantine;
mod quarantine_evict;
mod revocations;
mod schema;
pub mod search;
mod sharing;
mod skills;
mod source;
mod versions;

use std::path::Path;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use ecp_protocol::Timestamp;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

pub use audit::{AUDIT_PAGE, AuditEntry, AuditFilter, AuditObserver, AuditReader};
pub use blob_files::{BLOBS_DIR, BlobFiles, BlobWriter, VerifiedBlob, WriteError};
pub use blobs::{
    BlobLimits, BlobRefused, BlobUsage, DEFAULT_BLOB_GRACE, DEFAULT_BLOB_QUOTA_BYTES,
    DEFAULT_BLOB_STORE_BYTES, make_tombstone,
};
pub use bulk::BULK_MAX_SKILLS;
pub use deletions::{HeldDeletion, Received};
pub use folder_entries::{FolderEntry, ShareWarning};
pub use inbox::{InboxEntry, Offer, Verdict};
pub use origin_limits::{OriginExcess, OriginLimited, OriginLimits, PerOrigin};
pub use outcomes::{KEPT_PER_SKILL, Outcome, Recorded, Report, RetireRule, Retired, Score, TooMany};
pub use outcomes_mesh::{Mesh, MeshClaim, add_claims};
pub use packed::unpack_into;
pub use peers::{PeerKind, PeerState, PullRecord};
pub use proposals::{DerivedVersion, NewProposal, ProposalRecord, Recorded as ProposalRecorded, Role};
pub use quarantine::{QuarantineEntry, QuarantineStatus, Refusal, Truncated};
pub use quarantine_evict::QuarantineCaps;
pub use revocations::RolledBack;
pub use sharing::{LocalSkill, Mark, Private, SECRET_CODE};
pub use skills::{Change, FeedRow, HeldSkill, Served, SkillRecord, SkillVersion, Summary};
pub use source::Source;
pub use versions::{Hold, Pick, VersionEntry, digest_of};

/// File name of the database inside the data folder.
pub const DB_FILE: &str = "ecp.sqlite3";

/// A store failure. Internal detail (SQL, paths) goes to logs, never to clients.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL reported an error (the hub store, `--store postgres://…`).
    #[error("PostgreSQL error: {0}")]
    Postgres(#[from] postgres::Error),
    /// `--store` does not name a store this node can open.
    #[error("invalid --store: {0}; give postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")]
    BadStoreUrl(String),
    /// The data folder could not be created or read.
    #[error("cannot use the data folder: {0}")]
    Io(#[from] std::io::Error),
    /// A stored JSON value no longer decodes.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// Another process has filled the store in bulk mode (`store::bulk`)
    /// for longer than an open waits for it, in seconds.
    #[error(
        "another process (an `ecp-node pull` into an empty store) has been filling this store with a rollback \
         journal for over {0} s; start this one once it has ended"
    )]
    BulkFill(u64),
    /// The hub's key file (`hub_key_file`) does not hold the hub's key, or
    /// the hub's key is in a file and this replica was given none.
    #[error("the hub's key: {0}")]
    HubKey(String),
    /// The database was written by a newer ecp-node.
    #[error("database schema {found} is newer than this ecp-node knows ({known}); upgrade ecp-node")]
    SchemaTooNew {
        /// Schema version found.
        found: usize,
        /// Newest schema version this build knows.
        known: usize,
    },
    /// No such skill.
    #[error("no skill named {0:?}")]
    NoSuchSkill(String),
    /// The skill is external: only local skills are made private or shared here.
    #[error(
        "{0:?} is an external skill (from a peer); only this node's own skills are made private or shared \
         — whether received skills are served again is [policy] reshare_external"
    )]
    NotLocal(String),
    /// A quarantined packet cannot be installed even by an operator.
    #[error("cannot approve this entry: {0}")]
    CannotApprove(String),
    /// No quarantine entry with this id (never, or evicted).
    #[error("no held quarantine entry with id {0}")]
    NoSuchQuarantineEntry(i64),
    /// The entry exists but was already approved or dropped.
    #[error("no held quarantine entry with id {id}: it was already {status}")]
    QuarantineEntryNotHeld {
        /// The entry.
        id: i64,
        /// What happened to it.
        status: QuarantineStatus,
    },
    /// No pending inbox entry with this id (never, decided, or replaced by a newer version).
    #[error("no pending inbox entry with id {0}")]
    NoSuchInboxEntry(i64),
    /// No held deletion with this id (never, or already accepted or rejected).
    #[error("no held deletion with id {0}")]
    NoSuchDeletion(i64),
    /// The quarantined packet was refused by the safety scan or has scan
    /// findings: approving it needs the operator's explicit force.
    #[error(
        "entry {id} was refused at stage {stage} with {findings} scan finding(s); read them (`ecp-node quarantine \
         show {id}`) and approve with --force only if you trust the skill"
    )]
    NeedsForce {
        /// The entry.
        id: i64,
        /// The refusing stage.
        stage: String,
        /// How many scan findings it has.
        findings: usize,
    },
    /// The update would push an origin over its limit of new skills; nothing was applied.
    #[error(transparent)]
    OriginLimited(#[from] OriginLimited),
    /// A bundle was to be installed without every one of its blobs held.
    #[error("the bundle {0:?} cannot be installed: not every file it lists is held")]
    BundleNotHeld(String),
    /// A blob is over its sender's quota or the store's cap.
    #[error(transparent)]
    BlobRefused(#[from] BlobRefused),
    /// A folder breaks a rule of bundles (`SPEC.md` §12.4–§12.6).
    #[error("invalid bundle: {0}")]
    Bundle(#[from] ecp_protocol::bundle::BundleError),
}

/// The node's database.
#[derive(Debug)]
pub struct Store {
    /// One connection for this process; the mutex makes each method (and
    /// each [`Store::transaction`]) atomic with respect to the others: a merge
    /// reads its view and applies its decisions without another writer in between.
    conn: Mutex<Connection>,
    instance_id: String,
    /// Superseded versions kept per skill (`[limits] history_depth`); an
    /// atomic so that the library can set it on a shared store.
    history_depth: AtomicU64,
    /// Told of every audit entry once its transaction has committed
    /// (metrics, the live event stream); see [`Store::observe_audit`].
    observer: audit::ObserverSlot,
    /// The newest audit entry the observer was told of.
    observed: AtomicI64,
    /// The bytes of bundles' files.
    blobs: BlobFiles,
    /// The node's own key: signs every packet it authors.
    key: ecp_protocol::identity::NodeKey,
    /// Counts of common words remembered between searches.
    word_counts: Mutex<search::WordCounts>,
    /// The database file, for a checkpoint beside the store's connection
    /// ([`Store::checkpoint_beside`]).
    path: std::path::PathBuf,
}

/// The page size of a new database, in bytes.
const PAGE_SIZE: i64 = 4096;

/// How long a statement waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Default: superseded versions kept per skill.
pub const DEFAULT_HISTORY_DEPTH: u64 = 10;

impl Store {
    /// Opens (creating if needed) the store in `dir`, migrating its schema
    /// and creating the node key and instance id on first use (a new node's
    /// instance id is its key id; [`identity`]).
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(dir)?;
        let mut conn = Connection::open(dir.join(DB_FILE))?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Before WAL mode, which fixes the page size of a new database (an
        // existing one keeps its own: the pragma is then a no-op). 4 KiB:
        // since the packets are packed against a dictionary (migration 23) a
        // typical skill's row is about 1.3 KB and three fit a page, and each
        // of the ~48 tables and indexes a node rarely fills costs a page of
        // 4 KiB, not 8 (#18 item 2, fifth pass: the store after a pull of
        // 1,000 skills 1.75× → 1.59× its bodies, of 10,000 1.44× → 1.42×).
        // Before that, at 1.6 KB a row, 8 KiB pages had measured smaller.
        conn.pragma_update(None, "page_size", PAGE_SIZE)?;
        bulk::wal_at_open(&conn, &dir.join(DB_FILE))?;
        // FULL: a commit is on disk before the node answers, so an
        // acknowledged push survives an OS crash or power loss, not only a
        // killed process (NORMAL in WAL mode may lose the last commits).
        conn.pragma_update(None, "synchronous", "FULL")?;
        // Checkpoint every 16 MB of WAL rather than SQLite's 4 MB: a batch of
        // 100 new skills writes about 3 MB, so the default checkpointed (and
        // fsynced, holding the write lock) after nearly every push, and copied
        // the same index pages to the database again each time. Durability is
        // the WAL's either way.
        conn.pragma_update(None, "wal_autocheckpoint", 4096)?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // More statements are cached than rusqlite's default 16: a merge alone
        // uses nine, and evicting them between the reads of a busy node meant
        // parsing SQL again on every change.
        conn.set_prepared_statement_cache_capacity(64);
        schema::migrate(&mut conn)?;
        search::register(&conn)?;
        search::check(&mut conn)?;
        let key = identity::load_or_create(dir)?;
        let instance_id = ensure_instance_id(&mut conn, &key.key_id())?;
        identity::sign_unsigned_local(&mut conn, &key)?;
        Ok(Store {
            conn: Mutex::new(conn),
            instance_id,
            history_depth: AtomicU64::new(DEFAULT_HISTORY_DEPTH),
            observer: audit::ObserverSlot::default(),
            observed: AtomicI64::new(0),
            blobs: BlobFiles::open(dir)?,
            key,
            word_counts: Mutex::default(),
            path: dir.join(DB_FILE),
        })
    }

    /// Keeps at most `depth` superseded versions of each skill from the next
    /// change on (0: only the current version); older ones are pruned as
    /// each skill changes.
    pub fn set_history_depth(&self, depth: u64) {
        self.history_depth.store(depth, Ordering::Relaxed);
    }

    fn history_depth(&self) -> u64 {
        self.history_depth.load(Ordering::Relaxed)
    }

    /// This node's instance id, created on first start and kept for ever.
    pub fn instance_id(&self) -> &str {
        &self.instance_id
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite half-written
        // (transactions roll back on drop), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The sequence number of the newest change.
    pub fn sequence(&self) -> Result<i64, StoreError> {
        Ok(current_seq(&self.conn())?)
    }

    /// SQLite's `data_version`: changes when another connection (another
    /// process) commits, so a server can notice the CLI's writes.
    pub fn data_version(&self) -> Result<i64, StoreError> {
        Ok(self.conn().query_row("PRAGMA data_version", [], |row| row.get(0))?)
    }

    /// Whether the store can take its write lock within `wait`: begins an
    /// immediate transaction and rolls it back, writing nothing (readiness,
    /// `/readyz`). Another process holding the database, or a database
    /// SQLite can no longer write, fails it.
    pub fn probe_write(&self, wait: Duration) -> Result<(), StoreError> {
        let conn = self.conn();
        conn.busy_timeout(wait)?;
        let probed = conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK;");
        conn.busy_timeout(BUSY_TIMEOUT)?;
        Ok(probed?)
    }

    /// Copies the pages the WAL holds into the database file from a
    /// connection of its own, neither taking the store's lock nor waiting
    /// for writers (a passive checkpoint); blocking. Durability is the
    /// WAL's either way: this moves committed pages only, so that the
    /// checkpoint SQLite makes when the store closes finds nothing left to
    /// copy. A pull runs it while the skills folder's last changes are
    /// written, rather than after them at the close (#18 item 1).
    pub fn checkpoint_beside(&self) -> Result<(), StoreError> {
        let conn = Connection::open(&self.path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// Runs `f` in an immediate (write-locked) transaction and commits it.
    fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // What an earlier transaction on this thread left (a panic) is not this one's.
        search::discard_pending();
        let out = f(&tx).and_then(|out| Ok(search::flush_pending(&tx).map(|()| out)?));
        let out = out.inspect_err(|_| search::discard_pending())?;
        tx.commit()?;
        self.tell_observer(&conn);
        Ok(out)
    }

    /// Runs `f` with one write transaction and commits what it did; when `f`
    /// fails, nothing it did is kept. Other writers (this process's and
    /// other processes') wait until it ends.
    pub fn transaction<T>(&self, f: impl FnOnce(&Tx<'_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        self.write(|sql| {
            f(&Tx { sql, history_depth: self.history_depth(), blobs: &self.blobs, key: &self.key })
        })
    }
}

/// One write transaction of [`Store::transaction`]: the store's primitives,
/// each a step of a change the caller decided. Every change it installs
/// takes the next sequence number.
pub struct Tx<'a> {
    sql: &'a Transaction<'a>,
    history_depth: u64,
    blobs: &'a BlobFiles,
    key: &'a ecp_protocol::identity::NodeKey,
}

/// Now, as the wire's timestamp type.
pub fn now() -> Timestamp {
    Timestamp::from(chrono::Utc::now())
}

// Cached statements: the sequence number is read and written once per
// change, and parsing the SQL each time cost more than running it.
fn meta_get(conn: &Connection, key: &str) -> Result<Option<String>, rusqlite::Error> {
    conn.prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row(params![key], |row| row.get(0))
        .optional()
}

fn meta_set(conn: &Connection, key: &str, value: &str) -> Result<(), rusqlite::Error> {
    conn.prepare_cached(
        "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    )?
    .execute(params![key, value])?;
    Ok(())
}

fn current_seq(conn: &Connection) -> Result<i64, rusqlite::Error> {
    Ok(meta_get(conn, "sequence")?.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// Takes the next sequence number; call only inside a write transaction.
fn next_seq(tx: &Transaction<'_>) -> Result<i64, rusqlite::Error> {
    let next = current_seq(tx)? + 1;
    meta_set(tx, "sequence", &next.to_string())?;
    Ok(next)
}

/// The stored instance id; `new_id` (the key id) is stored on first use.
fn ensure_instance_id(conn: &mut Connection, new_id: &str) -> Result<String, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let id = match meta_get(&tx, "instance_id")? {
        Some(id) => id,
        None => {
            meta_set(&tx, "instance_id", new_id)?;
            new_id.to_owned()
        }
    };
    tx.commit()?;
    Ok(id)
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("store values serialise to JSON")
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_are_durable_before_they_are_acknowledged() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let conn = store.conn();
        let synchronous: i64 = conn.pragma_query_value(None, "synchronous", |row| row.get(0)).unwrap();
        assert_eq!(synchronous, 2, "synchronous = FULL");
        let journal: String = conn.pragma_query_value(None, "journal_mode", |row| row.get(0)).unwrap();
        assert_eq!(journal, "wal");
    }

    #[test]
    fn a_checkpoint_beside_copies_every_committed_page_and_leaves_the_store_open() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let packet = |name: &str| {
            ecp_protocol::SkillPacket::new(
                &ecp_protocol::Origin::new("i", "u", "linux/amd64", "1"),
                name,
                "d",
                &format!("---\nname: {name}\ndescription: d\n---\nbody\n"),
                0.9,
                now(),
            )
        };
        let install = |name: &str| {
            store
                .transaction(|tx| {
                    tx.install(&packet(name), ecp_protocol::SkillKind::External, true, &Source::Operator)
                })
                .unwrap();
        };
        install("first");
        // Skills held by the database file alone, as if its WAL were lost:
        // what has left the WAL.
        let in_the_file = || -> i64 {
            let copy = tempfile::tempdir().unwrap();
            std::fs::copy(dir.path().join(DB_FILE), copy.path().join("alone.sqlite3")).unwrap();
            let conn = Connection::open(copy.path().join("alone.sqlite3")).unwrap();
            // No such table yet: the schema waits in the WAL too.
            conn.query_row("SELECT COUNT(*) FROM skills", [], |r| r.get(0)).unwrap_or(0)
        };
        assert_eq!(in_the_file(), 0, "the commit waits in the WAL");
        store.checkpoint_beside().unwrap();
        assert_eq!(in_the_file(), 1, "copied into the database file");
        install("second");
        assert!(store.skill("first").unwrap().is_some() && store.skill("second").unwrap().is_some());
    }

    #[test]
    fn a_new_database_has_4_kib_pages_and_an_older_one_keeps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let page_size = |store: &Store| -> i64 {
            store.conn().pragma_query_value(None, "page_size", |row| row.get(0)).unwrap()
        };
        assert_eq!(page_size(&Store::open(dir.path()).unwrap()), PAGE_SIZE);
        // A database made by an older version, with its 8 KiB pages.
        let old = tempfile::tempdir().unwrap();
        let conn = Connection::open(old.path().join(DB_FILE)).unwrap();
        conn.execute_batch("PRAGMA page_size = 8192; PRAGMA journal_mode = WAL; CREATE TABLE t (x);")
            .unwrap();
        drop(conn);
        let store = Store::open(old.path()).unwrap();
        assert_eq!(page_size(&store), 8192, "an existing database is not rewritten");
        let packet = ecp_protocol::SkillPacket::new(
            &ecp_protocol::Origin::new("i", "u", "linux/amd64", "1"),
            "kept",
            "d",
            "---\nname: kept\ndescription: d\n---\nbody\n",
            0.9,
            now(),
        );
        store
            .transaction(|tx| tx.install(&packet, ecp_protocol::SkillKind::External, true, &Source::Operator))
            .unwrap();
        drop(store);
        let store = Store::open(old.path()).unwrap();
        assert_eq!(page_size(&store), 8192);
        assert!(store.skill("kept").unwrap().is_some(), "what it stored is still read");
    }
}
