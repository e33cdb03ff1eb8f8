//! Verified and unverified origins (`SPEC.md` §6.6): what a packet's
//! `originInstance` is worth, given who sent it, and how a laundered copy of
//! a held skill is recognised.
//!
//! The Go reference re-serves every skill it holds as its own
//! (`originInstance: "ok-agent"`, frontmatter stripped, `createdAt` = the
//! time of the request; `ECP.md` › Flaws, 3). Taken at its word, such a copy
//! would block the true origin forever (§7.9.2 rule 5). So a packet carries a
//! *verified* origin only when it comes from a current sender, does not claim
//! a Go default identity, and no node on its way marked it unverified.

use super::MergeContext;
use crate::integrity;
use crate::skill_doc;
use crate::wire::SkillPacket;

/// The `originInstance` a Go node serves every skill under unless its
/// operator named the instance: the claim of a Go node, whoever wrote the skill.
pub const GO_DEFAULT_INSTANCE: &str = "ok-agent";

/// How far a sender keeps the origins of what it serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SenderKind {
    /// A node of this protocol (ECP/1.2 and later): it serves each skill
    /// under the origin it received it from.
    #[default]
    Current,
    /// An ECP/1.1 sender (a Go node): configured `legacy = true`, or a push
    /// authenticated by `X-ECP-HMAC` alone. Its origins are claims of its
    /// own, not the author's (`SPEC.md` §6.6.1).
    Legacy,
}

/// Whether `packet`, received in `ctx`, carries a verified origin
/// (`SPEC.md` §6.6.2): signed by its origin, or from a current sender, not
/// under the Go default identity, and not marked unverified by a node it
/// passed through.
///
/// A packet with an `originSignature` is verified whoever sent it: the
/// merge refuses one whose signature does not hold before this is asked
/// (stage 1a, `SPEC.md` §13), so call it on packets the merge checked.
pub fn origin_verified(packet: &SkillPacket, ctx: &MergeContext<'_>) -> bool {
    packet.origin_signature.is_some()
        || ctx.sender_kind == SenderKind::Current
            && packet.origin_instance != GO_DEFAULT_INSTANCE
            && !packet.provenance.as_ref().is_some_and(|p| p.origin_unverified)
}

/// The *content key* of a SKILL.md (`SPEC.md` §6.6.4): the lowercase hex
/// SHA-256 of its Markdown without the frontmatter, surrounding whitespace
/// trimmed — what survives a Go node's re-serving (it strips the
/// frontmatter and trims the body), so a laundered copy of a skill has the
/// key of the original.
pub fn content_key(body: &str) -> String {
    let markdown = skill_doc::parse_name(body).map_or(body, |doc| doc.body);
    integrity::body_hash(markdown.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stripped_and_trimmed_body_has_the_key_of_the_original() {
        let original =
            "---\nname: fix-it\ndescription: How to fix it\nlicense: MIT\n---\n# fix-it\n\nRun it.\n";
        assert_eq!(content_key("# fix-it\n\nRun it."), content_key(original));
        let rebuilt = skill_doc::with_frontmatter("fix-it", "Other words", "# fix-it\n\nRun it.");
        assert_eq!(content_key(&rebuilt), content_key(original));
    }

    #[test]
    fn another_markdown_has_another_key() {
        assert_ne!(content_key("# fix-it\n\nRun it twice."), content_key("# fix-it\n\nRun it."));
        assert_ne!(
            content_key("# fix-it\n\nRun  it."),
            content_key("# fix-it\n\nRun it."),
            "inner spaces count"
        );
    }
}
