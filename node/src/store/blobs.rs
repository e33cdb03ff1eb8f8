//! Blobs in the database (`SPEC.md` §12): which are held and who brought
//! them, which file of which kept version uses which, the per-sender quota
//! on blobs no version uses yet, the cap on all blobs, the collection of
//! unused blobs after their grace period, and the acceptance check of a
//! bundle ([`Tx::bundle_decision`]). The bytes are [`BlobFiles`]'.

use std::time::Duration;

use ecp_protocol::AcceptPolicy;
use ecp_protocol::SkillPacket;
use ecp_protocol::bundle::{BundleLimits, BundleManifest, BundleScan, SKILL_MD, scan_bundle};
use ecp_protocol::merge::Decision;
use ecp_protocol::scan::ScanReport;
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::blob_files::{BlobFiles, VerifiedBlob};
use super::{Store, StoreError, Tx};

/// Default [`BlobLimits::sender_bytes`]: 256 MiB, four bundles at the largest.
pub const DEFAULT_BLOB_QUOTA_BYTES: u64 = 256 * 1024 * 1024;
/// Default [`BlobLimits::total_bytes`]: 8 GiB.
pub const DEFAULT_BLOB_STORE_BYTES: u64 = 8 * 1024 * 1024 * 1024;
/// Default [`BlobLimits::grace`]: one hour.
pub const DEFAULT_BLOB_GRACE: Duration = Duration::from_secs(3600);

/// The blob store's limits (`[limits] blob_quota_bytes`, `blob_store_bytes`, `blob_grace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobLimits {
    /// Bytes of blobs no kept version lists (uploads ahead of their
    /// packet) one sender may hold at once.
    pub sender_bytes: u64,
    /// Bytes of all blobs held.
    pub total_bytes: u64,
    /// How long a blob no kept version lists is kept.
    pub grace: Duration,
}

impl BlobLimits {
    /// The defaults.
    pub const DEFAULT: BlobLimits = BlobLimits {
        sender_bytes: DEFAULT_BLOB_QUOTA_BYTES,
        total_bytes: DEFAULT_BLOB_STORE_BYTES,
        grace: DEFAULT_BLOB_GRACE,
    };
}

impl Default for BlobLimits {
    fn default() -> Self {
        BlobLimits::DEFAULT
    }
}

/// A blob refused by the quota or the cap (`507 blob_quota_exceeded`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlobRefused {
    /// The sender's unused blobs would exceed its quota.
    #[error(
        "this sender holds {held} bytes of blobs no skill lists yet; {size} more would exceed its quota of \
         {quota} bytes: push the packets of the blobs already uploaded, or wait for the grace period to end"
    )]
    Quota {
        /// Bytes the sender holds unused.
        held: u64,
        /// The blob's size.
        size: u64,
        /// The quota.
        quota: u64,
    },
    /// All blobs together would exceed the store's cap.
    #[error("the node holds {held} bytes of blobs; {size} more would exceed its limit of {cap} bytes")]
    Full {
        /// Bytes held in all.
        held: u64,
        /// The blob's size.
        size: u64,
        /// The cap.
        cap: u64,
    },
}

/// What the store holds in blobs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobUsage {
    /// Blobs held.
    pub blobs: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Of those, bytes no kept version lists (waiting for their packet or collection).
    pub unused_bytes: u64,
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_u64(n: i64) -> u64 {
    n.max(0).unsigned_abs()
}

fn is_held(conn: &Connection, sha256: &str) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM blobs WHERE sha256 = ?1")?
        .query_row(params![sha256], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The room left for blobs from one sender, read once for a batch: the
/// cap on all blobs and the sender's quota of unused blobs (this node's
/// own, `""`, has none). Summing the sizes once per batch rather than once
/// per blob: each sum reads every blob's row.
struct Room {
    held: u64,
    cap: u64,
    /// The sender's unused bytes and its quota, when it has one.
    unused: Option<(u64, u64)>,
}

impl Room {
    fn of(conn: &Connection, sender: &str, limits: &BlobLimits) -> Result<Room, StoreError> {
        let held: i64 =
            conn.prepare_cached("SELECT COALESCE(SUM(size), 0) FROM blobs")?.query_row([], |r| r.get(0))?;
        let unused = if sender.is_empty() || limits.sender_bytes == u64::MAX {
            None
        } else {
            let unused: i64 = conn
                .prepare_cached(
                    "SELECT COALESCE(SUM(size), 0) FROM blobs b WHERE sender = ?1
                     AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.sha256 = b.sha256)",
                )?
                .query_row(params![sender], |r| r.get(0))?;
            Some((to_u64(unused), limits.sender_bytes))
        };
        Ok(Room { held: to_u64(held), cap: limits.total_bytes, unused })
    }

    /// Whether `size` bytes more fit; counts them when they do.
    fn check(&self, size: u64) -> Result<(), StoreError> {
        if self.held.saturating_add(size) > self.cap {
            return Err(BlobRefused::Full { held: self.held, size, cap: self.cap }.into());
        }
        if let Some((unused, quota)) = self.unused
            && unused.saturating_add(size) > quota
        {
            return Err(BlobRefused::Quota { held: unused, size, quota }.into());
        }
        Ok(())
    }

    /// [`Room::check`], then counts `size` bytes as taken.
    fn take(&mut self, size: u64) -> Result<(), StoreError> {
        self.check(size)?;
        self.held += size;
        if let Some((unused, _)) = &mut self.unused {
            *unused += size;
        }
        Ok(())
    }
}

