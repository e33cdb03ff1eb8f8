//! What each fuzz target of `ecp-protocol` feeds in and checks: one function
//! per target, taking the raw bytes libFuzzer hands over.
//!
//! A check that fails panics, which libFuzzer reports as a crash. The same
//! file is compiled into `protocol/tests/it/fuzz_regressions.rs`, so the
//! inputs kept in `protocol/testdata/fuzz-regressions/<target>/` are replayed
//! on stable Rust in CI through exactly this code.
//!
//! - [`update_merge`]: bytes → `KnowledgeUpdate::from_json` → wire round trip
//!   → `merge_knowledge` against a small fixed store, as received and with
//!   every packet resealed (so mutated bodies get past the integrity stage);
//!   the counts add up, one decision per packet, merging again after
//!   applying changes nothing.
//! - [`frontmatter`]: UTF-8 text → `skill_doc::parse` and the checks built on
//!   it; the name rule against an independent reading of its regex; and
//!   `with_frontmatter` reads back as documented.
//! - [`scanner`]: UTF-8 text → `Scanner::scan`; findings sit on real lines,
//!   in line order, with short one-line excerpts.
//! - [`bundle_listing`]: bytes → a packet's `files` and `bundleDigest`
//!   (`SPEC.md` §12.2–§12.4) as received, and made consistent with the body
//!   so mutated paths, sizes and modes get past the digest: `check_packet`
//!   and `BundleManifest::from_packet` agree, an accepted listing keeps every
//!   rule (sorted, unique, printable paths, one canonical line per file, the
//!   digest its own), every refusal is one bounded line, and a listing a
//!   sender builds (`for_skill`) is one a receiver accepts; and the same
//!   bytes as a `POST /ecp/blobs/missing` query.
//! - [`signature`]: structured input (decoded with `arbitrary`, as
//!   `fuzz_target!` would) → `RequestVerifier::verify`, `verify_response` and
//!   `legacy_auth` on hostile headers, a signed request that verifies exactly
//!   once, and a sequence of requests checked against a model of the nonce
//!   cache.
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::Mutex;

use arbitrary::{Arbitrary, Unstructured};
use ecp_protocol::SignedAuthError::SignatureMismatch;
use ecp_protocol::bundle::{
    self, BundleError, BundleLimits, BundleManifest, FileMode, MAX_BLOBS_PER_QUERY, SKILL_MD,
};
use ecp_protocol::legacy_auth::{self, LegacyVerifier};
use ecp_protocol::signed_auth::{
    self, Exchange, NonceCache, PresentedHeaders, RequestLine, RequestVerifier, SignatureHeaders, SigningKey,
};
use ecp_protocol::skill_doc::{self, KnownTools, StructureLimits};
use ecp_protocol::wire::{BlobQuery, BundleFile};
use ecp_protocol::{
    Decision, KnowledgeUpdate, MergeContext, MergeOutcome, Scanner, SignedAuthError, SkillKind, SkillPacket,
    StandardPolicy, StoredSkill, Timestamp, integrity, merge_knowledge,
};

// ---------------------------------------------------------------- update_merge

/// Our instance id; also the `local_instance` of most merge vectors, so seeds
/// from them reach the loop check.
const LOCAL: &str = "node-b";
/// The sender, as in the merge vectors.
const SENDER: &str = "node-a";

type Store = HashMap<String, StoredSkill>;

fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).expect("fixed timestamps are RFC 3339")
}

