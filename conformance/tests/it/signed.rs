//! The SIGN checks against [`Gate`]s: a correct one passes them all, and
//! the whole suite with a key passes against a node that requires ECP/1.2
//! signatures; each broken gate makes the matching SIGN IDs fail. Together
//! with `broken.rs` the cases prove that every check ID can fail.

use std::collections::BTreeSet;
use std::time::Duration;

use ecp_conformance::Settings;
use ecp_conformance::check::{Outcome, Profile};
use ecp_conformance::target::Key;

use crate::gate::{Gate, KEY_A, KEY_B, SignFaults};
use crate::real_node::unexpected_failures;
use crate::util::{SECRET, explain, failed, outcome, suite_with};

/// How the suite is run against a gate.
#[derive(Clone, Copy)]
struct Flags {
    /// `--key-id`/`--key-secret` for [`KEY_A`].
    key: bool,
    /// `--second-key-*` for [`KEY_B`].
    second_key: bool,
    /// `--secret`.
    secret: bool,
    /// `--no-legacy`.
    no_legacy: bool,
}

/// Every flag: all SIGN checks run.
const ALL: Flags = Flags { key: true, second_key: true, secret: true, no_legacy: true };

fn settings(url: String, flags: Flags, only: &[&str]) -> Settings {
    let mut s = Settings::new(url);
    s.profile = Profile::Ecp12;
    s.timeout = Duration::from_secs(20);
    s.secret = flags.secret.then(|| SECRET.to_owned());
    s.no_legacy = flags.no_legacy;
    for (wanted, (id, secret)) in [(flags.key, KEY_A), (flags.second_key, KEY_B)] {
        if wanted {
            s.keys.push(Key::new(id, secret).expect("a valid key id"));
        }
    }
    s.only = only.iter().map(|o| (*o).to_owned()).collect();
    s
}

/// One broken gate.
struct Case {
    name: &'static str,
    faults: SignFaults,
    /// Whether the gate lets X-ECP-HMAC through.
    accept_legacy: bool,
    flags: Flags,
    /// Checks that must fail.
    fail: &'static [&'static str],
}

const fn faults() -> SignFaults {
    SignFaults {
        no_clock: false,
        narrow_clock: false,
        no_replay_memory: false,
        nonce_without_key: false,
        unknown_keys_pass: false,
        open_without_signature: false,
        lax_form: false,
        no_signature_check: false,
        trims_body: false,
        query_optional: false,
        path_only: false,
        any_method: false,
        lowercase_method: false,
        empty_body_digest: false,
        signature_cache: false,
        every_key: false,
        legacy_wins: false,
        answers_403: false,
        unsigned_responses: false,
        unsigned_304: false,
        fresh_response_nonce: false,
        response_path_only: false,
        responds_with_first_key: false,
        any_authority: false,
        unbound_accepted: false,
    }
}

