//! The second stage (#14 item 5): a linear classifier over hashed words,
//! the pairs of them that hold a symbol, and the rules' findings below the
//! refusing threshold, whose score is reported beside the rule findings, never
//! instead of them.
//!
//! The rules say *why* a skill is refused; this says only how much its
//! text, and what the rules half saw in it, reads like the malicious
//! skills it was trained on. It catches some phrasings no rule
//! anticipated, and it is wrong more often than the rules, so it never
//! blocks alone: its score is [`ScanReport::classifier`] (thousandths,
//! 0–1000), and at [`THRESHOLD`] or above it adds one finding,
//! `classifier.suspicious`, at [`SEVERITY`] — below every threshold a node
//! refuses at by default — for a person to look at. Beside a rule's
//! finding of [`CORROBORATES_BESIDE`] or worse, a score at
//! [`CORROBORATES_AT`] refuses the skill (`corroborate`): the one place it
//! takes part in a refusal, and never without a rule's finding, which the
//! refusal names, nor on a body of fewer than [`MIN_WORDS`] word features,
//! whose score rests on too few weights to refuse by.
//!
//! # Model
//!
//! Tokens are runs of ASCII letters, digits and `_` (lower-cased), and the
//! punctuation of shell and code (`|`, `$`, `>`, `(`…) one byte each. Each
//! token, and each pair of neighbouring tokens one of which is a symbol
//! (`| sh`, `$ (`: the shapes of code; pairs of two words were features
//! until session 26, and learned topics, see below), is hashed (eight
//! bytes at a time, then MurmurHash3's finalizer) into one of
//! [`WORD_BUCKETS`],
//! weighted `1/√n` so that long and short bodies score alike. The rules'
//! findings below the threshold add up to five features each (`evidence`:
//! rule, family and category with their severity), weighted `1`. The score
//! is the logistic of the bias plus the weights of the features present.
//! The kinds of purpose the skill's head names (`purpose`: deploy,
//! install, security, data, writing, memory, code, operations,
//! credentials, clean-up, or none) can be features weighted `1` too
//! ([`PURPOSE`]; measured in session 27, not shipped: below).
//!
//! The weights are `weights.bin` (little-endian `f32`: the bias, then one
//! weight per bucket, [`BUCKETS`] in all), compiled in: nothing is
//! downloaded. They are trained by `cargo run -p ecp-protocol --release
//! --example train_scan_model` on the TRAIN split of
//! `testdata/scan-corpus` only (the malicious skills the corpus test calls
//! TRAIN, and the benign skills halved by the same rule), which
//! `testdata/scan-model/train.txt` lists; the example prints the out-of-fold
//! figures every setting is chosen on, and the HELD figures only when
//! asked (`ECP_READ_HELD=1`).
//!
//! # What it learns (measured 2026-11-27, `protocol/benches/README.md`)
//!
//! Mostly who wrote a skill, and what about. Trained on TRAIN, it flags
//! 75 % of TRAIN's malicious skills out of fold but 14 % of the `x-*` and
//! `older` skills (other writers, never trained on); trained on those, it
//! flagged 3 % of TRAIN (session 23). The rules' evidence alone carries
//! over a little better (6–10 % each way) and adds little beside the
//! words, so it is trained on TRAIN alone, and its part in HELD's recall
//! is an upper bound on its part in the wild.
//!
//! Every candidate is chosen on *leave one writer out* (session 26,
//! `train_scan_model`): for each of the five independent writers of
//! TRAIN, a model trained on every skill but theirs scores theirs (468
//! malicious, 365 benign in all). Pairs of two words were most of the
//! features and learned topics: with pairs only beside a symbol of code
//! and twice the buckets (8,192 were three quarters in use), pooled over
//! the five writers, retrained the same day:
//!
//! | leave one writer out | all pairs, 8,192 | symbol pairs, 16,384 |
//! |---|---:|---:|
//! | flagged at the chosen threshold (benign) | 63.5 % (2.2 %) | 70.7 % (3.3 %) |
//! | flagged at ≤ 3 % / 5 % / 10 % of their benign | 68.4 / 73.5 / 82.1 % | 69.0 / 78.2 / 86.8 % |
//! | area under the curve | 0.935 | 0.947 |
//! | refused by a corroboration, rules' refusals aside (benign) | 21 (3) | 21 (3) |
//! | out of fold, TRAIN (benign 2.9 % both) | 69.9 % | 75.4 % |
//! | `x-*` / `older`, never trained on | 8.1 % | 14.4 % |
//!
//! Tried and not better, leave one writer out at ≤ 3 % of the benign (the
//! trainer's `ECP_FEATURES`, its own hash, three hash seeds for the
//! finalists, which move a figure at a fixed benign share by ±3 points):
//! words alone (no pairs) 72 % at 8,192 buckets, against all pairs 69 %
//! and symbol pairs 73 % at 16,384 (means of the seeds); words alone in
//! the scanner's hash: 69 % at 2.5 % benign corroborating less once the
//! corpus test's false positives are held; tokens inside code only 38 %; 1,024
//! buckets 34 %; stronger L2 (`1e-3`) 49 %; the rules' evidence alone
//! 7 %; classes of behaviour word (a secret source, a network or exec
//! sink, a decode, a persistence place, concealment, a control
//! disabled, a drop host, words to the agent), in code or prose, and the
//! pairs of classes present, beside the evidence: no gain (64–67 %);
//! only the words found in malicious skills of at least 2–5 writers:
//! 57–73 %, no gain.
//!
//! ## Intent (session 27): what the skill says it is for
//!
//! Seven writers now (the two of session 26 joined: 591 malicious, 480
//! benign skills of TRAIN). Features of the *document*, each added to the
//! model above and measured leave one writer out (recall at ≤ 3 % of the
//! writers' benign; three hash seeds where marked, which move it ±1):
//!
//! | features added | at 1 / 2 / 3 / 5 / 10 % of the benign | AUC |
//! |---|---:|---:|
//! | none (the model above, retrained) | 54.0 / 61.9 / 68.5 / 73.4 / 84.6 | 0.9464 |
//! | **the purpose's kind** (`purpose`, [`PURPOSE`]) | 57.5 / 62.1 / 69.7 / 73.9 / 87.3 | 0.9476 |
//! | purpose × each finding's family and category (3 seeds) | 56.5 / 63.8 / 69.3 / 74.0 / 85.5 | 0.947 |
//! | … and where the finding stands (section, hidden, last fifth, code; 3 seeds) | 52.7 / 64.1 / 68.9 / 73.5 / 85.8 | 0.948 |
//! | a finding's family the purpose does not account for (a hand table) | 50.6 / 58.4 / 66.5 / 75.8 / 85.4 | 0.9465 |
//! | purpose × behaviour marks, in code or prose (3 seeds) | 54.2 / 65.8 / 68.9 / 75.2 / 85.0 | 0.948 |
//! | voice: an order to the agent or a description, per finding and in all | 47.4 / 64.8 / 67.5 / 77.2 / 85.3 | 0.9477 |
//! | all of these (3 seeds) | 53.7 / 60.7 / 65.8 / 77.5 / 86.7 | 0.949 |
//!
//! The purpose alone is the one that gains at every benign share (a point
//! at 3 %, three at 1 % and 10 %), at the cost of a few lines of the head;
//! what it learned reads as intent, not as a writer: a security tool's or
//! a credential manager's purpose lowers the score (−0.34, −0.41), a
//! writing tool's or none raises it (+0.13, +0.09). Every crossing of the
//! purpose with what the steps do (the rules' findings below the
//! threshold, behaviour words, their place, their voice) reads the same
//! skills as the words do and adds nothing a writer kept out would carry:
//! alone (no words), these features flag 22.7 % at 3 % of the benign
//! (AUC 0.78) against the rules' evidence's 7.6 % (0.62), and beside the
//! words they move the figure within the seeds' noise. At the threshold
//! chosen out of fold, the purpose flags more of the kept-out writers'
//! benign skills (20 of 480 against 14): the score is a hint, and its
//! corroborations beyond the rules refuse 21 of their malicious skills
//! as before, and 3 of their benign against 4. It costs 2.0 % of a
//! typical scan (`protocol/benches/README.md`), over the 1 % a change
//! may cost, and on the two writers kept out of session 27 (210
//! malicious, 210 benign, never trained on) it caught none more and
//! spared 2 benign skills of 27 refused: the lead left it switched off
//! ([`PURPOSE`]) until its head is read from the frontmatter the rules
//! already parse.
//!
//! ## Nine writers, the learning curve, where a word sits (session 28)
//!
//! Nine writers (the two of session 27 joined: 697 malicious, 578 benign
//! skills of TRAIN). Retrained with them, the features above flag 75.5 %
//! of the kept-out writer's malicious skills at 3.3 % of their benign
//! (58.2 / 71.2 / 75.5 / 80.6 / 87.5 % at 1 / 2 / 3 / 5 / 10 %, AUC
//! 0.9567); of the 114 the rules do not refuse, 66.7 % at 3 % (AUC
//! 0.9404). Not shipped: it scores a short benign body pinned as not
//! refused (`a_token_in_a_basic_auth_call…`) 762, so its corroboration
//! (`Low` at 654) would have to rise to 763 (20 malicious corroborated,
//! 1 benign, against 25 and 3).
//!
//! *The learning curve* (`ECP_CURVE=0,2,4,6,8`): each writer left out,
//! trained on the skills of no writer and `k` others drawn at random (3
//! draws), pooled:
//!
//! | `k` writers seen | at 1 / 3 / 5 % of the benign | AUC |
//! |---:|---:|---:|
//! | 0 | 24.8 / 47.6 / 56.8 | 0.887 |
//! | 2 | 37.7 / 61.5 / 69.0 | 0.927 |
//! | 4 | 51.8 / 67.8 / 73.5 | 0.940 |
//! | 6 | 59.1 / 72.0 / 76.1 | 0.948 |
//! | 8 | 58.2 / 75.5 / 80.6 | 0.957 |
//!
//! Still climbing at eight, about six points at 3 % per doubling of the
//! writers: more writers are a lever, a slow one. Eight writers at half
//! their skills (`ECP_CURVE_SHARE=0.5`) read the ninth a little better
//! than four at all of theirs (69.4 % against 67.8 % at 3 %, AUC 0.943
//! against 0.940): the skills count, their writers' variety a little more.
//!
//! *Features of another kind*, leave one writer out over nine (the
//! trainer's own hash, means of three seeds; its symbol pairs at 16,384
//! buckets, the reference, 74.1 % at 3 %, AUC 0.955, `x-*`/`older` 20.8 %):
//!
//! | candidate | at 1 / 3 / 5 % | AUC | beyond the rules, 3 % | `x-*`/`older` |
//! |---|---:|---:|---:|---:|
//! | 65,536 buckets | 61.2 / 73.9 / 78.3 | 0.958 | | 23.3 % |
//! | a second hash of every token (the control) | 61.8 / 75.9 / 79.6 | 0.956 | 70.2 % | 20.0 % |
//! | every token also *in its place* (prose, code, heading, frontmatter) | 63.8 / 79.0 / 82.9 | 0.962 | 74.6 % | 21.3 % |
//! | … prose only | 65.0 / 77.3 / 82.3 | 0.960 | 73.1 % | 27.0 % |
//! | … frontmatter only | 60.2 / 76.9 / 80.4 | 0.958 | 70.8 % | 14.4 % |
//! | the placed token instead of the plain one (1 seed) | 49.5 / 74.3 / 79.6 | 0.952 | | 15.1 % |
//! | character 3–5-grams of the code (1 seed) | 73.3 / 77.8 / 81.6 | 0.958 | | 27.4 % |
//! | … of the lines a rule's finding stands on (1 seed) | 71.9 / 81.2 / 86.5 | 0.965 | 28.9 % | 72.9 % |
//! | … of those below the refusing threshold (1 seed) | 57.5 / 73.6 / 78.9 | 0.955 | 69.3 % | 23.4 % |
//!
//! And in the scanner's own hash (one model each; main's features 58.2 /
//! 75.5 / 80.6, AUC 0.9567, beyond the rules 66.7 %, `x-*`/`older`
//! 20.6 %): L2 `1e-5` 62.3 / 76.3 / 82.1, 0.9628, 64.9 %, 21.3 %; `3e-4`
//! 57.7 / 71.6 / 76.8, 0.9481; every token placed 58.4 / 76.9 / 83.8,
//! 0.9629, 71.9 %, 19.0 %, at 6.2 % of a typical scan; the frontmatter's
//! tokens ([`FRONT`]) 59.3 / 76.6 / 79.3, 0.9584, 68.4 %, 13.8 %, at
//! 0.66 %; both with L2 `1e-5` 63.7 / 78.5 / 83.4, 0.9650, 66.7 %,
//! 15.1 %, but short benign bodies pinned as not refused scored 746–797.
//!
//! Read: capacity is not the limit (65,536 buckets gain nothing). Where a
//! word sits is the one feature of another kind that gained beyond its
//! control at every share, and in prose most (the same word said to a
//! reader and run in a block); the frontmatter's part carries to the
//! kept-out writers but costs the `x-*`/`older` skills 6–7 points
//! whenever it is placed without the prose, so [`FRONT`] stays off. The character
//! n-grams of the lines the rules woke flag most, but of the skills the
//! rules refuse already: beyond the rules they fall to 28.9 % (they learn
//! that a rule fired). The prose's placed words, the best-carrying
//! candidate, cost a second feature per prose token and each line's
//! start (estimated 2–3 % of a typical scan, between the frontmatter's
//! 0.66 % for 19 tokens and every token's 6.2 %; not built): left for a
//! cheaper walk.
//!
//! ## Eleven writers, and short bodies (session 29)
//!
//! Session 28's retrain could not ship: short benign bodies the unit
//! tests pin as not refused scored up to 762 beside a finding, and the bar
//! would have had to rise above them. The unit tests scan 444 bodies
//! beside a `Low` finding or worse that the rules do not refuse; they have
//! 18 word features at the median and 75 at most, where no training skill
//! is that short (the shortest 5 % of TRAIN's have 90 or more; 4.3 % of
//! the corpus's malicious skills, HELD aside, and 1.7 % of its benign have
//! fewer than 80). Their scores rest on a handful of weights: between the
//! eleven models trained leave one writer out, a body's score moves by 14
//! at the median, 90 at the 90th percentile, 226 at most. Two remedies,
//! each measured leave one writer out over the eleven writers (855
//! malicious, 740 benign skills of TRAIN; "short" below 150 word features:
//! 161 and 223):
//!
//! | model | at 1 / 2 / 3 / 5 / 10 % of the benign | AUC | short: at 1 / 3 / 5 %, AUC | corroborated beyond the rules (benign) | the pinned bodies: highest, swing 90 % / most |
//! |---|---:|---:|---:|---:|---:|
//! | main's training list (seven writers), at 724 | 56.7 / 63.2 / 70.1 / 75.9 / 85.3 | 0.9520 | 44.1 / 48.4 / 63.4, 0.910 | 28 (3) | |
//! | **eleven writers**, at 653 | 64.6 / 71.7 / 76.0 / 82.1 / 89.8 | 0.9634 | 54.7 / 62.1 / 69.6, 0.928 | 32 (4) | 861, 90 / 226 |
//! | … words shrunk, `SHRINK` 10 | 65.0 / 71.0 / 76.1 / 82.5 / 89.4 | 0.9630 | 54.0 / 62.7 / 70.2, 0.928 | 30 (4) | 790, 64 / 140 |
//! | … 25 | 64.4 / 70.9 / 75.8 / 82.5 / 89.1 | 0.9624 | 60.9 / 62.1 / 70.2, 0.928 | 31 (4) | 678, 44 / 128 |
//! | … 50 | 62.7 / 70.2 / 76.1 / 82.5 / 89.2 | 0.9612 | 59.0 / 62.7 / 68.9, 0.926 | 29 (4) | 535, 36 / 119 |
//! | … 100 | 64.2 / 69.5 / 74.3 / 80.6 / 86.8 | 0.9580 | 53.4 / 59.6 / 67.7, 0.922 | 30 (3) | 414, 41 / 90 |
//! | … 200 | 60.5 / 65.5 / 68.4 / 75.4 / 84.2 | 0.9494 | | 29 (5) | |
//!
//! The first row is each writer scored by a model trained on main's list
//! less that writer (the trainer's `ECP_FIT_WITHOUT=session 27,session
//! 28`): the four writers added gain 6–8 points at every share, as the
//! learning curve said. *Shrinking* a body's words toward the bias
//! ([`word_scale`]: `n / (n + SHRINK)` of `1/√n`) steadies the short
//! bodies' scores (their swing halves at 25) and costs nothing leave one
//! writer out up to 50, but it compresses every score, and the `x-*` and
//! `older` skills flagged at the threshold fall from 23.9 % to 20.8 % at
//! 25. A *floor* ([`MIN_WORDS`]: a score that read fewer than 80 word
//! features never corroborates) moves no score and costs no
//! corroboration: none of the 32 malicious and 4 benign skills
//! corroborated beyond the rules leave one writer out has fewer than 100.
//! Shipped: eleven writers, no shrink, the floor, the bars the training
//! chose (631, 653 beside `Low`: no raise for the unit tests). The one
//! unit-test body main's model corroborated (810, an order appended to
//! `AGENTS.md` past `code::written`'s 24 literals, 53 word features) is
//! no longer refused.
//!
//! [`ScanReport::classifier`]: super::ScanReport::classifier