/// A small store whose names appear in the seed corpus (the merge vectors and
/// the reference fixtures), so every resolution rule is within reach: a local
/// skill, external ones from the sender and from another origin, a tombstone,
/// and one held with the very hash the vectors send (unchanged).
fn fixed_store() -> Store {
    let held = |kind, origin: &str, hash: String, created: &str, deprecated| StoredSkill {
        kind,
        origin: origin.to_owned(),
        integrity_hash: hash,
        created_at: at(created),
        deprecated,
        confidence: None,
        bundle_digest: String::new(),
        origin_verified: true,
        content_key: None,
        origin_key: None,
    };
    let other = |name: &str| integrity::body_hash(&format!("held version of {name}"));
    HashMap::from([
        (
            "json-log-summary".to_owned(),
            held(
                SkillKind::External,
                SENDER,
                "ddc88fd53e38120eb5358fff9d8dd32cf2715b44de156c981b7e93da6b916996".to_owned(),
                "2026-11-20T10:00:00Z",
                false,
            ),
        ),
        (
            "pytest-flaky-triage".to_owned(),
            held(SkillKind::External, SENDER, other("pytest-flaky-triage"), "2026-11-20T10:00:00Z", false),
        ),
        (
            "csv-dedupe".to_owned(),
            held(SkillKind::Local, LOCAL, other("csv-dedupe"), "2026-11-19T08:00:00Z", false),
        ),
        (
            "git-bisect-regression".to_owned(),
            held(
                SkillKind::External,
                "alice-laptop",
                other("git-bisect-regression"),
                "2026-11-01T00:00:00Z",
                false,
            ),
        ),
        (
            "docker-layer-cache".to_owned(),
            held(SkillKind::External, SENDER, other("docker-layer-cache"), "2026-11-20T10:00:00Z", true),
        ),
    ])
}

fn merge_context() -> MergeContext<'static> {
    MergeContext {
        local_instance: LOCAL,
        sender: SENDER,
        trust: 0.6,
        now: at("2026-11-22T12:00:00Z"),
        sender_kind: ecp_protocol::merge::SenderKind::Current,
    }
}

/// Fuzz target `update_merge`.
pub fn update_merge(data: &[u8]) {
    let Ok(update) = KnowledgeUpdate::from_json(data) else {
        return;
    };
    check_wire_round_trip(&update);
    let mut sealed = update.clone();
    for packet in &mut sealed.skills {
        packet.reseal();
    }
    check_merge(update);
    check_merge(sealed);
}

/// What we decode we can encode, and it decodes back to the same update: a
/// node re-serves what it stored, and a peer must be able to read it.
fn check_wire_round_trip(update: &KnowledgeUpdate) {
    let json = serde_json::to_vec(update).expect("a decoded update encodes");
    let again = KnowledgeUpdate::from_json(&json).unwrap_or_else(|e| {
        panic!("re-encoded update does not decode: {e}\n{}", String::from_utf8_lossy(&json))
    });
    assert_eq!(&again, update, "update changed in a wire round trip");
}

fn check_merge(update: KnowledgeUpdate) {
    let policy = StandardPolicy::default();
    let ctx = merge_context();
    let mut store = fixed_store();
    let packets = update.skills.len();
    let first = merge_knowledge(update.clone(), &store, &policy, &ctx);
    check_outcome(&first, packets);

    // Merging the same update again after applying its decisions changes nothing.
    first.apply_to(&mut store);
    let second = merge_knowledge(update, &store, &policy, &ctx);
    check_outcome(&second, packets);
    assert_eq!(second.result.new_skills, 0, "second merge installed a new skill");
    assert_eq!(second.result.updated_skills, 0, "second merge updated a skill");
    for (a, b) in first.decisions.iter().zip(&second.decisions) {
        match &a.decision {
            Decision::New | Decision::Updated { .. } | Decision::Unchanged => {
                assert_eq!(b.decision, Decision::Unchanged, "packet {} changed on the second merge", a.index)
            }
            rejected => {
                assert_eq!(&b.decision, rejected, "packet {}: another refusal the second time", a.index)
            }
        }
    }
}

