//! Encoded responses cached by sequence number: the skill set only changes
//! with the sequence, so `GET /ecp/skills` and `GET /ecp/manifest` are
//! encoded once per change, not once per request — and so are their gzip
//! encoding and the SHA-256 a signed answer covers (`SPEC.md` §10.1.6), so
//! signing a cached answer costs one HMAC over a short string. The
//! [`Feed`] every skills answer is cut from is cached the same way, and the
//! cached full listing is made of the feed's own bytes, so one copy of the
//! packets serves every form of `GET /ecp/skills`. A stale value is dropped
//! before its successor is built, so the two never sit in memory together.

use std::sync::{Arc, Mutex, OnceLock};

use axum::body::{Body, Bytes};

use super::feed::Feed;
use super::gzip::{GZIP_CHUNK, gzip};
use super::pieces::Pieces;
use crate::store::StoreError;

/// One cached encoding.
#[derive(Debug, Clone)]
pub struct Cached {
    /// The sequence number it reflects.
    pub seq: i64,
    /// The JSON body: a full listing's packets are runs of the feed's,
    /// shared rather than copied.
    pieces: Pieces,
    /// What else the body depends on (0 when nothing; the manifest's
    /// advertised authentication schemes): an entry serves only its variant.
    pub variant: u8,
    /// The body gzipped, made on the first request that accepts gzip.
    gzipped: Arc<OnceLock<Result<Pieces, String>>>,
    /// Lowercase hex SHA-256 of `body` (the identity encoding), made on the
    /// first signed request.
    digest: Arc<OnceLock<Result<String, String>>>,
}

impl Cached {
    /// A cache entry for `body` at sequence `seq`.
    pub fn new(seq: i64, body: Bytes) -> Self {
        Self::from_pieces(seq, body.into())
    }

    /// A cache entry whose body is `pieces`, at sequence `seq`.
    pub fn from_pieces(seq: i64, pieces: Pieces) -> Self {
        Cached { seq, pieces, variant: 0, gzipped: Arc::default(), digest: Arc::default() }
    }

    /// The body's length in bytes.
    pub fn body_len(&self) -> u64 {
        self.pieces.len()
    }

    /// The body, as served without Content-Encoding.
    pub fn body(&self) -> Body {
        self.pieces.body()
    }

    /// The same entry, for body variant `variant`.
    pub fn with_variant(mut self, variant: u8) -> Self {
        self.variant = variant;
        self
    }

    /// The hex SHA-256 of the body as served before any Content-Encoding,
    /// computed once per entry.
    pub fn digest(&self) -> Result<&str, StoreError> {
        once(&self.digest, || self.pieces.digest()).map(String::as_str)
    }

    /// Whether [`Cached::digest`] is computed already (and so costs nothing).
    pub fn has_digest(&self) -> bool {
        self.digest.get().is_some()
    }

    /// The gzip encoding of the body ([`gzip`]), made once per entry. It
    /// is what a full listing's readers share: a quarter of the JSON, in
    /// chunks, where a large feed never holds the JSON whole.
    pub fn gzipped(&self) -> Result<Pieces, StoreError> {
        once(&self.gzipped, || gzip(&self.pieces, GZIP_CHUNK)).cloned()
    }
}

