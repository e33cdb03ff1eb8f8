//! Migration 24 (actors, a current version's hash read from `skills`, the
//! search triggers' view, the small tables WITHOUT ROWID) on a store as
//! schema 23 left it: every version, audit line, peer, mark, hold, key and
//! folder entry reads back as it was, and an update after it keeps the
//! superseded version's hash.

use ecp_protocol::{Origin, SkillKind, SkillPacket, Timestamp};
use rusqlite::{Connection, params};

use super::{MIGRATIONS, migrate_to};

use crate::store::versions::Pick;
use crate::store::{AuditFilter, AuditReader, DB_FILE, Source, Store, compact, packed};

/// A skill's row and its versions' rows as schema 23 wrote them: `versions`
/// are (version, seq, recorded, source label), the last one current.
fn insert_23(conn: &Connection, packets: &[&SkillPacket], local: bool, versions: &[(i64, i64, &str, &str)]) {
    let current = packets.last().unwrap();
    let (version, seq, recorded, _) = *versions.last().unwrap();
    let at = |t: &str| compact::time(Timestamp::parse(t).unwrap());
    conn.execute(
        "INSERT INTO skills (name, local, origin, version, hash, created, updated, deprecated, shareable,
                             confidence, seq, origin_verified, bundle_digest, origin_key, description, tags, packet)
         VALUES (?1, ?2, 'node-a', ?3, ?4, ?5, ?6, 0, 1, 0.9, ?7, 1, '', ?8, ?9, ?10, ?11)",
        params![
            current.skill_name,
            local,
            version,
            compact::hash(&current.integrity_hash),
            compact::time(current.created_at),
            at(recorded),
            seq,
            local.then_some("key-1"),
            current.skill_description,
            serde_json::to_string(&current.tags).unwrap(),
            packed::pack_stored(&serde_json::to_string(current).unwrap()),
        ],
    )
    .unwrap();
    for (packet, &(version, seq, recorded, source)) in packets.iter().zip(versions) {
        let superseded = !std::ptr::eq(*packet, *current);
        conn.execute(
            "INSERT INTO skill_versions (name, version, seq, recorded, source, hash, deprecated, packet)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7)",
            params![
                packet.skill_name,
                version,
                seq,
                at(recorded),
                source,
                compact::hash(&packet.integrity_hash),
                superseded.then(|| packed::pack_stored(&serde_json::to_string(packet).unwrap())),
            ],
        )
        .unwrap();
    }
}

