//! Dependency lists the skill writes or shows: a `requirements*.txt` in a
//! heredoc or in the code block after the line naming it, a JSON
//! `"dependencies": {` object, a `pyproject.toml` `dependencies = [` list,
//! Poetry's `[tool.poetry.dependencies]` and Cargo's `[dependencies]`
//! tables. Each yields the package names it lists, with their lines.

use super::names::Ecosystem;
use crate::scan::engine::{Body, LineRef};
use crate::scan::fence::is_fence;

/// Lines of a list, at most (keeps a hostile body linear).
const MAX_LINES: usize = 200;
/// How far below the line naming a requirements file its code block may open.
const FENCE_WITHIN: usize = 3;

/// A package a dependency list names.
pub(super) struct Listed<'a> {
    pub(super) ecosystem: Ecosystem,
    pub(super) name: &'a str,
    pub(super) line: LineRef,
    pub(super) at: usize,
}

/// Whether a fence opens a block a requirements file may be shown in: no
/// language, or a plain-text one (not a shell session that runs `pip`).
fn plain_text_fence(line: &str) -> bool {
    let info = line.trim().trim_start_matches(['`', '~']).trim().to_ascii_lowercase();
    info.is_empty()
        || info.contains("requirements")
        || matches!(info.as_str(), "text" | "txt" | "plain" | "pip" | "ini" | "cfg")
}

/// The kind of list a trigger line opens, and how it ends.
enum Opens<'a> {
    /// Requirements lines until a line equal to the terminator.
    Heredoc(&'a str),
    /// Requirements lines in the next code block.
    Block,
    /// `"name": "version"` lines until `}`.
    Json,
    /// `"spec",` lines until `]`.
    TomlArray,
    /// `name = …` lines until the next table.
    TomlTable(Ecosystem),
}

fn opens(line: &str) -> Option<Opens<'_>> {
    let t = line.trim();
    let lower = t.to_ascii_lowercase();
    if lower.contains("requirements") {
        if let Some((_, rest)) = t.split_once("<<") {
            let word = rest.trim_start_matches(['-', '~']).trim().trim_matches(['\'', '"']);
            let word = word.split_whitespace().next().unwrap_or("");
            return (!word.is_empty()).then_some(Opens::Heredoc(word));
        }
        return Some(Opens::Block);
    }
    if lower.contains("dependencies\"") && t.ends_with('{') {
        return Some(Opens::Json);
    }
    if lower.starts_with("dependencies") && t.ends_with('[') {
        return Some(Opens::TomlArray);
    }
    if lower.starts_with("[tool.poetry") && lower.ends_with("dependencies]") {
        return Some(Opens::TomlTable(Ecosystem::PyPi));
    }
    if matches!(
        lower.as_str(),
        "[dependencies]" | "[dev-dependencies]" | "[build-dependencies]" | "[workspace.dependencies]"
    ) {
        return Some(Opens::TomlTable(Ecosystem::Crates));
    }
    None
}

/// The name a requirements line asks for (`name[extra]==1 ; marker # x`).
fn requirement(line: &str) -> Option<(&str, usize)> {
    let lead = line.len() - line.trim_start().len();
    let t = line.trim();
    if t.is_empty() || t.starts_with(['#', '-', '.', '/']) || super::has_url(t) {
        return None;
    }
    let end =
        t.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))).unwrap_or(t.len());
    let rest = t[end..].trim_start();
    (end > 0 && (rest.is_empty() || rest.starts_with(['[', '=', '<', '>', '!', '~', ';', '@', '#'])))
        .then(|| (&t[..end], lead))
}

/// The quoted key or item at the start of a JSON or TOML array line.
fn quoted(line: &str) -> Option<(&str, usize)> {
    let start = line.find(['"', '\''])?;
    let q = line.as_bytes()[start];
    let len = line[start + 1..].find(char::from(q))?;
    Some((&line[start + 1..start + 1 + len], start + 1))
}

