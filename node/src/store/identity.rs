//! The node's identity (`SPEC.md` §12.10): its Ed25519 key in the data
//! folder, the signature on every packet it authors, and the keys it knows
//! other origins by (the `origin_keys` table, migration 14).
//!
//! The key file `node.key` holds the 32-byte secret seed in hex, owner-only
//! (0600); it is made on first start and never logged or served — only its
//! public half and key id are. A node made with a key takes the key id as
//! its instance id; one made before keeps its id and gains a key.
//!
//! An origin is known by a key in one of three ways, shown as the row's
//! `source`: `pinned` (peers.toml `origin_keys`, replaced each time the
//! file is applied, and never overridden), `manifest` (the origin's own
//! manifest, when this node pulled it) and `first-use` (the key of the first
//! signed packet of it this node accepted).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use ecp_protocol::SkillPacket;
use ecp_protocol::identity::NodeKey;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::{StoreError, Tx, now};

/// The key file in the data folder.
pub const KEY_FILE: &str = "node.key";

/// How an origin's key came to be known.
pub const PINNED: &str = "pinned";
/// Learned from the origin's own manifest.
pub const FROM_MANIFEST: &str = "manifest";
/// The key of the first signed packet accepted from the origin.
pub const FIRST_USE: &str = "first-use";

/// The node's key from `dir`, made (owner-only) when there is none.
///
/// # Errors
///
/// The file cannot be read or made, does not hold a key, or others may read it.
pub(super) fn load_or_create(dir: &Path) -> Result<NodeKey, StoreError> {
    let path = dir.join(KEY_FILE);
    let bad = |problem: &str| StoreError::Corrupt(format!("the node key file {KEY_FILE} {problem}"));
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            check_owner_only(&path).map_err(|problem| bad(&problem))?;
            let mut seed = [0u8; 32];
            hex::decode_to_slice(text.trim(), &mut seed)
                .map_err(|_| bad("does not hold 64 hex digits; restore it from a backup, or remove it to make a new key (peers that know the old one will refuse this node's skills)"))?;
            Ok(NodeKey::from_seed(&seed))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = NodeKey::from_seed(&rand::random::<[u8; 32]>());
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(&path)?;
            file.write_all(format!("{}\n", hex::encode(key.seed())).as_bytes())?;
            file.sync_all()?;
            Ok(key)
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(unix)]
fn check_owner_only(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).map_err(|e| e.to_string())?.permissions().mode();
    if mode & 0o077 != 0 {
        return Err(format!("may be read by others (mode {:o}); run chmod 600 on it", mode & 0o777));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_owner_only(_path: &Path) -> Result<(), String> {
    Ok(())
}

/// Signs `packet` as authored here: its origin speaks with `key`.
pub(super) fn sign(packet: &mut SkillPacket, key: &NodeKey) {
    packet.origin_signature = None;
    let instance = packet.origin_instance.clone();
    packet.origin_signature = Some(key.sign(packet, &instance));
}

/// Signs every local packet stored unsigned — those written before the
/// node had a key — so that peers which learn the key never take the
/// node's own skills for downgrades. Runs at open; a no-op once done.
pub(super) fn sign_unsigned_local(conn: &mut Connection, key: &NodeKey) -> Result<usize, StoreError> {
    let tx = conn.transaction()?;
    let rows: Vec<(String, String, Option<String>)> = tx
        .prepare("SELECT name, packet, withdrawal FROM skills WHERE kind = 'local' AND origin_key IS NULL")?
        .query_map([], |row| Ok((row.get(0)?, super::packed::column(row, 1)?, row.get(2)?)))?
        .collect::<Result<_, _>>()?;
    for (name, json, withdrawal) in &rows {
        let mut packet: SkillPacket = super::from_json(json)?;
        sign(&mut packet, key);
        let withdrawal = withdrawal
            .as_deref()
            .map(|w| {
                let mut tombstone: SkillPacket = super::from_json(w)?;
                sign(&mut tombstone, key);
                Ok::<_, StoreError>(super::to_json(&tombstone))
            })
            .transpose()?;
        tx.execute(
            "UPDATE skills SET packet = ?2, withdrawal = ?3, origin_key = ?4 WHERE name = ?1",
            params![name, super::packed::pack_stored(&super::to_json(&packet)), withdrawal, key.key_id()],
        )?;
    }
    tx.commit()?;
    Ok(rows.len())
}

/// An origin and the key it is known by, as `ecp-node keys origins` and the
/// local API list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OriginKey {
    /// The origin's instance id.
    pub instance: String,
    /// Its key id.
    pub key_id: String,
    /// `pinned`, `manifest` or `first-use`.
    pub source: String,
    /// When this node recorded it.
    pub recorded_at: String,
}

