//! Trains the scanner's second stage (`scan::classifier`), chooses its
//! thresholds and its corroboration policy, and writes its weights, never
//! reading the HELD half:
//!
//! ```text
//! cargo run -p ecp-protocol --release --example train_scan_model
//! ```
//!
//! Training data: the malicious skills of `testdata/scan-corpus` that the
//! corpus test puts in its TRAIN split, and the benign skills halved by
//! the corpus test's rule on their corpus-relative name (the first hex
//! digit of its SHA-256 is 8–f), listed in `testdata/scan-model/train.txt`.
//! `ECP_TRAIN_ON=all` adds the skills written beside the rules (`x-*`)
//! and the first corpus (`older.txt`); `=beside` trains on those alone (to
//! see how a model carries over to other writers). Trained on all, the
//! model learned the other writers and lost TRAIN's, and the scanner's
//! HELD recall fell (`protocol/benches/README.md`), so the default is
//! TRAIN. The HELD malicious skills and the other half of the benign ones
//! are never trained on; the HELD malicious skills are scored only when
//! `ECP_READ_HELD=1` asks for it, once per model that would ship.
//!
//! Features (`classifier::features`): the hashed words of the body and
//! their pairs with a symbol of code, what the rules found below the
//! refusing threshold, and the kinds of purpose the skill's head names.
//!
//! Model: logistic regression, L2-regularised (the rules' evidence
//! harder), classes weighted to balance, full-batch Adam from zero
//! (deterministic). Everything is chosen on out-of-fold scores of the
//! training data (5 folds): `THRESHOLD`, the lowest score that keeps at
//! most 3 % of the benign skills above it, and the corroboration policy,
//! one grid row per least severity of the rule's finding (`Info`, `Low`,
//! `Medium`), each with the lowest score that corroborates at most 1 % of
//! the benign skills; of the `Low` and `Medium` rows within 3 % of every
//! benign skill refused in all (or, while the rules alone refuse more,
//! adding at most 1 % to theirs), the one that would refuse the most
//! malicious skills whose refusing findings were taken away ("shadow":
//! as if the rules had caught them only below the threshold) is chosen.
//!
//! Every candidate is chosen on *leave one writer out* (`lowo.rs`): for
//! each independent writer (`(session N, writer tM)` on a `source:`
//! line), a model trained on the pool without their skills scores theirs;
//! printed per writer and pooled (flagged at the threshold, refused by a
//! corroboration beyond the rules, recall at 1–10 % of their benign, the
//! area under the curve), with the out-of-fold figures beside it. The
//! corroboration policy is also kept within the corpus test's
//! false-positive ratchet (`CORPUS_MAX_FALSE_POSITIVES`), counted on the
//! TRAIN half of the benign skills with their out-of-fold scores (until
//! session 27 every benign skill, the other half too, with the final
//! model's). Candidate features are read without a
//! rebuild (`variants.rs`; the document's intent, `intent.rs`:
//! `ECP_FEATURES=intent,ipurpose,icross,…`): `ECP_FEATURES=nopairs,codeprose,marks,…`,
//! `ECP_SHARED=k` (only words found in malicious skills of `k` writers),
//! `ECP_L2`, `ECP_SEED` (the candidates' hash). Session 28: the recall
//! beyond the rules (the malicious skills they do not refuse), the
//! learning curve over writers (`curve.rs`: `ECP_CURVE=0,2,4,6,8`,
//! `ECP_DRAWS`, `ECP_CURVE_SHARE`), and candidates of capacity, place and
//! character n-grams (`buckets=65536`, `placeplus[=pchf]`, `dup`,
//! `ngrams=code|woke|wokelow|all`); a candidate is never written.
//!
//! Session 29 (`short.rs`): `ECP_SHRINK=k` shrinks a body's words toward
//! the bias (`classifier::word_scale`), `ECP_FLOOR=n` the word features a
//! score needs before it may corroborate (`classifier::MIN_WORDS` unless
//! set, in every corroboration the trainer counts), `ECP_SHORT=n` the cut
//! of the short bodies' leave-one-writer-out figures, `ECP_PINNED=file`
//! the unit tests' bodies to score (dumped from a test run, separated by
//! U+001E and a newline), and `ECP_FIT_WITHOUT=session 27,session 28`
//! writers no leave-one-writer-out model is trained on (an older training
//! list, read on every writer).
//!
//! `ECP_EVIDENCE=none` leaves the rules' findings out, `=scaled` weights
//! them `1/√n` as words, `=only` leaves the words out;
//! `ECP_EVIDENCE_L2` sets the evidence's L2; `ECP_BALANCE=groups` weighs
//! each group of malicious skills alike; `ECP_POLICY=Medium:667` reads a
//! given policy; `ECP_DRY=1` writes nothing.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use ecp_protocol::scan::classifier::{
    self, BUCKETS, EVIDENCE_BUCKETS, Features, NEEDS_SECOND, PAIRS, SHOWN, apply_policy, apply_voice, beside,
    features, probability_with, word_scale,
};
use ecp_protocol::scan::{DEFAULT_THRESHOLD, Finding, Scanner, Severity};
use sha2::{Digest, Sha256};

