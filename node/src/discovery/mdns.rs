//! mDNS discovery: advertise this node as `_ecp._tcp.local.` and browse for
//! the others, reporting them as [`DiscoveryEvent`]s.
//!
//! The TXT records say who a node is and how to talk to it:
//!
//! | key | value |
//! |---|---|
//! | `instance` | the instance id (`ecp-…`) |
//! | `version` | the protocol version, `1.0` |
//! | `auth` | `1` if requests must be signed (ECP/1.2, or X-ECP-HMAC where accepted), else `0` |
//! | `scheme` | `https` for a node serving TLS, else `http` (absent: `http`, as earlier nodes) |
//! | `tls` | with `https`: the SHA-256 of the certificate served, 64 lowercase hex digits |
//! | `key` | the key id of the node key (`SPEC.md` §13.2) |
//!
//! A discovered `https` node is pulled over HTTPS trusting only the
//! certificate of its `tls` record (no CA, no name check: the record is
//! what vouches for it, and the handshake proves the holder of its key);
//! one without a valid `tls` record is ignored. When the node's own
//! certificate is reloaded, [`DiscoveryHandle::set_tls`] announces the new
//! fingerprint.
//!
//! Which addresses are advertised follows the listen address: a specific
//! address is advertised as itself (on its interface only); a loopback address
//! is advertised on the loopback interface only, so nodes on one host find each
//! other without anything leaving the machine; an unspecified address
//! (`0.0.0.0`, `::`) lets the mDNS daemon publish every address of the host and
//! follow their changes.
//!
//! Before the daemon starts, [`start`] checks that multicast works on the
//! interface it would use (join the mDNS group, send one datagram to the group
//! on a private port, receive it back). Where it does not (a sandbox, a CI
//! container without a multicast route), [`start`] returns
//! [`DiscoveryError::MulticastUnavailable`] with the reason and the node
//! carries on without discovery. This module does not federate: what to do
//! with a found node is the federator's business.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddrV4, UdpSocket};
use std::time::Duration;

use mdns_sd::{IfKind, ServiceDaemon, ServiceEvent, ServiceInfo};
use socket2::{Domain, Protocol, Socket, Type};
use tokio::sync::mpsc;

use super::{Advert, DiscoveredPeer, DiscoveryError, DiscoveryEvent};

/// The DNS-SD service type of ECP nodes.
pub const SERVICE_TYPE: &str = "_ecp._tcp.local.";

/// The mDNS IPv4 group (RFC 6762).
const MDNS_GROUP_V4: Ipv4Addr = Ipv4Addr::new(224, 0, 0, 251);

/// How long the multicast check waits for its own datagram to come back.
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// How many events may wait for the federator before the reporting thread
/// blocks (it then stops reading the daemon, which drops nothing important:
/// a node that is still there is announced again).
const EVENT_BUFFER: usize = 64;

/// How long dropping the handle waits for the daemon to confirm the goodbye.
const GOODBYE_WAIT: Duration = Duration::from_millis(500);

/// A running advertisement and browse. Dropping it sends the mDNS goodbye
/// (so the other nodes report us lost at once) and stops the daemon; the
/// event channel then closes.
pub struct DiscoveryHandle {
    /// The daemon: its own thread with the multicast sockets; cloning it
    /// shares the same thread.
    daemon: ServiceDaemon,
    /// Our service's full name, to unregister it.
    fullname: String,
    /// What is advertised, to announce it again when it changes.
    advert: std::sync::Mutex<Advert>,
}

impl DiscoveryHandle {
    /// Announces `tls` as the fingerprint of the certificate served now
    /// (after a reload); the same one again announces nothing.
    pub fn set_tls(&self, tls: [u8; 32]) {
        let mut advert = self.advert.lock().unwrap_or_else(|p| p.into_inner());
        if advert.tls == Some(tls) {
            return;
        }
        advert.tls = Some(tls);
        match service_info(&advert).and_then(|service| self.daemon.register(service)) {
            Ok(()) => tracing::info!("mDNS: announced the reloaded certificate's fingerprint"),
            Err(e) => {
                tracing::warn!(error = %e, "mDNS: cannot announce the reloaded certificate's fingerprint")
            }
        }
    }
}

