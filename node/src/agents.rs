//! Agents' folders under a budget (#24 item 3): `[[agent]]` names a folder
//! the node fills, for one agent, with received skills — real files, as the
//! projection writes them ([`crate::projection`]), never links (one harness
//! does not follow symlinked skill folders) — chosen by the documented rule
//! of [`rule`] until the listing, in characters of `name: description`,
//! reaches `budget_chars`. Everything else stays reachable through search.
//!
//! - Without any `[[agent]]` nothing here runs: the skills folder gets what
//!   it always got.
//! - With agents, received skills reach the agents' folders only: the
//!   projection's folder keeps its local skills, and the received copies
//!   it wrote leave it unless it is an agent's folder too (then that
//!   agent's listing decides) — see [`crate::library::Library`].
//! - Candidates: every received skill the folder view shows (pins, review
//!   intake, held deletions and retirement honoured:
//!   [`crate::library::Library::folder_view`]), and the local skills of
//!   other agents' folders. A local skill of a plain `[[folder]]` stays in
//!   its folder only.
//! - An agent's edit of a received skill is its derived version (#20,
//!   [`crate::proposals`]): every agent's folder that lists the skill shows
//!   the edit, so it stays the same in all of them, until the origin's
//!   version that supersedes it arrives.
//! - A skill leaving a listing leaves that folder only: the node removes
//!   the files it wrote there (an agent's own file stays), nothing is
//!   deleted from the store, nothing is sent to peers. The importer never
//!   tombstones a received skill for a missing file, and a local skill of
//!   the agent's folder is never removed from it.
//! - One record of writes for all folders: a copy the node wrote in an
//!   agent's folder is the node's ([`Agents::projection_at`]), so the
//!   importer (of an agent folder that is also a `[[folder]]`) takes only
//!   an agent's edit — once, in the folder it was made in.
//!
//! # Layout
//!
//! - `agents.rs`: [`Agents`], the folders and their fill.
//! - `agents/rule.rs`: the rule, pure: [`pick`], [`Listing`], why in or out.
//! - `agents/edit.rs`: `ecp-node agents add` and `remove`, edits of node.toml.

mod edit;
mod rule;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use ecp_protocol::{SkillKind, SkillPacket};

pub use crate::config::{Agent, Select};
pub use edit::{EditError, add_agent, remove_agent};
pub use rule::{Candidate, Line, Listing, Why, listing_chars, pick};

use crate::config::same_path;
use crate::library::Library;
use crate::projection::Projection;
use crate::store::{Pick, StoreError};

/// One agent and the projection that writes its folder.
#[derive(Debug)]
struct AgentFolder {
    agent: Agent,
    projection: Projection,
}

/// The node's agents; empty without `[[agent]]`.
#[derive(Debug, Clone, Default)]
pub struct Agents {
    folders: Arc<Vec<AgentFolder>>,
    /// The listing size last warned about, per agent: an over-budget
    /// listing is logged when it changes, not at every fill.
    warned: Arc<Mutex<HashMap<String, u64>>>,
}

impl Agents {
    /// The agents, each folder written like `main`'s (the same stamp,
    /// grants, blobs and record of writes).
    pub fn new(agents: Vec<Agent>, main: &Projection) -> Agents {
        let folders = agents
            .into_iter()
            .map(|agent| AgentFolder { projection: main.into_folder(&agent.path), agent })
            .collect();
        Agents { folders: Arc::new(folders), warned: Arc::default() }
    }

    /// Whether no agent is configured.
    pub fn is_empty(&self) -> bool {
        self.folders.is_empty()
    }

    /// The agents, in the file's order.
    pub fn all(&self) -> impl Iterator<Item = &Agent> {
        self.folders.iter().map(|f| &f.agent)
    }

    /// The agent named `name`.
    pub fn get(&self, name: &str) -> Option<&Agent> {
        self.all().find(|a| a.name == name)
    }

