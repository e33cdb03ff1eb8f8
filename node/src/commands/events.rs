//! `ecp-node events --follow [--json]`: the decisions of the server running
//! on the data folder, as it commits them — its `GET /v1/events` stream of
//! server-sent events, each printed as `audit` prints an entry. A server
//! that drops this client for falling behind says so; the command then
//! fails with its note.

use std::process::ExitCode;

use anyhow::{Context, bail};
use ecp_node::config::Flags;
use ecp_node::store::AuditEntry;

use super::output::tell;
use crate::cli::{EventsArgs, GlobalArgs};

/// Longest event the CLI buffers: an audit entry is far smaller (a reason
/// names a skill and a finding), so more is a broken or hostile stream.
const MAX_EVENT_BYTES: usize = 1024 * 1024;

pub(crate) fn run(global: &GlobalArgs, args: &EventsArgs) -> anyhow::Result<ExitCode> {
    if !args.follow {
        bail!(
            "events streams what the running server decides from now on: pass --follow (what happened before is \
             in the audit log: `ecp-node audit`)"
        );
    }
    let config = super::resolve(global, Flags::default())?;
    let Some(server) = super::api::running(&config)? else {
        bail!(
            "no server runs on the data folder {}: start one with `ecp-node serve`, or follow the audit log \
             without one: `ecp-node audit --follow`",
            config.data_dir.display()
        );
    };
    let mut stream = SseBuffer::default();
    let mut dropped = None;
    let followed = server.stream(&["v1", "events"], |chunk| {
        for event in stream.push(chunk)? {
            match event.kind.as_str() {
                "audit" => {
                    let entry: AuditEntry = serde_json::from_str(&event.data)
                        .context("the server sent an event this CLI cannot read")?;
                    super::audit::print(&entry, args.json)?;
                }
                "dropped" => {
                    dropped = Some(event.data);
                    return Ok(false);
                }
                _ => {}
            }
        }
        Ok(true)
    })?;
    followed.map_err(anyhow::Error::new)?;
    if let Some(note) = dropped {
        let message = serde_json::from_str::<serde_json::Value>(&note)
            .ok()
            .and_then(|v| v["message"].as_str().map(str::to_owned))
            .unwrap_or(note);
        bail!("the server stopped sending events to this client: {message}");
    }
    tell(format_args!("ecp-node: the server ended the event stream (it is stopping)"));
    Ok(ExitCode::SUCCESS)
}

/// One server-sent event: its type and its data lines joined.
#[derive(Debug, PartialEq)]
struct SseEvent {
    kind: String,
    data: String,
}

/// Bytes of a server-sent event stream, cut into events as they complete.
#[derive(Debug, Default)]
struct SseBuffer {
    pending: Vec<u8>,
}

impl SseBuffer {
    /// Takes `chunk`; returns the events it completed.
    fn push(&mut self, chunk: &[u8]) -> anyhow::Result<Vec<SseEvent>> {
        self.pending.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(end) = self.pending.windows(2).position(|w| w == b"\n\n") {
            let block: Vec<u8> = self.pending.drain(..end + 2).collect();
            let text = String::from_utf8_lossy(&block);
            let mut event = SseEvent { kind: "message".into(), data: String::new() };
            let mut has_data = false;
            for line in text.lines() {
                if let Some(kind) = line.strip_prefix("event:") {
                    event.kind = kind.trim_start().to_owned();
                } else if let Some(data) = line.strip_prefix("data:") {
                    if has_data {
                        event.data.push('\n');
                    }
                    event.data.push_str(data.strip_prefix(' ').unwrap_or(data));
                    has_data = true;
                }
            }
            // A block of comments only (keep-alive) is no event.
            if has_data {
                events.push(event);
            }
        }
        if self.pending.len() > MAX_EVENT_BYTES {
            bail!(
                "the server sent an event over {MAX_EVENT_BYTES} bytes; this is not an ecp-node event stream"
            );
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_cut_where_they_end_whatever_the_chunks_and_comments_are_skipped() {
        let mut buffer = SseBuffer::default();
        assert_eq!(buffer.push(b":\n\nevent: audit\nid: 3\ndata: {\"a\"").unwrap(), vec![]);
        let events = buffer.push(b":1}\n\nevent: dropped\ndata: x\ndata: y\n\n").unwrap();
        assert_eq!(
            events,
            vec![
                SseEvent { kind: "audit".into(), data: "{\"a\":1}".into() },
                SseEvent { kind: "dropped".into(), data: "x\ny".into() },
            ]
        );
    }

    #[test]
    fn an_event_past_the_limit_is_refused_and_one_at_it_is_not() {
        let mut buffer = SseBuffer::default();
        assert!(buffer.push(&vec![b'a'; MAX_EVENT_BYTES]).is_ok());
        assert!(buffer.push(b"a").is_err());
    }
}
