//! The `ecp-conformance` binary: exit codes (0, 1, 2), `--list`, the JSON
//! report's exact shape, JUnit, `--strict`, and what `--help` promises.

use std::process::{Command, Output};

use serde_json::Value;

use crate::gate::{Gate, KEY_A, KEY_B, SignFaults};
use crate::util::{Faults, Proxy, TestNode};

async fn conformance(args: &[&str]) -> Output {
    conformance_env(args, &[]).await
}

/// The binary with `args`, the key secrets' variables cleared and then `env` set.
async fn conformance_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_ecp-conformance"))
            .args(&args)
            .env_remove("ECP_CONFORMANCE_KEY_SECRET")
            .env_remove("ECP_CONFORMANCE_SECOND_KEY_SECRET")
            .envs(env)
            .output()
            .expect("the binary runs")
    })
    .await
    .expect("a blocking task")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn list_prints_every_check_without_a_target() {
    let text = conformance(&["--list"]).await;
    assert_eq!(text.status.code(), Some(0));
    let ids = stdout(&text).lines().filter(|l| l.contains("-0")).count();
    assert!(ids >= 50, "{}", stdout(&text));
    let json = conformance(&["--list", "--format", "json", "--only", "AUTH"]).await;
    let list: Value = serde_json::from_slice(&json.stdout).expect("a JSON array");
    let list = list.as_array().unwrap();
    assert!(!list.is_empty() && list.iter().all(|c| c["id"].as_str().unwrap().starts_with("AUTH-")));
}

