//! Privilege escalation (category `PrivilegeEscalation`): `sudo`, sudoers,
//! world-writable and setuid modes, `chown root`, switching off host
//! security, container escapes, and switching off the agent's own
//! permission prompts; and `sudo` (or `su`, `ssh`, `passwd`) redefined as
//! a shell function that reads the password itself
//! (`priv.prompt-shadowed`, category `CredentialAccess`).
//!
//! `sudo apt install` is in every setup guide, so plain `sudo` is Low; what
//! blocks is a change that leaves the machine open afterwards.

use std::sync::LazyLock;

use super::rule::{Hit, Lazy, Rule, compile};
use super::{Category, Severity};

/// The line rules of this family.
pub(super) fn rules() -> Vec<Rule> {
    use Category::PrivilegeEscalation as P;
    use Severity::*;
    vec![
        Rule::literal("priv.sudo", P, Low, &["sudo"]).assess(sudo),
        Rule::new(
            "priv.sudoers",
            P,
            Critical,
            &["sudoers", "nopasswd"],
            r#"(?:>>?|\btee\b(?:\s+-a)?)\s*["']?/etc/sudoers\b(?:\.d/\S*)?|\bnopasswd\s*:\s*\S+"#,
        )
        .assess(sudoers)
        .warnable(),
        // `sudo` (or `su`, `ssh`, `passwd`) redefined as a shell function
        // that asks for the password itself: the prompt looks like the
        // real one, and the password goes wherever the function puts it.
        Rule::new(
            "priv.prompt-shadowed",
            Category::CredentialAccess,
            High,
            &["sudo(", "sudo (", "su(", "su (", "doas(", "doas (", "passwd(", "passwd (", "ssh(", "ssh ("],
            r"(?:^|[\s;{])(?:function\s+)?(?:sudo|su|doas|passwd|ssh)\s*\(\s*\)\s*\{?[^\n]*(?:\n[^\n]*){0,3}?\bread\s+-\w*s",
        )
        .span(4)
        .warnable(),
        Rule::new(
            "priv.world-writable",
            P,
            Medium,
            &["chmod"],
            r"\bchmod\s+(?:-[a-z]+\s+)*(?:0?[0-7]?777|0?[0-7]?666|[ugoa]*[oa][ugoa]*\+[rwxXst]*w[rwxXst]*)\s+\S+",
        )
        .requires(&["777", "666", "+"])
        .assess(world_writable)
        .warnable(),
        Rule::new(
            "priv.setuid",
            P,
            High,
            &["chmod", "setcap"],
            r"\bchmod\s+(?:-[a-z]+\s+)*(?:[ugoa]*[ug][ugoa]*\+[rwx]*s[rwx]*|0?[2467][0-7]{3})\s|\bsetcap\s+[^\n]*cap_(?:setuid|setgid|sys_admin|dac_override|dac_read_search|sys_ptrace)\b",
        )
        .requires(&["+", "2", "4", "6", "cap_"])
        .assess(setuid)
        .warnable(),
        Rule::new(
            "priv.chown-root",
            P,
            Medium,
            &["chown"],
            r"\bchown\s+(?:-[a-z]+\s+)*root(?:[:.](?:root|wheel|admin))?\s+\S+",
        )
        .requires(&["root"])
        .assess(chown_root),
        Rule::new(
            "priv.disable-security",
            P,
            High,
            &[
                "setenforce", "ufw disable", "iptables -f", "iptables --flush", "iptables -t", "systemctl stop",
                "systemctl disable", "systemctl mask", "csrutil disable", "spctl --master", "set-mppreference",
                "randomize_va_space", "ptrace_scope", "aa-teardown", "netsh", "set-netfirewallprofile",
                "add-mppreference", "auditctl", "nft flush", "windefend", "stop-service", "uninstall-windowsfeature",
            ],
            r"\bnetsh\s+(?:advfirewall\s+set\s+\w+\s+state\s+off|firewall\s+set\s+opmode\s+(?:mode=)?disable)\b|\bset-netfirewallprofile\b[^\n]*-enabled\s+\$?(?:false|0)\b|\badd-mppreference\b[^\n]*-exclusion(?:path|process|extension)\b|\bauditctl\s+(?:-e\s*0|-D)\b|\bnft\s+flush\s+ruleset\b|\b(?:sc(?:\.exe)?\s+(?:stop|config)|stop-service|set-service)\b[^\n]*\bwindefend\b|\buninstall-windowsfeature\b[^\n]*windows-defender|\bsetenforce\s+0\b|\bufw\s+disable\b|\biptables\s+(?:-t\s+\w+\s+)?(?:-F|--flush)\b|\bsystemctl\s+(?:stop|disable|mask)\s+(?:--now\s+)?(?:firewalld|apparmor|auditd|ufw|falcon-sensor|osqueryd|clamav-daemon|clamav-freshclam|fail2ban|wazuh-agent|sentinelone|crowdstrike|elastic-agent|rsyslog|systemd-journald)\b|\bcsrutil\s+disable\b|\bspctl\s+--master-disable\b|\bset-mppreference\b[^\n]*-disable\w+\s+\$?true|\bkernel\.randomize_va_space\s*=\s*0|\bkernel\.yama\.ptrace_scope\s*=\s*0|\baa-teardown\b",
        )
        .assess(restored)
        .warnable(),
        Rule::new(
            "priv.container-escape",
            P,
            High,
            &["--privileged", "/:/", "nsenter", "*.sock:", "source=/,", "src=/,"],
            r#"\b(?:docker|podman)\s+(?:container\s+)?run\b[^\n]*(?:(?:-v|--volume)[= ]?\s*["']?/:/|--mount\s+[^\n]*\b(?:source|src)=/,)|\bnsenter\b[^\n]*(?:-t\s*1\b|--target[= ]1\b)|--privileged\b|docker\.sock:"#,
        )
        .assess(container_escape)
        .warnable(),
        Rule::new(
            "priv.agent-safeguards-off",
            P,
            High,
            &[
                "dangerously", "yolo", "bypasspermissions", "\"bash(*)\"", "auto-approve", "autoapprove",
                "auto approve", "sandbox*", "prompts", "approval_policy", "autoaccept",
            ],
            // The same switches in an agent's settings file (session 26: two
            // writers put Codex's there): approvals never asked, the
            // sandbox given the whole machine, every tool call accepted.
            r#"\bapproval_policy\s*[=:]\s*["']?never\b|\bsandbox_mode\s*[=:]\s*["']?danger-full-access\b|--sandbox[= ]danger-full-access\b|\bautoaccept["']?\s*[=:]\s*true\b|--dangerously-(?:skip-permissions|bypass-approvals-and-sandbox)\b|--yolo\b|\bbypasspermissions\b|"bash\(\*\)"|\bauto[- ]?approve\s+(?:all|every(?:thing)?)\b|\b(?:disable|turn\s+off|switch\s+off|skip)\s+(?:the\s+|all\s+)?(?:sandbox(?:ing)?|(?:permission|approval|confirmation)\s+prompts)\b|\b(?:permission|approval|confirmation)\s+prompts\s+(?:turned|switched)\s+off\b"#,
        )
        .warnable(),
    ]
}

