//! Content hashes (`ECP.md` › Messages: `id`, `integrityHash`, `originUserHash`).
//!
//! - `integrityHash` = lowercase hex SHA-256 of the UTF-8 bytes of `skillBody`;
//! - `id` = its first 16 hex characters;
//! - `originUserHash` = hex of the first 16 bytes of SHA-256(user id), so the
//!   raw user id never leaves the machine.

use sha2::{Digest, Sha256};

use crate::error::IntegrityError;

/// Length of a hex SHA-256.
pub const HASH_HEX_LEN: usize = 64;
/// Length of a packet id: a prefix of the integrity hash.
pub const ID_HEX_LEN: usize = 16;

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let mut hex = [0u8; HASH_HEX_LEN];
    digest_hex(bytes, &mut hex);
    ascii_string(&hex)
}

/// Lowercase hex SHA-256 of `bytes`, into a buffer: `hex::encode` builds its
/// string a character at a time, which costs more than a short hash itself.
fn digest_hex(bytes: &[u8], out: &mut [u8; HASH_HEX_LEN]) {
    // 32 bytes always fill 64 hex digits, so this cannot fail.
    let _ = hex::encode_to_slice(Sha256::digest(bytes), out);
}

/// Hex digits as a `String` (they are ASCII, so always valid UTF-8).
fn ascii_string(hex: &[u8]) -> String {
    String::from_utf8_lossy(hex).into_owned()
}

/// The `integrityHash` of a skill body.
pub fn body_hash(body: &str) -> String {
    sha256_hex(body.as_bytes())
}

/// The packet `id` belonging to an integrity hash: its first 16 hex characters.
pub fn packet_id(integrity_hash: &str) -> String {
    id_of(integrity_hash).to_owned()
}

/// [`packet_id`], borrowed from the hash.
pub(crate) fn id_of(integrity_hash: &str) -> &str {
    integrity_hash.get(..ID_HEX_LEN).unwrap_or(integrity_hash)
}

/// The `originUserHash` of a user id: hex of the first 16 bytes of its SHA-256.
pub fn user_hash(user_id: &str) -> String {
    let mut hex = [0u8; HASH_HEX_LEN];
    digest_hex(user_id.as_bytes(), &mut hex);
    ascii_string(&hex[..32])
}

/// GEP-style content address of a body: `sha256:<hex>`.
pub fn asset_id(body: &str) -> String {
    format!("sha256:{}", body_hash(body))
}

/// Whether `text` has the form of an integrityHash: 64 lowercase hex digits.
pub fn is_hash(text: &str) -> bool {
    text.len() == HASH_HEX_LEN && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Checks that `claimed` is the integrity hash of `body`.
///
/// The hash must be lowercase, as the Go implementation writes it and compares
/// it (byte for byte); an uppercase hash would pass here and fail there.
pub fn verify_body(body: &str, claimed: &str) -> Result<(), IntegrityError> {
    if !is_hash(claimed) {
        let claimed: String = claimed.chars().take(80).collect();
        return Err(IntegrityError::MalformedHash { claimed });
    }
    // Compared in a buffer: a received packet is verified once, and almost
    // always matches, so the hex string is only built for the error.
    let mut computed = [0u8; HASH_HEX_LEN];
    digest_hex(body.as_bytes(), &mut computed);
    if computed != claimed.as_bytes() {
        return Err(IntegrityError::BodyHashMismatch {
            claimed: claimed.to_owned(),
            computed: ascii_string(&computed),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_hash_is_lowercase_hex_sha256() {
        assert_eq!(body_hash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(packet_id(&body_hash("")), "e3b0c44298fc1c14");
    }

    #[test]
    fn user_hash_keeps_first_16_bytes() {
        // The reference server's own user hash is that of the empty id.
        assert_eq!(user_hash(""), "e3b0c44298fc1c149afbf4c8996fb924");
        assert_eq!(user_hash("test"), "9f86d081884c7d659a2feaa0c55ad015");
    }

    #[test]
    fn rejects_uppercase_and_short_hashes() {
        let upper = body_hash("x").to_uppercase();
        assert!(matches!(verify_body("x", &upper), Err(IntegrityError::MalformedHash { .. })));
        assert!(matches!(verify_body("x", "abc"), Err(IntegrityError::MalformedHash { .. })));
    }

    #[test]
    fn asset_id_is_the_prefixed_body_hash() {
        assert_eq!(asset_id(""), format!("sha256:{}", body_hash("")));
        assert_eq!(sha256_hex(b"x"), body_hash("x"));
        assert_eq!(packet_id("abc"), "abc", "a short hash is its own id");
    }

    #[test]
    fn a_hash_of_64_characters_must_be_all_hex_digits() {
        let good = body_hash("x");
        assert_eq!(good.len(), HASH_HEX_LEN);
        let not_hex = format!("g{}", &good[1..]);
        assert!(matches!(verify_body("x", &not_hex), Err(IntegrityError::MalformedHash { .. })));
        let long = format!("{good}0");
        assert!(matches!(verify_body("x", &long), Err(IntegrityError::MalformedHash { .. })));
        // The hash is echoed in the error, cut to 80 characters.
        let huge = "Z".repeat(1000);
        let Err(IntegrityError::MalformedHash { claimed }) = verify_body("x", &huge) else { panic!() };
        assert_eq!(claimed, "Z".repeat(80));
        let Err(IntegrityError::BodyHashMismatch { claimed, computed }) = verify_body("y", &good) else {
            panic!()
        };
        assert_eq!((claimed, computed), (good, body_hash("y")));
    }

    #[test]
    fn rejects_body_that_does_not_match() {
        let err = verify_body("tampered", &body_hash("original")).unwrap_err();
        assert!(matches!(err, IntegrityError::BodyHashMismatch { .. }));
        assert!(verify_body("original", &body_hash("original")).is_ok());
    }
}
