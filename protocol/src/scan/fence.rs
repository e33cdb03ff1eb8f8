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
///
/// Inlined: most callers ask of every line of a body, and almost no line
/// starts with a fence character (`CodeMap::of` called it out of line once
/// its loop grew: 1,200 instructions a typical body).
#[inline(always)]
pub(in crate::scan) fn fence(t: &str) -> Option<(u8, usize, &str)> {
    let c = *t.as_bytes().first()?;
    let n = run(c, t.as_bytes());
    (n > 0).then(|| (c, n, t[n..].trim()))
}

/// Whether `line`, its leading blanks trimmed, is a fence.
#[inline]
pub(in crate::scan) fn is_fence(line: &str) -> bool {
    let t = line.trim_start().as_bytes();
    t.first().is_some_and(|&c| run(c, t) > 0)
}

/// The length of the fence run `t` opens with, `c` its first byte; 0 when
/// it opens none: fewer than three, or a backtick after a backtick run.
#[inline]
fn run(c: u8, t: &[u8]) -> usize {
    // A line opening with inline code (`` `x` does y ``) ends here, before
    // its rest is read.
    if (c != b'`' && c != b'~') || t.len() < 3 || t[1] != c || t[2] != c {
        return 0;
    }
    let n = 3 + t[3..].iter().take_while(|&&x| x == c).count();
    if c == b'`' && memchr::memchr(b'`', &t[n..]).is_some() { 0 } else { n }
}

#[cfg(test)]
#[path = "fence_tests.rs"]
mod tests;
