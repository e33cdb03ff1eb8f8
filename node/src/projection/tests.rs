//! Tests of the projection: files written, recognised as the node's own, swept.

use super::*;
use ecp_protocol::Timestamp;
use ecp_protocol::packet::Origin;

fn packet(name: &str, body: &str) -> SkillPacket {
    let origin = Origin::new("peer", "u", "linux", "1");
    SkillPacket::new(&origin, name, "d", body, 0.9, Timestamp::go_zero())
}

#[test]
fn writes_and_removes_skill_files() {
    let tmp = tempfile::tempdir().unwrap();
    let p = Projection::new(tmp.path());
    p.write(&packet("alpha", "---\nname: alpha\n---\nbody\n"), SkillKind::External).unwrap();
    let file = tmp.path().join("alpha").join(SKILL_FILE);
    assert_eq!(fs::read_to_string(&file).unwrap(), "---\nname: alpha\n---\nbody\n");
    assert_eq!(p.wrote("alpha", fs::read(&file).unwrap().as_slice()), Written::Own);
    p.remove("alpha").unwrap();
    assert!(!file.exists());
    assert!(!tmp.path().join("alpha").exists());
}

#[test]
fn never_overwrites_an_agents_own_file_with_an_external_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("alpha");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(SKILL_FILE), "agent's own\n").unwrap();
    let p = Projection::new(tmp.path());
    p.write(&packet("alpha", "remote\n"), SkillKind::External).unwrap();
    assert_eq!(fs::read_to_string(dir.join(SKILL_FILE)).unwrap(), "agent's own\n");
}

#[test]
fn never_overwrites_or_removes_a_file_the_agent_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let p = Projection::new(tmp.path());
    p.write(&packet("alpha", "v1\n"), SkillKind::Local).unwrap();
    let file = tmp.path().join("alpha").join(SKILL_FILE);
    fs::write(&file, "the agent's edit\n").unwrap();
    p.write(&packet("alpha", "v1\n"), SkillKind::Local).unwrap();
    assert_eq!(fs::read_to_string(&file).unwrap(), "the agent's edit\n");
    p.remove("alpha").unwrap();
    assert!(file.exists());
}

#[test]
fn remembers_its_own_writes_for_the_folder_watcher() {
    let tmp = tempfile::tempdir().unwrap();
    let p = Projection::new(tmp.path());
    // No watcher yet (a command's process): nothing is noted.
    p.write(&packet("before", "v1\n"), SkillKind::External).unwrap();
    assert!(!p.is_own_write(&tmp.path().join("before").join(SKILL_FILE)));
    assert!(!p.is_own_write(&tmp.path().join("before")));
    // A watcher of this process, asking through another projection made
    // from this one (an agent's folder): both note from now on.
    let agents = p.into_folder(tmp.path().join("agent"));
    agents.watched();
    let file = tmp.path().join("alpha").join(SKILL_FILE);
    assert!(!p.is_own_write(&file));
    p.write(&packet("alpha", "v1\n"), SkillKind::External).unwrap();
    assert!(p.is_own_write(&file));
    assert!(p.is_own_write(&tmp.path().join("alpha")));
    assert!(!p.is_own_write(&tmp.path().join("beta").join(SKILL_FILE)));
    agents.write(&packet("gamma", "v1\n"), SkillKind::External).unwrap();
    assert!(p.is_own_write(&tmp.path().join("agent").join("gamma").join(SKILL_FILE)));
}

#[test]
fn records_its_write_in_the_file_itself_where_it_can() {
    let tmp = tempfile::tempdir().unwrap();
    let p = Projection::new(tmp.path());
    p.write(&packet("alpha", "v1\n"), SkillKind::External).unwrap();
    let dir = tmp.path().join("alpha");
    let file = dir.join(SKILL_FILE);
    assert_eq!(p.wrote("alpha", b"v1\n"), Written::Own);
    if xattr::get_path(&file).is_some() {
        assert!(!dir.join(WRITTEN_MARKER).exists(), "no marker beside an attribute");
    } else {
        assert!(dir.join(WRITTEN_MARKER).exists(), "a marker where attributes are not supported");
    }
    // Replaced by the agent (a new file: no attribute), it is the agent's.
    fs::write(dir.join(".tmp"), "the agent's\n").unwrap();
    fs::rename(dir.join(".tmp"), &file).unwrap();
    p.write(&packet("alpha", "v2\n"), SkillKind::External).unwrap();
    assert_eq!(fs::read_to_string(&file).unwrap(), "the agent's\n");
}

#[test]
fn a_marker_of_an_older_version_still_says_the_file_is_the_nodes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("alpha");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(SKILL_FILE), "v1\n").unwrap();
    fs::write(dir.join(WRITTEN_MARKER), integrity::sha256_hex(b"v1\n")).unwrap();
    let p = Projection::new(tmp.path());
    assert_eq!(p.wrote("alpha", b"v1\n"), Written::Own);
    p.write(&packet("alpha", "v2\n"), SkillKind::External).unwrap();
    assert_eq!(fs::read_to_string(dir.join(SKILL_FILE)).unwrap(), "v2\n");
    assert_eq!(p.wrote("alpha", b"v2\n"), Written::Own);
    assert_eq!(p.wrote("alpha", b"v1\n"), Written::No, "the old marker does not outlive its file");
}

