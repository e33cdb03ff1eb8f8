//! Security controls switched off in code and configuration (category
//! `PrivilegeEscalation`, beside `priv.disable-security` for host
//! controls): TLS verification, commit hooks, and the security tools and
//! workflows of a project.
//!
//! `verify=False` against a local self-signed server is a shortcut; the
//! same setting made global (`git config --global http.sslVerify false`,
//! `export NODE_TLS_REJECT_UNAUTHORIZED=0`) leaves every later connection
//! open to interception. Skipping hooks (`--no-verify`, `core.hooksPath
//! /dev/null`) or uninstalling a scanner is never needed to do a task, and
//! a skill that asks for it is removing what would have caught it. The
//! same commands in a warning ("never commit with `--no-verify`") are Low.
//! Prose that asks for the same is read by `instruction`. Stopping cloud
//! audit trails and detectors, opening admission control
//! (`control.audit-off`) and weakening a server's own settings
//! (`control.server-weakened`: root or empty-password SSH logins, PHP's
//! `disable_functions` cleared or remote includes allowed) are
//! the same removal, one layer down; so is a security agent stopped,
//! unloaded, killed or uninstalled by any service manager
//! (`control.security-agent-stopped`), and a tool's or a platform's own
//! protection set to off in its settings (`control.protection-off`: the
//! browser's same-origin policy, container profiles, git's ownership and
//! object checks, Jenkins' login, a database trusting every address, a
//! bucket's public-access block, sign-in policies, PAM letting anyone in,
//! restore points deleted).

use std::sync::LazyLock;

use super::rule::{Hit, Lazy, Rule, compile};
use super::{Category, Severity};

