//! Bodies built to make the companion analysis slow: one file run on
//! every line, or thousands of times on one line. Before `Shown` and
//! `LineGrade`, 64 KiB of them took 6 s (one run a line) and 20 s (one
//! line) in a release build (and about as many minutes here in a debug one,
//! by the debug build's usual slowdown: not run, as nobody waits for it).

use super::grade::LineGrade;
use super::shown::Shown;
use super::*;
use crate::scan::Scanner;
use crate::scan::engine::Body;

fn companion_findings(body: &str) -> Vec<Finding> {
    Scanner::standard()
        .scan(body)
        .findings
        .into_iter()
        .filter(|f| f.rule_id == "trojan.companion-script")
        .collect()
}

/// Every line of this body runs the same unseen script.
#[test]
fn one_script_run_on_thousands_of_lines_is_found_on_each() {
    let body = "chmod +x a.sh && ./a.sh\n".repeat(4000);
    let found = companion_findings(&body);
    assert_eq!(found.len(), 4000);
    assert!(found.iter().all(|f| f.severity == Severity::Medium));
}

/// One line of thousands of runs: one finding, its first run's, raised by
/// flags written only after the last run.
#[test]
fn thousands_of_runs_on_one_line_make_one_finding() {
    let line = "chmod +x a.sh && ./a.sh ".repeat(4000);
    let found = companion_findings(&line);
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].line, found[0].severity), (1, Severity::Medium));
    let flagged = format!("{line}--yes");
    let found = companion_findings(&flagged);
    assert_eq!((found.len(), found[0].severity), (1, Severity::High));
}

/// The file shown once at the top shows it to every run below.
#[test]
fn a_script_shown_once_is_shown_to_thousands_of_runs() {
    let body = format!("```bash\n# a.sh\necho hi\n```\n{}", "bash ./a.sh\n".repeat(4000));
    assert!(companion_findings(&body).is_empty());
    let line = format!("```bash\n# a.sh\necho hi\n```\n{}\n", "bash ./a.sh ".repeat(4000));
    assert!(companion_findings(&line).is_empty());
}

/// The search `Shown` replaced, run afresh for every run: the oracle.
fn shown_afresh(body: &Body<'_>, run: LineRef, path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let (text, b) = (body.text, body.text.as_bytes());
    memchr::memmem::find_iter(b, name.as_bytes()).any(|at| {
        let start = memchr::memrchr(b'\n', &b[..at]).map_or(0, |i| i + 1);
        if start == run.start {
            return false;
        }
        let end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |i| at + i);
        let line = text[start..end].trim_end_matches('\r');
        let before = &text[start..at];
        let previous = (start > 0).then(|| {
            let from = memchr::memrchr(b'\n', &b[..start - 1]).map_or(0, |i| i + 1);
            &text[from..start - 1]
        });
        // A line inside a block: an odd number of fences above it.
        let inside = text[..start].split('\n').filter(|l| is_fence(l)).count() % 2 == 1;
        let titled = {
            let t = line.trim_start();
            ["#", "//", "--", ";", "<!--", "rem ", "REM ", "'"].iter().any(|c| t.starts_with(c))
                || !t.trim_end().trim_end_matches(':').contains(char::is_whitespace)
        };
        let word = |w: &str| {
            let l = line.to_ascii_lowercase();
            l.match_indices(w).any(|(i, _)| i == 0 || !l.as_bytes()[i - 1].is_ascii_alphanumeric())
        };
        let below = (!inside).then(|| text.get(end + 1..)).flatten().and_then(|rest| {
            let mut at = end + 1;
            for l in rest.split('\n').take(2) {
                if is_fence(l) {
                    return Some(at);
                }
                at += l.len() + 1;
            }
            None
        });
        is_fence(line)
            || previous.is_some_and(is_fence) && titled
            || line.contains("<<")
            || has_url(line)
            || before.contains('>')
            || before.contains("tee ")
            || word("create")
            || word("write")
            || below.is_some_and(|open| {
                !(open < run.start
                    && run.start - open <= 4096
                    && !text[open..run.start].split('\n').skip(1).any(is_fence))
            })
    })
}

/// Lines mixed in a fixed pseudo-random order: each run's answer is the
/// oracle's.
#[test]
fn shown_answers_as_a_fresh_search_does() {
    let pieces = [
        "./a.sh\n",
        "./a.sh x ./a.sh\n",
        "see a.sh\n",
        "```bash\n",
        "```\n",
        "echo x > a.sh && ./a.sh\n",
        "cat a.sh | tee a.sh\n",
        "create a.sh with\n",
        "\n",
        "text\n",
        "https://x.example/a.sh\n",
        "./b.sh a.sh\n",
        "a.sh\r\n",
    ];
    let mut x: u32 = 7;
    for round in 0..40 {
        let mut text = String::new();
        for _ in 0..30 + round {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            text.push_str(pieces[(x >> 16) as usize % pieces.len()]);
        }
        let body = Body::new(&text);
        let mut seen = Shown::new(&text);
        for (r, line) in body.lines_from(LineRef { index: 0, start: 0, end: 0 }) {
            for (path, _) in runs(line) {
                assert_eq!(seen.shown(r, path), shown_afresh(&body, r, path), "{path} on {r:?} of {text:?}");
            }
        }
    }
}

/// A block holding the run is told apart up to `MAX_BLOCK_BYTES` from its
/// fence: at the limit the block below the naming holds the run (not
/// shown), one byte past it does not (shown).
#[test]
fn a_block_holds_a_run_up_to_its_bound() {
    for (pad, shown) in [(4096, false), (4097, true)] {
        // "see a.sh\n" then the fence at byte 9; the run's line starts
        // `pad` bytes after the fence's start.
        let filler = "x".repeat(pad - "```bash\n".len() - 1);
        let text = format!("see a.sh\n```bash\n{filler}\n./a.sh\n```\n");
        let body = Body::new(&text);
        let run = body.lines_from(LineRef { index: 0, start: 0, end: 0 }).nth(3).expect("the run").0;
        assert_eq!(run.start - 9, pad);
        assert_eq!(Shown::new(&text).shown(run, "./a.sh"), shown, "{pad}");
        assert_eq!(shown_afresh(&body, run, "./a.sh"), shown, "{pad}");
    }
}

/// Flags found once stand for every run before them; their absence for
/// every run after: each answer is a fresh search's, in any order.
#[test]
fn flags_after_answers_as_a_fresh_search_does() {
    let line = "./a.sh x ./b.sh --yes ./c.sh -q ./d.sh ./e.sh";
    let fresh = |at: usize| UNATTENDED.is_match(&line.as_bytes()[at..]);
    let ats: Vec<usize> = (0..=line.len()).collect();
    for order in [ats.clone(), ats.iter().rev().copied().collect(), ats.iter().step_by(3).copied().collect()]
    {
        let mut grade = LineGrade::default();
        for &at in &order {
            assert_eq!(grade.flags_after(line, at), fresh(at), "at {at}");
        }
    }
}
