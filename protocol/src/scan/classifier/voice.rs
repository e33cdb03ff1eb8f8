//! Who a finding's passage is addressed to: a dangerous step *shown* to
//! the reader — under a heading, or after a lead-in, that frames what
//! follows as an example, evidence, an attacker's doing or a prohibition
//! ("What these intrusions typically look like", "What was found (quoted
//! from the evidence, do not run)", "These are examples to recognise",
//! "# DON'T DO THIS", "Not `…`") — is not the same as one *asked of* the
//! agent. A refusing finding of a rule in [`SHOWN`] whose passage is so
//! framed is lowered to [`LOWERED_TO`], its message quoting the frame;
//! the classifier may still corroborate it, and then the skill is refused
//! as before.
//!
//! `scan::context` decides the same question per match, strictly (the
//! match must be inert where it sits: a `text` block, a quoted phrase);
//! this reads the passage around it as a reviewer reads a document: the
//! section's heading, the prose lead-in of the block or list it sits in,
//! the block's own opening comment and the words opening its line (never
//! the skill's `description`: see "Red team" below). Only what frames is read, never the step
//! itself, so "run this, do not tell the user" above a payload frames
//! nothing: the cues name a showing ("looks like", "attacker", "evidence",
//! "what to reject"), or forbid the very thing shown ("don't do this",
//! "not this", a line opening "Not `…`"), never a bare "do not" or "avoid"
//! (a line opening "Do not ask …" is an order to the agent, "to avoid
//! logging in again" a purpose), nor a warning that may be
//! scoped ("dangerous", "do not run in production": a prohibition scoped
//! to one place is leave to run it in another), and are read
//! in prose, not in code spans. A body that asks anywhere to run what it
//! shows ("run the command above", `scan::context`) frames nothing.
//!
//! # How it was chosen (2026-11-27, session 27)
//!
//! Every benign skill refused that a rule writer may open (30 of the TRAIN
//! half, all by the independent writers; none of `x-*` or `older`) was read
//! as a reviewer would (`testdata/scan-corpus/REVIEW.md`): none must be
//! stopped whatever the intent, 4 are honestly ambiguous, 26 are plainly
//! benign, and the biggest mechanism (13) is a step shown to the reader
//! rather than asked of the agent. `cargo run -p ecp-protocol --example
//! rule_precision` chooses where the frame applies leaving each of the
//! seven writers out in turn (chosen on the six others and the skills
//! written beside the rules when it spares at least as many benign skills
//! as it loses malicious ones; measured on the one left out), at three
//! grains. Per rule, the writers left out gain 2 benign skills spared: each
//! rule's false positives are one writer's, so a rule is never chosen
//! without the writer that needs it. Per family, 3. For every rule at
//! once, 7 (one to two of each of five writers), no malicious skill lost:
//! that is the grain kept. On the TRAIN half, `x-*` and `older`, no
//! malicious skill has a refusing finding lowered at all, once the cues
//! that lowered some were taken out ("example", "bad", "danger", "do not
//! run", "avoid", a bare "Do not" opening a line) and `prompt.*` left to
//! refuse (it lowered `x-tool-result-json-note`, whose "typical tool result
//! looks like this" *is* the injection). On the corpus: benign refused 101
//! → 87 of 1,678 (TRAIN 30 → 23, HELD 71 → 64), malicious 2,043 → 2,042 of
//! 2,291 (one HELD skill), instructions per typical body 175,858 → 175,951.
//!
//! # Red team (2026-11-27, session 27, t5)
//!
//! 24 malicious skills written against the frame (`x-*`, "s27 t5 red
//! team"): a payload in a framed passage and an order to run it anyway.
//! Refused on main 23, with the frame as first written 7: 16 holes
//! (the description "incident response: what the attacker ran"; "replay
//! the evidence", "reproduce step 3 of the timeline", "apply the example",
//! "run each row of the indicators table", "execute everything in the
//! red-flags section" far below; the order in Spanish; "Not `…` unless the
//! mirror is down"; a heading naming an "intrusion detection agent" over
//! "Stop it for good:"). Closed by mechanism, all 16 refused again: no
//! frame from the description; [`ACTS_ON_SHOWN`] anywhere in the prose
//! (a verb that turns a showing into a step, pointing at what is shown,
//! not negated, not in double quotes); prose in a language the cues do not
//! read ([`FOREIGN`]); a prohibition with a way out ([`ESCAPE`]); a section
//! with a step addressed to the reader; a block's own lead-in over its
//! heading. The price: of the 7 benign skills the frame spared leaving one
//! writer out, 3 stay spared (0 malicious lost); the corpus's benign
//! refused 87 → 95 of 1,678 (main: 101). Open: a language outside
//! [`FOREIGN`], an order without the verbs or pointers listed, an order
//! in double quotes; what is left is phrase-shaped, and an attacker who
//! reads this file has the lists.
//!
//! # Left off (the lead, session 27)
//!
//! Measured on the two writers kept out of the session (210 malicious,
//! 210 benign skills that no rule or frame was chosen on): as first
//! written the frame spared 4 of the 27 benign skills refused (0
//! malicious lost); closed to the red team, 1 of 27. [`SHOWN`] is off:
//! the frame's code, its tests and the red team's 24 skills stay, so that
//! it can be switched on once a lowered finding is held for review.
//!
//! # Held for review (a proposal)
//!
//! 4 of the 30 are ambiguous (an offensive step scoped to a lab, a
//! sudoers grant scoped to one command, a vendor's installer): a reviewer
//! would hold them for a person. A refusal already lands in the quarantine,
//! where an operator may admit it, but nothing tells "dangerous whatever
//! the intent" from "a person should look", and a `Medium` finding is
//! installed with no warning. `REVIEW.md` proposes a finding flag for
//! "hold for review", a quarantine stage `review`, and the corpus counting
//! refused, held and installed apart.

