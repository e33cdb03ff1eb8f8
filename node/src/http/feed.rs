//! The feed: every shareable packet, tombstones included, in sequence
//! order, encoded once per change into one buffer with the byte range of
//! each packet. Every `GET /ecp/skills` answer is cut from it (`SPEC.md`
//! §5.3, §10.2): the full listing is its live packets, an incremental
//! answer (`?since=N`) a contiguous run of it, a page (`&limit=M`) a bounded
//! run. So an incremental answer shares the feed's bytes instead of
//! materialising its own copy per request: 16 readers of a 20 MB answer
//! cost 20 MB, not 320 MB.

use std::ops::Range;

use axum::body::Bytes;

use crate::store::{FeedRow, now};

/// One packet's place in the feed.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The sequence number of the skill's newest change.
    seq: i64,
    /// Its bytes in [`Feed::buf`].
    start: usize,
    end: usize,
    /// A tombstone: served to `?since=` requests only.
    deprecated: bool,
}

/// The encoded packets of one sequence number.
#[derive(Debug)]
pub struct Feed {
    /// The sequence number the feed reflects.
    pub seq: i64,
    /// The packets' JSON, separated by commas.
    buf: Bytes,
    /// One per packet, in sequence order.
    entries: Vec<Entry>,
    /// `confidence_sums[i]`: the stored confidences of entries `..i`, so the
    /// `avgConfidence` of any run costs two lookups.
    confidence_sums: Vec<f64>,
    /// Whether any entry is a tombstone.
    has_tombstones: bool,
    /// What `stats` say of the node.
    node: NodeStats,
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
    /// Encodes `rows` (in sequence order) at sequence number `seq`.
    pub fn build(seq: i64, rows: Vec<FeedRow>) -> Feed {
        let capacity = rows.iter().map(|r| r.packet.len() + 1).sum::<usize>();
        let mut buf = Vec::with_capacity(capacity);
        let mut entries = Vec::with_capacity(rows.len());
        let mut confidence_sums = Vec::with_capacity(rows.len() + 1);
        confidence_sums.push(0.0);
        let mut has_tombstones = false;
        for (i, row) in rows.into_iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            let start = buf.len();
            buf.extend_from_slice(row.packet.as_bytes());
            entries.push(Entry { seq: row.seq, start, end: buf.len(), deprecated: row.deprecated });
            confidence_sums.push(confidence_sums[i] + row.confidence);
            has_tombstones |= row.deprecated;
        }
        Feed {
            seq,
            buf: Bytes::from(buf),
            entries,
            confidence_sums,
            has_tombstones,
            node: NodeStats::default(),
        }
    }

    /// The feed with what its answers' `stats` say of the node.
    pub fn with_node_stats(mut self, node: NodeStats) -> Feed {
        self.node = node;
        self
    }

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

    /// The answer serving `cut`, as the parts of its body: a header, the
    /// packets (shared with the feed, not copied) and a footer.
    pub fn answer(&self, instance: &str, cut: &Cut, uptime_hours: f64) -> Vec<Bytes> {
        let count = cut.range.len();
        let packets = if cut.range.is_empty() {
            Bytes::new()
        } else {
            self.buf.slice(self.entries[cut.range.start].start..self.entries[cut.range.end - 1].end)
        };
        let sum = self.confidence_sums[cut.range.end] - self.confidence_sums[cut.range.start];
        let cursor = self.cursor(cut);
        vec![
            Bytes::from(header(instance, self.seq)),
            packets,
            Bytes::from(footer(&self.node, count, sum, uptime_hours, cursor, cut.more.then_some(cursor))),
        ]
    }

    /// The full listing: every live packet, as the parts of its body (it is
    /// cached, gzipped and digested once per sequence number). The packets
    /// are the runs of the feed between tombstones, shared with the feed, so
    /// the listing costs no second copy of them.
    pub fn full_listing(&self, instance: &str, uptime_hours: f64) -> Vec<Bytes> {
        let mut parts = vec![Bytes::from(header(instance, self.seq))];
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
                parts.push(Bytes::from_static(b","));
            }
            parts.push(self.buf.slice(self.entries[first].start..self.entries[i - 1].end));
            count += i - first;
            sum += self.confidence_sums[i] - self.confidence_sums[first];
        }
        parts.push(Bytes::from(footer(&self.node, count, sum, uptime_hours, self.seq, None)));
        parts
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
fn footer(
    node: &NodeStats,
    count: usize,
    confidence_sum: f64,
    uptime_hours: f64,
    sequence: i64,
    next: Option<i64>,
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
    format!("],\"stats\":{stats},\"sequenceNum\":{sequence}{next}}}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seq: i64, name: &str, deprecated: bool) -> FeedRow {
        FeedRow { seq, packet: format!("{{\"name\":\"{name}\"}}"), confidence: 0.5, deprecated }
    }

    fn feed() -> Feed {
        Feed::build(9, vec![row(2, "a", false), row(4, "b", true), row(7, "c", false), row(9, "d", false)])
    }

    fn decode(parts: &[Bytes]) -> serde_json::Value {
        serde_json::from_slice(&parts.concat()).expect("an answer is JSON")
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
        let parts = feed.full_listing("n", 0.0);
        let listing = decode(&parts);
        assert_eq!(names(&listing), ["a", "c", "d"]);
        assert_eq!(listing["stats"]["totalSkills"], 3);
        assert_eq!(listing["stats"]["avgConfidence"], 0.5);
        assert!(listing.get("next").is_none());
        assert!(!feed.is_full_listing(&feed.since(0, None)), "since=0 carries the tombstone");
        // The packets are slices of the feed's one buffer, not copies of it.
        let buf = feed.buf.as_ptr_range();
        let packets: Vec<&Bytes> = parts.iter().filter(|p| p.starts_with(b"{\"name\"")).collect();
        assert_eq!(packets.len(), 2, "a, then the run c,d after the tombstone");
        assert!(packets.iter().all(|p| buf.contains(&p.as_ptr())), "every run points into the feed");
    }

    #[test]
    fn a_full_listing_is_one_run_without_tombstones_and_empty_without_packets() {
        let feed = Feed::build(3, vec![row(1, "a", false), row(3, "b", false)]);
        let parts = feed.full_listing("n", 0.0);
        assert_eq!(parts.len(), 3, "header, one run, footer");
        assert_eq!(names(&decode(&parts)), ["a", "b"]);
        assert!(feed.is_full_listing(&feed.since(0, None)));
        let only_tombstones = Feed::build(2, vec![row(2, "x", true)]);
        let empty = decode(&only_tombstones.full_listing("n", 0.0));
        assert_eq!(names(&empty), Vec::<&str>::new());
        assert_eq!(
            (empty["stats"]["totalSkills"].as_i64(), empty["stats"]["avgConfidence"].as_f64()),
            (Some(0), Some(0.0))
        );
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
}
