//! Encoded responses cached by sequence number: the skill set only changes
//! with the sequence, so `GET /ecp/skills` and `GET /ecp/manifest` are
//! encoded once per change, not once per request — and so are their gzip
//! encoding and the SHA-256 a signed answer covers (`SPEC.md` §10.1.6), so
//! signing a cached answer costs one HMAC over a short string. The
//! [`Feed`] every skills answer is cut from is cached the same way, and the
//! cached full listing is made of the feed's own bytes, so one copy of the
//! packets serves every form of `GET /ecp/skills`.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use axum::body::{Body, Bytes};
use flate2::Compression;
use flate2::write::GzEncoder;

use super::answer::{parts_body, parts_digest};
use super::feed::Feed;

/// One cached encoding.
#[derive(Debug, Clone)]
pub struct Cached {
    /// The sequence number it reflects.
    pub seq: i64,
    /// The JSON body, as buffers sent in order: a full listing's are runs
    /// of the feed's buffer, shared rather than copied.
    parts: Arc<[Bytes]>,
    /// What else the body depends on (0 when nothing; the manifest's
    /// advertised authentication schemes): an entry serves only its variant.
    pub variant: u8,
    /// The body gzipped, made on the first request that accepts gzip.
    gzipped: Arc<OnceLock<Bytes>>,
    /// Lowercase hex SHA-256 of `body` (the identity encoding), made on the
    /// first signed request.
    digest: Arc<OnceLock<String>>,
}

impl Cached {
    /// A cache entry for `body` at sequence `seq`.
    pub fn new(seq: i64, body: Bytes) -> Self {
        Self::from_parts(seq, vec![body])
    }

    /// A cache entry whose body is `parts` in order, at sequence `seq`.
    pub fn from_parts(seq: i64, parts: Vec<Bytes>) -> Self {
        Cached { seq, parts: parts.into(), variant: 0, gzipped: Arc::default(), digest: Arc::default() }
    }

    /// The body's length in bytes.
    pub fn body_len(&self) -> usize {
        self.parts.iter().map(Bytes::len).sum()
    }

    /// The body, as served without Content-Encoding.
    pub fn body(&self) -> Body {
        parts_body(self.parts.to_vec())
    }

    /// The same entry, for body variant `variant`.
    pub fn with_variant(mut self, variant: u8) -> Self {
        self.variant = variant;
        self
    }

    /// The hex SHA-256 of the body as served before any Content-Encoding,
    /// computed once per entry.
    pub fn digest(&self) -> &str {
        self.digest.get_or_init(|| parts_digest(&self.parts))
    }

    /// Whether [`Cached::digest`] is computed already (and so costs nothing).
    pub fn has_digest(&self) -> bool {
        self.digest.get().is_some()
    }

    /// The gzip encoding of the body (fast level: skill text compresses
    /// about 4:1 even so, and this runs once per sequence number).
    pub fn gzipped(&self) -> Bytes {
        self.gzipped
            .get_or_init(|| {
                let mut encoder =
                    GzEncoder::new(Vec::with_capacity(self.body_len() / 3), Compression::fast());
                for part in self.parts.iter() {
                    encoder.write_all(part).expect("writing to a Vec does not fail");
                }
                Bytes::from(encoder.finish().expect("finishing into a Vec does not fail"))
            })
            .clone()
    }
}

/// What a [`Slot`] holds: a value made at a sequence number.
pub trait Versioned: Clone {
    /// The sequence number it reflects.
    fn seq(&self) -> i64;
    /// What else it depends on (see [`Cached::variant`]); 0 when nothing.
    fn variant(&self) -> u8 {
        0
    }
}

impl Versioned for Cached {
    fn seq(&self) -> i64 {
        self.seq
    }

    fn variant(&self) -> u8 {
        self.variant
    }
}

impl Versioned for Arc<Feed> {
    fn seq(&self) -> i64 {
        self.seq
    }
}

/// A single-slot cache.
#[derive(Debug)]
pub struct Slot<T = Cached> {
    value: Mutex<Option<T>>,
    /// Held while a new value is built, so that a burst of requests after a
    /// change builds it once instead of once each (a 20 MB listing built by
    /// 16 requests at once is 320 MB).
    building: tokio::sync::Mutex<()>,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot { value: Mutex::new(None), building: tokio::sync::Mutex::new(()) }
    }
}