use std::sync::OnceLock;

mod corroborate;
mod evidence;
mod place;
mod policy;
mod purpose;
mod tokens;
mod voice;
pub use corroborate::beside;
#[cfg(test)]
pub(crate) use corroborate::corroborated;
pub(crate) use corroborate::corroborated_read;
pub use evidence::EVIDENCE_BUCKETS;
#[doc(hidden)]
pub use policy::apply as apply_policy;
pub(crate) use policy::refine;
pub use policy::{LOWERED_TO, NEEDS_SECOND, PAIR_SEVERITY, PAIRS, REFUSE_ALONE, SECOND_AT};
/// The kinds of purpose and their words, for the trainer's candidates.
#[doc(hidden)]
pub use purpose::KINDS as PURPOSE_KINDS;
pub use voice::SHOWN;
pub(crate) use voice::refine as refine_voice;
#[doc(hidden)]
pub use voice::{apply as apply_voice, frame, never_shown};

use super::{Category, Finding, Severity};
use tokens::for_each_feature;

/// Hash buckets of the words and their pairs with symbols: 8,192 until
/// session 26 held three quarters of them in use, and the collisions cost
/// recall on writers the model was not trained on (the module doc).
pub const WORD_BUCKETS: usize = 1 << 14;
/// The model's feature count: the words' buckets, then the rules'
/// evidence's ([`EVIDENCE_BUCKETS`]).
pub const BUCKETS: usize = WORD_BUCKETS + EVIDENCE_BUCKETS;
/// Whether the kinds of purpose a skill's head names (`purpose`) are
/// features: off, as they cost 2.0 % of a typical scan for about a point
/// leave one writer out (the module doc). The trainer follows it.
pub const PURPOSE: bool = false;
/// Whether a token of the frontmatter is a second feature, itself there
/// (`place`): off, as leave one writer out it gained a point at 3 % of the
/// benign and lost one at 5 %, and flagged 13.8 % of the `x-*` and `older`
/// skills against 20.6 % (session 28, the module doc). The trainer follows
/// it.
pub const FRONT: bool = false;
/// How far a body's words are shrunk toward the bias: their part of the
/// score is `n / (n + SHRINK)` of what `1/√n` alone gives ([`word_scale`]).
/// 0, none: session 29 measured 10–200, which steadied short bodies'
/// scores but flagged fewer of the `x-*` and `older` skills (the module
/// doc). The trainer follows it (`ECP_SHRINK` for a candidate).
pub const SHRINK: f32 = 0.0;
/// Bytes of a body the classifier reads, at most: a longer body is judged
/// by its start, keeping the cost linear and bounded.
const MAX_BYTES: usize = 256 * 1024;
/// Score (thousandths) at or above which `classifier.suspicious` is added:
/// chosen on the TRAIN split, out of fold, for at most 3% of its benign
/// skills.
pub const THRESHOLD: u16 = 631;
/// Score (thousandths) at or above which the classifier corroborates a
/// rule's finding of [`CORROBORATES_BESIDE`] or worse
/// (`classifier.corroborated`, which refuses): chosen on the TRAIN split,
/// out of fold, as the lowest that refuses at most 1% of its benign skills
/// *with* such a finding — stricter than [`THRESHOLD`]'s 3%, though the
/// score may be lower, as a rule's finding must stand beside it — then
/// raised until the benign skills refused stay within the corpus test's
/// ratchet, counted on the TRAIN half alone, out of fold (session 27) —
/// (sessions 27–28 then raised it above the short benign bodies the unit
/// tests pin as not refused, 679 → 724; since session 29 a body of fewer
/// than [`MIN_WORDS`] word features never corroborates, and the bar is
/// the training's own).
pub const CORROBORATES_AT: u16 = 653;
/// Word features (words and their pairs with a symbol, each bucket once)
/// a body's score must have read before it may corroborate: below it the
/// score rests on a handful of weights and swings from one training to the
/// next (session 29: the unit tests' short bodies beside a finding, 18
/// word features at the median, moved by up to 226 thousandths between
/// models trained leave one writer out), and no training skill is that
/// short (the shortest 5 % of TRAIN's have 90 or more). The score is still
/// reported, and still flags at [`THRESHOLD`].
pub const MIN_WORDS: usize = 80;
/// The least severity of the rule's finding a score at [`CORROBORATES_AT`]
/// corroborates: chosen with it by the training (`train_scan_model`), the
/// row of its grid (`Low`, `Medium`) that refused the most malicious
/// skills out of fold with their refusing findings taken away. `Info`
/// findings, never a reason to refuse, are never corroborated.
pub const CORROBORATES_BESIDE: Severity = Severity::Low;
/// Severity of `classifier.suspicious`: never a reason to refuse at the
/// default threshold, nor at `Medium`.
pub const SEVERITY: Severity = Severity::Low;

