//! `controls.rs` at its edges (session 25's sweep): `--no-verify` skips
//! hooks only for git, whether `cargo` or `npm` runs it.

use crate::scan::Severity::*;
use crate::scan::testutil::{assert_absent, assert_severity};

#[test]
fn no_verify_for_npm_alone_skips_no_hook() {
    assert_absent("npm publish --no-verify, then push the tag\n", "control.hooks-off");
    assert_absent("cargo publish --no-verify, then push the tag\n", "control.hooks-off");
    // Another tool's flag is not known to skip only a build check.
    assert_severity("yarn publish --no-verify, then push the tag\n", "control.hooks-off", High);
}
