//! `ecp-node skill add | list | show | search | rm | private | share | outcome | restore | scan`
//! (`history`, `pin`, `unpin` and `rollback` are [`super::versions`]).
//!
//! Writes (`add`, `rm`) go to the server running on the data folder when
//! there is one (its `/v1/` API: its next answer shows the change), else
//! through [`ecp_node::operator`] to the store. `add` of a folder takes
//! each skill folder whole, as a bundle: to a server, the files it lacks
//! are uploaded before the skill lists them. `scan` reads files only: it
//! needs no data folder.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::config::{Config, Flags};
use ecp_node::import::{self, Companion, FolderReport, SkillFileError};
use ecp_node::library::Library;
use ecp_node::operator::{self, AddError, Added};
use ecp_node::outcomes::{self, OutcomeError, ReportBody};
use ecp_node::projection::SKILL_FILE;
use ecp_node::sharing::{Decision, UNPROVEN_CODE};
use ecp_node::store::{SECRET_CODE, SkillRecord, StoreError};
use ecp_protocol::bundle::FileMode;
use ecp_protocol::scan::{DEFAULT_THRESHOLD, Finding, Scanner};
use ecp_protocol::wire::BundleFile;
use serde::Serialize;
use serde_json::json;

use super::Target;
use super::output::{Table, emit, emit_json, label, one_line, printable, tell, time, yes_no};
use crate::cli::{GlobalArgs, SkillCommand};

/// Largest file `skill scan` reads: scanning is useful beyond the 100 KB a
/// node accepts, but not for files that cannot be skills at all.
const SCAN_MAX_BYTES: usize = 16 * 1024 * 1024;

pub(crate) fn run(global: &GlobalArgs, command: SkillCommand) -> anyhow::Result<ExitCode> {
    if let SkillCommand::Scan { path, json } = command {
        return scan(&path, json.json);
    }
    let config = super::resolve(global, Flags::default())?;
    match command {
        SkillCommand::Add { path } => add(&config, &path, global.init),
        SkillCommand::List(flag) => list(&super::open_library(&config, global.init)?, flag.json),
        SkillCommand::Show { name, files: true, json, .. } => {
            show_files(&super::open_library(&config, global.init)?, &name, json.json)
        }
        SkillCommand::Show { name, json, mesh, .. } => {
            show(&super::open_library(&config, global.init)?, &name, mesh, json.json)
        }
        SkillCommand::Search { query, limit, json } => {
            search(&super::open_library(&config, global.init)?, &query, limit, json.json)
        }
        SkillCommand::Rm { name } => rm(&super::write_target(&config, global.init)?, &name),
        SkillCommand::Private { name } => private(&super::write_target(&config, global.init)?, &name),
        SkillCommand::Share { name, allow_secrets } => {
            share(&super::write_target(&config, global.init)?, &name, allow_secrets)
        }
        SkillCommand::Outcome { name, outcome, note, id, json } => {
            let body = ReportBody { outcome, note, at: Some(chrono::Utc::now().to_rfc3339()), id };
            report_outcome(&config, &super::write_target(&config, global.init)?, &name, body, json.json)
        }
        SkillCommand::Fork { name, new_name } => {
            super::proposals::fork(&super::write_target(&config, global.init)?, &name, &new_name)
        }
        SkillCommand::Restore { name } => {
            restore(&config, &super::write_target(&config, global.init)?, &name)
        }
        SkillCommand::History { name, json } => {
            super::versions::history(&super::open_library(&config, global.init)?, &name, json.json)
        }
        SkillCommand::Pin { name, to } => {
            super::versions::act(&super::write_target(&config, global.init)?, &name, "pin", to.as_deref())
        }
        SkillCommand::Unpin { name } => {
            super::versions::act(&super::write_target(&config, global.init)?, &name, "unpin", None)
        }
        SkillCommand::Rollback { name, to } => super::versions::act(
            &super::write_target(&config, global.init)?,
            &name,
            "rollback",
            to.as_deref(),
        ),
        SkillCommand::Revoke { name, version, reason } => {
            super::versions::revoke(&super::write_target(&config, global.init)?, &name, &version, &reason)
        }
        SkillCommand::Scan { .. } => unreachable!("handled above"),
    }
}

// ---- add ----