#[path = "shared/corpus_files.rs"]
mod corpus_files;
#[path = "train_scan_model/curve.rs"]
mod curve;
#[path = "train_scan_model/intent.rs"]
mod intent;
#[path = "train_scan_model/lowo.rs"]
mod lowo;
#[path = "train_scan_model/short.rs"]
mod short;
#[path = "train_scan_model/variants.rs"]
mod variants;

const EPOCHS: usize = 300;
/// Leave one writer out over nine writers (session 28), `1e-5` read them
/// better at every benign share (AUC 0.9567 → 0.9628) but scored short
/// benign bodies 746–797, above every corroboration the trainer chose
/// (the module doc); `3e-4` lost (0.9481).
const L2: f32 = 1e-4;
/// The rules' evidence is regularised harder than words: a few findings
/// are in both halves' look-alikes, and weighted `1` each (not `1/√n`),
/// their weights grew to refuse benign skills out of sample at `L2`.
const EVIDENCE_L2: f32 = 1e-2;
const RATE: f32 = 0.05;
const FOLDS: usize = 5;
const MAX_FALSE_POSITIVES: f64 = 0.03;
/// The share of the benign skills a corroboration policy may refuse (out
/// of fold): it takes part in a refusal, so it is stricter.
const MAX_CORROBORATED_FALSE_POSITIVES: f64 = 0.01;
/// The corpus test's `MAX_FALSE_POSITIVE_RATE` (`tests/it/scan_corpus.rs`,
/// a ratchet), held here on the TRAIN half's benign skills refused, rules
/// and corroboration, out of fold: the other half is never chosen on.
const CORPUS_MAX_FALSE_POSITIVES: f64 = 0.065;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Split {
    Train,
    BesideRules,
    Older,
    Held,
}

struct Doc {
    name: String,
    class: String,
    malicious: bool,
    /// For a malicious skill its split; for a benign one `Train` or `Held`
    /// (its half).
    split: Split,
    /// The rules' findings (the classifier's own left out).
    findings: Vec<Finding>,
    /// Whether the rules alone refuse it.
    blocked: bool,
    features: Features,
    /// The independent writer (`lowo::writer_of`), if any.
    writer: Option<String>,
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_default()
}

fn corpus() -> Vec<Doc> {
    let root = corpus_files::root();
    let older = corpus_files::older(&root);
    let scanner = Scanner::standard();
    let evidence = env("ECP_EVIDENCE");
    let mut docs = Vec::new();
    for kind in ["malicious", "benign"] {
        for path in corpus_files::markdown_under(&root.join(kind)) {
            let name =
                path.strip_prefix(root.join(kind)).expect("under kind").to_string_lossy().replace('\\', "/");
            let file = name.rsplit('/').next().unwrap_or(&name);
            let held = Sha256::digest(name.as_bytes())[0] < 0x80;
            let malicious = kind == "malicious";
            let split = if malicious && file.starts_with("x-") {
                Split::BesideRules
            } else if malicious && older.contains(&name) {
                Split::Older
            } else if held {
                Split::Held
            } else {
                Split::Train
            };
            let body = fs::read_to_string(&path).expect("read corpus file");
            // The model reads the rules' findings as the rules made them
            // (as `Scanner::scan` scores); what refuses is judged after the
            // refusal policy (`classifier::policy`) and the frame
            // (`classifier::voice`), as the scanner does.
            let rules = scanner.scan_unrefined(&body).findings;
            let mut features = variants::apply(&env("ECP_FEATURES"), &body, &rules, features(&body, &rules));
            let mut findings = rules;
            if SHOWN {
                apply_voice(&mut findings, &body, |f| !f.rule_id.starts_with("classifier."));
            }
            apply_policy(&mut findings, NEEDS_SECOND, PAIRS);
            let blocked = findings.iter().any(|f| f.severity >= DEFAULT_THRESHOLD);
            match evidence.as_str() {
                "none" => features.evidence.clear(),
                "only" => features.words.clear(),
                "scaled" => {
                    let e = std::mem::take(&mut features.evidence);
                    features.words.extend(e);
                }
                _ => {}
            }
            let class = name.split_once('/').map_or("-", |(c, _)| c).to_string();
            docs.push(Doc {
                name: format!("{kind}/{name}"),
                class,
                malicious,
                split,
                findings,
                blocked,
                features,
                writer: lowo::writer_of(&body),
            });
        }
    }
    docs
}

