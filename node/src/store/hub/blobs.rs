//! Bundles on the hub (`SPEC.md` §12, hub migration 4): the blobs every
//! replica shares, in the database — held once by their SHA-256, their
//! bytes in chunks of [`CHUNK`] bytes, written and read a chunk at a time
//! (an upload is streamed by the replica to a temporary file of its own,
//! checked, then copied in; a download is read a chunk per query, so a
//! slow client holds no connection) — which file of which kept version
//! uses which blob, the bundles pushed before their blobs (`hub_pending`,
//! merged again by the upload of their last blob, §12.9.2), and the node's
//! limits counted in the database so that every replica enforces the same
//! totals: the quota per sender on blobs no version lists yet, the cap on
//! all blobs (a running total in `hub_meta`), the grace period.
//!
//! A blob no kept version lists any more — a version trimmed from the
//! history, revoked or withdrawn long enough ago to leave it — is collected
//! once its grace period from its upload is over, as on a node: by the
//! next upload after it, at most once a minute per replica, under the
//! sequence number's lock (so a merge never lists a blob being collected).
//! What is unreferenced is therefore bounded by the cap on all blobs and
//! each sender's quota.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ecp_protocol::bundle::{BundleManifest, BundleScan, SKILL_MD, scan_bundle};
use ecp_protocol::merge::{SenderKind, tally};
use ecp_protocol::{
    AcceptPolicy, Decision, KnowledgeUpdate, MergeOutcome, SkillPacket, StandardPolicy, StoredSkill,
};

use super::merge::Writer;
use super::{HubStore, packed};
use crate::intake::Sender;
use crate::store::origin_limits::unix_now;
use crate::store::quarantine_evict::{Cap, HeldPerSender, bring_under};
use crate::store::{BlobRefused, BlobUsage, StoreError, from_json, to_json};

/// The bytes of one chunk of a blob's row in `hub_blob_chunks`.
pub const CHUNK: usize = 1 << 20;

/// The advisory lock blob admissions (and collections) take: the quota
/// and the cap are checked and counted one upload at a time, across replicas.
const BLOB_LOCK: i64 = 0x6563_705f_626c_6f62; // "ecp_blob"

/// How often a replica collects unused blobs, at most.
const COLLECT_EVERY: i64 = 60;

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_u64(n: i64) -> u64 {
    n.max(0).unsigned_abs()
}

/// A blob found to be served: its size and number of chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServedBlob {
    /// Bytes.
    pub size: u64,
    /// Chunks, numbered from 0.
    pub chunks: i32,
}

impl HubStore {
    /// Whether blob `sha256` is held.
    pub fn holds_blob(&self, sha256: &str) -> Result<bool, StoreError> {
        Ok(self.pool.get()?.query_opt("SELECT 1 FROM hub_blobs WHERE sha256 = $1", &[&sha256])?.is_some())
    }

