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
//! buffer, and an answer is slices of it. A larger feed keeps runs of about
//! [`CHUNK`] bytes of packets as zstd frames, and an answer unpacks them a
//! run at a time as it is sent ([`super::pieces`]). Runs, not single
//! packets: a packet of 2 KB alone compresses about 2:1, a run of them 5:1
//! and better, and it is the feed that a large node holds in memory.

use std::ops::Range;
use std::sync::Arc;

use axum::body::Bytes;

use super::pieces::{Piece, Pieces};
use ecp_protocol::Timestamp;

use crate::serving::Stamp;
use crate::store::{FeedRow, StoreError, unpack_into};

/// The most JSON a feed keeps unpacked: a feed of 10,000 skills (about
/// 17 MB) is served as slices of one buffer, with no work per request.
pub(super) const PLAIN_MAX: usize = 32 << 20;
/// The JSON of packets a larger feed packs into one frame: what a reader
/// unpacks at a time.
pub(super) const CHUNK: usize = 128 << 10;
/// zstd's fastest level: the feed is packed again on every change.
const LEVEL: i32 = 1;

/// One packet's place in the feed.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The sequence number of the skill's newest change.
    seq: i64,
    /// Its bytes in the JSON of the whole feed (the packets separated by commas).
    start: usize,
    end: usize,
    /// A tombstone: served to `?since=` requests only.
    deprecated: bool,
}

/// How a feed holds its packets.
#[derive(Debug)]
enum Packets {
    /// The JSON of the whole feed.
    Plain(Bytes),
    /// Runs of packets, each a zstd frame of their JSON with the index of
    /// its first entry, in order.
    Packed(Vec<(usize, Bytes)>),
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
    /// What `stats` say of the node.
    node: NodeStats,
    /// The revocations held (`SPEC.md` §14), each with the sequence number
    /// that recorded it and its JSON, in sequence order.
    revocations: Vec<(i64, String)>,
    /// The `generatedAt` and `uptimeHours` its answers carry, when the store
    /// fixes them (a hub's); `None`: the clock's when answered.
    stamp: Option<Stamp>,
}

/// What every answer's `stats` say of the node as a whole, as of the
/// feed's sequence number (the rest of `stats` is the answer's packets).
#[derive(Debug, Clone, Default)]
pub struct NodeStats {
    /// Its own active skills (`totalExtractions`: the skills its agents made).
    pub extractions: i64,
    /// The most used tags of the skills it serves (`topWorkflows`).
    pub top_tags: Vec<String>,
    /// Uses of its skills its agents reported (`totalUses`, our addition).
    pub uses: i64,
    /// Of those, successes (`totalSuccesses`, our addition).
    pub successes: i64,
}

/// A feed being built from the store's rows, in sequence order.
#[derive(Debug)]
pub(super) struct FeedBuilder {
    plain_max: usize,
    chunk: usize,
    /// The JSON not packed yet, from entry `open` on: all of it while the
    /// feed is plain.
    json: Vec<u8>,
    open: usize,
    /// The packed runs, once the feed is larger than `plain_max`.
    packed: Option<Vec<(usize, Bytes)>>,
    /// Where a run is compressed before its frame is copied out at its size.
    scratch: Vec<u8>,
    entries: Vec<Entry>,
    confidence_sums: Vec<f64>,
    has_tombstones: bool,
}

/// The zstd frame of `json`, in a buffer of exactly its size: compressed
/// into `scratch` (kept from run to run) and copied out. zstd's own
/// `compress` returns its worst-case buffer, the size of the input: kept as
/// a frame, each 128 KB run held 128 KB for 25 KB of frame, and a feed of
/// 100,000 skills (240 MB of JSON) held 240 MB instead of 50 (#18 item 3).
fn frame_of(json: &[u8], scratch: &mut Vec<u8>) -> Vec<u8> {
    scratch.resize(zstd::zstd_safe::compress_bound(json.len()), 0);
    let n = zstd::bulk::compress_to_buffer(json, scratch, LEVEL).expect("the buffer holds zstd's worst case");
    scratch[..n].to_vec()
}

