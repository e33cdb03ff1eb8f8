//! `mounted.rs` edges the session-28 reading of its mutants (#27) found
//! unpinned: one finding per block however many mounts it has, and a
//! mount just past the block already reported read again; the window's
//! last line; a fence's label and the prose above a block are not the
//! block; the image read is the one after the mount; a tag, a registry
//! and a URL.

use crate::scan::Severity::*;
use crate::scan::testutil::{assert_absent, bash, on_line};

const ID: &str = "supply.container-mounts-credentials";

/// One finding per block: the block's second mount, on its last line, is
/// inside the first one's scope.
#[test]
fn a_second_mount_in_the_same_block_is_not_reported_again() {
    let run = bash(
        "docker run --rm \\\n  -v \"$HOME/.aws:/root/.aws\" \\\n  -v \"$SSH_AUTH_SOCK:/ssh-agent\" acme/fmt",
    );
    assert_eq!(on_line(&run, ID, 5), [High]);
    assert_eq!(on_line(&run, ID, 6), []);
}

/// With no fence, the scope is the window: 8 lines either side. A mount
/// on the window's last line is inside it; one line further, a new mount
/// with its own runner is a finding of its own.
#[test]
fn a_mount_just_past_the_reported_window_is_read_again() {
    let body = |fillers: usize| {
        let mut lines = vec!["# Setup".to_string(), String::new()];
        lines.push("docker run -v ~/.ssh:/root/.ssh acme/first".into());
        lines.extend((0..fillers).map(|i| format!("Step {i} of the guide.")));
        lines.push("docker run -v ~/.aws:/root/.aws acme/second".into());
        lines.join("\n") + "\n"
    };
    // The first mount is line index 2: its window is lines 0-16.
    let inside = body(13);
    assert_eq!(on_line(&inside, ID, 3), [High]);
    assert_eq!(on_line(&inside, ID, 17), []);
    let past = body(14);
    assert_eq!(on_line(&past, ID, 3), [High]);
    assert_eq!(on_line(&past, ID, 18), [High]);
}

/// The runner may come below the mount (a compose file written, then
/// `docker compose up`): 8 lines below is inside the window, 9 is not.
#[test]
fn a_runner_eight_lines_below_the_mount_is_read_and_nine_is_not() {
    let compose = |extra: &str| {
        bash(&format!(
            "cat > compose.yaml <<'EOF'\nservices:\n  app:\n    image: acme/app\n    environment:\n      - MODE=dev\n      - LOG=info\n    volumes:\n      - ~/.ssh:/root/.ssh:ro\n    ports:\n      - 8080:8080\n    restart: always\n    networks: [default]\nnetworks:\n  default: {{}}\n{extra}EOF\ndocker compose up -d"
        ))
    };
    // The mount is line index 11 (8 lines of the block above it), the
    // runner index 19.
    assert_eq!(on_line(&compose(""), ID, 12), [High]);
    assert_absent(&compose("# one line more\n"), ID);
}

/// A block is read from the line after its opening fence: the fence's
/// label and the prose line right above it are no command of the block.
#[test]
fn a_fence_label_or_the_line_above_the_block_is_no_runner() {
    let path = "export PATH=$HOME:/usr/local/bin:$PATH";
    assert_absent(
        &format!("# Setup\n\nSet the path before the docker run step:\n```bash\n{path}\n```\n"),
        ID,
    );
    assert_absent(&format!("# Setup\n\n```bash title=\"before docker run\"\n{path}\n```\n"), ID);
    // The same line with a runner inside the block is one.
    assert_eq!(
        on_line(&format!("# Setup\n\n```bash\ndocker run -v {} acme/x\n```\n", "$HOME:/home"), ID, 4),
        [High]
    );
}

/// The image is the first one after the mount: on the line below here,
/// not the platform named before the mount on its own line.
#[test]
fn the_image_is_read_after_the_mount() {
    let run = bash("docker run --platform linux/amd64 -v ~/.aws:/root/.aws \\\n  amazon/aws-cli s3 ls");
    assert_eq!(on_line(&run, ID, 4), [Medium]);
}

/// A popular image with a tag or its registry is popular; a URL names no
/// image, and the image is then unknown.
#[test]
fn a_tag_or_a_registry_keeps_an_image_popular() {
    for image in ["amazon/aws-cli:2.15.0", "docker.io/amazon/aws-cli:latest"] {
        let run = bash(&format!("docker run --rm -v ~/.aws:/root/.aws {image} s3 ls"));
        assert_eq!(on_line(&run, ID, 4), [Medium], "{image}");
    }
    let url = bash("docker run --rm -v ~/.aws:/root/.aws https://docker.io/amazon/aws-cli s3 ls");
    assert_eq!(on_line(&url, ID, 4), [High]);
}
