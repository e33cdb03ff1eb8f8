//! The skill library: the store plus its skills-folder projection, and the
//! one place through which skills change — so that every change is stored,
//! projected and announced the same way, whoever makes it (a peer, the
//! skills folder, the CLI, the local API).
//!
//! # Layout
//!
//! The skills folder's writer and whole projections are in
//! `library/folder.rs`; local skills are written in `library/local.rs`;
//! what peers send is merged in `library/merging.rs` (a push, a pull
//! round's pages, withdrawals weighed by the deletion guard, bundles that
//! waited for their files); the sharing decisions on local skills (`skill
//! private`, `skill share`, deciding again) are in
//! `library/share_decisions.rs`; the tests in `library/tests.rs`.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ecp_protocol::bundle::BundleLimits;
use ecp_protocol::skill_doc::StructureLimits;
use ecp_protocol::{SkillKind, SkillPacket};
use tokio::sync::{mpsc, watch};

use crate::agents::{Agent, Agents};
use crate::deletion_guard::Guard;
use crate::events::Events;
use crate::import::{Entries, Place};
use crate::intake::{self, IntakeMode, Limits};
use crate::metrics::Metrics;
use crate::permissions::PermissionPolicy;
use crate::projection::{Projection, ProjectionError};
use crate::sharing::Sharing;
use crate::store::{Change, InboxEntry, Source, Store, StoreError, Verdict};

mod folder;
mod local;
mod merging;
mod share_decisions;

/// Skills [`Library::project_all`] reads from the store at a time (in
/// tests 2, so that every test projecting skills crosses pages).
#[cfg(not(test))]
const PROJECT_PAGE: usize = 1_000;
#[cfg(test)]
pub(crate) const PROJECT_PAGE: usize = 2;

/// What the projection worker is sent: changes to write, or a caller to
/// tell once everything sent before has been written.
#[derive(Debug)]
enum ToProject {
    Changes(Vec<Change>),
    Flushed(tokio::sync::oneshot::Sender<()>),
}

/// The store, its projection, and a channel announcing the newest sequence number.
#[derive(Debug, Clone)]
pub struct Library {
    store: Arc<Store>,
    projection: Projection,
    /// Carries the newest sequence number; response caches and (later) the
    /// push-on-change federator watch it instead of polling the database.
    sequence: Arc<watch::Sender<i64>>,
    /// In a server (and a CLI pull), committed changes go to a background
    /// writer so that a request, or the next page's merge, does not wait for
    /// the file system (the store is already durable); without one (the
    /// other commands) they are projected at once.
    projector: Arc<OnceLock<mpsc::UnboundedSender<ToProject>>>,
    /// What every merge allows: installs per origin, new skills per sender, the
    /// quarantine's caps (`[limits]` of the configuration).
    limits: Limits,
    /// Whether skills from peers reach the folder at once or after review
    /// (`[policy] intake`).
    intake: IntakeMode,
    /// Which local skills may leave the node, and the folders they live in.
    sharing: Sharing,
    /// When an import pass's deletions wait for the user (`[limits] max_bulk_delete*`).
    guard: Guard,
    /// The node's metrics; the store feeds them its audit entries.
    metrics: Arc<Metrics>,
    /// The live event stream; the store feeds it its audit entries.
    events: Events,
    /// What the skills-folder import knows between passes (folders named
    /// otherwise than their skill, skills not shared and why).
    entries: Entries,
    /// The limits a local skill's document must fit (`[limits]
    /// max_skill_bytes`, `max_description_bytes`).
    structure: StructureLimits,
    /// The limits a local skill's folder must fit (`[limits] bundle_max_*`).
    bundle: BundleLimits,
    /// Open while the server's background jobs may run (`true`); see
    /// [`Library::in_background`].
    background: Arc<tokio::sync::RwLock<bool>>,
    /// `[[agent]]`: the folders filled for each agent (#24); empty: the
    /// projection's folder gets every skill, as without agents it always did.
    agents: Agents,
    /// Wakes the proposals' outbox ([`crate::proposals`]) when one is
    /// recorded, so it goes now rather than at the next poll.
    proposals: Arc<tokio::sync::Notify>,
}

