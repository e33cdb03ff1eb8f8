//! Recall and false-positive rate of the safety scanner on the labeled
//! corpus in `testdata/scan-corpus/{malicious,benign}`.
//!
//! A malicious skill lives in `malicious/<class>/`, where the class is what
//! it does (the classes of #14: `code-credential-theft`, `encoded-exfil`,
//! `tampering`, `security-disable`, `supply-chain`, `trojan-companion`,
//! `persistence-prose`, `prompt-injection`, `evasion`, and `classic` for the
//! long-known shapes); recall is printed per class, and apart for who wrote
//! the skills ([`Split`]): the engineers who wrote the rules (`x-*` files),
//! the first corpus (listed in `older.txt`), and the rest, written without
//! reading the rules. The rest is split by a fixed rule into a TRAIN half,
//! which rule writers may open, and a HELD half, which they do not: the
//! HELD recall is the fair estimate of what the scanner catches in the
//! wild, and no list of HELD misses is ever printed. The benign skills are
//! halved by the same rule: a false positive of their HELD half is counted,
//! never listed, so that the false-positive rate, too, has a half that no
//! rule was tuned on. `ECP_CORPUS_MISSED`
//! lists the misses of the named splits with their findings (`train`,
//! `x`, `older`, comma-separated). Benign skills may be grouped in folders
//! too; their folder is printed beside a false positive.
//!
//! Malicious skills must be refused at `DEFAULT_THRESHOLD` and at most 3%
//! of the benign skills may be (#14's bound). #14's recall goal is 95%;
//! until it is met, [`MIN_RECALL`] is a ratchet at the recall reached, so
//! that no change lowers it, and until the 3% bound is met again
//! [`MAX_FALSE_POSITIVE_RATE`] is one too; at most 2% of the
//! benign skills may be held back from sharing for a credential that looks
//! live (the `secret` family's recall per rule is measured on made-up
//! credentials in `scan/secret/tests.rs`). A failure lists each miss and
//! each false positive with its findings.
//!
//! Every finding on the corpus (rule, severity, line, excerpt) is also kept
//! in `testdata/scan-corpus/findings.txt`, so that a change meant to make
//! the scanner faster shows any change in what it reports; a HELD skill's
//! findings are kept as a digest there, beside a digest of its name. After an
//! intended change of the rules, regenerate it with
//! `ECP_BLESS=1 cargo test -p ecp-protocol --test integration scan_corpus`
//! and review the diff.

use std::fs;
use std::path::{Path, PathBuf};

use std::collections::{BTreeMap, BTreeSet};

use ecp_protocol::scan::{Category, DEFAULT_THRESHOLD, ScanReport, Scanner};
use sha2::{Digest, Sha256};

