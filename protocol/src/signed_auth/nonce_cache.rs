//! The replay guard of signed requests: every nonce a verifier accepted,
//! kept until its timestamp leaves the skew window, in bounded memory.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use sha2::{Digest, Sha256};

use super::DEFAULT_NONCE_CAPACITY;
use crate::error::SignedAuthError;

/// The nonces accepted within the skew window, bounded.
///
/// An entry is kept until its timestamp plus the window has passed: after
/// that the skew check alone refuses a replay. Entries are 16-byte digests of
/// key id and nonce, so memory is bounded by `capacity` whatever the
/// clients send. When full of live entries the cache refuses new nonces
/// ([`SignedAuthError::ReplayCacheFull`]) rather than forgetting one that
/// could then be replayed.
#[derive(Debug)]
pub struct NonceCache {
    capacity: usize,
    expiry: HashMap<[u8; 16], i64>,
    by_expiry: BinaryHeap<Reverse<(i64, [u8; 16])>>,
}

impl Default for NonceCache {
    fn default() -> Self {
        NonceCache::with_capacity(DEFAULT_NONCE_CAPACITY)
    }
}

impl NonceCache {
    /// An empty cache holding at most `capacity` live nonces.
    pub fn with_capacity(capacity: usize) -> Self {
        NonceCache { capacity: capacity.max(1), expiry: HashMap::new(), by_expiry: BinaryHeap::new() }
    }

    /// Live nonces held.
    pub fn len(&self) -> usize {
        self.expiry.len()
    }

    /// Whether no nonce is held.
    pub fn is_empty(&self) -> bool {
        self.expiry.is_empty()
    }

    /// Records `nonce` of `key_id`, signed at `timestamp`; refuses one seen
    /// before within the window.
    pub fn admit(
        &mut self,
        key_id: &str,
        nonce: &str,
        timestamp: i64,
        now: i64,
        window_secs: i64,
    ) -> Result<(), SignedAuthError> {
        self.forget_expired(now);
        let id = nonce_id(key_id, nonce);
        if self.expiry.contains_key(&id) {
            return Err(SignedAuthError::Replay);
        }
        if self.expiry.len() >= self.capacity {
            return Err(SignedAuthError::ReplayCacheFull);
        }
        let until = timestamp.saturating_add(window_secs.saturating_abs());
        self.expiry.insert(id, until);
        self.by_expiry.push(Reverse((until, id)));
        Ok(())
    }

    fn forget_expired(&mut self, now: i64) {
        while let Some(Reverse((until, id))) = self.by_expiry.peek().copied() {
            if until >= now {
                break;
            }
            self.by_expiry.pop();
            self.expiry.remove(&id);
        }
    }
}

fn nonce_id(key_id: &str, nonce: &str) -> [u8; 16] {
    let mut hasher = Sha256::new();
    hasher.update(key_id.as_bytes());
    hasher.update([0u8]);
    hasher.update(nonce.as_bytes());
    let digest = hasher.finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest[..16]);
    id
}