/// The invariants of one merge outcome for an update of `packets` packets.
fn check_outcome(outcome: &MergeOutcome, packets: usize) {
    let r = &outcome.result;
    assert_eq!(
        r.new_skills + r.updated_skills + r.unchanged + r.rejected_skills,
        packets as u64,
        "new + updated + unchanged + rejected != packets: {r:?}"
    );
    assert_eq!(r.total(), packets as u64);
    assert_eq!(outcome.decisions.len(), packets, "not one decision per packet");
    assert_eq!(r.conflicts.len() as u64, r.rejected_skills, "not one conflicts line per rejected packet");
    for line in &r.conflicts {
        assert!(!line.contains(['\n', '\r']), "a conflicts line spans lines: {line:?}");
    }
    let mut installed = Vec::new();
    for (i, d) in outcome.decisions.iter().enumerate() {
        assert_eq!(d.index, i, "decisions out of update order");
        if d.decision.installs() {
            let p = &d.packet;
            assert!(p.verify().is_ok(), "packet {i} is installed but does not verify");
            assert!(skill_doc::validate_name(&p.skill_name).is_ok(), "packet {i} installed under a bad name");
            assert!(
                (0.0..=1.0).contains(&p.confidence),
                "packet {i} installed with confidence {}",
                p.confidence
            );
            assert_ne!(p.origin_instance, LOCAL, "packet {i}: our own skill came back and was installed");
            installed.push(p.skill_name.as_str());
        }
    }
    let count = installed.len();
    installed.sort_unstable();
    installed.dedup();
    assert_eq!(count, installed.len(), "two packets of one update installed under one name");
}

// ----------------------------------------------------------------- frontmatter

/// Fuzz target `frontmatter`.
pub fn frontmatter(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    check_name_rule(text);
    if let Ok(doc) = skill_doc::parse(text) {
        assert!(text.ends_with(doc.body), "the body is not the tail of the text");
        match &doc.frontmatter {
            None => assert_eq!(doc.body, text, "no frontmatter, yet the body is not the whole text"),
            Some(fm) => {
                if let Some(name) = &fm.name {
                    check_name_rule(name);
                }
                if let Some(c) = fm.confidence {
                    assert!((0.0..=1.0).contains(&c), "frontmatter confidence {c} outside 0..=1");
                }
                for item in fm.tags.iter().chain(&fm.allowed_tools) {
                    assert!(!item.is_empty() && item.trim() == item, "list item {item:?} empty or untrimmed");
                }
            }
        }
        let _ = skill_doc::check_structure(&doc, text.len(), &StructureLimits::default());
        let _ = skill_doc::check_document_references(&doc, &KnownTools::default());
        let _ = skill_doc::frontmatter_mismatch(&doc, "fuzz");
    }
    // The text as name, description and body, separated by NULs.
    let mut parts = text.splitn(3, '\0');
    let (name, description) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    check_emit_round_trip(name, description, parts.next().unwrap_or(""));
}

/// `validate_name` against an independent reading of
/// `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`.
fn check_name_rule(name: &str) {
    let b = name.as_bytes();
    let expected = (1..=skill_doc::MAX_NAME_LEN).contains(&b.len())
        && b[0].is_ascii_alphanumeric()
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'));
    let got = skill_doc::validate_name(name);
    assert_eq!(got.is_ok(), expected, "validate_name({name:?}) = {got:?}");
    if let Err(e) = got {
        // The message is bounded whatever the name (names in errors are cut).
        assert!(e.to_string().len() < 1200, "error message of {} bytes", e.to_string().len());
    }
}

/// `parse(with_frontmatter(n, d, b))` gives back the folded name and
/// description and the body exactly; a value too long for its budget comes
/// back cut, as a prefix.
fn check_emit_round_trip(name: &str, description: &str, body: &str) {
    // Budgets of `with_frontmatter` (its private constants): 1 KiB for the
    // name, the rest of the frontmatter limit for the description.
    const NAME_BUDGET: usize = 1024;
    const DESCRIPTION_BUDGET: usize =
        skill_doc::MAX_FRONTMATTER_BYTES - NAME_BUDGET - "name: \n".len() - "description: \n".len();
    let text = skill_doc::with_frontmatter(name, description, body);
    let doc = skill_doc::parse(&text).unwrap_or_else(|e| panic!("with_frontmatter wrote {text:?}: {e}"));
    assert_eq!(doc.body, body, "with_frontmatter changed the body");
    let fm = doc.frontmatter.expect("with_frontmatter wrote a frontmatter");
    for (field, given, got, budget) in [
        ("name", name, fm.name, NAME_BUDGET),
        ("description", description, fm.description, DESCRIPTION_BUDGET),
    ] {
        let folded = skill_doc::fold_line_breaks(given);
        let got = got.unwrap_or_else(|| panic!("{field} {given:?} read back as null"));
        // An escape takes at most 6 bytes per character, plus the quotes.
        if folded.len() * 6 + 2 <= budget {
            assert_eq!(got, folded, "{field} did not round-trip");
        } else {
            assert!(folded.starts_with(&got), "cut {field} {got:?} is not a prefix of {folded:?}");
        }
    }
}

