#!/usr/bin/env bash
# Runs ecp-conformance (profile ecp-1.2) against a freshly started ecp-node:
# open; with a secret (legacy X-ECP-HMAC); with a secret and its ECP/1.2 key
# `default` plus a second [[key]] (signed requests, rotation); and with the
# legacy header refused. Every MUST must pass.
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
    # label, then node arguments, then `--`, then suite arguments.
    local label="$1"; shift
    local node_extra=() suite_extra=()
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do node_extra+=("$1"); shift; done
    [ "$#" -gt 0 ] && shift
    suite_extra=("$@")
    local port data
    port="$(free_port)"
    data="$work/$label"
    local args=(serve --listen "127.0.0.1:$port" --data "$data" --no-mdns "${node_extra[@]}")
    RUST_LOG=warn "$bin/ecp-node" "${args[@]}" 2>"$work/$label.log" &
    node_pid=$!
    for _ in $(seq 1 100); do
        curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
        sleep 0.1
    done
    echo "-- ecp-conformance --profile ecp-1.2 ($label)"
    if ! "$bin/ecp-conformance" --target "http://127.0.0.1:$port" --profile ecp-1.2 "${suite_extra[@]}"; then
        echo "conformance failed ($label); node log:" >&2
        cat "$work/$label.log" >&2
        exit 1
    fi
    kill "$node_pid"
    wait "$node_pid" 2>/dev/null || true
    node_pid=""
}

secret="ci-secret-$RANDOM$RANDOM"
second="ci-second-$RANDOM$RANDOM"
printf '[[key]]\nid = "ci-second"\nsecret = "%s"\n' "$second" >"$work/node.toml"

run_against_fresh_node open --
run_against_fresh_node secret --secret "$secret" -- --secret "$secret"
ECP_CONFORMANCE_KEY_SECRET="$secret" ECP_CONFORMANCE_SECOND_KEY_SECRET="$second" \
    run_against_fresh_node signed --secret "$secret" --config "$work/node.toml" -- \
    --secret "$secret" --key-id default --second-key-id ci-second
ECP_CONFORMANCE_KEY_SECRET="$secret" \
    run_against_fresh_node no-legacy --secret "$secret" --accept-legacy false -- \
    --key-id default --no-legacy
