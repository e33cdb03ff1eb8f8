//! The hub's connections to PostgreSQL: the pools a replica holds (one
//! for reads, one for pushes), how one connection is opened with its
//! session limits, and what a database error means — whether it is the
//! server's fault or ours, and what the operator should do next.

use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use postgres::{Client, NoTls};

use super::super::StoreError;

/// A fixed set of connections, each behind a mutex; a broken one is
/// replaced when next taken.
pub(super) struct Pool {
    pub(super) config: postgres::Config,
    conns: Vec<Mutex<Client>>,
    next: AtomicUsize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The configuration may hold a password: never printed.
        f.debug_struct("Pool").field("conns", &self.conns.len()).finish()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // The `postgres` client runs a runtime of its own to close a
        // connection, which panics on an async thread — where the last
        // holder of a store (a server's state) is often dropped.
        let conns = std::mem::take(&mut self.conns);
        let _ = std::thread::Builder::new().name("ecp-hub-close".into()).spawn(move || drop(conns));
    }
}

impl Pool {
    /// `size` connections (at least 1) to `config`, `open` among them.
    pub(super) fn open(
        config: &postgres::Config,
        size: usize,
        open: Vec<Client>,
    ) -> Result<Pool, StoreError> {
        let mut conns: Vec<Mutex<Client>> = open.into_iter().map(Mutex::new).collect();
        while conns.len() < size.max(1) {
            conns.push(Mutex::new(connect(config)?));
        }
        Ok(Pool { config: config.clone(), conns, next: AtomicUsize::new(0) })
    }

    pub(super) fn get(&self) -> Result<MutexGuard<'_, Client>, StoreError> {
        let n = self.conns.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let free = (0..n).find_map(|i| self.conns[(start + i) % n].try_lock().ok());
        let mut conn = match free {
            Some(conn) => conn,
            // A panic cannot leave a connection mid-transaction: a dropped
            // `Transaction` rolls back. A poisoned lock is still usable.
            None => self.conns[start % n].lock().unwrap_or_else(|p| p.into_inner()),
        };
        if conn.is_closed() {
            *conn = connect(&self.config)?;
        }
        Ok(conn)
    }
}

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Limits every session runs under (review H2): a lock waited for (the
/// sequence number's row, held by a push) and a statement are given up
/// after a while, answered 503 to retry, and a transaction left idle by a
/// replica cut off mid-push is ended by the server, its locks released.
const SESSION_LIMITS: &str = "SET lock_timeout = '10s'; SET statement_timeout = '60s';
     SET idle_in_transaction_session_timeout = '30s'";

pub(super) fn connect(config: &postgres::Config) -> Result<Client, StoreError> {
    let mut config = config.clone();
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    let mut client = config.connect(NoTls)?;
    client.batch_execute(SESSION_LIMITS)?;
    Ok(client)
}

/// What a PostgreSQL error means for the request that met it, by its
/// SQLSTATE (review H8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The connection failed, or the server gave up on the statement for
    /// now (a lock or statement timeout, a serialization failure, a
    /// shutdown, no resources): the same request may be sent again.
    Retry,
    /// Class 22, a data exception: the database refused a value the
    /// request carried (the request's own; its message may be shown).
    Input,
    /// Anything else (class 23, a constraint the hub's writes should never
    /// break, or a missing table or privilege): the hub's fault, not the client's.
    Internal,
}

/// The [`Fault`] of `e`.
pub fn fault(e: &postgres::Error) -> Fault {
    let Some(code) = e.code() else {
        // No SQLSTATE: either the connection itself (refused, closed, timed
        // out), which a retry may get past, or the client library refusing
        // what the hub's own code asked of it, which no retry changes.
        return if is_client_side(e) { Fault::Internal } else { Fault::Retry };
    };
    match &code.code()[..2] {
        "22" => Fault::Input,
        // Connection exception, insufficient resources, operator
        // intervention (shutdown, statement timeout), transaction rollback
        // (serialization failure, deadlock), lock not available.
        "08" | "53" | "57" | "40" => Fault::Retry,
        _ if code.code() == "55P03" => Fault::Retry,
        _ => Fault::Internal,
    }
}

/// How the `postgres` crate words the errors it raises itself, before or
/// after talking to the server, when the hub's code asked for something
/// impossible: a parameter or column of the wrong type, a column or a
/// parameter count the statement does not have, a row count `query_one`
/// did not get. The crate keeps its error kinds private; its wording is
/// pinned by `Cargo.lock`, and `hub_fault.rs` checks each against a real
/// server, so an upgrade that rewords one fails a test rather than turning
/// a bug into "retry" (503) again.
const CLIENT_SIDE: [&str; 6] = [
    "error serializing parameter",
    "error deserializing column",
    "invalid column",
    "query returned an unexpected number of",
    "error encoding message to server",
    "expected ",
];

/// Whether `e`, which carries no SQLSTATE, is one of [`CLIENT_SIDE`]'s.
fn is_client_side(e: &postgres::Error) -> bool {
    let text = e.to_string();
    CLIENT_SIDE.iter().any(|start| text.starts_with(start))
}

/// What an operator should do about `e`, met at start, when it is
/// PostgreSQL's (the other errors of a start say it themselves).
pub fn next_step(e: &StoreError) -> Option<&'static str> {
    let StoreError::Postgres(e) = e else { return None };
    let Some(code) = e.code() else {
        return Some(
            "check the host and port in --store (ECP_STORE) and that PostgreSQL runs and accepts connections \
             from here",
        );
    };
    Some(match code.code() {
        "28P01" | "28000" => "check the user and password in --store (ECP_STORE) and pg_hba.conf",
        "3D000" => "create the database first (createdb, or CREATE DATABASE) or name an existing one",
        "42501" => {
            "grant the user CREATE on the database's public schema (the hub creates its tables on start)"
        }
        "53300" => "the server has no connection left: raise max_connections or run fewer replicas",
        _ => "see PostgreSQL's log for the cause",
    })
}

/// `url` as a connection configuration (`postgres://user:password@host:port/db`,
/// or key=value pairs); the error names the problem, never the password.
pub fn parse_url(url: &str) -> Result<postgres::Config, StoreError> {
    postgres::Config::from_str(url).map_err(|e| StoreError::BadStoreUrl(e.to_string()))
}
