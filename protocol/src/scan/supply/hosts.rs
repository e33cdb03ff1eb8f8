//! What a URL's host is to a package installer: the ecosystem's own index,
//! a vendor index everyone uses, a public mirror, a code host, or anything
//! else (an internal server, a stranger's host, an IP address).

/// The kinds of host, from trusted to unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Host {
    /// The ecosystem's own registry: pypi.org, registry.npmjs.org, …
    Official,
    /// A vendor's index that public instructions name: PyTorch's, NVIDIA's.
    Vendor,
    /// A public mirror or test index: it may serve other files than the
    /// official registry.
    Mirror,
    /// A public code host (github.com, gitlab.com, …).
    Code,
    /// A host of a private network: one label, `localhost`, a private or
    /// loopback address, or a name under `internal`, `corp`, `local`,
    /// `lan`, `intranet`: an organisation's own index, not a stranger's.
    Internal,
    /// Anything else.
    Other,
}

const OFFICIAL: &[&str] = &[
    "pypi.org",
    "pypi.python.org",
    "files.pythonhosted.org",
    "registry.npmjs.org",
    "registry.npmjs.com",
    "registry.yarnpkg.com",
    "proxy.golang.org",
    "sum.golang.org",
    "index.crates.io",
    "crates.io",
    "static.crates.io",
    "rubygems.org",
    "index.rubygems.org",
    // The registries `sources` reads (#14 recall).
    "conda.anaconda.org",
    "repo.anaconda.com",
    "anaconda.org",
    "packagist.org",
    "repo.packagist.org",
    "repo.maven.apache.org",
    "repo1.maven.org",
    "plugins.gradle.org",
    "maven.google.com",
    "api.nuget.org",
    "www.powershellgallery.com",
    "powershellgallery.com",
];

const VENDOR: &[&str] = &[
    "download.pytorch.org",
    "pypi.nvidia.com",
    "pypi.ngc.nvidia.com",
    "data.pyg.org",
    "download.openmmlab.com",
    "npm.pkg.github.com",
];

const MIRROR: &[&str] = &[
    "test.pypi.org",
    "pypi.tuna.tsinghua.edu.cn",
    "mirrors.aliyun.com",
    "pypi.douban.com",
    "mirrors.cloud.tencent.com",
    "mirrors.ustc.edu.cn",
    "repo.huaweicloud.com",
    "registry.npmmirror.com",
    "registry.npm.taobao.org",
    "goproxy.cn",
    "goproxy.io",
    "gems.ruby-china.com",
    "rsproxy.cn",
];

const CODE: &[&str] = &[
    "github.com",
    "gitlab.com",
    "bitbucket.org",
    "codeberg.org",
    "git.sr.ht",
    "codeload.github.com",
    "objects.githubusercontent.com",
    "raw.githubusercontent.com",
    "gist.github.com",
];

/// Hosts that serve Go modules under vanity paths of well-known projects.
const GO_MODULE_HOSTS: &[&str] = &[
    "golang.org",
    "go.googlesource.com",
    "google.golang.org",
    "cloud.google.com",
    "gopkg.in",
    "go.uber.org",
    "honnef.co",
    "mvdan.cc",
    "sigs.k8s.io",
    "k8s.io",
    "go.etcd.io",
    "gotest.tools",
    "go.opentelemetry.io",
    "gorm.io",
    "gvisor.dev",
    "filippo.io",
    "golang.zx2c4.com",
    "connectrpc.com",
    "buf.build",
    "entgo.io",
    "go.mozilla.org",
    "tailscale.com",
];

/// Whether `text` holds a URL (`://`): a jump from colon to colon, which
/// beats building a substring searcher for every word.
pub(crate) fn has_url(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr_iter(b':', b).any(|i| b[i + 1..].starts_with(b"//"))
}

/// The host of a URL (`https://user@h:1/p`, `git+https://h/p`, or the scp
/// form `git@h:p`), lower case, without user or port.
pub(super) fn host_of(url: &str) -> Option<String> {
    let rest = match url.split_once("://") {
        Some((_, rest)) => rest,
        None => url.split_once('@').map(|(_, r)| r)?,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if authority.starts_with('[') {
        authority.split_once(']').map_or(authority, |(h, _)| h).trim_start_matches('[')
    } else {
        authority.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

fn listed(list: &[&str], host: &str) -> bool {
    list.iter().any(|h| host == *h || host.strip_suffix(h).is_some_and(|p| p.ends_with('.')))
}

/// What `host` is; see [`Host`].
pub(super) fn classify(host: &str) -> Host {
    // Most specific first: test.pypi.org is under pypi.org, GitHub's npm
    // registry under github.com.
    if listed(MIRROR, host) {
        Host::Mirror
    } else if listed(VENDOR, host) {
        Host::Vendor
    } else if listed(OFFICIAL, host) {
        Host::Official
    } else if listed(CODE, host) {
        Host::Code
    } else if is_internal(host) {
        Host::Internal
    } else {
        Host::Other
    }
}

/// Labels that name a private network's domain.
const INTERNAL_LABELS: &[&str] =
    &["internal", "intranet", "corp", "local", "lan", "localdomain", "private", "home"];

fn is_internal(host: &str) -> bool {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return match ip {
            std::net::IpAddr::V4(v4) => v4.is_private() || v4.is_loopback() || v4.is_link_local(),
            std::net::IpAddr::V6(v6) => v6.is_loopback() || (v6.segments()[0] & 0xfe00) == 0xfc00,
        };
    }
    !host.contains('.') || host.split('.').any(|label| INTERNAL_LABELS.contains(&label))
}

/// Whether a Go module path's first element is a well-known module host.
pub(super) fn is_known_go_host(host: &str) -> bool {
    classify(host) == Host::Code || listed(GO_MODULE_HOSTS, host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_hosts_of_every_url_form() {
        assert_eq!(host_of("https://pypi.org/simple").as_deref(), Some("pypi.org"));
        assert_eq!(
            host_of("git+https://user@Git.Example.COM:8443/a/b.git").as_deref(),
            Some("git.example.com")
        );
        assert_eq!(host_of("git@github.com:org/repo.git").as_deref(), Some("github.com"));
        assert_eq!(host_of("http://[::1]:8080/x").as_deref(), Some("::1"));
        assert_eq!(host_of("requests"), None);
    }

    #[test]
    fn classifies_hosts_and_their_subdomains_only() {
        assert_eq!(classify("pypi.org"), Host::Official);
        assert_eq!(classify("download.pytorch.org"), Host::Vendor);
        assert_eq!(classify("test.pypi.org"), Host::Mirror);
        assert_eq!(classify("github.com"), Host::Code);
        assert_eq!(classify("evilpypi.org"), Host::Other);
        assert_eq!(classify("pypi.org.evil.example"), Host::Other);
        assert_eq!(classify("pypi.internal.corp"), Host::Internal);
        assert_eq!(classify("artifactory"), Host::Internal);
        assert_eq!(classify("10.0.0.5"), Host::Internal);
        assert_eq!(classify("203.0.113.7"), Host::Other);
        assert_eq!(classify("pypi.corp-mirror.example"), Host::Other);
        assert!(is_known_go_host("golang.org") && !is_known_go_host("go.evil.example"));
    }
}

#[cfg(test)]
#[path = "hosts_tests.rs"]
mod sweep_tests;
