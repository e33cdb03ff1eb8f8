//! `GET /ecp/skills` (with ETag, `If-None-Match` and `?since=N`) and
//! `POST /ecp/skills` (`SPEC.md` › HTTP): the skills a node serves, and the
//! updates it is sent. Authentication, the size limit of a push and the
//! signature of the answer to a signed GET are the ECP guard's
//! ([`super::guard`]).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Extension;
use axum::body::Body;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use ecp_protocol::merge::{GO_DEFAULT_INSTANCE, SenderKind};
use ecp_protocol::{DecodeError, KnowledgeUpdate};

use super::MergeStarted;
use super::answer::{self, matches_etag, not_modified};
use super::auth::Caller;
use super::cache::Cached;
use super::error::ApiError;
use super::feed::{CHUNK, Feed, FeedBuilder, NodeStats, PLAIN_MAX, PageLimit};
use super::state::AppState;
use crate::intake::{Sender, address_account, key_account, peer_account};
use crate::serving::Stamp;

/// `GET /ecp/skills[?since=N][&limit=M]`: the full listing, the packets
/// changed after `N`, or a page of at most `M` of them (`SPEC.md` §10.2.5).
/// Every answer is cut from the feed, built once per change.
pub(super) async fn get(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let since = number(&query, "since", 0, "a sequence number (an integer ≥ 0)")?;
    let limit = number(&query, "limit", 1, "a number of packets (an integer ≥ 1)")?;
    // A page starts somewhere: `limit` alone pages from the beginning.
    let since = since.or(limit.map(|_| 0));
    let page = limit.map(|m| PageLimit {
        packets: usize::try_from(m).unwrap_or(usize::MAX).min(state.config.max_packets),
        bytes: state.config.page_bytes,
    });
    let seq = state.serving.sequence().await?;
    answer_at(&state, &caller, &headers, since, page, seq).await
}

/// The answer to `GET /ecp/skills` for a request that read sequence number
/// `seq`: the feed it is cut from may be newer (another request built it),
/// and every tag is the sequence number of the body it goes with.
async fn answer_at(
    state: &AppState,
    caller: &Caller,
    headers: &HeaderMap,
    since: Option<i64>,
    page: Option<PageLimit>,
    seq: i64,
) -> Result<Response, ApiError> {
    let instance = state.serving.instance_id().to_owned();
    let etag_for = |seq: i64| match (since, page) {
        (None, _) => format!("\"{instance}-{seq}\""),
        (Some(n), None) => format!("\"{instance}-{seq}-since-{n}\""),
        (Some(n), Some(p)) => format!("\"{instance}-{seq}-since-{n}-limit-{}\"", p.packets),
    };
    // The answer depends only on the sequence number: a matching tag needs no database.
    if matches_etag(headers, &etag_for(seq)) {
        return Ok(not_modified(&etag_for(seq)));
    }
    let feed = feed(state, seq).await?;
    // A hub's: fixed by its database, the same bytes on every replica (review H9).
    let stamp = feed.stamp().unwrap_or_else(|| Stamp::now(state.started));
    let tag = etag_for(feed.seq);
    if matches_etag(headers, &tag) {
        return Ok(not_modified(&tag));
    }
    let cut = since.map(|n| feed.since(n, page));
    match cut {
        Some(cut) if !feed.is_full_listing(&cut) => {
            let pieces = feed.answer(&instance, &cut, &stamp);
            if !matches!(caller, Caller::Signed(_)) {
                return Ok(answer::pieces(&pieces, &tag, None));
            }
            // A signed answer's signature covers the body's digest, made off the async threads.
            let (digest, pieces) = tokio::task::spawn_blocking(move || (pieces.digest(), pieces)).await?;
            Ok(answer::pieces(&pieces, &tag, Some(digest?)))
        }
        // The full listing, or an incremental answer with the same packets:
        // cached once per change, with its gzip encoding and its digest.
        // It shares the feed's bytes: one copy of the packets serves both.
        _ => {
            let build = || async {
                Ok::<_, ApiError>(Cached::from_pieces(feed.seq, feed.full_listing(&instance, &stamp)))
            };
            // Asked for at the feed's sequence number, and tagged with the
            // listing's own: a listing cached for an older one (stored by a
            // build that finished late) is never sent under a newer tag
            // (review H4), which clients would keep with 304s.
            let listing = state.cache.skills.get_or_build(feed.seq, build).await?;
            let tag = etag_for(listing.seq);
            if matches_etag(headers, &tag) {
                return Ok(not_modified(&tag));
            }
            Ok(answer::cached_gzip_if_accepted(headers, listing, &tag).await)
        }
    }
}

