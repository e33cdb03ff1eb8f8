//! Edges of the host classes that a whole-file mutation sweep found
//! unpinned (#27, session 24): what counts as a URL, and which IPv6
//! addresses are a private network's.

use super::*;

#[test]
fn a_url_is_a_colon_followed_by_two_slashes() {
    assert!(has_url("see https://h.example/x"));
    assert!(has_url("://h.example at the start"));
    // A colon, and two slashes elsewhere, make no URL.
    assert!(!has_url("a:b //c"));
    assert!(!has_url("host:8080/path"));
}

#[test]
fn loopback_and_unique_local_ipv6_hosts_are_internal() {
    assert_eq!(classify("::1"), Host::Internal);
    // fc00::/7: both halves.
    assert_eq!(classify("fc00::5"), Host::Internal);
    assert_eq!(classify("fd12:3456::1"), Host::Internal);
    // Global and link-local-looking neighbours are not.
    assert_eq!(classify("2001:db8::1"), Host::Other);
    assert_eq!(classify("fe00::1"), Host::Other);
    assert_eq!(classify("fb00::1"), Host::Other);
}

#[test]
fn loopback_and_link_local_ipv4_hosts_are_internal() {
    assert_eq!(classify("127.0.0.1"), Host::Internal);
    assert_eq!(classify("169.254.10.1"), Host::Internal);
    assert_eq!(classify("192.168.1.2"), Host::Internal);
}
