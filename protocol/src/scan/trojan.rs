//! Trojan companions (category `SupplyChain`): the skill has the agent run
//! code the reader of the skill never sees.
//!
//! - `trojan.companion-script`: a script of the skill's own folder run or
//!   sourced (`bash scripts/setup.sh`, `source ./env.sh`, `python3
//!   {baseDir}/run.py`, `./install.sh`, `pwsh ./x.ps1`) whose content the
//!   skill does not show: no code block next to a line naming the file
//!   (the block that runs it shows the command, not the file), and no
//!   heredoc or redirection writing it. `Medium` on its own (many
//!   harmless skills ship helper scripts; the bundle's own scan judges the
//!   file itself), `High` when run with privilege (`sudo bash ./x.sh`,
//!   `-ExecutionPolicy Bypass`) or with concealment nearby ("without
//!   reading it", "don't open it", "nothing in it worth reviewing", output
//!   thrown away), run unattended (`--yes`, `--batch`, `-Unattended`, an
//!   installer's `/S`, `nohup`) or asked before anything else, or when it
//!   is sourced (`source x`, `. x`): a sourced
//!   file runs in the agent's own shell and can redefine every command the
//!   later steps run. A runner given a file without a script extension
//!   (`bash tools/bootstrap`, `. ./scripts/init`, `go run ./cmd/prep`,
//!   `npx ./tools/cli`, `Start-Process -FilePath …`, `python -m
//!   tools.setup` of a module in the skill's folders) counts; a virtual
//!   environment's `activate` and dotenv files do not.
//!   Also `High`: companion code loaded everywhere (a preload or startup
//!   variable such as `LD_PRELOAD`, `NODE_OPTIONS=--require`,
//!   `PYTHONSTARTUP`; git settings that run a program on git's own
//!   commands — `core.hooksPath`, `core.fsmonitor`, `core.sshCommand`, a
//!   credential helper — pointed at the skill's files; a build fragment of
//!   the skill included into the project's build; an `alias git=` to one),
//!   a skill file run as code or loaded into the session (`iex
//!   (Get-Content …)`, `source <(cat …)`, `Import-Module
//!   "$PSScriptRoot\…"`), fed to an interpreter whatever its name (`sh <
//!   tools/steps.txt`, `bash -c "$(cat x)"`, `xargs -a list sh -c`), or
//!   preloaded into a program (`node --require ./x.cjs app.js`, a Java
//!   agent). A local package of the skill installed (`pip install -e
//!   ./labkit`) is graded as a script run is. The forms and their
//!   regexes are `trojan/runs.rs`'.
//! - `trojan.fetch-and-run`: prose telling the agent to fetch something
//!   from a URL and run it ("download the setup script from https://… and
//!   run it", "execute the installer at https://…"). `High` for a script
//!   or a bare IP address, `Medium` for a vendor's installer package
//!   (`.msi`, `.dmg`), `Critical` with concealment; a helper or a script
//!   fetched is `High`. The fetch may be asked on the line before its
//!   address, and the address may lack its scheme
//!   (`github.com/acme/tool/releases/latest`). Asked in plain words, the
//!   place may be anything or nothing ("get the setup script and run it",
//!   "grab the helper from our site, then execute it"): what is read is a
//!   fetch and a run of the same thing (`trojan/plain.rs`). The same in
//!   commands (`curl -o x.sh …; bash x.sh`) is the `remote` family's.
//!
//! A line that warns against the command ("never run `./setup.sh` without
//! reading it") is no finding.

use std::sync::LazyLock;

use super::engine::{Analyzer, Body, LineRef, finding};
use super::fence::is_fence;
use super::rule::{Lazy, compile, contains_ci, slice_lossy, warned_across_lines, warned_against};
use super::supply::{has_url, has_word};
use super::{Category, Finding, Severity};
use grade::LineGrade;
pub(super) use runs::runs;
use runs::{
    BUILT_OR_INSTALLED, COMPILED_EXTENSIONS, FED_TO_SHELL, LOADED_EVERYWHERE, PRELOADED, RUN_AS_CODE,
    SUDO_LOCAL, is_companion_path, is_script, may_build_or_install, may_feed_shell, may_hold_a_form,
    may_load_everywhere, may_preload, may_run_as_code, sourced,
};
use shown::Shown;

