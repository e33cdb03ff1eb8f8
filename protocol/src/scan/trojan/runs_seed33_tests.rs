//! `runs`' command position after a word that ends in `;` (seed 33's
//! draw: `raw.len() > 1` → `==` survived): `cd /srv; ./tools/setup.sh`
//! runs the script, from the shortest such word on.

use super::*;

#[test]
fn a_word_ending_in_a_semicolon_ends_the_command_before_a_run() {
    assert_eq!(runs("cd /srv/app; ./tools/setup.sh"), [("./tools/setup.sh", 13)]);
    // Two bytes: a word of one character and its `;`.
    assert_eq!(runs("x; ./tools/setup.sh"), [("./tools/setup.sh", 3)]);
    // Without the `;` the path is an argument of `cd`.
    assert_eq!(runs("cd ./tools/setup.sh"), []);
}