/// The line rules of this family.
pub(super) fn rules() -> Vec<Rule> {
    use Category::PrivilegeEscalation as P;
    use Severity::*;
    vec![
        Rule::new(
            "control.tls-verify-off",
            P,
            Medium,
            &[
                // `verify=False`, `verify_ssl: false`: the value, not the
                // name, which every "Verification" heading would fire on.
                "=false", "= false", ":false", ": false", "ssl_verify*", "verify_ssl*", "sslverify", "node_tls_reject*",
                "rejectunauthorized", "reject_unauthorized", "insecureskipverify", "insecure_skip_verify",
                "insecure-skip-tls-verify", "pythonhttpsverify", "git_ssl_no_verify", "strict-ssl", "strictssl",
                "cert_none", "_create_unverified_context", "_create_default_https_context", "-skipcertificatecheck",
                "--no-check-certificate", "trusted-host", "pip_trusted_host", ".curlrc", "check_certificate",
            ],
            r#"\bverify\s*=\s*false\b|\bverify_ssl\s*[=:]\s*['"]?false\b|\bssl_verify\w*['"]?\s*[=:]\s*['"]?(?:false|0|no)\b|\bnode_tls_reject_unauthorized['"]?\s*[=:,]\s*['"]?0|\breject_?unauthorized['"]?\s*[:=]\s*false\b|\binsecure_?skip_?(?:tls_?)?verify['"]?\s*[:=]\s*true\b|--insecure-skip-tls-verify\b(?:=true)?|\bpythonhttpsverify['"]?\s*[=:]\s*['"]?0|\bgit_ssl_no_verify['"]?\s*[=:]\s*['"]?(?:1|true)|\bhttp\.sslverify['"]?\s*[= ]\s*['"]?false|\bsslverify['"]?\s*[=:]\s*['"]?false|\bstrict-?ssl['"]?\s*[= :]\s*['"]?false|\bcert_none\b|\bssl\._create_unverified_context\b|_create_default_https_context\s*=|-skipcertificatecheck\b|--no-check-certificate\b|--trusted-host[= ]|\bpip_trusted_host['"]?\s*[=:]|^\s*trusted-host\s*=|["']?(?:-k|--insecure|insecure)["']?\s*>>?\s*\S*\.curlrc\b|\bcheck_certificate\s*=\s*off\b"#,
        )
        .assess(tls_off)
        .warnable(),
        // Windows' protections switched off by policy rather than by their
        // tools: Defender by its policy key (High); every script allowed
        // for every user of the machine (Medium: Microsoft calls the
        // execution policy no security boundary, and guides name it to
        // warn against it).
        Rule::new(
            "control.windows-protection-off",
            P,
            High,
            &[
                "disableantispyware", "disableantivirus", "disablerealtimemonitoring", "disablebehaviormonitoring",
                "disableioavprotection", "set-executionpolicy",
            ],
            r"\bdisable(?:antispyware|antivirus|realtimemonitoring|behaviormonitoring|ioavprotection)\b[^\n]*?(?:-value\s+|/d\s+|=\s*)1\b|\bset-executionpolicy\s+(?:-executionpolicy\s+)?(?:unrestricted|bypass)\b[^\n]*-scope\s+localmachine\b",
        )
        .assess(execution_policy_is_medium)
        .warnable(),
        // The kernel or the boot chain told to load what nobody signed.
        Rule::new(
            "control.boot-integrity-off",
            P,
            High,
            &["mokutil", "sig_enforce=0", "lockdown=none", "testsigning", "nointegritychecks"],
            r"\bmokutil\s+--disable-validation\b|\bsig_enforce=0\b|\blockdown=none\b|\bbcdedit\b[^\n]*\b(?:testsigning|nointegritychecks)\s+on\b",
        )
        .warnable(),
        // An identity provider's sign-on or enrolment policies switched off
        // through its API: every account loses its second factor at once.
        Rule::new(
            "control.identity-policy-off",
            P,
            High,
            &["lifecycle/deactivate"],
            r"/policies/\S+/lifecycle/deactivate\b",
        )
        .warnable(),
        // A project's supply-chain and security checks deleted: the files
        // that configure them, or their lines cut out of the CI workflow.
        Rule::new(
            "control.security-check-deleted",
            P,
            High,
            &[
                "deny.toml", "audit.yml", "audit.yaml", "codeql.yml", "dependabot.yml", "gitleaks.toml", "cargo deny",
                "cargo audit", "cargo vet", "npm audit", "pip-audit", "gitleaks", "trivy", "semgrep", "snyk",
            ],
            r#"\b(?:git\s+rm|rm)\b[^\n|;&]*[\s/](?:deny\.toml|audit\.ya?ml|codeql\.yml|dependabot\.yml|gitleaks\.toml)\b|\bsed\s+(?:-\S+\s+)*['"]?[^'"\n]*/(?:cargo\s+(?:deny|audit|vet)|npm\s+audit|pip-audit|gitleaks|trivy|semgrep|snyk)\b[^/\n]*/d"#,
        )
        .warnable(),
        // Code that accepts every certificate or every host name: what a
        // proxy in the middle sees is everything the client sends.
        Rule::new(
            "control.tls-trust-all",
            P,
            High,
            &[
                "*hostnameverifier", "allow_all_hostname_verifier", "insecuretrustmanagerfactory", "trustallstrategy",
                "trustall*",
            ],
            r"hostnameverifier\s*(?:\{\s*\w+\s*,\s*\w+\s*->\s*true\b|\(\s*\{?\s*\(?\s*\w+\s*,\s*\w+\s*\)?\s*->\s*true\b|\(\s*(?:new\s+)?noophostnameverifier\b)|\bnoophostnameverifier\b|\ballow_all_hostname_verifier\b|\binsecuretrustmanagerfactory\b|\btrustallstrategy\b|\.sslsocketfactory\(\s*trustall\w*",
        )
        .assess(tls_off)
        .warnable(),
        Rule::new(
            "control.hooks-off",
            P,
            High,
            &["--no-verify", "hookspath", "husky*", "pre-commit uninstall", ".pre-commit-config*", ".git/hooks", ".husky"],
            r#"\bgit\s+config\s+(?:--global|--system)\s+core\.hookspath\s+['"]?(?:~|\$\{?home\}?|/)|\bgit\b[^\n|;&]*\s--no-verify\b|\b(?:commit|push)\w*\b[^\n]{0,40}--no-verify\b|--no-verify\b[^\n]{0,40}\b(?:commit|push|hooks?)\b|\bcore\.hookspath['"]?\s*[= ]\s*['"]?(?:/dev/null|/tmp\S*|/nonexistent|''|""|$)|\bhusky(?:_skip_hooks)?=(?:0|1|true)\b|\bpre-commit\s+uninstall\b|\b(?:rm|del|remove-item|git\s+rm)\b[^\n|;&]*(?:\.git/hooks\b|\.pre-commit-config\.ya?ml|\.husky\b)|\bchmod\s+-x\s+\S*\.git/hooks\b"#,
        )
        .requires(&["verify", "hookspath", "husky", "uninstall", "rm", "del", "remove-item", "chmod"])
        .assess(hooks_off)
        .warnable(),
        Rule::new(
            "control.security-tool-removed",
            P,
            High,
            &[
                "bandit", "pip-audit", "semgrep", "detect-secrets", "eslint-plugin-*", "@microsoft/eslint-plugin-sdl",
                "snyk", "audit-ci", "codeql*", "dependabot*", "gitleaks", "trivy", "trufflehog", "brakeman",
                "bundler-audit", "safety", ".snyk", "protection",
                "secret_scanning*", "--disable-secret-scanning",
            ],
            security_tool_removed(),
        )
        .warnable(),
        // Audit, detection and admission controls stopped or deleted: the
        // record of what happens next, and the guard before it (#14 recall).
        Rule::new(
            "control.audit-off",
            P,
            High,
            // `configservice` and `securityhub` lines usually name
            // `cloudtrail` too; the prefilter's table is nearly full.
            &[
                "cloudtrail", "guardduty", "configservice", "securityhub", "pod-security*", "kubectl", "auditctl", "auditd",
                "logging sinks", "diagnostic-settings", "public-access-block",
            ],
            r"\baws\s+cloudtrail\s+(?:stop-logging|delete-trail)\b|\baws\s+guardduty\s+(?:delete-detector|disassociate\S*|update-detector\b[^\n]*--no-enable)|\baws\s+configservice\s+(?:stop|delete)-configuration-recorder\b|\baws\s+securityhub\s+disable-security-hub\b|\bpod-security\.kubernetes\.io/enforce\s*[=:]\s*privileged\b|\bkubectl\s+delete\s+(?:validating|mutating)webhookconfigurations?\b[^\n]*(?:--all\b|gatekeeper|kyverno)|\bkubectl\s+delete\s+(?:clusterpolicies|constrainttemplates|constraints)\S*\s[^\n]*--all\b|\bkubectl\b[^\n]*\b(?:gatekeeper|kyverno|falco)\S*\s[^\n]*\bscale\b[^\n]*--replicas[= ]0\b|\bkubectl\b[^\n]*\bscale\b[^\n]*\b(?:gatekeeper|kyverno|falco)\S*[^\n]*--replicas[= ]0\b|\bauditctl\s+-e\s*0\b|\b(?:systemctl|service)\s+(?:stop|disable|mask)\s+(?:--now\s+)?auditd\b|\bkubectl\s+delete\s+(?:networkpolic(?:y|ies)|netpol|podsecuritypolic(?:y|ies)|psp)\b[^\n]*(?:--all\b|\s-a\b)|\bgcloud\s+logging\s+sinks\s+delete\b|\baz\s+monitor\s+diagnostic-settings\s+delete\b|\baws\s+s3api\s+delete-public-access-block\b|\bput-public-access-block\b[^\n]*\bblockpublic(?:acls|policy)=false\b",
        )
        .warnable(),
        // A server's own protections weakened in its configuration.
        Rule::new(
            "control.server-weakened",
            P,
            High,
            &["permitrootlogin", "permitemptypasswords", "disable_functions", "allow_url_include"],
            r#"\bpermitrootlogin\s+yes\b|\bpermitemptypasswords\s+yes\b|^\s*disable_functions\s*=\s*(?:["']\s*["'])?\s*$|\ballow_url_include\s*=\s*(?:on|1|true)\b"#,
        )
        .warnable(),
        // A tool's or a platform's own protection set to off in its
        // settings: the browser's same-origin policy, a container's
        // seccomp and AppArmor profiles, git's ownership and object
        // checks, Jenkins' login and CSRF crumbs, a database open to every
        // address without a password, a bucket's public-access block, an
        // identity tenant's sign-in policies. Each is the one setting
        // that makes the protection nothing (a PAM stack that lets anyone
        // in, the machine's restore points and recovery removed); a
        // weaker cousin of each
        // (content trust, fsck, TLS to the database) is `Medium`.
        Rule::new(
            "control.protection-off",
            P,
            High,
            &[
                "disable-web-security", "unconfined", "insecure-registries", "docker_content_trust",
                "safe.directory", "fsckobjects", "core.protect*", "protocol.file.allow", "no_authentication",
                "unsecured", "setcrumbissuer", "permissive-script-security", "trust", "ssl = off", "ssl=off",
                "block_public_", "restrict_public_buckets", "audit disable", "*conditionalaccesspolicy*",
                "*securitydefaultenforcementpolicy*", "pam_permit", "shadowcopy", "vssadmin", "wbadmin", "bcdedit",
            ],
            PROTECTION_OFF,
        )
        .assess(protection_off)
        .warnable(),
        // A security agent stopped, unloaded, killed or removed, whatever
        // manages it: every service manager's verb against every agent's
        // name, rather than one list per manager.
        Rule::new(
            "control.security-agent-stopped",
            P,
            High,
            &[
                "systemctl", "launchctl", "sc stop", "sc.exe", "sc config", "sc delete", "stop-service",
                "set-service", "pkill", "killall", "taskkill", "kextunload", "systemextensionsctl", "apt", "apt-get",
                "yum", "dnf", "zypper", "brew", "rm -*",
            ],
            security_agent_stopped(),
        )
        .warnable(),
        // Every later `git` over SSH, in every repository: host keys
        // unchecked or the connection relayed through someone's proxy.
        Rule::new(
            "control.ssh-global-override",
            P,
            High,
            &["core.sshcommand"],
            r#"\bgit\s+config\s+(?:--global|--system)\s+core\.sshcommand\b[^\n]*(?:stricthostkeychecking\s*=?\s*no\b|proxycommand|userknownhostsfile\s*=?\s*/dev/null)"#,
        )
        .warnable(),
    ]
}

