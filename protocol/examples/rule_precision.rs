//! The refusal policy's evidence (`scan/classifier/policy.rs`): per rule,
//! how many benign and malicious skills it refuses and how many it alone
//! refuses, per writer; per pair of families at `Medium`, how many skills
//! have both; the leave-one-writer-out choice of the rules that refuse
//! only beside a second signal and of the pairs that refuse together; and
//! that of the frame (`scan/classifier/voice.rs`: a finding shown to the
//! reader, not asked of the agent), per rule, per family and for every rule
//! at once, with the malicious skills whose refusing finding it lowers.
//!
//! Reads only what a rule writer may open: the malicious skills of TRAIN,
//! `x-*` and `older`, and the TRAIN half of the benign skills (the corpus
//! test's splits, `tests/it/scan_corpus.rs`); the HELD halves are never
//! read. `cargo run -p ecp-protocol --example rule_precision` (add
//! `--release` for speed); `ECP_RATIO=k` is how many benign skills spared
//! a choice must buy per malicious one lost (default 1), `ECP_TOP=n` the
//! rows printed per table (default 30), `ECP_WRITERS_ONLY=1` chooses on the
//! seven writers alone (the `x-*` and `older` skills not weighed), and
//! `ECP_LIST=rule.id` (or `all`, `missed`, `benign`) lists the skills that
//! rule alone refuses (or every skill one rule alone refuses, the malicious
//! skills nothing refuses, the benign skills the scanner's policy refuses)
//! with their findings.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use ecp_protocol::scan::classifier::{
    CORROBORATES_AT, CORROBORATES_BESIDE, NEEDS_SECOND, PAIRS, REFUSE_ALONE, SHOWN, apply_policy,
    apply_voice, beside, frame, never_shown,
};
use ecp_protocol::scan::{Category, DEFAULT_THRESHOLD, Finding, Scanner, Severity};
use sha2::{Digest, Sha256};

#[path = "shared/corpus_files.rs"]
mod corpus_files;

/// The seven independent writers, by the tail of their `source:` line, and
/// everyone else.
const WRITERS: [(&str, &str); 7] = [
    ("(session 24, writer t9)", "s24-t9"),
    ("(session 24, writer t10)", "s24-t10"),
    ("(session 25, writer t9)", "s25-t9"),
    ("(session 25, writer t10)", "s25-t10"),
    ("(session 25, writer t11)", "s25-t11"),
    ("(session 26, writer t9)", "s26-t9"),
    ("(session 26, writer t10)", "s26-t10"),
];
const REST: usize = WRITERS.len();
const GROUPS: usize = WRITERS.len() + 1;

fn group_name(g: usize) -> &'static str {
    if g == REST { "rest" } else { WRITERS[g].1 }
}

struct Skill {
    name: String,
    malicious: bool,
    group: usize,
    score: u16,
    /// The rules' findings before the policy.
    findings: Vec<Finding>,
    body: String,
}

type Pair = (Category, Category);

/// A set of rules the frame is measured on: its name and its rule ids.
type Unit<'a> = (String, Vec<&'a str>);

impl Skill {
    /// Whether the skill is refused under the policy `(needs, pairs)`, and
    /// the rule ids of its refusing findings (`classifier.corroborated`
    /// for a corroboration).
    fn refused(&self, needs: &[&str], pairs: &[Pair]) -> (bool, BTreeSet<String>) {
        self.refused_shown(needs, pairs, &[])
    }

    /// [`refused`](Self::refused) with the frame (`classifier::voice`)
    /// lowering the findings of `shown` first, as the scanner does.
    fn refused_shown(&self, needs: &[&str], pairs: &[Pair], shown: &[&str]) -> (bool, BTreeSet<String>) {
        let mut f = self.findings.clone();
        apply_voice(&mut f, &self.body, |f| shown.contains(&f.rule_id.as_str()));
        apply_policy(&mut f, needs, pairs);
        let mut ids: BTreeSet<String> =
            f.iter().filter(|f| f.severity >= DEFAULT_THRESHOLD).map(|f| f.rule_id.clone()).collect();
        if beside(self.score, &f, CORROBORATES_AT, CORROBORATES_BESIDE).is_some() {
            ids.insert("classifier.corroborated".into());
        }
        (!ids.is_empty(), ids)
    }

