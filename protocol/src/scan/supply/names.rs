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
//! The check runs on an index built once: the popular names bucketed by
//! length, each with the counts of the characters it holds. One edit
//! changes those counts by at most two in total (a substitution drops one
//! character and adds another; a swap changes none), so a lookup compares
//! the counts of the names within two characters of its length and runs
//! the exact distance (on the stack) only where they differ by at most
//! twice the allowed edits: well under a microsecond for the skill name
//! checked on every body. (A mask of which characters occur was tried
//! first: long names share most letters, so it let nearly all through.) A symmetric-deletion index was measured first
//! and dropped: deleting two characters of a 26-character name makes 350
//! strings to hash, 300 µs per body with their sorting.

use std::collections::HashSet;
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
    /// GitHub Actions, as `owner/repo` of a workflow's `uses:`.
    Actions,
    /// Container images, as `name` or `owner/name` without registry or tag.
    Images,
    /// Go modules on github.com, as the `owner/repo` of their path.
    Go,
    /// VS Code extensions, as `publisher.name` (case does not count).
    Extensions,
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
    set: NameSet,
    /// `by_len[n]`: the names of `n` bytes that may have look-alikes, with
    /// their character classes and counts, as (classes, counts, index into
    /// `names`).
    by_len: Vec<Vec<(u64, Counts, u32)>>,
    /// The scopes of the scoped names (`@types`), each once.
    scopes: Vec<String>,
}

fn list(e: Ecosystem) -> &'static str {
    match e {
        Ecosystem::PyPi => include_str!("popular-pypi.txt"),
        Ecosystem::Npm => include_str!("popular-npm.txt"),
        Ecosystem::Crates => include_str!("popular-crates.txt"),
        Ecosystem::Gems => include_str!("popular-gems.txt"),
        Ecosystem::Skills => include_str!("popular-skills.txt"),
        Ecosystem::Actions => include_str!("popular-actions.txt"),
        Ecosystem::Images => include_str!("popular-images.txt"),
        Ecosystem::Go => include_str!("popular-go.txt"),
        Ecosystem::Extensions => include_str!("popular-vscode.txt"),
    }
}

/// `name` as the ecosystem compares names.
pub(super) fn canonical(e: Ecosystem, name: &str) -> String {
    match e {
        Ecosystem::PyPi => {
            let mut out = String::with_capacity(name.len());
            for c in name.chars().map(|c| c.to_ascii_lowercase()) {
                let sep = matches!(c, '-' | '_' | '.');
                if !(sep && out.ends_with('-')) {
                    out.push(if sep { '-' } else { c });
                }
            }
            out
        }
        Ecosystem::Crates | Ecosystem::Skills => {
            name.chars().map(|c| if c == '_' { '-' } else { c.to_ascii_lowercase() }).collect()
        }
        Ecosystem::Npm
        | Ecosystem::Gems
        | Ecosystem::Actions
        | Ecosystem::Images
        | Ecosystem::Go
        | Ecosystem::Extensions => name.to_ascii_lowercase(),
    }
}

/// [`canonical`] of an ASCII name into `buf`, without allocating: the
/// lookup runs on every skill's name. `None` when it is longer than
/// [`MAX_LEN`] (no popular name is).
fn canonical_in(e: Ecosystem, name: &str, buf: &mut [u8; MAX_LEN]) -> Option<usize> {
    debug_assert!(name.is_ascii());
    let mut len = 0;
    for b in name.bytes().map(|b| b.to_ascii_lowercase()) {
        let b = match (e, b) {
            (Ecosystem::PyPi, b'-' | b'_' | b'.') if len > 0 && buf[len - 1] == b'-' => continue,
            (Ecosystem::PyPi, b'-' | b'_' | b'.') | (Ecosystem::Crates | Ecosystem::Skills, b'_') => b'-',
            _ => b,
        };
        *buf.get_mut(len)? = b;
        len += 1;
    }
    Some(len)
}

/// FNV-1a: the popular-name sets hash a few short keys per lookup, where
/// the default SipHash costs more than the rest of the lookup. The names
/// are shipped, not chosen by senders, so flooding is no concern.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

type NameSet = HashSet<String, std::hash::BuildHasherDefault<Fnv>>;

/// How often each character class occurs in a name: letters and digits
/// have a class each, `-`, `_`, `.`, `/` and `@` one each, everything else
/// one together.
type Counts = [u8; CLASSES];
const CLASSES: usize = 48;

