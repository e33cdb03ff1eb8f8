//! Candidate features of *intent* (session 27), measured leave one writer
//! out before any is built into the scanner (`ECP_FEATURES=intent…`):
//! what the skill says it is for (its frontmatter `name` and
//! `description` and its first title, a few coarse kinds of purpose),
//! what its steps do (the rules' findings below the threshold, and the
//! behaviour marks of `variants.rs`, in code or prose), the crossing of
//! the two (a capability beside the purpose it is found under), where a
//! finding stands (a setup or troubleshooting section, a hidden place,
//! the last part of the body, code or prose) and in which voice
//! (an order to the agent, or a description for a reader).
//!
//! Parts, comma-separated after `intent`:
//! - `ipurpose`: the purpose kinds alone (shipped: `scan::classifier`'s
//!   own features read them since, so this counts them twice);
//! - `icross`: purpose × the family of each finding (and its category);
//! - `iunacc`: a finding's family that no purpose of the skill accounts
//!   for (a hand-made table: a prior, not learned), with its severity;
//! - `imarks`: purpose × each behaviour mark of the body;
//! - `ipos`: family × where its finding stands;
//! - `ivoice`: family × the voice of its line, and the body's share of
//!   lines that order the agent, in fifths.

use ecp_protocol::scan::{DEFAULT_THRESHOLD, Finding};

/// Coarse kinds of purpose and the words that say them: the scanner's own
/// (`scan::classifier`'s `purpose`).
use ecp_protocol::scan::classifier::PURPOSE_KINDS as PURPOSES;

/// The families each purpose accounts for: a finding of any other family
/// is a capability the stated purpose does not explain (`iunacc`).
fn accounts(purpose: &str, family: &str) -> bool {
    let ok: &[&str] = match purpose {
        "deploy" => &["priv", "secret", "cred", "supply", "trojan", "exec", "remote", "path", "control"],
        "install" => &["priv", "supply", "trojan", "exec", "remote", "path", "shell", "persist"],
        "security" => &[
            "priv",
            "secret",
            "cred",
            "exfil",
            "shell",
            "prompt",
            "instr",
            "code",
            "obfuscation",
            "unicode",
            "control",
            "tamper",
            "conceal",
            "exec",
            "remote",
            "persist",
            "supply",
            "trojan",
        ],
        "data" => &["sql", "secret", "cred"],
        "writing" => &[],
        "memory" => &["instr", "tamper"],
        "code" => &["exec", "code", "secret", "control", "trojan"],
        "ops" => &["priv", "path", "persist", "shell", "secret", "cred", "tamper", "exec", "remote"],
        "credentials" => &["cred", "secret", "priv"],
        "cleanup" => &["shell", "tamper", "path", "priv"],
        _ => &[],
    };
    ok.contains(&family)
}

/// The words of what the skill says it is for: the frontmatter's `name`
/// and `description`, and the first title.
fn purpose_words(body: &str) -> Vec<String> {
    let mut text = String::new();
    let mut lines = body.lines();
    let mut in_front = false;
    let mut first = true;
    let mut title = false;
    for line in lines.by_ref().take(60) {
        let t = line.trim();
        if first && t == "---" {
            in_front = true;
            first = false;
            continue;
        }
        first = false;
        if in_front {
            if t == "---" {
                in_front = false;
                continue;
            }
            for key in ["name:", "description:"] {
                if let Some(v) = t.strip_prefix(key) {
                    text.push(' ');
                    text.push_str(v);
                }
            }
        } else if !title && t.starts_with("# ") {
            text.push(' ');
            text.push_str(t);
            title = true;
        }
    }
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

pub(crate) fn purposes(body: &str) -> Vec<&'static str> {
    let words = purpose_words(body);
    let mut out: Vec<&'static str> = PURPOSES
        .iter()
        .filter(|(_, ws)| words.iter().any(|w| ws.contains(&w.as_str())))
        .map(|(p, _)| *p)
        .collect();
    if out.is_empty() {
        out.push("other");
    }
    out
}

/// Where each line stands: its section's kind, whether it is hidden (an
/// HTML comment), inside code, and in the last fifth of the body.
struct Place {
    section: &'static str,
    hidden: bool,
    code: bool,
}

fn section_kind(heading: &str) -> &'static str {
    let h = heading.to_ascii_lowercase();
    let any = |ws: &[&str]| ws.iter().any(|w| h.contains(w));
    if any(&["troubleshoot", "debug", "if it fails", "errors", "problem", "fix"]) {
        "troubleshoot"
    } else if any(&[
        "setup",
        "set up",
        "install",
        "prerequisite",
        "requirement",
        "getting started",
        "before you",
        "config",
    ]) {
        "setup"
    } else if any(&[
        "example", "sample", "avoid", "don't", "do not", "never", "anti", "warning", "red flag", "attack",
        "detect", "what not", "pitfall", "mistake", "why",
    ]) {
        "quoted"
    } else if any(&[
        "note",
        "appendix",
        "maintenance",
        "housekeeping",
        "telemetry",
        "sync",
        "after",
        "final",
        "wrap",
        "cleanup",
        "finish",
    ]) {
        "aside"
    } else if any(&["step", "usage", "workflow", "procedure", "how to", "instructions", "run"]) {
        "steps"
    } else {
        "other"
    }
}

