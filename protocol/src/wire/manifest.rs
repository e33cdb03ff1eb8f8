//! `ECPManifest`: the cheap answer to "what do you have?".

use serde::{Deserialize, Serialize};

use super::{Timestamp, null_as_default};

/// A node's summary (`ECPManifest`, `GET /ecp/manifest`): enough for a puller
/// to decide whether a full or `since` pull is worth it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Manifest {
    /// The node's instance id.
    #[serde(deserialize_with = "null_as_default")]
    pub instance: String,
    /// Protocol version, `"1.0"`.
    #[serde(deserialize_with = "null_as_default")]
    pub version: String,
    /// When the manifest was generated.
    pub generated_at: Timestamp,
    /// Sequence number of the newest change (always 0 from the Go implementation).
    pub sequence_num: i64,
    /// Number of shareable skills; equals `skill_names.len()`.
    pub skill_count: i64,
    /// Names of the shareable skills.
    #[serde(deserialize_with = "null_as_default")]
    pub skill_names: Vec<String>,
    /// The most used tags.
    #[serde(deserialize_with = "null_as_default")]
    pub top_tags: Vec<String>,
    /// When the skill set last changed.
    pub last_update: Timestamp,
    /// Our addition (ECP/1.2): the authentication schemes the node accepts,
    /// `"ecp-1.2"` (signed requests) and `"x-ecp-hmac"` (legacy). Omitted
    /// when empty, so Go decoders see the ECP/1.0 manifest.
    #[serde(deserialize_with = "null_as_default", skip_serializing_if = "Vec::is_empty")]
    pub auth: Vec<String>,
    /// Our addition (ECP/1.3): the optional parts of the protocol the node
    /// implements beyond ECP/1.2, e.g. [`PROFILE_ECP_1_3`] (bundles,
    /// `SPEC.md` §12.8.8). Omitted when empty.
    #[serde(deserialize_with = "null_as_default", skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<String>,
    /// Our addition (ECP/1.3 identity, `SPEC.md` §13.6): the node's
    /// Ed25519 public key (64 lowercase hex digits), with which it signs
    /// the skills it authors. Omitted when empty.
    #[serde(deserialize_with = "null_as_default", skip_serializing_if = "String::is_empty")]
    pub public_key: String,
    /// Our addition: the key id of `publicKey` ([`crate::identity::key_id`]).
    #[serde(deserialize_with = "null_as_default", skip_serializing_if = "String::is_empty")]
    pub key_id: String,
}

/// [`Manifest::auth`] entry: ECP/1.2 signed requests (`SPEC.md` §10.1).
pub const AUTH_ECP_1_2: &str = "ecp-1.2";
/// [`Manifest::auth`] entry: the legacy `X-ECP-HMAC` header (`SPEC.md` §6).
pub const AUTH_X_ECP_HMAC: &str = "x-ecp-hmac";
/// [`Manifest::profiles`] entry: bundles and the blob endpoints (`SPEC.md` §12).
pub const PROFILE_ECP_1_3: &str = "ecp-1.3";
/// [`Manifest::profiles`] entry: exact versions served by digest, `GET
/// /ecp/skills/{name}?digest=HEX` (`SPEC.md` §5.7).
pub const PROFILE_VERSIONS: &str = "versions";
/// [`Manifest::profiles`] entry: revocations taken, sent on and served
/// (`SPEC.md` §14).
pub const PROFILE_REVOCATIONS: &str = "revocations";
/// [`Manifest::profiles`] entry: proposals taken and answered, `POST
/// /ecp/proposals` and `GET /ecp/proposals/{id}` (`SPEC.md` §17).
pub const PROFILE_PROPOSALS: &str = "proposals";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_is_omitted_when_empty_and_read_when_present_or_null() {
        let plain = serde_json::to_value(Manifest::default()).unwrap();
        assert!(plain.get("auth").is_none(), "{plain}");
        let m = Manifest { auth: vec![AUTH_ECP_1_2.into(), AUTH_X_ECP_HMAC.into()], ..Manifest::default() };
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["auth"], serde_json::json!(["ecp-1.2", "x-ecp-hmac"]));
        assert_eq!(serde_json::from_value::<Manifest>(json).unwrap(), m);
        let null: Manifest = serde_json::from_str(r#"{"instance":"x","auth":null}"#).unwrap();
        assert!(null.auth.is_empty());
    }

    #[test]
    fn profiles_are_omitted_when_empty_and_read_when_present_or_null() {
        assert!(serde_json::to_value(Manifest::default()).unwrap().get("profiles").is_none());
        let m = Manifest { profiles: vec![PROFILE_ECP_1_3.into()], ..Manifest::default() };
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["profiles"], serde_json::json!(["ecp-1.3"]));
        assert_eq!(serde_json::from_value::<Manifest>(json).unwrap(), m);
        let null: Manifest = serde_json::from_str(r#"{"profiles":null}"#).unwrap();
        assert!(null.profiles.is_empty());
    }
}
