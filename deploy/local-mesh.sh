#!/usr/bin/env bash
# Starts a mesh of N ecp-node processes on loopback, wired by peers files, and
# stops them all on Ctrl-C. Used by the README demo (the mesh benchmark,
# node/benches/mesh/, starts its own nodes to kill and partition them).
#
#   deploy/local-mesh.sh N [ring|random] [options]
#
# Wiring: every edge of the graph goes both ways. Each node lists each of its
# neighbours as a [[peer]] and, by default, pulls it every --interval and
# pushes its own changes to it as they happen; so a skill added anywhere
# crosses the mesh in at most "diameter" hops.
#   ring    node i peers with i-1 and i+1 (mod N): diameter N/2.
#   random  a random connected 3-regular graph (N even, N >= 4; seed printed,
#           --seed repeats it): diameter about log2(N).
# Nodes trust each other 1.0 (--trust), so skills arrive unlowered at every hop.
#
# Options:
#   --mode both|push|pull  both (default): pull every --interval and push on change;
#                          push: push on change, pull only once an hour;
#                          pull: pull only, every --interval
#   --interval D           pull interval (default 5s; 1s with --mode pull)
#   --trust T              trust in mesh neighbours, 0-1 (default 1.0)
#   --dir DIR              where data folders, peers files and logs go (default:
#                          a new temporary folder, removed on exit unless --keep)
#   --keep                 keep the temporary folder on exit
#   --base-port P          port of node 0; node i listens on P+i (default 17400)
#   --seed S               seed of the random graph
#   --hide K               node K listens on its port + 1000 while its peers dial its
#                          port: room for a proxy or fault injector in front of it
#
# Environment: ECP_NODE_BIN (the binary; default target/release/ecp-node, built
# if missing), ECP_MESH_SECRET (a shared secret: every node requires it and
# signs with it; default none, the mesh is on loopback), RUST_LOG.
#
# Prints one line per node (index, URL, neighbours, log), then "mesh: ready".
# Also writes DIR/urls.txt (one URL per line) and DIR/graph.txt (one edge "i j"
# per line) for scripts.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }
die() { echo "local-mesh: $*" >&2; exit 2; }

n=""; shape="ring"; mode="both"; interval=""; trust="1.0"; dir=""; keep=0
base_port=17400; seed="${RANDOM}${RANDOM}"; hide=-1
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage 0 ;;
        --mode) mode="${2:?}"; shift ;;
        --interval) interval="${2:?}"; shift ;;
        --trust) trust="${2:?}"; shift ;;
        --dir) dir="${2:?}"; shift ;;
        --keep) keep=1 ;;
        --base-port) base_port="${2:?}"; shift ;;
        --seed) seed="${2:?}"; shift ;;
        --hide) hide="${2:?}"; shift ;;
        ring|random) shape="$1" ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) [ -z "$n" ] || die "unexpected argument $1 (see --help)"; n="$1" ;;
    esac
    shift
done
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || usage
case "$mode" in both|push|pull) ;; *) die "--mode is both, push or pull" ;; esac
[[ "$seed" =~ ^[0-9]+$ ]] || die "--seed is a number"
if [ "$shape" = random ] && { [ "$n" -lt 4 ] || [ $((n % 2)) -ne 0 ]; }; then
    die "a 3-regular graph needs an even N of at least 4 (got $n); use ring"
fi
[ -n "$interval" ] || { [ "$mode" = pull ] && interval="1s" || interval="5s"; }
[ "$mode" = push ] && pull_interval="1h" || pull_interval="$interval"
[ "$mode" = pull ] && push=false || push=true

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${ECP_NODE_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/ecp-node}"
if [ ! -x "$bin" ]; then
    [ -z "${ECP_NODE_BIN:-}" ] || die "ECP_NODE_BIN=$bin is not an executable"
    echo "local-mesh: building $bin (cargo build --release -p ecp-node)" >&2
    (cd "$root" && cargo build --release --locked -p ecp-node) >&2
fi
"$bin" serve --help 2>/dev/null | grep -q -- '--peers' \
    || die "$bin has no 'serve --peers': build an ecp-node with federation"

if [ -z "$dir" ]; then
    dir="$(mktemp -d "${TMPDIR:-/tmp}/ecp-mesh.XXXXXX")"
    [ "$keep" = 1 ] || cleanup_dir="$dir"
fi
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

# ---- the graph: one edge "i j" (i < j) per line
graph() {
    if [ "$shape" = ring ]; then
        for ((i = 0; i < n; i++)); do
            j=$(((i + 1) % n))
            if [ "$i" -ne "$j" ]; then echo "$((i < j ? i : j)) $((i < j ? j : i))"; fi
        done | sort -u -n -k1,1 -k2,2
        return
    fi
    # Configuration model: 3 stubs per node, shuffled and paired; a draw with a
    # loop, a double edge or two components is thrown away and drawn again.
    awk -v n="$n" -v seed="$seed" 'BEGIN {
        srand(seed)
        for (attempt = 1; attempt <= 10000; attempt++) {
            m = 0
            for (v = 0; v < n; v++) for (k = 0; k < 3; k++) stub[m++] = v
            for (i = m - 1; i > 0; i--) { j = int(rand() * (i + 1)); t = stub[i]; stub[i] = stub[j]; stub[j] = t }
            delete adj; ok = 1
            for (i = 0; i < m; i += 2) {
                a = stub[i]; b = stub[i + 1]
                if (a == b || ((a, b) in adj)) { ok = 0; break }
                adj[a, b] = 1; adj[b, a] = 1
            }
            if (!ok) continue
            delete seen; seen[0] = 1; queue[0] = 0; head = 0; tail = 1
            while (head < tail) { v = queue[head++]; for (w = 0; w < n; w++) if (((v, w) in adj) && !(w in seen)) { seen[w] = 1; queue[tail++] = w } }
            if (tail < n) continue
            for (a = 0; a < n; a++) for (b = a + 1; b < n; b++) if ((a, b) in adj) print a, b
            exit 0
        }
        print "no connected 3-regular graph found" > "/dev/stderr"; exit 1
    }'
}
graph > "$dir/graph.txt"

