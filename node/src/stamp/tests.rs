use super::*;

const STAMP: Stamp<'static> =
    Stamp { origin: "ecp-origin-a", origin_signed: true, confidence: 0.5399999999, node: "ecp-node-b" };

fn yaml_of(text: &str) -> Yaml {
    let inner = text.strip_prefix("---\n").unwrap().split("\n---\n").next().unwrap();
    single(inner).unwrap()
}

#[test]
fn a_frontmatter_without_metadata_gets_a_map_and_keeps_everything_else() {
    let body = "---\nname: alpha\ndescription: Does alpha\ntags: [a, b]\n---\n# Alpha\n\nSteps.\n";
    let stamped = stamp(body, &STAMP).unwrap();
    assert_eq!(
        stamped,
        "---\nname: alpha\ndescription: Does alpha\ntags: [a, b]\nmetadata:\n  ecp-origin: \"ecp-origin-a\"\n  \
         ecp-origin-status: \"verified\"\n  ecp-confidence: 0.54\n  ecp-node: \"ecp-node-b\"\n---\n# Alpha\n\nSteps.\n"
    );
    let y = yaml_of(&stamped);
    assert_eq!(y["metadata"]["ecp-origin"].as_str(), Some("ecp-origin-a"));
    assert_eq!(y["tags"][1].as_str(), Some("b"));
}

#[test]
fn an_existing_block_map_keeps_its_keys_and_order_and_loses_only_forged_stamps() {
    let body = "---\nname: alpha\nmetadata:\n    author: someone\n    ecp-origin: forged\n    nested:\n      \
                deep: 1\ndescription: Does alpha\n---\nBody text here.\n";
    let stamped = stamp(body, &STAMP).unwrap();
    let y = yaml_of(&stamped);
    let meta = y["metadata"].as_hash().unwrap();
    let keys: Vec<&str> = meta.keys().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(keys, ["author", "nested", "ecp-origin", "ecp-origin-status", "ecp-confidence", "ecp-node"]);
    assert_eq!(y["metadata"]["ecp-origin"].as_str(), Some("ecp-origin-a"), "the forged origin is replaced");
    assert_eq!(y["metadata"]["nested"]["deep"].as_i64(), Some(1));
    assert_eq!(y["description"].as_str(), Some("Does alpha"));
    assert!(stamped.ends_with("---\nBody text here.\n"));
}

#[test]
fn a_flow_map_and_a_null_map_are_merged_into() {
    let flow = stamp("---\nname: a\ndescription: d\nmetadata: {author: x}\n---\nBody.\n", &STAMP).unwrap();
    assert!(
        flow.contains(
            "metadata: {author: x, ecp-origin: \"ecp-origin-a\", ecp-origin-status: \"verified\", ecp-confidence: 0.54, \
             ecp-node: \"ecp-node-b\"}\n"
        ),
        "{flow}"
    );
    assert_eq!(yaml_of(&flow)["metadata"]["author"].as_str(), Some("x"));
    let null = stamp("---\nname: a\ndescription: d\nmetadata: ~\n---\nBody.\n", &STAMP).unwrap();
    assert_eq!(yaml_of(&null)["metadata"]["ecp-node"].as_str(), Some("ecp-node-b"));
}

#[test]
fn crlf_files_stay_crlf() {
    let body = "---\r\nname: a\r\ndescription: d\r\n---\r\nBody.\r\n";
    let stamped = stamp(body, &STAMP).unwrap();
    assert!(stamped.contains("metadata:\r\n  ecp-origin: \"ecp-origin-a\"\r\n"), "{stamped:?}");
    assert!(!stamped.replace("\r\n", "").contains('\n'), "no bare line feed: {stamped:?}");
}

#[test]
fn what_cannot_be_stamped_safely_is_left_alone() {
    for body in [
        "# No frontmatter at all\n\nBody.\n",
        "---\nname: a\ndescription: d\nmetadata: just a string\n---\nBody.\n",
        "---\nname: a\ndescription: d\nmetadata:\n- a list\n---\nBody.\n",
        "---\nname: a\ndescription: d\nmetadata: {ecp-origin: forged}\n---\nBody.\n",
        "---\nname: [unclosed\n---\nBody.\n",
    ] {
        assert_eq!(stamp(body, &STAMP), None, "{body:?}");
    }
}