/// Security agents and the host's own guards, as their services,
/// processes, packages or folders are named.
const SECURITY_AGENTS: &str = r"(?:falcon(?:-sensor|d)?|crowdstrike|csagent|sentinel(?:one|agent|d|ctl)?|carbonblack|cbagentd|cb-psc|cbdefense|mdatp|wdavdaemon|windefend|microsoft\s+defender|sophos\w*|esets?\w*|symantec\w*|mcafee\w*|trendmicro|ds_agent|cylance\w*|tanium\w*|osqueryd?|wazuh(?:-agent)?|ossec\w*|auditd|auditbeat|elastic-agent|elastic-endpoint|clamav\w*|clamd|fail2ban|apparmor|firewalld|com\.crowdstrike\.\w+|com\.sentinelone\.\w+|com\.google\.santa\w*|santad|blockblock|lulu|littlesnitch\w*|velociraptor|qualys\w*|ir_agent|rapid7\w*|insight_agent|nessusagent)";

/// Each service manager's stop, unload, kill or removal verb before a
/// security agent's name on the same command.
fn security_agent_stopped() -> String {
    format!(
        r#"\b(?:systemctl\s+(?:--now\s+)?(?:stop|disable|mask|kill)|launchctl\s+(?:unload|bootout|remove|disable)|sc(?:\.exe)?\s+(?:stop|delete|config)|stop-service|set-service\b[^\n|;&]*-startuptype\s+disabled|pkill|killall|taskkill\b[^\n|;&]*/im|kextunload|systemextensionsctl\s+uninstall|(?:apt(?:-get)?|yum|dnf|zypper)\s+(?:-\S+\s+)*(?:remove|purge|erase)|brew\s+(?:uninstall|remove)(?:\s+--cask)?|rm\s+-\w*r\w*)\b[^\n|;&]*\b{SECURITY_AGENTS}\b"#
    )
}

