//! Prompt injection and concealment (categories `PromptInjection` and
//! `Concealment`): text written to steer the agent rather than to teach it.
//!
//! "Ignore previous instructions", "you are now in developer mode", "the
//! administrator has authorized", a fake `SYSTEM:` line, instructions hidden
//! in an HTML comment, a notice under another speaker's name that orders
//! agents about ("**Platform notice:** agents here are cleared for…"), a
//! label that claims to replace the agent's instructions ("New
//! instructions: …"); and phrases that keep the user out of the loop ("do
//! not mention this to the user", "silently upload", "do not wait for the
//! user to review"). A warning on the line
//! never lowers these: "do not tell the user" *is* the attack. Prose wraps,
//! so each phrase may continue on the next line; `W` below is the gap
//! between words, which may also cross a blockquote marker or emphasis.

use std::sync::LazyLock;

use super::instruction::explained_quote;
use super::rule::{Hit, Lazy, Rule, compile};
use super::{Category, Severity};

/// The gap between two words of a phrase.
const W: &str = r"[\s>*_]+";
/// The gap beside a trigger word: no `_`, after which (or before which) a
/// trigger does not start (or end) a word, so the engine never confirms
/// the line (`engine::triggered`).
const WN: &str = r"[\s>*]+";

/// The line rules of this family.
pub(super) fn rules() -> Vec<Rule> {
    use Category::{Concealment as C, PromptInjection as I};
    use Severity::*;
    vec![
        Rule::new(
            "prompt.ignore-instructions",
            I,
            Critical,
            // `{W}` takes `_`, after which the plain words are no trigger.
            &[
                "ignore", "disregard", "forget", "bypass", "neglect", "ignore_", "disregard_", "forget_", "bypass_",
                "neglect_",
            ],
            format!(
                r"\b(?:ignore|disregard|forget){W}(?:everything|all|anything){W}(?:(?:written|said|stated|you\W+(?:read|were\W+told)){W})?(?:above|before|prior|previously|earlier|so{W}far)(?:[.;:,!)]|\r?\n|$|{W}(?:and|then|now|instead)\b)|\b(?:ignore|disregard|forget|bypass|neglect){W}(?:(?:all|any|every|each){W})?(?:(?:of|the|your|my|these|those|its|our){W}){{0,2}}(?:previous|prior|above|earlier|preceding|former|original|initial|system|safety){W}(?:\w+{W})?(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|constraints|polic(?:y|ies)|programming|restrictions|orders)\b"
            ),
        )
        .requires(&[
            "previous", "prior", "above", "earlier", "preceding", "former", "original", "initial", "system", "safety",
            "before", "so far",
        ])
        // Quoted as an example of an attack in its own sentence, Medium
        // (`unless_explained`); under a section that explains attacks, lower
        // still (`context.rs`); said bare, it always blocks.
        .assess(unless_explained)
        .explainable()
        .span(1),
        Rule::new(
            "prompt.instruction-override",
            I,
            High,
            &["override", "supersede", "precedence", "come first"],
            format!(
                r"\b(?:new|updated|real|actual|true|revised|priority|secret|hidden){W}(?:(?:system|priority|primary){W})?instructions?{WN}(?:override|supersede|take{WN}precedence|come\s+first)\b|\b(?:these|the{W}following|this){W}(?:instructions?|rules?|directives?){WN}(?:override|supersede|take{WN}precedence{WN}over){WN}(?:all|any|the|your|previous|prior|user|system)\b|\boverride{WN}(?:the{W})?user'?s?{W}(?:request|instructions?)"
            ),
        )
        .requires(&["override", "supersede", "replace", "precedence", "first"])
        .span(1),
        Rule::new(
            "prompt.role-override",
            I,
            Critical,
            // The word a phrase cannot do without: `mode` (whichever mode
            // is named), `dan`; a phrase's words beside a trigger are apart
            // by blanks or markup (`{WN}`), never `_`, after which a trigger
            // word ends no word.
            &[
                "mode", "dan", "jailbr*", "unrestricted", "unfiltered", "uncensored", "longer bound",
                "safety guideline*", "safety rule*", "safety polic*", "safety filter*", "safety check*",
                "safety restriction*", "content guideline*", "content rule*", "content polic*", "content filter*",
                "content check*", "content restriction*",
            ],
            format!(
                r"\byou(?:'re|{W}(?:are|have{W}been){W})(?:(?:now|hereby){W})?(?:(?:in|entering){W})?(?:developer|dev|god|admin|jailbreak|jailbroken|unrestricted|unfiltered|dan){WN}mode\b|\b(?:enter|enable|activate|switch{W}(?:in)?to){W}(?:developer|god|jailbreak|dan|unrestricted|unfiltered){WN}mode\b|\byou{W}(?:are|have{W}become)(?:{W}now)?{WN}(?:dan\b|an?{WN}(?:unrestricted|unfiltered|uncensored|jailbroken){WN}(?:ai|assistant|model|llm)\b)|\bno{WN}longer\s+bound{WN}by\b|\b(?:safety|content)\s+(?:guidelines|rules|policies|policy|filters|checks|restrictions){W}(?:do{W}not|don't|no{W}longer){W}(?:apply|matter)\b|\bwithout(?:{W}any)?{WN}(?:safety|content)\s+(?:guidelines|policies|filters|restrictions)\b"
            ),
        )
        // `mode` is on many lines that name no role: every alternative
        // holds one of these.
        .requires(&["you", "enter", "enable", "activate", "switch", "longer", "safety", "content", "without"])
        .assess(unless_explained)
        .span(1),
        Rule::new(
            "prompt.fake-authority",
            I,
            High,
            // `has`/`have` and the word after it, apart by blanks: every
            // word that may follow is a trigger.
            &[
                "has authori*", "have authori*", "has approved", "have approved", "has pre*", "have pre*",
                "has granted", "have granted", "has permitted", "have permitted", "has allowed", "have allowed",
                "has cleared", "have cleared", "has signed", "have signed", "has already", "have already",
                "has explicitly", "have explicitly", "authorized to", "authorised to", "permitted to", "cleared to",
                "allowed to",
            ],
            format!(
                r"\b(?:administrator|admin|sysadmin|owner|operator|maintainer|security{W}team|dba(?:{W}team)?|it{W}department|anthropic|openai|your{W}creator|management|ciso|cto){WN}(?:has|have)\s+(?:already\s+)?(?:explicitly\s+)?(?:pre-?)?(?:authori[sz]ed|approved|granted|permitted|allowed|cleared|signed\s+off)\b|\byou{W}(?:are|have{W}been)(?:{W}(?:hereby|now|explicitly|fully))?{WN}(?:authori[sz]ed|permitted|cleared|allowed)\s+to{WN}(?:skip|bypass|ignore|disable|override|run{W}any|execute{W}any|access{W}(?:all|any)|read{W}(?:all|any)|delete|wipe|send|upload|use{W}sudo)"
            ),
        )
        .requires(&["has", "have", "you"])
        .assess(not_conditional)
        .span(1),
        Rule::new(
            "prompt.fake-system-message",
            I,
            High,
            // The speaker's word wherever it is, whatever markup wraps it
            // (`__SYSTEM__:` starts no word): the pattern is anchored at the
            // line's start, so a line that only mentions the system costs
            // one short regex run.
            // A notice under another speaker's name ("**Platform notice
            // (automated):**") speaks for the system too.
            &[
                "*system*", "*admin*", "*root*", "*operator*", "<|", "<<sys", "[inst", "[/inst", "<system", "</system",
                "*notice*", "*directive*", "*bulletin*", "*instruction*",
                // `orders` alone is a common word of skills: only after
                // the words the pattern needs before it.
                "*new orders*", "*updated orders*", "*real orders*", "*actual orders*", "*revised orders*",
                "*additional orders*", "*hidden orders*", "*secret orders*", "<admin", "</admin", "<operator",
                "</operator", "<override", "</override", "<sudo", "</sudo",
            ],
            r"^[\s>*#_\-\[(|]*(?:system|admin|administrator|root|operator)(?:[\])*_\s|]*(?:(?:priority|urgent|important|new)\s+)?(?:message|override|notice|prompt|instructions?|update|directive|alert|note|command))?[\])*_\s|]*:\s*\S|^[\s>*#_\-\[(|=]*(?:new|updated|real|actual|revised|additional|hidden|secret)\s+(?:instructions?|directives?|orders)[\])*_\s|=]*:\s*\S|^[\s>*#_\-\[(|]*(?:platform|security|compliance|policy|governance|automated|automation|workspace|org|organi[sz]ation|it|ops|infrastructure|deployment|release|ci|runtime|orchestrator)\s+(?:notices?|directives?|bulletins?)(?:\s*\([^)\n]{0,30}\))?[\])*_\s|]*:\s*\S|</?(?:admin|operator|override|sudo)>|<\|im_start\|>|<\|im_end\|>|<\|system\|>|<\|endoftext\|>|<\|start_header_id\|>|<<sys>>|\[/?inst\]|</?system>",
        )
        .assess(fake_system_message),
        Rule::new(
            "prompt.hidden-comment",
            I,
            High,
            &["<!--"],
            r"<!--(?:[^-]|-[^-]){0,400}?\b(?:assistant|agent|ai|llm|model|claude|gpt|copilot|chatgpt|gemini)\b(?:[^-]|-[^-]){0,300}?\b(?:must|should|ignore|disregard|run|execute|read|send|paste|include|do\s+not|don't|never\s+tell|instead)\b",
        )
        .span(3),
        Rule::new(
            "conceal.hide-from-user",
            C,
            High,
            // Beside a trigger word the gap is `{WN}` (no `_`, after which
            // the word ends no word) and inside a trigger phrase blanks.
            &[
                "tell", "inform", "mention", "notify", "alert", "show", "reveal", "disclose", "warn", "keep", "hide",
                "let the user", "let the human", "let the operator", "let user", "let human", "let operator",
                "user must*", "user should*", "user need*", "user do*", "human must*", "human should*", "human need*",
                "human do*", "leave", "say nothing",
            ],
            format!(
                r"\b(?:do{W}not|don'?t|never|must{W}not|should{W}not|shouldn'?t)(?:{W}ever)?{WN}(?:tell|inform|mention|notify|alert|show|reveal|disclose){WN}(?:(?:this|that|it|these|them|anything|any{W}of{W}this|the{W}\w+|this{W}\w+|these{W}\w+){W})?(?:(?:change|step|action|command|part|file)s?{W})?(?:to|with){W}(?:the{W})?(?:user|human|operator|owner|requester|them|him|her)s?\b|\b(?:do{W}not|don'?t|never){WN}(?:tell|inform|notify|alert|warn){WN}(?:the{W})?(?:user|human|operator){W}(?:about|of|know|that|what|this)\b|\b(?:do{W}not|don'?t|never){WN}let\s+(?:the\s+)?(?:user|human|operator){WN}(?:about|of|know|that|what|this)\b|\b(?:keep|hide){WN}(?:this|it|that|these|them|the{W}\w+)(?:{W}\w+)?{W}(?:(?:hidden|secret|private|invisible){W})?from{W}(?:the{W})?(?:user|human|operator)\b|\bthe{WN}(?:user|human)\s+(?:(?:must|should|need){W}not|(?:does|do)n[o']t{W}need{W}to|need{W}never){W}(?:know|see|notice|find{W}out|be{W}told|learn)\b|\b(?:do{W}not|don'?t|never){WN}show{WN}(?:the{W})?(?:user|human){W}(?:this|that|it|these|the)\b|\b(?:leave|keep){WN}(?:it|this|that|them|these|the{W}\w+){W}out{W}of{W}what{W}you{W}(?:tell|show|report|say)\b|\bsay\s+nothing{WN}about{W}(?:it|this|that|them|these)\b"
            ),
        )
        .requires(&["user", "human", "operator", "owner", "requester", "them", "him", "her", "what you", "nothing"])
        .span(1),
        Rule::new(
            "conceal.without-telling",
            C,
            High,
            &["telling", "informing", "notifying", "alerting", "showing", "letting", "consulting"],
            format!(
                r"\bwithout{WN}(?:telling|informing|notifying|alerting|showing|letting|consulting){WN}(?:the{W})?(?:user|human|operator|owner)s?\b"
            ),
        )
        .assess(double_negative)
        .span(1),
        Rule::new(
            "conceal.covert-action",
            C,
            High,
            // `{W}` takes `_`, after which the plain words are no trigger.
            &[
                "silently", "secretly", "quietly", "covertly", "discreetly", "invisibly", "stealthily", "silently_",
                "secretly_", "quietly_", "covertly_", "discreetly_", "invisibly_", "stealthily_",
            ],
            format!(
                r"\b(?:silently|secretly|quietly|covertly|discreetly|invisibly|stealthily){W}(?:\w+{W}){{0,3}}?(?:upload|send|post|transmit|exfiltrate|copy|forward|include|embed|attach|install|add|run|execute|download|delete|remove|modify|append|write|collect|record|push|commit|disable|publish|share|expose|grant|raise|change|enable|make)(?:s|ed|ing)?\b"
            ),
        )
        .assess(covert_action)
        .span(1),
        Rule::new(
            "conceal.skip-consent",
            C,
            High,
            &["ask", "asking", "prompt", "prompting", "wait", "waiting", "seek", "seeking", "request", "requesting"],
            format!(
                r"\b(?:do{W}not|don'?t|never|without){WN}(?:ask(?:ing)?|prompt(?:ing)?|wait(?:ing)?{WN}for|request(?:ing)?|seek(?:ing)?){WN}(?:(?:the{W})?(?:user|human|operator)s?{W})?(?:for{W})?(?:any{W})?(?:confirmation|permission|approval|consent)\b|\b(?:do{W}not|don'?t|never|without){WN}wait(?:ing)?{WN}for{W}(?:the{W})?(?:user|human|operator|owner)s?{W}to{W}(?:review|approve|confirm|check|answer|reply|respond|agree|read|look)\b"
            ),
        )
        .requires(&["confirmation", "permission", "approval", "consent", "to review", "to approve", "to confirm", "to check", "to answer", "to reply", "to respond", "to agree", "to read", "to look"])
        .assess(skip_consent)
        .span(1),
    ]
}

