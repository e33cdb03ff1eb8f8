//! Tests of the importer: real folders on disk, a real store.

use std::fs;

use ecp_protocol::packet::Origin;
use ecp_protocol::skill_doc::StructureLimits;
use ecp_protocol::{SkillPacket, Timestamp, integrity};

use super::*;
use crate::intake::Sender;
use crate::store::SkillRecord;

struct Fixture {
    _tmp: tempfile::TempDir,
    library: Library,
    skills: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let skills = tmp.path().join("skills");
    fs::create_dir_all(&skills).unwrap();
    let library = Library::open(&tmp.path().join("data"), &skills).unwrap();
    Fixture { _tmp: tmp, library, skills }
}

fn skill_md(name: &str, extra: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Does {name}\n{extra}---\n# {name}\n\nSteps that are long enough to pass.\n"
    )
}

fn write(dir: &Path, folder: &str, text: &str) -> PathBuf {
    fs::create_dir_all(dir.join(folder)).unwrap();
    let file = dir.join(folder).join(SKILL_FILE);
    fs::write(&file, text).unwrap();
    file
}

fn record(library: &Library, name: &str) -> SkillRecord {
    library.store().skill(name).unwrap().expect("skill is held").0
}

#[test]
fn imports_agent_files_with_confidence_from_frontmatter_or_default() {
    let f = fixture();
    write(&f.skills, "alpha", &skill_md("alpha", "confidence: 0.65\ntags: [git, debug]\n"));
    write(&f.skills, "beta", &skill_md("beta", ""));
    let report = import_all(&f.library);
    assert_eq!(report.imported, ["alpha", "beta"]);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    let alpha = record(&f.library, "alpha");
    assert_eq!((alpha.kind, alpha.confidence), ("local", 0.65));
    assert_eq!(alpha.tags, ["git", "debug"]);
    assert_eq!(alpha.origin, f.library.store().instance_id());
    assert_eq!(record(&f.library, "beta").confidence, DEFAULT_CONFIDENCE);
}

#[test]
fn a_second_run_imports_only_what_the_agent_changed() {
    let f = fixture();
    let file = write(&f.skills, "alpha", &skill_md("alpha", ""));
    write(&f.skills, "beta", &skill_md("beta", ""));
    import_all(&f.library);
    let again = import_all(&f.library);
    assert!(again.imported.is_empty() && !again.changed());
    fs::write(&file, skill_md("alpha", "confidence: 0.9\n")).unwrap();
    let edited = import_all(&f.library);
    assert_eq!(edited.imported, ["alpha"]);
    assert_eq!(record(&f.library, "alpha").version, 2);
    assert_eq!(record(&f.library, "beta").version, 1);
}

#[test]
fn skips_symlinks_large_files_and_bad_names_and_takes_a_name_other_than_the_folder() {
    let f = fixture();
    let outside = f._tmp.path().join("outside");
    write(&outside, "linked", &skill_md("linked", ""));
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.join("linked"), f.skills.join("linked")).unwrap();
        fs::create_dir_all(f.skills.join("filelink")).unwrap();
        std::os::unix::fs::symlink(
            outside.join("linked").join(SKILL_FILE),
            f.skills.join("filelink/SKILL.md"),
        )
        .unwrap();
    }
    let big = skill_md("big", "") + &"x".repeat(MAX_SKILL_FILE_BYTES);
    write(&f.skills, "big", &big);
    write(&f.skills, "bad name", &skill_md("bad name", ""));
    write(&f.skills, "folder", &skill_md("other", ""));
    write(&f.skills, "nofront", "# Just markdown, no frontmatter at all here.\n");
    write(&f.skills, "ok", &skill_md("ok", ""));
    let report = import_all(&f.library);
    assert_eq!(report.imported, ["other", "ok"]);
    let reasons: HashMap<String, String> = report
        .skipped
        .iter()
        .map(|s| (s.path.parent().unwrap().display().to_string(), s.reason.clone()))
        .collect();
    assert!(reasons["big"].contains("over the limit"), "{reasons:?}");
    assert!(reasons["bad name"].contains("name"), "{reasons:?}");
    assert!(!reasons.contains_key("folder"), "{reasons:?}");
    assert!(reasons["nofront"].contains("no frontmatter"), "{reasons:?}");
    #[cfg(unix)]
    {
        assert!(reasons["linked"].contains("symlink"), "{reasons:?}");
        assert!(reasons["filelink"].contains("symlink"), "{reasons:?}");
    }
    assert_eq!(f.library.store().list_skills().unwrap().len(), 2);
    // Each passed over is kept with its code, for `skill list` and `status`.
    let kept: HashMap<String, String> = f
        .library
        .store()
        .folder_entries()
        .unwrap()
        .into_iter()
        .filter_map(|e| Some((e.entry, e.code?)))
        .collect();
    assert_eq!(kept["big"], "over-limit");
    assert_eq!(kept["nofront"], "invalid");
    #[cfg(unix)]
    assert_eq!(kept["linked"], "symlink");
}

