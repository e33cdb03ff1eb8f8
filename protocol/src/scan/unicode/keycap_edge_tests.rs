//! The keycap exception at its edges: a variation selector between a key
//! (a digit, `#` or `*`) and the keycap mark U+20E3 is part of the emoji,
//! and one after any other ASCII character before the mark is hidden.

use crate::scan::testutil::{assert_hit, assert_not_flagged};
use crate::scan::{Category, Severity};

#[test]
fn the_hash_and_star_keycaps_are_emoji_like_the_digits() {
    assert_not_flagged("press #\u{FE0F}\u{20E3} to repeat\n");
    assert_not_flagged("press *\u{FE0F}\u{20E3} for the menu\n");
    assert_not_flagged("press 0\u{FE0F}\u{20E3} for the operator\n");
}

#[test]
fn a_selector_after_another_ascii_character_is_hidden_even_before_a_keycap_mark() {
    assert_hit(
        "press +\u{FE0F}\u{20E3} now\n",
        "unicode.zero-width",
        Category::HiddenUnicode,
        Severity::High,
        1,
    );
    assert_hit(
        "press )\u{FE0F}\u{20E3} now\n",
        "unicode.zero-width",
        Category::HiddenUnicode,
        Severity::High,
        1,
    );
}
