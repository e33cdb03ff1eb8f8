//! Unit tests of the frontmatter reader: fences, keys, value types, bounds.

use super::*;

fn frontmatter(text: &str) -> Frontmatter {
    parse(text).unwrap().frontmatter.unwrap()
}

#[test]
fn parses_name_and_description() {
    let doc = parse("---\nname: a-skill\ndescription: Does a thing\n---\n# Body\n").unwrap();
    let fm = doc.frontmatter.unwrap();
    assert_eq!(fm.name.as_deref(), Some("a-skill"));
    assert_eq!(fm.description.as_deref(), Some("Does a thing"));
    assert_eq!(doc.body, "# Body\n");
}

#[test]
fn parses_all_keys() {
    let fm = frontmatter(
        "---\nname: x\ndescription: d\ntags: [debug, git]\nversion: 1.0\n\
         allowed-tools:\n  - Read\n  - Bash(git:*)\nconfidence: 0.75\n---\nbody",
    );
    assert_eq!(
        fm,
        Frontmatter {
            name: Some("x".into()),
            description: Some("d".into()),
            tags: vec!["debug".into(), "git".into()],
            version: Some("1.0".into()),
            allowed_tools: vec!["Read".into(), "Bash(git:*)".into()],
            confidence: Some(0.75),
            shareable: None,
        }
    );
}

#[test]
fn text_without_frontmatter_is_all_body() {
    let text = "# Title\n\nNo frontmatter here.\n";
    assert_eq!(parse(text).unwrap(), SkillDocument { frontmatter: None, body: text });
}

#[test]
fn dashes_later_in_text_are_not_frontmatter() {
    let text = "# Title\n---\nname: x\n---\n";
    assert_eq!(parse(text).unwrap().frontmatter, None);
}

#[test]
fn four_dashes_are_not_a_fence() {
    let text = "----\nname: x\n---\n";
    assert_eq!(parse(text).unwrap().frontmatter, None);
}

#[test]
fn empty_text_is_an_empty_body() {
    assert_eq!(parse("").unwrap(), SkillDocument { frontmatter: None, body: "" });
}

#[test]
fn accepts_crlf_frontmatter() {
    let doc = parse("---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n").unwrap();
    let fm = doc.frontmatter.unwrap();
    assert_eq!(fm.name.as_deref(), Some("x"));
    assert_eq!(fm.description.as_deref(), Some("d"));
    assert_eq!(doc.body, "body\r\n");
}

#[test]
fn accepts_utf8_bom() {
    let doc = parse("\u{feff}---\nname: x\n---\nbody").unwrap();
    assert_eq!(doc.frontmatter.unwrap().name.as_deref(), Some("x"));
    assert_eq!(doc.body, "body");
}

#[test]
fn keeps_bom_in_body_without_frontmatter() {
    let text = "\u{feff}# Title";
    assert_eq!(parse(text).unwrap().body, text);
}

#[test]
fn accepts_dots_as_closing_fence() {
    let doc = parse("---\nname: x\n...\nbody").unwrap();
    assert_eq!(doc.frontmatter.unwrap().name.as_deref(), Some("x"));
    assert_eq!(doc.body, "body");
}

#[test]
fn accepts_trailing_spaces_on_fences() {
    let doc = parse("--- \t\nname: x\n---  \nbody").unwrap();
    assert_eq!(doc.frontmatter.unwrap().name.as_deref(), Some("x"));
    assert_eq!(doc.body, "body");
}

#[test]
fn closing_fence_at_end_of_text_gives_empty_body() {
    let doc = parse("---\nname: x\n---").unwrap();
    assert_eq!(doc.body, "");
    assert!(doc.frontmatter.is_some());
}

#[test]
fn keeps_body_bytes_exactly() {
    let body = "\n\n  # Indented\r\n---\nname: not frontmatter\n---\n\u{200b}";
    let text = format!("---\nname: x\n---\n{body}");
    assert_eq!(parse(&text).unwrap().body, body);
}

#[test]
fn empty_frontmatter_has_no_keys() {
    assert_eq!(frontmatter("---\n---\nbody"), Frontmatter::default());
    assert_eq!(frontmatter("---\n# just a comment\n---\nbody"), Frontmatter::default());
    assert_eq!(frontmatter("---\n~\n---\nbody"), Frontmatter::default());
}

#[test]
fn ignores_unknown_keys() {
    let fm = frontmatter(
        "---\nname: x\nlicense: MIT\nmetadata:\n  author: someone\n  deep: {a: [1, 2]}\n\
         ? [complex, key]\n: value\n---\nbody",
    );
    assert_eq!(fm.name.as_deref(), Some("x"));
}