/// A case with the gate refusing legacy and every flag given.
const fn case(name: &'static str, faults: SignFaults, fail: &'static [&'static str]) -> Case {
    Case { name, faults, accept_legacy: false, flags: ALL, fail }
}

const CASES: &[Case] = &[
    case("ignores-the-clock", SignFaults { no_clock: true, ..faults() }, &["SIGN-011", "SIGN-012"]),
    case("a-60-s-window", SignFaults { narrow_clock: true, ..faults() }, &["SIGN-013"]),
    case("accepts-replays", SignFaults { no_replay_memory: true, ..faults() }, &["SIGN-019", "SIGN-020"]),
    case("nonces-remembered-without-key", SignFaults { nonce_without_key: true, ..faults() }, &["SIGN-025"]),
    case("accepts-unknown-keys", SignFaults { unknown_keys_pass: true, ..faults() }, &["SIGN-010"]),
    case(
        "open-without-a-full-signature",
        SignFaults { open_without_signature: true, ..faults() },
        &["SIGN-007", "SIGN-008"],
    ),
    case("lax-header-form", SignFaults { lax_form: true, ..faults() }, &["SIGN-009"]),
    case(
        "never-compares-the-signature",
        SignFaults { no_signature_check: true, ..faults() },
        &["SIGN-014", "SIGN-015", "SIGN-016", "SIGN-017", "SIGN-018", "SIGN-021", "SIGN-024"],
    ),
    case("hashes-the-trimmed-body", SignFaults { trims_body: true, ..faults() }, &["SIGN-015"]),
    case("query-optional", SignFaults { query_optional: true, ..faults() }, &["SIGN-016"]),
    case(
        "signs-the-path-only",
        SignFaults { path_only: true, ..faults() },
        &["SIGN-002", "SIGN-005", "SIGN-016"],
    ),
    case("any-method", SignFaults { any_method: true, ..faults() }, &["SIGN-017"]),
    case(
        "lowercase-method",
        SignFaults { lowercase_method: true, ..faults() },
        &["SIGN-001", "SIGN-002", "SIGN-003", "SIGN-004"],
    ),
    case("hashes-an-empty-body", SignFaults { empty_body_digest: true, ..faults() }, &["SIGN-003"]),
    case("caches-verified-signatures", SignFaults { signature_cache: true, ..faults() }, &["SIGN-018"]),
    case("tries-every-key", SignFaults { every_key: true, ..faults() }, &["SIGN-024"]),
    Case {
        name: "legacy-header-wins",
        faults: SignFaults { legacy_wins: true, ..faults() },
        accept_legacy: true,
        flags: Flags { no_legacy: false, ..ALL },
        fail: &["SIGN-021"],
    },
    Case {
        name: "still-accepts-legacy",
        faults: faults(),
        accept_legacy: true,
        flags: ALL,
        fail: &["SIGN-022"],
    },
    case(
        "answers-403",
        SignFaults { answers_403: true, ..faults() },
        &[
            "SIGN-008", "SIGN-009", "SIGN-010", "SIGN-011", "SIGN-012", "SIGN-014", "SIGN-015", "SIGN-016",
            "SIGN-017", "SIGN-018", "SIGN-019", "SIGN-020", "SIGN-022", "SIGN-024",
        ],
    ),
    case(
        "unsigned-responses",
        SignFaults { unsigned_responses: true, ..faults() },
        &["SIGN-004", "SIGN-005", "SIGN-006", "SIGN-023"],
    ),
    case(
        "response-nonce-not-echoed",
        SignFaults { fresh_response_nonce: true, ..faults() },
        &["SIGN-004", "SIGN-005", "SIGN-006", "SIGN-023"],
    ),
    case("unsigned-304", SignFaults { unsigned_304: true, ..faults() }, &["SIGN-006"]),
    case(
        "response-signed-without-the-query",
        SignFaults { response_path_only: true, ..faults() },
        &["SIGN-005"],
    ),
    case(
        "responds-with-the-first-key",
        SignFaults { responds_with_first_key: true, ..faults() },
        &["SIGN-023"],
    ),
    case("accepts-any-authority", SignFaults { any_authority: true, ..faults() }, &["SIGN-026"]),
    case("accepts-unbound-signatures", SignFaults { unbound_accepted: true, ..faults() }, &["SIGN-027"]),
];

/// Runs case `name`'s SIGN checks; its checks must fail.
async fn check_case(name: &str) {
    let case = CASES.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no case {name}"));
    let gate = Gate::start(case.faults, case.accept_legacy).await;
    let report = suite_with(settings(gate.url(), case.flags, &["SIGN"])).await;
    let failed = failed(&report);
    let missing: BTreeSet<&str> = case.fail.iter().copied().filter(|id| !failed.contains(id)).collect();
    assert!(
        missing.is_empty(),
        "{name}: these checks pass against the broken gate: {missing:?}\n{}",
        explain(&report, &missing)
    );
    for r in report.results.iter().filter(|r| case.fail.contains(&r.check.id)) {
        assert!(!r.reason.is_empty(), "{name}: {} fails without a reason", r.check.id);
    }
}

macro_rules! broken_gates {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread")]
            async fn $test() {
                check_case($name).await;
            }
        )*

        /// Every case in the table has a test above.
        pub(crate) const TESTED: &[&str] = &[$($name),*];
    };
}

