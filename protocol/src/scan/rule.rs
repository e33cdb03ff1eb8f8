//! What a line rule is, and the helpers every rule family shares: regex
//! fragments, the "this line warns against it" test and excerpts; the
//! case-insensitive searches every gate uses are `rule/ci.rs`'s.
//!
//! A rule is data: an id, a category, a base severity, the trigger literals
//! the prefilter looks for, a regex confirmed on the triggering line, and an
//! optional `assess` function that reads the match in context and settles
//! the severity (or drops the match), and an optional `describe` function
//! that writes the finding's text when the match must not be shown (a
//! credential). The engine (`engine.rs`) owns the loop.

use std::ops::Range;
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::{Category, Severity};

mod ci;
pub(super) use ci::{AnyCi, contains_ci, contains_ci_after};

/// Reads one match in context; returns its severity, or `None` when the
/// context shows it is not a finding after all.
pub(super) type Assess = fn(&Hit<'_>) -> Option<Severity>;

/// Writes a finding's text from its match, for rules whose match must not
/// be shown (a credential): see [`Rule::describe`].
pub(super) type Describe = fn(&Hit<'_>) -> String;

/// One line rule, before compilation.
pub(super) struct Rule {
    /// Stable id, `family.name`.
    pub(super) id: &'static str,
    /// Family.
    pub(super) category: Category,
    /// Severity when `assess` does not say otherwise.
    pub(super) severity: Severity,
    /// Literals of which every match contains at least one (matched ASCII
    /// case-insensitively, a space matching any run of blanks). A trigger
    /// that starts with a letter or digit must start a word, and one that
    /// ends with a letter or digit must end one, so `post` fires neither on
    /// "compost" nor on "postgres"; a trailing `*` makes it a prefix
    /// (`instruction*` also fires on "instructions"), a leading `*` a part
    /// of a word (`*tpx.` fires on "httpx."), which keeps the prefilter from
    /// stopping at every common word a trigger starts with.
    pub(super) triggers: &'static [&'static str],
    /// Regex confirmed on the line; compiled case-insensitive and ASCII-only.
    pub(super) pattern: String,
    /// Context check; see [`Assess`].
    pub(super) assess: Option<Assess>,
    /// Whether a line that warns against the command ("never run …") lowers
    /// the finding to [`Severity::Low`]. Only for shell commands: a warning
    /// never excuses a prompt-injection or concealment phrase.
    pub(super) warnable: bool,
    /// Whether an explanatory context lowers a blocking finding to
    /// [`Severity::Low`]: the match is inert where it sits (quoted in a
    /// sentence, in a `text` block) and what governs it explains
    /// (`context.rs`). Every warnable rule is; a phrase rule may be too,
    /// for a phrase quoted as an example of an attack.
    pub(super) explainable: bool,
    /// How many following lines the match may run into. Prose wraps, so
    /// phrase rules look one line ahead; commands stay on their line.
    pub(super) span: u8,
    /// Literals (lower-case) of which the haystack must contain one before
    /// the regex runs: a cheap test that spares most regex runs on lines a
    /// common trigger word fired on. Searched ignoring ASCII case.
    pub(super) requires: &'static [&'static str],
    /// A cheaper or sharper test than `requires`, on the haystack as it is
    /// (it ignores ASCII case itself, as the regexes do).
    pub(super) gate: Option<fn(&str) -> bool>,
    /// The match is a trigger itself: no regex runs, the first trigger on
    /// the line is the match.
    pub(super) literal: bool,
    /// Writes the finding's text instead of an excerpt of the line: a rule
    /// that finds a credential says what it found without showing it.
    pub(super) describe: Option<Describe>,
}

