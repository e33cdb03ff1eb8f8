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
//! as YAML it holds the same keys and values as before plus the stamp. The
//! plain frontmatter almost every skill has (one `key: value` line after
//! the other) is known without reading it as YAML: the stamp is appended
//! to it, and what that text reads as follows from its form (`appended`;
//! a test holds it to the checked path's answer): three YAML reads a file
//! fewer, a tenth of a pull's CPU. Where that does not hold (no
//! frontmatter, a `metadata` that is not a map, a layout this module does
//! not edit) the file is written as received.

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
    // The frontmatter's lines alone: the plain path never looks past its
    // closing fence, and splitting a whole body into lines, file after
    // file, was a third of the stamp's cost in a pull.
    let (head, close) = frontmatter_head(body)?;
    let eol = if head[0].ends_with("\r\n") { "\r\n" } else { "\n" };
    if let Some(out) = appended(body, &head, close, eol, stamp) {
        return Some(out);
    }
    let (lines, close) = frontmatter_lines(body)?;
    checked(&lines, close, eol, &before, stamp)
}

/// [`stamp`] of a frontmatter in the plain form almost every skill has
/// ([`skill_doc::plain_keys`]: one `key: value` line after the other, no
/// key repeated, `metadata` not among them), whose YAML is known without
/// parsing it: the stamp's map is appended after its last line, and the
/// result reads as the same keys and values plus `metadata` holding
/// exactly the stamp's entries — given that those, alone, read as the stamp's four entries
/// ([`entries_read_back`]) and are printable ASCII (no character that a
/// YAML 1.1 reader takes for a line break). The protocol's reader then
/// finds the same name and description (the block stays within its
/// bound, [`skill_doc::MAX_FRONTMATTER_BYTES`], and `metadata` is no key
/// it reads). The text is [`merge`]'s for such a frontmatter, byte for
/// byte (a test holds the two paths together); `None`: another form, for
/// the checked path.
fn appended(body: &str, lines: &[&str], close: usize, eol: &str, stamp: &Stamp<'_>) -> Option<String> {
    if eol != "\n" {
        return None;
    }
    let start = lines[0].len();
    let yaml_len: usize = lines[1..close].iter().map(|l| l.len()).sum();
    let original = &body[start..start + yaml_len];
    // Keys as YAML compares them, or stricter: `null`, `Null` and `NULL`
    // are one key (as are the spellings of true and false), and a repeated
    // key is an error to the YAML reader of the checked path.
    let mut keys: Vec<String> =
        skill_doc::plain_keys(original)?.into_iter().map(str::to_ascii_lowercase).collect();
    keys.push("metadata".to_owned());
    keys.sort_unstable();
    if keys.windows(2).any(|pair| pair[0] == pair[1]) {
        return None;
    }
    appendable_entries(stamp, |entries| {
        let added = "metadata:\n".len() + entries?.len();
        if yaml_len + added > skill_doc::MAX_FRONTMATTER_BYTES {
            return None;
        }
        let mut out = String::with_capacity(body.len() + added);
        out.push_str(&body[..start + yaml_len]);
        out.push_str("metadata:\n");
        out.push_str(entries?);
        out.push_str(&body[start + yaml_len..]);
        Some(out)
    })
}

/// Calls `f` with the stamp's entries at the map's indentation (two
/// spaces, as [`merge`] writes them) when they may be appended as they are:
/// printable ASCII (no character a YAML 1.1 reader takes for a line break)
/// and read back alone as the stamp's four entries ([`entries_read_back`]);
/// `None` otherwise. Built once per stamp and kept per thread: a pull
/// stamps thousands of files with one origin, confidence and node, and
/// building the same quoted strings for each was 1.4 % of its CPU.
fn appendable_entries<R>(stamp: &Stamp<'_>, f: impl FnOnce(Option<&str>) -> R) -> R {
    struct Built {
        origin: String,
        origin_signed: bool,
        confidence: u64,
        node: String,
        entries: Option<String>,
    }
    thread_local! {
        static LAST: std::cell::RefCell<Option<Built>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        let same = last.as_ref().is_some_and(|b| {
            b.origin == stamp.origin
                && b.origin_signed == stamp.origin_signed
                && b.confidence == stamp.confidence.to_bits()
                && b.node == stamp.node
        });
        if !same {
            let unindented = block_entries(stamp, "", "\n");
            let printable = unindented.bytes().all(|b| b == b'\n' || (0x20..0x7f).contains(&b));
            let entries =
                (printable && entries_read_back(&unindented)).then(|| block_entries(stamp, "  ", "\n"));
            *last = Some(Built {
                origin: stamp.origin.to_owned(),
                origin_signed: stamp.origin_signed,
                confidence: stamp.confidence.to_bits(),
                node: stamp.node.to_owned(),
                entries,
            });
        }
        f(last.as_ref().and_then(|b| b.entries.as_deref()))
    })
}

/// [`stamp`] of any other frontmatter, checked after the edit: the
/// protocol's reader finds the same name and description, and read as YAML
/// it holds the same keys and values plus the stamp ([`same_but_stamp`]).
fn checked(
    lines: &[&str],
    close: usize,
    eol: &str,
    before: &skill_doc::Frontmatter,
    stamp: &Stamp<'_>,
) -> Option<String> {
    let stamped_frontmatter = merge(&lines[1..close], stamp, eol)?;
    let mut out = String::with_capacity(lines.iter().map(|l| l.len()).sum::<usize>() + 128);
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
    let (mut lines, close) = frontmatter_head(body)?;
    let head: usize = lines.iter().map(|l| l.len()).sum();
    lines.extend(body[head..].split_inclusive('\n'));
    Some((lines, close))
}

/// [`frontmatter_lines`] up to the closing fence (excluded): the opening
/// fence and the frontmatter's lines, and the closing fence's index.
fn frontmatter_head(body: &str) -> Option<(Vec<&str>, usize)> {
    fn fence(line: &str) -> &str {
        line.trim_end_matches([' ', '\t', '\r', '\n'])
    }
    let mut lines = body.split_inclusive('\n');
    let first = lines.next()?;
    if fence(first) != "---" {
        return None;
    }
    let mut head = vec![first];
    for line in lines {
        if matches!(fence(line), "---" | "...") {
            let close = head.len();
            return Some((head, close));
        }
        head.push(line);
    }
    None
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

/// Whether the stamp's entries (`text`: [`block_entries`] unindented),
/// alone, read as YAML as a map of its four keys (asked once per stamp,
/// [`appendable_entries`]).
fn entries_read_back(text: &str) -> bool {
    matches!(single(text), Some(Yaml::Hash(map)) if map.len() == KEYS.len()
        && KEYS.iter().all(|k| map.contains_key(&Yaml::String((*k).into()))))
}

/// The one YAML document of `text`.
fn single(text: &str) -> Option<Yaml> {
    let mut docs = YamlLoader::load_from_str(text).ok()?;
    (docs.len() == 1).then(|| docs.remove(0))
}

#[cfg(test)]
mod tests;
