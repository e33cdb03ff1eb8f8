//! `companions`' gate before its `sudo` search (seed 33's draw): a local
//! run as root is judged only where its finding could be kept.
//! `engine::sorted` keeps the first of the most severe findings of a rule
//! on a line, so a High pushed beside a High or worse is dropped there and
//! the scan's report cannot show the gate; what the analyzer pushes can.

use super::*;
use crate::scan::engine::Body;

/// The severities `companions` pushes for `text`, every line read.
fn pushed(text: &str) -> Vec<Severity> {
    let body = Body::new(text);
    let lines: Vec<LineRef> =
        body.lines_from(LineRef { index: 0, start: 0, end: 0 }).map(|(l, _)| l).collect();
    let mut out = Vec::new();
    companions(&body, &lines, &mut out);
    out.iter().map(|f| f.severity).collect()
}

/// A `sudo ./tools/x` alone on its line is judged (High). Beside a script
/// run already pushed it is not: `sudo` on the line makes every run on it
/// privileged (High), so a second High there would be dropped. Without the
/// gate (`&&` → `||` at either of its two clauses) it is pushed again.
#[test]
fn a_local_run_as_root_is_judged_only_beside_no_finding_as_severe() {
    assert_eq!(pushed("Run `sudo ./tools/bootstrap` once.\n"), [Severity::High]);
    assert_eq!(pushed("Run `./tools/prep.sh` then `sudo ./tools/bootstrap`.\n"), [Severity::High]);
    // The run not pushed (its content shown in the body): the local run as
    // root is judged.
    let shown =
        "```bash\n# tools/prep.sh\necho ready\n```\nRun `./tools/prep.sh` then `sudo ./tools/bootstrap`.\n";
    assert_eq!(pushed(shown), [Severity::High]);
    assert_eq!(pushed(&shown.replace("sudo ./tools/bootstrap", "ls")), []);
    let report = crate::scan::Scanner::standard().scan(shown);
    let at: Vec<_> =
        report.findings.iter().filter(|f| f.rule_id == "trojan.companion-script").map(|f| f.line).collect();
    assert_eq!(at, [5], "{report:?}");
}
