//! Encoded responses cached by sequence number: the skill set only changes
//! with the sequence, so `GET /ecp/skills` and `GET /ecp/manifest` are
//! encoded once per change, not once per request.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use axum::body::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;

/// One cached encoding.
#[derive(Debug, Clone)]
pub struct Cached {
    /// The sequence number it reflects.
    pub seq: i64,
    /// The JSON body.
    pub body: Bytes,
    /// The body gzipped, made on the first request that accepts gzip.
    gzipped: Arc<OnceLock<Bytes>>,
}

impl Cached {
    /// A cache entry for `body` at sequence `seq`.
    pub fn new(seq: i64, body: Bytes) -> Self {
        Cached { seq, body, gzipped: Arc::default() }
    }

    /// The gzip encoding of the body (fast level: skill text compresses
    /// about 4:1 even so, and this runs once per sequence number).
    pub fn gzipped(&self) -> Bytes {
        self.gzipped
            .get_or_init(|| {
                let mut encoder =
                    GzEncoder::new(Vec::with_capacity(self.body.len() / 3), Compression::fast());
                encoder.write_all(&self.body).expect("writing to a Vec does not fail");
                Bytes::from(encoder.finish().expect("finishing into a Vec does not fail"))
            })
            .clone()
    }
}

/// A single-slot cache.
#[derive(Debug, Default)]
pub struct Slot {
    value: Mutex<Option<Cached>>,
    /// Held while a new value is built, so that a burst of requests after a
    /// change builds it once instead of once each (a 20 MB listing built by
    /// 16 requests at once is 320 MB).
    building: tokio::sync::Mutex<()>,
}

impl Slot {
    /// The cached value at least as new as `seq`, building it with `build`
    /// (once, however many requests ask at the same time) when there is none.
    pub async fn get_or_build<E, F, Fut>(&self, seq: i64, build: F) -> Result<Cached, E>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Cached, E>>,
    {
        if let Some(hit) = self.fresh(seq) {
            return Ok(hit);
        }
        let _building = self.building.lock().await;
        if let Some(hit) = self.fresh(seq) {
            return Ok(hit);
        }
        let built = build().await?;
        self.store(built.clone());
        Ok(built)
    }

    /// The cached value when it is at least as new as `seq`.
    fn fresh(&self, seq: i64) -> Option<Cached> {
        let guard = self.value.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_ref().filter(|c| c.seq >= seq).cloned()
    }

    /// Keeps `value` unless a newer one is already there.
    fn store(&self, value: Cached) {
        let mut guard = self.value.lock().unwrap_or_else(|p| p.into_inner());
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
