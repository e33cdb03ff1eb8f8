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
mod tests;