fn counts(s: &str) -> Counts {
    let mut c = [0u8; CLASSES];
    for b in s.bytes() {
        let class = match b.to_ascii_lowercase() {
            l @ b'a'..=b'z' => l - b'a',
            d @ b'0'..=b'9' => 26 + d - b'0',
            b'-' => 36,
            b'_' => 37,
            b'.' => 38,
            b'/' => 39,
            b'@' => 40,
            _ => 41,
        };
        c[usize::from(class)] = c[usize::from(class)].saturating_add(1);
    }
    c
}

/// Which character classes occur in a name, a bit each: the classes
/// present in one name of two and absent from the other are at most
/// [`count_difference`] (each differs by a count of one at least), so
/// their number turns most names away before the counts are compared.
fn classes(c: &Counts) -> u64 {
    c.iter().enumerate().fold(0, |m, (i, &n)| m | u64::from(n > 0) << i)
}

/// How many characters two names differ by, as multisets: one edit
/// changes it by at most two, so it bounds the distance from below.
/// Summed in `u16` lanes, which the compiler vectorises (48 counts of at
/// most 255 fit).
fn count_difference(a: &Counts, b: &Counts) -> usize {
    usize::from(a.iter().zip(b).map(|(&x, &y)| u16::from(x.abs_diff(y))).sum::<u16>())
}

impl Index {
    fn build(e: Ecosystem) -> Index {
        let names: Vec<String> = list(e)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| canonical(e, l))
            .collect();
        let set: NameSet = names.iter().cloned().collect();
        let mut by_len: Vec<Vec<(u64, Counts, u32)>> = vec![Vec::new(); MAX_LEN + 1];
        for (i, n) in names.iter().enumerate() {
            if (MIN_LEN_ONE_EDIT..=MAX_LEN).contains(&n.len()) {
                let c = counts(n);
                by_len[n.len()].push((classes(&c), c, i as u32));
            }
        }
        let mut scopes: Vec<String> = names
            .iter()
            .filter_map(|n| n.split_once('/').map(|(s, _)| s.to_string()).filter(|s| s.starts_with('@')))
            .collect();
        scopes.sort();
        scopes.dedup();
        Index { names, set, by_len, scopes }
    }

    fn get(e: Ecosystem) -> &'static Index {
        static PYPI: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::PyPi));
        static NPM: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::Npm));
        static CRATES: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::Crates));
        static GEMS: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::Gems));
        static SKILLS: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::Skills));
        static ACTIONS: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::Actions));
        static IMAGES: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::Images));
        static GO: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::Go));
        static EXTENSIONS: LazyLock<Index> = LazyLock::new(|| Index::build(Ecosystem::Extensions));
        match e {
            Ecosystem::PyPi => &PYPI,
            Ecosystem::Npm => &NPM,
            Ecosystem::Crates => &CRATES,
            Ecosystem::Gems => &GEMS,
            Ecosystem::Skills => &SKILLS,
            Ecosystem::Actions => &ACTIONS,
            Ecosystem::Images => &IMAGES,
            Ecosystem::Go => &GO,
            Ecosystem::Extensions => &EXTENSIONS,
        }
    }

    fn popular(&'static self, name: &str) -> Option<&'static str> {
        self.set.get(name).map(String::as_str)
    }
}

/// Optimal-string-alignment distance (edits, with a swap of neighbours as
/// one edit) between two ASCII strings of at most [`MAX_LEN`] bytes, or
/// `None` beyond `max` (or for longer strings). Three rows on the stack.
pub(super) fn distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > max || a.len() > MAX_LEN || b.len() > MAX_LEN {
        return None;
    }
    // Rows i-2, i-1 and i of the table, by `i % 3`; no entry exceeds
    // `MAX_LEN`, so bytes keep the rows small to clear.
    let mut rows = [[0u8; MAX_LEN + 1]; 3];
    for (j, cell) in rows[0].iter_mut().enumerate().take(b.len() + 1) {
        *cell = j as u8;
    }
    for i in 1..=a.len() {
        let (cur_i, prev_i, older_i) = (i % 3, (i - 1) % 3, (i + 1) % 3);
        rows[cur_i][0] = i as u8;
        for j in 1..=b.len() {
            let cost = u8::from(a[i - 1] != b[j - 1]);
            let prev = &rows[prev_i];
            let mut v = (prev[j] + 1).min(rows[cur_i][j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(rows[older_i][j - 2] + 1);
            }
            rows[cur_i][j] = v;
        }
    }
    let v = usize::from(rows[a.len() % 3][b.len()]);
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
        Ecosystem::Skills
        | Ecosystem::Actions
        | Ecosystem::Images
        | Ecosystem::Go
        | Ecosystem::Extensions => (&[], &[]),
    }
}

