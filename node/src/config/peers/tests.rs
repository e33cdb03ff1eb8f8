//! Unit tests of `peers.rs`.

use super::*;
use ecp_protocol::identity::NodeKey;

fn parse(text: &str) -> Result<PeersConfig, String> {
    PeersConfig::parse(text, "peers.toml").map_err(|e| e.to_string())
}

#[test]
fn an_empty_file_gives_the_defaults() {
    assert_eq!(parse("").unwrap(), PeersConfig::default());
}

#[test]
fn a_peer_defaults_to_trust_0_9_pull_without_push_on_the_federation_schedule() {
    let c = parse("[federation]\ninterval = \"5s\"\n\n[[peer]]\nurl = \"http://192.0.2.7:7327/\"\n").unwrap();
    let p = &c.peers[0];
    assert_eq!(p.url, "http://192.0.2.7:7327");
    assert_eq!((p.trust, p.pull, p.push), (0.9, true, false));
    assert_eq!((p.secret.as_ref(), p.schedule.as_ref(), p.instance.as_ref()), (None, None, None));
    assert_eq!((p.key.as_ref(), p.legacy), (None, false));
    assert_eq!(c.schedule_of(p), Schedule::Every(Duration::from_secs(5)));
    assert_eq!(c.federation.timeout, DEFAULT_TIMEOUT);
    assert_eq!(c.discovery, DiscoverySettings { enabled: true, trust: 0.6 });
}

#[test]
fn every_documented_key_is_accepted() {
    let c = parse(
        "[federation]\ncron = \"*/5 * * * *\"\ntimeout = \"2s\"\nreshare_external = false\n\
         [discovery]\nenabled = false\ntrust = 0.5\n\
         [[peer]]\nurl = \"https://a.example:7327\"\nsecret = \"s3cret\"\ntrust = 1.0\npull = false\n\
         push = true\ninterval = \"200ms\"\ninstance = \"ecp-a\"\nlegacy = true\n\
         [[peer]]\nurl = \"http://b.example\"\ncron = \"0 0 * * * *\"\n\
         key_id = \"a-b.2026\"\nkey_secret = \"per-peer\"\n",
    )
    .unwrap();
    assert_eq!(c.federation.schedule, Schedule::Cron("0 */5 * * * *".into()));
    assert_eq!((c.federation.timeout, c.federation.reshare_external), (Duration::from_secs(2), Some(false)));
    assert_eq!(c.discovery, DiscoverySettings { enabled: false, trust: 0.5 });
    let a = &c.peers[0];
    assert_eq!(a.secret.as_ref().map(Secret::expose), Some("s3cret"));
    assert_eq!((a.trust, a.pull, a.push, a.instance.as_deref()), (1.0, false, true, Some("ecp-a")));
    assert_eq!(a.schedule, Some(Schedule::Every(Duration::from_millis(200))));
    assert_eq!(c.peers[1].schedule, Some(Schedule::Cron("0 0 * * * *".into())));
    assert!(!format!("{a:?}").contains("s3cret"), "debug output hides the secret");
    assert!(a.legacy && !c.peers[1].legacy);
    let key = c.peers[1].key.as_ref().expect("the second peer has a key");
    assert_eq!((key.id.as_str(), key.secret.expose()), ("a-b.2026", "per-peer"));
    assert_eq!(key.signing_key(), SigningKey::new("a-b.2026", "per-peer").unwrap());
    assert!(!format!("{:?}", c.peers[1]).contains("per-peer"), "debug output hides the key");
}

#[test]
fn secrets_and_key_secrets_come_from_the_environment_and_never_show() {
    // Tests cannot set variables; PATH is set wherever tests run.
    let path = std::env::var("PATH").unwrap();
    let c = parse(
        "[[peer]]\nurl = \"http://a\"\nsecret_env = \"PATH\"\nkey_id = \"k\"\nkey_secret_env = \"PATH\"\n",
    )
    .unwrap();
    let p = &c.peers[0];
    assert_eq!(p.secret.as_ref().map(Secret::expose), Some(path.as_str()));
    assert_eq!(p.key.as_ref().map(|k| k.secret.expose()), Some(path.as_str()));
    let shown = format!("{c:?}");
    assert!(!shown.contains(&path) && shown.contains("***"), "{shown}");
    for (text, expected) in [
        ("[[peer]]\nurl = \"http://a\"\nsecret = \"\"\n", "peer[0].secret: is empty; remove it"),
        (
            "[[peer]]\nurl = \"http://a\"\nkey_id = \"k\"\nkey_secret = \"\"\n",
            "peer[0].key_secret: is empty; give the key's secret",
        ),
        (
            "[[peer]]\nurl = \"http://a\"\nkey_id = \"k\"\nkey_secret = \"x\"\nkey_secret_env = \"Y\"\n",
            "peer[0].key_secret: set either key_secret or key_secret_env, not both",
        ),
        (
            "[[peer]]\nurl = \"http://a\"\nsecret_env = \"ECP_TEST_SURELY_UNSET_VAR\"\n",
            "peer[0].secret_env: environment variable ECP_TEST_SURELY_UNSET_VAR is not set (or empty)",
        ),
    ] {
        let err = parse(text).unwrap_err();
        assert!(err.contains(expected), "{err}");
    }
}

