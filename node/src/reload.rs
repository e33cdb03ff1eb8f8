//! Reloading the peers file while the node runs: when it changes (polled
//! every [`PEERS_FILE_POLL`]) and on SIGHUP. The file is read and parsed
//! here and handed to [`Federator::apply`]; a file that no longer parses is
//! reported and ignored, and the peers stay as they are.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::federation::Federator;
use crate::peers::PeersConfig;

/// How often the peers file is checked for changes.
pub const PEERS_FILE_POLL: Duration = Duration::from_secs(1);

/// Reloads the peers file at `path` into `federator` when it changes and on
/// SIGHUP. Runs until dropped.
pub async fn watch(federator: Federator, path: PathBuf) {
    // Unknown at first: the first poll parses the file and compares it
    // with what was applied, so a change made while starting is not missed.
    let mut last: Option<Option<Vec<u8>>> = None;
    let mut hangup = hangup_signal();
    loop {
        let by_signal = tokio::select! {
            () = tokio::time::sleep(PEERS_FILE_POLL) => false,
            () = next_hangup(&mut hangup) => true,
        };
        let now = Some(tokio::fs::read(&path).await.ok());
        if !by_signal && now == last {
            continue;
        }
        last = now;
        reload(&federator, &path).await;
    }
}

/// Reloads the peers file at `path` now; a file that equals what was last
/// applied changes nothing.
pub async fn reload(federator: &Federator, path: &Path) {
    let file = path.to_owned();
    match tokio::task::spawn_blocking(move || PeersConfig::load(&file)).await {
        Ok(Ok(config)) if config == federator.peers_config() => tracing::debug!("peers file unchanged"),
        Ok(Ok(config)) => {
            tracing::info!(peers = config.peers.len(), "peers file reloaded");
            federator.apply(config).await;
        }
        Ok(Err(e)) => tracing::warn!(error = %e, "peers file not reloaded; the peers stay as they were"),
        Err(e) => tracing::error!(error = %e, "peers file reload failed"),
    }
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