/// The analyzers of this family.
pub(super) fn analyzers() -> Vec<Analyzer> {
    // One per script extension the skill's folder may hold.
    vec![Analyzer {
        triggers: &[
            "*.sh",
            "*.bash",
            "*.zsh",
            "*.py",
            "*.ps1",
            "*.psm1",
            "*.js",
            "*.mjs",
            "*.rb",
            "*.pl",
            "*.ts",
            "*.cjs",
            "*.php",
            "*.lua",
            "*.bat",
            "*.cmd",
            "*.vbs",
            "source",
            "pwsh",
            "powershell",
            "://",
            // Compiled companions, and installers fetched from a bare host.
            "*.pyc",
            "*.exe",
            "*.bin",
            "installer*",
            "sudo ./",
            // A runner given a file without a script extension.
            "bash",
            "zsh",
            ". ./",
            // An address without its scheme (`github.com/acme/tool/…`).
            "*.com/",
            "*.io/",
            "*.dev/",
            "*.net/",
            "*.jar",
            "*.r",
            "*.scpt",
            "*.applescript",
            "go run",
            // A module of the skill's folders run by Python (`-m`).
            "python -m",
            "python3 -m",
            // Companion code loaded into every process, or every commit.
            "ld_preload",
            "dyld_insert*",
            "node_options",
            "pythonstartup",
            "bash_env",
            "perl5opt",
            "rubyopt",
            "java_tool_options",
            "hookspath",
            "get-content",
            "<(cat",
            "import-module",
            "alias",
            "make -f",
            "justfile",
            "taskfile",
            "install ./",
            "install -e",
            "add ./",
            // A file fed to a shell (`sh < tools/steps`, `xargs -a list …
            // sh -c`), a local package run by `npx`, and git settings that
            // run a program on every git command.
            "sh <",
            "eval",
            "xargs",
            "npx",
            // Keys other families have already (`core`, `incl`, `cred`).
            "core.fsmonitor",
            "core.sshcommand",
            "core.askpass",
            "credential.helper",
            // A build fragment of the skill's folder included.
            "include $(",
            "include ${",
            "include(${",
            // A fetch asked in plain words, with no address
            // (`trojan/plain.rs`): "get the setup script and run it".
            "download*",
            "fetch*",
            "grab*",
            "retriev*",
            "obtain*",
            "get",
        ],
        run: companions,
    }]
}

/// Lines around a run that concealment may be written on (a code block's
/// fence may stand between).
const CONCEALMENT_LINES: usize = 2;

static CONCEALMENT: Lazy = LazyLock::new(|| {
    compile(
        r"\bwithout\s+(?:first\s+)?(?:reading|reviewing|opening|inspecting|looking|checking|showing|printing|displaying|asking|telling|confirmation)\b|\b(?:don'?t|do\s+not|never|no\s+need\s+to)\s+(?:(?:edit|modify|change|touch|open)\s+(?:or|and|nor)\s+)?(?:read|open|inspect|review|look\s+(?:at|inside|into|through)|show|display|print|cat|examine|check|mention|tell)\b|\bohne\s+(?:sie|es|ihn|das|die\s+\S+)\s+(?:zu\s+)?(?:\S{1,2}ffnen|lesen|pr\S{1,2}fen|anzusehen|durchzusehen)\b|\bsans\s+(?:les?\s+|la\s+|l')?(?:ouvrir|lire|relire|examiner|v\S{1,2}rifier)\b|\bsin\s+(?:abrirlos?|abrirlas?|leerlos?|leerlas?|revisarlos?|revisarlas?|abrir|leer|revisar)\b|\b(?:silently|quietly)\b|\bin\s+the\s+background\b|>\s*/dev/null|\bout-null\b|-windowstyle\s+hidden|\b(?:minified|obfuscated|opaque)\b|\bskip\s+(?:reading|reviewing|opening|inspecting)\b|\b(?:do\s+not|don'?t|doesn'?t|does\s+not)\s+(?:have|need)\s+to\s+(?:read|open|inspect|review|look\s+at|check)\b|\bshould\s+not\s+be\s+(?:reviewed|read|opened|inspected|shown)\b|\b(?:do\s+not|don'?t|never)\s+(?:print|summari[sz]e|describe|explain)\s+it\b|\bnothing\s+(?:in\s+(?:it|there|them)\s+)?(?:worth|to)\s+(?:review|read|inspect|check|look)\w*",
    )
});