/// Makes `packet` a tombstone: deprecated, listing no files — a withdrawal
/// needs none, and one that listed them would wait for blobs at a
/// bundle-aware peer (`SPEC.md` §12.9.1).
pub fn make_tombstone(packet: &mut SkillPacket) {
    packet.deprecated = true;
    packet.files.clear();
    packet.bundle_digest.clear();
}

/// Records the files of version `version` of a bundle; a file whose blob
/// is not held refuses the install (nothing installs part of a bundle).
pub(super) fn add_refs(tx: &Transaction<'_>, packet: &SkillPacket, version: i64) -> Result<(), StoreError> {
    let mut insert = tx.prepare_cached(
        "INSERT OR REPLACE INTO blob_refs (name, version, path, sha256) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for file in packet.files.iter().filter(|f| f.path != SKILL_MD) {
        if !is_held(tx, &file.sha256)? {
            return Err(StoreError::BundleNotHeld(packet.skill_name.clone()));
        }
        insert.execute(params![packet.skill_name, version, file.path, file.sha256])?;
    }
    Ok(())
}

impl Tx<'_> {
    /// What becomes of an installing decision for `packet` (`SPEC.md`
    /// §12.9): `None` for a plain skill, or a bundle whose every blob is
    /// held and passes its entry's checks; otherwise the refusal to record
    /// instead — `pending: …` while a blob is missing, `invalid bundle: …`
    /// when a held one fails.
    pub fn bundle_decision(&self, packet: &SkillPacket, limits: &BundleLimits) -> Option<Decision> {
        let manifest = match BundleManifest::from_packet(packet, limits) {
            Ok(Some(manifest)) => manifest,
            Ok(None) => return None,
            Err(e) => return Some(e.into()),
        };
        let held = |sha256: &str| is_held(self.sql, sha256).unwrap_or(false);
        if let Some(pending) = manifest.pending_decision(held) {
            return Some(pending);
        }
        for file in manifest.files().iter().filter(|f| f.path != SKILL_MD) {
            let bytes = match self.blobs.read(&file.sha256) {
                Ok(bytes) => bytes,
                Err(e) => {
                    tracing::error!(error = %e, blob = %file.sha256, "a blob the store lists cannot be read");
                    return manifest.pending_decision(|sha256| sha256 != file.sha256);
                }
            };
            if let Err(e) = manifest.verify_blob(&file.path, &bytes) {
                return Some(e.into());
            }
        }
        None
    }

    /// The acceptance check of a bundle at intake (`SPEC.md` §12.9.1–
    /// §12.9.4): what [`Tx::bundle_decision`] checks, then the scan of
    /// every held file by its language and of the archives among them, its
    /// findings refusing the bundle at the policy's threshold like a
    /// body's. `None` for a plain skill.
    pub fn bundle_scan(
        &self,
        packet: &SkillPacket,
        policy: &(impl AcceptPolicy + ?Sized),
    ) -> Option<BundleScan> {
        let manifest = match BundleManifest::from_packet(packet, &policy.bundle_limits()) {
            Ok(Some(manifest)) => manifest,
            Ok(None) => return None,
            Err(e) => return Some(BundleScan { report: ScanReport::default(), refusal: Some(e.into()) }),
        };
        let blob = |sha256: &str| {
            if !is_held(self.sql, sha256).unwrap_or(false) {
                return None;
            }
            self.blobs
                .read(sha256)
                .inspect_err(
                    |e| tracing::error!(error = %e, blob = %sha256, "a blob the store lists cannot be read"),
                )
                .ok()
        };
        Some(scan_bundle(&manifest, &packet.skill_body, blob, policy))
    }
}

