//! `KnowledgeUpdate::from_json` against its reference, serde_json alone
//! (`from_json_serde`): on every input, the same update or the same error.

use proptest::prelude::*;

use super::json_strategies;
use crate::wire::KnowledgeUpdate;

/// Fails unless both decoders give the same update, or errors that print the same.
fn assert_same(doc: &[u8]) {
    let fast = KnowledgeUpdate::from_json(doc);
    let reference = KnowledgeUpdate::from_json_serde(doc);
    match (&fast, &reference) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{}", String::from_utf8_lossy(doc)),
        (Err(a), Err(b)) => {
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{}", String::from_utf8_lossy(doc))
        }
        _ => panic!("decoders disagree on {}:\n{fast:?}\n{reference:?}", String::from_utf8_lossy(doc)),
    }
}

#[test]
fn decodes_the_reference_fixtures_as_serde_does() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    for name in ["push1.json", "skills.json"] {
        let doc = std::fs::read(dir.join(name)).expect("fixture");
        let update = super::update(&doc).expect("the fast path decodes the fixture");
        assert!(!update.skills.is_empty(), "{name}");
        assert_same(&doc);
    }
}

#[test]
fn decodes_the_kept_fuzz_inputs_as_serde_does() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fuzz-regressions/update_merge");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz regressions folder") {
        let path = entry.expect("directory entry").path();
        if path.is_file() {
            assert_same(&std::fs::read(&path).expect("kept input"));
            replayed += 1;
        }
    }
    assert!(replayed > 0, "no kept inputs in {}", dir.display());
}

#[test]
fn hostile_shapes_decode_as_serde_decodes_them() {
    let packet = r#"{"skillName":"a","confidence":0.5,"tags":["x"]}"#;
    for doc in [
        format!(r#"{{"skills":[{packet}],"skills":[{packet}]}}"#),
        format!(r#"{{"skills":null,"skills":[{packet}]}}"#),
        format!(r#"{{"sk\u0069lls":[{packet}]}}"#),
        format!(r#"{{"skills":[{packet},7]}}"#),
        format!(r#"{{"skills":[{packet},[]]}}"#),
        r#"{"skills":[["id","1.0"]]}"#.to_owned(),
        format!(r#"{{"skills":[{packet}],"stats":{{"totalSkills":"x"}}}}"#),
        format!(r#"{{"skills":[{packet}]}} x"#),
        format!(r#"{{"skills":[{packet}]"#),
        format!(r#"{{"skills":[{packet},]}}"#),
        format!(r#"{{"id":"a\"],\"skills\":[{packet}]","skills":[]}}"#),
        r#"{"skills":[{"skillName":"a","skillName":"b"}]}"#.to_owned(),
        r#"{"skills":[{"skillBody":"x\u0000"}]}"#.to_owned(),
        r#"{"skills":[{"skillBody":"\ud800"}]}"#.to_owned(),
        format!(" \n{{ \"skills\" :\t[ {packet} ,\r\n{packet} ] }}\n "),
        r#"{"skills":[]}"#.to_owned(),
        r#"{"skills":[{"provenance":{"path":[1]}}]}"#.to_owned(),
        "{\"skills\":[{\"skillBody\":\"\u{1}\"}]}".to_owned(),
    ] {
        assert_same(doc.as_bytes());
    }
    assert_same(b"{\"skills\":[{\"skillBody\":\"\xff\"}]}");
    assert_same(b"{\"id\":\"\xff\",\"skills\":[{}]}");
}

/// Damages a document: cut short, a byte dropped, or a structural byte put in.
fn damage(doc: &str, how: usize, at: usize) -> Vec<u8> {
    let mut bytes = doc.as_bytes().to_vec();
    let at = if bytes.is_empty() { 0 } else { at % bytes.len() };
    match how {
        0 => bytes.truncate(at),
        1 if !bytes.is_empty() => {
            bytes.remove(at);
        }
        2 => bytes.insert(at, b"{}[]\",:\\ "[at % 9]),
        _ => {}
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Both decoders agree on generated updates, intact or damaged.
    #[test]
    fn agrees_with_serde_on_generated_updates(doc in json_strategies::update(), how in 0usize..6, at in any::<usize>()) {
        assert_same(doc.as_bytes());
        assert_same(&damage(&doc, how, at));
    }

    /// And on arbitrary bytes, after the start of an update or alone.
    #[test]
    fn agrees_with_serde_on_arbitrary_bytes(
        start in prop::sample::select(&["", "{\"skills\":[", "{\"skills\":[{\"tags\":"][..]),
        bytes in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut doc = start.as_bytes().to_vec();
        doc.extend(bytes);
        assert_same(&doc);
    }
}