#[test]
fn a_folder_named_otherwise_is_its_skills_home_for_edits_projection_and_deletion() {
    let f = fixture();
    let file = write(&f.skills, "template", &skill_md("template-skill", ""));
    assert_eq!(import_all(&f.library).imported, ["template-skill"]);
    let entries = f.library.store().folder_entries().unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!((entries[0].entry.as_str(), entries[0].name.as_deref()), ("template", Some("template-skill")));
    assert_eq!(entries[0].warnings[0].code, NAME_DIFFERS);
    // The projection shows it where it is, never in a second folder of its name.
    f.library.project_all().unwrap();
    assert!(!f.skills.join("template-skill").exists());
    assert_eq!(import_all(&f.library).unchanged, 1);
    // An edit there is a new version of that skill.
    fs::write(&file, skill_md("template-skill", "confidence: 0.9\n")).unwrap();
    assert_eq!(import_all(&f.library).imported, ["template-skill"]);
    assert_eq!(record(&f.library, "template-skill").version, 2);
    // A file that does not parse for a while withdraws nothing.
    fs::write(&file, "# no frontmatter now\n").unwrap();
    let broken = import_all(&f.library);
    assert!(broken.tombstoned.is_empty(), "{broken:?}");
    assert!(!record(&f.library, "template-skill").deprecated);
    // Deleting the folder tombstones the skill.
    fs::remove_dir_all(f.skills.join("template")).unwrap();
    assert_eq!(import_all(&f.library).tombstoned, ["template-skill"]);
    assert!(f.library.store().folder_entries().unwrap().is_empty());
}

#[test]
fn of_two_folders_claiming_one_name_the_one_that_held_it_stays() {
    let f = fixture();
    write(&f.skills, "zeta", &skill_md("shared-name", ""));
    assert_eq!(import_all(&f.library).imported, ["shared-name"]);
    // A folder first by name, and one of the very name, come later: zeta keeps it.
    write(&f.skills, "alpha", &skill_md("shared-name", "confidence: 0.7\n"));
    write(&f.skills, "shared-name", &skill_md("shared-name", "confidence: 0.6\n"));
    let report = import_all(&f.library);
    assert!(report.imported.is_empty(), "{report:?}");
    assert_eq!(report.skipped.len(), 2, "{report:?}");
    let codes: Vec<(String, Option<String>)> =
        f.library.store().folder_entries().unwrap().into_iter().map(|e| (e.entry, e.code)).collect();
    assert_eq!(
        codes,
        [
            ("alpha".to_owned(), Some("collision".to_owned())),
            ("shared-name".to_owned(), Some("collision".to_owned())),
            ("zeta".to_owned(), None),
        ]
    );
    assert_eq!(record(&f.library, "shared-name").confidence, DEFAULT_CONFIDENCE);
    // Without a holder, the folder of the very name wins over the first by name.
    let g = fixture();
    write(&g.skills, "alpha", &skill_md("beta", "confidence: 0.7\n"));
    write(&g.skills, "beta", &skill_md("beta", "confidence: 0.6\n"));
    assert_eq!(import_all(&g.library).imported, ["beta"]);
    assert_eq!(record(&g.library, "beta").confidence, 0.6);
}

