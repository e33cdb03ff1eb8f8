//! The SQLite schema and its migrations.
//!
//! Each migration runs once, in order, inside a transaction; `meta.schema`
//! records how far a database has come. A new (empty) database runs them
//! all in one transaction. Never edit a shipped migration: add
//! the next one. The one that rebuilds the skills' tables (23) gives back
//! the space of the old ones (`VACUUM`) after it has run.

use rusqlite::{Connection, params};

use super::StoreError;

/// Migration 24's rebuild of a small table keyed by text (`$columns`, as
/// its migrations left them, comments aside) as WITHOUT ROWID: its rows
/// kept, the B-tree of its key serving as the table (a rowid table keeps a
/// second one for a TEXT PRIMARY KEY: a page each, most of them empty).
macro_rules! without_rowid {
    ($table:ident, $columns:literal) => {
        concat!(
            "CREATE TABLE ",
            stringify!($table),
            "_24 (",
            $columns,
            ") STRICT, WITHOUT ROWID;\n",
            "INSERT INTO ",
            stringify!($table),
            "_24 SELECT * FROM ",
            stringify!($table),
            ";\n",
            "DROP TABLE ",
            stringify!($table),
            ";\n",
            "ALTER TABLE ",
            stringify!($table),
            "_24 RENAME TO ",
            stringify!($table),
            ";\n"
        )
    };
}