// --------------------------------------------------------------------- scanner

/// Builds the standard scanner once, before the first input: the targets
/// that scan (`scanner`, `update_merge`) call it from `fuzz_target!`'s
/// `init`, so its one-time cost (seconds under ASan on a busy machine) is not
/// charged to the first input, which libFuzzer's per-input timeout would
/// report as a hang.
pub fn warm_up() {
    let _ = Scanner::standard();
}

/// Longest excerpt a finding carries, in characters (the scanner's ~80).
const MAX_EXCERPT_CHARS: usize = 80;

/// Fuzz target `scanner`.
pub fn scanner(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let report = Scanner::standard().scan(text);
    let lines = text.split('\n').count();
    for f in &report.findings {
        assert!((1..=lines).contains(&f.line), "{} on line {} of a {lines}-line text", f.rule_id, f.line);
        assert!(!f.rule_id.is_empty(), "finding without a rule id");
        assert!(f.excerpt.chars().count() <= MAX_EXCERPT_CHARS, "excerpt too long: {:?}", f.excerpt);
        assert!(!f.excerpt.contains('\n'), "excerpt spans lines: {:?}", f.excerpt);
    }
    assert!(report.findings.windows(2).all(|w| w[0].line <= w[1].line), "findings not in line order");
    let worst = report.findings.iter().map(|f| f.severity).max();
    assert_eq!(report.max_severity(), worst);
    if let Some(worst) = worst {
        assert!(report.is_blocked(worst));
    }
}

// -------------------------------------------------------------- bundle_listing

/// Limits small enough that the fuzzer reaches every limit's branch.
fn small_limits() -> BundleLimits {
    BundleLimits { max_files: 4, max_file_bytes: 64, max_bundle_bytes: 160, ..BundleLimits::default() }
}

/// Fuzz target `bundle_listing`.
pub fn bundle_listing(data: &[u8]) {
    if let Ok(query) = serde_json::from_slice::<BlobQuery>(data) {
        let valid =
            query.blobs.len() <= MAX_BLOBS_PER_QUERY && query.blobs.iter().all(|b| bundle::is_sha256_hex(b));
        assert_eq!(query.validate().is_ok(), valid, "BlobQuery::validate of {:?}", query.blobs);
    }
    let packet = match serde_json::from_slice::<SkillPacket>(data) {
        Ok(packet) => packet,
        // A bare listing: around a minimal skill.
        Err(_) => match serde_json::from_slice::<Vec<BundleFile>>(data) {
            Ok(files) => SkillPacket {
                skill_body: "---\nname: fuzz\n---\nbody\n".into(),
                files,
                ..SkillPacket::default()
            },
            Err(_) => return,
        },
    };
    for limits in [BundleLimits::default(), small_limits()] {
        check_received(&packet, &limits);
        let sealed = sealed(packet.clone());
        check_received(&sealed, &limits);
        check_sent(&sealed, &limits);
    }
}

/// `packet` with `integrityHash`, its `SKILL.md` entry and `bundleDigest`
/// made to agree with its body and listing, as an honest sender's would.
fn sealed(mut packet: SkillPacket) -> SkillPacket {
    packet.reseal();
    if packet.files.is_empty() {
        return packet;
    }
    packet.files.retain(|f| f.path != SKILL_MD);
    packet.files.push(BundleFile {
        path: SKILL_MD.to_owned(),
        size: packet.skill_body.len() as u64,
        mode: FileMode::Regular.as_str().to_owned(),
        sha256: packet.integrity_hash.clone(),
    });
    packet.bundle_digest = bundle::bundle_digest(&packet.files);
    packet
}

