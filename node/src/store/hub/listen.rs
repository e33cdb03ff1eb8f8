//! The LISTEN connection: each replica follows the commits of every other
//! through `NOTIFY ecp_changes`, on a thread of its own (the `postgres`
//! client blocks); a notification makes it read the sequence number (its
//! payload is not trusted). A lost connection is made again
//! after a second; while it is down, and every few seconds anyway, the
//! sequence number is read instead, so a missed notification delays
//! nothing for long. The thread ends when its store is dropped.

use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use tokio::sync::watch;

use super::{CHANNEL, connect, current_seq};

/// How long the thread waits for a notification before reading the
/// sequence number itself (and checking that its store still exists).
const POLL: Duration = Duration::from_secs(5);

/// Starts the thread that keeps `sequence` at the newest committed sequence number.
pub(super) fn start(config: postgres::Config, sequence: watch::Sender<i64>) {
    let spawned = std::thread::Builder::new().name("ecp-hub-listen".into()).spawn(move || {
        while alive(&sequence) {
            if let Err(e) = follow(&config, &sequence) {
                tracing::warn!(error = %e, "hub: lost the LISTEN connection to PostgreSQL; reconnecting in 1 s");
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "hub: cannot start the LISTEN thread; changes are seen on each request only");
    }
}

/// One connection's life: LISTEN, then raise `sequence` with each notification.
fn follow(config: &postgres::Config, sequence: &watch::Sender<i64>) -> Result<(), crate::store::StoreError> {
    let mut client = connect(config)?;
    client.batch_execute(&format!("LISTEN {CHANNEL}"))?;
    raise(sequence, current_seq(&mut client)?);
    while alive(sequence) {
        {
            // A notification is a signal, nothing more: any role that can
            // connect can NOTIFY, so its payload is never taken for the
            // sequence number (review H6), which is read instead.
            let mut notifications = client.notifications();
            let mut waiting = notifications.timeout_iter(POLL);
            while waiting.next()?.is_some() {
                if waiting.size_hint().0 == 0 {
                    break;
                }
            }
        }
        raise(sequence, current_seq(&mut client)?);
    }
    Ok(())
}

/// Whether the store still holds its end: this thread's clone alone is
/// no reason to go on.
fn alive(sequence: &watch::Sender<i64>) -> bool {
    sequence.sender_count() > 1
}

/// Raises `sequence` to `seq`, never lowers it.
pub(super) fn raise(sequence: &watch::Sender<i64>, seq: i64) {
    sequence.send_if_modified(|known| std::mem::replace(known, seq.max(*known)) < seq);
}