const MIGRATIONS: &[&str] = &[
    // 1: the first schema.
    r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;

    -- The current version of every skill this node holds, tombstones included.
    CREATE TABLE skills (
        name           TEXT PRIMARY KEY,
        kind           TEXT NOT NULL CHECK (kind IN ('local', 'external')),
        origin         TEXT NOT NULL,
        version        INTEGER NOT NULL,
        integrity_hash TEXT NOT NULL,
        created_at     TEXT NOT NULL,   -- the packet's createdAt
        updated_at     TEXT NOT NULL,   -- when this node last changed it
        deprecated     INTEGER NOT NULL,
        shareable      INTEGER NOT NULL,
        confidence     REAL NOT NULL,   -- as stored: lowered for external skills
        description    TEXT NOT NULL,
        tags           TEXT NOT NULL,   -- JSON array
        seq            INTEGER NOT NULL,-- sequence number of its last change
        packet         TEXT NOT NULL    -- the packet as served, JSON
    ) STRICT;
    CREATE INDEX skills_by_seq ON skills (seq);

    -- Every version ever held: each change is a new immutable row.
    CREATE TABLE skill_versions (
        name           TEXT NOT NULL,
        version        INTEGER NOT NULL,
        seq            INTEGER NOT NULL,
        recorded_at    TEXT NOT NULL,
        source         TEXT NOT NULL,   -- who made the change: peer id, 'skills-dir', 'cli'
        integrity_hash TEXT NOT NULL,
        deprecated     INTEGER NOT NULL,
        packet         TEXT NOT NULL,
        PRIMARY KEY (name, version)
    ) STRICT;

    -- Refused packets with their reasons: nothing a peer sent is dropped silently.
    CREATE TABLE quarantine (
        id             INTEGER PRIMARY KEY,
        received_at    TEXT NOT NULL,
        last_seen_at   TEXT NOT NULL,
        times_seen     INTEGER NOT NULL,
        peer           TEXT NOT NULL,
        skill_name     TEXT NOT NULL,
        integrity_hash TEXT NOT NULL,
        stage          TEXT NOT NULL,
        reason         TEXT NOT NULL,
        findings       TEXT NOT NULL,   -- JSON array of scanner findings
        packet         TEXT NOT NULL,   -- the packet as received, JSON
        status         TEXT NOT NULL CHECK (status IN ('held', 'approved', 'dropped'))
    ) STRICT;
    CREATE INDEX quarantine_dedupe ON quarantine (peer, skill_name, integrity_hash, stage, status);

    -- Every merge decision and every operator action.
    CREATE TABLE audit (
        id         INTEGER PRIMARY KEY,
        at         TEXT NOT NULL,
        peer       TEXT NOT NULL,
        skill_name TEXT NOT NULL,
        decision   TEXT NOT NULL,
        reason     TEXT NOT NULL
    ) STRICT;
    "#,
    // 2: federation — what this node knows about each peer it pulls from or pushes to.
    r#"
    CREATE TABLE peers (
        url                  TEXT PRIMARY KEY,  -- normalised base URL, no trailing slash
        instance             TEXT NOT NULL,     -- its instance id, from its manifest ('' until known)
        kind                 TEXT NOT NULL CHECK (kind IN ('configured', 'discovered', 'manual')),
        cursor               INTEGER NOT NULL,  -- sequenceNum of its last merged answer (?since=)
        etag                 TEXT NOT NULL,     -- ETag of that answer
        manifest_etag        TEXT NOT NULL,     -- ETag of its last manifest
        manifest_digest      TEXT NOT NULL,     -- digest of its last manifest (Go peers send sequenceNum 0)
        last_success         TEXT,              -- last completed pull round
        last_attempt         TEXT,              -- last pull round started
        failures             INTEGER NOT NULL,  -- consecutive failed pull rounds
        last_error           TEXT NOT NULL,     -- why the last failed round failed (no secrets, no paths)
        packets_received     INTEGER NOT NULL,  -- packets in the last round's answer
        acked_seq            INTEGER NOT NULL,  -- our sequence number it last acknowledged (push)
        last_push            TEXT,              -- last successful push
        push_failures        INTEGER NOT NULL,  -- consecutive failed pushes
        push_error           TEXT NOT NULL,     -- why the last failed push failed
        packets_sent         INTEGER NOT NULL   -- packets in the last successful push
    ) STRICT;
    "#,
    // 3: limits — new skills per origin (rolling windows survive restarts), and
    // the trust a quarantined packet was refused under (an approval lowers by it).
    r#"
    CREATE TABLE origin_installs (
        origin   TEXT NOT NULL,     -- originInstance of skills installed as new
        at       INTEGER NOT NULL,  -- Unix seconds
        installs INTEGER NOT NULL,  -- how many in that second
        PRIMARY KEY (origin, at)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX origin_installs_by_time ON origin_installs (at);
    ALTER TABLE quarantine ADD COLUMN trust REAL;  -- NULL for entries held before this migration
    "#,
    // 4: hardening (#12) — the quarantine accounted per sender (who the node
    // verified sent it, not who the update claims) with its held entries and
    // bytes kept up to date by triggers, so a refusal costs O(1) and eviction
    // reads one small table; new skills counted per sender as per origin.
    r#"
    ALTER TABLE quarantine ADD COLUMN sender TEXT NOT NULL DEFAULT '';   -- verified sender; '' = peer
    ALTER TABLE quarantine ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;  -- what the entry stores, in bytes
    -- A packet over [limits] quarantine_body_bytes is kept as an excerpt:
    -- its size and SHA-256 here, the first bytes of its JSON in packet.
    ALTER TABLE quarantine ADD COLUMN body_size INTEGER;   -- NULL: kept whole
    ALTER TABLE quarantine ADD COLUMN body_sha256 TEXT;
    UPDATE quarantine SET sender = peer, bytes = length(packet) + length(findings) + length(reason);
    CREATE INDEX quarantine_by_sender ON quarantine (status, sender, id);

    -- Held entries and their bytes, per sender and in total: what eviction reads.
    CREATE TABLE quarantine_held (
        sender  TEXT PRIMARY KEY,
        entries INTEGER NOT NULL,
        bytes   INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE quarantine_totals (
        id      INTEGER PRIMARY KEY CHECK (id = 1),
        entries INTEGER NOT NULL,
        bytes   INTEGER NOT NULL
    ) STRICT;
    INSERT INTO quarantine_held (sender, entries, bytes)
        SELECT sender, COUNT(*), SUM(bytes) FROM quarantine WHERE status = 'held' GROUP BY sender;
    INSERT INTO quarantine_totals (id, entries, bytes)
        SELECT 1, COUNT(*), COALESCE(SUM(bytes), 0) FROM quarantine WHERE status = 'held';

    CREATE TRIGGER quarantine_held_added AFTER INSERT ON quarantine WHEN NEW.status = 'held' BEGIN
        INSERT INTO quarantine_held (sender, entries, bytes) VALUES (NEW.sender, 1, NEW.bytes)
            ON CONFLICT (sender) DO UPDATE SET entries = entries + 1, bytes = bytes + excluded.bytes;
        UPDATE quarantine_totals SET entries = entries + 1, bytes = bytes + NEW.bytes;
    END;
    CREATE TRIGGER quarantine_held_reviewed AFTER UPDATE OF status ON quarantine
        WHEN OLD.status = 'held' AND NEW.status <> 'held' BEGIN
        UPDATE quarantine_held SET entries = entries - 1, bytes = bytes - OLD.bytes WHERE sender = OLD.sender;
        DELETE FROM quarantine_held WHERE sender = OLD.sender AND entries <= 0;
        UPDATE quarantine_totals SET entries = entries - 1, bytes = bytes - OLD.bytes;
    END;
    CREATE TRIGGER quarantine_held_removed AFTER DELETE ON quarantine WHEN OLD.status = 'held' BEGIN
        UPDATE quarantine_held SET entries = entries - 1, bytes = bytes - OLD.bytes WHERE sender = OLD.sender;
        DELETE FROM quarantine_held WHERE sender = OLD.sender AND entries <= 0;
        UPDATE quarantine_totals SET entries = entries - 1, bytes = bytes - OLD.bytes;
    END;

    -- New skills per verified sender, as origin_installs per origin.
    CREATE TABLE sender_installs (
        sender   TEXT NOT NULL,
        at       INTEGER NOT NULL,
        installs INTEGER NOT NULL,
        PRIMARY KEY (sender, at)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX sender_installs_by_time ON sender_installs (at);
    "#,
    // 5: sharing (#13) — a local skill may stay home: stored and projected,
    // never served. `served` is what peers get, and the one thing the
    // manifest, the feed of `GET /ecp/skills` and pushes read.
    r#"
    ALTER TABLE skills ADD COLUMN private TEXT;         -- NULL: shared; else a code (frontmatter, secret, ...)
    ALTER TABLE skills ADD COLUMN private_reason TEXT;  -- why, and what to do to share it
    ALTER TABLE skills ADD COLUMN withdrawal TEXT;      -- the tombstone served instead, when it was served before (JSON)

    -- What the operator said: `skill private NAME`, `skill share NAME --allow-secrets`.
    CREATE TABLE sharing_marks (
        name          TEXT PRIMARY KEY,
        private       INTEGER NOT NULL,
        allow_secrets TEXT             -- the integrityHash whose secret findings may leave
    ) STRICT;

    CREATE VIEW served AS
        SELECT name, seq, confidence, tags,
               COALESCE(withdrawal, packet) AS packet,
               (deprecated OR withdrawal IS NOT NULL) AS deprecated
        FROM skills
        WHERE shareable = 1 AND (private IS NULL OR withdrawal IS NOT NULL);
    "#,
    // 6: review intake (#13) — received skills waiting for the user before
    // they reach the agent's folder, and the user's decisions by content.
    r#"
    -- One pending entry per skill: a newer version replaces it under a new id
    -- (AUTOINCREMENT: an id is never reused, so accepting an id accepts the
    -- very content that was shown under it).
    CREATE TABLE inbox (
        id             INTEGER PRIMARY KEY AUTOINCREMENT,
        skill_name     TEXT NOT NULL UNIQUE,
        integrity_hash TEXT NOT NULL,   -- of the stored version waiting
        peer           TEXT NOT NULL,   -- who sent it (source label)
        received_at    TEXT NOT NULL
    ) STRICT;

    -- What the user decided about a version (by integrityHash): an accepted
    -- one is not offered again, nor is a rejected one.
    CREATE TABLE inbox_decisions (
        skill_name     TEXT NOT NULL,
        integrity_hash TEXT NOT NULL,
        decision       TEXT NOT NULL CHECK (decision IN ('accepted', 'rejected')),
        decided_at     TEXT NOT NULL,
        PRIMARY KEY (skill_name, integrity_hash)
    ) STRICT, WITHOUT ROWID;
    "#,
    // 7: the deletion guard (#23 item 2) — the skills folders this node has
    // marked, and bulk deletions held for the user.
    r#"
    -- A folder listed here carries a marker the node wrote: without it the
    -- folder is unavailable, never empty.
    CREATE TABLE folder_markers (
        path           TEXT PRIMARY KEY,
        marked_at      TEXT NOT NULL
    ) STRICT;

    -- A deletion held until the user accepts or rejects it (AUTOINCREMENT:
    -- an id is never reused, so accepting an id accepts what was shown).
    CREATE TABLE held_deletions (
        id             INTEGER PRIMARY KEY AUTOINCREMENT,
        held_at        TEXT NOT NULL,
        source         TEXT NOT NULL,   -- whose deletion: 'skills-dir'
        names          TEXT NOT NULL    -- JSON array of the skills it would tombstone
    ) STRICT;
    "#,
    // 8: the deletion guard's receiving side (#23 item 2) — withdrawals a
    // peer sent, held with what accepting them needs.
    r#"
    -- Who sent them and the tombstones as received (JSON); NULL: the skills folder's.
    ALTER TABLE held_deletions ADD COLUMN received TEXT;
    "#,
    // 9: bundles (#26, SPEC §12) — the blobs held, each once by its SHA-256
    // (the bytes are files under <data>/blobs/), which file of which kept
    // version uses which blob, and the bundle digest of each skill's current
    // version (the merge's version rule compares it).
    r#"
    ALTER TABLE skills ADD COLUMN bundle_digest TEXT NOT NULL DEFAULT '';

    -- Every blob held. An unreferenced one (an upload ahead of its packet)
    -- counts against its sender's quota until a kept version lists it, and is
    -- collected after the grace period.
    CREATE TABLE blobs (
        sha256      TEXT PRIMARY KEY,
        size        INTEGER NOT NULL,
        sender      TEXT NOT NULL,     -- who brought it: 'peer:<url>', 'addr:<ip>'; '' for this node's own
        received_at INTEGER NOT NULL   -- Unix seconds: the grace period counts from here
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX blobs_by_sender ON blobs (sender);

    -- The files of each kept version but its SKILL.md (the packet's body):
    -- pruning a version drops its references.
    CREATE TABLE blob_refs (
        name    TEXT NOT NULL,
        version INTEGER NOT NULL,
        path    TEXT NOT NULL,
        sha256  TEXT NOT NULL,
        PRIMARY KEY (name, version, path),
        FOREIGN KEY (name, version) REFERENCES skill_versions (name, version) ON DELETE CASCADE
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX blob_refs_by_blob ON blob_refs (sha256);

    -- Before this migration a received bundle was stored with its listing but
    -- without its files: served so, a bundle-aware peer would wait for blobs
    -- no one holds. It keeps its SKILL.md, as a plain skill.
    UPDATE skills SET packet = json_remove(packet, '$.files', '$.bundleDigest')
        WHERE json_type(packet, '$.files') IS NOT NULL OR json_type(packet, '$.bundleDigest') IS NOT NULL;
    UPDATE skill_versions SET packet = json_remove(packet, '$.files', '$.bundleDigest')
        WHERE json_type(packet, '$.files') IS NOT NULL OR json_type(packet, '$.bundleDigest') IS NOT NULL;
    "#,
    // 10 (#26 item 4): what the skills-folder import keeps of
    // each skill folder across passes — the skill a folder named otherwise
    // holds, why one is not shared, the warnings of one that is.
    r#"
    CREATE TABLE folder_entries (
        folder         INTEGER NOT NULL, -- the skills folder's number (1 for the first)
        entry          TEXT NOT NULL,    -- the skill's folder inside it
        name           TEXT,             -- the skill it holds (frontmatter name); NULL: unknown
        code           TEXT,             -- why it is not imported; NULL: imported
        reason         TEXT,
        warnings       TEXT NOT NULL,    -- JSON array of {code, message}
        PRIMARY KEY (folder, entry)
    ) STRICT;
    "#,
    // 11 (#17 item 1, SPEC §6.6): whether each held skill's origin is
    // verified. A copy from an ECP/1.1 sender is not, and gives way to the
    // true origin. Held before: those under the Go default identity were
    // laundered by a Go node.
    r#"
    ALTER TABLE skills ADD COLUMN origin_verified INTEGER NOT NULL DEFAULT 1;
    UPDATE skills SET origin_verified = 0 WHERE kind = 'external' AND origin = 'ok-agent';
    "#,
    // 12 (#18 item 2): packets stored compressed (zstd, store/packed.rs), one
    // copy per version — the current version's lives in `skills` only, its
    // `skill_versions` row holds NULL until a newer version supersedes it.
    r#"
    DROP VIEW served;

    ALTER TABLE skills ADD COLUMN packed BLOB NOT NULL DEFAULT x'';
    UPDATE skills SET packed = ecp_pack(packet);
    ALTER TABLE skills DROP COLUMN packet;
    ALTER TABLE skills RENAME COLUMN packed TO packet;

    ALTER TABLE skill_versions ADD COLUMN packed BLOB;  -- NULL: the current version, in skills.packet
    UPDATE skill_versions SET packed = ecp_pack(packet)
        WHERE NOT EXISTS (SELECT 1 FROM skills s WHERE s.name = skill_versions.name AND s.version = skill_versions.version);
    ALTER TABLE skill_versions DROP COLUMN packet;
    ALTER TABLE skill_versions RENAME COLUMN packed TO packet;

    CREATE VIEW served AS
        SELECT name, seq, confidence, tags,
               COALESCE(withdrawal, packet) AS packet,
               (deprecated OR withdrawal IS NOT NULL) AS deprecated
        FROM skills
        WHERE shareable = 1 AND (private IS NULL OR withdrawal IS NOT NULL);
    "#,
    // 13 (#17 item 1): whether a held packet came from an ECP/1.1 sender, so
    // that a bundle installed once its files arrive keeps its origin
    // unverified (SPEC §6.6). Entries held before count as current.
    r#"
    ALTER TABLE quarantine ADD COLUMN legacy INTEGER NOT NULL DEFAULT 0;
    "#,
    // 14 (#24 item 1): ranked search, an FTS5 index of the skills held
    // (store/search.rs). Skills held before are indexed at the next open,
    // by the check that rebuilds a missing or corrupt index. (Its shape
    // then; migration 21 replaced it.)
    r#"
    CREATE TABLE skill_search_docs (
        id   INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE
    ) STRICT;
    CREATE VIRTUAL TABLE skill_search USING fts5(
        name, description, tags, body,
        content = '', contentless_delete = 1,
        tokenize = 'unicode61 remove_diacritics 2'
    );
    "#,
    // 15 (#19 items 1-3): outcomes agents report after using a skill, each
    // skill's score kept across its versions, and its retirement.
    r#"
    CREATE TABLE outcomes (
        id          INTEGER PRIMARY KEY,
        name        TEXT NOT NULL,
        version     INTEGER NOT NULL,  -- the skill's version when it was used
        outcome     TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
        note        TEXT NOT NULL,
        at          TEXT NOT NULL,     -- when the agent used it (RFC 3339, as reported)
        recorded_at INTEGER NOT NULL,  -- Unix seconds: the per-minute limit counts from here
        client_id   TEXT,              -- the reporter's id: a report sent again is not counted again
        UNIQUE (name, client_id)
    ) STRICT;
    CREATE INDEX outcomes_by_name ON outcomes (name, id);

    CREATE TABLE skill_scores (
        name           TEXT PRIMARY KEY,
        uses           INTEGER NOT NULL,
        successes      INTEGER NOT NULL,
        failures       INTEGER NOT NULL,
        streak         INTEGER NOT NULL, -- successes in a row of the content streak_hash
        streak_hash    TEXT NOT NULL,    -- integrityHash the streak counts for
        last_used      TEXT NOT NULL,
        recent_after   INTEGER NOT NULL, -- outcomes after this id are the recent ones (set by a restore)
        retired_at     TEXT,             -- NULL: not retired
        retired_reason TEXT
    ) STRICT, WITHOUT ROWID;
    "#,
    // 16 (#25 items 1–3, store/versions.rs): the versions the user holds on
    // to — a pin keeps a skill's file at one version, a lock is the version
    // the last lockfile named. History pruning keeps both.
    r#"
    CREATE TABLE version_holds (
        name    TEXT NOT NULL,
        hold    TEXT NOT NULL CHECK (hold IN ('pin', 'lock')),
        version INTEGER NOT NULL,   -- this node's number of the version held (never travels)
        digest  TEXT NOT NULL,      -- its bundleDigest, or integrityHash for a plain skill
        held_at TEXT NOT NULL,
        PRIMARY KEY (name, hold)
    ) STRICT;
    "#,
    // 17 (#21 items 1-2, SPEC §13): the key that signed each held
    // skill's version (NULL: unsigned; local skills are signed at open),
    // and the keys origins are known by.
    r#"
    ALTER TABLE skills ADD COLUMN origin_key TEXT;
    CREATE TABLE origin_keys (
        instance    TEXT PRIMARY KEY,
        key_id      TEXT NOT NULL,
        source      TEXT NOT NULL,   -- pinned | manifest | first-use
        recorded_at TEXT NOT NULL
    ) STRICT;
    "#,
    // 18 (#25 item 4, SPEC §14, store/revocations.rs): the versions their
    // origins revoked — refused from anyone, never served, and sent on to
    // peers (`seq`: the change that recorded it, for incremental answers).
    r#"
    CREATE TABLE revocations (
        name        TEXT NOT NULL,
        digest      TEXT NOT NULL,   -- bundleDigest, or integrityHash for a plain skill
        origin      TEXT NOT NULL,   -- the signature's instance
        key_id      TEXT NOT NULL,
        reason      TEXT NOT NULL,
        seq         INTEGER NOT NULL,
        recorded_at TEXT NOT NULL,
        revocation  TEXT NOT NULL,   -- the signed revocation as received, JSON
        PRIMARY KEY (name, digest)
    ) STRICT;
    CREATE INDEX revocations_by_seq ON revocations (seq);
    "#,
    // 19 (#19 item 5, SPEC §16): peers' outcome evidence, the newest claim
    // per skill and observer, with who delivered it and the trust it came at
    // (store/outcomes_mesh.rs). Never this node's own outcomes.
    r#"
    CREATE TABLE outcome_claims (
        name      TEXT NOT NULL,
        observer  TEXT NOT NULL,
        uses      INTEGER NOT NULL,
        successes INTEGER NOT NULL,
        failures  INTEGER NOT NULL,
        streak    INTEGER NOT NULL,
        at        TEXT NOT NULL,     -- the observer's time (RFC 3339, as the wire writes it)
        sender    TEXT NOT NULL,     -- the instance that delivered it
        trust     REAL NOT NULL,     -- this node's trust in the sender then
        received  TEXT NOT NULL,
        PRIMARY KEY (name, observer)
    ) STRICT, WITHOUT ROWID;
    "#,
    // 20 (#20, SPEC §17): the agent's edits of received skills kept as
    // derived versions, and proposals — sent, received for review, relayed.
    r#"
    CREATE TABLE derived (
        name        TEXT PRIMARY KEY,
        base_origin TEXT NOT NULL,
        base_hash   TEXT NOT NULL,   -- integrityHash of the version edited
        hash        TEXT NOT NULL,   -- integrityHash of the edit
        packet      TEXT NOT NULL,   -- the derived packet (JSON), authored and signed here
        state       TEXT NOT NULL CHECK (state IN ('active', 'retired', 'forked')),
        created_at  TEXT NOT NULL
    ) STRICT;
    CREATE TABLE proposals (
        id             TEXT PRIMARY KEY,   -- SPEC §17.3: the same edit of the same version is one proposal
        role           TEXT NOT NULL CHECK (role IN ('outgoing', 'incoming', 'relayed')),
        name           TEXT NOT NULL,
        base_origin    TEXT NOT NULL,
        base_hash      TEXT NOT NULL,
        hash           TEXT NOT NULL,
        proposer       TEXT NOT NULL,
        sender         TEXT NOT NULL,      -- the account that sent it here; '' when made here
        next_hop       TEXT,               -- the peer URL it went to
        packet         TEXT NOT NULL,
        state          TEXT NOT NULL,
        note           TEXT NOT NULL DEFAULT '',
        published_hash TEXT NOT NULL DEFAULT '',
        copies         INTEGER NOT NULL DEFAULT 1,
        received_unix  INTEGER NOT NULL,
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL
    ) STRICT;
    CREATE INDEX proposals_by_sender ON proposals (sender, received_unix);
    "#,
    // 21 (#24 item 1): the search index without positions (detail=column,
    // half the size; phrases are checked against the text), fewer evidence
    // levels in its row ids, and its words' counts (fts5vocab). Emptied
    // here, it is filled again at the next open, by the check that rebuilds
    // an index not counting the skills held.
    concat!("DROP TABLE skill_search; DROP TABLE skill_search_docs;", super::search::index_tables_22!()),
    // 22 (#24 item 1): the search index knows which skills are shown (a
    // `visible` column its triggers keep, so hidden skills are never among
    // the candidates ranked) and counts its skills in a row of its own.
    // Emptied here, filled again at the next open by the check.
    concat!(super::search::drop_index!(), super::search::index_tables_22!()),
    // 23 (#18 item 2): the smallest rows that serve every query. Hashes as
    // their 32 bytes and times as Unix nanoseconds (store/compact.rs), a
    // skill's kind as 0/1, each readable as before under its old name as a
    // virtual column (no bytes stored); packets packed again against the
    // built-in dictionary (store/packed.rs); skill_versions keyed by its
    // primary key alone (WITHOUT ROWID: no second index of (name, version)).
    // The view and the search index's triggers read `skills`: dropped and
    // made again around the rebuild. Runs with foreign keys off (dropping
    // skill_versions would cascade to blob_refs), checked before it commits.
    concat!(
        "DROP VIEW served;\n",
        super::search::shown_index_triggers!(drop_shown_triggers),
        r#"
    CREATE TABLE skills_23 (
        name            TEXT PRIMARY KEY,
        local           INTEGER NOT NULL,  -- 1: this node's own skill; 0: external
        origin          TEXT NOT NULL,
        version         INTEGER NOT NULL,
        hash            ANY NOT NULL,      -- integrityHash (compact.rs)
        created         ANY NOT NULL,      -- the packet's createdAt (compact.rs)
        updated         ANY NOT NULL,      -- when this node last changed it (compact.rs)
        deprecated      INTEGER NOT NULL,
        shareable       INTEGER NOT NULL,
        confidence      REAL NOT NULL,     -- as stored: lowered for external skills
        seq             INTEGER NOT NULL,  -- sequence number of its last change
        origin_verified INTEGER NOT NULL,
        bundle_digest   TEXT NOT NULL,
        origin_key      TEXT,
        private         TEXT,
        private_reason  TEXT,
        withdrawal      TEXT,              -- the tombstone served instead (JSON)
        description     TEXT NOT NULL,
        tags            TEXT NOT NULL,     -- JSON array
        packet          BLOB NOT NULL,     -- the packet as served (packed.rs)
        kind            TEXT GENERATED ALWAYS AS (CASE WHEN local THEN 'local' ELSE 'external' END) VIRTUAL,
        integrity_hash  TEXT GENERATED ALWAYS AS ("#,
        super::compact::hash_text!("hash"),
        r#") VIRTUAL,
        created_at      TEXT GENERATED ALWAYS AS ("#,
        super::compact::time_text!("created"),
        r#") VIRTUAL,
        updated_at      TEXT GENERATED ALWAYS AS ("#,
        super::compact::time_text!("updated"),
        r#") VIRTUAL
    ) STRICT;
    INSERT INTO skills_23 (name, local, origin, version, hash, created, updated, deprecated, shareable,
                           confidence, seq, origin_verified, bundle_digest, origin_key, private,
                           private_reason, withdrawal, description, tags, packet)
        SELECT name, kind = 'local', origin, version, ecp_hash(integrity_hash), ecp_time(created_at),
               ecp_time(updated_at), deprecated, shareable, confidence, seq, origin_verified, bundle_digest,
               origin_key, private, private_reason, withdrawal, description, tags, ecp_repack(packet)
        FROM skills ORDER BY rowid;
    DROP TABLE skills;
    ALTER TABLE skills_23 RENAME TO skills;
    CREATE INDEX skills_by_seq ON skills (seq);

    CREATE TABLE skill_versions_23 (
        name           TEXT NOT NULL,
        version        INTEGER NOT NULL,
        seq            INTEGER NOT NULL,
        recorded       ANY NOT NULL,       -- compact.rs
        source         TEXT NOT NULL,      -- who made the change: peer id, 'skills-dir', 'cli'
        hash           ANY NOT NULL,       -- integrityHash (compact.rs)
        deprecated     INTEGER NOT NULL,
        packet         BLOB,               -- NULL: the current version, in skills.packet
        recorded_at    TEXT GENERATED ALWAYS AS ("#,
        super::compact::time_text!("recorded"),
        r#") VIRTUAL,
        integrity_hash TEXT GENERATED ALWAYS AS ("#,
        super::compact::hash_text!("hash"),
        r#") VIRTUAL,
        PRIMARY KEY (name, version)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO skill_versions_23 (name, version, seq, recorded, source, hash, deprecated, packet)
        SELECT name, version, seq, ecp_time(recorded_at), source, ecp_hash(integrity_hash), deprecated,
               ecp_repack(packet)
        FROM skill_versions;
    DROP TABLE skill_versions;
    ALTER TABLE skill_versions_23 RENAME TO skill_versions;

    CREATE TABLE audit_23 (
        id         INTEGER PRIMARY KEY,
        at_time    ANY NOT NULL,           -- compact.rs
        peer       TEXT NOT NULL,
        skill_name TEXT NOT NULL,
        decision   TEXT NOT NULL,
        reason     TEXT NOT NULL,
        at         TEXT GENERATED ALWAYS AS ("#,
        super::compact::time_text!("at_time"),
        r#") VIRTUAL
    ) STRICT;
    INSERT INTO audit_23 (id, at_time, peer, skill_name, decision, reason)
        SELECT id, ecp_time(at), peer, skill_name, decision, reason FROM audit ORDER BY id;
    DROP TABLE audit;
    ALTER TABLE audit_23 RENAME TO audit;

    CREATE VIEW served AS
        SELECT name, seq, confidence, tags,
               COALESCE(withdrawal, packet) AS packet,
               (deprecated OR withdrawal IS NOT NULL) AS deprecated
        FROM skills
        WHERE shareable = 1 AND (private IS NULL OR withdrawal IS NOT NULL);
    "#,
        super::search::shown_index_triggers!(shown_triggers),
    ),
    // 24 (#18 item 2): who made a change as an integer (`actors`), where
    // each version and audit line spelled out its peer's 36-byte label; a
    // current version's hash read from `skills` (NULL in its version row
    // until an update supersedes it, as its packet already was); the
    // search index's triggers reading one view of the skills shown instead
    // of each spelling it out; and the small tables keyed by text without
    // a second B-tree for their key (WITHOUT ROWID). The times and hashes
    // of the rebuilt tables are shown as text by their readers
    // (compact.rs). Runs with foreign keys off, as 23 (blob_refs
    // references skill_versions), checked before it commits.
    concat!(
        super::search::shown_index_triggers!(drop_shown_triggers),
        r#"
    CREATE TABLE actors (
        id   INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE  -- a Source's label: 'peer:<instance>', 'skills-dir', 'operator', ...
    ) STRICT;
    INSERT INTO actors (name) SELECT source FROM skill_versions UNION SELECT peer FROM audit;

    CREATE TABLE skill_versions_24 (
        name       TEXT NOT NULL,
        version    INTEGER NOT NULL,
        seq        INTEGER NOT NULL,
        recorded   ANY NOT NULL,   -- compact.rs
        actor      INTEGER NOT NULL REFERENCES actors (id),
        hash       ANY,            -- compact.rs; NULL: the current version's, skills.hash
        deprecated INTEGER NOT NULL,
        packet     BLOB,           -- NULL: the current version's, skills.packet
        PRIMARY KEY (name, version)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO skill_versions_24 (name, version, seq, recorded, actor, hash, deprecated, packet)
        SELECT v.name, v.version, v.seq, v.recorded, a.id,
               CASE WHEN v.packet IS NULL AND s.version = v.version AND s.hash IS v.hash THEN NULL ELSE v.hash END,
               v.deprecated, v.packet
        FROM skill_versions v JOIN actors a ON a.name = v.source LEFT JOIN skills s ON s.name = v.name;
    DROP TABLE skill_versions;
    ALTER TABLE skill_versions_24 RENAME TO skill_versions;

    CREATE TABLE audit_24 (
        id         INTEGER PRIMARY KEY,
        at_time    ANY NOT NULL,   -- compact.rs
        actor      INTEGER NOT NULL REFERENCES actors (id),
        skill_name TEXT NOT NULL,
        decision   TEXT NOT NULL,
        reason     TEXT NOT NULL
    ) STRICT;
    INSERT INTO audit_24 (id, at_time, actor, skill_name, decision, reason)
        SELECT au.id, au.at_time, a.id, au.skill_name, au.decision, au.reason
        FROM audit au JOIN actors a ON a.name = au.peer ORDER BY au.id;
    DROP TABLE audit;
    ALTER TABLE audit_24 RENAME TO audit;
"#,
        without_rowid!(meta, "key TEXT PRIMARY KEY, value TEXT NOT NULL"),
        without_rowid!(sharing_marks, "name TEXT PRIMARY KEY, private INTEGER NOT NULL, allow_secrets TEXT"),
        without_rowid!(folder_markers, "path TEXT PRIMARY KEY, marked_at TEXT NOT NULL"),
        without_rowid!(
            origin_keys,
            "instance TEXT PRIMARY KEY, key_id TEXT NOT NULL, source TEXT NOT NULL, recorded_at TEXT NOT NULL"
        ),
        without_rowid!(
            version_holds,
            "name TEXT NOT NULL, hold TEXT NOT NULL CHECK (hold IN ('pin', 'lock')), version INTEGER NOT NULL, \
             digest TEXT NOT NULL, held_at TEXT NOT NULL, PRIMARY KEY (name, hold)"
        ),
        without_rowid!(
            folder_entries,
            "folder INTEGER NOT NULL, entry TEXT NOT NULL, name TEXT, code TEXT, reason TEXT, \
             warnings TEXT NOT NULL, PRIMARY KEY (folder, entry)"
        ),
        without_rowid!(
            peers,
            "url TEXT PRIMARY KEY, instance TEXT NOT NULL, \
             kind TEXT NOT NULL CHECK (kind IN ('configured', 'discovered', 'manual')), \
             cursor INTEGER NOT NULL, etag TEXT NOT NULL, manifest_etag TEXT NOT NULL, \
             manifest_digest TEXT NOT NULL, last_success TEXT, last_attempt TEXT, failures INTEGER NOT NULL, \
             last_error TEXT NOT NULL, packets_received INTEGER NOT NULL, acked_seq INTEGER NOT NULL, \
             last_push TEXT, push_failures INTEGER NOT NULL, push_error TEXT NOT NULL, \
             packets_sent INTEGER NOT NULL"
        ),
        super::search::shown_view!(),
        super::search::shown_index_triggers!(shown_view_triggers),
    ),
];

/// The migrations that rebuild the skills' tables (23, 24): they run with
/// foreign keys off, as dropping a table would delete its children.
const REBUILT: [usize; 2] = [23, 24];

/// The migration that compressed the stored packets: the space their
/// uncompressed copies held is given back (`VACUUM`) once it has run.
const COMPRESSED: usize = 12;

/// Brings the database to the newest schema.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    migrate_to(conn, MIGRATIONS.len())
}

/// Brings the database to schema `target` (tests stop before the newest).
fn migrate_to(conn: &mut Connection, target: usize) -> Result<(), StoreError> {
    let has_meta: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta')",
        [],
        |row| row.get(0),
    )?;
    let current: usize = if has_meta {
        conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |row| row.get::<_, String>(0))
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    } else {
        0
    };
    if current > MIGRATIONS.len() {
        return Err(StoreError::SchemaTooNew { found: current, known: MIGRATIONS.len() });
    }
    super::packed::register(conn)?;
    super::compact::register(conn)?;
    if current == 0 && is_empty(conn)? {
        return create(conn, target);
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().take(target).skip(current) {
        let rebuilds = REBUILT.contains(&(i + 1));
        let foreign_keys: bool = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0))?;
        if rebuilds {
            // Only outside a transaction does this pragma take effect.
            conn.pragma_update(None, "foreign_keys", false)?;
        }
        let migrated = (|| {
            let tx = conn.transaction()?;
            tx.execute_batch(sql)?;
            if rebuilds {
                let broken: i64 =
                    tx.query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| r.get(0))?;
                if broken > 0 {
                    return Err(StoreError::Corrupt(format!(
                        "migration {} would leave {broken} rows without their parent",
                        i + 1
                    )));
                }
            }
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('schema', ?1)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![(i + 1).to_string()],
            )?;
            tx.commit()?;
            Ok(())
        })();
        if rebuilds {
            conn.pragma_update(None, "foreign_keys", foreign_keys)?;
        }
        migrated?;
    }
    if current > 0 && [COMPRESSED, REBUILT[0], REBUILT[1]].iter().any(|&m| current < m && target >= m) {
        // Outside a transaction, as VACUUM must be; once per database.
        conn.execute_batch("VACUUM")?;
    }
    Ok(())
}

/// Whether the database holds no table, view, index or trigger at all: a
/// store being made.
fn is_empty(conn: &Connection) -> Result<bool, rusqlite::Error> {
    conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM sqlite_master)", [], |row| row.get(0))
}

/// Makes a new store's schema: every migration up to `target` in one
/// transaction, the schema recorded with them. The same statements as one
/// by one, but one commit (one WAL sync) instead of one each, and each of
/// the schema's pages written to the WAL once rather than once per
/// migration that touches it (#18 item 1: part of a first pull's time).
/// Foreign keys are off as for the rebuilding migrations ([`REBUILT`]): their
/// tables are empty here, so nothing cascades either way, and the check
/// runs before the commit all the same.
fn create(conn: &mut Connection, target: usize) -> Result<(), StoreError> {
    let foreign_keys: bool = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0))?;
    conn.pragma_update(None, "foreign_keys", false)?;
    let made = (|| {
        let tx = conn.transaction()?;
        for sql in &MIGRATIONS[..target] {
            tx.execute_batch(sql)?;
        }
        let broken: i64 = tx.query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| r.get(0))?;
        if broken > 0 {
            return Err(StoreError::Corrupt(format!(
                "a new store's schema leaves {broken} rows without their parent"
            )));
        }
        if target > 0 {
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('schema', ?1)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![target.to_string()],
            )?;
        }
        tx.commit()?;
        Ok(())
    })();
    conn.pragma_update(None, "foreign_keys", foreign_keys)?;
    made
}

#[cfg(test)]
mod migration_23;

#[cfg(test)]
mod migration_24;

#[cfg(test)]
mod tests;
