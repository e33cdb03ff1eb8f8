//! Blanking string contents and comments out of a line of code, keeping
//! what strings interpolate, so that taint (`flow`) sees only the names a
//! line really uses.

use super::blocks::Lang;

/// The code with string contents and comments blanked, keeping what
/// strings interpolate (`{…}`, `${…}`, `$name`): what variables a line
/// really mentions. Byte offsets stay where they were.
pub(super) fn strip(code: &str, lang: Lang) -> String {
    let b = code.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut quote: Option<u8> = None;
    let mut brace = 0u32;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            None => {
                let comment = match lang {
                    Lang::JavaScript => {
                        c == b'/' && b.get(i + 1) == Some(&b'/') && (i == 0 || b[i - 1] != b':')
                    }
                    _ => c == b'#' && (i == 0 || b[i - 1].is_ascii_whitespace()),
                };
                if comment {
                    out.extend(std::iter::repeat_n(b' ', b.len() - i));
                    break;
                }
                if matches!(c, b'"' | b'\'' | b'`') {
                    quote = Some(c);
                }
                out.push(c);
            }
            Some(q) if brace == 0 => {
                if c == b'\\' {
                    out.push(b' ');
                    if i + 1 < b.len() {
                        out.push(b' ');
                    }
                    i += 2;
                    continue;
                }
                if c == q {
                    quote = None;
                    out.push(c);
                } else if c == b'{' {
                    brace = 1;
                    out.push(c);
                } else if c == b'$'
                    || (c.is_ascii_alphanumeric() || c == b'_')
                        && out.last() != Some(&b' ')
                        && is_dollar_name(&out)
                {
                    out.push(c);
                } else {
                    out.push(b' ');
                }
            }
            Some(_) => {
                match c {
                    b'{' => brace += 1,
                    b'}' => brace -= 1,
                    _ => {}
                }
                out.push(c);
            }
        }
        i += 1;
    }
    // Only ASCII bytes were replaced, by ASCII; a multi-byte character is
    // either kept whole or blanked byte by byte.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Whether the output so far ends in `$name…` (a variable a string interpolates).
fn is_dollar_name(out: &[u8]) -> bool {
    let n = out.iter().rev().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b':').count();
    out.iter().rev().nth(n) == Some(&b'$')
}

#[cfg(test)]
#[path = "strip_tests.rs"]
mod sweep_tests;