    /// Of `wanted`, those not held, in the order given, each once
    /// (`POST /ecp/blobs/missing`): one query.
    pub fn missing_blobs<'a>(&self, wanted: &'a [String]) -> Result<Vec<&'a str>, StoreError> {
        let held = held_of(&mut *self.pool.get()?, wanted)?;
        let mut missing: Vec<&str> = Vec::new();
        for sha256 in wanted {
            if !held.contains(sha256) && !missing.contains(&sha256.as_str()) {
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
    pub fn blob_room(&self, sender: &str, size: u64) -> Result<(), StoreError> {
        self.collect_now_and_then();
        room(&mut *self.pool.get()?, sender, size, &self.limits.blobs)
    }

    /// Keeps blob `sha256` of `size` bytes from `sender`, its bytes read
    /// from `bytes` (checked by the caller against the digest), unless it is
    /// held already: `true` when it is new. Checked against the sender's
    /// quota and the cap on all blobs under the blob lock, so that uploads
    /// to every replica count against the same totals; a refused blob
    /// leaves nothing.
    pub fn put_blob(
        &self,
        sha256: &str,
        size: u64,
        sender: &str,
        mut bytes: impl Read,
    ) -> Result<bool, StoreError> {
        let mut conn = self.pushes.get()?;
        let mut tx = conn.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&BLOB_LOCK])?;
        if tx.query_opt("SELECT 1 FROM hub_blobs WHERE sha256 = $1", &[&sha256])?.is_some() {
            return Ok(false);
        }
        room(&mut tx, sender, size, &self.limits.blobs)?;
        tx.execute(
            "INSERT INTO hub_blobs (sha256, size, sender, received_at) VALUES ($1, $2, $3, $4)",
            &[&sha256, &to_i64(size), &sender, &unix_now()],
        )?;
        let mut chunk = vec![0u8; CHUNK];
        let (mut n, mut copied) = (0i32, 0u64);
        loop {
            let filled = fill(&mut bytes, &mut chunk)?;
            if filled == 0 {
                break;
            }
            tx.execute(
                "INSERT INTO hub_blob_chunks (sha256, n, bytes) VALUES ($1, $2, $3)",
                &[&sha256, &n, &&chunk[..filled]],
            )?;
            (n, copied) = (n + 1, copied + filled as u64);
        }
        if copied != size {
            return Err(StoreError::Corrupt(format!(
                "the upload of blob {sha256} changed while it was kept"
            )));
        }
        tx.execute(
            "UPDATE hub_meta SET value = (value::BIGINT + $1)::TEXT WHERE key = 'blob_bytes'",
            &[&to_i64(size)],
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// Blob `sha256`, when the current version of a skill the hub serves
    /// lists it (`SPEC.md` §12.8.2); `None` otherwise, also for a blob held
    /// for another reason (an upload awaiting its packet).
    pub fn served_blob(&self, sha256: &str) -> Result<Option<ServedBlob>, StoreError> {
        let row = self.pool.get()?.query_opt(
            "SELECT b.size, (SELECT COUNT(*)::INTEGER FROM hub_blob_chunks c WHERE c.sha256 = b.sha256)
             FROM hub_blobs b WHERE b.sha256 = $1 AND EXISTS (
                 SELECT 1 FROM hub_blob_refs r JOIN hub_skills s ON s.name = r.name AND s.version = r.version
                 WHERE r.sha256 = b.sha256 AND s.shareable AND NOT s.deprecated)",
            &[&sha256],
        )?;
        Ok(row.map(|r| ServedBlob { size: to_u64(r.get(0)), chunks: r.get(1) }))
    }

    /// Chunk `n` of blob `sha256`, if it is held.
    pub fn blob_chunk(&self, sha256: &str, n: i32) -> Result<Option<Vec<u8>>, StoreError> {
        let row = self
            .pool
            .get()?
            .query_opt("SELECT bytes FROM hub_blob_chunks WHERE sha256 = $1 AND n = $2", &[&sha256, &n])?;
        Ok(row.map(|r| r.get(0)))
    }

    /// The bytes of blob `sha256` whole, if it is held (a test's look, and
    /// the scan's: it reads each file whole anyway).
    pub fn read_blob(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        read_blob(&mut *self.pool.get()?, sha256)
    }

    /// What the hub holds in blobs.
    pub fn blob_usage(&self) -> Result<BlobUsage, StoreError> {
        let row = self.pool.get()?.query_one(
            "SELECT COUNT(*), COALESCE(SUM(size), 0)::BIGINT,
                    COALESCE(SUM(size) FILTER (WHERE NOT EXISTS
                        (SELECT 1 FROM hub_blob_refs r WHERE r.sha256 = b.sha256)), 0)::BIGINT
             FROM hub_blobs b",
            &[],
        )?;
        Ok(BlobUsage {
            blobs: to_u64(row.get(0)),
            bytes: to_u64(row.get(1)),
            unused_bytes: to_u64(row.get(2)),
        })
    }

    /// Removes the blobs no kept version lists that arrived `grace` or
    /// more before `now` (Unix seconds), and the pending bundles as old;
    /// returns the digests removed. Under the sequence number's lock: no
    /// merge lists a blob while it goes.
    pub fn collect_blobs(&self, now: i64, grace: Duration) -> Result<Vec<String>, StoreError> {
        let before = now.saturating_sub(i64::try_from(grace.as_secs()).unwrap_or(i64::MAX));
        let mut conn = self.pushes.get()?;
        let mut tx = conn.transaction()?;
        tx.execute("SELECT 1 FROM hub_meta WHERE key = 'sequence' FOR UPDATE", &[])?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&BLOB_LOCK])?;
        let rows = tx.query(
            "DELETE FROM hub_blobs b WHERE received_at <= $1
             AND NOT EXISTS (SELECT 1 FROM hub_blob_refs r WHERE r.sha256 = b.sha256)
             RETURNING sha256, size",
            &[&before],
        )?;
        let freed: i64 = rows.iter().map(|r| r.get::<_, i64>(1)).sum();
        if freed > 0 {
            tx.execute(
                "UPDATE hub_meta SET value = (value::BIGINT - $1)::TEXT WHERE key = 'blob_bytes'",
                &[&freed],
            )?;
        }
        tx.execute("DELETE FROM hub_pending WHERE received_at <= $1", &[&before])?;
        tx.commit()?;
        Ok(rows.into_iter().map(|r| r.get(0)).collect())
    }

    /// [`HubStore::collect_blobs`] with the grace period configured, when
    /// this replica has not for a minute; a failure is logged.
    fn collect_now_and_then(&self) {
        let now = unix_now();
        let last = self.collected.load(Ordering::Relaxed);
        if now - last < COLLECT_EVERY
            || self.collected.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err()
        {
            return;
        }
        match self.collect_blobs(now, self.limits.blobs.grace) {
            Ok(removed) if !removed.is_empty() => {
                tracing::info!(blobs = removed.len(), "hub: collected blobs no kept version lists")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "hub: cannot collect unused blobs"),
        }
    }

    /// Merges again, as their senders sent them, the bundles pending on
    /// blob `sha256` whose every blob is held now (`SPEC.md` §12.9.2), each
    /// taken off `hub_pending` first (so that one replica merges it);
    /// returns how many were installed.
    pub fn retry_pending(&self, sha256: &str, policy: &StandardPolicy) -> Result<u64, StoreError> {
        let ready: Vec<i64> = self
            .pool
            .get()?
            .query(
                "SELECT id FROM hub_pending p WHERE $1 = ANY(p.blobs)
                 AND NOT EXISTS (SELECT 1 FROM unnest(p.blobs) AS l(sha256)
                                 WHERE NOT EXISTS (SELECT 1 FROM hub_blobs b WHERE b.sha256 = l.sha256))
                 ORDER BY id",
                &[&sha256],
            )?
            .into_iter()
            .map(|r| r.get(0))
            .collect();
        let mut installed = 0;
        for id in ready {
            let claimed = self.pushes.get()?.query_opt(
                "DELETE FROM hub_pending WHERE id = $1
                 RETURNING packet, instance, account, trust, reshare, legacy",
                &[&id],
            )?;
            let Some(row) = claimed else { continue };
            let packet: SkillPacket = from_json(&packed::json(rusqlite::types::ValueRef::Blob(row.get(0)))?)?;
            let sender = Sender {
                instance: row.get(1),
                account: row.get(2),
                trust: row.get(3),
                reshare: row.get(4),
                // As it was sent: a legacy sender's bundle stays of unverified origin.
                kind: if row.get(5) { SenderKind::Legacy } else { SenderKind::Current },
            };
            let (name, hash) = (packet.skill_name.clone(), packet.integrity_hash.clone());
            let update = KnowledgeUpdate { skills: vec![packet], ..KnowledgeUpdate::default() };
            let result = self.merge(update, &sender, policy)?;
            if result.new_skills + result.updated_skills > 0 {
                // Its refusal, `pending: …`, is held no more: nothing is left to review.
                self.pending_installed(&name, &hash, &sender.account)?;
            }
            installed += result.new_skills + result.updated_skills;
        }
        Ok(installed)
    }
}

