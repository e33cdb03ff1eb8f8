//! Unit tests of `resolve.rs`.

use super::*;
use crate::config::{Env, Flags};
use crate::deletion_guard::{DEFAULT_MAX_BULK_DELETE, DEFAULT_MAX_BULK_DELETE_FRACTION};
use crate::intake::{DEFAULT_SENDER_PER_DAY, DEFAULT_SENDER_PER_HOUR};
use crate::permissions::DEFAULT_PERMISSIONS_TRUST;
use crate::store::DEFAULT_HISTORY_DEPTH;

/// The configuration of `file` and `flags`, without the process's environment.
fn resolve(file: Option<&Path>, flags: Flags) -> Result<Config, ConfigError> {
    Config::resolve(&Sources { file: file.map(Path::to_path_buf), env: Env::default(), flags })
}

fn flag(long: &str, value: impl ToString) -> Flags {
    Flags::default().with(long, value.to_string())
}

/// The key table's defaults are the values the types they fill default to
/// elsewhere in the node, so a node built without a configuration (tests,
/// benches) behaves as a configured one.
#[test]
fn the_table_defaults_are_the_defaults_of_the_types_they_fill() {
    let c = resolve(None, Flags::default()).unwrap();
    let policy = StandardPolicy::default();
    assert_eq!(c.policy.structure.max_bytes, policy.structure.max_bytes);
    assert_eq!(c.policy.min_confidence, policy.min_confidence);
    assert_eq!(c.max_packets, policy.max_packets);
    assert_eq!(c.replay_cache_capacity, signed_auth::DEFAULT_NONCE_CAPACITY);
    assert_eq!(c.quarantine, QuarantineCaps::DEFAULT);
    assert_eq!(c.connections, ConnectionLimits::default());
    assert_eq!(c.origin_limits, OriginLimits::default());
    assert_eq!(
        c.sender_limits,
        OriginLimits { per_hour: DEFAULT_SENDER_PER_HOUR, per_day: DEFAULT_SENDER_PER_DAY }
    );
    assert_eq!(c.history_depth, DEFAULT_HISTORY_DEPTH);
    assert_eq!(
        c.deletion_guard,
        Guard { max: DEFAULT_MAX_BULK_DELETE, fraction: DEFAULT_MAX_BULK_DELETE_FRACTION }
    );
    assert_eq!(c.permissions.min_trust, DEFAULT_PERMISSIONS_TRUST);
    assert_eq!(c.default_trust, crate::config::DEFAULT_DISCOVERY_TRUST);
    assert_eq!(c.intake, IntakeMode::default());
    assert_eq!(c.permissions.mode, crate::permissions::ReceivedPermissions::default());
}

/// No configuration struct prints a secret: not the shared secret, not a
/// `[[key]]`'s, whether it came from the file, the environment or a flag.
#[test]
fn no_debug_output_prints_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(&file, "secret = \"file-secret-1\"\n[[key]]\nid = \"k1\"\nsecret = \"key-secret-2\"\n")
        .unwrap();
    for (env, flags) in [
        (Env::default(), Flags::default()),
        (Env::from_pairs([("ECP_SECRET", "env-secret-3")]), Flags::default()),
        (Env::default(), flag("secret", "flag-secret-4")),
    ] {
        let sources = Sources { file: Some(file.clone()), env, flags };
        let resolved = Resolved::load(&sources).unwrap();
        let config = Config::from_resolved(&resolved).unwrap();
        assert!(config.secret.is_some() && config.keys.len() == 1);
        let shown = format!("{sources:?}\n{sources:#?}\n{resolved:?}\n{config:?}\n{config:#?}");
        for secret in ["file-secret-1", "key-secret-2", "env-secret-3", "flag-secret-4"] {
            assert!(!shown.contains(secret), "{secret} printed");
        }
        assert!(shown.contains("k1") && shown.contains("***"), "the rest is printed");
    }
}

