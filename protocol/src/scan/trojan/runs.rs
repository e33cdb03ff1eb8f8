//! The run forms of the `trojan` family: which words of a line run or
//! source a file of the skill's own folder (`bash scripts/x.sh`, `.
//! ./scripts/init`, `python3 {baseDir}/run.py`), and the regexes and
//! their cheap gates for the other ways its code is run — loaded into
//! every process, run as code, built or installed — with the tables they
//! read (script extensions, runners, prefixes).

use std::sync::LazyLock;

use crate::scan::prefixed::PrefixWords;
use crate::scan::rule::{Lazy, compile, contains_ci};
use crate::scan::supply::has_url;

const SCRIPT_EXTENSIONS: &[&str] = &[
    ".sh",
    ".bash",
    ".zsh",
    ".py",
    ".ps1",
    ".psm1",
    ".js",
    ".mjs",
    ".cjs",
    ".ts",
    ".rb",
    ".pl",
    ".php",
    ".lua",
    ".bat",
    ".cmd",
    ".vbs",
    ".pyc",
    ".exe",
    ".bin",
    ".jar",
    ".r",
    ".scpt",
    ".applescript",
];

/// Companions no reader can review, even with the bundle open.
pub(super) const COMPILED_EXTENSIONS: &[&str] = &[".pyc", ".exe", ".bin"];

/// Programs that run a script file given as their argument.
const RUNNERS: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "source",
    ".",
    "python",
    "python3",
    "python2",
    "py",
    "node",
    "deno",
    "bun",
    "pwsh",
    "powershell",
    "powershell.exe",
    // `cmd /c tools\x.bat`: Windows' shell, its switches after a slash.
    "cmd",
    "cmd.exe",
    "ruby",
    "perl",
    "php",
    "lua",
    "tsx",
    "ts-node",
    "call",
    // PowerShell's `Start-Process -FilePath "$PSScriptRoot\bin\x.exe"`.
    "start-process",
    "saps",
    "cscript",
    "wscript",
    "exec",
    "java",
    "rscript",
    "osascript",
    // `go run ./cmd/prepare`, `uv run x.py`: the runner's own verb is
    // skipped below.
    "go",
    "uv",
    "poetry",
    "pipenv",
    "pdm",
    "hatch",
    // `npx ./tools/cli`: the package at that path, its `bin` run.
    "npx",
];

/// Words that may stand before a command without being it.
const PREFIXES: &[&str] = &[
    "sudo",
    "doas",
    "nohup",
    "env",
    "time",
    "exec",
    "$",
    ">",
    "-",
    "*",
    "+",
    "&",
    "run",
    // A build or infrastructure tool's own way of running a program:
    // CMake's `execute_process(COMMAND sh …)`, Terraform's `program =
    // ["bash", …]`, a container's `ENTRYPOINT`.
    "execute_process",
    "add_custom_command",
    "command",
    "program",
    "entrypoint",
    "cmd",
];

/// Project files a skill runs in the user's project, not from its folder.
const PROJECT_FILES: &[&str] =
    &["manage.py", "setup.py", "conftest.py", "noxfile.py", "configure", "gradlew", "mvnw"];

/// Companion code loaded into processes the agent starts later, or run on
/// every commit: a preload or startup variable, or a git setting that
/// names a program git runs on its own (`core.hooksPath`, `core.fsmonitor`
/// on every `git status`, `core.sshCommand` on every fetch, an askpass, a
/// credential helper), pointed into the skill's folder or a relative
/// path; or a build fragment of the skill's folder included into the
/// project's own build (`include $(SKILL_DIR)/x.mk`, CMake's
/// `include(${SKILL_DIR}/x.cmake)`), whose rules every build runs. Group
/// 1, 2 or 3 is the path.
pub(super) static LOADED_EVERYWHERE: Lazy = LazyLock::new(|| {
    compile(
        r#"\b(?:ld_preload|dyld_insert_libraries|pythonstartup|bash_env|perl5opt|rubyopt|node_options|java_tool_options)\s*=\s*["']?(?:--require[\s=]+|-r\s*|-javaagent:|-m)?["']?((?:\$\{?\w*skill\w*\}?|\{basedir\}|\.{1,2})/[\w./-]+|[\w-]+/[\w./-]+\.(?:so|dylib|js|cjs|mjs|py|pl|rb|jar|sh))|\b(?:core\.(?:hookspath|fsmonitor|sshcommand|askpass|pager|editor)|credential\.helper|gpg\.program|diff\.external)\s+["']?!?((?:\$\{?\w*skill\w*\}?|\{basedir\})/[\w./-]*)|(?:^|[\s`])-?s?include\s*\(?\s*["']?((?:\$[({]\w*skill\w*[)}]|\{basedir\})/[\w./-]*\w)"#,
    )
});

