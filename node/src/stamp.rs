//! What a received skill's file in the skills folder tells the agent about
//! where it came from: `ecp-origin` (its `originInstance`),
//! `ecp-origin-status` (`verified`: signed by the origin's key, `SPEC.md`
//! §13; `claimed`: the sender's word only), `ecp-confidence`
//! (the confidence this node holds it at) and `ecp-node` (this node's
//! instance id: the node that wrote the file and holds the skill), in the
//! `metadata` map of the frontmatter — the Agent Skills place for keys a
//! client does not know, which agents pass over.
//!
//! Only the file is stamped. The store keeps the body and its integrityHash
//! exactly as received and serves them unchanged; the projection records the
//! hash of what it wrote, stamp included, so the importer knows the file as
//! the node's and an agent's edit as an edit.
//!
//! The stamp is merged into a `metadata` map the skill already has (block or
//! one-line flow style), replacing only earlier `ecp-*` stamp keys — a
//! sender cannot make a file claim another origin. Every stamped text is
//! checked before it is used: the frontmatter still parses under the
//! protocol's bounded reader with the same name and description, and read
//! as YAML it holds the same keys and values as before plus the stamp.
//! Where that does not hold (no frontmatter, a `metadata` that is not a map,
//! a layout this module does not edit) the file is written as received.

use ecp_protocol::skill_doc;
use yaml_rust2::{Yaml, YamlLoader};

/// The key naming the skill's origin instance.
pub const ORIGIN_KEY: &str = "ecp-origin";
/// The key saying whether the origin is verified by its signature or claimed.
pub const ORIGIN_STATUS_KEY: &str = "ecp-origin-status";
/// The key holding the confidence the node holds the skill at.
pub const CONFIDENCE_KEY: &str = "ecp-confidence";
/// The key naming the node that wrote the file.
pub const NODE_KEY: &str = "ecp-node";
pub(crate) const KEYS: [&str; 4] = [ORIGIN_KEY, ORIGIN_STATUS_KEY, CONFIDENCE_KEY, NODE_KEY];

/// What a received skill's file says about it.
#[derive(Debug, Clone, Copy)]
pub struct Stamp<'a> {
    /// Its `originInstance`.
    pub origin: &'a str,
    /// Whether its origin signed it (`SPEC.md` §13): "verified", else "claimed".
    pub origin_signed: bool,
    /// Its stored confidence.
    pub confidence: f64,
    /// This node's instance id.
    pub node: &'a str,
}

impl Stamp<'_> {
    /// The stamp's entries as YAML `key: value` texts, in key order.
    fn entries(&self) -> [(&'static str, String); 4] {
        [
            (ORIGIN_KEY, quoted(self.origin)),
            (ORIGIN_STATUS_KEY, quoted(if self.origin_signed { "verified" } else { "claimed" })),
            (CONFIDENCE_KEY, confidence_text(self.confidence)),
            (NODE_KEY, quoted(self.node)),
        ]
    }
}

/// A string as a YAML double-quoted scalar (a JSON string is one).
fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string encodes as JSON")
}