impl<T: Versioned> Slot<T> {
    /// The cached value at least as new as `seq`, building it with `build`
    /// (once, however many requests ask at the same time) when there is none.
    pub async fn get_or_build<E, F, Fut>(&self, seq: i64, build: F) -> Result<T, E>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<T, E>>,
    {
        self.get_or_build_variant(seq, 0, build).await
    }

    /// [`Slot::get_or_build`] for body variant `variant` (`build` must make
    /// that variant): a cached value of another variant is replaced.
    pub async fn get_or_build_variant<E, F, Fut>(&self, seq: i64, variant: u8, build: F) -> Result<T, E>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<T, E>>,
    {
        if let Some(hit) = self.fresh(seq, variant) {
            return Ok(hit);
        }
        let _building = self.building.lock().await;
        if let Some(hit) = self.fresh(seq, variant) {
            return Ok(hit);
        }
        let built = build().await?;
        self.store(built.clone());
        Ok(built)
    }

    /// The cached value when it is at least as new as `seq` and of `variant`.
    fn fresh(&self, seq: i64, variant: u8) -> Option<T> {
        let guard = self.value.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_ref().filter(|c| c.seq() >= seq && c.variant() == variant).cloned()
    }

    /// Keeps `value` unless a newer one of its variant is already there.
    fn store(&self, value: T) {
        let mut guard = self.value.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_none_or(|c| c.seq() <= value.seq() || c.variant() != value.variant()) {
            *guard = Some(value);
        }
    }
}

/// The node's response caches.
#[derive(Debug, Default)]
pub struct ResponseCache {
    /// The packets every `GET /ecp/skills` answer is cut from.
    pub feed: Slot<Arc<Feed>>,
    /// Full `GET /ecp/skills`, made of the feed's bytes.
    pub skills: Slot,
    /// `GET /ecp/manifest`.
    pub manifest: Slot,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_covers_the_identity_body_and_is_made_once() {
        let entry = Cached::new(3, Bytes::from_static(b"{\"skills\":[]}"));
        assert!(!entry.has_digest());
        let copy = entry.clone();
        assert_eq!(entry.digest(), ecp_protocol::signed_auth::body_digest(b"{\"skills\":[]}"));
        assert!(copy.has_digest(), "clones share the digest");
        let _ = entry.gzipped();
        assert_eq!(copy.digest(), entry.digest(), "gzip does not change what is signed");
    }

    #[tokio::test]
    async fn an_entry_of_parts_serves_digests_and_gzips_their_concatenation() {
        let whole = b"{\"skills\":[{\"a\":1},{\"b\":2}]}";
        let (head, rest) = whole.split_at(11);
        let (middle, tail) = rest.split_at(7);
        let parts = [head, middle, tail].map(Bytes::copy_from_slice).to_vec();
        let entry = Cached::from_parts(1, parts);
        assert_eq!(entry.body_len(), whole.len());
        assert_eq!(entry.digest(), ecp_protocol::signed_auth::body_digest(whole));
        let mut unzipped = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&entry.gzipped()[..]), &mut unzipped)
            .unwrap();
        assert_eq!(unzipped, whole);
        assert_eq!(&axum::body::to_bytes(entry.body(), usize::MAX).await.unwrap()[..], whole);
    }

    #[tokio::test]
    async fn an_entry_serves_only_its_variant() {
        let slot = Slot::default();
        let build = |variant: u8| async move {
            Ok::<_, ()>(Cached::new(5, Bytes::from(vec![variant])).with_variant(variant))
        };
        let first = |entry: Cached| entry.parts[0][0];
        assert_eq!(first(slot.get_or_build_variant(5, 1, || build(1)).await.unwrap()), 1);
        assert_eq!(first(slot.get_or_build_variant(5, 1, || build(9)).await.unwrap()), 1, "cached");
        assert_eq!(first(slot.get_or_build_variant(5, 2, || build(2)).await.unwrap()), 2, "rebuilt");
    }
}
