//! The learning curve over writers (session 28, `ECP_CURVE=1`): does the
//! second stage read a writer it has not seen better as it sees more
//! writers? For each independent writer left out, a model is trained on
//! the pool's skills of no writer (the engineers' own, earlier corpora)
//! and those of `k` of the other writers, drawn at random (`ECP_DRAWS`
//! draws, 3 by default; one at `k = 0` and at every other writer), and
//! scores the writer left out. The scores of one draw are pooled over
//! every writer left out and read as `lowo::report` reads them: recall at
//! 1–10 % of their benign skills and the area under the curve; printed per
//! `k` as the mean of the draws and their range. Still climbing at the
//! last `k`, more writers are the lever; flat, the model's form is.
//!
//! `ECP_CURVE_SHARE=0.5` keeps that share of each seen writer's skills
//! (drawn too): `k` writers at half their skills against `k / 2` at all
//! of theirs tells more writers from more skills.

use super::Doc;
use super::lowo::{SHARES, curve, writers};

/// Trains on the given skills: the bias and the weights.
type Train<'a> = &'a dyn Fn(&[usize]) -> (f32, Vec<f32>);

/// A small deterministic generator (SplitMix64): the draws repeat from
/// one run to the next.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `k` of `from`, drawn without replacement.
    fn pick<'a>(&mut self, from: &[&'a str], k: usize) -> Vec<&'a str> {
        let mut v = from.to_vec();
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
        v.truncate(k);
        v
    }
}

/// Prints the learning curve over `ks` writers seen.
pub(crate) fn report(
    docs: &[Doc],
    pool: &[usize],
    train: Train<'_>,
    score: &dyn Fn(usize, f32, &[f32]) -> u16,
    ks: &[usize],
    draws: usize,
) {
    let all = writers(docs, pool);
    let mut rng = Draws(0x5eed_0028);
    let share: f64 = std::env::var("ECP_CURVE_SHARE").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    println!(
        "  learning curve: each of {} writers left out, trained on the skills of no writer and k others",
        all.len()
    );
    println!(
        "    {:>2} {:>5} | {:>17} {:>17} {:>17} {:>17} {:>17} | {:>21}",
        "k", "draws", "at benign 1%", "2%", "3%", "5%", "10%", "AUC"
    );
    for &k in ks {
        let k = k.min(all.len() - 1);
        let n = if k == 0 || k == all.len() - 1 { 1 } else { draws };
        let mut figures = Vec::new();
        for _ in 0..n {
            let (mut benign, mut malicious) = (Vec::new(), Vec::new());
            for w in &all {
                let others: Vec<&str> = all.iter().map(String::as_str).filter(|o| o != w).collect();
                let seen = rng.pick(&others, k);
                let fit: Vec<usize> = pool
                    .iter()
                    .copied()
                    .filter(|&i| match docs[i].writer.as_deref() {
                        None => true,
                        Some(o) => {
                            seen.contains(&o) && ((rng.next() >> 11) as f64) < share * (1u64 << 53) as f64
                        }
                    })
                    .collect();
                let (bias, weights) = train(&fit);
                for &i in pool.iter().filter(|&&i| docs[i].writer.as_deref() == Some(w.as_str())) {
                    let s = score(i, bias, &weights);
                    if docs[i].malicious { malicious.push(s) } else { benign.push(s) }
                }
            }
            figures.push(curve(&benign, &malicious));
        }
        let cell = |get: &dyn Fn(usize) -> f64, digits: usize| {
            let v: Vec<f64> = (0..figures.len()).map(get).collect();
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
            if v.len() == 1 {
                format!("{mean:.digits$}")
            } else {
                format!("{mean:.digits$} ({lo:.digits$}–{hi:.digits$})")
            }
        };
        let at: Vec<String> = (0..SHARES.len()).map(|s| cell(&|d| figures[d].at[s], 1)).collect();
        println!(
            "    {k:>2} {n:>5} | {:>17} {:>17} {:>17} {:>17} {:>17} | {:>21}",
            at[0],
            at[1],
            at[2],
            at[3],
            at[4],
            cell(&|d| figures[d].auc, 4)
        );
    }
}
