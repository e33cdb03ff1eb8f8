//! The status page's HTML, made from a [`Snapshot`] with maud: every value
//! is escaped unless marked otherwise, and only the page's own constant
//! style sheet is. Skill names, descriptions, reasons, excerpts, peers'
//! errors and instance ids all come from other machines: none may become
//! markup. No script, no external asset: the page is one self-contained
//! document.

use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde::Serialize;

use super::snapshot::{Cut, SkillRow, Snapshot};
use crate::federation::PeerView;
use crate::store::{AuditEntry, HeldDeletion, InboxEntry, QuarantineEntry};

/// The page's own style (a constant: the one thing not escaped).
const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;padding:.25em .5em;\
border-bottom:1px solid #eee}th{background:#f4f4f4}code{font-size:.95em;word-break:break-all}\
.ok{color:#176d2c}.bad{color:#a40000}.muted{color:#777}form{display:inline}button{margin-right:.3em}\
ul.findings{margin:0;padding-left:1.1em}dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}\
dt{font-weight:600}dd{margin:0}";

/// The whole page.
pub(super) fn page(snapshot: &Snapshot, csrf: &str) -> Markup {
    let node = &snapshot.node;
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "ecp node " (node.instance) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { "ecp node " code { (node.instance) } }
                dl id="node" {
                    dt { "instance" } dd { code { (node.instance) } }
                    dt { "version" } dd { "ecp-node " (node.node_version) ", protocol " (node.protocol_version) }
                    dt { "listening on" } dd { code { (node.listen) } }
                    dt { "data folder" } dd { code { "…/" (node.data_folder) } }
                    dt { "sequence" } dd { (node.sequence) }
                    dt { "up" } dd { (uptime(node.uptime_seconds)) }
                    dt { "authentication" } dd { (if node.auth_required { "required from peers" } else { "open node" }) }
                }
                (peers(&snapshot.peers))
                (quarantine(&snapshot.quarantine, csrf))
                (inbox(&snapshot.inbox, csrf))
                (proposals(&snapshot.proposals))
                (deletions(&snapshot.deletions))
                (decisions(&snapshot.decisions))
                (skills(&snapshot.skills))
            }
        }
    }
}

fn peers(peers: &[PeerView]) -> Markup {
    html! {
        h2 id="peers" { "Peers (" (peers.len()) ")" }
        @if peers.is_empty() {
            p.muted { "No peers: add some to the peers file (--peers), or let mDNS find nodes on this network." }
        } @else {
            table {
                tr { th { "URL" } th { "instance" } th { "kind" } th { "health" } th { "last success" } th { "last error" } th { "last push" } }
                @for peer in peers {
                    @let s = &peer.state;
                    tr {
                        td { code.peer-url { (s.url) } }
                        td { code { (s.instance) } }
                        td { (label(&s.kind)) @if !peer.active { " (inactive)" } }
                        td { (health(peer)) }
                        td { (when_or_never(s.last_success.as_deref())) }
                        td.bad { (s.last_error) }
                        td {
                            (when_or_never(s.last_push.as_deref()))
                            @if !s.push_error.is_empty() { br; span.bad { (s.push_error) } }
                        }
                    }
                }
            }
        }
    }
}

fn health(peer: &PeerView) -> Markup {
    let s = &peer.state;
    html! {
        @if s.failures > 0 {
            span.bad { "failing (" (s.failures) " in a row)" }
        } @else if s.last_success.is_some() {
            span.ok { "ok" }
        } @else {
            span.muted { "not reached yet" }
        }
    }
}

/// A POST form of one button to `action`, carrying the CSRF token.
fn button(action: &str, text: &str, csrf: &str, force: bool) -> Markup {
    html! {
        form method="post" action=(action) {
            input type="hidden" name="csrf" value=(csrf);
            @if force { input type="hidden" name="force" value="true"; }
            button type="submit" { (text) }
        }
    }
}

fn quarantine(entries: &Cut<QuarantineEntry>, csrf: &str) -> Markup {
    html! {
        h2 id="quarantine" { "Quarantine (" (entries.total) " held)" }
        @if entries.items.is_empty() {
            p.muted { "Nothing held." }
        } @else {
            table {
                tr { th { "id" } th { "skill" } th { "from" } th { "stage" } th { "reason and findings" } th { "received" } th { "" } }
                @for entry in &entries.items {
                    tr.quarantined {
                        td { (entry.id) }
                        td { code.skill-name { (entry.skill_name) } }
                        td { code { (entry.peer) } }
                        td { (entry.stage) }
                        td {
                            span.reason { (entry.reason) }
                            @if !entry.findings.is_empty() {
                                ul.findings {
                                    @for f in &entry.findings {
                                        li { (label(&f.severity)) " " code { (f.rule_id) } " line " (f.line) ": " code.excerpt { (f.excerpt) } }
                                    }
                                }
                            }
                        }
                        td { (when(&entry.received_at)) @if entry.times_seen > 1 { " (" (entry.times_seen) "×)" } }
                        td {
                            @if entry.truncated.is_none() {
                                @let approve = format!("/ui/quarantine/{}/approve", entry.id);
                                (button(&approve, if entry.findings.is_empty() { "approve" } else { "approve anyway" }, csrf, !entry.findings.is_empty()))
                            }
                            (button(&format!("/ui/quarantine/{}/drop", entry.id), "drop", csrf, false))
                        }
                    }
                }
            }
            (more(entries.total, entries.items.len(), "ecp-node quarantine list"))
        }
    }
}

