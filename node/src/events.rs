//! The live event stream: each audit entry a running node commits, handed
//! to every subscriber of `GET /v1/events` (`ecp-node events --follow`).
//!
//! Publishing never waits: entries go into one ring of [`BUFFER`] entries
//! that every subscriber reads at its own pace (a tokio broadcast channel).
//! A subscriber that falls more than [`BUFFER`] entries behind has lost
//! some; it is told how many and dropped, and reads the rest from the audit
//! log. At most [`MAX_SUBSCRIBERS`] subscribe at once. When the node shuts
//! down ([`Events::close`]), every subscription ends, so no stream holds the
//! graceful shutdown open.

use std::sync::Arc;

use tokio::sync::{broadcast, watch};

use crate::store::AuditEntry;

/// Entries a subscriber may fall behind before it is dropped.
pub const BUFFER: usize = 1_024;

/// Subscribers at once.
pub const MAX_SUBSCRIBERS: usize = 64;

/// The node's event hub (cheap to clone).
#[derive(Debug, Clone)]
pub struct Events {
    sender: broadcast::Sender<Arc<AuditEntry>>,
    /// Becomes true when the node shuts down.
    closed: Arc<watch::Sender<bool>>,
}

impl Default for Events {
    fn default() -> Self {
        Events { sender: broadcast::channel(BUFFER).0, closed: Arc::new(watch::channel(false).0) }
    }
}

/// One subscriber's view of the stream.
#[derive(Debug)]
pub struct Subscription {
    entries: broadcast::Receiver<Arc<AuditEntry>>,
    closed: watch::Receiver<bool>,
}

/// What a subscriber receives next.
#[derive(Debug)]
pub enum Next {
    /// An entry committed after it subscribed.
    Entry(Arc<AuditEntry>),
    /// It fell behind and lost this many entries: it is dropped.
    Lost(u64),
    /// The node is shutting down.
    Closed,
}

impl Subscription {
    /// Waits for the next entry, or for why there is none.
    pub async fn next(&mut self) -> Next {
        tokio::select! {
            received = self.entries.recv() => match received {
                Ok(entry) => Next::Entry(entry),
                Err(broadcast::error::RecvError::Lagged(lost)) => Next::Lost(lost),
                Err(broadcast::error::RecvError::Closed) => Next::Closed,
            },
            _ = self.closed.wait_for(|closed| *closed) => Next::Closed,
        }
    }
}

impl Events {
    /// Hands `entries` to every subscriber; never waits.
    pub fn publish(&self, entries: &[AuditEntry]) {
        if self.sender.receiver_count() == 0 {
            return;
        }
        for entry in entries {
            // Fails only when the last subscriber left meanwhile.
            let _ = self.sender.send(Arc::new(entry.clone()));
        }
    }

    /// A new subscriber, receiving what is published from now on; `None`
    /// when [`MAX_SUBSCRIBERS`] are subscribed.
    pub fn subscribe(&self) -> Option<Subscription> {
        (self.sender.receiver_count() < MAX_SUBSCRIBERS)
            .then(|| Subscription { entries: self.sender.subscribe(), closed: self.closed.subscribe() })
    }

    /// Ends every subscription (the node is shutting down).
    pub fn close(&self) {
        self.closed.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: i64) -> AuditEntry {
        AuditEntry {
            id,
            at: "2026-01-01T00:00:00Z".into(),
            peer: "operator".into(),
            skill_name: "s".into(),
            decision: "tombstone".into(),
            reason: String::new(),
        }
    }

    #[tokio::test]
    async fn a_subscriber_past_the_buffer_learns_how_many_it_lost_and_publishing_never_waits() {
        let events = Events::default();
        let mut slow = events.subscribe().unwrap();
        let entries: Vec<_> = (1..=BUFFER as i64 + 1).map(entry).collect();
        events.publish(&entries);
        assert!(matches!(slow.next().await, Next::Lost(1)));
        let mut exactly = events.subscribe().unwrap();
        events.publish(&entries[..BUFFER]);
        for expected in 1..=BUFFER as i64 {
            assert!(matches!(exactly.next().await, Next::Entry(e) if e.id == expected));
        }
        events.close();
        assert!(matches!(exactly.next().await, Next::Closed));
    }

    #[test]
    fn subscribers_are_capped() {
        let events = Events::default();
        let held: Vec<_> = (0..MAX_SUBSCRIBERS).map(|_| events.subscribe().unwrap()).collect();
        assert!(events.subscribe().is_none());
        drop(held);
        assert!(events.subscribe().is_some());
    }
}
