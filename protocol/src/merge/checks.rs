//! Stages 1–4 of the merge: everything that can be decided about one packet
//! without looking at the store.

use std::hash::{BuildHasher, RandomState};

use super::refusal::{Prefix, Refusal};
use super::warning::{DESCRIPTION_GUIDELINE_CHARS, PacketWarning};
use super::{Decision, MergeContext, ScannedAhead};
use crate::bundle::{self, BundleError, BundleLimits};
use crate::integrity;
use crate::policy::{AcceptPolicy, PolicyRefusal};
use crate::scan::{Finding, Scanner, Severity};
use crate::skill_doc::{self, StructureLimits};
use crate::wire::SkillPacket;

/// Longest instance id (`originInstance`, provenance path entries), in bytes.
pub const MAX_INSTANCE_BYTES: usize = 128;
/// Most tags, and most patterns, on one packet.
pub const MAX_LIST_ITEMS: usize = 64;
/// Longest tag or pattern, in bytes.
pub const MAX_LIST_ITEM_BYTES: usize = 256;
/// Longest provenance path: a skill that has travelled further is refused
/// rather than carried on with an ever-growing path.
pub const MAX_PATH_HOPS: usize = 64;

/// A packet after stages 1–4.
#[derive(Debug)]
pub(super) struct Checked {
    pub(super) index: usize,
    /// As received.
    pub(super) packet: SkillPacket,
    /// `Rejected` when stages 1–4 refuse the packet. For an admitted packet
    /// it is provisional (`New`) until stage 5 decides.
    pub(super) decision: Decision,
    /// `Some` when stages 1–4 accept the packet.
    pub(super) admitted: Option<Admitted>,
    pub(super) findings: Vec<Finding>,
    pub(super) warnings: Vec<PacketWarning>,
    /// The hash of `skillName` under the merge's [`RandomState`], computed
    /// here in parallel so that stage 5 need not hash names one by one.
    pub(super) name_hash: u64,
}

/// What stage 5 needs of an admitted packet.
#[derive(Debug)]
pub(super) struct Admitted {
    /// The body to store instead of the received one, when that had no frontmatter.
    pub(super) rebuilt: Option<Rebuilt>,
}

/// A body rebuilt with frontmatter, and its `integrityHash`.
#[derive(Debug)]
pub(super) struct Rebuilt {
    pub(super) body: String,
    pub(super) hash: String,
}

impl Admitted {
    /// `integrityHash` of the body that will be stored. Borrowed: most packets
    /// keep their body, and a copy per packet would be allocated here and freed
    /// on the merging thread.
    pub(super) fn stored_hash<'a>(&'a self, packet: &'a SkillPacket) -> &'a str {
        self.rebuilt.as_ref().map_or(&packet.integrity_hash, |rebuilt| &rebuilt.hash)
    }
}

/// Runs stages 1–4 on every packet, in order; the results stay in one vector
/// per thread for stage 5.
///
/// `held[i]` says packet `i` claims the content of the version the node
/// holds from a peer (same `integrityHash`, bundle digest and state): once
/// stage 1 has proven its body is that content, stage 3 is not run again
/// (`SPEC.md` §7.7.9) — a mesh delivers each new skill to a node from
/// several neighbours, and the scan is most of what a copy costs.
pub(super) fn check_all(
    packets: Vec<SkillPacket>,
    held: &[bool],
    policy: &impl AcceptPolicy,
    ctx: &MergeContext<'_>,
    names: &RandomState,
    ahead: &ScannedAhead,
) -> Vec<Vec<Checked>> {
    let settings = Settings {
        structure: policy.structure_limits(),
        bundle: policy.bundle_limits(),
        threshold: policy.scan_threshold(),
        scanner: Scanner::standard(),
        ahead,
    };
    let max_packets = policy.max_packets();
    crate::par::map_taken(packets, |index, packet| {
        let name_hash = names.hash_one(&packet.skill_name);
        let mut notes = Notes::default();
        if index >= max_packets {
            let detail = format_args!(
                "the update carries more than {max_packets} packets; send the rest in another update"
            );
            let decision = Refusal::new(Prefix::Limit, detail).into();
            let Notes { findings, warnings } = notes;
            return Checked { index, packet, decision, admitted: None, findings, warnings, name_hash };
        }
        let mut packet = packet;
        let first = packet
            .verify()
            .map_err(|e| Refusal::new(Prefix::Integrity, e))
            .and_then(|()| check_signature(&packet, policy.require_origin_signature(), ctx.local_instance));
        let first = first.map(|signer| {
            // The signature names the origin: a relay that rewrote
            // `originInstance` (a Go node serves everything as its own) is undone.
            if let Some(signer) = signer {
                packet.origin_instance = signer;
            }
        });
        let scan = !held.get(index).copied().unwrap_or(false);
        let (decision, admitted) =
            match first.and_then(|()| check_one(&packet, policy, ctx, &settings, scan, &mut notes)) {
                Ok(admitted) => (Decision::New, Some(admitted)),
                Err(refusal) => (refusal.into(), None),
            };
        let Notes { findings, warnings } = notes;
        Checked { index, packet, decision, admitted, findings, warnings, name_hash }
    })
}

