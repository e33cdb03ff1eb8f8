//! The hostile-input matrix for `POST /ecp/skills`: bodies that are not an
//! update, too large, too many packets, lying about their length, nested
//! without end; packets with hostile names or out-of-range values.
//!
//! Every refused request must get its 4xx JSON error with a `code`, show no
//! server path, leave the node answering `/healthz`, and leave the store
//! exactly as before. A packet refused inside an accepted update gets one
//! conflicts line, is recorded (quarantine and audit), and changes no skill.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::util::{
    ANY_CODE, ORIGIN, Reply, Snapshot, TestNode, assert_no_failures, assert_no_server_path, json_diff,
    packet, packet_from, post_update, raw_exchange, served_named, skill_md, update, update_value,
};

/// A node that already holds one skill, so "unchanged" means something.
async fn node_with_a_skill() -> TestNode {
    node_with_a_skill_and(|_| {}).await
}

async fn node_with_a_skill_and(adjust: impl FnOnce(&mut ecp_node::config::Config)) -> TestNode {
    let node = TestNode::start_with(adjust).await;
    let result = node.push_ok(&update(ORIGIN, &[packet("already-held")])).await;
    assert_eq!(result["newSkills"], 1, "{result}");
    node
}

/// Checks one refused request; the problems found, if any.
async fn refused(
    node: &TestNode,
    before: &Snapshot,
    reply: Reply,
    status: u16,
    code: &str,
) -> Result<(), String> {
    reply.check_error(status, code)?;
    let health = node.get("/healthz").await;
    if health.status != StatusCode::OK {
        return Err(format!("/healthz afterwards: {}", health.text()));
    }
    let after = node.snapshot().await;
    let diff = json_diff(&after.0, &before.0, false);
    if !diff.is_empty() {
        return Err(format!("the store changed:\n  {}", diff.join("\n  ")));
    }
    Ok(())
}

fn with_packet_field(field: &str, value: Value) -> Vec<u8> {
    let mut update = update_value(ORIGIN, &[packet("typed-wrong")]);
    update["skills"][0][field] = value;
    serde_json::to_vec(&update).unwrap()
}

/// A valid update with `raw` spliced in as the text of a packet field.
fn with_raw_packet_field(field: &str, raw: &str) -> Vec<u8> {
    let marker = "\"@@RAW@@\"";
    let mut update = update_value(ORIGIN, &[packet("raw-field")]);
    update["skills"][0][field] = json!("@@RAW@@");
    serde_json::to_string(&update).unwrap().replace(marker, raw).into_bytes()
}