fn places(body: &str) -> Vec<Place> {
    let mut out = Vec::new();
    let (mut section, mut hidden, mut code) = ("top", false, false);
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            code = !code;
        }
        if !code && t.starts_with('#') {
            section = section_kind(t.trim_start_matches('#'));
        }
        let opens = t.contains("<!--");
        let closes = t.contains("-->");
        out.push(Place { section, hidden: hidden || opens, code });
        if opens && !closes {
            hidden = true;
        }
        if closes {
            hidden = false;
        }
    }
    out
}

/// The voice of a line: `agent` (an order: it opens on a verb or speaks
/// to "you"/the agent), `reader` (it describes: an attacker, an example,
/// what a thing would do), `code`, or `plain`.
fn voice(line: &str, code: bool) -> &'static str {
    if code {
        return "code";
    }
    let l = line
        .trim_start()
        .trim_start_matches(|c: char| {
            c == '-' || c == '*' || c == '>' || c.is_ascii_digit() || c == '.' || c == ' '
        })
        .to_ascii_lowercase();
    let reader = [
        "attacker",
        "malicious",
        "example",
        "e.g.",
        "such as",
        "would",
        "might",
        "could",
        "for instance",
        "this skill",
        "a skill",
        "never ",
        "don't",
        "do not",
        "avoid",
        "warn",
        "refuse",
        "suspicious",
    ];
    if reader.iter().any(|w| l.contains(w)) {
        return "reader";
    }
    let verbs = [
        "run",
        "read",
        "send",
        "copy",
        "add",
        "write",
        "append",
        "upload",
        "post",
        "save",
        "store",
        "set",
        "open",
        "execute",
        "source",
        "call",
        "fetch",
        "download",
        "install",
        "include",
        "collect",
        "gather",
        "remember",
        "always",
        "from now",
        "make sure",
        "ensure",
        "remove",
        "delete",
        "disable",
        "skip",
        "export",
        "pipe",
        "attach",
        "forward",
        "report",
        "log",
        "keep",
        "update",
        "create",
        "put",
    ];
    let first = l.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or("");
    if verbs.contains(&first)
        || l.starts_with("from now")
        || l.starts_with("make sure")
        || l.contains(" you ")
        || l.starts_with("you ")
        || l.contains("the agent")
        || l.contains("assistant")
    {
        "agent"
    } else {
        "plain"
    }
}

fn counts(f: &Finding) -> bool {
    f.severity < DEFAULT_THRESHOLD && !f.rule_id.starts_with("classifier.")
}

fn family(f: &Finding) -> &str {
    f.rule_id.split_once('.').map_or(f.rule_id.as_str(), |(family, _)| family)
}

/// The named features of intent `parts` asks for.
pub(crate) fn features(parts: &[&str], body: &str, findings: &[Finding], marks: &[String]) -> Vec<String> {
    let has = |p: &str| parts.contains(&p);
    let purposes = purposes(body);
    let mut out = Vec::new();
    if has("ipurpose") {
        out.extend(purposes.iter().map(|p| format!("purpose:{p}")));
    }
    let counted: Vec<&Finding> = findings.iter().filter(|f| counts(f)).collect();
    if has("icross") {
        for f in &counted {
            for p in &purposes {
                out.push(format!("cross:{p}:{}", family(f)));
                out.push(format!("crosscat:{p}:{:?}", f.category));
            }
        }
    }
    if has("iunacc") {
        let mut n = 0;
        for f in &counted {
            if !purposes.iter().any(|p| accounts(p, family(f))) {
                out.push(format!("unacc:{}", family(f)));
                out.push(format!("unacc@{:?}", f.severity));
                n += 1;
            }
        }
        out.push(format!("unacc#{}", n.min(3)));
    }
    if has("imarks") {
        for m in marks.iter().filter(|m| m.contains('@')) {
            for p in &purposes {
                out.push(format!("pmark:{p}:{m}"));
            }
        }
    }
    let lines: Vec<&str> = body.lines().collect();
    if has("ipos") || has("ivoice") {
        let places = places(body);
        let n = lines.len().max(1);
        for f in &counted {
            let Some(place) = f.line.checked_sub(1).and_then(|i| places.get(i)) else { continue };
            let fam = family(f);
            if has("ipos") {
                out.push(format!("pos:{fam}:{}", place.section));
                out.push(format!("possev:{:?}:{}", f.severity, place.section));
                if place.hidden {
                    out.push(format!("hidden:{fam}"));
                }
                if f.line * 5 > n * 4 {
                    out.push(format!("last:{fam}"));
                }
                out.push(format!("in:{fam}:{}", if place.code { "code" } else { "prose" }));
            }
            if has("ivoice") {
                let v = voice(lines[f.line - 1], place.code);
                out.push(format!("voice:{fam}:{v}"));
                out.push(format!("voicesev:{:?}:{v}", f.severity));
            }
        }
        if has("ivoice") {
            let mut code = false;
            let (mut agent, mut prose) = (0usize, 0usize);
            for l in &lines {
                let t = l.trim_start();
                if t.starts_with("```") {
                    code = !code;
                    continue;
                }
                if code || t.is_empty() || t.starts_with('#') || t.starts_with("---") {
                    continue;
                }
                prose += 1;
                agent += usize::from(voice(l, false) == "agent");
            }
            out.push(format!("agentshare:{}", 5 * agent / prose.max(1)));
        }
    }
    out.sort();
    out.dedup();
    out
}