impl std::fmt::Debug for DiscoveryHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscoveryHandle").field("fullname", &self.fullname).finish_non_exhaustive()
    }
}

impl Drop for DiscoveryHandle {
    fn drop(&mut self) {
        if let Ok(status) = self.daemon.unregister(&self.fullname) {
            let _ = status.recv_timeout(GOODBYE_WAIT);
        }
        let _ = self.daemon.shutdown();
    }
}

/// Advertises this node as `advert` says and browses for other ECP nodes.
/// Events about our own instance are never reported. Blocks for at most
/// about half a second (the multicast check); call it from a blocking
/// context in async code.
pub fn start(advert: Advert) -> Result<(DiscoveryHandle, mpsc::Receiver<DiscoveryEvent>), DiscoveryError> {
    let scope = Scope::of(advert.listen.ip());
    check_multicast(scope.probe_interface())?;

    let daemon = ServiceDaemon::new().map_err(|e| DiscoveryError::Mdns(e.to_string()))?;
    let fail = |daemon: &ServiceDaemon, e: mdns_sd::Error| {
        let _ = daemon.shutdown();
        DiscoveryError::Mdns(e.to_string())
    };
    if let Some(interfaces) = scope.interfaces() {
        daemon.disable_interface(IfKind::All).map_err(|e| fail(&daemon, e))?;
        daemon.enable_interface(interfaces).map_err(|e| fail(&daemon, e))?;
    }

    let service = service_info(&advert).map_err(|e| fail(&daemon, e))?;
    let fullname = service.get_fullname().to_owned();
    daemon.register(service).map_err(|e| fail(&daemon, e))?;
    let browse = daemon.browse(SERVICE_TYPE).map_err(|e| fail(&daemon, e))?;

    let (tx, rx) = mpsc::channel(EVENT_BUFFER);
    let own = advert.instance.clone();
    std::thread::Builder::new()
        .name("ecp-mdns-events".into())
        .spawn(move || report(browse, &own, tx))
        .map_err(|e| fail(&daemon, mdns_sd::Error::Msg(e.to_string())))?;
    let addresses = scope.advertised(advert.listen.ip());
    tracing::info!(service = %fullname, ?addresses, "mDNS: advertising and browsing {SERVICE_TYPE}");
    Ok((DiscoveryHandle { daemon, fullname, advert: std::sync::Mutex::new(advert) }, rx))
}

/// Our service record: its addresses (by scope), port and TXT records.
fn service_info(advert: &Advert) -> Result<ServiceInfo, mdns_sd::Error> {
    let scope = Scope::of(advert.listen.ip());
    let auth = if advert.auth_required { "1" } else { "0" };
    let tls = advert.tls.map(hex::encode);
    let scheme = if tls.is_some() { "https" } else { "http" };
    let mut txt = vec![
        ("instance", advert.instance.as_str()),
        ("version", crate::PROTOCOL_VERSION),
        ("auth", auth),
        ("scheme", scheme),
        ("key", advert.key_id.as_str()),
    ];
    if let Some(tls) = &tls {
        txt.push(("tls", tls.as_str()));
    }
    let host = format!("{}.local.", advert.instance);
    let advertised: Vec<IpAddr> = scope.advertised(advert.listen.ip()).into_iter().collect();
    let service = ServiceInfo::new(
        SERVICE_TYPE,
        &advert.instance,
        &host,
        &advertised[..],
        advert.listen.port(),
        &txt[..],
    )?;
    Ok(if advertised.is_empty() { service.enable_addr_auto() } else { service })
}

