//! Migration 23 (the compact skills tables) on a store as schema 22 left
//! it: every skill, version, revocation, bundle reference and audit line
//! is read back as it was — packets byte for byte, hashes, times — and the
//! rows are in their compact forms.

use ecp_protocol::wire::BundleFile;
use ecp_protocol::{Origin, SkillPacket, Timestamp};
use rusqlite::{Connection, params};

use super::{MIGRATIONS, migrate_to};
use crate::store::versions::Pick;
use crate::store::{DB_FILE, Store, packed};

/// A skill's row as schema 22's install wrote it: the packet's JSON packed
/// without a dictionary, hashes and times as text.
struct Row22<'a> {
    packet: &'a SkillPacket,
    local: bool,
    version: i64,
    seq: i64,
    updated_at: &'a str,
    withdrawal: Option<&'a str>,
}

fn insert_skill_22(conn: &Connection, row: &Row22<'_>) {
    let p = row.packet;
    conn.execute(
        "INSERT INTO skills (name, kind, origin, version, integrity_hash, created_at, updated_at, deprecated,
                             shareable, confidence, description, tags, seq, private, private_reason,
                             withdrawal, bundle_digest, origin_verified, packet, origin_key)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, ?9, ?10, ?11, ?12, NULL, NULL, ?13, ?14, 1, ?15, ?16)
         ON CONFLICT (name) DO UPDATE SET version = excluded.version, integrity_hash = excluded.integrity_hash,
             created_at = excluded.created_at, updated_at = excluded.updated_at, seq = excluded.seq,
             packet = excluded.packet, deprecated = excluded.deprecated",
        params![
            p.skill_name,
            if row.local { "local" } else { "external" },
            p.origin_instance,
            row.version,
            p.integrity_hash,
            p.created_at.to_string(),
            row.updated_at,
            p.deprecated,
            p.confidence,
            p.skill_description,
            serde_json::to_string(&p.tags).unwrap(),
            row.seq,
            row.withdrawal,
            p.bundle_digest,
            packed::pack(&serde_json::to_string(p).unwrap()),
            // A local skill signed already: the open leaves its packet as it is.
            row.local.then_some("key-1"),
        ],
    )
    .unwrap();
}

fn insert_version_22(conn: &Connection, row: &Row22<'_>, source: &str, superseded: bool) {
    let p = row.packet;
    conn.execute(
        "INSERT INTO skill_versions (name, version, seq, recorded_at, source, integrity_hash, deprecated, packet)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            p.skill_name,
            row.version,
            row.seq,
            row.updated_at,
            source,
            p.integrity_hash,
            p.deprecated,
            superseded.then(|| packed::pack(&serde_json::to_string(p).unwrap())),
        ],
    )
    .unwrap();
}