static WEIGHTS_BIN: &[u8] = include_bytes!("weights.bin");

/// The bias and the weight of each bucket.
fn weights() -> &'static (f32, Vec<f32>) {
    static W: OnceLock<(f32, Vec<f32>)> = OnceLock::new();
    W.get_or_init(|| {
        let floats: Vec<f32> =
            WEIGHTS_BIN.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        match floats.split_first() {
            Some((bias, rest)) if rest.len() == BUCKETS => (*bias, rest.to_vec()),
            // A weights file of the wrong size is a build mistake the
            // tests catch; scoring every body 0.5 keeps scans working.
            _ => (0.0, vec![0.0; BUCKETS]),
        }
    })
}

/// What each byte is to the tokenizer: [`WORD`] (ASCII letters, digits
/// and `_`), [`SYMBOL`] (the punctuation of shell and code, a token of one
/// byte) or 0 (a separator).
const CLASS: [u8; 256] = {
    let mut class = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        class[b] = if c.is_ascii_alphanumeric() || c == b'_' {
            WORD
        } else if matches!(
            c,
            b'|' | b';'
                | b'&'
                | b'$'
                | b'<'
                | b'>'
                | b'('
                | b')'
                | b'{'
                | b'}'
                | b'['
                | b']'
                | b'/'
                | b'\\'
                | b':'
                | b'='
                | b'@'
                | b'!'
                | b'`'
                | b'~'
                | b'%'
                | b'+'
                | b'*'
        ) {
            SYMBOL
        } else {
            0
        };
        b += 1;
    }
    class
};
const WORD: u8 = 1;
const SYMBOL: u8 = 2;

