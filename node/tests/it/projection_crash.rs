//! kill -9 during the projection of a bundle (#26 item 6): a real `ecp-node
//! serve` process writing a big bundle's update into its skills folder is
//! killed with SIGKILL at several points of the write; after each restart
//! the folder is byte for byte the old version or the new one — the one the
//! store holds — never a mix, and no temporary or set-aside sibling folder
//! is left beside it.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli::{Folders, write_skill};
use crate::local_api::Served;

const NAME: &str = "big-bundle";
/// Files besides SKILL.md, and the size of each: about 5 MB in all.
const FILES: usize = 40;
const FILE_BYTES: usize = 128 * 1024;
/// Generous: tests run in parallel on two cores.
const SOON: Duration = Duration::from_secs(60);

/// The marker line of version `k`'s SKILL.md.
fn marker(k: usize) -> String {
    format!("This is version {k} of the big bundle.")
}

/// Version `k` of the skill: every file's path and bytes, SKILL.md included.
fn version(k: usize) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let skill = format!(
        "---\nname: {NAME}\ndescription: A skill folder of many files\n---\n# Big bundle\n\n{}\n",
        marker(k)
    );
    files.insert("SKILL.md".to_owned(), skill.into_bytes());
    for i in 0..FILES {
        let line = format!("version {k} of file {i}: the quick brown fox jumps over the lazy dog\n");
        let bytes: Vec<u8> = line.bytes().cycle().take(FILE_BYTES).collect();
        files.insert(format!("data/part-{}/file-{i:03}.txt", i % 4), bytes);
    }
    files
}

/// Writes version `k` into `<src>/big-bundle`, replacing what was there.
fn write_version(src: &Path, k: usize) {
    let dir = src.join(NAME);
    let _ = std::fs::remove_dir_all(&dir);
    for (path, bytes) in version(k) {
        if path == "SKILL.md" {
            write_skill(src, NAME, std::str::from_utf8(&bytes).unwrap());
            continue;
        }
        let file = dir.join(&path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, bytes).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
}

/// Every regular file under `dir`, by path relative to it.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Which of `candidates` the folder shows whole: every companion byte for
/// byte, nothing else, and SKILL.md carrying the version's marker (the
/// projection may stamp the rest of it). `None`: a mix, or half of one.
fn shows(dir: &Path, candidates: &[usize]) -> Option<usize> {
    let held = tree(dir);
    candidates.iter().copied().find(|&k| {
        let expected = version(k);
        held.len() == expected.len()
            && expected.iter().all(|(path, bytes)| match held.get(path) {
                Some(got) if path == "SKILL.md" => String::from_utf8_lossy(got).contains(&marker(k)),
                Some(got) => got == bytes,
                None => false,
            })
    })
}

/// The names in the skills folder that are not skill folders: what a write
/// leaves beside one while it runs (`.tmp-…`, `.old-…`).
fn siblings(skills: &Path) -> Vec<String> {
    std::fs::read_dir(skills)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".tmp-") || n.contains(".old-"))
                .collect()
        })
        .unwrap_or_default()
}

/// `skill add <src>/big-bundle` as a child process (to the running server).
fn spawn_add(f: &Folders, src: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_ecp-node"))
        .args(["skill", "add"])
        .arg(src.join(NAME))
        .arg("--data")
        .arg(f.data())
        .arg("--skills-dir")
        .arg(f.skills())
        .env_remove("ECP_CONFIG")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts")
}

/// The version the server's store holds, read from its SKILL.md.
fn stored_version(served: &Served, candidates: &[usize]) -> usize {
    let shown = served.get_with_token(&format!("/v1/skills/{NAME}"));
    let body = shown["packet"]["skillBody"].as_str().unwrap_or_default().to_owned();
    candidates.iter().copied().find(|&k| body.contains(&marker(k))).unwrap_or_else(|| panic!("{body}"))
}

/// Waits until the folder shows the version the store holds and nothing is
/// left beside it; that version.
fn settled(served: &Served, f: &Folders, candidates: &[usize], context: &str) -> usize {
    let deadline = Instant::now() + SOON;
    loop {
        let held = stored_version(served, candidates);
        let shown = shows(&f.skills().join(NAME), &[held]);
        let left = siblings(&f.skills());
        if shown == Some(held) && left.is_empty() {
            return held;
        }
        assert!(
            Instant::now() < deadline,
            "{context}: the folder does not show version {held} whole (it shows {shown:?}; {} files) or a \
             sibling is left: {left:?}",
            tree(&f.skills().join(NAME)).len()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn kill_9_during_the_projection_of_a_bundle_leaves_the_old_or_the_new_folder() {
    let f = Folders::new();
    let src = f.tmp.path().join("src");
    write_version(&src, 0);
    let mut served = Served::start(&f.data(), &f.skills(), &[]);
    let added = spawn_add(&f, &src).wait().unwrap();
    assert!(added.success(), "version 0 added: {added:?}");
    assert_eq!(settled(&served, &f, &[0], "version 0"), 0);

    // A build of the new folder beside the old one is what the kill aims at:
    // each round waits for one to appear, then kills after a longer delay.
    let delays_ms = [0u64, 2, 10, 40, 150];
    let mut during = 0;
    for (round, delay) in delays_ms.into_iter().enumerate() {
        let (old, new) = (round, round + 1);
        write_version(&src, new);
        let mut cli = spawn_add(&f, &src);
        let deadline = Instant::now() + SOON;
        let started = Instant::now();
        let building = loop {
            if !siblings(&f.skills()).is_empty() {
                break true;
            }
            // Written already: kill all the same, late.
            if Instant::now() > deadline || shows(&f.skills().join(NAME), &[new]).is_some() {
                break false;
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        eprintln!("round {round}: building {building} after {:?}", started.elapsed());
        std::thread::sleep(Duration::from_millis(delay));
        served.child.kill().expect("SIGKILL");
        served.child.wait().unwrap();
        during += usize::from(building);
        let _ = cli.wait();
        // Right after the kill: the old folder, the new one, or none (killed
        // between the two renames; the start puts the old one back).
        let dir = f.skills().join(NAME);
        let now = shows(&dir, &[old, new]);
        assert!(
            now.is_some() || !dir.exists(),
            "round {round} ({delay} ms): a mixed folder after the kill ({} files)",
            tree(&dir).len()
        );

        let restarted = Instant::now();
        served = Served::start(&f.data(), &f.skills(), &[]);
        eprintln!("round {round}: restarted in {:?}", restarted.elapsed());
        let held = settled(&served, &f, &[old, new], &format!("round {round} ({delay} ms)"));
        if held == old {
            // The update never reached the store: make it now, so the next round starts from `new`.
            let added = spawn_add(&f, &src).wait().unwrap();
            assert!(added.success(), "round {round}: re-add {added:?}");
            assert_eq!(settled(&served, &f, &[new], &format!("round {round} re-added")), new);
        }
    }
    // The kills did land while a folder was being built, not only after.
    assert!(during > 0, "no kill hit a projection in progress");
}