/// The query parameter `name` as an integer ≥ `min`, if present.
fn number(
    query: &HashMap<String, String>,
    name: &str,
    min: i64,
    what: &str,
) -> Result<Option<i64>, ApiError> {
    let Some(text) = query.get(name) else { return Ok(None) };
    match text.parse::<i64>() {
        Ok(n) if n >= min => Ok(Some(n)),
        _ => Err(ApiError::bad_request("invalid_query", format!("{name} must be {what}"))),
    }
}

/// The feed at least as new as `seq`, built once per change.
async fn feed(state: &AppState, seq: i64) -> Result<Arc<Feed>, ApiError> {
    let serving = state.serving.clone();
    // The last feed's size, not the feed: it is let go before its successor is built.
    let expected = state.cache.feed.peek().map_or(0, |last| last.json_len());
    let build = || async move {
        state.cache.skills.forget_older_than(seq);
        let feed = tokio::task::spawn_blocking(move || {
            let mut builder = FeedBuilder::new(PLAIN_MAX, CHUNK).expecting(expected);
            let (seq, summary) = serving.each_feed_row(|row| builder.push(row))?;
            let stamp = serving.stamp(&summary);
            let (uses, successes) = serving.outcome_totals()?;
            // Shared ones only: how many skills a node keeps private is its own business.
            let extractions = summary.local_skills - summary.private_skills;
            let node = NodeStats { extractions, top_tags: summary.top_tags, uses, successes };
            // Those of the feed's own state: one recorded since its snapshot
            // waits for the next feed (every replica of a hub then builds the
            // same answer for one sequence number).
            let mut revocations = serving.revocations_after(0)?;
            revocations.retain(|(at, _)| *at <= seq);
            Ok::<_, ApiError>(
                builder.finish(seq).with_node_stats(node).with_revocations(revocations).with_stamp(stamp),
            )
        })
        .await??;
        Ok::<_, ApiError>(Arc::new(feed))
    };
    state.cache.feed.get_or_build(seq, build).await
}

/// `POST /ecp/skills`: merge an update; answer the truthful MergeResult.
pub(super) async fn post(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    client: Option<Extension<ConnectInfo<SocketAddr>>>,
    merging: Option<Extension<MergeStarted>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    // The guard read the body whole, under the size limit, to authenticate it.
    // From here on the work is the node's own, bounded by the limits: it is
    // finished and answered whatever the request's time limit (SPEC.md §5.4.3).
    if let Some(Extension(merging)) = merging {
        merging.set();
    }
    let bytes = axum::body::to_bytes(body, usize::MAX).await.map_err(|e| ApiError::internal(&e))?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("empty_body", "request body is empty; send an ECPKnowledgeUpdate"));
    }
    let max = state.config.max_packets;
    // Counted before any packet is decoded: a body of millions of empty
    // packets is refused without building them.
    let update =
        match tokio::task::spawn_blocking(move || KnowledgeUpdate::from_json_at_most(&bytes, max)).await? {
            Err(too_many @ DecodeError::TooManyPackets { .. }) => {
                return Err(ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "too_many_packets",
                    too_many.to_string(),
                ));
            }
            decoded => decoded?,
        };
    let peer = update.peer_instance.trim();
    if let Err(problem) = ecp_protocol::merge::check_instance_id(peer) {
        return Err(ApiError::bad_request(
            "invalid_peer_instance",
            format!("peerInstance {problem} (it must name the sending instance in 1–128 printable bytes)"),
        ));
    }
    let sender = sender(&state, &caller, client, &headers, peer).await;
    // The configured peer that pushes holds what it pushes: our pushes to
    // it leave those versions out (SPEC.md §10.2.11).
    if let Some(federator) = &state.federator {
        federator.peer_sent(caller.peer().map(|o| o.url.as_str()), peer, &update.skills);
    }
    let serving = state.serving.clone();
    let policy = state.config.policy.clone();
    let result = tokio::task::spawn_blocking(move || serving.merge(update, &sender, &policy)).await??;
    let body = serde_json::to_vec(&result).map_err(|e| ApiError::internal(&e))?;
    Ok(answer::json(StatusCode::OK, body.into(), None))
}

