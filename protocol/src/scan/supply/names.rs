//! The shipped lists of popular names (`popular-*.txt`, hand-made) and the
//! typosquat check against them.
//!
//! A name is a possible typosquat when it is not popular itself and is
//! close to a popular name of its ecosystem: one edit (insertion,
//! deletion, substitution or swap of neighbours, i.e. optimal-string-
//! alignment distance 1) from a popular name of at least
//! [`MIN_LEN_ONE_EDIT`] characters, two edits from one of at least
//! [`MIN_LEN_TWO_EDITS`], the popular name spelled with look-alike digits
//! (`0` for `o`, `1` for `l`), or the popular name with an ecosystem affix
//! (`python-`, `py`, `-js`, `node-`). Short names are left alone: `six`
//! and `ws` have dozens of real neighbours.
//!
//! The check is a symmetric-deletion index (the names with up to one or
//! two characters deleted, built once): a lookup deletes up to two
//! characters of the asked name and confirms the few candidates with the
//! exact distance, a few microseconds per name.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// A popular name of at least this many characters has its one-edit
/// neighbours flagged.
pub(super) const MIN_LEN_ONE_EDIT: usize = 5;
/// A popular name of at least this many characters has its two-edit
/// neighbours flagged.
pub(super) const MIN_LEN_TWO_EDITS: usize = 8;
/// Names longer than this are not looked up (no popular name is as long).
const MAX_LEN: usize = 64;

/// Where a name is published: decides its list and how it is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ecosystem {
    /// PyPI: `-`, `_` and `.` runs are one separator, case does not count.
    PyPi,
    /// npm.
    Npm,
    /// crates.io: `-` and `_` are the same.
    Crates,
    /// RubyGems.
    Gems,
    /// Published agent skills, by frontmatter name.
    Skills,
}

/// How a name resembles a popular one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Likeness {
    /// This many edits away (1 or 2).
    Edits(usize),
    /// The popular name with look-alike digits.
    Homoglyph,
    /// The popular name with an ecosystem prefix or suffix.
    Affix,
}

/// A name that looks like a popular one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Lookalike {
    /// The popular name it resembles.
    pub(super) popular: &'static str,
    pub(super) likeness: Likeness,
}

struct Index {
    names: Vec<String>,
    set: HashSet<String>,
    /// A name with up to one (two for long names) characters deleted →
    /// indexes into `names`.
    deletions: HashMap<String, Vec<u32>>,
}

fn list(e: Ecosystem) -> &'static str {
    match e {
        Ecosystem::PyPi => include_str!("popular-pypi.txt"),
        Ecosystem::Npm => include_str!("popular-npm.txt"),
        Ecosystem::Crates => include_str!("popular-crates.txt"),
        Ecosystem::Gems => include_str!("popular-gems.txt"),
        Ecosystem::Skills => include_str!("popular-skills.txt"),
    }
}

/// `name` as the ecosystem compares names.
pub(super) fn canonical(e: Ecosystem, name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match e {
        Ecosystem::PyPi => {
            let mut out = String::with_capacity(lower.len());
            for c in lower.chars() {
                let sep = matches!(c, '-' | '_' | '.');
                if !(sep && out.ends_with('-')) {
                    out.push(if sep { '-' } else { c });
                }
            }
            out
        }
        Ecosystem::Crates | Ecosystem::Skills => lower.replace('_', "-"),
        Ecosystem::Npm | Ecosystem::Gems => lower,
    }
}

/// Every string made by deleting one character of `s` (ASCII), added to `out`.
fn deletions_of(s: &str, out: &mut Vec<String>) {
    for i in 0..s.len() {
        let mut d = String::with_capacity(s.len() - 1);
        d.push_str(&s[..i]);
        d.push_str(&s[i + 1..]);
        out.push(d);
    }
}

