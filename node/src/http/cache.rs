//! Encoded responses cached by sequence number: the skill set only changes
//! with the sequence, so `GET /ecp/skills` and `GET /ecp/manifest` are
//! encoded once per change, not once per request.

use std::sync::Mutex;

use axum::body::Bytes;

/// One cached encoding.
#[derive(Debug, Clone)]
pub struct Cached {
    /// The sequence number it reflects.
    pub seq: i64,
    /// The JSON body.
    pub body: Bytes,
}

/// A single-slot cache.
#[derive(Debug, Default)]
pub struct Slot(Mutex<Option<Cached>>);

impl Slot {
    /// The cached value when it is at least as new as `seq`.
    pub fn fresh(&self, seq: i64) -> Option<Cached> {
        let guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_ref().filter(|c| c.seq >= seq).cloned()
    }

    /// Keeps `value` unless a newer one is already there.
    pub fn store(&self, value: Cached) {
        let mut guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_none_or(|c| c.seq <= value.seq) {
            *guard = Some(value);
        }
    }
}

/// The node's response caches.
#[derive(Debug, Default)]
pub struct ResponseCache {
    /// Full `GET /ecp/skills`.
    pub skills: Slot,
    /// `GET /ecp/manifest`.
    pub manifest: Slot,
}
