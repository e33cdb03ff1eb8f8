//! Trains the scanner's second stage (`scan::classifier`) and writes its
//! weights, from the TRAIN split of the scan corpus only:
//!
//! ```text
//! cargo run -p ecp-protocol --release --example train_scan_model
//! ```
//!
//! Training data: the malicious skills of `testdata/scan-corpus` that the
//! corpus test puts in its TRAIN split (neither `older.txt`, nor `x-*`, nor
//! HELD: the first hex digit of SHA-256 of `class/file.md` is 8–f), and the
//! benign skills halved by the same rule on their corpus-relative name.
//! They are listed in `testdata/scan-model/train.txt`; the HELD halves are
//! never read while training, only scored at the end.
//!
//! Model: logistic regression over the hashed features of
//! `classifier::features`, L2-regularised, classes weighted to balance,
//! full-batch Adam from zero (deterministic). The thresholds are chosen on
//! out-of-fold scores of TRAIN (5 folds): `THRESHOLD` the lowest that keeps
//! at most 3% of TRAIN's benign skills above it, `CORROBORATES_AT` (the
//! score that corroborates a rule's `Medium` finding into a refusal) 1%. Writes `src/scan/classifier/weights.bin`
//! and prints the figures: TRAIN out-of-fold, HELD alone, and HELD with the
//! rules (blocked by the rules, or scored above the threshold).

use std::fs;
use std::path::{Path, PathBuf};

use ecp_protocol::scan::classifier::{BUCKETS, features, probability};
use ecp_protocol::scan::{DEFAULT_THRESHOLD, Scanner};
use sha2::{Digest, Sha256};

const EPOCHS: usize = 300;
const L2: f32 = 1e-4;
const RATE: f32 = 0.05;
const FOLDS: usize = 5;
const MAX_FALSE_POSITIVES: f64 = 0.03;
/// The share of TRAIN's benign skills the corroboration threshold allows
/// (out of fold): it takes part in a refusal, so it is stricter.
const MAX_CORROBORATED_FALSE_POSITIVES: f64 = 0.01;

