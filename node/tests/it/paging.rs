//! Paged incremental answers (`SPEC.md` §10.2.5–§10.2.8, issue #12 item 8):
//! `GET /ecp/skills?since=N&limit=M` and its `next` cursor, the byte budget
//! of a page, the `limit` bounds, the unpaged answer a client without
//! `limit` gets; and the answer to a push whose merge outlasts the request
//! time limit (#12, small item).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use ecp_node::store::OriginLimits;

use crate::util::{TestNode, packet, served_names, update};

const NAMES: [&str; 5] = ["page-a", "page-b", "page-c", "page-d", "page-e"];

/// A node holding the five skills of [`NAMES`], pushed one by one (so each
/// has its own sequence number).
async fn node_with_five(adjust: impl FnOnce(&mut ecp_node::config::Config)) -> TestNode {
    let node = TestNode::start_with(adjust).await;
    for name in NAMES {
        node.push_ok(&update("pusher", &[packet(name)])).await;
    }
    node
}

/// Follows `next` from `?since=0&limit=<limit>`; returns the names of every
/// page and the last page.
async fn drain(node: &TestNode, limit: &str) -> (Vec<Vec<String>>, Value) {
    let mut since = 0;
    let mut pages = Vec::new();
    loop {
        let page = node.get_json(&format!("/ecp/skills?since={since}&limit={limit}")).await;
        pages.push(served_names(&page));
        let Some(next) = page.get("next").and_then(Value::as_i64) else { return (pages, page) };
        assert!(next > since, "next {next} must move past since {since}");
        assert_eq!(page["sequenceNum"], next, "a page's sequenceNum is its cursor: {page}");
        since = next;
        assert!(pages.len() <= NAMES.len(), "more pages than packets: {pages:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paged_since_answer_honours_limit_and_its_next_cursor_drains_every_packet_once() {
    let node = node_with_five(|_| {}).await;
    let (pages, last) = drain(&node, "2").await;
    assert_eq!(pages, [vec!["page-a", "page-b"], vec!["page-c", "page-d"], vec!["page-e"]]);
    assert_eq!(last["sequenceNum"], node.sequence().await, "the last page reports the newest change");
    assert_eq!(last["stats"]["totalSkills"], 1, "stats count the page's packets");
}

/// The bytes of the packets of an answer, as sent: from the `[` of
/// `skills` to its `]`, both left out.
fn packet_bytes(answer: &str) -> usize {
    let start = answer.find("\"skills\":[").expect("an answer has skills") + "\"skills\":[".len();
    let end = answer.find("],\"stats\"").expect("stats follow the skills");
    end - start
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_byte_budget_is_kept_and_a_page_always_carries_one_packet() {
    let mut node = node_with_five(|_| {}).await;
    let two = packet_bytes(&node.get("/ecp/skills?since=0&limit=2").await.text());
    // At the limit, two packets and their comma fit; one byte less, one.
    node.restart_with(|c| c.page_bytes = two).await;
    assert_eq!(served_names(&node.get_json("/ecp/skills?since=0&limit=100").await).len(), 2, "at the limit");
    node.restart_with(|c| c.page_bytes = two - 1).await;
    assert_eq!(served_names(&node.get_json("/ecp/skills?since=0&limit=100").await).len(), 1, "one byte less");
    // A budget of one byte: every packet is over it, and each still goes, alone.
    node.restart_with(|c| c.page_bytes = 1).await;
    let (pages, _) = drain(&node, "100").await;
    assert_eq!(pages.len(), NAMES.len(), "{pages:?}");
    assert!(pages.iter().all(|p| p.len() == 1), "{pages:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_limit_an_answer_is_never_paged() {
    // A Go puller sends no limit: it gets everything, whatever the budget.
    let node = node_with_five(|c| c.page_bytes = 1).await;
    for path in ["/ecp/skills?since=0", "/ecp/skills"] {
        let answer = node.get_json(path).await;
        assert_eq!(served_names(&answer).len(), NAMES.len(), "{path}");
        assert!(answer.get("next").is_none(), "{path}: {answer}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn limit_is_refused_under_1_and_served_at_1() {
    let node = node_with_five(|_| {}).await;
    for bad in ["0", "-1", "abc", "1.5", ""] {
        let reply = node.get(&format!("/ecp/skills?since=0&limit={bad}")).await;
        let error = reply.assert_error(400, "invalid_query");
        assert!(error["error"].as_str().unwrap().contains("limit"), "limit={bad}: {error}");
    }
    let page = node.get_json("/ecp/skills?since=0&limit=1").await;
    assert_eq!(served_names(&page), ["page-a"]);
    // `limit` alone pages from the start.
    assert_eq!(served_names(&node.get_json("/ecp/skills?limit=1").await), ["page-a"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_has_its_own_etag_and_is_answered_304_while_nothing_changes() {
    let node = node_with_five(|_| {}).await;
    let first = node.get("/ecp/skills?since=0&limit=2").await;
    let tag = first.header("etag").expect("a page has an ETag").to_owned();
    assert_ne!(Some(tag.as_str()), node.get("/ecp/skills?since=0").await.header("etag"));
    let again = node.get_with("/ecp/skills?since=0&limit=2", &[("if-none-match", &tag)]).await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
}

// ---------------------------------------------------------------------------
// The request time limit and a merge

/// Packets enough for a merge to outlast [`TIGHT`] in a debug build.
const MANY: usize = 1_500;
/// A request time limit shorter than the merge of [`MANY`] packets.
const TIGHT: Duration = Duration::from_millis(300);

#[tokio::test(flavor = "multi_thread")]
async fn a_merge_that_outlasts_the_request_time_limit_is_answered_with_its_result() {
    let node = TestNode::start_with(|c| {
        c.request_timeout = TIGHT;
        c.origin_limits = OriginLimits { per_hour: 0, per_day: 0 };
    })
    .await;
    let packets: Vec<_> = (0..MANY).map(|i| packet(&format!("slow-merge-{i}"))).collect();
    let body = update("pusher", &packets);
    let reply = node.push(&body).await;
    // Before the fix: 408 "the request took longer", while the merge went on
    // and committed every packet.
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let result = reply.json();
    assert_eq!(result["newSkills"], MANY, "{result}");
    // (Read from the store: a GET of 1,500 skills could outlast the tight limit itself.)
    let stored = node.library().store().list_skills().expect("the store reads").len();
    assert_eq!(stored, MANY, "what the answer says is what was stored");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_timed_out_before_its_merge_says_nothing_was_merged() {
    // A body that never finishes arriving: the time limit fires before any merge.
    let node = TestNode::start_with(|c| c.request_timeout = TIGHT).await;
    let head = format!(
        "POST /ecp/skills HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
        node.host()
    );
    let reply = crate::util::raw_exchange(node.addr(), head.as_bytes(), b"{\"skills\":[".to_vec()).await;
    let error = reply.assert_error(408, "request_timeout");
    let message = error["error"].as_str().unwrap();
    assert!(
        message.contains("nothing of it was merged") && message.contains("re-sending is safe"),
        "{message}"
    );
    assert_eq!(node.sequence().await, 0);
}