fn inbox(entries: &Cut<InboxEntry>, csrf: &str) -> Markup {
    html! {
        h2 id="inbox" { "Inbox (" (entries.total) " waiting)" }
        @if entries.items.is_empty() {
            p.muted { "Nothing waiting for review." }
        } @else {
            table {
                tr { th { "id" } th { "skill" } th { "from" } th { "origin" } th { "confidence" } th { "description" } th { "" } }
                @for entry in &entries.items {
                    tr {
                        td { (entry.id) }
                        td { code.skill-name { (entry.skill_name) } @if entry.update { " (update)" } }
                        td { code { (entry.peer) } }
                        td { code { (entry.origin) } }
                        td { (format!("{:.2}", entry.confidence)) }
                        td { (entry.description) }
                        td {
                            (button(&format!("/ui/inbox/{}/accept", entry.id), "accept", csrf, false))
                            (button(&format!("/ui/inbox/{}/reject", entry.id), "reject", csrf, false))
                        }
                    }
                }
            }
            (more(entries.total, entries.items.len(), "ecp-node inbox list"))
        }
    }
}

/// Proposals (#20): decided with `ecp-node proposals accept|reject ID`.
fn proposals(entries: &Cut<crate::store::ProposalRecord>) -> Markup {
    html! {
        h2 id="proposals" { "Proposals (" (entries.total) ")" }
        @if entries.items.is_empty() {
            p.muted { "No proposals: an edit of a received skill is proposed to its origin." }
        } @else {
            table {
                tr { th { "id" } th { "skill" } th { "role" } th { "state" } th { "origin" } th { "proposer" } th { "note" } }
                @for p in &entries.items {
                    tr {
                        td { code { (p.id) } }
                        td { code.skill-name { (p.name) } }
                        td { (format!("{:?}", p.role).to_lowercase()) }
                        td { (p.state.as_str()) }
                        td { code { (p.derived_from.origin) } }
                        td { code { (p.proposer) } }
                        td { (p.note) }
                    }
                }
            }
            p.muted { "Review with " code { "ecp-node proposals diff ID" } ", decide with " code { "ecp-node proposals accept|reject ID [--note TEXT]" } "." }
            (more(entries.total, entries.items.len(), "ecp-node proposals list"))
        }
    }
}

fn deletions(held: &[HeldDeletion]) -> Markup {
    html! {
        @if !held.is_empty() {
            h2 id="deletions" { "Held deletions (" (held.len()) ")" }
            table {
                tr { th { "id" } th { "from" } th { "skills" } th { "held" } }
                @for d in held {
                    tr {
                        td { (d.id) }
                        td { code { (d.source) } }
                        td { (d.names.len()) ": " (d.names.iter().take(10).cloned().collect::<Vec<_>>().join(", ")) @if d.names.len() > 10 { ", …" } }
                        td { (when(&d.held_at)) }
                    }
                }
            }
            p.muted { "Release or keep them with " code { "ecp-node deletions accept|reject ID" } "." }
        }
    }
}

fn decisions(entries: &[AuditEntry]) -> Markup {
    html! {
        h2 id="decisions" { "Recent decisions" }
        @if entries.is_empty() {
            p.muted { "None yet." }
        } @else {
            table {
                tr { th { "when" } th { "who" } th { "skill" } th { "decision" } th { "reason" } }
                @for e in entries {
                    tr {
                        td { (when(&e.at)) }
                        td { code { (e.peer) } }
                        td { code { (e.skill_name) } }
                        td { (e.decision) }
                        td { (e.reason) }
                    }
                }
            }
            p.muted { "The newest " (entries.len()) "; all of them: " code { "ecp-node audit" } " or " code { "GET /v1/audit" } "." }
        }
    }
}