struct Doc {
    name: String,
    malicious: bool,
    held: bool,
    body: String,
    features: Vec<u32>,
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

fn corpus() -> Vec<Doc> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/scan-corpus");
    let older: Vec<String> = fs::read_to_string(root.join("older.txt"))
        .expect("older.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    let mut docs = Vec::new();
    for kind in ["malicious", "benign"] {
        let mut paths = Vec::new();
        collect(&root.join(kind), &mut paths);
        paths.sort();
        for path in paths {
            let name =
                path.strip_prefix(root.join(kind)).expect("under kind").to_string_lossy().replace('\\', "/");
            let file = name.rsplit('/').next().unwrap_or(&name);
            // Written beside the rules, or the first corpus: in neither half.
            if kind == "malicious" && (file.starts_with("x-") || older.contains(&name)) {
                continue;
            }
            let held = Sha256::digest(name.as_bytes())[0] < 0x80;
            let body = fs::read_to_string(&path).expect("read corpus file");
            let features = features(&body);
            docs.push(Doc {
                name: format!("{kind}/{name}"),
                malicious: kind == "malicious",
                held,
                body,
                features,
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
    let class_weight = |m: bool| if m { n / (2.0 * positives) } else { n / (2.0 * negatives) };
    let mut w = vec![0f32; BUCKETS + 1];
    let (mut m1, mut m2) = (vec![0f32; BUCKETS + 1], vec![0f32; BUCKETS + 1]);
    let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
    for epoch in 1..=EPOCHS {
        let mut g = vec![0f32; BUCKETS + 1];
        for &i in docs {
            let d = &all[i];
            let p = probability(&d.features, w[0], &w[1..]);
            let err = (p - f32::from(u8::from(d.malicious))) * class_weight(d.malicious) / n;
            let scale = 1.0 / (d.features.len().max(1) as f32).sqrt();
            g[0] += err;
            for &k in &d.features {
                g[k as usize + 1] += err * scale;
            }
        }
        for k in 1..=BUCKETS {
            g[k] += L2 * w[k];
        }
        let (c1, c2) = (1.0 - b1.powi(epoch as i32), 1.0 - b2.powi(epoch as i32));
        for k in 0..=BUCKETS {
            m1[k] = b1 * m1[k] + (1.0 - b1) * g[k];
            m2[k] = b2 * m2[k] + (1.0 - b2) * g[k] * g[k];
            w[k] -= RATE * (m1[k] / c1) / ((m2[k] / c2).sqrt() + eps);
        }
    }
    let bias = w[0];
    (bias, w[1..].to_vec())
}

/// A probability as `classifier::score` reports it.
fn thousandths(p: f32) -> u16 {
    (p * 1000.0).round() as u16
}

fn rate(hit: usize, total: usize) -> f64 {
    hit as f64 / total.max(1) as f64
}

fn main() {
    let docs = corpus();
    let train_set: Vec<usize> = (0..docs.len()).filter(|&i| !docs[i].held).collect();
    let held_set: Vec<usize> = (0..docs.len()).filter(|&i| docs[i].held).collect();

    // Out-of-fold scores on TRAIN, for the threshold.
    let mut oof = vec![0f32; docs.len()];
    for fold in 0..FOLDS {
        let fit: Vec<usize> = train_set
            .iter()
            .copied()
            .enumerate()
            .filter(|(k, _)| k % FOLDS != fold)
            .map(|(_, i)| i)
            .collect();
        let (bias, w) = train(&docs, &fit);
        for (k, &i) in train_set.iter().enumerate() {
            if k % FOLDS == fold {
                oof[i] = probability(&docs[i].features, bias, &w);
            }
        }
    }
    let benign_oof: Vec<f32> = train_set.iter().filter(|&&i| !docs[i].malicious).map(|&i| oof[i]).collect();
    let lowest_within = |share: f64| {
        (0..=1000u16)
            .find(|&t| {
                rate(benign_oof.iter().filter(|&&p| thousandths(p) >= t).count(), benign_oof.len()) <= share
            })
            .unwrap_or(1000)
    };
    let threshold = lowest_within(MAX_FALSE_POSITIVES);
    let corroborates_at = lowest_within(MAX_CORROBORATED_FALSE_POSITIVES);
    let above = |p: f32| thousandths(p) >= threshold;

    let (bias, w) = train(&docs, &train_set);
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
    for &i in &train_set {
        list.push_str(&format!(
            "{} {}\n",
            if docs[i].malicious { "malicious" } else { "benign" },
            docs[i].name
        ));
    }
    fs::create_dir_all(root.join("testdata/scan-model")).expect("mkdir scan-model");
    fs::write(root.join("testdata/scan-model/train.txt"), list).expect("write train.txt");

    let count = |set: &[usize], malicious: bool, hit: &dyn Fn(usize) -> bool| {
        let of: Vec<usize> = set.iter().copied().filter(|&i| docs[i].malicious == malicious).collect();
        (of.iter().filter(|&&i| hit(i)).count(), of.len())
    };
    let scanner = Scanner::standard();
    let rules = |i: usize| scanner.scan(&docs[i].body).is_blocked(DEFAULT_THRESHOLD);
    let model = |i: usize| above(probability(&docs[i].features, bias, &w));
    println!(
        "trained on {} skills ({} malicious), threshold {threshold}/1000, corroborates at {corroborates_at}/1000",
        train_set.len(),
        count(&train_set, true, &|_| true).1
    );
    let oof_hit = |i: usize| above(oof[i]);
    for (label, set, hit) in [
        ("TRAIN out-of-fold, classifier alone", &train_set, &oof_hit as &dyn Fn(usize) -> bool),
        ("HELD, classifier alone", &held_set, &model),
        ("HELD, the scanner (rules, corroborated)", &held_set, &rules),
        ("HELD, the scanner or classifier alone", &held_set, &|i| rules(i) || model(i)),
    ] {
        let (tp, p) = count(set, true, hit);
        let (fp, n) = count(set, false, hit);
        println!(
            "  {label:<38} recall {tp}/{p} = {:.1}%, false positives {fp}/{n} = {:.1}%",
            100.0 * rate(tp, p),
            100.0 * rate(fp, n)
        );
    }
    if threshold != ecp_protocol::scan::classifier::THRESHOLD {
        println!("note: set classifier::THRESHOLD to {threshold}");
    }
    if corroborates_at != ecp_protocol::scan::classifier::CORROBORATES_AT {
        println!("note: set classifier::CORROBORATES_AT to {corroborates_at}");
    }
}
