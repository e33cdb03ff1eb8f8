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
//! `Fn(&SkillPacket, &MergeContext) -> Result<(), PolicyRefusal>` is a
//! policy too, with the default limits.
//!
//! A refusal is a [`PolicyRefusal`]; the merge writes it after the prefix
//! `rejected by policy: ` (`SPEC.md` › 7.8).

use thiserror::Error;

use crate::bundle::BundleLimits;
use crate::merge::MergeContext;
use crate::outcomes::EvidenceRule;
use crate::packet::ShownConfidence;
use crate::scan::{DEFAULT_THRESHOLD, Severity};
use crate::skill_doc::{self, DocError, KnownTools, StructureLimits};
use crate::wire::{SkillPacket, Timestamp};

/// Default accept threshold on the confidence *as received*.
pub const DEFAULT_MIN_CONFIDENCE: f64 = 0.6;
/// Tolerance of the confidence threshold for floating-point error.
pub const CONFIDENCE_EPSILON: f64 = 1e-9;
/// Default maximum number of packets considered in one update.
pub const DEFAULT_MAX_PACKETS: usize = 10_000;
/// How far in the future a `createdAt` may lie before it is refused: a
/// far-future time would win every "is it newer?" comparison forever.
pub const DEFAULT_MAX_CLOCK_SKEW_SECS: i64 = 24 * 60 * 60;

/// Why stage 4 refused a packet: the policy's reasons, and the two checks
/// the merge makes whatever the policy says. Each displays as the text after
/// `rejected by policy: ` (`SPEC.md` › 7.8.1, 7.8.3): one line.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PolicyRefusal {
    /// `originInstance` is on [`StandardPolicy::deny_origins`].
    #[error("origin {origin:?} is on the deny list")]
    OriginDenied {
        /// The packet's `originInstance`.
        origin: String,
    },
    /// [`StandardPolicy::allow_origins`] is set and lacks `originInstance`.
    #[error("origin {origin:?} is not on the allow list")]
    OriginNotAllowed {
        /// The packet's `originInstance`.
        origin: String,
    },
    /// The confidence as received is below [`StandardPolicy::min_confidence`].
    #[error(
        "confidence {} is below the accept threshold {}",
        ShownConfidence(*.confidence),
        ShownConfidence(*.threshold)
    )]
    BelowThreshold {
        /// The packet's confidence, as received.
        confidence: f64,
        /// The policy's threshold.
        threshold: f64,
    },
    /// The body could not be read for the known-tools check.
    #[error(transparent)]
    UnreadableBody(#[from] DocError),
    /// The body references tools outside [`StandardPolicy::known_tools`].
    #[error("references unknown tools: {}", .tools.join(", "))]
    UnknownTools {
        /// The unknown tool names, in the order the report gives them.
        tools: Vec<String>,
    },
    /// `createdAt` lies further ahead than [`AcceptPolicy::max_clock_skew_secs`].
    #[error("createdAt {created_at} lies {skew_secs} s in the future")]
    FutureCreatedAt {
        /// The packet's `createdAt`.
        created_at: Timestamp,
        /// How far ahead of the merge's `now`, in whole seconds.
        skew_secs: i64,
    },
    /// The frontmatter names another skill than `skillName`.
    #[error("frontmatter name {frontmatter_name:?} differs from skillName")]
    FrontmatterNameMismatch {
        /// The name in the frontmatter.
        frontmatter_name: String,
    },
    /// Peers' outcome evidence (`SPEC.md` §16.6) puts the skill's failure
    /// rate over [`EvidenceRule::max_failure_rate`].
    #[error(
        "peers report a failure rate of {} over {} uses weighed by trust ({observers} observers), above the \
         limit {}",
        ShownConfidence(*.failure_rate),
        ShownConfidence(*.uses),
        ShownConfidence(*.max)
    )]
    ReportedFailures {
        /// Weighed failures over weighed uses.
        failure_rate: f64,
        /// Weighed uses.
        uses: f64,
        /// Observers whose claims are counted.
        observers: usize,
        /// The policy's line.
        max: f64,
    },
    /// A reason of a policy other than [`StandardPolicy`], as it wrote it.
    #[error("{0}")]
    Custom(String),
}

