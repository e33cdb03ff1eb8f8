//! What refuses, decided from measured precision rather than from each
//! rule's own severity: the noisy rules that refuse only beside a second,
//! independent signal, and the pairs of `Medium` signals that refuse
//! together.
//!
//! A rule's severity says how bad its match is when the match means what
//! the rule thinks; on real skills some rules are wrong often enough that
//! they refuse as many benign skills as malicious ones when they are the
//! only reason to refuse (`examples/rule_precision.rs` measures it per
//! rule and per writer). Such a rule's finding ([`NEEDS_SECOND`]) at
//! `High` or worse keeps its severity beside a finding of another family
//! (category) at `Medium` or worse, and is lowered to [`LOWERED_TO`]
//! otherwise, its message saying what it would need; the classifier may
//! still corroborate it (`corroborate`), and the refusal then names it. Two
//! `Medium` findings of a precise pair of families ([`PAIRS`]) refuse
//! together: one `policy.two-signals` finding at [`PAIR_SEVERITY`] names
//! both, on the first one's line. A credential written into the skill
//! (`secret`), a broad grant and the classifier's own findings are never a
//! signal here: they say nothing of what the skill asks.
//!
//! A node's threshold still means what it says: a lowered finding refuses
//! at a `Medium` threshold, a pair's finding does not at `Critical`. The
//! classifier's score is taken before the policy (the model reads the
//! rules' findings as the rules made them: `Scanner::scan_unrefined`), the
//! corroboration after it.
//!
//! # How the lists were chosen (2026-11-27, session 26)
//!
//! `cargo run -p ecp-protocol --example rule_precision` reads what a rule
//! writer may open (the TRAIN malicious skills, `x-*`, `older`, the TRAIN
//! half of the benign skills: 2,105 skills) and prints per rule the skills
//! it refuses and those it alone refuses, per writer. Its head, as found
//! (`b` benign, `m` malicious, refused / alone refused; the five
//! independent writers' benign sole refusals in brackets):
//!
//! | rule | b | m | writers' b alone |
//! |---|---|---|---|
//! | `control.hooks-off` | 6/6 | 17/6 | 5 (four writers) |
//! | `exec.pipe-to-shell` | 3/2 | 67/37 | 2 |
//! | `cred.secret-file` | 2/2 | 94/18 | 2 |
//! | `exfil.instruction` | 2/2 | 11/0 | 2 |
//! | `prompt.ignore-instructions` | 2/2 | 4/2 | 2 |
//! | `exec.run-fetched`, `shell.reverse-shell`, `tamper.agent-instructions` | 2/1 | 18/14, 25/22, 9/5 | 1 each |
//! | `code.source-to-network`, `supply.index-override`, `exec.untrusted-pr-code`, `classifier.corroborated` | 1/1 | 104/27, 36/29, 3/2, 29/29 | 1 each |
//!
//! 26 TRAIN benign skills refused, by 18 rules, none by more than six: the
//! false positives are spread thin. A rule was a candidate when it alone
//! refused a benign skill; it was chosen, leaving out each of the five
//! writers in turn, when on the rest (the four other writers and the
//! skills written beside the rules, `x-*` and `older`, whose classic
//! shapes must stay refused) it spared at least as many benign skills as
//! it lost malicious ones, and it is kept only if it spared benign skills
//! of the writers left out. Chosen: `control.hooks-off` (on the writers
//! left out: 5 benign spared, 0 malicious lost), `exfil.instruction` (2,
//! 0), `prompt.ignore-instructions` (2, 0) and `exec.untrusted-pr-code`
//! (0, 0: its one benign skill is one writer's, so it is not kept).
//! `prompt.ignore-instructions` is not kept either: the conformance suite
//! (`p030`) requires "Ignore previous instructions …" alone in a step to be
//! refused, which SPEC §7.7.3 names. Kept: the two, 7 benign skills spared
//! on the writers left out and no malicious skill of a writer lost, at the
//! cost of two skills written beside the rules that had nothing else
//! (`x-git-hookspath-devnull`, `x-hooks-slow-no-verify`). Chosen on the
//! five writers alone (the `x-*` and `older` skills not weighed), ten
//! rules would be, five kept (the three and `cred.secret-file`,
//! `exec.pipe-to-shell`): 13 benign spared on the writers left out, none
//! of theirs lost, but 52 skills written beside the rules lost — a
//! `curl … | sh` or a reverse shell alone in a skill would no longer
//! refuse (SPEC §7.7.3 forbids it), which the writers' malicious skills
//! only avoid by carrying a second signal or a score the classifier learnt
//! on them.
//!
//! Pairs: every TRAIN skill with findings of two families at `Medium` or
//! worse is refused already (`CredentialAccess` + `Exfiltration` in 86
//! malicious skills, `Concealment` + `Persistence` in 53, + `PromptInjection`
//! in 32, `CodeInjection` + `Obfuscation` in 24; benign skills with any
//! pair: at most 2 per pair), and the malicious skills missed have at most
//! one such family (most have no finding at all): no pair refuses a skill
//! nothing else refuses, so [`PAIRS`] is empty and the pass is measured
//! again when a rule adds `Medium` findings.

