//! Per-origin and per-sender limits on installs: at most N skills installed
//! (new or updated: every update keeps a version) from one `originInstance`
//! per rolling hour and per rolling day, and at most M new skills from one
//! verified sender (a configured peer, or a client address for unsigned
//! pushes), so that rotating `originInstance` does not lift the limit. Both
//! are counted the same way, each in its own table.
//!
//! For an origin, new skills and updates count (merge decisions *new* and
//! *updated*); for a sender, new skills only. Unchanged packets, refusals
//! and operator approvals never count. The counts live in the store (tables
//! `origin_installs` and `sender_installs`: per key and second, how many
//! were installed), so a restart does not reset a window and a CLI
//! pull beside a running server shares it; a hub's live in its database
//! (`hub_installs`), so its replicas share them — the decisions are made by
//! the same code over either (`Counts`). The check runs inside the merge's
//! write transaction, against the decisions just computed and before any of
//! them is applied: a refused update leaves no trace, and two writers cannot
//! both squeeze under a limit.
//!
//! A limit of 0 turns that window off. Rows older than a day are pruned
//! whenever new installs are counted.

use std::collections::HashMap;
use std::fmt;

use rusqlite::{Connection, params};
use serde::Serialize;

use super::{StoreError, Tx};

/// Default: installs per origin per rolling hour.
pub const DEFAULT_PER_HOUR: u64 = 1_000;
/// Default: installs per origin per rolling day.
pub const DEFAULT_PER_DAY: u64 = 5_000;

/// The limits; 0 turns a window off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OriginLimits {
    /// Installs per rolling hour (0: no limit).
    pub per_hour: u64,
    /// Installs per rolling day (0: no limit).
    pub per_day: u64,
}

impl Default for OriginLimits {
    fn default() -> Self {
        OriginLimits { per_hour: DEFAULT_PER_HOUR, per_day: DEFAULT_PER_DAY }
    }
}

impl OriginLimits {
    /// No limits at all.
    pub const OFF: OriginLimits = OriginLimits { per_hour: 0, per_day: 0 };

    /// The windows that are on, with their limits.
    fn active(&self) -> impl Iterator<Item = (Window, u64)> {
        [(Window::Hour, self.per_hour), (Window::Day, self.per_day)].into_iter().filter(|(_, n)| *n > 0)
    }
}

/// A rolling window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Window {
    /// The last 3,600 seconds.
    Hour,
    /// The last 86,400 seconds.
    Day,
}

impl Window {
    /// Its length in seconds.
    pub fn seconds(self) -> i64 {
        match self {
            Window::Hour => 3_600,
            Window::Day => 86_400,
        }
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Window::Hour => "hour",
            Window::Day => "day",
        })
    }
}

/// What installs are counted per.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Per {
    /// The packets' `originInstance` (table `origin_installs`).
    Origin,
    /// The verified sender of the update (table `sender_installs`).
    Sender,
}

impl Per {
    /// What is counted, in messages.
    fn counted(self) -> &'static str {
        match self {
            Per::Origin => "new or updated skills",
            Per::Sender => "new skills",
        }
    }

    /// The table counting installs, and its key column.
    fn table(self) -> (&'static str, &'static str) {
        match self {
            Per::Origin => ("origin_installs", "origin"),
            Per::Sender => ("sender_installs", "sender"),
        }
    }
}

impl fmt::Display for Per {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Per::Origin => "origin",
            Per::Sender => "sender",
        })
    }
}

/// One origin (or sender) whose installs in an update do not all fit under its limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OriginExcess {
    /// What the limit is counted per.
    pub per: Per,
    /// The `originInstance`, or the sender for [`Per::Sender`].
    pub origin: String,
    /// The window whose limit binds (the one with the least room).
    pub window: Window,
    /// That window's limit.
    pub limit: u64,
    /// Installs counted for it within that window.
    pub installed: u64,
    /// Its installs in the update.
    pub arriving: u64,
    /// How many of them fit (and, where the caller admits what fits, were installed).
    pub room: u64,
    /// Seconds until the refused part fits (a whole window when it never
    /// will, because the update alone brings more than the limit).
    pub retry_after: u64,
}