/// Trains on `docs` (indices into `all`); returns the bias and weights.
fn train(all: &[Doc], docs: &[usize]) -> (f32, Vec<f32>) {
    let positives = docs.iter().filter(|&&i| all[i].malicious).count().max(1) as f32;
    let negatives = (docs.len() as f32 - positives).max(1.0);
    let n = docs.len() as f32;
    // With `ECP_BALANCE=groups`, each group of malicious skills (TRAIN,
    // x-*, older) weighs as much as each other, whatever its size.
    let mut group_size: BTreeMap<Split, f32> = BTreeMap::new();
    for &i in docs.iter().filter(|&&i| all[i].malicious) {
        *group_size.entry(all[i].split).or_default() += 1.0;
    }
    let groups = env("ECP_BALANCE") == "groups";
    let evidence_l2: f32 = env("ECP_EVIDENCE_L2").parse().unwrap_or(EVIDENCE_L2);
    let l2: f32 = env("ECP_L2").parse().unwrap_or(L2);
    let shared = shared_mask(all, docs);
    let doc_weight: Vec<f32> = docs
        .iter()
        .map(|&i| {
            let d = &all[i];
            match (d.malicious, groups) {
                (false, _) => n / (2.0 * negatives),
                (true, false) => n / (2.0 * positives),
                (true, true) => n / (2.0 * group_size.len() as f32 * group_size[&d.split]),
            }
        })
        .collect();
    // A candidate's vocabulary may be larger than the scanner's
    // (`variants::word_dim`): the evidence follows the words.
    let words = variants::word_dim();
    let dim = words + EVIDENCE_BUCKETS;
    let mut w = vec![0f32; dim + 1];
    let (mut m1, mut m2) = (vec![0f32; dim + 1], vec![0f32; dim + 1]);
    let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
    for epoch in 1..=EPOCHS {
        let mut g = vec![0f32; dim + 1];
        for (&i, &weight) in docs.iter().zip(&doc_weight) {
            let d = &all[i];
            let p = prob(&d.features, w[0], &w[1..]);
            let err = (p - f32::from(u8::from(d.malicious))) * weight / n;
            let scale = word_scale(d.features.words.len(), shrink());
            g[0] += err;
            for &k in &d.features.words {
                if shared.as_ref().is_none_or(|m| m[k as usize]) {
                    g[k as usize + 1] += err * scale;
                }
            }
            for &k in &d.features.evidence {
                g[k as usize + 1] += err;
            }
        }
        for k in 1..=dim {
            g[k] += if k > words { evidence_l2 } else { l2 } * w[k];
        }
        let (c1, c2) = (1.0 - b1.powi(epoch as i32), 1.0 - b2.powi(epoch as i32));
        for k in 0..=dim {
            m1[k] = b1 * m1[k] + (1.0 - b1) * g[k];
            m2[k] = b2 * m2[k] + (1.0 - b2) * g[k] * g[k];
            w[k] -= RATE * (m1[k] / c1) / ((m2[k] / c2).sqrt() + eps);
        }
    }
    let bias = w[0];
    (bias, w[1..].to_vec())
}