/// Credentials handed to the run on its own line: unseen code given the
/// user's keys (`GITHUB_TOKEN=$GITHUB_TOKEN ./x.sh`, `./sync.sh
/// ~/.aws/credentials`, `--token "$NPM_TOKEN"`).
static HANDS_SECRETS: Lazy = LazyLock::new(|| {
    compile(
        r"\$\{?\w*(?:token|secret|passw(?:or)?d|api_?key|access_?key|private_?key|credentials?)\w*\}?|~/\.(?:ssh|aws|netrc|npmrc|pypirc|docker|kube|config/gh)\b|\$(?:home|\{home\})/\.(?:ssh|aws|netrc|npmrc|pypirc|docker|kube)\b|\bsecrets\.\w+|\bid_(?:rsa|ed25519|ecdsa)\b",
    )
});

/// What is said of the unseen script that a reviewer would stop at: it
/// reports or uploads somewhere, is to be taken as is, is not shown, or
/// must run before anything else the skill does (whatever it sets up,
/// every later step runs under it).
static SAID_OF_IT: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:telemetry|phones?\s+home|beacons?|registers?\s+(?:the|this|your)\s+(?:machine|host|device|workstation)|registers?\s+(?:itself\s+)?with|reports?\s+(?:usage\s+)?(?:back|home)|upload(?:s|ed)?\s+(?:the|your|a)\b|as[\s-]is|(?:do\s+not|don'?t|never)\s+(?:modify|edit|change)\s+(?:it|the\s+script)|not\s+(?:reproduced|shown|included|listed)\s+here|too\s+(?:long|large|big)\s+to\s+(?:show|include|list|paste)|just\s+run\s+it|before\s+(?:anything|everything)\s+else|before\s+(?:any|every)\s+other\s+step|(?:the\s+)?very\s+first\s+thing)\b",
    )
});

/// What the run is told after the file's name that keeps anyone from
/// seeing what it does: its own prompts answered or skipped (`--yes`,
/// `--accept-all`, `--batch`, `-Unattended`), or its output silenced
/// (`--quiet`, an installer's `/S`).
static UNATTENDED: Lazy = LazyLock::new(|| {
    compile(
        r"\s['\x22]?(?:--(?:yes|quiet|silent|force|unattended|accept-all|assume-yes|non-?interactive|no-?confirm\w*|no-?prompt|no-?input|auto-?approve|skip-?confirm\w*|batch)|-y|-q|-unattended|-force|-batch|-confirm:\$false|/(?:s|q|qn|quiet|silent|verysilent))['\x22]?(?:\s|$|[`;&|),])",
    )
});

/// A process detached to outlive the session (`nohup`, `setsid`, `disown`).
static DETACHED: Lazy = LazyLock::new(|| compile(r"\b(?:nohup|setsid|disown)\b"));

static PRIVILEGE: Lazy = LazyLock::new(|| {
    compile(r"\b(?:sudo|doas|runas)\b|-verb\s+runas|executionpolicy\s+(?:bypass|unrestricted)|\s-ep\s+bypass")
});

static FETCH_THEN_RUN: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:download|fetch|get|grab|pull|retrieve|obtain)\b[^.;!?\n]{0,120}?(https?://[^\s)>`'\x22]+)[^;!?\n]{0,120}?\b(?:run|execute|launch|source|invoke)\b",
    )
});

/// The same with the installer named and its host written bare ("grab the
/// installer, linked from get-tool.net, and execute it as root").
static FETCH_BARE_HOST: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:download|fetch|get|grab|pull|retrieve|obtain)\s+(?:the\s+|our\s+|this\s+|their\s+)?(?:[\w-]+\s+){0,2}?(?:installer|setup\s+script|script|bootstrapper|binary|helper)\b[^;!?\n]{0,80}?\b((?:[a-z0-9-]+\.)+(?:io|com|net|org|dev|app|co|sh|xyz|cc|me|ai|site|cloud|online|info|biz|link|tools|run)\b)[^;!?\n]{0,80}?\b(?:run|execute|launch|source|invoke)\b",
    )
});