/// `s`, its one-character deletions, and its two-character deletions when
/// `two` holds.
fn neighbourhood(s: &str, two: bool) -> Vec<String> {
    let mut out = vec![s.to_string()];
    deletions_of(s, &mut out);
    if two {
        let ones: Vec<String> = out[1..].to_vec();
        for one in &ones {
            deletions_of(one, &mut out);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

impl Index {
    fn build(e: Ecosystem) -> Index {
        let names: Vec<String> = list(e)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| canonical(e, l))
            .collect();
        let set: HashSet<String> = names.iter().cloned().collect();
        let mut deletions: HashMap<String, Vec<u32>> = HashMap::new();
        for (i, n) in names.iter().enumerate() {
            if n.len() < MIN_LEN_ONE_EDIT {
                continue;
            }
            for d in neighbourhood(n, n.len() >= MIN_LEN_TWO_EDITS) {
                deletions.entry(d).or_default().push(i as u32);
            }
        }
        Index { names, set, deletions }
    }

    fn get(e: Ecosystem) -> &'static Index {
        static PYPI: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::PyPi));
        static NPM: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::Npm));
        static CRATES: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::Crates));
        static GEMS: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::Gems));
        static SKILLS: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::Skills));
        match e {
            Ecosystem::PyPi => &PYPI,
            Ecosystem::Npm => &NPM,
            Ecosystem::Crates => &CRATES,
            Ecosystem::Gems => &GEMS,
            Ecosystem::Skills => &SKILLS,
        }
    }

    fn popular(&'static self, name: &str) -> Option<&'static str> {
        self.set.get(name).map(String::as_str)
    }
}

/// Optimal-string-alignment distance (edits, with a swap of neighbours as
/// one edit) between two short ASCII strings, or `None` beyond `max`.
pub(super) fn distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1).min(d[i * w + j - 1] + 1).min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    let v = d[a.len() * w + b.len()];
    (v <= max).then_some(v)
}

/// Prefixes and suffixes that make a popular name look like a port or a
/// wrapper of it, per ecosystem.
fn affixes(e: Ecosystem) -> (&'static [&'static str], &'static [&'static str]) {
    match e {
        Ecosystem::PyPi => (&["python-", "python3-", "py-", "py"], &["-python", "-py", "-python3", "py"]),
        Ecosystem::Npm => (&["node-", "js-"], &["-js", ".js", "js", "-node"]),
        Ecosystem::Crates => (&["rust-"], &["-rs", "-rust"]),
        Ecosystem::Gems => (&["ruby-"], &["-ruby", "-rb"]),
        Ecosystem::Skills => (&[], &[]),
    }
}

