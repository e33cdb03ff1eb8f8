#!/usr/bin/env bash
# Runs ecp-conformance (profile ecp-1.2) against two hub replicas
# (`ecp-node serve --store postgres://…`) on one fresh PostgreSQL database,
# behind a proxy that sends each request to the other replica in turn
# (.ci/alternate.py): open, then with a secret and signed requests. Every
# MUST must pass. Without PostgreSQL it says so and exits 0 only when
# ECP_HUB_OPTIONAL=1 (CI installs PostgreSQL, so there it is required).
# Usage: .ci/hub-conformance.sh BIN_DIR   (the folder holding ecp-node and ecp-conformance)
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
pids=()
pg_pid=""
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ -n "$pg_pid" ]; then kill -INT "$pg_pid" 2>/dev/null || true; wait "$pg_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_bin="${ECP_PG_BIN:-$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -n 1)}"
if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ]; then
    echo "SKIPPED hub conformance: PostgreSQL is not installed (apt-get install postgresql)" >&2
    [ "${ECP_HUB_OPTIONAL:-0}" = 1 ] && exit 0
    exit 1
fi
# initdb refuses root: the server runs as postgres (or nobody) then.
as_user=()
if [ "$(id -u)" = 0 ]; then
    user=postgres; id -u "$user" >/dev/null 2>&1 || user=nobody
    as_user=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --clear-groups)
    chown "$user" "$work"
fi
pg_port="$(free_port)"
"${as_user[@]}" "$pg_bin/initdb" -D "$work/pg" -U ecp --auth=trust -E UTF8 --no-locale >/dev/null
"${as_user[@]}" "$pg_bin/postgres" -D "$work/pg" -p "$pg_port" -h 127.0.0.1 -k "$work" -c fsync=off \
    2>"$work/pg.log" &
pg_pid=$!
for _ in $(seq 1 100); do
    "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$pg_port" && break
    sleep 0.1
done

run_against_two_replicas() {
    # label, then node arguments, then `--`, then suite arguments.
    local label="$1"; shift
    local node_extra=() suite_extra=()
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do node_extra+=("$1"); shift; done
    [ "$#" -gt 0 ] && shift
    suite_extra=("$@")
    "$pg_bin/psql" -q -h 127.0.0.1 -p "$pg_port" -U ecp -d postgres -c "CREATE DATABASE $label" >/dev/null
    local store="postgres://ecp@127.0.0.1:$pg_port/$label"
    local proxy ports=()
    proxy="$(free_port)"
    for replica in a b; do
        local port; port="$(free_port)"
        ports+=("$port")
        RUST_LOG=warn "$bin/ecp-node" serve --store "$store" --listen "127.0.0.1:$port" \
            --data "$work/$label-$replica" --no-mdns --name "127.0.0.1:$proxy" "${node_extra[@]}" \
            2>"$work/$label-$replica.log" &
        pids+=($!)
    done
    python3 "$here/alternate.py" "$proxy" "${ports[@]}" &
    pids+=($!)
    for port in "${ports[@]}" "$proxy"; do
        for _ in $(seq 1 100); do
            curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
            sleep 0.1
        done
    done
    echo "-- ecp-conformance --profile ecp-1.2 (hub, $label: two replicas alternating)"
    if ! "$bin/ecp-conformance" --target "http://127.0.0.1:$proxy" --profile ecp-1.2 "${suite_extra[@]}"; then
        echo "hub conformance failed ($label); replica logs:" >&2
        cat "$work/$label-a.log" "$work/$label-b.log" >&2
        exit 1
    fi
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    pids=()
}

secret="ci-secret-$RANDOM$RANDOM"
run_against_two_replicas open --
ECP_CONFORMANCE_KEY_SECRET="$secret" \
    run_against_two_replicas signed --secret "$secret" -- --secret "$secret" --key-id default