    /// The projection of the agent whose folder is `dir`.
    pub fn projection_at(&self, dir: &Path) -> Option<&Projection> {
        self.folders.iter().find(|f| same_path(&f.agent.path, dir)).map(|f| &f.projection)
    }

    /// The projection writing agent `name`'s folder.
    pub fn projection_of(&self, name: &str) -> Option<&Projection> {
        self.folders.iter().find(|f| f.agent.name == name).map(|f| &f.projection)
    }

    /// `agent`'s listing now; blocking.
    pub fn listing(&self, library: &Library, agent: &Agent) -> Result<Listing, StoreError> {
        Ok(self.survey(&gather(library)?, agent).0)
    }

    /// `agent`'s listing from what the node `held`, and the entries of its
    /// folder that hold its local skills (never removed).
    fn survey(&self, held: &[Held], agent: &Agent) -> (Listing, HashSet<String>) {
        let mut here = HashSet::new();
        let mut candidates = Vec::new();
        for skill in held {
            let mut local_here = false;
            if let Some((path, entry)) = &skill.home {
                if same_path(path, &agent.path) {
                    local_here = true;
                    here.insert(entry.clone());
                } else if !self.all().any(|a| same_path(&a.path, path)) {
                    // A plain [[folder]]'s own skill stays there.
                    continue;
                }
            }
            candidates.push(Candidate {
                name: skill.name.clone(),
                description: skill.description.clone(),
                confidence: skill.confidence,
                tags: skill.tags.clone(),
                local_here,
            });
        }
        (rule::pick(agent, candidates), here)
    }

    /// Writes each agent's folder to hold its listing now, and removes the
    /// copies the node wrote of skills that left it; blocking. Two passes
    /// over the store's records whatever the number of agents, and
    /// the listed skills read. Failures are logged:
    /// the store is the truth and the next fill tries again.
    pub fn fill(&self, library: &Library) {
        if let Err(e) = self.fill_all(library) {
            tracing::error!(error = %e, "agents' folders not fully updated");
        }
    }

    fn fill_all(&self, library: &Library) -> Result<(), StoreError> {
        let held = gather(library)?;
        let surveys: Vec<(HashSet<String>, HashSet<String>)> = self
            .folders
            .iter()
            .map(|folder| {
                let (listing, here) = self.survey(&held, &folder.agent);
                self.warn_over_budget(&listing);
                let written = listing
                    .lines
                    .into_iter()
                    .filter(|l| l.listed && l.why != Why::Local)
                    .map(|l| l.name)
                    .collect();
                (written, here)
            })
            .collect();
        let names: HashSet<&str> =
            surveys.iter().flat_map(|(written, _)| written.iter().map(String::as_str)).collect();
        let edited: HashSet<String> = library.store().active_derived_names()?.into_iter().collect();
        each_packet(library, &names, |packet, kind| {
            // The node's agents use an agent's edit of a received skill
            // (#20): every agent's folder shows it, as the agent wrote it.
            let edit = edited
                .contains(&packet.skill_name)
                .then(|| library.store().derived(&packet.skill_name).ok().flatten())
                .flatten()
                .filter(|d| d.state == "active");
            let (packet, kind) = match &edit {
                Some(derived) => (&derived.packet, SkillKind::Local),
                None => (packet, kind),
            };
            for (folder, (written, _)) in self.folders.iter().zip(&surveys) {
                if !written.contains(&packet.skill_name) {
                    continue;
                }
                if let Err(e) = folder.projection.write(packet, kind) {
                    tracing::error!(agent = %folder.agent.name, error = %e, "agent's folder not fully updated");
                }
            }
        })?;
        for (folder, (written, here)) in self.folders.iter().zip(&surveys) {
            let Ok(entries) = std::fs::read_dir(&folder.agent.path) else { continue };
            for item in entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())) {
                let Some(entry) = item.file_name().to_str().map(str::to_owned) else { continue };
                if written.contains(&entry) || here.contains(&entry) {
                    continue;
                }
                if ecp_protocol::skill_doc::validate_name(&entry).is_err() {
                    continue;
                }
                // Only the files the node wrote go: an agent's own stay.
                if let Err(e) = folder.projection.remove(&entry) {
                    tracing::error!(agent = %folder.agent.name, error = %e, "agent's folder not fully updated");
                }
            }
        }
        Ok(())
    }

    /// Removes the temporary files writers killed mid-write left in the
    /// agents' folders (as [`Projection::sweep_leftovers`]); how many.
    pub fn sweep_leftovers(&self) -> usize {
        self.folders.iter().map(|f| f.projection.sweep_leftovers()).sum()
    }

    fn warn_over_budget(&self, listing: &Listing) {
        let mut warned = self.warned.lock().unwrap_or_else(|p| p.into_inner());
        if !listing.over_budget {
            warned.remove(&listing.agent);
            return;
        }
        if warned.insert(listing.agent.clone(), listing.chars) != Some(listing.chars) {
            tracing::warn!(
                agent = %listing.agent,
                chars = listing.chars,
                budget_chars = listing.budget_chars,
                "the agent's listing is over its budget_chars (select = \"all\", include or its own local \
                 skills): raise budget_chars, or use select = \"top\" and fewer includes"
            );
        }
    }
}