/// Decides whether a packet that passed integrity, structure and safety
/// checks is accepted, and sets the limits of those checks.
pub trait AcceptPolicy: Sync {
    /// Stage 4: `Ok` accepts; `Err(reason)` refuses, the reason displayed on one line.
    fn accept(&self, packet: &SkillPacket, ctx: &MergeContext<'_>) -> Result<(), PolicyRefusal>;

    /// Packets beyond this index in one update are refused unread.
    fn max_packets(&self) -> usize {
        DEFAULT_MAX_PACKETS
    }

    /// Size and shape limits of stage 2.
    fn structure_limits(&self) -> StructureLimits {
        StructureLimits::default()
    }

    /// Limits on a bundle's files (stage 2, and the check of each file's
    /// bytes once held).
    fn bundle_limits(&self) -> BundleLimits {
        BundleLimits::default()
    }

    /// Findings at or above this severity refuse a packet in stage 3.
    fn scan_threshold(&self) -> Severity {
        DEFAULT_THRESHOLD
    }

    /// How far in the future a `createdAt` may lie (checked after [`accept`](Self::accept), whatever it says).
    fn max_clock_skew_secs(&self) -> i64 {
        DEFAULT_MAX_CLOCK_SKEW_SECS
    }

    /// Whether an unsigned packet is refused (`SPEC.md` §13.7): off,
    /// a packet without `originSignature` keeps a claimed origin.
    fn require_origin_signature(&self) -> bool {
        false
    }

    /// The rule on peers' outcome evidence (`SPEC.md` §16.6), applied by
    /// the receiving node, which holds the evidence; `None`: evidence
    /// never refuses.
    fn evidence_rule(&self) -> Option<EvidenceRule> {
        None
    }
}

impl<F> AcceptPolicy for F
where
    F: Fn(&SkillPacket, &MergeContext<'_>) -> Result<(), PolicyRefusal> + Sync,
{
    fn accept(&self, packet: &SkillPacket, ctx: &MergeContext<'_>) -> Result<(), PolicyRefusal> {
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
    /// See [`AcceptPolicy::bundle_limits`].
    pub bundle: BundleLimits,
    /// See [`AcceptPolicy::scan_threshold`].
    pub scan_threshold: Severity,
    /// See [`DEFAULT_MAX_CLOCK_SKEW_SECS`].
    pub max_clock_skew_secs: i64,
    /// When set, a skill that references a tool outside this list (a
    /// backticked tool name, or an `allowed-tools` entry) is refused. Off by
    /// default: inline code spans also name files and refs, so the list
    /// must fit the agents the node serves.
    pub known_tools: Option<KnownTools>,
    /// See [`AcceptPolicy::require_origin_signature`].
    pub require_origin_signature: bool,
    /// See [`AcceptPolicy::evidence_rule`].
    pub evidence: Option<EvidenceRule>,
}

impl Default for StandardPolicy {
    fn default() -> Self {
        StandardPolicy {
            min_confidence: DEFAULT_MIN_CONFIDENCE,
            allow_origins: None,
            deny_origins: Vec::new(),
            max_packets: DEFAULT_MAX_PACKETS,
            structure: StructureLimits::default(),
            bundle: BundleLimits::default(),
            scan_threshold: DEFAULT_THRESHOLD,
            max_clock_skew_secs: DEFAULT_MAX_CLOCK_SKEW_SECS,
            known_tools: None,
            require_origin_signature: false,
            evidence: None,
        }
    }
}

impl AcceptPolicy for StandardPolicy {
    fn accept(&self, packet: &SkillPacket, _ctx: &MergeContext<'_>) -> Result<(), PolicyRefusal> {
        let origin = &packet.origin_instance;
        if self.deny_origins.iter().any(|denied| denied == origin) {
            return Err(PolicyRefusal::OriginDenied { origin: origin.clone() });
        }
        if let Some(allowed) = &self.allow_origins
            && !allowed.iter().any(|a| a == origin)
        {
            return Err(PolicyRefusal::OriginNotAllowed { origin: origin.clone() });
        }
        // A product such as 0.9 × (2/3) lands a hair under 0.6 in floating
        // point; the threshold is meant in decimal, so allow for that.
        if packet.confidence + CONFIDENCE_EPSILON < self.min_confidence {
            return Err(PolicyRefusal::BelowThreshold {
                confidence: packet.confidence,
                threshold: self.min_confidence,
            });
        }
        if let Some(known) = &self.known_tools {
            // Stage 2 already parsed this body; a failure here cannot happen
            // for a packet that reached stage 4, but refuse rather than panic.
            let doc = skill_doc::parse(&packet.skill_body)?;
            let report = skill_doc::check_document_references(&doc, known);
            if !report.unknown.is_empty() {
                return Err(PolicyRefusal::UnknownTools { tools: report.unknown });
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

    fn bundle_limits(&self) -> BundleLimits {
        self.bundle.clone()
    }

    fn scan_threshold(&self) -> Severity {
        self.scan_threshold
    }

    fn max_clock_skew_secs(&self) -> i64 {
        self.max_clock_skew_secs
    }

    fn require_origin_signature(&self) -> bool {
        self.require_origin_signature
    }

    fn evidence_rule(&self) -> Option<EvidenceRule> {
        self.evidence
    }
}
