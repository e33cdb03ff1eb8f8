//! Unit tests of `sharing.rs`: each rule, their order, the override per
//! content, `.ecpignore` at its size limit, proven eligibility at its limits.

use ecp_protocol::packet::Origin;

use super::*;
use crate::store::now;

struct Fixture {
    tmp: tempfile::TempDir,
    store: Store,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("data")).unwrap();
    Fixture { tmp, store }
}

impl Fixture {
    fn folder(&self, name: &str) -> PathBuf {
        let path = self.tmp.path().join(name);
        std::fs::create_dir_all(&path).unwrap();
        path
    }

    fn sharing(&self, mode: Mode, listed: &[&str], folders: &[(&str, bool)]) -> Sharing {
        Sharing::new(Settings {
            mode,
            listed: listed.iter().map(|n| (*n).to_owned()).collect(),
            eligible: Eligible::Always,
            folders: folders
                .iter()
                .map(|(n, share)| Folder { path: self.folder(n), share: *share })
                .collect(),
        })
    }

    /// The decision's code for `packet` in folder 0.
    fn code(&self, sharing: &Sharing, packet: &SkillPacket) -> Option<String> {
        sharing.decider(&self.store).unwrap().decide(packet, Some(&at_0(packet))).private.map(|p| p.code)
    }
}

/// Where a skill of folder 0 in a folder of its own name lives.
fn at_0(packet: &SkillPacket) -> crate::import::Place {
    crate::import::Place { index: 0, entry: packet.skill_name.clone() }
}

fn packet(name: &str, extra_frontmatter: &str, body_line: &str) -> SkillPacket {
    let text =
        format!("---\nname: {name}\ndescription: d\n{extra_frontmatter}---\n# {name}\n\n{body_line}\n");
    SkillPacket::new(&Origin::new("me", "me", "linux/amd64", "1"), name, "d", &text, 0.8, now())
}

const TOKEN: &str = "token = ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R";

#[test]
fn each_rule_keeps_a_skill_home_and_the_first_that_matches_names_it() {
    let f = fixture();
    let shared = f.sharing(Mode::Shared, &[], &[("skills", true)]);
    assert_eq!(f.code(&shared, &packet("plain", "", "Steps.")), None);
    assert_eq!(f.code(&shared, &packet("plain", "shareable: true\n", "Steps.")), None);
    assert_eq!(
        f.code(&shared, &packet("fm", "shareable: false\n", "Steps.")).as_deref(),
        Some("frontmatter")
    );
    assert_eq!(f.code(&shared, &packet("key", "", TOKEN)).as_deref(), Some(SECRET_CODE));
    let listed = f.sharing(Mode::Listed, &["named"], &[("skills", true)]);
    assert_eq!(f.code(&listed, &packet("named", "", "Steps.")), None);
    assert_eq!(f.code(&listed, &packet("other", "", "Steps.")).as_deref(), Some("unlisted"));
    // Listed but holding a secret: still held.
    assert_eq!(f.code(&listed, &packet("named", "", TOKEN)).as_deref(), Some(SECRET_CODE));
    let private_folder = f.sharing(Mode::Shared, &[], &[("project", false)]);
    assert_eq!(f.code(&private_folder, &packet("plain", "", "Steps.")).as_deref(), Some("folder"));
    // The operator's mark comes first.
    f.store.set_sharing_mark("fm", &Mark { private: true, allow_secrets: None }).unwrap();
    assert_eq!(f.code(&shared, &packet("fm", "shareable: false\n", "Steps.")).as_deref(), Some("operator"));
}

#[test]
fn allow_secrets_covers_the_content_it_was_given_for_only() {
    let f = fixture();
    let sharing = f.sharing(Mode::Shared, &[], &[("skills", true)]);
    let first = packet("key", "", TOKEN);
    let decision = sharing.decider(&f.store).unwrap().decide(&first, Some(&at_0(&first)));
    assert_eq!(decision.secrets.len(), 1, "{decision:?}");
    assert_eq!(decision.secrets[0].line, 7);
    let reason = decision.private.unwrap().reason;
    assert!(reason.contains("line 7") && reason.contains("--allow-secrets"), "{reason}");
    assert!(!reason.contains("ghp_"), "the value is never named: {reason}");
    let mark = Mark { private: false, allow_secrets: Some(first.integrity_hash.clone()) };
    f.store.set_sharing_mark("key", &mark).unwrap();
    assert_eq!(f.code(&sharing, &first), None);
    let edited = packet("key", "", &format!("{TOKEN}\nmore = AKIAZ7QX3NP5RT2VW4YB"));
    assert_eq!(f.code(&sharing, &edited).as_deref(), Some(SECRET_CODE));
}