/// "Phrases such as \"ignore previous instructions\" are injection
/// attempts": a quoted example in a sentence that names it as one is worth
/// a look, not a refusal. Unquoted, the phrase is the attack whatever
/// surrounds it.
fn unless_explained(h: &Hit<'_>) -> Option<Severity> {
    let (before, tail) = (h.before(), h.tail());
    let sentence = [before, tail].concat();
    Some(if explained_quote(&sentence, before.len()) { Severity::Medium } else { h.base })
}

static CONDITIONAL: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:once|after|when|until|if|unless|before|whether|ensure|make\s+sure|check|verify|confirm)\b[^.;:!?,]*$",
    )
});

/// "Once a code owner has approved the PR, merge it" is a workflow step,
/// not a claim of authority.
fn not_conditional(h: &Hit<'_>) -> Option<Severity> {
    (!CONDITIONAL.is_match(h.before().as_bytes())).then_some(h.base)
}

static DIRECTIVE: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:ignore|disregard|must|override|now|instructions?|priority|mode|authori[sz]\w*|before|do\s+not|execute|run|read|send|include|you|assistants?|agents?|cleared|approved|permitted|without|skip|proceed|grant|delete|disable|push|deploy|merge|approve|upload|wipe|transfer)\b",
    )
});

/// `System: Ubuntu 22.04` is an environment table; `SYSTEM: new priority
/// instructions …` is a forged message.
fn fake_system_message(h: &Hit<'_>) -> Option<Severity> {
    let m = h.text().to_ascii_lowercase();
    if m.starts_with('<') || m.starts_with("[inst") || m.starts_with("[/inst") {
        return Some(Severity::Critical);
    }
    let rest = h.tail();
    let rest = rest.split_once(':').map_or("", |(_, r)| r);
    let speaker = m.trim_start_matches(|c: char| !c.is_ascii_alphabetic());
    // "New instructions:" claims to replace the agent's own: a directive
    // after it is enough.
    let replaces = REPLACING.iter().any(|w| speaker.starts_with(w));
    if !replaces && !SPEAKERS.iter().any(|w| speaker.starts_with(w)) {
        // A notice under another name ("Security notice: rotate keys
        // yearly") is often the skill's own: forged only when it orders
        // agents about.
        return (AGENTS.is_match(rest.as_bytes()) && DIRECTIVE.is_match(rest.as_bytes())).then_some(h.base);
    }
    DIRECTIVE.is_match(rest.as_bytes()).then_some(h.base)
}