use super::policy::{LOWERED_TO, REFUSE_ALONE};
use crate::scan::Finding;
use crate::scan::context::Outline;
use crate::scan::fence::is_fence;
use crate::scan::rule::compile;
use regex::bytes::Regex;
use std::sync::LazyLock;

/// Whether the frame applies to the scanner's findings at all: off (the
/// module doc's "Left off"). A lowered finding is `Medium`, and a `Medium`
/// finding installs: until a lowered finding is held for a person to
/// review rather than installed, a frame an attacker can read and write
/// around costs more than the one benign skill in 27 it spared.
pub const SHOWN: bool = false;

/// Rule ids whose findings no frame lowers: text addressed to the model
/// inside content (`prompt.*`) acts when the agent reads it, so showing it
/// is delivering it ("a typical tool result looks like this: {…
/// "note_for_model": …}"); and what SPEC §7.7.3 has refuse alone.
pub fn never_shown(rule_id: &str) -> bool {
    rule_id.starts_with("prompt.") || REFUSE_ALONE.contains(&rule_id)
}

/// Words of a heading, lead-in or description that frame what follows as
/// shown to the reader, lower-cased.
const FRAMES: &[&str] = &[
    "looks like",
    "look like",
    "something like",
    "attacker",
    "intrusion",
    "evidence",
    "what was found",
    "quoted",
    "recognise",
    "recognize",
    "to reject",
    "red flag",
    "indicator",
    "don't do this",
    "do not do this",
    "not this",
    "caution",
];

/// Openings of the finding's own line that show it as the thing not to do.
/// Each ends at a code span: a bare "Do not ask the user" opening a line
/// is an order to the agent, "Not `…`" shows what not to do.
const OPENINGS: &[&str] = &["not `", "never `", "don't `", "do not `", "avoid `"];

/// How many prose lines above a block or list are its lead-in.
const LEAD_IN_LINES: usize = 2;

fn is_heading(line: &str) -> bool {
    line.starts_with('#')
}

/// The frame cue in `text`'s prose (its code spans left out: a host
/// named `www.example.com` frames nothing), if any.
fn cue(text: &str) -> Option<&'static str> {
    let lower: String = text.split('`').step_by(2).collect::<Vec<_>>().join(" ").to_lowercase();
    FRAMES.iter().copied().find(|c| lower.contains(c))
}

