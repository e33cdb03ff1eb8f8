//! Federation state per peer URL: the pull cursor (sequence, ETag, manifest
//! digest), the push acknowledgement, and the health of both directions.
//!
//! Kept in the store so that a restarted node resumes with `?since=` pulls
//! and pushes only what a peer has not acknowledged. The federator writes it;
//! `ecp-node peers` and `GET /v1/peers` read it.

use rusqlite::{OptionalExtension, Row, Transaction, params};
use serde::{Deserialize, Serialize};

use super::{Store, StoreError, now};

/// How a peer came to be known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PeerKind {
    /// A `[[peer]]` of `peers.toml`.
    Configured,
    /// Found by discovery (mDNS); temporary.
    Discovered,
    /// Named on the command line (`ecp-node pull URL`, `push URL`).
    Manual,
}

impl PeerKind {
    /// The stored label.
    pub fn label(self) -> &'static str {
        match self {
            PeerKind::Configured => "configured",
            PeerKind::Discovered => "discovered",
            PeerKind::Manual => "manual",
        }
    }

    fn from_label(label: &str) -> PeerKind {
        match label {
            "configured" => PeerKind::Configured,
            "discovered" => PeerKind::Discovered,
            _ => PeerKind::Manual,
        }
    }
}

/// What the node knows about one peer URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PeerState {
    /// Base URL, e.g. `http://127.0.0.1:7327`.
    pub url: String,
    /// Its instance id from its manifest; empty until the first contact.
    pub instance: String,
    /// Configured, discovered or manual.
    pub kind: PeerKind,
    /// The `sequenceNum` of its last merged answer: the next pull asks `?since=` this.
    pub cursor: i64,
    /// The ETag of that answer (`If-None-Match` of the next pull).
    pub etag: String,
    /// The ETag of its last manifest.
    pub manifest_etag: String,
    /// Digest of its last manifest: how "nothing changed" is told for peers
    /// whose `sequenceNum` is always 0 (the Go implementation).
    pub manifest_digest: String,
    /// When a pull round last completed.
    pub last_success: Option<String>,
    /// When a pull round last started.
    pub last_attempt: Option<String>,
    /// Consecutive failed pull rounds.
    pub failures: i64,
    /// Why the last failed pull round failed (cleared by a success).
    pub last_error: String,
    /// Packets in the last successful round's answer (0 when nothing changed).
    pub packets_received: i64,
    /// Our sequence number the peer last acknowledged: the next push sends
    /// what changed after it.
    pub acked_seq: i64,
    /// When a push last succeeded.
    pub last_push: Option<String>,
    /// Consecutive failed pushes.
    pub push_failures: i64,
    /// Why the last failed push failed (cleared by a success).
    pub push_error: String,
    /// Packets in the last successful push.
    pub packets_sent: i64,
}

impl PeerState {
    /// The state of a peer never contacted.
    pub fn new(url: &str, kind: PeerKind) -> PeerState {
        PeerState {
            url: url.to_owned(),
            instance: String::new(),
            kind,
            cursor: 0,
            etag: String::new(),
            manifest_etag: String::new(),
            manifest_digest: String::new(),
            last_success: None,
            last_attempt: None,
            failures: 0,
            last_error: String::new(),
            packets_received: 0,
            acked_seq: 0,
            last_push: None,
            push_failures: 0,
            push_error: String::new(),
            packets_sent: 0,
        }
    }
}

/// The outcome of a pull round that completed.
#[derive(Debug, Clone, Default)]
pub struct PullRecord {
    /// The peer's instance id.
    pub instance: String,
    /// New cursor.
    pub cursor: i64,
    /// New ETag of the skills answer.
    pub etag: String,
    /// New manifest ETag.
    pub manifest_etag: String,
    /// New manifest digest.
    pub manifest_digest: String,
    /// Packets in this round's answer.
    pub packets_received: i64,
}