/// The forms of [`FED_TO_SHELL`]: an interpreter, and a path in the
/// skill's folder (a folder and a file, or `./file`).
const INTERPRETER: &str = r"(?:(?:ba|z|da|k)?sh|python[0-9.]*|node|ruby|perl|pwsh|powershell)";
const LOCAL_PATH: &str = r"((?:\$\{?\w+\}?/|\{basedir\}/|\./)?[\w.-]+/[\w./-]*\w|\./[\w.-]*\w)";

/// A file of the skill's folder fed to an interpreter as its program,
/// whatever its name: on standard input (`sh < tools/steps.txt`, `cat
/// x | bash`), as the text of `-c` or `eval` (`bash -c "$(cat
/// scripts/prepare)"`), or one command a line (`xargs -a tools/list
/// -I{} sh -c '{}'`). Its content runs as code, unseen. Group 1 to 4 is
/// the path.
pub(super) static FED_TO_SHELL: Lazy = LazyLock::new(|| {
    compile(
        &[
            r#"\b{sh}\s+(?:-\S*\s+)*<\s*["']?{path}"#,
            r#"\b(?:cat|type|get-content|gc)\s+["']?{path}["']?\s*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:{sh}|iex|invoke-expression)\b"#,
            r#"(?:\b{sh}\s+(?:-\S+\s+)*?-c|\beval)\s+["']?(?:\$\(|`)\s*(?:cat\s+|<\s*)["']?{path}"#,
            r#"\bxargs\s+(?:-\S+\s+)*?(?:-a|--arg-file)[\s=]+["']?{path}[^\n|;&]*\b(?:{sh}\s+-c|eval)\b"#,
        ]
        .join("|")
        .replace("{sh}", INTERPRETER)
        .replace("{path}", LOCAL_PATH),
    )
});

/// A file of the skill's folder loaded into a program in front of its
/// own code: Node's `--require` / `--import` / `--loader` (`node -r
/// ./x/register.cjs src/server.js`), a Java agent, Ruby's `-r`. It sees
/// and can change everything the program does, as a preload variable's
/// file does. Group 1 to 3 is the path.
pub(super) static PRELOADED: Lazy = LazyLock::new(|| {
    compile(
        r#"\b(?:node|deno|bun|tsx|ts-node)\b[^\n|;&]*?\s(?:--require|-r|--import|--loader|--experimental-loader)[\s=]+["']?((?:\$\{?\w+\}?/|\{basedir\}/|\./)[\w./-]*\w)|\bjava\b[^\n|;&]*?\s-javaagent:["']?((?:\$\{?\w+\}?/|\{basedir\}/|\./)?[\w./-]+\.jar)|\bruby\b[^\n|;&]*?\s-r\s*["']?(\./[\w./-]*\w)"#,
    )
});

/// A file of the skill run as code or loaded into the session (`iex
/// (Get-Content x -Raw)`, `source <(cat x)`, `Import-Module .\x`), or
/// put in front of a command every later step runs (`alias git=…`).
pub(super) static RUN_AS_CODE: Lazy = LazyLock::new(|| {
    compile(
        r#"(?:\bsource|(?:^|[\s`;&(])\.)\s+<\(\s*cat\s+["']?((?:\$\{?\w+\}?|\{basedir\}|\.)/[^\s"'`)]*[\w/\\])|\bimport-module\s+["']?((?:\$psscriptroot|\$\{?\w*skill\w*\}?|\{basedir\}|\.)[\\/][^\s"'`)]*[\w/\\])|\balias\s+(?:git|sudo|ssh|npm|pip|python3?|node|docker|kubectl|cd|ls|curl)=["']?((?:\$\{?\w*skill\w*\}?|\{basedir\}|\.)/[^\s"'`)]*[\w/\\])|\b(?:iex|invoke-expression)\b\s*\(?\s*(?:get-content|gc|cat|type)\s+(?:-path\s+)?["']?((?:\$\w+|\{basedir\}|\.)[\\/][^\s"'`)]*[\w/\\])"#,
    )
});