/// What a receiver does with a listing, and what an accepted one keeps.
fn check_received(packet: &SkillPacket, limits: &BundleLimits) {
    let checked = bundle::check_packet(packet, limits);
    let manifest = BundleManifest::from_packet(packet, limits);
    match (&checked, &manifest) {
        (Ok(is_bundle), Ok(kept)) => {
            assert_eq!(*is_bundle, kept.is_some(), "check_packet and from_packet disagree")
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "check_packet and from_packet refuse for different reasons");
            check_refusal(a);
        }
        _ => panic!("check_packet {checked:?} but from_packet {manifest:?}"),
    }
    let Ok(Some(manifest)) = manifest else { return };
    let files = manifest.files();
    assert_eq!(manifest.digest(), packet.bundle_digest, "the kept digest is not the packet's");
    assert!(manifest.digest().starts_with(bundle::DIGEST_PREFIX) && manifest.digest().len() == 71);
    assert!(
        files.windows(2).all(|w| w[0].path.as_bytes() < w[1].path.as_bytes()),
        "not sorted, or a path twice"
    );
    assert!(files.len() <= limits.max_files, "{} files over the limit", files.len());
    assert!(manifest.total_bytes() <= limits.max_bundle_bytes, "over the bundle limit");
    for f in files {
        assert!(bundle::check_path(&f.path).is_ok(), "accepted path {:?}", f.path);
        assert!(bundle::is_sha256_hex(&f.sha256), "accepted sha256 {:?}", f.sha256);
        assert!(FileMode::parse(&f.mode).is_some(), "accepted mode {:?}", f.mode);
        assert!(f.size <= limits.max_file_bytes, "accepted size {}", f.size);
        assert_eq!(manifest.entry(&f.path), Some(f), "entry({:?}) does not find it", f.path);
    }
    let skill_md = manifest.entry(SKILL_MD).expect("an accepted bundle lists SKILL.md");
    assert_eq!(skill_md.sha256, packet.integrity_hash);
    // One line per file, whatever the paths hold, in any order.
    let listing = bundle::canonical_listing(files);
    assert_eq!(listing.lines().count(), files.len(), "a path forged a line of the listing:\n{listing}");
    let reversed: Vec<BundleFile> = packet.files.iter().rev().cloned().collect();
    assert_eq!(bundle::bundle_digest(&reversed), manifest.digest(), "the digest depends on the order sent");
    // Pending exactly while a blob is missing.
    assert!(manifest.pending_decision(|_| true).is_none());
    assert_eq!(manifest.pending_decision(|_| false).is_some(), !manifest.blob_ids().is_empty());
    assert!(manifest.blob_ids().iter().all(|b| files.iter().any(|f| f.path != SKILL_MD && f.sha256 == *b)));
}

/// A refusal becomes one line of a MergeResult and the quarantine: short, one line.
fn check_refusal(e: &BundleError) {
    let text = e.to_string();
    assert!(!text.is_empty() && text.len() < 4096, "a refusal of {} bytes", text.len());
    assert!(!text.contains(['\n', '\r']), "a refusal spans lines: {text:?}");
}

/// A sender's listing of the same paths (each file's bytes its path's)
/// is one that a receiver under the same limits accepts.
fn check_sent(packet: &SkillPacket, limits: &BundleLimits) {
    let companions: Vec<(&str, &[u8], bool)> = packet
        .files
        .iter()
        .filter(|f| f.path != SKILL_MD)
        .map(|f| (f.path.as_str(), f.path.as_bytes(), f.mode == FileMode::Executable.as_str()))
        .collect();
    let Ok(manifest) = BundleManifest::for_skill(&packet.skill_body, companions, limits) else { return };
    let mut plain = packet.clone();
    plain.files.clear();
    plain.bundle_digest.clear();
    let sent = plain.with_bundle(&manifest).expect("a resealed packet takes its own listing");
    match BundleManifest::from_packet(&sent, limits) {
        Ok(Some(received)) => assert_eq!(received.digest(), manifest.digest()),
        other => panic!("a listing built by for_skill is refused: {other:?}"),
    }
}

