//! Literals decoded at run time, decoded here and scanned again as what
//! they decode to (`code.decoded-payload`): base64 (PowerShell's
//! `-EncodedCommand` as UTF-16), hex strings and `\x..` escapes,
//! `String.fromCharCode(…)`, `chr(…)+chr(…)`, `[char]…+[char]…`; base64
//! that is compressed is inflated, and serialized code read for its
//! strings (`unpack`). Only
//! literals of at least [`MIN_ENCODED`] characters that decode to text
//! are looked at, and at most [`MAX_DECODED`] bytes of each. A URL hidden
//! so is `code.decoded-url`: High when the line sends or runs something
//! (or a line of the rest of its code block sends), Medium otherwise.

use std::sync::LazyLock;

use super::{rescan, unpack};
use crate::scan::Category;
use crate::scan::engine::{Body, LineRef, finding};
use crate::scan::fence::{fence, is_fence};
use crate::scan::rule::{Lazy, compile, contains_ci};
use crate::scan::secret::base64url;
use crate::scan::{Finding, Severity};

/// Encoded characters a literal has at least.
const MIN_ENCODED: usize = 16;
/// Bytes of a decoded literal scanned, at most.
const MAX_DECODED: usize = 4096;
/// Literals decoded and scanned per body, at most: each costs a scan.
const MAX_LITERALS: usize = 32;
/// Lines above a decoding call searched for the literal it decodes.
const LOOKBACK_LINES: usize = 10;

/// Decoding calls and encoded-literal syntax; they wake the analyzer.
/// Triggers of other families but two (`fromcharcode` and `chr(`, whose
/// keys the table has or nearly has): see `sources::TRIGGERS`.
pub(super) const TRIGGERS: &[&str] = &[
    "base64",
    "b64decode",
    "atob",
    "frombase64string",
    "fromcharcode",
    "fromhex",
    "unhexlify",
    "powershell",
    "pwsh",
    "\\x*",
    "chr(",
    "xxd",
    "rev",
    "b32decode",
    "base32",
    // Char codes turned into text one by one: C, Java and C#'s casts,
    // Go's conversions, Ruby's `.chr`, Python's `ord`, JavaScript's
    // `charCodeAt`.
    "(char)",
    "buffer.from",
    "rune(",
    ".chr",
    "ord(",
    "charcodeat",
    // Letters rotated: Python's codec, `tr`'s ranges.
    "rot13",
    "rot_13",
    "n-za-m",
    // Other languages' decoders: Ruby's, Perl's, PHP's, Go's, Java's, Rust's.
    "decode64",
    "decode_base64",
    "hex2bin",
    "decodestring",
    "getdecoder",
    "hex::decode",
    "\"h*\"",
    "'h*'",
    // A literal that is base64 of a URL or a command line, wherever it
    // sits (prose, inline code, any fence) and whatever decodes it: the
    // base64 of `http`, `curl ` and `bash ` at the literal's start (the
    // prefilter's table has room for no more keys; `ENCODED_START` reads
    // more on a line one of these woke).
    "ahr0c*",
    "y3vybc*",
    "ymfzac*",
];

/// Base64 literals whose first bytes decode to a URL or a command line
/// (the encoded triggers above, case as base64 writes them): decoded on
/// any line, with no decoding call in sight.
static ENCODED_START: Lazy = LazyLock::new(|| {
    compile(
        r"(?-i:(?:^|[^A-Za-z0-9+/])(?:aHR0c|Y3VybC|d2dldC|YmFzaC|L2Jpbi|cG93ZXJzaGVsbC|c2ggL|cHl0aG9u|cm0gL|Y2F0IH4)[A-Za-z0-9+/_-]{8,})",
    )
});
/// Prose that sends somewhere: a URL hidden on such a line is where.
static SENDS_IN_PROSE: Lazy = LazyLock::new(|| {
    compile(r"\b(?:send|post|upload|report|forward|submit|push|sync|beacon|ping|exfil)\w*\b")
});

