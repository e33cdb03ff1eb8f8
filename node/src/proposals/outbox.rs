//! The outbox: proposals this node made or relays go toward their origin,
//! and their answers come back, in the background ([`run`]).
//!
//! Each round ([`round`]) takes every outgoing or relayed proposal whose
//! state is not final. One not sent yet goes to the next hop: the origin
//! itself when it is a peer (its instance known from the peers file or
//! from contact), else the peer this node received the skill from
//! (`provenance.receivedFrom`). One sent is asked for its state there
//! (`GET /ecp/proposals/{id}`), which the next hop mirrors from its own
//! next hop in turn. A 404 to `POST /ecp/proposals` is a node that does
//! not take proposals (a Go node): recorded as such, final; any other 4xx
//! is a hop's refusal, recorded with its reason, final. A failure to reach
//! the hop (or a 429) leaves the proposal for the next round.

use std::collections::HashMap;
use std::time::Duration;

use axum::http::StatusCode;
use ecp_protocol::proposal::{Proposal, ProposalAnswer, ProposalState};

use crate::federation::{ClientError, Federator, PeerSpec};
use crate::library::Library;
use crate::store::{ProposalRecord, Role};

/// The note of a proposal whose origin answered 404 to the endpoint.
pub const UNSUPPORTED_NOTE: &str = "origin does not take proposals";

/// Runs rounds every `every`, and at once when a proposal is recorded,
/// for as long as the server runs.
pub async fn run(library: Library, federator: Federator, every: Duration) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = library.proposals_waiting().notified() => {}
        }
        round(&library, &federator).await;
    }
}

/// One round over the proposals on their way.
pub async fn round(library: &Library, federator: &Federator) {
    let Some(Ok(rows)) = library.in_background(|l| l.store().proposals(None)).await else { return };
    let rows: Vec<ProposalRecord> =
        rows.into_iter().filter(|r| r.role != Role::Incoming && !r.state.is_final()).collect();
    if rows.is_empty() {
        return;
    }
    let peers = federator.active_peers().await;
    let learned: HashMap<String, String> = library
        .in_background(|l| l.store().peer_states())
        .await
        .and_then(Result::ok)
        .unwrap_or_default()
        .into_iter()
        .map(|s| (s.url, s.instance))
        .collect();
    let instance_of = |peer: &PeerSpec| -> String {
        peer.instance
            .clone()
            .filter(|i| !i.is_empty())
            .or_else(|| learned.get(&peer.url).cloned())
            .unwrap_or_default()
    };
    for row in rows {
        let outcome = match &row.next_hop {
            None => send(library, federator, &peers, &instance_of, &row).await,
            Some(url) => match peers.iter().find(|p| &p.url == url) {
                Some(peer) => poll(federator, peer, &row).await,
                None => None,
            },
        };
        if let Some((state, note, published, hop)) = outcome {
            let id = row.id.clone();
            let stored = library
                .in_background(move |l| {
                    l.store().set_proposal_state(&id, state, &note, &published, hop.as_deref())
                })
                .await;
            if let Some(Err(e)) = stored {
                tracing::error!(error = %e, proposal = %row.id, "cannot record the proposal's state");
            }
        }
    }
}

/// A new state: state, note, published hash, the hop it went to.
type Outcome = Option<(ProposalState, String, String, Option<String>)>;

/// The next hop toward the origin of `row`'s skill, with its instance.
async fn route<'a>(
    library: &Library,
    peers: &'a [PeerSpec],
    instance_of: &impl Fn(&PeerSpec) -> String,
    row: &ProposalRecord,
) -> Option<(&'a PeerSpec, String)> {
    let origin = &row.derived_from.origin;
    if let Some(peer) = peers.iter().find(|p| &instance_of(p) == origin) {
        return Some((peer, origin.clone()));
    }
    let name = row.name.clone();
    let held = library.in_background(move |l| l.store().skill(&name)).await?.ok()??;
    let from = held.1.provenance.map(|p| p.received_from).filter(|f| !f.is_empty())?;
    peers.iter().find(|p| instance_of(p) == from).map(|p| (p, from))
}

async fn send(
    library: &Library,
    federator: &Federator,
    peers: &[PeerSpec],
    instance_of: &impl Fn(&PeerSpec) -> String,
    row: &ProposalRecord,
) -> Outcome {
    let Some((peer, instance)) = route(library, peers, instance_of, row).await else {
        let note = format!(
            "no peer leads toward the origin {} yet; tried again each round",
            row.derived_from.origin
        );
        return (row.state != ProposalState::Undeliverable)
            .then(|| (ProposalState::Undeliverable, note, String::new(), None));
    };
    let client = match federator.context().client(peer) {
        Ok(client) => client,
        Err(e) => {
            tracing::warn!(peer = %peer.url, error = %e, "cannot send the proposal");
            return None;
        }
    };
    let body = Proposal {
        peer_instance: library.store().instance_id().to_owned(),
        derived_from: row.derived_from.clone(),
        packet: row.packet.clone(),
    };
    let body = serde_json::to_vec(&body).expect("a proposal encodes");
    let hop = Some(peer.url.clone());
    match client.post_proposal(body).await {
        Ok(bytes) => match serde_json::from_slice::<ProposalAnswer>(&bytes) {
            Ok(answer) => {
                tracing::info!(proposal = %row.id, peer = %peer.url, state = answer.state.as_str(), "proposal sent");
                Some((answer.state, answer.note, answer.published_hash, hop))
            }
            Err(e) => {
                tracing::warn!(peer = %peer.url, error = %e, "the peer's answer to a proposal is not one; tried again later");
                None
            }
        },
        Err(ClientError::Status { status: StatusCode::NOT_FOUND, .. }) => {
            let note = if instance == row.derived_from.origin {
                UNSUPPORTED_NOTE.to_owned()
            } else {
                format!("{instance}, on the way to the origin, does not take proposals")
            };
            tracing::info!(proposal = %row.id, peer = %peer.url, "{note}; the derived version stays in use");
            Some((ProposalState::Unsupported, note, String::new(), hop))
        }
        Err(ClientError::Status { status, message, .. })
            if status.is_client_error() && status != StatusCode::TOO_MANY_REQUESTS =>
        {
            let note = format!("refused by {instance}: {message}");
            tracing::warn!(proposal = %row.id, peer = %peer.url, "proposal {note}");
            Some((ProposalState::Refused, note, String::new(), hop))
        }
        Err(e) => {
            tracing::debug!(proposal = %row.id, peer = %peer.url, error = %e, "proposal not sent; tried again later");
            None
        }
    }
}

async fn poll(federator: &Federator, peer: &PeerSpec, row: &ProposalRecord) -> Outcome {
    let client = federator.context().client(peer).ok()?;
    let bytes = match client.proposal(&row.id).await {
        Ok(bytes) => bytes,
        Err(e) => {
            tracing::debug!(proposal = %row.id, peer = %peer.url, error = %e, "cannot read the proposal's state");
            return None;
        }
    };
    let answer: ProposalAnswer = serde_json::from_slice(&bytes).ok()?;
    let changed =
        answer.state != row.state || answer.note != row.note || answer.published_hash != row.published_hash;
    changed.then_some((answer.state, answer.note, answer.published_hash, None))
}
