//! Reloading the peers file while the node runs: when it changes, and on
//! SIGHUP. The file is read and parsed here and handed to
//! [`Federator::apply`]; a file that no longer parses is reported and
//! ignored, and the peers stay as they are — also one with a weak
//! `key_secret` on a node listening beyond loopback.
//!
//! Changes are seen with `notify`, on the file's folder and on the file
//! itself. The folder, because an editor that saves by renaming a new file
//! over the old one, or Kubernetes swapping a ConfigMap's folder, changes
//! the folder and leaves the old file as it was. The file, because a file
//! bind-mounted on its own (`deploy/docker-compose.yml`) changes only there.
//! A burst of events is looked at once it settles ([`DEBOUNCE`]), and only a
//! change of the file's content reloads it. Where the folder cannot be
//! watched, the file is reloaded on SIGHUP only.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::mpsc;

use crate::config::PeersConfig;
use crate::federation::Federator;

/// How long the file's folder stays quiet before the file is read again.
pub const DEBOUNCE: Duration = Duration::from_millis(100);

/// Reloads the peers file at `path` into `federator` when its content
/// changes (quiet for `debounce`) and on SIGHUP. The first look is at once,
/// so a change made while the node started is not missed. Runs until dropped.
/// A file with a weak `key_secret` is not applied when the node listens
/// `beyond_loopback`, as the node would not have started with it.
pub async fn watch(federator: Federator, path: PathBuf, debounce: Duration, beyond_loopback: bool) {
    let mut file = WatchedFile::new(path);
    let mut hangup = hangup_signal();
    loop {
        tokio::select! {
            () = file.changed(debounce) => {}
            () = next_hangup(&mut hangup) => {}
        }
        reload(&federator, &file.path, beyond_loopback).await;
    }
}

/// Reloads the peers file at `path` now; a file that equals what was last
/// applied changes nothing, and one with a weak `key_secret` is not applied
/// `beyond_loopback`.
pub async fn reload(federator: &Federator, path: &Path, beyond_loopback: bool) {
    let file = path.to_owned();
    match tokio::task::spawn_blocking(move || PeersConfig::load(&file)).await {
        Ok(Ok(config)) if config == federator.peers_config() => tracing::debug!("peers file unchanged"),
        Ok(Ok(config)) if beyond_loopback && !crate::config::weak_peer_keys(&config).is_empty() => {
            for weak in crate::config::weak_peer_keys(&config) {
                tracing::warn!("peers file not reloaded, the peers stay as they were: {weak}");
            }
        }
        Ok(Ok(config)) => {
            tracing::info!(peers = config.peers.len(), "peers file reloaded");
            federator.apply(config).await;
        }
        Ok(Err(e)) => tracing::warn!(error = %e, "peers file not reloaded; the peers stay as they were"),
        Err(e) => tracing::error!(error = %e, "peers file reload failed"),
    }
}

/// A file whose changes of content are waited for.
struct WatchedFile {
    path: PathBuf,
    /// Kept for its events; `None` when the folder cannot be watched.
    _watcher: Option<notify::RecommendedWatcher>,
    /// One `()` per event that may have changed the file.
    events: mpsc::UnboundedReceiver<()>,
    /// The content last reported (`Some(None)`: unreadable); `None` before the first report.
    last: Option<Option<Vec<u8>>>,
}

impl WatchedFile {
    fn new(path: PathBuf) -> WatchedFile {
        let (tx, events) = mpsc::unbounded_channel();
        let watcher = match start_watcher(&path, tx) {
            Ok(watcher) => Some(watcher),
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch the peers file; it is reloaded on SIGHUP only");
                None
            }
        };
        WatchedFile { path, _watcher: watcher, events, last: None }
    }

    /// Completes when the file's content differs from what was last reported
    /// (at once, the first time). Dropping it midway misses nothing: the
    /// next call looks at the content before it waits.
    async fn changed(&mut self, debounce: Duration) {
        loop {
            let now = Some(tokio::fs::read(&self.path).await.ok());
            if now != self.last {
                self.last = now;
                return;
            }
            if self.events.recv().await.is_none() {
                // Not watched: only SIGHUP reloads.
                std::future::pending::<()>().await;
            }
            crate::import::settle(&mut self.events, debounce).await;
        }
    }
}

