//! Unit tests of `sources.rs`.

use super::values::read_text;
use super::*;

#[test]
fn every_default_reads_as_its_kind() {
    for key in KEYS {
        if let Some(default) = key.default {
            read_text(key, default).unwrap_or_else(|e| panic!("{}: {e}", key.id()));
        }
    }
}

#[test]
fn a_flag_beats_the_environment_which_beats_the_file_which_beats_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(&file, "[limits]\nmax_packets = 7\nhistory_depth = 3\nclient_burst = 9\n").unwrap();
    let sources = Sources {
        file: Some(file),
        env: Env::from_pairs([("ECP_MAX_PACKETS", "8"), ("ECP_HISTORY_DEPTH", "4")]),
        flags: Flags::default().with("max-packets", "9"),
    };
    let r = Resolved::load(&sources).unwrap();
    let seen = |id: &str| (r.count(id), r.setting(id).source);
    assert_eq!(seen("limits.max_packets"), (9, Source::Flag("max-packets")));
    assert_eq!(seen("limits.history_depth"), (4, Source::Env("ECP_HISTORY_DEPTH")));
    assert_eq!(seen("limits.client_burst"), (9, Source::File));
    assert_eq!(seen("limits.client_rate_limit"), (600, Source::Default));
    assert_eq!(r.setting("secret").value, None);
}

#[test]
fn the_environment_reads_every_kind_and_an_empty_variable_is_unset() {
    let env = Env::from_pairs([
        ("ECP_POLICY_ALLOW_ORIGINS", " a, b ,,c"),
        ("ECP_POLICY_RESHARE_EXTERNAL", "no"),
        ("ECP_NO_MDNS", "1"),
        ("ECP_LIMITS_REQUEST_TIMEOUT", "2m"),
        ("ECP_POLICY_MIN_CONFIDENCE", "0.25"),
        ("ECP_SECRET", "hush"),
        ("ECP_LISTEN", ""),
    ]);
    let r = Resolved::load(&Sources { env, ..Sources::default() }).unwrap();
    assert_eq!(r.list("policy.allow_origins").unwrap(), ["a", "b", "c"]);
    assert!(!r.bool("policy.reshare_external"));
    assert!(!r.bool("mdns"), "ECP_NO_MDNS=1 turns mDNS off");
    assert_eq!(r.duration("limits.request_timeout"), Duration::from_secs(120));
    assert_eq!(r.share("policy.min_confidence"), 0.25);
    assert_eq!(r.secret("secret").map(Secret::expose), Some("hush"));
    assert_eq!(r.setting("listen").source, Source::Default);
    assert!(!format!("{r:?}").contains("hush"));
}

#[test]
fn bad_values_name_the_key_and_where_they_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    let load = |text: &str, env: Env, flags: Flags| {
        std::fs::write(&file, text).unwrap();
        Resolved::load(&Sources { file: Some(file.clone()), env, flags }).unwrap_err().to_string()
    };
    let none = || (Env::default(), Flags::default());
    let cases = [
        ("[limits]\nmax_packets = -1\n", none(), "limits.max_packets: -1 is below 0"),
        ("[limits]\nmax_packets = \"x\"\n", none(), "limits.max_packets: string is not a whole number"),
        ("[policy]\nmin_confidence = 1.5\n", none(), "policy.min_confidence:"),
        ("[policy]\nintake = \"later\"\n", none(), "policy.intake: \"later\" is not one of auto, review"),
        ("[limits]\nnope = 1\n", none(), "unknown key [limits] nope"),
        ("nope = 1\n", none(), "unknown key nope"),
        ("limits = 1\n", none(), "limits must be a table"),
        ("[[folder]]\nwhere = \"x\"\n", none(), "[[folder]]"),
        (
            "",
            (Env::from_pairs([("ECP_MAX_PACKETS", "many")]), Flags::default()),
            "(from env ECP_MAX_PACKETS)",
        ),
        (
            "",
            (Env::default(), Flags::default().with("listen", "nowhere")),
            "listen: \"nowhere\" is not an address",
        ),
        (
            "",
            (Env::default(), Flags::default().with("accept-legacy", "maybe")),
            "(from flag --accept-legacy)",
        ),
    ];
    for (text, (env, flags), expected) in cases {
        let err = load(text, env, flags);
        assert!(err.contains(expected), "{text:?}: {err}");
    }
}

#[test]
fn a_repeated_flag_gives_every_folder_and_every_name() {
    let flags = Flags::default()
        .with("skills-dir", "a")
        .with("skills-dir", "b")
        .with("name", "x.example,y.example")
        .with("name", "z.example")
        .with("no-mdns", "true");
    let r = Resolved::load(&Sources { flags, ..Sources::default() }).unwrap();
    assert_eq!(r.paths("skills_dir").unwrap(), [PathBuf::from("a"), PathBuf::from("b")]);
    assert_eq!(r.list("server.names").unwrap(), ["x.example", "y.example", "z.example"]);
    assert!(!r.bool("mdns"));
}
