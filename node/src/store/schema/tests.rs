//! The migrations before 23 on stores as those schemas left them, and how
//! an update keeps one stored copy of each version.

use super::*;

#[test]
fn migration_4_accounts_the_entries_held_before_it_to_their_peers() {
    let mut conn = Connection::open_in_memory().unwrap();
    for sql in &MIGRATIONS[..3] {
        conn.execute_batch(sql).unwrap();
    }
    conn.execute("INSERT INTO meta (key, value) VALUES ('schema', '3')", []).unwrap();
    for (peer, status) in [("peer:a", "held"), ("peer:a", "held"), ("peer:b", "held"), ("peer:b", "dropped")]
    {
        conn.execute(
            "INSERT INTO quarantine (received_at, last_seen_at, times_seen, peer, skill_name, integrity_hash,
                                     stage, reason, findings, packet, status)
             VALUES ('t', 't', 1, ?1, 'n', 'h', 'policy', 'r', '[]', '{\"x\":1}', ?2)",
            params![peer, status],
        )
        .unwrap();
    }
    migrate(&mut conn).unwrap();
    let held: Vec<(String, i64, i64)> = conn
        .prepare("SELECT sender, entries, bytes FROM quarantine_held ORDER BY sender")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // Each weighs its packet, findings and reason: 7 + 2 + 1 bytes.
    assert_eq!(held, [("peer:a".to_owned(), 2, 20), ("peer:b".to_owned(), 1, 10)]);
    let totals: (i64, i64) = conn
        .query_row("SELECT entries, bytes FROM quarantine_totals", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!(totals, (3, 30));
}

#[test]
fn migration_9_drops_the_listing_of_bundles_stored_without_their_files() {
    let mut conn = Connection::open_in_memory().unwrap();
    for sql in &MIGRATIONS[..8] {
        conn.execute_batch(sql).unwrap();
    }
    conn.execute("INSERT INTO meta (key, value) VALUES ('schema', '8')", []).unwrap();
    let packet =
        r#"{"skillName":"b","integrityHash":"h","files":[{"path":"SKILL.md"}],"bundleDigest":"sha256:x"}"#;
    conn.execute(
        "INSERT INTO skills (name, kind, origin, version, integrity_hash, created_at, updated_at, deprecated,
                             shareable, confidence, description, tags, seq, packet)
         VALUES ('b', 'external', 'o', 1, 'h', 't', 't', 0, 1, 0.9, 'd', '[]', 1, ?1)",
        params![packet],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO skill_versions (name, version, seq, recorded_at, source, integrity_hash, deprecated, packet)
         VALUES ('b', 1, 1, 't', 'peer:x', 'h', 0, ?1)",
        params![packet],
    )
    .unwrap();
    migrate_to(&mut conn, 10).unwrap();
    for table in ["skills", "skill_versions"] {
        let kept: String = conn.query_row(&format!("SELECT packet FROM {table}"), [], |r| r.get(0)).unwrap();
        assert_eq!(kept, r#"{"skillName":"b","integrityHash":"h"}"#, "{table}");
    }
    let digest: String = conn.query_row("SELECT bundle_digest FROM skills", [], |r| r.get(0)).unwrap();
    assert_eq!(digest, "");
}

#[test]
fn migration_11_holds_copies_under_the_go_default_identity_as_unverified() {
    let mut conn = Connection::open_in_memory().unwrap();
    for sql in &MIGRATIONS[..10] {
        conn.execute_batch(sql).unwrap();
    }
    conn.execute("INSERT INTO meta (key, value) VALUES ('schema', '10')", []).unwrap();
    for (name, kind, origin) in [
        ("laundered", "external", "ok-agent"),
        ("genuine", "external", "node-a"),
        ("own", "local", "ok-agent"),
    ] {
        conn.execute(
            "INSERT INTO skills (name, kind, origin, version, integrity_hash, created_at, updated_at, deprecated,
                                 shareable, confidence, description, tags, seq, packet)
             VALUES (?1, ?2, ?3, 1, 'h', 't', 't', 0, 1, 0.9, 'd', '[]', 1, '{}')",
            params![name, kind, origin],
        )
        .unwrap();
    }
    migrate(&mut conn).unwrap();
    let verified: Vec<(String, bool)> = conn
        .prepare("SELECT name, origin_verified FROM skills ORDER BY name")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // A local skill is its own origin, whatever this node is called.
    assert_eq!(
        verified,
        [("genuine".to_owned(), true), ("laundered".to_owned(), false), ("own".to_owned(), true)]
    );
}

