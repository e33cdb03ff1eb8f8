//! `message`'s name in words, copied a piece between dashes at a time,
//! held to the char-by-char copy it replaced (#14's throughput, tenth
//! pass).

use super::*;
use proptest::prelude::*;

fn message_before(rule_id: &str, category: Category) -> String {
    let name = rule_id.split_once('.').map_or(rule_id, |(_, n)| n);
    let mut m: String = name.chars().map(|c| if c == '-' { ' ' } else { c }).collect();
    m.push_str(": ");
    m.push_str(category.why());
    m
}

#[test]
fn dashes_at_either_end_and_in_a_row_are_each_a_space() {
    for id in ["shell.rm-rf-root", "x.-a", "x.a-", "x.--", "x.", "nodot", "a.b.c-d", "x.é-ü", "-"] {
        assert_eq!(
            message(id, Category::DestructiveShell),
            message_before(id, Category::DestructiveShell),
            "{id}"
        );
    }
    assert_eq!(
        message("shell.rm-rf-root", Category::Secret),
        "rm rf root: a credential written into the skill"
    );
}

proptest! {
    #[test]
    fn says_what_the_char_copy_said(id in r"[a-z.\-é ]{0,24}") {
        prop_assert_eq!(message(&id, Category::Exfiltration), message_before(&id, Category::Exfiltration));
    }
}
