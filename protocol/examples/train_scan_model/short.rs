//! Short bodies (session 29): how the second stage reads a body of few
//! words, whose score rests on a handful of weights and swings from one
//! training to the next. Four readings, each printed by the trainer:
//!
//! - how many word features (`n`, what `classifier::word_scale` reads) the
//!   pool's skills have, benign and malicious: where "short" starts;
//! - leave one writer out on the short ones only (`ECP_SHORT=n`, the cut,
//!   150 unless set): recall at 1 / 3 / 5 % of their short benign skills
//!   and the area under the curve, and how many of those short benign the
//!   threshold chosen on every benign skill flags;
//! - what a floor on the word features read before a score may corroborate
//!   (`classifier::MIN_WORDS`; `ECP_FLOOR` for a candidate) takes from the
//!   corroborations leave one writer out;
//! - the bodies the unit tests scan beside a finding that a corroboration
//!   could refuse (`ECP_PINNED=file`: bodies separated by U+001E and a
//!   newline, dumped from a run of the protocol's unit tests by a
//!   temporary line in `Scanner::scan` writing each body `corroborate`
//!   could refuse beside): what each model scores them, the highest first,
//!   against the corroboration bar, and how far each body's score swings
//!   between the models trained leave one writer out.

use std::fs;

use super::lowo::curve;
use super::{Doc, Policy, Split, env};
use ecp_protocol::scan::classifier::{
    Features, MIN_WORDS, NEEDS_SECOND, PAIRS, SHOWN, apply_policy, apply_voice, beside, features,
};
use ecp_protocol::scan::{Scanner, Severity};

/// `ECP_FLOOR`: the word features a body needs before its score may
/// corroborate (`classifier::MIN_WORDS` unless set; 0 reads every score).
pub(crate) fn floor() -> usize {
    env("ECP_FLOOR").parse().unwrap_or(MIN_WORDS)
}

/// Whether `d`'s score read enough words to corroborate ([`floor`]).
pub(crate) fn reads_enough(d: &Doc) -> bool {
    d.features.words.len() >= floor()
}

/// The cut below which a body is short: `ECP_SHORT`, 150 word features.
pub(crate) fn cut() -> usize {
    env("ECP_SHORT").parse().unwrap_or(150)
}

/// The `q`-quantile of `v` (sorted in place).
fn quantile(v: &mut [usize], q: f64) -> usize {
    v.sort_unstable();
    v.get(((v.len().max(1) - 1) as f64 * q).round() as usize).copied().unwrap_or(0)
}

/// How many word features the pool's skills have, and how many of the
/// whole corpus's (HELD's malicious aside) have fewer than [`floor`].
pub(crate) fn lengths(docs: &[Doc], pool: &[usize]) {
    let below = |malicious: bool| {
        let of: Vec<&Doc> = docs
            .iter()
            .filter(|d| d.malicious == malicious && !(malicious && d.split == Split::Held))
            .collect();
        (of.iter().filter(|d| d.features.words.len() < floor()).count(), of.len())
    };
    let (m, b) = (below(true), below(false));
    println!(
        "  below {} word features: {}/{} malicious (HELD aside), {}/{} benign",
        floor(),
        m.0,
        m.1,
        b.0,
        b.1
    );
    for malicious in [false, true] {
        let mut n: Vec<usize> = pool
            .iter()
            .filter(|&&i| docs[i].malicious == malicious)
            .map(|&i| docs[i].features.words.len())
            .collect();
        let short = n.iter().filter(|&&x| x < cut()).count();
        println!(
            "  word features, {}: 5% {}, 25% {}, median {}, 75% {}; {short}/{} below {}",
            if malicious { "malicious" } else { "benign" },
            quantile(&mut n, 0.05),
            quantile(&mut n, 0.25),
            quantile(&mut n, 0.5),
            quantile(&mut n, 0.75),
            n.len(),
            cut()
        );
    }
}

/// Leave one writer out on the short bodies only, and what a floor on
/// the words read before a score may corroborate would take from the
/// corroborations under `policy`.
pub(crate) fn report(docs: &[Doc], lowo: &[Option<u16>], threshold: u16, policy: Policy) {
    let corroborated: Vec<(bool, usize)> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.writer.is_some() && !d.blocked)
        .filter_map(|(i, d)| Some((d, lowo[i]?)))
        .filter(|(d, s)| beside(*s, &d.findings, policy.at, policy.least).is_some())
        .map(|(d, _)| (d.malicious, d.features.words.len()))
        .collect();
    let below = |malicious: bool, floor: usize| {
        corroborated.iter().filter(|&&(m, n)| m == malicious && n < floor).count()
    };
    // Read without the floor (the scores alone), whatever `ECP_FLOOR` says.
    println!(
        "    a floor on the word features before a score corroborates: of {} malicious and {} benign corroborated beyond the rules, below 40 {}/{}, 60 {}/{}, 80 {}/{}, 100 {}/{}",
        below(true, usize::MAX),
        below(false, usize::MAX),
        below(true, 40),
        below(false, 40),
        below(true, 60),
        below(false, 60),
        below(true, 80),
        below(false, 80),
        below(true, 100),
        below(false, 100)
    );
    let short = |d: &Doc| d.writer.is_some() && d.features.words.len() < cut();
    let scores = |malicious: bool| -> Vec<u16> {
        docs.iter()
            .enumerate()
            .filter(|(_, d)| d.malicious == malicious && short(d))
            .filter_map(|(i, _)| lowo[i])
            .collect()
    };
    let (benign, malicious) = (scores(false), scores(true));
    let c = curve(&benign, &malicious);
    println!(
        "    short (< {} word features; {} malicious, {} benign): recall at benign 1% {:.1}%, 3% {:.1}%, 5% {:.1}%; AUC {:.4}; benign flagged at {threshold}: {}",
        cut(),
        malicious.len(),
        benign.len(),
        c.at[0],
        c.at[2],
        c.at[3],
        c.auc,
        benign.iter().filter(|&&s| s >= threshold).count()
    );
}

