//! A PostgreSQL server of a test's own (#18 item 5), from the machine's
//! Debian package (`.ci/run` installs it): `initdb` into a temporary
//! folder, the server on a free loopback port with its unix socket in that
//! folder, `fsync` off (the tests test the node, not the disk). `initdb`
//! refuses root, so as root both run as the `postgres` user (or `nobody`).
//!
//! A machine without PostgreSQL cannot run these tests: [`PgServer::start`]
//! says why, and the test prints `SKIPPED` with it and returns — visible in
//! the output, never a silent pass. `ECP_PG_BIN` names the folder of the
//! binaries when they are not under `/usr/lib/postgresql/*/bin`.
//!
//! The `postgres` client blocks (on a runtime of its own): from a test's
//! async code, every use goes through `block_in_place`, so the tests run
//! on the multi-threaded runtime.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running PostgreSQL server; stopped (and its folder removed) when dropped.
pub(crate) struct PgServer {
    dir: tempfile::TempDir,
    child: Child,
    port: u16,
}

/// Starts a server, or prints why none can run here and returns `None`:
/// the caller returns at once (the test is skipped, and says so).
pub(crate) fn start_or_skip(test: &str) -> Option<PgServer> {
    match tokio::task::block_in_place(PgServer::start) {
        Ok(server) => Some(server),
        Err(why) => {
            eprintln!("SKIPPED {test}: no PostgreSQL server could be started here: {why}");
            println!("SKIPPED {test}: no PostgreSQL server could be started here: {why}");
            None
        }
    }
}

impl PgServer {
    /// Initialises a cluster in a temporary folder and starts its server.
    pub(crate) fn start() -> Result<PgServer, String> {
        let bin = bin_dir()?;
        let dir = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
        let user = unprivileged_user()?;
        if let Some((uid, gid)) = user.ids {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).map_err(|e| format!("chown: {e}"))?;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
                .map_err(|e| format!("chmod: {e}"))?;
        }
        let data = dir.path().join("data");
        let init = user
            .command(&bin.join("initdb"))
            .args(["-D", &data.to_string_lossy(), "-U", "ecp", "--auth=trust", "-E", "UTF8", "--no-locale"])
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run initdb: {e}"))?;
        if !init.status.success() {
            return Err(format!("initdb failed: {}", String::from_utf8_lossy(&init.stderr).trim()));
        }
        let port = free_port()?;
        let log =
            std::fs::File::create(dir.path().join("server.log")).map_err(|e| format!("log file: {e}"))?;
        if let Some((uid, gid)) = user.ids {
            std::os::unix::fs::chown(dir.path().join("server.log"), Some(uid), Some(gid))
                .map_err(|e| format!("chown: {e}"))?;
        }
        let child = user
            .command(&bin.join("postgres"))
            .args(["-D", &data.to_string_lossy(), "-p", &port.to_string(), "-h", "127.0.0.1"])
            .args(["-k", &dir.path().to_string_lossy(), "-c", "fsync=off", "-c", "max_connections=200"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start postgres: {e}"))?;
        let mut server = PgServer { dir, child, port };
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match postgres::Client::connect(&self.url("postgres"), postgres::NoTls) {
                Ok(_) => return Ok(()),
                Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
                Err(e) => {
                    let log = std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
                    return Err(format!(
                        "the server did not accept connections within 30 s: {e}; its log: {log}"
                    ));
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                let log = std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
                return Err(format!("the server exited ({status}); its log: {log}"));
            }
        }
    }

    /// The URL of database `db` on this server.
    pub(crate) fn url(&self, db: &str) -> String {
        format!("postgres://ecp@127.0.0.1:{}/{db}", self.port)
    }

    /// Creates a fresh database named `db`; its URL.
    pub(crate) fn database(&self, db: &str) -> String {
        self.with("postgres", |admin| {
            admin.batch_execute(&format!("CREATE DATABASE {db}")).expect("a new database")
        });
        self.url(db)
    }

    /// Runs `f` on a connection to database `db` (to look at what the hub
    /// wrote), off the async threads.
    pub(crate) fn with<T>(&self, db: &str, f: impl FnOnce(&mut postgres::Client) -> T) -> T {
        tokio::task::block_in_place(|| {
            let mut client = postgres::Client::connect(&self.url(db), postgres::NoTls).expect("connects");
            f(&mut client)
        })
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // SIGINT: the server's fast shutdown (its children end with it).
        let _ = Command::new("kill").args(["-INT", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The folder of `initdb` and `postgres`: `ECP_PG_BIN`, else the newest
/// version under `/usr/lib/postgresql` (Debian's layout).
fn bin_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("ECP_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|_| {
            "PostgreSQL is not installed (no /usr/lib/postgresql; apt-get install postgresql)".to_owned()
        })?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).ok_or_else(|| "no initdb under /usr/lib/postgresql/*/bin".to_owned())
}

/// Who runs the server: this process's user, or as root an unprivileged one.
struct User {
    /// `Some((uid, gid))` as root: the user the server runs as.
    ids: Option<(u32, u32)>,
}

impl User {
    fn command(&self, program: &Path) -> Command {
        match self.ids {
            None => Command::new(program),
            Some((uid, gid)) => {
                let mut command = Command::new("setpriv");
                command
                    .arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={gid}"))
                    .arg("--clear-groups")
                    .arg(program);
                command
            }
        }
    }
}

fn unprivileged_user() -> Result<User, String> {
    let uid = id(&["-u"])?;
    if uid != 0 {
        return Ok(User { ids: None });
    }
    for name in ["postgres", "nobody"] {
        if let (Ok(uid), Ok(gid)) = (id(&["-u", name]), id(&["-g", name])) {
            return Ok(User { ids: Some((uid, gid)) });
        }
    }
    Err("running as root, and neither a postgres nor a nobody user exists to run the server as".to_owned())
}

fn id(args: &[&str]) -> Result<u32, String> {
    let out = Command::new("id").args(args).output().map_err(|e| format!("cannot run id: {e}"))?;
    String::from_utf8_lossy(&out.stdout).trim().parse().map_err(|_| format!("id {args:?} failed"))
}

fn free_port() -> Result<u16, String> {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    Ok(socket.local_addr().map_err(|e| e.to_string())?.port())
}
