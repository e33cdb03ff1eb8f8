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

#[test]
fn the_assignment_gate_reads_every_blank_the_pattern_reads_and_a_line_may_open_with_its_sign() {
    let id = "secret.assignment";
    // The pattern's `\s` takes a form feed or vertical tab before the `=`.
    for blank in ["\x0c", "\x0b", " \t"] {
        assert_severity(&format!("API_KEY{blank}= {VALUE}\n"), id, Medium);
    }
    // A sign that opens the line has no name before it.
    assert_absent("=== API_KEY ===\n", id);
    assert_absent(": secret and token\n", id);
}

#[test]
fn a_camel_case_name_is_split_at_its_capitals() {
    let id = "secret.assignment";
    for name in ["clientSecret", "dbPassword", "authToken"] {
        assert_severity(&format!("{{\"{name}\": \"{VALUE}\"}}\n"), id, Medium);
    }
    // A digit ends a word too: `s3Key` is an object's key, `x3Key` a key.
    assert_absent(&format!("s3Key: {VALUE}\n"), id);
    assert_severity(&format!("x3Key: {VALUE}\n"), id, Medium);
}

#[test]
fn a_bare_key_needs_twenty_characters_and_four_bits_each() {
    let id = "secret.assignment";
    // `key`, `auth` or `pat` alone: a map's key unless the value is strong.
    assert_severity(&format!("key: {}\n", &VALUE[..20]), id, Medium);
    assert_absent(&format!("key: {}\n", &VALUE[..19]), id);
    // 20 characters of 3.5 bits: a key for `api_key`, not for a bare `key`.
    let weak = "Qm7xTz4pWv9kQm7xTz4p";
    assert_absent(&format!("key: {weak}\n"), id);
    assert_severity(&format!("api_key: {weak}\n"), id, Medium);
    // A placeholder under a bare name names a map's key.
    assert_absent("key: password\n", id);
    assert_absent("auth: changeme\n", id);
    assert_severity("api_key: changeme\n", id, Low);
}

#[test]
fn a_password_without_a_digit_needs_a_sign() {
    let id = "secret.assignment";
    assert_severity("DB_PASSWORD=Qmxtz!pwvK\n", id, Medium);
    assert_absent("DB_PASSWORD=QmxtzApwvK\n", id);
}

#[test]
fn a_key_block_is_live_with_forty_characters_of_base64_or_an_encryption_header() {
    let id = "secret.private-key";
    let block = |next: &str| {
        format!("```\n-----BEGIN RSA PRIVATE KEY-----\n{next}\n-----END RSA PRIVATE KEY-----\n```\n")
    };
    let material = [VALUE, "+/Ab12Cd"].concat();
    assert_eq!(material.len(), 40);
    assert_severity(&block(&material), id, Medium);
    assert_severity(&block(&material[..39]), id, Low);
    assert_severity(&block("Proc-Type: 4,ENCRYPTED"), id, Medium);
    assert_severity(&block("Proc-Type 4,ENCRYPTED"), id, Low);
}

#[test]
fn placeholders_at_each_criterion_and_its_edge() {
    use super::values::is_placeholder as p;
    // One criterion each: six of one character, six rising, six falling;
    // eight characters of three kinds; sixteen of under three bits.
    for v in ["aaaaaa", "abcdef", "fedcba", "abababab", "abacadaeafagahaa"] {
        assert!(p(v), "{v}");
    }
    // One short of each: falling by more than one, seven of two kinds,
    // four kinds in eight, fifteen of low entropy, sixteen of exactly three
    // bits.
    for v in ["zwtqnk", "abababa", "abcdabca", "abacadaeafagaha", "acegikmoacegikmo"] {
        assert!(!p(v), "{v}");
    }
}

#[test]
fn references_code_and_base64_text_at_their_edges() {
    use super::values::{base64_text, base64url, is_code, is_reference};
    assert!(is_reference("%A%") && is_reference("$X") && is_reference("secrets.X"));
    for v in ["%%", "%abc", "abc%", "A%B"] {
        assert!(!is_reference(v), "{v}");
    }
    for (v, name) in [
        ("token", "db.token"),
        ("token", "db-token"),
        ("settings.SECRET_KEY", "x"),
        ("_cfg.token", "x"),
        ("hmac_sign(k3y", "x"),
        ("get()", "x"),
    ] {
        assert!(is_code(v, name), "{v} for {name}");
    }
    for v in ["9cfg.token", "cfg.tok-en", "CFG.TOKEN", "cfgtoken", "cfg..token"] {
        assert!(!is_code(v, "x"), "{v}");
    }
    assert_eq!(base64url(b"-_+/"), [0xfb, 0xff, 0xbf]);
    assert_eq!(base64url(b"MDEy"), b"012");
    assert_eq!(base64_text("dGVzdDEy").as_deref(), Some("test12"));
    assert_eq!(base64_text("dGVz"), None, "under eight characters");
    assert_eq!(base64_text("dGVzdDEyMw"), None, "not a multiple of four");
    assert_eq!(base64_text("AAECAwQFBgc="), None, "not printable");
    assert_eq!(base64_text("dGVzdCAx"), Some("test 1".to_string()), "a space is text");
}
