//! The secret family's bounds at their limit and one past it, where the
//! older tests pin only one side (#27, session 29): the entropy floors of
//! a password (2.5 bits a character), a key (3.5) and a bare `key` (4.0),
//! each reached exactly (the counts are powers of two, so the sum is
//! exact) and missed by the nearest value below; the value-length cap,
//! which a JWT and a key block are exempt from; and the run of six
//! characters that makes a placeholder, one short of it. Every credential
//! here is made up.

use crate::scan::Severity::Medium;
use crate::scan::testutil::{assert_absent, assert_severity};

use super::MAX_VALUE_BYTES;
use super::values::{NameClass, entropy, is_placeholder, strong_enough};

const ID: &str = "secret.assignment";

#[test]
fn a_password_needs_two_and_a_half_bits_a_character() {
    // a, b twice, four digits once: 2 × ¼·2 + 4 × ⅛·3 = 2.5 bits.
    let at = "aabb1234";
    // a three times: 2.41 bits.
    let under = "aaab1234";
    assert_eq!(entropy(at.as_bytes()), 2.5);
    assert!(entropy(under.as_bytes()) < 2.5);
    assert!(strong_enough(at, NameClass::Password) && !strong_enough(under, NameClass::Password));
    assert_severity(&format!("DB_PASSWORD={at}\n"), ID, Medium);
    assert_absent(&format!("DB_PASSWORD={under}\n"), ID);
}

#[test]
fn a_key_needs_three_and_a_half_bits_a_character() {
    // Sixteen characters, eight once and four twice: 8 × 1/16·4 + 4 × ⅛·3 =
    // 3.5 bits; six once and five twice: 3.375.
    let at = "Qm7xTz4pQm7xWv9k";
    let under = "Qm7xTQm7xTz4pWv9";
    assert_eq!(entropy(at.as_bytes()), 3.5);
    assert_eq!(entropy(under.as_bytes()), 3.375);
    assert!(strong_enough(at, NameClass::Key) && !strong_enough(under, NameClass::Key));
    assert_severity(&format!("API_KEY={at}\n"), ID, Medium);
    assert_absent(&format!("API_KEY={under}\n"), ID);
}

#[test]
fn a_bare_key_needs_four_bits_a_character() {
    // Thirty-two characters, sixteen twice each: 4.0 bits exactly; the same
    // with two characters replaced by a third one's: 3.70.
    let at = "Qm7xTz4pWv9kLr2nn2rLk9vWp4zTx7mQ";
    let under = "Qm7xTz4pWv9kLrQm7xTz4pWv9kLrQQQQ";
    assert_eq!(entropy(at.as_bytes()), 4.0);
    assert!(entropy(under.as_bytes()) < 4.0);
    assert!(strong_enough(at, NameClass::Bare) && !strong_enough(under, NameClass::Bare));
    assert_severity(&format!("key: {at}\n"), ID, Medium);
    assert_absent(&format!("key: {under}\n"), ID);
    // Under a name that says key, the weaker one is a key.
    assert_severity(&format!("api_key: {under}\n"), ID, Medium);
}

#[test]
fn a_jwt_and_a_key_block_longer_than_the_value_cap_are_still_read() {
    // {"alg":"HS256","typ":"JWT"} . {"sub":"42","iat":1700000000} . a long signature
    let signature: String = "Qm7xTz4pWv9kLr2nB8cYd3FhJ6gKs1Ma".repeat(MAX_VALUE_BYTES / 32 + 1);
    let jwt = [
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        ".",
        "eyJzdWIiOiI0MiIsImlhdCI6MTcwMDAwMDAwMH0",
        ".",
        &signature,
    ]
    .concat();
    assert!(jwt.len() > MAX_VALUE_BYTES);
    assert_severity(&format!("SESSION={jwt}\n"), "secret.jwt", Medium);
    // A service account's key on one line: its material is longer too.
    let material = signature.replace('x', "+");
    assert!(material.len() > MAX_VALUE_BYTES);
    let json = format!(
        "\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{material}\\n-----END PRIVATE KEY-----\\n\"\n"
    );
    assert_severity(&json, "secret.private-key", Medium);
}

#[test]
fn five_characters_in_a_run_are_no_placeholder() {
    // Six of each are (`placeholders_at_each_criterion_and_its_edge`).
    for v in ["aaaaaZ", "abcdeZ", "edcbaZ"] {
        assert!(!is_placeholder(v), "{v}");
    }
}