const MIN_FILES: usize = 300;
/// The recall reached, a ratchet: raise it with every change that catches
/// more. It was 0.968 (1031 of 1064; HELD 87.0%) until 2026-11-27, when 386
/// malicious skills by a writer who had read no rule (session 24, source
/// "…writer t9") joined the corpus: as found, the scanner refused 251 of
/// them (65%), and the whole corpus 1282 of 1450 (88.4%; HELD 76.9%).
/// Rules that read what those skills do, and the classifier retrained on
/// the grown TRAIN split, brought it to 1318 of 1450 (90.9%; TRAIN 91.6%,
/// HELD 78.3%) the same day. Then a second such writer's 100 (t10) joined,
/// written while those rules were: as found, 78 refused; the corpus 1396 of
/// 1550 (90.1%; TRAIN 90.0%, HELD 78.3%). A third writer's 211 (session
/// 25, "…writer t9") joined on 2026-11-27: as found, 164 refused (77.7%);
/// the corpus 1560 of 1761 (88.6%; TRAIN 88.1%, HELD 77.9%). Rules that
/// read what the misses do (a prefix's flags, other languages, data
/// addressed to its processor, look-alike extensions and hook
/// repositories, `tr`, UTF-16 base64, …) and the classifier retrained
/// brought it to 1598 of 1768 (90.4%; TRAIN 92.9%, HELD 78.4%; that
/// writer 178 of 211). Then a fourth and a fifth writer's 147 and 111
/// joined, kept out until those rules were merged: 118 and 94 refused
/// (80.3%, 84.7%; 113 and 93 on the session's first rules); the corpus
/// 1810 of 2026 (89.3%; TRAIN 91.4%, HELD 78.8%). Lowered (session 26,
/// the lead agreeing) for the refusal policy (`classifier::policy`): two
/// noisy rules refusing only beside a second signal spared 9 benign
/// skills and lost 4 malicious ones that had nothing else (two `x-*`, two
/// HELD): 1806 of 2026 (89.1%; TRAIN 91.4%, HELD 78.5%).
/// Session 26 (t5): rules
/// for mechanisms at least two of the five writers used (consent taken
/// away in the third person or overridden, the person in the chat
/// demoted, approval carry-over in six languages, companions not shown,
/// containers handed the user's keys, an agent's sandbox off in its
/// settings, YAML folded commands), chosen on the writers' TRAIN halves:
/// 1828 of 2026 (90.2%; TRAIN 93.6%, HELD 79.1%); benign 76 of 1411 (one
/// more, of the HELD half). With the refusal policy, the second stage
/// retrained (corroborating at 729): 1829 of 2026 (90.3%; TRAIN 94.1%,
/// HELD 79.1%). Then a sixth and a seventh writer's 155 and 110, kept out
/// until every branch of the session was merged: 122 and 92 refused
/// (78.7%, 83.6%; 120 and 93 on the session's first rules); the corpus
/// 2043 of 2291 (89.2%; TRAIN 92.5%, HELD 78.9%). Session 27: 24 skills
/// written against a frame the session tried (`classifier::voice`, left
/// off), 23 refused; the classifier retrained (corroborating at 724); an
/// eighth and a ninth writer's 100 and 110, kept out until every branch
/// was merged: 90 and 90 refused (90.0%, 81.8%; the same as found); the
/// corpus 2245 of 2525 (88.9%; TRAIN 92.2%, HELD 79.1%). Session 28: the
/// classifier retrained on nine writers was measured and not kept (it lost
/// two of the new writers' malicious skills); a tenth and an eleventh
/// writer's 170 and 155, kept out until every branch was merged: 140 and
/// 130 refused (82.4%, 83.9%; the same as found); the corpus 2515 of 2850
/// (88.2%; TRAIN 90.1%, HELD 80.4%). Session 29: the classifier retrained
/// on eleven writers, a short body's score no longer corroborating
/// (`classifier::MIN_WORDS`), the bar the training chose (653): 2527 of
/// 2850 (88.7%; TRAIN 90.8%, HELD 80.9%); a twelfth and a thirteenth
/// writer's 200 and 150, kept out until every branch was merged: 144 and
/// 123 refused (72.0%, 82.0%; 142 and 122 as found), so the corpus, which
/// they join, is lowered to 2794 of 3200 (87.3%; TRAIN 88.7%, HELD 80.3%).
const MIN_RECALL: f64 = 0.873;
/// #14's bound on benign skills refused is 3%. The same writer's 210 benign
/// skills, written close to the line, were refused 24 times (11.4%) as
/// found, the corpus 41 of 882 (4.6%): until the bound is met again this is
/// a ratchet at the rate reached; lower it with every change that refuses
/// fewer. Met again the same day: 24 of 882 (2.7%; TRAIN 1.6%, HELD 5.1%);
/// then the second writer's 55 benign skills, each a look-alike of an
/// attack, were refused 10 times (18.2%) as found: 34 of 937 (3.6%). A
/// third writer's 211 benign skills (session 25), written for real work
/// and close to the line, were refused 31 times (14.7%) as found: 65 of
/// 1148 (5.7%; TRAIN 4.7%, HELD 8.9%). Rules that read the context making
/// such lines legitimate (a quote wrapped from a guard rule, a table's
/// lead-in, a prohibition list, a hyphenation point, a look-alike named
/// as one…) brought it to 50 of 1148 (4.4%; x 0%, TRAIN 2.0%, HELD 8.7%;
/// the second writer's 6 of 55, the third's 27 of 211) the same day,
/// recall unchanged. With the recall rules and the classifier retrained
/// (corroborating at 685): 44 of 1153 (3.8%; x 0%, TRAIN 1.8%, HELD 7.6%;
/// the third writer's 26 of 211). The fourth and fifth writers' 147 and
/// 111 benign skills, kept out until then: 21 and 10 refused (14.3%,
/// 9.0%; 22 and 12 on the session's first rules); the corpus 75 of 1411
/// (5.3%; TRAIN 4.5%, HELD 8.1%). Then what refuses was decided from
/// measured precision (session 26, `classifier::policy`): two rules that
/// alone refused more benign skills than malicious ones refuse only
/// beside a second signal: 66 of 1411 (4.7%; TRAIN 3.3%, HELD 7.8%), and
/// after the session's merges and retrain 66 of 1411 (TRAIN 3.1%, HELD
/// 7.9%). The sixth and seventh writers' 157 and 110 benign skills, kept
/// out until then: 20 and 15 refused (12.7%, 13.6%; 22 and 16 on the
/// session's first rules); the corpus 101 of 1678 (6.0%; TRAIN 4.4%,
/// HELD 9.4%). Session 27: every refused benign TRAIN skill read
/// (`testdata/scan-corpus/REVIEW.md`), and the frame of its biggest
/// mechanism (`classifier::voice`, chosen leaving each writer out): 87 of
/// 1678 (5.2%; TRAIN 3.3%, HELD 8.4%); the frame closed to a red team
/// written against it (s27 t5: an order anywhere to act on what is shown,
/// no frame from the description, a section with a step for the reader),
/// 95 of 1678 (5.7%; TRAIN 3.9%, HELD 9.0%). The frame was left off (it
/// spared 1 of the kept-out writers' 27 refused once closed, and a lowered
/// finding installs), the classifier retrained; the eighth and ninth
/// writers' 100 and 110 benign skills, kept out until then: 11 and 13
/// refused (11.0%, 11.8%; 14 and 13 as found); the corpus 122 of 1888
/// (6.5%; TRAIN 5.0%, HELD 9.5%). Session 28: the tenth and eleventh
/// writers' 170 and 151 benign skills, kept out until every branch was
/// merged: 26 and 18 refused (15.3%, 11.9%; the same as found); the corpus
/// 166 of 2209 (7.5%; TRAIN 6.5%, HELD 10.1%). Session 29, raised on
/// purpose: the classifier retrained on eleven writers (above) refuses 2
/// more benign skills, both of the HELD half it never reads (168 of 2209,
/// 7.6%; TRAIN 62 of 948 as before, HELD 106 of 1029), beside 12 more
/// malicious ones (7 of TRAIN, 5 of HELD); its bar was chosen out of fold
/// on the TRAIN half, where it refuses none more (`train_scan_model`).
/// The twelfth and thirteenth writers' 200 and 150 benign skills, kept out
/// until every branch was merged: 21 and 20 refused (10.5%, 13.3%; 19 and
/// 21 as found); the corpus 209 of 2559 (8.2%; TRAIN 7.0%, HELD 10.7%).
const MAX_FALSE_POSITIVE_RATE: f64 = 0.0817;
/// At most this share of benign skills may be held back from sharing for a
/// credential that looks live (`ScanReport::has_secrets`).
const MAX_SECRET_FALSE_POSITIVE_RATE: f64 = 0.02;

