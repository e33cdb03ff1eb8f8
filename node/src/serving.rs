//! The ECP serving path's one store interface: what the manifest, the
//! listings, one version by digest, a push and the replay check of signed
//! requests need from a store — on either backend: the node's own library
//! (SQLite, [`Library`]) or a hub's PostgreSQL database ([`HubStore`],
//! `--store postgres://…`), which several replicas share — and the one
//! `/v1/` read a hub serves too, search.
//!
//! The quarantine review (`/v1/quarantine…`) goes through it too (`review`):
//! a hub's replicas review the quarantine they share.
//!
//! The HTTP handlers of the ECP endpoints go through [`Serving`] only; the
//! reads block (async callers use `spawn_blocking`), except
//! [`Serving::sequence`] and [`Serving::admit_nonce`], which are async so
//! that the node's own store answers them from memory without a thread hop.

mod review;

use std::sync::Arc;

use ecp_protocol::identity::NodeKey;
use ecp_protocol::wire::{PROFILE_ECP_1_3, PROFILE_PROPOSALS, PROFILE_REVOCATIONS, PROFILE_VERSIONS};
use ecp_protocol::{KnowledgeUpdate, MergeResult, SkillPacket, StandardPolicy, Timestamp};
use tokio::sync::watch;

use crate::intake::Sender;
use crate::library::Library;
use crate::store::hub::{Admission, HubStore};
use crate::store::search::{self, Answer, QueryError};
use crate::store::{FeedRow, StoreError, Summary};

/// When an answer says it was made (`generatedAt`), and how long its
/// node had been up then (`uptimeHours`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stamp {
    /// `generatedAt`.
    pub generated_at: Timestamp,
    /// `uptimeHours`.
    pub uptime_hours: f64,
}

impl Stamp {
    /// Now, for a node up since `started`.
    pub fn now(started: std::time::Instant) -> Stamp {
        Stamp { generated_at: crate::store::now(), uptime_hours: started.elapsed().as_secs_f64() / 3600.0 }
    }
}

/// The store the ECP endpoints serve from.
#[derive(Debug, Clone)]
pub enum Serving {
    /// The node's own library: SQLite and the skills folder.
    Local(Box<Library>),
    /// A hub replica: the shared PostgreSQL database.
    Hub(Arc<HubStore>),
}

impl Serving {
    /// The instance id the node serves as.
    pub fn instance_id(&self) -> &str {
        match self {
            Serving::Local(library) => library.store().instance_id(),
            Serving::Hub(hub) => hub.instance_id(),
        }
    }

    /// The key the node signs what it authors with.
    pub fn node_key(&self) -> &NodeKey {
        match self {
            Serving::Local(library) => library.store().node_key(),
            Serving::Hub(hub) => hub.node_key(),
        }
    }

    /// The optional profiles served (the manifest's `profiles`): a hub
    /// takes bundles and revocations as a node does, and no proposals.
    pub fn profiles(&self) -> Vec<String> {
        let listed: &[&str] = match self {
            Serving::Local(_) => &[PROFILE_ECP_1_3, PROFILE_VERSIONS, PROFILE_REVOCATIONS, PROFILE_PROPOSALS],
            Serving::Hub(_) => &[PROFILE_ECP_1_3, PROFILE_VERSIONS, PROFILE_REVOCATIONS],
        };
        listed.iter().map(|p| (*p).to_owned()).collect()
    }

    /// The sequence number of the newest change: the library's from
    /// memory, a hub's from the database (another replica may have
    /// committed since this one last looked).
    pub async fn sequence(&self) -> Result<i64, StoreError> {
        match self {
            Serving::Local(library) => Ok(library.sequence()),
            Serving::Hub(hub) => {
                let hub = hub.clone();
                tokio::task::spawn_blocking(move || hub.sequence()).await.map_err(joined)?
            }
        }
    }

    /// Follows the newest sequence number.
    pub fn subscribe(&self) -> watch::Receiver<i64> {
        match self {
            Serving::Local(library) => library.subscribe(),
            Serving::Hub(hub) => hub.subscribe(),
        }
    }

    /// Counts and names for the manifest; blocking.
    pub fn summary(&self) -> Result<Summary, StoreError> {
        match self {
            Serving::Local(library) => library.store().summary(),
            Serving::Hub(hub) => hub.summary(),
        }
    }

