//! The one test of whether a line opens or closes a fenced code block
//! (CommonMark 0.31 §4.5), shared by every analyzer that looks for blocks
//! (`code::CodeMap`, `trojan`, `tamper`, `hijack`, `code/decode`,
//! `vouched`, `supply`, `outbound`).
//!
//! A fence is a run of at least three backticks or tildes; a backtick
//! fence's info string holds no backtick, so a line of ```` ```x``` ```` is
//! inline code. Each analyzer once tested `starts_with("```")` on its own:
//! such a line, read as an opening fence, made the rest of the body one
//! unclosed block (or ended a window early) and hid it from that analyzer
//! (#14, session 23's fix of the instruction walk and `CodeMap`, made
//! everywhere here).

/// `t`, a line with its indent (and whatever markers the caller strips)
/// already trimmed, as a fence: its character, the length of its run and
/// its info string (trimmed).
pub(in crate::scan) fn fence(t: &str) -> Option<(u8, usize, &str)> {
    let c = *t.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = t.bytes().take_while(|&b| b == c).count();
    let info = t[n..].trim();
    (n >= 3 && !(c == b'`' && info.contains('`'))).then_some((c, n, info))
}

/// Whether `line`, its leading blanks trimmed, is a fence.
pub(in crate::scan) fn is_fence(line: &str) -> bool {
    fence(line.trim_start()).is_some()
}

#[cfg(test)]
#[path = "fence_tests.rs"]
mod tests;