/// What is fetched named as code written for the task (a helper, a
/// script), not a vendor's installer package: no reader has seen it.
static CODE_FETCHED: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:download|fetch|get|grab|pull|retrieve|obtain)\s+(?:the\s+|our\s+|this\s+|their\s+|a\s+)?(?:[\w-]+\s+){0,2}?(?:helper|script|bootstrapper|payload)s?\b",
    )
});

/// An address written without its scheme, with a path
/// (`github.com/acme/tool/releases/latest`): what prose links to.
static BARE_ADDRESS: Lazy = LazyLock::new(|| {
    compile(
        r"(?:^|[\s(<`])(?:[a-z0-9-]+\.)+(?:com|io|net|org|dev|app|sh|co|xyz|cc|me|ai|site|cloud|tools|run)/[\w.-]+/",
    )
});

/// Privilege asked in words.
static AS_ROOT: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:as\s+(?:root|administrator|admin)|with\s+(?:sudo|root|elevated)|elevated\s+(?:rights|privileges))\b",
    )
});

static RUN_FROM: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:run|execute|launch|source|invoke)\s+(?:the\s+|this\s+)?(?:[\w-]+\s+){0,2}(?:script|installer|bootstrapper|bootstrap|binary|helper|payload)\s+(?:from|at|hosted\s+at|located\s+at|available\s+at|found\s+at)\s+<?(https?://[^\s)>`'\x22]+)",
    )
});

/// The scripts of the skill's own folder that `text` runs or sources, as
/// written (`./setup.sh`, `{baseDir}/scripts/fill.py`), each with the
/// 0-based index of its line: what a bundle must contain (`bundle::scan`).
pub(crate) fn scripts_run(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n')
        .enumerate()
        .flat_map(|(index, line)| runs(line).into_iter().map(move |(p, _)| (index, p)))
}

/// Whether the body shows the file `path` that line `run` runs (see
/// [`Shown::shown`]), for a caller asking once.
pub(super) fn shown(body: &Body<'_>, run: LineRef, path: &str) -> bool {
    Shown::new(body.text).shown(run, path)
}

/// Words (or their starts) without which neither fetch-and-run sentence
/// reads: the cheap test (on the URL's line or the next) before the
/// regexes.
const FETCH_OR_RUN_WORDS: &[&str] = &[
    "download",
    "fetch",
    "get",
    "grab",
    "pull",
    "retriev",
    "obtain",
    "script",
    "install",
    "bootstrap",
    "binar",
    "helper",
    "payload",
];

/// Whether concealment is written on `l` or next to it: blank lines and
/// fences between ("…no need to open it:", a blank, the fence, the run)
/// do not count toward the distance before it.
fn concealed(body: &Body<'_>, l: LineRef) -> bool {
    said_near(body, l, &CONCEALMENT)
}

/// Whether the lines around the run say what a reviewer would stop at
/// (`SAID_OF_IT`), as `concealed` reads them.
fn said_of_it(body: &Body<'_>, l: LineRef) -> bool {
    said_near(body, l, &SAID_OF_IT)
}

/// Whether `re` matches on `l`, the [`CONCEALMENT_LINES`] lines after it,
/// or the [`CONCEALMENT_LINES`] lines with text before it.
fn said_near(body: &Body<'_>, l: LineRef, re: &regex::bytes::Regex) -> bool {
    let from = body.line_before(l, CONCEALMENT_LINES + 2);
    let near: Vec<(LineRef, &str)> =
        body.lines_from(from).take_while(|(r, _)| r.index <= l.index + CONCEALMENT_LINES).collect();
    let said = |t: &str| {
        let t = t.trim();
        !t.is_empty() && !is_fence(t)
    };
    let before = near.iter().filter(|(r, _)| r.index < l.index).rev().filter(|(_, t)| said(t));
    let after = near.iter().filter(|(r, _)| r.index >= l.index);
    before.take(CONCEALMENT_LINES).chain(after).any(|(_, line)| re.is_match(line.as_bytes()))
}