#[test]
fn odd_strings_are_quoted_so_they_cannot_inject_keys() {
    let odd = Stamp { origin: "a\"\nname: evil", origin_signed: false, confidence: 1.0, node: "n: #x" };
    let stamped = stamp("---\nname: a\ndescription: d\n---\nBody.\n", &odd).unwrap();
    let y = yaml_of(&stamped);
    assert_eq!(y["name"].as_str(), Some("a"));
    assert_eq!(y["metadata"]["ecp-origin"].as_str(), Some("a\"\nname: evil"));
    assert_eq!(y["metadata"]["ecp-confidence"].as_i64(), Some(1));
    assert_eq!(y["metadata"]["ecp-node"].as_str(), Some("n: #x"));
}

/// The stamp by the checked path alone: what [`stamp`] gave before the
/// plain form had its own path.
fn checked_only(body: &str, stamp: &Stamp<'_>) -> Option<String> {
    let before = skill_doc::parse(body).ok()?.frontmatter?;
    let (lines, close) = frontmatter_lines(body)?;
    let eol = if lines[0].ends_with("\r\n") { "\r\n" } else { "\n" };
    checked(&lines, close, eol, &before, stamp)
}

/// Whether `body` takes the plain form's path.
fn takes_the_plain_path(body: &str, stamp: &Stamp<'_>) -> bool {
    let (lines, close) = frontmatter_lines(body).unwrap();
    appended(body, &lines, close, "\n", stamp).is_some()
}

#[test]
fn a_plain_frontmatter_is_stamped_without_the_check_and_as_the_check_stamps_it() {
    let body = "---\nname: rust-testing-tidy-00042\ndescription: Tidy the test coverage of a rust project step by \
                step, with checks before and after.\ntags: [rust, testing, playbook]\n---\n# Tidy\n\nSteps.\n";
    assert!(takes_the_plain_path(body, &STAMP));
    assert_eq!(stamp(body, &STAMP), checked_only(body, &STAMP));
    assert!(stamp(body, &STAMP).is_some());
}

#[test]
fn what_the_plain_path_cannot_vouch_for_goes_through_the_check() {
    let plain = "---\nname: a\ndescription: d\n---\nBody.\n";
    // Not ASCII, or a YAML 1.1 line break (NEL) in a stamp's string.
    for origin in ["é-origin", "a\u{85}b", "a\u{2028}b"] {
        let odd = Stamp { origin, ..STAMP };
        assert!(!takes_the_plain_path(plain, &odd), "{origin:?}");
        assert_eq!(stamp(plain, &odd), checked_only(plain, &odd), "{origin:?}");
    }
    // A frontmatter not of the plain form, or naming `metadata` already.
    for body in [
        "---\nname: a\ndescription: \"d\"\n---\nBody.\n",
        "---\nname: a\ndescription: d\nmetadata: x\n---\nBody.\n",
        "---\r\nname: a\r\ndescription: d\r\n---\r\nBody.\r\n",
        "---\nname: a\ndescription: d # note\n---\nBody.\n",
        // Repeated keys, as YAML reads them: an error to the checked path.
        "---\nname: a\ndescription: d\nlicense: x\nlicense: y\n---\nBody.\n",
        "---\nname: a\ndescription: d\nnull: x\nNULL: y\n---\nBody.\n",
        "---\nname: a\ndescription: d\nMetadata: x\n---\nBody.\n",
    ] {
        let (lines, close) = frontmatter_lines(body).unwrap();
        assert_eq!(appended(body, &lines, close, "\n", &STAMP), None, "{body:?}");
        assert_eq!(stamp(body, &STAMP), checked_only(body, &STAMP), "{body:?}");
    }
}

