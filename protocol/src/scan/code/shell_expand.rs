//! What the shell prints for the literal parts `shell_words` expands: a
//! command substitution of literals (`$(echo sh)`, `$(printf … | base64
//! -d)`), and the text of a `$'…'` string.

/// What a command substitution of literals prints: `echo sh` → `sh`,
/// `printf sh` → `sh` (`printf '\\163\\150'` too), `which env` → `env`, and a literal piped through
/// decoders (`printf YmFzaA== | base64 -d`, `echo hs | rev`, `echo 7368 |
/// xxd -r -p`) → what they print; anything else stays a substitution.
pub(super) fn substitution(inner: &str) -> String {
    if let Some((first, stages)) = inner.split_once('|') {
        let printed = substitution(first.trim());
        if printed.starts_with("$(") {
            return format!("$({inner})");
        }
        return stages
            .split('|')
            .try_fold(printed, |v, stage| decoded(v.trim(), stage.trim()))
            .unwrap_or_else(|| format!("$({inner})"));
    }
    let mut words = inner.split_whitespace();
    match words.next() {
        Some("which") | Some("command") => {
            let rest: Vec<&str> = words.filter(|w| !w.starts_with('-')).collect();
            match rest.as_slice() {
                [one] => one.rsplit('/').next().unwrap_or(one).to_string(),
                _ => format!("$({inner})"),
            }
        }
        Some("echo") => {
            words.skip_while(|w| matches!(*w, "-n" | "-e" | "-ne" | "-en")).collect::<Vec<_>>().join(" ")
        }
        Some("printf") => {
            let args: Vec<&str> = words.collect();
            match args.split_first() {
                // The format's escapes are printf's own (`\\143` is `c`), and so
                // are those of a `%b` argument.
                Some((f, rest)) if f.contains("%b") => ansi_c(&rest.concat()),
                Some((f, rest)) if f.contains("%s") => rest.concat(),
                Some((f, [])) if !f.contains('%') => ansi_c(f),
                _ => format!("$({inner})"),
            }
        }
        _ => format!("$({inner})"),
    }
}

/// What `stage` (a decoder the shell pipes text through) prints for
/// `input`, when it is a decoder and the result is text.
pub(super) fn decoded(input: &str, stage: &str) -> Option<String> {
    let words: Vec<&str> = stage.split_whitespace().collect();
    let bytes = match words.as_slice() {
        ["rev"] => return Some(input.chars().rev().collect()),
        ["tr", from, to] => return translated(input, from, to),
        ["base64" | "base32", flags @ ..] if flags.iter().any(|f| matches!(*f, "-d" | "--decode" | "-D")) => {
            if words[0] == "base32" {
                return None;
            }
            crate::scan::secret::base64url(input.trim_end_matches('=').as_bytes())
        }
        ["xxd", flags @ ..]
            if flags.contains(&"-r") && flags.contains(&"-p")
                || flags.contains(&"-rp")
                || flags.contains(&"-pr") =>
        {
            hex::decode(input.split_whitespace().collect::<String>()).ok()?
        }
        _ => return None,
    };
    let text = String::from_utf8(bytes).ok()?;
    text.chars().all(|c| !c.is_control() || c == '\n' || c == '\t').then_some(text)
}

/// What `tr FROM TO` prints for `input` (`tr 'A-Za-z' 'N-ZA-Mn-za-m'`,
/// ROT13): each character of `FROM` becomes the one at its place in `TO`,
/// whose last character stands for the rest when it is shorter. ASCII
/// sets of literal characters and ranges only; a flag or a class
/// (`[:upper:]`) is no translation read here.
fn translated(input: &str, from: &str, to: &str) -> Option<String> {
    let (from, to) = (tr_set(from)?, tr_set(to)?);
    let last = *to.last()?;
    let map = |c: char| {
        let b = u8::try_from(c).ok()?;
        from.iter().rposition(|&f| f == b).map(|i| char::from(*to.get(i).unwrap_or(&last)))
    };
    Some(input.chars().map(|c| map(c).unwrap_or(c)).collect())
}

/// The characters of a `tr` set: literal ASCII characters and `a-z` ranges.
fn tr_set(set: &str) -> Option<Vec<u8>> {
    let b = set.as_bytes();
    if b.is_empty() || b[0] == b'-' || b.len() > 128 || !set.is_ascii() || set.contains(['[', '\\']) {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if i + 2 < b.len() && b[i + 1] == b'-' {
            if b[i] > b[i + 2] {
                return None;
            }
            out.extend(b[i]..=b[i + 2]);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Where a `$'…'` string ends: its first unescaped `'`.
pub(super) fn ansi_c_end(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\'' => return i,
            _ => i += 1,
        }
    }
    b.len()
}

/// The text of a `$'…'` string: `\xHH`, octal `\NNN` and the common escapes.
pub(super) fn ansi_c(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let hex = |k: usize| b.get(k).and_then(|c| char::from(*c).to_digit(16));
        match b[i + 1] {
            b'x' => match (hex(i + 2), hex(i + 3)) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 4;
                }
                (Some(h), None) => {
                    out.push(h as u8);
                    i += 3;
                }
                _ => {
                    out.extend_from_slice(b"\\x");
                    i += 2;
                }
            },
            b'0'..=b'7' => {
                let digits = b[i + 1..].iter().take(3).take_while(|c| (b'0'..=b'7').contains(c)).count();
                let v = b[i + 1..i + 1 + digits].iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0'));
                out.push(v as u8);
                i += 1 + digits;
            }
            b'n' => {
                out.push(b' ');
                i += 2;
            }
            b't' => {
                out.push(b'\t');
                i += 2;
            }
            c => {
                out.push(c);
                i += 2;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
#[path = "shell_expand_tests.rs"]
mod sweep_tests;