#[tokio::test(flavor = "multi_thread")]
async fn bodies_that_are_not_an_update_get_400_json_and_leave_the_store_unchanged() {
    let node = node_with_a_skill().await;
    let before = node.snapshot().await;
    let valid = update(ORIGIN, &[packet("would-be-new")]);
    let mut trailing = valid.clone();
    trailing.extend_from_slice(b" xyz");
    let mut with_bom = b"\xef\xbb\xbf".to_vec();
    with_bom.extend_from_slice(&valid);
    let bad_utf8_in_string = with_raw_packet_field("skillDescription", "\"@@\"")
        .into_iter()
        .map(|b| if b == b'@' { 0xff } else { b })
        .collect::<Vec<u8>>();
    let bad_utf8_in_unknown = with_raw_packet_field("futureField", "\"@@\"")
        .into_iter()
        .map(|b| if b == b'@' { 0xff } else { b })
        .collect::<Vec<u8>>();
    // An unknown field of the update itself, which the decoder skips.
    let mut bad_utf8_in_unknown_top = b"{\"futureField\":\"\xff\xfe\",".to_vec();
    bad_utf8_in_unknown_top.extend_from_slice(&valid[1..]);
    let long_peer = "p".repeat(200);

    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("not JSON", b"hello, node".to_vec(), "invalid_json"),
        ("truncated JSON", b"{\"peerInstance\": \"x\", \"skills\": [".to_vec(), "invalid_json"),
        ("JSON followed by garbage", trailing, "invalid_json"),
        ("a JSON string", b"\"an update\"".to_vec(), "invalid_json"),
        ("a JSON number", b"42".to_vec(), "invalid_json"),
        ("JSON null", b"null".to_vec(), "invalid_json"),
        ("NUL bytes", vec![0u8; 16], "invalid_json"),
        ("a UTF-8 byte order mark", with_bom, "invalid_json"),
        ("invalid UTF-8 inside a string", bad_utf8_in_string, "invalid_json"),
        ("invalid UTF-8 inside an unknown field of a packet", bad_utf8_in_unknown, "invalid_json"),
        ("invalid UTF-8 inside an unknown field of the update", bad_utf8_in_unknown_top, "invalid_json"),
        ("invalid UTF-8 outside strings", b"{\"peerInstance\":\"x\",\xff\xfe}".to_vec(), "invalid_json"),
        ("a lone surrogate escape", with_raw_packet_field("skillDescription", "\"\\ud800\""), "invalid_json"),
        ("skills is a string", br#"{"peerInstance":"p","skills":"many"}"#.to_vec(), "invalid_json"),
        ("skills holds a number", br#"{"peerInstance":"p","skills":[1]}"#.to_vec(), "invalid_json"),
        ("peerInstance is a number", br#"{"peerInstance":7,"skills":[]}"#.to_vec(), "invalid_json"),
        ("sequenceNum is fractional", br#"{"peerInstance":"p","sequenceNum":1.5}"#.to_vec(), "invalid_json"),
        ("sequenceNum is 1.0", br#"{"peerInstance":"p","sequenceNum":1.0}"#.to_vec(), "invalid_json"),
        ("confidence is a string", with_packet_field("confidence", json!("high")), "invalid_json"),
        ("tags is an object", with_packet_field("tags", json!({"a": 1})), "invalid_json"),
        ("createdAt is not a time", with_packet_field("createdAt", json!("yesterday")), "invalid_json"),
        ("deprecated is a string", with_packet_field("deprecated", json!("yes")), "invalid_json"),
        ("provenance hops is negative", with_packet_field("provenance", json!({"hops": -1})), "invalid_json"),
        ("confidence NaN", with_raw_packet_field("confidence", "NaN"), "invalid_json"),
        ("confidence Infinity", with_raw_packet_field("confidence", "Infinity"), "invalid_json"),
        ("confidence -Infinity", with_raw_packet_field("confidence", "-Infinity"), "invalid_json"),
        ("confidence 1e999", with_raw_packet_field("confidence", "1e999"), "invalid_json"),
        (
            "a duplicate key in the update",
            br#"{"peerInstance":"a","peerInstance":"b","skills":[]}"#.to_vec(),
            "invalid_json",
        ),
        (
            "a duplicate key in a packet",
            with_raw_packet_field("skillName", r#""a","skillName":"b""#),
            "invalid_json",
        ),
        ("an empty body", Vec::new(), "empty_body"),
        ("a body of blanks", b" \r\n\t ".to_vec(), "empty_body"),
        ("no peerInstance", br#"{"skills":[]}"#.to_vec(), "invalid_peer_instance"),
        ("an empty object", b"{}".to_vec(), "invalid_peer_instance"),
        ("a blank peerInstance", br#"{"peerInstance":"   ","skills":[]}"#.to_vec(), "invalid_peer_instance"),
        (
            "a peerInstance with a newline",
            br#"{"peerInstance":"a\nb","skills":[]}"#.to_vec(),
            "invalid_peer_instance",
        ),
        (
            "a peerInstance with a right-to-left override",
            serde_json::to_vec(&json!({"peerInstance": "alice\u{202E}pot", "skills": []})).unwrap(),
            "invalid_peer_instance",
        ),
        (
            "a peerInstance with a zero-width space",
            serde_json::to_vec(&json!({"peerInstance": "ali\u{200B}ce", "skills": []})).unwrap(),
            "invalid_peer_instance",
        ),
        (
            "a 200-byte peerInstance",
            serde_json::to_vec(&json!({"peerInstance": long_peer, "skills": []})).unwrap(),
            "invalid_peer_instance",
        ),
    ];

    let mut failures = Vec::new();
    for (what, body, code) in &cases {
        let reply = post_update(&node, body.clone(), None).await;
        if let Err(e) = refused(&node, &before, reply, 400, code).await {
            failures.push(format!("{what}: {e}"));
        }
    }
    assert_no_failures(&failures, cases.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn deeply_nested_json_gets_400_and_the_node_keeps_answering() {
    let node = node_with_a_skill().await;
    let before = node.snapshot().await;
    let depth = 100_000;
    let open = "[".repeat(depth);
    let close = "]".repeat(depth);
    let cases: Vec<(&str, String)> = vec![
        ("100,000 [", open.clone()),
        ("100,000 balanced [ ]", format!("{open}{close}")),
        ("100,000 {\"a\":", "{\"a\":".repeat(depth)),
        ("nested in skills", format!("{{\"peerInstance\":\"p\",\"skills\":[{open}{close}]}}")),
        ("nested in tags", format!("{{\"peerInstance\":\"p\",\"skills\":[{{\"tags\":{open}{close}}}]}}")),
        ("nested in stats", format!("{{\"peerInstance\":\"p\",\"stats\":{open}{close}}}")),
    ];
    let mut failures = Vec::new();
    for (what, body) in &cases {
        let reply = post_update(&node, body.clone().into_bytes(), None).await;
        if let Err(e) = refused(&node, &before, reply, 400, "invalid_json").await {
            failures.push(format!("{what}: {e}"));
        }
    }
    assert_no_failures(&failures, cases.len());

    // Deep nesting in a field nobody reads is an unknown field: tolerated or
    // refused, but answered, and the node stays up.
    let body = format!("{{\"peerInstance\":\"p\",\"future\":{open}{close},\"skills\":[]}}");
    let reply = post_update(&node, body.into_bytes(), None).await;
    assert!(matches!(reply.status.as_u16(), 200 | 400), "{}", reply.text());
    reply.assert_json_content_type();
    node.assert_healthy().await;
    before.assert_skills_unchanged(&node.snapshot().await, "deep nesting in an unknown field");
}

// ---------------------------------------------------------------------------
// Size and count limits

fn post_head(node: &TestNode, extra: &str) -> Vec<u8> {
    format!(
        "POST /ecp/skills HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n{extra}Connection: close\r\n\r\n",
        node.host()
    )
    .into_bytes()
}

/// `len` bytes that start like an update and go on with blanks.
fn padded_body(len: usize) -> Vec<u8> {
    let mut body = update(ORIGIN, &[packet("padded")]);
    assert!(body.len() <= len);
    body.resize(len, b' ');
    body
}

fn chunked(body: &[u8], chunk: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + body.len() / chunk * 10 + 8);
    for part in body.chunks(chunk) {
        out.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
        out.extend_from_slice(part);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_20_mb_body_gets_413_and_leaves_the_store_unchanged() {
    let node = node_with_a_skill().await;
    let before = node.snapshot().await;
    let body = padded_body(20 * 1024 * 1024);

    let declared = post_head(&node, &format!("Content-Length: {}\r\n", body.len()));
    let reply = raw_exchange(node.addr(), &declared, body.clone()).await;
    refused(&node, &before, reply, 413, "payload_too_large")
        .await
        .unwrap_or_else(|e| panic!("with Content-Length: {e}"));

    let streamed = post_head(&node, "Transfer-Encoding: chunked\r\n");
    let reply = raw_exchange(node.addr(), &streamed, chunked(&body, 256 * 1024)).await;
    refused(&node, &before, reply, 413, "payload_too_large").await.unwrap_or_else(|e| panic!("chunked: {e}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_content_length_over_the_limit_gets_413_before_the_body_is_sent() {
    // A long request timeout: only an answer that does not wait for the body is in time.
    let node = node_with_a_skill_and(|c| c.request_timeout = Duration::from_secs(300)).await;
    let before = node.snapshot().await;
    let head = post_head(&node, "Content-Length: 20000000\r\n");
    let reply = tokio::time::timeout(Duration::from_secs(5), raw_exchange(node.addr(), &head, Vec::new()))
        .await
        .expect("the node answers a too-long Content-Length without waiting for the body");
    refused(&node, &before, reply, 413, "payload_too_large").await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_at_the_configured_limit_is_read_and_one_byte_more_gets_413() {
    let node = node_with_a_skill_and(|c| c.max_body_bytes = 4096).await;
    let before = node.snapshot().await;
    let reply = post_update(&node, padded_body(4097), None).await;
    refused(&node, &before, reply, 413, "payload_too_large").await.unwrap();
    let at_limit = post_update(&node, padded_body(4096), None).await;
    assert_eq!(at_limit.status, StatusCode::OK, "{}", at_limit.text());
    assert_eq!(at_limit.json()["newSkills"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_content_length_shorter_than_the_body_is_read_as_declared() {
    let node = node_with_a_skill().await;
    let before = node.snapshot().await;
    let body = update(ORIGIN, &[packet("cut-short")]);
    let head = post_head(&node, "Content-Length: 5\r\n");
    let reply = raw_exchange(node.addr(), &head, body).await;
    refused(&node, &before, reply, 400, "invalid_json").await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_content_length_longer_than_the_body_times_out_with_a_json_error() {
    let node = node_with_a_skill_and(|c| c.request_timeout = Duration::from_secs(1)).await;
    let before = node.snapshot().await;
    let head = post_head(&node, "Content-Length: 1000\r\n");
    // Ten bytes of a promised thousand; the connection stays open.
    let reply = raw_exchange(node.addr(), &head, b"{\"id\":\"x\",".to_vec()).await;
    refused(&node, &before, reply, 408, ANY_CODE).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_thousand_packets_under_the_body_limit_are_refused_whole_with_413() {
    let node = node_with_a_skill().await;
    let before = node.snapshot().await;
    let mut body = br#"{"peerInstance":"flood","skills":["#.to_vec();
    for i in 0..100_000 {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(br#"{"skillName":"f"}"#);
    }
    body.extend_from_slice(b"]}");
    assert!(body.len() < node.config().max_body_bytes, "the flood fits the body limit");
    let reply = post_update(&node, body, None).await;
    // Refused whole, so it cannot fill the quarantine.
    refused(&node, &before, reply, 413, "too_many_packets").await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn millions_of_empty_packets_are_counted_and_refused_before_any_is_built() {
    let node = node_with_a_skill().await;
    let before = node.snapshot().await;
    let head = br#"{"peerInstance":"flood","skills":["#;
    let packets = (node.config().max_body_bytes - head.len() - 2) / 3;
    let mut body = head.to_vec();
    body.extend_from_slice(b"{}");
    body.extend(std::iter::repeat_n(*b",{}", packets - 1).flatten());
    body.extend_from_slice(b"]}");
    assert!(body.len() <= node.config().max_body_bytes && packets > 2_700_000);
    let reply = post_update(&node, body, None).await;
    let message = reply.json()["error"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains(&format!("carries {packets} packets")), "{message}");
    refused(&node, &before, reply, 413, "too_many_packets").await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_thousand_real_packets_are_over_the_body_limit_and_get_413() {
    let node = node_with_a_skill().await;
    let before = node.snapshot().await;
    let one = serde_json::to_vec(&packet("repeated")).unwrap();
    let mut body = br#"{"peerInstance":"flood","skills":["#.to_vec();
    for i in 0..100_000 {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(&one);
    }
    body.extend_from_slice(b"]}");
    assert!(body.len() > node.config().max_body_bytes);
    let head = post_head(&node, &format!("Content-Length: {}\r\n", body.len()));
    let reply = raw_exchange(node.addr(), &head, body).await;
    refused(&node, &before, reply, 413, "payload_too_large").await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_update_over_a_configured_max_packets_is_refused_whole_with_413() {
    let node = node_with_a_skill_and(|c| {
        c.max_packets = 3;
        c.policy.max_packets = 3;
    })
    .await;
    let before = node.snapshot().await;
    let four: Vec<_> = (0..4).map(|i| packet(&format!("limited-{i}"))).collect();
    let reply = post_update(&node, update(ORIGIN, &four), None).await;
    refused(&node, &before, reply, 413, "too_many_packets").await.unwrap();

    let three = node.push_ok(&update(ORIGIN, &four[..3])).await;
    assert_eq!(three["newSkills"], 3, "at the limit the update is merged: {three}");
}

// ---------------------------------------------------------------------------
// Packets refused inside an accepted update

/// Pushes `packets`, all of which must be refused with one line each whose
/// reason contains `reason`; checks the skills are unchanged and each
/// refusal recorded (quarantine and audit).
async fn assert_each_packet_refused(
    node: &TestNode,
    packets: Vec<ecp_protocol::SkillPacket>,
    reason: &str,
) -> Value {
    let before = node.snapshot().await;
    let n = packets.len();
    let reply = post_update(node, update("hostile-peer", &packets), None).await;
    assert_eq!(reply.status, StatusCode::OK, "per-packet refusals are no HTTP error: {}", reply.text());
    reply.assert_json_content_type();
    assert_no_server_path(&String::from_utf8_lossy(&reply.body));
    let result = reply.json();
    assert_eq!(result["newSkills"], 0, "{result:#}");
    assert_eq!(result["updatedSkills"], 0, "{result:#}");
    assert_eq!(result["rejectedSkills"], n, "{result:#}");
    let lines = result["conflicts"].as_array().cloned().unwrap_or_default();
    assert_eq!(lines.len(), n, "one conflicts line per refused packet: {result:#}");
    for (line, packet) in lines.iter().zip(&packets) {
        let line = line.as_str().unwrap_or_default();
        assert!(line.contains(reason), "{:?}: line {line:?} does not say {reason:?}", packet.skill_name);
        assert!(!line.contains('\n') && !line.contains('\r'), "a line holds one line: {line:?}");
    }

    node.assert_healthy().await;
    let after = node.snapshot().await;
    before.assert_skills_unchanged(&after, "refused packets");
    assert_eq!(
        after.quarantine().len(),
        before.quarantine().len() + n,
        "each refusal is held: {:#}",
        after.0
    );
    let held: Vec<&str> = after.quarantine()[before.quarantine().len()..]
        .iter()
        .map(|e| e["skillName"].as_str().unwrap_or_default())
        .collect();
    let sent: Vec<&str> = packets.iter().map(|p| p.skill_name.as_str()).collect();
    assert_eq!(held, sent, "the quarantine holds the refused packets, in order");
    assert_eq!(after.audit_entries(), before.audit_entries() + n as u64, "each refusal is audited");
    result
}

#[tokio::test(flavor = "multi_thread")]
async fn traversal_and_absolute_skill_names_are_refused_one_line_each_and_write_no_file() {
    let node = node_with_a_skill().await;
    let names = [
        "../escape",
        "../../etc/passwd",
        "/etc/passwd",
        "/absolute",
        "..",
        ".",
        ".hidden",
        "a/b",
        "a\\b",
        "C:\\Windows\\evil",
        "",
        "-leading-dash",
        "name\nwith-newline",
        "nul\0name",
        "sp ace",
        "ünïcode",
        &"x".repeat(65),
    ];
    let packets = names
        .iter()
        .map(|name| {
            let mut p = packet("placeholder");
            p.skill_name = (*name).to_owned();
            p.skill_body = skill_md("placeholder-body", "A body for a hostile name");
            p.reseal();
            p
        })
        .collect();
    assert_each_packet_refused(&node, packets, "invalid name").await;

    let mut top: Vec<String> = std::fs::read_dir(node.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top, ["data", "skills"], "nothing written beside the node's folders");
    let skills: Vec<String> = std::fs::read_dir(node.dir().join("skills"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert!(!skills.iter().any(|n| n.contains("escape") || n.contains("passwd")), "{skills:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn negative_and_over_one_confidence_is_refused_one_line_each() {
    let node = node_with_a_skill().await;
    let packets = [-0.5, -1e-9, 1.000_001, 1.5, 1e308, -1e308]
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut p = packet(&format!("confidence-{i}"));
            p.confidence = *c;
            p
        })
        .collect();
    assert_each_packet_refused(&node, packets, "confidence").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn empty_and_tampered_bodies_are_refused_one_line_each() {
    let node = node_with_a_skill().await;
    let mut empty = packet("empty-body");
    empty.skill_body = String::new();
    empty.reseal();
    let mut blank = packet("blank-body");
    blank.skill_body = " \n\t\n".into();
    blank.reseal();
    let mut tampered = packet("tampered-body");
    tampered.skill_body.push_str("Then run one more command.\n");
    let mut short = packet("short-body");
    short.skill_body = "---\nname: short-body\ndescription: d\n---\ntoo short\n".into();
    short.reseal();
    let result = assert_each_packet_refused(&node, vec![empty, blank, tampered, short], ": ").await;
    let lines: Vec<&str> =
        result["conflicts"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(lines[0].starts_with("empty-body: invalid structure"), "{lines:#?}");
    assert!(lines[1].starts_with("blank-body: invalid structure"), "{lines:#?}");
    assert!(lines[2].starts_with("tampered-body: integrity failed"), "{lines:#?}");
    assert!(lines[3].starts_with("short-body: invalid structure"), "{lines:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicate_skill_names_in_one_update_install_the_newest_and_refuse_the_rest() {
    let node = node_with_a_skill().await;
    let older = packet_from(ORIGIN, "dup-skill", "2026-11-20T08:00:00Z");
    let mut newest = packet_from(ORIGIN, "dup-skill", "2026-11-20T12:00:00Z");
    newest.skill_body.push_str("The newest version says more.\n");
    newest.reseal();
    let mut middle = packet_from(ORIGIN, "dup-skill", "2026-11-20T10:00:00Z");
    middle.skill_body.push_str("The middle version.\n");
    middle.reseal();
    let before = node.snapshot().await;
    let result = node.push_ok(&update(ORIGIN, &[older.clone(), newest.clone(), middle, older])).await;
    assert_eq!(result["newSkills"], 1, "{result:#}");
    assert_eq!(result["rejectedSkills"], 3, "{result:#}");
    let lines = result["conflicts"].as_array().unwrap();
    assert_eq!(lines.len(), 3, "{result:#}");
    for line in lines {
        let line = line.as_str().unwrap();
        assert!(line.starts_with("dup-skill: duplicate skill name"), "{line:?}");
    }
    let listing = node.get_json("/ecp/skills").await;
    let served = served_named(&listing, "dup-skill").expect("the winner is served");
    assert_eq!(served["integrityHash"], newest.integrity_hash.as_str(), "the latest createdAt wins");
    let after = node.snapshot().await;
    assert_eq!(after.skills().len(), before.skills().len() + 1);
    assert_eq!(after.quarantine().len(), before.quarantine().len() + 2, "identical refusals are held once");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_fields_are_tolerated() {
    let node = node_with_a_skill().await;
    let mut update = update_value(ORIGIN, &[packet("future-proof")]);
    update["futureEnvelopeField"] = json!({"nested": [1, 2, {"deep": null}]});
    update["stats"]["futureStat"] = json!(3.5);
    update["skills"][0]["signature"] = json!("ed25519:abcdef");
    update["skills"][0]["futureList"] = json!([]);
    update["skills"][0]["provenance"] =
        json!({"originConfidence": 0.9, "hops": 0, "path": [ORIGIN], "futureHop": true});
    let result = node.push_ok(&serde_json::to_vec(&update).unwrap()).await;
    assert_eq!(result["newSkills"], 1, "{result:#}");
    assert_eq!(result["rejectedSkills"], 0, "{result:#}");
    let listing = node.get_json("/ecp/skills").await;
    assert!(served_named(&listing, "future-proof").is_some(), "{listing:#}");
}

/// The node bounds every other echo of client input (skill names in
/// conflicts lines at 64 characters, unknown paths at 100); a decode error
/// must not carry a whole wrong-typed value back either.
#[tokio::test(flavor = "multi_thread")]
async fn a_decode_error_does_not_echo_a_megabyte_of_input() {
    let node = node_with_a_skill().await;
    let before = node.snapshot().await;
    let big = "x".repeat(1_000_000);
    let cases = [
        ("a wrong-typed string in the update", json!({"peerInstance": "p", "sequenceNum": big})),
        ("a wrong-typed string in a packet", json!({"peerInstance": "p", "skills": [{"confidence": big}]})),
    ];
    let mut failures = Vec::new();
    for (what, body) in cases {
        let reply = post_update(&node, serde_json::to_vec(&body).unwrap(), None).await;
        if let Err(e) = refused(&node, &before, reply.clone(), 400, "invalid_json").await {
            failures.push(format!("{what}: {}", e.chars().take(300).collect::<String>()));
        } else if reply.body.len() > 2048 {
            let start: String = String::from_utf8_lossy(&reply.body).chars().take(120).collect();
            failures.push(format!("{what}: a {}-byte error answer: {start}…", reply.body.len()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_sends_headers_too_slowly_is_disconnected() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let node = TestNode::start_with(|cfg| cfg.header_read_timeout = Duration::from_millis(300)).await;
    let mut stream = tokio::net::TcpStream::connect(node.addr()).await.unwrap();
    stream.write_all(b"GET /ecp/manifest HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    // Never finish the headers: the node must hang up on its own.
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut buf)).await;
    assert!(read.is_ok(), "the node kept a connection with unfinished headers open");
    node.assert_healthy().await;
}
