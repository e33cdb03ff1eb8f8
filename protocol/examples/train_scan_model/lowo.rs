//! Leave-one-writer-out: how the second stage carries over to a writer it
//! was not trained on, the figure every candidate is chosen on (session
//! 26). For each independent writer (a corpus file whose `source:` line
//! ends `(session N, writer tM)`), a model is trained on every skill of
//! the pool but that writer's, and scores that writer's skills of the pool
//! (TRAIN malicious, TRAIN-half benign); the figures are printed per
//! writer and pooled. Out-of-fold scores (5 folds, writers mixed) say how
//! well it learns writers it has seen; these, how well it reads skills of
//! one it has not.

use std::collections::BTreeMap;

use super::{Doc, Policy, figure, rate};
use ecp_protocol::scan::classifier::beside;

/// The writer of a corpus skill: `session N, writer tM` from its
/// `source:` line, or `None` (the engineers who wrote the rules, earlier
/// corpora, public sources).
pub(crate) fn writer_of(body: &str) -> Option<String> {
    let line = body.lines().take(40).find(|l| l.trim_start().starts_with("source:"))?;
    let start = line.rfind("(session ")?;
    let rest = &line[start + 1..];
    let end = rest.find(')')?;
    let inner = &rest[..end];
    inner.contains(", writer t").then(|| inner.replace(", writer ", " "))
}

/// `ECP_FIT_WITHOUT=session 27,session 28`: writers (by the start of
/// their name) no model left one writer out is trained on, though each is
/// still scored by one trained without them: the training list of a model
/// that shipped before they joined, read on every writer (session 29).
fn kept_out(d: &Doc) -> bool {
    let without = super::env("ECP_FIT_WITHOUT");
    let Some(w) = d.writer.as_deref() else { return false };
    without.split(',').map(str::trim).any(|p| !p.is_empty() && w.starts_with(p))
}

/// The writers of the pool's malicious skills, in order.
pub(crate) fn writers(docs: &[Doc], pool: &[usize]) -> Vec<String> {
    let mut out: Vec<String> =
        pool.iter().filter(|&&i| docs[i].malicious).filter_map(|&i| docs[i].writer.clone()).collect();
    out.sort();
    out.dedup();
    out
}

/// Trains on the given skills: the bias and the weights.
type Train<'a> = &'a dyn Fn(&[usize]) -> (f32, Vec<f32>);

/// Each pool skill of a writer, scored by a model trained without that
/// writer's skills: `Some(score)` for those, `None` for the rest.
pub(crate) fn scores(
    docs: &[Doc],
    pool: &[usize],
    train: Train<'_>,
    score: &dyn Fn(usize, f32, &[f32]) -> u16,
    each: &mut dyn FnMut(f32, &[f32]),
) -> Vec<Option<u16>> {
    let mut out = vec![None; docs.len()];
    for w in writers(docs, pool) {
        let theirs = |i: usize| docs[i].writer.as_deref() == Some(w.as_str());
        let fit: Vec<usize> = pool.iter().copied().filter(|&i| !theirs(i) && !kept_out(&docs[i])).collect();
        let (bias, weights) = train(&fit);
        each(bias, &weights);
        for &i in pool.iter().filter(|&&i| theirs(i)) {
            out[i] = Some(score(i, bias, &weights));
        }
    }
    out
}

#[derive(Default, Clone, Copy)]
struct Row {
    malicious: usize,
    flagged: usize,
    rules: usize,
    /// Refused by a corroboration and not by the rules alone.
    corroborated: usize,
    benign: usize,
    benign_flagged: usize,
    benign_corroborated: usize,
}

impl Row {
    fn add(&mut self, o: Row) {
        self.malicious += o.malicious;
        self.flagged += o.flagged;
        self.rules += o.rules;
        self.corroborated += o.corroborated;
        self.benign += o.benign;
        self.benign_flagged += o.benign_flagged;
        self.benign_corroborated += o.benign_corroborated;
    }
}

/// The pooled figures: malicious flagged, benign flagged, malicious
/// corroborated (beyond the rules), benign corroborated, and the recall
/// at the lowest threshold that flags at most `share` of the pooled
/// benign skills (the candidates compared at the same benign share).
pub(crate) struct Pooled {
    pub(crate) flagged: f64,
    pub(crate) benign_flagged: f64,
    pub(crate) corroborated: f64,
    pub(crate) benign_corroborated: f64,
    pub(crate) matched: f64,
    pub(crate) matched_at: u16,
}

