//! The agent's edit of a received skill kept as a derived version
//! ([`derive`], called by the importer), and its retirement when the
//! origin's version that accepted it arrives ([`retire_superseded`]).

use std::path::Path;

use ecp_protocol::proposal::{DerivedFrom, ProposalState, proposal_id};
use ecp_protocol::{Provenance, SkillKind, SkillPacket};

use crate::import::{local_origin, local_packet};
use crate::library::Library;
use crate::projection::SKILL_FILE;
use crate::store::{Change, NewProposal, Role, Source};

/// What [`derive`] made of the agent's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Derived {
    /// The file is the held version (its stamp aside), or this very edit is
    /// held already.
    Unchanged,
    /// A new derived version, offered as the proposal with this id.
    Recorded(String),
}

/// Keeps `text`, the agent's file in folder `entry` of the received skill
/// `name`, as that skill's derived version, and records it as an outgoing
/// proposal for the outbox; blocking. The store's skill — what the node
/// serves — stays the origin's.
///
/// # Errors
///
/// A code and a reason, as the importer records a folder it passes over.
pub fn derive(library: &Library, name: &str, entry: &str, text: &str) -> Result<Derived, (String, String)> {
    let store = library.store();
    let stored = |e: crate::store::StoreError| ("store".to_owned(), format!("cannot store the edit: {e}"));
    let Some((_, original, _)) = store.skill(name).map_err(stored)? else {
        return Ok(Derived::Unchanged);
    };
    let text = unstamp(text);
    if text == original.skill_body {
        return Ok(Derived::Unchanged);
    }
    // Every import pass reads the edited file again: the edit held already
    // costs a read, not a signature and a write.
    let hash = ecp_protocol::integrity::body_hash(&text);
    let held_edit = store.derived(name).map_err(stored)?;
    if held_edit.is_some_and(|d| d.state == "active" && d.packet.integrity_hash == hash) {
        return Ok(Derived::Unchanged);
    }
    let instance = store.instance_id().to_owned();
    let origin = local_origin(&instance);
    let (mut packet, _) =
        local_packet(&text, Some(entry), &origin, library.structure_limits(), crate::store::now())
            .map_err(|e| (e.code().to_owned(), e.to_string()))?;
    let from = DerivedFrom {
        origin: original.origin_instance.clone(),
        name: name.to_owned(),
        integrity_hash: original.integrity_hash.clone(),
    };
    packet.provenance = Some(Provenance { derived_from: Some(from.clone()), ..Provenance::default() });
    packet.origin_signature = Some(store.node_key().sign(&packet, &instance));
    if !store.put_derived(&from, &packet).map_err(stored)? {
        return Ok(Derived::Unchanged);
    }
    let id = proposal_id(&from, &packet.integrity_hash);
    let new = NewProposal {
        id: &id,
        role: Role::Outgoing,
        derived_from: &from,
        packet: &packet,
        sender: "",
        state: ProposalState::Relayed,
    };
    store.record_proposal(&new, 0).map_err(stored)?;
    let reason = format!(
        "the agent's edit is kept as a derived version of {}'s version {}; offered as proposal {id}",
        from.origin,
        &from.integrity_hash[..12]
    );
    store.transaction(|tx| tx.audit(&Source::SkillsDir, name, "derived", &reason)).map_err(stored)?;
    tracing::info!(skill = %name, origin = %from.origin, proposal = %id, "received skill edited: kept as a derived version and proposed to its origin");
    library.proposals_waiting().notify_one();
    // The node's agents use the edit: the other agents' folders get it too (#24).
    library.agents().fill(library);
    Ok(Derived::Recorded(id))
}

/// `text` without the lines the projection's stamp adds to a received
/// skill's frontmatter ([`crate::stamp`]), and without a `metadata:` map
/// the stamp alone filled: the skill as its author wrote it, plus the
/// agent's edit.
pub fn unstamp(text: &str) -> String {
    let Some((lines, close)) = crate::stamp::frontmatter_lines(text) else { return text.to_owned() };
    let stamp_line = |line: &str| {
        let key = line.trim_start();
        line.starts_with([' ', '\t'])
            && crate::stamp::KEYS.iter().any(|k| key.strip_prefix(k).is_some_and(|r| r.starts_with(':')))
    };
    let mut kept: Vec<&str> = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if i > 0 && i < close && stamp_line(line) {
            continue;
        }
        kept.push(line);
    }
    // A `metadata:` left with no entries was the stamp's own.
    let close = close - (lines.len() - kept.len());
    let mut out = String::with_capacity(text.len());
    for (i, line) in kept.iter().enumerate() {
        let empty_map = i > 0
            && i < close
            && line.trim_end() == "metadata:"
            && kept.get(i + 1).is_none_or(|next| !next.starts_with([' ', '\t']) || i + 1 >= close);
        if !empty_map {
            out.push_str(line);
        }
    }
    out
}