impl fmt::Display for OriginExcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let OriginExcess { per, origin, window, limit, installed, arriving, .. } = self;
        if arriving > limit {
            write!(
                f,
                "{per} {origin:?} may bring at most {limit} {} per {window}, and this update alone \
                 brings {arriving}",
                per.counted()
            )
        } else {
            write!(
                f,
                "{per} {origin:?} is over its limit of {limit} {} per {window}: {installed} installed in \
                 the last {window}, this update brings {arriving} more",
                per.counted()
            )
        }
    }
}

/// Why a whole update was refused: the origins over their limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginLimited {
    /// Every origin over its limit, in the order they first appear in the update.
    pub excess: Vec<OriginExcess>,
}

impl OriginLimited {
    /// Seconds until every refused origin has room (the longest wait).
    pub fn retry_after(&self) -> u64 {
        self.excess.iter().map(|e| e.retry_after).max().unwrap_or(1).max(1)
    }
}

impl std::error::Error for OriginLimited {}

impl fmt::Display for OriginLimited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(first) = self.excess.first() else { return f.write_str("an origin is over its limit") };
        write!(f, "{first}")?;
        if self.excess.len() > 1 {
            write!(f, " (and {} more are over their limits)", self.excess.len() - 1)?;
        }
        if first.arriving > first.limit {
            write!(
                f,
                "; nothing was applied: send at most {} {} of one {} per update",
                first.limit,
                first.per.counted(),
                first.per
            )
        } else {
            write!(
                f,
                "; nothing was applied: retry in {} s, or send fewer {}",
                self.retry_after(),
                first.per.counted()
            )
        }
    }
}

/// Now, in Unix seconds: the unit of the windows.
pub fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Counts per origin, in order of first appearance.
#[derive(Debug, Default)]
pub struct PerOrigin {
    order: Vec<String>,
    counts: HashMap<String, u64>,
}

impl<'a> FromIterator<&'a str> for PerOrigin {
    fn from_iter<I: IntoIterator<Item = &'a str>>(origins: I) -> Self {
        let mut counts = PerOrigin::default();
        for origin in origins {
            counts.add(origin);
        }
        counts
    }
}

