//! [`lead::starts_on_trigger_line`] for the standard rules, read from
//! `leads.txt` instead of worked out at every node's start.
//!
//! The analysis parses every rule's pattern and extracts its prefix
//! literals twice: about 120 M instructions, a quarter of building the
//! standard scanner, for an answer that changes only when a rule does. The
//! file keeps each rule's answer beside a fingerprint of everything the
//! analysis reads (its pattern, triggers and whether it is literal); a rule
//! whose fingerprint differs, or that the file does not name, is worked out
//! as before. So a changed rule is never read wrongly, only read slower,
//! until `leads.txt` is blessed again (the test below says how).

use std::sync::LazyLock;

use super::lead;
use crate::scan::rule::Rule;

/// `rule-id fingerprint 0|1` per line; `#` starts a comment.
const PINNED: &str = include_str!("leads.txt");

/// Whether every match of `rule` starts on a line holding one of its
/// triggers: the pinned answer when it is `rule`'s, else the analysis's.
pub(super) fn starts_on_trigger_line(rule: &Rule) -> bool {
    pinned(rule).unwrap_or_else(|| lead::starts_on_trigger_line(rule))
}

/// The answer `leads.txt` holds for `rule` as it is now, if any.
fn pinned(rule: &Rule) -> Option<bool> {
    // Read once: a scanner is built once per process, but of 100 rules.
    static LINES: LazyLock<Vec<(&str, u64, bool)>> = LazyLock::new(|| {
        PINNED
            .lines()
            .filter_map(|line| {
                let mut fields = line.split(' ');
                let (id, hex, leads) = (fields.next()?, fields.next()?, fields.next()?);
                let leads = match leads {
                    "1" => true,
                    "0" => false,
                    _ => return None,
                };
                Some((id, u64::from_str_radix(hex, 16).ok()?, leads))
            })
            .collect()
    });
    let print = fingerprint(rule);
    LINES.iter().find(|(id, p, _)| *id == rule.id && *p == print).map(|&(_, _, leads)| leads)
}

/// FNV-1a over what [`lead::starts_on_trigger_line`] reads of a rule, each
/// field ended by a byte no pattern or trigger holds.
fn fingerprint(rule: &Rule) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes.iter().chain([&0xff]) {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(&[u8::from(rule.literal)]);
    eat(rule.pattern.as_bytes());
    for t in rule.triggers {
        eat(t.as_bytes());
    }
    hash
}

/// `leads.txt` as the analysis writes it for `rules`.
#[cfg(test)]
fn render<'a>(rules: impl Iterator<Item = &'a Rule>) -> String {
    let mut out = String::from(
        "# Whether every match of a rule starts on a line holding one of its triggers\n\
         # (scan/engine/lead.rs), pinned: rule id, fingerprint, 1 or 0 (lead_pinned.rs).\n\
         # Written by `ECP_BLESS=1 cargo test -p ecp-protocol --lib lead_pinned`.\n",
    );
    for rule in rules {
        let leads = lead::starts_on_trigger_line(rule);
        out.push_str(&format!("{} {:016x} {}\n", rule.id, fingerprint(rule), u8::from(leads)));
    }
    out
}

#[cfg(test)]
#[path = "lead_pinned_tests.rs"]
mod tests;
