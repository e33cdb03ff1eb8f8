//! Taint: a value read from a source, followed through assignments to a
//! sink, per language and without a parser.
//!
//! A variable assigned from a source, or from an expression that mentions
//! a tainted variable (an encoding, a concatenation, an f-string or
//! template literal, a dict or JSON body), is tainted. A variable assigned
//! a connection or client (`requests.Session()`, `https.request(…)`) is a
//! network handle: a call on it is a network call. A sink that mentions a
//! tainted variable, or reads a source itself, is reached. Names match as
//! written (case-sensitive, as in every language here but PowerShell).
//!
//! Severity, and why:
//! - the environment, a credential file, a keychain, the clipboard or a
//!   browser store sent over the network: Critical — no API needs them;
//! - a secret environment variable (or one named keyring entry, a
//!   program's own token) sent over the network: Critical, unless
//!   it only authenticates the request (a header, `auth=`) — Medium — or
//!   goes in the body to the API the skill documents: a fixed host named
//!   in the skill's prose, or one the variable's name names
//!   (`GITHUB_TOKEN` → `api.github.com`) — Medium. In the URL or query
//!   string it is Critical wherever it goes: that is how tokens leak into
//!   logs and how exfiltration hides in a GET;
//! - run in a command that talks to the network: Critical; run otherwise
//!   (`docker login -p …`): Medium;
//! - written to a file or a log: High (the clipboard: Medium, what a
//!   clipboard manager does); printed: Low for a variable, Medium for the
//!   rest.
//!
//! Shell blocks are followed by `exfil` (its sender analyzer reads shell
//! variables, files and pipes); this module follows Python, JavaScript,
//! PowerShell and code of other or unknown languages.

use std::sync::LazyLock;

use super::blocks::{self, CodeMap, Lang};
use super::destination::{
    HEADER, HEADER_FIELD, Known, Position, URL, documented, documented_by, mentions, occurrences, position,
    query_authenticates, regions,
};
use super::strip::strip;
use super::{sinks, sources};
use crate::scan::engine::{Body, LineRef, finding};
use crate::scan::rule::{Lazy, compile};
use crate::scan::{Category, Finding, Severity};

/// Lines followed after the first source, at most.
const MAX_LINES: usize = 4000;
/// Tainted variables and handles remembered, at most.
const MAX_NAMES: usize = 64;
/// Bytes of a line of code analysed, at most: the name searches are
/// linear in both the line and the names.
const MAX_LINE_BYTES: usize = 8192;
/// Lines a call may run over.
const MAX_CALL_LINES: usize = 12;

/// A tainted variable.
#[derive(Debug, Clone)]
struct Tainted {
    name: String,
    kind: sources::Kind,
    /// The environment variables it came from.
    env: Vec<String>,
}

struct State<'m> {
    map: &'m CodeMap,
    tainted: Vec<Tainted>,
    handles: Vec<String>,
    /// Variables assigned a literal URL, with its host.
    hosts: Vec<(String, String)>,
    /// Hosts looked up in the prose, and whether it names them.
    named: Vec<(String, bool)>,
    /// The variables the last assignment made: a line that goes on with
    /// its call chain (`.POST(ofString(key))`) adds to what they hold.
    last_assigned: Vec<String>,
}

fn remember<T>(list: &mut Vec<T>, item: T) {
    if list.len() >= MAX_NAMES {
        list.remove(0);
    }
    list.push(item);
}

static ASSIGNMENT: Lazy = LazyLock::new(|| {
    compile(
        r"^\s*(?:(?:const|let|var|export|local|readonly|my|our|set|final|val|auto)\s+)?(?:mut\s+)?(?:(?-i:[A-Z])[\w.]*(?:<[^=\n]*>)?(?:\[\])?\s+)?\$?(?:[a-z_][\w]*\.)*([a-z_]\w*)(?:\s*\[[^\]]*\])?((?:\s*,\s*\$?[a-z_]\w*)*)\s*(?::\s*[^=]+?)?\s*[+.|:]?=(?:[^=~]|$)",
    )
});
static WITH_AS: Lazy = LazyLock::new(|| compile(r"\bas\s+([a-z_]\w*)\s*:|\bfor\s+([a-z_]\w*)\s+in\b"));