static BASE64: Lazy = LazyLock::new(|| compile(r"[a-z0-9+/_-]{16,}={0,2}"));
/// A quoted base32 literal (RFC 4648 alphabet, upper case), on a line that
/// decodes base32.
static BASE32: Lazy = LazyLock::new(|| compile(r#"["'](?-i:([A-Z2-7]{16,})=*)["']"#));
static ESCAPES: Lazy = LazyLock::new(|| compile(r"(?:\\x[0-9a-f]{2}){4,}"));
static HEX: Lazy = LazyLock::new(|| compile(r#"["']((?:[0-9a-f]{2}){8,})["']"#));
/// A hex word standing alone (`echo 6375… | xxd -r -p`), on a line that
/// decodes hex.
static BARE_HEX: Lazy = LazyLock::new(|| compile(r#"(?:^|[\s=(])((?:[0-9a-f]{2}){8,})(?:$|[\s;|)])"#));
/// A literal piped through `rev` (`echo 'hs | …' | rev | sh`).
static REVERSED: Lazy = LazyLock::new(|| compile(r#"["']([^"'\n]{16,})["']\s*\|\s*rev\b"#));
static CHAR_CODES: Lazy = LazyLock::new(|| {
    compile(
        r"fromcharcode\s*\(([\d\s,]+)\)|(?:\bchr\s*\(\s*\d+\s*\)\s*\+?\s*){4,}|(?:\[char\]\s*\(?\s*\d+\s*\)?\s*[+,]?\s*){4,}|\[char\[\]\]\s*@?\(\s*[\d\s,]+\)",
    )
});
static NUMBER: Lazy = LazyLock::new(|| compile(r"\d+"));
/// A list of small integers in any language's brackets (`[104, 116, …]`,
/// `{104,116,…}`, `@(104,116,…)`): char codes, as they are or under a
/// key the code applies to each (`c ^ k`, `c + 1`), however the code
/// turns them into text (`(char)c`, `String.fromCharCode`, `chr`).
static INT_LIST: Lazy = LazyLock::new(|| compile(r"[\[{(]\s*(\d{1,3}(?:\s*,\s*\d{1,3}){5,})\s*,?\s*[\]})]"));
/// Values of a list decoded as they are, at least: a shorter list is
/// read only under a key, as a URL or a command line.
const MIN_PLAIN_VALUES: usize = 8;
/// A string literal whose characters code may transform one by one.
static STRING_LITERAL: Lazy = LazyLock::new(|| compile(r#""([^"\\\n]{8,})"|'([^'\\\n]{8,})'"#));
/// Code that transforms each character of a string by its code
/// (`chr(ord(c) ^ 5)`, `s.charCodeAt(i) - 1`, `[char]([int]$c + 1)`):
/// the literals it reads are tried under a key.
static PER_CHAR: Lazy = LazyLock::new(|| {
    compile(
        r"\bord\s*\(\s*\w+\s*\)\s*[-+^]|\.charcodeat\s*\([^)]*\)\s*[-+^]|\[int\]\s*\$?\w+\s*[-+^]|[-+^]\s*\w+\s*\)\s*for\s+\w+\s+in\b",
    )
});
/// A line that decodes at run time (not one that only encodes).
static DECODES: Lazy = LazyLock::new(|| {
    compile(
        r#"\bbase(?:64|32)\s+(?:-\S+\s+)*(?:-d|--decode|-D)\b|\|\s*rev\b|b64decode|b32decode|\bbase32\.decode|\batob\s*\(|frombase64string|fromhex|unhexlify|\bxxd\s+(?:-\S+\s+)*-r|fromcharcode|\bchr\s*\(|\[char\]|\[char\[\]\]|\bbuffer\.from\s*\([^)]*["'](?:base64|base64url|hex)["']|-e(?:nc(?:odedcommand)?|c)?\s+[a-z0-9+/]{16}|\\x[0-9a-f]{2}|\]\s*\.map\s*\([^\n]*\^|\^\s*\w+\s*\)\s*for\s+\w+\s+in\s*\[|\(\s*char\s*\)|\bstring\s*\(\s*(?:rune|byte)\s*\(|\.chr\b|\bord\s*\(\s*\w+\s*\)\s*[-+^]|\.charcodeat\s*\([^)]*\)\s*[-+^]|\brot[_-]?13\b|n-za-m|(?:powershell|pwsh)[^\n]*\s-e(?:nc(?:odedcommand)?|c)?\s+\$\w|\bdecode64\b|\bdecode_base64\b|\bbase64_decode\s*\(|\bhex2bin\s*\(|\bdecodestring\s*\(|\bgetdecoder\s*\(\s*\)\s*\.\s*decode\b|\bhex::decode\b|\bpack\s*\(?\s*["']h\*["']|\ba2b_base64\b|\bdecodebytes\b"#,
    )
});
/// Code that inflates raw deflate, which has no magic to know it by.
static RAW_DEFLATE: Lazy =
    LazyLock::new(|| compile(r"\bgzinflate\b|\binflateraw|-\s*(?:15|zlib\.max_wbits)\b"));
/// Code that loads serialized code or objects: what it decodes is binary
/// whose strings say what it does.
static SERIALIZED: Lazy = LazyLock::new(|| compile(r"\b(?:marshal|c?pickle|dill)\.loads?\b"));
/// Letters rotated by 13: Python's codec, `tr`'s ranges.
static ROT13: Lazy = LazyLock::new(|| compile(r"\brot[_-]?13\b|n-za-m"));
/// .NET's UTF-16LE decoder (`[Text.Encoding]::Unicode.GetString(…)`):
/// the base64 it is handed is wide text, as an encoded command's is.
static WIDE_TEXT: Lazy = LazyLock::new(|| compile(r"\bunicode\s*\]?\s*(?:::|\.)\s*getstring\b"));
/// PowerShell's encoded command given as a variable (`-Enc $e`).
static ENCODED_VARIABLE: Lazy =
    LazyLock::new(|| compile(r"(?:powershell|pwsh)[^\n]*\s-e(?:nc(?:odedcommand)?|c)?\s+\$\w+"));
/// A shell variable assigned what a command substitution prints.
static SUBSTITUTED: Lazy = LazyLock::new(|| compile(r#"\b[a-z_]\w*=["']?(?:\$\(|`)"#));
/// PowerShell's encoded command flag: its base64 is UTF-16LE.
static ENCODED_COMMAND: Lazy =
    LazyLock::new(|| compile(r"(?:powershell|pwsh)[^\n]*\s-e(?:nc(?:odedcommand)?|c)?\s+([a-z0-9+/=]{16,})"));
/// Lines of a PowerShell block searched for char arrays.
const POWERSHELL_BLOCK_LINES: usize = 60;
/// Lines after a decoding line searched for the call that uses its result.
const USE_LINES: usize = 5;
/// Lines of the rest of its code block searched for a network call, when
/// none is within [`USE_LINES`]: a destination hidden at the top of a
/// file is used further down.
const BLOCK_LINES: usize = 40;
/// Network calls beyond [`USES`]: an image beacon, Go's and Ruby's and
/// Swift's clients, a raw socket.
static SENDS: Lazy = LazyLock::new(|| {
    compile(
        r"\.src\s*=|\bsendbeacon\b|\bnew\s+image\b|\bhttp\.(?:get|post|newrequest)\b|\bnet::http\b|\burlsession\b|\bnet\.dial\b|\bsocket\b|\bhttpclient\b",
    )
});
/// A line that sends or runs what it decodes.
static USES: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:curl|wget|fetch|requests|urlopen|urllib|axios|iwr|irm|invoke-webrequest|invoke-restmethod|invoke-expression|iex|exec|eval|system|popen|subprocess|sh|bash|powershell|pwsh)\b",
    )
});

/// Decodes the literals on and above the decoding lines and scans them.
pub(super) fn run(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    let mut budget = MAX_LITERALS;
    // A PowerShell block's `[char[]]@(…)` has no trigger of its own (the
    // prefilter's table is full): its fence's `powershell` brings its lines.
    let mut all: Vec<LineRef> = Vec::with_capacity(lines.len());
    for &r in lines {
        all.push(r);
        let line = body.line(r).trim_start();
        let powershell =
            fence(line).is_some_and(|(_, _, info)| info.contains("powershell") || info.contains("pwsh"));
        if powershell {
            all.extend(
                body.lines_from(r)
                    .skip(1)
                    .take(POWERSHELL_BLOCK_LINES)
                    .take_while(|(_, l)| !is_fence(l))
                    .filter(|(_, l)| l.contains("[char[]]"))
                    .map(|(r, _)| r),
            );
        }
    }
    all.sort_by_key(|r| r.index);
    all.dedup();
    let mut blocks_normalized: Vec<usize> = Vec::new();
    let mut context_budget = rescan::context_rescans();
    let mut seen = rescan::ByLine::default();
    // Lines whose literals `anywhere` decoded already: a decoding call
    // below does not decode them again.
    let mut decoded_alone: Vec<usize> = Vec::new();
    for r in all {
        if budget == 0 {
            return;
        }
        let line = body.line(r);
        let Some(call) = DECODES.find(line.as_bytes()) else {
            if let Some(m) = ENCODED_START.find(line.as_bytes()) {
                budget = anywhere(body, r, line, m.start(), budget, out, &mut seen);
                // Only the lines a lookback can reach are kept.
                decoded_alone.retain(|&i| i + LOOKBACK_LINES >= r.index);
                decoded_alone.push(r.index);
            }
            continue;
        };
        // `c="$(printf %s "$a$b" | base64 -d)"` … `$c -F …`: the variable
        // holds a command word that no trigger names where it is run.
        if SUBSTITUTED.is_match(line.as_bytes())
            && let Some(first) = rescan::disguised_in_block(
                body,
                body.code_map(),
                r,
                &blocks_normalized,
                &mut context_budget,
                out,
                &mut seen,
            )
        {
            blocks_normalized.push(first);
        }
        let warned = rescan::warned_before(line, &line[call.start()..]);
        // The decoded value is used on this line or, assigned, a few below.
        let used = body.lines_from(r).take(USE_LINES + 1).any(|(_, l)| USES.is_match(l.as_bytes()))
            || body
                .lines_from(r)
                .skip(1)
                .take(BLOCK_LINES)
                .take_while(|(_, l)| !is_fence(l))
                .any(|(_, l)| USES.is_match(l.as_bytes()) || SENDS.is_match(l.as_bytes()));
        let hints = Hints::of(line);
        let mut found = decode_line_keyed(line, hints);
        if found.is_empty() {
            // `payload = "…"` above, `b64decode(payload)` here.
            let back = r.index.min(LOOKBACK_LINES);
            let first = body.line_before(r, back);
            for (above, text) in body.lines_from(first).take(back) {
                if decoded_alone.contains(&above.index) {
                    continue;
                }
                for decoded in decode_line_keyed(text, hints).into_iter().take(budget) {
                    budget -= 1;
                    scan_decoded(&decoded, used, warned, above, text, out, &mut seen);
                }
            }
            continue;
        }
        for decoded in found.drain(..).take(budget) {
            budget -= 1;
            scan_decoded(&decoded, used, warned, r, line, out, &mut seen);
        }
    }
}

/// A base64 literal of a URL or a command line on a line that decodes
/// nothing: decoded and scanned as what it decodes to, wherever it sits.
/// The decoded URL is `High` when this line or the few below send or run
/// something, or the line asks in prose to send; the budget left is
/// returned.
fn anywhere(
    body: &Body<'_>,
    r: LineRef,
    line: &str,
    at: usize,
    mut budget: usize,
    out: &mut Vec<Finding>,
    seen: &mut rescan::ByLine,
) -> usize {
    let warned = rescan::warned_before(line, &line[at..]);
    let used = SENDS_IN_PROSE.is_match(line.as_bytes())
        || body.lines_from(r).take(USE_LINES + 1).any(|(_, l)| USES.is_match(l.as_bytes()));
    for decoded in decode_line_keyed(line, Hints::default()).into_iter().take(budget) {
        budget -= 1;
        scan_decoded(&decoded, used, warned, r, line, out, seen);
    }
    budget
}

/// Scans one decoded literal found on line `at` (`text`); `used`: the
/// decoding line or the few below send or run something; `warned`: the
/// decoding line warns against doing so.
fn scan_decoded(
    decoded: &str,
    used: bool,
    warned: bool,
    at: LineRef,
    text: &str,
    out: &mut Vec<Finding>,
    seen: &mut rescan::ByLine,
) {
    // Fenced, so that the code analyses read it as the code it is.
    let Some(inner) = rescan::scan(&format!("```\n{decoded}\n```")) else {
        return;
    };
    let before = out.len();
    rescan::report("code.decoded-payload", &inner, Severity::Medium, warned, at, out, seen);
    if out.len() == before && decoded.contains("://") {
        let severity = match (warned, used) {
            (true, _) => Severity::Low,
            (false, true) => Severity::High,
            (false, false) => Severity::Medium,
        };
        let line = at.index + 1;
        if !seen.on(out, line).any(|f| f.rule_id == "code.decoded-url") {
            out.push(finding("code.decoded-url", Category::Obfuscation, severity, at, text, 0));
        }
    }
}

/// The texts the encoded literals of a line decode to.
#[cfg(test)]
pub(super) fn decode_line(line: &str) -> Vec<String> {
    decode_line_keyed(line, Hints::default())
}

/// What a decoding line says of the literals it decodes, on it or above.
#[derive(Debug, Clone, Copy, Default)]
struct Hints {
    /// It transforms each character of a string by its code: literals are
    /// read under the key that makes them a URL or a command line.
    per_char: bool,
    /// It rotates letters by 13 (`codecs.decode(s, "rot13")`, `tr
    /// 'A-Za-z' 'N-ZA-Mn-za-m'`): literals are read rotated.
    rot13: bool,
    /// It runs PowerShell's `-EncodedCommand` of a variable, or decodes
    /// with .NET's UTF-16LE decoder: base64 literals are read as UTF-16LE
    /// too.
    wide: bool,
    /// It inflates raw deflate (`gzinflate`): base64 that is not text is
    /// tried as such (zlib and gzip are known by their magic anyway).
    raw_deflate: bool,
    /// It loads serialized code (`marshal.loads`): base64 that is not text
    /// is read for its printable runs.
    serialized: bool,
}

impl Hints {
    fn of(line: &str) -> Hints {
        let b = line.as_bytes();
        Hints {
            per_char: PER_CHAR.is_match(b),
            rot13: ROT13.is_match(b),
            wide: ENCODED_VARIABLE.is_match(b) || contains_ci(b, b"unicode") && WIDE_TEXT.is_match(b),
            raw_deflate: RAW_DEFLATE.is_match(b),
            serialized: SERIALIZED.is_match(b),
        }
    }
}

/// [`decode_line`], with what the decoding line says of its literals.
fn decode_line_keyed(line: &str, hints: Hints) -> Vec<String> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    if hints.per_char || hints.rot13 {
        for c in STRING_LITERAL.captures_iter(b) {
            if let Some(m) = c.get(1).or_else(|| c.get(2)) {
                let literal = String::from_utf8_lossy(m.as_bytes());
                if hints.per_char {
                    let codes: Vec<u32> = literal.chars().map(u32::from).collect();
                    out.extend(keyed(&codes));
                }
                if hints.rot13 {
                    out.push(literal.chars().map(rot13).collect());
                }
            }
        }
    }
    if let Some(c) = ENCODED_COMMAND.captures(b)
        && let Some(m) = c.get(1)
    {
        let raw = base64url(m.as_bytes().strip_suffix(b"==").unwrap_or(m.as_bytes()));
        out.extend(narrow(&raw));
    }
    for m in BASE64.find_iter(b) {
        let s = m.as_bytes();
        // A path or an identifier is not base64; a real literal mixes cases or digits.
        if s.len() < MIN_ENCODED || !s.iter().any(u8::is_ascii_digit) && !mixed_case(s) {
            continue;
        }
        let s = s.iter().copied().take_while(|&c| c != b'=').collect::<Vec<u8>>();
        if s.len() % 4 == 1 {
            continue;
        }
        let raw = base64url(&s);
        if hints.wide {
            out.extend(narrow(&raw));
        }
        match text(&raw) {
            Some(t) => out.push(t),
            // Compressed, or serialized code: what it holds.
            None => out.extend(
                unpack::inflated(&raw, hints.raw_deflate)
                    .and_then(|inflated| text(&inflated))
                    .or_else(|| hints.serialized.then(|| unpack::printable_runs(&raw)).flatten()),
            ),
        }
    }
    if contains_ci(b, b"32") {
        for c in BASE32.captures_iter(b) {
            if let Some(m) = c.get(1) {
                out.extend(text(&base32(m.as_bytes())));
            }
        }
    }
    for m in ESCAPES.find_iter(b) {
        let bytes: Vec<u8> = m
            .as_bytes()
            .chunks(4)
            .filter_map(|e| u8::from_str_radix(std::str::from_utf8(&e[2..]).ok()?, 16).ok())
            .collect();
        out.extend(text(&bytes));
    }
    for c in HEX.captures_iter(b) {
        if let Some(m) = c.get(1)
            && let Ok(bytes) = hex::decode(m.as_bytes())
        {
            out.extend(text(&bytes));
        }
    }
    if contains_ci(b, b"xxd") {
        for c in BARE_HEX.captures_iter(b) {
            if let Some(m) = c.get(1)
                && let Ok(bytes) = hex::decode(m.as_bytes())
            {
                out.extend(text(&bytes));
            }
        }
    }
    for c in REVERSED.captures_iter(b) {
        if let Some(m) = c.get(1) {
            out.push(String::from_utf8_lossy(m.as_bytes()).chars().rev().collect());
        }
    }
    for c in INT_LIST.captures_iter(b) {
        let Some(m) = c.get(1) else { continue };
        let values: Vec<u32> = NUMBER
            .find_iter(m.as_bytes())
            .filter_map(|n| std::str::from_utf8(n.as_bytes()).ok()?.parse::<u32>().ok())
            .collect();
        // Under a key when one makes a URL or a command line of them, else
        // as they are.
        let plain = || {
            let bytes: Option<Vec<u8>> = values.iter().map(|&v| u8::try_from(v).ok()).collect();
            bytes.filter(|b| b.len() >= MIN_PLAIN_VALUES).and_then(|b| text(&b))
        };
        out.extend(keyed(&values).or_else(plain));
    }
    for m in CHAR_CODES.find_iter(b) {
        let bytes: Vec<u8> = NUMBER
            .find_iter(m.as_bytes())
            .filter_map(|n| std::str::from_utf8(n.as_bytes()).ok()?.parse::<u32>().ok())
            .filter_map(|n| u8::try_from(n).ok())
            .collect();
        if bytes.len() >= 4 {
            out.extend(text(&bytes));
        }
    }
    out.retain(|t| t.trim().len() >= 4);
    out.dedup();
    out
}

/// Char codes under a key that code applies to each (`c ^ k`, `c + k`,
/// `c - k`), whatever the key (it may be a variable set elsewhere): the
/// first key under which they read as a URL or a command line. Only the
/// keys that make three codes read `://`, or the first codes a fetcher's
/// or a shell's name, are tried: linear in the codes, not in the keys.
fn keyed(codes: &[u32]) -> Option<String> {
    const STARTS: &[&[u8]] = &[b"curl ", b"wget ", b"bash ", b"sh -c", b"powershell", b"iex "];
    let codes = &codes[..codes.len().min(MAX_DECODED)];
    let mut keys: Vec<(bool, i64)> = Vec::new();
    for want in STARTS {
        keys.extend(keys_reading(codes, 0, want));
    }
    for at in 0..codes.len().saturating_sub(2) {
        if keys.len() >= 8 {
            break;
        }
        keys.extend(keys_reading(codes, at, b"://"));
    }
    keys.dedup();
    keys.into_iter().find_map(|(is_xor, k)| {
        let bytes: Option<Vec<u8>> = codes
            .iter()
            .map(|&v| {
                let c = if is_xor { i64::from(v) ^ k } else { i64::from(v) + k };
                u8::try_from(c).ok()
            })
            .collect();
        let t = text(&bytes?)?;
        let command = STARTS.iter().any(|w| t.as_bytes().starts_with(w));
        (t.contains("://") || command).then_some(t)
    })
}

/// UTF-16LE bytes of ASCII text (every second byte 0) as that text.
fn narrow(raw: &[u8]) -> Option<String> {
    let narrow: Vec<u8> = raw.chunks(2).map(|p| p[0]).collect();
    raw.chunks(2).all(|p| p.get(1).is_none_or(|&h| h == 0)).then(|| text(&narrow)).flatten()
}

fn rot13(c: char) -> char {
    match c {
        'a'..='z' => rotated(c, b'a'),
        'A'..='Z' => rotated(c, b'A'),
        _ => c,
    }
}

/// The ASCII letter `c` moved 13 places on in the alphabet that starts at
/// `first`. (One function for both cases: written out for capitals alone,
/// `c - b'A'` turned `c + b'A'` reads the same, 2 × 65 being 5 × 26.)
fn rotated(c: char, first: u8) -> char {
    (((c as u8 - first) + 13) % 26 + first) as char
}

/// The keys (`true` for XOR, `false` for an offset) under which the
/// codes from `at` read `want`.
fn keys_reading(codes: &[u32], at: usize, want: &[u8]) -> Vec<(bool, i64)> {
    let mut keys = Vec::new();
    let Some(window) = codes.get(at..at + want.len()) else { return keys };
    let k = window[0] ^ u32::from(want[0]);
    if k != 0 && window.iter().zip(want).all(|(&v, &w)| v ^ k == u32::from(w)) {
        keys.push((true, i64::from(k)));
    }
    let d = i64::from(want[0]) - i64::from(window[0]);
    if d != 0 && window.iter().zip(want).all(|(&v, &w)| i64::from(v) + d == i64::from(w)) {
        keys.push((false, d));
    }
    keys
}

/// RFC 4648 base32 (upper-case alphabet, padding already cut); bits left
/// over at the end are dropped.
fn base32(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() * 5 / 8);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in s {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'2'..=b'7' => c - b'2' + 26,
            _ => return out,
        };
        acc = (acc << 5) | u32::from(v);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

fn mixed_case(s: &[u8]) -> bool {
    s.iter().any(u8::is_ascii_uppercase) && s.iter().any(u8::is_ascii_lowercase)
}

/// Decoded bytes as text, when they are text: mostly printable ASCII or
/// valid UTF-8, cut to [`MAX_DECODED`] bytes.
fn text(bytes: &[u8]) -> Option<String> {
    let bytes = &bytes[..bytes.len().min(MAX_DECODED)];
    if bytes.len() < 4 {
        return None;
    }
    let printable =
        bytes.iter().filter(|&&c| c.is_ascii_graphic() || matches!(c, b' ' | b'\n' | b'\t' | b'\r')).count();
    let utf8 = std::str::from_utf8(bytes).is_ok();
    (printable * 100 >= bytes.len() * 90 || utf8 && printable * 100 >= bytes.len() * 60)
        .then(|| String::from_utf8_lossy(bytes).into_owned())
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod sweep_tests;