/// Whether the line starting at byte `start` is inside a fenced code block,
/// by the lines that open or close one (`fences`, their starts in order).
fn in_code_block(fences: &[usize], start: usize) -> bool {
    fences.partition_point(|&f| f < start) % 2 == 1 && fences.binary_search(&start).is_err()
}

/// Whether `b` holds `./`, by its dots: what a run of [`SUDO_LOCAL`]
/// needs.
fn has_dot_slash(b: &[u8]) -> bool {
    memchr::memchr_iter(b'.', b).any(|i| b.get(i + 1) == Some(&b'/'))
}

/// A configuration line's program list read as a command line:
/// `program = ["bash", "${path.module}/x.sh"]` as `program = bash …`.
fn as_command(line: &str) -> Option<String> {
    let listed = memchr::memchr2(b'[', b'(', line.as_bytes()).is_some();
    listed.then(|| line.replace(['[', ']', '(', ')', ',', '"', '\''], " "))
}

/// Whether a stranger's URL is on `l` or a few lines above: what a line
/// runs from `${…_SOURCE_DIR}` was fetched there.
fn fetched_above(body: &Body<'_>, l: LineRef) -> bool {
    body.lines_from(body.line_before(l, 6)).take(7).any(|(_, t)| {
        has_url(t)
            && super::supply::is_unknown_host(
                t.split_whitespace()
                    .find(|w| w.contains("://"))
                    .unwrap_or("")
                    .trim_matches(|c: char| !c.is_ascii_graphic() || c == '(' || c == ')'),
            ) == Some(true)
    })
}

/// Whether a detaching command is anywhere on `line`: with the flags after
/// a file's name ([`LineGrade::flags_after`], a runner's own flags before
/// it are its own), what tells a run to skip its prompts, keep quiet or
/// outlive the session ([`UNATTENDED`]).
fn detached(line: &str) -> bool {
    let b = line.as_bytes();
    [&b"nohup"[..], b"setsid", b"disown"].iter().any(|w| contains_ci(b, w)) && DETACHED.is_match(b)
}

/// The files of the skill's folder that `line` runs in the forms its
/// regexes find (loaded everywhere, run as code, fed to an interpreter,
/// preloaded, built or installed), each with its offset and whether the
/// form runs it everywhere or as code: the first of each form.
fn formed_runs(line: &str) -> Vec<(&str, usize, bool)> {
    // Every form's path holds a `/` or `\` (a Java agent's may be bare
    // after `-javaagent:`): a line with none of the three, like a fence
    // naming `bash`, is spared the gate's search (#14's speed).
    if memchr::memchr3(b'/', b'\\', b':', line.as_bytes()).is_none() {
        return Vec::new();
    }
    searched_runs(line)
}

/// [`formed_runs`] without its first gate: the oracle of its tests.
fn searched_runs(line: &str) -> Vec<(&str, usize, bool)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    if !may_hold_a_form(b) {
        return out;
    }
    // The newer forms take any path their interpreter is given; only a
    // path of the skill's own folder is a companion.
    for (re, everywhere, may, own) in [
        (&LOADED_EVERYWHERE, true, may_load_everywhere as fn(&[u8]) -> bool, false),
        (&RUN_AS_CODE, true, may_run_as_code, false),
        (&FED_TO_SHELL, true, may_feed_shell, true),
        (&PRELOADED, true, may_preload, true),
        (&BUILT_OR_INSTALLED, false, may_build_or_install, false),
    ] {
        if !may(b) {
            continue;
        }
        let caps = re.captures(b);
        if let Some(m) = caps.and_then(|c| (1..c.len()).find_map(|i| c.get(i))) {
            let path = slice_lossy(line, m.range());
            if !own || is_companion_path(path) {
                out.push((path, m.start(), everywhere));
            }
        }
    }
    out
}

/// Every file of the skill's folder that `line` runs, in any form: what a
/// skill vouching for its code (`vouched`) is judged by.
pub(super) fn run_paths(line: &str) -> Vec<&str> {
    runs(line).into_iter().map(|(p, _)| p).chain(formed_runs(line).into_iter().map(|(p, _, _)| p)).collect()
}

