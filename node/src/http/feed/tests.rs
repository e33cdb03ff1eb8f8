//! The feed's tests: answers cut from it, plain and packed, match what the store holds.

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
        assert!(builder.json.len() <= plain_max, "after packet {i} the buffer holds {}", builder.json.len());
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
    let rows: Vec<(i64, String, bool)> =
        (1..=300).map(|i| (i, format!("skill-{i}-{}", "x".repeat(i as usize % 97)), i % 50 == 7)).collect();
    let rows: Vec<(i64, &str, bool)> = rows.iter().map(|(s, n, d)| (*s, n.as_str(), *d)).collect();
    let plain = build(300, &rows, usize::MAX);
    // Packed from the first packet, and packed once the feed outgrew its plain maximum.
    for packed in [build_in(300, &rows, 0, 1000), build_in(300, &rows, 9000, 700), build_in(300, &rows, 0, 1)]
    {
        assert!(matches!(packed.packets, Packets::Packed(_)));
        // Headers carry the time: compare what follows the opening of `skills`.
        let body = |p: &Pieces| {
            let all = bytes(p);
            let at = all.windows(10).position(|w| w == b"\"skills\":[").unwrap();
            all[at..].to_vec()
        };
        assert_eq!(body(&packed.full_listing("n", &stamp(1.0))), body(&plain.full_listing("n", &stamp(1.0))));
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