impl Rule {
    /// A rule with no context check, not warnable, confined to its line.
    pub(super) fn new(
        id: &'static str,
        category: Category,
        severity: Severity,
        triggers: &'static [&'static str],
        pattern: impl Into<String>,
    ) -> Rule {
        Rule {
            id,
            category,
            severity,
            triggers,
            pattern: pattern.into(),
            assess: None,
            warnable: false,
            explainable: false,
            span: 0,
            requires: &[],
            gate: None,
            literal: false,
            describe: None,
        }
    }

    /// A rule whose triggers are the whole pattern (`pattern` is unused).
    pub(super) fn literal(
        id: &'static str,
        category: Category,
        severity: Severity,
        triggers: &'static [&'static str],
    ) -> Rule {
        Rule { literal: true, ..Rule::new(id, category, severity, triggers, "") }
    }

    /// Adds a test on the line; see [`Rule::gate`].
    pub(super) fn gate(mut self, f: fn(&str) -> bool) -> Rule {
        self.gate = Some(f);
        self
    }

    /// Requires one of `literals` in the haystack; see [`Rule::requires`].
    pub(super) fn requires(mut self, literals: &'static [&'static str]) -> Rule {
        self.requires = literals;
        self
    }

    /// Adds a context check.
    pub(super) fn assess(mut self, f: Assess) -> Rule {
        self.assess = Some(f);
        self
    }

    /// Lets a warning on the same line, or an explanatory context, lower
    /// the finding.
    pub(super) fn warnable(mut self) -> Rule {
        self.warnable = true;
        self.explainable = true;
        self
    }

    /// Lets an explanatory context lower the finding; see
    /// [`Rule::explainable`].
    pub(super) fn explainable(mut self) -> Rule {
        self.explainable = true;
        self
    }

    /// Writes the finding's text; see [`Rule::describe`].
    pub(super) fn describe(mut self, f: Describe) -> Rule {
        self.describe = Some(f);
        self
    }

    /// Lets the match run into the next `lines` lines.
    pub(super) fn span(mut self, lines: u8) -> Rule {
        self.span = lines;
        self
    }
}

/// One regex match handed to [`Assess`].
pub(super) struct Hit<'a> {
    /// The haystack the rule ran on: the line, plus continuation or span
    /// lines when the rule or the command asks for them.
    pub(super) hay: &'a str,
    /// Length of the first line inside `hay`.
    pub(super) line_len: usize,
    /// The match, as byte offsets into `hay`.
    pub(super) m: Range<usize>,
    /// The rule's base severity.
    pub(super) base: Severity,
}

impl<'a> Hit<'a> {
    /// The matched text (lossy at non-character boundaries, which only
    /// non-ASCII input can produce).
    pub(super) fn text(&self) -> &'a str {
        slice_lossy(self.hay, self.m.clone())
    }

    /// The first line of the haystack.
    ///
    /// Like the other views, it stops [`CONTEXT`] bytes from the match, so
    /// that many matches on one huge line still cost linear time.
    pub(super) fn line(&self) -> &'a str {
        let from = self.m.start.saturating_sub(CONTEXT);
        slice_lossy(self.hay, from..self.line_len.min(self.m.end + CONTEXT))
    }

    /// The haystack before the match.
    pub(super) fn before(&self) -> &'a str {
        slice_lossy(self.hay, self.m.start.saturating_sub(CONTEXT)..self.m.start)
    }

    /// The haystack from the start of the match.
    pub(super) fn tail(&self) -> &'a str {
        slice_lossy(self.hay, self.m.start..self.hay.len().min(self.m.end + CONTEXT))
    }

    /// The haystack after the match.
    pub(super) fn after(&self) -> &'a str {
        slice_lossy(self.hay, self.m.end..self.hay.len().min(self.m.end + CONTEXT))
    }
}

/// `s[r]`, widened to the nearest character boundaries so it never panics.
pub(super) fn slice_lossy(s: &str, r: Range<usize>) -> &str {
    let mut start = r.start.min(s.len());
    while !s.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = r.end.clamp(start, s.len());
    while !s.is_char_boundary(end) {
        end += 1;
    }
    &s[start..end]
}