    /// Visits every served packet in sequence order; returns the sequence
    /// number they are current at and the [`Summary`] — a hub's from the
    /// same snapshot (review H9); blocking.
    pub fn each_feed_row(
        &self,
        visit: impl FnMut(FeedRow<'_>) -> Result<(), StoreError>,
    ) -> Result<(i64, Summary), StoreError> {
        match self {
            Serving::Local(library) => {
                let seq = library.store().each_feed_row(visit)?;
                Ok((seq, library.store().summary()?))
            }
            Serving::Hub(hub) => hub.each_feed_row(visit),
        }
    }

    /// The `generatedAt` and `uptimeHours` of the answers built from
    /// `summary` when the database fixes them: a hub's, so that every
    /// replica sends the same bytes under one ETag (review H9). `None`: the
    /// node's own clock, when it answers.
    pub fn stamp(&self, summary: &Summary) -> Option<Stamp> {
        match self {
            Serving::Local(_) => None,
            Serving::Hub(hub) => Some(hub.stamp(summary)),
        }
    }

    /// Uses and successes this node's agents reported of every skill
    /// (`stats`, `SPEC.md` §3.4.1); blocking. None on a hub: agents report
    /// to a node's local `/v1/` API, which a hub does not serve; the claims
    /// others observed travel on its packets instead.
    pub fn outcome_totals(&self) -> Result<(i64, i64), StoreError> {
        match self {
            Serving::Local(library) => library.store().outcome_totals(),
            Serving::Hub(_) => Ok((0, 0)),
        }
    }

    /// The revocations recorded after `since`, the newest 1,000; blocking.
    pub fn revocations_after(&self, since: i64) -> Result<Vec<(i64, String)>, StoreError> {
        match self {
            Serving::Local(library) => library.store().revocations_after(since),
            Serving::Hub(hub) => hub.revocations_after(since),
        }
    }

    /// The version of `name` with `digest`, if it is served; blocking.
    pub fn servable(&self, name: &str, digest: &str) -> Result<Option<SkillPacket>, StoreError> {
        match self {
            Serving::Local(library) => crate::versions::servable(library, name, digest),
            Serving::Hub(hub) => hub.servable(name, digest),
        }
    }

    /// Merges a pushed update; blocking.
    pub fn merge(
        &self,
        update: KnowledgeUpdate,
        sender: &Sender,
        policy: &StandardPolicy,
    ) -> Result<MergeResult, StoreError> {
        match self {
            Serving::Local(library) => library.merge(update, sender, policy),
            Serving::Hub(hub) => hub.merge(update, sender, policy),
        }
    }

    /// Ranked full-text search (`GET /v1/search`) with `text`, `limit` and
    /// `tags` as the user gave them: the node's index, or a hub's
    /// PostgreSQL full-text search; blocking.
    pub fn search_text(
        &self,
        text: &str,
        limit: Option<&str>,
        tags: Option<&str>,
    ) -> Result<Result<Answer, QueryError>, StoreError> {
        match self {
            Serving::Local(library) => library.store().search_text(text, limit, tags),
            Serving::Hub(hub) => search::answer(text, limit, tags, |query, limit| hub.search(query, limit)),
        }
    }

    /// Admits the nonce of a signed request by `key_id` across replicas, at
    /// most `cap` held per key: a replay when another replica admitted it
    /// already. The node's own store has nothing to add to its in-memory
    /// nonce cache, which checked it already.
    pub async fn admit_nonce(&self, key_id: &str, nonce: &str, cap: usize) -> Result<Admission, StoreError> {
        match self {
            Serving::Local(_) => Ok(Admission::Admitted),
            Serving::Hub(hub) => {
                let (hub, key_id, nonce) = (hub.clone(), key_id.to_owned(), nonce.to_owned());
                // Kept as long as a timestamp can be within the skew either side of now.
                let keep = 2 * ecp_protocol::signed_auth::MAX_CLOCK_SKEW_SECS;
                tokio::task::spawn_blocking(move || hub.admit_nonce(&key_id, &nonce, keep, cap))
                    .await
                    .map_err(joined)?
            }
        }
    }
}

fn joined(e: tokio::task::JoinError) -> StoreError {
    StoreError::Io(std::io::Error::other(crate::joined::described(&e)))
}