#[test]
fn ignores_duplicate_unknown_keys() {
    assert_eq!(frontmatter("---\nname: x\nfoo: 1\nfoo: 2\n---\n").name.as_deref(), Some("x"));
}

#[test]
fn reads_null_values_as_absent() {
    let fm = frontmatter("---\nname:\ndescription: ~\nversion: null\ntags:\nconfidence:\n---\n");
    assert_eq!(fm, Frontmatter::default());
}

#[test]
fn reads_quoted_null_as_string() {
    assert_eq!(frontmatter("---\nname: \"null\"\n---\n").name.as_deref(), Some("null"));
}

#[test]
fn reads_numbers_and_booleans_as_written() {
    let fm = frontmatter("---\nname: 123\ndescription: true\nversion: 2.10\n---\n");
    assert_eq!(fm.name.as_deref(), Some("123"));
    assert_eq!(fm.description.as_deref(), Some("true"));
    assert_eq!(fm.version.as_deref(), Some("2.10"));
}

#[test]
fn reads_multiline_description_as_yaml_does() {
    let fm = frontmatter("---\ndescription: >\n  folded\n  text\n---\n");
    assert_eq!(fm.description.as_deref(), Some("folded text\n"));
    let fm = frontmatter("---\ndescription: |\n  line one\n  line two\n---\n");
    assert_eq!(fm.description.as_deref(), Some("line one\nline two\n"));
}

#[test]
fn reads_description_with_colon_and_hash_in_quotes() {
    let fm = frontmatter("---\ndescription: \"Use: git # not a comment\"\n---\n");
    assert_eq!(fm.description.as_deref(), Some("Use: git # not a comment"));
}

#[test]
fn splits_claude_code_allowed_tools_string() {
    let fm = frontmatter("---\nallowed-tools: Read, Grep, Bash(git log:*)\n---\n");
    assert_eq!(fm.allowed_tools, ["Read", "Grep", "Bash(git log:*)"]);
}

#[test]
fn splits_space_separated_allowed_tools() {
    let fm = frontmatter("---\nallowed-tools: Read Grep  Bash(git log:*, npm:*)\n---\n");
    assert_eq!(fm.allowed_tools, ["Read", "Grep", "Bash(git log:*, npm:*)"]);
}

#[test]
fn accepts_allowed_tools_with_underscore() {
    let fm = frontmatter("---\nallowed_tools: [Read]\n---\n");
    assert_eq!(fm.allowed_tools, ["Read"]);
}

#[test]
fn splits_tags_on_commas_before_spaces() {
    let fm = frontmatter("---\ntags: machine learning, ops,, \n---\n");
    assert_eq!(fm.tags, ["machine learning", "ops"]);
    let fm = frontmatter("---\ntags: debug git\n---\n");
    assert_eq!(fm.tags, ["debug", "git"]);
}

#[test]
fn skips_empty_and_null_list_items() {
    let fm = frontmatter("---\ntags:\n  - a\n  -\n  - ''\n  - ' b '\n---\n");
    assert_eq!(fm.tags, ["a", "b"]);
}

#[test]
fn reads_confidence_bounds() {
    assert_eq!(frontmatter("---\nconfidence: 0\n---\n").confidence, Some(0.0));
    assert_eq!(frontmatter("---\nconfidence: 1\n---\n").confidence, Some(1.0));
    assert_eq!(frontmatter("---\nconfidence: '.5'\n---\n").confidence, Some(0.5));
}

#[test]
fn rejects_confidence_above_one() {
    assert_eq!(
        parse("---\nconfidence: 1.5\n---\n"),
        Err(DocError::ConfidenceOutOfRange { value: "1.5".into(), line: 2 })
    );
}

#[test]
fn rejects_negative_and_infinite_confidence() {
    for value in ["-0.1", "1e9", "inf", "-infinity", "NaN"] {
        let text = format!("---\nconfidence: {value}\n---\n");
        assert!(matches!(parse(&text), Err(DocError::ConfidenceOutOfRange { .. })), "{value}");
    }
}

#[test]
fn rejects_confidence_that_is_not_a_number() {
    assert_eq!(
        parse("---\nname: x\nconfidence: high\n---\n"),
        Err(DocError::ConfidenceNotANumber { value: "high".into(), line: 3 })
    );
    // YAML's spelling of infinity is not a Rust float: refused as well.
    assert!(matches!(parse("---\nconfidence: .inf\n---\n"), Err(DocError::ConfidenceNotANumber { .. })));
}