impl Library {
    /// Opens the store in `data_dir` and projects into `skills_dir`.
    pub fn open(data_dir: &Path, skills_dir: &Path) -> Result<Library, StoreError> {
        let store = Arc::new(Store::open(data_dir)?);
        let seq = store.sequence()?;
        let (metrics, events) = (Arc::new(Metrics::default()), Events::default());
        store.observe_audit({
            let (metrics, events) = (metrics.clone(), events.clone());
            Box::new(move |entries| {
                metrics.record_audit(entries);
                events.publish(entries);
            })
        })?;
        let entries = Entries::load(&store)?;
        let projection = Projection::new(skills_dir)
            .stamped_by(store.instance_id())
            .with_entries(entries.clone(), Some(0))
            .with_blobs(store.clone());
        Ok(Library {
            store,
            projection,
            sequence: Arc::new(watch::channel(seq).0),
            projector: Arc::default(),
            limits: Limits::default(),
            intake: IntakeMode::default(),
            sharing: Sharing::single(skills_dir),
            guard: Guard::default(),
            metrics,
            events,
            entries,
            structure: StructureLimits::default(),
            bundle: BundleLimits::default(),
            background: Arc::new(tokio::sync::RwLock::new(true)),
            agents: Agents::default(),
            proposals: Arc::default(),
        })
    }

    /// The library filling `agents`' folders ([`crate::agents`]). Set it
    /// last: their folders are written as the projection is now.
    #[must_use]
    pub fn with_agents(mut self, agents: Vec<Agent>) -> Library {
        self.agents = Agents::new(agents, &self.projection);
        self
    }

    /// The agents whose folders the node fills.
    pub fn agents(&self) -> &Agents {
        &self.agents
    }

    /// The projection writing `dir`: the skills folder's, or an agent's.
    pub fn writer_of(&self, dir: &Path) -> Option<&Projection> {
        if dir == self.projection.dir() {
            return Some(&self.projection);
        }
        self.agents.projection_at(dir)
    }

    /// Whether the projection's folder gets received skills: always without
    /// agents; with them, the agents' folders do (and the projection's
    /// folder when it is an agent's too, through that agent's listing).
    fn main_shows(&self, kind: SkillKind) -> bool {
        kind != SkillKind::External || self.agents.is_empty()
    }

    /// With agents, a received skill the projection's folder shows no more:
    /// the copy the node wrote there goes, unless the folder is an agent's
    /// (whose listing decides).
    fn leave_main(&self, name: &str) -> Result<(), ProjectionError> {
        if self.agents.projection_at(self.projection.dir()).is_some() {
            return Ok(());
        }
        self.projection.remove(name)
    }

    /// The library importing local skills under `limits`. Set it before cloning.
    #[must_use]
    pub fn with_structure_limits(mut self, limits: StructureLimits) -> Library {
        self.structure = limits;
        self
    }

    /// The limits a local skill's document must fit.
    pub fn structure_limits(&self) -> &StructureLimits {
        &self.structure
    }

    /// The library importing local skill folders under `limits`. Set it before cloning.
    #[must_use]
    pub fn with_bundle_limits(mut self, limits: BundleLimits) -> Library {
        self.bundle = limits;
        self
    }

    /// The limits a local skill's folder must fit.
    pub fn bundle_limits(&self) -> &BundleLimits {
        &self.bundle
    }

    /// What the skills-folder import knows between passes.
    pub fn entries(&self) -> &Entries {
        &self.entries
    }

    /// The library with review intake on or off (`auto` otherwise).
    /// Set it before cloning: clones made earlier keep theirs.
    #[must_use]
    pub fn with_intake(mut self, intake: IntakeMode) -> Library {
        self.intake = intake;
        self
    }

    /// The library with other sharing settings (one shared folder, the
    /// projection's, otherwise). Set it before cloning.
    #[must_use]
    pub fn with_sharing(mut self, sharing: Sharing) -> Library {
        let projection_dir = self.projection.dir().to_owned();
        let others =
            sharing.folders().iter().map(|f| f.path.clone()).filter(|p| *p != projection_dir).collect();
        let index = sharing.folders().iter().position(|f| f.path == projection_dir);
        self.projection =
            self.projection.with_other_folders(others).with_entries(self.entries.clone(), index);
        self.sharing = sharing;
        self
    }

