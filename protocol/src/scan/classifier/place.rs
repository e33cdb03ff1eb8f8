//! Where a token sits, for the classifier's walk (session 28): the
//! frontmatter. The walk (`tokens`) reports each token of the frontmatter
//! twice, as itself and as itself *in the frontmatter*, so that a word in
//! a skill's `name:` or `description:` is a feature of its own beside the
//! word it shares with the body.
//!
//! Measured leave one writer out over nine writers (the module doc,
//! "Where a word sits"): every token placed (prose, code, a heading, the
//! frontmatter) gained the most, but cost 6 % of a typical scan (a second
//! feature for every token, and each line's start read); the frontmatter's
//! tokens alone kept most of the gain at a few tokens a body.
//!
//! It owns only finding the frontmatter: from a first line that starts
//! `---` to the next line that starts `---`, both included (to the body's
//! end if none closes it).

/// Salt of a frontmatter token's hash: apart from the plain token.
const FRONT: u64 = 0x243f_6a88_85a3_08d3;

/// The hash of `token` (already finalized) in the frontmatter: one
/// multiply, whose top bits, the bucket, depend on every bit of the
/// salted token.
#[inline(always)]
pub(super) fn in_front(token: u64) -> u64 {
    (token ^ FRONT).wrapping_mul(super::MIX)
}

/// The end of `b`'s frontmatter (just past its closing line), or 0 when
/// it has none.
pub(super) fn front_end(b: &[u8]) -> usize {
    if !b.starts_with(b"---") {
        return 0;
    }
    let line_end = |at: usize| memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |n| at + n + 1);
    let mut at = line_end(0);
    while at < b.len() {
        let end = line_end(at);
        if b[at..].starts_with(b"---") {
            return end;
        }
        at = end;
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frontmatter_runs_from_the_first_line_to_its_closing_line() {
        let body = "---\nname: x\n---\n# Title\n";
        assert_eq!(front_end(body.as_bytes()), "---\nname: x\n---\n".len());
        // Closed on the last line, with no newline after it.
        assert_eq!(front_end(b"---\na\n---"), 9);
        // Unclosed: the whole body.
        assert_eq!(front_end(b"---\nname: x\n"), 12);
        assert_eq!(front_end(b"---"), 3);
        // Only a body that opens with it has one; a later `---` is a rule.
        assert_eq!(front_end(b"text\n---\nmore\n---\n"), 0);
        assert_eq!(front_end(b" ---\na\n---\n"), 0);
        assert_eq!(front_end(b"--\na\n---\n"), 0);
        assert_eq!(front_end(b""), 0);
    }

    #[test]
    fn a_token_in_the_frontmatter_hashes_apart_from_itself() {
        for token in [0u64, 1, 0x0123_4567_89ab_cdef, u64::MAX] {
            assert_ne!(in_front(token), token);
            assert_ne!(in_front(token) >> 50, token >> 50, "another bucket");
        }
    }
}
