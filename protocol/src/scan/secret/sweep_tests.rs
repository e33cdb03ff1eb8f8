//! Edges of the secret family that the session-28 sweep found unpinned
//! (#27): the header rule's gate and the values it leaves to other rules,
//! a JWT header that names only one of `alg` and `typ`, the URL hosts kept
//! for documentation, the assignment rule's text (its variable's name and
//! the value's length without its quotes), a quoted keyword, and a value
//! that calls something. Every credential here is made up.

use crate::scan::Severity::{Low, Medium};
use crate::scan::testutil::{assert_absent, assert_hit, assert_severity};
use crate::scan::{Category::Secret, Scanner};

/// 32 characters: letters and digits, no placeholder word, no run.
const VALUE: &str = "Qm7xTz4pWv9kLr2nB8cYd3FhJ6gKs1Ma";

#[test]
fn the_header_rule_reads_no_template_or_bracketed_value() {
    let id = "secret.auth-header";
    // Without the gate each is a finding: `<…>` a placeholder (Low), `{…}`
    // a value strong enough to be live (Medium).
    assert_absent("Authorization: Bearer <your-token>\n", id);
    assert_absent("Authorization: Bearer {Qm7xTz4pWv9kLr2nB8c}\n", id);
    // The neighbour: the same value, written as it is, is a credential.
    assert_severity("Authorization: Bearer Qm7xTz4pWv9kLr2nB8c\n", id, Medium);
}

#[test]
fn the_header_rule_leaves_a_claimed_token_to_its_rule_and_a_reference_alone() {
    let id = "secret.auth-header";
    let token = ["ghp_", &VALUE[..32], "Ab12"].concat();
    let body = format!("Authorization: token {token}\n");
    assert_severity(&body, "secret.github-token", Medium);
    assert_absent(&body, id);
    // `secrets.` reads the value from a CI's store: a reference, not a value
    // (long, random-looking and holding a digit, it would be live).
    assert_absent("Authorization: Bearer secrets.DEPLOY_TOKEN_2\n", id);
    assert_severity("Authorization: Bearer secretsDEPLOYTOKEN2xyz\n", id, Medium);
}

#[test]
fn a_jwt_header_with_alg_or_typ_alone_is_a_token() {
    let id = "secret.jwt";
    let token = |header: &str| format!("SESSION={header}.eyJzdWIiOiI0MiIsImlhdCI6MTcwMDAwMDAwMH0.{VALUE}\n");
    // {"alg":"RS256","kid":"k1"}
    assert_severity(&token("eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0"), id, Medium);
    // {"typ":"JWT","kid":"k1"}
    assert_severity(&token("eyJ0eXAiOiJKV1QiLCJraWQiOiJrMSJ9"), id, Medium);
    // {"kid":"k1","cty":"x"}: neither, no token.
    assert_absent(&token("eyJraWQiOiJrMSIsImN0eSI6IngifQ"), id);
}

#[test]
fn a_url_password_on_a_documentation_host_is_an_example() {
    let id = "secret.url-password";
    let url = |host: &str| format!("git clone https://deploy:Qm7xTz4pWv9kLr2n@{host}/org/repo.git\n");
    for host in ["git.example.com", "example.org", "git.example"] {
        let f = assert_hit(&url(host), id, Secret, Low, 1);
        assert!(f.excerpt.ends_with("looks like a documented example"), "{host}: {}", f.excerpt);
    }
    for host in ["example.net", "git.examples"] {
        assert_severity(&url(host), id, Medium);
    }
}

#[test]
fn an_assignment_names_its_variable_and_counts_the_value_without_its_quotes() {
    let id = "secret.assignment";
    let want = "secret value for API_KEY (32 chars)";
    for body in [
        format!("API_KEY={VALUE}\n"),
        format!("API_KEY=\"{VALUE}\"\n"),
        format!("API_KEY='{VALUE}'\n"),
        // Unquoted, its first and last characters the same.
        format!("API_KEY=Q{}Q\n", &VALUE[1..31]),
    ] {
        assert_eq!(assert_hit(&body, id, Secret, Medium, 1).excerpt, want, "{body}");
    }
}

#[test]
fn a_quoted_keyword_is_a_setting_and_a_quoted_default_a_placeholder() {
    let id = "secret.assignment";
    // Without its quotes `null` is a keyword; read with the closing quote it
    // would be a default password (`null` and one character more).
    assert_absent("API_KEY=\"null\"\n", id);
    assert_absent("API_KEY='none'\n", id);
    assert_severity("API_KEY=\"nullx\"\n", id, Low);
}

#[test]
fn a_value_that_calls_something_is_code() {
    let id = "secret.assignment";
    // Unquoted, with a `(` but no `()` at its end and no dotted name: a
    // call whose arguments the value stops at.
    assert_absent("client_secret = hmac_sign(k3y_material, salt)\n", id);
    // The neighbour without the bracket is a value.
    assert_severity("client_secret = hmac_sign_k3y_material\n", id, Medium);
    assert!(Scanner::standard().scan("client_secret = hmac_sign_k3y_material\n").has_secrets());
}