#[test]
fn files_another_node_wrote_are_the_agents_for_a_new_node() {
    let f = fixture();
    write(&f.skills, "alpha", &skill_md("alpha", ""));
    import_all(&f.library);
    f.library.project_all().unwrap();
    // Recorded as written by this node now: not imported again.
    assert_eq!(import_all(&f.library).imported, Vec::<String>::new());
    // A fresh data folder on the same skills folder: the records are not its own.
    let fresh = Library::open(&f._tmp.path().join("data2"), &f.skills).unwrap();
    assert_ne!(fresh.store().instance_id(), f.library.store().instance_id());
    assert_eq!(import_all(&fresh).imported, ["alpha"]);
    // Records without a node (older versions) count only in a folder this store marked before.
    let dir = f.skills.join("alpha");
    let content = fs::read(dir.join(SKILL_FILE)).unwrap();
    fs::write(dir.join(".ecp-written"), integrity::sha256_hex(&content)).unwrap();
    f.library.projection().forget_written("alpha");
    fs::write(dir.join(".ecp-written"), integrity::sha256_hex(&content)).unwrap();
    let unbound = f.library.projection().wrote("alpha", &content);
    assert_eq!(unbound, crate::projection::Written::Unbound);
    let newer = Library::open(&f._tmp.path().join("data3"), &f.skills).unwrap();
    fs::remove_file(f.skills.join(crate::deletion_guard::MARKER_FILE)).unwrap();
    assert_eq!(import_all(&newer).imported, ["alpha"], "a folder without a marker, new to this store");
}

#[test]
fn files_the_node_projected_are_not_imported() {
    let f = fixture();
    let origin = Origin::new("peer-a", "u", "linux/amd64", "1");
    let remote =
        SkillPacket::new(&origin, "remote", "From a peer", &skill_md("remote", ""), 0.9, crate::store::now());
    let update = ecp_protocol::KnowledgeUpdate {
        peer_instance: "peer-a".into(),
        skills: vec![remote],
        ..Default::default()
    };
    let sender = Sender {
        instance: "peer-a".into(),
        account: "addr:127.0.0.1".into(),
        trust: 0.6,
        reshare: true,
        kind: ecp_protocol::merge::SenderKind::Current,
    };
    let result = f.library.merge(update, &sender, &ecp_protocol::StandardPolicy::default()).unwrap();
    assert_eq!(result.new_skills, 1, "{result:?}");
    assert!(f.skills.join("remote").join(SKILL_FILE).exists());
    let report = import_all(&f.library);
    assert_eq!((report.imported.len(), report.own_files), (0, 1));
    assert_eq!(record(&f.library, "remote").kind, "external");
    // Without the marker (lost, or not written yet) the node still knows its copy.
    f.library.projection().forget_written("remote");
    let report = import_all(&f.library);
    assert_eq!((report.imported.len(), report.own_files), (0, 1));
    assert_eq!(record(&f.library, "remote").kind, "external");
}