impl Store {
    /// The blob files of this store.
    pub fn blob_files(&self) -> &BlobFiles {
        &self.blobs
    }

    /// Whether blob `sha256` is held.
    pub fn holds_blob(&self, sha256: &str) -> Result<bool, StoreError> {
        is_held(&self.conn(), sha256)
    }

    /// Of `wanted`, those not held, in the order given, each once
    /// (`POST /ecp/blobs/missing`).
    pub fn missing_blobs<'a>(&self, wanted: &'a [String]) -> Result<Vec<&'a str>, StoreError> {
        let conn = self.conn();
        let mut missing: Vec<&str> = Vec::new();
        for sha256 in wanted {
            if !missing.contains(&sha256.as_str()) && !is_held(&conn, sha256)? {
                missing.push(sha256);
            }
        }
        Ok(missing)
    }

    /// Whether a blob of `size` bytes from `sender` would fit now: asked
    /// before an upload is read, on its declared length.
    ///
    /// # Errors
    ///
    /// [`StoreError::BlobRefused`] when it would not.
    pub fn blob_room(&self, sender: &str, size: u64, limits: &BlobLimits) -> Result<(), StoreError> {
        Room::of(&self.conn(), sender, limits)?.check(size)
    }

    /// Keeps a written blob from `sender` (`""`: this node's own), unless
    /// it is held already: `true` when it is new ([`Store::put_blobs`]).
    pub fn put_blob(
        &self,
        blob: VerifiedBlob,
        sender: &str,
        limits: &BlobLimits,
    ) -> Result<bool, StoreError> {
        Ok(self.put_blobs(vec![blob], sender, limits)? == 1)
    }

    /// Keeps written blobs from `sender` (`""`: this node's own), those not
    /// held already, in one transaction: one commit and one sync per blob
    /// folder for the batch, where a transaction per blob cost a commit
    /// each. Returns how many were new. Checked against the quota and the
    /// cap under the write lock, in order; a blob that does not fit refuses
    /// the whole batch, and a refused batch leaves nothing behind.
    pub fn put_blobs(
        &self,
        blobs: Vec<VerifiedBlob>,
        sender: &str,
        limits: &BlobLimits,
    ) -> Result<usize, StoreError> {
        if blobs.is_empty() {
            return Ok(0);
        }
        let _placing = self.blobs.lock();
        self.write(|tx| {
            let mut new: Vec<&VerifiedBlob> = Vec::with_capacity(blobs.len());
            let mut room = Room::of(tx, sender, limits)?;
            let mut insert = tx.prepare_cached(
                "INSERT INTO blobs (sha256, size, sender, received_at) VALUES (?1, ?2, ?3, ?4)",
            )?;
            let received_at = super::origin_limits::unix_now();
            for blob in &blobs {
                if new.iter().any(|b| b.sha256() == blob.sha256()) || is_held(tx, blob.sha256())? {
                    continue;
                }
                room.take(blob.size())?;
                insert.execute(params![blob.sha256(), to_i64(blob.size()), sender, received_at])?;
                new.push(blob);
            }
            // Placed last: if it fails the rows are rolled back with it.
            self.blobs.place(&new)?;
            Ok(new.len())
        })
    }

    /// [`Store::put_blobs`] for contents in memory (the files of this node's
    /// own folder, a test's): each not held yet is written and kept, all in
    /// one transaction. Returns how many were new.
    pub fn put_blobs_bytes<'a>(
        &self,
        contents: impl IntoIterator<Item = &'a [u8]>,
        sender: &str,
        limits: &BlobLimits,
    ) -> Result<usize, StoreError> {
        let mut written = Vec::new();
        for bytes in contents {
            let sha256 = ecp_protocol::integrity::sha256_hex(bytes);
            // A file held already (an unchanged one, imported again) is not written again.
            if self.holds_blob(&sha256)? {
                continue;
            }
            let mut writer = self.blobs.writer(bytes.len() as u64)?;
            let blob = writer.write(bytes).and_then(|()| writer.finish(&sha256));
            written.push(blob.map_err(|e| StoreError::Io(std::io::Error::other(e.to_string())))?);
        }
        self.put_blobs(written, sender, limits)
    }

    /// [`Store::put_blobs_bytes`] for one blob: `(sha256, new)`.
    pub fn put_blob_bytes(
        &self,
        bytes: &[u8],
        sender: &str,
        limits: &BlobLimits,
    ) -> Result<(String, bool), StoreError> {
        let new = self.put_blobs_bytes([bytes], sender, limits)? == 1;
        Ok((ecp_protocol::integrity::sha256_hex(bytes), new))
    }

    /// Whether blob `sha256` may be served: the current version of a skill
    /// this node serves (shareable, not private, not a tombstone) lists it
    /// (`SPEC.md` §12.8.2).
    pub fn serves_blob(&self, sha256: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT 1 FROM blob_refs r JOIN skills s ON s.name = r.name AND s.version = r.version
                 WHERE r.sha256 = ?1 AND s.shareable = 1 AND s.private IS NULL AND s.deprecated = 0 LIMIT 1",
            )?
            .query_row(params![sha256], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Removes the blobs no kept version lists that arrived `grace` or more
    /// before `now` (Unix seconds): their rows, then their files. Returns
    /// the digests removed.
    pub fn collect_blobs(&self, now: i64, grace: Duration) -> Result<Vec<String>, StoreError> {
        let _placing = self.blobs.lock();
        let before = now.saturating_sub(i64::try_from(grace.as_secs()).unwrap_or(i64::MAX));
        let removed: Vec<String> = self.write(|tx| {
            let mut stmt = tx.prepare_cached(
                "DELETE FROM blobs WHERE received_at <= ?1
                 AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.sha256 = blobs.sha256)
                 RETURNING sha256",
            )?;
            let rows = stmt.query_map(params![before], |r| r.get(0))?.collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })?;
        for sha256 in &removed {
            if let Err(e) = self.blobs.remove(sha256) {
                tracing::warn!(error = %e, blob = %sha256, "cannot remove a collected blob's file");
            }
        }
        Ok(removed)
    }

    /// The held quarantine entries of bundles pending on blob `sha256`
    /// (`SPEC.md` §12.9.2), kept whole: their ids and verified senders.
    pub fn pending_on_blob(&self, sha256: &str) -> Result<Vec<(i64, String)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT id, sender FROM quarantine q
             WHERE status = 'held' AND stage = 'bundle' AND reason LIKE 'pending:%' AND body_size IS NULL
             AND EXISTS (SELECT 1 FROM json_each(q.packet, '$.files') f WHERE json_extract(f.value, '$.sha256') = ?1)
             ORDER BY id",
        )?;
        let rows =
            stmt.query_map(params![sha256], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The blobs not held that the bundles pending from `sender` (their held
    /// quarantine entries, `SPEC.md` §12.9.2) list, each once, at most
    /// `limit`: what a pull round asks that peer for again.
    pub fn pending_blobs_from(&self, sender: &str, limit: usize) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT DISTINCT json_extract(f.value, '$.sha256') FROM quarantine q, json_each(q.packet, '$.files') f
             WHERE q.status = 'held' AND q.stage = 'bundle' AND q.reason LIKE 'pending:%' AND q.body_size IS NULL
             AND q.sender = ?1 AND json_extract(f.value, '$.path') <> 'SKILL.md'
             AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.sha256 = json_extract(f.value, '$.sha256'))
             LIMIT ?2",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![sender, limit], |r| r.get(0))?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// What the store holds in blobs.
    pub fn blob_usage(&self) -> Result<BlobUsage, StoreError> {
        let conn = self.conn();
        let (blobs, bytes): (i64, i64) = conn
            .prepare_cached("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM blobs")?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let unused: i64 = conn
            .prepare_cached(
                "SELECT COALESCE(SUM(size), 0) FROM blobs b
                 WHERE NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.sha256 = b.sha256)",
            )?
            .query_row([], |r| r.get(0))?;
        Ok(BlobUsage { blobs: to_u64(blobs), bytes: to_u64(bytes), unused_bytes: to_u64(unused) })
    }
}

