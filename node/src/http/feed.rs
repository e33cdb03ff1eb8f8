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
mod tests;