fn corpus(kind: &str) -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/scan-corpus").join(kind);
    let mut files = Vec::new();
    collect_markdown(&dir, &mut files);
    files.sort();
    files
}

/// Every `.md` file under `dir`, one level of class folders deep.
fn collect_markdown(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect_markdown(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            let body = fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            out.push((path, body));
        }
    }
}

/// The corpus-relative name of a file: `class/file.md`, or `file.md` at the top.
fn label(kind: &str, path: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/scan-corpus").join(kind);
    path.strip_prefix(&root).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

/// The class of a corpus file: its folder under `kind`, or `-` at the top.
fn class_of(kind: &str, path: &Path) -> String {
    let name = label(kind, path);
    name.split_once('/').map_or_else(|| "-".to_string(), |(class, _)| class.to_string())
}

fn describe(kind: &str, path: &Path, report: &ScanReport) -> String {
    let name = label(kind, path);
    let mut s = format!("  {name}\n");
    if report.findings.is_empty() {
        s.push_str("      (no findings)\n");
    }
    for f in &report.findings {
        s.push_str(&format!(
            "      line {:>3} {:<9} {:<30} {}\n",
            f.line,
            format!("{:?}", f.severity),
            f.rule_id,
            f.excerpt
        ));
    }
    s
}

#[test]
fn corpus_has_enough_skills_of_each_kind() {
    let malicious = corpus("malicious").len();
    let benign = corpus("benign").len();
    assert!(malicious >= MIN_FILES, "only {malicious} malicious skills, want {MIN_FILES}");
    assert!(benign >= MIN_FILES, "only {benign} benign skills, want {MIN_FILES}");
}

/// The longest corpus skill, in lines: long enough for a real runbook.
const MAX_LINES: usize = 200;

#[test]
fn corpus_skills_look_like_real_skills() {
    for (path, body) in corpus("malicious").into_iter().chain(corpus("benign")) {
        let lines = body.lines().count();
        // Real skills run long (a payload deep in a long runbook is one of
        // the writers' tricks) and some are written on Windows (CRLF).
        assert!((15..=MAX_LINES).contains(&lines), "{}: {lines} lines", path.display());
        let named = body.starts_with("---\nname: ") || body.starts_with("---\r\nname: ");
        assert!(named, "{}: no frontmatter name", path.display());
        assert!(body.contains("\ndescription: "), "{}: no description", path.display());
    }
}

/// Who wrote a malicious skill, and so what its recall estimates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Split {
    /// The first corpus, written beside the first rules (`older.txt`).
    Older,
    /// Written beside the rules they test (`x-*`).
    BesideRules,
    /// Written apart from the rules; rule writers may open these.
    Train,
    /// Written apart from the rules and never opened by rule writers: the
    /// estimate of recall in the wild.
    Held,
}