impl FeedBuilder {
    /// A feed kept plain up to `plain_max` bytes of JSON ([`PLAIN_MAX`] for
    /// a node's own), packed in runs of `chunk` bytes ([`CHUNK`]) above.
    pub(super) fn new(plain_max: usize, chunk: usize) -> Self {
        FeedBuilder {
            plain_max,
            chunk,
            // The whole plain maximum up front: pages never written take no
            // memory, and growing by doubling would copy the buffer each time
            // (16 MB of packets would briefly cost 48).
            json: Vec::with_capacity(plain_max.min(PLAIN_MAX)),
            open: 0,
            packed: None,
            scratch: Vec::new(),
            entries: Vec::new(),
            confidence_sums: vec![0.0],
            has_tombstones: false,
        }
    }

    /// A builder for a feed expected to hold about `bytes` of JSON (the
    /// last one's size): one over the plain maximum is packed from its first
    /// packet, so it never holds the plain maximum on the way.
    pub(super) fn expecting(mut self, bytes: usize) -> Self {
        if bytes > self.plain_max {
            self.packed = Some(Vec::new());
            self.json = Vec::new();
        }
        self
    }

    /// Adds the next row.
    pub(super) fn push(&mut self, row: FeedRow<'_>) -> Result<(), StoreError> {
        let start = self.entries.last().map_or(0, |e| e.end + 1);
        if self.packed.is_none() && start + row.size > self.plain_max {
            // Too large to keep plain: pack what there is, in runs, before
            // this packet makes the buffer outgrow the room reserved for it
            // (a doubling there would hold twice the plain maximum at once).
            self.packed = Some(Vec::new());
            self.pack(self.entries.len());
        }
        if self.open < self.entries.len() {
            self.json.push(b',');
        }
        let before = self.json.len();
        unpack_into(row.frame, row.size, &mut self.json)?;
        crate::store::add_claims(&mut self.json, row.claims);
        let size = self.json.len() - before;
        self.entries.push(Entry { seq: row.seq, start, end: start + size, deprecated: row.deprecated });
        self.confidence_sums.push(self.confidence_sums[self.entries.len() - 1] + row.confidence);
        self.has_tombstones |= row.deprecated;
        if self.packed.is_some() && self.json.len() >= self.chunk {
            self.pack(self.entries.len());
        }
        Ok(())
    }

    /// Packs the open JSON, entries `open..until`, in runs of about `chunk` bytes.
    fn pack(&mut self, until: usize) {
        let runs = self.packed.get_or_insert_with(Vec::new);
        let base = self.entries.get(self.open).map_or(0, |e| e.start);
        let mut first = self.open;
        while first < until {
            let mut last = first + 1;
            // A run ends with the packet that takes it to `chunk` bytes or more.
            while last < until && self.entries[last - 1].end - self.entries[first].start < self.chunk {
                last += 1;
            }
            let json = &self.json[self.entries[first].start - base..self.entries[last - 1].end - base];
            runs.push((first, Bytes::from(frame_of(json, &mut self.scratch))));
            first = last;
        }
        self.open = until;
        self.json = Vec::new();
    }

    /// The feed at sequence number `seq`.
    pub(super) fn finish(mut self, seq: i64) -> Feed {
        let packets = match self.packed {
            Some(_) => {
                self.pack(self.entries.len());
                Packets::Packed(self.packed.take().unwrap_or_default())
            }
            None => Packets::Plain(Bytes::from(std::mem::take(&mut self.json))),
        };
        Feed {
            seq,
            packets,
            entries: self.entries,
            confidence_sums: self.confidence_sums,
            has_tombstones: self.has_tombstones,
            node: NodeStats::default(),
            revocations: Vec::new(),
            stamp: None,
        }
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
    /// The `since` it answers: the revocations recorded after it go with it.
    since: i64,
}

impl Feed {
    /// The feed with what its answers' `stats` say of the node.
    pub fn with_node_stats(mut self, node: NodeStats) -> Feed {
        self.node = node;
        self
    }

    /// The feed with the stamp its answers carry (see [`Serving::stamp`](crate::serving::Serving::stamp)).
    pub fn with_stamp(mut self, stamp: Option<Stamp>) -> Feed {
        self.stamp = stamp;
        self
    }

