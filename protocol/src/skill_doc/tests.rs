//! Tests across the `skill_doc` submodules: a real packet body from the Go
//! reference, and properties that must hold for any input.

use proptest::prelude::*;

use super::*;

/// `skillBody` of the first packet of `fixtures/reference/push1.json`.
const PUSH1_BODY: &str = "---\nname: git-bisect-regression\ndescription: Find the commit that introduced a regression with git bisect\n---\n# git-bisect-regression\n\n## When to Use\nA test passes on an old commit and fails on HEAD.\n\n## Steps\n1. Run `git` bisect start, mark HEAD bad and the last good tag good.\n2. Run the failing test at each step with `bash`.\n\n## Verification\nThe first bad commit is reported and the test fails exactly there.\n";

/// The same skill as `fixtures/reference/skills.json` serves it: the Go
/// reference strips the frontmatter and trims the trailing newline.
const SKILLS_BODY: &str = "# git-bisect-regression\n\n## When to Use\nA test passes on an old commit and fails on HEAD.\n\n## Steps\n1. Run `git` bisect start, mark HEAD bad and the last good tag good.\n2. Run the failing test at each step with `bash`.\n\n## Verification\nThe first bad commit is reported and the test fails exactly there.";

const PUSH1_DESCRIPTION: &str = "Find the commit that introduced a regression with git bisect";

#[test]
fn parses_reference_packet_body() {
    let doc = parse(PUSH1_BODY).unwrap();
    let frontmatter = doc.frontmatter.as_ref().unwrap();
    assert_eq!(frontmatter.name.as_deref(), Some("git-bisect-regression"));
    assert_eq!(frontmatter.description.as_deref(), Some(PUSH1_DESCRIPTION));
    assert!(doc.body.starts_with("# git-bisect-regression\n"));
    assert_eq!(check_structure(&doc, PUSH1_BODY.len(), &StructureLimits::default()), Ok(()));
    assert_eq!(frontmatter_mismatch(&doc, "git-bisect-regression"), None);
}

#[test]
fn finds_references_of_reference_packet() {
    let doc = parse(PUSH1_BODY).unwrap();
    let report = check_references(doc.body, &KnownTools::default());
    assert_eq!(report.referenced, ["git", "bash"]);
    assert!(report.unknown.is_empty());
    assert_eq!(check_document_references(&doc, &KnownTools::default()), report);
}

#[test]
fn rebuilds_go_stripped_body_as_the_original() {
    let rebuilt = with_frontmatter("git-bisect-regression", PUSH1_DESCRIPTION, SKILLS_BODY);
    // Only the newline the Go reference trimmed is missing.
    assert_eq!(rebuilt + "\n", PUSH1_BODY);
}

#[test]
fn stripped_body_fails_structure_check() {
    let doc = parse(SKILLS_BODY).unwrap();
    assert_eq!(doc.frontmatter, None);
    assert_eq!(
        check_structure(&doc, SKILLS_BODY.len(), &StructureLimits::default()),
        Err(StructureError::FrontmatterMissing)
    );
}

/// Strings rich in YAML syntax, so the plain-or-quoted choice is exercised.
fn yamlish() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z :#\\-,\\[\\]{}'\"!&*?|>%@`~.0-9\\\\]{0,24}", "[ -~\t\r\n]{0,40}", any::<String>(),]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn parse_never_panics(text in any::<String>()) {
        let _ = parse(&text);
    }

    #[test]
    fn parse_never_panics_on_frontmatter(yaml in "[ -~\t\n]{0,200}", body in any::<String>()) {
        let text = format!("---\n{yaml}\n---\n{body}");
        if let Ok(doc) = parse(&text) {
            let _ = check_structure(&doc, text.len(), &StructureLimits::default());
            let _ = check_document_references(&doc, &KnownTools::default());
        }
    }

    #[test]
    fn parse_never_panics_after_opening_fence(rest in any::<String>()) {
        let _ = parse(&format!("---\n{rest}"));
    }

    #[test]
    fn parse_never_panics_on_yaml_syntax(yaml in "[a-z:\\-\\[\\]{}&*!|>'\" \n#?,%@`.]{0,120}") {
        let _ = parse(&format!("---\n{yaml}\n---\nbody"));
    }

    #[test]
    fn body_of_text_without_frontmatter_is_the_text(text in any::<String>()) {
        prop_assume!(!text.trim_start_matches('\u{feff}').starts_with("---"));
        let doc = parse(&text).unwrap();
        prop_assert_eq!(doc.frontmatter, None);
        prop_assert_eq!(doc.body, text.as_str());
    }

    #[test]
    fn with_frontmatter_round_trips(
        name in yamlish(),
        description in yamlish(),
        body in any::<String>(),
    ) {
        let text = with_frontmatter(&name, &description, &body);
        let doc = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let frontmatter = doc.frontmatter.unwrap();
        prop_assert_eq!(frontmatter.name, Some(fold_line_breaks(&name)));
        prop_assert_eq!(frontmatter.description, Some(fold_line_breaks(&description)));
        prop_assert_eq!(doc.body, body.as_str());
    }

    #[test]
    fn valid_names_round_trip_unquoted_or_quoted(name in "[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}") {
        prop_assert_eq!(validate_name(&name), Ok(()));
        let doc_text = with_frontmatter(&name, "d", "body");
        let doc = parse(&doc_text).unwrap();
        prop_assert_eq!(doc.frontmatter.unwrap().name, Some(name));
    }

    #[test]
    fn validate_name_agrees_with_the_rule(name in "[ -~é/]{0,70}") {
        let bytes = name.as_bytes();
        let expected = !bytes.is_empty()
            && bytes.len() <= 64
            && bytes[0].is_ascii_alphanumeric()
            && bytes.iter().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(b));
        prop_assert_eq!(validate_name(&name).is_ok(), expected);
    }

    #[test]
    fn check_references_never_panics(body in any::<String>()) {
        let report = check_references(&body, &KnownTools::default());
        prop_assert!(report.unknown.iter().all(|u| report.referenced.contains(u)));
    }
}
