//! Edges of `manifest.rs` that the session-25 whole-file sweep (#27) found
//! unpinned: which fences may show a requirements file, which lines open a
//! JSON or TOML list, which requirement lines name nothing, where a name
//! starts, and which lines a list already read may open another list.

use super::*;

/// `line:name@offset` of each package the lists of `text` name.
fn listed_at(text: &str) -> Vec<String> {
    let body = Body::new(text);
    let lines: Vec<LineRef> =
        body.lines_from(LineRef { index: 0, start: 0, end: 0 }).map(|(r, _)| r).collect();
    listed(&body, &lines).into_iter().map(|p| format!("{}:{}@{}", p.line.index + 1, p.name, p.at)).collect()
}

fn none() -> Vec<String> {
    Vec::new()
}

#[test]
fn a_fence_with_no_language_or_naming_the_file_shows_requirements() {
    assert_eq!(listed_at("requirements.txt:\n```\nreqeusts\n```\n"), ["3:reqeusts@0"]);
    assert_eq!(listed_at("The requirements:\n```requirements.txt\nreqeusts\n```\n"), ["3:reqeusts@0"]);
    assert_eq!(listed_at("requirements.txt:\n```python\nimport reqeusts\n```\n"), none());
}

#[test]
fn only_a_dependency_key_opening_an_object_or_an_array_opens_a_list() {
    // An object that lists no dependencies.
    assert_eq!(listed_at("\"scripts\": {\n  \"lodahs\": \"node x\"\n}\n"), none());
    // A dependency key with no object after it.
    assert_eq!(listed_at("\"peerDependencies\": \"none\",\n\"lodahs\": \"^4\"\n}\n"), none());
    // An array under another key.
    assert_eq!(listed_at("dev = [\n  \"reqeusts\",\n]\n"), none());
    assert_eq!(listed_at("dependencies = \"reqeusts\"\n\"numpyy\",\n]\n"), none());
}

#[test]
fn flags_urls_and_paths_in_a_requirements_file_name_nothing() {
    let file = "cat > requirements.txt <<EOF\n--no-deps\nreqeusts @ https://files.example/r.whl\n.hidden\n/abs/pkg\nnumpyy\nEOF\n";
    assert_eq!(listed_at(file), ["6:numpyy@0"]);
}

#[test]
fn a_name_starts_past_its_indent() {
    assert_eq!(
        listed_at("cat > requirements.txt <<EOF\n  reqeusts\nnumpyy\nEOF\n"),
        ["2:reqeusts@2", "3:numpyy@0"]
    );
    assert_eq!(listed_at("[dependencies]\n    serde = \"1\"\n"), ["2:serde@4"]);
}

#[test]
fn a_line_of_a_list_opens_no_list_of_its_own() {
    // `-r requirements-dev.txt` names a requirements file, but it is a line
    // of the block: the fence below it closes that block, it opens none.
    assert_eq!(listed_at("requirements.txt:\n```text\n-r requirements-dev.txt\n```\nnumpyy\n```\n"), none());
}

#[test]
fn the_line_that_ends_a_list_may_open_the_next() {
    assert_eq!(
        listed_at("[dependencies]\nserde = \"1\"\n[dev-dependencies]\nreqeusts = \"1\"\n"),
        ["2:serde@0", "4:reqeusts@0"]
    );
    assert_eq!(
        listed_at(
            "cat > requirements.txt <<EOF\nrequests\nEOF\ncat > requirements-dev.txt <<EOF\nreqeusts\nEOF\n"
        ),
        ["2:requests@0", "5:reqeusts@0"]
    );
}
