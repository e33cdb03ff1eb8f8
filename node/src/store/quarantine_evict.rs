//! The quarantine's caps: at most so many held entries and so many bytes,
//! shared fairly between senders.
//!
//! When a transaction leaves the quarantine over a cap, each sender keeps at
//! most an equal share of it (a water level: senders under it keep
//! everything, the others keep the level), and loses its oldest entries
//! beyond. One sender flooding the quarantine therefore flushes only its
//! own entries once it holds more than the others, never theirs. Eviction
//! runs once per transaction, reads the per-sender counts the triggers keep
//! (`quarantine_held`), and deletes in one statement per sender, audited in
//! one line per sender: a refusal costs O(1), whatever is held.

use rusqlite::{Connection, params};

use super::{Source, Store, StoreError, Tx, audit};

/// Default: most entries held at once.
const DEFAULT_MAX_ENTRIES: u64 = 10_000;
/// Default: most bytes held at once (packets, findings and reasons).
const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The quarantine's caps (each at least 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuarantineCaps {
    /// Most entries held at once.
    pub entries: u64,
    /// Most bytes held at once.
    pub bytes: u64,
    /// Largest packet (its JSON) kept whole; a larger one is kept as an excerpt.
    pub body: u64,
}

impl QuarantineCaps {
    /// The defaults: 10,000 entries, 64 MiB, bodies of 256 KiB.
    pub const DEFAULT: QuarantineCaps = QuarantineCaps {
        entries: DEFAULT_MAX_ENTRIES,
        bytes: DEFAULT_MAX_BYTES,
        body: super::quarantine::DEFAULT_BODY_BYTES,
    };
}

impl Default for QuarantineCaps {
    fn default() -> Self {
        QuarantineCaps::DEFAULT
    }
}

/// What is held, in total: (entries, bytes).
fn totals(conn: &Connection) -> Result<(u64, u64), StoreError> {
    let (entries, bytes): (i64, i64) = conn
        .prepare_cached("SELECT entries, bytes FROM quarantine_totals WHERE id = 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok((entries.max(0).unsigned_abs(), bytes.max(0).unsigned_abs()))
}

/// What each sender holds: (sender, entries, bytes).
fn per_sender(conn: &Connection) -> Result<Vec<(String, u64, u64)>, StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT sender, entries, bytes FROM quarantine_held ORDER BY sender")?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows.into_iter().map(|(s, e, b)| (s, e.max(0).unsigned_abs(), b.max(0).unsigned_abs())).collect())
}

/// How much each holder may keep so that all together keep at most `cap`:
/// holders at or under the level keep all, the others the level (the first
/// of them, in order, one more while rounding leaves room).
pub(super) fn shares(held: &[u64], cap: u64) -> Vec<u64> {
    if held.iter().sum::<u64>() <= cap {
        return held.to_vec();
    }
    let mut order: Vec<usize> = (0..held.len()).collect();
    order.sort_by_key(|&i| held[i]);
    let mut room = cap;
    let mut level = 0;
    let mut extra = 0;
    for (k, &i) in order.iter().enumerate() {
        let left = (held.len() - k) as u64;
        if held[i].saturating_mul(left) <= room {
            room -= held[i];
        } else {
            level = room / left;
            extra = room % left;
            break;
        }
    }
    held.iter()
        .map(|&h| {
            if h <= level {
                h
            } else if extra > 0 {
                extra -= 1;
                level + 1
            } else {
                level
            }
        })
        .collect()
}

/// Evicts the oldest `count` held entries of `sender`; audited in one line.
fn evict_oldest(
    conn: &Connection,
    actor: &Source,
    sender: &str,
    count: u64,
    why: &str,
) -> Result<(), StoreError> {
    let (first, last): (Option<i64>, Option<i64>) = conn
        .prepare_cached(
            "SELECT MIN(id), MAX(id) FROM (SELECT id FROM quarantine WHERE status = 'held' AND sender = ?1
                                           ORDER BY id LIMIT ?2)",
        )?
        .query_row(params![sender, i64::try_from(count).unwrap_or(i64::MAX)], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    let (Some(first), Some(last)) = (first, last) else { return Ok(()) };
    let deleted = conn
        .prepare_cached(
            "DELETE FROM quarantine WHERE status = 'held' AND sender = ?1 AND id BETWEEN ?2 AND ?3",
        )?
        .execute(params![sender, first, last])?;
    let reason = format!("{deleted} held entries of {sender} (ids {first}..={last}, oldest first): {why}");
    audit::record(conn, actor, "*", "quarantine-evicted", &reason)
}