# Longest shortest path, by breadth-first search from every node.
diameter=$(awk -v n="$n" '{ adj[$1, $2] = 1; adj[$2, $1] = 1 } END {
    d = 0
    for (s = 0; s < n; s++) {
        delete dist; dist[s] = 0; queue[0] = s; head = 0; tail = 1
        while (head < tail) { v = queue[head++]; for (w = 0; w < n; w++) if (((v, w) in adj) && !(w in dist)) { dist[w] = dist[v] + 1; if (dist[w] > d) d = dist[w]; queue[tail++] = w } }
    }
    print d
}' "$dir/graph.txt")

neighbours() { awk -v v="$1" '$1 == v { print $2 } $2 == v { print $1 }' "$dir/graph.txt" | sort -n | tr '\n' ' '; }
port_of() { echo $((base_port + $1)); }
listen_port_of() { if [ "$1" -eq "$hide" ]; then echo $((base_port + $1 + 1000)); else port_of "$1"; fi; }

: > "$dir/urls.txt"
for ((i = 0; i < n; i++)); do
    mkdir -p "$dir/node-$i"
    echo "http://127.0.0.1:$(port_of "$i")" >> "$dir/urls.txt"
    {
        echo "# node $i of a $n-node $shape mesh, written by deploy/local-mesh.sh"
        echo "[federation]"
        echo "interval = \"$pull_interval\""
        echo
        echo "[discovery]"
        echo "enabled = false"
        for j in $(neighbours "$i"); do
            echo
            echo "[[peer]]"
            echo "url = \"http://127.0.0.1:$(port_of "$j")\""
            echo "trust = $trust"
            echo "pull = true"
            echo "push = $push"
            [ -z "${ECP_MESH_SECRET:-}" ] || echo "secret_env = \"ECP_MESH_SECRET\""
        done
    } > "$dir/node-$i/peers.toml"
done

# ---- start, and stop everything on Ctrl-C, TERM or any exit
pids=()
# shellcheck disable=SC2329 # called by the traps below
stop() {
    trap - INT TERM EXIT
    if [ ${#pids[@]} -gt 0 ]; then
        kill -TERM "${pids[@]}" 2>/dev/null || true
        for _ in $(seq 50); do
            alive=0
            for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
            [ "$alive" = 1 ] || break
            sleep 0.1
        done
        kill -KILL "${pids[@]}" 2>/dev/null || true
        wait 2>/dev/null || true
    fi
    if [ -n "${cleanup_dir:-}" ]; then rm -rf "$cleanup_dir"; fi
    echo "mesh: stopped" >&2
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap stop EXIT

export ECP_MESH_SECRET="${ECP_MESH_SECRET:-}"
for ((i = 0; i < n; i++)); do
    ECP_SECRET="$ECP_MESH_SECRET" "$bin" serve \
        --listen "127.0.0.1:$(listen_port_of "$i")" --data "$dir/node-$i" \
        --peers "$dir/node-$i/peers.toml" --no-mdns \
        > "$dir/node-$i/serve.log" 2>&1 &
    pids+=("$!")
done

# Ready when every node answers /readyz (bash's /dev/tcp: no curl needed).
healthy() {
    local port="$1" answer
    { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || return 1
    printf 'GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    answer="$(head -c 200 <&3 2>/dev/null || true)"
    exec 3>&-
    [[ "$answer" == "HTTP/1."?" 200"* ]]
}
for ((i = 0; i < n; i++)); do
    for attempt in $(seq 100); do
        healthy "$(listen_port_of "$i")" && break
        kill -0 "${pids[$i]}" 2>/dev/null || die "node $i exited at start; see $dir/node-$i/serve.log"
        [ "$attempt" -lt 100 ] || die "node $i is not healthy after 10 s; see $dir/node-$i/serve.log"
        sleep 0.1
    done
done

echo "mesh: $n nodes, $shape$([ "$shape" = random ] && echo " 3-regular (seed $seed)"), diameter $diameter;" \
    "mode $mode, pull every $pull_interval, trust $trust$([ -n "$ECP_MESH_SECRET" ] && echo ", signed")"
echo "mesh: data, peers files and logs in $dir$([ -n "${cleanup_dir:-}" ] && echo " (removed on exit)")"
for ((i = 0; i < n; i++)); do
    note=""
    [ "$i" -ne "$hide" ] || note="  (listens on $(listen_port_of "$i"))"
    printf 'node %-3s http://127.0.0.1:%s  peers: %s%s\n' "$i" "$(port_of "$i")" "$(neighbours "$i")" "$note"
done
echo "mesh: ready; add a skill with: $bin skill add PATH --data $dir/node-0 (Ctrl-C stops every node)"

# Run until Ctrl-C; if a node dies, say which and stop the rest.
set +e
wait -n "${pids[@]}"
for ((i = 0; i < n; i++)); do
    if ! kill -0 "${pids[$i]}" 2>/dev/null; then
        echo "local-mesh: node $i exited; see $dir/node-$i/serve.log" >&2
        cleanup_dir=""
    fi
done
exit 1
