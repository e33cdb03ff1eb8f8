//! One server per data folder: the OS lock `serve` holds on
//! `<data>/server.lock` for its whole life, and `<data>/server.json` (mode
//! 0600) naming its pid, the URL it answers on and its skills folder,
//! written once it listens and removed when it stops cleanly.
//!
//! The lock is the truth, the file only describes its holder: a
//! `server.json` left by a server that crashed sits beside a lock nobody
//! holds and is ignored (and replaced by the next server). The lock is the
//! kernel's (`flock`), so it goes with the process however it ends.
//!
//! The CLI asks [`running_server`] whether a server holds the folder (a
//! shared lock it cannot take while the server holds its exclusive one),
//! and talks to it through the local API when one does.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The file the server locks.
pub const LOCK_FILE: &str = "server.lock";
/// The file naming the server that holds the lock.
pub const SERVER_FILE: &str = "server.json";

/// How long `serve` waits for a lock held by something that is not a
/// server yet (a CLI probing it, a server still starting) before refusing.
const STARTING_GRACE: Duration = Duration::from_secs(2);

/// What `server.json` says about the running server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    /// Its process id.
    pub pid: u32,
    /// The base URL it answers on from this machine (`http://127.0.0.1:7327`;
    /// the loopback address of its family when it listens on all addresses).
    pub url: String,
    /// The skills folder it projects into.
    pub skills_dir: PathBuf,
}

/// Why the data folder could not be locked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another server holds the folder.
    #[error(
        "another ecp-node server (pid {pid}, {url}) already serves this data folder; stop it first, or give \
         this one another --data"
    )]
    Held {
        /// Its process id.
        pid: u32,
        /// Where it answers.
        url: String,
    },
    /// Another process holds the lock and has not said who it is.
    #[error(
        "another process holds {LOCK_FILE} in this data folder (a server still starting?); stop it first, or \
         give this one another --data"
    )]
    HeldByUnknown,
    /// The lock file could not be created or locked.
    #[error("cannot lock {LOCK_FILE} in the data folder: {0}")]
    Io(#[from] std::io::Error),
    /// The data folder is something else than a folder, or cannot be read.
    #[error("{0}")]
    DataFolder(String),
}

/// Whether `data_dir` is a folder that exists (`Ok(true)`), or is missing
/// (`Ok(false)`); an error saying what it is otherwise — a file, or
/// unreadable — and what to do.
pub fn data_folder_exists(data_dir: &Path) -> Result<bool, String> {
    let shown = data_dir.display();
    match std::fs::metadata(data_dir) {
        Ok(meta) if meta.is_dir() => Ok(true),
        Ok(_) => Err(format!(
            "the data folder {shown} is a file, not a folder; pass --data DIR with the folder `ecp-node serve` uses"
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => {
            Err(format!("cannot read the data folder {shown}: {e}; check the path and its permissions"))
        }
    }
}

/// The exclusive lock on a data folder, held until dropped; dropping it
/// also removes `server.json`.
#[derive(Debug)]
pub struct DataLock {
    file: File,
    data_dir: PathBuf,
    published: bool,
}

impl DataLock {
    /// Locks `data_dir` (creating it) for a server, or says who holds it.
    pub fn acquire(data_dir: &Path) -> Result<DataLock, LockError> {
        data_folder_exists(data_dir).map_err(LockError::DataFolder)?;
        std::fs::create_dir_all(data_dir)?;
        let file =
            OpenOptions::new().create(true).truncate(false).write(true).open(data_dir.join(LOCK_FILE))?;
        let deadline = std::time::Instant::now() + STARTING_GRACE;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::Error(e)) => return Err(e.into()),
                Err(TryLockError::WouldBlock) => {
                    if let Some(info) = read_info(data_dir) {
                        return Err(LockError::Held { pid: info.pid, url: info.url });
                    }
                    if std::time::Instant::now() >= deadline {
                        return Err(LockError::HeldByUnknown);
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
        Ok(DataLock { file, data_dir: data_dir.to_owned(), published: false })
    }

    /// Writes `server.json` (mode 0600) for the CLI to find this server.
    pub fn publish(&mut self, info: &ServerInfo) -> std::io::Result<()> {
        let path = self.data_dir.join(SERVER_FILE);
        let text = serde_json::to_vec_pretty(info).map_err(std::io::Error::other)?;
        write_private(&path, &text)?;
        self.published = true;
        Ok(())
    }
}

impl Drop for DataLock {
    fn drop(&mut self) {
        if self.published {
            let _ = std::fs::remove_file(self.data_dir.join(SERVER_FILE));
        }
        let _ = self.file.unlock();
    }
}

/// The server holding `data_dir`, if one does and has said where it
/// answers. A `server.json` beside a lock nobody holds is stale: `None`.
pub fn running_server(data_dir: &Path) -> Option<ServerInfo> {
    let file = File::open(data_dir.join(LOCK_FILE)).ok()?;
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            None
        }
        Err(TryLockError::WouldBlock) => read_info(data_dir),
        Err(TryLockError::Error(_)) => None,
    }
}

fn read_info(data_dir: &Path) -> Option<ServerInfo> {
    let text = std::fs::read(data_dir.join(SERVER_FILE)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Writes `path` readable by its owner only, atomically (a temporary file
/// renamed over it), so a reader never sees half of it.
pub(crate) fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let mut options = OpenOptions::new();
    options.create(true).truncate(true).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(&tmp)?;
    // The mode of an existing file is not changed by `open`.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(contents)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(pid: u32) -> ServerInfo {
        ServerInfo { pid, url: "http://127.0.0.1:7327".into(), skills_dir: "/s".into() }
    }

    #[test]
    fn a_second_lock_names_the_holder_and_the_file_goes_with_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let mut first = DataLock::acquire(&data).unwrap();
        assert_eq!(running_server(&data), None, "not published yet");
        first.publish(&info(4242)).unwrap();
        assert_eq!(running_server(&data), Some(info(4242)));
        match DataLock::acquire(&data) {
            Err(LockError::Held { pid, url }) => {
                assert_eq!((pid, url.as_str()), (4242, "http://127.0.0.1:7327"))
            }
            other => panic!("expected Held, got {other:?}"),
        }
        drop(first);
        assert!(!data.join(SERVER_FILE).exists());
        assert_eq!(running_server(&data), None);
        DataLock::acquire(&data).expect("free again");
    }

    #[test]
    fn a_stale_server_file_without_the_lock_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(LOCK_FILE), b"").unwrap();
        std::fs::write(dir.path().join(SERVER_FILE), serde_json::to_vec(&info(1)).unwrap()).unwrap();
        assert_eq!(running_server(dir.path()), None);
        let mut lock = DataLock::acquire(dir.path()).expect("a stale file does not hold the folder");
        lock.publish(&info(2)).unwrap();
        assert_eq!(running_server(dir.path()).map(|i| i.pid), Some(2));
    }

    #[cfg(unix)]
    #[test]
    fn the_server_file_is_private_even_over_a_readable_one() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SERVER_FILE);
        std::fs::write(&path, b"{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&path, b"{\"x\":1}").unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"x\":1}");
    }
}
