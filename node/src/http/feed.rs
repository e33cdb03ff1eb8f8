//! The feed: every shareable packet, tombstones included, in sequence
//! order, built once per change with the byte range of each packet in the
//! JSON of the whole run. Every `GET /ecp/skills` answer is cut from it
//! (`SPEC.md` §5.3, §10.2): the full listing is its live packets, an
//! incremental answer (`?since=N`) a contiguous run of it, a page
//! (`&limit=M`) a bounded run. So an answer shares the feed instead of
//! materialising its own copy per request: 16 readers of a 20 MB answer
//! cost 20 MB, not 320 MB.
//!
//! Up to [`PLAIN_MAX`] bytes of JSON the feed keeps the packets as one
//! buffer, and an answer is slices of it. A larger feed keeps each packet
//! as the zstd frame the store holds it in (about a third of its JSON), and
//! an answer unpacks its packets a slice at a time as it is sent
//! ([`super::pieces`]): 100,000 skills cost about 50 MB instead of 160 MB,
//! and building the feed copies frames instead of unpacking them.

use std::ops::Range;
use std::sync::Arc;

use axum::body::Bytes;

use super::pieces::{Piece, Pieces};
use crate::store::{FeedRow, StoreError, now, unpack_into};

/// The most JSON a feed keeps unpacked: a feed of 10,000 skills (about
/// 17 MB) is served as slices of one buffer, with no work per request.
pub(super) const PLAIN_MAX: usize = 32 << 20;
/// Packed frames are kept in buffers of about this size, so that a growing
/// feed is never reallocated (a doubling would hold both copies at once).
const SEGMENT: usize = 1 << 20;

/// One packet's place in the feed.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The sequence number of the skill's newest change.
    seq: i64,
    /// Its bytes in the JSON of the whole feed (the packets separated by commas).
    start: usize,
    end: usize,
    /// Where its frame is, in a packed feed: segment, offset, length.
    frame: (u32, u32, u32),
    /// A tombstone: served to `?since=` requests only.
    deprecated: bool,
}

/// How a feed holds its packets.
#[derive(Debug)]
enum Packets {
    /// The JSON of the whole feed.
    Plain(Bytes),
    /// Segments of zstd frames, one frame per packet.
    Packed(Vec<Bytes>),
}

/// The packets of one sequence number.
#[derive(Debug)]
pub struct Feed {
    /// The sequence number the feed reflects.
    pub seq: i64,
    packets: Packets,
    /// One per packet, in sequence order.
    entries: Vec<Entry>,
    /// `confidence_sums[i]`: the stored confidences of entries `..i`, so the
    /// `avgConfidence` of any run costs two lookups.
    confidence_sums: Vec<f64>,
    /// Whether any entry is a tombstone.
    has_tombstones: bool,
}

/// A feed being built from the store's rows, in sequence order.
#[derive(Debug)]
pub(super) struct FeedBuilder {
    segments: Vec<Bytes>,
    segment: Vec<u8>,
    entries: Vec<Entry>,
    confidence_sums: Vec<f64>,
    has_tombstones: bool,
}

impl Default for FeedBuilder {
    fn default() -> Self {
        FeedBuilder {
            segments: Vec::new(),
            segment: Vec::new(),
            entries: Vec::new(),
            confidence_sums: vec![0.0],
            has_tombstones: false,
        }
    }
}

impl FeedBuilder {
    /// Adds the next row.
    pub(super) fn push(&mut self, row: FeedRow<'_>) {
        let start = self.entries.last().map_or(0, |e| e.end + 1);
        if !self.segment.is_empty() && self.segment.len() + row.frame.len() > SEGMENT {
            self.segments.push(Bytes::from(std::mem::take(&mut self.segment)));
        }
        if self.segment.is_empty() {
            self.segment.reserve_exact(SEGMENT.max(row.frame.len()));
        }
        // Segments hold at most 4 GiB each: a frame is at most the body limit.
        let frame = (self.segments.len() as u32, self.segment.len() as u32, row.frame.len() as u32);
        self.segment.extend_from_slice(row.frame);
        self.entries.push(Entry {
            seq: row.seq,
            start,
            end: start + row.size,
            frame,
            deprecated: row.deprecated,
        });
        self.confidence_sums.push(self.confidence_sums[self.entries.len() - 1] + row.confidence);
        self.has_tombstones |= row.deprecated;
    }