/// With `ECP_SHARED=k`, the word buckets present in malicious skills of
/// at least `k` writers of `docs` (skills with no writer count as one
/// more): the rest keep a weight of 0, as words one writer uses alone
/// say who wrote a skill, not what it does.
fn shared_mask(all: &[Doc], docs: &[usize]) -> Option<Vec<bool>> {
    let k: usize = env("ECP_SHARED").parse().ok()?;
    let mut writers: BTreeMap<&str, usize> = BTreeMap::new();
    let mut seen = vec![0u64; variants::word_dim()];
    for &i in docs.iter().filter(|&&i| all[i].malicious) {
        let n = writers.len();
        let w = *writers.entry(all[i].writer.as_deref().unwrap_or("-")).or_insert(n);
        for &b in &all[i].features.words {
            seen[b as usize] |= 1 << w.min(63);
        }
    }
    Some(seen.iter().map(|s| s.count_ones() as usize >= k).collect())
}

/// `ECP_SHRINK`: the words' shrink toward the bias (`classifier::SHRINK`
/// unless set), in the training and every score.
fn shrink() -> f32 {
    static S: std::sync::OnceLock<f32> = std::sync::OnceLock::new();
    *S.get_or_init(|| env("ECP_SHRINK").parse().unwrap_or(classifier::SHRINK))
}

/// The probability of `features` under the bias and weights, shrunk by
/// [`shrink`].
fn prob(features: &Features, bias: f32, w: &[f32]) -> f32 {
    probability_with(features, bias, w, shrink())
}

/// A probability as `classifier::score` reports it.
fn thousandths(p: f32) -> u16 {
    (p * 1000.0).round() as u16
}

fn rate(hit: usize, total: usize) -> f64 {
    hit as f64 / total.max(1) as f64
}

fn figure(hit: usize, total: usize) -> String {
    format!("{hit}/{total} = {:.1}%", 100.0 * rate(hit, total))
}

/// The rules' findings of `d` below the threshold: what the rules would
/// have left had they caught it only below it.
fn shadow(d: &Doc) -> Vec<Finding> {
    d.findings.iter().filter(|f| f.severity < DEFAULT_THRESHOLD).cloned().collect()
}

/// One corroboration policy: a least severity and a score.
#[derive(Clone, Copy)]
pub(crate) struct Policy {
    pub(crate) least: Severity,
    pub(crate) at: u16,
}

impl Policy {
    fn refuses(self, d: &Doc, score: u16) -> bool {
        d.blocked || short::reads_enough(d) && beside(score, &d.findings, self.at, self.least).is_some()
    }

    fn shadow_refuses(self, d: &Doc, score: u16) -> bool {
        short::reads_enough(d) && beside(score, &shadow(d), self.at, self.least).is_some()
    }
}