/// What the policy sets for stages 1–4, read once per merge.
struct Settings<'a> {
    structure: StructureLimits,
    bundle: BundleLimits,
    threshold: Severity,
    scanner: &'static Scanner,
    /// Bodies scanned before the merge, by their hash.
    ahead: &'a ScannedAhead,
}

/// What stages 1–4 report besides their decision.
#[derive(Default)]
struct Notes {
    findings: Vec<Finding>,
    warnings: Vec<PacketWarning>,
}

fn check_one(
    packet: &SkillPacket,
    policy: &impl AcceptPolicy,
    ctx: &MergeContext<'_>,
    settings: &Settings<'_>,
    scan: bool,
    notes: &mut Notes,
) -> Result<Admitted, Refusal> {
    let limits = &settings.structure;
    // Stage 2: name and structure.
    skill_doc::validate_name(&packet.skill_name).map_err(|e| Refusal::new(Prefix::Name, e))?;
    let warning = check_fields(packet, limits).map_err(|reason| Refusal::new(Prefix::Fields, reason))?;
    crate::outcomes::check_claims(&packet.outcomes, ctx.now, policy.max_clock_skew_secs())
        .map_err(|e| Refusal::new(Prefix::Fields, e))?;
    notes.warnings.extend(warning);
    let structure = |detail: &dyn std::fmt::Display| Refusal::new(Prefix::Structure, detail);
    if packet.skill_body.trim().is_empty() {
        return Err(structure(&"skillBody is empty; send the SKILL.md text"));
    }
    if packet.skill_body.len() > limits.max_bytes {
        return Err(structure(&format_args!(
            "skillBody is {} bytes, over the limit of {}",
            packet.skill_body.len(),
            limits.max_bytes
        )));
    }
    // Stages 2 and 4 read the frontmatter's name only.
    let received = skill_doc::parse_name(&packet.skill_body).map_err(|e| structure(&e))?;
    let rebuilt_body = match received.frontmatter {
        Some(_) => None,
        // The Go implementation serves bodies stripped of their frontmatter.
        None => Some(skill_doc::with_frontmatter(
            &packet.skill_name,
            &packet.skill_description,
            &packet.skill_body,
        )),
    };
    let body = rebuilt_body.as_deref().unwrap_or(&packet.skill_body);
    let doc = match &rebuilt_body {
        Some(text) => skill_doc::parse_name(text).map_err(|e| structure(&e))?,
        None => received,
    };
    skill_doc::check_structure(&doc, body.len(), limits).map_err(|e| structure(&e))?;
    // Stage 2, bundles: the listing alone; the files' bytes are checked
    // when they are held (`BundleManifest::verify_blob`).
    let refused_bundle = |e: BundleError| Refusal::new(Prefix::Bundle, e);
    let is_bundle = bundle::check_packet(packet, &settings.bundle).map_err(refused_bundle)?;
    if is_bundle && rebuilt_body.is_some() {
        return Err(refused_bundle(BundleError::SkillMdWithoutFrontmatter));
    }

    // Stage 3: safety; not again for the very content held (see `check_all`).
    if scan {
        // Stage 1 has proven the received body's hash: a report kept under
        // it is this very text's (`ahead.rs`). A rebuilt body is another text.
        let ahead = match rebuilt_body {
            None => settings.ahead.report(&packet.integrity_hash).cloned(),
            Some(_) => None,
        };
        // A panic in the scan refuses this packet alone (`scan::guard`).
        let report = ahead
            .unwrap_or_else(|| settings.scanner.try_scan(body))
            .map_err(|failed| Refusal::new(Prefix::Safety, failed))?;
        notes.findings = report.findings;
        if let Some(refusal) = safety_refusal(&notes.findings, settings.threshold) {
            return Err(refusal);
        }
    }

    // Stage 4: accept policy, loops, and the name the skill presents itself under.
    let refused = |reason: PolicyRefusal| Refusal::new(Prefix::Policy, reason);
    policy.accept(packet, ctx).map_err(refused)?;
    // Whatever the policy: a far-future createdAt would win every "is it newer?" forever.
    let skew = packet.created_at.unix_seconds().saturating_sub(ctx.now.unix_seconds());
    if skew > policy.max_clock_skew_secs() {
        return Err(refused(PolicyRefusal::FutureCreatedAt {
            created_at: packet.created_at,
            skew_secs: skew,
        }));
    }
    if passed_through(packet, ctx.local_instance) {
        return Err(Refusal::new(
            Prefix::Loop,
            "the skill originated at or already passed through this instance",
        ));
    }
    if let Some(mismatch) = skill_doc::frontmatter_mismatch(&doc, &packet.skill_name) {
        // An agent loads a skill by its frontmatter name: a mismatch would
        // let a packet shadow another skill under a harmless-looking name.
        let frontmatter_name = mismatch.frontmatter_name;
        return Err(refused(PolicyRefusal::FrontmatterNameMismatch { frontmatter_name }));
    }

    let rebuilt = rebuilt_body.map(|body| Rebuilt { hash: integrity::body_hash(&body), body });
    Ok(Admitted { rebuilt })
}