    /// The feed at sequence number `seq`: unpacked into one buffer when its
    /// JSON is at most `plain_max` bytes ([`PLAIN_MAX`] for a node's own).
    pub(super) fn finish(mut self, seq: i64, plain_max: usize) -> Result<Feed, StoreError> {
        if !self.segment.is_empty() {
            self.segments.push(Bytes::from(std::mem::take(&mut self.segment)));
        }
        let mut feed = Feed {
            seq,
            packets: Packets::Packed(self.segments),
            entries: self.entries,
            confidence_sums: self.confidence_sums,
            has_tombstones: self.has_tombstones,
        };
        let json_len = feed.entries.last().map_or(0, |e| e.end);
        if json_len <= plain_max {
            let mut buf = Vec::with_capacity(json_len);
            if !feed.entries.is_empty() {
                feed.unpack_run(&(0..feed.entries.len()), 0, usize::MAX, &mut buf)?;
            }
            feed.packets = Packets::Plain(Bytes::from(buf));
        }
        Ok(feed)
    }
}

/// How much one answer may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLimit {
    /// Most packets.
    pub packets: usize,
    /// Most packet bytes; one packet is always served, whatever its size,
    /// so that every page makes progress.
    pub bytes: usize,
}

/// A run of the feed: what one answer serves.
#[derive(Debug, Clone)]
pub struct Cut {
    /// Entries served.
    range: Range<usize>,
    /// Whether packets after the run remain (the answer is a page).
    pub more: bool,
}

impl Feed {
    /// The packets changed after `since`, as many as `limit` allows.
    pub fn since(&self, since: i64, limit: Option<PageLimit>) -> Cut {
        let first = self.entries.partition_point(|e| e.seq <= since);
        let Some(limit) = limit else { return Cut { range: first..self.entries.len(), more: false } };
        let mut last = first;
        while last < self.entries.len() && last - first < limit.packets.max(1) {
            let bytes = self.entries[last].end - self.entries[first].start;
            if last > first && bytes > limit.bytes {
                break;
            }
            last += 1;
        }
        Cut { range: first..last, more: last < self.entries.len() }
    }

    /// Whether `cut` serves exactly the packets of the full listing (every
    /// live packet, no tombstone), so the cached full listing can answer it.
    pub fn is_full_listing(&self, cut: &Cut) -> bool {
        !self.has_tombstones && cut.range == (0..self.entries.len())
    }

    /// The sequence number an answer serving `cut` reports: the feed's when
    /// it is complete; the last packet's when more remain, so that a client
    /// that asks again `since` it misses nothing.
    pub fn cursor(&self, cut: &Cut) -> i64 {
        match cut.range.end.checked_sub(1).map(|i| self.entries[i].seq) {
            Some(last) if cut.more => last,
            _ => self.seq,
        }
    }

    /// The length of the JSON of entries `range` (at least one) and the
    /// commas between them.
    pub(super) fn run_len(&self, range: &Range<usize>) -> usize {
        self.entries[range.end - 1].end - self.entries[range.start].start
    }

    /// Appends to `out` the JSON of entries `range` from entry `next` on
    /// (with the comma before it unless it opens the run), until `out`
    /// holds `budget` bytes or more or the run ends; returns the entry after
    /// the last one appended. At least one entry is appended.
    pub(super) fn unpack_run(
        &self,
        range: &Range<usize>,
        next: usize,
        budget: usize,
        out: &mut Vec<u8>,
    ) -> Result<usize, StoreError> {
        let mut i = next;
        while i < range.end && (i == next || out.len() < budget) {
            if i > range.start {
                out.push(b',');
            }
            let entry = &self.entries[i];
            match &self.packets {
                Packets::Plain(buf) => out.extend_from_slice(&buf[entry.start..entry.end]),
                Packets::Packed(segments) => {
                    let (segment, offset, len) =
                        (entry.frame.0 as usize, entry.frame.1 as usize, entry.frame.2);
                    let frame = &segments[segment][offset..offset + len as usize];
                    unpack_into(frame, entry.end - entry.start, out)?;
                }
            }
            i += 1;
        }
        Ok(i)
    }