/// Runs the flow analysis over the code from the first source's block on.
pub(super) fn run(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    let Some(&first) = lines.first() else {
        return;
    };
    let mut state = State {
        map: body.code_map(),
        tainted: Vec::new(),
        handles: Vec::new(),
        hosts: Vec::new(),
        named: Vec::new(),
        last_assigned: Vec::new(),
    };
    let start = state.map.block_at(first.index).map_or(first.index, |b| b.first);
    let from = body.line_before(first, first.index - start);
    let all: Vec<(LineRef, &str)> = body.lines_from(from).take(MAX_LINES).collect();
    // One pass over the text for the places a source may be, rather than
    // the source patterns on every line of code.
    // Shell blocks and prose are not searched: shell is `exfil`'s, and an
    // inline span is searched on its own.
    let mut candidates = Vec::new();
    for b in state.map.blocks.iter().filter(|b| b.lang != Lang::Shell && b.bytes.end > from.start) {
        let at = b.bytes.start.max(from.start);
        candidates.extend(sources::candidates(&body.text[at..b.bytes.end]).into_iter().map(|k| at + k));
    }
    let on_line = |r: LineRef| {
        let k = candidates.partition_point(|&at| at < r.start);
        candidates.get(k).is_some_and(|&at| at < r.end.max(r.start + 1))
    };
    for (i, &(r, line)) in all.iter().enumerate() {
        let line = cut(line);
        match state.map.block_at(r.index).cloned() {
            Some(block) if block.lang != Lang::Shell => {
                let maybe_source = on_line(r);
                // The rest of the call, for a sink that runs over lines.
                let last = (i + MAX_CALL_LINES).min(all.len()).min(i + block.end - r.index);
                let code = Unit { r, line, code: line, lang: block.lang, maybe_source };
                unit(body, &mut state, &code, &all[i + 1..last], out);
            }
            Some(_) => {}
            None if !state.map.is_code(r.index) => {
                for span in blocks::inline_spans(line) {
                    let lang = blocks::guess(span);
                    if lang != Lang::Shell {
                        let span = Unit { r, line, code: span, lang, maybe_source: true };
                        unit(body, &mut state, &span, &[], out);
                    }
                }
            }
            None => {}
        }
    }
}

/// `line`, cut to [`MAX_LINE_BYTES`] at a character boundary.
fn cut(line: &str) -> &str {
    let mut end = line.len().min(MAX_LINE_BYTES);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

/// A line of code, or an inline span, where it is.
struct Unit<'a> {
    r: LineRef,
    /// The whole line.
    line: &'a str,
    /// The code: the line, or a span of it.
    code: &'a str,
    lang: Lang,
    /// Whether a source pattern matched somewhere on the line.
    maybe_source: bool,
}