#[test]
fn migration_24_keeps_every_version_audit_line_and_small_table_row_of_a_schema_23_store() {
    let dir = tempfile::tempdir().unwrap();
    let origin = Origin::new("node-a", "someone", "linux/amd64", "1.0");
    let created = Timestamp::parse("2026-11-20T10:00:00Z").unwrap();
    let packet = |name: &str, body: &str| {
        SkillPacket::new(&origin, name, &format!("{name}, described"), body, 0.9, created).with_tags([name])
    };
    let alpha_1 = packet("alpha", "---\nname: alpha\n---\n# One\n");
    let alpha_2 = packet("alpha", "---\nname: alpha\n---\n# Two\n");
    let beta = packet("beta", "---\nname: beta\n---\nFrom a peer.\n");
    // A hash that is not 64 hex digits: kept as text, NULL'd and read back all the same.
    let mut odd = packet("odd", "---\nname: odd\n---\nOdd.\n");
    odd.integrity_hash = "legacy-hash".into();
    let sha = "ab".repeat(32);
    {
        let mut conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        migrate_to(&mut conn, 23).unwrap();
        insert_23(
            &conn,
            &[&alpha_1, &alpha_2],
            true,
            &[(1, 1, "2026-11-26T10:00:01Z", "skills-dir"), (2, 2, "2026-11-26T10:00:02.25Z", "operator")],
        );
        insert_23(&conn, &[&beta], false, &[(1, 3, "2026-11-26T10:00:03Z", "peer:node-b")]);
        insert_23(&conn, &[&odd], false, &[(1, 4, "2026-11-26T10:00:04Z", "peer:node-c")]);
        conn.execute_batch(&format!(
            "INSERT INTO meta (key, value) VALUES ('sequence', '4')
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value;
             INSERT INTO blobs (sha256, size, sender, received_at) VALUES ('{sha}', 5, 'peer:node-b', 100);
             INSERT INTO blob_refs (name, version, path, sha256) VALUES ('beta', 1, 'run.sh', '{sha}');
             INSERT INTO audit (at_time, peer, skill_name, decision, reason) VALUES
                 (1795000000500000000, 'peer:node-b', 'beta', 'new', 'confidence 0.9'),
                 ('0001-01-01T00:00:00Z', 'operator', '*', 'odd time', 'kept as text'),
                 (1795000001000000000, 'peer:node-d', 'gone', 'refused', 'a peer with no version held');
             INSERT INTO peers (url, instance, kind, cursor, etag, manifest_etag, manifest_digest, last_success,
                                last_attempt, failures, last_error, packets_received, acked_seq, last_push,
                                push_failures, push_error, packets_sent)
                 VALUES ('http://127.0.0.1:1', 'node-b', 'configured', 3, 'e', 'm', 'd', NULL, 't', 0, '', 1, 2,
                         NULL, 0, '', 0);
             INSERT INTO sharing_marks (name, private, allow_secrets) VALUES ('alpha', 1, NULL);
             INSERT INTO folder_markers (path, marked_at) VALUES ('/skills', 't');
             INSERT INTO origin_keys (instance, key_id, source, recorded_at) VALUES ('node-b', 'key-b', 'pinned', 't');
             INSERT INTO version_holds (name, hold, version, digest, held_at) VALUES ('alpha', 'pin', 1, '{}', 't');
             INSERT INTO folder_entries (folder, entry, name, code, reason, warnings)
                 VALUES (1, 'alpha', 'alpha', NULL, NULL, '[]');",
            alpha_1.integrity_hash
        ))
        .unwrap();
    }

    let store = Store::open(dir.path()).unwrap();

    // Versions: who, when, which hash — the current ones' read from `skills`.
    let versions = |name: &str| {
        let (_, _, versions) = store.skill(name).unwrap().unwrap();
        versions
            .into_iter()
            .map(|v| (v.version, v.seq, v.recorded_at, v.source, v.integrity_hash))
            .collect::<Vec<_>>()
    };
    let v = |version, seq, at: &str, source: &str, hash: &str| {
        (version, seq, at.to_owned(), source.to_owned(), hash.to_owned())
    };
    assert_eq!(
        versions("alpha"),
        [
            v(1, 1, "2026-11-26T10:00:01Z", "skills-dir", &alpha_1.integrity_hash),
            v(2, 2, "2026-11-26T10:00:02.25Z", "operator", &alpha_2.integrity_hash)
        ]
    );
    assert_eq!(versions("beta"), [v(1, 3, "2026-11-26T10:00:03Z", "peer:node-b", &beta.integrity_hash)]);
    assert_eq!(versions("odd"), [v(1, 4, "2026-11-26T10:00:04Z", "peer:node-c", "legacy-hash")]);
    assert_eq!(store.version_packet("alpha", &Pick::Number(1)).unwrap(), Some((1, alpha_1.clone())));
    assert_eq!(
        store.version_packet("alpha", &Pick::Digest(alpha_2.integrity_hash.clone())).unwrap(),
        Some((2, alpha_2.clone()))
    );
    let history = store.history("alpha").unwrap().unwrap();
    assert_eq!(history.iter().map(|h| (h.version, h.current)).collect::<Vec<_>>(), [(1, false), (2, true)]);
    assert_eq!(store.active_local_from(&Source::Operator).unwrap(), ["alpha"]);
    assert!(store.active_local_from(&Source::SkillsDir).unwrap().is_empty());
    let held = store.transaction(|tx| tx.held_from(&Source::Peer("node-b".into()), &[])).unwrap();
    assert_eq!(held, 1);

    // Audit lines, newest first, and read by actor (an actor only the audit named included).
    let audit: Vec<(String, String, String)> =
        store.audit(10).unwrap().into_iter().map(|e| (e.at, e.peer, e.decision)).collect();
    let line = |at: &str, peer: &str, decision: &str| (at.to_owned(), peer.to_owned(), decision.to_owned());
    assert_eq!(
        audit,
        [
            line("2026-11-18T11:06:41Z", "peer:node-d", "refused"),
            line("0001-01-01T00:00:00Z", "operator", "odd time"),
            line("2026-11-18T11:06:40.5Z", "peer:node-b", "new"),
        ]
    );
    let reader = AuditReader::open(dir.path()).unwrap();
    for (actor, expected) in [("peer:node-d", vec!["gone"]), ("operator", vec!["*"]), ("peer:nobody", vec![])]
    {
        let filter = AuditFilter { actor: Some(actor.into()), ..AuditFilter::default() };
        let names: Vec<String> = reader.read(&filter).unwrap().into_iter().map(|e| e.skill_name).collect();
        assert_eq!(names, expected, "{actor}");
    }

    // The small tables' rows.
    let peer = store.peer_state("http://127.0.0.1:1").unwrap().unwrap();
    assert_eq!((peer.instance.as_str(), peer.cursor, peer.acked_seq), ("node-b", 3, 2));
    assert!(store.sharing_marks().unwrap()["alpha"].private);
    assert_eq!(store.pins().unwrap()["alpha"].version, 1);
    assert_eq!(store.origin_keys().unwrap()[0].key_id, "key-b");
    assert_eq!(store.folder_entries().unwrap()[0].entry, "alpha");
    assert!(store.serves_blob(&sha).unwrap());

    // An update supersedes alpha 2: its row takes its own hash and packet.
    let alpha_3 = packet("alpha", "---\nname: alpha\n---\n# Three\n");
    store.transaction(|tx| tx.install(&alpha_3, SkillKind::Local, true, &Source::Operator)).unwrap();
    let hashes: Vec<String> = versions("alpha").into_iter().map(|v| v.4).collect();
    assert_eq!(hashes, [&*alpha_1.integrity_hash, &alpha_2.integrity_hash, &alpha_3.integrity_hash]);
    assert_eq!(store.version_packet("alpha", &Pick::Number(2)).unwrap(), Some((2, alpha_2.clone())));

    // The compact forms: NULL hashes for current versions only, actors by id, tables without rowids.
    let conn = store.conn();
    let null_hashes: Vec<(String, i64)> = conn
        .prepare("SELECT name, version FROM skill_versions WHERE hash IS NULL ORDER BY name")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(null_hashes, [("alpha".to_owned(), 3), ("beta".to_owned(), 1), ("odd".to_owned(), 1)]);
    let actors: Vec<String> = conn
        .prepare("SELECT name FROM actors ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(actors, ["operator", "peer:node-b", "peer:node-c", "peer:node-d", "skills-dir"]);
    let autoindexes: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sqlite_autoindex_%' AND tbl_name IN
                 ('meta', 'peers', 'sharing_marks', 'folder_markers', 'origin_keys', 'version_holds',
                  'folder_entries')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(autoindexes, 0);
    let (schema, foreign_keys, refs): (String, bool, i64) = (
        conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).unwrap(),
        conn.pragma_query_value(None, "foreign_keys", |r| r.get(0)).unwrap(),
        conn.query_row("SELECT COUNT(*) FROM blob_refs", [], |r| r.get(0)).unwrap(),
    );
    assert_eq!((schema, foreign_keys, refs), (MIGRATIONS.len().to_string(), true, 1));
}