    /// The node's metrics (`GET /metrics`).
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The live event stream (`GET /v1/events`).
    pub fn events(&self) -> &Events {
        &self.events
    }

    /// The sharing settings.
    pub fn sharing(&self) -> &Sharing {
        &self.sharing
    }

    /// Where `name` lives among the sharing folders: the folder it was
    /// imported from when named otherwise, else the one holding its file,
    /// else the projection's (where `skill add` puts it).
    pub fn folder_of(&self, name: &str) -> Option<Place> {
        let index = self.sharing.folder_of(name).or_else(|| self.projection_folder());
        self.entries.alias(name).or_else(|| Some(Place { index: index?, entry: name.to_owned() }))
    }

    /// The index of the projection's folder among the sharing folders.
    pub fn projection_folder(&self) -> Option<usize> {
        self.sharing.folders().iter().position(|f| f.path == self.projection.dir())
    }

    /// The library applying `policy` to grants in received skills
    /// ([`crate::permissions`]; `strip` with the built-in keys otherwise).
    /// Set it before cloning.
    #[must_use]
    pub fn with_permissions(mut self, policy: PermissionPolicy) -> Library {
        self.projection = self.projection.with_permissions(policy, self.store.clone());
        self
    }

    /// The library with other limits (the defaults otherwise).
    /// Set it before cloning: clones made earlier keep theirs.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Library {
        self.store.set_history_depth(limits.history_depth);
        self.limits = limits;
        self
    }

    /// The library with another deletion guard (the defaults otherwise).
    /// Set it before cloning.
    #[must_use]
    pub fn with_deletion_guard(mut self, guard: Guard) -> Library {
        self.guard = guard;
        self
    }

    /// When an import pass's deletions are held.
    pub fn deletion_guard(&self) -> Guard {
        self.guard
    }

    /// The limits merges apply.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The store, for reads.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The projection.
    pub fn projection(&self) -> &Projection {
        &self.projection
    }

    /// The newest sequence number this process knows.
    pub fn sequence(&self) -> i64 {
        *self.sequence.borrow()
    }

    /// Subscribes to sequence changes.
    pub fn subscribe(&self) -> watch::Receiver<i64> {
        self.sequence.subscribe()
    }

    /// Projects committed changes and announces the new sequence number. A
    /// projection failure is logged, not returned: the store is the truth and
    /// the next change (or restart) writes the folder again.
    pub(crate) fn committed(&self, changes: &[Change]) {
        if changes.is_empty() {
            return;
        }
        // Before the folder is written: an edit the origin's new version
        // supersedes gives way to it (#20).
        crate::proposals::retire_superseded(self, changes);
        let queued =
            self.projector.get().is_some_and(|tx| tx.send(ToProject::Changes(changes.to_vec())).is_ok());
        if !queued {
            self.project(changes);
        }
        if let Some(seq) = changes.iter().map(|c| c.seq).max() {
            self.announce(seq);
        }
    }

    /// Announces sequence number `seq` when it is newer than the one known:
    /// a change that projects nothing (a revocation recorded, outcome
    /// evidence a packet carries — `SPEC.md` §14, §16.2) still has peers to tell.
    pub(crate) fn announce(&self, seq: i64) {
        self.sequence.send_if_modified(|known| {
            let newer = seq > *known;
            if newer {
                *known = seq;
            }
            newer
        });
    }

    fn project(&self, changes: &[Change]) {
        tracing::debug!(target: crate::TIMELINE, changes = changes.len(), "projection starts");
        let _done = Timed("projection done");
        let changes = &*crate::versions::hold_pinned(&self.store, changes);
        for change in changes.iter().filter(|c| !c.withheld && !c.packet.deprecated) {
            self.record_removed_grants(&change.packet, change.kind);
        }
        if self.agents.is_empty() {
            if let Err(e) = self.projection.apply(changes) {
                tracing::error!(error = %e, "skills folder not fully updated");
            }
            return;
        }
        let (shown, left): (Vec<Change>, Vec<Change>) =
            changes.iter().cloned().partition(|c| self.main_shows(c.kind));
        let mut done = self.projection.apply(&shown);
        for change in left.iter().filter(|c| !c.withheld) {
            done = done.and(self.leave_main(&change.packet.skill_name));
        }
        if let Err(e) = done {
            tracing::error!(error = %e, "skills folder not fully updated");
        }
        self.agents.fill(self);
    }

    /// What `skill show` and `GET /v1/skills/{name}` say about the grants
    /// removed from a skill's file, one line each: "allowed-tools: Bash,
    /// Write removed — received from <origin>".
    pub fn removed_grants(&self, packet: &SkillPacket, kind: SkillKind) -> Vec<String> {
        self.projection
            .removed_grants(packet, kind)
            .iter()
            .map(|g| format!("{g} removed — received from {}", packet.origin_instance))
            .collect()
    }

    /// Logs and audits the grants removed from a received skill's file as
    /// it is written for a new version.
    fn record_removed_grants(&self, packet: &SkillPacket, kind: SkillKind) {
        let removed = self.removed_grants(packet, kind);
        if removed.is_empty() {
            return;
        }
        let reason = removed.join("; ");
        tracing::info!(
            skill = %packet.skill_name,
            origin = %packet.origin_instance,
            removed = %reason,
            "permission-bearing frontmatter removed from the received skill's file ([policy] received_permissions)"
        );
        let actor = Source::Peer(packet.origin_instance.clone());
        let audited =
            self.store.transaction(|tx| tx.audit(&actor, &packet.skill_name, "permissions-removed", &reason));
        if let Err(e) = audited {
            tracing::error!(error = %e, skill = %packet.skill_name, "cannot audit the removed permissions");
        }
    }

    /// What `ecp-node status` and `GET /v1/status` report in common:
    /// identity, versions, sequence number and counts; blocking.
    pub fn status(&self) -> Result<serde_json::Map<String, serde_json::Value>, StoreError> {
        let summary = self.store.summary()?;
        let status = serde_json::json!({
            "instance": self.store.instance_id(),
            "protocolVersion": crate::PROTOCOL_VERSION,
            "nodeVersion": env!("CARGO_PKG_VERSION"),
            "sequence": summary.sequence,
            "skills": summary.skill_names.len(),
            "localSkills": summary.local_skills,
            "externalSkills": summary.external_skills,
            "tombstones": summary.tombstones,
            "privateSkills": summary.private_skills,
            "heldForSecrets": summary.held_for_secrets,
            "quarantineHeld": summary.quarantine_held,
            "inboxWaiting": summary.inbox_waiting,
            "lastUpdate": summary.last_update,
            "foldersUnavailable": crate::health::folders_are_there(self).err(),
            "heldDeletions": self.store.held_deletions()?,
        });
        let serde_json::Value::Object(mut map) = status else { unreachable!("a json! object is an object") };
        map.extend(crate::import::FolderReport::of(self)?.into_json());
        Ok(map)
    }

    /// Installs a quarantined packet (see [`intake::approve`]; `force` for
    /// one the scan flagged); blocking.
    pub fn approve(
        &self,
        id: i64,
        fallback_trust: f64,
        reshare: bool,
        force: bool,
    ) -> Result<SkillPacket, StoreError> {
        let change = intake::approve(&self.store, id, fallback_trust, reshare, force)?;
        self.committed(std::slice::from_ref(&change));
        Ok(change.packet)
    }

    /// Records the user's `verdict` on pending inbox entry `id`; an accepted
    /// skill is written to the folder at once. Blocking; audited.
    pub fn inbox_decide(&self, id: i64, verdict: Verdict) -> Result<InboxEntry, StoreError> {
        let entry = self.store.transaction(|tx| tx.decide(id, verdict))?;
        self.show_decided(std::slice::from_ref(&entry), verdict);
        Ok(entry)
    }

    /// [`Library::inbox_decide`] for every pending entry, in one transaction.
    pub fn inbox_decide_all(&self, verdict: Verdict) -> Result<Vec<InboxEntry>, StoreError> {
        let entries = self.store.transaction(|tx| {
            tx.inbox_ids()?.into_iter().map(|id| tx.decide(id, verdict)).collect::<Result<Vec<_>, _>>()
        })?;
        self.show_decided(&entries, verdict);
        Ok(entries)
    }

    /// Writes the skills of accepted entries to the folder.
    fn show_decided(&self, entries: &[InboxEntry], verdict: Verdict) {
        if verdict != Verdict::Accepted {
            return;
        }
        for entry in entries {
            match self.store.skill(&entry.skill_name) {
                Ok(Some((record, packet, _))) if !packet.deprecated => {
                    let kind = record.skill_kind();
                    self.record_removed_grants(&packet, kind);
                    if !self.main_shows(kind) {
                        continue;
                    }
                    if let Err(e) = self.projection.write(&packet, kind) {
                        tracing::error!(error = %e, "skills folder not fully updated");
                    }
                }
                Ok(_) => {}
                Err(e) => tracing::error!(error = %e, "cannot read an accepted skill to write it"),
            }
        }
        if !self.agents.is_empty() {
            self.agents.fill(self);
        }
    }

    /// Removes the blobs no kept version lists whose grace period is over
    /// (`[limits] blob_grace`); blocking. Returns how many were removed.
    pub fn collect_blobs(&self) -> Result<usize, StoreError> {
        let removed =
            self.store.collect_blobs(crate::store::origin_limits::unix_now(), self.limits.blobs.grace)?;
        if !removed.is_empty() {
            tracing::info!(blobs = removed.len(), "collected blobs no kept version lists");
        }
        Ok(removed.len())
    }

    /// Runs `job` on a blocking thread as one of the server's background jobs
    /// (an import pass, a projection batch, a blob collection): `None` once
    /// [`Library::stop_background`] ran, or if the job panicked. Aborting the
    /// task that waits for a blocking job does not stop the job, so the gate
    /// is what keeps a stopped node from writing to its store and folder.
    pub async fn in_background<T: Send + 'static>(
        &self,
        job: impl FnOnce(Library) -> T + Send + 'static,
    ) -> Option<T> {
        let open = Arc::clone(&self.background).read_owned().await;
        if !*open {
            return None;
        }
        let library = self.clone();
        tokio::task::spawn_blocking(move || {
            let _open = open;
            job(library)
        })
        .await
        .ok()
    }

    /// Told when a proposal waits to be sent ([`crate::proposals`]).
    pub fn proposals_waiting(&self) -> &tokio::sync::Notify {
        &self.proposals
    }

    /// Waits for the background job running now, if any, and lets no other
    /// start: after this, the server writes nothing more (its shutdown).
    pub async fn stop_background(&self) {
        *self.background.write().await = false;
    }

    /// Collects unused blobs ([`Library::collect_blobs`]) for as long as the
    /// server runs: every quarter of the grace period, from 1 s to 5 min.
    pub async fn collect_blobs_while_serving(self) {
        let every = (self.limits.blobs.grace / 4).clamp(Duration::from_secs(1), Duration::from_secs(300));
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Some(Err(e)) = self.in_background(|library| library.collect_blobs()).await {
                tracing::error!(error = %e, "cannot collect unused blobs");
            }
        }
    }

    /// Follows changes other processes (the CLI) commit to the same store:
    /// polls SQLite's `data_version` and announces the new sequence number.
    pub async fn follow_external_writes(self, every: Duration) {
        let mut last = None;
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let store = Arc::clone(&self.store);
            let polled = tokio::task::spawn_blocking(move || {
                Ok::<_, StoreError>((store.data_version()?, store.sequence()?))
            })
            .await;
            let Ok(Ok((version, mut seq))) = polled else { continue };
            if last.is_some_and(|v| v != version) {
                // The other process decided sharing with its own settings
                // (flags, node.toml), which may not be ours: decide again
                // before the change is announced and served.
                let decided = self
                    .in_background(|library| {
                        library.reconcile_all(Source::Operator)?;
                        library.store.sequence()
                    })
                    .await;
                if let Some(Ok(now)) = decided {
                    seq = now;
                }
                let changed = self.sequence.send_if_modified(|known| {
                    let changed = *known != seq;
                    *known = seq;
                    changed
                });
                if changed {
                    // The other process may project into another folder (its
                    // own flags); make ours show the change too.
                    let _ = self.in_background(|library| library.project_all()).await;
                }
            }
            last = Some(version);
        }
    }
}

#[cfg(test)]
mod tests;

/// A [`crate::TIMELINE`] event when dropped: the end of a step however it ends.
struct Timed(&'static str);

impl Drop for Timed {
    fn drop(&mut self) {
        tracing::debug!(target: crate::TIMELINE, "{}", self.0);
    }
}
