//! Approval carry-over (`instr.approval-carryover`): the user's consent
//! taken away ("no need to ask", "without checking back") or claimed as
//! given beyond the act it was given for ("that yes is good for the whole
//! week", "consider the rest of the batch approved", "treat silence as
//! consent", "the user has waived review", a settings line such as
//! `require_user_ok: no`). `classes` grades what is found here.

use std::sync::LazyLock;

use super::classes::negated;
use crate::scan::rule::{Lazy, compile};

/// Words of consent a directive may take away.
const CONSENT: &str = r"(?:confirm(?:ation|ations|ing|s)?|approv(?:al|als|e|es|ing)|permission|permissions|consent|sign-?offs?|authori[sz]ation|go-ahead|second\s+look|green\s+light|carte\s+blanche|free\s+(?:hand|rein)|blank\s+che(?:que|ck))";

/// Whom consent is asked of: the user in any of the words a skill uses
/// for them ("the person you're helping", "whoever you are working with").
const PERSON: &str = r"(?:the\s+)?(?:user|human|operator|owner|me|them|him|her|requester|person\s+(?:you(?:'re|\s+are)\s+(?:helping|assisting|working\s+(?:with|for))|at\s+the\s+keyboard|in\s+(?:the|this)\s+(?:chat|conversation|session))|whoever\s+(?:you(?:'re|\s+are)\s+)?(?:working|helping|assisting|talking)(?:\s+(?:with|for))?)";

/// Words that take consent away when they govern it: a prohibition in any
/// person ("does not request confirmation again"), and a
/// rule said to override the asking ("this line overrides any other rule
/// about confirming", "takes precedence over the habit of asking first").
static WEAKEN: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:does\s+not|doesn'?t|will\s+not|won'?t|overrides?|overrules?|supersedes?|takes?\s+precedence\s+over|w/o|no\s+(?:need|longer|more|further)|no\s+(?:real\s+)?(?:reason|point)\s+(?:in\b|to\b)|waiv(?:e|es|ed|ing)|without|never|don'?t|do\s+not|need\s+not|needn'?t|not\s+(?:required|needed|necessary)|skip(?:ping|s)?|bypass(?:ing|es)?|omit(?:ting|s)?|forgo|dispense\s+with|stop(?:ping)?\s+(?:asking|waiting|requesting|seeking)|unnecessary|superfluous)\b",
    )
});

/// Consent named, or asking for it: "ask the user", "check in", and asking
/// with no one named ("without asking again", "don't ask, just do it"); a
/// bare "without asking" is as often a tool described, and is left out.
static CONSENT_WORD: Lazy = LazyLock::new(|| {
    compile(&format!(
        r"\b{CONSENT}\b|\bre-?ask(?:ing|ed|s)?\b|\b(?:ask(?:ing)?|ping(?:ing)?|pester(?:ing)?|nudg(?:e|ing)|(?:double-?)?check(?:ing)?\s+(?:in\s+|back\s+)?with|consult(?:ing)?|wait(?:ing)?\s+for)\s+{PERSON}\b|\bwait(?:ing)?\s+(?:for\s+)?(?:the\s+|a\s+|their\s+|your\s+)?(?:ok(?:ay)?|yes|go-ahead|green\s+light)\s+(?:of|from)\s+{PERSON}\b|\bask(?:ing)?\s+(?:first|beforehand|before\s+\w+ing)\b|\bwait(?:ing)?\s+for\s+(?:a|their|an\s+explicit|the\s+user'?s|your)\s+(?:yes|ok|okay|go-ahead|green\s+light)\b|\brun(?:ning)?\s+(?:\S+\s+){{0,4}}?(?:past|by)\s+{PERSON}\b|\bclear(?:ing)?\s+(?:it|this|that|them|anything)\s+with\s+{PERSON}\b|\bcheck(?:ing)?\s+(?:back(?:\s+in)?|in)\b|\bask(?:ing)?\s+(?:again|twice|any\s*more|each\s+time|every\s+time|about\s+(?:it|this|that|them|these))\b|\bask(?:ing)?\s+(?:anyone|anybody)\s*(?:[,;:.!)]|$|first\b|before\b)|\bask\s*[,;:.!-]+\s*(?:just|simply|go\s+ahead|proceed|do\s+it|act)\b|\b(?:come|get|go)\s+back\s+to\s+{PERSON}\b|\b(?:a|any)\s+question\s+(?:in\s+between|first|each\s+time|every\s+time)\b|\b(?:rout|send|pass|refer|escalat|forward)\w*\s+(?:it|them|this|that|the\s+\w+)\s+(?:on\s+)?to\s+(?:an?\s+|the\s+|their\s+)?(?:approvers?|(?:resource\s+)?owners?|managers?|reviewers?)\b|\bprompts?\s+(?:is|are|will\s+be|gets?)\s+(?:shown|displayed|given|raised|asked)\b"
    ))
});