#[test]
fn the_search_triggers_read_the_view_and_still_hide_what_search_must_not_show() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let origin = Origin::new("node-a", "someone", "linux/amd64", "1.0");
    let packet = SkillPacket::new(
        &origin,
        "alpha",
        "d",
        "---\nname: alpha\n---\nbody\n",
        0.9,
        Timestamp::parse("2026-11-26T10:00:00Z").unwrap(),
    );
    store.transaction(|tx| tx.install(&packet, SkillKind::External, true, &Source::Operator)).unwrap();
    let visible = || -> bool {
        store
            .conn()
            .query_row("SELECT visible FROM skill_search_docs WHERE name = 'alpha'", [], |r| r.get(0))
            .unwrap()
    };
    assert!(visible());
    let triggers: Vec<String> = store
        .conn()
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'skill_search_shown_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(triggers.len(), 12);
    assert!(
        triggers.iter().all(|t| t.contains("FROM skill_search_shown v") && !t.contains("inbox_decisions r"))
    );
    // A rejection of its current version hides it (the inbox_decisions insert trigger), its removal shows it.
    let reject = "INSERT INTO inbox_decisions (skill_name, integrity_hash, decision, decided_at)
                  VALUES ('alpha', ?1, 'rejected', 't')";
    store.conn().execute(reject, params![packet.integrity_hash]).unwrap();
    assert!(!visible());
    store.conn().execute("DELETE FROM inbox_decisions", []).unwrap();
    assert!(visible());
}
