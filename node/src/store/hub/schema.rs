//! The hub's tables on PostgreSQL and their versioned migrations.
//!
//! `hub_meta` holds the schema version, the sequence number, and the hub's
//! identity that every replica serves as its own: `instance_id`,
//! `node_key_id`, `created_at`, and `node_key` (the key's seed) unless the
//! replicas are given it in a key file (review H7). Those rows are written
//! at connect, not by a migration. Migrations run at connect, under a transaction-level advisory lock,
//! so that replicas starting together migrate once; a database migrated by
//! a newer ecp-node is refused ([`StoreError::SchemaTooNew`]). A migration
//! whose new columns need the packets (which PostgreSQL cannot read: they
//! are zstd frames) leaves them NULL for the code that runs after it.

use postgres::Transaction;

use crate::store::StoreError;

/// The advisory lock key the migrations (and the identity's creation) run under.
const MIGRATION_LOCK: i64 = 0x6563_705f_6875_6201; // "ecp_hub\x01"

/// The migrations, in order; the schema version is how many have run.
const MIGRATIONS: &[&str] = &[
    // 1 (#18 item 5): what the ECP serving path needs, shared by every replica.
    r#"
    CREATE TABLE hub_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO hub_meta (key, value) VALUES ('sequence', '0');
    -- The current version of each skill, as served (zstd frame of its JSON).
    CREATE TABLE hub_skills (
        name            TEXT PRIMARY KEY,
        kind            TEXT NOT NULL,
        origin          TEXT NOT NULL,
        version         BIGINT NOT NULL,
        integrity_hash  TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        updated_at      TEXT NOT NULL,
        deprecated      BOOLEAN NOT NULL,
        shareable       BOOLEAN NOT NULL,
        confidence      DOUBLE PRECISION NOT NULL,
        tags            TEXT NOT NULL,
        seq             BIGINT NOT NULL,
        packet          BYTEA NOT NULL,
        origin_verified BOOLEAN NOT NULL,
        origin_key      TEXT
    );
    CREATE INDEX hub_skills_seq ON hub_skills (seq);
    -- Every kept version, for GET /ecp/skills/{name}?digest=. One copy per
    -- version: the current one's packet is NULL here, it is hub_skills.packet.
    CREATE TABLE hub_versions (
        name           TEXT NOT NULL,
        version        BIGINT NOT NULL,
        seq            BIGINT NOT NULL,
        integrity_hash TEXT NOT NULL,
        deprecated     BOOLEAN NOT NULL,
        recorded_at    TEXT NOT NULL,
        source         TEXT NOT NULL,
        packet         BYTEA,
        PRIMARY KEY (name, version)
    );
    CREATE INDEX hub_versions_digest ON hub_versions (name, integrity_hash);
    -- Refused packets with their reason, within the quarantine's caps.
    CREATE TABLE hub_quarantine (
        id     BIGSERIAL PRIMARY KEY,
        name   TEXT NOT NULL,
        stage  TEXT NOT NULL,
        reason TEXT NOT NULL,
        sender TEXT NOT NULL,
        peer   TEXT NOT NULL,
        packet TEXT NOT NULL,
        bytes  BIGINT NOT NULL,
        at     TEXT NOT NULL
    );
    CREATE TABLE hub_audit (
        id     BIGSERIAL PRIMARY KEY,
        at     TEXT NOT NULL,
        source TEXT NOT NULL,
        skill  TEXT NOT NULL,
        action TEXT NOT NULL,
        reason TEXT NOT NULL
    );
    -- The key each origin is known by (trust on first use, SPEC §13.6).
    CREATE TABLE hub_origin_keys (instance TEXT PRIMARY KEY, key_id TEXT NOT NULL, recorded_at TEXT NOT NULL);
    -- Installs per origin ('origin') and new skills per sender ('sender'), per second.
    CREATE TABLE hub_installs (
        per      TEXT NOT NULL,
        key      TEXT NOT NULL,
        at       BIGINT NOT NULL,
        installs BIGINT NOT NULL,
        PRIMARY KEY (per, key, at)
    );
    -- Nonces of accepted signed requests, until they leave the skew window:
    -- a request replayed to another replica is refused too.
    CREATE TABLE hub_nonces (
        key_id TEXT NOT NULL,
        nonce  TEXT NOT NULL,
        until  BIGINT NOT NULL,
        PRIMARY KEY (key_id, nonce)
    );
    CREATE INDEX hub_nonces_until ON hub_nonces (until);
    "#,
    // 2 (#24 item 1): full-text search over the skills served. `search` is
    // each skill's words weighted A name, B description, C tags, D body,
    // written by the merge (`search::document`: the node's own tokenizer,
    // not a text search configuration); NULL until filled — rows from
    // before this migration are filled at connect (`search::backfill`).
    r#"
    ALTER TABLE hub_skills ADD COLUMN description TEXT NOT NULL DEFAULT '';
    ALTER TABLE hub_skills ADD COLUMN search TSVECTOR;
    CREATE INDEX hub_skills_search ON hub_skills USING GIN (search);
    "#,
    // 3 (#18 item 5): revocations (SPEC §14) and outcome evidence (SPEC
    // §16), shared by every replica. A revocation taken is kept as it
    // travels (`revocation`, JSON) under a sequence number of its own; a
    // version's bundle digest as received is kept beside its hash (the hub
    // serves a bundle as its SKILL.md alone) so that a revocation naming it
    // finds the version — '' for rows from before this migration and for
    // plain skills. Claims: the newest per skill and observer, with who
    // delivered it and the trust it came at (the node's `outcome_claims`).
    r#"
    CREATE TABLE hub_revocations (
        name        TEXT NOT NULL,
        digest      TEXT NOT NULL,
        origin      TEXT NOT NULL,
        key_id      TEXT NOT NULL,
        reason      TEXT NOT NULL,
        seq         BIGINT NOT NULL,
        recorded_at TEXT NOT NULL,
        revocation  TEXT NOT NULL,
        PRIMARY KEY (name, digest)
    );
    CREATE INDEX hub_revocations_seq ON hub_revocations (seq);
    ALTER TABLE hub_versions ADD COLUMN bundle_digest TEXT NOT NULL DEFAULT '';
    CREATE TABLE hub_outcome_claims (
        name      TEXT NOT NULL,
        observer  TEXT NOT NULL,
        uses      BIGINT NOT NULL,
        successes BIGINT NOT NULL,
        failures  BIGINT NOT NULL,
        streak    BIGINT NOT NULL,
        at        TEXT NOT NULL,
        sender    TEXT NOT NULL,
        trust     DOUBLE PRECISION NOT NULL,
        received  TEXT NOT NULL,
        PRIMARY KEY (name, observer)
    );
    "#,
    // 4 (#18 item 5): bundles (SPEC §12), shared by every replica. A blob
    // is kept once by its SHA-256 whatever number of versions list it, its
    // bytes in chunks of 1 MiB (`hub_blob_chunks`: read and written a chunk
    // at a time, never whole), with who uploaded it and when (the quota on
    // uploads ahead of their packet, the grace period). `hub_blob_refs`:
    // which file of which kept version is which blob — a version trimmed
    // from the history takes its rows with it, and a blob no row lists is
    // collected after the grace period. `hub_pending`: a bundle pushed
    // before all its blobs, as received with its sender, merged again by
    // the upload of its last blob (§12.9.2). `hub_skills.bundle_digest`:
    // the served version's, '' for a plain skill and for the bundles an
    // older hub kept as their SKILL.md alone (so that the same bundle
    // pushed again installs whole). `blob_bytes`: the bytes of all blobs,
    // kept with every write, for the cap on them.
    r#"
    CREATE TABLE hub_blobs (
        sha256      TEXT PRIMARY KEY,
        size        BIGINT NOT NULL,
        sender      TEXT NOT NULL,
        received_at BIGINT NOT NULL
    );
    CREATE INDEX hub_blobs_sender ON hub_blobs (sender);
    CREATE TABLE hub_blob_chunks (
        sha256 TEXT NOT NULL REFERENCES hub_blobs (sha256) ON DELETE CASCADE,
        n      INTEGER NOT NULL,
        bytes  BYTEA NOT NULL,
        PRIMARY KEY (sha256, n)
    );
    CREATE TABLE hub_blob_refs (
        name    TEXT NOT NULL,
        version BIGINT NOT NULL,
        path    TEXT NOT NULL,
        mode    TEXT NOT NULL,
        sha256  TEXT NOT NULL REFERENCES hub_blobs (sha256),
        PRIMARY KEY (name, version, path),
        FOREIGN KEY (name, version) REFERENCES hub_versions (name, version) ON DELETE CASCADE
    );
    CREATE INDEX hub_blob_refs_sha256 ON hub_blob_refs (sha256);
    CREATE TABLE hub_pending (
        id          BIGSERIAL PRIMARY KEY,
        name        TEXT NOT NULL,
        blobs       TEXT[] NOT NULL,
        packet      BYTEA NOT NULL,
        instance    TEXT NOT NULL,
        account     TEXT NOT NULL,
        trust       DOUBLE PRECISION NOT NULL,
        reshare     BOOLEAN NOT NULL,
        legacy      BOOLEAN NOT NULL,
        bytes       BIGINT NOT NULL,
        received_at BIGINT NOT NULL
    );
    CREATE INDEX hub_pending_blobs ON hub_pending USING GIN (blobs);
    ALTER TABLE hub_skills ADD COLUMN bundle_digest TEXT NOT NULL DEFAULT '';
    INSERT INTO hub_meta (key, value) VALUES ('blob_bytes', '0');
    "#,
    // 5 (#18 item 5): the quarantine reviewed as on a node (`quarantine`):
    // an entry is held, approved or dropped (`status`), kept once per
    // sender's instance, name, hash and stage (`times_seen`,
    // `last_seen_at`), with its findings, the trust its sender had and
    // whether that sender was an ECP/1.1 one; a packet over the body cap
    // is an excerpt with its size and SHA-256 (`body_size`, `body_sha256`:
    // '' for the cut packets of before, whose digest was never taken).
    // Columns renamed to the node's meaning: `source` is `peer:<instance>`
    // (the entry's `peer`), `sender` the verified sender the caps' shares
    // are counted per (`key:…`, `addr:…`). `hub_quarantine_held`: the held
    // entries and bytes per sender, kept by a trigger, which eviction reads.
    r#"
    ALTER TABLE hub_quarantine RENAME COLUMN sender TO source;
    ALTER TABLE hub_quarantine RENAME COLUMN peer TO sender;
    ALTER TABLE hub_quarantine RENAME COLUMN at TO received_at;
    ALTER TABLE hub_quarantine ADD COLUMN integrity_hash TEXT NOT NULL DEFAULT '';
    ALTER TABLE hub_quarantine ADD COLUMN findings TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE hub_quarantine ADD COLUMN trust DOUBLE PRECISION;
    ALTER TABLE hub_quarantine ADD COLUMN status TEXT NOT NULL DEFAULT 'held';
    ALTER TABLE hub_quarantine ADD COLUMN times_seen BIGINT NOT NULL DEFAULT 1;
    ALTER TABLE hub_quarantine ADD COLUMN last_seen_at TEXT NOT NULL DEFAULT '';
    ALTER TABLE hub_quarantine ADD COLUMN legacy BOOLEAN NOT NULL DEFAULT FALSE;
    ALTER TABLE hub_quarantine ADD COLUMN body_size BIGINT;
    ALTER TABLE hub_quarantine ADD COLUMN body_sha256 TEXT;
    UPDATE hub_quarantine SET
        legacy = sender LIKE '% (legacy)',
        sender = CASE WHEN sender LIKE '% (legacy)' THEN left(sender, -9) ELSE sender END,
        last_seen_at = received_at,
        body_size = CASE WHEN octet_length(packet) < bytes THEN bytes END,
        body_sha256 = CASE WHEN octet_length(packet) < bytes THEN '' END,
        bytes = octet_length(packet) + 2 + octet_length(reason);
    CREATE INDEX hub_quarantine_same ON hub_quarantine (source, name, integrity_hash, stage);
    CREATE INDEX hub_quarantine_by_sender ON hub_quarantine (sender, id) WHERE status = 'held';
    CREATE TABLE hub_quarantine_held (
        sender  TEXT PRIMARY KEY,
        entries BIGINT NOT NULL,
        bytes   BIGINT NOT NULL
    );
    INSERT INTO hub_quarantine_held (sender, entries, bytes)
        SELECT sender, COUNT(*), SUM(bytes) FROM hub_quarantine WHERE status = 'held' GROUP BY sender;
    CREATE FUNCTION hub_quarantine_count() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP <> 'INSERT' THEN
            IF OLD.status = 'held' THEN
                UPDATE hub_quarantine_held SET entries = entries - 1, bytes = bytes - OLD.bytes
                WHERE sender = OLD.sender;
                DELETE FROM hub_quarantine_held WHERE sender = OLD.sender AND entries <= 0;
            END IF;
        END IF;
        IF TG_OP <> 'DELETE' THEN
            IF NEW.status = 'held' THEN
                INSERT INTO hub_quarantine_held (sender, entries, bytes) VALUES (NEW.sender, 1, NEW.bytes)
                ON CONFLICT (sender) DO UPDATE SET entries = hub_quarantine_held.entries + 1,
                                                   bytes = hub_quarantine_held.bytes + excluded.bytes;
            END IF;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER hub_quarantine_count AFTER INSERT OR UPDATE OF status, sender, bytes OR DELETE
        ON hub_quarantine FOR EACH ROW EXECUTE FUNCTION hub_quarantine_count();
    "#,
];

/// The schema version this build knows.
pub(super) const VERSION: usize = MIGRATIONS.len();

/// Brings the schema up to [`VERSION`] inside `tx`, which holds the
/// migration lock until it commits; returns the version found.
pub(super) fn migrate(tx: &mut Transaction<'_>) -> Result<usize, StoreError> {
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    let exists: bool = tx.query_one("SELECT to_regclass('hub_meta') IS NOT NULL", &[])?.get(0);
    let found = if exists {
        let row = tx.query_opt("SELECT value FROM hub_meta WHERE key = 'schema'", &[])?;
        row.and_then(|r| r.get::<_, String>(0).parse().ok()).unwrap_or(1)
    } else {
        0
    };
    if found > VERSION {
        return Err(StoreError::SchemaTooNew { found, known: VERSION });
    }
    for sql in &MIGRATIONS[found..] {
        tx.batch_execute(sql)?;
    }
    tx.execute(
        "INSERT INTO hub_meta (key, value) VALUES ('schema', $1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        &[&VERSION.to_string()],
    )?;
    Ok(found)
}
