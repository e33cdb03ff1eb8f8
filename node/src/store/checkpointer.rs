//! The store's WAL checkpoints, off the committing thread.
//!
//! SQLite's automatic checkpoint runs inside the commit that takes the WAL
//! past its threshold: on a pull's merge thread, holding the store's lock,
//! waiting for the database file's writes and fsync (#18, seventh pass: 1.3 %
//! of a 10k pull's CPU, and its I/O wait on the merge's critical path).
//! Here a commit only notes the WAL's length (a WAL hook, which replaces the
//! automatic checkpoint), and past [`WAL_PAGES`] asks a thread of the
//! store's own to copy the pages, from a connection of its own: a passive
//! checkpoint, which takes no writer's lock, so commits go on meanwhile.
//!
//! Durability is unchanged: a commit is durable in the WAL when it returns;
//! a checkpoint moves committed pages only. The WAL restarts from its start
//! once a checkpoint has copied all of it (at the next writer's commit, as
//! before). The thread is made at the first request and stopped before the
//! store's connection closes, so the close's own checkpoint still finds the
//! last connection and deletes the WAL.

use std::cell::Cell;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

/// The WAL's length, in pages, past which a commit asks for a checkpoint:
/// 16 MiB of 4 KiB pages, as the automatic checkpoint was set before (a
/// batch of 100 new skills writes about 3 MB of WAL; checkpointing after
/// nearly every push copied the same index pages again each time).
pub(super) const WAL_PAGES: i32 = 4096;

thread_local! {
    /// The WAL's length after this thread's last commit (the hook's note).
    static WAL_LENGTH: Cell<i32> = const { Cell::new(0) };
}

/// Registers the note of the WAL's length on `conn` (which turns SQLite's
/// automatic checkpoint off on it).
pub(super) fn install(conn: &Connection) {
    conn.wal_hook(Some(|_wal, pages| {
        WAL_LENGTH.with(|n| n.set(pages));
        Ok(())
    }));
}

/// Whether this thread's last commit left the WAL at [`WAL_PAGES`] or
/// more; the note is taken.
fn wal_is_long() -> bool {
    WAL_LENGTH.with(|n| n.replace(0)) >= WAL_PAGES
}

/// Checkpoints the database at `path` on a thread of its own, when asked.
#[derive(Debug)]
pub(super) struct Checkpointer {
    path: PathBuf,
    worker: Mutex<Option<Worker>>,
}

#[derive(Debug)]
struct Worker {
    ask: SyncSender<()>,
    thread: JoinHandle<()>,
}

impl Checkpointer {
    pub(super) fn new(path: PathBuf) -> Self {
        Checkpointer { path, worker: Mutex::new(None) }
    }

    /// After a commit on this thread: asks for a checkpoint when the WAL
    /// has grown past [`WAL_PAGES`]. Never waits: a request already
    /// pending covers this one.
    pub(super) fn after_commit(&self) {
        if wal_is_long() {
            self.request();
        }
    }

    fn request(&self) {
        let mut worker = self.worker.lock().unwrap_or_else(|p| p.into_inner());
        if worker.is_none() {
            let (ask, asked) = mpsc::sync_channel::<()>(1);
            let path = self.path.clone();
            let spawned = std::thread::Builder::new()
                .name("ecp-checkpoint".into())
                .spawn(move || run(&path, &asked));
            match spawned {
                Ok(thread) => *worker = Some(Worker { ask, thread }),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot start the store's checkpoint thread");
                    return;
                }
            }
        }
        if let Some(w) = worker.as_ref() {
            match w.ask.try_send(()) {
                Ok(()) | Err(TrySendError::Full(())) => {}
                Err(TrySendError::Disconnected(())) => *worker = None,
            }
        }
    }

    /// Stops the thread after the checkpoint it is running, if any.
    fn stop(&self) {
        let worker = self.worker.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(Worker { ask, thread }) = worker {
            drop(ask);
            let _ = thread.join();
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The thread: one passive checkpoint per request, until the store goes.
fn run(path: &std::path::Path, asked: &mpsc::Receiver<()>) {
    let mut conn = None;
    while asked.recv().is_ok() {
        if conn.is_none() {
            conn = Connection::open(path)
                .and_then(|c| c.busy_timeout(Duration::from_secs(10)).map(|()| c))
                .inspect_err(|e| tracing::warn!(error = %e, "cannot open the store for a checkpoint"))
                .ok();
        }
        let Some(c) = conn.as_ref() else { continue };
        if let Err(e) = c.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::warn!(error = %e, "the store's checkpoint failed");
        }
    }
}

#[cfg(test)]
#[path = "checkpointer_tests.rs"]
mod tests;