impl Tx<'_> {
    /// The keys the origins `instances` are known by.
    pub fn origin_keys_of<'a>(
        &self,
        instances: impl IntoIterator<Item = &'a str>,
    ) -> Result<HashMap<String, String>, StoreError> {
        let mut stmt = self.sql.prepare_cached("SELECT key_id FROM origin_keys WHERE instance = ?1")?;
        let mut known = HashMap::new();
        for instance in instances {
            if known.contains_key(instance) {
                continue;
            }
            if let Some(key) = stmt.query_row([instance], |r| r.get::<_, String>(0)).optional()? {
                known.insert(instance.to_owned(), key);
            }
        }
        Ok(known)
    }

    /// Records `key_id` for `instance` unless the origin is known already
    /// (trust on first use: the first key stays).
    pub fn learn_origin_key(&self, instance: &str, key_id: &str, source: &str) -> Result<bool, StoreError> {
        let added = self
            .sql
            .prepare_cached(
                "INSERT INTO origin_keys (instance, key_id, source, recorded_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (instance) DO NOTHING",
            )?
            .execute(params![instance, key_id, source, now().to_string()])?;
        Ok(added > 0)
    }
}

impl super::Store {
    /// The node's own key.
    pub fn node_key(&self) -> &NodeKey {
        &self.key
    }

    /// Every origin this node knows a key of, by instance.
    pub fn origin_keys(&self) -> Result<Vec<OriginKey>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT instance, key_id, source, recorded_at FROM origin_keys ORDER BY instance",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok(OriginKey {
                    instance: r.get(0)?,
                    key_id: r.get(1)?,
                    source: r.get(2)?,
                    recorded_at: r.get(3)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// Makes `pinned` (instance → key id, peers.toml `origin_keys`) the
    /// pinned keys: they replace whatever key was known of those origins,
    /// and pins no longer listed are dropped (the origin is then learned
    /// again).
    pub fn pin_origin_keys(&self, pinned: &[(String, String)]) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute("DELETE FROM origin_keys WHERE source = ?1", [PINNED])?;
            let mut stmt = tx.prepare_cached(
                "INSERT INTO origin_keys (instance, key_id, source, recorded_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (instance) DO UPDATE SET key_id = excluded.key_id, source = excluded.source,
                     recorded_at = excluded.recorded_at",
            )?;
            let at = now().to_string();
            for (instance, key_id) in pinned {
                stmt.execute(params![instance, key_id, PINNED, at])?;
            }
            Ok(())
        })
    }

    /// Records the key an origin's own manifest names, unless the origin
    /// is known already; whether it was recorded.
    pub fn learn_manifest_key(&self, instance: &str, key_id: &str) -> Result<bool, StoreError> {
        self.write(|sql| {
            let tx = Tx { sql, history_depth: 0, blobs: &self.blobs, key: &self.key };
            tx.learn_origin_key(instance, key_id, FROM_MANIFEST)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_made_owner_only_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let made = load_or_create(dir.path()).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(KEY_FILE)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(load_or_create(dir.path()).unwrap().key_id(), made.key_id());
        assert!(!format!("{made:?}").contains(&hex::encode(made.seed())), "Debug never shows the seed");
    }

    #[cfg(unix)]
    #[test]
    fn a_key_file_others_may_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        load_or_create(dir.path()).unwrap();
        let path = dir.path().join(KEY_FILE);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let error = load_or_create(dir.path()).unwrap_err().to_string();
        assert!(error.contains("chmod 600"), "{error}");
        std::fs::write(&path, "not hex\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(load_or_create(dir.path()).unwrap_err().to_string().contains("64 hex digits"));
    }

    #[test]
    fn a_new_store_takes_its_key_id_as_instance_id_and_an_old_one_keeps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let store = super::super::Store::open(dir.path()).unwrap();
        assert_eq!(store.instance_id(), store.node_key().key_id());
        assert!(ecp_protocol::identity::is_key_id(store.instance_id()));
        drop(store);

        // A node made before keys: its instance id stays, a key is made.
        let old = tempfile::tempdir().unwrap();
        let store = super::super::Store::open(old.path()).unwrap();
        drop(store);
        std::fs::remove_file(old.path().join(KEY_FILE)).unwrap();
        let conn = Connection::open(old.path().join(super::super::DB_FILE)).unwrap();
        conn.execute("UPDATE meta SET value = 'ecp-0a1b2c3d4e5f' WHERE key = 'instance_id'", []).unwrap();
        drop(conn);
        let store = super::super::Store::open(old.path()).unwrap();
        assert_eq!(store.instance_id(), "ecp-0a1b2c3d4e5f");
        assert!(old.path().join(KEY_FILE).exists());
    }

    #[test]
    fn the_first_key_stays_and_pins_replace_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = super::super::Store::open(dir.path()).unwrap();
        assert!(store.learn_manifest_key("alice", "K1").unwrap());
        assert!(!store.learn_manifest_key("alice", "K2").unwrap(), "known already");
        store.pin_origin_keys(&[("alice".into(), "K3".into())]).unwrap();
        let keys = store.origin_keys().unwrap();
        assert_eq!((keys[0].key_id.as_str(), keys[0].source.as_str()), ("K3", PINNED));
        store.pin_origin_keys(&[]).unwrap();
        assert!(store.origin_keys().unwrap().is_empty(), "an unpinned origin is learned again");
    }
}