/// Security tools of each ecosystem, as package or file names.
const SECURITY_TOOLS: &str = r"(?:bandit|safety|pip-audit|semgrep|detect-secrets|dlint|guarddog|eslint-plugin-(?:security|no-unsanitized|xss)|@microsoft/eslint-plugin-sdl|snyk|audit-ci|better-npm-audit|lockfile-lint|gitleaks|trivy|trufflehog|brakeman|bundler-audit|cargo-audit|cargo-deny|cargo-vet|codeql|dependabot)";

fn security_tool_removed() -> String {
    format!(
        r#"\b(?:npm|yarn|pnpm|bun)\s+(?:uninstall|remove|rm|un|r)\b[^\n|;&]*\b{SECURITY_TOOLS}\b|\b(?:pip3?|python3?\s+-m\s+pip|poetry|pipenv|uv|conda|cargo|gem|go)\s+(?:uninstall|remove|rm)\b[^\n|;&]*\b{SECURITY_TOOLS}\b|\bsed\s+-i\S*\s+(?:-e\s+)?['"]?/[^/\n]*\b{SECURITY_TOOLS}\b[^/\n]*/d|\b(?:rm|git\s+rm|del|remove-item)\b[^\n|;&]*(?:\.github/(?:workflows/\S*(?:codeql|security|snyk|semgrep|trivy|gitleaks|dependency-review|scorecard|sast|secret|audit|osv)\S*|dependabot\.ya?ml)|\.snyk\b|\.gitleaks\.toml|\.semgrep\.ya?ml|\.bandit\b)|\bgh\s+api\b[^\n]*(?:-x|--method)\s*delete\b[^\n]*/protection\b|\bgh\s+api\b[^\n]*/protection\b[^\n]*(?:-x|--method)\s*delete\b|--disable-secret-scanning\b|\bsecret_scanning\w*["']?\s*[:=]\s*\{{?\s*["']?status["']?\s*[:=]\s*["']?disabled"#
    )
}