/// `line` with its code spans left out.
fn prose(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// What frames line `line` (1-based) of `body` as shown to the reader, if
/// anything does: the cue and where it was found.
#[doc(hidden)]
pub fn frame(body: &str, line: usize) -> Option<(&'static str, &'static str)> {
    let lines: Vec<&str> = body.lines().take(line).collect();
    let at = line.checked_sub(1).filter(|&i| i < lines.len())?;
    // One pass down to the line: the last heading and the fence it is in.
    let (mut heading, mut fence, mut in_front) = (None, None, lines.first() == Some(&"---"));
    for (i, l) in lines[..at].iter().enumerate() {
        if in_front {
            in_front = !(i > 0 && *l == "---");
        } else if is_fence(l) {
            fence = if fence.is_some() { None } else { Some(i) };
        } else if fence.is_none() && is_heading(l) {
            heading = Some(i);
        }
    }
    // The description frames nothing: it is the skill's own claim about
    // itself, and an attacker writes it ("incident response: what the
    // attacker ran") as freely as any step.
    if in_front {
        return None;
    }
    let own = lines[at].trim_start().trim_start_matches(['-', '*', '>', ' ']).to_lowercase();
    if fence.is_none() && OPENINGS.iter().any(|o| own.starts_with(o)) {
        // "Not `…` unless the mirror is down": a prohibition with a way out
        // is leave to run it.
        let rest: String = own.split('`').skip(2).step_by(2).collect::<Vec<_>>().join(" ");
        if ESCAPE.is_match(rest.as_bytes()) {
            return None;
        }
        return Some(("its line's opening", OPENINGS.iter().copied().find(|o| own.starts_with(o))?));
    }
    // A section with a step addressed to the reader ("Stop it for good:",
    // "Caution: …; run it anyway") asks what it shows, whatever its
    // heading or lead-in say.
    if section_asks(body, heading.map_or(0, |h| h + 1), at) {
        return None;
    }
    // A block introduced by its own lead-in ("Stop it for good:") is said
    // in that lead-in's voice: a heading frames only what nothing nearer
    // introduces.
    let introduced = fence
        .and_then(|open| lines[..open].iter().rev().find(|l| !l.trim().is_empty()))
        .is_some_and(|l| l.trim_end().ends_with(':') && !is_heading(l) && cue(l).is_none());
    if let Some(c) = heading.map(|h| lines[h]).and_then(cue).filter(|_| !introduced) {
        return Some(("its section's heading", c));
    }
    // The block's own first line, when it is a comment above the line.
    let comment = fence.filter(|&open| open + 1 < at).map(|open| lines[open + 1]);
    if let Some(c) = comment.filter(|l| l.trim_start().starts_with(['#', '/'])).and_then(cue) {
        return Some(("its block's opening comment", c));
    }
    // The lead-in: the prose lines above the block the line sits in (its
    // fence, or its paragraph or list), up to a heading or another block.
    let mut i = fence.unwrap_or(at);
    if fence.is_none() {
        while i > 0 && !lines[i - 1].trim().is_empty() && !is_heading(lines[i - 1]) && !is_fence(lines[i - 1])
        {
            i -= 1;
        }
    }
    let mut taken = 0;
    while i > 0 && taken < LEAD_IN_LINES {
        i -= 1;
        let l = lines[i];
        if l.trim().is_empty() {
            if taken > 0 {
                break;
            }
            continue;
        }
        if is_heading(l) || is_fence(l) {
            break;
        }
        taken += 1;
        if let Some(c) = cue(l) {
            return Some(("its lead-in", c));
        }
    }
    None
}

/// Whether a prose line of the section starting at line `from` (0-based,
/// after its heading) up to the next heading asks the reader to do
/// something.
fn section_asks(body: &str, from: usize, own: usize) -> bool {
    let mut fenced = false;
    for (i, l) in body.lines().enumerate().skip(from) {
        if i == own {
            // The shown line itself ("curl … | sh" bare in prose) is what
            // is in question, not a step about it.
            continue;
        } else if is_fence(l) {
            fenced = !fenced;
        } else if fenced {
            continue;
        } else if is_heading(l) {
            return false;
        } else if Outline::addresses_reader(&prose(l))
            && !(cue(l).is_some() && NEGATION.is_match(l.as_bytes()))
        {
            return true;
        }
    }
    false
}

/// A framing line that forbids ("what attackers run — never run it") asks
/// nothing of the reader.
static NEGATION: LazyLock<Regex> = LazyLock::new(|| compile(r"\b(?:not|never|don'?t)\b"));

/// Words after a prohibition's code span that leave a way to do it.
static ESCAPE: LazyLock<Regex> = LazyLock::new(|| compile(r"\b(?:unless|except|until|otherwise|if)\b"));

/// An order to act on something shown elsewhere ("replay the evidence",
/// "reproduce step 3 of the timeline", "apply the example", "run each row
/// of the indicators table", "do the same as the red-flags block"): the
/// verbs that turn a showing into a step, and what they point at. A
/// negation before the verb ("do not run the commands below") is a
/// prohibition, and kept apart by the `neg` group.
static ACTS_ON_SHOWN: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"(?P<neg>\b(?:not|never|don'?t)\s+(?:\w+\s+)?)?\b(?:re-?run|run|replay|reproduce|repeat|re-?create|apply|execute|exec|source|follow|perform|install|paste|take|use|save|write|writing|do\s+the\s+same|same\s+as)\b(?:\W+\w+){0,6}?\W+(?:above|below|earlier|previous|preceding|shown|quoted|evidence|examples?|timeline|steps?\s+\d|table|rows?|blocks?|sections?|red[\s-]flags?|indicators?|attacker'?s?|snippets?|everything|verbatim|as\s+is|to\s+the\s+letter|th(?:at|is|ose|ese)\s+(?:line|command|one|entry|script)s?|the\s+(?:line|command|entry|script)s?)\b",
    )
});