/// The severity of a companion run at byte `at` of line `l`: High when
/// `raised` (what the run form itself says) or when the run is unattended,
/// privileged, handed secrets, hidden from the user or vouched for;
/// `Medium` otherwise.
fn graded(body: &Body<'_>, l: LineRef, at: usize, raised: bool, grade: &mut LineGrade) -> Severity {
    let line = body.line(l);
    if raised
        || *grade.whole.get_or_insert_with(|| {
            PRIVILEGE.is_match(line.as_bytes())
                || HANDS_SECRETS.is_match(line.as_bytes())
                || concealed(body, l)
                || said_of_it(body, l)
                || detached(line)
        })
        || grade.flags_after(line, at)
    {
        Severity::High
    } else {
        Severity::Medium
    }
}

fn companions(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    // Fetch-and-run is asked in prose: outside the blocks, by the fences
    // the body's code map lists (`CodeMap::loose_fences`).
    let mut seen = Shown::new(body.text);
    for &l in lines {
        let line = body.line(l);
        let mut found = runs(line);
        let command = if found.is_empty() { as_command(line) } else { None };
        if let Some(c) = &command {
            // Offsets of the cleaned copy are those of the line: one byte
            // replaced by one blank.
            found = runs(c).into_iter().map(|(p, at)| (&line[at..at + p.len()], at)).collect();
        }
        let mut grade = LineGrade::default();
        for (path, at) in found {
            let compiled = COMPILED_EXTENSIONS.iter().any(|e| path.to_ascii_lowercase().ends_with(e));
            let fetched =
                path.starts_with("${") && *grade.fetched.get_or_insert_with(|| fetched_above(body, l));
            let severity = graded(body, l, at, compiled || fetched || sourced(line, at), &mut grade);
            if !grade.keeps(severity) {
                continue;
            }
            let before = &line[..at];
            let previous = body.line(body.line_before(l, 1));
            let warned = warned_against(before) || (l.index > 0 && warned_across_lines(previous, before));
            if warned || seen.shown(l, path) {
                continue;
            }
            grade.push(finding("trojan.companion-script", Category::SupplyChain, severity, l, line, at), out);
        }
        let b = line.as_bytes();
        // `SUDO_LOCAL`'s path starts `./`: a line without one is spared
        // the two word searches (#14's speed).
        let sudo = grade.keeps(Severity::High)
            && has_dot_slash(b)
            && (contains_ci(b, b"sudo") || contains_ci(b, b"doas"));
        if let Some(m) = sudo.then(|| SUDO_LOCAL.captures(b)).flatten().and_then(|c| c.get(1)) {
            let path = slice_lossy(line, m.range());
            let named_script = is_script(path);
            if !named_script && !warned_against(&line[..m.start()]) && !seen.shown(l, path) {
                let f = finding(
                    "trojan.companion-script",
                    Category::SupplyChain,
                    Severity::High,
                    l,
                    line,
                    m.start(),
                );
                grade.push(f, out);
            }
        }
        // Loaded everywhere, run as code, fed to an interpreter or
        // preloaded into a program: High. A build file or a local package
        // run or installed: graded as a script run is.
        for (path, at, everywhere) in formed_runs(line) {
            let severity = graded(body, l, at, everywhere, &mut grade);
            if !grade.keeps(severity) || warned_against(&line[..at]) || seen.shown(l, path) {
                continue;
            }
            grade.push(finding("trojan.companion-script", Category::SupplyChain, severity, l, line, at), out);
        }
        // The fences' test first: a line inside a block is spared the
        // searches (#14's speed).
        if !in_code_block(&body.code_map().loose_fences, l.start) && read_for_fetch(line) {
            fetch_and_run(body, l, line, out);
        }
    }
}

