//! A received bundle's whole folder in the skills folder (#26 item 6,
//! `node/src/projection/bundle.rs`): every file byte-identical with its
//! mode, updated whole by a new version, the node's files told from the
//! agent's, a tombstone removing only the node's files, and the folders a
//! crash leaves cleaned at start.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ecp_node::import::Companion;
use ecp_node::projection::Written;
use ecp_node::store::Source;

use crate::bundles::{pull, put_form_filler, put_own_bundle};
use crate::util::TestNode;

const SCRIPT: &[u8] = b"#!/usr/bin/env python3\nimport sys\nprint('filled', sys.argv[1:])\n";
const REFERENCE: &[u8] = b"# Reference\n\nThe form has three fields.\n";

/// Waits until `ready` holds (the projection runs after the commit).
async fn until(what: &str, ready: impl Fn() -> bool) {
    // Generous: on a loaded 2-core machine a pull and its projection take many times their usual second.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn read(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).expect("the file").permissions().mode() & 0o111 != 0
}

/// The dot entries of the skills folder: the temporary and set-aside folders.
fn dot_entries(skills: &Path) -> Vec<String> {
    std::fs::read_dir(skills)
        .expect("the skills folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n != ".ecp-folder" && !n.starts_with(".ecp"))
        .collect()
}

/// The id of a process that has ended.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().expect("`true` runs");
    let pid = child.id();
    child.wait().expect("it ends");
    pid
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pulled_bundle_is_projected_whole_updated_by_a_new_version_and_a_tombstone_leaves_the_agents_file()
{
    let (a, mut b) = (TestNode::start().await, TestNode::start().await);
    put_form_filler(&a, SCRIPT, REFERENCE).await;
    pull(&b, &a).await;
    let folder = b.config().skills_dir.join("form-filler");
    let (script, reference) = (folder.join("scripts/fill.py"), folder.join("reference.md"));
    until("the bundle's folder", || read(&reference).is_some()).await;
    assert!(
        read(&folder.join("SKILL.md")).is_some_and(|s| String::from_utf8_lossy(&s).contains("form-filler"))
    );
    assert_eq!(read(&script).as_deref(), Some(SCRIPT), "byte-identical");
    assert_eq!(read(&reference).as_deref(), Some(REFERENCE));
    assert!(executable(&script), "fill.py is listed 0755");
    assert!(!executable(&reference), "reference.md is listed 0644");
    let projection = b.library().projection();
    assert_eq!(projection.wrote_file("form-filler", "scripts/fill.py", SCRIPT), Written::Own);
    assert_eq!(projection.wrote_file("form-filler", "scripts/fill.py", b"print(1)\n"), Written::No);
    assert_eq!(projection.wrote_file("form-filler", "../form-filler/reference.md", REFERENCE), Written::No);

    // The agent adds a file of its own; a new version changes one file.
    std::fs::write(folder.join("notes.txt"), b"mine\n").unwrap();
    assert_eq!(projection.wrote_file("form-filler", "notes.txt", b"mine\n"), Written::No);
    let edited = b"# Reference\n\nThe form has four fields.\n";
    put_form_filler(&a, SCRIPT, edited).await;
    pull(&b, &a).await;
    // The old folder set aside goes right after the new one is in place.
    let skills_dir = b.config().skills_dir.clone();
    until("the new version, the old one cleared away", || {
        read(&reference).as_deref() == Some(&edited[..]) && dot_entries(&skills_dir).is_empty()
    })
    .await;
    assert_eq!(read(&script).as_deref(), Some(SCRIPT));
    assert!(executable(&script));
    assert_eq!(read(&folder.join("notes.txt")).as_deref(), Some(&b"mine\n"[..]), "the agent's file is kept");
    assert_eq!(dot_entries(&b.config().skills_dir), Vec::<String>::new(), "no temporary folder left");

    // A crash between the two renames: the old folder aside, its place empty,
    // and a half-written new one beside it. The sweep at start puts the old
    // back. (Made while b is down: a running node would project the skill
    // into the empty place itself.)
    let skills = b.config().skills_dir.clone();
    let dead = dead_pid();
    b.stop().await;
    std::fs::rename(&folder, skills.join(format!(".form-filler.old-{dead}-3"))).unwrap();
    let half = skills.join(format!(".form-filler.tmp-{dead}-4"));
    std::fs::create_dir_all(half.join("scripts")).unwrap();
    std::fs::write(half.join("scripts/fill.py"), &SCRIPT[..5]).unwrap();
    b.resume().await;
    assert_eq!(dot_entries(&skills), Vec::<String>::new(), "both swept at start");
    assert_eq!(read(&reference).as_deref(), Some(&edited[..]), "the old folder is back, whole");
    assert_eq!(read(&script).as_deref(), Some(SCRIPT));
    assert_eq!(read(&folder.join("notes.txt")).as_deref(), Some(&b"mine\n"[..]), "with the agent's file");

    // A tombstone removes the node's files; the agent's file and its folder stay.
    let library = a.library().clone();
    tokio::task::spawn_blocking(move || library.tombstone("form-filler", Source::Operator).unwrap())
        .await
        .unwrap();
    pull(&b, &a).await;
    // The files go one by one: wait for the last of them, then look at what stays.
    until("the tombstone to remove the node's files and the emptied folder", || {
        read(&folder.join("SKILL.md")).is_none()
            && read(&script).is_none()
            && read(&reference).is_none()
            && !folder.join("scripts").exists()
    })
    .await;
    assert_eq!(read(&folder.join("notes.txt")).as_deref(), Some(&b"mine\n"[..]));
}

/// 80 files, about 5 MB: every DejaVu font installed (binary), then
/// generated XML schemas.
fn big_folder() -> Vec<(String, Vec<u8>, bool)> {
    let fonts: Vec<PathBuf> = std::fs::read_dir("/usr/share/fonts/truetype/dejavu")
        .map(|d| {
            d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "ttf")).collect()
        })
        .unwrap_or_default();
    let mut files = Vec::new();
    let mut total = 0;
    for font in fonts.iter().take(6) {
        let bytes = std::fs::read(font).expect("a font");
        total += bytes.len();
        files.push((format!("assets/fonts/{}", font.file_name().unwrap().to_string_lossy()), bytes, false));
    }
    let rest = 80 - files.len();
    let each = (5_000_000usize.saturating_sub(total) / rest).max(1_000);
    for i in 0..rest {
        let mut xml = format!("<?xml version=\"1.0\"?>\n<xs:schema id=\"s{i}\">\n");
        let mut n = 0;
        while xml.len() < each {
            xml.push_str(&format!("  <xs:element name=\"field{i}x{n}\" type=\"xs:string\"/>\n"));
            n += 1;
        }
        xml.push_str("</xs:schema>\n");
        files.push((format!("schemas/part{i:02}.xsd"), xml.into_bytes(), false));
    }
    files
}

#[tokio::test(flavor = "multi_thread")]
async fn an_80_file_5_mb_folder_with_binary_fonts_is_projected_byte_identical() {
    let (a, b) = (TestNode::start().await, TestNode::start().await);
    let files = big_folder();
    assert_eq!(files.len(), 80);
    assert!(files.iter().map(|f| f.1.len()).sum::<usize>() >= 4_900_000);
    let companions = files
        .iter()
        .map(|(path, bytes, executable)| Companion {
            path: path.clone(),
            bytes: bytes.clone(),
            executable: *executable,
        })
        .collect();
    put_own_bundle(&a, "pdf-forms", companions).await;
    pull(&b, &a).await;
    let folder = b.config().skills_dir.join("pdf-forms");
    until("the bundle's folder", || folder.join("SKILL.md").exists()).await;
    for (path, bytes, _) in &files {
        assert!(read(&folder.join(path)).as_ref() == Some(bytes), "{path} byte-identical");
    }
}