#[test]
fn debug_output_hides_the_secret() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Config::for_tests(dir.path());
    c.secret = Some(Secret::new("do-not-print-me"));
    let shown = format!("{c:?}");
    assert!(!shown.contains("do-not-print-me"), "{shown}");
    assert!(shown.contains("secret: Some(\"***\")") && shown.contains("max_packets"), "{shown}");
}

#[test]
fn server_names_are_lower_cased_checked_and_the_flag_wins() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(&file, "[server]\nnames = [\"ECP.example.org\", \"node-a:7327\", \"[::1]\", \" \"]\n")
        .unwrap();
    let c = resolve(Some(&file), Flags::default()).unwrap();
    assert_eq!(c.names, ["ecp.example.org", "node-a:7327", "[::1]"]);
    let over = flag("name", "b.example");
    assert_eq!(resolve(Some(&file), over).unwrap().names, ["b.example"]);
    assert!(resolve(None, Flags::default()).unwrap().names.is_empty());
    for bad in ["http://a.example", "a b", "a:99999999", "a/b"] {
        let over = flag("name", bad);
        let err = resolve(None, over).unwrap_err().to_string();
        assert!(err.starts_with("server.names:"), "{bad}: {err}");
    }
}

#[test]
fn trust_loopback_is_off_by_default_and_comes_from_the_file_or_the_flag() {
    assert!(!resolve(None, Flags::default()).unwrap().trust_loopback);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(&file, "[server]\ntrust_loopback = true\n").unwrap();
    assert!(resolve(Some(&file), Flags::default()).unwrap().trust_loopback);
    let over = flag("trust-loopback", false);
    assert!(!resolve(Some(&file), over).unwrap().trust_loopback, "the flag wins");
    let over = flag("trust-loopback", true);
    assert!(resolve(None, over).unwrap().trust_loopback);
}

#[test]
fn defaults_run_a_loopback_node_in_ecp_data() {
    let c = resolve(None, Flags::default()).unwrap();
    assert_eq!(c.listen.to_string(), "127.0.0.1:7327");
    assert_eq!(c.data_dir, PathBuf::from("./ecp-data"));
    assert_eq!(c.skills_dir, PathBuf::from("./ecp-data").join("skills"));
    assert!(c.secret.is_none());
    assert_eq!(c.max_body_bytes, 8 * 1024 * 1024);
}

#[test]
fn flags_override_the_file_which_overrides_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(
        &file,
        "listen = \"127.0.0.1:9000\"\nsecret = \"from-file\"\n[policy]\nmin_confidence = 0.7\n",
    )
    .unwrap();
    let c = resolve(Some(&file), flag("secret", "from-flag")).unwrap();
    assert_eq!(c.listen.port(), 9000);
    assert_eq!(c.secret.as_ref().map(Secret::expose), Some("from-flag"));
    assert_eq!(c.policy.min_confidence, 0.7);
}

#[test]
fn the_secret_comes_from_a_file_without_its_trailing_line_break_and_flags_win() {
    let dir = tempfile::tempdir().unwrap();
    let (file, held) = (dir.path().join("node.toml"), dir.path().join("secret"));
    std::fs::write(&held, "s3cr3t-from-a-file\r\n").unwrap();
    let toml = |key: &str| format!("{key} = \"{}\"\n", held.display());
    std::fs::write(&file, toml("secret_file")).unwrap();
    let secret = |over: Flags| resolve(Some(&file), over).unwrap().secret;
    assert_eq!(secret(Flags::default()).as_ref().map(Secret::expose), Some("s3cr3t-from-a-file"));
    std::fs::write(&held, "two lines\n\n").unwrap();
    assert_eq!(secret(Flags::default()).as_ref().map(Secret::expose), Some("two lines\n"), "one break only");
    let flag_file = dir.path().join("flag-secret");
    std::fs::write(&flag_file, "from-the-flag-file").unwrap();
    let over = flag("secret-file", flag_file.display());
    assert_eq!(secret(over).as_ref().map(Secret::expose), Some("from-the-flag-file"), "--secret-file wins");
    let over = flag("secret", "from-flag").with("secret-file", flag_file.display().to_string());
    assert_eq!(secret(over).as_ref().map(Secret::expose), Some("from-flag"), "--secret wins over both");
    std::fs::write(&held, "").unwrap();
    assert!(secret(Flags::default()).is_none(), "an empty file is no secret");
    std::fs::remove_file(&held).unwrap();
    let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
    assert!(err.starts_with("secret_file:") && err.contains("cannot read the secret"), "{err}");
    assert!(!err.contains("s3cr3t"), "{err}");
}