/// Reads into `buf` until it is full or `from` ends; how much was read.
fn fill(from: &mut impl Read, buf: &mut [u8]) -> Result<usize, StoreError> {
    let mut filled = 0;
    while filled < buf.len() {
        match from.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(filled)
}

/// Whether `size` bytes more from `sender` fit under the cap on all blobs
/// and the sender's quota on blobs no version lists.
fn room(
    conn: &mut impl postgres::GenericClient,
    sender: &str,
    size: u64,
    limits: &crate::store::BlobLimits,
) -> Result<(), StoreError> {
    let held: String = conn.query_one("SELECT value FROM hub_meta WHERE key = 'blob_bytes'", &[])?.get(0);
    let held = held.parse::<u64>().map_err(|_| StoreError::Corrupt("the hub's blob total".into()))?;
    if held.saturating_add(size) > limits.total_bytes {
        return Err(BlobRefused::Full { held, size, cap: limits.total_bytes }.into());
    }
    if limits.sender_bytes != u64::MAX {
        let unused: i64 = conn
            .query_one(
                "SELECT COALESCE(SUM(size), 0)::BIGINT FROM hub_blobs b WHERE sender = $1
                 AND NOT EXISTS (SELECT 1 FROM hub_blob_refs r WHERE r.sha256 = b.sha256)",
                &[&sender],
            )?
            .get(0);
        let unused = to_u64(unused);
        if unused.saturating_add(size) > limits.sender_bytes {
            return Err(BlobRefused::Quota { held: unused, size, quota: limits.sender_bytes }.into());
        }
    }
    Ok(())
}

/// Of `digests`, those held.
pub(super) fn held_of(
    conn: &mut impl postgres::GenericClient,
    digests: &[String],
) -> Result<HashSet<String>, StoreError> {
    let rows = conn.query("SELECT sha256 FROM hub_blobs WHERE sha256 = ANY($1)", &[&digests])?;
    Ok(rows.into_iter().map(|r| r.get(0)).collect())
}

/// The bytes of blob `sha256` whole, from its chunks in order.
pub(super) fn read_blob(
    conn: &mut impl postgres::GenericClient,
    sha256: &str,
) -> Result<Option<Vec<u8>>, StoreError> {
    let Some(size) = conn.query_opt("SELECT size FROM hub_blobs WHERE sha256 = $1", &[&sha256])? else {
        return Ok(None);
    };
    let size = usize::try_from(size.get::<_, i64>(0)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(size);
    for row in conn.query("SELECT bytes FROM hub_blob_chunks WHERE sha256 = $1 ORDER BY n", &[&sha256])? {
        bytes.extend_from_slice(row.get::<_, &[u8]>(0));
    }
    Ok(Some(bytes))
}

/// Whether `held` holds `packet` as received (the merge would find it
/// unchanged): its scan is not needed.
fn held_as_received(held: &HashMap<String, StoredSkill>, packet: &SkillPacket) -> bool {
    held.get(&packet.skill_name).is_some_and(|h| {
        h.integrity_hash == packet.integrity_hash
            && h.bundle_digest == packet.bundle_digest
            && h.deprecated == packet.deprecated
    })
}

/// The acceptance check (`SPEC.md` §12.9.1–§12.9.4) of each bundle of
/// `skills` the hub does not hold as received, by position: run before the
/// push takes the sequence number's lock (the scan is most of a bundle's
/// work, review H2). Blobs are immutable by their digest: a check made here
/// holds under the lock when every blob is still held ([`gate`] looks).
pub(super) fn prescan(
    conn: &mut postgres::Client,
    skills: &[SkillPacket],
    held: &HashMap<String, StoredSkill>,
    policy: &StandardPolicy,
) -> HashMap<usize, BundleScan> {
    let conn = RefCell::new(conn);
    let mut scans = HashMap::new();
    for (i, packet) in skills.iter().enumerate() {
        if packet.files.is_empty() || packet.deprecated || held_as_received(held, packet) {
            continue;
        }
        // A body that is not its hash is refused at stage 1: its files need no reading.
        if ecp_protocol::integrity::body_hash(&packet.skill_body) != packet.integrity_hash {
            continue;
        }
        if let Some(scan) = scan(&conn, packet, policy) {
            scans.insert(i, scan);
        }
    }
    scans
}

/// [`scan_bundle`] of `packet` with the blobs held; `None` for a plain
/// skill or a listing stage 2 refuses.
fn scan<C: postgres::GenericClient>(
    conn: &RefCell<&mut C>,
    packet: &SkillPacket,
    policy: &StandardPolicy,
) -> Option<BundleScan> {
    let manifest = BundleManifest::from_packet(packet, &policy.bundle_limits()).ok().flatten()?;
    let blob = |sha256: &str| {
        read_blob(&mut **conn.borrow_mut(), sha256)
            .inspect_err(|e| tracing::error!(error = %e, blob = %sha256, "hub: cannot read a blob"))
            .ok()
            .flatten()
    };
    Some(scan_bundle(&manifest, &packet.skill_body, blob, policy))
}

/// `outcome` with each installing decision for a bundle turned into its
/// refusal when a blob it lists is not held now (`pending: …`) or its
/// check found it wanting (`scans`, made before the lock; one not made
/// then — the hub's copy changed in between — is made now); a tombstone
/// made to list no files; recounted.
pub(super) fn gate(
    tx: &mut postgres::Transaction<'_>,
    mut outcome: MergeOutcome,
    policy: &StandardPolicy,
    mut scans: HashMap<usize, BundleScan>,
) -> Result<MergeOutcome, StoreError> {
    let mut changed = false;
    for d in &mut outcome.decisions {
        if !matches!(d.decision, Decision::New | Decision::Updated { .. }) {
            continue;
        }
        if d.packet.deprecated {
            crate::store::blobs::make_tombstone(&mut d.packet);
            continue;
        }
        let Ok(Some(manifest)) = BundleManifest::from_packet(&d.packet, &policy.bundle_limits()) else {
            continue;
        };
        let listed: Vec<String> = manifest.blob_ids().into_iter().map(str::to_owned).collect();
        let held = held_of(tx, &listed)?;
        if let Some(pending) = manifest.pending_decision(|sha256| held.contains(sha256)) {
            d.decision = pending;
            changed = true;
            continue;
        }
        let scan = match scans.remove(&d.index) {
            Some(scan) => Some(scan),
            None => scan(&RefCell::new(&mut *tx), &d.packet, policy),
        };
        if let Some(scan) = scan {
            changed |= scan.refusal.is_some();
            d.apply_bundle_scan(scan);
        }
    }
    if changed {
        outcome.result = tally(&outcome.decisions);
    }
    Ok(outcome)
}

impl Writer<'_, '_> {
    /// Records the files of version `version` of `packet` (a bundle; none
    /// for a plain skill). Every blob is held: the gate looked under the
    /// lock that collections take too.
    pub(super) fn add_refs(&mut self, packet: &SkillPacket, version: i64) -> Result<(), StoreError> {
        for file in packet.files.iter().filter(|f| f.path != SKILL_MD) {
            self.tx.execute(
                "INSERT INTO hub_blob_refs (name, version, path, mode, sha256) VALUES ($1, $2, $3, $4, $5)",
                &[&packet.skill_name, &version, &file.path, &file.mode, &file.sha256],
            )?;
        }
        Ok(())
    }

    /// Keeps bundle `packet` (pending on a blob) as received from `sender`, to
    /// merge again when its last blob is uploaded; it replaces what the
    /// same sender left pending for the same skill. Beyond the
    /// quarantine's caps, each sender keeps its share ([`shares`]) and the
    /// oldest of its own beyond it are let go, so that one sender's flood
    /// of pending bundles never drops another's.
    pub(super) fn pend(
        &mut self,
        packet: &SkillPacket,
        sender: &Sender,
        caps: crate::store::QuarantineCaps,
    ) -> Result<(), StoreError> {
        let blobs: Vec<&str> =
            packet.files.iter().filter(|f| f.path != SKILL_MD).map(|f| f.sha256.as_str()).collect();
        let json = to_json(packet);
        let frame = packed::pack(&json);
        self.tx.execute(
            "DELETE FROM hub_pending WHERE name = $1 AND account = $2",
            &[&packet.skill_name, &sender.account],
        )?;
        self.tx.execute(
            "INSERT INTO hub_pending (name, blobs, packet, instance, account, trust, reshare, legacy, bytes,
                                      received_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            &[
                &packet.skill_name,
                &blobs,
                &frame,
                &sender.instance,
                &sender.account,
                &sender.trust,
                &sender.reshare,
                &(sender.kind == SenderKind::Legacy),
                &to_i64(json.len() as u64),
                &unix_now(),
            ],
        )?;
        self.release_pending(caps)
    }

    /// Brings the pending bundles under `caps` (entries, then bytes), each
    /// sender down to its share, the oldest of each first; audited per sender.
    fn release_pending(&mut self, caps: crate::store::QuarantineCaps) -> Result<(), StoreError> {
        bring_under(&mut Pending(self), caps)
    }
}

/// The bundles waiting for their files, which the quarantine's caps bound
/// per sender as they bound the quarantine.
struct Pending<'a, 'w, 't>(&'a mut Writer<'w, 't>);

impl HeldPerSender for Pending<'_, '_, '_> {
    /// What each sender has pending: (sender, bundles, bytes). At most the
    /// caps' entries plus one rows are read: the caps bound the table.
    fn per_sender(&mut self) -> Result<Vec<(String, u64, u64)>, StoreError> {
        let rows = self.0.tx.query(
            "SELECT account, COUNT(*)::BIGINT, COALESCE(SUM(bytes), 0)::BIGINT FROM hub_pending
             GROUP BY account ORDER BY account",
            &[],
        )?;
        Ok(rows.iter().map(|r| (r.get(0), to_u64(r.get(1)), to_u64(r.get(2)))).collect())
    }

    /// Lets go of the oldest `count` pending bundles of `sender`. Their
    /// quarantine entries stay up for review; only the wait for their
    /// files ends, which the audit line says.
    fn let_go_oldest(&mut self, sender: &str, count: u64, why: &str) -> Result<(), StoreError> {
        let row = self.0.tx.query_one(
            "WITH gone AS (
                 DELETE FROM hub_pending WHERE id IN (
                     SELECT id FROM hub_pending WHERE account = $1 ORDER BY id LIMIT $2)
                 RETURNING id)
             SELECT COUNT(*) FROM gone",
            &[&sender, &to_i64(count)],
        )?;
        let released: i64 = row.get(0);
        if released == 0 {
            return Ok(());
        }
        let reason = format!(
            "{released} bundles of {sender} no longer wait for their files (oldest first; \
             their entries stay up for review): {why}"
        );
        self.0.audit("*", "pending-released", &reason)
    }

    fn oldest_weighing(&mut self, sender: &str, free: u64) -> Result<u64, StoreError> {
        let row = self.0.tx.query_one(
            "SELECT COUNT(*) FROM (
                 SELECT COALESCE(SUM(bytes) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING
                                                  AND 1 PRECEDING), 0)::BIGINT AS before
                 FROM hub_pending WHERE account = $1) oldest
             WHERE before < $2::BIGINT",
            &[&sender, &to_i64(free)],
        )?;
        Ok(to_u64(row.get(0)))
    }

    fn why(&self, cap: Cap, max: u64) -> String {
        match cap {
            Cap::Entries => format!("at most {max} bundles wait for their files, shared between senders"),
            Cap::Bytes => {
                format!("at most {max} bytes of bundles wait for their files, shared between senders")
            }
        }
    }
}