fn add(config: &Config, path: &Path, init: bool) -> anyhow::Result<ExitCode> {
    let skills = skills_to_add(path)?;
    let target = super::write_target(config, init)?;
    let mut out = String::new();
    let mut refused = 0;
    for skill in &skills {
        match add_one(&target, config, skill)? {
            Ok(Added::Added { name, version, warning }) => {
                let warning = warning.map(|w| format!("; warning: {w}")).unwrap_or_default();
                let _ = writeln!(out, "added      {name} (version {version}){warning}");
            }
            Ok(Added::Unchanged { name }) => {
                let _ = writeln!(out, "unchanged  {name}");
            }
            Err(reason) => {
                refused += 1;
                let _ = writeln!(out, "refused    {}: {}", skill.file.display(), one_line(&reason));
            }
        }
    }
    emit(&out)?;
    if refused > 0 {
        tell(format_args!(
            "ecp-node: {refused} of {} skills refused; fix them and run `ecp-node skill add` again",
            skills.len()
        ));
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// One skill `skill add` was given.
struct ToAdd {
    /// Its SKILL.md.
    file: PathBuf,
    /// The folder name its frontmatter must equal (none for a file or a
    /// skill folder given directly).
    folder: Option<String>,
    /// Whether the other files of the SKILL.md's folder go with it, as a
    /// bundle: yes for a folder, no for a SKILL.md given directly.
    whole: bool,
}

/// The skills named by `path`: a SKILL.md, a skill folder, or a folder of
/// `<name>/SKILL.md` folders.
fn skills_to_add(path: &Path) -> anyhow::Result<Vec<ToAdd>> {
    let meta = std::fs::metadata(path).with_context(|| {
        format!("cannot read {}; pass a SKILL.md file or a folder of <name>/SKILL.md folders", path.display())
    })?;
    if meta.is_file() {
        return Ok(vec![ToAdd { file: path.to_owned(), folder: None, whole: false }]);
    }
    let own = path.join(SKILL_FILE);
    if own.is_file() {
        return Ok(vec![ToAdd { file: own, folder: None, whole: true }]);
    }
    let mut found = Vec::new();
    let entries = std::fs::read_dir(path).with_context(|| format!("cannot list {}", path.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", path.display()))?;
        let file = entry.path().join(SKILL_FILE);
        if file.is_file() {
            let folder = Some(entry.file_name().to_string_lossy().into_owned());
            found.push(ToAdd { file, folder, whole: true });
        }
    }
    if found.is_empty() {
        bail!(
            "{} holds no <name>/SKILL.md; pass a SKILL.md file or a folder of skill folders",
            path.display()
        );
    }
    found.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(found)
}

/// Adds one skill, to the running server (its folder's files uploaded
/// first) or the store. The outer error is a failure of the store or the
/// server (stop); the inner one a refusal of this skill (go on with the next).
fn add_one(target: &Target, config: &Config, skill: &ToAdd) -> anyhow::Result<Result<Added, String>> {
    let folder = skill.folder.as_deref();
    let text = match import::read_skill_file(&skill.file, config.policy.structure.max_bytes) {
        Ok(text) => text,
        Err(SkillFileError::Read(e)) => return Ok(Err(format!("cannot read it: {e}"))),
        Err(e) => return Ok(Err(e.to_string())),
    };
    let companions = match skill.file.parent().filter(|_| skill.whole) {
        Some(dir) => match import::read_companions(dir, text.len() as u64, &config.policy.bundle) {
            Ok(companions) => companions,
            Err(e) => return Ok(Err(e.to_string())),
        },
        None => Vec::new(),
    };
    let added = match target {
        Target::Server(server) => {
            let files: Vec<(String, &Companion)> =
                companions.iter().map(|c| (ecp_protocol::integrity::sha256_hex(&c.bytes), c)).collect();
            let blobs: Vec<(&str, &[u8])> =
                files.iter().map(|(sha, c)| (sha.as_str(), c.bytes.as_slice())).collect();
            let listing: Vec<BundleFile> = files
                .iter()
                .map(|(sha256, c)| BundleFile {
                    path: c.path.clone(),
                    size: c.bytes.len() as u64,
                    mode: FileMode::for_file(&c.path, &c.bytes, c.executable).as_str().to_owned(),
                    sha256: sha256.clone(),
                })
                .collect();
            match server.upload(&blobs)? {
                Ok(()) => server.add_skill(&text, folder, &listing)?,
                Err(refusal) => Err(refusal),
            }
        }
        Target::Store(library) => {
            return match operator::add_skill(library, config, &text, folder, &companions) {
                Ok(added) => Ok(Ok(added)),
                Err(AddError::Refused(why)) => Ok(Err(why)),
                Err(e) => Err(e).context("cannot store the skill"),
            };
        }
    };
    match added {
        Ok(added) => Ok(Ok(added)),
        // A file over the server's limit refuses this skill, not the others.
        Err(refusal) if matches!(refusal.code.as_str(), "skill_refused" | "blob_too_large") => {
            Ok(Err(refusal.message))
        }
        Err(refusal) => Err(refusal.into()),
    }
}

// ---- list, show, rm ----

fn list(library: &Library, json: bool) -> anyhow::Result<ExitCode> {
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
    let report = super::status::folder_report(&array("notShared"), &array("sharedWithWarnings"));
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

fn search(library: &Library, query: &str, limit: usize, json: bool) -> anyhow::Result<ExitCode> {
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

fn show(library: &Library, name: &str, mesh: bool, json: bool) -> anyhow::Result<ExitCode> {
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
                super::output::counted(p.hops, "hop"),
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
fn show_files(library: &Library, name: &str, json: bool) -> anyhow::Result<ExitCode> {
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

/// Prints where a local skill now stands after `skill private|share`.
fn report_decision(name: &str, decision: &Decision) -> anyhow::Result<()> {
    match &decision.private {
        None => emit(&format!("{name} is shared: peers get it on their next pull or push\n")),
        Some(private) => emit(&format!("{name} stays on this node: {}\n", one_line(&private.reason))),
    }
}

fn private(target: &Target, name: &str) -> anyhow::Result<ExitCode> {
    let decision = match target {
        Target::Server(server) => server.make_private(name)?.map_err(|r| refused_decision(name, r))?,
        Target::Store(library) => library.make_private(name).map_err(|e| decision_error(name, e))?,
    };
    report_decision(name, &decision)?;
    Ok(ExitCode::SUCCESS)
}

/// `skill share`: exit 0 when the skill is now shared, 1 when something
/// else still keeps it home (the reason says what to do).
fn share(target: &Target, name: &str, allow_secrets: bool) -> anyhow::Result<ExitCode> {
    let decision = match target {
        Target::Server(server) => {
            server.share(name, allow_secrets)?.map_err(|r| refused_decision(name, r))?
        }
        Target::Store(library) => library.share(name, allow_secrets).map_err(|e| decision_error(name, e))?,
    };
    for finding in &decision.secrets {
        tell(format_args!(
            "ecp-node: {name}/{SKILL_FILE}:{}: secret ({})",
            finding.line,
            one_line(&finding.rule)
        ));
    }
    report_decision(name, &decision)?;
    Ok(if decision.private.is_none() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn decision_error(name: &str, e: StoreError) -> anyhow::Error {
    match e {
        StoreError::NoSuchSkill(_) => anyhow::anyhow!(no_active_skill(name)),
        e => anyhow::Error::new(e).context("cannot change the skill's sharing"),
    }
}

/// [`decision_error`], for the running server's refusal.
fn refused_decision(name: &str, refusal: super::Refusal) -> anyhow::Error {
    match refusal.code.as_str() {
        "no_such_skill" => anyhow::anyhow!(no_active_skill(name)),
        _ => refusal.into(),
    }
}

fn no_active_skill(name: &str) -> String {
    format!("no active skill named {name:?}; `ecp-node skill list` shows the names")
}

fn rm(target: &Target, name: &str) -> anyhow::Result<ExitCode> {
    let no_such = || format!("no skill named {name:?}; `ecp-node skill list` shows the names");
    let removed = match target {
        Target::Server(server) => match server.remove_skill(name)? {
            Ok(removed) => removed,
            Err(refusal) if refusal.code == "no_such_skill" => bail!(no_such()),
            Err(refusal) => return Err(refusal.into()),
        },
        Target::Store(library) => match operator::remove_skill(library, name) {
            Ok(removed) => removed,
            Err(StoreError::NoSuchSkill(_)) => bail!(no_such()),
            Err(e) => return Err(e).context("cannot remove the skill"),
        },
    };
    let line = if !removed.removed {
        format!("{name} was already removed\n")
    } else if removed.local {
        format!(
            "removed {name}: version {} is a tombstone, and peers that pull it drop the skill\n",
            removed.version
        )
    } else {
        format!("removed {name} from this node (an external skill is withdrawn only here)\n")
    };
    emit(&line)?;
    Ok(ExitCode::SUCCESS)
}

// ---- outcome, restore ----

fn report_outcome(
    config: &Config,
    target: &Target,
    name: &str,
    body: ReportBody,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let reported = match target {
        Target::Server(server) => match server.report_outcome(name, &body)? {
            Ok(reported) => reported,
            Err(refusal) if refusal.code == "no_such_skill" => bail!(no_active_skill(name)),
            Err(refusal) if refusal.status < 500 => bail!("{}", refusal.message),
            Err(refusal) => return Err(refusal.into()),
        },
        Target::Store(library) => match outcomes::report(library, config.outcomes, name, body) {
            Ok(reported) => reported,
            Err(OutcomeError::Store(StoreError::NoSuchSkill(_))) => bail!(no_active_skill(name)),
            Err(OutcomeError::Store(e)) => return Err(e).context("cannot record the outcome"),
            Err(e) => bail!("{e}"),
        },
    };
    if json {
        emit_json(&reported)?;
        return Ok(ExitCode::SUCCESS);
    }
    let s = &reported.score;
    let mut line = format!(
        "{name}: {} uses, {} successes, {} failures, streak {}; confidence {:.2}{}\n",
        s.uses,
        s.successes,
        s.failures,
        s.streak,
        reported.confidence,
        if reported.duplicate { " (this report was counted before)" } else { "" }
    );
    if reported.retired {
        let reason = s.retired.as_ref().map_or("", |r| r.reason.as_str());
        line.push_str(&format!("{name} is retired: {}\n", one_line(reason)));
    }
    emit(&line)?;
    Ok(ExitCode::SUCCESS)
}

fn restore(config: &Config, target: &Target, name: &str) -> anyhow::Result<ExitCode> {
    let restored = match target {
        Target::Server(server) => match server.restore(name)? {
            Ok(restored) => restored,
            Err(refusal) if refusal.code == "no_such_skill" => bail!(no_active_skill(name)),
            Err(refusal) => return Err(refusal.into()),
        },
        Target::Store(library) => match outcomes::restore(library, config.reshare_external, name) {
            Ok(restored) => restored,
            Err(StoreError::NoSuchSkill(_)) => bail!(no_active_skill(name)),
            Err(e) => return Err(e).context("cannot restore the skill"),
        },
    };
    let line = if restored.restored {
        format!("restored {name}: back in the skills folder, shared as before\n")
    } else {
        format!("{name} is not retired; nothing to restore\n")
    };
    emit(&line)?;
    Ok(ExitCode::SUCCESS)
}

// ---- scan ----

/// One scanned file in `skill scan --json`.
#[derive(Serialize)]
struct ScannedFile {
    path: String,
    findings: Vec<Finding>,
    blocked: bool,
    /// A local skill with this content would be held back from sharing.
    secrets: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

fn scan(path: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let meta = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}; pass a SKILL.md file or a folder", path.display()))?;
    let files = if meta.is_dir() {
        let mut files = Vec::new();
        collect_skill_files(path, &mut files)?;
        if files.is_empty() {
            bail!("no SKILL.md under {}", path.display());
        }
        files.sort();
        files
    } else {
        vec![path.to_owned()]
    };
    let scanner = Scanner::standard();
    let scanned: Vec<ScannedFile> = files
        .iter()
        .map(|file| {
            let shown = file.display().to_string();
            match import::read_skill_file(file, SCAN_MAX_BYTES) {
                Ok(text) => {
                    let report = scanner.scan(&text);
                    let blocked = report.is_blocked(DEFAULT_THRESHOLD);
                    let secrets = report.has_secrets();
                    ScannedFile { path: shown, findings: report.findings, blocked, secrets, error: None }
                }
                Err(e) => ScannedFile {
                    path: shown,
                    findings: Vec::new(),
                    blocked: false,
                    secrets: false,
                    error: Some(e.to_string()),
                },
            }
        })
        .collect();
    let errors = scanned.iter().filter(|f| f.error.is_some()).count();
    let blocked = scanned.iter().filter(|f| f.blocked).count();
    let secrets = scanned.iter().filter(|f| f.secrets).count();
    if json {
        emit_json(&json!({ "files": scanned }))?;
    } else {
        let mut out = String::new();
        for file in &scanned {
            if let Some(error) = &file.error {
                tell(format_args!("ecp-node: {}: {error}", file.path));
            }
            for f in &file.findings {
                let _ = writeln!(
                    out,
                    "{}:{}: {} {} ({}): {}",
                    file.path,
                    f.line,
                    label(&f.severity),
                    one_line(&f.rule_id),
                    label(&f.category),
                    one_line(&f.excerpt)
                );
                if !f.message.is_empty() {
                    let _ = writeln!(out, "{}:{}:   why: {}", file.path, f.line, one_line(&f.message));
                }
            }
        }
        let threshold = label(&DEFAULT_THRESHOLD);
        let files = scanned.len();
        let _ = writeln!(
            out,
            "scanned {files} file{}: {blocked} flagged at or above {threshold}{}{}",
            if files == 1 { "" } else { "s" },
            if secrets > 0 {
                format!(", {secrets} with secrets (held back from sharing)")
            } else {
                String::new()
            },
            if errors > 0 { format!(", {errors} unreadable") } else { String::new() }
        );
        emit(&out)?;
    }
    Ok(match (errors, blocked) {
        (0, 0) => ExitCode::SUCCESS,
        (0, _) => ExitCode::from(1),
        _ => ExitCode::from(2),
    })
}

/// Every `SKILL.md` under `dir`; symlinked folders are not followed (a
/// link loop would never end).
fn collect_skill_files(dir: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let Ok(file_type) = entry.file_type() else { continue };
        if file_type.is_dir() {
            collect_skill_files(&entry.path(), files)?;
        } else if entry.file_name() == SKILL_FILE && !file_type.is_symlink() {
            files.push(entry.path());
        }
    }
    Ok(())
}