/// Watches `path`'s folder (and, where it can, the file itself) and sends
/// one `()` per event that may have changed the file.
fn start_watcher(path: &Path, tx: mpsc::UnboundedSender<()>) -> notify::Result<notify::RecommendedWatcher> {
    use notify::Watcher;
    let name = path.file_name().map(ToOwned::to_owned).unwrap_or_default();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // An error (e.g. a queue overflow) may hide a change: look.
        if event.as_ref().is_ok_and(|e| !may_change(e, &name)) {
            return;
        }
        let _ = tx.send(());
    })?;
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    watcher.watch(folder, notify::RecursiveMode::NonRecursive)?;
    if let Err(e) = watcher.watch(path, notify::RecursiveMode::NonRecursive) {
        tracing::debug!(error = %e, "peers file watched through its folder only");
    }
    Ok(watcher)
}

/// Whether an event may have changed the content of the file called `name`.
/// Reads do not (ours included: reading the file must not wake the watch
/// again), nor changes of metadata. Writes to other files of the folder do
/// not either (the folder may be the node's data folder, written on every
/// merge), but new entries and renames of any name may: a symlink swapped in
/// (a ConfigMap's `..data`) changes the file without naming it.
fn may_change(event: &notify::Event, name: &std::ffi::OsStr) -> bool {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    match event.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => {}
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_)) => return false,
        EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(_)) => return true,
        _ => {}
    }
    event.paths.is_empty() || event.paths.iter().any(|p| p.file_name() == Some(name))
}

#[cfg(unix)]
type Hangup = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangup = ();

#[cfg(unix)]
fn hangup_signal() -> Hangup {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
}

#[cfg(not(unix))]
fn hangup_signal() -> Hangup {}

#[cfg(unix)]
async fn next_hangup(hangup: &mut Hangup) {
    let received = match hangup {
        Some(signal) => signal.recv().await.is_some(),
        None => false,
    };
    if !received {
        // No signal handling here (or the stream ended): never fire.
        *hangup = None;
        std::future::pending::<()>().await;
    }
}