#[cfg(test)]
mod tests {
    use ecp_protocol::bundle::bundle_digest;
    use ecp_protocol::{Origin, SkillKind};

    use super::*;
    use crate::store::{Source, origin_limits::unix_now};

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        (dir, store)
    }

    fn body(name: &str) -> String {
        format!("---\nname: {name}\ndescription: Fill the form\n---\n# {name}\n\nRun scripts/fill.py.\n")
    }

    fn bundle(name: &str, files: &[(&str, &[u8], bool)]) -> SkillPacket {
        let origin = Origin::new("peer-a", "someone", "linux/amd64", "1.0");
        let packet = SkillPacket::new(&origin, name, "Fill the form", &body(name), 0.9, crate::store::now());
        let manifest =
            BundleManifest::for_skill(&packet.skill_body, files.iter().copied(), &BundleLimits::default())
                .unwrap();
        packet.with_bundle(&manifest).unwrap()
    }

    fn install(store: &Store, packet: &SkillPacket) -> Result<(), StoreError> {
        store.transaction(|tx| tx.install(packet, SkillKind::External, true, &Source::Operator).map(drop))
    }

    /// The blob files on disk, uploads in progress left out.
    fn files_on_disk(dir: &std::path::Path) -> usize {
        walk(&dir.join("blobs"))
    }

    fn walk(dir: &std::path::Path) -> usize {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| if p.is_dir() { walk(&p) } else { 1 })
            .sum()
    }

    #[test]
    fn two_skills_sharing_a_240_kb_file_store_it_once_until_no_kept_version_lists_it() {
        let (dir, store) = store();
        let line = b"<xs:element name=\"a\"/>\n";
        let schema: Vec<u8> = (0..240 * 1024).map(|i| line[i % line.len()]).collect();
        let limits = BlobLimits::DEFAULT;
        let (sha, new) = store.put_blob_bytes(&schema, "", &limits).unwrap();
        assert!(new);
        assert!(!store.put_blob_bytes(&schema, "", &limits).unwrap().1, "held already");
        install(&store, &bundle("form-a", &[("schema.xsd", &schema, false)])).unwrap();
        install(&store, &bundle("form-b", &[("refs/schema.xsd", &schema, false)])).unwrap();
        let usage = store.blob_usage().unwrap();
        assert_eq!((usage.blobs, usage.bytes, usage.unused_bytes), (1, 240 * 1024, 0));
        assert_eq!(files_on_disk(dir.path()), 1);
        assert!(store.collect_blobs(unix_now() + 1_000_000, Duration::ZERO).unwrap().is_empty(), "listed");

        // Each skill moves on; with no superseded version kept, nothing lists the file.
        store.set_history_depth(0);
        install(&store, &bundle("form-a", &[("other.md", b"other\n", false)])).unwrap_err();
        let mut plain = bundle("form-a", &[]);
        plain.files.clear();
        plain.bundle_digest.clear();
        install(&store, &plain).unwrap();
        assert!(store.collect_blobs(unix_now(), Duration::ZERO).unwrap().is_empty(), "form-b lists it");
        store.tombstone("form-b", Source::Operator).unwrap();
        assert_eq!(store.collect_blobs(unix_now(), Duration::ZERO).unwrap(), std::slice::from_ref(&sha));
        assert_eq!(files_on_disk(dir.path()), 0);
        assert!(!store.holds_blob(&sha).unwrap());
    }

    #[test]
    fn a_bundle_whose_files_are_not_all_held_is_not_installed() {
        let (_dir, store) = store();
        let packet = bundle("form", &[("reference.md", b"# Reference\n", false)]);
        assert!(matches!(install(&store, &packet), Err(StoreError::BundleNotHeld(_))));
        assert!(store.list_skills().unwrap().is_empty());
    }

    #[test]
    fn an_unused_blob_is_kept_for_its_grace_period_and_collected_at_its_end() {
        let (dir, store) = store();
        let before = unix_now();
        store.put_blob_bytes(b"ahead of its packet\n", "addr:1.2.3.4", &BlobLimits::DEFAULT).unwrap();
        let after = unix_now();
        let hour = Duration::from_secs(3600);
        assert!(store.collect_blobs(before + 3599, hour).unwrap().is_empty());
        assert_eq!(store.collect_blobs(after + 3600, hour).unwrap().len(), 1);
        assert_eq!(files_on_disk(dir.path()), 0);
    }

    #[test]
    fn a_senders_unused_blobs_fill_its_quota_at_the_limit_and_one_byte_more_is_refused() {
        let (dir, store) = store();
        let limits = BlobLimits { sender_bytes: 10, total_bytes: 16, grace: DEFAULT_BLOB_GRACE };
        store.put_blob_bytes(b"six b\n", "addr:a", &limits).unwrap();
        store.put_blob_bytes(b"four", "addr:a", &limits).unwrap();
        let refused = store.put_blob_bytes(b"1", "addr:a", &limits).unwrap_err();
        assert!(
            matches!(refused, StoreError::BlobRefused(BlobRefused::Quota { held: 10, size: 1, quota: 10 })),
            "{refused}"
        );
        assert_eq!(files_on_disk(dir.path()), 2, "a refused blob leaves nothing");
        // Another sender has its own quota; a listed blob counts no more.
        store.put_blob_bytes(b"1", "addr:b", &limits).unwrap();
        install(&store, &bundle("form", &[("notes.txt", b"six b\n", false)])).unwrap();
        store.put_blob_bytes(b"2", "addr:a", &limits).unwrap();
        // The cap on all blobs: 6 + 4 + 1 + 1 = 12 held; 4 more is the cap, 5 one past.
        store.put_blob_bytes(b"abcd", "", &limits).unwrap();
        let full = store.put_blob_bytes(b"x", "", &limits).unwrap_err();
        assert!(
            matches!(full, StoreError::BlobRefused(BlobRefused::Full { held: 16, size: 1, cap: 16 })),
            "{full}"
        );
    }

    #[test]
    fn a_batch_is_kept_in_one_go_once_per_digest_and_one_blob_over_the_cap_refuses_all_of_it() {
        let (dir, store) = store();
        let limits = BlobLimits { sender_bytes: 10, total_bytes: 12, grace: DEFAULT_BLOB_GRACE };
        let write = |bytes: &[u8]| {
            let mut w = store.blob_files().writer(bytes.len() as u64).unwrap();
            w.write(bytes).unwrap();
            w.finish(&ecp_protocol::integrity::sha256_hex(bytes)).unwrap()
        };
        // At the sender's quota exactly, one of them twice: kept once.
        let batch = vec![write(b"four"), write(b"six b\n"), write(b"four")];
        assert_eq!(store.put_blobs(batch, "addr:a", &limits).unwrap(), 2);
        assert_eq!(store.blob_usage().unwrap().bytes, 10);
        assert_eq!(files_on_disk(dir.path()), 2);
        // One byte more from that sender, within the cap: the whole batch refused.
        let over = store.put_blobs(vec![write(b"1"), write(b"ab")], "addr:a", &limits).unwrap_err();
        assert!(matches!(over, StoreError::BlobRefused(BlobRefused::Quota { held: 10, size: 1, quota: 10 })));
        // Another sender: 10 held, 2 more is the cap, 3 one past it.
        let full = store.put_blobs(vec![write(b"1"), write(b"ab")], "addr:b", &limits).unwrap_err();
        assert!(
            matches!(full, StoreError::BlobRefused(BlobRefused::Full { held: 11, size: 2, cap: 12 })),
            "{full}"
        );
        assert!(!store.holds_blob(&ecp_protocol::integrity::sha256_hex(b"1")).unwrap(), "nothing of it kept");
        assert_eq!((store.blob_usage().unwrap().blobs, files_on_disk(dir.path())), (2, 2));
        assert_eq!(std::fs::read_dir(dir.path().join("blobs/tmp")).unwrap().count(), 0);
        assert_eq!(store.put_blobs(vec![write(b"ab")], "addr:b", &limits).unwrap(), 1, "at the cap");
    }

    #[test]
    fn a_bundle_is_pending_while_a_file_is_missing_and_refused_when_a_held_one_fails_its_entry() {
        let (_dir, store) = store();
        let limits = BundleLimits::default();
        let script = b"#!/usr/bin/env python3\nprint('fill')\n".as_slice();
        let packet = bundle("form", &[("scripts/fill.py", script, true), ("notes.txt", b"notes\n", false)]);
        let decide = |p: &SkillPacket| store.transaction(|tx| Ok(tx.bundle_decision(p, &limits))).unwrap();
        let Some(Decision::Rejected { reason, .. }) = decide(&packet) else { panic!("pending") };
        assert!(reason.starts_with("pending: 2 of 3 files not held yet (first: notes.txt)"), "{reason}");
        store.put_blob_bytes(script, "", &BlobLimits::DEFAULT).unwrap();
        store.put_blob_bytes(b"notes\n", "", &BlobLimits::DEFAULT).unwrap();
        assert_eq!(decide(&packet), None);

        // 0755 on a file that is no script: its bytes say so once held.
        let mut lying = packet.clone();
        lying.files.iter_mut().find(|f| f.path == "notes.txt").unwrap().mode = "0755".into();
        lying.bundle_digest = bundle_digest(&lying.files);
        let Some(Decision::Rejected { reason, .. }) = decide(&lying) else { panic!("refused") };
        assert_eq!(
            reason,
            "invalid bundle: file \"notes.txt\" has mode 0755 but is not a text script (a shebang or a script extension)"
        );
    }
}