#[test]
fn errors_name_the_key() {
    let cases = [
        ("[[peer]]\nurl = \"http://a\"\ntrust = 1.5\n", "peer[0].trust"),
        ("[[peer]]\nurl = \"http://a\"\n[[peer]]\nurl = \"ftp://b\"\n", "peer[1].url"),
        ("[[peer]]\nurl = \"http://a\"\n[[peer]]\nurl = \"http://a/\"\n", "peer[1].url"),
        ("[[peer]]\nurl = \"http://a\"\ninterval = \"soon\"\n", "peer[0].interval"),
        ("[[peer]]\nurl = \"http://a\"\ninterval = \"1s\"\ncron = \"* * * * *\"\n", "peer[0].cron"),
        ("[[peer]]\nurl = \"http://a\"\nsecret_env = \"ECP_TEST_SURELY_UNSET_VAR\"\n", "peer[0].secret_env"),
        ("[[peer]]\nurl = \"http://a\"\nsecret = \"x\"\nsecret_env = \"Y\"\n", "peer[0].secret"),
        ("[[peer]]\nurl = \"http://user:pw@a\"\n", "peer[0].url"),
        ("[[peer]]\nurl = \"http://a\"\nkey_secret = \"x\"\n", "peer[0].key_id"),
        ("[[peer]]\nurl = \"http://a\"\nkey_id = \"k\"\n", "peer[0].key_secret"),
        ("[[peer]]\nurl = \"http://a\"\nkey_id = \"k k\"\nkey_secret = \"x\"\n", "peer[0].key_id"),
        ("[[peer]]\nurl = \"http://a\"\nkey_id = \"default\"\nkey_secret = \"x\"\n", "peer[0].key_id"),
        (
            "[[peer]]\nurl = \"http://a\"\nkey_id = \"k\"\nkey_secret = \"x\"\nkey_secret_env = \"Y\"\n",
            "peer[0].key_secret",
        ),
        (
            "[[peer]]\nurl = \"http://a\"\nkey_id = \"k\"\nkey_secret_env = \"ECP_TEST_SURELY_UNSET_VAR\"\n",
            "peer[0].key_secret_env",
        ),
        (
            "[[peer]]\nurl = \"http://a\"\nkey_id = \"k\"\nkey_secret = \"x\"\n\
             [[peer]]\nurl = \"http://b\"\nkey_id = \"k\"\nkey_secret = \"y\"\n",
            "peer[1].key_id",
        ),
        ("[[peer]]\nurl = \"http://a\"\nlegacy = \"yes\"\n", "legacy"),
        ("[federation]\ntimeout = \"0s\"\n", "federation.timeout"),
        ("[federation]\ncron = \"every minute\"\n", "federation.cron"),
        ("[discovery]\ntrust = -1\n", "discovery.trust"),
        // Unknown keys and wrong types: the line is quoted, naming the key.
        ("[[peer]]\nurl = \"http://a\"\nintervall = \"1s\"\n", "intervall"),
        ("[[peer]]\nurl = \"http://a\"\npull = \"yes\"\n", "pull = \"yes\""),
        ("[federation]\nreshare = true\n", "reshare"),
        ("[[peer]]\ntrust = 0.7\n", "url"),
    ];
    for (text, key) in cases {
        let err = parse(text).expect_err(text);
        assert!(err.contains(key), "{text:?}: the error should name {key}: {err}");
    }
}

#[test]
fn the_example_file_parses_and_documents_every_key() {
    let text = include_str!("../../../../peers.toml");
    let c = parse(text).unwrap();
    assert_eq!(c.peers.len(), 2);
    assert_eq!((c.peers[0].trust, c.peers[0].pull, c.peers[0].push), (0.9, true, false));
    let keys = [
        "[federation]",
        "interval",
        "cron",
        "timeout",
        "reshare_external",
        "[discovery]",
        "enabled",
        "trust",
        "[[peer]]",
        "url",
        "secret",
        "secret_env",
        "key_id",
        "key_secret",
        "key_secret_env",
        "legacy",
        "pull",
        "push",
        "instance",
        "ca",
        "client_cert",
        "client_key",
        "key",
        "cert_fingerprint",
        "cert_key_fingerprint",
        "[origin_keys]",
    ];
    for key in keys {
        assert!(
            text.contains(&format!("\n{key}")) || text.contains(&format!("# {key} =")),
            "{key} undocumented"
        );
    }
}