#[test]
fn leftovers_of_dead_writers_are_swept_and_live_ones_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let p = Projection::new(tmp.path());
    p.write(&packet("alpha", "---\nname: alpha\ndescription: d\n---\nbody\n"), SkillKind::External).unwrap();
    let folder = tmp.path().join("alpha");
    // A pid above the kernel's limit (2^22) never runs.
    let dead = folder.join(temporary_name(SKILL_FILE, 4_194_305, 7));
    let live = folder.join(temporary_name(SKILL_FILE, 1, 0));
    let own = folder.join(temporary_name(SKILL_FILE, process_id(), 3));
    let unrelated = folder.join(".SKILL.md.tmp-notes");
    for path in [&dead, &live, &own, &unrelated] {
        fs::write(path, "partial").unwrap();
    }
    assert_eq!(p.sweep_leftovers(), 1);
    assert!(!dead.exists(), "the dead writer's file is gone");
    assert!(live.exists() && own.exists() && unrelated.exists());
    assert!(folder.join(SKILL_FILE).exists(), "the skill itself stays");
    assert_eq!(temporary_writer(&temporary_name("SKILL.md", 42, 9)), Some(42));
    assert_eq!(temporary_writer("SKILL.md.tmp-42-9"), None, "not a dot file");
}

#[test]
fn refuses_names_that_are_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let p = Projection::new(tmp.path().join("skills"));
    for name in ["../escape", "/etc", "a/b", ""] {
        assert!(matches!(p.write(&packet(name, "x"), SkillKind::Local), Err(ProjectionError::UnsafeName(_))));
    }
    assert!(!tmp.path().join("escape").exists());
}

#[test]
fn an_agents_file_in_a_folder_already_there_is_neither_read_over_nor_noted() {
    let tmp = tempfile::tempdir().unwrap();
    let p = Projection::new(tmp.path());
    p.watched();
    let dir = tmp.path().join("alpha");
    fs::create_dir(&dir).unwrap();
    let file = dir.join(SKILL_FILE);
    fs::write(&file, "the agent's own\n").unwrap();
    p.write(&packet("alpha", "v1\n"), SkillKind::External).unwrap();
    assert_eq!(fs::read_to_string(&file).unwrap(), "the agent's own\n");
    assert!(!p.is_own_write(&file), "the agent's next change to it must reach the watcher");
    // A folder already there without a file gets one.
    fs::create_dir(tmp.path().join("beta")).unwrap();
    p.write(&packet("beta", "v1\n"), SkillKind::External).unwrap();
    assert_eq!(fs::read_to_string(tmp.path().join("beta").join(SKILL_FILE)).unwrap(), "v1\n");
    assert_eq!(p.wrote("beta", b"v1\n"), Written::Own);
}

#[test]
fn a_fill_writes_a_new_folders_file_in_place_and_every_other_as_before() {
    let tmp = tempfile::tempdir().unwrap();
    let p = Projection::new(tmp.path()).stamped_by("node-a");
    let agents = p.into_folder(tmp.path().join("agent"));
    p.fill_in_place(true);
    // A new folder: its file written in place, recorded, nothing else in it.
    p.write(&packet("alpha", "---\nname: alpha\n---\nv1\n"), SkillKind::Local).unwrap();
    let dir = tmp.path().join("alpha");
    assert_eq!(fs::read_to_string(dir.join(SKILL_FILE)).unwrap(), "---\nname: alpha\n---\nv1\n");
    assert_eq!(p.wrote("alpha", b"---\nname: alpha\n---\nv1\n"), Written::Own);
    let files: Vec<_> = fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(files == [SKILL_FILE] || xattr::get_path(&dir.join(SKILL_FILE)).is_none(), "{files:?}");
    // A newer version over it, an agent's file in a folder already there:
    // as without the fill.
    p.write(&packet("alpha", "---\nname: alpha\n---\nv2\n"), SkillKind::Local).unwrap();
    assert_eq!(p.wrote("alpha", b"---\nname: alpha\n---\nv2\n"), Written::Own);
    fs::create_dir(tmp.path().join("beta")).unwrap();
    fs::write(tmp.path().join("beta").join(SKILL_FILE), "the agent's own\n").unwrap();
    p.write(&packet("beta", "---\nname: beta\n---\nv1\n"), SkillKind::External).unwrap();
    assert_eq!(fs::read_to_string(tmp.path().join("beta").join(SKILL_FILE)).unwrap(), "the agent's own\n");
    // The fill is shared with the projections made from this one.
    agents.write(&packet("gamma", "---\nname: gamma\n---\nv1\n"), SkillKind::Local).unwrap();
    assert_eq!(agents.wrote("gamma", b"---\nname: gamma\n---\nv1\n"), Written::Own);
    p.fill_in_place(false);
    p.write(&packet("delta", "---\nname: delta\n---\nv1\n"), SkillKind::Local).unwrap();
    assert_eq!(p.wrote("delta", b"---\nname: delta\n---\nv1\n"), Written::Own);
}

#[test]
fn an_in_place_write_never_replaces_a_file_there() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join(SKILL_FILE);
    fs::write(&file, "the agent's own\n").unwrap();
    let e = atomic::write_new_in_place(&file, b"v1\n", "h").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(fs::read_to_string(&file).unwrap(), "the agent's own\n", "left as it was");
    let new = tmp.path().join("new.md");
    assert!(atomic::write_new_in_place(&new, b"v1\n", "h").is_ok());
    assert_eq!(fs::read(&new).unwrap(), b"v1\n");
}