const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

/// MurmurHash3's 64-bit finalizer: every input bit reaches every output bit.
const fn finish(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The hash of the word `text[start..end]`, case-blind: eight bytes at a
/// time (a byte-at-a-time hash was a quarter of a whole scan). Setting bit
/// 5 of every byte folds `A`–`Z` onto `a`–`z` and keeps digits and every
/// lower-case letter as they are; `_` becomes 0x7f, which no other word
/// byte is. Eight bytes are read straight from `text` where it has them
/// (a copy into a buffer first costs a store-forwarding stall per word).
fn word(text: &[u8], start: usize, end: usize) -> u64 {
    let mut h = (end - start) as u64;
    let mut at = start;
    while at < end {
        let n = (end - at).min(8);
        let eight = match text.get(at..at + 8) {
            Some(eight) => u64::from_le_bytes(eight.try_into().expect("eight bytes")),
            None => text[at..at + n].iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b)),
        };
        let used = if n == 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 };
        h = (h ^ ((eight | 0x2020_2020_2020_2020) & used)).wrapping_mul(MIX).rotate_left(29);
        at += n;
    }
    finish(h)
}

/// The hash of a symbol token: apart from every word's (a word's hash
/// starts from its length, never 0x100 or more before mixing).
const fn symbol(c: u8) -> u64 {
    finish(0x1_0000 | c as u64)
}