/// A build file of the skill's folder run by its tool (`make -f
/// tools/Makefile`, `just --justfile …`, `task --taskfile …`), or a local
/// package installed (`pip install ./vendor/x`, `npm install
/// ./vendor/x.tgz`, `pip install -e ./labkit`): code that runs, unseen,
/// as a script does (a package's build and install hooks run on install).
pub(super) static BUILT_OR_INSTALLED: Lazy = LazyLock::new(|| {
    compile(
        r#"\b(?:g?make\s+(?:-\S+\s+)*-f|just\s+(?:-\S+\s+)*--justfile|task\s+(?:-\S+\s+)*(?:--taskfile|-t))\s+["']?((?:\$\{?\w+\}?|\{basedir\}|\.{1,2})?/?[\w.-]+/[\w./-]*[\w])|\b(?:pip3?|uv\s+pip|pipx|npm|pnpm|yarn|bun|gem)\s+(?:install|add|i)\s+(?:-\S+\s+)*["']?((?:\$\{?\w*skill\w*\}?|\{basedir\}|\.{1,2})/(?:vendor|vendored|lib|libs|pkg|packages|dist|tools|helpers|bundle|third_party)/[\w./-]*[\w]|(?:\$\{?\w*skill\w*\}?|\{basedir\}|\.)/[\w-][\w./-]*\w)"#,
    )
});

/// Every word one of the regex forms needs, searched in one pass: most
/// lines the analyzer wakes on (a fence naming `bash`, a URL) hold none,
/// and one search costs less than each form's own gate. It holds every
/// word of those gates (`import` for `--import`, `-loader` for
/// `--experimental-loader`): a word missing here hides its form.
static FORMS_GATE: Lazy = LazyLock::new(|| {
    compile(
        r"hookspath|fsmonitor|sshcommand|askpass|core\.pager|core\.editor|\.helper|\.program|\.external|include|preload|dyld_|startup|bash_env|5opt|rubyopt|_options|<|import|-loader|alias|iex|invoke-expression|make|just|task|pip|npm|yarn|bun|gem|cat |type |gc |get-content|xargs|javaagent|-r",
    )
});

/// Whether `line` may hold any of the regex forms: the gate before theirs.
pub(super) fn may_hold_a_form(line: &[u8]) -> bool {
    FORMS_GATE.is_match(line)
}

/// Whether `line` holds a word [`LOADED_EVERYWHERE`] needs: each of its
/// forms names a startup variable set with `=`, or `core.hooksPath`. These
/// gates run before the searches with captures, which were most of what
/// this analyzer cost on a typical body (every line with `run` or `bash`
/// wakes it).
pub(super) fn may_load_everywhere(line: &[u8]) -> bool {
    [
        &b"hookspath"[..],
        b"fsmonitor",
        b"sshcommand",
        b"askpass",
        b"core.pager",
        b"core.editor",
        b".helper",
        b".program",
        b".external",
        b"include",
    ]
    .iter()
    .any(|w| contains_ci(line, w))
        || (memchr::memchr(b'=', line).is_some()
            && [&b"preload"[..], b"dyld_", b"startup", b"bash_env", b"5opt", b"rubyopt", b"_options"]
                .iter()
                .any(|w| contains_ci(line, w)))
}

/// Whether `line` may feed a file to an interpreter ([`FED_TO_SHELL`]):
/// a `/` of a path, and a redirection, a `cat` (`Get-Content`) or an `xargs`.
pub(super) fn may_feed_shell(line: &[u8]) -> bool {
    memchr::memchr(b'/', line).is_some()
        && (memchr::memchr(b'<', line).is_some()
            || [&b"cat "[..], b"type ", b"gc ", b"get-content", b"xargs"]
                .iter()
                .any(|w| contains_ci(line, w)))
}