    /// The families of its signals (findings at `Medium` or worse, not
    /// `secret` nor a grant), each once, in first-seen order.
    fn signals(&self) -> Vec<Category> {
        let mut out = Vec::new();
        for f in &self.findings {
            let signal = f.severity >= Severity::Medium
                && !matches!(f.category, Category::Secret | Category::PermissionGrant);
            if signal && !out.contains(&f.category) {
                out.push(f.category);
            }
        }
        out.sort_by_key(|c| format!("{c:?}"));
        out
    }
}

fn load() -> Vec<Skill> {
    let root = corpus_files::root();
    let older = corpus_files::older(&root);
    let scanner = Scanner::standard();
    let mut skills = Vec::new();
    for kind in ["malicious", "benign"] {
        let dir = root.join(kind);
        for p in corpus_files::markdown_under(&dir) {
            let name = p.strip_prefix(&dir).unwrap().to_string_lossy().replace('\\', "/");
            let file = name.rsplit('/').next().unwrap_or(&name);
            // The corpus test's split: HELD (first hash byte below 0x80,
            // not x-* nor older) is never read.
            let held = !file.starts_with("x-")
                && !older.contains(&name)
                && Sha256::digest(name.as_bytes())[0] < 0x80;
            if held {
                continue;
            }
            let body = fs::read_to_string(&p).expect("read skill");
            let front = body.split("\n---").next().unwrap_or("");
            let source = front.lines().find_map(|l| l.strip_prefix("source: ")).unwrap_or("-").trim();
            let group = WRITERS.iter().position(|(tail, _)| source.ends_with(tail)).unwrap_or(REST);
            let report = scanner.scan_unrefined(&body);
            skills.push(Skill {
                name: format!("{kind}/{name}"),
                malicious: kind == "malicious",
                group,
                score: report.classifier.unwrap_or_default(),
                findings: report.findings,
                body,
            });
        }
    }
    skills
}

