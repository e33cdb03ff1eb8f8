//! A container handed the user's credentials (`supply.container-mounts-
//! credentials`): `docker run` (or podman, or an MCP server's `"command":
//! "docker"` with its `args`) mounting the home folder, `~/.ssh`, `~/.aws`,
//! `~/.kube` or the SSH agent's socket into an image. The image's code is
//! what the skill runs unseen, and the mount gives it every key the user
//! has: `High` for an image not on the popular list (`popular-images.txt`)
//! or none found, `Medium` for a popular one (`amazon/aws-cli` with
//! `~/.aws` is the vendor's own instructions). Two writers wrote it
//! independently (a formatter image mounting `$HOME` and the agent socket,
//! an MCP search server mounting `${HOME}`).

use std::sync::LazyLock;

use super::declared::image_name;
use super::names::{Ecosystem, is_popular};
use crate::scan::engine::{Body, LineRef, finding};
use crate::scan::fence::is_fence;
use crate::scan::rule::{Lazy, compile};
use crate::scan::{Category, Finding, Severity};

/// A mount's source that holds credentials, as the triggered line writes it.
pub(super) const TRIGGERS: &[&str] = &[
    "$home:",
    "${home}:",
    "$home/.",
    "${home}/.",
    "~/.ssh:",
    "~/.aws:",
    "ssh_auth_sock}:",
    "ssh_auth_sock:",
];

/// Lines around the mount searched for the container runner and its image.
const WINDOW: usize = 8;

/// The credential source of a bind mount (`src:/dest`).
static MOUNT: Lazy = LazyLock::new(|| {
    compile(
        r"(?:\$\{?home\}?|~)(?:/\.(?:ssh|aws|kube|gnupg|docker|azure|config/gcloud|config/gh))?/?:/|\$\{?ssh_auth_sock\}?:/",
    )
});

/// A container runner.
static RUNNER: Lazy = LazyLock::new(|| {
    compile(
        r#"\b(?:docker|podman|nerdctl)\b["',]?\s*(?:\S+\s+)?["']?(?:run|create|compose)\b|"command"\s*:\s*"(?:docker|podman)""#,
    )
});

/// An image reference: a name with an owner or registry (`owner/name`,
/// `ghcr.io/o/n`), with or without a tag; a local path or a URL is not one.
static IMAGE: Lazy = LazyLock::new(|| {
    compile(
        r#"(?:^|[\s"'\[,])([a-z0-9][a-z0-9._-]*(?:\.[a-z]{2,}(?::\d+)?)?(?:/[a-z0-9][a-z0-9._-]*)+(?::[\w.-]+)?)(?:["',\]]|\s|$)"#,
    )
});

pub(super) fn run(body: &Body<'_>, lines: &[LineRef], out: &mut Vec<Finding>) {
    let mut done_to = 0;
    for &r in lines {
        if r.index < done_to {
            continue;
        }
        let line = body.line(r);
        let Some(mount) = MOUNT.find(line.as_bytes()) else { continue };
        let from = body.line_before(r, WINDOW);
        let window: Vec<(LineRef, &str)> = body.lines_from(from).take(2 * WINDOW + 1).collect();
        // Within the block (or prose run) holding the mount.
        let at = window.iter().position(|(l, _)| l.index == r.index).unwrap_or(0);
        let start = window[..at].iter().rposition(|(_, l)| is_fence(l)).map_or(0, |i| i + 1);
        let end = window[at..].iter().position(|(_, l)| is_fence(l)).map_or(window.len(), |i| at + i);
        let scope = &window[start..end];
        if !scope.iter().any(|(_, l)| RUNNER.is_match(l.as_bytes())) {
            continue;
        }
        done_to = scope.last().map_or(r.index, |(l, _)| l.index + 1);
        // The image comes after the mount: on its line past it, or below.
        let after = std::iter::once(&line[mount.end()..])
            .chain(scope.iter().filter(|(l, _)| l.index > r.index).map(|(_, l)| *l));
        let image = after.flat_map(images).next();
        // Registry, tag and digest aside, as a Dockerfile's `FROM` is read.
        let severity = match image {
            Some(name) if is_popular(Ecosystem::Images, &image_name(&name)) => Severity::Medium,
            _ => Severity::High,
        };
        out.push(finding(
            "supply.container-mounts-credentials",
            Category::SupplyChain,
            severity,
            r,
            line,
            mount.start(),
        ));
    }
}

/// The image references of a line, lower-cased. `IMAGE` starts a name
/// only after a blank, a quote, `[` or `,` and with a letter or digit, so
/// a URL (`https://…`, its host after `//`) or a path (`./`, `~/`,
/// `$HOME/`) yields none.
fn images(line: &str) -> Vec<String> {
    let lower = line.to_ascii_lowercase();
    IMAGE
        .captures_iter(lower.as_bytes())
        .filter_map(|c| c.get(1))
        .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::scan::Severity::*;
    use crate::scan::testutil::{assert_absent, bash, on_line};

    const ID: &str = "supply.container-mounts-credentials";

    #[test]
    fn an_unknown_image_given_the_home_folder_or_the_agent_socket_is_high() {
        let run = bash(
            "docker run --rm -v \"$HOME:$HOME\" -v \"$SSH_AUTH_SOCK:/ssh-agent\" fmtall/fmt:latest --all",
        );
        assert_eq!(on_line(&run, ID, 4), [High]);
        let mcp = "# MCP\n\n```json\n{ \"command\": \"docker\",\n  \"args\": [\"run\", \"-i\", \"-v\", \"${HOME}:/host-home\",\n  \"docsearch-mcp/server:latest\"] }\n```\n";
        assert_eq!(on_line(mcp, ID, 5), [High]);
    }

    #[test]
    fn a_popular_image_is_medium_and_a_project_mount_nothing() {
        assert_eq!(
            on_line(&bash("docker run --rm -v ~/.aws:/root/.aws amazon/aws-cli s3 ls"), ID, 4),
            [Medium]
        );
        assert_absent(
            &bash("docker run --rm -v \"$PWD:/repo\" trufflesecurity/trufflehog:latest git file:///repo"),
            ID,
        );
        // The home folder named without a runner: a shell line, not a mount.
        assert_absent(&bash("ln -sf \"$SSH_AUTH_SOCK\" ~/.ssh/ssh_auth_sock"), ID);
    }
}

#[cfg(test)]
#[path = "mounted_edge_tests.rs"]
mod edge_tests;
