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