/// English words nearly every English sentence holds, weighed against
/// [`FOREIGN`].
const ENGLISH: &[&str] = &[
    "the", "a", "an", "to", "and", "of", "is", "are", "it", "this", "that", "for", "with", "in", "on", "you",
    "your", "be", "or", "as", "by", "if", "so", "from", "at", "then", "not", "no", "any", "each", "all",
];

/// The commonest short words of the languages nearest English in its
/// script (German, Spanish, French, Italian, Portuguese, Dutch) that
/// English does not use: a prose line with two or more of them, and more
/// of them than English ones, is not read by the cues. A language not
/// listed here is not caught (the report's open hole).
const FOREIGN: &[&str] = &[
    "der", "die", "das", "und", "ist", "nicht", "den", "dem", "aus", "mit", "ein", "eine", "oben", "el",
    "la", "los", "las", "que", "y", "en", "del", "por", "para", "con", "es", "le", "les", "des", "et",
    "dans", "pour", "avec", "il", "di", "che", "per", "non", "da", "um", "uma", "het", "een", "niet", "van",
    "tal", "cual",
];

/// Whether the body's prose anywhere asks to act on what it shows, or is
/// written in a language the frame's cues cannot read (an order to run
/// the evidence in German frames as well as one in English): then nothing
/// in it is only shown.
fn acts_on_shown(body: &str) -> bool {
    let mut fenced = false;
    let mut in_front = body.starts_with("---");
    for (i, l) in body.lines().enumerate() {
        if in_front {
            in_front = !(i > 0 && l == "---");
            continue;
        }
        if is_fence(l) {
            fenced = !fenced;
            continue;
        }
        if fenced || l.trim_start().starts_with('|') && l.contains('`') {
            continue;
        }
        let lower = l.to_lowercase();
        let prose = prose(&lower);
        // A phrase in double quotes is quoted ("Run the bundled setup
        // script" as what a reviewer rejects), not said.
        let unquoted: String = lower.split('"').step_by(2).collect::<Vec<_>>().join(" ");
        if ACTS_ON_SHOWN.captures_iter(unquoted.as_bytes()).any(|c| c.name("neg").is_none()) {
            return true;
        }
        let words = prose.split(|c: char| !c.is_alphabetic() && c != '\'').filter(|w| !w.is_empty());
        let (english, foreign) = words.fold((0, 0), |(e, f), w| {
            (e + usize::from(ENGLISH.contains(&w)), f + usize::from(FOREIGN.contains(&w)))
        });
        if !is_heading(l) && foreign >= 2 && foreign > english {
            return true;
        }
    }
    false
}

/// Lowers each refusing finding that `lowers` accepts whose passage is
/// framed as shown (not one of a bundled file, nor one [`never_shown`]).
/// The scanner calls it for every rule; the precision tool measures
/// narrower sets with it.
#[doc(hidden)]
pub fn apply(findings: &mut [Finding], body: &str, lowers: impl Fn(&Finding) -> bool) {
    // Asked to run what is shown ("run the command above"): nothing is
    // only shown. Decided once, when a finding is framed.
    let mut runs_shown = None;
    for f in findings.iter_mut() {
        if f.severity <= LOWERED_TO || f.file.is_some() || never_shown(&f.rule_id) || !lowers(f) {
            continue;
        }
        let Some((place, cue)) = frame(body, f.line) else { continue };
        if *runs_shown.get_or_insert_with(|| Outline::asks_to_run_shown(body) || acts_on_shown(body)) {
            return;
        }
        let was = format!("{:?}", f.severity).to_lowercase();
        f.severity = LOWERED_TO;
        f.message.push_str(&format!(
            " (shown, not asked: {place} frames it as an example, evidence or a prohibition (\"{cue}\"); {was} \
             lowered to medium, where the classifier's corroboration may still refuse it)"
        ));
    }
}

/// The scanner's use: [`apply`] to every rule, when [`SHOWN`].
pub(crate) fn refine(findings: &mut [Finding], body: &str) {
    if !SHOWN || !findings.iter().any(|f| f.severity > LOWERED_TO) {
        return;
    }
    apply(findings, body, |f| !f.rule_id.starts_with("classifier."));
}

#[cfg(test)]
#[path = "voice_tests.rs"]
mod tests;