/// Compiles a rule pattern the way every rule is compiled: ASCII-only
/// classes (fast DFA, no Unicode tables) and case-insensitive, because
/// attackers vary case.
pub(super) fn compile(pattern: &str) -> Regex {
    regex::bytes::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .build()
        .unwrap_or_else(|e| panic!("scan rule pattern does not compile: {e}\n{pattern}"))
}

/// A lazily compiled helper regex, for checks inside `assess` functions.
pub(super) type Lazy = LazyLock<Regex>;

/// Programs that read a script from standard input and run it.
pub(super) const SHELL: &str = r#"(?:(?:sudo|doas)\s+(?:-\S+\s+)*)?(?:env\s+(?:(?:-\S+|\w+=\S*)\s+)*)?(?:/usr/local/bin/|/usr/bin/|/bin/)?(?:(?:ba|da|z|k|c|tc|fi|mk|a)?sh\b|\$\{?shell\}?|source\s+/dev/stdin|\.\s+/dev/stdin|(?:python[0-9.]*|perl|ruby|node|php|pwsh|powershell)(?:\s+-)?\s*(?:$|[;&|)'"`]|\s#)|iex\b|invoke-expression\b)"#;

/// Commands that fetch a URL.
pub(super) const FETCH: &str = r"(?:curl|wget|fetch|aria2c|iwr|irm|invoke-webrequest|invoke-restmethod)";

/// A pipe (not `||`) into something that runs its input as code.
pub(super) fn pipe_into_shell() -> String {
    format!(r"(?:^|[^|])\|\s*{SHELL}")
}

/// Programs a pipe may feed a script to; see [`SHELL`].
const SHELL_WORDS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "csh",
    "tcsh",
    "fish",
    "ash",
    "mksh",
    "sudo",
    "doas",
    "env",
    "source",
    ".",
    "python",
    "perl",
    "ruby",
    "node",
    "php",
    "pwsh",
    "powershell",
    "iex",
    "invoke-expression",
    "$shell",
    "${shell}",
    "/bin/",
    "/usr/bin/",
    "/usr/local/bin/",
];

/// Whether some word of [`SHELL_WORDS`] starts with byte `b` (lower case):
/// most pipes (`| jq`, `| grep`, tables) fail this before any comparison.
static SHELL_FIRST: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < SHELL_WORDS.len() {
        t[SHELL_WORDS[i].as_bytes()[0] as usize] = true;
        i += 1;
    }
    t
};

/// Gate for pipe rules, ignoring ASCII case: some `|` (not `||`) is
/// followed by a program that runs its input. `| jq`, `| tee` and tables do
/// not pass.
pub(super) fn pipes_into_shell(line: &str) -> bool {
    let b = line.as_bytes();
    let mut from = 0;
    while let Some(i) = line[from..].find('|').map(|i| from + i) {
        // `|` is one byte, so the next search starts on a char boundary.
        from = i + 1;
        if b.get(i + 1) == Some(&b'|') || (i > 0 && b[i - 1] == b'|') {
            continue;
        }
        let rest = line[i + 1..].trim_start();
        let r = rest.as_bytes();
        if !r.first().is_some_and(|c| SHELL_FIRST[usize::from(c.to_ascii_lowercase())]) {
            continue;
        }
        let starts = |w: &str| r.len() >= w.len() && r[..w.len()].eq_ignore_ascii_case(w.as_bytes());
        // A word that matched is ASCII, so `w.len()` is a char boundary of `rest`.
        if SHELL_WORDS.iter().any(|w| {
            starts(w)
                && (w.ends_with('/')
                    || rest[w.len()..].chars().next().is_none_or(|c| !c.is_ascii_alphanumeric()))
                || w.starts_with("python") && starts("python")
        }) {
            return true;
        }
    }
    false
}