fn skills(rows: &Cut<SkillRow>) -> Markup {
    html! {
        h2 id="skills" { "Skills (" (rows.total) ")" }
        @if rows.items.is_empty() {
            p.muted { "No skills yet." }
        } @else {
            table {
                tr { th { "name" } th { "kind" } th { "origin" } th { "confidence" } th { "provenance" } th { "outcomes" } th { "version" } th { "state" } }
                @for row in &rows.items {
                    @let r = &row.record;
                    tr {
                        td { code.skill-name { (r.name) } }
                        td { (r.kind) }
                        td { code { (r.origin) } }
                        td { (format!("{:.2}", r.confidence)) }
                        td {
                            @if row.path.is_empty() {
                                span.muted { (if r.kind == "local" { "made here" } else { "not recorded" }) }
                            } @else {
                                code { (row.path.join(" → ")) } " (" (row.hops) " hop" @if row.hops != 1 { "s" } ", from " code { (row.received_from) } ")"
                            }
                        }
                        td {
                            @if r.score.uses == 0 { span.muted { "none" } }
                            @else {
                                (r.score.uses) " uses: " (r.score.successes) " ok, " (r.score.failures) " failed, streak " (r.score.streak)
                            }
                        }
                        td { (version(&r.name, r.version, row.pinned)) }
                        td {
                            @if r.deprecated { "deleted" }
                            @else if r.score.retired.is_some() { "retired (failing; " code { "ecp-node skill restore" } ")" }
                            @else if let Some(why) = &r.private { "private (" (why) ")" }
                            @else if r.shareable { "shared" }
                            @else { "not shared" }
                        }
                    }
                }
            }
            (more(rows.total, rows.items.len(), "ecp-node skill list"))
        }
    }
}

/// A skill's version as its file shows it: a pinned skill's pinned
/// version, and a newer one stored as available (#25).
fn version(name: &str, current: i64, pinned: Option<i64>) -> Markup {
    html! {
        @match pinned {
            Some(pinned) if pinned < current => {
                (pinned) " (pinned; version " (current) " available: " code { "ecp-node skill unpin " (name) } ")"
            }
            Some(pinned) => { (pinned) " (pinned)" }
            None => { (current) }
        }
    }
}

/// "N more: COMMAND lists them all", when a list was cut.
fn more(total: usize, shown: usize, command: &str) -> Markup {
    html! {
        @if total > shown {
            p.muted { (total - shown) " more not shown; " code { (command) } " lists them all." }
        }
    }
}

/// A stored RFC 3339 time as people read it, to the second
/// (`2026-11-26 01:23:45 UTC`); the exact value stays in `datetime`.
fn when(at: &str) -> Markup {
    let short = match (at.get(..10), at.get(10..11), at.get(11..19)) {
        (Some(day), Some("T"), Some(clock)) if at.ends_with('Z') => format!("{day} {clock} UTC"),
        _ => at.to_owned(),
    };
    html! { time datetime=(at) { (short) } }
}

fn when_or_never(at: Option<&str>) -> Markup {
    at.map_or_else(|| html! { "never" }, when)
}

fn uptime(seconds: u64) -> String {
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if h > 0 { format!("{h} h {m} min") } else { format!("{m} min {s} s") }
}

/// The JSON name of a unit enum value (`configured`, `high`).
fn label(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::from("?"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_list_says_how_many_more_and_where_to_see_them() {
        assert_eq!(more(5, 5, "ecp-node skill list").into_string(), "", "nothing cut");
        let cut = more(6, 5, "ecp-node skill list").into_string();
        assert_eq!(
            cut,
            "<p class=\"muted\">1 more not shown; <code>ecp-node skill list</code> lists them all.</p>"
        );
    }

    #[test]
    fn times_read_to_the_second_and_keep_their_exact_value() {
        assert_eq!(
            when("2026-11-26T01:23:45.123456789Z").into_string(),
            "<time datetime=\"2026-11-26T01:23:45.123456789Z\">2026-11-26 01:23:45 UTC</time>"
        );
        assert_eq!(
            when("2026-11-26T01:23:45+01:00").into_string(),
            "<time datetime=\"2026-11-26T01:23:45+01:00\">2026-11-26T01:23:45+01:00</time>",
            "an offset other than Z is shown as stored"
        );
        assert_eq!(when("yesterday").into_string(), "<time datetime=\"yesterday\">yesterday</time>");
        assert_eq!(when_or_never(None).into_string(), "never");
    }

    #[test]
    fn a_pinned_skill_shows_its_pinned_version_and_a_newer_one_as_available() {
        assert_eq!(version("a", 3, None).into_string(), "3");
        assert_eq!(version("a", 3, Some(3)).into_string(), "3 (pinned)");
        assert_eq!(
            version("a", 3, Some(1)).into_string(),
            "1 (pinned; version 3 available: <code>ecp-node skill unpin a</code>)"
        );
    }

    #[test]
    fn uptime_reads_in_hours_or_minutes() {
        assert_eq!(uptime(59), "0 min 59 s");
        assert_eq!(uptime(3599), "59 min 59 s");
        assert_eq!(uptime(3600 + 120), "1 h 2 min");
    }
}