#[test]
fn migration_23_keeps_every_skill_version_revocation_bundle_and_audit_line_of_a_schema_22_store() {
    let dir = tempfile::tempdir().unwrap();
    let origin = Origin::new("node-a", "someone", "linux/amd64", "1.0");
    let at = |text: &str| Timestamp::parse(text).unwrap();
    let packet = |name: &str, body: &str, created: &str| {
        SkillPacket::new(&origin, name, &format!("{name}, described"), body, 0.9, at(created))
            .with_tags([name, "t"])
    };
    let alpha_1 =
        packet("alpha", "---\nname: alpha\n---\n# One\n\nü, 漢字, 🦀, \"quoted\".\n", "2026-11-20T10:00:00Z");
    let alpha_2 =
        packet("alpha", "---\nname: alpha\n---\n# Two\n\nCRLF\r\nline.\n", "2026-11-21T10:00:00.5Z");
    // A bundle, created at Go's zero time (kept as text: before 1970).
    let sha = "ab".repeat(32);
    let mut beta = packet("beta", "---\nname: beta\n---\nRun the script.\n", "0001-01-01T00:00:00Z");
    beta.files =
        vec![BundleFile { path: "scripts/run.sh".into(), size: 5, mode: "0755".into(), sha256: sha.clone() }];
    beta.bundle_digest = format!("sha256:{}", "cd".repeat(32));
    let gamma =
        packet("gamma", "---\nname: gamma\n---\nRevoked by its origin.\n", "2026-11-22T10:00:00.123456789Z");
    // A hash that is not 64 hex digits (stays text), from an odd peer.
    let mut odd = packet("odd", "---\nname: odd\n---\nOdd.\n", "2026-11-23T10:00:00Z");
    odd.integrity_hash = "legacy-hash".into();
    let mut gone = packet("gone", "---\nname: gone\n---\nbye\n", "2026-11-24T10:00:00Z");
    gone.deprecated = true;
    let gone_json = serde_json::to_string(&gone).unwrap();

    let rows = [
        (
            Row22 {
                packet: &alpha_1,
                local: true,
                version: 1,
                seq: 1,
                updated_at: "2026-11-26T10:00:01Z",
                withdrawal: None,
            },
            "skills-dir",
        ),
        (
            Row22 {
                packet: &alpha_2,
                local: true,
                version: 2,
                seq: 2,
                updated_at: "2026-11-26T10:00:02.25Z",
                withdrawal: None,
            },
            "cli",
        ),
        (
            Row22 {
                packet: &beta,
                local: false,
                version: 1,
                seq: 3,
                updated_at: "2026-11-26T10:00:03.000000001Z",
                withdrawal: None,
            },
            "peer:node-b",
        ),
        (
            Row22 {
                packet: &gamma,
                local: false,
                version: 1,
                seq: 4,
                updated_at: "2026-11-26T10:00:04Z",
                withdrawal: None,
            },
            "peer:node-b",
        ),
        (
            Row22 {
                packet: &odd,
                local: false,
                version: 1,
                seq: 5,
                updated_at: "2026-11-26T10:00:05Z",
                withdrawal: None,
            },
            "peer:node-c",
        ),
        (
            Row22 {
                packet: &gone,
                local: true,
                version: 1,
                seq: 6,
                updated_at: "2026-11-26T10:00:06Z",
                withdrawal: Some(&gone_json),
            },
            "cli",
        ),
    ];
    {
        let mut conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        migrate_to(&mut conn, 22).unwrap();
        for (i, (row, source)) in rows.iter().enumerate() {
            insert_skill_22(&conn, row);
            // alpha's first version is superseded by the next row: it keeps its own packet.
            insert_version_22(&conn, row, source, i == 0);
        }
        conn.execute_batch(&format!(
            "INSERT INTO meta (key, value) VALUES ('sequence', '7')
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value;
             INSERT INTO blobs (sha256, size, sender, received_at) VALUES ('{sha}', 5, 'peer:node-b', 100);
             INSERT INTO blob_refs (name, version, path, sha256) VALUES ('beta', 1, 'scripts/run.sh', '{sha}');
             INSERT INTO revocations (name, digest, origin, key_id, reason, seq, recorded_at, revocation)
                 VALUES ('gamma', '{}', 'node-a', 'key-a', 'leaked a token', 7, '2026-11-26T10:00:07Z', '{{}}');
             INSERT INTO audit (at, peer, skill_name, decision, reason) VALUES
                 ('2026-11-26T10:00:01.5Z', 'peer:node-b', 'beta', 'new', ''),
                 ('0001-01-01T00:00:00Z', 'operator', '*', 'odd time', 'kept as text');",
            gamma.integrity_hash
        ))
        .unwrap();
    }

    let store = Store::open(dir.path()).unwrap();

    // The packets, byte for byte: what is served (gone as its withdrawal) and what is held.
    let served = store.served_packets(Some(0)).unwrap();
    let json = |p: &SkillPacket| serde_json::to_string(p).unwrap();
    assert_eq!(served.packets, [json(&alpha_2), json(&beta), json(&gamma), json(&odd), gone_json.clone()]);
    let held: Vec<SkillPacket> = store.current_packets().unwrap().into_iter().map(|(p, _)| p).collect();
    assert_eq!(held, [alpha_2.clone(), beta.clone(), gamma.clone(), gone.clone(), odd.clone()]);

    // Records and versions: hashes, times, sources, as schema 22 held them.
    for (i, (row, source)) in rows.iter().enumerate().skip(1) {
        let name = &row.packet.skill_name;
        let (record, packet, versions) = store.skill(name).unwrap().unwrap();
        assert_eq!(&packet, row.packet, "{name}");
        assert_eq!(record.integrity_hash, row.packet.integrity_hash, "{name}");
        assert_eq!(record.created_at, row.packet.created_at.to_string(), "{name}");
        assert_eq!(record.updated_at, row.updated_at, "{name}");
        assert_eq!(
            (record.version, record.seq, record.kind),
            (row.version, row.seq, if row.local { "local" } else { "external" })
        );
        let last = versions.last().unwrap();
        assert_eq!((last.version, last.seq, last.source.as_str()), (row.version, row.seq, *source), "{name}");
        assert_eq!(
            (last.recorded_at.as_str(), last.integrity_hash.as_str()),
            (row.updated_at, row.packet.integrity_hash.as_str())
        );
        if i == 1 {
            let first = &versions[0];
            assert_eq!(
                (first.version, first.recorded_at.as_str(), first.source.as_str()),
                (1, "2026-11-26T10:00:01Z", "skills-dir")
            );
            assert_eq!(first.integrity_hash, alpha_1.integrity_hash);
        }
    }
    let history = store.history("alpha").unwrap().unwrap();
    assert_eq!(history.iter().map(|v| (v.version, v.current)).collect::<Vec<_>>(), [(1, false), (2, true)]);
    assert_eq!(store.version_packet("alpha", &Pick::Number(1)).unwrap(), Some((1, alpha_1.clone())));
    assert_eq!(
        store.version_packet("alpha", &Pick::Digest(alpha_2.integrity_hash.clone())).unwrap(),
        Some((2, alpha_2.clone()))
    );

    // The bundle's file is still referenced (no cascade), so its blob is served.
    assert!(store.serves_blob(&sha).unwrap());
    // The revocation still hides gamma from search; the others are shown.
    assert!(store.revoked_digests("gamma").unwrap().contains_key(&gamma.integrity_hash));
    let shown: Vec<bool> =
        ["alpha", "beta", "gamma", "odd", "gone"].iter().map(|n| store.is_shown(n).unwrap()).collect();
    assert_eq!(shown, [true, true, false, true, false]);

    let audit: Vec<(String, String)> =
        store.audit(10).unwrap().into_iter().map(|e| (e.at, e.decision)).collect();
    assert_eq!(
        audit,
        [
            ("0001-01-01T00:00:00Z".to_owned(), "odd time".to_owned()),
            ("2026-11-26T10:00:01.5Z".to_owned(), "new".to_owned())
        ]
    );

    // The compact forms: 32-byte hashes, integer times (text where they have none), dictionary frames.
    let conn = store.conn();
    let forms: Vec<(String, String, String, String, i64)> = conn
        .prepare(
            "SELECT name, typeof(hash), typeof(created), typeof(updated), packet FROM skills ORDER BY name",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get::<_, Vec<u8>>(4)?[0].into()))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let blob = |name: &str, created: &str| {
        (name.to_owned(), "blob".to_owned(), created.to_owned(), "integer".to_owned(), 1)
    };
    assert_eq!(
        forms,
        [
            blob("alpha", "integer"),
            blob("beta", "text"),
            blob("gamma", "integer"),
            blob("gone", "integer"),
            ("odd".to_owned(), "text".to_owned(), "integer".to_owned(), "integer".to_owned(), 1),
        ]
    );
    let version_forms: Vec<(String, String, Option<u8>)> = conn
        .prepare("SELECT typeof(hash), typeof(recorded), packet FROM skill_versions WHERE name = 'alpha' ORDER BY version")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, Option<Vec<u8>>>(2)?.map(|p| p[0]))))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // The current version's hash is read from `skills` since migration 24 (NULL in its row).
    assert_eq!(
        version_forms,
        [("blob".to_owned(), "integer".to_owned(), Some(1)), ("null".to_owned(), "integer".to_owned(), None)]
    );
    let (schema, foreign_keys): (String, bool) = (
        conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).unwrap(),
        conn.pragma_query_value(None, "foreign_keys", |r| r.get(0)).unwrap(),
    );
    assert_eq!((schema, foreign_keys), (MIGRATIONS.len().to_string(), true));
    let refs: i64 = conn.query_row("SELECT COUNT(*) FROM blob_refs", [], |r| r.get(0)).unwrap();
    assert_eq!(refs, 1);
}