#[test]
fn a_secret_scan_that_panics_keeps_the_skill_home_until_the_operator_lets_it_go() {
    // The probe makes the scanner panic in debug builds (tests), never in a release.
    let f = fixture();
    let sharing = f.sharing(Mode::Shared, &[], &[("skills", true)]);
    let probed = packet("probed", "", ecp_protocol::scan::PANIC_PROBE);
    let decision = sharing.decider(&f.store).unwrap().decide(&probed, Some(&at_0(&probed)));
    let private = decision.private.expect("held home");
    assert_eq!(private.code, SCAN_FAILED_CODE);
    assert!(
        private.reason.contains("--allow-secrets") && !private.reason.contains("panic"),
        "{}",
        private.reason
    );
    // Remembered per content: the second decision reads the cache, and decides the same.
    assert_eq!(f.code(&sharing, &probed).as_deref(), Some(SCAN_FAILED_CODE));
    // A plain skill decided after it is not affected.
    assert_eq!(f.code(&sharing, &packet("plain", "", "Steps.")), None);
    let mark = Mark { private: false, allow_secrets: Some(probed.integrity_hash.clone()) };
    f.store.set_sharing_mark("probed", &mark).unwrap();
    assert_eq!(f.code(&sharing, &probed), None, "the operator's word for this content lets it go");
}

#[test]
fn ecpignore_matches_in_gitignore_syntax_up_to_its_size_limit() {
    let f = fixture();
    let sharing = f.sharing(Mode::Shared, &[], &[("skills", true)]);
    let ignore = f.folder("skills").join(IGNORE_FILE);
    std::fs::write(&ignore, "# comment\ndraft-*\n!draft-keep\nnotes/\n").unwrap();
    for (name, code) in
        [("draft-a", Some("ecpignore")), ("draft-keep", None), ("notes", Some("ecpignore")), ("x", None)]
    {
        assert_eq!(f.code(&sharing, &packet(name, "", "Steps.")).as_deref(), code, "{name}");
    }
    // At the limit it is read; one byte over, the folder stays private until it is fixed.
    let at_limit = format!("draft-*\n{}", "#".repeat(MAX_IGNORE_FILE_BYTES as usize - 8));
    assert_eq!(at_limit.len() as u64, MAX_IGNORE_FILE_BYTES);
    std::fs::write(&ignore, &at_limit).unwrap();
    assert_eq!(f.code(&sharing, &packet("x", "", "Steps.")), None);
    std::fs::write(&ignore, format!("{at_limit}#")).unwrap();
    let x = packet("x", "", "Steps.");
    let decision = sharing.decider(&f.store).unwrap().decide(&x, Some(&at_0(&x)));
    let private = decision.private.expect("over the limit: private");
    assert_eq!(private.code, "ecpignore");
    assert!(private.reason.contains("over the limit"), "{}", private.reason);
    // A folder the skill is not in does not apply its patterns.
    std::fs::write(&ignore, "*\n").unwrap();
    let none = sharing.decider(&f.store).unwrap().decide(&packet("x", "", "Steps."), None);
    assert_eq!(none.private, None);
}

/// Reports one outcome of `name` (retiring at `retire_after` uses, 0: never).
fn used(f: &Fixture, name: &str, outcome: crate::store::Outcome, retire_after: u64) {
    let report = crate::store::Report { outcome, note: String::new(), at: now().to_string(), id: None };
    let rule = crate::store::RetireRule { failure_rate: 0.5, min_uses: retire_after, window: 10 };
    f.store.record_outcome(name, &report, rule, 1000, 0).unwrap().unwrap();
}

#[test]
fn proven_eligibility_shares_at_the_streak_or_the_confidence_and_retirement_comes_first() {
    use crate::store::Outcome::{Failure, Success};
    let f = fixture();
    let base = f.sharing(Mode::Shared, &[], &[("skills", true)]).settings().clone();
    let settings =
        |streak, confidence| Settings { eligible: Eligible::Proven { streak, confidence }, ..base.clone() };
    let p = packet("p", "", "Steps.");
    f.store.put_local(&p, None, crate::store::Source::SkillsDir).unwrap();
    let sharing = Sharing::new(settings(3, 0.9));
    assert_eq!(f.code(&sharing, &p).as_deref(), Some(UNPROVEN_CODE));
    used(&f, "p", Success, 0);
    used(&f, "p", Success, 0);
    assert_eq!(f.code(&sharing, &p).as_deref(), Some(UNPROVEN_CODE), "two in a row: one short");
    used(&f, "p", Success, 0);
    assert_eq!(f.code(&sharing, &p), None, "three in a row");
    used(&f, "p", Failure, 0);
    assert_eq!(f.code(&sharing, &p).as_deref(), Some(UNPROVEN_CODE), "degraded");
    // At the confidence line exactly (whatever the streak), and just under it.
    let reached = crate::outcomes::confidence(0.8, &f.store.scores().unwrap()["p"]);
    assert_eq!(f.code(&Sharing::new(settings(99, reached)), &p), None);
    assert_eq!(f.code(&Sharing::new(settings(99, reached + 1e-9)), &p).as_deref(), Some(UNPROVEN_CODE));
    // Retired: kept home before any other rule, the operator's mark included.
    f.store.set_sharing_mark("p", &Mark { private: true, allow_secrets: None }).unwrap();
    used(&f, "p", Failure, 1);
    used(&f, "p", Failure, 1); // 3 of 6 failed: retired
    assert_eq!(f.code(&Sharing::new(settings(1, 0.0)), &p).as_deref(), Some(RETIRED_CODE));
}