/// Whether `line` may preload a file into a program ([`PRELOADED`]): a
/// runner's name and one of its preload flags.
pub(super) fn may_preload(line: &[u8]) -> bool {
    // The runner first: `-r` is in every `rm -rf`.
    [&b"node"[..], b"deno", b"bun", b"tsx", b"java", b"ruby"].iter().any(|w| contains_ci(line, w))
        && [&b"-r"[..], b"--import", b"-loader", b"javaagent"].iter().any(|w| contains_ci(line, w))
}

/// Whether `line` holds a word [`RUN_AS_CODE`] needs: `<(`, `import-module`,
/// `alias`, or `iex` / `invoke-expression`.
pub(super) fn may_run_as_code(line: &[u8]) -> bool {
    line.windows(2).any(|w| w == b"<(")
        || [&b"import-module"[..], b"alias", b"iex", b"invoke-expression"]
            .iter()
            .any(|w| contains_ci(line, w))
}

/// Whether `line` holds a word [`BUILT_OR_INSTALLED`] needs: a build tool
/// (`make`, `just`, `task`), or a `/` and a package manager (`pnpm` holds
/// `npm`, `pipx` and `uv pip` hold `pip`).
pub(super) fn may_build_or_install(line: &[u8]) -> bool {
    [&b"make"[..], b"just", b"task"].iter().any(|w| contains_ci(line, w))
        || (memchr::memchr(b'/', line).is_some()
            && [&b"pip"[..], b"npm", b"yarn", b"bun", b"gem"].iter().any(|w| contains_ci(line, w)))
}

/// `sudo ./tools/bootstrap`: a file of the skill's folder, with no
/// extension, run as root.
pub(super) static SUDO_LOCAL: Lazy =
    LazyLock::new(|| compile(r"\b(?:sudo|doas)\s+(?:-\S+\s+)*(\./[\w-]+/[\w./-]*[\w-])(?:\s|$|`|;|&)"));

pub(super) fn is_script(path: &str) -> bool {
    let b = path.as_bytes();
    SCRIPT_EXTENSIONS
        .iter()
        .any(|e| b.len() > e.len() && b[b.len() - e.len()..].eq_ignore_ascii_case(e.as_bytes()))
}

/// A path in the skill's own folder: relative, or under a skill-folder
/// placeholder, and not a system, home or temporary path.
pub(super) fn is_companion_path(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let elsewhere = has_url(path)
        || path.starts_with(['/', '~', '-'])
        || path.contains("..")
        || ["$HOME", "${HOME}", "$TMP"].iter().any(|p| path.starts_with(p));
    !elsewhere && !PROJECT_FILES.contains(&name)
}

/// Whether `line` names a file with a script extension: the cheap test
/// before tokenising, jumping from dot to dot.
fn mentions_script(line: &str) -> bool {
    let b = line.as_bytes();
    memchr::memchr_iter(b'.', b).any(|i| {
        SCRIPT_EXTENSIONS.iter().any(|e| {
            let e = e.as_bytes();
            b.len() >= i + e.len()
                && b[i..i + e.len()].eq_ignore_ascii_case(e)
                && b.get(i + e.len()).is_none_or(|c| !c.is_ascii_alphanumeric())
        })
    })
}

/// Whether `line` may hand a file without a script extension to a runner
/// (`bash tools/bootstrap`, `. ./scripts/init`, `ruby bin/setup`,
/// `powershell -File tools\setup`): a path separator and a word that is
/// one of [`RUNNERS`], the cheap test before tokenising.
pub(super) fn mentions_bare_run(line: &str) -> bool {
    memchr::memchr2(b'/', b'\\', line.as_bytes()).is_some()
        && line.split_ascii_whitespace().any(|w| is_runner(w.trim_start_matches(['`', '"', '\'', '(', '$'])))
}