#[test]
fn rejects_confidence_list() {
    assert_eq!(
        parse("---\nconfidence: [1]\n---\n"),
        Err(DocError::WrongValueType {
            key: "confidence".into(),
            expected: "a number from 0 to 1",
            found: "a list",
            line: 2,
        })
    );
}

#[test]
fn rejects_name_that_is_a_list() {
    assert_eq!(
        parse("---\nname: [a, b]\n---\n"),
        Err(DocError::WrongValueType { key: "name".into(), expected: "a string", found: "a list", line: 2 })
    );
}

#[test]
fn rejects_tags_with_nested_list() {
    assert!(matches!(
        parse("---\ntags:\n  - [a]\n---\n"),
        Err(DocError::WrongValueType { found: "a list", line: 3, .. })
    ));
    assert!(matches!(
        parse("---\ntags: {a: b}\n---\n"),
        Err(DocError::WrongValueType { found: "a mapping", .. })
    ));
}

#[test]
fn rejects_duplicate_name() {
    assert_eq!(
        parse("---\nname: good\ndescription: d\nname: evil\n---\n"),
        Err(DocError::DuplicateKey { key: "name".into(), line: 4 })
    );
}

#[test]
fn rejects_allowed_tools_under_both_spellings() {
    assert_eq!(
        parse("---\nallowed-tools: Read\nallowed_tools: Bash\n---\n"),
        Err(DocError::DuplicateKey { key: "allowed_tools".into(), line: 3 })
    );
}

#[test]
fn rejects_unclosed_frontmatter() {
    assert_eq!(parse("---\nname: x\n# Body\n"), Err(DocError::FrontmatterNotClosed));
    assert_eq!(parse("---"), Err(DocError::FrontmatterNotClosed));
    assert_eq!(parse("---\n"), Err(DocError::FrontmatterNotClosed));
}

#[test]
fn rejects_oversized_frontmatter() {
    let text = format!("---\ndescription: {}\n---\nbody", "a".repeat(MAX_FRONTMATTER_BYTES));
    assert_eq!(parse(&text), Err(DocError::FrontmatterTooLarge { limit: MAX_FRONTMATTER_BYTES }));
}

#[test]
fn stops_looking_for_closing_fence_at_the_limit() {
    let text = format!("---\n{}", "x: y\n".repeat(100_000));
    assert_eq!(parse(&text), Err(DocError::FrontmatterTooLarge { limit: MAX_FRONTMATTER_BYTES }));
}

#[test]
fn accepts_frontmatter_at_the_limit() {
    // `description: ` plus the value plus a newline is exactly the limit.
    let value = "a".repeat(MAX_FRONTMATTER_BYTES - "description: \n".len());
    let text = format!("---\ndescription: {value}\n---\nbody");
    assert_eq!(parse(&text).unwrap().frontmatter.unwrap().description, Some(value));
}

#[test]
fn refuses_yaml_alias() {
    let text = "---\na: &x [lol, lol]\nb: [*x, *x]\n---\n";
    assert_eq!(parse(text), Err(DocError::YamlAnchorRefused { line: 2 }));
}

#[test]
fn refuses_yaml_alias_in_known_key() {
    // yaml-rust2 reports an alias to an unknown anchor as a scan error;
    // either way the alias is never resolved.
    let text = "---\nname: *x\n---\n";
    assert!(matches!(parse(text), Err(DocError::InvalidYaml(_) | DocError::YamlAliasRefused { .. })));
}

#[test]
fn refuses_billion_laughs() {
    let mut yaml = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        yaml.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 9].join(", ")));
    }
    let text = format!("---\n{yaml}---\nbody");
    assert_eq!(parse(&text), Err(DocError::YamlAnchorRefused { line: 2 }));
}

#[test]
fn refuses_deeply_nested_yaml() {
    let text = format!("---\nmetadata: {}\n---\n", "[".repeat(100));
    assert!(matches!(parse(&text), Err(DocError::NestingTooDeep { line: 2, .. })));
}

#[test]
fn refuses_second_yaml_document() {
    let text = "---\nname: x\n--- y\n---\nbody";
    assert!(matches!(parse(text), Err(DocError::MultipleYamlDocuments { line: 3 })));
}

#[test]
fn rejects_frontmatter_that_is_a_list() {
    assert_eq!(
        parse("---\n- name\n- x\n---\n"),
        Err(DocError::FrontmatterNotAMapping { found: "a list", line: 2 })
    );
}

#[test]
fn rejects_frontmatter_that_is_a_scalar() {
    assert_eq!(
        parse("---\nJust some text\n---\n"),
        Err(DocError::FrontmatterNotAMapping { found: "a scalar", line: 2 })
    );
}