#[test]
fn the_secret_is_the_flag_else_secret_else_secret_env_and_empty_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    let resolve = |text: &str, secret: Option<&str>| {
        std::fs::write(&file, text).unwrap();
        let over = secret.map_or_else(Flags::default, |s| flag("secret", s));
        resolve(Some(&file), over).map(|c| c.secret)
    };
    // Tests cannot set variables; PATH is set wherever tests run.
    let path = Secret::new(std::env::var("PATH").unwrap());
    assert_eq!(resolve("secret_env = \"PATH\"\n", None).unwrap(), Some(path.clone()));
    assert_eq!(resolve("secret = \"s\"\nsecret_env = \"PATH\"\n", None).unwrap(), Some(Secret::new("s")));
    assert_eq!(resolve("secret = \"s\"\n", Some("f")).unwrap(), Some(Secret::new("f")));
    assert_eq!(resolve("secret = \"s\"\n", Some("")).unwrap(), None, "--secret \"\" turns it off");
    assert_eq!(resolve("secret = \"\"\n", None).unwrap(), None);
    let err = resolve("secret_env = \"ECP_TEST_SURELY_UNSET_VAR\"\n", Some("f")).unwrap_err().to_string();
    assert!(
        err.starts_with("secret_env: environment variable ECP_TEST_SURELY_UNSET_VAR is not set"),
        "{err}"
    );
    assert!(err.ends_with("node.toml, line 1, column 1)"), "the key's place in the file: {err}");
}

#[test]
fn durations_take_every_spelling_and_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(&file, "[limits]\nrequest_timeout = \"1m 30s\"\nheader_read_timeout = \"500ms\"\n")
        .unwrap();
    let c = resolve(Some(&file), Flags::default()).unwrap();
    assert_eq!(
        (c.request_timeout, c.header_read_timeout),
        (Duration::from_secs(90), Duration::from_millis(500))
    );
    let c = resolve(None, Flags::default()).unwrap();
    assert_eq!(
        (c.request_timeout, c.header_read_timeout),
        (Duration::from_secs(30), Duration::from_secs(10))
    );
    for (text, key) in [
        ("[limits]\nrequest_timeout = \"30\"\n", "limits.request_timeout: \"30\""),
        ("[limits]\nheader_read_timeout = \"0s\"\n", "limits.header_read_timeout: must be longer than zero"),
    ] {
        std::fs::write(&file, text).unwrap();
        let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
        assert!(err.starts_with(key), "{err}");
    }
}

#[test]
fn limits_resolve_flag_over_file_over_default_and_zero_is_off() {
    let c = resolve(None, Flags::default()).unwrap();
    assert_eq!(c.origin_limits, OriginLimits { per_hour: 1_000, per_day: 5_000 });
    assert_eq!(c.client_rate_limit, ClientRateLimit { per_minute: 600, burst: 120, loopback: false });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(
        &file,
        "[limits]\norigin_limit_hour = 10\norigin_limit_day = 0\nclient_rate_limit = 60\nclient_burst = 5\n\
         client_rate_limit_loopback = true\n",
    )
    .unwrap();
    let c = resolve(Some(&file), flag("origin-limit-hour", 20).with("client-burst", "7")).unwrap();
    assert_eq!(c.origin_limits, OriginLimits { per_hour: 20, per_day: 0 });
    assert_eq!(c.client_rate_limit, ClientRateLimit { per_minute: 60, burst: 7, loopback: true });
    let err = resolve(None, flag("client-burst", 0)).unwrap_err();
    assert!(err.to_string().contains("client_burst"), "{err}");
    let off = resolve(None, flag("client-rate-limit", 0).with("client-burst", "0")).unwrap();
    assert_eq!(off.client_rate_limit.per_minute, 0);
}

