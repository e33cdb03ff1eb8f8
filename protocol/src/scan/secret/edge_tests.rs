//! Edges of the secret family that mutation testing found unpinned (#27):
//! a URL password that repeats the user name, or is a default password,
//! is each on its own a placeholder, on a remote host as well; a base64
//! value is judged by the text it decodes to; a default password keeps
//! at most three characters after it, and each kind of local host is
//! local while its neighbours are not; a bracketed auth header masked from
//! three bytes on, and each kind of path or URL (seed 30).

use crate::scan::Severity::{Low, Medium};
use crate::scan::testutil::{assert_absent, assert_severity};

#[test]
fn a_url_password_equal_to_the_user_or_a_default_is_a_placeholder_on_its_own() {
    let id = "secret.url-password";
    // The user repeated, not a default password.
    assert_severity("DATABASE_URL=postgres://deploy:deploy@db.prod.acme.io:5432/app\n", id, Low);
    // A default password, not the user.
    assert_severity("DATABASE_URL=postgres://deploy:letmein@db.prod.acme.io:5432/app\n", id, Low);
    // Neither: a live password.
    assert_severity("DATABASE_URL=postgres://deploy:Qm7xTz4pWv9kLr2n@db.prod.acme.io:5432/app\n", id, Medium);
}

#[test]
fn an_aws_secret_key_is_left_to_its_own_rule_by_the_generic_assignment_rule() {
    let v = ["Qm7xTz4pWv9k", "Lr2nB8cYd3FhJ6", "gKs1MaPq5ZeRt0"].concat();
    let body = format!("AWS_SECRET_ACCESS_KEY={v}\n");
    assert_severity(&body, "secret.aws-secret-key", Medium);
    assert_absent(&body, "secret.assignment");
}

#[test]
fn a_base64_value_is_judged_by_the_text_it_decodes_to() {
    // A Kubernetes Secret's `data` holds `letmein`, a default password: a
    // placeholder; the same shape holding a strong password is live.
    let secret = |v: &str| format!("apiVersion: v1\nkind: Secret\ndata:\n  password: {v}\n");
    assert_severity(&secret("bGV0bWVpbg=="), "secret.assignment", Low);
    assert_severity(&secret("UW03eFR6NHBXdjlrTHIybg=="), "secret.assignment", Medium);
}

#[test]
fn a_default_password_keeps_up_to_three_characters_after_it_and_no_more() {
    use super::values::is_default_password;
    assert!(is_default_password("password123"), "three past `password`: a default");
    assert!(!is_default_password("password1234"), "four past it: not a default");
    assert!(is_default_password("letmein"));
}

#[test]
fn each_kind_of_local_host_is_local_and_its_neighbours_are_not() {
    use super::values::is_local;
    for host in [
        "localhost",
        "127.0.0.1",
        "0.0.0.0",
        "[::1]",
        "host.docker.internal",
        "db.local",
        "app.localhost",
        "api.test",
        "redis",
    ] {
        assert!(is_local(host), "{host} is local");
    }
    for host in
        ["128.0.0.1", "0.0.0.1", "[::2]", "docker.internal", "db.locale", "db.prod.acme.io", "[2001:db8::1]"]
    {
        assert!(!is_local(host), "{host} is not local");
    }
}

#[test]
fn an_auth_header_value_of_three_bytes_after_a_bracket_is_masked_and_of_two_is_not() {
    use std::borrow::Cow;
    // `<x>` stands for a credential: its excerpt is masked like one.
    assert_eq!(super::mask("Authorization: Bearer <x>"), "Authorization: Bearer ***");
    // `<x` and `<<` are a shell's redirections, no value at all.
    assert!(matches!(super::mask("Authorization: Bearer <x"), Cow::Borrowed(_)));
    assert!(matches!(super::mask("Authorization: Bearer <<"), Cow::Borrowed(_)));
}

#[test]
fn each_kind_of_path_or_url_is_one_and_a_token_is_none() {
    use super::values::looks_like_a_path_or_url as path;
    for v in
        ["/run/secrets/db", "./keys/dev", "../keys/dev", "~/.keys", "s3://bucket/k", "1.2.3-4", "tls.PEM"]
    {
        assert!(path(v), "{v}");
    }
    for v in ["Qm7xTz4pWv9kLr2n", "keys/dev", "a.pem.bak"] {
        assert!(!path(v), "{v}");
    }
}
