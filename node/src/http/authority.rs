//! Which authorities (`host:port`) this node answers to: an ECP/1.2 request
//! signed for any other is refused (`SPEC.md` §10.1.3), so a request
//! recorded on its way to one node cannot be relayed to another holding the
//! same key.
//!
//! The `Host` header is deliberately not one of them: whoever relays a
//! request writes its `Host`, so a node that trusted it would accept exactly
//! the relays this check exists to stop. A node answers to what it knows of
//! itself: the address the connection arrived at (`ip:port`, what a client
//! that addressed it by IP signed), `localhost:port` when that address is
//! loopback, and the names its operator configured (`[server] names`), for
//! clients that reach it by a DNS name or through a proxy.

use std::net::{IpAddr, SocketAddr};

/// The local address a connection arrived at, put on each request by the
/// accept loop ([`crate::serve`]); requests without it (tests driving the
/// router directly) count as arriving at the configured listen address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalAddr(pub SocketAddr);

/// The request's `Host` (lower-cased) when it names this node ([`answers_to`]).
/// A page served under another name (DNS rebinding) sends that name: its
/// scripts reach the node's address but must not pass for the node's own
/// pages or its local clients.
pub(super) fn own_host(
    names: &[String],
    listen: SocketAddr,
    request: &axum::extract::Request,
) -> Option<String> {
    let local = request.extensions().get::<LocalAddr>().map_or(listen, |LocalAddr(a)| *a);
    let host = request
        .headers()
        .get(axum::http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_ascii_lowercase)?;
    answers_to(names, local, &host).then_some(host)
}

/// Whether `authority` (lower-cased `host:port`) names this node, reached
/// at `local` and configured with `names` (lower-cased; a name without a
/// port stands for that host on any port, as behind a proxy).
pub(super) fn answers_to(names: &[String], local: SocketAddr, authority: &str) -> bool {
    let Some((host, port)) = authority.rsplit_once(':') else { return false };
    let Ok(port) = port.parse::<u16>() else { return false };
    if port == local.port()
        && (is_address(host, local.ip()) || (host == "localhost" && local.ip().is_loopback()))
    {
        return true;
    }
    names.iter().any(|name| name == authority || name == host)
}

/// Whether `host` (as a URL writes it: IPv6 in brackets) is the address `ip`.
fn is_address(host: &str, ip: IpAddr) -> bool {
    let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    let Ok(signed) = literal.parse::<IpAddr>() else { return false };
    // A dual-stack listener sees IPv4 clients at IPv4-mapped addresses.
    signed.to_canonical() == ip.to_canonical()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(local: &str) -> SocketAddr {
        local.parse().unwrap()
    }

    #[test]
    fn a_node_answers_to_the_address_it_was_reached_at_and_its_names() {
        let names = vec!["ecp.example.org".to_owned(), "node-a:7327".to_owned()];
        let local = at("192.168.1.20:7327");
        for yes in ["192.168.1.20:7327", "ecp.example.org:443", "ecp.example.org:7327", "node-a:7327"] {
            assert!(answers_to(&names, local, yes), "{yes}");
        }
        for no in [
            "192.168.1.50:7327",
            "192.168.1.20:7328",
            "localhost:7327",
            "node-a:7328",
            "node-b:7327",
            "other.example.org:443",
            "192.168.1.20",
            "garbage",
        ] {
            assert!(!answers_to(&names, local, no), "{no}");
        }
    }

    #[test]
    fn loopback_answers_as_localhost_and_ipv6_and_mapped_addresses_compare_as_addresses() {
        assert!(answers_to(&[], at("127.0.0.1:9000"), "localhost:9000"));
        assert!(answers_to(&[], at("[::1]:9000"), "[::1]:9000"));
        assert!(answers_to(&[], at("[::1]:9000"), "localhost:9000"));
        assert!(answers_to(&[], at("[::ffff:10.0.0.2]:9000"), "10.0.0.2:9000"));
        assert!(!answers_to(&[], at("[::1]:9000"), "[::2]:9000"));
    }
}
