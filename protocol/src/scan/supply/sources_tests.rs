//! Edges of `sources.rs` that the session-25 whole-file sweep (#27) found
//! unpinned: the ecosystem's own registry over plain http, and a Go
//! replacement by a module path with no host.

use super::*;

fn worst(line: &str) -> Option<Severity> {
    sources(line, std::iter::empty()).iter().map(|o| o.severity).max()
}

#[test]
fn the_registry_itself_over_plain_http_is_a_source_to_refuse() {
    assert_eq!(worst("source \"https://rubygems.org\""), None);
    assert_eq!(worst("source \"http://rubygems.org\""), Some(Severity::High));
    assert_eq!(worst("source \"HTTP://rubygems.org\""), Some(Severity::High));
}

#[test]
fn a_replacement_by_a_path_with_no_host_fetches_nothing() {
    assert_eq!(worst("replace example.com/a => mymod/a"), None);
    assert_eq!(worst("replace example.com/a => ./vendor.d/a"), None);
    assert_eq!(worst("replace example.com/a => git.evil.example/a v1.0.0"), Some(Severity::High));
}

#[test]
fn a_url_with_a_character_across_its_seventh_byte_is_read_without_a_panic() {
    // `ftp://é…`: the scheme test's seven bytes end inside `é`.
    assert_eq!(worst("source \"ftp://é.evil.example\""), Some(Severity::High));
}