/// Turns the daemon's browse events into [`DiscoveryEvent`]s until the
/// daemon stops or nobody listens any more.
fn report(browse: mdns_sd::Receiver<ServiceEvent>, own: &str, tx: mpsc::Sender<DiscoveryEvent>) {
    // Full service name → what we last reported for it: a re-resolution that
    // changes nothing is not reported again, and a removal knows the instance.
    let mut known: HashMap<String, DiscoveredPeer> = HashMap::new();
    while let Ok(event) = browse.recv() {
        let event = match event {
            ServiceEvent::ServiceResolved(service) => {
                let addresses = service.get_addresses().iter().map(|a| a.to_ip_addr());
                let records = Records {
                    instance: service.get_property_val_str("instance"),
                    version: service.get_property_val_str("version"),
                    auth: service.get_property_val_str("auth"),
                    scheme: service.get_property_val_str("scheme"),
                    tls: service.get_property_val_str("tls"),
                };
                let Some(peer) = peer_from_records(&records, addresses, service.get_port()) else {
                    tracing::debug!(
                        service = service.get_fullname(),
                        "mDNS: ignoring a service that is not a usable ECP node"
                    );
                    continue;
                };
                if peer.instance == own || known.get(service.get_fullname()) == Some(&peer) {
                    continue;
                }
                known.insert(service.get_fullname().to_owned(), peer.clone());
                DiscoveryEvent::Found(peer)
            }
            ServiceEvent::ServiceRemoved(_, fullname) => match known.remove(&fullname) {
                Some(peer) => DiscoveryEvent::Lost { instance: peer.instance },
                None => continue,
            },
            _ => continue,
        };
        if tx.blocking_send(event).is_err() {
            return;
        }
    }
}

/// The TXT records a node is read from.
#[derive(Debug, Default, Clone, Copy)]
struct Records<'a> {
    instance: Option<&'a str>,
    version: Option<&'a str>,
    auth: Option<&'a str>,
    scheme: Option<&'a str>,
    tls: Option<&'a str>,
}

/// A discovered node from its TXT records, addresses and port; `None` for a
/// service without an instance id, of another major protocol version, of
/// an unknown scheme, `https` without a valid `tls` fingerprint, or with no
/// address we can dial.
fn peer_from_records(
    records: &Records<'_>,
    addresses: impl IntoIterator<Item = IpAddr>,
    port: u16,
) -> Option<DiscoveredPeer> {
    let instance = records.instance.filter(|i| !i.is_empty())?;
    let ours = crate::PROTOCOL_VERSION.split('.').next();
    if let Some(version) = records.version
        && version.split('.').next() != ours
    {
        return None;
    }
    let (scheme, tls) = match records.scheme.unwrap_or("http") {
        "http" => ("http", None),
        "https" => {
            let mut fingerprint = [0u8; 32];
            let text = records.tls?;
            if text.bytes().any(|b| b.is_ascii_uppercase()) {
                return None;
            }
            hex::decode_to_slice(text, &mut fingerprint).ok()?;
            ("https", Some(fingerprint))
        }
        _ => return None,
    };
    let ip = best_address(addresses)?;
    let url = match ip {
        IpAddr::V4(v4) => format!("{scheme}://{v4}:{port}"),
        IpAddr::V6(v6) => format!("{scheme}://[{v6}]:{port}"),
    };
    Some(DiscoveredPeer { instance: instance.to_owned(), url, auth_required: records.auth == Some("1"), tls })
}

/// The address to dial among those a node advertises: IPv4 before IPv6,
/// routable before loopback; link-local IPv6 is left out (it needs a zone a
/// URL cannot carry portably). Ties break on the address, so the choice is
/// stable across re-resolutions.
fn best_address(addresses: impl IntoIterator<Item = IpAddr>) -> Option<IpAddr> {
    addresses
        .into_iter()
        .filter(|ip| !matches!(ip, IpAddr::V6(v6) if v6.is_unicast_link_local()))
        .filter(|ip| !ip.is_unspecified() && !ip.is_multicast())
        .min_by_key(|ip| (ip.is_ipv6(), ip.is_loopback(), *ip))
}

/// Where a node advertises, derived from its listen address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Loopback only: advertise the loopback address on the loopback interface.
    Loopback,
    /// One address: advertise it on its own interface.
    Address(IpAddr),
    /// Every interface: advertise the host's addresses, followed as they change.
    Everywhere,
}

impl Scope {
    fn of(ip: IpAddr) -> Scope {
        if ip.is_loopback() {
            Scope::Loopback
        } else if ip.is_unspecified() {
            Scope::Everywhere
        } else {
            Scope::Address(ip)
        }
    }