broken_gates! {
    ignores_the_clock => "ignores-the-clock",
    a_60_s_window => "a-60-s-window",
    accepts_replays => "accepts-replays",
    nonces_remembered_without_key => "nonces-remembered-without-key",
    accepts_unknown_keys => "accepts-unknown-keys",
    open_without_a_full_signature => "open-without-a-full-signature",
    lax_header_form => "lax-header-form",
    never_compares_the_signature => "never-compares-the-signature",
    hashes_the_trimmed_body => "hashes-the-trimmed-body",
    query_optional => "query-optional",
    signs_the_path_only => "signs-the-path-only",
    any_method => "any-method",
    lowercase_method => "lowercase-method",
    hashes_an_empty_body => "hashes-an-empty-body",
    caches_verified_signatures => "caches-verified-signatures",
    tries_every_key => "tries-every-key",
    legacy_header_wins => "legacy-header-wins",
    still_accepts_legacy => "still-accepts-legacy",
    answers_403 => "answers-403",
    unsigned_responses => "unsigned-responses",
    response_nonce_not_echoed => "response-nonce-not-echoed",
    unsigned_304 => "unsigned-304",
    response_signed_without_the_query => "response-signed-without-the-query",
    responds_with_the_first_key => "responds-with-the-first-key",
    accepts_any_authority => "accepts-any-authority",
    accepts_unbound_signatures => "accepts-unbound-signatures",
}

/// The IDs some broken gate makes fail, for the every-ID test in `broken.rs`.
pub(crate) fn proven() -> BTreeSet<&'static str> {
    let untested: Vec<&str> = CASES.iter().map(|c| c.name).filter(|n| !TESTED.contains(n)).collect();
    assert!(untested.is_empty(), "gate cases without a test: {untested:?}");
    CASES.iter().flat_map(|c| c.fail.iter().copied()).collect()
}

/// A correct gate, with every flag given, passes every SIGN check: none is skipped.
#[tokio::test(flavor = "multi_thread")]
async fn a_correct_signing_node_passes_every_sign_check() {
    let gate = Gate::start(SignFaults::default(), false).await;
    let report = suite_with(settings(gate.url(), ALL, &["SIGN"])).await;
    assert!(report.results.len() >= 25);
    for r in &report.results {
        assert_eq!(
            r.outcome,
            Outcome::Pass,
            "{} {:?}: {}\n{}",
            r.check.id,
            r.outcome,
            r.reason,
            r.evidence.join("\n")
        );
    }
}

/// A node that requires ECP/1.2 and refuses X-ECP-HMAC: the whole suite
/// with one key passes (every request of the other areas is signed), AUTH
/// is skipped, the rotation checks are skipped without a second key.
#[tokio::test(flavor = "multi_thread")]
async fn the_whole_suite_with_a_key_passes_against_a_node_that_requires_signatures() {
    let gate = Gate::start(SignFaults::default(), false).await;
    let flags = Flags { key: true, second_key: false, secret: false, no_legacy: true };
    let report = suite_with(settings(gate.url(), flags, &[])).await;
    let bad = unexpected_failures(&report, true).await;
    assert!(bad.is_empty(), "{}", explain(&report, &bad));
    assert_eq!(outcome(&report, "AUTH-001"), Outcome::Skip);
    assert_eq!(outcome(&report, "SIGN-023"), Outcome::Skip);
    assert_eq!(outcome(&report, "SIGN-022"), Outcome::Pass);
    for area in ["MAN", "SKL", "PUSH", "SYNC", "ROB"] {
        assert!(
            report.results.iter().any(|r| r.check.area() == area && r.outcome == Outcome::Pass),
            "{area}"
        );
    }
}

/// A node that takes both: keys and the legacy secret. Both families pass.
#[tokio::test(flavor = "multi_thread")]
async fn keys_and_the_legacy_secret_together() {
    let gate = Gate::start(SignFaults::default(), true).await;
    let flags = Flags { key: true, second_key: true, secret: true, no_legacy: false };
    let report = suite_with(settings(gate.url(), flags, &[])).await;
    let bad = unexpected_failures(&report, true).await;
    assert!(bad.is_empty(), "{}", explain(&report, &bad));
    for id in ["AUTH-001", "AUTH-007", "AUTH-009", "SIGN-021", "SIGN-025"] {
        assert_eq!(outcome(&report, id), Outcome::Pass, "{id}");
    }
    assert_eq!(outcome(&report, "SIGN-022"), Outcome::Skip, "no --no-legacy");
    let _ = failed(&report);
}