/// One line (or inline span) of code: learns its assignments, reports a
/// sink it reaches. `next`: the lines after it in its block.
fn unit(
    body: &Body<'_>,
    state: &mut State<'_>,
    u: &Unit<'_>,
    next: &[(LineRef, &str)],
    out: &mut Vec<Finding>,
) {
    let Unit { r, line, code, lang, .. } = *u;
    // An object or a dict written over lines (`info = {` … `}`, or
    // `p = json.dumps({"u": u,` … `"t": t})`) is one assignment: what its
    // later lines read, the variable holds. Its brackets stay open at the
    // line's end, whatever the line ends with.
    let opened = code.contains('=') && balance(code) > 0 && assigned(code).is_some();
    let joined = opened.then(|| join_call(&strip(code, lang), code, next, lang).1);
    if let Some(joined) = &joined
        && sinks::find(&strip(code, lang), matches!(lang, Lang::PowerShell | Lang::Other)).is_none()
    {
        learn(state, joined, lang);
        return;
    }
    let source = if u.maybe_source { sources::find(code, lang) } else { None };
    let may_use_taint = state.tainted.iter().any(|t| mentions(code, &t.name))
        // A call left open may use a tainted variable on a later line.
        || balance(code) > 0 && !state.tainted.is_empty();
    if !u.maybe_source && !may_use_taint {
        // Nothing to follow here: only the handles and URLs a later flow
        // may use are learned, and only lines that can make one are parsed.
        // An assignment whose call chain goes on below may take a tainted
        // value there.
        let chain_below = next.first().is_some_and(|(_, l)| l.trim_start().starts_with('.'));
        let may_learn =
            code.contains('=') && (code.contains("://") || sinks::makes_handle(code) || chain_below);
        if may_learn {
            learn(state, code, lang);
        } else if !code.trim_start().starts_with('.') {
            state.last_assigned.clear();
        }
        return;
    }
    let view = strip(code, lang);
    let shell_like = matches!(lang, Lang::PowerShell | Lang::Other);
    let handle_call = state.handles.iter().any(|h| calls_on(&view, h));
    let sink = if handle_call || sinks::markup_request(&view, code) {
        Some(sinks::Kind::Network)
    } else {
        sinks::find(&view, shell_like)
    };

    if let Some(sink) = sink {
        // The call, joined with the lines it runs over.
        let (call_view, call_raw) = join_call(&view, code, next, lang);
        let reached: Vec<Tainted> =
            state.tainted.iter().filter(|t| mentions(&call_view, &t.name)).cloned().collect();
        // A keychain read through `subprocess` is a source, not a sink it reaches.
        // (The environment or a file named in a command is its payload.)
        let read_by_running =
            |k: sources::Kind| matches!(k, sources::Kind::Keychain | sources::Kind::Clipboard);
        // So is a CLI run to print its token or its store (`gh auth token`).
        let direct = source.filter(|(k, _)| {
            sink != sinks::Kind::Exec || !(read_by_running(*k) || sources::printed_by_cli(code))
        });
        if direct.is_some() || !reached.is_empty() {
            report(body, state, r, line, code, &call_view, &call_raw, sink, direct, &reached, out);
        }
    }

    learn(state, code, lang);
}

/// Learns what a line assigns: tainted variables, network handles and URL
/// hosts.
fn learn(state: &mut State<'_>, code: &str, lang: Lang) {
    let Some((names, rhs_at)) = assigned(code) else {
        chained(state, code);
        return;
    };
    state.last_assigned.clone_from(&names);
    let rhs_view = strip(&code[rhs_at..], lang);
    // A secret handed to a client as its credential (`OpenAI(api_key=k)`)
    // authenticates the client; what the client returns is not the secret.
    // In an object or dict literal (`{ token: … }`) a field's name says
    // nothing of where it goes, but headers are headers.
    let literal = rhs_view.trim_start().trim_start_matches('@').starts_with(['{', '[', '(']);
    let auth = regions(&rhs_view, if literal { &HEADER_FIELD } else { &HEADER });
    // A variable holding a credential file's path holds the file for
    // what follows (`p = Path.home() / ".aws" / "credentials"`).
    let rhs = &code[rhs_at..];
    let rhs_source = sources::find(rhs, lang)
        .or_else(|| sources::secret_path(rhs).map(|at| (sources::Kind::File, at)))
        .filter(|(_, at)| !auth.iter().any(|r| r.contains(at)));
    let carries =
        |t: &&Tainted| occurrences(&rhs_view, &t.name).iter().any(|at| !auth.iter().any(|r| r.contains(at)));
    let from: Vec<&Tainted> = state.tainted.iter().filter(carries).collect();
    // What a request returns is the server's answer, not what it was sent
    // (`res = await fetch(url)`: the call was the flow, reported there). A
    // request built to be sent later (`urllib.request.Request(u, data=k)`)
    // still carries it.
    let answer = sinks::network(&rhs_view)
        .is_some_and(|m| !code[rhs_at..].get(m).is_some_and(|call| call.contains("Request")));
    let taint = match (rhs_source, from.first()) {
        _ if answer => None,
        (Some((kind, _)), _) => {
            let env = sources::env_names(&code[rhs_at..]);
            Some(Tainted { name: String::new(), kind, env })
        }
        (None, Some(_)) => {
            let kind = from.iter().map(|t| t.kind).max_by_key(|k| rank(*k)).unwrap_or(sources::Kind::EnvVar);
            let env = from.iter().flat_map(|t| t.env.iter().cloned()).collect();
            Some(Tainted { name: String::new(), kind, env })
        }
        (None, None) => None,
    };
    let handle = sinks::makes_handle(&code[rhs_at..]);
    let host = URL
        .captures(&code.as_bytes()[rhs_at..])
        .and_then(|c| c.get(1))
        .map(|m| String::from_utf8_lossy(m.as_bytes()).to_ascii_lowercase());
    for name in names {
        if let Some(t) = &taint {
            state.tainted.retain(|x| x.name != name);
            let t = Tainted { name: name.clone(), ..t.clone() };
            remember(&mut state.tainted, t);
        }
        if handle {
            remember(&mut state.handles, name.clone());
        }
        if let Some(h) = &host {
            remember(&mut state.hosts, (name.clone(), h.clone()));
        }
    }
}