#[test]
fn rejects_invalid_yaml_with_its_line() {
    let err = parse("---\nname: x\n  bad: indent: here\n---\n").unwrap_err();
    let DocError::InvalidYaml(message) = &err else { panic!("wrong error: {err:?}") };
    assert!(message.starts_with("line 3:"), "{message}");
    assert!(err.to_string().contains("fix the YAML"), "{err}");
}

#[test]
fn rejects_tabs_as_indentation() {
    assert!(matches!(parse("---\ntags:\n\t- a\n---\n"), Err(DocError::InvalidYaml(_))));
}

#[test]
fn reads_shareable_as_true_or_false_only() {
    assert_eq!(frontmatter("---\nshareable: false\n---\n").shareable, Some(false));
    assert_eq!(frontmatter("---\nshareable: true\n---\n").shareable, Some(true));
    assert_eq!(frontmatter("---\nshareable:\n---\n").shareable, None);
    for bad in ["---\nshareable: no\n---\n", "---\nshareable: [false]\n---\n"] {
        let err = parse(bad).unwrap_err();
        assert!(err.to_string().contains("must be true or false"), "{bad}: {err}");
        // The merge reads the name only: another node's mark never refuses its skill.
        assert!(parse_name(bad).is_ok(), "{bad}");
    }
}

#[test]
fn error_messages_name_the_input() {
    let err = parse("---\nname: a\nname: b\n---\n").unwrap_err();
    assert_eq!(err.to_string(), "frontmatter key `name` appears twice (again on line 3); keep one");
}

#[test]
fn reads_plain_frontmatter_without_the_yaml_tree() {
    let yaml = "name: a-skill\ndescription: Does a thing, well\ntags: [git, null, debugging]\n\
                allowed-tools: Read, Bash(git log)\nconfidence: 0.5\nversion: 1.0\nother: x\n";
    let plain = read_plain(yaml, Keep::All).expect("plain lines");
    assert_eq!(plain.tags, ["git", "debugging"]);
    assert_eq!(plain.allowed_tools, ["Read", "Bash(git log)"]);
    assert_eq!(Ok(plain), interpret(yaml::read(yaml, YAML_FIRST_LINE).unwrap(), Keep::All));
    for refused in ["name: a\nname: b\n", "name: [a]\n", "confidence: 2\n", "confidence: x\n"] {
        assert_eq!(read_plain(refused, Keep::All), None, "{refused}");
        assert_eq!(read_plain(refused, Keep::Name), None, "{refused}");
        assert!(interpret(yaml::read(refused, YAML_FIRST_LINE).unwrap(), Keep::All).is_err(), "{refused}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Wherever the plain reader answers, the full path gives the same frontmatter.
    #[test]
    fn plain_reading_agrees_with_the_full_path(
        lines in proptest::collection::vec(
            (
                "(name|description|version|tags|allowed-tools|allowed_tools|confidence|other|[a-z][a-z_-]{0,5})",
                "(: |:  |:)",
                "(null|Null|NULL|~|0|1|0.5|1e-1|2|-0|inf|NaN|[a-zA-Z0-9][a-zA-Z0-9 .,_/()+=-]{0,16}\
                 |\\[((null|[a-z0-9][a-z0-9._-]{0,4})(, ?| ,)?){0,4}\\])",
            ),
            1..8,
        ),
    ) {
        let yaml: String = lines.iter().map(|(k, sep, v)| format!("{k}{sep}{v}\n")).collect();
        let name_only = read_plain(&yaml, Keep::Name);
        if let Some(plain) = read_plain(&yaml, Keep::All) {
            let full = yaml::read(&yaml, YAML_FIRST_LINE).and_then(|root| interpret(root, Keep::All));
            let name = plain.name.clone();
            proptest::prop_assert_eq!(Ok(plain), full, "{:?}", yaml);
            proptest::prop_assert_eq!(name_only.map(|f| f.name), Some(name), "{:?}", yaml);
        } else {
            proptest::prop_assert_eq!(name_only, None, "{:?}", yaml);
        }
    }
}

#[test]
fn plain_keys_names_the_keys_of_the_plain_form_only() {
    assert_eq!(
        plain_keys("name: a\ndescription: Does a, then b.\ntags: [x, y-z]\n"),
        Some(vec!["name", "description", "tags"])
    );
    for not_plain in [
        "name: a",                      // no final line feed
        "name: a\r\n",                  // a carriage return
        "name: \"a\"\n",                // quoted
        "name: a\nmetadata:\n  k: v\n", // a nested map
        "name: a # note\n",             // a comment
        "name: a\n\n",                  // a blank line
        "",
    ] {
        assert_eq!(plain_keys(not_plain), None, "{not_plain:?}");
    }
}
