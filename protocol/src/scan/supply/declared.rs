//! The analyzer for what manifests and config files declare rather than
//! what an install command names: package sources (`sources`), Go's
//! source variables on lines with no URL (`GOFLAGS=-insecure go get …`),
//! and look-alike names of GitHub Actions (`uses: actions/setup-nodejs`),
//! container images (`FROM pyth0n:3.12`) and MCP servers started by
//! `npx`/`uvx` in an agent's config (`"args": ["-y", "@scope/server-githbu"]`).
//!
//! A look-alike in a namespace its publisher owns (`actions/…`, `docker/…`)
//! is `High` at two edits too: nobody else can publish there, so a near
//! name there is a typo at best and a squat on a look-alike owner at worst.

use std::sync::LazyLock;

use super::impersonated;
use super::names::{Ecosystem, Likeness, lookalike};
use super::{overrides, sources, squat_severity, unless_warned};
use crate::scan::engine::{Body, LineRef, finding};
use crate::scan::rule::{Lazy, compile, contains_ci, contains_ci_after};
use crate::scan::{Category, Finding, Severity};

/// What wakes it: URLs, `replace`, `uses:`, `FROM`, `"args"`, Go's commonest
/// variables (`"packagist.org": false` sits among `"url"`s).
pub(super) const TRIGGERS: &[&str] = &[
    "://",
    "replace",
    "uses:",
    "from ",
    "\"args\"",
    "goflags",
    "gosumdb",
    "goproxy",
    "--install-extension",
    "\"recommendations\"",
];

/// How many lines above a line its section header or `"command"` may be.
const REACH: usize = 6;
/// Lines of a `"recommendations"` array read, at most.
const RECOMMENDATIONS: usize = 40;

/// `uses: owner/repo[/path]@ref`. Group 1 is `owner/repo`.
static USES: Lazy = LazyLock::new(|| compile(r"^\s*-?\s*uses:\s*['\x22]?([\w.-]+/[\w.-]+)(?:/[\w./-]*)?@"));

/// A Dockerfile `FROM`. Group 1 is the image reference.
static FROM: Lazy = LazyLock::new(|| compile(r"^\s*(?-i:FROM)\s+(?:--platform=\S+\s+)?([\w.:/@-]+)"));

