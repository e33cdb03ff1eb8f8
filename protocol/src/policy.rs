//! Accept policies (`ECP.md` › Merge and accept policy): what a node is
//! willing to take from others.
//!
//! > The policy is a function the caller passes in: "only from trusted
//! > peers", "confidence >= 0.7" are the examples the design gives.
//!
//! A policy decides stage 4 of the merge ([`AcceptPolicy::accept`]) and sets
//! the knobs of stages 2 and 3 (size limits, scan threshold). Stages 1
//! (integrity), 2 (name, structure) and 3 (safety) always run: a policy
//! tunes them (a node operator may raise the size limit or the scan
//! threshold), it cannot skip them. Any
//! `Fn(&SkillPacket, &MergeContext) -> Result<(), String>` is a policy too,
//! with the default limits.

use crate::merge::MergeContext;
use crate::scan::{DEFAULT_THRESHOLD, Severity};
use crate::skill_doc::{self, KnownTools, StructureLimits};
use crate::wire::SkillPacket;

/// Default accept threshold on the confidence *as received*.
pub const DEFAULT_MIN_CONFIDENCE: f64 = 0.6;
/// Tolerance of the confidence threshold for floating-point error.
pub const CONFIDENCE_EPSILON: f64 = 1e-9;
/// Default maximum number of packets considered in one update.
pub const DEFAULT_MAX_PACKETS: usize = 10_000;
/// How far in the future a `createdAt` may lie before it is refused: a
/// far-future time would win every "is it newer?" comparison forever.
pub const DEFAULT_MAX_CLOCK_SKEW_SECS: i64 = 24 * 60 * 60;

/// Decides whether a packet that passed integrity, structure and safety
/// checks is accepted, and sets the limits of those checks.
pub trait AcceptPolicy: Sync {
    /// Stage 4: `Ok` accepts; `Err(reason)` refuses with a one-line reason.
    fn accept(&self, packet: &SkillPacket, ctx: &MergeContext<'_>) -> Result<(), String>;

    /// Packets beyond this index in one update are refused unread.
    fn max_packets(&self) -> usize {
        DEFAULT_MAX_PACKETS
    }

    /// Size and shape limits of stage 2.
    fn structure_limits(&self) -> StructureLimits {
        StructureLimits::default()
    }

    /// Findings at or above this severity refuse a packet in stage 3.
    fn scan_threshold(&self) -> Severity {
        DEFAULT_THRESHOLD
    }

    /// How far in the future a `createdAt` may lie (checked after [`accept`](Self::accept), whatever it says).
    fn max_clock_skew_secs(&self) -> i64 {
        DEFAULT_MAX_CLOCK_SKEW_SECS
    }
}

impl<F> AcceptPolicy for F
where
    F: Fn(&SkillPacket, &MergeContext<'_>) -> Result<(), String> + Sync,
{
    fn accept(&self, packet: &SkillPacket, ctx: &MergeContext<'_>) -> Result<(), String> {
        self(packet, ctx)
    }
}

/// The default policy, with every knob a node exposes in its configuration.
#[derive(Debug, Clone)]
pub struct StandardPolicy {
    /// Refuse packets whose confidence, as received, is below this.
    pub min_confidence: f64,
    /// When set, only these origins are accepted.
    pub allow_origins: Option<Vec<String>>,
    /// These origins are always refused.
    pub deny_origins: Vec<String>,
    /// See [`AcceptPolicy::max_packets`].
    pub max_packets: usize,
    /// See [`AcceptPolicy::structure_limits`].
    pub structure: StructureLimits,
    /// See [`AcceptPolicy::scan_threshold`].
    pub scan_threshold: Severity,
    /// See [`DEFAULT_MAX_CLOCK_SKEW_SECS`].
    pub max_clock_skew_secs: i64,
    /// When set, a skill that references a tool outside this list (a
    /// backticked tool name, or an `allowed-tools` entry) is refused. Off by
    /// default: inline code spans also name files and refs, so the list
    /// must fit the agents the node serves.
    pub known_tools: Option<KnownTools>,
}

impl Default for StandardPolicy {
    fn default() -> Self {
        StandardPolicy {
            min_confidence: DEFAULT_MIN_CONFIDENCE,
            allow_origins: None,
            deny_origins: Vec::new(),
            max_packets: DEFAULT_MAX_PACKETS,
            structure: StructureLimits::default(),
            scan_threshold: DEFAULT_THRESHOLD,
            max_clock_skew_secs: DEFAULT_MAX_CLOCK_SKEW_SECS,
            known_tools: None,
        }
    }
}

impl AcceptPolicy for StandardPolicy {
    fn accept(&self, packet: &SkillPacket, _ctx: &MergeContext<'_>) -> Result<(), String> {
        let origin = &packet.origin_instance;
        if self.deny_origins.iter().any(|denied| denied == origin) {
            return Err(format!("origin {origin:?} is on the deny list"));
        }
        if let Some(allowed) = &self.allow_origins
            && !allowed.iter().any(|a| a == origin)
        {
            return Err(format!("origin {origin:?} is not on the allow list"));
        }
        // A product such as 0.9 × (2/3) lands a hair under 0.6 in floating
        // point; the threshold is meant in decimal, so allow for that.
        if packet.confidence + CONFIDENCE_EPSILON < self.min_confidence {
            return Err(format!(
                "confidence {} is below the accept threshold {}",
                packet.confidence, self.min_confidence
            ));
        }
        if let Some(known) = &self.known_tools {
            // Stage 2 already parsed this body; a failure here cannot happen
            // for a packet that reached stage 4, but refuse rather than panic.
            let doc = skill_doc::parse(&packet.skill_body).map_err(|e| e.to_string())?;
            let report = skill_doc::check_document_references(&doc, known);
            if !report.unknown.is_empty() {
                return Err(format!("references unknown tools: {}", report.unknown.join(", ")));
            }
        }
        Ok(())
    }

    fn max_packets(&self) -> usize {
        self.max_packets
    }

    fn structure_limits(&self) -> StructureLimits {
        self.structure.clone()
    }

    fn scan_threshold(&self) -> Severity {
        self.scan_threshold
    }

    fn max_clock_skew_secs(&self) -> i64 {
        self.max_clock_skew_secs
    }
}