    /// Entries `range` as one piece of a body: a slice of a plain feed's
    /// buffer, or a run a packed feed unpacks as it is sent.
    fn run(self: &Arc<Self>, range: Range<usize>) -> Piece {
        match &self.packets {
            _ if range.is_empty() => Piece::Bytes(Bytes::new()),
            Packets::Plain(buf) => {
                Piece::Bytes(buf.slice(self.entries[range.start].start..self.entries[range.end - 1].end))
            }
            Packets::Packed(_) => Piece::Packets(self.clone(), range),
        }
    }

    /// The answer serving `cut`: a header, the packets (shared with the
    /// feed, not copied) and a footer.
    pub fn answer(self: &Arc<Self>, instance: &str, cut: &Cut, uptime_hours: f64) -> Pieces {
        let count = cut.range.len();
        let sum = self.confidence_sums[cut.range.end] - self.confidence_sums[cut.range.start];
        let cursor = self.cursor(cut);
        Pieces::new(vec![
            Piece::Bytes(Bytes::from(header(instance, self.seq))),
            self.run(cut.range.clone()),
            Piece::Bytes(Bytes::from(footer(count, sum, uptime_hours, cursor, cut.more.then_some(cursor)))),
        ])
    }

    /// The full listing: every live packet (it is cached, gzipped and
    /// digested once per sequence number). The packets are the runs of the
    /// feed between tombstones, shared with the feed, so the listing costs
    /// no second copy of them.
    pub fn full_listing(self: &Arc<Self>, instance: &str, uptime_hours: f64) -> Pieces {
        let mut pieces = vec![Piece::Bytes(Bytes::from(header(instance, self.seq)))];
        let (mut count, mut sum) = (0, 0.0);
        let mut i = 0;
        while i < self.entries.len() {
            if self.entries[i].deprecated {
                i += 1;
                continue;
            }
            let first = i;
            while i < self.entries.len() && !self.entries[i].deprecated {
                i += 1;
            }
            if count > 0 {
                pieces.push(Piece::Bytes(Bytes::from_static(b",")));
            }
            pieces.push(self.run(first..i));
            count += i - first;
            sum += self.confidence_sums[i] - self.confidence_sums[first];
        }
        pieces.push(Piece::Bytes(Bytes::from(footer(count, sum, uptime_hours, self.seq, None))));
        Pieces::new(pieces)
    }
}

/// An `ECPKnowledgeUpdate` up to the opening of its `skills` array.
fn header(instance: &str, seq: i64) -> Vec<u8> {
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    format!(
        "{{\"id\":{},\"peerInstance\":{},\"generatedAt\":\"{}\",\"skills\":[",
        quoted(&format!("{instance}-{seq}")),
        quoted(instance),
        now()
    )
    .into_bytes()
}

