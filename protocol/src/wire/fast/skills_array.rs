//! Decoding the `skills` array of an update in parallel, without a serial
//! pass to find where its packets start.
//!
//! The array is cut into a few parts per core at guessed packet boundaries:
//! the first `}` `,` `{` `"` (whitespace allowed between them) after each
//! cut. The threads take the parts one after the other as they finish one.
//! A guess can be wrong (the bytes may sit inside a string), so each part is
//! trusted only once the part before it, read packet by packet from a start
//! already trusted, ends exactly where it begins. The first part starts at
//! the array's first packet, so by induction every trusted part is read
//! exactly as a serial reading would read it. When a trusted part cannot
//! finish (its guessed end was not a boundary), it is read again from its
//! start to the end of the array; the parts after it are dropped. So a wrong
//! guess costs time, never correctness, and the work stays linear: a byte is
//! read by at most two parts, then by serde_json if the update is not valid.
//!
//! Each packet is read by the fast reader (`packet`), or by serde_json
//! when the fast reader does not answer. Any failure gives `None`, and the
//! caller falls back on serde_json for the whole update (which then reports
//! the error).

use memchr::memchr;

use super::packet;
use super::split::{skip_ws, value_end};
use crate::wire::SkillPacket;

/// The packets of the array whose `[` is at `open`, and the position after
/// its `]`.
pub(super) fn decode(doc: &[u8], open: usize) -> Option<(Vec<SkillPacket>, usize)> {
    let threads = crate::par::threads_for_bytes(doc.len() - open);
    // A few parts per thread, so a thread that runs slower takes fewer.
    let parts = if threads == 1 { 1 } else { threads * PARTS_PER_THREAD };
    decode_in_parts(doc, open, parts, threads)
}

/// Parts per thread on a large update.
const PARTS_PER_THREAD: usize = 4;

/// [`decode`], in at most `parts` parts on `threads` threads.
fn decode_in_parts(
    doc: &[u8],
    open: usize,
    parts: usize,
    threads: usize,
) -> Option<(Vec<SkillPacket>, usize)> {
    let first = skip_ws(doc, open + 1);
    if *doc.get(first)? == b']' {
        return Some((Vec::new(), first + 1));
    }
    let starts = part_starts(doc, first, parts);
    let parts = crate::par::run_parts(starts.len(), threads, |part| {
        let end = starts.get(part + 1).map_or(Limit::ArrayEnd, |&next| Limit::Boundary(next));
        read_part(doc, starts[part], end)
    });
    let mut packets: Vec<Vec<SkillPacket>> = Vec::with_capacity(parts.len());
    for (part, outcome) in parts.into_iter().enumerate() {
        // Only reached for a trusted start: the first, or one the previous part ended on.
        let outcome = match outcome {
            Part::Failed => read_part(doc, starts[part], Limit::ArrayEnd),
            other => other,
        };
        match outcome {
            Part::Reached(more) => packets.push(more),
            Part::Ended(more, close) => {
                packets.push(more);
                return Some((crate::par::concat(packets), close));
            }
            Part::Failed => return None,
        }
    }
    // The last part ends at the array's end or fails; it never stops at a boundary.
    None
}

/// Where a part starts: the first packet, then one guessed boundary per cut.
fn part_starts(doc: &[u8], first: usize, parts: usize) -> Vec<usize> {
    let span = doc.len() - first;
    let mut starts = vec![first];
    for part in 1..parts {
        let from = first + span * part / parts;
        let to = first + span * (part + 1) / parts;
        let after = starts.last().map_or(first, |&last| last + 1).max(from);
        if let Some(start) = boundary_between(doc, after, to) {
            starts.push(start);
        }
    }
    starts
}

/// The position of the `{` in the first `}` `,` `{` `"` (with whitespace
/// between them) whose `}` lies in `from..to`.
fn boundary_between(doc: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut at = from;
    while at < to {
        let close = at + memchr(b'}', doc.get(at..to)?)?;
        let comma = skip_ws(doc, close + 1);
        if doc.get(comma) == Some(&b',') {
            let open = skip_ws(doc, comma + 1);
            if doc.get(open) == Some(&b'{') && doc.get(skip_ws(doc, open + 1)) == Some(&b'"') {
                return Some(open);
            }
        }
        at = close + 1;
    }
    None
}

/// Where a part must stop.
#[derive(Clone, Copy)]
enum Limit {
    /// At the start of the next part, a guessed packet boundary.
    Boundary(usize),
    /// At the array's `]`.
    ArrayEnd,
}

