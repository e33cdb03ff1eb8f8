//! Edges of the supply family that the seed-31 mutation sample found
//! unpinned (#27): `npx`, `bunx` and `pnpx` install their first argument
//! only; Poetry's tables open a list only when they are its dependency
//! tables; a closing fence ends a list whose own end is missing; where a
//! quoted list item's name starts; a vendor's or a mirror's index over
//! plain http.

use super::install::{Target, install_args};
use super::manifest::listed;
use crate::scan::Severity::{High, Low, Medium};
use crate::scan::engine::{Body, LineRef};
use crate::scan::testutil::assert_severity;

/// `line:name` of each package the lists of `text` name, and its offset.
fn listed_in(text: &str) -> Vec<(String, usize)> {
    let body = Body::new(text);
    let lines: Vec<LineRef> =
        body.lines_from(LineRef { index: 0, start: 0, end: 0 }).map(|(r, _)| r).collect();
    listed(&body, &lines).into_iter().map(|p| (format!("{}:{}", p.line.index + 1, p.name), p.at)).collect()
}

fn names(text: &str) -> Vec<String> {
    listed_in(text).into_iter().map(|(n, _)| n).collect()
}

#[test]
fn a_package_runner_installs_its_first_argument_only() {
    for runner in ["npx", "pnpx", "bunx", "uvx", "npm i && bunx"] {
        let line = format!("{runner} cowsay lodahs");
        let args = install_args(&line);
        let names: Vec<&str> = args
            .iter()
            .filter_map(|a| match a.target {
                Target::Name(_, n) => Some(n),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["cowsay"], "{runner}");
    }
}

#[test]
fn only_poetrys_dependency_tables_open_a_list() {
    assert_eq!(names("[tool.poetry.dev-dependencies]\nreqests = \"^2\"\n"), ["2:reqests"]);
    // Poetry's own table holds the project's name and version, not packages.
    assert!(names("[tool.poetry]\nname = \"demo\"\nversion = \"1.0\"\n").is_empty());
    // Another tool's table named like one is not Poetry's.
    assert!(names("[project.optional-dependencies]\ndev = [\"pytest\"]\n").is_empty());
}

#[test]
fn a_closing_fence_ends_a_list_whose_end_is_missing() {
    // The heredoc's `EOF` never comes: the block's fence ends the list.
    assert_eq!(names("```bash\ncat > requirements.txt <<EOF\nrequests\n```\nnumpyy\n"), ["3:requests"]);
    assert_eq!(
        names("```json\n\"dependencies\": {\n  \"lodahs\": \"^4\"\n```\n\"reactt\": \"18\"\n"),
        ["3:lodahs"]
    );
}

#[test]
fn a_quoted_items_name_starts_after_its_quote() {
    assert_eq!(listed_in("dependencies = [\n  \"httpx>=0.27\",\n]\n"), [("2:httpx".to_string(), 3)]);
    assert_eq!(
        listed_in("{\n  \"dependencies\": {\n    'lodahs': \"^4\"\n  }\n}\n"),
        [("3:lodahs".to_string(), 5)]
    );
}

#[test]
fn a_vendors_or_a_mirrors_index_over_plain_http_is_high() {
    let pip = |url: &str| format!("```bash\npip install --index-url {url} torch\n```\n");
    assert_severity(&pip("https://download.pytorch.org/whl/cu121"), "supply.index-override", Low);
    assert_severity(&pip("http://download.pytorch.org/whl/cu121"), "supply.index-override", High);
    assert_severity(&pip("https://mirrors.aliyun.com/pypi/simple"), "supply.index-override", Medium);
    assert_severity(&pip("http://mirrors.aliyun.com/pypi/simple"), "supply.index-override", High);
}