/// Who sent a push or a proposal claiming `peer` as its instance: its
/// trust, its account for the per-sender limits, its kind.
pub(super) async fn sender(
    state: &AppState,
    caller: &Caller,
    client: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: &HeaderMap,
    peer: &str,
) -> Sender {
    // A push signed with a configured peer's own key is that peer's, whatever
    // peerInstance claims (SPEC.md §10.1.7.1); otherwise a configured peer's
    // claimed instance gets its trust (§5.4.2), anyone else the default (§8.1.2).
    let reshare = state.federator.as_ref().map_or(state.config.reshare_external, |f| f.reshare_external());
    let trust = match (caller.peer(), &state.federator) {
        (Some(owner), _) => owner.trust,
        (None, Some(f)) => f.inbound_trust_learning(peer).await.unwrap_or(state.config.default_trust),
        (None, None) => state.config.default_trust,
    };
    // The per-sender limits count what the node verified: the peer whose
    // key signed the push, else the key it was signed with (review H3:
    // clients behind one balancer or NAT each have a budget of their own),
    // else the client's address — never peerInstance. Behind a configured
    // balancer, the client it names (else every push through it is the
    // balancer's, one budget for all).
    let account = match (caller.peer(), caller, client) {
        (Some(owner), _, _) => peer_account(&owner.url),
        (None, Caller::Signed(signed), _) => key_account(signed.key_id()),
        (None, _, Some(Extension(ConnectInfo(addr)))) => {
            address_account(super::guard::client_address(&state.config.trusted_proxies, addr.ip(), headers))
        }
        (None, _, None) => "addr:unknown".to_owned(),
    };
    // X-ECP-HMAC alone, or the Go default identity: an ECP/1.1 sender,
    // whose origins are unverified (SPEC.md §6.6.1).
    let legacy = matches!(*caller, Caller::Legacy) || peer == GO_DEFAULT_INSTANCE;
    let kind = if legacy { SenderKind::Legacy } else { SenderKind::Current };
    Sender { instance: peer.to_owned(), account, trust, reshare, kind }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::library::Library;
    use crate::store::Source;
    use axum::http::header;
    use ecp_protocol::SkillPacket;

    fn put(library: &Library, name: &str) {
        let origin = crate::import::local_origin(library.store().instance_id());
        let body = format!(
            "---\nname: {name}\ndescription: A skill for tests\n---\n# {name}\n\n## Steps\n\
             1. Run the tests and read what fails.\n"
        );
        let packet = SkillPacket::new(&origin, name, "A skill for tests", &body, 0.9, crate::store::now());
        library.put_local(&packet, Source::Operator).expect("stored");
    }

    /// The listing's `sequenceNum` and its ETag.
    async fn sent(state: &AppState, seq: i64) -> (i64, String) {
        let response =
            answer_at(state, &Caller::Open, &HeaderMap::new(), None, None, seq).await.expect("an answer");
        let tag = response.headers()[header::ETAG].to_str().expect("a tag").to_owned();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("a body");
        let json: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
        (json["sequenceNum"].as_i64().expect("a sequence number"), tag)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_listing_cached_for_an_older_sequence_number_is_never_sent_under_a_newer_tag() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let config = Config::for_tests(dir.path());
        let library = Library::open(&config.data_dir, &config.skills_dir).expect("a store");
        let state = AppState::new(library.clone(), config);
        put(&library, "first-skill");
        let one = state.serving.sequence().await.expect("a sequence number");
        assert_eq!(sent(&state, one).await.0, one);
        // A change; a request that read it builds the new feed, letting the
        // old listing go…
        put(&library, "second-skill");
        let two = state.serving.sequence().await.expect("a sequence number");
        assert!(two > one);
        let old = state.cache.skills.peek().expect("the listing at `one` is cached");
        feed(&state, two).await.expect("the feed at `two`");
        // …and a build for `one`, finishing late, stores its listing again.
        state.cache.skills.get_or_build(one, || async { Ok::<_, ApiError>(old) }).await.expect("stored");
        // A request that read `one` before the change gets the newest
        // listing, under its own tag (review H4: the old listing, tagged `two`).
        let (seq, tag) = sent(&state, one).await;
        assert_eq!(seq, two, "the newest listing");
        assert!(tag.ends_with(&format!("-{seq}\"")), "the tag {tag} is the body's ({seq})");
    }
}
