//! `runs.rs` edges the session-28 reading of the mutants of session 27's
//! forms (#27: `is_cmd_switch`, `is_companion_module`,
//! `mentions_module_run`) found unpinned: a `cmd` switch is a slash and
//! one letter, nothing shorter or longer; a module of the skill's
//! folders has a name after its folder's dot, dotted or with `_`, never
//! `-`; `-m` is read for Python only.

use super::{is_cmd_switch, is_companion_module, runs};

#[test]
fn a_cmd_switch_is_a_slash_and_one_letter() {
    for w in ["/c", "/K", "/q"] {
        assert!(is_cmd_switch(w), "{w}");
    }
    // A digit after the slash, two letters, no slash, one byte, none.
    for w in ["/1", "/cc", "ab", "c/", "x", "/", ""] {
        assert!(!is_cmd_switch(w), "{w}");
    }
}

#[test]
fn a_module_of_the_skills_folders_is_named_after_the_dot() {
    for w in ["tools.setup", "tools.sub.setup", "scripts.sync_notes", "Helpers.Init", "skill_kit.run"] {
        assert!(is_companion_module(w), "{w}");
    }
    // Nothing after the dot, a `-` no module name holds, no dot, and a
    // folder a skill does not bundle code in.
    for w in ["tools.", "tools.my-setup", "tools", "myapp.cli", "http.server"] {
        assert!(!is_companion_module(w), "{w}");
    }
}

#[test]
fn only_python_runs_a_module_with_dash_m() {
    assert_eq!(runs("python3 -m tools.setup"), [("tools.setup", 11)]);
    // `node` has no `-m`: the line names no Python and is not read.
    assert_eq!(runs("node -m scripts.build"), []);
    // No ` -m ` either: nothing to read.
    assert_eq!(runs("python3 tools.setup"), []);
}