/// What popular name `name` imitates, if any; see the module docs.
pub(super) fn lookalike(e: Ecosystem, name: &str) -> Option<Lookalike> {
    let name = canonical(e, name);
    if name.len() < MIN_LEN_ONE_EDIT - 1 || name.len() > MAX_LEN || !name.is_ascii() {
        return None;
    }
    let index = Index::get(e);
    if index.set.contains(&name) {
        return None;
    }
    if name.bytes().any(|b| b == b'0' || b == b'1') {
        let plain: String = name
            .chars()
            .map(|c| {
                if c == '0' {
                    'o'
                } else if c == '1' {
                    'l'
                } else {
                    c
                }
            })
            .collect();
        if let Some(p) = index.popular(&plain) {
            return Some(Lookalike { popular: p, likeness: Likeness::Homoglyph });
        }
    }
    let mut best: Option<(usize, u32)> = None;
    for d in neighbourhood(&name, name.len() + 1 >= MIN_LEN_TWO_EDITS) {
        for &i in index.deletions.get(&d).into_iter().flatten() {
            let p = &index.names[i as usize];
            let max = if p.len() >= MIN_LEN_TWO_EDITS && name.len() >= MIN_LEN_TWO_EDITS - 1 { 2 } else { 1 };
            if let Some(k) = distance(&name, p, max)
                && k > 0
                && best.is_none_or(|(b, _)| k < b)
            {
                best = Some((k, i));
            }
        }
    }
    if let Some((k, i)) = best {
        return Some(Lookalike { popular: &index.names[i as usize], likeness: Likeness::Edits(k) });
    }
    let (prefixes, suffixes) = affixes(e);
    let bases = prefixes
        .iter()
        .filter_map(|p| name.strip_prefix(p))
        .chain(suffixes.iter().filter_map(|s| name.strip_suffix(s)));
    for base in bases {
        if base.len() >= 4
            && let Some(p) = index.popular(base)
        {
            return Some(Lookalike { popular: p, likeness: Likeness::Affix });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn like(e: Ecosystem, n: &str) -> Option<(&'static str, Likeness)> {
        lookalike(e, n).map(|l| (l.popular, l.likeness))
    }

    #[test]
    fn measures_edits_with_swaps_as_one() {
        assert_eq!(distance("requests", "reqeusts", 2), Some(1));
        assert_eq!(distance("requests", "requets", 2), Some(1));
        assert_eq!(distance("requests", "rekwests", 2), Some(2));
        assert_eq!(distance("requests", "rxkwests", 2), None);
        assert_eq!(distance("abc", "abc", 0), Some(0));
        assert_eq!(distance("", "ab", 2), Some(2));
    }

    #[test]
    fn flags_one_edit_from_a_popular_name() {
        assert_eq!(like(Ecosystem::PyPi, "reqeusts"), Some(("requests", Likeness::Edits(1))));
        assert_eq!(like(Ecosystem::PyPi, "colourama"), Some(("colorama", Likeness::Edits(1))));
        assert_eq!(like(Ecosystem::Npm, "lodahs"), Some(("lodash", Likeness::Edits(1))));
        assert_eq!(like(Ecosystem::Npm, "@types/nod"), Some(("@types/node", Likeness::Edits(1))));
        assert_eq!(like(Ecosystem::Crates, "ripgep"), Some(("ripgrep", Likeness::Edits(1))));
        assert_eq!(like(Ecosystem::Skills, "skill-creater"), Some(("skill-creator", Likeness::Edits(1))));
    }

    #[test]
    fn flags_two_edits_only_from_long_names() {
        // `beautifulsoup4` is long: two edits count.
        assert_eq!(like(Ecosystem::PyPi, "beatifulsop4"), Some(("beautifulsoup4", Likeness::Edits(2))));
        // `pandas` (6) is not: two edits are another name.
        assert_eq!(like(Ecosystem::PyPi, "pendos"), None);
        // Three edits from anything popular.
        assert_eq!(like(Ecosystem::PyPi, "rxqwxsts"), None);
    }

    #[test]
    fn leaves_popular_and_short_names_alone() {
        for n in ["requests", "Requests", "python_dateutil", "Python.Dateutil", "scapy", "numba", "preact"] {
            let e = if n == "preact" { Ecosystem::Npm } else { Ecosystem::PyPi };
            assert_eq!(like(e, n), None, "{n}");
        }
        // `six` and `ws` are too short to have look-alikes.
        assert_eq!(like(Ecosystem::PyPi, "sux"), None);
        assert_eq!(like(Ecosystem::Npm, "wss"), None);
        assert_eq!(like(Ecosystem::Crates, "fd_find"), None);
    }

    #[test]
    fn flags_lookalike_digits_and_affixes() {
        assert_eq!(like(Ecosystem::Npm, "l0dash"), Some(("lodash", Likeness::Homoglyph)));
        assert_eq!(like(Ecosystem::PyPi, "c0l0rama"), Some(("colorama", Likeness::Homoglyph)));
        assert_eq!(like(Ecosystem::PyPi, "python-requests"), Some(("requests", Likeness::Affix)));
        assert_eq!(like(Ecosystem::Npm, "expressjs"), Some(("express", Likeness::Affix)));
        assert_eq!(like(Ecosystem::Npm, "axios-js"), Some(("axios", Likeness::Affix)));
    }

    #[test]
    fn popular_lists_are_canonical_and_unique() {
        for e in [Ecosystem::PyPi, Ecosystem::Npm, Ecosystem::Crates, Ecosystem::Gems, Ecosystem::Skills] {
            let index = Index::get(e);
            assert!(index.names.len() >= 100, "{e:?}: {}", index.names.len());
            assert_eq!(index.set.len(), index.names.len(), "{e:?} has duplicates");
            assert!(list(e).starts_with("# "), "{e:?}: the header says where the list comes from");
        }
    }
}