fn main() {
    let docs = corpus();
    let train_on = env("ECP_TRAIN_ON");
    // The default: the TRAIN split only (see the module doc for why).
    let train_only = !matches!(train_on.as_str(), "all" | "beside");
    // `beside`: the x-* and older skills only, to see how a model carries
    // over to skills of other writers (TRAIN, then out of sample).
    let beside_only = train_on == "beside";
    let in_pool = |d: &Doc| match d.split {
        Split::Train => !d.malicious || !beside_only,
        Split::BesideRules | Split::Older => d.malicious && !train_only,
        Split::Held => false,
    };
    let pool: Vec<usize> = (0..docs.len()).filter(|&i| in_pool(&docs[i])).collect();
    let benign_pool: Vec<usize> = pool.iter().copied().filter(|&i| !docs[i].malicious).collect();
    short::lengths(&docs, &pool);

    // Out-of-fold scores on the pool, for every choice.
    let mut oof = vec![0u16; docs.len()];
    for fold in 0..FOLDS {
        let fit: Vec<usize> =
            pool.iter().copied().enumerate().filter(|(k, _)| k % FOLDS != fold).map(|(_, i)| i).collect();
        let (bias, w) = train(&docs, &fit);
        for (k, &i) in pool.iter().enumerate() {
            if k % FOLDS == fold {
                oof[i] = thousandths(prob(&docs[i].features, bias, &w));
            }
        }
    }
    let (bias, w) = train(&docs, &pool);
    let scored: Vec<u16> = docs.iter().map(|d| thousandths(prob(&d.features, bias, &w))).collect();
    // Out of fold where trained on, the final model's score elsewhere
    // (never trained on): the honest score of every skill but HELD's.
    let honest = |i: usize| if in_pool(&docs[i]) { oof[i] } else { scored[i] };

    let lowest_within = |share: f64, hit: &dyn Fn(usize, u16) -> bool| {
        (0..=1000u16)
            .find(|&t| rate(benign_pool.iter().filter(|&&i| hit(i, t)).count(), benign_pool.len()) <= share)
            .unwrap_or(1000)
    };
    let threshold = lowest_within(MAX_FALSE_POSITIVES, &|i, t| oof[i] >= t);

    let count = |set: &dyn Fn(&Doc) -> bool, hit: &dyn Fn(usize) -> bool| {
        let of: Vec<usize> = (0..docs.len()).filter(|&i| set(&docs[i])).collect();
        (of.iter().filter(|&&i| hit(i)).count(), of.len())
    };
    let train_mal = |d: &Doc| d.malicious && d.split == Split::Train;
    let beside_mal = |d: &Doc| d.malicious && matches!(d.split, Split::BesideRules | Split::Older);
    let benign_train = |d: &Doc| !d.malicious && d.split == Split::Train;
    let benign_held = |d: &Doc| !d.malicious && d.split == Split::Held;
    let benign_all = |d: &Doc| !d.malicious;

    println!(
        "trained on {} skills ({} malicious; {}), evidence {}; threshold {threshold}/1000",
        pool.len(),
        pool.iter().filter(|&&i| docs[i].malicious).count(),
        if train_only {
            "TRAIN only"
        } else if beside_only {
            "x-* and older only"
        } else {
            "TRAIN, x-* and older"
        },
        match env("ECP_EVIDENCE").as_str() {
            "" => "apart",
            other => other,
        }
    );
    let alone = |i: usize| honest(i) >= threshold;
    println!("  classifier alone, out of fold (x-*/older: out of sample when not trained on):");
    println!("    TRAIN malicious {}", figure(count(&train_mal, &alone).0, count(&train_mal, &alone).1));
    println!(
        "    x-*/older malicious {}",
        figure(count(&beside_mal, &alone).0, count(&beside_mal, &alone).1)
    );
    println!(
        "    benign (trained half) {}",
        figure(count(&benign_train, &alone).0, count(&benign_train, &alone).1)
    );
    println!(
        "    benign (other half, final model) {}",
        figure(count(&benign_held, &alone).0, count(&benign_held, &alone).1)
    );

    // The corroboration grid.
    println!(
        "  corroboration grid (out of fold; shadow = refusing findings taken away; benign ≤ {:.0}%):",
        100.0 * MAX_CORROBORATED_FALSE_POSITIVES
    );
    println!(
        "    {:<7} {:>5} {:>16} {:>18} {:>20} {:>18}",
        "least", "at", "benign corrob.", "shadow TRAIN", "shadow x-*/older", "benign all (final)"
    );
    let mut best: Option<(Policy, usize)> = None;
    let rules_alone = count(&benign_train, &|i| docs[i].blocked);
    let rules_alone_over = rate(rules_alone.0, rules_alone.1) > MAX_FALSE_POSITIVES;
    let rules_alone_over_corpus = rate(rules_alone.0, rules_alone.1) > CORPUS_MAX_FALSE_POSITIVES;
    println!(
        "    the rules alone refuse {} of the benign skills (TRAIN half)",
        figure(rules_alone.0, rules_alone.1)
    );
    for least in [Severity::Medium, Severity::Low, Severity::Info] {
        // The lowest score that corroborates at most 1% of the benign
        // skills, out of fold, beside a finding of `least` or worse.
        let at = lowest_within(MAX_CORROBORATED_FALSE_POSITIVES, &|i, t| {
            short::reads_enough(&docs[i]) && beside(oof[i], &docs[i].findings, t, least).is_some()
        });
        // Raised until the benign skills refused stay within the corpus
        // test's ratchet: counted on the TRAIN half only, out of fold (until
        // session 27 every benign skill, the other half too, by the final
        // model: a choice made on the half that measures it).
        let within_corpus = |t: u16| {
            let p = Policy { least, at: t };
            let (refused, of) = count(&benign_train, &|i| p.refuses(&docs[i], honest(i)));
            rate(refused, of) <= CORPUS_MAX_FALSE_POSITIVES
        };
        let at = if rules_alone_over_corpus {
            at
        } else {
            (at..=1000).find(|&t| within_corpus(t)).unwrap_or(1000)
        };
        let policy = Policy { least, at };
        let corroborated = count(&benign_train, &|i| {
            short::reads_enough(&docs[i]) && beside(oof[i], &docs[i].findings, at, least).is_some()
        });
        let shadow_train = count(&train_mal, &|i| policy.shadow_refuses(&docs[i], honest(i)));
        let shadow_beside = count(&beside_mal, &|i| policy.shadow_refuses(&docs[i], honest(i)));
        // The corpus test's figure: every benign skill, the final model.
        let benign_blocked = count(&benign_all, &|i| policy.refuses(&docs[i], scored[i]));
        println!(
            "    {:<7} {:>5} {:>16} {:>18} {:>20} {:>18}",
            format!("{least:?}"),
            at,
            format!("{}/{}", corroborated.0, corroborated.1),
            figure(shadow_train.0, shadow_train.1),
            figure(shadow_beside.0, shadow_beside.1),
            figure(benign_blocked.0, benign_blocked.1)
        );
        let caught = shadow_train.0 + shadow_beside.0;
        // An `Info` finding is never a reason to refuse (a frontmatter
        // grant, a secret read from elsewhere): its row is shown, not chosen.
        // While the rules alone refuse more than 3 % of the benign skills
        // (fresh writers' skills as found), no policy can come within 3 %,
        // and "none fits" would switch corroboration off for a reason that
        // is not its own: then a policy fits when what it adds to the
        // rules' own refusals stays within its 1 %.
        // Judged on the TRAIN half, out of fold, as every choice is.
        let chosen_on = count(&benign_train, &|i| policy.refuses(&docs[i], honest(i)));
        let added = chosen_on.0 - rules_alone.0;
        let fits = (rate(chosen_on.0, chosen_on.1) <= MAX_FALSE_POSITIVES
            || rules_alone_over && rate(added, chosen_on.1) <= MAX_CORROBORATED_FALSE_POSITIVES)
            && least > Severity::Info;
        if fits && best.is_none_or(|(_, c)| caught > c) {
            best = Some((policy, caught));
        }
    }
    let mut policy = best.map_or(Policy { least: Severity::Medium, at: 1000 }, |(p, _)| p);
    // `ECP_POLICY=Medium:667`: a given policy instead, to read a model
    // that shipped before (never to choose one).
    if let Some((least, at)) = env("ECP_POLICY").split_once(':') {
        let least = match least {
            "Low" => Severity::Low,
            "Medium" => Severity::Medium,
            other => panic!("ECP_POLICY: {other}: Low or Medium"),
        };
        policy = Policy { least, at: at.parse().expect("ECP_POLICY: a score") };
    }
    println!("  policy: beside {:?} or worse, at {}/1000", policy.least, policy.at);
    {
        let shadow_train = count(&train_mal, &|i| policy.shadow_refuses(&docs[i], honest(i)));
        let shadow_beside = count(&beside_mal, &|i| policy.shadow_refuses(&docs[i], honest(i)));
        let benign_blocked = count(&benign_all, &|i| policy.refuses(&docs[i], scored[i]));
        println!(
            "    its shadow TRAIN {}, shadow x-*/older {}, benign all (final) {}",
            figure(shadow_train.0, shadow_train.1),
            figure(shadow_beside.0, shadow_beside.1),
            figure(benign_blocked.0, benign_blocked.1)
        );
    }

    // Leave one writer out: the figure candidates are chosen on.
    let mut pinned = short::load();
    let lowo_scores = lowo::scores(
        &docs,
        &pool,
        &|fit| train(&docs, fit),
        &|i, b, w| thousandths(prob(&docs[i].features, b, w)),
        &mut |b, w| short::score_lowo(&mut pinned, &|f| thousandths(prob(f, b, w))),
    );
    let p = lowo::report(&docs, &lowo_scores, threshold, policy, MAX_FALSE_POSITIVES);
    short::report(&docs, &lowo_scores, threshold, policy);
    short::pinned(&pinned, policy, &|f| thousandths(prob(f, bias, &w)));
    let oof_train = count(&train_mal, &|i| oof[i] >= threshold);
    let oof_benign = count(&benign_train, &|i| oof[i] >= threshold);
    println!(
        "  summary: lowo flagged {:.1}% / benign {:.1}%, corroborated {:.1}% / benign {:.1}%, at matched benign {:.1}% (at {}); out of fold TRAIN {:.1}% / benign {:.1}%",
        100.0 * p.flagged,
        100.0 * p.benign_flagged,
        100.0 * p.corroborated,
        100.0 * p.benign_corroborated,
        100.0 * p.matched,
        p.matched_at,
        100.0 * rate(oof_train.0, oof_train.1),
        100.0 * rate(oof_benign.0, oof_benign.1)
    );

    if let Ok(ks) = std::env::var("ECP_CURVE") {
        let ks: Vec<usize> = ks.split(',').map(|k| k.trim().parse().expect("ECP_CURVE=0,2,4,6,8")).collect();
        let draws = env("ECP_DRAWS").parse().unwrap_or(3);
        curve::report(
            &docs,
            &pool,
            &|fit| train(&docs, fit),
            &|i, b, w| thousandths(prob(&docs[i].features, b, w)),
            &ks,
            draws,
        );
    }

    // A candidate is measured, never written: the scanner reads its own
    // features.
    if env("ECP_DRY").is_empty() && env("ECP_FEATURES").is_empty() && env("ECP_EVIDENCE").is_empty() {
        let mut bytes = Vec::with_capacity(4 * (BUCKETS + 1));
        bytes.extend_from_slice(&bias.to_le_bytes());
        for x in &w {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        fs::write(root.join("src/scan/classifier/weights.bin"), &bytes).expect("write weights.bin");
        let mut list = String::from(
            "# The training data of scan::classifier (examples/train_scan_model.rs):\n# the TRAIN split of testdata/scan-corpus, one `label path` a line.\n",
        );
        for &i in &pool {
            list.push_str(&format!(
                "{} {}\n",
                if docs[i].malicious { "malicious" } else { "benign" },
                docs[i].name
            ));
        }
        fs::create_dir_all(root.join("testdata/scan-model")).expect("mkdir scan-model");
        fs::write(root.join("testdata/scan-model/train.txt"), list).expect("write train.txt");
    }
    let words_used = w[..variants::word_dim()].iter().filter(|&&x| x != 0.0).count();
    let evidence_used = w[variants::word_dim()..].iter().filter(|&&x| x != 0.0).count();
    println!("  weights: {words_used} word buckets, {evidence_used} evidence buckets in use");

    if env("ECP_READ_HELD") == "1" {
        // HELD: read once per model that would ship, never to choose.
        let held = |d: &Doc| d.malicious && d.split == Split::Held;
        let mut by_class: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
        for (i, d) in docs.iter().enumerate().filter(|(_, d)| held(d)) {
            let row = by_class.entry(&d.class).or_default();
            row[0] += 1;
            row[1] += usize::from(d.blocked);
            row[2] += usize::from(policy.refuses(d, scored[i]));
            row[3] += usize::from(scored[i] >= threshold);
        }
        println!("  HELD (read once): {:<22} {:>8} {:>12} {:>12}", "class", "rules", "+corrob.", "clf alone");
        let mut total = [0usize; 4];
        for (class, row) in &by_class {
            println!(
                "    {class:<38} {:>8} {:>12} {:>12}",
                format!("{}/{}", row[1], row[0]),
                format!("{}/{}", row[2], row[0]),
                format!("{}/{}", row[3], row[0])
            );
            for k in 0..4 {
                total[k] += row[k];
            }
        }
        println!(
            "    all: rules {}, rules + corroboration {}, classifier alone {}",
            figure(total[1], total[0]),
            figure(total[2], total[0]),
            figure(total[3], total[0])
        );
    }
    if threshold != classifier::THRESHOLD {
        println!("note: set classifier::THRESHOLD to {threshold}");
    }
    if policy.at != classifier::CORROBORATES_AT {
        println!("note: set classifier::CORROBORATES_AT to {}", policy.at);
    }
    if policy.least != classifier::CORROBORATES_BESIDE {
        println!("note: set classifier::CORROBORATES_BESIDE to Severity::{:?}", policy.least);
    }
}