#[cfg(not(unix))]
async fn next_hangup(_: &mut Hangup) {
    std::future::pending().await
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::Config;
    use crate::library::Library;

    /// Long enough for an event to arrive on a loaded machine.
    const PATIENCE: Duration = Duration::from_secs(10);

    /// Runs `change` shortly after `file` starts waiting, so that only an
    /// event (not the look at the content each wait starts with) can end it.
    async fn seen(file: &mut WatchedFile, change: impl FnOnce()) -> bool {
        let change = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            change();
        };
        let (_, waited) = tokio::join!(change, tokio::time::timeout(PATIENCE, file.changed(DEBOUNCE)));
        waited.is_ok()
    }

    #[tokio::test]
    async fn a_write_and_a_replacement_by_rename_are_seen_and_a_neighbour_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("peers.toml");
        std::fs::write(&path, "# one\n").unwrap();
        let mut file = WatchedFile::new(path.clone());
        assert!(file._watcher.is_some());
        file.changed(DEBOUNCE).await;

        assert!(seen(&mut file, || std::fs::write(&path, "# two\n").unwrap()).await, "a write in place");

        let neighbour = dir.path().join("node.toml");
        let waited = tokio::time::timeout(Duration::from_millis(500), async {
            tokio::join!(async { std::fs::write(&neighbour, "x").unwrap() }, file.changed(DEBOUNCE))
        });
        assert!(waited.await.is_err(), "another file of the folder changed; this one did not");

        let replacement = dir.path().join(".peers.toml.swp");
        let replace = || {
            std::fs::write(&replacement, "# three\n").unwrap();
            std::fs::rename(&replacement, &path).unwrap();
        };
        assert!(seen(&mut file, replace).await, "a new file renamed over it");
        assert_eq!(file.last, Some(Some(b"# three\n".to_vec())));
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_configmap_swapping_its_data_folder_is_seen() {
        use std::os::unix::fs::symlink;
        // The layout Kubernetes gives a ConfigMap volume: the file is a link
        // through `..data`, and an update swaps `..data` by a rename.
        let dir = tempfile::tempdir().unwrap();
        let (old, new) = (dir.path().join("..v1"), dir.path().join("..v2"));
        std::fs::create_dir(&old).unwrap();
        std::fs::write(old.join("peers.toml"), "# one\n").unwrap();
        symlink("..v1", dir.path().join("..data")).unwrap();
        let path = dir.path().join("peers.toml");
        symlink("..data/peers.toml", &path).unwrap();
        let mut file = WatchedFile::new(path);
        file.changed(DEBOUNCE).await;

        let swap = || {
            std::fs::create_dir(&new).unwrap();
            std::fs::write(new.join("peers.toml"), "# two\n").unwrap();
            symlink("..v2", dir.path().join("..data_tmp")).unwrap();
            std::fs::rename(dir.path().join("..data_tmp"), dir.path().join("..data")).unwrap();
        };
        assert!(seen(&mut file, swap).await);
        assert_eq!(file.last, Some(Some(b"# two\n".to_vec())));
    }

    async fn urls(federator: &Federator) -> Vec<String> {
        federator.active_peers().await.into_iter().map(|p| p.url).collect()
    }

    async fn eventually_urls(federator: &Federator, want: &[&str]) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while urls(federator).await != want {
            assert!(
                tokio::time::Instant::now() < deadline,
                "peers stayed {:?}, not {want:?}",
                urls(federator).await
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test]
    async fn the_watch_applies_each_new_file_and_ignores_a_broken_one() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::for_tests(dir.path());
        let library = Library::open(&config.data_dir, &config.skills_dir).unwrap();
        let federator = Federator::start(library, &config, PeersConfig::default(), None, None).await.unwrap();
        // Port 9 (discard) on loopback: nothing answers, nothing leaves the machine.
        let peer = |port: u16| format!("[[peer]]\nurl = \"http://127.0.0.1:{port}\"\npull = false\n");
        let path = dir.path().join("peers.toml");
        std::fs::write(&path, peer(9)).unwrap();
        // As on a node listening beyond loopback.
        let watch = tokio::spawn(super::watch(federator.clone(), path.clone(), DEBOUNCE, true));
        eventually_urls(&federator, &["http://127.0.0.1:9"]).await;

        std::fs::write(&path, "[[peer]]\nurl = \"http://x\"\ntrust = 7\n").unwrap();
        tokio::time::sleep(DEBOUNCE * 5).await;
        assert_eq!(urls(&federator).await, ["http://127.0.0.1:9"], "a broken file changes nothing");
        let weak_key = format!("{}key_id = \"k\"\nkey_secret = \"{}\"\n", peer(29), "k".repeat(31));
        std::fs::write(&path, weak_key).unwrap();
        tokio::time::sleep(DEBOUNCE * 5).await;
        assert_eq!(
            urls(&federator).await,
            ["http://127.0.0.1:9"],
            "nor does one with a weak key beyond loopback"
        );

        let replacement = dir.path().join("peers.toml.new");
        std::fs::write(&replacement, format!("{}{}", peer(9), peer(19))).unwrap();
        std::fs::rename(&replacement, &path).unwrap();
        eventually_urls(&federator, &["http://127.0.0.1:19", "http://127.0.0.1:9"]).await;

        watch.abort();
        federator.shutdown().await;
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn sighup_reloads_the_file_even_when_it_did_not_change() {
        // Ours too, before anything can send one: the default action of SIGHUP ends the process.
        let _ours = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let config = Config::for_tests(dir.path());
        let library = Library::open(&config.data_dir, &config.skills_dir).unwrap();
        let federator = Federator::start(library, &config, PeersConfig::default(), None, None).await.unwrap();
        let path = dir.path().join("peers.toml");
        std::fs::write(&path, "[[peer]]\nurl = \"http://127.0.0.1:9\"\npull = false\n").unwrap();
        let watch = tokio::spawn(super::watch(federator.clone(), path.clone(), DEBOUNCE, false));
        eventually_urls(&federator, &["http://127.0.0.1:9"]).await;

        // Peers changed behind the file's back: no event, only a signal, brings the file back.
        federator.apply(PeersConfig::default()).await;
        tokio::time::sleep(DEBOUNCE * 5).await;
        assert_eq!(urls(&federator).await, Vec::<String>::new());
        let killed = std::process::Command::new("kill")
            .args(["-HUP", &std::process::id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        eventually_urls(&federator, &["http://127.0.0.1:9"]).await;

        watch.abort();
        federator.shutdown().await;
    }
}