/// Whether `word` is one of [`RUNNERS`], ignoring ASCII case: one `match`
/// on a lower-cased copy, rather than a comparison per runner, for every
/// word of every line the cheap test reads.
fn is_runner(word: &str) -> bool {
    let w = word.as_bytes();
    if w.is_empty() || w.len() > LONGEST_RUNNER {
        return false;
    }
    let mut lower = [0u8; LONGEST_RUNNER];
    for (l, c) in lower.iter_mut().zip(w) {
        *l = c.to_ascii_lowercase();
    }
    matches!(
        &lower[..w.len()],
        b"bash"
            | b"sh"
            | b"zsh"
            | b"dash"
            | b"ksh"
            | b"source"
            | b"."
            | b"python"
            | b"python3"
            | b"python2"
            | b"py"
            | b"node"
            | b"deno"
            | b"bun"
            | b"pwsh"
            | b"powershell"
            | b"powershell.exe"
            | b"cmd"
            | b"cmd.exe"
            | b"ruby"
            | b"perl"
            | b"php"
            | b"lua"
            | b"tsx"
            | b"ts-node"
            | b"call"
            | b"start-process"
            | b"saps"
            | b"cscript"
            | b"wscript"
            | b"exec"
            | b"java"
            | b"rscript"
            | b"osascript"
            | b"go"
            | b"uv"
            | b"poetry"
            | b"pipenv"
            | b"pdm"
            | b"hatch"
            | b"npx"
    )
}

/// The length of the longest of [`RUNNERS`]: longer words are none of them.
const LONGEST_RUNNER: usize = 14;

/// Files a shell sources that are the environment's, not the skill's:
/// a virtual environment's activation, a dotenv file.
const ENVIRONMENT_FILES: &[&str] = &["activate", "activate.fish", "activate.csh", ".env", ".envrc"];

/// A file without a script extension given to a runner: a path into a
/// folder (`tools/bootstrap`), not a flag, a glob or an environment file.
pub(super) fn is_bare_companion(t: &str) -> bool {
    let name = t.rsplit(['/', '\\']).next().unwrap_or(t);
    let folder = t.len() > name.len();
    let path_like = t.starts_with(|c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '$' | '{' | '_'));
    folder
        && path_like
        && !t.contains(['>', '<', '|', '&'])
        && !name.is_empty()
        && !name.contains('.')
        && !name.contains(['*', '?', '<', '>', '(', '=', '|'])
        && !ENVIRONMENT_FILES.iter().any(|e| name.eq_ignore_ascii_case(e))
        && !t.contains("venv")
        && !t.contains("node_modules")
}

/// Whether the file at `at` of `line` is sourced (`source x`, `. x`):
/// run inside the agent's own shell, where it can redefine every command
/// the later steps run and export what it likes.
pub(super) fn sourced(line: &str, at: usize) -> bool {
    let before = line[..at].trim_end().trim_end_matches(['"', '\'']).trim_end();
    let word =
        before.rsplit(|c: char| c.is_whitespace() || c == '`' || c == '(' || c == ';').next().unwrap_or("");
    word.eq_ignore_ascii_case("source") || word == "."
}

/// `cmd`'s switches (`/c`, `/k`, `/q`): a slash and one letter.
fn is_cmd_switch(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() == 2 && b[0] == b'/' && b[1].is_ascii_alphabetic()
}

/// Whether `line` may run a module with `-m` (`python3 -m tools.setup`):
/// the cheap test before tokenising.
fn mentions_module_run(line: &str) -> bool {
    let b = line.as_bytes();
    // ` -m ` by its dashes: `memmem::find` builds a searcher per call,
    // which cost more than the search on every long line (#14's speed).
    memchr::memchr_iter(b'-', b).any(|i| i > 0 && b[i - 1] == b' ' && b[i + 1..].starts_with(b"m "))
        && contains_ci(b, b"py")
}