/// Consent said to be given already, or in advance, or once for all.
static GIVEN: Lazy = LazyLock::new(|| {
    compile(&format!(
        r"\bpre-?(?:cleared|vetted|sanctioned|okayed)\b|\b(?:already|pre-?|implicitly|blanket|standing|automatic|automatically|in\s+advance|permanently|once\s+and\s+for\s+all)\s*(?:been\s+|given\s+|granted\s+|(?:has|have)\s+)?(?:approv\w*|authori[sz]\w*|granted|consented|confirmed|agreed|signed\s+off)\b|\bassume\s+(?:that\s+)?(?:the\s+)?(?:user|they|the\s+owner)\s+(?:agrees?|approves?|consents?|said\s+yes|is\s+fine|wants)\b|\b(?:blanket|standing|permanent|unlimited|full)\s+{CONSENT}\b|\b(?:treat|consider|regard|take|count)\s+(?:\S+\s+){{0,4}}?(?:agreement|approval|yes|consent|permission|confirmation|go-ahead|ok|okay)\s+as\s+(?:lasting|standing|permanent|general|blanket|ongoing|covering|applying|valid\s+(?:for|from)|a\s+(?:standing|general|blanket|permanent|lasting))\b|\b(?:agreement|approval|yes|consent|permission|confirmation|go-ahead)\s+(?:carries\s+over|stays\s+valid|remains\s+valid|holds\s+for|applies\s+to\s+(?:all|every|later|future|similar|any))\b|\b(?:agreement|approval|yes|consent|permission|confirmation|go-ahead|ok(?:ay)?|say-?so|sign-?off)\s+(?:\w+\s+){{0,3}}?(?:covers|counts\s+for|is\s+enough\s+for|stands\s+for|extends\s+to|carries\s+(?:over\s+)?(?:to|into))\s+(?:all|every|each|any|later|future|subsequent|the\s+rest)\b|\balready\s+(?:said\s+yes|okayed|ok'?d|gave\s+(?:the\s+|their\s+)?(?:go-ahead|ok(?:ay)?))\b|\b(?:approved|authori[sz]ed|pre-?approved|accepted|okayed)\s+by\s+default\b|\b{CONSENT}\s+(?:is|are)\s+(?:not|no\s+longer|never)\s+(?:needed|required|necessary)\b|\bhold\s+on\s+to\s+(?:that|the|this|your|their)\s+(?:yes|ok(?:ay)?|{CONSENT})\b|\b(?:yes|ok(?:ay)?|{CONSENT})\b(?:\s+\S+){{0,8}}?\s+(?:reused|re-used|carried\s+over|applied\s+again)\s+(?:for|on|across|to|in)\s+(?:every|all|each|any|later|future|the\s+rest|subsequent)\b|\b(?:treat|consider|regard|take|count)\s+(?:it|this|that|them|such\s+\w+|the\s+\w+)\s+as\s+(?:the\s+user'?s|their|his|her|your\s+user'?s|the\s+owner'?s)\s+(?:own\s+)?(?:yes|ok(?:ay)?|approval|consent|go-ahead|sign-?off|agreement)\b|\bcounts?\s+for\s+(?:the\s+user|the\s+owner|them)\b"
    ))
});