/// Whether `name` is on the ecosystem's popular list.
pub(super) fn is_popular(e: Ecosystem, name: &str) -> bool {
    let mut buf = [0u8; MAX_LEN];
    let Some(len) = name.is_ascii().then(|| canonical_in(e, name, &mut buf)).flatten() else {
        return false;
    };
    std::str::from_utf8(&buf[..len]).is_ok_and(|n| Index::get(e).set.contains(n))
}

/// What popular name `name` imitates, if any; see the module docs.
pub(super) fn lookalike(e: Ecosystem, name: &str) -> Option<Lookalike> {
    if !name.is_ascii() {
        return None;
    }
    let mut buf = [0u8; MAX_LEN];
    let len = canonical_in(e, name, &mut buf)?;
    let name = std::str::from_utf8(&buf[..len]).ok()?;
    if name.len() < MIN_LEN_ONE_EDIT - 1 {
        return None;
    }
    let index = Index::get(e);
    // A popular name is none, whatever its neighbours: the search below
    // reads only names long enough to have look-alikes (`moto` is
    // popular, and one edit from `motor`).
    if index.set.contains(name) {
        return None;
    }
    if name.contains(['0', '1']) {
        let mut plain = buf;
        for b in &mut plain[..len] {
            *b = match *b {
                b'0' => b'o',
                b'1' => b'l',
                b => b,
            };
        }
        if let Some(p) = std::str::from_utf8(&plain[..len]).ok().and_then(|p| index.popular(p)) {
            return Some(Lookalike { popular: p, likeness: Likeness::Homoglyph });
        }
    }
    let mut best: Option<(usize, u32)> = None;
    let own = counts(name);
    let own_classes = classes(&own);
    let lengths = len.saturating_sub(2).max(MIN_LEN_ONE_EDIT)..=(len + 2).min(MAX_LEN);
    for (i, bucket) in index.by_len.iter().enumerate().take(*lengths.end() + 1).skip(*lengths.start()) {
        let max = if i >= MIN_LEN_TWO_EDITS && len + 1 >= MIN_LEN_TWO_EDITS { 2 } else { 1 };
        if i.abs_diff(len) > max {
            continue;
        }
        for (c, m, k) in bucket {
            let k = *k;
            if (c ^ own_classes).count_ones() as usize > 2 * max || count_difference(m, &own) > 2 * max {
                continue;
            }
            let p = &index.names[k as usize];
            // Never 0: a popular name returned above.
            match distance(name, p, max) {
                Some(d) if best.is_none_or(|(b, _)| d < b) => best = Some((d, k)),
                _ => {}
            }
        }
    }
    if let Some((k, i)) = best {
        return Some(Lookalike { popular: &index.names[i as usize], likeness: Likeness::Edits(k) });
    }
    // An npm scope one edit from a popular one (`@antropic-ai/…` of
    // `@anthropic-ai`) is a look-alike of its whole publisher, whatever
    // the package after it.
    if let Some(scope) = name.split_once('/').map(|(s, _)| s).filter(|s| s.starts_with('@'))
        && !index.scopes.iter().any(|p| p == scope)
        && let Some(p) =
            index.scopes.iter().find(|p| p.len() >= MIN_LEN_ONE_EDIT && distance(scope, p, 1).is_some())
    {
        return Some(Lookalike { popular: p, likeness: Likeness::Edits(1) });
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
    fn the_mask_filter_misses_no_single_edit_of_any_popular_name() {
        for e in [Ecosystem::PyPi, Ecosystem::Npm, Ecosystem::Crates, Ecosystem::Gems, Ecosystem::Skills] {
            let index = Index::get(e);
            for p in index.names.iter().filter(|p| p.len() >= MIN_LEN_ONE_EDIT) {
                let b = p.as_bytes();
                let mid = b.len() / 2;
                let mut swapped = b.to_vec();
                swapped.swap(mid - 1, mid);
                let edits = [
                    [&b[..mid], &b[mid + 1..]].concat(),
                    [&b[..mid], b"q", &b[mid..]].concat(),
                    [&b[..mid], b"q", &b[mid + 1..]].concat(),
                    swapped,
                ];
                for edit in edits {
                    let edit = String::from_utf8(edit).expect("ASCII");
                    if index.set.contains(&canonical(e, &edit)) || canonical(e, &edit) != edit {
                        continue;
                    }
                    assert!(lookalike(e, &edit).is_some(), "{e:?}: {edit} (from {p})");
                }
            }
        }
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

#[cfg(test)]
#[path = "names_tests.rs"]
mod sweep_tests;

#[cfg(test)]
#[path = "names_classes_tests.rs"]
mod classes_tests;

#[cfg(test)]
#[path = "names_edge_tests.rs"]
mod edge_tests;