/// A line that goes on with the call chain of the assignment above
/// (`HttpRequest req = HttpRequest.newBuilder(u)` … `.POST(ofString(key))`):
/// a tainted variable it mentions taints what that assignment made.
fn chained(state: &mut State<'_>, code: &str) {
    if !code.trim_start().starts_with('.') || state.last_assigned.is_empty() {
        return;
    }
    let Some(t) = state.tainted.iter().find(|t| mentions(code, &t.name)).cloned() else {
        return;
    };
    for name in state.last_assigned.clone() {
        if !state.tainted.iter().any(|x| x.name == name) {
            remember(&mut state.tainted, Tainted { name, ..t.clone() });
        }
    }
}

/// How bad a source is to leak, for the kind a derived variable carries.
fn rank(kind: sources::Kind) -> u8 {
    u8::from(kind != sources::Kind::EnvVar)
}

/// The variables a line assigns, and where the assigned expression starts.
fn assigned(code: &str) -> Option<(Vec<String>, usize)> {
    if let Some(c) = ASSIGNMENT.captures(code.as_bytes()) {
        let all = c.get(0)?;
        let mut names = vec![String::from_utf8_lossy(c.get(1)?.as_bytes()).into_owned()];
        if let Some(more) = c.get(2) {
            for n in String::from_utf8_lossy(more.as_bytes()).split(',') {
                let n = n.trim().trim_start_matches('$');
                // `out, _ := …`: the blank identifier holds nothing.
                if !n.is_empty() && n != "_" {
                    names.push(n.to_string());
                }
            }
        }
        // The match ends one byte into the expression (`[^=~]`).
        let at = code[..all.end()].rfind('=').map_or(all.end(), |i| i + 1);
        return Some((names, at));
    }
    let c = WITH_AS.captures(code.as_bytes())?;
    let m = c.get(1).or_else(|| c.get(2))?;
    Some((vec![String::from_utf8_lossy(m.as_bytes()).into_owned()], 0))
}

/// Whether `view` calls a method on the handle `name` (`s.send(`).
fn calls_on(view: &str, name: &str) -> bool {
    let b = view.as_bytes();
    let mut from = 0;
    while let Some(k) = memchr::memmem::find(&b[from..], name.as_bytes()) {
        let at = from + k;
        let end = at + name.len();
        let before =
            at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_' || b[at - 1] == b'.');
        if before && b.get(end) == Some(&b'.') {
            let rest = &b[end + 1..];
            let ident = rest.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
            if ident > 0 && rest[ident..].iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'(') {
                return true;
            }
        }
        from = at + 1;
    }
    false
}

/// The call on a line, with the lines it runs over while brackets stay
/// open: (view, raw).
fn join_call(view: &str, code: &str, next: &[(LineRef, &str)], lang: Lang) -> (String, String) {
    let mut depth = balance(view);
    let (mut v, mut raw) = (view.to_string(), code.to_string());
    for &(_, l) in next {
        let l = cut(l);
        if depth <= 0 {
            break;
        }
        let lv = strip(l, lang);
        depth += balance(&lv);
        v.push(' ');
        v.push_str(&lv);
        raw.push(' ');
        raw.push_str(l);
    }
    (v, raw)
}

fn balance(view: &str) -> i32 {
    view.bytes().fold(0, |d, c| match c {
        b'(' | b'[' | b'{' => d + 1,
        b')' | b']' | b'}' => d - 1,
        _ => d,
    })
}

