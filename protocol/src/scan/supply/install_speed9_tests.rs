//! `runs_a_package` held to the four searches it replaced (#14's speed,
//! ninth pass).

use super::*;
use proptest::prelude::*;

fn runs_a_package_before(b: &[u8]) -> bool {
    ["bunx ", "uvx ", "tool run ", "pipx run "].iter().any(|w| memmem::find(b, w.as_bytes()).is_some())
}

#[test]
fn each_runner_is_found_to_its_last_byte() {
    for line in ["bunx x", "uvx ruff", "uv tool run ruff", "pipx run black", "a bunx ", "uvx "] {
        assert!(runs_a_package(line.as_bytes()), "{line}");
    }
    // One byte short of each, and a runner's `x` at the line's start.
    for line in ["bunx", "uvx", "tool run", "pipx run", "pipx ru", "x uvx", "x ", "unx b", "vx a"] {
        assert_eq!(runs_a_package(line.as_bytes()), runs_a_package_before(line.as_bytes()), "{line}");
    }
    assert!(runs_a_package(b"x uvx ") && !runs_a_package(b"BUNX x"));
}

proptest! {
    #[test]
    fn it_agrees_with_the_searches(line in "(bun|uv|pip|x| |run|tool|ru|n|X){0,10}") {
        prop_assert_eq!(runs_a_package(line.as_bytes()), runs_a_package_before(line.as_bytes()));
    }
}

/// The replaced subcommand test: the word before found once per installer.
fn subcommand_before(b: &[u8]) -> bool {
    let at_word_end = |at: usize, len: usize| b.get(at + len).is_none_or(|c| !c.is_ascii_alphanumeric());
    INSTALL.find_iter(b).map(|at| (at, 7)).chain(ADD.find_iter(b).map(|at| (at, 3))).any(|(at, len)| {
        at_word_end(at, len) && BEFORE_SUBCOMMAND.iter().any(|w| w.as_bytes() == word_before(b, at))
    })
}

proptest! {
    #[test]
    fn the_installer_gate_agrees_with_a_word_per_installer(
        line in "(pip|pip3.11|uv|npm|go|tool|apt|install|add|adds| |`|np|x){0,8}",
    ) {
        let b = line.as_bytes();
        let rest = NP.find_iter(b).any(|at| {
            let r = &b[at..];
            r.starts_with(b"npx ") || r.starts_with(b"npm i") || r.starts_with(b"npm exec") || r.starts_with(b"npm dlx")
        }) || runs_a_package_before(b);
        prop_assert_eq!(names_an_installer(b), subcommand_before(b) || rest);
    }
}