#[test]
fn a_new_skill_is_written_in_the_compact_forms_and_read_back_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let origin = Origin::new("node-a", "someone", "linux/amd64", "1.0");
    let created = Timestamp::parse("2026-11-26T10:00:00.000000001Z").unwrap();
    let packet = SkillPacket::new(&origin, "a", "d", "---\nname: a\n---\nbody\n", 0.9, created);
    store
        .transaction(|tx| {
            tx.install(&packet, ecp_protocol::SkillKind::External, true, &crate::store::Source::Operator)
        })
        .unwrap();
    let (record, held, versions) = store.skill("a").unwrap().unwrap();
    assert_eq!(held, packet);
    assert_eq!(
        (record.integrity_hash.as_str(), record.created_at.as_str()),
        (packet.integrity_hash.as_str(), "2026-11-26T10:00:00.000000001Z")
    );
    assert_eq!(versions[0].recorded_at, record.updated_at);
    assert!(Timestamp::parse(&record.updated_at).is_ok(), "{}", record.updated_at);
    let conn = store.conn();
    let (hash, created_ns, first): (Vec<u8>, i64, Vec<u8>) = conn
        .query_row("SELECT hash, created, packet FROM skills", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    assert_eq!(hash.len(), 32);
    assert_eq!(created_ns, 1_795_687_200_000_000_001);
    assert_eq!(first[0], 1, "packed against dictionary 1");
}