/// Stage 1a (`SPEC.md` §13.5): the packet's `originSignature`, when it
/// has one, must hold; then its origin is the instance the signature names,
/// returned when it differs from `originInstance`. An unsigned packet is
/// refused when `require` is set, or when it claims an instance that is a
/// key id (such an origin always signs) other than `local` (a packet
/// claiming this node is a loop, stage 4's to say). The key an origin is
/// known by is stage 5's: it needs the store.
fn check_signature(packet: &SkillPacket, require: bool, local: &str) -> Result<Option<String>, Refusal> {
    match crate::identity::verify(packet) {
        Err(e) => Err(Refusal::new(Prefix::Signature, e)),
        Ok(Some(signature)) if signature.instance != packet.origin_instance => {
            Ok(Some(signature.instance.clone()))
        }
        Ok(Some(_)) => Ok(None),
        Ok(None) if require => Err(Refusal::new(
            Prefix::Unsigned,
            "this node accepts signed packets only ([policy] require_origin_signature); ask the origin to \
             upgrade, or turn the setting off",
        )),
        Ok(None)
            if packet.origin_instance != local && crate::identity::is_key_id(&packet.origin_instance) =>
        {
            Err(Refusal::new(
                Prefix::Unsigned,
                format_args!(
                    "the origin {} is a key id, and such an origin signs every packet; an unsigned one claiming \
                 it is a downgrade",
                    packet.origin_instance
                ),
            ))
        }
        Ok(None) => Ok(None),
    }
}

