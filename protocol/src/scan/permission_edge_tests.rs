//! `permission.rs` at its edges (session 26's sweep, docs/mutation-testing.md):
//! a quoted key or entry is still a grant, and the frontmatter ends at its
//! closing fence, whether ECP parses it or not; the body's first line is
//! body.

use crate::scan::Category::PermissionGrant;
use crate::scan::Severity::Info;
use crate::scan::testutil::{assert_absent, assert_hit, on_line};

#[test]
fn a_quoted_key_is_still_the_key() {
    let body = "---\nname: x\ndescription: y\n\"allowed-tools\": Bash\n---\nbody\n";
    assert_hit(body, "perm.unrestricted-shell", PermissionGrant, Info, 4);
    let body = "---\nname: x\ndescription: y\n'hooks':\n  Stop: [echo]\n---\nbody\n";
    assert_hit(body, "perm.hooks", PermissionGrant, Info, 4);
}

#[test]
fn the_bodys_first_line_is_no_frontmatter() {
    // The body starts at the byte where the frontmatter's lines end.
    let body = "---\nname: x\ndescription: y\n---\nhooks:\n  - id: fmt\n";
    assert_absent(body, "perm.hooks");
    let body = "---\nname: x\ndescription: y\nhooks:\n  Stop: [echo]\n---\nhooks:\n";
    assert_eq!(on_line(body, "perm.hooks", 4), [Info]);
    assert!(on_line(body, "perm.hooks", 7).is_empty());
}

#[test]
fn a_frontmatter_that_does_not_parse_ends_at_its_closing_fence() {
    // A duplicated key ECP reads fails the parse; the grant is read from its
    // line, the body below the fence is no frontmatter.
    let body = "---\nname: x\nname: y\nhooks:\n  Stop: [echo]\n---\nhooks:\n";
    assert_eq!(on_line(body, "perm.hooks", 4), [Info]);
    assert!(on_line(body, "perm.hooks", 7).is_empty());
    // YAML's other end-of-document marker closes it too.
    let body = "---\nname: x\nname: y\n...\nhooks:\n  - id: fmt\n";
    assert_absent(body, "perm.hooks");
}

#[test]
fn quoted_entries_of_a_grant_read_from_its_line_are_the_tools() {
    // The parse fails, so the list is split from the line with its quotes.
    let body = "---\nname: x\nname: y\nallowed-tools: \"Bash\", 'Write'\n---\nbody\n";
    assert_hit(body, "perm.unrestricted-shell", PermissionGrant, Info, 4);
    assert_hit(body, "perm.unrestricted-write", PermissionGrant, Info, 4);
}