#[tokio::test(flavor = "multi_thread")]
async fn help_says_what_the_suite_writes_and_the_exit_codes() {
    let help = conformance(&["--help"]).await;
    assert_eq!(help.status.code(), Some(0));
    let text = stdout(&help);
    for needle in [
        "ecpconf-",
        "--target",
        "--secret",
        "--profile",
        "--format",
        "--only",
        "--list",
        "--timeout",
        "--strict",
        "--key-id",
        "--key-secret",
        "ECP_CONFORMANCE_KEY_SECRET",
        "--second-key-id",
        "--no-legacy",
        "--no-cleanup",
        "SIGN",
        "Exit codes",
    ] {
        assert!(text.contains(needle), "--help lacks {needle:?}:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["--target", "not a url"],
        &["--target", "http://127.0.0.1:1", "--only", "NOPE-999"],
        &["--target", "http://127.0.0.1:1", "--profile", "ecp-9"],
        &["--target", "http://127.0.0.1:1", "--key-id", "k"],
        &["--target", "http://127.0.0.1:1", "--key-id", "bad key", "--key-secret", "s"],
        &["--target", "http://127.0.0.1:1", "--no-legacy"],
        &["--target", "http://127.0.0.1:1", "--second-key-id", "b", "--second-key-secret", "s"],
        &[
            "--target",
            "http://127.0.0.1:1",
            "--key-id",
            "a",
            "--key-secret",
            "s",
            "--second-key-id",
            "a",
            "--second-key-secret",
            "t",
        ],
    ] {
        let out = conformance(args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_target_that_does_not_answer_exits_2() {
    // Nothing listens on the discard port (a port freed here might be taken by another test).
    let out = conformance(&["--target", "http://127.0.0.1:9", "--timeout", "2s"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("does not answer"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_that_requires_authentication_run_without_credentials_exits_2_saying_so_once() {
    let node = TestNode::with_secret().await;
    let out = conformance(&["--target", &node.url()]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let said = "this node requires authentication: pass --secret or --key-id/--key-secret";
    assert_eq!(stderr.matches(said).count(), 1, "{stderr}");
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_passing_run_exits_0_with_the_json_report_in_its_documented_shape() {
    let node = TestNode::start().await;
    let out = conformance(&[
        "--target",
        &node.url(),
        "--profile",
        "ecp-1.2",
        "--format",
        "json",
        "--only",
        "MAN",
        "SKL",
        "SYNC,HTTP",
    ])
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let keys: Vec<&str> = report.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 4, "{keys:?}");
    assert_eq!(report["target"], node.url());
    assert_eq!(report["profile"], "ecp-1.2");
    let checks = report["checks"].as_array().unwrap();
    assert!(checks.len() >= 30);
    for c in checks {
        let mut keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["id", "level", "reason", "result", "spec", "title"], "{c}");
        assert!(["pass", "fail", "skip"].contains(&c["result"].as_str().unwrap()), "{c}");
        assert!(["MUST", "SHOULD", "MAY"].contains(&c["level"].as_str().unwrap()), "{c}");
    }
    let sum = &report["summary"];
    let counted = |r: &str| checks.iter().filter(|c| c["result"] == r).count() as u64;
    assert_eq!(
        (sum["pass"].as_u64(), sum["fail"].as_u64(), sum["skip"].as_u64()),
        (Some(counted("pass")), Some(counted("fail")), Some(counted("skip")))
    );
    assert_eq!(sum["fail"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_must_exits_1_and_the_text_report_shows_the_exchange() {
    let proxy =
        Proxy::start(Faults { manifest: Some(|m| m["skillCount"] = 99.into()), ..Default::default() }, false)
            .await;
    let out = conformance(&["--target", &proxy.url(), "--only", "MAN-003"]).await;
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    for needle in
        ["MAN-003", "FAIL", "Failures", "requirement:", "> GET /ecp/manifest", "< 200", "1 failed", "exit 1"]
    {
        assert!(text.contains(needle), "the report lacks {needle:?}:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_should_exits_0_unless_strict() {
    let proxy = Proxy::start(Faults { text_content_type: true, ..Default::default() }, false).await;
    let lax = conformance(&["--target", &proxy.url(), "--only", "HTTP-001"]).await;
    assert_eq!(lax.status.code(), Some(0), "{}", stdout(&lax));
    assert!(stdout(&lax).contains("! warn"), "{}", stdout(&lax));
    let strict = conformance(&["--target", &proxy.url(), "--only", "HTTP-001", "--strict"]).await;
    assert_eq!(strict.status.code(), Some(1), "{}", stdout(&strict));
}

#[tokio::test(flavor = "multi_thread")]
async fn junit_has_one_testsuite_per_area_and_a_failure_per_failed_check() {
    let proxy =
        Proxy::start(Faults { manifest: Some(|m| m["version"] = "2.0".into()), ..Default::default() }, false)
            .await;
    let out = conformance(&["--target", &proxy.url(), "--format", "junit", "--only", "MAN", "SKL-001"]).await;
    assert_eq!(out.status.code(), Some(0), "MAN-007 is a SHOULD");
    let xml = stdout(&out);
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert_eq!(xml.matches("<testsuite ").count(), 2, "{xml}");
    assert!(xml.contains("name=\"MAN-007 Manifest version\""), "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 1, "{xml}");
    assert!(xml.contains("type=\"SHOULD\""), "{xml}");
}

/// Key secrets come from the environment as well as the command line; a
/// secret never appears in the report.
#[tokio::test(flavor = "multi_thread")]
async fn key_secrets_from_the_environment_sign_the_sign_checks() {
    let gate = Gate::start(SignFaults::default(), false).await;
    let out = conformance_env(
        &[
            "--target",
            &gate.url(),
            "--profile",
            "ecp-1.2",
            "--format",
            "json",
            "--no-legacy",
            "--key-id",
            KEY_A.0,
            "--second-key-id",
            KEY_B.0,
            "--only",
            "SIGN-001,SIGN-004,SIGN-022,SIGN-023,MAN-001",
        ],
        &[("ECP_CONFORMANCE_KEY_SECRET", KEY_A.1), ("ECP_CONFORMANCE_SECOND_KEY_SECRET", KEY_B.1)],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(report["summary"]["pass"], 5, "{report}");
    assert!(!stdout(&out).contains(KEY_A.1) && !stdout(&out).contains(KEY_B.1));

    // Without a key the SIGN checks are skipped, not passed.
    let out =
        conformance(&["--target", &gate.url(), "--profile", "ecp-1.2", "--format", "json", "--only", "SIGN"])
            .await;
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(report["summary"]["pass"], 0, "{report}");
    let checks = report["checks"].as_array().unwrap();
    assert!(
        checks.iter().all(|c| c["result"] == "skip" && c["reason"].as_str().unwrap().contains("--key-id"))
    );
}

/// `--no-cleanup` keeps what the run pushed; without it the text report
/// ends with the Cleanup section, and with `--format json` the cleanup is
/// told on stderr, the JSON on stdout unchanged.
#[tokio::test(flavor = "multi_thread")]
async fn no_cleanup_keeps_the_pushed_skill_and_cleanup_is_told_on_stderr_with_json() {
    let node = TestNode::start().await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let names = || async {
        let answer = client.get(format!("{}/ecp/manifest", node.url())).send().await.unwrap();
        let m: Value = answer.json().await.unwrap();
        m["skillNames"].as_array().unwrap().len()
    };
    let kept = conformance(&["--target", &node.url(), "--only", "PUSH-001", "--no-cleanup"]).await;
    assert_eq!(kept.status.code(), Some(0), "{}", stdout(&kept));
    assert!(!stdout(&kept).contains("\nCleanup\n"), "{}", stdout(&kept));
    assert_eq!(names().await, 1, "--no-cleanup kept the pushed skill");

    let cleaned = conformance(&["--target", &node.url(), "--only", "PUSH-001"]).await;
    assert_eq!(cleaned.status.code(), Some(0), "{}", stdout(&cleaned));
    assert!(
        stdout(&cleaned).contains("\nCleanup\n  withdrawn by tombstone: 1 skill(s)"),
        "{}",
        stdout(&cleaned)
    );
    assert_eq!(names().await, 1, "only this run's skill was withdrawn, the other run's stays");

    let json = conformance(&["--target", &node.url(), "--only", "PUSH-001", "--format", "json"]).await;
    let report: Value = serde_json::from_slice(&json.stdout).expect("stdout is the JSON report alone");
    assert_eq!(report.as_object().unwrap().len(), 4);
    let stderr = String::from_utf8_lossy(&json.stderr);
    assert!(stderr.contains("withdrawn by tombstone: 1 skill(s)"), "{stderr}");
    assert_eq!(names().await, 1);
}