/// A packet as schema 10's install wrote it: its JSON text in both tables.
fn insert_schema_10(
    conn: &Connection,
    packet: &ecp_protocol::SkillPacket,
    version: i64,
    withdrawal: Option<&str>,
) {
    let json = serde_json::to_string(packet).unwrap();
    conn.execute(
        "INSERT INTO skills (name, kind, origin, version, integrity_hash, created_at, updated_at, deprecated,
                             shareable, confidence, description, tags, seq, packet, bundle_digest, withdrawal)
         VALUES (?1, 'local', 'o', ?2, ?3, 't', 't', ?4, 1, 0.9, 'd', '[]', ?2, ?5, '', ?6)
         ON CONFLICT (name) DO UPDATE SET version = excluded.version, packet = excluded.packet,
             integrity_hash = excluded.integrity_hash, seq = excluded.seq, deprecated = excluded.deprecated",
        params![packet.skill_name, version, packet.integrity_hash, packet.deprecated, json, withdrawal],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO skill_versions (name, version, seq, recorded_at, source, integrity_hash, deprecated, packet)
         VALUES (?1, ?2, ?2, 't', 'cli', ?3, ?4, ?5)",
        params![packet.skill_name, version, packet.integrity_hash, packet.deprecated, json],
    )
    .unwrap();
}

#[test]
fn migration_12_packs_every_stored_packet_and_reads_back_every_body_byte_identical() {
    use ecp_protocol::{Origin, SkillKind, SkillPacket};

    let dir = tempfile::tempdir().unwrap();
    let origin = Origin::new("node-a", "someone", "linux/amd64", "1.0");
    let packet =
        |name: &str, body: &str| SkillPacket::new(&origin, name, "d", body, 0.9, crate::store::now());
    let alpha_1 =
        packet("alpha", "---\nname: alpha\n---\n# First\n\nTabs\tand \"quotes\" and ü, 漢字, 🦀.\n");
    let alpha_2 = packet("alpha", "---\nname: alpha\n---\n# Second\n\nCRLF\r\nline.\n");
    let beta =
        packet("beta", &format!("---\nname: beta\n---\n{}", "A long line of a long skill. ".repeat(2000)));
    let mut gone = packet("gone", "---\nname: gone\n---\nbye\n");
    gone.deprecated = true;
    let withdrawal = serde_json::to_string(&gone).unwrap();
    {
        let mut conn = Connection::open(dir.path().join(super::super::DB_FILE)).unwrap();
        migrate_to(&mut conn, 10).unwrap();
        insert_schema_10(&conn, &alpha_1, 1, None);
        insert_schema_10(&conn, &alpha_2, 2, None);
        insert_schema_10(&conn, &beta, 1, Some(&withdrawal));
    }
    let store = super::super::Store::open(dir.path()).unwrap();

    let current = store.current_packets().unwrap();
    let bodies: Vec<(&str, &str)> =
        current.iter().map(|(p, _)| (p.skill_name.as_str(), p.skill_body.as_str())).collect();
    assert_eq!(bodies, [("alpha", alpha_2.skill_body.as_str()), ("beta", beta.skill_body.as_str())]);
    assert!(current.iter().all(|(p, kind)| *kind == SkillKind::Local && p.verify().is_ok()));
    // Served in sequence order: beta as its withdrawal (kept as text), alpha as stored.
    // Signed at open (a node made before keys signs its own skills), else as stored.
    let served: Vec<SkillPacket> = store
        .served_packets(Some(0))
        .unwrap()
        .packets
        .iter()
        .map(|json| serde_json::from_str(json).unwrap())
        .collect();
    assert!(served.iter().all(|p| ecp_protocol::identity::verify(p).unwrap().is_some()));
    let unsigned: Vec<SkillPacket> =
        served.into_iter().map(|p| SkillPacket { origin_signature: None, ..p }).collect();
    assert_eq!(unsigned, [gone.clone(), alpha_2.clone()]);
    assert_eq!(store.skill("alpha").unwrap().unwrap().2.len(), 2, "both versions listed");

    // One packed copy per version: the superseded one in skill_versions, the current one in skills only.
    let conn = store.conn();
    let stored: Vec<(String, i64, Option<Vec<u8>>)> = conn
        .prepare("SELECT name, version, packet FROM skill_versions ORDER BY name, version")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(stored.len(), 3);
    let alpha_1_packed = stored[0].2.as_deref().expect("the superseded version keeps its packet");
    let alpha_1_json = super::super::packed::json(rusqlite::types::ValueRef::Blob(alpha_1_packed)).unwrap();
    assert_eq!(alpha_1_json, serde_json::to_string(&alpha_1).unwrap());
    assert_eq!((stored[1].2.as_ref(), stored[2].2.as_ref()), (None, None), "current versions: in skills");
    let packed_bytes: i64 =
        conn.query_row("SELECT SUM(length(packet)) FROM skills", [], |r| r.get(0)).unwrap();
    let beta_json = serde_json::to_string(&beta).unwrap().len();
    assert!((packed_bytes as usize) < beta_json / 10, "beta's repetitive body packs small: {packed_bytes}");
}