/// What the rule needs of one active skill the folder view shows.
struct Held {
    name: String,
    description: String,
    confidence: f64,
    tags: Vec<String>,
    /// A local skill's folder and its entry there; `None`: a received one.
    home: Option<(std::path::PathBuf, String)>,
}

/// Every active skill the folder view shows ([`Library::folder_view`]:
/// not withheld, retired or a tombstone; a pinned one as pinned), from the
/// store's records — no skill's body is read — with the node's confidence
/// after outcomes.
fn gather(library: &Library) -> Result<Vec<Held>, StoreError> {
    let store = library.store();
    let withheld = library.withheld_from_folder()?;
    let retired = store.retired_names()?;
    let pins = store.pins()?;
    let folders = library.sharing().folders();
    let mut held = Vec::new();
    for record in store.list_skills()? {
        let name = &record.name;
        if record.deprecated || withheld.contains(name) || retired.contains(name) {
            continue;
        }
        let home = match record.skill_kind() {
            SkillKind::Local => match library.folder_of(name) {
                Some(place) => Some((folders[place.index].path.clone(), place.entry)),
                None => continue,
            },
            _ => None,
        };
        let pinned = match pins.get(name) {
            Some(pin) => store.version_packet(name, &Pick::Number(pin.version))?,
            None => None,
        };
        let (description, tags) = match pinned {
            Some((_, packet)) => (packet.skill_description, packet.tags),
            None => (record.description, record.tags),
        };
        held.push(Held { confidence: record.confidence, name: record.name, description, tags, home });
    }
    Ok(held)
}

/// Most skills [`Agents::fill`] reads one by one; more are read a page at a
/// time with every other skill.
const READ_ONE_BY_ONE: usize = 1_000;

/// Hands `visit` the folder view's packet of each of `names`.
fn each_packet(
    library: &Library,
    names: &HashSet<&str>,
    mut visit: impl FnMut(&SkillPacket, SkillKind),
) -> Result<(), StoreError> {
    if names.len() > READ_ONE_BY_ONE {
        return library.each_folder_page(|page| {
            for (packet, kind) in
                page.iter().filter(|(p, _)| !p.deprecated && names.contains(p.skill_name.as_str()))
            {
                visit(packet, *kind);
            }
            Ok(())
        });
    }
    let mut current = Vec::with_capacity(names.len());
    for name in names {
        if let Some((record, packet, _)) = library.store().skill(name)? {
            current.push((packet, record.skill_kind()));
        }
    }
    for (packet, kind) in crate::versions::with_pins(library.store(), current)? {
        if !packet.deprecated {
            visit(&packet, kind);
        }
    }
    Ok(())
}