/// The packages listed by the dependency lists that start on `lines`.
pub(super) fn listed<'a>(body: &Body<'a>, lines: &[LineRef]) -> Vec<Listed<'a>> {
    let mut out = Vec::new();
    let mut done_to = 0;
    for &l in lines {
        if l.index < done_to {
            continue;
        }
        let Some(kind) = opens(body.line(l)) else {
            continue;
        };
        let mut rest = body.lines_from(l).skip(1);
        let mut in_block = false;
        if matches!(kind, Opens::Block) {
            // The block must open right below the line naming the file.
            let mut opened = false;
            for (_, line) in rest.by_ref().take(FENCE_WITHIN) {
                if is_fence(line) {
                    opened = plain_text_fence(line);
                    break;
                }
            }
            if !opened {
                continue;
            }
            in_block = true;
        }
        for (r, line) in rest.take(MAX_LINES) {
            let t = line.trim();
            let ends = match &kind {
                Opens::Heredoc(word) => t == *word,
                Opens::Block => is_fence(line),
                Opens::Json => t.starts_with('}'),
                Opens::TomlArray => t.starts_with(']'),
                Opens::TomlTable(_) => t.starts_with('[') || is_fence(line),
            };
            if ends || (!in_block && is_fence(line)) {
                // The line that ends a list may open the next one
                // (`[dev-dependencies]` right after `[dependencies]`).
                break;
            }
            done_to = r.index + 1;
            let found = match &kind {
                Opens::Heredoc(_) | Opens::Block => requirement(line).map(|(n, at)| (Ecosystem::PyPi, n, at)),
                Opens::Json => quoted(line).map(|(n, at)| (Ecosystem::Npm, n, at)),
                Opens::TomlArray => quoted(line)
                    .and_then(|(spec, at)| requirement(spec).map(|(n, _)| (Ecosystem::PyPi, n, at))),
                Opens::TomlTable(e) => {
                    let key = t.split('=').next().unwrap_or("").trim().trim_matches('"');
                    let at = line.len() - line.trim_start().len();
                    (t.contains('=') && key != "python" && !key.contains(['.', ' '])).then_some((*e, key, at))
                }
            };
            if let Some((ecosystem, name, at)) = found {
                out.push(Listed { ecosystem, name, line: r, at });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        let body = Body::new(text);
        let lines: Vec<LineRef> =
            body.lines_from(LineRef { index: 0, start: 0, end: 0 }).map(|(r, _)| r).collect();
        listed(&body, &lines).into_iter().map(|p| format!("{}:{}", p.line.index + 1, p.name)).collect()
    }

    #[test]
    fn reads_requirements_in_heredocs_and_blocks() {
        assert_eq!(
            names(
                "cat > requirements.txt <<'EOF'\nrequests==2.31\n# c\nflask[async]>=3 ; python_version>'3.8'\n-r base.txt\nEOF\nnumpyy\n"
            ),
            ["2:requests", "4:flask"]
        );
        assert_eq!(
            names("Put this in `requirements.txt`:\n\n```text\nreqeusts\n```\nnumpyy\n"),
            ["4:reqeusts"]
        );
        assert!(names("See requirements.txt.\n\nSome prose.\n\nMore prose.\n```\nx\n```\n").is_empty());
        assert!(names("pip install -r requirements.txt\n```bash\nmake\n```\n").is_empty());
    }

    #[test]
    fn reads_json_and_toml_dependency_lists() {
        assert_eq!(
            names(
                "{\n  \"dependencies\": {\n    \"lodahs\": \"^4\",\n    \"react\": \"18\"\n  },\n  \"x\": 1\n}\n"
            ),
            ["3:lodahs", "4:react"]
        );
        assert_eq!(names("dependencies = [\n  \"httpx>=0.27\",\n]\nname = \"x\"\n"), ["2:httpx"]);
        assert_eq!(
            names("[tool.poetry.dependencies]\npython = \"^3.11\"\nreqests = \"^2\"\n[tool.x]\ny = 1\n"),
            ["3:reqests"]
        );
        assert_eq!(names("[dependencies]\nserde = { version = \"1\" }\n\n[features]\nx = []\n"), ["2:serde"]);
    }

    #[test]
    fn a_requirement_names_at_least_one_character() {
        // A version or an extra with no name before it names nothing; a
        // one-letter name is a name.
        assert_eq!(
            names("cat > requirements.txt <<'EOF'\nrequests==2.31\nx\n>=1.0\n[extra]\nEOF\n"),
            ["2:requests", "3:x"]
        );
    }
}

#[cfg(test)]
#[path = "manifest_tests.rs"]
mod sweep_tests;
