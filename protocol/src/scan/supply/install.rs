//! Package install commands on a line: which installer, and what each
//! argument asks it to install (a registry name, a URL, a Go module).
//!
//! Recognised: `pip`/`pip3` (also under `python -m` and `uv`), `pipx`,
//! `uv add`, `uv tool install`, `uvx`, `poetry add`, `pdm add`, `pipenv install`;
//! `npm`/`pnpm`/`bun` `install`/`i`/`add`, `yarn add`, `npx`/`bunx`/`pnpm
//! dlx`; `gem install`; `cargo install`/`cargo add`; `go install`/`go get`.
//! Flags are skipped with their values; an argument list ends at a shell
//! separator, the end of inline code, or an English word (prose: "pip
//! install the package first").

use std::sync::LazyLock;

use memchr::memmem;

use super::hosts::has_url;
use super::names::Ecosystem;

/// One thing an install command installs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target<'a> {
    /// A registry name, as written (without version or extras).
    Name(Ecosystem, &'a str),
    /// A URL: an archive, or a `git+` repository when `git` holds.
    Url { url: &'a str, git: bool },
    /// A Go module path (`host/path`, without `@version`).
    GoModule(&'a str),
}

/// An argument of an install command and where it starts on the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Arg<'a> {
    pub(super) target: Target<'a>,
    pub(super) at: usize,
}

/// A token of the line: its text without quotes and backticks, its offset,
/// and whether a command ends after it.
struct Tok<'a> {
    text: &'a str,
    at: usize,
    ends: bool,
    starts: bool,
}

fn tokenize(line: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut at = 0;
    for raw in line.split_inclusive(char::is_whitespace) {
        let start = at;
        at += raw.len();
        let raw = raw.trim_end();
        if raw.is_empty() {
            continue;
        }
        let starts = raw.starts_with('`') || raw.starts_with("$(");
        // Inline code closes, or a command ends with `;` or `)`.
        let ends = raw.bytes().skip(1).any(|b| b == b'`') || raw.ends_with([';', ')']) || raw == "`";
        let trimmed = raw.trim_start_matches(['`', '"', '\'', '(', '$']);
        let lead = raw.len() - trimmed.len();
        let text =
            trimmed.split('`').next().unwrap_or("").trim_end_matches(['"', '\'', ')', ';', ',', ':', '.']);
        out.push(Tok { text, at: start + lead, ends, starts });
    }
    out
}

/// Tokens that end a command's argument list.
fn is_separator(t: &str) -> bool {
    matches!(t, "&&" | "||" | "|" | ";" | "&" | "then" | "do" | "#" | "\\")
        || t.starts_with('>')
        || t.starts_with("2>")
        || t.starts_with('<')
}

/// Words that end an argument list in prose.
const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "are",
    "as",
    "before",
    "after",
    "first",
    "for",
    "from",
    "if",
    "in",
    "is",
    "it",
    "its",
    "of",
    "on",
    "or",
    "the",
    "then",
    "this",
    "that",
    "to",
    "using",
    "via",
    "which",
    "will",
    "with",
    "your",
    "you",
    "package",
    "packages",
    "dependency",
    "dependencies",
    "command",
    "instead",
    "again",
    "once",
    "here",
    "there",
    "when",
    "also",
    "only",
    "by",
    "but",
    "not",
    "so",
    "at",
    "into",
    "inside",
    "fails",
];

/// Flags that take a value, per installer family.
fn takes_value(e: Option<Ecosystem>, flag: &str) -> bool {
    const COMMON: &[&str] =
        &["--prefix", "--target", "--root", "--index-url", "--extra-index-url", "--registry", "--index"];
    if flag.contains('=') {
        return false;
    }
    if COMMON.contains(&flag) {
        return true;
    }
    let list: &[&str] = match e {
        Some(Ecosystem::PyPi) => &[
            "-r",
            "--requirement",
            "-c",
            "--constraint",
            "-i",
            "-f",
            "--find-links",
            "--trusted-host",
            "-t",
            "--python",
            "--python-version",
            "--platform",
            "--implementation",
            "--abi",
            "--src",
            "--upgrade-strategy",
            "--progress-bar",
            "--log",
            "--cache-dir",
            "--default-index",
            "--group",
            "--extra",
            "--optional",
            "-G",
            "--source",
            "--pip-args",
            "--suffix",
            "-p",
            "--with",
        ],
        Some(Ecosystem::Npm) => &[
            "-w",
            "--workspace",
            "--tag",
            "--save-prefix",
            "--cache",
            "--omit",
            "--include",
            "--userconfig",
            "--filter",
            "-C",
            "--dir",
            "--cwd",
            "-p",
            "--package",
        ],
        Some(Ecosystem::Crates) => &[
            "--git",
            "--branch",
            "--tag",
            "--rev",
            "--path",
            "--version",
            "--vers",
            "--features",
            "-F",
            "--bin",
            "--example",
            "--target-dir",
            "--profile",
            "-j",
            "--jobs",
            "--config",
            "-Z",
        ],
        Some(Ecosystem::Gems) => {
            &["-v", "--version", "--source", "-i", "--install-dir", "-n", "--bindir", "--platform"]
        }
        _ => &[],
    };
    list.contains(&flag)
}