/// What reading a part gave.
enum Part {
    /// Its packets; it ended exactly at the next part's start.
    Reached(Vec<SkillPacket>),
    /// Its packets, and the position after the array's `]`.
    Ended(Vec<SkillPacket>, usize),
    /// Not the plain shape, not valid, or the guessed boundary was not one.
    Failed,
}

/// Reads packets from `start` (a packet's first byte) until `limit`.
fn read_part(doc: &[u8], start: usize, limit: Limit) -> Part {
    let end = match limit {
        Limit::Boundary(next) => next,
        Limit::ArrayEnd => doc.len(),
    };
    // Checked once for the whole part, so the readers can slice without checks.
    let Ok(text) = std::str::from_utf8(&doc[start..end]) else {
        return Part::Failed;
    };
    let bytes = text.as_bytes();
    let source = packet::Source::new(text);
    let mut packets = Vec::new();
    let mut pos = 0;
    loop {
        if matches!(limit, Limit::Boundary(_)) && pos == bytes.len() {
            return Part::Reached(packets);
        }
        let Some((packet, after)) = packet_at(&source, text, pos) else {
            return Part::Failed;
        };
        packets.push(packet);
        pos = skip_ws(bytes, after);
        match bytes.get(pos) {
            Some(b',') => pos = skip_ws(bytes, pos + 1),
            Some(b']') => return Part::Ended(packets, start + pos + 1),
            _ => return Part::Failed,
        }
    }
}

/// The packet starting at `pos`, and the position after it.
fn packet_at(source: &packet::Source<'_>, text: &str, pos: usize) -> Option<(SkillPacket, usize)> {
    if let Some(read) = packet::decode_at(source, pos) {
        return Some(read);
    }
    let end = value_end(text.as_bytes(), pos)?;
    let packet = serde_json::from_str(text.get(pos..end)?).ok()?;
    Some((packet, end))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::wire::fast::json_strategies;

    #[test]
    fn guesses_boundaries_only_between_objects() {
        let doc = br#"[{"a":"},{\"b"}, {"c":1} ,{ "d":2}]"#;
        assert_eq!(boundary_between(doc, 0, doc.len()), Some(17));
        assert_eq!(boundary_between(doc, 18, doc.len()), Some(26));
        assert_eq!(boundary_between(doc, 27, doc.len()), None);
    }

    #[test]
    fn a_wrong_guess_is_read_again_from_a_trusted_start() {
        // The guessed boundary sits inside a string: the first part overruns
        // it, and is read again up to the end of the array.
        let doc = br#"[{"skillName":"a"},{"skillBody":"},{\"x"},{"skillName":"b"}]"#;
        let wrong = 35;
        assert_eq!(&doc[wrong..wrong + 2], b"{\\");
        assert!(matches!(read_part(doc, 1, Limit::Boundary(wrong)), Part::Failed));
        let Part::Ended(packets, close) = read_part(doc, 1, Limit::ArrayEnd) else {
            panic!("the array reads to its end");
        };
        assert_eq!(close, doc.len());
        let names: Vec<&str> = packets.iter().map(|p| p.skill_name.as_str()).collect();
        assert_eq!(names, ["a", "", "b"]);
    }

    #[test]
    fn a_right_guess_is_reached_exactly() {
        let doc = br#"[{"skillName":"a"}, {"skillName":"b"}]"#;
        let next = boundary_between(doc, 2, doc.len()).expect("a boundary");
        let Part::Reached(first) = read_part(doc, 1, Limit::Boundary(next)) else {
            panic!("the first part ends at the boundary");
        };
        let Part::Ended(second, close) = read_part(doc, next, Limit::ArrayEnd) else {
            panic!("the second part ends the array");
        };
        assert_eq!((first.len(), second.len(), close), (1, 1, doc.len()));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

        /// However many parts, and wherever the guesses fall (strings that end
        /// in `},{` make wrong ones), the array reads as in one part.
        #[test]
        fn parts_read_as_one(doc in json_strategies::update(), parts in 2usize..9) {
            if let Some(open) = crate::wire::fast::split::skills_array(doc.as_bytes()) {
                let whole = decode_in_parts(doc.as_bytes(), open, 1, 1);
                prop_assert_eq!(decode_in_parts(doc.as_bytes(), open, parts, 2), whole, "{}", doc);
            }
        }
    }
}
