//! `ecp-protocol` — the Evolution Control Protocol as a library.
//!
//! ECP lets AI-agent instances share the skills they learned: Markdown
//! playbooks (`SKILL.md` with YAML frontmatter) travel between nodes as
//! [`SkillPacket`]s inside a [`KnowledgeUpdate`], and each node decides with
//! [`merge_knowledge`] what it installs, updates, keeps or refuses.
//!
//! # Design overview
//!
//! This crate does **no I/O**: no sockets, no files, no clock, no async
//! runtime. Callers hand it bytes, a view of their store, a policy and the
//! current time; it hands back values and decisions for the caller to apply.
//! That keeps every rule of the protocol testable in isolation and lets other
//! implementations read the protocol here (see `SPEC.md` beside this crate).
//!
//! ```text
//!   bytes ──decode──▶ KnowledgeUpdate ──merge_knowledge(store view, policy, now)──▶ MergeOutcome
//!                                          │ per packet, in order:                    ├─ MergeResult (wire)
//!                                          │ integrity → name+structure → safety      └─ Vec<PacketDecision>
//!                                          │ → accept policy → resolution                 (caller applies)
//! ```
//!
//! # Layout
//!
//! - [`wire`]: the JSON messages of ECP/1.0, Go-compatible (null arrays,
//!   zero time, unknown fields ignored), plus our additive fields.
//! - [`integrity`]: SHA-256 content hashes, packet ids, user hashes.
//! - [`packet`]: building and verifying [`SkillPacket`]s.
//! - [`identity`]: ECP/1.3 node keys, key ids and origin signatures.
//! - [`revocation`]: ECP/1.3 revocations: one version withdrawn by its
//!   origin's signature.
//! - [`archive`]: the signed canonical forms of offline archives.
//! - [`bundle`]: ECP/1.3 bundles: a skill folder's files listed on its
//!   packet, their path and size rules, digest and content checks.
//! - [`skill_doc`]: `SKILL.md` frontmatter, the name rule, structure and
//!   reference checks.
//! - [`legacy_auth`]: the ECP/1.1 `X-ECP-HMAC` header.
//! - [`signed_auth`]: ECP/1.2 signed requests and responses, without replay.
//! - [`node_auth`]: ECP/1.3 requests signed with the sender's node key,
//!   proving which node sent them.
//! - [`scan`]: the safety scanner and its rule families.
//! - [`policy`]: accept policies: what a node is willing to take, and the
//!   typed reasons it refuses with ([`PolicyRefusal`]).
//! - [`merge`]: MergeKnowledge, the pure merge function.
//! - [`outcomes`]: ECP/1.3 outcome evidence: the claims a packet may carry,
//!   their limits, the newest per observer, and their weight by trust.
//! - [`proposal`]: ECP/1.3 proposals — an edit of a received skill offered
//!   back to its origin, checked by every hop as a pushed packet is.
//! - [`error`]: the error types of this crate.
//!
//! Fast paths sit beside the reference they must agree with, each behind a
//! one-line contract and held to it by property tests: `wire::fast` (the
//! update decoder: `None` = decode with serde_json, `Some` = the identical
//! update), `skill_doc::yaml::fast` (plain `key: value` frontmatter, the same
//! contract against the YAML event reader), and the scanner's engine (its
//! prefilter and look-back, against a test-only scan that tries every rule
//! on every line). `par` runs the parallel maps on rayon.
#![deny(missing_docs)]

pub mod archive;
pub mod bundle;
pub mod error;
pub mod identity;
pub mod integrity;
pub mod legacy_auth;
pub mod merge;
pub mod node_auth;
pub mod outcomes;
pub mod packet;
mod par;
pub mod policy;
pub mod proposal;
pub mod revocation;
pub mod scan;
pub mod signed_auth;
pub mod skill_doc;
pub mod wire;

pub use error::{AuthError, DecodeError, IntegrityError, SignedAuthError, TimeError};
pub use merge::{
    Decision, MergeContext, MergeOutcome, PacketDecision, SkillKind, Stage, StoreView, StoredSkill,
    merge_knowledge,
};
pub use packet::{Origin, ShownConfidence};
pub use policy::{AcceptPolicy, PolicyRefusal, StandardPolicy};
pub use scan::{Finding, Scanner, Severity};
pub use wire::{
    KnowledgeUpdate, Manifest, MergeResult, OutcomeClaim, PeerStats, Provenance, SkillPacket, Timestamp,
};

/// The protocol version this crate speaks and writes into every packet.
pub const PROTOCOL_VERSION: &str = "1.0";