const COLUMNS: &str = "url, instance, kind, cursor, etag, manifest_etag, manifest_digest, last_success, \
                       last_attempt, failures, last_error, packets_received, acked_seq, last_push, \
                       push_failures, push_error, packets_sent";

fn from_row(row: &Row<'_>) -> rusqlite::Result<PeerState> {
    Ok(PeerState {
        url: row.get(0)?,
        instance: row.get(1)?,
        kind: PeerKind::from_label(&row.get::<_, String>(2)?),
        cursor: row.get(3)?,
        etag: row.get(4)?,
        manifest_etag: row.get(5)?,
        manifest_digest: row.get(6)?,
        last_success: row.get(7)?,
        last_attempt: row.get(8)?,
        failures: row.get(9)?,
        last_error: row.get(10)?,
        packets_received: row.get(11)?,
        acked_seq: row.get(12)?,
        last_push: row.get(13)?,
        push_failures: row.get(14)?,
        push_error: row.get(15)?,
        packets_sent: row.get(16)?,
    })
}

/// Creates the row of `url` if missing, and sets its kind.
fn ensure(tx: &Transaction<'_>, url: &str, kind: PeerKind) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO peers (url, instance, kind, cursor, etag, manifest_etag, manifest_digest, failures,
                            last_error, packets_received, acked_seq, push_failures, push_error, packets_sent)
         VALUES (?1, '', ?2, 0, '', '', '', 0, '', 0, 0, 0, '', 0)
         ON CONFLICT (url) DO UPDATE SET kind = excluded.kind",
        params![url, kind.label()],
    )?;
    Ok(())
}

impl Store {
    /// The state of one peer URL, if it was ever contacted.
    pub fn peer_state(&self, url: &str) -> Result<Option<PeerState>, StoreError> {
        let conn = self.conn();
        Ok(conn
            .query_row(&format!("SELECT {COLUMNS} FROM peers WHERE url = ?1"), params![url], from_row)
            .optional()?)
    }

