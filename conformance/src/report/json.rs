//! `--format json`: exactly one object, in the shape issue 6 fixes:
//! `{"target", "profile", "checks": [{"id", "title", "level", "spec",
//! "result", "reason"}…], "summary": {"pass", "fail", "skip"}}`.
//! `result` is `pass`, `fail` or `skip`; a check the suite could not run
//! (no connection, a timeout) is a `fail` whose reason starts `error: `.

use serde_json::Value;

use super::Report;
use crate::check::{Check, Outcome, Profile};

fn s(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// Renders `report` as one JSON object (keys in the documented order).
pub fn render(report: &Report) -> String {
    let checks: Vec<String> = report
        .results
        .iter()
        .map(|r| {
            let reason =
                if r.outcome == Outcome::Error { format!("error: {}", r.reason) } else { r.reason.clone() };
            format!(
                "    {{\"id\": {}, \"title\": {}, \"level\": {}, \"spec\": {}, \"result\": {}, \"reason\": {}}}",
                s(r.check.id),
                s(r.check.title),
                s(r.level.as_str()),
                s(r.check.spec),
                s(r.outcome.json_result()),
                s(&reason)
            )
        })
        .collect();
    let sum = report.summary();
    format!(
        "{{\n  \"target\": {},\n  \"profile\": {},\n  \"checks\": [\n{}\n  ],\n  \"summary\": {{\"pass\": {}, \"fail\": {}, \"skip\": {}}}\n}}\n",
        s(&report.target),
        s(report.profile.as_str()),
        checks.join(",\n"),
        sum.pass,
        sum.fail,
        sum.skip
    )
}

/// `--list --format json`: an array of the checks; `levelUnderEcp11` is
/// the level a check runs at under ecp-1.1 (`null`: skipped there).
pub fn list(checks: &[&Check]) -> String {
    let items: Vec<String> = checks
        .iter()
        .map(|c| {
            format!(
                "  {{\"id\": {}, \"title\": {}, \"level\": {}, \"profile\": {}, \"levelUnderEcp11\": {}, \"spec\": {}, \"requirement\": {}}}",
                s(c.id),
                s(c.title),
                s(c.level.as_str()),
                s(c.profile.as_str()),
                c.level_under(Profile::Ecp11).map_or("null".to_owned(), |l| s(l.as_str())),
                s(c.spec),
                s(c.requirement)
            )
        })
        .collect();
    format!("[\n{}\n]\n", items.join(",\n"))
}