static WARNING: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:never|do\s+not|don'?t|avoid(?:ing)?|instead\s+of|rather\s+than|not\s+recommended|must\s+not|should\s+not|shouldn'?t|refuse\s+to|beware\s+of|warning|bad|wrong|dangerous|unsafe|insecure|anti-?pattern|flag|flags|detect|detects|block|blocks|reject|rejects|(?:look|scan|search|grep)\s+for|(?:lines?|patterns?|commands?)\s+like)\b",
    )
});

static NOT_A_WARNING: Lazy = LazyLock::new(|| {
    compile(r"^\s*(?:ever\s+)?(?:skip|forget|miss|omit|hesitate|wait|worry|bother|stop|fail)\b")
});

static CLAUSE_BREAK: Lazy = LazyLock::new(|| compile(r"[;!?]|\.\s|&&|\|\||\bthen\b|\bbut\b|\bhowever\b"));

/// Whether the text before a match, on the same line, warns against it:
/// "Never pipe `curl … | sh`", "# Don't: curl … | sh". The warning must be
/// in the same clause as the match, so "do not skip this step: curl … | sh"
/// or "don't worry; curl … | sh" are not warnings.
///
/// Reads at most the last [`CONTEXT`] bytes of `before` ([`clause_window`]):
/// each match on a line asks, so reading the whole text before it made a
/// long line of matches quadratic (1.3 s for `sudo rm -rf /` repeated on
/// one 64 KiB line, session 23).
pub(super) fn warned_against(before: &str) -> bool {
    let b = clause_window(before).as_bytes();
    let Some(w) = WARNING.find_iter(b).last() else {
        return false;
    };
    let rest = &b[w.end()..];
    if NOT_A_WARNING.is_match(rest) {
        return false;
    }
    if CLAUSE_BREAK.is_match(rest) {
        return false;
    }
    // A colon ends the clause, except right after the warning word ("Don't:").
    match rest.iter().position(|&c| c == b':') {
        None => true,
        Some(i) => {
            rest[..i].iter().all(|c| c.is_ascii_whitespace() || *c == b'*') && !rest[i + 1..].contains(&b':')
        }
    }
}

/// The end of `before` that [`warned_against`] reads: its last [`CONTEXT`]
/// bytes, from the first word that starts in them. A warning governs its
/// own clause, and a clause of prose is a few dozen words: a warning word
/// 512 bytes before a command, with no `;`, `. `, `then` or `but`
/// between, is not one a reader connects with it. Starting at a word keeps
/// a cut word ("unblock") from reading as a warning ("block").
pub(super) fn clause_window(before: &str) -> &str {
    if before.len() <= CONTEXT {
        return before;
    }
    let mut cut = before.len() - CONTEXT;
    while !before.is_char_boundary(cut) {
        cut += 1;
    }
    let tail = &before[cut..];
    if before.as_bytes()[cut - 1].is_ascii_whitespace() {
        return tail;
    }
    tail.find(char::is_whitespace).map_or("", |i| &tail[i..])
}

/// The whitespace-separated words of `line`, as `str::split_whitespace`
/// finds them, as bytes. An ASCII line is split on bytes, which spares
/// decoding characters; the ASCII bytes `char::is_whitespace` accepts are
/// exactly tab to carriage return and space.
pub(super) fn words(line: &str) -> impl Iterator<Item = &[u8]> {
    let ascii = line.is_ascii();
    let (bytes, text) = if ascii { (line.as_bytes(), "") } else { (&b""[..], line) };
    let by_byte = bytes.split(|&b| matches!(b, b'\t'..=b'\r' | b' ')).filter(|w| !w.is_empty());
    by_byte.chain(text.split_whitespace().map(str::as_bytes))
}