#[test]
fn an_update_moves_the_superseded_packet_into_its_version_row_and_pruning_drops_it() {
    use ecp_protocol::{Origin, SkillKind, SkillPacket};

    use crate::store::Source;

    let dir = tempfile::tempdir().unwrap();
    let store = super::super::Store::open(dir.path()).unwrap();
    store.set_history_depth(1);
    let origin = Origin::new("node-a", "someone", "linux/amd64", "1.0");
    let versions: Vec<SkillPacket> = (1..=3)
        .map(|i| {
            SkillPacket::new(
                &origin,
                "a",
                "d",
                &format!("---\nname: a\n---\nv{i}\n"),
                0.9,
                crate::store::now(),
            )
        })
        .collect();
    for p in &versions {
        store.transaction(|tx| tx.install(p, SkillKind::Local, true, &Source::Operator).map(drop)).unwrap();
    }
    let conn = store.conn();
    let rows: Vec<(i64, Option<Vec<u8>>)> = conn
        .prepare("SELECT version, packet FROM skill_versions ORDER BY version")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // Depth 1: version 1 pruned; 2 superseded, with its packet; 3 current, in skills.
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), [2, 3]);
    let v2 =
        super::super::packed::json(rusqlite::types::ValueRef::Blob(rows[0].1.as_deref().unwrap())).unwrap();
    let v2: SkillPacket = serde_json::from_str(&v2).unwrap();
    assert!(ecp_protocol::identity::verify(&v2).unwrap().is_some(), "a local version is signed");
    assert_eq!(SkillPacket { origin_signature: None, ..v2 }, versions[1]);
    assert_eq!(rows[1].1, None);
}

/// The schema's tables, indexes, views and triggers as SQLite lists them.
fn schema_of(conn: &Connection) -> Vec<(String, String, String, Option<String>)> {
    conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn a_new_store_is_made_in_one_transaction_with_the_schema_its_migrations_make_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let wal = |name: &str| {
        let conn = Connection::open(dir.path().join(name)).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        // No checkpoint in between: the WAL keeps every frame written.
        conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        conn
    };
    let mut new = wal("new.sqlite3");
    migrate(&mut new).unwrap();
    // One by one: a store left at schema 1 by an older version.
    let mut stepped = wal("stepped.sqlite3");
    stepped.execute_batch(MIGRATIONS[0]).unwrap();
    stepped.execute("INSERT INTO meta (key, value) VALUES ('schema', '1')", []).unwrap();
    migrate(&mut stepped).unwrap();

    assert_eq!(schema_of(&new), schema_of(&stepped));
    let version = |conn: &Connection| -> String {
        conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).unwrap()
    };
    assert_eq!(version(&new), MIGRATIONS.len().to_string());
    assert_eq!(version(&stepped), MIGRATIONS.len().to_string());
    let foreign_keys =
        |conn: &Connection| -> bool { conn.pragma_query_value(None, "foreign_keys", |r| r.get(0)).unwrap() };
    assert_eq!(foreign_keys(&new), foreign_keys(&stepped), "the pragma is as it was");
    // One commit: each page of the new store is in the WAL once, where
    // the migrations one by one wrote the schema's pages again and again.
    let frames = |conn: &Connection| -> (i64, i64) {
        let log: i64 = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get(1)).unwrap();
        let pages: i64 = conn.pragma_query_value(None, "page_count", |r| r.get(0)).unwrap();
        (log, pages)
    };
    let (log, pages) = frames(&new);
    assert!(log <= pages, "a new store's WAL: {log} frames for {pages} pages");
    let (log, pages) = frames(&stepped);
    assert!(log > 2 * pages, "migrated one by one: {log} frames for {pages} pages");
}