    /// The stamp its answers carry, when the store fixed it.
    pub fn stamp(&self) -> Option<Stamp> {
        self.stamp
    }

    /// The length of the JSON of all its packets and the commas between them.
    pub(super) fn json_len(&self) -> usize {
        self.entries.last().map_or(0, |e| e.end)
    }

    /// The feed with the revocations its answers carry (`SPEC.md` §14.4):
    /// `(sequence number, JSON)` in sequence order.
    pub fn with_revocations(mut self, revocations: Vec<(i64, String)>) -> Feed {
        self.revocations = revocations;
        self
    }

    /// The JSON array of the revocations recorded after `since`; empty when none.
    fn revocations_after(&self, since: i64) -> String {
        let first = self.revocations.partition_point(|(seq, _)| *seq <= since);
        let all: Vec<&str> = self.revocations[first..].iter().map(|(_, json)| json.as_str()).collect();
        if all.is_empty() { String::new() } else { format!("[{}]", all.join(",")) }
    }

    /// The packets changed after `since`, as many as `limit` allows.
    pub fn since(&self, since: i64, limit: Option<PageLimit>) -> Cut {
        let first = self.entries.partition_point(|e| e.seq <= since);
        let Some(limit) = limit else { return Cut { range: first..self.entries.len(), more: false, since } };
        let mut last = first;
        while last < self.entries.len() && last - first < limit.packets.max(1) {
            let bytes = self.entries[last].end - self.entries[first].start;
            if last > first && bytes > limit.bytes {
                break;
            }
            last += 1;
        }
        Cut { range: first..last, more: last < self.entries.len(), since }
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
    /// (with the comma before it unless it opens the run), as far as the
    /// packed run that holds `next` goes (one frame unpacked) or to the end
    /// of `range`; returns the entry after the last one appended.
    pub(super) fn unpack_run(
        &self,
        range: &Range<usize>,
        next: usize,
        out: &mut Vec<u8>,
    ) -> Result<usize, StoreError> {
        if next > range.start {
            out.push(b',');
        }
        match &self.packets {
            Packets::Plain(buf) => {
                out.extend_from_slice(&buf[self.entries[next].start..self.entries[range.end - 1].end]);
                Ok(range.end)
            }
            Packets::Packed(runs) => {
                let run = runs.partition_point(|(first, _)| *first <= next) - 1;
                let first = runs[run].0;
                let after = runs.get(run + 1).map_or(self.entries.len(), |(f, _)| *f);
                let base = self.entries[first].start;
                let size = self.entries[after - 1].end - base;
                let last = after.min(range.end) - 1;
                if next == first && last + 1 == after {
                    // The whole run (what a full listing sends): unpacked
                    // straight into `out`, with no second buffer per reader.
                    unpack_into(&runs[run].1, size, out)?;
                    return Ok(after);
                }
                let mut json = Vec::new();
                unpack_into(&runs[run].1, size, &mut json)?;
                out.extend_from_slice(&json[self.entries[next].start - base..self.entries[last].end - base]);
                Ok(last + 1)
            }
        }
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
    pub fn answer(self: &Arc<Self>, instance: &str, cut: &Cut, stamp: &Stamp) -> Pieces {
        let count = cut.range.len();
        let sum = self.confidence_sums[cut.range.end] - self.confidence_sums[cut.range.start];
        let cursor = self.cursor(cut);
        Pieces::new(vec![
            Piece::Bytes(Bytes::from(header(instance, self.seq, &stamp.generated_at))),
            self.run(cut.range.clone()),
            Piece::Bytes(Bytes::from(footer(
                &self.node,
                count,
                sum,
                stamp.uptime_hours,
                cursor,
                cut.more.then_some(cursor),
                &self.revocations_after(cut.since),
            ))),
        ])
    }

    /// The full listing: every live packet (it is cached, gzipped and
    /// digested once per sequence number). The packets are the runs of the
    /// feed between tombstones, shared with the feed, so the listing costs
    /// no second copy of them.
    pub fn full_listing(self: &Arc<Self>, instance: &str, stamp: &Stamp) -> Pieces {
        let mut pieces = vec![Piece::Bytes(Bytes::from(header(instance, self.seq, &stamp.generated_at)))];
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
        let revocations = self.revocations_after(0);
        pieces.push(Piece::Bytes(Bytes::from(footer(
            &self.node,
            count,
            sum,
            stamp.uptime_hours,
            self.seq,
            None,
            &revocations,
        ))));
        Pieces::new(pieces)
    }
}

/// An `ECPKnowledgeUpdate` up to the opening of its `skills` array.
fn header(instance: &str, seq: i64, generated_at: &Timestamp) -> Vec<u8> {
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    format!(
        "{{\"id\":{},\"peerInstance\":{},\"generatedAt\":\"{}\",\"skills\":[",
        quoted(&format!("{instance}-{seq}")),
        quoted(instance),
        generated_at
    )
    .into_bytes()
}

/// The rest of an `ECPKnowledgeUpdate` after its packets: the stats, the
/// `sequenceNum`, `next` when the answer is a page with more to come, and
/// `revocations` (a JSON array) unless empty.
fn footer(
    node: &NodeStats,
    count: usize,
    confidence_sum: f64,
    uptime_hours: f64,
    sequence: i64,
    next: Option<i64>,
    revocations: &str,
) -> Vec<u8> {
    let avg = if count == 0 { 0.0 } else { confidence_sum / count as f64 };
    let stats = serde_json::json!({
        "totalSkills": count,
        "totalExtractions": node.extractions,
        "avgConfidence": avg,
        "uptimeHours": uptime_hours,
        "topWorkflows": node.top_tags,
        "totalUses": node.uses,
        "totalSuccesses": node.successes,
    });
    let next = next.map(|n| format!(",\"next\":{n}")).unwrap_or_default();
    let revocations =
        if revocations.is_empty() { String::new() } else { format!(",\"revocations\":{revocations}") };
    format!("],\"stats\":{stats},\"sequenceNum\":{sequence}{next}{revocations}}}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed stamp: answers built twice are the same bytes.
    fn stamp(uptime_hours: f64) -> Stamp {
        Stamp { generated_at: Timestamp::parse("2026-11-26T10:00:00Z").unwrap(), uptime_hours }
    }

    /// A feed of `rows` (seq, name, tombstone) at `seq`, kept plain up to `plain_max` bytes.
    fn build(seq: i64, rows: &[(i64, &str, bool)], plain_max: usize) -> Arc<Feed> {
        build_in(seq, rows, plain_max, 256)
    }

    /// Adds the packet `{"name":NAME}` at `seq` to `builder`.
    fn push_row(builder: &mut FeedBuilder, seq: i64, name: &str, deprecated: bool) {
        let json = format!("{{\"name\":\"{name}\"}}");
        let frame = zstd::bulk::compress(json.as_bytes(), 3).unwrap();
        let row = FeedRow { seq, frame: &frame, size: json.len(), confidence: 0.5, deprecated, claims: &[] };
        builder.push(row).unwrap();
    }

    /// [`build`], packed in runs of `chunk` bytes.
    fn build_in(seq: i64, rows: &[(i64, &str, bool)], plain_max: usize, chunk: usize) -> Arc<Feed> {
        let mut builder = FeedBuilder::new(plain_max, chunk);
        for &(seq, name, deprecated) in rows {
            push_row(&mut builder, seq, name, deprecated);
        }
        Arc::new(builder.finish(seq))
    }

    #[test]
    fn a_packed_run_holds_its_frame_and_no_more() {
        let json: Vec<u8> =
            (0..10_000).flat_map(|i| format!("{{\"name\":\"skill-{i}\"}},").into_bytes()).collect();
        let mut scratch = Vec::new();
        let frame = frame_of(&json, &mut scratch);
        assert!(frame.len() < json.len() / 4, "{} bytes of frame for {}", frame.len(), json.len());
        assert_eq!(frame.capacity(), frame.len(), "the frame's buffer is its size, not zstd's worst case");
        assert_eq!(zstd::bulk::decompress(&frame, json.len()).unwrap(), json);
        // The scratch buffer is reused: a second run takes no new worst-case buffer.
        let kept = scratch.capacity();
        let again = frame_of(&json[..json.len() / 2], &mut scratch);
        assert_eq!(scratch.capacity(), kept);
        assert_eq!(zstd::bulk::decompress(&again, json.len() / 2).unwrap(), json[..json.len() / 2]);
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
        let answer = decode(&feed.answer("n", &feed.since(3, None), &stamp(0.0)));
        assert_eq!(names(&answer), ["b", "c", "d"]);
        assert_eq!(answer["sequenceNum"], 9);
        assert_eq!(answer["stats"]["totalSkills"], 3);
        assert!(answer.get("next").is_none());
        let none = decode(&feed.answer("n", &feed.since(9, None), &stamp(0.0)));
        assert_eq!(names(&none), Vec::<&str>::new());
    }

    #[test]
    fn the_full_listing_leaves_tombstones_out_and_shares_the_feeds_bytes() {
        let feed = feed();
        let pieces = feed.full_listing("n", &stamp(0.0));
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
        let pieces = feed.full_listing("n", &stamp(0.0));
        assert_eq!(pieces.items().len(), 3, "header, one run, footer");
        assert_eq!(names(&decode(&pieces)), ["a", "b"]);
        assert!(feed.is_full_listing(&feed.since(0, None)));
        let only_tombstones = build(2, &[(2, "x", true)], PLAIN_MAX);
        let empty = decode(&only_tombstones.full_listing("n", &stamp(0.0)));
        assert_eq!(names(&empty), Vec::<&str>::new());
        assert_eq!(
            (empty["stats"]["totalSkills"].as_i64(), empty["stats"]["avgConfidence"].as_f64()),
            (Some(0), Some(0.0))
        );
        let nothing = build(0, &[], 0);
        assert_eq!(names(&decode(&nothing.full_listing("n", &stamp(0.0)))), Vec::<&str>::new());
        assert_eq!(
            names(&decode(&nothing.answer("n", &nothing.since(0, None), &stamp(0.0)))),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn pages_end_at_the_packet_limit_and_name_the_cursor_of_the_next() {
        let feed = feed();
        let limit = PageLimit { packets: 2, bytes: usize::MAX };
        let first = feed.since(0, Some(limit));
        let answer = decode(&feed.answer("n", &first, &stamp(0.0)));
        assert_eq!(names(&answer), ["a", "b"]);
        assert_eq!((answer["sequenceNum"].as_i64(), answer["next"].as_i64()), (Some(4), Some(4)));
        let last = decode(&feed.answer("n", &feed.since(4, Some(limit)), &stamp(0.0)));
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
    fn a_feed_outgrowing_plain_is_packed_before_its_buffer_grows_past_the_maximum() {
        // Each packet is 12 bytes; at 30 bytes the third one (ending at 38) crosses.
        let plain_max = 30;
        let mut builder = FeedBuilder::new(plain_max, 1 << 20);
        for (i, &(seq, name, deprecated)) in ROWS.iter().enumerate() {
            push_row(&mut builder, seq, name, deprecated);
            assert!(
                builder.json.len() <= plain_max,
                "after packet {i} the buffer holds {}",
                builder.json.len()
            );
            assert_eq!(builder.packed.is_some(), i >= 2, "packed from the crossing packet on (after {i})");
        }
        let feed = Arc::new(builder.finish(9));
        // The first run ends before the crossing packet: it was packed
        // before that packet was appended, not after.
        let Packets::Packed(runs) = &feed.packets else { panic!("a feed over its plain maximum is packed") };
        assert_eq!(runs.iter().map(|(first, _)| *first).collect::<Vec<_>>(), [0, 2]);
        // A builder told to expect a feed that large packs from the first packet.
        let mut expecting = FeedBuilder::new(plain_max, 1 << 20).expecting(feed.json_len());
        for &(seq, name, deprecated) in &ROWS {
            push_row(&mut expecting, seq, name, deprecated);
            assert!(expecting.packed.is_some(), "packed from the first packet");
        }
        let Packets::Packed(runs) = &expecting.finish(9).packets else { panic!("packed") };
        assert_eq!(runs.iter().map(|(first, _)| *first).collect::<Vec<_>>(), [0]);
        assert!(
            FeedBuilder::new(plain_max, 1 << 20).expecting(plain_max).packed.is_none(),
            "at the maximum: plain"
        );
        let plain = build(9, &ROWS, PLAIN_MAX);
        assert_eq!(
            decode(&feed.full_listing("n", &stamp(0.0)))["skills"],
            decode(&plain.full_listing("n", &stamp(0.0)))["skills"]
        );
        assert_eq!(names(&decode(&feed.full_listing("n", &stamp(0.0)))), ["a", "c", "d"]);
    }

    #[test]
    fn a_packed_feed_answers_byte_for_byte_what_a_plain_one_does() {
        let rows: Vec<(i64, String, bool)> = (1..=300)
            .map(|i| (i, format!("skill-{i}-{}", "x".repeat(i as usize % 97)), i % 50 == 7))
            .collect();
        let rows: Vec<(i64, &str, bool)> = rows.iter().map(|(s, n, d)| (*s, n.as_str(), *d)).collect();
        let plain = build(300, &rows, usize::MAX);
        // Packed from the first packet, and packed once the feed outgrew its plain maximum.
        for packed in
            [build_in(300, &rows, 0, 1000), build_in(300, &rows, 9000, 700), build_in(300, &rows, 0, 1)]
        {
            assert!(matches!(packed.packets, Packets::Packed(_)));
            // Headers carry the time: compare what follows the opening of `skills`.
            let body = |p: &Pieces| {
                let all = bytes(p);
                let at = all.windows(10).position(|w| w == b"\"skills\":[").unwrap();
                all[at..].to_vec()
            };
            assert_eq!(
                body(&packed.full_listing("n", &stamp(1.0))),
                body(&plain.full_listing("n", &stamp(1.0)))
            );
            for since in [0, 1, 7, 150, 299, 300] {
                for limit in [
                    None,
                    Some(PageLimit { packets: 1, bytes: usize::MAX }),
                    Some(PageLimit { packets: 40, bytes: 900 }),
                ] {
                    let (a, b) = (packed.since(since, limit), plain.since(since, limit));
                    assert_eq!(a.range, b.range);
                    assert_eq!(
                        body(&packed.answer("n", &a, &stamp(1.0))),
                        body(&plain.answer("n", &b, &stamp(1.0))),
                        "since {since}, {limit:?}"
                    );
                }
            }
        }
    }

    #[tokio::test]
    async fn a_packed_listing_is_sent_a_run_at_a_time_and_adds_up_to_it() {
        let names: Vec<String> = (0..2000).map(|i| format!("{i}-{}", "y".repeat(100))).collect();
        let rows: Vec<(i64, &str, bool)> =
            names.iter().enumerate().map(|(i, n)| (i as i64 + 1, n.as_str(), false)).collect();
        let feed = build_in(2000, &rows, 0, 4096);
        let Packets::Packed(runs) = &feed.packets else { panic!("packed") };
        // About 230 KB in runs of 4 KB or one packet more, none of them tiny.
        assert!(runs.len() > 50 && runs.len() < 60, "{} runs", runs.len());
        let pieces = feed.full_listing("n", &stamp(0.0));
        let mut body = pieces.body();
        let mut sent = Vec::new();
        while let Some(frame) = http_body_util::BodyExt::frame(&mut body).await {
            let data = frame.unwrap().into_data().unwrap();
            assert!(data.len() <= 4096 + 200, "a slice is a run, not the listing: {}", data.len());
            sent.extend_from_slice(&data);
        }
        assert_eq!(sent, bytes(&pieces));
        assert_eq!(pieces.digest().unwrap(), ecp_protocol::signed_auth::body_digest(&sent));
    }

    #[test]
    fn a_corrupt_frame_fails_the_feed_not_the_node() {
        let mut builder = FeedBuilder::new(PLAIN_MAX, CHUNK);
        let row =
            FeedRow { seq: 1, frame: b"not zstd", size: 8, confidence: 0.5, deprecated: false, claims: &[] };
        assert!(matches!(builder.push(row), Err(StoreError::Corrupt(_))));
    }
}