    /// Every peer ever contacted, by URL.
    pub fn peer_states(&self) -> Result<Vec<PeerState>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("SELECT {COLUMNS} FROM peers ORDER BY url"))?;
        let rows = stmt.query_map([], from_row)?.collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// Records a completed pull round started at `attempted_at`.
    pub fn record_pull_success(
        &self,
        url: &str,
        kind: PeerKind,
        attempted_at: &str,
        record: &PullRecord,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            ensure(tx, url, kind)?;
            tx.execute(
                // Another instance at this URL (its data was reset, or another
                // node answers there) has acknowledged none of our pushes.
                "UPDATE peers SET acked_seq = CASE WHEN instance NOT IN ('', ?2) THEN 0 ELSE acked_seq END,
                                  instance = ?2, cursor = ?3, etag = ?4, manifest_etag = ?5, manifest_digest = ?6,
                                  last_success = ?7, last_attempt = ?8, failures = 0, last_error = '',
                                  packets_received = ?9
                 WHERE url = ?1",
                params![
                    url,
                    record.instance,
                    record.cursor,
                    record.etag,
                    record.manifest_etag,
                    record.manifest_digest,
                    now().to_string(),
                    attempted_at,
                    record.packets_received,
                ],
            )?;
            Ok(())
        })
    }

    /// Records a failed pull round; returns the consecutive failures now counted.
    pub fn record_pull_failure(
        &self,
        url: &str,
        kind: PeerKind,
        attempted_at: &str,
        error: &str,
    ) -> Result<i64, StoreError> {
        self.write(|tx| {
            ensure(tx, url, kind)?;
            tx.execute(
                "UPDATE peers SET last_attempt = ?2, failures = failures + 1, last_error = ?3 WHERE url = ?1",
                params![url, attempted_at, error],
            )?;
            Ok(tx.query_row("SELECT failures FROM peers WHERE url = ?1", params![url], |r| r.get(0))?)
        })
    }

    /// Records the instance id a peer's manifest named (learned without a
    /// full pull round, e.g. before a push).
    pub fn record_peer_instance(&self, url: &str, kind: PeerKind, instance: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            ensure(tx, url, kind)?;
            tx.execute("UPDATE peers SET instance = ?2 WHERE url = ?1", params![url, instance])?;
            Ok(())
        })
    }

    /// Records a successful push: the peer acknowledged everything up to `acked_seq`.
    pub fn record_push_success(
        &self,
        url: &str,
        kind: PeerKind,
        acked_seq: i64,
        packets_sent: i64,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            ensure(tx, url, kind)?;
            tx.execute(
                "UPDATE peers SET acked_seq = ?2, last_push = ?3, push_failures = 0, push_error = '',
                                  packets_sent = ?4
                 WHERE url = ?1",
                params![url, acked_seq, now().to_string(), packets_sent],
            )?;
            Ok(())
        })
    }

    /// Forgets everything about the peer of `url`: a peer named once on the
    /// command line whose first round failed leaves no trace
    /// ([`crate::federation::pull`]).
    pub fn forget_peer(&self, url: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute("DELETE FROM peers WHERE url = ?1", params![url])?;
            Ok(())
        })
    }

    /// Records a failed push; returns the consecutive push failures now counted.
    pub fn record_push_failure(&self, url: &str, kind: PeerKind, error: &str) -> Result<i64, StoreError> {
        self.write(|tx| {
            ensure(tx, url, kind)?;
            tx.execute(
                "UPDATE peers SET push_failures = push_failures + 1, push_error = ?2 WHERE url = ?1",
                params![url, error],
            )?;
            Ok(tx.query_row("SELECT push_failures FROM peers WHERE url = ?1", params![url], |r| r.get(0))?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_and_push_state_round_trips_and_failures_count_up_then_reset() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let url = "http://127.0.0.1:9";
        assert_eq!(store.peer_state(url).unwrap(), None);
        assert_eq!(store.record_pull_failure(url, PeerKind::Configured, "t0", "connect failed").unwrap(), 1);
        assert_eq!(store.record_pull_failure(url, PeerKind::Configured, "t1", "timed out").unwrap(), 2);
        let s = store.peer_state(url).unwrap().unwrap();
        assert_eq!(
            (s.failures, s.last_error.as_str(), s.last_attempt.as_deref()),
            (2, "timed out", Some("t1"))
        );
        let record = PullRecord {
            instance: "ecp-a".into(),
            cursor: 7,
            etag: "\"e\"".into(),
            manifest_digest: "d".into(),
            packets_received: 3,
            ..PullRecord::default()
        };
        store.record_pull_success(url, PeerKind::Configured, "t2", &record).unwrap();
        store.record_push_success(url, PeerKind::Configured, 11, 2).unwrap();
        let s = store.peer_state(url).unwrap().unwrap();
        assert_eq!((s.failures, s.last_error.as_str()), (0, ""));
        assert_eq!((s.instance.as_str(), s.cursor, s.packets_received, s.acked_seq), ("ecp-a", 7, 3, 11));
        assert!(s.last_success.is_some() && s.last_push.is_some());
        assert_eq!(store.peer_states().unwrap().len(), 1);
        store.record_pull_failure("http://127.0.0.1:10", PeerKind::Manual, "t2", "refused").unwrap();
        store.forget_peer("http://127.0.0.1:10").unwrap();
        assert_eq!(store.peer_state("http://127.0.0.1:10").unwrap(), None);
        assert_eq!(store.peer_states().unwrap().len(), 1, "the other peer is kept");
        let other = PullRecord { instance: "ecp-b".into(), ..record };
        store.record_pull_success(url, PeerKind::Configured, "t3", &other).unwrap();
        assert_eq!(
            store.peer_state(url).unwrap().unwrap().acked_seq,
            0,
            "a new instance acknowledged nothing"
        );
    }
}