#[test]
fn each_stamp_on_one_thread_is_its_own_not_the_one_before() {
    // The plain path keeps the last stamp's entries per thread: a stamp
    // differing from it in any one field must get its own.
    let plain = "---\nname: a\ndescription: d\n---\nBody.\n";
    let others = [
        Stamp { origin: "ecp-origin-c", ..STAMP },
        Stamp { origin_signed: false, ..STAMP },
        Stamp { confidence: 0.25, ..STAMP },
        Stamp { node: "ecp-node-d", ..STAMP },
        // The same confidence as the plain stamp's text, another f64.
        Stamp { confidence: 0.54, ..STAMP },
    ];
    for other in others {
        for s in [STAMP, other, other, STAMP] {
            assert!(takes_the_plain_path(plain, &s));
            assert_eq!(stamp(plain, &s), checked_only(plain, &s), "{s:?}");
        }
    }
    // A stamp the plain path declines, then one it takes, on one thread.
    let odd = Stamp { origin: "é-origin", ..STAMP };
    assert!(!takes_the_plain_path(plain, &odd));
    assert!(takes_the_plain_path(plain, &STAMP));
}

#[test]
fn the_plain_path_keeps_the_frontmatter_within_the_protocols_bound() {
    let filler = "x".repeat(60);
    let mut yaml = String::from("name: a\ndescription: d\n");
    let mut n = 0;
    // Grow the frontmatter until the stamp no longer fits, then check at
    // that limit and one line short of it.
    while yaml.len() + 200 < skill_doc::MAX_FRONTMATTER_BYTES {
        yaml.push_str(&format!("k{n}: {filler}\n"));
        n += 1;
    }
    let mut last_fit = None;
    loop {
        let body = format!("---\n{yaml}---\nBody.\n");
        let fast = takes_the_plain_path(&body, &STAMP);
        assert_eq!(stamp(&body, &STAMP), checked_only(&body, &STAMP), "at {} bytes", yaml.len());
        if !fast {
            assert!(last_fit.is_some(), "the first size tried already fits no stamp");
            assert_eq!(stamp(&body, &STAMP), None, "over the bound the checked path refuses too");
            break;
        }
        last_fit = Some(yaml.len());
        yaml.push_str(&format!("j{n}: v\n"));
        n += 1;
    }
}

proptest::proptest! {
    #[test]
    fn the_plain_path_gives_what_the_checked_path_gives(
        entries in proptest::collection::vec(
            (
                proptest::prop_oneof![
                    proptest::strategy::Just("name".to_owned()),
                    proptest::strategy::Just("description".to_owned()),
                    proptest::strategy::Just("tags".to_owned()),
                    proptest::strategy::Just("confidence".to_owned()),
                    proptest::strategy::Just("metadata".to_owned()),
                    "[a-z][a-z0-9_-]{0,8}",
                ],
                proptest::prop_oneof![
                    "[a-zA-Z0-9][a-zA-Z0-9 .,_/()+=-]{0,30}[a-zA-Z0-9.]",
                    "\\[([a-z0-9][a-z0-9._-]{0,5}(, [a-z0-9][a-z0-9._-]{0,5}){0,3})?\\]",
                    "0\\.[0-9]{1,3}",
                ],
            ),
            1..8,
        ),
        origin in "[ -~]{0,24}",
        node in "[a-z0-9-]{1,24}",
        confidence in 0.0f64..1.0,
        signed in proptest::bool::ANY,
    ) {
        let yaml: String = entries.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
        let body = format!("---\n{yaml}---\n# Title\n\nBody.\n");
        let s = Stamp { origin: &origin, origin_signed: signed, confidence, node: &node };
        proptest::prop_assert_eq!(stamp(&body, &s), checked_only(&body, &s));
    }
}

#[test]
fn the_frontmatters_head_is_the_lines_up_to_the_closing_fence() {
    for body in [
        "---\nname: a\ndescription: d\n---\nBody.\nMore.\n",
        "---  \nname: a\n...\t\nBody.\n",
        "---\r\nname: a\r\n---\r\nBody.\r\n",
        "---\nname: a\n---",
        "---\n---\n",
    ] {
        let (lines, close) = frontmatter_lines(body).unwrap();
        let (head, head_close) = frontmatter_head(body).unwrap();
        assert_eq!((&lines[..close], close), (&head[..], head_close), "{body:?}");
        assert_eq!(lines.concat(), body, "every line kept: {body:?}");
    }
    for body in ["", "---\nname: a\n", "name: a\n---\n", "----\nname: a\n---\n", "--\n---\n"] {
        assert_eq!(frontmatter_head(body), None, "{body:?}");
        assert_eq!(frontmatter_lines(body), None, "{body:?}");
    }
}