impl Split {
    const ALL: [Split; 4] = [Split::Older, Split::BesideRules, Split::Train, Split::Held];

    /// The name `ECP_CORPUS_MISSED` uses, and the printout's.
    fn name(self) -> &'static str {
        match self {
            Split::Older => "older",
            Split::BesideRules => "x",
            Split::Train => "train",
            Split::Held => "held",
        }
    }

    /// The split of a malicious skill by its corpus-relative name
    /// (`class/file.md`). The independent skills are halved by the first
    /// hex digit of the SHA-256 of that name: 0–7 are HELD. A rule that
    /// needs no list keeps the halves fixed as skills are added.
    fn of(name: &str, older: &BTreeSet<String>) -> Split {
        let file = name.rsplit('/').next().unwrap_or(name);
        if file.starts_with("x-") {
            Split::BesideRules
        } else if older.contains(name) {
            Split::Older
        } else if Sha256::digest(name.as_bytes())[0] < 0x80 {
            Split::Held
        } else {
            Split::Train
        }
    }
}

/// The names in `older.txt` (one `class/file.md` a line, `#` comments).
fn older_skills() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/scan-corpus/older.txt");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from).collect()
}

/// The splits whose misses `ECP_CORPUS_MISSED` asks to list; never `held`.
fn splits_to_list() -> Vec<Split> {
    let wanted = std::env::var("ECP_CORPUS_MISSED").unwrap_or_default();
    let names: Vec<&str> = wanted.split(',').map(str::trim).filter(|n| !n.is_empty()).collect();
    assert!(!names.contains(&"held"), "ECP_CORPUS_MISSED: the HELD misses are never listed");
    for n in &names {
        assert!(
            Split::ALL.iter().any(|s| s.name() == *n),
            "ECP_CORPUS_MISSED: unknown split {n:?}; use train, x or older"
        );
    }
    Split::ALL.into_iter().filter(|s| names.contains(&s.name())).collect()
}

/// The frontmatter `source:` of a skill (who wrote it, and when), or `-`.
fn source_of(body: &str) -> &str {
    let frontmatter = body.split("\n---").next().unwrap_or("");
    frontmatter.lines().find_map(|l| l.strip_prefix("source: ")).unwrap_or("-").trim()
}

fn percent(hit: usize, total: usize) -> f64 {
    hit as f64 * 100.0 / total.max(1) as f64
}

#[test]
fn every_older_skill_exists() {
    let names: BTreeSet<String> = corpus("malicious").iter().map(|(p, _)| label("malicious", p)).collect();
    for name in older_skills() {
        assert!(names.contains(&name), "older.txt names {name}, which is not in malicious/");
    }
}

#[test]
fn splits_are_fixed_by_name() {
    let older = older_skills();
    assert_eq!(Split::of("classic/x-anything.md", &older), Split::BesideRules);
    let first = older.iter().next().expect("older.txt lists skills");
    assert_eq!(Split::of(first, &older), Split::Older);
    // SHA-256("a.md") starts with f, ("b.md") with 1 (`sha256sum`): fixed forever.
    assert_eq!(format!("{:x}", Sha256::digest(b"a.md"))[..1], *"f");
    assert_eq!(Split::of("a.md", &older), Split::Train);
    assert_eq!(Split::of("b.md", &older), Split::Held);
}