/// Whether a match in inline code on a wrapped prose line is warned against
/// by the end of the previous line: "Never pipe `curl` to `sh`; do not /
/// run `curl … | sh`". Code-block lines have no backticks before the
/// command, so a comment above a command never excuses it.
pub(super) fn warned_across_lines(previous: &str, before: &str) -> bool {
    // The window `warned_against` reads would hold nothing of the previous
    // line: the same question as on `before` alone, asked without counting
    // the backticks of a long line again for every match on it.
    if before.len() >= CONTEXT {
        return warned_against(before);
    }
    // A heading is a title, not the start of a wrapped sentence: "##
    // Warning: never on laptops" does not excuse the command below it.
    if before.bytes().filter(|&b| b == b'`').count() % 2 == 0 || previous.trim_start().starts_with('#') {
        return false;
    }
    let previous = slice_lossy(previous, previous.len().saturating_sub(CONTEXT)..previous.len());
    let tail = previous.rsplit(['.', ';', '!', '?']).next().unwrap_or(previous);
    let mut joined = String::with_capacity(tail.len() + before.len() + 1);
    joined.push_str(tail.trim_start_matches(['#', '-', '*', '>', ' ']));
    joined.push(' ');
    joined.push_str(before);
    warned_against(&joined)
}

/// At most this many characters of a line go into a finding.
pub(super) const EXCERPT_CHARS: usize = 80;

/// How far around a match its context reaches (bytes).
pub(super) const CONTEXT: usize = 512;

/// A short, trimmed excerpt of `line` around byte offset `at`, with every
/// credential on the line masked (see `secret::mask`): a finding of any
/// rule on a line holding a token must not carry the token.
///
/// A line of [`MASK_MEMO_BYTES`] or more is masked once for all the
/// findings on it: the analyzers' findings each ask, and masking runs
/// every secret pattern over the whole line (session 23 measured a long
/// line of matches at 0.4–1.9 s for 64 KiB, most of it here and in
/// [`warned_against`]). The next finding compares the line with the one
/// kept (a `memcmp`, tens of times cheaper than masking it again).
pub(super) fn excerpt(line: &str, at: usize) -> String {
    if line.len() < MASK_MEMO_BYTES {
        return excerpt_of_masked(&super::secret::mask(line), at);
    }
    MASKED.with(|memo| {
        let mut memo = memo.borrow_mut();
        if memo.0 != line {
            let masked = super::secret::mask(line).into_owned();
            *memo = (line.to_owned(), masked);
        }
        excerpt_of_masked(&memo.1, at)
    })
}

/// Lines at least this long keep their masked copy for the next finding
/// on them ([`excerpt`]): well above a line of prose or code (a typical
/// body's lines are under 200 bytes, so a typical scan never copies one),
/// well below a line long enough for its findings to add up.
const MASK_MEMO_BYTES: usize = 1024;

thread_local! {
    /// The last long line [`excerpt`] masked on this thread, and its
    /// masked copy. Holds at most two copies of one line of a body (the
    /// body's size limit bounds it).
    static MASKED: std::cell::RefCell<(String, String)> = const { std::cell::RefCell::new((String::new(), String::new())) };
}

/// [`excerpt`] of a line that [`super::secret::mask`] has masked already
/// (masking keeps every byte offset where it was).
pub(super) fn excerpt_of_masked(line: &str, at: usize) -> String {
    let line = line.trim_end_matches(['\r', '\n']);
    let lead = line.len() - line.trim_start().len();
    let line = line.trim();
    let at = at.saturating_sub(lead).min(line.len());
    if line.chars().count() <= EXCERPT_CHARS {
        return line.to_string();
    }
    // Start a little before the match so the command it belongs to shows.
    let mut start = at.saturating_sub(20);
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    let tail = &line[start..];
    let end = tail.char_indices().nth(EXCERPT_CHARS).map_or(tail.len(), |(i, _)| i);
    let out = tail[..end].trim();
    if out.is_empty() {
        line.chars().take(EXCERPT_CHARS).collect::<String>().trim().to_string()
    } else {
        out.to_string()
    }
}

#[cfg(test)]
mod tests;
