//! Path traversal and writes into system directories (category
//! `PathTraversal`).
//!
//! `../../packages/shared` is how monorepos import; `../../../../etc/passwd`
//! climbs out of any project to reach system files. Writes are graded by the
//! directory written: `/usr/local/bin` is where tools get installed, `/bin`
//! and `/boot` are not. Writes to sudoers, `ld.so.preload`, cron and shell
//! start-up files are left to the privilege and persistence rules.

use std::sync::LazyLock;

use super::rule::{Hit, Lazy, Rule, compile};
use super::{Category, Severity};

const UP: &str = r"(?:\.\.|%2e%2e|\.%2e|%2e\.)(?:/|\\|%2f|%5c)";

/// The line rules of this family.
pub(super) fn rules() -> Vec<Rule> {
    use Category::PathTraversal as P;
    use Severity::*;
    const UP_TRIGGERS: &[&str] = &["../", "..\\", "%2e%2e*", "..%2f*", "..%5c*", ".%2e*", "%2e."];
    vec![
        Rule::new(
            "path.traversal-system",
            P,
            High,
            UP_TRIGGERS,
            format!(r"(?:{UP}){{2,}}(?:etc|root|home|usr|var|proc|sys|boot|windows|winnt)(?:/|\\|%2f|%5c|\b)"),
        ),
        Rule::new("path.deep-traversal", P, Low, UP_TRIGGERS, format!(r"(?:{UP}){{4,}}")),
        Rule::new(
            "path.system-write",
            P,
            Medium,
            &["/etc/", "/usr/", "/bin/", "/sbin/", "/boot", "/lib*", "/system/", "/library/"],
            // The directory as the triggers take it: `/etc/` with its slash,
            // `/boot` a whole word, `/lib` any word it starts (the engine
            // looks no further than a trigger finds; found by the property
            // test against trying every rule on every line).
            r#"(?:>>?|\btee\s+(?:-a\s+)?|\b(?:cp|mv|install|ln)\s+(?:-\S+\s+)*(?:\S+\s+)+?)\s*["']?(/(?:(?:etc|usr|bin|sbin|system|library)/[^\s"'|;&)]*|boot\b(?:/[^\s"'|;&)]*)?|lib(?:64)?(?:/[^\s"'|;&)]*)?))"#,
        )
        .requires(&[">", "tee", "cp", "mv", "install", "ln"])
        .assess(system_write)
        .warnable(),
    ]
}

/// An XML or HTML tag ending right before the match: `<string>/bin/bash`
/// names a program, `>` there is no redirection (`<<EOF >` and `<in >`
/// are).
static TAG_END: Lazy =
    LazyLock::new(|| compile(r#"(?:^|[^<])<[a-z][\w:.-]*(?:\s+[\w:.-]+\s*=\s*(?:"[^"]*"|'[^']*'))*/?$"#));

static TARGET: Lazy = LazyLock::new(|| compile(r"/(?:etc|usr|bin|sbin|boot|lib|lib64|system|library)\S*"));

fn system_write(h: &Hit<'_>) -> Option<Severity> {
    if h.text().starts_with('>') && TAG_END.is_match(h.before().as_bytes()) {
        return None;
    }
    let m = TARGET.find(h.text().as_bytes())?;
    let target = String::from_utf8_lossy(m.as_bytes()).to_ascii_lowercase();
    let t = target.trim_end_matches(['"', '\'', '`']);
    let under = |dir: &str| t == dir || t.starts_with(&format!("{dir}/"));
    Some(if ["/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow"].iter().any(|d| under(d)) {
        Severity::Critical
    } else if t.starts_with("/etc/sudoers")
        || t.starts_with("/etc/ld.so.preload")
        || t.starts_with("/etc/cron")
        || t.starts_with("/etc/profile")
        || ["/etc/bash.bashrc", "/etc/environment", "/etc/zsh"].iter().any(|d| under(d))
    {
        return None;
    } else if t.starts_with("/usr/local/") || t.starts_with("/usr/share/keyrings") {
        Severity::Low
    } else if [
        "/bin",
        "/sbin",
        "/boot",
        "/lib",
        "/lib64",
        "/usr/bin",
        "/usr/sbin",
        "/usr/lib",
        "/system",
        // macOS: what starts with the system, for every user.
        "/library/launchdaemons",
        "/library/launchagents",
        "/library/startupitems",
    ]
    .iter()
    .any(|d| under(d))
    {
        Severity::High
    } else {
        h.base
    })
}

#[cfg(test)]
mod tests {
    use crate::scan::testutil::{assert_absent, assert_hit, assert_not_flagged, assert_severity};
    use crate::scan::{Category::*, Severity::*};

    #[test]
    fn flags_traversal_to_system_files() {
        assert_hit(
            "a\n{% include \"../../../../../etc/passwd\" %}",
            "path.traversal-system",
            PathTraversal,
            High,
            2,
        );
        assert_hit("GET /static/..%2f..%2f..%2fetc/shadow", "path.traversal-system", PathTraversal, High, 1);
    }

    #[test]
    fn ignores_monorepo_relative_imports() {
        assert_not_flagged("import { money } from \"../../packages/shared/src/money\";\ncd ../..\n");
        assert_absent("import x from \"../../packages/shared\"", "path.traversal-system");
    }

    #[test]
    fn a_closing_tag_is_no_redirection() {
        assert_absent("<array><string>/bin/bash</string></array>", "path.system-write");
        assert_absent(r#"<string attr="x">/usr/bin/env</string>"#, "path.system-write");
        // A here-document or an input redirection before `>` still writes.
        assert_severity("cat <<EOF >/bin/ls", "path.system-write", High);
        assert_severity("sudo cp ./x.plist /Library/LaunchDaemons/", "path.system-write", High);
        assert_severity("sudo cp ./x.plist /Library/Fonts/", "path.system-write", Medium);
        assert_severity("sort <in >/bin/ls", "path.system-write", High);
        assert_severity("echo x>/bin/ls", "path.system-write", High);
    }

    #[test]
    fn grades_system_writes_by_directory() {
        assert_hit("cp ./evil /bin/ls", "path.system-write", PathTraversal, High, 1);
        assert_hit(
            "echo 'x::0:0::/:/bin/sh' >> /etc/passwd",
            "path.system-write",
            PathTraversal,
            Critical,
            1,
        );
        assert_severity("sudo mv kubectl /usr/local/bin/", "path.system-write", Low);
        assert_severity("sudo tee /etc/systemd/system/app.service", "path.system-write", Medium);
        assert_absent("grep -v '^#' /etc/hosts", "path.system-write");
    }
}
