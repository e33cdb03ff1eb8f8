//! The log on standard error: its format (`--log-format text|json`,
//! `ECP_LOG_FORMAT`, `[log] format`), its colours (only on a terminal, never
//! with `NO_COLOR`) and the default filter (`RUST_LOG` replaces it).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// What is logged without `RUST_LOG`: the node's INFO lines, not its
/// dependencies' chatter — the cron scheduler logs every job it creates,
/// and notify's inotify backend says at INFO that it cannot remove the
/// watch of every folder deleted, and the MCP SDK logs every session's
/// start with the client's whole request, at every `/mcp` call
/// (`RUST_LOG=debug` shows them).
const DEFAULT_FILTER: &str = "info,tokio_cron_scheduler=warn,notify::inotify=warn,rmcp=warn";

/// Whether log lines are written for people or for collectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// One line per event, `key=value` fields.
    Text,
    /// One JSON object per line, the event's fields at its top level.
    Json,
}

impl Format {
    /// The format a resolved `log.format` names (`text` when unset or unknown).
    pub(crate) fn named(name: Option<&str>) -> Format {
        if name == Some("json") { Format::Json } else { Format::Text }
    }
}

/// Installs the log for the whole process.
pub(crate) fn init(format: Format) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // A log that cannot be written (a full disk, a closed stderr) must not
        // stop the node: tracing's fallback would report it with eprintln!,
        // which panics when stderr fails.
        .log_internal_errors(false);
    match format {
        Format::Text => builder.with_ansi(colours()).init(),
        Format::Json => {
            builder.json().flatten_event(true).with_current_span(false).with_span_list(false).init()
        }
    }
}

/// Whether text lines may be coloured: stderr is a terminal and `NO_COLOR`
/// (<https://no-color.org>) is unset or empty.
fn colours() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