use crate::scan::rule::EXCERPT_CHARS;
use crate::scan::{Category, Finding, Severity};

/// Rules whose finding alone refuses too many benign skills: at `High` or
/// worse, they refuse only beside a second signal.
pub const NEEDS_SECOND: &[&str] = &["control.hooks-off", "exfil.instruction"];

/// Rules that refuse alone whatever their measured precision: what SPEC
/// §7.7.3 names and the conformance suite pushes alone (`p030`'s "Ignore
/// previous instructions …"). Never candidates for [`NEEDS_SECOND`].
pub const REFUSE_ALONE: &[&str] = &["prompt.ignore-instructions"];

/// Pairs of families whose findings at `Medium` or worse refuse together.
pub const PAIRS: &[(Category, Category)] = &[];

/// The least severity of a second signal.
pub const SECOND_AT: Severity = Severity::Medium;

/// What a noisy rule's finding alone is lowered to: below the default
/// threshold, where the classifier may still corroborate it.
pub const LOWERED_TO: Severity = Severity::Medium;

/// Severity of `policy.two-signals`: what a node refuses at by default.
pub const PAIR_SEVERITY: Severity = Severity::High;

/// Whether `f` counts as a signal of what the skill does.
fn signal(f: &Finding) -> bool {
    f.severity >= SECOND_AT
        && !matches!(f.category, Category::Secret | Category::PermissionGrant)
        && !f.rule_id.starts_with("classifier.")
        && !f.rule_id.starts_with("policy.")
}

/// Applies the policy "`needs_second` refuse only beside a second signal,
/// `pairs` refuse together" to a report's rules' findings (kept in line
/// order). The scanner calls it with [`NEEDS_SECOND`] and [`PAIRS`]; the
/// precision tool measures other lists with it.
#[doc(hidden)]
pub fn apply(findings: &mut Vec<Finding>, needs_second: &[&str], pairs: &[(Category, Category)]) {
    if findings.is_empty() {
        return;
    }
    if !needs_second.is_empty() {
        // Decided on the findings as the rules made them: lowering one
        // noisy finding does not take the second signal from another.
        let lower: Vec<usize> = findings
            .iter()
            .enumerate()
            .filter(|(_, f)| f.severity > LOWERED_TO && needs_second.contains(&f.rule_id.as_str()))
            .filter(|(_, f)| !findings.iter().any(|g| signal(g) && g.category != f.category))
            .map(|(i, _)| i)
            .collect();
        for i in lower {
            let f = &mut findings[i];
            let was = format!("{:?}", f.severity).to_lowercase();
            f.severity = LOWERED_TO;
            f.message.push_str(&format!(
                " (alone, {was} lowered to medium: this rule refuses only beside a finding of another \
                 family at medium or worse, or the classifier's corroboration)"
            ));
        }
    }
    if pairs.is_empty() || findings.iter().any(|f| f.severity >= PAIR_SEVERITY) {
        return;
    }
    let first = |c: Category| findings.iter().find(|f| f.category == c && signal(f));
    let Some((a, b)) = pairs.iter().find_map(|&(a, b)| Some((first(a)?, first(b)?))) else {
        return;
    };
    let (a, b) = if b.line < a.line { (b, a) } else { (a, b) };
    let pair = Finding {
        rule_id: "policy.two-signals".to_string(),
        category: a.category,
        severity: PAIR_SEVERITY,
        line: a.line,
        excerpt: format!("{} (line {}) beside {} (line {})", a.rule_id, a.line, b.rule_id, b.line)
            .chars()
            .take(EXCERPT_CHARS)
            .collect(),
        message: format!(
            "two signals: {} and {} are each suspicious and of different families; together they refuse \
             the skill, as neither would alone",
            a.rule_id, b.rule_id
        ),
        file: a.file.clone(),
    };
    let at = findings.partition_point(|g| g.line <= pair.line);
    findings.insert(at, pair);
}

/// The scanner's policy: [`apply`] with [`NEEDS_SECOND`] and [`PAIRS`].
pub(crate) fn refine(findings: &mut Vec<Finding>) {
    apply(findings, NEEDS_SECOND, PAIRS);
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