/// Whether a prose line is read for a fetch-and-run: it may hold one by
/// its address (a bare one has a `/` after its host) or its installer,
/// even with the fetch verb on the line before, or it asks one in plain
/// words, by its verb (a fence, ```` ```bash ````, has none).
fn read_for_fetch(line: &str) -> bool {
    let b = line.as_bytes();
    has_url(line)
        || contains_ci(b, b"installer")
        || memchr::memchr(b'/', b).is_some() && BARE_ADDRESS.is_match(b)
        || !is_fence(line) && has_word(line, plain::FETCH_VERBS, false)
}

/// Prose asking to fetch from a URL and run what came.
fn fetch_and_run(body: &Body<'_>, l: LineRef, line: &str, out: &mut Vec<Finding>) {
    // Prose wraps: the run may be asked on the next line.
    let next = body.lines_from(l).nth(1).map(|(_, n)| n).filter(|n| !n.trim().is_empty() && !is_fence(n));
    // … or the fetch on the line before, the address wrapped onto this one.
    let prev = (l.index > 0)
        .then(|| body.line(body.line_before(l, 1)))
        .filter(|p| !p.trim().is_empty() && !is_fence(p) && !has_url(p));
    let asks = |text: &str| has_word(text, FETCH_OR_RUN_WORDS, true);
    if !asks(line) && !next.is_some_and(asks) && !prev.is_some_and(asks) {
        return;
    }
    let hay = match next {
        Some(n) => format!("{line} {}", n.trim_start()),
        None => line.to_string(),
    };
    // The address forms first; a plain-words fetch when they find none, or
    // when theirs starts past `end` (the next line's) and the plain one
    // is another fetch, asked on this line: it is this line's.
    let find = |hay: &str, end: usize| {
        let b = hay.as_bytes();
        let address = RUN_FROM
            .captures(b)
            .or_else(|| FETCH_THEN_RUN.captures(b))
            .or_else(|| FETCH_BARE_HOST.captures(b))
            .and_then(|c| c.get(1))
            .map(|m| m.range());
        match address {
            Some(a) if a.start <= end => Some(a),
            // A plain fetch whose phrase holds the address is the same fetch.
            a => plain::fetched_then_run(hay)
                .filter(|p| a.as_ref().is_none_or(|a| p.start <= end && p.end <= a.start))
                .or(a),
        }
    };
    let (hay, offset, url) = match find(&hay, line.len()) {
        // What the next line holds is the next line's when it is read and
        // reads this one as its line before (one without an address).
        Some(url) if url.start > line.len() && !has_url(line) && next.is_some_and(read_for_fetch) => return,
        Some(url) => (hay, 0, url),
        None => {
            let Some(p) = prev else { return };
            let offset = p.len() + 1;
            let hay = format!("{p} {hay}");
            // Only an address on this line: one on the line before is its own.
            let Some(url) = find(&hay, offset + line.len()).filter(|u| u.start >= offset) else { return };
            (hay, offset, url)
        }
    };
    let b = hay.as_bytes();
    let at = (url.start - offset).min(line.len());
    let m = slice_lossy(&hay, url.clone());
    if warned_against(slice_lossy(&hay, 0..url.start)) {
        return;
    }
    let path = m.split(['?', '#']).next().unwrap_or(m);
    // A plain-words place may lack its scheme (`10.0.0.5/x.sh`).
    let host = path.split_once("://").map_or(path, |(_, r)| r).split('/').next().unwrap_or("");
    let ip = host.split(':').next().is_some_and(|h| h.parse::<std::net::IpAddr>().is_ok());
    let severity = if CONCEALMENT.is_match(b) || concealed(body, l) {
        Severity::Critical
    } else if is_script(path) || ip || AS_ROOT.is_match(b) || CODE_FETCHED.is_match(b) {
        Severity::High
    } else {
        Severity::Medium
    };
    out.push(finding("trojan.fetch-and-run", Category::SupplyChain, severity, l, line, at));
}

#[cfg(test)]
mod dos_tests;
#[cfg(test)]
mod gate_tests;
mod grade;
mod plain;
#[cfg(test)]
mod plain_tests;
mod runs;
mod shown;
#[cfg(test)]
mod speed9_tests;
#[cfg(test)]
mod sudo_edge_tests;
#[cfg(test)]
mod sweep29_tests;
#[cfg(test)]
mod sweep_tests;
#[cfg(test)]
mod tests;
