//! `--format junit`: JUnit XML for CI — one `<testsuite>` per area, one
//! `<testcase name="ID title">` per check; a failed check is a
//! `<failure type="MUST|SHOULD|MAY">` with the requirement and the
//! exchange, an Error is an `<error>`, a skip a `<skipped>` with its reason.

use std::fmt::Write;

use super::Report;
use crate::check::{CheckResult, Outcome};

/// `text` escaped for XML attribute and element content.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Renders `report` as JUnit XML.
pub fn render(report: &Report) -> String {
    let mut areas: Vec<&str> = Vec::new();
    for r in &report.results {
        if !areas.contains(&r.check.area()) {
            areas.push(r.check.area());
        }
    }
    let sum = report.summary();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"ecp-conformance {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
        esc(report.profile.as_str()),
        report.results.len(),
        sum.fail - sum.error,
        sum.error,
        sum.skip,
        report.duration.as_secs_f64()
    );
    for area in areas {
        let results: Vec<&CheckResult> = report.results.iter().filter(|r| r.check.area() == area).collect();
        let count = |o: Outcome| results.iter().filter(|r| r.outcome == o).count();
        let time: f64 = results.iter().map(|r| r.duration.as_secs_f64()).sum();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{area}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{time:.3}\">",
            results.len(),
            count(Outcome::Fail),
            count(Outcome::Error),
            count(Outcome::Skip)
        );
        for r in results {
            let c = r.check;
            let _ = write!(
                out,
                "    <testcase classname=\"ecp-conformance.{area}\" name=\"{} {}\" time=\"{:.3}\"",
                esc(c.id),
                esc(c.title),
                r.duration.as_secs_f64()
            );
            let detail = || {
                let mut d = format!(
                    "{} {} {}\nrequirement: {}\nreason: {}",
                    r.level.as_str(),
                    c.promise(report.profile),
                    c.spec,
                    c.requirement,
                    r.reason
                );
                for line in &r.evidence {
                    d.push('\n');
                    d.push_str(line);
                }
                esc(&d)
            };
            match r.outcome {
                Outcome::Pass => out.push_str("/>\n"),
                Outcome::Skip => {
                    let _ =
                        write!(out, ">\n      <skipped message=\"{}\"/>\n    </testcase>\n", esc(&r.reason));
                }
                Outcome::Fail => {
                    let _ = write!(
                        out,
                        ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                        r.level.as_str(),
                        esc(&r.reason),
                        detail()
                    );
                }
                Outcome::Error => {
                    let _ = write!(
                        out,
                        ">\n      <error type=\"{}\" message=\"{}\">{}</error>\n    </testcase>\n",
                        r.level.as_str(),
                        esc(&r.reason),
                        detail()
                    );
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}