/// An MCP server's `"args"` array. Group 1 is its first argument not a flag.
static ARGS: Lazy = LazyLock::new(|| compile(r#""args"\s*:\s*\[\s*(?:"-[^"]*"\s*,\s*)*"([@\w][\w./@-]*)""#));

/// `"command": "npx"` and its kin. Group 1 is the runner.
static COMMAND: Lazy = LazyLock::new(|| compile(r#""command"\s*:\s*"(npx|bunx|pnpx|uvx|pipx)""#));

/// `"packagist.org": false`: Composer's own registry switched off.
static NO_PACKAGIST: Lazy = LazyLock::new(|| compile(r#""packagist(?:\.org)?"\s*:\s*false"#));

/// Publishers whose namespace only they can publish in.
const OWNED: &[&str] = &["actions", "github", "docker", "aws-actions", "azure", "google-github-actions"];

/// The name an image reference is published under: no registry host
/// unless it is one of the listed ones, no `library/`, no tag or digest.
pub(super) fn image_name(reference: &str) -> String {
    let no_digest = reference.split('@').next().unwrap_or(reference);
    let last_slash = no_digest.rfind('/').map_or(0, |i| i + 1);
    let no_tag = match no_digest[last_slash..].find(':') {
        Some(i) => &no_digest[..last_slash + i],
        None => no_digest,
    };
    let name = no_tag.to_ascii_lowercase();
    let name = name.strip_prefix("docker.io/").unwrap_or(&name);
    name.strip_prefix("library/").unwrap_or(name).to_string()
}

fn lines_above<'a, 'b>(body: &'b Body<'a>, l: LineRef) -> impl Iterator<Item = &'a str> + 'b {
    (1..=REACH.min(l.index)).map(move |k| body.line(body.line_before(l, k)))
}

fn squat(body: &Body<'_>, e: Ecosystem, name: &str, l: LineRef, at: usize, out: &mut Vec<Finding>) {
    let Some(like) = lookalike(e, name) else { return };
    let owned = e == Ecosystem::Actions
        && OWNED.iter().any(|o| like.popular.split('/').next() == Some(*o))
        && name
            .split('/')
            .next()
            .is_some_and(|o| o.eq_ignore_ascii_case(like.popular.split('/').next().unwrap_or("")));
    let severity = if owned && like.likeness != Likeness::Affix {
        Severity::High
    } else {
        squat_severity(like.likeness)
    };
    let line = body.line(l);
    out.push(finding(
        "supply.typosquat",
        Category::SupplyChain,
        unless_warned(body, l, at, severity),
        l,
        line,
        at,
    ));
}

/// Whether `b` holds `FROM`, by its `F`s: a `str` search builds its
/// searcher per call (#14's speed).
fn has_from(b: &[u8]) -> bool {
    memchr::memchr_iter(b'F', b).any(|i| b[i..].starts_with(b"FROM"))
}

/// Whether `line` sets Go's variables as a command, not names them in a
/// sentence: a `=`, and the command opens with `go`, `export`, `env` or
/// `set` (compared in place: a lower-cased copy per line was an
/// allocation, #14's speed).
fn sets_a_variable(line: &str) -> bool {
    let command = line.trim_start().trim_start_matches(['`', '$', '-', '*', ' ']).as_bytes();
    let starts = |p: &str| command.len() >= p.len() && command[..p.len()].eq_ignore_ascii_case(p.as_bytes());
    memchr::memchr(b'=', line.as_bytes()).is_some()
        && ["go", "export", "env ", "set "].into_iter().any(starts)
}

/// Runs on the lines its triggers hit.
pub(super) fn run(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    for &l in lines {
        let line = body.line(l);
        let b = line.as_bytes();
        for o in sources::sources(line, lines_above(body, l)) {
            out.push(finding(
                o.rule_id,
                Category::SupplyChain,
                unless_warned(body, l, o.at, o.severity),
                l,
                line,
                o.at,
            ));
        }
        if sets_a_variable(line) {
            for o in overrides::overrides(line) {
                out.push(finding(o.rule_id, Category::SupplyChain, o.severity, l, line, o.at));
            }
        }
        // Each pattern below needs a literal: looked for first, as a
        // search with captures costs far more than a scan for bytes.
        if let Some(m) = contains_ci_after(b, b'"', b"packagist").then(|| NO_PACKAGIST.find(b)).flatten() {
            let severity = unless_warned(body, l, m.start(), Severity::High);
            out.push(finding("supply.index-override", Category::SupplyChain, severity, l, line, m.start()));
        }
        if let Some(m) = contains_ci(b, b"uses:").then(|| USES.captures(b)).flatten().and_then(|c| c.get(1)) {
            let name = std::str::from_utf8(m.as_bytes()).unwrap_or("");
            squat(body, Ecosystem::Actions, name, l, m.start(), out);
        }
        for (id, at) in impersonated::installed_extensions(line) {
            squat(body, Ecosystem::Extensions, id, l, at, out);
        }
        if contains_ci_after(b, b'"', b"recommendations\"") {
            // The array's elements, on this line and the next ones up to `]`.
            for (k, (r, text)) in body.lines_from(l).take(RECOMMENDATIONS).enumerate() {
                let text =
                    if k == 0 { text.split_once("\"recommendations\"").map_or("", |(_, t)| t) } else { text };
                let offset = body.line(r).len() - text.len();
                for (id, at) in impersonated::quoted_ids(text) {
                    squat(body, Ecosystem::Extensions, id, r, offset + at, out);
                }
                if text.contains(']') {
                    break;
                }
            }
        }
        if let Some(at) = impersonated::impersonated_hook_repo(line) {
            let severity = unless_warned(body, l, at, Severity::High);
            out.push(finding("supply.typosquat", Category::SupplyChain, severity, l, line, at));
        }
        if let Some((severity, at)) = impersonated::helm_repo_elsewhere(line) {
            let severity = unless_warned(body, l, at, severity);
            out.push(finding("supply.index-override", Category::SupplyChain, severity, l, line, at));
        }
        if let Some(m) = has_from(b).then(|| FROM.captures(b)).flatten().and_then(|c| c.get(1)) {
            let name = image_name(std::str::from_utf8(m.as_bytes()).unwrap_or(""));
            squat(body, Ecosystem::Images, &name, l, m.start(), out);
        }
        if let Some(m) =
            contains_ci_after(b, b'"', b"args\"").then(|| ARGS.captures(b)).flatten().and_then(|c| c.get(1))
        {
            let runner = std::iter::once(line).chain(lines_above(body, l)).find_map(|x| {
                COMMAND.captures(x.as_bytes()).and_then(|c| c.get(1)).map(|r| r.as_bytes().to_vec())
            });
            let eco = match runner.as_deref() {
                Some(b"uvx" | b"pipx") => Some(Ecosystem::PyPi),
                Some(_) => Some(Ecosystem::Npm),
                None => None,
            };
            if let Some(eco) = eco {
                let name = std::str::from_utf8(m.as_bytes()).unwrap_or("");
                // `pkg@1.2.3` names `pkg`; a scope's `@` starts the name.
                let name = match name[1..].find('@') {
                    Some(i) => &name[..i + 1],
                    None => name,
                };
                squat(body, eco, name, l, m.start(), out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scan::testutil::{assert_absent, assert_hit, assert_severity};
    use crate::scan::{Category::SupplyChain, Severity::*};

    #[test]
    fn look_alike_actions_and_images_are_typosquats() {
        let wf = "```yaml\nsteps:\n  - uses: actions/checkout@v4\n  - uses: actions/setup-nodejs@v4\n```\n";
        assert_hit(wf, "supply.typosquat", SupplyChain, High, 4);
        assert_absent(
            "```yaml\n- uses: actions/setup-node@v4\n- uses: my-org/setup-nodejs@v1\n```\n",
            "supply.typosquat",
        );
        assert_hit(
            "```dockerfile\nFROM pyth0n:3.12-slim AS build\n```\n",
            "supply.typosquat",
            SupplyChain,
            High,
            2,
        );
        assert_absent(
            "```dockerfile\nFROM python:3.12-slim\nFROM ghcr.io/acme/api:1.2\n```\n",
            "supply.typosquat",
        );
        // "from" in prose is no image.
        assert_absent("Copy the nginx config from pyth0n's docs.\n", "supply.typosquat");
    }

    #[test]
    fn look_alike_mcp_servers_run_by_npx() {
        let cfg = "```json\n{\"mcpServers\": {\"gh\": {\n  \"command\": \"npx\",\n  \"args\": [\"-y\", \"@modelcontextprotocol/server-githbu\"]\n}}}\n```\n";
        assert_hit(cfg, "supply.typosquat", SupplyChain, High, 4);
        let ok = cfg.replace("githbu", "github");
        assert_absent(&ok, "supply.typosquat");
        // Arguments of a program that is no package runner.
        let node = cfg.replace("\"npx\"", "\"node\"");
        assert_absent(&node, "supply.typosquat");
    }

    #[test]
    fn composer_without_packagist_and_go_flags_without_urls() {
        let off = "```json\n\"repositories\": [{\"type\": \"composer\", \"url\": \"https://repo.packagist.org\"}, {\"packagist.org\": false}]\n```\n";
        assert_severity(off, "supply.index-override", High);
        assert_severity(
            "```bash\nGOFLAGS=-insecure go get gitlab.example.dev/x/cobra@latest\n```\n",
            "supply.checksum-off",
            High,
        );
        assert_absent("```bash\ngo get github.com/spf13/viper@latest\n```\n", "supply.checksum-off");
        // Named in a sentence, not set.
        assert_absent("Keep `GOFLAGS=-insecure` out of CI.\n", "supply.checksum-off");
    }
}

#[cfg(test)]
#[path = "declared_speed9_tests.rs"]
mod speed9_tests;
#[cfg(test)]
#[path = "declared_tests.rs"]
mod sweep_tests;