/// `[group][benign, malicious]` counts.
type Counts = [[usize; 2]; GROUPS];

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Benign spared and malicious lost (or, for a pair, malicious gained and
/// benign added) per group when `after` replaces `before`.
fn delta(skills: &[Skill], before: &[bool], after: &[bool]) -> ([i64; GROUPS], [i64; GROUPS]) {
    let (mut benign, mut malicious) = ([0i64; GROUPS], [0i64; GROUPS]);
    for (i, s) in skills.iter().enumerate() {
        let d = i64::from(after[i]) - i64::from(before[i]);
        if s.malicious {
            malicious[s.group] += d;
        } else {
            benign[s.group] += d;
        }
    }
    (benign, malicious)
}

fn outcome(skills: &[Skill], needs: &[&str], pairs: &[Pair]) -> Vec<bool> {
    skills.iter().map(|s| s.refused(needs, pairs).0).collect()
}

fn summary(skills: &[Skill], refused: &[bool]) -> String {
    let mut c: Counts = [[0; 2]; GROUPS];
    let mut t: Counts = [[0; 2]; GROUPS];
    for (i, s) in skills.iter().enumerate() {
        let k = usize::from(s.malicious);
        t[s.group][k] += 1;
        c[s.group][k] += usize::from(refused[i]);
    }
    (0..GROUPS)
        .map(|g| {
            format!("{} caught {}/{} benign refused {}/{}", group_name(g), c[g][1], t[g][1], c[g][0], t[g][0])
        })
        .collect::<Vec<_>>()
        .join("\n  ")
}

fn main() {
    let ratio = env_usize("ECP_RATIO", 1) as i64;
    let top = env_usize("ECP_TOP", 30);
    let skills = load();
    let none: Vec<bool> = outcome(&skills, &[], &[]);
    println!("# {} skills read (TRAIN, x-*, older; benign TRAIN half)", skills.len());
    println!("as found (no policy):\n  {}", summary(&skills, &none));
    let now = outcome(&skills, NEEDS_SECOND, PAIRS);
    println!(
        "with the scanner's policy ({} rules, {} pairs):\n  {}",
        NEEDS_SECOND.len(),
        PAIRS.len(),
        summary(&skills, &now)
    );

    // Per rule: refused and sole-refused, benign and malicious, per group.
    let mut per_rule: BTreeMap<String, [[[usize; 2]; 2]; GROUPS]> = BTreeMap::new();
    for s in &skills {
        let (_, ids) = s.refused(&[], &[]);
        for id in &ids {
            let row = &mut per_rule.entry(id.clone()).or_default()[s.group][usize::from(s.malicious)];
            row[0] += 1;
            row[1] += usize::from(ids.len() == 1);
        }
    }
    let total = |r: &[[[usize; 2]; 2]; GROUPS], k: usize, j: usize| r.iter().map(|g| g[k][j]).sum::<usize>();
    let mut rows: Vec<_> = per_rule.iter().collect();
    rows.sort_by_key(|(id, r)| {
        (std::cmp::Reverse(total(r, 0, 1)), std::cmp::Reverse(total(r, 0, 0)), (*id).clone())
    });
    println!(
        "\n## rules by benign skills they alone refuse (b = benign refused/alone, m = malicious refused/alone)"
    );
    print!("{:<34} {:>9} {:>9}", "rule", "b all", "m all");
    for g in 0..GROUPS {
        print!(" | {:>7} {:>7}", format!("b {}", &group_name(g)[..group_name(g).len().min(5)]), "m");
    }
    println!();
    for (id, r) in rows.iter().filter(|(_, r)| total(r, 0, 0) > 0).take(top) {
        print!(
            "{id:<34} {:>9} {:>9}",
            format!("{}/{}", total(r, 0, 0), total(r, 0, 1)),
            format!("{}/{}", total(r, 1, 0), total(r, 1, 1))
        );
        for g in r.iter() {
            print!(" | {:>7} {:>7}", format!("{}/{}", g[0][0], g[0][1]), format!("{}/{}", g[1][0], g[1][1]));
        }
        println!();
    }

    // Pairs of families at Medium or worse: skills with both, and of those
    // the ones refused by nothing else.
    let mut per_pair: BTreeMap<(String, String), [[usize; 2]; 2]> = BTreeMap::new();
    for (i, s) in skills.iter().enumerate() {
        let cats = s.signals();
        for (a, ca) in cats.iter().enumerate() {
            for cb in &cats[a + 1..] {
                let key = (format!("{ca:?}"), format!("{cb:?}"));
                let row = &mut per_pair.entry(key).or_default()[usize::from(s.malicious)];
                row[0] += 1;
                row[1] += usize::from(none[i]);
            }
        }
    }
    let mut pairs: Vec<_> = per_pair.iter().collect();
    pairs.sort_by_key(|(k, r)| {
        let gain = r[1][0] as i64 - r[1][1] as i64;
        let cost = r[0][0] as i64 - r[0][1] as i64;
        (std::cmp::Reverse(gain - ratio * cost), (*k).clone())
    });
    println!(
        "\n## pairs of families at medium or worse (m/b: skills with both; unrefused: of those, refused by nothing else)"
    );
    for ((a, b), r) in pairs.iter().take(top) {
        println!(
            "{:<44} m {:>4} unrefused {:>3}   b {:>4} unrefused {:>3}",
            format!("{a} + {b}"),
            r[1][0],
            r[1][0] - r[1][1],
            r[0][0],
            r[0][0] - r[0][1]
        );
    }

    lowo(&skills, &none, &per_rule, ratio);
    lowo_shown(&skills, ratio);
    lowo_purpose(&skills, ratio);
}

/// The words of `text` a purpose is named by: runs of letters and digits
/// of five or more, lower-cased.
fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 5).map(str::to_lowercase).collect()
}