/// Consent said to reach past the act it was given for, in the words
/// `GIVEN` does not read: waived, agreed already, regarded as given, a
/// yes "good for the whole week", silence taken as a yes, steps that
/// "already carry their sign-off".
static EXTENDED: Lazy = LazyLock::new(|| {
    compile(&format!(
        r"\bwaiv(?:e|es|ed|ing)\b(?:\s+\S+){{0,3}}?\s+(?:(?:code\s+)?reviews?|questions?|{CONSENT}|checks?|prompts?|the\s+(?:need|requirement)\s+(?:for|to))\b|\b(?:approved|authori[sz]ed|accepted|okayed|cleared|confirmed)\s+(?:automatically|in\s+advance|up\s*front|ahead\s+of\s+time|once\s+and\s+for\s+all)\b|\b(?:is|are)\s+(?:already\s+)?agreeing\b|\bagrees?\s+already\b|\balready\s+agrees?\b|\b{CONSENT}\s+(?:is|are)\s+(?:to\s+be\s+)?(?:regarded|considered|treated|taken|deemed|assumed)\s+(?:as\s+|to\s+(?:have\s+been|be)\s+)?(?:given|granted|received|obtained|implied|settled|satisfied)\b|\b(?:deemed|assumed)\s+(?:approved|given|granted|confirmed|accepted|agreed)\b|\b(?:yes|ok(?:ay)?|{CONSENT}|agreement|say-?so)\s+(?:\w+\s+){{0,2}}?(?:is|stays|remains|holds|will\s+be)\s+(?:good|valid|in\s+force|in\s+effect|enough|fine)\s+(?:for|through|until|across|on)\s+(?:the\s+(?:whole|entire|rest|remainder)|all|every|each|any|later|future|the\s+(?:week|month|day|year|sprint|quarter|project))\b|\b(?:treat|take|count|read|interpret|consider|regard)\s+(?:silence|(?:a\s+)?(?:lack|absence)\s+of\s+(?:an?\s+)?(?:answer|reply|response|objections?)|no\s+(?:answer|reply|response|objections?))\s+as\s+(?:an?\s+|their\s+)?(?:yes|ok(?:ay)?|{CONSENT}|agreement)\b|\b(?:already\s+)?(?:carry|carries|bear|bears)\s+(?:their|the\s+user'?s|the\s+owner'?s|the\s+team'?s|your\s+user'?s|the\s+maintainers?'?s?|the\s+lead'?s)\s+(?:{CONSENT}|blessing|ok(?:ay)?)\b|\b(?:you\s+(?:have|get|hold)|(?:is|are)\s+given|(?:has|have)\s+given\s+you)\s+(?:a\s+|the\s+|full\s+|standing\s+)?{CONSENT}\s+(?:for|to|on|over)\s+(?:do(?:ing)?\s+)?(?:anything|everything|all|any|every|whatever)\b|\b(?:has|have)\s+(?:already\s+)?(?:approved|signed\s+off\s+on|okayed|cleared|authori[sz]ed|pre-?approved)\s+(?:everything|anything|all\s+(?:of\s+)?(?:the|them|these|those)?|every)\b|\b(?:approved|signed\s+off\s+on|okayed|cleared|authori[sz]ed)\s+(?:\S+\s+){{0,6}}?(?:ahead\s+of\s+time|in\s+advance|up\s*front|beforehand)\b|\b(?:after|once|following|with)\s+(?:your|the|their|a|his|her|one)\s+(?:first|initial|single|one)\s+(?:ok(?:ay)?|yes|{CONSENT}|agreement)\b[^.;]{{0,80}}?\b(?:(?:for|on|to)\s+(?:all|every|each|any)\s+(?:\w+\s+)?(?:later|future|subsequent|other|following|next)|(?:all|every|each|any)\s+(?:later|future|subsequent|following|next)\b)|\balready\s+(?:have|has|come\s+with|comes\s+with)\s+(?:their|the\s+user'?s|the\s+owner'?s|the\s+team'?s|your\s+user'?s)\s+(?:{CONSENT}|blessing|ok(?:ay)?)\b"
    ))
});