#[test]
fn a_received_skills_file_says_where_it_came_from_and_only_an_agents_edit_is_imported() {
    let f = fixture();
    let origin = Origin::new("peer-a", "u", "linux/amd64", "1");
    let body = skill_md("remote", "metadata:\n  author: someone\n");
    let remote = SkillPacket::new(&origin, "remote", "From a peer", &body, 0.9, crate::store::now());
    let update = ecp_protocol::KnowledgeUpdate {
        peer_instance: "peer-a".into(),
        skills: vec![remote],
        ..Default::default()
    };
    let sender = Sender {
        instance: "peer-a".into(),
        account: "addr:127.0.0.1".into(),
        trust: 0.6,
        reshare: true,
        kind: ecp_protocol::merge::SenderKind::Current,
    };
    f.library.merge(update, &sender, &ecp_protocol::StandardPolicy::default()).unwrap();
    let file = f.skills.join("remote").join(SKILL_FILE);
    let shown = fs::read_to_string(&file).unwrap();
    let node = f.library.store().instance_id();
    let stamp = format!(
        "metadata:\n  author: someone\n  ecp-origin: \"peer-a\"\n  ecp-origin-status: \"claimed\"\n  ecp-confidence: 0.54\n  \
         ecp-node: \"{node}\"\n"
    );
    assert!(shown.contains(&stamp), "{shown}");
    // The store keeps the body as received: served and hashed unchanged.
    let (held, packet, _) = f.library.store().skill("remote").unwrap().unwrap();
    assert_eq!(packet.skill_body, body);
    assert_eq!(held.integrity_hash, integrity::body_hash(&body));
    let seq = f.library.store().sequence().unwrap();
    let report = import_all(&f.library);
    assert_eq!((report.imported.len(), report.own_files), (0, 1));
    // Without the record of the write, the stamped copy is still known as the node's.
    f.library.projection().forget_written("remote");
    let report = import_all(&f.library);
    assert_eq!((report.imported.len(), report.own_files), (0, 1));
    assert_eq!(f.library.store().sequence().unwrap(), seq, "no change, nothing to re-share");
    // The agent's edit of the body is an edit: a derived version (#20),
    // the received skill kept as it is.
    fs::write(&file, format!("{shown}One more step the agent learned.\n")).unwrap();
    assert_eq!(import_all(&f.library).derived, ["remote"]);
    assert_eq!(record(&f.library, "remote").kind, "external");
}

#[test]
fn a_deleted_agent_file_tombstones_only_skills_imported_from_the_folder() {
    let f = fixture();
    write(&f.skills, "agent", &skill_md("agent", ""));
    import_all(&f.library);
    let origin = local_origin(f.library.store().instance_id());
    let by_hand = local_packet(
        &skill_md("by-hand", ""),
        None,
        &origin,
        &StructureLimits::default(),
        crate::store::now(),
    )
    .unwrap()
    .0;
    f.library.put_local(&by_hand, Source::Operator).unwrap();
    assert!(f.skills.join("by-hand").join(SKILL_FILE).exists());
    fs::remove_dir_all(f.skills.join("agent")).unwrap();
    fs::remove_dir_all(f.skills.join("by-hand")).unwrap();
    let report = import_all(&f.library);
    assert_eq!(report.tombstoned, ["agent"]);
    assert!(record(&f.library, "agent").deprecated);
    assert!(!record(&f.library, "by-hand").deprecated);
    // The agent writes it again: a new version, no longer a tombstone.
    write(&f.skills, "agent", &skill_md("agent", ""));
    assert_eq!(import_all(&f.library).imported, ["agent"]);
    let agent = record(&f.library, "agent");
    assert_eq!((agent.deprecated, agent.version), (false, 3));
}

#[test]
fn a_missing_folder_tombstones_nothing() {
    let f = fixture();
    write(&f.skills, "agent", &skill_md("agent", ""));
    import_all(&f.library);
    fs::remove_dir_all(&f.skills).unwrap();
    let report = import_all(&f.library);
    assert!(report.tombstoned.is_empty());
    assert!(!record(&f.library, "agent").deprecated);
}