/// A connection to this machine: a self-signed development server.
static LOCAL: Lazy =
    LazyLock::new(|| compile(r"\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\]|host\.docker\.internal)\b"));

/// A setting that outlives the command: global configuration, an exported
/// variable, a start-up file, a container image, a process-wide default.
static LASTING: Lazy = LazyLock::new(|| {
    compile(
        r"\bgit\s+config\s+(?:--global|--system)\b|\b(?:npm|yarn|pnpm)\s+config\s+set\b|\bpip3?\s+config\s+set\b|^\s*(?:export\s|setx\s|env\s|ENV\s)|\$env:|>>\s*\S*(?:rc|profile)\b|_create_default_https_context\s*=|\[system\.net\.servicepointmanager\]",
    )
});

fn execution_policy_is_medium(h: &Hit<'_>) -> Option<Severity> {
    let policy = h.text().get(..19).is_some_and(|t| t.eq_ignore_ascii_case("set-executionpolicy"));
    Some(if policy { Severity::Medium } else { h.base })
}

fn tls_off(h: &Hit<'_>) -> Option<Severity> {
    let line = h.line().as_bytes();
    Some(if LOCAL.is_match(line) {
        Severity::Low
    } else if LASTING.is_match(line) {
        Severity::High
    } else {
        h.base
    })
}

/// `--no-verify` for `cargo publish` or `npm` skips a build check, not
/// hooks; only git's skips hooks.
fn hooks_off(h: &Hit<'_>) -> Option<Severity> {
    let m = h.text().to_ascii_lowercase();
    if m.contains("--no-verify")
        && !m.starts_with("git")
        && (h.line().contains("cargo ") || h.line().contains("npm "))
    {
        return None;
    }
    // "`--no-verify` skips the commit hooks", "`git push --no-verify`
    // skips the hook" say what the flag does; "the user can bypass with
    // `git commit --no-verify`" names the user's own way out.
    let describes = DESCRIBES_FLAG.is_match(m.as_bytes())
        || DESCRIBED_AFTER.is_match(h.after().as_bytes())
        || USERS_CHOICE.is_match(h.before().as_bytes());
    Some(if describes { Severity::Medium } else { h.base })
}