/// What an argument installs, or `None` for a local path or placeholder.
fn target(e: Option<Ecosystem>, t: &str) -> Option<Target<'_>> {
    if has_url(t) {
        let git =
            t.starts_with("git+") || t.starts_with("git://") || t.contains(".git@") || t.ends_with(".git");
        return Some(Target::Url { url: t, git });
    }
    let Some(e) = e else {
        // Go: `host.tld/path@version`.
        let path = t.split('@').next().unwrap_or(t);
        let first = path.split('/').next().unwrap_or("");
        return (first.contains('.') && path.contains('/') && !path.starts_with('.'))
            .then_some(Target::GoModule(path));
    };
    if t.starts_with(['.', '/', '~', '$', '{', '<', '[', '\\', '-']) {
        return None;
    }
    let name = match e {
        Ecosystem::Npm => {
            if t.contains(':') {
                return None;
            }
            let cut = if let Some(rest) = t.strip_prefix('@') {
                rest.find('@').map(|i| i + 1)
            } else {
                t.find('@')
            };
            let name = cut.map_or(t, |i| &t[..i]);
            // `user/repo` is a GitHub shorthand, not a registry name.
            if name.contains('/') && !name.starts_with('@') {
                return None;
            }
            name
        }
        _ => {
            let end = t
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
                .unwrap_or(t.len());
            if end < t.len() && !t[end..].starts_with(['[', '=', '<', '>', '!', '~', ';', '@', ':']) {
                return None;
            }
            let name = &t[..end];
            if name.ends_with(".whl")
                || name.ends_with(".zip")
                || name.ends_with(".gem")
                || name.contains(".tar")
            {
                return None;
            }
            name
        }
    };
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@' | b'/' | b'~'));
    valid.then_some(Target::Name(e, name))
}

/// Words that stand right before `install` or `add` in an install
/// command (`pip3.11` is read as `pip3`; `uv tool install`, `yarn global
/// add`).
const BEFORE_SUBCOMMAND: &[&str] = &[
    "pip", "pip3", "pip2", "pipx", "pipenv", "uv", "poetry", "pdm", "rye", "npm", "pnpm", "bun", "cnpm",
    "yarn", "gem", "cargo", "go", "tool", "global",
];

static INSTALL: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("install"));
static ADD: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("add"));
static NP: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("np"));

/// The word before byte `at`, past blanks, without a version suffix
/// (`pip3.11` gives `pip3`).
fn word_before(b: &[u8], at: usize) -> &[u8] {
    let end = b[..at].iter().rposition(|c| !c.is_ascii_whitespace()).map_or(0, |i| i + 1);
    let start = b[..end]
        .iter()
        .rposition(|c| c.is_ascii_whitespace() || matches!(c, b'`' | b'(' | b'"' | b'\''))
        .map_or(0, |i| i + 1);
    let word = &b[start..end];
    word.iter().position(|&c| c == b'.').map_or(word, |dot| &word[..dot])
}

/// The cheap test before tokenising: an installer's name right before
/// `install`/`add` (lower case, as commands are written), or a runner
/// that installs what it runs (`npx`, `pnpx`, `bunx`, `uvx`), `npm i`,
/// `pnpm dlx`. A few vector searches over the line;
/// most lines a trigger sends here ("Install the packages:", "apt
/// install") fail it.
fn names_an_installer(b: &[u8]) -> bool {
    let at_word_end = |at: usize, len: usize| b.get(at + len).is_none_or(|c| !c.is_ascii_alphanumeric());
    let subcommand =
        INSTALL.find_iter(b).map(|at| (at, 7)).chain(ADD.find_iter(b).map(|at| (at, 3))).any(|(at, len)| {
            // The word before found once, not once per installer compared
            // (#14's speed, ninth pass).
            at_word_end(at, len) && {
                let before = word_before(b, at);
                BEFORE_SUBCOMMAND.iter().any(|w| w.as_bytes() == before)
            }
        });
    subcommand
        || NP.find_iter(b).any(|at| {
            let rest = &b[at..];
            rest.starts_with(b"npx ")
                || rest.starts_with(b"npm i")
                || rest.starts_with(b"npm exec")
                || rest.starts_with(b"npm dlx")
        })
        || runs_a_package(b)
}