/// The hash of the pair `previous`, `token`, in that order.
fn pair(previous: u64, token: u64) -> u64 {
    finish(previous.rotate_left(23) ^ token.wrapping_mul(MIX))
}

/// The features of a body: what the training reads and the score sums.
#[doc(hidden)]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Features {
    /// The buckets of the words and their pairs with a symbol present
    /// (`0..WORD_BUCKETS`), sorted.
    pub words: Vec<u32>,
    /// The rules' evidence and the purpose's kinds (`purpose`), in
    /// `WORD_BUCKETS..BUCKETS`, sorted.
    pub evidence: Vec<u32>,
}

/// The features of `body` whose rules found `findings`.
#[doc(hidden)]
pub fn features(body: &str, findings: &[Finding]) -> Features {
    let mut words = Vec::new();
    for_each_feature(body, |k| words.push(k));
    words.sort_unstable();
    let mut evidence = Vec::new();
    evidence::for_each(findings, |k| evidence.push(WORD_BUCKETS as u32 + k));
    if PURPOSE {
        purpose::for_each(body, |k| evidence.push(WORD_BUCKETS as u32 + k));
    }
    evidence.sort_unstable();
    Features { words, evidence }
}

/// The logistic of the bias, the words' weights, each [`word_scale`], and
/// the evidence's weights, each `1`.
#[doc(hidden)]
pub fn probability(features: &Features, bias: f32, weights: &[f32]) -> f32 {
    probability_with(features, bias, weights, SHRINK)
}