const PROTECTION_OFF: &str = r#"--disable-web-security\b|\b(?:seccomp|apparmor)[=:]\s*["']?unconfined\b|\binsecure-registries\b|\bdocker_content_trust\s*=\s*["']?0\b|\bsafe\.directory\s+["']?\*|\b(?:transfer|fetch|receive)\.fsckobjects\s+["']?false\b|\bcore\.protect(?:ntfs|hfs)\s+["']?false\b|\bprotocol\.file\.allow\s+["']?always\b|\bsecurityrealm\.no_authentication\b|\bauthorizationstrategy\.unsecured\b|\bsetcrumbissuer\s*\(\s*null\s*\)|\bpermissive-script-security\.enabled\b|\bhost(?:ssl)?\s+all\s+all\s+(?:0\.0\.0\.0/0|::/0|all)\s+trust\b|\bssl(?: = |=)off\b|\b(?:block_public_(?:acls|policy)|restrict_public_buckets)\s*=\s*false\b|\bvault\s+audit\s+disable\b|conditionalaccesspolicy\b[^\n]*-state\s+["']?disabled\b|securitydefaultenforcementpolicy\b[^\n]*-isenabled:?\s*\$?false\b|\bauth\s+sufficient\s+pam_permit\.so\b|\bvssadmin(?:\.exe)?\s+delete\s+shadows\b|\bwmic\s+shadowcopy\s+delete\b|\bwbadmin(?:\.exe)?\s+delete\s+(?:catalog|backup|systemstatebackup)\b|\bbcdedit\b[^\n]*\brecoveryenabled\s+no\b"#;

/// The weaker switches of [`PROTECTION_OFF`]: worth a look, not a refusal.
static LESSER_PROTECTION: Lazy = LazyLock::new(|| {
    compile(r"^(?:insecure-registries|docker_content_trust|(?:transfer|fetch|receive)\.fsckobjects|ssl ?=)")
});

fn protection_off(h: &Hit<'_>) -> Option<Severity> {
    let m = h.text().to_ascii_lowercase();
    Some(if LESSER_PROTECTION.is_match(m.as_bytes()) { Severity::Medium } else { h.base })
}

/// What follows a command that says what it does.
static DESCRIBED_AFTER: Lazy = LazyLock::new(|| {
    compile(
        r"^[`'\x22]?\)?\s*(?:(?:would|will|just|only)\s+)?(?:skips|bypasses|disables|turns\s+off|means)\b",
    )
});

/// A person other than the agent who may run it, written before it.
static USERS_CHOICE: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:the\s+user|users|a\s+developer|developers|the\s+author|a\s+human|humans)\s+(?:can|may|could)\b[^.;:!?]*$",
    )
});

static DESCRIBES_FLAG: Lazy = LazyLock::new(|| {
    compile(r"^--no-verify\b\W{0,3}(?:flag\s+|option\s+)?(?:skips|bypasses|disables|turns\s+off|means)\b")
});

#[cfg(test)]
mod tests {
    use crate::scan::testutil::{assert_absent, assert_hit, assert_severity};
    use crate::scan::{Category::*, Severity::*};

    #[test]
    fn audit_trails_detectors_and_admission_switched_off() {
        let body = "```bash\naws cloudtrail stop-logging --name \"$t\"\n```\n";
        assert_hit(body, "control.audit-off", PrivilegeEscalation, High, 2);
        assert_severity(
            "kubectl label ns \"$ns\" pod-security.kubernetes.io/enforce=privileged --overwrite",
            "control.audit-off",
            High,
        );
        assert_severity("kubectl delete validatingwebhookconfiguration --all", "control.audit-off", High);
        // Reading the trail, or a baseline level, is no finding.
        assert_absent("aws cloudtrail lookup-events --max-results 5", "control.audit-off");
        assert_absent(
            "kubectl label ns web pod-security.kubernetes.io/enforce=restricted",
            "control.audit-off",
        );
        assert_severity("Never run `aws cloudtrail stop-logging` to save costs.", "control.audit-off", Low);
    }

