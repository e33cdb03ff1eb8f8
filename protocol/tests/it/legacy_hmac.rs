//! `X-ECP-HMAC` against `testdata/legacy-hmac-vectors.json`, which was
//! checked against the reference server.

use ecp_protocol::AuthError;
use ecp_protocol::legacy_auth::{self, LegacyVerifier};
use serde::Deserialize;

#[derive(Deserialize)]
struct Vectors {
    secret: String,
    post_x_ecp_hmac: String,
    get_manifest_path: String,
    get_manifest_x_ecp_hmac_over_path: String,
    get_skills_path: String,
    get_skills_x_ecp_hmac_over_path: String,
    get_skills_x_ecp_hmac_over_full_url_as_reference_client_sends: String,
    full_url_used: String,
}

const VECTORS: &str = include_str!("../../testdata/legacy-hmac-vectors.json");
/// The body the POST vector was computed over, byte for byte.
const POST_BODY: &[u8] = include_bytes!("../../testdata/push1.json");

fn vectors() -> Vectors {
    serde_json::from_str(VECTORS).unwrap()
}

#[test]
fn signs_like_the_reference() {
    let v = vectors();
    let s = v.secret.as_bytes();
    let cases = [
        ("post body", legacy_auth::sign_post(s, POST_BODY), &v.post_x_ecp_hmac),
        (
            "get manifest",
            legacy_auth::sign_get(s, &v.get_manifest_path),
            &v.get_manifest_x_ecp_hmac_over_path,
        ),
        ("get skills", legacy_auth::sign_get(s, &v.get_skills_path), &v.get_skills_x_ecp_hmac_over_path),
        (
            "full url",
            legacy_auth::sign(s, v.full_url_used.as_bytes()),
            &v.get_skills_x_ecp_hmac_over_full_url_as_reference_client_sends,
        ),
    ];
    for (i, (what, ours, theirs)) in cases.iter().enumerate() {
        assert_eq!(ours, *theirs, "vector {i} ({what})");
    }
}

#[test]
fn verifies_reference_signatures() {
    let v = vectors();
    let verifier = LegacyVerifier::new(v.secret.as_bytes());
    verifier.verify_post(POST_BODY, Some(&v.post_x_ecp_hmac)).unwrap();
    verifier.verify_get(&v.get_manifest_path, None, Some(&v.get_manifest_x_ecp_hmac_over_path)).unwrap();
    verifier
        .verify_get(&v.get_skills_path, Some("127.0.0.1:9102"), Some(&v.get_skills_x_ecp_hmac_over_path))
        .unwrap();
    // Uppercase hex is the same signature.
    verifier.verify_post(POST_BODY, Some(&v.post_x_ecp_hmac.to_uppercase())).unwrap();
}

#[test]
fn accepts_full_url_variant_only_when_enabled() {
    let v = vectors();
    let full = v.get_skills_x_ecp_hmac_over_full_url_as_reference_client_sends;
    let host = v.full_url_used.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    let mut verifier = LegacyVerifier::new(v.secret.as_bytes());
    verifier.verify_get(&v.get_skills_path, Some(&host), Some(&full)).unwrap();
    assert_eq!(
        verifier.verify_get(&v.get_skills_path, Some("other:1"), Some(&full)),
        Err(AuthError::SignatureMismatch)
    );
    verifier.accept_full_url = false;
    assert_eq!(
        verifier.verify_get(&v.get_skills_path, Some(&host), Some(&full)),
        Err(AuthError::SignatureMismatch)
    );
}

#[test]
fn rejects_missing_malformed_and_wrong_signatures() {
    let v = vectors();
    let verifier = LegacyVerifier::new(v.secret.as_bytes());
    assert_eq!(verifier.verify_post(POST_BODY, None), Err(AuthError::MissingSignature));
    assert_eq!(verifier.verify_post(POST_BODY, Some("zz")), Err(AuthError::MalformedSignature));
    assert_eq!(verifier.verify_post(POST_BODY, Some(&"0".repeat(64))), Err(AuthError::SignatureMismatch));
    // A signature for the manifest path does not open the skills path.
    assert_eq!(
        verifier.verify_get(&v.get_skills_path, None, Some(&v.get_manifest_x_ecp_hmac_over_path)),
        Err(AuthError::SignatureMismatch)
    );
    let wrong_secret = LegacyVerifier::new(b"not-the-secret".to_vec());
    assert_eq!(
        wrong_secret.verify_post(POST_BODY, Some(&v.post_x_ecp_hmac)),
        Err(AuthError::SignatureMismatch)
    );
}

#[test]
fn debug_output_never_shows_the_secret() {
    let verifier = LegacyVerifier::new(b"hunter2".to_vec());
    assert!(!format!("{verifier:?}").contains("hunter2"));
}