#[test]
fn local_packet_reads_the_frontmatter_and_warns_of_another_folder_name() {
    let origin = local_origin("ecp-test");
    let text = skill_md("alpha", "description2: ignored\ntags: a, b\n");
    let (p, warnings) =
        local_packet(&text, Some("alpha"), &origin, &StructureLimits::default(), Timestamp::go_zero())
            .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!((p.skill_name.as_str(), p.skill_description.as_str()), ("alpha", "Does alpha"));
    assert_eq!((p.skill_body.as_str(), p.confidence), (text.as_str(), DEFAULT_CONFIDENCE));
    assert_eq!(p.tags, ["a", "b"]);
    assert!(p.verify().is_ok());
    let (p, warnings) =
        local_packet(&text, Some("beta"), &origin, &StructureLimits::default(), Timestamp::go_zero())
            .unwrap();
    assert_eq!(p.skill_name, "alpha", "shared under its frontmatter name");
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].code, NAME_DIFFERS);
    assert!(warnings[0].message.contains("\"beta\""), "{}", warnings[0].message);
}

#[test]
fn local_packet_takes_a_description_over_the_guideline_and_refuses_one_over_the_limit() {
    let origin = local_origin("ecp-test");
    let with_description = |d: &str| {
        let text = format!(
            "---\nname: alpha\ndescription: {d}\n---\n# alpha\n\nSteps that are long enough to pass.\n"
        );
        local_packet(&text, Some("alpha"), &origin, &StructureLimits::default(), Timestamp::go_zero())
    };
    // 1,100 characters, as real published skills have: imported (a warning is logged).
    let (p, warnings) = with_description(&"d".repeat(1100)).unwrap();
    assert_eq!(p.skill_description.len(), 1100);
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].code, LONG_DESCRIPTION);
    assert!(with_description(&"d".repeat(1024)).unwrap().1.is_empty(), "at the guideline: no warning");
    assert_eq!(with_description(&"d".repeat(1025)).unwrap().1.len(), 1, "one past it: a warning");
    // The hard limit, 4,096 bytes: at it imported, one byte more refused with the limit named.
    assert!(with_description(&"d".repeat(4096)).is_ok());
    let err = with_description(&"d".repeat(4097)).unwrap_err();
    assert!(matches!(err, SkillFileError::DescriptionTooLong { len: 4097, limit: 4096 }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "its description is 4097 bytes, over the limit of 4096; keep it to a paragraph (or raise [limits] \
         max_description_bytes)"
    );
}

#[test]
fn a_folder_that_cannot_be_read_keeps_its_entries_and_the_others_are_renewed() {
    let f = fixture();
    let second = f._tmp.path().join("second");
    write(&second, "bent", "# no frontmatter\n");
    let settings = crate::sharing::Settings {
        folders: vec![
            crate::sharing::Folder { path: f.skills.clone(), share: true },
            crate::sharing::Folder { path: second.clone(), share: true },
        ],
        ..Default::default()
    };
    let library = f.library.clone().with_sharing(crate::sharing::Sharing::new(settings));
    let broken = write(&f.skills, "broken", "# no frontmatter either\n");
    import_all(&library);
    let folders =
        |l: &Library| l.store().folder_entries().unwrap().into_iter().map(|e| e.folder).collect::<Vec<_>>();
    assert_eq!(folders(&library), [1, 2]);
    // Folder 2 goes away; folder 1's file is fixed: only folder 2's entry stays.
    fs::remove_dir_all(&second).unwrap();
    fs::write(&broken, skill_md("broken", "")).unwrap();
    assert_eq!(import_all(&library).imported, ["broken"]);
    assert_eq!(folders(&library), [2]);
}

