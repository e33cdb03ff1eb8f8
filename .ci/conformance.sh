#!/usr/bin/env bash
# Runs ecp-conformance (profile ecp-1.2) against a freshly started ecp-node,
# once without and once with a secret. Every MUST must pass.
# Usage: .ci/conformance.sh BIN_DIR   (the folder holding ecp-node and ecp-conformance)
set -euo pipefail
bin="$1"
work="$(mktemp -d)"
node_pid=""
cleanup() {
    [ -n "$node_pid" ] && kill "$node_pid" 2>/dev/null && wait "$node_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

run_against_fresh_node() {
    local label="$1" secret="$2"
    local port data
    port="$(free_port)"
    data="$work/$label"
    local args=(serve --listen "127.0.0.1:$port" --data "$data" --no-mdns)
    [ -n "$secret" ] && args+=(--secret "$secret")
    RUST_LOG=warn "$bin/ecp-node" "${args[@]}" 2>"$work/$label.log" &
    node_pid=$!
    for _ in $(seq 1 100); do
        curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
        sleep 0.1
    done
    echo "-- ecp-conformance --profile ecp-1.2 ($label)"
    local suite=(--target "http://127.0.0.1:$port" --profile ecp-1.2)
    [ -n "$secret" ] && suite+=(--secret "$secret")
    if ! "$bin/ecp-conformance" "${suite[@]}"; then
        echo "conformance failed ($label); node log:" >&2
        cat "$work/$label.log" >&2
        exit 1
    fi
    kill "$node_pid"
    wait "$node_pid" 2>/dev/null || true
    node_pid=""
}

run_against_fresh_node open ""
run_against_fresh_node secret "ci-secret-$RANDOM$RANDOM"
