//! Editing the text of a peers file for `ecp-node peers add` and
//! `peers rm`: a `[[peer]]` table appended, or one cut out, every other
//! line — comments, other peers, `[federation]` — left as it was.
//!
//! Line-based on purpose: a TOML rewrite would drop the file's comments,
//! which document the keys. The caller checks the result with
//! [`PeersConfig::parse`](super::PeersConfig::parse) before writing it.

use super::normalise_url;

/// `text` with a `[[peer]]` for `url` (normalised) appended, with `trust`
/// and `push = true` when given.
pub fn add_peer(text: &str, url: &str, trust: Option<f64>, push: bool) -> String {
    let mut out = text.to_owned();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    // The URL went through `normalise_url`: no quote or backslash to escape,
    // but a TOML basic string is made anyway, so that nothing can break out.
    out.push_str(&format!("[[peer]]\nurl = {}\n", toml_string(url)));
    if let Some(trust) = trust {
        out.push_str(&format!("trust = {trust}\n"));
    }
    if push {
        out.push_str("push = true\n");
    }
    out
}

/// `text` without the `[[peer]]` table whose `url` normalises to `url`;
/// `None` when no `[[peer]]` table names it. Comment lines outside the
/// table's keys stay (those above a table may describe all of them).
pub fn remove_peer(text: &str, url: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let headers: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].trim_start().starts_with('[')).collect();
    for (n, &start) in headers.iter().enumerate() {
        if lines[start].trim() != "[[peer]]" {
            continue;
        }
        let next = headers.get(n + 1).copied().unwrap_or(lines.len());
        let body: String = lines[start + 1..next].concat();
        let names_it = toml::from_str::<toml::Table>(&body)
            .ok()
            .and_then(|t| t.get("url").and_then(|u| u.as_str()).map(str::to_owned))
            .and_then(|u| normalise_url(&u).ok())
            .is_some_and(|u| u == url);
        if !names_it {
            continue;
        }
        // The table ends at its last key line; what follows (blank lines,
        // comments) introduces the next table.
        let end = (start + 1..next)
            .rev()
            .find(|&i| {
                let line = lines[i].trim();
                !line.is_empty() && !line.starts_with('#')
            })
            .map_or(start + 1, |i| i + 1);
        // One blank line before the table goes with it, so that removing
        // what `add_peer` appended gives the text back.
        let from = if start > 0 && lines[start - 1].trim().is_empty() { start - 1 } else { start };
        let mut out: String = lines[..from].concat();
        out.push_str(&lines[end..].concat());
        return Some(out);
    }
    None
}

fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# my mesh\n[federation]\ninterval = \"1m\"\n\n# the hub\n[[peer]]\nurl = \"http://127.0.0.1:7001/\"\ntrust = 0.8\n# note on the hub\n\n# the laptop\n[[peer]]\nurl = \"http://127.0.0.1:7002\"\n";

    #[test]
    fn adding_then_removing_gives_the_file_back() {
        let added = add_peer(FILE, "http://127.0.0.1:7003", Some(0.7), true);
        assert!(added.starts_with(FILE), "{added}");
        assert!(
            added.ends_with("\n[[peer]]\nurl = \"http://127.0.0.1:7003\"\ntrust = 0.7\npush = true\n"),
            "{added}"
        );
        assert_eq!(remove_peer(&added, "http://127.0.0.1:7003").as_deref(), Some(FILE));
    }

    #[test]
    fn adding_to_an_empty_file_or_one_without_a_final_newline() {
        assert_eq!(add_peer("", "http://a:1", None, false), "[[peer]]\nurl = \"http://a:1\"\n");
        assert_eq!(add_peer("# x", "http://a:1", None, false), "# x\n\n[[peer]]\nurl = \"http://a:1\"\n");
    }

    #[test]
    fn removing_a_peer_keeps_the_comments_of_the_next_and_every_other_line() {
        let out = remove_peer(FILE, "http://127.0.0.1:7001").expect("the hub is there");
        assert_eq!(
            out,
            "# my mesh\n[federation]\ninterval = \"1m\"\n\n# the hub\n# note on the hub\n\n# the laptop\n[[peer]]\nurl = \"http://127.0.0.1:7002\"\n"
        );
        let last = remove_peer(FILE, "http://127.0.0.1:7002").expect("the laptop is there");
        assert!(last.ends_with("trust = 0.8\n# note on the hub\n\n# the laptop\n"), "{last}");
    }

    #[test]
    fn removing_an_unknown_url_finds_nothing() {
        assert_eq!(remove_peer(FILE, "http://127.0.0.1:7009"), None);
        assert_eq!(remove_peer("", "http://127.0.0.1:7001"), None);
    }
}