// ------------------------------------------------------------------- signature

/// The structured input of the `signature` target.
#[derive(Debug, Arbitrary)]
pub struct SignatureInput {
    key_id: String,
    secret: Vec<u8>,
    method: String,
    path: String,
    body: Vec<u8>,
    /// The verifier's clock, Unix seconds.
    now: i64,
    /// Signing time relative to `now`.
    offset: i32,
    nonce: String,
    max_skew: i64,
    status: u16,
    /// Headers as a hostile client might send them.
    presented: [Option<String>; 4],
    /// `X-ECP-HMAC` as a hostile client might send it, and a `Host`.
    legacy_header: Option<String>,
    host: Option<String>,
    /// Requests to one verifier, in order, against a model of its nonce cache.
    steps: Vec<Step>,
}

/// One request of [`SignatureInput::steps`].
#[derive(Debug, Arbitrary)]
pub struct Step {
    /// Which of two keys signs it.
    key: bool,
    /// Which of a few nonces it carries, so nonces repeat.
    nonce: u8,
    /// How far the clock moves on first (never back).
    advance: u16,
    /// Signing time relative to the clock.
    offset: i16,
}

/// The authority every request is signed for, and the only one the verifier answers to.
const AUTHORITY: &str = "fuzz-node.example:7327";

fn answers_to(authority: &str) -> bool {
    authority == AUTHORITY
}

/// A valid nonce for when the fuzzer's is not.
const FALLBACK_NONCE: &str = "fuzz-nonce-0000000000";

/// Fuzz target `signature`. Decodes the bytes as `fuzz_target!` does for a
/// typed input (`arbitrary_take_rest`), so kept files replay identically.
pub fn signature(data: &[u8]) {
    let Ok(input) = SignatureInput::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    check_signature(&input);
}

fn check_signature(input: &SignatureInput) {
    let key_id = if signed_auth::is_valid_key_id(&input.key_id) { input.key_id.as_str() } else { "fuzz-key" };
    let key = SigningKey::new(key_id, input.secret.clone()).expect("a valid key id makes a key");
    let verifier = RequestVerifier::new(vec![key.clone()]).with_max_skew(input.max_skew);
    let skew = verifier.max_skew_secs();
    assert!(skew >= 0, "with_max_skew({}) left a negative window {skew}", input.max_skew);
    let request = RequestLine { method: &input.method, path_and_query: &input.path };
    let now = input.now;

    hostile_headers(input, &key, &verifier, &request);

    // A request signed by the key verifies exactly once, if its nonce and time are valid.
    let ts = now.saturating_add(i64::from(input.offset));
    // An empty nonce (common in arbitrary input) stands for a valid one, so both paths are fuzzed.
    let nonce = if input.nonce.is_empty() { FALLBACK_NONCE } else { input.nonce.as_str() };
    let signed = signed_auth::sign_request(&key, AUTHORITY, &request, &input.body, ts, nonce);
    let pairs = signed.pairs();
    let presented = present(&pairs);
    let nonces = Mutex::new(NonceCache::default());
    // HTTP allows no line break in a method or target, and the verifier refuses one.
    let one_line = !input.method.contains(['\n', '\r']) && !input.path.contains(['\n', '\r']);
    let valid = one_line
        && signed_auth::is_valid_nonce(nonce)
        && (0..=999_999_999_999).contains(&ts)
        && ts.abs_diff(now) <= skew.unsigned_abs();
    let first = verifier.verify(&presented, &request, &input.body, now, &nonces, &answers_to);
    if valid {
        let ok = first.unwrap_or_else(|e| panic!("a correctly signed request was refused: {e}"));
        assert_eq!((ok.key.id(), ok.nonce.as_str(), ok.timestamp), (key_id, nonce, ts));
        let again = verifier.verify(&presented, &request, &input.body, now, &nonces, &answers_to);
        assert_eq!(again.err(), Some(SignedAuthError::Replay), "a replayed request was not refused");
        // Another body under the same headers never verifies (the body is checked before the nonce).
        let mut other = input.body.clone();
        other.push(b'!');
        let tampered = verifier.verify(&presented, &request, &other, now, &nonces, &answers_to);
        assert_eq!(tampered.err(), Some(SignatureMismatch), "a request with another body was accepted");
    } else {
        assert!(first.is_err(), "a request with nonce {nonce:?} at {ts} (now {now}) was accepted");
    }

    // The response to it verifies for the client, and not for another status.
    let exchange = Exchange { request, request_nonce: nonce, status: input.status };
    let response = signed_auth::sign_response(&key, &exchange, &input.body, ts);
    let pairs = response.pairs();
    let outcome = signed_auth::verify_response(&key, &present(&pairs), &exchange, &input.body, now, skew);
    assert_eq!(outcome.is_ok(), valid, "verify_response: {outcome:?}");
    if valid {
        let other = Exchange { status: input.status.wrapping_add(1), ..exchange };
        let outcome = signed_auth::verify_response(&key, &present(&pairs), &other, &input.body, now, skew);
        assert_eq!(outcome, Err(SignatureMismatch), "a response signature covered another status");
    }

    check_legacy(input);
    check_nonce_cache(input, &key);
}

