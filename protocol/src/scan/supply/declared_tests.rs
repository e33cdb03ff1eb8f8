//! Edges of the declared-name analyzer that a whole-file mutation sweep
//! found unpinned (#27, session 24): an owned namespace raises only a
//! look-alike inside it, a version after an MCP server's name is not part
//! of it, and an image reference is read without a panic.

use crate::scan::Severity::{High, Medium};
use crate::scan::testutil::{assert_absent, assert_severity};

const SQUAT: &str = "supply.typosquat";

fn workflow(uses: &str) -> String {
    format!("```yaml\nsteps:\n  - uses: {uses}@v4\n```\n")
}

#[test]
fn two_edits_are_high_only_in_a_namespace_its_publisher_owns() {
    // `actions/` is owned: a near name there is High at two edits.
    assert_severity(&workflow("actions/setup-nodejs"), SQUAT, High);
    // `codecov/` is nobody's but codecov's too, yet not in the owned list:
    // two edits are Medium.
    assert_severity(&workflow("codecov/codecov-actionxx"), SQUAT, Medium);
    // Two edits away from an owned name, but in another namespace: Medium.
    assert_severity(&workflow("actionsx/setup-nod"), SQUAT, Medium);
}

#[test]
fn an_mcp_servers_version_is_not_part_of_its_name() {
    let cfg = |name: &str| {
        format!(
            "```json\n{{\"mcpServers\": {{\"gh\": {{\n  \"command\": \"npx\",\n  \"args\": [\"-y\", \"{name}\"]\n}}}}}}\n```\n"
        )
    };
    assert_absent(&cfg("@modelcontextprotocol/server-github@1.0.0"), SQUAT);
    assert_severity(&cfg("@modelcontextprotocol/server-githbu@1.0.0"), SQUAT, High);
}

#[test]
fn an_image_reference_that_starts_with_a_slash_is_read() {
    assert_absent("```dockerfile\nFROM /pyth0n:3.12\n```\n", SQUAT);
    assert_severity("```dockerfile\nFROM docker.io/library/pyth0n:3.12\n```\n", SQUAT, High);
}