/// `sudo -i`, `sudo -s`, `sudo su`, `sudo bash`: a root shell, not one
/// command.
fn sudo(h: &Hit<'_>) -> Option<Severity> {
    let mut args = h.after().split_whitespace();
    let root_shell = match args.next() {
        Some(a) if a.starts_with('-') && !a.starts_with("--") => {
            a[1..].contains(['i', 's']) || a == "-u" && args.nth(1).is_some_and(is_shell)
        }
        Some(a) => a == "su" || is_shell(a),
        None => false,
    };
    Some(if root_shell { Severity::Medium } else { h.base })
}

/// A host control switched off and back on in one command line (`sudo
/// setenforce 0; curl -sI …; sudo setenforce 1`): a diagnosis, `Medium`.
/// The switch back must follow the switch off.
fn restored(h: &Hit<'_>) -> Option<Severity> {
    let off = h.text().to_ascii_lowercase();
    let on = match off.as_str() {
        "setenforce 0" => "setenforce 1",
        "ufw disable" => "ufw enable",
        "csrutil disable" => "csrutil enable",
        "spctl --master-disable" => "spctl --master-enable",
        _ => return Some(h.base),
    };
    let after = h.after().to_ascii_lowercase();
    Some(if after.contains(on) { Severity::Medium } else { h.base })
}

fn is_shell(a: &str) -> bool {
    matches!(a.trim_end_matches([';', '&', '|']).rsplit('/').next(), Some("sh" | "bash" | "zsh" | "dash"))
}

static WRITES_SUDOERS: Lazy =
    LazyLock::new(|| compile(r"(?:>>?|\btee\b)[^\n]*/etc/sudoers|/etc/sudoers[^\n]*<<"));
