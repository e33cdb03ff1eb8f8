#!/usr/bin/env bash
# Can the mDNS integration test run here? Two ecp-node processes on one host
# find each other only if multicast works on the loopback interface, which
# sandboxes and CI containers often lack. Rust's test harness has no runtime
# skip, so the test is #[ignore]d and this script decides.
#
#   deploy/check-multicast.sh
#       exit 0: loopback multicast works (in a private network namespace if
#               one can be made, else in this one);
#       exit 1: it does not; the reason is printed on stdout.
#   deploy/check-multicast.sh --run CMD [ARGS...]
#       if it works, runs CMD there and exits with its status; if not, prints
#       "mdns test skipped: <reason>" and exits 0 (a skip, never a pass).
#
# Where it can (root, or unprivileged user namespaces), the check and CMD run
# in a fresh network namespace holding only an up loopback interface, so no
# multicast packet (not even a group join) reaches a real network. Otherwise
# they run here: the test's nodes listen on 127.0.0.1 and keep mDNS on the
# loopback interface.
set -euo pipefail

# One multicast round trip on 127.0.0.1: join 224.0.0.251 on lo, send a
# datagram to the group on a private port (not 5353), receive it back.
probe='
import socket, sys
G = "224.0.0.251"
lo = socket.inet_aton("127.0.0.1")
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
s.bind(("0.0.0.0", 0))
port = s.getsockname()[1]
try:
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton(G) + lo)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, lo)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
    s.sendto(b"ecp-multicast-check", (G, port))
except OSError as e:
    print(f"loopback multicast fails: {e.strerror or e}"); sys.exit(1)
s.settimeout(1.0)
try:
    while s.recvfrom(64)[0] != b"ecp-multicast-check":
        pass
except socket.timeout:
    print("a datagram sent to 224.0.0.251 on the loopback interface did not come back within 1 s"); sys.exit(1)
'

if ! command -v python3 >/dev/null 2>&1; then
    reason="python3 is missing (needed for the multicast check)"
    netns=()
else
    # A private network namespace with loopback up, if this machine allows one.
    netns=()
    for try in "unshare --net" "unshare --user --map-root-user --net"; do
        if $try sh -c 'ip link set lo up' >/dev/null 2>&1; then
            read -r -a netns <<<"$try"
            break
        fi
    done
    if [ ${#netns[@]} -gt 0 ]; then
        # shellcheck disable=SC2016 # $1 is the inner shell's argument, the probe.
        reason=$("${netns[@]}" sh -c 'ip link set lo up && exec python3 -c "$1"' sh "$probe" 2>&1) && reason=""
    else
        reason=$(python3 -c "$probe" 2>&1) && reason=""
    fi
fi

if [ "${1:-}" != "--run" ]; then
    if [ -n "$reason" ]; then echo "$reason"; exit 1; fi
    exit 0
fi
shift
if [ -n "$reason" ]; then
    echo "mdns test skipped: $reason"
    exit 0
fi
if [ ${#netns[@]} -gt 0 ]; then
    echo "mdns: loopback multicast works; running in a private network namespace (${netns[*]})" >&2
    exec "${netns[@]}" sh -c 'ip link set lo up && exec "$@"' sh "$@"
fi
echo "mdns: loopback multicast works; running in this network namespace" >&2
exec "$@"