/// Retires the derived versions that `changes` supersede: the origin's new
/// version crediting this node's edit (`provenance.proposedBy`), or the
/// edit's very content. The agent's edited file gives way, so the
/// projection writes the new version in its place. Failures are logged:
/// the edit stays in use until the next change.
pub fn retire_superseded(library: &Library, changes: &[Change]) {
    let received = || changes.iter().filter(|c| c.kind == SkillKind::External && !c.packet.deprecated);
    if received().next().is_none() {
        return;
    }
    let store = library.store();
    let active = match store.active_derived_names() {
        Ok(names) if !names.is_empty() => names,
        Ok(_) => return,
        Err(e) => {
            tracing::error!(error = %e, "cannot read the derived versions");
            return;
        }
    };
    for change in received().filter(|c| active.contains(&c.packet.skill_name)) {
        let name = &change.packet.skill_name;
        let Ok(Some(derived)) = store.derived(name) else { continue };
        if supersedes(&change.packet, &derived.packet, store.instance_id()) {
            give_way(
                library,
                name,
                "retired",
                &format!(
                    "the origin's version {} takes the derived version's place",
                    &change.packet.integrity_hash[..12]
                ),
            );
        }
    }
}

/// Whether the origin's `packet` supersedes this node's `derived` edit.
fn supersedes(packet: &SkillPacket, derived: &SkillPacket, instance: &str) -> bool {
    let credited = packet
        .provenance
        .as_ref()
        .and_then(|p| p.proposed_by.as_ref())
        .is_some_and(|by| by.instance == instance && by.integrity_hash == derived.integrity_hash);
    credited || packet.integrity_hash == derived.integrity_hash
}

/// Sets the derived version of `name` to `state` and removes the edited
/// file from every folder that holds it — the skills folder's and the
/// agents' (#24) — so that the node's write of the held version replaces it.
pub(super) fn give_way(library: &Library, name: &str, state: &str, why: &str) {
    let store = library.store();
    let edit = match store.derived(name) {
        Ok(derived) => derived.map(|d| d.packet.integrity_hash),
        Err(e) => {
            tracing::error!(error = %e, skill = %name, "cannot read the derived version");
            return;
        }
    };
    if let Err(e) = store.set_derived_state(name, state) {
        tracing::error!(error = %e, skill = %name, "cannot retire the derived version");
        return;
    }
    let folders = library.projection().folder_of(name).into_iter();
    let agents = library.agents().all().map(|agent| agent.path.join(name));
    for dir in folders.chain(agents) {
        remove_edit(&dir.join(SKILL_FILE), edit.as_deref());
    }
    if let Err(e) =
        store.transaction(|tx| tx.audit(&Source::SkillsDir, name, &format!("derived-{state}"), why))
    {
        tracing::error!(error = %e, skill = %name, "cannot audit the derived version's retirement");
    }
    tracing::info!(skill = %name, state, "{why}");
}

/// Removes `file` when it holds the edit whose body hash is `edit` (its
/// stamp aside): a file of that name with other content is someone's own.
fn remove_edit(file: &Path, edit: Option<&str>) {
    let Ok(text) = std::fs::read_to_string(file) else { return };
    if edit != Some(ecp_protocol::integrity::body_hash(&unstamp(&text)).as_str()) {
        return;
    }
    match std::fs::remove_file(file) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::warn!(error = %e, "cannot remove the edited skill file; the edit stays in the folder")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::unstamp;

    #[test]
    fn unstamp_drops_the_stamp_and_a_metadata_map_it_alone_filled() {
        let stamped = "---\nname: a\ndescription: d\nmetadata:\n  ecp-origin: \"x\"\n  ecp-origin-status: \"verified\"\n  \
                       ecp-confidence: 0.6\n  ecp-node: \"y\"\n---\nbody\n";
        assert_eq!(unstamp(stamped), "---\nname: a\ndescription: d\n---\nbody\n");
        let own = "---\nname: a\nmetadata:\n  author: me\n  ecp-origin: \"x\"\n---\nbody\n";
        assert_eq!(unstamp(own), "---\nname: a\nmetadata:\n  author: me\n---\nbody\n");
        assert_eq!(unstamp("no frontmatter\n"), "no frontmatter\n");
        let in_body = "---\nname: a\n---\n  ecp-origin: stays in the body\n";
        assert_eq!(unstamp(in_body), in_body);
    }
}
