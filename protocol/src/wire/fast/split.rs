//! Finding the `skills` array of an update without decoding it: where it
//! starts, and whether the rest of the document around it has the plain shape
//! the fast decoder understands. Also the small scanning steps the array's
//! decoder (`skills_array`) and the fast packet reader share.
//!
//! serde_json can cut an update too (`Vec<&RawValue>`), but it walks every
//! string byte by byte, stopping at each escape, on the one thread that must
//! finish before the packets can be decoded in parallel. A scan only needs
//! the closing quote of each string, which `memchr` finds many bytes at a time.
//!
//! This scanner validates nothing and understands only the plain shape of an
//! update: an object whose keys are written without escapes and whose
//! `skills` key, present once, holds an array. For anything else it answers
//! `None` and the caller decodes with serde_json alone. When it answers, the
//! caller still has serde_json check every byte: each packet (or the fast
//! reader checks it as serde_json would), and the envelope with `[]` in place
//! of the array. Where the input is not JSON, positions may be wrong, but then
//! one of those checks fails.
//!
//! Every step moves forward through the input (a string's closing quote is
//! found once, and the backslashes before it are counted once), so the work
//! is linear in its length; nesting is a counter, not recursion.

use memchr::{memchr, memchr2};

/// The position of the `[` that opens the value of the top-level `skills`
/// key; `None` when the document is not of the plain shape up to there.
pub(super) fn skills_array(doc: &[u8]) -> Option<usize> {
    let mut scan = Scanner { doc, pos: 0 };
    scan.skip_ws();
    scan.expect(b'{')?;
    scan.skip_ws();
    loop {
        let key = scan.key()?;
        scan.skip_ws();
        scan.expect(b':')?;
        scan.skip_ws();
        if key == b"skills" {
            return (scan.peek()? == b'[').then_some(scan.pos);
        }
        scan.skip_value()?;
        scan.skip_ws();
        scan.expect(b',')?;
        scan.skip_ws();
    }
}

/// Checks the shape of the top-level object after the `skills` array, from
/// `pos` just after its `]`; `None` when it is not plain, or when `skills`
/// comes again (serde_json refuses that; leave it to it).
pub(super) fn rest_of_object(doc: &[u8], pos: usize) -> Option<()> {
    let mut scan = Scanner { doc, pos };
    loop {
        scan.skip_ws();
        match scan.next()? {
            b',' => scan.skip_ws(),
            b'}' => return Some(()),
            _ => return None,
        }
        if scan.key()? == b"skills" {
            return None;
        }
        scan.skip_ws();
        scan.expect(b':')?;
        scan.skip_ws();
        scan.skip_value()?;
    }
}

/// The position of the first byte at or after `pos` that is not JSON whitespace.
pub(super) fn skip_ws(doc: &[u8], pos: usize) -> usize {
    let mut scan = Scanner { doc, pos };
    scan.skip_ws();
    scan.pos
}

/// The end (exclusive) of the value that starts at `start`, found as [`split`]
/// finds elements: brackets and quotes counted, nothing checked.
pub(super) fn value_end(doc: &[u8], start: usize) -> Option<usize> {
    let mut scan = Scanner { doc, pos: start };
    scan.skip_value()?;
    Some(scan.pos)
}

/// The position after the closing quote of the string whose content starts
/// at `start` (just after its opening quote).
pub(super) fn string_end(doc: &[u8], start: usize) -> Option<usize> {
    let mut scan = Scanner { doc, pos: start };
    scan.skip_string_rest()?;
    Some(scan.pos)
}

/// A position in the document, and the small steps both this splitter and
/// the fast packet reader (`packet`) take over JSON text.
pub(super) struct Scanner<'a> {
    pub(super) doc: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Scanner<'a> {
    pub(super) fn peek(&self) -> Option<u8> {
        self.doc.get(self.pos).copied()
    }

    pub(super) fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    pub(super) fn expect(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    /// Skips JSON whitespace (exactly the four bytes JSON allows).
    pub(super) fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// An object key without escapes: `"skills"` may also be spelled
    /// `"sk\u0069lls"`, so a key with a backslash is not understood.
    pub(super) fn key(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let start = self.pos;
        let len = memchr2(b'"', b'\\', &self.doc[start..])?;
        if self.doc[start + len] != b'"' {
            return None;
        }
        self.pos = start + len + 1;
        Some(&self.doc[start..start + len])
    }

    /// Moves past one value without checking it.
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => {
                self.pos += 1;
                self.skip_string_rest()
            }
            b'{' | b'[' => self.skip_nested(),
            _ => {
                // A number, `true`, `false` or `null`: serde_json checks which.
                let rest = &self.doc[self.pos..];
                let len = rest
                    .iter()
                    .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-')))
                    .unwrap_or(rest.len());
                self.pos += len;
                (len > 0).then_some(())
            }
        }
    }

    /// Moves past an object or array, brackets counted whatever their kind.
    fn skip_nested(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.next()? {
                b'"' => self.skip_string_rest()?,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
                _ => {}
            }
        }
    }

    /// Moves past the closing quote of a string whose opening quote is behind.
    fn skip_string_rest(&mut self) -> Option<()> {
        loop {
            let quote = self.pos + memchr(b'"', &self.doc[self.pos..])?;
            self.pos = quote + 1;
            // A quote is escaped by an odd run of backslashes before it. The
            // run stops at the previous quote at the latest, so runs never overlap.
            let backslashes = self.doc[..quote].iter().rev().take_while(|&&b| b == b'\\').count();
            if backslashes % 2 == 0 {
                return Some(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_array_after_any_other_values() {
        let doc = br#" { "id" : "a\"],\"skills\":[" , "n": [1, {"skills": []}], "skills" : [ {} ] } "#;
        let open = skills_array(doc).expect("plain shape");
        assert_eq!(&doc[open..open + 3], b"[ {");
        let close = value_end(doc, open).expect("array closes");
        assert_eq!(rest_of_object(doc, close), Some(()));
    }

    #[test]
    fn counts_backslashes_before_a_quote() {
        let doc = br#"["\\", "\\\"x"]"#;
        assert_eq!(value_end(doc, 0), Some(doc.len()));
        assert_eq!(string_end(br#"a\\"b"#, 0), Some(4));
        assert_eq!(string_end(br#"a\"b"#, 0), None);
    }

    #[test]
    fn leaves_what_it_does_not_understand_to_serde() {
        for doc in [
            r#"{"skills":null}"#,
            r#"{"sk\u0069lls":[{}]}"#,
            r#"{"id":"x"}"#,
            r#"{}"#,
            r#"[{"skills":[]}]"#,
            r#"{"id" "x","skills":[]}"#,
            "\u{feff}{\"skills\":[]}",
        ] {
            assert_eq!(skills_array(doc.as_bytes()), None, "{doc}");
        }
        for rest in ["", ",\"skills\":[]}", ",}", " x", ",\"a\":}"] {
            assert_eq!(rest_of_object(rest.as_bytes(), 0), None, "{rest}");
        }
        assert_eq!(rest_of_object(b" , \"a\" : [1] } ", 0), Some(()));
    }
}
