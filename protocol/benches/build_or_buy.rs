//! Build or buy: a hand-written engine of this crate against the crate that
//! does the same job, on the same inputs, in one criterion group, so the
//! noise of a shared machine falls on both.
//!
//! Run with `cargo bench -p ecp-protocol --bench build_or_buy`.
//!
//! - `literals/*`: the scanner's prefilter (`scan/literals.rs`) against
//!   `aho-corasick` (ASCII case-insensitive, overlapping, as the engine needs
//!   every place a key ends), with the standard rule set's prefilter keys, on
//!   the scan corpus. Both collect the end of every match into a vector.
//!   (The prefilter also lets a key's space match a run of blanks and a tab;
//!   the corpus has few such places, so the work is the same.)
//!
//! `par.rs` was measured here against `rayon` too; rayon tied or won, so
//! `par.rs` now runs on rayon (its module doc has the figures).
//!
//! The prefilter is compiled into this bench from its source file, so the
//! library keeps it private.

// What the bench leaves unused, and the module's own tests, which a bench
// compiles without the test harness.
#[allow(dead_code, unused_imports)]
#[path = "../src/scan/literals.rs"]
mod literals;

mod common;

use std::hint::black_box;
use std::time::Duration;

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use common::{corpus, skill_body};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// The prefilter keys of the standard rule set: the first four bytes of
/// every trigger, lower case (printed from `scan::engine` on 2026-11-25).
const KEYS: &[&str] = &[
    "rm -", "find", "mkfs", "mke2", "wipe", "mksw", "/dev", "dd ", "()", "git ", "nc ", "ncat", "netc",
    "soca", "mkfi", "sock", "fsoc", "hist", "set ", "_his", "/var", "curl", "wget", "fetc", "aria", "iwr",
    "irm", "invo", "adst", "net.", "urlo", "urll", "requ", "base", "xxd", "ssl ", "prin", "gunz", "zcat",
    "uude", "n-za", "b64d", "b32d", "atob", "from", "unhe", "code", "deco", "zlib", "mars", "gzip", "lzma",
    "bz2", "powe", "pwsh", "\\x", "\\u00", "exec", "eval", "os.s", "os.p", "os.e", "subp", "chil", "__im",
    "syst", "pty.", "shel", "ssth", "proc", "star", "saps", ".ssh", "id_r", "id_d", "id_e", ".aws", "gclo",
    ".azu", ".git", ".net", ".gnu", ".pas", "/etc", ".kub", ".doc", ".npm", ".pyp", "gh/h", "keyc", "goog",
    "chro", "brav", "fire", "micr", "/env", "/tok", "wall", ".env", "dump", "169.", "meta", "/met", "ask",
    "aski", "tojs", "cred", "dig", "nslo", "dril", "send", "uplo", "post", "tran", "forw", "past", "shar",
    "copy", "incl", "atta", "emai", "e-ma", "subm", "exfi", "../", "..\\", "%2e%", "..%2", "..%5", ".%2e",
    "%2e.", "/usr", "/bin", "/sbi", "/boo", "/lib", "/sys", "drop", "flus", "trun", "dele", "sudo", "nopa",
    "chmo", "setc", "chow", "sete", "ufw ", "ipta", "csru", "spct", "set-", "rand", "ptra", "aa-t", "--pr",
    "/:/", "nsen", ".soc", "sour", "src=", "dang", "yolo", "bypa", "\"bas", "auto", "sand", "prom", "cron",
    "@reb", ".bas", ".pro", ".zsh", ".zpr", "conf", "auth", "ld.s", "ld_p", "igno", "disr", "forg", "negl",
    "over", "supe", "prec", "come", "deve", "god ", "admi", "jail", "unre", "unfi", "unce", "dan ", "are ",
    "re d", "beco", "long", "safe", "cont", "has ", "have", "perm", "clea", "allo", "root", "oper", "<|",
    "<<sy", "[ins", "[/in", "<sys", "</sy", "<!--", "tell", "info", "ment", "noti", "aler", "show", "reve",
    "disc", "warn", "keep", "hide", "let ", "not ", "need", "lett", "cons", "sile", "secr", "quie", "cove",
    "invi", "stea", "wait", "seek", "\u{1}", "scp", "rsyn", "sftp", "ftp", "tftp", "teln", "xh ", "mutt",
    "tpx.", "axio", ".upl",
];

fn literals(c: &mut Criterion) {
    let keys: Vec<&[u8]> = KEYS.iter().map(|k| k.as_bytes()).collect();
    let ours = literals::Literals::new(&keys).expect("the keys fit 16-bit transitions");
    let dfa = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .kind(Some(AhoCorasickKind::DFA))
        .build(KEYS)
        .expect("aho-corasick DFA");
    let auto = AhoCorasick::builder().ascii_case_insensitive(true).build(KEYS).expect("aho-corasick");
    let bodies: String = (0..2_000).map(skill_body).collect();
    let mut group = c.benchmark_group("literals");
    group.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for (name, text) in [
        ("benign-corpus", corpus("benign")),
        ("malicious-corpus", corpus("malicious")),
        ("2k-bodies", bodies),
    ] {
        let text = text.as_bytes();
        let mut ends = Vec::new();
        ours.find(text, &mut ends);
        eprintln!(
            "literals/{name}: {} bytes, ours reports {} places, aho-corasick {} matches",
            text.len(),
            ends.len(),
            dfa.find_overlapping_iter(text).count()
        );
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(BenchmarkId::new("ours", name), |b| {
            b.iter(|| {
                ends.clear();
                ours.find(black_box(text), &mut ends);
                ends.len()
            })
        });
        let mut at = Vec::new();
        for (kind, ac) in [("aho-corasick-dfa", &dfa), ("aho-corasick-auto", &auto)] {
            group.bench_function(BenchmarkId::new(kind, name), |b| {
                b.iter(|| {
                    at.clear();
                    at.extend(ac.find_overlapping_iter(black_box(text)).map(|m| m.end()));
                    at.len()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, literals);
criterion_main!(benches);