/// The oldest held entries of `sender` whose bytes add up to at least `free`.
fn oldest_weighing(conn: &Connection, sender: &str, free: u64) -> Result<u64, StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT bytes FROM quarantine WHERE status = 'held' AND sender = ?1 ORDER BY id")?;
    let mut rows = stmt.query(params![sender])?;
    let (mut count, mut freed) = (0u64, 0u64);
    while freed < free {
        let Some(row) = rows.next()? else { break };
        freed += row.get::<_, i64>(0)?.max(0).unsigned_abs();
        count += 1;
    }
    Ok(count)
}

/// Brings the quarantine under `caps`, each sender down to its share.
fn evict(conn: &Connection, caps: QuarantineCaps, actor: &Source) -> Result<(), StoreError> {
    let caps = QuarantineCaps { entries: caps.entries.max(1), bytes: caps.bytes.max(1), ..caps };
    let (entries, _) = totals(conn)?;
    if entries > caps.entries {
        let held = per_sender(conn)?;
        let keep = shares(&held.iter().map(|h| h.1).collect::<Vec<_>>(), caps.entries);
        let why = format!("the quarantine holds at most {} entries, shared between senders", caps.entries);
        for ((sender, has, _), keep) in held.iter().zip(keep) {
            if *has > keep {
                evict_oldest(conn, actor, sender, has - keep, &why)?;
            }
        }
    }
    let (_, bytes) = totals(conn)?;
    if bytes > caps.bytes {
        let held = per_sender(conn)?;
        let keep = shares(&held.iter().map(|h| h.2).collect::<Vec<_>>(), caps.bytes);
        let why = format!("the quarantine holds at most {} bytes, shared between senders", caps.bytes);
        for ((sender, _, has), keep) in held.iter().zip(keep) {
            if *has > keep {
                let count = oldest_weighing(conn, sender, has - keep)?;
                evict_oldest(conn, actor, sender, count, &why)?;
            }
        }
    }
    Ok(())
}

impl Tx<'_> {
    /// Brings the quarantine under `caps`: over a cap, each sender keeps at
    /// most its share and loses its oldest entries beyond, audited once
    /// per sender, as done by `actor` (whose update brought it over). Call
    /// once, after the transaction's refusals are held.
    pub fn evict_quarantine_over(&self, caps: QuarantineCaps, actor: &Source) -> Result<(), StoreError> {
        evict(self.sql, caps, actor)
    }
}

impl Store {
    /// What the quarantine holds for review: (entries, bytes).
    pub fn quarantine_held(&self) -> Result<(u64, u64), StoreError> {
        totals(&self.conn())
    }
}

#[cfg(test)]
mod tests {
    use super::shares;

    #[test]
    fn under_the_cap_everyone_keeps_everything() {
        assert_eq!(shares(&[3, 4], 7), [3, 4]);
        assert_eq!(shares(&[], 7), Vec::<u64>::new());
    }

    #[test]
    fn one_past_the_cap_the_largest_holder_alone_gives_one_up() {
        assert_eq!(shares(&[3, 5], 7), [3, 4]);
        assert_eq!(shares(&[2_500, 10_000], 10_000), [2_500, 7_500]);
    }

    #[test]
    fn holders_over_the_level_keep_the_level_and_the_rest_is_spread() {
        assert_eq!(shares(&[1, 9, 9], 10), [1, 5, 4]);
        assert_eq!(shares(&[10, 10, 10], 10), [4, 3, 3]);
        assert_eq!(shares(&[6, 6], 1), [1, 0]);
    }
}