    /// Addresses to put in the A/AAAA records; empty means "let the daemon
    /// pick and follow the host's addresses".
    fn advertised(self, listen: IpAddr) -> Option<IpAddr> {
        match self {
            Scope::Loopback | Scope::Address(_) => Some(listen),
            Scope::Everywhere => None,
        }
    }

    /// The interfaces the daemon may use; `None` means all of them.
    fn interfaces(self) -> Option<Vec<IfKind>> {
        match self {
            Scope::Loopback => Some(vec![IfKind::LoopbackV4, IfKind::LoopbackV6]),
            Scope::Address(ip) => Some(vec![IfKind::Addr(ip)]),
            Scope::Everywhere => None,
        }
    }

    /// The IPv4 interface address the multicast check runs on
    /// (`0.0.0.0`: the interface of the default multicast route).
    fn probe_interface(self) -> Ipv4Addr {
        match self {
            Scope::Loopback => Ipv4Addr::LOCALHOST,
            Scope::Address(IpAddr::V4(v4)) => v4,
            Scope::Address(IpAddr::V6(_)) | Scope::Everywhere => Ipv4Addr::UNSPECIFIED,
        }
    }
}

/// Checks that an mDNS-style multicast round trip works on `interface`:
/// join 224.0.0.251 there, send one datagram to the group on a private port
/// (never 5353, so no responder sees it), and receive it back through
/// multicast loopback.
pub fn check_multicast(interface: Ipv4Addr) -> Result<(), DiscoveryError> {
    let unavailable = |what: &str, e: std::io::Error| DiscoveryError::MulticastUnavailable {
        interface: interface.to_string(),
        reason: format!("{what}: {e}"),
    };
    let socket = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))
        .map_err(|e| unavailable("cannot open a UDP socket", e))?;
    socket
        .bind(&SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0).into())
        .map_err(|e| unavailable("cannot bind a UDP socket", e))?;
    socket
        .join_multicast_v4(&MDNS_GROUP_V4, &interface)
        .map_err(|e| unavailable("cannot join the mDNS group 224.0.0.251", e))?;
    if !interface.is_unspecified() {
        socket.set_multicast_if_v4(&interface).map_err(|e| unavailable("cannot pick the interface", e))?;
    }
    socket.set_multicast_ttl_v4(1).map_err(|e| unavailable("cannot set the multicast TTL", e))?;
    socket.set_multicast_loop_v4(true).map_err(|e| unavailable("cannot enable multicast loopback", e))?;
    let socket: UdpSocket = socket.into();
    let port = socket.local_addr().map_err(|e| unavailable("no local address", e))?.port();
    let probe = b"ecp-node multicast check";
    socket
        .send_to(probe, SocketAddrV4::new(MDNS_GROUP_V4, port))
        .map_err(|e| unavailable("cannot send to the mDNS group", e))?;
    socket.set_read_timeout(Some(PROBE_TIMEOUT)).map_err(|e| unavailable("cannot set a timeout", e))?;
    let mut buf = [0u8; 64];
    loop {
        match socket.recv_from(&mut buf) {
            Ok((n, _)) if &buf[..n] == probe => return Ok(()),
            Ok(_) => continue,
            Err(e) => {
                return Err(unavailable(
                    "a datagram sent to the mDNS group did not come back within 500 ms",
                    e,
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn records<'a>(
        instance: Option<&'a str>,
        version: Option<&'a str>,
        auth: Option<&'a str>,
    ) -> Records<'a> {
        Records { instance, version, auth, ..Records::default() }
    }

    #[test]
    fn builds_a_peer_from_its_txt_records() {
        let peer =
            peer_from_records(&records(Some("ecp-0a1b"), Some("1.0"), Some("1")), [ip("192.0.2.7")], 7327);
        assert_eq!(
            peer,
            Some(DiscoveredPeer {
                instance: "ecp-0a1b".into(),
                url: "http://192.0.2.7:7327".into(),
                auth_required: true,
                tls: None,
            })
        );
        let open = peer_from_records(&records(Some("ecp-0a1b"), None, Some("0")), [ip("192.0.2.7")], 7327);
        assert!(!open.unwrap().auth_required);
    }

    #[test]
    fn an_https_node_is_dialled_over_https_with_its_advertised_fingerprint_only() {
        let fp = "ab".repeat(32);
        let https = Records { scheme: Some("https"), tls: Some(&fp), ..records(Some("x"), None, None) };
        let peer = peer_from_records(&https, [ip("192.0.2.7")], 443).unwrap();
        assert_eq!((peer.url.as_str(), peer.tls), ("https://192.0.2.7:443", Some([0xAB; 32])));
        let upper = fp.to_uppercase();
        for bad in [None, Some(&fp[2..]), Some(upper.as_str()), Some("zz")] {
            let records = Records { tls: bad, ..https };
            assert_eq!(peer_from_records(&records, [ip("192.0.2.7")], 443), None, "{bad:?}");
        }
        let unknown = Records { scheme: Some("gopher"), ..https };
        assert_eq!(peer_from_records(&unknown, [ip("192.0.2.7")], 443), None);
        let plain = Records { scheme: Some("http"), ..https };
        assert_eq!(peer_from_records(&plain, [ip("192.0.2.7")], 80).unwrap().tls, None, "no pin over http");
    }

    #[test]
    fn ignores_services_without_instance_address_or_with_another_major_version() {
        let at = |r: Records<'_>, a: &str| peer_from_records(&r, [ip(a)], 1);
        assert_eq!(at(records(None, Some("1.0"), Some("0")), "192.0.2.7"), None);
        assert_eq!(at(records(Some(""), Some("1.0"), Some("0")), "192.0.2.7"), None);
        assert_eq!(at(records(Some("x"), Some("2.0"), Some("0")), "192.0.2.7"), None);
        assert_eq!(at(records(Some("x"), Some("1.0"), Some("0")), "fe80::1"), None);
        assert!(at(records(Some("x"), Some("1.3"), Some("0")), "192.0.2.7").is_some());
    }

    #[test]
    fn prefers_routable_ipv4_then_loopback_then_ipv6() {
        let all = [ip("::1"), ip("2001:db8::7"), ip("127.0.0.1"), ip("192.0.2.9"), ip("192.0.2.7")];
        assert_eq!(best_address(all), Some(ip("192.0.2.7")));
        assert_eq!(best_address([ip("::1"), ip("127.0.0.1")]), Some(ip("127.0.0.1")));
        assert_eq!(best_address([ip("::1"), ip("2001:db8::7")]), Some(ip("2001:db8::7")));
        let url = peer_from_records(&records(Some("x"), None, None), [ip("2001:db8::7")], 80).unwrap().url;
        assert_eq!(url, "http://[2001:db8::7]:80");
    }

    #[test]
    fn multicast_check_names_the_interface_and_the_reason() {
        // 0.0.0.1 is never an interface address: the join fails before anything is sent.
        let err = check_multicast(Ipv4Addr::new(0, 0, 0, 1)).unwrap_err().to_string();
        assert!(err.contains("0.0.0.1") && err.contains("cannot join"), "{err}");
    }

    #[test]
    fn advertises_according_to_the_listen_address() {
        assert_eq!(Scope::of(ip("127.0.0.1")), Scope::Loopback);
        assert_eq!(Scope::of(ip("127.0.0.1")).advertised(ip("127.0.0.1")), Some(ip("127.0.0.1")));
        assert_eq!(Scope::of(ip("127.0.0.1")).probe_interface(), Ipv4Addr::LOCALHOST);
        assert_eq!(Scope::of(ip("0.0.0.0")), Scope::Everywhere);
        assert_eq!(Scope::of(ip("::")).advertised(ip("::")), None);
        assert!(Scope::of(ip("::")).interfaces().is_none());
        assert_eq!(Scope::of(ip("192.0.2.7")).advertised(ip("192.0.2.7")), Some(ip("192.0.2.7")));
        assert_eq!(Scope::of(ip("192.0.2.7")).probe_interface(), Ipv4Addr::new(192, 0, 2, 7));
    }
}
