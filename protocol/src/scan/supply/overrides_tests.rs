//! Edges of `overrides.rs` that the session-25 whole-file sweep (#27) found
//! unpinned: which Go module patterns cover every public module, which
//! `GOPROXY` entries are no source, and which `GOSUMDB` and `GOFLAGS`
//! values turn the checksum database off.

use super::*;

fn worst(line: &str) -> Option<Severity> {
    overrides(line).iter().map(|o| o.severity).max()
}

#[test]
fn a_pattern_covers_public_modules_with_a_star_or_a_code_host_alone() {
    assert_eq!(worst("export GONOSUMDB=*"), Some(Severity::Medium));
    assert_eq!(worst("export GONOSUMDB=*.example.com"), Some(Severity::Medium));
    assert_eq!(worst("export GOPRIVATE=github.com/*"), Some(Severity::Medium));
    // One organisation's host, or a path on a code host: not every module.
    assert_eq!(worst("export GOPRIVATE=git.corp.example"), None);
    assert_eq!(worst("export GONOPROXY=gitlab.com/acme"), None);
}

#[test]
fn direct_and_off_in_goproxy_are_no_source() {
    assert_eq!(worst("export GOPROXY=direct"), None);
    assert_eq!(worst("export GOPROXY=off"), None);
    assert_eq!(worst("export GOPROXY=https://proxy.golang.org|direct"), None);
    assert_eq!(worst("export GOPROXY=goproxy.evil.example,direct"), Some(Severity::High));
}

#[test]
fn gosumdb_is_off_unless_empty_or_the_official_database() {
    assert_eq!(worst("export GOSUMDB=sum.golang.org"), None);
    assert_eq!(
        worst("export GOSUMDB=sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8"),
        None
    );
    assert_eq!(worst("export GOSUMDB="), None);
    assert_eq!(worst("export GOSUMDB=sum.evil.example"), Some(Severity::High));
}

#[test]
fn goflags_turn_checks_off_only_with_insecure() {
    assert_eq!(worst("export GOFLAGS=-insecure"), Some(Severity::High));
    assert_eq!(worst("export GOFLAGS=-mod=mod"), None);
}

#[test]
fn plain_http_is_read_from_the_scheme_in_any_case() {
    assert_eq!(worst("pip install -i HTTP://pypi.org/simple requests"), Some(Severity::High));
    assert_eq!(worst("pip install -i https://pypi.org/simple requests"), None);
}

#[test]
fn a_url_with_a_character_across_its_seventh_byte_is_read_without_a_panic() {
    // `ftp://é…`: the scheme test's seven bytes end inside `é`.
    assert_eq!(worst("pip install -i ftp://é.evil.example/simple acme"), Some(Severity::High));
}