/// The value of `cell`, made by `make` on the first call; the calls that
/// come meanwhile wait for it rather than make their own (16 gzip encodings
/// of a 40 MB listing at once would be 640 MB). A failure (a stored packet
/// that does not unpack) is kept too: it is the store's, not the moment's.
fn once<T>(
    cell: &OnceLock<Result<T, String>>,
    make: impl FnOnce() -> Result<T, StoreError>,
) -> Result<&T, StoreError> {
    let made = cell.get_or_init(|| make().map_err(|e| e.to_string()));
    made.as_ref().map_err(|e| StoreError::Corrupt(e.clone()))
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
        // Whatever is cached is stale: let it go before building its successor.
        self.value.lock().unwrap_or_else(|p| p.into_inner()).take();
        let built = build().await?;
        self.store(built.clone());
        Ok(built)
    }

    /// Drops the cached value if it is older than `seq`: the full listing
    /// does so before a new feed is built, since it holds the old feed's
    /// packets, which would otherwise stay in memory beside the new ones.
    pub fn forget_older_than(&self, seq: i64) {
        let mut guard = self.value.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_some_and(|c| c.seq() < seq) {
            *guard = None;
        }
    }

    /// The cached value, however old.
    pub fn peek(&self) -> Option<T> {
        self.value.lock().unwrap_or_else(|p| p.into_inner()).clone()
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
    use super::super::pieces::Piece;
    use super::*;

    #[test]
    fn the_digest_covers_the_identity_body_and_is_made_once() {
        let entry = Cached::new(3, Bytes::from_static(b"{\"skills\":[]}"));
        assert!(!entry.has_digest());
        let copy = entry.clone();
        assert_eq!(entry.digest().unwrap(), ecp_protocol::signed_auth::body_digest(b"{\"skills\":[]}"));
        assert!(copy.has_digest(), "clones share the digest");
        let _ = entry.gzipped().unwrap();
        assert_eq!(copy.digest().unwrap(), entry.digest().unwrap(), "gzip does not change what is signed");
    }

    #[tokio::test]
    async fn an_entry_of_pieces_serves_digests_and_gzips_their_concatenation() {
        let whole = b"{\"skills\":[{\"a\":1},{\"b\":2}]}";
        let (head, rest) = whole.split_at(11);
        let (middle, tail) = rest.split_at(7);
        let pieces = [head, middle, tail].map(|p| Piece::Bytes(Bytes::copy_from_slice(p))).to_vec();
        let entry = Cached::from_pieces(1, Pieces::new(pieces));
        assert_eq!(entry.body_len(), whole.len() as u64);
        assert_eq!(entry.digest().unwrap(), ecp_protocol::signed_auth::body_digest(whole));
        let mut unzipped = Vec::new();
        let gzipped = axum::body::to_bytes(entry.gzipped().unwrap().body(), usize::MAX).await.unwrap();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gzipped[..]), &mut unzipped).unwrap();
        assert_eq!(unzipped, whole);
        assert_eq!(&axum::body::to_bytes(entry.body(), usize::MAX).await.unwrap()[..], whole);
    }

    #[tokio::test]
    async fn a_stale_value_is_dropped_before_its_successor_is_built() {
        let slot = Slot::default();
        let old = Bytes::from(vec![1u8; 1000]);
        slot.get_or_build(1, || async { Ok::<_, ()>(Cached::new(1, old.clone())) }).await.unwrap();
        assert!(!old.is_unique(), "the slot holds the old body");
        let mut old_let_go = None;
        let build = || {
            old_let_go = Some(old.is_unique());
            async { Ok::<_, ()>(Cached::new(2, Bytes::from_static(b"new"))) }
        };
        slot.get_or_build(2, build).await.unwrap();
        assert_eq!(old_let_go, Some(true), "the old body was let go before the new one was built");
    }

    #[test]
    fn concurrent_callers_wait_for_one_encoding_instead_of_making_their_own() {
        let cell = OnceLock::new();
        let made = std::sync::atomic::AtomicUsize::new(0);
        let make = || {
            made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(50));
            Ok(Bytes::from_static(b"gz"))
        };
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| assert_eq!(once(&cell, make).unwrap(), "gz"));
            }
        });
        assert_eq!(made.into_inner(), 1);
        let failed = OnceLock::<Result<Bytes, String>>::new();
        assert!(matches!(
            once(&failed, || Err(StoreError::Corrupt("x".into()))),
            Err(StoreError::Corrupt(_))
        ));
        assert!(once(&failed, || Ok(Bytes::new())).is_err(), "the failure is kept for the entry");
    }

    #[test]
    fn only_an_older_value_is_forgotten() {
        let slot = Slot::default();
        slot.store(Cached::new(5, Bytes::from_static(b"5")));
        slot.forget_older_than(5);
        assert!(slot.fresh(5, 0).is_some(), "a value as new as asked stays");
        slot.forget_older_than(6);
        assert!(slot.fresh(0, 0).is_none(), "an older one goes");
    }

    #[tokio::test]
    async fn an_entry_serves_only_its_variant() {
        let slot = Slot::default();
        let build = |variant: u8| async move {
            Ok::<_, ()>(Cached::new(5, Bytes::from(vec![variant])).with_variant(variant))
        };
        let first = |entry: Cached| {
            let mut body = Vec::new();
            entry.pieces.visit(|b| body.extend_from_slice(b)).unwrap();
            body[0]
        };
        assert_eq!(first(slot.get_or_build_variant(5, 1, || build(1)).await.unwrap()), 1);
        assert_eq!(first(slot.get_or_build_variant(5, 1, || build(9)).await.unwrap()), 1, "cached");
        assert_eq!(first(slot.get_or_build_variant(5, 2, || build(2)).await.unwrap()), 2, "rebuilt");
    }
}