#[test]
fn sender_limits_and_quarantine_caps_resolve_flag_over_file_over_default() {
    let c = resolve(None, Flags::default()).unwrap();
    assert_eq!(c.sender_limits, OriginLimits { per_hour: 2_000, per_day: 10_000 });
    assert_eq!(c.quarantine, QuarantineCaps { entries: 10_000, bytes: 64 * 1024 * 1024, body: 256 * 1024 });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(
        &file,
        "[limits]\nsender_limit_hour = 0\nsender_limit_day = 7\nquarantine_entries = 5\nquarantine_bytes = 900\n\
         quarantine_body_bytes = 50\nhistory_depth = 0\n",
    )
    .unwrap();
    let over = flag("sender-limit-day", 8).with("quarantine-bytes", "1000");
    let c = resolve(Some(&file), over).unwrap();
    assert_eq!(c.merge_limits().sender, OriginLimits { per_hour: 0, per_day: 8 });
    assert_eq!(c.merge_limits().quarantine, QuarantineCaps { entries: 5, bytes: 1_000, body: 50 });
    assert_eq!((c.history_depth, c.merge_limits().history_depth), (0, 0));
    let err = resolve(None, flag("quarantine-entries", 0)).unwrap_err();
    assert!(err.to_string().contains("quarantine_entries"), "{err}");
}

#[test]
fn connection_limits_resolve_flag_over_file_over_default_and_zero_is_refused() {
    let c = resolve(None, Flags::default()).unwrap();
    assert_eq!(c.connections, ConnectionLimits { total: 1024, per_address: 64 });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(&file, "[limits]\nmax_connections = 10\nmax_connections_per_address = 2\n").unwrap();
    let c = resolve(Some(&file), Flags::default()).unwrap();
    assert_eq!(c.connections, ConnectionLimits { total: 10, per_address: 2 });
    let c = resolve(Some(&file), flag("max-connections-per-address", 1)).unwrap();
    assert_eq!(c.connections, ConnectionLimits { total: 10, per_address: 1 });
    for over in [flag("max-connections", 0), flag("max-connections-per-address", 0)] {
        let err = resolve(None, over).unwrap_err().to_string();
        assert!(err.contains("max_connections") && err.contains("at least 1"), "{err}");
    }
}

#[test]
fn the_body_budget_defaults_to_64_mib_and_holds_at_least_one_largest_body() {
    let c = resolve(None, Flags::default()).unwrap();
    assert_eq!(c.body_bytes_in_flight, 64 * 1024 * 1024);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(&file, "[limits]\nmax_body_bytes = 2048\nbody_bytes_in_flight = 2048\n").unwrap();
    let c = resolve(Some(&file), Flags::default()).unwrap();
    assert_eq!((c.max_body_bytes, c.body_bytes_in_flight), (2048, 2048), "exactly one largest body");
    let c = resolve(Some(&file), flag("body-bytes-in-flight", 4096));
    assert_eq!(c.unwrap().body_bytes_in_flight, 4096, "the flag wins");
    let over = flag("body-bytes-in-flight", 2047);
    let err = resolve(Some(&file), over).unwrap_err().to_string();
    assert!(err.contains("body_bytes_in_flight") && err.contains("2048"), "{err}");
    // A larger body limit alone raises the default budget with it.
    let over = flag("max-body-bytes", 100 * 1024 * 1024);
    assert_eq!(resolve(None, over).unwrap().body_bytes_in_flight, 100 * 1024 * 1024);
}