/// A settings line that switches asking off, in prose the agent reads
/// ("Confirmations: off", `require_user_ok: no`, `auto_approve: true`).
static SETTING: Lazy = LazyLock::new(|| {
    compile(
        r#"(?:^|[\s`'"(\[])[\w.-]*(?:confirm|approv|ask|prompt|consent|user_?ok|permission|interactive)[\w.-]*\s*[:=|]\s*["'`]?(?:false|no|0|off|never|none|skip|disabled?)\b|(?:^|[\s`'"(\[])[\w.-]*(?:auto_?approve|auto_?accept|auto_?confirm|yolo|skip_?(?:confirm|review|permission|prompt)\w*|dangerously\w*)\s*[:=|]\s*["'`]?(?:true|yes|1|on|all|always)\b"#,
    )
});

/// "Consider every command pre-approved", "consider the rest of the
/// batch, and any batch this month, approved": consent claimed for what
/// the object names, however far the object reaches.
static EXTENT: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:consider|treat|regard|assume)\s+(?:\S+\s+){0,8}?(?:as\s+)?(?:already\s+)?(?:pre-?)?(?:approved|authori[sz]ed|confirmed|consented|accepted|cleared)\b|\b(?:consider|treat|regard|deem|mark)\s+(?:the\s+rest|all|every|any|each|everything|anything|them|those|these)\b[^.;:]{0,100}?\s(?:as\s+)?(?:already\s+)?(?:pre-?)?(?:approved|authori[sz]ed|confirmed|accepted|cleared|okayed)\b",
    )
});

/// Words before the consent that make it a requirement rather than a
/// claim: "consider all the changes that need to be approved".
static REQUIRED_BEFORE: Lazy =
    LazyLock::new(|| compile(r"\b(?:be|been|being|is|are|was|were|get|gets|got|not|un)\s*$"));

/// The cheap test: whether any of this module's own patterns may match.
static MAY: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:waiv|agreeing|signed\s+off|ahead\s+of\s+time|beforehand|in\s+advance|up\s*front|(?:take|treat|count|read)\s+(?:that|this|it)\s+as|green\s+light|carte|free\s+(?:hand|rein)|second\s+look|you\s+(?:have|get|hold)\s+(?:a\s+|the\s+|full\s+)?(?:green|carte|free|clearance|permission|approval|consent)|has\s+given\s+you|agrees?\s+already|already\s+agrees?|deemed|silence|blessing|sign-?off|approv|confirm|consent|permission|authori[sz]|okayed|accepted|cleared|(?:yes|ok(?:ay)?)\s+(?:\w+\s+){0,2}?(?:is|stays|remains|holds|will\s+be)\s+(?:good|valid|fine|enough|in\s+(?:force|effect)))|(?:confirm|approv|ask|prompt|consent|user_?ok|permission|interactive|auto_?approve|auto_?accept|yolo|skip_?|dangerously)[\w.-]*\s*[:=|]|\b(?:first|initial|single|one)\s+(?:ok|yes|approv|confirm|go-ahead|consent|sign-?off)|unsure|not\s+sure|in\s+doubt|carry\s+(?:them|it|those|these)\s+out|w/o|(?:come|get|go)\s+back\s+to|question\s+in\s+between|first\s+question|hold\s+on\s+to|reused|re-used|carried\s+over|as\s+their|as\s+the\s+user'?s|counts?\s+for|approvers?|prompts?\s+(?:is|are|will|gets?)",
    )
});

/// Whether a sentence may hold consent carried over in this module's words.
pub(super) fn may(s: &str) -> bool {
    MAY.is_match(s.as_bytes())
}

/// Where consent is stretched over a quantified object, if it is.
fn extent_at(s: &str) -> Option<usize> {
    EXTENT.find_iter(s.as_bytes()).find_map(|m| {
        let text = &s[m.start()..m.end()];
        let word = text.rfind(|c: char| c.is_whitespace()).map_or(0, |i| i + 1);
        (!REQUIRED_BEFORE.is_match(&text.as_bytes()[..word])).then_some(m.start())
    })
}