/// A module of the skill's own folders, as `-m` names it
/// (`scripts.bootstrap`, `tools.sync`, `helpers.init`): the folders a
/// skill bundles code in, a dot, and the module; a package of the
/// environment (`pip`, `http.server`, `venv`) is none of them.
fn is_companion_module(word: &str) -> bool {
    let Some((folder, rest)) = word.split_once('.') else { return false };
    let folder = folder.to_ascii_lowercase();
    let bundled =
        matches!(folder.as_str(), "scripts" | "tools" | "helpers" | "bin" | "setup" | "vendor" | "hooks")
            || folder.starts_with("skill");
    bundled && !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// Scripts of the skill's folder that `line` runs, with their offsets.
pub(crate) fn runs(line: &str) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    if !mentions_script(line) && !mentions_bare_run(line) && !mentions_module_run(line) {
        return out;
    }
    let mut command_position = true;
    let mut runner = false;
    // The word before was a runner's `-m`: this one is a module.
    let mut module_next = false;
    let mut flag = false;
    // The prefix word whose flags may come before the command (`sudo -E`).
    let mut prefix = PrefixWords::default();
    let mut offset = 0;
    for raw in line.split_inclusive(char::is_whitespace) {
        let at = offset;
        offset += raw.len();
        let raw = raw.trim_end();
        if raw.is_empty() {
            continue;
        }
        let starts_code = raw.starts_with('`') || raw.starts_with("$(");
        let t = raw.trim_start_matches(['`', '"', '\'', '(']).trim_start_matches("$(");
        let lead = raw.len() - t.len();
        let t = t.split('`').next().unwrap_or("").trim_end_matches(['"', '\'', ')', ';', ',', ':']);
        let listed = |list: &[&str]| list.iter().any(|w| w.eq_ignore_ascii_case(t));
        let previous_flag = std::mem::replace(&mut flag, t.starts_with('-') && !t.contains('='));
        if starts_code {
            command_position = true;
            runner = false;
        }
        if matches!(t, "&&" | "||" | "|" | ";") || raw.ends_with(';') && t.is_empty() {
            command_position = true;
            runner = false;
            prefix.end();
            continue;
        }
        if command_position && !starts_code && prefix.owns(t) {
            continue;
        }
        // A path alone runs only when written as a command (`./x.sh`,
        // `{baseDir}/x.sh`); `scripts/x.sh` alone is a mention.
        let command = t.starts_with("./")
            || t.starts_with(".\\")
            || t.starts_with(['{', '$']) && (t.contains('/') || t.contains('\\'));
        if std::mem::take(&mut module_next) && is_companion_module(t) {
            // `python -m tools.setup`: Python's way of running a bundled file.
            out.push((t, at + lead));
            runner = false;
            command_position = false;
            continue;
        }
        let file = is_script(t) || runner && is_bare_companion(t);
        if file && is_companion_path(t) && (runner || command_position && command) {
            out.push((t, at + lead));
            runner = false;
            command_position = false;
        } else if (command_position || starts_code) && listed(RUNNERS) {
            runner = true;
            command_position = false;
        } else if runner && listed(RUNNERS) {
            // `poetry run python x.py`: one runner hands over to another.
        } else if runner && t == "run" {
            // `deno run ./x.ts`, `bun run ./x.ts`: the runner's own verb.
        } else if runner && (t == "-m" || t == "-c" || t == "-e") {
            // `python -m pkg`, `bash -c '…'`, `node -e '…'`: what follows
            // is a module or inline code, not a script file; a module of
            // the skill's own folders is read as its file.
            runner = false;
            module_next = t == "-m";
        } else if runner && (t.starts_with('-') || previous_flag || is_cmd_switch(t)) {
            // `bash -x`, `pwsh -ExecutionPolicy Bypass -File`: still the
            // runner's options and their values.
        } else if (command_position || starts_code)
            && (listed(PREFIXES)
                || t.contains('=')
                || t.ends_with('.') && t[..t.len() - 1].bytes().all(|b| b.is_ascii_digit()))
        {
            command_position = true;
            prefix.set(listed(PREFIXES).then_some(t));
        } else {
            command_position = false;
            runner = false;
        }
        if raw.ends_with([';', '`']) && raw.len() > 1 {
            command_position = true;
            runner = false;
        }
    }
    out
}

#[cfg(test)]
#[path = "runs_speed9_tests.rs"]
mod speed9_tests;

#[cfg(test)]
mod runner_tests {
    use super::*;

    #[test]
    fn the_gates_runner_match_is_the_runner_list() {
        for r in RUNNERS {
            assert!(is_runner(r), "{r}");
            assert!(is_runner(&r.to_ascii_uppercase()), "{r}");
        }
        assert_eq!(RUNNERS.iter().map(|r| r.len()).max(), Some(LONGEST_RUNNER));
        // One byte past the longest, and words that only hold a runner.
        for w in ["", "powershell.exe1", "rubygems", "bashful", "shell", "gopher"] {
            assert!(!is_runner(w), "{w}");
        }
    }
}

#[cfg(test)]
#[path = "runs_edge_tests.rs"]
mod edge_tests;

#[cfg(test)]
#[path = "runs_sweep_tests.rs"]
mod sweep_tests;

#[cfg(test)]
#[path = "runs_seed33_tests.rs"]
mod seed33_tests;