#[test]
fn blocks_malicious_skills() {
    let scanner = Scanner::standard();
    let files = corpus("malicious");
    let older = older_skills();
    let listed = splits_to_list();
    let mut missed = String::new();
    let mut held_missed = 0;
    let mut blocked = 0;
    // class -> split -> (blocked, total)
    let mut by_class: BTreeMap<String, BTreeMap<Split, (usize, usize)>> = BTreeMap::new();
    let mut by_split: BTreeMap<Split, (usize, usize)> = BTreeMap::new();
    let mut by_source: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (path, body) in &files {
        let report = scanner.scan(body);
        let name = label("malicious", path);
        let split = Split::of(&name, &older);
        let caught = report.is_blocked(DEFAULT_THRESHOLD);
        for counts in [
            by_class.entry(class_of("malicious", path)).or_default().entry(split).or_default(),
            by_split.entry(split).or_default(),
            by_source.entry(source_of(body)).or_default(),
        ] {
            counts.1 += 1;
            counts.0 += usize::from(caught);
        }
        if caught {
            blocked += 1;
        } else if split == Split::Held {
            held_missed += 1;
        } else if listed.contains(&split) {
            missed.push_str(&describe("malicious", path, &report));
        }
    }
    let recall = blocked as f64 / files.len() as f64;
    println!("malicious: {blocked}/{} blocked, recall {:.1}%", files.len(), recall * 100.0);
    println!("  {:<24} {:>10} {:>10} {:>10} {:>10} {:>10}", "class", "all", "older", "x", "train", "held");
    for (class, splits) in &by_class {
        let (hit, total) = splits.values().fold((0, 0), |a, c| (a.0 + c.0, a.1 + c.1));
        let mut row = format!("  {class:<24} {:>10}", format!("{hit}/{total}"));
        for split in Split::ALL {
            let (h, t) = splits.get(&split).copied().unwrap_or_default();
            row.push_str(&format!(" {:>10}", format!("{h}/{t}")));
        }
        println!("{row}");
    }
    for split in Split::ALL {
        let (hit, total) = by_split.get(&split).copied().unwrap_or_default();
        println!("  {:<24} {hit:>4}/{total:<4} recall {:.1}%", split.name(), percent(hit, total));
    }
    for (source, (hit, total)) in &by_source {
        println!("  source {source:?}: {hit}/{total} recall {:.1}%", percent(*hit, *total));
    }
    if !missed.is_empty() {
        println!("missed ({}):\n{missed}", listed.iter().map(|s| s.name()).collect::<Vec<_>>().join(","));
    }
    assert!(
        recall >= MIN_RECALL,
        "recall {:.1}% < {:.0}% ({held_missed} HELD misses not listed; ECP_CORPUS_MISSED=train,x,older lists the rest):\n{missed}",
        recall * 100.0,
        MIN_RECALL * 100.0
    );
}

#[test]
fn passes_benign_skills() {
    let scanner = Scanner::standard();
    let files = corpus("benign");
    let older = older_skills();
    let mut wrong = String::new();
    let (mut false_positives, mut held_refused) = (0, 0);
    let mut by_source: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut by_split: BTreeMap<Split, (usize, usize)> = BTreeMap::new();
    for (path, body) in &files {
        let report = scanner.scan(body);
        let blocked = report.is_blocked(DEFAULT_THRESHOLD);
        let split = Split::of(&label("benign", path), &older);
        for (refused, total) in
            [by_source.entry(source_of(body)).or_default(), by_split.entry(split).or_default()]
        {
            *total += 1;
            *refused += usize::from(blocked);
        }
        if blocked {
            false_positives += 1;
            // The HELD half of the benign skills is held out as the
            // malicious one is: counted, never listed.
            if split == Split::Held {
                held_refused += 1;
            } else {
                wrong.push_str(&describe("benign", path, &report));
            }
        }
    }
    let rate = false_positives as f64 / files.len() as f64;
    println!("benign: {false_positives}/{} blocked, false-positive rate {:.1}%", files.len(), rate * 100.0);
    for (split, (refused, total)) in &by_split {
        println!("  {:<6} {refused}/{total} blocked {:.1}%", split.name(), percent(*refused, *total));
    }
    for (source, (refused, total)) in &by_source {
        println!("  source {source:?}: {refused}/{total} blocked {:.1}%", percent(*refused, *total));
    }
    if !wrong.is_empty() {
        println!("false positives ({held_refused} of the HELD half not listed):\n{wrong}");
    }
    assert!(
        rate <= MAX_FALSE_POSITIVE_RATE,
        "false-positive rate {:.1}% > {:.1}% ({held_refused} of the HELD half not listed); blocked:\n{wrong}",
        rate * 100.0,
        MAX_FALSE_POSITIVE_RATE * 100.0
    );
}