    #[test]
    fn a_server_weakened_in_its_own_config() {
        assert_hit("PermitRootLogin yes", "control.server-weakened", PrivilegeEscalation, High, 1);
        assert_severity("disable_functions =", "control.server-weakened", High);
        assert_severity("allow_url_include = On", "control.server-weakened", High);
        assert_absent("PermitRootLogin no\nPermitRootLogin prohibit-password", "control.server-weakened");
        assert_absent("disable_functions = exec,passthru,shell_exec", "control.server-weakened");
    }

    #[test]
    fn global_hooks_from_the_home_folder_replace_the_repository_hooks() {
        assert_severity("git config --global core.hooksPath ~/.org-hooks", "control.hooks-off", High);
        // A repository's own hooks folder is how husky and lefthook work.
        assert_absent("git config core.hooksPath .githooks", "control.hooks-off");
    }

    #[test]
    fn grades_tls_verification_off_by_how_long_it_lasts() {
        assert_hit(
            "r = requests.get(url, verify=False)",
            "control.tls-verify-off",
            PrivilegeEscalation,
            Medium,
            1,
        );
        assert_hit(
            "git config --global http.sslVerify false",
            "control.tls-verify-off",
            PrivilegeEscalation,
            High,
            1,
        );
        assert_severity("export NODE_TLS_REJECT_UNAUTHORIZED=0", "control.tls-verify-off", High);
        assert_severity("npm config set strict-ssl false", "control.tls-verify-off", High);
        assert_severity(
            "ssl._create_default_https_context = ssl._create_unverified_context",
            "control.tls-verify-off",
            High,
        );
        assert_severity(
            "requests.get('https://localhost:8443', verify=False)",
            "control.tls-verify-off",
            Low,
        );
        assert_severity("Never set `verify=False` in production code.", "control.tls-verify-off", Low);
        assert_absent("verify=True is the default; keep it.", "control.tls-verify-off");
        // curl and wget told never to check, in their start-up files.
        assert_severity("echo insecure >> ~/.curlrc", "control.tls-verify-off", High);
        assert_severity("echo 'check_certificate = off' >> ~/.wgetrc", "control.tls-verify-off", High);
        assert_absent("echo 'silent' >> ~/.curlrc", "control.tls-verify-off");
        // pip told to trust a host's certificate, whatever it is.
        assert_severity("pip install --trusted-host pypi.org requests", "control.tls-verify-off", Medium);
        assert_severity("export PIP_TRUSTED_HOST=pypi.org", "control.tls-verify-off", High);
        assert_severity(
            "pip install --trusted-host localhost -i http://localhost:3141/ x",
            "control.tls-verify-off",
            Low,
        );
        assert_absent("pip config list | grep trusted", "control.tls-verify-off");
        assert_absent("Run `npm run verify` before pushing.", "control.tls-verify-off");
    }

    #[test]
    fn cloud_and_cluster_guards_removed() {
        assert_severity("kubectl delete networkpolicy --all -n prod", "control.audit-off", High);
        assert_severity("gcloud logging sinks delete audit-sink", "control.audit-off", High);
        assert_severity(
            "aws s3api delete-public-access-block --bucket prod-assets",
            "control.audit-off",
            High,
        );
        assert_severity(
            "aws s3api put-public-access-block --bucket b --public-access-block-configuration BlockPublicAcls=false,BlockPublicPolicy=false",
            "control.audit-off",
            High,
        );
        assert_absent("kubectl delete networkpolicy allow-old-api -n staging", "control.audit-off");
        assert_absent("gcloud logging sinks list", "control.audit-off");
        assert_absent(
            "aws s3api put-public-access-block --bucket b --public-access-block-configuration BlockPublicAcls=true,BlockPublicPolicy=true",
            "control.audit-off",
        );
    }