/// Whether `b` names a package runner whose name holds no `np`: `bunx `,
/// `uvx `, `pipx run ` (by the `x` of each, rare on the lines asked) or
/// `tool run ` (`uv tool run`). Was a search per runner (#14's speed,
/// ninth pass).
fn runs_a_package(b: &[u8]) -> bool {
    memchr::memchr_iter(b'x', b).any(|i| {
        let (before, after) = (&b[..i], &b[i + 1..]);
        after.starts_with(b" ")
            && (before.ends_with(b"bun")
                || before.ends_with(b"uv")
                || before.ends_with(b"pip") && after.starts_with(b" run "))
    }) || TOOL_RUN.find(b).is_some()
}

/// `uv tool run`'s words, searched for.
static TOOL_RUN: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("tool run "));

/// First words of the installers [`installer`] knows.
const INSTALLERS: &[&str] = &[
    "pip", "pipx", "pipenv", "uv", "poetry", "pdm", "rye", "npm", "pnpm", "bun", "cnpm", "yarn", "npx",
    "bunx", "pnpx", "uvx", "gem", "cargo", "go",
];

/// How many tokens from `i` name an installer that installs the arguments
/// after them, and its ecosystem (`None` for Go).
fn installer(toks: &[Tok<'_>], i: usize) -> Option<(usize, Option<Ecosystem>)> {
    // Most tokens are no installer: no copies for them.
    let t = toks[i].text;
    // `get` is `None` for a word shorter than three bytes or cut inside a
    // character; `pip` itself passes here as it would below.
    let versioned_pip = t.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("pip"))
        && t[3..].bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if !versioned_pip && !INSTALLERS.iter().any(|w| w.eq_ignore_ascii_case(t)) {
        return None;
    }
    let word = |k: usize| toks.get(i + k).map(|t| t.text.to_ascii_lowercase());
    let w0 = word(0)?;
    let w1 = word(1).unwrap_or_default();
    let w2 = word(2).unwrap_or_default();
    let pip =
        |w: &str| w.strip_prefix("pip").is_some_and(|v| v.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    let py = Some(Ecosystem::PyPi);
    let npm = Some(Ecosystem::Npm);
    Some(match (w0.as_str(), w1.as_str()) {
        (w, "install") if pip(w) || w == "pipx" || w == "pipenv" => (2, py),
        ("uv" | "poetry" | "pdm" | "rye", "add") => (2, py),
        ("uv", "tool") if w2 == "install" => (3, py),
        // `uv tool run X` and `pipx run X` install the PyPI package they
        // run, as `uvx X` does.
        ("uv", "tool") if w2 == "run" => (3, py),
        ("pipx", "run") => (2, py),
        ("npm" | "pnpm" | "bun" | "cnpm", "install" | "i" | "add" | "in" | "isntall") => (2, npm),
        ("yarn", "add") => (2, npm),
        ("yarn", "global") if w2 == "add" => (3, npm),
        ("npm", "exec") | ("pnpm" | "yarn", "dlx") => (2, npm),
        ("npx" | "bunx" | "pnpx", _) => (1, npm),
        // `uvx ruff` runs the PyPI package it names, installed on the spot.
        ("uvx", _) => (1, py),
        ("gem", "install") => (2, Some(Ecosystem::Gems)),
        ("cargo", "install" | "add") => (2, Some(Ecosystem::Crates)),
        ("go", "install" | "get") => (2, None),
        _ => return None,
    })
}

/// The targets of every install command on `line`.
pub(super) fn install_args(line: &str) -> Vec<Arg<'_>> {
    // The cheap test: most lines a trigger sends here name no installer.
    if !names_an_installer(line.as_bytes()) {
        return Vec::new();
    }
    let toks = tokenize(line);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let Some((skip, eco)) = installer(&toks, i) else {
            i += 1;
            continue;
        };
        // `npx` runs its first argument; the rest are that program's.
        let one = toks[i].text.eq_ignore_ascii_case("npx")
            || toks[i].text.eq_ignore_ascii_case("bunx")
            || toks[i].text.eq_ignore_ascii_case("pnpx")
            || toks[i].text.eq_ignore_ascii_case("uvx")
            || toks[i + 1..].first().is_some_and(|t| t.text == "dlx" || t.text == "exec" || t.text == "run")
            || toks.get(i + 2).is_some_and(|t| t.text == "run" && toks[i + 1].text == "tool");
        let mut j = i + skip;
        if toks[j - 1].ends {
            i = j;
            continue;
        }
        while j < toks.len() {
            let t = &toks[j];
            if t.starts || is_separator(t.text) || STOP_WORDS.iter().any(|w| w.eq_ignore_ascii_case(t.text)) {
                break;
            }
            // `cargo install --git URL`: the flag's value is what is installed.
            if eco == Some(Ecosystem::Crates) && (t.text == "--git" || t.text.starts_with("--git=")) {
                let url = t.text.strip_prefix("--git=").or_else(|| toks.get(j + 1).map(|n| n.text));
                if let Some(url) = url.filter(|u| has_url(u)) {
                    let at = if t.text == "--git" { toks[j + 1].at } else { t.at + "--git=".len() };
                    out.push(Arg { target: Target::Url { url, git: true }, at });
                }
            }
            if t.text.starts_with('-') {
                if takes_value(eco, t.text) {
                    j += 1;
                }
                if toks.get(j).is_some_and(|t| t.ends) {
                    j += 1;
                    break;
                }
                j += 1;
                continue;
            }
            if let Some(target) = target(eco, t.text) {
                out.push(Arg { target, at: t.at });
                if one {
                    j += 1;
                    break;
                }
            }
            j += 1;
            if t.ends {
                break;
            }
        }
        // `j > i`: every installer's words are at least its own one.
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each argument's target, as a string (shared with `sweep_tests`).
    pub(super) fn names(line: &str) -> Vec<String> {
        install_args(line)
            .into_iter()
            .map(|a| match a.target {
                Target::Name(_, n) => n.to_string(),
                Target::Url { url, git } => format!("{}{url}", if git { "git:" } else { "url:" }),
                Target::GoModule(m) => format!("go:{m}"),
            })
            .collect()
    }

    #[test]
    fn reads_the_arguments_of_every_installer() {
        assert_eq!(
            names("pip install -U requests==2.31 'flask[async]>=3' -r req.txt"),
            ["requests", "flask"]
        );
        assert_eq!(names("python3 -m pip install --index-url https://x.example/simple foo"), ["foo"]);
        assert_eq!(
            names("uv pip install numpy && uv add pandas; poetry add httpx@^0.27"),
            ["numpy", "pandas", "httpx"]
        );
        assert_eq!(names("npm i -D @types/node@20 lodash@^4 user/repo file:../x"), ["@types/node", "lodash"]);
        assert_eq!(names("npx create-next-app@latest my-app"), ["create-next-app"]);
        assert_eq!(names("yarn global add typescript && gem install rails -v 7"), ["typescript", "rails"]);
        // `yarn global` installs only with `add` (the npm install lets the line through).
        assert_eq!(names("yarn global remove typescript && npm install lodash"), ["lodash"]);
        assert_eq!(
            names("cargo install --locked ripgrep && go install golang.org/x/tools/gopls@latest"),
            ["ripgrep", "go:golang.org/x/tools/gopls"]
        );
        assert_eq!(
            names("pip install git+https://git.example.net/a/b.git https://h.example/x.tar.gz"),
            ["git:git+https://git.example.net/a/b.git", "url:https://h.example/x.tar.gz"]
        );
    }

    #[test]
    fn the_cheap_test_finds_installers_only() {
        assert!(names_an_installer(b"pip3.11 install x"));
        assert!(names_an_installer(b"`uv tool install ruff`"));
        assert!(names_an_installer(b"npx create-x"));
        assert!(!names_an_installer(b"1. Install the system packages:"));
        assert!(!names_an_installer(b"sudo apt install -y libpq-dev"));
        assert!(!names_an_installer(b"add the padding"));
    }

    #[test]
    fn stops_at_prose_inline_code_and_separators() {
        assert_eq!(
            names("Run `pip install` the package before `requests` is imported"),
            Vec::<String>::new()
        );
        assert_eq!(names("pip install the dependencies first"), Vec::<String>::new());
        assert_eq!(names("`pip install rich` and `black`"), ["rich"]);
        assert_eq!(names("pip install ./dist/x.whl . -e . | tee log"), Vec::<String>::new());
        assert_eq!(names("pip install x.whl > /dev/null"), Vec::<String>::new());
    }
}

#[cfg(test)]
#[path = "install_tests.rs"]
mod sweep_tests;

#[cfg(test)]
#[path = "install_edge_tests.rs"]
mod edge_tests;

#[cfg(test)]
#[path = "install_speed9_tests.rs"]
mod speed9_tests;