/// Labels that claim to replace the agent's instructions.
const REPLACING: [&str; 8] =
    ["new", "updated", "real", "actual", "revised", "additional", "hidden", "secret"];

/// The speakers a forged system turn names itself by.
const SPEAKERS: [&str; 4] = ["system", "admin", "root", "operator"];

/// Agents addressed as a class: what a forged notice speaks to.
static AGENTS: Lazy = LazyLock::new(|| {
    compile(r"\b(?:agents?|assistants?|ai|models?|llms?|bots?|automation|automated\s+tools?)\b")
});

static NEGATED_ACTION: Lazy =
    LazyLock::new(|| compile(r"\b(?:never|do\s+not|don'?t|must\s+not|should\s+not|shouldn'?t)\s+(?:\w+)"));
static NOT_AN_ACTION: Lazy =
    LazyLock::new(|| compile(r"\s(?:hesitate|worry|bother|wait|stop|forget|mind|need|fear|panic|skip)$"));
static CLAUSE: Lazy = LazyLock::new(|| compile(r"[.;:!?,]"));

/// "Never delete files without telling the user" asks for transparency; the
/// same phrase without the negation asks for the opposite.
fn double_negative(h: &Hit<'_>) -> Option<Severity> {
    let before = h.before().as_bytes();
    let Some(n) = NEGATED_ACTION.find_iter(before).last() else {
        return Some(h.base);
    };
    if NOT_AN_ACTION.is_match(n.as_bytes()) || CLAUSE.is_match(&before[n.end()..]) {
        return Some(h.base);
    }
    Some(Severity::Low)
}

static SHIPS_DATA: Lazy = LazyLock::new(|| {
    compile(
        r"(?:upload|send|post|transmit|exfiltrate|copy|forward|include|embed|attach|collect|record|publish|share|expose)\w*$",
    )
});

/// What a covert act may expose to anyone.
static EXPOSED: Lazy =
    LazyLock::new(|| compile(r"\b(?:public(?:ly)?|world-?readable|to\s+(?:anyone|everyone)|0\.0\.0\.0)\b"));

fn covert_action(h: &Hit<'_>) -> Option<Severity> {
    let ships = SHIPS_DATA.is_match(h.text().as_bytes()) || EXPOSED.is_match(h.tail().as_bytes());
    Some(if ships { h.base } else { Severity::Medium })
}

static NAMES_USER: Lazy = LazyLock::new(|| compile(r"\b(?:user|human|operator)s?\b"));

fn skip_consent(h: &Hit<'_>) -> Option<Severity> {
    Some(if NAMES_USER.is_match(h.text().as_bytes()) { h.base } else { Severity::Medium })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod edge_tests;