/// Prints the per-writer table and returns the pooled figures.
pub(crate) fn report(
    docs: &[Doc],
    lowo: &[Option<u16>],
    threshold: u16,
    policy: Policy,
    share: f64,
) -> Pooled {
    let mut rows: BTreeMap<&str, Row> = BTreeMap::new();
    for (i, d) in docs.iter().enumerate() {
        let (Some(s), Some(w)) = (lowo[i], d.writer.as_deref()) else { continue };
        let row = rows.entry(w).or_default();
        let corroborated = !d.blocked
            && super::short::reads_enough(d)
            && beside(s, &d.findings, policy.at, policy.least).is_some();
        if d.malicious {
            row.malicious += 1;
            row.flagged += usize::from(s >= threshold);
            row.rules += usize::from(d.blocked);
            row.corroborated += usize::from(corroborated);
        } else {
            row.benign += 1;
            row.benign_flagged += usize::from(s >= threshold);
            row.benign_corroborated += usize::from(corroborated);
        }
    }
    println!(
        "  leave one writer out (threshold {threshold}, corroboration beside {:?} at {}):",
        policy.least, policy.at
    );
    println!(
        "    {:<16} {:>18} {:>16} {:>14} | {:>16} {:>12}",
        "writer", "malicious flagged", "rules refuse", "+ corrob.", "benign flagged", "+ corrob."
    );
    let mut all = Row::default();
    for (w, r) in &rows {
        all.add(*r);
        print_row(w, r);
    }
    print_row("pooled", &all);
    let benign: Vec<u16> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.malicious && d.writer.is_some())
        .filter_map(|(i, _)| lowo[i])
        .collect();
    let malicious: Vec<u16> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.malicious && d.writer.is_some())
        .filter_map(|(i, _)| lowo[i])
        .collect();
    let matched_at = (0..=1000u16)
        .find(|&t| rate(benign.iter().filter(|&&s| s >= t).count(), benign.len()) <= share)
        .unwrap_or(1000);
    let matched = rate(malicious.iter().filter(|&&s| s >= matched_at).count(), malicious.len());
    println!(
        "    at {matched_at}, the lowest flagging at most {:.0}% of these writers' benign skills: {:.1}% of their malicious",
        100.0 * share,
        100.0 * matched
    );
    // Steadier than one point of a small benign set: the recall at a few
    // benign shares, and the area under the curve.
    let c = curve(&benign, &malicious);
    println!(
        "    recall at benign 1% {:.1}%, 2% {:.1}%, 3% {:.1}%, 5% {:.1}%, 10% {:.1}%; AUC {:.4}",
        c.at[0], c.at[1], c.at[2], c.at[3], c.at[4], c.auc
    );
    // What the score can add: the malicious skills the rules alone do not
    // refuse, against every benign skill (a score high on a skill the rules
    // refuse already changes nothing the scanner does).
    let unrefused: Vec<u16> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.malicious && d.writer.is_some() && !d.blocked)
        .filter_map(|(i, _)| lowo[i])
        .collect();
    let b = curve(&benign, &unrefused);
    println!(
        "    beyond the rules ({} malicious they do not refuse): recall at benign 1% {:.1}%, 2% {:.1}%, 3% {:.1}%, 5% {:.1}%, 10% {:.1}%; AUC {:.4}",
        unrefused.len(),
        b.at[0],
        b.at[1],
        b.at[2],
        b.at[3],
        b.at[4],
        b.auc
    );
    Pooled {
        flagged: rate(all.flagged, all.malicious),
        benign_flagged: rate(all.benign_flagged, all.benign),
        corroborated: rate(all.corroborated, all.malicious),
        benign_corroborated: rate(all.benign_corroborated, all.benign),
        matched,
        matched_at,
    }
}

/// The benign shares [`Curve::at`] reads the recall at.
pub(crate) const SHARES: [f64; 5] = [0.01, 0.02, 0.03, 0.05, 0.10];

/// Recall (percent) at each of [`SHARES`] of the benign skills, and the
/// area under the curve.
pub(crate) struct Curve {
    pub(crate) at: [f64; 5],
    pub(crate) auc: f64,
}

/// The curve of `malicious` scores against `benign` ones.
pub(crate) fn curve(benign: &[u16], malicious: &[u16]) -> Curve {
    let at_share = |s: f64| {
        let t = (0..=1000u16)
            .find(|&t| rate(benign.iter().filter(|&&b| b >= t).count(), benign.len()) <= s)
            .unwrap_or(1000);
        100.0 * rate(malicious.iter().filter(|&&m| m >= t).count(), malicious.len())
    };
    let pairs: usize = malicious
        .iter()
        .map(|&m| 2 * benign.iter().filter(|&&b| b < m).count() + benign.iter().filter(|&&b| b == m).count())
        .sum();
    Curve { at: SHARES.map(at_share), auc: pairs as f64 / (2 * malicious.len() * benign.len()).max(1) as f64 }
}

fn print_row(w: &str, r: &Row) {
    println!(
        "    {:<16} {:>18} {:>16} {:>14} | {:>16} {:>12}",
        w,
        figure(r.flagged, r.malicious),
        format!("{}/{}", r.rules, r.malicious),
        format!("{}/{}", r.corroborated, r.malicious),
        figure(r.benign_flagged, r.benign),
        format!("{}/{}", r.benign_corroborated, r.benign)
    );
}

#[cfg(test)]
mod tests {
    use super::writer_of;

    #[test]
    fn the_writer_is_read_from_the_source_line_only() {
        let body =
            "---\nname: x\nsource: hand-written for the ecp scan corpus (session 25, writer t11)\n---\n";
        assert_eq!(writer_of(body).as_deref(), Some("session 25 t11"));
        assert_eq!(writer_of("---\nsource: public docs (session 25)\n---\n"), None);
        assert_eq!(writer_of("text (session 25, writer t9)\n"), None, "not on a source: line");
    }
}