/// The refusal for the findings at or above `threshold` (`SPEC.md`
/// §7.7.2): the most severe named (the last of equals), with its file
/// when it is in a bundle file other than `SKILL.md` (§12.5.5).
pub(super) fn safety_refusal(findings: &[Finding], threshold: Severity) -> Option<Refusal> {
    let blocking: Vec<&Finding> = findings.iter().filter(|f| f.severity >= threshold).collect();
    let &worst = blocking.iter().reduce(|a, b| if b.severity > a.severity { b } else { a })?;
    let more = match blocking.len() - 1 {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let file = worst.file.as_deref().map(|f| format!("{} ", crate::bundle::shown(f))).unwrap_or_default();
    let (id, severity, line) = (&worst.rule_id, severity_label(worst.severity), worst.line);
    Some(Refusal::new(Prefix::Safety, format_args!("{id} ({severity}, {file}line {line}){more}")))
}

/// Size and range checks on the packet's fields other than the body; a
/// description over the guideline is a warning.
fn check_fields(packet: &SkillPacket, limits: &StructureLimits) -> Result<Option<PacketWarning>, String> {
    if !(packet.confidence.is_finite() && (0.0..=1.0).contains(&packet.confidence)) {
        return Err(format!("confidence must be a number from 0 to 1, got {}", packet.confidence));
    }
    check_instance("originInstance", &packet.origin_instance)?;
    let warning = check_description(&packet.skill_description, limits.max_description_bytes)?;
    for (field, items) in [("tags", &packet.tags), ("patterns", &packet.patterns)] {
        if items.len() > MAX_LIST_ITEMS {
            return Err(format!("{field} has {} entries, over the limit of {MAX_LIST_ITEMS}", items.len()));
        }
        if items.iter().any(|item| item.len() > MAX_LIST_ITEM_BYTES) {
            return Err(format!("an entry of {field} is over {MAX_LIST_ITEM_BYTES} bytes"));
        }
    }
    if let Some(provenance) = &packet.provenance {
        if provenance.path.len() > MAX_PATH_HOPS {
            return Err(format!(
                "provenance path has {} hops, over the limit of {MAX_PATH_HOPS}",
                provenance.path.len()
            ));
        }
        for hop in &provenance.path {
            check_instance("provenance path entry", hop)?;
        }
    }
    Ok(warning)
}

/// Checks a description (`SPEC.md` §7.6.2.2): over `max_bytes` bytes is
/// refused, over [`DESCRIPTION_GUIDELINE_CHARS`] characters is a warning.
/// The merge and the importer both call it, so a folder imports exactly
/// when a peer would accept it.
///
/// # Errors
///
/// The reason, when the description is over `max_bytes`.
pub fn check_description(description: &str, max_bytes: usize) -> Result<Option<PacketWarning>, String> {
    if description.len() > max_bytes {
        return Err(format!(
            "skillDescription is {} bytes, over the limit of {max_bytes}; keep it to a paragraph",
            description.len()
        ));
    }
    // Counting characters only past the guideline in bytes: a description
    // of at most 1,024 bytes has at most 1,024 characters.
    if description.len() <= DESCRIPTION_GUIDELINE_CHARS {
        return Ok(None);
    }
    let chars = description.chars().count();
    Ok((chars > DESCRIPTION_GUIDELINE_CHARS).then_some(PacketWarning::LongDescription { chars }))
}

fn check_instance(field: &str, id: &str) -> Result<(), String> {
    check_instance_id(id).map_err(|problem| format!("{field} {problem}"))
}

/// Checks an instance id (`originInstance`, `peerInstance`, a provenance
/// hop): 1 to [`MAX_INSTANCE_BYTES`] bytes, no control, invisible or
/// bidirectional-control characters — an id is shown to operators, and one
/// that reorders or hides text could pass for another. The error completes
/// a sentence that starts with the field's name.
pub fn check_instance_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("is empty; name the instance".into());
    }
    if id.len() > MAX_INSTANCE_BYTES {
        return Err(format!("is over {MAX_INSTANCE_BYTES} bytes"));
    }
    if let Some(c) = id.chars().find(|&c| crate::scan::is_invisible(c)) {
        return Err(format!(
            "contains the control or invisible character U+{:04X}; instance ids are printable text",
            u32::from(c)
        ));
    }
    Ok(())
}

fn passed_through(packet: &SkillPacket, local_instance: &str) -> bool {
    packet.origin_instance == local_instance
        || packet.provenance.as_ref().is_some_and(|p| p.path.iter().any(|hop| hop == local_instance))
}

/// A severity as the wire (JSON) spells it.
fn severity_label(severity: Severity) -> &'static str {
    match severity {
        Severity::Info => "info",
        Severity::Low => "low",
        Severity::Medium => "medium",
        Severity::High => "high",
        Severity::Critical => "critical",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_severity_has_its_wire_label() {
        for severity in [Severity::Info, Severity::Low, Severity::Medium, Severity::High, Severity::Critical]
        {
            assert_eq!(serde_json::to_value(severity).unwrap(), severity_label(severity), "{severity:?}");
        }
    }
}