#[test]
fn a_peer_is_known_by_its_key_id_or_public_key_and_certificate_fingerprints() {
    let key = ecp_protocol::identity::NodeKey::from_seed(&[3; 32]);
    let fp = "AB:".repeat(31) + "AB";
    let c = parse(&format!(
        "[[peer]]\nurl = \"http://a\"\nkey = \"{}\"\ncert_fingerprint = \"{fp}\"\n\
         [[peer]]\nurl = \"http://b\"\nkey = \"{}\"\ncert_key_fingerprint = \"sha256:{}\"\n\
         [[peer]]\nurl = \"http://c\"\n",
        key.key_id().to_lowercase().replace('-', ""),
        NodeKey::from_seed(&[4; 32]).public_hex().to_uppercase(),
        "cd".repeat(32),
    ))
    .unwrap();
    assert_eq!(c.peers[0].known_by.key_id.as_deref(), Some(key.key_id().as_str()), "a key id in any case");
    assert_eq!(c.peers[0].known_by.cert, Some([0xAB; 32]));
    assert_eq!(c.peers[1].known_by.key_id, Some(NodeKey::from_seed(&[4; 32]).key_id()), "a public key");
    assert_eq!(c.peers[1].known_by.cert_key, Some([0xCD; 32]));
    assert!(c.peers[0].known_by.any() && !c.peers[2].known_by.any());

    let id = key.key_id();
    let cases = [
        (format!("[[peer]]\nurl = \"http://a\"\nkey = \"{}\"\n", &id[..id.len() - 1]), "peer[0].key"),
        ("[[peer]]\nurl = \"http://a\"\nkey = \"secret\"\n".to_owned(), "neither a key id"),
        (
            format!("[[peer]]\nurl = \"http://a\"\ncert_fingerprint = \"{}\"\n", "ab".repeat(31)),
            "peer[0].cert_fingerprint",
        ),
        (
            format!("[[peer]]\nurl = \"http://a\"\ncert_key_fingerprint = \"{}\"\n", "ab".repeat(33)),
            "peer[0].cert_key_fingerprint",
        ),
        (
            format!(
                "[[peer]]\nurl = \"http://a\"\nkey = \"{id}\"\n[[peer]]\nurl = \"http://b\"\nkey = \"{id}\"\n"
            ),
            "peer[1].key: is already peer[0]'s",
        ),
        (
            format!(
                "[[peer]]\nurl = \"http://a\"\ncert_fingerprint = \"{fp}\"\n[[peer]]\nurl = \"http://b\"\ncert_fingerprint = \"{fp}\"\n"
            ),
            "peer[1].cert_fingerprint",
        ),
    ];
    for (text, says) in cases {
        let err = parse(&text).expect_err(&text);
        assert!(err.contains(says), "{text:?}: the error should say {says}: {err}");
    }
}

#[test]
fn a_bad_origin_keys_value_is_refused_with_the_origin_named() {
    let id = NodeKey::from_seed(&[3; 32]).key_id();
    let ok = parse(&format!("[origin_keys]\n\"alice-laptop\" = \"{}\"\n", id.to_lowercase())).unwrap();
    assert_eq!(ok.origin_keys, vec![("alice-laptop".to_owned(), id.clone())]);
    let mut typo = id.clone();
    typo.replace_range(0..1, if id.starts_with('A') { "B" } else { "A" });
    for (text, says) in [
        (format!("[origin_keys]\n\"alice-laptop\" = \"{typo}\"\n"), "origin_keys.alice-laptop"),
        ("[origin_keys]\n\"alice-laptop\" = \"not a key\"\n".to_owned(), "is not a key id"),
        ("[origin_keys]\n\"alice-laptop\" = 7\n".to_owned(), "line 2"),
        (format!("[origin_keys]\n\"\" = \"{id}\"\n"), "origin_keys."),
    ] {
        let err = parse(&text).expect_err(&text);
        assert!(err.contains(says), "{text:?}: the error should say {says}: {err}");
    }
}

#[test]
fn parse_errors_give_the_line() {
    let err =
        parse("[federation]\ninterval = \"1s\"\n\n[[peer]]\nurl = \"http://a\"\npush = 1\n").unwrap_err();
    assert!(err.contains("line 6"), "{err}");
}