/// A confidence with at most three decimals, without trailing zeros.
fn confidence_text(confidence: f64) -> String {
    let c = if confidence.is_finite() { confidence.clamp(0.0, 1.0) } else { 0.0 };
    let text = format!("{c:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// `body` with `stamp` in its frontmatter's `metadata` map, or `None` when
/// it cannot be stamped without risk (see the module doc).
pub fn stamp(body: &str, stamp: &Stamp<'_>) -> Option<String> {
    let before = skill_doc::parse(body).ok()?.frontmatter?;
    let (lines, close) = frontmatter_lines(body)?;
    let eol = if lines[0].ends_with("\r\n") { "\r\n" } else { "\n" };
    let stamped_frontmatter = merge(&lines[1..close], stamp, eol)?;
    let mut out = String::with_capacity(body.len() + 128);
    out.push_str(lines[0]);
    out.push_str(&stamped_frontmatter);
    for line in &lines[close..] {
        out.push_str(line);
    }
    // The check: same document to the protocol, same YAML plus the stamp.
    let after = skill_doc::parse(&out).ok()?.frontmatter?;
    if after.name != before.name || after.description != before.description {
        return None;
    }
    let original: String = lines[1..close].concat();
    same_but_stamp(&original, &stamped_frontmatter, stamp).then_some(out)
}

/// `body`'s lines (ends kept) and the index of the frontmatter's closing
/// fence, when it opens with one; the frontmatter is `lines[1..close]`.
pub(crate) fn frontmatter_lines(body: &str) -> Option<(Vec<&str>, usize)> {
    let lines: Vec<&str> = body.split_inclusive('\n').collect();
    let fence = |line: &str| line.trim_end_matches([' ', '\t', '\r', '\n']).to_owned();
    if lines.first().map(|l| fence(l)).as_deref() != Some("---") {
        return None;
    }
    let close = 1 + lines[1..].iter().position(|l| matches!(fence(l).as_str(), "---" | "..."))?;
    Some((lines, close))
}

/// The frontmatter lines (between the fences) with the stamp merged in.
fn merge(lines: &[&str], stamp: &Stamp<'_>, eol: &str) -> Option<String> {
    let at = |line: &&str| line.starts_with("metadata:");
    let mut found = lines.iter().enumerate().filter(|(_, l)| at(l)).map(|(i, _)| i);
    let Some(m) = found.next() else {
        // No map yet: one at the end of the frontmatter.
        let mut out: String = lines.concat();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(eol);
        }
        out.push_str("metadata:");
        out.push_str(eol);
        out.push_str(&block_entries(stamp, "  ", eol));
        return Some(out);
    };
    if found.next().is_some() {
        return None;
    }
    let rest = lines[m]["metadata:".len()..].trim();
    let mut out: String = lines[..m].concat();
    if rest.is_empty() || rest.starts_with('#') {
        // A block map: the stamp joins its entries, at their indentation.
        let end = m
            + 1
            + lines[m + 1..].iter().take_while(|l| l.trim().is_empty() || l.starts_with([' ', '\t'])).count();
        let children = &lines[m + 1..end];
        let indent: String = children
            .iter()
            .find(|l| !l.trim().is_empty())
            .map_or("  ".to_owned(), |l| l.chars().take_while(|c| *c == ' ').collect());
        if indent.is_empty() {
            return None;
        }
        let ours = |line: &&&str| {
            line.strip_prefix(indent.as_str()).is_some_and(|rest| {
                KEYS.iter().any(|k| rest.strip_prefix(k).is_some_and(|r| r.starts_with(':')))
            })
        };
        let kept: Vec<&str> = children.iter().filter(|l| !ours(l)).copied().collect();
        // After the last entry, before trailing blank lines.
        let last = kept.iter().rposition(|l| !l.trim().is_empty()).map_or(0, |i| i + 1);
        out.push_str(lines[m]);
        out.push_str(&kept[..last].concat());
        if out.ends_with(|c| c != '\n') {
            out.push_str(eol);
        }
        out.push_str(&block_entries(stamp, &indent, eol));
        out.push_str(&kept[last..].concat());
        out.push_str(&lines[end..].concat());
        return Some(out);
    }
    let line_end = &lines[m][lines[m].trim_end_matches(['\r', '\n']).len()..];
    if matches!(rest, "null" | "~" | "{}") {
        out.push_str("metadata:");
        out.push_str(eol);
        out.push_str(&block_entries(stamp, "  ", eol));
    } else if let Some(inner) = rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        // A one-line flow map: the stamp goes before its closing brace.
        if KEYS.iter().any(|k| inner.contains(k)) || inner.contains(['{', '}', '#']) {
            return None;
        }
        let entries: Vec<String> = stamp.entries().iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let inner = inner.trim();
        let sep = if inner.is_empty() { "" } else { ", " };
        out.push_str(&format!("metadata: {{{inner}{sep}{}}}", entries.join(", ")));
        out.push_str(if line_end.is_empty() { eol } else { line_end });
    } else {
        return None;
    }
    out.push_str(&lines[m + 1..].concat());
    Some(out)
}

fn block_entries(stamp: &Stamp<'_>, indent: &str, eol: &str) -> String {
    stamp.entries().iter().map(|(k, v)| format!("{indent}{k}: {v}{eol}")).collect()
}

/// Whether `stamped` reads as `original` with exactly the stamp's entries
/// in its `metadata` map (earlier stamp entries replaced).
fn same_but_stamp(original: &str, stamped: &str, stamp: &Stamp<'_>) -> bool {
    let (Some(Yaml::Hash(before)), Some(Yaml::Hash(mut after))) = (single(original), single(stamped)) else {
        return false;
    };
    let key = Yaml::String("metadata".into());
    let Some(Yaml::Hash(mut meta)) = after.remove(&key) else { return false };
    // The stamp's entries read as one map: one YAML parse, not one per entry.
    let Some(Yaml::Hash(entries)) = single(&block_entries(stamp, "", "\n")) else { return false };
    if entries.len() != KEYS.len() {
        return false;
    }
    for (k, v) in entries {
        if meta.remove(&k).as_ref() != Some(&v) {
            return false;
        }
    }
    let mut before = before;
    let old_meta = match before.remove(&key) {
        None | Some(Yaml::Null) => Default::default(),
        Some(Yaml::Hash(mut h)) => {
            for k in KEYS {
                h.remove(&Yaml::String(k.into()));
            }
            h
        }
        Some(_) => return false,
    };
    before == after && old_meta == meta
}

/// The one YAML document of `text`.
fn single(text: &str) -> Option<Yaml> {
    let mut docs = YamlLoader::load_from_str(text).ok()?;
    (docs.len() == 1).then(|| docs.remove(0))
}

#[cfg(test)]
mod tests;