#[test]
fn tls_files_come_from_flags_over_the_tls_table_and_come_in_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(
        &file,
        "[tls]\ncert = \"file.pem\"\nkey = \"file.key\"\nclient_ca = \"ca.pem\"\n\
         client_cert = \"me.pem\"\nclient_key = \"me.key\"\n",
    )
    .unwrap();
    let c = resolve(Some(&file), flag("tls-cert", "flag.pem")).unwrap();
    assert_eq!(c.tls.cert, Some(PathBuf::from("flag.pem")));
    assert_eq!(c.tls.key, Some(PathBuf::from("file.key")));
    assert_eq!(c.tls.client_ca, Some(PathBuf::from("ca.pem")));
    assert_eq!(c.tls.client_cert, Some(PathBuf::from("me.pem")));
    assert!(c.tls.serves_tls());
    assert!(!resolve(None, Flags::default()).unwrap().tls.serves_tls());

    std::fs::write(&file, "[tls]\ncert = \"c.pem\"\n").unwrap();
    let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
    assert!(err.contains("--tls-key") && err.contains("[tls] key"), "{err}");
    std::fs::write(&file, "[tls]\ncertificate = \"c.pem\"\n").unwrap();
    let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
    assert!(err.contains("certificate"), "{err}");
}

#[test]
fn keys_and_accept_legacy_come_from_the_file_and_the_flag_wins() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(
        &file,
        "secret = \"mesh\"\naccept_legacy = false\nreplay_cache_capacity = 10\n\
         [[key]]\nid = \"k2026\"\nsecret = \"new\"\n[[key]]\nid = \"k2025\"\nsecret = \"old\"\n",
    )
    .unwrap();
    let c = resolve(Some(&file), Flags::default()).unwrap();
    assert!(!c.accept_legacy);
    assert_eq!(c.replay_cache_capacity, 10);
    let ids: Vec<String> = c.own_keys().iter().map(|k| k.id().to_owned()).collect();
    assert_eq!(ids, ["default", "k2026", "k2025"]);
    let c = resolve(Some(&file), flag("accept-legacy", true)).unwrap();
    assert!(c.accept_legacy);
    let d = resolve(None, Flags::default()).unwrap();
    assert!(d.accept_legacy && d.own_keys().is_empty(), "legacy accepted and no key by default");
    std::fs::write(&file, "[[key]]\nid = \"default\"\nsecret = \"x\"\n").unwrap();
    let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
    assert!(err.contains("key") && err.contains("another id"), "{err}");
}

#[test]
fn rejects_unknown_keys_and_bad_values_with_the_key_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(&file, "lsten = \"x\"\n").unwrap();
    let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
    assert!(err.contains("lsten"), "{err}");
    std::fs::write(&file, "[policy]\nmin_confidence = 3.0\n").unwrap();
    let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
    assert!(err.contains("policy.min_confidence"), "{err}");
    let err = resolve(None, flag("listen", "nowhere")).unwrap_err();
    assert!(err.to_string().contains("listen"));
}

#[test]
fn intake_is_auto_unless_the_file_or_the_flag_says_review_and_anything_else_is_named() {
    use crate::intake::IntakeMode;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    assert_eq!(resolve(None, Flags::default()).unwrap().intake, IntakeMode::Auto);
    std::fs::write(&file, "[policy]\nintake = \"review\"\n").unwrap();
    assert_eq!(resolve(Some(&file), Flags::default()).unwrap().intake, IntakeMode::Review);
    let over = flag("intake", "auto");
    assert_eq!(resolve(Some(&file), over).unwrap().intake, IntakeMode::Auto, "the flag wins");
    std::fs::write(&file, "[policy]\nintake = \"reveiw\"\n").unwrap();
    let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
    assert!(err.contains("reveiw") && err.contains("review"), "{err}");
    assert_eq!("review".parse::<IntakeMode>(), Ok(IntakeMode::Review));
    assert!("Review".parse::<IntakeMode>().unwrap_err().contains("\"auto\" or \"review\""));
}