#[test]
fn project_all_writes_every_skill_a_page_at_a_time_at_the_page_size_and_one_past_it() {
    use crate::library::PROJECT_PAGE;
    for count in [PROJECT_PAGE - 1, PROJECT_PAGE, PROJECT_PAGE + 1, 2 * PROJECT_PAGE, 2 * PROJECT_PAGE + 1] {
        let f = fixture();
        let names: Vec<String> = (0..count).map(|i| format!("skill-{i:02}")).collect();
        for name in &names {
            write(&f.skills, name, &skill_md(name, ""));
        }
        assert_eq!(import_all(&f.library).imported, names);
        for name in &names {
            fs::remove_dir_all(f.skills.join(name)).unwrap();
        }
        assert_eq!(f.library.project_all().unwrap(), count, "{count} skills");
        for name in &names {
            assert!(f.skills.join(name).join(SKILL_FILE).is_file(), "{name} of {count} written back");
        }
        // The store's pages: each after the last name of the one before, none twice.
        let store = f.library.store();
        let first = store.current_packets_after("", PROJECT_PAGE).unwrap();
        assert_eq!(first.len(), PROJECT_PAGE.min(count));
        let rest = store.current_packets_after(&first.last().unwrap().0, usize::MAX).unwrap();
        let paged: Vec<&str> = first.iter().chain(&rest).map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(paged, names.iter().map(String::as_str).collect::<Vec<_>>());
    }
}

/// Puts the local bundle `form-filler` (`SKILL.md`, `scripts/fill.py`,
/// `reference.md`) in the store; without a projection worker the folder is
/// written as it commits.
fn put_form_filler(library: &Library, script: &[u8]) {
    let origin = local_origin(library.store().instance_id());
    let text = skill_md("form-filler", "");
    let (packet, _) =
        local_packet(&text, None, &origin, &StructureLimits::default(), crate::store::now()).unwrap();
    let companions = vec![
        Companion { path: "scripts/fill.py".to_owned(), bytes: script.to_vec(), executable: true },
        Companion { path: "reference.md".to_owned(), bytes: b"# Reference\n".to_vec(), executable: false },
    ];
    assert!(library.put_local_bundle(packet, &companions, Source::Operator).unwrap());
}

/// The script of `form-filler` the store holds now.
fn held_script(library: &Library) -> String {
    let (_, packet, _) = library.store().skill("form-filler").unwrap().unwrap();
    packet.files.iter().find(|f| f.path == "scripts/fill.py").unwrap().sha256.clone()
}

#[test]
fn a_stale_projection_of_an_earlier_version_is_not_taken_for_the_agents_edit() {
    let f = fixture();
    let folder = f.skills.join("form-filler");
    put_form_filler(&f.library, b"print(1)\n");
    // The projection of version 1 is held back while version 2 commits,
    // then lands: the folder shows version 1, every file as the node wrote it.
    let aside = f._tmp.path().join("version-1");
    fs::rename(&folder, &aside).unwrap();
    put_form_filler(&f.library, b"print(2)\n");
    fs::remove_dir_all(&folder).unwrap();
    fs::rename(&aside, &folder).unwrap();

    let report = import_all(&f.library);
    assert!(report.imported.is_empty(), "{report:?}");
    assert_eq!(held_script(&f.library), integrity::sha256_hex(b"print(2)\n"), "version 2 stays");
    assert_eq!(record(&f.library, "form-filler").version, 2);
    f.library.project_all().unwrap();
    assert_eq!(fs::read(folder.join("scripts/fill.py")).unwrap(), b"print(2)\n", "and is shown again");

    // The agent's own changes to the node's folder are still the agent's:
    // a file removed (every file left is as the node wrote it), a file edited.
    fs::remove_file(folder.join("reference.md")).unwrap();
    assert_eq!(import_all(&f.library).imported, ["form-filler"], "a file the agent removed");
    let (_, packet, _) = f.library.store().skill("form-filler").unwrap().unwrap();
    assert!(packet.files.iter().all(|file| file.path != "reference.md"), "{:?}", packet.files);
    fs::write(folder.join("scripts/fill.py"), b"print(3)\n").unwrap();
    assert_eq!(import_all(&f.library).imported, ["form-filler"], "a file the agent edited");
    assert_eq!(held_script(&f.library), integrity::sha256_hex(b"print(3)\n"));
}