/// [`probability`] with the words shrunk by `shrink` instead of
/// [`SHRINK`]: the trainer's candidates.
#[doc(hidden)]
pub fn probability_with(features: &Features, bias: f32, weights: &[f32], shrink: f32) -> f32 {
    let words = features.words.iter().map(|&k| weights[k as usize]).sum();
    let evidence = features.evidence.iter().map(|&k| weights[k as usize]).sum();
    logistic(bias, words, features.words.len(), evidence, shrink)
}

/// The weight of each of `n` word features: `1/√n`, so that long and
/// short bodies score alike, times `n / (n + shrink)`, so that a body of
/// few words rests on the bias more than on the handful of weights it
/// read.
#[doc(hidden)]
pub fn word_scale(n: usize, shrink: f32) -> f32 {
    let n = n.max(1) as f32;
    n.sqrt() / (n + shrink)
}

fn logistic(bias: f32, words: f32, n: usize, evidence: f32, shrink: f32) -> f32 {
    let z = bias + words * word_scale(n, shrink) + evidence;
    1.0 / (1.0 + (-z).exp())
}

/// The score of `body` whose rules found `findings`, in thousandths.
pub fn score(body: &str, findings: &[Finding]) -> u16 {
    score_read(body, findings).0
}

/// [`score`], and how many word features it read (whether it may
/// corroborate: [`MIN_WORDS`]).
pub(crate) fn score_read(body: &str, findings: &[Finding]) -> (u16, usize) {
    let (bias, w) = weights();
    let (mut sum, mut n) = (0f32, 0usize);
    for_each_feature(body, |k| {
        sum += w[k as usize];
        n += 1;
    });
    let mut evidence = 0f32;
    evidence::for_each(findings, |k| evidence += w[WORD_BUCKETS + k as usize]);
    if PURPOSE {
        purpose::for_each(body, |k| evidence += w[WORD_BUCKETS + k as usize]);
    }
    ((logistic(*bias, sum, n, evidence, SHRINK) * 1000.0).round() as u16, n)
}

/// The finding a score at or above [`THRESHOLD`] adds, on line 1.
pub(super) fn finding(score: u16) -> Option<Finding> {
    (score >= THRESHOLD).then(|| Finding {
        rule_id: "classifier.suspicious".to_string(),
        category: Category::PromptInjection,
        severity: SEVERITY,
        line: 1,
        excerpt: format!("score {score}/1000 (threshold {THRESHOLD})"),
        message: "suspicious: the text reads like the malicious skills the second stage was trained on; \
                  a hint for a person, never a reason to refuse by itself"
            .to_string(),
        file: None,
    })
}

#[cfg(test)]
mod tests;