/// An earlier word of the user's taken as consent for more: "take that as
/// permission for deleting the keys too".
static TAKEN_AS: Lazy = LazyLock::new(|| {
    compile(&format!(
        r"\b(?:take|treat|count|read|interpret|consider|regard)\s+(?:that|this|it|those\s+words|the\s+(?:earlier|same)\s+\w+)\s+as\s+(?:a\s+|your\s+|their\s+)?(?:standing\s+|blanket\s+|general\s+)?{CONSENT}\s+(?:for|to)\b"
    ))
});

/// What reaches past the act the word was given for: "too", "as well",
/// "now and whenever…".
static MORE: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:too|also|as\s+well|now\s+and|whenever|every|everything|anything|all\s+(?:the|other|later|future))\b",
    )
});

/// Where an earlier word is taken as consent for more than it was said
/// for; "if they answer yes, take that as permission to delete the
/// listed files" keeps to the act asked about.
fn stretched_at(s: &str) -> Option<usize> {
    let m = TAKEN_AS.find(s.as_bytes())?;
    MORE.is_match(&s.as_bytes()[m.end()..]).then_some(m.start())
}

/// Consent said to be given before the act it covers.
static IN_ADVANCE: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:ahead\s+of\s+time|in\s+advance|up\s*front|beforehand|pre-?(?:approved|cleared|authori[sz]ed))\b",
    )
});

/// Whether the sentence says consent was given before the act: like a
/// scope past the task, it is the attack, asked or stated.
pub(super) fn in_advance(s: &str) -> bool {
    IN_ADVANCE.is_match(s.as_bytes())
}

/// "If you are unsure whether to ask the user, don't": the doubt about
/// asking answered with no (group `no`).
static UNSURE_THEN_NOT: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:unsure|not\s+sure|in\s+doubt|wondering|hesitating)\s+(?:about\s+)?(?:whether|if)\s+(?:to\s+|you\s+should\s+|you\s+need\s+to\s+)?(?:ask|check|confirm|consult|wait|run\s+it\s+past|clear\s+it)\b[^.;]{0,80}?,\s*(?P<no>don'?t|do\s+not|no|skip\s+it|just\s+(?:act|proceed|go\s+ahead))\b",
    )
});

/// Where the doubt about asking is answered with no.
fn unsure_then_not_at(s: &str) -> Option<usize> {
    UNSURE_THEN_NOT.captures(s.as_bytes()).and_then(|c| c.name("no")).map(|m| m.start())
}

/// Where a settings line switches asking off, if one does.
pub(super) fn setting_at(s: &str) -> Option<usize> {
    SETTING
        .find_iter(s.as_bytes())
        .find(|m| !keeps_asking(m.as_bytes()))
        .map(|m| m.start() + usize::from(!m.as_bytes()[0].is_ascii_alphanumeric()))
}

/// Whether a matched setting names the switch that turns asking *off*
/// and sets it off (`auto_approve: false`, `skip_confirm = no`): two
/// negatives, so asking stays on. `SETTING` reads any approval-like key
/// set to "no" as asking switched off, which these keys invert.
fn keeps_asking(setting: &[u8]) -> bool {
    let Some(split) = setting.iter().position(|&b| matches!(b, b':' | b'=' | b'|')) else {
        return false;
    };
    let (key, value) = setting.split_at(split);
    let key = key.to_ascii_lowercase();
    let inverted = ["auto", "yolo", "skip", "dangerous", "bypass", "disable", "no_", "no-"]
        .iter()
        .any(|w| key.windows(w.len()).any(|k| k == w.as_bytes()));
    let value = value[1..].trim_ascii_start();
    let value = match value.first() {
        Some(b'"' | b'\'' | b'`') => &value[1..],
        _ => value,
    };
    let negative = ["false", "no", "0", "off", "never", "none", "skip", "disable"]
        .iter()
        .any(|w| value.len() >= w.len() && value[..w.len()].eq_ignore_ascii_case(w.as_bytes()));
    inverted && negative
}

