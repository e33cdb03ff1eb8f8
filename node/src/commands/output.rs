//! What the commands print, and how: standard output that tolerates a closed
//! pipe (`ecp-node skill list | head`), standard error that tolerates
//! anything (a node keeps serving when its log cannot be written), aligned tables, pretty JSON, and
//! text from peers with its control characters shown escaped — a skill
//! body or a quarantine reason must not drive the terminal.

use std::borrow::Cow;
use std::io::Write;

use anyhow::Context;
use serde::Serialize;

/// Writes `text` to standard output. A reader that went away (a closed pipe)
/// is not an error: there is no one left to tell.
pub(crate) fn emit(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to standard output")
        }
        _ => Ok(()),
    }
}

/// Writes one line to standard error. A log that cannot be written (a full
/// disk, a closed descriptor) must not stop the command, so errors are dropped.
pub(crate) fn tell(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Prints `value` as pretty JSON.
pub(crate) fn emit_json(value: &impl Serialize) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value).context("cannot encode the output as JSON")?;
    text.push('\n');
    emit(&text)
}

/// `text` with control characters other than line feeds and tabs escaped.
pub(crate) fn printable(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t')
}

/// `text` on one line: every control character escaped, line breaks included.
pub(crate) fn one_line(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

fn escape(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && !keep(c)) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| if c.is_control() && !keep(c) { c.escape_default().to_string() } else { c.to_string() })
            .collect(),
    )
}

/// Where a received packet has been: its origin, each hop, the sender, and
/// the confidence its origin gave it.
pub(crate) fn provenance(packet: &ecp_protocol::SkillPacket) -> String {
    let Some(p) = &packet.provenance else {
        return format!("{} (no provenance recorded)", one_line(&packet.origin_instance));
    };
    let path: Vec<Cow<'_, str>> = p.path.iter().map(|hop| one_line(hop)).collect();
    let origin_confidence = p.origin_confidence.map_or_else(|| "unknown".to_owned(), |c| format!("{c:.2}"));
    format!(
        "{} ({}, received from {}; origin confidence {origin_confidence})",
        path.join(" -> "),
        counted(p.hops, "hop"),
        one_line(&p.received_from)
    )
}

/// A skill body, whole, between rules, its control characters escaped.
pub(crate) fn body_block(body: &str) -> String {
    let mut out = format!("body ({} bytes):\n-----\n{}", body.len(), printable(body));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("-----\n");
    out
}

/// `1 hop`, `2 hops`: a count with its noun, singular for one.
pub(crate) fn counted<N: std::fmt::Display + PartialEq + From<u8>>(n: N, noun: &str) -> String {
    if n == N::from(1) { format!("{n} {noun}") } else { format!("{n} {noun}s") }
}

/// A table printed with aligned columns.
pub(crate) struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles.
    pub(crate) fn new(header: &[&'static str]) -> Self {
        Table { header: header.to_vec(), rows: Vec::new() }
    }

    /// Adds a row; cells are made single-line.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells.iter().map(|c| one_line(c).into_owned()).collect());
    }

    /// The table, each line prefixed with `indent`.
    pub(crate) fn render(&self, indent: &str) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let header: Vec<String> = self.header.iter().map(|h| (*h).to_owned()).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = indent.to_owned();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    let pad = widths[i].saturating_sub(cell.chars().count()) + 2;
                    line.push_str(cell);
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// A stored RFC 3339 time, to the second (`2026-11-20 10:00:00Z`); shown as
/// stored when it does not parse.
pub(crate) fn time(text: &str) -> String {
    match ecp_protocol::Timestamp::parse(text) {
        Ok(t) => t.as_datetime().format("%Y-%m-%d %H:%M:%SZ").to_string(),
        Err(_) => text.to_owned(),
    }
}

/// The JSON name of a unit enum value (`high`, `destructive-shell`).
pub(crate) fn label(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::from("?"),
    }
}

/// `yes` or `no`.
pub(crate) fn yes_no(flag: bool) -> &'static str {
    if flag { "yes" } else { "no" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns_and_keep_cells_on_one_line() {
        let mut t = Table::new(&["NAME", "KIND"]);
        t.row(vec!["a-long-name".into(), "local".into()]);
        t.row(vec!["b\nc".into(), "external".into()]);
        assert_eq!(t.render(""), "NAME         KIND\na-long-name  local\nb\\nc         external\n");
    }

    #[test]
    fn counts_say_one_thing_in_the_singular() {
        assert_eq!(counted(0u32, "hop"), "0 hops");
        assert_eq!(counted(1u32, "hop"), "1 hop");
        assert_eq!(counted(2usize, "own key"), "2 own keys");
    }

    #[test]
    fn escapes_terminal_control_characters() {
        assert_eq!(printable("ok\n\tline"), "ok\n\tline");
        assert_eq!(printable("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(one_line("a\nb"), "a\\nb");
    }
}