#[allow(clippy::too_many_arguments)]
fn report(
    body: &Body<'_>,
    state: &mut State<'_>,
    r: LineRef,
    line: &str,
    code: &str,
    call_view: &str,
    call_raw: &str,
    sink: sinks::Kind,
    direct: Option<(sources::Kind, usize)>,
    reached: &[Tainted],
    out: &mut Vec<Finding>,
) {
    let kinds: Vec<sources::Kind> =
        direct.map(|d| d.0).into_iter().chain(reached.iter().map(|t| t.kind)).collect();
    let only_env = kinds.iter().all(|k| *k == sources::Kind::EnvVar);
    let (id, category, severity) = match sink {
        sinks::Kind::Network => {
            let severity = if !only_env {
                Severity::Critical
            } else {
                let mut names: Vec<&str> = reached.iter().map(|t| t.name.as_str()).collect();
                let direct_env = direct.map(|_| sources::env_names(code)).unwrap_or_default();
                let read_at = direct.filter(|_| names.is_empty()).map(|(_, at)| at);
                if read_at.is_some() {
                    // The source is read inside the call: find it there, by
                    // its names or, when they are in a string the view
                    // blanks (`os.environ.get("KEY")`), where it is read.
                    names.extend(direct_env.iter().map(String::as_str));
                }
                let pos = position(call_view, &names, read_at);
                let env: Vec<String> = reached
                    .iter()
                    .flat_map(|t| t.env.iter().cloned())
                    .chain(direct_env.iter().cloned())
                    .collect();
                let mut known = Known { hosts: &state.hosts, named: &mut state.named, map: state.map };
                match pos {
                    Position::Header => Severity::Medium,
                    // The API's own key parameter, sent to the API the
                    // variable's name names (`?appid=` of
                    // `WEATHER_API_KEY`), authenticates as a header does;
                    // anywhere else a secret in a URL is what leaks.
                    Position::Url
                        if query_authenticates(call_view, call_raw, &names, read_at)
                            && documented_by(body, &mut known, call_view, call_raw, &env, false) =>
                    {
                        Severity::Medium
                    }
                    Position::Url => Severity::Critical,
                    Position::Body if documented(body, &mut known, call_view, call_raw, &env) => {
                        Severity::Medium
                    }
                    Position::Body => Severity::Critical,
                }
            };
            ("code.source-to-network", Category::Exfiltration, severity)
        }
        sinks::Kind::Exec if sinks::runs_network_program(call_raw) => {
            ("code.source-to-exec", Category::Exfiltration, Severity::Critical)
        }
        sinks::Kind::Exec => ("code.source-to-exec", Category::Exfiltration, Severity::Medium),
        // A clipboard manager keeps what was copied in a file of its own.
        sinks::Kind::File if kinds.iter().all(|k| *k == sources::Kind::Clipboard) => {
            ("code.source-to-file", Category::CredentialAccess, Severity::Medium)
        }
        sinks::Kind::File => ("code.source-to-file", Category::CredentialAccess, Severity::High),
        sinks::Kind::Output if only_env => {
            ("code.source-to-output", Category::CredentialAccess, Severity::Low)
        }
        sinks::Kind::Output => ("code.source-to-output", Category::CredentialAccess, Severity::Medium),
    };
    // "Never send `requests.post(u, data=os.environ[…])`" explains.
    let at = direct.map_or(0, |d| d.1) + (code.as_ptr() as usize).saturating_sub(line.as_ptr() as usize);
    let severity =
        if super::rescan::warned_before(line, code) { severity.min(Severity::Low) } else { severity };
    // Shown under a warning, as text, a flow is explained, as a sender is.
    let severity = body.unless_explained(severity, r, at..line.len());
    let line_no = r.index + 1;
    // One flow a line per category: a later one adds nothing unless it is
    // worse, and then it takes the place of its own rule's milder one
    // (a header first, the same secret in a URL after it).
    if out
        .iter()
        .any(|f| f.line == line_no && (f.rule_id == id || f.category == category) && f.severity >= severity)
    {
        return;
    }
    out.retain(|f| f.line != line_no || f.rule_id != id);
    out.push(finding(id, category, severity, r, line, at));
}

#[cfg(test)]
#[path = "flow_tests.rs"]
mod sweep_tests;
