//! `impersonated.rs` edges the session-28 reading of its mutants (#27)
//! found unpinned: each of the three ways a hook repository's owner is
//! built from a popular one's (its owner in it, its repository's name in
//! it, one or two edits from it) alone, the same repository's name as
//! the condition of all three, the four-letter floor of the edit test,
//! and a Helm repository's own host's subdomain.

use super::{helm_repo_elsewhere, impersonated_hook_repo};

fn hook(url: &str) -> Option<usize> {
    impersonated_hook_repo(&format!("  - repo: {url}"))
}

#[test]
fn each_way_an_owner_is_built_from_a_popular_one_counts_alone() {
    // The popular repository's name in the owner (`pycqa/isort`).
    assert_eq!(hook("https://github.com/isort-dev/isort"), Some(29));
    // One edit from the owner, neither name in it.
    assert_eq!(hook("https://github.com/pyqa/isort"), Some(29));
    // The popular owner in it: already pinned (`psf-black/black`).
    assert_eq!(hook("https://github.com/psf-black/black"), Some(29));
}

#[test]
fn an_owner_like_a_popular_one_hosting_another_repository_is_none() {
    // `psf` is in the owner, but `isort` is not `psf/black`.
    assert_eq!(hook("https://github.com/psf-tools/isort"), None);
    // A fork of `pycqa/isort` under an owner nothing like `pycqa`.
    assert_eq!(hook("https://github.com/jdoe/isort"), None);
}

#[test]
fn the_edit_test_reads_owners_of_four_letters_and_more() {
    // `yelp` (4 letters) one edit away: read.
    assert_eq!(hook("https://github.com/yelq/detect-secrets"), Some(29));
    // `psf` (3) one edit away, nothing of it in the owner: too short to tell.
    assert_eq!(hook("https://github.com/psg/black"), None);
}

#[test]
fn a_subdomain_of_the_names_own_host_is_its_own() {
    assert_eq!(helm_repo_elsewhere("helm repo add bitnami https://mirror.charts.bitnami.com/bitnami"), None);
    assert!(
        helm_repo_elsewhere("helm repo add bitnami https://charts.bitnami.com.evil.io/bitnami").is_some()
    );
}