impl PerOrigin {
    /// Counts one more for `origin`.
    fn add(&mut self, origin: &str) {
        match self.counts.get_mut(origin) {
            Some(n) => *n += 1,
            None => {
                self.order.push(origin.to_owned());
                self.counts.insert(origin.to_owned(), 1);
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.order.iter().map(|o| (o.as_str(), self.counts[o]))
    }
}

/// Where the installs are counted: the SQLite store's tables, or the hub's
/// (`super::hub`); the limits are decided the same way over either.
pub(crate) trait Counts {
    /// The installs counted for `origin` after `after` (Unix seconds,
    /// exclusive), as (second, installs), oldest first.
    fn installs_after(&self, per: Per, origin: &str, after: i64) -> Result<Vec<(i64, i64)>, StoreError>;

    /// Counts `n` installs for `origin` at `now`.
    fn add_installs(&self, per: Per, origin: &str, now: i64, n: u64) -> Result<(), StoreError>;

    /// Forgets the counts at or before `before`.
    fn forget_installs(&self, per: Per, before: i64) -> Result<(), StoreError>;
}

impl Counts for Connection {
    fn installs_after(&self, per: Per, origin: &str, after: i64) -> Result<Vec<(i64, i64)>, StoreError> {
        let (table, key) = per.table();
        let mut stmt = self.prepare_cached(&format!(
            "SELECT at, installs FROM {table} WHERE {key} = ?1 AND at > ?2 ORDER BY at"
        ))?;
        let rows = stmt.query_map(params![origin, after], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn add_installs(&self, per: Per, origin: &str, now: i64, n: u64) -> Result<(), StoreError> {
        let (table, key) = per.table();
        self.prepare_cached(&format!(
            "INSERT INTO {table} ({key}, at, installs) VALUES (?1, ?2, ?3)
             ON CONFLICT ({key}, at) DO UPDATE SET installs = installs + excluded.installs"
        ))?
        .execute(params![origin, now, i64::try_from(n).unwrap_or(i64::MAX)])?;
        Ok(())
    }

    fn forget_installs(&self, per: Per, before: i64) -> Result<(), StoreError> {
        let (table, _) = per.table();
        self.prepare_cached(&format!("DELETE FROM {table} WHERE at <= ?1"))?.execute(params![before])?;
        Ok(())
    }
}

/// Installs counted for `origin` after `after` (Unix seconds, exclusive).
fn installed_since(
    counts: &(impl Counts + ?Sized),
    per: Per,
    origin: &str,
    after: i64,
) -> Result<u64, StoreError> {
    let rows = counts.installs_after(per, origin, after)?;
    Ok(rows.iter().map(|&(_, n)| u64::try_from(n).unwrap_or(0)).sum())
}

/// Seconds until `need` of the installs now in `window` have left it; a
/// whole window when fewer than `need` are in it (installs made now must age
/// out too).
fn wait_for(
    counts: &(impl Counts + ?Sized),
    per: Per,
    origin: &str,
    window: Window,
    need: u64,
    now: i64,
) -> Result<u64, StoreError> {
    let mut expired = 0u64;
    for (at, installs) in counts.installs_after(per, origin, now - window.seconds())? {
        expired += u64::try_from(installs).unwrap_or(0);
        if expired >= need {
            return Ok(u64::try_from(at + window.seconds() - now).unwrap_or(1).max(1));
        }
    }
    Ok(window.seconds().unsigned_abs())
}

/// The origins of `arriving` whose installs do not all fit under
/// `limits` at `now`, each with how many fit now (`room`, over every window)
/// and how long until all of them fit. Empty: everything fits.
pub(crate) fn assess(
    conn: &(impl Counts + ?Sized),
    per: Per,
    limits: &OriginLimits,
    arriving: &PerOrigin,
    now: i64,
) -> Result<Vec<OriginExcess>, StoreError> {
    let mut excess = Vec::new();
    for (origin, n) in arriving.iter() {
        // (window, limit, installed) of every window this origin's arrivals overflow.
        let mut over = Vec::new();
        let mut least_room: Option<(Window, u64, u64)> = None;
        for (window, limit) in limits.active() {
            let installed = installed_since(conn, per, origin, now - window.seconds())?;
            let room = limit.saturating_sub(installed);
            if least_room.is_none_or(|(_, l, i)| room < l.saturating_sub(i)) {
                least_room = Some((window, limit, installed));
            }
            if installed + n > limit {
                over.push((window, limit, installed));
            }
        }
        let Some(least_room) = least_room else { continue };
        if over.is_empty() {
            continue;
        }
        let mut retry_after = 1;
        for &(window, limit, installed) in &over {
            let wait = if n > limit {
                // Never fits: a whole window, so that a blind retry does not hammer.
                window.seconds().unsigned_abs()
            } else {
                wait_for(conn, per, origin, window, installed + n - limit, now)?
            };
            retry_after = retry_after.max(wait);
        }
        // Name the window that can never take this update, if one cannot; else the one with least room.
        let (window, limit, installed) =
            over.iter().copied().filter(|(_, l, _)| n > *l).min_by_key(|(_, l, _)| *l).unwrap_or(least_room);
        let room = least_room.1.saturating_sub(least_room.2).min(n);
        excess.push(OriginExcess {
            per,
            origin: origin.to_owned(),
            window,
            limit,
            installed,
            arriving: n,
            room,
            retry_after,
        });
    }
    Ok(excess)
}

/// Counts the skills just installed from each origin, and forgets counts
/// older than the longest window.
pub(crate) fn record(
    counts: &(impl Counts + ?Sized),
    per: Per,
    installed: &PerOrigin,
    now: i64,
) -> Result<(), StoreError> {
    if installed.order.is_empty() {
        return Ok(());
    }
    for (origin, n) in installed.iter() {
        counts.add_installs(per, origin, now, n)?;
    }
    counts.forget_installs(per, now - Window::Day.seconds())
}

impl Tx<'_> {
    /// The origins (or senders, as `per` says) of `arriving` (installs, by
    /// origin or sender) that do not all fit under `limits` at `now` (Unix
    /// seconds), each with how many fit (`room`) and how long until all fit.
    /// Empty: everything fits. Read inside the transaction that applies the
    /// installs, so two writers cannot both squeeze under a limit.
    pub fn origin_excess(
        &self,
        per: Per,
        limits: &OriginLimits,
        arriving: &PerOrigin,
        now: i64,
    ) -> Result<Vec<OriginExcess>, StoreError> {
        assess(&**self.sql, per, limits, arriving, now)
    }

    /// Counts the installs just made for each origin (or sender) at `now`.
    pub fn count_new_installs(&self, per: Per, installed: &PerOrigin, now: i64) -> Result<(), StoreError> {
        record(&**self.sql, per, installed, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn per_origin(pairs: &[(&str, u64)]) -> PerOrigin {
        pairs.iter().flat_map(|&(origin, n)| std::iter::repeat_n(origin, n as usize)).collect()
    }

    fn with_conn<T>(f: impl FnOnce(&Connection) -> T) -> T {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let conn = store.conn();
        f(&conn)
    }

    #[test]
    fn fits_until_the_hour_is_full_then_waits_for_the_oldest_to_age_out() {
        with_conn(|conn| {
            let limits = OriginLimits { per_hour: 3, per_day: 10 };
            let t0 = 1_000_000;
            record(conn, Per::Origin, &per_origin(&[("a", 2)]), t0).unwrap();
            record(conn, Per::Origin, &per_origin(&[("a", 1)]), t0 + 100).unwrap();
            assert!(
                assess(conn, Per::Origin, &limits, &per_origin(&[("b", 3)]), t0 + 200).unwrap().is_empty()
            );
            let excess =
                assess(conn, Per::Origin, &limits, &per_origin(&[("a", 1), ("b", 1)]), t0 + 200).unwrap();
            assert_eq!(excess.len(), 1);
            let e = &excess[0];
            assert_eq!(
                (e.origin.as_str(), e.window, e.limit, e.installed, e.room),
                ("a", Window::Hour, 3, 3, 0)
            );
            // The two installs of t0 leave the hour at t0 + 3600.
            assert_eq!(e.retry_after, 3_400);
            // Two more need the t0 and the t0 + 100 installs gone... at t0 + 100 + 3600 for the third.
            let e = &assess(conn, Per::Origin, &limits, &per_origin(&[("a", 3)]), t0 + 200).unwrap()[0];
            assert_eq!(e.retry_after, 3_500);
            // After the hour, only the day counts.
            assert!(
                assess(conn, Per::Origin, &limits, &per_origin(&[("a", 3)]), t0 + 3_700).unwrap().is_empty()
            );
        });
    }

    #[test]
    fn the_day_binds_when_its_room_is_smaller_and_more_than_the_limit_never_fits() {
        with_conn(|conn| {
            let limits = OriginLimits { per_hour: 5, per_day: 6 };
            let t0 = 2_000_000;
            record(conn, Per::Origin, &per_origin(&[("a", 5)]), t0).unwrap();
            let e = &assess(conn, Per::Origin, &limits, &per_origin(&[("a", 2)]), t0 + 4_000).unwrap()[0];
            assert_eq!((e.window, e.installed, e.room), (Window::Day, 5, 1));
            assert_eq!(e.retry_after, 86_400 - 4_000);
            let e = &assess(conn, Per::Origin, &limits, &per_origin(&[("a", 7)]), t0 + 4_000).unwrap()[0];
            assert!(e.arriving > e.limit);
            assert_eq!(e.retry_after, 86_400, "never fits: a whole window");
            assert!(e.to_string().contains("this update alone brings 7"), "{e}");
        });
    }

    #[test]
    fn zero_turns_a_window_off_and_old_rows_are_pruned() {
        with_conn(|conn| {
            let t0 = 3_000_000;
            record(conn, Per::Origin, &per_origin(&[("a", 50)]), t0).unwrap();
            let limits = OriginLimits { per_hour: 0, per_day: 0 };
            assert!(
                assess(conn, Per::Origin, &limits, &per_origin(&[("a", 10_000)]), t0).unwrap().is_empty()
            );
            let hour_only = OriginLimits { per_hour: 60, per_day: 0 };
            assert!(assess(conn, Per::Origin, &hour_only, &per_origin(&[("a", 10)]), t0).unwrap().is_empty());
            assert_eq!(
                assess(conn, Per::Origin, &hour_only, &per_origin(&[("a", 11)]), t0).unwrap().len(),
                1
            );
            record(conn, Per::Origin, &per_origin(&[("b", 1)]), t0 + 86_400).unwrap();
            let rows: i64 = conn.query_row("SELECT COUNT(*) FROM origin_installs", [], |r| r.get(0)).unwrap();
            assert_eq!(rows, 1, "a's row is a day old and pruned");
        });
    }
}
