use super::*;

fn strip(body: &str) -> String {
    super::strip(&PermissionPolicy { extra_keys: vec!["model".into()], ..Default::default() }, body)
}

#[test]
fn strips_scalar_list_and_map_entries_and_keeps_the_rest() {
    let body = "---\nname: a\nallowed-tools:\n- Bash\n- Write\ndescription: d\nhooks:\n  Stop:\n    - command: x\n\n\
                model: opus\nlicense: MIT\n---\n# a\n\nallowed-tools: in the body stays\n";
    let out = strip(body);
    assert_eq!(
        out,
        "---\nname: a\ndescription: d\nlicense: MIT\n---\n# a\n\nallowed-tools: in the body stays\n"
    );
}

#[test]
fn a_body_without_grants_is_unchanged() {
    let body = "---\nname: a\ndescription: d\nmetadata:\n  allowed-tools: not top level\n---\nx\n";
    assert_eq!(strip(body), body);
    assert_eq!(strip("no frontmatter\n",), "no frontmatter\n");
}

#[test]
fn quoted_keys_are_grants_too() {
    let out = strip("---\nname: a\ndescription: d\n\"allowed-tools\": Bash\n---\nx\n");
    assert_eq!(out, "---\nname: a\ndescription: d\n---\nx\n");
}

#[test]
fn a_layout_that_cannot_be_edited_falls_back_to_name_and_description() {
    // A key written as an explicit mapping key: no line starts with it.
    let body = "---\nname: a\ndescription: d\n? hooks\n: {Stop: [x]}\n---\nbody\n";
    assert_eq!(
        PermissionPolicy::default().grants(body),
        [Grant { key: "hooks".into(), value: "Stop".into() }]
    );
    let out = strip(body);
    assert!(!out.contains("hooks") && !out.contains("Stop"), "{out}");
    let doc = skill_doc::parse(&out).expect("parses").frontmatter.expect("a frontmatter");
    assert_eq!((doc.name.as_deref(), doc.description.as_deref()), (Some("a"), Some("d")));
    assert!(out.ends_with("---\nbody\n"));
}

#[test]
fn grants_name_their_values_in_one_line() {
    let policy = PermissionPolicy { extra_keys: vec!["model".into()], ..Default::default() };
    let body = "---\nname: a\nallowed-tools: Bash, Write\nhooks:\n  PreToolUse: []\n  Stop: []\nmodel: opus\n---\nx\n";
    let named: Vec<String> = policy.grants(body).iter().map(ToString::to_string).collect();
    assert_eq!(named, ["allowed-tools: Bash, Write", "hooks: PreToolUse, Stop", "model: opus"]);
    assert!(PermissionPolicy::default().grants(body).iter().all(|g| g.key != "model"), "not configured");
}

#[test]
fn keep_from_trusted_needs_the_origin_itself_at_the_trust_level() {
    let peer =
        |instance: &str, trust| PeerTrust { url: "http://p".into(), instance: Some(instance.into()), trust };
    let policy = PermissionPolicy {
        mode: ReceivedPermissions::KeepFromTrusted,
        peers: vec![peer("trusted", 0.9), peer("low", 0.899)],
        ..Default::default()
    };
    assert!(policy.keeps("trusted", None), "at the level");
    assert!(!policy.keeps("low", None), "just below it");
    assert!(!policy.keeps("relayed-by-trusted", None), "not a configured origin");
    let strip_all = PermissionPolicy { mode: ReceivedPermissions::Strip, ..policy.clone() };
    assert!(!strip_all.keeps("trusted", None));
}

#[test]
fn modes_parse_and_name_the_choices_when_wrong() {
    assert_eq!("keep-from-trusted".parse(), Ok(ReceivedPermissions::KeepFromTrusted));
    assert_eq!("refuse".parse(), Ok(ReceivedPermissions::Refuse));
    let err = "keep".parse::<ReceivedPermissions>().unwrap_err();
    assert!(err.contains("\"strip\", \"keep-from-trusted\" or \"refuse\""), "{err}");
}

#[test]
fn a_key_written_with_escapes_is_a_grant_though_its_text_is_not_there() {
    // `\u002d` is `-`: the frontmatter never spells `allowed-tools` out, so
    // only the YAML read finds it; the short-cut must not skip that read.
    let body = "---\nname: a\ndescription: d\n\"allowed\\u002dtools\": Bash\n---\nx\n";
    assert!(!body.contains("allowed-tools"));
    assert_eq!(
        PermissionPolicy::default().grants(body),
        [Grant { key: "allowed-tools".into(), value: "Bash".into() }]
    );
    let extra = PermissionPolicy { extra_keys: vec!["model".into()], ..Default::default() };
    let body = "---\nname: a\ndescription: d\n\"mo\\x64el\": opus\n---\nx\n";
    assert_eq!(extra.grants(body), [Grant { key: "model".into(), value: "opus".into() }]);
}

#[test]
fn a_frontmatter_naming_no_grant_key_has_no_grants() {
    let body =
        "---\nname: a\ndescription: tools allowed here\nlicense: MIT\n---\nallowed-tools: in the body\n";
    assert_eq!(PermissionPolicy::default().grants(body), []);
}
