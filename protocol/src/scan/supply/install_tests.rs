//! Edges of `install.rs` that the session-25 whole-file sweep (#27) found
//! unpinned: where an argument starts on the line (the offset a finding
//! and its warning check read), which tokens end an argument list, which
//! flags take a value in which installer, which URLs are git repositories,
//! which names are no registry names, and which installers and runners
//! are read at all.

use super::tests::names;
use super::*;

fn offsets(line: &str) -> Vec<usize> {
    install_args(line).iter().map(|a| a.at).collect()
}

fn none() -> Vec<String> {
    Vec::new()
}

#[test]
fn an_argument_starts_at_its_first_byte_past_its_quote() {
    assert_eq!(offsets("pip install reqeusts"), [12]);
    assert_eq!(offsets("pip install 'reqeusts' \"lodahs\""), [13, 24]);
    assert_eq!(offsets("Run `npm i lodahs` now"), [11]);
}

#[test]
fn inline_code_a_substitution_or_a_semicolon_ends_the_list() {
    // A token that opens inline code or a substitution starts something else.
    assert_eq!(names("pip install rich `black`"), ["rich"]);
    assert_eq!(names("pip install rich $(cat extra.txt)"), ["rich"]);
    // A token that closes inline code, or a lone closing backtick.
    assert_eq!(names("Run `pip install rich` twice"), ["rich"]);
    assert_eq!(names("`pip install rich ` twice"), ["rich"]);
    // A command ended by `;` or `)`.
    assert_eq!(names("pip install rich; ls"), ["rich"]);
    assert_eq!(names("(pip install rich) ls"), ["rich"]);
}

#[test]
fn separators_are_pipes_lists_and_redirections() {
    for sep in ["&&", "||", "|", ";", "&", "then", "do", "#", "\\", ">log", "2>&1", "<in.txt"] {
        assert!(is_separator(sep), "{sep}");
    }
    for word in ["rich", "-2", "x>y", "2", "do-it"] {
        assert!(!is_separator(word), "{word}");
    }
    assert_eq!(names("pip install rich >log extra"), ["rich"]);
    assert_eq!(names("pip install rich 2>err extra"), ["rich"]);
}

#[test]
fn each_installer_skips_its_own_flags_values() {
    assert_eq!(names("npm install --workspace web lodahs"), ["lodahs"]);
    assert_eq!(names("cargo install --bin rg ripgrep"), ["ripgrep"]);
    assert_eq!(names("gem install --version 7.1 rails"), ["rails"]);
    assert_eq!(names("pip install --target vendor requests"), ["requests"]);
    // A value joined with `=` is no separate word.
    assert_eq!(names("pip install --index-url=https://x.example/simple requests"), ["requests"]);
}

#[test]
fn a_url_is_a_git_repository_by_each_of_its_marks() {
    let git = |line: &str| -> Vec<bool> {
        install_args(line)
            .into_iter()
            .filter_map(|a| match a.target {
                Target::Url { git, .. } => Some(git),
                _ => None,
            })
            .collect()
    };
    assert_eq!(git("pip install git+https://git.example.dev/a/b@v1"), [true]);
    assert_eq!(git("pip install git://git.example.dev/a/b"), [true]);
    assert_eq!(git("pip install https://git.example.dev/a/b.git@v1"), [true]);
    assert_eq!(git("pip install https://git.example.dev/a/b.git"), [true]);
    assert_eq!(git("pip install https://git.example.dev/a/b.tar.gz"), [false]);
}

#[test]
fn paths_archives_and_empty_or_odd_names_are_no_registry_names() {
    // A path's first element is no package.
    assert_eq!(names("pip install docs/requirements"), none());
    // A version with no name before it.
    assert_eq!(names("pip install ==1.0"), none());
    // A byte no npm name holds.
    assert_eq!(names("npm i lodash#semver lodahs"), ["lodahs"]);
    assert_eq!(names("pip install pkg.zip pkg.tar.gz && gem install x.gem"), none());
}

#[test]
fn the_cheap_test_wants_the_whole_subcommand_and_every_runner() {
    assert!(!names_an_installer(b"pip installs nothing"));
    assert!(!names_an_installer(b"npm adds"));
    for line in ["npm i lodahs", "npm exec cowsay", "pnpm dlx cowsay", "bunx cowsay", "uvx ruff"] {
        assert!(names_an_installer(line.as_bytes()), "{line}");
    }
}

#[test]
fn every_installer_and_runner_is_read() {
    assert_eq!(names("yarn add lodahs"), ["lodahs"]);
    assert_eq!(names("pipx install reqeusts && pipenv install flask"), ["reqeusts", "flask"]);
    assert_eq!(names("uv tool install reqeusts"), ["reqeusts"]);
    assert_eq!(names("uv tool uninstall reqeusts"), none());
    assert_eq!(names("pip3 install reqeusts"), ["reqeusts"]);
    // `npm exec`, `pnpm dlx` and `yarn dlx` run their first argument only.
    // (`yarn dlx` alone reaches neither the family's triggers nor the cheap
    // test: it is read on a line that another installer sends here.)
    for runner in ["npm exec", "pnpm dlx", "npm i && yarn dlx"] {
        assert_eq!(names(&format!("{runner} cowsay lodahs")), ["cowsay"], "{runner}");
    }
}

#[test]
fn an_installer_that_closes_inline_code_has_no_arguments() {
    assert_eq!(names("After `npm install`, lodahs runs."), none());
}

#[test]
fn a_flags_value_that_ends_inline_code_starts_no_command() {
    // `pip` is the requirement file's name here, and the list ends after it.
    assert_eq!(names("`pip install -r pip` install reqeusts"), none());
}

#[test]
fn a_runners_program_is_not_read_as_an_installer_of_its_own() {
    // "`npx` runs its first argument; the rest are that program's."
    assert_eq!(names("npx pnpm add lodahs"), ["pnpm"]);
}

#[test]
fn cargos_git_source_is_found_where_its_url_starts() {
    let line = "cargo install --git  https://git.example.dev/tool";
    assert_eq!(offsets(line), [line.find("https").unwrap()]);
    let line = "cargo install --git=https://git.example.dev/tool ripgrep";
    let args = install_args(line);
    assert_eq!(args[0].target, Target::Url { url: "https://git.example.dev/tool", git: true });
    assert_eq!(args[0].at, line.find("https").unwrap());
    let line = "cargo install --git=https://git.example.dev/tool";
    assert_eq!(offsets(line), [line.find("https").unwrap()]);
}