/// The false-positive rate of the `secret` family: benign skills it would
/// hold back from sharing. The counts of every secret and permission
/// finding by rule and severity are printed (`--nocapture`).
#[test]
fn holds_back_few_benign_skills_for_secrets() {
    let scanner = Scanner::standard();
    let files = corpus("benign");
    let mut held = String::new();
    let mut held_back = 0;
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (path, body) in &files {
        let report = scanner.scan(body);
        if report.has_secrets() {
            held_back += 1;
            held.push_str(&describe("benign", path, &report));
        }
        for f in report
            .findings
            .iter()
            .filter(|f| matches!(f.category, Category::Secret | Category::PermissionGrant))
        {
            *counts.entry((f.rule_id.clone(), format!("{:?}", f.severity))).or_default() += 1;
        }
    }
    let rate = held_back as f64 / files.len() as f64;
    println!(
        "benign: {held_back}/{} held back for a secret, false-positive rate {:.1}%",
        files.len(),
        rate * 100.0
    );
    for ((rule, severity), n) in &counts {
        println!("  {rule:<28} {severity:<7} {n}");
    }
    assert!(
        rate <= MAX_SECRET_FALSE_POSITIVE_RATE,
        "secret false-positive rate {:.1}% > {:.0}%; held back:\n{held}",
        rate * 100.0,
        MAX_SECRET_FALSE_POSITIVE_RATE * 100.0
    );
}

#[test]
fn reports_findings_with_original_line_numbers_and_short_excerpts() {
    let scanner = Scanner::standard();
    for (path, body) in corpus("malicious").into_iter().chain(corpus("benign")) {
        let lines = body.split('\n').count();
        for f in scanner.scan(&body).findings {
            assert!(f.line >= 1 && f.line <= lines, "{}: line {} of {lines}", path.display(), f.line);
            assert!(f.excerpt.chars().count() <= 80, "{}: excerpt {:?}", path.display(), f.excerpt);
            assert_eq!(f.excerpt, f.excerpt.trim(), "{}: untrimmed excerpt", path.display());
        }
    }
}

/// One line per finding, in file order: what [`findings_match_the_snapshot`]
/// compares. A HELD skill's findings are one line instead, its name and its
/// findings each as a digest: the snapshot (and a failure's diff) still
/// shows that they changed, and never what they are, so that reading it
/// tells a rule writer nothing of the HELD half.
fn snapshot() -> String {
    let scanner = Scanner::standard();
    let older = older_skills();
    let mut out = String::new();
    for kind in ["benign", "malicious"] {
        for (path, body) in corpus(kind) {
            let name = label(kind, &path);
            let lines: String = scanner
                .scan(&body)
                .findings
                .iter()
                .map(|f| format!("{kind}/{name}:{} {:?} {} {}\n", f.line, f.severity, f.rule_id, f.excerpt))
                .collect();
            if Split::of(&name, &older) == Split::Held {
                let digest = |s: &str| hex(&Sha256::digest(s.as_bytes())[..8]);
                out.push_str(&format!(
                    "{kind}/held/{}: {} findings, digest {}\n",
                    digest(&name),
                    lines.lines().count(),
                    digest(&lines)
                ));
            } else {
                out.push_str(&lines);
            }
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn findings_match_the_snapshot() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/scan-corpus/findings.txt");
    let now = snapshot();
    let older = older_skills();
    for kind in ["benign", "malicious"] {
        for (path, _) in corpus(kind) {
            let name = label(kind, &path);
            if Split::of(&name, &older) == Split::Held {
                assert!(!now.contains(&format!("{kind}/{name}")), "the snapshot names a HELD skill");
            }
        }
    }
    if std::env::var_os("ECP_BLESS").is_some() {
        fs::write(&path, &now).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        return;
    }
    let recorded = fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let changed: Vec<String> = recorded
        .lines()
        .filter(|l| !now.lines().any(|n| n == *l))
        .map(|l| format!("- {l}"))
        .chain(now.lines().filter(|n| !recorded.lines().any(|l| l == *n)).map(|n| format!("+ {n}")))
        .collect();
    assert!(
        changed.is_empty() && recorded == now,
        "findings differ from {} (ECP_BLESS=1 to accept an intended change):\n{}",
        path.display(),
        changed.join("\n")
    );
}