#[test]
fn folders_and_sharing_come_from_the_file_and_skills_dir_flags_replace_the_folders() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(
        &file,
        "[sharing]\nmode = \"listed\"\nskills = [\"git-bisect\", \"deploy\"]\n\
         [[folder]]\npath = \"/agent/project\"\nshare = false\n\
         [[folder]]\npath = \"/agent/personal\"\n",
    )
    .unwrap();
    let c = resolve(Some(&file), Flags::default()).unwrap();
    assert_eq!(c.sharing.mode, Mode::Listed);
    assert_eq!(c.sharing.listed.iter().collect::<Vec<_>>(), ["deploy", "git-bisect"]);
    assert_eq!(
        c.sharing.folders,
        [
            Folder { path: "/agent/project".into(), share: false },
            Folder { path: "/agent/personal".into(), share: true }
        ]
    );
    // Received skills go into the first shared folder.
    assert_eq!(c.skills_dir, PathBuf::from("/agent/personal"));
    let over = flag("skills-dir", "/a").with("skills-dir", "/b").with("sharing-mode", "shared");
    let c = resolve(Some(&file), over).unwrap();
    assert_eq!(c.sharing.mode, Mode::Shared);
    assert!(c.sharing.folders.iter().all(|f| f.share));
    assert_eq!((c.skills_dir.as_path(), c.sharing.folders.len()), (Path::new("/a"), 2));
}

#[test]
fn a_node_whose_folders_are_all_private_projects_into_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(
        &file,
        "[[folder]]\npath = \"/p1\"\nshare = false\n[[folder]]\npath = \"/p2\"\nshare = false\n",
    )
    .unwrap();
    assert_eq!(resolve(Some(&file), Flags::default()).unwrap().skills_dir, PathBuf::from("/p1"));
}

#[test]
fn sharing_settings_that_cannot_work_are_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    for (toml, key, says) in [
        ("skills_dir = \"/a\"\n[[folder]]\npath = \"/b\"\n", "skills_dir:", "both skills_dir and [[folder]]"),
        ("[[folder]]\npath = \"/a\"\n[[folder]]\npath = \"/a\"\nshare = false\n", "folder:", "named twice"),
        ("[sharing]\nmode = \"some\"\n", "sharing.mode:", "not one of shared, listed"),
        ("[sharing]\nskills = [\"Not A Name\"]\n", "sharing.skills:", "not a skill name"),
    ] {
        std::fs::write(&file, toml).unwrap();
        let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
        assert!(err.starts_with(key) && err.contains(says), "{toml}: {err}");
    }
    std::fs::write(&file, "[[folder]]\npath = \"/a\"\nshared = true\n").unwrap();
    let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
    assert!(err.contains("unknown field `shared`"), "{err}");
    let over = flag("sharing-mode", "all");
    assert!(resolve(None, over).unwrap_err().to_string().starts_with("sharing.mode:"));
}