/// The skill's name and description (its front matter's).
fn purpose(body: &str) -> String {
    let front = body.strip_prefix("---\n").and_then(|b| b.split("\n---").next()).unwrap_or("");
    front
        .lines()
        .filter_map(|l| l.strip_prefix("name:").or_else(|| l.strip_prefix("description:")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A candidate second signal, measured only (not in the scanner): a
/// refusing finding (not `prompt.*`, not in the front matter) whose line
/// names, in a word of five letters or more that is not generic (in the
/// name or description of fewer than 1 % of the skills read, labels
/// unseen), the skill's stated purpose: "the install is what the skill is
/// for". Leave one writer out at the grain of every rule at once.
fn lowo_purpose(skills: &[Skill], ratio: i64) {
    let mut df: BTreeMap<String, usize> = BTreeMap::new();
    for s in skills {
        for w in words(&purpose(&s.body)) {
            *df.entry(w).or_default() += 1;
        }
    }
    let generic = skills.len() / 100;
    let lowered = |s: &Skill| -> (bool, Vec<String>) {
        let stated: BTreeSet<String> = words(&purpose(&s.body))
            .into_iter()
            .filter(|w| df.get(w).copied().unwrap_or(0) <= generic)
            .collect();
        let front_end = s.body.lines().skip(1).position(|l| l == "---").map_or(0, |i| i + 2);
        let lines: Vec<&str> = s.body.lines().collect();
        let mut f = s.findings.clone();
        let mut why = Vec::new();
        for f in f.iter_mut() {
            if f.severity < DEFAULT_THRESHOLD
                || f.file.is_some()
                || never_shown(&f.rule_id)
                || f.line <= front_end
            {
                continue;
            }
            let Some(line) = lines.get(f.line.wrapping_sub(1)) else { continue };
            if let Some(w) = words(line).intersection(&stated).next() {
                why.push(format!("{}@{} \"{w}\"", f.rule_id, f.line));
                f.severity = Severity::Medium;
            }
        }
        apply_policy(&mut f, NEEDS_SECOND, PAIRS);
        let refused = f.iter().any(|f| f.severity >= DEFAULT_THRESHOLD)
            || beside(s.score, &f, CORROBORATES_AT, CORROBORATES_BESIDE).is_some();
        (refused, why)
    };
    let base: Vec<bool> = skills.iter().map(|s| s.refused(NEEDS_SECOND, PAIRS).0).collect();
    let after: Vec<(bool, Vec<String>)> = skills.iter().map(lowered).collect();
    let (b, m) = delta(skills, &base, &after.iter().map(|a| a.0).collect::<Vec<_>>());
    println!(
        "\n## the stated purpose (measured only): benign spared / malicious lost, per group (ratio {ratio})"
    );
    let cells: Vec<String> = (0..GROUPS).map(|g| format!("{}:{}/{}", group_name(g), -b[g], -m[g])).collect();
    println!("  all rules  {}", cells.join(" "));
    let mut total = [0i64; 2];
    for w in 0..WRITERS.len() {
        let keep = |g: usize| g != w;
        let spared: i64 = (0..GROUPS).filter(|&g| keep(g)).map(|g| -b[g]).sum();
        let lost: i64 = (0..GROUPS).filter(|&g| keep(g)).map(|g| -m[g]).sum();
        let chosen = spared > 0 && spared >= ratio * lost;
        if chosen {
            total[0] -= b[w];
            total[1] -= m[w];
        }
        println!("  without {}: chosen {chosen} (spared {spared}, lost {lost} on the rest)", group_name(w));
    }
    println!("  held-out total (purpose): benign spared {}, malicious lost {}", total[0], total[1]);
    for (i, s) in skills.iter().enumerate() {
        if base[i] != after[i].0 {
            println!(
                "    {} {} {} {:?}",
                if s.malicious { "lost" } else { "spared" },
                group_name(s.group),
                s.name,
                after[i].1
            );
        }
    }
}

/// Leave one writer out: per candidate rule (one that alone refuses a
/// benign skill) and pair, its effect per group; chosen on the other
/// groups when it spares at least `ratio` benign skills per malicious one
/// lost (a pair: gains `ratio` malicious per benign added), measured on
/// the one left out.
fn lowo(skills: &[Skill], none: &[bool], per_rule: &BTreeMap<String, [[[usize; 2]; 2]; GROUPS]>, ratio: i64) {
    let candidates: Vec<&str> = per_rule
        .iter()
        // What SPEC §7.7.3 has refuse alone is never a candidate.
        .filter(|(id, _)| !id.starts_with("classifier.") && !REFUSE_ALONE.contains(&id.as_str()))
        .filter(|(_, r)| r.iter().map(|g| g[0][1]).sum::<usize>() > 0)
        .map(|(id, _)| id.as_str())
        .collect();
    // The skills written beside the rules (`x-*`, `older`) are no writer
    // to leave out, but they always choose: they hold the classic shapes a
    // rule alone must keep refusing (`ECP_WRITERS_ONLY=1` leaves them out).
    let with_rest = std::env::var_os("ECP_WRITERS_ONLY").is_none();
    println!(
        "\n## leave one writer out: rules refusing only beside a second signal (ratio {ratio}, rest choosing: {with_rest})"
    );
    println!("per rule alone: benign spared / malicious lost, per group");
    let mut effects: BTreeMap<&str, ([i64; GROUPS], [i64; GROUPS])> = BTreeMap::new();
    for id in &candidates {
        let after = outcome(skills, &[id], &[]);
        let (b, m) = delta(skills, none, &after);
        let spared: [i64; GROUPS] = b.map(|x| -x);
        let lost: [i64; GROUPS] = m.map(|x| -x);
        let cells: Vec<String> =
            (0..GROUPS).map(|g| format!("{}:{}/{}", group_name(g), spared[g], lost[g])).collect();
        println!("  {id:<34} {}", cells.join(" "));
        effects.insert(id, (spared, lost));
    }
    let choose = |exclude: Option<usize>| -> Vec<&str> {
        effects
            .iter()
            .filter(|(_, (s, l))| {
                let keep = |g: &usize| Some(*g) != exclude && (*g != REST || with_rest);
                let s: i64 = (0..GROUPS).filter(keep).map(|g| s[g]).sum();
                let l: i64 = (0..GROUPS).filter(keep).map(|g| l[g]).sum();
                s > 0 && s >= ratio * l
            })
            .map(|(id, _)| *id)
            .collect()
    };
    let mut held_out_total = [0i64; 2];
    for w in 0..WRITERS.len() {
        let chosen = choose(Some(w));
        let after = outcome(skills, &chosen, &[]);
        let (b, m) = delta(skills, none, &after);
        held_out_total[0] -= b[w];
        held_out_total[1] -= m[w];
        println!(
            "  without {}: chose {:?}; on {}: benign spared {}, malicious lost {}",
            group_name(w),
            chosen,
            group_name(w),
            -b[w],
            -m[w]
        );
    }
    println!("  held-out total: benign spared {}, malicious lost {}", held_out_total[0], held_out_total[1]);
    let all_chosen = choose(None);
    println!("  chosen on all: {all_chosen:?}");
    let after = outcome(skills, &all_chosen, &[]);
    for (i, s) in skills.iter().enumerate() {
        if none[i] != after[i] {
            println!(
                "    {} {} {}",
                if s.malicious { "lost" } else { "spared" },
                group_name(s.group),
                s.name
            );
        }
    }
    // Per chosen rule: its effect on the writers it was not chosen on.
    let mut kept: Vec<&str> = Vec::new();
    for id in &all_chosen {
        let (s, l) = effects[id];
        let mut on_unchosen = [0i64; 2];
        for w in 0..WRITERS.len() {
            if choose(Some(w)).contains(id) {
                on_unchosen[0] += s[w];
                on_unchosen[1] += l[w];
            }
        }
        println!(
            "    {id:<34} on writers left out when chosen: benign spared {}, malicious lost {}",
            on_unchosen[0], on_unchosen[1]
        );
        if on_unchosen[0] > ratio * on_unchosen[1] {
            kept.push(*id);
        }
    }
    println!("  kept (helped on writers it was not chosen on): {kept:?}");

    // Pairs, given the rules chosen on all.
    let base = outcome(skills, &all_chosen, &[]);
    println!("\n## leave one writer out: pairs at medium refusing together (given the rules chosen on all)");
    let mut cats: BTreeMap<(String, String), Pair> = BTreeMap::new();
    for (i, s) in skills.iter().enumerate() {
        if base[i] {
            continue;
        }
        let c = s.signals();
        for (a, ca) in c.iter().enumerate() {
            for cb in &c[a + 1..] {
                cats.insert((format!("{ca:?}"), format!("{cb:?}")), (*ca, *cb));
            }
        }
    }
    let mut pair_effects: Vec<(Pair, [i64; GROUPS], [i64; GROUPS])> = Vec::new();
    for p in cats.into_values() {
        let after = outcome(skills, &all_chosen, &[p]);
        let (b, m) = delta(skills, &base, &after);
        let cells: Vec<String> =
            (0..GROUPS).map(|g| format!("{}:{}/{}", group_name(g), m[g], b[g])).collect();
        println!("  {:<44} gained/added {}", format!("{:?} + {:?}", p.0, p.1), cells.join(" "));
        pair_effects.push((p, m, b));
    }
    let choose_pairs = |exclude: Option<usize>| -> Vec<Pair> {
        pair_effects
            .iter()
            .filter(|(_, m, b)| {
                let keep = |g: &usize| Some(*g) != exclude && (*g != REST || with_rest);
                let m: i64 = (0..GROUPS).filter(keep).map(|g| m[g]).sum();
                let b: i64 = (0..GROUPS).filter(keep).map(|g| b[g]).sum();
                m >= 2 && m >= ratio * b
            })
            .map(|(p, _, _)| *p)
            .collect()
    };
    let mut total = [0i64; 2];
    for w in 0..WRITERS.len() {
        let chosen = choose_pairs(Some(w));
        let after = outcome(skills, &all_chosen, &chosen);
        let (b, m) = delta(skills, &base, &after);
        total[0] += m[w];
        total[1] += b[w];
        println!(
            "  without {}: chose {} pairs; on {}: malicious gained {}, benign added {}",
            group_name(w),
            chosen.len(),
            group_name(w),
            m[w],
            b[w]
        );
    }
    println!("  held-out total: malicious gained {}, benign added {}", total[0], total[1]);
    let pairs_all = choose_pairs(None);
    for p in &pairs_all {
        let (_, m, b) = pair_effects.iter().find(|(q, _, _)| q == p).unwrap();
        let mut on_unchosen = [0i64; 2];
        for w in 0..WRITERS.len() {
            if choose_pairs(Some(w)).contains(p) {
                on_unchosen[0] += m[w];
                on_unchosen[1] += b[w];
            }
        }
        println!(
            "    {:<44} on writers left out when chosen: malicious gained {}, benign added {}",
            format!("{:?} + {:?}", p.0, p.1),
            on_unchosen[0],
            on_unchosen[1]
        );
    }
    let fin = outcome(skills, &all_chosen, &pairs_all);
    println!("\nchosen on all, rules and pairs:\n  {}", summary(skills, &fin));
    // `ECP_LIST=rule.id`: the skills that rule alone refuses.
    if let Ok(id) = std::env::var("ECP_LIST") {
        for s in skills {
            let (_, ids) = s.refused(&[], &[]);
            let missed = id == "missed" && s.malicious && ids.is_empty();
            // `benign`: every benign skill the scanner's policy refuses.
            if id == "benign" && !s.malicious && s.refused(NEEDS_SECOND, PAIRS).0 {
                let (_, ids) = s.refused(NEEDS_SECOND, PAIRS);
                println!("  {} {} score {} refused by {:?}", group_name(s.group), s.name, s.score, ids);
                for f in &s.findings {
                    println!(
                        "      {:>3} {:<8} {:<32} {}",
                        f.line,
                        format!("{:?}", f.severity),
                        f.rule_id,
                        f.excerpt
                    );
                }
                continue;
            }
            if missed || ids.len() == 1 && (ids.contains(&id) || id == "all") {
                println!("  {} {} score {} refused by {:?}", group_name(s.group), s.name, s.score, ids);
                for f in &s.findings {
                    println!(
                        "      {:>3} {:<8} {:<32} {}",
                        f.line,
                        format!("{:?}", f.severity),
                        f.rule_id,
                        f.excerpt
                    );
                }
            }
        }
    }
}

/// Leave one writer out for the frame (`classifier::voice`), at three
/// grains: per rule refusing a skill under the scanner's policy, per family
/// of such rules, and all of them at once. Per unit, the skills its
/// findings in a passage framed as shown would spare or lose, per group;
/// units are chosen on the other groups when they spare at least `ratio`
/// benign skills per malicious one lost, and measured on the one left out.
fn lowo_shown(skills: &[Skill], ratio: i64) {
    let with = |shown: &[&str]| -> Vec<bool> {
        skills.iter().map(|s| s.refused_shown(NEEDS_SECOND, PAIRS, shown).0).collect()
    };
    let none: Vec<bool> = with(&[]);
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    for s in skills {
        let mut f = s.findings.clone();
        apply_policy(&mut f, NEEDS_SECOND, PAIRS);
        for f in f.iter().filter(|f| f.severity >= DEFAULT_THRESHOLD && f.file.is_none()) {
            if !f.rule_id.starts_with("classifier.") && !never_shown(&f.rule_id) {
                ids.insert(f.rule_id.clone(), format!("{:?}", f.category));
            }
        }
    }
    let with_rest = std::env::var_os("ECP_WRITERS_ONLY").is_none();
    println!(
        "\n## leave one writer out: the frame (shown, not asked) (ratio {ratio}, rest choosing: {with_rest})"
    );
    println!(
        "the scanner's frame on: {SHOWN}; the rules it may lower are every rule but `prompt.*` and SPEC's"
    );
    let per_rule: Vec<Unit> = ids.keys().map(|id| (id.clone(), vec![id.as_str()])).collect();
    let mut families: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (id, c) in &ids {
        families.entry(c.clone()).or_default().push(id.as_str());
    }
    let all: Vec<&str> = ids.keys().map(String::as_str).collect();
    let grains: [(&str, Vec<Unit>); 3] =
        [("rule", per_rule), ("family", families.into_iter().collect()), ("all", vec![("all".into(), all)])];
    for (grain, units) in grains {
        println!("\n### per {grain}: benign spared / malicious lost, per group");
        let mut effects: Vec<(&Unit, [i64; GROUPS], [i64; GROUPS])> = Vec::new();
        for unit in &units {
            let (b, m) = delta(skills, &none, &with(&unit.1));
            if b.iter().chain(m.iter()).all(|&x| x == 0) {
                continue;
            }
            let (spared, lost) = (b.map(|x| -x), m.map(|x| -x));
            let cells: Vec<String> =
                (0..GROUPS).map(|g| format!("{}:{}/{}", group_name(g), spared[g], lost[g])).collect();
            println!("  {:<34} {}", unit.0, cells.join(" "));
            effects.push((unit, spared, lost));
        }
        let choose = |exclude: Option<usize>| -> Vec<&str> {
            effects
                .iter()
                .filter(|(_, s, l)| {
                    let keep = |g: &usize| Some(*g) != exclude && (*g != REST || with_rest);
                    let s: i64 = (0..GROUPS).filter(keep).map(|g| s[g]).sum();
                    let l: i64 = (0..GROUPS).filter(keep).map(|g| l[g]).sum();
                    s > 0 && s >= ratio * l
                })
                .flat_map(|(u, _, _)| u.1.iter().copied())
                .collect()
        };
        let mut total = [0i64; 2];
        for w in 0..WRITERS.len() {
            let chosen = choose(Some(w));
            let (b, m) = delta(skills, &none, &with(&chosen));
            total[0] -= b[w];
            total[1] -= m[w];
            println!(
                "  without {}: chose {} rules; on {}: benign spared {}, malicious lost {}",
                group_name(w),
                chosen.len(),
                group_name(w),
                -b[w],
                -m[w]
            );
        }
        println!("  held-out total ({grain}): benign spared {}, malicious lost {}", total[0], total[1]);
        let chosen = choose(None);
        println!("  chosen on all: {chosen:?}");
        let after = with(&chosen);
        println!("  with it:\n  {}", summary(skills, &after));
        let every: Vec<&str> = units.iter().flat_map(|u| u.1.iter().copied()).collect();
        let everything = with(&every);
        if grain == "all" {
            // Malicious skills still refused whose refusing finding the
            // frame lowered: kept by another finding or the classifier.
            for s in skills.iter().filter(|s| s.malicious) {
                let mut f = s.findings.clone();
                apply_voice(&mut f, &s.body, |f| every.contains(&f.rule_id.as_str()));
                let lowered: Vec<String> = f
                    .iter()
                    .zip(&s.findings)
                    .filter(|(a, b)| a.severity < b.severity)
                    .filter_map(|(_, b)| {
                        frame(&s.body, b.line).map(|(p, c)| format!("{}@{} {p} \"{c}\"", b.rule_id, b.line))
                    })
                    .collect();
                if !lowered.is_empty() {
                    println!("    lowered in malicious {} {} {:?}", group_name(s.group), s.name, lowered);
                }
            }
        }
        for (i, s) in skills.iter().enumerate() {
            if none[i] != after[i] || (grain == "all" && none[i] != everything[i]) {
                let why: Vec<String> = s
                    .findings
                    .iter()
                    .filter(|f| f.severity >= DEFAULT_THRESHOLD)
                    .filter_map(|f| {
                        frame(&s.body, f.line).map(|(p, c)| format!("{}@{} {p} \"{c}\"", f.rule_id, f.line))
                    })
                    .collect();
                println!(
                    "    {} {} {} {:?}",
                    if s.malicious { "lost" } else { "spared" },
                    group_name(s.group),
                    s.name,
                    why
                );
            }
        }
    }
}