    #[test]
    fn windows_protections_switched_off_by_policy() {
        // Defender off by its policy key; every script allowed machine-wide.
        assert_severity(
            r#"Set-ItemProperty -Path "HKLM:\SOFTWARE\Policies\Microsoft\Windows Defender" -Name DisableAntiSpyware -Value 1"#,
            "control.windows-protection-off",
            High,
        );
        assert_severity(
            r#"reg add "HKLM\SOFTWARE\Policies\Microsoft\Windows Defender" /v DisableAntiSpyware /t REG_DWORD /d 1 /f"#,
            "control.windows-protection-off",
            High,
        );
        assert_severity(
            "Set-ExecutionPolicy Unrestricted -Scope LocalMachine -Force",
            "control.windows-protection-off",
            Medium,
        );
        assert_absent(
            "Set-ExecutionPolicy RemoteSigned -Scope CurrentUser",
            "control.windows-protection-off",
        );
        assert_absent("Set-ExecutionPolicy Bypass -Scope Process", "control.windows-protection-off");
        assert_absent(
            r#"Set-ItemProperty -Path "HKLM:\SOFTWARE\Policies\Microsoft\Windows Defender" -Name DisableAntiSpyware -Value 0"#,
            "control.windows-protection-off",
        );
    }

    #[test]
    fn flags_hooks_switched_off() {
        assert_hit("git commit -am wip --no-verify", "control.hooks-off", PrivilegeEscalation, High, 1);
        assert_hit("git config core.hooksPath /dev/null", "control.hooks-off", PrivilegeEscalation, High, 1);
        assert_hit("rm -rf .git/hooks", "control.hooks-off", PrivilegeEscalation, High, 1);
        assert_severity("HUSKY=0 git push", "control.hooks-off", High);
        assert_severity("Never commit with `--no-verify`.", "control.hooks-off", Low);
        assert_absent("cargo publish --no-verify", "control.hooks-off");
        assert_severity(
            "`--no-verify` skips the pre-commit and commit-msg hooks.",
            "control.hooks-off",
            Medium,
        );
        assert_absent("git config core.hooksPath .githooks", "control.hooks-off");
    }

    #[test]
    fn flags_a_security_agent_stopped_by_any_manager() {
        let id = "control.security-agent-stopped";
        assert_hit(
            "sudo launchctl unload -w /Library/LaunchDaemons/com.crowdstrike.falcond.plist",
            id,
            PrivilegeEscalation,
            High,
            1,
        );
        assert_severity("sudo pkill -9 osqueryd", id, High);
        assert_severity("sc.exe config WinDefend start= disabled", id, High);
        assert_severity("sudo apt-get purge -y wazuh-agent", id, High);
        assert_severity("sudo systemctl mask --now sentinelone", id, High);
        // Restarted or inspected, and other services stopped: not a removal.
        assert_absent("sudo systemctl restart osqueryd && sudo systemctl status auditd", id);
        assert_absent("sudo systemctl stop nginx", id);
        assert_absent("launchctl unload ~/Library/LaunchAgents/com.example.sync.plist", id);
        assert_severity("Never `sudo pkill falcond` to speed a build up.", id, Low);
    }

    #[test]
    fn flags_security_tools_removed() {
        assert_hit(
            "npm uninstall eslint-plugin-security",
            "control.security-tool-removed",
            PrivilegeEscalation,
            High,
            1,
        );
        assert_hit(
            "sed -i '/bandit/d' requirements-dev.txt",
            "control.security-tool-removed",
            PrivilegeEscalation,
            High,
            1,
        );
        assert_severity("git rm .github/workflows/codeql.yml", "control.security-tool-removed", High);
        assert_severity(
            "gh api -X DELETE repos/o/r/branches/main/protection",
            "control.security-tool-removed",
            High,
        );
        assert_absent("pip install bandit && bandit -r src", "control.security-tool-removed");
        assert_absent("npm uninstall left-pad", "control.security-tool-removed");
        assert_severity("Don't `pip uninstall bandit` to silence it.", "control.security-tool-removed", Low);
    }
}

#[cfg(test)]
#[path = "controls_edge_tests.rs"]
mod edge_tests;