/// The rest of an `ECPKnowledgeUpdate` after its packets: the stats, the
/// `sequenceNum`, and `next` when the answer is a page with more to come.
fn footer(count: usize, confidence_sum: f64, uptime_hours: f64, sequence: i64, next: Option<i64>) -> Vec<u8> {
    let avg = if count == 0 { 0.0 } else { confidence_sum / count as f64 };
    let stats = serde_json::json!({
        "totalSkills": count,
        "totalExtractions": 0,
        "avgConfidence": avg,
        "uptimeHours": uptime_hours,
        "topWorkflows": [],
    });
    let next = next.map(|n| format!(",\"next\":{n}")).unwrap_or_default();
    format!("],\"stats\":{stats},\"sequenceNum\":{sequence}{next}}}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A feed of `rows` (seq, name, tombstone) at `seq`, kept plain up to `plain_max` bytes.
    fn build(seq: i64, rows: &[(i64, &str, bool)], plain_max: usize) -> Arc<Feed> {
        let mut builder = FeedBuilder::default();
        for &(seq, name, deprecated) in rows {
            let json = format!("{{\"name\":\"{name}\"}}");
            let frame = zstd::bulk::compress(json.as_bytes(), 3).unwrap();
            builder.push(FeedRow { seq, frame: &frame, size: json.len(), confidence: 0.5, deprecated });
        }
        Arc::new(builder.finish(seq, plain_max).unwrap())
    }

    const ROWS: [(i64, &str, bool); 4] = [(2, "a", false), (4, "b", true), (7, "c", false), (9, "d", false)];

    fn feed() -> Arc<Feed> {
        build(9, &ROWS, PLAIN_MAX)
    }

    fn bytes(pieces: &Pieces) -> Vec<u8> {
        let mut out = Vec::new();
        pieces.visit(|b| out.extend_from_slice(b)).unwrap();
        assert_eq!(out.len() as u64, pieces.len(), "the stated length is the body's");
        out
    }

    fn decode(pieces: &Pieces) -> serde_json::Value {
        serde_json::from_slice(&bytes(pieces)).expect("an answer is JSON")
    }

    fn names(answer: &serde_json::Value) -> Vec<&str> {
        answer["skills"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect()
    }

    #[test]
    fn an_incremental_answer_is_the_run_after_since_tombstones_included() {
        let feed = feed();
        let answer = decode(&feed.answer("n", &feed.since(3, None), 0.0));
        assert_eq!(names(&answer), ["b", "c", "d"]);
        assert_eq!(answer["sequenceNum"], 9);
        assert_eq!(answer["stats"]["totalSkills"], 3);
        assert!(answer.get("next").is_none());
        let none = decode(&feed.answer("n", &feed.since(9, None), 0.0));
        assert_eq!(names(&none), Vec::<&str>::new());
    }

    #[test]
    fn the_full_listing_leaves_tombstones_out_and_shares_the_feeds_bytes() {
        let feed = feed();
        let pieces = feed.full_listing("n", 0.0);
        let listing = decode(&pieces);
        assert_eq!(names(&listing), ["a", "c", "d"]);
        assert_eq!(listing["stats"]["totalSkills"], 3);
        assert_eq!(listing["stats"]["avgConfidence"], 0.5);
        assert!(listing.get("next").is_none());
        assert!(!feed.is_full_listing(&feed.since(0, None)), "since=0 carries the tombstone");
        // The packets are slices of the feed's one buffer, not copies of it.
        let Packets::Plain(buf) = &feed.packets else { panic!("a small feed is plain") };
        let buf = buf.as_ptr_range();
        let packets: Vec<&Bytes> = pieces
            .items()
            .iter()
            .filter_map(|p| match p {
                Piece::Bytes(b) if b.starts_with(b"{\"name\"") => Some(b),
                _ => None,
            })
            .collect();
        assert_eq!(packets.len(), 2, "a, then the run c,d after the tombstone");
        assert!(packets.iter().all(|p| buf.contains(&p.as_ptr())), "every run points into the feed");
    }

    #[test]
    fn a_full_listing_is_one_run_without_tombstones_and_empty_without_packets() {
        let feed = build(3, &[(1, "a", false), (3, "b", false)], PLAIN_MAX);
        let pieces = feed.full_listing("n", 0.0);
        assert_eq!(pieces.items().len(), 3, "header, one run, footer");
        assert_eq!(names(&decode(&pieces)), ["a", "b"]);
        assert!(feed.is_full_listing(&feed.since(0, None)));
        let only_tombstones = build(2, &[(2, "x", true)], PLAIN_MAX);
        let empty = decode(&only_tombstones.full_listing("n", 0.0));
        assert_eq!(names(&empty), Vec::<&str>::new());
        assert_eq!(
            (empty["stats"]["totalSkills"].as_i64(), empty["stats"]["avgConfidence"].as_f64()),
            (Some(0), Some(0.0))
        );
        let nothing = build(0, &[], 0);
        assert_eq!(names(&decode(&nothing.full_listing("n", 0.0))), Vec::<&str>::new());
        assert_eq!(names(&decode(&nothing.answer("n", &nothing.since(0, None), 0.0))), Vec::<&str>::new());
    }

    #[test]
    fn pages_end_at_the_packet_limit_and_name_the_cursor_of_the_next() {
        let feed = feed();
        let limit = PageLimit { packets: 2, bytes: usize::MAX };
        let first = feed.since(0, Some(limit));
        let answer = decode(&feed.answer("n", &first, 0.0));
        assert_eq!(names(&answer), ["a", "b"]);
        assert_eq!((answer["sequenceNum"].as_i64(), answer["next"].as_i64()), (Some(4), Some(4)));
        let last = decode(&feed.answer("n", &feed.since(4, Some(limit)), 0.0));
        assert_eq!(names(&last), ["c", "d"]);
        assert_eq!(last["sequenceNum"], 9);
        assert!(last.get("next").is_none(), "the last page has no next");
    }

    #[test]
    fn a_byte_budget_is_kept_at_its_limit_and_one_over_but_always_serves_one_packet() {
        let feed = feed();
        let one = r#"{"name":"a"}"#.len();
        let at = |bytes| feed.since(0, Some(PageLimit { packets: 100, bytes })).range.len();
        assert_eq!(at(1), 1, "a packet larger than the budget still goes, alone");
        assert_eq!(at(2 * one + 1), 2, "two packets and their comma fit exactly");
        assert_eq!(at(2 * one), 1, "one byte less and the second waits");
    }

    #[test]
    fn a_feed_stays_plain_up_to_its_maximum_and_is_packed_one_byte_over() {
        // {"name":"a"},{"name":"b"},… : four packets of 12 bytes and three commas.
        let json_len = 4 * 12 + 3;
        assert!(matches!(build(9, &ROWS, json_len).packets, Packets::Plain(_)));
        assert!(matches!(build(9, &ROWS, json_len - 1).packets, Packets::Packed(_)));
    }

    #[test]
    fn a_packed_feed_answers_byte_for_byte_what_a_plain_one_does() {
        let rows: Vec<(i64, String, bool)> = (1..=300)
            .map(|i| (i, format!("skill-{i}-{}", "x".repeat(i as usize % 97)), i % 50 == 7))
            .collect();
        let rows: Vec<(i64, &str, bool)> = rows.iter().map(|(s, n, d)| (*s, n.as_str(), *d)).collect();
        let plain = build(300, &rows, usize::MAX);
        let packed = build(300, &rows, 0);
        assert!(matches!(packed.packets, Packets::Packed(_)));
        // Headers carry the time: compare what follows the opening of `skills`.
        let body = |p: &Pieces| {
            let all = bytes(p);
            let at = all.windows(10).position(|w| w == b"\"skills\":[").unwrap();
            all[at..].to_vec()
        };
        assert_eq!(body(&packed.full_listing("n", 1.0)), body(&plain.full_listing("n", 1.0)));
        for since in [0, 1, 7, 150, 299, 300] {
            for limit in [
                None,
                Some(PageLimit { packets: 1, bytes: usize::MAX }),
                Some(PageLimit { packets: 40, bytes: 900 }),
            ] {
                let (a, b) = (packed.since(since, limit), plain.since(since, limit));
                assert_eq!(a.range, b.range);
                assert_eq!(
                    body(&packed.answer("n", &a, 1.0)),
                    body(&plain.answer("n", &b, 1.0)),
                    "since {since}, {limit:?}"
                );
            }
        }
    }

    #[tokio::test]
    async fn a_packed_listing_is_sent_in_slices_that_add_up_to_it() {
        let names: Vec<String> = (0..2000).map(|i| format!("{i}-{}", "y".repeat(100))).collect();
        let rows: Vec<(i64, &str, bool)> =
            names.iter().enumerate().map(|(i, n)| (i as i64 + 1, n.as_str(), false)).collect();
        let feed = build(2000, &rows, 0);
        let pieces = feed.full_listing("n", 0.0);
        let mut body = pieces.body();
        let mut sent = Vec::new();
        let mut frames = 0;
        while let Some(frame) = http_body_util::BodyExt::frame(&mut body).await {
            let data = frame.unwrap().into_data().unwrap();
            assert!(data.len() <= 64 * 1024 + 200, "a slice is bounded, not the listing: {}", data.len());
            sent.extend_from_slice(&data);
            frames += 1;
        }
        assert!(frames > 3, "about 230 KB goes in several slices");
        assert_eq!(sent, bytes(&pieces));
        assert_eq!(pieces.digest().unwrap(), ecp_protocol::signed_auth::body_digest(&sent));
    }

    #[test]
    fn a_corrupt_frame_fails_the_feed_not_the_node() {
        let mut builder = FeedBuilder::default();
        builder.push(FeedRow { seq: 1, frame: b"not zstd", size: 8, confidence: 0.5, deprecated: false });
        assert!(matches!(builder.finish(1, PLAIN_MAX), Err(StoreError::Corrupt(_))));
    }
}
