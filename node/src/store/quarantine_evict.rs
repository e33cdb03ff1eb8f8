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

/// A table whose entries the caps bound, each sender to its share: the
/// local quarantine here, the hub's quarantine and the hub's bundles
/// waiting for their files. [`bring_under`] decides who loses what; an
/// implementation only reads its counts and lets entries go.
pub(super) trait HeldPerSender {
    /// Everything held: (entries, bytes). By default the sum of
    /// [`per_sender`](Self::per_sender); a table that keeps a total reads it.
    fn totals(&mut self) -> Result<(u64, u64), StoreError> {
        let held = self.per_sender()?;
        Ok((held.iter().map(|h| h.1).sum(), held.iter().map(|h| h.2).sum()))
    }
    /// What each sender holds: (sender, entries, bytes).
    fn per_sender(&mut self) -> Result<Vec<(String, u64, u64)>, StoreError>;
    /// How many of `sender`'s oldest entries weigh at least `bytes` together.
    fn oldest_weighing(&mut self, sender: &str, bytes: u64) -> Result<u64, StoreError>;
    /// Lets go of `sender`'s oldest `count` entries, audited with `why`.
    fn let_go_oldest(&mut self, sender: &str, count: u64, why: &str) -> Result<(), StoreError>;
    /// Why entries go when more than `max` are held (`cap` says of what).
    fn why(&self, cap: Cap, max: u64) -> String;
}

/// Which of the caps a table is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cap {
    /// The most entries.
    Entries,
    /// The most bytes.
    Bytes,
}

/// Brings `table` under `caps` (entries, then bytes): over a cap, each
/// sender keeps at most its share ([`shares`]) and loses its oldest
/// entries beyond it, one `let_go_oldest` per sender.
pub(super) fn bring_under(table: &mut impl HeldPerSender, caps: QuarantineCaps) -> Result<(), StoreError> {
    let (max_entries, max_bytes) = (caps.entries.max(1), caps.bytes.max(1));
    if table.totals()?.0 > max_entries {
        let held = table.per_sender()?;
        let keep = shares(&held.iter().map(|h| h.1).collect::<Vec<_>>(), max_entries);
        let why = table.why(Cap::Entries, max_entries);
        for ((sender, has, _), keep) in held.iter().zip(keep) {
            if *has > keep {
                table.let_go_oldest(sender, has - keep, &why)?;
            }
        }
    }
    if table.totals()?.1 > max_bytes {
        let held = table.per_sender()?;
        let keep = shares(&held.iter().map(|h| h.2).collect::<Vec<_>>(), max_bytes);
        let why = table.why(Cap::Bytes, max_bytes);
        for ((sender, _, has), keep) in held.iter().zip(keep) {
            if *has > keep {
                let count = table.oldest_weighing(sender, has - keep)?;
                table.let_go_oldest(sender, count, &why)?;
            }
        }
    }
    Ok(())
}

/// What the quarantine's eviction says when it is over `cap`'s `max`.
pub(super) fn quarantine_why(cap: Cap, max: u64) -> String {
    match cap {
        Cap::Entries => format!("the quarantine holds at most {max} entries, shared between senders"),
        Cap::Bytes => format!("the quarantine holds at most {max} bytes, shared between senders"),
    }
}

/// The local quarantine, evicted as done by `actor`.
struct Quarantine<'a> {
    conn: &'a Connection,
    actor: &'a Source,
}

impl HeldPerSender for Quarantine<'_> {
    fn totals(&mut self) -> Result<(u64, u64), StoreError> {
        totals(self.conn)
    }

    fn per_sender(&mut self) -> Result<Vec<(String, u64, u64)>, StoreError> {
        per_sender(self.conn)
    }

    fn oldest_weighing(&mut self, sender: &str, free: u64) -> Result<u64, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT bytes FROM quarantine WHERE status = 'held' AND sender = ?1 ORDER BY id",
        )?;
        let mut rows = stmt.query(params![sender])?;
        let (mut count, mut freed) = (0u64, 0u64);
        while freed < free {
            let Some(row) = rows.next()? else { break };
            freed += row.get::<_, i64>(0)?.max(0).unsigned_abs();
            count += 1;
        }
        Ok(count)
    }

    fn let_go_oldest(&mut self, sender: &str, count: u64, why: &str) -> Result<(), StoreError> {
        let (first, last): (Option<i64>, Option<i64>) = self
            .conn
            .prepare_cached(
                "SELECT MIN(id), MAX(id) FROM (SELECT id FROM quarantine WHERE status = 'held' AND sender = ?1
                                               ORDER BY id LIMIT ?2)",
            )?
            .query_row(params![sender, i64::try_from(count).unwrap_or(i64::MAX)], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let (Some(first), Some(last)) = (first, last) else { return Ok(()) };
        let deleted = self
            .conn
            .prepare_cached(
                "DELETE FROM quarantine WHERE status = 'held' AND sender = ?1 AND id BETWEEN ?2 AND ?3",
            )?
            .execute(params![sender, first, last])?;
        let reason =
            format!("{deleted} held entries of {sender} (ids {first}..={last}, oldest first): {why}");
        audit::record(self.conn, self.actor, "*", "quarantine-evicted", &reason)
    }

    fn why(&self, cap: Cap, max: u64) -> String {
        quarantine_why(cap, max)
    }
}

