//! [`Snapshot`]: what the status page shows, read from the store and the
//! federator in one go, each list cut to a bound (a node may hold tens of
//! thousands of skills; the page says how many more there are and which
//! command lists them all).

use std::collections::HashMap;
use std::net::SocketAddr;

use ecp_protocol::{Provenance, SkillKind, SkillPacket};

use super::super::error::ApiError;
use super::super::state::AppState;
use crate::federation::PeerView;
use crate::store::{AuditEntry, HeldDeletion, Hold, InboxEntry, QuarantineEntry, SkillRecord, StoreError};

/// Skills shown, at most.
const MAX_SKILLS: usize = 500;
/// Quarantine and inbox entries shown, at most, each.
const MAX_ENTRIES: usize = 200;
/// Audit lines shown (the newest).
const MAX_DECISIONS: usize = 50;

/// The node as the page shows it.
pub(super) struct NodeFacts {
    pub(super) instance: String,
    pub(super) node_version: String,
    pub(super) protocol_version: String,
    pub(super) listen: SocketAddr,
    /// The data folder's own name, never its absolute path.
    pub(super) data_folder: String,
    pub(super) sequence: i64,
    pub(super) uptime_seconds: u64,
    pub(super) auth_required: bool,
}

/// A list cut to a bound: the first items and how many there are in all.
pub(super) struct Cut<T> {
    pub(super) items: Vec<T>,
    pub(super) total: usize,
}

impl<T> Cut<T> {
    fn of(mut items: Vec<T>, max: usize) -> Cut<T> {
        let total = items.len();
        items.truncate(max);
        Cut { items, total }
    }
}

/// A skill with where it came from.
pub(super) struct SkillRow {
    pub(super) record: SkillRecord,
    /// Its packet's provenance path, origin first (empty when none was recorded).
    pub(super) path: Vec<String>,
    /// Times received on its way here.
    pub(super) hops: u32,
    /// The instance it was received from.
    pub(super) received_from: String,
    /// The version it is pinned to (#25), when it is.
    pub(super) pinned: Option<i64>,
}

/// Everything on the page.
pub(super) struct Snapshot {
    pub(super) node: NodeFacts,
    pub(super) peers: Vec<PeerView>,
    pub(super) decisions: Vec<AuditEntry>,
    pub(super) quarantine: Cut<QuarantineEntry>,
    pub(super) inbox: Cut<InboxEntry>,
    /// Proposals (#20): received for review, sent, relayed.
    pub(super) proposals: Cut<crate::store::ProposalRecord>,
    pub(super) deletions: Vec<HeldDeletion>,
    pub(super) skills: Cut<SkillRow>,
}

/// Reads the snapshot for a request that reached the node at `local`.
pub(super) async fn read(state: &AppState, local: SocketAddr) -> Result<Snapshot, ApiError> {
    let peers = super::super::v1::peer_views(state).await?;
    let library = state.library.clone();
    let (sequence, decisions, quarantine, inbox, proposals, deletions, skills) =
        tokio::task::spawn_blocking(move || {
            let store = library.store();
            Ok::<_, StoreError>((
                store.sequence()?,
                store.audit(MAX_DECISIONS)?,
                Cut::of(store.quarantine()?, MAX_ENTRIES),
                Cut::of(store.inbox()?, MAX_ENTRIES),
                Cut::of(store.proposals(None)?, MAX_ENTRIES),
                store.held_deletions()?,
                skill_rows(store.list_skills()?, store.current_packets()?, store.pins()?),
            ))
        })
        .await??;
    let node = NodeFacts {
        instance: state.library.store().instance_id().to_owned(),
        node_version: env!("CARGO_PKG_VERSION").to_owned(),
        protocol_version: crate::PROTOCOL_VERSION.to_owned(),
        listen: local,
        data_folder: folder_name(&state.config.data_dir),
        sequence,
        uptime_seconds: state.started.elapsed().as_secs(),
        auth_required: !state.keyring.current().is_empty(),
    };
    Ok(Snapshot { node, peers, decisions, quarantine, inbox, proposals, deletions, skills })
}

/// The records joined with their packets' provenance, by name (both lists
/// are read apart: a skill added in between simply shows none).
fn skill_rows(
    records: Vec<SkillRecord>,
    packets: Vec<(SkillPacket, SkillKind)>,
    mut pins: HashMap<String, Hold>,
) -> Cut<SkillRow> {
    let mut provenance: HashMap<String, Provenance> =
        packets.into_iter().filter_map(|(p, _)| Some((p.skill_name, p.provenance?))).collect();
    let total = records.len();
    let items = records
        .into_iter()
        .take(MAX_SKILLS)
        .map(|record| {
            let (path, hops, received_from) = provenance
                .remove(&record.name)
                .map_or((Vec::new(), 0, String::new()), |p| (p.path, p.hops, p.received_from));
            let pinned = pins.remove(&record.name).map(|h| h.version);
            SkillRow { record, path, hops, received_from, pinned }
        })
        .collect();
    Cut { items, total }
}

/// The last part of `dir` ("data" for `/srv/ecp/data`): the page shows no
/// absolute path.
fn folder_name(dir: &std::path::Path) -> String {
    dir.file_name().map_or_else(|| ".".to_owned(), |n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str) -> SkillRecord {
        SkillRecord {
            name: name.to_owned(),
            kind: "local",
            origin: "here".to_owned(),
            origin_verified: true,
            origin_key: None,
            version: 1,
            confidence: 0.9,
            prior_confidence: 0.9,
            score: crate::store::Score::default(),
            deprecated: false,
            shareable: true,
            private: None,
            private_reason: None,
            description: String::new(),
            tags: Vec::new(),
            created_at: String::new(),
            updated_at: String::new(),
            seq: 1,
            integrity_hash: String::new(),
        }
    }

    #[test]
    fn skills_are_cut_at_their_limit_and_counted_whole() {
        let records = |n: usize| (0..n).map(|i| record(&format!("s{i}"))).collect::<Vec<_>>();
        let at = skill_rows(records(MAX_SKILLS), Vec::new(), HashMap::new());
        assert_eq!((at.items.len(), at.total), (MAX_SKILLS, MAX_SKILLS));
        let past = skill_rows(records(MAX_SKILLS + 1), Vec::new(), HashMap::new());
        assert_eq!((past.items.len(), past.total), (MAX_SKILLS, MAX_SKILLS + 1));
        let entries = Cut::of((0..=MAX_ENTRIES).collect(), MAX_ENTRIES);
        assert_eq!((entries.items.len(), entries.total), (MAX_ENTRIES, MAX_ENTRIES + 1));
    }

    #[test]
    fn a_pinned_skill_carries_its_pinned_version() {
        let hold = Hold { name: "s1".into(), version: 1, digest: "d".into() };
        let rows =
            skill_rows(vec![record("s0"), record("s1")], Vec::new(), HashMap::from([("s1".into(), hold)]));
        let pinned: Vec<Option<i64>> = rows.items.iter().map(|r| r.pinned).collect();
        assert_eq!(pinned, [None, Some(1)]);
    }

    #[test]
    fn the_data_folder_is_shown_by_its_name_only() {
        assert_eq!(folder_name(std::path::Path::new("/srv/ecp/data")), "data");
        assert_eq!(folder_name(std::path::Path::new("/")), ".");
    }
}