#[test]
fn received_permissions_come_from_the_file_or_the_flag_and_permission_keys_are_bounded() {
    use crate::permissions::{MAX_PERMISSION_KEYS, ReceivedPermissions};
    let c = resolve(None, Flags::default()).unwrap();
    assert_eq!(c.permissions.mode, ReceivedPermissions::Strip);
    assert!((c.permissions.min_trust - 0.9).abs() < f64::EPSILON && c.permissions.extra_keys.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    let write = |policy: &str| std::fs::write(&file, format!("[policy]\n{policy}\n")).unwrap();
    write(
        "received_permissions = \"refuse\"\npermission_keys = [\"model\", \"context_fork\"]\npermissions_trust = 1.0",
    );
    let c = resolve(Some(&file), Flags::default()).unwrap();
    assert_eq!(c.permissions.mode, ReceivedPermissions::Refuse);
    assert_eq!(c.permissions.extra_keys, ["model", "context_fork"]);
    assert!((c.permissions.min_trust - 1.0).abs() < f64::EPSILON);
    let over = flag("received-permissions", "keep-from-trusted");
    assert_eq!(resolve(Some(&file), over).unwrap().permissions.mode, ReceivedPermissions::KeepFromTrusted);
    let keys = |n: usize| (0..n).map(|i| format!("\"k{i}\"")).collect::<Vec<_>>().join(", ");
    write(&format!("permission_keys = [{}]", keys(MAX_PERMISSION_KEYS)));
    assert!(resolve(Some(&file), Flags::default()).is_ok(), "at the limit");
    write(&format!("permission_keys = [{}]", keys(MAX_PERMISSION_KEYS + 1)));
    let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
    assert!(err.starts_with("policy.permission_keys:") && err.contains("at most 64"), "{err}");
    let long = "k".repeat(64);
    write(&format!("permission_keys = [\"{long}\"]"));
    assert!(resolve(Some(&file), Flags::default()).is_ok(), "a 64-byte key");
    for bad in [format!("{long}k"), String::new(), "a b".into(), "a:b".into()] {
        write(&format!("permission_keys = [\"{bad}\"]"));
        let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
        assert!(err.starts_with("policy.permission_keys:"), "{bad:?}: {err}");
    }
    write("received_permissions = \"keep\"");
    assert!(resolve(Some(&file), Flags::default()).is_err());
    write("permissions_trust = 1.5");
    let err = resolve(Some(&file), Flags::default()).unwrap_err().to_string();
    assert!(err.starts_with("policy.permissions_trust"), "{err}");
}

#[test]
fn bulk_delete_limits_resolve_flag_over_file_over_default_and_the_share_stays_within_0_and_1() {
    let c = resolve(None, Flags::default()).unwrap();
    assert_eq!(c.deletion_guard, Guard { max: 5, fraction: 0.5 });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(&file, "[limits]\nmax_bulk_delete = 9\nmax_bulk_delete_fraction = 1.0\n").unwrap();
    let c = resolve(Some(&file), Flags::default()).unwrap();
    assert_eq!(c.deletion_guard, Guard { max: 9, fraction: 1.0 });
    let over = flag("max-bulk-delete", 0).with("max-bulk-delete-fraction", "0");
    let c = resolve(Some(&file), over).unwrap();
    assert_eq!(c.deletion_guard, Guard { max: 0, fraction: 0.0 });
    let over = flag("max-bulk-delete-fraction", 1.01);
    let err = resolve(None, over).unwrap_err();
    assert!(err.to_string().contains("max_bulk_delete_fraction"), "{err}");
}

/// Every range a key has, at its limit and one past it.
#[test]
fn every_bound_holds_at_its_limit_and_refuses_one_past_it() {
    let max_page = MAX_PAGE_BYTES.to_string();
    let past_page = (MAX_PAGE_BYTES + 1).to_string();
    let max_rate = u32::MAX.to_string();
    let past_rate = (u64::from(u32::MAX) + 1).to_string();
    for (long, at, past) in [
        ("max-body-bytes", "1024", "1023"),
        ("max-packets", "1", "0"),
        ("quarantine-entries", "1", "0"),
        ("quarantine-bytes", "1", "0"),
        ("max-connections", "1", "0"),
        ("max-connections-per-address", "1", "0"),
        ("client-rate-limit", max_rate.as_str(), past_rate.as_str()),
        ("max-bulk-delete-fraction", "1", "1.0001"),
    ] {
        assert!(resolve(None, flag(long, at)).is_ok(), "--{long} {at}");
        let err = resolve(None, flag(long, past)).unwrap_err().to_string();
        assert!(err.contains(&format!("(from flag --{long})")), "--{long} {past}: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    for (toml, ok) in [
        (format!("[limits]\npage_bytes = {max_page}\n"), true),
        (format!("[limits]\npage_bytes = {past_page}\n"), false),
        ("[limits]\npage_bytes = 1\n".to_owned(), true),
        ("[limits]\npage_bytes = 0\n".to_owned(), false),
        ("replay_cache_capacity = 1\n".to_owned(), true),
        ("replay_cache_capacity = 0\n".to_owned(), false),
        ("[limits]\nmax_skill_bytes = 1\n".to_owned(), true),
        ("[limits]\nmax_skill_bytes = 0\n".to_owned(), false),
    ] {
        std::fs::write(&file, &toml).unwrap();
        assert_eq!(resolve(Some(&file), Flags::default()).is_ok(), ok, "{toml}");
    }
}
