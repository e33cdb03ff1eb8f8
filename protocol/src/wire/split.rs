//! Finding the packets of an update without decoding them: the byte range of
//! every element of the top-level `skills` array, and a copy of the rest of
//! the document with that array emptied.
//!
//! serde_json can split an update too (`Vec<&RawValue>`), but it walks every
//! string byte by byte, stopping at each escape, on the one thread that must
//! finish before the packets can be decoded in parallel. A split only needs
//! the closing quote of each string, which `memchr` finds many bytes at a time.
//!
//! This scanner validates nothing and understands only the plain shape of an
//! update: an object whose keys are written without escapes and whose
//! `skills` key, present once, holds an array. For anything else it answers
//! `None` and the caller decodes with serde_json alone. When it answers, the
//! caller still has serde_json check every byte: each element on its own, and
//! the envelope with `[]` in place of the array; the scanner itself checks the
//! commas and brackets of the array between the elements. Where the input is
//! not JSON, the ranges may be wrong, but then one of those checks fails.
//!
//! Every step moves forward through the input (a string's closing quote is
//! found once, and the backslashes before it are counted once), so the work
//! is linear in its length; nesting is a counter, not recursion.

use memchr::{memchr, memchr2};

/// An update cut at its `skills` array.
#[derive(Debug)]
pub(super) struct Split<'a> {
    /// The whole document with the value of `skills` replaced by `[]`.
    pub(super) envelope: Vec<u8>,
    /// Each element of the `skills` array, exactly as written.
    pub(super) elements: Vec<&'a [u8]>,
}

/// Cuts `doc` at its `skills` array; `None` when the document does not have
/// the plain shape this scanner understands (see the module documentation).
pub(super) fn split(doc: &[u8]) -> Option<Split<'_>> {
    let mut scan = Scanner { doc, pos: 0 };
    scan.skip_ws();
    scan.expect(b'{')?;
    scan.skip_ws();
    let mut array = None;
    loop {
        let key = scan.key()?;
        scan.skip_ws();
        scan.expect(b':')?;
        scan.skip_ws();
        if key == b"skills" {
            // A second `skills` key is refused by serde_json; leave it to it.
            if array.is_some() || scan.peek()? != b'[' {
                return None;
            }
            let start = scan.pos;
            let elements = scan.elements()?;
            array = Some((start, scan.pos, elements));
        } else {
            scan.skip_value()?;
        }
        scan.skip_ws();
        match scan.next()? {
            b',' => scan.skip_ws(),
            b'}' => break,
            _ => return None,
        }
    }
    let (start, end, elements) = array?;
    let mut envelope = Vec::with_capacity(doc.len() - (end - start) + 2);
    envelope.extend_from_slice(&doc[..start]);
    envelope.extend_from_slice(b"[]");
    // Whatever follows the object (only whitespace, in JSON) is serde_json's to check.
    envelope.extend_from_slice(&doc[end..]);
    Some(Split { envelope, elements })
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

/// A position in the document.
struct Scanner<'a> {
    doc: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.doc.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    fn expect(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    /// Skips JSON whitespace (exactly the four bytes JSON allows).
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// An object key without escapes: `"skills"` may also be spelled
    /// `"sk\u0069lls"`, so a key with a backslash is not understood.
    fn key(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let start = self.pos;
        let len = memchr2(b'"', b'\\', &self.doc[start..])?;
        if self.doc[start + len] != b'"' {
            return None;
        }
        self.pos = start + len + 1;
        Some(&self.doc[start..start + len])
    }

    /// The elements of the array starting here, each from its first byte to
    /// its last; the position ends after the closing `]`.
    fn elements(&mut self) -> Option<Vec<&'a [u8]>> {
        self.expect(b'[')?;
        let mut elements = Vec::new();
        self.skip_ws();
        if self.peek()? == b']' {
            self.pos += 1;
            return Some(elements);
        }
        loop {
            let start = self.pos;
            self.skip_value()?;
            elements.push(&self.doc[start..self.pos]);
            self.skip_ws();
            match self.next()? {
                b',' => self.skip_ws(),
                b']' => return Some(elements),
                _ => return None,
            }
        }
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

    fn elements(doc: &str) -> Option<Vec<&str>> {
        split(doc.as_bytes())
            .map(|s| s.elements.iter().map(|e| std::str::from_utf8(e).expect("cut at ASCII")).collect())
    }

    fn envelope(doc: &str) -> String {
        String::from_utf8(split(doc.as_bytes()).expect("plain shape").envelope).expect("UTF-8")
    }

    #[test]
    fn cuts_elements_and_empties_the_array() {
        let doc =
            r#" { "id" : "u", "skills" : [ {"a":"x\"]}"} , {"b":[1,{"c":null}]},7 ,"s"] , "n": -1.5e3 } "#;
        assert_eq!(elements(doc), Some(vec![r#"{"a":"x\"]}"}"#, r#"{"b":[1,{"c":null}]}"#, "7", r#""s""#]));
        assert_eq!(envelope(doc), r#" { "id" : "u", "skills" : [] , "n": -1.5e3 } "#);
    }

    #[test]
    fn counts_backslashes_before_a_quote() {
        let doc = r#"{"skills":[{"a":"\\"},{"b":"\\\"x"}]}"#;
        assert_eq!(elements(doc), Some(vec![r#"{"a":"\\"}"#, r#"{"b":"\\\"x"}"#]));
    }

    #[test]
    fn empty_array_has_no_elements() {
        assert_eq!(elements(r#"{"skills":[ ]}"#), Some(vec![]));
    }

    #[test]
    fn leaves_what_it_does_not_understand_to_serde() {
        for doc in [
            r#"{"skills":[{}],"skills":[]}"#,
            r#"{"skills":null}"#,
            r#"{"sk\u0069lls":[{}]}"#,
            r#"{"id":"x"}"#,
            r#"{}"#,
            r#"[{"skills":[]}]"#,
            r#"{"skills":[{}]"#,
            r#"{"skills":[{},]}"#,
            r#"{"skills":[{} {}]}"#,
            r#"{"skills":[{"a":"unterminated}]}"#,
            "\u{feff}{\"skills\":[]}",
            r#"{"skills":[,]}"#,
        ] {
            assert!(split(doc.as_bytes()).is_none(), "{doc}");
        }
    }
}
