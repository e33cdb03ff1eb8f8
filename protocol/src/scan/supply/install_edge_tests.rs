//! `install.rs` edges the session-27 reading of `installer`'s mutants
//! (#27) found unpinned: `yarn global add` installs what follows it, and
//! `yarn global` with any other subcommand installs nothing. `uv tool
//! run` and `pipx run` install what they run (t8's noted gap).

use super::tests::names;
use super::*;

#[test]
fn yarn_global_installs_only_with_add() {
    assert_eq!(names("yarn global add lodahs"), ["lodahs"]);
    // `npm i` lets the line through the cheap test (which `yarn global
    // remove` alone does not pass), so `installer` reads the yarn words.
    assert!(names_an_installer(b"npm i && yarn global remove lodahs"));
    assert_eq!(names("npm i && yarn global remove lodahs"), Vec::<String>::new());
    // The arm's three words, and its offset past them.
    assert_eq!(install_args("yarn global add lodahs").iter().map(|a| a.at).collect::<Vec<_>>(), [16]);
}

#[test]
fn uv_tool_installs_only_with_install() {
    // Session 25's `uv tool uninstall reqeusts` never reached `installer`:
    // `un` before `install` fails the cheap test. Here `pip install`
    // lets the line through, and `uv tool uninstall` must still name
    // nothing.
    assert!(names_an_installer(b"pip install rich && uv tool uninstall reqeusts"));
    assert_eq!(names("pip install rich && uv tool uninstall reqeusts"), ["rich"]);
    assert_eq!(names("pip install rich && uv tool install reqeusts"), ["rich", "reqeusts"]);
}

#[test]
fn uv_tool_run_and_pipx_run_install_their_first_argument_only() {
    for runner in ["uv tool run", "pipx run"] {
        let line = format!("{runner} reqeusts --version");
        assert!(names_an_installer(line.as_bytes()), "{line}");
        assert_eq!(names(&line), ["reqeusts"], "{line}");
        // The runner's first argument only: the rest are the program's.
        assert_eq!(names(&format!("{runner} reqeusts lodahs")), ["reqeusts"], "{runner}");
    }
    // `uv tool install` reads every argument (the `--in-diff` run: `&&` →
    // `||` in the runner's test made it read the first only).
    assert_eq!(names("uv tool install reqeusts lodahs"), ["reqeusts", "lodahs"]);
    // One word short of the arm: `uv tool` alone, `uv run` (the project's
    // own script), `pipx list` install nothing.
    assert!(!names_an_installer(b"uv tool list reqeusts"));
    assert_eq!(names("pip install rich && uv tool list reqeusts"), ["rich"]);
    assert_eq!(names("pip install rich && uv run reqeusts"), ["rich"]);
    assert_eq!(names("pip install rich && pipx list reqeusts"), ["rich"]);
}
