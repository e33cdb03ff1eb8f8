//! Supply chain (category `SupplyChain`): packages installed under a
//! look-alike of a popular name, package sources replaced or added, and
//! installs straight from a URL.
//!
//! - `supply.typosquat`: a package that an install command, a requirements
//!   file or a dependency table names, one edit (or a look-alike digit)
//!   from a popular package and not popular itself, is `High`; two edits
//!   from a long popular name, or the popular name with an affix
//!   (`python-requests`, `lodash-js`), is `Medium`: such names exist for
//!   real more often. A Go module on github.com is named by its
//!   `owner/repo` (`go install github.com/bufbulid/protoc-gen-validate`).
//! - `supply.skill-name-lookalike`: the skill's own frontmatter name close
//!   to a well-known public skill's. `Medium`: it may impersonate that
//!   skill, but a skill named after a task will often be near another's
//!   name, and the name alone does nothing.
//! - `supply.index-override` and `supply.checksum-off`: see `overrides`.
//! - `supply.remote-install`: `pip install https://…/x.tar.gz`, `npm i
//!   https://…tgz`, `pip install git+https://…`, `cargo install --git`, `go
//!   install host/…`. From an unknown public host (or a known one over
//!   plain http) `High`, since nothing reviewed what it serves; an archive
//!   from a code host or registry, or anything from a private network's
//!   host, `Medium`; a git repository on a public code host is no
//!   finding (it is how unreleased tools are installed). A Go module from
//!   an unknown host is `Medium`: vanity import paths are normal in Go,
//!   and its checksum database still applies.
//!
//! A line that warns against the install ("never `pip install reqeusts`")
//! lowers its finding to `Low`.
//!
//! # Layout
//!
//! `names` holds the shipped popular-name lists (`popular-*.txt`) and the
//! look-alike check, `install` reads install commands, `manifest`
//! dependency lists, `overrides` source overrides, `sources` sources
//! declared in manifests and config of more ecosystems, `declared` the
//! analyzer for those and for look-alike actions, images and MCP servers,
//! `hosts` what a URL's host is, `impersonated` well-known sources
//! impersonated outside package managers (VS Code extensions, pre-commit
//! hook repositories under a look-alike owner, a Helm repository name on
//! another host). This file wires them into analyzers;
//! `edge_tests` pins the edges mutation testing found unpinned.

mod declared;
mod hosts;
mod impersonated;

pub(super) use hosts::has_url;
#[cfg(test)]
mod edge_tests;
mod install;
mod manifest;
mod mounted;
mod names;
mod overrides;
#[cfg(test)]
mod seed31_edge_tests;
mod sources;
#[cfg(test)]
mod sweep_tests;
#[cfg(test)]
mod tests;

use install::{Target, install_args};
use names::{Ecosystem, Likeness, lookalike};

use super::engine::{Analyzer, Body, LineRef, finding};
use super::rule::{warned_across_lines, warned_against};
use super::{Category, Finding, Severity};

/// Whether `text` has a word (a run of ASCII letters and digits) equal to
/// one of `words` (lower case), or starting with one when `prefix` holds:
/// the cheap tests before tokenising or running regexes, one pass over
/// the bytes.
pub(super) fn has_word(text: &str, words: &[&str], prefix: bool) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let w = &b[start..i];
        let first = w[0].to_ascii_lowercase();
        let fits = |x: &&str| {
            let x = x.as_bytes();
            x[0] == first
                && (x.len() == w.len() || prefix && x.len() < w.len())
                && w[..x.len()].eq_ignore_ascii_case(x)
        };
        if words.iter().any(fits) {
            return true;
        }
    }
    false
}

/// Whether a URL's host is a stranger's: not a registry, vendor, mirror,
/// code host or private network (`None` when it has no host).
pub(super) fn is_unknown_host(url: &str) -> Option<bool> {
    hosts::host_of(url).map(|h| hosts::classify(&h) == hosts::Host::Other)
}

static PYPIRC: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(".pypirc"));

/// The analyzers of this family.
pub(super) fn analyzers() -> Vec<Analyzer> {
    vec![
        Analyzer {
            // Few, and most are prefixes of other families' keys: the
            // prefilter's table is nearly full. `install` and `add` catch
            // install commands, `://` every source override with a URL.
            triggers: &["install", "add", "npm", "npx", "bunx", "uvx", "://", "*pypirc"],
            run: commands,
        },
        Analyzer { triggers: &["requirements*", "*dependencies"], run: manifests },
        // The frontmatter opens with `---`, a prefix of a key already there.
        Analyzer { triggers: &["---"], run: skill_name },
        // Sources declared in manifests and config, look-alike actions,
        // images and MCP servers (#14 recall).
        Analyzer { triggers: declared::TRIGGERS, run: declared::run },
        // A container given the user's keys (#14 recall, session 26).
        Analyzer { triggers: mounted::TRIGGERS, run: mounted::run },
    ]
}