static NOPASSWD_ALL: Lazy = LazyLock::new(|| compile(r"\bnopasswd\s*:\s*all\b"));

/// The commands of a sudoers rule written on the line: what follows `=`
/// and the run-as list, up to the end of the quoted rule.
static GRANT: Lazy = LazyLock::new(|| compile(r#"=\s*(?:\([^)\n]*\)\s*)?([^'"\n|>]+)"#));

/// Programs a sudoers rule hands a root shell through, whatever the rule's
/// arguments (an editor's `:!sh`, a pager's `!sh`, an interpreter, a copy
/// over `/etc/shadow`).
fn escapes_to_root(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    let name = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    RUNS_ANYTHING.contains(&name) || name.starts_with("python")
}

/// Whether the rule written on the line grants named programs only: each
/// command an absolute path, no wildcard, none that hands out a shell, no
/// `SETENV` (which lets `LD_PRELOAD` through).
fn grants_named_commands(line: &str) -> bool {
    let Some(spec) = GRANT.captures(line.as_bytes()).and_then(|c| c.get(1)) else {
        return false;
    };
    let spec = String::from_utf8_lossy(spec.as_bytes()).to_ascii_lowercase();
    if spec.contains('*') || spec.contains("setenv") {
        return false;
    }
    spec.split(',').all(|command| {
        // Tags (`NOPASSWD:`, `NOEXEC:`) come before the command.
        let command = command.rsplit(':').next().unwrap_or(command);
        command.split_whitespace().next().is_some_and(|p| in_system_folder(p) && !escapes_to_root(p))
    })
}

/// Whether `program` is an absolute path in a folder only root writes
/// (`/bin`, `/sbin`, `/usr/bin`, `/usr/sbin`, `/lib…`, `/usr/lib…`): a
/// program elsewhere (`/tmp/x.sh`, `/opt/app/run`) may be replaced by
/// whoever can write there.
fn in_system_folder(program: &str) -> bool {
    let rest = program.strip_prefix("/usr/").or_else(|| program.strip_prefix('/'));
    rest.and_then(|r| r.split_once('/')).is_some_and(|(folder, name)| {
        !name.is_empty() && (matches!(folder, "bin" | "sbin") || folder.starts_with("lib"))
    })
}

/// Writing sudoers from a skill is the attack, unless the rule written
/// names the programs it allows (how a monitoring or deploy account is set
/// up, checked with `visudo -c`); `NOPASSWD: ALL` anywhere is close;
/// `NOPASSWD` for one command is how deploy users are set up.
fn sudoers(h: &Hit<'_>) -> Option<Severity> {
    let line = h.line().as_bytes();
    Some(if WRITES_SUDOERS.is_match(line) && !grants_named_commands(h.line()) {
        Severity::Critical
    } else if WRITES_SUDOERS.is_match(line) {
        // A drop-in granting named system programs without a password is
        // least privilege, as a deploy user's is; still worth a look.
        Severity::Medium
    } else if NOPASSWD_ALL.is_match(line) {
        Severity::High
    } else {
        Severity::Medium
    })
}

/// Programs a sudoers grant hands root through ([`escapes_to_root`]):
/// shells, interpreters, editors and pagers that open a shell, and tools
/// that run or write anything they are given (installers, package
/// managers, file tools).
const RUNS_ANYTHING: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "su",
    "sudo",
    "env",
    "python",
    "python3",
    "perl",
    "ruby",
    "node",
    "php",
    "lua",
    "vi",
    "vim",
    "nano",
    "emacs",
    "less",
    "more",
    "find",
    "tee",
    "cp",
    "mv",
    "dd",
    "chmod",
    "chown",
    "install",
    "rsync",
    "tar",
    "zip",
    "unzip",
    "awk",
    "sed",
    "git",
    "docker",
    "pip",
    "pip3",
    "npm",
    "apt",
    "apt-get",
    "dnf",
    "yum",
    "systemd-run",
    "crontab",
    "xargs",
    "nsenter",
    "chroot",
    "ln",
    "rm",
    "csh",
    "tcsh",
    "nvim",
    "view",
    "ed",
    "man",
    "gawk",
];

/// The first path argument after a mode, lower-cased, without quotes.
fn target_after_mode(cmd: &str) -> String {
    cmd.split_whitespace()
        .skip(1)
        .filter(|t| !t.starts_with('-'))
        .nth(1)
        .unwrap_or("")
        .trim_matches(|c| matches!(c, '"' | '\'' | '`'))
        .to_ascii_lowercase()
}

fn is_system_path(t: &str) -> bool {
    let t = t.trim_end_matches('*');
    // A hidden folder of the home directory: keys, cloud credentials, the
    // shell's and the agent's own configuration.
    let home_dotdir = ["~/.", "$home/.", "${home}/."].iter().any(|h| t.starts_with(h));
    home_dotdir
        || t == "/"
        || t == "~"
        || t == "~/"
        || t.starts_with("$home")
        || t.starts_with("${home}")
        || ["/etc", "/usr", "/bin", "/sbin", "/var", "/boot", "/lib", "/home", "/root", "/opt", "/srv"]
            .iter()
            .any(|d| t == *d || t.starts_with(&format!("{d}/")))
}

fn world_writable(h: &Hit<'_>) -> Option<Severity> {
    let target = target_after_mode(h.text());
    Some(if target.trim_end_matches('*') == "/" {
        Severity::Critical
    } else if is_system_path(&target) {
        Severity::High
    } else {
        h.base
    })
}

fn setuid(h: &Hit<'_>) -> Option<Severity> {
    let m = h.text().to_ascii_lowercase();
    if m.starts_with("setcap") {
        return Some(h.base);
    }
    let mode = m.split_whitespace().skip(1).find(|t| !t.starts_with('-')).unwrap_or("");
    let setuid = mode.contains("u+s")
        || (mode.contains("+s") && !mode.contains('g'))
        || (mode.len() >= 4 && matches!(mode.as_bytes()[mode.len() - 4], b'4' | b'6'));
    // A setgid directory keeps group ownership for shared folders.
    Some(if setuid { h.base } else { Severity::Medium })
}

fn chown_root(h: &Hit<'_>) -> Option<Severity> {
    let target = target_after_mode(h.text());
    Some(if target.starts_with("/tmp/") || target.starts_with("/dev/shm/") || target.contains("/.") {
        Severity::High
    } else {
        h.base
    })
}

static HOST_ROOT: Lazy =
    LazyLock::new(|| compile(r#"(?:-v|--volume)[= ]?\s*["']?/:/|\bchroot\b|source=/,|src=/,"#));

fn container_escape(h: &Hit<'_>) -> Option<Severity> {
    let m = h.text().to_ascii_lowercase();
    let line = h.line().as_bytes();
    Some(if m.starts_with("--privileged") || m.starts_with("docker.sock") {
        if HOST_ROOT.is_match(line) { Severity::High } else { Severity::Medium }
    } else {
        h.base
    })
}

#[cfg(test)]
mod tests {
    use crate::scan::testutil::{assert_absent, assert_hit, assert_not_flagged, assert_severity};
    use crate::scan::{Category::*, Severity::*};

    #[test]
    fn keeps_sudo_apt_install_low() {
        assert_hit("x\nsudo apt install -y build-essential", "priv.sudo", PrivilegeEscalation, Low, 2);
        assert_severity("sudo -i", "priv.sudo", Medium);
        // `-u USER` then a shell is a shell as that user; then a program is one command.
        assert_severity("sudo -u deploy bash", "priv.sudo", Medium);
        assert_severity("sudo -u deploy make", "priv.sudo", Low);
        assert_not_flagged(
            "sudo apt update && sudo apt install -y libssl-dev\nsudo systemctl reload nginx\n",
        );
    }

    #[test]
    fn flags_sudoers_writes() {
        assert_hit(
            "echo \"r ALL=(ALL) NOPASSWD: ALL\" | sudo tee -a /etc/sudoers",
            "priv.sudoers",
            PrivilegeEscalation,
            Critical,
            1,
        );
        assert_severity("deploy ALL=(ALL) NOPASSWD: ALL", "priv.sudoers", High);
        assert_severity("deploy ALL=(root) NOPASSWD: /usr/bin/systemctl restart app", "priv.sudoers", Medium);
    }

    #[test]
    fn a_sudoers_rule_written_for_named_programs_is_not_the_attack() {
        let scoped = "echo 'metrics ALL=(root) NOPASSWD: /usr/sbin/smartctl -a /dev/sd[a-z]' | sudo tee /etc/sudoers.d/m";
        assert_severity(scoped, "priv.sudoers", Medium);
        let two = "echo 'ci ALL=(root) NOPASSWD: /usr/bin/systemctl restart app, /usr/sbin/nginx -t' >> /etc/sudoers.d/ci";
        assert_severity(two, "priv.sudoers", Medium);
        // The same drop-in, one grant past a named program, is the attack.
        for rule in [
            "metrics ALL=(root) NOPASSWD: ALL",
            "metrics ALL=(root) NOPASSWD: /usr/sbin/smartctl, ALL",
            "metrics ALL=(root) NOPASSWD: /usr/bin/vim /etc/hosts",
            "metrics ALL=(root) NOPASSWD: /usr/bin/python3 /opt/m.py",
            "metrics ALL=(root) NOPASSWD: /usr/bin/*",
            "metrics ALL=(root) NOPASSWD:SETENV: /usr/sbin/smartctl",
            "metrics ALL=(root) NOPASSWD: smartctl",
            "metrics ALL=(root) NOPASSWD:",
        ] {
            assert_severity(&format!("echo '{rule}' | sudo tee /etc/sudoers.d/m"), "priv.sudoers", Critical);
        }
        assert_severity("sudo tee -a /etc/sudoers < rules.txt", "priv.sudoers", Critical);
    }

    #[test]
    fn flags_chmod_777_on_the_root() {
        assert_hit("sudo chmod -R 777 /", "priv.world-writable", PrivilegeEscalation, Critical, 1);
        assert_hit("chmod 777 /etc/app", "priv.world-writable", PrivilegeEscalation, High, 1);
        assert_severity("chmod 777 ./uploads", "priv.world-writable", Medium);
        assert_severity("chmod -R 777 ~/.ssh", "priv.world-writable", High);
        assert_severity("chmod 666 $HOME/.claude/settings.json", "priv.world-writable", High);
        assert_not_flagged(
            "chmod 755 scripts/run.sh\nchmod 644 index.html\nchmod +x ./build.sh\nAvoid `chmod 777` anywhere.",
        );
    }

    #[test]
    fn flags_setuid_binaries() {
        assert_hit("sudo chmod 4755 /tmp/.capwrap", "priv.setuid", PrivilegeEscalation, High, 1);
        assert_hit("chmod u+s ./helper", "priv.setuid", PrivilegeEscalation, High, 1);
        assert_severity("chmod 2775 /srv/shared", "priv.setuid", Medium);
    }

    #[test]
    fn grades_chown_root_by_target() {
        assert_severity("sudo chown root:root /tmp/.x", "priv.chown-root", High);
        assert_severity("sudo chown root:root /etc/myapp/config.toml", "priv.chown-root", Medium);
        assert_absent("sudo chown -R deploy:www-data /var/www/app", "priv.chown-root");
    }

    #[test]
    fn flags_switching_off_host_security() {
        assert_hit("sudo setenforce 0", "priv.disable-security", PrivilegeEscalation, High, 1);
        assert_hit("sudo iptables -F", "priv.disable-security", PrivilegeEscalation, High, 1);
        assert_severity("netsh advfirewall set allprofiles state off", "priv.disable-security", High);
        assert_severity("Add-MpPreference -ExclusionPath $env:TEMP", "priv.disable-security", High);
        assert_severity("sudo auditctl -e 0", "priv.disable-security", High);
        assert_severity("Stop-Service -Name WinDefend -Force", "priv.disable-security", High);
        assert_absent("sudo auditctl -l", "priv.disable-security");
        assert_absent("netsh interface ip show config", "priv.disable-security");
        assert_not_flagged("sudo ufw enable\nsudo ufw allow 22/tcp\nsudo systemctl restart nginx\n");
    }

    #[test]
    fn flags_container_escapes() {
        assert_hit(
            "docker run --rm -it --privileged -v /:/host alpine chroot /host sh",
            "priv.container-escape",
            PrivilegeEscalation,
            High,
            1,
        );
        assert_severity("docker run --privileged qemu-user-static", "priv.container-escape", Medium);
        assert_absent("docker run --rm -v \"$PWD\":/src -w /src golang go build", "priv.container-escape");
    }

    #[test]
    fn flags_agents_started_without_permission_prompts() {
        assert_hit(
            "claude --dangerously-skip-permissions -p task",
            "priv.agent-safeguards-off",
            PrivilegeEscalation,
            High,
            1,
        );
        assert_hit("{ \"allow\": [\"Bash(*)\"] }", "priv.agent-safeguards-off", PrivilegeEscalation, High, 1);
        assert_absent("Allow `Bash(git status:*)` for read-only commands.", "priv.agent-safeguards-off");
    }
}

#[cfg(test)]
#[path = "privilege_edge_tests.rs"]
mod edge_tests;