/// A body the unit tests scan beside a finding a corroboration could
/// refuse: its features, the compiled model's score, its head.
pub(crate) struct Pinned {
    features: Features,
    compiled: u16,
    head: String,
    /// Its score by each model trained leave one writer out.
    lowo: Vec<u16>,
}

/// The bodies of `ECP_PINNED` beside a `Low` finding or worse, after the
/// refusal policy, as the scanner corroborates them.
pub(crate) fn load() -> Vec<Pinned> {
    let path = env("ECP_PINNED");
    if path.is_empty() {
        return Vec::new();
    }
    let text = fs::read_to_string(&path).expect("ECP_PINNED: a file");
    let mut bodies: Vec<&str> = text.split("\u{1e}\n").filter(|b| !b.is_empty()).collect();
    bodies.sort_unstable();
    bodies.dedup();
    let scanner = Scanner::standard();
    let mut out = Vec::new();
    for body in bodies {
        let report = scanner.scan_unrefined(body);
        let rules = report.findings;
        let features = features(body, &rules);
        let mut findings = rules;
        if SHOWN {
            apply_voice(&mut findings, body, |f| !f.rule_id.starts_with("classifier."));
        }
        apply_policy(&mut findings, NEEDS_SECOND, PAIRS);
        if beside(1000, &findings, 0, Severity::Low).is_none() {
            continue;
        }
        let head = body.chars().take(60).collect::<String>().replace('\n', "⏎");
        out.push(Pinned {
            features,
            compiled: report.classifier.unwrap_or_default(),
            head,
            lowo: Vec::new(),
        });
    }
    out
}

/// Scores every pinned body with one model trained leave one writer out.
pub(crate) fn score_lowo(pinned: &mut [Pinned], score: &dyn Fn(&Features) -> u16) {
    for p in pinned {
        let s = score(&p.features);
        p.lowo.push(s);
    }
}

/// What the final model (`score`) scores the pinned bodies, against
/// `policy` and the compiled model at 724, and how far each body's score
/// swings between the models trained leave one writer out.
pub(crate) fn pinned(pinned: &[Pinned], policy: Policy, score: &dyn Fn(&Features) -> u16) {
    if pinned.is_empty() {
        return;
    }
    let mut rows: Vec<(u16, &Pinned)> = pinned.iter().map(|p| (score(&p.features), p)).collect();
    rows.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.compiled.cmp(&a.1.compiled)));
    let above = |at: u16| rows.iter().filter(|r| r.0 >= at).count();
    let swing =
        |p: &Pinned| p.lowo.iter().max().copied().unwrap_or(0) - p.lowo.iter().min().copied().unwrap_or(0);
    let mut swings: Vec<usize> = pinned.iter().map(|p| usize::from(swing(p))).collect();
    let lowo_max = pinned.iter().filter_map(|p| p.lowo.iter().max()).max().copied().unwrap_or(0);
    println!(
        "  the unit tests' bodies beside a Low finding or worse: {}; this model scores {} of them at {} or above ({} at 724), the compiled one {} at 724; highest {} ({} by any leave-one-writer-out model); their scores swing between those models by median {}, 90% {}, most {}",
        rows.len(),
        above(policy.at),
        policy.at,
        above(724),
        pinned.iter().filter(|p| p.compiled >= 724).count(),
        rows.first().map_or(0, |r| r.0),
        lowo_max,
        quantile(&mut swings, 0.5),
        quantile(&mut swings, 0.9),
        quantile(&mut swings, 1.0)
    );
    let mut n: Vec<usize> = pinned.iter().map(|p| p.features.words.len()).collect();
    println!(
        "    their word features: median {}, most {}; at or above {} with {} or more: {}",
        quantile(&mut n, 0.5),
        quantile(&mut n, 1.0),
        policy.at,
        floor(),
        rows.iter().filter(|r| r.0 >= policy.at && r.1.features.words.len() >= floor()).count()
    );
    for (s, p) in rows.iter().take(10) {
        println!(
            "    {s:>4} (compiled {:>4}, n {:>3}, swing {:>3}) {}",
            p.compiled,
            p.features.words.len(),
            swing(p),
            p.head
        );
    }
}