fn present<'a>(pairs: &'a [(&'static str, String)]) -> PresentedHeaders<'a> {
    PresentedHeaders::read(|name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str()))
}

/// Whatever the headers hold, verification refuses or agrees with signing.
fn hostile_headers(
    input: &SignatureInput,
    key: &SigningKey,
    verifier: &RequestVerifier,
    request: &RequestLine<'_>,
) {
    let [key_id, timestamp, nonce, signature] = &input.presented;
    // The fuzzer's host stands for a hostile X-ECP-Authority.
    let presented = PresentedHeaders {
        authority: input.host.as_deref(),
        key_id: key_id.as_deref(),
        timestamp: timestamp.as_deref(),
        nonce: nonce.as_deref(),
        signature: signature.as_deref(),
    };
    let nonces = Mutex::new(NonceCache::with_capacity(4));
    let result = verifier.verify(&presented, request, &input.body, input.now, &nonces, &|a| {
        input.host.as_deref().is_some_and(|h| h.eq_ignore_ascii_case(a))
    });
    if let Ok(ok) = &result {
        // Only possible if the fuzzer reproduced the HMAC: then it is the one signing gives.
        let authority = input.host.as_deref().unwrap_or_default().trim();
        let expected =
            signed_auth::sign_request(key, authority, request, &input.body, ok.timestamp, &ok.nonce);
        assert!(
            same_hex(signature.as_deref().unwrap_or(""), &expected.signature),
            "forged signature accepted"
        );
    }
    if let Err(e) = &result {
        assert!(!e.to_string().is_empty() && !e.code().is_empty());
    }
    let exchange =
        Exchange { request: *request, request_nonce: nonce.as_deref().unwrap_or(""), status: input.status };
    let _ = signed_auth::verify_response(key, &presented, &exchange, &input.body, input.now, input.max_skew);
}

fn same_hex(presented: &str, expected: &str) -> bool {
    presented.trim().eq_ignore_ascii_case(expected)
}

/// `X-ECP-HMAC`: what is signed verifies; a hostile header verifies only if it is that signature.
fn check_legacy(input: &SignatureInput) {
    let secret = &input.secret;
    let header = input.legacy_header.as_deref();
    let post = legacy_auth::sign_post(secret, &input.body);
    assert_eq!(legacy_auth::verify(secret, &input.body, Some(&post)), Ok(()));
    if legacy_auth::verify(secret, &input.body, header).is_ok() {
        assert!(same_hex(header.unwrap_or(""), &post), "legacy POST accepted a header it did not sign");
    }
    let verifier = LegacyVerifier::new(secret.clone());
    let path = input.path.as_str();
    let host = input.host.as_deref();
    let get = legacy_auth::sign_get(secret, path);
    assert_eq!(verifier.verify_get(path, host, Some(&get)), Ok(()));
    assert_eq!(verifier.verify_post(&input.body, Some(&post)), Ok(()));
    if let Some(host) = host {
        let full = legacy_auth::sign(secret, format!("http://{host}{path}").as_bytes());
        assert_eq!(verifier.verify_get(path, Some(host), Some(&full)), Ok(()));
        let mut strict = verifier.clone();
        strict.accept_full_url = false;
        if full != get {
            assert!(strict.verify_get(path, Some(host), Some(&full)).is_err(), "full URL accepted when off");
        }
    }
    if verifier.verify_get(path, host, header).is_ok() {
        let h = header.unwrap_or("");
        let candidates = [
            Some(get),
            host.map(|h| legacy_auth::sign(secret, format!("http://{h}{path}").as_bytes())),
            host.map(|h| legacy_auth::sign(secret, format!("https://{h}{path}").as_bytes())),
        ];
        assert!(
            candidates.iter().flatten().any(|c| same_hex(h, c)),
            "legacy GET accepted a header it did not sign"
        );
    }
}

/// A sequence of signed requests against one verifier, each outcome checked
/// against what the replay rules say (`SPEC.md` §10.1) with a monotonic clock:
/// a nonce is refused while an earlier acceptance of it is live (its
/// timestamp plus the window not yet passed); a fresh one is refused only
/// when the cache is full of live nonces.
fn check_nonce_cache(input: &SignatureInput, key: &SigningKey) {
    const CAPACITY: usize = 3;
    const STEPS: usize = 64;
    // A second key with an id of its own: the fuzzer may have named the first one `fuzz-other`.
    let other_id = if key.id() == "fuzz-other" { "fuzz-other-2" } else { "fuzz-other" };
    let other = SigningKey::new(other_id, b"other secret".to_vec()).expect("valid key id");
    let keys = [key.clone(), other];
    let window = input.max_skew.clamp(0, 600);
    let verifier = RequestVerifier::new(keys.to_vec()).with_max_skew(window);
    let nonces = Mutex::new(NonceCache::with_capacity(CAPACITY));
    let request = RequestLine { method: "POST", path_and_query: "/ecp/skills" };
    // Far enough from 0 that every signing time is a valid (non-negative) header.
    let mut now = input.now.clamp(1_000_000, 900_000_000_000);
    // (key, nonce, expiry) of every accepted request.
    let mut accepted: Vec<(usize, u8, i64)> = Vec::new();
    for step in input.steps.iter().take(STEPS) {
        now += i64::from(step.advance);
        let k = usize::from(step.key);
        let n = step.nonce % 8;
        let nonce = format!("{FALLBACK_NONCE}-{n}");
        let ts = now + i64::from(step.offset);
        let headers: SignatureHeaders =
            signed_auth::sign_request(&keys[k], AUTHORITY, &request, b"{}", ts, &nonce);
        let pairs = headers.pairs();
        let got = verifier
            .verify(&present(&pairs), &request, b"{}", now, &nonces, &answers_to)
            .map(|_| ())
            .map_err(|e| e.code());
        let live: Vec<_> = accepted.iter().filter(|&&(_, _, until)| until >= now).collect();
        let expected = if ts.abs_diff(now) > window.unsigned_abs() {
            Err("clock_skew")
        } else if live.iter().any(|&&(ak, an, _)| ak == k && an == n) {
            Err("replayed_nonce")
        } else if live.len() >= CAPACITY {
            Err("replay_cache_full")
        } else {
            Ok(())
        };
        assert_eq!(got, expected, "step at {now}: key {k}, nonce {n}, ts {ts}");
        if got.is_ok() {
            accepted.push((k, n, ts + window));
        }
    }
}
