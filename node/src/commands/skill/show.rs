//! `ecp-node skill list | show | search`: what the store holds, read from
//! the library (no server needed), as tables or `--json`.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::import::FolderReport;
use ecp_node::library::Library;
use ecp_node::projection::SKILL_FILE;
use ecp_node::sharing::UNPROVEN_CODE;
use ecp_node::store::{SECRET_CODE, SkillRecord};
use serde_json::json;

use crate::commands::output::{Table, emit, emit_json, one_line, printable, time, yes_no};

pub(super) fn list(library: &Library, json: bool) -> anyhow::Result<ExitCode> {
    let skills = library.store().list_skills().context("cannot read the store")?;
    let pins = library.store().pins().context("cannot read the store")?;
    let mut folders = FolderReport::of(library).context("cannot read the store")?.into_json();
    if json {
        folders.insert("skills".into(), json!(skills));
        folders.insert("pins".into(), json!(pins));
        emit_json(&folders)?;
        return Ok(ExitCode::SUCCESS);
    }
    let array = |key: &str| folders.get(key).and_then(|v| v.as_array()).cloned().unwrap_or_default();
    let report = crate::commands::status::folder_report(&array("notShared"), &array("sharedWithWarnings"));
    if skills.is_empty() {
        emit(&format!("no skills yet; add one with `ecp-node skill add PATH`\n{report}"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&[
        "NAME",
        "KIND",
        "ORIGIN",
        "VERSION",
        "CONFIDENCE",
        "USES",
        "OK",
        "FAILED",
        "STREAK",
        "DEPRECATED",
        "SHARING",
        "UPDATED",
    ]);
    for s in &skills {
        table.row(vec![
            s.name.clone(),
            s.kind.to_owned(),
            s.origin.clone(),
            s.version.to_string(),
            format!("{:.2}", s.confidence),
            s.score.uses.to_string(),
            s.score.successes.to_string(),
            s.score.failures.to_string(),
            s.score.streak.to_string(),
            yes_no(s.deprecated).to_owned(),
            sharing_label(s).to_owned(),
            time(&s.updated_at),
        ]);
    }
    let mut pinned = String::new();
    for s in skills.iter().filter_map(|s| Some((s, pins.get(&s.name)?))) {
        let (record, pin) = s;
        let available = if record.version > pin.version {
            format!(
                "; version {} is available (`ecp-node skill unpin {}` takes it)",
                record.version, record.name
            )
        } else {
            String::new()
        };
        let _ = writeln!(pinned, "{} is pinned at version {}{available}", record.name, pin.version);
    }
    emit(&(table.render("") + &pinned + &report))?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn search(library: &Library, query: &str, limit: usize, json: bool) -> anyhow::Result<ExitCode> {
    let limit = limit.to_string();
    let answer =
        library.store().search_text(query, Some(&limit), None).context("cannot read the store")??;
    if json {
        emit_json(&answer)?;
        return Ok(ExitCode::SUCCESS);
    }
    if answer.results.is_empty() {
        emit(&format!("no skill matches {query:?}; `ecp-node skill list` shows every skill\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["NAME", "SCORE", "CONFIDENCE", "KIND", "ORIGIN", "DESCRIPTION"]);
    for hit in &answer.results {
        table.row(vec![
            one_line(&hit.name).into_owned(),
            format!("{:.2}", hit.score),
            format!("{:.2}", hit.confidence),
            hit.kind.to_owned(),
            one_line(&hit.origin).into_owned(),
            one_line(&hit.description).into_owned(),
        ]);
    }
    emit(&table.render(""))?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn show(library: &Library, name: &str, mesh: bool, json: bool) -> anyhow::Result<ExitCode> {
    let Some((record, packet, versions)) = library.store().skill(name).context("cannot read the store")?
    else {
        bail!("no skill named {name:?}; `ecp-node skill list` shows the names");
    };
    let removed = library.removed_grants(&packet, record.skill_kind());
    let across = library.store().mesh(name).context("cannot read the store")?;
    if json {
        emit_json(&json!({
            "skill": record, "packet": packet, "versions": versions, "removedPermissions": removed, "mesh": across
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    let mut field = |key: &str, value: &str| {
        let _ = writeln!(out, "{:<13}{}", format!("{key}:"), one_line(value));
    };
    field("name", &record.name);
    field("kind", record.kind);
    match (&record.origin_key, record.origin_verified) {
        (Some(key), _) => {
            field("origin", &format!("{} — origin verified (signed by key {key})", record.origin))
        }
        (None, _) if record.kind == "local" => field("origin", &format!("{} — this node", record.origin)),
        (None, true) => field("origin", &format!("{} — origin claimed (unsigned)", record.origin)),
        (None, false) => {
            field("origin", &format!("{} — origin unverified (received from a legacy peer)", record.origin))
        }
    }
    field("version", &record.version.to_string());
    field("confidence", &format!("{:.2}", record.confidence));
    let score = &record.score;
    if score.uses > 0 {
        field("prior", &format!("{:.2} (before the outcomes below)", record.prior_confidence));
    }
    field(
        "outcomes",
        &format!(
            "{} uses, {} successes, {} failures, streak {} (this version)",
            score.uses, score.successes, score.failures, score.streak
        ),
    );
    if let Some(last) = &score.last_used {
        field("last used", &time(last));
    }
    if let Some(retired) = &score.retired {
        field("retired", &format!("{} — {}", time(&retired.at), retired.reason));
    }
    field("deprecated", yes_no(record.deprecated));
    field("shareable", yes_no(record.shareable));
    field("sharing", sharing_label(&record));
    if let Some(reason) = &record.private_reason {
        field("private", reason);
    }
    field("description", &record.description);
    field("tags", &record.tags.join(", "));
    field("created", &time(&record.created_at));
    field("updated", &time(&record.updated_at));
    field("sequence", &record.seq.to_string());
    field("integrity", &record.integrity_hash);
    if let Some(p) = &packet.provenance {
        field(
            "provenance",
            &format!(
                "{} ({}; origin confidence {})",
                p.path.join(" -> "),
                crate::commands::output::counted(p.hops, "hop"),
                p.origin_confidence.map_or_else(|| "unknown".to_owned(), |c| format!("{c:.2}"))
            ),
        );
    }
    for note in &removed {
        field("permissions", note);
    }
    let mut table = Table::new(&["VERSION", "SEQ", "RECORDED", "SOURCE", "DEPRECATED", "INTEGRITY"]);
    for v in &versions {
        table.row(vec![
            v.version.to_string(),
            v.seq.to_string(),
            time(&v.recorded_at),
            v.source.clone(),
            yes_no(v.deprecated).to_owned(),
            v.integrity_hash.chars().take(16).collect(),
        ]);
    }
    let _ = write!(out, "\nversions:\n{}\n", table.render("  "));
    if mesh {
        out.push_str(&mesh_section(&across));
    }
    out.push_str(&printable(&packet.skill_body));
    if !packet.skill_body.ends_with('\n') {
        out.push('\n');
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// `skill show NAME --mesh`: the outcomes peers report, per observer, and
/// what they weigh together.
fn mesh_section(mesh: &ecp_node::store::Mesh) -> String {
    if mesh.claims.is_empty() {
        return "\nmesh: no peer has reported outcomes of this skill\n\n".to_owned();
    }
    let mut table = Table::new(&[
        "OBSERVER",
        "USES",
        "SUCCESSES",
        "FAILURES",
        "STREAK",
        "AT",
        "FROM",
        "TRUST",
        "RECEIVED",
    ]);
    for m in &mesh.claims {
        let c = &m.claim;
        table.row(vec![
            one_line(&c.observer).into_owned(),
            c.uses.to_string(),
            c.successes.to_string(),
            c.failures.to_string(),
            c.streak.to_string(),
            time(&c.at.to_string()),
            one_line(&m.sender).into_owned(),
            format!("{:.2}", m.trust),
            time(&m.received),
        ]);
    }
    let rate = mesh.failure_rate.map_or_else(|| "none".to_owned(), |r| format!("{:.0}%", r * 100.0));
    format!(
        "\nmesh: {} observers from {} senders; weighed by trust {:.1} uses, {:.1} failures, failure rate {rate}\n{}\n\n",
        mesh.observers,
        mesh.senders,
        mesh.weighed_uses,
        mesh.weighed_failures,
        table.render("  ")
    )
}

/// `skill show NAME --files`: the files of the skill's current version,
/// `SKILL.md` included (a plain skill lists only it).
pub(super) fn show_files(library: &Library, name: &str, json: bool) -> anyhow::Result<ExitCode> {
    let Some((_, packet, _)) = library.store().skill(name).context("cannot read the store")? else {
        bail!("no skill named {name:?}; `ecp-node skill list` shows the names");
    };
    let files = if packet.files.is_empty() {
        vec![ecp_protocol::wire::BundleFile {
            path: SKILL_FILE.to_owned(),
            size: packet.skill_body.len() as u64,
            mode: ecp_protocol::bundle::FileMode::Regular.as_str().to_owned(),
            sha256: ecp_protocol::integrity::sha256_hex(packet.skill_body.as_bytes()),
        }]
    } else {
        packet.files.clone()
    };
    if json {
        emit_json(&json!({ "skill": name, "bundleDigest": packet.bundle_digest, "files": files }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["PATH", "MODE", "SIZE", "SHA256"]);
    for f in &files {
        table.row(vec![
            printable(&f.path).into_owned(),
            f.mode.clone(),
            f.size.to_string(),
            f.sha256.clone(),
        ]);
    }
    emit(&table.render(""))?;
    Ok(ExitCode::SUCCESS)
}

/// How `skill list` and `skill show` say whether a skill leaves the node:
/// `RETIRED` (failing, out of the skills folder), `shared`, `private`,
/// `HELD: SECRET` (held back by the secret scan), `UNPROVEN` (`[sharing]
/// eligible = "proven"`, not yet), or
/// `not shared` (an external skill the policy does not serve again).
fn sharing_label(record: &SkillRecord) -> &'static str {
    if record.score.retired.is_some() {
        return "RETIRED";
    }
    match record.private.as_deref() {
        Some(SECRET_CODE) => "HELD: SECRET",
        Some(UNPROVEN_CODE) => "UNPROVEN",
        Some(_) => "private",
        None if record.shareable => "shared",
        None => "not shared",
    }
}