/// Severity of a look-alike package: see the module docs.
fn squat_severity(likeness: Likeness) -> Severity {
    match likeness {
        Likeness::Edits(1) | Likeness::Homoglyph => Severity::High,
        Likeness::Edits(_) | Likeness::Affix => Severity::Medium,
    }
}

/// Lowers a severity to `Low` when the line warns against what is at `at`,
/// or a warning on the line before runs on into this line's inline code.
fn unless_warned(body: &Body<'_>, l: LineRef, at: usize, severity: Severity) -> Severity {
    let line = body.line(l);
    let before = &line[..at.min(line.len())];
    let previous = body.line(body.line_before(l, 1));
    let warned = warned_against(before) || (l.index > 0 && warned_across_lines(previous, before));
    if warned { severity.min(Severity::Low) } else { severity }
}

fn package(body: &Body<'_>, e: Ecosystem, name: &str, l: LineRef, at: usize, out: &mut Vec<Finding>) {
    let line = body.line(l);
    if let Some(like) = lookalike(e, name) {
        let severity = unless_warned(body, l, at, squat_severity(like.likeness));
        out.push(finding("supply.typosquat", Category::SupplyChain, severity, l, line, at));
    }
}

fn remote(body: &Body<'_>, url: &str, git: bool, l: LineRef, at: usize, out: &mut Vec<Finding>) {
    let line = body.line(l);
    let Some(host) = hosts::host_of(url) else {
        return;
    };
    let plain_http = url.split_once("://").is_some_and(|(s, _)| s.eq_ignore_ascii_case("http"));
    let severity = match hosts::classify(&host) {
        hosts::Host::Official | hosts::Host::Vendor | hosts::Host::Code if !plain_http => {
            if git {
                return;
            }
            Severity::Medium
        }
        hosts::Host::Internal => Severity::Medium,
        _ => Severity::High,
    };
    out.push(finding(
        "supply.remote-install",
        Category::SupplyChain,
        unless_warned(body, l, at, severity),
        l,
        line,
        at,
    ));
}

/// `owner/repo` of a `github.com/owner/repo/…` module path.
fn github_owner_repo(path: &str) -> Option<&str> {
    let rest = path.split_once('/')?.1;
    let owner = rest.split('/').next()?;
    let repo = rest[owner.len()..].strip_prefix('/')?.split('/').next()?;
    (!owner.is_empty() && !repo.is_empty()).then(|| &rest[..owner.len() + 1 + repo.len()])
}

/// Install commands and source overrides, line by line.
fn commands(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    for &l in lines {
        let line = body.line(l);
        for arg in install_args(line) {
            match arg.target {
                Target::Name(e, name) => package(body, e, name, l, arg.at, out),
                Target::Url { url, git } => remote(body, url, git, l, arg.at, out),
                Target::GoModule(path) => {
                    let host = path.split('/').next().unwrap_or("").to_ascii_lowercase();
                    // On github.com a module is its `owner/repo`: a look-alike
                    // of a popular one is a squat as a package's name is.
                    if host == "github.com"
                        && let Some(owner_repo) = github_owner_repo(path)
                    {
                        package(body, Ecosystem::Go, owner_repo, l, arg.at, out);
                    }
                    if !hosts::is_known_go_host(&host) {
                        let severity = unless_warned(body, l, arg.at, Severity::Medium);
                        out.push(finding(
                            "supply.remote-install",
                            Category::SupplyChain,
                            severity,
                            l,
                            line,
                            arg.at,
                        ));
                    }
                }
            }
        }
        // Every override sets a URL or a variable, or writes `.pypirc`.
        if !(has_url(line)
            || memchr::memchr(b'=', line.as_bytes()).is_some()
            || PYPIRC.find(line.as_bytes()).is_some())
        {
            continue;
        }
        for o in overrides::overrides(line) {
            out.push(finding(o.rule_id, Category::SupplyChain, o.severity, l, line, o.at));
        }
    }
}

/// Dependency lists shown or written by the skill.
fn manifests(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    for p in manifest::listed(body, lines) {
        package(body, p.ecosystem, p.name, p.line, p.at, out);
    }
}

/// How far into the frontmatter its `name:` is looked for.
const MAX_FRONTMATTER_LINES: usize = 64;

/// The frontmatter `name:` of the skill, against well-known skill names.
fn skill_name(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    if !body.text.starts_with("---") {
        return;
    }
    let Some(&first) = lines.first().filter(|l| l.index == 0) else {
        return;
    };
    // Only the frontmatter's top-level `name:`, before its closing `---`.
    let found = body
        .lines_from(first)
        .skip(1)
        .take(MAX_FRONTMATTER_LINES)
        .take_while(|(_, line)| line.trim_end() != "---")
        .find(|(_, line)| line.starts_with("name:"));
    let Some((l, line)) = found else {
        return;
    };
    let name = line["name:".len()..].trim().trim_matches(['"', '\'']);
    if lookalike(Ecosystem::Skills, name).is_some() {
        let at = line.find(name).unwrap_or(0);
        out.push(finding(
            "supply.skill-name-lookalike",
            Category::SupplyChain,
            Severity::Medium,
            l,
            line,
            at,
        ));
    }
}