/// A prohibition ("never", "don't") as the word that governs consent.
static PROHIBITS: Lazy =
    LazyLock::new(|| compile(r"^(?:never|don'?t|do\s+not|does\s+not|doesn'?t|will\s+not|won'?t)\b"));

/// Nothing but adverbs between a prohibition and the asking it governs.
static ONLY_ADVERBS: Lazy =
    LazyLock::new(|| compile(r"^\s*(?:(?:ever|even|really|again|bother\s+to|need\s+to|have\s+to)\s+)*$"));

/// A prohibition whose verb is the asking itself ("never ask for
/// approval", "don't wait for a confirmation"): it takes consent away.
/// Any other verb forbids the act and keeps consent as it is ("never set
/// the approval policy to `never`", "do not assume permission").
static PROHIBITS_ASKING: Lazy = LazyLock::new(|| {
    compile(
        r"^(?:never|don'?t|do\s+not|does\s+not|doesn'?t|will\s+not|won'?t)\s+(?:(?:ever|even|really|bother\s+to|need\s+to|have\s+to)\s+)?(?:re-?ask|ask|wait|seek|request|get|obtain|need|bother|worry|stop|pause|block|hold|require|prompt|look\s+for|check|go\s+through|re-?confirm|confirm|trouble|interrupt|ping|make|let|have|force)\b",
    )
});

/// A third-person negation of a program halting ("does not stop to ask",
/// "won't prompt for confirmation"): what a flag does to a tool.
static PROGRAM_HALTS: Lazy = LazyLock::new(|| {
    compile(
        r"^(?:does\s+not|doesn'?t|will\s+not|won'?t)\s+(?:stop|pause|block|hold|halt|interrupt|prompt|hang)\b",
    )
});

/// The offset of consent taken away or claimed in advance, if any; `None`
/// when every such cue is negated ("never merge without approval").
pub(super) fn approval_carryover(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    for m in CONSENT_WORD.find_iter(b) {
        // `-auto-approve`, `--no-confirm`: a flag named, not consent.
        if m.start() > 0 && matches!(b[m.start() - 1], b'-' | b'_') {
            continue;
        }
        let clause_start = s[..m.start()].rfind([',', ';', ':', '(']).map_or(0, |i| i + 1);
        let window = &s[clause_start..m.start()];
        // The weakening word must be close to the consent it governs.
        if window.split_whitespace().count() > 9 {
            let words: Vec<&str> = window.split_whitespace().collect();
            let near = words[words.len() - 9..].join(" ");
            if !WEAKEN.is_match(near.as_bytes()) {
                continue;
            }
        }
        let Some(w) = WEAKEN.find_iter(window.as_bytes()).last() else {
            continue;
        };
        let at = clause_start + w.start();
        // "never merge without approval", "do not skip the confirmation".
        if negated(s, at) {
            continue;
        }
        // "never record approvals as preferences", "do not assume
        // permission": a prohibition that keeps consent as it is.
        // The prohibition next to the asking ("don't run it past the
        // user", "never wait for a yes") takes the asking away.
        let governing = &b[clause_start + w.start()..m.end()];
        if PROHIBITS.is_match(governing)
            && !PROHIBITS_ASKING.is_match(governing)
            && !ONLY_ADVERBS.is_match(&window.as_bytes()[w.end()..])
        {
            continue;
        }
        // "so apt does not stop to ask for confirmation": a program that
        // does not halt on its own prompt, not the agent's asking.
        if PROGRAM_HALTS.is_match(governing) {
            continue;
        }
        return Some(at);
    }
    GIVEN
        .find(b)
        .or_else(|| EXTENDED.find(b))
        .map(|m| m.start())
        .or_else(|| extent_at(s))
        .or_else(|| stretched_at(s))
        .or_else(|| unsure_then_not_at(s))
        .or_else(|| setting_at(s))
}