impl Tx<'_> {
    /// Brings the quarantine under `caps`: over a cap, each sender keeps at
    /// most its share and loses its oldest entries beyond, audited once
    /// per sender, as done by `actor` (whose update brought it over). Call
    /// once, after the transaction's refusals are held.
    pub fn evict_quarantine_over(&self, caps: QuarantineCaps, actor: &Source) -> Result<(), StoreError> {
        bring_under(&mut Quarantine { conn: self.sql, actor }, caps)
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
    use super::{Cap, HeldPerSender, QuarantineCaps, StoreError, bring_under, shares};

    /// Entries as (sender, bytes), oldest first, and what was let go.
    #[derive(Default)]
    struct Table {
        held: Vec<(&'static str, u64)>,
        gone: Vec<(String, u64, String)>,
    }

    impl HeldPerSender for Table {
        fn per_sender(&mut self) -> Result<Vec<(String, u64, u64)>, StoreError> {
            let mut senders: Vec<&str> = self.held.iter().map(|h| h.0).collect();
            senders.sort_unstable();
            senders.dedup();
            Ok(senders
                .into_iter()
                .map(|s| {
                    let own = self.held.iter().filter(|h| h.0 == s);
                    (s.to_string(), own.clone().count() as u64, own.map(|h| h.1).sum())
                })
                .collect())
        }

        fn oldest_weighing(&mut self, sender: &str, bytes: u64) -> Result<u64, StoreError> {
            let (mut count, mut freed) = (0, 0);
            for h in self.held.iter().filter(|h| h.0 == sender) {
                if freed >= bytes {
                    break;
                }
                freed += h.1;
                count += 1;
            }
            Ok(count)
        }

        fn let_go_oldest(&mut self, sender: &str, count: u64, why: &str) -> Result<(), StoreError> {
            let mut left = count;
            self.held.retain(|h| {
                let go = h.0 == sender && left > 0;
                left -= u64::from(go);
                !go
            });
            self.gone.push((sender.to_string(), count, why.to_string()));
            Ok(())
        }

        fn why(&self, cap: Cap, max: u64) -> String {
            format!("{cap:?} {max}")
        }
    }

    fn caps(entries: u64, bytes: u64) -> QuarantineCaps {
        QuarantineCaps { entries, bytes, ..QuarantineCaps::DEFAULT }
    }

    #[test]
    fn at_the_entries_cap_nothing_goes_and_one_past_it_the_largest_sender_loses_its_oldest() {
        let mut table = Table { held: vec![("a", 1), ("b", 1), ("b", 1), ("b", 1)], ..Table::default() };
        bring_under(&mut table, caps(4, 100)).unwrap();
        assert!(table.gone.is_empty());
        bring_under(&mut table, caps(3, 100)).unwrap();
        assert_eq!(table.gone, [("b".to_string(), 1, "Entries 3".to_string())]);
        assert_eq!(table.held.len(), 3);
    }

    #[test]
    fn at_the_bytes_cap_nothing_goes_and_one_past_it_the_heaviest_frees_enough_oldest_first() {
        let mut table = Table { held: vec![("a", 10), ("b", 30), ("b", 5), ("b", 5)], ..Table::default() };
        bring_under(&mut table, caps(100, 50)).unwrap();
        assert!(table.gone.is_empty());
        // 49 bytes: `a` keeps its 10, `b` keeps 39 of 40, so frees its oldest (30 bytes).
        bring_under(&mut table, caps(100, 49)).unwrap();
        assert_eq!(table.gone, [("b".to_string(), 1, "Bytes 49".to_string())]);
        assert_eq!(table.held, [("a", 10), ("b", 5), ("b", 5)]);
    }

    #[test]
    fn over_the_bytes_cap_a_sender_frees_all_it_holds_beyond_its_share() {
        // 100 bytes, at most 50: `a` keeps its 10, `b` its 40 of 90, so
        // frees 50 bytes: its two oldest entries, not one.
        let mut table = Table { held: vec![("a", 10), ("b", 30), ("b", 30), ("b", 30)], ..Table::default() };
        bring_under(&mut table, caps(100, 50)).unwrap();
        assert_eq!(table.gone, [("b".to_string(), 2, "Bytes 50".to_string())]);
        assert_eq!(table.held, [("a", 10), ("b", 30)]);
    }

    #[test]
    fn a_cap_of_zero_is_read_as_one() {
        let mut table = Table { held: vec![("a", 1), ("a", 1)], ..Table::default() };
        bring_under(&mut table, caps(0, 100)).unwrap();
        assert_eq!(table.held, [("a", 1)]);
    }

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
